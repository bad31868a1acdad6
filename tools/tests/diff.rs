//! `bloomforge diff` end to end against a `HashSet` model.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

use crate::support;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn tmp(name: &str) -> PathBuf {
    support::tmp_in("diff", name)
}

#[test]
fn lists_the_lines_only_in_each_file() {
    let a: Vec<String> = (0..20_000).map(|i| format!("row {i}")).collect();
    let mut b: Vec<String> = a.iter().filter(|l| !l.ends_with('7')).cloned().collect();
    b.retain(|l| !l.ends_with("13"));
    b.extend((0..150).map(|i| format!("new row {i}")));
    let (pa, pb) = (tmp("a.txt"), tmp("b.txt"));
    std::fs::write(&pa, a.join("\n") + "\n").unwrap();
    std::fs::write(&pb, b.join("\r\n")).unwrap();
    let out = bin()
        .args(["diff", "--expected-diff", "3000"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let sa: HashSet<&str> = a.iter().map(String::as_str).collect();
    let sb: HashSet<&str> = b.iter().map(String::as_str).collect();
    let want: Vec<String> = a
        .iter()
        .filter(|l| !sb.contains(l.as_str()))
        .map(|l| format!("<\t{l}"))
        .chain(
            b.iter()
                .filter(|l| !sa.contains(l.as_str()))
                .map(|l| format!(">\t{l}")),
        )
        .collect();
    assert!(want.len() > 2000);
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got, want);
}

#[test]
fn too_large_a_difference_fails_clearly() {
    let (pa, pb) = (tmp("big-a.txt"), tmp("big-b.txt"));
    std::fs::write(
        &pa,
        (0..5000).map(|i| format!("a{i}\n")).collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        &pb,
        (0..5000).map(|i| format!("b{i}\n")).collect::<String>(),
    )
    .unwrap();
    let out = bin()
        .args(["diff", "--expected-diff", "100"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exceeds") && err.contains("--expected-diff"),
        "{err}"
    );
    let same = bin()
        .args(["diff", "--expected-diff", "10"])
        .arg(&pa)
        .arg(&pa)
        .output()
        .unwrap();
    assert!(same.status.success() && same.stdout.is_empty());
    let stdin = bin()
        .args(["diff", "--expected-diff", "10", "-"])
        .arg(&pa)
        .output()
        .unwrap();
    assert!(!stdin.status.success());
}
