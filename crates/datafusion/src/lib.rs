//! # bloomforge-datafusion
//!
//! bloomforge's split-block and counting Bloom filters inside
//! [Apache DataFusion](https://datafusion.apache.org): two SQL functions, registered with
//! one call.
//!
//! Guide: [SQL with DataFusion][guide-sql].
//!
//! [guide-sql]: https://github.com/bloomforge/bloomforge/blob/main/docs/sql.md
//!
//! * [`bloom_agg(expr, expected_items, false_pos [, kind])`](BloomAgg): an aggregate
//!   returning the filter of every non-null value of `expr` as `Binary`, the bytes of
//!   `SplitBlockBloomFilter::to_bytes` (read them back with `from_bytes`), or with
//!   `kind = 'counting'` of `CountingBloomFilter::to_bytes`, which also runs as a window
//!   over sliding frames (it retracts the rows leaving the frame). Partial filters of
//!   parallel partitions are merged (ORed, or counters added), giving the same bytes as
//!   one sequential build. Parameters are checked when the query is planned.
//! * [`bloom_contains(filter_bytes, expr)`](BloomContains): `Boolean`, whether each value may be
//!   in the filter (either kind); vectorised, a constant filter checked once while
//!   planning and probed in place for every batch.
//! * [`BloomContainsFilter`]: a split-block filter bound to a named one-argument function
//!   (the plan then carries no literal of the filter); [`BloomFilterVariables`]: filters
//!   bound to session variables, `bloom_contains(@name, expr)`, likewise.
//! * [`bloom_parquet_contains(file, column, expr)`](parquet::BloomParquetContains): probes
//!   the Bloom filters a Parquet writer stored for a column; the [`parquet`] module also
//!   reads those filters as core filters and writes Parquet files whose filters bloomforge
//!   built.
//! * [`bloom_parquet_filter(file, column)`](parquet::BloomParquetFilter): `Binary`, that
//!   stored filter as bloomforge bytes (Parquet's hash recorded in the header), for
//!   `bloom_contains`.
//!
//! ```
//! use bloomforge_core::SplitBlockBloomFilter;
//! use datafusion::arrow::array::{Array, AsArray};
//! use datafusion::prelude::SessionContext;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! let ctx = SessionContext::new();
//! bloomforge_datafusion::register(&ctx);
//! ctx.sql("CREATE TABLE a(url TEXT) AS VALUES ('x.org'), ('y.org'), (NULL)").await?;
//!
//! // The filter of a column, as bytes:
//! let batches = ctx.sql("SELECT bloom_agg(url, 1000, 0.01) FROM a").await?.collect().await?;
//! let bytes = batches[0].column(0).as_binary::<i32>().value(0).to_vec();
//!
//! // ... is the core filter of the same keys, bit for bit:
//! let mut core = SplitBlockBloomFilter::new(1000, 0.01).unwrap();
//! core.insert_batch(&["x.org", "y.org"]);
//! assert_eq!(bytes, core.to_bytes());
//!
//! // Query it from SQL, passing the bytes as a parameter:
//! let df = ctx
//!     .sql("SELECT bloom_contains($1, column1) FROM (VALUES ('x.org'), ('z.org'), (NULL))")
//!     .await?
//!     .with_param_values(vec![datafusion::common::ScalarValue::Binary(Some(bytes))])?;
//! let batches = df.collect().await?;
//! let answers = batches[0].column(0).as_boolean();
//! assert!(answers.value(0)); // inserted: always true
//! assert!(answers.is_null(2)); // NULL key: NULL
//! # Ok(())
//! # }
//! ```
//!
//! The semi-join pattern (the filter of one table prunes the other before an exact join)
//! is in `examples/common_urls.rs`.
//!
//! ## Keys
//!
#![doc = include_str!("keys.md")]
//!
//! ## Errors
//!
//! A wrong call (parameters that are not constants or out of range, an unsupported type)
//! is a `DataFusionError::Plan`, raised by `create_physical_plan` (for `bloom_agg` in a
//! window, when execution starts); bad filter bytes, partial filters of a different kind
//! or parameters, and retracting a row never added are a `DataFusionError::External`
//! wrapping a [`BloomUdfError`]. No input makes the functions panic.

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

/// This crate's `README.md`, the repository's front page and the SQL guide
/// (`docs/sql.md`): every `rust` block on them is compiled and run as a doctest here (this
/// crate reaches both bloomforge-core and DataFusion).
#[cfg(doctest)]
pub mod pages {
    #[doc = include_str!("../README.md")]
    pub struct CrateReadme;
    #[doc = include_str!("../../../README.md")]
    pub struct Readme;
    #[doc = include_str!("../../../docs/sql.md")]
    pub struct Sql;
}

mod agg;
mod contains;
mod error;
mod keys;
pub mod parquet;

pub use agg::{
    bloom_agg_udaf, BloomAccumulator, BloomAgg, BloomAggWindowCheck, BloomKind,
    CountingBloomAccumulator, BLOOM_AGG,
};
pub use contains::{
    bloom_contains_udf, register_filter_variables, BloomContains, BloomContainsFilter,
    BloomFilterVariables, BLOOM_CONTAINS,
};
pub use error::{BloomUdfError, Result};

/// The functions on a Ballista cluster: the scheduler's and the executors' hooks.
#[cfg(feature = "ballista")]
pub mod distributed;

use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// Registers `bloom_agg`, `bloom_contains`, `bloom_parquet_contains` and
/// `bloom_parquet_filter` with a session, and the optimizer rule [`BloomAggWindowCheck`]
/// (planning-time checks of `bloom_agg`'s parameters in window calls).
///
/// ```
/// use datafusion::execution::FunctionRegistry;
/// let ctx = datafusion::prelude::SessionContext::new();
/// bloomforge_datafusion::register(&ctx);
/// assert!(ctx.udaf("bloom_agg").is_ok());
/// assert!(ctx.udf("bloom_contains").is_ok());
/// assert!(ctx.udf("bloom_parquet_contains").is_ok());
/// assert!(ctx.udf("bloom_parquet_filter").is_ok());
/// ```
pub fn register(ctx: &SessionContext) {
    ctx.register_udaf(bloom_agg_udaf());
    ctx.register_udf(bloom_contains_udf());
    ctx.register_udf(parquet::bloom_parquet_contains_udf());
    ctx.register_udf(parquet::bloom_parquet_filter_udf());
    ctx.add_optimizer_rule(Arc::new(BloomAggWindowCheck));
}

/// Adds the functions and the rule of [`register`] to a [`SessionStateBuilder`] (for sessions built
/// by hand, and for engines such as Ballista that build a session state per query),
/// keeping the functions it already has (call `with_default_features` first for
/// DataFusion's own).
///
/// ```
/// use datafusion::execution::session_state::SessionStateBuilder;
/// let state = bloomforge_datafusion::with_functions(
///     SessionStateBuilder::new().with_default_features(),
/// )
/// .build();
/// assert!(state.aggregate_functions().contains_key("bloom_agg"));
/// assert!(state.scalar_functions().contains_key("bloom_contains"));
/// ```
pub fn with_functions(mut builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
        .aggregate_functions()
        .get_or_insert_with(Vec::new)
        .push(Arc::new(bloom_agg_udaf()));
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .push(Arc::new(bloom_contains_udf()));
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .push(Arc::new(parquet::bloom_parquet_contains_udf()));
    builder
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .push(Arc::new(parquet::bloom_parquet_filter_udf()));
    builder.with_optimizer_rule(Arc::new(BloomAggWindowCheck))
}
