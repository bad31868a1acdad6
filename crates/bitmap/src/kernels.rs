//! Word-array kernels (popcount, in-place boolean algebra, the 2-bitmap merge) and their
//! dispatch through core's [`Backend`].
//!
//! Each kernel is written once as a plain loop over `u64` words ([`scalar`], the oracle)
//! and compiled again inside `#[target_feature]` functions (AVX2, AVX-512 with
//! `VPOPCNTDQ`), where the same loop auto-vectorises to 256- or 512-bit instructions. The
//! `Wide` backend runs the portable loop (SSE2 auto-vectorised at the baseline target).

use bloomforge_core::Backend;
use core::sync::atomic::{AtomicU64, Ordering};

/// Bit pattern of the low bit of every 2-bit field.
pub(crate) const LOW: u64 = 0x5555_5555_5555_5555;

/// The binary word operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Or,
    And,
    AndNot,
    Xor,
    /// The 2-bitmap state sum (never + x = x, once + once = many, many + x = many).
    Merge2,
}

#[inline(always)]
fn apply(op: Op, a: u64, b: u64) -> u64 {
    match op {
        Op::Or => a | b,
        Op::And => a & b,
        Op::AndNot => a & !b,
        Op::Xor => a ^ b,
        Op::Merge2 => merge2(a, b),
    }
}

/// The 2-bitmap state sum of 32 fields at once (fields are `00` never, `01` once, `10`
/// many; `11` does not occur).
#[inline(always)]
pub(crate) fn merge2(a: u64, b: u64) -> u64 {
    let (la, lb) = (a & LOW, b & LOW);
    let (ha, hb) = ((a >> 1) & LOW, (b >> 1) & LOW);
    let hi = ha | hb | (la & lb);
    let lo = (la | lb) & !hi;
    lo | (hi << 1)
}

/// The portable kernels: the oracle every backend is tested against.
pub(crate) mod scalar {
    use super::{apply, Op};

    /// Sum of `count_ones(w & mask)` over the words.
    pub(crate) fn popcount(words: &[u64], mask: u64) -> u64 {
        let mut total = 0u64;
        for &w in words {
            total += u64::from((w & mask).count_ones());
        }
        total
    }

    /// `a[i] = op(a[i], b[i])` for every word (the slices have equal length).
    pub(crate) fn binary(op: Op, a: &mut [u64], b: &[u64]) {
        for (x, &y) in a.iter_mut().zip(b) {
            *x = apply(op, *x, y);
        }
    }
}

/// Sum of `count_ones` over atomic words, each read with one relaxed load (8 independent
/// accumulators). Atomic loads do not vectorise, so this is the word-at-a-time hardware
/// popcount where the CPU has it (`POPCNT`, detected at run time), which keeps pace with
/// memory on large arrays.
pub(crate) fn popcount_atomic(words: &[AtomicU64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if std::is_x86_feature_detected!("popcnt") {
        // SAFETY: POPCNT was just detected.
        return unsafe { x86::popcount_atomic_popcnt(words) };
    }
    popcount_atomic_loop(words)
}

#[inline(always)]
fn popcount_atomic_loop(words: &[AtomicU64]) -> u64 {
    let mut acc = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            acc[i] += u64::from(c[i].load(Ordering::Relaxed).count_ones());
        }
    }
    let mut total: u64 = acc.iter().sum();
    for w in tail {
        total += u64::from(w.load(Ordering::Relaxed).count_ones());
    }
    total
}

/// The same loops, inlined into `#[target_feature]` functions.
#[inline(always)]
fn popcount_loop(words: &[u64], mask: u64) -> u64 {
    // Eight independent accumulators so the compiler keeps vector lanes busy.
    let mut acc = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            acc[i] += u64::from((c[i] & mask).count_ones());
        }
    }
    let mut total: u64 = acc.iter().sum();
    for &w in tail {
        total += u64::from((w & mask).count_ones());
    }
    total
}

#[inline(always)]
fn binary_loop(op: Op, a: &mut [u64], b: &[u64]) {
    match op {
        Op::Or => a.iter_mut().zip(b).for_each(|(x, &y)| *x |= y),
        Op::And => a.iter_mut().zip(b).for_each(|(x, &y)| *x &= y),
        Op::AndNot => a.iter_mut().zip(b).for_each(|(x, &y)| *x &= !y),
        Op::Xor => a.iter_mut().zip(b).for_each(|(x, &y)| *x ^= y),
        Op::Merge2 => a.iter_mut().zip(b).for_each(|(x, &y)| *x = merge2(*x, y)),
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{binary_loop, popcount_atomic_loop, popcount_loop, Op};
    use core::sync::atomic::AtomicU64;

    /// # Safety
    /// The CPU supports POPCNT.
    #[target_feature(enable = "popcnt")]
    pub(crate) unsafe fn popcount_atomic_popcnt(words: &[AtomicU64]) -> u64 {
        popcount_atomic_loop(words)
    }

    /// # Safety
    /// The CPU supports AVX2 and POPCNT.
    #[target_feature(enable = "avx2,popcnt")]
    pub(crate) unsafe fn popcount_avx2(words: &[u64], mask: u64) -> u64 {
        popcount_loop(words, mask)
    }

    /// # Safety
    /// The CPU supports AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn binary_avx2(op: Op, a: &mut [u64], b: &[u64]) {
        binary_loop(op, a, b)
    }

    /// # Safety
    /// The CPU supports AVX-512F, AVX-512 VPOPCNTDQ and POPCNT.
    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    pub(crate) unsafe fn popcount_avx512(words: &[u64], mask: u64) -> u64 {
        popcount_loop(words, mask)
    }

    /// # Safety
    /// The CPU supports AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn binary_avx512(op: Op, a: &mut [u64], b: &[u64]) {
        binary_loop(op, a, b)
    }

    pub(crate) fn has_vpopcntdq() -> bool {
        #[cfg(not(miri))]
        {
            std::is_x86_feature_detected!("avx512vpopcntdq")
        }
        #[cfg(miri)]
        {
            false
        }
    }
}

/// Sum of `count_ones(w & mask)` over `words`, on `backend` (which must be available:
/// every constructor takes it from [`Backend::detect`] and `set_backend` checks it).
pub(crate) fn popcount(backend: Backend, words: &[u64], mask: u64) -> u64 {
    match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 if x86::has_vpopcntdq() => {
            // SAFETY: the backend is available (AVX-512F) and VPOPCNTDQ was just detected;
            // AVX-512F implies AVX2 and POPCNT on every CPU that has it.
            unsafe { x86::popcount_avx512(words, mask) }
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx512 => {
            // SAFETY: both backends imply AVX2 (checked by `is_available`), and every AVX2
            // CPU has POPCNT.
            unsafe { x86::popcount_avx2(words, mask) }
        }
        Backend::Wide => popcount_loop(words, mask),
        _ => scalar::popcount(words, mask),
    }
}

/// `a[i] = op(a[i], b[i])` on `backend` (available; see [`popcount`]). Equal lengths.
pub(crate) fn binary(backend: Backend, op: Op, a: &mut [u64], b: &[u64]) {
    debug_assert_eq!(a.len(), b.len());
    match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => {
            // SAFETY: the Avx512 backend is available only when AVX-512F is.
            unsafe { x86::binary_avx512(op, a, b) }
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => {
            // SAFETY: the Avx2 backend is available only when AVX2 is.
            unsafe { x86::binary_avx2(op, a, b) }
        }
        Backend::Wide => binary_loop(op, a, b),
        _ => scalar::binary(op, a, b),
    }
}

/// Checks that `backend` can run here.
pub(crate) fn check_backend(backend: Backend) -> Result<(), crate::BitmapError> {
    if backend.is_available() {
        Ok(())
    } else {
        Err(crate::BitmapError::BackendUnavailable(backend.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(seed: u64, n: usize) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let x = s ^ (s >> 29);
                // Mix in some all-zero / all-one words.
                match x % 7 {
                    0 => 0,
                    1 => u64::MAX,
                    _ => x,
                }
            })
            .collect()
    }

    fn two_bit(mut w: u64) -> u64 {
        // Map every 11 field to 10 so the word is a valid 2-bitmap word.
        let both = w & (w >> 1) & LOW;
        w &= !both;
        w
    }

    #[test]
    fn every_backend_matches_the_scalar_oracle() {
        for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000] {
            let a = words(n as u64 + 1, n);
            let b = words(n as u64 + 1000, n);
            for backend in Backend::available() {
                for mask in [u64::MAX, LOW, LOW << 1] {
                    assert_eq!(
                        popcount(backend, &a, mask),
                        scalar::popcount(&a, mask),
                        "{backend:?}"
                    );
                }
                for op in [Op::Or, Op::And, Op::AndNot, Op::Xor, Op::Merge2] {
                    let (a, b) = if op == Op::Merge2 {
                        (
                            a.iter().map(|&w| two_bit(w)).collect::<Vec<_>>(),
                            b.iter().map(|&w| two_bit(w)).collect::<Vec<_>>(),
                        )
                    } else {
                        (a.clone(), b.clone())
                    };
                    let mut want = a.clone();
                    scalar::binary(op, &mut want, &b);
                    let mut got = a.clone();
                    binary(backend, op, &mut got, &b);
                    assert_eq!(got, want, "{backend:?} {op:?} n={n}");
                }
            }
        }
    }

    #[test]
    fn atomic_popcount_matches_the_scalar_oracle() {
        for n in [0usize, 1, 7, 8, 9, 1000] {
            let w = words(n as u64 + 7, n);
            let atomic: Vec<AtomicU64> = w.iter().map(|&x| AtomicU64::new(x)).collect();
            assert_eq!(popcount_atomic(&atomic), scalar::popcount(&w, u64::MAX));
            assert_eq!(
                popcount_atomic_loop(&atomic),
                scalar::popcount(&w, u64::MAX)
            );
        }
    }

    #[test]
    fn merge2_is_the_state_sum() {
        // Field values 0 never, 1 once, 2 many: the sum saturates at 2.
        for a in 0u64..3 {
            for b in 0u64..3 {
                for shift in [0, 2, 62] {
                    let got = (merge2(a << shift, b << shift) >> shift) & 3;
                    assert_eq!(got, (a + b).min(2), "{a}+{b}");
                }
            }
        }
    }
}
