//! Shared by the integration tests: one temporary directory per test binary, removed
//! when the binary exits (on Unix; set `BLOOMFORGE_KEEP_TEST_DIR` to keep it, e.g. to
//! look at a failed test's files).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Removes the directory at process exit (the test harness returns from `main` or calls
/// `exit`, both of which run `atexit` handlers; a killed run leaves it behind).
#[cfg(unix)]
extern "C" fn remove_dir() {
    if let Some(dir) = DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// This test binary's directory, `<temp>/bloomforge-<suite>-test-<pid>` (`suite` of the
/// first call: one binary passes one name): tests of one binary share it (they name their
/// files apart), and it is removed when the binary exits.
fn dir(suite: &str) -> &'static Path {
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("bloomforge-{suite}-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        #[cfg(unix)]
        if std::env::var_os("BLOOMFORGE_KEEP_TEST_DIR").is_none() {
            // SAFETY: registers a plain `extern "C" fn` with no arguments, as `atexit`
            // asks.
            unsafe { libc::atexit(remove_dir) };
        }
        dir
    })
}

/// The path of file `name` in this test binary's directory (see [`dir`]).
pub fn tmp_in(suite: &str, name: &str) -> PathBuf {
    dir(suite).join(name)
}
