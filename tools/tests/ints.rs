//! `bloomforge ints` end to end, against BTreeMap models and (where the system has it)
//! `LC_ALL=C sort -n | uniq -u` / `sort -nu`, on generated files (fixed seeds).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

/// Fixed-seed values: many small ones (so repeats are common), word boundaries, 0 and
/// `u32::MAX`, and some anywhere.
fn values(seed: u64, n: usize) -> Vec<u32> {
    let mut s = seed;
    let mut v: Vec<u32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            match s % 4 {
                0 => (s >> 32) as u32,
                1 => u32::MAX - (s >> 40) as u32 % 3000,
                _ => (s >> 40) as u32 % 5000,
            }
        })
        .collect();
    v.extend([0, 63, 64, u32::MAX, u32::MAX, 1 << 31]);
    v
}

fn text(v: &[u32]) -> Vec<u8> {
    v.iter()
        .map(|x| format!("{x}\n"))
        .collect::<String>()
        .into_bytes()
}

fn run(args: &[&str], files: &[&Path]) -> Output {
    bin()
        .args(args)
        .args(files)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<u32> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn counts(parts: &[&[u32]]) -> BTreeMap<u32, usize> {
    let mut m = BTreeMap::new();
    for p in parts {
        for &x in *p {
            *m.entry(x).or_insert(0) += 1;
        }
    }
    m
}

/// Runs `program args` (with `LC_ALL=C`, `stdin` as its input), and returns its output.
/// Panics, naming the program, if it cannot be started or fails: the comparisons with
/// coreutils must not pass by being skipped on a system without them.
fn tool(program: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run `{program}` for the comparison (install coreutils): {e}")
        });
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "`{program} {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `LC_ALL=C sort -n FILES | uniq -u` (or `sort -nu FILES`), run as two processes so that
/// a missing or failing `sort` or `uniq` fails the test (see [`tool`]).
fn coreutils(files: &[&Path], unique: bool) -> Vec<u32> {
    let names: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec![if unique { "-n" } else { "-nu" }];
    args.extend(&names);
    let mut text = tool("sort", &args, b"");
    if unique {
        text = tool("uniq", &["-u"], &text);
    }
    String::from_utf8(text)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn unique_and_distinct_match_the_models_and_sort() {
    let d = Dir::new();
    let (a, b) = (values(1, 30_000), values(2, 20_000));
    let fa = d.file("a.txt", &text(&a));
    let fb = d.file("b.txt", &text(&b));
    let c = counts(&[&a, &b]);
    let once: Vec<u32> = c.iter().filter(|e| *e.1 == 1).map(|e| *e.0).collect();
    let all: Vec<u32> = c.keys().copied().collect();
    let files = [fa.as_path(), fb.as_path()];

    let spill = tempfile::tempdir().unwrap();
    let spill_s = spill.path().to_str().unwrap();
    // In memory (4G, 100M), the full 2-bitmap (1060M: it and its buffers, nothing to
    // spare for collected values), range files (64M: 64 ranges; 40M, the minimum: 256).
    for (memory, plan) in [
        ("4G", "in memory"),
        ("1060M", "the full 2-bitmap"),
        ("100M", "in memory"),
        ("64M", "64 ranges"),
        ("40M", "256 ranges"),
    ] {
        let out = run(
            &[
                "-v",
                "ints",
                "unique",
                "--memory",
                memory,
                "--temp-dir",
                spill_s,
            ],
            &files,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(plan), "--memory {memory}: {err}");
        assert_eq!(lines(&out), once, "--memory {memory}");
        let n = lines(&run(
            &["ints", "unique", "--count", "--memory", memory],
            &files,
        ));
        assert_eq!(n, [once.len() as u32]);
    }
    assert_eq!(
        std::fs::read_dir(spill.path()).unwrap().count(),
        0,
        "temporary files left"
    );
    assert_eq!(lines(&run(&["ints", "distinct"], &files)), all);
    assert_eq!(
        lines(&run(&["ints", "distinct", "--count"], &files)),
        [all.len() as u32]
    );
    assert_eq!(coreutils(&files, true), once, "sort -n | uniq -u");
    assert_eq!(coreutils(&files, false), all, "sort -nu");
}

#[test]
fn binary_formats_and_contains() {
    let d = Dir::new();
    let set = values(3, 5_000);
    let queries = values(4, 3_000);
    let le32: Vec<u8> = set.iter().flat_map(|x| x.to_le_bytes()).collect();
    let le64: Vec<u8> = set
        .iter()
        .flat_map(|&x| u64::from(x).to_le_bytes())
        .collect();
    let s32 = d.file("set.u32", &le32);
    let s64 = d.file("set.u64", &le64);
    let q = d.file(
        "q.u32",
        &queries
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    );
    let q64 = d.file(
        "q.u64",
        &queries
            .iter()
            .flat_map(|&x| u64::from(x).to_le_bytes())
            .collect::<Vec<u8>>(),
    );
    let model = counts(&[&set]);
    let present: Vec<u32> = queries
        .iter()
        .copied()
        .filter(|x| model.contains_key(x))
        .collect();
    let absent: Vec<u32> = queries
        .iter()
        .copied()
        .filter(|x| !model.contains_key(x))
        .collect();
    assert!(!present.is_empty() && !absent.is_empty());
    assert_eq!(
        lines(&run(
            &["ints", "contains", "--format", "u32le"],
            &[&s32, &q]
        )),
        present
    );
    assert_eq!(
        lines(&run(
            &["ints", "contains", "--format", "u64le"],
            &[&s64, &q64]
        )),
        present
    );
    assert_eq!(
        lines(&run(
            &["ints", "contains", "--absent", "--format", "u32le"],
            &[&s32, &q]
        )),
        absent
    );
    assert_eq!(
        lines(&run(
            &["ints", "contains", "--count", "--format", "u32le"],
            &[&s32, &q]
        )),
        [present.len() as u32]
    );
    let once: Vec<u32> = model.iter().filter(|e| *e.1 == 1).map(|e| *e.0).collect();
    assert_eq!(
        lines(&run(
            &["ints", "unique", "--format", "u64le", "--memory", "200M"],
            &[&s64]
        )),
        once
    );
    // Raw u32 files through the memory-mapped load (the budget holds them) and through
    // range partitioning (it does not), with the domain's edges and word boundaries, and
    // values split over two files: both must match the model.
    let mut edges = vec![0u32, 1, 31, 32, 33, 63, 64, u32::MAX, u32::MAX - 1, 1 << 31];
    edges.extend([0, 32, u32::MAX]); // seen twice
    let both = [&set[..], &edges[..]];
    let model2 = counts(&both);
    let once2: Vec<u32> = model2.iter().filter(|e| *e.1 == 1).map(|e| *e.0).collect();
    let e32 = d.file(
        "edges.u32",
        &edges
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    );
    for (memory, plan) in [
        ("4G", "in memory (mapped)"),
        ("100M", "in memory (mapped)"),
        ("40M", "256 ranges"),
    ] {
        let out = run(
            &[
                "-v", "ints", "unique", "--format", "u32le", "--memory", memory,
            ],
            &[&s32, &e32],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(plan), "--memory {memory}: {err}");
        assert_eq!(lines(&out), once2, "--memory {memory}");
        assert_eq!(
            lines(&run(
                &["ints", "unique", "--count", "--format", "u32le", "--memory", memory],
                &[&s32, &e32]
            )),
            [once2.len() as u32]
        );
    }
    // Queries on standard input.
    let out = bin()
        .args(["ints", "contains"])
        .arg(d.file("set.txt", &text(&set)))
        .stdin(std::fs::File::open(d.file("q.txt", &text(&queries))).unwrap())
        .output()
        .unwrap();
    assert_eq!(lines(&out), present);
}

/// Bad input: one line on stderr naming the file and where, a failure code, no output,
/// and no temporary files left behind.
#[test]
fn bad_input_is_one_line_naming_the_place() {
    let d = Dir::new();
    let good = d.file("good.txt", b"1\n2\n2\n");
    let cases: [(&str, &[u8], &str, &str); 6] = [
        ("word.txt", b"1\n2\nx7\n", "text", "word.txt:3:"),
        ("big.txt", b"4294967296\n", "text", "big.txt:1:"),
        ("neg.txt", b"5\n\n-1\n", "text", "neg.txt:3:"),
        (
            "cut.u32",
            &[1, 0, 0, 0, 2, 0],
            "u32le",
            "cut.u32: truncated at byte offset 4",
        ),
        (
            "cut.u64",
            &[1, 0, 0, 0, 0, 0, 0, 0, 9],
            "u64le",
            "cut.u64: truncated at byte offset 8",
        ),
        (
            "wide.u64",
            &[0, 0, 0, 0, 1, 0, 0, 0],
            "u64le",
            "wide.u64: byte offset 0: value 4294967296",
        ),
    ];
    let spill = tempfile::tempdir().unwrap();
    for (name, bytes, format, want) in cases {
        let bad = d.file(name, bytes);
        for cmd in [
            vec![
                "ints",
                "unique",
                "--memory",
                "40M",
                "--temp-dir",
                spill.path().to_str().unwrap(),
            ],
            vec!["ints", "unique"],
            vec!["ints", "distinct"],
        ] {
            let mut args = cmd.clone();
            args.extend(["--format", format]);
            // The good file first: its values are read, but nothing may be printed.
            let files: Vec<&Path> = if format == "text" {
                vec![&good, &bad]
            } else {
                vec![&bad]
            };
            let out = run(&args, &files);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{cmd:?} {name}");
            assert!(out.stdout.is_empty(), "{cmd:?} {name}: output written");
            assert!(err.contains(want), "{cmd:?} {name}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
        // contains: the bad file as the set, and as a query file after a good one (every
        // query is read and checked before anything is printed).
        let good_set = match format {
            "text" => good.clone(),
            "u32le" => d.file("good.u32", &[1, 0, 0, 0, 2, 0, 0, 0]),
            _ => d.file("good.u64", &[1, 0, 0, 0, 0, 0, 0, 0]),
        };
        let (b, g) = (bad.as_path(), good_set.as_path());
        for files in [[b, g, g], [g, g, b]] {
            let out = run(&["ints", "contains", "--format", format], &files);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "contains {name}");
            assert!(out.stdout.is_empty(), "contains {name}: output written");
            assert!(err.contains(want), "contains {name}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
    assert_eq!(
        std::fs::read_dir(spill.path()).unwrap().count(),
        0,
        "temporary files left"
    );
    // A budget below the minimum is refused before anything is read.
    for memory in ["1K", "39M", "40959K"] {
        let out = run(&["ints", "unique", "--memory", memory], &[&good]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && out.stdout.is_empty(), "{memory}");
        assert!(
            err.contains(&format!("--memory {memory}")) && err.contains("at least 40M"),
            "{memory}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let out = run(&["ints", "unique", "--memory", "12Q"], &[&good]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("12Q"));
    let out = run(&["ints", "unique"], &[&d.0.path().join("missing.txt")]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.txt"));
}

/// `bloomforge ints` and each of its commands show examples in their help.
#[test]
fn help_has_examples() {
    for args in [
        &["ints", "-h"][..],
        &["ints", "--help"],
        &["ints", "contains", "--help"],
        &["ints", "unique", "-h"],
        &["ints", "distinct", "--help"],
    ] {
        let out = run(args, &[]);
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("Examples:\n  bloomforge ints "),
            "{args:?} has no example: {text}"
        );
    }
    // Each command's examples are its own.
    for cmd in ["contains", "unique", "distinct"] {
        let text = String::from_utf8(run(&["ints", cmd, "--help"], &[]).stdout).unwrap();
        let examples = &text[text.find("Examples:").unwrap()..];
        assert!(
            examples.contains(&format!("bloomforge ints {cmd} ")),
            "{text}"
        );
    }
}

/// `ints unique` spilling to range files, interrupted by SIGINT while it prints (its
/// stdout not read, so it blocks with the range files on disk): exit 130 and an empty
/// `--temp-dir`. (A plain `tempfile::TempDir` would not do: it is removed only on drop,
/// which an interrupted process never reaches.)
#[cfg(unix)]
#[test]
fn unique_interrupted_while_spilled_removes_its_temp_files() {
    let d = Dir::new();
    // ~600k values over the whole domain (few repeats): ~6.6 MB of output, far more than
    // the output buffer and a pipe hold.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..600_000)
        .flat_map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 32) as u32).to_le_bytes()
        })
        .collect();
    let input = d.file("v.u32", &bytes);
    let temp = d.0.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let mut cmd = bin();
    let child = support::with_default_signals(&mut cmd)
        .args(["ints", "unique", "--format", "u32le", "--memory", "40M"])
        .arg("--temp-dir")
        .arg(&temp)
        .arg(&input)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    support::interrupt_mid_output(child, &temp, "INT");
}
