//! The textbook Bloom filter: `k` probes anywhere in an `m`-bit array.

use crate::builder::BuildFilter;
use crate::error::FilterShape;
use crate::format::{FilterKind, PersistentHasher};
use crate::hash::{fast_range64, hash_one, hasher_fingerprint, mix64, DefaultHasher};
use crate::raw::{alloc_blocks, check_batch_len};
use crate::{Error, Filter, Result};
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Largest `k` a standard filter accepts.
pub const STANDARD_MAX_HASHES: u32 = 64;
/// Largest number of bits a standard filter accepts.
const STANDARD_MAX_BITS: u64 = (isize::MAX as u64 / 8) * 8;

/// Probe positions of one hash: enhanced double hashing (Dillinger & Manolios) over two
/// 64-bit values, each reduced to `0..m` with a 64-bit fast range. `h1` is the key's hash,
/// `h2` a bijective remix of it (forced odd); the cubic term of enhanced double hashing
/// breaks the short cycles plain double hashing falls into. Positions are sound for any
/// `m` up to 2^64 (no 32-bit reduction).
///
/// Public so that structures sharing this filter's hashing (the counting filter's standard
/// layout) derive identical positions.
#[derive(Clone, Copy, Debug)]
pub struct Probes {
    x: u64,
    y: u64,
    i: u64,
}

impl Probes {
    /// The probe sequence of a key with 64-bit hash `hash`.
    #[inline(always)]
    pub fn new(hash: u64) -> Self {
        Self {
            x: hash,
            y: mix64(hash) | 1,
            i: 0,
        }
    }

    /// The next position in `0..m`.
    #[inline(always)]
    pub fn next_pos(&mut self, m: u64) -> u64 {
        let p = fast_range64(self.x, m);
        self.x = self.x.wrapping_add(self.y);
        self.i += 1;
        self.y = self.y.wrapping_add(self.i);
        p
    }
}

/// The classic Bloom filter: `m` bits, `k` positions per key anywhere in the array.
///
/// Every probe is a separate cache line, so it is slower than
/// [`BlockedBloomFilter`](crate::BlockedBloomFilter) once it outgrows the cache, but its
/// false-positive rate is the textbook `(1 - e^{-kn/m})^k` at the fewest bits.
///
/// ```
/// use bloomforge_core::StandardBloomFilter;
/// let mut f = StandardBloomFilter::with_false_pos(0.001).expected_items(1000)?;
/// f.insert(&"k1");
/// assert!(f.contains(&"k1"));
/// assert_eq!(f.num_hashes(), 10);
/// # Ok::<(), bloomforge_core::Error>(())
/// ```
pub struct StandardBloomFilter<S = DefaultHasher> {
    words: Box<[u64]>,
    num_bits: u64,
    k: u32,
    hasher: S,
}

crate::builder_constructors! {
    StandardBloomFilter,
    new: "",
    false_pos: "`m = -n ln p / (ln 2)^2` bits and the best `k`.",
    with_num_bits: "exactly `bits` bits",
}

fn check_standard(bits: u64, k: u32) -> Result<()> {
    if bits == 0 {
        return Err(Error::ZeroBits);
    }
    if bits > STANDARD_MAX_BITS {
        return Err(Error::TooLarge {
            requested: bits,
            max: STANDARD_MAX_BITS,
        });
    }
    if k == 0 || k > STANDARD_MAX_HASHES {
        return Err(Error::InvalidHashCount {
            k,
            min: 1,
            max: STANDARD_MAX_HASHES,
        });
    }
    Ok(())
}

impl<S> BuildFilter for StandardBloomFilter<S> {
    type Filter<S2: BuildHasher> = StandardBloomFilter<S2>;
    type Error = Error;

    fn for_false_pos<S2: BuildHasher>(
        fp: f64,
        items: u64,
        hasher: S2,
    ) -> Result<StandardBloomFilter<S2>> {
        let (m, k) = crate::math::std_size(items, fp);
        Self::for_bits_and_hashes(m, k, hasher)
    }

    fn for_bits_and_hashes<S2: BuildHasher>(
        bits: u64,
        k: u32,
        hasher: S2,
    ) -> Result<StandardBloomFilter<S2>> {
        check_standard(bits, k)?;
        let words = alloc_blocks::<u64>(bits.div_ceil(64), isize::MAX as u64 / 8)?;
        Ok(StandardBloomFilter {
            words,
            num_bits: bits,
            k,
            hasher,
        })
    }
}

#[inline(always)]
fn test_bit(words: &[u64], p: u64) -> bool {
    words[(p >> 6) as usize] >> (p & 63) & 1 != 0
}

#[inline(always)]
fn test_atomic_bit(words: &[AtomicU64], p: u64) -> bool {
    words[(p >> 6) as usize].load(Relaxed) >> (p & 63) & 1 != 0
}

#[inline(always)]
/// Streams a standard filter in the format of [`crate::format`]: shared by the plain and
/// atomic filters, which differ only in how a word is `read`.
fn write_words<T, S: PersistentHasher>(
    writer: impl std::io::Write,
    hasher: &S,
    k: u32,
    num_bits: u64,
    items: f64,
    words: &[T],
    read: impl Fn(&T) -> u64,
) -> Result<()> {
    crate::format::encode_to(
        writer,
        FilterKind::Standard,
        hasher,
        k,
        num_bits,
        items.round() as u64,
        words.len() as u64 * 8,
        |sink| {
            crate::format::stream_le(words, sink, |w, buf| {
                buf.extend_from_slice(&read(w).to_le_bytes())
            })
        },
    )
}

/// The Swamidass-Baldi estimate of distinct keys in `m` bits with `ones` set by `k` probes
/// each: `-(m / k) ln(1 - ones / m)` (saturated arrays read as `ones = m - 1/2`).
fn estimated_len_from_ones(m: u64, k: u32, ones: u64) -> f64 {
    let m = m as f64;
    let x = (ones as f64).min(m - 0.5);
    -(m / f64::from(k)) * (-x / m).ln_1p()
}

fn insert_words(words: &mut [u64], m: u64, k: u32, hash: u64) -> bool {
    let mut probes = Probes::new(hash);
    let mut present = true;
    for _ in 0..k {
        let p = probes.next_pos(m);
        let w = &mut words[(p >> 6) as usize];
        let bit = 1u64 << (p & 63);
        present &= *w & bit != 0;
        *w |= bit;
    }
    present
}

/// Whether all `k` probes of `hash` read set bits, `bit(p)` reading bit `p` (of plain or
/// atomic words). Cache-resident arrays (`words_len` words, at most
/// [`STANDARD_DIRECT_BYTES`]) take all `k` probes with no branch on the answer, so a
/// non-member costs no mispredicted exit (measured at 1M keys, 1.2 MiB, k = 7: single
/// non-member queries ~16 -> 9.5 ns, members unchanged); larger arrays keep the early
/// exit, which stops waiting on misses.
#[inline(always)]
fn probes_set(words_len: usize, m: u64, k: u32, hash: u64, bit: impl Fn(u64) -> bool) -> bool {
    let mut probes = Probes::new(hash);
    if words_len.saturating_mul(8) <= STANDARD_DIRECT_BYTES {
        (0..k).fold(true, |all, _| all & bit(probes.next_pos(m)))
    } else {
        (0..k).all(|_| bit(probes.next_pos(m)))
    }
}

/// Batch queries over an array of `words_len` words at `base` (plain or atomic), through
/// [`pipelined`].
#[inline(always)]
fn contains_batch_words(
    words_len: usize,
    base: *const u64,
    m: u64,
    k: u32,
    hash_at: impl Fn(usize) -> u64,
    out: &mut [bool],
    bit: impl Fn(u64) -> bool + Copy,
) {
    pipelined(out.len(), hash_at, base, m, k, |i, h| {
        out[i] = probes_set(words_len, m, k, h, bit);
    });
}

/// Keys ahead whose `k` probe lines are prefetched (each key touches `k` lines). Zen 5,
/// k = 7, 10 bits a key, `insert_batch` / `contains_batch` ns/key at 8 / 16 / 32 keys
/// ahead: 125 MB (100M keys) 28.8-29.2 / 27.7-28.0, 19.8-19.9 / 18.7-18.8, 19.9-20.1 /
/// 17.9-18.1; 25 MB (20M keys) 21.7-22.1 / 21.4-22.3 at 8, 17.8-18.1 / 17.8-18.0 at 16.
const STANDARD_AHEAD: usize = 16;

/// Largest bit array (bytes) whose batch queries skip the prefetch pipeline.
const STANDARD_DIRECT_BYTES: usize = 16 << 20;

#[inline(always)]
fn prefetch_probes(base: *const u64, m: u64, k: u32, hash: u64) {
    let mut probes = Probes::new(hash);
    for _ in 0..k {
        // `wrapping_add` computes the address without asserting it is in bounds (it is:
        // p < m); a prefetch never faults anyway.
        crate::batch::prefetch(base.wrapping_add((probes.next_pos(m) >> 6) as usize));
    }
}

/// Pipelined inserts of `n` hashes.
#[inline(always)]
fn insert_pipelined(words: &mut [u64], m: u64, k: u32, n: usize, hash_at: impl Fn(usize) -> u64) {
    let base = words.as_ptr();
    pipelined(n, hash_at, base, m, k, |_, h| {
        insert_words(words, m, k, h);
    });
}

/// Runs `op` on each of `n` hashes in order, through core's batch pipeline. Arrays of `m`
/// bits above [`STANDARD_DIRECT_BYTES`] prefetch (from the array at `base`) the probe lines
/// of the hash `STANDARD_AHEAD` places ahead; cache-resident ones only hash ahead, where
/// prefetching `k` lines per key only adds work (measured 25 % slower at 125 KiB, 12 % at
/// 1.2 MiB, even at 12 MiB, for queries; inserts alike).
#[inline(always)]
fn pipelined(
    n: usize,
    hash_at: impl Fn(usize) -> u64,
    base: *const u64,
    m: u64,
    k: u32,
    mut op: impl FnMut(usize, u64),
) {
    // One pipeline for both sizes, so `op` has one call site (two made LLVM outline it: a
    // call per key); the branch on `direct` is loop-invariant.
    let direct = m / 8 <= STANDARD_DIRECT_BYTES as u64;
    crate::batch_pipeline!(ahead: STANDARD_AHEAD, len: n,
        prepare |p| {
            let h = hash_at(p);
            if !direct {
                prefetch_probes(base, m, k, h);
            }
            h
        },
        probe |i, h| op(i, h));
}

impl<S: BuildHasher> StandardBloomFilter<S> {
    /// Inserts `key`; `true` if all its bits were already set.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> bool {
        self.insert_hash(hash_one(&self.hasher, key))
    }

    /// Whether `key` may be present.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(hash_one(&self.hasher, key))
    }

    /// Inserts by precomputed hash.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        insert_words(&mut self.words, self.num_bits, self.k, hash)
    }

    /// Queries by precomputed hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let words = &*self.words;
        probes_set(words.len(), self.num_bits, self.k, hash, |p| {
            test_bit(words, p)
        })
    }

    /// [`contains_hash`](Self::contains_hash) that stops at the first unset bit whatever
    /// the array's size. `contains_hash` takes all `k` probes without a branch on arrays of
    /// up to 16 MiB, assuming they stay in cache; a caller whose array shares the cache
    /// with others it queries in turn (a stack of filters, as in the scalable filter of
    /// `bloomforge-stream`) would wait on `k` misses for each non-member, where this waits
    /// on about two at half fill. Same answer, always.
    #[inline]
    pub fn contains_hash_early_exit(&self, hash: u64) -> bool {
        let words = &*self.words;
        let mut probes = Probes::new(hash);
        (0..self.k).all(|_| test_bit(words, probes.next_pos(self.num_bits)))
    }

    /// Prefetches the cache lines of the first `probes` probes (at most `k`) of the key
    /// of 64-bit hash `hash`, so that a query of it moments later, or of other filters'
    /// lines in between, overlaps their misses. Never reads the array (a prefetch does
    /// not fault).
    #[inline]
    pub fn prefetch_hash(&self, hash: u64, probes: u32) {
        prefetch_probes(self.words.as_ptr(), self.num_bits, probes.min(self.k), hash);
    }

    /// Inserts every key of `keys`, prefetching the probe lines of keys a few places ahead.
    pub fn insert_batch<T: Hash>(&mut self, keys: &[T]) {
        let hasher = &self.hasher;
        insert_pipelined(&mut self.words, self.num_bits, self.k, keys.len(), |i| {
            hash_one(hasher, &keys[i])
        });
    }

    /// Inserts every precomputed hash of `hashes`.
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
        insert_pipelined(&mut self.words, self.num_bits, self.k, hashes.len(), |i| {
            hashes[i]
        });
    }

    /// Queries every key of `keys` into `out`, prefetching the probe lines of keys a few
    /// places ahead.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `keys.len() == out.len()`.
    pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
        check_batch_len(keys.len(), out.len())?;
        self.contains_pipelined(|i| hash_one(&self.hasher, &keys[i]), out);
        Ok(())
    }

    /// [`contains_batch`](Self::contains_batch) for precomputed hashes.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `hashes.len() == out.len()`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        check_batch_len(hashes.len(), out.len())?;
        self.contains_pipelined(|i| hashes[i], out);
        Ok(())
    }

    fn contains_pipelined(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        let words = &*self.words;
        let bit = |p| test_bit(words, p);
        let (m, k) = (self.num_bits, self.k);
        contains_batch_words(words.len(), words.as_ptr(), m, k, hash_at, out, bit);
    }

    /// Number of bits.
    pub fn num_bits(&self) -> u64 {
        self.num_bits
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.k
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The false-positive rate for the current contents, `(set bits / m)^k`.
    pub fn expected_false_pos(&self) -> f64 {
        crate::math::realized_fp_standard(self.count_ones(), self.num_bits, self.k)
    }

    /// Estimated number of distinct keys inserted (Swamidass & Baldi):
    /// `-(m/k) ln(1 - X/m)`. There is no `len()`: a plain filter cannot tell a repeated
    /// key or a false positive from a new key, and a union combines bits, not keys.
    pub fn estimated_len(&self) -> f64 {
        estimated_len_from_ones(self.num_bits, self.k, self.count_ones())
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Unsets every bit.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Size, probes and hasher fingerprint.
    pub fn shape(&self) -> FilterShape {
        FilterShape {
            num_bits: self.num_bits,
            num_hashes: self.k,
            hasher_fingerprint: hasher_fingerprint(&self.hasher),
        }
    }

    fn combine(&mut self, other: &Self, f: impl Fn(u64, u64) -> u64) -> Result<()> {
        let (left, right) = (self.shape(), other.shape());
        if left != right {
            return Err(Error::IncompatibleFilters { left, right });
        }
        for (a, b) in self.words.iter_mut().zip(other.words.iter()) {
            *a = f(*a, *b);
        }
        Ok(())
    }

    /// Adds every key of `other` (bitwise OR).
    ///
    /// # Errors
    /// [`Error::IncompatibleFilters`] (and `self` unchanged) on a size, `k` or hasher
    /// mismatch.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.combine(other, |a, b| a | b)
    }

    /// Keeps only bits set in both (bitwise AND).
    ///
    /// # Errors
    /// As [`union`](Self::union).
    pub fn intersect(&mut self, other: &Self) -> Result<()> {
        self.combine(other, |a, b| a & b)
    }

    /// Rebuilds a filter from its words (bit `p` is bit `p % 64` of word `p / 64`), size in
    /// bits, probe count and hasher. Bits at positions `>= num_bits` are cleared.
    ///
    /// # Errors
    /// [`Error::ZeroBits`], [`Error::InvalidHashCount`], or [`Error::InvalidBitset`] when
    /// `words.len()` is not `ceil(num_bits / 64)`.
    pub fn from_words(
        mut words: Vec<u64>,
        num_bits: u64,
        num_hashes: u32,
        hasher: S,
    ) -> Result<Self> {
        check_standard(num_bits, num_hashes)?;
        if words.len() as u64 != num_bits.div_ceil(64) {
            return Err(Error::InvalidBitset {
                len: words.len() * 8,
                reason: "word count must be ceil(num_bits / 64)",
            });
        }
        if !num_bits.is_multiple_of(64) {
            if let Some(last) = words.last_mut() {
                *last &= (1u64 << (num_bits % 64)) - 1;
            }
        }
        Ok(Self {
            words: words.into_boxed_slice(),
            num_bits,
            k: num_hashes,
            hasher,
        })
    }

    /// The words of the bit array (bit `p` is bit `p % 64` of word `p / 64`).
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }
}

impl StandardBloomFilter {
    /// Reads a filter serialized with an unkeyed hasher.
    ///
    /// # Errors
    /// [`Error::Corrupt`], [`Error::UnsupportedVersion`] or [`Error::HasherMismatch`];
    /// [`Error::InvalidHashCount`] for a stored probe count outside `1..=64`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized filter from `reader`.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or [`Error::Io`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        Self::from_bytes(&crate::format::read_all(reader)?)
    }
}

impl<S: PersistentHasher> StandardBloomFilter<S> {
    /// Serializes the filter in the versioned format of [`crate::format`] (the bytes
    /// [`write_to`](Self::write_to) streams, collected in one buffer).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(crate::format::HEADER_LEN + self.words.len() * 8);
        // Writing into a `Vec` cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes the bytes of [`to_bytes`](Self::to_bytes) to `writer`, streamed through a
    /// 64 KiB buffer (no copy of the filter is made).
    ///
    /// # Errors
    /// [`Error::Io`] if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let items = self.estimated_len();
        write_words(
            writer,
            &self.hasher,
            self.k,
            self.num_bits,
            items,
            &self.words,
            |w| *w,
        )
    }

    /// Reads a filter with the caller's hasher (keyed filters).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes).
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
        Self::decode(bytes, Some(hasher))
    }

    pub(crate) fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
        let (header, payload, hasher) =
            crate::format::open(bytes, FilterKind::Standard, hasher, true)?;
        if header.num_bits == 0
            || header.num_bits.div_ceil(64).checked_mul(8) != Some(payload.len() as u64)
        {
            return Err(Error::Corrupt {
                reason: "payload length does not match the bit count",
            });
        }
        // Allocated like a new filter's words (huge pages, filled on every thread when
        // large); the count is the input's, never a header field.
        let words = crate::raw::alloc_blocks_with::<u64>(
            payload.len() as u64 / 8,
            u64::MAX,
            |first, chunk| {
                let bytes = &payload[first * 8..(first + chunk.len()) * 8];
                for (w, b) in chunk.iter_mut().zip(bytes.chunks_exact(8)) {
                    let mut x = [0u8; 8];
                    x.copy_from_slice(b);
                    *w = u64::from_le_bytes(x);
                }
            },
        )?;
        Self::from_words(words.into_vec(), header.num_bits, header.num_hashes, hasher)
    }
}

impl<S: Clone> Clone for StandardBloomFilter<S> {
    fn clone(&self) -> Self {
        Self {
            words: self.words.clone(),
            num_bits: self.num_bits,
            k: self.k,
            hasher: self.hasher.clone(),
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for StandardBloomFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StandardBloomFilter")
            .field("num_bits", &self.num_bits)
            .field("num_hashes", &self.k)
            .field("hasher", &self.hasher)
            .finish_non_exhaustive()
    }
}

impl<S: BuildHasher> PartialEq for StandardBloomFilter<S> {
    fn eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.words == other.words
    }
}

impl<S: BuildHasher> Eq for StandardBloomFilter<S> {}

/// Inserts the keys through the batch path, [`EXTEND_CHUNK`](crate::batch::EXTEND_CHUNK) at
/// a time.
impl<T: Hash, S: BuildHasher> Extend<T> for StandardBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        crate::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}

/// Collects keys into a filter sized for their number at 1 % false positives.
///
/// # Panics
/// Where the builder would refuse: a filter for that many keys exceeds the addressable
/// size or cannot be allocated (never with a smaller, wrong filter).
impl<T: Hash> FromIterator<T> for StandardBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let keys: Vec<T> = iter.into_iter().collect();
        let mut filter = Self::with_false_pos(0.01)
            .expected_items(keys.len().max(1) as u64)
            .unwrap_or_else(|e| panic!("FromIterator: no filter for {} keys: {e}", keys.len()));
        filter.insert_batch(&keys);
        filter
    }
}

impl<T: Hash + ?Sized, S: BuildHasher> Filter<T> for StandardBloomFilter<S> {
    type InsertError = core::convert::Infallible;
    fn insert(&mut self, key: &T) -> core::result::Result<bool, Self::InsertError> {
        Ok(StandardBloomFilter::insert(self, key))
    }
    fn contains(&self, key: &T) -> bool {
        StandardBloomFilter::contains(self, key)
    }
    fn memory_bits(&self) -> u64 {
        self.num_bits
    }
    fn expected_false_pos(&self) -> f64 {
        StandardBloomFilter::expected_false_pos(self)
    }
}

/// A [`StandardBloomFilter`] with `&self` inserts (`AtomicU64` words, `fetch_or` only where
/// a bit is missing). Converts to and from the plain filter for free (in place; a copy only
/// on 32-bit x86, where `u64` and `AtomicU64` differ in alignment).
pub struct AtomicStandardBloomFilter<S = DefaultHasher> {
    words: Box<[AtomicU64]>,
    num_bits: u64,
    k: u32,
    hasher: S,
}

/// Whether `u64` and `AtomicU64` share an alignment, so a `Box<[u64]>` can be reinterpreted
/// in place. True on every 64-bit target; false on 32-bit x86, where `u64` is 4-byte aligned
/// but `AtomicU64` 8-byte aligned (there the conversions copy).
const ATOMIC_IN_PLACE: bool = core::mem::align_of::<AtomicU64>() == core::mem::align_of::<u64>();

impl<S: PersistentHasher> AtomicStandardBloomFilter<S> {
    /// [`StandardBloomFilter::to_bytes`] of the current bits: one snapshot of the words
    /// (a copy of the filter), so the bytes always pass their checksum, even while inserts
    /// run.
    pub fn to_bytes(&self) -> Vec<u8>
    where
        S: Clone,
    {
        self.snapshot().to_bytes()
    }

    /// Writes the bytes [`StandardBloomFilter::to_bytes`] gives for the current bits,
    /// streamed from the words in place with relaxed loads (no copy of the filter).
    ///
    /// # Errors
    /// [`Error::Io`] if the writer fails, or if inserts ran concurrently and changed the
    /// bits between the checksum pass and the write pass (write once inserts have stopped).
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let items = self.estimated_len();
        let read = |w: &AtomicU64| w.load(Relaxed);
        write_words(
            writer,
            &self.hasher,
            self.k,
            self.num_bits,
            items,
            &self.words,
            read,
        )
    }
}

impl<S> From<StandardBloomFilter<S>> for AtomicStandardBloomFilter<S> {
    fn from(plain: StandardBloomFilter<S>) -> Self {
        let words: Box<[AtomicU64]> = if ATOMIC_IN_PLACE {
            let len = plain.words.len();
            let ptr = Box::into_raw(plain.words).cast::<AtomicU64>();
            // SAFETY: AtomicU64 has the size and bit validity of u64, and (ATOMIC_IN_PLACE)
            // the same alignment, so the allocation is reinterpreted in place with its
            // length and is later freed with the layout it was allocated with.
            unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) }
        } else {
            plain.words.iter().map(|&w| AtomicU64::new(w)).collect()
        };
        Self {
            words,
            num_bits: plain.num_bits,
            k: plain.k,
            hasher: plain.hasher,
        }
    }
}

impl<S> AtomicStandardBloomFilter<S> {
    /// The plain filter with the same bits (free).
    pub fn into_inner(self) -> StandardBloomFilter<S> {
        let words: Box<[u64]> = if ATOMIC_IN_PLACE {
            let len = self.words.len();
            let ptr = Box::into_raw(self.words).cast::<u64>();
            // SAFETY: the inverse of `From<StandardBloomFilter>` (same size, bit validity
            // and, by ATOMIC_IN_PLACE, alignment); owning the box means no other thread
            // accesses the atomics.
            unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) }
        } else {
            self.words.iter().map(|w| w.load(Relaxed)).collect()
        };
        StandardBloomFilter {
            words,
            num_bits: self.num_bits,
            k: self.k,
            hasher: self.hasher,
        }
    }
}

impl AtomicStandardBloomFilter {
    /// Reads the bytes of [`StandardBloomFilter::to_bytes`] (either type's), converted for
    /// free.
    ///
    /// # Errors
    /// As [`StandardBloomFilter::from_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        StandardBloomFilter::from_bytes(bytes).map(Self::from)
    }

    /// Reads one serialized filter from `reader`, as [`StandardBloomFilter::read_from`].
    ///
    /// # Errors
    /// As [`StandardBloomFilter::read_from`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        StandardBloomFilter::read_from(reader).map(Self::from)
    }
}

crate::builder_constructors! {
    AtomicStandardBloomFilter,
    new: "",
    false_pos: "The same sizing as the plain filter's.",
    with_num_bits: "exactly `bits` bits",
}

impl<S> BuildFilter for AtomicStandardBloomFilter<S> {
    type Filter<S2: BuildHasher> = AtomicStandardBloomFilter<S2>;
    type Error = Error;

    fn for_false_pos<S2: BuildHasher>(
        fp: f64,
        items: u64,
        hasher: S2,
    ) -> Result<AtomicStandardBloomFilter<S2>> {
        StandardBloomFilter::<S2>::for_false_pos(fp, items, hasher)
            .map(AtomicStandardBloomFilter::from)
    }

    fn for_bits_and_hashes<S2: BuildHasher>(
        bits: u64,
        k: u32,
        hasher: S2,
    ) -> Result<AtomicStandardBloomFilter<S2>> {
        StandardBloomFilter::<S2>::for_bits_and_hashes(bits, k, hasher)
            .map(AtomicStandardBloomFilter::from)
    }
}

impl<S> From<AtomicStandardBloomFilter<S>> for StandardBloomFilter<S> {
    fn from(atomic: AtomicStandardBloomFilter<S>) -> Self {
        atomic.into_inner()
    }
}

impl<S: BuildHasher> AtomicStandardBloomFilter<S> {
    /// Inserts `key` from any thread; `true` if all its bits were already set. The same
    /// visibility rules as [`AtomicBlockedBloomFilter`](crate::AtomicBlockedBloomFilter).
    pub fn insert<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.insert_hash(hash_one(&self.hasher, key))
    }

    /// Whether `key` may be present.
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(hash_one(&self.hasher, key))
    }

    /// Queries by precomputed hash.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let words = &*self.words;
        probes_set(words.len(), self.num_bits, self.k, hash, |p| {
            test_atomic_bit(words, p)
        })
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Number of set bits (relaxed loads).
    pub fn count_ones(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from(w.load(Relaxed).count_ones()))
            .sum()
    }

    /// The false-positive rate for the current contents, `(set bits / m)^k`.
    pub fn expected_false_pos(&self) -> f64 {
        crate::math::realized_fp_standard(self.count_ones(), self.num_bits, self.k)
    }

    /// Estimated number of distinct keys inserted, from the fill (as
    /// [`StandardBloomFilter::estimated_len`]; relaxed loads).
    pub fn estimated_len(&self) -> f64 {
        estimated_len_from_ones(self.num_bits, self.k, self.count_ones())
    }

    /// Whether no bit is set (every query answers `false`; `estimated_len() == 0`).
    /// Relaxed loads: a snapshot while inserts run.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| w.load(Relaxed) == 0)
    }

    /// A copy of the current bits as a plain filter (consistent when no insert runs
    /// concurrently).
    pub fn snapshot(&self) -> StandardBloomFilter<S>
    where
        S: Clone,
    {
        StandardBloomFilter {
            words: self.words.iter().map(|w| w.load(Relaxed)).collect(),
            num_bits: self.num_bits,
            k: self.k,
            hasher: self.hasher.clone(),
        }
    }

    /// Inserts by precomputed hash from any thread.
    pub fn insert_hash(&self, hash: u64) -> bool {
        let mut probes = Probes::new(hash);
        let mut present = true;
        for _ in 0..self.k {
            let p = probes.next_pos(self.num_bits);
            let w = &self.words[(p >> 6) as usize];
            let bit = 1u64 << (p & 63);
            if w.load(Relaxed) & bit == 0 {
                present = false;
                w.fetch_or(bit, Relaxed);
            }
        }
        present
    }

    /// Inserts every key of `keys` (`&self`: other threads may insert at the same time),
    /// hashing ahead and prefetching the probe lines like
    /// [`StandardBloomFilter::insert_batch`].
    pub fn insert_batch<T: Hash>(&self, keys: &[T]) {
        self.insert_pipelined(keys.len(), |i| hash_one(&self.hasher, &keys[i]));
    }

    /// [`insert_batch`](Self::insert_batch) for precomputed hashes.
    pub fn insert_hash_batch(&self, hashes: &[u64]) {
        self.insert_pipelined(hashes.len(), |i| hashes[i]);
    }

    /// Queries every key of `keys` into `out[i]`, pipelined like
    /// [`insert_batch`](Self::insert_batch).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (and `out` untouched) unless `keys.len() == out.len()`.
    pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
        check_batch_len(keys.len(), out.len())?;
        self.contains_pipelined(|i| hash_one(&self.hasher, &keys[i]), out);
        Ok(())
    }

    /// [`contains_batch`](Self::contains_batch) for precomputed hashes.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `hashes.len() == out.len()`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        check_batch_len(hashes.len(), out.len())?;
        self.contains_pipelined(|i| hashes[i], out);
        Ok(())
    }

    fn insert_pipelined(&self, n: usize, hash_at: impl Fn(usize) -> u64) {
        // The prefetches only take addresses (`AtomicU64` has `u64`'s size).
        let base = self.words.as_ptr().cast::<u64>();
        pipelined(n, hash_at, base, self.num_bits, self.k, |_, h| {
            self.insert_hash(h);
        });
    }

    fn contains_pipelined(&self, hash_at: impl Fn(usize) -> u64, out: &mut [bool]) {
        let words = &*self.words;
        // The prefetches only take addresses (`AtomicU64` has `u64`'s size).
        let base = words.as_ptr().cast::<u64>();
        let bit = |p| test_atomic_bit(words, p);
        let (m, k) = (self.num_bits, self.k);
        contains_batch_words(words.len(), base, m, k, hash_at, out, bit);
    }

    /// Inserts `keys` from all threads of the current rayon pool.
    pub fn par_insert_batch<T: Hash + Sync>(&self, keys: &[T])
    where
        S: Sync,
    {
        use rayon::prelude::*;
        keys.par_iter().for_each(|k| {
            self.insert(k);
        });
    }

    /// Number of bits.
    pub fn num_bits(&self) -> u64 {
        self.num_bits
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.k
    }
}

/// A copy of the current bits (relaxed loads: consistent when no insert runs concurrently,
/// as [`snapshot`](AtomicStandardBloomFilter::snapshot)).
impl<S: BuildHasher + Clone> Clone for AtomicStandardBloomFilter<S> {
    fn clone(&self) -> Self {
        Self::from(self.snapshot())
    }
}

/// Inserts every key (the `&self` insert; `&mut self` only because `Extend` asks for it:
/// extend through a shared reference, `(&filter).extend(keys)`, from any number of
/// threads).
impl<T: Hash, S: BuildHasher> Extend<T> for AtomicStandardBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        (&*self).extend(iter);
    }
}

/// Inserts every key through the shared reference, so threads holding `&filter` can each
/// extend it.
impl<T: Hash, S: BuildHasher> Extend<T> for &AtomicStandardBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        crate::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}

/// Collects keys as [`StandardBloomFilter`]'s `FromIterator` does (sized for their number
/// at 1 % false positives, default hasher), then converts for free.
impl<T: Hash> FromIterator<T> for AtomicStandardBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<StandardBloomFilter>())
    }
}

impl<T: Hash + ?Sized, S: BuildHasher> Filter<T> for AtomicStandardBloomFilter<S> {
    type InsertError = core::convert::Infallible;
    fn insert(&mut self, key: &T) -> core::result::Result<bool, Self::InsertError> {
        Ok(AtomicStandardBloomFilter::insert(self, key))
    }
    fn contains(&self, key: &T) -> bool {
        AtomicStandardBloomFilter::contains(self, key)
    }
    fn memory_bits(&self) -> u64 {
        self.num_bits
    }
    fn expected_false_pos(&self) -> f64 {
        AtomicStandardBloomFilter::expected_false_pos(self)
    }
}

impl<S: fmt::Debug> fmt::Debug for AtomicStandardBloomFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicStandardBloomFilter")
            .field("num_bits", &self.num_bits)
            .field("num_hashes", &self.k)
            .field("hasher", &self.hasher)
            .finish_non_exhaustive()
    }
}
