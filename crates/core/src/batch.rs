//! Building blocks of the pipelined batch loops, shared by every filter crate of the
//! workspace: a source of 64-bit hashes (keys hashed on the fly, or precomputed hashes),
//! a cache-line prefetch, and the prefetch distance.

use core::hash::{BuildHasher, Hash};

/// How many keys ahead of the probe the batch loops hash and prefetch. A DRAM miss costs
/// ~280 ns and an independent one a few ns, so over a hundred lines must be in flight to
/// reach the random-read floor of a core that can keep them.
///
/// Measured on a Zen 5 EPYC (2026-11-26, 100M keys, 125 MB filters, `out_of_cache`,
/// ns/key at 32 / 64 / 96 / 128 / 192 / 256 ahead): random 64-byte reads 5.9-6.4 / 3.8-4.2
/// / 3.4-3.5 / 2.6-2.7 / 3.5 / 2.7; blocked `insert_batch` 7.1-7.6 / 4.9-5.2 / 5.2-5.6 /
/// 4.9-5.0 / 5.6 / 5.2, `contains_batch` 7.0-7.2 / 4.7-4.9 / 4.7-4.9 / 4.1-4.2 / 5.1 /
/// 4.4; split-block `insert_batch` 6.7 / 4.1-4.3 / 4.0-4.1 / 2.9 / 4.0 / 3.1,
/// `contains_batch` 6.9 / 4.2-4.3 / 4.5-4.6 / 3.1-3.2 / 4.6 / 3.3 (the distances that are
/// not powers of two also pay a division for the ring's index). Filters in cache (1M keys)
/// measured the same at 32 and 128. 32 had been the best on the Zen 3 and Intel machines
/// of earlier runs; a core with fewer miss buffers than lines in flight holds the extra
/// prefetches back, so a longer distance should not cost there (not measured again).
pub const PREFETCH_AHEAD: usize = 128;

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
