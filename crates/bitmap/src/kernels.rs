//! Word-array kernels (popcount, in-place boolean algebra, the 2-bitmap merge) and their
//! dispatch through core's [`Backend`].
//!
//! Each kernel is written once as a plain loop over `u64` words ([`scalar`], the oracle)
//! and compiled again inside `#[target_feature]` functions (AVX2, AVX-512 with
//! `VPOPCNTDQ`), where the same loop auto-vectorises to 256- or 512-bit instructions. The
//! `Wide` backend runs the portable loop (SSE2 auto-vectorised at the baseline target).

use bloomforge_core::arch::CpuFeatures;
use bloomforge_core::Backend;
use core::sync::atomic::{AtomicU64, Ordering};

/// What the AVX-512 field extraction needs besides AVX-512F: `pext` and `popcnt`.
#[cfg_attr(not(all(target_arch = "x86_64", not(miri))), allow(dead_code))]
const FIELDS_AVX512_EXTRA: CpuFeatures = CpuFeatures::BMI2.union(CpuFeatures::POPCNT);
/// What the AVX-512 popcount needs besides AVX-512F.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const POPCOUNT_AVX512_EXTRA: CpuFeatures = CpuFeatures::AVX512VPOPCNTDQ.union(CpuFeatures::POPCNT);

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

/// Appends `base + 32 * i + j` (wrapping) to `out` for every word `i` of `words` and every
/// 2-bit field `j` of it whose bit `high` (0: the low bit, "once"; 1: the high bit, "many")
/// is set: the values of one state of a 2-bitmap, ascending. With `backend` `Avx512`
/// where the CPU also has BMI2: each word's 32 flags are gathered with `pext` and the
/// values compressed 16 at a time, without a branch per value; else (every other backend
/// too) a trailing-zero scan.
pub(crate) fn append_fields(
    backend: Backend,
    words: &[u64],
    high: u32,
    base: u32,
    out: &mut Vec<u32>,
) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if backend == Backend::Avx512 && Backend::Avx512.is_available_with(FIELDS_AVX512_EXTRA) {
        // SAFETY: AVX-512F, BMI2 and POPCNT were detected.
        unsafe { x86::append_fields_avx512(words, high, base, out) };
        return;
    }
    let _ = backend;
    append_fields_scalar(words, high, base, out);
}

/// The portable [`append_fields`] (the oracle of its tests).
pub(crate) fn append_fields_scalar(words: &[u64], high: u32, base: u32, out: &mut Vec<u32>) {
    for (i, &w) in words.iter().enumerate() {
        let mut m = (w >> high) & LOW;
        let first = base.wrapping_add((i as u32).wrapping_mul(32));
        while m != 0 {
            out.push(first.wrapping_add(m.trailing_zeros() / 2));
            m &= m - 1;
        }
    }
}

/// Sum of `count_ones` over atomic words, each read with one relaxed load (8 independent
/// accumulators). Atomic loads do not vectorise, so this is the word-at-a-time hardware
/// popcount where the CPU has it (`POPCNT`, detected at run time), which keeps pace with
/// memory on large arrays.
pub(crate) fn popcount_atomic(words: &[AtomicU64]) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if CpuFeatures::POPCNT.is_detected() {
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

    /// [`super::popcount_atomic`] compiled with POPCNT.
    ///
    /// # Safety
    /// The CPU must support POPCNT; callers check with `CpuFeatures::POPCNT.is_detected()`.
    /// There is no other precondition.
    #[target_feature(enable = "popcnt")]
    pub(crate) unsafe fn popcount_atomic_popcnt(words: &[AtomicU64]) -> u64 {
        popcount_atomic_loop(words)
    }

    /// [`super::popcount`] compiled with AVX2 and POPCNT.
    ///
    /// # Safety
    /// The CPU must support AVX2 and POPCNT; callers check with
    /// `Backend::Avx2.is_available_with(CpuFeatures::POPCNT)`. There is no other
    /// precondition.
    #[target_feature(enable = "avx2,popcnt")]
    pub(crate) unsafe fn popcount_avx2(words: &[u64], mask: u64) -> u64 {
        popcount_loop(words, mask)
    }

    /// [`super::binary`] compiled with AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2; callers check with `Backend::Avx2.is_available()`. There
    /// is no other precondition (unequal lengths stop at the shorter slice).
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn binary_avx2(op: Op, a: &mut [u64], b: &[u64]) {
        binary_loop(op, a, b)
    }

    /// [`super::popcount`] compiled with AVX-512F and VPOPCNTDQ.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, AVX-512 VPOPCNTDQ and POPCNT; callers check with
    /// `Backend::Avx512.is_available_with(POPCOUNT_AVX512_EXTRA)`. There is no other
    /// precondition.
    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    pub(crate) unsafe fn popcount_avx512(words: &[u64], mask: u64) -> u64 {
        popcount_loop(words, mask)
    }

    /// [`super::binary`] compiled with AVX-512F.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; callers check with `Backend::Avx512.is_available()`.
    /// There is no other precondition (unequal lengths stop at the shorter slice).
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn binary_avx512(op: Op, a: &mut [u64], b: &[u64]) {
        binary_loop(op, a, b)
    }

    /// [`super::append_fields`] on AVX-512F and BMI2.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, BMI2 and POPCNT; callers check with
    /// `Backend::Avx512.is_available_with(FIELDS_AVX512_EXTRA)`. There is no other
    /// precondition: `out` only grows (the compressed stores write into capacity reserved
    /// here).
    #[target_feature(enable = "avx512f,bmi2,popcnt")]
    pub(crate) unsafe fn append_fields_avx512(
        words: &[u64],
        high: u32,
        base: u32,
        out: &mut Vec<u32>,
    ) {
        use core::arch::x86_64::{
            _mm512_add_epi32, _mm512_maskz_compress_epi32, _mm512_set1_epi32, _mm512_setr_epi32,
            _mm512_storeu_si512, _pext_u64,
        };
        let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let sixteen = _mm512_set1_epi32(16);
        // Blocks of 64 words: room for all their fields, plus the 16 values one compressed
        // store may write past the last.
        for (k, block) in words.chunks(64).enumerate() {
            out.reserve(block.len() * 32 + 16);
            let mut len = out.len();
            let dst = out.as_mut_ptr();
            let block_base = base.wrapping_add((k as u32).wrapping_mul(64 * 32));
            for (j, eight) in block.chunks(8).enumerate() {
                // Sparse tables: skip eight empty words at once.
                if eight.iter().fold(0, |a, &w| a | (w >> high)) & super::LOW == 0 {
                    continue;
                }
                for (i, &w) in eight.iter().enumerate() {
                    let m = _pext_u64(w >> high, super::LOW);
                    let first = block_base.wrapping_add(((j * 8 + i) * 32) as u32);
                    let lo = _mm512_add_epi32(iota, _mm512_set1_epi32(first as i32));
                    let hi = _mm512_add_epi32(lo, sixteen);
                    let (m0, m1) = (m as u16, (m >> 16) as u16);
                    // SAFETY: `len + 16 <= capacity`: the block reserved 32 values a word
                    // plus 16, and `len` grows by at most 16 a store.
                    unsafe {
                        _mm512_storeu_si512(
                            dst.add(len).cast(),
                            _mm512_maskz_compress_epi32(m0, lo),
                        );
                        len += m0.count_ones() as usize;
                        _mm512_storeu_si512(
                            dst.add(len).cast(),
                            _mm512_maskz_compress_epi32(m1, hi),
                        );
                        len += m1.count_ones() as usize;
                    }
                }
            }
            // SAFETY: values `..len` are initialised: those before were, and each
            // compressed store wrote its `count_ones` values at `len` (its other lanes are
            // past the new `len`); `len` stays within the capacity.
            unsafe { out.set_len(len) };
        }
    }
}

/// Sum of `count_ones(w & mask)` over `words`, on `backend` (which must be available:
/// every constructor takes it from [`Backend::detect`] and `set_backend` checks it).
pub(crate) fn popcount(backend: Backend, words: &[u64], mask: u64) -> u64 {
    match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 if Backend::Avx512.is_available_with(POPCOUNT_AVX512_EXTRA) => {
            // SAFETY: AVX-512F, VPOPCNTDQ and POPCNT were just detected.
            unsafe { x86::popcount_avx512(words, mask) }
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx512 if Backend::Avx2.is_available_with(CpuFeatures::POPCNT) => {
            // SAFETY: AVX2 and POPCNT were just detected.
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
    fn append_fields_matches_a_field_by_field_scan() {
        for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 130, 1000] {
            let w: Vec<u64> = words(n as u64 + 3, n).into_iter().map(two_bit).collect();
            for high in [0, 1] {
                for base in [0u32, 5, u32::MAX - 100] {
                    let want: Vec<u32> = (0..n * 32)
                        .filter(|&x| (w[x / 32] >> (2 * (x % 32) + high as usize)) & 1 == 1)
                        .map(|x| base.wrapping_add(x as u32))
                        .collect();
                    for backend in Backend::available() {
                        let mut got = vec![42];
                        append_fields(backend, &w, high, base, &mut got);
                        assert_eq!(got[0], 42);
                        assert_eq!(&got[1..], want, "{backend:?} n={n} high={high} base={base}");
                    }
                    let mut scalar = vec![42];
                    append_fields_scalar(&w, high, base, &mut scalar);
                    assert_eq!(&scalar[1..], want);
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
