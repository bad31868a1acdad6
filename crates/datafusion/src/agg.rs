//! `bloom_agg(expr, expected_items, false_pos [, kind])`: the aggregate that builds a filter.

use crate::error::BloomUdfError;
use crate::keys::{hash_rows, is_key_type, Nulls, KEY_TYPES};
use bloomforge_core::format::{FilterKind, HashAlgorithm, Header};
use bloomforge_core::hash::hasher_fingerprint;
use bloomforge_core::{DefaultHasher, FilterShape, SplitBlockBloomFilter};
use bloomforge_counting::CountingBloomFilter;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, RecordBatch, RecordBatchOptions,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::function::{
    AccumulatorArgs, AggregateFunctionSimplification, StateFieldsArgs,
};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Expr, Signature, Volatility,
};
use datafusion::logical_expr::{LogicalPlan, WindowFunctionDefinition};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::PhysicalExpr;
use std::sync::Arc;

/// The SQL name of the aggregate.
pub const BLOOM_AGG: &str = "bloom_agg";

/// Rows hashed per step of `update_batch`: the reused hash buffer holds this many `u64`s
/// (32 KiB, in L1/L2) however large the input array is.
const HASH_CHUNK: usize = 4096;

/// `bloom_agg(expr, expected_items, false_pos [, kind]) -> Binary`: a filter sized by
/// `new(expected_items, false_pos)` (default hasher, seed 0) holding every non-null value
/// of `expr`, returned as the filter's bytes in the project's format (`to_bytes`; read them
/// back with `from_bytes` or query them with [`bloom_contains`](crate::BloomContains)).
///
/// * `expr`: one of the key types of the [module table](crate#keys) (Int8/Int16 and
///   UInt8/UInt16 are hashed widened, as the table says).
/// * `expected_items`: a constant integer, at least 1.
/// * `false_pos`: a constant number in (0, 1).
/// * `kind` (optional, a constant string, [`BloomKind`]): `'split-block'` (the default)
///   builds a [`SplitBlockBloomFilter`]; `'counting'` a
///   [`CountingBloomFilter`](bloomforge_counting::CountingBloomFilter) (blocked layout,
///   4-bit saturating counters, about 2.1x the bytes at 1 %), the kind that can delete, so
///   it also runs as a window function over sliding frames
///   (`OVER (ORDER BY .. ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)`: DataFusion retracts
///   the rows that leave the frame).
///
/// Parameters are checked when the query is planned: a column, a non-constant expression,
/// `expected_items < 1`, `false_pos` outside (0, 1) (NaN included) or an unknown kind is a
/// `DataFusionError::Plan` from `create_physical_plan` (DataFusion's optimizer wraps it in
/// a `Context` naming its rule; `find_root` gives the `Plan`), before any row is read. In
/// a window (`OVER`), DataFusion does not call the aggregate's planning hook; there the
/// optimizer rule [`BloomAggWindowCheck`] (added by [`register`](crate::register)) fails
/// the plan the same way. A session given only the function (`register_udaf`) gets the
/// error when the query executes, before the accumulator sees a row.
///
/// Nulls are not keys: they are skipped. Zero rows (or only nulls) give an empty filter,
/// never SQL `NULL`, so `bloom_contains` over it answers `false`.
///
/// Partial aggregation (several partitions, or several nodes) builds one filter per
/// partition; the final step merges them: split-block filters are ORed, counting filters
/// add their counters (saturating at 15, as `CountingBloomFilter::union`), both giving the
/// bytes of one filter built from all rows (for counting filters, while no counter
/// saturates). The state is the partial filter's bytes, so it crosses process boundaries
/// as is; states of another kind or other parameters are refused.
///
/// ```
/// use bloomforge_counting::CountingBloomFilter;
/// use datafusion::arrow::array::AsArray;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// let ctx = datafusion::prelude::SessionContext::new();
/// bloomforge_datafusion::register(&ctx);
/// let sql = "SELECT bloom_agg(column1, 1000, 0.01, 'counting') FROM (VALUES ('a'), ('b'))";
/// let out = ctx.sql(sql).await?.collect().await?;
/// let filter = CountingBloomFilter::from_bytes(out[0].column(0).as_binary::<i32>().value(0))
///     .unwrap();
/// assert!(filter.contains("a") && filter.contains("b"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BloomAgg {
    signature: Signature,
}

impl Default for BloomAgg {
    fn default() -> Self {
        Self::new()
    }
}

impl BloomAgg {
    /// The aggregate's implementation; register [`bloom_agg_udaf`] (or call
    /// [`register`](crate::register)) to use it from SQL.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

/// `bloom_agg` as a DataFusion [`AggregateUDF`], ready for `SessionContext::register_udaf`.
pub fn bloom_agg_udaf() -> AggregateUDF {
    AggregateUDF::from(BloomAgg::new())
}

/// The type `bloom_agg` and `bloom_contains` hash values of type `t` as: key types stay,
/// small integers widen (hashing widens them anyway), `Null` becomes `Int64` (all-null
/// input: nothing to hash), anything else is a planning error.
pub(crate) fn coerce_key(function: &'static str, t: &DataType) -> Result<DataType> {
    match t {
        t if is_key_type(t) => Ok(t.clone()),
        DataType::Null => Ok(DataType::Int64),
        DataType::Dictionary(_, value) if is_key_type(value) => Ok(value.as_ref().clone()),
        other => Err(BloomUdfError::UnsupportedType {
            function,
            data_type: other.to_string(),
            supported: KEY_TYPES,
        }
        .into()),
    }
}

/// The filter kinds `bloom_agg` builds, named by its optional fourth argument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BloomKind {
    /// `'split-block'` (the default): [`SplitBlockBloomFilter`], Parquet's SBBF layout.
    #[default]
    SplitBlock,
    /// `'counting'`: [`CountingBloomFilter`] (blocked layout, 4-bit saturating counters),
    /// which can delete, so `bloom_agg` retracts rows in sliding window frames.
    Counting,
}

impl BloomKind {
    /// The SQL spelling: `"split-block"` or `"counting"`.
    pub fn name(self) -> &'static str {
        match self {
            BloomKind::SplitBlock => "split-block",
            BloomKind::Counting => "counting",
        }
    }

    /// The kind of a SQL spelling, ASCII case-insensitive (`None` for anything else).
    ///
    /// ```
    /// use bloomforge_datafusion::BloomKind;
    /// assert_eq!(BloomKind::parse("Counting"), Some(BloomKind::Counting));
    /// assert_eq!(BloomKind::parse("split-block"), Some(BloomKind::SplitBlock));
    /// assert_eq!(BloomKind::parse("cuckoo"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Self> {
        [BloomKind::SplitBlock, BloomKind::Counting]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    /// The kind of serialized filter bytes, from their header: split-block, or counting
    /// (either counter layout).
    ///
    /// # Errors
    /// [`BloomUdfError::InvalidFilter`] (for `function`) when the header is not a
    /// bloomforge header or names another filter kind.
    pub(crate) fn of_bytes(function: &'static str, bytes: &[u8]) -> Result<Self, BloomUdfError> {
        let invalid = |source| BloomUdfError::InvalidFilter { function, source };
        match Header::parse(bytes).map_err(invalid)?.kind {
            FilterKind::SplitBlock256 => Ok(BloomKind::SplitBlock),
            FilterKind::CountingBlocked | FilterKind::CountingStandard => Ok(BloomKind::Counting),
            _ => Err(invalid(bloomforge_core::Error::Corrupt {
                reason: "the bytes hold a filter kind other than split-block or counting",
            })),
        }
    }
}

/// `bloom_agg`'s validated parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Params {
    expected_items: u64,
    false_pos: f64,
    kind: BloomKind,
}

const ARITY: &str = "bloom_agg takes 3 or 4 arguments (expr, expected_items, false_pos [, kind])";

impl Params {
    /// Checks the constant values of the parameters (already cast to the types
    /// `coerce_types` asked for; `kind` absent for the three-argument form).
    fn from_values(items: ScalarValue, fp: ScalarValue, kind: Option<ScalarValue>) -> Result<Self> {
        let expected_items = match items.cast_to(&DataType::Int64)? {
            ScalarValue::Int64(Some(n)) if n >= 1 => n as u64,
            other => {
                return Err(invalid(
                    "expected_items",
                    format!("{other} is not an integer >= 1"),
                ))
            }
        };
        // NaN fails both comparisons.
        let false_pos = match fp.cast_to(&DataType::Float64)? {
            ScalarValue::Float64(Some(p)) if p > 0.0 && p < 1.0 => p,
            other => return Err(invalid("false_pos", format!("{other} is not in (0, 1)"))),
        };
        let kind = match kind {
            None => BloomKind::SplitBlock,
            Some(value) => match value.cast_to(&DataType::Utf8)? {
                ScalarValue::Utf8(Some(name)) => BloomKind::parse(&name).ok_or_else(|| {
                    invalid(
                        "kind",
                        format!("'{name}' is not 'split-block' or 'counting'"),
                    )
                })?,
                other => {
                    return Err(invalid(
                        "kind",
                        format!("{other} is not 'split-block' or 'counting'"),
                    ))
                }
            },
        };
        Ok(Params {
            expected_items,
            false_pos,
            kind,
        })
    }

    /// The planning-time check: the parameters of a logical `bloom_agg` call, after
    /// DataFusion has folded constant expressions, must be literals in range.
    fn from_exprs(args: &[Expr]) -> Result<Self> {
        const NAMES: [&str; 3] = ["expected_items", "false_pos", "kind"];
        if !(3..=4).contains(&args.len()) {
            return plan_err!("{ARITY}, got {}", args.len());
        }
        let mut values = Vec::with_capacity(3);
        for (arg, name) in args[1..].iter().zip(NAMES) {
            values.push(literal(arg, name)?);
        }
        let mut values = values.into_iter();
        let (Some(items), Some(fp)) = (values.next(), values.next()) else {
            return plan_err!("{ARITY}");
        };
        Params::from_values(items, fp, values.next())
    }
}

/// A parameter's value when it is a literal (through casts and aliases).
fn literal(expr: &Expr, name: &'static str) -> Result<ScalarValue> {
    match expr {
        Expr::Literal(value, _) => Ok(value.clone()),
        Expr::Alias(alias) => literal(&alias.expr, name),
        Expr::Cast(cast) => literal(&cast.expr, name)?.cast_to(cast.field.data_type()),
        other if !other.column_refs().is_empty() => Err(invalid(
            name,
            format!("{other} refers to a column; it must be a constant"),
        )),
        other => Err(invalid(
            name,
            format!("{other} is not a constant (a literal or an expression of literals)"),
        )),
    }
}

impl AggregateUDFImpl for BloomAgg {
    fn name(&self) -> &str {
        BLOOM_AGG
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let (key, items, fp, kind) = match arg_types {
            [key, items, fp] => (key, items, fp, None),
            [key, items, fp, kind] => (key, items, fp, Some(kind)),
            _ => return plan_err!("{ARITY}, got {}", arg_types.len()),
        };
        if !(items.is_integer() || items.is_null()) {
            return plan_err!(
                "bloom_agg: expected_items must be a constant integer, got type {items}"
            );
        }
        if !(fp.is_numeric() || fp.is_null()) {
            return plan_err!("bloom_agg: false_pos must be a constant number, got type {fp}");
        }
        let mut types = vec![
            coerce_key(BLOOM_AGG, key)?,
            DataType::Int64,
            DataType::Float64,
        ];
        if let Some(kind) = kind {
            match kind {
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
                    types.push(DataType::Utf8)
                }
                other => {
                    return plan_err!(
                        "bloom_agg: kind must be a constant string ('split-block' or 'counting'), got type {other}"
                    )
                }
            }
        }
        Ok(types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Binary)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(
            format_state_name(args.name, "filter"),
            DataType::Binary,
            true,
        ))])
    }

    /// The planning-time parameter check: DataFusion's optimizer calls this for every
    /// `bloom_agg` aggregate (not for window uses), after folding constants.
    fn simplify(&self) -> Option<AggregateFunctionSimplification> {
        Some(Box::new(|call: AggregateFunction, _info| {
            Params::from_exprs(&call.params.args)?;
            Ok(Expr::AggregateFunction(call))
        }))
    }

    fn accumulator(&self, acc_args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let (items, fp, kind) = match acc_args.exprs {
            [_, items, fp] => (items, fp, None),
            [_, items, fp, kind] => (items, fp, Some(kind)),
            other => return plan_err!("{ARITY}, got {}", other.len()),
        };
        let kind = kind.map(|k| constant(k, "kind")).transpose()?;
        let params = Params::from_values(
            constant(items, "expected_items")?,
            constant(fp, "false_pos")?,
            kind,
        )?;
        Ok(match params.kind {
            BloomKind::SplitBlock => Box::new(BloomAccumulator::new(
                params.expected_items,
                params.false_pos,
            )?),
            BloomKind::Counting => Box::new(CountingBloomAccumulator::new(
                params.expected_items,
                params.false_pos,
            )?),
        })
    }
}

/// Checks `bloom_agg`'s parameters where it runs as a window function (`OVER`): DataFusion
/// gives window calls of an aggregate no `simplify` hook, so without this rule a bad
/// parameter there is found only when the query executes. The rule runs after
/// DataFusion's own optimizer rules (constants are folded by then), changes nothing, and
/// fails the plan with the same [`BloomUdfError::InvalidParameter`] as the aggregate form.
/// [`register`](crate::register) and [`with_functions`](crate::with_functions) add it.
#[derive(Debug, Default, Clone, Copy)]
pub struct BloomAggWindowCheck;

impl OptimizerRule for BloomAggWindowCheck {
    fn name(&self) -> &str {
        "bloom_agg_window_parameters"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.apply_with_subqueries(|node| {
            if let LogicalPlan::Window(window) = node {
                for expr in &window.window_expr {
                    expr.apply(|e| {
                        if let Expr::WindowFunction(call) = e
                            && let WindowFunctionDefinition::AggregateUDF(udaf) = &call.fun
                            && udaf.inner().is::<BloomAgg>()
                        {
                            Params::from_exprs(&call.params.args)?;
                        }
                        Ok(TreeNodeRecursion::Continue)
                    })?;
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(Transformed::no(plan))
    }
}

fn invalid(name: &'static str, reason: String) -> datafusion::error::DataFusionError {
    BloomUdfError::InvalidParameter {
        function: BLOOM_AGG,
        name,
        reason,
    }
    .into()
}

/// Evaluates a parameter that must not depend on the input rows (a literal, or an
/// expression of literals the optimiser has not folded, as in a window's arguments).
fn constant(expr: &Arc<dyn PhysicalExpr>, name: &'static str) -> Result<ScalarValue> {
    if !collect_columns(expr).is_empty() {
        return Err(invalid(
            name,
            format!("{expr} refers to a column; it must be a constant"),
        ));
    }
    let one_row = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )?;
    let value = expr.evaluate(&one_row)?.to_array_of_size(1)?;
    ScalarValue::try_from_array(&value, 0)
}

/// Hashes the rows of `keys` a chunk of [`HASH_CHUNK`] at a time into the reused buffer
/// `hashes` (nulls skipped) and hands each chunk's hashes to `sink`.
fn for_each_hash_chunk(
    hasher: &DefaultHasher,
    keys: &dyn Array,
    hashes: &mut Vec<u64>,
    mut sink: impl FnMut(&[u64]) -> Result<()>,
) -> Result<()> {
    let mut start = 0;
    while start < keys.len() {
        let end = keys.len().min(start + HASH_CHUNK);
        hashes.clear();
        hash_rows(hasher, keys, start, end, Nulls::Skip, hashes).map_err(|t| {
            BloomUdfError::UnsupportedType {
                function: BLOOM_AGG,
                data_type: t.to_string(),
                supported: KEY_TYPES,
            }
        })?;
        sink(hashes)?;
        start = end;
    }
    Ok(())
}

/// The one `Binary` state array of a `merge_batch` call.
fn state_array(states: &[ArrayRef]) -> Result<&BinaryArray> {
    let Some(states) = states.first() else {
        return plan_err!("bloom_agg: merge_batch needs the state array");
    };
    let Some(states) = states.as_binary_opt::<i32>() else {
        return plan_err!(
            "bloom_agg: a partial state must be Binary, got {}",
            states.data_type()
        );
    };
    Ok(states)
}

/// The key array of an `update_batch` / `retract_batch` call.
fn key_array(values: &[ArrayRef]) -> Result<&ArrayRef> {
    match values.first() {
        Some(keys) => Ok(keys),
        None => plan_err!("bloom_agg: update_batch needs the key array"),
    }
}

/// Refuses a state of the other kind before decoding it.
fn check_kind(accumulator: BloomKind, bytes: &[u8]) -> Result<(), BloomUdfError> {
    let state = BloomKind::of_bytes(BLOOM_AGG, bytes)?;
    if state != accumulator {
        return Err(BloomUdfError::MismatchedKinds {
            accumulator: accumulator.name(),
            state: state.name(),
        });
    }
    Ok(())
}

/// `update_batch` of both kinds: hashes the non-null keys of `values` chunk by chunk into
/// the reused buffer `hashes` and hands each chunk to `insert`.
fn insert_keys(
    values: &[ArrayRef],
    hasher: &DefaultHasher,
    hashes: &mut Vec<u64>,
    mut insert: impl FnMut(&[u64]),
) -> Result<()> {
    let keys = key_array(values)?;
    for_each_hash_chunk(hasher, keys.as_ref(), hashes, |chunk| {
        insert(chunk);
        Ok(())
    })
}

/// The [`Accumulator`] of `bloom_agg` for the split-block kind: one filter per group and
/// partition.
///
/// Usable on its own (a partial aggregation outside DataFusion's planner, a test):
/// [`update_batch`](Accumulator::update_batch) with one array of keys,
/// [`merge_batch`](Accumulator::merge_batch) with one `Binary` array of other
/// accumulators' [`state`](Accumulator::state)s.
#[derive(Debug)]
pub struct BloomAccumulator {
    filter: SplitBlockBloomFilter,
    hashes: Vec<u64>,
}

impl BloomAccumulator {
    /// An empty accumulator for `SplitBlockBloomFilter::new(expected_items, false_pos)`.
    ///
    /// # Errors
    /// [`BloomUdfError::Core`] for parameters core refuses (`false_pos` outside (0, 1),
    /// `expected_items == 0`, a filter too large to allocate).
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self, BloomUdfError> {
        Ok(Self {
            filter: SplitBlockBloomFilter::new(expected_items, false_pos)?,
            hashes: Vec::new(),
        })
    }

    /// The filter built so far.
    pub fn filter(&self) -> &SplitBlockBloomFilter {
        &self.filter
    }
}

impl Accumulator for BloomAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let hasher = *self.filter.hasher();
        insert_keys(values, &hasher, &mut self.hashes, |h| {
            self.filter.insert_hash_batch(h)
        })
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(self.filter.to_bytes())))
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.filter.num_blocks() * 32
            + self.hashes.capacity() * size_of::<u64>()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let states = state_array(states)?;
        // Every state's kind and shape first, from its header (no pass over the bytes),
        // so a mismatched state leaves the filter unchanged; then each is ORed in place
        // from its bytes (`union_bytes`: checksum checked, no decoded copy of a partial
        // filter, 125 MiB at 100M keys). A corrupted payload is found there, and leaves
        // the states before it merged: the query fails either way.
        for bytes in states.iter().flatten() {
            check_kind(BloomKind::SplitBlock, bytes)?;
            let header = Header::parse(bytes).map_err(|source| BloomUdfError::InvalidFilter {
                function: BLOOM_AGG,
                source,
            })?;
            if header.algorithm == HashAlgorithm::Foldhash {
                let left = self.filter.shape();
                let right = FilterShape {
                    num_bits: header.num_bits,
                    num_hashes: header.num_hashes,
                    hasher_fingerprint: hasher_fingerprint(&DefaultHasher::with_seed(header.seed)),
                };
                if left != right {
                    let source = bloomforge_core::Error::IncompatibleFilters { left, right };
                    return Err(BloomUdfError::MismatchedMerge { source }.into());
                }
            }
        }
        for bytes in states.iter().flatten() {
            self.filter
                .union_bytes(bytes)
                .map_err(|source| match source {
                    bloomforge_core::Error::IncompatibleFilters { .. } => {
                        BloomUdfError::MismatchedMerge { source }
                    }
                    source => BloomUdfError::InvalidFilter {
                        function: BLOOM_AGG,
                        source,
                    },
                })?;
        }
        Ok(())
    }
}

/// The [`Accumulator`] of `bloom_agg(.., 'counting')`: a [`CountingBloomFilter`] per group
/// and partition, which also retracts rows (sliding window frames).
///
/// * [`update_batch`](Accumulator::update_batch) inserts the non-null keys (counters
///   saturate at 15, as in the counting crate);
/// * [`retract_batch`](Accumulator::retract_batch) removes them again: a counter that
///   saturated stays at 15 (the counting crate's `remove`), so after saturation the
///   filter may answer "present" for a key whose rows all left the frame (never
///   "absent" for one still in it); without saturation the bytes equal those of a filter
///   built from the frame's rows alone;
/// * [`merge_batch`](Accumulator::merge_batch) adds the counters of other accumulators'
///   [`state`](Accumulator::state)s (`CountingBloomFilter::union`, saturating), refusing
///   states of another kind or shape.
///
/// ```
/// use bloomforge_datafusion::CountingBloomAccumulator;
/// use datafusion::arrow::array::{ArrayRef, StringArray};
/// use datafusion::logical_expr::Accumulator;
/// use std::sync::Arc;
///
/// let mut acc = CountingBloomAccumulator::new(1000, 0.01).unwrap();
/// let keys: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
/// acc.update_batch(&[keys]).unwrap();
/// let gone: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
/// acc.retract_batch(&[gone]).unwrap();
/// assert!(acc.filter().contains("b") && !acc.filter().contains("a"));
/// ```
#[derive(Debug)]
pub struct CountingBloomAccumulator {
    filter: CountingBloomFilter,
    hashes: Vec<u64>,
}

impl CountingBloomAccumulator {
    /// An empty accumulator for `CountingBloomFilter::new(expected_items, false_pos)`.
    ///
    /// # Errors
    /// [`BloomUdfError::Core`] for parameters the counting crate refuses (`false_pos`
    /// outside (0, 1), `expected_items == 0`, a filter too large to allocate).
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self, BloomUdfError> {
        let filter = CountingBloomFilter::new(expected_items, false_pos)
            .map_err(|e| BloomUdfError::Core(e.into()))?;
        Ok(Self {
            filter,
            hashes: Vec::new(),
        })
    }

    /// The filter built so far.
    pub fn filter(&self) -> &CountingBloomFilter {
        &self.filter
    }
}

impl Accumulator for CountingBloomAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let hasher = *self.filter.hasher();
        insert_keys(values, &hasher, &mut self.hashes, |h| {
            self.filter.insert_hash_batch(h)
        })
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let keys = key_array(values)?;
        let filter = &mut self.filter;
        let hasher = *filter.hasher();
        for_each_hash_chunk(&hasher, keys.as_ref(), &mut self.hashes, |hashes| {
            for &hash in hashes {
                filter
                    .remove_hash(hash)
                    .map_err(|source| BloomUdfError::RetractAbsent { source })?;
            }
            Ok(())
        })
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Binary(Some(self.filter.to_bytes())))
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.filter.num_blocks() * 64
            + self.hashes.capacity() * size_of::<u64>()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let states = state_array(states)?;
        // Check every state before touching the filter, so an error leaves it unchanged.
        let mut partials = Vec::with_capacity(states.len());
        for bytes in states.iter().flatten() {
            check_kind(BloomKind::Counting, bytes)?;
            let partial = CountingBloomFilter::from_bytes(bytes).map_err(|e| {
                BloomUdfError::InvalidFilter {
                    function: BLOOM_AGG,
                    source: e.into(),
                }
            })?;
            let (left, right) = (self.filter.shape(), partial.shape());
            if left != right {
                let e = bloomforge_counting::CountingError::IncompatibleFilters { left, right };
                return Err(BloomUdfError::MismatchedMerge { source: e.into() }.into());
            }
            partials.push(partial);
        }
        for partial in &partials {
            self.filter
                .union(partial)
                .map_err(|e| BloomUdfError::MismatchedMerge { source: e.into() })?;
        }
        Ok(())
    }
}
