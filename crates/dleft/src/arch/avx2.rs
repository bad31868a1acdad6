//! AVX2 kernel (x86-64): eight packed cells per group, one compare.
//!
//! Narrow cells (`s <= 25` bits, every sized filter up to `r = 23`): the group's bytes
//! `0..16` go to the lower 128-bit half and bytes `hi_byte..hi_byte + 16` (where cell 4
//! starts) to the upper half; one `vpshufb` puts the four bytes holding cell `j` into
//! 32-bit lane `j` and one `vpsrlvd` aligns the cell to bit 0. Wide cells (`s` up to
//! 32): `vpermd` fetches the word holding cell `j`'s first bit and the next word, and
//! `vpsrlvd` / `vpsllvd` / `vpor` join them. Then one `vpcmpeqd` against the broadcast
//! remainder (after masking the remainder field) finds the candidate cells, as
//! hashbrown's `Group::match_tag` does; an empty cell (counter 0) can only be a
//! candidate for remainder 0, so the counter test runs only when there is a candidate.
//! A bucket of `w <= 8` cells is one group; `w <= 16` is two (cells 8.. start at byte
//! `s`, since eight cells take exactly `s` bytes).
//!
//! The shaped paths (`w <= 8`, narrow cells: every sized filter) skip the `vpsrlvd` when
//! all subtables look for the same remainder (the general map): the cells stay where the
//! shuffle leaves them and are compared, under per-lane masks of their remainder and
//! counter fields, against the query shifted once per operation. A nonzero remainder
//! never matches an empty cell, so a query tests counters only for remainder 0. With
//! `d = 4`, inserts and removes get all four buckets' hits and occupancy as two 32-bit
//! masks ([`Kernel::scan4`]).

use super::{Backend, Kernel, Scan, Scan4};
use crate::layout::{Geometry, SHAPE_ANY, SHAPE_NARROW, SHAPE_SMALL};
use core::arch::x86_64::*;

/// The AVX2 kernel.
pub(crate) struct Avx2;

/// The eight narrow cells (`s <= 25`) starting at `group`, each aligned to bit 0 of its
/// 32-bit lane (bits above `s` hold the following cells: callers mask).
///
/// # Safety
/// - `group` is valid for 32-byte reads: 16 bytes are loaded from `group` and 16 from
///   `group + g.hi_byte`, and `g.hi_byte <= 12` for narrow cells.
/// - `g.narrow` (cells of at most 25 bits, which the byte shuffle can gather).
/// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
#[inline(always)]
unsafe fn unpack_narrow(g: &Geometry, group: *const u8) -> __m256i {
    // SAFETY: forwarded contract; the lane table is 32 bytes.
    unsafe {
        let v = gather_narrow(g, group);
        _mm256_srlv_epi32(v, _mm256_loadu_si256(g.shuffle_shift.as_ptr().cast()))
    }
}

/// The eight narrow cells (`s <= 25`) starting at `group`, cell `j` in lane `j` at bit
/// offset `shuffle_shift[j]` (other cells' bits below and above it: callers mask with the
/// `*_lanes` tables).
///
/// # Safety
/// As for [`unpack_narrow`]: `group` valid for 32-byte reads, `g.narrow`, and the CPU
/// must support AVX2 (callers check with `kernel_is_avx2`).
#[inline(always)]
unsafe fn gather_narrow(g: &Geometry, group: *const u8) -> __m256i {
    // SAFETY: the lane table is 32 bytes; `group` is readable for 32 bytes and
    // `hi_byte + 16 <= 32` for narrow cells (caller); the caller guarantees AVX2.
    unsafe {
        let lo = _mm_loadu_si128(group.cast());
        let hi = _mm_loadu_si128(group.add(g.hi_byte).cast());
        let v = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
        _mm256_shuffle_epi8(v, _mm256_loadu_si256(g.shuffle.as_ptr().cast()))
    }
}

/// [`gather_narrow`] for a bucket of at most 16 bytes (`SHAPE_SMALL`): one broadcast
/// load.
///
/// # Safety
/// As for [`unpack_small`]: `group` valid for 16-byte reads, `g.shape() == SHAPE_SMALL`,
/// and the CPU must support AVX2 (callers check with `kernel_is_avx2`).
#[inline(always)]
unsafe fn gather_small(g: &Geometry, group: *const u8) -> __m256i {
    // SAFETY: `group` is readable for 16 bytes; the lane table is 32 bytes; the caller
    // guarantees AVX2.
    unsafe {
        let v = _mm256_broadcastsi128_si256(_mm_loadu_si128(group.cast()));
        _mm256_shuffle_epi8(v, _mm256_loadu_si256(g.shuffle_small.as_ptr().cast()))
    }
}

/// The cells of a one-group bucket in place ([`gather_narrow`] or [`gather_small`]).
///
/// # Safety
/// - `SHAPE == g.shape()`, which is `SHAPE_SMALL` or `SHAPE_NARROW` (not `SHAPE_ANY`).
/// - `group` is valid for 32-byte reads (16 suffice for `SHAPE_SMALL`).
/// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
#[inline(always)]
unsafe fn gather_shaped<const SHAPE: u8>(g: &Geometry, group: *const u8) -> __m256i {
    // SAFETY: forwarded contract.
    unsafe {
        if SHAPE == SHAPE_SMALL {
            gather_small(g, group)
        } else {
            gather_narrow(g, group)
        }
    }
}

/// Remainder `rem` where [`gather_shaped`] leaves each lane's remainder field.
///
/// # Safety
/// The CPU must support AVX2; callers check with `kernel_is_avx2`. There is no other
/// precondition.
#[inline(always)]
unsafe fn query_lanes(g: &Geometry, rem: u32) -> __m256i {
    // SAFETY: the lane table is 32 bytes; the caller guarantees AVX2.
    unsafe {
        _mm256_sllv_epi32(
            _mm256_set1_epi32(rem as i32),
            _mm256_loadu_si256(g.shuffle_shift.as_ptr().cast()),
        )
    }
}

/// The eight cells starting at `group`, each aligned to bit 0 of its 32-bit lane (bits
/// above `s` hold the following cells: callers mask).
///
/// # Safety
/// - `group` is valid for 32-byte reads.
/// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
#[inline(always)]
unsafe fn unpack(g: &Geometry, group: *const u8) -> __m256i {
    // SAFETY: the lane tables are 32 bytes each; `group` is readable for 32 bytes
    // (caller); the caller guarantees AVX2.
    unsafe {
        if g.narrow {
            unpack_narrow(g, group)
        } else {
            let v = _mm256_loadu_si256(group.cast());
            let lo = _mm256_permutevar8x32_epi32(v, _mm256_loadu_si256(g.word_lo.as_ptr().cast()));
            let hi = _mm256_permutevar8x32_epi32(v, _mm256_loadu_si256(g.word_hi.as_ptr().cast()));
            let lo = _mm256_srlv_epi32(lo, _mm256_loadu_si256(g.shift_lo.as_ptr().cast()));
            let hi = _mm256_sllv_epi32(hi, _mm256_loadu_si256(g.shift_hi.as_ptr().cast()));
            _mm256_or_si256(lo, hi)
        }
    }
}

/// A bucket of at most 16 bytes (`SHAPE_SMALL`): one broadcast load, both halves index
/// the same bytes.
///
/// # Safety
/// - `group` is valid for 16-byte reads.
/// - `g.shape() == SHAPE_SMALL` (the bucket's cells lie in its first 16 bytes).
/// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
#[inline(always)]
unsafe fn unpack_small(g: &Geometry, group: *const u8) -> __m256i {
    // SAFETY: forwarded contract; the lane table is 32 bytes.
    unsafe {
        let v = gather_small(g, group);
        _mm256_srlv_epi32(v, _mm256_loadu_si256(g.shuffle_shift.as_ptr().cast()))
    }
}

/// The first group of cells, unpacked the way `SHAPE` allows.
///
/// # Safety
/// - `group` is valid for 32-byte reads.
/// - `SHAPE` is `SHAPE_ANY` or `g.shape()` (the shaped unpackings need that shape).
/// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
#[inline(always)]
unsafe fn unpack_shaped<const SHAPE: u8>(g: &Geometry, group: *const u8) -> __m256i {
    // SAFETY: forwarded contract; the shape selects an unpacking valid for it.
    unsafe {
        match SHAPE {
            SHAPE_SMALL => unpack_small(g, group),
            SHAPE_NARROW => unpack_narrow(g, group),
            _ => unpack(g, group),
        }
    }
}

/// Lanes whose remainder field equals `rem` (occupied or not).
///
/// # Safety
/// The CPU must support AVX2; callers check with `kernel_is_avx2`. There is no other
/// precondition.
#[inline(always)]
unsafe fn candidates(g: &Geometry, cells: __m256i, rem: u32) -> u32 {
    // SAFETY: register-only AVX2 intrinsics; the caller guarantees AVX2.
    unsafe {
        let rems = _mm256_and_si256(cells, _mm256_set1_epi32(g.rem_mask as i32));
        let eq = _mm256_cmpeq_epi32(rems, _mm256_set1_epi32(rem as i32));
        _mm256_movemask_ps(_mm256_castsi256_ps(eq)) as u32
    }
}

/// Lanes whose counter is 0 (empty cells).
///
/// # Safety
/// The CPU must support AVX2; callers check with `kernel_is_avx2`. There is no other
/// precondition.
#[inline(always)]
unsafe fn empties(g: &Geometry, cells: __m256i) -> u32 {
    // SAFETY: register-only AVX2 intrinsics; the caller guarantees AVX2.
    unsafe {
        let counters = _mm256_and_si256(cells, _mm256_set1_epi32(g.counter_field as i32));
        let empty = _mm256_cmpeq_epi32(counters, _mm256_setzero_si256());
        _mm256_movemask_ps(_mm256_castsi256_ps(empty)) as u32
    }
}

/// Four 8-lane compare masks (lanes 0 or -1) as one 32-bit mask, bit `8 i + j` = lane
/// `j` of `m[i]`.
///
/// # Safety
/// The CPU must support AVX2; callers check with `kernel_is_avx2`. There is no other
/// precondition.
#[inline(always)]
unsafe fn pack4(m: &[__m256i; 4]) -> u32 {
    // SAFETY: register-only AVX2 intrinsics; the caller guarantees AVX2.
    unsafe {
        // Saturating packs keep 0 / -1; they work per 128-bit half, so the bytes come out
        // as (bucket, cells 0-3) dwords in the low half and (bucket, cells 4-7) in the
        // high half: one `vpermd` puts each bucket's eight bytes together. (Measured
        // faster than four `vmovmskps` joined with scalar shifts.)
        let lo = _mm256_packs_epi32(m[0], m[1]);
        let hi = _mm256_packs_epi32(m[2], m[3]);
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(lo, hi), order);
        _mm256_movemask_epi8(bytes) as u32
    }
}

// SAFETY: every method uses AVX2 intrinsics only; the trait contract makes callers
// guarantee AVX2.
unsafe impl Kernel for Avx2 {
    const BACKEND: Backend = Backend::Avx2;

    /// [`Kernel::scan`]: one group of eight cells (two for `w > 8`), one compare each.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
    /// - `bucket` is valid for reads of `g.bucket_bytes + SLACK` bytes: 32 bytes are loaded
    ///   from `bucket` and, for `g.cells > 8`, from `bucket + g.cell_bits` (inside the bucket).
    /// - `SHAPE` is `SHAPE_ANY` or `g.shape()`.
    #[inline(always)]
    unsafe fn scan<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> Scan {
        // SAFETY: a bucket plus the slack is at least 32 bytes from `bucket`, and from the
        // second group's start (`s` bytes in, inside a bucket of more than `s` bytes);
        // `SHAPE` is `SHAPE_ANY` or the geometry's shape.
        unsafe {
            let cells = unpack_shaped::<SHAPE>(g, bucket);
            let mut hit = candidates(g, cells, rem);
            let mut empty = empties(g, cells);
            if SHAPE == SHAPE_ANY && g.cells > 8 {
                let cells = unpack(g, bucket.add(g.cell_bits as usize));
                hit |= candidates(g, cells, rem) << 8;
                empty |= empties(g, cells) << 8;
            }
            Scan {
                matches: hit & !empty & g.cell_mask,
                occupied: !empty & g.cell_mask,
            }
        }
    }

    /// [`Kernel::any_match`], branch-free over the `d` buckets.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
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
        // SAFETY: forwarded contract; `d <= 8` keeps the array indices in range.
        unsafe {
            if SHAPE == SHAPE_ANY && g.cells > 8 {
                return (0..d).any(|i| Self::matches::<SHAPE>(g, buckets[i], rems[i]) != 0);
            }
            if SHAPE != SHAPE_ANY {
                return Self::any_match_in_place::<SHAPE>(
                    g,
                    buckets,
                    rems,
                    d,
                    no_zero_rem,
                    same_rem,
                );
            }
            // Pass 1, branch-free: OR the d compare results; a negative query almost
            // never has a candidate. With `d` a constant the vectors stay in registers.
            let mut cells = [_mm256_setzero_si256(); 8];
            let mut eq = [_mm256_setzero_si256(); 8];
            let mut any = _mm256_setzero_si256();
            let rem_mask = _mm256_set1_epi32(g.rem_mask as i32);
            for i in 0..d {
                cells[i] = unpack_shaped::<SHAPE>(g, buckets[i]);
                let rems_i = _mm256_and_si256(cells[i], rem_mask);
                eq[i] = _mm256_cmpeq_epi32(rems_i, _mm256_set1_epi32(rems[i] as i32));
                any = _mm256_or_si256(any, eq[i]);
            }
            if _mm256_movemask_ps(_mm256_castsi256_ps(any)) as u32 & g.cell_mask == 0 {
                return false;
            }
            // A nonzero remainder never matches an empty (all-zero) cell.
            if no_zero_rem {
                return true;
            }
            // Pass 2, branch-free too (which bucket holds a stored key is random, a branch
            // per bucket would mispredict): a candidate cell must also be occupied.
            let counter_field = _mm256_set1_epi32(g.counter_field as i32);
            let mut hit = _mm256_setzero_si256();
            for i in 0..d {
                let counters = _mm256_and_si256(cells[i], counter_field);
                let empty = _mm256_cmpeq_epi32(counters, _mm256_setzero_si256());
                hit = _mm256_or_si256(hit, _mm256_andnot_si256(empty, eq[i]));
            }
            _mm256_movemask_ps(_mm256_castsi256_ps(hit)) as u32 & g.cell_mask != 0
        }
    }

    /// [`Kernel::scan4`]: the four buckets' compare masks packed into two 32-bit masks.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
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
        // SAFETY: forwarded contract (`w <= 8`: one group per bucket); register-only
        // intrinsics otherwise.
        unsafe {
            if SHAPE == SHAPE_ANY {
                let zero = _mm256_setzero_si256();
                let rem_mask = _mm256_set1_epi32(g.rem_mask as i32);
                let counter_field = _mm256_set1_epi32(g.counter_field as i32);
                let mut eq = [zero; 4];
                let mut empty = [zero; 4];
                for i in 0..4 {
                    let cells = unpack(g, buckets[i]);
                    let rem = _mm256_set1_epi32(rems[i] as i32);
                    eq[i] = _mm256_cmpeq_epi32(_mm256_and_si256(cells, rem_mask), rem);
                    empty[i] = _mm256_cmpeq_epi32(_mm256_and_si256(cells, counter_field), zero);
                    eq[i] = _mm256_andnot_si256(empty[i], eq[i]);
                }
                return Scan4 {
                    hits: pack4(&eq) & g.cell_mask4,
                    occupied: !pack4(&empty) & g.cell_mask4,
                };
            }
            // Compare the cells in place (no shift per bucket): remainder and counter
            // fields masked where the shuffle leaves them, against the query shifted the
            // same way. (Distinct remainders: shift the cells down instead, as in
            // `any_match`.)
            let zero = _mm256_setzero_si256();
            let (rem_lanes, counter_lanes, q0) = if same_rem {
                (
                    _mm256_loadu_si256(g.rem_lanes.as_ptr().cast()),
                    _mm256_loadu_si256(g.counter_lanes.as_ptr().cast()),
                    query_lanes(g, rems[0]),
                )
            } else {
                (
                    _mm256_set1_epi32(g.rem_mask as i32),
                    _mm256_set1_epi32(g.counter_field as i32),
                    zero,
                )
            };
            let mut eq = [zero; 4];
            let mut empty = [zero; 4];
            for i in 0..4 {
                let (cells, q) = if same_rem {
                    (gather_shaped::<SHAPE>(g, buckets[i]), q0)
                } else {
                    (
                        unpack_shaped::<SHAPE>(g, buckets[i]),
                        _mm256_set1_epi32(rems[i] as i32),
                    )
                };
                eq[i] = _mm256_cmpeq_epi32(_mm256_and_si256(cells, rem_lanes), q);
                empty[i] = _mm256_cmpeq_epi32(_mm256_and_si256(cells, counter_lanes), zero);
            }
            let occupied = !pack4(&empty) & g.cell_mask4;
            let hits = if same_rem {
                // A matching remainder field is an occupied cell unless the remainder
                // is 0 (empty cells are all zero).
                let zero_rem = 0u32.wrapping_sub(u32::from(rems[0] == 0));
                pack4(&eq) & g.cell_mask4 & (occupied | !zero_rem)
            } else {
                for i in 0..4 {
                    eq[i] = _mm256_andnot_si256(empty[i], eq[i]);
                }
                pack4(&eq) & g.cell_mask4
            };
            Scan4 { hits, occupied }
        }
    }

    /// [`Kernel::matches`].
    ///
    /// # Safety
    /// As for `scan`: the CPU must support AVX2 (callers check with `kernel_is_avx2`), `bucket`
    /// is valid for reads of `g.bucket_bytes + SLACK` bytes, and `SHAPE` is `SHAPE_ANY` or
    /// `g.shape()`.
    #[inline(always)]
    unsafe fn matches<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> u32 {
        // SAFETY: as in `scan`.
        unsafe {
            if SHAPE == SHAPE_ANY && g.cells > 8 {
                return Self::scan::<SHAPE_ANY>(g, bucket, rem).matches;
            }
            let cells = unpack_shaped::<SHAPE>(g, bucket);
            let hit = candidates(g, cells, rem) & g.cell_mask;
            if hit == 0 {
                return 0;
            }
            hit & !empties(g, cells)
        }
    }
}

impl Avx2 {
    /// [`Kernel::any_match`] for one-group buckets (`SHAPE_SMALL` or `SHAPE_NARROW`),
    /// comparing the cells in place.
    ///
    /// # Safety
    /// - The CPU must support AVX2; callers check with `kernel_is_avx2`.
    /// - `d <= 8`, and each `buckets[i]`, `i < d`, is valid for reads of
    ///   `g.bucket_bytes + SLACK` bytes (at least 32).
    /// - `SHAPE == g.shape()`, which is `SHAPE_SMALL` or `SHAPE_NARROW` (not `SHAPE_ANY`).
    #[inline(always)]
    unsafe fn any_match_in_place<const SHAPE: u8>(
        g: &Geometry,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        d: usize,
        no_zero_rem: bool,
        same_rem: bool,
    ) -> bool {
        // SAFETY: forwarded contract; `d <= 8` keeps the array indices in range.
        unsafe {
            let zero = _mm256_setzero_si256();
            // One remainder: compare the cells in place against the query shifted once.
            // Distinct remainders: shift each bucket's cells down instead (a broadcast
            // from memory is cheaper than a shifted query per bucket).
            let (rem_lanes, q0) = if same_rem {
                (
                    _mm256_loadu_si256(g.rem_lanes.as_ptr().cast()),
                    query_lanes(g, rems[0]),
                )
            } else {
                (_mm256_set1_epi32(g.rem_mask as i32), zero)
            };
            // Pass 1, branch-free: OR the d compare results; a negative query almost
            // never has a candidate. With `d` a constant the vectors stay in registers.
            let mut cells = [zero; 8];
            let mut eq = [zero; 8];
            let mut any = zero;
            for i in 0..d {
                let q = if same_rem {
                    cells[i] = gather_shaped::<SHAPE>(g, buckets[i]);
                    q0
                } else {
                    cells[i] = unpack_shaped::<SHAPE>(g, buckets[i]);
                    _mm256_set1_epi32(rems[i] as i32)
                };
                eq[i] = _mm256_cmpeq_epi32(_mm256_and_si256(cells[i], rem_lanes), q);
                any = _mm256_or_si256(any, eq[i]);
            }
            if _mm256_movemask_ps(_mm256_castsi256_ps(any)) as u32 & g.cell_mask == 0 {
                return false;
            }
            // A nonzero remainder never matches an empty (all-zero) cell.
            if no_zero_rem {
                return true;
            }
            // Pass 2 (a zero remainder somewhere, rare): a candidate must be occupied.
            let counter_lanes = if same_rem {
                _mm256_loadu_si256(g.counter_lanes.as_ptr().cast())
            } else {
                _mm256_set1_epi32(g.counter_field as i32)
            };
            let mut hit = zero;
            for i in 0..d {
                let counters = _mm256_and_si256(cells[i], counter_lanes);
                let empty = _mm256_cmpeq_epi32(counters, zero);
                hit = _mm256_or_si256(hit, _mm256_andnot_si256(empty, eq[i]));
            }
            _mm256_movemask_ps(_mm256_castsi256_ps(hit)) as u32 & g.cell_mask != 0
        }
    }
}
