//! Regular files as memory-mapped windows of whole lines, processed on every thread.
//!
//! [`crate::input`]'s block reader copies every byte out of the page cache with `read(2)`
//! and splits lines on one reader thread; for a regular file, `build` and `query` use this
//! path instead: the file is mapped read-only, walked in windows of [`WINDOW_BYTES`] cut at
//! line ends, and each window is cut again into pieces at line ends that rayon tasks split,
//! hash and insert or probe in parallel. No byte is copied, and no thread is left to split
//! lines while the others wait.
//!
//! Memory: the pages of a window count in the resident set while it is processed; once a
//! window is done its whole pages are released (`madvise(MADV_DONTNEED)`: the mapping is
//! read-only, so a later access would re-read the file, never see other bytes), so at most
//! one window (16 MiB, or the longest line) of the input is resident at a time. Windows
//! are sized from the previous one's bytes per key to hold about 2^18 keys (64 KiB to
//! 16 MiB; the first 1 MiB), which bounds the per-key buffers of their users too. (Windows
//! of at most 8 MiB cost `query` of 100M URLs 6-9 % more time: a window is a round of
//! tasks and waits.)
//!
//! The key policy is [`crate::input`]'s: a key is a line without its `\n` and one `\r`
//! before it (or at the very end of the file); empty keys are skipped unless `keep_empty`.

use crate::error::{CliError, Result};
use crate::input::Source;
use crate::progress::Progress;
use rayon::prelude::*;

/// Most bytes of the file handled per window (then released).
pub(crate) const WINDOW_BYTES: usize = 16 << 20;

/// The first window's size, and the least a window shrinks to.
const FIRST_WINDOW_BYTES: usize = 1 << 20;
const MIN_WINDOW_BYTES: usize = 64 << 10;

/// Keys a window aims at: the next window is sized from the last one's bytes per key so
/// the hashes of a window (8 bytes a key, held up to three times: per piece, joined, per
/// insert thread) stay near 6 MiB even for inputs of very short lines.
const WINDOW_KEYS: usize = 1 << 18;

/// A regular file, mapped, walked window by window.
pub(crate) struct MappedInput {
    map: memmap2::Mmap,
    name: String,
    /// Where the next window starts.
    pos: usize,
    /// Bytes before this offset have been released.
    released: usize,
    /// The next window's size (adapted to the input's bytes per key).
    window: usize,
    keep_empty: bool,
    progress: Progress,
}

/// A window of whole lines.
pub(crate) struct Window<'a> {
    /// The mapping the window lies in (for [`Window::populate`]).
    map: &'a memmap2::Mmap,
    /// The window's bytes: whole lines (the last one may lack its `\n` at the file's end).
    pub(crate) data: &'a [u8],
    /// The input before the window (line numbers in messages count its lines).
    pub(crate) before: &'a [u8],
    /// Whether empty lines are keys.
    pub(crate) keep_empty: bool,
}

impl MappedInput {
    /// Maps `source` if it is a non-empty regular file; `None` for stdin, pipes, devices
    /// and empty files (stream those with [`crate::input::BlockStream`]).
    pub(crate) fn open(
        source: &Source,
        keep_empty: bool,
        progress: Progress,
    ) -> Result<Option<Self>> {
        let Source::File(path) = source else {
            return Ok(None);
        };
        let file = std::fs::File::open(path).map_err(|e| CliError::io(path, e))?;
        let meta = file.metadata().map_err(|e| CliError::io(path, e))?;
        if !meta.is_file() || meta.len() == 0 || usize::try_from(meta.len()).is_err() {
            return Ok(None);
        }
        // SAFETY: a read-only private mapping. If another process truncates the file while
        // it is read, touching a page past the new end raises SIGBUS, as for any mapped
        // input (grep and ripgrep accept the same); its bytes are never written.
        let map = match unsafe { memmap2::Mmap::map(&file) } {
            Ok(m) => m,
            // Some files cannot be mapped (special file systems): read them instead.
            Err(_) => return Ok(None),
        };
        // Read-ahead hint only; the walk works without it.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Some(MappedInput {
            map,
            name: source.name(),
            pos: 0,
            released: 0,
            window: FIRST_WINDOW_BYTES,
            keep_empty,
            progress,
        }))
    }

    /// The file's name, for messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Calls `f` on each window in order, releasing each window's pages once `f` is done
    /// with it; `f` returns the number of keys it found, which sizes the next window.
    pub(crate) fn for_each_window(
        &mut self,
        mut f: impl FnMut(&Window<'_>) -> Result<usize>,
    ) -> Result<()> {
        let len = self.map.len();
        while self.pos < len {
            let start = self.pos;
            let want = (start + self.window).min(len);
            // Cut after the last line end of the window; a line longer than the window is
            // taken whole (up to its end or the file's).
            let end = if want == len {
                len
            } else {
                match memchr::memrchr(b'\n', &self.map[start..want]) {
                    Some(i) => start + i + 1,
                    None => memchr::memchr(b'\n', &self.map[want..]).map_or(len, |i| want + i + 1),
                }
            };
            self.progress.inc((end - start) as u64);
            let window = Window {
                map: &self.map,
                data: &self.map[start..end],
                before: &self.map[..start],
                keep_empty: self.keep_empty,
            };
            let keys = f(&window)?;
            let bytes = end - start;
            self.window = (bytes.saturating_mul(WINDOW_KEYS) / keys.max(1))
                .clamp(MIN_WINDOW_BYTES, WINDOW_BYTES);
            self.pos = end;
            self.release_consumed();
        }
        Ok(())
    }

    /// `madvise(MADV_DONTNEED)` over the whole pages before the next window.
    fn release_consumed(&mut self) {
        const PAGE: usize = 4096;
        let upto = self.pos / PAGE * PAGE;
        if upto > self.released {
            let map = &self.map;
            // In parallel, one range per thread.
            chunks(self.released, upto)
                .into_par_iter()
                .for_each(|(a, b)| {
                    // SAFETY: the mapping is private and read-only, so dropping its pages
                    // loses nothing: a later access re-reads them from the file. No slice of
                    // the released range is alive: windows borrow `self`, and this runs under
                    // `&mut self`.
                    let _ = unsafe {
                        map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, a, b - a)
                    };
                });
            self.released = upto;
        }
    }
}

/// `start..end` cut into one page-aligned range per thread (for the `madvise` calls).
fn chunks(start: usize, end: usize) -> Vec<(usize, usize)> {
    const PAGE: usize = 4096;
    let threads = rayon::current_num_threads().max(1);
    let step = (end - start).div_ceil(threads).div_ceil(PAGE).max(1) * PAGE;
    (0..threads)
        .map(|t| (start + t * step, (start + (t + 1) * step).min(end)))
        .filter(|(a, b)| a < b)
        .collect()
}

impl Window<'_> {
    /// Maps the pages of `piece` (a part of this window) with one call rather than one
    /// fault per 64 KiB: mapping page-cache pages costs about as much as copying them.
    /// Each piece's task calls it first, so the pages of a window are mapped on every
    /// thread without a phase (and a wait) of their own. A hint: kernels before 5.14
    /// refuse it, and the walk faults the pages in instead.
    pub(crate) fn populate(&self, piece: &[u8]) {
        let at = (piece.as_ptr() as usize).wrapping_sub(self.map.as_ptr() as usize);
        if at <= self.map.len() && piece.len() <= self.map.len() - at {
            let _ = self
                .map
                .advise_range(memmap2::Advice::PopulateRead, at, piece.len());
        }
    }

    /// Calls `f` on every key of `piece` (whole lines of a window), in order; returns the
    /// number of keys.
    #[inline]
    pub(crate) fn for_each_key<'a>(
        piece: &'a [u8],
        keep_empty: bool,
        mut f: impl FnMut(&'a [u8]),
    ) -> usize {
        let mut keys = 0;
        let mut start = 0;
        let ends = crate::lines::line_ends(piece)
            .chain((piece.last().is_some_and(|&b| b != b'\n')).then_some(piece.len()));
        for line_end in ends {
            let mut e = line_end;
            if e > start && piece[e - 1] == b'\r' {
                e -= 1;
            }
            if e > start || keep_empty {
                f(&piece[start..e]);
                keys += 1;
            }
            start = line_end + 1;
        }
        keys
    }

    /// The window cut at line ends into about `parts` pieces of similar size, in order.
    pub(crate) fn pieces(&self, parts: usize) -> Vec<&[u8]> {
        let data = self.data;
        let step = data.len().div_ceil(parts.max(1)).max(1);
        let mut out = Vec::with_capacity(parts);
        let mut start = 0;
        while start < data.len() {
            let want = (start + step).min(data.len());
            let end = if want == data.len() {
                want
            } else {
                memchr::memchr(b'\n', &data[want..]).map_or(data.len(), |i| want + i + 1)
            };
            out.push(&data[start..end]);
            start = end;
        }
        out
    }

    /// The hashes of the window's keys, in order, computed on every thread.
    pub(crate) fn hashes(&self, hash: impl Fn(&[u8]) -> u64 + Sync) -> Vec<u64> {
        let keep_empty = self.keep_empty;
        let parts: Vec<Vec<u64>> = self
            .pieces(rayon::current_num_threads() * 4)
            .into_par_iter()
            .map(|piece| {
                self.populate(piece);
                // ~65 bytes a line in typical inputs; the vector grows past a guess.
                let mut out = Vec::with_capacity(piece.len() / 32 + 16);
                Self::for_each_key(piece, keep_empty, |k| out.push(hash(k)));
                out
            })
            .collect();
        if parts.len() == 1 {
            return parts.into_iter().next().unwrap_or_default();
        }
        let mut all = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        for p in parts {
            all.extend_from_slice(&p);
        }
        all
    }

    /// The input line number of the window's key number `index` (for messages: it counts
    /// the lines of the whole input before the window).
    pub(crate) fn line_number(&self, index: usize) -> u64 {
        let mut seen = 0;
        let mut line = memchr::memchr_iter(b'\n', self.before).count() as u64;
        let mut start = 0;
        let data = self.data;
        for line_end in memchr::memchr_iter(b'\n', data)
            .chain((data.last().is_some_and(|&b| b != b'\n')).then_some(data.len()))
        {
            line += 1;
            let mut e = line_end;
            if e > start && data[e - 1] == b'\r' {
                e -= 1;
            }
            if e > start || self.keep_empty {
                if seen == index {
                    return line;
                }
                seen += 1;
            }
            start = line_end + 1;
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(data: &[u8], keep_empty: bool, parts: usize) -> Vec<Vec<u8>> {
        // The bytes in a mapping of their own, as windows are (`populate` advises it).
        let mut anon = memmap2::MmapOptions::new()
            .len(data.len().max(1))
            .map_anon()
            .unwrap();
        anon[..data.len()].copy_from_slice(data);
        let map = anon.make_read_only().unwrap();
        let w = Window {
            map: &map,
            data: &map[..data.len()],
            before: b"",
            keep_empty,
        };
        // A slice outside the mapping is not advised (and does not panic).
        w.populate(b"elsewhere");
        let mut out = Vec::new();
        for piece in w.pieces(parts) {
            w.populate(piece);
            Window::for_each_key(piece, keep_empty, |k| out.push(k.to_vec()));
        }
        out
    }

    #[test]
    fn pieces_and_keys_follow_the_input_policy() {
        let data = b"a\r\n\nbb\n\r\nccc\rx\nlast\r";
        for parts in [1, 2, 3, 7, 100] {
            assert_eq!(
                keys_of(data, false, parts),
                vec![
                    b"a".to_vec(),
                    b"bb".to_vec(),
                    b"ccc\rx".to_vec(),
                    b"last".to_vec()
                ],
                "{parts} parts"
            );
            assert_eq!(keys_of(data, true, parts).len(), 6, "{parts} parts");
        }
        assert!(keys_of(b"", false, 4).is_empty());
        assert_eq!(
            keys_of(b"\n\n", true, 2),
            vec![Vec::<u8>::new(), Vec::new()]
        );
    }

    #[test]
    fn windows_cover_the_file_in_whole_lines_and_count_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.txt");
        // Lines of every length up to 3 windows' worth, one longer than a window.
        let mut data = Vec::new();
        let mut n = 0u64;
        while data.len() < 3 * WINDOW_BYTES {
            data.extend(std::iter::repeat_n(b'x', (n % 977) as usize));
            data.push(b'\n');
            n += 1;
            if n == 5000 {
                data.extend(std::iter::repeat_n(b'y', WINDOW_BYTES + 10));
                data.push(b'\n');
                n += 1;
            }
        }
        data.extend_from_slice(b"tail");
        n += 1;
        std::fs::write(&path, &data).unwrap();
        let mut m = MappedInput::open(&Source::File(path), true, Progress::hidden())
            .unwrap()
            .unwrap();
        let mut joined = Vec::new();
        let mut lines = 0u64;
        let mut windows = 0;
        m.for_each_window(|w| {
            assert_eq!(w.before.len(), joined.len());
            assert!(w.data.ends_with(b"\n") || w.data.ends_with(b"tail"));
            let here = w.data.iter().filter(|&&b| b == b'\n').count() as u64;
            let keys = Window::for_each_key(w.data, true, |_| {});
            // Every line is a key (keep_empty); the key after the first is on line
            // lines + 2.
            if keys > 1 {
                assert_eq!(w.line_number(1), lines + 2);
            }
            lines += here + u64::from(w.data.ends_with(b"tail"));
            joined.extend_from_slice(w.data);
            windows += 1;
            Ok(keys)
        })
        .unwrap();
        assert_eq!(joined, data);
        assert_eq!(lines, n);
        // Short lines (~490 bytes on average) make windows of WINDOW_KEYS keys larger
        // than WINDOW_BYTES: WINDOW_BYTES windows after the first (1 MiB), about five in
        // all for three windows' worth of lines.
        assert!(windows <= 8, "{windows} windows");
    }

    #[test]
    fn windows_shrink_for_very_short_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.txt");
        std::fs::write(&path, b"a\n".repeat(4 << 20)).unwrap();
        let mut m = MappedInput::open(&Source::File(path), false, Progress::hidden())
            .unwrap()
            .unwrap();
        let mut most = 0;
        let mut total = 0;
        m.for_each_window(|w| {
            let keys = Window::for_each_key(w.data, false, |_| {});
            most = most.max(keys);
            total += keys;
            Ok(keys)
        })
        .unwrap();
        assert_eq!(total, 4 << 20);
        // The first window (1 MiB) holds 2^19 keys; later ones about WINDOW_KEYS.
        assert!(most <= FIRST_WINDOW_BYTES / 2, "{most}");
    }

    #[test]
    fn pipes_and_empty_files_are_not_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        std::fs::write(&path, b"").unwrap();
        assert!(
            MappedInput::open(&Source::File(path), false, Progress::hidden())
                .unwrap()
                .is_none()
        );
        assert!(MappedInput::open(&Source::Stdin, false, Progress::hidden())
            .unwrap()
            .is_none());
    }
}
