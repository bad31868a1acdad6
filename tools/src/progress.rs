//! Progress on stderr (indicatif): bytes, throughput and ETA, only when stderr is a
//! terminal and `-q` was not given.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences every progress bar (`-q`).
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `-q` was given (commands also drop their summary lines then).
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A byte counter shown as a bar (known total) or a spinner (stdin), or nothing.
#[derive(Clone)]
pub(crate) struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar for `what` over `total` bytes (`None`: unknown, e.g. stdin).
    pub(crate) fn bytes(what: &str, total: Option<u64>) -> Self {
        if quiet() || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = match total {
            Some(t) => ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr())
                .with_style(
                    ProgressStyle::with_template(
                        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
                    )
                    .expect("static template")
                    .progress_chars("=> "),
                ),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(
                ProgressStyle::with_template("{msg} {spinner} {bytes} {bytes_per_sec}")
                    .expect("static template"),
            ),
        };
        bar.set_message(what.to_string());
        Progress(Some(bar))
    }

    /// No progress shown.
    pub(crate) fn hidden() -> Self {
        Progress(None)
    }

    /// Advances by `n` bytes.
    pub(crate) fn inc(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// Prints a summary line on stderr unless `-q`.
macro_rules! note {
    ($($arg:tt)*) => {
        if !$crate::progress::quiet() {
            eprintln!($($arg)*);
        }
    };
}
pub(crate) use note;
