//! Portable SIMD kernels on `wide` (SSE2 on a default x86-64 build, NEON on aarch64): the
//! fast path where no run-time-detected x86 kernel applies.
//!
//! `wide` picks its instruction set when `wide` itself is compiled, so inside an AVX2
//! function it still runs 128-bit halves: that is why the x86 fast paths are written with
//! `std::arch` instead. Split-block probes map directly onto `u32x8`; blocked probes need a
//! cross-lane word gather that `wide` lacks, so they use the scalar kernel.

use super::scalar::Scalar;
use super::Kernel;
use crate::block::{Block256, Block512, SPLIT_SALTS};
use wide::u32x8;

/// The `wide` kernel.
pub(crate) struct Portable;

#[inline(always)]
fn split_mask_vec(h32: u32) -> u32x8 {
    let bits = (u32x8::splat(h32) * u32x8::new(SPLIT_SALTS)) >> 27;
    u32x8::splat(1) << bits
}

// SAFETY: `wide` selects its instructions at compile time for the compilation target, so
// these methods need no CPU feature beyond the target's baseline.
unsafe impl Kernel for Portable {
    const GROUPED_BLOCKED_INSERT: bool = true;

    /// [`Kernel::blocked_contains`]: the scalar kernel (`wide` has no cross-lane word gather).
    ///
    /// # Safety
    /// Callable on any CPU (it runs the scalar kernel). `k` must be at most 64 as for every
    /// kernel; a larger `k` panics in the scalar kernel instead of reading out of bounds.
    #[inline(always)]
    unsafe fn blocked_contains(block: &Block512, h32: u32, k: u32) -> bool {
        // SAFETY: the scalar kernel needs no CPU feature; `k <= 64` is this function's own
        // precondition.
        unsafe { Scalar::blocked_contains(block, h32, k) }
    }

    /// [`Kernel::blocked_mask`]: the scalar kernel.
    ///
    /// # Safety
    /// Callable on any CPU (it runs the scalar kernel). `k` must be at most 64 as for every
    /// kernel; a larger `k` panics in the scalar kernel instead of reading out of bounds.
    #[inline(always)]
    unsafe fn blocked_mask(h32: u32, k: u32) -> Block512 {
        // SAFETY: as above.
        unsafe { Scalar::blocked_mask(h32, k) }
    }

    /// [`Kernel::blocked_insert`]: the scalar kernel.
    ///
    /// # Safety
    /// Callable on any CPU (it runs the scalar kernel). `k` must be at most 64 as for every
    /// kernel; a larger `k` panics in the scalar kernel instead of reading out of bounds.
    #[inline(always)]
    unsafe fn blocked_insert(block: &mut Block512, h32: u32, k: u32) -> bool {
        // SAFETY: as above.
        unsafe { Scalar::blocked_insert(block, h32, k) }
    }

    /// [`Kernel::split_mask`] in `u32x8` lanes.
    ///
    /// # Safety
    /// No precondition: `wide` picks its instructions for the compilation target when it is
    /// built, and no memory is accessed beyond the block reference.
    #[inline(always)]
    unsafe fn split_mask(h32: u32) -> Block256 {
        Block256 {
            words: split_mask_vec(h32).to_array(),
        }
    }

    /// [`Kernel::split_contains`] in `u32x8` lanes.
    ///
    /// # Safety
    /// No precondition: `wide` picks its instructions for the compilation target when it is
    /// built, and no memory is accessed beyond the block reference.
    #[inline(always)]
    unsafe fn split_contains(block: &Block256, h32: u32) -> bool {
        let mask = split_mask_vec(h32);
        (u32x8::new(block.words) & mask).cmp_eq(mask).all()
    }

    /// [`Kernel::split_insert`] in `u32x8` lanes.
    ///
    /// # Safety
    /// No precondition: `wide` picks its instructions for the compilation target when it is
    /// built, and no memory is accessed beyond the block reference.
    #[inline(always)]
    unsafe fn split_insert(block: &mut Block256, h32: u32) -> bool {
        let mask = split_mask_vec(h32);
        let words = u32x8::new(block.words);
        block.words = (words | mask).to_array();
        (words & mask).cmp_eq(mask).all()
    }
}
