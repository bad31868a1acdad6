//! Sizing and false-positive theory of the counting layouts.
//!
//! A counting filter answers a query from which counters are non-zero, and a counter is
//! non-zero exactly where the plain filter with one bit per counter would have its bit set
//! (duplicate probes merge in both). So its false-positive rate is the plain layout's with
//! `m` = number of counters: core's blocked theory with `B = 128` counters per line
//! (probes with replacement) for [`CounterLayout::Blocked`](crate::CounterLayout), the
//! standard formula for [`CounterLayout::Standard`](crate::CounterLayout).

use bloomforge_core::math::{
    block_inner_fp_cached, blocked_fp_cached, poisson_pmf_window, solve_bits_per_key,
    std_bits_per_key,
};

/// Largest `k` the blocked sizing considers.
pub const SIZING_MAX_K: u32 = 24;
/// Tail mass left out of a load mixture.
const MIX_EPS: f64 = 1e-15;

/// The conditional FP table of a 128-counter line for `k` probes (core's process-wide
/// cache, shared with its 512-bit blocks).
fn line_table(k: u32, imax: usize) -> Vec<f64> {
    block_inner_fp_cached(128, k, imax)
}

/// False-positive rate of the blocked counting layout at `c` counters per key with `k`
/// probes: `bloomforge_core::math::blocked_fp(c, 128, k, ProbeModel::Replace)`, with the
/// conditional tables cached (`k <= 24`; larger `k` is computed directly).
pub fn blocked_fp(c: f64, k: u32) -> f64 {
    blocked_fp_cached(c, 128, k)
}

/// The best `k <= 24` and its FP at `c` counters per key. Small blocks want far fewer
/// probes than `c ln 2` (at 20 counters per key the best `k` is 8, not 14). The FP is
/// unimodal in `k`, so climb from `k = 1` until it rises: this touches only the cheap
/// tables of small `k` (a table costs `O(k)`), and the load window is computed once.
fn blocked_best(c: f64) -> (u32, f64) {
    let w = poisson_pmf_window(128.0 / c, MIX_EPS);
    let fp_k = |k: u32| -> f64 {
        let table = line_table(k, w.len() - 1);
        w.iter().zip(&table).map(|(p, f)| p * f).sum()
    };
    let mut best = (1, fp_k(1));
    for k in 2..=SIZING_MAX_K {
        let fp = fp_k(k);
        if fp >= best.1 {
            break;
        }
        best = (k, fp);
    }
    best
}

/// `(counters per key, k)` for the blocked counting layout to reach false-positive rate
/// `p`: the smallest `c` (to 1e-9 relative) at which some `k <= 24` reaches `p` under the
/// exact blocked model with 128-counter lines. At `p = 0.01` that is 10.85 counters
/// (5.4 bytes) per key with `k = 6`, against 9.92 bits per key for core's 512-bit blocks
/// and 9.59 for the standard formula. Targets below what 256 counters per key reach
/// return 256.
pub fn blocked_size(p: f64) -> (f64, u32) {
    let c = solve_bits_per_key(p, std_bits_per_key(p), |c| blocked_best(c).1);
    (c, blocked_best(c).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_fp_matches_core() {
        for &(c, k) in &[(8.0, 5), (11.0, 7), (16.0, 10), (30.0, 20)] {
            let a = blocked_fp(c, k);
            let b = bloomforge_core::math::blocked_fp(
                c,
                128,
                k,
                bloomforge_core::math::ProbeModel::Replace,
            );
            assert!((a - b).abs() <= 1e-12 * b, "c={c} k={k}: {a} vs {b}");
        }
    }

    #[test]
    fn sizing_meets_target_and_needs_more_than_512_bit_blocks() {
        for &p in &[0.1, 0.01, 1e-3, 1e-4] {
            let (c, k) = blocked_size(p);
            assert!(blocked_fp(c, k) <= p * (1.0 + 1e-9), "p={p}");
            // A smaller c misses the target with every k.
            assert!(blocked_best(c * 0.999).1 > p, "p={p}");
            // The climb finds the global best k.
            let all = bloomforge_core::math::best_k(|k| blocked_fp(c, k), SIZING_MAX_K);
            assert_eq!(blocked_best(c), all, "p={p}");
            let (c512, _) = bloomforge_core::math::blocked512_size(p);
            assert!(c > c512, "p={p}: {c} vs {c512}");
        }
        // The figures quoted in `blocked_size`'s documentation.
        let (c, k) = blocked_size(0.01);
        assert!((c - 10.85).abs() < 0.005 && k == 6, "{c} {k}");
    }

    #[test]
    fn sizing_covers_a_range_of_targets() {
        // 49 sizings, including the first-call table builds: each meets its target.
        for i in 1..50 {
            let p = 0.5 / f64::from(i);
            let (c, k) = blocked_size(p);
            assert!((1..=crate::layout::MAX_HASHES).contains(&k), "{p}: {c} {k}");
            assert!(blocked_fp(c, k) <= p * (1.0 + 1e-9), "{p}: {c} {k}");
        }
    }
}
