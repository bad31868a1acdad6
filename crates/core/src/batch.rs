//! Building blocks of the pipelined batch loops, shared by every filter crate of the
//! workspace: a source of 64-bit hashes (keys hashed on the fly, or precomputed hashes),
//! a cache-line prefetch, and the prefetch distance.

use core::hash::{BuildHasher, Hash};

/// How many keys ahead of the probe the batch loops hash and prefetch. A DRAM miss costs
/// ~280 ns and an independent one ~7-11 ns, so dozens of lines must be in flight to reach
/// the random-read floor; 32 measured best on the reference machine.
pub const PREFETCH_AHEAD: usize = 32;

/// A source of 64-bit hashes for a batch loop.
pub trait HashSource {
    /// Number of items.
    fn len(&self) -> usize;
    /// Whether there are no items.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The hash of item `i` (`i < len()`).
    fn hash_at(&self, i: usize) -> u64;
}

/// Keys hashed with a `BuildHasher` as the loop reaches them.
#[derive(Clone, Copy, Debug)]
pub struct Keys<'a, T, S> {
    /// The keys.
    pub keys: &'a [T],
    /// The hasher.
    pub hasher: &'a S,
}

impl<T: Hash, S: BuildHasher> HashSource for Keys<'_, T, S> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.keys.len()
    }
    #[inline(always)]
    fn hash_at(&self, i: usize) -> u64 {
        self.hasher.hash_one(&self.keys[i])
    }
}

/// Precomputed hashes.
#[derive(Clone, Copy, Debug)]
pub struct Hashes<'a>(pub &'a [u64]);

impl HashSource for Hashes<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn hash_at(&self, i: usize) -> u64 {
        self.0[i]
    }
}

/// Prefetches the cache line at `ptr` into all cache levels (a no-op off x86-64). Any
/// address is allowed: a prefetch is a hint and never faults.
#[inline(always)]
pub fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}
