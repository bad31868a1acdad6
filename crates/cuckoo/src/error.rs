//! The error type of `bloomforge-cuckoo`.

/// Everything that can go wrong in `bloomforge-cuckoo`. An operation that returns an
/// error leaves the filter exactly as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CuckooError {
    /// Both candidate buckets of the key are full and the victim stash already holds a
    /// fingerprint: the filter is at capacity (about 95 % load at 4-slot buckets). Nothing
    /// was inserted and nothing moved; every key inserted before still answers `true`.
    #[error(
        "cuckoo filter full at {len} of {capacity} slots: both buckets and the stash are \
         occupied; build it for more expected items (or remove keys first)"
    )]
    Full {
        /// Fingerprints stored (the stash included).
        len: u64,
        /// Slots of the table.
        capacity: u64,
    },
    /// `remove` of a key whose fingerprint is in neither of its buckets nor the stash: it
    /// was never inserted (or already removed). Nothing was changed.
    #[error("key not present: remove only keys that were inserted and not yet removed")]
    NotPresent,
    /// `insert_batch` stopped at `keys[index]`, which did not fit (the filter is full).
    /// The keys the call had inserted were removed again: the filter answers exactly as
    /// before the call.
    #[error(
        "batch insert failed at key {index}: the filter is full; nothing of the batch was kept"
    )]
    BatchFull {
        /// Index of the first key that did not fit.
        index: usize,
    },
    /// A construction parameter is out of range.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// The builder method's name (`"bucket_size"`, `"target_load"`, ...).
        name: &'static str,
        /// The value that was passed.
        value: f64,
        /// The valid range.
        reason: &'static str,
    },
    /// The target false-positive rate cannot be met with this fingerprint size at any
    /// allowed bucket size (the rate is about `2 b / 2^f` at full load).
    #[error(
        "false-positive rate {requested:e} is below what {bits}-bit fingerprints reach \
         ({best:e} at {bucket_size}-slot buckets); use a longer fingerprint \
         (CuckooFilter::builder().fingerprint::<Fp16>())"
    )]
    FingerprintTooShort {
        /// The requested rate.
        requested: f64,
        /// Fingerprint bits of the filter type.
        bits: u32,
        /// The best rate reachable (at the smallest allowed bucket size).
        best: f64,
        /// The bucket size of that best rate.
        bucket_size: u32,
    },
    /// Serialized bytes hold a filter with another fingerprint size than the type they
    /// are read into.
    #[error(
        "serialized filter has {stored}-bit fingerprints but the type reads {requested}-bit ones; \
         read it as CuckooFilter<Fp{stored}>"
    )]
    FingerprintMismatch {
        /// Fingerprint bits in the bytes.
        stored: u32,
        /// Fingerprint bits of the type.
        requested: u32,
    },
    /// An error from `bloomforge-core` (false-positive rate or item count out of range,
    /// size too large, allocation failure, unavailable backend, batch length mismatch,
    /// corrupt bytes, hasher mismatch).
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
}

/// So `?` composes up to core: core errors come back unchanged, every cuckoo-only
/// condition (full, not present, parameters, fingerprint size) as
/// [`bloomforge_core::Error::Filter`] (downcast it back with `SourceError::downcast_ref`).
impl From<CuckooError> for bloomforge_core::Error {
    fn from(e: CuckooError) -> Self {
        match e {
            CuckooError::Core(c) => c,
            other => bloomforge_core::Error::Filter(bloomforge_core::SourceError::new(other)),
        }
    }
}

/// `Result` with [`CuckooError`].
pub type Result<T, E = CuckooError> = core::result::Result<T, E>;
