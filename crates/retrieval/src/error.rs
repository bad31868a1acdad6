//! The crate's error type.

/// Errors of the retrieval structures.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum RetrievalError {
    /// An error of the core crate (allocation, corrupt bytes, hasher mismatch).
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
    /// The same key was given twice with different values.
    #[error("duplicate key with different values ({first} vs {second}); give each key one value")]
    DuplicateKey {
        /// The first value seen.
        first: u32,
        /// The conflicting value.
        second: u32,
    },
    /// Two distinct keys of a Bloomier filter have the same 64-bit hash under a hasher
    /// that cannot be reseeded (one given with `.hasher(..)`), and different values, so
    /// no table can tell them apart. (With a seeded default hasher the construction
    /// retries with a derived seed instead.)
    #[error("two distinct keys hash alike under this hasher but have different values ({first} vs {second}); build with another hasher key or seed")]
    HashCollision {
        /// The value of one key.
        first: u32,
        /// The value of the other.
        second: u32,
    },
    /// A builder's `threads(n)` pool could not be started.
    #[error("could not start a pool of {threads} threads: {reason}; pass fewer threads or leave the default (rayon's global pool)")]
    ThreadPool {
        /// Threads asked for.
        threads: usize,
        /// Why the pool failed.
        reason: String,
    },
    /// Peeling failed with every seed tried.
    #[error(
        "construction failed after {attempts} seeds; the key set may hold keys that hash alike"
    )]
    ConstructionFailed {
        /// How many seeds were tried.
        attempts: u32,
    },
    /// Two tables that cannot be combined (another size, probe count or seed).
    #[error(
        "cannot combine: {what} differs ({ours} vs {theirs}); build both with the same parameters"
    )]
    Mismatch {
        /// Which parameter differs.
        what: &'static str,
        /// This table's value.
        ours: u64,
        /// The other table's value.
        theirs: u64,
    },
    /// An IBLT holds more entries than its cells can decode.
    #[error("the table could not be decoded: {recovered} entries recovered, {stuck_cells} cells still hold entries; the difference exceeds what the table can list, so build it with a larger expected difference")]
    DecodeFailed {
        /// Entries peeled before decoding stalled.
        recovered: usize,
        /// Non-empty cells left.
        stuck_cells: usize,
    },
    /// A parameter out of its range.
    #[error("invalid parameter {name} = {value}: {expected}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: u64,
        /// What is accepted.
        expected: &'static str,
    },
}

impl From<RetrievalError> for bloomforge_core::Error {
    fn from(e: RetrievalError) -> Self {
        match e {
            RetrievalError::Core(c) => c,
            other => bloomforge_core::Error::Filter(bloomforge_core::SourceError::new(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RetrievalError;
    use std::error::Error as _;

    #[test]
    fn converts_into_core_error_and_back() {
        let e = RetrievalError::DecodeFailed {
            recovered: 3,
            stuck_cells: 7,
        };
        let msg = e.to_string();
        let core: bloomforge_core::Error = e.into();
        assert_eq!(core.to_string(), msg);
        let bloomforge_core::Error::Filter(src) = &core else {
            panic!("expected Error::Filter, got {core:?}");
        };
        assert!(matches!(
            src.downcast_ref::<RetrievalError>(),
            Some(RetrievalError::DecodeFailed { recovered: 3, .. })
        ));
        let _ = core.source();
        let wrapped: bloomforge_core::Error =
            RetrievalError::Core(bloomforge_core::Error::ZeroItems).into();
        assert_eq!(wrapped, bloomforge_core::Error::ZeroItems);
    }
}
