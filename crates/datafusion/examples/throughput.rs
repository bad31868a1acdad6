//! `bloom_agg` and `bloom_contains` rows per second against the core filter's own batch
//! calls on the same keys.
//!
//! ```text
//! cargo run --release -p bloomforge-datafusion --example throughput -- [ROWS] [REPEATS]
//! ```
//!
//! ROWS (default 10,000,000) distinct Utf8 URLs sit in a MemTable of 8192-row batches,
//! spread over 2 partitions. Each measurement is repeated REPEATS times (default 3) and
//! the median printed:
//!
//! * core insert: `SplitBlockBloomFilter::insert_batch` over the keys as `&str`s;
//! * `bloom_agg` with `target_partitions` 1 and 2 (its result is checked bit for bit
//!   against the core filter);
//! * core contains: `contains_batch` over the same keys;
//! * `bloom_contains` with the filter as a `$1` parameter and as a session variable
//!   (`@f`, `register_filter_variables`), and the filter bound to a function
//!   (`BloomContainsFilter`), counted by `SELECT count(*) ... WHERE` (the count is
//!   checked against the core filter's).
//!
//! `THROUGHPUT_ONLY=agg` stops after `bloom_agg`; `THROUGHPUT_ONLY=contains` skips the
//! `$1` form (its planning prints the whole filter several times).

use bloomforge_core::SplitBlockBloomFilter;
use datafusion::arrow::array::{AsArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema};
use datafusion::common::ScalarValue;
use datafusion::datasource::MemTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;
use std::time::Instant;

const FALSE_POS: f64 = 0.01;
const BATCH: usize = 8192;

fn core<T>(r: bloomforge_core::Result<T>) -> Result<T> {
    r.map_err(|e| DataFusionError::External(Box::new(e)))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let rows: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3).max(1);
    let keys: Vec<String> = (0..rows)
        .map(|i| format!("https://www.site{}.example.com/page/{i}", i % 10_007))
        .collect();
    let strs: Vec<&str> = keys.iter().map(String::as_str).collect();

    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, false)]));
    let batches: Vec<RecordBatch> = strs
        .chunks(BATCH)
        .map(|c| {
            let col = Arc::new(StringArray::from_iter_values(c.iter().copied()));
            RecordBatch::try_new(schema.clone(), vec![col])
        })
        .collect::<std::result::Result<_, _>>()?;
    let half = batches.len().div_ceil(2);
    let partitions = vec![batches[..half].to_vec(), batches[half..].to_vec()];

    let mut t_core = Vec::new();
    let mut filter = core(SplitBlockBloomFilter::new(rows as u64, FALSE_POS))?;
    for _ in 0..repeats {
        filter = core(SplitBlockBloomFilter::new(rows as u64, FALSE_POS))?;
        let t = Instant::now();
        filter.insert_batch(&strs);
        t_core.push(t.elapsed().as_secs_f64());
    }
    let expected = filter.to_bytes();
    let core_insert = rows as f64 / median(t_core);
    println!("{rows} Utf8 rows, {} MiB filter", expected.len() >> 20);
    println!(
        "core insert_batch:          {:>7.1} M rows/s",
        core_insert / 1e6
    );

    for target in [1, 2] {
        let ctx = SessionContext::new_with_config(
            SessionConfig::new()
                .with_target_partitions(target)
                .with_batch_size(BATCH),
        );
        bloomforge_datafusion::register(&ctx);
        let mem = MemTable::try_new(schema.clone(), partitions.clone())?;
        ctx.register_table("t", Arc::new(mem))?;
        let mut times = Vec::new();
        for _ in 0..repeats {
            let t = Instant::now();
            let out = ctx
                .sql(&format!("SELECT bloom_agg(k, {rows}, {FALSE_POS}) FROM t"))
                .await?
                .collect()
                .await?;
            times.push(t.elapsed().as_secs_f64());
            let got = out[0].column(0).as_binary::<i32>().value(0);
            assert!(got == expected.as_slice(), "bloom_agg differs from core");
        }
        let rate = rows as f64 / median(times);
        println!(
            "bloom_agg, {target} partition(s):   {:>7.1} M rows/s ({:.2}x core's time)",
            rate / 1e6,
            core_insert / rate
        );
    }

    let only = std::env::var("THROUGHPUT_ONLY").unwrap_or_default();
    if only == "agg" {
        return Ok(());
    }
    let mut out = vec![false; rows];
    let mut t_core = Vec::new();
    for _ in 0..repeats {
        let t = Instant::now();
        core(filter.contains_batch(&strs, &mut out))?;
        t_core.push(t.elapsed().as_secs_f64());
    }
    let core_contains = rows as f64 / median(t_core);
    println!(
        "core contains_batch:        {:>7.1} M rows/s",
        core_contains / 1e6
    );
    let present = out.iter().filter(|&&b| b).count() as i64;
    for target in [1, 2] {
        let ctx = SessionContext::new_with_config(
            SessionConfig::new()
                .with_target_partitions(target)
                .with_batch_size(BATCH),
        );
        bloomforge_datafusion::register(&ctx);
        let mem = MemTable::try_new(schema.clone(), partitions.clone())?;
        ctx.register_table("t", Arc::new(mem))?;
        let bound = bloomforge_datafusion::BloomContainsFilter::from_bytes("in_f", &expected)?;
        ctx.register_udf(datafusion::logical_expr::ScalarUDF::from(bound));
        let vars = bloomforge_datafusion::register_filter_variables(&ctx);
        vars.insert("@f", &expected)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        for (what, sql) in [
            (
                "bloom_contains($1, k)",
                "SELECT count(*) FROM t WHERE bloom_contains($1, k)",
            ),
            (
                "bloom_contains(@f, k)",
                "SELECT count(*) FROM t WHERE bloom_contains(@f, k)",
            ),
            ("bound in_f(k)", "SELECT count(*) FROM t WHERE in_f(k)"),
        ] {
            if only == "contains" && sql.contains("$1") {
                continue;
            }
            let mut times = Vec::new();
            for _ in 0..repeats {
                let t = Instant::now();
                let mut df = ctx.sql(sql).await?;
                if sql.contains("$1") {
                    df = df.with_param_values(vec![ScalarValue::Binary(Some(expected.clone()))])?;
                }
                let out = df.collect().await?;
                times.push(t.elapsed().as_secs_f64());
                let count = out[0].column(0).as_primitive::<Int64Type>().value(0);
                assert_eq!(count, present, "{what} differs from core");
            }
            let rate = rows as f64 / median(times);
            println!(
                "{what}, {target} partition(s): {:>7.1} M rows/s ({:.2}x core's time)",
                rate / 1e6,
                core_contains / rate
            );
        }
    }
    Ok(())
}
