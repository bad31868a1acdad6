//! `bloomforge.BloomFilter`: the split-block, blocked and standard Bloom filters of
//! bloomforge-core behind one Python class, chosen by `kind`.

use crate::errors::{format_err, to_py};
use crate::keys::{hash_key, Batch, Data, CHUNK};
use crate::shared::{on_threads, read_file, reduce, write_file, PARALLEL_FROM};
use bloomforge_core::format::{FilterKind, Header};
use bloomforge_core::{
    BlockedBloomFilter, DefaultHasher, SplitBlockBloomFilter, StandardBloomFilter,
};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView, PyType};
use rayon::prelude::*;

#[derive(Clone, PartialEq)]
enum Inner {
    Split(SplitBlockBloomFilter),
    Blocked(BlockedBloomFilter),
    Standard(StandardBloomFilter),
}

/// Runs `$body` with `$f` bound to the filter inside `$inner`, whatever its kind.
macro_rules! each {
    ($inner:expr, $f:ident => $body:expr) => {
        match $inner {
            Inner::Split($f) => $body,
            Inner::Blocked($f) => $body,
            Inner::Standard($f) => $body,
        }
    };
}

impl Inner {
    fn kind(&self) -> &'static str {
        match self {
            Inner::Split(_) => "split-block",
            Inner::Blocked(_) => "blocked",
            Inner::Standard(_) => "standard",
        }
    }

    fn hasher(&self) -> DefaultHasher {
        each!(self, f => *f.hasher())
    }

    fn insert_hashes(&mut self, hashes: &[u64], parallel: bool) {
        match self {
            Inner::Split(f) if parallel => f.par_insert_hash_batch(hashes),
            Inner::Blocked(f) if parallel => f.par_insert_hash_batch(hashes),
            _ => each!(self, f => f.insert_hash_batch(hashes)),
        }
    }

    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        // Lengths are equal by construction; the result cannot be an error.
        each!(self, f => f.contains_hash_batch(hashes, out)).expect("equal lengths");
    }

    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let header = Header::parse(bytes).map_err(format_err)?;
        Ok(match header.kind {
            FilterKind::SplitBlock256 => {
                Inner::Split(SplitBlockBloomFilter::from_bytes(bytes).map_err(format_err)?)
            }
            FilterKind::Blocked512 => {
                Inner::Blocked(BlockedBloomFilter::from_bytes(bytes).map_err(format_err)?)
            }
            FilterKind::Standard => {
                Inner::Standard(StandardBloomFilter::from_bytes(bytes).map_err(format_err)?)
            }
            other => {
                return Err(crate::errors::FormatError::new_err(format!(
                    "the bytes hold a {other:?} filter, not a Bloom filter: load it with its \
                     own class"
                )))
            }
        })
    }
}

/// A Bloom filter: `add` keys, then `key in f` is `True` for every key added and, for a
/// key never added, `False` except with probability about `false_positive_rate`.
///
/// `BloomFilter(expected_items, false_positive_rate=0.01, *, kind="split-block", seed=0)`
///
/// kind: `"split-block"` (Parquet's layout, the fastest), `"blocked"` (512-bit blocks,
/// fewer bits at the same rate) or `"standard"` (the textbook filter, fewest bits, one
/// cache miss per probe). Each is sized for `false_positive_rate` at `expected_items` keys
/// by its own formula.
///
/// Keys are `str` (hashed as its UTF-8 bytes, as the command line hashes a line), `bytes`,
/// or `int` (as the 64-bit integer of that value). Batches (`add_many`, `contains_many`)
/// take NumPy integer arrays, Arrow arrays (pyarrow, Polars, pandas with Arrow dtypes) or
/// any iterable of keys, and run without the GIL.
#[pyclass(module = "bloomforge", name = "BloomFilter")]
#[derive(Clone)]
pub struct BloomFilter {
    inner: Inner,
}

impl BloomFilter {
    /// A split-block filter as a `BloomFilter` (`AtomicBloomFilter.to_bloom_filter`).
    pub(crate) fn from_split_block(f: SplitBlockBloomFilter) -> Self {
        BloomFilter {
            inner: Inner::Split(f),
        }
    }

    /// A blocked filter as a `BloomFilter`.
    pub(crate) fn from_blocked(f: BlockedBloomFilter) -> Self {
        BloomFilter {
            inner: Inner::Blocked(f),
        }
    }

    /// A standard filter as a `BloomFilter`.
    pub(crate) fn from_standard(f: StandardBloomFilter) -> Self {
        BloomFilter {
            inner: Inner::Standard(f),
        }
    }

    fn batch_hashes(&self, data: &Data<'_>, n: usize) -> Vec<u64> {
        let hasher = self.inner.hasher();
        let mut hashes = Vec::with_capacity(n);
        data.for_each_chunk(&hasher, |h| hashes.extend_from_slice(h));
        hashes
    }

    fn check_compatible(&self, other: &BloomFilter) -> PyResult<()> {
        if self.inner.kind() != other.inner.kind() {
            return Err(PyValueError::new_err(format!(
                "cannot combine filters: kind differs ({} vs {}); build both with the same kind, \
                 size and seed",
                self.inner.kind(),
                other.inner.kind()
            )));
        }
        Ok(())
    }

    fn combine(&mut self, other: &BloomFilter, union: bool) -> PyResult<()> {
        self.check_compatible(other)?;
        let r = match (&mut self.inner, &other.inner) {
            (Inner::Split(a), Inner::Split(b)) if union => a.union(b),
            (Inner::Split(a), Inner::Split(b)) => a.intersect(b),
            (Inner::Blocked(a), Inner::Blocked(b)) if union => a.union(b),
            (Inner::Blocked(a), Inner::Blocked(b)) => a.intersect(b),
            (Inner::Standard(a), Inner::Standard(b)) if union => a.union(b),
            (Inner::Standard(a), Inner::Standard(b)) => a.intersect(b),
            _ => unreachable!("kinds checked"),
        };
        r.map_err(to_py)
    }
}

#[pymethods]
impl BloomFilter {
    #[new]
    #[pyo3(signature = (expected_items, false_positive_rate = 0.01, *, kind = "split-block", seed = 0))]
    fn new(expected_items: u64, false_positive_rate: f64, kind: &str, seed: u64) -> PyResult<Self> {
        let inner = match kind {
            "split-block" | "split" => Inner::Split(
                SplitBlockBloomFilter::builder()
                    .expected_items(expected_items)
                    .false_pos(false_positive_rate)
                    .seed(seed)
                    .build()
                    .map_err(to_py)?,
            ),
            "blocked" => Inner::Blocked(
                BlockedBloomFilter::builder()
                    .expected_items(expected_items)
                    .false_pos(false_positive_rate)
                    .seed(seed)
                    .build()
                    .map_err(to_py)?,
            ),
            "standard" => Inner::Standard(
                StandardBloomFilter::builder()
                    .expected_items(expected_items)
                    .false_pos(false_positive_rate)
                    .seed(seed)
                    .build()
                    .map_err(to_py)?,
            ),
            other => {
                return Err(PyValueError::new_err(format!(
                    "kind must be 'split-block', 'blocked' or 'standard', not {other:?}"
                )))
            }
        };
        Ok(BloomFilter { inner })
    }

    /// Adds one key.
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(&self.inner.hasher(), key)?;
        each!(&mut self.inner, f => { f.insert_hash(h); });
        Ok(())
    }

    /// `key in f`: `False` means never added; `True` means added, or a false positive.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(&self.inner.hasher(), key)?;
        Ok(each!(&self.inner, f => f.contains_hash(h)))
    }

    /// Adds every key of `keys` (a NumPy integer array, an Arrow array or chunked array,
    /// or any iterable of keys), without the GIL for arrays. `threads`: for a million keys
    /// or more, `threads=t` (t > 1) inserts on `t` threads. The default is the pipelined
    /// single-thread insert, which measured faster than two threads (2.4 against 15 ns a
    /// key for 10M keys, docs/python.md). The bits do not depend on it.
    #[pyo3(signature = (keys, *, threads = None))]
    fn add_many(
        &mut self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<()> {
        let batch = Batch::read(keys, &self.inner.hasher())?;
        let n = batch.len();
        let data = batch.data()?;
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let parallel = n >= PARALLEL_FROM && threads.is_some_and(|t| t > 1);
        let this = &mut *self;
        py.detach(|| {
            if parallel {
                let hashes = this.batch_hashes(&data, n);
                on_threads(threads, || this.inner.insert_hashes(&hashes, true))
            } else {
                let hasher = this.inner.hasher();
                data.for_each_chunk(&hasher, |h| this.inner.insert_hashes(h, false));
                Ok(())
            }
        })
    }

    /// Adds every key of an iterable (as `add_many`; the `set.update` spelling).
    fn update(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        self.add_many(py, keys, None)
    }

    /// `numpy.ndarray[bool]`: for each key of `keys` (as `add_many` takes them), whether it
    /// may be in the filter.
    #[pyo3(signature = (keys, *, threads = None))]
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let batch = Batch::read(keys, &self.inner.hasher())?;
        let n = batch.len();
        let data = batch.data()?;
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let parallel = n >= PARALLEL_FROM && threads != Some(1);
        let out = py.detach(|| -> PyResult<Vec<bool>> {
            let mut out = vec![false; n];
            if parallel {
                let hashes = self.batch_hashes(&data, n);
                on_threads(threads, || {
                    out.par_chunks_mut(CHUNK)
                        .zip(hashes.par_chunks(CHUNK))
                        .for_each(|(o, h)| self.inner.contains_hashes(h, o))
                })?;
            } else {
                let hasher = self.inner.hasher();
                let mut at = 0;
                data.for_each_chunk(&hasher, |h| {
                    self.inner.contains_hashes(h, &mut out[at..at + h.len()]);
                    at += h.len();
                });
            }
            Ok(out)
        })?;
        Ok(out.into_pyarray(py))
    }

    /// An estimate of the distinct keys added (from the bits set; a Bloom filter keeps no
    /// exact count).
    fn approx_len(&self) -> f64 {
        each!(&self.inner, f => f.estimated_len())
    }

    /// The false-positive rate for the keys added so far (the layout's own theory).
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        each!(&self.inner, f => f.expected_false_pos())
    }

    /// `"split-block"`, `"blocked"` or `"standard"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    /// Bits in the filter.
    #[getter]
    fn num_bits(&self) -> u64 {
        each!(&self.inner, f => f.num_bits())
    }

    /// Probes (bits set) per key.
    #[getter]
    fn num_hashes(&self) -> u32 {
        each!(&self.inner, f => f.num_hashes())
    }

    /// The hash seed (filters combine only when built with the same seed).
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.hasher().seed()
    }

    /// Bytes the bit array occupies.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.num_bits() / 8
    }

    /// Fraction of the bits that are set.
    #[getter]
    fn fill(&self) -> f64 {
        let ones = each!(&self.inner, f => f.count_ones());
        ones as f64 / self.num_bits() as f64
    }

    /// Clears every bit.
    fn clear(&mut self) {
        each!(&mut self.inner, f => f.clear())
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

    /// `f | g`: a filter of the keys of both (same kind, size and seed, else `ValueError`).
    fn __or__(&self, other: &BloomFilter) -> PyResult<Self> {
        let mut out = self.clone();
        out.combine(other, true)?;
        Ok(out)
    }

    /// `f & g`: keys in both, as far as a filter can tell (its FP is at most either's).
    fn __and__(&self, other: &BloomFilter) -> PyResult<Self> {
        let mut out = self.clone();
        out.combine(other, false)?;
        Ok(out)
    }

    fn __ior__(&mut self, other: &BloomFilter) -> PyResult<()> {
        self.combine(other, true)
    }

    fn __iand__(&mut self, other: &BloomFilter) -> PyResult<()> {
        self.combine(other, false)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<BloomFilter>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "BloomFilter(kind={:?}, num_bits={}, num_hashes={}, fill={:.4}, \
             approx_len={:.0}, false_positive_rate={:.3e})",
            self.inner.kind(),
            self.num_bits(),
            self.num_hashes(),
            self.fill(),
            self.approx_len(),
            self.false_positive_rate()
        )
    }

    /// A read-only `memoryview` of the bit array as it is now: the filter's words in
    /// little-endian order, the payload of `to_bytes` after its 64-byte header (see
    /// docs/format.md for each kind's layout). It is a snapshot: later adds do not show.
    fn bits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMemoryView>> {
        let bytes = py.detach(|| each!(&self.inner, f => f.to_bytes()));
        let payload = PyBytes::new(py, &bytes[bloomforge_core::format::HEADER_LEN..]);
        PyMemoryView::from(payload.as_any())
    }

    /// The filter in bloomforge's format (the bytes `bloomforge build` writes).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| each!(&self.inner, f => f.to_bytes()));
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes from `to_bytes`, `save` or `bloomforge build` (any of the three kinds).
    /// Raises `bloomforge.FormatError` for anything else.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py.detach(|| Inner::from_bytes(data))?;
        Ok(BloomFilter { inner })
    }

    /// Writes the filter to `path` (bloomforge's format).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = py.detach(|| each!(&self.inner, f => f.to_bytes()));
        write_file(&path, &bytes)
    }

    /// Reads a filter file written by `save`, Rust or `bloomforge build`.
    #[classmethod]
    fn load(_cls: &Bound<'_, PyType>, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes = read_file(&path)?;
        let inner = py.detach(|| Inner::from_bytes(&bytes))?;
        Ok(BloomFilter { inner })
    }

    /// Pickling: the filter's bytes.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any())
    }
}
