//! # bloomforge-counting
//!
//! A counting Bloom filter: 4-bit saturating counters packed sixteen to a `u64`, so keys can
//! be removed as well as inserted. By default a key's counters all live in one 64-byte
//! line of 128 counters (one cache miss per operation); a standard layout (counters
//! anywhere) is available for the textbook case and for comparison.
//!
//! Guide: [counting and d-left filters][guide-counting].
//!
//! [guide-counting]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/counting.md
//!
//! ```
//! use bloomforge_counting::{AtomicCountingBloomFilter, CountingBloomFilter, CountingError};
//!
//! let mut f = CountingBloomFilter::new(100_000, 0.01)?;
//! // The same filter from the builder every filter of the workspace offers:
//! let g = CountingBloomFilter::builder().expected_items(100_000).false_pos(0.01).build()?;
//! assert_eq!(f.to_bytes(), g.to_bytes());
//! f.insert(&"apple");
//! f.insert(&"apple");
//! f.insert(&"pear");
//! assert!(f.contains(&"apple"));
//! assert_eq!(f.count(&"apple"), bloomforge_core::Count::Exact(2));
//! f.remove(&"pear")?;
//! assert!(!f.contains(&"pear"));
//! assert_eq!(f.remove(&"plum"), Err(CountingError::NotPresent)); // unchanged
//! assert_eq!(f.saturated_counters(), 0);
//!
//! // Ship a read-only plain filter that answers exactly like the counting one:
//! let plain = f.to_blocked_bloom()?;
//! assert!(plain.contains(&"apple") && !plain.contains(&"pear"));
//!
//! // The standard layout, and its compact export (1 bit per counter):
//! let mut g = CountingBloomFilter::standard_with_false_pos(0.01).expected_items(1000)?;
//! g.insert(&42u64);
//! assert!(g.to_standard_bloom()?.contains(&42u64));
//!
//! // Concurrent inserts and removes through `&self`:
//! let a = AtomicCountingBloomFilter::with_false_pos(0.01).expected_items(1000)?;
//! std::thread::scope(|s| {
//!     s.spawn(|| a.insert(&1u64));
//!     s.spawn(|| a.insert(&2u64));
//! });
//! a.remove(&1u64)?;
//! assert!(a.contains(&2u64));
//! # Ok::<(), CountingError>(())
//! ```
//!
//! | type | what it is |
//! |---|---|
//! | [`CountingBloomFilter`] | `&mut self` insert / remove, counts, statistics, union, exports |
//! | [`AtomicCountingBloomFilter`] | `&self` insert / remove / query from any thread (CAS per word) |
//! | [`CounterLayout`] | `Blocked` (default, one cache line per key) or `Standard` |
//!
//! Sizing from `(n, p)` uses each layout's own false-positive formula ([`math`]): a
//! counting filter's FP is the plain filter's with one bit per counter, so the blocked
//! layout is sized with the exact blocked theory for 128-counter blocks (10.85 counters,
//! 5.4 bytes, per key at 1 %, `k = 6`). Memory is exactly 4 bits per counter, rounded up
//! to whole 64-byte lines, plus a constant header.
//!
//! The blocked layout's operations run an AVX-512BW kernel where the CPU has one (the 128
//! counters of a line are the 64 byte lanes of one register; a key's update is two masked
//! byte adds), else an AVX2 kernel (the same byte-lane arithmetic on two 256-bit halves),
//! chosen at run time once per process, with a portable kernel (the test oracle)
//! everywhere else; batch calls hash and prefetch `PREFETCH_AHEAD` (128) keys ahead.

#![warn(missing_docs)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod atomic;
mod error;
mod kernels;
mod layout;
pub mod math;
mod nibble;
mod persist;
mod plain;

pub use atomic::AtomicCountingBloomFilter;
pub use error::{CountingError, CountingShape};
pub use layout::{CounterLayout, CounterLine, LINE_COUNTERS, MAX_HASHES};
pub use nibble::COUNTER_MAX;
pub use plain::{CountingBloomFilter, StandardCounting};

/// This crate's `README.md`, whose example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
