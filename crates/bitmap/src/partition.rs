//! The radix partition behind the partitioned loads and [`RangeBuckets`]: `u32` values
//! grouped by their high bits in one parallel pass.
//!
//! A counting pass gives each piece of the input (one per rayon thread) its own slots in
//! every bucket; the scatter pass then writes each piece's values to its slots. The
//! scatter goes through a 64-byte line per bucket that stays in cache, and a full line is
//! written with non-temporal stores (x86-64: no read of the destination line, no cache
//! pollution), so scattering to a thousand buckets costs about one sequential write of the
//! output. Pieces may share a destination line at their borders; only lines wholly inside
//! a piece's slots take the full-line store, the partial ones are written value by value.

use crate::{BitmapError, Result};
use bloomforge_core::Error;
use rayon::prelude::*;

/// Values grouped by bucket: `data[skip + bounds[b] .. skip + bounds[b + 1]]` is bucket
/// `b`, in input order; `data[skip..]` starts on a 64-byte boundary.
pub(crate) struct Partition {
    pub(crate) data: Vec<u32>,
    pub(crate) skip: usize,
    pub(crate) bounds: Vec<usize>,
}

impl Partition {
    pub(crate) fn bucket(&self, b: usize) -> &[u32] {
        &self.data[self.skip + self.bounds[b]..self.skip + self.bounds[b + 1]]
    }
}

/// Below this many values a piece per bucket, lines are not worth it: values are written
/// straight to their slots.
const LINE_MIN_VALUES_PER_BUCKET: usize = 16;

/// A shared pointer to the output; each piece writes only its own slots.
struct Out(*mut u32);
// SAFETY: the pointer is only used for writes to slots that are disjoint between pieces
// (see `partition`), into an allocation that outlives the parallel loops.
unsafe impl Sync for Out {}
// SAFETY: as above.
unsafe impl Send for Out {}

/// Groups every value of `inputs` (in order: the first slice's values, then the next
/// slice's) by `v >> shift`, which must be below `buckets` for every value; each value is
/// stored as `v & mask`. `Err(AllocationFailed)` if the output cannot be allocated.
pub(crate) fn partition(
    inputs: &[&[u32]],
    shift: u32,
    buckets: usize,
    mask: u32,
) -> core::result::Result<Partition, Error> {
    let n: usize = inputs.iter().map(|s| s.len()).sum();
    let threads = rayon::current_num_threads().max(1);
    // One piece per thread for a large input, at least 64 Ki values a piece.
    let piece_len = n.div_ceil(threads).max(1 << 16);
    let pieces: Vec<&[u32]> = inputs.iter().flat_map(|s| s.chunks(piece_len)).collect();
    let hists: Vec<Vec<usize>> = pieces
        .par_iter()
        .map(|piece| {
            let mut h = vec![0usize; buckets];
            for &v in *piece {
                h[(v >> shift) as usize] += 1;
            }
            h
        })
        .collect();
    // bounds[b]: where bucket b starts; starts[p][b]: where piece p writes in bucket b.
    let mut bounds = vec![0usize; buckets + 1];
    let mut starts = vec![vec![0usize; buckets]; pieces.len()];
    let mut at = 0usize;
    for b in 0..buckets {
        bounds[b] = at;
        for (p, h) in hists.iter().enumerate() {
            starts[p][b] = at;
            at += h[b];
        }
    }
    bounds[buckets] = at;
    debug_assert_eq!(at, n);
    drop(hists);
    // 15 spare values so the output can start on a 64-byte boundary.
    let mut data: Vec<u32> = Vec::new();
    data.try_reserve_exact(n + 15)
        .map_err(|_| Error::AllocationFailed {
            bytes: (n + 15).saturating_mul(4),
        })?;
    bloomforge_core::memory::advise_huge_pages(data.spare_capacity_mut());
    // Values start on a 64-byte boundary (for the full-line stores) where the pointer
    // allows it, else at once (and lines are written value by value).
    let (skip, aligned) = match data.as_ptr().align_offset(64) {
        off @ 0..=15 => (off, true),
        _ => (0, false),
    };
    data.resize(skip, 0);
    // SAFETY: `skip + n` is within the reserved capacity.
    let out = Out(unsafe { data.as_mut_ptr().add(skip) });
    pieces
        .par_iter()
        .zip(starts.par_iter_mut())
        .for_each(|(piece, next)| {
            let out = &out;
            if piece.len() >= LINE_MIN_VALUES_PER_BUCKET * buckets {
                // SAFETY: `next` holds this piece's slot starts, and the values of bucket
                // `b` in this piece number exactly as many as its slots (the counting
                // pass); `out.0` is 64-byte aligned if `aligned`.
                unsafe { scatter_lines(piece, next, out.0, shift, mask, aligned) };
            } else {
                for &v in *piece {
                    let b = (v >> shift) as usize;
                    // SAFETY: `next[b]` walks this piece's own slots of bucket `b`
                    // (`starts[p][b] ..` its count), within the `n` reserved values and
                    // disjoint from every other piece's slots.
                    unsafe { out.0.add(next[b]).write(v & mask) };
                    next[b] += 1;
                }
            }
        });
    // SAFETY: the pieces wrote every slot `skip .. skip + n` exactly once (their slots of
    // all buckets partition `0..n`), and `0..skip` was initialised by `resize`.
    unsafe { data.set_len(skip + n) };
    Ok(Partition { data, skip, bounds })
}

/// One 64-byte line of values on its way to a bucket.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u32; 16]);

/// The scatter of one piece through a line per bucket: `next[b]` is the piece's next slot
/// in bucket `b`; slot `i` is `out.add(i)`. A line fills the values of slots
/// `16k .. 16k + 16`; when full it goes out as one 64-byte store if the piece owns the
/// whole line (non-temporal where available and `aligned`), else value by value.
///
/// # Safety
/// - For every bucket `b`, the piece's values with `v >> shift == b` number exactly the
///   slots it owns from `next[b]` on (`out.add(next[b])` onwards); a value whose bucket
///   is `>= next.len()` panics on a bounds check.
/// - Those slots are valid for writes and nothing else reads or writes them during the
///   call (other pieces own disjoint slots; a line that straddles two pieces is written
///   value by value, each piece only its own slots).
/// - `aligned` is true only if `out` is 64-byte aligned (the full-line stores at slots
///   `16 k` are then aligned non-temporal stores).
unsafe fn scatter_lines(
    piece: &[u32],
    next: &mut [usize],
    out: *mut u32,
    shift: u32,
    mask: u32,
    aligned: bool,
) {
    let start: Vec<usize> = next.to_vec();
    let mut lines = vec![Line([0; 16]); next.len()];
    for &v in piece {
        let b = (v >> shift) as usize;
        let at = next[b];
        lines[b].0[at & 15] = v & mask;
        next[b] = at + 1;
        if at & 15 == 15 {
            let first = at - 15;
            if first >= start[b] {
                // SAFETY: slots `first ..= at` are this piece's own (`first` is at or
                // after its first slot of `b`, `at` one it just filled), so valid for the
                // 64-byte write; `first` is a multiple of 16, so the address is 64-byte
                // aligned when `aligned`.
                unsafe { store_line(out.add(first), &lines[b], aligned) };
            } else {
                let own = start[b] - first;
                // SAFETY: slots `start[b] ..= at` are this piece's own; the line holds
                // their values at `own..16`.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        lines[b].0[own..].as_ptr(),
                        out.add(start[b]),
                        16 - own,
                    )
                };
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    if aligned {
        // SAFETY: SSE2 is part of x86-64. Orders the non-temporal stores before the
        // pool's join publishes this piece's work to the other threads.
        unsafe { core::arch::x86_64::_mm_sfence() };
    }
    // The partial last line of every bucket.
    for (b, &end) in next.iter().enumerate() {
        if end & 15 != 0 {
            let first = (end & !15).max(start[b]);
            if first < end {
                // SAFETY: slots `first..end` are this piece's own (at or after its first
                // slot of `b`, before its next free one); the line holds them at
                // `first & 15 ..`.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        lines[b].0[first & 15..].as_ptr(),
                        out.add(first),
                        end - first,
                    )
                };
            }
        }
    }
}

/// Writes a full line to `dst` (valid for 64 bytes), with non-temporal stores when
/// `aligned` (and `dst` is 64-byte aligned) on x86-64.
///
/// # Safety
/// `dst` is valid for writes of 16 `u32` values (64 bytes) that nothing else accesses
/// during the call, and 64-byte aligned if `aligned` (aligned non-temporal stores).
#[inline(always)]
unsafe fn store_line(dst: *mut u32, line: &Line, aligned: bool) {
    #[cfg(target_arch = "x86_64")]
    if aligned {
        use core::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
        let src = line.0.as_ptr().cast::<__m128i>();
        let dst = dst.cast::<__m128i>();
        // SAFETY: SSE2 is part of x86-64; `line` is 64-byte aligned (its type), `dst` too
        // (caller), and both span 64 bytes.
        unsafe {
            for i in 0..4 {
                _mm_stream_si128(dst.add(i), _mm_load_si128(src.add(i)));
            }
        }
        return;
    }
    let _ = aligned;
    // SAFETY: `dst` is valid for 16 values (caller).
    unsafe { core::ptr::copy_nonoverlapping(line.0.as_ptr(), dst, 16) };
}

/// `u32` values grouped by their high bits: bucket `b` holds, in input order, the values
/// `v` with `v >> (32 - bits) == b`, each stored as its offset from the bucket's first
/// value (`v & (span - 1)`, `span = 2^(32 - bits)`).
///
/// It is the first pass of the range plan for exactly-once integers, done in memory: each
/// bucket is then small enough for a [`TwoBitmap`](crate::TwoBitmap) of `span` values that
/// stays in cache (`bits = 10`: 1 MiB), and the buckets are solved in order, in parallel.
///
/// ```
/// use bloomforge_bitmap::{RangeBuckets, TwoBitmap};
///
/// let values = [7u32, 1 << 31, 7, 9, u32::MAX];
/// let buckets = RangeBuckets::par_new(&[&values[..]], 1)?; // two buckets of 2^31
/// assert_eq!(buckets.bucket(0), [7, 7, 9]);
/// assert_eq!(buckets.bucket(1), [0, (1 << 31) - 1]);
/// let mut once = Vec::new();
/// for b in 0..buckets.buckets() {
///     let mut t = TwoBitmap::new(buckets.span())?;
///     t.insert_bucket(&buckets, b)?;
///     t.append_once(0..buckets.span(), (b as u64 * buckets.span()) as u32, &mut once);
/// }
/// assert_eq!(once, [9, 1 << 31, u32::MAX]);
/// # Ok::<(), bloomforge_bitmap::BitmapError>(())
/// ```
pub struct RangeBuckets {
    part: Partition,
    bits: u32,
}

impl core::fmt::Debug for RangeBuckets {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RangeBuckets")
            .field("bits", &self.bits)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl RangeBuckets {
    /// Groups the values of every slice of `inputs` by their high `bits` bits (`1..=16`)
    /// on all rayon threads. Takes `4 * values` bytes (plus 64), allocated lazily and
    /// advised for huge pages, and a 64-byte line per bucket and thread.
    ///
    /// # Errors
    /// [`BitmapError::InvalidBucketBits`], or `Core(AllocationFailed)`.
    pub fn par_new(inputs: &[&[u32]], bits: u32) -> Result<Self> {
        if !(1..=16).contains(&bits) {
            return Err(BitmapError::InvalidBucketBits(bits));
        }
        let shift = 32 - bits;
        let part = partition(inputs, shift, 1 << bits, (1u32 << shift).wrapping_sub(1))?;
        Ok(RangeBuckets { part, bits })
    }

    /// Bytes [`par_new`](Self::par_new) allocates for `values` values (its output).
    pub fn bytes_for(values: usize) -> usize {
        values.saturating_add(15).saturating_mul(4)
    }

    /// The number of high bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The number of buckets, `2^bits`.
    pub fn buckets(&self) -> usize {
        1 << self.bits
    }

    /// The values each bucket covers, `2^(32 - bits)`: bucket `b` holds offsets from
    /// `b * span`.
    pub fn span(&self) -> u64 {
        1 << (32 - self.bits)
    }

    /// The offsets (from `b * span()`) of bucket `b`'s values, in input order.
    ///
    /// # Panics
    /// If `b >= buckets()`.
    pub fn bucket(&self, b: usize) -> &[u32] {
        self.part.bucket(b)
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.part.data.len() - self.part.skip
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> u64 {
        (self.part.data.capacity() * 4 + self.part.bounds.len() * 8) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(seed: u64, n: usize) -> Vec<u32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 32) as u32
            })
            .collect()
    }

    /// The partition is a stable grouping: bucket by bucket, the input's values in order
    /// (a stable sort by bucket is the model).
    fn check(inputs: &[&[u32]], bits: u32) {
        let shift = 32 - bits;
        let mask = (1u32 << shift).wrapping_sub(1);
        let p = partition(inputs, shift, 1 << bits, mask).unwrap();
        let mut want: Vec<u32> = inputs.iter().flat_map(|s| s.iter().copied()).collect();
        want.sort_by_key(|&v| v >> shift);
        let mut at = 0;
        for b in 0..1usize << bits {
            let got = p.bucket(b);
            let expected = &want[at..at + got.len()];
            assert!(
                expected.iter().all(|&v| (v >> shift) as usize == b),
                "bucket {b}"
            );
            assert!(
                got.iter().zip(expected).all(|(&g, &v)| g == v & mask),
                "bucket {b} of {bits} bits"
            );
            at += got.len();
        }
        assert_eq!(at, want.len());
        assert_eq!(p.skip + p.bounds[1 << bits], p.data.len());
    }

    #[test]
    fn partitions_are_stable_groupings() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let big = values(1, 300_000);
        let small = values(2, 1000);
        let edges = [0u32, u32::MAX, 1 << 31, 63, 64, u32::MAX - 1, 0];
        pool.install(|| {
            // Three pieces of 100 000 (lines: at least 16 values a bucket per piece at 10
            // bits), a piece too small for lines, and several inputs.
            for bits in [1, 4, 10, 12, 16] {
                check(&[&big], bits);
                check(&[&small, &edges, &big[..70_000], &[]], bits);
            }
            check(&[], 10);
            check(&[&[]], 10);
        });
        // One thread: one piece.
        check(&[&big], 10);
    }

    #[test]
    fn range_buckets_offsets() {
        let v = values(3, 5000);
        let r = RangeBuckets::par_new(&[&v], 10).unwrap();
        assert_eq!(
            (r.bits(), r.buckets(), r.span(), r.len()),
            (10, 1024, 1 << 22, 5000)
        );
        let mut back: Vec<u32> = (0..r.buckets())
            .flat_map(|b| r.bucket(b).iter().map(move |&o| (b as u32) << 22 | o))
            .collect();
        let mut want = v.clone();
        back.sort_unstable();
        want.sort_unstable();
        assert_eq!(back, want);
        assert!(matches!(
            RangeBuckets::par_new(&[&v], 0),
            Err(BitmapError::InvalidBucketBits(0))
        ));
        assert!(RangeBuckets::par_new(&[&v], 17).is_err());
        assert!(RangeBuckets::par_new(&[], 8).unwrap().is_empty());
    }
}
