//! `bloom_contains(filter_bytes, expr)`: the scalar function that queries a filter.

use crate::agg::coerce_key;
use crate::error::BloomUdfError;
use crate::keys::{hash_rows, Nulls, KEY_TYPES};
use bloomforge_core::{DefaultHasher, SplitBlockBloomFilter, SplitBlockBloomFilterView};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, BooleanBufferBuilder};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// The SQL name of the scalar function.
pub const BLOOM_CONTAINS: &str = "bloom_contains";

/// `bloom_contains(filter_bytes, expr) -> Boolean`: whether each value of `expr` may be in
/// the filter whose bytes (as [`bloom_agg`](crate::BloomAgg) returns them, or
/// `SplitBlockBloomFilter::to_bytes` with an unkeyed hasher) are `filter_bytes`.
///
/// * `true`: may be present (false positives at the filter's rate); `false`: certainly
///   absent.
/// * SQL null semantics, as `expr IN (...)`: a `NULL` filter or a `NULL` key gives `NULL`
///   (unknown), which `WHERE` treats as not matching.
/// * Keys are hashed by the rule of the [module table](crate#keys), with the filter's own
///   hasher (its stored seed).
/// * Bytes that are not a split-block filter (another kind, truncated, failing the
///   checksum, a keyed hasher) are an execution error ([`BloomUdfError::InvalidFilter`]),
///   never a panic.
///
/// Vectorised: a constant filter (a literal, a `$1` parameter) is decoded once per batch
/// and every key of the batch is hashed into one buffer and probed with core's pipelined
/// `contains_hash_batch`. Decoding is zero-copy over the Arrow/scalar buffer when it
/// starts at a 32-byte boundary (core's [`SplitBlockBloomFilterView`]); otherwise the
/// filter is copied once per batch. Either way the payload checksum is checked once per
/// batch, so a large filter wants large batches (`datafusion.execution.batch_size`).
/// A filter column (a different filter per row) is decoded once per run of equal values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BloomContains {
    signature: Signature,
}

impl Default for BloomContains {
    fn default() -> Self {
        Self::new()
    }
}

impl BloomContains {
    /// The function's implementation; register [`bloom_contains_udf`] (or call
    /// [`register`](crate::register)) to use it from SQL.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

/// `bloom_contains` as a DataFusion [`ScalarUDF`], ready for `SessionContext::register_udf`.
pub fn bloom_contains_udf() -> ScalarUDF {
    ScalarUDF::from(BloomContains::new())
}

/// A decoded filter: borrowed in place when aligned, else an owned copy.
enum Probe<'a> {
    View(SplitBlockBloomFilterView<'a>),
    Owned(SplitBlockBloomFilter),
    Bound(&'a SplitBlockBloomFilter),
}

impl<'a> Probe<'a> {
    fn open(bytes: &'a [u8]) -> Result<Self, BloomUdfError> {
        let aligned = bytes.as_ptr().align_offset(32) == 0;
        let probe = if aligned {
            SplitBlockBloomFilterView::from_bytes(bytes).map(Probe::View)
        } else {
            SplitBlockBloomFilter::from_bytes(bytes).map(Probe::Owned)
        };
        probe.map_err(|source| BloomUdfError::InvalidFilter {
            function: BLOOM_CONTAINS,
            source,
        })
    }

    fn hasher(&self) -> &DefaultHasher {
        match self {
            Probe::View(v) => v.hasher(),
            Probe::Owned(f) => f.hasher(),
            Probe::Bound(f) => f.hasher(),
        }
    }

    fn contains_hash(&self, hash: u64) -> bool {
        match self {
            Probe::View(v) => v.contains_hash(hash),
            Probe::Owned(f) => f.contains_hash(hash),
            Probe::Bound(f) => f.contains_hash(hash),
        }
    }

    /// Probes every key of `keys`; nulls in `keys` give nulls.
    fn probe_array(&self, keys: &dyn Array) -> Result<BooleanArray> {
        let mut hashes = Vec::with_capacity(keys.len());
        hash_keys(self.hasher(), keys, &mut hashes)?;
        let mut out = vec![false; hashes.len()];
        let probed = match self {
            Probe::View(v) => v.contains_hash_batch(&hashes, &mut out),
            Probe::Owned(f) => f.contains_hash_batch(&hashes, &mut out),
            Probe::Bound(f) => f.contains_hash_batch(&hashes, &mut out),
        };
        probed.map_err(BloomUdfError::Core)?;
        let mut bits = BooleanBufferBuilder::new(out.len());
        for b in out {
            bits.append(b);
        }
        Ok(BooleanArray::new(bits.finish(), keys.logical_nulls()))
    }
}

fn hash_keys(hasher: &DefaultHasher, keys: &dyn Array, out: &mut Vec<u64>) -> Result<()> {
    hash_rows(hasher, keys, 0, keys.len(), Nulls::Placeholder, out).map_err(|t| {
        BloomUdfError::UnsupportedType {
            function: BLOOM_CONTAINS,
            data_type: t.to_string(),
            supported: KEY_TYPES,
        }
        .into()
    })
}

/// The bytes of a constant filter argument (`None` for SQL `NULL`).
fn scalar_bytes(value: &ScalarValue) -> Result<Option<&[u8]>> {
    match value {
        ScalarValue::Binary(b) | ScalarValue::LargeBinary(b) | ScalarValue::BinaryView(b) => {
            Ok(b.as_deref())
        }
        ScalarValue::Null => Ok(None),
        other => exec_err!(
            "bloom_contains: the filter must be Binary, got {}",
            other.data_type()
        ),
    }
}

impl ScalarUDFImpl for BloomContains {
    fn name(&self) -> &str {
        BLOOM_CONTAINS
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [filter, key] = arg_types else {
            return plan_err!(
                "bloom_contains takes 2 arguments (filter_bytes, expr), got {}",
                arg_types.len()
            );
        };
        match filter {
            DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
            | DataType::Null => {}
            other => {
                return plan_err!(
                    "bloom_contains: filter_bytes must be Binary (the bytes bloom_agg returns), got {other}"
                )
            }
        }
        Ok(vec![DataType::Binary, coerce_key(BLOOM_CONTAINS, key)?])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let Ok([filter, keys]) = <[ColumnarValue; 2]>::try_from(args.args) else {
            return exec_err!("bloom_contains takes 2 arguments (filter_bytes, expr)");
        };
        match (filter, keys) {
            (ColumnarValue::Scalar(filter), keys) => {
                let Some(bytes) = scalar_bytes(&filter)? else {
                    return Ok(ColumnarValue::Scalar(ScalarValue::Boolean(None)));
                };
                let probe = Probe::open(bytes)?;
                match keys {
                    ColumnarValue::Array(keys) => {
                        Ok(ColumnarValue::Array(Arc::new(probe.probe_array(&keys)?)))
                    }
                    ColumnarValue::Scalar(key) => {
                        let answer = probe.probe_array(&key.to_array_of_size(1)?)?;
                        Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                            &answer, 0,
                        )?))
                    }
                }
            }
            (ColumnarValue::Array(filters), keys) => {
                let keys = keys.to_array(rows)?;
                Ok(ColumnarValue::Array(Arc::new(probe_rows(&filters, &keys)?)))
            }
        }
    }
}

/// A different filter per row: decode each run of equal filter values once.
fn probe_rows(filters: &ArrayRef, keys: &ArrayRef) -> Result<BooleanArray> {
    let Some(filters) = filters.as_binary_opt::<i32>() else {
        return exec_err!(
            "bloom_contains: the filter must be Binary, got {}",
            filters.data_type()
        );
    };
    if filters.len() != keys.len() {
        return exec_err!(
            "bloom_contains: {} filters for {} keys",
            filters.len(),
            keys.len()
        );
    }
    let mut bits = BooleanBufferBuilder::new(keys.len());
    let mut valid = BooleanBufferBuilder::new(keys.len());
    let mut hashes = Vec::new();
    let mut last: Option<(&[u8], Probe<'_>)> = None;
    for i in 0..keys.len() {
        if filters.is_null(i) || keys.is_null(i) {
            bits.append(false);
            valid.append(false);
            continue;
        }
        let bytes = filters.value(i);
        let (bytes, probe) = match last.take() {
            Some((b, p)) if same_bytes(b, bytes) => (b, p),
            _ => (bytes, Probe::open(bytes)?),
        };
        hashes.clear();
        hash_rows(
            probe.hasher(),
            keys.as_ref(),
            i,
            i + 1,
            Nulls::Placeholder,
            &mut hashes,
        )
        .map_err(|t| BloomUdfError::UnsupportedType {
            function: BLOOM_CONTAINS,
            data_type: t.to_string(),
            supported: KEY_TYPES,
        })?;
        bits.append(hashes.first().is_some_and(|&h| probe.contains_hash(h)));
        valid.append(true);
        last = Some((bytes, probe));
    }
    Ok(BooleanArray::new(
        bits.finish(),
        Some(NullBuffer::new(valid.finish())),
    ))
}

/// Equal filter values, cheaply when they are the same buffer.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
}

/// `bloom_contains` with its filter bound when the function is made: a one-argument SQL
/// function `name(expr) -> Boolean` that answers as `bloom_contains(filter_bytes, expr)`.
///
/// The fast path for a large filter used by many batches: the bytes are checked (header
/// and checksum) and decoded once, here, instead of once per batch, and the plan carries
/// the function's name instead of a `Binary` literal of the whole filter (DataFusion
/// formats literals when it plans and displays a query, which for a filter of megabytes
/// costs more than the probes). Build the filter with `bloom_agg`, bind it, register it:
///
/// ```
/// use bloomforge_core::SplitBlockBloomFilter;
/// use bloomforge_datafusion::BloomContainsFilter;
/// use datafusion::arrow::array::{Array, AsArray};
/// use datafusion::logical_expr::ScalarUDF;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// let mut filter = SplitBlockBloomFilter::new(1000, 0.01).unwrap();
/// filter.insert("x.org");
/// let in_a = BloomContainsFilter::from_bytes("in_a", &filter.to_bytes())?;
/// let ctx = datafusion::prelude::SessionContext::new();
/// ctx.register_udf(ScalarUDF::from(in_a));
/// let out = ctx.sql("SELECT in_a('x.org'), in_a(NULL)").await?.collect().await?;
/// assert!(out[0].column(0).as_boolean().value(0));
/// assert!(out[0].column(1).is_null(0));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct BloomContainsFilter {
    name: String,
    signature: Signature,
    filter: Arc<SplitBlockBloomFilter>,
}

impl BloomContainsFilter {
    /// Binds the filter serialized in `filter_bytes` (as `bloom_agg` returns it) to the SQL
    /// function `name`.
    ///
    /// # Errors
    /// [`BloomUdfError::InvalidFilter`] when the bytes are not a split-block filter with an
    /// unkeyed hasher (as `bloom_contains` would report them).
    pub fn from_bytes(name: impl Into<String>, filter_bytes: &[u8]) -> Result<Self, BloomUdfError> {
        let filter = SplitBlockBloomFilter::from_bytes(filter_bytes).map_err(|source| {
            BloomUdfError::InvalidFilter {
                function: BLOOM_CONTAINS,
                source,
            }
        })?;
        Ok(Self::new(name, filter))
    }

    /// Binds a filter built in Rust (default hasher, any seed) to the SQL function `name`.
    pub fn new(name: impl Into<String>, filter: SplitBlockBloomFilter) -> Self {
        Self {
            name: name.into(),
            signature: Signature::user_defined(Volatility::Immutable),
            filter: Arc::new(filter),
        }
    }

    /// The bound filter.
    pub fn filter(&self) -> &SplitBlockBloomFilter {
        &self.filter
    }
}

/// Equal when they have the same name and share the same bound filter.
impl PartialEq for BloomContainsFilter {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && Arc::ptr_eq(&self.filter, &other.filter)
    }
}

impl Eq for BloomContainsFilter {}

impl std::hash::Hash for BloomContainsFilter {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        Arc::as_ptr(&self.filter).hash(state);
    }
}

impl ScalarUDFImpl for BloomContainsFilter {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [key] = arg_types else {
            return plan_err!(
                "{} takes 1 argument (expr), got {}",
                self.name,
                arg_types.len()
            );
        };
        Ok(vec![coerce_key(BLOOM_CONTAINS, key)?])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let Some(keys) = args.args.first() else {
            return exec_err!("{} takes 1 argument (expr)", self.name);
        };
        let probe = Probe::Bound(&self.filter);
        match keys {
            ColumnarValue::Array(keys) => {
                Ok(ColumnarValue::Array(Arc::new(probe.probe_array(keys)?)))
            }
            ColumnarValue::Scalar(key) => {
                let answer = probe.probe_array(&key.to_array_of_size(1)?)?;
                Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                    &answer, 0,
                )?))
            }
        }
    }
}
