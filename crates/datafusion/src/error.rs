//! The error type of `bloomforge-datafusion`.
//!
//! One enum for the whole crate: the SQL functions and the Parquet module (reading a
//! file's Bloom filters, writing files with them). The SQL functions report errors to
//! DataFusion as a `DataFusionError`: a wrong call (parameter not constant or out of
//! range, an unsupported type, a bad argument) as `DataFusionError::Plan`, bad filter
//! bytes, mismatched partial filters or an unreadable file as
//! `DataFusionError::External` wrapping a [`BloomUdfError`] (get it back with
//! `DataFusionError::find_root` and `downcast_ref`). The type is named `BloomUdfError`, not
//! `DatafusionError` as the workspace convention would spell it, so it cannot be confused
//! with DataFusion's own `DataFusionError`.

use ::parquet::errors::ParquetError;
use datafusion::error::DataFusionError;
use std::path::PathBuf;

/// Everything that can go wrong in `bloomforge-datafusion`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BloomUdfError {
    /// A `bloom_agg` parameter is not a constant, or is out of range.
    #[error("{function}: invalid {name}: {reason}")]
    InvalidParameter {
        /// The SQL function (`"bloom_agg"`).
        function: &'static str,
        /// The parameter (`"expected_items"`, `"false_pos"`, `"kind"`).
        name: &'static str,
        /// What was wrong and what is allowed.
        reason: String,
    },
    /// Bytes passed as a filter are not a bloomforge split-block or counting filter
    /// (another kind, truncated, corrupt, failed checksum).
    #[error(
        "{function}: the filter bytes are not a valid bloomforge split-block or counting \
         filter: {source}"
    )]
    InvalidFilter {
        /// The SQL function that read them.
        function: &'static str,
        /// Why core's decoder refused them.
        source: bloomforge_core::Error,
    },
    /// Bytes that start like a Guava or Spark filter but cannot be read as one.
    #[error("{function}: the filter bytes are not a valid Guava or Spark filter: {reason}")]
    InvalidForeignFilter {
        /// The SQL function that read them.
        function: &'static str,
        /// Why bloomforge-interop's decoder refused them (its error, as text: this enum is
        /// `Clone` and `PartialEq`, which that error, holding I/O errors, is not).
        reason: String,
    },
    /// Partial `bloom_agg` states built with different parameters cannot be merged.
    #[error(
        "bloom_agg: cannot merge partial filters: {source}; every partial filter of one \
         bloom_agg must be built with the same kind, expected_items and false_pos"
    )]
    MismatchedMerge {
        /// Core's (or the counting crate's) description of what differs.
        source: bloomforge_core::Error,
    },
    /// A partial `bloom_agg` state of one kind merged into an accumulator of the other.
    #[error(
        "bloom_agg: cannot merge a {state} partial filter into a {accumulator} one; every \
         partial filter of one bloom_agg must be built with the same kind, expected_items \
         and false_pos"
    )]
    MismatchedKinds {
        /// The accumulator's kind (`"split-block"`, `"counting"`).
        accumulator: &'static str,
        /// The kind of the state's bytes.
        state: &'static str,
    },
    /// `retract_batch` of a key whose counters are not all above zero: it removes a row
    /// that was never added (a window frame only retracts rows it added, so this means
    /// a direct caller passed other rows). Keys of the batch before it were removed.
    #[error(
        "bloom_agg: cannot retract a key that is not in the counting filter (retract_batch \
         must only remove rows that update_batch added): {source}"
    )]
    RetractAbsent {
        /// The counting filter's refusal (`NotPresent`).
        source: bloomforge_counting::CountingError,
    },
    /// An Arrow type the functions cannot hash.
    #[error("{function}: unsupported key type {data_type}; supported: {supported}")]
    UnsupportedType {
        /// The SQL function.
        function: &'static str,
        /// The type that was passed, as Arrow prints it.
        data_type: String,
        /// The supported types.
        supported: &'static str,
    },
    // The Parquet module's (`crate::parquet`): reading and writing files.
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The parquet crate refused the file (not Parquet, corrupt footer or metadata) or a
    /// write failed.
    #[error("{path}: {source}")]
    Parquet {
        /// The file (`<writer>` when writing to a caller's writer).
        path: PathBuf,
        /// The parquet crate's error.
        source: ParquetError,
    },
    /// The file has no leaf column of this name (dotted path for nested columns).
    #[error("{path}: no column {column:?}; the file has {available:?}")]
    NoSuchColumn {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        column: String,
        /// The file's leaf columns.
        available: Vec<String>,
    },
    /// The writer stored no Bloom filter for this column in this row group.
    #[error("{path}: column {column:?} has no Bloom filter in row group {row_group}")]
    NoBloomFilter {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// The row group without one.
        row_group: usize,
    },
    /// The stored filter is not a readable split-block filter: a corrupt or unsupported
    /// header, a length out of range or past the end of the file.
    #[error("{path}: column {column:?}, row group {row_group}: bad Bloom filter: {reason}")]
    InvalidBloomFilter {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// The row group.
        row_group: usize,
        /// What is wrong.
        reason: String,
    },
    /// Row groups' filters whose sizes cannot be folded into one filter (neither block
    /// count divides the other; Parquet writers use powers of two, which always fold).
    #[error("column {column:?}: row group filters of {blocks_a} and {blocks_b} blocks cannot be combined")]
    MismatchedSizes {
        /// The column.
        column: String,
        /// One row group's block count.
        blocks_a: usize,
        /// Another's.
        blocks_b: usize,
    },
    /// A Parquet column or key whose type Parquet Bloom filters cannot serve here.
    #[error("column {column:?}: unsupported type {data_type}; supported: {supported}")]
    UnsupportedColumnType {
        /// The column (or the SQL function, for a key).
        column: String,
        /// The type, as Arrow or Parquet prints it.
        data_type: String,
        /// What is supported.
        supported: &'static str,
    },
    /// An invalid writer argument (a column not in the batches, batches of different
    /// schemas, a false-positive rate out of range).
    #[error("{0}")]
    InvalidArgument(String),
    /// An error from `bloomforge-core` (sizing out of range, allocation failure).
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
}

/// `Result` with [`BloomUdfError`].
pub type Result<T, E = BloomUdfError> = core::result::Result<T, E>;

/// `?` composes up to core's error: a core error comes back as itself, any other as
/// [`bloomforge_core::Error::Filter`] (downcast it back with `SourceError::downcast_ref`).
impl From<BloomUdfError> for bloomforge_core::Error {
    fn from(e: BloomUdfError) -> Self {
        match e {
            BloomUdfError::Core(core) => core,
            other => bloomforge_core::Error::Filter(bloomforge_core::SourceError::new(other)),
        }
    }
}

/// Wrong calls become planning errors; everything else is an external error that keeps
/// the typed value.
impl From<BloomUdfError> for DataFusionError {
    fn from(e: BloomUdfError) -> Self {
        match e {
            BloomUdfError::InvalidParameter { .. }
            | BloomUdfError::UnsupportedType { .. }
            | BloomUdfError::UnsupportedColumnType { .. }
            | BloomUdfError::InvalidArgument(_) => DataFusionError::Plan(e.to_string()),
            other => DataFusionError::External(Box::new(other)),
        }
    }
}
