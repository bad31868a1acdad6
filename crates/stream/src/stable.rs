//! The stable Bloom filter (Deng and Rafiei, SIGMOD 2006): duplicate detection over an
//! unbounded stream in fixed memory.

use crate::error::{corrupt, Result, StreamError};
use crate::io::le_u64;
use bloomforge_core::batch::{prefetch, PREFETCH_AHEAD};
use bloomforge_core::format::{self, FilterKind, PersistentHasher, HEADER_LEN};
use bloomforge_core::hash::{fast_range64, hasher_fingerprint, mix64};
use bloomforge_core::{DefaultHasher, Probes};
use core::hash::{BuildHasher, Hash};

/// Cell width a [`StableBloomFilterBuilder`] uses when none is given (Max = 7).
pub const DEFAULT_CELL_BITS: u32 = 3;
/// Cells of a filter made by [`FromIterator`] (2^20 cells of 3 bits: 384 KiB).
pub const DEFAULT_CELLS: u64 = 1 << 20;
/// Largest number of cells (2^40, 1 TiB at 8 bits a cell).
pub const MAX_CELLS: u64 = 1 << 40;
/// Largest `k` accepted.
pub const MAX_HASHES: u32 = 64;

const PARAMS_LEN: usize = 40;
/// The generator's increment (SplitMix64's): draw `j` from state `s` is `mix64(s + j GOLDEN)`.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The lowest bit of each of the `64 / d` whole `d`-bit fields of a word.
const fn low_bits(d: u32) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < 64 / d {
        m |= 1 << (i * d);
        i += 1;
    }
    m
}

/// Bit 0 of every field of `w` whose value is non-zero (fields of `D` bits), in five
/// word operations whatever `D`: adding `2^(D-1) - 1` to a field's low `D - 1` bits
/// carries into its top bit exactly when they are non-zero, and never out of the field;
/// or-ing the field's own top bit in gives "non-zero" in the top bit, shifted down.
/// (`D = 1`: the mask of low bits is empty and every bit is its own field.)
#[inline(always)]
fn nonzero_lows<const D: u32>(w: u64) -> u64 {
    let (rest, high) = (Fields::<D>::REST, Fields::<D>::HIGH);
    ((((w & rest).wrapping_add(rest)) | w) & high) >> (D - 1)
}

/// The masks of fields of `D` bits, computed at compile time.
struct Fields<const D: u32>;

impl<const D: u32> Fields<D> {
    /// [`low_bits`]`(D)`.
    const LOW: u64 = low_bits(D);
    /// The `D - 1` low bits of every whole field.
    const REST: u64 = Self::LOW * ((1 << (D - 1)) - 1);
    /// The top bit of every whole field.
    const HIGH: u64 = Self::LOW << (D - 1);
}

/// Decrements (floor 0) the fields of `w` whose low bits are in `lows`.
#[inline(always)]
fn dec_word<const D: u32>(w: u64, lows: u64) -> u64 {
    // Subtracting 1 from a non-zero field never borrows from the next one (wrapping
    // arithmetic: no overflow check in the loop, which the compiler then vectorises).
    w.wrapping_sub(nonzero_lows::<D>(w) & lows)
}

/// Decrements every field of whole words: one subtraction per 64 / d cells (SWAR), a
/// loop the compiler vectorises.
fn dec_words<const D: u32>(words: &mut [u64]) {
    for w in words {
        *w = dec_word::<D>(*w, u64::MAX);
    }
}

/// Decrements cells `lo..hi` (in cell units, `lo < hi <= cells`).
fn dec_range<const D: u32>(words: &mut [u64], lo: u64, hi: u64) {
    let cpw = u64::from(64 / D);
    let (w0, f0) = ((lo / cpw) as usize, (lo % cpw) as u32);
    let (w1, f1) = ((hi / cpw) as usize, (hi % cpw) as u32);
    // Low bits of fields f.. of a word, and of fields ..f.
    let from = |f: u32| Fields::<D>::LOW & (u64::MAX << (f * D));
    let below = |f: u32| Fields::<D>::LOW & !(u64::MAX << (f * D));
    if w0 == w1 {
        words[w0] = dec_word::<D>(words[w0], from(f0) & below(f1));
        return;
    }
    words[w0] = dec_word::<D>(words[w0], from(f0));
    dec_words::<D>(&mut words[w0 + 1..w1]);
    if f1 > 0 {
        words[w1] = dec_word::<D>(words[w1], below(f1));
    }
}

/// Number of zero fields among the first `fields` fields of `w`.
fn zeros_in(w: u64, d: u32, fields: u32) -> u32 {
    let mut x = w;
    for s in 1..d {
        x |= w >> s;
    }
    let lows = low_bits(d)
        & if fields * d >= 64 {
            u64::MAX
        } else {
            !(u64::MAX << (fields * d))
        };
    fields - (x & lows).count_ones()
}

/// The fraction of zero cells at the stable point (Deng and Rafiei, Theorem 2):
/// `(1 / (1 + 1 / (P (1/k - 1/m))))^Max`, for `m` cells, `k` cells per key, `P`
/// decrements per insert and cells counting down from `Max`.
///
/// ```
/// let z = bloomforge_stream::stable_point(1 << 20, 7, 64, 7);
/// assert!((0.48..0.49).contains(&z));
/// ```
pub fn stable_point(cells: u64, k: u32, decrements: u64, max: u32) -> f64 {
    let m = cells as f64;
    let inner = decrements as f64 * (1.0 / f64::from(k) - 1.0 / m);
    (1.0 / (1.0 + 1.0 / inner)).powi(max as i32)
}

/// The decrements per insert `P` that put the false-positive rate at the stable point at
/// `false_pos` (the paper's formula solved for `P`, rounded up so the rate is at most
/// `false_pos`): with `z = 1 - false_pos^(1/k)` the zero fraction needed,
/// `P = 1 / ((z^(-1/Max) - 1) (1/k - 1/m))`. `None` unless `0 < false_pos < 1` and
/// `k < cells`, or when no `P` below 2^52 reaches the target.
///
/// ```
/// use bloomforge_stream::{decrements_for, stable_false_pos};
/// let p = decrements_for(1 << 20, 7, 7, 0.01).unwrap();
/// assert!(stable_false_pos(1 << 20, 7, p, 7) <= 0.01);
/// assert!(stable_false_pos(1 << 20, 7, p - 1, 7) > 0.01);
/// ```
pub fn decrements_for(cells: u64, k: u32, max: u32, false_pos: f64) -> Option<u64> {
    if !(false_pos > 0.0 && false_pos < 1.0) || u64::from(k) >= cells || k == 0 {
        return None;
    }
    let z = 1.0 - false_pos.powf(1.0 / f64::from(k));
    let denom = (z.powf(-1.0 / f64::from(max)) - 1.0) * (1.0 / f64::from(k) - 1.0 / cells as f64);
    let p = (1.0 / denom).ceil();
    // No finite P reaches the target (it is below what f64 resolves), or one beyond any
    // filter's size.
    if p.is_nan() || p >= (1u64 << 52) as f64 {
        return None;
    }
    // Rounding: the solution is exact up to floating-point error; step by one to the
    // smallest P that meets the target (a few steps at most).
    let mut p = (p as u64).max(1);
    for _ in 0..64 {
        if p > 1 && stable_false_pos(cells, k, p - 1, max) <= false_pos {
            p -= 1;
        } else if stable_false_pos(cells, k, p, max) > false_pos {
            p += 1;
        } else {
            break;
        }
    }
    (stable_false_pos(cells, k, p, max) <= false_pos).then_some(p)
}

/// The false-positive rate at the stable point: `(1 - stable_point)^k`.
pub fn stable_false_pos(cells: u64, k: u32, decrements: u64, max: u32) -> f64 {
    (1.0 - stable_point(cells, k, decrements, max)).powi(k as i32)
}

/// The `k` a [`StableBloomFilter::new`] uses for a target rate: `ceil(log2(1 / p))`,
/// the optimal `k` of a plain Bloom filter at that rate (the choice of the reference Go
/// implementation), at least 1.
pub fn hashes_for(false_pos: f64) -> u32 {
    ((1.0 / false_pos).log2().ceil() as u32).clamp(1, MAX_HASHES)
}

/// A stable Bloom filter: `m` cells of `d` bits (`Max = 2^d - 1`), `k` cells per key.
/// Each insert first decrements `P` cells (by one, floor 0), then sets the key's `k`
/// cells to `Max`; a key is reported present when all its cells are non-zero. The fill
/// converges to a stable point whatever the stream's length, so the false-positive rate
/// stays bounded ([`stable_false_pos`](Self::stable_false_pos)) in fixed memory: the
/// filter for "have I seen this recently?" over an unbounded stream
/// ([`check_and_insert`](Self::check_and_insert)).
///
/// **False negatives grow with distance in the stream.** A key inserted `t` inserts ago
/// has lost a cell once that cell took `Max` decrements and was not set again: each
/// insert decrements a given cell with probability `P/m`, so a cell of the key is still
/// non-zero after `t` inserts with probability at least `Pr[Binomial(t, P/m) < Max]`.
/// Recent keys are found; keys from much longer than `m Max / P` inserts ago are mostly
/// forgotten (then reported absent: a false negative, unlike any plain Bloom filter).
/// More bits per cell remember longer at the same rate.
///
/// The `P` cells decremented by one insert are a run of consecutive cells from a
/// uniformly random start (as in the reference Go implementation): each cell is still
/// decremented with probability exactly `P/m`, which is all the stable-point analysis
/// uses, and the run is decremented a whole 64-bit word (`64 / d` cells) at a time. The
/// random starts come from a seeded SplitMix-style generator: the same seed and keys give
/// the same filter.
///
/// ```
/// use bloomforge_stream::StableBloomFilter;
///
/// let mut f = StableBloomFilter::new(1 << 16, 3, 0.01)?;
/// assert!(!f.check_and_insert(&"event-1"));
/// assert!(f.check_and_insert(&"event-1")); // seen recently
/// assert!(f.stable_false_pos() <= 0.01);
/// # Ok::<(), bloomforge_stream::StreamError>(())
/// ```
#[derive(Clone, Debug)]
pub struct StableBloomFilter<S = DefaultHasher> {
    words: Vec<u64>,
    cells: u64,
    cell_bits: u32,
    k: u32,
    decrements: u64,
    rng: u64,
    inserts: u64,
    hasher: S,
}

/// Builder of a [`StableBloomFilter`]:
/// `StableBloomFilter::builder().cells(m).cell_bits(d).false_pos(p).build()?`, or with
/// `.hashes(k)` and `.decrements(p)` set explicitly.
#[must_use = "a builder does nothing until finished with .build()"]
#[derive(Clone, Debug)]
pub struct StableBloomFilterBuilder<S = DefaultHasher> {
    cells: Option<u64>,
    cell_bits: u32,
    false_pos: f64,
    hashes: Option<u32>,
    decrements: Option<u64>,
    rng_seed: u64,
    hasher: S,
}

impl Default for StableBloomFilterBuilder {
    fn default() -> Self {
        Self {
            cells: None,
            cell_bits: DEFAULT_CELL_BITS,
            false_pos: bloomforge_core::builder::DEFAULT_FALSE_POS,
            hashes: None,
            decrements: None,
            rng_seed: 0,
            hasher: DefaultHasher::default(),
        }
    }
}

impl StableBloomFilterBuilder {
    /// Seeds the default hasher.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<S: BuildHasher> StableBloomFilterBuilder<S> {
    /// Number of cells `m` (required), in `k + 1 ..= 2^40`.
    pub fn cells(self, cells: u64) -> Self {
        Self {
            cells: Some(cells),
            ..self
        }
    }

    /// Bits per cell `d` in 1..=8 (default 3): cells count down from `Max = 2^d - 1`.
    pub fn cell_bits(self, d: u32) -> Self {
        Self {
            cell_bits: d,
            ..self
        }
    }

    /// The target false-positive rate at the stable point, in (0, 1) (default 0.01):
    /// picks `k` ([`hashes_for`]) unless [`hashes`](Self::hashes) is set, and `P`
    /// ([`decrements_for`]) unless [`decrements`](Self::decrements) is set.
    pub fn false_pos(self, p: f64) -> Self {
        Self {
            false_pos: p,
            ..self
        }
    }

    /// Cells per key `k`, in 1..=64.
    pub fn hashes(self, k: u32) -> Self {
        Self {
            hashes: Some(k),
            ..self
        }
    }

    /// Cells decremented per insert `P`, in 1..=m (with both `hashes` and `decrements`
    /// set, `false_pos` is not used).
    pub fn decrements(self, p: u64) -> Self {
        Self {
            decrements: Some(p),
            ..self
        }
    }

    /// Seeds the generator of the decremented cells (default 0).
    pub fn rng_seed(self, seed: u64) -> Self {
        Self {
            rng_seed: seed,
            ..self
        }
    }

    /// Uses `hasher` instead of the default.
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> StableBloomFilterBuilder<S2> {
        StableBloomFilterBuilder {
            cells: self.cells,
            cell_bits: self.cell_bits,
            false_pos: self.false_pos,
            hashes: self.hashes,
            decrements: self.decrements,
            rng_seed: self.rng_seed,
            hasher,
        }
    }

    /// Builds the filter (all cells zero).
    ///
    /// # Errors
    /// [`bloomforge_core::Error::ZeroBits`] without cells, [`StreamError::InvalidParameter`]
    /// for cells, cell bits, `k` or `P` out of range or a target rate `P <= m` cannot
    /// reach, [`bloomforge_core::Error::InvalidFalsePositiveRate`] unless
    /// `0 < false_pos < 1` (when it is used), [`bloomforge_core::Error::AllocationFailed`].
    pub fn build(self) -> Result<StableBloomFilter<S>> {
        let cells = self.cells.unwrap_or(0);
        if cells == 0 {
            return Err(bloomforge_core::Error::ZeroBits.into());
        }
        let invalid = |name, value: f64, reason| StreamError::InvalidParameter {
            name,
            value,
            reason,
        };
        if cells > MAX_CELLS {
            return Err(invalid("cells", cells as f64, "must be at most 2^40"));
        }
        if !(1..=8).contains(&self.cell_bits) {
            return Err(invalid(
                "cell_bits",
                f64::from(self.cell_bits),
                "must be in 1..=8",
            ));
        }
        let needs_fp = self.hashes.is_none() || self.decrements.is_none();
        if needs_fp && !(self.false_pos > 0.0 && self.false_pos < 1.0) {
            return Err(bloomforge_core::Error::InvalidFalsePositiveRate(self.false_pos).into());
        }
        let k = self.hashes.unwrap_or_else(|| hashes_for(self.false_pos));
        if k == 0 || k > MAX_HASHES || u64::from(k) >= cells {
            return Err(invalid(
                "hashes",
                f64::from(k),
                "must be in 1..=64 and below the cell count",
            ));
        }
        let max = (1u32 << self.cell_bits) - 1;
        let decrements = match self.decrements {
            Some(p) => p,
            None => decrements_for(cells, k, max, self.false_pos).unwrap_or(0),
        };
        if decrements == 0 || decrements > cells {
            return Err(invalid(
                if self.decrements.is_some() { "decrements" } else { "false_pos" },
                if self.decrements.is_some() { decrements as f64 } else { self.false_pos },
                "needs 1..=cells decrements per insert: use more cells, more bits per cell or a larger rate",
            ));
        }
        let words = StableBloomFilter::<S>::words_for(cells, self.cell_bits);
        let bytes = usize::try_from(words.saturating_mul(8)).unwrap_or(usize::MAX);
        let words = usize::try_from(words)
            .ok()
            .and_then(|n| bloomforge_core::memory::try_vec_filled(n, 0u64).ok())
            .ok_or(bloomforge_core::Error::AllocationFailed { bytes })?;
        Ok(StableBloomFilter {
            words,
            cells,
            cell_bits: self.cell_bits,
            k,
            decrements,
            rng: self.rng_seed,
            inserts: 0,
            hasher: self.hasher,
        })
    }
}

impl StableBloomFilter {
    /// `cells` cells of `cell_bits` bits (1..=8) at false-positive rate `false_pos` at
    /// the stable point, the default hasher and generator seed 0: `k` is
    /// [`hashes_for`]`(false_pos)`, `P` is [`decrements_for`]. Sized by its cells (what
    /// it costs is fixed, the stream is unbounded), unlike the `(expected_items,
    /// false_pos)` of the other filters. The same as
    /// `Self::builder().cells(cells).cell_bits(cell_bits).false_pos(false_pos).build()`.
    ///
    /// # Errors
    /// As [`StableBloomFilterBuilder::build`].
    pub fn new(cells: u64, cell_bits: u32, false_pos: f64) -> Result<Self> {
        Self::builder()
            .cells(cells)
            .cell_bits(cell_bits)
            .false_pos(false_pos)
            .build()
    }

    /// The builder (cells, bits per cell, `k`, `P`, seeds, hasher).
    pub fn builder() -> StableBloomFilterBuilder {
        StableBloomFilterBuilder::default()
    }

    /// Reads a filter serialized with an unkeyed hasher (its seed is restored).
    ///
    /// # Errors
    /// [`bloomforge_core::Error::Corrupt`] (in [`StreamError::Core`]) for truncated,
    /// corrupted or hostile bytes, [`bloomforge_core::Error::HasherMismatch`] for a keyed
    /// filter.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized filter from `reader`.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or [`bloomforge_core::Error::Io`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

impl<S> StableBloomFilter<S> {
    fn words_for(cells: u64, d: u32) -> u64 {
        cells.div_ceil(u64::from(64 / d))
    }

    fn max(&self) -> u64 {
        (1u64 << self.cell_bits) - 1
    }

    /// The value of cell `i`.
    #[inline]
    fn cell(&self, i: u64) -> u64 {
        let cpw = u64::from(64 / self.cell_bits);
        (self.words[(i / cpw) as usize] >> ((i % cpw) as u32 * self.cell_bits)) & self.max()
    }

    #[inline]
    fn set_max(&mut self, i: u64) {
        let cpw = u64::from(64 / self.cell_bits);
        let max = self.max();
        self.words[(i / cpw) as usize] |= max << ((i % cpw) as u32 * self.cell_bits);
    }

    #[inline]
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(GOLDEN);
        mix64(self.rng)
    }

    /// Decrements the `P` consecutive cells from a random start (wrapping around).
    fn decrement(&mut self) {
        let start = fast_range64(self.next_random(), self.cells);
        let end = start + self.decrements;
        let (a, b) = if end <= self.cells {
            ((start, end), None)
        } else {
            ((start, self.cells), Some((0, end - self.cells)))
        };
        for (lo, hi) in core::iter::once(a).chain(b) {
            let w = &mut self.words;
            match self.cell_bits {
                1 => dec_range::<1>(w, lo, hi),
                2 => dec_range::<2>(w, lo, hi),
                3 => dec_range::<3>(w, lo, hi),
                4 => dec_range::<4>(w, lo, hi),
                5 => dec_range::<5>(w, lo, hi),
                6 => dec_range::<6>(w, lo, hi),
                7 => dec_range::<7>(w, lo, hi),
                _ => dec_range::<8>(w, lo, hi),
            }
        }
    }

    /// Inserts a key by its 64-bit hash: `P` decrements, then its `k` cells set to `Max`.
    pub fn insert_hash(&mut self, hash: u64) {
        self.decrement();
        let mut probes = Probes::new(hash);
        for _ in 0..self.k {
            let i = probes.next_pos(self.cells);
            self.set_max(i);
        }
        self.inserts += 1;
    }

    /// Whether the key with this hash may have been inserted recently (all its cells
    /// non-zero).
    pub fn contains_hash(&self, hash: u64) -> bool {
        let mut probes = Probes::new(hash);
        (0..self.k).all(|_| self.cell(probes.next_pos(self.cells)) != 0)
    }

    /// [`contains_hash`](Self::contains_hash), then [`insert_hash`](Self::insert_hash).
    pub fn check_and_insert_hash(&mut self, hash: u64) -> bool {
        let seen = self.contains_hash(hash);
        self.insert_hash(hash);
        seen
    }

    /// Prefetches the words insert number `ahead` (counted from now) of `hash` touches:
    /// its `k` cells and the first word of its decrement run.
    #[inline]
    fn prefetch_insert(&self, hash: u64, ahead: u64) {
        let cpw = u64::from(64 / self.cell_bits);
        let mut probes = Probes::new(hash);
        for _ in 0..self.k {
            let i = probes.next_pos(self.cells);
            prefetch(self.words.as_ptr().wrapping_add((i / cpw) as usize));
        }
        let r = mix64(self.rng.wrapping_add((ahead + 1).wrapping_mul(GOLDEN)));
        let start = fast_range64(r, self.cells);
        prefetch(self.words.as_ptr().wrapping_add((start / cpw) as usize));
    }

    /// [`check_and_insert_hash`](Self::check_and_insert_hash) for every hash in order,
    /// `out[i]` = whether key `i` was reported seen. The same as the one-by-one calls
    /// (same answers, same filter), pipelined: the cells of the key
    /// [`PREFETCH_AHEAD`] places ahead (and the start of its decrement run, known from
    /// the generator) are prefetched, so cache misses overlap on filters larger than the
    /// cache.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::LengthMismatch`] (and nothing changed) unless
    /// `hashes.len() == out.len()`.
    pub fn check_and_insert_hash_batch(&mut self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        if hashes.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: hashes.len(),
                out: out.len(),
            }
            .into());
        }
        for (i, &h) in hashes.iter().enumerate().take(PREFETCH_AHEAD) {
            self.prefetch_insert(h, i as u64);
        }
        for (i, (&h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
            if let Some(&next) = hashes.get(i + PREFETCH_AHEAD) {
                self.prefetch_insert(next, PREFETCH_AHEAD as u64);
            }
            *o = self.check_and_insert_hash(h);
        }
        Ok(())
    }

    /// Number of cells `m`.
    pub fn cells(&self) -> u64 {
        self.cells
    }

    /// Bits per cell `d`.
    pub fn cell_bits(&self) -> u32 {
        self.cell_bits
    }

    /// Cells per key `k`.
    pub fn num_hashes(&self) -> u32 {
        self.k
    }

    /// Cells decremented per insert `P`.
    pub fn decrements(&self) -> u64 {
        self.decrements
    }

    /// Inserts so far (duplicates included; `check_and_insert` counts as one).
    pub fn inserts(&self) -> u64 {
        self.inserts
    }

    /// Bytes the cells occupy (`64 / d` cells per 64-bit word).
    pub fn memory_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// The fraction of zero cells at the stable point ([`stable_point`] of this filter's
    /// `m`, `k`, `P`, `Max`).
    pub fn stable_point(&self) -> f64 {
        stable_point(self.cells, self.k, self.decrements, self.max() as u32)
    }

    /// The false-positive rate at the stable point, `(1 - stable_point)^k`.
    pub fn stable_false_pos(&self) -> f64 {
        stable_false_pos(self.cells, self.k, self.decrements, self.max() as u32)
    }

    /// Number of zero cells now. Costs one pass over the cells.
    pub fn zero_cells(&self) -> u64 {
        let cpw = 64 / self.cell_bits;
        let full = self.cells / u64::from(cpw);
        let mut zeros: u64 = self.words[..full as usize]
            .iter()
            .map(|&w| u64::from(zeros_in(w, self.cell_bits, cpw)))
            .sum();
        let rest = (self.cells % u64::from(cpw)) as u32;
        if rest > 0 {
            zeros += u64::from(zeros_in(self.words[full as usize], self.cell_bits, rest));
        }
        zeros
    }

    /// The false-positive rate for the current contents: `(1 - zero fraction)^k`, the
    /// chance that `k` random cells are all non-zero. Costs one pass over the cells.
    pub fn expected_false_pos(&self) -> f64 {
        (1.0 - self.zero_cells() as f64 / self.cells as f64).powi(self.k as i32)
    }

    /// Estimated number of distinct keys the filter still remembers: the keys a plain
    /// Bloom filter of `m` cells and `k` probes holds at this fraction of non-zero cells,
    /// `-(m/k) ln(1 - nonzero/m)` (Swamidass and Baldi, as core's `estimated_len`).
    ///
    /// There is no `len()`: the filter forgets keys by design (every insert decrements `P`
    /// cells, and a key whose cells reached zero reads absent), so no exact count of what
    /// it holds exists; [`inserts`](Self::inserts) counts every insert ever made. Decayed
    /// but non-zero cells of old keys still count, so this is an upper estimate of the
    /// keys that answer `true`; at the stable point it hovers around a constant however
    /// long the stream. Costs one pass over the cells.
    pub fn estimated_len(&self) -> f64 {
        let m = self.cells as f64;
        let nonzero = ((self.cells - self.zero_cells()) as f64).min(m - 0.5);
        -(m / f64::from(self.k)) * (-nonzero / m).ln_1p()
    }

    /// Whether every cell is zero (every query answers `false`; `estimated_len() == 0`):
    /// a new or cleared filter, or one whose keys have all decayed away.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Sets every cell to zero (the generator's state is kept).
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.inserts = 0;
    }
}

impl<S: BuildHasher> StableBloomFilter<S> {
    /// Inserts `key` (decrements `P` cells, then sets its `k` cells to `Max`).
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) {
        self.insert_hash(self.hasher.hash_one(key));
    }

    /// Whether `key` may have been inserted recently (`false`: not seen, or forgotten).
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// "Seen recently?": whether `key` was reported present, then inserts it (the
    /// duplicate detector of the paper).
    #[inline]
    pub fn check_and_insert<T: Hash + ?Sized>(&mut self, key: &T) -> bool {
        self.check_and_insert_hash(self.hasher.hash_one(key))
    }

    /// Inserts every key of `keys` in order (pipelined as
    /// [`check_and_insert_batch`](Self::check_and_insert_batch)).
    pub fn insert_batch<T: Hash>(&mut self, keys: &[T]) {
        let hashes: Vec<u64> = keys.iter().map(|k| self.hasher.hash_one(k)).collect();
        let mut out = vec![false; hashes.len()];
        // Equal lengths: cannot fail.
        let _ = self.check_and_insert_hash_batch(&hashes, &mut out);
    }

    /// [`check_and_insert`](Self::check_and_insert) for every key of `keys` in order,
    /// `out[i]` = whether `keys[i]` was reported seen; pipelined (see
    /// [`check_and_insert_hash_batch`](Self::check_and_insert_hash_batch)).
    ///
    /// # Errors
    /// [`bloomforge_core::Error::LengthMismatch`] (and nothing changed) unless
    /// `keys.len() == out.len()`.
    pub fn check_and_insert_batch<T: Hash>(&mut self, keys: &[T], out: &mut [bool]) -> Result<()> {
        if keys.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: keys.len(),
                out: out.len(),
            }
            .into());
        }
        let hashes: Vec<u64> = keys.iter().map(|k| self.hasher.hash_one(k)).collect();
        self.check_and_insert_hash_batch(&hashes, out)
    }

    /// Queries every key of `keys` into `out[i]`.
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
        for (k, o) in keys.iter().zip(out) {
            *o = self.contains(k);
        }
        Ok(())
    }
}

impl<S: PersistentHasher> StableBloomFilter<S> {
    /// Serializes the filter in the format of [`bloomforge_core::format`] (kind
    /// [`FilterKind::Stable`]): a parameter block (cells, bits per cell, `P`, generator
    /// state, inserts) and the cell words, little-endian. A filter read back continues
    /// exactly as this one would (same decrements).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + PARAMS_LEN + self.words.len() * 8);
        // Writing into a `Vec` cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes the bytes of [`to_bytes`](Self::to_bytes) to `writer`, streamed.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::Io`] if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let mut head = Vec::with_capacity(PARAMS_LEN);
        head.extend_from_slice(&self.cells.to_le_bytes());
        head.extend_from_slice(&u64::from(self.cell_bits).to_le_bytes());
        head.extend_from_slice(&self.decrements.to_le_bytes());
        head.extend_from_slice(&self.rng.to_le_bytes());
        head.extend_from_slice(&self.inserts.to_le_bytes());
        format::encode_to(
            writer,
            FilterKind::Stable,
            &self.hasher,
            self.k,
            self.cells * u64::from(self.cell_bits),
            self.inserts,
            (PARAMS_LEN + self.words.len() * 8) as u64,
            |sink| {
                sink(&head);
                format::stream_le(&self.words, sink, |w, buf| {
                    buf.extend_from_slice(&w.to_le_bytes())
                });
            },
        )?;
        Ok(())
    }

    /// Reads a filter with the caller's hasher (needed for keyed hashing).
    ///
    /// # Errors
    /// As [`from_bytes`](StableBloomFilter::from_bytes).
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
        Self::decode(bytes, Some(hasher))
    }

    fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
        let (header, payload, hasher) = format::decode(bytes, FilterKind::Stable, hasher)?;
        if payload.len() < PARAMS_LEN {
            return Err(corrupt(
                "stable filter: payload shorter than its parameters",
            ));
        }
        let cells = le_u64(payload, 0);
        let d = le_u64(payload, 8);
        let decrements = le_u64(payload, 16);
        let k = header.num_hashes;
        if !(1..=8).contains(&d) || cells == 0 || cells > MAX_CELLS {
            return Err(corrupt("stable filter: cell count or width out of range"));
        }
        let d = d as u32;
        if k == 0
            || k > MAX_HASHES
            || u64::from(k) >= cells
            || decrements == 0
            || decrements > cells
        {
            return Err(corrupt("stable filter: k or P out of range"));
        }
        if header.num_bits != cells * u64::from(d) {
            return Err(corrupt("stable filter: bit count does not match the cells"));
        }
        let n = Self::words_for(cells, d);
        if (payload.len() - PARAMS_LEN) as u64 != n * 8 {
            return Err(corrupt(
                "stable filter: payload length does not match the cells",
            ));
        }
        let words: Vec<u64> = payload[PARAMS_LEN..]
            .chunks_exact(8)
            .map(|c| le_u64(c, 0))
            .collect();
        let f = Self {
            words,
            cells,
            cell_bits: d,
            k,
            decrements,
            rng: le_u64(payload, 24),
            inserts: le_u64(payload, 32),
            hasher,
        };
        // Bits outside the cells (the spare top bits of a word, the tail of the last
        // word) are always zero in a filter this crate wrote.
        let cpw = u64::from(64 / d);
        let used = |fields: u64| {
            if fields * u64::from(d) >= 64 {
                u64::MAX
            } else {
                !(u64::MAX << (fields * u64::from(d)))
            }
        };
        let last = n as usize - 1;
        let tail = cells - last as u64 * cpw;
        if f.words[..last].iter().any(|w| w & !used(cpw) != 0) || f.words[last] & !used(tail) != 0 {
            return Err(corrupt("stable filter: bits set outside the cells"));
        }
        Ok(f)
    }
}

/// Equal when the cells, parameters, generator state and hashers are equal.
impl<S: BuildHasher> PartialEq for StableBloomFilter<S> {
    fn eq(&self, other: &Self) -> bool {
        self.cells == other.cells
            && self.cell_bits == other.cell_bits
            && self.k == other.k
            && self.decrements == other.decrements
            && self.rng == other.rng
            && self.inserts == other.inserts
            && hasher_fingerprint(&self.hasher) == hasher_fingerprint(&other.hasher)
            && self.words == other.words
    }
}

/// Inserts the keys through the batch path,
/// [`EXTEND_CHUNK`](bloomforge_core::batch::EXTEND_CHUNK) at a time.
impl<T: Hash, S: BuildHasher> Extend<T> for StableBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}

/// Collects keys into a filter of [`DEFAULT_CELLS`] (2^20) cells of 3 bits at a 1 %
/// rate at the stable point (nothing is buffered: the filter's size does not depend on
/// the number of keys).
impl<T: Hash> FromIterator<T> for StableBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut f = StableBloomFilter::new(DEFAULT_CELLS, DEFAULT_CELL_BITS, 0.01)
            .expect("valid default parameters");
        f.extend(iter);
        f
    }
}

impl<T: Hash + ?Sized, S: BuildHasher> bloomforge_core::Filter<T> for StableBloomFilter<S> {
    type InsertError = core::convert::Infallible;
    fn insert(&mut self, key: &T) -> core::result::Result<bool, Self::InsertError> {
        Ok(self.check_and_insert(key))
    }
    fn contains(&self, key: &T) -> bool {
        StableBloomFilter::contains(self, key)
    }
    fn memory_bits(&self) -> u64 {
        self.memory_bytes() * 8
    }
    fn expected_false_pos(&self) -> f64 {
        StableBloomFilter::expected_false_pos(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The five-operation non-zero test against field-by-field arithmetic, every width,
    /// random words (spare top bits zero, as in a filter) and the extreme values.
    #[test]
    fn nonzero_lows_matches_fields() {
        fn check<const D: u32>() {
            let fields = 64 / D;
            let used = if fields * D == 64 {
                u64::MAX
            } else {
                (1u64 << (fields * D)) - 1
            };
            let mut x = 99u64;
            for i in 0..20_000u64 {
                x = mix64(x.wrapping_add(i));
                // Mostly zero fields too: keep each field with probability about 1/2.
                let keep = mix64(x ^ 0x55) & low_bits(D);
                let w = match i {
                    0 => 0,
                    1 => used,
                    2 => low_bits(D),
                    _ => x & used & (keep * ((1 << D) - 1)),
                };
                let want = (0..fields).fold(0u64, |acc, f| {
                    acc | (u64::from((w >> (f * D)) & ((1 << D) - 1) != 0) << (f * D))
                });
                assert_eq!(nonzero_lows::<D>(w), want, "d={D} w={w:#x}");
            }
        }
        check::<1>();
        check::<2>();
        check::<3>();
        check::<4>();
        check::<5>();
        check::<6>();
        check::<7>();
        check::<8>();
    }

    /// The SWAR decrement against cell-by-cell arithmetic, every width, ranges crossing
    /// words.
    #[test]
    fn swar_decrement_matches_scalar() {
        for d in 1..=8u32 {
            let mut f = StableBloomFilter::builder()
                .cells(1000)
                .cell_bits(d)
                .hashes(3)
                .decrements(1)
                .build()
                .unwrap();
            let max = (1u64 << d) - 1;
            let mut model = vec![0u64; 1000];
            let mut x = 12345u64;
            for i in 0..1000u64 {
                x = mix64(x + i);
                let v = x % (max + 1);
                model[i as usize] = v;
                let cpw = u64::from(64 / d);
                f.words[(i / cpw) as usize] |= v << ((i % cpw) as u32 * d);
            }
            for (lo, hi) in [
                (0, 1000),
                (5, 6),
                (17, 200),
                (63, 64),
                (0, 63),
                (999, 1000),
                (100, 700),
            ] {
                let w = &mut f.words;
                match d {
                    1 => dec_range::<1>(w, lo, hi),
                    2 => dec_range::<2>(w, lo, hi),
                    3 => dec_range::<3>(w, lo, hi),
                    4 => dec_range::<4>(w, lo, hi),
                    5 => dec_range::<5>(w, lo, hi),
                    6 => dec_range::<6>(w, lo, hi),
                    7 => dec_range::<7>(w, lo, hi),
                    _ => dec_range::<8>(w, lo, hi),
                }
                for c in &mut model[lo as usize..hi as usize] {
                    *c = c.saturating_sub(1);
                }
                for i in 0..1000u64 {
                    assert_eq!(
                        f.cell(i),
                        model[i as usize],
                        "d={d} cell {i} after {lo}..{hi}"
                    );
                }
                let zeros = model.iter().filter(|&&c| c == 0).count() as u64;
                assert_eq!(f.zero_cells(), zeros, "d={d}");
            }
        }
    }
}
