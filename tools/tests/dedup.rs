//! `bloomforge dedup` end to end against a `HashSet` model.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::support;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn tmp(name: &str) -> PathBuf {
    support::tmp_in("dedup", name)
}

/// 100 000 lines over 20 000 distinct values (each repeated nearby), with 1 MiB of 3-bit
/// cells (2.8M cells) the filter remembers ~10^6 lines back, far more than the stream:
/// every printed line is a first occurrence, in input order, printed once, and the
/// distinct lines not printed are false positives. Their count is Binomial(20 000, p)
/// with p at most --fp = 0.001 (below it before the stable point): more than 60 has
/// probability below 1e-12. Fixed seeds.
#[test]
fn prints_first_occurrences_in_order() {
    let mut lines = Vec::new();
    let mut x = 1u64;
    for i in 0..100_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = if i % 5 == 0 {
            i / 5
        } else {
            (i / 5).saturating_sub((x >> 33) % 50)
        };
        lines.push(format!("value-{v}"));
    }
    let path = tmp("in.txt");
    std::fs::write(&path, lines.join("\r\n")).unwrap();
    let out = bin()
        .args(["dedup", "--memory", "1M", "--fp", "0.001", "-q"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    let text = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = text.lines().collect();
    let mut seen = HashSet::new();
    let firsts: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| seen.insert(*l))
        .collect();
    assert_eq!(firsts.len(), 20_000);
    // `got` is a subsequence of `firsts`.
    let mut it = firsts.iter();
    for g in &got {
        assert!(it.any(|f| f == g), "{g} printed out of order or twice");
    }
    let missing = firsts.len() - got.len();
    assert!(missing <= 60, "{missing} first occurrences dropped");

    // The same from stdin, byte for byte (the run is reproducible).
    let mut child = bin()
        .args(["dedup", "--memory", "1M", "--fp", "0.001", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = lines.join("\n");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes()).unwrap();
    });
    let again = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
}

/// In 1 KiB the filter forgets: a line repeated after 50 000 others is printed again.
#[test]
fn forgets_what_is_far_back_and_reports_bad_options() {
    let mut lines = vec!["first".to_string()];
    lines.extend((0..50_000).map(|i| format!("other {i}")));
    lines.push("first".to_string());
    let path = tmp("far.txt");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = bin()
        .args(["dedup", "--memory", "1K"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().filter(|l| *l == "first").count(), 2);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("lines apart may print again"), "{err}");

    for bad in [["--memory", "0"], ["--fp", "1.5"], ["--cell-bits", "9"]] {
        let out = bin().arg("dedup").args(bad).arg(&path).output().unwrap();
        assert!(!out.status.success(), "{bad:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("bloomforge: ") && err.lines().count() == 1,
            "{bad:?}: {err}"
        );
    }
}
