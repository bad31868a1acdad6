//! # bloomforge-bench
//!
//! The benchmark harness: every bloomforge filter against its own false-positive theory
//! and against the best peer crates, on the same keys, in one process and one run.
//!
//! ```text
//! cargo run --release -p bloomforge-bench -- --quick
//! ```
//!
//! prints a markdown table and writes CSV, JSON, SVG plots, a self-contained `report.html`
//! and an `index.md` under `target/bloomforge-report/`. The same run is available as a
//! library call, which is how the tests drive it:
//!
//! ```no_run
//! use bloomforge_bench::{config::{Config, Mode}, run};
//! let mut cfg = Config::new(Mode::Tiny);
//! cfg.out_dir = std::env::temp_dir().join("bloomforge-report");
//! cfg.quiet = true;
//! let report = run(&cfg)?;
//! assert!(report.flags.is_empty());
//! # Ok::<(), bloomforge_bench::BenchError>(())
//! ```
//!
//! What is measured (see [`measure`]): bits/key; insert, positive and negative query
//! ns/key, single-key and batch; bulk load at 1..N threads on pinned rayon pools; the
//! measured false-positive rate with its Clopper-Pearson interval, the layout's theory
//! ([`theory`]) and their ratio, flagged when inconsistent at alpha = 1e-6; a physical
//! floor row (independent random 64-byte reads of an equal-size buffer); an
//! FP-vs-bits/key sweep, an ns/key-vs-size sweep, per-SIMD-backend numbers and the
//! hashers' costs. Every measured run checks its answers first ([`BenchError::WrongAnswer`]).

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

pub mod config;
pub mod html;
pub mod measure;
pub mod plots;
pub mod report;
/// The workloads' generators (testkit's, re-exported).
pub use bloomforge_testkit::rng;
pub mod registry;
pub mod subjects;
pub mod subjects_core;
pub mod subjects_cuckoo;
pub mod subjects_retrieval;
pub mod subjects_stream;
pub mod theory;
pub mod timing;
pub mod units;
pub mod workload;

pub use theory::math;

/// The guide's pages (`docs/guide/`): every `rust` block on them is compiled and run as a
/// doctest of this crate, which depends on every filter crate.
#[cfg(doctest)]
pub mod guide {
    #[doc = include_str!("../../../docs/guide/bloom.md")]
    pub struct Bloom;
    #[doc = include_str!("../../../docs/guide/concurrency.md")]
    pub struct Concurrency;
    #[doc = include_str!("../../../docs/guide/counting.md")]
    pub struct Counting;
    #[doc = include_str!("../../../docs/guide/bitmaps.md")]
    pub struct Bitmaps;
    #[doc = include_str!("../../../docs/guide/cuckoo.md")]
    pub struct Cuckoo;
    #[doc = include_str!("../../../docs/guide/stream.md")]
    pub struct Stream;
    #[doc = include_str!("../../../docs/guide/retrieval.md")]
    pub struct Retrieval;
}

use config::Config;
use measure::{
    backend_rows, counting_section, dleft_section, floor_row, fp_point, hasher_rows,
    locked_floor_row, measure_entry, pinned_pool, size_floor_point, size_point, BackendRow,
    CountingSection, Ctx, DLeftSection, FpPoint, HasherRow, Row, SizePoint,
};
use registry::registry;
use std::io::IsTerminal;
use std::time::Instant;
use subjects::{Entry, Layout, RegistryKey, Sizing, Target};
use workload::{AnyWorkload, Workload, WorkloadKind};

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A filter gave a wrong answer; none of its numbers are reported.
    #[error("WRONG ANSWER from {filter} on {workload}: {what}. Its numbers are not reported; fix the filter")]
    WrongAnswer {
        /// Filter name.
        filter: String,
        /// Workload / scenario.
        workload: String,
        /// What was wrong.
        what: String,
    },
    /// A filter could not be built with the requested sizing.
    #[error("building {filter} failed: {reason}")]
    Build {
        /// Filter name.
        filter: &'static str,
        /// The filter's error message.
        reason: String,
    },
    /// Bad command line or configuration.
    #[error("{0}")]
    Config(String),
    /// Reading keys or writing the report failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A thread pool could not be built.
    #[error("thread pool: {0}")]
    ThreadPool(String),
    /// A plot could not be drawn.
    #[error("plot {path}: {reason}")]
    Plot {
        /// The SVG file.
        path: String,
        /// The plotting library's message.
        reason: String,
    },
}

/// The machine and run the numbers come from.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Meta {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores available to this process.
    pub cores: usize,
    /// Total memory, GiB.
    pub memory_gib: f64,
    /// SIMD backend the filters use by default, and all available.
    pub backend: String,
    /// Cache sizes (`L1d 48 KiB` ...), where the OS tells.
    pub caches: Vec<(String, u64)>,
    /// Operating system and architecture.
    pub os: String,
    /// Start of the run, UTC (`YYYY-MM-DD HH:MM`).
    pub date_utc: String,
    /// This crate's version.
    pub version: String,
    /// Wall time of the whole run, seconds.
    pub wall_seconds: f64,
}

/// The results of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// Machine and run.
    pub meta: Meta,
    /// The configuration.
    pub config: Config,
    /// One row per filter and scenario (and a floor row per scenario).
    pub rows: Vec<Row>,
    /// FP vs bits/key.
    pub fp_sweep: Vec<FpPoint>,
    /// ns/key vs filter size.
    pub size_sweep: Vec<SizePoint>,
    /// Per SIMD backend.
    pub backends: Vec<BackendRow>,
    /// Hasher costs.
    pub hashers: Vec<HasherRow>,
    /// Counter distribution of the counting filter.
    pub counting: Option<CountingSection>,
    /// Bucket loads of the d-left filter.
    pub dleft: Option<DLeftSection>,
    /// Rows whose measured FP is outside their theory's interval.
    pub flags: Vec<String>,
    /// Files written, relative to the output directory.
    pub files: Vec<String>,
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = if let Some(k) = s.strip_suffix('K') {
        (k, 1u64 << 10)
    } else if let Some(m) = s.strip_suffix('M') {
        (m, 1 << 20)
    } else {
        (s, 1)
    };
    num.parse::<u64>().ok().map(|v| v * mult)
}

/// Data caches of CPU 0 (`("L1d", bytes)`, `("L2", ..)`, `("L3", ..)`), from sysfs.
pub fn cache_sizes() -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for i in 0..8 {
        let base = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let (Some(level), Some(kind), Some(size)) = (
            read_trim(&format!("{base}/level")),
            read_trim(&format!("{base}/type")),
            read_trim(&format!("{base}/size")),
        ) else {
            continue;
        };
        if kind == "Instruction" {
            continue;
        }
        if let Some(bytes) = parse_cache_size(&size) {
            let name = if kind == "Data" {
                format!("L{level}d")
            } else {
                format!("L{level}")
            };
            out.push((name, bytes));
        }
    }
    out
}

fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let (hh, mm) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02} UTC")
}

/// The machine description (without the run's wall time).
pub fn machine() -> Meta {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let memory_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / (1024.0 * 1024.0));
    let available: Vec<&str> = bloomforge_core::Backend::available()
        .into_iter()
        .map(|b| b.name())
        .collect();
    Meta {
        cpu,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_gib,
        backend: format!(
            "{} (available: {})",
            bloomforge_core::Backend::detect().name(),
            available.join(", ")
        ),
        caches: cache_sizes(),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        date_utc: utc_now(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        wall_seconds: 0.0,
    }
}

/// One table of the report: a workload at a size and a budget.
#[derive(Clone, Debug)]
struct Scenario {
    kind: WorkloadKind,
    n: usize,
    target: Target,
}

fn scenarios(cfg: &Config) -> Vec<Scenario> {
    let p = &cfg.plan;
    let bits = Target::BitsPerKey(p.bits_per_key);
    let mut v = Vec::new();
    for &n in &p.main_sizes {
        v.push(Scenario {
            kind: WorkloadKind::RandomU64,
            n,
            target: bits,
        });
        v.push(Scenario {
            kind: WorkloadKind::RandomU64,
            n,
            target: Target::FalsePos(p.target_fp),
        });
    }
    for kind in [WorkloadKind::SequentialU64, WorkloadKind::Urls] {
        v.push(Scenario {
            kind,
            n: p.other_size,
            target: bits,
        });
    }
    if let Some(path) = &cfg.keys_file {
        v.push(Scenario {
            kind: WorkloadKind::File(path.clone()),
            n: 0,
            target: bits,
        });
    }
    v
}

fn progress(cfg: &Config, total: u64) -> indicatif::ProgressBar {
    if cfg.quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} {msg}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

fn run_scenario<K: RegistryKey>(
    ctx: &Ctx,
    entries: &[&Entry],
    w: &Workload<K>,
    target: Target,
    seed: u64,
    pb: &indicatif::ProgressBar,
    rows: &mut Vec<Row>,
) -> Result<(), BenchError> {
    let sizing = Sizing {
        n: w.members.len() as u64,
        target,
        seed,
    };
    let mut floor_bits = None;
    for e in entries {
        pb.set_message(format!(
            "{} {} n={} {}",
            w.name,
            e.name,
            w.members.len(),
            target.label()
        ));
        let row = measure_entry(ctx, e, w, &sizing)?;
        if e.layout == Layout::Blocked512 && floor_bits.is_none() {
            floor_bits = Some(row.bits_per_key);
        }
        rows.push(row);
        pb.inc(1);
    }
    let bits = floor_bits.unwrap_or(match target {
        Target::BitsPerKey(c) => c,
        Target::FalsePos(p) => theory::math::blocked512_size(p).0,
    });
    rows.push(floor_row(
        ctx,
        &w.name,
        w.members.len(),
        w.non_members.len(),
        bits,
        &target,
    )?);
    if entries.iter().any(|e| e.name.ends_with("-atomic")) {
        rows.push(locked_floor_row(
            ctx,
            &w.name,
            w.members.len(),
            bits,
            &target,
        )?);
    }
    pb.inc(1);
    Ok(())
}

/// Filters of the FP sweep: the selected entries of each layout with a theory, without
/// the atomic twins (same bits as the plain ones).
fn fp_sweep_entries<'a>(entries: &[&'a Entry]) -> Vec<&'a Entry> {
    entries
        .iter()
        .copied()
        .filter(|e| {
            // A growing or a stable filter takes a target rate, not a bits-per-key budget.
            !e.name.ends_with("-atomic")
                && e.layout != Layout::Exact
                && e.layout != Layout::Scalable
                && e.layout != Layout::Stable
        })
        .collect()
}

const SIZE_SWEEP_OURS: [&str; 3] = ["blocked", "split-block", "standard"];
const SIZE_SWEEP_PEERS: [&str; 2] = ["sbbf-rs-safe", "fastbloom"];
/// Peers too slow to fill large filters in quick runs (capped at
/// `size_sweep_peer_max_bytes`).
const SIZE_SWEEP_SLOW: [&str; 1] = ["fastbloom"];

/// Runs everything `cfg` asks for and writes the report under `cfg.out_dir`.
///
/// # Errors
/// [`BenchError::WrongAnswer`] as soon as any filter answers wrongly; configuration,
/// I/O, build and plotting errors.
pub fn run(cfg: &Config) -> Result<Report, BenchError> {
    let started = Instant::now();
    let mut meta = machine();
    let all = registry();
    let entries: Vec<&Entry> = all.iter().filter(|e| cfg.selects(e.name)).collect();
    if entries.is_empty() {
        let names: Vec<&str> = all.iter().map(|e| e.name).collect();
        return Err(BenchError::Config(format!(
            "--only {:?} matches no filter; filters: {}",
            cfg.only,
            names.join(", ")
        )));
    }
    let plan = &cfg.plan;
    let pools = plan
        .thread_counts
        .iter()
        .map(|&t| pinned_pool(t).map(|p| (t, p)))
        .collect::<Result<Vec<_>, _>>()?;
    let ctx = Ctx {
        warmup: plan.warmup,
        reps: plan.reps,
        pools,
    };
    let scen = scenarios(cfg);
    let sweep_entries = fp_sweep_entries(&entries);
    let size_entries: Vec<&Entry> = entries
        .iter()
        .copied()
        .filter(|e| SIZE_SWEEP_OURS.contains(&e.name) || SIZE_SWEEP_PEERS.contains(&e.name))
        .collect();
    let size_steps: usize = plan
        .size_sweep_bytes
        .iter()
        .map(|&b| {
            1 + size_entries
                .iter()
                .filter(|e| {
                    !SIZE_SWEEP_SLOW.contains(&e.name) || b <= plan.size_sweep_peer_max_bytes
                })
                .count()
        })
        .sum();
    let total = scen.len() * (entries.len() + 1)
        + plan.fp_sweep_bits.len() * sweep_entries.len()
        + size_steps
        + 4;
    let pb = progress(cfg, total as u64);

    // Scenario tables.
    let mut rows = Vec::new();
    let mut first_random: Option<Workload<u64>> = None;
    for s in &scen {
        let queries = plan.queries;
        pb.set_message(format!("generating {:?} keys", s.kind));
        let w = s.kind.generate(s.n, queries, cfg.seed)?;
        match &w {
            AnyWorkload::U64(w) => {
                run_scenario(&ctx, &entries, w, s.target, cfg.seed, &pb, &mut rows)?;
            }
            AnyWorkload::Str(w) => {
                run_scenario(&ctx, &entries, w, s.target, cfg.seed, &pb, &mut rows)?;
            }
        }
        if let (AnyWorkload::U64(w), None, WorkloadKind::RandomU64) = (w, &first_random, &s.kind) {
            first_random = Some(w);
        }
    }

    // FP vs bits/key.
    let mut fp_sweep = Vec::new();
    let sweep_w = workload::random_u64(plan.fp_sweep_n, plan.fp_sweep_queries, cfg.seed ^ 0xf0);
    for (i, &c) in plan.fp_sweep_bits.iter().enumerate() {
        for e in &sweep_entries {
            pb.set_message(format!("FP sweep {} at {c} bits/key", e.name));
            // A static filter (fuse, xor, Bloomier) has one size: measure it once.
            // Parquet rounds sizes to powers of two: keep one point per size.
            if !(e.is_static && i > 0) {
                let p = fp_point(e, &sweep_w, c, cfg.seed)?;
                let dup = fp_sweep.iter().any(|q: &FpPoint| {
                    q.filter == p.filter && (q.bits_per_key - p.bits_per_key).abs() < 1e-9
                });
                if !dup {
                    fp_sweep.push(p);
                }
            }
            pb.inc(1);
        }
    }
    drop(sweep_w);

    // ns/key vs filter size.
    let mut size_sweep = Vec::new();
    for &bytes in &plan.size_sweep_bytes {
        for e in &size_entries {
            if SIZE_SWEEP_SLOW.contains(&e.name) && bytes > plan.size_sweep_peer_max_bytes {
                continue;
            }
            pb.set_message(format!("size sweep {} at {} KiB", e.name, bytes >> 10));
            size_sweep.push(size_point(
                &ctx,
                e,
                bytes,
                plan.size_sweep_queries,
                cfg.seed,
            )?);
            pb.inc(1);
        }
        pb.set_message(format!("size sweep floor at {} KiB", bytes >> 10));
        size_sweep.push(size_floor_point(&ctx, bytes, plan.size_sweep_queries)?);
        pb.inc(1);
    }

    // SIMD backends and hashers.
    let mut backends = Vec::new();
    if let Some(w) = &first_random {
        if cfg.selects("blocked") || cfg.selects("split-block") {
            pb.set_message("SIMD backends");
            backends = backend_rows(&ctx, w, plan.bits_per_key, cfg.seed)?;
        }
    }
    pb.inc(1);
    pb.set_message("hashers");
    let hashers = hasher_rows(&ctx, plan.hasher_keys, cfg.seed)?;
    pb.inc(1);
    let (mut counting, mut dleft) = (None, None);
    if let Some(w) = &first_random {
        if cfg.selects("counting") {
            pb.set_message("counting-filter counters");
            counting = Some(counting_section(w, plan.target_fp, cfg.seed)?);
        }
        pb.inc(1);
        if cfg.selects("d-left") {
            pb.set_message("d-left bucket loads");
            dleft = Some(dleft_section(w, plan.target_fp, cfg.seed)?);
        }
        pb.inc(1);
    }
    pb.finish_and_clear();

    let mut flags = Vec::new();
    for r in &rows {
        if let Some(fp) = r.fp.as_ref().filter(|fp| !fp.consistent) {
            flags.push(format!(
                "{} on {} (n={}, {}): measured FP {:.4}% vs theory {:.4}% (z = {})",
                r.filter,
                r.workload,
                r.n,
                r.target,
                fp.measured * 100.0,
                fp.theory * 100.0,
                fp.z.map_or("exact test".into(), |z| format!("{z:.1}")),
            ));
        }
    }
    for p in &fp_sweep {
        if !p.fp.consistent {
            flags.push(format!(
                "FP sweep {} at {:.2} bits/key: measured {:.4}% vs theory {:.4}%",
                p.filter,
                p.bits_per_key,
                p.fp.measured * 100.0,
                p.fp.theory * 100.0
            ));
        }
    }

    meta.wall_seconds = started.elapsed().as_secs_f64();
    let mut report = Report {
        meta,
        config: cfg.clone(),
        rows,
        fp_sweep,
        size_sweep,
        backends,
        hashers,
        counting,
        dleft,
        flags,
        files: Vec::new(),
    };
    report.files = report::write_all(&report, &cfg.out_dir)?;
    Ok(report)
}
