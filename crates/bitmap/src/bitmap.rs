//! The plain bitmap, its atomic form and its zero-copy view.

use crate::kernels::{self, Op};
use crate::{bulk, check_universe, corrupt, mem, BitmapError, Result, MAX_UNIVERSE};
use bloomforge_core::batch::prefetch;
use bloomforge_core::format::FilterKind;
use bloomforge_core::Backend;
use core::sync::atomic::{AtomicU64, Ordering};

/// A set of `u32` values below a universe `n` (up to 2^32), one bit per value.
///
/// `Bitmap::full_u32()` covers every `u32` in 512 MiB, allocated as zero pages the OS
/// fills on first write. Inserting a value outside the universe panics ([`Bitmap::insert`])
/// or is refused ([`Bitmap::try_insert`], the batch calls); queries outside it answer
/// "absent".
#[derive(Clone)]
pub struct Bitmap {
    words: Vec<u64>,
    universe: u64,
    backend: Backend,
}

/// Builder of a [`Bitmap`]: `Bitmap::builder().universe(n).build()`.
#[derive(Clone, Debug)]
#[must_use]
pub struct BitmapBuilder {
    universe: u64,
    backend: Option<Backend>,
}

impl BitmapBuilder {
    /// The universe `0..n` (default 2^32, every `u32`).
    pub fn universe(mut self, n: u64) -> Self {
        self.universe = n;
        self
    }

    /// The SIMD backend for popcounts and set algebra (default: [`Backend::detect`]).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Builds the empty bitmap.
    ///
    /// # Errors
    /// [`BitmapError::InvalidUniverse`], [`BitmapError::BackendUnavailable`], or
    /// `Core(AllocationFailed)`.
    pub fn build(self) -> Result<Bitmap> {
        let mut b = Bitmap::new(self.universe)?;
        if let Some(backend) = self.backend {
            b.set_backend(backend)?;
        }
        Ok(b)
    }
}

impl core::fmt::Debug for Bitmap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Bitmap")
            .field("universe", &self.universe)
            .field("memory_bytes", &self.memory_bytes())
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Bitmap {
    fn eq(&self, other: &Self) -> bool {
        self.universe == other.universe && self.words == other.words
    }
}

impl Eq for Bitmap {}

/// Arrays of at least this many words (64 MiB) are cleared by swapping in fresh zero pages
/// (a few page faults later) instead of writing zeros; below it writing is cheaper, and it
/// keeps a table that is cleared and refilled in a loop in cache.
pub(crate) const CLEAR_BY_REMAP_WORDS: usize = 1 << 23;

#[inline(always)]
fn bit(x: u32) -> u64 {
    1u64 << (x & 63)
}

impl Bitmap {
    /// An empty bitmap over the universe `0..universe` (`universe` in `1..=2^32`), taking
    /// `universe / 8` bytes, lazily zero-filled.
    ///
    /// # Errors
    /// [`BitmapError::InvalidUniverse`] or `Core(AllocationFailed)`.
    pub fn new(universe: u64) -> Result<Self> {
        check_universe(universe)?;
        let words = mem::zeroed_words(universe.div_ceil(64) as usize)?;
        Ok(Bitmap {
            words,
            universe,
            backend: Backend::detect(),
        })
    }

    /// An empty bitmap over every `u32` (512 MiB, lazily zero-filled).
    ///
    /// # Errors
    /// `Core(AllocationFailed)` where 512 MiB cannot be reserved.
    pub fn full_u32() -> Result<Self> {
        Self::new(MAX_UNIVERSE)
    }

    /// A builder (universe and backend).
    pub fn builder() -> BitmapBuilder {
        BitmapBuilder {
            universe: MAX_UNIVERSE,
            backend: None,
        }
    }

    /// The universe: values `0..universe()` can be held.
    pub fn universe(&self) -> u64 {
        self.universe
    }

    /// Bytes of the bit array.
    pub fn memory_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// The words (value `x` is bit `x % 64` of word `x / 64`).
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// The SIMD backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Sets the SIMD backend (for tests and benchmarks; every backend answers alike).
    ///
    /// # Errors
    /// [`BitmapError::BackendUnavailable`] if this CPU cannot run it.
    pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
        kernels::check_backend(backend)?;
        self.backend = backend;
        Ok(())
    }

    fn check(&self, x: u32) -> Result<()> {
        if u64::from(x) < self.universe {
            Ok(())
        } else {
            Err(BitmapError::OutOfRange {
                value: x,
                universe: self.universe,
            })
        }
    }

    fn check_all(&self, values: &[u32]) -> Result<()> {
        if self.universe == MAX_UNIVERSE {
            return Ok(());
        }
        match values.iter().copied().max() {
            Some(m) => self.check(m),
            None => Ok(()),
        }
    }

    /// Inserts `x`; returns whether it was absent.
    ///
    /// # Panics
    /// If `x >= universe()` (use [`try_insert`](Self::try_insert) for unchecked input).
    #[inline]
    pub fn insert(&mut self, x: u32) -> bool {
        if let Err(e) = self.check(x) {
            panic!("{e}");
        }
        let w = &mut self.words[(x >> 6) as usize];
        let new = *w & bit(x) == 0;
        *w |= bit(x);
        new
    }

    /// Inserts `x`; returns whether it was absent.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] if `x >= universe()` (nothing changes).
    pub fn try_insert(&mut self, x: u32) -> Result<bool> {
        self.check(x)?;
        Ok(self.insert(x))
    }

    /// Whether `x` is in the set (`false` outside the universe).
    #[inline]
    pub fn contains(&self, x: u32) -> bool {
        match self.words.get((x >> 6) as usize) {
            Some(w) => w & bit(x) != 0,
            None => false,
        }
    }

    /// Removes `x`; returns whether it was present.
    #[inline]
    pub fn remove(&mut self, x: u32) -> bool {
        match self.words.get_mut((x >> 6) as usize) {
            Some(w) => {
                let was = *w & bit(x) != 0;
                *w &= !bit(x);
                was
            }
            None => false,
        }
    }

    /// Number of values in the set (a SIMD popcount of the whole array: O(universe / 64)).
    pub fn len(&self) -> u64 {
        kernels::popcount(self.backend, &self.words, u64::MAX)
    }

    /// Whether the set is empty (O(universe / 64)).
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Removes every value. Large arrays (64 MiB and more) are replaced by fresh zero
    /// pages rather than written (falling back to writing zeros if that allocation fails);
    /// smaller ones, which a loop may clear again and again, are zeroed in place.
    pub fn clear(&mut self) {
        if self.words.len() >= CLEAR_BY_REMAP_WORDS {
            if let Ok(fresh) = mem::zeroed_words(self.words.len()) {
                self.words = fresh;
                return;
            }
        }
        self.words.fill(0);
    }

    /// The values in ascending order (a trailing-zero scan of the words).
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(&self.words, u64::MAX, 0)
    }

    /// Number of values in the set below `x` (`x` up to `universe()`; larger `x` count the
    /// whole set). O(x / 64), SIMD popcount.
    pub fn rank(&self, x: u64) -> u64 {
        let x = x.min(self.universe);
        let full = (x / 64) as usize;
        let mut r = kernels::popcount(self.backend, &self.words[..full], u64::MAX);
        if !x.is_multiple_of(64) {
            r += u64::from((self.words[full] & ((1u64 << (x % 64)) - 1)).count_ones());
        }
        r
    }

    /// The `k`-th smallest value (`k` from 0), or `None` if the set has at most `k` values.
    /// O(position / 64).
    pub fn select(&self, k: u64) -> Option<u32> {
        select_in(&self.words, k, 0)
    }

    /// Inserts every value, prefetching ahead (sorted or not).
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] if any value is outside the universe (nothing is
    /// inserted then).
    pub fn insert_batch(&mut self, values: &[u32]) -> Result<()> {
        self.check_all(values)?;
        bulk::apply_prefetched(&mut self.words, 6, values, |w, v| {
            w[(v >> 6) as usize] |= bit(v)
        });
        Ok(())
    }

    /// Inserts every value on all rayon threads: each thread owns a contiguous range of
    /// words (the values' high bits) and updates only the values of its range, so no
    /// atomics. A batch with at least one value per 512 values of universe is first
    /// bucketed by 1 MiB region of the table (a scratch copy of the batch, 4 bytes per
    /// value; skipped if that allocation fails), so each region's updates run in cache;
    /// a sparser one is bucketed by range the same way from 4 threads on (each value read
    /// a fixed number of times, whatever the thread count), and below that each thread
    /// scans the batch for its range's values.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] as [`insert_batch`](Self::insert_batch).
    pub fn par_insert_batch(&mut self, values: &[u32]) -> Result<()> {
        self.check_all(values)?;
        bulk::par_apply(&mut self.words, 6, values, |w, v| {
            w[(v >> 6) as usize] |= bit(v)
        });
        Ok(())
    }

    /// `out[i] = contains(values[i])`, prefetching ahead.
    ///
    /// # Errors
    /// `Core(LengthMismatch)` if the slices differ in length (`out` untouched).
    pub fn contains_batch(&self, values: &[u32], out: &mut [bool]) -> Result<()> {
        if values.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: values.len(),
                out: out.len(),
            }
            .into());
        }
        let base = self.words.as_ptr();
        for (i, (&v, o)) in values.iter().zip(out.iter_mut()).enumerate() {
            if let Some(&ahead) = values.get(i + bulk::AHEAD) {
                prefetch(base.wrapping_add((ahead >> 6) as usize));
            }
            *o = self.contains(v);
        }
        Ok(())
    }

    fn combine(&mut self, other: &Bitmap, op: Op) -> Result<()> {
        if self.universe != other.universe {
            return Err(BitmapError::UniverseMismatch {
                left: self.universe,
                right: other.universe,
            });
        }
        kernels::binary(self.backend, op, &mut self.words, &other.words);
        Ok(())
    }

    /// `self = self ∪ other` (SIMD).
    ///
    /// # Errors
    /// [`BitmapError::UniverseMismatch`] (nothing changes).
    pub fn union(&mut self, other: &Bitmap) -> Result<()> {
        self.combine(other, Op::Or)
    }

    /// `self = self ∩ other` (SIMD).
    ///
    /// # Errors
    /// [`BitmapError::UniverseMismatch`] (nothing changes).
    pub fn intersect(&mut self, other: &Bitmap) -> Result<()> {
        self.combine(other, Op::And)
    }

    /// `self = self \ other` (SIMD).
    ///
    /// # Errors
    /// [`BitmapError::UniverseMismatch`] (nothing changes).
    pub fn difference(&mut self, other: &Bitmap) -> Result<()> {
        self.combine(other, Op::AndNot)
    }

    /// `self = self △ other`, the symmetric difference (SIMD).
    ///
    /// # Errors
    /// [`BitmapError::UniverseMismatch`] (nothing changes).
    pub fn xor(&mut self, other: &Bitmap) -> Result<()> {
        self.combine(other, Op::Xor)
    }

    /// Inserts every value of an iterator.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] for a value outside the universe; the values are
    /// collected and checked first, so nothing is inserted then.
    pub fn try_extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) -> Result<()> {
        let values: Vec<u32> = iter.into_iter().collect();
        self.insert_batch(&values)
    }

    /// Serializes (kind [`FilterKind::Bitmap`], number of bits = the universe).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.words.len() * 8);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail and the set cannot change meanwhile");
        out
    }

    /// Streams the serialized bitmap into `writer`.
    ///
    /// # Errors
    /// `Core(Io)` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        crate::encode_words(
            writer,
            FilterKind::Bitmap,
            self.universe,
            self.len(),
            &self.words,
        )
    }

    /// Reads a bitmap written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// `Core(Corrupt)` (bad header, checksum, length, set padding bits or item count),
    /// `Core(UnsupportedVersion)`, `Core(AllocationFailed)`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let view = BitmapView::from_bytes(bytes)?;
        let mut b = Bitmap::new(view.universe)?;
        bulk::load_words(view.payload, &mut b.words);
        Ok(b)
    }

    /// Reads one serialized bitmap from `reader` (buffered: it allocates only as the data
    /// arrives).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), and `Core(Io)`.
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        let bytes = bloomforge_core::format::read_serialized(reader)?;
        Self::from_bytes(&bytes)
    }
}

/// The `k`-th set bit (from 0) of `words`, as a value offset by `base`.
fn select_in(words: &[u64], mut k: u64, base: u64) -> Option<u32> {
    for (i, &w) in words.iter().enumerate() {
        let c = u64::from(w.count_ones());
        if k < c {
            let mut w = w;
            for _ in 0..k {
                w &= w - 1;
            }
            return Some((base + i as u64 * 64 + u64::from(w.trailing_zeros())) as u32);
        }
        k -= c;
    }
    None
}

/// Values of a bitmap (or of one state of a 2-bitmap) in ascending order.
///
/// Scans words for set bits under a mask (all bits for a bitmap, the low or high bit of
/// each field for a 2-bitmap) with trailing-zero counts.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    words: &'a [u64],
    next_word: usize,
    current: u64,
    mask: u64,
    /// 0 for a bitmap (64 values a word), 1 for a 2-bitmap (32 values a word).
    field_shift: u32,
}

impl<'a> Iter<'a> {
    pub(crate) fn new(words: &'a [u64], mask: u64, field_shift: u32) -> Self {
        Iter {
            words,
            next_word: 0,
            current: 0,
            mask,
            field_shift,
        }
    }
}

impl Iterator for Iter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.current == 0 {
            let w = *self.words.get(self.next_word)?;
            self.current = w & self.mask;
            self.next_word += 1;
        }
        let t = self.current.trailing_zeros();
        self.current &= self.current - 1;
        let per_word = 64 >> self.field_shift;
        Some(((self.next_word as u64 - 1) * per_word + u64::from(t >> self.field_shift)) as u32)
    }
}

impl<'a> IntoIterator for &'a Bitmap {
    type Item = u32;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Collects into a bitmap whose universe is `0..=max` of the values (1 for none): the
/// values are gathered first to find it.
impl FromIterator<u32> for Bitmap {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let values: Vec<u32> = iter.into_iter().collect();
        let universe = values.iter().max().map_or(1, |&m| u64::from(m) + 1);
        let mut b = Bitmap::new(universe).expect("universe of at most 2^32 values: allocation");
        b.insert_batch(&values)
            .expect("every value is below max + 1");
        b
    }
}

/// Inserts every value.
///
/// # Panics
/// On a value outside the universe (values before it are inserted); use
/// [`Bitmap::try_extend`] to refuse such input as a whole.
impl Extend<u32> for Bitmap {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| {
            if self.insert_batch(chunk).is_err() {
                // A value outside the universe: the batch inserted nothing, so insert up to
                // that value one by one and panic there.
                for &x in chunk {
                    self.insert(x);
                }
            }
        });
    }
}

/// A read-only view of a serialized [`Bitmap`]: queries read the payload in place
/// (value `x` is bit `x % 8` of payload byte `x / 8`), so no alignment or copy is needed.
#[derive(Clone, Copy, Debug)]
pub struct BitmapView<'a> {
    payload: &'a [u8],
    universe: u64,
    len: u64,
}

impl<'a> BitmapView<'a> {
    /// Checks `bytes` (header, checksum, padding bits, item count) and views them.
    ///
    /// # Errors
    /// As [`Bitmap::from_bytes`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
        let (universe, items, payload) = crate::decode_words(bytes, FilterKind::Bitmap, 1)?;
        let full = (universe / 64) as usize * 8;
        let tail = &payload[full..];
        if !universe.is_multiple_of(64) {
            let last = bloomforge_core::format::u64_at(tail, 0);
            if last >> (universe % 64) != 0 {
                return Err(corrupt("bits set beyond the universe"));
            }
        }
        let len: u64 = payload
            .chunks_exact(8)
            .map(|c| u64::from(bloomforge_core::format::u64_at(c, 0).count_ones()))
            .sum();
        if len != items {
            return Err(corrupt("item count does not match the bits set"));
        }
        Ok(BitmapView {
            payload,
            universe,
            len,
        })
    }

    /// Whether `x` is in the set.
    #[inline]
    pub fn contains(&self, x: u32) -> bool {
        u64::from(x) < self.universe && self.payload[(x >> 3) as usize] >> (x & 7) & 1 != 0
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The universe.
    pub fn universe(&self) -> u64 {
        self.universe
    }

    /// An owned copy.
    ///
    /// # Errors
    /// `Core(AllocationFailed)`.
    pub fn to_bitmap(&self) -> Result<Bitmap> {
        let mut b = Bitmap::new(self.universe)?;
        bulk::load_words(self.payload, &mut b.words);
        Ok(b)
    }
}

/// A [`Bitmap`] with `&self` inserts and removes from many threads (`fetch_or` /
/// `fetch_and` on the word, so no insert is ever lost). Queries ([`contains`],
/// [`contains_batch`], [`len`], [`iter`]) run alongside; convert with
/// [`into_inner`](Self::into_inner) (no copy) or [`to_bitmap`](Self::to_bitmap) (a
/// snapshot) for set algebra and serialization, and back with `From<Bitmap>` (no copy).
///
/// [`contains`]: Self::contains
/// [`contains_batch`]: Self::contains_batch
/// [`len`]: Self::len
/// [`iter`]: Self::iter
pub struct AtomicBitmap {
    words: Box<[AtomicU64]>,
    universe: u64,
}

impl core::fmt::Debug for AtomicBitmap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicBitmap")
            .field("universe", &self.universe)
            .finish_non_exhaustive()
    }
}

impl AtomicBitmap {
    /// An empty set over `0..universe` (`1..=2^32`), lazily zero-filled.
    ///
    /// The atomic bitmaps have no builder (docs/conventions.md): the universe is their
    /// only parameter (no hasher, no false-positive rate, no backend to choose), so
    /// `new(universe)` is the whole construction; `AtomicBitmap::from(Bitmap::builder()
    /// ...build()?)` converts a built bitmap for free.
    ///
    /// # Errors
    /// [`BitmapError::InvalidUniverse`] or `Core(AllocationFailed)`.
    pub fn new(universe: u64) -> Result<Self> {
        check_universe(universe)?;
        Ok(AtomicBitmap {
            words: mem::zeroed_atomic_words(universe.div_ceil(64) as usize)?,
            universe,
        })
    }

    /// An empty set over every `u32` (512 MiB, lazily zero-filled).
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

    /// Bytes of the bit array.
    pub fn memory_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    fn word(&self, x: u32) -> Result<&AtomicU64> {
        self.words
            .get((x >> 6) as usize)
            .ok_or(BitmapError::OutOfRange {
                value: x,
                universe: self.universe,
            })
    }

    /// Inserts `x` (one `fetch_or`); returns whether this call added it.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`].
    #[inline]
    pub fn insert(&self, x: u32) -> Result<bool> {
        if u64::from(x) >= self.universe {
            return Err(BitmapError::OutOfRange {
                value: x,
                universe: self.universe,
            });
        }
        Ok(self.word(x)?.fetch_or(bit(x), Ordering::Relaxed) & bit(x) == 0)
    }

    /// Whether `x` is in the set.
    #[inline]
    pub fn contains(&self, x: u32) -> bool {
        self.word(x)
            .is_ok_and(|w| w.load(Ordering::Relaxed) & bit(x) != 0)
    }

    /// Removes `x` (one `fetch_and`); returns whether this call removed it.
    pub fn remove(&self, x: u32) -> bool {
        self.word(x)
            .is_ok_and(|w| w.fetch_and(!bit(x), Ordering::Relaxed) & bit(x) != 0)
    }

    /// Inserts every value, prefetching ahead.
    ///
    /// # Errors
    /// [`BitmapError::OutOfRange`] if any value is outside the universe (nothing inserted).
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
                prefetch(base.wrapping_add((ahead >> 6) as usize));
            }
            self.words[(v >> 6) as usize].fetch_or(bit(v), Ordering::Relaxed);
        }
        Ok(())
    }

    /// `out[i] = contains(values[i])`, prefetching ahead (each answer is one relaxed load,
    /// so inserts running meanwhile may or may not be seen).
    ///
    /// # Errors
    /// `Core(LengthMismatch)` if the slices differ in length (`out` untouched).
    pub fn contains_batch(&self, values: &[u32], out: &mut [bool]) -> Result<()> {
        if values.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: values.len(),
                out: out.len(),
            }
            .into());
        }
        let base = self.words.as_ptr();
        for (i, (&v, o)) in values.iter().zip(out.iter_mut()).enumerate() {
            if let Some(&ahead) = values.get(i + bulk::AHEAD) {
                prefetch(base.wrapping_add((ahead >> 6) as usize));
            }
            *o = self.contains(v);
        }
        Ok(())
    }

    /// Number of values: a hardware popcount of each word (one relaxed load a word; a
    /// snapshot word by word if inserts run concurrently). O(universe / 64).
    pub fn len(&self) -> u64 {
        kernels::popcount_atomic(&self.words)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| w.load(Ordering::Relaxed) == 0)
    }

    /// Removes every value. It takes `&mut self`, so no insert can run meanwhile; large
    /// arrays are replaced by fresh zero pages rather than written (as
    /// [`Bitmap::clear`]).
    pub fn clear(&mut self) {
        if self.words.len() >= CLEAR_BY_REMAP_WORDS {
            if let Ok(fresh) = mem::zeroed_atomic_words(self.words.len()) {
                self.words = fresh;
                return;
            }
        }
        for w in self.words.iter_mut() {
            *w.get_mut() = 0;
        }
    }

    /// The values in ascending order, each word read once with a relaxed load (values
    /// inserted or removed concurrently may or may not be seen).
    pub fn iter(&self) -> AtomicIter<'_> {
        AtomicIter {
            words: &self.words,
            next_word: 0,
            current: 0,
        }
    }

    /// A copy as a plain [`Bitmap`] (a snapshot, word by word, if inserts run
    /// concurrently; only non-zero words are written, so a sparse set stays cheap).
    ///
    /// # Errors
    /// `Core(AllocationFailed)`.
    pub fn to_bitmap(&self) -> Result<Bitmap> {
        let mut b = Bitmap::new(self.universe)?;
        for (d, s) in b.words.iter_mut().zip(self.words.iter()) {
            let w = s.load(Ordering::Relaxed);
            if w != 0 {
                *d = w;
            }
        }
        Ok(b)
    }

    /// Serializes a snapshot (word by word if inserts run concurrently) in [`Bitmap`]'s
    /// format: [`Bitmap::from_bytes`] and [`from_bytes`](Self::from_bytes) read it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.words.len() * 8);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail and the snapshot cannot change meanwhile");
        out
    }

    /// Streams a snapshot of the bitmap into `writer` (as [`to_bytes`](Self::to_bytes);
    /// the words are copied first, so the item count and checksum agree with them).
    ///
    /// # Errors
    /// `Core(Io)` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let words = mem::snapshot(&self.words);
        let len = words.iter().map(|w| u64::from(w.count_ones())).sum();
        crate::encode_words(writer, FilterKind::Bitmap, self.universe, len, &words)
    }

    /// Reads a bitmap written by [`to_bytes`](Self::to_bytes) or [`Bitmap::to_bytes`].
    ///
    /// # Errors
    /// As [`Bitmap::from_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Bitmap::from_bytes(bytes).map(AtomicBitmap::from)
    }

    /// Reads one serialized bitmap from `reader`.
    ///
    /// # Errors
    /// As [`Bitmap::read_from`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        Bitmap::read_from(reader).map(AtomicBitmap::from)
    }

    /// The plain bitmap (no copy).
    pub fn into_inner(self) -> Bitmap {
        Bitmap {
            words: mem::atomic_into_plain(self.words),
            universe: self.universe,
            backend: Backend::detect(),
        }
    }
}

/// Values of an [`AtomicBitmap`] in ascending order (see [`AtomicBitmap::iter`]).
#[derive(Clone, Debug)]
pub struct AtomicIter<'a> {
    words: &'a [AtomicU64],
    next_word: usize,
    current: u64,
}

impl Iterator for AtomicIter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        while self.current == 0 {
            self.current = self.words.get(self.next_word)?.load(Ordering::Relaxed);
            self.next_word += 1;
        }
        let t = self.current.trailing_zeros();
        self.current &= self.current - 1;
        Some(((self.next_word as u64 - 1) * 64 + u64::from(t)) as u32)
    }
}

impl<'a> IntoIterator for &'a AtomicBitmap {
    type Item = u32;
    type IntoIter = AtomicIter<'a>;
    fn into_iter(self) -> AtomicIter<'a> {
        self.iter()
    }
}

/// No copy: the words are reinterpreted as atomics.
impl From<Bitmap> for AtomicBitmap {
    fn from(b: Bitmap) -> Self {
        AtomicBitmap {
            words: mem::plain_into_atomic(b.words),
            universe: b.universe,
        }
    }
}

/// No copy, as [`AtomicBitmap::into_inner`].
impl From<AtomicBitmap> for Bitmap {
    fn from(a: AtomicBitmap) -> Self {
        a.into_inner()
    }
}

/// Collects the values as [`Bitmap`]'s `FromIterator` does (universe `0..=max`, 1 for
/// none), then converts for free.
impl FromIterator<u32> for AtomicBitmap {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<Bitmap>())
    }
}

/// Inserts every value (the `&self` insert; `&mut self` only because `Extend` asks for it:
/// extend through a shared reference, `(&bitmap).extend(values)`, from any number of
/// threads).
///
/// # Panics
/// On a value outside the universe (values before it are inserted), as [`Bitmap`]'s.
impl Extend<u32> for AtomicBitmap {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        (&*self).extend(iter);
    }
}

/// As the owned `Extend`, through a shared reference.
///
/// # Panics
/// On a value outside the universe (values before it are inserted).
impl Extend<u32> for &AtomicBitmap {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| {
            if self.insert_batch(chunk).is_err() {
                // A value outside the universe: the batch inserted nothing, so insert up
                // to that value one by one and panic there.
                for &x in chunk {
                    if let Err(e) = self.insert(x) {
                        panic!("AtomicBitmap::extend: {e}");
                    }
                }
            }
        });
    }
}
