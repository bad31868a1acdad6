//! `bloomforge ints`: integer sets on the command line (a bitmap or a 2-bitmap over the
//! whole `u32` domain).
//!
//! ```text
//! bloomforge ints contains SET [QUERIES]... [--absent] [--count] [--format F]
//! bloomforge ints unique FILE... [--memory SIZE] [--temp-dir DIR] [--count] [--format F]
//! bloomforge ints distinct FILE... [--count] [--format F]
//! ```
//! Input formats (`--format`): `text` (one decimal integer a line; blank lines skipped),
//! `u32le` (raw little-endian `u32`), `u64le` (raw little-endian `u64`, each below 2^32).
//! `-` reads standard input. Output: one decimal integer a line, or the count alone with
//! `--count`. Every input is read and checked before the first line is written, so bad
//! input (a token that is not an integer, a value out of the `u32` range, a truncated
//! binary file) ends with a one-line error naming the file and line or byte offset, a
//! non-zero exit code and no output.
//!
//! `unique` prints the integers that occur exactly once across the inputs, ascending, by
//! one of three plans, the first that `--memory` (default 2G, at least 40M) holds:
//! - in memory (8 bytes a value and 64 MiB): the values (memory-mapped for raw `u32`
//!   files, else read) are grouped by range in one parallel radix pass
//!   ([`RangeBuckets`], 1024 ranges), then each range is solved with a 1 MiB 2-bitmap
//!   that stays in cache, a few ranges at a time on all threads, and its exactly-once
//!   values are listed (AVX-512 compress) and formatted while they are hot;
//! - the full 1 GiB 2-bitmap, loaded in batches (an input too large for the first plan);
//! - the second plan of the design documents: a first pass splits the values by range
//!   (their high bits) into temporary files (in `--temp-dir`, removed on success and on
//!   error), then each range is solved with a 2-bitmap of its own size and printed in
//!   order.
//!
//! A budget below the minimum is refused with a one-line error naming it. `distinct` is
//! the bitmap sort: the distinct values, ascending. `contains` prints the queries (in
//! their order) found in SET, or with `--absent` those that are not.
//!
//! [`run`] runs an [`IntsCommand`] (the `ints` subcommand's clap enum).

use bloomforge_bitmap::{Bitmap, RangeBuckets, TwoBitmap};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// How integers are stored in an input file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum IntFormat {
    /// One decimal integer a line.
    Text,
    /// Raw little-endian u32.
    U32le,
    /// Raw little-endian u64 (each below 2^32).
    U64le,
}

/// Options every `ints` command takes.
#[derive(Clone, Debug, clap::Args)]
pub struct CommonArgs {
    /// Input format.
    #[arg(long, value_enum, default_value_t = IntFormat::Text)]
    pub format: IntFormat,
    /// Print only the number of output values.
    #[arg(long)]
    pub count: bool,
}

/// The `bloomforge ints` commands.
#[derive(Clone, Debug, clap::Subcommand)]
#[command(
    after_help = "Examples:\n  bloomforge ints unique --format u32le big.u32 > once.txt\n  \
                  bloomforge ints distinct a.txt b.txt --count\n  \
                  bloomforge ints contains set.txt queries.txt --absent"
)]
pub enum IntsCommand {
    /// Print the queries that are in SET (or, with --absent, those that are not).
    #[command(
        after_help = "Examples:\n  bloomforge ints contains set.txt queries.txt > present.txt\n  \
                      seq 1 100 | bloomforge ints contains set.txt --absent --count\n  \
                      bloomforge ints contains --format u32le set.u32 queries.u32"
    )]
    Contains {
        /// The set's values.
        set: PathBuf,
        /// Files of queries (standard input if none).
        queries: Vec<PathBuf>,
        /// Print the queries absent from SET instead.
        #[arg(long)]
        absent: bool,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Print the integers that occur exactly once across the inputs, ascending.
    #[command(
        after_help = "Examples:\n  bloomforge ints unique a.txt b.txt > once.txt\n  \
                      bloomforge ints unique --format u32le big.u32 --count\n  \
                      bloomforge ints unique --memory 256M --temp-dir /scratch huge.txt"
    )]
    Unique {
        /// Input files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Memory budget (e.g. 512M, 4G, 4GiB; at least 40M). In memory while it holds
        /// 8 bytes a value plus 64 MiB (or, for a larger input, the full 1 GiB 2-bitmap
        /// plus 36 MiB); below that the values are partitioned by range into temporary
        /// files.
        #[arg(long, default_value = "2G", value_parser = crate::size::parse_size)]
        memory: u64,
        /// Where the temporary files go (default: the system's temporary directory).
        #[arg(long)]
        temp_dir: Option<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Print the distinct integers of the inputs, ascending (the bitmap sort).
    #[command(
        after_help = "Examples:\n  bloomforge ints distinct a.txt b.txt > sorted.txt\n  \
                      bloomforge ints distinct --format u64le ids.u64 --count"
    )]
    Distinct {
        /// Input files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
    },
}

/// Runs one command.
///
/// # Errors
/// A one-line message naming the file and line or byte offset of bad input, or the I/O
/// error.
pub fn run(cmd: IntsCommand) -> crate::error::Result<()> {
    let result = match cmd {
        IntsCommand::Contains {
            set,
            queries,
            absent,
            common,
        } => contains(&set, &queries, absent, &common),
        IntsCommand::Unique {
            files,
            memory,
            temp_dir,
            common,
        } => unique(&files, memory, temp_dir.as_deref(), &common),
        IntsCommand::Distinct { files, common } => distinct(&files, &common),
    };
    result.map_err(crate::error::CliError::Msg)
}

/// Values are handed on in chunks of this many.
const CHUNK: usize = 1 << 20;

fn open(path: &Path) -> Result<Box<dyn Read>, String> {
    if path == Path::new("-") {
        Ok(Box::new(std::io::stdin().lock()))
    } else {
        File::open(path)
            .map(|f| Box::new(f) as Box<dyn Read>)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Reads every value of `path`, handing them to `sink` in chunks; checks everything.
pub fn read_values(
    path: &Path,
    format: IntFormat,
    mut sink: impl FnMut(&[u32]) -> Result<(), String>,
) -> Result<(), String> {
    let name = path.display();
    let reader = open(path)?;
    let mut chunk: Vec<u32> = Vec::with_capacity(CHUNK);
    match format {
        IntFormat::Text => {
            let mut r = BufReader::with_capacity(1 << 20, reader);
            let mut line = Vec::new();
            let mut lineno = 0u64;
            loop {
                line.clear();
                let n = r
                    .read_until(b'\n', &mut line)
                    .map_err(|e| format!("{name}: {e}"))?;
                if n == 0 {
                    break;
                }
                lineno += 1;
                let tok = line.trim_ascii();
                if tok.is_empty() {
                    continue;
                }
                chunk.push(parse_u32(tok).map_err(|why| format!("{name}:{lineno}: {why}"))?);
                if chunk.len() == CHUNK {
                    sink(&chunk)?;
                    chunk.clear();
                }
            }
        }
        IntFormat::U32le | IntFormat::U64le => {
            let width = if format == IntFormat::U32le { 4 } else { 8 };
            let mut r = reader;
            let mut buf = vec![0u8; CHUNK * width];
            let mut filled = 0usize;
            let mut offset = 0u64; // byte offset of buf[0] in the file
            loop {
                let n = r
                    .read(&mut buf[filled..])
                    .map_err(|e| format!("{name}: {e}"))?;
                filled += n;
                if n != 0 && filled < buf.len() {
                    continue;
                }
                let whole = filled / width * width;
                for (i, c) in buf[..whole].chunks_exact(width).enumerate() {
                    if width == 4 {
                        chunk.push(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                    } else {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(c);
                        let v = u64::from_le_bytes(b);
                        let v = u32::try_from(v).map_err(|_| {
                            format!(
                                "{name}: byte offset {}: value {v} is out of the u32 range",
                                offset + (i * width) as u64
                            )
                        })?;
                        chunk.push(v);
                    }
                }
                if !chunk.is_empty() {
                    sink(&chunk)?;
                    chunk.clear();
                }
                buf.copy_within(whole..filled, 0);
                offset += whole as u64;
                filled -= whole;
                if n == 0 {
                    if filled != 0 {
                        return Err(format!(
                            "{name}: truncated at byte offset {offset}: {filled} trailing bytes are not a whole {width}-byte value"
                        ));
                    }
                    break;
                }
            }
        }
    }
    if !chunk.is_empty() {
        sink(&chunk)?;
    }
    Ok(())
}

fn parse_u32(tok: &[u8]) -> Result<u32, String> {
    let show = || String::from_utf8_lossy(tok).into_owned();
    if !tok.iter().all(u8::is_ascii_digit) {
        return Err(format!("{:?} is not a non-negative integer", show()));
    }
    let mut v = 0u64;
    for &d in tok {
        v = v * 10 + u64::from(d - b'0');
        if v > u64::from(u32::MAX) {
            return Err(format!(
                "{} is out of the u32 range (0..=4294967295)",
                show()
            ));
        }
    }
    Ok(v as u32)
}

/// Standard output through a 1 MiB buffer. It holds the `Stdout` handle, not its lock, so
/// that the writing of one group of formatted pieces can run on a pool thread while the
/// next group is formatted.
struct Out {
    w: std::io::Stdout,
    buf: Vec<u8>,
}

impl Out {
    fn new() -> Self {
        Out {
            w: std::io::stdout(),
            buf: Vec::with_capacity((1 << 20) + 16),
        }
    }

    #[inline]
    fn value(&mut self, v: u32) -> Result<(), String> {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        self.buf.push(b'\n');
        if self.buf.len() >= 1 << 20 {
            self.w.write_all(&self.buf).map_err(write_err)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes already formatted bytes (after what is buffered).
    fn raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        if self.buf.len() + bytes.len() <= self.buf.capacity() {
            self.buf.extend_from_slice(bytes);
            return Ok(());
        }
        self.w.write_all(&self.buf).map_err(write_err)?;
        self.buf.clear();
        self.w.write_all(bytes).map_err(write_err)
    }

    fn line(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
        self.buf.push(b'\n');
    }

    fn finish(mut self) -> Result<(), String> {
        self.w.write_all(&self.buf).map_err(write_err)?;
        self.w.flush().map_err(write_err)
    }
}

fn write_err(e: std::io::Error) -> String {
    format!("writing the output: {e}")
}

fn alloc_err(e: bloomforge_bitmap::BitmapError) -> String {
    e.to_string()
}

fn print_all(
    common: &CommonArgs,
    count: u64,
    values: impl Iterator<Item = u32>,
) -> Result<(), String> {
    let mut out = Out::new();
    if common.count {
        out.line(&count.to_string());
    } else {
        for v in values {
            out.value(v)?;
        }
    }
    out.finish()
}

/// `"0000"` to `"9999"`: the last four digits of a number.
static LAST4: [[u8; 4]; 10_000] = last4();

const fn last4() -> [[u8; 4]; 10_000] {
    let mut t = [[0u8; 4]; 10_000];
    let mut i = 0;
    while i < 10_000 {
        t[i] = [
            b'0' + (i / 1000) as u8,
            b'0' + (i / 100 % 10) as u8,
            b'0' + (i / 10 % 10) as u8,
            b'0' + (i % 10) as u8,
        ];
        i += 1;
    }
    t
}

/// Formats values as lines of decimal text. Neighbouring values that share their digits
/// above the last four (sorted values of one range do, hundreds at a time) share the
/// formatting of those digits: a value costs a lookup of its last four digits and three
/// stores. The shared digits carry over from one call to the next.
struct Lines {
    /// The current block of 10 000 values (none yet: far above any `u32`).
    block: u64,
    /// The digits of `block / 10 000`, and how many.
    prefix: [u8; 8],
    prefix_len: usize,
    itoa: itoa::Buffer,
}

impl Lines {
    fn new() -> Self {
        Lines {
            block: u64::MAX / 2,
            prefix: [0; 8],
            prefix_len: 0,
            itoa: itoa::Buffer::new(),
        }
    }

    /// Appends `"{v}\n"` for every value.
    fn format(&mut self, values: &[u32], text: &mut Vec<u8>) {
        // A line is at most 11 bytes; the stores may write 3 bytes past a line's end.
        text.reserve(values.len() * 11 + 16);
        let dst = text.as_mut_ptr();
        let mut len = text.len();
        for &v in values {
            if u64::from(v).wrapping_sub(self.block) >= 10_000 {
                let q = v / 10_000;
                self.block = u64::from(q) * 10_000;
                let digits = self.itoa.format(q).as_bytes(); // at most 6 (429 496)
                self.prefix = [0; 8];
                self.prefix[..digits.len()].copy_from_slice(digits);
                self.prefix_len = digits.len();
            }
            if self.block == 0 {
                // Below 10 000: no prefix, and no leading zeros.
                let digits = self.itoa.format(v).as_bytes();
                // SAFETY: at most 5 bytes at `len`, within the reserved 11 a line (+16).
                unsafe {
                    core::ptr::copy_nonoverlapping(digits.as_ptr(), dst.add(len), digits.len());
                    *dst.add(len + digits.len()) = b'\n';
                }
                len += digits.len() + 1;
                continue;
            }
            let last = LAST4[(u64::from(v) - self.block) as usize];
            // SAFETY: `len` is at most 11 bytes a line past the reserve's start, and these
            // stores reach `len + prefix_len + 5 <= len + 14`, within the 11 a line plus
            // 16 reserved.
            unsafe {
                dst.add(len).cast::<[u8; 8]>().write_unaligned(self.prefix);
                dst.add(len + self.prefix_len)
                    .cast::<[u8; 4]>()
                    .write_unaligned(last);
                *dst.add(len + self.prefix_len + 4) = b'\n';
            }
            len += self.prefix_len + 5;
        }
        // SAFETY: bytes up to `len` were written above (or were already initialised), and
        // `len` is within the capacity.
        unsafe { text.set_len(len) };
    }
}

/// Appends `"{v}\n"` for every value (see [`Lines`]).
fn format_lines(values: &[u32], text: &mut Vec<u8>) {
    Lines::new().format(values, text);
}

/// Runs `work(i, slot)` for the items `0..n` on all threads, a group of items at a time,
/// and hands each finished slot to `emit` in item order. With two or more slots they form
/// two sets of `slots.len() / 2`: the emitting of one group overlaps the work on the next.
fn ordered<S: Send>(
    n: usize,
    slots: &mut [S],
    work: &(impl Fn(usize, &mut S) + Sync),
    emit: &mut (impl FnMut(&mut S) -> Result<(), String> + Send),
) -> Result<(), String> {
    use rayon::prelude::*;
    let run = |first: usize, set: &mut [S]| -> usize {
        let k = set.len().min(n - first);
        set[..k]
            .par_iter_mut()
            .enumerate()
            .for_each(|(j, s)| work(first + j, s));
        k
    };
    if slots.len() < 2 {
        for first in (0..n).step_by(slots.len().max(1)) {
            let k = run(first, slots);
            for s in &mut slots[..k] {
                emit(s)?;
            }
        }
        return Ok(());
    }
    let k = slots.len() / 2;
    let (a, b) = slots.split_at_mut(k);
    let (mut cur, mut next) = (a, &mut b[..k]);
    if n == 0 {
        return Ok(());
    }
    let mut done = run(0, cur);
    let mut first = done;
    while first < n {
        let (written, k_next) = rayon::join(
            || -> Result<(), String> {
                for s in cur[..done].iter_mut() {
                    emit(s)?;
                }
                Ok(())
            },
            || run(first, next),
        );
        written?;
        std::mem::swap(&mut cur, &mut next);
        done = k_next;
        first += k_next;
    }
    for s in cur[..done].iter_mut() {
        emit(s)?;
    }
    Ok(())
}

/// The values of one piece of a table, and their text.
#[derive(Default)]
struct Piece {
    once: Vec<u32>,
    text: Vec<u8>,
    count: u64,
}

/// The buffers a piece needs for `values` values of which all may be printed.
fn piece_bytes(values: u64) -> u64 {
    values * (4 + 11) + 64
}

/// Values of the 2-bitmap formatted at a time by one thread when a table is printed.
const PRINT_PIECE: u64 = 1 << 17;

/// Prints `offset + x` for every `x` seen once in `two`, ascending: the table is cut into
/// pieces of [`PRINT_PIECE`] values, formatted on all threads and written in order.
fn print_table(
    two: &TwoBitmap,
    offset: u32,
    pieces: &mut [Piece],
    out: &mut Out,
) -> Result<(), String> {
    let n = two.universe().div_ceil(PRINT_PIECE) as usize;
    ordered(
        n,
        pieces,
        &|i, p: &mut Piece| {
            let lo = i as u64 * PRINT_PIECE;
            p.once.clear();
            two.append_once(lo..lo + PRINT_PIECE, offset, &mut p.once);
            p.text.clear();
            format_lines(&p.once, &mut p.text);
        },
        &mut |p: &mut Piece| out.raw(&p.text),
    )
}

/// As many printing pieces as [`PRINT_BYTES`] holds, at most four per thread.
fn print_pieces() -> Vec<Piece> {
    let k = (PRINT_BYTES - (1 << 20)) / piece_bytes(PRINT_PIECE);
    let threads = rayon::current_num_threads().max(1) as u64;
    (0..k.clamp(1, 4 * threads))
        .map(|_| Piece::default())
        .collect()
}

/// Maps the raw little-endian `u32` file `path` (its length checked: a whole number of
/// values).
fn map_u32(path: &Path) -> Result<Option<memmap2::Mmap>, String> {
    let name = path.display();
    let file = File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let len = file.metadata().map_err(|e| format!("{name}: {e}"))?.len();
    if len % 4 != 0 {
        return Err(truncated_u32(path, len));
    }
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: the map is read-only and private to this command; the file is an input the
    // user named, and, as with any tool that reads a file, changing it while the command
    // runs gives unspecified (but memory-safe for plain integers) answers.
    let map =
        unsafe { memmap2::MmapOptions::new().map(&file) }.map_err(|e| format!("{name}: {e}"))?;
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok(Some(map))
}

fn truncated_u32(path: &Path, len: u64) -> String {
    format!(
        "{}: truncated at byte offset {}: {} trailing bytes are not a whole 4-byte value",
        path.display(),
        len / 4 * 4,
        len % 4
    )
}

/// The values of a map made by [`map_u32`]: the map is page-aligned, so its bytes are a
/// valid `[u32]` on a little-endian machine.
fn mapped_values(map: &memmap2::Mmap) -> Result<&[u32], String> {
    // SAFETY: `u32` has no invalid bit patterns; the map starts page-aligned (so 4-byte
    // aligned) and its length is a multiple of 4, so `align_to` yields all in `middle`.
    let (head, values, tail) = unsafe { map.align_to::<u32>() };
    if !head.is_empty() || !tail.is_empty() {
        return Err("the memory map of an input is not 4-byte aligned".into());
    }
    Ok(values)
}

fn contains(
    set: &Path,
    queries: &[PathBuf],
    absent: bool,
    common: &CommonArgs,
) -> Result<(), String> {
    let mut bitmap = Bitmap::full_u32().map_err(alloc_err)?;
    read_values(set, common.format, |c| {
        bitmap.par_insert_batch(c).map_err(alloc_err)
    })?;
    // Read and check every query before printing anything.
    let stdin = [PathBuf::from("-")];
    let files = if queries.is_empty() {
        &stdin[..]
    } else {
        queries
    };
    let mut answers: Vec<u32> = Vec::new();
    let mut found = vec![false; CHUNK];
    for f in files {
        read_values(f, common.format, |c| {
            bitmap
                .contains_batch(c, &mut found[..c.len()])
                .map_err(alloc_err)?;
            answers.extend(
                c.iter()
                    .zip(&found)
                    .filter(|(_, &hit)| hit != absent)
                    .map(|(&v, _)| v),
            );
            Ok(())
        })?;
    }
    print_all(common, answers.len() as u64, answers.iter().copied())
}

fn distinct(files: &[PathBuf], common: &CommonArgs) -> Result<(), String> {
    let mut bitmap = Bitmap::full_u32().map_err(alloc_err)?;
    // Batches of 16 Mi values (64 MiB, and as much scratch for the partitioned load).
    let mut buf: Vec<u32> = Vec::new();
    for f in files {
        read_values(f, common.format, |c| {
            buf.extend_from_slice(c);
            if buf.len() >= 16 * CHUNK {
                bitmap.par_insert_batch(&buf).map_err(alloc_err)?;
                buf.clear();
            }
            Ok(())
        })?;
    }
    bitmap.par_insert_batch(&buf).map_err(alloc_err)?;
    drop(buf);
    let n = if common.count { bitmap.len() } else { 0 };
    print_all(common, n, bitmap.iter())
}

/// The full 2-bitmap: 2 bits for each of the 2^32 values.
const FULL_TABLE: u64 = 1 << 30;
/// What [`read_values`] holds while it reads: a chunk of values (4 MiB) and the raw bytes
/// of a binary chunk (up to 8 MiB).
const READ_BYTES: u64 = 12 * CHUNK as u64;
/// The write buffer of one temporary file.
const WRITER_BYTES: u64 = 64 << 10;
/// A batch loaded into a range's table in the partition plan: the values' offsets (4 MiB)
/// and the partitioned load's copy of them (4 MiB).
const LOAD_BYTES: u64 = 8 * CHUNK as u64;
/// Output in flight while a table is printed: the pieces being formatted and the 1 MiB
/// buffer of standard output.
const PRINT_BYTES: u64 = 16 << 20;
/// The in-memory plan's solving buffers: a table of one range (1 MiB) and its output, for
/// a few ranges at a time.
const SOLVE_BYTES: u64 = 64 << 20;
/// At most this many ranges (and temporary files open at once).
const MAX_RANGES: u64 = 256;
/// The in-memory plan groups values by this many high bits: 1024 ranges of 4 Mi values,
/// whose 2-bitmaps (1 MiB) stay in a core's L2 cache.
const RANGE_BITS: u32 = 10;
/// The values a collected chunk holds at most (64 MiB).
const COLLECT_CHUNK: usize = 16 * CHUNK;

/// The memory `unique` needs with the values split into `ranges` value ranges (1: the
/// full 2-bitmap, in memory): the larger of the splitting pass (read buffers and one
/// writer a range) and of solving one range (its table, read buffers, a load batch and
/// the printing).
fn memory_for_ranges(ranges: u64) -> u64 {
    if ranges == 1 {
        return FULL_TABLE + READ_BYTES + LOAD_BYTES + PRINT_BYTES;
    }
    let split = READ_BYTES + ranges * WRITER_BYTES;
    let solve = FULL_TABLE / ranges + READ_BYTES + LOAD_BYTES + PRINT_BYTES;
    split.max(solve)
}

/// How many value ranges a `--memory` budget needs (1: the full 2-bitmap), or `None` if
/// it is below [`min_memory`].
pub fn ranges_for(memory: u64) -> Option<u64> {
    (0..=MAX_RANGES.trailing_zeros())
        .map(|b| 1u64 << b)
        .find(|&r| memory_for_ranges(r) <= memory)
}

/// The smallest `--memory` `unique` accepts (40 MiB: 256 ranges).
pub fn min_memory() -> u64 {
    (0..=MAX_RANGES.trailing_zeros())
        .map(|b| memory_for_ranges(1 << b))
        .min()
        .unwrap_or(u64::MAX)
}

/// The memory the in-memory plan needs for `values` values: the values themselves (read
/// or mapped) and their copy grouped by range, 8 bytes a value, and the solving buffers.
fn memory_in_memory(values: u64) -> u64 {
    8 * values + 64 + SOLVE_BYTES
}

/// A size as `--memory` reads it: in the largest binary unit that divides it exactly
/// (`40M`, `40959K`), else in bytes.
fn show_size(bytes: u64) -> String {
    for (unit, size) in [("G", 1u64 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

fn unique(
    files: &[PathBuf],
    memory: u64,
    temp_dir: Option<&Path>,
    common: &CommonArgs,
) -> Result<(), String> {
    let Some(ranges) = ranges_for(memory) else {
        return Err(format!(
            "--memory {}: ints unique needs at least {} (its read buffers and {MAX_RANGES} \
             temporary-file writers, or one range's table and output)",
            show_size(memory),
            show_size(min_memory())
        ));
    };
    // Raw u32 files whose values and grouped copy fit the budget are solved straight from
    // their memory maps: no read copy.
    if common.format == IntFormat::U32le
        && cfg!(target_endian = "little")
        && files
            .iter()
            .all(|f| std::fs::metadata(f).is_ok_and(|m| m.is_file()))
    {
        let mut values = 0u64;
        for f in files {
            let len = std::fs::metadata(f)
                .map_err(|e| format!("{}: {e}", f.display()))?
                .len();
            if len % 4 != 0 {
                return Err(truncated_u32(f, len));
            }
            values += len / 4;
        }
        if memory_in_memory(values) <= memory {
            if crate::verbose() {
                eprintln!("bloomforge: ints unique: {values} values in memory (mapped)");
            }
            let maps: Vec<memmap2::Mmap> = files
                .iter()
                .filter_map(|f| map_u32(f).transpose())
                .collect::<Result<_, _>>()?;
            let slices: Vec<&[u32]> = maps.iter().map(mapped_values).collect::<Result<_, _>>()?;
            let buckets = grouped(&slices)?;
            drop(slices);
            drop(maps);
            return solve_in_memory(&buckets, common);
        }
    }
    let mut u = Unique::new(memory, ranges, temp_dir);
    for f in files {
        read_values(f, common.format, |c| u.push(c))?;
    }
    u.finish(common)
}

/// The in-memory plan: the values grouped by range (`RANGE_BITS` high bits), then each
/// range solved with a 2-bitmap of its own (1 MiB, in cache), a few ranges at a time on
/// all threads, and printed in order. It is the full 2-bitmap built one range at a time:
/// its 1 GiB never exists, and each range's exactly-once values are listed while its
/// table is in cache.
fn solve_in_memory(buckets: &RangeBuckets, common: &CommonArgs) -> Result<(), String> {
    let span = buckets.span();
    let largest = (0..buckets.buckets())
        .map(|b| buckets.bucket(b).len() as u64)
        .max()
        .unwrap_or(0);
    // A solver's table, and the output of its largest range (at most `span` values).
    let slot = span / 4
        + if common.count {
            0
        } else {
            piece_bytes(largest.min(span))
        };
    let threads = rayon::current_num_threads().max(1) as u64;
    let k = (SOLVE_BYTES / slot).clamp(1, 4 * threads);
    let mut solvers: Vec<Solver> = (0..k)
        .map(|_| {
            Ok(Solver {
                table: TwoBitmap::new(span).map_err(alloc_err)?,
                piece: Piece::default(),
                seconds: [0.0; 2],
            })
        })
        .collect::<Result<_, String>>()?;
    let mut out = Out::new();
    let mut total = 0u64;
    let started = std::time::Instant::now();
    ordered(
        buckets.buckets(),
        &mut solvers,
        &|b, s: &mut Solver| {
            let t0 = std::time::Instant::now();
            s.table.clear();
            s.table
                .insert_bucket(buckets, b)
                .expect("the table's universe is the buckets' span");
            let t1 = std::time::Instant::now();
            if common.count {
                s.piece.count = s.table.count_once();
            } else {
                // Listed a block at a time (in L1) and formatted at once.
                let text = &mut s.piece.text;
                text.clear();
                text.reserve(buckets.bucket(b).len() * 11 + 16);
                let mut lines = Lines::new();
                s.table
                    .for_each_once_block(0..span, (b as u64 * span) as u32, |values| {
                        lines.format(values, text)
                    });
            }
            let t2 = std::time::Instant::now();
            s.seconds[0] += (t1 - t0).as_secs_f64();
            s.seconds[1] += (t2 - t1).as_secs_f64();
        },
        &mut |s: &mut Solver| {
            total += s.piece.count;
            out.raw(&s.piece.text)
        },
    )?;
    if common.count {
        out.line(&total.to_string());
    }
    if crate::verbose() {
        let sum = |i: usize| solvers.iter().map(|s| s.seconds[i]).sum::<f64>();
        eprintln!(
            "bloomforge: ints unique: {} ranges solved in {:.3} s ({} at a time; \
             thread-seconds: tables {:.3}, listing and formatting {:.3})",
            buckets.buckets(),
            started.elapsed().as_secs_f64(),
            solvers.len(),
            sum(0),
            sum(1)
        );
    }
    out.finish()
}

/// The values grouped by range for [`solve_in_memory`] (timed for `-v`).
fn grouped(slices: &[&[u32]]) -> Result<RangeBuckets, String> {
    let started = std::time::Instant::now();
    let buckets = RangeBuckets::par_new(slices, RANGE_BITS).map_err(alloc_err)?;
    if crate::verbose() {
        eprintln!(
            "bloomforge: ints unique: {} values grouped by range in {:.3} s",
            buckets.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(buckets)
}

/// One thread's table of one range, its output, and the seconds it spent on its tables
/// and on listing and formatting (for `-v`).
struct Solver {
    table: TwoBitmap,
    piece: Piece,
    seconds: [f64; 2],
}

/// Where the values of a streamed `unique` go.
enum Stage {
    /// Kept in memory (up to a limit) for the in-memory plan.
    Collect(Vec<Vec<u32>>),
    /// Loaded into the full 2-bitmap in batches.
    Table(TwoBitmap, Vec<u32>),
    /// Split by range into temporary files.
    Spill(Spill),
}

/// A `unique` over streamed input (text, 64-bit values, standard input, or raw files too
/// large for the in-memory plan): values are collected for the in-memory plan while its
/// budget allows, then, if more come, moved on to the full 2-bitmap (when `--memory`
/// holds it) or to the range files.
struct Unique<'a> {
    stage: Stage,
    collected: usize,
    limit: usize,
    memory: u64,
    ranges: u64,
    temp_dir: Option<&'a Path>,
}

impl<'a> Unique<'a> {
    fn new(memory: u64, ranges: u64, temp_dir: Option<&'a Path>) -> Self {
        // Collected values must fit the in-memory plan (8 bytes a value), and, should the
        // input go on, the move to the next plan: the chunks (4 bytes a value) beside the
        // full table and one chunk's partitioned load, or beside the range writers.
        let in_memory = memory.saturating_sub(SOLVE_BYTES) / 8;
        let moving = if ranges == 1 {
            memory.saturating_sub(FULL_TABLE + READ_BYTES + 4 * COLLECT_CHUNK as u64) / 4
        } else {
            memory.saturating_sub(READ_BYTES + ranges * WRITER_BYTES) / 4
        };
        Unique {
            stage: Stage::Collect(Vec::new()),
            collected: 0,
            limit: usize::try_from(in_memory.min(moving)).unwrap_or(usize::MAX),
            memory,
            ranges,
            temp_dir,
        }
    }

    /// Values a batch of the full table's load holds (with the load's copy: 8 bytes a value).
    fn table_batch(&self) -> usize {
        let spare = self
            .memory
            .saturating_sub(FULL_TABLE + READ_BYTES + PRINT_BYTES)
            / 8;
        usize::try_from(spare)
            .unwrap_or(usize::MAX)
            .clamp(CHUNK, 1 << 30)
    }

    fn push(&mut self, c: &[u32]) -> Result<(), String> {
        if let Stage::Collect(chunks) = &mut self.stage {
            if self.collected + c.len() <= self.limit {
                self.collected += c.len();
                return collect(chunks, c);
            }
            self.move_on()?;
        }
        let batch = self.table_batch();
        match &mut self.stage {
            Stage::Table(two, buf) => {
                buf.extend_from_slice(c);
                if buf.len() >= batch {
                    two.par_insert_batch(buf).map_err(alloc_err)?;
                    buf.clear();
                }
                Ok(())
            }
            Stage::Spill(spill) => spill.push(c),
            Stage::Collect(_) => unreachable!("moved on above"),
        }
    }

    /// Moves the collected values on to the full table or the range files.
    fn move_on(&mut self) -> Result<(), String> {
        let Stage::Collect(chunks) = std::mem::replace(&mut self.stage, Stage::Collect(Vec::new()))
        else {
            return Ok(());
        };
        if crate::verbose() {
            let plan = if self.ranges == 1 {
                "the full 2-bitmap".to_string()
            } else {
                format!("{} ranges in temporary files", self.ranges)
            };
            eprintln!(
                "bloomforge: ints unique: more than {} values for --memory {}: {plan}",
                self.limit,
                show_size(self.memory)
            );
        }
        if self.ranges == 1 {
            let mut two = TwoBitmap::full_u32().map_err(alloc_err)?;
            for c in chunks {
                two.par_insert_batch(&c).map_err(alloc_err)?;
            }
            self.stage = Stage::Table(two, Vec::new());
        } else {
            let mut spill = Spill::new(self.ranges, self.temp_dir)?;
            for c in chunks {
                spill.push(&c)?;
            }
            self.stage = Stage::Spill(spill);
        }
        Ok(())
    }

    fn finish(self, common: &CommonArgs) -> Result<(), String> {
        match self.stage {
            Stage::Collect(chunks) => {
                if crate::verbose() {
                    eprintln!(
                        "bloomforge: ints unique: {} values in memory",
                        self.collected
                    );
                }
                let slices: Vec<&[u32]> = chunks.iter().map(Vec::as_slice).collect();
                let buckets = grouped(&slices)?;
                drop(slices);
                drop(chunks);
                solve_in_memory(&buckets, common)
            }
            Stage::Table(mut two, buf) => {
                two.par_insert_batch(&buf).map_err(alloc_err)?;
                drop(buf);
                let mut out = Out::new();
                if common.count {
                    out.line(&two.count_once().to_string());
                } else {
                    print_table(&two, 0, &mut print_pieces(), &mut out)?;
                }
                out.finish()
            }
            Stage::Spill(spill) => spill.finish(common),
        }
    }
}

/// Appends `c` to the collected chunks: a chunk grows to [`COLLECT_CHUNK`] values and is
/// never reallocated (its memory is advised for huge pages).
fn collect(chunks: &mut Vec<Vec<u32>>, mut c: &[u32]) -> Result<(), String> {
    while !c.is_empty() {
        let room = chunks.last().map_or(0, |l| l.capacity() - l.len());
        if room == 0 {
            let size = chunks
                .last()
                .map_or(CHUNK, |l| (2 * l.capacity()).min(COLLECT_CHUNK));
            let mut chunk = Vec::new();
            chunk
                .try_reserve_exact(size)
                .map_err(|_| format!("out of memory holding {size} more values"))?;
            bloomforge_core::memory::advise_huge_pages(chunk.spare_capacity_mut());
            chunks.push(chunk);
            continue;
        }
        let take = room.min(c.len());
        chunks
            .last_mut()
            .expect("a chunk with room")
            .extend_from_slice(&c[..take]);
        c = &c[take..];
    }
    Ok(())
}

/// The partition plan of the design documents: values split by range (their high bits)
/// into temporary files, then each range solved with a 2-bitmap of its own size and
/// printed in order.
struct Spill {
    /// Registered for removal on Ctrl-C too (a plain `tempfile::TempDir` is removed only
    /// on drop, which an interrupted process never reaches).
    dir: crate::cleanup::TempDir,
    parts: Vec<BufWriter<File>>,
    bits: u32,
}

impl Spill {
    fn new(ranges: u64, temp_dir: Option<&Path>) -> Result<Self, String> {
        let dir = crate::cleanup::TempDir::new(temp_dir)
            .map_err(|e| format!("creating a temporary directory: {e}"))?;
        let parts = (0..ranges)
            .map(|r| {
                let path = range_path(dir.path(), r);
                File::create(&path)
                    .map(|f| BufWriter::with_capacity(WRITER_BYTES as usize, f))
                    .map_err(|e| format!("{}: {e}", path.display()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Spill {
            dir,
            parts,
            bits: ranges.trailing_zeros(),
        })
    }

    fn io_err(&self, e: std::io::Error) -> String {
        format!(
            "writing a temporary file in {}: {e}",
            self.dir.path().display()
        )
    }

    fn push(&mut self, c: &[u32]) -> Result<(), String> {
        for &v in c {
            if let Err(e) = self.parts[(v >> (32 - self.bits)) as usize].write_all(&v.to_le_bytes())
            {
                return Err(self.io_err(e));
            }
        }
        Ok(())
    }

    /// Solves each range in order: its values loaded into a 2-bitmap of its span, whose
    /// once values are printed (or counted).
    fn finish(mut self, common: &CommonArgs) -> Result<(), String> {
        for p in &mut self.parts {
            p.flush()
                .map_err(|e| format!("writing a temporary file: {e}"))?;
        }
        self.parts.clear();
        let span = (1u64 << 32) >> self.bits;
        let mut two = TwoBitmap::new(span).map_err(alloc_err)?;
        let mut pieces = print_pieces();
        let mut out = Out::new();
        let mut total = 0u64;
        let mut local = Vec::with_capacity(CHUNK);
        for r in 0..1u64 << self.bits {
            two.clear();
            let lo = (r * span) as u32;
            let path = range_path(self.dir.path(), r);
            read_values(&path, IntFormat::U32le, |c| {
                local.clear();
                local.extend(c.iter().map(|&v| v - lo));
                two.par_insert_batch(&local).map_err(alloc_err)
            })?;
            if common.count {
                total += two.count_once();
            } else {
                print_table(&two, lo, &mut pieces, &mut out)?;
            }
            std::fs::remove_file(&path).map_err(|e| self.io_err(e))?;
        }
        if common.count {
            out.line(&total.to_string());
        }
        out.finish()?;
        let shown = self.dir.path().display().to_string();
        self.dir
            .close()
            .map_err(|e| format!("removing the temporary directory {shown}: {e}"))
    }
}

fn range_path(dir: &Path, r: u64) -> PathBuf {
    dir.join(format!("range-{r:04}.u32"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_the_budget() {
        assert_eq!(ranges_for(2 << 30), Some(1));
        assert_eq!(ranges_for(FULL_TABLE + 36 * (1 << 20)), Some(1));
        assert_eq!(ranges_for(FULL_TABLE + 35 * (1 << 20)), Some(2));
        assert_eq!(ranges_for(1 << 30), Some(2));
        assert_eq!(ranges_for(100 << 20), Some(16));
        assert_eq!(min_memory(), 40 << 20);
        assert_eq!(ranges_for(40 << 20), Some(MAX_RANGES));
        assert_eq!(ranges_for((40 << 20) - 1), None);
        assert_eq!(ranges_for(1), None);
        // Every budget from the minimum on is honoured by its plan.
        for m in [
            40u64 << 20,
            41 << 20,
            64 << 20,
            100 << 20,
            600 << 20,
            2 << 30,
        ] {
            let r = ranges_for(m).unwrap();
            assert!(memory_for_ranges(r) <= m, "{m}");
        }
    }

    #[test]
    fn sizes_show_in_binary_units() {
        assert_eq!(show_size(40 << 20), "40M");
        assert_eq!(show_size(1024), "1K");
        assert_eq!(show_size(1536), "1536 bytes");
        assert_eq!(show_size(40959 << 10), "40959K");
        assert_eq!(show_size(3 << 30), "3G");
        assert_eq!(show_size(100), "100 bytes");
    }

    #[test]
    fn lines_format_as_itoa() {
        let mut values: Vec<u32> = vec![
            0,
            1,
            9,
            10,
            99,
            9999,
            10_000,
            10_001,
            19_999,
            99_999,
            100_000,
            999_999_999,
            1_000_000_000,
            u32::MAX - 1,
            u32::MAX,
        ];
        let mut s = 7u64;
        values.extend((0..5000).map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> (32 + s % 32)) as u32
        }));
        for sorted in [false, true] {
            if sorted {
                values.sort_unstable();
            }
            let mut text = b"head\n".to_vec();
            format_lines(&values, &mut text);
            let want: String = values.iter().map(|v| format!("{v}\n")).collect();
            assert_eq!(String::from_utf8(text).unwrap(), format!("head\n{want}"));
        }
        let mut empty = Vec::new();
        format_lines(&[], &mut empty);
        assert!(empty.is_empty());
    }

    #[test]
    fn ordered_work_is_emitted_in_order() {
        for slots in [1usize, 2, 3, 4, 7] {
            for n in [0usize, 1, 2, 5, 17] {
                let mut s = vec![0usize; slots];
                let mut seen = Vec::new();
                ordered(
                    n,
                    &mut s,
                    &|i, slot: &mut usize| *slot = i * 10,
                    &mut |slot: &mut usize| {
                        seen.push(*slot);
                        Ok(())
                    },
                )
                .unwrap();
                assert_eq!(seen, (0..n).map(|i| i * 10).collect::<Vec<_>>());
            }
        }
        // An error from emit stops the run.
        let mut s = vec![0usize; 4];
        let r = ordered(
            100,
            &mut s,
            &|i, slot: &mut usize| *slot = i,
            &mut |slot: &mut usize| {
                if *slot == 3 {
                    Err("stop".to_string())
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err("stop".to_string()));
    }

    #[test]
    fn tokens_parse() {
        assert_eq!(parse_u32(b"4294967295"), Ok(u32::MAX));
        assert_eq!(parse_u32(b"007"), Ok(7));
        assert!(parse_u32(b"4294967296").is_err());
        assert!(
            parse_u32(b"-1").is_err() && parse_u32(b"1.5").is_err() && parse_u32(b"x").is_err()
        );
        assert!(parse_u32(b"99999999999999999999999").is_err());
    }
}
