//! A Ballista cluster that knows `bloom_agg` and `bloom_contains`: the scheduler, the
//! executors and a client, each a process of its own (feature `ballista`).
//!
//! ```text
//! cargo build --release -p bloomforge-datafusion --features ballista --example ballista_cluster
//! B=target/release/examples/ballista_cluster
//! $B scheduler 50050 &                 # scheduler on 127.0.0.1:50050
//! $B executor 50050 50051 &            # executors: the scheduler's port, a port of their own
//! $B executor 50050 50061 &
//! $B client 50050 100000               # a client: the filter queries, checked locally
//! ```
//!
//! The stock `ballista-scheduler` / `ballista-executor` binaries do not know this crate's
//! functions; these processes are theirs with two hooks added: the scheduler's session
//! builder (`SchedulerConfig::with_override_session_builder`) and the executor's function
//! registry (`ExecutorProcessConfig::override_function_registry`), both from
//! `bloomforge_datafusion::distributed`. Everything binds to 127.0.0.1. The client writes
//! its tables as CSV into a temporary directory, which the executors read: on one machine
//! that works as is; on several, the files must be where every executor can read them (a
//! shared file system, or an object store registered in the executors' runtime).

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::config::TaskSchedulingPolicy;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use bloomforge_datafusion::distributed::{executor_function_registry, scheduler_session_state};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const USAGE: &str = "usage: ballista_cluster scheduler PORT
       ballista_cluster executor SCHEDULER_PORT PORT
       ballista_cluster client SCHEDULER_PORT ROWS";

fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

fn port(arg: &str) -> Result<u16> {
    arg.parse()
        .map_err(|_| DataFusionError::Configuration(format!("not a port: {arg}\n{USAGE}")))
}

/// The scheduler: Ballista's, with this crate's functions in every session it plans in.
async fn scheduler(port: u16) -> Result<()> {
    let config = SchedulerConfig::default()
        .with_hostname("127.0.0.1")
        .with_port(port)
        .with_scheduler_policy(TaskSchedulingPolicy::PullStaged)
        .with_override_session_builder(Arc::new(scheduler_session_state));
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(external)?;
    println!("scheduler listening on 127.0.0.1:{port}");
    start_server(cluster, ([127, 0, 0, 1], port).into(), Arc::new(config))
        .await
        .map_err(external)
}

/// An executor: Ballista's, whose tasks find this crate's functions by name. Runs until
/// Ctrl+C (or SIGTERM).
async fn executor(scheduler_port: u16, port: u16) -> Result<()> {
    let config = ExecutorProcessConfig {
        bind_host: "127.0.0.1".into(),
        external_host: Some("127.0.0.1".into()),
        port,
        // Only listened on under push scheduling; kept distinct per executor anyway.
        grpc_port: port.wrapping_add(1),
        scheduler_host: "127.0.0.1".into(),
        scheduler_port,
        scheduler_connect_timeout_seconds: 30,
        vcores: 2,
        task_scheduling_policy: TaskSchedulingPolicy::PullStaged,
        override_function_registry: Some(Arc::new(executor_function_registry())),
        ..Default::default()
    };
    println!("executor on 127.0.0.1:{port}, scheduler 127.0.0.1:{scheduler_port}");
    start_executor_process(Arc::new(config))
        .await
        .map_err(external)
}

/// Writes `rows` URLs into `parts` CSV files of `dir/name`.
fn write_table(dir: &Path, name: &str, ids: &[u64], parts: usize) -> std::io::Result<()> {
    let table = dir.join(name);
    std::fs::create_dir_all(&table)?;
    for (k, chunk) in ids.chunks(ids.len().div_ceil(parts).max(1)).enumerate() {
        let file = std::fs::File::create(table.join(format!("part-{k}.csv")))?;
        let mut out = std::io::BufWriter::new(file);
        writeln!(out, "id,url")?;
        for i in chunk {
            writeln!(out, "{i},https://example.org/{i}/page")?;
        }
        out.flush()?;
    }
    Ok(())
}

async fn tables(ctx: &SessionContext, dir: &Path) -> Result<()> {
    for name in ["a", "b"] {
        let path = dir.join(name);
        let path = path.to_str().unwrap_or_default();
        ctx.register_csv(name, path, CsvReadOptions::new()).await?;
    }
    Ok(())
}

async fn answer(ctx: &SessionContext, sql: &str, param: Option<&[u8]>) -> Result<Vec<RecordBatch>> {
    let mut df = ctx.sql(sql).await?;
    if let Some(bytes) = param {
        df = df.with_param_values(vec![ScalarValue::Binary(Some(bytes.to_vec()))])?;
    }
    df.collect().await
}

/// The client: the filter of `a` built on the cluster, `b` probed with it there, both
/// checked against local DataFusion over the same files.
async fn client(scheduler_port: u16, rows: u64) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let a: Vec<u64> = (0..rows).collect();
    // Every tenth row of `a`, and as many rows that are not in it.
    let b: Vec<u64> = (0..rows)
        .step_by(10)
        .chain(rows..rows + rows / 10)
        .collect();
    write_table(dir.path(), "a", &a, 4)?;
    write_table(dir.path(), "b", &b, 4)?;

    let state =
        bloomforge_datafusion::with_functions(SessionStateBuilder::new().with_default_features())
            .with_config(SessionConfig::new_with_ballista())
            .build();
    let url = format!("df://127.0.0.1:{scheduler_port}");
    let cluster = SessionContext::remote_with_state(&url, state).await?;
    // Ballista 55 swaps the state's function lists for its defaults when it connects, so
    // the functions are registered on the connected context.
    bloomforge_datafusion::register(&cluster);
    tables(&cluster, dir.path()).await?;
    let local = SessionContext::new();
    bloomforge_datafusion::register(&local);
    tables(&local, dir.path()).await?;

    let build = format!("SELECT bloom_agg(url, {rows}, 0.01) FROM a");
    let probe = "SELECT count(*) AS maybe_in_a, count(*) FILTER (WHERE id < $ROWS) AS in_a \
                 FROM b WHERE bloom_contains($1, url)"
        .replace("$ROWS", &rows.to_string());
    let semi_join = "SELECT count(*) AS common FROM (SELECT b.url FROM b CROSS JOIN \
                     (SELECT bloom_agg(url, $ROWS, 0.01) AS f FROM a) fa \
                     WHERE bloom_contains(fa.f, b.url)) s JOIN a ON a.url = s.url"
        .replace("$ROWS", &rows.to_string());

    let start = Instant::now();
    let filter = answer(&cluster, &build, None).await?;
    println!(
        "bloom_agg on the cluster: {:.2} s",
        start.elapsed().as_secs_f64()
    );
    let bytes = filter[0].column(0).as_binary::<i32>();
    if bytes.len() != 1 || bytes.is_null(0) {
        return Err(DataFusionError::Execution("no filter".into()));
    }
    let bytes = bytes.value(0).to_vec();
    let here = answer(&local, &build, None).await?;
    let same = here[0].column(0).as_binary::<i32>().value(0) == bytes.as_slice();
    println!(
        "filter: {} bytes, identical to local DataFusion's: {same}",
        bytes.len()
    );

    for (sql, param) in [(probe.as_str(), Some(bytes.as_slice())), (&semi_join, None)] {
        let start = Instant::now();
        let there = pretty_format_batches(&answer(&cluster, sql, param).await?)?.to_string();
        let secs = start.elapsed().as_secs_f64();
        let here = pretty_format_batches(&answer(&local, sql, param).await?)?.to_string();
        println!(
            "{sql}\n{there}\non the cluster: {secs:.2} s, same as local: {}",
            there == here
        );
        if there != here {
            return Err(DataFusionError::Execution(format!(
                "local DataFusion says\n{here}"
            )));
        }
    }
    if !same {
        return Err(DataFusionError::Execution("the filters differ".into()));
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["scheduler", p] => scheduler(port(p)?).await,
        ["executor", s, p] => executor(port(s)?, port(p)?).await,
        ["client", s, rows] => {
            let rows = rows
                .parse()
                .map_err(|_| DataFusionError::Configuration(format!("not a count: {rows}")))?;
            client(port(s)?, rows).await
        }
        _ => Err(DataFusionError::Configuration(USAGE.into())),
    }
}
