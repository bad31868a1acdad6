//! The scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison 2007): a stack of
//! core [`BlockedBloomFilter`] (or, for the fewest bits, [`StandardBloomFilter`]) slices
//! that grows as keys arrive, with a compound false-positive rate that stays below the
//! target however many slices are added.

use crate::error::{corrupt, Result, StreamError};
use crate::io::{le_f64, le_u32, le_u64, SinkWriter};
use bloomforge_core::format::{self, FilterKind, PersistentHasher, HEADER_LEN};
use bloomforge_core::hash::hasher_fingerprint;
use bloomforge_core::{math, BlockedBloomFilter, DefaultHasher, FilterShape, StandardBloomFilter};
use core::hash::{BuildHasher, Hash};

/// Default growth factor `s`: each slice holds twice the keys of the one before.
pub const DEFAULT_GROWTH_FACTOR: f64 = 2.0;
/// Default tightening ratio `r`: each slice's false-positive rate is 0.85 of the one
/// before.
pub const DEFAULT_TIGHTENING_RATIO: f64 = 0.85;
/// Default limit on the number of slices (at growth 2, `2^32 - 1` times the initial
/// capacity).
pub const DEFAULT_MAX_SLICES: u32 = 32;
/// The largest slice limit accepted.
pub const MAX_SLICES_LIMIT: u32 = 64;
/// Initial capacity of a filter made by [`FromIterator`].
pub const DEFAULT_INITIAL_CAPACITY: u64 = 1024;

/// Size of the parameter block that starts the serialized payload.
const PARAMS_LEN: usize = 40;

/// The parameters that define a stack: two stacks with equal parameters (and hashers)
/// have slices of equal shapes and can be united.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Params {
    initial_capacity: u64,
    false_pos: f64,
    growth: f64,
    tightening: f64,
    max_slices: u32,
    /// Stored in bits 16..24 of the slice-limit word of the parameter block.
    layout: SliceLayout,
}

impl Params {
    fn validate(&self) -> Result<()> {
        if !(self.false_pos > 0.0 && self.false_pos < 1.0) {
            return Err(bloomforge_core::Error::InvalidFalsePositiveRate(self.false_pos).into());
        }
        if self.initial_capacity == 0 {
            return Err(bloomforge_core::Error::ZeroItems.into());
        }
        if !(1.0..=16.0).contains(&self.growth) {
            return Err(StreamError::InvalidParameter {
                name: "growth_factor",
                value: self.growth,
                reason: "must be in [1, 16]",
            });
        }
        if !(self.tightening > 0.0 && self.tightening < 1.0) {
            return Err(StreamError::InvalidParameter {
                name: "tightening_ratio",
                value: self.tightening,
                reason: "must be in (0, 1)",
            });
        }
        if !(1..=MAX_SLICES_LIMIT).contains(&self.max_slices) {
            return Err(StreamError::InvalidParameter {
                name: "max_slices",
                value: f64::from(self.max_slices),
                reason: "must be in 1..=64",
            });
        }
        Ok(())
    }

    /// Capacity of slice `i`: `ceil(n0 s^i)`.
    fn slice_capacity(&self, i: u32) -> Result<u64> {
        let c = (self.initial_capacity as f64 * self.growth.powi(i as i32)).ceil();
        if c.is_nan() || c >= (1u64 << 62) as f64 {
            return Err(bloomforge_core::Error::TooLarge {
                requested: u64::MAX,
                max: 1 << 62,
            }
            .into());
        }
        Ok(c as u64)
    }

    /// False-positive rate of slice `i`: `P (1 - r) r^i`.
    fn slice_false_pos(&self, i: u32) -> f64 {
        self.false_pos * (1.0 - self.tightening) * self.tightening.powi(i as i32)
    }
}

/// A slice for `capacity` keys at rate `p`: core's layout-exact blocked sizing
/// ([`BlockedBloomFilter::with_false_pos`], whose `(bits per key, k)` is
/// [`math::blocked512_size`]), with one correction. Core searches `k` within 3 of
/// `c ln 2`, the standard filter's optimum; a 512-bit block saturates, so below rates of
/// about 1e-4 (slices far down a stack, or small targets) the best `k` lies under that
/// window and core's answer sits on the window's lower edge. From core's `k` the search
/// goes on downward while one fewer probe needs fewer bits (the rate is unimodal in `k`),
/// each candidate sized with core's own formula ([`math::blocked512_fp`] through
/// [`math::solve_bits_per_key`]); blocks are rounded up as core rounds them. Where core's
/// `k` is already best (every slice of the default stack up to 10^7 keys at 1 %) the
/// slice is exactly core's; at rates of 1e-5..1e-7 a slice takes 1-4 % fewer bits (a
/// stack at 0.1 %, or RedisBloom's tightening 0.5, 1.0-1.2 % fewer in all).
fn blocked_slice<S: BuildHasher + Clone>(
    p: f64,
    capacity: u64,
    hasher: S,
) -> Result<BlockedBloomFilter<S>> {
    let core_sized = BlockedBloomFilter::with_false_pos(p)
        .hasher(hasher.clone())
        .expected_items(capacity)?;
    let (c0, k0) = math::blocked512_size(p);
    let solve = |k: u32| {
        math::solve_bits_per_key(p, math::std_bits_per_key(p), |c| math::blocked512_fp(c, k))
    };
    let (mut c, mut k) = (c0, k0);
    while k > 1 {
        let fewer = solve(k - 1);
        // The solver's targets below what 256 bits a key reach come back as 256: never
        // better than a reachable size.
        if fewer < c && math::blocked512_fp(fewer, k - 1) <= p {
            (c, k) = (fewer, k - 1);
        } else {
            break;
        }
    }
    if k == k0 {
        return Ok(core_sized);
    }
    let blocks = (capacity as f64 * c / 512.0).ceil().max(1.0) as u64;
    Ok(BlockedBloomFilter::with_num_bits(blocks * 512)
        .hasher(hasher)
        .hashes(k)?)
}

/// A standard slice needs at least `STANDARD_MIN_BITS_RATE / p` bits to hold rate `p`.
///
/// Core's standard filter derives its `k` positions from one hash by double hashing (a
/// start and a step, [`bloomforge_core::Probes`]); a key whose step lands near 0 or near
/// `m / j` puts its probes on few distinct bits, which adds about `0.2-0.3 / m` to the
/// rate whatever `k` (measured over 40 seeds and 10^6 queries each, full filters:
/// 544 bits at 1.5e-3, `k` = 9: 1.98e-3 against 1.43e-3 from the fill; 2 279 bits at
/// 1.08e-3: 1.12x; 9 544 bits at 7.8e-4: 1.04x; 23 144 bits at 1.5e-5, `k` = 16: 1.56x).
/// With at least `30 / p` bits the excess is at most about 1 % of the rate. Raising a
/// smaller slice to that size would cost up to 100x its bits at low rates, so such a
/// slice (a small first slice, a rate far down a stack) is a blocked one instead: its
/// probes stay in one block and hold their theory.
const STANDARD_MIN_BITS_RATE: f64 = 30.0;

/// The layout of a slice for `capacity` keys at rate `p` in a stack of `layout`, with its
/// standard sizing: [`math::std_size`] (the fewest bits with the best integer `k`) where
/// that holds the rate, else blocked (see [`STANDARD_MIN_BITS_RATE`]).
fn slice_layout(layout: SliceLayout, p: f64, capacity: u64) -> (SliceLayout, u64, u32) {
    if layout == SliceLayout::Blocked {
        return (SliceLayout::Blocked, 0, 0);
    }
    let (m, k) = math::std_size(capacity, p);
    if m as f64 >= STANDARD_MIN_BITS_RATE / p {
        (SliceLayout::Standard, m, k)
    } else {
        (SliceLayout::Blocked, m, k)
    }
}

/// A slice for `capacity` keys at rate `p` in a stack of `layout`: [`blocked_slice`], or
/// core's standard sizing where [`slice_layout`] says it holds.
fn slice_filter<S: BuildHasher + Clone>(
    layout: SliceLayout,
    p: f64,
    capacity: u64,
    hasher: S,
) -> Result<SliceFilter<S>> {
    Ok(match slice_layout(layout, p, capacity) {
        (SliceLayout::Standard, m, k) => SliceFilter::Standard(
            StandardBloomFilter::with_num_bits(m)
                .hasher(hasher)
                .hashes(k)?,
        ),
        _ => SliceFilter::Blocked(blocked_slice(p, capacity, hasher)?),
    })
}

/// How a [`ScalableBloomFilter`]'s slices lay out their bits: the stack's one trade of
/// speed for memory. Both are core's filters, with core's hashing, probes and format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SliceLayout {
    /// [`BlockedBloomFilter`]: a key's bits in one 512-bit block, so a query costs one
    /// cache line a slice (the default; at 10^7 keys, against `growable-bloom-filter`:
    /// members 6-7x faster, non-members 2.3-2.5x, inserts 2.6-3.2x, non-member batches
    /// about 10x), at 7-13 % more bits than the standard minimum for the default stack's
    /// rates (block loads vary).
    #[default]
    Blocked,
    /// [`StandardBloomFilter`]: a key's `k` bits anywhere in the slice, the fewest bits a
    /// Bloom filter needs for the rate (less memory than `growable-bloom-filter` at the
    /// same guarantee), at up to `k` cache lines a slice and query. A slice too small for
    /// core's standard filter to hold its rate (fewer than `30 / p` bits: a small first
    /// slice, or a rate far down the stack; its double-hashed probes collide there) is a
    /// blocked one instead, so the stack keeps its bound.
    Standard,
}

/// One slice of a [`ScalableBloomFilter`]: core's filter in the stack's [`SliceLayout`]
/// (one variant a layout; more may come). A [`SliceLayout::Standard`] stack has blocked
/// slices where a standard one would be too small to hold its rate.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SliceFilter<S = DefaultHasher> {
    /// A [`SliceLayout::Blocked`] slice.
    Blocked(BlockedBloomFilter<S>),
    /// A [`SliceLayout::Standard`] slice.
    Standard(StandardBloomFilter<S>),
}

/// `$body` with `$f` bound to the slice's filter, whichever its layout.
macro_rules! on_slice {
    ($slice:expr, $f:ident => $body:expr) => {
        match $slice {
            SliceFilter::Blocked($f) => $body,
            SliceFilter::Standard($f) => $body,
        }
    };
}

impl<S> SliceFilter<S> {
    /// The slice's layout.
    pub fn layout(&self) -> SliceLayout {
        match self {
            SliceFilter::Blocked(_) => SliceLayout::Blocked,
            SliceFilter::Standard(_) => SliceLayout::Standard,
        }
    }
}

impl<S: BuildHasher> SliceFilter<S> {
    /// Bits in the slice.
    pub fn num_bits(&self) -> u64 {
        on_slice!(self, f => f.num_bits())
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        on_slice!(self, f => f.num_hashes())
    }

    /// Bytes of the slice's bit array (whole 64-bit words in both layouts).
    pub fn memory_bytes(&self) -> u64 {
        self.num_bits().div_ceil(64) * 8
    }

    /// Bits set.
    pub fn count_ones(&self) -> u64 {
        on_slice!(self, f => f.count_ones())
    }

    /// The slice's false-positive rate from its actual fill.
    pub fn expected_false_pos(&self) -> f64 {
        on_slice!(self, f => f.expected_false_pos())
    }

    /// Whether the slice may hold the key of 64-bit hash `hash`.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        on_slice!(self, f => f.contains_hash(hash))
    }

    /// The slice's shape (bits, probes, hasher).
    pub fn shape(&self) -> FilterShape {
        on_slice!(self, f => f.shape())
    }

    #[inline]
    fn insert_hash(&mut self, hash: u64) {
        on_slice!(self, f => {
            f.insert_hash(hash);
        })
    }

    fn clear(&mut self) {
        on_slice!(self, f => f.clear())
    }

    /// The bitwise OR of two slices of one shape (the stacks' parameters, layout
    /// included, were checked equal first).
    fn union(&mut self, other: &Self) -> Result<()> {
        match (self, other) {
            (SliceFilter::Blocked(a), SliceFilter::Blocked(b)) => a.union(b)?,
            (SliceFilter::Standard(a), SliceFilter::Standard(b)) => a.union(b)?,
            (a, b) => {
                return Err(bloomforge_core::Error::IncompatibleFilters {
                    left: a.shape(),
                    right: b.shape(),
                }
                .into())
            }
        }
        Ok(())
    }
}

impl<S: PersistentHasher> SliceFilter<S> {
    fn write_to<W: std::io::Write>(&self, writer: W) -> bloomforge_core::Result<()> {
        on_slice!(self, f => f.write_to(writer))
    }
}

/// Probes of each standard slice whose lines a single query of the stack prefetches
/// before it tests any slice, so their misses overlap across slices. Measured at 10^7
/// keys (14 slices, 36 MB, on an AMD EPYC, 2 cores): non-members 649 ns a query with core's
/// size rule and no prefetch, 325-348 with early exit and 1-2 probes prefetched,
/// 262-295 with 3, 269-293 with 4-6 (members 160-190 from 2 on). A blocked slice gains
/// nothing from it (its one-line probe has no branch, so the loop over slices already
/// runs ahead: 193-200 ns with every slice's block prefetched first, 182-193 without).
const STACK_PREFETCH_PROBES: u32 = 3;
/// Probes of each key a standard slice's batch query prefetches (1, 2 and 3 within
/// noise, 182-199 ns a non-member; all `k` 244).
const STACK_BATCH_PROBES: u32 = 1;
/// Keys ahead of the one queried whose probes a standard slice's batch query prefetches
/// (8, 16 and 32 within noise).
const STACK_BATCH_AHEAD: usize = 16;

/// The queries of a slice within its stack. A standard slice is queried with an early
/// exit whatever its size: core's size rule (all `k` probes without a branch up to 16
/// MiB) assumes the array stays in cache, which a stack of them does not. (Where the
/// whole stack is cache-resident, 2.4 MB at 10^6 keys, core's rule is no better either,
/// measured: non-members 87-89 ns against 95-96, members 39 against 35, URL keys 178
/// against 112.)
impl<S: BuildHasher> SliceFilter<S> {
    /// Prefetches what a query of `hash` reads first: nothing for a blocked slice (one
    /// line, read at once), the first probes' lines of a standard one.
    #[inline]
    fn prefetch_in_stack(&self, hash: u64) {
        if let SliceFilter::Standard(f) = self {
            f.prefetch_hash(hash, STACK_PREFETCH_PROBES);
        }
    }

    /// [`contains_hash`](Self::contains_hash), early exit on a standard slice.
    #[inline]
    fn contains_in_stack(&self, hash: u64) -> bool {
        match self {
            SliceFilter::Blocked(f) => f.contains_hash(hash),
            SliceFilter::Standard(f) => f.contains_hash_early_exit(hash),
        }
    }

    /// The batch query within a stack: core's pipelined batch on a blocked slice; on a
    /// standard one each key's first probes prefetched [`STACK_BATCH_AHEAD`] keys ahead,
    /// then an early-exit query.
    fn contains_in_stack_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        match self {
            SliceFilter::Blocked(f) => f.contains_hash_batch(hashes, out)?,
            SliceFilter::Standard(f) => {
                debug_assert_eq!(hashes.len(), out.len());
                for &h in hashes.iter().take(STACK_BATCH_AHEAD) {
                    f.prefetch_hash(h, STACK_BATCH_PROBES);
                }
                for (i, (&h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
                    if let Some(&next) = hashes.get(i + STACK_BATCH_AHEAD) {
                        f.prefetch_hash(next, STACK_BATCH_PROBES);
                    }
                    *o = f.contains_hash_early_exit(h);
                }
            }
        }
        Ok(())
    }
}

/// The stack layout's code in the serialized parameter block.
fn layout_code(layout: SliceLayout) -> u32 {
    match layout {
        SliceLayout::Blocked => 0,
        SliceLayout::Standard => 1,
    }
}

/// Equal when both slices have one layout and equal bits and shapes.
impl<S: BuildHasher> PartialEq for SliceFilter<S> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SliceFilter::Blocked(a), SliceFilter::Blocked(b)) => a == b,
            (SliceFilter::Standard(a), SliceFilter::Standard(b)) => a == b,
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
struct Slice<S> {
    filter: SliceFilter<S>,
    capacity: u64,
    len: u64,
}

/// A Bloom filter for a set whose size is not known in advance: a stack of core
/// [`BlockedBloomFilter`] slices (or [`StandardBloomFilter`] ones: [`SliceLayout`]).
/// Slice `i` is sized for `n0 s^i` keys at false-positive rate `P0 r^i` with
/// `P0 = P (1 - r)`, so the compound rate `1 - Π (1 - P0 r^i) <= Σ P0 r^i < P` however
/// many slices are added. A key is inserted into the newest slice, which grows the stack
/// by one slice once it holds its capacity; a query checks the newest (largest) slice
/// first.
///
/// ```
/// use bloomforge_stream::{ScalableBloomFilter, SliceLayout};
///
/// let mut f = ScalableBloomFilter::new(1000, 0.01)?;
/// for i in 0..100_000u64 {
///     f.insert(&i)?;
/// }
/// assert!((0..100_000u64).all(|i| f.contains(&i)));
/// assert!(f.num_slices() > 1);
/// assert!(f.false_pos_now() < 0.01);
///
/// // The fewest bits for the same guarantee, at more cache misses a query:
/// let mut small = ScalableBloomFilter::builder()
///     .expected_items(1000)
///     .false_pos(0.01)
///     .layout(SliceLayout::Standard)
///     .build()?;
/// small.try_extend(0..100_000u64)?;
/// assert!((0..100_000u64).all(|i| small.contains(&i)));
/// assert!(small.memory_bytes() < f.memory_bytes());
/// # Ok::<(), bloomforge_stream::StreamError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ScalableBloomFilter<S = DefaultHasher> {
    slices: Vec<Slice<S>>,
    params: Params,
    hasher: S,
    len: u64,
}

/// Builder of a [`ScalableBloomFilter`]:
/// `ScalableBloomFilter::builder().expected_items(n0).false_pos(p).growth_factor(2.0)
/// .tightening_ratio(0.85).max_slices(32).seed(s).build()?`.
#[must_use = "a builder does nothing until finished with .build()"]
#[derive(Clone, Debug)]
pub struct ScalableBloomFilterBuilder<S = DefaultHasher> {
    items: Option<u64>,
    params: Params,
    hasher: S,
}

impl Default for ScalableBloomFilterBuilder {
    fn default() -> Self {
        Self {
            items: None,
            params: Params {
                initial_capacity: 0,
                false_pos: bloomforge_core::builder::DEFAULT_FALSE_POS,
                growth: DEFAULT_GROWTH_FACTOR,
                tightening: DEFAULT_TIGHTENING_RATIO,
                max_slices: DEFAULT_MAX_SLICES,
                layout: SliceLayout::Blocked,
            },
            hasher: DefaultHasher::default(),
        }
    }
}

impl ScalableBloomFilterBuilder {
    /// Seeds the default hasher. Filters must share a seed to be united.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<S: BuildHasher + Clone> ScalableBloomFilterBuilder<S> {
    /// The initial capacity `n0`: keys the first slice holds (required).
    pub fn expected_items(self, items: u64) -> Self {
        Self {
            items: Some(items),
            ..self
        }
    }

    /// The target compound false-positive rate `P`, in (0, 1) (default 0.01).
    pub fn false_pos(mut self, fp: f64) -> Self {
        self.params.false_pos = fp;
        self
    }

    /// The growth factor `s` in [1, 16] (default 2): slice `i` holds `n0 s^i` keys.
    pub fn growth_factor(mut self, s: f64) -> Self {
        self.params.growth = s;
        self
    }

    /// The tightening ratio `r` in (0, 1) (default 0.85): slice `i` is built for rate
    /// `P (1 - r) r^i`.
    pub fn tightening_ratio(mut self, r: f64) -> Self {
        self.params.tightening = r;
        self
    }

    /// The most slices the stack may have, in 1..=64 (default 32); an insert that needs
    /// one more fails with [`StreamError::TooManySlices`].
    pub fn max_slices(mut self, n: u32) -> Self {
        self.params.max_slices = n;
        self
    }

    /// How the slices lay out their bits (default [`SliceLayout::Blocked`], the fastest;
    /// [`SliceLayout::Standard`] takes the fewest bits).
    pub fn layout(mut self, layout: SliceLayout) -> Self {
        self.params.layout = layout;
        self
    }

    /// Uses `hasher` instead of the default (e.g. a keyed hasher for untrusted keys).
    pub fn hasher<S2: BuildHasher + Clone>(self, hasher: S2) -> ScalableBloomFilterBuilder<S2> {
        ScalableBloomFilterBuilder {
            items: self.items,
            params: self.params,
            hasher,
        }
    }

    /// Builds the filter with its first slice.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::ZeroItems`] without `expected_items` (or 0),
    /// [`bloomforge_core::Error::InvalidFalsePositiveRate`] unless `0 < false_pos < 1`,
    /// [`StreamError::InvalidParameter`] for the growth, tightening or slice limit, and
    /// the first slice's sizing errors, all wrapped in [`StreamError::Core`] where core's.
    pub fn build(self) -> Result<ScalableBloomFilter<S>> {
        let mut params = self.params;
        params.initial_capacity = self.items.unwrap_or(0);
        params.validate()?;
        let mut f = ScalableBloomFilter {
            slices: Vec::new(),
            params,
            hasher: self.hasher,
            len: 0,
        };
        f.push_slice()?;
        Ok(f)
    }
}

impl ScalableBloomFilter {
    /// A filter whose first slice holds `initial_capacity` keys, with compound
    /// false-positive rate at most `false_pos`, growth 2, tightening 0.85, at most 32
    /// slices and the default hasher: the same as
    /// `Self::builder().expected_items(initial_capacity).false_pos(false_pos).build()`.
    ///
    /// # Errors
    /// As [`ScalableBloomFilterBuilder::build`].
    pub fn new(initial_capacity: u64, false_pos: f64) -> Result<Self> {
        Self::builder()
            .expected_items(initial_capacity)
            .false_pos(false_pos)
            .build()
    }

    /// The builder (growth factor, tightening ratio, slice limit, slice layout, hasher).
    pub fn builder() -> ScalableBloomFilterBuilder {
        ScalableBloomFilterBuilder::default()
    }

    /// Reads a stack serialized with an unkeyed hasher (its seed is restored).
    ///
    /// # Errors
    /// [`bloomforge_core::Error::Corrupt`] (in [`StreamError::Core`]) for truncated,
    /// corrupted or hostile bytes, [`bloomforge_core::Error::HasherMismatch`] for a keyed
    /// filter (use [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized stack from `reader`.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or [`bloomforge_core::Error::Io`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

impl<S: BuildHasher + Clone> ScalableBloomFilter<S> {
    fn push_slice(&mut self) -> Result<()> {
        let i = self.slices.len() as u32;
        if i >= self.params.max_slices {
            return Err(StreamError::TooManySlices {
                max_slices: self.params.max_slices,
                len: self.len,
                capacity: self.capacity(),
            });
        }
        let capacity = self.params.slice_capacity(i)?;
        let filter = slice_filter(
            self.params.layout,
            self.params.slice_false_pos(i),
            capacity,
            self.hasher.clone(),
        )?;
        self.slices.push(Slice {
            filter,
            capacity,
            len: 0,
        });
        Ok(())
    }

    /// Inserts `key`. `Ok(true)` if it may already have been present (then nothing
    /// changes: it is not counted twice), `Ok(false)` if it was certainly new.
    ///
    /// # Errors
    /// [`StreamError::TooManySlices`] when the newest slice is full and the stack is at its
    /// slice limit; a core error if the next slice cannot be allocated. The filter is
    /// unchanged then.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> Result<bool> {
        self.insert_hash(self.hasher.hash_one(key))
    }

    /// [`insert`](Self::insert) by a precomputed 64-bit hash (of this filter's hasher).
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn insert_hash(&mut self, hash: u64) -> Result<bool> {
        if self.contains_hash(hash) {
            return Ok(true);
        }
        self.insert_new(hash)?;
        Ok(false)
    }

    /// Inserts a hash no slice holds into the newest slice, adding a slice first if the
    /// newest is full.
    fn insert_new(&mut self, hash: u64) -> Result<()> {
        // `slices` is never empty: the builder and the decoder create the first slice.
        let full = self.slices.last().is_none_or(|s| s.len >= s.capacity);
        if full {
            self.push_slice()?;
        }
        if let Some(newest) = self.slices.last_mut() {
            newest.filter.insert_hash(hash);
            newest.len += 1;
        }
        self.len += 1;
        Ok(())
    }

    /// Inserts every key of `keys` in order; returns how many were certainly new. The
    /// same as inserting them one by one, faster: the slices the batch cannot change
    /// (all but the newest) are queried for every key first with a pipelined batch probe
    /// (core's for blocked slices; for standard ones each key's first probe prefetched
    /// keys ahead, then an early-exit query), so their cache misses overlap; then each
    /// key they do not hold is checked against the newest slices and inserted, in order.
    ///
    /// # Errors
    /// As [`insert`](Self::insert). A Bloom filter cannot delete, so here (unlike the
    /// single insert) the keys before the one that failed stay inserted; the error says
    /// which one ([`StreamError::BatchStopped`]).
    pub fn insert_batch<T: Hash>(&mut self, keys: &[T]) -> Result<u64> {
        let hashes: Vec<u64> = keys.iter().map(|k| self.hasher.hash_one(k)).collect();
        self.insert_hash_batch(&hashes)
    }

    /// [`insert_batch`](Self::insert_batch) for precomputed hashes.
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) -> Result<u64> {
        // Slices `..fixed` stay as they are during the batch: one pipelined query each.
        let fixed = self.slices.len().saturating_sub(1);
        let mut in_fixed = vec![false; hashes.len()];
        let mut hit = vec![false; hashes.len()];
        for slice in &self.slices[..fixed] {
            slice.filter.contains_in_stack_batch(hashes, &mut hit)?;
            for (a, &b) in in_fixed.iter_mut().zip(&hit) {
                *a |= b;
            }
        }
        let mut new = 0;
        for (index, &h) in hashes.iter().enumerate() {
            if in_fixed[index]
                || self.slices[fixed..]
                    .iter()
                    .any(|s| s.filter.contains_in_stack(h))
            {
                continue;
            }
            match self.insert_new(h) {
                Ok(()) => new += 1,
                Err(e) => {
                    return Err(StreamError::BatchStopped {
                        index,
                        source: Box::new(e),
                    })
                }
            }
        }
        Ok(new)
    }

    /// Inserts every key; stops at the first that fails (the keys before it stay
    /// inserted).
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn try_extend<T: Hash, I: IntoIterator<Item = T>>(&mut self, iter: I) -> Result<()> {
        // Through the pipelined batch insert, a chunk at a time; it stops where a single
        // insert would, with the keys before it inserted.
        bloomforge_core::batch::try_for_each_chunk(iter, |chunk| match self.insert_batch(chunk) {
            Ok(_) => Ok(()),
            Err(StreamError::BatchStopped { source, .. }) => Err(*source),
            Err(e) => Err(e),
        })
    }

    /// Whether `key` may be in the filter (`false`: certainly not). Checks the newest
    /// slice first: it is the largest and holds most keys.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// [`contains`](Self::contains) by a precomputed 64-bit hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        if self.params.layout == SliceLayout::Standard {
            for s in self.slices.iter().rev() {
                s.filter.prefetch_in_stack(hash);
            }
        }
        self.slices
            .iter()
            .rev()
            .any(|s| s.filter.contains_in_stack(hash))
    }

    /// Queries every key of `keys` into `out[i]`: hashes once, then each slice (newest
    /// first) answers the keys still undecided with a pipelined batch probe (core's for
    /// blocked slices, prefetch-ahead and early exit for standard ones).
    ///
    /// # Errors
    /// [`bloomforge_core::Error::LengthMismatch`] (and `out` untouched) unless
    /// `keys.len() == out.len()`.
    pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
        if keys.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: keys.len(),
                out: out.len(),
            }
            .into());
        }
        let hashes: Vec<u64> = keys.iter().map(|k| self.hasher.hash_one(k)).collect();
        self.contains_hash_batch(&hashes, out)
    }

    /// [`contains_batch`](Self::contains_batch) for precomputed hashes.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::LengthMismatch`] (and `out` untouched) unless
    /// `hashes.len() == out.len()`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        if hashes.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: hashes.len(),
                out: out.len(),
            }
            .into());
        }
        // Slice by slice, not in one pass. The one-pass form (for each key, its block
        // prefetched in every slice some keys ahead, then the slices probed newest first, a
        // ring as in core's `raw::contains_batch`) is not faster. Measured at 10^7 keys (14
        // slices, 40.5 MB), batches of 10^6, median of 7, three runs on an AMD EPYC,
        // AVX-512, 2 cores: negatives 101 / 91 / 123 ns a key here against 99 / 96 / 130
        // for the best one-pass variant (16 keys ahead; 8 and 32 ahead, or prefetching only
        // slices of 1 MiB and more, are no better), and positives 33 / 32 / 39 against 43 /
        // 46 / 54 (34-37 when only slices of 1 MiB and more are prefetched); at 10^6 keys
        // (10 slices) 59 vs 56 ns negative and 12 vs 13-16 ns positive. A negative costs
        // one miss per slice in both forms, and both keep the misses overlapped; most
        // positives are found in the newest slices (the newest two hold 59 % of the keys
        // there, a full newest slice half), where the one-pass form has already spent
        // line-fill buffers on every other slice's block, while this form goes on only with
        // the keys still undecided. (One pass without prefetching: 419 ns negative, 155
        // positive.)
        let mut pending = hashes.to_vec();
        let mut index: Vec<u32> = (0..hashes.len() as u32).collect();
        out.fill(false);
        let mut hit = vec![false; pending.len()];
        for slice in self.slices.iter().rev() {
            if pending.is_empty() {
                break;
            }
            hit.truncate(pending.len());
            slice.filter.contains_in_stack_batch(&pending, &mut hit)?;
            let mut keep = 0;
            for j in 0..pending.len() {
                if hit[j] {
                    out[index[j] as usize] = true;
                } else {
                    pending[keep] = pending[j];
                    index[keep] = index[j];
                    keep += 1;
                }
            }
            pending.truncate(keep);
            index.truncate(keep);
        }
        Ok(())
    }

    /// Estimated number of distinct keys inserted: the inserts that were not reported
    /// "may be present". It is an estimate, not a count (hence not `len`, the workspace
    /// convention for exact counts): a key that was a false positive when inserted is not
    /// counted (an undercount of about the filter's false-positive rate times the keys),
    /// a repeated key is counted once, and after a [`union`](Self::union) it is the sum of
    /// both sides, so keys held by both count twice (an overcount). It is also what the
    /// slices' growth follows and what the file format stores.
    pub fn estimated_len(&self) -> f64 {
        self.len as f64
    }

    /// The former name of [`estimated_len`](Self::estimated_len), as an integer: an
    /// estimate, not an exact count, despite the name.
    #[deprecated(note = "an estimate, not a count: use `estimated_len`")]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no key was inserted (`estimated_len() == 0`: exact, since the first insert
    /// into an empty filter is never a false positive).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keys the present slices hold at their design rates (`Σ n0 s^i`); the next insert
    /// past it adds a slice.
    pub fn capacity(&self) -> u64 {
        self.slices.iter().map(|s| s.capacity).sum()
    }

    /// The compound false-positive rate for the current contents: `1 - Π (1 - f_i)`,
    /// with `f_i` each slice's rate from its actual fill
    /// ([`SliceFilter::expected_false_pos`]). Costs one pass over the slices.
    pub fn false_pos_now(&self) -> f64 {
        1.0 - self
            .slices
            .iter()
            .map(|s| 1.0 - s.filter.expected_false_pos())
            .product::<f64>()
    }

    /// The same as [`false_pos_now`](Self::false_pos_now) (the name every filter of the
    /// workspace offers).
    pub fn expected_false_pos(&self) -> f64 {
        self.false_pos_now()
    }

    /// The target compound false-positive rate `P`.
    pub fn target_false_pos(&self) -> f64 {
        self.params.false_pos
    }

    /// Number of slices.
    pub fn num_slices(&self) -> usize {
        self.slices.len()
    }

    /// How the slices lay out their bits.
    pub fn layout(&self) -> SliceLayout {
        self.params.layout
    }

    /// The slices, oldest first.
    pub fn slices(&self) -> impl ExactSizeIterator<Item = &SliceFilter<S>> + '_ {
        self.slices.iter().map(|s| &s.filter)
    }

    /// The slices, oldest first, each with the keys inserted into it and the keys it is
    /// sized for (its capacity).
    pub fn slices_with_len(
        &self,
    ) -> impl ExactSizeIterator<Item = (&SliceFilter<S>, u64, u64)> + '_ {
        self.slices.iter().map(|s| (&s.filter, s.len, s.capacity))
    }

    /// Bytes the slices' bit arrays occupy.
    pub fn memory_bytes(&self) -> u64 {
        self.slices.iter().map(|s| s.filter.memory_bytes()).sum()
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Removes every key and every slice but the first (cleared).
    pub fn clear(&mut self) {
        self.slices.truncate(1);
        for s in &mut self.slices {
            s.filter.clear();
            s.len = 0;
        }
        self.len = 0;
    }

    fn check_compatible(&self, other: &Self) -> Result<()> {
        let (a, b) = (&self.params, &other.params);
        let diff = |parameter: &'static str, l: String, r: String| {
            Err(StreamError::Incompatible {
                parameter,
                left: l,
                right: r,
            })
        };
        if a.initial_capacity != b.initial_capacity {
            return diff(
                "initial capacity",
                a.initial_capacity.to_string(),
                b.initial_capacity.to_string(),
            );
        }
        if a.false_pos != b.false_pos {
            return diff(
                "false_pos",
                a.false_pos.to_string(),
                b.false_pos.to_string(),
            );
        }
        if a.growth != b.growth {
            return diff("growth factor", a.growth.to_string(), b.growth.to_string());
        }
        if a.tightening != b.tightening {
            return diff(
                "tightening ratio",
                a.tightening.to_string(),
                b.tightening.to_string(),
            );
        }
        if a.layout != b.layout {
            return diff(
                "slice layout",
                format!("{:?}", a.layout),
                format!("{:?}", b.layout),
            );
        }
        if a.max_slices != b.max_slices {
            return diff(
                "max_slices",
                a.max_slices.to_string(),
                b.max_slices.to_string(),
            );
        }
        let (l, r) = (
            hasher_fingerprint(&self.hasher),
            hasher_fingerprint(&other.hasher),
        );
        if l != r {
            return diff("hasher", format!("{l:#018x}"), format!("{r:#018x}"));
        }
        Ok(())
    }

    /// Adds every key of `other`: slice `i` of `self` becomes the bitwise OR of both
    /// slices `i`, and the slices only `other` has are appended. Both stacks must have
    /// been built with the same parameters and hasher (their slices `i` then have the
    /// same shape).
    ///
    /// A united slice may hold more keys than its capacity (up to both sides' keys), so
    /// its rate can exceed its design point: [`false_pos_now`](Self::false_pos_now)
    /// reports the actual compound rate; new keys go to a fresh slice.
    ///
    /// # Errors
    /// [`StreamError::Incompatible`] naming the parameter that differs (and `self`
    /// unchanged).
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        // Equal parameters give equal slice shapes: check them all before changing any.
        for (a, b) in self.slices.iter().zip(&other.slices) {
            if a.filter.layout() != b.filter.layout() || a.filter.shape() != b.filter.shape() {
                return Err(bloomforge_core::Error::IncompatibleFilters {
                    left: a.filter.shape(),
                    right: b.filter.shape(),
                }
                .into());
            }
        }
        for (a, b) in self.slices.iter_mut().zip(&other.slices) {
            a.filter.union(&b.filter)?;
            a.len += b.len;
        }
        let have = self.slices.len();
        self.slices.extend(other.slices.iter().skip(have).cloned());
        self.len += other.len;
        Ok(())
    }
}

impl<S: PersistentHasher + Clone> ScalableBloomFilter<S> {
    /// Serializes the whole stack in the format of [`bloomforge_core::format`] (kind
    /// [`FilterKind::Scalable`]): the header, then a parameter block (initial capacity,
    /// `P`, `s`, `r`, slice limit with the [`SliceLayout`] in bits 16..24 of its word,
    /// slice count) and each slice as its count of keys, its length and its own
    /// serialized core filter.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.payload_len() as usize);
        // Writing into a `Vec` cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    fn payload_len(&self) -> u64 {
        PARAMS_LEN as u64
            + self
                .slices
                .iter()
                .map(|s| 16 + HEADER_LEN as u64 + s.filter.memory_bytes())
                .sum::<u64>()
    }

    /// Writes the bytes of [`to_bytes`](Self::to_bytes) to `writer`, streamed (no copy
    /// of the slices is made).
    ///
    /// # Errors
    /// [`bloomforge_core::Error::Io`] if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let p = &self.params;
        let mut head = Vec::with_capacity(PARAMS_LEN);
        head.extend_from_slice(&p.initial_capacity.to_le_bytes());
        head.extend_from_slice(&p.false_pos.to_bits().to_le_bytes());
        head.extend_from_slice(&p.growth.to_bits().to_le_bytes());
        head.extend_from_slice(&p.tightening.to_bits().to_le_bytes());
        // The slice limit (at most 64) shares its word with the layout, in bits 16..24
        // (0 for blocked stacks, so their bytes are those of earlier versions; a reader
        // without layouts refuses a standard stack as out of range).
        head.extend_from_slice(&(p.max_slices | (layout_code(p.layout) << 16)).to_le_bytes());
        head.extend_from_slice(&(self.slices.len() as u32).to_le_bytes());
        let bits = self.slices.iter().map(|s| s.filter.num_bits()).sum();
        format::encode_to(
            writer,
            FilterKind::Scalable,
            &self.hasher,
            self.slices.len() as u32,
            bits,
            self.len,
            self.payload_len(),
            |sink| {
                sink(&head);
                for s in &self.slices {
                    sink(&s.len.to_le_bytes());
                    sink(&(HEADER_LEN as u64 + s.filter.memory_bytes()).to_le_bytes());
                    // A sink cannot fail; the slice streams itself through it.
                    let _ = s.filter.write_to(SinkWriter(&mut *sink));
                }
            },
        )?;
        Ok(())
    }

    /// Reads a stack with the caller's hasher (needed for keyed hashing, whose key is
    /// never stored).
    ///
    /// # Errors
    /// As [`from_bytes`](ScalableBloomFilter::from_bytes).
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
        Self::decode(bytes, Some(hasher))
    }

    fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
        let (header, payload, hasher) = format::decode(bytes, FilterKind::Scalable, hasher)?;
        if payload.len() < PARAMS_LEN {
            return Err(corrupt(
                "scalable filter: payload shorter than its parameters",
            ));
        }
        let params = Params {
            initial_capacity: le_u64(payload, 0),
            false_pos: le_f64(payload, 8),
            growth: le_f64(payload, 16),
            tightening: le_f64(payload, 24),
            max_slices: le_u32(payload, 32) & 0xffff,
            layout: match le_u32(payload, 32) >> 16 {
                0 => SliceLayout::Blocked,
                1 => SliceLayout::Standard,
                _ => return Err(corrupt("scalable filter: unknown slice layout")),
            },
        };
        params
            .validate()
            .map_err(|_| corrupt("scalable filter: parameters out of range"))?;
        let count = le_u32(payload, 36);
        if count == 0 || count > params.max_slices || count != header.num_hashes {
            return Err(corrupt("scalable filter: slice count out of range"));
        }
        let mut slices = Vec::with_capacity(count as usize);
        let mut at = PARAMS_LEN;
        let mut len = 0u64;
        for i in 0..count {
            if payload.len() - at < 16 {
                return Err(corrupt("scalable filter: truncated slice"));
            }
            let slice_len = le_u64(payload, at);
            let n = le_u64(payload, at + 8);
            at += 16;
            if n > (payload.len() - at) as u64 {
                return Err(corrupt("scalable filter: slice longer than the payload"));
            }
            let bytes = &payload[at..at + n as usize];
            let capacity = params
                .slice_capacity(i)
                .map_err(|_| corrupt("scalable filter: slice capacity overflows"))?;
            // A blocked stack has blocked slices only; a standard one standard slices and
            // blocked ones (where a standard slice would be too small). The slice's own
            // kind is trusted within that, not recomputed from the parameters: the
            // 30 / p rule is floating-point arithmetic, and a file must not become
            // unreadable because another build rounds a boundary case differently.
            let layout = match (params.layout, format::Header::parse(bytes)?.kind) {
                (_, FilterKind::Blocked512) => SliceLayout::Blocked,
                (SliceLayout::Standard, FilterKind::Standard) => SliceLayout::Standard,
                _ => return Err(corrupt("scalable filter: a slice of another layout")),
            };
            let filter = match layout {
                SliceLayout::Blocked => SliceFilter::Blocked(
                    BlockedBloomFilter::from_bytes_with_hasher(bytes, hasher.clone())?,
                ),
                SliceLayout::Standard => SliceFilter::Standard(
                    StandardBloomFilter::from_bytes_with_hasher(bytes, hasher.clone())?,
                ),
            };
            at += n as usize;
            len = len
                .checked_add(slice_len)
                .ok_or_else(|| corrupt("scalable filter: key count overflows"))?;
            slices.push(Slice {
                filter,
                capacity,
                len: slice_len,
            });
        }
        if at != payload.len() || len != header.items {
            return Err(corrupt(
                "scalable filter: slices do not add up to the payload",
            ));
        }
        Ok(Self {
            slices,
            params,
            hasher,
            len,
        })
    }
}

/// Equal when the parameters, hashers, counts and every slice's bits are equal.
impl<S: BuildHasher> PartialEq for ScalableBloomFilter<S> {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
            && self.len == other.len
            && self.slices.len() == other.slices.len()
            && self
                .slices
                .iter()
                .zip(&other.slices)
                .all(|(a, b)| a.len == b.len && a.filter == b.filter)
    }
}

/// Inserts every key; **panics** if an insert fails (the slice limit is reached or a
/// slice cannot be allocated: `Extend` cannot report it, and dropping the key silently
/// would make it a false negative). Use [`ScalableBloomFilter::try_extend`] to get the
/// error instead.
impl<T: Hash, S: BuildHasher + Clone> Extend<T> for ScalableBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        if let Err(e) = self.try_extend(iter) {
            panic!("ScalableBloomFilter::extend: {e}; use try_extend to handle it");
        }
    }
}

/// Collects keys into a filter with initial capacity [`DEFAULT_INITIAL_CAPACITY`] (1024),
/// target rate 0.01 and the other defaults; it grows as the keys arrive (nothing is
/// buffered). Panics only if a slice cannot be allocated (memory runs out, as a `Vec`
/// does) or past 32 slices (about 4.4 * 10^12 keys).
impl<T: Hash> FromIterator<T> for ScalableBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut f = ScalableBloomFilter::new(DEFAULT_INITIAL_CAPACITY, 0.01)
            .expect("valid default parameters");
        f.extend(iter);
        f
    }
}

impl<T: Hash + ?Sized, S: BuildHasher + Clone> bloomforge_core::Filter<T>
    for ScalableBloomFilter<S>
{
    type InsertError = StreamError;
    fn insert(&mut self, key: &T) -> Result<bool> {
        ScalableBloomFilter::insert(self, key)
    }
    fn contains(&self, key: &T) -> bool {
        ScalableBloomFilter::contains(self, key)
    }
    fn memory_bits(&self) -> u64 {
        self.memory_bytes() * 8
    }
    fn expected_false_pos(&self) -> f64 {
        self.false_pos_now()
    }
}
