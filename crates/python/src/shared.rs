//! What every class shares: file and pickle plumbing, thread pools.

use crate::errors::io_err;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Keys from which a batch call uses every thread (below, one thread is faster).
pub const PARALLEL_FROM: usize = 1 << 20;

/// Runs `work` on a pool of `threads` threads, or on rayon's global pool (every core).
pub fn on_threads<R: Send>(threads: Option<usize>, work: impl FnOnce() -> R + Send) -> PyResult<R> {
    match threads {
        None => Ok(work()),
        Some(0) => Err(PyValueError::new_err("threads must be at least 1")),
        Some(t) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| PyValueError::new_err(format!("threads={t}: {e}")))?;
            Ok(pool.install(work))
        }
    }
}

/// Writes `bytes` to `path`; `OSError` naming the path.
pub fn write_file(path: &std::path::Path, bytes: &[u8]) -> PyResult<()> {
    std::fs::write(path, bytes).map_err(|e| io_err(&path.display().to_string(), e))
}

/// Reads `path`; `OSError` naming the path.
pub fn read_file(path: &std::path::Path) -> PyResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| io_err(&path.display().to_string(), e))
}

/// `(type(obj).from_bytes, (obj.to_bytes(),))`: how every class pickles.
pub fn reduce<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
    let from_bytes = obj.get_type().getattr("from_bytes")?;
    Ok((from_bytes, (obj.call_method0("to_bytes")?,)))
}
