//! # bloomforge-dleft
//!
//! A d-left counting Bloom filter (Bonomi, Mitzenmacher, Panigrahy, Singh, Varghese,
//! ESA 2006) with permutation-based fingerprints: a counting filter (insert, remove,
//! count) in about half the space of a counting Bloom filter, with SIMD bucket matching.
//!
//! Guide: [counting and d-left filters][guide-counting].
//!
//! [guide-counting]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/counting.md
//!
//! ```
//! use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};
//!
//! let mut f = DLeftCountingBloomFilter::new(100_000, 0.001)?;
//! // The same filter from the builder every filter of the workspace offers:
//! let same = DLeftCountingBloomFilter::builder().expected_items(100_000).false_pos(0.001).build()?;
//! assert_eq!(f.to_bytes(), same.to_bytes());
//! f.insert(&"apple")?;
//! f.insert(&"apple")?;
//! f.insert(&"pear")?;
//! assert!(f.contains(&"apple") && f.contains(&"pear"));
//! assert_eq!(f.count(&"apple"), bloomforge_core::Count::Exact(2));
//! f.remove(&"pear")?;
//! assert_eq!(f.remove(&"plum"), Err(DLeftError::NotPresent)); // unchanged
//! assert_eq!(f.len(), 2);
//! println!("{:.1} bits/key at 100k keys", f.memory_bits() as f64 / 1e5);
//!
//! // Explicit parameters:
//! let g = DLeftCountingBloomFilter::builder()
//!     .subtables(4)
//!     .buckets_per_subtable(1 << 14)
//!     .cells_per_bucket(8)
//!     .remainder_bits(12)
//!     .counter_bits(2)
//!     .seed(7)
//!     .build()?;
//! assert!(g.uses_power_of_two_permutations());
//! assert_eq!(g.load_histogram()[0], 4 << 14); // every bucket empty
//! # Ok::<(), DLeftError>(())
//! ```
//!
//! ## The construction
//!
//! `d` subtables (default 4) of `B` buckets; a bucket has `w` cells (default 8); a cell
//! holds an `r`-bit remainder and a `c`-bit counter (default 4, [`DEFAULT_COUNTER_BITS`]).
//! One 64-bit hash gives
//! the key's true fingerprint `f` in `[B 2^r]`; subtable `i` maps it through a fixed
//! random permutation `P_i` to a (bucket, remainder) pair (for `B = 2^q`,
//! `P_i(f) = a_i f mod 2^(q+r)` with `a_i` odd; see [`layout`] for any `B`).
//!
//! - insert: if one of the `d` candidate buckets holds the remainder, increment that
//!   cell's counter; otherwise store (remainder, 1) in the least-loaded candidate,
//!   leftmost on ties. All `d` full: [`DLeftError::BucketFull`], nothing changes.
//! - remove: decrement, free the cell at 0; absent: [`DLeftError::NotPresent`].
//! - A counter at `2^c - 1` is saturated and sticky (never decremented or freed).
//! - Since each `P_i` is a bijection, a remainder match in subtable `i` means the same
//!   `f`: a fingerprint occupies at most one cell, and deletions never hit another key's
//!   cell. The false-positive rate is exactly (distinct stored fingerprints) / `B 2^r`
//!   ([`DLeftCountingBloomFilter::realized_false_pos`]), in expectation
//!   `1 - (1 - 1/(B 2^r))^n` ([`theory::dlcbf_fp`]).
//!
//! ## Storage and speed
//!
//! Cells are packed: a bucket is `ceil(w (r + c) / 8)` bytes (exactly `r + c` bytes for
//! `w = 8`), so bits per key are `w (r + c) / L` at average load `L`. Sized with the
//! defaults (`d = 4`, `w = 8`, `c = 4`, `L = 6`) for 1 000 000 keys:
//!
//! | target FP | r | bits/key | expected FP | counting Bloom filter (4-bit) at the target | ratio |
//! |---|---|---|---|---|---|
//! | 1 % | 12 | 21.33 | 0.58 % | 38.3 | 0.56 |
//! | 0.1 % | 15 | 25.33 | 0.073 % | 57.5 | 0.44 |
//! | 0.01 % | 18 | 29.33 | 0.0092 % | 76.7 | 0.38 |
//!
//! (`tests/sizing_table.rs` recomputes these figures from the sizing; 2-bit counters,
//! `.counter_bits(2)`, save 2 bits a cell: 18.67, 22.67 and 26.67 bits/key, at the price
//! of keys stuck at `3+` after their removes. `cargo run --release -p bloomforge-dleft
//! --example sizing` prints more.) The number
//! of buckets per subtable is any integer, not only a power of two, so the table is
//! never oversized by up to 2x; see [`layout`] for the bijection used then.
//!
//! A bucket is matched with one AVX2 pass (one `vpshufb` puts each of the eight cells
//! into its own 32-bit lane, then one `vpand` and one `vpcmpeqd` against the query
//! remainder shifted the same way; see [`arch`]); a query ORs the compares of its `d`
//! buckets and branches once, and needs no counter test unless the remainder is 0 (an
//! empty cell is all zero). Inserts and removes scan their four buckets in one pass into
//! packed hit and occupancy masks and update a cell with one add or subtract. The kernel
//! is chosen at run time (scalar fallback, also the test oracle), and the hot paths are
//! specialised for the shape of the table (permutation family, bucket width, `d = 4`),
//! the instance picked once per filter so an operation dispatches with one jump. Batch
//! queries, inserts and removes locate and prefetch buckets a few keys ahead. On AVX-512
//! CPUs (F, VL, DQ, BW, VBMI, BITALG) the commonest tables (general map, `d = 4`, buckets of at
//! most 16 bytes: every sized filter with `r <= 12`, or `r <= 14` with 2-bit counters)
//! locate their four buckets in one 256-bit register and match them in two 512-bit
//! registers (one `vpermb` per two buckets, then masked compares into mask registers), so a
//! single-key operation is short and branch-free enough for several keys' cache misses
//! to overlap.
//!
//! ## Errors and guarantees
//!
//! Every failed operation leaves the filter exactly as it was: an insert that finds all
//! `d` buckets full ([`DLeftError::BucketFull`]), a remove of an absent fingerprint
//! ([`DLeftError::NotPresent`]), and a batch that fails part-way
//! ([`DLeftError::BatchFailed`]: the keys applied before the failure are rolled back).
//!
//! ## Theory
//!
//! [`theory`] has the false-positive formulas, counter saturation, bits per key and the
//! fluid limit of the bucket loads ([`theory::dlcbf_fluid`]), which the sizing uses to
//! pick the default load.

#![warn(missing_docs)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

pub mod arch;
mod builder;
mod error;
mod filter;
pub mod layout;
pub mod theory;

pub use arch::Backend;
pub use builder::{
    DLeftBuilder, DLeftFalsePosBuilder, DLeftSizing, DEFAULT_CELLS_PER_BUCKET,
    DEFAULT_COUNTER_BITS, DEFAULT_SUBTABLES,
};
pub use error::{DLeftError, Result};
pub use filter::DLeftCountingBloomFilter;
pub use layout::{MAX_CELLS_PER_BUCKET, MAX_CELL_BITS, MAX_COUNTER_BITS, MAX_SUBTABLES};

/// This crate's `README.md`, whose example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The kernels' internal answer for a saturated (sticky) counter; the public
/// [`DLeftCountingBloomFilter::count`] turns it into `Count::AtLeast(2^c - 1)`.
pub(crate) const SATURATED: u64 = u64::MAX;
