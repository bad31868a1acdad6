//! `bloomforge.Iblt`: bloomforge-retrieval's invertible Bloom lookup table, for the set
//! difference between two peers.

use crate::errors::{format_err, to_py};
use crate::keys::{batch_chunks, hash_key};
use crate::shared::{read_file, reduce, write_file};
use bloomforge_retrieval::{Iblt as Rust, RetrievalError};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

/// An invertible Bloom lookup table: the set difference of two peers' sets from two small
/// tables, whatever the sets' sizes.
///
/// `Iblt(expected_diff, *, seed=0)`: sized to list a difference of about `expected_diff`
/// keys. Each peer adds its keys; `a.subtract(b).list_entries()` gives the hashes of the
/// keys only in `a` and of those only in `b` (map them back with `hash_of`), or raises
/// `ValueError` when the difference is larger than the table can list.
#[pyclass(module = "bloomforge", name = "Iblt")]
#[derive(Clone)]
pub struct Iblt {
    inner: Rust,
}

#[pymethods]
impl Iblt {
    #[new]
    #[pyo3(signature = (expected_diff, *, seed = 0))]
    fn new(expected_diff: usize, seed: u64) -> PyResult<Self> {
        let inner = Rust::builder()
            .expected_diff(expected_diff)
            .seed(seed)
            .build()
            .map_err(to_py)?;
        Ok(Iblt { inner })
    }

    /// The 64-bit hash this table stores for `key` (what `list_entries` returns).
    fn hash_of(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        hash_key(self.inner.hasher(), key)
    }

    /// Adds one key.
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner.insert_hash(h);
        Ok(())
    }

    /// Removes one key (a key never added leaves a negative entry, listed second).
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner.remove_hash(h);
        Ok(())
    }

    /// Adds every key of `keys` (NumPy integer array, Arrow array, or iterable).
    fn add_many(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let hasher = *self.inner.hasher();
        let inner = &mut self.inner;
        batch_chunks(py, keys, &hasher, |h| {
            h.iter().for_each(|&x| inner.insert_hash(x))
        })
    }

    /// Adds every key of an iterable (as `add_many`).
    fn update(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        self.add_many(py, keys)
    }

    /// `self - other`: keys only in `self` stay, keys only in `other` become negative,
    /// common keys cancel. `ValueError` when the tables' sizes or seeds differ.
    fn subtract(&self, other: &Iblt) -> PyResult<Self> {
        let inner = self.inner.subtract(&other.inner).map_err(to_py)?;
        Ok(Iblt { inner })
    }

    fn __sub__(&self, other: &Iblt) -> PyResult<Self> {
        self.subtract(other)
    }

    /// `(only_self, only_other)`: two `numpy.ndarray[uint64]` of key hashes (see
    /// `hash_of`). `ValueError` when the difference is too large for the table.
    #[allow(clippy::type_complexity)]
    fn list_entries<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>)> {
        match py.detach(|| self.inner.list_entries()) {
            Ok((a, b)) => Ok((a.into_pyarray(py), b.into_pyarray(py))),
            Err(e @ RetrievalError::DecodeFailed { .. }) => Err(PyValueError::new_err(format!(
                "{e}: the difference is larger than this table lists; build both tables with \
                 a larger expected_diff"
            ))),
            Err(e) => Err(to_py(e)),
        }
    }

    /// Whether every cell is empty (the two sets subtracted were equal).
    fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Cells in the table.
    #[getter]
    fn cells(&self) -> usize {
        self.inner.cells()
    }

    /// Bytes the table occupies.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bytes()
    }

    /// A copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// `copy.copy(f)`: a copy (as `copy`).
    fn __copy__(&self) -> Self {
        self.clone()
    }

    /// `copy.deepcopy(f)`: a copy (as `copy`).
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<Iblt>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Iblt(cells={}, size_in_bytes={}, empty={})",
            self.inner.cells(),
            self.inner.memory_bytes(),
            self.inner.is_empty()
        )
    }

    /// The table in bloomforge's format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes from `to_bytes` or `save`.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py.detach(|| Rust::from_bytes(data)).map_err(format_err)?;
        Ok(Iblt { inner })
    }

    /// Writes the table to `path`.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = py.detach(|| self.inner.to_bytes());
        write_file(&path, &bytes)
    }

    /// Reads a table file.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes = read_file(&path)?;
        Self::from_bytes(cls, py, &bytes)
    }

    /// Pickling: the table's bytes.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any())
    }
}
