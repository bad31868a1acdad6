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
//! `unique` prints the integers that occur exactly once across the inputs, ascending: with
//! the full 1 GiB 2-bitmap when `--memory` (default 2G) holds it, else by the second plan
//! of the design documents: a first pass splits the values by range (their high bits) into
//! temporary files (in `--temp-dir`, removed on success and on error), then each range is
//! solved with a 2-bitmap of its own size and printed in order. `distinct` is the bitmap
//! sort: the distinct values, ascending. `contains` prints the queries (in their order)
//! found in SET, or with `--absent` those that are not.
//!
//! [`run`] runs an [`IntsCommand`] (the `ints` subcommand's clap enum).

use bloomforge_bitmap::{Bitmap, TwoBitmap};
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
        /// Memory budget (e.g. 512M, 4G, 4GiB): below about 1.1 GiB the values are
        /// partitioned by range into temporary files.
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

/// Standard output through a 1 MiB buffer, integers formatted with `itoa`.
struct Out {
    w: std::io::StdoutLock<'static>,
    buf: Vec<u8>,
}

impl Out {
    fn new() -> Self {
        Out {
            w: std::io::stdout().lock(),
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

/// Maps the raw little-endian `u32` file `path` and hands its values to `load` as one
/// slice (the map is page-aligned, so the bytes are a valid `[u32]` on a little-endian
/// machine).
fn with_mapped_u32(
    path: &Path,
    load: impl FnOnce(&[u32]) -> Result<(), String>,
) -> Result<(), String> {
    let name = path.display();
    let file = File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let len = file.metadata().map_err(|e| format!("{name}: {e}"))?.len();
    if len % 4 != 0 {
        return Err(format!(
            "{name}: truncated at byte offset {}: {} trailing bytes are not a whole 4-byte value",
            len / 4 * 4,
            len % 4
        ));
    }
    if len == 0 {
        return Ok(());
    }
    // SAFETY: the map is read-only and private to this call; the file is an input the
    // user named, and, as with any tool that reads a file, changing it while the command
    // runs gives unspecified (but memory-safe for plain integers) answers.
    let map =
        unsafe { memmap2::MmapOptions::new().map(&file) }.map_err(|e| format!("{name}: {e}"))?;
    let _ = map.advise(memmap2::Advice::Sequential);
    // SAFETY: `u32` has no invalid bit patterns; the map starts page-aligned (so 4-byte
    // aligned) and `len` is a multiple of 4, so `align_to` yields everything in `middle`.
    let (head, values, tail) = unsafe { map.align_to::<u32>() };
    if !head.is_empty() || !tail.is_empty() {
        return Err(format!("{name}: the memory map is not 4-byte aligned"));
    }
    load(values)
}

/// Prints the values seen exactly once (or, with `--count`, their number). The table is
/// cut into pieces formatted on all threads, a few pieces at a time, and written in
/// order: formatting ~240 million integers is seconds of work for one core.
fn print_once(common: &CommonArgs, two: &TwoBitmap) -> Result<(), String> {
    use rayon::prelude::*;
    if common.count {
        let mut out = Out::new();
        out.line(&two.count_once().to_string());
        return out.finish();
    }
    const LOW: u64 = 0x5555_5555_5555_5555; // the "once" bit of every 2-bit field
    const PIECE_WORDS: usize = 1 << 16; // 2M values a piece
    let words = two.as_words();
    let mut out = Out::new();
    let round = rayon::current_num_threads().max(1) * 2;
    for group in words.chunks(PIECE_WORDS * round) {
        let texts: Vec<Vec<u8>> = group
            .par_chunks(PIECE_WORDS)
            .enumerate()
            .map(|(j, piece)| {
                let first = ((group.as_ptr() as usize - words.as_ptr() as usize) / 8
                    + j * PIECE_WORDS) as u64
                    * 32;
                let mut text = Vec::new();
                let mut itoa = itoa::Buffer::new();
                for (i, &w) in piece.iter().enumerate() {
                    // Field x is `01` (once) when its low bit is set and its high bit not.
                    let mut once = w & LOW & !(w >> 1);
                    while once != 0 {
                        let v = first + i as u64 * 32 + u64::from(once.trailing_zeros() / 2);
                        text.extend_from_slice(itoa.format(v).as_bytes());
                        text.push(b'\n');
                        once &= once - 1;
                    }
                }
                text
            })
            .collect();
        for t in &texts {
            out.raw(t)?;
        }
    }
    out.finish()
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

/// Bytes kept aside from `--memory` for buffers.
const BUFFER_ALLOWANCE: u64 = 64 << 20;
/// At most this many ranges (and temporary files open at once).
const MAX_RANGES: u64 = 256;

/// How many value ranges a `--memory` budget needs (1: the full 2-bitmap).
pub fn ranges_for(memory: u64) -> u64 {
    let table_budget = memory.saturating_sub(BUFFER_ALLOWANCE).max(1);
    let full = 1u64 << 30; // 2 bits x 2^32 values
    full.div_ceil(table_budget)
        .next_power_of_two()
        .min(MAX_RANGES)
}

fn unique(
    files: &[PathBuf],
    memory: u64,
    temp_dir: Option<&Path>,
    common: &CommonArgs,
) -> Result<(), String> {
    let ranges = ranges_for(memory);
    if ranges == 1 {
        let mut two = TwoBitmap::full_u32().map_err(alloc_err)?;
        // Raw u32 files that fit the budget (the table; the mapped file's pages and the
        // load's scratch copy, 8 bytes a value, as the batched path below) are loaded
        // straight from their memory map: no read copy, one partitioned load per file.
        let mapped = common.format == IntFormat::U32le
            && cfg!(target_endian = "little")
            && files.iter().all(|f| {
                std::fs::metadata(f).is_ok_and(|m| {
                    m.is_file() && 2 * m.len() + (1 << 30) + BUFFER_ALLOWANCE <= memory
                })
            });
        if mapped {
            for f in files {
                with_mapped_u32(f, |values| two.par_insert_batch(values).map_err(alloc_err))?;
            }
            return print_once(common, &two);
        }
        // Values are loaded in batches as large as the memory left over allows (a batch
        // and the load's scratch copy: 8 bytes a value), so that large inputs take the
        // cache-friendly partitioned load.
        let spare = memory.saturating_sub((1 << 30) + BUFFER_ALLOWANCE) / 8;
        let batch = usize::try_from(spare)
            .unwrap_or(usize::MAX)
            .clamp(CHUNK, 1 << 30);
        let mut buf: Vec<u32> = Vec::new();
        for f in files {
            read_values(f, common.format, |c| {
                buf.extend_from_slice(c);
                if buf.len() >= batch {
                    two.par_insert_batch(&buf).map_err(alloc_err)?;
                    buf.clear();
                }
                Ok(())
            })?;
        }
        two.par_insert_batch(&buf).map_err(alloc_err)?;
        drop(buf);
        return print_once(common, &two);
    }
    // Pass 1: split by the values' high bits into one temporary file per range.
    let bits = ranges.trailing_zeros();
    let span = (1u64 << 32) >> bits;
    let dir = match temp_dir {
        Some(d) => tempfile::Builder::new()
            .prefix("bloomforge-ints")
            .tempdir_in(d),
        None => tempfile::Builder::new().prefix("bloomforge-ints").tempdir(),
    }
    .map_err(|e| format!("creating a temporary directory: {e}"))?;
    let path_of = |r: u64| dir.path().join(format!("range-{r:04}.u32"));
    let mut parts: Vec<BufWriter<File>> = (0..ranges)
        .map(|r| {
            File::create(path_of(r))
                .map(|f| BufWriter::with_capacity(1 << 16, f))
                .map_err(|e| format!("{}: {e}", path_of(r).display()))
        })
        .collect::<Result<_, _>>()?;
    let io =
        |e: std::io::Error| format!("writing a temporary file in {}: {e}", dir.path().display());
    for f in files {
        read_values(f, common.format, |c| {
            for &v in c {
                parts[(v >> (32 - bits)) as usize]
                    .write_all(&v.to_le_bytes())
                    .map_err(io)?;
            }
            Ok(())
        })?;
    }
    for p in &mut parts {
        p.flush().map_err(io)?;
    }
    drop(parts);
    // Pass 2: each range with a 2-bitmap of its own size, printed in range order.
    let mut two = TwoBitmap::new(span).map_err(alloc_err)?;
    let mut out = Out::new();
    let mut total = 0u64;
    let mut local = Vec::with_capacity(CHUNK);
    for r in 0..ranges {
        two.clear();
        let lo = (r * span) as u32;
        read_values(&path_of(r), IntFormat::U32le, |c| {
            local.clear();
            local.extend(c.iter().map(|&v| v - lo));
            two.par_insert_batch(&local).map_err(alloc_err)
        })?;
        if common.count {
            total += two.count_once();
        } else {
            for v in two.iter_once() {
                out.value(v + lo)?;
            }
        }
        std::fs::remove_file(path_of(r)).map_err(io)?;
    }
    if common.count {
        out.line(&total.to_string());
    }
    out.finish()?;
    let shown = dir.path().display().to_string();
    dir.close()
        .map_err(|e| format!("removing the temporary directory {shown}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_the_budget() {
        assert_eq!(ranges_for(2 << 30), 1);
        assert_eq!(ranges_for((1 << 30) + (64 << 20)), 1);
        assert_eq!(ranges_for(1 << 30), 2);
        assert_eq!(ranges_for(100 << 20), 32);
        assert_eq!(ranges_for(1), MAX_RANGES);
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
