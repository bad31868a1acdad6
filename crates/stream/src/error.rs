//! The error type of `bloomforge-stream`.

/// Everything that can go wrong in `bloomforge-stream`. An operation that returns an
/// error leaves the filter exactly as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// A scalable filter would need one slice more than its limit to take another key.
    /// Nothing was inserted; every key inserted before still answers `true`.
    #[error(
        "scalable filter full: its {max_slices} slices hold {len} keys (capacity {capacity}); \
         raise max_slices, the initial capacity or the growth factor"
    )]
    TooManySlices {
        /// The slice limit ([`ScalableBloomFilterBuilder::max_slices`](crate::ScalableBloomFilterBuilder::max_slices)).
        max_slices: u32,
        /// Keys inserted.
        len: u64,
        /// Keys the slices hold at their design false-positive rates.
        capacity: u64,
    },
    /// A construction parameter is out of range.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// The builder method's name (`"growth_factor"`, `"cell_bits"`, ...).
        name: &'static str,
        /// The value that was passed.
        value: f64,
        /// The valid range.
        reason: &'static str,
    },
    /// Two filters cannot be combined because a parameter differs.
    #[error("cannot combine filters: {parameter} differs ({left} vs {right}); build both with the same parameters")]
    Incompatible {
        /// The parameter's name.
        parameter: &'static str,
        /// Its value on the left (`self`).
        left: String,
        /// Its value on the right (the argument).
        right: String,
    },
    /// A batch insert stopped at `keys[index]`, whose insert failed with `source`. A Bloom
    /// filter cannot delete: the keys before `index` stay inserted.
    #[error("batch insert stopped at key {index}: {source}; the keys before it were inserted")]
    BatchStopped {
        /// Index of the key whose insert failed.
        index: usize,
        /// Why it failed.
        source: Box<StreamError>,
    },
    /// A neighbour id that the attenuated filter does not know.
    #[error("unknown neighbour {0}: add it with add_neighbour first")]
    UnknownNeighbour(u64),
    /// An error from `bloomforge-core` (false-positive rate or item count out of range,
    /// size too large, allocation failure, batch length mismatch, corrupt bytes, hasher
    /// mismatch).
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
}

/// So `?` composes up to core: core errors come back unchanged, every stream-only
/// condition as [`bloomforge_core::Error::Filter`] (downcast it back with
/// `SourceError::downcast_ref`).
impl From<StreamError> for bloomforge_core::Error {
    fn from(e: StreamError) -> Self {
        match e {
            StreamError::Core(c) => c,
            other => bloomforge_core::Error::Filter(bloomforge_core::SourceError::new(other)),
        }
    }
}

/// `Result` with [`StreamError`].
pub type Result<T, E = StreamError> = core::result::Result<T, E>;

/// Shorthand for a corrupt-bytes error.
pub(crate) fn corrupt(reason: &'static str) -> StreamError {
    StreamError::Core(bloomforge_core::Error::Corrupt { reason })
}
