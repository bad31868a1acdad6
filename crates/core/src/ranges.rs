//! Hashes split by range of blocks, for parallel inserts without atomics that read each
//! hash once.
//!
//! A blocked or split-block filter cut into contiguous ranges of blocks can be filled by
//! one thread per range with plain stores: no two threads touch a block. Each thread must
//! then get the hashes of its range. [`RangeSplitter::split`] groups a batch of hashes by
//! range (one counting-sort pass), wherever the hashes are computed, for instance in the
//! tasks that hash the keys; the filter's `par_insert_split` then inserts range `r` of
//! every split on one task, into range `r` of its blocks. The work is proportional to the
//! number of hashes, whatever the number of threads (a thread that scanned every hash for
//! those of its range would read them all once per thread).
//!
//! ```
//! use bloomforge_core::BlockedBloomFilter;
//! use std::hash::BuildHasher;
//! let mut f = BlockedBloomFilter::new(100_000, 0.01)?;
//! let hashes: Vec<u64> = (0..100_000u64).map(|i| f.hasher().hash_one(i)).collect();
//! let splitter = f.range_splitter(4);
//! // Split anywhere (here: two batches), then insert them all from the current rayon pool.
//! let parts: Vec<_> = hashes.chunks(50_000).map(|c| splitter.split(c)).collect();
//! f.par_insert_split(&splitter, &parts)?;
//! assert!((0..100_000u64).all(|i| f.contains(&i)));
//! # Ok::<(), bloomforge_core::Error>(())
//! ```

use crate::layout::{Blocked512, Layout, LayoutId, Split256};
use core::ops::Range;

/// The most ranges a splitter cuts (a range per thread is the use; the splitter and every
/// split hold 8 bytes per range).
pub const MAX_RANGES: usize = 1 << 16;

/// Cuts a blocked or split-block filter's blocks into contiguous ranges and tells which
/// range a hash falls in (made by the filter's `range_splitter`, e.g.
/// [`BlockedBloomFilter::range_splitter`](crate::BlockedBloomFilter::range_splitter); see
/// the [module docs](self)). `Send` and `Sync`: the tasks that hash keys can split their
/// hashes while the filter is borrowed elsewhere. It holds 8 bytes per range, and each
/// split as many: ask for about one range per thread (at most [`MAX_RANGES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeSplitter {
    layout: LayoutId,
    blocks: usize,
    /// Range of block `b`: `(b * mul) >> 64`, at most `last`; monotone in `b`.
    mul: u64,
    /// The last range (`ranges - 1`).
    last: usize,
    /// First block of each range, and `blocks` at the end (`ranges + 1` entries).
    starts: Vec<usize>,
}

impl RangeSplitter {
    /// `ranges` ranges of `blocks` blocks (clamped as [`ranges`](Self::ranges) says).
    pub(crate) fn new(layout: LayoutId, blocks: usize, ranges: usize) -> Self {
        // `mul` below fits 64 bits when there are fewer ranges than blocks (with as many
        // ranges as blocks it would be 2^64).
        let ranges = ranges.clamp(1, blocks.saturating_sub(1).clamp(1, MAX_RANGES));
        let mul = if ranges == 1 {
            0
        } else {
            ((ranges as u128) << 64).div_ceil(blocks as u128) as u64
        };
        let mut splitter = RangeSplitter {
            layout,
            blocks,
            mul,
            last: ranges - 1,
            starts: Vec::with_capacity(ranges + 1),
        };
        // The first block of range `r`: the first `b` whose range is at least `r`.
        for r in 0..ranges {
            let (mut lo, mut hi) = (0, blocks);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if splitter.range_of_block(mid) < r {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            splitter.starts.push(lo);
        }
        splitter.starts.push(blocks);
        splitter
    }

    /// The range of block `b < blocks`.
    #[inline(always)]
    fn range_of_block(&self, b: usize) -> usize {
        // `min`: for tables past 2^32 blocks the rounding of `mul` could reach `ranges`.
        (((b as u128 * self.mul as u128) >> 64) as usize).min(self.last)
    }

    /// Number of ranges: the number asked for, but at least 1 and at most
    /// `max(1, num_blocks() - 1)` (the range arithmetic needs fewer ranges than blocks) and
    /// [`MAX_RANGES`]. Loop over this count, not the one asked for.
    pub fn ranges(&self) -> usize {
        self.starts.len() - 1
    }

    /// Number of blocks of the filter this splitter cuts.
    pub fn num_blocks(&self) -> usize {
        self.blocks
    }

    /// The blocks of range `r` (`r < ranges()`).
    ///
    /// # Panics
    /// If `r >= ranges()`.
    pub fn blocks_of(&self, r: usize) -> Range<usize> {
        self.starts[r]..self.starts[r + 1]
    }

    /// The range of the block a key with this hash goes to.
    #[inline]
    pub fn range_of(&self, hash: u64) -> usize {
        match self.layout {
            LayoutId::Blocked => self.range_of_block(Blocked512::block_index(hash, self.blocks)),
            LayoutId::Split => self.range_of_block(Split256::block_index(hash, self.blocks)),
        }
    }

    /// `hashes` grouped by range (a stable counting sort: within a range, input order).
    pub fn split(&self, hashes: &[u64]) -> RangeSplit {
        match self.layout {
            LayoutId::Blocked => self.split_with::<Blocked512>(hashes),
            LayoutId::Split => self.split_with::<Split256>(hashes),
        }
    }

    fn split_with<L: Layout>(&self, hashes: &[u64]) -> RangeSplit {
        let ranges = self.ranges();
        let range = |h: u64| self.range_of_block(L::block_index(h, self.blocks));
        // Counts, then each range's first slot, then the hashes in place; the range of a
        // hash is recomputed in the second pass (two multiplies) rather than stored.
        let mut starts = vec![0usize; ranges + 1];
        for &h in hashes {
            starts[range(h) + 1] += 1;
        }
        for r in 0..ranges {
            starts[r + 1] += starts[r];
        }
        let mut next = starts.clone();
        let mut grouped = vec![0u64; hashes.len()];
        for &h in hashes {
            let slot = &mut next[range(h)];
            grouped[*slot] = h;
            *slot += 1;
        }
        RangeSplit {
            layout: Some(self.layout),
            blocks: self.blocks,
            hashes: grouped,
            starts,
        }
    }

    /// Whether `part` was split by a splitter equal to this one.
    pub(crate) fn is_splitter_of(&self, part: &RangeSplit) -> bool {
        part.layout == Some(self.layout)
            && part.blocks == self.blocks
            && part.ranges() == self.ranges()
    }

    /// The layout this splitter was made for.
    pub(crate) fn layout(&self) -> LayoutId {
        self.layout
    }
}

/// A batch of hashes grouped by range ([`RangeSplitter::split`]). The default value holds
/// no hash and belongs to no splitter (`par_insert_split` refuses it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSplit {
    layout: Option<LayoutId>,
    blocks: usize,
    hashes: Vec<u64>,
    /// First hash of each range, and `hashes.len()` at the end.
    starts: Vec<usize>,
}

impl RangeSplit {
    /// The hashes of range `r` (empty past the last range).
    pub fn range(&self, r: usize) -> &[u64] {
        match (self.starts.get(r), self.starts.get(r + 1)) {
            (Some(&a), Some(&b)) => &self.hashes[a..b],
            _ => &[],
        }
    }

    /// Number of ranges it was split into.
    pub fn ranges(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Number of hashes.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether it holds no hash.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<RangeSplitter>();
    send_sync::<RangeSplit>();
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block lies in exactly one range, the ranges are contiguous, cover all blocks,
    /// differ in size by at most one block (up to 2^32 blocks, where `(b mul) >> 64` is
    /// exactly `b ranges / blocks`), and `range_of_block` agrees with them.
    #[test]
    fn ranges_cover_the_blocks_evenly() {
        for blocks in [1usize, 2, 3, 7, 64, 1000, 65_537, 1 << 20] {
            for asked in [1usize, 2, 3, 4, 7, 16, 1000] {
                let s = RangeSplitter::new(LayoutId::Blocked, blocks, asked);
                let r = s.ranges();
                assert!(r >= 1 && r <= asked && (r < blocks || blocks == 1));
                assert_eq!(s.blocks_of(0).start, 0);
                assert_eq!(s.blocks_of(r - 1).end, blocks);
                let sizes: Vec<usize> = (0..r).map(|i| s.blocks_of(i).len()).collect();
                let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(
                    *min >= 1 && max - min <= 1,
                    "{blocks} blocks / {r}: {sizes:?}"
                );
                for i in 0..r {
                    let range = s.blocks_of(i);
                    for b in [range.start, range.end - 1] {
                        assert_eq!(s.range_of_block(b), i, "{blocks} blocks, block {b}");
                    }
                }
            }
        }
    }

    /// Past 2^32 blocks (a 256 GiB blocked filter: the splitter allocates nothing per
    /// block, so this costs nothing) the last range's clamp keeps every block in range,
    /// the ranges contiguous and none empty, and sizes within 1 % of even (the rounding of
    /// `mul` shows only there: ~0.1 % at 2^55 blocks).
    #[test]
    fn ranges_of_huge_filters_stay_in_bounds() {
        for blocks in [(1usize << 32) + 1, (1 << 40) + 7, (1 << 55) - 3] {
            for asked in [2usize, 3, 16, 1000] {
                let s = RangeSplitter::new(LayoutId::Blocked, blocks, asked);
                assert_eq!(s.ranges(), asked);
                assert_eq!(
                    (s.blocks_of(0).start, s.blocks_of(asked - 1).end),
                    (0, blocks)
                );
                let even = blocks / asked;
                for r in 0..asked {
                    let range = s.blocks_of(r);
                    assert!(
                        range.len().abs_diff(even) <= even / 100,
                        "{blocks} / {asked}"
                    );
                    assert_eq!(s.range_of_block(range.start), r);
                    assert_eq!(s.range_of_block(range.end - 1), r);
                }
                assert_eq!(s.range_of(u64::MAX), asked - 1);
            }
        }
        // Absurd counts are capped, not allocated.
        let s = RangeSplitter::new(LayoutId::Split, 1 << 40, usize::MAX);
        assert_eq!(s.ranges(), MAX_RANGES);
        assert_eq!(s.blocks_of(MAX_RANGES - 1).end, 1 << 40);
        assert_eq!(
            RangeSplitter::new(LayoutId::Split, 10, usize::MAX).ranges(),
            9
        );
        assert_eq!(RangeSplitter::new(LayoutId::Blocked, 10, 0).ranges(), 1);
    }

    /// A split holds every hash once, each in the range of its block, in input order.
    #[test]
    fn split_groups_every_hash_by_its_range() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let hashes: Vec<u64> = (0..10_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        for layout in [LayoutId::Blocked, LayoutId::Split] {
            let s = RangeSplitter::new(layout, 3001, 7);
            let split = s.split(&hashes);
            assert_eq!((split.len(), split.ranges()), (hashes.len(), 7));
            for r in 0..7 {
                let expected: Vec<u64> = hashes
                    .iter()
                    .copied()
                    .filter(|&h| s.range_of(h) == r)
                    .collect();
                assert_eq!(split.range(r), &expected[..]);
                assert!(!expected.is_empty());
            }
            assert!(split.range(7).is_empty() && s.is_splitter_of(&split));
        }
    }
}
