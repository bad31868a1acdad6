//! The functions on a [Ballista](https://datafusion.apache.org/ballista/) cluster (feature
//! `ballista`).
//!
//! Ballista ships plans between processes as protobuf, naming each function: the client
//! plans a query, the scheduler decodes that logical plan and splits it into stages, and
//! every executor decodes the physical plan of its tasks. Each of the three looks
//! `bloom_agg` and `bloom_contains` up in its own registry, so each must have them:
//!
//! * client: [`register`](crate::register) on the context that
//!   `SessionContext::remote_with_state` or `standalone_with_state` returns (Ballista 55
//!   replaces the function lists of the state it is given with its defaults when it
//!   connects); `standalone_with_state` also starts a scheduler and an executor in process
//!   from the state it is given, so that state is built with
//!   [`with_functions`](crate::with_functions);
//! * scheduler: [`scheduler_session_state`](crate::distributed::scheduler_session_state)
//!   as its session builder
//!   (`SchedulerConfig::with_override_session_builder(Arc::new(scheduler_session_state))`);
//! * executor: [`executor_function_registry`](crate::distributed::executor_function_registry)
//!   as its `ExecutorProcessConfig::override_function_registry`.
//!
//! A scheduler or executor without them fails the query with an error naming `bloom_agg`
//! (tested in `tests/ballista.rs`). `examples/ballista_cluster.rs` runs the scheduler and
//! the executors as processes of their own.
//!
//! Nothing else needs to cross the wire: the functions have no configuration, and
//! `bloom_agg`'s partial state is a `Binary` value that Ballista shuffles like any other.
//!
//! ```
//! use bloomforge_datafusion::distributed::{executor_function_registry, scheduler_session_state};
//! use datafusion::execution::FunctionRegistry;
//! use datafusion::prelude::SessionConfig;
//!
//! let state = scheduler_session_state(SessionConfig::new()).unwrap();
//! assert!(state.aggregate_functions().contains_key("bloom_agg"));
//!
//! let registry = executor_function_registry();
//! assert!(registry.udf("bloom_contains").is_ok());
//! assert!(registry.udf("abs").is_ok()); // and DataFusion's own
//! ```

use crate::with_functions;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::utils::default_session_builder;
use datafusion::error::Result;
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::prelude::SessionConfig;

/// A scheduler's session: Ballista's default one (`default_session_builder`: DataFusion's
/// defaults, Ballista's optimizer rules and functions) with this crate's functions added.
///
/// Its signature is Ballista's `SessionBuilder`: pass
/// `Arc::new(scheduler_session_state)` to `SchedulerConfig::with_override_session_builder`.
///
/// # Errors
///
/// What Ballista's default builder returns (the runtime environment could not be built).
pub fn scheduler_session_state(config: SessionConfig) -> Result<SessionState> {
    let state = default_session_builder(config)?;
    Ok(with_functions(SessionStateBuilder::new_from_existing(state)).build())
}

/// An executor's function registry: the functions of a session with DataFusion's default
/// features (what a stock executor knows, and the nested-type functions of Ballista's
/// standalone executor) and this crate's.
///
/// Pass it as `ExecutorProcessConfig::override_function_registry` (wrapped in an `Arc`).
pub fn executor_function_registry() -> BallistaFunctionRegistry {
    let state = with_functions(SessionStateBuilder::new().with_default_features()).build();
    BallistaFunctionRegistry::from(&state)
}
