//! What the other modules share: opening a file, finding a column, hashing a column's
//! values as Parquet hashes them, sizing a filter, and reading a stored filter.

use crate::error::{Error, Result};
use bloomforge_core::{parquet_hash, SplitBlockBloomFilter};
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::bloom_filter::Sbbf;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::errors::ParquetError;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet::schema::types::{ColumnDescriptor, SchemaDescriptor};
use std::fs::File;
use std::path::Path;

/// The largest bitset a Parquet writer stores (parquet-rs's `BITSET_MAX_LENGTH`, Arrow
/// C++'s `kMaximumBloomFilterBytes`): 128 MiB. Filters built here never exceed it.
pub const MAX_BITSET_BYTES: usize = 128 * 1024 * 1024;

/// The false-positive rate a filter is sized for when none is given.
pub const DEFAULT_FALSE_POS: f64 = 0.01;

/// 32-byte blocks in [`MAX_BITSET_BYTES`].
const MAX_BLOCKS: u64 = (MAX_BITSET_BYTES / 32) as u64;

/// Values decoded per call of the column reader.
const BATCH: usize = 8192;

/// Blocks of the split-block filter for `distinct_values` values at `false_pos`: core's
/// sizing ([`SplitBlockBloomFilter::new`]'s bits per key for the split-block layout),
/// rounded up to a power of two and capped at [`MAX_BITSET_BYTES`] / 32.
///
/// Arrow C++ (and so PyArrow) refuses a bitset whose length is not a power of two, and
/// rounding up only lowers the false-positive rate. Past the cap (4 Mi blocks, which hold
/// about 100 million distinct values at 1 %) the rate is above `false_pos`; the index report and
/// [`filters`](super::filters) give the rate each filter reaches.
///
/// ```
/// use bloomforge_interop::parquet::parquet_num_blocks;
/// assert_eq!(parquet_num_blocks(0, 0.01)?, 1);
/// // 1000 values take about 42 blocks at 1 %, rounded up to a power of two:
/// assert_eq!(parquet_num_blocks(1000, 0.01)?, 64);
/// assert!(parquet_num_blocks(1000, 1.5).is_err());
/// # Ok::<(), bloomforge_interop::Error>(())
/// ```
///
/// # Errors
/// [`Error::Core`] with core's validation error for a false-positive rate outside (0, 1)
/// or below what the split-block layout can reach.
pub fn parquet_num_blocks(distinct_values: u64, false_pos: f64) -> Result<u64> {
    Ok(Sizing::new(false_pos)?.num_blocks(distinct_values))
}

/// The split-block layout's bits per key at one false-positive rate, solved once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizing {
    bits_per_key: f64,
}

impl Sizing {
    /// Validates `false_pos` with core's own checks (a one-block filter sized for one key)
    /// and solves the layout's bits per key.
    pub(crate) fn new(false_pos: f64) -> Result<Self> {
        SplitBlockBloomFilter::new(1, false_pos)?;
        Ok(Self {
            bits_per_key: bloomforge_core::math::split_block_bits_per_key(false_pos, 8, 32),
        })
    }

    /// See [`parquet_num_blocks`].
    pub(crate) fn num_blocks(self, distinct_values: u64) -> u64 {
        let blocks = (distinct_values as f64 * self.bits_per_key / 256.0).ceil();
        // Past the cap (or NaN, which the checks above exclude) the cap applies.
        if blocks.is_nan() || blocks >= MAX_BLOCKS as f64 {
            return MAX_BLOCKS;
        }
        (blocks as u64).max(1).next_power_of_two().min(MAX_BLOCKS)
    }
}

/// Opens `path` for reading with the parquet crate, keeping the page encoding statistics
/// as the list the footer stores (not folded into a mask, which a rewrite would lose) and,
/// with `page_index`, the page indexes.
pub(crate) fn open(path: &Path, page_index: bool) -> Result<(File, SerializedFileReader<File>)> {
    let file = File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader_file = file.try_clone().map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut options = ReadOptionsBuilder::new().with_encoding_stats_as_mask(false);
    if page_index {
        options = options.with_page_index();
    }
    let reader = SerializedFileReader::new_with_options(reader_file, options.build())
        .map_err(|e| parquet_error(path, e))?;
    Ok((file, reader))
}

/// `Error::Parquet` for `path`.
pub(crate) fn parquet_error(path: &Path, source: ParquetError) -> Error {
    Error::Parquet {
        path: path.to_path_buf(),
        source,
    }
}

/// `Error::InvalidParquet` for `path`.
pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Error {
    Error::InvalidParquet {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The leaf columns' dotted paths.
pub(crate) fn leaf_names(schema: &SchemaDescriptor) -> Vec<String> {
    schema.columns().iter().map(|c| c.path().string()).collect()
}

/// The index of the top-level, non-repeated leaf column `name` in `schema`, checked to be
/// of a type whose values can be hashed.
///
/// # Errors
/// [`Error::InvalidParquet`] naming the column: missing (with the file's columns), a
/// group, nested or repeated, or of an unsupported type.
pub(crate) fn find_column(path: &Path, schema: &SchemaDescriptor, name: &str) -> Result<usize> {
    let columns = schema.columns();
    if let Some(i) = columns.iter().position(|c| c.path().string() == name) {
        let c = &columns[i];
        if c.path().parts().len() > 1 || c.max_rep_level() > 0 {
            return Err(invalid(
                path,
                format!(
                    "column {name:?} is nested or repeated (inside a struct, list or map); \
                     only top-level, non-repeated columns can be indexed"
                ),
            ));
        }
        ValueKind::of(c).map_err(|t| {
            invalid(
                path,
                format!(
                    "column {name:?} has the unsupported type {t}; supported: INT32, INT64, \
                     INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY"
                ),
            )
        })?;
        return Ok(i);
    }
    // A group (struct, list, map) of that name, or a column inside one.
    let is_group = columns.iter().any(|c| {
        let parts = c.path().parts();
        parts.len() > 1 && (parts[0] == name || c.path().string().starts_with(&format!("{name}.")))
    });
    if is_group {
        return Err(invalid(
            path,
            format!(
                "column {name:?} is nested (a struct, list or map); only top-level, \
                 non-repeated columns can be indexed"
            ),
        ));
    }
    Err(invalid(
        path,
        format!(
            "no column {name:?}; the file has: {}",
            leaf_names(schema).join(", ")
        ),
    ))
}

/// How a column's values are hashed: Parquet hashes a value's plain encoding (for byte
/// arrays, the bytes without their length prefix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueKind {
    /// `INT32`: four little-endian bytes; `unsigned` for `UINT_8/16/32` columns, whose
    /// values are the `u32` the bits hold.
    Int32 { unsigned: bool },
    /// `INT64`: eight little-endian bytes; `unsigned` for `UINT_64`.
    Int64 { unsigned: bool },
    /// `INT96`: twelve bytes (three little-endian `u32`).
    Int96,
    /// `FLOAT`: the `f32`'s four little-endian bytes.
    Float,
    /// `DOUBLE`: the `f64`'s eight little-endian bytes.
    Double,
    /// `BYTE_ARRAY`: the bytes.
    ByteArray,
    /// `FIXED_LEN_BYTE_ARRAY(n)`: the `n` bytes; `uuid` when the logical type is UUID.
    FixedLen { len: usize, uuid: bool },
}

impl ValueKind {
    /// The kind of a leaf column, or its type's name when values of it cannot be hashed
    /// here (`BOOLEAN`: two values, which no reader probes a filter for).
    pub(crate) fn of(c: &ColumnDescriptor) -> std::result::Result<Self, String> {
        let unsigned = match c.logical_type_ref() {
            Some(LogicalType::Integer(t)) => !t.is_signed,
            _ => matches!(
                c.converted_type(),
                ConvertedType::UINT_8
                    | ConvertedType::UINT_16
                    | ConvertedType::UINT_32
                    | ConvertedType::UINT_64
            ),
        };
        Ok(match c.physical_type() {
            PhysicalType::INT32 => Self::Int32 { unsigned },
            PhysicalType::INT64 => Self::Int64 { unsigned },
            PhysicalType::INT96 => Self::Int96,
            PhysicalType::FLOAT => Self::Float,
            PhysicalType::DOUBLE => Self::Double,
            PhysicalType::BYTE_ARRAY => Self::ByteArray,
            PhysicalType::FIXED_LEN_BYTE_ARRAY => Self::FixedLen {
                len: usize::try_from(c.type_length()).unwrap_or(0),
                uuid: matches!(c.logical_type_ref(), Some(LogicalType::Uuid)),
            },
            PhysicalType::BOOLEAN => return Err("BOOLEAN".to_string()),
        })
    }
}

/// The physical type's name as Parquet spells it (`FIXED_LEN_BYTE_ARRAY(16)` with its
/// length).
pub(crate) fn type_name(c: &ColumnDescriptor) -> String {
    match c.physical_type() {
        PhysicalType::FIXED_LEN_BYTE_ARRAY => format!("FIXED_LEN_BYTE_ARRAY({})", c.type_length()),
        t => t.to_string(),
    }
}

/// Appends the [`parquet_hash`] of every non-null value of column `column` of a row group
/// to `out`, reading the chunk with the parquet crate's typed column reader in batches of
/// [`BATCH`] values.
///
/// A corrupt chunk can make the parquet crate panic rather than return an error; the
/// panic is caught and returned as a [`ParquetError`], so a bad file is an error, not a
/// crash of the caller.
pub(crate) fn hash_column(
    row_group: &dyn RowGroupReader,
    column: usize,
    max_def_level: i16,
    out: &mut Vec<u64>,
) -> std::result::Result<(), ParquetError> {
    let run = || -> std::result::Result<(), ParquetError> {
        match row_group.get_column_reader(column)? {
            ColumnReader::Int32ColumnReader(r) => {
                read_hashes(r, max_def_level, out, |v| parquet_hash(&v.to_le_bytes()))
            }
            ColumnReader::Int64ColumnReader(r) => {
                read_hashes(r, max_def_level, out, |v| parquet_hash(&v.to_le_bytes()))
            }
            ColumnReader::Int96ColumnReader(r) => read_hashes(r, max_def_level, out, |v| {
                let mut bytes = [0u8; 12];
                for (chunk, word) in bytes.chunks_exact_mut(4).zip(v.data()) {
                    chunk.copy_from_slice(&word.to_le_bytes());
                }
                parquet_hash(&bytes)
            }),
            ColumnReader::FloatColumnReader(r) => {
                read_hashes(r, max_def_level, out, |v| parquet_hash(&v.to_le_bytes()))
            }
            ColumnReader::DoubleColumnReader(r) => {
                read_hashes(r, max_def_level, out, |v| parquet_hash(&v.to_le_bytes()))
            }
            ColumnReader::ByteArrayColumnReader(r) => {
                read_hashes(r, max_def_level, out, |v| parquet_hash(v.data()))
            }
            ColumnReader::FixedLenByteArrayColumnReader(r) => {
                read_hashes(r, max_def_level, out, |v| parquet_hash(v.data()))
            }
            ColumnReader::BoolColumnReader(_) => Err(ParquetError::General(
                "BOOLEAN columns cannot be indexed".to_string(),
            )),
        }
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            Err(ParquetError::General(format!(
                "corrupt column chunk (the reader failed: {what})"
            )))
        }
    }
}

fn read_hashes<T: DataType>(
    mut reader: ColumnReaderImpl<T>,
    max_def_level: i16,
    out: &mut Vec<u64>,
    hash: impl Fn(&T::T) -> u64,
) -> std::result::Result<(), ParquetError> {
    let mut values: Vec<T::T> = Vec::with_capacity(BATCH);
    let mut def_levels: Vec<i16> = Vec::with_capacity(BATCH);
    loop {
        values.clear();
        def_levels.clear();
        let defs = (max_def_level > 0).then_some(&mut def_levels);
        let (records, _, _) = reader.read_records(BATCH, defs, None, &mut values)?;
        out.extend(values.iter().map(&hash));
        if records == 0 {
            return Ok(());
        }
    }
}

/// The filter a writer stored for a column chunk, if any.
pub(crate) fn read_sbbf(
    path: &Path,
    file: &File,
    chunk: &ColumnChunkMetaData,
    row_group: usize,
) -> Result<Option<Sbbf>> {
    if let Some(len) = chunk.bloom_filter_length() {
        // The header is a few bytes; anything longer than the largest bitset plus a
        // generous header is not a filter a writer produced.
        if usize::try_from(len).map_or(true, |l| l > MAX_BITSET_BYTES + 1024) {
            return Err(invalid(
                path,
                format!(
                    "row group {row_group}, column {:?}: Bloom filter of {len} bytes \
                     (at most {MAX_BITSET_BYTES})",
                    chunk.column_path().string()
                ),
            ));
        }
    }
    Sbbf::read_from_column_chunk(chunk, file).map_err(|e| {
        invalid(
            path,
            format!(
                "row group {row_group}, column {:?}: unreadable Bloom filter: {e}",
                chunk.column_path().string()
            ),
        )
    })
}

/// The stored filter of a column chunk as core's split-block filter (bit for bit the
/// stored bitset), if any.
pub(crate) fn read_filter(
    path: &Path,
    file: &File,
    chunk: &ColumnChunkMetaData,
    row_group: usize,
) -> Result<Option<SplitBlockBloomFilter>> {
    let Some(sbbf) = read_sbbf(path, file, chunk, row_group)? else {
        return Ok(None);
    };
    let mut bitset = Vec::with_capacity(sbbf.num_blocks() * 32);
    sbbf.write_bitset(&mut bitset)
        .map_err(|e| parquet_error(path, e))?;
    SplitBlockBloomFilter::from_parquet_bitset(&bitset)
        .map(Some)
        .map_err(|e| {
            invalid(
                path,
                format!(
                    "row group {row_group}, column {:?}: bad Bloom filter: {e}",
                    chunk.column_path().string()
                ),
            )
        })
}

/// The Parquet bitset of a filter built by core, as the parquet crate's writer takes it.
pub(crate) fn to_sbbf(filter: &SplitBlockBloomFilter) -> Sbbf {
    #[cfg(target_endian = "little")]
    {
        Sbbf::new(filter.as_bytes())
    }
    #[cfg(not(target_endian = "little"))]
    {
        Sbbf::new(&filter.to_parquet_bytes())
    }
}

/// The rows of a row group, never negative.
pub(crate) fn num_rows(row_group: &parquet::file::metadata::RowGroupMetaData) -> u64 {
    u64::try_from(row_group.num_rows()).unwrap_or(0)
}

/// Opens a row group of `reader`, naming the file in the error.
pub(crate) fn row_group_reader<'a>(
    path: &Path,
    reader: &'a SerializedFileReader<File>,
    index: usize,
) -> Result<Box<dyn RowGroupReader + 'a>> {
    reader
        .get_row_group(index)
        .map_err(|e| parquet_error(path, e))
}
