//! Line kernels of the blocked layout (portable, AVX2 and AVX-512), the pipelined batch
//! loops, and their run-time dispatch.
//!
//! Every kernel exists once in portable code ([`Portable`]: always compiled, the oracle the
//! tests hold the others to) and, on x86-64, as AVX-512BW code ([`Avx512`]) where the 128
//! counters of a line are 64 byte lanes of one register: the probe bitmaps `(lo, hi)` of
//! [`probe_bits`](crate::layout::probe_bits) become byte masks, and one masked byte add (or
//! subtract) per nibble half updates every targeted counter; and as AVX2 code ([`Avx2`]),
//! the same byte-lane arithmetic on two 256-bit halves with the bitmaps expanded to byte
//! masks. The backend is chosen once per filter (cached CPU detection); batch calls
//! dispatch once per batch.

use crate::layout::{
    counter_slot, line_counter, line_index, prefetch, AtomicCounterLine, CounterLine,
    PREFETCH_AHEAD,
};
use crate::nibble::{decrement, increment, nonzero};
use bloomforge_core::arch::CpuFeatures;
use bloomforge_core::Backend;

#[cfg(target_arch = "x86_64")]
use crate::layout::{POWERS, POWERS_U64};

/// The operations of the blocked layout on one line.
///
/// # Safety
/// Implementations may use CPU features beyond the compilation target: calling a method
/// requires that the CPU supports the implementation's backend, and the caller must be
/// inlined into a function with those target features enabled. An implementation may rely
/// on nothing more than what each method's `# Safety` section states; the line is a
/// reference, so it is valid, 64-byte aligned and not accessed by anything else for the
/// duration of the call.
pub(crate) unsafe trait LineKernel {
    /// Increments the non-saturated counters of `h32`'s `k` probes; whether they were all
    /// non-zero before.
    ///
    /// # Safety
    /// - The CPU must support the kernel's backend: nothing beyond the target for
    ///   `Portable`, AVX2 for `Avx2`, AVX2, AVX-512F and AVX-512BW for `Avx512`; callers
    ///   check with `backend_available`.
    /// - `k <= MAX_HASHES` (64): the SIMD kernels load the probe multipliers eight at a
    ///   time from `POWERS` (64 entries) or `POWERS_U64` (72), reading past their end for
    ///   a larger `k` (the portable kernel panics instead). `k = 0` is allowed.
    unsafe fn insert(line: &mut CounterLine, h32: u32, k: u32) -> bool;
    /// If all the probed counters are non-zero, decrements the non-saturated ones and
    /// returns `true`; otherwise changes nothing and returns `false`.
    ///
    /// # Safety
    /// - The CPU must support the kernel's backend: nothing beyond the target for
    ///   `Portable`, AVX2 for `Avx2`, AVX2, AVX-512F and AVX-512BW for `Avx512`; callers
    ///   check with `backend_available`.
    /// - `k <= MAX_HASHES` (64): the SIMD kernels load the probe multipliers eight at a
    ///   time from `POWERS` (64 entries) or `POWERS_U64` (72), reading past their end for
    ///   a larger `k` (the portable kernel panics instead). `k = 0` is allowed.
    unsafe fn remove(line: &mut CounterLine, h32: u32, k: u32) -> bool;
    /// Whether every probed counter is non-zero.
    ///
    /// # Safety
    /// - The CPU must support the kernel's backend: nothing beyond the target for
    ///   `Portable`, AVX2 for `Avx2`, AVX2, AVX-512F and AVX-512BW for `Avx512`; callers
    ///   check with `backend_available`.
    /// - `k <= MAX_HASHES` (64): the SIMD kernels load the probe multipliers eight at a
    ///   time from `POWERS` (64 entries) or `POWERS_U64` (72), reading past their end for
    ///   a larger `k` (the portable kernel panics instead). `k = 0` is allowed.
    unsafe fn contains(line: &CounterLine, h32: u32, k: u32) -> bool;
}

/// Portable kernels: word-parallel nibble arithmetic on the eight words (the compiler
/// vectorises the eight independent lanes where the target allows).
pub(crate) struct Portable;

// SAFETY: portable code needs no CPU feature.
unsafe impl LineKernel for Portable {
    /// [`LineKernel::insert`] in portable code.
    ///
    /// # Safety
    /// Callable on any CPU (portable code). `k <= MAX_HASHES` as for every kernel; a larger `k`
    /// panics on a bounds-checked `POWERS` index instead of reading out of bounds.
    #[inline(always)]
    unsafe fn insert(line: &mut CounterLine, h32: u32, k: u32) -> bool {
        let mask = crate::layout::line_mask(h32, k);
        let mut missing = 0;
        for (w, m) in line.words.iter_mut().zip(mask) {
            missing |= m & !nonzero(*w);
            *w = increment(*w, m);
        }
        missing == 0
    }

    /// [`LineKernel::remove`] in portable code.
    ///
    /// # Safety
    /// Callable on any CPU (portable code). `k <= MAX_HASHES` as for every kernel; a larger `k`
    /// panics on a bounds-checked `POWERS` index instead of reading out of bounds.
    #[inline(always)]
    unsafe fn remove(line: &mut CounterLine, h32: u32, k: u32) -> bool {
        let mask = crate::layout::line_mask(h32, k);
        let missing = line
            .words
            .iter()
            .zip(mask)
            .fold(0, |acc, (&w, m)| acc | (m & !nonzero(w)));
        if missing != 0 {
            return false;
        }
        for (w, m) in line.words.iter_mut().zip(mask) {
            *w = decrement(*w, m);
        }
        true
    }

    /// All `k` probes are read and combined without branches: an early exit on the first
    /// zero counter mispredicts on most negative queries and measured 3x slower.
    ///
    /// # Safety
    /// Callable on any CPU (portable code). `k <= MAX_HASHES` as for every kernel; a larger `k`
    /// panics on a bounds-checked `POWERS` index instead of reading out of bounds.
    #[inline(always)]
    unsafe fn contains(line: &CounterLine, h32: u32, k: u32) -> bool {
        // A count rather than an `&=` flag, so the compiler cannot turn it back into an
        // early exit.
        let mut zeros = 0u32;
        for j in 0..k as usize {
            let (w, shift) = counter_slot(line_counter(h32, j));
            zeros += u32::from((line.words[w] >> shift) & 0xF == 0);
        }
        zeros == 0
    }
}

/// AVX-512F + AVX-512BW kernels: the line is one register of 64 byte lanes; byte `b` holds
/// counters `b` (low nibble) and `b + 64` (high nibble), so the probe bitmaps are the lane
/// masks of the two halves.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx512;

#[cfg(target_arch = "x86_64")]
mod avx512_impl {
    use super::*;
    use core::arch::x86_64::*;

    /// `(lanes whose low nibble is non-zero, lanes whose high nibble is non-zero)`.
    ///
    /// # Safety
    /// The CPU must support AVX-512BW (and AVX-512F); callers check with
    /// `backend_available(Backend::Avx512)`. There is no other precondition.
    #[inline(always)]
    unsafe fn nonzero_masks(v: __m512i) -> (u64, u64) {
        // SAFETY: the caller guarantees AVX-512BW.
        unsafe {
            (
                _mm512_test_epi8_mask(v, _mm512_set1_epi8(0x0F)),
                _mm512_test_epi8_mask(v, _mm512_set1_epi8(0xF0u8 as i8)),
            )
        }
    }

    /// `(lanes whose low nibble is 15, lanes whose high nibble is 15)`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW; callers check with
    /// `backend_available(Backend::Avx512)`. There is no other precondition.
    #[inline(always)]
    unsafe fn saturated_masks(v: __m512i) -> (u64, u64) {
        // SAFETY: the caller guarantees AVX-512F and AVX-512BW.
        unsafe {
            let inv = _mm512_xor_si512(v, _mm512_set1_epi8(-1));
            (
                _mm512_testn_epi8_mask(inv, _mm512_set1_epi8(0x0F)),
                _mm512_testn_epi8_mask(inv, _mm512_set1_epi8(0xF0u8 as i8)),
            )
        }
    }

    /// [`probe_bits`] in 64-bit lanes, eight probes per pass: `vpsllvq` of 1 by `c` gives
    /// `1 << c` for `c < 64` and 0 otherwise (and by `c - 64` the reverse), then the lanes
    /// are OR-reduced.
    ///
    /// # Safety
    /// - The CPU must support AVX-512F; callers check with
    ///   `backend_available(Backend::Avx512)`.
    /// - `k <= MAX_HASHES` (64): each pass loads `POWERS_U64[j..j + 8]` for `j = 0, 8, ..`
    ///   below `k`, inside its 72 entries only for `k <= 72`.
    #[inline(always)]
    unsafe fn probe_bits_v(h32: u32, k: u32) -> (u64, u64) {
        // SAFETY: `j < k <= 64` and `POWERS_U64` has 72 entries; AVX-512F is guaranteed by
        // the caller.
        unsafe {
            let h = _mm512_set1_epi64(i64::from(h32));
            let ones = _mm512_set1_epi64(1);
            let (mut lo, mut hi) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            if k <= 8 {
                // The common case in one pass, no loop: lanes >= k are masked out.
                let want = lane_mask8(k);
                let pows = _mm512_loadu_si512(POWERS_U64.as_ptr().cast());
                let c = _mm512_and_si512(
                    _mm512_srli_epi64::<25>(_mm512_mullo_epi32(h, pows)),
                    _mm512_set1_epi64(127),
                );
                lo = _mm512_maskz_sllv_epi64(want, ones, c);
                hi =
                    _mm512_maskz_sllv_epi64(want, ones, _mm512_sub_epi64(c, _mm512_set1_epi64(64)));
                return reduce_pair(lo, hi);
            }
            let mut j = 0u32;
            loop {
                let pows = _mm512_loadu_si512(POWERS_U64.as_ptr().add(j as usize).cast());
                let c = _mm512_and_si512(
                    _mm512_srli_epi64::<25>(_mm512_mullo_epi32(h, pows)),
                    _mm512_set1_epi64(127),
                );
                let want = lane_mask8(k - j);
                lo = _mm512_mask_or_epi64(lo, want, lo, _mm512_sllv_epi64(ones, c));
                let c_hi = _mm512_sub_epi64(c, _mm512_set1_epi64(64));
                hi = _mm512_mask_or_epi64(hi, want, hi, _mm512_sllv_epi64(ones, c_hi));
                j += 8;
                if j >= k {
                    break;
                }
            }
            reduce_pair(lo, hi)
        }
    }

    /// `(OR of lo's lanes, OR of hi's lanes)`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; callers check with `backend_available(Backend::Avx512)`.
    /// There is no other precondition.
    #[inline(always)]
    unsafe fn reduce_pair(lo: __m512i, hi: __m512i) -> (u64, u64) {
        // SAFETY: the caller guarantees AVX-512F.
        unsafe {
            // OR-reduce both vectors at once: after the unpacks each 128-bit lane holds
            // (partial lo, partial hi); two lane swaps finish both reductions.
            let x = _mm512_or_si512(_mm512_unpacklo_epi64(lo, hi), _mm512_unpackhi_epi64(lo, hi));
            let x = _mm512_or_si512(x, _mm512_shuffle_i64x2::<0b10_11_00_01>(x, x));
            let x = _mm512_or_si512(x, _mm512_shuffle_i64x2::<0b01_00_11_10>(x, x));
            let pair = _mm512_castsi512_si128(x);
            (
                _mm_cvtsi128_si64(pair) as u64,
                _mm_extract_epi64::<1>(pair) as u64,
            )
        }
    }

    // SAFETY: every method uses AVX-512F / AVX-512BW intrinsics only, which the trait
    // contract makes callers guarantee; loads and stores go through `&CounterLine`, which
    // is 64 bytes and 64-byte aligned.
    unsafe impl LineKernel for Avx512 {
        /// [`LineKernel::insert`] with one masked byte add per nibble half.
        ///
        /// # Safety
        /// - The CPU must support AVX-512F and AVX-512BW (and AVX2, which the backend check
        ///   includes); callers check with `backend_available(Backend::Avx512)`.
        /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from
        ///   `POWERS_U64`, at offsets `0, 8, ..` below `k`.
        #[inline(always)]
        unsafe fn insert(line: &mut CounterLine, h32: u32, k: u32) -> bool {
            // SAFETY: AVX-512F is guaranteed by the caller.
            let (lo, hi) = unsafe { probe_bits_v(h32, k) };
            let ptr = line.words.as_mut_ptr().cast::<__m512i>();
            // SAFETY: `ptr` is a 64-byte-aligned, 64-byte line borrowed mutably; AVX-512
            // is guaranteed by the caller.
            unsafe {
                let v = _mm512_load_si512(ptr);
                let (nz_lo, nz_hi) = nonzero_masks(v);
                let (sat_lo, sat_hi) = saturated_masks(v);
                // A low nibble at most 14 plus 1 cannot carry into the high nibble; a high
                // nibble at most 14 plus 0x10 cannot carry out of the byte.
                let v = _mm512_mask_add_epi8(v, lo & !sat_lo, v, _mm512_set1_epi8(0x01));
                let v = _mm512_mask_add_epi8(v, hi & !sat_hi, v, _mm512_set1_epi8(0x10));
                _mm512_store_si512(ptr, v);
                (lo & !nz_lo) | (hi & !nz_hi) == 0
            }
        }

        /// [`LineKernel::remove`] with one masked byte subtract per nibble half.
        ///
        /// # Safety
        /// - The CPU must support AVX-512F and AVX-512BW (and AVX2, which the backend check
        ///   includes); callers check with `backend_available(Backend::Avx512)`.
        /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from
        ///   `POWERS_U64`, at offsets `0, 8, ..` below `k`.
        #[inline(always)]
        unsafe fn remove(line: &mut CounterLine, h32: u32, k: u32) -> bool {
            // SAFETY: AVX-512F is guaranteed by the caller.
            let (lo, hi) = unsafe { probe_bits_v(h32, k) };
            let ptr = line.words.as_mut_ptr().cast::<__m512i>();
            // SAFETY: as in `insert`.
            unsafe {
                let v = _mm512_load_si512(ptr);
                let (nz_lo, nz_hi) = nonzero_masks(v);
                if (lo & !nz_lo) | (hi & !nz_hi) != 0 {
                    return false;
                }
                let (sat_lo, sat_hi) = saturated_masks(v);
                // Every targeted nibble is at least 1: no borrow crosses a nibble.
                let v = _mm512_mask_sub_epi8(v, lo & !sat_lo, v, _mm512_set1_epi8(0x01));
                let v = _mm512_mask_sub_epi8(v, hi & !sat_hi, v, _mm512_set1_epi8(0x10));
                _mm512_store_si512(ptr, v);
                true
            }
        }

        /// Eight probes per pass in 64-bit lanes (no scalar probe loop): a 32-bit multiply
        /// forms `h32 * C^(j+1) mod 2^32` in each lane's low half (the high half is
        /// `h32 * 0`), whose bits 25..31 are the counter `c`; `vpermq` fetches each
        /// probe's word (`(c % 64) / 8` = bits 28..30) from the line held in one register,
        /// `vpsrlvq` brings its nibble down and `vptestmq` tests it under the lane mask.
        ///
        /// # Safety
        /// - The CPU must support AVX-512F and AVX-512BW (and AVX2, which the backend check
        ///   includes); callers check with `backend_available(Backend::Avx512)`.
        /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from
        ///   `POWERS_U64`, at offsets `0, 8, ..` below `k`.
        #[inline(always)]
        unsafe fn contains(line: &CounterLine, h32: u32, k: u32) -> bool {
            // SAFETY: an aligned 64-byte load of a borrowed line; `j < k <= 64` and
            // `POWERS_U64` has 72 entries, so every 8-lane load is in bounds; AVX-512F is
            // guaranteed by the caller.
            unsafe {
                let words = _mm512_load_si512(line.words.as_ptr().cast::<__m512i>());
                // `vpmulld` rather than `vpmuludq`: the powers are compile-time constants
                // below 2^32, so LLVM drops `vpmuludq`'s implicit 32-bit masks and
                // emulates a full 64-bit multiply (three multiplies) without AVX-512DQ.
                let h = _mm512_set1_epi64(i64::from(h32));
                let mut j = 0u32;
                loop {
                    let pows = _mm512_loadu_si512(POWERS_U64.as_ptr().add(j as usize).cast());
                    let prod = _mm512_mullo_epi32(h, pows);
                    // vpermq reads only the low 3 bits of each index.
                    let picked = _mm512_permutexvar_epi64(_mm512_srli_epi64::<28>(prod), words);
                    // Shift (c % 8) * 8 + (c / 64) * 4 from bits 25..27 and bit 31.
                    let shift = _mm512_or_si512(
                        _mm512_and_si512(_mm512_srli_epi64::<22>(prod), _mm512_set1_epi64(0x38)),
                        _mm512_and_si512(_mm512_srli_epi64::<29>(prod), _mm512_set1_epi64(0x04)),
                    );
                    let values = _mm512_srlv_epi64(picked, shift);
                    let want = lane_mask8(k - j);
                    let hit =
                        _mm512_mask_test_epi64_mask(want, values, _mm512_set1_epi64(0xF)) == want;
                    j += 8;
                    if !hit || j >= k {
                        return hit;
                    }
                }
            }
        }
    }

    /// The lane mask of the first `min(n, 8)` lanes.
    #[inline(always)]
    fn lane_mask8(n: u32) -> __mmask8 {
        if n >= 8 {
            0xFF
        } else {
            ((1u32 << n) - 1) as __mmask8
        }
    }
}

/// AVX2 kernels: the line is two registers of 32 byte lanes (byte `b` holds counters `b`
/// and `b + 64`, as for [`Avx512`]). Updates expand the probe bitmaps to byte masks and
/// add or subtract per nibble with compares in place of AVX-512's mask registers; queries
/// fetch each probe's 32-bit word with two `vpermd` (one per half) and test its nibble,
/// eight probes per pass.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2_impl {
    use super::*;
    use core::arch::x86_64::*;

    /// The byte masks (0xFF where the bit is set) of bits 0..32 and 32..64 of `m`: byte
    /// lane `b` of the pair is 0xFF exactly when bit `b` of `m` is set.
    ///
    /// # Safety
    /// The CPU must support AVX2; callers check with `backend_available(Backend::Avx2)` (or
    /// `Backend::Avx512`, which includes it). There is no other precondition.
    #[inline(always)]
    unsafe fn expand(m: u64) -> (__m256i, __m256i) {
        // SAFETY: the caller guarantees AVX2.
        unsafe {
            let v = _mm256_set1_epi64x(m as i64);
            // `vpshufb` works within 128-bit lanes; both lanes hold all 8 bytes of `m`.
            let sel_lo = _mm256_setr_epi8(
                0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3,
                3, 3, 3, 3,
            );
            let sel_hi = _mm256_setr_epi8(
                4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7,
                7, 7, 7, 7,
            );
            let bits = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
            let a = _mm256_and_si256(_mm256_shuffle_epi8(v, sel_lo), bits);
            let b = _mm256_and_si256(_mm256_shuffle_epi8(v, sel_hi), bits);
            (_mm256_cmpeq_epi8(a, bits), _mm256_cmpeq_epi8(b, bits))
        }
    }

    /// Per-half state of an update.
    struct Half {
        /// Non-zero bits where a targeted nibble is zero.
        zero: __m256i,
        /// Per byte: 0x01 for a targeted, non-saturated low nibble, plus 0x10 for such a
        /// high nibble.
        inc: __m256i,
    }

    /// For the 32 byte lanes `v` with targeted nibbles `(lo, hi)` (byte masks): the
    /// targeted nibbles that are zero (as byte bits 0x0F / 0xF0), and the per-byte
    /// increment (0x01 / 0x10) of the targeted nibbles that are not saturated.
    ///
    /// # Safety
    /// The CPU must support AVX2; callers check with `backend_available(Backend::Avx2)`.
    /// There is no other precondition.
    #[inline(always)]
    unsafe fn half(v: __m256i, lo: __m256i, hi: __m256i) -> Half {
        // SAFETY: the caller guarantees AVX2.
        unsafe {
            let low_nib = _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
            let high_nib = _mm256_and_si256(v, _mm256_set1_epi8(0xF0u8 as i8));
            let zero = _mm256_or_si256(
                _mm256_and_si256(lo, _mm256_cmpeq_epi8(low_nib, _mm256_setzero_si256())),
                _mm256_and_si256(hi, _mm256_cmpeq_epi8(high_nib, _mm256_setzero_si256())),
            );
            let sat_lo = _mm256_cmpeq_epi8(low_nib, _mm256_set1_epi8(0x0F));
            let sat_hi = _mm256_cmpeq_epi8(high_nib, _mm256_set1_epi8(0xF0u8 as i8));
            let inc = _mm256_or_si256(
                _mm256_and_si256(_mm256_andnot_si256(sat_lo, lo), _mm256_set1_epi8(0x01)),
                _mm256_and_si256(_mm256_andnot_si256(sat_hi, hi), _mm256_set1_epi8(0x10)),
            );
            Half { zero, inc }
        }
    }

    /// [`probe_bits`](crate::layout::probe_bits), eight probes per pass: counters from a
    /// 32-bit multiply, widened to 64-bit lanes where `vpsllvq` of 1 by `c` gives
    /// `1 << c` for `c < 64` and 0 otherwise (and by `c - 64` the reverse; lanes past `k`
    /// get `c >= 128`, which sets neither), then the lanes are OR-reduced.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `backend_available(Backend::Avx2)`.
    /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from the
    ///   64-entry `POWERS`, at offsets `0, 8, ..` below `k`.
    #[inline(always)]
    unsafe fn probe_bits_v(h32: u32, k: u32) -> (u64, u64) {
        // SAFETY: `j + 8 <= 64 = POWERS.len()` because `j < k <= 64` steps by 8; AVX2 is
        // guaranteed by the caller.
        unsafe {
            let h = _mm256_set1_epi32(h32 as i32);
            let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            let ones = _mm256_set1_epi64x(1);
            let sixty_four = _mm256_set1_epi64x(64);
            let (mut lo, mut hi) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            let mut j = 0u32;
            loop {
                let pows = _mm256_loadu_si256(POWERS.as_ptr().add(j as usize).cast());
                let c = _mm256_srli_epi32::<25>(_mm256_mullo_epi32(h, pows));
                let live = _mm256_cmpgt_epi32(_mm256_set1_epi32((k - j) as i32), lanes);
                let c = _mm256_or_si256(c, _mm256_andnot_si256(live, _mm256_set1_epi32(128)));
                let ca = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(c));
                let cb = _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(c));
                lo = _mm256_or_si256(
                    lo,
                    _mm256_or_si256(_mm256_sllv_epi64(ones, ca), _mm256_sllv_epi64(ones, cb)),
                );
                hi = _mm256_or_si256(
                    hi,
                    _mm256_or_si256(
                        _mm256_sllv_epi64(ones, _mm256_sub_epi64(ca, sixty_four)),
                        _mm256_sllv_epi64(ones, _mm256_sub_epi64(cb, sixty_four)),
                    ),
                );
                j += 8;
                if j >= k {
                    break;
                }
            }
            // After the unpacks each 128-bit lane holds (partial lo, partial hi); one lane
            // swap finishes both reductions.
            let x = _mm256_or_si256(_mm256_unpacklo_epi64(lo, hi), _mm256_unpackhi_epi64(lo, hi));
            let x = _mm256_or_si256(x, _mm256_permute2x128_si256::<1>(x, x));
            let pair = _mm256_castsi256_si128(x);
            (
                _mm_cvtsi128_si64(pair) as u64,
                _mm_extract_epi64::<1>(pair) as u64,
            )
        }
    }

    /// The two halves of `line` with the probe masks of `h32`'s `k` probes.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `backend_available(Backend::Avx2)`.
    /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from the
    ///   64-entry `POWERS`, at offsets `0, 8, ..` below `k`.
    #[inline(always)]
    unsafe fn halves(line: &CounterLine, h32: u32, k: u32) -> (__m256i, __m256i, Half, Half) {
        // SAFETY: AVX2 is guaranteed by the caller.
        let (lo, hi) = unsafe { probe_bits_v(h32, k) };
        let ptr = line.words.as_ptr().cast::<__m256i>();
        // SAFETY: a 64-byte-aligned line: two aligned 32-byte loads in bounds; AVX2 is
        // guaranteed by the caller.
        unsafe {
            let (v0, v1) = (_mm256_load_si256(ptr), _mm256_load_si256(ptr.add(1)));
            let (lo0, lo1) = expand(lo);
            let (hi0, hi1) = expand(hi);
            (v0, v1, half(v0, lo0, hi0), half(v1, lo1, hi1))
        }
    }

    // SAFETY: every method uses AVX2 intrinsics only, which the trait contract makes
    // callers guarantee; loads and stores go through `&CounterLine`, 64 bytes, 64-byte
    // aligned.
    unsafe impl LineKernel for Avx2 {
        /// [`LineKernel::insert`] on two 256-bit halves.
        ///
        /// # Safety
        /// - The CPU must support AVX2; callers check with `backend_available(Backend::Avx2)`.
        /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from the
        ///   64-entry `POWERS`, at offsets `0, 8, ..` below `k`.
        #[inline(always)]
        unsafe fn insert(line: &mut CounterLine, h32: u32, k: u32) -> bool {
            // SAFETY: AVX2 is guaranteed by the caller; the stores are the two aligned
            // halves of a mutably borrowed line.
            unsafe {
                let (v0, v1, a, b) = halves(line, h32, k);
                // A low nibble at most 14 plus 1 cannot carry into the high nibble; a
                // high nibble at most 14 plus 0x10 cannot carry out of the byte.
                let ptr = line.words.as_mut_ptr().cast::<__m256i>();
                _mm256_store_si256(ptr, _mm256_add_epi8(v0, a.inc));
                _mm256_store_si256(ptr.add(1), _mm256_add_epi8(v1, b.inc));
                let zero = _mm256_or_si256(a.zero, b.zero);
                _mm256_testz_si256(zero, zero) == 1
            }
        }

        /// [`LineKernel::remove`] on two 256-bit halves.
        ///
        /// # Safety
        /// - The CPU must support AVX2; callers check with `backend_available(Backend::Avx2)`.
        /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from the
        ///   64-entry `POWERS`, at offsets `0, 8, ..` below `k`.
        #[inline(always)]
        unsafe fn remove(line: &mut CounterLine, h32: u32, k: u32) -> bool {
            // SAFETY: as in `insert`.
            unsafe {
                let (v0, v1, a, b) = halves(line, h32, k);
                let zero = _mm256_or_si256(a.zero, b.zero);
                if _mm256_testz_si256(zero, zero) == 0 {
                    return false;
                }
                // Every targeted nibble is at least 1: no borrow crosses a nibble.
                let ptr = line.words.as_mut_ptr().cast::<__m256i>();
                _mm256_store_si256(ptr, _mm256_sub_epi8(v0, a.inc));
                _mm256_store_si256(ptr.add(1), _mm256_sub_epi8(v1, b.inc));
                true
            }
        }

        /// Eight probes per pass in 32-bit lanes: counter `c` is in 32-bit word
        /// `(c % 64) / 4` of the line (16 words, two registers), at bit
        /// `(c % 4) * 8 + (c / 64) * 4`; each half is permuted with `vpermd` and the
        /// right one picked per lane, then the nibbles are tested together.
        ///
        /// # Safety
        /// - The CPU must support AVX2; callers check with `backend_available(Backend::Avx2)`.
        /// - `k <= MAX_HASHES` (64): the probe multipliers are loaded eight at a time from the
        ///   64-entry `POWERS`, at offsets `0, 8, ..` below `k`.
        #[inline(always)]
        unsafe fn contains(line: &CounterLine, h32: u32, k: u32) -> bool {
            let ptr = line.words.as_ptr().cast::<__m256i>();
            // SAFETY: two aligned 32-byte loads of a borrowed 64-byte-aligned line;
            // `j + 8 <= 64 = POWERS.len()` because `j < k <= 64` steps by 8; AVX2 is
            // guaranteed by the caller.
            unsafe {
                let (v0, v1) = (_mm256_load_si256(ptr), _mm256_load_si256(ptr.add(1)));
                let h = _mm256_set1_epi32(h32 as i32);
                let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
                let mut j = 0u32;
                loop {
                    let pows = _mm256_loadu_si256(POWERS.as_ptr().add(j as usize).cast());
                    let c = _mm256_srli_epi32::<25>(_mm256_mullo_epi32(h, pows));
                    // Word (c % 64) / 4: bits 2..5 of c; `vpermd` reads bits 0..2 of
                    // the index, bit 3 (c bit 5) picks the half.
                    let word = _mm256_srli_epi32::<2>(c);
                    let from0 = _mm256_permutevar8x32_epi32(v0, word);
                    let from1 = _mm256_permutevar8x32_epi32(v1, word);
                    let upper = _mm256_slli_epi32::<28>(word);
                    let picked = _mm256_castps_si256(_mm256_blendv_ps(
                        _mm256_castsi256_ps(from0),
                        _mm256_castsi256_ps(from1),
                        _mm256_castsi256_ps(upper),
                    ));
                    let shift = _mm256_or_si256(
                        _mm256_slli_epi32::<3>(_mm256_and_si256(c, _mm256_set1_epi32(3))),
                        _mm256_and_si256(_mm256_srli_epi32::<4>(c), _mm256_set1_epi32(4)),
                    );
                    let nib =
                        _mm256_and_si256(_mm256_srlv_epi32(picked, shift), _mm256_set1_epi32(0xF));
                    // Lanes at or past k read as non-zero.
                    let live = _mm256_cmpgt_epi32(_mm256_set1_epi32((k - j) as i32), lanes);
                    let zero =
                        _mm256_and_si256(_mm256_cmpeq_epi32(nib, _mm256_setzero_si256()), live);
                    let hit = _mm256_testz_si256(zero, zero) == 1;
                    j += 8;
                    if !hit || j >= k {
                        return hit;
                    }
                }
            }
        }
    }
}

pub(crate) use bloomforge_core::batch::{HashSource, Hashes, Keys};

// --- generic operations, instantiated per backend by `dispatch_fn!` ------------------------

/// Increments the counters of `hash`; whether they were all non-zero before.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `backend_available` (the
///   `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= MAX_HASHES` (see [`LineKernel::insert`]); filters validate it when they are
///   built or read.
///
/// Lines are indexed with bounds checks (an empty `lines` panics).
#[inline(always)]
unsafe fn insert_one<K: LineKernel>(lines: &mut [CounterLine], hash: u64, k: u32) -> bool {
    let l = line_index(hash, lines.len());
    // SAFETY: forwarded contract (the CPU supports K's backend).
    unsafe { K::insert(&mut lines[l], hash as u32, k) }
}

/// Decrements the counters of `hash` if all are non-zero; whether they were.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `backend_available` (the
///   `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= MAX_HASHES` (see [`LineKernel::insert`]); filters validate it when they are
///   built or read.
///
/// Lines are indexed with bounds checks (an empty `lines` panics).
#[inline(always)]
unsafe fn remove_one<K: LineKernel>(lines: &mut [CounterLine], hash: u64, k: u32) -> bool {
    let l = line_index(hash, lines.len());
    // SAFETY: forwarded contract.
    unsafe { K::remove(&mut lines[l], hash as u32, k) }
}

/// Whether every counter of `hash` is non-zero.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `backend_available` (the
///   `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= MAX_HASHES` (see [`LineKernel::insert`]); filters validate it when they are
///   built or read.
///
/// Lines are indexed with bounds checks (an empty `lines` panics).
#[inline(always)]
unsafe fn contains_one<K: LineKernel>(lines: &[CounterLine], hash: u64, k: u32) -> bool {
    let l = line_index(hash, lines.len());
    // SAFETY: forwarded contract.
    unsafe { K::contains(&lines[l], hash as u32, k) }
}

/// Runs `op(i, line_index, h32)` for every item of `src` in order, hashing and
/// prefetching (lines of the array at `base`, `num_lines` long) [`PREFETCH_AHEAD`] items
/// ahead so the cache misses of consecutive items overlap.
#[inline(always)]
fn schedule<H: HashSource>(
    base: *const CounterLine,
    num_lines: usize,
    src: &H,
    mut op: impl FnMut(usize, usize, u32),
) {
    bloomforge_core::batch_pipeline!(ahead: PREFETCH_AHEAD, len: src.len(),
        prepare |p| {
            let h = src.hash_at(p);
            let l = line_index(h, num_lines);
            // `wrapping_add` forms the address without asserting it is in bounds (it is:
            // l < num_lines); a prefetch never faults anyway.
            prefetch(base.wrapping_add(l));
            (l, h as u32)
        },
        probe |i, (l, h32)| op(i, l, h32));
}

/// [`schedule`] over a mutable line array: `op(i, line, h32)`.
#[inline(always)]
fn pipeline<H: HashSource>(
    lines: &mut [CounterLine],
    src: &H,
    mut op: impl FnMut(usize, &mut CounterLine, u32),
) {
    schedule(lines.as_ptr(), lines.len(), src, |i, l, h32| {
        op(i, &mut lines[l], h32)
    });
}

/// Read-only [`pipeline`].
#[inline(always)]
fn pipeline_ref<H: HashSource>(
    lines: &[CounterLine],
    src: &H,
    mut op: impl FnMut(usize, &CounterLine, u32),
) {
    schedule(lines.as_ptr(), lines.len(), src, |i, l, h32| {
        op(i, &lines[l], h32)
    });
}

/// Pipelined [`insert_one`] over `src`.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `backend_available` (the
///   `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= MAX_HASHES` (see [`LineKernel::insert`]); filters validate it when they are
///   built or read.
///
/// Lines are indexed with bounds checks (an empty `lines` panics).
#[inline(always)]
unsafe fn insert_batch<K: LineKernel, H: HashSource>(lines: &mut [CounterLine], k: u32, src: &H) {
    pipeline(lines, src, |_, line, h32| {
        // SAFETY: forwarded contract.
        unsafe { K::insert(line, h32, k) };
    });
}

/// Pipelined [`remove_one`] over `src`, each answer in `out`.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `backend_available` (the
///   `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= MAX_HASHES` (see [`LineKernel::insert`]); filters validate it when they are
///   built or read.
///
/// Lines are indexed with bounds checks (an empty `lines` panics). `out` shorter than `src` panics.
#[inline(always)]
unsafe fn remove_batch<K: LineKernel, H: HashSource>(
    lines: &mut [CounterLine],
    k: u32,
    src: &H,
    out: &mut [bool],
) {
    pipeline(lines, src, |i, line, h32| {
        // SAFETY: forwarded contract.
        out[i] = unsafe { K::remove(line, h32, k) };
    });
}

/// Pipelined [`contains_one`] over `src`, each answer in `out`.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `backend_available` (the
///   `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= MAX_HASHES` (see [`LineKernel::insert`]); filters validate it when they are
///   built or read.
///
/// Lines are indexed with bounds checks (an empty `lines` panics). `out` shorter than `src` panics.
#[inline(always)]
unsafe fn contains_batch<K: LineKernel, H: HashSource>(
    lines: &[CounterLine],
    k: u32,
    src: &H,
    out: &mut [bool],
) {
    pipeline_ref(lines, src, |i, line, h32| {
        // SAFETY: forwarded contract.
        out[i] = unsafe { K::contains(line, h32, k) };
    });
}

/// Core's [`dispatch_kernels!`](bloomforge_core::dispatch_kernels) with this crate's line
/// kernels: a filter holds a backend only after [`backend_available`] (AVX-512 here needs
/// AVX-512BW as well); `$generic`'s other precondition, `k <= MAX_HASHES`, is left to the
/// callers, which pass a filter's own validated `k`.
macro_rules! dispatch_fn {
    ($name:ident <$($g:ident : $bound:path),*> ($($arg:ident : $ty:ty),*) -> $ret:ty => $generic:ident) => {
        bloomforge_core::dispatch_kernels! {
            kernels {
                avx512: Avx512 ["avx2", "avx512f", "avx512bw"],
                avx2: Avx2 ["avx2"],
                wide: Portable,
                scalar: Portable,
            }
            #[inline]
            pub(crate) fn $name<$($g: $bound),*>($($arg: $ty),*) -> $ret => $generic
        }
    };
}

/// Queries one key of an atomic filter: the line copied with relaxed loads (inlined into
/// the backend's wrapper, so the copy stays in registers), then `K::contains`.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `backend_available` (the
///   `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= MAX_HASHES` (see [`LineKernel::insert`]); filters validate it when they are
///   built or read.
///
/// Lines are indexed with bounds checks (an empty `lines` panics).
#[inline(always)]
unsafe fn atomic_contains_one<K: LineKernel>(
    lines: &[AtomicCounterLine],
    hash: u64,
    k: u32,
) -> bool {
    let line = &lines[line_index(hash, lines.len())];
    let local = CounterLine {
        words: core::array::from_fn(|i| line.words[i].load(core::sync::atomic::Ordering::Relaxed)),
    };
    // SAFETY: forwarded contract (the CPU supports K's backend).
    unsafe { K::contains(&local, hash as u32, k) }
}

dispatch_fn! { d_atomic_contains_one<>(lines: &[AtomicCounterLine], hash: u64, k: u32) -> bool => atomic_contains_one }
dispatch_fn! { d_insert_one<>(lines: &mut [CounterLine], hash: u64, k: u32) -> bool => insert_one }
dispatch_fn! { d_remove_one<>(lines: &mut [CounterLine], hash: u64, k: u32) -> bool => remove_one }
dispatch_fn! { d_contains_one<>(lines: &[CounterLine], hash: u64, k: u32) -> bool => contains_one }
dispatch_fn! { d_insert_batch<H: HashSource>(lines: &mut [CounterLine], k: u32, src: &H) -> () => insert_batch }
dispatch_fn! { d_remove_batch<H: HashSource>(lines: &mut [CounterLine], k: u32, src: &H, out: &mut [bool]) -> () => remove_batch }
dispatch_fn! { d_contains_batch<H: HashSource>(lines: &[CounterLine], k: u32, src: &H, out: &mut [bool]) -> () => contains_batch }

/// The features this crate's kernels need besides `backend`'s own: AVX-512BW for
/// `Avx512` (they work on bytes and words). `Scalar` and `Wide` both run the portable
/// kernel (nibble counters gain nothing from `wide`'s vectors without shuffles).
pub(crate) fn extra_features(backend: Backend) -> CpuFeatures {
    match backend {
        Backend::Avx512 => CpuFeatures::AVX512BW,
        _ => CpuFeatures::NONE,
    }
}

/// Whether this CPU runs `backend`'s kernels.
pub(crate) fn backend_available(backend: Backend) -> bool {
    backend.is_available_with(extra_features(backend))
}

/// The fastest backend this CPU runs the kernels of (core's detection).
pub(crate) fn default_backend() -> Backend {
    Backend::detect_among(&[Backend::Avx2, Backend::Avx512], extra_features)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn line_from(bytes: &[u8; 64]) -> CounterLine {
        let mut line = CounterLine::ZERO;
        for (w, chunk) in line.words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(chunk.try_into().unwrap());
        }
        line
    }

    fn counters(line: &CounterLine) -> Vec<u32> {
        (0..128).map(|c| line.counter(c)).collect()
    }

    /// The reference semantics, counter by counter.
    fn oracle(line: &CounterLine, h32: u32, k: u32, op: u8) -> (Vec<u32>, bool) {
        let mut cs = counters(line);
        let mut targets: Vec<u32> = (0..k as usize).map(|j| line_counter(h32, j)).collect();
        targets.sort_unstable();
        targets.dedup();
        let all_nonzero = targets.iter().all(|&c| cs[c as usize] != 0);
        match op {
            0 => {
                for &c in &targets {
                    if cs[c as usize] < 15 {
                        cs[c as usize] += 1;
                    }
                }
                (cs, all_nonzero)
            }
            1 => {
                if all_nonzero {
                    for &c in &targets {
                        if cs[c as usize] < 15 {
                            cs[c as usize] -= 1;
                        }
                    }
                }
                (cs, all_nonzero)
            }
            _ => (cs, all_nonzero),
        }
    }

    fn check<K: LineKernel>(line: &CounterLine, h32: u32, k: u32) -> Result<(), TestCaseError> {
        for op in 0..3u8 {
            let (want, flag) = oracle(line, h32, k, op);
            let mut l = *line;
            // SAFETY: callers pass a kernel this CPU supports (checked by `available`).
            let got = unsafe {
                match op {
                    0 => K::insert(&mut l, h32, k),
                    1 => K::remove(&mut l, h32, k),
                    _ => K::contains(&l, h32, k),
                }
            };
            prop_assert_eq!(got, flag, "op {}", op);
            prop_assert_eq!(counters(&l), want, "op {}", op);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Every backend against the counter-by-counter oracle, on lines mixing zero,
        /// small and saturated counters.
        #[test]
        fn kernels_match_oracle(
            bytes in prop::array::uniform32(prop::sample::select(vec![0u8, 0x01, 0x10, 0x11, 0xF0, 0x0F, 0xFF, 0xE1, 0x1E, 0x22])),
            more in prop::array::uniform32(any::<u8>()),
            h32: u32,
            k in 1u32..=crate::layout::MAX_HASHES,
        ) {
            let mut all = [0u8; 64];
            all[..32].copy_from_slice(&bytes);
            all[32..].copy_from_slice(&more);
            let line = line_from(&all);
            check::<Portable>(&line, h32, k)?;
            #[cfg(target_arch = "x86_64")]
            if backend_available(Backend::Avx2) {
                check::<Avx2>(&line, h32, k)?;
            }
            #[cfg(target_arch = "x86_64")]
            if backend_available(Backend::Avx512) {
                check::<Avx512>(&line, h32, k)?;
            }
        }
    }

    /// Names on stderr each kernel `kernels_match_oracle` cannot check on this CPU (so a
    /// skip is never silent; `tests/backends.rs` fails when the CPU's flags allow a
    /// backend the filter refuses).
    #[test]
    fn kernel_oracle_names_what_it_skips() {
        for backend in [Backend::Avx2, Backend::Avx512] {
            if !backend_available(backend) {
                bloomforge_testkit::cpu::report(&format!(
                    "counting: kernels_match_oracle skips {} here (the CPU lacks it)",
                    backend.name()
                ));
            }
        }
    }
}
