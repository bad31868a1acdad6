//! Rust errors as the Python exceptions a Python user expects: bad parameters and
//! incompatible filters `ValueError`, corrupt bytes `bloomforge.FormatError` (a
//! `ValueError`), file errors `OSError` with the path.

use bloomforge_core::Error;
use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::PyErr;

pyo3::create_exception!(
    bloomforge,
    FormatError,
    pyo3::exceptions::PyValueError,
    "Bytes or a file that are not a filter of the expected kind: truncated, corrupt, of \
     another kind, or from a newer bloomforge."
);

/// A core error (every crate's error converts into one) as a Python exception.
pub fn to_py(e: impl Into<Error>) -> PyErr {
    let e: Error = e.into();
    match e {
        Error::Corrupt { .. } | Error::UnsupportedVersion(_) | Error::HasherMismatch => {
            FormatError::new_err(e.to_string())
        }
        Error::AllocationFailed { .. } => PyMemoryError::new_err(e.to_string()),
        Error::Io(_) => PyOSError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// A decode error: anything that is not an allocation failure is a `FormatError`.
pub fn format_err(e: impl Into<Error>) -> PyErr {
    let e: Error = e.into();
    match e {
        Error::AllocationFailed { .. } => PyMemoryError::new_err(e.to_string()),
        _ => FormatError::new_err(e.to_string()),
    }
}

/// An I/O error on `path`, as `OSError(errno, message, path)`.
pub fn io_err(path: &str, e: std::io::Error) -> PyErr {
    match e.raw_os_error() {
        Some(code) => PyOSError::new_err((code, e.to_string(), path.to_string())),
        None => PyOSError::new_err(format!("{path}: {e}")),
    }
}

/// An error of the Guava / Spark filters or the Parquet retrofit: bytes that are not the
/// format `FormatError`, bad parameters, incompatible filters and unusable Parquet files
/// `ValueError`, file errors `OSError` with the path, allocation failures `MemoryError`.
pub fn interop_err(e: bloomforge_interop::Error) -> PyErr {
    use bloomforge_interop::Error as E;
    match e {
        E::Format { .. } => FormatError::new_err(e.to_string()),
        E::Core(core) => to_py(core),
        E::Io { path, source } => io_err(&path.display().to_string(), source),
        _ => PyValueError::new_err(e.to_string()),
    }
}
