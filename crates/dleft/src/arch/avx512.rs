//! AVX-512 kernel (x86-64 with AVX-512 F, VL, DQ, BW, VBMI and BITALG) for the commonest table:
//! the general permutation map (`B` not a power of two, every remainder equal), `d = 4`
//! subtables, buckets of at most 16 bytes (`SHAPE_SMALL`: every sized filter with
//! `r <= 12` and 4-bit counters, or `r <= 14` with 2-bit ones) and `B < 2^32`.
//!
//! A query or update of one key runs without a loop and with few instructions, so that
//! many keys' cache misses are in flight at once even on the single-key path:
//! - locating: the four subtables' `g_i(v) = fast_range(k_i v + s_i, B)` in the four
//!   64-bit lanes of one register (`vpmullq`, and the high half of the 64 x 32-bit
//!   product from two `vpmuludq`), the wrap-around `u + g_i(v) mod B` as one unsigned
//!   minimum of `b` and `b - B`, then the four byte offsets; all four buckets' loads
//!   issue before the first compare;
//! - matching: buckets 0-1 and 2-3 in two 256-bit loads (16 bytes each), one `vpermb`
//!   each puts every cell into its own 32-bit lane of a 512-bit register, then per half one
//!   `vptestmd` (occupied: counter field nonzero) and one masked `vpcmpeqd` against the
//!   query remainder shifted to each lane's bit offset (cells compared in place). The two
//!   16-bit mask registers are the packed `Scan4` masks (bit `8 i + j`: cell `j` of
//!   bucket `i`), with no branch;
//! - an insert's choice of bucket: one `vpopcntb` counts the four buckets' loads and one
//!   `phminposuw` picks the least loaded (leftmost on ties).
//!
//! Everything else (other shapes, `d != 4`) runs the AVX2 kernel, which this CPU has; the
//! filter picks this kernel only for the tables it covers (`route_of` in the filter).

use super::{avx2::Avx2, Backend, Kernel, Scan, Scan4};
use crate::layout::{split_hash, Geometry, Permutations, SHAPE_SMALL};
use core::arch::x86_64::*;

/// The AVX-512 kernel.
pub(crate) struct Avx512;

/// Buckets `buckets[i]` and `buckets[i + 1]` (16 bytes each) in the low 256 bits of a
/// register (the rest undefined), bucket `i` first.
///
/// # Safety
/// - `i + 1 < 8` (a larger `i` panics on the bounds-checked array).
/// - `buckets[i]` and `buckets[i + 1]` are each valid for 16-byte reads.
/// - The CPU must support AVX2 and AVX-512 F; callers check with `kernel_is_avx512`.
#[inline(always)]
unsafe fn load2(buckets: &[*const u8; 8], i: usize) -> __m512i {
    // SAFETY: forwarded contract (16-byte unaligned loads).
    unsafe {
        _mm512_castsi256_si512(_mm256_inserti128_si256::<1>(
            _mm256_castsi128_si256(_mm_loadu_si128(buckets[i].cast())),
            _mm_loadu_si128(buckets[i + 1].cast()),
        ))
    }
}

/// Hit and occupancy masks of the four buckets `buckets[..4]`, all looked up for `rem`:
/// bit `8 i + j` is cell `j` of bucket `i` (cells `j >= w` clear).
///
/// # Safety
/// - `g.shape() == SHAPE_SMALL` (each bucket's cells lie in its first 16 bytes, the reach
///   of the `vpermb` table).
/// - Each `buckets[i]`, `i < 4`, is valid for 16-byte reads.
/// - The CPU must support AVX2 and AVX-512 F, VL, BW and VBMI; callers check with
///   `kernel_is_avx512`.
#[inline(always)]
unsafe fn masks4(g: &Geometry, buckets: &[*const u8; 8], rem: u32) -> (u32, u32) {
    // SAFETY: forwarded contract; the 16-lane tables and the `vpermb` table are 64
    // bytes.
    unsafe {
        // Buckets 0-1 and 2-3 in two registers, each cell in its own lane (the indexes
        // reach only the low 256 bits).
        let cells_of = _mm512_loadu_si512(g.vpermb.as_ptr().cast());
        let lo = _mm512_permutexvar_epi8(cells_of, load2(buckets, 0));
        let hi = _mm512_permutexvar_epi8(cells_of, load2(buckets, 2));
        let rem_lanes = _mm512_loadu_si512(g.rem_lanes16.as_ptr().cast());
        let counter_lanes = _mm512_loadu_si512(g.counter_lanes16.as_ptr().cast());
        let shift = _mm512_loadu_si512(g.shuffle_shift16.as_ptr().cast());
        let q = _mm512_sllv_epi32(_mm512_set1_epi32(rem as i32), shift);
        // Lanes past the bucket's cells have empty masks: never occupied, never hits.
        let occ_lo = _mm512_test_epi32_mask(lo, counter_lanes);
        let occ_hi = _mm512_test_epi32_mask(hi, counter_lanes);
        let hit_lo = _mm512_mask_cmpeq_epi32_mask(occ_lo, _mm512_and_si512(lo, rem_lanes), q);
        let hit_hi = _mm512_mask_cmpeq_epi32_mask(occ_hi, _mm512_and_si512(hi, rem_lanes), q);
        (
            u32::from(hit_lo) | u32::from(hit_hi) << 16,
            u32::from(occ_lo) | u32::from(occ_hi) << 16,
        )
    }
}

/// The byte offsets of the four candidate buckets of hash `h` under the general map
/// ([`crate::layout::GeneralMap`]), and its remainder `v`.
///
/// # Safety
/// - `g.d >= 4`, `!perm.pow2` and `g.buckets <= u32::MAX`: the 64 x 32-bit `fast_range`
///   gives a bucket below `B` only for `B < 2^32`, and the offsets are used as in-bounds
///   bucket offsets by the callers; `perm` is the permutations of `g`.
/// - The CPU must support AVX2 and AVX-512 F, VL and DQ; callers check with
///   `kernel_is_avx512`.
///
/// Nothing is read through a pointer (only `g`'s and `perm`'s arrays).
#[inline(always)]
pub(crate) unsafe fn offsets4_general(
    g: &Geometry,
    perm: &Permutations,
    h: u64,
) -> ([usize; 4], u32) {
    debug_assert!(!perm.pow2 && g.d >= 4 && g.buckets <= u64::from(u32::MAX));
    let (u, v) = split_hash(g, h);
    // SAFETY: the permutation tables hold 8 entries each (4 are read); register-only
    // intrinsics otherwise; features from the caller.
    unsafe {
        let x = _mm256_add_epi64(
            _mm256_mullo_epi64(
                _mm256_set1_epi64x(v as i64),
                _mm256_loadu_si256(perm.mult.as_ptr().cast()),
            ),
            _mm256_loadu_si256(perm.add.as_ptr().cast()),
        );
        // fast_range(x, B) = (x B) >> 64 with B < 2^32: (x_hi B + (x_lo B >> 32)) >> 32,
        // which cannot overflow 64 bits.
        let b = _mm256_set1_epi64x(g.buckets as i64);
        let lo = _mm256_mul_epu32(x, b);
        let hi = _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), b);
        let shift = _mm256_srli_epi64::<32>(_mm256_add_epi64(hi, _mm256_srli_epi64::<32>(lo)));
        // u + shift < 2B; subtract B where it reaches B (else `b - B` wraps above `b`).
        let bucket = _mm256_add_epi64(shift, _mm256_set1_epi64x(u as i64));
        let bucket = _mm256_min_epu64(bucket, _mm256_sub_epi64(bucket, b));
        let offset = _mm256_add_epi64(
            _mm256_mul_epu32(bucket, _mm256_set1_epi64x(g.bucket_bytes as i64)),
            _mm256_loadu_si256(perm.base.as_ptr().cast()),
        );
        let o01 = _mm256_castsi256_si128(offset);
        let o23 = _mm256_extracti128_si256::<1>(offset);
        (
            [
                _mm_cvtsi128_si64(o01) as usize,
                _mm_extract_epi64::<1>(o01) as usize,
                _mm_cvtsi128_si64(o23) as usize,
                _mm_extract_epi64::<1>(o23) as usize,
            ],
            v as u32,
        )
    }
}

// SAFETY: every method uses AVX-512 F / VL / DQ / BW / VBMI and AVX2 intrinsics only; the
// trait contract makes callers guarantee them.
unsafe impl Kernel for Avx512 {
    const BACKEND: Backend = Backend::Avx512;
    const LOCATE4_GENERAL: bool = true;

    /// [`Kernel::locate4_general`] in the four 64-bit lanes of one register.
    ///
    /// # Safety
    /// - The CPU must support AVX2 and AVX-512 F, VL, DQ, BW, VBMI and BITALG; callers check
    ///   with `kernel_is_avx512`.
    /// - `g.d >= 4`, `!perm.pow2` and `g.buckets <= u32::MAX` (see [`offsets4_general`]);
    ///   `perm` is the permutations of `g`.
    ///
    /// Nothing is dereferenced (the pointers are formed with wrapping arithmetic).
    #[inline(always)]
    unsafe fn locate4_general(
        g: &Geometry,
        perm: &Permutations,
        table: *const u8,
        h: u64,
        buckets: &mut [*const u8; 8],
    ) -> u32 {
        // SAFETY: forwarded contract.
        let (offsets, rem) = unsafe { offsets4_general(g, perm, h) };
        for (p, o) in buckets.iter_mut().zip(offsets) {
            *p = table.wrapping_add(o);
        }
        rem
    }

    /// [`Kernel::pick4`] with one `vpopcntb` and one `phminposuw`.
    ///
    /// # Safety
    /// The CPU must support AVX-512 BITALG and VL (part of the kernel's features: callers check
    /// with `kernel_is_avx512`). There is no other precondition.
    #[inline(always)]
    unsafe fn pick4(occupied: u32, cell_mask: u32) -> Option<(usize, u32)> {
        // Keys `load * 4 + i` (at most 35) as words, the other words 255: one `vpopcntb`
        // counts the four loads, one `phminposuw` finds the smallest key, which is the
        // least-loaded bucket with the leftmost winning ties (the keys differ in `i`).
        // SAFETY: register-only intrinsics; the caller guarantees AVX-512 BITALG and VL.
        let i = unsafe {
            let loads = _mm_popcnt_epi8(_mm_cvtsi32_si128(occupied as i32));
            let keys = _mm_or_si128(
                _mm_slli_epi16::<2>(loads),
                _mm_setr_epi8(0, 1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
            );
            (_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_cvtepu8_epi16(keys))) & 3) as u32
        };
        let free = !(occupied >> (8 * i)) & cell_mask;
        if free == 0 {
            return None;
        }
        Some((i as usize, free.trailing_zeros()))
    }

    /// [`Kernel::scan`]: the AVX2 kernel.
    ///
    /// # Safety
    /// As for [`Kernel::scan`] with the AVX2 kernel: the CPU must support AVX2 (implied by the
    /// kernel's features, checked with `kernel_is_avx512`), `bucket` is valid for reads of
    /// `g.bucket_bytes + SLACK` bytes, and `SHAPE` is `SHAPE_ANY` or `g.shape()`.
    #[inline(always)]
    unsafe fn scan<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> Scan {
        // SAFETY: forwarded contract; an AVX-512 CPU has AVX2.
        unsafe { Avx2::scan::<SHAPE>(g, bucket, rem) }
    }

    /// [`Kernel::any_match`]: `masks4` for four `SHAPE_SMALL` buckets and one remainder, the
    /// AVX2 kernel otherwise.
    ///
    /// # Safety
    /// - The CPU must support AVX2 and AVX-512 F, VL, DQ, BW, VBMI and BITALG; callers check
    ///   with `kernel_is_avx512`.
    /// - `d <= 8`, and each `buckets[i]`, `i < d`, is valid for reads of
    ///   `g.bucket_bytes + SLACK` bytes.
    /// - `SHAPE` is `SHAPE_ANY` or `g.shape()`.
    #[inline(always)]
    unsafe fn any_match<const SHAPE: u8>(
        g: &Geometry,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        d: usize,
        no_zero_rem: bool,
        same_rem: bool,
    ) -> bool {
        // SAFETY: forwarded contract; `SHAPE_SMALL` buckets are at most 16 bytes and
        // `d == 4` buckets are given; an AVX-512 CPU has AVX2.
        unsafe {
            if SHAPE == SHAPE_SMALL && same_rem && d == 4 {
                return masks4(g, buckets, rems[0]).0 != 0;
            }
            Avx2::any_match::<SHAPE>(g, buckets, rems, d, no_zero_rem, same_rem)
        }
    }

    /// [`Kernel::scan4`]: `masks4` for `SHAPE_SMALL` buckets and one remainder, the AVX2
    /// kernel otherwise.
    ///
    /// # Safety
    /// - The CPU must support AVX2 and AVX-512 F, VL, DQ, BW, VBMI and BITALG; callers check
    ///   with `kernel_is_avx512`.
    /// - `g.cells <= 8`, and each `buckets[i]`, `i < 4`, is valid for reads of
    ///   `g.bucket_bytes + SLACK` bytes.
    /// - `SHAPE` is `SHAPE_ANY` or `g.shape()`.
    #[inline(always)]
    unsafe fn scan4<const SHAPE: u8>(
        g: &Geometry,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        same_rem: bool,
    ) -> Scan4 {
        // SAFETY: as in `any_match`.
        unsafe {
            if SHAPE == SHAPE_SMALL && same_rem {
                let (hits, occupied) = masks4(g, buckets, rems[0]);
                return Scan4 { hits, occupied };
            }
            Avx2::scan4::<SHAPE>(g, buckets, rems, same_rem)
        }
    }

    /// [`Kernel::matches`]: the AVX2 kernel.
    ///
    /// # Safety
    /// As for `scan`: the CPU must support AVX2, `bucket` is valid for reads of
    /// `g.bucket_bytes + SLACK` bytes, and `SHAPE` is `SHAPE_ANY` or `g.shape()`.
    #[inline(always)]
    unsafe fn matches<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> u32 {
        // SAFETY: forwarded contract; an AVX-512 CPU has AVX2.
        unsafe { Avx2::matches::<SHAPE>(g, bucket, rem) }
    }
}
