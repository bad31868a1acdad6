//! URLs common to two files, with DataFusion: a plain join against a Bloom-filter
//! pre-filter (`bloom_agg` over A, `bloom_contains` on B, an exact join on B's survivors).
//!
//! ```text
//! cargo run --release -p bloomforge-datafusion --example common_urls -- [ROWS] [SHARED%]
//! ```
//!
//! Writes two CSV files of `ROWS` URLs each (default 2,000,000) into a temporary directory,
//! `SHARED%` of B's URLs (default 1) also in A, then runs each plan in a child process of
//! its own so each reports its own peak memory (`VmHWM`, Linux; "n/a" elsewhere), and
//! checks that both plans return the same URLs.
//!
//! * plain: `SELECT DISTINCT b.url FROM b JOIN a ON a.url = b.url`. The hash join holds
//!   one whole side (all of A or all of B) in memory.
//! * bloom: `SELECT bloom_agg(url, ROWS, 0.01) FROM a` (a filter of ~1.2 bytes a URL),
//!   bound to the function `in_a` (`BloomContainsFilter`), then `SELECT DISTINCT s.url FROM
//!   (SELECT url FROM b WHERE in_a(url)) s JOIN a ON a.url = s.url`: B shrinks to its shared URLs plus ~1 % false positives
//!   before the join, and the join's build side is that small survivor set.

use datafusion::arrow::array::AsArray;
use datafusion::error::Result;
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

const FALSE_POS: f64 = 0.01;

/// The `i`-th URL of a file: A holds urls `0..rows`; B holds `shared` of them and
/// `rows - shared` of its own.
fn url(i: u64) -> String {
    format!(
        "https://www.site{}.example.com/path/{}/page-{}.html?id={i}",
        i % 10_007,
        i % 101,
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40
    )
}

fn write_csv(path: &Path, ids: impl Iterator<Item = u64>) -> std::io::Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "url")?;
    for i in ids {
        writeln!(out, "{}", url(i))?;
    }
    out.flush()
}

fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l["VmHWM:".len()..].trim().to_string())
        })
        .unwrap_or_else(|| "n/a".to_string())
}

async fn context(dir: &Path) -> Result<SessionContext> {
    let ctx = SessionContext::new_with_config(SessionConfig::new());
    bloomforge_datafusion::register(&ctx);
    for name in ["a", "b"] {
        let path = dir.join(format!("{name}.csv"));
        ctx.register_csv(
            name,
            path.to_str().unwrap_or_default(),
            CsvReadOptions::new(),
        )
        .await?;
    }
    Ok(ctx)
}

/// Runs one plan (in a child process) and prints `rows`, `checksum`, timings and memory.
async fn run_plan(plan: &str, dir: &Path, rows: u64) -> Result<()> {
    let ctx = context(dir).await?;
    let start = Instant::now();
    let (df, build) = match plan {
        "plain" => (
            ctx.sql("SELECT DISTINCT b.url FROM b JOIN a ON a.url = b.url")
                .await?,
            0.0,
        ),
        _ => {
            let batches = ctx
                .sql(&format!(
                    "SELECT bloom_agg(url, {rows}, {FALSE_POS}) FROM a"
                ))
                .await?
                .collect()
                .await?;
            let filter = batches[0].column(0).as_binary::<i32>().value(0).to_vec();
            let build = start.elapsed().as_secs_f64();
            println!("filter_bytes {}", filter.len());
            // Bound once (decoded and checked here), called by name: the plan carries no
            // megabyte literal. `bloom_contains($1, url)` with the bytes as a parameter
            // answers the same (see docs/sql.md for what it costs).
            let in_a = bloomforge_datafusion::BloomContainsFilter::from_bytes("in_a", &filter)?;
            ctx.register_udf(datafusion::logical_expr::ScalarUDF::from(in_a));
            let df = ctx
                .sql(
                    "SELECT DISTINCT s.url FROM \
                     (SELECT url FROM b WHERE in_a(url)) s \
                     JOIN a ON a.url = s.url",
                )
                .await?;
            (df, build)
        }
    };
    let batches = df.collect().await?;
    let elapsed = start.elapsed().as_secs_f64();
    // An order-independent checksum of the answer, to compare the two plans.
    let mut found = 0u64;
    let mut checksum = 0u64;
    for batch in &batches {
        let col = batch.column(0);
        let urls: Vec<&str> = match col.as_string_view_opt() {
            Some(v) => v.iter().flatten().collect(),
            None => col.as_string::<i32>().iter().flatten().collect(),
        };
        for u in urls {
            found += 1;
            checksum = checksum.wrapping_add(bloomforge_core::hash::mix64(
                std::hash::BuildHasher::hash_one(&bloomforge_core::DefaultHasher::default(), u),
            ));
        }
    }
    println!("rows {found}");
    println!("checksum {checksum:#x}");
    println!("filter_build_s {build:.3}");
    println!("total_s {elapsed:.3}");
    println!("peak_rss {}", peak_rss());
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, plan, dir, rows] = args.as_slice()
        && flag == "--child"
    {
        let rows = rows.parse().unwrap_or(1);
        return run_plan(plan, Path::new(dir), rows).await;
    }
    let rows: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let shared_pct: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let shared = ((rows as f64) * shared_pct / 100.0) as u64;
    let dir = tempfile::tempdir()?;
    let t = Instant::now();
    write_csv(&dir.path().join("a.csv"), 0..rows)?;
    // B: `shared` URLs of A (spread over A), then URLs A does not have.
    let step = (rows / shared.max(1)).max(1);
    write_csv(
        &dir.path().join("b.csv"),
        (0..shared).map(|i| i * step).chain(rows..2 * rows - shared),
    )?;
    println!(
        "{rows} URLs in each of A and B, {shared} shared ({shared_pct} %); files written in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let exe = std::env::current_exe()?;
    let mut answers = Vec::new();
    for plan in ["plain", "bloom"] {
        let out = std::process::Command::new(&exe)
            .args(["--child", plan])
            .arg(dir.path())
            .arg(rows.to_string())
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if !out.status.success() {
            eprintln!("{plan} failed: {}", String::from_utf8_lossy(&out.stderr));
            std::process::exit(1);
        }
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
                .unwrap_or_default()
        };
        println!(
            "{plan:>5}: {} common URLs in {} s (filter built in {} s, {} bytes), peak memory {}",
            field("rows "),
            field("total_s "),
            field("filter_build_s "),
            field("filter_bytes ").parse::<u64>().unwrap_or(0),
            field("peak_rss "),
        );
        answers.push((field("rows "), field("checksum ")));
    }
    assert_eq!(answers[0], answers[1], "both plans must find the same URLs");
    assert_eq!(answers[0].0, shared.to_string(), "the shared URLs, exactly");
    println!("both plans return the same {} URLs", answers[0].0);
    Ok(())
}
