//! `bloomforge.DLeftCountingBloomFilter`: bloomforge-dleft's d-left counting Bloom filter,
//! which deletes and counts in about half the space of a counting Bloom filter.

use crate::errors::{format_err, to_py};
use crate::keys::{batch_all, batch_answers, batch_map, hash_key};
use crate::shared::{read_file, reduce, write_file};
use bloomforge_core::RemoveOutcome;
use bloomforge_dleft::{DLeftCountingBloomFilter as Rust, DLeftError};
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

/// A d-left counting Bloom filter: `add`, `remove` and `count` keys, with an exact `len`.
///
/// `DLeftCountingBloomFilter(expected_items, false_positive_rate=0.01, *, counter_bits=4,
/// seed=0)`: 4 subtables of 8-cell buckets, each cell a fingerprint remainder and a
/// `counter_bits`-bit counter (1 to 8), sized for `expected_items` keys at
/// `false_positive_rate`.
///
/// An add fails with `ValueError` (the filter unchanged) when all the key's candidate
/// buckets are full: the filter holds more keys than it was sized for. A counter that
/// reaches `2**counter_bits - 1` saturates and stays (the key may stay present after its
/// removes); `count` is then a lower bound. Removing a key that was never added raises
/// `KeyError` (nothing changes) unless its fingerprint collides with a stored key's, which
/// it would then remove: remove only what you added.
#[pyclass(module = "bloomforge", name = "DLeftCountingBloomFilter")]
#[derive(Clone)]
pub struct DLeftCountingBloomFilter {
    // Boxed: the filter is aligned to 32 bytes, more than a Python object guarantees (16).
    inner: Box<Rust>,
}

/// A failed insert or batch as a `ValueError` (the filter is unchanged).
fn insert_err(e: DLeftError) -> PyErr {
    match e {
        DLeftError::BucketFull | DLeftError::BatchFailed { .. } => {
            PyValueError::new_err(e.to_string())
        }
        e => to_py(e),
    }
}

#[pymethods]
impl DLeftCountingBloomFilter {
    #[new]
    #[pyo3(signature = (expected_items, false_positive_rate = 0.01, *, counter_bits = 4, seed = 0))]
    fn new(
        expected_items: u64,
        false_positive_rate: f64,
        counter_bits: u32,
        seed: u64,
    ) -> PyResult<Self> {
        let inner = Rust::builder()
            .expected_items(expected_items)
            .false_pos(false_positive_rate)
            .counter_bits(counter_bits)
            .seed(seed)
            .build()
            .map_err(to_py)?;
        Ok(DLeftCountingBloomFilter {
            inner: Box::new(inner),
        })
    }

    /// Adds one key (once more, if already there); `ValueError` when its buckets are full
    /// (nothing changes).
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner.insert_hash(h).map(|_| ()).map_err(insert_err)
    }

    /// Removes one occurrence of `key`. Returns `"removed"`, or `"saturated"` when its
    /// saturated counter was left as it is (the key stays present). Raises `KeyError` when
    /// the key is not in the filter (nothing changes).
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let h = hash_key(self.inner.hasher(), key)?;
        match self.inner.remove_hash(h) {
            Ok(RemoveOutcome::Removed) => Ok("removed"),
            Ok(RemoveOutcome::Saturated) => Ok("saturated"),
            Err(DLeftError::NotPresent) => Err(PyKeyError::new_err(key.clone().unbind())),
            Err(e) => Err(to_py(e)),
        }
    }

    /// `True` when `key` was in the filter and one occurrence is now removed; `False`
    /// (nothing changes) when it was not.
    fn discard(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        match self.inner.remove_hash(h) {
            Ok(_) => Ok(true),
            Err(DLeftError::NotPresent) => Ok(false),
            Err(e) => Err(to_py(e)),
        }
    }

    /// How many times `key` was added and not removed: exact unless another key shares its
    /// fingerprint (then more), a lower bound where the counter saturated.
    fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.count_hash(h).get())
    }

    /// `key in f`: `False` means not in the filter; `True` means added, or a false
    /// positive.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.contains_hash(h))
    }

    /// Adds every key of `keys` (NumPy integer array, Arrow array, or iterable), without
    /// the GIL for arrays. All or nothing: when some key finds its buckets full,
    /// `ValueError` and the filter is as before the call.
    fn add_many(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let hasher = *self.inner.hasher();
        let inner = &mut self.inner;
        batch_all(py, keys, &hasher, |hashes| inner.insert_hash_batch(hashes))?.map_err(insert_err)
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
        // Counters have at most 8 bits: every count fits a byte.
        batch_map(py, keys, &hasher, |x| self.inner.count_hash(x).get() as u8)
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

    /// The false-positive rate of the current contents (exact: stored fingerprints over
    /// possible ones).
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        self.inner.expected_false_pos()
    }

    /// Bytes the table occupies.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bits() / 8
    }

    /// Fraction of the cells in use.
    #[getter]
    fn fill(&self) -> f64 {
        self.inner.occupied_cells() as f64 / self.inner.total_cells() as f64
    }

    /// Cells in use: the distinct fingerprints stored.
    #[getter]
    fn occupied_cells(&self) -> u64 {
        self.inner.occupied_cells()
    }

    /// Cells in all (subtables x buckets x cells per bucket).
    #[getter]
    fn total_cells(&self) -> u64 {
        self.inner.total_cells()
    }

    /// Bits of each cell's counter.
    #[getter]
    fn counter_bits(&self) -> u32 {
        self.inner.counter_bits()
    }

    /// Bits of each cell's fingerprint remainder.
    #[getter]
    fn remainder_bits(&self) -> u32 {
        self.inner.remainder_bits()
    }

    /// The hash seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed()
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

    /// `f == g`: the same parameters and cells.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<DLeftCountingBloomFilter>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "DLeftCountingBloomFilter(len={}, total_cells={}, fill={:.4}, \
             false_positive_rate={:.3e})",
            self.inner.len(),
            self.inner.total_cells(),
            self.fill(),
            self.inner.expected_false_pos()
        )
    }

    /// The filter in bloomforge's format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes from `to_bytes` or `save`; `bloomforge.FormatError` for anything else.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py.detach(|| Rust::from_bytes(data)).map_err(format_err)?;
        Ok(DLeftCountingBloomFilter {
            inner: Box::new(inner),
        })
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

// A Python object holds the struct at a 16-byte boundary: nothing inside may need more.
const _: () = assert!(std::mem::align_of::<DLeftCountingBloomFilter>() <= 16);
