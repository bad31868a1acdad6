//! `bloomforge`: build, query, inspect, merge, delete from and export Bloom filters over
//! files of keys, and find the lines common to several large files within a memory
//! budget (`common`, approximate or `--exact`).
//!
//! Guide: [the command line][guide-cli].
//!
//! [guide-cli]: https://github.com/bloomforge/bloomforge/blob/main/docs/cli.md
//!
//! ```text
//! bloomforge build [KEYS]... -o F.bloom [--fp 0.01 | --bits-per-key B] [--expected N] [--kind K]   (K: blocked, split, standard, counting, counting-standard, dleft, scalable, scalable-standard, stable)
//! bloomforge build [KEYS]... -o F.bloom --kind stable [--memory 64M | --cells N] [--cell-bits 3] [--fp 0.01]   (fixed memory, forgets; no merge)
//! bloomforge query F.bloom [KEYS]... [--absent] [--count]
//! bloomforge remove F.bloom [KEYS]... [-o OUT.bloom]          (counting, counting-standard, dleft)
//! bloomforge export F.bloom -o PLAIN.bloom                    (counting kinds)
//! bloomforge stats F.bloom [--json]
//! bloomforge build [KEYS]... -o F --format guava|spark-v1|spark-v2 [--expected N] [--fp P] [--key-type string|long]
//! bloomforge convert IN -o OUT --to bloomforge|guava|spark-v1|spark-v2   (exact conversions only)
//! bloomforge merge A.bloom B.bloom... -o OUT.bloom [--intersect]
//! bloomforge common A.txt B.txt [C.txt...] [--exact] [--memory 4G] [--temp-dir DIR] [-o OUT]
//! bloomforge ints contains|unique|distinct FILE... [--format text|u32le|u64le] [--memory 1G]
//! bloomforge diff A.txt B.txt --expected-diff D                (<\tonly in A, >\tonly in B)
//! bloomforge dedup [KEYS]... [--memory 64M] [--fp 0.01]        (first occurrences, stable filter)
//! bloomforge parquet index IN.parquet (-o OUT.parquet | --in-place) --column C... [--fp 0.01] [--keep-existing]
//! bloomforge parquet probe FILE COLUMN VALUE | bloomforge parquet filters FILE [--json]
//! ```
//! KEYS are files, `-` or nothing for stdin; keys are lines as raw bytes (policy in
//! [`input`]). Every command streams its input in bounded blocks; `-q` silences progress
//! and summaries, `--threads` sets the worker count (default: all cores).
//!
//! # Adding a subcommand
//! A subcommand is one self-contained module, `tools/src/<name>.rs`, exposing
//! - `pub(crate) struct Args` deriving `clap::Args` (its doc comment is the command's
//!   help; give it an `after_help` example like the others), or an enum deriving
//!   `clap::Subcommand` for a command with its own subcommands, and
//! - `pub(crate) fn run(args: Args) -> error::Result<()>`.
//!
//! Then add three lines here: `mod <name>;`, a variant `Name(<name>::Args)` in
//! [`Command`] (its doc comment is the one-line summary in `bloomforge --help`) and the
//! arm `Command::Name(a) => <name>::run(a)` in [`run`]. Reuse the shared pieces:
//! [`input::LineReader`] (blocks of keys from files or stdin, CRLF and empty-line
//! policy; `for_each_line` for a simple loop) or [`input::BlockStream`] (the same, read
//! ahead on a thread), [`input::KeyOptions`] (`--keep-empty`, to `#[command(flatten)]`),
//! [`error::CliError`] (one-line errors naming the file), [`output::write_file`]
//! (atomic output), [`progress::Progress`], [`cleanup::TempDir`] (temporary files
//! removed on error and Ctrl-C) and [`size::parse_size`] (`512M`, `4GiB`).

mod build;
mod cleanup;
mod common;
mod dedup;
mod diff;
mod error;
mod export;
mod filter;
mod foreign;
mod gen_urls;
mod hll;
mod input;
mod ints;
mod lines;
mod mapped;
mod merge;
mod output;
mod parquet;
mod progress;
mod query;
mod remove;
mod size;
mod stats;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// Bloom filters over files of keys, and the lines common to large files.
#[derive(Parser)]
#[command(
    name = "bloomforge",
    version,
    propagate_version = true,
    arg_required_else_help = true,
    after_help = "Example:\n  bloomforge build urls.txt -o urls.bloom --fp 0.001\n  \
                  bloomforge query urls.bloom new.txt --absent\n  \
                  bloomforge common a.txt b.txt --exact --memory 4G -o common.txt"
)]
struct Cli {
    /// No progress bars and no summary lines on stderr (warnings and errors remain).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Extra statistics on stderr (`build`: time per phase and for the write; `common`:
    /// partitions, re-splits, memory).
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Worker threads (default: all cores). `build` and `query` of a file also use the
    /// main thread: it prints each window's answers in order, or inserts the keys while the
    /// workers split and hash the next window (blocked and split-block filters: below 4
    /// threads one fewer worker is started); with `--threads 1` a build's main thread
    /// splits, hashes and inserts by itself.
    #[arg(long, global = true, value_name = "T")]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

/// The subcommands; see the module docs for adding one.
#[derive(Subcommand)]
enum Command {
    /// Build a filter from keys (one per line).
    Build(build::Args),
    /// Print the keys that may be in a filter (or, with --absent, surely are not).
    Query(query::Args),
    /// Delete keys from a counting or d-left filter.
    Remove(remove::Args),
    /// Convert a counting filter to the plain filter that answers identically.
    Export(export::Args),
    /// Print a filter's parameters and fill.
    Stats(stats::Args),
    /// Rewrite a filter file in another format where every answer carries over (Guava, Spark, bloomforge).
    Convert(foreign::ConvertArgs),
    /// Union (or intersect) filters built with the same parameters.
    Merge(merge::Args),
    /// Print the lines present in every file, approximately or --exact, within --memory.
    Common(common::Args),
    /// Integer sets over the u32 domain: contains, unique (exactly once), distinct.
    Ints {
        #[command(subcommand)]
        command: ints::IntsCommand,
    },
    /// Print the lines only in A or only in B (invertible Bloom lookup tables; --expected-diff).
    Diff(diff::Args),
    /// Print each line the first time it is seen, within --memory (a stable Bloom filter).
    Dedup(dedup::Args),
    /// Parquet files: add split-block Bloom filters to their row groups (index), probe and list them.
    Parquet {
        #[command(subcommand)]
        command: parquet::ParquetCommand,
    },
    /// Generate a file of URLs for benchmarks (see docs/benchmarks.md).
    #[command(hide = true)]
    GenUrls(gen_urls::Args),
}

/// Whether `-v` was given.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `-v` was given.
pub(crate) fn verbose() -> bool {
    VERBOSE.load(std::sync::atomic::Ordering::Relaxed)
}

fn run(command: Command) -> error::Result<()> {
    match command {
        Command::Build(a) => build::run(a),
        Command::Query(a) => query::run(a),
        Command::Remove(a) => remove::run(a),
        Command::Export(a) => export::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Convert(a) => foreign::convert(a),
        Command::Merge(a) => merge::run(a),
        Command::Common(a) => common::run(a),
        Command::Ints { command } => ints::run(command),
        Command::Diff(a) => diff::run(a),
        Command::Dedup(a) => dedup::run(a),
        Command::Parquet { command } => parquet::run(command),
        Command::GenUrls(a) => gen_urls::run(a),
    }
}

/// clap's message as one line, without the usage block: the first line, joined with the
/// indented lines that continue it (the names of missing arguments, the values of a
/// conflict), up to the first blank line.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or("invalid arguments");
    let mut text = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let more: Vec<&str> = lines
        .take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    if !more.is_empty() {
        if !text.ends_with(':') {
            text.push(':');
        }
        text.push(' ');
        text.push_str(&more.join(", "));
    }
    text
}

/// Keeps glibc from handing the per-block buffers (hashes, ~1-2 MiB each, allocated and
/// freed for every 8 MiB of input) back to the kernel and faulting fresh zero pages for
/// each block: measured at 100M keys, those were ~175 000 page faults of a `build`.
/// Allocations under 32 MiB come from the heap, and up to 128 MiB of freed heap is kept
/// for reuse (bounded by the peak of live buffers, which the memory bounds already count).
/// At most two arenas: glibc otherwise gives each thread its own (up to 8 per core), each
/// keeping the buffers freed into it, so the resident set grew with `--threads` (100M
/// URLs, `build --threads 16` on 2 cores: 193 MB peak RSS with the default arenas, 168 MB
/// with two, 165 MB with one; 2 threads 166 MB either way; times within noise). The
/// tool's allocations are a few large buffers per window, too few to contend on a lock.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets glibc allocator parameters; it is called before any
    // thread is started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    // Not `print!`, which panics when stdout is a closed pipe.
                    let _ = write!(std::io::stdout(), "{}", e.render());
                    ExitCode::SUCCESS
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = write!(std::io::stderr(), "{}", e.render());
                    ExitCode::from(2)
                }
                _ => {
                    eprintln!(
                        "bloomforge: {} (see --help)",
                        one_line(&e.render().to_string())
                    );
                    ExitCode::from(2)
                }
            };
        }
    };
    progress::set_quiet(cli.quiet);
    VERBOSE.store(cli.verbose, std::sync::atomic::Ordering::Relaxed);
    cleanup::install();
    if let Some(t) = cli.threads {
        if t == 0 {
            eprintln!("bloomforge: --threads must be at least 1");
            return ExitCode::from(2);
        }
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
        {
            eprintln!("bloomforge: --threads: {e}");
            return ExitCode::FAILURE;
        }
    }
    let result = run(cli.command);
    // An interrupted run exits with status 130 from the signal handler, whatever it was
    // doing when its temporary files were removed.
    cleanup::wait_if_interrupted();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout (`bloomforge query ... | head`) ends the command quietly, as a
        // SIGPIPE ends `cat`.
        Err(error::CliError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("bloomforge: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_become_one_line_with_their_continuation() {
        let rendered = "error: the following required arguments were not provided:\n  \
                        --output <FILTER>\n  <FILE>\n\nUsage: bloomforge build --output \
                        <FILTER> [KEYS]...\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(rendered),
            "the following required arguments were not provided: --output <FILTER>, <FILE>"
        );
        // A tip after a blank line is not part of the one line.
        let rendered = "error: unexpected argument '--fpp' found\n\n  tip: a similar \
                        argument exists: '--fp'\n\nUsage: bloomforge common\n";
        assert_eq!(one_line(rendered), "unexpected argument '--fpp' found");
        // Through clap itself.
        let e = match Cli::try_parse_from(["bloomforge", "build", "keys.txt"]) {
            Err(e) => e,
            Ok(_) => panic!("-o is required"),
        };
        assert_eq!(
            one_line(&e.render().to_string()),
            "the following required arguments were not provided: --output <FILTER>"
        );
    }
}
