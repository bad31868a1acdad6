//! [`probe`] and [`filters`]: what a Parquet file's stored filters answer and how full they
//! are, whichever writer stored them.

use super::column::{find_column, invalid, num_rows, open, read_filter, type_name, ValueKind};
use crate::error::Result;
use bloomforge_core::parquet_hash;
use parquet::file::reader::FileReader;
use std::path::Path;

/// A value to look up in a column's filters. The bytes hashed follow the column's physical
/// type (Parquet hashes a value's plain encoding), so the same value can be given as text
/// (as a command line does) or typed:
///
/// | column | `Text` | typed |
/// |---|---|---|
/// | `BYTE_ARRAY` | its UTF-8 bytes | `Bytes` |
/// | `FIXED_LEN_BYTE_ARRAY(n)` | its bytes if exactly `n`; else `0x` and `2n` hex digits; a UUID column also takes `8-4-4-4-12` hex | `Bytes` of length `n` |
/// | `INT32`, `INT64` | a decimal integer, which must fit the column (`UINT_32`/`UINT_64` columns: unsigned) | `Int`, `UInt` |
/// | `FLOAT`, `DOUBLE` | a decimal number, rounded to the column's width | `Float`; `Int`/`UInt` when exact |
/// | `INT96` | `0x` and 24 hex digits | `Bytes` of length 12 |
///
/// `Bytes` is always taken as the plain encoding itself, when its length fits the type
/// (4 bytes for `INT32`, for instance). Integers and decimals are the physical values: a
/// `DATE` column holds days, a `DECIMAL(10, 2)` stored as `INT64` holds hundredths.
///
/// ```
/// use bloomforge_interop::parquet::ProbeValue;
/// assert_eq!(ProbeValue::from("a.org"), ProbeValue::Text("a.org".to_string()));
/// assert_eq!(ProbeValue::from(7i64), ProbeValue::Int(7));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProbeValue {
    /// Text, parsed for the column's type (see the table).
    Text(String),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// The value's plain encoding, as is.
    Bytes(Vec<u8>),
}

impl From<&str> for ProbeValue {
    fn from(s: &str) -> Self {
        Self::Text(s.to_string())
    }
}

impl From<String> for ProbeValue {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<i64> for ProbeValue {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<i32> for ProbeValue {
    fn from(v: i32) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<u64> for ProbeValue {
    fn from(v: u64) -> Self {
        Self::UInt(v)
    }
}

impl From<u32> for ProbeValue {
    fn from(v: u32) -> Self {
        Self::UInt(u64::from(v))
    }
}

impl From<f64> for ProbeValue {
    fn from(v: f64) -> Self {
        Self::Float(v)
    }
}

impl From<&[u8]> for ProbeValue {
    fn from(b: &[u8]) -> Self {
        Self::Bytes(b.to_vec())
    }
}

impl From<Vec<u8>> for ProbeValue {
    fn from(b: Vec<u8>) -> Self {
        Self::Bytes(b)
    }
}

/// What a row group's filter says about a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeAnswer {
    /// The filter may hold the value: the row group must be read.
    MayContain,
    /// The filter does not hold the value: no row of the row group has it.
    Absent,
    /// The column's chunk has no filter in this row group.
    NoFilter,
}

/// One row group's answer of [`probe`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RowGroupAnswer {
    /// The row group's index.
    pub row_group: usize,
    /// Its rows.
    pub rows: u64,
    /// What its filter says.
    pub answer: ProbeAnswer,
}

/// Which row groups of the Parquet file `path` may hold `value` in `column`, by their
/// stored split-block filters (any writer's: bloomforge's, parquet-rs's, DuckDB's,
/// Spark's), one answer per row group in order.
///
/// The value is encoded as the column's physical type stores it (see [`ProbeValue`]),
/// hashed with [`parquet_hash`] and looked up in each filter with core's
/// [`SplitBlockBloomFilter`](bloomforge_core::SplitBlockBloomFilter), as Parquet readers
/// do when they skip row groups. Memory: one filter at a time.
///
/// # Errors
/// [`Error::Io`](crate::Error::Io) / [`Error::Parquet`](crate::Error::Parquet) for a file
/// that cannot be read or is not Parquet; [`Error::InvalidParquet`](crate::Error::InvalidParquet)
/// for a missing, nested or `BOOLEAN` column, a value that does not fit the column (an
/// integer out of range, text that is not a number, bytes of the wrong length) or an
/// unreadable filter.
pub fn probe(
    path: impl AsRef<Path>,
    column: &str,
    value: &ProbeValue,
) -> Result<Vec<RowGroupAnswer>> {
    let path = path.as_ref();
    let (file, reader) = open(path, false)?;
    let metadata = reader.metadata();
    let schema = metadata.file_metadata().schema_descr();
    let col = find_column(path, schema, column)?;
    let descr = schema.column(col);
    let kind = ValueKind::of(&descr).map_err(|t| invalid(path, t))?;
    let bytes = encode(kind, value).map_err(|why| {
        invalid(
            path,
            format!("column {column:?} is {}: {why}", type_name(&descr)),
        )
    })?;
    let hash = parquet_hash(&bytes);
    let mut answers = Vec::with_capacity(metadata.num_row_groups());
    for (rg, row_group) in metadata.row_groups().iter().enumerate() {
        let answer = match read_filter(path, &file, row_group.column(col), rg)? {
            None => ProbeAnswer::NoFilter,
            Some(f) if f.contains_hash(hash) => ProbeAnswer::MayContain,
            Some(_) => ProbeAnswer::Absent,
        };
        answers.push(RowGroupAnswer {
            row_group: rg,
            rows: num_rows(row_group),
            answer,
        });
    }
    Ok(answers)
}

/// The plain encoding of `value` in a column of `kind`, or why it cannot be one.
fn encode(kind: ValueKind, value: &ProbeValue) -> std::result::Result<Vec<u8>, String> {
    match (kind, value) {
        (_, ProbeValue::Bytes(b)) => {
            let want = match kind {
                ValueKind::Int32 { .. } | ValueKind::Float => Some(4),
                ValueKind::Int64 { .. } | ValueKind::Double => Some(8),
                ValueKind::Int96 => Some(12),
                ValueKind::FixedLen { len, .. } => Some(len),
                ValueKind::ByteArray => None,
            };
            match want {
                Some(n) if n != b.len() => Err(format!("a value is {n} bytes, {} given", b.len())),
                _ => Ok(b.clone()),
            }
        }
        (ValueKind::ByteArray, ProbeValue::Text(s)) => Ok(s.as_bytes().to_vec()),
        (ValueKind::FixedLen { len, uuid }, ProbeValue::Text(s)) => {
            if s.len() == len {
                return Ok(s.as_bytes().to_vec());
            }
            if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                if let Some(b) = from_hex(hex).filter(|b| b.len() == len) {
                    return Ok(b);
                }
            }
            if uuid {
                if let Some(b) = parse_uuid(s) {
                    return Ok(b);
                }
            }
            Err(format!(
                "{s:?} is {} bytes; give exactly {len} bytes, or 0x and {} hex digits{}",
                s.len(),
                2 * len,
                if uuid { ", or a UUID" } else { "" }
            ))
        }
        (ValueKind::Int96, ProbeValue::Text(s)) => s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .and_then(from_hex)
            .filter(|b| b.len() == 12)
            .ok_or_else(|| format!("{s:?} is not 0x and 24 hex digits (the 12 bytes of an INT96)")),
        (ValueKind::Int32 { unsigned }, _) => {
            let v = integer(value, unsigned)?;
            if unsigned {
                u32::try_from(v)
                    .map(|x| x.to_le_bytes().to_vec())
                    .map_err(|_| format!("{v} is out of range (0..={})", u32::MAX))
            } else {
                i32::try_from(v)
                    .map(|x| x.to_le_bytes().to_vec())
                    .map_err(|_| format!("{v} is out of range ({}..={})", i32::MIN, i32::MAX))
            }
        }
        (ValueKind::Int64 { unsigned }, _) => {
            let v = integer(value, unsigned)?;
            if unsigned {
                u64::try_from(v)
                    .map(|x| x.to_le_bytes().to_vec())
                    .map_err(|_| format!("{v} is out of range (0..={})", u64::MAX))
            } else {
                i64::try_from(v)
                    .map(|x| x.to_le_bytes().to_vec())
                    .map_err(|_| format!("{v} is out of range ({}..={})", i64::MIN, i64::MAX))
            }
        }
        (ValueKind::Float, _) => {
            let v: f32 = match value {
                ProbeValue::Text(s) => s
                    .trim()
                    .parse()
                    .map_err(|_| format!("{s:?} is not a number"))?,
                ProbeValue::Float(x) => *x as f32,
                _ => exact_float(value, |x| (x as f32) as f64, |x| x as f32)?,
            };
            Ok(v.to_le_bytes().to_vec())
        }
        (ValueKind::Double, _) => {
            let v: f64 = match value {
                ProbeValue::Text(s) => s
                    .trim()
                    .parse()
                    .map_err(|_| format!("{s:?} is not a number"))?,
                ProbeValue::Float(x) => *x,
                _ => exact_float(value, |x| x, |x| x)?,
            };
            Ok(v.to_le_bytes().to_vec())
        }
        (ValueKind::ByteArray | ValueKind::FixedLen { .. } | ValueKind::Int96, _) => {
            Err("give the value as text or bytes".to_string())
        }
    }
}

/// The integer a value holds (text parsed), as an `i128` that holds both `i64` and `u64`.
fn integer(value: &ProbeValue, unsigned: bool) -> std::result::Result<i128, String> {
    match value {
        ProbeValue::Int(v) => Ok(i128::from(*v)),
        ProbeValue::UInt(v) => Ok(i128::from(*v)),
        ProbeValue::Text(s) => s.trim().parse::<i128>().map_err(|_| {
            format!(
                "{s:?} is not {} integer",
                if unsigned { "an unsigned" } else { "an" }
            )
        }),
        ProbeValue::Float(x) => Err(format!("{x} is not an integer")),
        ProbeValue::Bytes(_) => Err("bytes are taken as they are".to_string()),
    }
}

/// An integer value as a float, refused when the float type cannot hold it exactly.
fn exact_float<T>(
    value: &ProbeValue,
    round_trip: impl Fn(f64) -> f64,
    to: impl Fn(f64) -> T,
) -> std::result::Result<T, String> {
    let v = match value {
        ProbeValue::Int(v) => *v as f64,
        ProbeValue::UInt(v) => *v as f64,
        _ => return Err("give a number".to_string()),
    };
    let exact = match value {
        ProbeValue::Int(i) => round_trip(v) as i128 == i128::from(*i),
        ProbeValue::UInt(u) => round_trip(v) as i128 == i128::from(*u),
        _ => false,
    };
    if exact {
        Ok(to(v))
    } else {
        Err(format!("{value:?} has no exact floating-point value"))
    }
}

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

fn parse_uuid(s: &str) -> Option<Vec<u8>> {
    let groups: Vec<&str> = s.split('-').collect();
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if lens != [8, 4, 4, 4, 12] {
        return None;
    }
    from_hex(&groups.concat())
}

/// The filter stored for one column chunk, summarised by [`filters`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct FilterSummary {
    /// Bytes of the bitset (a power of two for the filters Parquet writers store).
    pub bitset_bytes: u64,
    /// Distinct values the filter holds, estimated from each block's fill (a filter cannot
    /// count its values exactly).
    pub estimated_distinct: f64,
    /// The chance that a value not in the chunk is reported present, computed exactly
    /// from the filter's bits: the mean over its 256-bit blocks of the product of its eight
    /// words' fill (core's `expected_false_pos`).
    pub estimated_false_pos: f64,
}

/// One row group's column chunk in the list [`filters`] returns.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ColumnFilterInfo {
    /// The row group's index.
    pub row_group: usize,
    /// The column's dotted path.
    pub column: String,
    /// Its physical type (`BYTE_ARRAY`, `INT64`, `FIXED_LEN_BYTE_ARRAY(16)`...).
    pub physical_type: String,
    /// The row group's rows.
    pub rows: u64,
    /// The stored filter, if the chunk has one.
    pub filter: Option<FilterSummary>,
}

/// Every column chunk of the Parquet file `path`, row group by row group and column by
/// column in schema order, with the split-block filter stored for it (any writer's) and
/// its fill. Memory: one filter at a time.
///
/// # Errors
/// [`Error::Io`](crate::Error::Io) / [`Error::Parquet`](crate::Error::Parquet) for a file
/// that cannot be read or is not Parquet; [`Error::InvalidParquet`](crate::Error::InvalidParquet)
/// for an unreadable filter.
pub fn filters(path: impl AsRef<Path>) -> Result<Vec<ColumnFilterInfo>> {
    let path = path.as_ref();
    let (file, reader) = open(path, false)?;
    let metadata = reader.metadata();
    let mut out = Vec::new();
    for (rg, row_group) in metadata.row_groups().iter().enumerate() {
        for chunk in row_group.columns() {
            let filter = read_filter(path, &file, chunk, rg)?.map(|f| FilterSummary {
                bitset_bytes: f.num_blocks() as u64 * 32,
                estimated_distinct: f.estimated_len(),
                estimated_false_pos: f.expected_false_pos(),
            });
            out.push(ColumnFilterInfo {
                row_group: rg,
                column: chunk.column_path().string(),
                physical_type: type_name(chunk.column_descr()),
                rows: num_rows(row_group),
                filter,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_encoded_as_the_column_stores_them() {
        let i32s = ValueKind::Int32 { unsigned: false };
        let u32s = ValueKind::Int32 { unsigned: true };
        let i64s = ValueKind::Int64 { unsigned: false };
        let u64s = ValueKind::Int64 { unsigned: true };
        let text = |s: &str| ProbeValue::Text(s.to_string());
        assert_eq!(encode(i32s, &text("-7")).unwrap(), (-7i32).to_le_bytes());
        assert_eq!(
            encode(i32s, &ProbeValue::Int(7)).unwrap(),
            7i32.to_le_bytes()
        );
        assert!(encode(i32s, &text("3000000000"))
            .unwrap_err()
            .contains("out of range"));
        assert_eq!(
            encode(u32s, &text("3000000000")).unwrap(),
            3_000_000_000u32.to_le_bytes()
        );
        assert!(encode(u32s, &text("-1")).is_err());
        assert!(encode(i32s, &text("x"))
            .unwrap_err()
            .contains("not an integer"));
        assert_eq!(encode(i64s, &text("-1")).unwrap(), (-1i64).to_le_bytes());
        assert!(encode(i64s, &ProbeValue::UInt(u64::MAX)).is_err());
        assert_eq!(
            encode(u64s, &ProbeValue::UInt(u64::MAX)).unwrap(),
            u64::MAX.to_le_bytes()
        );
        assert!(encode(i64s, &text("99999999999999999999")).is_err());
        assert_eq!(
            encode(ValueKind::Float, &text("1.5")).unwrap(),
            1.5f32.to_le_bytes()
        );
        assert_eq!(
            encode(ValueKind::Double, &ProbeValue::Int(3)).unwrap(),
            3f64.to_le_bytes()
        );
        assert!(encode(ValueKind::Float, &ProbeValue::Int((1 << 24) + 1)).is_err());
        assert_eq!(encode(ValueKind::ByteArray, &text("ab")).unwrap(), b"ab");
        assert!(encode(ValueKind::ByteArray, &ProbeValue::Int(1)).is_err());
        let fixed = ValueKind::FixedLen {
            len: 2,
            uuid: false,
        };
        assert_eq!(encode(fixed, &text("ab")).unwrap(), b"ab");
        assert_eq!(encode(fixed, &text("0x0aff")).unwrap(), [0x0a, 0xff]);
        assert!(encode(fixed, &text("abc"))
            .unwrap_err()
            .contains("exactly 2 bytes"));
        let uuid = ValueKind::FixedLen {
            len: 16,
            uuid: true,
        };
        let u = encode(uuid, &text("00112233-4455-6677-8899-aabbccddeeff")).unwrap();
        assert_eq!(u[0], 0x00);
        assert_eq!(u[15], 0xff);
        assert_eq!(
            encode(ValueKind::Int96, &text("0x000000000000000000000001")).unwrap()[11],
            1
        );
        assert!(encode(i64s, &ProbeValue::Bytes(vec![0; 4])).is_err());
        assert_eq!(
            encode(i64s, &ProbeValue::Bytes(vec![1; 8])).unwrap(),
            [1; 8]
        );
    }
}
