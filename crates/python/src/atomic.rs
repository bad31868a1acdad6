//! `bloomforge.AtomicBloomFilter`: bloomforge-core's atomic Bloom filters (split-block,
//! blocked, standard), whose inserts take a shared reference: many Python threads add
//! into one filter at once, each batch without the GIL.

use crate::bloom::BloomFilter;
use crate::errors::{format_err, to_py, FormatError};
use crate::keys::{hash_key, Batch, Data, CHUNK};
use crate::shared::{on_threads, read_file, reduce, write_file, PARALLEL_FROM};
use bloomforge_core::format::{FilterKind, Header};
use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter,
    BlockedBloomFilter, DefaultHasher, SplitBlockBloomFilter, StandardBloomFilter,
};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};
use rayon::prelude::*;

#[derive(Clone)]
enum Inner {
    Split(AtomicSplitBlockBloomFilter),
    Blocked(AtomicBlockedBloomFilter),
    Standard(AtomicStandardBloomFilter),
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

    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        // Lengths are equal by construction; the result cannot be an error.
        each!(self, f => f.contains_hash_batch(hashes, out)).expect("equal lengths");
    }

    /// The bits now, in bloomforge's format (from a copy: inserts running meanwhile may or
    /// may not be in it, but the bytes are always a whole filter).
    fn to_bytes(&self) -> Vec<u8> {
        each!(self, f => f.snapshot().to_bytes())
    }

    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let header = Header::parse(bytes).map_err(format_err)?;
        Ok(match header.kind {
            FilterKind::SplitBlock256 => Inner::Split(
                SplitBlockBloomFilter::from_bytes(bytes)
                    .map_err(format_err)?
                    .into(),
            ),
            FilterKind::Blocked512 => Inner::Blocked(
                BlockedBloomFilter::from_bytes(bytes)
                    .map_err(format_err)?
                    .into(),
            ),
            FilterKind::Standard => Inner::Standard(
                StandardBloomFilter::from_bytes(bytes)
                    .map_err(format_err)?
                    .into(),
            ),
            other => {
                return Err(FormatError::new_err(format!(
                    "the bytes hold a {other:?} filter, not a Bloom filter: load it with its \
                     own class"
                )))
            }
        })
    }
}

/// A Bloom filter that many threads add into at once: `add` and `add_many` take no lock,
/// and `add_many` runs without the GIL, so Python threads (a `ThreadPoolExecutor`) fill
/// one filter in parallel.
///
/// `AtomicBloomFilter(expected_items, false_positive_rate=0.01, *, kind="split-block",
/// seed=0)`: the same kinds, sizes and bits as `BloomFilter` (its words are atomic).
/// A query sees every add that finished before it started. `to_bloom_filter()` gives a
/// `BloomFilter` with the same bits (to combine with `|` and `&`), and the bytes are
/// `BloomFilter`'s: each reads the other's.
///
/// `clear()` needs the filter to itself: it raises `RuntimeError` while another thread is
/// inside a call on it.
#[pyclass(module = "bloomforge", name = "AtomicBloomFilter")]
#[derive(Clone)]
pub struct AtomicBloomFilter {
    inner: Inner,
}

impl AtomicBloomFilter {
    fn insert_chunked(&self, data: &Data<'_>, n: usize, threads: Option<usize>) -> PyResult<()> {
        let hasher = self.inner.hasher();
        if n >= PARALLEL_FROM && threads != Some(1) {
            let mut hashes = Vec::with_capacity(n);
            data.for_each_chunk(&hasher, |h| hashes.extend_from_slice(h));
            on_threads(threads, || {
                hashes
                    .par_chunks(CHUNK)
                    .for_each(|h| each!(&self.inner, f => f.insert_hash_batch(h)))
            })
        } else {
            data.for_each_chunk(&hasher, |h| each!(&self.inner, f => f.insert_hash_batch(h)));
            Ok(())
        }
    }
}

#[pymethods]
impl AtomicBloomFilter {
    #[new]
    #[pyo3(signature = (expected_items, false_positive_rate = 0.01, *, kind = "split-block", seed = 0))]
    fn new(expected_items: u64, false_positive_rate: f64, kind: &str, seed: u64) -> PyResult<Self> {
        let inner = match kind {
            "split-block" | "split" => Inner::Split(
                AtomicSplitBlockBloomFilter::builder()
                    .expected_items(expected_items)
                    .false_pos(false_positive_rate)
                    .seed(seed)
                    .build()
                    .map_err(to_py)?,
            ),
            "blocked" => Inner::Blocked(
                AtomicBlockedBloomFilter::builder()
                    .expected_items(expected_items)
                    .false_pos(false_positive_rate)
                    .seed(seed)
                    .build()
                    .map_err(to_py)?,
            ),
            "standard" => Inner::Standard(
                AtomicStandardBloomFilter::builder()
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
        Ok(AtomicBloomFilter { inner })
    }

    /// Adds one key (safe from any number of threads at once).
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = hash_key(&self.inner.hasher(), key)?;
        each!(&self.inner, f => { f.insert_hash(h); });
        Ok(())
    }

    /// `key in f`: `False` means never added (by an add that finished before this call);
    /// `True` means added, or a false positive.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(&self.inner.hasher(), key)?;
        Ok(each!(&self.inner, f => f.contains_hash(h)))
    }

    /// Adds every key of `keys` (a NumPy integer array, an Arrow array or chunked array,
    /// or any iterable of keys) without the GIL for arrays; other threads may add at the
    /// same time. `threads`: for a million keys or more the insert runs on this many
    /// threads (default: every core); the bits do not depend on it.
    #[pyo3(signature = (keys, *, threads = None))]
    fn add_many(
        &self,
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
        py.detach(|| self.insert_chunked(&data, n, threads))
    }

    /// Adds every key of an iterable (as `add_many`).
    fn update(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
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
        let hasher = self.inner.hasher();
        let batch = Batch::read(keys, &hasher)?;
        let n = batch.len();
        let data = batch.data()?;
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let parallel = n >= PARALLEL_FROM && threads != Some(1);
        let out = py.detach(|| -> PyResult<Vec<bool>> {
            let mut out = vec![false; n];
            if parallel {
                let mut hashes = Vec::with_capacity(n);
                data.for_each_chunk(&hasher, |h| hashes.extend_from_slice(h));
                on_threads(threads, || {
                    out.par_chunks_mut(CHUNK)
                        .zip(hashes.par_chunks(CHUNK))
                        .for_each(|(o, h)| self.inner.contains_hashes(h, o))
                })?;
            } else {
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

    /// An estimate of the distinct keys added (from the bits set).
    fn approx_len(&self) -> f64 {
        each!(&self.inner, f => f.estimated_len())
    }

    /// The false-positive rate for the keys added so far.
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

    /// The hash seed.
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

    /// Clears every bit (`RuntimeError` while another thread is inside a call on the
    /// filter).
    fn clear(&mut self) {
        self.inner = match &self.inner {
            Inner::Split(f) => Inner::Split({
                let mut p = f.snapshot();
                p.clear();
                p.into()
            }),
            Inner::Blocked(f) => Inner::Blocked({
                let mut p = f.snapshot();
                p.clear();
                p.into()
            }),
            Inner::Standard(f) => Inner::Standard({
                let mut p = f.snapshot();
                p.clear();
                p.into()
            }),
        };
    }

    /// A `BloomFilter` with the bits now (a copy; adds running meanwhile may or may not
    /// be in it).
    fn to_bloom_filter(&self, py: Python<'_>) -> BloomFilter {
        py.detach(|| match &self.inner {
            Inner::Split(f) => BloomFilter::from_split_block(f.snapshot()),
            Inner::Blocked(f) => BloomFilter::from_blocked(f.snapshot()),
            Inner::Standard(f) => BloomFilter::from_standard(f.snapshot()),
        })
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

    /// `f == g`: the same kind, size, seed and bits.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        let Ok(o) = other.cast::<AtomicBloomFilter>() else {
            return false;
        };
        let o = o.borrow();
        match (&self.inner, &o.inner) {
            (Inner::Split(a), Inner::Split(b)) => a.snapshot() == b.snapshot(),
            (Inner::Blocked(a), Inner::Blocked(b)) => a.snapshot() == b.snapshot(),
            (Inner::Standard(a), Inner::Standard(b)) => a.snapshot() == b.snapshot(),
            _ => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "AtomicBloomFilter(kind={:?}, num_bits={}, num_hashes={}, fill={:.4}, \
             approx_len={:.0}, false_positive_rate={:.3e})",
            self.inner.kind(),
            self.num_bits(),
            self.num_hashes(),
            self.fill(),
            self.approx_len(),
            self.false_positive_rate()
        )
    }

    /// The filter in bloomforge's format (the bytes `BloomFilter.to_bytes` gives for the
    /// same bits).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes of a Bloom filter (`to_bytes`, `BloomFilter.to_bytes`, `save`,
    /// `bloomforge build`); `bloomforge.FormatError` for anything else.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py.detach(|| Inner::from_bytes(data))?;
        Ok(AtomicBloomFilter { inner })
    }

    /// Writes the filter to `path` (bloomforge's format).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = py.detach(|| self.inner.to_bytes());
        write_file(&path, &bytes)
    }

    /// Reads a Bloom filter file.
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
const _: () = assert!(std::mem::align_of::<AtomicBloomFilter>() <= 16);
