//! `bloomforge.Bitmap` and `bloomforge.TwoBitmap`: bloomforge-bitmap's exact sets of
//! integers below a universe (at most 2^32). Their keys are the integers themselves, not
//! hashes: batches are read here as integers (NumPy integer arrays, Arrow integer arrays,
//! iterables of `int`), not by [`crate::keys`].

use crate::errors::{format_err, to_py};
use crate::shared::{read_file, reduce, write_file, PARALLEL_FROM};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType};
use arrow_schema::DataType;
use bloomforge_bitmap::{Bitmap as RustBitmap, Seen, TwoBitmap as RustTwo, MAX_UNIVERSE};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyIterator, PyList, PyType};
use std::borrow::Cow;

/// A batch of integers, borrowed from the Python object that holds them.
enum Ints<'py> {
    U32(PyReadonlyArray1<'py, u32>),
    I32(PyReadonlyArray1<'py, i32>),
    U64(PyReadonlyArray1<'py, u64>),
    I64(PyReadonlyArray1<'py, i64>),
    Arrow(Vec<ArrayRef>),
    /// An iterable's ints (those beyond `i64` as `i64::MIN`: outside every universe).
    Owned(Vec<i64>),
}

/// A batch's integers as plain Rust data, readable without the GIL.
enum IntData<'a> {
    U32(&'a [u32]),
    I32(&'a [i32]),
    U64(&'a [u64]),
    I64(&'a [i64]),
    Arrow(&'a [ArrayRef]),
}

/// A value outside the universe, as the `ValueError` that says so.
fn out_of_universe(value: i128, universe: u64) -> PyErr {
    if value == i128::from(i64::MIN) {
        PyValueError::new_err(format!(
            "a value is outside the universe 0..{universe} (negative or too large)"
        ))
    } else {
        PyValueError::new_err(format!(
            "value {value} is outside the universe 0..{universe}; build the set with a larger \
             universe"
        ))
    }
}

/// One Python `int` as an `i64` (those beyond it as `i64::MIN`, outside every universe).
fn int_value(x: &Bound<'_, PyAny>) -> PyResult<i64> {
    if !x.is_instance_of::<PyInt>() && !x.hasattr(pyo3::intern!(x.py(), "__index__"))? {
        return Err(PyTypeError::new_err(format!(
            "values are int, not {}",
            x.get_type().name()?
        )));
    }
    match x.extract::<i64>() {
        Ok(v) => Ok(v),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(x.py()) => Ok(i64::MIN),
        Err(e) => Err(e),
    }
}

/// One value as a `u32` of the universe, or `ValueError`.
fn value_in(x: &Bound<'_, PyAny>, universe: u64) -> PyResult<u32> {
    let v = int_value(x)?;
    if v >= 0 && (v as u64) < universe {
        Ok(v as u32)
    } else {
        Err(out_of_universe(i128::from(v), universe))
    }
}

/// One value as a `u32`, or `None` for what no set holds: an int outside `0..2^32`, or
/// anything but an int (as `"x" in range(10)` is `False`).
fn value_u32(x: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
    match int_value(x) {
        Ok(v) => Ok(u32::try_from(v).ok()),
        Err(e) if e.is_instance_of::<PyTypeError>(x.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

impl<'py> Ints<'py> {
    /// Reads a NumPy integer array (`uint32`, `int32`, `uint64`, `int64`), an Arrow
    /// integer array or chunked array, or an iterable of `int`.
    fn read(values: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = values.cast::<numpy::PyUntypedArray>() {
            if !a.is_contiguous() {
                // A strided view (`a[::2]`, a column of a 2-d array): read a packed copy.
                let packed = values
                    .py()
                    .import(pyo3::intern!(values.py(), "numpy"))?
                    .call_method1(pyo3::intern!(values.py(), "ascontiguousarray"), (values,))?;
                if packed.cast::<numpy::PyUntypedArray>()?.is_contiguous() {
                    return Self::read(&packed);
                }
            }
        }
        if let Ok(a) = values.extract::<PyReadonlyArray1<'py, u32>>() {
            return Ok(Ints::U32(a));
        }
        if let Ok(a) = values.extract::<PyReadonlyArray1<'py, i32>>() {
            return Ok(Ints::I32(a));
        }
        if let Ok(a) = values.extract::<PyReadonlyArray1<'py, u64>>() {
            return Ok(Ints::U64(a));
        }
        if let Ok(a) = values.extract::<PyReadonlyArray1<'py, i64>>() {
            return Ok(Ints::I64(a));
        }
        if let Ok(a) = values.cast::<numpy::PyUntypedArray>() {
            return Err(PyTypeError::new_err(format!(
                "NumPy values are 1-d arrays of uint32, int32, uint64 or int64, not {} of {} \
                 dimension(s); convert them, or pass a list",
                a.dtype(),
                a.ndim()
            )));
        }
        let py = values.py();
        if values.hasattr(pyo3::intern!(py, "__arrow_c_array__"))?
            || values.hasattr(pyo3::intern!(py, "__arrow_c_stream__"))?
        {
            let any: pyo3_arrow::input::AnyArray = values.extract()?;
            let (chunks, _) = any.into_chunked_array()?.into_inner();
            for c in &chunks {
                check_arrow(c)?;
            }
            return Ok(Ints::Arrow(chunks));
        }
        let mut out = Vec::with_capacity(values.len().unwrap_or(0));
        for x in values.try_iter()? {
            out.push(int_value(&x?)?);
        }
        Ok(Ints::Owned(out))
    }

    /// Number of values.
    fn len(&self) -> usize {
        match self {
            Ints::U32(a) => a.len(),
            Ints::I32(a) => a.len(),
            Ints::U64(a) => a.len(),
            Ints::I64(a) => a.len(),
            Ints::Arrow(chunks) => chunks.iter().map(|c| c.len()).sum(),
            Ints::Owned(v) => v.len(),
        }
    }

    /// The values, readable without the GIL.
    fn data(&self) -> PyResult<IntData<'_>> {
        Ok(match self {
            Ints::U32(a) => IntData::U32(a.as_slice()?),
            Ints::I32(a) => IntData::I32(a.as_slice()?),
            Ints::U64(a) => IntData::U64(a.as_slice()?),
            Ints::I64(a) => IntData::I64(a.as_slice()?),
            Ints::Arrow(chunks) => IntData::Arrow(chunks),
            Ints::Owned(v) => IntData::I64(v),
        })
    }
}

/// Refuses Arrow arrays of another type than integers, or holding nulls.
fn check_arrow(a: &ArrayRef) -> PyResult<()> {
    match a.data_type() {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => {}
        t => {
            return Err(PyTypeError::new_err(format!(
                "Arrow values are integers, not {t}"
            )))
        }
    }
    if a.null_count() > 0 {
        return Err(PyValueError::new_err(format!(
            "Arrow values hold {} null(s): drop them first (e.g. pyarrow.compute.drop_null)",
            a.null_count()
        )));
    }
    Ok(())
}

/// The values of an Arrow array of integers `T`, widened to `i128`.
fn wide<T: ArrowPrimitiveType>(a: &ArrayRef) -> impl Iterator<Item = i128> + '_
where
    T::Native: Into<i128>,
{
    a.as_primitive::<T>().values().iter().map(|&x| x.into())
}

/// Calls `$f` with an iterator of `i128` over the values of one Arrow array of a type
/// [`check_arrow`] accepted.
macro_rules! arrow_values {
    ($a:expr, $f:expr) => {{
        let a: &ArrayRef = $a;
        match a.data_type() {
            DataType::Int8 => ($f)(wide::<Int8Type>(a)),
            DataType::Int16 => ($f)(wide::<Int16Type>(a)),
            DataType::Int32 => ($f)(wide::<Int32Type>(a)),
            DataType::Int64 => ($f)(wide::<Int64Type>(a)),
            DataType::UInt8 => ($f)(wide::<UInt8Type>(a)),
            DataType::UInt16 => ($f)(wide::<UInt16Type>(a)),
            DataType::UInt32 => ($f)(wide::<UInt32Type>(a)),
            DataType::UInt64 => ($f)(wide::<UInt64Type>(a)),
            // `check_arrow` lets no other type through.
            t => unreachable!("unchecked Arrow type {t}"),
        }
    }};
}

/// The values of `iter` as `u32`s of `0..universe`; `Err(value)` for the first outside.
fn collect_in(
    iter: impl Iterator<Item = i128>,
    universe: u64,
    out: &mut Vec<u32>,
) -> Result<(), i128> {
    for v in iter {
        if v < 0 || v >= i128::from(universe) {
            return Err(v);
        }
        out.push(v as u32);
    }
    Ok(())
}

impl IntData<'_> {
    /// The values as `u32`s of `0..universe` (borrowed when they already are `u32`s, which
    /// the set's own batch insert checks); `Err(value)` for the first outside.
    fn values_in(&self, universe: u64, n: usize) -> Result<Cow<'_, [u32]>, i128> {
        let mut out = Vec::with_capacity(n);
        match self {
            IntData::U32(v) => return Ok(Cow::Borrowed(v)),
            IntData::I32(v) => collect_in(v.iter().map(|&x| i128::from(x)), universe, &mut out)?,
            IntData::U64(v) => collect_in(v.iter().map(|&x| i128::from(x)), universe, &mut out)?,
            IntData::I64(v) => collect_in(v.iter().map(|&x| i128::from(x)), universe, &mut out)?,
            IntData::Arrow(chunks) => {
                for a in chunks.iter() {
                    arrow_values!(a, |it| collect_in(it, universe, &mut out))?;
                }
            }
        }
        Ok(Cow::Owned(out))
    }

    /// Calls `f` with each value as a `u32`, or `None` outside `0..2^32`, in order.
    fn for_each(&self, mut f: impl FnMut(Option<u32>)) {
        let mut g = |it: &mut dyn Iterator<Item = i128>| it.for_each(|v| f(u32::try_from(v).ok()));
        match self {
            IntData::U32(v) => g(&mut v.iter().map(|&x| i128::from(x))),
            IntData::I32(v) => g(&mut v.iter().map(|&x| i128::from(x))),
            IntData::U64(v) => g(&mut v.iter().map(|&x| i128::from(x))),
            IntData::I64(v) => g(&mut v.iter().map(|&x| i128::from(x))),
            IntData::Arrow(chunks) => {
                for a in chunks.iter() {
                    arrow_values!(a, |mut it| g(&mut it));
                }
            }
        }
    }
}

/// A universe from Python, checked (`1 <= universe <= 2**32`).
fn check_universe(universe: u64) -> PyResult<u64> {
    if (1..=MAX_UNIVERSE).contains(&universe) {
        Ok(universe)
    } else {
        Err(PyValueError::new_err(format!(
            "universe must be in 1..=2**32 (the values 0..universe the set may hold), not \
             {universe}"
        )))
    }
}

/// An exact set of integers `0 <= x < universe`: one bit per value.
///
/// `Bitmap(universe=2**32)`: `universe / 8` bytes (512 MiB for every `uint32`, allocated
/// lazily by the operating system: pages never written cost nothing).
///
/// Values are the integers themselves (not hashed): `add`, `remove`, `x in b`, `len(b)`
/// (exact), iteration in ascending order, and `|`, `&`, `-`, `^` between bitmaps of the
/// same universe. A value outside the universe raises `ValueError` when added and is never
/// in the set. Batches take NumPy integer arrays (`uint32` read in place), Arrow integer
/// arrays or any iterable of `int`, and run without the GIL.
#[pyclass(module = "bloomforge", name = "Bitmap")]
#[derive(Clone)]
pub struct Bitmap {
    inner: RustBitmap,
}

impl Bitmap {
    fn combine(
        &mut self,
        other: &Bitmap,
        op: fn(&mut RustBitmap, &RustBitmap) -> bloomforge_bitmap::Result<()>,
    ) -> PyResult<()> {
        op(&mut self.inner, &other.inner).map_err(to_py)
    }

    fn combined(
        &self,
        other: &Bitmap,
        op: fn(&mut RustBitmap, &RustBitmap) -> bloomforge_bitmap::Result<()>,
    ) -> PyResult<Self> {
        let mut out = self.clone();
        out.combine(other, op)?;
        Ok(out)
    }
}

#[pymethods]
impl Bitmap {
    #[new]
    #[pyo3(signature = (universe = MAX_UNIVERSE))]
    fn new(universe: u64) -> PyResult<Self> {
        let inner = RustBitmap::new(check_universe(universe)?).map_err(to_py)?;
        Ok(Bitmap { inner })
    }

    /// Adds `x`; `ValueError` when it is outside the universe.
    fn add(&mut self, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = value_in(x, self.inner.universe())?;
        self.inner.insert(v);
        Ok(())
    }

    /// Removes `x`; `KeyError` when it is not in the set.
    fn remove(&mut self, x: &Bound<'_, PyAny>) -> PyResult<()> {
        match value_u32(x)? {
            Some(v) if self.inner.remove(v) => Ok(()),
            _ => Err(pyo3::exceptions::PyKeyError::new_err(x.clone().unbind())),
        }
    }

    /// Removes `x` if present; whether it was.
    fn discard(&mut self, x: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(match value_u32(x)? {
            Some(v) => self.inner.remove(v),
            None => false,
        })
    }

    /// `x in b`: whether `x` is in the set (`False` outside the universe).
    fn __contains__(&self, x: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(value_u32(x)?.is_some_and(|v| self.inner.contains(v)))
    }

    /// Adds every value of `values` (NumPy integer array, Arrow integer array, or
    /// iterable of `int`), without the GIL for arrays. All or nothing: a value outside
    /// the universe raises `ValueError` and adds nothing.
    fn add_many(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let ints = Ints::read(values)?;
        let n = ints.len();
        let data = ints.data()?;
        let universe = self.inner.universe();
        let inner = &mut self.inner;
        py.detach(|| {
            let values = data
                .values_in(universe, n)
                .map_err(|v| out_of_universe(v, universe))?;
            let r = if n >= PARALLEL_FROM {
                inner.par_insert_batch(&values)
            } else {
                inner.insert_batch(&values)
            };
            r.map_err(to_py)
        })
    }

    /// Adds every value of an iterable (as `add_many`).
    fn update(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        self.add_many(py, values)
    }

    /// `numpy.ndarray[bool]`: whether each value is in the set.
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let ints = Ints::read(values)?;
        let n = ints.len();
        let data = ints.data()?;
        let out = py.detach(|| {
            let mut out = vec![false; n];
            if let IntData::U32(v) = data {
                self.inner
                    .contains_batch(v, &mut out)
                    .expect("equal lengths");
            } else {
                let mut i = 0;
                data.for_each(|v| {
                    out[i] = v.is_some_and(|v| self.inner.contains(v));
                    i += 1;
                });
            }
            out
        });
        Ok(out.into_pyarray(py))
    }

    /// `numpy.ndarray[uint32]`: the values, ascending.
    fn to_numpy<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let values: Vec<u32> = py.detach(|| self.inner.iter().collect());
        values.into_pyarray(py)
    }

    /// The values, ascending (from a snapshot: changes during the iteration are not
    /// seen).
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        let values: Vec<u32> = py.detach(|| self.inner.iter().collect());
        PyList::new(py, values)?.as_any().try_iter()
    }

    /// Values in the set (exact).
    fn __len__(&self) -> usize {
        self.inner.len() as usize
    }

    /// Number of values below `x`.
    fn rank(&self, x: u64) -> u64 {
        self.inner.rank(x)
    }

    /// The `k`-th smallest value (from 0); `IndexError` when the set has at most `k`
    /// values.
    fn select(&self, k: u64) -> PyResult<u32> {
        self.inner.select(k).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!(
                "select({k}): the set has {} values",
                self.inner.len()
            ))
        })
    }

    /// The set holds the values `0 <= x < universe`.
    #[getter]
    fn universe(&self) -> u64 {
        self.inner.universe()
    }

    /// 0: the set is exact.
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        0.0
    }

    /// Bytes the bits occupy.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bytes()
    }

    /// Fraction of the universe in the set.
    #[getter]
    fn fill(&self) -> f64 {
        self.inner.len() as f64 / self.inner.universe() as f64
    }

    /// Removes every value.
    fn clear(&mut self) {
        self.inner.clear()
    }

    /// A copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// `copy.copy(b)`: a copy (as `copy`).
    fn __copy__(&self) -> Self {
        self.clone()
    }

    /// `copy.deepcopy(b)`: a copy (as `copy`).
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// `a | b`: the union (same universe, else `ValueError`).
    fn __or__(&self, other: &Bitmap) -> PyResult<Self> {
        self.combined(other, RustBitmap::union)
    }

    /// `a & b`: the intersection (same universe, else `ValueError`).
    fn __and__(&self, other: &Bitmap) -> PyResult<Self> {
        self.combined(other, RustBitmap::intersect)
    }

    /// `a - b`: the values of `a` not in `b` (same universe, else `ValueError`).
    fn __sub__(&self, other: &Bitmap) -> PyResult<Self> {
        self.combined(other, RustBitmap::difference)
    }

    /// `a ^ b`: the values in exactly one of them (same universe, else `ValueError`).
    fn __xor__(&self, other: &Bitmap) -> PyResult<Self> {
        self.combined(other, RustBitmap::xor)
    }

    /// `a |= b` (as `|`).
    fn __ior__(&mut self, other: &Bitmap) -> PyResult<()> {
        self.combine(other, RustBitmap::union)
    }

    /// `a &= b` (as `&`).
    fn __iand__(&mut self, other: &Bitmap) -> PyResult<()> {
        self.combine(other, RustBitmap::intersect)
    }

    /// `a -= b` (as `-`).
    fn __isub__(&mut self, other: &Bitmap) -> PyResult<()> {
        self.combine(other, RustBitmap::difference)
    }

    /// `a ^= b` (as `^`).
    fn __ixor__(&mut self, other: &Bitmap) -> PyResult<()> {
        self.combine(other, RustBitmap::xor)
    }

    /// `a == b`: the same universe and values.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<Bitmap>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Bitmap(universe={}, len={}, fill={:.4}, false_positive_rate=0)",
            self.inner.universe(),
            self.inner.len(),
            self.fill()
        )
    }

    /// The set in bloomforge's format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes from `to_bytes` or `save`; `bloomforge.FormatError` for anything else.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py
            .detach(|| RustBitmap::from_bytes(data))
            .map_err(format_err)?;
        Ok(Bitmap { inner })
    }

    /// Writes the set to `path`.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = py.detach(|| self.inner.to_bytes());
        write_file(&path, &bytes)
    }

    /// Reads a set file.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes = read_file(&path)?;
        Self::from_bytes(cls, py, &bytes)
    }

    /// Pickling: the set's bytes.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any())
    }
}

/// `Seen` as the number Python sees: 0 never, 1 once, 2 many.
fn seen_code(s: Seen) -> u8 {
    match s {
        Seen::Never => 0,
        Seen::Once => 1,
        Seen::Many => 2,
    }
}

/// How often each integer `0 <= x < universe` was added, up to "many": two bits per
/// value.
///
/// `TwoBitmap(universe=2**32)`: `universe / 4` bytes (1 GiB for every `uint32`,
/// allocated lazily by the operating system). `seen(x)` is 0 (never added), 1 (once) or 2
/// (twice or more); `once()` lists the values added exactly once, ascending. `len` is the
/// number of distinct values added (exact). Values are the integers themselves (not
/// hashed); batches take NumPy integer arrays, Arrow integer arrays or any iterable of
/// `int`, and run without the GIL. A value outside the universe raises `ValueError` when
/// added and was never seen.
#[pyclass(module = "bloomforge", name = "TwoBitmap")]
#[derive(Clone)]
pub struct TwoBitmap {
    inner: RustTwo,
}

#[pymethods]
impl TwoBitmap {
    #[new]
    #[pyo3(signature = (universe = MAX_UNIVERSE))]
    fn new(universe: u64) -> PyResult<Self> {
        let inner = RustTwo::new(check_universe(universe)?).map_err(to_py)?;
        Ok(TwoBitmap { inner })
    }

    /// Records one occurrence of `x`; `ValueError` when it is outside the universe.
    fn add(&mut self, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = value_in(x, self.inner.universe())?;
        self.inner.insert(v).map_err(to_py)?;
        Ok(())
    }

    /// How often `x` was added: 0 never, 1 once, 2 twice or more (0 for anything but an
    /// int of the universe).
    fn seen(&self, x: &Bound<'_, PyAny>) -> PyResult<u8> {
        Ok(value_u32(x)?.map_or(0, |v| seen_code(self.inner.seen(v))))
    }

    /// `x in t`: whether `x` was added at least once.
    fn __contains__(&self, x: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(value_u32(x)?.is_some_and(|v| self.inner.seen(v) != Seen::Never))
    }

    /// Records every value of `values` (NumPy integer array, Arrow integer array, or
    /// iterable of `int`), without the GIL for arrays. All or nothing: a value outside
    /// the universe raises `ValueError` and records nothing.
    fn add_many(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let ints = Ints::read(values)?;
        let n = ints.len();
        let data = ints.data()?;
        let universe = self.inner.universe();
        let inner = &mut self.inner;
        py.detach(|| {
            let values = data
                .values_in(universe, n)
                .map_err(|v| out_of_universe(v, universe))?;
            let r = if n >= PARALLEL_FROM {
                inner.par_insert_batch(&values)
            } else {
                inner.insert_batch(&values)
            };
            r.map_err(to_py)
        })
    }

    /// Records every value of an iterable (as `add_many`).
    fn update(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        self.add_many(py, values)
    }

    /// `numpy.ndarray[bool]`: whether each value was added at least once.
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let ints = Ints::read(values)?;
        let n = ints.len();
        let data = ints.data()?;
        let out = py.detach(|| {
            let mut out = Vec::with_capacity(n);
            data.for_each(|v| out.push(v.is_some_and(|v| self.inner.seen(v) != Seen::Never)));
            out
        });
        Ok(out.into_pyarray(py))
    }

    /// `numpy.ndarray[uint8]`: `seen` of each value (0, 1 or 2).
    fn seen_many<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let ints = Ints::read(values)?;
        let n = ints.len();
        let data = ints.data()?;
        let out = py.detach(|| {
            let mut out = Vec::with_capacity(n);
            data.for_each(|v| out.push(v.map_or(0, |v| seen_code(self.inner.seen(v)))));
            out
        });
        Ok(out.into_pyarray(py))
    }

    /// `numpy.ndarray[uint32]`: the values added exactly once, ascending.
    fn once<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let out = py.detach(|| {
            let mut out = Vec::new();
            self.inner
                .append_once(0..self.inner.universe(), 0, &mut out);
            out
        });
        out.into_pyarray(py)
    }

    /// `numpy.ndarray[uint32]`: the values added twice or more, ascending.
    fn many<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let out = py.detach(|| {
            let mut out = Vec::new();
            self.inner
                .append_many(0..self.inner.universe(), 0, &mut out);
            out
        });
        out.into_pyarray(py)
    }

    /// Number of values added exactly once.
    #[getter]
    fn count_once(&self) -> u64 {
        self.inner.count_once()
    }

    /// Number of values added twice or more.
    #[getter]
    fn count_many(&self) -> u64 {
        self.inner.count_many()
    }

    /// Distinct values added (exact).
    fn __len__(&self) -> usize {
        self.inner.len() as usize
    }

    /// The table holds the values `0 <= x < universe`.
    #[getter]
    fn universe(&self) -> u64 {
        self.inner.universe()
    }

    /// 0: the table is exact.
    #[getter]
    fn false_positive_rate(&self) -> f64 {
        0.0
    }

    /// Bytes the table occupies.
    #[getter]
    fn size_in_bytes(&self) -> u64 {
        self.inner.memory_bytes()
    }

    /// Fraction of the universe added at least once.
    #[getter]
    fn fill(&self) -> f64 {
        self.inner.len() as f64 / self.inner.universe() as f64
    }

    /// Forgets every value.
    fn clear(&mut self) {
        self.inner.clear()
    }

    /// A copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// `copy.copy(t)`: a copy (as `copy`).
    fn __copy__(&self) -> Self {
        self.clone()
    }

    /// `copy.deepcopy(t)`: a copy (as `copy`).
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Adds the counts of `other` in place (once + once = many); same universe, else
    /// `ValueError`.
    fn merge(&mut self, other: &TwoBitmap) -> PyResult<()> {
        self.inner.merge(&other.inner).map_err(to_py)
    }

    /// `a + b`: the counts of both (as `merge`).
    fn __add__(&self, other: &TwoBitmap) -> PyResult<Self> {
        let mut out = self.clone();
        out.merge(other)?;
        Ok(out)
    }

    /// `a += b` (as `merge`).
    fn __iadd__(&mut self, other: &TwoBitmap) -> PyResult<()> {
        self.merge(other)
    }

    /// `a == b`: the same universe and counts.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<TwoBitmap>() {
            Ok(o) => o.borrow().inner == self.inner,
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "TwoBitmap(universe={}, len={}, count_once={}, count_many={}, \
             false_positive_rate=0)",
            self.inner.universe(),
            self.inner.len(),
            self.inner.count_once(),
            self.inner.count_many()
        )
    }

    /// The table in bloomforge's format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &bytes)
    }

    /// Reads bytes from `to_bytes` or `save`; `bloomforge.FormatError` for anything else.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py
            .detach(|| RustTwo::from_bytes(data))
            .map_err(format_err)?;
        Ok(TwoBitmap { inner })
    }

    /// Writes the table to `path`.
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let bytes = py.detach(|| self.inner.to_bytes());
        write_file(&path, &bytes)
    }

    /// Reads a table file.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let bytes = read_file(&path)?;
        Self::from_bytes(cls, py, &bytes)
    }

    /// Pickling: the table's bytes.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        reduce(slf.as_any())
    }
}

// A Python object holds the struct at a 16-byte boundary: nothing inside may need more.
const _: () = assert!(std::mem::align_of::<Bitmap>() <= 16);
const _: () = assert!(std::mem::align_of::<TwoBitmap>() <= 16);
