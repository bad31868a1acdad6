//! Bucket matching: compare a bucket's `w` remainders with one query remainder.
//!
//! Every kernel exists once in `scalar` (portable, always compiled, the test oracle)
//! and again in `avx2` (x86-64): eight packed cells are unpacked into eight 32-bit lanes
//! (one `vpshufb` and one `vpsrlvd` for cells of up to 25 bits, two `vpermd` and two
//! variable shifts for wider ones; or only the `vpshufb`, comparing the cells in place
//! against a shifted query), then compared with one `vpcmpeqd`, the way hashbrown's
//! `Group::match_tag` compares a group of control bytes. The filter stores
//! the [`Backend`] chosen at construction ([`Backend::detect`]) and dispatches once per
//! operation (once per batch for batch calls) into a `#[target_feature]` function where
//! the kernel inlines; no probe pays for a feature check. The tests run every kernel
//! against a naive reference on random and edge-case buckets of every shape.
//!
//! The cells are packed (`r + c` bits each, see [`crate::layout`]), so the SSE2 baseline
//! cannot unpack them (it has neither byte shuffles nor per-lane variable shifts); x86-64
//! CPUs without AVX2 use the scalar kernel.

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
pub(crate) mod scalar;

use crate::layout::{GeneralMap, Geometry, Locator, Permutations};
pub use bloomforge_core::Backend;

/// Result of scanning one bucket: bit `j` of each mask describes cell `j` (`j < w`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Occupied cells whose remainder equals the query remainder.
    pub(crate) matches: u32,
    /// Occupied cells (counter != 0).
    pub(crate) occupied: u32,
}

/// Result of scanning four buckets of at most 8 cells each (`d = 4`): bit `8 i + j` of
/// each mask describes cell `j` of bucket `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan4 {
    /// Occupied cells whose remainder equals their bucket's query remainder.
    pub(crate) hits: u32,
    /// Occupied cells (counter != 0).
    pub(crate) occupied: u32,
}

/// A bucket-matching kernel.
///
/// # Safety
/// Implementations may use CPU features beyond the compilation target. Calling any method
/// requires that the CPU has the kernel's features, and the caller must be compiled with
/// (or inlined into a function with) those target features for the intrinsics to inline.
/// The kernel's features are: none for `Scalar`; AVX2 for `Avx2` (callers check with
/// `kernel_is_avx2` in the filter, which also checks the POPCNT and BMI1 its callers are
/// compiled with); AVX2 and AVX-512 F, VL, DQ, BW, VBMI and BITALG for `Avx512` (callers
/// check with `kernel_is_avx512`). `Backend::is_available()` alone does not cover the
/// AVX-512 kernel's extensions.
///
/// Bucket pointers are only read: nothing may write the bytes a method reads while it
/// runs (the filter holds `&self` or `&mut self` for the call).
pub(crate) unsafe trait Kernel {
    /// The backend this kernel implements.
    #[allow(dead_code)]
    const BACKEND: Backend;

    /// Whether [`locate4_general`](Self::locate4_general) is a kernel of its own (the
    /// filter then calls it instead of its scalar locating loop).
    const LOCATE4_GENERAL: bool = false;

    /// The candidate buckets `buckets[..4]` (pointers into the table at `table`) of hash
    /// `h` under the general map ([`GeneralMap`]) in subtables 0-3, and the remainder
    /// they are looked up for (the same in every subtable). The default is the scalar
    /// [`Locator`], the oracle of the kernels that override it.
    ///
    /// # Safety
    /// - The CPU has the kernel's features (see [`Kernel`]).
    /// - `g.d >= 4`, `!perm.pow2` and `g.buckets <= u32::MAX` (the AVX-512 kernel's
    ///   64 x 32-bit `fast_range` needs `B < 2^32` to give a bucket below `B`); `perm` is
    ///   the permutations of `g`.
    ///
    /// Nothing is dereferenced: the pointers are computed with wrapping arithmetic and
    /// point into the table (each at a bucket start) when `table` is its start.
    #[inline(always)]
    unsafe fn locate4_general(
        g: &Geometry,
        perm: &Permutations,
        table: *const u8,
        h: u64,
        buckets: &mut [*const u8; 8],
    ) -> u32 {
        let loc = Locator::<GeneralMap>::new(g, perm, h);
        let mut rem = 0;
        for (i, b) in buckets.iter_mut().enumerate().take(4) {
            let offset;
            (offset, rem) = loc.at(i);
            *b = table.wrapping_add(offset);
        }
        rem
    }

    /// Matches and occupancy of the bucket that starts at `bucket`. `SHAPE` is
    /// [`Geometry::shape`] or `SHAPE_ANY` (always allowed), so kernels can skip the
    /// checks for the other shapes.
    ///
    /// # Safety
    /// - The CPU has the kernel's features (see [`Kernel`]).
    /// - `bucket` is valid for reads of `g.bucket_bytes + SLACK` bytes (a bucket of a
    ///   table that ends in `SLACK` spare bytes): the SIMD kernels load 32 bytes from the
    ///   bucket's start and, for `g.cells > 8`, from `g.cell_bits` bytes in.
    /// - `SHAPE` is `SHAPE_ANY` or `g.shape()`: a shaped instance skips the checks for
    ///   the other shapes and reads as that shape allows.
    unsafe fn scan<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> Scan;

    /// Whether any of the first `d` buckets `buckets[i]` holds `rems[i]` in an occupied
    /// cell: a whole query.
    ///
    /// # Safety
    /// - The CPU has the kernel's features (see [`Kernel`]).
    /// - `d <= 8`.
    /// - Each `buckets[i]`, `i < d`, is valid for reads of `g.bucket_bytes + SLACK` bytes.
    /// - `SHAPE` is `SHAPE_ANY` or `g.shape()`.
    ///
    /// `no_zero_rem` says that no `rems[i]`, `i < d`, is 0: then a cell whose remainder
    /// field matches is occupied (an empty cell is all zero), and kernels may skip the
    /// counter test.
    /// `same_rem` says that `rems[0..d]` are all equal (kernels may broadcast once).
    unsafe fn any_match<const SHAPE: u8>(
        g: &Geometry,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        d: usize,
        no_zero_rem: bool,
        same_rem: bool,
    ) -> bool;

    /// [`scan`](Self::scan) of the four buckets `buckets[..4]` (remainders `rems[..4]`)
    /// at once, as packed masks (bit `8 i + j`: cell `j` of bucket `i`).
    ///
    /// # Safety
    /// - The CPU has the kernel's features (see [`Kernel`]).
    /// - `g.cells <= 8` (one group of cells per bucket).
    /// - Each `buckets[i]`, `i < 4`, is valid for reads of `g.bucket_bytes + SLACK`
    ///   bytes.
    /// - `SHAPE` is `SHAPE_ANY` or `g.shape()`.
    ///
    /// `same_rem` says that `rems[0..4]` are all equal (kernels may broadcast once).
    #[inline(always)]
    unsafe fn scan4<const SHAPE: u8>(
        g: &Geometry,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        same_rem: bool,
    ) -> Scan4 {
        let _ = same_rem;
        let mut s = Scan4::default();
        for i in 0..4 {
            // SAFETY: forwarded contract.
            let b = unsafe { Self::scan::<SHAPE>(g, buckets[i], rems[i]) };
            s.hits |= b.matches << (8 * i);
            s.occupied |= b.occupied << (8 * i);
        }
        s
    }

    /// The bucket an insert takes among four of at most 8 cells whose packed occupancy
    /// mask is `occupied` (bit `8 i + j`: cell `j` of bucket `i`, cells `j >= w` clear):
    /// the least loaded, leftmost on ties, and its first free cell `(i, j)`; `None` if
    /// that bucket is full. `cell_mask` is `2^w - 1`. The default (scalar, branch-free)
    /// is the oracle of the kernels that override it.
    ///
    /// # Safety
    /// The CPU has the kernel's features (see [`Kernel`]). There is no other precondition.
    #[inline(always)]
    unsafe fn pick4(occupied: u32, cell_mask: u32) -> Option<(usize, u32)> {
        // The minimum of `load * 8 + i`, with no data-dependent branch.
        let mut best = u32::MAX;
        for i in 0..4u32 {
            let key = (((occupied >> (8 * i)) & 0xff).count_ones() << 3) | i;
            best = core::hint::select_unpredictable(key < best, key, best);
        }
        let i = best & 3;
        let free = !(occupied >> (8 * i)) & cell_mask;
        if free == 0 {
            return None;
        }
        Some((i as usize, free.trailing_zeros()))
    }

    /// Only the match mask of [`scan`](Self::scan).
    ///
    /// # Safety
    /// As for [`scan`](Self::scan): the CPU has the kernel's features, `bucket` is valid
    /// for reads of `g.bucket_bytes + SLACK` bytes, and `SHAPE` is `SHAPE_ANY` or
    /// `g.shape()`.
    unsafe fn matches<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> u32;
}

/// Checks that `backend` runs on this CPU.
pub(crate) fn check_backend(backend: Backend) -> crate::Result<()> {
    if backend.is_available() {
        Ok(())
    } else {
        Err(bloomforge_core::Error::BackendUnavailable(backend.name()).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SLACK;
    use bloomforge_core::hash::mix64;

    /// Packs `cells` into a bucket of geometry `g`, followed by the slack.
    fn pack(g: &Geometry, cells: &[u32], junk_after: u64) -> Vec<u8> {
        let mut bytes = vec![0u8; g.bucket_bytes + SLACK + 8];
        for (j, &c) in cells.iter().enumerate() {
            let bit = j as u32 * g.cell_bits;
            let at = (bit / 8) as usize;
            let mut word = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            word |= u64::from(c) << (bit % 8);
            bytes[at..at + 8].copy_from_slice(&word.to_le_bytes());
        }
        // Whatever follows the bucket (the next bucket's cells) must not leak into the scan.
        for (k, b) in bytes[g.bucket_bytes..].iter_mut().enumerate() {
            *b = (mix64(junk_after.wrapping_add(k as u64)) & 0xff) as u8;
        }
        // Padding bits of the bucket's last byte are junk too.
        let used = g.cells * g.cell_bits;
        if !used.is_multiple_of(8) {
            let last = g.bucket_bytes - 1;
            bytes[last] |= (mix64(junk_after) as u8) & !((1u8 << (used % 8)) - 1);
        }
        bytes
    }

    fn naive(g: &Geometry, cells: &[u32], rem: u32) -> Scan {
        let mut s = Scan {
            matches: 0,
            occupied: 0,
        };
        for (j, &c) in cells.iter().enumerate() {
            if g.cell_counter(c) != 0 {
                s.occupied |= 1 << j;
                if g.cell_remainder(c) == rem {
                    s.matches |= 1 << j;
                }
            }
        }
        s
    }

    /// A kernel under test: (scan, matches) of a packed bucket.
    type KernelUnderTest<'a> = &'a dyn Fn(&Geometry, &[u8], u32) -> (Scan, u32);

    fn check_all(kernel_scan: KernelUnderTest<'_>) {
        let mut state = 1u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        for c in [1u32, 2, 3, 8] {
            for r in 1..=(32 - c) {
                for w in 1..=16u32 {
                    let g = Geometry::new(4, 8, w, r, c).unwrap();
                    for trial in 0..6 {
                        // Cells: a mix of empty, random, equal-to-query and edge values.
                        let rem = match trial {
                            0 => 0,
                            1 => g.rem_mask,
                            _ => next() as u32 & g.rem_mask,
                        };
                        let cells: Vec<u32> = (0..w)
                            .map(|_| {
                                let x = next();
                                let cnt = match x % 4 {
                                    0 => 0,
                                    1 => g.counter_max,
                                    _ => (x >> 8) as u32 & g.counter_max,
                                };
                                let rm = if (x >> 4) % 3 == 0 {
                                    rem
                                } else {
                                    (x >> 32) as u32 & g.rem_mask
                                };
                                // Empty cells are all zero.
                                if cnt == 0 {
                                    0
                                } else {
                                    rm | (cnt << r)
                                }
                            })
                            .collect();
                        let bytes = pack(&g, &cells, next());
                        let want = naive(&g, &cells, rem);
                        let (got, got_matches) = kernel_scan(&g, &bytes, rem);
                        assert_eq!(got, want, "w={w} r={r} c={c} cells={cells:?} rem={rem}");
                        assert_eq!(got_matches, want.matches);
                    }
                }
            }
        }
    }

    #[test]
    fn scalar_matches_naive() {
        check_all(&|g, bytes, rem| {
            // SAFETY: `bytes` holds the bucket plus SLACK bytes; scalar needs no CPU feature.
            unsafe {
                let p = bytes.as_ptr();
                (
                    scalar::Scalar::scan::<0>(g, p, rem),
                    scalar::Scalar::matches::<0>(g, p, rem),
                )
            }
        });
    }

    /// A kernel's four-bucket entry points under test: (buckets, remainders, same
    /// remainder) -> (`scan4`, `any_match`).
    type FourUnderTest<'a> =
        &'a dyn Fn(&Geometry, &[*const u8; 8], &[u32; 8], bool) -> (Scan4, bool);

    /// Four buckets of geometry `g` with random cells, each followed by junk; returns the
    /// packed buffers (bucket plus slack each) and the cells.
    fn four_buckets(
        g: &Geometry,
        rems: &[u32; 8],
        next: &mut impl FnMut() -> u64,
    ) -> (Vec<Vec<u8>>, Vec<Vec<u32>>) {
        let mut bufs = Vec::new();
        let mut all = Vec::new();
        for &rem in rems.iter().take(4) {
            let cells: Vec<u32> = (0..g.cells)
                .map(|_| {
                    let x = next();
                    let cnt = match x % 4 {
                        0 => 0,
                        1 => g.counter_max,
                        _ => (x >> 8) as u32 & g.counter_max,
                    };
                    let rm = if (x >> 4).is_multiple_of(3) {
                        rem
                    } else {
                        (x >> 32) as u32 & g.rem_mask
                    };
                    if cnt == 0 {
                        0
                    } else {
                        rm | (cnt << g.rem_bits)
                    }
                })
                .collect();
            bufs.push(pack(g, &cells, next()));
            all.push(cells);
        }
        (bufs, all)
    }

    /// The four-bucket entry points (`scan4`, `any_match`) of a kernel against the naive
    /// scan, for every bucket shape of up to 8 cells, equal and distinct remainders, and
    /// remainder 0.
    fn check_four(kernel: FourUnderTest<'_>) {
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        for c in [1u32, 2, 3, 8] {
            for r in 1..=(32 - c) {
                for w in 1..=8u32 {
                    let g = Geometry::new(4, 8, w, r, c).unwrap();
                    for trial in 0..8 {
                        let same = trial % 2 == 0;
                        // Remainder 0 everywhere (trials 0, 1), in bucket 2 only (trial
                        // 3), else random; `same`: one remainder for all buckets.
                        let mut rems = [0u32; 8];
                        for (i, x) in rems.iter_mut().enumerate().take(4) {
                            if trial >= 2 && !(trial == 3 && i == 2) {
                                *x = next() as u32 & g.rem_mask;
                            }
                        }
                        if same {
                            rems = [rems[0]; 8];
                        }
                        let (bufs, cells) = four_buckets(&g, &rems, &mut next);
                        let mut ptrs = [core::ptr::null(); 8];
                        for (p, b) in ptrs.iter_mut().zip(&bufs) {
                            *p = b.as_ptr();
                        }
                        let mut want = Scan4::default();
                        for i in 0..4 {
                            let s = naive(&g, &cells[i], rems[i]);
                            want.hits |= s.matches << (8 * i);
                            want.occupied |= s.occupied << (8 * i);
                        }
                        let (got, any) = kernel(&g, &ptrs, &rems, same);
                        assert_eq!(got, want, "w={w} r={r} c={c} rems={rems:?} {cells:?}");
                        assert_eq!(any, want.hits != 0, "any_match w={w} r={r} c={c}");
                    }
                }
            }
        }
    }

    #[test]
    fn scalar_four_matches_naive() {
        check_four(&|g, ptrs, rems, same| {
            let nz = rems.iter().take(4).all(|&r| r != 0);
            // SAFETY: each pointer holds a bucket plus SLACK bytes; w <= 8; scalar needs
            // no CPU feature.
            unsafe {
                (
                    scalar::Scalar::scan4::<0>(g, ptrs, rems, same),
                    scalar::Scalar::any_match::<0>(g, ptrs, rems, 4, nz, same),
                )
            }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_four_matches_naive() {
        if !Backend::Avx2.is_available() {
            bloomforge_testkit::cpu::report(
                "dleft: avx2_four_matches_naive not run here (no AVX2)",
            );
            return;
        }
        /// `scan4` and `any_match` of the AVX2 kernel, any-shape and shaped, on four packed
        /// buckets.
        ///
        /// # Safety
        /// The CPU must support AVX2 (the test checks `Backend::Avx2.is_available()`
        /// first). Each of `p[..4]` must be valid for reads of `g.bucket_bytes + SLACK`
        /// bytes, and `g.cells <= 8`.
        #[target_feature(enable = "avx2")]
        unsafe fn run(
            g: &Geometry,
            p: &[*const u8; 8],
            rems: &[u32; 8],
            same: bool,
        ) -> (Scan4, bool) {
            use crate::layout::{SHAPE_ANY, SHAPE_NARROW, SHAPE_SMALL};
            use avx2::Avx2;
            let nz = rems.iter().take(4).all(|&r| r != 0);
            // SAFETY: each pointer holds a bucket plus SLACK bytes; w <= 8; the caller
            // checked AVX2; each shaped call matches `g.shape()`.
            unsafe {
                let any = (
                    Avx2::scan4::<SHAPE_ANY>(g, p, rems, same),
                    Avx2::any_match::<SHAPE_ANY>(g, p, rems, 4, nz, same),
                );
                let shaped = match g.shape() {
                    SHAPE_SMALL => (
                        Avx2::scan4::<SHAPE_SMALL>(g, p, rems, same),
                        Avx2::any_match::<SHAPE_SMALL>(g, p, rems, 4, nz, same),
                    ),
                    SHAPE_NARROW => (
                        Avx2::scan4::<SHAPE_NARROW>(g, p, rems, same),
                        Avx2::any_match::<SHAPE_NARROW>(g, p, rems, 4, nz, same),
                    ),
                    _ => any,
                };
                assert_eq!(shaped, any);
                any
            }
        }
        // SAFETY: AVX2 availability was checked above.
        check_four(&|g, p, rems, same| unsafe { run(g, p, rems, same) });
    }

    /// Whether this CPU runs the AVX-512 kernel.
    #[cfg(target_arch = "x86_64")]
    fn avx512_kernel_available() -> bool {
        Backend::Avx512.is_available_with(crate::filter::AVX512_KERNEL_EXTRA)
    }

    /// The AVX-512 four-bucket kernel against the naive scan, for every bucket shape of
    /// up to 8 cells (its own code for `SHAPE_SMALL` with one remainder, the AVX2 kernel's
    /// otherwise).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_four_matches_naive() {
        if !avx512_kernel_available() {
            bloomforge_testkit::cpu::report(
                "dleft: avx512_four_matches_naive not run here (no AVX-512 F/VL/DQ/BW/VBMI/BITALG)",
            );
            return;
        }
        /// `scan4` and `any_match` of the AVX-512 kernel, any-shape and (for `SHAPE_SMALL`)
        /// shaped, on four packed buckets.
        ///
        /// # Safety
        /// The CPU must support the AVX-512 kernel's features (the test checks
        /// `avx512_kernel_available()` first). Each of `p[..4]` must be valid for reads of
        /// `g.bucket_bytes + SLACK` bytes, and `g.cells <= 8`.
        #[target_feature(
            enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512vbmi,avx512bitalg"
        )]
        unsafe fn run(
            g: &Geometry,
            p: &[*const u8; 8],
            rems: &[u32; 8],
            same: bool,
        ) -> (Scan4, bool) {
            use crate::layout::{SHAPE_ANY, SHAPE_SMALL};
            use avx512::Avx512;
            let nz = rems.iter().take(4).all(|&r| r != 0);
            // SAFETY: each pointer holds a bucket plus SLACK bytes; w <= 8; the caller
            // checked the features; the shaped call matches `g.shape()`.
            unsafe {
                let any = (
                    Avx512::scan4::<SHAPE_ANY>(g, p, rems, same),
                    Avx512::any_match::<SHAPE_ANY>(g, p, rems, 4, nz, same),
                );
                if g.shape() == SHAPE_SMALL {
                    let small = (
                        Avx512::scan4::<SHAPE_SMALL>(g, p, rems, same),
                        Avx512::any_match::<SHAPE_SMALL>(g, p, rems, 4, nz, same),
                    );
                    assert_eq!(small, any);
                }
                any
            }
        }
        // SAFETY: the features were checked above.
        check_four(&|g, p, rems, same| unsafe { run(g, p, rems, same) });
    }

    /// The AVX-512 choice of an insert's bucket and cell against the scalar default, for
    /// every bucket width and occupancy masks that are random, full, empty and tied.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_pick_matches_scalar() {
        if !avx512_kernel_available() {
            bloomforge_testkit::cpu::report(
                "dleft: avx512_pick_matches_scalar not run here (no AVX-512 F/VL/DQ/BW/VBMI/BITALG)",
            );
            return;
        }
        #[target_feature(
            enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512vbmi,avx512bitalg"
        )]
        /// The AVX-512 kernel's `pick4`.
        ///
        /// # Safety
        /// The CPU must support the AVX-512 kernel's features (the test checks
        /// `avx512_kernel_available()` first).
        unsafe fn run(occupied: u32, cell_mask: u32) -> Option<(usize, u32)> {
            // SAFETY: the caller checked the features.
            unsafe { avx512::Avx512::pick4(occupied, cell_mask) }
        }
        let mut state = 5u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        for w in 1..=8u32 {
            let cell_mask = (1u32 << w) - 1;
            let mask4 = cell_mask * 0x0101_0101;
            let mut masks = vec![0, mask4, mask4 & !1, mask4 & !(1 << 24)];
            // Each bucket's occupancy a prefix, a random set, full or empty.
            masks.extend((0..20_000).map(|_| {
                let x = next();
                (0..4).fold(0u32, |m, i| {
                    let byte = match (x >> (8 * i)) % 4 {
                        0 => (x >> (32 + 8 * i)) as u32 & cell_mask,
                        1 => cell_mask,
                        2 => 0,
                        _ => cell_mask >> ((x >> (40 + i)) as u32 % (w + 1)).min(w - 1),
                    };
                    m | byte << (8 * i)
                })
            }));
            for occupied in masks {
                // SAFETY: the scalar kernel needs no CPU feature.
                let want = unsafe { scalar::Scalar::pick4(occupied, cell_mask) };
                // SAFETY: the features were checked above.
                let got = unsafe { run(occupied, cell_mask) };
                assert_eq!(got, want, "w={w} occupied={occupied:#010x}");
            }
        }
    }

    /// The AVX-512 locating of the general map's four buckets against the scalar
    /// [`Locator`] (the trait's default), for tables from 3 buckets to `2^32 - 1`, every
    /// remainder width that fits, and hashes at the edges (0, all ones) and random.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_locate_matches_scalar() {
        if !avx512_kernel_available() {
            bloomforge_testkit::cpu::report(
                "dleft: avx512_locate_matches_scalar not run here (no AVX-512 F/VL/DQ/BW/VBMI/BITALG)",
            );
            return;
        }
        #[target_feature(
            enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512vbmi,avx512bitalg"
        )]
        /// The AVX-512 kernel's `locate4_general`.
        ///
        /// # Safety
        /// The CPU must support the AVX-512 kernel's features (the test checks
        /// `avx512_kernel_available()` first). `g.d >= 4`, `!perm.pow2` and
        /// `g.buckets <= u32::MAX`.
        unsafe fn run(g: &Geometry, perm: &Permutations, h: u64) -> ([*const u8; 8], u32) {
            let mut b = [core::ptr::null(); 8];
            // SAFETY: `d = 4`, general map, `B <= u32::MAX` (the caller); features checked.
            let rem =
                unsafe { avx512::Avx512::locate4_general(g, perm, core::ptr::null(), h, &mut b) };
            (b, rem)
        }
        let mut state = 3u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        let mut tables = vec![
            3u64,
            5,
            7,
            41_667,
            1_000_003,
            (1 << 31) + 1,
            u64::from(u32::MAX),
        ];
        tables.extend((0..20).map(|_| 3 + next() % u64::from(u32::MAX - 3)));
        for &buckets in tables.iter().filter(|b| !b.is_power_of_two()) {
            for r in [1u32, 7, 12, 16, 24, 30] {
                let Ok(g) = Geometry::new(4, buckets, 8, r, 2) else {
                    continue; // a table too large to describe
                };
                let perm = Permutations::new(&g, next());
                let mut hashes = vec![0u64, u64::MAX, 1, u64::MAX - 1];
                hashes.extend((0..500).map(|_| next()));
                for h in hashes {
                    let mut want = [core::ptr::null(); 8];
                    // SAFETY: the scalar kernel needs no CPU feature.
                    let want_rem = unsafe {
                        scalar::Scalar::locate4_general(&g, &perm, core::ptr::null(), h, &mut want)
                    };
                    // SAFETY: the features were checked above; `B <= u32::MAX`, not a
                    // power of two.
                    let (got, got_rem) = unsafe { run(&g, &perm, h) };
                    assert_eq!(
                        (got, got_rem),
                        (want, want_rem),
                        "B={buckets} r={r} h={h:#x}"
                    );
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_matches_naive() {
        if !Backend::Avx2.is_available() {
            bloomforge_testkit::cpu::report("dleft: avx2_matches_naive not run here (no AVX2)");
            return;
        }
        /// `scan` and `matches` of the AVX2 kernel, any-shape and shaped, on one packed bucket.
        ///
        /// # Safety
        /// The CPU must support AVX2 (the test checks `Backend::Avx2.is_available()` first).
        /// `bytes` must hold the bucket plus `SLACK` bytes.
        #[target_feature(enable = "avx2")]
        unsafe fn run(g: &Geometry, bytes: &[u8], rem: u32) -> (Scan, u32) {
            // SAFETY: `bytes` holds the bucket plus SLACK bytes; the caller checked AVX2;
            // each shaped call matches `g.shape()`.
            unsafe {
                let p = bytes.as_ptr();
                use crate::layout::{SHAPE_ANY, SHAPE_NARROW, SHAPE_SMALL};
                use avx2::Avx2;
                let any = (
                    Avx2::scan::<SHAPE_ANY>(g, p, rem),
                    Avx2::matches::<SHAPE_ANY>(g, p, rem),
                );
                let shaped = match g.shape() {
                    SHAPE_SMALL => (
                        Avx2::scan::<SHAPE_SMALL>(g, p, rem),
                        Avx2::matches::<SHAPE_SMALL>(g, p, rem),
                    ),
                    SHAPE_NARROW => (
                        Avx2::scan::<SHAPE_NARROW>(g, p, rem),
                        Avx2::matches::<SHAPE_NARROW>(g, p, rem),
                    ),
                    _ => any,
                };
                assert_eq!(shaped, any);
                any
            }
        }
        // SAFETY: AVX2 availability was checked above.
        check_all(&|g, bytes, rem| unsafe { run(g, bytes, rem) });
    }
}
