//! Keys from Python, hashed the way every bloomforge front end hashes them: a `str` as its
//! UTF-8 bytes and `bytes` as themselves (`hash_one(&[u8])`, as the command line hashes a
//! line), an `int` as the `u64` of its value (negative ones as the `i64`, whose bits are
//! the same `u64`). NumPy integer arrays and Arrow arrays (through the PyCapsule
//! interface) are read in place, and their hashes computed with the GIL released.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString};
use std::hash::BuildHasher;

/// Keys a batch call hashes at a time: the hashes of one chunk stay in cache between the
/// hashing and the filter's batch call.
pub const CHUNK: usize = 1 << 14;

/// The hash of one Python key.
///
/// # Errors
/// `TypeError` for anything but `str`, `bytes` and integers (`int`, or a type with
/// `__index__` such as NumPy's `int64`); `OverflowError` for one outside `-2^63 .. 2^64`.
pub fn hash_key<S: BuildHasher>(hasher: &S, key: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(s) = key.cast::<PyString>() {
        Ok(hasher.hash_one(utf8(s)?))
    } else if let Ok(b) = key.cast::<PyBytes>() {
        Ok(hasher.hash_one(b.as_bytes()))
    } else if key.is_instance_of::<PyInt>() {
        Ok(hasher.hash_one(int_bits(key)?))
    } else if key.hasattr(pyo3::intern!(key.py(), "__index__"))? {
        // Integers of other types (NumPy's `int64`, `uint32`, ...): the int they stand for.
        let int = key.call_method0(pyo3::intern!(key.py(), "__index__"))?;
        Ok(hasher.hash_one(int_bits(&int)?))
    } else {
        Err(PyTypeError::new_err(format!(
            "keys are str, bytes or int, not {}",
            key.get_type().name()?
        )))
    }
}

// Part of the limited API from Python 3.10 and of the full API of 3.9, so every CPython
// this abi3 module loads into exports it. pyo3's abi3-py39 mode does not declare it; its
// portable path (`PyBackedStr`) copies the string into a new `bytes` object, which cost
// about a fifth of a per-key call.
extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut pyo3::ffi::PyObject,
        size: *mut pyo3::ffi::Py_ssize_t,
    ) -> *const std::ffi::c_char;
}

/// A `str`'s UTF-8 bytes, borrowed from the string object (CPython caches them there).
pub(crate) fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a [u8]> {
    let mut len: pyo3::ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live `str` object (the cast checked it); the function writes `len`
    // and returns null (with a Python error set) or a pointer to `len` bytes that live as
    // long as the string object, which `s` keeps alive for `'a`.
    let ptr = unsafe { PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut len) };
    if ptr.is_null() {
        return Err(PyErr::fetch(s.py()));
    }
    // SAFETY: as above: `ptr` points to `len` initialised bytes owned by the string.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize) })
}

/// An `int`'s value as the `u64` bloomforge hashes.
pub(crate) fn int_bits(key: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(v) = key.extract::<u64>() {
        return Ok(v);
    }
    match key.extract::<i64>() {
        Ok(v) => Ok(v as u64),
        Err(_) => Err(PyOverflowError::new_err(
            "int key out of range: keys are -2**63 <= k < 2**64",
        )),
    }
}

/// A batch of keys, borrowed from the Python object that holds them. Everything but
/// `Objects` is read without the GIL.
pub enum Batch<'py> {
    /// A NumPy `uint64` array.
    U64(PyReadonlyArray1<'py, u64>),
    /// A NumPy `int64` array.
    I64(PyReadonlyArray1<'py, i64>),
    /// A NumPy `uint32` array.
    U32(PyReadonlyArray1<'py, u32>),
    /// A NumPy `int32` array.
    I32(PyReadonlyArray1<'py, i32>),
    /// The chunks of an Arrow array or chunked array.
    Arrow(Vec<ArrayRef>),
    /// Any other iterable, hashed while it is read (under the GIL).
    Objects(Vec<u64>),
}

impl<'py> Batch<'py> {
    /// Reads `keys`: a NumPy integer array, anything with `__arrow_c_array__` or
    /// `__arrow_c_stream__` (pyarrow arrays and chunked arrays, Polars Series, ...), or an
    /// iterable of `str` / `bytes` / `int`.
    ///
    /// # Errors
    /// `TypeError` for another NumPy dtype or Arrow type, or a key of another type;
    /// `ValueError` for nulls in an Arrow array; what iterating `keys` raises.
    pub fn read<S: BuildHasher>(keys: &Bound<'py, PyAny>, hasher: &S) -> PyResult<Self> {
        if let Ok(a) = keys.cast::<numpy::PyUntypedArray>() {
            if !a.is_contiguous() {
                // A strided view (`a[::2]`, a column of a 2-d array): read a packed copy.
                let packed = keys
                    .py()
                    .import(pyo3::intern!(keys.py(), "numpy"))?
                    .call_method1(pyo3::intern!(keys.py(), "ascontiguousarray"), (keys,))?;
                if packed.cast::<numpy::PyUntypedArray>()?.is_contiguous() {
                    return Self::read(&packed, hasher);
                }
            }
        }
        if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, u64>>() {
            return Ok(Batch::U64(a));
        }
        if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, i64>>() {
            return Ok(Batch::I64(a));
        }
        if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, u32>>() {
            return Ok(Batch::U32(a));
        }
        if let Ok(a) = keys.extract::<PyReadonlyArray1<'py, i32>>() {
            return Ok(Batch::I32(a));
        }
        if let Ok(a) = keys.cast::<numpy::PyUntypedArray>() {
            return Err(PyTypeError::new_err(format!(
                "NumPy keys are 1-d arrays of int64, uint64, int32 or uint32, not {} of {} \
                 dimension(s); convert them, or pass a list",
                a.dtype(),
                a.ndim()
            )));
        }
        let py = keys.py();
        if keys.hasattr(pyo3::intern!(py, "__arrow_c_array__"))?
            || keys.hasattr(pyo3::intern!(py, "__arrow_c_stream__"))?
        {
            let any: pyo3_arrow::input::AnyArray = keys.extract()?;
            let chunked = any.into_chunked_array()?;
            let (chunks, _) = chunked.into_inner();
            for c in &chunks {
                check_arrow(c)?;
            }
            return Ok(Batch::Arrow(chunks));
        }
        if keys.is_instance_of::<PyString>() || keys.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(
                "a batch is an iterable of keys, not one str or bytes: wrap it in a list",
            ));
        }
        let mut hashes = Vec::with_capacity(keys.len().unwrap_or(0));
        for key in keys.try_iter()? {
            hashes.push(hash_key(hasher, &key?)?);
        }
        Ok(Batch::Objects(hashes))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            Batch::U64(a) => a.len(),
            Batch::I64(a) => a.len(),
            Batch::U32(a) => a.len(),
            Batch::I32(a) => a.len(),
            Batch::Arrow(chunks) => chunks.iter().map(|c| c.len()).sum(),
            Batch::Objects(h) => h.len(),
        }
    }

    /// The keys' data, readable without the GIL.
    pub fn data(&self) -> PyResult<Data<'_>> {
        Ok(match self {
            Batch::U64(a) => Data::U64(a.as_slice()?),
            Batch::I64(a) => Data::I64(a.as_slice()?),
            Batch::U32(a) => Data::U32(a.as_slice()?),
            Batch::I32(a) => Data::I32(a.as_slice()?),
            Batch::Arrow(chunks) => Data::Arrow(chunks),
            Batch::Objects(h) => Data::Hashes(h),
        })
    }
}

/// A batch's keys as plain Rust data (`Send`: the hashing runs with the GIL released).
pub enum Data<'a> {
    /// `uint64` values.
    U64(&'a [u64]),
    /// `int64` values.
    I64(&'a [i64]),
    /// `uint32` values.
    U32(&'a [u32]),
    /// `int32` values.
    I32(&'a [i32]),
    /// Arrow arrays of a type [`check_arrow`] accepted.
    Arrow(&'a [ArrayRef]),
    /// Hashes already computed.
    Hashes(&'a [u64]),
}

/// Refuses Arrow arrays this module cannot hash, or that hold nulls.
fn check_arrow(a: &ArrayRef) -> PyResult<()> {
    match a.data_type() {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::Int64
        | DataType::UInt64
        | DataType::Int32
        | DataType::UInt32 => {}
        // `pyarrow.array([])` has the null type: no keys (a longer one is all nulls).
        DataType::Null => {}
        t => {
            return Err(PyTypeError::new_err(format!(
                "Arrow keys are strings, binary or 32/64-bit integers, not {t}"
            )))
        }
    }
    if a.logical_null_count() > 0 {
        return Err(PyValueError::new_err(format!(
            "Arrow keys hold {} null(s): drop them first (e.g. pyarrow.compute.drop_null)",
            a.logical_null_count()
        )));
    }
    Ok(())
}

impl Data<'_> {
    /// The answer loop of every batch query: a vector of `len` defaults, and `f(hashes,
    /// out)` for each chunk of hashes with `out` the chunk's slice of that vector.
    pub fn answers<S: BuildHasher, T: Clone + Default>(
        &self,
        hasher: &S,
        len: usize,
        mut f: impl FnMut(&[u64], &mut [T]),
    ) -> Vec<T> {
        let mut out = vec![T::default(); len];
        let mut at = 0;
        self.for_each_chunk(hasher, |h| {
            f(h, &mut out[at..at + h.len()]);
            at += h.len();
        });
        out
    }

    /// Calls `f` with the hashes of consecutive chunks of at most [`CHUNK`] keys, in order.
    pub fn for_each_chunk<S: BuildHasher>(&self, hasher: &S, mut f: impl FnMut(&[u64])) {
        let f = &mut f;
        match self {
            Data::U64(v) => int_chunks(v.iter().copied(), hasher, f),
            Data::I64(v) => int_chunks(v.iter().map(|&x| x as u64), hasher, f),
            Data::U32(v) => int_chunks(v.iter().map(|&x| u64::from(x)), hasher, f),
            Data::I32(v) => int_chunks(v.iter().map(|&x| i64::from(x) as u64), hasher, f),
            Data::Hashes(h) => h.chunks(CHUNK).for_each(f),
            Data::Arrow(chunks) => {
                for a in chunks.iter() {
                    arrow_chunks(a, hasher, f);
                }
            }
        }
    }
}

/// The body of every `contains_many`-like method: `keys` read (under the GIL), then with
/// the GIL released `f(hashes, out)` for each chunk of hashes, `out` that chunk's slice of
/// the answers.
///
/// # Errors
/// As [`Batch::read`] and [`Batch::data`].
pub(crate) fn batch_answers<'py, S, T>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    hasher: &S,
    f: impl FnMut(&[u64], &mut [T]) + Send,
) -> PyResult<Bound<'py, numpy::PyArray1<T>>>
where
    S: BuildHasher + Sync,
    T: numpy::Element + Clone + Default + Send,
{
    use numpy::IntoPyArray;
    let batch = Batch::read(keys, hasher)?;
    let n = batch.len();
    let data = batch.data()?;
    let out = py.detach(|| data.answers(hasher, n, f));
    Ok(out.into_pyarray(py))
}

/// [`batch_answers`] with one answer per hash: `f(hash)`.
///
/// # Errors
/// As [`Batch::read`] and [`Batch::data`].
pub(crate) fn batch_map<'py, S, T>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    hasher: &S,
    mut f: impl FnMut(u64) -> T + Send,
) -> PyResult<Bound<'py, numpy::PyArray1<T>>>
where
    S: BuildHasher + Sync,
    T: numpy::Element + Send,
{
    use numpy::IntoPyArray;
    let batch = Batch::read(keys, hasher)?;
    let n = batch.len();
    let data = batch.data()?;
    let out = py.detach(|| {
        let mut out = Vec::with_capacity(n);
        data.for_each_chunk(hasher, |h| out.extend(h.iter().map(|&x| f(x))));
        out
    });
    Ok(out.into_pyarray(py))
}

/// The body of every `add_many` whose batch insert cannot fail: `keys` read (under the
/// GIL), then with the GIL released `insert(hashes)` for each chunk of hashes.
///
/// # Errors
/// As [`Batch::read`] and [`Batch::data`].
pub(crate) fn batch_chunks<S: BuildHasher + Sync>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    hasher: &S,
    insert: impl FnMut(&[u64]) + Send,
) -> PyResult<()> {
    let batch = Batch::read(keys, hasher)?;
    let data = batch.data()?;
    py.detach(|| data.for_each_chunk(hasher, insert));
    Ok(())
}

/// The body of every all-or-nothing `add_many`: every hash of `keys` collected (with the
/// GIL released), then `insert(all_hashes)`, whose result is returned.
///
/// # Errors
/// As [`Batch::read`] and [`Batch::data`].
pub(crate) fn batch_all<S: BuildHasher + Sync, R: Send>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    hasher: &S,
    insert: impl FnOnce(&[u64]) -> R + Send,
) -> PyResult<R> {
    let batch = Batch::read(keys, hasher)?;
    let n = batch.len();
    let data = batch.data()?;
    Ok(py.detach(|| {
        let mut hashes = Vec::with_capacity(n);
        data.for_each_chunk(hasher, |h| hashes.extend_from_slice(h));
        insert(&hashes)
    }))
}

/// Hashes one Arrow array of a type [`check_arrow`] accepted.
fn arrow_chunks<S: BuildHasher>(a: &ArrayRef, hasher: &S, f: &mut impl FnMut(&[u64])) {
    match a.data_type() {
        DataType::Int64 => {
            let v = a.as_primitive::<Int64Type>().values();
            int_chunks(v.iter().map(|&x| x as u64), hasher, f)
        }
        DataType::UInt64 => int_chunks(
            a.as_primitive::<UInt64Type>().values().iter().copied(),
            hasher,
            f,
        ),
        DataType::Int32 => {
            let v = a.as_primitive::<Int32Type>().values();
            int_chunks(v.iter().map(|&x| i64::from(x) as u64), hasher, f)
        }
        DataType::UInt32 => {
            let v = a.as_primitive::<UInt32Type>().values();
            int_chunks(v.iter().map(|&x| u64::from(x)), hasher, f)
        }
        DataType::Utf8 => {
            let v = a.as_string::<i32>();
            bytes_chunks(v.iter().map(|s| s.unwrap_or("").as_bytes()), hasher, f)
        }
        DataType::LargeUtf8 => {
            let v = a.as_string::<i64>();
            bytes_chunks(v.iter().map(|s| s.unwrap_or("").as_bytes()), hasher, f)
        }
        DataType::Utf8View => {
            let v = a.as_string_view();
            bytes_chunks(v.iter().map(|s| s.unwrap_or("").as_bytes()), hasher, f)
        }
        DataType::Binary => bytes_chunks(
            a.as_binary::<i32>().iter().map(|s| s.unwrap_or(&[])),
            hasher,
            f,
        ),
        DataType::LargeBinary => bytes_chunks(
            a.as_binary::<i64>().iter().map(|s| s.unwrap_or(&[])),
            hasher,
            f,
        ),
        DataType::BinaryView => bytes_chunks(
            a.as_binary_view().iter().map(|s| s.unwrap_or(&[])),
            hasher,
            f,
        ),
        // Empty (`check_arrow` refuses nulls).
        DataType::Null => {}
        // `check_arrow` lets no other type through.
        t => unreachable!("unchecked Arrow type {t}"),
    }
}

/// Hashes integer keys chunk by chunk (see [`Data::for_each_chunk`]).
fn int_chunks<S: BuildHasher>(
    values: impl Iterator<Item = u64>,
    hasher: &S,
    f: &mut impl FnMut(&[u64]),
) {
    let mut buf = Vec::with_capacity(CHUNK);
    for v in values {
        buf.push(hasher.hash_one(v));
        if buf.len() == CHUNK {
            f(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        f(&buf);
    }
}

/// Hashes byte strings chunk by chunk (see [`Data::for_each_chunk`]).
fn bytes_chunks<'a, S: BuildHasher>(
    values: impl Iterator<Item = &'a [u8]>,
    hasher: &S,
    f: &mut impl FnMut(&[u64]),
) {
    let mut buf = Vec::with_capacity(CHUNK);
    for v in values {
        buf.push(hasher.hash_one(v));
        if buf.len() == CHUNK {
            f(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        f(&buf);
    }
}
