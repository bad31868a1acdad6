//! `dedup`: streams lines and prints the first occurrence of each, remembering what it
//! saw in a stable Bloom filter of fixed memory (`bloomforge_stream::StableBloomFilter`,
//! Deng and Rafiei 2006), so an endless stream runs in `--memory` plus two input blocks.
//!
//! What it promises: a line is dropped when the filter reports it seen recently. That is
//! wrong in two ways, both bounded: a new line can be dropped (a false positive, at most
//! `--fp` once the filter has reached its stable point, less before), and a line seen long
//! ago can be printed again (the filter forgets: a repeat more than about
//! `cells * Max / P` lines later is mostly printed again; the summary prints this horizon).
//! Lines are hashed in parallel a block at a time, then checked and inserted in input
//! order (pipelined: the cells of lines ahead are prefetched); the filter's decrements come from a seeded generator (`--seed`), so a run is
//! reproducible.

use crate::error::{CliError, Result};
use crate::input::{Block, BlockStream, KeyOptions, Source};
use crate::progress::{note, Progress};
use bloomforge_core::DefaultHasher;
use bloomforge_stream::StableBloomFilter;
use rayon::prelude::*;
use std::ffi::OsString;
use std::hash::BuildHasher;
use std::io::{BufWriter, Write};

/// Print each line the first time it is seen, within a fixed memory (a stable Bloom filter).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tail -F events.log | bloomforge dedup --memory 64M\n  \
    bloomforge dedup urls-*.txt --memory 1G --fp 0.001 > first-seen.txt\n\n\
    A new line is dropped with probability at most --fp (a false positive); a line repeated \
    after very many others may be printed again (the filter forgets; the summary on stderr \
    says after how many lines)."
)]
pub(crate) struct Args {
    /// Key files (`-` or none: stdin), read in order as one stream.
    #[arg(value_name = "KEYS")]
    keys: Vec<OsString>,
    /// Memory for the filter (512K, 64M, 1G, ...).
    #[arg(long, default_value = "64M", value_parser = crate::size::parse_size, value_name = "SIZE")]
    memory: u64,
    /// The most a new line is wrongly dropped (false-positive rate at the stable point).
    #[arg(long, default_value_t = 0.01, value_name = "P")]
    fp: f64,
    /// Bits per cell, 1..=8: more bits remember further back at the same --memory and --fp.
    #[arg(long, default_value_t = 3, value_name = "D")]
    cell_bits: u32,
    /// Seed of the hash and of the filter's random decrements.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    key_options: KeyOptions,
}

/// Runs `dedup`.
pub(crate) fn run(args: Args) -> Result<()> {
    if !(1..=8).contains(&args.cell_bits) {
        return Err(format!("--cell-bits {} is not in 1..=8", args.cell_bits).into());
    }
    let words = args.memory / 8;
    let cells = words * u64::from(64 / args.cell_bits);
    let mut filter = StableBloomFilter::builder()
        .cells(cells)
        .cell_bits(args.cell_bits)
        .false_pos(args.fp)
        .seed(args.seed)
        .rng_seed(args.seed)
        .build()
        .map_err(|e| CliError::Msg(format!("--memory {} / --fp {}: {e}", args.memory, args.fp)))?;
    let hasher: DefaultHasher = *filter.hasher();
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    let werr = |e: std::io::Error| CliError::io("stdout", e);
    let (mut total, mut printed) = (0u64, 0u64);
    let mut hashes: Vec<u64> = Vec::new();
    let mut seen: Vec<bool> = Vec::new();
    for source in Source::list(&args.keys) {
        let progress = Progress::bytes(&format!("dedup {}", source.name()), source.size()?);
        let mut reader = BlockStream::open(&source, args.key_options.keep_empty, progress.clone())?;
        let mut block = Block::default();
        while reader.next_block(&mut block)? {
            hashes.clear();
            block
                .spans()
                .par_iter()
                .map(|&s| hasher.hash_one(block.span(s)))
                .collect_into_vec(&mut hashes);
            seen.clear();
            seen.resize(hashes.len(), false);
            filter
                .check_and_insert_hash_batch(&hashes, &mut seen)
                .map_err(|e| CliError::Msg(e.to_string()))?;
            for (i, _) in seen.iter().enumerate().filter(|(_, &s)| !s) {
                out.write_all(block.key(i))
                    .and_then(|()| out.write_all(b"\n"))
                    .map_err(werr)?;
                printed += 1;
            }
            total += hashes.len() as u64;
        }
        progress.finish();
    }
    out.flush().map_err(werr)?;
    let max = (1u64 << args.cell_bits) - 1;
    let horizon = filter.cells() as f64 * max as f64 / filter.decrements() as f64;
    note!(
        "printed {printed} of {total} lines; filter: {} cells of {} bits (k = {}, P = {}), \
         false positives at most {:.3}%; repeats more than ~{:.0} lines apart may print again",
        filter.cells(),
        args.cell_bits,
        filter.num_hashes(),
        filter.decrements(),
        filter.stable_false_pos() * 100.0,
        horizon
    );
    Ok(())
}
