//! # bloomforge-retrieval
//!
//! Bloomier, xor and binary fuse filters, compact approximators and invertible Bloom lookup
//! tables.
//!
//! Guide: [filters that store values][guide-retrieval].
//!
//! [guide-retrieval]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/retrieval.md
//!
//! The static filters ([`BinaryFuseFilter`], [`XorFilter`], [`BloomierFilter`]) are built
//! once from their whole key set, so instead of `new(expected_items, false_pos)` they take
//! the keys: a one-line `build`, or the builder (`.seed(s)` or `.hasher(h)`, `.threads(t)`,
//! then `.build(&keys)`), or `collect()` (see `docs/conventions.md`, "Static filters").
//! The two ways build the same filter:
//!
//! ```
//! use bloomforge_retrieval::{BinaryFuseFilter, BloomierFilter, CountMin, Iblt};
//! let pairs: Vec<(String, u32)> = (0..1000u32).map(|i| (format!("key{i}"), i * 7)).collect();
//! let keys: Vec<&String> = pairs.iter().map(|(k, _)| k).collect();
//!
//! // A static function, one line and by the builder:
//! let map = BloomierFilter::build(&pairs, 16, 16)?;
//! let built = BloomierFilter::builder().value_bits(16).fingerprint_bits(16).build(&pairs)?;
//! assert_eq!(map.get("key42"), Some(42 * 7));
//! assert_eq!(built.get("key42"), map.get("key42"));
//! assert_eq!(built.to_bytes(), map.to_bytes());
//!
//! // A static set, one line and by the builder (here with an explicit thread count):
//! let set = BinaryFuseFilter::<u8>::build(&keys, 0)?;
//! let same = BinaryFuseFilter::<u8>::builder().seed(0).threads(2).build(&keys)?;
//! assert!(set.contains("key42") && same.contains("key42"));
//! assert_eq!(set.to_bytes(), same.to_bytes());
//! let back = BinaryFuseFilter::<u8>::from_bytes(&set.to_bytes())?;
//! assert!(back.contains("key999"));
//!
//! // The dynamic structures take `new` as every other crate's filters do:
//! let mut a = CountMin::<u32>::new(1000, 0.01)?;
//! let mut b = CountMin::<u32>::builder().expected_items(1000).false_pos(0.01).build()?;
//! a.insert("x", 3);
//! b.insert("x", 3);
//! assert_eq!(a.get("x"), b.get("x"));
//! assert_eq!(Iblt::new(100)?, Iblt::builder().expected_diff(100).build()?);
//! # Ok::<(), bloomforge_retrieval::RetrievalError>(())
//! ```
//!
//! Every structure is generic over its hasher `S: BuildHasher` (core's
//! [`DefaultHasher`](bloomforge_core::DefaultHasher) by default); for keys chosen by
//! untrusted parties pass a [`KeyedHasher`](bloomforge_core::KeyedHasher) with
//! `.hasher(h)`, and read the bytes back with `from_bytes_with_hasher`: the key is never
//! stored, and a reader with another key (or seed) is refused with
//! [`HasherMismatch`](bloomforge_core::Error::HasherMismatch).
//!
//! ```
//! use bloomforge_core::KeyedHasher;
//! use bloomforge_retrieval::XorFilter;
//! let key = KeyedHasher::with_key([7, 7, 7, 7]);
//! let keys: Vec<u64> = (0..500).collect();
//! let f = XorFilter::<u16>::builder().hasher(key.clone()).build(&keys)?;
//! let bytes = f.to_bytes();
//! assert!(XorFilter::<u16>::from_bytes(&bytes).is_err());
//! let back = XorFilter::<u16, KeyedHasher>::from_bytes_with_hasher(&bytes, key)?;
//! assert!(keys.iter().all(|k| back.contains(k)));
//! # Ok::<(), bloomforge_retrieval::RetrievalError>(())
//! ```

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod approx;
mod bloomier;
mod error;
mod fuse;
mod iblt;
mod line;
mod peel;

pub use approx::{
    CellLayout, CompactApproximator, CompactApproximatorBuilder, CountMin, Counter, Lattice,
    MaxLattice, MinLattice, PersistentLattice, SumLattice,
};
pub use bloomier::{BloomierFilter, BloomierFilterBuilder, BloomierFilterView};
pub use error::RetrievalError;
pub use fuse::{
    BinaryFuseFilter, BinaryFuseFilterBuilder, BinaryFuseFilterView, Fingerprint, XorFilter,
    XorFilterBuilder, XorFilterView,
};
pub use iblt::{Iblt, IbltBuilder, DEFAULT_EXPECTED_DIFF};

/// This crate's `README.md`, whose example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
