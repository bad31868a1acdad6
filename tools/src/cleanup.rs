//! Temporary files and directories are removed on success, on error (their owners
//! remove them on drop) and on Ctrl-C: the handler installed by [`install`] removes every
//! registered path, then exits with status 130.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs the Ctrl-C (SIGINT, SIGTERM) handler. Called once by `main`.
pub(crate) fn install() {
    // An error means a handler is already installed (not by this tool): keep it.
    let _ = ctrlc::set_handler(|| {
        let paths = match PATHS.lock() {
            Ok(p) => p.clone(),
            Err(p) => p.into_inner().clone(),
        };
        for p in paths {
            if p.is_dir() {
                let _ = std::fs::remove_dir_all(&p);
            } else {
                let _ = std::fs::remove_file(&p);
            }
        }
        eprintln!("bloomforge: interrupted; temporary files removed");
        std::process::exit(130);
    });
}

/// Registers a temporary file or directory to remove on Ctrl-C.
pub(crate) fn register(path: &Path) {
    if let Ok(mut p) = PATHS.lock() {
        p.push(path.to_path_buf());
    }
}

/// Forgets a path (removed, or renamed into place).
pub(crate) fn unregister(path: &Path) {
    if let Ok(mut p) = PATHS.lock() {
        p.retain(|q| q != path);
    }
}

/// A temporary directory (tempfile crate) that is removed on drop and on Ctrl-C.
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
}

impl Drop for TempDir {
    fn drop(&mut self) {
        unregister(self.dir.path());
    }
}
