//! Temporary files and directories are removed on success, on error (their owners
//! remove them on drop) and on interruption: the handler installed by [`install`] runs on
//! SIGINT (Ctrl-C), SIGTERM and SIGHUP (the `ctrlc` crate's `termination` feature),
//! removes every registered path, then exits with status 130 whichever signal it was
//! (signals ignored at start, such as SIGHUP under `nohup`, stay ignored).
//! Once it has started, `main` does not exit by itself ([`wait_if_interrupted`]): an
//! interrupted run always ends with status 130, never with an error caused by the
//! removal of its own temporary files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Set by the handler before it removes anything.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit status of an interrupted run (128 + SIGINT, as a shell reports Ctrl-C).
pub(crate) const INTERRUPTED_STATUS: i32 = 130;

/// Installs the handler for SIGINT, SIGTERM and SIGHUP. Called once by `main`. A signal
/// that was ignored when the process started stays ignored (as GNU `sort` does): under
/// `nohup` a hangup does not stop the run, and a background job of a non-interactive
/// shell (SIGINT ignored) is not interrupted by the terminal's Ctrl-C.
pub(crate) fn install() {
    #[cfg(unix)]
    let ignored: Vec<libc::c_int> = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
        .into_iter()
        .filter(|&s| is_ignored(s))
        .collect();
    // An error means a handler is already installed (not by this tool): keep it.
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        let paths = match PATHS.lock() {
            Ok(p) => p.clone(),
            Err(p) => p.into_inner().clone(),
        };
        for p in paths {
            remove(&p);
        }
        eprintln!("bloomforge: interrupted; temporary files removed");
        // `_exit`, not `std::process::exit`: the latter flushes stdout, which takes its
        // lock, and a main thread blocked writing to a full pipe holds that lock for as
        // long as the reader waits, so the process never ended.
        #[cfg(unix)]
        // SAFETY: `_exit` ends the process at once; it has no precondition, and nothing
        // of ours needs to run after it (the temporary files are removed above).
        unsafe {
            libc::_exit(INTERRUPTED_STATUS)
        };
        #[cfg(not(unix))]
        std::process::exit(INTERRUPTED_STATUS);
    });
    #[cfg(unix)]
    for s in ignored {
        // SAFETY: `signal` with `SIG_IGN` installs no code of ours; it only sets the
        // disposition `ctrlc` replaced back to "ignore".
        unsafe {
            libc::signal(s, libc::SIG_IGN);
        }
    }
}

/// Whether signal `sig` is ignored (`SIG_IGN`), e.g. SIGHUP under `nohup`.
#[cfg(unix)]
fn is_ignored(sig: libc::c_int) -> bool {
    // SAFETY: a zeroed `sigaction` is a valid out-parameter; a null new action only
    // queries the current disposition.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Removes a file or a directory tree. The command's threads keep running while the
/// handler works, so a file created in a directory between the listing and the `rmdir`
/// makes the removal fail: it is retried (the creating thread soon fails, its directory
/// gone).
fn remove(p: &Path) {
    for _ in 0..100 {
        let gone = match std::fs::symlink_metadata(p) {
            Err(_) => return,
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(p).is_ok(),
            Ok(_) => std::fs::remove_file(p).is_ok(),
        };
        if gone {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Whether the handler has started (the process is about to exit with status 130).
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Called by `main` before it exits: if the handler has started, waits for it to finish
/// and exit the process (the command may have failed only because its temporary files
/// were being removed under it).
pub(crate) fn wait_if_interrupted() {
    if interrupted() {
        loop {
            std::thread::park();
        }
    }
}

/// Registers a temporary file or directory (just created) to remove on interruption.
/// If the handler has already taken its list, the path is removed here and the caller
/// waits for the handler to exit the process.
pub(crate) fn register(path: &Path) {
    if let Ok(mut p) = PATHS.lock() {
        p.push(path.to_path_buf());
    }
    if interrupted() {
        remove(path);
        wait_if_interrupted();
    }
}

/// Forgets a path (removed, or renamed into place).
pub(crate) fn unregister(path: &Path) {
    if let Ok(mut p) = PATHS.lock() {
        p.retain(|q| q != path);
    }
}

/// A temporary directory (tempfile crate) that is removed on drop and on interruption.
pub(crate) struct TempDir {
    dir: tempfile::TempDir,
}

impl TempDir {
    /// Creates `bloomforge-*` in `parent` (default: the system temp dir).
    pub(crate) fn new(parent: Option<&Path>) -> crate::error::Result<Self> {
        let parent = parent
            .map(Path::to_path_buf)
            .unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("bloomforge-")
            .tempdir_in(&parent)
            .map_err(|e| crate::error::CliError::io(&parent, e))?;
        register(dir.path());
        Ok(TempDir { dir })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Removes the directory now and reports a failure (a drop removes it silently).
    pub(crate) fn close(self) -> std::io::Result<()> {
        unregister(self.dir.path());
        // The drop that follows finds nothing left to remove.
        std::fs::remove_dir_all(self.dir.path())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        unregister(self.dir.path());
    }
}
