//! # bloomforge-bitmap
//!
//! Bitmaps and 2-bitmaps over the u32 domain: membership, distinct and exactly-once integer
//! sets.
//!
//! - [`Bitmap`]: one bit per value of a universe `0..n` (`n` up to 2^32; `full_u32()` is
//!   512 MiB): "is this number among the 4 billion?", the bitmap sort, set algebra.
//! - [`TwoBitmap`]: two bits per value (`00` never, `01` once, `10` many): the integers that
//!   occur exactly once ([`TwoBitmap::iter_once`]), 1 GiB for the whole u32 domain.
//! - [`AtomicBitmap`] / [`AtomicTwoBitmap`]: the same with `&self` inserts from many threads.
//!
//! Guide: [bitmaps and 2-bitmaps][guide-bitmaps].
//!
//! [guide-bitmaps]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/bitmaps.md
//!
//! These structures are exact: they are sized by their universe, not by an item count
//! and a false-positive rate, so the constructor is `Bitmap::new(universe)` (see the
//! workspace conventions) and the builder takes `.universe(n)`.
//!
//! ```
//! use bloomforge_bitmap::{Bitmap, Seen, TwoBitmap};
//!
//! let mut a = Bitmap::new(1_000_000)?;
//! let mut b = Bitmap::builder().universe(1_000_000).build()?;
//! for x in [3, 64, 999_999] {
//!     assert!(a.insert(x));
//!     b.insert(x);
//! }
//! assert!(a.contains(64) && !a.contains(65));
//! assert_eq!(a, b);
//! assert_eq!(a.iter().collect::<Vec<_>>(), [3, 64, 999_999]);
//! assert_eq!((a.len(), a.rank(64), a.select(2)), (3, 1, Some(999_999)));
//!
//! // Exactly-once integers.
//! let mut t = TwoBitmap::new(100)?;
//! t.insert_batch(&[5, 7, 5, 9])?;
//! assert_eq!(t.seen(5), Seen::Many);
//! assert_eq!(t.iter_once().collect::<Vec<_>>(), [7, 9]);
//!
//! // The project's format, zero-copy views included.
//! let bytes = a.to_bytes();
//! assert_eq!(Bitmap::from_bytes(&bytes)?, a);
//! assert!(bloomforge_bitmap::BitmapView::from_bytes(&bytes)?.contains(999_999));
//! # Ok::<(), bloomforge_bitmap::BitmapError>(())
//! ```
//!
//! Batches ([`Bitmap::insert_batch`], [`Bitmap::contains_batch`]) prefetch ahead; the
//! parallel loads ([`Bitmap::par_insert_batch`], [`TwoBitmap::par_insert_batch`]) give each
//! rayon thread its own range of words (partitioned by high bits), so they need no atomics.
//! Popcounts and the in-place set algebra run on core's [`Backend`] dispatch.

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod bitmap;
mod bulk;
mod kernels;
mod mem;
mod partition;
mod two;

pub use bitmap::{AtomicBitmap, AtomicIter, Bitmap, BitmapBuilder, BitmapView, Iter};
pub use bloomforge_core::Backend;
pub use partition::RangeBuckets;
pub use two::{AtomicTwoBitmap, IterState, Seen, TwoBitmap, TwoBitmapBuilder, TwoBitmapView};

/// This crate's `README.md`, whose example is compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

use bloomforge_core::format::{self, FilterKind};
use bloomforge_core::DefaultHasher;

/// The largest universe: every `u32`.
pub const MAX_UNIVERSE: u64 = 1 << 32;

/// Everything that can go wrong in `bloomforge-bitmap`. An operation that returns an error
/// leaves the set exactly as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BitmapError {
    /// An error of the core crate (allocation, corrupt bytes, length mismatch, ...).
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
    /// The universe must be `1..=2^32`.
    #[error("universe {0} is not in 1..=4294967296 (2^32); pass the number of values 0..n the set may hold")]
    InvalidUniverse(u64),
    /// A value outside the universe `0..universe`.
    #[error(
        "value {value} is outside the universe 0..{universe}; build the set with a larger universe"
    )]
    OutOfRange {
        /// The value.
        value: u32,
        /// The set's universe.
        universe: u64,
    },
    /// Two sets over different universes cannot be combined.
    #[error(
        "cannot combine: universes differ ({left} vs {right}); build both with the same universe"
    )]
    UniverseMismatch {
        /// Universe of `self`.
        left: u64,
        /// Universe of the other operand.
        right: u64,
    },
    /// [`RangeBuckets`] groups by `1..=16` high bits.
    #[error("{0} bucket bits: RangeBuckets groups values by 1..=16 high bits")]
    InvalidBucketBits(u32),
    /// The backend is not supported by this CPU.
    #[error("backend {0} is not available on this CPU; pick one of Backend::available()")]
    BackendUnavailable(&'static str),
}

/// `?` composes up to core's error: a core error comes back as itself, any other as
/// [`bloomforge_core::Error::Filter`] (downcast it back with `SourceError::downcast_ref`).
impl From<BitmapError> for bloomforge_core::Error {
    fn from(e: BitmapError) -> Self {
        match e {
            BitmapError::Core(c) => c,
            other => bloomforge_core::Error::Filter(bloomforge_core::SourceError::new(other)),
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = BitmapError> = core::result::Result<T, E>;

fn check_universe(universe: u64) -> Result<()> {
    if (1..=MAX_UNIVERSE).contains(&universe) {
        Ok(())
    } else {
        Err(BitmapError::InvalidUniverse(universe))
    }
}

fn corrupt(reason: &'static str) -> BitmapError {
    BitmapError::Core(bloomforge_core::Error::Corrupt { reason })
}

/// Writes `words` in the project's format: `num_bits` is the universe times the bits per
/// value, `items` the number of distinct values.
fn encode_words<W: std::io::Write>(
    writer: W,
    kind: FilterKind,
    num_bits: u64,
    items: u64,
    words: &[u64],
) -> Result<()> {
    format::encode_to(
        writer,
        kind,
        &DefaultHasher::default(),
        0,
        num_bits,
        items,
        words.len() as u64 * 8,
        |sink| bulk::stream_words(words, sink),
    )?;
    Ok(())
}

/// Checks serialized bytes of `kind` with `bits_per_value` and returns (universe, items,
/// payload). The payload is exactly the words of that universe; the caller checks the
/// padding and the items.
fn decode_words(bytes: &[u8], kind: FilterKind, bits_per_value: u64) -> Result<(u64, u64, &[u8])> {
    let (header, payload, _) = format::decode::<DefaultHasher>(bytes, kind, None)?;
    if header.num_hashes != 0 {
        return Err(corrupt(
            "a bitmap has no hash functions (probe count must be 0)",
        ));
    }
    if !header.num_bits.is_multiple_of(bits_per_value) {
        return Err(corrupt("bit count is not a whole number of values"));
    }
    let universe = header.num_bits / bits_per_value;
    if !(1..=MAX_UNIVERSE).contains(&universe) {
        return Err(corrupt("universe outside 1..=2^32"));
    }
    let words = (universe * bits_per_value).div_ceil(64);
    if payload.len() as u64 != words * 8 {
        return Err(corrupt("payload length does not match the universe"));
    }
    Ok((universe, header.items, payload))
}
