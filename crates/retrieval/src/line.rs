//! One SIMD operation that joins a value into the marked cells of a blocked compact
//! approximator's 64-byte line, and the meet of those cells reduced in SIMD registers.
//!
//! Written by hand (no crate offers masked lane-wise joins over a cache line): a blocked
//! insert joins its value into the 4-5 distinct cells of one line, and the scalar loop
//! over the mask's bits is a loop of data-dependent length whose exit the branch
//! predictor misses. At 10^6 keys (`CountMin<u8>`, 1 % inexact, 12 MB of cells) the
//! loop cost 11.8-12.3 ns an insert and one AVX-512BW masked operation 5.5-5.7 ns, the
//! counting filter's own insert 5.3-5.8 ns in the same runs. The backend is core's
//! [`Backend`]: `Avx512` runs the kernels here (with AVX-512BW, as the counting filter's
//! kernels), every other backend the scalar loop, the oracle the tests hold them to.
//!
//! Lines of 64 `u8` cells with at most 8 probes a key have a second pair of kernels where
//! the CPU also has AVX-512 VBMI (Zen 4 and later, Ice Lake and later): the positions are
//! cut out of the key's mix with one `vpmultishiftqb`, a lookup gathers its cells with one
//! `vpermb` and reduces 8 bytes instead of 64, and an insert builds the line's mask in
//! vector registers instead of the scalar loop over the probes. Measured on an AMD EPYC
//! Zen 5, 2 cores (`PERF_ONLY=approx`, `CountMin<u8>` at 1 %, 5 probes), without / with
//! them: `get_batch` 5.8-5.9 / 3.7 ns a key at 10^6 keys and 8.4-8.5 / 5.6 at 10^7,
//! `insert_batch` 4.9-5.2 / 4.5-4.6 and 7.4-7.5 / 6.1-6.2, the single insert at 10^7
//! 43-45 / 37 ns.

use bloomforge_core::arch::CpuFeatures;
use bloomforge_core::Backend;

/// The cell-wise joins the kernels implement (the crate's three lattices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineJoin {
    /// `max(cell, value)`.
    Max,
    /// `min(cell, value)`.
    Min,
    /// `cell + value`, stopping at the type's maximum.
    SaturatingAdd,
}

/// The cell-wise meets the kernels implement (the lattices' lookups).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineMeet {
    /// The smallest of the cells.
    Min,
    /// The largest of the cells.
    Max,
}

/// Whether this CPU runs `backend`'s line kernels (AVX-512 needs AVX-512F and BW).
pub(crate) fn backend_available(backend: Backend) -> bool {
    backend.is_available_with_bw()
}

/// Whether this CPU has AVX-512 VBMI (`vpermb`, `vpmultishiftqb`), which the gathering
/// meet of `u8` lines needs besides the `Avx512` backend.
#[inline]
pub(crate) fn vbmi_available() -> bool {
    Backend::Avx512.is_available_with(CpuFeatures::AVX512BW | CpuFeatures::AVX512VBMI)
}

/// The backend new approximators use: `Avx512` where available, else `Scalar` (no other
/// backend has a line kernel).
pub(crate) fn default_backend() -> Backend {
    Backend::detect_among(&[Backend::Avx512], |_| CpuFeatures::AVX512BW)
}

/// Most probes the VBMI probe kernels take (`avx512::meet_u8_probes`): the bytes of one
/// 64-bit lane.
pub(crate) const GATHER_MAX: usize = 8;

/// `meet_probes` of `u8` cells: the VBMI gather for a 64-cell line and at most
/// [`GATHER_MAX`] probes, else `None`.
///
/// # Safety
/// The CPU must support AVX-512F, BW and VBMI; callers check with [`vbmi_available`].
/// There is no other precondition: the line's length and `k` are checked here.
#[inline(always)]
unsafe fn gather_u8(op: LineMeet, line: &[u8], word: u64, k: usize) -> Option<u8> {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if line.len() == 64 && (1..=GATHER_MAX).contains(&k) {
        // SAFETY: the caller guarantees AVX-512F, BW and VBMI; `line` is 64 bytes.
        return Some(unsafe { avx512::meet_u8_probes(line.as_ptr(), op, word, k) });
    }
    let _ = (op, line, word, k);
    None
}

/// `join_probes` of `u8` cells: the VBMI mask for a 64-cell line and at most
/// [`GATHER_MAX`] probes; whether it joined.
///
/// # Safety
/// The CPU must support AVX-512F, BW and VBMI; callers check with [`vbmi_available`].
/// There is no other precondition: the line's length and `k` are checked here.
#[inline(always)]
unsafe fn scatter_u8(op: LineJoin, line: &mut [u8], word: u64, k: usize, value: u8) -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if line.len() == 64 && (1..=GATHER_MAX).contains(&k) {
        // SAFETY: the caller guarantees AVX-512F, BW and VBMI; `line` is 64 bytes.
        unsafe { avx512::join_u8_probes(line.as_mut_ptr(), op, word, k, value) };
        return true;
    }
    let _ = (op, line, word, k, value);
    false
}

/// `join_probes` of the wider cells: no kernel.
///
/// # Safety
/// No precondition; `unsafe` only to share `scatter_u8`'s signature.
#[inline(always)]
unsafe fn no_scatter<T>(op: LineJoin, line: &mut [T], word: u64, k: usize, value: T) -> bool {
    let _ = (op, line, word, k, value);
    false
}

/// `meet_probes` of the wider cells: no gather kernel (a line holds 32 or fewer).
///
/// # Safety
/// No precondition; `unsafe` only to share `gather_u8`'s signature.
#[inline(always)]
unsafe fn no_gather<T>(op: LineMeet, line: &[T], word: u64, k: usize) -> Option<T> {
    let _ = (op, line, word, k);
    None
}

/// Joins `value` into the cells of a 64-byte `line` of `u8`..`u64` cells whose bit is set in
/// `mask` with one masked SIMD operation, when `backend` has a kernel; returns whether it
/// did (the caller then skips its scalar loop).
///
/// The cells are `$t`; the kernels take the line as a pointer to its 64 bytes.
macro_rules! line_kernels {
    ($($t:ty => $kernel:ident, $meet:ident, $gather:ident, $scatter:ident),*) => {$(
        impl crate::approx::LineCell for $t {
            #[inline(always)]
            fn meet_line(backend: Backend, op: LineMeet, line: &[$t], mask: u64) -> Option<$t> {
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                if backend == Backend::Avx512 && size_of_val(line) == 64 {
                    // SAFETY: as in `join_line`.
                    return Some(unsafe { avx512::$meet(line.as_ptr(), op, mask) });
                }
                let _ = (backend, op, line, mask);
                None
            }

            /// The cells' gather kernel, if any.
            ///
            /// # Safety
            /// The CPU must support AVX-512F, BW and VBMI (the trait's contract); callers
            /// check with [`vbmi_available`].
            #[inline(always)]
            unsafe fn meet_probes(op: LineMeet, line: &[$t], word: u64, k: usize) -> Option<$t> {
                // SAFETY: forwarded from the caller.
                unsafe { $gather(op, line, word, k) }
            }

            /// The cells' probe join kernel, if any.
            ///
            /// # Safety
            /// The CPU must support AVX-512F, BW and VBMI (the trait's contract); callers
            /// check with [`vbmi_available`].
            #[inline(always)]
            unsafe fn join_probes(
                op: LineJoin,
                line: &mut [$t],
                word: u64,
                k: usize,
                value: $t,
            ) -> bool {
                // SAFETY: forwarded from the caller.
                unsafe { $scatter(op, line, word, k, value) }
            }

            #[inline(always)]
            fn join_line(backend: Backend, op: LineJoin, line: &mut [$t], mask: u64, value: $t) -> bool {
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                if backend == Backend::Avx512 && size_of_val(line) == 64 {
                    // SAFETY: an approximator holds `Backend::Avx512` only after
                    // `backend_available` confirmed AVX-512F and AVX-512BW, and `line` is
                    // 64 bytes.
                    unsafe { avx512::$kernel(line.as_mut_ptr(), op, mask, value) };
                    return true;
                }
                let _ = (backend, op, line, mask, value);
                false
            }
        }
    )*};
}
line_kernels!(
    u8 => join_u8, meet_u8, gather_u8, scatter_u8,
    u16 => join_u16, meet_u16, no_gather, no_scatter,
    u32 => join_u32, meet_u32, no_gather, no_scatter,
    u64 => join_u64, meet_u64, no_gather, no_scatter
);

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod avx512 {
    use super::{LineJoin, LineMeet};
    use std::arch::x86_64::*;

    use super::GATHER_MAX;

    /// Control bytes of `vpmultishiftqb` for `k` probes: byte `j` is `6 j` (probe `j`'s
    /// bit offset in the word) for `j < k`, and 0 past `k`, a second copy of probe 0,
    /// which leaves a minimum, a maximum and a mask of the positions unchanged. `CTRL[k]` for
    /// `k` in `0..=8`.
    const CTRL: [u64; GATHER_MAX + 1] = {
        let mut t = [0u64; GATHER_MAX + 1];
        let mut k = 0;
        while k <= GATHER_MAX {
            let mut j = 0;
            while j < k {
                t[k] |= ((6 * j) as u64) << (8 * j);
                j += 1;
            }
            k += 1;
        }
        t
    };

    /// The meet of the `u8` cells of the 64-byte line at `p` at the first `k` probe
    /// positions of `word` (`(word >> 6 j) & 63`, a position drawn twice counted once):
    /// `vpmultishiftqb` cuts the eight 6-bit fields out of the word into bytes, `vpermb`
    /// gathers the line's bytes at them (it reads an index's low 6 bits), and
    /// `vphminposuw` takes the minimum of the eight, widened to 16 bits (a maximum as the
    /// complement of the minimum of the complements). Seven instructions after the line's
    /// load, against the masked reduction's dozen over the whole line.
    ///
    /// # Safety
    /// - The CPU must support AVX-512F, BW and VBMI; callers check with
    ///   [`vbmi_available`](super::vbmi_available).
    /// - `p` is valid for reads of 64 bytes (no alignment needed: one unaligned load), and
    ///   nothing writes them during the call.
    /// - `k <= GATHER_MAX`: `CTRL[k]` is read unchecked. (`k >= 1` as well for a
    ///   meaningful answer: with `k = 0` this returns cell `word & 63`.)
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn meet_u8_probes(p: *const u8, op: LineMeet, word: u64, k: usize) -> u8 {
        debug_assert!((1..=GATHER_MAX).contains(&k));
        // SAFETY: forwarded contract; `k` indexes `CTRL` (checked by the caller).
        unsafe {
            let ctrl = _mm512_set1_epi64(*CTRL.get_unchecked(k) as i64);
            let idx = _mm512_multishift_epi64_epi8(ctrl, _mm512_set1_epi64(word as i64));
            let cells = _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(p.cast()));
            let wide = _mm_cvtepu8_epi16(_mm512_castsi512_si128(cells));
            match op {
                LineMeet::Min => _mm_cvtsi128_si32(_mm_minpos_epu16(wide)) as u8,
                LineMeet::Max => {
                    let flipped = _mm_xor_si128(wide, _mm_set1_epi16(0xff));
                    !(_mm_cvtsi128_si32(_mm_minpos_epu16(flipped)) as u8)
                }
            }
        }
    }

    /// Joins `value` into the `u8` cells of the 64-byte line at `p` at the first `k`
    /// probe positions of `word`, each distinct cell once: the positions cut out as in
    /// [`meet_u8_probes`], widened to eight 64-bit lanes, `1 << position` in each, or-ed
    /// into the line's mask (a position drawn twice sets its bit once), then
    /// [`join_u8`]'s masked operation.
    ///
    /// # Safety
    /// - The CPU must support AVX-512F, BW and VBMI; callers check with
    ///   [`vbmi_available`](super::vbmi_available).
    /// - `p` is valid for reads and writes of 64 bytes (no alignment needed: one unaligned
    ///   load and store), and nothing else accesses them during the call.
    /// - `k <= GATHER_MAX`: `CTRL[k]` is read unchecked. (`k >= 1` as well for a
    ///   meaningful join: with `k = 0` cell `word & 63` is joined.)
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn join_u8_probes(p: *mut u8, op: LineJoin, word: u64, k: usize, value: u8) {
        debug_assert!((1..=GATHER_MAX).contains(&k));
        // SAFETY: forwarded contract; `k` indexes `CTRL` (checked by the caller).
        unsafe {
            let ctrl = _mm512_set1_epi64(*CTRL.get_unchecked(k) as i64);
            let idx = _mm512_multishift_epi64_epi8(ctrl, _mm512_set1_epi64(word as i64));
            let pos = _mm512_and_si512(
                _mm512_cvtepu8_epi64(_mm512_castsi512_si128(idx)),
                _mm512_set1_epi64(63),
            );
            let bits = _mm512_sllv_epi64(_mm512_set1_epi64(1), pos);
            let mask = _mm512_reduce_or_epi64(bits) as u64;
            join_u8(p, op, mask, value);
        }
    }

    // Each meet: the lanes outside `mask` replaced by the meet's identity (all ones for a
    // minimum, zero for a maximum), then the register reduced by halves.

    /// The meet of the `u8` cells of the 64-byte line at `p` whose bit is set in `mask`.
    ///
    /// # Safety
    /// - The CPU must support AVX-512F and AVX-512BW; callers check with
    ///   [`backend_available`](super::backend_available)`(Backend::Avx512)`.
    /// - `p` is valid for reads of 64 bytes (no alignment needed: one unaligned load), and
    ///   nothing writes them during the call.
    ///
    /// `mask` needs a bit set for a meaningful answer (an empty mask gives the meet's
    /// identity); that is not a memory-safety requirement.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn meet_u8(p: *const u8, op: LineMeet, mask: u64) -> u8 {
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            let (min, fill) = match op {
                LineMeet::Min => (true, _mm512_set1_epi8(-1)),
                LineMeet::Max => (false, _mm512_setzero_si512()),
            };
            let y = _mm512_mask_mov_epi8(fill, mask, x);
            let (lo, hi) = (_mm512_castsi512_si256(y), _mm512_extracti64x4_epi64::<1>(y));
            let a = if min {
                _mm256_min_epu8(lo, hi)
            } else {
                _mm256_max_epu8(lo, hi)
            };
            let (lo, hi) = (_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
            let mut b = if min {
                _mm_min_epu8(lo, hi)
            } else {
                _mm_max_epu8(lo, hi)
            };
            macro_rules! fold {
                ($bytes:literal) => {
                    let c = _mm_srli_si128::<$bytes>(b);
                    b = if min {
                        _mm_min_epu8(b, c)
                    } else {
                        _mm_max_epu8(b, c)
                    };
                };
            }
            fold!(8);
            fold!(4);
            fold!(2);
            fold!(1);
            _mm_cvtsi128_si32(b) as u8
        }
    }

    /// [`meet_u8`] for a line of 32 `u16` cells (the low 32 bits of `mask`).
    ///
    /// # Safety
    /// As [`meet_u8`]: the CPU must support AVX-512F and AVX-512BW, and `p` is valid for
    /// reads of 64 bytes (any alignment) that nothing writes during the call.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn meet_u16(p: *const u16, op: LineMeet, mask: u64) -> u16 {
        let m = mask as u32;
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            // A maximum is the complement of the minimum of the complements.
            let flip = match op {
                LineMeet::Min => _mm512_setzero_si512(),
                LineMeet::Max => _mm512_set1_epi16(-1),
            };
            let y = _mm512_mask_mov_epi16(_mm512_set1_epi16(-1), m, _mm512_xor_si512(x, flip));
            let (lo, hi) = (_mm512_castsi512_si256(y), _mm512_extracti64x4_epi64::<1>(y));
            let a = _mm256_min_epu16(lo, hi);
            let (lo, hi) = (_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
            let b = _mm_minpos_epu16(_mm_min_epu16(lo, hi));
            let low = _mm_cvtsi128_si32(b) as u16;
            match op {
                LineMeet::Min => low,
                LineMeet::Max => !low,
            }
        }
    }

    /// [`meet_u8`] for a line of 16 `u32` cells (the low 16 bits of `mask`).
    ///
    /// # Safety
    /// As [`meet_u8`]: the CPU must support AVX-512F and AVX-512BW, and `p` is valid for
    /// reads of 64 bytes (any alignment) that nothing writes during the call.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn meet_u32(p: *const u32, op: LineMeet, mask: u64) -> u32 {
        let m = mask as u16;
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            match op {
                LineMeet::Min => _mm512_mask_reduce_min_epu32(m, x),
                LineMeet::Max => _mm512_mask_reduce_max_epu32(m, x),
            }
        }
    }

    /// [`meet_u8`] for a line of 8 `u64` cells (the low 8 bits of `mask`).
    ///
    /// # Safety
    /// As [`meet_u8`]: the CPU must support AVX-512F and AVX-512BW, and `p` is valid for
    /// reads of 64 bytes (any alignment) that nothing writes during the call.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn meet_u64(p: *const u64, op: LineMeet, mask: u64) -> u64 {
        let m = mask as u8;
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            match op {
                LineMeet::Min => _mm512_mask_reduce_min_epu64(m, x),
                LineMeet::Max => _mm512_mask_reduce_max_epu64(m, x),
            }
        }
    }

    // Each kernel: the line in one register, the value broadcast, the join computed in
    // every lane and kept (`mask_*` / `mask_mov`) only in the lanes of `mask`.

    /// Joins `value` into the `u8` cells of the 64-byte line at `p` whose bit is set in
    /// `mask`.
    ///
    /// # Safety
    /// - The CPU must support AVX-512F and AVX-512BW; callers check with
    ///   [`backend_available`](super::backend_available)`(Backend::Avx512)`.
    /// - `p` is valid for reads and writes of 64 bytes (no alignment needed: one unaligned
    ///   load and store), and nothing else accesses them during the call.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn join_u8(p: *mut u8, op: LineJoin, mask: u64, value: u8) {
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            let v = _mm512_set1_epi8(value as i8);
            let y = match op {
                LineJoin::Max => _mm512_mask_max_epu8(x, mask, x, v),
                LineJoin::Min => _mm512_mask_min_epu8(x, mask, x, v),
                LineJoin::SaturatingAdd => _mm512_mask_adds_epu8(x, mask, x, v),
            };
            _mm512_storeu_si512(p.cast(), y);
        }
    }

    /// [`join_u8`] for a line of 32 `u16` cells (the low 32 bits of `mask`).
    ///
    /// # Safety
    /// As [`join_u8`]: the CPU must support AVX-512F and AVX-512BW, and `p` is valid for
    /// reads and writes of 64 bytes (any alignment) that nothing else accesses during the
    /// call.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn join_u16(p: *mut u16, op: LineJoin, mask: u64, value: u16) {
        // 32 cells: the mask's low 32 bits.
        let m = mask as u32;
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            let v = _mm512_set1_epi16(value as i16);
            let y = match op {
                LineJoin::Max => _mm512_mask_max_epu16(x, m, x, v),
                LineJoin::Min => _mm512_mask_min_epu16(x, m, x, v),
                LineJoin::SaturatingAdd => _mm512_mask_adds_epu16(x, m, x, v),
            };
            _mm512_storeu_si512(p.cast(), y);
        }
    }

    /// [`join_u8`] for a line of 16 `u32` cells (the low 16 bits of `mask`).
    ///
    /// # Safety
    /// As [`join_u8`]: the CPU must support AVX-512F and AVX-512BW, and `p` is valid for
    /// reads and writes of 64 bytes (any alignment) that nothing else accesses during the
    /// call.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn join_u32(p: *mut u32, op: LineJoin, mask: u64, value: u32) {
        let m = mask as u16;
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            let v = _mm512_set1_epi32(value as i32);
            let y = match op {
                LineJoin::Max => _mm512_mask_max_epu32(x, m, x, v),
                LineJoin::Min => _mm512_mask_min_epu32(x, m, x, v),
                LineJoin::SaturatingAdd => {
                    // No saturating 32-bit add: a lane that wrapped (sum below the cell)
                    // becomes all ones.
                    let s = _mm512_add_epi32(x, v);
                    let wrapped = _mm512_cmplt_epu32_mask(s, x);
                    let s = _mm512_mask_mov_epi32(s, wrapped, _mm512_set1_epi32(-1));
                    _mm512_mask_mov_epi32(x, m, s)
                }
            };
            _mm512_storeu_si512(p.cast(), y);
        }
    }

    /// [`join_u8`] for a line of 8 `u64` cells (the low 8 bits of `mask`).
    ///
    /// # Safety
    /// As [`join_u8`]: the CPU must support AVX-512F and AVX-512BW, and `p` is valid for
    /// reads and writes of 64 bytes (any alignment) that nothing else accesses during the
    /// call.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn join_u64(p: *mut u64, op: LineJoin, mask: u64, value: u64) {
        let m = mask as u8;
        // SAFETY: forwarded contract.
        unsafe {
            let x = _mm512_loadu_si512(p.cast());
            let v = _mm512_set1_epi64(value as i64);
            let y = match op {
                LineJoin::Max => _mm512_mask_max_epu64(x, m, x, v),
                LineJoin::Min => _mm512_mask_min_epu64(x, m, x, v),
                LineJoin::SaturatingAdd => {
                    let s = _mm512_add_epi64(x, v);
                    let wrapped = _mm512_cmplt_epu64_mask(s, x);
                    let s = _mm512_mask_mov_epi64(s, wrapped, _mm512_set1_epi64(-1));
                    _mm512_mask_mov_epi64(x, m, s)
                }
            };
            _mm512_storeu_si512(p.cast(), y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approx::LineCell;

    /// The scalar join of `op`, the oracle.
    fn oracle<T: Copy + Ord>(op: LineJoin, cell: T, value: T, add: fn(T, T) -> T) -> T {
        match op {
            LineJoin::Max => cell.max(value),
            LineJoin::Min => cell.min(value),
            LineJoin::SaturatingAdd => add(cell, value),
        }
    }

    /// Every kernel against the scalar join and meet, on random lines, masks and values biased to
    /// the type's extremes (so saturation happens); where the CPU has no kernel, that
    /// `join_line` declines and leaves the line untouched.
    #[test]
    fn kernels_match_the_scalar_join() {
        macro_rules! check {
            ($t:ty) => {{
                const N: usize = 64 / size_of::<$t>();
                let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ N as u64;
                let mut next = || {
                    state = bloomforge_core::hash::mix64(state.wrapping_add(0x632b_e59b));
                    state
                };
                let ran = backend_available(Backend::Avx512);
                // The kernels run only where the CPU has them (the approximators check
                // before they hold `Avx512`); elsewhere the scalar backend's declining
                // path is what runs.
                let backend = if ran {
                    Backend::Avx512
                } else {
                    Backend::Scalar
                };
                for round in 0..4000 {
                    let pick = |r: u64| -> $t {
                        match r % 4 {
                            0 => <$t>::MAX - (r >> 8) as $t % 4,
                            1 => (r >> 8) as $t % 4,
                            _ => (r >> 8) as $t,
                        }
                    };
                    let line: [$t; N] = std::array::from_fn(|_| pick(next()));
                    let mask = next() & (u64::MAX >> (64 - N));
                    let value = pick(next());
                    let op = [LineJoin::Max, LineJoin::Min, LineJoin::SaturatingAdd][round % 3];
                    let want: [$t; N] = std::array::from_fn(|i| {
                        if mask >> i & 1 != 0 {
                            oracle(op, line[i], value, <$t>::saturating_add)
                        } else {
                            line[i]
                        }
                    });
                    let mut got = line;
                    let did = <$t as LineCell>::join_line(backend, op, &mut got, mask, value);
                    assert_eq!(did, ran);
                    assert_eq!(got, if ran { want } else { line }, "{op:?} mask {mask:#x}");
                    let mut scalar = line;
                    assert!(!<$t as LineCell>::join_line(
                        Backend::Scalar,
                        op,
                        &mut scalar,
                        mask,
                        value
                    ));
                    assert_eq!(scalar, line);
                    // The meets, over a mask with at least one bit.
                    let mask = mask | 1 << (next() % N as u64);
                    for meet in [LineMeet::Min, LineMeet::Max] {
                        let cells = (0..N).filter(|i| mask >> i & 1 != 0).map(|i| line[i]);
                        let want = match meet {
                            LineMeet::Min => cells.min(),
                            LineMeet::Max => cells.max(),
                        };
                        let got = <$t as LineCell>::meet_line(backend, meet, &line, mask);
                        assert_eq!(got, want.filter(|_| ran), "{meet:?} mask {mask:#x}");
                        assert_eq!(
                            <$t as LineCell>::meet_line(Backend::Scalar, meet, &line, mask),
                            None
                        );
                    }
                }
            }};
        }
        check!(u8);
        check!(u16);
        check!(u32);
        check!(u64);
        if !backend_available(Backend::Avx512) {
            eprintln!("no AVX-512BW here: only the declining path was checked");
        }
    }
}
