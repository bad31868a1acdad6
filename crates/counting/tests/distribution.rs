//! Counter-value distribution against its Poisson / binomial law.

use bloomforge_counting::{CountingBloomFilter, COUNTER_MAX};
use bloomforge_testkit::stats::{bernstein_halfwidth, binomial_upper_tail};

/// False-alarm probability of each check.
const ALPHA: f64 = 1e-6;

/// `P(X >= 4)` for `X ~ Binomial(n, q)`.
fn binomial_at_least_4(n: u64, q: f64) -> f64 {
    binomial_upper_tail(4, n, q)
}

/// Blocked layout: a key picks its line with probability `1/L` and then hits a given
/// counter of it with probability `d/128`, `d = 128 (1 - (1 - 1/128)^k)` its expected
/// number of distinct counters. Keys are independent, so under ideal hashing every counter
/// is exactly Binomial(n, d / m) (Poisson(n d / m) in the limit; `n k / m` overstates the
/// mean by the ~2-3 % of duplicate probes that count once).
///
/// Tolerance: the fraction of counters >= 4 is the mean over the L lines of `Y_b / 128`,
/// `Y_b` the line's count of such counters. Line contents are negatively associated (fixed
/// total of keys), each term lies in [0, 1/L] and has variance at most
/// `E[(Y_b/128)^2] / L^2 <= mu / L^2`, so Bernstein's inequality bounds the deviation at
/// false-alarm probability ALPHA.
#[test]
fn blocked_counters_follow_binomial() {
    let lines = 1u64 << 15;
    let k = 6;
    let mut f = CountingBloomFilter::with_num_counters(lines * 128)
        .seed(21)
        .hashes(k)
        .unwrap();
    let d = 128.0 * (1.0 - (1.0 - 1.0 / 128.0f64).powi(k as i32));
    let m = f.num_counters();
    // Mean counter value 1.5.
    let n = (1.5 * m as f64 / d) as u64;
    let keys: Vec<u64> = (0..n)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    f.insert_batch(&keys);
    let hist = f.counter_histogram();
    assert_eq!(hist.iter().sum::<u64>(), m);
    let observed = hist[4..].iter().sum::<u64>() as f64 / m as f64;
    let mu = binomial_at_least_4(n, d / m as f64);
    let l = lines as f64;
    let t = bernstein_halfwidth(mu / l, 1.0 / l, ALPHA);
    assert!(
        (observed - mu).abs() <= t,
        "P(counter >= 4): observed {observed}, theory {mu}, tolerance {t}"
    );
    // Sanity: the tolerance is a real check (well under the value itself).
    assert!(t < 0.2 * mu, "t = {t}, mu = {mu}");
    // Mean counter value n d / m.
    let sum: u64 = hist.iter().enumerate().map(|(v, &c)| v as u64 * c).sum();
    assert_eq!(sum, f.counter_sum());
    assert!(hist[COUNTER_MAX as usize] < m / 1_000_000 + 10);
    let est = f.estimated_len();
    assert!(
        (est / n as f64 - 1.0).abs() < 0.01,
        "estimated_len {est} vs {n}"
    );
}

/// Standard layout: counter `i` is hit by a key with probability ~`k / m` (its probes are
/// almost always distinct), so counters are ~Binomial(n, k/m). Counter indicators are
/// negatively associated (balls into bins), each term `1{c_i >= 4} / m` lies in [0, 1/m]
/// with variance at most `mu / m^2`: Bernstein as above.
#[test]
fn standard_counters_follow_binomial() {
    let m = 1u64 << 21;
    let k = 6;
    let mut f = CountingBloomFilter::standard_with_num_counters(m)
        .seed(22)
        .hashes(k)
        .unwrap();
    let n = (1.5 * m as f64 / f64::from(k)) as u64;
    // Consecutive integers: the counter distribution must not depend on key structure.
    let keys: Vec<u64> = (0..n).collect();
    f.insert_batch(&keys);
    let hist = f.counter_histogram();
    assert_eq!(hist.iter().sum::<u64>(), m);
    let observed = hist[4..].iter().sum::<u64>() as f64 / m as f64;
    let mu = binomial_at_least_4(n, f64::from(k) / m as f64);
    let t = bernstein_halfwidth(mu / m as f64, 1.0 / m as f64, ALPHA);
    assert!(
        (observed - mu).abs() <= t,
        "P(counter >= 4): observed {observed}, theory {mu}, tolerance {t}"
    );
}
