//! Batched and parallel loads shared by the bitmap and the 2-bitmap.
//!
//! A batch walks its values once, prefetching the word of the value [`AHEAD`] places on.
//! The parallel load cuts the word array into contiguous ranges (by the values' high
//! bits) that threads fill without atomics, writing disjoint words. Dense batches and, from
//! 4 threads, sparse ones are first grouped by range (a radix partition into a copy of the
//! input); below 4 threads each thread scans the whole input for the values of its own
//! range (a sequential read, cheap next to the random writes at two threads, but read once
//! per thread).

use bloomforge_core::batch::prefetch;
use rayon::prelude::*;

/// How many values ahead a batch prefetches: core's distance for every filter's batch
/// loop. 50M random `u32`, Zen 5, `examples/perf`, 16 / 64 / 128 ahead: the 2-bitmap's
/// `insert_batch` into 1 GiB 9.9-10.0 / 5.4 / 4.9 ns a value, `contains_batch` of a
/// 512 MiB bitmap 7.2 / 3.9 / 3.2 ns a query.
pub(crate) const AHEAD: usize = bloomforge_core::batch::PREFETCH_AHEAD;

/// Tables up to this many words (256 KiB, a quarter of a typical L2 cache) are updated
/// without prefetching: they stay in cache, where a prefetch is only one more instruction
/// a value. (A 1 MiB table, one region of the partitioned load, still gains from it:
/// 1.0 vs 1.2 ns a value in the 2-bitmap on a Zen 5 core.)
const PREFETCH_MIN_WORDS: usize = 1 << 15;

/// Applies `update(words, v)` to every value (each `v >> shift` indexes `words`),
/// prefetching ahead in tables larger than a cache.
#[inline(always)]
pub(crate) fn apply_prefetched(
    words: &mut [u64],
    shift: u32,
    values: &[u32],
    update: impl Fn(&mut [u64], u32),
) {
    if words.len() <= PREFETCH_MIN_WORDS {
        for &v in values {
            update(words, v);
        }
        return;
    }
    let base = words.as_ptr();
    for (i, &v) in values.iter().enumerate() {
        if let Some(&ahead) = values.get(i + AHEAD) {
            prefetch(base.wrapping_add((ahead >> shift) as usize));
        }
        update(words, v);
    }
}

/// Words per region of the partitioned load: 1 MiB, which stays in a core's L2 cache.
const REGION_WORDS: usize = 1 << 17;

/// The partitioned load, for batches dense enough that most cache lines of the table get
/// several updates: the values are first grouped by region with the radix partition of
/// [`crate::partition`] (one counting pass and one scatter, on all threads, into a copy of
/// the input: 4 bytes per value), then each region's updates run in cache, regions in
/// parallel on the rayon threads (disjoint words, no atomics). Random updates then cost
/// cache, not DRAM, latency. Returns `false` (nothing done) if the batch is too sparse for
/// it to pay or the copy cannot be allocated.
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
    apply_in_ranges(words, shift, values, REGION_WORDS, update)
}

/// Groups `values` by range of `range_words` words (a power of two) with the radix
/// partition of [`crate::partition`] (each value kept as its offset in its range), then
/// applies each range's updates on the rayon threads (disjoint words, no atomics), with
/// [`apply_prefetched`] (its prefetch pays even in a 1 MiB region: `ints distinct` of 100M
/// random `u32`, three alternated runs, user time 0.80-0.81 s on one thread against
/// 0.84-0.94 s with a plain loop).
/// `false` (nothing done) if the range's value bits do not fit a `u32` shift or the
/// partition's copy cannot be allocated.
fn apply_in_ranges(
    words: &mut [u64],
    shift: u32,
    values: &[u32],
    range_words: usize,
    update: &(impl Fn(&mut [u64], u32) + Sync),
) -> bool {
    debug_assert!(range_words.is_power_of_two());
    let range_shift = shift + range_words.trailing_zeros();
    if range_shift >= 32 {
        return false;
    }
    let ranges = words.len().div_ceil(range_words);
    let Ok(part) =
        crate::partition::partition(&[values], range_shift, ranges, (1u32 << range_shift) - 1)
    else {
        return false;
    };
    words
        .par_chunks_mut(range_words)
        .enumerate()
        .for_each(|(r, range)| apply_prefetched(range, shift, part.bucket(r), update));
    true
}

/// From this many threads on, a sparse parallel load groups the values by range first
/// ([`grouped_apply`]) instead of having every thread scan every value.
const GROUPED_MIN_THREADS: usize = 4;

/// The parallel load of a batch too sparse for [`partitioned_apply`], from
/// [`GROUPED_MIN_THREADS`] threads on: the values are grouped by range of words with the
/// same radix partition (into a copy, 4 bytes a value), a power-of-two number of ranges,
/// at least four per thread so that idle threads can take a range from a busy one; then
/// the ranges run in parallel (disjoint words, no atomics). Each value is read by the
/// partition's two passes and its update, whatever the number of threads; threads that
/// each scanned every value for their own range read it once per thread. Returns `false`
/// (nothing done) if the copy cannot be allocated or there are too few words to split.
fn grouped_apply(
    words: &mut [u64],
    shift: u32,
    values: &[u32],
    threads: usize,
    update: &(impl Fn(&mut [u64], u32) + Sync),
) -> bool {
    // Whole cache lines per range, a power of two so a value's range is a shift.
    let per_range = words.len() / (threads * 4);
    if per_range < 8 {
        return false;
    }
    apply_in_ranges(words, shift, values, 1usize << per_range.ilog2(), update)
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
    if threads >= GROUPED_MIN_THREADS && grouped_apply(words, shift, values, threads, &update) {
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
