//! The theory module against the independent Python reference (`fp_theory.py`, copied as
//! `tests/data/reference.csv`): every row to 1e-6 relative.
//!
//! Columns: `variant, B, s, w, k, bits_per_key, fp` with variants `standard`
//! (`std_fp_c`), `blocked` / `blocked_distinct` / `blocked_putze` (`blocked_fp` with the
//! `Replace` / `Distinct` / `Putze` probe model) and `split` (`split_block_fp`).

use bloomforge_core::math::{self, ProbeModel};
use std::collections::BTreeMap;

const REFERENCE: &str = include_str!("data/reference.csv");
const ROWS: usize = 1312;
const REL_TOL: f64 = 1e-6;

#[derive(Debug)]
struct Row {
    line: usize,
    variant: String,
    b: usize,
    s: u32,
    w: u32,
    k: u32,
    c: f64,
    fp: f64,
}

fn parse() -> Vec<Row> {
    let mut lines = REFERENCE.lines().enumerate();
    let (_, header) = lines.next().expect("reference.csv has a header");
    assert_eq!(header.trim(), "variant,B,s,w,k,bits_per_key,fp");
    lines
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.trim().split(',').collect();
            assert_eq!(f.len(), 7, "line {}: {l}", i + 1);
            let num = |j: usize| -> f64 {
                f[j].parse()
                    .unwrap_or_else(|e| panic!("line {}: field {j} {:?}: {e}", i + 1, f[j]))
            };
            Row {
                line: i + 1,
                variant: f[0].to_string(),
                b: num(1) as usize,
                s: num(2) as u32,
                w: num(3) as u32,
                k: num(4) as u32,
                c: num(5),
                fp: num(6),
            }
        })
        .collect()
}

fn check(row: &Row, got: f64, failures: &mut Vec<String>, worst: &mut f64) {
    let rel = ((got - row.fp) / row.fp).abs();
    *worst = worst.max(rel);
    if rel.is_nan() || rel > REL_TOL {
        failures.push(format!(
            "line {} {} B={} s={} w={} k={} c={}: rust {got:.10e}, python {:.10e}, rel {rel:.2e}",
            row.line, row.variant, row.b, row.s, row.w, row.k, row.c, row.fp
        ));
    }
}

#[test]
fn every_reference_row_matches() {
    let rows = parse();
    assert_eq!(rows.len(), ROWS, "reference.csv row count");
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let mut worst = 0.0f64;
    // Blocked rows grouped by (model, B, k): the conditional table is built once per group.
    let mut blocked: BTreeMap<(String, usize, u32), Vec<&Row>> = BTreeMap::new();
    for row in &rows {
        match row.variant.as_str() {
            "standard" => {
                check(row, math::std_fp_c(row.c, row.k), &mut failures, &mut worst);
                checked += 1;
            }
            "split" => {
                assert_eq!(row.b as u32, row.s * row.w, "line {}", row.line);
                assert_eq!(row.k, row.s, "line {}", row.line);
                check(
                    row,
                    math::split_block_fp(row.c, row.s, row.w),
                    &mut failures,
                    &mut worst,
                );
                checked += 1;
            }
            "blocked" | "blocked_distinct" | "blocked_putze" => blocked
                .entry((row.variant.clone(), row.b, row.k))
                .or_default()
                .push(row),
            other => panic!("line {}: unknown variant {other}", row.line),
        }
    }
    for ((variant, b, k), group) in &blocked {
        let model = match variant.as_str() {
            "blocked" => ProbeModel::Replace,
            "blocked_distinct" => ProbeModel::Distinct,
            _ => ProbeModel::Putze,
        };
        let cs: Vec<f64> = group.iter().map(|r| r.c).collect();
        let fps = math::blocked_fp_many(&cs, *b, *k, model);
        for (row, got) in group.iter().zip(fps) {
            check(row, got, &mut failures, &mut worst);
            checked += 1;
        }
    }
    assert_eq!(checked, ROWS);
    println!("{checked} rows checked, largest relative difference {worst:.2e}");
    assert!(
        failures.is_empty(),
        "{} of {ROWS} rows differ by more than {REL_TOL:e}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The batch function is the single-point function, value for value (checked on the
/// cheap 64- and 256-bit blocks; the 512-bit rows above go through the batch path).
#[test]
fn blocked_fp_many_equals_blocked_fp() {
    let cs = [4.0, 6.5, 10.0, 24.0];
    for b in [64usize, 256] {
        for model in [ProbeModel::Replace, ProbeModel::Distinct, ProbeModel::Putze] {
            for k in [1u32, 5, 12] {
                let many = math::blocked_fp_many(&cs, b, k, model);
                for (&c, got) in cs.iter().zip(many) {
                    assert_eq!(
                        got,
                        math::blocked_fp(c, b, k, model),
                        "B={b} {model:?} k={k} c={c}"
                    );
                }
            }
        }
    }
}

/// `std_fp_exact` against `fp_theory.std_fp_exact` (mpmath, 60 digits), copied as
/// `tests/data/std_exact.csv`: m in {8 .. 4096}, n = m / c for c in {2, 4, 8, 16},
/// k in {1, 2, 3, 5, 8, 12}, every row to 1e-6 relative. Generated with
/// `print(f"{m},{n},{k},{fp_theory.std_fp_exact(m, n, k):.12e}")` over that grid.
#[test]
fn std_fp_exact_matches_reference() {
    const EXACT: &str = include_str!("data/std_exact.csv");
    let mut lines = EXACT.lines();
    assert_eq!(lines.next().map(str::trim), Some("m,n,k,fp"));
    let mut rows = 0;
    let mut failures = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.trim().split(',').collect();
        assert_eq!(f.len(), 4, "{line}");
        let (m, n, k): (u64, u64, u32) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
        );
        let want: f64 = f[3].parse().unwrap();
        let got = math::std_fp_exact(m, n, k).expect("small m is within the work cap");
        let rel = ((got - want) / want).abs();
        if rel.is_nan() || rel > REL_TOL {
            failures.push(format!(
                "m={m} n={n} k={k}: rust {got:.10e}, python {want:.10e}, rel {rel:.2e}"
            ));
        }
        // The classic formula is a lower bound of the exact one (Bose et al.).
        let classic = math::std_fp(m as f64, n as f64, k);
        if classic > got * (1.0 + 1e-12) {
            failures.push(format!(
                "m={m} n={n} k={k}: classic {classic:.10e} above exact {got:.10e}"
            ));
        }
        rows += 1;
    }
    assert_eq!(rows, 168, "the reference grid has 168 rows");
    assert!(
        failures.is_empty(),
        "{} rows off:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn std_fp_exact_edges() {
    assert_eq!(math::std_fp_exact(0, 10, 3), None);
    assert_eq!(math::std_fp_exact(64, 0, 3), Some(0.0));
    assert_eq!(math::std_fp_exact(64, 10, 0), Some(0.0));
    // Past the work cap: None, not a stall (and no overflow on huge arguments).
    assert_eq!(math::std_fp_exact(1 << 40, 1 << 30, 7), None);
    assert_eq!(math::std_fp_exact(u64::MAX, u64::MAX, u32::MAX), None);
    // One bit: every throw sets it, every probe hits it.
    assert_eq!(math::std_fp_exact(1, 1, 4), Some(1.0));
}

/// Public theory functions given absurd arguments return NaN promptly instead of
/// allocating gigabytes or running for hours.
#[test]
fn hostile_arguments_give_nan_not_aborts() {
    assert!(math::poisson_pmf_window(1e8, 1e-12)[0].is_nan());
    assert!(math::poisson_pmf_window(f64::INFINITY, 1e-12)[0].is_nan());
    assert!(math::binomial_pmf_window(u64::MAX, 1, 1e-12)[0].is_nan());
    for model in [ProbeModel::Replace, ProbeModel::Distinct, ProbeModel::Putze] {
        assert!(math::block_inner_fp(1 << 20, 7, 10, model, 1)[0].is_nan());
        assert!(math::block_inner_fp(0, 7, 10, model, 1)[0].is_nan());
        assert!(math::block_inner_fp(512, 7, usize::MAX, model, 1)[0].is_nan());
    }
    assert!(math::block_inner_fp(8192, 7, 10, ProbeModel::Distinct, 1)[0].is_nan());
    // A blocked FP at a tiny bits-per-key (huge block loads) is NaN, not a stall.
    assert!(math::blocked_fp(1e-6, 512, 7, ProbeModel::Replace).is_nan());
    // Ordinary arguments are untouched.
    let f = math::block_inner_fp(4096, 7, 100, ProbeModel::Distinct, 1);
    assert_eq!(f.len(), 101);
    assert!(f.iter().all(|x| x.is_finite()));
}
