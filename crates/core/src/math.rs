//! False-positive theory and sizing for every layout in this crate.
//!
//! Model assumption everywhere: hash outputs are ideal (uniform, independent). Names follow
//! the literature: `m` filter bits, `n` keys, `k` probes per key, `c = m / n` bits per key,
//! `B` block bits. Block-local formulas condition on the number `i` of keys in the queried
//! block and mix over the block-load distribution (Poisson(B / c), or the exact
//! Binomial(n, 1 / blocks)). These functions reproduce the independent Python reference
//! (`reference.csv` in the tests) to 1e-6 relative.
//!
//! The builders size each layout with **its own** formula: a blocked filter at 1 % needs
//! about 10.5 bits per key where the standard formula says 9.6.

use std::sync::Mutex;

/// ln 2.
pub const LN2: f64 = core::f64::consts::LN_2;

/// Keys that, inserted with `probes` uniform probes each (with replacement) into `cells`
/// cells, leave `set` of them set in expectation: `ln(1 - set/cells) / (probes ln(1 -
/// 1/cells))`, the inverse of the occupancy law. A full region (`set >= cells`) counts as
/// `cells - 1/2` set, so the estimate stays finite. The estimate behind every
/// `estimated_len` of a table that keeps no count.
///
/// ```
/// use bloomforge_core::math::keys_from_fill;
/// // 100 keys with 3 probes into 10 000 cells leave about 298 set.
/// let set = 10_000.0 * (1.0 - (1.0 - 1.0 / 10_000.0f64).powi(300));
/// assert!((keys_from_fill(set, 10_000.0, 3.0) - 100.0).abs() < 1e-9);
/// assert_eq!(keys_from_fill(0.0, 64.0, 2.0), 0.0);
/// assert!(keys_from_fill(64.0, 64.0, 2.0).is_finite());
/// ```
pub fn keys_from_fill(set: f64, cells: f64, probes: f64) -> f64 {
    let set = if set >= cells { cells - 0.5 } else { set };
    (-set / cells).ln_1p() / (probes * (-1.0 / cells).ln_1p())
}

// ---------------------------------------------------------------------------------------
// Standard filter
// ---------------------------------------------------------------------------------------

/// Classic FP `(1 - (1 - 1/m)^(k n))^k`, computed without cancellation. A (tight) lower
/// bound on the exact FP; the gap is negligible for `m` above ~1e4.
pub fn std_fp(m: f64, n: f64, k: u32) -> f64 {
    if n <= 0.0 {
        return 0.0;
    }
    let frac_set = -(f64::from(k) * n * (-1.0 / m).ln_1p()).exp_m1();
    frac_set.powi(k as i32)
}

/// Largest `k n * min(m, k n)` that [`std_fp_exact`] computes (about a second of work).
pub const STD_FP_EXACT_MAX_WORK: u64 = 1 << 28;

/// Exact FP of a standard filter for small `m`: `k` independent uniform probes per key
/// (with replacement), `n` keys, `m` bits. `None` when `k n * min(m, k n)` exceeds
/// [`STD_FP_EXACT_MAX_WORK`]; there the classic [`std_fp`] is within a negligible margin.
///
/// [`std_fp`] is a lower bound that is noticeably low for tiny filters (Bose et al. 2008).
/// This is the value of Bose et al.'s Stirling-number formula, computed without its
/// alternating sums: with `X` the number of set bits after `k n` throws, a query's `k`
/// independent probes all hit set bits with probability `E[(X/m)^k]`, and the
/// distribution of `X` follows from one throw at a time,
/// `P_{t+1}(x) = P_t(x) x/m + P_t(x-1) (m-x+1)/m`. Every term is positive, so the result
/// carries no cancellation error.
///
/// ```
/// use bloomforge_core::math::{std_fp, std_fp_exact};
/// // 16 bits, 4 keys, 3 probes: the classic formula is 5 % low.
/// let exact = std_fp_exact(16, 4, 3).unwrap();
/// assert!((exact - 0.164955).abs() < 1e-6);
/// assert!(exact > std_fp(16.0, 4.0, 3) * 1.05);
/// // Larger filters approach it: 0.06 % apart at 10,000 bits.
/// let (e, c) = (std_fp_exact(10_000, 1_000, 7).unwrap(), std_fp(1e4, 1e3, 7));
/// assert!(e > c && e < c * 1.001);
/// ```
pub fn std_fp_exact(m: u64, n: u64, k: u32) -> Option<f64> {
    if m == 0 {
        return None;
    }
    let throws = u64::from(k).checked_mul(n)?;
    let states = m.min(throws);
    if throws.checked_mul(states)? > STD_FP_EXACT_MAX_WORK {
        return None;
    }
    if throws == 0 {
        return Some(0.0);
    }
    let mf = m as f64;
    // p[x] = P(X = x) after the throws so far; x <= min(t, m) after t throws.
    let mut p = vec![0.0f64; states as usize + 1];
    p[0] = 1.0;
    for t in 0..throws {
        let top = (t + 1).min(states) as usize;
        for x in (1..=top).rev() {
            let stay = p[x] * (x as f64 / mf);
            let fresh = p[x - 1] * ((mf - (x - 1) as f64) / mf);
            p[x] = stay + fresh;
        }
        p[0] = 0.0;
    }
    Some(
        p.iter()
            .enumerate()
            .map(|(x, &px)| px * (x as f64 / mf).powi(k as i32))
            .sum(),
    )
}

/// Large-`m` limit `(1 - e^(-k/c))^k` at `c` bits per key.
pub fn std_fp_c(c: f64, k: u32) -> f64 {
    (-(-f64::from(k) / c).exp_m1()).powi(k as i32)
}

/// Bits per key of a standard filter with optimal real `k` at FP `p`: `-ln p / (ln 2)^2`.
pub fn std_bits_per_key(p: f64) -> f64 {
    -p.ln() / (LN2 * LN2)
}

/// The real-valued optimal number of probes `c ln 2`.
pub fn std_optimal_k_real(c: f64) -> f64 {
    c * LN2
}

/// The integer `k` in `1..=kmax` minimising [`std_fp_c`]; returns `(k, fp)`.
pub fn std_best_k(c: f64, kmax: u32) -> (u32, f64) {
    best_k(|k| std_fp_c(c, k), kmax)
}

/// The `k` in `1..=kmax` minimising `fp_of_k`; returns `(k, fp)` (smallest `k` on ties).
pub fn best_k(fp_of_k: impl Fn(u32) -> f64, kmax: u32) -> (u32, f64) {
    let mut best = (1, fp_of_k(1));
    for k in 2..=kmax.max(1) {
        let fp = fp_of_k(k);
        if fp < best.1 {
            best = (k, fp);
        }
    }
    best
}

/// Standard deviation, across filter instances holding exactly `n` keys, of the realised FP
/// `(X/m)^k` of a standard filter (delta method; `X` = set bits after `k n` throws).
pub fn std_fp_instance_sd(m: f64, n: f64, k: u32) -> f64 {
    let throws = f64::from(k) * n;
    let q1 = (throws * (-1.0 / m).ln_1p()).exp();
    let q2 = (throws * (-2.0 / m).ln_1p()).exp();
    let var_x = m * (m - 1.0) * q2 + m * q1 - (m * q1) * (m * q1);
    let ex = m * (1.0 - q1);
    let p = (ex / m).powi(k as i32);
    p * f64::from(k) * var_x.max(0.0).sqrt() / ex
}

// ---------------------------------------------------------------------------------------
// Block-load distributions
// ---------------------------------------------------------------------------------------

/// Poisson(`lam`) pmf on `0..=hi`, computed in log space, with `hi` chosen so the upper tail
/// mass is below `eps`. Because every conditional FP is at most 1 and grows with the load,
/// truncating a mixture there errs by at most `eps` (absolute).
///
/// Valid for `0 <= lam <= 1e7` ([`MAX_WINDOW_MEAN`]) and `0 < eps < 1`; outside that
/// (NaN, infinite or huge means) it returns `[NaN]`, so mixtures built on it are NaN
/// rather than a hang or an outsized allocation.
pub fn poisson_pmf_window(lam: f64, eps: f64) -> Vec<f64> {
    if !(lam.is_finite() && lam <= MAX_WINDOW_MEAN && eps > 0.0 && eps < 1.0) {
        return vec![f64::NAN];
    }
    if lam <= 0.0 {
        return vec![1.0];
    }
    let mut hi = (lam + 10.0 * lam.sqrt() + 20.0).ceil() as usize;
    loop {
        let pmf: Vec<f64> = (0..=hi)
            .map(|i| {
                let x = i as f64;
                (x * lam.ln() - lam - ln_gamma(x + 1.0)).exp()
            })
            .collect();
        let last = pmf[hi];
        if hi as f64 > lam && last / (1.0 - lam / (hi as f64 + 1.0)) < eps {
            return pmf;
        }
        hi = hi * 3 / 2 + 10;
    }
}

/// Exact block load Binomial(`n`, 1/`blocks`) on `0..=hi`, tail mass below `eps`.
///
/// Valid for a mean `n / blocks <= 1e7`, `blocks >= 1` and `0 < eps < 1`; otherwise `[NaN]`.
pub fn binomial_pmf_window(n: u64, blocks: u64, eps: f64) -> Vec<f64> {
    let q = 1.0 / blocks as f64;
    let nf = n as f64;
    let lam = nf * q;
    if blocks == 0 || !(lam <= MAX_WINDOW_MEAN && eps > 0.0 && eps < 1.0) {
        return vec![f64::NAN];
    }
    let mut hi = n.min((lam + 10.0 * lam.sqrt() + 20.0).ceil() as u64);
    loop {
        let pmf: Vec<f64> = (0..=hi)
            .map(|i| {
                let x = i as f64;
                (ln_choose(nf, x) + x * q.ln() + (nf - x) * (-q).ln_1p()).exp()
            })
            .collect();
        let h = hi as f64;
        let ratio = (nf - h) * q / ((h + 1.0) * (1.0 - q));
        if hi >= n || (ratio < 1.0 && pmf[hi as usize] / (1.0 - ratio) < eps) {
            return pmf;
        }
        hi = n.min(hi * 3 / 2 + 10);
    }
}

/// Largest block-load mean the mixture windows accept (far above any real filter's: a
/// 512-bit block at the 1.6 bits/key floor of the builders holds 320 keys on average).
/// It bounds a window's allocation to about 80 MB.
pub const MAX_WINDOW_MEAN: f64 = 1e7;

/// Tail mass left out of a mixture window.
const MIX_EPS: f64 = 1e-15;

// ---------------------------------------------------------------------------------------
// Poisson and binomial laws
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
        if (t as f64 > lam && term <= sum * 1e-17) || t > j + 10_000 {
            return sum;
        }
        t += 1;
    }
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
// Inside one block
// ---------------------------------------------------------------------------------------

/// How the `k` probes of one key are placed inside its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeModel {
    /// `k` independent uniform positions (duplicates possible): what
    /// [`BlockedBloomFilter`](crate::BlockedBloomFilter) does.
    Replace,
    /// `k` distinct positions (a uniform `k`-subset).
    Distinct,
    /// Putze et al.'s approximation `(1 - (1 - 1/B)^(k i))^k`, which ignores the
    /// correlation between the query's `k` bits (slightly optimistic for small `B`).
    Putze,
}

fn ln_choose(a: f64, b: f64) -> f64 {
    ln_gamma(a + 1.0) - ln_gamma(b + 1.0) - ln_gamma(a - b + 1.0)
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, n = 9; relative error ~1e-15).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1-x) = π / sin(πx).
        let pi = core::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    let x = x - 1.0;
    let mut a = COEF[0];
    let t = x + G + 0.5;
    for (i, &c) in COEF.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * core::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// `pi[x]` = P(`x` of `B` bits set) evolved by one key of `k` probes under `model`.
fn occupancy_step(
    cur: &[f64],
    b: usize,
    k: u32,
    model: ProbeModel,
    trans: &[Vec<f64>],
) -> Vec<f64> {
    match model {
        ProbeModel::Replace | ProbeModel::Putze => {
            // In place, from the top so cur[x - 1] is still the previous throw's value.
            let bf = b as f64;
            let mut cur = cur.to_vec();
            // Only states up to the highest reachable set-bit count can be non-zero.
            let top = cur.iter().rposition(|&p| p != 0.0).unwrap_or(0);
            for t in 0..k as usize {
                let hi = (top + t + 1).min(b);
                for x in (1..=hi).rev() {
                    let xf = x as f64;
                    cur[x] = (cur[x] * xf + cur[x - 1] * (bf - xf + 1.0)) / bf;
                }
                cur[0] = 0.0;
            }
            cur
        }
        ProbeModel::Distinct => {
            let mut next = vec![0.0; b + 1];
            for (x, row) in trans.iter().enumerate() {
                let p = cur[x];
                if p == 0.0 {
                    continue;
                }
                for (y, &t) in row.iter().enumerate() {
                    next[y] += p * t;
                }
            }
            next
        }
    }
}

/// `f[i]` = E[(P(a query hits only set bits | block state))^`power`] for a block of `b` bits
/// holding `i = 0..=imax` keys of `k` probes each under `model`. `power = 2` gives the
/// second moment used for instance-to-instance variance.
///
/// The exact models cost `O(imax * b * k)` time and, for `Distinct`, `O(b^2)` memory:
/// `b` up to [`MAX_INNER_BLOCK_BITS`] (4096 for `Distinct`) and `imax` up to
/// [`MAX_INNER_LOAD`] are accepted; beyond that (or `b = 0`) the result is `[NaN]`, so a
/// mixture built on it is NaN rather than an outsized allocation or an hour of work.
pub fn block_inner_fp(b: usize, k: u32, imax: usize, model: ProbeModel, power: i32) -> Vec<f64> {
    let max_b = if model == ProbeModel::Distinct {
        MAX_INNER_BLOCK_BITS / 16
    } else {
        MAX_INNER_BLOCK_BITS
    };
    if b == 0 || b > max_b || imax > MAX_INNER_LOAD {
        return vec![f64::NAN];
    }
    let bf = b as f64;
    if model == ProbeModel::Putze {
        return (0..=imax)
            .map(|i| {
                (-(f64::from(k) * i as f64 * (-1.0 / bf).ln_1p()).exp_m1()).powi(k as i32 * power)
            })
            .collect();
    }
    // Probability that a query lands only on set bits, given x set bits.
    let g: Vec<f64> = (0..=b)
        .map(|x| {
            let xf = x as f64;
            let base = match model {
                ProbeModel::Replace => (xf / bf).powi(k as i32),
                _ if x >= k as usize => {
                    (ln_choose(xf, f64::from(k)) - ln_choose(bf, f64::from(k))).exp()
                }
                _ => 0.0,
            };
            base.powi(power)
        })
        .collect();
    let trans: Vec<Vec<f64>> = if model == ProbeModel::Distinct {
        let lcb = ln_choose(bf, f64::from(k));
        (0..=b)
            .map(|x| {
                let mut row = vec![0.0; b + 1];
                for j in 0..=k as usize {
                    if j <= b - x && k as usize - j <= x {
                        row[x + j] = (ln_choose((b - x) as f64, j as f64)
                            + ln_choose(x as f64, (k as usize - j) as f64)
                            - lcb)
                            .exp();
                    }
                }
                row
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut cur = vec![0.0; b + 1];
    cur[0] = 1.0;
    let mut out = Vec::with_capacity(imax + 1);
    out.push(dot(&cur, &g));
    for _ in 1..=imax {
        cur = occupancy_step(&cur, b, k, model, &trans);
        out.push(dot(&cur, &g));
    }
    out
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Largest block size [`block_inner_fp`] computes (bits; `Distinct`: a sixteenth of it).
pub const MAX_INNER_BLOCK_BITS: usize = 1 << 16;

/// Largest block load [`block_inner_fp`] computes.
pub const MAX_INNER_LOAD: usize = 1 << 16;

fn mix(weights: &[f64], inner: &[f64]) -> f64 {
    weights.iter().zip(inner).map(|(w, f)| w * f).sum()
}

// ---------------------------------------------------------------------------------------
// Blocked and split-block
// ---------------------------------------------------------------------------------------

/// Blocked Bloom filter (Putze, Sanders, Singler 2007) at `c` bits per key: each key picks
/// one `b`-bit block and sets `k` bits in it. Poisson(`b / c`) block loads.
pub fn blocked_fp(c: f64, b: usize, k: u32, model: ProbeModel) -> f64 {
    let w = poisson_pmf_window(b as f64 / c, MIX_EPS);
    mix(&w, &block_inner_fp(b, k, w.len() - 1, model, 1))
}

/// Blocked FP for a concrete filter of `m` bits holding `n` keys: exact Binomial loads.
pub fn blocked_fp_exact_load(m: u64, n: u64, b: usize, k: u32, model: ProbeModel) -> f64 {
    let w = binomial_pmf_window(n, (m / b as u64).max(1), MIX_EPS);
    mix(&w, &block_inner_fp(b, k, w.len() - 1, model, 1))
}

/// Split-block (sectorized) filter: `s` words of `w` bits, each key sets exactly one bit in
/// every word of its block (Parquet SBBF: `s = 8, w = 32`). Exact under ideal hashing:
/// `sum_i P(load = i) (1 - (1 - 1/w)^i)^s`.
pub fn split_block_fp(c: f64, s: u32, w: u32) -> f64 {
    let weights = poisson_pmf_window(f64::from(s * w) / c, MIX_EPS);
    let inner = split_inner(weights.len() - 1, s, w);
    mix(&weights, &inner)
}

fn split_inner(imax: usize, s: u32, w: u32) -> Vec<f64> {
    let l = (-1.0 / f64::from(w)).ln_1p();
    (0..=imax)
        .map(|i| (-(i as f64 * l).exp_m1()).powi(s as i32))
        .collect()
}

/// Standard deviation of the mean over `nblocks` blocks of a per-block quantity `f` with
/// the total key count fixed (multinomial loads): the part of `f` linear in the load is
/// removed, `var = (Var f - Cov(f, L)^2 / Var L) / nblocks`.
fn instance_sd(lam: f64, nblocks: f64, inner1: &[f64], inner2: &[f64], w: &[f64]) -> f64 {
    let e1 = mix(w, inner1);
    let e2 = mix(w, inner2);
    let el: f64 = w
        .iter()
        .zip(inner1)
        .enumerate()
        .map(|(i, (p, f))| i as f64 * p * f)
        .sum();
    let cov = el - lam * e1;
    ((e2 - e1 * e1 - cov * cov / lam).max(0.0) / nblocks).sqrt()
}

/// Standard deviation across filter instances (exactly `n` keys, `m` bits) of the realised
/// FP of a blocked filter.
pub fn blocked_fp_instance_sd(m: u64, n: u64, b: usize, k: u32, model: ProbeModel) -> f64 {
    let lam = b as f64 * n as f64 / m as f64;
    let w = poisson_pmf_window(lam, MIX_EPS);
    let imax = w.len() - 1;
    let f1 = block_inner_fp(b, k, imax, model, 1);
    let f2 = block_inner_fp(b, k, imax, model, 2);
    instance_sd(lam, (m / b as u64) as f64, &f1, &f2, &w)
}

/// Standard deviation across instances of the realised FP of a split-block filter.
pub fn split_block_fp_instance_sd(m: u64, n: u64, s: u32, w: u32) -> f64 {
    let b = (s * w) as usize;
    let lam = b as f64 * n as f64 / m as f64;
    let weights = poisson_pmf_window(lam, MIX_EPS);
    let imax = weights.len() - 1;
    let f1 = split_inner(imax, s, w);
    // E[prod_j (X_j/w)^2 | i] = (E[(X/w)^2 | i])^s, X = set bits of one word after i throws.
    let word2 = block_inner_fp(w as usize, 1, imax, ProbeModel::Replace, 2);
    let f2: Vec<f64> = word2.iter().map(|v| v.powi(s as i32)).collect();
    instance_sd(lam, (m / b as u64) as f64, &f1, &f2, &weights)
}

// ---------------------------------------------------------------------------------------
// Realised FP of a concrete filter
// ---------------------------------------------------------------------------------------

/// Realised FP of a standard filter from its popcount: a random non-member query is a
/// false positive with exactly this probability (ideal hashing), so the number of false
/// positives in `Q` queries is Binomial(Q, p) with no model error.
pub fn realized_fp_standard(popcount: u64, m: u64, k: u32) -> f64 {
    (popcount as f64 / m as f64).powi(k as i32)
}

/// Realised FP of a blocked filter (`k` probes with replacement) from its block popcounts.
pub fn realized_fp_blocked(block_popcounts: impl IntoIterator<Item = u32>, b: u32, k: u32) -> f64 {
    let mut sum = 0.0;
    let mut count = 0usize;
    for pc in block_popcounts {
        sum += (f64::from(pc) / f64::from(b)).powi(k as i32);
        count += 1;
    }
    if count == 0 {
        0.0
    } else {
        sum / count as f64
    }
}

// ---------------------------------------------------------------------------------------
// Sizing
// ---------------------------------------------------------------------------------------

/// Bits per key searched by the sizing functions.
const MIN_BITS_PER_KEY: f64 = 1.6;
const MAX_BITS_PER_KEY: f64 = 256.0;
/// Largest k the blocked sizing considers.
pub const BLOCKED_SIZING_MAX_K: u32 = 24;

/// `block_inner_fp(block_bits, k, .., Replace)[..=imax]` (the FP of a block holding `i`
/// keys, for `i = 0..=imax`), from tables kept for the process per `(block_bits, k)` and
/// grown on demand: sizing a blocked layout is then a few dot products (the first call
/// costs milliseconds). Shared by core's 512-bit blocks and the counting crate's
/// 128-counter lines. Past [`MAX_INNER_LOAD`] the result is `[NaN]`, as for
/// [`block_inner_fp`].
pub fn block_inner_fp_cached(block_bits: usize, k: u32, imax: usize) -> Vec<f64> {
    type Tables = Vec<((usize, u32), Vec<f64>)>;
    static TABLES: Mutex<Tables> = Mutex::new(Vec::new());
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    let at = match tables.iter().position(|(key, _)| *key == (block_bits, k)) {
        Some(at) => at,
        None => {
            tables.push(((block_bits, k), Vec::new()));
            tables.len() - 1
        }
    };
    let table = &mut tables[at].1;
    if table.len() <= imax {
        let grown = block_inner_fp(block_bits, k, imax + imax / 2, ProbeModel::Replace, 1);
        if grown.len() <= imax {
            // Loads past MAX_INNER_LOAD (absurdly few bits per key): `block_inner_fp`'s
            // `[NaN]`, so the mixture is NaN, as documented; the cache keeps its table.
            return grown;
        }
        *table = grown;
    }
    table[..=imax].to_vec()
}

/// [`blocked_fp`] with probes with replacement at `c` bits per key, through
/// [`block_inner_fp_cached`] for `k <= 24` (larger `k` is computed directly).
pub fn blocked_fp_cached(c: f64, block_bits: usize, k: u32) -> f64 {
    if k == 0 || k > BLOCKED_SIZING_MAX_K {
        return blocked_fp(c, block_bits, k, ProbeModel::Replace);
    }
    let w = poisson_pmf_window(block_bits as f64 / c, MIX_EPS);
    mix(&w, &block_inner_fp_cached(block_bits, k, w.len() - 1))
}

/// FP of a 512-bit blocked filter (probes with replacement) at `c` bits per key, with the
/// conditional tables cached (`k <= 24`; larger `k` falls back to [`blocked_fp`]).
pub fn blocked512_fp(c: f64, k: u32) -> f64 {
    blocked_fp_cached(c, 512, k)
}

/// Smallest bits-per-key `c` in `1.6..=256` with `fp(c) <= p` (to about 1e-9 relative),
/// for `fp` decreasing in `c`, searched upwards from `start` (a lower bound such as the
/// standard filter's requirement, [`std_bits_per_key`]): bracket by factors of 1.15, then
/// bisect. Every layout's `(n, p)` sizing goes through it with its own FP formula; targets
/// below what 256 bits per key reach, and `p` outside `(0, 1)`, return 256.
///
/// ```
/// use bloomforge_core::math::{solve_bits_per_key, std_bits_per_key};
/// // The standard filter with real-valued optimal k: fp(c) = exp(-c (ln 2)^2).
/// let ln2 = std::f64::consts::LN_2;
/// let c = solve_bits_per_key(0.01, 1.6, |c| (-c * ln2 * ln2).exp());
/// assert!((c - std_bits_per_key(0.01)).abs() < 1e-6);
/// ```
pub fn solve_bits_per_key(p: f64, start: f64, fp: impl Fn(f64) -> f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        // Out of domain (the builders reject it first): the largest size.
        return MAX_BITS_PER_KEY;
    }
    let mut lo = if start.is_finite() {
        start.clamp(MIN_BITS_PER_KEY, MAX_BITS_PER_KEY)
    } else {
        MIN_BITS_PER_KEY
    };
    if fp(lo) <= p {
        return lo;
    }
    // Bracket: blocked layouts need 5-30 % more than the standard formula.
    let mut hi = lo;
    loop {
        hi = (hi * 1.15 + 0.5).min(MAX_BITS_PER_KEY);
        if fp(hi) <= p || hi >= MAX_BITS_PER_KEY {
            break;
        }
        lo = hi;
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if fp(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// `(bits per key, k)` for a 512-bit blocked filter to reach FP `p`: the smallest `c` at
/// which some `k <= 24` reaches `p` under the exact blocked model.
pub fn blocked512_size(p: f64) -> (f64, u32) {
    // FP is unimodal in k with its minimum near c ln 2: search a window around it.
    let best = |c: f64| {
        let center = ((c * LN2).round() as u32).clamp(1, BLOCKED_SIZING_MAX_K);
        let lo = center.saturating_sub(3).max(1);
        debug_assert!(lo <= center);
        let hi = (center + 3).min(BLOCKED_SIZING_MAX_K);
        let (dk, fp) = best_k(|j| blocked512_fp(c, lo + j - 1), hi - lo + 1);
        (lo + dk - 1, fp)
    };
    let c = solve_bits_per_key(p, std_bits_per_key(p), |c| best(c).1);
    (c, best(c).0)
}

/// Bits per key for a split-block filter (`s` words of `w` bits) to reach FP `p`.
pub fn split_block_bits_per_key(p: f64, s: u32, w: u32) -> f64 {
    solve_bits_per_key(p, std_bits_per_key(p), |c| split_block_fp(c, s, w))
}

/// `(m, k)` for a standard filter holding `n` keys at FP `p`: `m = -n ln p / (ln 2)^2`
/// rounded up, `k` the best integer for that `m`, then `m` grown until the classic formula
/// meets `p`.
pub fn std_size(n: u64, p: f64) -> (u64, u32) {
    let nf = n as f64;
    let mut m = (nf * std_bits_per_key(p)).ceil().max(1.0);
    loop {
        let (k, fp) = best_k(|k| std_fp(m, nf, k), 64);
        if fp <= p || m > 1e19 {
            return (m as u64, k);
        }
        m = (m * 1.001).ceil() + 1.0;
    }
}

// ---------------------------------------------------------------------------------------
// Batch evaluation (added with the statistics module and the theory reference test)
// ---------------------------------------------------------------------------------------

/// [`blocked_fp`] at many bits-per-key values at once. The conditional FP table of a
/// block depends only on `(b, k, model)`; only the Poisson(`b / c`) weights depend on
/// `c`, so the table is built once (up to the largest load any `c` needs) and each
/// result is one dot product. Returns exactly what [`blocked_fp`] returns for each `c`.
pub fn blocked_fp_many(cs: &[f64], b: usize, k: u32, model: ProbeModel) -> Vec<f64> {
    let weights: Vec<Vec<f64>> = cs
        .iter()
        .map(|&c| poisson_pmf_window(b as f64 / c, MIX_EPS))
        .collect();
    let imax = weights.iter().map(|w| w.len() - 1).max().unwrap_or(0);
    let inner = block_inner_fp(b, k, imax, model, 1);
    weights.iter().map(|w| mix(w, &inner)).collect()
}

/// [`split_block_fp`] for a concrete filter of `m` bits holding `n` keys: exact
/// Binomial(`n`, 1 / blocks) block loads instead of Poisson.
pub fn split_block_fp_exact_load(m: u64, n: u64, s: u32, w: u32) -> f64 {
    let blocks = (m / u64::from(s * w)).max(1);
    let weights = binomial_pmf_window(n, blocks, MIX_EPS);
    mix(&weights, &split_inner(weights.len() - 1, s, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Poisson and binomial laws against closed forms: P(Poisson(2) >= 2) =
    /// 1 - 3 e^-2, Binomial(10, 1/2) at 5 = 252/1024, masses summing to 1, the recurrence
    /// against the log-space pmf, and an underflowing tail that is 0, not NaN.
    #[test]
    fn poisson_and_binomial_laws() {
        assert_eq!(poisson_tail(2.0, 0), 1.0);
        let want = 1.0 - 3.0 * (-2.0f64).exp();
        assert!((poisson_tail(2.0, 2) - want).abs() < 1e-14);
        assert!((poisson_pmf(2.0, 3) - 8.0 / 6.0 * (-2.0f64).exp()).abs() < 1e-15);
        assert_eq!((poisson_pmf(0.0, 0), poisson_pmf(0.0, 1)), (1.0, 0.0));
        assert_eq!(poisson_tail(1e-4, 1 << 31), 0.0);
        let pmf = binomial_pmf_range(10, 0.5, 12);
        assert!((pmf[5] - 252.0 / 1024.0).abs() < 1e-15);
        assert_eq!((pmf[11], pmf[12]), (0.0, 0.0));
        assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        let big = binomial_pmf_range(7_000_000, 1e-7, 30);
        for (t, p) in big.iter().enumerate() {
            let log_space = binomial_pmf(7_000_000, 1e-7, t as u64);
            assert!(
                (p - log_space).abs() <= 1e-6 * log_space,
                "{t}: {p} vs {log_space}"
            );
        }
    }

    /// A few thousandths of a bit per key put ~500 000 keys in a block: past the exact
    /// model's range, so the cached sizing answers NaN (it must not index past its table
    /// and panic: `bloomforge build --bits-per-key 0.001`).
    #[test]
    fn cached_blocked_fp_past_the_load_limit_is_nan() {
        assert!(blocked_fp_cached(0.001, 512, 6).is_nan());
        assert!(block_inner_fp_cached(512, 6, MAX_INNER_LOAD + 1)[0].is_nan());
        // The cache still serves ordinary sizes afterwards.
        assert!((blocked_fp_cached(10.0, 512, 6) - 0.01).abs() < 0.005);
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut f = 1.0f64;
        for n in 1..30u32 {
            f *= f64::from(n);
            let rel = (ln_gamma(f64::from(n) + 1.0) - f.ln()).abs() / f.ln().max(1.0);
            assert!(rel < 1e-13, "n={n} rel={rel}");
        }
    }

    #[test]
    fn blocked_needs_more_bits_than_standard() {
        let (c, k) = blocked512_size(0.01);
        assert!(c > std_bits_per_key(0.01), "c={c}");
        assert!((6..=7).contains(&k), "k={k}");
        assert!(blocked512_fp(c, k) <= 0.01);
    }

    #[test]
    fn split_block_at_one_percent() {
        // The Parquet formula says 9.68 bits/key; the exact split-block model needs ~10.5.
        let c = split_block_bits_per_key(0.01, 8, 32);
        assert!((10.3..10.8).contains(&c), "c={c}");
    }

    #[test]
    fn std_size_meets_target() {
        for &p in &[0.1, 0.01, 1e-3, 1e-5] {
            let (m, k) = std_size(1_000_000, p);
            assert!(std_fp(m as f64, 1e6, k) <= p);
            assert!((m as f64) < 1.01 * 1e6 * std_bits_per_key(p) + 10.0);
        }
    }
}
