//! The error type of `bloomforge-core`.

use core::fmt;

/// The shape of a filter as far as compatibility goes: two filters can be combined
/// (union, intersection) only when their shapes are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FilterShape {
    /// Number of bits in the filter.
    pub num_bits: u64,
    /// Number of probes per key.
    pub num_hashes: u32,
    /// A fingerprint of the hasher: the hash it gives a fixed probe value. Two hashers
    /// built with different seeds or keys differ here with overwhelming probability.
    pub hasher_fingerprint: u64,
}

impl FilterShape {
    /// What differs between two shapes, naming each parameter and both values
    /// (`"k differs (6 vs 7)"`), or `"none"`.
    pub fn differences(&self, other: &FilterShape) -> String {
        let mut out = Vec::new();
        if self.num_bits != other.num_bits {
            out.push(format!(
                "size differs ({} vs {} bits)",
                self.num_bits, other.num_bits
            ));
        }
        if self.num_hashes != other.num_hashes {
            out.push(format!(
                "k differs ({} vs {})",
                self.num_hashes, other.num_hashes
            ));
        }
        if self.hasher_fingerprint != other.hasher_fingerprint {
            out.push(format!(
                "hasher differs ({:#018x} vs {:#018x}: another seed or key)",
                self.hasher_fingerprint, other.hasher_fingerprint
            ));
        }
        if out.is_empty() {
            "none".to_string()
        } else {
            out.join(", ")
        }
    }
}

/// An error of another bloomforge crate (counting, d-left, cuckoo, bitmap, ...) carried in
/// core's [`Error::Filter`], so that `?` composes from any crate of the workspace up to
/// [`Error`]. Its [`source`](std::error::Error::source) is the original error's source;
/// [`get_ref`](Self::get_ref) and `downcast_ref` give the original back. Two values are
/// equal when they wrap the same error or errors with the same message.
#[derive(Clone, Debug)]
pub struct SourceError(std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>);

impl SourceError {
    /// Wraps `error`.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        SourceError(std::sync::Arc::new(error))
    }

    /// The original error.
    pub fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }

    /// The original error as `E`, if it is one.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SourceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for SourceError {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

/// An I/O failure carried by [`Error::Io`]: what went wrong, and the
/// [`std::io::Error`] it came from when there was one, kept as its
/// [`source`](std::error::Error::source) (so reporters and callers see the OS error and
/// its [`kind`](Self::kind)). Displays as `i/o: <message>`. Cheap to clone (the
/// `io::Error` is shared); two values are equal when their messages and kinds are.
#[derive(Clone, Debug)]
pub struct IoError {
    message: String,
    io: Option<std::sync::Arc<std::io::Error>>,
}

impl IoError {
    /// An I/O failure without an underlying `io::Error` (e.g. a payload of another length
    /// than its header announces).
    pub fn new(message: impl Into<String>) -> Self {
        IoError {
            message: message.into(),
            io: None,
        }
    }

    /// The message (the `io::Error`'s own text when it came from one).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `io::Error` this failure came from, if any.
    pub fn io_error(&self) -> Option<&std::io::Error> {
        self.io.as_deref()
    }

    /// The kind of the underlying `io::Error`, if any.
    pub fn kind(&self) -> Option<std::io::ErrorKind> {
        self.io.as_ref().map(|e| e.kind())
    }
}

impl From<std::io::Error> for IoError {
    fn from(e: std::io::Error) -> Self {
        IoError {
            message: e.to_string(),
            io: Some(std::sync::Arc::new(e)),
        }
    }
}

impl From<String> for IoError {
    fn from(message: String) -> Self {
        IoError::new(message)
    }
}

impl From<&str> for IoError {
    fn from(message: &str) -> Self {
        IoError::new(message)
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "i/o: {}", self.message)
    }
}

impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl PartialEq for IoError {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message && self.kind() == other.kind()
    }
}

impl fmt::Display for FilterShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bits, {} hashes, hasher {:#018x}",
            self.num_bits, self.num_hashes, self.hasher_fingerprint
        )
    }
}

/// Everything that can go wrong in `bloomforge-core`. An operation that returns an error
/// leaves the filter exactly as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The target false-positive rate must lie strictly between 0 and 1.
    #[error("false-positive rate {0} is not in (0, 1): pass e.g. 0.01 for 1 %")]
    InvalidFalsePositiveRate(f64),
    /// The layout cannot reach the requested false-positive rate at any size it supports.
    #[error("false-positive rate {requested:e} is below what this layout reaches ({best:e} at its largest size); use a lower-FP layout or a larger target")]
    UnreachableFalsePositiveRate {
        /// The target that was asked for.
        requested: f64,
        /// The best rate the layout's sizing reaches.
        best: f64,
    },
    /// Sizing from a target false-positive rate needs at least one expected item.
    #[error("expected item count is 0: pass the number of keys you will insert (at least 1)")]
    ZeroItems,
    /// A filter needs at least one bit (or block).
    #[error("a filter needs at least one bit; pass a positive size")]
    ZeroBits,
    /// The requested size does not fit the layout or the platform's address space.
    #[error("requested size {requested} exceeds the maximum {max} for this layout")]
    TooLarge {
        /// What was asked for, in the layout's unit (bits for standard filters, blocks
        /// for blocked and split-block filters).
        requested: u64,
        /// The largest value the layout supports.
        max: u64,
    },
    /// Allocating the filter's memory failed.
    #[error("could not allocate {bytes} bytes for the filter; choose a smaller size")]
    AllocationFailed {
        /// Bytes requested.
        bytes: usize,
    },
    /// The number of probes must lie in `min..=max`.
    #[error("number of hashes {k} is not in {min}..={max}")]
    InvalidHashCount {
        /// What was asked for.
        k: u32,
        /// The layout's minimum.
        min: u32,
        /// The layout's maximum.
        max: u32,
    },
    /// Union / intersection of filters whose sizes, probe counts or hashers differ.
    #[error("cannot combine filters: {}; left has {left}, right has {right}: build both with the same size, hashes and hasher", left.differences(right))]
    IncompatibleFilters {
        /// Shape of `self`.
        left: FilterShape,
        /// Shape of the other operand.
        right: FilterShape,
    },
    /// Hashes split by range ([`RangeSplit`](crate::RangeSplit)) with a splitter that
    /// does not cut this filter, or by another splitter than the one passed with them.
    #[error("hashes split by range do not match this filter: {0}; split them with this filter's range_splitter")]
    RangeMismatch(String),
    /// A serialized bitset has a length the layout cannot hold.
    #[error("invalid bitset of {len} bytes: {reason}")]
    InvalidBitset {
        /// The length that was passed.
        len: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A batch call got a different number of keys and output slots.
    #[error(
        "batch length mismatch: {keys} keys but {out} output slots; pass slices of equal length"
    )]
    LengthMismatch {
        /// Number of keys (or hashes).
        keys: usize,
        /// Length of the output slice.
        out: usize,
    },
    /// The operating system's random source failed (keyed hashing needs a random key).
    #[error("operating system random source failed: {0}")]
    RandomSource(String),
    /// Serialized bytes are truncated, corrupted or not a filter of the expected kind.
    #[error("corrupt filter bytes: {reason}")]
    Corrupt {
        /// What check failed.
        reason: &'static str,
    },
    /// Serialized bytes use a format version this crate cannot read (it reads versions 1
    /// to [`FORMAT_VERSION`](crate::format::FORMAT_VERSION) and writes the latest).
    #[error(
        "unsupported format version {0}; this crate reads versions 1 to {latest} (and writes \
         {latest}): the bytes come from a newer bloomforge, or are not a filter",
        latest = crate::format::FORMAT_VERSION
    )]
    UnsupportedVersion(u16),
    /// Serialized bytes were built with another hash algorithm than the one requested, or a
    /// keyed filter was read without its key.
    #[error("hasher mismatch: read the filter with the hasher it was built with (keyed filters need from_bytes_with_hasher)")]
    HasherMismatch,
    /// An I/O error while reading or writing a serialized filter. Its
    /// [`source`](std::error::Error::source) is the [`std::io::Error`] when there was one
    /// ([`IoError::io_error`], [`IoError::kind`]); the message reads `i/o: ...` as before.
    /// (The payload was a `String` before; `Error::Io(message.into())` still builds one.)
    #[error(transparent)]
    Io(IoError),
    /// A zero-copy view cannot borrow these bytes (misaligned buffer, or a big-endian
    /// target, where the little-endian payload is not the in-memory layout).
    #[error(
        "zero-copy view impossible: {reason}; use from_bytes on the filter type, which copies"
    )]
    ZeroCopy {
        /// Why.
        reason: &'static str,
    },
    /// The requested SIMD backend is not supported by this CPU.
    #[error("backend {0} is not supported by this CPU; see Backend::available()")]
    BackendUnavailable(&'static str),
    /// Building a thread pool for a parallel operation failed.
    #[error("thread pool: {0}")]
    ThreadPool(String),
    /// An error of another crate of the workspace (`CountingError`, `DLeftError`,
    /// `CuckooError`, `BitmapError`, ...), converted with `From` so that `?` composes; it
    /// is shown as itself (message and [`source`](std::error::Error::source) chain pass
    /// through, so reporters print it once) and can be downcast back with
    /// [`SourceError::downcast_ref`].
    #[error(transparent)]
    Filter(SourceError),
}

/// `?` on an `io::Error` gives [`Error::Io`] with the `io::Error` as its source.
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.into())
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
