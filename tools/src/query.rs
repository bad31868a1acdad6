//! `query`: streams keys through a filter and prints the ones that may be present (or,
//! `--absent`, the ones that surely are not), exactly as read (raw bytes, line terminator
//! removed), one per line, in input order. Keys are hashed and probed in parallel: a
//! regular file window by window from its memory map (each window cut into pieces that
//! threads split, hash, probe and format; printed in order), a pipe block by block.
//! Memory: the filter plus two windows and their output (see `mapped`), or two input
//! blocks (see `input::BlockStream`). Blocked
//! and split-block filters are queried in place from the memory-mapped file (core's
//! zero-copy views: no second copy of the filter); the other kinds are loaded, which holds
//! the file's bytes and the decoded filter at once (2x the filter, briefly).

use crate::error::{CliError, Result};
use crate::filter::AnyFilter;
use crate::input::{Block, BlockStream, KeyOptions, Source};
use crate::mapped::{MappedInput, Window, Workers};
use crate::progress::{note, Progress};
use bloomforge_core::format::{FilterKind, Header};
use bloomforge_core::{BlockedBloomFilterView, SplitBlockBloomFilterView};
use rayon::prelude::*;
use std::ffi::OsString;
use std::hash::BuildHasher;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Print the keys that may be in a filter (`--absent`: the keys that surely are not).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  bloomforge query seen.bloom today.txt > maybe-seen.txt\n  \
    bloomforge query a.bloom b.txt --absent     # what B has that A lacks\n  \
    bloomforge query counts.bloom keys.txt --count\n  \
    bloomforge query exported-from-spark.bin ids.txt --key-type long"
)]
pub(crate) struct Args {
    /// The filter, then key files (`-` or none: stdin).
    #[arg(value_name = "FILTER [KEYS]", required_unless_present = "filter")]
    args: Vec<OsString>,
    /// Old spelling of FILTER.
    #[arg(long, hide = true)]
    filter: Option<PathBuf>,
    /// Old spelling of a KEYS file.
    #[arg(long = "keys", hide = true, value_name = "FILE")]
    keys_opt: Vec<OsString>,
    /// Print the keys that are surely absent instead.
    #[arg(long)]
    absent: bool,
    /// Print every key as `key<TAB>count` (counting and d-left filters): the count
    /// estimate, an upper bound of inserts minus removes, or `N+` for a saturated counter.
    #[arg(long)]
    count: bool,
    /// The filter file's format (default: recognised from its first bytes: bloomforge,
    /// Guava or Spark).
    #[arg(long, value_enum)]
    format: Option<crate::foreign::Format>,
    /// Guava and Spark filters: how lines are funnelled (`string`: their bytes; `long`:
    /// decimal 64-bit integers, as Guava's longFunnel / Spark's putLong).
    #[arg(long, value_enum, default_value = "string")]
    key_type: crate::foreign::KeyType,
    #[command(flatten)]
    key_options: KeyOptions,
}

/// Splits `args` into the filter path and the key sources, honouring the old `--filter`
/// and `--keys` spellings.
pub(crate) fn filter_and_keys(
    args: &[OsString],
    filter: Option<&PathBuf>,
    keys_opt: &[OsString],
) -> Result<(PathBuf, Vec<Source>)> {
    let (path, rest) = match filter {
        Some(f) => (f.clone(), args),
        None => match args.split_first() {
            Some((f, rest)) => (PathBuf::from(f), rest),
            None => return Err("missing the FILTER argument".into()),
        },
    };
    let mut names = rest.to_vec();
    names.extend(keys_opt.iter().cloned());
    Ok((path, Source::list(&names)))
}

/// A filter to probe: loaded, or a view of the mapped file.
enum Probe<'a> {
    Loaded(AnyFilter),
    Blocked(BlockedBloomFilterView<'a>),
    Split(SplitBlockBloomFilterView<'a>),
}

impl Probe<'_> {
    fn contains_block(&self, block: &Block) -> Vec<bool> {
        match self {
            Probe::Loaded(f) => f.contains_block(block),
            Probe::Blocked(v) => view_block(
                block,
                |k| v.hasher().hash_one(k),
                |h, o| v.contains_hash_batch(h, o).is_ok(),
            ),
            Probe::Split(v) => view_block(
                block,
                |k| v.hasher().hash_one(k),
                |h, o| v.contains_hash_batch(h, o).is_ok(),
            ),
        }
    }
}

impl Probe<'_> {
    /// The key's hash, by the filter's own hasher.
    fn hash(&self, key: &[u8]) -> u64 {
        match self {
            Probe::Loaded(f) => f.hash(key),
            Probe::Blocked(v) => v.hasher().hash_one(key),
            Probe::Split(v) => v.hasher().hash_one(key),
        }
    }

    /// The pipelined batch query of `hashes` into `out` (equal lengths).
    fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        let ok = match self {
            Probe::Loaded(f) => {
                f.contains_hashes(hashes, out);
                true
            }
            Probe::Blocked(v) => v.contains_hash_batch(hashes, out).is_ok(),
            Probe::Split(v) => v.contains_hash_batch(hashes, out).is_ok(),
        };
        debug_assert!(ok, "equal lengths");
    }
}

/// What one piece of a memory-mapped window prints, and its key counts.
struct PieceOutput {
    lines: Vec<u8>,
    keys: u64,
    present: u64,
}

/// Queries the keys of `piece` (whole lines of a window) and formats the lines `args`
/// shows, in order: the per-thread half of [`run_with`]'s loop for mapped files.
fn query_piece(args: &Args, probe: &Probe<'_>, piece: &[u8]) -> PieceOutput {
    let mut keys: Vec<&[u8]> = Vec::with_capacity(piece.len() / 32 + 16);
    Window::for_each_key(piece, args.key_options.keep_empty, |k| keys.push(k));
    let hashes: Vec<u64> = keys.iter().map(|k| probe.hash(k)).collect();
    let mut hits = vec![false; keys.len()];
    probe.contains_hashes(&hashes, &mut hits);
    let mut out = PieceOutput {
        lines: Vec::new(),
        keys: keys.len() as u64,
        present: 0,
    };
    for (key, &hit) in keys.iter().zip(&hits) {
        out.present += u64::from(hit);
        push_shown(args, probe, key, hit, &mut out.lines);
    }
    out
}

/// Appends `key`'s output line to `lines` if `args` shows it: present keys (absent ones
/// with `--absent`), every key with `--count` (then `key<TAB>count`: a second lookup, made
/// only when asked for).
#[inline]
fn push_shown(args: &Args, probe: &Probe<'_>, key: &[u8], hit: bool, lines: &mut Vec<u8>) {
    let shown = if args.absent { !hit } else { hit || args.count };
    if !shown {
        return;
    }
    lines.extend_from_slice(key);
    if let (true, Probe::Loaded(filter)) = (args.count, probe) {
        let c = filter.count(key).unwrap_or_default();
        lines.push(b'\t');
        lines.extend_from_slice(c.as_bytes());
    }
    lines.push(b'\n');
}

/// `contains` of a block's keys through a view, in parallel chunks.
fn view_block(
    block: &Block,
    hash: impl Fn(&[u8]) -> u64 + Sync,
    probe: impl Fn(&[u64], &mut [bool]) -> bool + Sync,
) -> Vec<bool> {
    let mut hits = vec![false; block.len()];
    hits.par_chunks_mut(8192)
        .zip(block.spans().par_chunks(8192))
        .for_each(|(out, spans)| {
            let hashes: Vec<u64> = spans.iter().map(|&s| hash(block.span(s))).collect();
            let ok = probe(&hashes, out);
            debug_assert!(ok, "equal lengths");
        });
    hits
}

/// Maps `path` if it holds a blocked or split-block filter (`None`: load it instead).
fn map_plain(path: &std::path::Path) -> Result<Option<memmap2::Mmap>> {
    let file = std::fs::File::open(path).map_err(|e| CliError::io(path, e))?;
    let meta = file.metadata().map_err(|e| CliError::io(path, e))?;
    if !meta.is_file() || meta.len() < bloomforge_core::format::HEADER_LEN as u64 {
        return Ok(None);
    }
    // SAFETY: the map is read-only and private to this process; the views only read it.
    // Another process truncating or rewriting the file while it is queried could change
    // or unmap the bytes under us, as for any mapped file: filters are replaced by
    // rename (`output::write_file`), which leaves this mapping on the old file intact.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| CliError::io(path, e))?;
    Ok(match Header::parse(&map) {
        Ok(h) if matches!(h.kind, FilterKind::Blocked512 | FilterKind::SplitBlock256) => Some(map),
        _ => None,
    })
}

/// Runs `query`.
pub(crate) fn run(args: Args) -> Result<()> {
    let (path, sources) = filter_and_keys(&args.args, args.filter.as_ref(), &args.keys_opt)?;
    let foreign = match args.format {
        Some(f) => f.foreign(),
        None => crate::foreign::detect(&path)?,
    };
    if let Some(format) = foreign {
        if args.count {
            return Err(CliError::at(
                path.display(),
                format!(
                    "--count needs a counting or d-left filter; a {format} filter keeps no counts"
                ),
            ));
        }
        let filter = crate::foreign::read(&path, Some(format))?;
        return crate::foreign::query(
            &filter,
            &sources,
            args.absent,
            args.key_type,
            args.key_options.keep_empty,
        );
    }
    let map = if args.count { None } else { map_plain(&path)? };
    let probe = match &map {
        Some(bytes) => {
            let e = |e: bloomforge_core::Error| CliError::at(path.display(), e);
            match Header::parse(bytes).map_err(e)?.kind {
                FilterKind::Blocked512 => {
                    Probe::Blocked(BlockedBloomFilterView::from_bytes(bytes).map_err(e)?)
                }
                _ => Probe::Split(SplitBlockBloomFilterView::from_bytes(bytes).map_err(e)?),
            }
        }
        None => Probe::Loaded(AnyFilter::read(&path)?),
    };
    run_with(&args, &path, &probe, &sources)
}

fn run_with(
    args: &Args,
    path: &std::path::Path,
    probe: &Probe<'_>,
    sources: &[Source],
) -> Result<()> {
    if let (true, Probe::Loaded(filter)) = (args.count, probe) {
        if !filter.is_counting() {
            return Err(CliError::at(
                path.display(),
                format!(
                    "--count needs a counting or d-left filter; a {} Bloom filter keeps no counts",
                    filter.name()
                ),
            ));
        }
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    let (mut total, mut present) = (0u64, 0u64);
    let werr = |e: std::io::Error| CliError::io("stdout", e);
    for source in sources {
        let progress = Progress::bytes(&format!("querying {}", source.name()), source.size()?);
        // A regular file is mapped; each window's pieces are hashed, probed and formatted
        // on every thread, then printed in order.
        let keep_empty = args.key_options.keep_empty;
        if let Some(mut mapped) = MappedInput::open(source, keep_empty, progress.clone())? {
            mapped.for_each_window(
                Workers::Global,
                |piece| query_piece(args, probe, piece),
                |_, outputs| {
                    let mut keys = 0;
                    for piece in outputs {
                        keys += piece.keys;
                        present += piece.present;
                        out.write_all(&piece.lines).map_err(werr)?;
                    }
                    total += keys;
                    progress.inc_keys(keys);
                    Ok(keys as usize)
                },
            )?;
            progress.finish();
            continue;
        }
        let mut reader = BlockStream::open(source, args.key_options.keep_empty, progress.clone())?;
        let mut block = Block::default();
        let mut lines = Vec::new();
        while reader.next_block(&mut block)? {
            let hits = probe.contains_block(&block);
            total += hits.len() as u64;
            lines.clear();
            for (i, &hit) in hits.iter().enumerate() {
                present += u64::from(hit);
                push_shown(args, probe, block.key(i), hit, &mut lines);
            }
            out.write_all(&lines).map_err(werr)?;
        }
        progress.finish();
    }
    out.flush().map_err(werr)?;
    note!("{present} of {total} keys may be present");
    Ok(())
}
