//! The tool's error type: every failure is one line on stderr, naming the file it concerns.

use std::path::Path;

/// A failure of a command. `Display` is one line (the caller prefixes `bloomforge: `).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// An I/O error on a named file (or `stdin` / `stdout`).
    #[error("{name}: {source}")]
    Io {
        /// The file, as the user named it.
        name: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The temporary directory ran out of space.
    #[error("temp dir full: needs about {} in {dir}", human(*needed))]
    TempFull {
        /// Estimated temporary space the run needs, in bytes.
        needed: u64,
        /// The temporary directory.
        dir: String,
    },
    /// Anything else, already worded for the user.
    #[error("{0}")]
    Msg(String),
}

/// The tool's result type.
pub(crate) type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        CliError::Io {
            name: path.as_ref().display().to_string(),
            source,
        }
    }

    /// A message about `name`: `name: message`.
    pub(crate) fn at(name: impl std::fmt::Display, message: impl std::fmt::Display) -> Self {
        CliError::Msg(format!("{name}: {message}"))
    }
}

impl From<String> for CliError {
    fn from(s: String) -> Self {
        CliError::Msg(s)
    }
}

impl From<&str> for CliError {
    fn from(s: &str) -> Self {
        CliError::Msg(s.to_string())
    }
}

/// Whether an I/O error means "no space left on the device" (or over quota).
pub(crate) fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    ) || e.raw_os_error() == Some(28)
}

/// `N GB` (10^9 bytes, one decimal) from 0.1 GB on, `N MB` below.
fn human(bytes: u64) -> String {
    if bytes >= 100_000_000 {
        format!("{:.1} GB", bytes as f64 / 1e9)
    } else {
        format!("{} MB", bytes.div_ceil(1_000_000))
    }
}
