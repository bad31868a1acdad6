//! AVX2 kernels (x86-64).
//!
//! Blocked probes: the 16 32-bit words of a 512-bit block sit in two registers; eight probes
//! are computed at once (`h * C^(j+1)`, top 9 bits), their words fetched with `vpermd` from
//! both halves and blended on the product's sign bit, and tested with one compare and a
//! byte mask (`vpcmpeqd` + `vpmovmskb`).
//! Split-block probes: one multiply by the eight salts, `>> 27`, `1 << x` per lane, one
//! `vptest`.

use super::Kernel;
use crate::block::{Block256, Block512, BLOCKED_POWERS, SPLIT_SALTS};
use core::arch::x86_64::*;

/// The AVX2 kernel.
pub(crate) struct Avx2;

/// `LANE_ONES[n]`: 1 in lanes `< n`, 0 in the rest (`1 << x` of an inactive lane is 0).
static LANE_ONES: [[u32; 8]; 9] = {
    let mut t = [[0u32; 8]; 9];
    let mut n = 0;
    while n <= 8 {
        let mut i = 0;
        while i < n {
            t[n][i] = 1;
            i += 1;
        }
        n += 1;
    }
    t
};

// SAFETY: every method uses AVX2 intrinsics only; the trait contract makes callers
// guarantee AVX2.
unsafe impl Kernel for Avx2 {
    const GROUPED_BLOCKED_INSERT: bool = true;

    /// [`Kernel::blocked_contains`] with AVX2, eight probes per pass.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `Backend::Avx2.is_available()` (or
    ///   `Backend::Avx512.is_available()`, which implies it).
    /// - `k <= 64`: each pass loads `BLOCKED_POWERS[j..j + 8]` for `j = 0, 8, ..` while
    ///   `j < k`, which stays inside the 64-entry table only for `k <= 64`.
    ///
    /// `block` is read with aligned 32-byte loads, which its type's 64-byte alignment allows.
    #[inline(always)]
    unsafe fn blocked_contains(block: &Block512, h32: u32, k: u32) -> bool {
        // SAFETY: `block` is 64-byte aligned (repr(align(64))), so both aligned 32-byte loads
        // are in bounds; `j + 8 <= 64 = BLOCKED_POWERS.len()` because j < k <= 64 steps by
        // 8; `LANE_ONES[n]` for n <= 8 is in bounds; the caller guarantees AVX2.
        unsafe {
            let base = block.words.as_ptr().cast::<__m256i>();
            let lo = _mm256_load_si256(base);
            let hi = _mm256_load_si256(base.add(1));
            let h = _mm256_set1_epi32(h32 as i32);
            // Eight probes per pass; the common k <= 8 is one pass with no branch on the
            // loaded block (out of cache that keeps more keys' misses in flight). Each lane
            // reads everything from `prod = h * C^(j+1)`, whose top 9 bits are the probe
            // position p: `vpermd` takes the word within a half from bits 28..30 (p's bits
            // 5..7), `vblendvps` the half from the sign bit (p's bit 8), and the bit is
            // p & 31 = (prod >> 23) & 31. Inactive lanes shift a 0. Fewer micro-ops per key
            // than deriving p first: on a Zen 3 that is what bounds how many single-key
            // queries overlap their cache misses.
            let mut j = 0u32;
            loop {
                let pows = _mm256_loadu_si256(BLOCKED_POWERS.as_ptr().add(j as usize).cast());
                let prod = _mm256_mullo_epi32(h, pows);
                let idx = _mm256_srli_epi32::<28>(prod);
                let from_lo = _mm256_permutevar8x32_epi32(lo, idx);
                let from_hi = _mm256_permutevar8x32_epi32(hi, idx);
                let words = _mm256_castps_si256(_mm256_blendv_ps(
                    _mm256_castsi256_ps(from_lo),
                    _mm256_castsi256_ps(from_hi),
                    _mm256_castsi256_ps(prod),
                ));
                let shift = _mm256_and_si256(_mm256_srli_epi32::<23>(prod), _mm256_set1_epi32(31));
                let ones = _mm256_loadu_si256(LANE_ONES[(k - j).min(8) as usize].as_ptr().cast());
                let bits = _mm256_sllv_epi32(ones, shift);
                // Every probe bit set iff (words & bits) == bits in every lane. LLVM rewrites
                // `vptest`'s carry form into an and-not plus a horizontal OR reduction (six
                // instructions); compare + byte mask lowers as written.
                let found = _mm256_cmpeq_epi32(_mm256_and_si256(words, bits), bits);
                let hit = _mm256_movemask_epi8(found) == -1;
                j += 8;
                if !hit || j >= k {
                    return hit;
                }
            }
        }
    }

    /// [`Kernel::blocked_mask`] with AVX2.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `Backend::Avx2.is_available()` (or
    ///   `Backend::Avx512.is_available()`, which implies it).
    /// - `k <= 64` (a larger `k` panics in `blocked_position` rather than reading out of
    ///   bounds).
    #[inline(always)]
    unsafe fn blocked_mask(h32: u32, k: u32) -> Block512 {
        // SAFETY: the caller guarantees AVX2; the stores go to a local 64-byte-aligned block.
        unsafe {
            let ones = _mm256_set1_epi32(1);
            let off_lo = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
            let off_hi = _mm256_add_epi32(off_lo, _mm256_set1_epi32(256));
            let mut m_lo = _mm256_setzero_si256();
            let mut m_hi = _mm256_setzero_si256();
            for j in 0..k as usize {
                // Lane w receives 1 << (p - 32 w) when 0 <= p - 32 w < 32; vpsllvd yields 0
                // for every other (unsigned) count, so no compare is needed.
                let p = _mm256_set1_epi32(super::scalar::blocked_position(h32, j) as i32);
                m_lo = _mm256_or_si256(m_lo, _mm256_sllv_epi32(ones, _mm256_sub_epi32(p, off_lo)));
                m_hi = _mm256_or_si256(m_hi, _mm256_sllv_epi32(ones, _mm256_sub_epi32(p, off_hi)));
            }
            let mut out = Block512::ZERO;
            let dst = out.words.as_mut_ptr().cast::<__m256i>();
            _mm256_store_si256(dst, m_lo);
            _mm256_store_si256(dst.add(1), m_hi);
            out
        }
    }

    /// [`Kernel::blocked_insert`] with AVX2.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `Backend::Avx2.is_available()` (or
    ///   `Backend::Avx512.is_available()`, which implies it).
    /// - `k <= 64`, as for [`Kernel::blocked_mask`].
    ///
    /// `block` is read and written with aligned 32-byte accesses, which its type's 64-byte
    /// alignment allows.
    #[inline(always)]
    unsafe fn blocked_insert(block: &mut Block512, h32: u32, k: u32) -> bool {
        // SAFETY: the caller guarantees AVX2; `block` is 64-byte aligned so both aligned
        // 32-byte loads and stores stay inside it.
        unsafe {
            let mask = Self::blocked_mask(h32, k);
            let base = block.words.as_mut_ptr().cast::<__m256i>();
            let mbase = mask.words.as_ptr().cast::<__m256i>();
            let (lo, hi) = (_mm256_load_si256(base), _mm256_load_si256(base.add(1)));
            let (mlo, mhi) = (_mm256_load_si256(mbase), _mm256_load_si256(mbase.add(1)));
            let present = _mm256_testc_si256(lo, mlo) & _mm256_testc_si256(hi, mhi) != 0;
            _mm256_store_si256(base, _mm256_or_si256(lo, mlo));
            _mm256_store_si256(base.add(1), _mm256_or_si256(hi, mhi));
            present
        }
    }

    /// [`Kernel::split_mask`] with AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2; callers check with `Backend::Avx2.is_available()` (or
    /// `Backend::Avx512.is_available()`, which implies it). There is no other
    /// precondition.
    #[inline(always)]
    unsafe fn split_mask(h32: u32) -> Block256 {
        // SAFETY: the caller guarantees AVX2; the store goes to a local 32-byte-aligned block.
        unsafe {
            let mut out = Block256::ZERO;
            _mm256_store_si256(out.words.as_mut_ptr().cast(), split_mask_reg(h32));
            out
        }
    }

    /// [`Kernel::split_contains`] with AVX2: one aligned 32-byte load and a `vptest`.
    ///
    /// # Safety
    /// The CPU must support AVX2; callers check with `Backend::Avx2.is_available()` (or
    /// `Backend::Avx512.is_available()`, which implies it). There is no other
    /// precondition (`block` is 32-byte aligned by its type).
    #[inline(always)]
    unsafe fn split_contains(block: &Block256, h32: u32) -> bool {
        // SAFETY: `block` is 32-byte aligned; the caller guarantees AVX2.
        unsafe {
            let words = _mm256_load_si256(block.words.as_ptr().cast());
            _mm256_testc_si256(words, split_mask_reg(h32)) != 0
        }
    }

    /// [`Kernel::split_insert`] with AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2; callers check with `Backend::Avx2.is_available()` (or
    /// `Backend::Avx512.is_available()`, which implies it). There is no other
    /// precondition (`block` is 32-byte aligned by its type).
    #[inline(always)]
    unsafe fn split_insert(block: &mut Block256, h32: u32) -> bool {
        // SAFETY: `block` is 32-byte aligned; the caller guarantees AVX2.
        unsafe {
            let ptr = block.words.as_mut_ptr().cast::<__m256i>();
            let words = _mm256_load_si256(ptr);
            let mask = split_mask_reg(h32);
            _mm256_store_si256(ptr, _mm256_or_si256(words, mask));
            _mm256_testc_si256(words, mask) != 0
        }
    }
}

/// The split-block mask of `h32` in one register.
///
/// # Safety
/// The CPU must support AVX2; callers check with `Backend::Avx2.is_available()` (or
/// `Backend::Avx512.is_available()`, which implies it). There is no other
/// precondition.
#[inline(always)]
pub(crate) unsafe fn split_mask_reg(h32: u32) -> __m256i {
    // SAFETY: `SPLIT_SALTS` holds eight u32 (32 bytes) for the unaligned load; the caller
    // guarantees AVX2.
    unsafe {
        let salts = _mm256_loadu_si256(SPLIT_SALTS.as_ptr().cast());
        let bit = _mm256_srli_epi32::<27>(_mm256_mullo_epi32(_mm256_set1_epi32(h32 as i32), salts));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), bit)
    }
}
