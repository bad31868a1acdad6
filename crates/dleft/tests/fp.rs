//! False positives against `1 - (1 - 1/(B 2^r))^n`, with exact binomial tests.
//!
//! For an ideal hash the query of a key that was not inserted is a false positive iff its
//! true fingerprint (uniform on `B 2^r` values) is one of the `D` stored ones, so the
//! number `X` of false positives among `Q` fresh keys is exactly Binomial(Q, D / (B 2^r))
//! given the filter ([`realized_false_pos`]). Each test runs a two-sided exact binomial
//! test of `X` at alpha = 1e-6, and checks `D` against its expectation
//! `B 2^r (1 - (1 - 1/(B 2^r))^n)` with McDiarmid's bound (changing one key moves `D` by
//! at most 1, so `P(|D - E D| >= t) <= 2 exp(-2 t^2 / n)`; `t` is set for 1e-6). Keys,
//! seeds and hashers are fixed, so the outcome is the same on every run; the false-alarm
//! probability of each assertion, over the choice of seed, is at most 1e-6.
//!
//! [`realized_false_pos`]: bloomforge_dleft::DLeftCountingBloomFilter::realized_false_pos

use crate::common;

use bloomforge_core::KeyedHasher;
use bloomforge_dleft::{theory, DLeftCountingBloomFilter};
use bloomforge_testkit::stats::{binomial_test_greater, binomial_test_two_sided};
use common::{assert_disjoint, keys};
use core::hash::BuildHasher;

const ALPHA: f64 = 1e-6;

fn check<S: BuildHasher>(
    f: &mut DLeftCountingBloomFilter<S>,
    n: usize,
    queries: usize,
    target: Option<f64>,
) {
    let present = keys(1, n);
    let absent = keys(2, queries);
    assert_disjoint(&present, &absent);
    for k in &present {
        f.insert(k).unwrap();
    }
    let (b, r) = (f.buckets_per_subtable(), f.remainder_bits());
    let universe = b as f64 * f64::from(r).exp2();
    // Distinct stored fingerprints vs expectation (McDiarmid, two-sided, 1e-6).
    let d = f.occupied_cells() as f64;
    let expected_d = universe * theory::dlcbf_fp(n as u64, b, r);
    let t = (n as f64 * (2.0 / ALPHA).ln() / 2.0).sqrt();
    assert!(
        (d - expected_d).abs() <= t,
        "distinct fingerprints {d} vs {expected_d:.1} +- {t:.1}"
    );
    // False positives vs the realised rate (exact binomial, two-sided, 1e-6).
    let p = f.realized_false_pos();
    assert_eq!(p, d / universe);
    let x = absent.iter().filter(|k| f.contains(k)).count() as u64;
    let pv = binomial_test_two_sided(x, queries as u64, p);
    assert!(
        pv > ALPHA,
        "X = {x} of {queries}, realised p = {p:.3e}: p-value {pv:e}"
    );
    // ... and against the expected rate for n keys (the realised rate is within
    // McDiarmid's band of it, which we widen the test by).
    let p_theory = f.expected_false_pos_at(n as u64);
    let slack = t / universe;
    let pv_hi = binomial_test_two_sided(x, queries as u64, (p_theory + slack).min(1.0));
    let pv_lo = binomial_test_two_sided(x, queries as u64, (p_theory - slack).max(0.0));
    let inside = (x as f64 / queries as f64 - p_theory).abs() <= slack;
    assert!(
        inside || pv_hi > ALPHA || pv_lo > ALPHA,
        "X = {x} vs theory {p_theory:.3e}"
    );
    if let Some(target) = target {
        // A sized filter meets its target: by construction in expectation, and the
        // measured count is not significantly above it (one-sided, 1e-6).
        assert!(p_theory <= target, "sizing gave {p_theory:e} > {target:e}");
        assert!(
            binomial_test_greater(x, queries as u64, target) > ALPHA,
            "X = {x} exceeds target {target}"
        );
    }
}

#[test]
fn sized_one_percent() {
    let mut f = DLeftCountingBloomFilter::with_false_pos(0.01)
        .seed(1)
        .expected_items(200_000)
        .unwrap();
    assert!(!f.uses_power_of_two_permutations());
    check(&mut f, 200_000, 1_000_000, Some(0.01));
}

#[test]
fn sized_tenth_of_a_percent() {
    let mut f = DLeftCountingBloomFilter::with_false_pos(0.001)
        .seed(2)
        .expected_items(100_000)
        .unwrap();
    check(&mut f, 100_000, 2_000_000, Some(0.001));
}

#[test]
fn power_of_two_buckets() {
    // Bonomi et al.'s a_i f mod 2^(q+r) permutations; load 6; FP about 24 / 2^r.
    for (r, seed) in [(8u32, 3u64), (11, 4)] {
        let mut f = DLeftCountingBloomFilter::builder()
            .buckets_per_subtable(1 << 13)
            .remainder_bits(r)
            .seed(seed)
            .build()
            .unwrap();
        assert!(f.uses_power_of_two_permutations());
        check(&mut f, 6 * 4 * (1 << 13), 500_000, None);
    }
}

#[test]
fn tiny_remainders_and_other_hasher() {
    // r = 4: the fingerprint space is tiny and heavily shared; a keyed hasher.
    let mut f = DLeftCountingBloomFilter::builder()
        .buckets_per_subtable(3001)
        .remainder_bits(4)
        .counter_bits(4)
        .hasher(KeyedHasher::with_key([9, 8, 7, 6]))
        .build()
        .unwrap();
    check(&mut f, 3 * 4 * 3001, 200_000, None);
}

#[test]
fn backends_give_identical_answers() {
    let mut f = DLeftCountingBloomFilter::with_false_pos(0.01)
        .expected_items(50_000)
        .unwrap();
    for k in keys(1, 50_000) {
        f.insert(&k).unwrap();
    }
    let probes = keys(2, 200_000);
    let reference: Vec<(bool, u64)> = {
        f.set_backend(bloomforge_dleft::Backend::Scalar).unwrap();
        probes
            .iter()
            .map(|k| (f.contains(k), f.count(k).get()))
            .collect()
    };
    for backend in bloomforge_dleft::Backend::available() {
        f.set_backend(backend).unwrap();
        let got: Vec<(bool, u64)> = probes
            .iter()
            .map(|k| (f.contains(k), f.count(k).get()))
            .collect();
        assert!(got == reference, "{backend:?} differs from scalar");
    }
}
