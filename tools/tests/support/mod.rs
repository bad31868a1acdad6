//! Shared by the integration tests: one temporary directory per test binary, removed
//! when the binary exits (on Unix; set `BLOOMFORGE_KEEP_TEST_DIR` to keep it, e.g. to
//! look at a failed test's files).

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use std::io::Read;
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

/// Sends `signal` (`INT`, `TERM`) to `child`, spawned with piped stdout and stderr and
/// writing more than a pipe holds, once its first output has arrived while its temporary
/// directory under `temp` exists; then checks that it stops with status 130, says it
/// removed its temporary files, and left `temp` empty.
#[cfg(unix)]
pub fn interrupt_mid_output(mut child: std::process::Child, temp: &Path, signal: &str) {
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4096];
    assert!(
        stdout.read(&mut first).unwrap() > 0,
        "no output before the signal"
    );
    assert_eq!(
        std::fs::read_dir(temp).unwrap().count(),
        1,
        "the run's temporary directory exists"
    );
    send_signal(&child, signal);
    let (status, err) = wait_with_stderr(&mut child);
    drop(stdout);
    assert_eq!(status.code(), Some(130), "SIG{signal}: {status:?} {err}");
    assert!(
        err.contains("interrupted; temporary files removed"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(temp).unwrap().collect();
    assert!(left.is_empty(), "SIG{signal}: left {left:?}");
}

/// Makes `cmd`'s process start with SIGINT and SIGTERM at their default disposition, so
/// a test that interrupts it works even where the test itself runs with them ignored (a
/// background job of a non-interactive shell starts with SIGINT ignored, and the CLI keeps
/// an ignored signal ignored, as `sort` does).
#[cfg(unix)]
pub fn with_default_signals(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // `signal`, which is async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        })
    }
}

/// Elsewhere there is nothing to reset.
#[cfg(not(unix))]
pub fn with_default_signals(cmd: &mut std::process::Command) -> &mut std::process::Command {
    cmd
}

/// Sends `signal` (a name such as `INT` or `HUP`) to `child` with `kill -s`.
pub fn send_signal(child: &std::process::Child, signal: &str) {
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -s {signal} {}", child.id()))
        .status()
        .unwrap();
    assert!(st.success(), "kill -s {signal}");
}

/// Waits for `child` and reads what it wrote to its (piped) stderr.
pub fn wait_with_stderr(child: &mut std::process::Child) -> (std::process::ExitStatus, String) {
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}
