//! # bloomforge-core
//!
//! Bloom filters built for throughput: cache-line-blocked bit arrays probed with SIMD
//! (AVX2 / AVX-512 chosen at run time, a scalar oracle always compiled), lock-free
//! concurrent inserts, pipelined batch operations and parallel bulk loading.
//!
//! Guide: [Bloom filters][guide-bloom] (choosing a layout, sizing, hashing) and
//! [concurrency][guide-concurrency] (atomic filters, batches, bulk loading).
//!
//! [guide-bloom]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/bloom.md
//! [guide-concurrency]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/concurrency.md
//!
//! ```
//! use bloomforge_core::{BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter};
//!
//! // The two entry points every filter of the workspace offers:
//! let mut f = BlockedBloomFilter::new(1_000_000, 0.01)?;
//! let g = BlockedBloomFilter::builder().expected_items(1_000_000).false_pos(0.01).build()?;
//! assert_eq!(f, g); // the same filter
//! f.insert(&"key");
//! assert!(f.contains(&"key"));
//!
//! // Explicit size and probes, a seeded hasher:
//! let mut g = BlockedBloomFilter::with_num_bits(1 << 24).seed(7).hashes(7)?;
//! let keys: Vec<u64> = (0..1000).collect();
//! g.insert_batch(&keys);
//! let mut out = vec![false; keys.len()];
//! g.contains_batch(&keys, &mut out)?;
//! assert!(out.iter().all(|&b| b));
//! # Ok::<(), bloomforge_core::Error>(())
//! ```
//!
//! | type | layout | use it for |
//! |---|---|---|
//! | [`BlockedBloomFilter`] | 512-bit block per key, `k` probes in it | speed at ~10 % more bits |
//! | [`SplitBlockBloomFilter`] | Parquet SBBF, 8 × 32-bit words | Parquet interop, fastest probes |
//! | [`StandardBloomFilter`] | `k` probes anywhere | fewest bits, textbook FP |
//! | `Atomic*` | same bits in `AtomicU64` | concurrent inserts through `&self` |
//!
//! Hashing: any `S: BuildHasher`; the default [`DefaultHasher`] is foldhash (fast, seeded,
//! not collision-resistant); [`KeyedHasher`] is HighwayHash with a secret key for
//! adversarial input; [`parquet_hash`] for Parquet. Sizing and false-positive theory live
//! in [`math`].

#![warn(missing_docs)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

pub mod arch;
mod atomic_word;
pub mod batch;
pub mod block;
pub mod builder;
mod count;
mod error;
mod filters;
pub mod format;
pub mod hash;
mod layout;
pub mod math;
pub mod memory;
pub mod parallel;
pub mod ranges;
mod raw;
#[cfg(feature = "serde")]
pub mod serde_support;
mod standard;

pub mod view;

pub use arch::Backend;
pub use block::{Block256, Block512};
pub use builder::{BuildFilter, Builder, FalsePosBuilder, NumBitsBuilder};
pub use count::{Count, RemoveOutcome};
pub use error::{Error, FilterShape, IoError, Result, SourceError};
pub use filters::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, BlockedBloomFilter,
    SplitBlockBloomFilter,
};
pub use hash::{parquet_hash, DefaultHasher, KeyedHasher, ParquetHasher};
pub use ranges::{RangeSplit, RangeSplitter};
pub use standard::{AtomicStandardBloomFilter, Probes, StandardBloomFilter, STANDARD_MAX_HASHES};
pub use view::{BlockedBloomFilterView, SplitBlockBloomFilterView};

/// This crate's `README.md`, whose example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// What every filter of the workspace offers: membership queries and (where the filter
/// allows) insertion. Shared by `bloomforge-counting` and `bloomforge-dleft`.
///
/// With this trait in scope, `x.insert(&k)` on a `&mut` atomic filter resolves to this
/// trait's `insert` (it takes `&mut self`, returning a `Result`) rather than the inherent
/// `&self` one; call `AtomicBlockedBloomFilter::insert(&x, &k)` or go through a shared
/// reference for the inherent method.
pub trait Filter<T: ?Sized> {
    /// Why an insert can fail (`Infallible` for plain Bloom filters; a full bucket for
    /// d-left filters).
    type InsertError;

    /// Inserts `key`; `Ok(true)` if it may already have been present.
    ///
    /// # Errors
    /// Filter-specific (see `InsertError`); on error the filter is unchanged.
    fn insert(&mut self, key: &T) -> core::result::Result<bool, Self::InsertError>;

    /// Whether `key` may be in the filter (`false`: certainly not).
    fn contains(&self, key: &T) -> bool;

    /// Bits of memory the filter's table occupies.
    fn memory_bits(&self) -> u64;

    /// The false-positive rate for the current contents.
    fn expected_false_pos(&self) -> f64;
}
