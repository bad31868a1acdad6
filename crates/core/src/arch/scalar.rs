//! Portable scalar kernels: the reference every SIMD kernel is tested against.

use super::Kernel;
use crate::block::{Block256, Block512, SPLIT_SALTS};

/// The portable kernel.
pub(crate) struct Scalar;

pub(crate) use crate::block::blocked_position;

/// Bit (0..32) that `h32` sets in word `i` of a split block.
#[inline(always)]
pub(crate) fn split_bit(h32: u32, i: usize) -> u32 {
    h32.wrapping_mul(SPLIT_SALTS[i]) >> 27
}

// SAFETY: the scalar kernel uses no CPU feature beyond the compilation target.
unsafe impl Kernel for Scalar {
    const GROUPED_BLOCKED_INSERT: bool = true;

    /// [`Kernel::blocked_contains`] on the scalar code path.
    ///
    /// # Safety
    /// Callable on any CPU: the scalar code uses no feature beyond the compilation target. `k`
    /// must be at most 64 as for every kernel; a larger `k` panics on the bounds-checked
    /// `BLOCKED_POWERS` index instead of reading out of bounds.
    #[inline(always)]
    unsafe fn blocked_contains(block: &Block512, h32: u32, k: u32) -> bool {
        (0..k as usize).all(|j| {
            let p = blocked_position(h32, j);
            block.words[(p >> 6) as usize] >> (p & 63) & 1 != 0
        })
    }

    /// [`Kernel::blocked_mask`] on the scalar code path.
    ///
    /// # Safety
    /// Callable on any CPU: the scalar code uses no feature beyond the compilation target. `k`
    /// must be at most 64 as for every kernel; a larger `k` panics on the bounds-checked
    /// `BLOCKED_POWERS` index instead of reading out of bounds.
    #[inline(always)]
    unsafe fn blocked_mask(h32: u32, k: u32) -> Block512 {
        let mut mask = Block512::ZERO;
        for j in 0..k as usize {
            let p = blocked_position(h32, j);
            mask.words[(p >> 6) as usize] |= 1u64 << (p & 63);
        }
        mask
    }

    /// [`Kernel::blocked_insert`] on the scalar code path.
    ///
    /// # Safety
    /// Callable on any CPU: the scalar code uses no feature beyond the compilation target. `k`
    /// must be at most 64 as for every kernel; a larger `k` panics on the bounds-checked
    /// `BLOCKED_POWERS` index instead of reading out of bounds.
    #[inline(always)]
    unsafe fn blocked_insert(block: &mut Block512, h32: u32, k: u32) -> bool {
        let mut missing = 0u64;
        for j in 0..k as usize {
            let p = blocked_position(h32, j);
            let word = &mut block.words[(p >> 6) as usize];
            let bit = 1u64 << (p & 63);
            missing |= bit & !*word;
            *word |= bit;
        }
        missing == 0
    }

    /// [`Kernel::split_mask`] on the scalar code path.
    ///
    /// # Safety
    /// No precondition: the scalar code uses no CPU feature and indexes only fixed-size arrays.
    #[inline(always)]
    unsafe fn split_mask(h32: u32) -> Block256 {
        Block256 {
            words: core::array::from_fn(|i| 1u32 << split_bit(h32, i)),
        }
    }

    /// [`Kernel::split_contains`] on the scalar code path.
    ///
    /// # Safety
    /// No precondition: the scalar code uses no CPU feature and indexes only fixed-size arrays.
    #[inline(always)]
    unsafe fn split_contains(block: &Block256, h32: u32) -> bool {
        // SAFETY: the scalar kernel needs no CPU feature.
        let mask = unsafe { Self::split_mask(h32) };
        block
            .words
            .iter()
            .zip(mask.words)
            .fold(0u32, |acc, (w, m)| acc | (m & !w))
            == 0
    }

    /// [`Kernel::split_insert`] on the scalar code path.
    ///
    /// # Safety
    /// No precondition: the scalar code uses no CPU feature and indexes only fixed-size arrays.
    #[inline(always)]
    unsafe fn split_insert(block: &mut Block256, h32: u32) -> bool {
        // SAFETY: the scalar kernel needs no CPU feature.
        let mask = unsafe { Self::split_mask(h32) };
        let mut missing = 0u32;
        for (w, m) in block.words.iter_mut().zip(mask.words) {
            missing |= m & !*w;
            *w |= m;
        }
        missing == 0
    }
}
