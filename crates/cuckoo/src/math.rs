//! False-positive theory and sizing of cuckoo filters (Fan et al., CoNEXT 2014, §4-5).
//!
//! A negative query compares its `f`-bit fingerprint with the `2 b` slots of its two
//! buckets. Fingerprints take the values `1..2^f` (0 marks an empty slot), so one occupied
//! slot matches with probability `q = 1 / (2^f - 1)`. At load `α` (occupied / total slots)
//! the two buckets hold `2 b α` fingerprints on average, and
//!
//! - the paper's bound: `FP <= 2 b / 2^f` (full table, union bound), here `2 b α q`
//!   ([`fp_union_bound`]);
//! - the expectation with independent slots: `1 - (1 - q)^(2 b α)` ([`fp_exact`]).
//!
//! Bits per key are `f / α`; the load reached before the first failure is about 84 % at
//! `b = 2`, 95 % at `b = 4` and 98 % at `b = 8` (the paper's figures, checked by this
//! crate's tests at `b = 4`), so sizing aims a little below them ([`default_target_load`]).

/// Probability that one occupied slot matches a random fingerprint of `bits` bits:
/// `1 / (2^bits - 1)` (the value 0 is reserved for empty slots).
pub fn slot_match_probability(bits: u32) -> f64 {
    1.0 / ((1u64 << bits) as f64 - 1.0)
}

/// The union bound `2 b α / (2^f - 1)`: at `load = 1` the paper's `2 b / 2^f` (with the
/// empty value excluded). Never below the true rate.
pub fn fp_union_bound(bucket_size: u32, bits: u32, load: f64) -> f64 {
    (2.0 * f64::from(bucket_size) * load * slot_match_probability(bits)).min(1.0)
}

/// The expected false-positive rate at `load`: `1 - (1 - q)^(2 b α)` with
/// `q = 1 / (2^f - 1)`.
pub fn fp_exact(bucket_size: u32, bits: u32, load: f64) -> f64 {
    let q = slot_match_probability(bits);
    let slots = 2.0 * f64::from(bucket_size) * load;
    -(slots * (-q).ln_1p()).exp_m1()
}

/// The load the sizing aims at for `bucket_size` slots per bucket: 0.80 at 2 slots, 0.94 at
/// 4, 0.97 at 8 (a point below the paper's 84 / 95 / 98 % first-failure loads, so a filter
/// sized for `n` keys takes them; the stash absorbs the rare early failure).
pub fn default_target_load(bucket_size: u32) -> f64 {
    match bucket_size {
        2 => 0.80,
        8 => 0.97,
        _ => 0.94,
    }
}

/// Buckets needed for `items` keys at `load` with `bucket_size` slots:
/// `ceil(items / (b α))`, at least 1; `None` if it overflows `u64`.
pub fn buckets_for(items: u64, bucket_size: u32, load: f64) -> Option<u64> {
    let buckets = (items as f64 / (f64::from(bucket_size) * load)).ceil();
    if !buckets.is_finite() || buckets >= u64::MAX as f64 {
        return None;
    }
    Some((buckets as u64).max(1))
}

/// Bits per key of a table of `bits`-bit fingerprints at `load`: `f / α`.
pub fn bits_per_key(bits: u32, load: f64) -> f64 {
    f64::from(bits) / load
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_order_and_paper_figures() {
        for b in [2, 4, 8] {
            for f in [8, 12, 16] {
                // (At fewer than one slot, 2 b α < 1, the exponent is fractional and the
                // formula exceeds the bound: not a load a query sees in practice.)
                for load in [0.25, 0.5, 0.95, 1.0] {
                    let exact = fp_exact(b, f, load);
                    let bound = fp_union_bound(b, f, load);
                    assert!(exact <= bound && exact > 0.0, "b={b} f={f} load={load}");
                    // The union bound overshoots by at most its square over two.
                    assert!(bound - exact <= bound * bound / 2.0 + 1e-15);
                }
            }
        }
        // The paper's 2b/2^f at full load: 8/256 for b = 4, f = 8.
        assert!((fp_union_bound(4, 8, 1.0) - 8.0 / 255.0).abs() < 1e-12);
        assert_eq!(buckets_for(1000, 4, 0.94), Some(266));
        assert_eq!(buckets_for(0, 4, 0.94), Some(1));
        assert!((bits_per_key(12, 0.95) - 12.631_578_947).abs() < 1e-6);
    }
}
