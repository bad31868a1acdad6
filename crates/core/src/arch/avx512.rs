//! AVX-512F kernels (x86-64).
//!
//! A 512-bit block is one register of sixteen 32-bit words: sixteen probes are computed at
//! once and their words fetched with a single `vpermd` (`_mm512_permutexvar_epi32`), then
//! tested under a lane mask. Split-block probes reuse the AVX2 kernel (a 256-bit block is
//! one AVX2 register; wider registers do not help a single key).

use super::avx2::Avx2;
use super::Kernel;
use crate::block::{Block256, Block512, BLOCKED_POWERS};
use core::arch::x86_64::*;

/// The AVX-512 kernel.
pub(crate) struct Avx512;

/// Probe positions `j0..j0+16` of `h32` as sixteen 32-bit lanes.
#[inline(always)]
unsafe fn positions16(h32: u32, j0: usize) -> __m512i {
    // SAFETY: `j0 + 16 <= 64` (callers step j0 by 16 below k <= 64); unaligned load; the
    // caller guarantees AVX-512F.
    unsafe {
        let pows = _mm512_loadu_si512(BLOCKED_POWERS.as_ptr().add(j0).cast());
        _mm512_srli_epi32::<23>(_mm512_mullo_epi32(_mm512_set1_epi32(h32 as i32), pows))
    }
}

#[inline(always)]
fn lane_mask(n: u32) -> __mmask16 {
    if n >= 16 {
        0xffff
    } else {
        ((1u32 << n) - 1) as __mmask16
    }
}

// SAFETY: every method uses AVX2 / AVX-512F intrinsics only; the trait contract makes callers
// guarantee both.
unsafe impl Kernel for Avx512 {
    #[inline(always)]
    unsafe fn blocked_contains(block: &Block512, h32: u32, k: u32) -> bool {
        // SAFETY: `block` is 64-byte aligned (aligned 64-byte load in bounds); the caller
        // guarantees AVX-512F.
        unsafe {
            let words = _mm512_load_si512(block.words.as_ptr().cast());
            let ones = _mm512_set1_epi32(1);
            // One pass covers k <= 16 (every practical k); it is kept branch-light because
            // out of cache the number of keys in flight is bounded by instructions per key.
            let mut j = 0u32;
            loop {
                let p = positions16(h32, j as usize);
                let picked = _mm512_permutexvar_epi32(_mm512_srli_epi32::<5>(p), words);
                let bit = _mm512_and_si512(p, _mm512_set1_epi32(31));
                let shifted = _mm512_srlv_epi32(picked, bit);
                let want = lane_mask(k - j);
                let hit = _mm512_mask_test_epi32_mask(want, shifted, ones) == want;
                j += 16;
                if !hit || j >= k {
                    return hit;
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn blocked_mask(h32: u32, k: u32) -> Block512 {
        // SAFETY: the caller guarantees AVX-512F; the store goes to a local 64-byte-aligned
        // block.
        unsafe {
            let ones = _mm512_set1_epi32(1);
            let offsets = _mm512_setr_epi32(
                0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480,
            );
            let mut mask = _mm512_setzero_si512();
            for j in 0..k as usize {
                // Lane w gets 1 << (p - 32 w) when that count is in 0..32; vpsllvd gives 0
                // for every other (unsigned) count.
                let p = _mm512_set1_epi32(super::scalar::blocked_position(h32, j) as i32);
                mask = _mm512_or_si512(mask, _mm512_sllv_epi32(ones, _mm512_sub_epi32(p, offsets)));
            }
            let mut out = Block512::ZERO;
            _mm512_store_si512(out.words.as_mut_ptr().cast(), mask);
            out
        }
    }

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

    #[inline(always)]
    unsafe fn split_mask(h32: u32) -> Block256 {
        // SAFETY: AVX-512F implies the AVX2 the caller also guarantees for this backend.
        unsafe { Avx2::split_mask(h32) }
    }

    #[inline(always)]
    unsafe fn split_contains(block: &Block256, h32: u32) -> bool {
        // SAFETY: as above, AVX2 is available.
        unsafe { Avx2::split_contains(block, h32) }
    }

    #[inline(always)]
    unsafe fn split_insert(block: &mut Block256, h32: u32) -> bool {
        // SAFETY: as above, AVX2 is available.
        unsafe { Avx2::split_insert(block, h32) }
    }
}
