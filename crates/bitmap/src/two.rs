//! The 2-bitmap (never / once / many per value), its atomic form and its view.

use crate::bitmap::Iter;
use crate::kernels::{self, Op, LOW};
use crate::{bulk, check_universe, corrupt, mem, BitmapError, Result, MAX_UNIVERSE};
use bloomforge_core::batch::prefetch;
use bloomforge_core::format::FilterKind;
use bloomforge_core::Backend;
use core::sync::atomic::{AtomicU64, Ordering};

/// How often a value was inserted into a [`TwoBitmap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seen {
    /// Never (field `00`).
    Never,
    /// Exactly once (field `01`).
    Once,
    /// Twice or more (field `10`).
    Many,
}

impl Seen {
    #[inline(always)]
    fn from_field(f: u64) -> Seen {
        match f {
            0 => Seen::Never,
            1 => Seen::Once,
            _ => Seen::Many,
        }
    }
}

#[inline(always)]
fn shift(x: u32) -> u32 {
    (x & 31) * 2
}

/// The field after one more insert: `00 -> 01`, `01 -> 10`, `10 -> 10`. A field below
/// "many" (its high bit clear) is incremented: `01 + 01` carries into `10` and stops there.
#[inline(always)]
fn bumped(w: u64, s: u32) -> u64 {
    w + ((!(w >> (s + 1)) & 1) << s)
}

/// Counts how often each `u32` of a universe `0..n` (up to 2^32) occurs, saturating at
/// "many": two bits per value (`00` never, `01` once, `10` many), 1 GiB for every `u32`,
/// lazily zero-filled. [`iter_once`](Self::iter_once) lists the values seen exactly once.
#[derive(Clone)]
pub struct TwoBitmap {
    words: Vec<u64>,
    universe: u64,
    backend: Backend,
}

impl core::fmt::Debug for TwoBitmap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TwoBitmap")
            .field("universe", &self.universe)
            .field("memory_bytes", &(self.words.len() * 8))
            .finish_non_exhaustive()
    }
}

impl PartialEq for TwoBitmap {
    fn eq(&self, other: &Self) -> bool {
        self.universe == other.universe && self.words == other.words
    }
}

impl Eq for TwoBitmap {}

/// Builder of a [`TwoBitmap`]: `TwoBitmap::builder().universe(n).build()`.
#[derive(Clone, Debug)]
#[must_use]
pub struct TwoBitmapBuilder {
    universe: u64,
    backend: Option<Backend>,
}

impl TwoBitmapBuilder {
    /// The universe `0..n` (default 2^32, every `u32`: 1 GiB, lazily zero-filled).
    pub fn universe(mut self, n: u64) -> Self {
        self.universe = n;
        self
    }

    /// The SIMD backend for the counts and merges (default: [`Backend::detect`]).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Builds the empty 2-bitmap.
    ///
    /// # Errors
    /// [`BitmapError::InvalidUniverse`], [`BitmapError::BackendUnavailable`], or
    /// `Core(AllocationFailed)`.
    pub fn build(self) -> Result<TwoBitmap> {
        let mut t = TwoBitmap::new(self.universe)?;
        if let Some(backend) = self.backend {
            t.set_backend(backend)?;
        }
        Ok(t)
    }
}

/// Values of one state of a [`TwoBitmap`], ascending.
pub type IterState<'a> = Iter<'a>;

impl TwoBitmap {
    /// An empty 2-bitmap over `0..universe` (`1..=2^32`): `universe / 4` bytes.
    ///
    /// # Errors
    /// [`BitmapError::InvalidUniverse`] or `Core(AllocationFailed)`.
    pub fn new(universe: u64) -> Result<Self> {
        check_universe(universe)?;
        Ok(TwoBitmap {
            words: mem::zeroed_words(universe.div_ceil(32) as usize)?,
            universe,
            backend: Backend::detect(),
        })
    }

    /// An empty 2-bitmap over every `u32` (1 GiB, lazily zero-filled).
    ///
    /// # Errors
    /// `Core(AllocationFailed)`.
    pub fn full_u32() -> Result<Self> {
        Self::new(MAX_UNIVERSE)
    }

    /// A builder (universe and backend), as [`Bitmap::builder`](crate::Bitmap::builder):
    ///
    /// ```
    /// use bloomforge_bitmap::{Backend, TwoBitmap};
    /// let t = TwoBitmap::builder().universe(1000).backend(Backend::Scalar).build()?;
    /// assert_eq!(t, TwoBitmap::new(1000)?);
    /// # Ok::<(), bloomforge_bitmap::BitmapError>(())
    /// ```
    pub fn builder() -> TwoBitmapBuilder {
        TwoBitmapBuilder {
            universe: MAX_UNIVERSE,
            backend: None,
        }
    }

    /// The universe.
    pub fn universe(&self) -> u64 {
        self.universe
    }

    /// Bytes of the table.
    pub fn memory_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// The words (value `x` is the field at bits `2 * (x % 32)` of word `x / 32`).
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// Sets the SIMD backend (for tests and benchmarks).
    ///
    /// # Errors
    /// [`BitmapError::BackendUnavailable`].
    pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
        kernels::check_backend(backend)?;
        self.backend = backend;
        Ok(())
    }

    fn out_of_range(&self, x: u32) -> BitmapError {
        BitmapError::OutOfRange {
            value: x,
            universe: self.universe,
        }
    }

    fn check_all(&self, values: &[u32]) -> Result<()> {
        match values.iter().copied().max() {
            Some(m) if u64::from(m) >= self.universe => Err(self.out_of_range(m)),
            _ => Ok(()),
        }
    }

    /// Records one occurrence of `x`; returns its state before.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] (nothing changes).
    #[inline]
    pub fn insert(&mut self, x: u32) -> Result<Seen> {
        if u64::from(x) >= self.universe {
            return Err(self.out_of_range(x));
        }
        let w = &mut self.words[(x >> 5) as usize];
        let before = Seen::from_field((*w >> shift(x)) & 3);
        *w = bumped(*w, shift(x));
        Ok(before)
    }

    /// How often `x` was seen (`Never` outside the universe).
    #[inline]
    pub fn seen(&self, x: u32) -> Seen {
        match self.words.get((x >> 5) as usize) {
            Some(&w) if u64::from(x) < self.universe => Seen::from_field((w >> shift(x)) & 3),
            _ => Seen::Never,
        }
    }

    /// Records every value, prefetching ahead.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] if any value is outside the universe (nothing changes).
    pub fn insert_batch(&mut self, values: &[u32]) -> Result<()> {
        self.check_all(values)?;
        bulk::apply_prefetched(&mut self.words, 5, values, |w, v| {
            let i = (v >> 5) as usize;
            w[i] = bumped(w[i], shift(v));
        });
        Ok(())
    }

    /// Records every value of bucket `b` of `buckets` (offsets below its span, so no value
    /// needs checking): the 2-bitmap of one value range of the input, as
    /// [`insert_batch`](Self::insert_batch).
    ///
    /// # Errors
    /// [`BitmapError::UniverseMismatch`] if the universe is smaller than the buckets'
    /// span (nothing changes).
    ///
    /// # Panics
    /// If `b >= buckets.buckets()`.
    pub fn insert_bucket(&mut self, buckets: &crate::RangeBuckets, b: usize) -> Result<()> {
        if self.universe < buckets.span() {
            return Err(BitmapError::UniverseMismatch {
                left: self.universe,
                right: buckets.span(),
            });
        }
        bulk::apply_prefetched(&mut self.words, 5, buckets.bucket(b), |w, v| {
            let i = (v >> 5) as usize;
            w[i] = bumped(w[i], shift(v));
        });
        Ok(())
    }

    /// Records every value on all rayon threads, each owning a contiguous range of words
    /// (the values' high bits): no atomics. A batch with at least one value per 256 values
    /// of universe is first bucketed by 1 MiB region of the table (a scratch copy of the
    /// batch, 4 bytes per value; skipped if that allocation fails), so each region's
    /// updates run in cache; a sparser one is bucketed by range the same way from 4
    /// threads on, and below that each thread scans the batch for its range's values.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] as [`insert_batch`](Self::insert_batch).
    pub fn par_insert_batch(&mut self, values: &[u32]) -> Result<()> {
        self.check_all(values)?;
        bulk::par_apply(&mut self.words, 5, values, |w, v| {
            let i = (v >> 5) as usize;
            w[i] = bumped(w[i], shift(v));
        });
        Ok(())
    }

    /// Number of values seen exactly once (SIMD popcount).
    pub fn count_once(&self) -> u64 {
        kernels::popcount(self.backend, &self.words, LOW)
    }

    /// Number of values seen twice or more (SIMD popcount).
    pub fn count_many(&self) -> u64 {
        kernels::popcount(self.backend, &self.words, LOW << 1)
    }

    /// Number of distinct values seen.
    pub fn count_distinct(&self) -> u64 {
        self.count_once() + self.count_many()
    }

    /// Number of distinct values seen (once or many): [`count_distinct`](Self::count_distinct),
    /// under the workspace's name for an exact count (not the number of inserts).
    pub fn len(&self) -> u64 {
        self.count_distinct()
    }

    /// Whether nothing was inserted (`len() == 0`).
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Forgets everything (tables of 64 MiB and more are replaced by fresh zero pages,
    /// smaller ones zeroed in place).
    pub fn clear(&mut self) {
        if self.words.len() >= crate::bitmap::CLEAR_BY_REMAP_WORDS {
            if let Ok(fresh) = mem::zeroed_words(self.words.len()) {
                self.words = fresh;
                return;
            }
        }
        self.words.fill(0);
    }

    /// The values seen exactly once, ascending.
    pub fn iter_once(&self) -> IterState<'_> {
        Iter::new(&self.words, LOW, 1)
    }

    /// The values seen twice or more, ascending.
    pub fn iter_many(&self) -> IterState<'_> {
        Iter::new(&self.words, LOW << 1, 1)
    }

    /// Appends to `out`, ascending, `offset + x` (wrapping) for every value `x` of
    /// `range` (clipped to the universe) seen exactly once: [`iter_once`](Self::iter_once)
    /// in bulk. On AVX-512 with BMI2 it is branch-free (each word's 32 fields gathered
    /// with `pext`, the values compressed 16 at a time), else a trailing-zero scan. The
    /// offset places a table of one value range: `offset` is the range's first value.
    pub fn append_once(&self, range: core::ops::Range<u64>, offset: u32, out: &mut Vec<u32>) {
        self.append_state(range, 0, offset, out);
    }

    /// As [`append_once`](Self::append_once), for the values seen twice or more.
    pub fn append_many(&self, range: core::ops::Range<u64>, offset: u32, out: &mut Vec<u32>) {
        self.append_state(range, 1, offset, out);
    }

    /// Calls `f` with the values `offset + x` of `range` seen exactly once, ascending, a
    /// block of at most 2048 at a time (those of 64 words of the table): the listing of
    /// [`append_once`](Self::append_once) through a buffer that stays in L1 cache, for a
    /// caller that formats or filters the values as they come.
    pub fn for_each_once_block(
        &self,
        range: core::ops::Range<u64>,
        offset: u32,
        mut f: impl FnMut(&[u32]),
    ) {
        const BLOCK: u64 = 64 * 32;
        let end = range.end.min(self.universe);
        let mut lo = range.start;
        let mut buf = Vec::with_capacity(BLOCK as usize + 16);
        while lo < end {
            let hi = end.min((lo / BLOCK + 1) * BLOCK);
            buf.clear();
            self.append_state(lo..hi, 0, offset, &mut buf);
            if !buf.is_empty() {
                f(&buf);
            }
            lo = hi;
        }
    }

    fn append_state(
        &self,
        range: core::ops::Range<u64>,
        high: u32,
        offset: u32,
        out: &mut Vec<u32>,
    ) {
        let (start, end) = (range.start, range.end.min(self.universe));
        if start >= end {
            return;
        }
        // The partial words at either end, field by field; the whole words between, in bulk.
        let partial = |word: u64, from: u64, to: u64, out: &mut Vec<u32>| {
            let w = self.words[word as usize];
            for f in from..to {
                if (w >> (2 * f + u64::from(high))) & 1 == 1 {
                    out.push(offset.wrapping_add((word * 32 + f) as u32));
                }
            }
        };
        let (first_full, end_full) = (start.div_ceil(32), end / 32);
        if first_full > end_full {
            partial(start / 32, start % 32, end % 32, out);
            return;
        }
        if start % 32 != 0 {
            partial(start / 32, start % 32, 32, out);
        }
        kernels::append_fields(
            self.backend,
            &self.words[first_full as usize..end_full as usize],
            high,
            offset.wrapping_add((first_full * 32) as u32),
            out,
        );
        if end % 32 != 0 {
            partial(end_full, 0, end % 32, out);
        }
    }

    /// Adds the counts of `other` (once + once = many; many absorbs), SIMD.
    ///
    /// # Errors
    /// [`BitmapError::UniverseMismatch`] (nothing changes).
    pub fn merge(&mut self, other: &TwoBitmap) -> Result<()> {
        if self.universe != other.universe {
            return Err(BitmapError::UniverseMismatch {
                left: self.universe,
                right: other.universe,
            });
        }
        kernels::binary(self.backend, Op::Merge2, &mut self.words, &other.words);
        Ok(())
    }

    /// Serializes (kind [`FilterKind::TwoBitmap`], number of bits = 2 x universe, items =
    /// distinct values).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.words.len() * 8);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail and the set cannot change meanwhile");
        out
    }

    /// Streams the serialized 2-bitmap into `writer`.
    ///
    /// # Errors
    /// `Core(Io)` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        crate::encode_words(
            writer,
            FilterKind::TwoBitmap,
            self.universe * 2,
            self.count_distinct(),
            &self.words,
        )
    }

    /// Reads a 2-bitmap written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// `Core(Corrupt)` (bad header, checksum, length, a `11` field, bits beyond the
    /// universe, wrong item count), `Core(UnsupportedVersion)`, `Core(AllocationFailed)`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        TwoBitmapView::from_bytes(bytes)?.to_two_bitmap()
    }

    /// Reads one serialized 2-bitmap from `reader`.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), and `Core(Io)`.
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        let bytes = bloomforge_core::format::read_serialized(reader)?;
        Self::from_bytes(&bytes)
    }
}

/// A read-only view of a serialized [`TwoBitmap`] (value `x` is the field at bits
/// `2 * (x % 4)` of payload byte `x / 4`): no copy, no alignment needed.
#[derive(Clone, Copy, Debug)]
pub struct TwoBitmapView<'a> {
    payload: &'a [u8],
    universe: u64,
    distinct: u64,
}

impl<'a> TwoBitmapView<'a> {
    /// Checks `bytes` and views them.
    ///
    /// # Errors
    /// As [`TwoBitmap::from_bytes`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
        let (universe, items, payload) = crate::decode_words(bytes, FilterKind::TwoBitmap, 2)?;
        let used_in_last = (universe * 2) % 64;
        let words = payload.len() / 8;
        let mut distinct = 0u64;
        for (i, c) in payload.chunks_exact(8).enumerate() {
            let w = bloomforge_core::format::u64_at(c, 0);
            if w & (w >> 1) & LOW != 0 {
                return Err(corrupt("a 2-bitmap field holds the unused state 11"));
            }
            if i + 1 == words && used_in_last != 0 && w >> used_in_last != 0 {
                return Err(corrupt("bits set beyond the universe"));
            }
            distinct += u64::from(w.count_ones());
        }
        if distinct != items {
            return Err(corrupt("item count does not match the fields set"));
        }
        Ok(TwoBitmapView {
            payload,
            universe,
            distinct,
        })
    }

    /// How often `x` was seen.
    #[inline]
    pub fn seen(&self, x: u32) -> Seen {
        if u64::from(x) >= self.universe {
            return Seen::Never;
        }
        Seen::from_field(u64::from(self.payload[(x >> 2) as usize] >> ((x & 3) * 2)) & 3)
    }

    /// Number of distinct values seen.
    pub fn count_distinct(&self) -> u64 {
        self.distinct
    }

    /// Number of distinct values seen, as [`TwoBitmap::len`].
    pub fn len(&self) -> u64 {
        self.distinct
    }

    /// Whether nothing was inserted (`len() == 0`).
    pub fn is_empty(&self) -> bool {
        self.distinct == 0
    }

    /// The universe.
    pub fn universe(&self) -> u64 {
        self.universe
    }

    /// An owned copy.
    ///
    /// # Errors
    /// `Core(AllocationFailed)`.
    pub fn to_two_bitmap(&self) -> Result<TwoBitmap> {
        let mut t = TwoBitmap::new(self.universe)?;
        bulk::load_words(self.payload, &mut t.words);
        Ok(t)
    }
}

/// A [`TwoBitmap`] with `&self` inserts from many threads.
///
/// # The insert protocol
/// An insert is one compare-and-swap loop on the value's word: load `w`, compute the word
/// with this value's field bumped (`00 -> 01 -> 10`, `10` stays), `compare_exchange`;
/// on failure retry from the word the CAS returned. Each successful CAS is a
/// read-modify-write, and all read-modify-writes of one atomic word form a single total
/// (modification) order in which each reads the value the previous one wrote. So the
/// inserts of one value are applied one after another, each to the state the previous
/// one left: after two inserts of `x` have returned, the field has gone through two bumps
/// and is `10`, never `01`; and a concurrent insert of another value in the same word
/// fails the CAS and retries instead of overwriting. No insert is lost, `11` never
/// appears, and the `Seen` an insert returns is exactly the state it moved from (exactly
/// one insert of each value returns `Never`, at most one returns `Once`).
pub struct AtomicTwoBitmap {
    words: Box<[AtomicU64]>,
    universe: u64,
}

impl core::fmt::Debug for AtomicTwoBitmap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicTwoBitmap")
            .field("universe", &self.universe)
            .finish_non_exhaustive()
    }
}

impl AtomicTwoBitmap {
    /// An empty atomic 2-bitmap over `0..universe` (`1..=2^32`), lazily zero-filled.
    ///
    /// No builder, as for [`AtomicBitmap`](crate::AtomicBitmap): the universe is the only
    /// parameter; `AtomicTwoBitmap::from(TwoBitmap::builder()...build()?)` converts for
    /// free.
    ///
    /// # Errors
    /// [`BitmapError::InvalidUniverse`] or `Core(AllocationFailed)`.
    pub fn new(universe: u64) -> Result<Self> {
        check_universe(universe)?;
        Ok(AtomicTwoBitmap {
            words: mem::zeroed_atomic_words(universe.div_ceil(32) as usize)?,
            universe,
        })
    }

    /// An empty atomic 2-bitmap over every `u32` (1 GiB).
    ///
    /// # Errors
    /// `Core(AllocationFailed)`.
    pub fn full_u32() -> Result<Self> {
        Self::new(MAX_UNIVERSE)
    }

    /// The universe.
    pub fn universe(&self) -> u64 {
        self.universe
    }

    /// Records one occurrence of `x` (see the type's docs for the protocol); returns the
    /// state it moved from.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`].
    #[inline]
    pub fn insert(&self, x: u32) -> Result<Seen> {
        if u64::from(x) >= self.universe {
            return Err(BitmapError::OutOfRange {
                value: x,
                universe: self.universe,
            });
        }
        let word = &self.words[(x >> 5) as usize];
        let s = shift(x);
        let mut w = word.load(Ordering::Relaxed);
        loop {
            let f = (w >> s) & 3;
            if f >= 2 {
                // Already many: nothing to write (a read of the final state).
                return Ok(Seen::Many);
            }
            match word.compare_exchange_weak(w, bumped(w, s), Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Ok(Seen::from_field(f)),
                Err(now) => w = now,
            }
        }
    }

    /// Records every value, prefetching ahead.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] if any value is outside the universe (nothing changes).
    pub fn insert_batch(&self, values: &[u32]) -> Result<()> {
        if let Some(&m) = values.iter().max() {
            if u64::from(m) >= self.universe {
                return Err(BitmapError::OutOfRange {
                    value: m,
                    universe: self.universe,
                });
            }
        }
        let base = self.words.as_ptr();
        for (i, &v) in values.iter().enumerate() {
            if let Some(&ahead) = values.get(i + bulk::AHEAD) {
                prefetch(base.wrapping_add((ahead >> 5) as usize));
            }
            self.insert(v)?;
        }
        Ok(())
    }

    /// How often `x` was seen so far.
    pub fn seen(&self, x: u32) -> Seen {
        match self.words.get((x >> 5) as usize) {
            Some(w) if u64::from(x) < self.universe => {
                Seen::from_field((w.load(Ordering::Relaxed) >> shift(x)) & 3)
            }
            _ => Seen::Never,
        }
    }

    /// Number of distinct values seen (once or many), as [`TwoBitmap::len`]. Relaxed
    /// loads: a snapshot if inserts run concurrently.
    pub fn len(&self) -> u64 {
        self.words
            .iter()
            .map(|w| {
                let w = w.load(Ordering::Relaxed);
                u64::from((w & LOW).count_ones() + (w & (LOW << 1)).count_ones())
            })
            .sum()
    }

    /// Whether nothing was inserted (`len() == 0`; a snapshot, as [`len`](Self::len)).
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| w.load(Ordering::Relaxed) == 0)
    }

    /// Serializes a snapshot (word by word if inserts run concurrently) in [`TwoBitmap`]'s
    /// format: [`TwoBitmap::from_bytes`] and [`from_bytes`](Self::from_bytes) read it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.words.len() * 8);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail and the snapshot cannot change meanwhile");
        out
    }

    /// Streams a snapshot of the 2-bitmap into `writer` (as [`to_bytes`](Self::to_bytes);
    /// the words are copied first, so the item count and checksum agree with them).
    ///
    /// # Errors
    /// `Core(Io)` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let words = mem::snapshot(&self.words);
        let distinct = words
            .iter()
            .map(|&w| u64::from((w & LOW).count_ones() + (w & (LOW << 1)).count_ones()))
            .sum();
        crate::encode_words(
            writer,
            FilterKind::TwoBitmap,
            self.universe * 2,
            distinct,
            &words,
        )
    }

    /// Reads a 2-bitmap written by [`to_bytes`](Self::to_bytes) or
    /// [`TwoBitmap::to_bytes`].
    ///
    /// # Errors
    /// As [`TwoBitmap::from_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        TwoBitmap::from_bytes(bytes).map(AtomicTwoBitmap::from)
    }

    /// Reads one serialized 2-bitmap from `reader`.
    ///
    /// # Errors
    /// As [`TwoBitmap::read_from`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        TwoBitmap::read_from(reader).map(AtomicTwoBitmap::from)
    }

    /// The plain 2-bitmap (no copy).
    pub fn into_inner(self) -> TwoBitmap {
        TwoBitmap {
            words: mem::atomic_into_plain(self.words),
            universe: self.universe,
            backend: Backend::detect(),
        }
    }
}

/// No copy, as [`AtomicTwoBitmap::into_inner`].
impl From<AtomicTwoBitmap> for TwoBitmap {
    fn from(a: AtomicTwoBitmap) -> Self {
        a.into_inner()
    }
}

/// No copy: the words are reinterpreted as atomics.
impl From<TwoBitmap> for AtomicTwoBitmap {
    fn from(t: TwoBitmap) -> Self {
        AtomicTwoBitmap {
            words: mem::plain_into_atomic(t.words),
            universe: t.universe,
        }
    }
}

/// Counts the values into a 2-bitmap whose universe is `0..=max` of the values (1 for
/// none): the values are gathered first to find it.
impl FromIterator<u32> for TwoBitmap {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let values: Vec<u32> = iter.into_iter().collect();
        let universe = values.iter().max().map_or(1, |&m| u64::from(m) + 1);
        let mut t = TwoBitmap::new(universe).expect("universe of at most 2^32 values: allocation");
        t.insert_batch(&values)
            .expect("every value is below max + 1");
        t
    }
}

/// Records every value.
///
/// # Panics
/// On a value outside the universe (values before it are recorded).
impl Extend<u32> for TwoBitmap {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| {
            if self.insert_batch(chunk).is_err() {
                // A value outside the universe: the batch recorded nothing, so record up
                // to that value one by one and panic there.
                for &x in chunk {
                    if let Err(e) = self.insert(x) {
                        panic!("{e}");
                    }
                }
            }
        });
    }
}

/// Counts the values as [`TwoBitmap`]'s `FromIterator` does (universe `0..=max`, 1 for
/// none), then converts for free.
impl FromIterator<u32> for AtomicTwoBitmap {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<TwoBitmap>())
    }
}

/// Records every value (the `&self` insert; `&mut self` only because `Extend` asks for
/// it: extend through a shared reference, `(&bitmap).extend(values)`, from any number of
/// threads).
///
/// # Panics
/// On a value outside the universe (values before it are recorded), as [`TwoBitmap`]'s.
impl Extend<u32> for AtomicTwoBitmap {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        (&*self).extend(iter);
    }
}

/// As the owned `Extend`, through a shared reference.
///
/// # Panics
/// On a value outside the universe (values before it are recorded).
impl Extend<u32> for &AtomicTwoBitmap {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| {
            if self.insert_batch(chunk).is_err() {
                // A value outside the universe: the batch inserted nothing, so insert up
                // to that value one by one and panic there.
                for &x in chunk {
                    if let Err(e) = self.insert(x) {
                        panic!("AtomicTwoBitmap::extend: {e}");
                    }
                }
            }
        });
    }
}
