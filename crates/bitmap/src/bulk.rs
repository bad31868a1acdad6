//! Batched and parallel loads shared by the bitmap and the 2-bitmap.
//!
//! A batch walks its values once, prefetching the word of the value [`AHEAD`] places on.
//! The parallel load cuts the word array into one contiguous range per rayon thread
//! (partitioned by the values' high bits), and each thread scans the whole input, keeping
//! the values of its own range: threads write disjoint words, so no atomics are needed,
//! and the input is read sequentially (cheap next to the random writes).

use bloomforge_core::batch::prefetch;
use rayon::prelude::*;

/// How many values ahead a batch prefetches.
pub(crate) const AHEAD: usize = 16;

/// Applies `update(words, v)` to every value (each `v >> shift` indexes `words`),
/// prefetching ahead.
#[inline(always)]
pub(crate) fn apply_prefetched(
    words: &mut [u64],
    shift: u32,
    values: &[u32],
    update: impl Fn(&mut [u64], u32),
) {
    let base = words.as_ptr();
    for (i, &v) in values.iter().enumerate() {
        if let Some(&ahead) = values.get(i + AHEAD) {
            prefetch(base.wrapping_add((ahead >> shift) as usize));
        }
        update(words, v);
    }
}

/// A pointer the scatter's threads share; each writes only its own slots.
struct SyncPtr(*mut u32);
// SAFETY: the pointer is only used for writes to slots that are disjoint between the
// threads (see `partitioned_apply`), into an allocation that outlives the parallel loop.
unsafe impl Sync for SyncPtr {}
// SAFETY: as above; the pointer is only moved into the rayon scope.
unsafe impl Send for SyncPtr {}

/// Words per region of the partitioned load: 1 MiB, which stays in a core's L2 cache.
const REGION_WORDS: usize = 1 << 17;

/// The partitioned load, for batches dense enough that most cache lines of the table get
/// several updates: the values are first bucketed by region (a counting pass and a
/// scatter into a scratch copy of the input, 4 bytes per value), then each region's
/// updates run in cache, regions in parallel on the rayon threads (disjoint words, no
/// atomics). Random updates then cost cache, not DRAM, latency. Returns `false` (nothing
/// done) if the batch is too sparse for it to pay or the scratch cannot be allocated.
pub(crate) fn partitioned_apply(
    words: &mut [u64],
    shift: u32,
    values: &[u32],
    update: &(impl Fn(&mut [u64], u32) + Sync),
) -> bool {
    // At least one value per 8 words (a cache line) on average, and more than one region.
    if values.len() < words.len() / 8 || words.len() <= REGION_WORDS {
        return false;
    }
    let region_shift = shift + REGION_WORDS.trailing_zeros();
    let regions = words.len().div_ceil(REGION_WORDS);
    let mut scratch: Vec<u32> = Vec::new();
    if scratch.try_reserve_exact(values.len()).is_err() {
        return false;
    }
    // The counting and scatter passes run on every rayon thread, each over its own
    // contiguous piece of the input: piece `p` counts its values per region, and writes
    // region `r`'s values after those of pieces `0..p` (so the scatter is deterministic
    // and the region's values stay in input order).
    let parts = if values.len() >= 1 << 22 {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    let piece = values.len().div_ceil(parts).max(1);
    let hists: Vec<Vec<usize>> = values
        .par_chunks(piece)
        .map(|c| {
            let mut h = vec![0usize; regions];
            for &v in c {
                h[(v >> region_shift) as usize] += 1;
            }
            h
        })
        .collect();
    // bounds[r]: where region r starts; starts[p][r]: where piece p writes region r.
    let mut bounds = vec![0usize; regions + 1];
    let mut starts = vec![vec![0usize; regions]; hists.len()];
    let mut at = 0usize;
    for r in 0..regions {
        bounds[r] = at;
        for (p, h) in hists.iter().enumerate() {
            starts[p][r] = at;
            at += h[r];
        }
    }
    bounds[regions] = at;
    debug_assert_eq!(at, values.len());
    let out = SyncPtr(scratch.spare_capacity_mut().as_mut_ptr().cast::<u32>());
    values
        .par_chunks(piece)
        .zip(starts.into_par_iter())
        .for_each(|(c, mut next)| {
            let out = &out;
            for &v in c {
                let r = (v >> region_shift) as usize;
                // SAFETY: `next[r]` walks piece p's own slots of region r,
                // `starts[p][r] .. starts[p][r] + hists[p][r]`: within the reserved
                // `values.len()` slots, and disjoint from every other piece's and
                // region's slots, so no two threads write one slot.
                unsafe { out.0.add(next[r]).write(v) };
                next[r] += 1;
            }
        });
    // SAFETY: the scatter wrote every slot `0..values.len()` exactly once (the pieces'
    // slots of all regions partition that range, each written by its piece).
    unsafe { scratch.set_len(values.len()) };
    words
        .par_chunks_mut(REGION_WORDS)
        .enumerate()
        .for_each(|(r, region)| {
            let base = ((r * REGION_WORDS) as u64) << shift;
            for &v in &scratch[bounds[r]..bounds[r + 1]] {
                update(region, (u64::from(v) - base) as u32);
            }
        });
    true
}

/// The parallel load: `update(chunk, local)` for every value, where `chunk` is the word
/// range holding it and `local` its offset from the chunk's first value. Every value must
/// lie below `words.len() << shift`.
pub(crate) fn par_apply(
    words: &mut [u64],
    shift: u32,
    values: &[u32],
    update: impl Fn(&mut [u64], u32) + Sync,
) {
    if partitioned_apply(words, shift, values, &update) {
        return;
    }
    let threads = rayon::current_num_threads().max(1);
    if threads == 1 || values.len() < 1 << 16 {
        apply_prefetched(words, shift, values, update);
        return;
    }
    // Whole cache lines (8 words) per chunk so threads never share a line.
    let chunk_words = words.len().div_ceil(threads).next_multiple_of(8);
    words
        .par_chunks_mut(chunk_words)
        .enumerate()
        .for_each(|(c, chunk)| {
            let lo = ((c * chunk_words) as u64) << shift;
            let span = (chunk.len() as u64) << shift;
            const BUF: usize = 1024;
            let mut buf = [0u32; BUF];
            let mut n = 0usize;
            for &v in values {
                let local = u64::from(v).wrapping_sub(lo);
                // Branch-free filter: always write, advance only when in range.
                buf[n] = local as u32;
                n += usize::from(local < span);
                if n == BUF {
                    apply_prefetched(chunk, shift, &buf, &update);
                    n = 0;
                }
            }
            apply_prefetched(chunk, shift, &buf[..n], &update);
        });
}

/// Hands `words` to `sink` as little-endian bytes, 64 KiB at a time.
pub(crate) fn stream_words(words: &[u64], sink: &mut dyn FnMut(&[u8])) {
    #[cfg(target_endian = "little")]
    for piece in words.chunks(1 << 13) {
        // SAFETY: any initialised `u64` slice is valid as bytes (no padding, alignment 1
        // suffices); on a little-endian target the bytes are the little-endian encoding.
        let bytes =
            unsafe { core::slice::from_raw_parts(piece.as_ptr().cast::<u8>(), piece.len() * 8) };
        sink(bytes);
    }
    #[cfg(not(target_endian = "little"))]
    bloomforge_core::format::stream_le(words, sink, |w, buf| {
        buf.extend_from_slice(&w.to_le_bytes())
    });
}

/// Copies a little-endian payload (length a multiple of 8, validated) into zeroed `words`,
/// writing only the non-zero words (the zero pages of a sparse set stay untouched).
pub(crate) fn load_words(payload: &[u8], words: &mut [u64]) {
    for (w, b) in words.iter_mut().zip(payload.chunks_exact(8)) {
        let x = bloomforge_core::format::u64_at(b, 0);
        if x != 0 {
            *w = x;
        }
    }
}
