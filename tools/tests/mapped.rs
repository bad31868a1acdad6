//! Regular files take the memory-mapped path of `build` and `query`, pipes the block
//! reader: both must give the same filter bytes and the same output, byte for byte, on
//! input that crosses windows (1 MiB, then up to 16 MiB) with CRLF, empty, non-UTF-8 and
//! very long lines, and a failed insert names the same input line either way.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn run(args: &[&str], stdin: Option<&Path>) -> Vec<u8> {
    let mut cmd = bin();
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(match stdin {
        Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
        None => Stdio::null(),
    });
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// ~29 MB of keys (several windows): URL-like lines, every 5th CRLF, every 11th empty,
/// some with bytes that are not UTF-8, one 17 MiB line (longer than a window) and a last
/// line without a terminator.
fn write_keys(path: &Path) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut x = 7u64;
    for i in 0..300_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if i % 11 == 0 {
            f.write_all(b"\n").unwrap();
            continue;
        }
        write!(f, "https://example.com/{}/{}", x >> 40, i % 1000).unwrap();
        if i % 13 == 0 {
            f.write_all(&[0xff, 0xfe, b'x']).unwrap();
        }
        if i == 150_000 {
            f.write_all(&vec![b'y'; 17 << 20]).unwrap();
        }
        f.write_all(if i % 5 == 0 { b"\r\n" } else { b"\n" })
            .unwrap();
    }
    f.write_all(b"last-line-without-newline").unwrap();
}

#[test]
fn mapped_files_and_pipes_agree() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.txt");
    write_keys(&keys);
    let k = keys.to_str().unwrap();
    let other: PathBuf = dir.path().join("other.txt");
    // Half of these are in the filter.
    let mut probe = std::fs::read(&keys).unwrap();
    probe.extend_from_slice(b"\nnot-in-the-filter-1\nnot-in-the-filter-2\r\n");
    std::fs::write(&other, &probe).unwrap();
    let o = other.to_str().unwrap();
    for kind in ["blocked", "split", "counting", "dleft"] {
        // Below 4 threads the main thread inserts blocked and split-block windows alone;
        // from 4 on the pool inserts them, one range of the filter per thread (the hashes
        // grouped by range in the worker tasks, or for a pipe in core's ranged insert).
        for threads in ["1", "3", "5"] {
            let mapped = dir.path().join(format!("{kind}-{threads}-mapped.bloom"));
            let piped = dir.path().join(format!("{kind}-{threads}-piped.bloom"));
            let common = ["-q", "--threads", threads, "build", "--kind", kind];
            let expected = ["--expected", "400000"];
            run(
                &[
                    &common[..],
                    &[k, "-o", mapped.to_str().unwrap()],
                    &expected[..],
                ]
                .concat(),
                None,
            );
            run(
                &[&common[..], &["-o", piped.to_str().unwrap()], &expected[..]].concat(),
                Some(&keys),
            );
            assert_eq!(
                std::fs::read(&mapped).unwrap(),
                std::fs::read(&piped).unwrap(),
                "{kind}, {threads} threads: filter bytes"
            );
            // Every thread count builds the one-thread filter (each path is checked against
            // the sequential insert, not only against the other input path).
            let first = dir.path().join(format!("{kind}-1-mapped.bloom"));
            assert_eq!(
                std::fs::read(&mapped).unwrap(),
                std::fs::read(&first).unwrap(),
                "{kind}, {threads} threads against 1 thread: filter bytes"
            );
            let m = mapped.to_str().unwrap();
            let mut modes: Vec<&[&str]> = vec![&[], &["--absent"]];
            if kind == "counting" || kind == "dleft" {
                modes.push(&["--count"]);
            }
            for mode in modes {
                let q = ["-q", "--threads", threads, "query", m];
                let from_file = run(&[&q[..], &[o], mode].concat(), None);
                let from_pipe = run(&[&q[..], mode].concat(), Some(&other));
                assert!(
                    from_file == from_pipe,
                    "{kind}, {threads} threads, {mode:?}"
                );
                let lines = from_file.split(|&b| b == b'\n').count();
                if mode == ["--absent"] {
                    // The two keys not in the filter (no false positive for either is
                    // likely; both being absent is what the filter says).
                    assert!(lines <= 3, "{kind} {mode:?}: {lines}");
                } else {
                    assert!(lines > 270_000, "{kind} {mode:?}: {lines}");
                }
            }
        }
    }
}

/// The line number in `bloomforge: NAME:LINE: ...` (the first `:`-separated number after
/// the name).
fn error_line(stderr: &[u8], name: &str) -> u64 {
    let text = String::from_utf8_lossy(stderr);
    let at = text
        .find(&format!("{name}:"))
        .unwrap_or_else(|| panic!("no '{name}:' in {text}"));
    text[at + name.len() + 1..]
        .split(':')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line number in {text}"))
}

#[test]
fn a_failed_insert_names_the_same_line_mapped_and_piped() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.txt");
    write_keys(&keys);
    let k = keys.to_str().unwrap();
    let out = dir.path().join("full.bloom");
    let o = out.to_str().unwrap();
    // A d-left table sized for a third of the keys fills up windows into the file.
    let args = [
        "-q",
        "build",
        "--kind",
        "dleft",
        "--expected",
        "90000",
        "-o",
        o,
    ];
    let failed = |stdin: Option<&Path>, extra: &[&str]| {
        let mut cmd = bin();
        cmd.args(args)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd.stdin(match stdin {
            Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
            None => Stdio::null(),
        });
        let r = cmd.output().unwrap();
        assert!(!r.status.success(), "{extra:?}: the table should fill");
        r.stderr
    };
    for threads in ["1", "5"] {
        let mapped = failed(None, &["--threads", threads, k]);
        let piped = failed(Some(&keys), &["--threads", threads]);
        let line = error_line(&mapped, k);
        assert_eq!(line, error_line(&piped, "stdin"), "{threads} threads");
        // Past the first windows (1 MiB, ~17 000 lines of ~60 bytes, and later ones).
        assert!(line > 40_000, "line {line}");
        assert!(!out.exists());
    }
}
