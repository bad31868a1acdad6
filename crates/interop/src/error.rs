//! The crate's one error type.

use std::path::PathBuf;

/// Errors of bloomforge-interop.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a filter of the named format (truncated, a wrong version or
    /// strategy, a size that disagrees with the length).
    #[error("not a {format} Bloom filter: {reason}")]
    Format {
        /// The format that was expected (`guava`, `spark`).
        format: &'static str,
        /// What is wrong, in words.
        reason: String,
    },
    /// A parameter outside what the other system accepts (a false-positive rate outside
    /// (0, 1), zero expected items, a size over its limits).
    #[error("{0}")]
    InvalidArgument(String),
    /// Two filters that cannot be combined (different sizes, hash counts, seeds or
    /// strategies).
    #[error("incompatible filters: {0}")]
    Incompatible(String),
    /// The filter's words could not be allocated.
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A Parquet file could not be read or written.
    #[error("{}: {source}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: parquet::errors::ParquetError,
    },
    /// A Parquet file that is readable but cannot be indexed or probed as asked (a missing
    /// or nested column, an unsupported type).
    #[error("{}: {message}", path.display())]
    InvalidParquet {
        /// The file.
        path: PathBuf,
        /// What is wrong, in words.
        message: String,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
