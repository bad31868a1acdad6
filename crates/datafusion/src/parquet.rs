//! Parquet's split-block Bloom filters (SBBF) as bloomforge filters, both ways.
//!
//! A Parquet writer may store, per row group and column, a split-block Bloom filter of the
//! column's values: a small Thrift header and a bitset. That bitset is bit for bit a
//! [`SplitBlockBloomFilter`] fed [`parquet_hash`]es (XXH64, seed 0, of each value's plain
//! encoding), so this module moves filters between the two without rebuilding them:
//!
//! * [`read_row_group_filters`] / [`read_column_filter`]: the filter(s) a Parquet writer
//!   stored for a column, as [`ParquetColumnFilter`]s (a core [`SplitBlockBloomFilter`] plus
//!   the column's physical type, which decides how a value is hashed);
//! * [`write_parquet`]: writes record batches to Parquet with the parquet crate's writer,
//!   storing for the chosen columns a filter built by bloomforge ([`build_filter`]), which
//!   every Parquet reader (parquet-rs, DataFusion, Spark, Trino, DuckDB) uses for pruning;
//! * the SQL function [`bloom_parquet_contains(file, column, expr)`](BloomParquetContains)
//!   and [`ParquetFilterUdf`], a one-argument function bound to a file's filter.
//!
//! ```
//! use bloomforge_datafusion::parquet::{
//!     build_filter, read_column_filter, write_parquet, BloomColumn,
//! };
//! use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
//! use std::sync::Arc;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("urls.parquet");
//! let urls = StringArray::from(vec!["a.org", "b.org"]);
//! let batch = RecordBatch::try_from_iter([
//!     ("url", Arc::new(urls.clone()) as ArrayRef),
//!     ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
//! ])?;
//! // One row group; bloomforge builds the url column's filter at 1 % false positives.
//! write_parquet(
//!     std::fs::File::create(&path)?,
//!     &[batch],
//!     &[BloomColumn::new("url", 0.01)],
//!     Default::default(),
//! )?;
//!
//! // Read it back (any Parquet writer's filter reads the same way).
//! let filter = read_column_filter(&path, "url")?;
//! assert!(filter.contains_bytes(b"a.org")?);
//! // Its bits are bloomforge's build of the column's values, as the file stores them.
//! assert_eq!(filter.filter(), &build_filter(&urls, 2, 0.01)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Hashing
//!
//! Parquet hashes the plain encoding of the value as stored, so the physical type matters:
//!
//! | Arrow type written | Parquet physical type | bytes hashed |
//! |---|---|---|
//! | `Int8`, `Int16`, `Int32`, `UInt8`, `UInt16` | `INT32` | the value as a little-endian `i32` |
//! | `UInt32` | `INT32` | its four little-endian bytes (Parquet stores them as an `i32`) |
//! | `Int64`, `UInt64` | `INT64` | eight little-endian bytes |
//! | `Utf8`, `LargeUtf8`, `Utf8View`, `Binary`, `LargeBinary`, `BinaryView` | `BYTE_ARRAY` | the bytes |
//! | `FixedSizeBinary(n)` | `FIXED_LEN_BYTE_ARRAY(n)` | the bytes |
//!
//! Queries follow the column, not the key's Arrow type: an `Int64` key asks an `INT32`
//! column with its `i32` bytes, and answers `false` for a value no `INT32` can hold; a
//! string and a binary key with the same bytes are the same key (Parquet does not tell them
//! apart). An integer key that fits both as `i32` and as `u32` bits (a non-negative value
//! below 2^31) is one key; a value between 2^31 and 2^32 is asked as the `u32` an `UInt32`
//! column stores, which for an `Int32` column can only add a false positive.
//!
//! ## Copies
//!
//! Reading costs one read of the filter's bytes and one copy into the filter's aligned
//! blocks. The bitset sits at an arbitrary file offset behind a variable-length Thrift
//! header, so it cannot be borrowed in place as 32-byte-aligned blocks; core's zero-copy
//! `SplitBlockBloomFilterView` reads bloomforge's own format, whose header keeps the
//! payload aligned. Writing hands the filter's bitset to the parquet crate's writer
//! (`Sbbf::new`, one copy), which writes it as it would its own filter.

use crate::error::{BloomUdfError, Result};
use crate::keys::KEY_TYPES;
use bloomforge_core::{parquet_hash, ParquetHasher, SplitBlockBloomFilter};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, BooleanBufferBuilder, RecordBatch,
};
use datafusion::arrow::datatypes::{
    DataType, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type,
    UInt8Type,
};
use datafusion::common::{exec_err, plan_err, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The parquet crate (version 59, DataFusion 55's) that [`write_parquet`] takes
/// [`WriterProperties`] from.
pub use ::parquet as parquet_rs;

use ::parquet::arrow::arrow_writer::{compute_leaves, ArrowRowGroupWriterFactory};
use ::parquet::arrow::ArrowSchemaConverter;
use ::parquet::basic::Type as PhysicalTypeRs;
use ::parquet::bloom_filter::Sbbf;
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use ::parquet::file::properties::WriterProperties;
use ::parquet::file::writer::SerializedFileWriter;

/// The SQL name of the scalar function that probes a Parquet file's filter.
pub const BLOOM_PARQUET_CONTAINS: &str = "bloom_parquet_contains";
/// The SQL name of the scalar function that returns a Parquet file's filter as bytes.
pub const BLOOM_PARQUET_FILTER: &str = "bloom_parquet_filter";

/// The largest bitset Parquet writers produce (parquet-rs's `BITSET_MAX_LENGTH`, 128 MiB);
/// larger stored filters are refused before anything is allocated.
pub const MAX_BITSET_BYTES: usize = 128 * 1024 * 1024;

/// The Parquet physical type of a column, which decides the bytes a value is hashed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PhysicalType {
    /// `BOOLEAN` (filters can be read; keys cannot be hashed here).
    Boolean,
    /// `INT32`: integers hashed as four little-endian bytes.
    Int32,
    /// `INT64`: integers hashed as eight little-endian bytes.
    Int64,
    /// `INT96` (filters can be read; keys cannot be hashed here).
    Int96,
    /// `FLOAT` (filters can be read; keys cannot be hashed here).
    Float,
    /// `DOUBLE` (filters can be read; keys cannot be hashed here).
    Double,
    /// `BYTE_ARRAY`: strings and binaries hashed as their bytes.
    ByteArray,
    /// `FIXED_LEN_BYTE_ARRAY(n)`: values of exactly `n` bytes, hashed as those bytes.
    FixedLenByteArray(usize),
}

impl PhysicalType {
    fn of_column(t: PhysicalTypeRs, type_length: i32) -> Self {
        match t {
            PhysicalTypeRs::BOOLEAN => Self::Boolean,
            PhysicalTypeRs::INT32 => Self::Int32,
            PhysicalTypeRs::INT64 => Self::Int64,
            PhysicalTypeRs::INT96 => Self::Int96,
            PhysicalTypeRs::FLOAT => Self::Float,
            PhysicalTypeRs::DOUBLE => Self::Double,
            PhysicalTypeRs::BYTE_ARRAY => Self::ByteArray,
            PhysicalTypeRs::FIXED_LEN_BYTE_ARRAY => {
                Self::FixedLenByteArray(usize::try_from(type_length).unwrap_or(0))
            }
        }
    }

    /// The core hasher of a column of this type (XXH64 of the plain encoding, recorded
    /// with the type in bloomforge's format).
    pub fn hasher(self) -> ParquetHasher {
        let (code, length) = match self {
            Self::Boolean => (0, 0),
            Self::Int32 => (1, 0),
            Self::Int64 => (2, 0),
            Self::Int96 => (3, 0),
            Self::Float => (4, 0),
            Self::Double => (5, 0),
            Self::ByteArray => (6, 0),
            // A length past u32 cannot come from a Parquet footer (an i32).
            Self::FixedLenByteArray(n) => (7, u32::try_from(n).unwrap_or(u32::MAX)),
        };
        ParquetHasher::new(code, length).unwrap_or(ParquetHasher::BYTE_ARRAY)
    }

    /// The type a [`ParquetHasher`] records.
    pub fn of_hasher(h: ParquetHasher) -> Self {
        match h.physical_type() {
            0 => Self::Boolean,
            1 => Self::Int32,
            2 => Self::Int64,
            3 => Self::Int96,
            4 => Self::Float,
            5 => Self::Double,
            6 => Self::ByteArray,
            // `ParquetHasher::new` admits 0..=7 only.
            _ => Self::FixedLenByteArray(h.type_length() as usize),
        }
    }

    /// The physical type the parquet crate's Arrow writer stores an Arrow type as, for the
    /// types whose values [`build_filter`] hashes (see the [module table](self#hashing)).
    pub fn of_arrow(t: &DataType) -> Option<Self> {
        Some(match t {
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32 => Self::Int32,
            DataType::Int64 | DataType::UInt64 => Self::Int64,
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView => Self::ByteArray,
            DataType::FixedSizeBinary(n) => Self::FixedLenByteArray(usize::try_from(*n).ok()?),
            _ => return None,
        })
    }
}

/// What a key hashes to in a column of some physical type.
enum KeyHash {
    /// The Parquet hash of the key's plain encoding in that column.
    Hash(u64),
    /// No value of that column can equal the key (an integer out of the column's range, a
    /// byte string of the wrong fixed length): certainly absent.
    Impossible,
}

/// Whether keys of Arrow type `t` can be asked of (or written to) a column of `physical`.
fn key_type_fits(t: &DataType, physical: PhysicalType) -> bool {
    let int = t.is_integer();
    // The byte-string key types of `bloom_contains`, and fixed-size binaries.
    let bytes = matches!(t, DataType::FixedSizeBinary(_)) || (crate::keys::is_key_type(t) && !int);
    match physical {
        PhysicalType::Int32 | PhysicalType::Int64 => int,
        PhysicalType::ByteArray | PhysicalType::FixedLenByteArray(_) => bytes,
        _ => false,
    }
}

const PARQUET_KEY_TYPES: &str = "integer keys (Int8..Int64, UInt8..UInt64) for INT32/INT64 \
     columns; Utf8, LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView, FixedSizeBinary \
     keys for BYTE_ARRAY/FIXED_LEN_BYTE_ARRAY columns";

fn signed_hash(v: i64, physical: PhysicalType) -> KeyHash {
    match physical {
        PhysicalType::Int32 => {
            if let Ok(x) = i32::try_from(v) {
                KeyHash::Hash(parquet_hash(&x.to_le_bytes()))
            } else if let Ok(x) = u32::try_from(v) {
                KeyHash::Hash(parquet_hash(&x.to_le_bytes()))
            } else {
                KeyHash::Impossible
            }
        }
        _ => KeyHash::Hash(parquet_hash(&v.to_le_bytes())),
    }
}

fn unsigned_hash(v: u64, physical: PhysicalType) -> KeyHash {
    match physical {
        PhysicalType::Int32 => match u32::try_from(v) {
            // Below 2^31 these are also the i32's bytes; above, the bits UInt32 stores.
            Ok(x) => KeyHash::Hash(parquet_hash(&x.to_le_bytes())),
            Err(_) => KeyHash::Impossible,
        },
        _ => KeyHash::Hash(parquet_hash(&v.to_le_bytes())),
    }
}

fn bytes_hash(b: &[u8], physical: PhysicalType) -> KeyHash {
    match physical {
        PhysicalType::FixedLenByteArray(n) if b.len() != n => KeyHash::Impossible,
        _ => KeyHash::Hash(parquet_hash(b)),
    }
}

/// Calls `f(row, hash)` for every non-null row of `array`, hashed as a value of a
/// `physical` column. The caller has checked [`key_type_fits`].
fn for_each_key(array: &dyn Array, physical: PhysicalType, mut f: impl FnMut(usize, KeyHash)) {
    macro_rules! each {
        ($arr:expr, |$v:ident| $hash:expr) => {{
            let arr = $arr;
            for i in 0..arr.len() {
                if arr.is_valid(i) {
                    let $v = arr.value(i);
                    f(i, $hash);
                }
            }
        }};
    }
    match array.data_type() {
        DataType::Int8 => each!(array.as_primitive::<Int8Type>(), |v| signed_hash(
            i64::from(v),
            physical
        )),
        DataType::Int16 => each!(array.as_primitive::<Int16Type>(), |v| signed_hash(
            i64::from(v),
            physical
        )),
        DataType::Int32 => each!(array.as_primitive::<Int32Type>(), |v| signed_hash(
            i64::from(v),
            physical
        )),
        DataType::Int64 => each!(array.as_primitive::<Int64Type>(), |v| signed_hash(
            v, physical
        )),
        DataType::UInt8 => each!(array.as_primitive::<UInt8Type>(), |v| unsigned_hash(
            u64::from(v),
            physical
        )),
        DataType::UInt16 => each!(array.as_primitive::<UInt16Type>(), |v| unsigned_hash(
            u64::from(v),
            physical
        )),
        DataType::UInt32 => each!(array.as_primitive::<UInt32Type>(), |v| unsigned_hash(
            u64::from(v),
            physical
        )),
        DataType::UInt64 => each!(array.as_primitive::<UInt64Type>(), |v| unsigned_hash(
            v, physical
        )),
        DataType::Utf8 => each!(array.as_string::<i32>(), |v| bytes_hash(
            v.as_bytes(),
            physical
        )),
        DataType::LargeUtf8 => each!(array.as_string::<i64>(), |v| bytes_hash(
            v.as_bytes(),
            physical
        )),
        DataType::Utf8View => each!(array.as_string_view(), |v| bytes_hash(
            v.as_bytes(),
            physical
        )),
        DataType::Binary => each!(array.as_binary::<i32>(), |v| bytes_hash(v, physical)),
        DataType::LargeBinary => each!(array.as_binary::<i64>(), |v| bytes_hash(v, physical)),
        DataType::BinaryView => each!(array.as_binary_view(), |v| bytes_hash(v, physical)),
        DataType::FixedSizeBinary(_) => {
            each!(array.as_fixed_size_binary(), |v| bytes_hash(v, physical))
        }
        // Unreachable after `key_type_fits`; a type without keys contributes none.
        _ => {}
    }
}

/// The Parquet hashes of the non-null values of `array` as the parquet crate's Arrow writer
/// stores them (see the [module table](self#hashing)), appended to `out`.
///
/// # Errors
/// [`BloomUdfError::UnsupportedColumnType`] for a type outside the table.
pub fn parquet_hashes(array: &dyn Array, out: &mut Vec<u64>) -> Result<()> {
    let physical = PhysicalType::of_arrow(array.data_type()).ok_or_else(|| {
        BloomUdfError::UnsupportedColumnType {
            column: String::new(),
            data_type: array.data_type().to_string(),
            supported: PARQUET_KEY_TYPES,
        }
    })?;
    out.reserve(array.len() - array.null_count());
    for_each_key(array, physical, |_, h| {
        if let KeyHash::Hash(h) = h {
            out.push(h);
        }
    });
    Ok(())
}

/// Block count of the filter [`build_filter`] makes: core's sizing for `expected_items` at
/// `false_pos`, rounded up to a power of two (Parquet readers expect one; rounding up only
/// lowers the false-positive rate) and capped at [`MAX_BITSET_BYTES`].
///
/// # Errors
/// Core's sizing errors (a false-positive rate outside (0, 1), too large a filter).
pub fn parquet_num_blocks(expected_items: u64, false_pos: f64) -> Result<u64> {
    let sized = SplitBlockBloomFilter::new(expected_items.max(1), false_pos)?;
    let max_blocks = (MAX_BITSET_BYTES / 32) as u64;
    Ok((sized.num_blocks() as u64)
        .next_power_of_two()
        .min(max_blocks))
}

/// A split-block filter of the non-null values of `array`, hashed as Parquet hashes them:
/// the filter a Parquet writer would store for that column chunk, built by bloomforge
/// (sized by [`parquet_num_blocks`]).
///
/// ```
/// use bloomforge_core::parquet_hash;
/// use datafusion::arrow::array::Int32Array;
/// let f = bloomforge_datafusion::parquet::build_filter(&Int32Array::from(vec![7, 8]), 100, 0.01)?;
/// assert!(f.contains_hash(parquet_hash(&7i32.to_le_bytes())));
/// # Ok::<(), bloomforge_datafusion::BloomUdfError>(())
/// ```
///
/// # Errors
/// [`BloomUdfError::UnsupportedColumnType`] for a type outside the [module
/// table](self#hashing); core's sizing errors.
pub fn build_filter(
    array: &dyn Array,
    expected_items: u64,
    false_pos: f64,
) -> Result<SplitBlockBloomFilter> {
    let mut hashes = Vec::new();
    parquet_hashes(array, &mut hashes)?;
    let mut filter =
        SplitBlockBloomFilter::with_num_blocks(parquet_num_blocks(expected_items, false_pos)?)?;
    filter.insert_hash_batch(&hashes);
    Ok(filter)
}

/// A Bloom filter a Parquet writer stored for a column: the bits as a core
/// [`SplitBlockBloomFilter`], and the column's physical type, which decides how keys are
/// hashed (see the [module table](self#hashing)).
///
/// Its filter answers [`contains_hash`](SplitBlockBloomFilter::contains_hash) for
/// [`parquet_hash`]es; `filter().contains(&key)` would hash with bloomforge's default
/// hasher and answer meaninglessly. Use the `contains_*` methods here instead.
#[derive(Clone, Debug, PartialEq)]
pub struct ParquetColumnFilter {
    column: String,
    physical_type: PhysicalType,
    filter: SplitBlockBloomFilter,
}

impl ParquetColumnFilter {
    /// Wraps a filter built with Parquet hashing (for instance by [`build_filter`]) for a
    /// column of `physical_type`.
    pub fn new(
        column: impl Into<String>,
        physical_type: PhysicalType,
        filter: SplitBlockBloomFilter,
    ) -> Self {
        Self {
            column: column.into(),
            physical_type,
            filter,
        }
    }

    /// The filter in bloomforge's format, hashed as Parquet hashes (the header records
    /// [`HashAlgorithm::ParquetXxh64`](bloomforge_core::format::HashAlgorithm) and the
    /// physical type), so `bloom_contains` can probe it: the bytes
    /// [`bloom_parquet_filter`](BloomParquetFilter) returns. The column's name is not
    /// stored.
    pub fn to_bytes(&self) -> Vec<u8> {
        // `from_blocks` only refuses an empty block list or a wrong probe count, which a
        // filter already built cannot have.
        SplitBlockBloomFilter::from_blocks(
            self.filter.blocks().to_vec(),
            self.filter.num_hashes(),
            self.physical_type.hasher(),
        )
        .map(|f| f.to_bytes())
        .unwrap_or_default()
    }

    /// Reads [`to_bytes`](Self::to_bytes)' output (checking the header, the checksum and
    /// that the filter was hashed as Parquet hashes), naming its column `column`.
    ///
    /// # Errors
    /// Core's decoding errors: [`Corrupt`](bloomforge_core::Error::Corrupt),
    /// [`HasherMismatch`](bloomforge_core::Error::HasherMismatch) for a filter of another
    /// hasher (bloomforge's default one, for instance), and the like.
    pub fn from_bytes(
        column: impl Into<String>,
        bytes: &[u8],
    ) -> core::result::Result<Self, bloomforge_core::Error> {
        let hasher = ParquetHasher::of_bytes(bytes)?;
        let parquet = SplitBlockBloomFilter::from_bytes_with_hasher(bytes, hasher)?;
        let filter = SplitBlockBloomFilter::from_blocks(
            parquet.blocks().to_vec(),
            parquet.num_hashes(),
            bloomforge_core::DefaultHasher::default(),
        )?;
        Ok(Self {
            column: column.into(),
            physical_type: PhysicalType::of_hasher(hasher),
            filter,
        })
    }

    /// The column's name (dotted path for nested columns).
    pub fn column(&self) -> &str {
        &self.column
    }

    /// The column's Parquet physical type.
    pub fn physical_type(&self) -> PhysicalType {
        self.physical_type
    }

    /// The filter; its [`as_bytes`](SplitBlockBloomFilter::as_bytes) are the Parquet bitset.
    pub fn filter(&self) -> &SplitBlockBloomFilter {
        &self.filter
    }

    /// The filter, owned.
    pub fn into_filter(self) -> SplitBlockBloomFilter {
        self.filter
    }

    fn check_key_type(&self, t: &DataType) -> Result<()> {
        if key_type_fits(t, self.physical_type) {
            Ok(())
        } else {
            Err(BloomUdfError::UnsupportedColumnType {
                column: self.column.clone(),
                data_type: format!("{t} key for a {:?} column", self.physical_type),
                supported: PARQUET_KEY_TYPES,
            })
        }
    }

    /// Whether the integer `key` may be in the column (`false` for a value the column's
    /// type cannot hold).
    ///
    /// # Errors
    /// [`BloomUdfError::UnsupportedColumnType`] for a column that is not `INT32`/`INT64`.
    pub fn contains_i64(&self, key: i64) -> Result<bool> {
        self.check_key_type(&DataType::Int64)?;
        Ok(self.answer(signed_hash(key, self.physical_type)))
    }

    /// Whether the unsigned integer `key` may be in the column.
    ///
    /// # Errors
    /// As [`contains_i64`](Self::contains_i64).
    pub fn contains_u64(&self, key: u64) -> Result<bool> {
        self.check_key_type(&DataType::UInt64)?;
        Ok(self.answer(unsigned_hash(key, self.physical_type)))
    }

    /// Whether the string or binary value `key` may be in the column.
    ///
    /// # Errors
    /// [`BloomUdfError::UnsupportedColumnType`] for a column that is not
    /// `BYTE_ARRAY`/`FIXED_LEN_BYTE_ARRAY`.
    pub fn contains_bytes(&self, key: &[u8]) -> Result<bool> {
        self.check_key_type(&DataType::Binary)?;
        Ok(self.answer(bytes_hash(key, self.physical_type)))
    }

    fn answer(&self, h: KeyHash) -> bool {
        match h {
            KeyHash::Hash(h) => self.filter.contains_hash(h),
            KeyHash::Impossible => false,
        }
    }

    /// Whether each value of `keys` may be in the column; a null key gives null.
    /// Vectorised: the keys are hashed into one buffer and probed with core's pipelined
    /// `contains_hash_batch`.
    ///
    /// # Errors
    /// [`BloomUdfError::UnsupportedColumnType`] for a key type that does not fit the
    /// column (see the [module table](self#hashing)).
    pub fn contains_array(&self, keys: &dyn Array) -> Result<BooleanArray> {
        contains_any(core::slice::from_ref(self), keys)
    }

    /// ORs `other` into this filter, folding the larger filter onto the smaller one's size
    /// when they differ: a split-block filter of `n` blocks folds onto `m` blocks, `m`
    /// dividing `n`, by ORing each run of `n / m` neighbouring blocks (the block of a hash
    /// is `(hash >> 32) * blocks >> 32`, so block `i` of `n` is block `i / (n / m)` of `m`);
    /// the result is the filter of both key sets at the smaller size.
    ///
    /// # Errors
    /// [`BloomUdfError::MismatchedSizes`] when neither block count divides the other,
    /// [`BloomUdfError::UnsupportedColumnType`] for different physical types.
    pub fn union(&mut self, other: &ParquetColumnFilter) -> Result<()> {
        if other.physical_type != self.physical_type {
            return Err(BloomUdfError::UnsupportedColumnType {
                column: self.column.clone(),
                data_type: format!(
                    "{:?} filter merged into a {:?} filter",
                    other.physical_type, self.physical_type
                ),
                supported: "filters of one physical type",
            });
        }
        let (a, b) = (self.filter.num_blocks(), other.filter.num_blocks());
        let mismatch = || BloomUdfError::MismatchedSizes {
            column: self.column.clone(),
            blocks_a: a,
            blocks_b: b,
        };
        let target = a.min(b);
        if target == 0 || a % target != 0 || b % target != 0 {
            return Err(mismatch());
        }
        let mut bits = fold(&self.filter.to_parquet_bytes(), target);
        for (x, y) in bits
            .iter_mut()
            .zip(fold(&other.filter.to_parquet_bytes(), target))
        {
            *x |= y;
        }
        self.filter = SplitBlockBloomFilter::from_parquet_bitset(&bits)?;
        Ok(())
    }
}

/// Whether each value of `keys` may be in any of `filters` (the row groups of one column;
/// all of one physical type): the keys are hashed once and probed in every filter. A null
/// key gives null; no filters (a file without row groups) answer `false`.
///
/// # Errors
/// [`BloomUdfError::UnsupportedColumnType`] for a key type that does not fit the column.
pub fn contains_any(filters: &[ParquetColumnFilter], keys: &dyn Array) -> Result<BooleanArray> {
    if keys.logical_null_count() == keys.len() {
        // Only NULLs (SQL's untyped NULL included): unknown, whatever the type.
        return Ok(BooleanArray::new_null(keys.len()));
    }
    let mut bits = BooleanBufferBuilder::new(keys.len());
    bits.append_n(keys.len(), false);
    if let Some(first) = filters.first() {
        first.check_key_type(keys.data_type())?;
        let mut rows = Vec::with_capacity(keys.len());
        let mut hashes = Vec::with_capacity(keys.len());
        for_each_key(keys, first.physical_type, |row, h| {
            if let KeyHash::Hash(h) = h {
                rows.push(row);
                hashes.push(h);
            }
        });
        let mut any = vec![false; hashes.len()];
        let mut found = vec![false; hashes.len()];
        for f in filters {
            if f.physical_type != first.physical_type {
                f.check_key_type(keys.data_type())?;
            }
            f.filter.contains_hash_batch(&hashes, &mut found)?;
            for (a, &b) in any.iter_mut().zip(&found) {
                *a |= b;
            }
        }
        for (&row, &hit) in rows.iter().zip(&any) {
            bits.set_bit(row, hit);
        }
    }
    Ok(BooleanArray::new(bits.finish(), keys.logical_nulls()))
}

/// Folds a split-block bitset onto `blocks` 32-byte blocks (a divisor of its own count).
fn fold(bitset: &[u8], blocks: usize) -> Vec<u8> {
    let run = bitset.len() / 32 / blocks;
    if run == 1 {
        return bitset.to_vec();
    }
    let mut out = vec![0u8; blocks * 32];
    for (i, block) in bitset.chunks_exact(32).enumerate() {
        let dst = &mut out[(i / run) * 32..(i / run) * 32 + 32];
        for (d, s) in dst.iter_mut().zip(block) {
            *d |= s;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

/// An opened Parquet file: its footer metadata, read once.
struct OpenFile {
    path: PathBuf,
    file: File,
    len: u64,
    metadata: ParquetMetaData,
}

impl OpenFile {
    fn open(path: &Path) -> Result<Self> {
        let io = |source| BloomUdfError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let metadata = ParquetMetaDataReader::new()
            .parse_and_finish(&file)
            .map_err(|source| BloomUdfError::Parquet {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            len,
            metadata,
        })
    }

    /// The leaf column index and physical type of `column`.
    fn column(&self, column: &str) -> Result<(usize, PhysicalType)> {
        let schema = self.metadata.file_metadata().schema_descr();
        let found = schema
            .columns()
            .iter()
            .position(|c| c.path().string() == column);
        match found {
            Some(i) => {
                let c = schema.column(i);
                Ok((
                    i,
                    PhysicalType::of_column(c.physical_type(), c.type_length()),
                ))
            }
            None => Err(BloomUdfError::NoSuchColumn {
                path: self.path.clone(),
                column: column.to_string(),
                available: schema.columns().iter().map(|c| c.path().string()).collect(),
            }),
        }
    }

    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.file.seek(SeekFrom::Start(offset))?;
        self.file.read_exact(&mut buf)?;
        Ok(buf)
    }

    /// The filter of one row group's column chunk.
    fn filter(
        &mut self,
        column: &str,
        index: usize,
        physical: PhysicalType,
        row_group: usize,
    ) -> Result<ParquetColumnFilter> {
        let chunk = self.metadata.row_group(row_group).column(index);
        let (offset, stored_len) = (chunk.bloom_filter_offset(), chunk.bloom_filter_length());
        let bad = |path: &Path, reason: String| BloomUdfError::InvalidBloomFilter {
            path: path.to_path_buf(),
            column: column.to_string(),
            row_group,
            reason,
        };
        let Some(offset) = offset else {
            return Err(BloomUdfError::NoBloomFilter {
                path: self.path.clone(),
                column: column.to_string(),
                row_group,
            });
        };
        let offset = u64::try_from(offset)
            .ok()
            .filter(|&o| o < self.len)
            .ok_or_else(|| bad(&self.path, format!("offset {offset} outside the file")))?;
        let available = self.len - offset;
        // The header is at most a few dozen bytes; read it with the bitset when the writer
        // recorded the total length (parquet-format 2.10+), else read a bounded prefix first.
        let prefix = match stored_len {
            Some(n) => {
                let n = u64::try_from(n)
                    .ok()
                    .filter(|&n| n <= available && n <= (MAX_BITSET_BYTES + HEADER_MAX) as u64)
                    .ok_or_else(|| {
                        bad(
                            &self.path,
                            format!("length {n} out of range ({available} bytes left in the file)"),
                        )
                    })?;
                n as usize
            }
            None => available.min(HEADER_MAX as u64) as usize,
        };
        let io = |path: &Path, source| BloomUdfError::Io {
            path: path.to_path_buf(),
            source,
        };
        let head = self
            .read_at(offset, prefix)
            .map_err(|e| io(&self.path, e))?;
        let header = parse_header(&head).map_err(|r| bad(&self.path, r))?;
        let bitset_len = header.num_bytes;
        if bitset_len == 0 || bitset_len % 32 != 0 || bitset_len > MAX_BITSET_BYTES {
            return Err(bad(
                &self.path,
                format!(
                    "bitset of {bitset_len} bytes (a positive multiple of 32 up to {MAX_BITSET_BYTES})"
                ),
            ));
        }
        let end = header.len + bitset_len;
        let filter = if stored_len.is_some() {
            if end != head.len() {
                return Err(bad(
                    &self.path,
                    format!(
                        "header says {bitset_len} bitset bytes, the column chunk stores {}",
                        head.len() - header.len
                    ),
                ));
            }
            SplitBlockBloomFilter::from_parquet_bitset(&head[header.len..])
        } else {
            if end as u64 > available {
                return Err(bad(
                    &self.path,
                    format!("bitset of {bitset_len} bytes runs past the end of the file"),
                ));
            }
            let bitset = self
                .read_at(offset + header.len as u64, bitset_len)
                .map_err(|e| io(&self.path, e))?;
            SplitBlockBloomFilter::from_parquet_bitset(&bitset)
        }?;
        Ok(ParquetColumnFilter {
            column: column.to_string(),
            physical_type: physical,
            filter,
        })
    }
}

/// The filter of `column` in every row group of the Parquet file at `path`, in row-group
/// order.
///
/// # Errors
/// [`BloomUdfError::Io`] (cannot open or read), [`BloomUdfError::Parquet`] (not
/// a Parquet file, corrupt footer), [`BloomUdfError::NoSuchColumn`],
/// [`BloomUdfError::NoBloomFilter`] (a row group without one),
/// [`BloomUdfError::InvalidBloomFilter`] (corrupt or unsupported filter). Never
/// panics, and allocates no more than the file holds (at most [`MAX_BITSET_BYTES`] a
/// filter).
pub fn read_row_group_filters(
    path: impl AsRef<Path>,
    column: &str,
) -> Result<Vec<ParquetColumnFilter>> {
    let mut file = OpenFile::open(path.as_ref())?;
    let (index, physical) = file.column(column)?;
    (0..file.metadata.num_row_groups())
        .map(|rg| file.filter(column, index, physical, rg))
        .collect()
}

/// The filter of `column` over the whole file at `path`: the union of its row groups'
/// filters (folded onto the smallest when their sizes differ, see
/// [`ParquetColumnFilter::union`]). A file without row groups gives an empty one-block
/// filter (it answers `false` for every key).
///
/// One filter answers every key with one probe, but it holds all the file's keys at the
/// size of one row group's filter, so its false-positive rate is that of the whole file's
/// keys in that many bits (three row groups of filters sized for their own rows: roughly
/// ten times one group's 1 %). Probing the row groups' filters one by one
/// ([`read_row_group_filters`] and [`contains_any`], what `bloom_parquet_contains` does)
/// costs a probe per row group and keeps the rate below the sum of theirs.
///
/// # Errors
/// As [`read_row_group_filters`], and [`BloomUdfError::MismatchedSizes`].
pub fn read_column_filter(path: impl AsRef<Path>, column: &str) -> Result<ParquetColumnFilter> {
    let path = path.as_ref();
    let mut file = OpenFile::open(path)?;
    let (index, physical) = file.column(column)?;
    let mut all: Option<ParquetColumnFilter> = None;
    for rg in 0..file.metadata.num_row_groups() {
        let f = file.filter(column, index, physical, rg)?;
        match &mut all {
            None => all = Some(f),
            Some(acc) => acc.union(&f)?,
        }
    }
    match all {
        Some(f) => Ok(f),
        None => Ok(ParquetColumnFilter {
            column: column.to_string(),
            physical_type: physical,
            filter: SplitBlockBloomFilter::with_num_blocks(1)?,
        }),
    }
}

/// Bytes read for a header when the writer did not record the filter's length; a
/// `BloomFilterHeader` is about 15 bytes.
const HEADER_MAX: usize = 256;

/// The fields of a Parquet `BloomFilterHeader` this reader needs.
#[derive(Debug, PartialEq)]
struct Header {
    /// Bytes of the bitset.
    num_bytes: usize,
    /// Bytes of the header itself.
    len: usize,
}

/// Decodes a Thrift-compact `BloomFilterHeader` at the start of `bytes`:
///
/// ```text
/// struct BloomFilterHeader {
///   1: required i32 numBytes;
///   2: required BloomFilterAlgorithm algorithm;       // union { 1: SplitBlockAlgorithm BLOCK }
///   3: required BloomFilterHash hash;                 // union { 1: XxHash XXHASH }
///   4: required BloomFilterCompression compression;   // union { 1: Uncompressed UNCOMPRESSED }
/// }
/// ```
///
/// Unknown fields are skipped (bounded nesting); a missing field, another algorithm, hash
/// or compression is an error naming it.
fn parse_header(bytes: &[u8]) -> Result<Header, String> {
    let mut r = Thrift { bytes, pos: 0 };
    let mut num_bytes = None;
    let mut unions = [None::<i16>; 3];
    let mut last = 0i16;
    while let Some((id, ty)) = r.field_header(&mut last)? {
        match (id, ty) {
            (1, T_I32) => {
                let n = r.zigzag()?;
                num_bytes =
                    Some(i32::try_from(n).map_err(|_| format!("numBytes {n} out of range"))?);
            }
            (2..=4, T_STRUCT) => unions[(id - 2) as usize] = Some(r.union_member()?),
            _ => r.skip(ty, 0)?,
        }
    }
    let names = [
        ("algorithm", "BLOCK"),
        ("hash", "XXHASH"),
        ("compression", "UNCOMPRESSED"),
    ];
    for (member, (name, expected)) in unions.iter().zip(names) {
        match member {
            None => return Err(format!("header has no {name}")),
            Some(1) => {}
            Some(other) => {
                return Err(format!(
                    "unsupported {name} (union member {other}; only {expected} is defined)"
                ))
            }
        }
    }
    let num_bytes = num_bytes.ok_or("header has no numBytes")?;
    let num_bytes =
        usize::try_from(num_bytes).map_err(|_| format!("negative bitset length {num_bytes}"))?;
    Ok(Header {
        num_bytes,
        len: r.pos,
    })
}

const T_BOOL_TRUE: u8 = 1;
const T_BOOL_FALSE: u8 = 2;
const T_BYTE: u8 = 3;
const T_I16: u8 = 4;
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_DOUBLE: u8 = 7;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_SET: u8 = 10;
const T_MAP: u8 = 11;
const T_STRUCT: u8 = 12;
/// Nesting limit for skipped values.
const MAX_DEPTH: u32 = 32;

/// A bounds-checked reader of Thrift's compact protocol.
struct Thrift<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Thrift<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or("header truncated (ends inside a field)")?;
        self.pos += 1;
        Ok(b)
    }

    fn advance(&mut self, n: u64) -> Result<(), String> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err("header truncated (a value runs past the end)".into());
        }
        self.pos += n as usize;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift.min(63);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn zigzag(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// The next field's id and type, `None` at the struct's stop byte.
    fn field_header(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, String> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let ty = b & 0x0f;
        let delta = i16::from(b >> 4);
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| "field id out of range")?
        } else {
            last.checked_add(delta).ok_or("field id out of range")?
        };
        *last = id;
        Ok(Some((id, ty)))
    }

    /// Reads a union (a struct with one set member) and returns the member's id.
    fn union_member(&mut self) -> Result<i16, String> {
        let mut last = 0;
        let mut member = None;
        while let Some((id, ty)) = self.field_header(&mut last)? {
            if member.replace(id).is_some() {
                return Err("a union with more than one member".into());
            }
            self.skip(ty, 1)?;
        }
        member.ok_or_else(|| "an empty union".into())
    }

    /// Skips one value of type `ty` (a field value: booleans carry no bytes).
    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("values nested too deeply".into());
        }
        match ty {
            T_BOOL_TRUE | T_BOOL_FALSE => Ok(()),
            _ => self.skip_value(ty, depth),
        }
    }

    /// Skips one value; booleans inside collections take one byte.
    fn skip_value(&mut self, ty: u8, depth: u32) -> Result<(), String> {
        match ty {
            T_BOOL_TRUE | T_BOOL_FALSE | T_BYTE => self.advance(1),
            T_I16 | T_I32 | T_I64 => self.varint().map(drop),
            T_DOUBLE => self.advance(8),
            T_BINARY => {
                let n = self.varint()?;
                self.advance(n)
            }
            T_LIST | T_SET => {
                let b = self.byte()?;
                let n = match b >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                // Every element takes at least one byte: a count beyond the bytes left is
                // corrupt (and must not drive a long loop).
                if n > (self.bytes.len() - self.pos) as u64 {
                    return Err("collection longer than the header".into());
                }
                for _ in 0..n {
                    self.skip_value(b & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            T_MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                if n > (self.bytes.len() - self.pos) as u64 {
                    return Err("map longer than the header".into());
                }
                let kv = self.byte()?;
                for _ in 0..n {
                    self.skip_value(kv >> 4, depth + 1)?;
                    self.skip_value(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            T_STRUCT => {
                let mut last = 0;
                while let Some((_, t)) = self.field_header(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
                Ok(())
            }
            other => Err(format!("unknown Thrift type {other}")),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

/// A column whose Parquet Bloom filter bloomforge builds in [`write_parquet`].
#[derive(Clone, Debug, PartialEq)]
pub struct BloomColumn {
    column: String,
    false_pos: f64,
    expected_items: Option<u64>,
}

impl BloomColumn {
    /// A filter for the top-level column `column` at false-positive rate `false_pos`, sized
    /// per row group for its number of non-null values (an upper bound on its distinct
    /// values; see [`expected_items`](Self::expected_items)).
    pub fn new(column: impl Into<String>, false_pos: f64) -> Self {
        Self {
            column: column.into(),
            false_pos,
            expected_items: None,
        }
    }

    /// Sizes every row group's filter for `n` distinct values instead: one size for the
    /// whole file, so the row groups' filters union without folding.
    pub fn expected_items(mut self, n: u64) -> Self {
        self.expected_items = Some(n);
        self
    }
}

/// Writes `row_groups` (one row group per batch, all of one schema) as a Parquet file to
/// `writer` with the parquet crate's writer, storing for each of `bloom_columns` the
/// split-block filter bloomforge builds from the row group's values ([`build_filter`]).
/// Returns the file's metadata.
///
/// The parquet crate's supported hook is used: each column chunk is encoded by an
/// `ArrowColumnWriter`, and before the chunk is appended to its row group its
/// `ColumnCloseResult::bloom_filter` (`ArrowColumnChunk::close_mut`) is set to bloomforge's
/// bitset; the file writer then writes it, with its header, offset and length, exactly as
/// its own. `props` apply as usual (compression, page sizes, statistics); a column in
/// `bloom_columns` gets bloomforge's filter even where `props` enable parquet's own (which
/// is then computed and discarded: leave it off).
///
/// # Errors
/// [`BloomUdfError::InvalidArgument`] for a column not in the schema, a nested
/// column, or batches of different schemas; [`BloomUdfError::UnsupportedColumnType`] for a
/// column type outside the [module table](self#hashing); core's sizing errors (a
/// false-positive rate outside (0, 1)); [`BloomUdfError::Parquet`] (path `<writer>`)
/// when encoding or writing fails.
pub fn write_parquet<W: Write + Send>(
    writer: W,
    row_groups: &[RecordBatch],
    bloom_columns: &[BloomColumn],
    props: WriterProperties,
) -> Result<ParquetMetaData> {
    let pq = |source| BloomUdfError::Parquet {
        path: PathBuf::from("<writer>"),
        source,
    };
    let Some(first) = row_groups.first() else {
        return Err(BloomUdfError::InvalidArgument(
            "write_parquet: no batches (a Parquet file needs a schema)".into(),
        ));
    };
    let schema = first.schema();
    if let Some(other) = row_groups.iter().find(|b| b.schema() != schema) {
        return Err(BloomUdfError::InvalidArgument(format!(
            "write_parquet: batches of different schemas: {} and {}",
            schema,
            other.schema()
        )));
    }
    // For each Arrow field: the leaf writer it maps to, and its bloom column if any.
    let mut chosen = vec![None; schema.fields().len()];
    for spec in bloom_columns {
        let Some((i, field)) = schema.column_with_name(&spec.column) else {
            return Err(BloomUdfError::InvalidArgument(format!(
                "write_parquet: no column {:?} in the batches",
                spec.column
            )));
        };
        if PhysicalType::of_arrow(field.data_type()).is_none() {
            return Err(BloomUdfError::UnsupportedColumnType {
                column: spec.column.clone(),
                data_type: field.data_type().to_string(),
                supported: KEY_TYPES_FOR_WRITE,
            });
        }
        // Check the rate now, not after encoding the first row group.
        parquet_num_blocks(spec.expected_items.unwrap_or(1), spec.false_pos)?;
        chosen[i] = Some(spec);
    }

    let props = Arc::new(props);
    let parquet_schema = ArrowSchemaConverter::new()
        .with_coerce_types(props.coerce_types())
        .convert(&schema)
        .map_err(pq)?;
    let mut file =
        SerializedFileWriter::new(writer, parquet_schema.root_schema_ptr(), Arc::clone(&props))
            .map_err(pq)?;
    let factory = ArrowRowGroupWriterFactory::new(&file, Arc::clone(&schema));
    for (rg, batch) in row_groups.iter().enumerate() {
        let mut writers = factory.create_column_writers(rg).map_err(pq)?;
        // Leaves of each field, in writer order.
        let mut owner = Vec::with_capacity(writers.len());
        {
            let mut next = writers.iter_mut();
            for (f, (array, field)) in batch.columns().iter().zip(schema.fields()).enumerate() {
                for leaf in compute_leaves(field, array).map_err(pq)? {
                    let w = next.next().ok_or_else(|| {
                        pq(ParquetError::General(
                            "more leaves than column writers".into(),
                        ))
                    })?;
                    w.write(&leaf).map_err(pq)?;
                    owner.push(f);
                }
            }
        }
        let mut row_group = file.next_row_group().map_err(pq)?;
        for (writer, &f) in writers.into_iter().zip(&owner) {
            let mut chunk = writer.close().map_err(pq)?;
            if let Some(spec) = chosen[f] {
                let array: &ArrayRef = batch.column(f);
                let items = spec
                    .expected_items
                    .unwrap_or((array.len() - array.null_count()) as u64);
                let filter = build_filter(array.as_ref(), items, spec.false_pos)?;
                chunk.close_mut().bloom_filter = Some(Sbbf::new(&filter.to_parquet_bytes()));
            }
            chunk.append_to_row_group(&mut row_group).map_err(pq)?;
        }
        row_group.close().map_err(pq)?;
    }
    file.close().map_err(pq)
}

const KEY_TYPES_FOR_WRITE: &str = "Int8..Int64, UInt8..UInt64, Utf8, LargeUtf8, Utf8View, \
     Binary, LargeBinary, BinaryView, FixedSizeBinary (top-level columns)";

// ---------------------------------------------------------------------------------------
// SQL
// ---------------------------------------------------------------------------------------

/// `bloom_parquet_contains(file, column, expr) -> Boolean`: whether each value of `expr`
/// may be in column `column` of the Parquet file `file`, by the Bloom filters its writer
/// stored in its row groups ([`read_row_group_filters`]).
///
/// * `file` and `column` are string constants; `file` is a path on the local file system
///   of the process that plans the query.
/// * `true`: may be present; `false`: certainly absent. A `NULL` key gives `NULL`.
/// * Keys are hashed as the column stores values (see the [module table](self#hashing)),
///   so an `Int64` key asks an `INT32` column correctly.
/// * Each key is probed in every row group's filter ([`contains_any`]): the answer is
///   `true` when some row group may hold it, with a false-positive rate below the sum of
///   the row groups' (one unioned filter would have that of all the file's keys).
/// * The filters are read once per query: when the query is optimised, the call becomes a
///   call of a [`ParquetFilterUdf`] holding the decoded filters (a file that cannot be read
///   is then a planning error). Unoptimised plans read them once per batch.
///
/// To carry the filter as a value (a column, a parameter, another query), take its bytes
/// with [`bloom_parquet_filter(file, column)`](BloomParquetFilter) and probe them with
/// `bloom_contains`.
///
/// ```
/// use bloomforge_datafusion::parquet::{write_parquet, BloomColumn};
/// use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int32Array, RecordBatch};
/// use std::sync::Arc;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("ids.parquet");
/// let ids = Arc::new(Int32Array::from(vec![10, 20, 30])) as ArrayRef;
/// write_parquet(
///     std::fs::File::create(&path)?,
///     &[RecordBatch::try_from_iter([("id", ids)])?],
///     &[BloomColumn::new("id", 0.01)],
///     Default::default(),
/// )?;
///
/// let ctx = datafusion::prelude::SessionContext::new();
/// bloomforge_datafusion::register(&ctx);
/// let sql = format!(
///     "SELECT bloom_parquet_contains('{}', 'id', v) FROM (VALUES (20), (NULL)) t(v)",
///     path.display()
/// );
/// let out = ctx.sql(&sql).await?.collect().await?;
/// let answers = out[0].column(0).as_boolean();
/// assert!(answers.value(0)); // 20 (an Int64 literal) is in the INT32 column
/// assert!(answers.is_null(1));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BloomParquetContains {
    signature: Signature,
}

impl Default for BloomParquetContains {
    fn default() -> Self {
        Self::new()
    }
}

impl BloomParquetContains {
    /// The function's implementation; register [`bloom_parquet_contains_udf`] (or call
    /// [`register`](crate::register)) to use it from SQL.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Stable),
        }
    }
}

/// `bloom_parquet_contains` as a DataFusion [`ScalarUDF`].
pub fn bloom_parquet_contains_udf() -> ScalarUDF {
    ScalarUDF::from(BloomParquetContains::new())
}

fn coerce_parquet_key(t: &DataType) -> datafusion::common::Result<DataType> {
    match t {
        t if crate::keys::is_key_type(t) || matches!(t, DataType::FixedSizeBinary(_)) => {
            Ok(t.clone())
        }
        DataType::Null => Ok(DataType::Int64),
        DataType::Dictionary(_, value) if crate::keys::is_key_type(value) => {
            Ok(value.as_ref().clone())
        }
        other => Err(BloomUdfError::UnsupportedType {
            function: BLOOM_PARQUET_CONTAINS,
            data_type: other.to_string(),
            supported: KEY_TYPES,
        }
        .into()),
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    )
}

/// A string constant argument, from a literal or a scalar.
fn scalar_str(v: &ScalarValue) -> Option<&str> {
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s),
        _ => None,
    }
}

impl ScalarUDFImpl for BloomParquetContains {
    fn name(&self) -> &str {
        BLOOM_PARQUET_CONTAINS
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> datafusion::common::Result<Vec<DataType>> {
        let [file, column, key] = arg_types else {
            return plan_err!(
                "bloom_parquet_contains takes 3 arguments (file, column, expr), got {}",
                arg_types.len()
            );
        };
        if !is_string(file) || !is_string(column) {
            return plan_err!(
                "bloom_parquet_contains: file and column must be strings, got {file} and {column}"
            );
        }
        Ok(vec![
            DataType::Utf8,
            DataType::Utf8,
            coerce_parquet_key(key)?,
        ])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> datafusion::common::Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn simplify(
        &self,
        args: Vec<Expr>,
        _info: &SimplifyContext,
    ) -> datafusion::common::Result<ExprSimplifyResult> {
        let [file, column, key] = match <[Expr; 3]>::try_from(args) {
            Ok(args) => args,
            Err(args) => return Ok(ExprSimplifyResult::Original(args)),
        };
        let constants = match (&file, &column) {
            (Expr::Literal(f, _), Expr::Literal(c, _)) => scalar_str(f).zip(scalar_str(c)),
            _ => None,
        };
        let Some((path, name)) = constants else {
            return Ok(ExprSimplifyResult::Original(vec![file, column, key]));
        };
        let bound = ParquetFilterUdf::open(BLOOM_PARQUET_CONTAINS, path, name)?;
        Ok(ExprSimplifyResult::Simplified(Expr::ScalarFunction(
            ScalarFunction::new_udf(Arc::new(ScalarUDF::from(bound)), vec![key]),
        )))
    }

    fn invoke_with_args(
        &self,
        args: ScalarFunctionArgs,
    ) -> datafusion::common::Result<ColumnarValue> {
        let Ok([file, column, keys]) = <[ColumnarValue; 3]>::try_from(args.args) else {
            return exec_err!("bloom_parquet_contains takes 3 arguments (file, column, expr)");
        };
        let (ColumnarValue::Scalar(file), ColumnarValue::Scalar(column)) = (&file, &column) else {
            return exec_err!("bloom_parquet_contains: file and column must be constants");
        };
        let (Some(file), Some(column)) = (scalar_str(file), scalar_str(column)) else {
            // A NULL file or column: nothing is known.
            return Ok(ColumnarValue::Scalar(ScalarValue::Boolean(None)));
        };
        let filters = read_row_group_filters(file, column)?;
        probe(&filters, keys)
    }
}

/// The SQL function `bloom_parquet_filter(file, column) -> Binary`: the split-block filter
/// a Parquet writer stored for `column` in `file`, as bloomforge bytes that
/// `bloom_contains(filter, expr)` probes (and that [`ParquetColumnFilter::from_bytes`] or
/// core's `SplitBlockBloomFilter::from_bytes_with_hasher` with
/// [`ParquetHasher::of_bytes`] read back).
///
/// * The bytes are bloomforge's format around the Parquet bitset, unchanged: the header
///   records Parquet's hash (XXH64 of the plain encoding,
///   [`HashAlgorithm::ParquetXxh64`](bloomforge_core::format::HashAlgorithm)) and the
///   column's physical type, so `bloom_contains` hashes each key as the column stores
///   values (see the [module table](self#hashing)) and a key that no value of the column
///   can equal answers `false`.
/// * One filter for the whole file: the row groups' filters ORed together, folded onto the
///   smallest when their sizes differ ([`read_column_filter`]). Its false-positive rate is
///   that of all the file's keys in one row group's bits; [`bloom_parquet_contains`
///   ](BloomParquetContains) probes each row group instead.
/// * `file` and `column` are string constants; a `NULL` gives `NULL`. The file is read
///   once, at planning (the call becomes the literal bytes), or once per batch in an
///   unoptimised plan.
///
/// ```
/// use bloomforge_datafusion::parquet::{write_parquet, BloomColumn};
/// use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
/// use std::sync::Arc;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.parquet");
/// let urls = Arc::new(StringArray::from(vec!["x.org", "y.org"])) as ArrayRef;
/// write_parquet(
///     std::fs::File::create(&path)?,
///     &[RecordBatch::try_from_iter([("url", urls)])?],
///     &[BloomColumn::new("url", 0.01)],
///     Default::default(),
/// )?;
///
/// let ctx = datafusion::prelude::SessionContext::new();
/// bloomforge_datafusion::register(&ctx);
/// let sql = format!(
///     "SELECT bloom_contains(bloom_parquet_filter('{}', 'url'), u) \
///      FROM (VALUES ('x.org'), ('z.org'), (NULL)) t(u)",
///     path.display()
/// );
/// let out = ctx.sql(&sql).await?.collect().await?;
/// let answers = out[0].column(0).as_boolean();
/// assert!(answers.value(0)); // x.org is in the file
/// assert!(answers.is_null(2));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BloomParquetFilter {
    signature: Signature,
}

impl Default for BloomParquetFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl BloomParquetFilter {
    /// The function's implementation; register [`bloom_parquet_filter_udf`] (or call
    /// [`register`](crate::register)) to use it from SQL.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Stable),
        }
    }
}

/// `bloom_parquet_filter` as a DataFusion [`ScalarUDF`].
pub fn bloom_parquet_filter_udf() -> ScalarUDF {
    ScalarUDF::from(BloomParquetFilter::new())
}

/// The bytes of `column`'s filter in the Parquet file `file` (see [`BloomParquetFilter`]).
fn parquet_filter_bytes(file: &str, column: &str) -> Result<Vec<u8>> {
    Ok(read_column_filter(file, column)?.to_bytes())
}

impl ScalarUDFImpl for BloomParquetFilter {
    fn name(&self) -> &str {
        BLOOM_PARQUET_FILTER
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> datafusion::common::Result<Vec<DataType>> {
        let [file, column] = arg_types else {
            return plan_err!(
                "bloom_parquet_filter takes 2 arguments (file, column), got {}",
                arg_types.len()
            );
        };
        if !is_string(file) || !is_string(column) {
            return plan_err!(
                "bloom_parquet_filter: file and column must be strings, got {file} and {column}"
            );
        }
        Ok(vec![DataType::Utf8, DataType::Utf8])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> datafusion::common::Result<DataType> {
        Ok(DataType::Binary)
    }

    /// Constant arguments: the file is read here, once, and the call becomes its bytes.
    fn simplify(
        &self,
        args: Vec<Expr>,
        _info: &SimplifyContext,
    ) -> datafusion::common::Result<ExprSimplifyResult> {
        let constants = match args.as_slice() {
            [Expr::Literal(f, _), Expr::Literal(c, _)] => Some((f, c)),
            _ => None,
        };
        let Some((file, column)) = constants else {
            return Ok(ExprSimplifyResult::Original(args));
        };
        let bytes = match (scalar_str(file), scalar_str(column)) {
            (Some(file), Some(column)) => Some(parquet_filter_bytes(file, column)?),
            _ if file.is_null() || column.is_null() => None,
            _ => return Ok(ExprSimplifyResult::Original(args)),
        };
        Ok(ExprSimplifyResult::Simplified(Expr::Literal(
            ScalarValue::Binary(bytes),
            None,
        )))
    }

    fn invoke_with_args(
        &self,
        args: ScalarFunctionArgs,
    ) -> datafusion::common::Result<ColumnarValue> {
        let Ok([file, column]) = <[ColumnarValue; 2]>::try_from(args.args) else {
            return exec_err!("bloom_parquet_filter takes 2 arguments (file, column)");
        };
        let (ColumnarValue::Scalar(file), ColumnarValue::Scalar(column)) = (&file, &column) else {
            return exec_err!("bloom_parquet_filter: file and column must be constants");
        };
        let bytes = match (scalar_str(file), scalar_str(column)) {
            (Some(file), Some(column)) => Some(parquet_filter_bytes(file, column)?),
            _ => None,
        };
        Ok(ColumnarValue::Scalar(ScalarValue::Binary(bytes)))
    }
}

fn probe(
    filters: &[ParquetColumnFilter],
    keys: ColumnarValue,
) -> datafusion::common::Result<ColumnarValue> {
    match keys {
        ColumnarValue::Array(keys) => Ok(ColumnarValue::Array(Arc::new(contains_any(
            filters,
            keys.as_ref(),
        )?))),
        ColumnarValue::Scalar(key) => {
            let answer = contains_any(filters, key.to_array_of_size(1)?.as_ref())?;
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                &answer, 0,
            )?))
        }
    }
}

/// A Parquet column's row-group filters bound to a one-argument SQL function
/// `name(expr) -> Boolean`, answering as [`bloom_parquet_contains(file, column,
/// expr)`](BloomParquetContains) with the filters read once, here (what the optimiser turns
/// `bloom_parquet_contains` into).
///
/// ```
/// use bloomforge_datafusion::parquet::{write_parquet, BloomColumn, ParquetFilterUdf};
/// use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, StringArray};
/// use datafusion::logical_expr::ScalarUDF;
/// use std::sync::Arc;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.parquet");
/// let urls = Arc::new(StringArray::from(vec!["x.org"])) as ArrayRef;
/// let batch = RecordBatch::try_from_iter([("url", urls)])?;
/// let file = std::fs::File::create(&path)?;
/// write_parquet(file, &[batch], &[BloomColumn::new("url", 0.01)], Default::default())?;
///
/// let ctx = datafusion::prelude::SessionContext::new();
/// ctx.register_udf(ScalarUDF::from(ParquetFilterUdf::open("in_a", &path, "url")?));
/// let out = ctx.sql("SELECT in_a('x.org')").await?.collect().await?;
/// assert!(out[0].column(0).as_boolean().value(0));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct ParquetFilterUdf {
    name: String,
    signature: Signature,
    filters: Arc<[ParquetColumnFilter]>,
}

impl ParquetFilterUdf {
    /// Reads the row-group filters of `column` in the Parquet file at `path`
    /// ([`read_row_group_filters`]) and binds them to the SQL function `name`.
    ///
    /// # Errors
    /// As [`read_row_group_filters`].
    pub fn open(name: impl Into<String>, path: impl AsRef<Path>, column: &str) -> Result<Self> {
        Ok(Self::new(name, read_row_group_filters(path, column)?))
    }

    /// Binds filters of one column (read from a file, one per row group, or built with
    /// [`build_filter`]) to `name`; a key is reported when any of them may hold it.
    pub fn new(
        name: impl Into<String>,
        filters: impl IntoIterator<Item = ParquetColumnFilter>,
    ) -> Self {
        Self {
            name: name.into(),
            signature: Signature::user_defined(Volatility::Immutable),
            filters: filters.into_iter().collect(),
        }
    }

    /// The bound filters.
    pub fn filters(&self) -> &[ParquetColumnFilter] {
        &self.filters
    }
}

/// Equal when they have the same name and share the same bound filter.
impl PartialEq for ParquetFilterUdf {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && Arc::ptr_eq(&self.filters, &other.filters)
    }
}

impl Eq for ParquetFilterUdf {}

impl std::hash::Hash for ParquetFilterUdf {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        Arc::as_ptr(&self.filters).cast::<u8>().hash(state);
    }
}

impl ScalarUDFImpl for ParquetFilterUdf {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> datafusion::common::Result<Vec<DataType>> {
        let [key] = arg_types else {
            return plan_err!(
                "{} takes 1 argument (expr), got {}",
                self.name,
                arg_types.len()
            );
        };
        Ok(vec![coerce_parquet_key(key)?])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> datafusion::common::Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(
        &self,
        args: ScalarFunctionArgs,
    ) -> datafusion::common::Result<ColumnarValue> {
        let Some(keys) = args.args.into_iter().next() else {
            return exec_err!("{} takes 1 argument (expr)", self.name);
        };
        probe(&self.filters, keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_parquet_rs_headers_and_refuses_corrupt_ones() {
        let sbbf = Sbbf::new(&[0u8; 64]);
        let mut blob = Vec::new();
        sbbf.write(&mut blob).unwrap();
        let h = parse_header(&blob).unwrap();
        assert_eq!(h.num_bytes, 64);
        assert_eq!(h.len + 64, blob.len());
        // Every truncation of the header is an error, never a panic.
        for cut in 0..h.len {
            assert!(parse_header(&blob[..cut]).is_err(), "cut at {cut}");
        }
        // Every single-byte corruption of the header decodes or errs, never panics.
        for i in 0..h.len {
            for v in [0u8, 0x0f, 0x1c, 0x7f, 0x80, 0xff] {
                let mut bad = blob.clone();
                bad[i] = v;
                let _ = parse_header(&bad);
            }
        }
        // numBytes 64 (zigzag varint 0x80 0x01), then the three unions, each with member 1
        // (an empty struct), then stop.
        assert_eq!(
            blob[..h.len],
            [0x15, 0x80, 0x01, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0]
        );
        // Another hash (union member 2) is refused by name.
        let mut other = blob.clone();
        other[8] = 0x2c;
        assert!(parse_header(&other).unwrap_err().contains("hash"));
        // A missing field is named.
        let no_compression = [0x15, 0x80, 0x01, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0];
        assert!(parse_header(&no_compression)
            .unwrap_err()
            .contains("compression"));
        // An unknown extra field (5: binary "ab") is skipped.
        let mut extra = blob[..h.len - 1].to_vec();
        extra.extend([0x18, 2, b'a', b'b', 0]);
        extra.extend(&blob[h.len..]);
        assert_eq!(parse_header(&extra).unwrap().num_bytes, 64);
    }

    #[test]
    fn fold_is_a_build_at_the_smaller_size() {
        let hashes: Vec<u64> = (0..500u64)
            .map(|i| parquet_hash(&i.to_le_bytes()))
            .collect();
        let mut big = SplitBlockBloomFilter::with_num_blocks(64).unwrap();
        big.insert_hash_batch(&hashes);
        let mut small = SplitBlockBloomFilter::with_num_blocks(16).unwrap();
        small.insert_hash_batch(&hashes);
        assert_eq!(fold(big.as_bytes(), 16), small.as_bytes());
    }
}
