//! The portable kernel: reads each cell with one unaligned 64-bit load. The reference
//! every other kernel is tested against.

use super::{Backend, Kernel, Scan};
use crate::layout::Geometry;

/// The scalar kernel.
pub(crate) struct Scalar;

/// Cell `j` of the bucket at `bucket`, with junk above bit `s` (callers mask).
///
/// # Safety
/// `bucket` is valid for reads of `g.bucket_bytes + 8` bytes and `j < g.cells`: the cell
/// is read with one unaligned 8-byte load at byte `j * g.cell_bits / 8`, which is below
/// `g.bucket_bytes`. No CPU feature is needed.
#[inline(always)]
unsafe fn raw_cell(g: &Geometry, bucket: *const u8, j: u32) -> u32 {
    let bit = j * g.cell_bits;
    // SAFETY: `bit / 8 < bucket_bytes`, so the 8-byte read stays inside the bucket plus
    // the slack (the caller's contract); unaligned reads are allowed.
    let word = unsafe {
        bucket
            .add((bit / 8) as usize)
            .cast::<u64>()
            .read_unaligned()
    };
    (u64::from_le(word) >> (bit % 8)) as u32
}

// SAFETY: plain scalar code, no CPU feature needed.
unsafe impl Kernel for Scalar {
    const BACKEND: Backend = Backend::Scalar;

    /// [`Kernel::scan`], one cell at a time.
    ///
    /// # Safety
    /// No CPU feature is needed; `bucket` must be valid for reads of `g.bucket_bytes + SLACK`
    /// bytes (each cell is an unaligned 8-byte load at most `g.bucket_bytes - 1` bytes in,
    /// and `SLACK >= 8`). `SHAPE` is ignored.
    #[inline(always)]
    unsafe fn scan<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> Scan {
        let mut s = Scan {
            matches: 0,
            occupied: 0,
        };
        for j in 0..g.cells {
            // SAFETY: `j < cells`; the caller guarantees the bucket bytes plus slack.
            let cell = unsafe { raw_cell(g, bucket, j) };
            let occupied = (cell & g.counter_field != 0) as u32;
            let hit = occupied & ((cell & g.rem_mask == rem) as u32);
            s.occupied |= occupied << j;
            s.matches |= hit << j;
        }
        s
    }

    /// [`Kernel::any_match`] as a loop over [`Kernel::matches`].
    ///
    /// # Safety
    /// No CPU feature is needed. `d <= 8` (a larger `d` panics on the bounds-checked
    /// arrays), and each `buckets[i]`, `i < d`, must be valid for reads of
    /// `g.bucket_bytes + SLACK` bytes (each cell is an unaligned 8-byte load at most
    /// `g.bucket_bytes - 1` bytes in, and `SLACK >= 8`).
    #[inline(always)]
    unsafe fn any_match<const SHAPE: u8>(
        g: &Geometry,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        d: usize,
        _no_zero_rem: bool,
        _same_rem: bool,
    ) -> bool {
        // SAFETY: forwarded contract (`d <= 8`, readable buckets).
        (0..d).any(|i| unsafe { Self::matches::<SHAPE>(g, buckets[i], rems[i]) } != 0)
    }

    /// [`Kernel::matches`]: the match mask of [`Kernel::scan`].
    ///
    /// # Safety
    /// As for `scan`: `bucket` must be valid for reads of `g.bucket_bytes + SLACK` bytes
    /// (each cell is an unaligned 8-byte load at most `g.bucket_bytes - 1` bytes in, and
    /// `SLACK >= 8`).
    #[inline(always)]
    unsafe fn matches<const SHAPE: u8>(g: &Geometry, bucket: *const u8, rem: u32) -> u32 {
        // SAFETY: forwarded contract.
        unsafe { Self::scan::<SHAPE>(g, bucket, rem).matches }
    }
}
