//! The pipelined batch loops, shared by every filter crate of the workspace: the loop
//! itself ([`batch_pipeline!`](crate::batch_pipeline): hash ahead, prefetch, probe), a
//! source of 64-bit hashes (keys hashed on the fly, or precomputed hashes), a cache-line
//! prefetch, the prefetch distance and the chunking that routes `Extend` through the batch
//! inserts.

use core::hash::{BuildHasher, Hash};

/// How many keys ahead of the probe the batch loops hash and prefetch. A DRAM miss costs
/// ~280 ns and an independent one a few ns, so over a hundred lines must be in flight to
/// reach the random-read floor of a core that can keep them.
///
/// Chosen by measurement (100M keys, 125 MB filters, the `out_of_cache` example, on an AMD
/// EPYC Zen 5, 2 cores; ns/key at 32 / 64 / 96 / 128 / 192 / 256 ahead): random 64-byte
/// reads 5.9-6.4 / 3.8-4.2 / 3.4-3.5 / 2.6-2.7 / 3.5 / 2.7; blocked `insert_batch`
/// 7.1-7.6 / 4.9-5.2 / 5.2-5.6 / 4.9-5.0 / 5.6 / 5.2, `contains_batch` 7.0-7.2 / 4.7-4.9 /
/// 4.7-4.9 / 4.1-4.2 / 5.1 / 4.4; split-block `insert_batch` 6.7 / 4.1-4.3 / 4.0-4.1 /
/// 2.9 / 4.0 / 3.1, `contains_batch` 6.9 / 4.2-4.3 / 4.5-4.6 / 3.1-3.2 / 4.6 / 3.3 (the
/// distances that are not powers of two also pay a division for the ring's index). Filters
/// in cache (1M keys) measure the same at 32 and 128. On AMD Zen 3 and Intel Xeon cores,
/// where 32 measured best, a core with fewer miss buffers than lines in flight holds the
/// extra prefetches back, so the longer distance should not cost there (128 is not measured
/// on them). See `docs/benchmarks.md`.
pub const PREFETCH_AHEAD: usize = 128;

/// The ring of a pipelined batch loop: `N` slots of what the loop prepared for the items
/// ahead (a block index and hash, a located key), left uninitialised.
///
/// Written by hand because zeroing the ring cost more than short batches do: a ring of
/// 128 `(usize, u32)` is 256 scalar stores (the tuple's padding keeps them from being one
/// `memset`), ~35 ns a call, and a blocked filter's `contains_batch` of 8 keys ran at 6.9
/// ns a key against 2.3 for single calls (d-left's 8 KB ring: 11.4 against 4.5).
///
/// ```
/// use bloomforge_core::batch::Ring;
/// let mut ring = Ring::<u64, 4>::new();
/// ring.set(2, 7);
/// // SAFETY: slot 2 was set above.
/// assert_eq!(unsafe { ring.get(2) }, 7);
/// ```
pub struct Ring<T, const N: usize> {
    slots: [core::mem::MaybeUninit<T>; N],
    /// Debug builds (and the tests, whose profile keeps debug assertions) record which
    /// slots were written, so that a `get` of an unwritten slot panics instead of reading
    /// uninitialised memory: the batch loops' ring indexing is then checked by every test
    /// that runs them. Release builds carry nothing.
    #[cfg(debug_assertions)]
    written: [bool; N],
}

impl<T: Copy, const N: usize> Ring<T, N> {
    /// A ring with no slot set (nothing written).
    #[inline(always)]
    pub fn new() -> Self {
        Ring {
            slots: [const { core::mem::MaybeUninit::uninit() }; N],
            #[cfg(debug_assertions)]
            written: [false; N],
        }
    }

    /// Sets slot `i`, and returns it (to fill it in place).
    ///
    /// # Panics
    /// If `i >= N`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, value: T) -> &mut T {
        #[cfg(debug_assertions)]
        {
            self.written[i] = true;
        }
        self.slots[i].write(value)
    }

    /// Sets slots `0..len` to `value(0)`, `value(1)`, .. and returns them as a slice (the
    /// batch loops that hash a block of keys first).
    ///
    /// ```
    /// use bloomforge_core::batch::Ring;
    /// let mut ring = Ring::<u64, 8>::new();
    /// assert_eq!(ring.fill(3, |i| 10 * i as u64), &[0, 10, 20]);
    /// ```
    ///
    /// # Panics
    /// If `len > N`.
    #[inline(always)]
    pub fn fill(&mut self, len: usize, mut value: impl FnMut(usize) -> T) -> &[T] {
        for (i, slot) in self.slots[..len].iter_mut().enumerate() {
            slot.write(value(i));
        }
        #[cfg(debug_assertions)]
        self.written[..len].fill(true);
        // SAFETY: slots `0..len` were just written (the slice above is in bounds), and
        // `MaybeUninit<T>` has `T`'s layout.
        unsafe { core::slice::from_raw_parts(self.slots.as_ptr().cast::<T>(), len) }
    }

    /// The value of slot `i`.
    ///
    /// # Safety
    /// Slot `i` was written ([`set`](Self::set) or [`fill`](Self::fill)) since the ring
    /// was made.
    ///
    /// # Panics
    /// If `i >= N`; in builds with debug assertions, also if slot `i` was never written
    /// (the contract above, checked).
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> T {
        #[cfg(debug_assertions)]
        assert!(
            self.written[i],
            "Ring::get of slot {i}, which was never written"
        );
        // SAFETY: the caller guarantees the slot was written.
        unsafe { self.slots[i].assume_init() }
    }
}

impl<T: Copy, const N: usize> Default for Ring<T, N> {
    /// [`Ring::new`].
    #[inline(always)]
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> core::fmt::Debug for Ring<T, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The slots may be unwritten: only the capacity is shown.
        f.debug_struct("Ring")
            .field("slots", &N)
            .finish_non_exhaustive()
    }
}

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

/// The pipelined batch loop of every filter of the workspace: `prepare` hashes item `p`,
/// prefetches the memory its probe will read and gives what the probe needs (a block
/// index and the hash, a located key); `probe` probes item `i` with it. Item `i + ahead`
/// is prepared just before item `i` is probed, so `ahead` prefetches are in flight while
/// the probes run. The distance is the table's: [`PREFETCH_AHEAD`] for tables that touch
/// one line a key, less for those that touch several; a power of two (the ring is indexed
/// with a mask), no larger than the ring (`ring: N`, which defaults to the distance).
///
/// A macro, not a function taking closures: a closure that LLVM leaves out of line loses
/// the target features of the kernel function it was written in (a closure inherits only
/// those of the function it is written in, and the batch loops are generic helpers that
/// `#[target_feature]` wrappers inline), so its SIMD kernel calls become calls per
/// intrinsic. Measured: a blocked `insert_batch` whose probe closure had two call sites
/// (the grouped and the interleaved schedule) ran at 395 ns a key against 13. Expanded in
/// place, the loop is what a hand-written one is, and its ring indexing is written once.
///
/// `prepare |p| init => |slot| fill` prepares in place: the ring slot is set to `init`, then
/// `fill` completes it through `slot` (`&mut` to the slot; d-left locates a key's buckets
/// into its 128-byte ring entry this way, without a copy).
///
/// `prepare` runs once per item in increasing order, `probe` once per item in increasing
/// order, `prepare` of item `j` before `probe` of item `j`. `probe` may `return` from the
/// enclosing function (or use `?`); `break` and `continue` act on the macro's loop.
///
/// ```
/// use bloomforge_core::batch_pipeline;
/// let table = [10u64, 20, 30, 40];
/// let keys = [3usize, 0, 2, 2, 1];
/// let mut out = [0u64; 5];
/// batch_pipeline!(ahead: 2, len: keys.len(),
///     // here a filter would prefetch `&table[keys[p]]`
///     prepare |p| keys[p],
///     probe |i, slot| out[i] = table[slot]);
/// assert_eq!(out, [40, 10, 30, 30, 20]);
/// ```
///
/// `grouped: G` (with `G <= ahead`) probes `G` items, then prepares the `G` items that
/// reuse their slots, instead of alternating one and one: out of cache, a probe of ~100
/// instructions (the blocked layout's insert) leaves each stalled prefetch only a couple of
/// probes' worth of work behind it in the reorder buffer when interleaved; in groups the
/// prefetches issue together (see core's blocked insert for the measurements).
///
/// ```
/// use bloomforge_core::batch_pipeline;
/// let keys: Vec<u64> = (0..1000).map(|i| i * 7 % 13).collect();
/// let (mut a, mut b) = (Vec::new(), Vec::new());
/// batch_pipeline!(ahead: 8, len: keys.len(), prepare |p| keys[p] * 2, probe |_i, x| a.push(x));
/// batch_pipeline!(grouped: 4, ahead: 8, len: keys.len(),
///     prepare |p| keys[p] * 2, probe |_i, x| b.push(x));
/// assert_eq!(a, b);
/// ```
///
/// `blocks: B` hashes `B` keys at a time first (`hash |k|`, a tight loop whose hashes the
/// CPU computes side by side), then probes them in order, calling `fetch |h|` (the
/// prefetch of a hash's memory) `ahead` keys ahead within the block; `ahead` may be any
/// value, 0 for no prefetch (tables that answer from the cache). It walks the `keys`
/// slice (and an `out` slice beside it, whose elements the probe gets as `&mut`) by
/// chunks, so the loop indexes nothing. The retrieval structures (Bloomier, fuse,
/// approximators) use it: their probes are a few loads, so the hashing is a large share of
/// a key's time.
///
/// ```
/// use bloomforge_core::batch_pipeline;
/// let table = [10u64, 20, 30, 40];
/// let keys = [3usize, 0, 2, 2, 1];
/// let mut out = [0u64; 5];
/// batch_pipeline!(blocks: 2, ahead: 1, keys: keys, out: out,
///     hash |k| *k as u64,
///     // here a filter would prefetch the line of hash `h`
///     fetch |h| assert!(h < 4),
///     probe |o, h| *o = table[h as usize]);
/// assert_eq!(out, [40, 10, 30, 30, 20]);
/// // Without `out`, the probe gets the key beside its hash.
/// let mut sum = 0;
/// batch_pipeline!(blocks: 2, ahead: 1, keys: keys, hash |k| *k as u64, fetch |_h| (),
///     probe |k, h| sum += table[h as usize] * *k as u64);
/// assert_eq!(sum, 120 + 0 + 60 + 60 + 20);
/// ```
///
/// # Panics
/// Unless the distance is a power of two no larger than the ring (a check the compiler
/// removes for constant distances); with `blocks`, any distance is allowed.
#[macro_export]
macro_rules! batch_pipeline {
    (ahead: $d:expr, len: $len:expr,
     prepare |$p:ident| $prep:expr $(=> |$slot:ident| $fill:expr)?,
     probe |$i:ident, $item:pat_param| $op:expr $(,)?) => {
        $crate::batch_pipeline!(ring: $d, ahead: $d, len: $len,
            prepare |$p| $prep $(=> |$slot| $fill)?, probe |$i, $item| $op)
    };
    (ring: $n:expr, ahead: $d:expr, len: $len:expr,
     prepare |$p:ident| $prep:expr $(=> |$slot:ident| $fill:expr)?,
     probe |$i:ident, $item:pat_param| $op:expr $(,)?) => {{
        let len: usize = $len;
        let distance: usize = $d;
        assert!(
            distance.is_power_of_two() && distance <= $n,
            "batch_pipeline: the distance is a power of two no larger than the ring"
        );
        let mask = distance - 1;
        let mut ring = $crate::batch::Ring::<_, { $n }>::new();
        for $p in 0..len.min(distance) {
            let _slot = ring.set($p, $prep);
            $(let $slot = _slot; $fill;)?
        }
        for $i in 0..len {
            // SAFETY: slot `i & mask` (`i % distance`) was set before this loop
            // (i < distance) or at iteration `i - distance` (whose `i - distance +
            // distance = i < len`).
            let item = unsafe { ring.get($i & mask) };
            if $i + distance < len {
                let $p = $i + distance;
                let _slot = ring.set($i & mask, $prep);
                $(let $slot = _slot; $fill;)?
            }
            let $item = item;
            $op;
        }
    }};
    (blocks: $b:expr, ahead: $d:expr, keys: $keys:expr, out: $out:expr,
     hash |$k:ident| $hash:expr, fetch |$f:ident| $fetch:expr,
     probe |$o:ident, $item:ident| $op:expr $(,)?) => {
        $crate::batch_pipeline!(@blocks $b, $d, $keys.chunks($b).zip($out.chunks_mut($b)),
            hash |$k| $hash, fetch |$f| $fetch, probe |$o, $item| $op)
    };
    (blocks: $b:expr, ahead: $d:expr, keys: $keys:expr,
     hash |$k:ident| $hash:expr, fetch |$f:ident| $fetch:expr,
     probe |$key:ident, $item:ident| $op:expr $(,)?) => {
        $crate::batch_pipeline!(@blocks $b, $d, $keys.chunks($b).map(|c| (c, c)),
            hash |$k| $hash, fetch |$f| $fetch, probe |$key, $item| $op)
    };
    // The `blocks` schedule over `(chunk of keys, what the probe gets beside each hash)`.
    (@blocks $b:expr, $d:expr, $pairs:expr,
     hash |$k:ident| $hash:expr, fetch |$f:ident| $fetch:expr,
     probe |$o:ident, $item:ident| $op:expr) => {{
        let ahead: usize = $d;
        let mut ring = $crate::batch::Ring::<u64, { $b }>::new();
        for (chunk, beside) in $pairs {
            let block = ring.fill(chunk.len(), |j| {
                let $k = &chunk[j];
                $hash
            });
            for &$f in block.iter().take(ahead) {
                $fetch;
            }
            for (j, (&$item, $o)) in block.iter().zip(beside).enumerate() {
                if ahead > 0 {
                    if let Some(&$f) = block.get(j + ahead) {
                        $fetch;
                    }
                }
                $op;
            }
        }
    }};
    (grouped: $g:expr, ahead: $d:expr, len: $len:expr,
     prepare |$p:ident| $prep:expr, probe |$i:ident, $item:pat_param| $op:expr $(,)?) => {{
        const { assert!(($d as usize).is_power_of_two() && $g > 0 && $g <= $d) };
        let len: usize = $len;
        let mut ring = $crate::batch::Ring::<_, { $d }>::new();
        for $p in 0..len.min($d) {
            ring.set($p, $prep);
        }
        let mut start = 0;
        while start < len {
            let end = (start + $g).min(len);
            for $i in start..end {
                // SAFETY: slot `i % ahead` was set before this loop (i < ahead) or by the
                // refill of item `i - ahead`, in an earlier group (group <= ahead; i < len).
                let $item = unsafe { ring.get($i % $d) };
                $op;
            }
            for j in start..end.min(len.saturating_sub($d)) {
                let $p = j + $d;
                ring.set(j % $d, $prep);
            }
            start = end;
        }
    }};
}

/// Keys an `Extend` hands to a batch insert at a time: many rounds of the batch loops'
/// prefetch ring, few enough to stay in the L1/L2 cache.
pub const EXTEND_CHUNK: usize = 1024;

/// Feeds the keys of `iter` to `insert` in chunks of up to [`EXTEND_CHUNK`], so that every
/// `Extend` goes through its type's pipelined batch insert (hash ahead, prefetch, probe)
/// rather than key by key. `insert` sees the keys in order and is never called with an
/// empty chunk.
pub fn for_each_chunk<K>(iter: impl IntoIterator<Item = K>, mut insert: impl FnMut(&[K])) {
    let Ok(()) = try_for_each_chunk::<K, core::convert::Infallible>(iter, |chunk| {
        insert(chunk);
        Ok(())
    });
}

/// [`for_each_chunk`] for a fallible batch insert: stops at the first chunk whose
/// `insert` fails and returns its error (later keys are not read from `iter`).
///
/// # Errors
/// The first error `insert` returns.
pub fn try_for_each_chunk<K, E>(
    iter: impl IntoIterator<Item = K>,
    mut insert: impl FnMut(&[K]) -> Result<(), E>,
) -> Result<(), E> {
    let iter = iter.into_iter();
    let mut chunk = Vec::with_capacity(iter.size_hint().0.clamp(1, EXTEND_CHUNK));
    for key in iter {
        chunk.push(key);
        if chunk.len() == EXTEND_CHUNK {
            insert(&chunk)?;
            chunk.clear();
        }
    }
    if chunk.is_empty() {
        Ok(())
    } else {
        insert(&chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;

    #[test]
    fn chunks_cover_every_key_in_order() {
        for n in [0, 1, super::EXTEND_CHUNK - 1, super::EXTEND_CHUNK, 2500] {
            let mut seen = Vec::new();
            super::for_each_chunk(0..n, |chunk| {
                assert!(!chunk.is_empty() && chunk.len() <= super::EXTEND_CHUNK);
                seen.extend_from_slice(chunk);
            });
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn fallible_chunks_stop_at_the_first_error() {
        let mut seen = Vec::new();
        let r = super::try_for_each_chunk(0..5000, |chunk: &[i32]| {
            seen.extend_from_slice(chunk);
            if seen.len() > super::EXTEND_CHUNK {
                Err(seen.len())
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err(2 * super::EXTEND_CHUNK));
        assert_eq!(
            seen,
            (0..2 * super::EXTEND_CHUNK as i32).collect::<Vec<_>>()
        );
        assert_eq!(super::try_for_each_chunk(0..0, |_: &[i32]| Err(())), Ok(()));
    }

    /// Every schedule prepares and probes each item once, in order, preparing an item
    /// before probing it, at lengths around the ring's size and at a run-time distance
    /// below the ring's; `return` in the probe leaves the loop.
    #[test]
    fn pipelines_visit_every_item_in_order() {
        fn check(len: usize, log: &[(char, usize)]) {
            let a: Vec<usize> = log.iter().filter(|e| e.0 == 'a').map(|e| e.1).collect();
            let o: Vec<usize> = log.iter().filter(|e| e.0 == 'o').map(|e| e.1).collect();
            assert_eq!(a, (0..len).collect::<Vec<_>>());
            assert_eq!(o, (0..len).collect::<Vec<_>>());
            for i in 0..len {
                let pa = log.iter().position(|&e| e == ('a', i)).unwrap();
                let po = log.iter().position(|&e| e == ('o', i)).unwrap();
                assert!(pa < po, "item {i} probed before it was prepared");
            }
        }
        fn stop_at_five(len: usize) -> (Vec<usize>, Result<(), usize>) {
            let mut probed = Vec::new();
            let r = (|| {
                crate::batch_pipeline!(ahead: 4, len: len, prepare |p| p,
                probe |i, _x| {
                    probed.push(i);
                    if i == 5 {
                        return Err(i);
                    }
                });
                Ok(())
            })();
            (probed, r)
        }
        for len in [0, 1, 3, 4, 5, 7, 8, 9, 31, 100] {
            let mut log = Vec::new();
            crate::batch_pipeline!(ahead: 4, len: len,
                prepare |p| { log.push(('a', p)); p * 3 },
                probe |i, x| { assert_eq!(x, i * 3); log.push(('o', i)) });
            check(len, &std::mem::take(&mut log));
            crate::batch_pipeline!(ring: 8, ahead: 2, len: len,
                prepare |p| { log.push(('a', p)); p * 3 },
                probe |i, x| { assert_eq!(x, i * 3); log.push(('o', i)) });
            check(len, &std::mem::take(&mut log));
            crate::batch_pipeline!(grouped: 2, ahead: 4, len: len,
                prepare |p| { log.push(('a', p)); p * 3 },
                probe |i, x| { assert_eq!(x, i * 3); log.push(('o', i)) });
            check(len, &std::mem::take(&mut log));
            crate::batch_pipeline!(grouped: 4, ahead: 4, len: len,
                prepare |p| { log.push(('a', p)); p * 3 },
                probe |i, x| { assert_eq!(x, i * 3); log.push(('o', i)) });
            check(len, &std::mem::take(&mut log));
            let (probed, r) = stop_at_five(len);
            assert_eq!(r, if len > 5 { Err(5) } else { Ok(()) });
            assert_eq!(probed, (0..len.min(6)).collect::<Vec<_>>());
        }
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn a_distance_that_is_not_a_power_of_two_panics() {
        let distance = 3;
        crate::batch_pipeline!(ring: 8, ahead: distance, len: 10, prepare |p| p, probe |_i, x| assert!(x < 10));
    }

    #[test]
    fn ring_returns_what_was_set_and_filled() {
        let mut ring = Ring::<(u64, u32), 4>::new();
        assert_eq!(ring.fill(2, |i| (i as u64, 7)), &[(0, 7), (1, 7)]);
        ring.set(3, (9, 9)).1 = 10;
        // SAFETY: slots 0, 1 (fill) and 3 (set) were written.
        unsafe {
            assert_eq!(ring.get(0), (0, 7));
            assert_eq!(ring.get(1), (1, 7));
            assert_eq!(ring.get(3), (9, 10));
        }
    }

    /// The debug-build check of `get`'s contract: reading a slot that was never written
    /// panics before any uninitialised memory is read.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "never written")]
    fn ring_get_of_an_unwritten_slot_panics_in_debug_builds() {
        let mut ring = Ring::<u64, 4>::new();
        ring.set(0, 1);
        // SAFETY: not met on purpose; with debug assertions `get` panics first.
        let _ = unsafe { ring.get(1) };
    }
}
