//! Regular files as memory-mapped windows of whole lines, processed on every thread.
//!
//! [`crate::input`]'s block reader copies every byte out of the page cache with `read(2)`
//! and splits lines on one reader thread; for a regular file, `build` and `query` use this
//! path instead: the file is mapped read-only, walked in windows of [`WINDOW_BYTES`] cut at
//! line ends, and each window is cut again into pieces at line ends that rayon tasks split
//! and hash (and probe) in parallel, while the calling thread inserts or prints the window
//! before (and, beside a pool of its own, works the next window's unclaimed pieces once it
//! is done). No byte is copied, and no thread is left to split lines while the others wait.
//!
//! Memory: the pages of a window count in the resident set while it is processed; once a
//! window is done its whole pages are released (`madvise(MADV_DONTNEED)`: the mapping is
//! read-only, so a later access would re-read the file, never see other bytes), so at most
//! two windows (16 MiB each, or the longest line) of the input are resident at a time: the
//! one the caller consumes and the next, on the pool (one with [`Workers::Caller`], which
//! works and consumes each window on the calling thread). Windows are sized from an earlier
//! one's bytes per key to hold about 2^18 keys (64 KiB to 16 MiB; the first 1 MiB, and the second when two are in flight),
//! which bounds the per-key buffers of their users too. (Windows of at most 8 MiB cost
//! `query` of 100M URLs 6-9 % more time when a window was a round of tasks and a wait.)
//!
//! The key policy is [`crate::input`]'s: a key is a line without its `\n` and one `\r`
//! before it (or at the very end of the file); empty keys are skipped unless `keep_empty`.

use crate::error::{CliError, Result};
use crate::input::Source;
use crate::progress::Progress;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Most bytes of the file handled per window (then released).
pub(crate) const WINDOW_BYTES: usize = 16 << 20;

/// The first window's size, and the least a window shrinks to.
const FIRST_WINDOW_BYTES: usize = 1 << 20;
const MIN_WINDOW_BYTES: usize = 64 << 10;

/// Pieces a window is cut into per thread of the pool (a window's tasks).
const PIECES_PER_THREAD: usize = 4;

/// Pieces per thread of the pool when the caller helps ([`Workers::Pool`]): finer, so the
/// last pieces of a window end close together on both sides. A 2-thread build of 100M URLs
/// on 2 cores, alternated, three rounds each: 1.15-1.18 s with 16, 1.16-1.34 s with 8,
/// 1.23-1.28 s with 4 (and 1.37-1.48 s without helping).
const HELPED_PIECES_PER_THREAD: usize = 16;

/// Keys a window aims at: later windows are sized from an earlier one's bytes per key so
/// the hashes of a window (8 bytes a key, held up to three times: per piece, then joined
/// or grouped by range, then gathered per range) stay near 6 MiB, ~12 MiB for the two
/// windows in flight, even for inputs of very short lines.
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
    /// The mapping the window lies in, if any (pages [`Window::line_number`] reads again
    /// are released again).
    map: Option<&'a memmap2::Mmap>,
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

    /// Whether empty lines are keys.
    pub(crate) fn keep_empty(&self) -> bool {
        self.keep_empty
    }

    /// Processes the file window by window, two windows in flight: `work` runs on the
    /// threads of `workers`' pool for each piece of a window (a few per thread, cut at
    /// line ends), while `consume` runs on the calling thread for the window before, with
    /// its pieces' results in order. ([`Workers::Caller`]: one window at a time, each one
    /// piece, both run on the calling thread. [`Workers::Pool`]: the calling thread also
    /// works the unclaimed pieces of the window it waits for.) Windows are consumed in file
    /// order; a window's whole pages are released once it is consumed. `consume` returns the window's number of keys, which
    /// sizes later windows.
    ///
    /// Compared with one window at a time (pieces, then a wait for the last one, then the
    /// caller's part), the pool never idles at a window's end: the next window's pieces are
    /// queued while the last ones finish and while the caller inserts or prints. The cost is
    /// a second window of input in memory. The pages are mapped by the walk's own page
    /// faults (the kernel maps the page cache around each fault): asking for each piece's
    /// pages first with `MADV_POPULATE_READ`, which walks them one by one, took 9-12 % more
    /// time on Linux 6.18 (100M URLs, 2 threads, one interleaved run: pipelined walk with it
    /// / without it, `query` 1.03 / 0.94 s, `build` 1.77 / 1.34 s; the walk of one window at
    /// a time without it: 0.95 / 1.63 s).
    ///
    /// An error from `consume` stops the walk after the pieces in flight are done. The
    /// calling thread must not be one of the pool's (it waits for their results).
    pub(crate) fn for_each_window<T: Send>(
        &mut self,
        workers: Workers<'_>,
        work: impl Fn(&[u8]) -> T + Sync,
        mut consume: impl FnMut(&Window<'_>, Vec<T>) -> Result<usize>,
    ) -> Result<()> {
        let pool = match workers {
            Workers::Global => None,
            Workers::Pool(pool) => Some(pool),
            Workers::Caller => return self.for_each_window_here(work, consume),
        };
        // With a pool of its own (one thread fewer than the run's, see [`Workers::Pool`])
        // this thread works pieces itself instead of waiting for them: on 2 cores a build's
        // insert (this thread) takes less time than the split and hash of a window (the
        // pool's thread), and waiting left the difference of a core idle.
        let help = pool.is_some();
        /// A window's pieces, claimed in order by its tasks and (helping) by the caller.
        struct Pieces<'m> {
            pieces: Vec<&'m [u8]>,
            next: AtomicUsize,
        }
        impl<'m> Pieces<'m> {
            /// The next unclaimed piece, claimed.
            fn claim(&self) -> Option<(usize, &'m [u8])> {
                // A load first: exhausted windows are asked again, and should not count up.
                if self.next.load(Ordering::Relaxed) >= self.pieces.len() {
                    return None;
                }
                let i = self.next.fetch_add(1, Ordering::Relaxed);
                self.pieces.get(i).map(|p| (i, *p))
            }
        }
        /// A window whose pieces are on the pool (or, helping, partly on this thread).
        struct InFlight<'m, T> {
            window: Window<'m>,
            pieces: Arc<Pieces<'m>>,
            /// Results by piece; `left` of them are still out.
            results: Vec<Option<T>>,
            left: usize,
        }
        /// A piece's result, or the panic of its task.
        type Sent<T> = std::thread::Result<T>;
        // A pool thread waiting below could be the one its own tasks are queued on.
        debug_assert!(
            pool.map_or_else(rayon::current_thread_index, |p| p.current_thread_index())
                .is_none(),
            "for_each_window called from a thread of its own pool"
        );
        let threads = pool.map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
        let parts = threads
            * if help {
                HELPED_PIECES_PER_THREAD
            } else {
                PIECES_PER_THREAD
            };
        let map = &self.map;
        let len = map.len();
        let keep_empty = self.keep_empty;
        let work = &work;
        let walk = one_scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel::<(u64, usize, Sent<T>)>();
            let mut in_flight: std::collections::VecDeque<InFlight<'_, T>> = Default::default();
            // Sequence numbers of windows: the front of `in_flight` is `consumed`.
            let mut consumed = 0u64;
            let mut cut = 0u64;
            loop {
                while in_flight.len() < 2 && self.pos < len {
                    let window =
                        cut_window(map, &mut self.pos, self.window, keep_empty, &self.progress);
                    let pieces = Arc::new(Pieces {
                        pieces: window.pieces(parts),
                        next: AtomicUsize::new(0),
                    });
                    let n = pieces.pieces.len();
                    for _ in 0..n {
                        let tx = tx.clone();
                        let seq = cut;
                        let pieces = Arc::clone(&pieces);
                        scope.spawn(move |_| {
                            // Every piece is claimed once, by a task or by the caller.
                            let Some((i, piece)) = pieces.claim() else {
                                return;
                            };
                            // A panic is sent too (the caller re-raises it): a task that
                            // sent nothing for its piece would leave the caller waiting
                            // for ever. The receiver outlives the scope's tasks unless
                            // `consume` failed, and then the result is not wanted.
                            let result =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    work(piece)
                                }));
                            let _ = tx.send((seq, i, result));
                        });
                    }
                    in_flight.push_back(InFlight {
                        window,
                        pieces,
                        results: (0..n).map(|_| None).collect(),
                        left: n,
                    });
                    cut += 1;
                }
                let Some(front) = in_flight.front() else {
                    return Ok(());
                };
                if front.left > 0 {
                    // Helping: an unclaimed piece of the oldest window, else wait for a
                    // result (also taking the next window's pieces measured slower: it
                    // delays this thread's `consume`).
                    let claimed = help
                        .then(|| front.pieces.claim().map(|(i, p)| (0, i, p)))
                        .flatten();
                    let (k, i, result) = match claimed {
                        Some((k, i, piece)) => (k, i, work(piece)),
                        None => {
                            // Every claimed piece is sent once, its result or its panic;
                            // `tx` is held here, so this cannot hang up.
                            let (seq, i, result) = rx.recv().expect("a sender is alive");
                            let result =
                                result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                            ((seq - consumed) as usize, i, result)
                        }
                    };
                    let w = &mut in_flight[k];
                    w.results[i] = Some(result);
                    w.left -= 1;
                    continue;
                }
                let done = in_flight.pop_front().expect("front exists");
                let results = done.results.into_iter().flatten().collect();
                let keys = consume(&done.window, results)?;
                consumed += 1;
                self.window = next_window_bytes(done.window.data.len(), keys);
                let next = done.window.before.len() + done.window.data.len();
                release(map, &mut self.released, next);
            }
        });
        match pool {
            Some(pool) => pool.in_place_scope(walk),
            None => rayon::in_place_scope(walk),
        }
    }

    /// [`Workers::Caller`]: each window is one piece, worked and consumed on this thread.
    fn for_each_window_here<T>(
        &mut self,
        work: impl Fn(&[u8]) -> T,
        mut consume: impl FnMut(&Window<'_>, Vec<T>) -> Result<usize>,
    ) -> Result<()> {
        let map = &self.map;
        while self.pos < map.len() {
            let window = cut_window(
                map,
                &mut self.pos,
                self.window,
                self.keep_empty,
                &self.progress,
            );
            let keys = consume(&window, vec![work(window.data)])?;
            self.window = next_window_bytes(window.data.len(), keys);
            release(map, &mut self.released, self.pos);
        }
        Ok(())
    }
}

/// Where [`MappedInput::for_each_window`] runs the pieces.
#[derive(Clone, Copy)]
pub(crate) enum Workers<'p> {
    /// The global rayon pool.
    Global,
    /// This pool, and the calling thread while it waits for a window: it works the
    /// window's unclaimed pieces itself (for a pool of one thread fewer than the run's,
    /// beside a caller that has work of its own to do with each window).
    Pool(&'p rayon::ThreadPool),
    /// The calling thread, one window at a time (one thread in all).
    Caller,
}

/// The size of the window after one of `bytes` bytes that held `keys` keys.
fn next_window_bytes(bytes: usize, keys: usize) -> usize {
    (bytes.saturating_mul(WINDOW_KEYS) / keys.max(1)).clamp(MIN_WINDOW_BYTES, WINDOW_BYTES)
}

/// `f`, typed as a body for one `rayon` scope of one lifetime `'s` (a closure whose
/// parameter is written `&Scope<'_>` would have to accept every lifetime), so the same body
/// can go to [`rayon::in_place_scope`] or to [`rayon::ThreadPool::in_place_scope`].
fn one_scope<'s, R>(f: impl FnOnce(&rayon::Scope<'s>) -> R) -> impl FnOnce(&rayon::Scope<'s>) -> R {
    f
}

/// The window of `map` at `*pos`, aiming at `size` bytes (see [`window_end`]); moves `*pos`
/// past it and counts its bytes in `progress`.
fn cut_window<'m>(
    map: &'m memmap2::Mmap,
    pos: &mut usize,
    size: usize,
    keep_empty: bool,
    progress: &Progress,
) -> Window<'m> {
    let start = *pos;
    let end = window_end(map, start, size);
    progress.inc((end - start) as u64);
    *pos = end;
    Window {
        map: Some(map),
        data: &map[start..end],
        before: &map[..start],
        keep_empty,
    }
}

/// The end of the window that starts at `start` and aims at `size` bytes: after the last
/// line end in it; a line longer than the window is taken whole (up to its end or the
/// file's).
fn window_end(map: &[u8], start: usize, size: usize) -> usize {
    let len = map.len();
    let want = start.saturating_add(size).min(len);
    if want == len {
        return len;
    }
    match memchr::memrchr(b'\n', &map[start..want]) {
        Some(i) => start + i + 1,
        None => memchr::memchr(b'\n', &map[want..]).map_or(len, |i| want + i + 1),
    }
}

/// `madvise(MADV_DONTNEED)` over the whole pages from `*released` to `upto`.
fn release(map: &memmap2::Mmap, released: &mut usize, upto: usize) {
    let upto = upto / page_size() * page_size();
    if upto > *released {
        release_range(map, *released, upto);
        *released = upto;
    }
}

/// `madvise(MADV_DONTNEED)` over `start..end` of `map`, both multiples of the page size.
fn release_range(map: &memmap2::Mmap, start: usize, end: usize) {
    debug_assert!(
        start.is_multiple_of(page_size()) && end.is_multiple_of(page_size()) && end <= map.len()
    );
    // SAFETY: the mapping is read-only and this process never writes the file, so dropping
    // its pages changes no byte anyone can read: a later access (a slice still borrowed by
    // a window in flight, or `Window::line_number` reading `before` again) faults the same
    // bytes back in from the page cache, unless another process rewrites the file, as for
    // any mapped input. `start` and `end` are page-aligned, so no page outside the range is
    // touched.
    let _ = unsafe {
        map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
    };
}

/// The system's page size (4 KiB where it cannot be asked).
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        #[cfg(unix)]
        {
            // SAFETY: sysconf has no preconditions.
            let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            if let Ok(n) = usize::try_from(n) {
                if n.is_power_of_two() {
                    return n;
                }
            }
        }
        4096
    })
}

impl<'a> Window<'a> {
    /// The lines before the window. Those pages were released; they are read again one
    /// window's worth at a time and released again, so an error near the end of a large
    /// file does not bring the whole file back into memory.
    fn lines_before(&self) -> u64 {
        let mut lines = 0;
        for chunk in self.before.chunks(WINDOW_BYTES) {
            lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
            if let Some(map) = self.map {
                let at = chunk.as_ptr() as usize - map.as_ptr() as usize;
                let page = page_size();
                let (start, end) = (at.div_ceil(page) * page, (at + chunk.len()) / page * page);
                if start < end {
                    release_range(map, start, end);
                }
            }
        }
        lines
    }

    /// Calls `f` on every key of `piece` (whole lines of a window), in order; returns the
    /// number of keys.
    #[inline]
    pub(crate) fn for_each_key<'k>(
        piece: &'k [u8],
        keep_empty: bool,
        mut f: impl FnMut(&'k [u8]),
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
    pub(crate) fn pieces(&self, parts: usize) -> Vec<&'a [u8]> {
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

    /// The input line number of the window's key number `index` (for messages: it counts
    /// the lines of the whole input before the window).
    pub(crate) fn line_number(&self, index: usize) -> u64 {
        let mut seen = 0;
        let mut line = self.lines_before();
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
        // The bytes in a mapping of their own, as windows are.
        let mut anon = memmap2::MmapOptions::new()
            .len(data.len().max(1))
            .map_anon()
            .unwrap();
        anon[..data.len()].copy_from_slice(data);
        let map = anon.make_read_only().unwrap();
        let w = Window {
            map: None,
            data: &map[..data.len()],
            before: b"",
            keep_empty,
        };
        let mut out = Vec::new();
        for piece in w.pieces(parts) {
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
        m.for_each_window(
            Workers::Global,
            |piece| (piece.to_vec(), Window::for_each_key(piece, true, |_| {})),
            |w, pieces| {
                assert_eq!(w.before.len(), joined.len());
                assert!(w.data.ends_with(b"\n") || w.data.ends_with(b"tail"));
                // The pieces' results come in order and cover the window.
                assert_eq!(
                    pieces
                        .iter()
                        .flat_map(|p| p.0.iter().copied())
                        .collect::<Vec<u8>>(),
                    w.data
                );
                let here = w.data.iter().filter(|&&b| b == b'\n').count() as u64;
                let keys = Window::for_each_key(w.data, true, |_| {});
                assert_eq!(pieces.iter().map(|p| p.1).sum::<usize>(), keys);
                // Every line is a key (keep_empty); the key after the first is on line
                // lines + 2.
                if keys > 1 {
                    assert_eq!(w.line_number(1), lines + 2);
                }
                lines += here + u64::from(w.data.ends_with(b"tail"));
                joined.extend_from_slice(w.data);
                windows += 1;
                Ok(keys)
            },
        )
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
        let mut m = mapped_file(&dir, &b"a\n".repeat(4 << 20));
        let mut most = 0;
        let mut total = 0;
        m.for_each_window(
            Workers::Global,
            |piece| Window::for_each_key(piece, false, |_| {}),
            |_, counts| {
                let keys = counts.iter().sum();
                most = most.max(keys);
                total += keys;
                Ok(keys)
            },
        )
        .unwrap();
        assert_eq!(total, 4 << 20);
        // The first two windows (1 MiB) hold 2^19 keys; later ones about WINDOW_KEYS.
        assert!(most <= FIRST_WINDOW_BYTES / 2, "{most}");
    }

    fn mapped_file(dir: &tempfile::TempDir, data: &[u8]) -> MappedInput {
        let path = dir.path().join("k.txt");
        std::fs::write(&path, data).unwrap();
        MappedInput::open(&Source::File(path), false, Progress::hidden())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn given_workers_run_the_pieces_and_order_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..400_000u32)
            .flat_map(|i| format!("key-{i}\n").into_bytes())
            .collect();
        for threads in [0, 1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads.max(1))
                .build()
                .unwrap();
            // 0: on the calling thread.
            let workers = if threads == 0 {
                Workers::Caller
            } else {
                Workers::Pool(&pool)
            };
            let caller = std::thread::current().id();
            let mut m = mapped_file(&dir, &data);
            let mut joined = Vec::new();
            m.for_each_window(
                workers,
                |piece| {
                    // On the given pool's threads, or the caller's (it helps a pool).
                    assert!(
                        std::thread::current().id() == caller
                            || (threads > 0 && pool.current_thread_index().is_some())
                    );
                    piece.to_vec()
                },
                |w, pieces| {
                    let window: Vec<u8> = pieces.concat();
                    assert_eq!(window, w.data);
                    joined.extend_from_slice(&window);
                    Ok(Window::for_each_key(w.data, false, |_| {}))
                },
            )
            .unwrap();
            assert_eq!(joined, data, "{threads} threads");
        }
    }

    #[test]
    fn the_caller_works_the_pieces_a_busy_pool_has_not_started() {
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let dir = tempfile::tempdir().unwrap();
            let data: Vec<u8> = (0..300_000u32)
                .flat_map(|i| format!("key-{i}\n").into_bytes())
                .collect();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            // The pool's only thread is held until the last window is consumed: every piece
            // before that must be worked by the caller, or the walk would never end.
            let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
            pool.spawn(move || {
                // Bounded, so that a failed assertion below (which leaves the scope
                // waiting for this pool's tasks) ends as a failure, not a hang.
                let _ = release_rx.recv_timeout(std::time::Duration::from_secs(30));
            });
            let caller = std::thread::current().id();
            let mut m = mapped_file(&dir, &data);
            let mut joined = Vec::new();
            let mut windows = 0;
            m.for_each_window(
                Workers::Pool(&pool),
                |piece| {
                    assert_eq!(std::thread::current().id(), caller);
                    piece.to_vec()
                },
                |w, pieces| {
                    assert_eq!(pieces.concat(), w.data);
                    joined.extend_from_slice(w.data);
                    windows += 1;
                    if joined.len() == data.len() {
                        let _ = release_tx.send(());
                    }
                    Ok(Window::for_each_key(w.data, false, |_| {}))
                },
            )
            .unwrap();
            assert_eq!(joined, data);
            assert!(windows > 1, "{windows} windows");
            let _ = done_tx.send(());
        });
        done_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the walk did not end (or failed) while the pool was busy");
    }

    #[test]
    fn a_panicking_piece_panics_the_walk_instead_of_hanging() {
        // The global pool, and a pool of one thread that the caller helps: that thread is
        // held until the bad piece is reached, so the caller works it and the panic is the
        // caller's own.
        for helped in [false, true] {
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let dir = tempfile::tempdir().unwrap();
                let mut data = b"0123456789abcdef\n".repeat(1 << 17);
                data.extend_from_slice(b"boom\n");
                data.extend_from_slice(&b"0123456789abcdef\n".repeat(1 << 17));
                let mut m = mapped_file(&dir, &data);
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .unwrap();
                let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
                let workers = if helped {
                    pool.spawn(move || {
                        let _ = release_rx.recv_timeout(std::time::Duration::from_secs(30));
                    });
                    Workers::Pool(&pool)
                } else {
                    Workers::Global
                };
                let caller = std::thread::current().id();
                let walk = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    m.for_each_window(
                        workers,
                        |piece| {
                            if memchr::memmem::find(piece, b"boom").is_some() {
                                let _ = release_tx.send(());
                                if helped {
                                    assert_eq!(std::thread::current().id(), caller);
                                }
                                panic!("boom");
                            }
                            piece.len()
                        },
                        |_, _| Ok(1 << 16),
                    )
                }));
                let message = walk
                    .err()
                    .and_then(|p| p.downcast_ref::<&str>().map(|s| s.to_string()));
                let _ = done_tx.send(message);
            });
            let message = done_rx
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("the walk hung after a task panicked");
            assert_eq!(
                message.as_deref(),
                Some("boom"),
                "the piece's panic was not raised (helped: {helped})"
            );
        }
    }

    #[test]
    fn an_error_stops_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = mapped_file(&dir, &b"0123456789abcdef\n".repeat(1 << 18));
        let mut calls = 0;
        let e = m
            .for_each_window(
                Workers::Global,
                |piece| piece.len(),
                |_, _| {
                    calls += 1;
                    if calls == 2 {
                        return Err("stop".into());
                    }
                    Ok(1 << 16)
                },
            )
            .unwrap_err();
        assert_eq!(e.to_string(), "stop");
        assert_eq!(calls, 2);
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
