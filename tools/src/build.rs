//! `build`: a filter from keys, streamed.
//!
//! Pass 1 (only without `--expected`) estimates the number of distinct keys with a
//! HyperLogLog sketch; the filter is sized for the estimate plus three standard errors.
//! Keys from stdin are then spooled to a temporary file during pass 1 (in `--temp-dir`,
//! removed at the end, on error and on Ctrl-C) so pass 2 can read them again; give
//! `--expected` to stream stdin once with no temporary file. Pass 2 inserts a regular file
//! window by window from its memory map (see [`crate::mapped`] and
//! [`AnyFilter::insert_mapped`]: each window's whole lines are split and hashed on the
//! worker threads while the main thread inserts the window before, alone (blocked and
//! split-block filters below 4 threads, and every kind at one thread, where the main
//! thread also splits and hashes) or with the filter's parallel insert (from 4 threads,
//! blocked and split-block filters: the worker tasks group their hashes by range of the
//! filter with core's `RangeSplitter`, and one task per range inserts each window with
//! `par_insert_split`), a pipe block by block (see [`AnyFilter::insert_block`]). Pass 1 reads through the block reader
//! whatever the input (a reader thread beside the workers).
//! Resident memory of a mapped file: the filter, plus two windows of the input (at most
//! 16 MiB each or the longest line, released once inserted) and their hashes (8 bytes a
//! key, held up to three times, windows aiming at 2^18 keys: ~12 MiB); of a pipe: the
//! filter, plus
//! - three byte buffers of `input::BLOCK_BYTES` = 8 MiB: the block being read on the
//!   reader thread, the block being inserted, and the reader's carry (the bytes after a
//!   block's cut, kept for the next block: a partial line, or up to a whole block when a
//!   block is cut at 2^18 keys); a buffer also grows to hold the longest line whole (to
//!   at most about 8 MiB + 1.5x its length);
//! - the two blocks' index, at most 16 bytes a key and 2^18 keys a block (8 MiB);
//! - the insert's hashes (and scatter), at most 16 bytes a key of one block (4 MiB);
//! - the 16 KiB sketch, and the 1 MiB spool writer when stdin is spooled:
//!
//! at most ~40 MiB over the filter for lines under 1 MiB, whatever the input's size
//! (measured, 2 threads: 26 MB for URL lines, 37 MB for 40M keys of 7.5 bytes, both with
//! the process's ~5 MB baseline).

use crate::cleanup::TempDir;
use crate::error::{CliError, Result};
use crate::filter::{AnyFilter, DLeftShape, Kind, Sizing, StableShape, SCALABLE_INITIAL};
use crate::hll::Hll;
use crate::input::{Block, BlockStream, KeyOptions, Source};
use crate::mapped::MappedInput;
use crate::output::write_filter;
use crate::progress::{note, Progress};
use rayon::prelude::*;
use std::ffi::OsString;
use std::hash::BuildHasher;
use std::io::Write;
use std::path::PathBuf;

/// Build a filter from keys (one per line; files, `-` or nothing for stdin).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  bloomforge build urls.txt -o urls.bloom --fp 0.001\n  \
    zcat log.gz | cut -f3 | bloomforge build -o ips.bloom --expected 50000000\n  \
    bloomforge build a.txt b.txt -o ab.bloom --kind counting --bits-per-key 12\n  \
    tail -F events.log | bloomforge build --kind stable --memory 256M --fp 0.001 -o recent.bloom\n  \
    bloomforge build urls.txt -o urls.guava --format guava --expected 1000000 --fp 0.01\n  \
    bloomforge build ids.txt -o ids.spark --format spark-v2 --key-type long"
)]
pub(crate) struct Args {
    /// Key files (`-`: stdin; none: stdin).
    #[arg(value_name = "KEYS")]
    keys: Vec<OsString>,
    /// Old spelling of a KEYS file.
    #[arg(long = "keys", hide = true, value_name = "FILE")]
    keys_opt: Vec<OsString>,
    /// The filter file to write (replaced atomically).
    #[arg(short = 'o', long = "output", alias = "out", value_name = "FILTER")]
    output: PathBuf,
    /// Target false-positive rate at the expected number of keys (stable: at its stable
    /// point, whatever the stream's length).
    #[arg(long, value_name = "P", conflicts_with = "bits_per_key")]
    fp: Option<f64>,
    /// Size as this many bits per expected key instead (blocked, split, standard).
    #[arg(long, value_name = "B")]
    bits_per_key: Option<f64>,
    /// Number of distinct keys to size for (default: estimated in a first pass).
    #[arg(long, alias = "items", value_name = "N")]
    expected: Option<u64>,
    /// Filter kind.
    #[arg(long, alias = "layout", value_enum, default_value = "blocked")]
    kind: Kind,
    /// d-left only: bits per counter, 1..=8 (default 4: a key sticks only after 15 more
    /// inserts than removes; 2 saves ~12 % of the table for keys rarely inserted twice).
    #[arg(long, value_name = "C")]
    counter_bits: Option<u32>,
    /// d-left: cells per bucket, 1..=16 (default 8). Stable: the number of cells
    /// (instead of --memory).
    #[arg(long, value_name = "N")]
    cells: Option<u64>,
    /// Stable only: memory of the cells (512K, 64M, 1G, ...; default 64M): 64 / D cells
    /// a 64-bit word.
    #[arg(long, value_parser = crate::size::parse_size, value_name = "SIZE", conflicts_with = "cells")]
    memory: Option<u64>,
    /// Stable only: bits per cell, 1..=8 (default 3): more bits remember further back at
    /// the same memory and --fp.
    #[arg(long, value_name = "D")]
    cell_bits: Option<u32>,
    /// Hash seed (filters merge only when built with the same seed).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where stdin is spooled when --expected is not given (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// The file's format: bloomforge's own (every --kind), or the Bloom filter of Guava
    /// (`BloomFilter.writeTo`) or Spark (`BloomFilter.writeTo`, version 1 or 2), sized by
    /// that library's formulas for --expected (or the estimate) and --fp, bit for bit what
    /// it would build from the same keys.
    #[arg(long, value_enum, default_value = "bloomforge")]
    format: crate::foreign::Format,
    /// Guava and Spark formats: how lines are funnelled (`string`: their bytes; `long`:
    /// decimal 64-bit integers, as Guava's longFunnel / Spark's putLong).
    #[arg(long, value_enum, default_value = "string")]
    key_type: crate::foreign::KeyType,
    #[command(flatten)]
    key_options: KeyOptions,
}

/// Pass 1: the distinct-key estimate over all `sources`; stdin is spooled into `spool`
/// and replaced by the spool file in `sources`.
fn estimate_distinct(
    sources: &mut [Source],
    opts: KeyOptions,
    seed: u64,
    temp_dir: Option<&std::path::Path>,
    spool_dir: &mut Option<TempDir>,
) -> Result<f64> {
    let hasher = bloomforge_core::DefaultHasher::with_seed(seed);
    let mut sketch = Hll::new();
    for source in sources.iter_mut() {
        let progress = Progress::bytes(&format!("counting {}", source.name()), source.size()?);
        let mut reader = BlockStream::open(source, opts.keep_empty, progress.clone())?;
        let mut spool = None;
        if *source == Source::Stdin {
            let dir = TempDir::new(temp_dir)?;
            let path = dir.path().join("stdin");
            let f = std::fs::File::create(&path).map_err(|e| CliError::io(&path, e))?;
            spool = Some((path, std::io::BufWriter::with_capacity(1 << 20, f)));
            *spool_dir = Some(dir);
        }
        let mut block = Block::default();
        while reader.next_block(&mut block)? {
            let part = block
                .spans()
                .par_chunks(8192)
                .fold(Hll::new, |mut s, spans| {
                    for &sp in spans {
                        s.add(hasher.hash_one(block.span(sp)));
                    }
                    s
                })
                .reduce(Hll::new, |mut a, b| {
                    a.merge(&b);
                    a
                });
            sketch.merge(&part);
            if let Some((path, w)) = spool.as_mut() {
                for key in block.keys() {
                    w.write_all(key)
                        .and_then(|()| w.write_all(b"\n"))
                        .map_err(|e| spool_error(path, e))?;
                }
            }
        }
        progress.finish();
        if let Some((path, mut w)) = spool {
            w.flush().map_err(|e| spool_error(&path, e))?;
            *source = Source::File(path);
        }
    }
    Ok(sketch.estimate())
}

fn spool_error(path: &std::path::Path, e: std::io::Error) -> CliError {
    if crate::error::is_disk_full(&e) {
        CliError::Msg(format!(
            "temp dir full while spooling stdin to {} (give --expected to read stdin once)",
            path.display()
        ))
    } else {
        CliError::io(path, e)
    }
}

/// The distinct keys a filter holds, for the overfill check and the summary. The plain
/// filters' `estimated_len` is from their fill; the counting filter's (the counter sum)
/// and the d-left `len` count every insert, so a key on many lines would read as many
/// keys and a file with duplicates would warn of an overfill it does not have. For those
/// the count comes from the fill too: the counting filter's zero counters (after `n`
/// distinct keys a counter is still zero with probability `exp(-n c / m)`, `c` the
/// counters a key sets on average), the d-left filter's occupied cells (one per distinct
/// fingerprint).
fn distinct_keys(filter: &AnyFilter) -> f64 {
    match filter {
        AnyFilter::Counting(f) => {
            let m = f.num_counters() as f64;
            // A key's k counters are drawn from its line of 128 (blocked) or from all m.
            let space = match f.layout() {
                bloomforge_counting::CounterLayout::Blocked => 128.0f64.min(m),
                bloomforge_counting::CounterLayout::Standard => m,
            };
            let per_key = -space * (f64::from(f.num_hashes()) * (-1.0 / space).ln_1p()).exp_m1();
            // Half a counter when all are set: a finite (huge) estimate.
            let zero = (m - f.nonzero_counters() as f64).max(0.5);
            m * (m / zero).ln() / per_key
        }
        AnyFilter::DLeft(f) => f.occupied_cells() as f64,
        f => f.estimated_len(),
    }
}

/// Runs `build`.
pub(crate) fn run(args: Args) -> Result<()> {
    let mut names = args.keys.clone();
    names.extend(args.keys_opt.iter().cloned());
    let mut sources = Source::list(&names);
    let sizing = match args.bits_per_key {
        Some(b) => Sizing::BitsPerKey(b),
        None => Sizing::FalsePos(args.fp.unwrap_or(0.01)),
    };
    let stable_kind = args.kind == Kind::Stable;
    let dleft = DLeftShape {
        counter_bits: args.counter_bits,
        cells: match args.cells {
            Some(c) if !stable_kind => Some(u32::try_from(c).map_err(|_| {
                CliError::Msg(format!("--cells {c}: a d-left bucket has 1..=16 cells"))
            })?),
            _ => None,
        },
    };
    let stable = StableShape {
        memory: args.memory,
        cells: args.cells.filter(|_| stable_kind),
        cell_bits: args.cell_bits,
    };
    if stable_kind && args.expected.is_some() {
        return Err(
            "--expected does not size a stable filter (its memory is fixed and it \
                    forgets old keys): give --memory or --cells"
                .into(),
        );
    }
    // Refuse bad parameters before reading anything.
    AnyFilter::create(args.kind, 1, sizing, args.seed, dleft, stable)?;
    if let Some(parent) = args.output.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(CliError::at(
                args.output.display(),
                "its directory does not exist",
            ));
        }
    }
    if args.expected == Some(0) {
        return Err("--expected must be at least 1".into());
    }
    let opts = args.key_options;
    let mut spool_dir = None;
    // `-v`: where the time went (counting pass, allocation, insertion, write).
    let started = std::time::Instant::now();
    let (items, estimated) = match args.expected {
        Some(n) => (n, None),
        // A scalable filter grows and a stable one forgets: one pass, no count of the keys
        // first.
        None if args.kind.is_scalable() => (SCALABLE_INITIAL, None),
        None if stable_kind => (1, None),
        None => {
            let d = estimate_distinct(
                &mut sources,
                opts,
                args.seed,
                args.temp_dir.as_deref(),
                &mut spool_dir,
            )?;
            let n = (d * (1.0 + 3.0 * Hll::REL_ERROR)).ceil().max(1.0) as u64;
            (n, Some(d))
        }
    };
    let counted = started.elapsed();
    if let Some(format) = args.format.foreign() {
        if args.bits_per_key.is_some() || args.kind != Kind::Blocked {
            return Err(format!(
                "--format {format} is sized by --fp and --expected only (no --kind, --bits-per-key)"
            )
            .into());
        }
        return crate::foreign::build(
            &sources,
            &args.output,
            format,
            items,
            args.fp.unwrap_or(0.01),
            args.key_type,
            opts.keep_empty,
        );
    }
    let mut filter = AnyFilter::create(args.kind, items, sizing, args.seed, dleft, stable)?;
    let allocated = started.elapsed();
    let mut keys = 0u64;
    for source in &sources {
        let progress = Progress::bytes(&format!("building {}", source.name()), source.size()?);
        // A regular file is mapped, split and hashed on the worker threads and inserted
        // beside them (see `insert_mapped`); pipes are read in blocks by a reader thread.
        if let Some(mut mapped) = MappedInput::open(source, opts.keep_empty, progress.clone())? {
            keys += filter.insert_mapped(&mut mapped, &progress)?;
        } else {
            let mut reader = BlockStream::open(source, opts.keep_empty, progress.clone())?;
            let mut block = Block::default();
            while reader.next_block(&mut block)? {
                filter.insert_block(&block, reader.name())?;
                keys += block.len() as u64;
            }
        }
        progress.finish();
    }
    drop(spool_dir);
    let inserted = started.elapsed();
    let distinct = distinct_keys(&filter);
    let checked = started.elapsed();
    let fp = filter.expected_false_pos();
    // The fill-based estimate is within a few percent at the design load: 10 % over is
    // an overfilled filter, not noise.
    if args.expected.is_some() && !args.kind.is_scalable() && distinct > items as f64 * 1.1 {
        if fp >= 0.5 {
            return Err(CliError::Msg(format!(
                "--expected {items} is far too small: the filter holds about {distinct:.0} \
                 distinct keys and would answer 'maybe' to {:.0} % of absent keys; nothing \
                 written (omit --expected to size from the data)",
                fp * 100.0
            )));
        }
        eprintln!(
            "bloomforge: warning: {} holds about {distinct:.0} distinct keys, more than \
             --expected {items}: its false-positive rate is about {fp:.3e}{}",
            args.output.display(),
            match sizing {
                Sizing::FalsePos(p) => format!(", not the {p} it was sized for"),
                Sizing::BitsPerKey(_) => String::new(),
            }
        );
    }
    write_filter(&args.output, &filter)?;
    if crate::verbose() {
        let secs = |a: std::time::Duration, b: std::time::Duration| (b - a).as_secs_f64();
        eprintln!(
            "build: {:.3} s counting distinct keys, {:.3} s allocating the filter, {:.3} s \
             reading and inserting, {:.3} s counting the fill, {:.3} s writing",
            counted.as_secs_f64(),
            secs(counted, allocated),
            secs(allocated, inserted),
            secs(inserted, checked),
            secs(checked, started.elapsed())
        );
    }
    let bits = filter.memory_bits();
    note!(
        "{} filter: {keys} keys ({} distinct), {bits} bits ({:.2} bits/key), {}, expected FP \
         {fp:.3e} -> {}",
        filter.name(),
        match estimated {
            Some(d) => format!("~{d:.0} estimated"),
            None => format!("~{distinct:.0}"),
        },
        bits as f64 / distinct.max(1.0),
        filter.shape(),
        args.output.display()
    );
    Ok(())
}
