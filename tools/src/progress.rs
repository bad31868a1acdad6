//! Progress on stderr (indicatif): bytes read, bytes/s, keys read, keys/s and (when the
//! input's size is known) ETA, only when stderr is a terminal and `-q` was not given.
//! Bytes are counted as blocks are read and keys as blocks are split into lines
//! ([`crate::input::LineReader`] calls [`Progress::inc`] and [`Progress::inc_keys`]).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

static QUIET: AtomicBool = AtomicBool::new(false);

/// Silences every progress bar (`-q`).
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `-q` was given (commands also drop their summary lines then).
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A bar (known total) or a spinner (stdin) of bytes and keys, or nothing.
#[derive(Clone)]
pub(crate) struct Progress(Option<(ProgressBar, Arc<AtomicU64>)>);

/// `1234567` as `1.23M`.
fn human_count(x: f64) -> String {
    match x {
        x if x >= 1e9 => format!("{:.2}G", x / 1e9),
        x if x >= 1e6 => format!("{:.2}M", x / 1e6),
        x if x >= 1e4 => format!("{:.1}K", x / 1e3),
        x => format!("{x:.0}"),
    }
}

impl Progress {
    /// A bar for `what` over `total` bytes (`None`: unknown, e.g. stdin).
    pub(crate) fn bytes(what: &str, total: Option<u64>) -> Self {
        if quiet() || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        Self::to_target(what, total, ProgressDrawTarget::stderr())
    }

    fn to_target(what: &str, total: Option<u64>, target: ProgressDrawTarget) -> Self {
        let keys = Arc::new(AtomicU64::new(0));
        let template = match total {
            Some(_) => {
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}, {keys} keys \
                 {keys_per_sec}, ETA {eta}"
            }
            None => "{msg} {spinner} {bytes} {bytes_per_sec}, {keys} keys {keys_per_sec}",
        };
        let (k1, k2) = (keys.clone(), keys.clone());
        let style = ProgressStyle::with_template(template)
            .expect("static template")
            .progress_chars("=> ")
            .with_key(
                "keys",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}", human_count(k1.load(Ordering::Relaxed) as f64));
                },
            )
            .with_key(
                "keys_per_sec",
                move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let secs = s.elapsed().as_secs_f64();
                    let rate = if secs > 0.0 {
                        k2.load(Ordering::Relaxed) as f64 / secs
                    } else {
                        0.0
                    };
                    let _ = write!(w, "{} keys/s", human_count(rate));
                },
            );
        let bar = ProgressBar::with_draw_target(total, target).with_style(style);
        bar.set_message(what.to_string());
        Progress(Some((bar, keys)))
    }

    /// No progress shown.
    pub(crate) fn hidden() -> Self {
        Progress(None)
    }

    /// Advances by `n` bytes.
    pub(crate) fn inc(&self, n: u64) {
        if let Some((b, _)) = &self.0 {
            b.inc(n);
        }
    }

    /// Counts `n` more keys (shown on the next redraw).
    pub(crate) fn inc_keys(&self, n: u64) {
        if let Some((_, k)) = &self.0 {
            k.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        if let Some((b, _)) = &self.0 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A terminal that records what is drawn.
    #[derive(Debug, Default, Clone)]
    struct Screen(Arc<Mutex<String>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            200
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)?;
            self.write_str("\n")
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The last line drawn on `screen` after advancing `p`.
    fn draw(p: &Progress, screen: &Screen) -> String {
        p.inc(1 << 20);
        p.inc_keys(20_000);
        if let Some((b, _)) = &p.0 {
            b.tick();
        }
        let text = screen.0.lock().unwrap().clone();
        text.lines().last().unwrap_or_default().to_string()
    }

    #[test]
    fn bars_show_bytes_keys_rate_and_eta() {
        let screen = Screen::default();
        let p = Progress::to_target(
            "building keys.txt",
            Some(4 << 20),
            ProgressDrawTarget::term_like(Box::new(screen.clone())),
        );
        let line = draw(&p, &screen);
        for part in [
            "building keys.txt",
            "1.00 MiB/4.00 MiB",
            "20.0K keys ",
            " keys/s",
            "ETA",
        ] {
            assert!(line.contains(part), "{part:?} not in {line:?}");
        }
        // Stdin: no total, no ETA.
        let screen = Screen::default();
        let p = Progress::to_target(
            "building stdin",
            None,
            ProgressDrawTarget::term_like(Box::new(screen.clone())),
        );
        let line = draw(&p, &screen);
        for part in ["building stdin", "1.00 MiB", "20.0K keys ", " keys/s"] {
            assert!(line.contains(part), "{part:?} not in {line:?}");
        }
        assert!(!line.contains("ETA"), "{line:?}");
    }

    #[test]
    fn counts_are_readable() {
        assert_eq!(human_count(999.0), "999");
        assert_eq!(human_count(12_345.0), "12.3K");
        assert_eq!(human_count(2_500_000.0), "2.50M");
        assert_eq!(human_count(3.2e9), "3.20G");
    }
}
