//! `bloom_contains(filter_bytes, expr)`: the scalar function that queries a filter.

use crate::agg::{coerce_key, BloomKind};
use crate::error::BloomUdfError;
use crate::keys::{hash_rows, Nulls, KEY_TYPES};
use crate::parquet::ParquetColumnFilter;
use bloomforge_core::{DefaultHasher, SplitBlockBloomFilter, SplitBlockBloomFilterView};
use bloomforge_counting::CountingBloomFilter;
use bloomforge_interop::{ForeignFilter, ForeignFormat, KeyRef};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, BooleanBufferBuilder, ListArray,
};
use datafusion::arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// The SQL name of the scalar function.
pub const BLOOM_CONTAINS: &str = "bloom_contains";

/// `bloom_contains(filter_bytes, expr) -> Boolean`: whether each value of `expr` may be in
/// the filter whose bytes (as [`bloom_agg`](crate::BloomAgg) returns them, or `to_bytes`
/// of a `SplitBlockBloomFilter` or a `CountingBloomFilter` with an unkeyed hasher) are
/// `filter_bytes`. The kind is read from the bytes' header.
///
/// * `true`: may be present (false positives at the filter's rate); `false`: certainly
///   absent.
/// * SQL null semantics, as `expr IN (...)`: a `NULL` filter or a `NULL` key gives `NULL`
///   (unknown), which `WHERE` treats as not matching.
/// * Keys are hashed by the rule of the [module table](crate#keys), with the filter's own
///   hasher (its stored seed).
/// * Guava's and Spark's filters (`BloomFilter.writeTo` bytes of Guava, or of Spark's
///   versions 1 and 2: a filter exported from a Java service, `df.stat.bloomFilter` or
///   Spark SQL's `bloom_filter_agg`) are recognised from their first bytes and probed
///   with that system's hashing ([`bloomforge_interop`]): strings and binaries as their
///   bytes, integers as a Java `long` (Spark's `putLong`, Guava's `longFunnel`).
/// * Bytes that are not a split-block or counting filter (another kind, truncated,
///   failing the checksum, a keyed hasher) are an error wrapping
///   [`BloomUdfError::InvalidFilter`], never a panic: raised while planning for a
///   constant filter (below), while executing for a filter column.
///
/// A constant filter (a literal, a `$1` parameter) is checked once, when the query is
/// planned: DataFusion's optimizer hands the literal to this function's `simplify`, which
/// checks the header and checksum, decodes a counting filter, and replaces the `Binary`
/// literal by a one-element `List<Binary>` literal over a 64-byte-aligned Arrow buffer,
/// bound to the checked filter. DataFusion clones a literal for every batch it evaluates;
/// the list literal's clone shares its buffer (a `Binary` literal's clone would copy the
/// whole filter per batch), and each batch probes a split-block filter in place
/// (zero-copy, [`SplitBlockBloomFilterView`]) without checking it again. Every key of the
/// batch is hashed into one buffer and probed with the core's pipelined
/// `contains_hash_batch`. Where a plan is shipped to another process (Ballista), the
/// receiving side finds the same list literal, which it checks once per batch.
///
/// A large constant filter is better bound to a session variable
/// ([`BloomFilterVariables`]: `bloom_contains(@name, expr)`): DataFusion prints a
/// literal's bytes in full whenever it derives its field name, several times while
/// planning, which costs more than probing once a filter reaches megabytes.
///
/// A filter column (a different filter per row) is decoded once per run of equal values.
#[derive(Debug, Clone)]
pub struct BloomContains {
    signature: Signature,
    /// The constant filter this call was bound to by `simplify`.
    prepared: Option<Arc<Prepared>>,
}

/// Equal when unbound, or bound to the same checked filter.
impl PartialEq for BloomContains {
    fn eq(&self, other: &Self) -> bool {
        self.signature == other.signature
            && match (&self.prepared, &other.prepared) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for BloomContains {}

impl std::hash::Hash for BloomContains {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.signature.hash(state);
        self.prepared.as_ref().map(Arc::as_ptr).hash(state);
    }
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
            prepared: None,
        }
    }
}

/// `bloom_contains` as a DataFusion [`ScalarUDF`], ready for `SessionContext::register_udf`.
pub fn bloom_contains_udf() -> ScalarUDF {
    ScalarUDF::from(BloomContains::new())
}

/// A constant filter checked once, at planning time.
struct Prepared {
    /// The filter's bytes in an Arrow buffer (64-byte aligned), the value of the list
    /// literal that replaces the `Binary` one: it identifies the literal, and a
    /// split-block filter is probed in place.
    bytes: Buffer,
    decoded: Decoded,
}

enum Decoded {
    /// A split-block filter, checked; opened without the checksum pass per batch.
    SplitBlockView,
    /// A split-block filter the aligned view could not borrow (a platform without it).
    SplitBlock(SplitBlockBloomFilter),
    Counting(CountingBloomFilter),
    /// A Parquet column's filter (`bloom_parquet_filter`): keys hashed as Parquet does.
    Parquet(ParquetColumnFilter),
    /// A Guava or Spark filter: keys hashed as that system does.
    Foreign(ForeignFilter),
}

/// Not the bytes (DataFusion may print a plan's functions).
impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.decoded {
            Decoded::SplitBlockView | Decoded::SplitBlock(_) | Decoded::Parquet(_) => {
                BloomKind::SplitBlock.name()
            }
            Decoded::Counting(_) => BloomKind::Counting.name(),
            Decoded::Foreign(g) => g.format().name(),
        };
        write!(f, "Prepared({kind} filter, {} bytes)", self.bytes.len())
    }
}

impl Prepared {
    /// Copies `bytes` into an aligned buffer and checks (and for counting, decodes) them.
    fn new(bytes: &[u8]) -> Result<Self, BloomUdfError> {
        let invalid = |source| BloomUdfError::InvalidFilter {
            function: BLOOM_CONTAINS,
            source,
        };
        let buffer = Buffer::from_slice_ref(bytes);
        if let Some(f) = foreign(bytes)? {
            return Ok(Self {
                bytes: buffer,
                decoded: Decoded::Foreign(f),
            });
        }
        let decoded = match BloomKind::of_bytes(BLOOM_CONTAINS, bytes)? {
            BloomKind::SplitBlock if is_parquet(bytes) => Decoded::Parquet(
                ParquetColumnFilter::from_bytes(BLOOM_CONTAINS, bytes).map_err(invalid)?,
            ),
            BloomKind::SplitBlock => match SplitBlockBloomFilterView::from_bytes(&buffer) {
                Ok(_) => Decoded::SplitBlockView,
                Err(bloomforge_core::Error::ZeroCopy { .. }) => {
                    Decoded::SplitBlock(SplitBlockBloomFilter::from_bytes(bytes).map_err(invalid)?)
                }
                Err(e) => return Err(invalid(e)),
            },
            BloomKind::Counting => Decoded::Counting(
                CountingBloomFilter::from_bytes(bytes).map_err(|e| invalid(e.into()))?,
            ),
        };
        Ok(Self {
            bytes: buffer,
            decoded,
        })
    }

    /// The list literal the plan carries instead of the `Binary` one.
    fn literal(&self) -> ScalarValue {
        let values = BinaryArray::new(
            OffsetBuffer::from_lengths([self.bytes.len()]),
            self.bytes.clone(),
            None,
        );
        let list = ListArray::new(
            Arc::new(Field::new_list_field(DataType::Binary, false)),
            OffsetBuffer::from_lengths([1]),
            Arc::new(values),
            None,
        );
        ScalarValue::List(Arc::new(list))
    }

    /// Whether `bytes` are this filter's buffer (which `self` keeps alive, so its address
    /// cannot belong to other bytes).
    fn holds(&self, bytes: &[u8]) -> bool {
        bytes.as_ptr() == self.bytes.as_ptr() && bytes.len() == self.bytes.len()
    }

    fn probe(&self) -> Result<Probe<'_>, BloomUdfError> {
        Ok(match &self.decoded {
            Decoded::SplitBlockView => Probe::View(
                SplitBlockBloomFilterView::from_bytes_unverified(&self.bytes).map_err(
                    |source| BloomUdfError::InvalidFilter {
                        function: BLOOM_CONTAINS,
                        source,
                    },
                )?,
            ),
            Decoded::SplitBlock(f) => Probe::Bound(f),
            Decoded::Counting(f) => Probe::Counting(f),
            Decoded::Parquet(f) => Probe::Parquet(f),
            Decoded::Foreign(f) => Probe::Foreign(f),
        })
    }
}

/// The filters of every live [`BloomFilterVariables`], for the batches that receive one:
/// weak references, so a filter dropped with its variables leaves nothing behind. A
/// batch's filter bytes are matched by address and length, which is exact: a live
/// `Prepared` keeps its buffer allocated, so no other bytes can have its address.
static VARIABLE_FILTERS: std::sync::Mutex<Vec<std::sync::Weak<Prepared>>> =
    std::sync::Mutex::new(Vec::new());

/// The checked filter whose buffer `bytes` are, if a filter variable holds it.
fn variable_filter(bytes: &[u8]) -> Option<Arc<Prepared>> {
    let live = VARIABLE_FILTERS.lock().unwrap_or_else(|e| e.into_inner());
    live.iter()
        .filter_map(std::sync::Weak::upgrade)
        .find(|p| p.holds(bytes))
}

/// Filters bound to session variables, for `bloom_contains(@name, expr)`: a constant
/// filter that the plan names instead of carrying.
///
/// A filter passed as a literal or a `$1` parameter sits in the logical plan, and
/// DataFusion prints a literal in full whenever it derives that expression's field name,
/// which its analyzer and optimizer do several times a query: at 125 MiB (a filter of 100M
/// keys) that printing costs seconds, far more than probing. A variable prints as its
/// name; its value enters the plan only when the physical plan is built, as the checked
/// filter's list literal, and every batch probes it in place without checking it again.
///
/// [`register_filter_variables`] installs a set of them as the session's user-defined
/// variables (`@name`; it replaces any other user-defined variable provider). Each
/// filter is checked once, by [`insert`](Self::insert).
///
/// ```
/// use bloomforge_core::SplitBlockBloomFilter;
/// use datafusion::arrow::array::{Array, AsArray};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut filter = SplitBlockBloomFilter::new(1000, 0.01)?;
/// filter.insert("a.org");
///
/// let ctx = datafusion::prelude::SessionContext::new();
/// bloomforge_datafusion::register(&ctx);
/// let vars = bloomforge_datafusion::register_filter_variables(&ctx);
/// vars.insert("@in_a", &filter.to_bytes())?;
/// let out = ctx
///     .sql("SELECT bloom_contains(@in_a, u) FROM (VALUES ('a.org'), ('b.org')) t(u)")
///     .await?
///     .collect()
///     .await?;
/// let answers = out[0].column(0).as_boolean();
/// assert!(answers.value(0));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct BloomFilterVariables {
    filters: std::sync::RwLock<std::collections::HashMap<String, Arc<Prepared>>>,
}

impl BloomFilterVariables {
    /// No variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds `name` (`@in_a`; the `@` may be left out) to the filter `bytes` (a split-block
    /// or counting filter's `to_bytes`, `bloom_agg`'s result, or `bloom_parquet_filter`'s),
    /// checking them once; a previous filter of that name is replaced.
    ///
    /// # Errors
    /// [`BloomUdfError::InvalidFilter`] for bytes that are not such a filter.
    pub fn insert(&self, name: &str, bytes: &[u8]) -> Result<(), BloomUdfError> {
        let prepared = Arc::new(Prepared::new(bytes)?);
        {
            let mut live = VARIABLE_FILTERS.lock().unwrap_or_else(|e| e.into_inner());
            live.retain(|w| w.strong_count() > 0);
            live.push(Arc::downgrade(&prepared));
        }
        let mut filters = self.filters.write().unwrap_or_else(|e| e.into_inner());
        filters.insert(variable_name(name), prepared);
        Ok(())
    }

    /// Unbinds `name`; whether it was bound.
    pub fn remove(&self, name: &str) -> bool {
        let mut filters = self.filters.write().unwrap_or_else(|e| e.into_inner());
        filters.remove(&variable_name(name)).is_some()
    }

    fn get(&self, var_names: &[String]) -> Option<Arc<Prepared>> {
        let filters = self.filters.read().unwrap_or_else(|e| e.into_inner());
        filters.get(&var_names.join(".")).cloned()
    }
}

/// `name` as DataFusion passes it to a variable provider: with its leading `@`.
fn variable_name(name: &str) -> String {
    if name.starts_with('@') {
        name.to_string()
    } else {
        format!("@{name}")
    }
}

impl datafusion::variable::VarProvider for BloomFilterVariables {
    fn get_value(&self, var_names: Vec<String>) -> Result<ScalarValue> {
        match self.get(&var_names) {
            Some(prepared) => Ok(prepared.literal()),
            None => plan_err!("no Bloom filter variable {}", var_names.join(".")),
        }
    }

    fn get_type(&self, var_names: &[String]) -> Option<DataType> {
        self.get(var_names).map(|_| planned_type())
    }
}

/// The type of a planned constant filter: a one-element `List<Binary>`.
fn planned_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(DataType::Binary, false)))
}

/// Installs an empty [`BloomFilterVariables`] as `ctx`'s user-defined variables and
/// returns it, to [`insert`](BloomFilterVariables::insert) filters into.
pub fn register_filter_variables(
    ctx: &datafusion::prelude::SessionContext,
) -> Arc<BloomFilterVariables> {
    let vars = Arc::new(BloomFilterVariables::new());
    ctx.register_variable(
        datafusion::variable::VarType::UserDefined,
        Arc::clone(&vars) as Arc<dyn datafusion::variable::VarProvider + Send + Sync>,
    );
    vars
}

/// A decoded filter: borrowed in place when aligned, else an owned copy.
enum Probe<'a> {
    View(SplitBlockBloomFilterView<'a>),
    Owned(SplitBlockBloomFilter),
    Bound(&'a SplitBlockBloomFilter),
    Counting(&'a CountingBloomFilter),
    CountingOwned(CountingBloomFilter),
    Parquet(&'a ParquetColumnFilter),
    ParquetOwned(ParquetColumnFilter),
    Foreign(&'a ForeignFilter),
    ForeignOwned(ForeignFilter),
}

impl<'a> Probe<'a> {
    fn open(bytes: &'a [u8]) -> Result<Self, BloomUdfError> {
        let invalid = |source| BloomUdfError::InvalidFilter {
            function: BLOOM_CONTAINS,
            source,
        };
        if let Some(f) = foreign(bytes)? {
            return Ok(Probe::ForeignOwned(f));
        }
        if BloomKind::of_bytes(BLOOM_CONTAINS, bytes)? == BloomKind::Counting {
            return CountingBloomFilter::from_bytes(bytes)
                .map(Probe::CountingOwned)
                .map_err(|e| invalid(e.into()));
        }
        if is_parquet(bytes) {
            return ParquetColumnFilter::from_bytes(BLOOM_CONTAINS, bytes)
                .map(Probe::ParquetOwned)
                .map_err(invalid);
        }
        let aligned = bytes.as_ptr().align_offset(32) == 0;
        let probe = if aligned {
            SplitBlockBloomFilterView::from_bytes(bytes).map(Probe::View)
        } else {
            SplitBlockBloomFilter::from_bytes(bytes).map(Probe::Owned)
        };
        probe.map_err(invalid)
    }

    /// The hasher of a filter probed with bloomforge's own hashing; `None` for a Parquet
    /// column's filter, whose keys hash by the column's physical type.
    fn hasher(&self) -> Option<&DefaultHasher> {
        match self {
            Probe::View(v) => Some(v.hasher()),
            Probe::Owned(f) => Some(f.hasher()),
            Probe::Bound(f) => Some(f.hasher()),
            Probe::Counting(f) => Some(f.hasher()),
            Probe::CountingOwned(f) => Some(f.hasher()),
            Probe::Parquet(_)
            | Probe::ParquetOwned(_)
            | Probe::Foreign(_)
            | Probe::ForeignOwned(_) => None,
        }
    }

    fn foreign(&self) -> Option<&ForeignFilter> {
        match self {
            Probe::Foreign(f) => Some(f),
            Probe::ForeignOwned(f) => Some(f),
            _ => None,
        }
    }

    fn parquet(&self) -> Option<&ParquetColumnFilter> {
        match self {
            Probe::Parquet(f) => Some(f),
            Probe::ParquetOwned(f) => Some(f),
            _ => None,
        }
    }

    fn contains_hash(&self, hash: u64) -> bool {
        match self {
            Probe::View(v) => v.contains_hash(hash),
            Probe::Owned(f) => f.contains_hash(hash),
            Probe::Bound(f) => f.contains_hash(hash),
            Probe::Counting(f) => f.contains_hash(hash),
            Probe::CountingOwned(f) => f.contains_hash(hash),
            Probe::Parquet(f) => f.filter().contains_hash(hash),
            Probe::ParquetOwned(f) => f.filter().contains_hash(hash),
            // Never reached: a foreign filter has no hasher, so no hash is computed for it.
            Probe::Foreign(_) | Probe::ForeignOwned(_) => true,
        }
    }

    /// Probes every key of `keys`; nulls in `keys` give nulls.
    fn probe_array(&self, keys: &dyn Array) -> Result<BooleanArray> {
        let Some(hasher) = self.hasher() else {
            if let Some(f) = self.foreign() {
                return foreign_contains_array(f, keys);
            }
            let filter = self.parquet().ok_or_else(|| {
                datafusion::error::DataFusionError::Internal("a filter without a hasher".into())
            })?;
            return Ok(filter.contains_array(keys)?);
        };
        let mut hashes = Vec::with_capacity(keys.len());
        hash_keys(hasher, keys, &mut hashes)?;
        let mut out = vec![false; hashes.len()];
        let probed = match self {
            Probe::View(v) => v.contains_hash_batch(&hashes, &mut out),
            Probe::Owned(f) => f.contains_hash_batch(&hashes, &mut out),
            Probe::Bound(f) => f.contains_hash_batch(&hashes, &mut out),
            Probe::Counting(f) => f.contains_hash_batch(&hashes, &mut out).map_err(Into::into),
            Probe::CountingOwned(f) => f.contains_hash_batch(&hashes, &mut out).map_err(Into::into),
            Probe::Parquet(f) => f.filter().contains_hash_batch(&hashes, &mut out),
            Probe::ParquetOwned(f) => f.filter().contains_hash_batch(&hashes, &mut out),
            Probe::Foreign(_) | Probe::ForeignOwned(_) => Ok(()),
        };
        probed.map_err(BloomUdfError::Core)?;
        let bits = BooleanBuffer::collect_bool(out.len(), |i| out[i]);
        Ok(BooleanArray::new(bits, keys.logical_nulls()))
    }
}

/// A Guava or Spark filter in `bytes` (recognised by their first bytes; bloomforge's own
/// start with their magic), or `None`.
fn foreign(bytes: &[u8]) -> Result<Option<ForeignFilter>, BloomUdfError> {
    if bytes.starts_with(&bloomforge_core::format::MAGIC) || ForeignFormat::detect(bytes).is_none()
    {
        return Ok(None);
    }
    ForeignFilter::from_bytes(bytes)
        .map(Some)
        .map_err(|e| BloomUdfError::InvalidForeignFilter {
            function: BLOOM_CONTAINS,
            reason: e.to_string(),
        })
}

/// Probes a Guava or Spark filter with `keys` as that system funnels them: strings and
/// binaries as their bytes, integers as a Java `long` (Spark widens `int`, `short` and
/// `byte` values to `long` in `put`; a `UInt64` is the `long` with its bits).
fn foreign_contains_array(filter: &ForeignFilter, keys: &dyn Array) -> Result<BooleanArray> {
    use datafusion::arrow::datatypes as t;
    let n = keys.len();
    let mut out = vec![false; n];
    macro_rules! probe {
        ($keys:expr) => {{
            let keys: Vec<KeyRef<'_>> = $keys.collect();
            filter.contains_batch(&keys, &mut out).map_err(|e| {
                BloomUdfError::InvalidForeignFilter {
                    function: BLOOM_CONTAINS,
                    reason: e.to_string(),
                }
            })?;
        }};
    }
    macro_rules! ints {
        ($ty:ty) => {{
            let a = keys.as_primitive::<$ty>();
            probe!(a.values().iter().map(|&v| KeyRef::Long(v as i64)))
        }};
    }
    match keys.data_type() {
        DataType::Utf8 => {
            probe!((0..n).map(|i| KeyRef::Bytes(keys.as_string::<i32>().value(i).as_bytes())))
        }
        DataType::LargeUtf8 => {
            probe!((0..n).map(|i| KeyRef::Bytes(keys.as_string::<i64>().value(i).as_bytes())))
        }
        DataType::Utf8View => {
            probe!((0..n).map(|i| KeyRef::Bytes(keys.as_string_view().value(i).as_bytes())))
        }
        DataType::Binary => probe!((0..n).map(|i| KeyRef::Bytes(keys.as_binary::<i32>().value(i)))),
        DataType::LargeBinary => {
            probe!((0..n).map(|i| KeyRef::Bytes(keys.as_binary::<i64>().value(i))))
        }
        DataType::BinaryView => {
            probe!((0..n).map(|i| KeyRef::Bytes(keys.as_binary_view().value(i))))
        }
        DataType::FixedSizeBinary(_) => {
            probe!((0..n).map(|i| KeyRef::Bytes(keys.as_fixed_size_binary().value(i))))
        }
        DataType::Int8 => ints!(t::Int8Type),
        DataType::Int16 => ints!(t::Int16Type),
        DataType::Int32 => ints!(t::Int32Type),
        DataType::Int64 => ints!(t::Int64Type),
        DataType::UInt8 => ints!(t::UInt8Type),
        DataType::UInt16 => ints!(t::UInt16Type),
        DataType::UInt32 => ints!(t::UInt32Type),
        DataType::UInt64 => ints!(t::UInt64Type),
        other => {
            return Err(BloomUdfError::UnsupportedType {
                function: BLOOM_CONTAINS,
                data_type: other.to_string(),
                supported: FOREIGN_KEY_TYPES,
            }
            .into())
        }
    }
    let bits = BooleanBuffer::collect_bool(n, |i| out[i]);
    Ok(BooleanArray::new(bits, keys.logical_nulls()))
}

const FOREIGN_KEY_TYPES: &str = "Utf8, LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView, \
     FixedSizeBinary, Int8..Int64, UInt8..UInt64 (for a Guava or Spark filter)";

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
        ScalarValue::List(list) => list_bytes(list),
        ScalarValue::Null => Ok(None),
        other => exec_err!(
            "bloom_contains: the filter must be Binary, got {}",
            other.data_type()
        ),
    }
}

/// A short name for filter bytes: kind, length and the header's checksum (bytes without
/// a valid header: their length and a hash of at most their first 4 KiB).
fn filter_label(bytes: &[u8]) -> String {
    match bloomforge_core::format::Header::parse(bytes) {
        Ok(h) => format!(
            "filter[{:?}, {} bytes, checksum {:#018x}]",
            h.kind,
            bytes.len(),
            h.checksum
        ),
        Err(_) => {
            use core::hash::BuildHasher;
            let head = &bytes[..bytes.len().min(4096)];
            let hash = DefaultHasher::default().hash_one(head);
            format!("bytes[{} bytes, {hash:#018x}]", bytes.len())
        }
    }
}

/// The filter of a one-element `List<Binary>` (the literal `simplify` plans).
fn list_bytes(list: &ListArray) -> Result<Option<&[u8]>> {
    let Some(values) = list.values().as_binary_opt::<i32>() else {
        return exec_err!(
            "bloom_contains: a filter list must be List<Binary>, got {}",
            list.data_type()
        );
    };
    if list.len() != 1 || list.is_null(0) {
        return match list.len() {
            1 => Ok(None),
            n => exec_err!("bloom_contains: a filter list holds one filter, got {n} rows"),
        };
    }
    let offsets = list.value_offsets();
    let (start, end) = (offsets[0] as usize, offsets[1] as usize);
    if end != start + 1 {
        return exec_err!(
            "bloom_contains: a filter list holds one filter, got {}",
            end.saturating_sub(start)
        );
    }
    Ok(values.is_valid(start).then(|| values.value(start)))
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
            // The planned form of a constant filter (see `simplify`).
            DataType::List(field) if field.data_type() == &DataType::Binary => {
                return Ok(vec![filter.clone(), coerce_key(BLOOM_CONTAINS, key)?]);
            }
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

    /// The output name, `bloom_contains(filter[kind, N bytes, checksum C],key)` for a
    /// constant filter: DataFusion derives an expression's field name from this while
    /// planning, often, and its default prints every byte of a literal (megabytes of
    /// text for each call, which cost more than the probes). The header's checksum
    /// (one read, no pass over the bytes) tells different filters apart; the bound list
    /// literal gets the same name as the `Binary` literal it replaced.
    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        let mut parts = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            let bytes = match arg {
                Expr::Literal(
                    ScalarValue::Binary(Some(b))
                    | ScalarValue::LargeBinary(Some(b))
                    | ScalarValue::BinaryView(Some(b)),
                    _,
                ) if i == 0 => Some(b.as_slice()),
                Expr::Literal(ScalarValue::List(list), _) if i == 0 => {
                    list_bytes(list).ok().flatten()
                }
                _ => None,
            };
            parts.push(match bytes {
                Some(bytes) => filter_label(bytes),
                None => arg.schema_name().to_string(),
            });
        }
        Ok(format!("{}({})", self.name(), parts.join(",")))
    }

    /// A constant `Binary` filter is checked here, once, and replaced by a list literal
    /// bound to the checked filter (see the type's docs).
    fn simplify(&self, args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        if self.prepared.is_some() {
            return Ok(ExprSimplifyResult::Original(args));
        }
        let prepared = match args.first() {
            Some(Expr::Literal(
                ScalarValue::Binary(Some(bytes))
                | ScalarValue::LargeBinary(Some(bytes))
                | ScalarValue::BinaryView(Some(bytes)),
                _,
            )) if args.len() == 2 && i32::try_from(bytes.len()).is_ok() => Prepared::new(bytes)?,
            _ => return Ok(ExprSimplifyResult::Original(args)),
        };
        let literal = Expr::Literal(prepared.literal(), None);
        let bound = BloomContains {
            signature: self.signature.clone(),
            prepared: Some(Arc::new(prepared)),
        };
        let key = args
            .into_iter()
            .nth(1)
            .unwrap_or(Expr::Literal(ScalarValue::Null, None));
        Ok(ExprSimplifyResult::Simplified(Expr::ScalarFunction(
            ScalarFunction::new_udf(Arc::new(ScalarUDF::from(bound)), vec![literal, key]),
        )))
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
                let variable;
                let probe = match &self.prepared {
                    Some(prepared) if prepared.holds(bytes) => prepared.probe()?,
                    _ => match variable_filter(bytes) {
                        Some(prepared) => {
                            variable = prepared;
                            variable.probe()?
                        }
                        None => Probe::open(bytes)?,
                    },
                };
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
        let Some(hasher) = probe.hasher() else {
            // A Parquet column's filter hashes by the column's type: probe the row alone.
            let answer = probe.probe_array(keys.slice(i, 1).as_ref())?;
            bits.append(answer.is_valid(0) && answer.value(0));
            valid.append(answer.is_valid(0));
            last = Some((bytes, probe));
            continue;
        };
        hashes.clear();
        hash_rows(
            hasher,
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

/// Whether `bytes` hold a Parquet column's filter (`bloom_parquet_filter`'s output).
fn is_parquet(bytes: &[u8]) -> bool {
    bloomforge_core::format::Header::parse(bytes)
        .is_ok_and(|h| h.algorithm == bloomforge_core::format::HashAlgorithm::ParquetXxh64)
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
