//! `common`: the lines present in every one of n files, within a memory budget.
//!
//! **Approximate** (default): a blocked Bloom filter of every file but the largest,
//! sized from the budget in proportion to each file's distinct-line count (a HyperLogLog
//! pass per file); the largest file is streamed through them all and every line that
//! passes is printed (each occurrence: pipe through `sort -u` to deduplicate). A line
//! missing from file `i` passes filter `i` with probability `f_i`, printed on stderr.
//!
//! **Exact** (`--exact`): partitioning, made cheaper by a filter.
//! 1. The smallest file is streamed once: each line goes into a blocked filter (the whole
//!    budget) and, by its hash, into one of P partition files in a temporary directory.
//! 2. Every other file is streamed: lines the filter rejects are surely not common and
//!    are dropped (most non-common lines never reach the disk); the rest are partitioned
//!    the same way. The filter is then freed.
//! 3. Partition by partition, the smallest file's lines go into a hash set (an arena of
//!    distinct lines plus a 33-byte-per-line index) and every other file's lines mark
//!    the entries they hit; entries marked by every file are printed, once each.
//!
//! P is chosen so that a partition's set fits the budget; a partition that does not
//! (skew, or an estimate too low) is split again by other hash bits, recursively. Records
//! are `[len u32][file u8][bytes]`, so any byte (CR, NUL, invalid UTF-8) round-trips.
//! Temporary files are removed on success, on error and on Ctrl-C (and SIGTERM).
//!
//! Resident memory, beyond the budget (the filter in passes 1-2, then the sets):
//! - passes 1-2: the input stream ([`BlockStream`]: the block being read, the reader's
//!   carry of the bytes after the block's last cut, and the block being processed, each
//!   8 MiB or the longest line if longer, plus 16 bytes of index per key and at most 2^18
//!   keys a block), 9 bytes per key of the block for its hashes and filter answers, and
//!   the partition writers' buffers (16 MiB in all): ~50 MiB for lines under 1 MiB;
//! - pass 3: per worker, a record reader and, when it re-splits, its writers; those
//!   buffers are sized so that all workers together hold at most [`PASS3_BUFFERS`]
//!   (32 MiB), and at most [`PASS3_MAX_WORKERS`] workers run (see [`Pass3Plan`]). The
//!   workers share the budget for their sets (each at least 64 KiB);
//! - throughout: the 1 MiB output buffer.
//!
//! So the whole run stays within `--memory` + 64 MiB at any `--threads` (lines under
//! 1 MiB; `-v` prints the peak resident set on Linux).

use crate::cleanup::TempDir;
use crate::error::{is_disk_full, CliError, Result};
use crate::filter::{blocked_best_k, AnyFilter};
use crate::hll::Hll;
use crate::input::{Block, BlockStream, KeyOptions, LineReader, Source};
use crate::progress::{note, Progress};
use bloomforge_core::hash::{fast_range64, mix64};
use bloomforge_core::BlockedBloomFilter;
use rayon::prelude::*;
use std::fs::File;
use std::hash::BuildHasher;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Print the lines present in every file, approximately or --exact, within --memory.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  bloomforge common a.txt b.txt --exact --memory 4G -o common.txt\n  \
    bloomforge common a.txt b.txt c.txt --memory 512M     # approximate: false positives possible\n  \
    bloomforge common a.txt b.txt --exact --memory 64M --temp-dir /scratch -v"
)]
pub(crate) struct Args {
    /// Two or more files (regular files: they are read more than once).
    #[arg(value_name = "FILE", num_args = 2.., required = true)]
    files: Vec<PathBuf>,
    /// Memory budget for the filters (approximate) or the filter and then the hash set
    /// (exact): 512M, 4G, 4GiB... Resident memory stays within it plus ~50 MiB of buffers
    /// (at most 64 MiB, whatever --threads).
    #[arg(long, default_value = "1G", value_parser = crate::size::parse_size, value_name = "SIZE")]
    memory: u64,
    /// Exact answer (partitioning through temporary files), each common line once.
    #[arg(long)]
    exact: bool,
    /// Directory for the temporary partition files (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// Approximate mode only: size each filter for this false-positive rate (0 < P < 1)
    /// instead of from the budget (refused if that needs more than --memory). Not allowed
    /// with --exact, whose answer has no false positives.
    #[arg(long, value_name = "P", conflicts_with = "exact", value_parser = parse_fp)]
    fp: Option<f64>,
    /// Write the common lines here (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    /// Number of first-level partitions (default: from the file sizes and --memory).
    #[arg(long, hide = true)]
    partitions: Option<usize>,
    /// Hash seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    key_options: KeyOptions,
}

/// `--fp`: a probability strictly between 0 and 1 (checked by clap, before any pass).
fn parse_fp(s: &str) -> std::result::Result<f64, String> {
    let p: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(format!("{s} is not between 0 and 1 (exclusive)"))
    }
}

/// Runs `common`.
pub(crate) fn run(args: Args) -> Result<()> {
    if args.files.len() > 255 {
        return Err("common takes at most 255 files".into());
    }
    let mut files = Vec::with_capacity(args.files.len());
    for f in &args.files {
        let source = Source::File(f.clone());
        match source.size()? {
            Some(size) => files.push((f.clone(), size)),
            None => {
                return Err(CliError::at(
                    f.display(),
                    "not a regular file (common reads its files more than once)",
                ))
            }
        }
    }
    with_output(args.output.as_deref(), |out| {
        if args.exact {
            exact(&args, files, out)
        } else {
            approximate(&args, files, out)
        }
    })
}

/// Runs `f` with stdout, or with a temporary file renamed to `path` only on success.
fn with_output(
    path: Option<&Path>,
    f: impl FnOnce(&mut (dyn Write + Send)) -> Result<()>,
) -> Result<()> {
    match path {
        None => {
            let mut w = BufWriter::with_capacity(1 << 20, std::io::stdout());
            f(&mut w)?;
            w.flush().map_err(|e| CliError::io("stdout", e))
        }
        Some(path) => {
            let mut inner = Ok(());
            let r = crate::output::write_file(path, |file| {
                let mut w = BufWriter::with_capacity(1 << 20, file);
                inner = f(&mut w);
                if inner.is_err() {
                    return Err(std::io::Error::other("aborted"));
                }
                w.flush()
            });
            inner?;
            r
        }
    }
}

fn out_err(e: std::io::Error) -> CliError {
    CliError::io("output", e)
}

fn hasher(seed: u64) -> bloomforge_core::DefaultHasher {
    bloomforge_core::DefaultHasher::with_seed(seed)
}

/// A block's line hashes (the filters' hash), in parallel.
fn hash_block(block: &Block, seed: u64) -> Vec<u64> {
    let h = hasher(seed);
    let mut out = vec![0u64; block.len()];
    out.par_chunks_mut(8192)
        .zip(block.spans().par_chunks(8192))
        .for_each(|(o, s)| {
            for (x, &sp) in o.iter_mut().zip(s) {
                *x = h.hash_one(block.span(sp));
            }
        });
    out
}

/// Distinct-line estimate of a file (one pass).
fn distinct(path: &Path, opts: KeyOptions, seed: u64, size: u64) -> Result<f64> {
    let progress = Progress::bytes(&format!("counting {}", path.display()), Some(size));
    let mut reader = BlockStream::open(
        &Source::File(path.to_path_buf()),
        opts.keep_empty,
        progress.clone(),
    )?;
    let mut sketch = Hll::new();
    let mut block = Block::default();
    while reader.next_block(&mut block)? {
        for h in hash_block(&block, seed) {
            sketch.add(h);
        }
    }
    progress.finish();
    Ok(sketch.estimate())
}

fn new_blocked(bits: u64, distinct: f64, seed: u64) -> Result<BlockedBloomFilter> {
    let bits = bits.max(512);
    let k = blocked_best_k(bits as f64 / distinct.max(1.0));
    BlockedBloomFilter::with_num_bits(bits)
        .seed(seed)
        .hashes(k)
        .map_err(|e| CliError::Msg(format!("filter of {bits} bits: {e}")))
}

fn approximate(
    args: &Args,
    mut files: Vec<(PathBuf, u64)>,
    out: &mut (dyn Write + Send),
) -> Result<()> {
    let opts = args.key_options;
    // The largest file is streamed (the last of equal sizes).
    let largest = files
        .iter()
        .enumerate()
        .max_by_key(|(i, (_, s))| (*s, *i))
        .map(|(i, _)| i)
        .expect("two files or more");
    let (stream_path, _) = files.remove(largest);
    let counts: Vec<f64> = files
        .iter()
        .map(|(p, s)| distinct(p, opts, args.seed, *s))
        .collect::<Result<_>>()?;
    let total: f64 = counts.iter().sum::<f64>().max(1.0);
    let budget_bits = args.memory.saturating_mul(8);
    let mut sizes = Vec::with_capacity(files.len());
    for &d in &counts {
        sizes.push(match args.fp {
            Some(p) => {
                // The range was checked by clap (`parse_fp`).
                let (bpk, _) = bloomforge_core::math::blocked512_size(p);
                (bpk * d.max(1.0)).ceil() as u64
            }
            None => (budget_bits as f64 * d / total) as u64,
        });
    }
    let needed: u64 = sizes.iter().map(|b| b.div_ceil(512) * 64).sum();
    if args.fp.is_some() && needed > args.memory {
        return Err(CliError::Msg(format!(
            "--fp {} needs {:.1} MB of filters, more than --memory {:.1} MB",
            args.fp.unwrap_or_default(),
            needed as f64 / 1e6,
            args.memory as f64 / 1e6
        )));
    }
    let mut filters = Vec::with_capacity(files.len());
    let mut worst = 0.0f64;
    for (((path, size), &d), &bits) in files.iter().zip(&counts).zip(&sizes) {
        let mut f = AnyFilter::Blocked(new_blocked(bits, d, args.seed)?);
        let progress = Progress::bytes(&format!("filtering {}", path.display()), Some(*size));
        let mut reader = BlockStream::open(
            &Source::File(path.clone()),
            opts.keep_empty,
            progress.clone(),
        )?;
        let mut block = Block::default();
        while reader.next_block(&mut block)? {
            f.insert_block(&block, reader.name())?;
        }
        progress.finish();
        let fp = f.expected_false_pos();
        worst = worst.max(fp);
        note!(
            "{}: ~{d:.0} distinct lines, filter of {} bits ({:.2} bits/line): a line missing \
             from it passes with probability {fp:.3e}",
            path.display(),
            f.memory_bits(),
            f.memory_bits() as f64 / d.max(1.0)
        );
        filters.push(f);
    }
    note!(
        "approximate: {} buys a false-positive rate of at most {worst:.3e} per line of {} \
         that is missing from another file (use --exact for an exact answer)",
        match args.fp {
            Some(p) => format!("--fp {p} ({:.1} MB of filters)", needed as f64 / 1e6),
            None => format!("--memory {:.1} MB", args.memory as f64 / 1e6),
        },
        stream_path.display()
    );
    let size = Source::File(stream_path.clone()).size()?;
    let progress = Progress::bytes(&format!("streaming {}", stream_path.display()), size);
    let mut reader = BlockStream::open(
        &Source::File(stream_path),
        opts.keep_empty,
        progress.clone(),
    )?;
    let mut block = Block::default();
    let mut printed = 0u64;
    while reader.next_block(&mut block)? {
        let hashes = hash_block(&block, args.seed);
        let mut pass = vec![false; hashes.len()];
        pass.par_chunks_mut(8192)
            .zip(hashes.par_chunks(8192))
            .for_each(|(p, h)| {
                // The first filter by the pipelined batch probe, the others on its hits.
                filters[0].contains_hashes(h, p);
                for (x, &h) in p.iter_mut().zip(h) {
                    if *x {
                        *x = filters[1..].iter().all(|f| f.contains_hash(h));
                    }
                }
            });
        for (i, &ok) in pass.iter().enumerate() {
            if ok {
                printed += 1;
                out.write_all(block.key(i))
                    .and_then(|()| out.write_all(b"\n"))
                    .map_err(out_err)?;
            }
        }
    }
    progress.finish();
    note!("{printed} lines printed");
    Ok(())
}

/// The partition of `hash` at `depth` (0: the first level): salted per depth so that a
/// partition split again spreads over every sub-partition.
#[inline]
fn partition_of(hash: u64, depth: u32, parts: usize) -> usize {
    let salt = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(u64::from(depth) + 1);
    fast_range64(mix64(hash ^ salt), parts as u64) as usize
}

/// Bytes the pass-3 set needs per line beyond the line's bytes: a 16-byte entry, a state
/// byte and at most 16 bytes of slots (a power-of-two table at most half full of u32).
const SET_BYTES_PER_LINE: u64 = 33;
/// Bytes a record adds to its line in a partition file.
const RECORD_OVERHEAD: u64 = 5;
/// The largest set pass 3 aims for, whatever the budget (cache-friendly probes).
const SET_TARGET: u64 = 8 << 20;
/// Deepest re-split.
const MAX_DEPTH: u32 = 6;
/// The pass-3 workers' read and re-split write buffers, all workers together.
const PASS3_BUFFERS: usize = 32 << 20;
/// Most pass-3 workers (each has at least `PASS3_BUFFERS / PASS3_MAX_WORKERS` = 2 MiB of
/// buffers, enough for a re-split into 256 files of 4 KiB buffers and a read buffer).
const PASS3_MAX_WORKERS: usize = 16;
/// Test hook: temporary writes fail with "no space left on device" once this many bytes
/// have been written (exercises the "temp dir full" path without filling a disk).
const FAULT_TEMP_FULL_AFTER: &str = "BLOOMFORGE_FAULT_TEMP_FULL_AFTER";

/// How pass 3 shares its buffers: `workers` threads, each reading a partition through a
/// `reader_buf`-byte buffer and re-splitting through writers of `writer_buf` bytes in
/// all. `workers * (reader_buf + writer_buf) <= PASS3_BUFFERS` at any thread count: with
/// few threads a worker gets the full 1 MiB + 4 MiB, with many the buffers shrink and
/// from [`PASS3_MAX_WORKERS`] threads on the workers are capped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pass3Plan {
    workers: usize,
    reader_buf: usize,
    writer_buf: usize,
}

impl Pass3Plan {
    fn new(threads: usize) -> Self {
        let workers = threads.clamp(1, PASS3_MAX_WORKERS);
        let per = PASS3_BUFFERS / workers;
        let reader_buf = (per / 5).clamp(64 << 10, 1 << 20);
        let writer_buf = (per - reader_buf).min(4 << 20);
        Pass3Plan {
            workers,
            reader_buf,
            writer_buf,
        }
    }
}

/// A partition file and what it holds of the smallest file (what its set will need).
struct Part {
    path: PathBuf,
    first_bytes: u64,
    first_lines: u64,
    bytes: u64,
    /// Re-splitting did not shrink it (one line repeated): load it as it is.
    no_split: bool,
}

impl Part {
    fn need(&self) -> u64 {
        self.first_bytes + self.first_lines * SET_BYTES_PER_LINE
    }
}

/// Temp-space accounting and the disk-full message (shared by the pass-3 workers).
struct Temp {
    dir: TempDir,
    /// [`FAULT_TEMP_FULL_AFTER`], if set.
    fault_after: Option<u64>,
    live: AtomicU64,
    peak: AtomicU64,
    written: AtomicU64,
    needed_estimate: u64,
    resplits: AtomicU64,
    largest_set: AtomicU64,
}

impl Temp {
    fn write_err(&self, path: &Path, e: std::io::Error) -> CliError {
        if is_disk_full(&e) {
            CliError::TempFull {
                needed: self.needed_estimate,
                dir: self
                    .dir
                    .path()
                    .parent()
                    .unwrap_or(self.dir.path())
                    .display()
                    .to_string(),
            }
        } else {
            CliError::io(path, e)
        }
    }

    fn add(&self, bytes: u64) {
        let live = self.live.fetch_add(bytes, Relaxed) + bytes;
        self.written.fetch_add(bytes, Relaxed);
        self.peak.fetch_max(live, Relaxed);
    }

    fn remove(&self, part: &Part) {
        let _ = std::fs::remove_file(&part.path);
        self.live.fetch_sub(part.bytes, Relaxed);
    }
}

/// Buffered writers of a set of partition files.
struct Writers {
    parts: Vec<Part>,
    writers: Vec<BufWriter<File>>,
    /// Bytes written but not yet added to the shared count.
    pending: u64,
}

impl Writers {
    /// `total_buffer`: the writers' buffers in all (at least 4 KiB each: give at least
    /// `4 KiB * n`).
    fn create(temp: &Temp, prefix: &str, n: usize, total_buffer: usize) -> Result<Self> {
        let buf = (total_buffer / n).clamp(4 << 10, 256 << 10);
        let mut parts = Vec::with_capacity(n);
        let mut writers = Vec::with_capacity(n);
        for i in 0..n {
            let path = temp.dir.path().join(format!("{prefix}-{i}"));
            let f = File::create(&path).map_err(|e| temp.write_err(&path, e))?;
            writers.push(BufWriter::with_capacity(buf, f));
            parts.push(Part {
                path,
                first_bytes: 0,
                first_lines: 0,
                bytes: 0,
                no_split: false,
            });
        }
        Ok(Writers {
            parts,
            writers,
            pending: 0,
        })
    }

    #[inline]
    fn write(&mut self, temp: &Temp, p: usize, tag: u8, line: &[u8]) -> Result<()> {
        let len = u32::try_from(line.len()).map_err(|_| "line longer than 4 GiB")?;
        let n = line.len() as u64 + RECORD_OVERHEAD;
        if let Some(limit) = temp.fault_after {
            if temp.written.load(Relaxed) + self.pending + n > limit {
                let e = std::io::Error::from_raw_os_error(28);
                return Err(temp.write_err(&self.parts[p].path, e));
            }
        }
        let w = &mut self.writers[p];
        let r = w
            .write_all(&len.to_le_bytes())
            .and_then(|()| w.write_all(&[tag]))
            .and_then(|()| w.write_all(line));
        if let Err(e) = r {
            return Err(temp.write_err(&self.parts[p].path, e));
        }
        let part = &mut self.parts[p];
        part.bytes += n;
        if tag == 0 {
            part.first_bytes += line.len() as u64;
            part.first_lines += 1;
        }
        self.pending += n;
        if self.pending >= 1 << 20 {
            temp.add(std::mem::take(&mut self.pending));
        }
        Ok(())
    }

    fn finish(self, temp: &Temp) -> Result<Vec<Part>> {
        temp.add(self.pending);
        for (w, part) in self.writers.into_iter().zip(&self.parts) {
            let f = w
                .into_inner()
                .map_err(|e| temp.write_err(&part.path, e.into_error()))?;
            drop(f);
        }
        Ok(self.parts)
    }
}

/// Reads the records of a partition file.
struct Records {
    r: BufReader<File>,
    path: PathBuf,
}

impl Records {
    fn open(path: &Path, buffer: usize) -> Result<Self> {
        let f = File::open(path).map_err(|e| CliError::io(path, e))?;
        Ok(Records {
            r: BufReader::with_capacity(buffer, f),
            path: path.to_path_buf(),
        })
    }

    /// The next record into `line`: its tag, or `None` at the end.
    fn next(&mut self, line: &mut Vec<u8>) -> Result<Option<u8>> {
        let mut head = [0u8; 5];
        match self.r.read_exact(&mut head[..1]) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(CliError::io(&self.path, e)),
        }
        self.r
            .read_exact(&mut head[1..])
            .map_err(|e| CliError::io(&self.path, e))?;
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        line.resize(len, 0);
        self.r
            .read_exact(line)
            .map_err(|e| CliError::io(&self.path, e))?;
        Ok(Some(head[4]))
    }
}

fn exact(args: &Args, mut files: Vec<(PathBuf, u64)>, out: &mut (dyn Write + Send)) -> Result<()> {
    let opts = args.key_options;
    let n = files.len();
    // Smallest first (stable: ties keep the command-line order).
    files.sort_by_key(|(_, s)| *s);
    let (first, first_size) = files[0].clone();
    let budget = args.memory.max(1 << 16);

    // Sample the first block for the line length: the filter's k and P need the line count.
    let mut reader = LineReader::open(
        &Source::File(first.clone()),
        opts.keep_empty,
        Progress::hidden(),
    )?;
    let mut block = Block::default();
    let avg_line = if reader.next_block(&mut block)? {
        // Bytes per key, terminators and skipped empty lines included.
        (block.data_len() as f64 / block.len() as f64).max(1.0)
    } else {
        64.0
    };
    drop(reader);
    let est_lines = (first_size as f64 / avg_line).max(1.0);
    // The filter: the budget, but no more than 24 bits per line.
    let bits = (budget * 8).min((est_lines * 24.0) as u64);
    let mut filter = AnyFilter::Blocked(new_blocked(bits, est_lines, args.seed)?);
    let need_total = first_size + (est_lines * SET_BYTES_PER_LINE as f64) as u64;
    // Pass 3 runs one set per worker thread, each within its share of the budget, and
    // sets of at most SET_TARGET bytes (probes then mostly hit the cache).
    let plan = Pass3Plan::new(rayon::current_num_threads());
    // At most 3 GiB a set: arena offsets are 32-bit.
    let task_budget = (budget / plan.workers as u64).clamp(1 << 16, 3 << 30);
    let parts_n = args
        .partitions
        .unwrap_or_else(|| {
            let per = task_budget.min(SET_TARGET) as f64;
            (need_total as f64 * 1.25 / per).ceil() as usize
        })
        .clamp(1, 256);
    let temp_estimate = (first_size + est_lines as u64 * RECORD_OVERHEAD) * n as u64;
    let temp = Temp {
        dir: TempDir::new(args.temp_dir.as_deref())?,
        fault_after: std::env::var(FAULT_TEMP_FULL_AFTER)
            .ok()
            .and_then(|v| v.parse().ok()),
        live: AtomicU64::new(0),
        peak: AtomicU64::new(0),
        written: AtomicU64::new(0),
        needed_estimate: temp_estimate,
        resplits: AtomicU64::new(0),
        largest_set: AtomicU64::new(0),
    };
    let verbose = crate::verbose();
    let started = std::time::Instant::now();
    if verbose {
        eprintln!(
            "common --exact: {n} files; {} ({first_size} bytes, ~{est_lines:.0} lines) is \
             partitioned into {parts_n} partitions, filter of {} bits; budget {budget} bytes; \
             pass 3: {} workers, {} bytes of buffers each",
            first.display(),
            filter.memory_bits(),
            plan.workers,
            plan.reader_buf + plan.writer_buf
        );
    }

    // Passes 1 and 2.
    let mut writers = Writers::create(&temp, "p", parts_n, 16 << 20)?;
    for (tag, (path, size)) in files.iter().enumerate() {
        let progress = Progress::bytes(&format!("partitioning {}", path.display()), Some(*size));
        let mut reader = BlockStream::open(
            &Source::File(path.clone()),
            opts.keep_empty,
            progress.clone(),
        )?;
        let (mut lines, mut kept) = (0u64, 0u64);
        while reader.next_block(&mut block)? {
            let hashes = hash_block(&block, args.seed);
            lines += hashes.len() as u64;
            if tag == 0 {
                filter
                    .insert_hashes(&hashes)
                    .map_err(|(_, e)| CliError::at(path.display(), e))?;
                for (i, &h) in hashes.iter().enumerate() {
                    writers.write(&temp, partition_of(h, 0, parts_n), 0, block.key(i))?;
                }
                kept += hashes.len() as u64;
            } else {
                let mut hit = vec![false; hashes.len()];
                hit.par_chunks_mut(8192)
                    .zip(hashes.par_chunks(8192))
                    .for_each(|(o, h)| {
                        for (x, &h) in o.iter_mut().zip(h) {
                            *x = filter.contains_hash(h);
                        }
                    });
                for (i, &h) in hashes.iter().enumerate() {
                    if hit[i] {
                        kept += 1;
                        writers.write(
                            &temp,
                            partition_of(h, 0, parts_n),
                            tag as u8,
                            block.key(i),
                        )?;
                    }
                }
            }
        }
        progress.finish();
        if verbose {
            eprintln!(
                "pass {} ({:.2} s): {}: {lines} lines, {kept} written to the partitions ({:.1} % dropped by the filter)",
                if tag == 0 { 1 } else { 2 },
                started.elapsed().as_secs_f64(),
                path.display(),
                if lines == 0 { 0.0 } else { 100.0 * (lines - kept) as f64 / lines as f64 }
            );
        }
    }
    let parts = writers.finish(&temp)?;
    if verbose {
        eprintln!(
            "temp bytes after passes 1-2: {}",
            temp.written.load(Relaxed)
        );
    }
    drop(filter);
    drop(block);

    // Pass 3: partitions in parallel, each worker with its share of the budget.
    let ctx = Pass3 {
        budget: task_budget,
        plan,
        n,
        seed: args.seed,
        temp: &temp,
        out: Mutex::new(out),
        error: Mutex::new(None),
        common: AtomicU64::new(0),
        progress: Progress::bytes("intersecting", Some(temp.live.load(Relaxed))),
    };
    let pass3 = || {
        rayon::scope(|s| {
            for part in parts {
                let ctx = &ctx;
                s.spawn(move |s| ctx.process(s, part, 0));
            }
        })
    };
    if plan.workers < rayon::current_num_threads() {
        rayon::ThreadPoolBuilder::new()
            .num_threads(plan.workers)
            .thread_name(|i| format!("bloomforge-pass3-{i}"))
            .build()
            .map_err(|e| CliError::Msg(format!("cannot start the pass-3 workers: {e}")))?
            .install(pass3);
    } else {
        pass3();
    }
    ctx.progress.finish();
    if let Some(e) = ctx.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let common = ctx.common.load(Relaxed);
    if verbose {
        eprintln!(
            "partitions: {parts_n}, re-splits: {}, temp bytes written: {}, peak temp space: {}, \
             largest set: {} bytes, common lines: {common} ({:.2} s){}",
            temp.resplits.load(Relaxed),
            temp.written.load(Relaxed),
            temp.peak.load(Relaxed),
            temp.largest_set.load(Relaxed),
            started.elapsed().as_secs_f64(),
            match peak_rss() {
                Some(b) => format!(", peak RSS: {b} bytes"),
                None => String::new(),
            }
        );
    }
    note!("{common} common lines");
    Ok(())
}

/// The peak resident set of this process (`VmHWM`; Linux only).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// What the pass-3 workers share.
struct Pass3<'a, 'w> {
    /// Memory for one worker's set.
    budget: u64,
    /// Its buffers.
    plan: Pass3Plan,
    n: usize,
    seed: u64,
    temp: &'a Temp,
    out: Mutex<&'w mut (dyn Write + Send)>,
    /// The first error; the other workers stop at their next partition.
    error: Mutex<Option<CliError>>,
    common: AtomicU64,
    progress: Progress,
}

impl Pass3<'_, '_> {
    fn process<'s>(&'s self, scope: &rayon::Scope<'s>, part: Part, depth: u32) {
        if self.error.lock().map(|e| e.is_some()).unwrap_or(true) {
            self.temp.remove(&part);
            return;
        }
        let r = if part.need() > self.budget
            && depth < MAX_DEPTH
            && !part.no_split
            && part.first_lines > 1
        {
            resplit(&part, depth + 1, self.budget, self.plan, self.temp).map(|subs| {
                for sub in subs {
                    scope.spawn(move |s| self.process(s, sub, depth + 1));
                }
            })
        } else {
            intersect(&part, self, self.n, self.seed).map(|c| {
                self.common.fetch_add(c, Relaxed);
                self.progress.inc(part.bytes);
            })
        };
        self.temp.remove(&part);
        if let Err(e) = r {
            if let Ok(mut slot) = self.error.lock() {
                slot.get_or_insert(e);
            }
        }
    }
}

/// Splits `part` into sub-partitions by the hash bits of `depth`.
fn resplit(
    part: &Part,
    depth: u32,
    budget: u64,
    plan: Pass3Plan,
    temp: &Temp,
) -> Result<Vec<Part>> {
    let q = ((part.need() as f64 * 1.25 / budget as f64).ceil() as usize).clamp(2, 256);
    temp.resplits.fetch_add(1, Relaxed);
    if crate::verbose() {
        eprintln!(
            "re-split {} (its set needs {} bytes, over the budget of {budget}) into {q}",
            part.path.file_name().unwrap_or_default().to_string_lossy(),
            part.need()
        );
    }
    let prefix = format!(
        "{}-{depth}",
        part.path.file_name().unwrap_or_default().to_string_lossy()
    );
    let mut writers = Writers::create(temp, &prefix, q, plan.writer_buf)?;
    let mut records = Records::open(&part.path, plan.reader_buf)?;
    let h = hasher(0x7e51_0000 ^ u64::from(depth));
    let mut line = Vec::new();
    while let Some(tag) = records.next(&mut line)? {
        let p = partition_of(h.hash_one(line.as_slice()), depth, q);
        writers.write(temp, p, tag, &line)?;
    }
    let mut subs = writers.finish(temp)?;
    for s in &mut subs {
        // Nothing gained: one line repeated (its set holds it once). Load it whole.
        if s.first_lines * 20 >= part.first_lines * 19 {
            s.no_split = true;
        }
    }
    Ok(subs)
}

/// A set of distinct lines in an arena: open addressing over u32 entry indices.
struct LineSet {
    arena: Vec<u8>,
    /// (hash, offset, len) of each distinct line.
    entries: Vec<(u64, u32, u32)>,
    /// How many files (in order) each line was seen in.
    seen: Vec<u8>,
    /// Entry index + 1, 0 = empty.
    slots: Vec<u32>,
    mask: usize,
}

impl LineSet {
    fn with_capacity(lines: u64, bytes: u64) -> Result<Self> {
        let lines = usize::try_from(lines).map_err(|_| "partition too large")?;
        let slots = (lines.max(4) * 2).next_power_of_two();
        if lines >= u32::MAX as usize || bytes >= u32::MAX as u64 {
            return Err("a partition's lines exceed 4 GiB: give --memory a smaller value or more temp space".into());
        }
        Ok(LineSet {
            arena: Vec::with_capacity(bytes as usize),
            entries: Vec::with_capacity(lines),
            seen: Vec::with_capacity(lines),
            slots: vec![0; slots],
            mask: slots - 1,
        })
    }

    fn bytes(&self) -> u64 {
        (self.arena.capacity()
            + self.entries.capacity() * 16
            + self.seen.capacity()
            + self.slots.len() * 4) as u64
    }

    /// The entry holding `line`, if any.
    #[inline]
    fn find(&self, hash: u64, line: &[u8]) -> Result<usize, usize> {
        let mut i = (mix64(hash) as usize) & self.mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return Err(i);
            }
            let e = (s - 1) as usize;
            let (h, off, len) = self.entries[e];
            if h == hash && &self.arena[off as usize..(off + len) as usize] == line {
                return Ok(e);
            }
            i = (i + 1) & self.mask;
        }
    }

    fn insert(&mut self, hash: u64, line: &[u8]) -> Result<()> {
        if let Err(slot) = self.find(hash, line) {
            if self.arena.len() + line.len() > u32::MAX as usize {
                return Err("a partition's distinct lines exceed 4 GiB".into());
            }
            let off = self.arena.len() as u32;
            self.arena.extend_from_slice(line);
            self.entries.push((hash, off, line.len() as u32));
            self.seen.push(1);
            self.slots[slot] = self.entries.len() as u32;
            if self.entries.len() * 2 > self.slots.len() {
                self.grow();
            }
        }
        Ok(())
    }

    /// Doubles the slot table (only when the reservation was capped: see `intersect`).
    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        self.slots = vec![0; n];
        self.mask = n - 1;
        for (e, &(h, _, _)) in self.entries.iter().enumerate() {
            let mut i = (mix64(h) as usize) & self.mask;
            while self.slots[i] != 0 {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = e as u32 + 1;
        }
    }
}

/// The common lines of one partition, printed; returns how many.
fn intersect(part: &Part, ctx: &Pass3<'_, '_>, n: usize, seed: u64) -> Result<u64> {
    let (budget, out, temp) = (ctx.budget, &ctx.out, ctx.temp);
    // Reserve for every record of the smallest file, but never past the budget: a
    // partition that re-splitting could not shrink is one line repeated, and its set
    // holds each distinct line once (it grows if needed).
    let mut set = LineSet::with_capacity(
        part.first_lines.min(budget / 2 / SET_BYTES_PER_LINE),
        part.first_bytes.min(budget / 2),
    )?;
    temp.largest_set.fetch_max(set.bytes(), Relaxed);
    let h = hasher(seed ^ 0x5e7);
    let mut records = Records::open(&part.path, ctx.plan.reader_buf)?;
    let mut line = Vec::new();
    while let Some(tag) = records.next(&mut line)? {
        let hash = h.hash_one(line.as_slice());
        if tag == 0 {
            set.insert(hash, &line)?;
        } else if let Ok(e) = set.find(hash, &line) {
            // Lines of file `tag` follow those of every earlier file: a line seen in
            // all `tag` earlier files moves to `tag + 1`; repeats within a file do not.
            if set.seen[e] == tag {
                set.seen[e] = tag + 1;
            }
        }
    }
    let mut count = 0;
    let mut out = out.lock().map_err(|_| "output lock poisoned")?;
    for (e, &(_, off, len)) in set.entries.iter().enumerate() {
        if usize::from(set.seen[e]) == n {
            count += 1;
            out.write_all(&set.arena[off as usize..(off + len) as usize])
                .and_then(|()| out.write_all(b"\n"))
                .map_err(out_err)?;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass3_buffers_are_bounded_at_any_thread_count() {
        for threads in (1..=64).chain([100, 256, 1000, 4096]) {
            let p = Pass3Plan::new(threads);
            assert!(p.workers >= 1 && p.workers <= threads.min(PASS3_MAX_WORKERS));
            // A re-split writes to at most 256 files of at least 4 KiB each.
            assert!(p.writer_buf >= 256 * (4 << 10), "{threads}: {p:?}");
            assert!(p.reader_buf >= 64 << 10);
            assert!(
                p.workers * (p.reader_buf + p.writer_buf) <= PASS3_BUFFERS,
                "{threads}: {p:?}"
            );
        }
        // Few threads: the full buffers (1 MiB read, 4 MiB of re-split writers).
        assert_eq!(
            Pass3Plan::new(2),
            Pass3Plan {
                workers: 2,
                reader_buf: 1 << 20,
                writer_buf: 4 << 20
            }
        );
    }

    #[test]
    fn fp_range_is_checked() {
        assert_eq!(parse_fp("0.01"), Ok(0.01));
        for bad in ["0", "1", "-0.1", "1.5", "nan", "x", "inf"] {
            assert!(parse_fp(bad).is_err(), "{bad}");
        }
    }
}
