//! `bloomforge.ScalableBloomFilter` and `bloomforge.StableBloomFilter`: bloomforge-stream's
//! filters for sets of unknown size and for unbounded streams.

use crate::errors::{format_err, to_py};
use crate::keys::{batch_all, batch_answers, batch_chunks, batch_map, hash_key};
use crate::shared::{read_file, reduce, write_file};
use bloomforge_stream::{
    ScalableBloomFilter as RustScalable, SliceLayout, StableBloomFilter as RustStable,
};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

/// `"blocked"` or `"standard"`.
fn layout_name(layout: SliceLayout) -> &'static str {
    match layout {
        SliceLayout::Standard => "standard",
        _ => "blocked",
    }
}

/// A Bloom filter that grows: it needs no item count, only the size of its first slice.
///
/// `ScalableBloomFilter(initial_capacity, false_positive_rate=0.01, *, growth_factor=2.0,
/// tightening_ratio=0.85, max_slices=32, layout="blocked", seed=0)`
///
/// A stack of Bloom filters (Almeida et al.): slice `i` holds `initial_capacity *
/// growth_factor**i` keys at rate `false_positive_rate * (1 - r) * r**i` (`r` the
/// tightening ratio), so the compound false-positive rate stays below
/// `false_positive_rate` however many keys are added. layout: `"blocked"` (one cache line a slice and query, the fastest) or `"standard"` (the
/// fewest bits). An add that needs more than `max_slices` slices raises `ValueError` (the
/// filter unchanged; every key added before still answers `True`).
///
/// There is no `len`: `approx_len()` counts the adds that were not reported present, an
/// estimate (a key that was a false positive when added is not counted).
#[pyclass(module = "bloomforge", name = "ScalableBloomFilter")]
#[derive(Clone)]
pub struct ScalableBloomFilter {
    inner: RustScalable,
}

#[pymethods]
impl ScalableBloomFilter {
    #[new]
    #[pyo3(signature = (
        initial_capacity,
        false_positive_rate = 0.01,
        *,
        growth_factor = 2.0,
        tightening_ratio = 0.85,
        max_slices = 32,
        layout = "blocked",
        seed = 0
    ))]
    fn new(
        initial_capacity: u64,
        false_positive_rate: f64,
        growth_factor: f64,
        tightening_ratio: f64,
        max_slices: u32,
        layout: &str,
        seed: u64,
    ) -> PyResult<Self> {
        let layout = match layout {
            "blocked" => SliceLayout::Blocked,
            "standard" => SliceLayout::Standard,
            other => {
                return Err(PyValueError::new_err(format!(
                    "layout must be 'blocked' or 'standard', not {other:?}"
                )))
            }
        };
        let inner = RustScalable::builder()
            .expected_items(initial_capacity)
            .false_pos(false_positive_rate)
            .growth_factor(growth_factor)
            .tightening_ratio(tightening_ratio)
            .max_slices(max_slices)
            .layout(layout)
            .seed(seed)
            .build()
            .map_err(to_py)?;
        Ok(ScalableBloomFilter { inner })
    }

    /// Adds one key; `ValueError` when the stack is at its slice limit (nothing changes).
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner.insert_hash(h).map(|_| ()).map_err(to_py)
    }

    /// `key in f`: `False` means never added; `True` means added, or a false positive.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.contains_hash(h))
    }

    /// Adds every key of `keys` (NumPy integer array, Arrow array, or iterable), without
    /// the GIL for arrays. When the slice limit is reached, `ValueError` naming the key
    /// that failed; the keys before it stay added (a Bloom filter cannot delete).
    fn add_many(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let hasher = *self.inner.hasher();
        let inner = &mut self.inner;
        batch_all(py, keys, &hasher, |hashes| inner.insert_hash_batch(hashes))?
            .map(|_| ())
            .map_err(to_py)
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

    /// An estimate of the distinct keys added: the adds that were not reported present
    /// (after `|`, the sum of both sides).
    fn approx_len(&self) -> f64 {
        self.inner.estimated_len()
    }

    /// The compound false-positive rate for the keys added so far (from each slice's
    /// fill).
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        self.inner.expected_false_pos()
    }

    /// The bound on the compound false-positive rate the stack was built for.
    #[getter]
    fn target_false_positive_rate(&self) -> f64 {
        self.inner.target_false_pos()
    }

    /// Number of slices.
    #[getter]
    fn num_slices(&self) -> usize {
        self.inner.num_slices()
    }

    /// Keys the present slices hold at their design rates; the next add past it adds a
    /// slice.
    #[getter]
    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }

    /// `"blocked"` or `"standard"`.
    #[getter]
    fn layout(&self) -> &'static str {
        layout_name(self.inner.layout())
    }

    /// The hash seed (filters combine only when built with the same seed).
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.hasher().seed()
    }

    /// Bytes the slices' bit arrays occupy.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bytes()
    }

    /// Fraction of the bits that are set, over all slices.
    #[getter]
    fn fill(&self) -> f64 {
        let (ones, bits) = self.inner.slices().fold((0u64, 0u64), |(o, b), s| {
            (o + s.count_ones(), b + s.num_bits())
        });
        ones as f64 / bits as f64
    }

    /// Removes every key and every slice but the first.
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

    /// `f | g`: a filter of the keys of both (built with the same parameters and seed,
    /// else `ValueError` naming the one that differs).
    fn __or__(&self, other: &ScalableBloomFilter) -> PyResult<Self> {
        let mut out = self.clone();
        out.inner.union(&other.inner).map_err(to_py)?;
        Ok(out)
    }

    /// `f |= g`: adds the keys of `g` (as `|`).
    fn __ior__(&mut self, other: &ScalableBloomFilter) -> PyResult<()> {
        self.inner.union(&other.inner).map_err(to_py)
    }

    /// `f == g`: the same parameters, slices and bits.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<ScalableBloomFilter>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "ScalableBloomFilter(layout={:?}, num_slices={}, size_in_bytes={}, fill={:.4}, \
             approx_len={:.0}, false_positive_rate={:.3e})",
            self.layout(),
            self.inner.num_slices(),
            self.inner.memory_bytes(),
            self.fill(),
            self.inner.estimated_len(),
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
        let inner = py
            .detach(|| RustScalable::from_bytes(data))
            .map_err(format_err)?;
        Ok(ScalableBloomFilter { inner })
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

/// A stable Bloom filter: "seen recently?" over an unbounded stream, in fixed memory.
///
/// `StableBloomFilter(cells, false_positive_rate=0.01, *, cell_bits=3, seed=0, rng_seed=0)`
///
/// `cells` counters of `cell_bits` bits (1 to 8; `cells * cell_bits / 8` bytes). Each add
/// first decrements a few random cells, then sets the key's cells to their maximum; a key
/// is present while all its cells are non-zero. The fill converges to a stable point, so
/// the false-positive rate stays at about `false_positive_rate` however long the stream.
/// Old keys are forgotten: a key added more than about `cells * (2**cell_bits - 1) /
/// decrements` adds ago mostly answers `False`, unlike in any other Bloom filter. More bits
/// a cell remember longer.
///
/// `check_and_add(key)` is the duplicate test of a stream: whether the key was seen
/// recently, then adds it. The decremented cells come from a generator seeded by
/// `rng_seed`: the same seeds and keys give the same filter.
#[pyclass(module = "bloomforge", name = "StableBloomFilter")]
#[derive(Clone)]
pub struct StableBloomFilter {
    inner: RustStable,
}

#[pymethods]
impl StableBloomFilter {
    #[new]
    #[pyo3(signature = (cells, false_positive_rate = 0.01, *, cell_bits = 3, seed = 0, rng_seed = 0))]
    fn new(
        cells: u64,
        false_positive_rate: f64,
        cell_bits: u32,
        seed: u64,
        rng_seed: u64,
    ) -> PyResult<Self> {
        let inner = RustStable::builder()
            .cells(cells)
            .cell_bits(cell_bits)
            .false_pos(false_positive_rate)
            .seed(seed)
            .rng_seed(rng_seed)
            .build()
            .map_err(to_py)?;
        Ok(StableBloomFilter { inner })
    }

    /// Adds one key (decrements a few cells, then sets the key's).
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner.insert_hash(h);
        Ok(())
    }

    /// Whether `key` was seen recently (as `key in f`), then adds it.
    fn check_and_add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.check_and_insert_hash(h))
    }

    /// `key in f`: whether `key` may have been added recently (`False`: never added, or
    /// forgotten).
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.contains_hash(h))
    }

    /// Adds every key of `keys` in order (NumPy integer array, Arrow array, or
    /// iterable), without the GIL for arrays.
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

    /// `check_and_add` of every key in order; `numpy.ndarray[bool]`: whether each was
    /// seen recently (a key repeated in the batch is seen at its second occurrence).
    fn check_and_add_many<'py>(
        &mut self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let hasher = *self.inner.hasher();
        let inner = &mut self.inner;
        batch_answers(py, keys, &hasher, |h, o| {
            inner
                .check_and_insert_hash_batch(h, o)
                .expect("equal lengths");
        })
    }

    /// `numpy.ndarray[bool]`: whether each key may have been added recently.
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let hasher = *self.inner.hasher();
        batch_map(py, keys, &hasher, |x| self.inner.contains_hash(x))
    }

    /// An estimate of the distinct keys the filter still remembers (from the non-zero
    /// cells; an upper estimate: decayed cells of old keys count). Costs a pass over the
    /// cells.
    fn approx_len(&self) -> f64 {
        self.inner.estimated_len()
    }

    /// Adds so far (repeats included).
    #[getter]
    fn inserts(&self) -> u64 {
        self.inner.inserts()
    }

    /// The false-positive rate for the current cells (costs a pass over the cells).
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        self.inner.expected_false_pos()
    }

    /// The false-positive rate at the stable point (where a long stream takes the fill).
    #[getter]
    fn stable_false_positive_rate(&self) -> f64 {
        self.inner.stable_false_pos()
    }

    /// Number of cells.
    #[getter]
    fn cells(&self) -> u64 {
        self.inner.cells()
    }

    /// Bits per cell.
    #[getter]
    fn cell_bits(&self) -> u32 {
        self.inner.cell_bits()
    }

    /// Cells per key.
    #[getter]
    fn num_hashes(&self) -> u32 {
        self.inner.num_hashes()
    }

    /// Cells decremented per add.
    #[getter]
    fn decrements(&self) -> u64 {
        self.inner.decrements()
    }

    /// The hash seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.hasher().seed()
    }

    /// Bytes the cells occupy.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bytes()
    }

    /// Fraction of the cells that are non-zero (costs a pass over the cells).
    #[getter]
    fn fill(&self) -> f64 {
        1.0 - self.inner.zero_cells() as f64 / self.inner.cells() as f64
    }

    /// Sets every cell to zero.
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

    /// `f == g`: the same parameters, cells and generator state.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<StableBloomFilter>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "StableBloomFilter(cells={}, cell_bits={}, num_hashes={}, fill={:.4}, \
             inserts={}, false_positive_rate={:.3e})",
            self.inner.cells(),
            self.inner.cell_bits(),
            self.inner.num_hashes(),
            self.fill(),
            self.inner.inserts(),
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
        let inner = py
            .detach(|| RustStable::from_bytes(data))
            .map_err(format_err)?;
        Ok(StableBloomFilter { inner })
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
const _: () = assert!(std::mem::align_of::<ScalableBloomFilter>() <= 16);
const _: () = assert!(std::mem::align_of::<StableBloomFilter>() <= 16);
