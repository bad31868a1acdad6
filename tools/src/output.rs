//! Output files are never left half-written: written to a temporary file beside the
//! final name, synced, then renamed into place; on any error the temporary file is
//! removed and the destination untouched.

use crate::error::{CliError, Result};
use crate::filter::AnyFilter;
use std::fs::{File, Permissions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes a serialized filter to `path` (see [`write_file`]).
pub(crate) fn write_filter(path: &Path, filter: &AnyFilter) -> Result<()> {
    write_file(path, |file| serialize(filter, file))
}

/// Replaces the filter file `path` in place (see [`replace_file`]).
pub(crate) fn replace_filter(path: &Path, filter: &AnyFilter) -> Result<()> {
    replace_file(path, |file| serialize(filter, file))
}

fn serialize(filter: &AnyFilter, file: &mut File) -> std::io::Result<()> {
    let bytes = filter.memory_bits() / 8;
    // Regular files only: on a pipe, O_DIRECT is packet mode (pipe(7)), where a reader's
    // short `read` loses the rest of a packet.
    if bytes >= DIRECT_MIN_BYTES && file.metadata()?.is_file() {
        let mut w = DirectWriter::new(file);
        filter.write_to(&mut w).map_err(std::io::Error::other)?;
        w.finish()
    } else {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        filter.write_to(&mut w).map_err(std::io::Error::other)?;
        w.flush()
    }
}

/// Filters from this size on are written past the page cache (see [`DirectWriter`]).
const DIRECT_MIN_BYTES: u64 = 16 << 20;

/// The size of a direct write, a multiple of every device's block size.
const DIRECT_CHUNK: usize = 2 << 20;

/// The alignment of the buffer, the file offsets and the lengths of direct writes.
const DIRECT_ALIGN: usize = 4096;

/// Writes a large file with `O_DIRECT` where the platform and the file system allow it,
/// through one aligned buffer of [`DIRECT_CHUNK`] bytes; the tail that does not fill a
/// whole chunk is written through the page cache.
///
/// Written by hand because it pays for the tool's main job: a buffered write puts every
/// byte of a filter into freshly allocated page-cache pages before the `fsync` sends them
/// to the disk, and allocating them is what costs. Measured on a 2-core virtual machine
/// (see `docs/benchmarks.md`): a 124 MB filter takes 0.30-0.33 s to `write` into cold
/// page-cache pages (`dd bs=4M conv=fsync` the same), against 0.04-0.05 s direct, synced
/// in both cases (`dd oflag=direct`). The data reaches the disk either way, since every output is synced
/// before it is renamed into place. Where `O_DIRECT` is refused (a file system without
/// it, an alignment the device does not accept: `EINVAL`), the writer goes on through the
/// page cache from the same offset. With one buffer, copying and the device's write do
/// not overlap: on a slow or network file system a direct write waits for the device
/// chunk by chunk, where a buffered one would wait at the `fsync` instead.
///
/// For regular files written from offset 0 (the temporary files of
/// [`write_via_temporary`]), so that every full chunk lands at an aligned offset.
struct DirectWriter<'a> {
    file: &'a mut File,
    /// `DIRECT_CHUNK + DIRECT_ALIGN` bytes, used from the aligned offset `start`.
    buf: Vec<u8>,
    start: usize,
    filled: usize,
    direct: bool,
    /// Chunks written with `O_DIRECT` (for the tests).
    direct_chunks: usize,
}

impl<'a> DirectWriter<'a> {
    fn new(file: &'a mut File) -> Self {
        let buf = vec![0u8; DIRECT_CHUNK + DIRECT_ALIGN];
        let start = buf.as_ptr().align_offset(DIRECT_ALIGN);
        let direct = set_direct(file, true).is_ok();
        DirectWriter {
            file,
            buf,
            start,
            filled: 0,
            direct,
            direct_chunks: 0,
        }
    }

    /// Writes the buffer's whole chunk (direct while allowed) and empties it.
    fn write_chunk(&mut self) -> std::io::Result<()> {
        let chunk = &self.buf[self.start..self.start + self.filled];
        let mut done = 0;
        while done < chunk.len() {
            match self.file.write(&chunk[done..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // A refused direct write moved nothing: go on buffered from here.
                Err(e) if self.direct && e.raw_os_error() == Some(EINVAL) => {
                    set_direct(self.file, false)?;
                    self.direct = false;
                }
                Err(e) => return Err(e),
            }
        }
        self.direct_chunks += usize::from(self.direct);
        self.filled = 0;
        Ok(())
    }

    /// Writes what is buffered (the tail through the page cache: its length need not be
    /// aligned) and leaves the file in buffered mode.
    fn finish(mut self) -> std::io::Result<()> {
        if self.direct {
            set_direct(self.file, false)?;
            self.direct = false;
        }
        self.write_chunk()
    }
}

impl Write for DirectWriter<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.filled == DIRECT_CHUNK {
            self.write_chunk()?;
        }
        let n = data.len().min(DIRECT_CHUNK - self.filled);
        let at = self.start + self.filled;
        self.buf[at..at + n].copy_from_slice(&data[..n]);
        self.filled += n;
        Ok(n)
    }

    /// Buffered bytes stay until a chunk is full or [`DirectWriter::finish`]: a direct
    /// write of a partial chunk would leave the file offset unaligned.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(target_os = "linux")]
const EINVAL: i32 = libc::EINVAL;
#[cfg(not(target_os = "linux"))]
const EINVAL: i32 = 22;

/// Turns `O_DIRECT` on or off for `file`.
#[cfg(target_os = "linux")]
fn set_direct(file: &File, on: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fcntl` with F_GETFL / F_SETFL reads and sets the status flags of a file
    // descriptor that `file` keeps open for the duration of the call.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let flags = if on {
        flags | libc::O_DIRECT
    } else {
        flags & !libc::O_DIRECT
    };
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn set_direct(_file: &File, on: bool) -> std::io::Result<()> {
    if on {
        Err(std::io::ErrorKind::Unsupported.into())
    } else {
        Ok(())
    }
}

/// Writes `path` with `body`: an existing regular file is replaced as by [`replace_file`],
/// a new file is written through a temporary file beside it. Other existing paths (a
/// device, a FIFO such as `/dev/stdout`) are written directly.
pub(crate) fn write_file(
    path: &Path,
    body: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => replace_file(path, body),
        Ok(_) => {
            let mut f = File::create(path).map_err(|e| CliError::io(path, e))?;
            body(&mut f).map_err(|e| CliError::io(path, e))
        }
        Err(_) => write_via_temporary(path, path, None, body),
    }
}

/// Replaces the regular file `path` through a temporary file beside it. A symbolic link
/// is followed (the file it names is replaced, the link stays) and the file's
/// permissions are kept.
pub(crate) fn replace_file(
    path: &Path,
    body: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let target = std::fs::canonicalize(path).map_err(|e| CliError::io(path, e))?;
    let metadata = std::fs::metadata(&target).map_err(|e| CliError::io(path, e))?;
    if !metadata.is_file() {
        return Err(CliError::at(
            path.display(),
            "not a regular file, cannot be replaced in place; use -o",
        ));
    }
    write_via_temporary(path, &target, Some(metadata.permissions()), body)
}

/// Writes a new temporary file beside `target` (`tempfile`: an unpredictable name, created
/// exclusively, so never through an existing file or link), with `permissions` if given,
/// syncs it, renames it to `target` and syncs the directory, so that the new name too
/// survives a crash. `shown` names the file in error messages.
fn write_via_temporary(
    shown: &Path,
    target: &Path,
    permissions: Option<Permissions>,
    body: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // A new file gets the mode `File::create` gives (0666 less the umask, applied by the
    // kernel at creation), not tempfile's private 0600; a replaced one keeps its own below.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| CliError::io(shown, e))?;
    let tmp_path: PathBuf = tmp.path().to_owned();
    crate::cleanup::register(&tmp_path);
    let result = (|| {
        let started = std::time::Instant::now();
        let file = tmp.as_file_mut();
        body(file)?;
        file.flush()?;
        let written = started.elapsed();
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        tmp.persist(target).map_err(|e| e.error)?;
        sync_dir(dir)?;
        if crate::verbose() {
            eprintln!(
                "{}: written in {:.3} s, synced and renamed in {:.3} s",
                shown.display(),
                written.as_secs_f64(),
                (started.elapsed() - written).as_secs_f64()
            );
        }
        Ok(())
    })();
    // On an error the temporary file was removed when `tmp` was dropped (or persisted).
    crate::cleanup::unregister(&tmp_path);
    result.map_err(|e| CliError::io(shown, e))
}

/// Syncs the directory `dir`, making a rename inside it durable (Unix; elsewhere the
/// rename is left to the file system).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomforge_core::BlockedBloomFilter;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 + i / 4093) as u8).collect()
    }

    /// `data` written through a [`DirectWriter`] in `piece`-byte writes, and whether its
    /// whole chunks went out with `O_DIRECT`; `misalign` moves its buffer off the
    /// alignment, so a direct write is refused (`EINVAL`) where the file system checks it
    /// and the writer goes on through the page cache.
    fn written_direct(data: &[u8], piece: usize, misalign: bool) -> (Vec<u8>, bool) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut file = File::create(&path).unwrap();
        let mut w = DirectWriter::new(&mut file);
        let started_direct = w.direct;
        if misalign {
            w.start += 1;
        }
        for c in data.chunks(piece) {
            w.write_all(c).unwrap();
        }
        w.flush().unwrap();
        let chunks = data.len().saturating_sub(1) / DIRECT_CHUNK;
        let all_direct = started_direct && w.direct_chunks == chunks;
        w.finish().unwrap();
        // The file is left in buffered mode.
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: F_GETFL on a descriptor `file` holds open.
            let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
            assert_eq!(flags & libc::O_DIRECT, 0);
        }
        file.sync_all().unwrap();
        drop(file);
        (std::fs::read(&path).unwrap(), all_direct)
    }

    #[test]
    fn direct_writes_give_the_same_bytes_at_every_length() {
        let c = DIRECT_CHUNK;
        for len in [0, 1, 4095, 4096, 4097, c - 1, c, c + 1, 3 * c + 12345] {
            let data = pattern(len);
            for piece in [1000, 4096, c + 7, usize::MAX] {
                if piece == 1000 && len > c + 1 {
                    continue; // slow for nothing new
                }
                for misalign in [false, true] {
                    let (bytes, all_direct) = written_direct(&data, piece, misalign);
                    assert!(
                        bytes == data,
                        "{len} bytes in {piece}-byte writes, misaligned: {misalign}"
                    );
                    // Where the temporary directory's file system takes O_DIRECT (ext4,
                    // xfs, tmpfs since Linux 6.6), aligned chunks go out direct.
                    if cfg!(target_os = "linux") && !misalign && direct_supported() {
                        assert!(all_direct, "{len} bytes in {piece}-byte writes");
                    }
                }
            }
        }
    }

    /// Whether the temporary directory's file system accepts `O_DIRECT` and an aligned
    /// direct write.
    fn direct_supported() -> bool {
        let dir = tempfile::tempdir().unwrap();
        let mut file = File::create(dir.path().join("probe")).unwrap();
        let mut w = DirectWriter::new(&mut file);
        if !w.direct {
            return false;
        }
        w.write_all(&pattern(DIRECT_CHUNK + 1)).unwrap();
        let direct = w.direct_chunks == 1;
        w.finish().unwrap();
        direct
    }

    /// A large filter written to a FIFO (`-o /dev/stdout | ...`) reaches a reader that
    /// reads in small pieces whole: no `O_DIRECT` (packet mode) on pipes.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_filters_written_to_a_fifo_arrive_whole() {
        let f = BlockedBloomFilter::with_num_bits(DIRECT_MIN_BYTES * 8)
            .hashes(7)
            .unwrap();
        let mut expected = Vec::new();
        f.write_to(&mut expected).unwrap();
        let filter = AnyFilter::Blocked(f);
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo only creates a file system node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Read;
                let mut file = File::open(&fifo).unwrap();
                let (mut got, mut buf) = (Vec::new(), [0u8; 100]);
                loop {
                    let n = file.read(&mut buf).unwrap();
                    if n == 0 {
                        break got;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
            })
        };
        write_filter(&fifo, &filter).unwrap();
        assert!(reader.join().unwrap() == expected);
    }

    #[test]
    fn large_filters_are_written_past_the_page_cache_with_the_same_bytes() {
        let mut f = BlockedBloomFilter::with_num_bits((DIRECT_MIN_BYTES * 8) + 12_345)
            .hashes(7)
            .unwrap();
        for i in 0..100_000u64 {
            f.insert(&i);
        }
        let mut expected = Vec::new();
        f.write_to(&mut expected).unwrap();
        let filter = AnyFilter::Blocked(f);
        assert!(filter.memory_bits() / 8 >= DIRECT_MIN_BYTES);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bloom");
        write_filter(&path, &filter).unwrap();
        assert!(std::fs::read(&path).unwrap() == expected);
        // Replaced in place too, and nothing else is left in the directory.
        replace_filter(&path, &filter).unwrap();
        assert!(std::fs::read(&path).unwrap() == expected);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
