//! `bloomforge.CountingBloomFilter`: bloomforge-counting's filter of 4-bit counters, which
//! deletes.

use crate::errors::{format_err, to_py};
use crate::keys::{batch_answers, batch_chunks, batch_map, hash_key};
use crate::shared::{read_file, reduce, write_file};
use bloomforge_core::{Count, RemoveOutcome};
use bloomforge_counting::{CountingBloomFilter as Rust, CountingError};
use numpy::PyArray1;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

/// A Bloom filter of 4-bit counters: `add`, `remove` and `count` keys.
///
/// `CountingBloomFilter(expected_items, false_positive_rate=0.01, *, seed=0)`
///
/// `len(f)` is exact: adds minus removes. A counter that reaches 15 saturates and stays
/// (a key whose counters saturated may stay present after its removes); `count` is then a
/// lower bound. Removing a key that was never added raises `KeyError` when the filter can
/// tell, and otherwise may remove another key's presence: remove only what you added.
#[pyclass(module = "bloomforge", name = "CountingBloomFilter")]
#[derive(Clone)]
pub struct CountingBloomFilter {
    inner: Rust,
}

fn count_value(c: Count) -> u64 {
    match c {
        Count::Exact(n) | Count::AtLeast(n) => n,
    }
}

#[pymethods]
impl CountingBloomFilter {
    #[new]
    #[pyo3(signature = (expected_items, false_positive_rate = 0.01, *, seed = 0))]
    fn new(expected_items: u64, false_positive_rate: f64, seed: u64) -> PyResult<Self> {
        let inner = Rust::builder()
            .expected_items(expected_items)
            .false_pos(false_positive_rate)
            .seed(seed)
            .build()
            .map_err(to_py)?;
        Ok(CountingBloomFilter { inner })
    }

    /// Adds one key (once more, if already there).
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner.insert_hash(h);
        Ok(())
    }

    /// Removes one occurrence of `key`. Returns `"removed"`, or `"saturated"` when a
    /// saturated counter was left as it is (the key may stay present). Raises `KeyError`
    /// when the key is not in the filter (nothing changes).
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let h = hash_key(self.inner.hasher(), key)?;
        match self.inner.remove_hash(h) {
            Ok(RemoveOutcome::Removed) => Ok("removed"),
            Ok(RemoveOutcome::Saturated) => Ok("saturated"),
            Err(CountingError::NotPresent) => Err(PyKeyError::new_err(key.clone().unbind())),
            Err(e) => Err(to_py(e)),
        }
    }

    /// `True` when `key` was in the filter and one occurrence is now removed; `False`
    /// (nothing changes) when it was not.
    fn discard(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        match self.inner.remove_hash(h) {
            Ok(_) => Ok(true),
            Err(CountingError::NotPresent) => Ok(false),
            Err(e) => Err(to_py(e)),
        }
    }

    /// How many times `key` was added and not removed: an upper bound (other keys may
    /// share its counters), and a lower bound where a counter saturated.
    fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(count_value(self.inner.count_hash(h)))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.contains_hash(h))
    }

    /// Adds every key of `keys` (NumPy integer array, Arrow array, or iterable), without
    /// the GIL for arrays.
    fn add_many(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let hasher = *self.inner.hasher();
        let inner = &mut self.inner;
        batch_chunks(py, keys, &hasher, |h| inner.insert_hash_batch(h))
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

    /// `numpy.ndarray[uint8]`: `count` of each key.
    fn count_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let hasher = *self.inner.hasher();
        batch_map(py, keys, &hasher, |x| {
            count_value(self.inner.count_hash(x)) as u8
        })
    }

    /// Removes one occurrence of each key; `numpy.ndarray[bool]`: whether each was
    /// present (and removed). Keys not present change nothing.
    fn remove_many<'py>(
        &mut self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let hasher = *self.inner.hasher();
        let inner = &mut self.inner;
        batch_map(py, keys, &hasher, |x| inner.remove_hash(x).is_ok())
    }

    /// Adds minus removes (exact).
    fn __len__(&self) -> usize {
        self.inner.len() as usize
    }

    /// The false-positive rate for the keys in the filter now.
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        self.inner.expected_false_pos()
    }

    /// Bytes the counters occupy.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bits() / 8
    }

    /// Counters (4 bits each).
    #[getter]
    fn num_counters(&self) -> u64 {
        self.inner.num_counters()
    }

    /// Counters per key.
    #[getter]
    fn num_hashes(&self) -> u32 {
        self.inner.num_hashes()
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

    /// `f | g`: counters added (same size and seed, else `ValueError`).
    fn __or__(&self, other: &CountingBloomFilter) -> PyResult<Self> {
        let mut out = self.clone();
        out.inner.union(&other.inner).map_err(to_py)?;
        Ok(out)
    }

    fn __ior__(&mut self, other: &CountingBloomFilter) -> PyResult<()> {
        self.inner.union(&other.inner).map_err(to_py)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<CountingBloomFilter>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "CountingBloomFilter(len={}, num_counters={}, num_hashes={}, \
             false_positive_rate={:.3e})",
            self.inner.len(),
            self.inner.num_counters(),
            self.inner.num_hashes(),
            self.inner.expected_false_pos()
        )
    }

    /// The filter in bloomforge's format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes from `to_bytes`, `save` or `bloomforge build --kind counting`.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py.detach(|| Rust::from_bytes(data)).map_err(format_err)?;
        // `len(f)` is at most 2**63 - 1: a larger stored key count is a corrupt header.
        if inner.len() > i64::MAX as u64 {
            return Err(crate::errors::FormatError::new_err(format!(
                "corrupt filter bytes: key count {} out of range",
                inner.len()
            )));
        }
        Ok(CountingBloomFilter { inner })
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
