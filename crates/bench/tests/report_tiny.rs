//! Runs the whole harness in tiny mode, in process, into a temporary directory, and
//! checks that every report file exists and parses.

use bloomforge_bench::config::{Config, Mode};
use bloomforge_bench::report::RESULTS_COLUMNS;
use bloomforge_bench::subjects::Origin;
use std::path::{Path, PathBuf};

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn check_csv(dir: &Path, name: &str, min_rows: usize) -> (Vec<String>, Vec<Vec<String>>) {
    let text = read(dir, name);
    // A strict reader: every record must have the header's number of fields.
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .iter()
        .map(str::to_string)
        .collect();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("{name}: {e}"));
            r.iter().map(str::to_string).collect()
        })
        .collect();
    assert!(rows.len() >= min_rows, "{name}: {} rows", rows.len());
    for r in &rows {
        assert_eq!(r.len(), header.len(), "{name}: ragged row {r:?}");
    }
    (header, rows)
}

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bloomforge-report-tiny-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

use crate::report_html;

#[test]
fn tiny_run_writes_parsable_report() {
    let dir = out_dir();
    let mut cfg = Config::new(Mode::Tiny);
    cfg.out_dir = dir.clone();
    cfg.quiet = true;
    cfg.threads = 2;
    cfg.plan.thread_counts = vec![1, 2];
    let report = bloomforge_bench::run(&cfg).expect("tiny run");

    // Our filters' FP must be consistent with theory. Seeds are fixed, so this is
    // deterministic; were they random, each row's false-alarm probability is 1e-6.
    for r in &report.rows {
        if r.origin == Origin::Ours {
            let fp = r.fp.as_ref().expect("FP measured");
            assert!(fp.consistent, "{} on {}: {fp:?}", r.filter, r.workload);
        }
    }
    assert!(report.rows.iter().any(|r| r.layout == "floor"));
    assert!(report.rows.iter().any(|r| r.bulk.len() == 2));

    // Plot axes: no tick label printed twice (ns_vs_size showed "10.0" twice).
    for svg in ["ns_vs_size.svg", "fp_vs_bits.svg", "thread_scaling.svg"] {
        let text = read(&dir, svg);
        let labels: Vec<&str> = text
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>').map(|(_, rest)| rest))
            .filter_map(|t| t.split_once("</text>").map(|(label, _)| label.trim()))
            .filter(|l| l.parse::<f64>().is_ok())
            .collect();
        for pair in labels.windows(2) {
            assert_ne!(pair[0], pair[1], "{svg}: tick label {:?} twice", pair[0]);
        }
    }

    // CSV files: headers and column counts.
    let (header, rows) = check_csv(&dir, "results.csv", 10);
    assert_eq!(header, RESULTS_COLUMNS);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for r in &rows {
        let bpk: f64 = r[col("bits_per_key")]
            .parse()
            .expect("bits_per_key is a number");
        assert!(bpk > 0.0);
        if r[col("layout")] != "floor" {
            let ns: f64 = r[col("query_neg_ns")].parse().expect("query_neg_ns");
            assert!(ns > 0.0 && ns.is_finite());
            let fp: f64 = r[col("fp_measured")].parse().expect("fp_measured");
            assert!((0.0..=1.0).contains(&fp));
        }
    }
    check_csv(&dir, "fp_sweep.csv", 4);
    check_csv(&dir, "size_sweep.csv", 4);
    check_csv(&dir, "threads.csv", 2);
    check_csv(&dir, "backends.csv", 2);
    check_csv(&dir, "hashers.csv", 8);

    // JSON.
    let json: serde_json::Value = serde_json::from_str(&read(&dir, "results.json")).expect("JSON");
    assert_eq!(json["config"]["mode"], "Tiny");
    assert_eq!(
        json["rows"].as_array().map(Vec::len),
        Some(report.rows.len())
    );
    assert!(json["rows"][0]["query_neg"]["ns_per_key"].is_number());
    assert!(json["meta"]["cpu"].is_string());

    // SVGs. Tiny mode has a random-u64 scenario and selects every filter, so the
    // counting-counter and d-left bucket-load histograms are drawn too.
    assert!(report.counting.is_some() && report.dleft.is_some());
    for svg in [
        "fp_vs_bits.svg",
        "ns_vs_size.svg",
        "thread_scaling.svg",
        "counting_counters.svg",
        "dleft_bucket_load.svg",
    ] {
        let text = read(&dir, svg);
        let t = text.trim();
        assert!(t.starts_with("<svg") && t.ends_with("</svg>"), "{svg}");
        assert!(
            t.contains("<text") && t.matches('<').count() > 20,
            "{svg} looks empty"
        );
    }

    // index.md links resolve.
    let index = read(&dir, "index.md");
    let links: Vec<&str> = index
        .split("](")
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .collect();
    assert!(links.len() >= 10, "{links:?}");
    for l in links {
        assert!(dir.join(l).is_file(), "index.md links to missing {l}");
    }
    for f in &report.files {
        assert!(dir.join(f).is_file(), "{f} listed but missing");
    }
    let md = read(&dir, "report.md");
    assert!(md.contains("| **blocked** |") && md.contains("floor"));
    report_html::check(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The report of a full run, when `BLOOMFORGE_REPORT_DIR` names its directory (say, after
/// a `--quick` harness run): its `report.html` is checked the same way as the tiny run's.
#[test]
fn named_report_html_renders() {
    match std::env::var_os("BLOOMFORGE_REPORT_DIR") {
        Some(dir) => report_html::check(Path::new(&dir)),
        None => {
            println!("BLOOMFORGE_REPORT_DIR not set: only the tiny run's report.html is checked")
        }
    }
}

/// `--keys FILE` end to end: the file's keys (duplicates and a CRLF line included) are
/// measured as their own workload, every answer checked by the run, FP consistent.
#[test]
fn tiny_run_measures_a_key_file() {
    let dir = out_dir().with_extension("keys");
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys.txt");
    let mut text: String = (0..3000)
        .map(|i| format!("user:{i}@example.org\n"))
        .collect();
    text.push_str("user:7@example.org\r\nuser:8@example.org\n");
    std::fs::write(&keys, text).unwrap();
    let cfg = bloomforge_bench::config::parse_args(
        [
            "--tiny",
            "--quiet",
            "--only",
            "blocked,split-block,sbbf-rs-safe",
            "--threads",
            "1",
            "--keys",
            keys.to_str().unwrap(),
            "--out",
            dir.join("report").to_str().unwrap(),
        ]
        .map(String::from),
    )
    .expect("valid arguments")
    .expect("not --help");
    let report = bloomforge_bench::run(&cfg).expect("tiny run with a key file");
    let file_rows: Vec<_> = report
        .rows
        .iter()
        .filter(|r| r.workload == "file:keys.txt")
        .collect();
    assert!(
        file_rows.iter().any(|r| r.filter == "blocked")
            && file_rows.iter().any(|r| r.filter == "sbbf-rs-safe"),
        "{:?}",
        report
            .rows
            .iter()
            .map(|r| (&r.workload, &r.filter))
            .collect::<Vec<_>>()
    );
    for r in &file_rows {
        assert_eq!(r.n, 3000, "duplicates are dropped: {}", r.filter);
        if r.origin == Origin::Ours {
            assert!(
                r.fp.as_ref().expect("FP measured").consistent,
                "{}",
                r.filter
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
