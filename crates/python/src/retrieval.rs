//! `bloomforge.BinaryFuseFilter`, `bloomforge.XorFilter` and `bloomforge.BloomierFilter`:
//! bloomforge-retrieval's static filters, built once from their whole key set.
//!
//! The Rust construction hashes the keys itself, with the filter's hasher; so that a key
//! here hashes exactly as [`crate::keys::hash_key`] hashes it (a `str` as its UTF-8 bytes,
//! `bytes` as themselves, an `int` as its `u64`), the keys are handed over as those same
//! Rust values: `&[u8]` or `u64`, or [`Key`], whose `Hash` is that of the value it holds.

use crate::errors::{format_err, to_py, FormatError};
use crate::keys::{batch_answers, hash_key, Batch, Data};
use crate::shared::{read_file, reduce, write_file};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::ArrayRef;
use arrow_schema::DataType;
use bloomforge_core::DefaultHasher;
use bloomforge_retrieval::{
    BinaryFuseFilter as RustFuse, BloomierFilter as RustBloomier, RetrievalError,
    XorFilter as RustXor,
};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyKeyError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyDict, PyInt, PyString, PyType};
use std::borrow::Cow;
use std::hash::{Hash, Hasher};

/// One key from Python, as the value [`crate::keys::hash_key`] hashes.
#[derive(PartialEq, Eq)]
enum Key {
    /// A `str`'s UTF-8 bytes, or `bytes`.
    Bytes(Box<[u8]>),
    /// An `int` as its `u64` (a negative one as its `i64`'s bits).
    Int(u64),
}

/// Exactly the `Hash` of the value held (no tag): `hasher.hash_one(&Key::Bytes(b))` is
/// `hasher.hash_one(&b[..])`, and `hasher.hash_one(&Key::Int(v))` is `hasher.hash_one(v)`.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Key::Bytes(b) => b[..].hash(state),
            Key::Int(v) => v.hash(state),
        }
    }
}

/// One Python key as a [`Key`] (the rules of [`crate::keys::hash_key`]).
fn key_of(key: &Bound<'_, PyAny>) -> PyResult<Key> {
    if let Ok(s) = key.cast::<PyString>() {
        let s: PyBackedStr = s.extract()?;
        Ok(Key::Bytes(s.as_bytes().into()))
    } else if let Ok(b) = key.cast::<PyBytes>() {
        Ok(Key::Bytes(b.as_bytes().into()))
    } else if key.is_instance_of::<PyInt>() || key.hasattr(pyo3::intern!(key.py(), "__index__"))? {
        // Integers of other types (NumPy's `int64`, ...): the int they stand for.
        let key = &key.call_method0(pyo3::intern!(key.py(), "__index__"))?;
        if let Ok(v) = key.extract::<u64>() {
            return Ok(Key::Int(v));
        }
        match key.extract::<i64>() {
            Ok(v) => Ok(Key::Int(v as u64)),
            Err(_) => Err(PyOverflowError::new_err(
                "int key out of range: keys are -2**63 <= k < 2**64",
            )),
        }
    } else {
        Err(PyTypeError::new_err(format!(
            "keys are str, bytes or int, not {}",
            key.get_type().name()?
        )))
    }
}

/// The keys of a batch as the Rust values the construction hashes.
enum Keys<'a> {
    /// Integers.
    Ints(Cow<'a, [u64]>),
    /// Strings or byte strings of Arrow arrays, in place.
    Bytes(Vec<&'a [u8]>),
    /// Keys read from an iterable.
    Objects(&'a [Key]),
}

/// Where a batch's keys come from: an array (read in place) or an iterable.
enum Source<'py> {
    Array(Batch<'py>),
    Objects(Vec<Key>),
}

impl<'py> Source<'py> {
    /// Reads `keys`: a NumPy integer array or an Arrow array (as [`Batch::read`] takes
    /// them), or an iterable of `str` / `bytes` / `int`.
    fn read(keys: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = keys.py();
        if keys.cast::<numpy::PyUntypedArray>().is_ok()
            || keys.hasattr(pyo3::intern!(py, "__arrow_c_array__"))?
            || keys.hasattr(pyo3::intern!(py, "__arrow_c_stream__"))?
        {
            return Ok(Source::Array(Batch::read(keys, &DefaultHasher::default())?));
        }
        if keys.is_instance_of::<PyString>() || keys.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(
                "keys are an iterable of keys, not one str or bytes: wrap it in a list",
            ));
        }
        let mut out = Vec::with_capacity(keys.len().unwrap_or(0));
        for key in keys.try_iter()? {
            out.push(key_of(&key?)?);
        }
        Ok(Source::Objects(out))
    }

    /// The keys, readable without the GIL.
    fn keys(&self) -> PyResult<Keys<'_>> {
        Ok(match self {
            Source::Objects(v) => Keys::Objects(v),
            Source::Array(batch) => match batch.data()? {
                Data::U64(v) => Keys::Ints(Cow::Borrowed(v)),
                Data::I64(v) => Keys::Ints(v.iter().map(|&x| x as u64).collect()),
                Data::U32(v) => Keys::Ints(v.iter().map(|&x| u64::from(x)).collect()),
                Data::I32(v) => Keys::Ints(v.iter().map(|&x| i64::from(x) as u64).collect()),
                Data::Arrow(chunks) => arrow_keys(chunks),
                // `Batch::read` hashes only iterables, which `Source::read` reads itself.
                Data::Hashes(_) => unreachable!("arrays are not hashed when read"),
            },
        })
    }
}

/// The keys of Arrow chunks (of a type [`Batch::read`] accepted).
fn arrow_keys(chunks: &[ArrayRef]) -> Keys<'_> {
    let mut ints = Vec::new();
    let mut bytes = Vec::new();
    for a in chunks {
        match a.data_type() {
            DataType::Int64 => {
                let v = a.as_primitive::<Int64Type>().values();
                ints.extend(v.iter().map(|&x| x as u64))
            }
            DataType::UInt64 => ints.extend(a.as_primitive::<UInt64Type>().values().iter()),
            DataType::Int32 => {
                let v = a.as_primitive::<Int32Type>().values();
                ints.extend(v.iter().map(|&x| i64::from(x) as u64))
            }
            DataType::UInt32 => {
                let v = a.as_primitive::<UInt32Type>().values();
                ints.extend(v.iter().map(|&x| u64::from(x)))
            }
            DataType::Utf8 => {
                let v = a.as_string::<i32>();
                bytes.extend(v.iter().map(|s| s.unwrap_or("").as_bytes()))
            }
            DataType::LargeUtf8 => {
                let v = a.as_string::<i64>();
                bytes.extend(v.iter().map(|s| s.unwrap_or("").as_bytes()))
            }
            DataType::Utf8View => {
                let v = a.as_string_view();
                bytes.extend(v.iter().map(|s| s.unwrap_or("").as_bytes()))
            }
            DataType::Binary => bytes.extend(a.as_binary::<i32>().iter().map(|s| s.unwrap_or(&[]))),
            DataType::LargeBinary => {
                bytes.extend(a.as_binary::<i64>().iter().map(|s| s.unwrap_or(&[])))
            }
            DataType::BinaryView => {
                bytes.extend(a.as_binary_view().iter().map(|s| s.unwrap_or(&[])))
            }
            // Empty (`Batch::read` refuses nulls).
            DataType::Null => {}
            // `Batch::read` lets no other type through.
            t => unreachable!("unchecked Arrow type {t}"),
        }
    }
    // The chunks of one array share its type: one of the two is empty.
    if bytes.is_empty() {
        Keys::Ints(Cow::Owned(ints))
    } else {
        Keys::Bytes(bytes)
    }
}

/// Runs `$body` with `$k` bound to the keys as a slice of their Rust type.
macro_rules! with_keys {
    ($keys:expr, $k:ident => $body:expr) => {
        match $keys {
            Keys::Ints(v) => {
                let $k: &[u64] = &v;
                $body
            }
            Keys::Bytes(v) => {
                let $k: &[&[u8]] = &v;
                $body
            }
            Keys::Objects(v) => {
                let $k: &[Key] = v;
                $body
            }
        }
    };
}

/// A filter of 8-bit or of 16-bit fingerprints.
#[derive(Clone)]
enum Width<A, B> {
    U8(A),
    U16(B),
}

/// Runs `$body` with `$f` bound to the filter, whatever its fingerprint width.
macro_rules! each {
    ($inner:expr, $f:ident => $body:expr) => {
        match $inner {
            Width::U8($f) => $body,
            Width::U16($f) => $body,
        }
    };
}

/// Defines a static membership filter class over `$rust::<u8>` and `$rust::<u16>`.
macro_rules! membership_class {
    ($(#[$doc:meta])* $name:ident, $pyname:literal, $rust:ident) => {
        $(#[$doc])*
        #[pyclass(module = "bloomforge", name = $pyname)]
        #[derive(Clone)]
        pub struct $name {
            inner: Width<$rust<u8>, $rust<u16>>,
        }

        impl $name {
            fn decode(bytes: &[u8]) -> PyResult<Self> {
                // The header does not tell the fingerprint width: the cells' bytes do.
                let f = match $rust::<u8>::from_bytes(bytes) {
                    Ok(f) => $name { inner: Width::U8(f) },
                    Err(e8) => match $rust::<u16>::from_bytes(bytes) {
                        Ok(f) => $name { inner: Width::U16(f) },
                        Err(e16) => {
                            let e = if e8 == e16 { e8 } else { width_err(e8, e16) };
                            return Err(format_err(e));
                        }
                    },
                };
                each!(&f.inner, g => check_items(g.len(), g.cells()))?;
                Ok(f)
            }

            fn bytes(&self) -> Vec<u8> {
                each!(&self.inner, f => f.to_bytes())
            }

            fn hasher(&self) -> DefaultHasher {
                each!(&self.inner, f => *f.hasher())
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(signature = (keys, *, fingerprint_bits = 8, seed = 0, threads = None))]
            fn new(
                py: Python<'_>,
                keys: &Bound<'_, PyAny>,
                fingerprint_bits: u32,
                seed: u64,
                threads: Option<usize>,
            ) -> PyResult<Self> {
                let source = Source::read(keys)?;
                let keys = source.keys()?;
                let inner = py.detach(|| -> Result<_, RetrievalError> {
                    Ok(match fingerprint_bits {
                        8 => {
                            let mut b = $rust::<u8>::builder().seed(seed);
                            if let Some(t) = threads {
                                b = b.threads(t);
                            }
                            Width::U8(with_keys!(keys, k => b.build(k))?)
                        }
                        16 => {
                            let mut b = $rust::<u16>::builder().seed(seed);
                            if let Some(t) = threads {
                                b = b.threads(t);
                            }
                            Width::U16(with_keys!(keys, k => b.build(k))?)
                        }
                        other => {
                            return Err(RetrievalError::InvalidParameter {
                                name: "fingerprint_bits",
                                value: u64::from(other),
                                expected: "8 or 16",
                            })
                        }
                    })
                });
                Ok($name { inner: inner.map_err(to_py)? })
            }

            /// `key in f`: `True` for every key of the set; for another key `False`
            /// except with probability `false_positive_rate`.
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                let h = hash_key(&self.hasher(), key)?;
                Ok(each!(&self.inner, f => f.contains_hash(h)))
            }

            /// `numpy.ndarray[bool]`: whether each key may be in the set (NumPy integer
            /// array, Arrow array, or iterable of keys; without the GIL for arrays).
            fn contains_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyArray1<bool>>> {
                let hasher = self.hasher();
                batch_answers(py, keys, &hasher, |h, o| {
                    each!(&self.inner, f => f.contains_hash_batch(h, o)).expect("equal lengths");
                })
            }

            /// Distinct keys of the set (exact, but for keys whose 64-bit hashes
            /// collide).
            fn __len__(&self) -> usize {
                // `check_items` bounded it by the table's cell count, a `usize`.
                each!(&self.inner, f => f.len() as usize)
            }

            /// The probability that a key outside the set answers `True`:
            /// `2**-fingerprint_bits`.
            #[getter]
            fn false_positive_rate(&self) -> f64 {
                each!(&self.inner, f => f.expected_false_pos())
            }

            /// Bits of each fingerprint (8 or 16).
            #[getter]
            fn fingerprint_bits(&self) -> u32 {
                match self.inner {
                    Width::U8(_) => 8,
                    Width::U16(_) => 16,
                }
            }

            /// The hash seed.
            #[getter]
            fn seed(&self) -> u64 {
                self.hasher().seed()
            }

            /// Bytes the table occupies.
            #[getter]
            fn size_in_bytes(&self) -> u64 {
                each!(&self.inner, f => f.memory_bytes())
            }

            /// Cells of the table.
            #[getter]
            fn num_cells(&self) -> usize {
                each!(&self.inner, f => f.cells())
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

            /// `f == g`: the same bytes.
            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                match other.cast::<$name>() {
                    Ok(o) => o.borrow().bytes() == self.bytes(),
                    Err(_) => false,
                }
            }

            fn __repr__(&self) -> String {
                format!(
                    concat!($pyname, "(len={}, fingerprint_bits={}, size_in_bytes={}, \
                     false_positive_rate={:.3e})"),
                    self.__len__(),
                    self.fingerprint_bits(),
                    self.size_in_bytes(),
                    self.false_positive_rate()
                )
            }

            /// The filter in bloomforge's format.
            fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
                let bytes = py.detach(|| self.bytes());
                PyBytes::new(py, &bytes)
            }

            /// Reads bytes from `to_bytes` or `save` (either fingerprint width);
            /// `bloomforge.FormatError` for anything else.
            #[classmethod]
            fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
                py.detach(|| Self::decode(data))
            }

            /// Writes the filter to `path`.
            fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
                let bytes = py.detach(|| self.bytes());
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
    };
}

/// Refuses a file whose key count exceeds its cells (a table holds fewer keys than cells;
/// the count is what `len` returns).
fn check_items(items: u64, cells: usize) -> PyResult<()> {
    if items > cells as u64 {
        return Err(FormatError::new_err(format!(
            "corrupt filter bytes: {items} keys in a table of {cells} cells"
        )));
    }
    Ok(())
}

/// Of the errors of reading bytes as 8-bit and as 16-bit fingerprints, the one that says
/// more: the other width's when one only found the cells of the wrong width.
fn width_err(e8: RetrievalError, e16: RetrievalError) -> RetrievalError {
    let width_mismatch = |e: &RetrievalError| {
        matches!(
            e,
            RetrievalError::Core(bloomforge_core::Error::Corrupt { reason })
                if reason.contains("width")
        )
    };
    if width_mismatch(&e8) {
        e16
    } else {
        e8
    }
}

membership_class!(
    /// A binary fuse filter: a static set, built once from all its keys, in about 9 bits a
    /// key from a million keys on (more for small sets) with 8-bit fingerprints, for a
    /// false-positive rate of 1/256.
    ///
    /// `BinaryFuseFilter(keys, *, fingerprint_bits=8, seed=0, threads=None)`: `keys` a NumPy
    /// integer array, an Arrow array or any iterable of `str` / `bytes` / `int` (repeats
    /// allowed), hashed as every bloomforge filter hashes them. `fingerprint_bits`: 8
    /// (rate `2**-8`) or 16 (`2**-16`, twice the bytes). `threads`: the construction's
    /// thread count (default: every core, from 65536 keys on; the filter does not depend
    /// on it). No `add`: build a new filter for new keys.
    BinaryFuseFilter,
    "BinaryFuseFilter",
    RustFuse
);

membership_class!(
    /// A xor filter: a static set, built once from all its keys, in about 9.8 bits a key
    /// (8-bit fingerprints) for a false-positive rate of 1/256.
    ///
    /// `XorFilter(keys, *, fingerprint_bits=8, seed=0, threads=None)`: as
    /// `BinaryFuseFilter`, which takes about 8 % fewer bits from a million keys on (a xor
    /// filter takes fewer for small sets).
    XorFilter,
    "XorFilter",
    RustXor
);

/// A static function from keys to small integers (a Bloomier filter / retrieval
/// structure): built once from a mapping, `f[key]` returns the key's value in about
/// `1.13 * (value_bits + fingerprint_bits)` bits a key, without storing the keys.
///
/// `BloomierFilter(mapping, *, value_bits=None, fingerprint_bits=None,
/// false_positive_rate=0.01, seed=0, threads=None)`: `mapping` a `dict` (or an iterable of
/// `(key, value)` pairs) of `str` / `bytes` / `int` keys to ints `0 <= v < 2**value_bits`
/// (`value_bits` 1 to 32; default: the width of the largest value). `fingerprint_bits` (0
/// to 32; default: the fewest bits for `false_positive_rate`) sets how often a key outside
/// the mapping is caught.
///
/// Keys of the mapping always get their value. A key *not* in the mapping gets `None` from
/// `get` (and `KeyError` from `f[key]`) only when its fingerprint does not match: with
/// probability `false_positive_rate` it gets an arbitrary value instead, so neither
/// `KeyError` nor `key in f` can be trusted for keys outside the mapping (with
/// `fingerprint_bits=0`, every key gets a value).
#[pyclass(module = "bloomforge", name = "BloomierFilter")]
#[derive(Clone)]
pub struct BloomierFilter {
    inner: RustBloomier,
}

/// One value of the mapping.
fn value_of(v: &Bound<'_, PyAny>) -> PyResult<u32> {
    v.extract::<u32>().map_err(|_| {
        PyValueError::new_err(format!(
            "values are ints 0 <= v < 2**32, not {}",
            v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))
    })
}

#[pymethods]
impl BloomierFilter {
    #[new]
    #[pyo3(signature = (
        mapping,
        *,
        value_bits = None,
        fingerprint_bits = None,
        false_positive_rate = 0.01,
        seed = 0,
        threads = None
    ))]
    fn new(
        py: Python<'_>,
        mapping: &Bound<'_, PyAny>,
        value_bits: Option<u32>,
        fingerprint_bits: Option<u32>,
        false_positive_rate: f64,
        seed: u64,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let items = if let Ok(d) = mapping.cast::<PyDict>() {
            d.items().into_any()
        } else if mapping.hasattr(pyo3::intern!(py, "items"))? {
            mapping.call_method0(pyo3::intern!(py, "items"))?
        } else {
            mapping.clone()
        };
        let mut pairs = Vec::with_capacity(items.len().unwrap_or(0));
        for item in items.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            pairs.push((key_of(&k)?, value_of(&v)?));
        }
        let mut b = RustBloomier::builder()
            .false_pos(false_positive_rate)
            .seed(seed);
        if let Some(v) = value_bits {
            b = b.value_bits(v);
        }
        if let Some(f) = fingerprint_bits {
            b = b.fingerprint_bits(f);
        }
        if let Some(t) = threads {
            b = b.threads(t);
        }
        let inner = py.detach(|| b.build(&pairs)).map_err(to_py)?;
        Ok(BloomierFilter { inner })
    }

    /// The value of `key`: exact for keys of the mapping; for another key `default`,
    /// except with probability `false_positive_rate` an arbitrary value.
    #[pyo3(signature = (key, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(match self.inner.get_hash(h) {
            Some(v) => v.into_pyobject(py)?.into_any(),
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }

    /// `f[key]`: the value of `key`; `KeyError` when the filter can tell that `key` is not
    /// in the mapping (see the class: not always).
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<u32> {
        let h = hash_key(self.inner.hasher(), key)?;
        self.inner
            .get_hash(h)
            .ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
    }

    /// `key in f`: `True` for every key of the mapping; for another key `False` except
    /// with probability `false_positive_rate`.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let h = hash_key(self.inner.hasher(), key)?;
        Ok(self.inner.get_hash(h).is_some())
    }

    /// `(values, found)`: two NumPy arrays, `uint32` and `bool`, with each key's value
    /// (0 where not found) and whether one was found, as `get` (NumPy integer array, Arrow
    /// array, or iterable of keys; without the GIL for arrays).
    #[allow(clippy::type_complexity)]
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<bool>>)> {
        let out = self.lookup(py, keys)?;
        let values: Vec<u32> = out.iter().map(|v| v.unwrap_or(0)).collect();
        let found: Vec<bool> = out.iter().map(Option::is_some).collect();
        Ok((values.into_pyarray(py), found.into_pyarray(py)))
    }

    /// `numpy.ndarray[bool]`: `key in f` of each key.
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let out = self.lookup(py, keys)?;
        let found: Vec<bool> = out.iter().map(Option::is_some).collect();
        Ok(found.into_pyarray(py))
    }

    /// Distinct keys of the mapping.
    fn __len__(&self) -> usize {
        // `check_items` bounded it by the table's cell count, a `usize`.
        self.inner.len() as usize
    }

    /// The probability that a key outside the mapping gets a value:
    /// `2**-fingerprint_bits`.
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        self.inner.expected_false_pos()
    }

    /// Bits of each value.
    #[getter]
    fn value_bits(&self) -> u32 {
        self.inner.value_bits()
    }

    /// Bits of each fingerprint.
    #[getter]
    fn fingerprint_bits(&self) -> u32 {
        self.inner.fingerprint_bits()
    }

    /// The hash seed (the construction may derive another from the one given, when two
    /// keys' hashes collide).
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.hasher().seed()
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

    /// `f == g`: the same bytes.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<BloomierFilter>() {
            Ok(o) => o.borrow().inner.to_bytes() == self.inner.to_bytes(),
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "BloomierFilter(len={}, value_bits={}, fingerprint_bits={}, size_in_bytes={}, \
             false_positive_rate={:.3e})",
            self.inner.len(),
            self.inner.value_bits(),
            self.inner.fingerprint_bits(),
            self.inner.memory_bytes(),
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
            .detach(|| RustBloomier::from_bytes(data))
            .map_err(format_err)?;
        check_items(inner.len(), inner.cells())?;
        Ok(BloomierFilter { inner })
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

impl BloomierFilter {
    /// `get` of every key of a batch.
    fn lookup(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<Option<u32>>> {
        let hasher = *self.inner.hasher();
        let batch = Batch::read(keys, &hasher)?;
        let n = batch.len();
        let data = batch.data()?;
        Ok(py.detach(|| {
            data.answers(&hasher, n, |h, o| {
                self.inner.get_hash_batch(h, o).expect("equal lengths");
            })
        }))
    }
}

// A Python object holds the struct at a 16-byte boundary: nothing inside may need more.
const _: () = assert!(std::mem::align_of::<BinaryFuseFilter>() <= 16);
const _: () = assert!(std::mem::align_of::<XorFilter>() <= 16);
const _: () = assert!(std::mem::align_of::<BloomierFilter>() <= 16);
