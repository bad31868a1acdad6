//! False positives against theory, and exports that answer exactly like the counting filter.

use bloomforge_core::math::{
    blocked_fp_exact_load, blocked_fp_instance_sd, std_fp, std_fp_instance_sd, ProbeModel,
};
use bloomforge_counting::{CounterLayout, CountingBloomFilter, CountingError};
use bloomforge_testkit::stats::binomial_test_two_sided;

/// Two-sided false-alarm probability of each statistical check.
const ALPHA: f64 = 1e-6;
/// Instance standard deviations allowed between realised and theoretical FP: a normal
/// two-sided tail beyond 6 sd is 2e-9, far below ALPHA, leaving room for the
/// delta-method approximation of the instance spread.
const THEORY_SDS: f64 = 6.0;

/// A bijection on `u64` (multiplication by an odd constant).
fn scramble(i: u64) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Inserts `n` keys, measures the FP rate on `queries` non-members and checks (1) the count
/// against Binomial(queries, realised FP) (exact given the counters under ideal hashing),
/// (2) the realised FP against the layout's theory, (3) the theory against the target.
fn check_fp(mut f: CountingBloomFilter, n: u64, target: f64) {
    // Consecutive integers: structured keys must fill the counters as random ones would
    // under the default hasher (foldhash `quality`).
    let keys: Vec<u64> = (0..n).collect();
    f.insert_batch(&keys);
    // Removing and re-inserting a quarter leaves the same counters.
    let quarter = &keys[..(n / 4) as usize];
    let mut removed = vec![false; quarter.len()];
    f.remove_batch(quarter, &mut removed).unwrap();
    assert!(removed.iter().all(|&r| r));
    f.insert_batch(quarter);

    let queries = 1_000_000u64;
    let probe: Vec<u64> = (0..queries).map(|i| scramble((1 << 50) + i)).collect();
    let mut out = vec![false; probe.len()];
    f.contains_batch(&probe, &mut out).unwrap();
    let fps = out.iter().filter(|&&b| b).count() as u64;
    let realised = f.expected_false_pos();
    let pv = binomial_test_two_sided(fps, queries, realised);
    assert!(
        pv > ALPHA,
        "{:?}: {fps} false positives in {queries} queries, realised FP {realised}, p-value {pv}",
        f.layout()
    );

    let m = f.num_counters();
    let k = f.num_hashes();
    let (theory, sd) = match f.layout() {
        CounterLayout::Blocked => (
            blocked_fp_exact_load(m, n, 128, k, ProbeModel::Replace),
            blocked_fp_instance_sd(m, n, 128, k, ProbeModel::Replace),
        ),
        CounterLayout::Standard => (
            std_fp(m as f64, n as f64, k),
            std_fp_instance_sd(m as f64, n as f64, k),
        ),
    };
    assert!(
        (realised - theory).abs() <= THEORY_SDS * sd,
        "{:?}: realised {realised} vs theory {theory} (sd {sd})",
        f.layout()
    );
    assert!(
        theory <= target * 1.0001,
        "theory {theory} above target {target}"
    );
}

#[test]
fn blocked_fp_matches_theory() {
    for &(p, n) in &[(0.01, 200_000u64), (0.05, 100_000), (1e-3, 100_000)] {
        let f = CountingBloomFilter::with_false_pos(p)
            .seed(11)
            .expected_items(n)
            .unwrap();
        check_fp(f, n, p);
    }
}

#[test]
fn standard_fp_matches_theory() {
    for &(p, n) in &[(0.01, 200_000u64), (1e-3, 100_000)] {
        let f = CountingBloomFilter::standard_with_false_pos(p)
            .seed(12)
            .expected_items(n)
            .unwrap();
        check_fp(f, n, p);
    }
}

#[test]
fn memory_is_four_bits_per_counter() {
    let f = CountingBloomFilter::with_false_pos(0.01)
        .expected_items(1_000_000)
        .unwrap();
    assert_eq!(f.memory_bits(), 4 * f.num_counters());
    assert_eq!(f.memory_bits(), 512 * f.num_blocks() as u64);
    let per_key = f.num_counters() as f64 / 1e6;
    assert!(
        (10.8..11.0).contains(&per_key),
        "{per_key} counters per key"
    );
    let g = CountingBloomFilter::standard_with_false_pos(0.01)
        .expected_items(1_000_000)
        .unwrap();
    // Rounded up to whole 64-byte lines: less than 512 bits of padding.
    assert!(g.memory_bits() >= 4 * g.num_counters());
    assert!(g.memory_bits() < 4 * g.num_counters() + 512);
}

fn exercise(f: &mut CountingBloomFilter) -> Vec<u64> {
    let keys: Vec<u64> = (0..30_000).map(|i| i * 3).collect();
    f.insert_batch(&keys);
    for k in keys.iter().step_by(3) {
        f.remove(k).unwrap();
    }
    (0..200_000).collect()
}

#[test]
fn blocked_export_answers_identically() {
    let mut f = CountingBloomFilter::with_false_pos(0.02)
        .seed(3)
        .expected_items(20_000)
        .unwrap();
    let probe = exercise(&mut f);
    let plain = f.to_blocked_bloom().unwrap();
    assert_eq!(plain.num_blocks(), f.num_blocks());
    assert_eq!(plain.num_hashes(), f.num_hashes());
    let mut agree_pos = 0;
    for k in &probe {
        assert_eq!(plain.contains(k), f.contains(k), "key {k}");
        agree_pos += usize::from(f.contains(k));
    }
    assert!(agree_pos > 20_000);
    // The realised FP is the same quantity on both.
    let (a, b) = (plain.expected_false_pos(), f.expected_false_pos());
    assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
    assert!(matches!(
        f.to_standard_bloom(),
        Err(CountingError::WrongLayout { .. })
    ));
}

#[test]
fn standard_export_answers_identically() {
    let mut f = CountingBloomFilter::standard_with_false_pos(0.02)
        .seed(3)
        .expected_items(20_000)
        .unwrap();
    let probe = exercise(&mut f);
    let plain = f.to_standard_bloom().unwrap();
    assert_eq!(plain.num_bits(), f.num_counters());
    assert_eq!(plain.count_ones(), f.nonzero_counters());
    assert_eq!(
        f.fill(),
        f.nonzero_counters() as f64 / f.num_counters() as f64
    );
    assert!(f.fill() > 0.0 && f.fill() < 1.0);
    for k in &probe {
        assert_eq!(plain.contains(k), f.contains(k), "key {k}");
    }
    assert!(matches!(
        f.to_blocked_bloom(),
        Err(CountingError::WrongLayout { .. })
    ));
}
