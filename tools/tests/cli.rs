//! End-to-end: build, query, stats and merge through the binary.

use std::path::PathBuf;
use std::process::Command;

use crate::support;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn tmp(name: &str) -> PathBuf {
    support::tmp_in("cli", name)
}

#[test]
fn build_query_stats_merge() {
    let keys_a = tmp("a.txt");
    let keys_b = tmp("b.txt");
    std::fs::write(
        &keys_a,
        (0..1000).map(|i| format!("user-{i}\n")).collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        &keys_b,
        (1000..1500)
            .map(|i| format!("user-{i}\r\n"))
            .collect::<String>(),
    )
    .unwrap();
    for layout in ["blocked", "split", "standard"] {
        let fa = tmp(&format!("a-{layout}.bloom"));
        let fb = tmp(&format!("b-{layout}.bloom"));
        let merged = tmp(&format!("m-{layout}.bloom"));
        for (keys, out) in [(&keys_a, &fa), (&keys_b, &fb)] {
            let st = bin()
                .args([
                    "build", "--layout", layout, "--fp", "0.001", "--items", "2000", "--keys",
                ])
                .arg(keys)
                .arg("--out")
                .arg(out)
                .status()
                .unwrap();
            assert!(st.success());
        }
        let st = bin()
            .args(["merge", "--out"])
            .arg(&merged)
            .arg(&fa)
            .arg(&fb)
            .status()
            .unwrap();
        assert!(st.success(), "{layout} merge");
        let out = bin()
            .args(["query", "--absent", "--filter"])
            .arg(&merged)
            .arg("--keys")
            .arg(&keys_a)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty(), "no member reported absent");
        let out = bin()
            .args(["query", "--filter"])
            .arg(&merged)
            .arg("--keys")
            .arg(&keys_b)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 500);
        assert!(
            text.lines()
                .all(|l| l.starts_with("user-") && !l.ends_with('\r')),
            "CRLF stripped, all present, printed as read"
        );
        let out = bin()
            .args(["stats", "--filter"])
            .arg(&merged)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(&format!("layout\t{layout}")), "{text}");
    }
    // Errors are reported, not panics.
    let garbage = tmp("garbage.bloom");
    std::fs::write(&garbage, b"not a filter").unwrap();
    let out = bin()
        .args(["stats", "--filter"])
        .arg(&garbage)
        .output()
        .unwrap();
    assert_refused(&out, "corrupt");
    let out = bin()
        .args(["build", "--fp", "2", "--keys"])
        .arg(&keys_a)
        .args(["--out", "/dev/null"])
        .output()
        .unwrap();
    assert_refused(&out, "false-positive rate");
    assert_usage_error(&run(&["frobnicate"]), "unrecognized subcommand");
    let mixed = bin()
        .args(["merge", "--out"])
        .arg(tmp("x.bloom"))
        .arg(tmp("a-blocked.bloom"))
        .arg(tmp("a-split.bloom"))
        .output()
        .unwrap();
    assert_refused(&mixed, "different layouts");
    assert!(!tmp("x.bloom").exists());
}

/// Runs the binary; every argument is a string (test paths are UTF-8).
fn run(args: &[&str]) -> std::process::Output {
    bin().args(args).output().unwrap()
}

fn path(name: &str) -> String {
    tmp(name).to_str().unwrap().to_string()
}

fn write_lines(name: &str, lines: &[String]) -> String {
    let p = path(name);
    std::fs::write(
        &p,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    p
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts a clean failure: exit status 1 (not a panic's 101) with `needle` in the message.
fn assert_refused(out: &std::process::Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Asserts a usage error from clap: exit status 2 and one line naming the problem.
fn assert_usage_error(out: &std::process::Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
}

/// `query --count` output (`key<TAB>count`) as (count, key) pairs.
fn counts(filter: &str, keys: &str) -> Vec<(String, String)> {
    let out = run(&["query", "--count", "--filter", filter, "--keys", keys]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| {
            let (k, c) = l.rsplit_once('\t').unwrap();
            (c.to_string(), k.to_string())
        })
        .collect()
}

fn stat(filter: &str, field: &str) -> String {
    let out = run(&["stats", "--filter", filter]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}\t")).map(str::to_string))
        .unwrap_or_else(|| panic!("no {field} in stats of {filter}"))
}

#[test]
fn counting_and_dleft_build_query_remove() {
    let members: Vec<String> = (0..300).map(|i| format!("item-{i}")).collect();
    // "twice" is inserted twice (two lines), so it survives one removal.
    let mut build_lines = members.clone();
    build_lines.push("twice".into());
    build_lines.push("twice".into());
    let keys = write_lines("rm-build.txt", &build_lines);
    let twice = write_lines("rm-twice.txt", &["twice".to_string()]);
    let mut rest = members.clone();
    rest.push("twice".into());
    let rest = write_lines("rm-rest.txt", &rest);
    let ghost = write_lines("rm-ghost.txt", &["ghost".to_string()]);
    for layout in ["counting", "counting-standard", "dleft"] {
        let f = path(&format!("rm-{layout}.bloom"));
        let out = run(&[
            "build", "--layout", layout, "--fp", "0.0001", "--seed", "7", "--keys", &keys, "--out",
            &f,
        ]);
        assert!(out.status.success(), "{layout}: {}", stderr(&out));
        assert_eq!(stat(&f, "layout"), layout);

        // Every member may be present; "twice" counts at least 2.
        let c = counts(&f, &keys);
        assert_eq!(c.len(), 302);
        assert!(
            c.iter().all(|(n, _)| n != "0"),
            "{layout}: no member absent"
        );
        let c = counts(&f, &twice);
        assert!(c[0].0.parse::<u64>().unwrap() >= 2, "{layout}: {c:?}");

        // Remove "twice" once into another file: the input is untouched, the output still
        // holds it with a count of at least 1.
        let once = path(&format!("rm-{layout}-once.bloom"));
        let before = std::fs::read(&f).unwrap();
        let out = run(&["remove", "--filter", &f, "--keys", &twice, "--out", &once]);
        assert!(out.status.success(), "{layout}: {}", stderr(&out));
        assert_eq!(
            std::fs::read(&f).unwrap(),
            before,
            "{layout}: input unchanged"
        );
        let c = counts(&once, &twice);
        assert!(c[0].0.parse::<u64>().unwrap() >= 1, "{layout}: {c:?}");
        let out = run(&["query", "--filter", &once, "--keys", &twice]);
        assert_eq!(stdout(&out), "twice\n", "{layout}");

        // Remove everything else in place: the filter holds only these keys, so every
        // counter (every cell) returns to zero and every key reads absent, count 0.
        let out = run(&["remove", "--filter", &once, "--keys", &rest]);
        assert!(out.status.success(), "{layout}: {}", stderr(&out));
        assert_eq!(remove_summary(&stderr(&out)), (301, 301, 0, 0));
        let leftovers: Vec<_> = std::fs::read_dir(tmp(""))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!(".rm-{layout}-once.bloom.")) && n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{layout}: {leftovers:?}");
        let out = run(&["query", "--absent", "--filter", &once, "--keys", &keys]);
        assert_eq!(stdout(&out).lines().count(), 302, "{layout}: all absent");
        assert!(counts(&once, &keys).iter().all(|(n, _)| n == "0"));
        if layout == "dleft" {
            assert_eq!(stat(&once, "len"), "0");
            assert_eq!(stat(&once, "occupied_cells"), "0");
        } else {
            assert_eq!(stat(&once, "nonzero_counters"), "0");
        }

        // A key that is not present is listed and skipped, not fatal; the filter is
        // unchanged for it.
        let empty = std::fs::read(&once).unwrap();
        let out = run(&["remove", "--filter", &once, "--keys", &ghost]);
        assert!(out.status.success(), "{layout}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("not present") && err.contains("ghost"),
            "{err}"
        );
        assert_eq!(remove_summary(&err), (0, 1, 0, 1), "{err}");
        assert_eq!(std::fs::read(&once).unwrap(), empty, "{layout}: unchanged");
    }
}

#[test]
fn counting_export_answers_identically() {
    let members: Vec<String> = (0..1000).map(|i| format!("m-{i}")).collect();
    let others: Vec<String> = (0..5000).map(|i| format!("other-{i}")).collect();
    let keys = write_lines("ex-members.txt", &members);
    let mut probe = members.clone();
    probe.extend(others);
    let probe = write_lines("ex-probe.txt", &probe);
    for (layout, plain) in [("counting", "blocked"), ("counting-standard", "standard")] {
        let f = path(&format!("ex-{layout}.bloom"));
        let out = run(&[
            "build", "--layout", layout, "--fp", "0.05", "--keys", &keys, "--out", &f,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        // Remove a few keys first, so the export reflects deletions too.
        let gone = write_lines("ex-gone.txt", &members[..100]);
        assert!(run(&["remove", "--filter", &f, "--keys", &gone])
            .status
            .success());
        let exported = path(&format!("ex-{layout}-plain.bloom"));
        let out = run(&["export", "--filter", &f, "--out", &exported]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stat(&exported, "layout"), plain);
        // An explicit matching --layout works too.
        let out = run(&[
            "export", "--filter", &f, "--out", &exported, "--layout", plain,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));

        let a = run(&["query", "--filter", &f, "--keys", &probe]);
        let b = run(&["query", "--filter", &exported, "--keys", &probe]);
        assert!(a.status.success() && b.status.success());
        let (a, b) = (stdout(&a), stdout(&b));
        assert_eq!(a, b, "{layout}: the export answers as the counting filter");
        // Members not removed are present; some non-member answers are false positives
        // at 5 %, and they agree too (checked above).
        let printed: std::collections::HashSet<&str> = a.lines().collect();
        assert!(members[100..].iter().all(|m| printed.contains(m.as_str())));
        assert!(a.lines().count() < 6000, "some non-members absent");

        // The other plain layout is refused, and so is an unknown one.
        let wrong = if plain == "blocked" {
            "standard"
        } else {
            "blocked"
        };
        let out = run(&[
            "export",
            "--filter",
            &f,
            "--out",
            &path("ex-x.bloom"),
            "--layout",
            wrong,
        ]);
        assert_refused(&out, &format!("exports to --kind {plain} only"));
        let out = run(&[
            "export",
            "--filter",
            &f,
            "--out",
            &path("ex-x.bloom"),
            "--layout",
            "split",
        ]);
        assert_refused(&out, "unknown export kind");
    }
}

#[test]
fn merge_counting_filters() {
    let a: Vec<String> = (0..500)
        .map(|i| format!("a-{i}"))
        .chain(["shared".into()])
        .collect();
    let b: Vec<String> = (0..500)
        .map(|i| format!("b-{i}"))
        .chain(["shared".into()])
        .collect();
    let (ka, kb) = (write_lines("mc-a.txt", &a), write_lines("mc-b.txt", &b));
    let shared = write_lines("mc-shared.txt", &["shared".to_string()]);
    for layout in ["counting", "counting-standard"] {
        let (fa, fb) = (
            path(&format!("mc-a-{layout}.bloom")),
            path(&format!("mc-b-{layout}.bloom")),
        );
        let merged = path(&format!("mc-m-{layout}.bloom"));
        for (k, f) in [(&ka, &fa), (&kb, &fb)] {
            let out = run(&[
                "build", "--layout", layout, "--fp", "0.001", "--items", "2000", "--keys", k,
                "--out", f,
            ]);
            assert!(out.status.success(), "{}", stderr(&out));
        }
        let out = run(&["merge", "--out", &merged, &fa, &fb]);
        assert!(out.status.success(), "{layout}: {}", stderr(&out));
        assert_eq!(stat(&merged, "layout"), layout);
        for k in [&ka, &kb] {
            let out = run(&["query", "--absent", "--filter", &merged, "--keys", k]);
            assert!(out.status.success());
            assert!(stdout(&out).is_empty(), "{layout}: no member absent");
        }
        // The counting union adds counts: "shared" was in both inputs.
        let c = counts(&merged, &shared);
        assert!(c[0].0.parse::<u64>().unwrap() >= 2, "{layout}: {c:?}");
        // ... so it survives one removal.
        assert!(run(&["remove", "--filter", &merged, "--keys", &shared])
            .status
            .success());
        let out = run(&["query", "--filter", &merged, "--keys", &shared]);
        assert_eq!(stdout(&out), "shared\n");
    }
    // Different counter layouts do not merge.
    let out = run(&[
        "merge",
        "--out",
        &path("mc-x.bloom"),
        &path("mc-a-counting.bloom"),
        &path("mc-b-counting-standard.bloom"),
    ]);
    assert_refused(&out, "different layouts");
}

#[test]
fn refusals_are_errors_not_panics() {
    let keys: Vec<String> = (0..1000).map(|i| format!("r-{i}")).collect();
    let keys = write_lines("rf-keys.txt", &keys);
    let built = |layout: &str| {
        let f = path(&format!("rf-{layout}.bloom"));
        let out = run(&["build", "--layout", layout, "--keys", &keys, "--out", &f]);
        assert!(out.status.success(), "{}", stderr(&out));
        f
    };
    let (blocked, dleft, counting) = (built("blocked"), built("dleft"), built("counting"));

    let before = std::fs::read(&blocked).unwrap();
    assert_refused(
        &run(&["remove", "--filter", &blocked, "--keys", &keys]),
        "plain Bloom filters cannot delete",
    );
    assert_eq!(std::fs::read(&blocked).unwrap(), before);
    assert_refused(
        &run(&["merge", "--out", &path("rf-m.bloom"), &dleft, &dleft]),
        "d-left filters cannot be merged",
    );
    assert_refused(
        &run(&["merge", "--out", &path("rf-m.bloom"), &counting, &dleft]),
        "d-left filters cannot be merged",
    );
    assert!(!tmp("rf-m.bloom").exists());
    assert_refused(
        &run(&["export", "--filter", &dleft, "--out", &path("rf-e.bloom")]),
        "export needs a counting filter",
    );
    assert_refused(
        &run(&["export", "--filter", &blocked, "--out", &path("rf-e.bloom")]),
        "export needs a counting filter",
    );
    assert!(!tmp("rf-e.bloom").exists());
    assert_refused(
        &run(&["query", "--count", "--filter", &blocked, "--keys", &keys]),
        "keeps no counts",
    );
    assert_usage_error(
        &run(&[
            "build",
            "--layout",
            "cuckoo",
            "--keys",
            &keys,
            "--out",
            &path("rf-c.bloom"),
        ]),
        "invalid value 'cuckoo'",
    );

    // A d-left filter sized for far fewer keys fills up: the error names the line and
    // nothing is written.
    let full = path("rf-full.bloom");
    let out = run(&[
        "build", "--layout", "dleft", "--items", "10", "--keys", &keys, "--out", &full,
    ]);
    assert_refused(&out, "buckets are full");
    assert!(
        stderr(&out).contains(&format!("{keys}:")),
        "{}",
        stderr(&out)
    );
    assert!(!tmp("rf-full.bloom").exists());

    // Truncated or corrupted counting and d-left files are reported.
    for f in [&counting, &dleft] {
        let mut bytes = std::fs::read(f).unwrap();
        let bad = path("rf-bad.bloom");
        std::fs::write(&bad, &bytes[..bytes.len() - 10]).unwrap();
        assert_refused(&run(&["stats", "--filter", &bad]), "rf-bad.bloom");
        let n = bytes.len();
        bytes[n - 1] ^= 0x55;
        std::fs::write(&bad, &bytes).unwrap();
        assert_refused(
            &run(&["remove", "--filter", &bad, "--keys", &keys]),
            "rf-bad.bloom",
        );
    }
}

/// The numbers of `remove`'s summary line: "removed N of T keys, saturated S (...), not
/// present M (skipped)" as (N, T, S, M).
fn remove_summary(err: &str) -> (u64, u64, u64, u64) {
    let line = err
        .lines()
        .find(|l| l.starts_with("removed "))
        .unwrap_or_else(|| panic!("no summary line: {err}"));
    let num = |after: &str| -> u64 {
        let rest = &line[line
            .find(after)
            .unwrap_or_else(|| panic!("{after:?}: {line}"))
            + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{after:?}: {line}"))
    };
    (
        num("removed "),
        num(" of "),
        num("saturated "),
        num("not present "),
    )
}

#[test]
fn saturated_counts_duplicate_removes_and_stdin() {
    // 20 lines of "hot": 4-bit counters (counting, d-left by default) saturate at 15,
    // d-left's with --counter-bits 2 at 3.
    let mut lines: Vec<String> = (0..100).map(|i| format!("s-{i}")).collect();
    lines.extend(std::iter::repeat_n("hot".to_string(), 20));
    lines.extend(["pair".to_string(), "pair".to_string()]);
    let keys = write_lines("sat-keys.txt", &lines);
    let hot = write_lines("sat-hot.txt", &["hot".to_string()]);
    let pair = write_lines("sat-pair.txt", &["pair".to_string()]);
    let pair_twice = write_lines("sat-pair2.txt", &["pair".to_string(), "pair".to_string()]);
    for (layout, extra, saturated) in [
        ("counting", None, "15+"),
        ("counting-standard", None, "15+"),
        ("dleft", None, "15+"),
        ("dleft", Some("2"), "3+"),
    ] {
        let f = path(&format!("sat-{layout}-{extra:?}.bloom"));
        let mut args = vec![
            "build", "--layout", layout, "--fp", "0.0001", "--keys", &keys, "--out", &f,
        ];
        if let Some(c) = extra {
            args.extend(["--counter-bits", c, "--cells", "8"]);
        }
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            counts(&f, &hot),
            [(saturated.to_string(), "hot".to_string())]
        );
        assert_eq!(counts(&f, &pair)[0].0, "2", "{layout}");

        // A key listed twice in the keys file is removed twice.
        let out = run(&["remove", "--filter", &f, "--keys", &pair_twice]);
        assert!(out.status.success(), "{}", stderr(&out));
        // Each is removed, or (where it shares a counter with "hot", as in the standard
        // layout) reported saturated: never both, and the per-key lines agree.
        let err = stderr(&out);
        let (removed, total, stuck, missing) = remove_summary(&err);
        assert_eq!((total, missing), (2, 0), "{layout} {extra:?}: {err}");
        assert_eq!(removed + stuck, 2, "{layout} {extra:?}: {err}");
        assert_eq!(
            err.matches("left as is").count() as u64,
            stuck,
            "{layout} {extra:?}: {err}"
        );
        assert_eq!(counts(&f, &pair)[0].0, "0", "{layout}");

        // Keys from stdin, CRLF stripped.
        let mut child = bin()
            .args(["query", "--count", "--filter", &f])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"hot\r\ns-1\r\npair\r\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert_eq!(stdout(&out), format!("hot\t{saturated}\ns-1\t1\npair\t0\n"));

        // Removing a saturated key is reported as such: it stays present.
        let out = run(&["remove", "--filter", &f, "--keys", &hot]);
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("left as is, the key may stay present: hot"),
            "{err}"
        );
        // Counted as saturated, not as removed.
        assert_eq!(remove_summary(&err), (0, 1, 1, 0), "{err}");
        assert!(
            err.contains(
                "saturated 1 (a saturated counter left unchanged: the key may stay present)"
            ),
            "{err}"
        );
        assert_eq!(counts(&f, &hot)[0].0, saturated, "{layout}");
    }
    // The d-left shape options belong to d-left.
    let f = path("sat-wrong-kind.bloom");
    let out = run(&[
        "build",
        "--kind",
        "blocked",
        "--counter-bits",
        "4",
        "--keys",
        &keys,
        "-o",
        &f,
    ]);
    assert_refused(&out, "--counter-bits and --cells shape d-left filters");
    let out = run(&[
        "build",
        "--kind",
        "dleft",
        "--counter-bits",
        "9",
        "--keys",
        &keys,
        "-o",
        &f,
    ]);
    assert_refused(&out, "counter");
}

#[test]
fn options_help_and_in_place_files() {
    let keys = write_lines("op-keys.txt", &["a".to_string(), "b".to_string()]);
    let f = path("op.bloom");
    // Misspelt options, stray arguments and flags of other commands are refused.
    assert_usage_error(
        &run(&["build", "--keys", &keys, "--out", &f, "--itmes", "9"]),
        "unexpected argument '--itmes'",
    );
    assert!(!tmp("op.bloom").exists());
    assert_usage_error(
        &run(&["build", "--keys", &keys, "--out", &f, "--count"]),
        "unexpected argument '--count'",
    );
    assert_usage_error(
        &run(&["stats", "--filter", &f, &keys]),
        "cannot be used with",
    );
    assert_usage_error(&run(&["stats"]), "required arguments were not provided");
    // The one line keeps clap's indented continuation: the names of what is missing.
    assert_usage_error(
        &run(&["stats"]),
        "the following required arguments were not provided: <FILTER> (see --help)",
    );
    assert_usage_error(
        &run(&["build", &keys]),
        "the following required arguments were not provided: --output <FILTER> (see --help)",
    );
    assert_usage_error(
        &run(&["stats", "--filter"]),
        "a value is required for '--filter",
    );
    for help in [
        &["help"][..],
        &["--help"],
        &["build", "--help"],
        &["common", "-h"],
    ] {
        let out = run(help);
        assert!(out.status.success());
        assert!(stdout(&out).contains("Usage: bloomforge"), "{help:?}");
    }
    assert!(stdout(&run(&["common", "--help"])).contains("Example"));
    assert!(stdout(&run(&["--version"])).starts_with("bloomforge "));
    assert_eq!(run(&[]).status.code(), Some(2));
    // --fp=P and --fp P both work.
    for fp in [&["--fp=0.1"][..], &["--fp", "0.1"]] {
        let mut a = vec!["build", &keys, "-o", &f];
        a.extend_from_slice(fp);
        let out = run(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("blocked filter"), "{}", stderr(&out));
        let _ = std::fs::remove_file(&f);
    }

    // In-place remove through a symbolic link replaces the file it names, keeps the
    // link and the file's permissions.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let out = run(&[
            "build", "--layout", "counting", "--keys", &keys, "--out", &f,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        // A new output gets the mode a plain `File::create` gets (0666 less the umask).
        let reference = tmp("op-mode-reference");
        std::fs::File::create(&reference).unwrap();
        let mode_of =
            |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode_of(std::path::Path::new(&f)), mode_of(&reference));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = tmp("op-link.bloom");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let a = write_lines("op-a.txt", &["a".to_string()]);
        let out = run(&["remove", "--filter", link.to_str().unwrap(), "--keys", &a]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let mode = std::fs::metadata(&f).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(counts(&f, &a)[0].0, "0", "the linked file was updated");
    }
}

/// `build -v` says where the time went: each phase, and the output's write apart from its
/// sync and rename.
#[test]
fn verbose_build_reports_its_phases() {
    let keys = write_lines(
        "phases.txt",
        &(0..5000).map(|i| format!("key-{i}")).collect::<Vec<_>>(),
    );
    let out = path("phases.bloom");
    let built = run(&["-v", "build", &keys, "-o", &out, "--threads", "2"]);
    assert!(built.status.success(), "{}", stderr(&built));
    let err = stderr(&built);
    let phases = err
        .lines()
        .find(|l| l.starts_with("build: "))
        .unwrap_or_else(|| panic!("no phase line in {err}"));
    for phase in [
        "s counting distinct keys",
        "s allocating the filter",
        "s reading and inserting",
        "s counting the fill",
        "s writing",
    ] {
        assert!(phases.contains(phase), "{phase} missing from {phases}");
    }
    assert!(
        err.contains("phases.bloom: written in ") && err.contains(" s, synced and renamed in "),
        "{err}"
    );
    let quiet = run(&["build", &keys, "-o", &out]);
    assert!(quiet.status.success());
    assert!(!stderr(&quiet).contains("build: "), "{}", stderr(&quiet));
}
