//! `bloomforge.parquet_index`, `bloomforge.parquet_probe` and `bloomforge.parquet_filters`:
//! bloomforge-interop's Parquet retrofit, which adds split-block Bloom filters to the row
//! groups of an existing Parquet file without rewriting its data, and its probes of any
//! file's filters. The work runs without the GIL; the results are plain dicts and lists.

use crate::errors::interop_err;
use bloomforge_interop::parquet::{
    filters, index_file, probe, ColumnFilterInfo, IndexOptions, IndexReport, ProbeAnswer,
    ProbeValue, RowGroupAnswer,
};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyMemoryView, PyString};
use std::path::PathBuf;

/// `parquet_index(input, output=None, *, columns, false_positive_rate=0.01,
/// keep_existing=False)`: rewrites the Parquet file `input` as `output` (default: `input`
/// itself, replaced when the new file is complete) with a split-block Bloom filter per row
/// group for each column of `columns`, sized for the row group's exact distinct count at
/// `false_positive_rate`. The column chunks are copied byte for byte (no page is decoded
/// or re-encoded); filters of other columns are kept, and with `keep_existing=True` so are
/// the named columns' existing ones. Returns a report dict (`row_groups`, `rows`,
/// `columns`: one dict per named column, `filters_kept`, `output_bytes`).
#[pyfunction]
#[pyo3(signature = (input, output = None, *, columns, false_positive_rate = 0.01, keep_existing = false))]
pub fn parquet_index<'py>(
    py: Python<'py>,
    input: PathBuf,
    output: Option<PathBuf>,
    columns: &Bound<'py, PyAny>,
    false_positive_rate: f64,
    keep_existing: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let columns: Vec<String> = if let Ok(s) = columns.cast::<PyString>() {
        vec![s.extract::<String>()?]
    } else {
        columns
            .try_iter()?
            .map(|c| c?.extract::<String>())
            .collect::<PyResult<_>>()?
    };
    let options = IndexOptions::new(columns)
        .false_pos(false_positive_rate)
        .keep_existing(keep_existing);
    let output = output.unwrap_or_else(|| input.clone());
    let report = py
        .detach(|| index_file(&input, &output, &options))
        .map_err(interop_err)?;
    report_dict(py, &report)
}

/// The report of `parquet_index` as a dict.
fn report_dict<'py>(py: Python<'py>, r: &IndexReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("row_groups", r.row_groups)?;
    d.set_item("rows", r.rows)?;
    let columns = r
        .columns
        .iter()
        .map(|c| {
            let d = PyDict::new(py);
            d.set_item("column", &c.column)?;
            d.set_item("row_groups_indexed", c.row_groups_indexed)?;
            d.set_item("row_groups_kept", c.row_groups_kept)?;
            d.set_item("distinct_values", c.distinct_values)?;
            d.set_item("filter_bytes", c.filter_bytes)?;
            d.set_item("false_positive_rate", c.estimated_false_pos)?;
            d.set_item("max_false_positive_rate", c.max_estimated_false_pos)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("columns", columns)?;
    d.set_item("filters_kept", r.filters_kept)?;
    d.set_item("output_bytes", r.output_bytes)?;
    Ok(d)
}

/// `parquet_probe(path, column, value)`: which row groups of the Parquet file `path` may
/// hold `value` in `column`, by their stored split-block filters (any writer's), one dict
/// per row group in order: `row_group`, `rows` and `answer`, one of `"may_contain"` (the
/// row group must be read), `"absent"` (no row of it holds the value) and `"no_filter"`.
///
/// `value` is encoded as the column's physical type stores it: a `str` is the text of a
/// string column, or parsed for a numeric one; an `int` or `float` is the number; bytes are
/// the value's plain encoding as is.
#[pyfunction]
pub fn parquet_probe<'py>(
    py: Python<'py>,
    path: PathBuf,
    column: &str,
    value: &Bound<'py, PyAny>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let value = probe_value(value)?;
    let answers = py
        .detach(|| probe(&path, column, &value))
        .map_err(interop_err)?;
    answers.iter().map(|a| answer_dict(py, a)).collect()
}

/// A Python value as the value `probe` looks up.
fn probe_value(v: &Bound<'_, PyAny>) -> PyResult<ProbeValue> {
    if let Ok(s) = v.cast::<PyString>() {
        Ok(ProbeValue::Text(s.extract::<String>()?))
    } else if let Ok(b) = v.cast::<PyBytes>() {
        Ok(ProbeValue::Bytes(b.as_bytes().to_vec()))
    } else if v.is_instance_of::<PyByteArray>() || v.is_instance_of::<PyMemoryView>() {
        let b = v.py().get_type::<PyBytes>().call1((v,))?;
        Ok(ProbeValue::Bytes(b.cast::<PyBytes>()?.as_bytes().to_vec()))
    } else if v.is_instance_of::<PyBool>() {
        Err(PyTypeError::new_err(
            "a bool is not a value a Bloom filter column holds (BOOLEAN columns have none)",
        ))
    } else if v.is_instance_of::<PyInt>() || v.hasattr(pyo3::intern!(v.py(), "__index__"))? {
        let int = v.call_method0(pyo3::intern!(v.py(), "__index__"))?;
        if let Ok(i) = int.extract::<i64>() {
            Ok(ProbeValue::Int(i))
        } else if let Ok(u) = int.extract::<u64>() {
            Ok(ProbeValue::UInt(u))
        } else {
            Err(PyOverflowError::new_err(
                "int value out of range: -2**63 <= value < 2**64",
            ))
        }
    } else if v.is_instance_of::<PyFloat>() {
        Ok(ProbeValue::Float(v.extract::<f64>()?))
    } else {
        Err(PyTypeError::new_err(format!(
            "a value is str, bytes, int or float, not {}",
            v.get_type().name()?
        )))
    }
}

/// One row group's answer as a dict.
fn answer_dict<'py>(py: Python<'py>, a: &RowGroupAnswer) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("row_group", a.row_group)?;
    d.set_item("rows", a.rows)?;
    let answer = match a.answer {
        ProbeAnswer::MayContain => "may_contain",
        ProbeAnswer::Absent => "absent",
        ProbeAnswer::NoFilter => "no_filter",
    };
    d.set_item("answer", answer)?;
    Ok(d)
}

/// `parquet_filters(path)`: every column chunk of the Parquet file `path`, row group by
/// row group and column by column in schema order, as dicts: `row_group`, `column` (its
/// dotted path), `physical_type`, `rows` and `filter`, `None` when the chunk has no Bloom
/// filter, else a dict of `bitset_bytes`, `estimated_distinct` (estimated from its fill)
/// and `false_positive_rate` (exact, from its bits).
#[pyfunction]
pub fn parquet_filters(py: Python<'_>, path: PathBuf) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let infos = py.detach(|| filters(&path)).map_err(interop_err)?;
    infos.iter().map(|i| filter_dict(py, i)).collect()
}

/// One column chunk's filter summary as a dict.
fn filter_dict<'py>(py: Python<'py>, i: &ColumnFilterInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("row_group", i.row_group)?;
    d.set_item("column", &i.column)?;
    d.set_item("physical_type", &i.physical_type)?;
    d.set_item("rows", i.rows)?;
    match &i.filter {
        None => d.set_item("filter", py.None())?,
        Some(f) => {
            let fd = PyDict::new(py);
            fd.set_item("bitset_bytes", f.bitset_bytes)?;
            fd.set_item("estimated_distinct", f.estimated_distinct)?;
            fd.set_item("false_positive_rate", f.estimated_false_pos)?;
            d.set_item("filter", fd)?;
        }
    }
    Ok(d)
}
