//! `bloomforge.CuckooFilter`: bloomforge-cuckoo's filter (partial-key cuckoo hashing),
//! which deletes and counts exactly.

use crate::errors::{format_err, to_py};
use crate::keys::{batch_all, batch_answers, hash_key};
use crate::shared::{read_file, reduce, write_file};
use bloomforge_cuckoo::{CuckooError, CuckooFilter as Rust};
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

/// A cuckoo filter: `add`, `remove`, `x in f`, with an exact `len`.
///
/// `CuckooFilter(expected_items, false_positive_rate=0.01, *, seed=0)`: 12-bit
/// fingerprints in 4-slot buckets. An add fails (`ValueError`, the filter unchanged) when
/// the table is full; a key added more than 8 times cannot be added again. Remove only
/// keys you added: removing another key's fingerprint is possible otherwise.
#[pyclass(module = "bloomforge", name = "CuckooFilter")]
#[derive(Clone)]
pub struct CuckooFilter {
    inner: Rust,
}

fn full(e: CuckooError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

#[pymethods]
impl CuckooFilter {
    #[new]
    #[pyo3(signature = (expected_items, false_positive_rate = 0.01, *, seed = 0))]
    fn new(expected_items: u64, false_positive_rate: f64, seed: u64) -> PyResult<Self> {
        let inner = Rust::builder()
            .expected_items(expected_items)
            .false_pos(false_positive_rate)
            .seed(seed)
            .build()
            .map_err(to_py)?;
        Ok(CuckooFilter { inner })
    }

    /// Adds one key; `ValueError` when the table is full (nothing changes).
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner.insert_hash(h).map_err(full)
    }

    /// Removes one occurrence of `key`; `KeyError` when it is not there.
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        match self.inner.remove_hash(h) {
            Ok(_) => Ok(()),
            Err(CuckooError::NotPresent) => Err(PyKeyError::new_err(key.clone().unbind())),
            Err(e) => Err(to_py(e)),
        }
    }

    /// Removes one occurrence of `key` if present; whether it was.
    fn discard(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        match self.inner.remove_hash(h) {
            Ok(_) => Ok(true),
            Err(CuckooError::NotPresent) => Ok(false),
            Err(e) => Err(to_py(e)),
        }
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.contains_hash(h))
    }

    /// Adds every key of `keys`; all or nothing: when the table fills, `ValueError` and
    /// the filter answers exactly as before the call (its slots may be rearranged, so its
    /// bytes, and `==` with a copy taken before, may differ).
    fn add_many(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let hasher = *self.inner.hasher();
        let inner = &mut self.inner;
        batch_all(py, keys, &hasher, |hashes| inner.insert_hash_batch(hashes))?.map_err(full)
    }

    /// Adds every key of an iterable (as `add_many`).
    fn update(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        self.add_many(py, keys)
    }

    /// `numpy.ndarray[bool]`: whether each key may be in the filter.
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let hasher = *self.inner.hasher();
        batch_answers(py, keys, &hasher, |h, o| {
            self.inner.contains_hash_batch(h, o).expect("equal lengths");
        })
    }

    /// Keys in the filter (exact).
    fn __len__(&self) -> usize {
        self.inner.len() as usize
    }

    /// Fraction of the slots in use.
    #[getter]
    fn load_factor(&self) -> f64 {
        self.inner.load_factor()
    }

    /// The false-positive rate at the current load.
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        self.inner.expected_false_pos()
    }

    /// Bytes the table occupies.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bits() / 8
    }

    /// Removes every key.
    fn clear(&mut self) {
        self.inner.clear()
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
        match other.cast::<CuckooFilter>() {
            Ok(o) => o.borrow().inner.to_bytes() == self.inner.to_bytes(),
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "CuckooFilter(len={}, load_factor={:.4}, fingerprint_bits={}, \
             false_positive_rate={:.3e})",
            self.inner.len(),
            self.inner.load_factor(),
            self.inner.fingerprint_bits(),
            self.inner.expected_false_pos()
        )
    }

    /// The filter in bloomforge's format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes from `to_bytes` or `save`.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py.detach(|| Rust::from_bytes(data)).map_err(format_err)?;
        Ok(CuckooFilter { inner })
    }

    /// Writes the filter to `path`.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = py.detach(|| self.inner.to_bytes());
        write_file(&path, &bytes)
    }

    /// Reads a filter file.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes = read_file(&path)?;
        Self::from_bytes(cls, py, &bytes)
    }

    /// Pickling: the filter's bytes.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any())
    }
}
