//! # bloomforge-stream
//!
//! Scalable, stable and attenuated Bloom filters for growing, unbounded and routed sets,
//! built on core's blocked (and standard) filters, hashing and format.
//!
//! Guide: [scalable, stable and attenuated filters][guide-stream].
//!
//! [guide-stream]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/stream.md
//!
//! ```
//! use bloomforge_stream::ScalableBloomFilter;
//!
//! // The two entry points every filter of the workspace offers:
//! let mut f = ScalableBloomFilter::new(1000, 0.01)?;
//! let mut g = ScalableBloomFilter::builder().expected_items(1000).false_pos(0.01).build()?;
//! for i in 0..10_000u64 {
//!     f.insert(&i)?;
//!     g.insert(&i)?;
//! }
//! assert_eq!(f, g); // the same filter
//! assert!(f.contains(&42u64));
//! # Ok::<(), bloomforge_stream::StreamError>(())
//! ```
//!
//! | type | answers | paper |
//! |---|---|---|
//! | [`ScalableBloomFilter`] | membership when the number of keys is unknown (blocked slices for speed, standard ones for the fewest bits: [`SliceLayout`]) | Almeida et al. 2007 |
//! | [`StableBloomFilter`] | "seen recently?" over an unbounded stream, fixed memory | Deng and Rafiei 2006 |
//! | [`AttenuatedBloomFilter`] | which neighbour leads to a key, and in how many hops | Rhea and Kubiatowicz 2002 |

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod attenuated;
mod error;
mod io;
mod scalable;
mod stable;

pub use attenuated::{
    AttenuatedBloomFilter, AttenuatedBloomFilterBuilder, DEFAULT_DEPTH, MAX_DEPTH,
};
pub use error::{Result, StreamError};
pub use scalable::{
    ScalableBloomFilter, ScalableBloomFilterBuilder, SliceFilter, SliceLayout,
    DEFAULT_GROWTH_FACTOR, DEFAULT_INITIAL_CAPACITY, DEFAULT_MAX_SLICES, DEFAULT_TIGHTENING_RATIO,
    MAX_SLICES_LIMIT,
};
pub use stable::{
    decrements_for, hashes_for, stable_false_pos, stable_point, StableBloomFilter,
    StableBloomFilterBuilder, DEFAULT_CELLS, DEFAULT_CELL_BITS, MAX_CELLS,
    MAX_HASHES as STABLE_MAX_HASHES,
};

/// This crate's `README.md`, whose example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
