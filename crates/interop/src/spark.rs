//! Spark's `org.apache.spark.util.sketch.BloomFilter`.

use crate::bits::{Bits, Probe};
use crate::guava::optimal_num_hashes;
use crate::key::{Key, KeyRef};
use crate::murmur3::{spark_hash_bytes, spark_hash_long};
use crate::{Error, Result};
use std::fmt;

const FORMAT: &str = "spark";

/// The most probes a key may set here. Spark stores any `int`; a hostile or corrupt file
/// with billions would make each query take seconds. Spark's own sizing reaches this only
/// for filters of 2^16 / ln 2 bits per expected key.
pub const SPARK_MAX_HASHES: u32 = 1 << 16;

/// The two serialized versions of Spark's filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SparkVersion {
    /// Version 1 (`BloomFilterImpl`): no seed; the probes combine the two 32-bit hashes in
    /// `int` arithmetic, so only ~2^31 of the bits can be reached. Spark's only version
    /// before 4.1.
    V1,
    /// Version 2 (`BloomFilterImplV2`, Spark's default since 4.1): a stored seed, probes
    /// combined in `long` arithmetic.
    V2,
}

impl SparkVersion {
    /// The version number, the first serialized `int`.
    pub fn number(self) -> i32 {
        match self {
            SparkVersion::V1 => 1,
            SparkVersion::V2 => 2,
        }
    }
}

/// Spark's `BloomFilter` (versions 1 and 2), bit for bit: the same parameters and keys
/// give the same bits, and [`to_bytes`](Self::to_bytes) / [`from_bytes`](Self::from_bytes)
/// are Spark's `writeTo` / `BloomFilter.readFrom`, so a filter from `df.stat.bloomFilter`
/// or `bloom_filter_agg` can be probed here and one built here can be handed to Spark.
///
/// * Sized by Spark's formulas ([`new`](Self::new)): `m = (long) (-n ln p / ln² 2)` bits,
///   rounded up to whole 64-bit words, `k = max(1, round(m / n ln 2))`.
/// * Keys: strings and byte strings through `Murmur3_x86_32.hashUnsafeBytes` (Spark's
///   variant of MurmurHash3, see [`murmur3`](crate::murmur3)), `i64` / `u64` through
///   `hashLong` — Spark's `putString` / `putBinary` / `putLong`. A Spark `Int`, `Short` or
///   `Byte` column value is put as a `long`: pass it as `i64`.
/// * The serialized form (big-endian): the version (`int`), `k` (`int`), for version 2 the
///   seed (`int`), the word count (`int`) and the words (`long`s).
///
/// ```
/// use bloomforge_interop::{SparkBloomFilter, SparkVersion};
/// // BloomFilter.create(1_000_000, 0.03) in Spark 4.1+ (version 2, seed 0).
/// let mut f = SparkBloomFilter::new(1_000_000, 0.03)?;
/// assert_eq!(f.version(), SparkVersion::V2);
/// f.insert("user-17");
/// f.insert(&17i64);
/// assert!(f.contains("user-17") && f.contains(&17i64));
/// let again = SparkBloomFilter::from_bytes(&f.to_bytes())?;
/// assert_eq!(again, f);
/// # Ok::<(), bloomforge_interop::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SparkBloomFilter {
    bits: Bits,
    version: SparkVersion,
    seed: i32,
}

/// Spark's `BloomFilter.optimalNumOfBits(n, p)`.
pub(crate) fn optimal_num_bits(n: u64, p: f64) -> u64 {
    (-(n as f64) * p.ln() / (2f64.ln() * 2f64.ln())) as u64
}

impl SparkBloomFilter {
    /// What Spark's `BloomFilter.create(expected_items, false_pos)` makes: version 2,
    /// seed 0.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] where Spark throws (`false_pos` outside (0, 1), zero
    /// expected items, zero bits, more than 2^31 - 1 words); [`Error::Core`] if the words
    /// cannot be allocated.
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self> {
        Self::with_version(SparkVersion::V2, expected_items, false_pos, 0)
    }

    /// Spark's `create(version, n, optimalNumOfBits(n, fpp), seed)`: a filter of either
    /// version sized for `expected_items` at `false_pos`. Version 1 has no seed (`seed` is
    /// ignored, as Spark ignores it).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_version(
        version: SparkVersion,
        expected_items: u64,
        false_pos: f64,
        seed: i32,
    ) -> Result<Self> {
        if !(false_pos > 0.0 && false_pos < 1.0) {
            return Err(Error::InvalidArgument(format!(
                "false-positive rate {false_pos} must be in (0, 1)"
            )));
        }
        Self::with_num_bits(
            version,
            expected_items,
            optimal_num_bits(expected_items, false_pos),
            seed,
        )
    }

    /// Spark's `BloomFilter.create(version, expected_items, num_bits, seed)`: `num_bits`
    /// rounded up to whole words, `k` from `expected_items` and `num_bits`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for zero expected items or bits, more than 2^31 - 1 words,
    /// or more than [`SPARK_MAX_HASHES`] probes; [`Error::Core`] if the words cannot be
    /// allocated.
    pub fn with_num_bits(
        version: SparkVersion,
        expected_items: u64,
        num_bits: u64,
        seed: i32,
    ) -> Result<Self> {
        if expected_items == 0 || expected_items > i64::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "expected items {expected_items} (Spark: \"Expected insertions must be positive\")"
            )));
        }
        if num_bits == 0 || num_bits > i64::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "a Spark filter of {num_bits} bits (Spark: \"Number of bits must be positive\"): raise expected_items or lower false_pos"
            )));
        }
        let words = num_bits.div_ceil(64);
        if words > i32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "{num_bits} bits is over Spark's limit of 2^31 - 1 words"
            )));
        }
        let k = optimal_num_hashes(expected_items, num_bits);
        if k > SPARK_MAX_HASHES {
            return Err(Error::InvalidArgument(format!(
                "{k} hash functions (at most {SPARK_MAX_HASHES})"
            )));
        }
        let seed = if version == SparkVersion::V1 { 0 } else { seed };
        Ok(Self {
            bits: Bits::zeroed(words as usize, k)?,
            version,
            seed,
        })
    }

    #[inline(always)]
    fn probe(version: SparkVersion, seed: i32, key: KeyRef<'_>) -> Probe {
        let (h1, h2) = match key {
            KeyRef::Bytes(b) => {
                let h1 = spark_hash_bytes(b, seed);
                (h1, spark_hash_bytes(b, h1))
            }
            KeyRef::Long(v) => {
                let h1 = spark_hash_long(v, seed);
                (h1, spark_hash_long(v, h1))
            }
        };
        match version {
            SparkVersion::V1 => Probe::Int32 { h1, h2 },
            SparkVersion::V2 => Probe::Long64 { h1, h2 },
        }
    }

    /// Adds `key`; `true` when a bit changed (Spark's `put`).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let p = Self::probe(self.version, self.seed, key.key_ref());
        self.bits.insert(p)
    }

    /// Whether `key` may have been added (Spark's `mightContain`).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.bits
            .contains(Self::probe(self.version, self.seed, key.key_ref()))
    }

    /// Adds every key, hashing and prefetching a few keys ahead of the bit updates.
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        let (v, s) = (self.version, self.seed);
        self.bits
            .insert_batch(keys, |k| Self::probe(v, s, k.key_ref()));
    }

    /// Adds every key on rayon's current thread pool; the bits are those of
    /// [`insert_batch`](Self::insert_batch).
    pub fn par_insert_batch<K: Key + Sync>(&mut self, keys: &[K]) {
        let (v, s) = (self.version, self.seed);
        self.bits
            .par_insert_batch(keys, |k| Self::probe(v, s, k.key_ref()));
    }

    /// Answers for every key into `out`.
    ///
    /// # Errors
    /// `Error::Core(LengthMismatch)` when the lengths differ (`out` untouched).
    pub fn contains_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        let (v, s) = (self.version, self.seed);
        self.bits
            .contains_batch(keys, out, |k| Self::probe(v, s, k.key_ref()))
    }

    /// Adds `other`'s keys (Spark's `mergeInPlace`).
    ///
    /// # Errors
    /// [`Error::Incompatible`] unless both have the same version, bits, hash count and
    /// seed.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.union(&other.bits);
        Ok(())
    }

    /// Keeps the bits both have (Spark's `intersectInPlace`).
    ///
    /// # Errors
    /// As [`union`](Self::union).
    pub fn intersect(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.intersect(&other.bits);
        Ok(())
    }

    fn check_compatible(&self, other: &Self) -> Result<()> {
        if !self.bits.same_shape(&other.bits)
            || self.version != other.version
            || self.seed != other.seed
        {
            return Err(Error::Incompatible(format!(
                "Spark filters {:?} / {} bits / {} hashes / seed {} and {:?} / {} bits / {} hashes / seed {}",
                self.version,
                self.num_bits(),
                self.num_hashes(),
                self.seed,
                other.version,
                other.num_bits(),
                other.num_hashes(),
                other.seed
            )));
        }
        Ok(())
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        self.bits.clear();
    }

    /// The serialized version.
    pub fn version(&self) -> SparkVersion {
        self.version
    }

    /// The hash seed (0 for version 1).
    pub fn seed(&self) -> i32 {
        self.seed
    }

    /// The number of bits (`64 *` the word count; Spark's `bitSize()`).
    pub fn num_bits(&self) -> u64 {
        self.bits.num_bits()
    }

    /// The number of probes a key sets.
    pub fn num_hashes(&self) -> u32 {
        self.bits.k()
    }

    /// The number of set bits (Spark's `cardinality()`).
    pub fn count_ones(&self) -> u64 {
        self.bits.count_ones()
    }

    /// Spark's `expectedFpp()`: `(set bits / bits)^k`.
    pub fn expected_false_pos(&self) -> f64 {
        self.bits.expected_false_pos()
    }

    /// The false-positive rate theory gives after `n` distinct keys:
    /// `(1 - e^{-kn/m})^k`. For version 1 filters over 2^31 bits the probes reach only
    /// the first 2^31 bits, and `m` is taken as that.
    pub fn theoretical_false_pos(&self, n: u64) -> f64 {
        let m = match self.version {
            SparkVersion::V1 => self.num_bits().min(1 << 31),
            SparkVersion::V2 => self.num_bits(),
        };
        bloomforge_core::math::std_fp(m as f64, n as f64, self.num_hashes())
    }

    /// `-m/k ln(1 - ones/m)`: the number of distinct keys that best explains the set bits
    /// (an estimate: the filter keeps no count).
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

    /// Spark's `writeTo` form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.memory_bytes() as usize);
        out.extend_from_slice(&self.version.number().to_be_bytes());
        out.extend_from_slice(&(self.num_hashes() as i32).to_be_bytes());
        if self.version == SparkVersion::V2 {
            out.extend_from_slice(&self.seed.to_be_bytes());
        }
        self.bits.write_be(&mut out);
        out
    }

    /// Reads Spark's `writeTo` form of either version; the bytes must end where the
    /// filter does.
    ///
    /// # Errors
    /// [`Error::Format`] for an unknown version, a hash count outside
    /// `1..=`[`SPARK_MAX_HASHES`], a non-positive word count, truncated bytes or bytes
    /// after the words.
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

    /// Reads a filter from the start of `bytes`, returning it and the bytes after it.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), trailing bytes excepted.
    pub fn from_prefix(bytes: &[u8]) -> Result<(Self, &[u8])> {
        let bad = |reason: String| Error::Format {
            format: FORMAT,
            reason,
        };
        let int = |b: &[u8], what: &str| -> Result<(i32, usize)> {
            b.first_chunk::<4>()
                .map(|c| (i32::from_be_bytes(*c), 4))
                .ok_or_else(|| bad(format!("truncated before the {what}")))
        };
        let (version, mut at) = int(bytes, "version")?;
        let version = match version {
            1 => SparkVersion::V1,
            2 => SparkVersion::V2,
            v => return Err(bad(format!("unknown version {v} (Spark writes 1 or 2)"))),
        };
        let (k, n) = int(&bytes[at..], "hash count")?;
        at += n;
        if k < 1 || k as u32 > SPARK_MAX_HASHES {
            return Err(bad(format!(
                "{k} hash functions (1..={SPARK_MAX_HASHES} accepted)"
            )));
        }
        let seed = if version == SparkVersion::V2 {
            let (seed, n) = int(&bytes[at..], "seed")?;
            at += n;
            seed
        } else {
            0
        };
        let (bits, rest) = Bits::read_be(&bytes[at..], k as u32, FORMAT)?;
        Ok((
            Self {
                bits,
                version,
                seed,
            },
            rest,
        ))
    }
}

impl fmt::Debug for SparkBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparkBloomFilter")
            .field("version", &self.version)
            .field("seed", &self.seed)
            .field("num_bits", &self.num_bits())
            .field("num_hashes", &self.num_hashes())
            .field("count_ones", &self.count_ones())
            .finish()
    }
}

impl<K: Key> Extend<K> for SparkBloomFilter {
    /// Adds the keys through the batch path, a chunk at a time.
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}
