//! Filters of every kind behind one enum: construction from `--kind`, parallel inserts,
//! reading and writing files, the remove, union and stats used by the commands.

use crate::error::{CliError, Result as CliResult};
use crate::input::Block;
use crate::mapped::{MappedInput, Window, Workers};
use crate::progress::Progress;
use crate::stats::Stat;
use bloomforge_core::format::{FilterKind, Header};
use bloomforge_core::{
    AtomicStandardBloomFilter, BlockedBloomFilter, DefaultHasher, RemoveOutcome,
    SplitBlockBloomFilter, StandardBloomFilter,
};
use bloomforge_counting::{CounterLayout, CountingBloomFilter, CountingError};
use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};
use bloomforge_stream::{ScalableBloomFilter, SliceLayout, StableBloomFilter, StreamError};
use rayon::prelude::*;
use std::hash::BuildHasher;
use std::io::Write;
use std::path::Path;

/// Keys per parallel task when hashing a block.
const CHUNK: usize = 8192;

/// The hashes of a piece's keys (a mapped walk's task).
fn hash_piece(piece: &[u8], keep_empty: bool, hasher: &DefaultHasher) -> Vec<u64> {
    // ~65 bytes a line in typical inputs; the vector grows past a guess.
    let mut out = Vec::with_capacity(piece.len() / 32 + 16);
    Window::for_each_key(piece, keep_empty, |k| out.push(hasher.hash_one(k)));
    out
}

/// `--kind`: the filter to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Kind {
    /// Blocked Bloom filter, 512-bit blocks (the fastest; default).
    Blocked,
    /// Split-block Bloom filter (256-bit blocks, 8 probes; Parquet's layout).
    Split,
    /// Classic Bloom filter (k probes anywhere; the smallest for a given FP).
    Standard,
    /// Counting filter, 4-bit counters in the blocked layout (remove, query --count, export).
    Counting,
    /// Counting filter, 4-bit counters in the standard layout.
    CountingStandard,
    /// d-left counting filter (remove, query --count; about half a counting filter's size).
    Dleft,
    /// Scalable Bloom filter: grows as keys arrive, FP stays below --fp (one pass over
    /// the input; --expected is its initial capacity, default 65536).
    Scalable,
    /// Scalable Bloom filter of standard slices: 7-11 % fewer bits than scalable,
    /// slower queries (several cache misses a slice instead of one).
    ScalableStandard,
    /// Stable Bloom filter: fixed memory (--memory, default 64M, or --cells), forgets old
    /// keys so a stream of any length fits; --fp is its rate at the stable point,
    /// --cell-bits its cell width (1..=8, default 3). One pass; no merge.
    Stable,
}

impl Kind {
    /// Whether the kind grows (`--expected` is its initial capacity, not its size).
    pub(crate) fn is_scalable(self) -> bool {
        matches!(self, Kind::Scalable | Kind::ScalableStandard)
    }
}

/// Initial capacity of a scalable filter built without `--expected`.
pub(crate) const SCALABLE_INITIAL: u64 = 1 << 16;

/// Memory of a stable filter built without `--memory` or `--cells` (as `dedup`'s).
pub(crate) const STABLE_MEMORY: u64 = 64 << 20;
/// Cell width of a stable filter built without `--cell-bits` (as `dedup`'s).
pub(crate) const STABLE_CELL_BITS: u32 = 3;

/// How the filter is sized: a target FP, or a number of bits per key (plain kinds).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sizing {
    /// Target false-positive rate at the expected number of keys.
    FalsePos(f64),
    /// Bits per expected key (the number of probes chosen for it).
    BitsPerKey(f64),
}

/// A filter of any kind.
pub(crate) enum AnyFilter {
    /// `blocked`.
    Blocked(BlockedBloomFilter),
    /// `split`.
    Split(SplitBlockBloomFilter),
    /// `standard`.
    Standard(StandardBloomFilter),
    /// Either counter layout (`layout()` tells which).
    Counting(CountingBloomFilter),
    /// Boxed: the d-left filter value is several hundred bytes inline.
    DLeft(Box<DLeftCountingBloomFilter>),
    /// `scalable`.
    Scalable(ScalableBloomFilter),
    /// `stable`.
    Stable(StableBloomFilter),
}

/// The best number of probes for a blocked filter at `bits_per_key` (core's theory).
pub(crate) fn blocked_best_k(bits_per_key: f64) -> u32 {
    bloomforge_core::math::best_k(
        |k| bloomforge_core::math::blocked512_fp(bits_per_key, k),
        24,
    )
    .0
}

/// The d-left table's shape where the user sets it (`build --counter-bits / --cells`);
/// `None` keeps the library's default.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DLeftShape {
    /// Counter bits per cell (1..=8).
    pub(crate) counter_bits: Option<u32>,
    /// Cells per bucket (1..=16).
    pub(crate) cells: Option<u32>,
}

/// A stable filter's size where the user sets it (`build --memory / --cells /
/// --cell-bits`); `None` keeps [`STABLE_MEMORY`] and [`STABLE_CELL_BITS`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StableShape {
    /// Bytes of cells (whole 64-bit words of `64 / d` cells).
    pub(crate) memory: Option<u64>,
    /// Number of cells (instead of `memory`).
    pub(crate) cells: Option<u64>,
    /// Bits per cell (1..=8).
    pub(crate) cell_bits: Option<u32>,
}

impl StableShape {
    /// Whether any of the stable filter's options is set.
    fn is_set(&self) -> bool {
        self.memory.is_some() || self.cells.is_some() || self.cell_bits.is_some()
    }
}

impl AnyFilter {
    /// A new, empty filter of `kind` for `items` keys.
    pub(crate) fn create(
        kind: Kind,
        items: u64,
        sizing: Sizing,
        seed: u64,
        dleft: DLeftShape,
        stable: StableShape,
    ) -> CliResult<Self> {
        let items = items.max(1);
        let e = |e: &dyn std::fmt::Display| CliError::Msg(e.to_string());
        let cells_elsewhere = dleft.cells.is_some() && kind != Kind::Stable;
        if kind != Kind::Dleft && (dleft.counter_bits.is_some() || cells_elsewhere) {
            return Err(
                "--counter-bits and --cells shape d-left filters (--kind dleft; \
                        --cells is also a stable filter's number of cells)"
                    .into(),
            );
        }
        if kind != Kind::Stable && stable.is_set() {
            return Err("--memory and --cell-bits size stable filters (--kind stable)".into());
        }
        if kind == Kind::Stable {
            return Self::create_stable(sizing, seed, stable);
        }
        Ok(match (kind, sizing) {
            (Kind::Blocked, Sizing::FalsePos(p)) => AnyFilter::Blocked(
                BlockedBloomFilter::with_false_pos(p)
                    .seed(seed)
                    .expected_items(items)
                    .map_err(|x| e(&x))?,
            ),
            (Kind::Split, Sizing::FalsePos(p)) => AnyFilter::Split(
                SplitBlockBloomFilter::with_false_pos(p)
                    .seed(seed)
                    .expected_items(items)
                    .map_err(|x| e(&x))?,
            ),
            (Kind::Standard, Sizing::FalsePos(p)) => AnyFilter::Standard(
                StandardBloomFilter::with_false_pos(p)
                    .seed(seed)
                    .expected_items(items)
                    .map_err(|x| e(&x))?,
            ),
            (Kind::Counting, Sizing::FalsePos(p)) => AnyFilter::Counting(
                CountingBloomFilter::with_false_pos(p)
                    .seed(seed)
                    .expected_items(items)
                    .map_err(|x| e(&x))?,
            ),
            (Kind::CountingStandard, Sizing::FalsePos(p)) => AnyFilter::Counting(
                CountingBloomFilter::standard_with_false_pos(p)
                    .seed(seed)
                    .expected_items(items)
                    .map_err(|x| e(&x))?,
            ),
            (Kind::Dleft, Sizing::FalsePos(p)) => {
                let mut b = DLeftCountingBloomFilter::with_false_pos(p).seed(seed);
                if let Some(c) = dleft.counter_bits {
                    b = b.counter_bits(c);
                }
                if let Some(w) = dleft.cells {
                    b = b.cells_per_bucket(w);
                }
                AnyFilter::DLeft(Box::new(b.expected_items(items).map_err(|x| e(&x))?))
            }
            (Kind::Scalable | Kind::ScalableStandard, Sizing::FalsePos(p)) => AnyFilter::Scalable(
                ScalableBloomFilter::builder()
                    .expected_items(items)
                    .false_pos(p)
                    .layout(if kind == Kind::ScalableStandard {
                        SliceLayout::Standard
                    } else {
                        SliceLayout::Blocked
                    })
                    .seed(seed)
                    .build()
                    .map_err(|x| e(&x))?,
            ),
            (kind, Sizing::BitsPerKey(b)) => {
                if !(b.is_finite() && b > 0.0 && b <= 1e6) {
                    return Err("--bits-per-key must be a number above 0".into());
                }
                let bits = (b * items as f64).ceil() as u64;
                match kind {
                    Kind::Blocked => AnyFilter::Blocked(
                        BlockedBloomFilter::with_num_bits(bits)
                            .seed(seed)
                            .hashes(blocked_best_k(b))
                            .map_err(|x| e(&x))?,
                    ),
                    Kind::Split => AnyFilter::Split(
                        SplitBlockBloomFilter::with_num_bits(bits)
                            .seed(seed)
                            .hashes(8)
                            .map_err(|x| e(&x))?,
                    ),
                    Kind::Standard => {
                        let k = bloomforge_core::math::std_best_k(b, 30).0;
                        AnyFilter::Standard(
                            StandardBloomFilter::with_num_bits(bits)
                                .seed(seed)
                                .hashes(k)
                                .map_err(|x| e(&x))?,
                        )
                    }
                    _ => {
                        return Err(
                            "--bits-per-key sizes the plain kinds (blocked, split, standard); \
                             size counting, d-left and scalable filters with --fp"
                                .into(),
                        )
                    }
                }
            }
            (Kind::Stable, _) => unreachable!("stable filters are made by create_stable"),
        })
    }

    /// A stable filter: `--cells` cells, or as many as `--memory` holds (64 / d cells a
    /// 64-bit word; default [`STABLE_MEMORY`]), of `--cell-bits` bits, `k` and `P` from
    /// `--fp` at the stable point (the library's rules, as `dedup`'s filter); hash seed
    /// and generator seed `--seed`.
    fn create_stable(sizing: Sizing, seed: u64, shape: StableShape) -> CliResult<Self> {
        let p = match sizing {
            Sizing::FalsePos(p) => p,
            Sizing::BitsPerKey(_) => {
                return Err(
                    "--bits-per-key does not size a stable filter (its memory is \
                            fixed, the stream unbounded): give --memory or --cells, and --fp"
                        .into(),
                )
            }
        };
        let d = shape.cell_bits.unwrap_or(STABLE_CELL_BITS);
        if !(1..=8).contains(&d) {
            return Err(format!("--cell-bits {d} is not in 1..=8").into());
        }
        let (cells, what) = match (shape.cells, shape.memory) {
            (Some(_), Some(_)) => return Err("give --memory or --cells, not both".into()),
            (Some(c), None) => (c, format!("--cells {c}")),
            (None, m) => {
                let m = m.unwrap_or(STABLE_MEMORY);
                if m < 8 {
                    return Err(format!("--memory {m} holds no 64-bit word of cells").into());
                }
                ((m / 8) * u64::from(64 / d), format!("--memory {m}"))
            }
        };
        let filter = StableBloomFilter::builder()
            .cells(cells)
            .cell_bits(d)
            .false_pos(p)
            .seed(seed)
            .rng_seed(seed)
            .build()
            .map_err(|e| CliError::Msg(format!("{what} / --cell-bits {d} / --fp {p}: {e}")))?;
        Ok(AnyFilter::Stable(filter))
    }

    /// Reads a filter file of any kind; a corrupt or truncated file is an error naming it.
    pub(crate) fn read(path: &Path) -> CliResult<Self> {
        let name = path.display();
        let wrap = |e: bloomforge_core::Error| CliError::at(&name, e);
        // The block filters (the usual large ones) are read straight into their blocks:
        // one read, the filter's own size in memory. The other kinds decode the file's
        // bytes (twice their size while both are held).
        let mut head = Vec::with_capacity(bloomforge_core::format::HEADER_LEN);
        std::fs::File::open(path)
            .and_then(|f| {
                use std::io::Read;
                f.take(bloomforge_core::format::HEADER_LEN as u64)
                    .read_to_end(&mut head)
            })
            .map_err(|e| CliError::io(path, e))?;
        let header = Header::parse(&head).map_err(wrap)?;
        let read = || std::fs::read(path).map_err(|e| CliError::io(path, e));
        Ok(match header.kind {
            FilterKind::Blocked512 => {
                AnyFilter::Blocked(BlockedBloomFilter::read_from_file(path).map_err(wrap)?)
            }
            FilterKind::SplitBlock256 => {
                AnyFilter::Split(SplitBlockBloomFilter::read_from_file(path).map_err(wrap)?)
            }
            FilterKind::Standard => {
                AnyFilter::Standard(StandardBloomFilter::from_bytes(&read()?).map_err(wrap)?)
            }
            FilterKind::CountingBlocked | FilterKind::CountingStandard => AnyFilter::Counting(
                CountingBloomFilter::from_bytes(&read()?).map_err(|e| CliError::at(&name, e))?,
            ),
            FilterKind::DLeft => AnyFilter::DLeft(Box::new(
                DLeftCountingBloomFilter::from_bytes(&read()?)
                    .map_err(|e| CliError::at(&name, e))?,
            )),
            FilterKind::Scalable => AnyFilter::Scalable(
                ScalableBloomFilter::from_bytes(&read()?).map_err(|e| CliError::at(&name, e))?,
            ),
            FilterKind::Stable => AnyFilter::Stable(
                StableBloomFilter::from_bytes(&read()?).map_err(|e| CliError::at(&name, e))?,
            ),
            other => {
                return Err(CliError::at(
                    &name,
                    format!("filter kind {other:?} is not supported by this tool"),
                ))
            }
        })
    }

    /// The 64-bit hash the filter probes for `key` (its own hasher and seed).
    #[inline]
    pub(crate) fn hash(&self, key: &[u8]) -> u64 {
        self.hasher().hash_one(key)
    }

    /// The filter's hasher (core's seeded default for every kind).
    pub(crate) fn hasher(&self) -> &DefaultHasher {
        match self {
            AnyFilter::Blocked(f) => f.hasher(),
            AnyFilter::Split(f) => f.hasher(),
            AnyFilter::Standard(f) => f.hasher(),
            AnyFilter::Counting(f) => f.hasher(),
            AnyFilter::DLeft(f) => f.hasher(),
            AnyFilter::Scalable(f) => f.hasher(),
            AnyFilter::Stable(f) => f.hasher(),
        }
    }

    /// Whether the key of `hash` may be present.
    #[inline]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        match self {
            AnyFilter::Blocked(f) => f.contains_hash(hash),
            AnyFilter::Split(f) => f.contains_hash(hash),
            AnyFilter::Standard(f) => f.contains_hash(hash),
            AnyFilter::Counting(f) => f.contains_hash(hash),
            AnyFilter::DLeft(f) => f.contains_hash(hash),
            AnyFilter::Scalable(f) => f.contains_hash(hash),
            AnyFilter::Stable(f) => f.contains_hash(hash),
        }
    }

    /// Inserts every key of `block`. Keys are hashed in parallel (rayon, `CHUNK` keys a
    /// task); the blocked and split-block filters are then filled from every thread by
    /// core's `par_insert_hash_batch` (one range of the filter per thread, the hashes
    /// grouped by range once, no atomics, bit-identical to a sequential build, 8 bytes per
    /// key of extra memory); the standard
    /// filter by its pipelined `insert_hash_batch`, or from 4 threads on through its
    /// atomic twin (`fetch_or` per word); the counting filter by its pipelined
    /// `insert_hash_batch`, the d-left filter key by key (an insert can fail; the error
    /// names the line). Extra memory: 16 bytes per key of the block.
    ///
    /// `par_insert_batch` is not used: its scatter buffers are up to 1.25x the filter per
    /// call, over the tool's bound of 64 MiB beyond the filter.
    pub(crate) fn insert_block(&mut self, block: &Block, name: &str) -> CliResult<()> {
        let hashes = self.hash_block(block);
        self.insert_hashes(&hashes)
            .map_err(|(i, e)| CliError::Msg(format!("{name}:{}: {e}", block.line_number(i))))
    }

    /// Inserts every key of a memory-mapped file: each window's pieces are split and
    /// hashed on a pool (with a copy of the filter's hasher) while the window before is
    /// inserted: by the calling thread alone, which then helps hash the next window's
    /// pieces (blocked and split-block filters below 4 threads), by one task per range of
    /// the filter (blocked and split-block from 4 threads:
    /// [`insert_mapped_split`](Self::insert_mapped_split)), or as
    /// [`AnyFilter::insert_block`] does (the other kinds); with one thread the calling
    /// thread splits, hashes and inserts each window in turn. Returns the number of keys.
    pub(crate) fn insert_mapped(
        &mut self,
        mapped: &mut MappedInput,
        progress: &Progress,
    ) -> CliResult<u64> {
        let hasher = *self.hasher();
        let keep_empty = mapped.keep_empty();
        let name = mapped.name().to_string();
        let mut total = 0u64;
        // Below 4 threads this (the calling) thread inserts blocked and split-block windows
        // alone while a pool of one thread fewer splits and hashes the next one; once its
        // insert is done it hashes that window's unclaimed pieces too ([`Workers::Pool`]:
        // on 2 cores the insert takes less time than the hashing, and this thread waited
        // for the difference: 1.37-1.48 s without helping against 1.15-1.18 s). Splitting
        // the insert over the pool and hashing on all threads measured slower on 2 cores
        // (100M URLs, 2 threads, 5 interleaved runs each, two sets: 1.52 and 1.55 s;
        // the calling thread inserting beside 2 hashing threads 1.47 s, beside 1: 1.31 and
        // 1.34 s; with the hashes grouped by range in the worker tasks, three interleaved
        // runs: 1.35-1.45 s against 1.23-1.54 s). From 4 threads the pool inserts
        // ([`insert_mapped_split`](Self::insert_mapped_split)). With `--threads 1` this
        // thread does it all, window by window.
        let threads = rayon::current_num_threads();
        let ranged = matches!(self, AnyFilter::Blocked(_) | AnyFilter::Split(_));
        if ranged && threads >= 4 {
            return self.insert_mapped_split(mapped, progress, threads);
        }
        let pool = if ranged && threads > 1 {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .build()
                .ok()
        } else {
            None
        };
        let workers = match &pool {
            Some(pool) => Workers::Pool(pool),
            // One thread (any kind): it splits, hashes and inserts each window in turn.
            None if threads == 1 => Workers::Caller,
            None => Workers::Global,
        };
        mapped.for_each_window(
            workers,
            |piece| hash_piece(piece, keep_empty, &hasher),
            |window, parts| {
                let n = parts.iter().map(Vec::len).sum::<usize>();
                match self {
                    // Below 4 threads: on this thread, part by part.
                    AnyFilter::Blocked(f) => parts.iter().for_each(|p| f.insert_hash_batch(p)),
                    AnyFilter::Split(f) => parts.iter().for_each(|p| f.insert_hash_batch(p)),
                    _ => {
                        let hashes = if parts.len() == 1 {
                            parts.into_iter().next().unwrap_or_default()
                        } else {
                            parts.concat()
                        };
                        self.insert_hashes(&hashes).map_err(|(i, e)| {
                            CliError::Msg(format!("{name}:{}: {e}", window.line_number(i)))
                        })?;
                    }
                }
                progress.inc_keys(n as u64);
                total += n as u64;
                Ok(n)
            },
        )?;
        Ok(total)
    }

    /// [`insert_mapped`](Self::insert_mapped) from 4 threads on for the blocked and
    /// split-block filters (only those: the caller checks): the filter is cut into one range
    /// of blocks per thread, each piece task groups the hashes it computes by range
    /// ([`RangeSplitter`](bloomforge_core::RangeSplitter)), and each window is inserted by
    /// one task per range reading only its range's hashes of every piece, with plain
    /// stores. The work grows with the keys, not with keys x threads: tasks that each
    /// scanned every hash of the window for those of their range took 43 % of the CPU
    /// samples of a `--threads 16` build of 100M URLs on 2 cores (3.2 s user time; 1.9 s
    /// with the hashes grouped by range).
    fn insert_mapped_split(
        &mut self,
        mapped: &mut MappedInput,
        progress: &Progress,
        threads: usize,
    ) -> CliResult<u64> {
        let hasher = *self.hasher();
        let keep_empty = mapped.keep_empty();
        let name = mapped.name().to_string();
        let mut total = 0u64;
        macro_rules! split_walk {
            ($f:expr) => {{
                let splitter = $f.range_splitter(threads);
                mapped.for_each_window(
                    Workers::Global,
                    |piece| splitter.split(&hash_piece(piece, keep_empty, &hasher)),
                    |_, parts| {
                        // Cannot fail: the splitter is this filter's.
                        $f.par_insert_split(&splitter, &parts)
                            .map_err(|e| CliError::at(&name, e))?;
                        let n: usize = parts.iter().map(|p| p.len()).sum();
                        progress.inc_keys(n as u64);
                        total += n as u64;
                        Ok(n)
                    },
                )?;
                Ok(total)
            }};
        }
        match self {
            AnyFilter::Blocked(f) => split_walk!(f),
            AnyFilter::Split(f) => split_walk!(f),
            _ => unreachable!("insert_mapped_split is called for blocked and split-block filters"),
        }
    }

    /// Inserts keys by their hashes ([`AnyFilter::hash`]), as [`AnyFilter::insert_block`];
    /// a failed d-left insert returns the index of its hash and the error.
    pub(crate) fn insert_hashes(&mut self, hashes: &[u64]) -> Result<(), (usize, String)> {
        // The standard filter has no ranges to split (a key's bits span the whole array):
        // 100M keys into a 120 MB filter on a 2-core machine measured atomic two-thread
        // inserts slower than one pipelined thread (the reader thread takes part of the
        // second core), so its atomic path is taken from 4 threads on.
        let parallel = rayon::current_num_threads() >= 4;
        match self {
            AnyFilter::Blocked(f) => f.par_insert_hash_batch(hashes),
            AnyFilter::Split(f) => f.par_insert_hash_batch(hashes),
            AnyFilter::Standard(f) if parallel => {
                let a = AtomicStandardBloomFilter::from(std::mem::replace(
                    f,
                    StandardBloomFilter::with_num_bits(64)
                        .hashes(1)
                        .expect("tiny filter"),
                ));
                hashes
                    .par_chunks(CHUNK)
                    .for_each(|c| a.insert_hash_batch(c));
                *f = a.into_inner();
            }
            AnyFilter::Standard(f) => f.insert_hash_batch(hashes),
            AnyFilter::Counting(f) => f.insert_hash_batch(hashes),
            AnyFilter::DLeft(f) => {
                for (i, &h) in hashes.iter().enumerate() {
                    f.insert_hash(h).map_err(|e| (i, e.to_string()))?;
                }
            }
            // Pipelined over the slices the block cannot change; the error names the key.
            AnyFilter::Scalable(f) => match f.insert_hash_batch(hashes) {
                Ok(_) => {}
                Err(StreamError::BatchStopped { index, source }) => {
                    return Err((index, source.to_string()))
                }
                Err(e) => return Err((0, e.to_string())),
            },
            // In input order (each insert decrements cells first): the pipelined
            // check-and-insert, whose answers are not needed here.
            AnyFilter::Stable(f) => {
                let mut seen = vec![false; hashes.len()];
                f.check_and_insert_hash_batch(hashes, &mut seen)
                    .map_err(|e| (0, e.to_string()))?;
            }
        }
        Ok(())
    }

    /// The hashes of a block's keys, computed in parallel.
    pub(crate) fn hash_block(&self, block: &Block) -> Vec<u64> {
        let mut hashes = vec![0u64; block.len()];
        hashes
            .par_chunks_mut(CHUNK)
            .zip(block.spans().par_chunks(CHUNK))
            .for_each(|(out, spans)| {
                for (h, &s) in out.iter_mut().zip(spans) {
                    *h = self.hash(block.span(s));
                }
            });
        hashes
    }

    /// `contains` of every key of `block`, in parallel: each task hashes its chunk of
    /// keys, then probes them with the filter's pipelined (prefetching) batch query.
    pub(crate) fn contains_block(&self, block: &Block) -> Vec<bool> {
        let mut hits = vec![false; block.len()];
        hits.par_chunks_mut(CHUNK)
            .zip(block.spans().par_chunks(CHUNK))
            .for_each(|(out, spans)| {
                let hashes: Vec<u64> = spans.iter().map(|&s| self.hash(block.span(s))).collect();
                self.contains_hashes(&hashes, out);
            });
        hits
    }

    /// `out[i]` = whether the key of `hashes[i]` may be present (same lengths).
    pub(crate) fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        let ok = match self {
            AnyFilter::Blocked(f) => f.contains_hash_batch(hashes, out).is_ok(),
            AnyFilter::Split(f) => f.contains_hash_batch(hashes, out).is_ok(),
            AnyFilter::Standard(f) => f.contains_hash_batch(hashes, out).is_ok(),
            AnyFilter::Counting(f) => f.contains_hash_batch(hashes, out).is_ok(),
            AnyFilter::Scalable(f) => f.contains_hash_batch(hashes, out).is_ok(),
            AnyFilter::DLeft(f) => {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = f.contains_hash(h);
                }
                true
            }
            AnyFilter::Stable(f) => {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = f.contains_hash(h);
                }
                true
            }
        };
        debug_assert!(ok, "equal lengths");
    }

    /// Estimated number of distinct keys inserted (from the fill; exact for d-left).
    pub(crate) fn estimated_len(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.estimated_len(),
            AnyFilter::Split(f) => f.estimated_len(),
            AnyFilter::Standard(f) => f.estimated_len(),
            AnyFilter::Counting(f) => f.estimated_len(),
            AnyFilter::DLeft(f) => f.len() as f64,
            AnyFilter::Scalable(f) => f.estimated_len(),
            AnyFilter::Stable(f) => f.estimated_len(),
        }
    }

    /// Intersects with `other` (`merge --intersect`): plain filters only.
    pub(crate) fn intersect(&mut self, other: &AnyFilter) -> Result<(), String> {
        let r = match (self, other) {
            (AnyFilter::Blocked(a), AnyFilter::Blocked(b)) => a.intersect(b),
            (AnyFilter::Split(a), AnyFilter::Split(b)) => a.intersect(b),
            (AnyFilter::Standard(a), AnyFilter::Standard(b)) => a.intersect(b),
            (a, b) if a.name() != b.name() => {
                return Err(format!(
                    "cannot merge filters of different layouts ({} and {})",
                    a.name(),
                    b.name()
                ))
            }
            (a, _) => {
                return Err(format!(
                    "--intersect needs plain filters (blocked, split, standard); a {} filter \
                     has no intersection",
                    a.name()
                ))
            }
        };
        r.map_err(|e| e.to_string())
    }

    /// The kind's name, as `build --layout` spells it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            AnyFilter::Blocked(_) => "blocked",
            AnyFilter::Split(_) => "split",
            AnyFilter::Standard(_) => "standard",
            AnyFilter::Counting(f) => match f.layout() {
                CounterLayout::Blocked => "counting",
                CounterLayout::Standard => "counting-standard",
            },
            AnyFilter::DLeft(_) => "dleft",
            AnyFilter::Scalable(f) => match f.layout() {
                SliceLayout::Standard => "scalable-standard",
                _ => "scalable",
            },
            AnyFilter::Stable(_) => "stable",
        }
    }

    /// Whether the filter keeps counts (and can delete): counting and d-left filters.
    pub(crate) fn is_counting(&self) -> bool {
        matches!(self, AnyFilter::Counting(_) | AnyFilter::DLeft(_))
    }

    /// The count estimate as printed by `query --count` (`N+`: saturated, at least N), or
    /// `None` for a plain filter.
    pub(crate) fn count(&self, key: &[u8]) -> Option<String> {
        // `Count`'s Display: `3`, or `15+` when saturated.
        match self {
            AnyFilter::Counting(f) => Some(f.count(key).to_string()),
            AnyFilter::DLeft(f) => Some(f.count(key).to_string()),
            _ => None,
        }
    }

    /// Removes one occurrence of `key`: `Ok(Some(outcome))` if it was present
    /// (`Saturated`: a counter is stuck and the key stays), `Ok(None)` if it was not
    /// (nothing changed), `Err` for a plain filter or any other failure. The one place the
    /// tool deletes from a filter (`remove` calls only this).
    pub(crate) fn remove(&mut self, key: &[u8]) -> Result<Option<RemoveOutcome>, String> {
        match self {
            AnyFilter::Counting(f) => match f.remove(key) {
                Ok(o) => Ok(Some(o)),
                Err(CountingError::NotPresent) => Ok(None),
                Err(e) => Err(e.to_string()),
            },
            AnyFilter::DLeft(f) => match f.remove(key) {
                Ok(o) => Ok(Some(o)),
                Err(DLeftError::NotPresent) => Ok(None),
                Err(e) => Err(e.to_string()),
            },
            AnyFilter::Stable(_) => Err(
                "a stable filter cannot delete (it forgets old keys by itself as new ones arrive)"
                    .into(),
            ),
            _ => Err("plain Bloom filters cannot delete".into()),
        }
    }

    /// Streams the serialized filter to `writer` (no in-memory copy of the filter).
    pub(crate) fn write_to(&self, writer: impl Write) -> Result<(), String> {
        match self {
            AnyFilter::Blocked(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Split(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Standard(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Counting(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::DLeft(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Scalable(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Stable(f) => f.write_to(writer).map_err(|e| e.to_string()),
        }
    }

    pub(crate) fn union(&mut self, other: &AnyFilter) -> Result<(), String> {
        let r = match (self, other) {
            (AnyFilter::DLeft(_), _) | (_, AnyFilter::DLeft(_)) => {
                return Err(NO_DLEFT_MERGE.into())
            }
            (AnyFilter::Stable(_), _) | (_, AnyFilter::Stable(_)) => {
                return Err(NO_STABLE_MERGE.into())
            }
            (AnyFilter::Blocked(a), AnyFilter::Blocked(b)) => a.union(b),
            (AnyFilter::Split(a), AnyFilter::Split(b)) => a.union(b),
            (AnyFilter::Standard(a), AnyFilter::Standard(b)) => a.union(b),
            (AnyFilter::Counting(a), AnyFilter::Counting(b)) if a.layout() == b.layout() => {
                return a.union(b).map_err(|e| e.to_string())
            }
            (AnyFilter::Scalable(a), AnyFilter::Scalable(b)) if a.layout() == b.layout() => {
                return a.union(b).map_err(|e| e.to_string())
            }
            (a, b) => {
                return Err(format!(
                    "cannot merge filters of different layouts ({} and {})",
                    a.name(),
                    b.name()
                ))
            }
        };
        r.map_err(|e| e.to_string())
    }

    pub(crate) fn memory_bits(&self) -> u64 {
        match self {
            AnyFilter::Blocked(f) => f.num_bits(),
            AnyFilter::Split(f) => f.num_bits(),
            AnyFilter::Standard(f) => f.num_bits(),
            AnyFilter::Counting(f) => f.memory_bits(),
            AnyFilter::DLeft(f) => f.memory_bits(),
            AnyFilter::Scalable(f) => f.memory_bytes() * 8,
            AnyFilter::Stable(f) => f.memory_bytes() * 8,
        }
    }

    pub(crate) fn expected_false_pos(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.expected_false_pos(),
            AnyFilter::Split(f) => f.expected_false_pos(),
            AnyFilter::Standard(f) => f.expected_false_pos(),
            AnyFilter::Counting(f) => f.expected_false_pos(),
            AnyFilter::DLeft(f) => f.expected_false_pos(),
            AnyFilter::Scalable(f) => f.false_pos_now(),
            AnyFilter::Stable(f) => f.expected_false_pos(),
        }
    }

    /// The probe parameters for the one-line summary of `build` and `export`.
    pub(crate) fn shape(&self) -> String {
        match self {
            AnyFilter::Blocked(f) => format!("k = {}", f.num_hashes()),
            AnyFilter::Split(f) => format!("k = {}", f.num_hashes()),
            AnyFilter::Standard(f) => format!("k = {}", f.num_hashes()),
            AnyFilter::Counting(f) => {
                format!("{} counters, k = {}", f.num_counters(), f.num_hashes())
            }
            AnyFilter::DLeft(f) => format!(
                "d = {}, {} buckets/subtable, w = {}, r = {}, c = {}",
                f.subtables(),
                f.buckets_per_subtable(),
                f.cells_per_bucket(),
                f.remainder_bits(),
                f.counter_bits()
            ),
            AnyFilter::Scalable(f) => format!(
                "{} slices, capacity {} before the next",
                f.num_slices(),
                f.capacity()
            ),
            AnyFilter::Stable(f) => format!(
                "{} cells of {} bits, k = {}, P = {}, FP at the stable point {:.3e}",
                f.cells(),
                f.cell_bits(),
                f.num_hashes(),
                f.decrements(),
                f.stable_false_pos()
            ),
        }
    }

    /// `stats` output: (field, typed value) pairs.
    pub(crate) fn stats(&self) -> Vec<(&'static str, Stat)> {
        let per_key = |bits: u64, keys: f64| Stat::fixed(bits as f64 / keys.max(1.0), 3);
        let plain = |bits: u64, k: u32, est: f64, fp: f64| {
            vec![
                ("bits", bits.into()),
                ("bytes", (bits / 8).into()),
                ("hashes", k.into()),
                ("estimated_keys", Stat::estimate(est)),
                ("bits_per_key", per_key(bits, est)),
                ("expected_false_pos", Stat::sci(fp)),
            ]
        };
        let mut fields = vec![("layout", Stat::text(self.name()))];
        fields.extend(match self {
            AnyFilter::Blocked(f) => plain(
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Split(f) => plain(
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Standard(f) => plain(
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Counting(f) => {
                let (bits, est) = (f.memory_bits(), f.estimated_len());
                vec![
                    ("counters", f.num_counters().into()),
                    ("bits", bits.into()),
                    ("bytes", (bits / 8).into()),
                    ("hashes", f.num_hashes().into()),
                    ("estimated_keys", Stat::estimate(est)),
                    ("bits_per_key", per_key(bits, est)),
                    ("nonzero_counters", f.nonzero_counters().into()),
                    ("saturated_counters", f.saturated_counters().into()),
                    ("fill", Stat::fixed(f.fill(), 6)),
                    ("expected_false_pos", Stat::sci(f.expected_false_pos())),
                ]
            }
            AnyFilter::DLeft(f) => {
                let bits = f.memory_bits();
                vec![
                    ("subtables", f.subtables().into()),
                    ("buckets_per_subtable", f.buckets_per_subtable().into()),
                    ("cells_per_bucket", f.cells_per_bucket().into()),
                    ("remainder_bits", f.remainder_bits().into()),
                    ("counter_bits", f.counter_bits().into()),
                    ("cells", f.total_cells().into()),
                    ("bits", bits.into()),
                    ("bytes", (bits / 8).into()),
                    ("len", f.len().into()),
                    ("occupied_cells", f.occupied_cells().into()),
                    ("saturated_cells", f.saturated_cells().into()),
                    ("bits_per_key", per_key(bits, f.len() as f64)),
                    ("load", Stat::fixed(f.load_for(f.len()), 3)),
                    ("expected_false_pos", Stat::sci(f.expected_false_pos())),
                    // Buckets holding 0, 1, ..., w occupied cells.
                    ("load_histogram", Stat::Ints(f.load_histogram())),
                ]
            }
            AnyFilter::Scalable(f) => {
                let bits = f.memory_bytes() * 8;
                vec![
                    ("slices", f.num_slices().into()),
                    ("bits", bits.into()),
                    ("bytes", (bits / 8).into()),
                    // Keys counted as new at insert: an estimate (see
                    // ScalableBloomFilter::estimated_len), hence the name.
                    ("estimated_len", Stat::estimate(f.estimated_len())),
                    ("capacity", f.capacity().into()),
                    ("bits_per_key", per_key(bits, f.estimated_len())),
                    ("target_false_pos", Stat::sci(f.target_false_pos())),
                    ("expected_false_pos", Stat::sci(f.false_pos_now())),
                ]
            }
            AnyFilter::Stable(f) => {
                let bits = f.memory_bytes() * 8;
                let max = (1u64 << f.cell_bits()) - 1;
                vec![
                    ("cells", f.cells().into()),
                    ("cell_bits", f.cell_bits().into()),
                    ("bits", bits.into()),
                    ("bytes", (bits / 8).into()),
                    ("hashes", f.num_hashes().into()),
                    ("decrements", f.decrements().into()),
                    ("inserts", f.inserts().into()),
                    ("estimated_keys", Stat::estimate(f.estimated_len())),
                    (
                        "zero_fraction",
                        Stat::fixed(f.zero_cells() as f64 / f.cells() as f64, 6),
                    ),
                    ("stable_point", Stat::fixed(f.stable_point(), 6)),
                    // About how many inserts back a key is still mostly remembered.
                    (
                        "horizon",
                        Stat::estimate(f.cells() as f64 * max as f64 / f.decrements() as f64),
                    ),
                    ("expected_false_pos", Stat::sci(f.expected_false_pos())),
                    ("stable_false_pos", Stat::sci(f.stable_false_pos())),
                ]
            }
        });
        fields
    }
}

/// Why stable filters do not merge.
pub(crate) const NO_STABLE_MERGE: &str = "stable filters cannot be merged (a cell counts down \
     the inserts since a key set it: no cell-wise union of two filters is the filter of the \
     two streams); build one filter from all the keys, or query both";

/// Why d-left filters do not merge.
pub(crate) const NO_DLEFT_MERGE: &str = "d-left filters cannot be merged (they have no union: \
     where a fingerprint is stored depends on the other keys); build one filter from all the keys";
