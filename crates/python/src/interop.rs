//! `bloomforge.GuavaBloomFilter` and `bloomforge.SparkBloomFilter`: bloomforge-interop's
//! filters, bit for bit those of Guava (`com.google.common.hash.BloomFilter`) and Spark
//! (`org.apache.spark.util.sketch.BloomFilter`); `to_bytes` / `from_bytes` are those
//! libraries' `writeTo` / `readFrom`. And `bloomforge.read_foreign_filter`, which tells the
//! two formats apart.
//!
//! Keys are funnelled as those systems funnel them (see [`crate::interop_keys`]), not
//! hashed as the other classes hash them: the filters hash each key with Guava's or
//! Spark's own functions.

use crate::errors::{interop_err, FormatError};
use crate::interop_keys::{with_key, ForeignBatch, Sink};
use crate::keys::CHUNK;
use crate::shared::{on_threads, read_file, reduce, write_file, PARALLEL_FROM};
use bloomforge_interop::{
    ForeignFilter, GuavaBloomFilter as RustGuava, GuavaStrategy, Key,
    SparkBloomFilter as RustSpark, SparkVersion,
};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};
use rayon::prelude::*;

/// What the two Python classes need of their Rust filter.
trait Foreign: Clone + PartialEq + Send + Sync {
    /// Adds every key (`parallel`: on rayon's current pool).
    fn insert_keys<K: Key + Sync>(&mut self, keys: &[K], parallel: bool);
    /// Answers for every key into `out` (of the same length).
    fn contains_keys<K: Key + Sync>(&self, keys: &[K], out: &mut [bool]);
}

/// Implements [`Foreign`] for a filter with the interop crate's batch methods.
macro_rules! impl_foreign {
    ($t:ty) => {
        impl Foreign for $t {
            fn insert_keys<K: Key + Sync>(&mut self, keys: &[K], parallel: bool) {
                if parallel {
                    self.par_insert_batch(keys)
                } else {
                    self.insert_batch(keys)
                }
            }

            fn contains_keys<K: Key + Sync>(&self, keys: &[K], out: &mut [bool]) {
                // Lengths are equal by construction; the result cannot be an error.
                self.contains_batch(keys, out).expect("equal lengths");
            }
        }
    };
}

impl_foreign!(RustGuava);
impl_foreign!(RustSpark);

/// Adds each chunk of keys to a filter.
struct Insert<'a, F> {
    filter: &'a mut F,
    parallel: bool,
}

impl<F: Foreign> Sink for Insert<'_, F> {
    fn keys<K: Key + Sync>(&mut self, keys: &[K]) {
        self.filter.insert_keys(keys, self.parallel);
    }
}

/// Answers each chunk of keys into consecutive slices of `out`.
struct Contains<'a, F> {
    filter: &'a F,
    out: &'a mut [bool],
    at: usize,
    parallel: bool,
}

impl<F: Foreign> Sink for Contains<'_, F> {
    fn keys<K: Key + Sync>(&mut self, keys: &[K]) {
        let out = &mut self.out[self.at..self.at + keys.len()];
        self.at += keys.len();
        if self.parallel {
            let filter = self.filter;
            out.par_chunks_mut(CHUNK)
                .zip(keys.par_chunks(CHUNK))
                .for_each(|(o, k)| filter.contains_keys(k, o));
        } else {
            self.filter.contains_keys(keys, out);
        }
    }
}

/// `add_many` of both classes: the `BloomFilter.add_many` rules (one thread by default;
/// from [`PARALLEL_FROM`] keys on, `threads=t > 1` threads).
fn add_many<F: Foreign>(
    py: Python<'_>,
    filter: &mut F,
    keys: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let batch = ForeignBatch::read(keys)?;
    let n = batch.len();
    let keys = batch.keys()?;
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let parallel = n >= PARALLEL_FROM && threads.is_some_and(|t| t > 1);
    py.detach(|| {
        if parallel {
            on_threads(threads, || {
                keys.for_each_chunk(PARALLEL_FROM, &mut Insert { filter, parallel })
            })
        } else {
            keys.for_each_chunk(CHUNK, &mut Insert { filter, parallel });
            Ok(())
        }
    })
}

/// `contains_many` of both classes: the `BloomFilter.contains_many` rules (from
/// [`PARALLEL_FROM`] keys on, every core unless `threads` says otherwise).
fn contains_many<'py, F: Foreign>(
    py: Python<'py>,
    filter: &F,
    keys: &Bound<'py, PyAny>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let batch = ForeignBatch::read(keys)?;
    let n = batch.len();
    let keys = batch.keys()?;
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let parallel = n >= PARALLEL_FROM && threads != Some(1);
    let out = py.detach(|| -> PyResult<Vec<bool>> {
        let mut out = vec![false; n];
        let mut sink = Contains {
            filter,
            out: &mut out,
            at: 0,
            parallel,
        };
        if parallel {
            on_threads(threads, || keys.for_each_chunk(PARALLEL_FROM, &mut sink))?;
        } else {
            keys.for_each_chunk(CHUNK, &mut sink);
        }
        Ok(out)
    })?;
    Ok(out.into_pyarray(py))
}

/// The error of reading `data` as `want` failed with: when the bytes are the other
/// system's filter, or bloomforge's own format, a `FormatError` that says so.
fn wrong_format(data: &[u8], want: &str, e: bloomforge_interop::Error) -> PyErr {
    if data.starts_with(b"BLMF") {
        return FormatError::new_err(format!(
            "not a {want} Bloom filter: the bytes are in bloomforge's own format; read them \
             with the class of their kind (e.g. BloomFilter.from_bytes)"
        ));
    }
    match ForeignFilter::from_bytes(data) {
        Ok(f) if !f.format().name().starts_with(want) => {
            let class = match f {
                ForeignFilter::Guava(_) => "GuavaBloomFilter",
                _ => "SparkBloomFilter",
            };
            FormatError::new_err(format!(
                "not a {want} Bloom filter: the bytes are a {} filter; read them with \
                 {class}.from_bytes or bloomforge.read_foreign_filter",
                f.format()
            ))
        }
        _ => interop_err(e),
    }
}

/// The members both classes share; `$extra` are the class's own.
macro_rules! foreign_methods {
    ($class:ident, $rust:ty, $format:literal, { $($extra:tt)* }) => {
        impl $class {
            fn decode(data: &[u8]) -> PyResult<Self> {
                <$rust>::from_bytes(data)
                    .map(|inner| $class { inner })
                    .map_err(|e| wrong_format(data, $format, e))
            }

            fn fill_ratio(&self) -> f64 {
                self.inner.count_ones() as f64 / self.inner.num_bits() as f64
            }
        }

        #[pymethods]
        impl $class {
            $($extra)*

            /// Adds one key: a `str` (its UTF-8 bytes), bytes-like (as they are) or an
            /// `int` (a Java `long`).
            fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                let inner = &mut self.inner;
                with_key(key, |k| {
                    inner.insert(&k);
                })
            }

            /// `key in f` (`mightContain`): `False` means never added; `True` means
            /// added, or a false positive.
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                with_key(key, |k| self.inner.contains(&k))
            }

            /// Adds every key of `keys` (a NumPy integer array, an Arrow array or chunked
            /// array, or any iterable of keys), without the GIL for arrays. `threads`: for
            /// a million keys or more, `threads=t` (t > 1) inserts on `t` threads; the
            /// default is one thread. The bits do not depend on it.
            #[pyo3(signature = (keys, *, threads = None))]
            fn add_many(
                &mut self,
                py: Python<'_>,
                keys: &Bound<'_, PyAny>,
                threads: Option<usize>,
            ) -> PyResult<()> {
                add_many(py, &mut self.inner, keys, threads)
            }

            /// Adds every key of an iterable (as `add_many`; the `set.update` spelling).
            fn update(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
                add_many(py, &mut self.inner, keys, None)
            }

            /// `numpy.ndarray[bool]`: for each key of `keys` (as `add_many` takes them),
            /// whether it may be in the filter. From a million keys on, on every core
            /// unless `threads` says otherwise.
            #[pyo3(signature = (keys, *, threads = None))]
            fn contains_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
                threads: Option<usize>,
            ) -> PyResult<Bound<'py, PyArray1<bool>>> {
                contains_many(py, &self.inner, keys, threads)
            }

            /// An estimate of the distinct keys added, `-m/k ln(1 - ones/m)` (Guava's
            /// `approximateElementCount` before rounding; the filter keeps no count).
            fn approx_len(&self) -> f64 {
                self.inner.estimated_len()
            }

            /// `(set bits / bits) ** num_hashes`: the false-positive rate for the keys
            /// added so far (`expectedFpp()`).
            #[getter]
            fn false_positive_rate(&self) -> f64 {
                self.inner.expected_false_pos()
            }

            /// The same as `false_positive_rate`, under the name of the other system's
            /// `expectedFpp()`.
            #[getter]
            fn expected_false_pos(&self) -> f64 {
                self.inner.expected_false_pos()
            }

            /// Bits in the filter (a multiple of 64; `bitSize()`).
            #[getter]
            fn num_bits(&self) -> u64 {
                self.inner.num_bits()
            }

            /// Probes (bits set) per key.
            #[getter]
            fn num_hashes(&self) -> u32 {
                self.inner.num_hashes()
            }

            /// Bytes the bit array occupies.
            #[getter]
            fn size_in_bytes(&self) -> u64 {
                self.inner.memory_bytes()
            }

            /// Fraction of the bits that are set.
            #[getter]
            fn fill(&self) -> f64 {
                self.fill_ratio()
            }

            /// Clears every bit.
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

            /// `f | g`: a filter of the keys of both (`putAll` / `mergeInPlace`; the same
            /// parameters, else `ValueError`).
            fn __or__(&self, other: &$class) -> PyResult<Self> {
                let mut out = self.clone();
                out.inner.union(&other.inner).map_err(interop_err)?;
                Ok(out)
            }

            /// `f & g`: keys in both, as far as a filter can tell (the same parameters,
            /// else `ValueError`).
            fn __and__(&self, other: &$class) -> PyResult<Self> {
                let mut out = self.clone();
                out.inner.intersect(&other.inner).map_err(interop_err)?;
                Ok(out)
            }

            fn __ior__(&mut self, other: &$class) -> PyResult<()> {
                self.inner.union(&other.inner).map_err(interop_err)
            }

            fn __iand__(&mut self, other: &$class) -> PyResult<()> {
                self.inner.intersect(&other.inner).map_err(interop_err)
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                match other.cast::<$class>() {
                    Ok(o) => o.borrow().inner == self.inner,
                    Err(_) => false,
                }
            }

            /// The filter in the other system's serialized form: exactly the bytes its
            /// `writeTo` writes and its `readFrom` reads.
            fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
                let bytes = py.detach(|| self.inner.to_bytes());
                PyBytes::new(py, &bytes)
            }

            /// Reads the bytes of `to_bytes`, or of the other system's `writeTo`; they
            /// must end where the filter does. Raises `bloomforge.FormatError` for
            /// anything else.
            #[classmethod]
            fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
                py.detach(|| Self::decode(data))
            }

            /// Writes `to_bytes()` to `path`.
            fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
                let bytes = py.detach(|| self.inner.to_bytes());
                write_file(&path, &bytes)
            }

            /// Reads a file written by `save` or by the other system's `writeTo`.
            #[classmethod]
            fn load(
                _cls: &Bound<'_, PyType>,
                py: Python<'_>,
                path: std::path::PathBuf,
            ) -> PyResult<Self> {
                let bytes = read_file(&path)?;
                py.detach(|| Self::decode(&bytes))
            }

            /// Pickling: the filter's bytes.
            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
                reduce(slf.as_any())
            }
        }
    };
}

/// Guava's `BloomFilter`, bit for bit: built with the same parameters and keys it has the
/// same bits, and `to_bytes` / `from_bytes` are Guava's `writeTo` / `readFrom`.
///
/// `GuavaBloomFilter(expected_items, false_positive_rate=0.03, *,
/// strategy="MURMUR128_MITZ_64")` is Java's `BloomFilter.create(funnel, expected_items,
/// false_positive_rate)` (0.03 is Guava's default rate); `strategy="MURMUR128_MITZ_32"`
/// is the strategy of Guava's filters before release 13.
///
/// Keys are funnelled as Guava's `Funnels.stringFunnel(UTF_8)` (a `str`),
/// `Funnels.byteArrayFunnel()` (`bytes`, `bytearray`, `memoryview`) and
/// `Funnels.longFunnel()` (an `int`, a Java `long`). A Guava filter is typed by its funnel:
/// query it with keys of the kind it was built from.
#[pyclass(module = "bloomforge", name = "GuavaBloomFilter")]
#[derive(Clone)]
pub struct GuavaBloomFilter {
    inner: RustGuava,
}

impl GuavaBloomFilter {
    /// The Python object of a Rust filter.
    pub(crate) fn from_rust(inner: RustGuava) -> Self {
        GuavaBloomFilter { inner }
    }
}

foreign_methods!(GuavaBloomFilter, RustGuava, "guava", {
    #[new]
    #[pyo3(signature = (expected_items, false_positive_rate = 0.03, *, strategy = "MURMUR128_MITZ_64"))]
    fn new(expected_items: u64, false_positive_rate: f64, strategy: &str) -> PyResult<Self> {
        let strategy = match strategy.to_ascii_uppercase().as_str() {
            "MURMUR128_MITZ_64" => GuavaStrategy::Murmur128Mitz64,
            "MURMUR128_MITZ_32" => GuavaStrategy::Murmur128Mitz32,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "strategy must be 'MURMUR128_MITZ_64' or 'MURMUR128_MITZ_32', not {strategy:?}"
                )))
            }
        };
        let inner = RustGuava::with_strategy(expected_items, false_positive_rate, strategy)
            .map_err(interop_err)?;
        Ok(GuavaBloomFilter { inner })
    }

    /// Guava's hashing strategy: `"MURMUR128_MITZ_64"` (what `BloomFilter.create` uses)
    /// or `"MURMUR128_MITZ_32"`.
    #[getter]
    fn strategy(&self) -> &'static str {
        self.inner.strategy().name()
    }

    fn __repr__(&self) -> String {
        format!(
            "GuavaBloomFilter(strategy={:?}, num_bits={}, num_hashes={}, fill={:.4}, \
             approx_len={:.0}, false_positive_rate={:.3e})",
            self.inner.strategy().name(),
            self.inner.num_bits(),
            self.inner.num_hashes(),
            self.fill_ratio(),
            self.inner.estimated_len(),
            self.inner.expected_false_pos()
        )
    }
});

/// Spark's `BloomFilter` (`org.apache.spark.util.sketch`), versions 1 and 2, bit for bit:
/// built with the same parameters and keys it has the same bits, and `to_bytes` /
/// `from_bytes` are Spark's `writeTo` / `BloomFilter.readFrom`, so a filter from
/// `df.stat.bloomFilter` can be probed here and one built here handed to Spark.
///
/// `SparkBloomFilter(expected_items, false_positive_rate=0.03, *, version=2, seed=0)` is
/// Spark's `BloomFilter.create(expected_items, false_positive_rate)` (version 2, the
/// default since Spark 4.1; 0.03 is `df.stat.bloomFilter`'s usual rate); `version=1` is
/// the format of earlier Spark releases, which has no seed.
///
/// Keys are put as Spark's `putString` (a `str`, its UTF-8 bytes), `putBinary` (`bytes`,
/// `bytearray`, `memoryview`) and `putLong` (an `int`, a Java `long`; Spark puts `Int`,
/// `Short` and `Byte` values as longs too).
#[pyclass(module = "bloomforge", name = "SparkBloomFilter")]
#[derive(Clone)]
pub struct SparkBloomFilter {
    inner: RustSpark,
}

impl SparkBloomFilter {
    /// The Python object of a Rust filter.
    pub(crate) fn from_rust(inner: RustSpark) -> Self {
        SparkBloomFilter { inner }
    }
}

foreign_methods!(SparkBloomFilter, RustSpark, "spark", {
    #[new]
    #[pyo3(signature = (expected_items, false_positive_rate = 0.03, *, version = 2, seed = 0))]
    fn new(
        expected_items: u64,
        false_positive_rate: f64,
        version: i64,
        seed: i64,
    ) -> PyResult<Self> {
        let version = match version {
            1 => SparkVersion::V1,
            2 => SparkVersion::V2,
            v => {
                return Err(PyValueError::new_err(format!(
                    "version must be 1 or 2, not {v}"
                )))
            }
        };
        let seed = i32::try_from(seed).map_err(|_| {
            PyValueError::new_err(format!(
                "seed {seed} is not a Java int (-2**31 <= seed < 2**31)"
            ))
        })?;
        if version == SparkVersion::V1 && seed != 0 {
            return Err(PyValueError::new_err(
                "version 1 filters have no seed: pass seed=0, or version=2",
            ));
        }
        let inner = RustSpark::with_version(version, expected_items, false_positive_rate, seed)
            .map_err(interop_err)?;
        Ok(SparkBloomFilter { inner })
    }

    /// The serialized version: 1 or 2.
    #[getter]
    fn version(&self) -> i32 {
        self.inner.version().number()
    }

    /// The hash seed (a Java `int`; 0 for version 1). Filters combine only when their
    /// seeds are equal.
    #[getter]
    fn seed(&self) -> i32 {
        self.inner.seed()
    }

    fn __repr__(&self) -> String {
        format!(
            "SparkBloomFilter(version={}, seed={}, num_bits={}, num_hashes={}, fill={:.4}, \
             approx_len={:.0}, false_positive_rate={:.3e})",
            self.inner.version().number(),
            self.inner.seed(),
            self.inner.num_bits(),
            self.inner.num_hashes(),
            self.fill_ratio(),
            self.inner.estimated_len(),
            self.inner.expected_false_pos()
        )
    }
});

/// `read_foreign_filter(data)`: a Guava or Spark filter's bytes (their `writeTo`), told
/// apart by their first bytes, as a `GuavaBloomFilter` or a `SparkBloomFilter`. Raises
/// `bloomforge.FormatError` for anything else.
#[pyfunction]
pub fn read_foreign_filter(py: Python<'_>, data: &[u8]) -> PyResult<Py<PyAny>> {
    let filter = py.detach(|| ForeignFilter::from_bytes(data));
    let filter = match filter {
        Ok(f) => f,
        Err(_) if data.starts_with(b"BLMF") => {
            return Err(FormatError::new_err(
                "not a Guava or Spark Bloom filter: the bytes are in bloomforge's own \
                 format; read them with the class of their kind (e.g. BloomFilter.from_bytes)",
            ))
        }
        Err(e) => return Err(interop_err(e)),
    };
    Ok(match filter {
        ForeignFilter::Guava(g) => Py::new(py, GuavaBloomFilter::from_rust(g))?.into_any(),
        ForeignFilter::Spark(s) => Py::new(py, SparkBloomFilter::from_rust(s))?.into_any(),
        // `ForeignFilter` is non-exhaustive; every format it reads is one of the two.
        other => {
            return Err(FormatError::new_err(format!(
                "a {} filter, which this version of the package does not read",
                other.format()
            )))
        }
    })
}
