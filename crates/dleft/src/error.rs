//! The error type of `bloomforge-dleft`.

/// Everything that can go wrong in `bloomforge-dleft`. An operation that returns an error
/// leaves the filter exactly as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DLeftError {
    /// The key's fingerprint is not stored and all `d` candidate buckets are full. The
    /// filter holds more keys than it was sized for (or the keys are adversarial): build it
    /// for more items, or with more cells per bucket. Nothing was inserted.
    #[error(
        "all candidate buckets are full: the filter is over capacity; \
         build it for more expected items (or more cells per bucket)"
    )]
    BucketFull,
    /// `remove` of a key whose fingerprint is not stored: it was never inserted (or was
    /// already removed). Nothing was changed.
    #[error("key not present: remove only keys that were inserted and not yet removed")]
    NotPresent,
    /// A construction parameter is out of range.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// The builder method's name (`"subtables"`, `"remainder_bits"`, ...).
        name: &'static str,
        /// The value that was passed.
        value: u64,
        /// What the valid range is.
        reason: &'static str,
    },
    /// The average bucket load the sizing aims at must be positive, finite and at most the
    /// number of cells per bucket.
    #[error("target load {load} is not in (0, {cells}]: pass an average bucket load such as 6 for 8 cells")]
    InvalidTargetLoad {
        /// The load that was passed.
        load: f64,
        /// Cells per bucket.
        cells: u32,
    },
    /// A batch operation failed at `keys[index]` (with `error`: `BucketFull` for
    /// `insert_batch`, `NotPresent` for `remove_batch`). The whole batch was rolled back:
    /// the filter is exactly as before the call.
    #[error("batch failed at key {index} ({error}); the whole batch was rolled back")]
    BatchFailed {
        /// Index of the first key that failed.
        index: usize,
        /// Why it failed; also the error's [`source`](std::error::Error::source) (as the
        /// `Box<DLeftError>` it is: `downcast_ref::<Box<DLeftError>>()`).
        #[source]
        error: Box<DLeftError>,
    },
    /// An error from `bloomforge-core` (false-positive rate or item count out of range,
    /// size too large, allocation failure, unavailable backend, batch length mismatch).
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
}

/// `Result` with [`DLeftError`].
pub type Result<T, E = DLeftError> = core::result::Result<T, E>;

/// `?` composes up to core's error: a core error comes back as itself, any other as
/// [`bloomforge_core::Error::Filter`] (downcast it back with `SourceError::downcast_ref`).
impl From<DLeftError> for bloomforge_core::Error {
    fn from(e: DLeftError) -> Self {
        match e {
            DLeftError::Core(core) => core,
            other => bloomforge_core::Error::Filter(bloomforge_core::SourceError::new(other)),
        }
    }
}
