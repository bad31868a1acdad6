//! False-positive theory for every filter the harness measures.
//!
//! The standard (classic and exact small-`m`), blocked and split-block formulas are
//! `bloomforge-core`'s (re-exported here as [`math`]; they reproduce the Python reference
//! `reference.csv` and `std_exact.csv` to 1e-6, see core's `tests/theory_reference.rs`).
//! This module adds what the report needs beyond them: the counting filter's counter
//! distribution and overflow tail, and the d-left counting filter's false-positive rate
//! and fluid-limit bucket loads (Bonomi et al. 2006; Mitzenmacher / Vöcking). All follow
//! `fp_theory.py` sections 5 and 6.

pub use bloomforge_core::math;
use bloomforge_core::math::{ln_gamma, ProbeModel, LN2};
/// The counting crate's sizing theory (blocked layout with 128-counter lines).
pub use bloomforge_counting::math as counting_math;
/// The d-left crate's theory (FP, saturation, fluid limit); [`dlcbf_fluid`] here is an
/// independent implementation checked against it.
pub use bloomforge_dleft::theory as dleft_theory;

/// The predicted false-positive rate of one configured filter, with its spread across
/// filter instances (0 where the prediction is exact for every instance).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Prediction {
    /// Expected false-positive rate for `n` keys.
    pub fp: f64,
    /// Standard deviation of the realised rate across instances holding `n` keys.
    pub instance_sd: f64,
}

/// Standard layout (`k` probes over `m` bits): the exact small-`m` formula
/// ([`math::std_fp_exact`]) where it is cheap (`k n * min(m, k n) <= 2^24`), the classic
/// one elsewhere (where the two differ by less than the measurement can see).
pub fn standard(m: u64, n: u64, k: u32) -> Prediction {
    let throws = u64::from(k).saturating_mul(n);
    let exact = if throws.saturating_mul(m.min(throws)) <= 1 << 24 {
        math::std_fp_exact(m, n, k)
    } else {
        None
    };
    Prediction {
        fp: exact.unwrap_or_else(|| math::std_fp(m as f64, n as f64, k)),
        instance_sd: math::std_fp_instance_sd(m as f64, n as f64, k),
    }
}

/// 512-bit blocked layout, `k` probes with replacement, exact Binomial block loads.
pub fn blocked512(m: u64, n: u64, k: u32) -> Prediction {
    Prediction {
        fp: math::blocked_fp_exact_load(m, n, 512, k, ProbeModel::Replace),
        instance_sd: math::blocked_fp_instance_sd(m, n, 512, k, ProbeModel::Replace),
    }
}

/// Blocked layout with `b`-slot blocks (e.g. 128 counters per line of a counting filter),
/// `k` probes with replacement, exact Binomial block loads.
pub fn blocked(m: u64, n: u64, b: usize, k: u32) -> Prediction {
    Prediction {
        fp: math::blocked_fp_exact_load(m, n, b, k, ProbeModel::Replace),
        instance_sd: math::blocked_fp_instance_sd(m, n, b, k, ProbeModel::Replace),
    }
}

/// Parquet split-block layout (8 words of 32 bits).
pub fn split_block(m: u64, n: u64) -> Prediction {
    Prediction {
        fp: math::split_block_fp(m as f64 / n as f64, 8, 32),
        instance_sd: math::split_block_fp_instance_sd(m, n, 8, 32),
    }
}

/// A filter whose false-positive rate is a fixed `fp` per query, independently for every
/// non-member (binary fuse / xor filters: an `f`-bit fingerprint matches with `2^-f`).
pub fn fixed(fp: f64) -> Prediction {
    Prediction {
        fp,
        instance_sd: 0.0,
    }
}

/// Best `k` in `1..=24` for a 512-bit blocked filter at `c` bits per key.
pub fn blocked512_best_k(c: f64) -> u32 {
    math::best_k(|k| math::blocked512_fp(c, k), math::BLOCKED_SIZING_MAX_K).0
}

/// Best `k` in `1..=64` for a standard filter at `c` bits per key.
pub fn standard_best_k(c: f64) -> u32 {
    math::std_best_k(c, 64).0
}

// ---------------------------------------------------------------------------------------
// Poisson / binomial helpers
// ---------------------------------------------------------------------------------------

/// Poisson(`lam`) pmf at `t`.
pub fn poisson_pmf(lam: f64, t: u64) -> f64 {
    if lam <= 0.0 {
        return if t == 0 { 1.0 } else { 0.0 };
    }
    let x = t as f64;
    (x * lam.ln() - lam - ln_gamma(x + 1.0)).exp()
}

/// P(Poisson(`lam`) >= `j`), summed from `j` until the terms vanish.
pub fn poisson_tail(lam: f64, j: u64) -> f64 {
    if j == 0 {
        return 1.0;
    }
    let mut sum = 0.0;
    let mut t = j;
    loop {
        let term = poisson_pmf(lam, t);
        sum += term;
        if (t as f64 > lam && term < sum * 1e-17) || t > j + 10_000 {
            return sum;
        }
        t += 1;
    }
}

fn ln_choose(a: f64, b: f64) -> f64 {
    ln_gamma(a + 1.0) - ln_gamma(b + 1.0) - ln_gamma(a - b + 1.0)
}

/// Binomial(`trials`, `q`) pmf on `0..=max`, by the ratio recurrence from
/// `(1 - q)^trials` (accurate to a few ulps per step; the log-space form loses ~1e-8 to
/// cancellation at millions of trials). Falls back to log space where that start
/// underflows.
pub fn binomial_pmf_range(trials: u64, q: f64, max: u64) -> Vec<f64> {
    let start = (trials as f64 * (-q).ln_1p()).exp();
    if start < 1e-280 {
        return (0..=max).map(|t| binomial_pmf(trials, q, t)).collect();
    }
    let mut out = Vec::with_capacity(max as usize + 1);
    let mut p = start;
    for t in 0..=max {
        if t > trials {
            out.push(0.0);
            continue;
        }
        out.push(p);
        p *= (trials - t) as f64 / (t + 1) as f64 * q / (1.0 - q);
    }
    out
}

/// Binomial(`trials`, `q`) pmf at `t` (log space).
pub fn binomial_pmf(trials: u64, q: f64, t: u64) -> f64 {
    if t > trials {
        return 0.0;
    }
    let (nf, x) = (trials as f64, t as f64);
    (ln_choose(nf, x) + x * q.ln() + (nf - x) * (-q).ln_1p()).exp()
}

// ---------------------------------------------------------------------------------------
// Counting Bloom filter (fp_theory.py section 5)
// ---------------------------------------------------------------------------------------

/// Distribution of one counter of a counting filter with `m` counters after `n` keys of
/// `k` increments each: exactly Binomial(`n k`, 1/`m`) (every increment lands on a
/// uniform counter, blocked layouts included), returned on `0..=max` next to its
/// Poisson(`n k / m`) approximation: `(binomial, poisson)`.
pub fn counter_distribution(n: u64, k: u32, m: u64, max: u64) -> (Vec<f64>, Vec<f64>) {
    let trials = n * u64::from(k);
    let q = 1.0 / m as f64;
    let lam = trials as f64 * q;
    (
        binomial_pmf_range(trials, q, max),
        (0..=max).map(|t| poisson_pmf(lam, t)).collect(),
    )
}

/// P(a given counter >= `j`): `(exact Binomial(n k, 1/m), Poisson(n k / m))`.
pub fn cbf_counter_tail(n: u64, k: u32, m: u64, j: u64) -> (f64, f64) {
    let trials = n * u64::from(k);
    let q = 1.0 / m as f64;
    let pmf = binomial_pmf_range(trials, q, trials.min(j + 200));
    let exact = pmf.iter().skip(j as usize).sum();
    (exact, poisson_tail(trials as f64 * q, j))
}

/// Fan, Cao, Almeida, Broder (Summary Cache, 2000): with `k <= (m/n) ln 2`,
/// P(max counter >= `j`) <= `m (e ln 2 / j)^j` (`j = 16`: 1.37e-15 m).
pub fn cbf_fan_bound(m: u64, j: u32) -> f64 {
    m as f64 * (core::f64::consts::E * LN2 / f64::from(j)).powi(j as i32)
}

/// Union bound `m P(Poisson(n k / m) >= 2^bits)` on any counter saturating, for a static
/// set of `n` keys.
pub fn cbf_any_overflow_union(m: u64, n: u64, k: u32, counter_bits: u32) -> f64 {
    let j = 1u64 << counter_bits;
    (m as f64 * cbf_counter_tail(n, k, m, j).1).min(1.0)
}

/// Expected saturation events over `inserts` inserts of a workload that keeps about `n`
/// keys resident: each insert touches `k` counters, each at `2^bits - 1` with
/// probability ~ the Poisson(`n k / m`) pmf there.
pub fn cbf_overflow_over_inserts(inserts: f64, n: u64, k: u32, m: u64, counter_bits: u32) -> f64 {
    let lam = n as f64 * f64::from(k) / m as f64;
    let cmax = (1u64 << counter_bits) - 1;
    inserts * f64::from(k) * poisson_pmf(lam, cmax)
}

/// Bits per key of a counting filter with `counter_bits`-bit counters at FP `p`.
pub fn cbf_bits_per_key(p: f64, counter_bits: u32) -> f64 {
    f64::from(counter_bits) * math::std_bits_per_key(p)
}

// ---------------------------------------------------------------------------------------
// d-left counting Bloom filter (fp_theory.py section 6)
// ---------------------------------------------------------------------------------------

/// FP of a d-left counting filter whose true fingerprint is uniform on `B x 2^r`
/// (`buckets` per subtable, `r`-bit remainders): `1 - (1 - 1/(B 2^r))^n`.
pub fn dlcbf_fp(n: u64, buckets: u64, r: u32) -> f64 {
    -(n as f64 * (-1.0 / (buckets as f64 * (r as f64).exp2())).ln_1p()).exp_m1()
}

/// The load form of [`dlcbf_fp`]'s upper bound: `d L 2^-r` (`L` = keys per bucket).
pub fn dlcbf_fp_load(d: u32, load: f64, r: u32) -> f64 {
    f64::from(d) * load * (-(r as f64)).exp2()
}

/// P(a given fingerprint value is shared by >= `2^counter_bits` resident keys), i.e. a
/// cell counter would saturate.
pub fn dlcbf_counter_saturation(d: u32, load: f64, r: u32, counter_bits: u32) -> f64 {
    poisson_tail(dlcbf_fp_load(d, load, r), 1u64 << counter_bits)
}

/// Bits per key of a d-left filter with `h` cells per bucket holding `load` keys on
/// average, each cell `r + counter_bits` bits.
pub fn dlcbf_bits_per_key(h: u32, load: f64, r: u32, counter_bits: u32) -> f64 {
    f64::from(h) / load * f64::from(r + counter_bits)
}

/// The d-left fluid limit (insertions only, ties go left), integrated with classical
/// Runge-Kutta.
///
/// `s[j][i]` is the fraction of subtable `j`'s buckets with load >= `i`, `T` the mean load
/// per bucket; `ds[j][i]/dT = d prod_{l<j} s[l][i] (s[j][i-1] - s[j][i]) prod_{l>j} s[l][i-1]`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fluid {
    /// `tail[i]` = mean over subtables of the fraction of buckets with load >= `i`
    /// (buckets unbounded), `i = 0..=imax`.
    pub tail: Vec<f64>,
    /// Expected insertions that find all `d` candidates already holding `h` keys, per
    /// bucket (`d B` buckets in all): multiply by `d B` for a concrete table.
    pub overflow_per_bucket: f64,
}

impl Fluid {
    /// P(load = `i`) for `i = 0..imax` (the last entry is the tail `>= imax`).
    pub fn pmf(&self) -> Vec<f64> {
        let t = &self.tail;
        (0..t.len())
            .map(|i| t[i] - t.get(i + 1).copied().unwrap_or(0.0))
            .collect()
    }
}

/// Solves the d-left fluid limit for `d` subtables, capacity `h` per bucket, at mean load
/// `load` keys per bucket, tracking levels `0..=imax` (`imax >= h`).
pub fn dlcbf_fluid(d: usize, h: usize, load: f64, imax: usize) -> Fluid {
    let levels = imax.max(h + 1);
    let dim = d * levels + 1;
    // s(j, i) for i >= 1 lives at y[j * levels + i - 1]; s(j, 0) = 1.
    let rhs = |y: &[f64], dy: &mut [f64]| {
        let s = |j: usize, i: usize| if i == 0 { 1.0 } else { y[j * levels + i - 1] };
        for j in 0..d {
            for i in 1..=levels {
                let left: f64 = (0..j).map(|l| s(l, i)).product();
                let right: f64 = (j + 1..d).map(|l| s(l, i - 1)).product();
                dy[j * levels + i - 1] = d as f64 * left * (s(j, i - 1) - s(j, i)) * right;
            }
        }
        dy[dim - 1] = d as f64 * (0..d).map(|j| s(j, h)).product::<f64>();
    };
    let steps = ((load * 4000.0).ceil() as usize).max(100);
    let dt = load / steps as f64;
    let mut y = vec![0.0; dim];
    let (mut k1, mut k2, mut k3, mut k4, mut tmp) = (
        vec![0.0; dim],
        vec![0.0; dim],
        vec![0.0; dim],
        vec![0.0; dim],
        vec![0.0; dim],
    );
    for _ in 0..steps {
        rhs(&y, &mut k1);
        for ((t, a), b) in tmp.iter_mut().zip(&y).zip(&k1) {
            *t = a + 0.5 * dt * b;
        }
        rhs(&tmp, &mut k2);
        for ((t, a), b) in tmp.iter_mut().zip(&y).zip(&k2) {
            *t = a + 0.5 * dt * b;
        }
        rhs(&tmp, &mut k3);
        for ((t, a), b) in tmp.iter_mut().zip(&y).zip(&k3) {
            *t = a + dt * b;
        }
        rhs(&tmp, &mut k4);
        for (i, v) in y.iter_mut().enumerate() {
            *v += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    let mut tail = vec![1.0];
    for i in 1..=levels {
        tail.push((0..d).map(|j| y[j * levels + i - 1]).sum::<f64>() / d as f64);
    }
    tail.truncate(imax + 1);
    Fluid {
        tail,
        overflow_per_bucket: y[dim - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fluid_conserves_mean_load() {
        // The mean load is the sum of the tail fractions from level 1.
        for &(d, load) in &[(1usize, 0.5f64), (2, 1.0), (4, 3.0)] {
            let f = dlcbf_fluid(d, 8, load, 30);
            let mean: f64 = f.tail[1..].iter().sum();
            assert!((mean - load).abs() < 1e-6, "d={d} load={load} mean={mean}");
            let pmf = f.pmf();
            assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
    }

    #[test]
    fn fluid_single_choice_is_poisson() {
        // With d = 1 every key picks its bucket uniformly: loads are Poisson(L).
        let f = dlcbf_fluid(1, 10, 2.0, 12);
        for (i, p) in f.pmf().iter().enumerate().take(10) {
            let want = poisson_pmf(2.0, i as u64);
            assert!((p - want).abs() < 1e-8, "i={i} {p} vs {want}");
        }
    }

    #[test]
    fn fluid_more_choices_thin_the_tail() {
        let one = dlcbf_fluid(1, 6, 3.0, 10);
        let four = dlcbf_fluid(4, 6, 3.0, 10);
        assert!(four.tail[6] < one.tail[6] * 1e-3);
        assert!(four.overflow_per_bucket < one.overflow_per_bucket);
    }

    #[test]
    fn fluid_agrees_with_the_dleft_crate() {
        // Two independent RK4 integrations of the same equations. The crate reports the
        // overflow integral without fp_theory.py's factor d.
        for &(d, w, load) in &[(4u32, 8u32, 6.0f64), (2, 4, 3.0), (3, 6, 4.5)] {
            let ours = dlcbf_fluid(d as usize, w as usize, load, w as usize + 3);
            let theirs = dleft_theory::dlcbf_fluid(d, w, load, None);
            for (i, (a, b)) in ours.tail.iter().zip(&theirs.tail).enumerate() {
                assert!(
                    (a - b).abs() < 1e-9 * a.max(1e-12) + 1e-15,
                    "d={d} i={i}: {a} vs {b}"
                );
            }
            // The overflow integrand is ~1e-130 and very steep: the crate's 512 steps per
            // unit load against 4000 here leave ~0.3 % between the two at d = 4.
            let rel = ours.overflow_per_bucket / (f64::from(d) * theirs.overflow_per_bucket) - 1.0;
            assert!(rel.abs() < 1e-2, "d={d} overflow rel {rel}");
        }
    }

    #[test]
    fn counting_tail_matches_fan_bound() {
        // k = c ln 2 at c = 10: counters are ~Poisson(0.7); the exact tail at 16 sits far
        // below Fan et al.'s bound.
        let (n, k, m) = (1_000_000u64, 7u32, 10_000_000u64);
        let (exact, poisson) = cbf_counter_tail(n, k, m, 16);
        assert!(exact > 0.0 && exact < cbf_fan_bound(1, 16));
        assert!((exact / poisson - 1.0).abs() < 0.01);
        let (b, p) = counter_distribution(n, k, m, 20);
        assert!((b.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn dleft_fp_is_below_its_load_bound() {
        let p = dlcbf_fp(1_000_000, 1 << 16, 12);
        let bound = 1e6 / (65536.0 * 4096.0);
        assert!(p < bound && p > 0.99 * bound);
        assert!((dlcbf_fp_load(4, 1e6 / (4.0 * 65536.0), 12) - bound).abs() < 1e-15);
    }
}
