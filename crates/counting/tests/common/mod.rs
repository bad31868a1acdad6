//! Helpers shared by the integration tests.
#![allow(dead_code)]

use bloomforge_core::math::ln_gamma;
use bloomforge_counting::{CounterLine, CountingBloomFilter};

/// Every counter of the filter, in storage order (padding counters of a standard-layout
/// filter included; they are always 0).
pub fn counters<S>(f: &CountingBloomFilter<S>) -> Vec<u32> {
    f.as_lines()
        .iter()
        .flat_map(|l: &CounterLine| (0..128).map(move |c| l.counter(c)))
        .collect()
}

fn ln_binom_pmf(n: u64, p: f64, x: u64) -> f64 {
    let (nf, xf) = (n as f64, x as f64);
    ln_gamma(nf + 1.0) - ln_gamma(xf + 1.0) - ln_gamma(nf - xf + 1.0)
        + xf * p.ln()
        + (nf - xf) * (-p).ln_1p()
}

/// `P(X <= x)` and `P(X >= x)` for `X ~ Binomial(n, p)`, by summing the pmf outwards from
/// `x` until the terms stop mattering (the pmf is unimodal, so once past the mode a term
/// below 1e-300 times the running sum ends the sum).
pub fn binomial_tails(n: u64, p: f64, x: u64) -> (f64, f64) {
    let term = |i: u64| ln_binom_pmf(n, p, i).exp();
    let mode = ((n + 1) as f64 * p).floor() as u64;
    let mut lower = 0.0;
    let mut i = x;
    loop {
        let t = term(i);
        lower += t;
        if i == 0 || (i < mode && t < 1e-300_f64.max(lower * 1e-17)) {
            break;
        }
        i -= 1;
    }
    let mut upper = 0.0;
    let mut i = x;
    loop {
        let t = term(i);
        upper += t;
        if i == n || (i > mode && t < 1e-300_f64.max(upper * 1e-17)) {
            break;
        }
        i += 1;
    }
    (lower.min(1.0), upper.min(1.0))
}

/// Two-sided exact binomial test p-value (twice the smaller tail, capped at 1).
pub fn binomial_two_sided(n: u64, p: f64, x: u64) -> f64 {
    let (lo, hi) = binomial_tails(n, p, x);
    (2.0 * lo.min(hi)).min(1.0)
}

/// Half-width `t` with `2 exp(-t^2 / (2 (v + r t / 3))) = alpha` (Bernstein's inequality
/// for a sum of independent or negatively associated terms, each within `r` of its mean,
/// total variance at most `v`).
pub fn bernstein_halfwidth(v: f64, r: f64, alpha: f64) -> f64 {
    let l = 2.0 * (2.0 / alpha).ln();
    // t^2 = l (v + r t / 3)  =>  t = (l r / 3 + sqrt((l r / 3)^2 + 4 l v)) / 2
    let b = l * r / 3.0;
    0.5 * (b + (b * b + 4.0 * l * v).sqrt())
}
