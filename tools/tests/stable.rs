//! `build --kind stable` end to end: sized by --memory or --cells, --cell-bits and --fp;
//! one pass (stdin too); read by `query` and `stats`; refused by `merge` and `remove`;
//! the parameter errors.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn tmp(name: &str) -> PathBuf {
    support::tmp_in("stable", name)
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(out: Output, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded; stderr: {err}");
    assert!(err.contains(says), "stderr does not say {says:?}: {err}");
}

fn lines(r: std::ops::Range<u64>) -> String {
    r.map(|i| format!("key {i}\n")).collect()
}

/// The value of `field` in `stats` output (`field<TAB>value` lines).
fn field(stats: &str, field: &str) -> String {
    stats
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}\t")))
        .unwrap_or_else(|| panic!("no {field} in {stats}"))
        .to_string()
}

/// A large filter that has not forgotten anything: 20 000 keys into 4 MiB of 4-bit cells
/// (8 388 608 cells, 1 % at the stable point: k = 7, P about 141). A key's cell takes
/// Binomial(20 000, P/m) decrements, mean 0.34, and is lost only after 15: all 140 000
/// cells of the keys survive with probability above 1 - 1e-13, so every key is found.
#[test]
fn memory_sized_filter_finds_its_keys_and_reports_its_shape() {
    let keys = tmp("a.txt");
    std::fs::write(&keys, lines(0..20_000)).unwrap();
    let f = tmp("a.bloom");
    ok(bin()
        .args([
            "build",
            "--kind",
            "stable",
            "--memory",
            "4M",
            "--cell-bits",
            "4",
            "--fp",
            "0.01",
            "-o",
        ])
        .arg(&f)
        .arg(&keys)
        .output()
        .unwrap());
    let stats = ok(bin().arg("stats").arg(&f).output().unwrap());
    assert_eq!(field(&stats, "layout"), "stable");
    assert_eq!(field(&stats, "cells"), ((4u64 << 20) / 8 * 16).to_string());
    assert_eq!(field(&stats, "cell_bits"), "4");
    assert_eq!(field(&stats, "bytes"), (4u64 << 20).to_string());
    assert_eq!(field(&stats, "hashes"), "7");
    assert_eq!(field(&stats, "inserts"), "20000");
    let stable_fp: f64 = field(&stats, "stable_false_pos").parse().unwrap();
    assert!(stable_fp <= 0.01 && stable_fp > 0.009, "{stable_fp}");
    let found = ok(bin()
        .args(["query", "-q"])
        .arg(&f)
        .arg(&keys)
        .output()
        .unwrap());
    assert_eq!(found.lines().count(), 20_000);
    let absent = ok(bin()
        .args(["query", "-q", "--absent"])
        .arg(&f)
        .arg(&keys)
        .output()
        .unwrap());
    assert!(absent.is_empty());

    // The same filter from stdin, read once (no counting pass, no spool file): the same
    // bytes, since the stream, sizes and seeds are the same.
    let g = tmp("a-stdin.bloom");
    let mut child = bin()
        .args([
            "build",
            "--kind",
            "stable",
            "--memory",
            "4M",
            "--cell-bits",
            "4",
            "-q",
            "-o",
        ])
        .arg(&g)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        &std::fs::read(&keys).unwrap(),
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(std::fs::read(&f).unwrap(), std::fs::read(&g).unwrap());
}

/// A small filter on a long stream reaches its stable point and forgets: 20 000 cells of
/// 3 bits at 1 % (k = 7, P = 64), 400 000 keys (20 m). Each insert decrements a cell at
/// most once, so the last 7 keys (Max) are always found; keys 390 000 inserts back are
/// found only as false positives. The false-positive count of 100 000 fresh keys is held
/// to the filter's own realised rate (`stats` expected_false_pos, about 1 %): given the
/// cells each fresh key is a false positive independently with that probability, and the
/// count stays within 5.5 standard deviations of its mean (normal approximation of a
/// binomial with mean ~1000, two-sided 4e-8) plus the rate's printed rounding. Fixed seeds.
#[test]
fn cells_sized_filter_reaches_its_stable_point_and_forgets() {
    let keys = tmp("long.txt");
    std::fs::write(&keys, lines(0..400_000)).unwrap();
    let f = tmp("long.bloom");
    ok(bin()
        .args(["build", "--kind", "stable", "--cells", "20000", "-q", "-o"])
        .arg(&f)
        .arg(&keys)
        .output()
        .unwrap());
    let stats = ok(bin().arg("stats").arg(&f).output().unwrap());
    assert_eq!(field(&stats, "cells"), "20000");
    assert_eq!(field(&stats, "cell_bits"), "3");
    assert_eq!(field(&stats, "decrements"), "64");
    let realised: f64 = field(&stats, "expected_false_pos").parse().unwrap();
    assert!(realised > 0.002 && realised < 0.03, "{realised}");

    let recent = tmp("recent.txt");
    std::fs::write(&recent, lines(400_000 - 7..400_000)).unwrap();
    let found = ok(bin()
        .args(["query", "-q"])
        .arg(&f)
        .arg(&recent)
        .output()
        .unwrap());
    assert_eq!(found.lines().count(), 7);
    let old = tmp("old.txt");
    std::fs::write(&old, lines(0..10_000)).unwrap();
    let found = ok(bin()
        .args(["query", "-q"])
        .arg(&f)
        .arg(&old)
        .output()
        .unwrap());
    assert!(
        found.lines().count() < 1_000,
        "{} old keys found",
        found.lines().count()
    );

    let fresh = tmp("fresh.txt");
    std::fs::write(&fresh, lines(1_000_000..1_100_000)).unwrap();
    let x = ok(bin()
        .args(["query", "-q"])
        .arg(&f)
        .arg(&fresh)
        .output()
        .unwrap())
    .lines()
    .count() as f64;
    let (q, p) = (100_000.0, realised);
    let tol = 5.5 * (q * p * (1.0 - p)).sqrt() + q * p * 1e-5;
    assert!(
        (x - q * p).abs() <= tol,
        "{x} false positives, expected {} +- {tol}",
        q * p
    );
}

/// `merge` and `remove` refuse a stable filter with a message that says why; bad sizes
/// are refused before anything is read or written.
#[test]
fn merge_remove_and_bad_parameters_are_refused() {
    let keys = tmp("m.txt");
    std::fs::write(&keys, lines(0..1000)).unwrap();
    let (a, b) = (tmp("m1.bloom"), tmp("m2.bloom"));
    for f in [&a, &b] {
        ok(bin()
            .args(["build", "--kind", "stable", "--memory", "64K", "-q", "-o"])
            .arg(f)
            .arg(&keys)
            .output()
            .unwrap());
    }
    let out = tmp("m12.bloom");
    fails(
        bin()
            .args(["merge", "-o"])
            .arg(&out)
            .arg(&a)
            .arg(&b)
            .output()
            .unwrap(),
        "stable filters cannot be merged",
    );
    assert!(!out.exists());
    fails(
        bin()
            .args(["merge", "-o"])
            .arg(&out)
            .arg(&a)
            .output()
            .unwrap(),
        "stable filters cannot be merged",
    );
    // A blocked filter merged with a stable one: the same refusal.
    let c = tmp("m3.bloom");
    ok(bin()
        .args(["build", "--expected", "1000", "-q", "-o"])
        .arg(&c)
        .arg(&keys)
        .output()
        .unwrap());
    fails(
        bin()
            .args(["merge", "-o"])
            .arg(&out)
            .arg(&c)
            .arg(&a)
            .output()
            .unwrap(),
        "stable filters cannot be merged",
    );
    fails(
        bin().args(["remove"]).arg(&a).arg(&keys).output().unwrap(),
        "cannot delete",
    );

    let x = tmp("x.bloom");
    let build = |extra: &[&str]| {
        let mut c = bin();
        c.args(["build", "-o"]).arg(&x).args(extra).arg(&keys);
        c.output().unwrap()
    };
    fails(
        build(&["--kind", "stable", "--bits-per-key", "10"]),
        "--bits-per-key",
    );
    fails(
        build(&["--kind", "stable", "--expected", "1000"]),
        "--expected",
    );
    fails(
        build(&["--kind", "stable", "--cell-bits", "9"]),
        "--cell-bits 9",
    );
    fails(build(&["--kind", "stable", "--memory", "4"]), "--memory 4");
    fails(
        build(&["--kind", "stable", "--memory", "1M", "--cells", "100"]),
        "--cells",
    );
    // 1e-9 with 8-bit cells in 100 cells: no P <= m reaches it.
    fails(
        build(&[
            "--kind",
            "stable",
            "--cells",
            "100",
            "--cell-bits",
            "8",
            "--fp",
            "1e-9",
        ]),
        "--cells 100",
    );
    fails(build(&["--memory", "1M"]), "--kind stable");
    fails(build(&["--cell-bits", "4"]), "--kind stable");
    assert!(!x.exists());
}
