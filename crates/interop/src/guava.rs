//! Guava's `com.google.common.hash.BloomFilter`.

use crate::bits::{Bits, Probe};
use crate::key::{Key, KeyRef};
use crate::murmur3::murmur3_x64_128;
use crate::{Error, Result};
use std::fmt;

const FORMAT: &str = "guava";

/// Guava's hashing strategies (`BloomFilterStrategies`), by their ordinal, the first byte
/// of the serialized form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GuavaStrategy {
    /// `MURMUR128_MITZ_32` (ordinal 0): the low 64 bits of Murmur3_128 split into two
    /// `int`s, combined in 32-bit arithmetic. Guava's filters before release 13.
    Murmur128Mitz32,
    /// `MURMUR128_MITZ_64` (ordinal 1): both 64-bit halves of Murmur3_128, combined in
    /// 64-bit arithmetic. What `BloomFilter.create` uses.
    Murmur128Mitz64,
}

impl GuavaStrategy {
    /// The strategy's ordinal (the first serialized byte).
    pub fn ordinal(self) -> u8 {
        match self {
            GuavaStrategy::Murmur128Mitz32 => 0,
            GuavaStrategy::Murmur128Mitz64 => 1,
        }
    }

    /// The strategy of an ordinal, if Guava has one.
    pub fn from_ordinal(ordinal: u8) -> Option<Self> {
        match ordinal {
            0 => Some(GuavaStrategy::Murmur128Mitz32),
            1 => Some(GuavaStrategy::Murmur128Mitz64),
            _ => None,
        }
    }

    /// Guava's name of the strategy.
    pub fn name(self) -> &'static str {
        match self {
            GuavaStrategy::Murmur128Mitz32 => "MURMUR128_MITZ_32",
            GuavaStrategy::Murmur128Mitz64 => "MURMUR128_MITZ_64",
        }
    }

    #[inline(always)]
    fn probe(self, key: KeyRef<'_>) -> Probe {
        let (h1, h2) = match key {
            KeyRef::Bytes(b) => murmur3_x64_128(b, 0),
            // `Funnels.longFunnel()`: `putLong`, eight little-endian bytes.
            KeyRef::Long(v) => murmur3_x64_128(&v.to_le_bytes(), 0),
        };
        match self {
            GuavaStrategy::Murmur128Mitz64 => Probe::Mitz64 { h1, h2 },
            // `HashCode.asLong()` is `h1`; its low and high `int`s.
            GuavaStrategy::Murmur128Mitz32 => Probe::Int32 {
                h1: h1 as i32,
                h2: (h1 >> 32) as i32,
            },
        }
    }
}

/// Guava's `BloomFilter`, bit for bit: the same parameters and keys give the same bits,
/// and [`to_bytes`](Self::to_bytes) / [`from_bytes`](Self::from_bytes) are Guava's
/// `writeTo` / `readFrom`.
///
/// * Sized by Guava's own formulas ([`new`](Self::new)): `m = (long) (-n ln p / ln² 2)`
///   bits, rounded up to whole 64-bit words, `k = max(1, round(m / n ln 2))`.
/// * Keys are funnelled as Guava's `Funnels.stringFunnel(UTF_8)` (strings),
///   `byteArrayFunnel()` (bytes) and `longFunnel()` (`i64` / `u64`) do (see [`Key`]). A
///   Guava filter is typed by its funnel: query it with keys of the kind it was built
///   from.
/// * The serialized form: the strategy's ordinal (a byte), `k` (a byte), the word count
///   (a big-endian `int`) and the words (big-endian `long`s).
///
/// ```
/// use bloomforge_interop::GuavaBloomFilter;
/// // BloomFilter.create(Funnels.stringFunnel(UTF_8), 10_000, 0.01) in Java.
/// let mut f = GuavaBloomFilter::new(10_000, 0.01)?;
/// assert_eq!((f.num_bits(), f.num_hashes()), (95_872, 7));
/// f.insert_batch(&["a.org", "b.org"]);
/// assert!(f.contains("a.org"));
/// # Ok::<(), bloomforge_interop::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct GuavaBloomFilter {
    bits: Bits,
    strategy: GuavaStrategy,
}

/// Guava's `BloomFilter.optimalNumOfBits`.
fn optimal_num_bits(n: u64, p: f64) -> u64 {
    let p = if p == 0.0 { f64::from_bits(1) } else { p };
    (-(n as f64) * p.ln() / (2f64.ln() * 2f64.ln())) as u64
}

/// Guava's `BloomFilter.optimalNumOfHashFunctions(n, m)` (releases up to 32; the same as
/// Spark's).
pub(crate) fn optimal_num_hashes(n: u64, m: u64) -> u32 {
    ((m as f64 / n as f64 * 2f64.ln()).round() as i64 as i32).max(1) as u32
}

impl GuavaBloomFilter {
    /// What Java's `BloomFilter.create(funnel, expected_items, false_pos)` makes (strategy
    /// `MURMUR128_MITZ_64`); `expected_items == 0` is taken as 1, as Guava does.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] where Guava throws: `false_pos` outside (0, 1), a size
    /// of zero bits (a tiny `expected_items` at a large `false_pos`) or over 2^31 - 1
    /// words. [`Error::Core`] if the words cannot be allocated.
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self> {
        Self::with_strategy(expected_items, false_pos, GuavaStrategy::Murmur128Mitz64)
    }

    /// As [`new`](Self::new), with another strategy (Guava's package-private
    /// `create(funnel, n, fpp, strategy)`).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_strategy(
        expected_items: u64,
        false_pos: f64,
        strategy: GuavaStrategy,
    ) -> Result<Self> {
        if !(false_pos > 0.0 && false_pos < 1.0) {
            return Err(Error::InvalidArgument(format!(
                "false-positive rate {false_pos} must be in (0, 1)"
            )));
        }
        if expected_items > i64::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "expected items {expected_items} over Java's long range"
            )));
        }
        let n = expected_items.max(1);
        let m = optimal_num_bits(n, false_pos);
        let k = optimal_num_hashes(n, m);
        Self::with_num_bits(m, k, strategy)
    }

    /// A filter of `num_bits` bits (rounded up to whole 64-bit words, as Guava's
    /// `LockFreeBitArray` does) and `num_hashes` probes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for zero bits, more than 2^31 - 1 words, or `num_hashes`
    /// outside `1..=255` (the serialized form keeps it in a byte); [`Error::Core`] if the
    /// words cannot be allocated.
    pub fn with_num_bits(num_bits: u64, num_hashes: u32, strategy: GuavaStrategy) -> Result<Self> {
        if num_bits == 0 {
            return Err(Error::InvalidArgument(
                "a Guava filter of 0 bits (Guava: \"data length is zero!\"): raise expected_items or lower false_pos".into(),
            ));
        }
        let words = num_bits.div_ceil(64);
        if words > i32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "{num_bits} bits is over Guava's limit of 2^31 - 1 words"
            )));
        }
        if !(1..=255).contains(&num_hashes) {
            return Err(Error::InvalidArgument(format!(
                "{num_hashes} hash functions (Guava stores 1..=255)"
            )));
        }
        Ok(Self {
            bits: Bits::zeroed(words as usize, num_hashes)?,
            strategy,
        })
    }

    /// Adds `key`; `true` when a bit changed (Guava's `put`).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let p = self.strategy.probe(key.key_ref());
        self.bits.insert(p)
    }

    /// Whether `key` may have been added (Guava's `mightContain`).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.bits.contains(self.strategy.probe(key.key_ref()))
    }

    /// Adds every key, hashing and prefetching a few keys ahead of the bit updates.
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        let s = self.strategy;
        self.bits.insert_batch(keys, |k| s.probe(k.key_ref()));
    }

    /// Adds every key on rayon's current thread pool (run it inside
    /// `ThreadPool::install` to choose the threads). The bits are those of
    /// [`insert_batch`](Self::insert_batch).
    pub fn par_insert_batch<K: Key + Sync>(&mut self, keys: &[K]) {
        let s = self.strategy;
        self.bits.par_insert_batch(keys, |k| s.probe(k.key_ref()));
    }

    /// Answers for every key into `out`.
    ///
    /// # Errors
    /// `Error::Core(LengthMismatch)` when the lengths differ (`out` untouched).
    pub fn contains_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        let s = self.strategy;
        self.bits
            .contains_batch(keys, out, |k| s.probe(k.key_ref()))
    }

    /// Adds `other`'s keys (Guava's `putAll`).
    ///
    /// # Errors
    /// [`Error::Incompatible`] unless both have the same bits, hash count and strategy.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.union(&other.bits);
        Ok(())
    }

    /// Keeps the bits both have (a filter of the keys in both, with the false positives of
    /// either).
    ///
    /// # Errors
    /// As [`union`](Self::union).
    pub fn intersect(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.intersect(&other.bits);
        Ok(())
    }

    fn check_compatible(&self, other: &Self) -> Result<()> {
        if !self.bits.same_shape(&other.bits) || self.strategy != other.strategy {
            return Err(Error::Incompatible(format!(
                "Guava filters of {} bits / {} hashes / {} and {} bits / {} hashes / {}",
                self.num_bits(),
                self.num_hashes(),
                self.strategy.name(),
                other.num_bits(),
                other.num_hashes(),
                other.strategy.name()
            )));
        }
        Ok(())
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        self.bits.clear();
    }

    /// The number of bits (`64 *` the word count; Guava's `bitSize()`).
    pub fn num_bits(&self) -> u64 {
        self.bits.num_bits()
    }

    /// The number of probes a key sets.
    pub fn num_hashes(&self) -> u32 {
        self.bits.k()
    }

    /// The hashing strategy.
    pub fn strategy(&self) -> GuavaStrategy {
        self.strategy
    }

    /// The number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    /// Guava's `expectedFpp()`: `(set bits / bits)^k`, the false-positive rate of the
    /// filter as it is now.
    pub fn expected_false_pos(&self) -> f64 {
        self.bits.expected_false_pos()
    }

    /// The false-positive rate theory gives after `n` distinct keys:
    /// `(1 - e^{-kn/m})^k`.
    pub fn theoretical_false_pos(&self, n: u64) -> f64 {
        bloomforge_core::math::std_fp(self.num_bits() as f64, n as f64, self.num_hashes())
    }

    /// Guava's `approximateElementCount()` before rounding: `-m/k ln(1 - ones/m)`, the
    /// number of distinct keys that best explains the set bits (an estimate: the filter
    /// keeps no count).
    pub fn estimated_len(&self) -> f64 {
        self.bits.estimated_len()
    }

    /// Whether no bit is set (every query answers `false`).
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The bytes of the words in memory.
    pub fn memory_bytes(&self) -> u64 {
        (self.bits.num_words() * 8) as u64
    }

    /// Word `i` of the bit array (bit `j` of the filter is bit `j % 64` of word `j / 64`).
    ///
    /// # Panics
    /// If `i` is not below `num_bits() / 64`.
    pub fn word(&self, i: usize) -> u64 {
        self.bits.word(i)
    }

    /// Guava's `writeTo` form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6 + self.memory_bytes() as usize);
        out.push(self.strategy.ordinal());
        out.push(self.num_hashes() as u8);
        self.bits.write_be(&mut out);
        out
    }

    /// Reads Guava's `writeTo` form; the bytes must end where the filter does.
    ///
    /// # Errors
    /// [`Error::Format`] for an unknown strategy, a zero hash count, a non-positive word
    /// count, truncated bytes or bytes after the words.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (f, rest) = Self::from_prefix(bytes)?;
        if !rest.is_empty() {
            return Err(Error::Format {
                format: FORMAT,
                reason: format!("{} bytes after the filter's words", rest.len()),
            });
        }
        Ok(f)
    }

    /// Reads a filter from the start of `bytes`, returning it and the bytes after it (as
    /// Guava's `readFrom` leaves the rest of a stream).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), trailing bytes excepted.
    pub fn from_prefix(bytes: &[u8]) -> Result<(Self, &[u8])> {
        let bad = |reason: String| Error::Format {
            format: FORMAT,
            reason,
        };
        let [ordinal, k, rest @ ..] = bytes else {
            return Err(bad(format!(
                "{} bytes, shorter than the header",
                bytes.len()
            )));
        };
        let strategy = GuavaStrategy::from_ordinal(*ordinal)
            .ok_or_else(|| bad(format!("unknown strategy ordinal {ordinal}")))?;
        if *k == 0 {
            return Err(bad("zero hash functions".into()));
        }
        let (bits, rest) = Bits::read_be(rest, u32::from(*k), FORMAT)?;
        Ok((Self { bits, strategy }, rest))
    }
}

impl fmt::Debug for GuavaBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuavaBloomFilter")
            .field("strategy", &self.strategy)
            .field("num_bits", &self.num_bits())
            .field("num_hashes", &self.num_hashes())
            .field("count_ones", &self.count_ones())
            .finish()
    }
}

impl<K: Key> Extend<K> for GuavaBloomFilter {
    /// Adds the keys through the batch path, a chunk at a time.
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}
