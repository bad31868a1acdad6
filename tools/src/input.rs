//! Streaming input: keys are lines, read in large blocks and split at line ends.
//!
//! Policy (every command that reads keys follows it):
//! - A key is a line's bytes without its terminator: `\n`, or `\r\n` (one `\r` before the
//!   `\n`, and one at the very end of the input, is stripped). Bytes need not be UTF-8.
//! - Empty lines (after stripping) are not keys, unless `--keep-empty`.
//! - The last line needs no terminator.
//!
//! `build` and `query` read regular files through [`crate::mapped`] instead (memory-mapped
//! windows, split on every thread); this reader serves pipes, stdin and the other commands.
//!
//! Memory: inputs are read with `read(2)` into a block buffer of
//! [`BLOCK_BYTES`] (plus the longest line, which must fit whole), cut at the last line
//! end; a block holds at most [`BLOCK_LINES`] lines. So a block costs at most
//! `BLOCK_BYTES + longest line + BLOCK_LINES * 16` bytes (~12 MiB for lines under 4 MiB),
//! whatever the input's size: nothing is mapped, so the page cache pages of the input are
//! never counted in the process's resident memory.
//!
//! Other commands reuse it: `LineReader::open(&source, keep_empty, progress)`, then either
//! `next_block` (a block of lines to process in parallel) or `for_each_line`.

use crate::error::{CliError, Result};
use crate::progress::Progress;
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;

/// Bytes read per block.
pub(crate) const BLOCK_BYTES: usize = 8 << 20;
/// Most lines per block (bounds the span array for inputs of very short lines).
pub(crate) const BLOCK_LINES: usize = 1 << 18;
/// The longest line accepted (spans are 32-bit offsets).
const MAX_LINE: usize = 1 << 30;

/// Where keys come from: a file, or standard input (`-` or no argument).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Standard input.
    Stdin,
    /// A file (regular file, FIFO, device).
    File(PathBuf),
}

impl Source {
    /// `-` is stdin, anything else a path.
    pub(crate) fn from_arg(arg: &OsString) -> Self {
        if arg == "-" {
            Source::Stdin
        } else {
            Source::File(PathBuf::from(arg))
        }
    }

    /// The sources named by `args`; none means stdin.
    pub(crate) fn list(args: &[OsString]) -> Vec<Source> {
        if args.is_empty() {
            vec![Source::Stdin]
        } else {
            args.iter().map(Source::from_arg).collect()
        }
    }

    /// The name used in messages.
    pub(crate) fn name(&self) -> String {
        match self {
            Source::Stdin => "stdin".to_string(),
            Source::File(p) => p.display().to_string(),
        }
    }

    /// The size in bytes of a regular file (`None` for stdin, pipes and devices).
    pub(crate) fn size(&self) -> Result<Option<u64>> {
        match self {
            Source::Stdin => Ok(None),
            Source::File(p) => {
                let m = std::fs::metadata(p).map_err(|e| CliError::io(p, e))?;
                Ok(m.is_file().then_some(m.len()))
            }
        }
    }
}

/// A block of lines: `data[..filled]` and the `(start, end)` byte ranges of its keys.
#[derive(Default)]
pub(crate) struct Block {
    /// The buffer, kept at its size between blocks so refilling it writes no zeros (a
    /// `Vec` cleared and resized for every block would memset 8 MiB a block: as many
    /// bytes again as the input).
    data: Vec<u8>,
    /// Bytes of `data` that belong to the block.
    filled: usize,
    spans: Vec<(u32, u32)>,
    /// Lines of the input before this block (line numbers are derived from it on demand,
    /// for messages, instead of being stored per key).
    first_line: u64,
}

impl Block {
    /// Number of keys in the block.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Key `i`.
    #[inline]
    pub(crate) fn key(&self, i: usize) -> &[u8] {
        let (s, e) = self.spans[i];
        &self.data[s as usize..e as usize]
    }

    /// The keys, in input order.
    pub(crate) fn keys(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.spans
            .iter()
            .map(|&(s, e)| &self.data[s as usize..e as usize])
    }

    /// The spans, for parallel iteration (`par_chunks`), resolved with [`Block::span`].
    pub(crate) fn spans(&self) -> &[(u32, u32)] {
        &self.spans
    }

    /// The key of a span taken from [`Block::spans`].
    #[inline]
    pub(crate) fn span(&self, span: (u32, u32)) -> &[u8] {
        &self.data[span.0 as usize..span.1 as usize]
    }

    /// The input line number of key `i` (a scan of the block up to the key: for messages).
    pub(crate) fn line_number(&self, i: usize) -> u64 {
        let start = self.spans[i].0 as usize;
        self.first_line + memchr::memchr_iter(b'\n', &self.data[..start]).count() as u64 + 1
    }

    /// Bytes held (data and index).
    pub(crate) fn data_len(&self) -> usize {
        self.filled
    }
}

/// Reads one source as blocks of keys.
pub(crate) struct LineReader {
    name: String,
    reader: Box<dyn Read + Send>,
    /// Bytes read but not yet returned in a block (an incomplete last line, or lines past
    /// [`BLOCK_LINES`]).
    carry: Vec<u8>,
    line_no: u64,
    eof: bool,
    keep_empty: bool,
    progress: Progress,
}

impl LineReader {
    /// Opens `source`; `progress` is advanced by the bytes read.
    pub(crate) fn open(source: &Source, keep_empty: bool, progress: Progress) -> Result<Self> {
        let reader: Box<dyn Read + Send> = match source {
            Source::Stdin => Box::new(std::io::stdin()),
            Source::File(p) => {
                let f = std::fs::File::open(p).map_err(|e| CliError::io(p, e))?;
                if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
                    return Err(CliError::at(p.display(), "is a directory"));
                }
                Box::new(f)
            }
        };
        Ok(LineReader {
            name: source.name(),
            reader,
            carry: Vec::new(),
            line_no: 0,
            eof: false,
            keep_empty,
            progress,
        })
    }

    /// The source's name, for messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Fills `block` with the next keys; `Ok(false)` at the end of the input (the block is
    /// then empty). A block may hold no keys only at the end.
    pub(crate) fn next_block(&mut self, block: &mut Block) -> Result<bool> {
        loop {
            block.spans.clear();
            block.first_line = self.line_no;
            // The carried bytes go to the front of the buffer; the buffer only grows (its
            // zeros are written once, not per block).
            let carried = self.carry.len();
            let size = BLOCK_BYTES.max(carried);
            if block.data.len() < size {
                block.data.resize(size, 0);
            }
            block.data[..carried].copy_from_slice(&self.carry);
            self.carry.clear();
            let mut filled = carried;
            block.filled = 0;
            if filled == 0 && self.eof {
                return Ok(false);
            }
            // Read until the block is full and holds a line end, or the input ends.
            while !self.eof
                && (filled < BLOCK_BYTES || memchr::memchr(b'\n', &block.data[..filled]).is_none())
            {
                let old = filled;
                // Up to a full block; past it (a line longer than the block), grow by half.
                let want = if old < BLOCK_BYTES {
                    BLOCK_BYTES - old
                } else {
                    (old / 2).max(1 << 20)
                };
                if old >= MAX_LINE {
                    return Err(CliError::at(
                        &self.name,
                        format!("line {} is longer than 1 GiB", self.line_no + 1),
                    ));
                }
                let limit = old + want.min(MAX_LINE + 1 - old);
                if block.data.len() < limit {
                    block.data.resize(limit, 0);
                }
                let n = loop {
                    match self.reader.read(&mut block.data[old..limit]) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(CliError::at(&self.name, e)),
                    }
                };
                filled = old + n;
                self.progress.inc(n as u64);
                if n == 0 {
                    self.eof = true;
                }
                if filled >= BLOCK_BYTES
                    && memchr::memrchr(b'\n', &block.data[old..filled]).is_some()
                {
                    break;
                }
            }
            let end = if self.eof {
                filled
            } else {
                memchr::memrchr(b'\n', &block.data[..filled]).map_or(0, |i| i + 1)
            };
            let cut = self.split_lines(block, end);
            self.carry.extend_from_slice(&block.data[cut..filled]);
            block.filled = cut;
            if !block.spans.is_empty() {
                self.progress.inc_keys(block.spans.len() as u64);
                return Ok(true);
            }
        }
    }

    /// Splits `block.data[..end]` into keys (at most [`BLOCK_LINES`]); returns where the
    /// consumed bytes end.
    fn split_lines(&mut self, block: &mut Block, end: usize) -> usize {
        let data = &block.data[..end];
        let mut start = 0;
        // The line ends, 64 bytes compared at a time.
        let ends =
            crate::lines::line_ends(data).chain((end > 0 && data[end - 1] != b'\n').then_some(end));
        for line_end in ends {
            if block.spans.len() == BLOCK_LINES {
                return start;
            }
            let mut e = line_end;
            if e > start && data[e - 1] == b'\r' {
                e -= 1;
            }
            self.line_no += 1;
            if e > start || self.keep_empty {
                block.spans.push((start as u32, e as u32));
            }
            start = line_end + 1;
        }
        end
    }

    /// Calls `f` on every key, in order, with its line number.
    pub(crate) fn for_each_line(
        &mut self,
        mut f: impl FnMut(&[u8], u64) -> Result<()>,
    ) -> Result<()> {
        let mut block = Block::default();
        while self.next_block(&mut block)? {
            // Line numbers counted as the loop goes: `Block::line_number` scans from the
            // block's start, which for every key of an 8 MiB block would be quadratic.
            let (mut line, mut scanned) = (block.first_line, 0);
            for i in 0..block.len() {
                let start = block.spans[i].0 as usize;
                line += memchr::memchr_iter(b'\n', &block.data[scanned..start]).count() as u64;
                scanned = start;
                f(block.key(i), line + 1)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(input: &[u8], keep_empty: bool) -> Vec<Vec<u8>> {
        let mut r = LineReader {
            name: "t".into(),
            reader: Box::new(std::io::Cursor::new(input.to_vec())),
            carry: Vec::new(),
            line_no: 0,
            eof: false,
            keep_empty,
            progress: Progress::hidden(),
        };
        let mut out = Vec::new();
        r.for_each_line(|k, _| {
            out.push(k.to_vec());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn for_each_line_numbers_the_input_lines() {
        let mut r = LineReader {
            name: "t".into(),
            reader: Box::new(std::io::Cursor::new(b"a\n\nb\r\nc\n\n\nd".to_vec())),
            carry: Vec::new(),
            line_no: 0,
            eof: false,
            keep_empty: false,
            progress: Progress::hidden(),
        };
        let mut got = Vec::new();
        r.for_each_line(|k, n| {
            got.push((k.to_vec(), n));
            Ok(())
        })
        .unwrap();
        let want: Vec<(Vec<u8>, u64)> = [("a", 1), ("b", 3), ("c", 4), ("d", 7)]
            .iter()
            .map(|&(k, n)| (k.as_bytes().to_vec(), n))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn policy_crlf_empty_last_line() {
        let k = keys_of(b"a\r\n\nb\r\r\n\xff\x00c\n\r\nlast", false);
        assert_eq!(k, [&b"a"[..], b"b\r", b"\xff\x00c", b"last"]);
        let k = keys_of(b"a\r\n\nb\n", true);
        assert_eq!(k, [&b"a"[..], b"", b"b"]);
        assert!(keys_of(b"", false).is_empty());
        assert_eq!(keys_of(b"x\r", false), [b"x"]);
    }

    #[test]
    fn many_short_lines_and_long_lines_cross_blocks() {
        let mut input = Vec::new();
        let mut want = Vec::new();
        for i in 0..(BLOCK_LINES + 1000) {
            let k = format!("{i}").into_bytes();
            input.extend_from_slice(&k);
            input.push(b'\n');
            want.push(k);
        }
        let long = vec![b'z'; BLOCK_BYTES + 17];
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nend");
        want.push(long);
        want.push(b"end".to_vec());
        assert_eq!(keys_of(&input, false), want);
    }
}

/// The key options every command that reads keys flattens in (`#[command(flatten)]`).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub(crate) struct KeyOptions {
    /// Empty lines are keys too (by default they are skipped; a trailing CR is always
    /// stripped, so CRLF files give the same keys as LF files).
    #[arg(long)]
    pub(crate) keep_empty: bool,
}

/// A [`LineReader`] on its own thread: the next block is read and split while the caller
/// processes the current one. At most two blocks exist at a time (the one being filled
/// and the one the caller holds; blocks are recycled), so this doubles the input's memory
/// bound, not more.
pub(crate) struct BlockStream {
    full: std::sync::mpsc::Receiver<Result<Block>>,
    empty: std::sync::mpsc::SyncSender<Block>,
    name: String,
    done: bool,
}

impl BlockStream {
    /// Opens `source` (errors opening it are returned here) and starts the reader thread.
    pub(crate) fn open(source: &Source, keep_empty: bool, progress: Progress) -> Result<Self> {
        let mut reader = LineReader::open(source, keep_empty, progress)?;
        let name = reader.name().to_string();
        let (full_tx, full) = std::sync::mpsc::sync_channel::<Result<Block>>(0);
        let (empty, empty_rx) = std::sync::mpsc::sync_channel::<Block>(1);
        std::thread::Builder::new()
            .name("bloomforge-reader".into())
            .spawn(move || {
                let mut block = Block::default();
                loop {
                    let r = reader.next_block(&mut block);
                    let more = matches!(r, Ok(true));
                    if full_tx.send(r.map(|_| block)).is_err() || !more {
                        return;
                    }
                    // The caller's previous block comes back to be refilled.
                    block = match empty_rx.recv() {
                        Ok(b) => b,
                        Err(_) => return,
                    };
                }
            })
            .map_err(|e| CliError::Msg(format!("cannot start a reader thread: {e}")))?;
        Ok(BlockStream {
            full,
            empty,
            name,
            done: false,
        })
    }

    /// The source's name, for messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// As [`LineReader::next_block`]: replaces `block` with the next block of keys.
    pub(crate) fn next_block(&mut self, block: &mut Block) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let next = match self.full.recv() {
            Ok(r) => r?,
            Err(_) => return Err(CliError::at(&self.name, "reader thread stopped")),
        };
        let old = std::mem::replace(block, next);
        if block.len() == 0 {
            self.done = true;
            return Ok(false);
        }
        // The reader waits for it after sending: never blocks.
        let _ = self.empty.send(old);
        Ok(true)
    }
}
