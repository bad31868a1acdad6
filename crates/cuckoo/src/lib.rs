//! # bloomforge-cuckoo
//!
//! A cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher, CoNEXT 2014): approximate
//! membership with deletion at `f / α` bits per key (12-bit fingerprints at 94 % load:
//! 12.8 bits/key for 0.18 % false positives), where a 4-bit counting Bloom filter pays
//! four times a plain one. Partial-key cuckoo hashing, 2/4/8-slot buckets, 8/12/16-bit
//! fingerprints (12 packed), bounded kicks with a victim stash (a failed insert never loses
//! a key and changes nothing), both buckets matched with one AVX2 compare (a scalar oracle
//! always compiled), prefetching batch loops, the project's file format with a zero-copy
//! view, and a shared form for `&self` inserts from many threads.
//!
//! Guide: [cuckoo filters][guide-cuckoo].
//!
//! [guide-cuckoo]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/cuckoo.md
//!
//! ```
//! use bloomforge_cuckoo::{CuckooError, CuckooFilter};
//!
//! let mut f = CuckooFilter::new(100_000, 0.01)?;
//! let mut g = CuckooFilter::builder()
//!     .expected_items(100_000)
//!     .false_pos(0.01)
//!     .bucket_size(4)
//!     .max_kicks(500)
//!     .seed(0)
//!     .build()?;
//! for k in 0..1000u64 {
//!     f.insert(&k)?;
//!     g.insert(&k)?;
//! }
//! assert!((0..2000u64).all(|k| f.contains(&k) == g.contains(&k)));
//! f.remove(&7u64)?;
//! assert_eq!(f.len(), 999);
//! assert_eq!(f.remove(&"never inserted"), Err(CuckooError::NotPresent));
//! let mut out = vec![false; 1000];
//! let keys: Vec<u64> = (0..1000).collect();
//! g.contains_batch(&keys, &mut out)?;
//! assert!(out.iter().all(|&b| b));
//! println!("load {:.2}, {:.1} bits/key", g.load_factor(), g.memory_bits() as f64 / 1000.0);
//! # Ok::<(), CuckooError>(())
//! ```
//!
//! ## Choosing the fingerprint and bucket size
//!
//! The type parameter `F` fixes the fingerprint size; `CuckooFilter::new` uses [`Fp12`]
//! and picks 4-slot buckets where they reach the target (`fp_exact(4, 12, 0.94)` = 0.18 %),
//! else 2-slot buckets (0.078 % at load 0.80); below that it returns
//! [`CuckooError::FingerprintTooShort`] naming [`Fp16`]. The theory is in [`math`].
//!
//! | F | b | FP at the target load | bits/key |
//! |---|---|---|---|
//! | 8 | 4 | 2.9 % | 8.5 |
//! | 12 | 4 | 0.18 % | 12.8 |
//! | 12 | 2 | 0.078 % | 15.0 |
//! | 16 | 4 | 0.011 % | 17.0 |
//!
//! Semi-sorted buckets (the paper's one bit per key saved at b = 4) are not implemented.
//! Measured by `examples/semisort.rs` (the same fingerprints at 12 bits, 4 slots, load
//! 0.94, the same queries), the 4-bit-prefix encoding saves 8.4 % (11.70 vs 12.77
//! bits/key) but its decode (a dependent load from a 3876-entry table, then spreading the
//! prefixes and low bytes into 16-bit lanes) makes a single query 2.3-2.4x slower in cache
//! (10K-100K keys: 6.6-7.3 vs 2.9-3.1 ns) and 2.1-2.4x at 1M keys on a loaded machine.
//! They would pay only if queries kept their speed, and they do not.

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod concurrent;
mod error;
mod filter;
pub mod math;
mod persist;
mod table;

pub use concurrent::{ConcurrentCuckooBuilder, ConcurrentCuckooFilter};
pub use error::{CuckooError, Result};
pub use filter::{CuckooBuilder, CuckooFilter, DEFAULT_MAX_KICKS};
pub use persist::CuckooFilterView;
pub use table::{Fingerprint, Fp12, Fp16, Fp8};

/// This crate's `README.md`, whose example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// A cuckoo example like that of `docs/guide/cuckoo.md`, run as a doctest of this crate.
///
/// ```
/// use bloomforge_cuckoo::{CuckooFilter, Fp16};
/// let mut f = CuckooFilter::new(1_000_000, 0.01)?; // 12-bit fingerprints, 4 slots
/// f.insert(&"key")?;
/// assert!(f.contains(&"key"));
/// f.remove(&"key")?;
/// let g = CuckooFilter::builder().expected_items(1000).false_pos(0.0002)
///     .bucket_size(4).max_kicks(500).seed(7).fingerprint::<Fp16>().build()?;
/// assert_eq!(g.fingerprint_bits(), 16);
/// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
/// ```
#[cfg(doctest)]
pub struct ReadmeExample;

#[cfg(test)]
mod tests;
