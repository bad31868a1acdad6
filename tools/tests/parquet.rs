//! `bloomforge parquet index | probe | filters` end to end, on files written with the
//! parquet crate's low-level writer.

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use crate::support;

const ROW_GROUPS: usize = 4;
const ROWS: usize = 500;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn tmp(name: &str) -> PathBuf {
    support::tmp_in("parquet", name)
}

fn url(group: usize, row: usize) -> String {
    format!("https://example.org/{group}/{row}")
}

/// `ROW_GROUPS` row groups of `ROWS` rows: `url` (string) and `id` (int64), no filters.
fn write_file(path: &Path) {
    let schema = Arc::new(
        parse_message_type("message m { required binary url (UTF8); required int64 id; }").unwrap(),
    );
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, Arc::new(props)).unwrap();
    for g in 0..ROW_GROUPS {
        let mut rg = w.next_row_group().unwrap();
        let urls: Vec<ByteArray> = (0..ROWS)
            .map(|r| ByteArray::from(url(g, r).as_str()))
            .collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&urls, None, None)
            .unwrap();
        col.close().unwrap();
        let ids: Vec<i64> = (0..ROWS).map(|r| (g * ROWS + r) as i64).collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<Int64Type>()
            .write_batch(&ids, None, None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
    }
    w.close().unwrap();
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// Exit status 1, one line on stderr, `bloomforge: ` and the message.
fn failure(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("bloomforge: "), "{err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn index_then_probe_and_list() {
    let (input, output) = (tmp("index.parquet"), tmp("index-out.parquet"));
    write_file(&input);
    let before = std::fs::read(&input).unwrap();
    let out = run(&[
        "parquet",
        "index",
        s(&input),
        "-o",
        s(&output),
        "--column",
        "url",
        "-c",
        "id",
        "--fp",
        "0.01",
    ]);
    assert_eq!(ok(&out), "", "nothing on stdout");
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}: {ROW_GROUPS} row groups, {} rows",
            s(&output),
            ROW_GROUPS * ROWS
        )),
        "{err}"
    );
    assert!(
        err.contains("  url: 4 row groups indexed, 2000 distinct values, "),
        "{err}"
    );
    assert!(err.contains(" filter bytes, est. FP "), "{err}");
    assert_eq!(std::fs::read(&input).unwrap(), before);

    // probe: one line per row group and a count; no false negative.
    let value = url(2, 17);
    let stdout = ok(&run(&["parquet", "probe", s(&output), "url", &value]));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), ROW_GROUPS + 1, "{stdout}");
    assert_eq!(lines[2], "row group 2: may contain");
    for (g, line) in lines[..ROW_GROUPS].iter().enumerate() {
        assert!(
            *line == format!("row group {g}: may contain")
                || *line == format!("row group {g}: absent"),
            "{line}"
        );
    }
    assert!(
        lines[ROW_GROUPS].contains(" of 4 row groups may contain the value ("),
        "{stdout}"
    );
    let stdout = ok(&run(&["parquet", "probe", s(&output), "id", "1234"]));
    assert!(
        stdout.lines().nth(2).unwrap() == "row group 2: may contain",
        "{stdout}"
    );
    // A negative value is a value, not an option.
    ok(&run(&["parquet", "probe", s(&output), "id", "-5"]));
    // The input has no filters.
    let stdout = ok(&run(&["parquet", "probe", s(&input), "url", &value]));
    assert!(stdout.starts_with("row group 0: no filter\n"), "{stdout}");
    assert!(
        stdout
            .ends_with("0 of 4 row groups may contain the value (0 absent, 4 without a filter)\n"),
        "{stdout}"
    );

    // filters: a header and one line per row group and column.
    let stdout = ok(&run(&["parquet", "filters", s(&output)]));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "row_group\tcolumn\ttype\trows\tfilter_bytes\test_distinct\test_fp"
    );
    assert_eq!(lines.len(), 1 + ROW_GROUPS * 2);
    let fields: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(fields[..4], ["0", "url", "BYTE_ARRAY", "500"]);
    assert!(fields[4].parse::<u64>().unwrap().is_power_of_two());
    let fp: f64 = fields[6].parse().unwrap();
    assert!(fp > 0.0 && fp <= 0.01, "{fp}");
    let stdout = ok(&run(&["parquet", "filters", s(&input)]));
    assert!(
        stdout.lines().nth(1).unwrap().ends_with("\t-\t-\t-"),
        "{stdout}"
    );
    // --json: one object a line.
    let stdout = ok(&run(&["parquet", "filters", s(&output), "--json"]));
    let records: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), ROW_GROUPS * 2);
    assert_eq!(records[1]["column"], "id");
    assert_eq!(records[1]["type"], "INT64");
    assert_eq!(records[1]["rows"], 500);
    assert!(records[1]["filter_bytes"].as_u64().unwrap() >= 32);
    assert!(records[1]["est_fp"].as_f64().unwrap() <= 0.01);
    let stdout = ok(&run(&["parquet", "filters", s(&input), "--json"]));
    assert!(
        stdout.lines().all(|l| l.contains("\"filter_bytes\":null")),
        "{stdout}"
    );

    // -q: no summary.
    let quiet = tmp("index-quiet.parquet");
    let out = run(&[
        "-q",
        "parquet",
        "index",
        s(&input),
        "-o",
        s(&quiet),
        "-c",
        "url",
    ]);
    ok(&out);
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn in_place_and_keep_existing() {
    let path = tmp("in-place.parquet");
    write_file(&path);
    ok(&run(&[
        "parquet",
        "index",
        s(&path),
        "--in-place",
        "--column",
        "url",
        "-q",
    ]));
    let listing = ok(&run(&["parquet", "filters", s(&path)]));
    let url_bytes: Vec<&str> = listing
        .lines()
        .filter(|l| l.split('\t').nth(1) == Some("url"))
        .map(|l| l.split('\t').nth(4).unwrap())
        .collect();
    assert_eq!(url_bytes.len(), ROW_GROUPS);
    assert!(url_bytes.iter().all(|b| *b != "-"), "{listing}");
    // At a lower rate with --keep-existing, url keeps its filters; id gets new ones.
    let out = run(&[
        "parquet",
        "index",
        s(&path),
        "--in-place",
        "-c",
        "url",
        "-c",
        "id",
        "--fp",
        "0.0001",
        "--keep-existing",
    ]);
    ok(&out);
    assert!(
        text(&out.stderr).contains("url: 0 row groups indexed, 4 existing kept"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        ok(&run(&["parquet", "filters", s(&path)]))
            .lines()
            .filter(|l| l.split('\t').nth(1) == Some("url"))
            .map(|l| l.split('\t').nth(4).unwrap().to_string())
            .collect::<Vec<_>>(),
        url_bytes
    );
    // Without it, they are rebuilt at the lower rate (larger).
    ok(&run(&[
        "parquet",
        "index",
        s(&path),
        "--in-place",
        "-c",
        "url",
        "--fp",
        "0.0001",
        "-q",
    ]));
    let listing = ok(&run(&["parquet", "filters", s(&path)]));
    let line = listing.lines().nth(1).unwrap();
    let bytes: u64 = line.split('\t').nth(4).unwrap().parse().unwrap();
    assert!(bytes > url_bytes[0].parse::<u64>().unwrap(), "{listing}");
    // Only the file itself is in its directory's listing under that name: no temporary left.
    let dir = path.parent().unwrap();
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("in-place.parquet") && n != "in-place.parquet")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn errors_are_one_line_and_leave_the_input_alone() {
    let input = tmp("errors.parquet");
    write_file(&input);
    let before = std::fs::read(&input).unwrap();
    let out_path = tmp("errors-out.parquet");

    let err = failure(&run(&[
        "parquet",
        "index",
        s(&input),
        "-o",
        s(&out_path),
        "-c",
        "nope",
    ]));
    assert_eq!(
        err,
        format!(
            "bloomforge: {}: no column \"nope\"; the file has: url, id\n",
            s(&input)
        )
    );
    let err = failure(&run(&[
        "parquet",
        "index",
        s(&input),
        "--in-place",
        "-c",
        "nope",
    ]));
    assert!(err.contains("no column \"nope\""), "{err}");
    let err = failure(&run(&[
        "parquet",
        "index",
        s(&input),
        "-o",
        s(&out_path),
        "-c",
        "url",
        "--fp",
        "2",
    ]));
    assert!(
        err.contains("false-positive rate 2 is not in (0, 1)"),
        "{err}"
    );
    assert!(!out_path.exists());
    assert_eq!(std::fs::read(&input).unwrap(), before);

    let notes = tmp("notes.txt");
    std::fs::write(&notes, "not parquet\n").unwrap();
    for args in [
        vec![
            "parquet",
            "index",
            s(&notes),
            "-o",
            s(&out_path),
            "-c",
            "url",
        ],
        vec!["parquet", "probe", s(&notes), "url", "x"],
        vec!["parquet", "filters", s(&notes)],
    ] {
        let err = failure(&run(&args));
        assert!(
            err.starts_with(&format!("bloomforge: {}: ", s(&notes))),
            "{err}"
        );
    }
    assert_eq!(std::fs::read(&notes).unwrap(), b"not parquet\n");
    let missing = tmp("missing.parquet");
    let err = failure(&run(&["parquet", "filters", s(&missing)]));
    assert!(
        err.starts_with(&format!("bloomforge: {}: ", s(&missing))),
        "{err}"
    );

    // Values that do not fit the column.
    let err = failure(&run(&["parquet", "probe", s(&input), "id", "twelve"]));
    assert_eq!(
        err,
        format!(
            "bloomforge: {}: column \"id\" is INT64: \"twelve\" is not an integer\n",
            s(&input)
        )
    );
    let err = failure(&run(&[
        "parquet",
        "probe",
        s(&input),
        "id",
        "99999999999999999999",
    ]));
    assert!(err.contains("out of range"), "{err}");

    // Usage errors: status 2.
    for args in [
        vec!["parquet", "index", s(&input), "-c", "url"],
        vec!["parquet", "index", s(&input), "-o", s(&out_path)],
        vec![
            "parquet",
            "index",
            s(&input),
            "-o",
            s(&out_path),
            "--in-place",
            "-c",
            "url",
        ],
        vec!["parquet", "probe", s(&input), "url"],
    ] {
        let out = run(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    assert!(!out_path.exists());
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn help_says_what_memory_and_examples() {
    for (cmd, words) in [
        ("index", ["Memory:", "Examples:", "copied"]),
        ("probe", ["Memory:", "Examples:", "row group"]),
        ("filters", ["Memory:", "Examples:", "false-positive"]),
    ] {
        let out = ok(&run(&["parquet", cmd, "--help"]));
        for w in words {
            assert!(out.contains(w), "{cmd} --help lacks {w:?}:\n{out}");
        }
    }
    let out = ok(&run(&["--help"]));
    assert!(out.contains("parquet"), "{out}");
}
