//! Word-parallel (SWAR) operations on sixteen 4-bit counters packed in a `u64`, and the
//! compare-exchange protocol the atomic filter runs on one word.
//!
//! Counter `i` of a word is bits `4i..4i + 4`. A *nibble mask* has bit `4i` set for every
//! counter `i` an operation targets (so it is a subset of [`LOW_BITS`]); building masks
//! with `|` merges duplicate probes of one key into a single target.

/// Bit 0 of every nibble: the nibble mask of all sixteen counters.
pub(crate) const LOW_BITS: u64 = 0x1111_1111_1111_1111;
/// Bits 0..3 of every nibble.
const LOW3_BITS: u64 = 0x7777_7777_7777_7777;
/// Bit 3 of every nibble.
const HIGH_BITS: u64 = 0x8888_8888_8888_8888;

/// The largest value of a counter; a counter that reaches it is *saturated* and sticks.
pub const COUNTER_MAX: u32 = 15;

/// Nibble mask of the counters of `w` that are not zero.
#[inline(always)]
pub(crate) const fn nonzero(w: u64) -> u64 {
    (w | (w >> 1) | (w >> 2) | (w >> 3)) & LOW_BITS
}

/// Nibble mask of the counters of `w` that are saturated (equal to 15).
#[inline(always)]
pub(crate) const fn saturated(w: u64) -> u64 {
    w & (w >> 1) & (w >> 2) & (w >> 3) & LOW_BITS
}

/// `w` with every targeted counter below 15 incremented (saturated ones stay at 15). No
/// carry crosses a nibble: every incremented nibble is at most 14 before.
#[inline(always)]
pub(crate) const fn increment(w: u64, mask: u64) -> u64 {
    w + (mask & !saturated(w))
}

/// `w` with every targeted counter that is neither 0 nor saturated decremented. No borrow
/// crosses a nibble: every decremented nibble is at least 1 before.
#[inline(always)]
pub(crate) const fn decrement(w: u64, mask: u64) -> u64 {
    w - (mask & !saturated(w) & nonzero(w))
}

/// Counter-wise saturating sum of two words.
#[inline(always)]
pub(crate) const fn saturating_add(a: u64, b: u64) -> u64 {
    // Add the low three bits of each nibble (at most 7 + 7 = 14: no carry out of a
    // nibble), then add the two top bits: the nibble overflows when at least two of
    // (a's top bit, b's top bit, the low sum's top bit) are set.
    let low = (a & LOW3_BITS) + (b & LOW3_BITS);
    let (ha, hb) = (a & HIGH_BITS, b & HIGH_BITS);
    let carry = ((ha & hb) | ((ha | hb) & low)) & HIGH_BITS;
    let sum = (low & LOW3_BITS) | ((ha ^ hb ^ low) & HIGH_BITS);
    sum | ((carry >> 3) * 0xF)
}

/// Value of counter `i` (0..16) of `w`.
#[inline(always)]
pub(crate) const fn get(w: u64, i: u32) -> u32 {
    ((w >> (4 * i)) & 0xF) as u32
}

/// Value of the counter at bit `shift` (a multiple of 4) of `w`.
#[inline(always)]
pub(crate) const fn get_at(w: u64, shift: u32) -> u32 {
    ((w >> shift) & 0xF) as u32
}

/// The nibble mask of counter `i` (0..16).
#[cfg(test)]
#[inline(always)]
pub(crate) const fn bit(i: u32) -> u64 {
    1u64 << (4 * i)
}

/// The smallest counter of `w` among those in `mask` (16 if `mask` is empty).
#[inline(always)]
pub(crate) fn min_of(w: u64, mut mask: u64) -> u32 {
    let mut min = 16;
    while mask != 0 {
        let i = mask.trailing_zeros() / 4;
        min = min.min(get(w, i));
        mask &= mask - 1;
    }
    min
}

/// The operations the word protocol needs from an atomic `u64`: implemented for the std
/// atomic (the filter) and for loom's (the model test), so the model checks the very code
/// the filter runs.
pub(crate) trait AtomicWord {
    /// Relaxed load.
    fn load_relaxed(&self) -> u64;
    /// Weak compare-exchange, relaxed on success and failure.
    fn cas_relaxed(&self, current: u64, new: u64) -> Result<u64, u64>;
}

impl AtomicWord for core::sync::atomic::AtomicU64 {
    #[inline(always)]
    fn load_relaxed(&self) -> u64 {
        self.load(core::sync::atomic::Ordering::Relaxed)
    }
    #[inline(always)]
    fn cas_relaxed(&self, current: u64, new: u64) -> Result<u64, u64> {
        use core::sync::atomic::Ordering::Relaxed;
        self.compare_exchange_weak(current, new, Relaxed, Relaxed)
    }
}

#[cfg(loom)]
impl AtomicWord for loom::sync::atomic::AtomicU64 {
    fn load_relaxed(&self) -> u64 {
        self.load(loom::sync::atomic::Ordering::Relaxed)
    }
    fn cas_relaxed(&self, current: u64, new: u64) -> Result<u64, u64> {
        use loom::sync::atomic::Ordering::Relaxed;
        self.compare_exchange_weak(current, new, Relaxed, Relaxed)
    }
}

/// Atomically increments the targeted counters of `word` that are below 15 (one
/// compare-exchange of the whole word, retried while other threads change it). Returns the
/// word's value just before the update took effect.
///
/// Every retry recomputes the new value from the freshly observed one, so an increment is
/// never lost and a counter never passes 15 (the saturation test and the add act on the
/// same observed value, and the exchange succeeds only if the word still holds it).
#[inline(always)]
pub(crate) fn atomic_increment<A: AtomicWord>(word: &A, mask: u64) -> u64 {
    let mut current = word.load_relaxed();
    loop {
        let new = increment(current, mask);
        if new == current {
            // Every targeted counter is saturated: nothing to write.
            return current;
        }
        match word.cas_relaxed(current, new) {
            Ok(_) => return current,
            Err(actual) => current = actual,
        }
    }
}

/// Atomically decrements the targeted counters of `word` that are neither 0 nor saturated.
/// Returns the nibble mask of targeted counters that were found at 0 in the value the
/// update acted on, i.e. decrements that were skipped (non-zero only when a racing remove
/// took the counter to 0 after the caller checked it).
///
/// Never underflows: a counter is decremented only if the exchanged value shows it at 1 or
/// more, and the exchange succeeds only if the word still holds that value.
#[cfg(test)]
#[inline(always)]
pub(crate) fn atomic_decrement<A: AtomicWord>(word: &A, mask: u64) -> u64 {
    atomic_decrement_report(word, mask).0
}

/// [`atomic_decrement`], also returning the nibble mask of the targeted counters that
/// were saturated (and so left at 15) in the value the update applied to.
#[inline(always)]
pub(crate) fn atomic_decrement_report<A: AtomicWord>(word: &A, mask: u64) -> (u64, u64) {
    let mut current = word.load_relaxed();
    loop {
        let new = decrement(current, mask);
        let report = (mask & !nonzero(current), mask & saturated(current));
        if new == current {
            return report;
        }
        match word.cas_relaxed(current, new) {
            Ok(_) => return report,
            Err(actual) => current = actual,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counters(w: u64) -> [u32; 16] {
        core::array::from_fn(|i| get(w, i as u32))
    }

    proptest! {
        #[test]
        fn swar_matches_scalar(a: u64, b: u64, m in any::<u64>().prop_map(|m| m & LOW_BITS)) {
            let (ca, cb) = (counters(a), counters(b));
            let inc = counters(increment(a, m));
            let dec = counters(decrement(a, m));
            let sum = counters(saturating_add(a, b));
            for i in 0..16u32 {
                let t = m & bit(i) != 0;
                let v = ca[i as usize];
                prop_assert_eq!(inc[i as usize], if t && v < 15 { v + 1 } else { v });
                prop_assert_eq!(dec[i as usize], if t && v > 0 && v < 15 { v - 1 } else { v });
                prop_assert_eq!(sum[i as usize], (v + cb[i as usize]).min(15));
                prop_assert_eq!(nonzero(a) & bit(i) != 0, v != 0);
                prop_assert_eq!(saturated(a) & bit(i) != 0, v == 15);
            }
            let expect_min = (0..16u32).filter(|&i| m & bit(i) != 0).map(|i| ca[i as usize]).min();
            prop_assert_eq!(min_of(a, m), expect_min.unwrap_or(16));
        }
    }

    #[test]
    fn atomic_protocol_sequential() {
        use core::sync::atomic::AtomicU64;
        let w = AtomicU64::new(0);
        let m = bit(0) | bit(5);
        for _ in 0..20 {
            atomic_increment(&w, m);
        }
        assert_eq!(w.load_relaxed(), 15 | (15 << 20));
        let w = AtomicU64::new(1 | (2 << 20));
        assert_eq!(atomic_decrement(&w, m), 0);
        assert_eq!(w.load_relaxed(), 1 << 20);
        assert_eq!(atomic_decrement(&w, m), bit(0));
        assert_eq!(w.load_relaxed(), 0);
    }
}

/// Model checks of the one-word compare-exchange protocol with loom (every interleaving of
/// the threads, weak compare-exchange failures included). Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p bloomforge-counting --features loom --release loom`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::AtomicU64;
    use loom::sync::Arc;
    use loom::thread;

    /// Two inserts and one remove of keys whose inserts happened before: the result is the
    /// sequential one whatever the interleaving, and no decrement is skipped.
    #[test]
    fn concurrent_increments_and_covered_decrement() {
        loom::model(|| {
            // Counter 0 holds 1 (an earlier insert of key A); counter 1 holds 14.
            let word = Arc::new(AtomicU64::new(1 | (14 << 4)));
            let w1 = Arc::clone(&word);
            let t1 = thread::spawn(move || {
                atomic_increment(&*w1, bit(0) | bit(1));
            });
            let w2 = Arc::clone(&word);
            let t2 = thread::spawn(move || {
                atomic_increment(&*w2, bit(1) | bit(2));
            });
            // Removing A (inserted before): never skipped.
            let skipped = atomic_decrement(&*word, bit(0));
            assert_eq!(skipped, 0);
            t1.join().unwrap();
            t2.join().unwrap();
            let v = word.load_relaxed();
            // Counter 0: 1 + 1 - 1 = 1; counter 1: 14 + 2 saturates at 15; counter 2: 1.
            assert_eq!(v, 1 | (15 << 4) | (1 << 8));
        });
    }

    /// Two removes racing for a counter at 1 (one of them uncovered): exactly one
    /// decrement lands, the other is reported skipped, and the counter never wraps.
    #[test]
    fn racing_decrements_never_underflow() {
        loom::model(|| {
            let word = Arc::new(AtomicU64::new(1 | (2 << 4)));
            let w1 = Arc::clone(&word);
            let t1 = thread::spawn(move || atomic_decrement(&*w1, bit(0) | bit(1)));
            let s2 = atomic_decrement(&*word, bit(0) | bit(1));
            let s1 = t1.join().unwrap();
            assert_eq!(s1 | s2, bit(0));
            assert_eq!(s1 & s2, 0);
            assert_eq!(word.load_relaxed(), 0);
        });
    }

    /// An increment racing with a decrement of a saturated counter: saturation is sticky.
    #[test]
    fn saturated_counter_is_sticky() {
        loom::model(|| {
            let word = Arc::new(AtomicU64::new(14));
            let w1 = Arc::clone(&word);
            let t1 = thread::spawn(move || {
                atomic_increment(&*w1, bit(0));
            });
            atomic_decrement(&*word, bit(0));
            t1.join().unwrap();
            // Either 14 -> 13 -> 14, or 14 -> 15 (saturated) and the decrement is ignored.
            let v = word.load_relaxed();
            assert!(v == 14 || v == 15, "v = {v}");
        });
    }
}
