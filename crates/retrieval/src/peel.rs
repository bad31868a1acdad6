//! The 3-wise layouts (binary fuse, xor) and the peeling solver shared by every filter of
//! this crate that stores an xor of three cells per key.

use bloomforge_core::format::{u32_at, u64_at};

use bloomforge_core::batch::prefetch;
use bloomforge_core::hash::{fast_range64, mix64};
use rayon::prelude::*;

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

    /// A cell below which no key of hash `>= hash` has a cell: the first cell of `hash`
    /// on the binary fuse layout (it grows with the hash and is a key's lowest cell), 0 on
    /// the xor layout (whose second and third cells do not follow the hash's order).
    #[inline]
    pub(crate) fn first_cell_at_least(&self, hash: u64) -> usize {
        match *self {
            Layout::Fuse {
                segment_count_length,
                ..
            } => fast_range64(hash, segment_count_length) as usize,
            Layout::Xor { .. } => 0,
        }
    }

    /// How far past a region's last first-cell its keys' cells reach: three segments on
    /// the binary fuse layout; 0 on the xor layout (no regions there).
    pub(crate) fn spill_width(&self) -> usize {
        match *self {
            Layout::Fuse { segment_length, .. } => 3 * segment_length as usize,
            Layout::Xor { .. } => 0,
        }
    }

    /// Appends the layout's 32 payload bytes, with the retry index `attempt` (see
    /// [`retry_hash`]) in the field that was reserved (and zero) before retries were
    /// recorded: bytes of a filter built on its first attempt are the same as before.
    pub(crate) fn write(&self, attempt: u32, out: &mut Vec<u8>) {
        self.write_coded(attempt, 0, out);
    }

    /// [`write`](Self::write) with `code` (below 2^24) in bits 8.. of the tag word: a
    /// membership filter's fingerprint [`Derivation`].
    pub(crate) fn write_coded(&self, attempt: u32, code: u32, out: &mut Vec<u8>) {
        let (tag, a, b, c) = match *self {
            Layout::Fuse {
                segment_length,
                segment_count_length,
                array_length,
            } => (1u32, segment_length, segment_count_length, array_length),
            Layout::Xor { block_length } => (2u32, block_length, 0, 0),
        };
        out.extend_from_slice(&(tag | code << 8).to_le_bytes());
        out.extend_from_slice(&attempt.to_le_bytes());
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
        out.extend_from_slice(&c.to_le_bytes());
    }

    /// Reads and validates a layout and its retry index from the first 32 bytes of `b`
    /// (bytes written before retries were recorded hold 0 there: their hasher's seed was
    /// the one that peeled).
    pub(crate) fn read(b: &[u8]) -> Result<(Layout, u32), bloomforge_core::Error> {
        match Self::read_coded(b)? {
            (layout, attempt, 0) => Ok((layout, attempt)),
            _ => Err(bloomforge_core::Error::Corrupt {
                reason: "unknown or inconsistent layout",
            }),
        }
    }

    /// [`read`](Self::read), and the code in bits 8.. of the tag word (see
    /// [`write_coded`](Self::write_coded)), unchecked.
    pub(crate) fn read_coded(b: &[u8]) -> Result<(Layout, u32, u32), bloomforge_core::Error> {
        let corrupt = |reason| bloomforge_core::Error::Corrupt { reason };
        if b.len() < LAYOUT_BYTES {
            return Err(corrupt("payload too short for the layout"));
        }
        let (tag, a, x, y) = (u32_at(b, 0), u64_at(b, 8), u64_at(b, 16), u64_at(b, 24));
        let (tag, code) = (tag & 0xff, tag >> 8);
        let attempt = u32_at(b, 4);
        if attempt >= MAX_ATTEMPTS {
            return Err(corrupt("retry index out of range"));
        }
        // Cell counts above 2^40 are refused before anything is allocated; on a 32-bit
        // target also those whose bytes `usize` cannot address (the lookups read cells
        // without bounds checks, trusting `cells()`).
        const MAX: u64 = 1 << 40;
        let addressable = |cells: u64| cells <= isize::MAX as u64 / 8;
        match tag {
            1 => {
                let ok = a.is_power_of_two()
                    && (4..=1 << 18).contains(&a)
                    && x > 0
                    && x % a == 0
                    && x <= MAX
                    && y == x + 2 * a
                    && addressable(y);
                if !ok {
                    return Err(corrupt("inconsistent binary fuse layout"));
                }
                Ok((
                    Layout::Fuse {
                        segment_length: a,
                        segment_count_length: x,
                        array_length: y,
                    },
                    attempt,
                    code,
                ))
            }
            2 if a > 0 && a <= MAX && addressable(3 * a) && x == 0 && y == 0 => {
                Ok((Layout::Xor { block_length: a }, attempt, code))
            }
            _ => Err(corrupt("unknown or inconsistent layout")),
        }
    }
}

/// The hash a key's cells and fingerprint come from on retry `attempt`: the hasher's
/// hash itself on the first attempt (0), else a bijective remix of it salted by the
/// attempt. A construction that does not peel retries with the next attempt instead of
/// another hasher seed, so any `BuildHasher` (a keyed one, whose key cannot be
/// re-drawn) can be retried, and `contains_hash` takes the hasher's own hash. Being a
/// bijection, the remix neither creates nor removes equal hashes.
#[inline(always)]
pub(crate) fn retry_hash(hash: u64, attempt: u32) -> u64 {
    if attempt == 0 {
        hash
    } else {
        mix64(hash ^ u64::from(attempt).wrapping_mul(0xa076_1d64_78bd_642f))
    }
}

/// Keys hashed at a time by the batch lookups (and the approximator's batch insert).
pub(crate) const LOOKUP_BLOCK: usize = 1024;
/// Keys ahead of the one answered whose cells are prefetched. Measured: 8 ahead leaves a
/// 22 MB Bloomier table at 19-20 ns a key, 32 at 8.4-9.7; on an AMD EPYC Zen 5, 2 cores,
/// 10M keys, its `get_batch` takes 9.8-10.3 ns a key at 32 (blocks of 256 keys), 7.3 at 64
/// (512) and 6.4-6.6 at 128 (1024); the 11 MB binary fuse filter's `contains_batch` and the
/// 1M-key rows measure the same.
pub(crate) const LOOKUP_AHEAD: usize = 128;

/// Tables below this size (a core's L2 on the machines measured) are not prefetched by
/// the batch lookups: they answer from the cache, where the prefetches only add work.
/// `BinaryFuseFilter<u8>::contains_batch` in calls of 1024 keys, ns/key with / without
/// the prefetches (`small_batches` example, AMD EPYC Zen 5 with 1 MiB of L2): 3.29 /
/// 2.67 at 10^5 keys (0.11 MB), 4.26 / 3.66 at 10^6 (1.1 MB), 4.60 / 4.19 at 3 10^6 (3.4
/// MB), 4.60 / 5.96 at 10^7 (11 MB); but in the retrieval `perf` example a threshold of
/// 8 MiB makes 1.1 MB slower (4.27-4.52 against 3.67-3.84, the 2.3 MB Bloomier table
/// 5.06-5.28 against 4.35-4.54), so only what fits the L2 goes without.
pub(crate) const LOOKUP_PREFETCH_MIN_BYTES: usize = 1 << 20;

/// The prefetch distance of a batch lookup over a table of `bytes`: [`LOOKUP_AHEAD`],
/// or 0 (no prefetch) below [`LOOKUP_PREFETCH_MIN_BYTES`].
#[inline(always)]
pub(crate) fn lookup_ahead(bytes: usize) -> usize {
    if bytes >= LOOKUP_PREFETCH_MIN_BYTES {
        LOOKUP_AHEAD
    } else {
        0
    }
}

/// The crate's batch lookups: `out[i] = answer(hash(&keys[i]))`, the keys hashed a block
/// at a time and `fetch` (the prefetch of a hash's cells) called `ahead` keys ahead
/// (at most [`LOOKUP_BLOCK`]; for the filters [`lookup_ahead`] of their table's size:
/// [`LOOKUP_AHEAD`], or 0, no prefetch, for tables in the L2), so that several keys'
/// cache misses overlap where single lookups wait on their own. The caller checks the
/// lengths and dispatches on the cell width once, before the loop.
#[inline(always)]
pub(crate) fn lookup_batch<K, T>(
    keys: &[K],
    out: &mut [T],
    hash: impl Fn(&K) -> u64,
    fetch: impl Fn(u64),
    answer: impl Fn(u64) -> T,
    ahead: usize,
) {
    debug_assert_eq!(keys.len(), out.len());
    // The block of hashes is a `Ring`, left uninitialised: zeroing the 8 KB block cost
    // more than a batch of a few keys takes.
    bloomforge_core::batch_pipeline!(blocks: LOOKUP_BLOCK, ahead: ahead, keys: keys, out: out,
        hash |k| hash(k),
        fetch |h| fetch(h),
        probe |o, h| *o = answer(h));
}

/// The prefetch of a static structure's three cells (`cell_addr` gives a cell's address).
#[inline(always)]
pub(crate) fn fetch_cells(layout: &Layout, hash: u64, cell_addr: impl Fn(usize) -> *const u8) {
    for c in layout.positions(hash) {
        prefetch(cell_addr(c));
    }
}

/// `Err(LengthMismatch)` unless a batch's output is as long as its input.
pub(crate) fn check_batch(keys: usize, out: usize) -> Result<(), crate::RetrievalError> {
    if keys == out {
        Ok(())
    } else {
        Err(bloomforge_core::Error::LengthMismatch { keys, out }.into())
    }
}

/// A hash for fingerprints, independent-looking of the bits that pick the cells.
#[inline(always)]
pub(crate) fn fingerprint_hash(hash: u64) -> u64 {
    mix64(hash ^ 0x9e37_79b9_7f4a_7c15)
}

/// How a key's fingerprint bits come from its (retry-remixed) hash, recorded with the
/// filter (a Bloomier filter: bits 8..16 of its fingerprint-width word; a membership
/// filter: bits 8..16 of its layout's tag word; the bits above must be 0), 0 in the
/// bytes written before the choice existed, so those still load and answer as they did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Derivation {
    /// A full 64-bit mix of the hash ([`fingerprint_hash`], two multiplies): filters
    /// written by versions that did not record the derivation.
    Mixed = 0,
    /// One multiply and a byte swap: the low bits of the result are the product's top
    /// bits, each of which depends on every bit of the hash (its low bits, which the
    /// three cell positions largely fix, included); what new filters use. Measured at
    /// 10^6 keys, one process, 9 rounds: a Bloomier `get` of 8-bit values and fingerprints
    /// 7.4 ns mixed, 6.2 multiplied, 5.6-5.9 multiplied with its unchecked cell reads
    /// (xorf `BinaryFuse16` 4.7-5.1 in the same rounds); `BinaryFuseFilter` `contains`
    /// 1.15-1.16x xorf's mixed, 0.99-1.01x multiplied (`u8` and `u16`).
    Multiplied = 1,
}

/// The derivation new filters are built with.
pub(crate) const DERIVATION: Derivation = Derivation::Multiplied;

impl Derivation {
    /// The derivation of a recorded code, if known.
    pub(crate) fn from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(Derivation::Mixed),
            1 => Some(Derivation::Multiplied),
            _ => None,
        }
    }

    /// The fingerprint bits of `hash` (to be masked to the filter's width).
    #[inline(always)]
    pub(crate) fn fingerprint(self, hash: u64) -> u64 {
        match self {
            Derivation::Mixed => fingerprint_hash(hash),
            Derivation::Multiplied => hash.wrapping_mul(0x9e37_79b9_7f4a_7c15).swap_bytes(),
        }
    }
}

/// What a key carries into the cells besides its hash: nothing for a membership filter,
/// its value for a Bloomier filter. Cells hold the xor of the payloads of their keys, so
/// a cell left with one key yields that key's hash and payload without an index lookup.
pub(crate) trait Payload: Copy + Default + Send + Sync {
    /// `self ^ other`.
    fn xor(self, other: Self) -> Self;
}

impl Payload for () {
    #[inline(always)]
    fn xor(self, _: Self) -> Self {}
}

impl Payload for u32 {
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self ^ other
    }
}

/// The keys of a peeled hypergraph in peeling order, with the slot (0, 1 or 2) of the cell
/// each key owns. The keys peeled by a pass over `hashes[start..]` are written in place
/// over the hashes that pass has consumed (it never peels more keys than it has counted),
/// so peeling needs no second array of keys: `parts` are `(start, slots)`, the part's
/// keys `hashes[start..start + slots.len()]`, then `extra` (the boundary cells' keys).
pub(crate) struct Peeled<V> {
    hashes: Vec<u64>,
    values: Vec<V>,
    parts: Vec<(usize, Vec<u8>)>,
    extra: Vec<(u64, V, u8)>,
}

/// The cells a peeling pass works on: `main` holds cells `base..base + main.len()`, and
/// `spill` the next `spill.len()` cells (another region's, summed in afterwards).
struct Cells<'a, V> {
    base: usize,
    count: &'a mut [u8],
    hxor: &'a mut [u64],
    vxor: &'a mut [V],
    spill_count: Vec<u8>,
    spill_hxor: Vec<u64>,
    spill_vxor: Vec<V>,
}

impl<V: Payload> Cells<'_, V> {
    /// Adds (`+4`) or removes (`-4`, wrapping) a key of hash `h`, payload `v` at slot
    /// `slot` of cell `q`; returns the cell's new count field.
    #[inline(always)]
    fn update(&mut self, q: usize, delta: u8, slot: usize, h: u64, v: V) -> u8 {
        let i = q - self.base;
        let (count, hxor, vxor) = if i < self.count.len() {
            (&mut self.count[i], &mut self.hxor[i], &mut self.vxor[i])
        } else {
            let j = i - self.count.len();
            (
                &mut self.spill_count[j],
                &mut self.spill_hxor[j],
                &mut self.spill_vxor[j],
            )
        };
        *count = count.wrapping_add(delta) ^ slot as u8;
        *hxor ^= h;
        *vxor = vxor.xor(v);
        *count
    }
}

/// Counts `hashes` into `cells` and peels every cell of `from..to` (cells no key outside
/// `hashes` touches) as the count pass makes it final; see [`peel`]. The peeled keys are
/// written over `hashes[..]` / `values[..]` in peeling order (only over keys already
/// counted), their slots pushed to `slots`. Returns whether a count overflowed.
#[allow(clippy::too_many_arguments)]
fn count_and_sweep<V: Payload>(
    layout: &Layout,
    hashes: &mut [u64],
    values: &mut [V],
    order_bits: u32,
    cells: &mut Cells<'_, V>,
    from: usize,
    to: usize,
    slots: &mut Vec<u8>,
) -> bool {
    let mut behind: Vec<u32> = Vec::new();
    let mut sweep = from;
    // Peeled keys go to `hashes[written]`: each was counted, so `written` never passes
    // the next key to count.
    let mut written = 0usize;
    let mut advance = |frontier: usize,
                       cells: &mut Cells<'_, V>,
                       hashes: &mut [u64],
                       values: &mut [V],
                       slots: &mut Vec<u8>| {
        while sweep < frontier {
            if cells.count[sweep - cells.base] >> 2 == 1 {
                behind.push(sweep as u32);
                while let Some(c) = behind.pop() {
                    let i = c as usize - cells.base;
                    let count = cells.count[i];
                    if count >> 2 != 1 {
                        // Emptied since it was pushed: its key was peeled elsewhere.
                        continue;
                    }
                    let (h, v) = (cells.hxor[i], cells.vxor[i]);
                    hashes[written] = h;
                    values[written] = v;
                    written += 1;
                    slots.push(count & 3);
                    for (slot, q) in layout.positions(h).into_iter().enumerate() {
                        let now = cells.update(q, 4u8.wrapping_neg(), slot, h, v);
                        if now >> 2 == 1 && (from..=sweep).contains(&q) {
                            behind.push(q as u32);
                        }
                    }
                }
            }
            sweep += 1;
        }
    };
    let group_mask = if order_bits == 0 {
        0
    } else {
        u64::MAX << (64 - order_bits.min(64))
    };
    let mut group = None;
    let mut overflow = false;
    // Keys ahead whose cells are prefetched (about 3 % off a 10M-key build).
    const AHEAD: usize = 16;
    for i in 0..hashes.len() {
        let (h, v) = (hashes[i], values[i]);
        if order_bits > 0 && group != Some(h & group_mask) {
            group = Some(h & group_mask);
            let frontier = layout.first_cell_at_least(h & group_mask).min(to);
            advance(frontier, cells, hashes, values, slots);
        }
        if let Some(&ahead) = hashes.get(i + AHEAD) {
            // The first touches of a key's later cells miss the cache: ask early.
            for q in layout.positions(ahead) {
                let j = q.wrapping_sub(cells.base);
                prefetch(cells.hxor.as_ptr().wrapping_add(j));
                prefetch(cells.count.as_ptr().wrapping_add(j));
            }
        }
        for (slot, q) in layout.positions(h).into_iter().enumerate() {
            overflow |= cells.update(q, 4, slot, h, v) < 4;
        }
    }
    advance(to, cells, hashes, values, slots);
    overflow
}

/// Peels the 3-hypergraph of `hashes` (distinct; `values[i]` the payload of `hashes[i]`)
/// over `layout`, in the manner of Graf & Lemire's binary fuse construction: each cell
/// keeps 4 times its key count plus the xor of the slots (0, 1, 2) its keys use there, and
/// the xor of its keys' hashes and payloads, so a cell left with one key yields that key
/// without an index lookup.
///
/// `hashes` must be grouped by their top `order_bits` bits in ascending order (what
/// [`hash_partitioned`] returns with that many bits; sorted hashes are grouped for any
/// `order_bits`; 0 claims nothing). On the binary fuse layout a key's cells all lie at or
/// after its first cell, which grows with the hash, and within three segments of it. So:
/// - once the keys of a group are counted, every cell below the next group's first cell
///   is final: the peeling sweep follows the counting pass a few segments behind, both on
///   the same few segments while they are in cache. Cells are swept in ascending order;
///   a cell behind the sweep that drops to one key is peeled at once (a stack), one ahead
///   waits for the sweep;
/// - for large inputs the cells are cut into `regions` ranges at group boundaries, each
///   counted and peeled on its own thread (rayon) except its first three segments, which
///   the previous region's keys also touch (that region counts them into a spill buffer).
///   The spills are then summed in, and those boundary cells peeled last.
///
/// Any peeling order removes the same keys, and the regions depend only on the input,
/// so the result does not depend on the number of threads.
///
/// Returns `None` if the graph has a 2-core or a cell holds more than 63 keys (repeated
/// hashes: deduplicate, or retry with another seed).
pub(crate) fn peel<V: Payload>(
    layout: &Layout,
    hashes: Vec<u64>,
    values: Vec<V>,
    order_bits: u32,
) -> Option<Peeled<V>> {
    // One region per 4M keys (at most 16): enough work per thread to pay for the spills.
    let regions = (hashes.len() >> 22).clamp(1, 16);
    peel_in_regions(layout, hashes, values, order_bits, regions)
}

/// [`peel`] with the number of regions given.
fn peel_in_regions<V: Payload>(
    layout: &Layout,
    mut hashes: Vec<u64>,
    mut values: Vec<V>,
    order_bits: u32,
    regions: usize,
) -> Option<Peeled<V>> {
    debug_assert_eq!(hashes.len(), values.len());
    let m = layout.cells();
    // Zeroed on first touch (calloc), cheaper here than writing zeros up front; on huge
    // pages where the kernel grants them (at 10M keys: 41k fewer page faults a build,
    // 252k -> 45k for five builds, task-clock 1-11 % lower).
    let mut count = vec![0u8; m];
    let mut hxor = vec![0u64; m];
    let mut vxor = vec![V::default(); m];
    advise_untouched(&mut count);
    advise_untouched(&mut hxor);
    advise_untouched(&mut vxor);
    let spill = layout.spill_width();
    // Regions: hash index and first cell where each starts (a group boundary).
    let mut starts: Vec<(usize, usize)> = vec![(0, 0)];
    if regions > 1 && order_bits > 0 && spill > 0 {
        let shift = 64 - order_bits.min(64);
        let groups = 1u128 << order_bits.min(64);
        for r in 1..regions {
            let group = (groups * r as u128 / regions as u128) as u64;
            let boundary = if shift == 64 { 0 } else { group << shift };
            let at = hashes.partition_point(|&h| h < boundary);
            let cell = layout.first_cell_at_least(boundary);
            let &(prev_at, prev_cell) = starts.last().expect("not empty");
            // A region must hold keys and be wider than two spills.
            if at > prev_at && cell >= prev_cell + 2 * spill && cell + 2 * spill <= m {
                starts.push((at, cell));
            }
        }
    }
    if starts.len() == 1 {
        let mut cells = Cells {
            base: 0,
            count: &mut count,
            hxor: &mut hxor,
            vxor: &mut vxor,
            spill_count: Vec::new(),
            spill_hxor: Vec::new(),
            spill_vxor: Vec::new(),
        };
        let mut slots = Vec::with_capacity(hashes.len());
        let (hs, vs) = (&mut hashes[..], &mut values[..]);
        if count_and_sweep(layout, hs, vs, order_bits, &mut cells, 0, m, &mut slots) {
            return None;
        }
        return (slots.len() == hashes.len()).then_some(Peeled {
            hashes,
            values,
            parts: vec![(0, slots)],
            extra: Vec::new(),
        });
    }
    starts.push((hashes.len(), m));
    // Cut the cell arrays at the region starts.
    let mut jobs = Vec::with_capacity(starts.len() - 1);
    let (mut rc, mut rh, mut rv) = (&mut count[..], &mut hxor[..], &mut vxor[..]);
    let (mut kh, mut kv) = (&mut hashes[..], &mut values[..]);
    for (r, w) in starts.windows(2).enumerate() {
        let ((at, cell), (next_at, next_cell)) = (w[0], w[1]);
        let (hs, th) = kh.split_at_mut(next_at - at);
        let (vs, tv) = kv.split_at_mut(next_at - at);
        (kh, kv) = (th, tv);
        let len = next_cell - cell;
        let (c, tc) = rc.split_at_mut(len);
        let (h, th) = rh.split_at_mut(len);
        let (v, tv) = rv.split_at_mut(len);
        (rc, rh, rv) = (tc, th, tv);
        let tail = if next_cell == m { 0 } else { spill };
        let from = if r == 0 { 0 } else { cell + spill };
        let cells = Cells {
            base: cell,
            count: c,
            hxor: h,
            vxor: v,
            spill_count: vec![0; tail],
            spill_hxor: vec![0; tail],
            spill_vxor: vec![V::default(); tail],
        };
        jobs.push((at, hs, vs, cells, from, next_cell));
    }
    let done: Vec<_> = jobs
        .into_par_iter()
        .map(|(at, hs, vs, mut cells, from, to)| {
            let mut slots = Vec::with_capacity(hs.len());
            let overflow =
                count_and_sweep(layout, hs, vs, order_bits, &mut cells, from, to, &mut slots);
            let end = cells.base + cells.count.len();
            (
                overflow,
                (at, slots),
                end,
                cells.spill_count,
                cells.spill_hxor,
                cells.spill_vxor,
            )
        })
        .collect();
    let mut boundary = Vec::new();
    let mut parts = Vec::with_capacity(done.len() + 1);
    for (overflow, part, end, sc, sh, sv) in done {
        if overflow {
            return None;
        }
        parts.push(part);
        for (j, ((c, h), v)) in sc.into_iter().zip(sh).zip(sv).enumerate() {
            let q = end + j;
            // Sum the counts, xor the slot bits.
            let sum = (count[q] & !3).wrapping_add(c & !3);
            if sum < (count[q] & !3) {
                return None;
            }
            count[q] = sum | ((count[q] ^ c) & 3);
            hxor[q] ^= h;
            vxor[q] = vxor[q].xor(v);
            boundary.push(q as u32);
        }
    }
    // The boundary cells, last: any cell that drops to one key is peeled.
    let mut cells = Cells {
        base: 0,
        count: &mut count,
        hxor: &mut hxor,
        vxor: &mut vxor,
        spill_count: Vec::new(),
        spill_hxor: Vec::new(),
        spill_vxor: Vec::new(),
    };
    let mut extra = Vec::new();
    let mut stack: Vec<u32> = boundary
        .into_iter()
        .filter(|&q| cells.count[q as usize] >> 2 == 1)
        .collect();
    while let Some(c) = stack.pop() {
        let c = c as usize;
        let count = cells.count[c];
        if count >> 2 != 1 {
            continue;
        }
        let (h, v) = (cells.hxor[c], cells.vxor[c]);
        extra.push((h, v, count & 3));
        for (slot, q) in layout.positions(h).into_iter().enumerate() {
            if cells.update(q, 4u8.wrapping_neg(), slot, h, v) >> 2 == 1 {
                stack.push(q as u32);
            }
        }
    }
    let peeled = extra.len() + parts.iter().map(|(_, s)| s.len()).sum::<usize>();
    (peeled == hashes.len()).then_some(Peeled {
        hashes,
        values,
        parts,
        extra,
    })
}

/// A table of cells the solver writes.
pub(crate) trait CellStore {
    /// Cell `c`.
    fn get(&self, c: usize) -> u64;
    /// Sets cell `c` to `v` (truncated to the cell width).
    fn set(&mut self, c: usize, v: u64);
}

/// Fills cells so that the xor of each key's three cells is `target(hash, payload)`,
/// assigning in reverse peeling order.
pub(crate) fn assign<V: Payload>(
    layout: &Layout,
    peeled: &Peeled<V>,
    target: impl Fn(u64, V) -> u64,
    cells: &mut impl CellStore,
) {
    let extra = peeled.extra.iter().rev().copied();
    let parts = peeled.parts.iter().rev().flat_map(|(at, slots)| {
        let hs = &peeled.hashes[*at..*at + slots.len()];
        let vs = &peeled.values[*at..*at + slots.len()];
        hs.iter()
            .zip(vs)
            .zip(slots)
            .rev()
            .map(|((&h, &v), &slot)| (h, v, slot))
    });
    for (h, v, slot) in extra.chain(parts) {
        let slot = usize::from(slot);
        let p = layout.positions(h);
        let mut x = target(h, v);
        for (k, &q) in p.iter().enumerate() {
            if k != slot {
                x ^= cells.get(q);
            }
        }
        cells.set(p[slot], x);
    }
}

/// Asks for huge pages (core's [`advise_huge_pages`](bloomforge_core::memory::advise_huge_pages))
/// under a zeroed `Vec` not yet touched (`vec![0; m]` maps fresh zero pages lazily): its
/// first touches then fault 2 MiB pages instead of 4 KiB ones.
fn advise_untouched<T: Copy>(v: &mut [T]) {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout; the slice covers exactly `v`'s elements
    // and borrows `v` mutably, and `advise_huge_pages` only passes the range to madvise
    // (MADV_HUGEPAGE), never reading or writing the elements.
    let region = unsafe {
        std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<std::mem::MaybeUninit<T>>(), v.len())
    };
    bloomforge_core::memory::advise_huge_pages(region);
}

/// Below this many keys construction stays on the calling thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 16;

/// The hashes of `keys` under `hash`, grouped by their top bits (a stable counting sort
/// on up to 4096 buckets, the ordering Graf & Lemire's construction uses so that the
/// three cells of consecutive keys lie close together). Hashing and partitioning run on
/// rayon's pool for large inputs: each chunk of keys is hashed and counted per bucket,
/// then hashed again and written to its place (hashing twice is cheaper than a second
/// buffer of hashes). The result is the same on any number of threads: bucket by bucket,
/// keys in input order. Repeats are kept ([`peel`] fails on them; then [`dedup_hashes`]).
/// Returns the hashes and the number of top bits they are grouped by.
pub(crate) fn hash_partitioned<K: Sync>(
    keys: &[K],
    hash: impl Fn(&K) -> u64 + Sync,
) -> Result<(Vec<u64>, u32), bloomforge_core::Error> {
    let n = keys.len();
    // About 1024 keys a bucket, at most 4096 buckets (4096 write streams stay in L2).
    let bits = (n / 1024)
        .max(2)
        .next_power_of_two()
        .trailing_zeros()
        .min(12);
    let buckets = 1usize << bits;
    let shift = 64 - bits;
    if n < PARALLEL_MIN {
        let mut out = alloc(n, 0u64)?;
        let hs: Vec<u64> = keys.iter().map(&hash).collect();
        let mut next = vec![0usize; buckets + 1];
        for &h in &hs {
            next[(h >> shift) as usize + 1] += 1;
        }
        for b in 0..buckets {
            next[b + 1] += next[b];
        }
        for &h in &hs {
            let b = (h >> shift) as usize;
            out[next[b]] = h;
            next[b] += 1;
        }
        return Ok((out, bits));
    }
    let chunk = n
        .div_ceil(4 * rayon::current_num_threads())
        .max(PARALLEL_MIN / 4);
    let mut counts: Vec<Vec<usize>> = keys
        .par_chunks(chunk)
        .map(|c| {
            let mut counts = vec![0usize; buckets];
            for k in c {
                counts[(hash(k) >> shift) as usize] += 1;
            }
            counts
        })
        .collect();
    // Where chunk c's keys of bucket b go: after every earlier bucket, and after the
    // earlier chunks' keys of bucket b.
    let mut at = 0;
    for b in 0..buckets {
        for c in counts.iter_mut() {
            let len = c[b];
            c[b] = at;
            at += len;
        }
    }
    let mut out: Vec<u64> = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| bloomforge_core::Error::AllocationFailed {
            bytes: n.saturating_mul(8),
        })?;
    bloomforge_core::memory::advise_huge_pages(out.spare_capacity_mut());
    let dst = SharedOut(out.as_mut_ptr());
    keys.par_chunks(chunk)
        .zip(counts.par_iter_mut())
        .for_each(|(c, next)| {
            for k in c {
                let h = hash(k);
                let b = (h >> shift) as usize;
                // SAFETY: `next[b]` runs over the range this chunk owns in `out`'s
                // capacity for bucket b (the prefix sums above give every (chunk, bucket)
                // pair a disjoint range of exactly its key count, all inside `0..n`), and
                // this chunk hashes the same keys to the same buckets as when it counted
                // them, so every index is in bounds and written by one thread only, once.
                unsafe { dst.at(next[b]).write(h) };
                next[b] += 1;
            }
        });
    // SAFETY: the ranges of all (chunk, bucket) pairs cover `0..n` (their lengths sum to
    // n), and each index was written exactly once above, so the first n elements are
    // initialized; n is the reserved capacity.
    unsafe { out.set_len(n) };
    Ok((out, bits))
}

/// The output buffer of [`hash_partitioned`], written at disjoint indices from many threads.
#[derive(Clone, Copy)]
struct SharedOut(*mut u64);
// SAFETY: the pointer is only used for writes to disjoint indices (see its one use), while
// the owning `Vec` outlives the parallel loop and is not otherwise accessed.
unsafe impl Send for SharedOut {}
// SAFETY: as for `Send`.
unsafe impl Sync for SharedOut {}

impl SharedOut {
    /// The pointer to element `i` (the caller checks `i` is in bounds).
    #[inline(always)]
    fn at(self, i: usize) -> *mut u64 {
        self.0.wrapping_add(i)
    }
}

/// Sorts hashes and removes repeats (the same key, or two keys of identical 64-bit hash,
/// which a membership filter cannot tell apart anyway).
pub(crate) fn dedup_hashes(mut hashes: Vec<u64>) -> Vec<u64> {
    if hashes.len() < PARALLEL_MIN {
        hashes.sort_unstable();
    } else {
        hashes.par_sort_unstable();
    }
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

/// Runs `f` on a pool of `threads` threads (rayon's global pool for `None`): the
/// builders' `threads(n)`. Results do not depend on the pool, only the time they take.
pub(crate) fn on_threads<R: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<R, crate::RetrievalError> + Send,
) -> Result<R, crate::RetrievalError> {
    match threads {
        None => f(),
        Some(0) => Err(crate::RetrievalError::InvalidParameter {
            name: "threads",
            value: 0,
            expected: "at least 1 thread",
        }),
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| crate::RetrievalError::ThreadPool {
                threads: t,
                reason: e.to_string(),
            })?
            .install(f),
    }
}

/// How many seeds a construction tries before it gives up.
pub(crate) const MAX_ATTEMPTS: u32 = 100;

/// `n` copies of `value` through core's allocator, an allocation failure typed.
pub(crate) fn alloc<T: Clone + Send + Sync>(
    n: usize,
    value: T,
) -> Result<Vec<T>, bloomforge_core::Error> {
    bloomforge_core::memory::try_vec_filled(n, value).map_err(|_| {
        bloomforge_core::Error::AllocationFailed {
            bytes: n.saturating_mul(std::mem::size_of::<T>()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Peeling in 1, 2, 3 or 7 regions (and from unordered input) solves the same system:
    /// every key's three cells xor to its target.
    #[test]
    fn regions_peel_every_key() {
        let keys: Vec<u64> = (0..300_000u64).map(mix64).collect();
        let hasher = bloomforge_core::hash::DefaultHasher::with_seed(7);
        let hash = |k: &u64| std::hash::BuildHasher::hash_one(&hasher, k);
        let (hashes, bits) = hash_partitioned(&keys, hash).unwrap();
        let values: Vec<u32> = hashes.iter().map(|&h| (h >> 40) as u32 & 0xfff).collect();
        let layout = Layout::fuse(hashes.len());
        for (regions, order_bits) in [(1, bits), (2, bits), (3, bits), (7, bits), (1, 0)] {
            let peeled =
                peel_in_regions(&layout, hashes.clone(), values.clone(), order_bits, regions)
                    .expect("300k keys peel");
            if order_bits > 0 {
                assert_eq!(peeled.parts.len(), regions);
                assert_eq!(peeled.extra.is_empty(), regions == 1);
            }
            let mut cells = vec![0u16; layout.cells()];
            let target = |h: u64, v: u32| (fingerprint_hash(h) & 0xf000) | u64::from(v);
            assign(&layout, &peeled, target, &mut cells);
            for (&h, &v) in hashes.iter().zip(&values) {
                let [a, b, c] = layout.positions(h);
                assert_eq!(cells[a] ^ cells[b] ^ cells[c], target(h, v) as u16);
            }
        }
    }

    /// A repeated hash never peels, however many regions; nor do 64 copies overflow.
    #[test]
    fn repeats_do_not_peel() {
        let mut hashes: Vec<u64> = (0..200_000u64).map(mix64).collect();
        hashes.sort_unstable();
        hashes[1000] = hashes[999];
        let layout = Layout::fuse(hashes.len());
        let units = vec![(); hashes.len()];
        for regions in [1, 2, 3] {
            assert!(peel_in_regions(&layout, hashes.clone(), units.clone(), 64, regions).is_none());
        }
        let same = vec![42u64; 100];
        let layout = Layout::fuse(100);
        assert!(peel(&layout, same, vec![(); 100], 64).is_none());
    }
}
