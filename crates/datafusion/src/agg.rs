//! `bloom_agg(expr, expected_items, false_pos)`: the aggregate that builds a filter.

use crate::error::BloomUdfError;
use crate::keys::{hash_rows, is_key_type, Nulls, KEY_TYPES};
use bloomforge_core::SplitBlockBloomFilter;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::PhysicalExpr;
use std::sync::Arc;

/// The SQL name of the aggregate.
pub const BLOOM_AGG: &str = "bloom_agg";

/// Rows hashed per step of `update_batch`: the reused hash buffer holds this many `u64`s
/// (32 KiB, in L1/L2) however large the input array is.
const HASH_CHUNK: usize = 4096;

/// `bloom_agg(expr, expected_items, false_pos) -> Binary`: a
/// [`SplitBlockBloomFilter`] (default hasher, seed 0) sized by
/// `SplitBlockBloomFilter::new(expected_items, false_pos)`, holding every non-null value of
/// `expr`, returned as the filter's bytes in the project's format (`to_bytes`; read them
/// back with `SplitBlockBloomFilter::from_bytes` or query them with
/// [`bloom_contains`](crate::BloomContains)).
///
/// * `expr`: one of the key types of the [module table](crate#keys) (Int8/Int16 and
///   UInt8/UInt16 are hashed widened, as the table says).
/// * `expected_items`: a constant integer, at least 1.
/// * `false_pos`: a constant number in (0, 1).
///
/// Nulls are not keys: they are skipped. Zero rows (or only nulls) give an empty filter,
/// never SQL `NULL`, so `bloom_contains` over it answers `false`.
///
/// Partial aggregation (several partitions, or several nodes) builds one filter per
/// partition; the final step ORs them, which is bit-identical to one filter built from all
/// rows. The state is the partial filter's bytes, so it crosses process boundaries as is.
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

impl AggregateUDFImpl for BloomAgg {
    fn name(&self) -> &str {
        BLOOM_AGG
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [key, items, fp] = arg_types else {
            return plan_err!(
                "bloom_agg takes 3 arguments (expr, expected_items, false_pos), got {}",
                arg_types.len()
            );
        };
        if !(items.is_integer() || items.is_null()) {
            return plan_err!(
                "bloom_agg: expected_items must be a constant integer, got type {items}"
            );
        }
        if !(fp.is_numeric() || fp.is_null()) {
            return plan_err!("bloom_agg: false_pos must be a constant number, got type {fp}");
        }
        Ok(vec![
            coerce_key(BLOOM_AGG, key)?,
            DataType::Int64,
            DataType::Float64,
        ])
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

    fn accumulator(&self, acc_args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let [_, items, fp] = acc_args.exprs else {
            return plan_err!(
                "bloom_agg takes 3 arguments (expr, expected_items, false_pos), got {}",
                acc_args.exprs.len()
            );
        };
        let expected_items = match constant(items, "expected_items")? {
            ScalarValue::Int64(Some(n)) if n >= 1 => n as u64,
            other => {
                return Err(invalid(
                    "expected_items",
                    format!("{other} is not an integer >= 1"),
                ))
            }
        };
        let false_pos = match constant(fp, "false_pos")? {
            ScalarValue::Float64(Some(p)) if p > 0.0 && p < 1.0 => p,
            other => return Err(invalid("false_pos", format!("{other} is not in (0, 1)"))),
        };
        Ok(Box::new(BloomAccumulator::new(expected_items, false_pos)?))
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
/// expression of literals the optimiser has not folded yet).
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
    let value = ScalarValue::try_from_array(&value, 0)?;
    match name {
        "expected_items" => value.cast_to(&DataType::Int64),
        _ => value.cast_to(&DataType::Float64),
    }
}

/// The [`Accumulator`] of `bloom_agg`: one filter per group and partition.
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
        let Some(keys) = values.first() else {
            return plan_err!("bloom_agg: update_batch needs the key array");
        };
        let mut start = 0;
        while start < keys.len() {
            let end = keys.len().min(start + HASH_CHUNK);
            self.hashes.clear();
            hash_rows(
                self.filter.hasher(),
                keys.as_ref(),
                start,
                end,
                Nulls::Skip,
                &mut self.hashes,
            )
            .map_err(|t| BloomUdfError::UnsupportedType {
                function: BLOOM_AGG,
                data_type: t.to_string(),
                supported: KEY_TYPES,
            })?;
            self.filter.insert_hash_batch(&self.hashes);
            start = end;
        }
        Ok(())
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
        let Some(states) = states.first() else {
            return plan_err!("bloom_agg: merge_batch needs the state array");
        };
        let Some(states) = states.as_binary_opt::<i32>() else {
            return plan_err!(
                "bloom_agg: a partial state must be Binary, got {}",
                states.data_type()
            );
        };
        // Check every state before touching the filter, so an error leaves it unchanged.
        let mut partials = Vec::with_capacity(states.len());
        for bytes in states.iter().flatten() {
            let partial = SplitBlockBloomFilter::from_bytes(bytes).map_err(|source| {
                BloomUdfError::InvalidFilter {
                    function: BLOOM_AGG,
                    source,
                }
            })?;
            let (left, right) = (self.filter.shape(), partial.shape());
            if left != right {
                let source = bloomforge_core::Error::IncompatibleFilters { left, right };
                return Err(BloomUdfError::MismatchedMerge { source }.into());
            }
            partials.push(partial);
        }
        for partial in &partials {
            self.filter
                .union(partial)
                .map_err(|source| BloomUdfError::MismatchedMerge { source })?;
        }
        Ok(())
    }
}
