//! End-to-end: streaming build and query, `common` (exact against a `BTreeSet`
//! intersection, approximate as a superset), stdin, and clean one-line failures.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "bloomforge-stream-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    bin().args(args).output().unwrap()
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

// A deterministic generator.
use bloomforge_testkit::rng::SplitMix64 as Rng;

/// The keys of a file under the documented policy: lines split at `\n`, one trailing
/// `\r` stripped, empty lines skipped.
fn keys_of(bytes: &[u8]) -> BTreeSet<Vec<u8>> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if bytes.last() == Some(&b'\n') {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
        .filter(|l| !l.is_empty())
        .collect()
}

/// File `f` of a family: ids shared by all files, ids shared by some, private ids;
/// duplicates, empty lines, CRLF endings, non-UTF-8 bytes, a NUL, an inner CR; no final
/// newline on odd files.
fn family_file(f: u64, lines: usize, files: u64) -> Vec<u8> {
    let mut rng = Rng::new(1000 + f);
    let mut out = Vec::new();
    let mut written: Vec<Vec<u8>> = Vec::new();
    for i in 0..lines {
        let r = rng.next_u64();
        let key: Vec<u8> = match r % 10 {
            // Shared by every file: ids from a small common pool.
            0..=3 => format!("common-{}", r % 3000).into_bytes(),
            // Shared by the files whose bit is set in the id.
            4 | 5 => {
                let id = (r >> 8) % 4000;
                let owner = id % files;
                let other = (id / files) % files;
                if f == owner || f == other {
                    format!("some-{id}").into_bytes()
                } else {
                    format!("private-{f}-{i}").into_bytes()
                }
            }
            6 if !written.is_empty() => written[(r >> 16) as usize % written.len()].clone(),
            7 => {
                let mut k = vec![0xff, 0xfe, b'x', (r >> 24) as u8 % 16, 0x80];
                k.extend_from_slice(format!("{}", r % 500).as_bytes());
                k
            }
            8 => format!("cr\rinside-{}", r % 700).into_bytes(),
            _ => format!("private-{f}-{i}").into_bytes(),
        };
        written.push(key.clone());
        out.extend_from_slice(&key);
        out.extend_from_slice(if r.is_multiple_of(3) { b"\r\n" } else { b"\n" });
        if r.is_multiple_of(17) {
            out.extend_from_slice(if r.is_multiple_of(2) { b"\n" } else { b"\r\n" });
        }
    }
    if f % 2 == 1 && out.last() == Some(&b'\n') {
        out.pop();
        if out.last() == Some(&b'\r') {
            out.pop();
        }
    }
    out
}

fn lines_of(stdout: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = stdout.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    assert_eq!(v.pop(), Some(Vec::new()), "output ends with a newline");
    v
}

/// The value of `name: N` in `-v` output.
fn stat(err: &str, name: &str) -> u64 {
    let at = err
        .find(&format!("{name}: "))
        .unwrap_or_else(|| panic!("no {name} in {err}"));
    err[at + name.len() + 2..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn common_exact_equals_set_intersection_for_2_3_5_files() {
    let d = dir("exact");
    for files in [2u64, 3, 5] {
        let paths: Vec<PathBuf> = (0..files)
            .map(|f| {
                let p = d.join(format!("in-{files}-{f}.txt"));
                std::fs::write(&p, family_file(f, 6000 + 1500 * f as usize, files)).unwrap();
                p
            })
            .collect();
        let mut want: Option<BTreeSet<Vec<u8>>> = None;
        for p in &paths {
            let k = keys_of(&std::fs::read(p).unwrap());
            want = Some(match want {
                None => k,
                Some(w) => w.intersection(&k).cloned().collect(),
            });
        }
        let want = want.unwrap();
        assert!(want.len() > 1000, "{files} files: {}", want.len());
        let temp = d.join(format!("tmp-{files}"));
        std::fs::create_dir_all(&temp).unwrap();

        // (a) a small budget: several partitions; (b) two forced partitions far over the
        // budget: each is split again.
        for forced in [None, Some("2")] {
            let mut args: Vec<&std::ffi::OsStr> = vec![
                os("-v"),
                os("common"),
                os("--exact"),
                os("--memory"),
                os("64K"),
            ];
            args.extend([os("--temp-dir"), temp.as_os_str()]);
            if let Some(p) = forced {
                args.extend([os("--partitions"), os(p)]);
            }
            args.extend(paths.iter().map(|p| p.as_os_str()));
            let out = run(&args);
            let err = stderr(&out);
            assert!(out.status.success(), "{err}");
            let got = lines_of(&out.stdout);
            let got_set: BTreeSet<Vec<u8>> = got.iter().cloned().collect();
            assert_eq!(got.len(), got_set.len(), "every common line once");
            assert_eq!(got_set, want, "{files} files, {forced:?}: {err}");
            match forced {
                None => assert!(stat(&err, "partitions") > 1, "{err}"),
                Some(_) => assert!(stat(&err, "re-splits") >= 1, "{err}"),
            }
            assert_eq!(
                std::fs::read_dir(&temp).unwrap().count(),
                0,
                "temporary files removed"
            );
        }

        // Approximate: a superset of the exact answer, every line from the largest file.
        let mut args: Vec<&std::ffi::OsStr> = vec![os("common"), os("--memory"), os("256K")];
        args.extend(paths.iter().map(|p| p.as_os_str()));
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let got: BTreeSet<Vec<u8>> = lines_of(&out.stdout).into_iter().collect();
        assert!(got.is_superset(&want));
        let largest = keys_of(&std::fs::read(paths.last().unwrap()).unwrap());
        assert!(got.is_subset(&largest));
        assert!(
            stderr(&out).contains("false-positive rate"),
            "{}",
            stderr(&out)
        );

        // -o writes the same answer to a file.
        let o = d.join(format!("out-{files}.txt"));
        let mut args: Vec<&std::ffi::OsStr> =
            vec![os("common"), os("--exact"), os("-o"), o.as_os_str()];
        args.extend(paths.iter().map(|p| p.as_os_str()));
        assert!(run(&args).status.success());
        let got: BTreeSet<Vec<u8>> = lines_of(&std::fs::read(&o).unwrap()).into_iter().collect();
        assert_eq!(got, want);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Asserts that a coreutils program runs: the reference tests need `sort` and `comm`
/// (present on CI, Debian coreutils); without them they fail rather than pass silently.
fn require_tool(name: &str) {
    let ok = Command::new(name)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "`{name} --version` failed: this test compares against GNU coreutils `sort -u | comm \
         -12` and needs `{name}` on PATH (install coreutils)"
    );
}

/// The documented key policy applied to a file's bytes, as lines for `sort`: one
/// trailing `\r` stripped from every line, empty lines dropped, every line ended by `\n`.
fn normalise(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.is_empty() {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

/// The lines of a `\n`-terminated output (none for an empty one).
fn lines_or_none(stdout: &[u8]) -> Vec<Vec<u8>> {
    if stdout.is_empty() {
        Vec::new()
    } else {
        lines_of(stdout)
    }
}

#[test]
fn common_exact_equals_sort_comm_for_2_3_5_files() {
    // The same answer as `LC_ALL=C sort -u | comm -12` (for n files: comm -12 of the first
    // two, then of that and each next file), on data with duplicates, empty lines, CRLF
    // lines, inner CRs, NUL and non-UTF-8 bytes; the reference input is normalised by the
    // tool's documented policy (sort and comm would keep the CRs and the empty line).
    require_tool("sort");
    require_tool("comm");
    let d = dir("comm");
    for files in [2u64, 3, 5] {
        let temp = d.join(format!("tmp-{files}"));
        std::fs::create_dir_all(&temp).unwrap();
        let mut inputs = Vec::new();
        let mut sorted = Vec::new();
        for f in 0..files {
            let data = family_file(f, 9000 + 1000 * f as usize, files);
            assert!(data.windows(2).any(|w| w == b"\r\n"), "CRLF lines");
            assert!(data.windows(2).any(|w| w == b"\n\n"), "empty lines");
            assert!(std::str::from_utf8(&data).is_err(), "non-UTF-8 bytes");
            let p = d.join(format!("in-{files}-{f}.txt"));
            std::fs::write(&p, &data).unwrap();
            let norm = d.join(format!("norm-{files}-{f}.txt"));
            std::fs::write(&norm, normalise(&data)).unwrap();
            let s = d.join(format!("sorted-{files}-{f}.txt"));
            let st = Command::new("sort")
                .env("LC_ALL", "C")
                .arg("-u")
                .arg(&norm)
                .arg("-o")
                .arg(&s)
                .status()
                .unwrap();
            assert!(st.success(), "sort -u {}", norm.display());
            inputs.push(p);
            sorted.push(s);
        }
        let mut acc = sorted[0].clone();
        for (i, s) in sorted[1..].iter().enumerate() {
            let comm = Command::new("comm")
                .env("LC_ALL", "C")
                .arg("-12")
                .arg(&acc)
                .arg(s)
                .output()
                .unwrap();
            assert!(comm.status.success(), "{}", stderr(&comm));
            acc = d.join(format!("comm-{files}-{i}.txt"));
            std::fs::write(&acc, &comm.stdout).unwrap();
        }
        let want = lines_or_none(&std::fs::read(&acc).unwrap());
        assert!(
            want.len() > 500,
            "{files} files: {} common lines",
            want.len()
        );
        // The reference agrees with the in-test model of the policy.
        let mut model: Option<BTreeSet<Vec<u8>>> = None;
        for p in &inputs {
            let k = keys_of(&std::fs::read(p).unwrap());
            model = Some(match model {
                None => k,
                Some(m) => m.intersection(&k).cloned().collect(),
            });
        }
        assert_eq!(model.unwrap().into_iter().collect::<Vec<_>>(), want);

        let mut args: Vec<&std::ffi::OsStr> = vec![
            os("-v"),
            os("common"),
            os("--exact"),
            os("--memory"),
            os("64K"),
            os("--temp-dir"),
            temp.as_os_str(),
        ];
        args.extend(inputs.iter().map(|p| p.as_os_str()));
        let out = run(&args);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        assert!(stat(&err, "partitions") >= 4, "several partitions: {err}");
        let mut got = lines_or_none(&out.stdout);
        got.sort();
        assert_eq!(got.len(), want.len(), "{files} files: {err}");
        assert_eq!(got, want, "{files} files");
        assert_eq!(std::fs::read_dir(&temp).unwrap().count(), 0, "temp removed");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// [`family_file`] with hot lines: every 3rd line is one of a few lines repeated
/// throughout (a line common to all files, one private to the file, one of non-UTF-8
/// bytes common to all, with CRLF endings on some). The hot lines' records all hash to
/// the same partitions, which then far exceed a small budget.
fn hot_file(f: u64, lines: usize, files: u64) -> Vec<u8> {
    let base = family_file(f, lines, files);
    let mut out = Vec::with_capacity(base.len() * 2);
    let mut rng = Rng::new(77 + f);
    for (i, line) in base.split(|&b| b == b'\n').enumerate() {
        out.extend_from_slice(line);
        out.push(b'\n');
        if i % 3 == 0 {
            match rng.next_u64() % 4 {
                0 => out.extend_from_slice(b"hot-common-line\n"),
                1 => out.extend_from_slice(b"hot-common-line\r\n"),
                2 => out.extend_from_slice(format!("hot-private-{f}\n").as_bytes()),
                _ => out.extend_from_slice(b"\xc3\x28hot-bytes\xff\r\n"),
            }
        }
    }
    out
}

#[test]
fn common_exact_resplits_under_memory_alone_on_mixed_data() {
    // No --partitions: the budget alone must force a re-split. The hot lines put ~25 % of
    // the smallest file's records into one partition, several times what a 64K budget
    // allows, so that partition is split again (and, where one line dominates, loaded
    // whole); the answer is still the exact intersection.
    let d = dir("resplit");
    let files = 3u64;
    let paths: Vec<PathBuf> = (0..files)
        .map(|f| {
            let p = d.join(format!("hot-{f}.txt"));
            std::fs::write(&p, hot_file(f, 9000 + 2000 * f as usize, files)).unwrap();
            p
        })
        .collect();
    let mut want: Option<BTreeSet<Vec<u8>>> = None;
    for p in &paths {
        let k = keys_of(&std::fs::read(p).unwrap());
        want = Some(match want {
            None => k,
            Some(w) => w.intersection(&k).cloned().collect(),
        });
    }
    let want = want.unwrap();
    assert!(want.contains(&b"hot-common-line"[..]) && want.contains(&b"\xc3\x28hot-bytes\xff"[..]));
    assert!(!want.contains(&b"hot-private-0"[..]));
    let temp = d.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    for threads in ["1", "3"] {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            os("-v"),
            os("--threads"),
            os(threads),
            os("common"),
            os("--exact"),
            os("--memory"),
            os("64K"),
            os("--temp-dir"),
            temp.as_os_str(),
        ];
        args.extend(paths.iter().map(|p| p.as_os_str()));
        let out = run(&args);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        assert!(stat(&err, "re-splits") >= 1, "{err}");
        assert!(err.contains("re-split p-"), "{err}");
        let got = lines_of(&out.stdout);
        let got_set: BTreeSet<Vec<u8>> = got.iter().cloned().collect();
        assert_eq!(got.len(), got_set.len(), "every common line once");
        assert_eq!(got_set, want, "{threads} threads: {err}");
        assert_eq!(std::fs::read_dir(&temp).unwrap().count(), 0, "temp removed");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn common_exact_one_line_repeated_past_the_budget() {
    // Re-splitting cannot shrink a partition of one line repeated: it is loaded as it
    // is, and its set holds the line once.
    let d = dir("repeat");
    let a = d.join("a.txt");
    let b = d.join("b.txt");
    std::fs::write(&a, "same-line\n".repeat(60_000)).unwrap();
    std::fs::write(&b, "other\nsame-line\r\nthird\n".repeat(30_000)).unwrap();
    let out = run(&[
        os("-v"),
        os("common"),
        os("--exact"),
        os("--memory"),
        os("64K"),
        a.as_os_str(),
        b.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, b"same-line\n");
    assert!(stat(&stderr(&out), "re-splits") >= 1, "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&d);
}

fn pipe(args: &[&std::ffi::OsStr], input: &[u8]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn build_query_every_key_files_and_stdin() {
    let d = dir("bq");
    let data = family_file(3, 60_000, 4);
    let keys = keys_of(&data);
    let kf = d.join("keys.txt");
    std::fs::write(&kf, &data).unwrap();
    for kind in [
        "blocked",
        "split",
        "standard",
        "counting",
        "counting-standard",
        "dleft",
    ] {
        for threads in ["1", "2", "4"] {
            let f = d.join(format!("{kind}-{threads}.bloom"));
            // From the file (sized by the HyperLogLog pass), and from stdin (spooled).
            let out = run(&[
                os("--threads"),
                os(threads),
                os("build"),
                kf.as_os_str(),
                os("-o"),
                f.as_os_str(),
                os("--kind"),
                os(kind),
                os("--fp"),
                os("0.001"),
            ]);
            assert!(out.status.success(), "{kind}: {}", stderr(&out));
            let f2 = d.join(format!("{kind}-{threads}-stdin.bloom"));
            let out = pipe(
                &[
                    os("--threads"),
                    os(threads),
                    os("build"),
                    os("-o"),
                    f2.as_os_str(),
                    os("--kind"),
                    os(kind),
                    os("--fp"),
                    os("0.001"),
                    os("--temp-dir"),
                    d.as_os_str(),
                ],
                &data,
            );
            assert!(out.status.success(), "{kind}: {}", stderr(&out));
            assert_eq!(
                std::fs::read(&f).unwrap(),
                std::fs::read(&f2).unwrap(),
                "{kind}: stdin builds the same filter"
            );
            // Every key is reported present, exactly as read (file and stdin).
            let out = run(&[os("query"), f.as_os_str(), kf.as_os_str(), os("--absent")]);
            assert!(out.status.success(), "{}", stderr(&out));
            assert!(out.stdout.is_empty(), "{kind}: a key reported absent");
            let out = pipe(&[os("query"), f.as_os_str()], &data);
            let got: BTreeSet<Vec<u8>> = lines_of(&out.stdout).into_iter().collect();
            assert_eq!(got, keys, "{kind}");
        }
        // The same filter whatever the thread count (4: the atomic parallel insert).
        for t in ["2", "4"] {
            assert_eq!(
                std::fs::read(d.join(format!("{kind}-1.bloom"))).unwrap(),
                std::fs::read(d.join(format!("{kind}-{t}.bloom"))).unwrap(),
                "{kind}, {t} threads"
            );
        }
    }
    // No spool file left behind.
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("bloomforge-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // --keep-empty makes the empty line a key.
    let f = d.join("empty.bloom");
    let out = pipe(
        &[os("build"), os("-o"), f.as_os_str(), os("--keep-empty")],
        b"a\n\nb\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = pipe(&[os("query"), f.as_os_str(), os("--keep-empty")], b"\n");
    assert_eq!(out.stdout, b"\n");

    // An overfilled filter warns with its actual FP.
    let f = d.join("over.bloom");
    let out = run(&[
        os("build"),
        kf.as_os_str(),
        os("-o"),
        f.as_os_str(),
        os("--expected"),
        os("10000"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning") && stderr(&out).contains("false-positive rate is about"),
        "{}",
        stderr(&out)
    );
    // ... and one far too small is refused, with nothing written.
    let f = d.join("useless.bloom");
    let out = run(&[
        os("build"),
        kf.as_os_str(),
        os("-o"),
        f.as_os_str(),
        os("--expected"),
        os("100"),
    ]);
    assert_one_line_error(&out, "far too small");
    assert!(!f.exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// A clean failure: status 1, one line on stderr, no panic.
fn assert_one_line_error(out: &Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    assert!(err.contains(needle), "{needle:?} not in {err:?}");
    assert!(!err.contains("panicked"));
}

#[test]
fn failures_are_one_line_and_leave_no_output() {
    let d = dir("fail");
    let kf = d.join("k.txt");
    std::fs::write(
        &kf,
        (0..5000).map(|i| format!("k{i}\n")).collect::<String>(),
    )
    .unwrap();
    let good = d.join("good.bloom");
    assert!(
        run(&[os("build"), kf.as_os_str(), os("-o"), good.as_os_str()])
            .status
            .success()
    );
    let bytes = std::fs::read(&good).unwrap();

    // A truncated and a corrupted filter.
    let bad = d.join("bad.bloom");
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    assert_one_line_error(
        &run(&[os("query"), bad.as_os_str(), kf.as_os_str()]),
        "bad.bloom",
    );
    let mut corrupt = bytes.clone();
    let n = corrupt.len();
    corrupt[n - 3] ^= 0x10;
    std::fs::write(&bad, &corrupt).unwrap();
    let out = run(&[os("query"), bad.as_os_str(), kf.as_os_str()]);
    assert_one_line_error(&out, "bad.bloom");
    assert!(out.stdout.is_empty());
    assert_one_line_error(&run(&[os("stats"), bad.as_os_str()]), "bad.bloom");

    // A missing key file, a missing filter, a missing input of common.
    let missing = d.join("missing.txt");
    let out_f = d.join("never.bloom");
    assert_one_line_error(
        &run(&[
            os("build"),
            missing.as_os_str(),
            os("-o"),
            out_f.as_os_str(),
        ]),
        "missing.txt",
    );
    assert_one_line_error(&run(&[os("query"), missing.as_os_str()]), "missing.txt");
    assert_one_line_error(
        &run(&[
            os("common"),
            kf.as_os_str(),
            missing.as_os_str(),
            os("--exact"),
        ]),
        "missing.txt",
    );

    // Unwritable outputs: under a regular file, and in a missing directory.
    for target in [kf.join("x.bloom"), d.join("nodir").join("x.bloom")] {
        let out = run(&[os("build"), kf.as_os_str(), os("-o"), target.as_os_str()]);
        assert_one_line_error(&out, "x.bloom");
        assert!(!target.exists());
        let out = run(&[
            os("common"),
            kf.as_os_str(),
            kf.as_os_str(),
            os("--exact"),
            os("-o"),
            target.as_os_str(),
        ]);
        assert_one_line_error(&out, "x.bloom");
        assert!(!target.exists());
    }
    assert!(!out_f.exists());
    // A failed build leaves an existing output untouched.
    let out = run(&[os("build"), missing.as_os_str(), os("-o"), good.as_os_str()]);
    assert_one_line_error(&out, "missing.txt");
    assert_eq!(std::fs::read(&good).unwrap(), bytes);
    // Nothing but the inputs and the good filter remain (no temporary files).
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["bad.bloom", "good.bloom", "k.txt"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Two files of `lines` identical lines of ~40 bytes: every line is common, so the
/// answer is as large as the input.
fn all_common(d: &std::path::Path, lines: usize) -> (PathBuf, PathBuf) {
    let data: String = (0..lines)
        .map(|i| {
            format!(
                "https://example.org/{:016x}/{i}\n",
                i.wrapping_mul(0x9e37_79b9)
            )
        })
        .collect();
    let (a, b) = (d.join("a.txt"), d.join("b.txt"));
    std::fs::write(&a, &data).unwrap();
    std::fs::write(&b, &data).unwrap();
    (a, b)
}

#[test]
fn common_exact_interrupted_by_sigint_or_sigterm_removes_its_temp_files() {
    let d = dir("signal");
    // ~6 MB of common lines: far more than the output buffer (1 MiB) and a pipe (64 KiB
    // by default, 1 MiB at most), so the run cannot finish while its stdout is not read.
    let (a, b) = all_common(&d, 150_000);
    for signal in ["INT", "TERM"] {
        let temp = d.join(format!("tmp-{signal}"));
        std::fs::create_dir_all(&temp).unwrap();
        let mut cmd = bin();
        let child = support::with_default_signals(&mut cmd)
            .args([os("common"), os("--exact"), os("--memory"), os("256K")])
            .arg("--temp-dir")
            .arg(&temp)
            .arg(&a)
            .arg(&b)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The first output bytes mean pass 3 is under way (partitions on disk); from here
        // the command blocks on its stdout, which is no longer read, until the signal.
        support::interrupt_mid_output(child, &temp, signal);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The names in a directory, sorted.
fn names(d: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn common_exact_failing_mid_run_leaves_no_output_and_no_temp_files() {
    let d = dir("midfail");
    let paths: Vec<PathBuf> = (0..3u64)
        .map(|f| {
            let p = d.join(format!("hot-{f}.txt"));
            std::fs::write(&p, hot_file(f, 9000 + 2000 * f as usize, 3)).unwrap();
            p
        })
        .collect();
    let temp = d.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let out_dir = d.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("common.txt");
    std::fs::write(&out, "previous answer\n").unwrap();
    let common = |extra: &[&std::ffi::OsStr], fault: Option<u64>| {
        let mut c = bin();
        c.args(extra).args([
            os("common"),
            os("--exact"),
            os("--memory"),
            os("64K"),
            os("--temp-dir"),
            temp.as_os_str(),
            os("-o"),
            out.as_os_str(),
        ]);
        c.args(&paths);
        if let Some(limit) = fault {
            c.env("BLOOMFORGE_FAULT_TEMP_FULL_AFTER", limit.to_string());
        }
        c.output().unwrap()
    };
    // A successful run: how many temporary bytes passes 1-2 write, and how many more
    // the re-splits of pass 3 write (one worker: a deterministic order).
    let ok = common(&[os("-v"), os("--threads"), os("1")], None);
    let err = stderr(&ok);
    assert!(ok.status.success(), "{err}");
    let passes_1_2 = stat(&err, "temp bytes after passes 1-2");
    let total = stat(&err, "temp bytes written");
    assert!(
        stat(&err, "re-splits") >= 1 && total > passes_1_2 + 1000,
        "{err}"
    );
    let answer = std::fs::read(&out).unwrap();
    std::fs::write(&out, "previous answer\n").unwrap();

    // The disk fills in pass 1, and in pass 3 (a re-split), after the output file was
    // opened and partitions were intersected: one line naming the temp dir, status 1,
    // the previous output untouched, no temporary file left beside it or in the temp dir.
    for (when, limit) in [
        ("pass 1", 1000),
        ("pass 3", passes_1_2 + (total - passes_1_2) / 2),
    ] {
        let r = common(&[os("--threads"), os("1")], Some(limit));
        assert_one_line_error(&r, "temp dir full: needs about");
        let err = stderr(&r);
        assert!(err.contains(&temp.display().to_string()), "{when}: {err}");
        assert_eq!(std::fs::read(&out).unwrap(), b"previous answer\n", "{when}");
        assert_eq!(names(&out_dir), ["common.txt"], "{when}");
        assert!(names(&temp).is_empty(), "{when}: {:?}", names(&temp));
    }
    // Without the fault, the same command writes the answer.
    let r = common(&[os("--threads"), os("1")], None);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(std::fs::read(&out).unwrap(), answer);

    // A missing file after valid ones: refused before anything is read or opened (every
    // input is checked first), the output untouched.
    std::fs::write(&out, "previous answer\n").unwrap();
    let missing = d.join("missing.txt");
    let r = run(&[
        os("common"),
        os("--exact"),
        paths[0].as_os_str(),
        paths[1].as_os_str(),
        missing.as_os_str(),
        os("-o"),
        out.as_os_str(),
        os("--temp-dir"),
        temp.as_os_str(),
    ]);
    assert_one_line_error(&r, "missing.txt");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous answer\n");
    assert_eq!(names(&out_dir), ["common.txt"]);
    assert!(names(&temp).is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn common_exact_rejects_fp_and_checks_its_range_first() {
    let d = dir("fp");
    let (a, b) = all_common(&d, 100);
    let out = run(&[
        os("common"),
        os("--exact"),
        os("--fp"),
        os("0.01"),
        a.as_os_str(),
        b.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).trim_end().lines().count(), 1);
    // Out of range: a usage error before any pass (the files need not even exist).
    for bad in ["0", "1", "1.5", "-0.1", "x"] {
        let fp = format!("--fp={bad}");
        let out = run(&[
            os("common"),
            os(&fp),
            os("/nonexistent/a"),
            os("/nonexistent/b"),
        ]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("--fp"), "{}", stderr(&out));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(target_os = "linux")]
#[test]
fn common_exact_memory_stays_bounded_at_many_threads() {
    // Resident memory within --memory + 64 MiB whatever --threads: 32 threads on this
    // machine (pass 3 caps its workers and their buffers), with re-splits.
    let d = dir("rss");
    let paths: Vec<PathBuf> = (0..2u64)
        .map(|f| {
            let p = d.join(format!("hot-{f}.txt"));
            std::fs::write(&p, hot_file(f, 60_000, 2)).unwrap();
            p
        })
        .collect();
    for threads in ["1", "32"] {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            os("-v"),
            os("--threads"),
            os(threads),
            os("common"),
            os("--exact"),
            os("--memory"),
            os("1M"),
        ];
        args.extend(paths.iter().map(|p| p.as_os_str()));
        let out = run(&args);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        if threads == "32" {
            // 1M shared by 16 workers: 64K sets, so the hot partitions are split again.
            assert!(stat(&err, "re-splits") >= 1, "{err}");
            assert_eq!(stat(&err, "pass 3"), 16, "{err}");
        }
        let rss = stat(&err, "peak RSS");
        assert!(rss < (1 << 20) + (64 << 20), "{threads} threads: {err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn build_with_duplicates_at_the_expected_distinct_count_does_not_warn() {
    // 6000 distinct keys, each on 8 lines (CRLF on some): --expected 6000 is exact, so no
    // kind may warn of an overfill (the counting filters' counter sum and the d-left
    // count of inserts see 48 000 keys; the check uses the fill).
    let d = dir("dups");
    let mut data = Vec::new();
    for round in 0..8 {
        for i in 0..6000 {
            data.extend_from_slice(format!("key-{i}").as_bytes());
            data.extend_from_slice(if (i + round) % 5 == 0 { b"\r\n" } else { b"\n" });
        }
    }
    let kf = d.join("dups.txt");
    std::fs::write(&kf, &data).unwrap();
    let over = d.join("over.txt");
    std::fs::write(
        &over,
        (0..12_000)
            .map(|i| format!("key-{i}\n"))
            .collect::<String>(),
    )
    .unwrap();
    for kind in [
        "blocked",
        "split",
        "standard",
        "counting",
        "counting-standard",
        "dleft",
    ] {
        let f = d.join(format!("{kind}.bloom"));
        let out = run(&[
            os("build"),
            kf.as_os_str(),
            os("-o"),
            f.as_os_str(),
            os("--kind"),
            os(kind),
            os("--expected"),
            os("6000"),
        ]);
        let err = stderr(&out);
        assert!(out.status.success(), "{kind}: {err}");
        assert!(!err.contains("warning"), "{kind}: {err}");
        // The summary counts 48 000 keys and about 6000 distinct ones.
        assert!(err.contains("48000 keys (~"), "{kind}: {err}");
        let distinct: f64 = err
            .split("48000 keys (~")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{kind}: {err}"));
        assert!((5600.0..=6400.0).contains(&distinct), "{kind}: {err}");
        // Twice the keys it was sized for still warns (counting kinds too).
        if kind != "dleft" {
            let f = d.join(format!("{kind}-over.bloom"));
            let out = run(&[
                os("build"),
                over.as_os_str(),
                os("-o"),
                f.as_os_str(),
                os("--kind"),
                os(kind),
                os("--expected"),
                os("6000"),
            ]);
            let err = stderr(&out);
            assert!(out.status.success(), "{kind}: {err}");
            assert!(
                err.contains("warning") && err.contains("more than --expected 6000"),
                "{kind}: {err}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn common_exact_keeps_a_signal_ignored_at_start_ignored() {
    // Under `nohup` (SIGHUP ignored when the process starts) a hangup must not stop the
    // run: SIGHUP is handled like SIGINT only when it was not ignored.
    use std::io::Read;
    let d = dir("nohup");
    let (a, b) = all_common(&d, 150_000);
    let temp = d.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("trap '' HUP; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_bloomforge"))
        .args([os("common"), os("--exact"), os("--memory"), os("256K")])
        .arg("--temp-dir")
        .arg(&temp)
        .arg(&a)
        .arg(&b)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut got = vec![0u8; 4096];
    let n = stdout.read(&mut got).unwrap();
    assert!(n > 0, "no output before the signal");
    got.truncate(n);
    // Pass 3 is under way and blocked on stdout: a handled SIGHUP would end it with 130.
    support::send_signal(&child, "HUP");
    stdout.read_to_end(&mut got).unwrap();
    let (status, err) = support::wait_with_stderr(&mut child);
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!(lines_of(&got).len(), 150_000, "the whole answer");
    assert!(names(&temp).is_empty());
    let _ = std::fs::remove_dir_all(&d);
}
