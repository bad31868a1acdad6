//! Keys of `GuavaBloomFilter` and `SparkBloomFilter`, funnelled as Guava and Spark funnel
//! them: a `str` as its UTF-8 bytes, `bytes` (and a `bytearray` or `memoryview`) as they
//! are, an `int` as a Java `long` (`-2^63 <= k < 2^64`; from `2^63` on, the `long` of the
//! same bits, as the other classes take a `u64`).
//!
//! Those filters hash a key themselves, with their own system's functions, so a batch is
//! handed over as keys ([`Key`] values borrowed from the Python objects or the arrays), not
//! as hashes: NumPy and Arrow arrays in place, chunk by chunk, without the GIL; an
//! iterable as references to its `str` / `bytes` objects, kept alive for the call.

use crate::keys::{int_bits, utf8, Batch, Data, CHUNK};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use bloomforge_core::DefaultHasher;
use bloomforge_interop::{Key, KeyRef};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyMemoryView, PyString};

/// Calls `f` with one Python key as Guava and Spark funnel it.
///
/// # Errors
/// `TypeError` for anything but `str`, bytes-like objects and integers; `OverflowError`
/// for an integer outside `-2^63 .. 2^64`; what encoding a `str` raises (a lone surrogate).
pub fn with_key<R>(key: &Bound<'_, PyAny>, f: impl FnOnce(KeyRef<'_>) -> R) -> PyResult<R> {
    if let Ok(s) = key.cast::<PyString>() {
        Ok(f(KeyRef::Bytes(utf8(s)?)))
    } else if let Ok(b) = key.cast::<PyBytes>() {
        Ok(f(KeyRef::Bytes(b.as_bytes())))
    } else if is_mutable_bytes(key) {
        let copy = copy_bytes(key)?;
        Ok(f(KeyRef::Bytes(copy.as_bytes())))
    } else {
        Ok(f(KeyRef::Long(long_key(key)?)))
    }
}

/// A key that is not a `str` or bytes-like: an integer, as a Java `long`.
fn long_key(key: &Bound<'_, PyAny>) -> PyResult<i64> {
    if key.is_instance_of::<PyInt>() {
        long(key)
    } else if key.hasattr(pyo3::intern!(key.py(), "__index__"))? {
        // Integers of other types (NumPy's `int64`, `uint32`, ...): the int they stand for.
        long(&key.call_method0(pyo3::intern!(key.py(), "__index__"))?)
    } else {
        Err(not_a_key(key))
    }
}

/// An `int` as the Java `long` of its bits.
fn long(key: &Bound<'_, PyAny>) -> PyResult<i64> {
    int_bits(key).map(|v| v as i64).map_err(|_| {
        PyOverflowError::new_err(
            "int key out of range: a Java long, -2**63 <= k < 2**63 (or 2**63 <= k < 2**64, \
             taken as the long of the same bits)",
        )
    })
}

/// A `bytearray` or `memoryview`: bytes another thread could change while the GIL is
/// released, so they are copied.
fn is_mutable_bytes(key: &Bound<'_, PyAny>) -> bool {
    key.is_instance_of::<PyByteArray>() || key.is_instance_of::<PyMemoryView>()
}

/// `bytes(key)`: a copy of a `bytearray`'s or `memoryview`'s bytes.
fn copy_bytes<'py>(key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(key
        .py()
        .get_type::<PyBytes>()
        .call1((key,))?
        .cast_into::<PyBytes>()?)
}

fn not_a_key(key: &Bound<'_, PyAny>) -> PyErr {
    match key.get_type().name() {
        Ok(name) => PyTypeError::new_err(format!(
            "keys are str, bytes, bytearray, memoryview or int, not {name}"
        )),
        Err(e) => e,
    }
}

/// One key of an iterable, kept as its Python object (or its value).
pub enum Slot<'py> {
    /// A `str`, funnelled as its UTF-8 bytes.
    Str(Bound<'py, PyString>),
    /// `bytes` (or a copy of a `bytearray` / `memoryview`).
    Bytes(Bound<'py, PyBytes>),
    /// A Java `long`.
    Long(i64),
}

/// A batch of keys: an array read in place, or the keys of an iterable.
pub enum ForeignBatch<'py> {
    /// A NumPy integer array or an Arrow array (as [`Batch::read`] takes them).
    Array(Batch<'py>),
    /// The keys of any other iterable.
    Objects(Vec<Slot<'py>>),
}

impl<'py> ForeignBatch<'py> {
    /// Reads `keys`: a 1-d NumPy array of `int64`, `uint64`, `int32` or `uint32`; an
    /// Arrow array or stream of strings, binary or 32/64-bit integers without nulls; or an
    /// iterable of keys (each checked as it is read).
    ///
    /// # Errors
    /// As [`Batch::read`]; `TypeError` for one `str` / `bytes` (not a batch) or a key of
    /// another type; `OverflowError` for an integer out of range.
    pub fn read(keys: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = keys.py();
        if keys.cast::<numpy::PyUntypedArray>().is_ok()
            || keys.hasattr(pyo3::intern!(py, "__arrow_c_array__"))?
            || keys.hasattr(pyo3::intern!(py, "__arrow_c_stream__"))?
        {
            // Arrays are not hashed when read: the hasher is never used.
            return Ok(ForeignBatch::Array(Batch::read(
                keys,
                &DefaultHasher::default(),
            )?));
        }
        if keys.is_instance_of::<PyString>()
            || keys.is_instance_of::<PyBytes>()
            || is_mutable_bytes(keys)
        {
            return Err(PyTypeError::new_err(
                "a batch is an iterable of keys, not one str or bytes: wrap it in a list",
            ));
        }
        let mut slots = Vec::with_capacity(keys.len().unwrap_or(0));
        for key in keys.try_iter()? {
            let key = key?;
            let slot = if let Ok(s) = key.cast::<PyString>() {
                // Encodes (and caches) the UTF-8 now: a lone surrogate fails here, before
                // any key is applied.
                utf8(s)?;
                Slot::Str(s.clone())
            } else if let Ok(b) = key.cast::<PyBytes>() {
                Slot::Bytes(b.clone())
            } else if is_mutable_bytes(&key) {
                Slot::Bytes(copy_bytes(&key)?)
            } else {
                Slot::Long(long_key(&key)?)
            };
            slots.push(slot);
        }
        Ok(ForeignBatch::Objects(slots))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            ForeignBatch::Array(b) => b.len(),
            ForeignBatch::Objects(v) => v.len(),
        }
    }

    /// The keys, readable without the GIL.
    pub fn keys(&self) -> PyResult<Keys<'_>> {
        match self {
            ForeignBatch::Array(b) => Ok(Keys::Array(b.data()?)),
            ForeignBatch::Objects(slots) => slots
                .iter()
                .map(|s| {
                    Ok(match s {
                        Slot::Str(s) => KeyRef::Bytes(utf8(s)?),
                        Slot::Bytes(b) => KeyRef::Bytes(b.as_bytes()),
                        Slot::Long(v) => KeyRef::Long(*v),
                    })
                })
                .collect::<PyResult<Vec<_>>>()
                .map(Keys::Refs),
        }
    }
}

/// A batch's keys as plain Rust data (`Send`: the filter works on them with the GIL
/// released).
pub enum Keys<'a> {
    /// An array's values (as [`Batch::data`] gives them).
    Array(Data<'a>),
    /// The keys of an iterable, borrowed from their objects.
    Refs(Vec<KeyRef<'a>>),
}

/// What a batch call does with each chunk of keys.
pub trait Sink {
    /// Takes the next `keys` (in the batch's order).
    fn keys<K: Key + Sync>(&mut self, keys: &[K]);
}

impl Keys<'_> {
    /// Calls `sink` with consecutive chunks of at most `chunk` keys, in order. Integer
    /// arrays of 64 bits are handed over in place; other keys are gathered a chunk at a
    /// time.
    pub fn for_each_chunk(&self, chunk: usize, sink: &mut impl Sink) {
        match self {
            Keys::Refs(v) => v.chunks(chunk).for_each(|c| sink.keys(c)),
            Keys::Array(Data::I64(v)) => v.chunks(chunk).for_each(|c| sink.keys(c)),
            Keys::Array(Data::U64(v)) => v.chunks(chunk).for_each(|c| sink.keys(c)),
            Keys::Array(Data::I32(v)) => longs(v.iter().map(|&x| i64::from(x)), chunk, sink),
            Keys::Array(Data::U32(v)) => longs(v.iter().map(|&x| i64::from(x)), chunk, sink),
            Keys::Array(Data::Arrow(chunks)) => {
                for a in chunks.iter() {
                    arrow(a, chunk, sink);
                }
            }
            // `ForeignBatch::read` reads iterables itself: `Batch::read` only gets arrays.
            Keys::Array(Data::Hashes(_)) => unreachable!("arrays are not hashed when read"),
        }
    }
}

/// Gathers integers into chunks of longs.
fn longs(values: impl Iterator<Item = i64>, chunk: usize, sink: &mut impl Sink) {
    let mut buf = Vec::with_capacity(chunk.min(CHUNK));
    for v in values {
        buf.push(v);
        if buf.len() == chunk {
            sink.keys(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        sink.keys(&buf);
    }
}

/// Gathers byte strings into chunks of keys.
fn byte_keys<'a>(values: impl Iterator<Item = &'a [u8]>, chunk: usize, sink: &mut impl Sink) {
    let mut buf: Vec<KeyRef<'a>> = Vec::with_capacity(chunk.min(CHUNK));
    for v in values {
        buf.push(KeyRef::Bytes(v));
        if buf.len() == chunk {
            sink.keys(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        sink.keys(&buf);
    }
}

/// The keys of one Arrow array (of a type [`Batch::read`] accepted, without nulls).
fn arrow(a: &ArrayRef, chunk: usize, sink: &mut impl Sink) {
    match a.data_type() {
        DataType::Int64 => a
            .as_primitive::<Int64Type>()
            .values()
            .chunks(chunk)
            .for_each(|c| sink.keys(c)),
        DataType::UInt64 => a
            .as_primitive::<UInt64Type>()
            .values()
            .chunks(chunk)
            .for_each(|c| sink.keys(c)),
        DataType::Int32 => {
            let v = a.as_primitive::<Int32Type>().values();
            longs(v.iter().map(|&x| i64::from(x)), chunk, sink)
        }
        DataType::UInt32 => {
            let v = a.as_primitive::<UInt32Type>().values();
            longs(v.iter().map(|&x| i64::from(x)), chunk, sink)
        }
        DataType::Utf8 => byte_keys(
            a.as_string::<i32>()
                .iter()
                .map(|s| s.unwrap_or("").as_bytes()),
            chunk,
            sink,
        ),
        DataType::LargeUtf8 => byte_keys(
            a.as_string::<i64>()
                .iter()
                .map(|s| s.unwrap_or("").as_bytes()),
            chunk,
            sink,
        ),
        DataType::Utf8View => byte_keys(
            a.as_string_view()
                .iter()
                .map(|s| s.unwrap_or("").as_bytes()),
            chunk,
            sink,
        ),
        DataType::Binary => byte_keys(
            a.as_binary::<i32>().iter().map(|s| s.unwrap_or(&[])),
            chunk,
            sink,
        ),
        DataType::LargeBinary => byte_keys(
            a.as_binary::<i64>().iter().map(|s| s.unwrap_or(&[])),
            chunk,
            sink,
        ),
        DataType::BinaryView => byte_keys(
            a.as_binary_view().iter().map(|s| s.unwrap_or(&[])),
            chunk,
            sink,
        ),
        // Empty (`Batch::read` refuses nulls).
        DataType::Null => debug_assert_eq!(a.len(), 0),
        // `Batch::read` lets no other type through.
        t => unreachable!("unchecked Arrow type {t}"),
    }
}
