//! `bloom_agg` / `bloom_contains` on Ballista: a scheduler and an executor in this process,
//! on loopback ports the OS picks, run the same queries as local DataFusion and must return
//! the same rows (the filters byte for byte).
//!
//! Run with `cargo test -p bloomforge-datafusion --features ballista --test ballista`.
#![cfg(feature = "ballista")]

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::BallistaCodec;
use ballista_core::utils::default_config_producer;
use bloomforge_core::SplitBlockBloomFilter;
use bloomforge_datafusion::distributed::{executor_function_registry, scheduler_session_state};
use bloomforge_datafusion::{register, with_functions};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Generous: the engine is built at opt-level 0 for tests and the machine may be busy.
/// A query that needs longer has hung (a lost task), and the test fails instead of waiting.
const QUERY_TIMEOUT: Duration = Duration::from_secs(180);

/// Rows of table `a` (URLs `u0` .. in 4 files) and of table `b` (every third of them, and as
/// many that are not in `a`, in 3 files).
const ROWS: u64 = 3000;
const EXPECTED: u64 = 4000;
const FP: f64 = 0.01;

fn url(i: u64) -> String {
    format!("https://example.org/{i}/page")
}

/// Writes `rows` into `parts` CSV files `dir/name/part-K.csv` (`id,grp,url`); several files
/// give several partitions, so `bloom_agg` runs as partial aggregates on the executor and a
/// final one after a shuffle.
fn write_table(dir: &Path, name: &str, rows: &[u64], parts: usize) -> std::io::Result<()> {
    let table = dir.join(name);
    std::fs::create_dir_all(&table)?;
    for (k, chunk) in rows.chunks(rows.len().div_ceil(parts)).enumerate() {
        let mut out =
            std::io::BufWriter::new(std::fs::File::create(table.join(format!("part-{k}.csv")))?);
        writeln!(out, "id,grp,url")?;
        for &i in chunk {
            writeln!(out, "{i},{},{}", i % 5, url(i))?;
        }
        out.flush()?;
    }
    Ok(())
}

/// The two tables in a fresh directory.
fn data() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let a: Vec<u64> = (0..ROWS).collect();
    let b: Vec<u64> = (0..ROWS).step_by(3).chain(ROWS..ROWS + ROWS / 3).collect();
    write_table(dir.path(), "a", &a, 4).unwrap();
    write_table(dir.path(), "b", &b, 3).unwrap();
    dir
}

async fn register_tables(ctx: &SessionContext, dir: &Path) -> Result<()> {
    for name in ["a", "b"] {
        let path = dir.join(name);
        let path = path
            .to_str()
            .expect("the temporary directory's path is UTF-8");
        ctx.register_csv(name, path, CsvReadOptions::new().file_extension(".csv"))
            .await?;
    }
    Ok(())
}

/// A session configuration for both engines: several partitions, so the aggregate really
/// runs in parts.
fn config() -> SessionConfig {
    SessionConfig::new_with_ballista()
        .with_target_partitions(4)
        .with_ballista_standalone_parallelism(2)
}

/// The client's state: DataFusion's defaults and this crate's functions.
fn client_state() -> SessionState {
    with_functions(SessionStateBuilder::new().with_default_features())
        .with_config(config())
        .build()
}

/// Local DataFusion over the same files: the reference.
async fn local(dir: &Path) -> Result<SessionContext> {
    let ctx = SessionContext::new_with_config(config());
    register(&ctx);
    register_tables(&ctx, dir).await?;
    Ok(ctx)
}

async fn within_timeout<T>(what: &str, f: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout(QUERY_TIMEOUT, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {QUERY_TIMEOUT:?}"))
}

async fn run(ctx: &SessionContext, sql: &str, params: Option<Vec<ScalarValue>>) -> Result<String> {
    within_timeout(sql, async {
        let mut df = ctx.sql(sql).await?;
        if let Some(params) = params {
            df = df.with_param_values(params)?;
        }
        let batches: Vec<RecordBatch> = df.collect().await?;
        Ok(pretty_format_batches(&batches)?.to_string())
    })
    .await
}

/// The single-value result of `sql` as bytes.
async fn filter_bytes(ctx: &SessionContext, sql: &str) -> Result<Vec<u8>> {
    use datafusion::arrow::array::{Array, AsArray};
    within_timeout(sql, async {
        let batches = ctx.sql(sql).await?.collect().await?;
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 1, "{sql}: one row");
        let batch = batches.iter().find(|b| b.num_rows() == 1).unwrap();
        let col = batch.column(0).as_binary::<i32>();
        assert!(col.is_valid(0), "{sql}: a filter, not NULL");
        Ok(col.value(0).to_vec())
    })
    .await
}

/// The queries of the test, all ordered so that the printed tables compare exactly.
const QUERIES: [&str; 5] = [
    // One filter per group: the partial states are shuffled by group.
    "SELECT grp, bloom_agg(url, 4000, 0.01) AS f FROM a GROUP BY grp ORDER BY grp",
    // Probing with a parameter (the filter of `a` travels in the plan as a Binary literal);
    // a NULL key gives NULL.
    "SELECT id, bloom_contains($1, CASE WHEN id % 7 = 0 THEN NULL ELSE url END) AS maybe \
     FROM b ORDER BY id",
    // The semi-join filter of the two-file problem, all on the cluster: the filter of `a`
    // built by the executor, then joined to every row of `b` and probed there.
    "SELECT b.id FROM b CROSS JOIN (SELECT bloom_agg(url, 4000, 0.01) AS f FROM a) fa \
     WHERE bloom_contains(fa.f, b.url) ORDER BY b.id",
    // ... and the exact join on the survivors.
    "SELECT count(*) AS common FROM (SELECT b.url FROM b CROSS JOIN \
     (SELECT bloom_agg(url, 4000, 0.01) AS f FROM a) fa WHERE bloom_contains(fa.f, b.url)) s \
     JOIN a ON a.url = s.url",
    // Filters as a column of a grouped query, probed per row.
    "SELECT b.grp, count(*) AS maybe FROM b JOIN \
     (SELECT grp, bloom_agg(url, 4000, 0.01) AS f FROM a GROUP BY grp) fa ON fa.grp = b.grp \
     WHERE bloom_contains(fa.f, b.url) GROUP BY b.grp ORDER BY b.grp",
];

/// Runs every query on `cluster` and on local DataFusion and compares the answers.
async fn same_answers(cluster: &SessionContext, dir: &Path) -> Result<()> {
    let local = local(dir).await?;

    // The whole filter of `a`: byte for byte the local one and the core filter of the keys.
    let sql = "SELECT bloom_agg(url, 4000, 0.01) FROM a";
    let distributed = filter_bytes(cluster, sql).await?;
    assert_eq!(distributed, filter_bytes(&local, sql).await?);
    let mut core = SplitBlockBloomFilter::new(EXPECTED, FP).unwrap();
    let keys: Vec<String> = (0..ROWS).map(url).collect();
    core.insert_batch(&keys);
    assert_eq!(
        distributed,
        core.to_bytes(),
        "the core filter of the same keys"
    );

    for sql in QUERIES {
        let params = sql
            .contains("$1")
            .then(|| vec![ScalarValue::Binary(Some(distributed.clone()))]);
        let on_cluster = run(cluster, sql, params.clone()).await?;
        let here = run(&local, sql, params).await?;
        assert_eq!(on_cluster, here, "{sql}");
        assert!(
            on_cluster.lines().count() > 4,
            "{sql}: some rows\n{on_cluster}"
        );
    }

    // What the semi-join keeps: every shared URL (no false negatives), and the exact join
    // on the survivors finds exactly them.
    let survivors = run(cluster, QUERIES[2], None).await?;
    for i in (0..ROWS).step_by(3) {
        assert!(survivors.contains(&format!("| {i} ")), "shared id {i} kept");
    }
    let common = run(cluster, QUERIES[3], None).await?;
    assert!(common.contains(&format!("| {} ", ROWS / 3)), "{common}");
    Ok(())
}

/// `SessionContext::standalone_with_state`: the scheduler and the executor start from the
/// client's state, so the functions registered there reach both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_cluster_answers_as_local_datafusion() -> Result<()> {
    let dir = data();
    let ctx = SessionContext::standalone_with_state(client_state()).await?;
    // The scheduler and the executor took the functions from the state; the client's own
    // session did not keep them (Ballista resets its function lists), so they are added
    // to it again.
    register(&ctx);
    register_tables(&ctx, dir.path()).await?;
    same_answers(&ctx, dir.path()).await
}

/// Starts a scheduler with `session_builder` and an executor with `registry`, each
/// configured on its own the way separate processes are (see
/// `examples/ballista_cluster.rs`), and returns a client connected to them. Ports: the
/// OS's choice, on localhost.
async fn cluster(
    session_builder: ballista_scheduler::SessionBuilder,
    registry: ballista_core::registry::BallistaFunctionRegistry,
) -> Result<SessionContext> {
    let config_producer: ballista_core::ConfigProducer = Arc::new(|| {
        default_config_producer()
            .with_target_partitions(4)
            .with_ballista_standalone_parallelism(2)
    });
    let addr = ballista_scheduler::standalone::new_standalone_scheduler_with_builder(
        session_builder,
        config_producer.clone(),
        BallistaCodec::default(),
    )
    .await
    .map_err(|e| DataFusionError::External(Box::new(e)))?;
    let url = format!("http://localhost:{}", addr.port());
    let scheduler = within_timeout("connecting to the scheduler", async {
        loop {
            match SchedulerGrpcClient::connect(url.clone()).await {
                Ok(client) => return Ok(client),
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    })
    .await?;
    let runtime: ballista_core::RuntimeProducer =
        Arc::new(|_: &SessionConfig| -> Result<Arc<RuntimeEnv>> {
            Ok(Arc::new(RuntimeEnvBuilder::new().build()?))
        });
    ballista_executor::new_standalone_executor_from_builder(
        scheduler,
        2,
        config_producer,
        runtime,
        BallistaCodec::default(),
        registry,
    )
    .await
    .map_err(|e| DataFusionError::External(Box::new(e)))?;
    let ctx = SessionContext::remote_with_state(
        &format!("df://localhost:{}", addr.port()),
        client_state(),
    )
    .await?;
    register(&ctx);
    Ok(ctx)
}

/// The hooks of separate processes: the scheduler's session builder
/// ([`scheduler_session_state`]) and the executor's function registry
/// ([`executor_function_registry`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_and_executor_hooks_answer_as_local_datafusion() -> Result<()> {
    let dir = data();
    let ctx = cluster(
        Arc::new(scheduler_session_state),
        executor_function_registry(),
    )
    .await?;
    register_tables(&ctx, dir.path()).await?;
    same_answers(&ctx, dir.path()).await
}

/// An executor with Ballista's default registry (what the stock `ballista-executor` binary
/// has) cannot run the aggregate: the query fails with an error that names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stock_executor_fails_with_the_functions_name() -> Result<()> {
    let dir = data();
    let ctx = cluster(Arc::new(scheduler_session_state), Default::default()).await?;
    register_tables(&ctx, dir.path()).await?;
    let err = within_timeout("the query on a stock executor", async {
        Ok(ctx
            .sql("SELECT bloom_agg(url, 4000, 0.01) FROM a")
            .await?
            .collect()
            .await)
    })
    .await?
    .expect_err("the executor does not know bloom_agg");
    eprintln!("stock executor: {err}");
    assert!(err.to_string().contains("bloom_agg"), "{err}");
    Ok(())
}

/// A scheduler with Ballista's default session (the stock `ballista-scheduler` binary)
/// cannot decode the client's plan: the query fails with an error that names the function.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stock_scheduler_fails_with_the_functions_name() -> Result<()> {
    let dir = data();
    let ctx = cluster(
        Arc::new(ballista_core::utils::default_session_builder),
        executor_function_registry(),
    )
    .await?;
    register_tables(&ctx, dir.path()).await?;
    let err = within_timeout("the query on a stock scheduler", async {
        Ok(ctx
            .sql("SELECT bloom_agg(url, 4000, 0.01) FROM a")
            .await?
            .collect()
            .await)
    })
    .await?
    .expect_err("the scheduler does not know bloom_agg");
    eprintln!("stock scheduler: {err}");
    assert!(err.to_string().contains("bloom_agg"), "{err}");
    Ok(())
}
