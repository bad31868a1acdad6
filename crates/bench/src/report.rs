//! The report: a markdown table for stdout and `report.md`, CSV and JSON files, the SVG
//! plots, `report.html` (all of it in one self-contained page) and an `index.md` linking
//! them.

use crate::measure::{Row, FP_ALPHA};
use crate::subjects::Origin;
use crate::timing::Timing;
use crate::units::human_bytes;
use crate::{plots, BenchError, Report};
use std::fmt::Write as _;
use std::path::Path;

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    let first = match s.len() % 3 {
        0 => 3,
        r => r,
    };
    out.push_str(&s[..first]);
    for group in s.as_bytes()[first..].chunks(3) {
        out.push(',');
        out.push_str(std::str::from_utf8(group).unwrap_or_default());
    }
    out
}

/// A nanosecond figure with about three significant digits.
pub fn ns(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn opt_ns(t: &Option<Timing>) -> String {
    t.as_ref().map_or("-".into(), |t| ns(t.ns_per_key))
}

/// A probability as a percentage with three significant digits.
pub fn pct(p: f64) -> String {
    let v = p * 100.0;
    if v == 0.0 {
        "0".into()
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else {
        let digits = (2 - v.log10().floor() as i32).clamp(0, 8) as usize;
        format!("{v:.digits$}")
    }
}

fn scenario_key(r: &Row) -> (String, u64, String) {
    (r.workload.clone(), r.n, r.target.clone())
}

/// The scenario tables, in run order.
pub fn scenario_tables(report: &Report) -> String {
    let mut out = String::new();
    let max_threads = report
        .config
        .plan
        .thread_counts
        .last()
        .copied()
        .unwrap_or(1);
    let mut seen: Vec<(String, u64, String)> = Vec::new();
    for r in &report.rows {
        let key = scenario_key(r);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let _ = writeln!(
            out,
            "\n### {} keys, n = {}, {}\n",
            key.0,
            thousands(key.1),
            key.2
        );
        let _ = writeln!(
            out,
            "ns/key, median of {} runs; bulk = build + parallel insert on pinned threads; FP in %, 95 % Clopper-Pearson interval; \"= theory\": the measured FP agrees with the filter's own theory at alpha = {FP_ALPHA:e} (a check of the implementation, not a verdict on the FP).\n",
            report.config.plan.reps
        );
        if key.2.contains("bits/key") {
            let _ = writeln!(
                out,
                "Memory is held equal on purpose here: at the same bits per key, the counting filter (4 bits per counter) and the d-left filter (fingerprint + counter per cell) pay for deletion with a much higher FP; compare them at equal FP in the \"target FP\" table.\n"
            );
        }
        let _ = writeln!(
            out,
            "| filter | bits/key | k | insert | insert batch | query + | query - | query + batch | query - batch | bulk 1t | bulk {max_threads}t | FP % (95 % CI) | theory % | ratio | = theory |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|"
        );
        for r in report.rows.iter().filter(|r| scenario_key(r) == key) {
            let name = match r.origin {
                Origin::Ours => format!("**{}**", r.filter),
                _ => r.filter.clone(),
            };
            let bulk = |t: usize| {
                r.bulk
                    .iter()
                    .find(|b| b.threads == t)
                    .map_or("-".into(), |b| ns(b.timing.ns_per_key))
            };
            let (fp, theory, ratio, ok) = match &r.fp {
                Some(fp) => (
                    format!(
                        "{} ({}-{})",
                        pct(fp.measured),
                        pct(fp.ci95.0),
                        pct(fp.ci95.1)
                    ),
                    pct(fp.theory),
                    if fp.ratio.is_finite() {
                        format!("{:.2}", fp.ratio)
                    } else {
                        "-".into()
                    },
                    if fp.consistent { "yes" } else { "**NO**" },
                ),
                None => ("-".into(), "-".into(), "-".into(), ""),
            };
            let _ = writeln!(
                out,
                "| {name} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {fp} | {theory} | {ratio} | {ok} |",
                r.bits_per_key,
                r.k.map_or("-".into(), |k| k.to_string()),
                opt_ns(&r.insert),
                opt_ns(&r.insert_batch),
                opt_ns(&r.query_pos),
                opt_ns(&r.query_neg),
                opt_ns(&r.query_pos_batch),
                opt_ns(&r.query_neg_batch),
                bulk(1),
                if max_threads > 1 { bulk(max_threads) } else { "-".into() },
            );
        }
    }
    out
}

/// Thread scaling of every bulk-loading filter in the largest random-key scenario.
pub fn thread_table(report: &Report) -> String {
    let threads = &report.config.plan.thread_counts;
    let Some(n) = report
        .rows
        .iter()
        .filter(|r| r.workload == "random-u64" && !r.bulk.is_empty())
        .map(|r| r.n)
        .max()
    else {
        return String::new();
    };
    let rows: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.workload == "random-u64" && r.n == n && !r.bulk.is_empty())
        .filter(|r| r.target.contains("bits/key"))
        .collect();
    let mut out = format!(
        "\n### Bulk load, random-u64, n = {} (ns/key wall; speedup vs 1 thread)\n\n| filter |",
        thousands(n)
    );
    for t in threads {
        let _ = write!(out, " {t}t |");
    }
    out.push_str(" speedup |\n|---|");
    for _ in threads {
        out.push_str("---:|");
    }
    out.push_str("---:|\n");
    for r in rows {
        let _ = write!(out, "| {} |", r.filter);
        for t in threads {
            let v = r.bulk.iter().find(|b| b.threads == *t);
            let _ = write!(
                out,
                " {} |",
                v.map_or("-".into(), |b| ns(b.timing.ns_per_key))
            );
        }
        let first = r.bulk.first().map(|b| b.timing.ns_per_key);
        let last = r.bulk.last().map(|b| b.timing.ns_per_key);
        let speedup = match (first, last) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let _ = writeln!(out, " {speedup} |");
    }
    out
}

/// Per-backend and hasher tables.
pub fn backend_and_hasher_tables(report: &Report) -> String {
    let mut out = String::new();
    if !report.backends.is_empty() {
        let n = report.backends[0].n;
        let _ = writeln!(
            out,
            "\n### SIMD backends, random-u64, n = {}, {} bits (counting: counters) per key (ns/key)\n\n| filter | backend | insert | insert batch | query + | query - | query - batch |\n|---|---|---:|---:|---:|---:|---:|",
            thousands(n),
            report.config.plan.bits_per_key
        );
        for b in &report.backends {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                b.filter,
                b.backend,
                ns(b.insert_ns),
                ns(b.insert_batch_ns),
                ns(b.pos_ns),
                ns(b.neg_ns),
                ns(b.neg_batch_ns)
            );
        }
    }
    if !report.hashers.is_empty() {
        out.push_str(
            "\n### Hashing cost (ns/key)\n\n| hasher | u64 | URL string |\n|---|---:|---:|\n",
        );
        let mut names: Vec<&str> = Vec::new();
        for h in &report.hashers {
            if !names.contains(&h.hasher.as_str()) {
                names.push(&h.hasher);
            }
        }
        for name in names {
            let get = |keys: &str| {
                report
                    .hashers
                    .iter()
                    .find(|h| h.hasher == name && h.keys == keys)
                    .map_or("-".into(), |h| ns(h.ns_per_key))
            };
            let _ = writeln!(out, "| {name} | {} | {} |", get("u64"), get("url"));
        }
    }
    out
}

/// The counting-filter counter histogram and the d-left bucket loads against theory.
pub fn distribution_tables(report: &Report) -> String {
    let mut out = String::new();
    if let Some(c) = &report.counting {
        let total: u64 = c.histogram.iter().sum();
        let _ = writeln!(
            out,
            "\n### Counting filter: counter values (n = {}, {} counters, k = {}, sized for FP {}%)\n\nFraction of counters holding each value; theory: Binomial(n, q) with q the chance one key increments a given counter. Saturated: {}; union bound on any saturation: {:.2e}.\n\n| value | measured | binomial | Poisson |\n|---:|---:|---:|---:|",
            thousands(c.n),
            thousands(c.counters),
            c.k,
            c.target_fp * 100.0,
            c.saturated,
            c.overflow_union_bound
        );
        for (v, &h) in c.histogram.iter().enumerate() {
            let frac = h as f64 / total.max(1) as f64;
            if h == 0 && c.binomial.get(v).copied().unwrap_or(0.0) < 1e-9 {
                continue;
            }
            let label = if v + 1 == c.histogram.len() {
                format!(">= {v}")
            } else {
                v.to_string()
            };
            let _ = writeln!(
                out,
                "| {label} | {frac:.3e} | {:.3e} | {:.3e} |",
                c.binomial.get(v).copied().unwrap_or(0.0),
                c.poisson.get(v).copied().unwrap_or(0.0)
            );
        }
    }
    if let Some(d) = &report.dleft {
        let total: u64 = d.histogram.iter().sum();
        let _ = writeln!(
            out,
            "\n### d-left: bucket loads (n = {}, d = {}, B = {}, w = {}, r = {}, load {:.2} keys / {:.3} cells per bucket, {:.1} bits/key)\n\nFP: theory {}%, realised {}%. Failed inserts: {} (fluid limit expects {:.2e}); saturated cells: {}. The fluid limit is evaluated at the cell load (keys sharing a fingerprint share a cell).\n\n| cells used in bucket | measured | fluid limit |\n|---:|---:|---:|",
            thousands(d.n),
            d.subtables,
            thousands(d.buckets_per_subtable),
            d.cells_per_bucket,
            d.remainder_bits,
            d.load,
            d.cell_load,
            d.bits_per_key,
            pct(d.fp_theory),
            pct(d.fp_realised),
            d.failed_inserts,
            d.expected_failures,
            d.saturated_cells
        );
        for (i, &h) in d.histogram.iter().enumerate() {
            let _ = writeln!(
                out,
                "| {i} | {:.3e} | {:.3e} |",
                h as f64 / total.max(1) as f64,
                d.fluid.get(i).copied().unwrap_or(0.0)
            );
        }
    }
    out
}

/// FP sweep and size sweep as tables (for `report.md`).
pub fn sweep_tables(report: &Report) -> String {
    let mut out = String::new();
    if !report.fp_sweep.is_empty() {
        let n = report.fp_sweep[0].n;
        let _ = writeln!(
            out,
            "\n### FP vs bits/key (n = {}, {} queries per point)\n\n| filter | layout | bits/key | k | FP % (95 % CI) | theory % | ratio | = theory |\n|---|---|---:|---:|---:|---:|---:|:-:|",
            thousands(n),
            thousands(report.fp_sweep[0].fp.queries)
        );
        for p in &report.fp_sweep {
            let _ = writeln!(
                out,
                "| {} | {} | {:.2} | {} | {} ({}-{}) | {} | {:.2} | {} |",
                p.filter,
                p.layout,
                p.bits_per_key,
                p.k.map_or("-".into(), |k| k.to_string()),
                pct(p.fp.measured),
                pct(p.fp.ci95.0),
                pct(p.fp.ci95.1),
                pct(p.fp.theory),
                p.fp.ratio,
                if p.fp.consistent { "yes" } else { "**NO**" }
            );
        }
    }
    if !report.size_sweep.is_empty() {
        out.push_str("\n### Query ns/key vs filter size (10 bits/key; negative queries, single / batch)\n\n| size |");
        let mut filters: Vec<&str> = Vec::new();
        for p in &report.size_sweep {
            if !filters.contains(&p.filter.as_str()) {
                filters.push(&p.filter);
            }
        }
        for f in &filters {
            let _ = write!(out, " {f} |");
        }
        out.push_str("\n|---|");
        for _ in &filters {
            out.push_str("---:|");
        }
        out.push('\n');
        let mut sizes: Vec<u64> = report.size_sweep.iter().map(|p| p.bytes).collect();
        sizes.dedup();
        for b in sizes {
            let _ = write!(out, "| {} |", human_bytes(b));
            for f in &filters {
                let cell = report
                    .size_sweep
                    .iter()
                    .find(|p| p.bytes == b && p.filter == *f)
                    .map_or("-".into(), |p| match p.neg_batch_ns {
                        Some(bn) => format!("{} / {}", ns(p.neg_ns), ns(bn)),
                        None => ns(p.neg_ns),
                    });
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
    }
    out
}

fn header(report: &Report) -> String {
    let m = &report.meta;
    let caches: Vec<String> = m
        .caches
        .iter()
        .map(|(name, b)| format!("{name} {}", human_bytes(*b)))
        .collect();
    format!(
        "## bloomforge-bench report ({} mode)\n\nMachine: {}, {} cores, {:.0} GiB, {}; caches: {}; SIMD backend {}.\nDate: {}. Command: `{}`. Wall time: {:.1} s. Seed: {:#x}.\n",
        report.config.mode.name(),
        m.cpu,
        m.cores,
        m.memory_gib,
        m.os,
        if caches.is_empty() { "unknown".into() } else { caches.join(", ") },
        m.backend,
        m.date_utc,
        report.config.command,
        m.wall_seconds,
        report.config.seed
    )
}

fn flags_section(report: &Report) -> String {
    if report.flags.is_empty() {
        "\nEvery measured FP is consistent with its theory (alpha = 1e-6 per row).\n".into()
    } else {
        let mut s = format!(
            "\n**{} row(s) outside their theory interval:**\n\n",
            report.flags.len()
        );
        for f in &report.flags {
            let _ = writeln!(s, "- {f}");
        }
        s
    }
}

/// The markdown printed to stdout: header, scenario tables, threads, backends, hashers,
/// flags.
pub fn markdown(report: &Report) -> String {
    let mut s = header(report);
    s.push_str(&scenario_tables(report));
    s.push_str(&thread_table(report));
    s.push_str(&backend_and_hasher_tables(report));
    s.push_str(&distribution_tables(report));
    s.push_str(&flags_section(report));
    s
}

/// A CSV table: the header, then one record a row, quoted by the `csv` crate wherever a
/// field needs it (a comma, a quote, `\r` or `\n`).
fn csv_table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let written: csv::Result<()> = (|| {
        w.write_record(header)?;
        for row in rows {
            w.write_record(&row)?;
        }
        w.flush()?;
        Ok(())
    })();
    written.expect("writing CSV to a Vec cannot fail");
    let bytes = w.into_inner().expect("flushed above");
    String::from_utf8(bytes).expect("the fields are UTF-8 strings")
}

fn opt_f(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v}"))
}

fn t_ns(t: &Option<Timing>) -> String {
    opt_f(t.as_ref().map(|t| t.ns_per_key))
}

/// Column names of `results.csv`.
pub const RESULTS_COLUMNS: &[&str] = &[
    "workload",
    "n",
    "target",
    "filter",
    "layout",
    "origin",
    "bits_per_key",
    "k",
    "insert_ns",
    "insert_batch_ns",
    "query_pos_ns",
    "query_neg_ns",
    "query_pos_batch_ns",
    "query_neg_batch_ns",
    "insert_cpu_ns",
    "query_neg_cpu_ns",
    "bulk_1t_ns",
    "bulk_max_threads",
    "bulk_max_ns",
    "false_positives",
    "queries",
    "fp_measured",
    "fp_ci95_lo",
    "fp_ci95_hi",
    "fp_theory",
    "fp_theory_sd",
    "fp_realised",
    "fp_ratio",
    "fp_consistent",
    "notes",
];

/// `results.csv`: one line per row.
pub fn results_csv(report: &Report) -> String {
    let rows = report.rows.iter().map(|r| {
        let first = r.bulk.first();
        let last = r.bulk.last();
        let fp = r.fp.as_ref();
        vec![
            r.workload.clone(),
            r.n.to_string(),
            r.target.clone(),
            r.filter.clone(),
            r.layout.to_string(),
            format!("{:?}", r.origin),
            format!("{}", r.bits_per_key),
            r.k.map_or(String::new(), |k| k.to_string()),
            t_ns(&r.insert),
            t_ns(&r.insert_batch),
            t_ns(&r.query_pos),
            t_ns(&r.query_neg),
            t_ns(&r.query_pos_batch),
            t_ns(&r.query_neg_batch),
            opt_f(r.insert.and_then(|t| t.cpu_ns_per_key)),
            opt_f(r.query_neg.and_then(|t| t.cpu_ns_per_key)),
            opt_f(first.map(|b| b.timing.ns_per_key)),
            last.map_or(String::new(), |b| b.threads.to_string()),
            opt_f(last.map(|b| b.timing.ns_per_key)),
            fp.map_or(String::new(), |f| f.false_positives.to_string()),
            fp.map_or(String::new(), |f| f.queries.to_string()),
            opt_f(fp.map(|f| f.measured)),
            opt_f(fp.map(|f| f.ci95.0)),
            opt_f(fp.map(|f| f.ci95.1)),
            opt_f(fp.map(|f| f.theory)),
            opt_f(fp.map(|f| f.theory_sd)),
            opt_f(fp.and_then(|f| f.realised)),
            opt_f(fp.map(|f| f.ratio).filter(|r| r.is_finite())),
            fp.map_or(String::new(), |f| f.consistent.to_string()),
            r.notes.to_string(),
        ]
    });
    csv_table(RESULTS_COLUMNS, rows)
}

fn fp_sweep_csv(report: &Report) -> String {
    let header = [
        "filter",
        "layout",
        "origin",
        "target_bits_per_key",
        "bits_per_key",
        "k",
        "n",
        "false_positives",
        "queries",
        "fp_measured",
        "fp_ci95_lo",
        "fp_ci95_hi",
        "fp_theory",
        "fp_theory_sd",
        "fp_realised",
        "fp_consistent",
    ];
    let rows = report.fp_sweep.iter().map(|p| {
        vec![
            p.filter.to_string(),
            p.layout.to_string(),
            format!("{:?}", p.origin),
            p.target_bits_per_key.to_string(),
            p.bits_per_key.to_string(),
            p.k.map_or(String::new(), |k| k.to_string()),
            p.n.to_string(),
            p.fp.false_positives.to_string(),
            p.fp.queries.to_string(),
            p.fp.measured.to_string(),
            p.fp.ci95.0.to_string(),
            p.fp.ci95.1.to_string(),
            p.fp.theory.to_string(),
            p.fp.theory_sd.to_string(),
            opt_f(p.fp.realised),
            p.fp.consistent.to_string(),
        ]
    });
    csv_table(&header, rows)
}

fn size_sweep_csv(report: &Report) -> String {
    let header = [
        "filter",
        "layout",
        "bytes",
        "n",
        "query_pos_ns",
        "query_neg_ns",
        "query_pos_batch_ns",
        "query_neg_batch_ns",
    ];
    let rows = report.size_sweep.iter().map(|p| {
        vec![
            p.filter.to_string(),
            p.layout.to_string(),
            p.bytes.to_string(),
            p.n.to_string(),
            p.pos_ns.to_string(),
            p.neg_ns.to_string(),
            opt_f(p.pos_batch_ns),
            opt_f(p.neg_batch_ns),
        ]
    });
    csv_table(&header, rows)
}

fn threads_csv(report: &Report) -> String {
    let header = [
        "workload",
        "n",
        "target",
        "filter",
        "threads",
        "ns_per_key",
        "cpu_ns_per_key",
        "speedup",
    ];
    let rows = report.rows.iter().flat_map(|r| {
        let base = r.bulk.first().map(|b| b.timing.ns_per_key);
        r.bulk.iter().map(move |b| {
            vec![
                r.workload.clone(),
                r.n.to_string(),
                r.target.clone(),
                r.filter.clone(),
                b.threads.to_string(),
                b.timing.ns_per_key.to_string(),
                opt_f(b.timing.cpu_ns_per_key),
                opt_f(base.map(|a| a / b.timing.ns_per_key)),
            ]
        })
    });
    csv_table(&header, rows)
}

fn backends_csv(report: &Report) -> String {
    let header = [
        "filter",
        "backend",
        "n",
        "insert_ns",
        "insert_batch_ns",
        "query_pos_ns",
        "query_neg_ns",
        "query_neg_batch_ns",
    ];
    let rows = report.backends.iter().map(|b| {
        vec![
            b.filter.to_string(),
            b.backend.to_string(),
            b.n.to_string(),
            b.insert_ns.to_string(),
            b.insert_batch_ns.to_string(),
            b.pos_ns.to_string(),
            b.neg_ns.to_string(),
            b.neg_batch_ns.to_string(),
        ]
    });
    csv_table(&header, rows)
}

fn hashers_csv(report: &Report) -> String {
    let rows = report.hashers.iter().map(|h| {
        vec![
            h.hasher.to_string(),
            h.keys.to_string(),
            h.ns_per_key.to_string(),
        ]
    });
    csv_table(&["hasher", "keys", "ns_per_key"], rows)
}

fn write(dir: &Path, name: &str, text: &str, files: &mut Vec<String>) -> Result<(), BenchError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| BenchError::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    files.push(name.to_string());
    Ok(())
}

/// Writes every report file into `dir` (created if missing) and returns their names.
///
/// # Errors
/// [`BenchError::Io`] / [`BenchError::Plot`] if a file cannot be written.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<String>, BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::Io {
        path: dir.display().to_string(),
        source: e,
    })?;
    let mut files = Vec::new();
    write(dir, "results.csv", &results_csv(report), &mut files)?;
    write(dir, "fp_sweep.csv", &fp_sweep_csv(report), &mut files)?;
    write(dir, "size_sweep.csv", &size_sweep_csv(report), &mut files)?;
    write(dir, "threads.csv", &threads_csv(report), &mut files)?;
    write(dir, "backends.csv", &backends_csv(report), &mut files)?;
    write(dir, "hashers.csv", &hashers_csv(report), &mut files)?;
    let plot_files = plots::write_all(report, dir)?;
    let mut md = markdown(report);
    md.push_str(&sweep_tables(report));
    write(dir, "report.md", &md, &mut files)?;
    let html = crate::html::page(&md, &plot_files, dir)?;
    write(dir, "report.html", &html, &mut files)?;
    files.extend(plot_files.iter().map(|(f, _)| f.clone()));
    files.push("results.json".into());
    files.push("index.md".into());
    let mut report_with_files = report.clone();
    report_with_files.files = files.clone();
    let json = serde_json::to_string_pretty(&report_with_files).map_err(|e| BenchError::Io {
        path: dir.join("results.json").display().to_string(),
        source: e.into(),
    })?;
    let mut ignore = Vec::new();
    write(dir, "results.json", &json, &mut ignore)?;
    write(dir, "index.md", &index_md(report, &plot_files), &mut ignore)?;
    Ok(files)
}

fn index_md(report: &Report, plots: &[(String, String)]) -> String {
    let mut s = format!(
        "# bloomforge-bench report\n\n{} mode, {}, {} cores. Command: `{}`. Date: {}.\n\n",
        report.config.mode.name(),
        report.meta.cpu,
        report.meta.cores,
        report.config.command,
        report.meta.date_utc
    );
    s.push_str("## Tables\n\n- [report.html](report.html): every table and plot in one page (open it in a browser)\n- [report.md](report.md): every table (also printed to stdout)\n");
    for (f, what) in [
        ("results.csv", "one line per filter and scenario"),
        ("results.json", "everything, machine-readable"),
        ("fp_sweep.csv", "FP vs bits/key"),
        ("size_sweep.csv", "query ns/key vs filter size"),
        ("threads.csv", "bulk-load thread scaling"),
        ("backends.csv", "per SIMD backend"),
        ("hashers.csv", "hashing cost"),
    ] {
        let _ = writeln!(s, "- [{f}]({f}): {what}");
    }
    s.push_str("\n## Plots\n\n");
    for (f, title) in plots {
        let _ = writeln!(s, "### {title}\n\n![{title}]({f})\n");
    }
    s.push_str(&flags_section(report));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(ns(123.4), "123");
        assert_eq!(ns(12.34), "12.3");
        assert_eq!(ns(1.234), "1.23");
        assert_eq!(pct(0.01234), "1.234");
        assert_eq!(pct(0.00012345), "0.0123");
        assert_eq!(human_bytes(32 << 10), "32 KiB");
        assert_eq!(human_bytes(1 << 30), "1 GiB");
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        let rows = [["a,b", "say \"hi\"", "line\rbreak", "plain"]
            .map(String::from)
            .to_vec()];
        assert_eq!(
            csv_table(&["w", "x", "y", "z"], rows),
            "w,x,y,z\n\"a,b\",\"say \"\"hi\"\"\",\"line\rbreak\",plain\n"
        );
    }
}
