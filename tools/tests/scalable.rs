//! `build --kind scalable` end to end: one pass (stdin too), every key found, the FP bound,
//! stats, merge of two scalable filters, and the errors.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn tmp(name: &str) -> PathBuf {
    support::tmp_in("scalable", name)
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// 300 000 keys into a filter that starts at 65 536 and grows; 100 000 other keys
/// queried: the count of false positives is below the (1 - 1e-6) quantile of
/// Binomial(100 000, 0.01), 1 153 (the scalable filter's rate is at most --fp; fixed seed).
#[test]
fn grows_in_one_pass_and_keeps_the_bound() {
    let (a, b) = (tmp("a.txt"), tmp("b.txt"));
    let lines = |r: std::ops::Range<u64>| r.map(|i| format!("key {i}\n")).collect::<String>();
    std::fs::write(&a, lines(0..300_000)).unwrap();
    std::fs::write(&b, lines(300_000..400_000)).unwrap();
    let fa = tmp("a.bloom");
    ok(bin()
        .args(["build", "--kind", "scalable", "-q", "-o"])
        .arg(&fa)
        .arg(&a)
        .output()
        .unwrap());
    let stats = ok(bin().arg("stats").arg(&fa).output().unwrap());
    assert!(
        stats.contains("layout\tscalable") && stats.contains("slices\t3"),
        "{stats}"
    );
    let found = ok(bin()
        .args(["query", "-q"])
        .arg(&fa)
        .arg(&a)
        .output()
        .unwrap());
    assert_eq!(found.lines().count(), 300_000);
    let fp = ok(bin()
        .args(["query", "-q"])
        .arg(&fa)
        .arg(&b)
        .output()
        .unwrap());
    assert!(
        fp.lines().count() <= 1153,
        "{} false positives",
        fp.lines().count()
    );

    // From stdin (read once: no counting pass), then merged with the first.
    let fb = tmp("b.bloom");
    let mut child = bin()
        .args(["build", "--kind", "scalable", "-q", "-o"])
        .arg(&fb)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        &std::fs::read(&b).unwrap(),
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    let fab = tmp("ab.bloom");
    ok(bin()
        .args(["merge", "-q", "-o"])
        .arg(&fab)
        .arg(&fa)
        .arg(&fb)
        .output()
        .unwrap());
    for keys in [&a, &b] {
        let out = ok(bin()
            .args(["query", "-q", "--absent"])
            .arg(&fab)
            .arg(keys)
            .output()
            .unwrap());
        assert!(out.is_empty(), "a merged key is missing");
    }

    // Errors: another layout, a bits-per-key budget.
    let fc = tmp("c.bloom");
    ok(bin()
        .args(["build", "-q", "-o"])
        .arg(&fc)
        .arg(&b)
        .output()
        .unwrap());
    merge_refused(&fa, &fc, "x.bloom");
    let out = bin()
        .args(["build", "--kind", "scalable", "--bits-per-key", "10", "-o"])
        .arg(tmp("y.bloom"))
        .arg(&b)
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// `--kind scalable-standard`: a stack of standard slices, smaller than `scalable` on the
/// same keys, every key found, its name in `stats`, and no merge with a blocked stack.
#[test]
fn standard_slices_are_smaller_and_stay_apart() {
    let a = tmp("std-a.txt");
    let lines = (0..200_000u64)
        .map(|i| format!("std {i}\n"))
        .collect::<String>();
    std::fs::write(&a, lines).unwrap();
    let (fs, fb) = (tmp("std.bloom"), tmp("blk.bloom"));
    for (kind, out) in [("scalable-standard", &fs), ("scalable", &fb)] {
        ok(bin()
            .args(["build", "--kind", kind, "--expected", "10000", "-q", "-o"])
            .arg(out)
            .arg(&a)
            .output()
            .unwrap());
    }
    let stats = ok(bin().arg("stats").arg(&fs).output().unwrap());
    assert!(stats.contains("layout\tscalable-standard"), "{stats}");
    let absent = ok(bin()
        .args(["query", "-q", "--absent"])
        .arg(&fs)
        .arg(&a)
        .output()
        .unwrap());
    assert!(absent.is_empty(), "a key is missing");
    let (s, b) = (
        std::fs::metadata(&fs).unwrap().len(),
        std::fs::metadata(&fb).unwrap().len(),
    );
    assert!(s < b, "standard {s} bytes, blocked {b}");
    merge_refused(&fs, &fb, "z.bloom");
}

/// `merge a b -o out` fails, naming the two layouts as different.
fn merge_refused(a: &std::path::Path, b: &std::path::Path, out: &str) {
    let run = bin()
        .args(["merge", "-o"])
        .arg(tmp(out))
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("different layouts"));
}
