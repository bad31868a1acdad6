//! The 3-wise layouts (binary fuse, xor) and the peeling solver shared by every filter of
//! this crate that stores an xor of three cells per key.

use bloomforge_core::format::{u32_at, u64_at};
use bloomforge_core::hash::{fast_range64, mix64};

/// Where a key's three cells lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Graf & Lemire's binary fuse layout (arity 3): three cells in consecutive segments.
    Fuse {
        segment_length: u64,
        segment_count_length: u64,
        array_length: u64,
    },
    /// The xor filter layout: three blocks of `block_length` cells.
    Xor { block_length: u64 },
}

/// Bytes of a layout in a payload.
pub(crate) const LAYOUT_BYTES: usize = 32;

impl Layout {
    /// The binary fuse layout for `n` keys (Graf & Lemire 2022, arity 3).
    pub(crate) fn fuse(n: usize) -> Layout {
        let n = n as f64;
        let segment_length: u64 = if n <= 1.0 {
            4
        } else {
            let e = (n.ln() / 3.33f64.ln() + 2.25).floor() as u32;
            (1u64 << e.min(18)).max(4)
        };
        let size_factor = if n <= 1.0 {
            0.0
        } else {
            (0.875 + 0.25 * 1_000_000f64.ln() / n.ln()).max(1.125)
        };
        let capacity = (n * size_factor).round() as u64;
        let init_segments = capacity.div_ceil(segment_length);
        let init_segments = init_segments.saturating_sub(2);
        let array_length = (init_segments + 2) * segment_length;
        let mut segment_count = array_length.div_ceil(segment_length);
        segment_count = if segment_count <= 2 {
            1
        } else {
            segment_count - 2
        };
        Layout::Fuse {
            segment_length,
            segment_count_length: segment_count * segment_length,
            array_length: (segment_count + 2) * segment_length,
        }
    }

    /// The xor filter layout for `n` keys (1.23 n + 32 cells).
    pub(crate) fn xor(n: usize) -> Layout {
        let capacity = 32 + (1.23 * n as f64).ceil() as u64;
        Layout::Xor {
            block_length: capacity.div_ceil(3),
        }
    }

    /// Number of cells.
    pub(crate) fn cells(&self) -> usize {
        match *self {
            Layout::Fuse { array_length, .. } => array_length as usize,
            Layout::Xor { block_length } => (3 * block_length) as usize,
        }
    }

    /// The three cells of a 64-bit key hash (always distinct for the fuse layout, in
    /// distinct blocks for the xor layout).
    #[inline(always)]
    pub(crate) fn positions(&self, hash: u64) -> [usize; 3] {
        match *self {
            Layout::Fuse {
                segment_length,
                segment_count_length,
                ..
            } => {
                let mask = segment_length - 1;
                let h0 = fast_range64(hash, segment_count_length);
                let mut h1 = h0 + segment_length;
                let mut h2 = h1 + segment_length;
                h1 ^= (hash >> 18) & mask;
                h2 ^= hash & mask;
                [h0 as usize, h1 as usize, h2 as usize]
            }
            Layout::Xor { block_length } => {
                let b = block_length;
                [
                    fast_range64(hash, b) as usize,
                    (b + fast_range64(hash.rotate_left(21), b)) as usize,
                    (2 * b + fast_range64(hash.rotate_left(42), b)) as usize,
                ]
            }
        }
    }

    /// Appends the layout's 32 payload bytes.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        let (tag, a, b, c) = match *self {
            Layout::Fuse {
                segment_length,
                segment_count_length,
                array_length,
            } => (1u32, segment_length, segment_count_length, array_length),
            Layout::Xor { block_length } => (2u32, block_length, 0, 0),
        };
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
        out.extend_from_slice(&c.to_le_bytes());
    }

    /// Reads and validates a layout from the first 32 bytes of `b`.
    pub(crate) fn read(b: &[u8]) -> Result<Layout, bloomforge_core::Error> {
        let corrupt = |reason| bloomforge_core::Error::Corrupt { reason };
        if b.len() < LAYOUT_BYTES {
            return Err(corrupt("payload too short for the layout"));
        }
        let (tag, a, x, y) = (u32_at(b, 0), u64_at(b, 8), u64_at(b, 16), u64_at(b, 24));
        if u32_at(b, 4) != 0 {
            return Err(corrupt("reserved layout field is not zero"));
        }
        // Cell counts above 2^40 are refused before anything is allocated.
        const MAX: u64 = 1 << 40;
        match tag {
            1 => {
                let ok = a.is_power_of_two()
                    && (4..=1 << 18).contains(&a)
                    && x > 0
                    && x % a == 0
                    && x <= MAX
                    && y == x + 2 * a;
                if !ok {
                    return Err(corrupt("inconsistent binary fuse layout"));
                }
                Ok(Layout::Fuse {
                    segment_length: a,
                    segment_count_length: x,
                    array_length: y,
                })
            }
            2 if a > 0 && a <= MAX && x == 0 && y == 0 => Ok(Layout::Xor { block_length: a }),
            _ => Err(corrupt("unknown or inconsistent layout")),
        }
    }
}

/// A hash for fingerprints, independent-looking of the bits that pick the cells.
#[inline(always)]
pub(crate) fn fingerprint_hash(hash: u64) -> u64 {
    mix64(hash ^ 0x9e37_79b9_7f4a_7c15)
}

/// Peels the 3-hypergraph of `hashes` (distinct) over `layout`. Returns the order in
/// which to assign: `(key index, cell that key owns)`, last peeled first; `None` if the
/// graph has a 2-core (then retry with another seed).
pub(crate) fn peel(layout: &Layout, hashes: &[u64]) -> Option<Vec<(u32, u32)>> {
    let m = layout.cells();
    let mut count = vec![0u32; m];
    let mut xor_idx = vec![0u32; m];
    for (i, &h) in hashes.iter().enumerate() {
        for p in layout.positions(h) {
            count[p] += 1;
            xor_idx[p] ^= i as u32;
        }
    }
    let mut queue: Vec<u32> = (0..m as u32).filter(|&c| count[c as usize] == 1).collect();
    let mut order = Vec::with_capacity(hashes.len());
    while let Some(c) = queue.pop() {
        let c = c as usize;
        if count[c] != 1 {
            continue;
        }
        let i = xor_idx[c];
        order.push((i, c as u32));
        for p in layout.positions(hashes[i as usize]) {
            count[p] -= 1;
            xor_idx[p] ^= i;
            if count[p] == 1 {
                queue.push(p as u32);
            }
        }
    }
    (order.len() == hashes.len()).then(|| {
        order.reverse();
        order
    })
}

/// A table of cells the solver writes.
pub(crate) trait CellStore {
    /// Cell `c`.
    fn get(&self, c: usize) -> u64;
    /// Sets cell `c` to `v` (truncated to the cell width).
    fn set(&mut self, c: usize, v: u64);
}

/// Fills cells so that the xor of each key's three cells is `target(i)`.
pub(crate) fn assign(
    layout: &Layout,
    hashes: &[u64],
    order: &[(u32, u32)],
    target: impl Fn(usize) -> u64,
    cells: &mut impl CellStore,
) {
    for &(i, c) in order {
        let i = i as usize;
        let c = c as usize;
        let mut v = target(i);
        for p in layout.positions(hashes[i]) {
            if p != c {
                v ^= cells.get(p);
            }
        }
        cells.set(c, v);
    }
}

/// Sorts hashes and removes repeats (the same key, or two keys of identical 64-bit hash,
/// which a membership filter cannot tell apart anyway).
pub(crate) fn dedup_hashes(mut hashes: Vec<u64>) -> Vec<u64> {
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// Seed of retry `attempt` for a base seed.
pub(crate) fn attempt_seed(seed: u64, attempt: u32) -> u64 {
    if attempt == 0 {
        seed
    } else {
        mix64(seed ^ u64::from(attempt).wrapping_mul(0xa076_1d64_78bd_642f))
    }
}

/// How many seeds a construction tries before it gives up.
pub(crate) const MAX_ATTEMPTS: u32 = 100;

/// `n` copies of `value` through core's allocator, an allocation failure typed.
pub(crate) fn alloc<T: Clone>(n: usize, value: T) -> Result<Vec<T>, bloomforge_core::Error> {
    bloomforge_core::memory::try_vec_filled(n, value).map_err(|_| {
        bloomforge_core::Error::AllocationFailed {
            bytes: n.saturating_mul(std::mem::size_of::<T>()),
        }
    })
}
