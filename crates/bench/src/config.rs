//! Command-line configuration and the measurement plan of each mode.

use crate::BenchError;
use std::path::PathBuf;

/// How much to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Mode {
    /// Seconds: tiny sizes, one repetition (for tests).
    Tiny,
    /// About five minutes on 2 cores: 1M keys, sweeps to 32 MiB.
    Quick,
    /// A few minutes: 1M and 16M keys, sweeps to 256 MiB.
    Default,
    /// Long: 1M and 100M keys, sweeps to 1 GiB.
    Full,
}

impl Mode {
    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tiny => "tiny",
            Mode::Quick => "quick",
            Mode::Default => "default",
            Mode::Full => "full",
        }
    }
}

/// What each part of the run measures; derived from the [`Mode`], adjustable field by
/// field (tests shrink it further).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Plan {
    /// Key counts of the random-`u64` scenarios (measured at both budgets).
    pub main_sizes: Vec<usize>,
    /// Key count of the sequential, URL and key-file scenarios (bits-per-key budget).
    pub other_size: usize,
    /// Non-member queries per scenario (at least this many; FP precision).
    pub queries: usize,
    /// Untimed warm-up runs per measurement.
    pub warmup: usize,
    /// Timed repetitions per measurement (the median is reported).
    pub reps: usize,
    /// The same-memory budget.
    pub bits_per_key: f64,
    /// The same-accuracy budget.
    pub target_fp: f64,
    /// Keys per point of the FP-vs-bits/key sweep.
    pub fp_sweep_n: usize,
    /// Non-member queries per point of that sweep.
    pub fp_sweep_queries: usize,
    /// Bits per key of that sweep.
    pub fp_sweep_bits: Vec<f64>,
    /// Filter sizes of the ns/key-vs-size sweep, in bytes.
    pub size_sweep_bytes: Vec<u64>,
    /// Queries per point of that sweep (positives and negatives each).
    pub size_sweep_queries: usize,
    /// Largest size at which the slow peers (fastbloom) join the size sweep.
    pub size_sweep_peer_max_bytes: u64,
    /// Thread counts of the bulk-load measurements.
    pub thread_counts: Vec<usize>,
    /// Keys per hasher-cost measurement.
    pub hasher_keys: usize,
}

fn sizes_pow(lo_log2: u32, hi_log2: u32, step: u32) -> Vec<u64> {
    (lo_log2..=hi_log2)
        .step_by(step as usize)
        .map(|e| 1u64 << e)
        .collect()
}

/// Thread counts 1, 2, 4, ... up to and including `max`.
pub fn thread_counts(max: usize) -> Vec<usize> {
    let max = max.max(1);
    let mut v: Vec<usize> = (0..)
        .map(|e| 1usize << e)
        .take_while(|&t| t < max)
        .collect();
    v.push(max);
    v
}

impl Plan {
    /// The plan of `mode` with bulk loads up to `threads` threads.
    pub fn for_mode(mode: Mode, threads: usize) -> Plan {
        let threads = thread_counts(threads);
        match mode {
            Mode::Tiny => Plan {
                main_sizes: vec![4_000],
                other_size: 2_000,
                queries: 20_000,
                warmup: 0,
                reps: 1,
                bits_per_key: 10.0,
                target_fp: 0.01,
                fp_sweep_n: 2_000,
                fp_sweep_queries: 20_000,
                fp_sweep_bits: vec![8.0, 16.0],
                size_sweep_bytes: vec![32 << 10, 64 << 10],
                size_sweep_queries: 10_000,
                size_sweep_peer_max_bytes: 64 << 10,
                thread_counts: threads,
                hasher_keys: 10_000,
            },
            Mode::Quick => Plan {
                main_sizes: vec![1_000_000],
                other_size: 1_000_000,
                queries: 1_000_000,
                warmup: 1,
                reps: 3,
                bits_per_key: 10.0,
                target_fp: 0.01,
                fp_sweep_n: 100_000,
                fp_sweep_queries: 1_000_000,
                fp_sweep_bits: vec![4.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0],
                size_sweep_bytes: sizes_pow(15, 25, 2),
                size_sweep_queries: 1_000_000,
                size_sweep_peer_max_bytes: 8 << 20,
                thread_counts: threads,
                hasher_keys: 1_000_000,
            },
            Mode::Default => Plan {
                main_sizes: vec![1_000_000, 16_000_000],
                other_size: 1_000_000,
                queries: 2_000_000,
                warmup: 1,
                reps: 5,
                bits_per_key: 10.0,
                target_fp: 0.01,
                fp_sweep_n: 1_000_000,
                fp_sweep_queries: 4_000_000,
                fp_sweep_bits: vec![4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 20.0, 24.0],
                size_sweep_bytes: sizes_pow(15, 28, 1),
                size_sweep_queries: 2_000_000,
                size_sweep_peer_max_bytes: 256 << 20,
                thread_counts: threads,
                hasher_keys: 4_000_000,
            },
            Mode::Full => Plan {
                main_sizes: vec![1_000_000, 100_000_000],
                other_size: 10_000_000,
                queries: 4_000_000,
                warmup: 1,
                reps: 5,
                bits_per_key: 10.0,
                target_fp: 0.01,
                fp_sweep_n: 1_000_000,
                fp_sweep_queries: 10_000_000,
                fp_sweep_bits: vec![
                    3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 24.0,
                ],
                size_sweep_bytes: sizes_pow(15, 30, 1),
                size_sweep_queries: 4_000_000,
                size_sweep_peer_max_bytes: 1 << 30,
                thread_counts: threads,
                hasher_keys: 10_000_000,
            },
        }
    }
}

/// Everything a run needs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Config {
    /// The mode the plan came from.
    pub mode: Mode,
    /// What to measure.
    pub plan: Plan,
    /// Filter names (or name prefixes) to keep; empty keeps all.
    pub only: Vec<String>,
    /// Largest thread count of the bulk loads.
    pub threads: usize,
    /// Seed of every workload and seeded filter.
    pub seed: u64,
    /// A file of keys, one per line, measured as an extra workload.
    pub keys_file: Option<PathBuf>,
    /// Output directory of the report.
    pub out_dir: PathBuf,
    /// No progress bar, no table on stdout.
    pub quiet: bool,
    /// The command line, for the report.
    pub command: String,
}

/// The default output directory.
pub const DEFAULT_OUT_DIR: &str = "target/bloomforge-report";

/// The default seed.
pub const DEFAULT_SEED: u64 = 0x5eed_b100_f0e5_2024;

fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Config {
    /// A configuration for `mode` with defaults for everything else.
    pub fn new(mode: Mode) -> Config {
        let threads = available_threads();
        Config {
            mode,
            plan: Plan::for_mode(mode, threads),
            only: Vec::new(),
            threads,
            seed: DEFAULT_SEED,
            keys_file: None,
            out_dir: PathBuf::from(DEFAULT_OUT_DIR),
            quiet: false,
            command: format!("bloomforge-bench --{}", mode.name()),
        }
    }

    /// Whether the filter named `name` is selected by `--only`.
    pub fn selects(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| name.starts_with(o.as_str()))
    }
}

/// The filters of the harness, shown after the options by `--help`.
pub const FILTERS: &str = "\
Filters: blocked, blocked-atomic, split-block, split-block-atomic, standard,
standard-atomic, fastbloom, fastbloom-atomic, bloomfilter, sbbf-rs-safe,
parquet-sbbf, binary-fuse-8, xorf-bfuse8, binary-fuse-16, xorf-bfuse16, xor-8,
xorf-xor8, xor-16, xorf-xor16, bloomier-8, count-min, count-min-blocked, hashset,
counting, counting-atomic, d-left, cuckoo, cuckoofilter, scalable-cuckoo, scalable,
scalable-standard, growable-bloom, stable.
  binary-fuse-*, xor-*, bloomier-8 (ours) and xorf-* (xorf 0.11): static, built from the
    members (build = insert), one size whatever the budget; FP 2^-8 (8) or 2^-16 (16)
  bloomier-8: 8-bit values, 8-bit fingerprints; timed by get, every member's value checked
  count-min, count-min-blocked: CountMin<u8> (subtables / 64-cell lines) as a membership
    filter: insert(key, 1), present when get > 0 (FP theory: partitioned / blocked Bloom)
  scalable, scalable-standard, growable-bloom: grown from n/100 (s = 2, r = 0.85);
    scalable-standard has standard slices (fewest bits); a bits/key budget runs 1 %
  stable: 8-bit cells sized to remember the n members, burned in to its stable point
    (FP theory: the stable point's); a bits/key budget runs 1 %
  No attenuated row: its inserts and queries are its local blocked filter's (the blocked
    row); routing needs a network (example attenuated_sim in bloomforge-stream).
";

/// The command line (clap). Without a mode flag the default mode runs (a few minutes:
/// 1M and 16M keys, size sweep to 256 MiB).
#[derive(clap::Parser, Debug)]
#[command(
    name = "bloomforge-bench",
    about = "Every bloomforge filter against its theory and against peer crates",
    after_help = FILTERS
)]
struct Args {
    /// About five minutes on 2 cores: 1M keys, size sweep to 32 MiB.
    #[arg(long, group = "mode")]
    quick: bool,
    /// Long: 1M and 100M keys, size sweep to 1 GiB.
    #[arg(long, group = "mode")]
    full: bool,
    /// Seconds, tiny sizes (tests).
    #[arg(long, visible_alias = "smoke", group = "mode")]
    tiny: bool,
    /// Only filters whose name starts with A (or B..); repeatable.
    #[arg(long, value_name = "A[,B..]", value_delimiter = ',')]
    only: Vec<String>,
    /// Bulk loads at 1, 2, 4 .. N threads [default: all cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    threads: Option<u64>,
    /// Seed of every workload (decimal or 0x hex).
    #[arg(long, value_name = "S", value_parser = parse_u64)]
    seed: Option<u64>,
    /// Also measure the keys of FILE (one per line).
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Report directory [default: target/bloomforge-report].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// No progress bar and no table on stdout.
    #[arg(short, long)]
    quiet: bool,
    /// Passed by `cargo bench` to every bench target; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// A decimal or `0x` hexadecimal `u64`, `_` separators allowed.
fn parse_u64(v: &str) -> Result<u64, String> {
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => v.replace('_', "").parse(),
    };
    parsed.map_err(|_| format!("expected a decimal or 0x hexadecimal number, got {v:?}"))
}

/// The `--help` text.
pub fn usage() -> String {
    use clap::CommandFactory;
    Args::command().render_help().to_string()
}

/// Parses command-line arguments (without the program name). `Ok(None)` means `--help`
/// was asked for.
///
/// # Errors
/// [`BenchError::Config`] for an unknown flag or a bad value (clap's message).
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Option<Config>, BenchError> {
    use clap::Parser;
    let args: Vec<String> = args.into_iter().collect();
    let parsed = match Args::try_parse_from(
        std::iter::once("bloomforge-bench").chain(args.iter().map(String::as_str)),
    ) {
        Ok(parsed) => parsed,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => return Ok(None),
        Err(e) => return Err(BenchError::Config(e.render().to_string())),
    };
    let mode = if parsed.quick {
        Mode::Quick
    } else if parsed.full {
        Mode::Full
    } else if parsed.tiny {
        Mode::Tiny
    } else {
        Mode::Default
    };
    let mut cfg = Config::new(mode);
    if let Some(t) = parsed.threads {
        cfg.threads = t as usize;
        cfg.plan.thread_counts = thread_counts(t as usize);
    }
    cfg.only = parsed
        .only
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    cfg.seed = parsed.seed.unwrap_or(DEFAULT_SEED);
    cfg.keys_file = parsed.keys;
    if let Some(dir) = parsed.out {
        cfg.out_dir = dir;
    }
    cfg.quiet = parsed.quiet;
    cfg.command = std::iter::once("bloomforge-bench".to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Some(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Option<Config>, BenchError> {
        parse_args(s.split_whitespace().map(String::from))
    }

    #[test]
    fn parses_every_flag() {
        let c = parse("--quick --only blocked,split --only fastbloom --threads 4 --seed 0x10 --keys k.txt --out=o -q")
            .unwrap()
            .unwrap();
        assert_eq!(c.mode, Mode::Quick);
        assert_eq!(c.only, vec!["blocked", "split", "fastbloom"]);
        assert_eq!(c.plan.thread_counts, vec![1, 2, 4]);
        assert_eq!(c.seed, 16);
        assert_eq!(c.keys_file, Some(PathBuf::from("k.txt")));
        assert_eq!(c.out_dir, PathBuf::from("o"));
        assert!(c.quiet);
        assert!(c.selects("blocked-atomic") && !c.selects("standard"));
        assert!(parse("--help").unwrap().is_none());
    }

    /// `--help` names every filter of the registry (and says why the attenuated filter
    /// has no row).
    #[test]
    fn usage_lists_every_filter() {
        let help = usage();
        let listed = help.split("Filters:").nth(1).unwrap();
        for e in crate::registry::registry() {
            let word = listed
                .split(|c: char| c == ',' || c == ':' || c.is_whitespace())
                .any(|w| w == e.name);
            assert!(word, "--help does not list {}", e.name);
        }
        assert!(listed.contains("No attenuated row"));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse("--bogus").is_err());
        assert!(parse("--threads 0").is_err());
        assert!(parse("--seed x").is_err());
        assert!(parse("--out").is_err());
        assert!(parse("--quick --full").is_err());
        let e = parse("--threads 0").unwrap_err().to_string();
        assert!(e.contains("--threads"), "{e}");
    }

    #[test]
    fn thread_counts_end_at_max() {
        assert_eq!(thread_counts(1), vec![1]);
        assert_eq!(thread_counts(2), vec![1, 2]);
        assert_eq!(thread_counts(6), vec![1, 2, 4, 6]);
        assert_eq!(thread_counts(16), vec![1, 2, 4, 8, 16]);
    }
}
