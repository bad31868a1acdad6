//! `build --format`, `query`, `stats` and `convert` of Guava and Spark filters, against the
//! files the real libraries wrote (bloomforge-interop's `tests/data`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/interop/tests/data")
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    let out = bin().args(args).output().expect("runs");
    out
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A fixture key file as lines: strings (`s:`) as their bytes, longs (`l:`) in decimal.
/// Keys holding a line break cannot be lines and are left out (`skipped` counts them).
fn lines_of(kind: &str) -> (Vec<u8>, Vec<bool>) {
    let text = std::fs::read_to_string(data().join(kind)).expect("key file");
    let (mut out, mut kept) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let (t, v) = line.split_once(':').expect("typed");
        let bytes = match t {
            "s" => unhex(v),
            "l" => v.as_bytes().to_vec(),
            _ => panic!("{line}"),
        };
        let ok = !bytes.contains(&b'\n') && !bytes.contains(&b'\r');
        kept.push(ok);
        if ok {
            out.extend_from_slice(&bytes);
            out.push(b'\n');
        }
    }
    (out, kept)
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

#[test]
fn cli_builds_the_libraries_bytes_and_answers_their_filters() {
    let dir = tempfile::tempdir().expect("tempdir");
    // (fixture, format, key type, keys, probes, expected items, fp)
    let cases = [
        (
            "guava-strings-1000-0.01",
            "guava",
            "string",
            "keys-strings.txt",
            "probes-strings.txt",
            "1000",
            "0.01",
        ),
        (
            "guava-longs-2000-0.03",
            "guava",
            "long",
            "keys-longs.txt",
            "probes-longs.txt",
            "2000",
            "0.03",
        ),
        (
            "spark1-strings-2000-0.03",
            "spark-v1",
            "string",
            "keys-strings.txt",
            "probes-strings.txt",
            "2000",
            "0.03",
        ),
        (
            "spark2-longs-2000-0.001",
            "spark-v2",
            "long",
            "keys-longs.txt",
            "probes-longs.txt",
            "2000",
            "0.001",
        ),
    ];
    for (name, format, key_type, keys, probes, n, fp) in cases {
        let (key_lines, kept) = lines_of(keys);
        let keys_path = dir.path().join(format!("{name}.keys"));
        std::fs::write(&keys_path, &key_lines).expect("write keys");
        let theirs = std::fs::read(data().join(format!("{name}.bin"))).expect("bin");
        let all_kept = kept.iter().all(|&k| k);

        // Built by the CLI: the library's bytes (when every key could be a line).
        let ours = dir.path().join(format!("{name}.out"));
        let out = run(&[
            os("build"),
            keys_path.as_os_str(),
            os("-o"),
            ours.as_os_str(),
            os("--format"),
            os(format),
            os("--key-type"),
            os(key_type),
            os("--expected"),
            os(n),
            os("--fp"),
            os(fp),
            os("--keep-empty"),
            os("-q"),
        ]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if all_kept {
            assert!(
                std::fs::read(&ours).expect("ours") == theirs,
                "{name}: bytes differ"
            );
        }

        // The library's file queried by the CLI: every key, and the library's answers on
        // the probes.
        let bin = data().join(format!("{name}.bin"));
        let out = run(&[
            os("query"),
            bin.as_os_str(),
            keys_path.as_os_str(),
            os("--key-type"),
            os(key_type),
            os("--keep-empty"),
            os("-q"),
        ]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, key_lines, "{name}: every key is present");

        let (probe_lines, probe_kept) = lines_of(probes);
        let probes_path = dir.path().join(format!("{name}.probes"));
        std::fs::write(&probes_path, &probe_lines).expect("write probes");
        let answers =
            std::fs::read_to_string(data().join(format!("{name}.answers"))).expect("answers");
        let mut expected = Vec::new();
        let mut lines = probe_lines.split(|&b| b == b'\n');
        for (kept, answer) in probe_kept.iter().zip(answers.trim_end().chars()) {
            if *kept {
                let line = lines.next().expect("a line");
                if answer == '1' {
                    expected.extend_from_slice(line);
                    expected.push(b'\n');
                }
            }
        }
        let out = run(&[
            os("query"),
            bin.as_os_str(),
            probes_path.as_os_str(),
            os("--key-type"),
            os(key_type),
            os("--keep-empty"),
            os("-q"),
        ]);
        assert!(out.status.success());
        assert_eq!(out.stdout, expected, "{name}: the library's probe answers");

        // stats names the format; convert to the same format keeps the bytes.
        let out = run(&[os("stats"), bin.as_os_str(), os("--json")]);
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert!(text.contains(&format!("\"format\":\"{format}\"")), "{text}");
        let copy = dir.path().join(format!("{name}.copy"));
        let out = run(&[
            os("convert"),
            bin.as_os_str(),
            os("-o"),
            copy.as_os_str(),
            os("--to"),
            os(format),
            os("-q"),
        ]);
        assert!(out.status.success());
        assert!(std::fs::read(&copy).expect("copy") == theirs);
    }
}

#[test]
fn inexact_conversions_and_bad_files_are_refused_in_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guava = data().join("guava-strings-1000-0.01.bin");
    let out_path = dir.path().join("out");
    let out = run(&[
        os("convert"),
        guava.as_os_str(),
        os("-o"),
        out_path.as_os_str(),
        os("--to"),
        os("spark-v2"),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot be converted to spark-v2 exactly")
            && err.contains("--format spark-v2"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!out_path.exists(), "nothing written");

    // A truncated file: one line naming the file and the cause, exit status 1.
    let bytes = std::fs::read(&guava).expect("bin");
    let cut = dir.path().join("cut.guava");
    std::fs::write(&cut, &bytes[..100]).expect("write");
    let keys = dir.path().join("keys.txt");
    std::fs::write(&keys, "a\n").expect("write");
    let out = run(&[os("query"), cut.as_os_str(), keys.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cut.guava") && err.contains("truncated"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // A line that is not an integer under --key-type long names the file and line.
    let spark = data().join("spark2-longs-2000-0.03.bin");
    std::fs::write(&keys, "12\nx\n").expect("write");
    let out = run(&[
        os("query"),
        spark.as_os_str(),
        keys.as_os_str(),
        os("--key-type"),
        os("long"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("keys.txt:2") && err.contains("not a 64-bit integer"),
        "{err}"
    );

    // Sizes the library refuses are refused before reading the keys.
    let out = run(&[
        os("build"),
        keys.as_os_str(),
        os("-o"),
        out_path.as_os_str(),
        os("--format"),
        os("guava"),
        os("--expected"),
        os("1"),
        os("--fp"),
        os("0.9"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 bits"));
}
