//! AVX-512F kernels (x86-64).
//!
//! A 512-bit block is one register of eight 64-bit words: eight probes are computed at once
//! (`vpmuludq`) and their words fetched with a single `vpermq`, then tested under a lane
//! mask. Split-block probes reuse the AVX2 kernel (a 256-bit block is
//! one AVX2 register; wider registers do not help a single key).

use super::avx2::Avx2;
use super::Kernel;
use crate::block::{Block256, Block512, BLOCKED_POWERS_U64};
use core::arch::x86_64::*;

/// The AVX-512 kernel.
pub(crate) struct Avx512;

#[inline(always)]
fn lane_mask8(n: u32) -> __mmask8 {
    if n >= 8 {
        0xff
    } else {
        ((1u32 << n) - 1) as __mmask8
    }
}

// SAFETY: every method uses AVX2 / AVX-512F intrinsics only; the trait contract makes callers
// guarantee both.
unsafe impl Kernel for Avx512 {
    // Zen 5, 100M keys, 125 MB filter: 7.4-7.9 ns/key one key per prefetch against
    // 9.4 grouped (the AVX2 kernel on the same machine: 10.1 grouped, 13.5-14.4 not).
    const GROUPED_BLOCKED_INSERT: bool = false;

    /// [`Kernel::blocked_contains`] with AVX-512F, eight probes per pass in 64-bit lanes.
    ///
    /// # Safety
    /// - The CPU must support AVX2 and AVX-512F; callers check with
    ///   `Backend::Avx512.is_available()`.
    /// - `k <= 64`: each pass loads `BLOCKED_POWERS_U64[j..j + 8]` for `j = 0, 8, ..` while
    ///   `j < k`, which stays inside the 64-entry table only for `k <= 64`.
    ///
    /// `block` is read with one aligned 64-byte load, which its type's alignment allows.
    #[inline(always)]
    unsafe fn blocked_contains(block: &Block512, h32: u32, k: u32) -> bool {
        // Eight probes per pass in 64-bit lanes: `vpmuludq` forms h * C^(j+1) (its low 32
        // bits are the probe hash), `vpermq` fetches each probe's word from the block held
        // in one register, `vpsllvq` + `vptestmq` test the bits. Port 0 is the bottleneck
        // for 512-bit integer ops on Intel cores; this sequence keeps four of its
        // micro-ops there, where the 16-lane `vpmulld` form needs seven.
        // SAFETY: `block` is 64-byte aligned (aligned 64-byte load in bounds);
        // `j + 8 <= 64 = BLOCKED_POWERS_U64.len()` because j < k <= 64 steps by 8; the
        // caller guarantees AVX-512F.
        unsafe {
            let words = _mm512_load_si512(block.words.as_ptr().cast());
            let h = _mm512_set1_epi64(i64::from(h32));
            let ones = _mm512_set1_epi64(1);
            if k <= 8 {
                // The common case without a loop: out of cache, fewer micro-ops per key
                // means more keys' misses in flight in the reorder buffer.
                let pows = _mm512_loadu_si512(BLOCKED_POWERS_U64.as_ptr().cast());
                let prod = _mm512_mul_epu32(h, pows);
                let picked = _mm512_permutexvar_epi64(_mm512_srli_epi64::<29>(prod), words);
                let bit = _mm512_and_si512(_mm512_srli_epi64::<23>(prod), _mm512_set1_epi64(63));
                let want = ((1u32 << k) - 1) as __mmask8;
                return _mm512_mask_test_epi64_mask(want, picked, _mm512_sllv_epi64(ones, bit))
                    == want;
            }
            let mut j = 0u32;
            loop {
                let pows = _mm512_loadu_si512(BLOCKED_POWERS_U64.as_ptr().add(j as usize).cast());
                let prod = _mm512_mul_epu32(h, pows);
                // vpermq reads only the low 3 bits of each index: bits 29..31 = p >> 6.
                let picked = _mm512_permutexvar_epi64(_mm512_srli_epi64::<29>(prod), words);
                let bit = _mm512_and_si512(_mm512_srli_epi64::<23>(prod), _mm512_set1_epi64(63));
                let want = lane_mask8(k - j);
                let hit =
                    _mm512_mask_test_epi64_mask(want, picked, _mm512_sllv_epi64(ones, bit)) == want;
                j += 8;
                if !hit || j >= k {
                    return hit;
                }
            }
        }
    }

    /// [`Kernel::blocked_mask`] with AVX-512F.
    ///
    /// # Safety
    /// - The CPU must support AVX2 and AVX-512F; callers check with
    ///   `Backend::Avx512.is_available()`.
    /// - `k <= 64`: as in [`Kernel::blocked_contains`], the multipliers are loaded eight at a
    ///   time from a 64-entry table.
    #[inline(always)]
    unsafe fn blocked_mask(h32: u32, k: u32) -> Block512 {
        // SAFETY: the caller guarantees AVX-512F; the store goes to a local 64-byte-aligned
        // block; `j + 8 <= 64 = BLOCKED_POWERS_U64.len()` because j < k <= 64 steps by 8.
        unsafe {
            // Eight probe positions at a time in 64-bit lanes (as `blocked_contains`), then
            // each broadcast by `vpermq` to every word lane, which takes 1 << (p - 64 w)
            // when that count is in 0..64 (`vpsllvq` gives 0 for every other unsigned
            // count): four vector ops a probe, none of them scalar.
            let h = _mm512_set1_epi64(i64::from(h32));
            let ones = _mm512_set1_epi64(1);
            let offsets = _mm512_setr_epi64(0, 64, 128, 192, 256, 320, 384, 448);
            let mut mask = _mm512_setzero_si512();
            let mut j = 0u32;
            while j < k {
                let pows = _mm512_loadu_si512(BLOCKED_POWERS_U64.as_ptr().add(j as usize).cast());
                let pos = _mm512_and_si512(
                    _mm512_srli_epi64::<23>(_mm512_mul_epu32(h, pows)),
                    _mm512_set1_epi64(511),
                );
                for lane in 0..(k - j).min(8) {
                    let p = _mm512_permutexvar_epi64(_mm512_set1_epi64(i64::from(lane)), pos);
                    mask = _mm512_or_si512(
                        mask,
                        _mm512_sllv_epi64(ones, _mm512_sub_epi64(p, offsets)),
                    );
                }
                j += 8;
            }
            let mut out = Block512::ZERO;
            _mm512_store_si512(out.words.as_mut_ptr().cast(), mask);
            out
        }
    }

    /// [`Kernel::blocked_insert`] with AVX-512F.
    ///
    /// # Safety
    /// - The CPU must support AVX2 and AVX-512F; callers check with
    ///   `Backend::Avx512.is_available()`.
    /// - `k <= 64`, as for [`Kernel::blocked_mask`].
    ///
    /// `block` is read and written with aligned 64-byte accesses, which its type allows.
    #[inline(always)]
    unsafe fn blocked_insert(block: &mut Block512, h32: u32, k: u32) -> bool {
        // SAFETY: `block` is 64-byte aligned (aligned 64-byte load/store in bounds); the
        // caller guarantees AVX-512F.
        unsafe {
            let mask = Self::blocked_mask(h32, k);
            let ptr = block.words.as_mut_ptr().cast::<__m512i>();
            let words = _mm512_load_si512(ptr);
            let m = _mm512_load_si512(mask.words.as_ptr().cast());
            let missing = _mm512_andnot_si512(words, m);
            _mm512_store_si512(ptr, _mm512_or_si512(words, m));
            _mm512_test_epi32_mask(missing, missing) == 0
        }
    }

    /// [`Kernel::split_mask`]: the AVX2 kernel.
    ///
    /// # Safety
    /// The CPU must support AVX2 and AVX-512F; callers check with
    /// `Backend::Avx512.is_available()`, which checks AVX2 as well (the AVX2 kernel runs
    /// here).
    #[inline(always)]
    unsafe fn split_mask(h32: u32) -> Block256 {
        // SAFETY: AVX-512F implies the AVX2 the caller also guarantees for this backend.
        unsafe { Avx2::split_mask(h32) }
    }

    /// [`Kernel::split_contains`]: the AVX2 kernel.
    ///
    /// # Safety
    /// The CPU must support AVX2 and AVX-512F; callers check with
    /// `Backend::Avx512.is_available()`. (The AVX2 kernel runs here.)
    #[inline(always)]
    unsafe fn split_contains(block: &Block256, h32: u32) -> bool {
        // SAFETY: as above, AVX2 is available.
        unsafe { Avx2::split_contains(block, h32) }
    }

    /// [`Kernel::split_insert`]: the AVX2 kernel.
    ///
    /// # Safety
    /// The CPU must support AVX2 and AVX-512F; callers check with
    /// `Backend::Avx512.is_available()`. (The AVX2 kernel runs here.)
    #[inline(always)]
    unsafe fn split_insert(block: &mut Block256, h32: u32) -> bool {
        // SAFETY: as above, AVX2 is available.
        unsafe { Avx2::split_insert(block, h32) }
    }
}
