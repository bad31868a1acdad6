//! The layout-generic engine under the public block filters: storage, single and batch
//! probes (with prefetch pipelining), and their atomic counterparts. The public types in
//! `filters.rs` add hashing and the API; everything `unsafe` lives here and in `arch`.

use crate::arch::{dispatch_fn, Backend, Kernel};
use crate::block::ZeroInit;
use crate::layout::Layout;
use crate::ranges::{RangeSplit, RangeSplitter};
use crate::{Error, Result};
use core::hash::{BuildHasher, Hash};

pub(crate) use crate::batch::{prefetch, HashSource, Hashes, Keys, PREFETCH_AHEAD};

/// Validates `k` against the layout.
pub(crate) fn check_hashes<L: Layout>(k: u32) -> Result<()> {
    if k < L::MIN_HASHES.max(1) || k > L::MAX_HASHES {
        return Err(Error::InvalidHashCount {
            k,
            min: L::MIN_HASHES.max(1),
            max: L::MAX_HASHES,
        });
    }
    Ok(())
}

/// Allocates `n` zeroed values, as an error instead of an abort when that fails.
///
/// Block types are 32- or 64-byte aligned, and for alignments above 16 the system
/// allocator's `alloc_zeroed` is `alloc` plus a `memset` (not `calloc`): every page is
/// touched here. Large arrays are therefore allocated uninitialised, advised for huge
/// pages ([`crate::memory`]) and only then zeroed, so those first touches fault in huge
/// pages.
pub(crate) fn alloc_blocks<B: ZeroInit>(n: u64, max: u64) -> Result<Box<[B]>> {
    if n == 0 {
        return Err(Error::ZeroBits);
    }
    if n > max {
        return Err(Error::TooLarge { requested: n, max });
    }
    let len = usize::try_from(n).map_err(|_| Error::TooLarge { requested: n, max })?;
    let failed = Error::AllocationFailed {
        bytes: len.saturating_mul(core::mem::size_of::<B>()),
    };
    let layout = std::alloc::Layout::array::<B>(len).map_err(|_| failed.clone())?;
    let ptr = if layout.size() >= crate::memory::HUGE_PAGE_MIN_BYTES {
        // SAFETY: `layout` has a non-zero size (len >= 1 and B is not zero-sized).
        let raw = unsafe { std::alloc::alloc(layout) };
        if !raw.is_null() {
            // SAFETY: `raw..raw + layout.size()` is the allocation just made, live and not
            // yet shared.
            unsafe { crate::memory::advise_raw(raw, layout.size()) };
            // SAFETY: `raw` points to `layout.size()` writable bytes just allocated.
            unsafe { crate::memory::zero_raw(raw, layout.size()) };
        }
        raw.cast::<B>()
    } else {
        // SAFETY: `layout` has a non-zero size (len >= 1 and B is not zero-sized).
        unsafe { std::alloc::alloc_zeroed(layout) }.cast::<B>()
    };
    if ptr.is_null() {
        return Err(failed);
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `[B; len]`,
    // which is what `Box<[B]>` frees with; zeroed memory is a valid `B` (ZeroInit).
    Ok(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) })
}

/// `n` zeroed values like [`alloc_blocks`] (but on 4 KiB pages), zeroed in 64 KiB pieces,
/// giving up (freeing what it took) as soon as `give_up()` says so between two pieces, or
/// if the allocation fails.
///
/// For [`par_insert_merged`]'s copies, written by hand because the first touches of fresh
/// memory are what such a copy costs, and they vary a lot: on a virtual machine whose
/// hypervisor reclaims freed memory, a 1.25 MiB copy takes from 0.4 ms (4 KiB pages
/// faulted in) to several ms (memory the hypervisor must back again), while the whole
/// 1M-key split-block build takes 1.65 ms on one thread (measured on an AMD EPYC Zen 5,
/// 2 cores). Zeroed in pieces, a copy whose
/// keys were all taken meanwhile costs its builder at most one piece more.
fn alloc_blocks_unless<B: ZeroInit>(n: usize, give_up: impl Fn() -> bool) -> Option<Box<[B]>> {
    const PIECE: usize = 64 << 10;
    let layout = std::alloc::Layout::array::<B>(n).ok()?;
    if layout.size() == 0 {
        return None;
    }
    // SAFETY: `layout` has a non-zero size.
    let raw = unsafe { std::alloc::alloc(layout) };
    if raw.is_null() {
        return None;
    }
    // Not advised for huge pages, unlike `alloc_blocks`: a fresh huge page can take ~5 ms
    // to fault in, in one piece, on virtual machines whose hypervisor reclaims freed
    // memory; 4 KiB pages spread the faults over the pieces, and a copy under 8 MiB fits
    // the L2 TLB's reach anyway.
    let mut at = 0;
    while at < layout.size() {
        if give_up() {
            // SAFETY: allocated above with `layout`, not yet handed out.
            unsafe { std::alloc::dealloc(raw, layout) };
            return None;
        }
        let len = PIECE.min(layout.size() - at);
        // SAFETY: `at + len <= layout.size()`: inside the allocation.
        unsafe { core::ptr::write_bytes(raw.add(at), 0, len) };
        at += len;
    }
    // SAFETY: `raw` was allocated by the global allocator with the layout of `[B; n]`,
    // which is what `Box<[B]>` frees with, and every byte is now zero: a valid `B`
    // (`ZeroInit`).
    Some(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(raw.cast::<B>(), n)) })
}

/// [`alloc_blocks`], then `fill(first, chunk)` over the blocks in chunks of a huge page
/// (`first`: the chunk's first index), on every thread of the current rayon pool from
/// [`crate::memory::PARALLEL_FILL_MIN_BYTES`] on: a filter read back from bytes lands on
/// huge pages like a new one, and large ones are copied in parallel.
pub(crate) fn alloc_blocks_with<B: ZeroInit + Send>(
    n: u64,
    max: u64,
    fill: impl Fn(usize, &mut [B]) + Sync,
) -> Result<Box<[B]>> {
    use rayon::prelude::*;
    let mut blocks = alloc_blocks::<B>(n, max)?;
    if core::mem::size_of_val(&*blocks) >= crate::memory::PARALLEL_FILL_MIN_BYTES {
        let per = ((2 << 20) / core::mem::size_of::<B>()).max(1);
        blocks
            .par_chunks_mut(per)
            .enumerate()
            .for_each(|(c, chunk)| fill(c * per, chunk));
    } else {
        fill(0, &mut blocks);
    }
    Ok(blocks)
}

/// Plain (non-atomic) blocks of layout `L` with `k` probes.
pub(crate) struct RawBlocks<L: Layout> {
    pub(crate) blocks: Box<[L::Block]>,
    pub(crate) k: u32,
    pub(crate) backend: Backend,
}

impl<L: Layout> Clone for RawBlocks<L> {
    fn clone(&self) -> Self {
        // Allocated like a new filter (huge pages, copied by the pool from 16 MiB). On
        // allocation failure this aborts, as `Box::clone` does.
        let blocks =
            alloc_blocks_with::<L::Block>(self.blocks.len() as u64, u64::MAX, |first, chunk| {
                chunk.copy_from_slice(&self.blocks[first..first + chunk.len()]);
            })
            .unwrap_or_else(|_| {
                std::alloc::handle_alloc_error(std::alloc::Layout::new::<L::Block>())
            });
        Self {
            blocks,
            k: self.k,
            backend: self.backend,
        }
    }
}

// --- generic kernels, instantiated per backend by `dispatch_fn!` -------------------------

/// Whether `hash` is in `blocks`: one probe of block `L::block_index(hash, blocks.len())`.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
/// - `blocks` is non-empty and at most `L::MAX_BLOCKS` blocks long: the block is read
///   with `get_unchecked` at `L::block_index(hash, blocks.len())`, which is below
///   `blocks.len()` only for such lengths (every filter's and view's block array is).
#[inline(always)]
unsafe fn contains_one<K: Kernel, L: Layout>(blocks: &[L::Block], hash: u64, k: u32) -> bool {
    let b = L::block_index(hash, blocks.len());
    debug_assert!(b < blocks.len());
    // SAFETY: `blocks` is always a filter's block array (`RawBlocks::blocks`, or a view's
    // borrowed blocks), which its constructors (`alloc_blocks`, `from_blocks`,
    // `view::open_view`) keep non-empty and at most `L::MAX_BLOCKS` long (this function's
    // contract). For such `n = blocks.len()`, `block_index` maps into `0..n`: blocked is
    // floor(h * n / 2^64) < n for n >= 1; split-block is floor((h >> 32) * n / 2^32) < n
    // for 1 <= n <= 2^32 (the product fits in a u64). The CPU supports the backend of K
    // and `k <= L::MAX_HASHES` (forwarded).
    unsafe { L::contains::<K>(blocks.get_unchecked(b), hash as u32, k) }
}

/// Inserts `hash` into `blocks`; returns whether all its bits were set before.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
///
/// Blocks are indexed with bounds checks (an out-of-range index panics).
#[inline(always)]
unsafe fn insert_one<K: Kernel, L: Layout>(blocks: &mut [L::Block], hash: u64, k: u32) -> bool {
    let b = L::block_index(hash, blocks.len());
    // SAFETY: forwarded contract.
    unsafe { L::insert::<K>(&mut blocks[b], hash as u32, k) }
}

/// Pipelined batch probe: item `i + PREFETCH_AHEAD` is hashed and its block prefetched
/// while item `i` is probed.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
///
/// Blocks are indexed with bounds checks (an out-of-range index panics).
#[inline(always)]
unsafe fn contains_batch<K: Kernel, L: Layout, H: HashSource>(
    blocks: &[L::Block],
    k: u32,
    src: &H,
    out: &mut [bool],
) {
    let n = src.len().min(out.len());
    let out = &mut out[..n];
    let nb = blocks.len();
    crate::batch_pipeline!(ahead: PREFETCH_AHEAD, len: n,
    prepare |p| {
        let h = src.hash_at(p);
        let b = L::block_index(h, nb);
        prefetch(&blocks[b]);
        (b, h as u32)
    },
    probe |i, (b, h32)| {
        // SAFETY: forwarded contract.
        out[i] = unsafe { L::contains::<K>(&blocks[b], h32, k) };
    });
}

/// Filter size from which blocked batch inserts take the grouped pipeline.
const GROUPED_INSERT_MIN_BYTES: usize = 16 << 20;

/// Pipelined batch insert (see [`contains_batch`]) into `blocks`, which are blocks
/// `first..first + blocks.len()` of a filter of `total` blocks; every hash must map into
/// that range (the whole filter: `first = 0, total = blocks.len()`).
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
///
/// Blocks are indexed with bounds checks: a hash that maps outside
/// `first..first + blocks.len()` panics (on the subtraction's overflow check or on the
/// bounds check).
#[inline(always)]
unsafe fn insert_batch<K: Kernel, L: Layout, H: HashSource>(
    blocks: &mut [L::Block],
    first: usize,
    total: usize,
    k: u32,
    src: &H,
) {
    let n = src.len();
    // Item `p`'s block (relative to `first`), prefetched, and the hash's low half.
    macro_rules! prepare {
        ($p:expr) => {{
            let h = src.hash_at($p);
            let b = L::block_index(h, total) - first;
            prefetch(&blocks[b]);
            (b, h as u32)
        }};
    }
    // Out of cache, the blocked layout's insert (~100 instructions, mostly the mask) runs
    // faster in groups: insert GROUP keys, then hash and prefetch the GROUP keys that will
    // reuse their ring slots. Interleaving one prefetch per insert leaves each stalled
    // prefetch with only ~2 inserts' worth of work behind it in the reorder buffer.
    // Measured on an AMD EPYC Zen 3, 2 vCPUs, with groups of 16: grouped 14.4-18.9 vs
    // interleaved 16.2-25.6 ns/key (100M keys, 125 MB, nine interleaved runs), the same at
    // 37.5 MB, and ~7 % slower on a 1.2 MB filter (8.6 vs 8.1), hence the size gate.
    // Split-block inserts (a few instructions) gain nothing, nor do blocked inserts whose
    // kernel builds the mask in a few vector ops (AVX-512: `Kernel::GROUPED_BLOCKED_INSERT`).
    // Measured on an AMD EPYC Zen 5, 2 cores, AVX2 kernel, 100M keys: groups of 64
    // (PREFETCH_AHEAD = 128) 7.5-7.6 ns/key vs 9.8-9.9 with groups of 16.
    const GROUP: usize = PREFETCH_AHEAD / 2;
    let bytes = blocks
        .len()
        .saturating_mul(core::mem::size_of::<L::Block>());
    if L::GROUPED_INSERT && K::GROUPED_BLOCKED_INSERT && bytes >= GROUPED_INSERT_MIN_BYTES {
        crate::batch_pipeline!(grouped: GROUP, ahead: PREFETCH_AHEAD, len: n,
            prepare |p| prepare!(p),
            // SAFETY: forwarded contract.
            probe |_i, (b, h32)| unsafe { L::insert::<K>(&mut blocks[b], h32, k) });
    } else {
        crate::batch_pipeline!(ahead: PREFETCH_AHEAD, len: n,
            prepare |p| prepare!(p),
            // SAFETY: forwarded contract.
            probe |_i, (b, h32)| unsafe { L::insert::<K>(&mut blocks[b], h32, k) });
    }
}

/// Atomic insert of one hash: compute the mask (no memory touched), then per word a relaxed
/// load and a `fetch_or` only where bits are missing. Returns whether all bits were set.
///
/// Why `Relaxed` suffices: the filter's only invariant is "bits are only ever set", and a
/// `fetch_or` is an atomic read-modify-write, so no set bit can be lost to a concurrent
/// insert (each word's modification order contains every OR). Every insert that has
/// returned is visible to later operations of the same thread (program order on one
/// location), and to other threads after any synchronization that orders them (thread
/// join, a barrier, a channel, a mutex): that is the visibility callers get. This holds
/// also when the insert skipped the `fetch_or` because its relaxed load already saw the
/// bits: by read-read coherence, any load that happens after that load reads the same
/// store or a later one of the word, and later stores only add bits. A query racing
/// with an insert of the same key may or may not see it, which is the only meaningful
/// answer for an unordered pair of operations. Nothing else is published through the
/// filter, so no acquire/release pairing is needed.
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
///
/// Blocks are indexed with bounds checks (an out-of-range index panics).
#[inline(always)]
unsafe fn atomic_insert_one<K: Kernel, L: Layout>(
    blocks: &[L::AtomicBlock],
    hash: u64,
    k: u32,
) -> bool {
    let b = L::block_index(hash, blocks.len());
    // SAFETY: forwarded contract.
    let mask = unsafe { L::mask::<K>(hash as u32, k) };
    // One `fetch_or` per word that misses bits (the protocol loom checks).
    crate::atomic_word::or_missing(L::atomic_words(&blocks[b]), L::u64_words(&mask))
}

/// Whether `hash` is in the atomic `blocks` (relaxed loads).
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
///
/// Blocks are indexed with bounds checks (an out-of-range index panics).
#[inline(always)]
unsafe fn atomic_contains_one<K: Kernel, L: Layout>(
    blocks: &[L::AtomicBlock],
    hash: u64,
    k: u32,
) -> bool {
    let b = L::block_index(hash, blocks.len());
    // SAFETY: forwarded contract.
    unsafe { L::atomic_contains::<K>(&blocks[b], hash as u32, k) }
}

/// Pipelined batch probe of atomic blocks (see [`contains_batch`]).
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
///
/// Blocks are indexed with bounds checks (an out-of-range index panics).
#[inline(always)]
unsafe fn atomic_contains_batch<K: Kernel, L: Layout, H: HashSource>(
    blocks: &[L::AtomicBlock],
    k: u32,
    src: &H,
    out: &mut [bool],
) {
    let n = src.len().min(out.len());
    let out = &mut out[..n];
    crate::batch_pipeline!(ahead: PREFETCH_AHEAD, len: n,
    prepare |p| {
        let h = src.hash_at(p);
        prefetch(&blocks[L::block_index(h, blocks.len())]);
        h
    },
    probe |i, h| {
        // SAFETY: forwarded contract.
        out[i] = unsafe { atomic_contains_one::<K, L>(blocks, h, k) };
    });
}

/// Pipelined batch insert into atomic blocks (see [`contains_batch`]).
///
/// # Safety
/// - The CPU must support the backend of `K`; callers check with `Backend::is_available()`
///   (the `dispatch_fn!` wrappers do, through the filter's `Backend`).
/// - `k <= L::MAX_HASHES` (see [`Layout::contains`]); filters validate it with
///   [`check_hashes`].
///
/// Blocks are indexed with bounds checks (an out-of-range index panics).
#[inline(always)]
unsafe fn atomic_insert_batch<K: Kernel, L: Layout, H: HashSource>(
    blocks: &[L::AtomicBlock],
    k: u32,
    src: &H,
) {
    crate::batch_pipeline!(ahead: PREFETCH_AHEAD, len: src.len(),
    prepare |p| {
        let h = src.hash_at(p);
        prefetch(&blocks[L::block_index(h, blocks.len())]);
        h
    },
    probe |_i, h| {
        // SAFETY: forwarded contract.
        unsafe { atomic_insert_one::<K, L>(blocks, h, k) };
    });
}

dispatch_fn! { pub(crate) fn d_contains_one<L: Layout>(blocks: &[L::Block], hash: u64, k: u32) -> bool => contains_one }
dispatch_fn! { fn d_insert_one<L: Layout>(blocks: &mut [L::Block], hash: u64, k: u32) -> bool => insert_one }
dispatch_fn! { pub(crate) fn d_contains_batch<L: Layout, H: HashSource>(blocks: &[L::Block], k: u32, src: &H, out: &mut [bool]) -> () => contains_batch }
dispatch_fn! { fn d_insert_batch<L: Layout, H: HashSource>(blocks: &mut [L::Block], first: usize, total: usize, k: u32, src: &H) -> () => insert_batch }
dispatch_fn! { fn d_atomic_insert_one<L: Layout>(blocks: &[L::AtomicBlock], hash: u64, k: u32) -> bool => atomic_insert_one }
dispatch_fn! { fn d_atomic_contains_one<L: Layout>(blocks: &[L::AtomicBlock], hash: u64, k: u32) -> bool => atomic_contains_one }
dispatch_fn! { fn d_atomic_contains_batch<L: Layout, H: HashSource>(blocks: &[L::AtomicBlock], k: u32, src: &H, out: &mut [bool]) -> () => atomic_contains_batch }
dispatch_fn! { fn d_atomic_insert_batch<L: Layout, H: HashSource>(blocks: &[L::AtomicBlock], k: u32, src: &H) -> () => atomic_insert_batch }

/// Checks that a batch's output slice matches its input.
#[inline]
pub(crate) fn check_batch_len(keys: usize, out: usize) -> Result<()> {
    if keys == out {
        Ok(())
    } else {
        Err(Error::LengthMismatch { keys, out })
    }
}

impl<L: Layout> RawBlocks<L> {
    pub(crate) fn new(num_blocks: u64, k: u32) -> Result<Self> {
        check_hashes::<L>(k)?;
        Ok(Self {
            blocks: alloc_blocks(num_blocks, L::MAX_BLOCKS)?,
            k,
            backend: Backend::detect(),
        })
    }

    #[inline]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        d_contains_one::<L>(self.backend, &self.blocks, hash, self.k)
    }

    #[inline]
    pub(crate) fn insert_hash(&mut self, hash: u64) -> bool {
        d_insert_one::<L>(self.backend, &mut self.blocks, hash, self.k)
    }

    pub(crate) fn contains_batch<H: HashSource>(&self, src: &H, out: &mut [bool]) -> Result<()> {
        check_batch_len(src.len(), out.len())?;
        d_contains_batch::<L, H>(self.backend, &self.blocks, self.k, src, out);
        Ok(())
    }

    pub(crate) fn insert_batch<H: HashSource>(&mut self, src: &H) {
        let total = self.blocks.len();
        d_insert_batch::<L, H>(self.backend, &mut self.blocks, 0, total, self.k, src);
    }

    pub(crate) fn count_ones(&self) -> u64 {
        L::blocks_count_ones(&self.blocks)
    }

    pub(crate) fn clear(&mut self) {
        self.blocks.fill(L::Block::default());
    }

    pub(crate) fn zip_words(&mut self, other: &Self, f: impl Fn(u64, u64) -> u64) {
        zip_block_words::<L>(&mut self.blocks, &other.blocks, f);
    }
}

/// `dst[i] = f(dst[i], src[i])` over the `u64` words of two block slices (up to the
/// shorter one's length): unions, intersections and [`par_insert_merged`]'s merge.
fn zip_block_words<L: Layout>(dst: &mut [L::Block], src: &[L::Block], f: impl Fn(u64, u64) -> u64) {
    for (a, b) in dst.iter_mut().zip(src) {
        for (x, y) in L::u64_words_mut(a).iter_mut().zip(L::u64_words(b)) {
            *x = f(*x, *y);
        }
    }
}

/// Atomic blocks of layout `L`.
pub(crate) struct RawAtomicBlocks<L: Layout> {
    pub(crate) blocks: Box<[L::AtomicBlock]>,
    pub(crate) k: u32,
    pub(crate) backend: Backend,
}

impl<L: Layout> RawAtomicBlocks<L> {
    pub(crate) fn from_plain(raw: RawBlocks<L>) -> Self {
        let len = raw.blocks.len();
        let ptr = Box::into_raw(raw.blocks).cast::<L::AtomicBlock>();
        // SAFETY: same size and alignment (checked at compile time), AtomicU64 has u64's
        // representation, and the allocation is reinterpreted in place with its length.
        let blocks = unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) };
        Self {
            blocks,
            k: raw.k,
            backend: raw.backend,
        }
    }

    pub(crate) fn into_plain(self) -> RawBlocks<L> {
        let len = self.blocks.len();
        let ptr = Box::into_raw(self.blocks).cast::<L::Block>();
        // SAFETY: the inverse of `from_plain`; owning the box means no thread still
        // accesses the atomics.
        let blocks = unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) };
        RawBlocks {
            blocks,
            k: self.k,
            backend: self.backend,
        }
    }

    /// A snapshot of the words (relaxed loads), as plain blocks.
    pub(crate) fn snapshot(&self) -> RawBlocks<L> {
        let blocks = self.blocks.iter().map(L::load_block).collect();
        RawBlocks {
            blocks,
            k: self.k,
            backend: self.backend,
        }
    }

    #[inline]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        d_atomic_contains_one::<L>(self.backend, &self.blocks, hash, self.k)
    }

    #[inline]
    pub(crate) fn insert_hash(&self, hash: u64) -> bool {
        d_atomic_insert_one::<L>(self.backend, &self.blocks, hash, self.k)
    }

    pub(crate) fn contains_batch<H: HashSource>(&self, src: &H, out: &mut [bool]) -> Result<()> {
        check_batch_len(src.len(), out.len())?;
        d_atomic_contains_batch::<L, H>(self.backend, &self.blocks, self.k, src, out);
        Ok(())
    }

    pub(crate) fn insert_batch<H: HashSource>(&self, src: &H) {
        d_atomic_insert_batch::<L, H>(self.backend, &self.blocks, self.k, src);
    }
}

/// Inserts `src` into `blocks` from the current rayon pool, in chunks.
pub(crate) fn par_insert_atomic<L: Layout, T: Hash + Sync, S: BuildHasher + Sync>(
    backend: Backend,
    blocks: &[L::AtomicBlock],
    k: u32,
    keys: &[T],
    hasher: &S,
) {
    use rayon::prelude::*;
    /// Keys per rayon task: large enough to amortise the task, small enough to balance.
    const CHUNK: usize = 1 << 14;
    keys.par_chunks(CHUNK).for_each(|chunk| {
        d_atomic_insert_batch::<L, Keys<'_, T, S>>(
            backend,
            blocks,
            k,
            &Keys {
                keys: chunk,
                hasher,
            },
        );
    });
}

/// Bytes of filter per partition of a partitioned build (rounded to a power-of-two number
/// of blocks): small enough that a partition stays in a core's L2 while its hashes are
/// inserted (512 KiB on the Zen 3 this was tuned on, 2 MiB on recent Xeons).
const PARTITION_BYTES: usize = 256 << 10;

/// Fewest keys per round of a partitioned build; a round holds at least one hash per 8
/// bytes of filter, so each block is written several times per pass over the filter.
const PARTITION_MIN_ROUND: usize = 1 << 22;

/// How far ahead, in hashes, the scatter prefetches a partition's next slots: the line is
/// in cache by the time its first slot is written, so no store waits for memory.
const SCATTER_PREFETCH: usize = 16;

/// One worker's hashes of a chunk of keys, bucketed by partition: `parts` regions of `cap`
/// slots in one flat buffer (huge pages where the kernel grants them), plus an overflow
/// list for a partition that receives more than `cap` (cap is 1.25x the mean plus 16: a
/// many-sigma event at the sizes that partition, but handled, so any size stays correct).
struct Scatter {
    buf: Vec<u64>,
    cap: usize,
    counts: Vec<usize>,
    overflow: Vec<u64>,
}

impl Scatter {
    /// # Panics
    /// If the buffer cannot be allocated (as `Vec::with_capacity` would).
    fn new(parts: usize, cap: usize) -> Scatter {
        let buf = crate::memory::try_vec_filled(parts * cap, 0u64)
            .expect("allocating the partitioned build's buffers");
        Scatter {
            buf,
            cap,
            counts: vec![0; parts],
            overflow: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.overflow.clear();
    }

    #[inline(always)]
    fn push(&mut self, part: usize, hash: u64) {
        let n = self.counts[part];
        if n < self.cap {
            let at = part * self.cap + n;
            self.buf[at] = hash;
            self.counts[part] = n + 1;
            // A hint: any address is allowed, past the region or the buffer included.
            prefetch(self.buf.as_ptr().wrapping_add(at + SCATTER_PREFETCH));
        } else {
            self.overflow.push(hash);
        }
    }

    /// The hashes of partition `part` that fit its region.
    fn part(&self, part: usize) -> &[u64] {
        let at = part * self.cap;
        &self.buf[at..at + self.counts[part]]
    }
}

/// Partitioned parallel build into plain blocks, without atomics. The filter is cut into
/// partitions of a power-of-two number of blocks (~256 KiB each). Per round, workers hash
/// chunks of keys into per-partition buffers; then one task per partition inserts its
/// hashes into its own disjoint `&mut` range with the pipelined batch loop, from cache.
/// Bit-identical to a sequential build (OR is commutative).
pub(crate) fn par_insert_partitioned<L: Layout, T: Hash + Sync, S: BuildHasher + Sync>(
    backend: Backend,
    blocks: &mut [L::Block],
    k: u32,
    keys: &[T],
    hasher: &S,
) {
    use rayon::prelude::*;
    let threads = rayon::current_num_threads();
    let total = blocks.len();
    let bytes = total.saturating_mul(core::mem::size_of::<L::Block>());
    // An in-cache filter with enough keys for two workers: private copies OR-ed together
    // (measured on Zen 5, 2 threads at 1M keys: blocked 1.35-1.83x, split-block
    // 1.12-1.19x one thread).
    if threads > 1 && bytes < 8 << 20 && keys.len() >= MERGE_MIN_KEYS_PER_THREAD * 2 {
        par_insert_merged::<L, T, S>(backend, blocks, k, keys, hasher);
        return;
    }
    // Measured at 100M keys on an AMD EPYC Zen 3: partitioning on one thread is no faster than
    // the pipelined insert (16.8 against 16.6 ns/key), and an in-cache filter or a small
    // batch pays for the buffers without gaining locality, so those take the pipelined
    // insert on the calling thread.
    if threads <= 1 || keys.len() < 1 << 20 || bytes < 8 << 20 {
        d_insert_batch::<L, Keys<'_, T, S>>(backend, blocks, 0, total, k, &Keys { keys, hasher });
        return;
    }
    // At least four partitions per worker for balance, at most 1024: the buffers below
    // number chunks x partitions, each with some slack.
    let want = (bytes / PARTITION_BYTES).max(threads * 4).min(1024);
    let shift = total.div_ceil(want).next_power_of_two().trailing_zeros();
    let parts = total.div_ceil(1 << shift);
    let start_of = |r: usize| (r << shift).min(total);
    // Two chunks per worker per round for balance; the buffers (one set per chunk,
    // ~1.25 x 8 bytes per key of a round) are allocated once per call and reused every
    // round.
    let chunks_per_round = (threads * 2).min(128);
    let round = keys.len().min((bytes / 8).max(PARTITION_MIN_ROUND));
    let chunk_len = round.div_ceil(chunks_per_round).max(1);
    let cap = chunk_len / parts + chunk_len / (4 * parts) + 16;
    // Allocated (and first touched) by the workers: page faults on ~1.25x the filter's
    // size cost as much as a pass over it, so they are spread over the threads too.
    let mut scatters: Vec<Scatter> = (0..chunks_per_round)
        .into_par_iter()
        .map(|_| Scatter::new(parts, cap))
        .collect();
    for round in keys.chunks(chunk_len * chunks_per_round) {
        round
            .par_chunks(chunk_len)
            .zip(scatters.par_iter_mut())
            .for_each(|(chunk, sc)| {
                sc.clear();
                for key in chunk {
                    let h = crate::hash::hash_one(hasher, key);
                    sc.push(L::block_index(h, total) >> shift, h);
                }
            });
        let used = &scatters[..round.len().div_ceil(chunk_len)];
        let ranges = cut_ranges(blocks, (0..parts).map(|r| start_of(r + 1) - start_of(r)));
        ranges.into_par_iter().for_each(|(r, range)| {
            for sc in used {
                let src = Hashes(sc.part(r));
                d_insert_batch::<L, Hashes<'_>>(backend, range, start_of(r), total, k, &src);
            }
        });
        for sc in used {
            d_insert_batch::<L, Hashes<'_>>(backend, blocks, 0, total, k, &Hashes(&sc.overflow));
        }
    }
}

/// Fewest keys per worker for which [`par_insert_merged`] adds a worker.
const MERGE_MIN_KEYS_PER_THREAD: usize = 1 << 16;

/// Keys that a worker of [`par_insert_merged`] claims at a time.
const MERGE_CHUNK_KEYS: usize = 1 << 15;

/// Most bytes of private copies [`par_insert_merged`] allocates in all.
const MERGE_MAX_COPY_BYTES: usize = 64 << 20;

/// The parallel build of a filter that fits in cache. Workers claim chunks of
/// [`MERGE_CHUNK_KEYS`] keys from a shared counter and insert them with the pipelined
/// batch loop: the calling thread into `blocks` itself, every other worker into a private
/// zeroed copy ([`alloc_blocks_unless`]) that it makes before claiming any, from its own
/// core's cache. Then the copies are OR-ed into `blocks` in parallel over block ranges.
/// Bit-identical to a sequential build (OR is commutative).
///
/// Claiming chunks, not fixed shares, is what makes this pay where threads wake slowly: on
/// a 2-core AMD EPYC Zen 5 KVM virtual machine a sleeping rayon worker often takes 0.5-2 ms
/// to start the stolen task (the harness's bulk rows: 0.53-0.62 ms in some tables,
/// 0.01-0.1 ms in others), while a whole 1M-key split-block build takes 1.65 ms on one
/// thread. With fixed halves the calling thread then runs both (measured: 1.12-1.19x one
/// thread); with chunks, whoever is running does the work, and a worker that arrives late
/// makes no copy.
///
/// Extra memory: one copy per worker but the first, at most [`MERGE_MAX_COPY_BYTES`] in
/// all (fewer workers if needed). A worker whose copy cannot be allocated claims nothing:
/// the others, the calling thread at least, insert every key.
fn par_insert_merged<L: Layout, T: Hash + Sync, S: BuildHasher + Sync>(
    backend: Backend,
    blocks: &mut [L::Block],
    k: u32,
    keys: &[T],
    hasher: &S,
) {
    use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use rayon::prelude::*;
    let total = blocks.len();
    let workers = rayon::current_num_threads()
        .min(keys.len() / MERGE_MIN_KEYS_PER_THREAD)
        .min(1 + MERGE_MAX_COPY_BYTES / core::mem::size_of_val(blocks).max(1))
        .max(1);
    let next = AtomicUsize::new(0);
    // Relaxed: the counter only hands out distinct chunk indices; the copies and the
    // filter are passed between threads by `join` and `collect`, which synchronise.
    let claim = || {
        let at = next.fetch_add(1, Relaxed).saturating_mul(MERGE_CHUNK_KEYS);
        (at < keys.len()).then(|| &keys[at..keys.len().min(at + MERGE_CHUNK_KEYS)])
    };
    let insert = |dst: &mut [L::Block], chunk: &[T]| {
        let src = Keys {
            keys: chunk,
            hasher,
        };
        d_insert_batch::<L, Keys<'_, T, S>>(backend, dst, 0, total, k, &src);
    };
    type Copies<B> = Vec<Option<Box<[B]>>>;
    let ((), copies): ((), Copies<L::Block>) = rayon::join(
        || {
            while let Some(chunk) = claim() {
                insert(blocks, chunk);
            }
        },
        || {
            (1..workers)
                .into_par_iter()
                .map(|_| {
                    let exhausted =
                        || next.load(Relaxed).saturating_mul(MERGE_CHUNK_KEYS) >= keys.len();
                    // Made before claiming any keys, so a slow allocation holds none back.
                    let mut copy = alloc_blocks_unless::<L::Block>(total, exhausted)?;
                    let mut claimed = false;
                    while let Some(chunk) = claim() {
                        insert(&mut copy, chunk);
                        claimed = true;
                    }
                    claimed.then_some(copy)
                })
                .collect()
        },
    );
    let merged: Vec<&[L::Block]> = copies.iter().filter_map(|c| c.as_deref()).collect();
    if !merged.is_empty() {
        // Ranges of 64 KiB per task.
        let range = ((64 << 10) / core::mem::size_of::<L::Block>()).max(1);
        blocks
            .par_chunks_mut(range)
            .enumerate()
            .for_each(|(r, dst)| {
                let (at, len) = (r * range, dst.len());
                for copy in &merged {
                    zip_block_words::<L>(dst, &copy[at..at + len], |a, b| a | b);
                }
            });
    }
}

/// Fewest hashes for which [`par_insert_hashes_ranged`] splits the work over threads.
const RANGED_MIN_HASHES: usize = 1 << 13;

/// Parallel insert of precomputed hashes, without atomics and with bounded extra memory
/// (for callers that stream batches much smaller than the filter). The filter is cut into
/// one contiguous range of blocks per thread of the current rayon pool
/// ([`RangeSplitter`]); the hashes are grouped by range in one chunk per thread, in
/// parallel, then each thread inserts the hashes of its range from every chunk with the
/// pipelined batch loop into its disjoint `&mut` range ([`par_insert_split`]). Extra
/// memory: 8 bytes per hash; work proportional to the hashes, whatever the number of
/// threads. Not the ~1.25x-the-filter buffers of [`par_insert_partitioned`], which wins
/// on very large batches because it inserts from cache. Bit-identical to a sequential
/// build. Small batches and one-thread pools insert on the calling thread.
pub(crate) fn par_insert_hashes_ranged<L: Layout>(
    backend: Backend,
    blocks: &mut [L::Block],
    k: u32,
    hashes: &[u64],
) {
    use rayon::prelude::*;
    let threads = rayon::current_num_threads();
    let total = blocks.len();
    if threads <= 1 || hashes.len() < RANGED_MIN_HASHES || total < threads {
        d_insert_batch::<L, Hashes<'_>>(backend, blocks, 0, total, k, &Hashes(hashes));
        return;
    }
    let splitter = RangeSplitter::new(L::ID, total, threads);
    let parts: Vec<RangeSplit> = hashes
        .par_chunks(hashes.len().div_ceil(threads))
        .map(|chunk| splitter.split(chunk))
        .collect();
    par_insert_split::<L>(backend, blocks, k, &splitter, &parts);
}

/// `blocks` cut into consecutive ranges of the given lengths (which must sum to at most
/// `blocks.len()`), each with its index: disjoint `&mut` slices for one task each.
fn cut_ranges<B>(
    blocks: &mut [B],
    lens: impl ExactSizeIterator<Item = usize>,
) -> Vec<(usize, &mut [B])> {
    let mut ranges = Vec::with_capacity(lens.len());
    let mut rest = blocks;
    for (r, len) in lens.enumerate() {
        let (head, tail) = rest.split_at_mut(len);
        ranges.push((r, head));
        rest = tail;
    }
    ranges
}

/// Inserts hashes grouped by range: one task per range of `splitter` inserts that range
/// of every part into its own `&mut` range of `blocks`, with the pipelined batch loop.
/// The caller has checked that `splitter` cuts `blocks` and made every part.
pub(crate) fn par_insert_split<L: Layout>(
    backend: Backend,
    blocks: &mut [L::Block],
    k: u32,
    splitter: &RangeSplitter,
    parts: &[RangeSplit],
) {
    use rayon::prelude::*;
    let total = blocks.len();
    debug_assert!(
        splitter.num_blocks() == total && parts.iter().all(|p| splitter.is_splitter_of(p))
    );
    let ranges = cut_ranges(
        blocks,
        (0..splitter.ranges()).map(|r| splitter.blocks_of(r).len()),
    );
    let insert = |(r, range): (usize, &mut [L::Block])| {
        let first = splitter.blocks_of(r).start;
        let mut insert = |hashes: &[u64]| {
            d_insert_batch::<L, Hashes<'_>>(backend, range, first, total, k, &Hashes(hashes))
        };
        // One pipelined call per range: with many threads and many parts each part's share
        // is short, and every call starts its prefetch ring with a miss it cannot hide, so
        // the shares are gathered first (a copy of 8 bytes a hash, ~1 % of an insert).
        let shares: Vec<&[u64]> = parts
            .iter()
            .map(|p| p.range(r))
            .filter(|h| !h.is_empty())
            .collect();
        match shares.as_slice() {
            [] => {}
            [only] => insert(only),
            many => insert(&many.concat()),
        }
    };
    ranges.into_par_iter().for_each(insert);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_keeps_every_hash_in_its_part_or_the_overflow() {
        let mut sc = Scatter::new(3, 4);
        for round in 0..2u64 {
            sc.clear();
            // Part 1 gets 7 hashes (3 overflow), part 2 gets 4 (exactly full), part 0 none.
            for i in 0..7 {
                sc.push(1, 100 * round + i);
            }
            for i in 0..4 {
                sc.push(2, 1000 + 100 * round + i);
            }
            let r = 100 * round;
            assert!(sc.part(0).is_empty());
            assert_eq!(sc.part(1), &[r, r + 1, r + 2, r + 3]);
            assert_eq!(sc.part(2), &[1000 + r, 1001 + r, 1002 + r, 1003 + r]);
            assert_eq!(sc.overflow, vec![r + 4, r + 5, r + 6]);
        }
    }
}
