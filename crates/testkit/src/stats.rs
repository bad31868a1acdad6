//! Measurement statistics for false-positive tests: normal and binomial distributions,
//! exact binomial tests, Clopper-Pearson intervals, sample sizes, and
//! [`fp_consistent`], the acceptance test that decides whether a measured false-positive
//! count agrees with a predicted rate.
//!
//! Everything is computed without external crates and to near machine precision:
//!
//! * the normal quantile is Acklam's rational approximation polished by one Halley step
//!   (relative error ~1e-15 instead of Acklam's 1.2e-9), with [`erfc`] from the
//!   incomplete gamma function;
//! * binomial probabilities use Loader's saddle-point form (`stirlerr` and `bd0`), which
//!   keeps full relative precision for any `n` up to 2^53, and binomial tails are the
//!   regularized incomplete beta function by its continued fraction, always evaluated on
//!   the small side (the other tail is its complement), so a tail of 1e-300 is as
//!   accurate as a tail of 0.3;
//! * Clopper-Pearson limits are found by bisection on `p` of those exact tails.
//!
//! The semantics follow the Python reference `fp_theory.py` (section 10) exactly.
//!
//! ```
//! use bloomforge_testkit::stats::{binomial_test_two_sided, fp_consistent};
//!
//! // 10_130 false positives in 1_000_000 queries of a filter whose realised FP is 1 %:
//! let check = fp_consistent(10_130, 1_000_000, 0.01, 1e-6, 0.0, 0.0);
//! assert!(check.ok, "{check:?}");
//! // The same question as an exact two-sided binomial test at alpha = 1e-6:
//! assert!(binomial_test_two_sided(10_130, 1_000_000, 0.01) > 1e-6);
//! // 11_000 would be a 10 sigma excess:
//! assert!(!fp_consistent(11_000, 1_000_000, 0.01, 1e-6, 0.0, 0.0).ok);
//! ```
//!
//! Functions taking probabilities return NaN (or a documented neutral value) for
//! arguments outside their domain; none of them panics.

const SQRT_2: f64 = core::f64::consts::SQRT_2;
/// sqrt(2 pi).
const SQRT_2PI: f64 = 2.506_628_274_631_000_2;
/// 1 / sqrt(pi).
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
/// ln(2 pi).
const LN_2PI: f64 = 1.837_877_066_409_345_5;

// ---------------------------------------------------------------------------------------
// Normal distribution
// ---------------------------------------------------------------------------------------

/// The complementary error function `erfc(x) = 1 - erf(x)`, to ~1e-15 relative over the
/// whole range (including the far right tail, where `1 - erf(x)` would cancel).
///
/// Computed as the regularized incomplete gamma function, `erfc(x) = Q(1/2, x^2)` for
/// `x >= 0`: its power series for `x^2 < 1.5`, its continued fraction beyond.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    let t = x * x;
    if t < 1.5 {
        return 1.0 - erf_series(x);
    }
    if x > 27.3 {
        // erfc(27.3) < 1e-325: below the smallest subnormal.
        return 0.0;
    }
    // Q(1/2, t) = e^{-t} t^{1/2} / Gamma(1/2) * CF(t), modified Lentz.
    const TINY: f64 = 1e-300;
    let a = 0.5;
    let mut b = t + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..1000 {
        let fi = f64::from(i);
        let an = -fi * (fi - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    exp_minus_square(x) * x * FRAC_1_SQRT_PI * h
}

/// `erf(x)` for `x^2 < 1.5` from the series of the lower incomplete gamma function.
fn erf_series(x: f64) -> f64 {
    let t = x * x;
    // P(1/2, t) = e^{-t} t^{1/2} / Gamma(1/2) * sum_n t^n / (1/2 (3/2) ... (1/2 + n)).
    let mut ap = 0.5;
    let mut term = 1.0 / ap;
    let mut sum = term;
    for _ in 0..200 {
        ap += 1.0;
        term *= t / ap;
        sum += term;
        if term.abs() < sum.abs() * 1e-17 {
            break;
        }
    }
    exp_minus_square(x) * x * FRAC_1_SQRT_PI * sum
}

/// `e^{-x^2}` without the rounding error of `x * x` magnified by the exponential (Cody's
/// split: `x^2 = s^2 + (x - s)(x + s)` with `s` = `x` truncated to 1/16).
fn exp_minus_square(x: f64) -> f64 {
    let s = (x * 16.0).trunc() / 16.0;
    (-s * s).exp() * (-(x - s) * (x + s)).exp()
}

/// The standard normal CDF `P(Z <= x)`, accurate to ~1e-15 relative in both tails.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / SQRT_2)
}

/// The standard normal upper tail `P(Z > x)`, accurate to ~1e-15 relative for large `x`.
pub fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x / SQRT_2)
}

/// The standard normal quantile (inverse CDF): the `z` with `P(Z <= z) = p`.
///
/// Acklam's rational approximation refined by one Halley step on [`normal_cdf`]: relative
/// error ~1e-15. Returns `-inf` at 0, `+inf` at 1 and NaN outside `[0, 1]`.
pub fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p > 0.5 {
        // 1 - p is exact for p in [0.5, 1] (Sterbenz).
        -lower_quantile(1.0 - p)
    } else {
        lower_quantile(p)
    }
}

/// The upper-tail quantile: the `z` with `P(Z > z) = q`. Unlike `normal_quantile(1 - q)`
/// it keeps full precision for tiny `q` (e.g. `q = 5e-7` for a two-sided `alpha = 1e-6`).
pub fn normal_upper_quantile(q: f64) -> f64 {
    if !(0.0..=1.0).contains(&q) {
        return f64::NAN;
    }
    if q > 0.5 {
        lower_quantile(1.0 - q)
    } else {
        -lower_quantile(q)
    }
}

/// The two-sided critical value for confidence `conf`: `z` with `P(|Z| <= z) = conf`,
/// i.e. the `(1 + conf) / 2` quantile (Python reference: `_z(conf)`).
pub fn two_sided_z(conf: f64) -> f64 {
    if !(0.0..=1.0).contains(&conf) {
        return f64::NAN;
    }
    normal_upper_quantile(0.5 * (1.0 - conf))
}

/// Quantile for `p` in `[0, 0.5]`.
fn lower_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const P_LOW: f64 = 0.024_25;
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    let x = if p < P_LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // One Halley step on Phi(x) - p (cubic convergence: 1e-9 -> below 1e-15). For
    // p < 0.5 the CDF is taken from the lower tail, where erfc is relatively accurate.
    let e = normal_cdf(x) - p;
    let u = e * SQRT_2PI * (0.5 * x * x).exp();
    x - u / (1.0 + 0.5 * x * u)
}

// ---------------------------------------------------------------------------------------
// Binomial distribution
// ---------------------------------------------------------------------------------------

/// `ln(n!) - ln(sqrt(2 pi n) (n/e)^n)` for an integer-valued `n >= 1` (Loader 2000).
fn stirlerr(n: f64) -> f64 {
    // Exact values for n = 1..=15 (computed with 40-digit arithmetic).
    const SMALL: [f64; 15] = [
        0.081_061_466_795_327_26,
        0.041_340_695_955_409_3,
        0.027_677_925_684_998_34,
        0.020_790_672_103_765_093,
        0.016_644_691_189_821_193,
        0.013_876_128_823_070_748,
        0.011_896_709_945_891_77,
        0.010_411_265_261_972_096,
        0.009_255_462_182_712_733,
        0.008_330_563_433_362_87,
        0.007_573_675_487_951_841,
        0.006_942_840_107_209_53,
        0.006_408_994_188_004_207,
        0.005_951_370_112_758_847_5,
        0.005_554_733_551_962_801,
    ];
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        return SMALL[(n as usize).clamp(1, 15) - 1];
    }
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// The deviance term `x ln(x / np) + np - x`, without cancellation when `x ~ np`
/// (Loader 2000).
fn bd0(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let mut v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            ej *= v;
            let s1 = s + ej / f64::from(2 * j + 1);
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        return s;
    }
    x * (x / np).ln() + np - x
}

/// Binomial pmf `P(X = k)` for `X ~ Binomial(n, p)` with `q = 1 - p` given separately so
/// neither loses precision (Loader's saddle-point algorithm, as in R's `dbinom_raw`).
fn pmf_pq(k: f64, n: f64, p: f64, q: f64) -> f64 {
    if p == 0.0 {
        return if k == 0.0 { 1.0 } else { 0.0 };
    }
    if q == 0.0 {
        return if k == n { 1.0 } else { 0.0 };
    }
    if k == 0.0 {
        if n == 0.0 {
            return 1.0;
        }
        let lc = if p < 0.1 {
            -bd0(n, n * q) - n * p
        } else {
            n * q.ln()
        };
        return lc.exp();
    }
    if k == n {
        let lc = if q < 0.1 {
            -bd0(n, n * p) - n * q
        } else {
            n * p.ln()
        };
        return lc.exp();
    }
    if k < 0.0 || k > n {
        return 0.0;
    }
    let lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(k, n * p) - bd0(n - k, n * q);
    // ln(2 pi k (n - k) / n); n - k is exact, unlike R's `log1p(-k / n)` which loses
    // digits when k is close to n.
    let lf = LN_2PI + k.ln() + (n - k).ln() - n.ln();
    (lc - 0.5 * lf).exp()
}

/// `true` when `p` is a probability.
fn is_prob(p: f64) -> bool {
    (0.0..=1.0).contains(&p)
}

/// `P(X = k)` for `X ~ Binomial(n, p)`, to ~1e-14 relative for any `n < 2^53`.
/// NaN unless `0 <= p <= 1`.
pub fn binomial_pmf(k: u64, n: u64, p: f64) -> f64 {
    if !is_prob(p) {
        return f64::NAN;
    }
    if k > n {
        return 0.0;
    }
    pmf_pq(k as f64, n as f64, p, 1.0 - p)
}

/// The continued fraction of the regularized incomplete beta function:
/// `I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * betacf(a, b, x)`, convergent (quickly) for
/// `x < (a + 1) / (a + b + 2)`. Modified Lentz.
fn betacf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-16;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    // Convergence takes O(sqrt(min(a, b))) terms near the boundary of the region; the
    // cap is far above what any u64-sized binomial within f64 precision needs.
    for m in 1..50_000_000u64 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// Above this standard deviation `sqrt(npq)` a tail is taken from the continued
/// fraction (O(1) work per digit) instead of summing ~10 sd pmf terms.
const SUM_MAX_SD: f64 = 1e5;

/// Sum of pmf terms from `pmf(k)` outwards, `up` (towards `n`) or down (towards 0),
/// for `k` on the small side of the mode so the terms only decrease. Each ratio is
/// `(n - j) p / ((j + 1) q)`: p and q enter separately, so a tiny `p` or `q` loses
/// nothing. Stops once the geometric bound on the rest, `t r / (1 - r)` (the ratios
/// decrease outwards), is below 1e-17 of the sum.
fn tail_sum(k: f64, n: f64, p: f64, q: f64, up: bool) -> f64 {
    let mut t = pmf_pq(k, n, p, q);
    let mut sum = t;
    let mut j = k;
    while t > 0.0 {
        let r = if up {
            if j >= n {
                break;
            }
            (n - j) * p / ((j + 1.0) * q)
        } else {
            if j <= 0.0 {
                break;
            }
            j * q / ((n - j + 1.0) * p)
        };
        if r < 1.0 && t * r <= sum * 1e-17 * (1.0 - r) {
            break;
        }
        t *= r;
        sum += t;
        j += if up { 1.0 } else { -1.0 };
    }
    sum
}

/// `P(X >= k)` for `k` above the mode (the small upper tail).
fn upper_small(k: f64, n: f64, p: f64, q: f64) -> f64 {
    if (n * p * q).sqrt() <= SUM_MAX_SD {
        tail_sum(k, n, p, q, true)
    } else {
        // I_p(k, n - k + 1), whose front factor is pmf(k) q.
        pmf_pq(k, n, p, q) * q * betacf(k, n - k + 1.0, p)
    }
}

/// `P(X <= k)` for `k` below the mode (the small lower tail).
fn lower_small(k: f64, n: f64, p: f64, q: f64) -> f64 {
    if (n * p * q).sqrt() <= SUM_MAX_SD {
        tail_sum(k, n, p, q, false)
    } else {
        // I_q(n - k, k + 1), whose front factor is pmf(k) p. (Evaluated at x = q, which
        // costs ~eps / min(p, q) relative; min(p, q) > 1e10 / n here.)
        pmf_pq(k, n, p, q) * p * betacf(n - k, k + 1.0, q)
    }
}

/// `P(X >= k)` for `X ~ Binomial(n, p)`, `q = 1 - p`, both tails from the small side.
fn upper_tail_pq(k: u64, n: u64, p: f64, q: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    if p == 0.0 {
        return 0.0;
    }
    if q == 0.0 {
        return 1.0;
    }
    let (kf, nf) = (k as f64, n as f64);
    // k above the mode iff k + 1 > (n + 3) p (the continued fraction's own criterion,
    // which also makes k - 1 lie below the mode in the other branch).
    if p * (nf + 3.0) < kf + 1.0 {
        upper_small(kf, nf, p, q)
    } else {
        (1.0 - lower_small(kf - 1.0, nf, p, q)).max(0.0)
    }
}

/// `P(X >= k)` for `X ~ Binomial(n, p)`: the exact upper tail (inclusive), to ~1e-13
/// relative even when it is astronomically small. NaN unless `0 <= p <= 1`.
pub fn binomial_upper_tail(k: u64, n: u64, p: f64) -> f64 {
    if !is_prob(p) {
        return f64::NAN;
    }
    upper_tail_pq(k, n, p, 1.0 - p)
}

/// `P(X <= k)` for `X ~ Binomial(n, p)`: the exact CDF, to ~1e-13 relative even when it
/// is astronomically small. NaN unless `0 <= p <= 1`.
pub fn binomial_lower_tail(k: u64, n: u64, p: f64) -> f64 {
    if !is_prob(p) {
        return f64::NAN;
    }
    if k >= n {
        return 1.0;
    }
    // X <= k  <=>  n - X >= n - k, and n - X ~ Binomial(n, 1 - p).
    upper_tail_pq(n - k, n, 1.0 - p, p)
}

/// The exact two-sided (equal-tail) binomial test: the p-value of observing `x` successes
/// in `n` trials of probability `p`, `min(1, 2 min(P(X <= x), P(X >= x)))`.
///
/// Rejecting when this is `<= alpha` has a false-alarm probability of at most `alpha`,
/// and is equivalent to `p` lying outside the Clopper-Pearson `1 - alpha` interval of
/// `x / n`. NaN unless `0 <= p <= 1`; 0 for `x > n`.
pub fn binomial_test_two_sided(x: u64, n: u64, p: f64) -> f64 {
    if !is_prob(p) {
        return f64::NAN;
    }
    if x > n {
        return 0.0;
    }
    let tail = binomial_lower_tail(x, n, p).min(binomial_upper_tail(x, n, p));
    (2.0 * tail).min(1.0)
}

/// The exact one-sided binomial test against "the rate is larger than `p`": the p-value
/// `P(X >= x)`. Rejecting when it is `<= alpha` is a false alarm with probability at
/// most `alpha` when the true rate is `p` (or smaller).
pub fn binomial_test_greater(x: u64, n: u64, p: f64) -> f64 {
    binomial_upper_tail(x, n, p)
}

/// Half-width `t` with `2 exp(-t^2 / (2 (v + r t / 3))) = alpha`: Bernstein's inequality
/// for a sum of independent or negatively associated terms, each within `r` of its mean,
/// of total variance at most `v`. `|sum - mean| >= t` has probability at most `alpha`.
pub fn bernstein_halfwidth(v: f64, r: f64, alpha: f64) -> f64 {
    let l = 2.0 * (2.0 / alpha).ln();
    // t^2 = l (v + r t / 3)  =>  t = (l r / 3 + sqrt((l r / 3)^2 + 4 l v)) / 2
    let b = l * r / 3.0;
    0.5 * (b + (b * b + 4.0 * l * v).sqrt())
}

/// Exact probability that the measured rate `X / q` lies within `rel * p` of `p`,
/// `X ~ Binomial(q, p)` (Python reference: `coverage_exact`).
pub fn coverage_exact(q: u64, p: f64, rel: f64) -> f64 {
    if !is_prob(p) || rel.is_nan() {
        return f64::NAN;
    }
    let qf = q as f64;
    let lo = (qf * p * (1.0 - rel) - 1e-9).ceil().max(0.0);
    let hi = (qf * p * (1.0 + rel) + 1e-9).floor();
    if hi < lo || hi < 0.0 {
        return 0.0;
    }
    let (lo, hi) = (lo as u64, (hi as u64).min(q));
    // P(lo <= X <= hi), each term from its small side.
    let below = if lo == 0 {
        0.0
    } else {
        binomial_lower_tail(lo - 1, q, p)
    };
    let above = if hi >= q {
        0.0
    } else {
        binomial_upper_tail(hi + 1, q, p)
    };
    (1.0 - below - above).max(0.0)
}

// ---------------------------------------------------------------------------------------
// Intervals and sample sizes
// ---------------------------------------------------------------------------------------

/// Root of the monotone `f` on `[0, 1]` where it crosses `target`; `f` increasing when
/// `increasing`. Bisects geometrically while the bracket spans more than a factor of two
/// (so tiny roots are found to full relative precision), arithmetically after.
fn bisect_prob(target: f64, increasing: bool, f: impl Fn(f64) -> f64) -> f64 {
    let below = |p: f64| {
        let v = f(p);
        if increasing {
            v < target
        } else {
            v > target
        }
    };
    let (mut lo, mut hi) = (f64::MIN_POSITIVE, 1.0);
    if !below(lo) {
        return 0.0;
    }
    for _ in 0..400 {
        let mid = if hi > 2.0 * lo {
            (lo * hi).sqrt()
        } else {
            0.5 * (lo + hi)
        };
        if mid <= lo || mid >= hi {
            break;
        }
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The exact Clopper-Pearson `1 - alpha` confidence interval for a binomial rate from
/// `x` successes in `q` trials: `lo` solves `P(X >= x | lo) = alpha / 2` (0 when
/// `x = 0`), `hi` solves `P(X <= x | hi) = alpha / 2` (1 when `x = q`). Found by bisection
/// on the exact tails, to ~1e-13 relative.
///
/// `(NaN, NaN)` for `x > q` or `alpha` outside `(0, 1)`.
pub fn clopper_pearson(x: u64, q: u64, alpha: f64) -> (f64, f64) {
    if x > q || !(alpha > 0.0 && alpha < 1.0) {
        return (f64::NAN, f64::NAN);
    }
    let half = 0.5 * alpha;
    let lo = if x == 0 {
        0.0
    } else {
        bisect_prob(half, true, |p| upper_tail_pq(x, q, p, 1.0 - p))
    };
    let hi = if x == q {
        1.0
    } else {
        bisect_prob(half, false, |p| binomial_lower_tail(x, q, p))
    };
    (lo, hi)
}

/// Number of queries for the measured rate to lie within `rel * p` of a true rate `p`
/// with two-sided confidence `conf` (normal approximation, Python reference:
/// `queries_needed`): `ceil(z^2 (1 - p) / (rel^2 p))`.
///
/// E.g. `queries_needed(0.01, 0.05, 0.999) = 428_772`. Saturates at `u64::MAX` as
/// `p -> 0` and gives 0 for `p >= 1` or NaN arguments.
pub fn queries_needed(p: f64, rel: f64, conf: f64) -> u64 {
    let z = two_sided_z(conf);
    let q = (z * z * (1.0 - p) / (rel * rel * p)).ceil();
    // `as` saturates (and maps NaN to 0), which is the documented behaviour.
    q as u64
}

// ---------------------------------------------------------------------------------------
// The acceptance test
// ---------------------------------------------------------------------------------------

/// Outcome of [`fp_consistent`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FpCheck {
    /// Whether the measurement is consistent with the prediction.
    pub ok: bool,
    /// Measured rate `x / q`.
    pub rate: f64,
    /// Clopper-Pearson `1 - alpha` interval of the measured rate.
    pub ci: (f64, f64),
    /// Distance of the rate to the nearest edge of the tolerance band in standard
    /// deviations (0 inside the band); `None` when the exact interval decided instead
    /// (few false positives and no instance variance).
    pub z: Option<f64>,
    /// The critical value `z_{1 - alpha/2}`.
    pub zcrit: f64,
}

/// Is a measured false-positive count `x` out of `q` queries consistent with the rate
/// `p_theory`? The acceptance test of the Python reference `fp_consistent`, with its
/// exact semantics:
///
/// * the tolerance band is `[p (1 - rel_tol), p (1 + rel_tol)]` (`rel_tol` absorbs a
///   known model error; 0 for an exact prediction);
/// * for `x < 30` with `inst_sd == 0` the exact Clopper-Pearson `1 - alpha` interval
///   must intersect the band (`z` is `None`);
/// * otherwise `z` = distance from the rate to the nearest band edge (0 inside) divided
///   by `sqrt(p (1 - p) / q + inst_sd^2)`, and the check passes iff
///   `|z| <= z_{1 - alpha/2}`.
///
/// `inst_sd` is the filter-instance standard deviation of the realised FP (see
/// `bloomforge_core::math::*_instance_sd`) when `p_theory` is the layout's expected FP;
/// 0 when `p_theory` is the realised FP of the queried filter itself, in which case the
/// count is exactly Binomial(q, p_theory) and a false alarm has probability ~`alpha`.
///
/// Arguments outside their domain (`q == 0`, `x > q`, `alpha` not in `(0, 1)`, negative
/// `inst_sd`) give `ok == false`.
pub fn fp_consistent(
    x: u64,
    q: u64,
    p_theory: f64,
    alpha: f64,
    rel_tol: f64,
    inst_sd: f64,
) -> FpCheck {
    let rate = x as f64 / q as f64;
    let zcrit = two_sided_z(1.0 - alpha);
    let ci = clopper_pearson(x, q, alpha);
    let valid = q > 0
        && x <= q
        && alpha > 0.0
        && alpha < 1.0
        && p_theory.is_finite()
        && rel_tol.is_finite()
        && inst_sd >= 0.0
        && inst_sd.is_finite();
    if !valid {
        return FpCheck {
            ok: false,
            rate,
            ci,
            z: None,
            zcrit,
        };
    }
    let band_lo = p_theory * (1.0 - rel_tol);
    let band_hi = p_theory * (1.0 + rel_tol);
    if x < 30 && inst_sd == 0.0 {
        return FpCheck {
            ok: ci.1 >= band_lo && ci.0 <= band_hi,
            rate,
            ci,
            z: None,
            zcrit,
        };
    }
    let edge = if rate < band_lo {
        band_lo
    } else if rate > band_hi {
        band_hi
    } else {
        rate
    };
    let sd = (p_theory * (1.0 - p_theory) / q as f64 + inst_sd * inst_sd).sqrt();
    // Inside the band z is 0 even when sd is 0 (a certain rate measured exactly).
    let z = if edge == rate {
        0.0
    } else {
        (rate - edge) / sd
    };
    FpCheck {
        ok: z.abs() <= zcrit,
        rate,
        ci,
        z: Some(z),
        zcrit,
    }
}

#[cfg(test)]
// The expected values are printed by mpmath with 17 significant digits.
#[allow(clippy::excessive_precision)]
mod tests {
    //! Expected values computed with `mpmath` at 40-50 significant digits (binomial tails
    //! by direct summation of the pmf, quantiles and Clopper-Pearson limits by bisection),
    //! and Python's `statistics.NormalDist` for the reference's own `queries_needed`.
    use super::*;

    fn assert_rel(got: f64, want: f64, tol: f64, what: &str) {
        let err = if want == 0.0 {
            got.abs()
        } else {
            ((got - want) / want).abs()
        };
        assert!(
            err <= tol,
            "{what}: got {got:e}, want {want:e}, rel err {err:e}"
        );
    }

    #[test]
    fn erfc_matches_mpmath() {
        let cases = [
            (0.0, 1.0),
            (0.1, 8.875_370_839_817_150_5e-1),
            (0.5, 4.795_001_221_869_534_8e-1),
            (1.0, 1.572_992_070_502_851_3e-1),
            (1.2, 8.968_602_177_036_463_8e-2),
            (1.25, 7.709_987_174_354_177e-2),
            (1.3, 6.599_205_505_934_754_9e-2),
            (2.0, 4.677_734_981_047_266_2e-3),
            (3.5, 7.430_983_723_414_127_8e-7),
            (5.0, 1.537_459_794_428_035e-12),
            (10.0, 2.088_487_583_762_544_9e-45),
            (26.0, 5.663_192_408_856_143_2e-296),
            (-0.7, 1.677_801_193_837_418_4),
            (-3.0, 1.999_977_909_503_001_5),
        ];
        for (x, want) in cases {
            assert_rel(erfc(x), want, 1e-14, &format!("erfc({x})"));
        }
        assert_eq!(erfc(30.0), 0.0);
        assert_eq!(erfc(f64::NEG_INFINITY), 2.0);
        assert!(erfc(f64::NAN).is_nan());
    }

    #[test]
    fn normal_quantile_matches_mpmath() {
        let cases = [
            (1e-300, -3.704_709_629_936_120_1e1),
            (1e-20, -9.262_340_089_798_407),
            (1e-10, -6.361_340_902_404_056_6),
            (5e-7, -4.891_638_475_698_590_2),
            (0.001, -3.090_232_306_167_813_6),
            (0.024_25, -1.972_961_051_311_885),
            (0.025, -1.959_963_984_540_054_3),
            (0.3, -5.244_005_127_080_407_8e-1),
            (0.7, 5.244_005_127_080_407_8e-1),
            (0.975, 1.959_963_984_540_054_3),
            (0.999, 3.090_232_306_167_813_6),
        ];
        for (p, want) in cases {
            assert_rel(normal_quantile(p), want, 1e-13, &format!("quantile({p})"));
            // Round trip through the CDF.
            assert_rel(normal_cdf(want), p, 1e-12, &format!("cdf({want})"));
        }
        assert_eq!(normal_quantile(0.5), 0.0);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(1.5).is_nan() && normal_quantile(-0.1).is_nan());
        assert!(normal_quantile(f64::NAN).is_nan());
        // z_{1 - 1e-6 / 2}, the critical value of every FP test in this workspace.
        assert_rel(
            normal_upper_quantile(5e-7),
            4.891_638_475_698_590_2,
            1e-14,
            "upper",
        );
        assert_rel(
            two_sided_z(1.0 - 1e-6),
            4.891_638_475_698_590_2,
            1e-10,
            "z(1-1e-6)",
        );
        assert_rel(two_sided_z(0.95), 1.959_963_984_540_054, 1e-14, "z(0.95)");
        assert_rel(
            two_sided_z(0.999),
            3.290_526_731_491_925_5,
            1e-14,
            "z(0.999)",
        );
        assert_rel(normal_sf(4.891_638_475_698_590_2), 5e-7, 1e-13, "sf");
    }

    /// `(k, n, p, pmf, P(X <= k), P(X >= k))`.
    const BINOMIAL: [(u64, u64, f64, f64, f64, f64); 17] = [
        (0, 10, 0.3, 2.824_752_49e-2, 2.824_752_49e-2, 1.0),
        (
            3,
            10,
            0.3,
            2.668_279_32e-1,
            6.496_107_184e-1,
            6.172_172_136e-1,
        ),
        (7, 10, 0.3, 9.001_692e-3, 9.984_096_136e-1, 1.059_207_84e-2),
        (10, 10, 0.3, 5.9049e-6, 1.0, 5.9049e-6),
        (
            150,
            10_000,
            0.01,
            5.781_127_100_351_725e-7,
            9.999_989_210_525_137_6e-1,
            1.657_060_196_238_035_5e-6,
        ),
        (
            50,
            10_000,
            0.01,
            1.080_991_550_816_836_9e-8,
            2.112_239_932_632_381_4e-8,
            9.999_999_896_875_161_3e-1,
        ),
        (
            100,
            10_000,
            0.01,
            4.006_180_577_491_364_6e-2,
            5.265_625_340_581_589e-1,
            5.134_992_717_167_547e-1,
        ),
        (
            12_000,
            1_000_000,
            0.01,
            1.258_911_455_288_689_7e-85,
            1.0,
            7.459_607_850_494_796_8e-85,
        ),
        (
            10_500,
            1_000_000,
            0.01,
            1.575_289_547_793_472_9e-8,
            9.999_996_998_963_075_5e-1,
            3.158_565_879_247_228_4e-7,
        ),
        (
            9_700,
            1_000_000,
            0.01,
            4.127_921_783_716_937_3e-5,
            1.249_341_268_267_885_9e-3,
            9.987_919_379_495_693_3e-1,
        ),
        (
            1,
            1_000_000_000,
            1e-10,
            9.048_374_181_219_192e-2,
            9.953_211_598_436_273e-1,
            9.516_258_196_856_461e-2,
        ),
        (
            0,
            1_000_000_000,
            1e-10,
            9.048_374_180_314_354e-1,
            9.048_374_180_314_354e-1,
            1.0,
        ),
        (
            300,
            1_000_000_000,
            1e-7,
            1.215_458_528_135_242e-58,
            1.0,
            1.818_685_534_929_457_4e-58,
        ),
        (
            45,
            1_000_000_000,
            1e-7,
            3.109_848_994_773_861e-10,
            5.576_204_266_363_079e-10,
            9.999_999_997_533_645e-1,
        ),
        (
            5_000,
            10_000,
            0.5,
            7.978_646_139_382_154e-3,
            5.039_893_230_696_911e-1,
            5.039_893_230_696_911e-1,
        ),
        (
            9_990,
            10_000,
            0.999,
            1.251_726_366_502_389_2e-1,
            5.421_328_760_209_815e-1,
            5.830_397_606_292_574e-1,
        ),
        (
            20,
            1_000_000_000_000,
            1e-11,
            1.866_081_313_924_116_2e-3,
            9.984_117_393_382_352e-1,
            3.454_341_975_688_860_5e-3,
        ),
    ];

    #[test]
    fn binomial_matches_mpmath() {
        for (k, n, p, pmf, lower, upper) in BINOMIAL {
            let what = format!("k={k} n={n} p={p}");
            assert_rel(binomial_pmf(k, n, p), pmf, 1e-12, &format!("pmf {what}"));
            assert_rel(
                binomial_lower_tail(k, n, p),
                lower,
                1e-12,
                &format!("cdf {what}"),
            );
            assert_rel(
                binomial_upper_tail(k, n, p),
                upper,
                1e-12,
                &format!("sf {what}"),
            );
        }
    }

    #[test]
    fn tail_sum_agrees_with_continued_fraction() {
        // The two tail algorithms on the same (moderate) parameters, both tails.
        for (n, p) in [(1e9f64, 0.3f64), (1e8, 0.01), (5e4, 0.5), (1e6, 0.999)] {
            let q = 1.0 - p;
            let (mean, sd) = (n * p, (n * p * q).sqrt());
            for t in [0.5, 2.0, 5.0, 20.0] {
                let k = (mean + t * sd).ceil().min(n);
                let sum = tail_sum(k, n, p, q, true);
                let cf = pmf_pq(k, n, p, q) * q * betacf(k, n - k + 1.0, p);
                assert_rel(sum, cf, 1e-10, &format!("upper n={n} p={p} t={t}"));
                let k = (mean - t * sd).floor().max(0.0);
                let sum = tail_sum(k, n, p, q, false);
                let cf = pmf_pq(k, n, p, q) * p * betacf(n - k, k + 1.0, q);
                // x = q in the fraction: ~eps / p relative.
                assert_rel(
                    sum,
                    cf,
                    1e-10 + 1e-14 / p,
                    &format!("lower n={n} p={p} t={t}"),
                );
            }
        }
    }

    #[test]
    fn huge_n_uses_the_continued_fraction() {
        // sd = 5e5: beyond the summation limit. For p = 1/2 the skewness vanishes and the
        // continuity-corrected normal approximation errs by O(1/n) = 1e-12.
        let n = 1_000_000_000_000u64;
        let sd = 5e5;
        for t in [0.3, 1.0, 3.0, 6.0] {
            let k = n / 2 + (t * sd) as u64;
            let approx = normal_sf((k as f64 - 0.5 - 5e11) / sd);
            assert_rel(
                binomial_upper_tail(k, n, 0.5),
                approx,
                1e-8,
                &format!("t={t}"),
            );
            let k = n / 2 - (t * sd) as u64;
            let approx = normal_cdf((k as f64 + 0.5 - 5e11) / sd);
            assert_rel(
                binomial_lower_tail(k, n, 0.5),
                approx,
                1e-8,
                &format!("t={t}"),
            );
        }
    }

    #[test]
    fn binomial_edges() {
        assert_eq!(binomial_upper_tail(0, 5, 0.3), 1.0);
        assert_eq!(binomial_upper_tail(6, 5, 0.3), 0.0);
        assert_eq!(binomial_lower_tail(5, 5, 0.3), 1.0);
        assert_eq!(binomial_upper_tail(1, 5, 0.0), 0.0);
        assert_eq!(binomial_lower_tail(4, 5, 1.0), 0.0);
        assert_eq!(binomial_pmf(0, 0, 0.3), 1.0);
        assert_eq!(binomial_pmf(6, 5, 0.3), 0.0);
        assert!(binomial_pmf(1, 5, 1.5).is_nan());
        assert!(binomial_upper_tail(1, 5, f64::NAN).is_nan());
        // Tails and pmf agree: P(X <= k) + P(X >= k + 1) = 1 and P(X>=k) - P(X>=k+1) = pmf.
        for (k, n, p) in [
            (3u64, 10u64, 0.3),
            (101, 10_000, 0.01),
            (9_950, 1_000_000, 0.01),
        ] {
            let (lo, up) = (
                binomial_lower_tail(k, n, p),
                binomial_upper_tail(k + 1, n, p),
            );
            assert!((lo + up - 1.0).abs() < 1e-14);
            let d = binomial_upper_tail(k, n, p) - up;
            assert_rel(d, binomial_pmf(k, n, p), 1e-10, "tail difference");
        }
    }

    #[test]
    fn binomial_tests() {
        // 150 FPs where 100 are expected in 10_000 queries at 1 %: p = 2 P(X >= 150).
        assert_rel(
            binomial_test_two_sided(150, 10_000, 0.01),
            2.0 * 1.657_060_196_238_035_5e-6,
            1e-12,
            "two-sided",
        );
        assert_eq!(binomial_test_two_sided(100, 10_000, 0.01), 1.0);
        assert_rel(
            binomial_test_greater(150, 10_000, 0.01),
            1.657_060_196_238_035_5e-6,
            1e-12,
            "greater",
        );
        assert_eq!(binomial_test_two_sided(11, 10, 0.5), 0.0);
    }

    #[test]
    fn clopper_pearson_matches_mpmath() {
        let cases = [
            (0, 100, 0.05, 0.0, 3.621_669_264_517_642e-2),
            (
                5,
                100,
                0.05,
                1.643_187_918_205_215_8e-2,
                1.128_349_111_054_627_6e-1,
            ),
            (100, 100, 0.05, 9.637_833_073_548_235e-1, 1.0),
            (
                1,
                1_000_000_000,
                1e-6,
                5.000_001_250_000_415e-16,
                1.742_221_486_947_503_3e-8,
            ),
            (
                29,
                1_000_000,
                1e-6,
                9.785_572_383_984_977e-6,
                6.478_528_487_932_435e-5,
            ),
            (
                3_000,
                100_000,
                1e-6,
                2.743_256_437_924_414_6e-2,
                3.272_091_962_120_325_7e-2,
            ),
            (
                12,
                50,
                1e-6,
                4.007_062_581_657_772e-2,
                5.907_077_801_349_966e-1,
            ),
        ];
        for (x, q, alpha, lo, hi) in cases {
            let (l, h) = clopper_pearson(x, q, alpha);
            assert_rel(l, lo, 1e-11, &format!("lo {x}/{q}"));
            assert_rel(h, hi, 1e-11, &format!("hi {x}/{q}"));
        }
        let (l, h) = clopper_pearson(11, 10, 0.05);
        assert!(l.is_nan() && h.is_nan());
        assert!(clopper_pearson(1, 10, 0.0).0.is_nan());
    }

    #[test]
    fn queries_needed_matches_reference() {
        // Values of fp_theory.queries_needed.
        assert_eq!(queries_needed(0.01, 0.05, 0.999), 428_772);
        assert_eq!(queries_needed(1e-4, 0.05, 0.999), 43_305_934);
        assert_eq!(queries_needed(0.1, 0.02, 0.99), 149_286);
        assert_eq!(queries_needed(1e-3, 0.1, 1.0 - 1e-6), 2_390_420);
        assert_eq!(queries_needed(0.0, 0.05, 0.999), u64::MAX);
        assert_eq!(queries_needed(f64::NAN, 0.05, 0.999), 0);
    }

    #[test]
    fn fp_consistent_semantics() {
        let zcrit = 4.891_638_475_698_590_2;
        // Few FPs: the exact interval decides. CI(5/100, 95 %) = [0.0164, 0.1128].
        let c = fp_consistent(5, 100, 0.05, 0.05, 0.0, 0.0);
        assert!(c.ok && c.z.is_none() && c.rate == 0.05);
        assert_rel(c.ci.0, 1.643_187_918_205_215_8e-2, 1e-11, "ci");
        assert!(!fp_consistent(5, 100, 0.2, 0.05, 0.0, 0.0).ok);
        assert!(!fp_consistent(5, 100, 0.01, 0.05, 0.0, 0.0).ok);
        // ... but a tolerance band that reaches the interval passes.
        assert!(fp_consistent(5, 100, 0.01, 0.05, 0.7, 0.0).ok);
        // Zero FPs in 1e6: the 1 - 1e-6 interval is [0, 1.4509e-5].
        assert!(fp_consistent(0, 1_000_000, 1e-5, 1e-6, 0.0, 0.0).ok);
        assert!(!fp_consistent(0, 1_000_000, 2e-5, 1e-6, 0.0, 0.0).ok);
        // Many FPs: z against sqrt(p(1-p)/Q).
        let c = fp_consistent(10_130, 1_000_000, 0.01, 1e-6, 0.0, 0.0);
        assert!(c.ok);
        assert_rel(
            c.z.unwrap(),
            0.000_13 / (0.01f64 * 0.99 / 1e6).sqrt(),
            1e-9,
            "z",
        );
        assert_rel(c.zcrit, zcrit, 1e-10, "zcrit");
        // Band edge: 1.1 % against 1 % +- 5 % is 0.05 % above the edge = 5.03 sd.
        let c = fp_consistent(11_000, 1_000_000, 0.01, 1e-6, 0.05, 0.0);
        assert!(!c.ok);
        assert_rel(
            c.z.unwrap(),
            0.0005 / (0.01f64 * 0.99 / 1e6).sqrt(),
            1e-9,
            "z",
        );
        assert!(fp_consistent(10_900, 1_000_000, 0.01, 1e-6, 0.05, 0.0).ok);
        // Inside the band z is 0.
        assert_eq!(
            fp_consistent(10_200, 1_000_000, 0.01, 1e-6, 0.05, 0.0).z,
            Some(0.0)
        );
        // Below the band z is negative.
        assert!(
            fp_consistent(9_000, 1_000_000, 0.01, 1e-6, 0.0, 0.0)
                .z
                .unwrap()
                < -zcrit
        );
        // Instance variance widens the test and forces the z path even for few FPs.
        let c = fp_consistent(11_000, 1_000_000, 0.01, 1e-6, 0.0, 2e-4);
        assert!(c.ok);
        assert_rel(c.z.unwrap(), 0.001 / (9.9e-9f64 + 4e-8).sqrt(), 1e-9, "z");
        assert!(fp_consistent(3, 1_000, 0.01, 1e-6, 0.0, 1e-3).z.is_some());
        // A certain rate measured exactly.
        assert!(fp_consistent(40, 40, 1.0, 1e-6, 0.0, 0.0).ok);
        // Bad arguments fail instead of panicking.
        assert!(!fp_consistent(1, 0, 0.5, 1e-6, 0.0, 0.0).ok);
        assert!(!fp_consistent(5, 4, 0.5, 1e-6, 0.0, 0.0).ok);
        assert!(!fp_consistent(5, 40, 0.5, 0.0, 0.0, 0.0).ok);
        assert!(!fp_consistent(5, 40, 0.5, 1e-6, 0.0, -1.0).ok);
    }

    #[test]
    fn coverage_exact_is_a_probability() {
        // Q = queries_needed(p, 5 %, 99.9 %) gives ~99.9 % coverage (normal approximation).
        let q = queries_needed(0.01, 0.05, 0.999);
        let cov = coverage_exact(q, 0.01, 0.05);
        assert!((0.998..0.9995).contains(&cov), "{cov}");
        // As the reference: no queries, the empty rate counts as within the band.
        assert_eq!(coverage_exact(0, 0.01, 0.05), 1.0);
    }
}
