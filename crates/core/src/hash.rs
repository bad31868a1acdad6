//! Key hashing: a fast seeded default, an opt-in keyed (HighwayHash) mode, the Parquet
//! XXH64 mode, and the range reductions every layout uses.
//!
//! Every filter is generic over `S: BuildHasher` and turns a key into one 64-bit hash;
//! the layouts derive all probe positions from that hash (see each layout's docs). Callers
//! that already hold a good 64-bit hash skip the hasher with `insert_hash` / `contains_hash`.

use core::fmt;
use core::hash::{BuildHasher, Hash};

/// The default hasher: foldhash's `quality` variant with a fixed, caller-chosen seed.
///
/// Chosen by measurement (see `docs/benchmarks.md`): under 1 ns for a `u64`, against 5-17 ns
/// for std's SipHash. foldhash's `fast` variant does not fit: for one `u64` it
/// is a single multiply-fold of `key ^ seed`, so sequential keys fill blocks too evenly
/// (FP 7-12 % off the theory at 2^20 sequential keys) and seeds only permute the keys
/// (seeds 1 and 2 set identical bits for keys 0..2^20); `quality` adds one multiply-fold
/// that mixes both, and the FP tests pass for sequential, string and random keys. It is deterministic for a given seed, so two
/// filters built with the same seed can be combined and a serialized filter stays valid.
/// It is **not** collision-resistant against an adversary who knows the seed; use
/// [`KeyedHasher`] for untrusted keys.
#[derive(Clone, Copy)]
pub struct DefaultHasher {
    seed: u64,
    // The seed already mixed into foldhash's per-hasher state, so hashing a key does not
    // redo that multiply (batch loops cannot hoist it: they reload the hasher per key).
    state: foldhash::quality::FixedState,
}

impl Default for DefaultHasher {
    #[inline]
    fn default() -> Self {
        Self::with_seed(0)
    }
}

impl PartialEq for DefaultHasher {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.seed == other.seed
    }
}

impl Eq for DefaultHasher {}

impl DefaultHasher {
    /// A default hasher with the given seed.
    #[inline]
    pub const fn with_seed(seed: u64) -> Self {
        Self {
            seed,
            state: foldhash::quality::FixedState::with_seed(seed),
        }
    }

    /// The seed this hasher was built with.
    #[inline]
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

impl fmt::Debug for DefaultHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefaultHasher")
            .field("seed", &self.seed)
            .finish()
    }
}

impl BuildHasher for DefaultHasher {
    type Hasher = foldhash::quality::FoldHasher;

    #[inline(always)]
    fn build_hasher(&self) -> Self::Hasher {
        self.state.build_hasher()
    }
}

/// Keyed hashing for adversarial input: HighwayHash with a secret 256-bit key.
///
/// An attacker who knows this code but not the key cannot craft keys that collide, so
/// they cannot drive the false-positive rate up. It costs about 36-40 ns a key (measured; see
/// `docs/benchmarks.md`), against ~1.6 ns for [`DefaultHasher`]: use it
/// where keys come from untrusted parties.
///
/// Note that `highway::Key::default()` is all zeros, i.e. *unkeyed*; this type never uses
/// it implicitly: [`KeyedHasher::random`] draws a key from the operating system and
/// [`KeyedHasher::with_key`] takes the caller's.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyedHasher {
    key: [u64; 4],
}

impl KeyedHasher {
    /// A keyed hasher with a fresh random key from the operating system's generator.
    ///
    /// # Errors
    /// Fails only if the operating system's random source fails.
    pub fn random() -> crate::Result<Self> {
        let mut bytes = [0u8; 32];
        getrandom::getrandom(&mut bytes).map_err(|e| crate::Error::RandomSource(e.to_string()))?;
        let mut key = [0u64; 4];
        for (k, chunk) in key.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            *k = u64::from_le_bytes(b);
        }
        Ok(Self { key })
    }

    /// A keyed hasher with the caller's secret key. Keep the key secret: anyone who knows
    /// it can craft colliding keys.
    pub const fn with_key(key: [u64; 4]) -> Self {
        Self { key }
    }
}

impl fmt::Debug for KeyedHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyedHasher { key: <secret> }")
    }
}

impl BuildHasher for KeyedHasher {
    type Hasher = highway::HighwayHasher;

    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        highway::HighwayHasher::new(highway::Key(self.key))
    }
}

/// The Parquet hash: XXH64 with seed 0 of a value's plain encoding (little-endian bytes for
/// numbers, the UTF-8 bytes for strings). Feed its result to
/// [`SplitBlockBloomFilter::insert_hash`](crate::SplitBlockBloomFilter::insert_hash) to build
/// filters that Parquet readers accept.
#[inline]
pub fn parquet_hash(plain_encoding: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(plain_encoding, 0)
}

/// The hasher of Parquet's split-block filters as a filter hasher: XXH64 (seed 0) of a key's
/// plain encoding in a column of a given physical type, so a
/// [`SplitBlockBloomFilter<ParquetHasher>`](crate::SplitBlockBloomFilter) is a Parquet
/// column's filter that the project's format can store
/// ([`HashAlgorithm::ParquetXxh64`], the
/// physical type and type length in the header's seed field) and refuse to read with
/// another column type's hasher.
///
/// Parquet hashes a value's plain encoding, which Rust's `Hash` reproduces only for the
/// fixed-width integers (`i32`/`u32` for `INT32`, `i64`/`u64` for `INT64`: their
/// little-endian bytes). `Hash` for `str` and `[u8]` adds a terminator or a length, so hash
/// strings and byte arrays with [`parquet_hash`] and use `insert_hash` / `contains_hash`.
///
/// ```
/// use bloomforge_core::{parquet_hash, ParquetHasher, SplitBlockBloomFilter};
/// let mut f = SplitBlockBloomFilter::builder()
///     .expected_items(100).false_pos(0.01).hasher(ParquetHasher::INT64).build()?;
/// f.insert(&42i64); // the INT64 plain encoding: 8 little-endian bytes
/// assert!(f.contains_hash(parquet_hash(&42i64.to_le_bytes())));
/// let bytes = f.to_bytes();
/// // The column type is in the header: read it back, then the filter.
/// let hasher = ParquetHasher::of_bytes(&bytes)?;
/// assert_eq!(hasher, ParquetHasher::INT64);
/// let g = SplitBlockBloomFilter::from_bytes_with_hasher(&bytes, hasher)?;
/// assert!(g.contains(&42i64));
/// // A reader expecting another column type is refused.
/// let wrong = SplitBlockBloomFilter::from_bytes_with_hasher(&bytes, ParquetHasher::INT32);
/// assert!(wrong.is_err());
/// # Ok::<(), bloomforge_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParquetHasher {
    physical_type: u8,
    type_length: u32,
}

impl ParquetHasher {
    /// Parquet's `INT32` (physical type 1).
    pub const INT32: Self = Self {
        physical_type: 1,
        type_length: 0,
    };
    /// Parquet's `INT64` (physical type 2).
    pub const INT64: Self = Self {
        physical_type: 2,
        type_length: 0,
    };
    /// Parquet's `BYTE_ARRAY` (physical type 6): strings and binaries.
    pub const BYTE_ARRAY: Self = Self {
        physical_type: 6,
        type_length: 0,
    };
    /// The largest physical type number of the Parquet specification
    /// (`FIXED_LEN_BYTE_ARRAY`).
    pub const MAX_PHYSICAL_TYPE: u8 = 7;

    /// The hasher for a column of Parquet physical type `physical_type` (the Thrift `Type`
    /// number: 0 `BOOLEAN`, 1 `INT32`, 2 `INT64`, 3 `INT96`, 4 `FLOAT`, 5 `DOUBLE`,
    /// 6 `BYTE_ARRAY`, 7 `FIXED_LEN_BYTE_ARRAY`) and `type_length` (the value length of a
    /// `FIXED_LEN_BYTE_ARRAY` column, 0 for the others). `None` for a number past 7.
    pub const fn new(physical_type: u8, type_length: u32) -> Option<Self> {
        if physical_type > Self::MAX_PHYSICAL_TYPE {
            None
        } else {
            Some(Self {
                physical_type,
                type_length,
            })
        }
    }

    /// The column's Parquet physical type number.
    pub const fn physical_type(&self) -> u8 {
        self.physical_type
    }

    /// The column's value length (`FIXED_LEN_BYTE_ARRAY`; 0 for other types).
    pub const fn type_length(&self) -> u32 {
        self.type_length
    }

    /// The value the format stores in the header's seed field: the physical type in the
    /// low byte, the type length above it.
    pub(crate) const fn encoded(&self) -> u64 {
        self.physical_type as u64 | (self.type_length as u64) << 8
    }

    /// The inverse of [`encoded`](Self::encoded); `None` for values no hasher encodes.
    pub(crate) fn decode(v: u64) -> Option<Self> {
        let length = u32::try_from(v >> 8).ok()?;
        Self::new((v & 0xff) as u8, length)
    }
}

/// XXH64 with seed 0 over the bytes written to it: [`ParquetHasher`]'s hasher.
#[derive(Clone)]
pub struct ParquetXxh64(xxhash_rust::xxh64::Xxh64);

impl fmt::Debug for ParquetXxh64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ParquetXxh64")
    }
}

impl core::hash::Hasher for ParquetXxh64 {
    #[inline]
    fn finish(&self) -> u64 {
        self.0.digest()
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl BuildHasher for ParquetHasher {
    type Hasher = ParquetXxh64;

    #[inline]
    fn build_hasher(&self) -> ParquetXxh64 {
        ParquetXxh64(xxhash_rust::xxh64::Xxh64::new(0))
    }
}

/// Hashes one key with `S`.
#[inline(always)]
pub(crate) fn hash_one<S: BuildHasher, T: Hash + ?Sized>(hasher: &S, key: &T) -> u64 {
    hasher.hash_one(key)
}

/// A fixed value whose hash identifies a hasher's seed or key, for compatibility checks.
const FINGERPRINT_PROBE: u64 = 0x5eed_b100_f0e5_0001;

/// Fingerprint of a hasher: its hash of a fixed probe value. Hashers that differ in seed or
/// key give different fingerprints with overwhelming probability.
#[inline]
pub fn hasher_fingerprint<S: BuildHasher>(hasher: &S) -> u64 {
    hash_one(hasher, &FINGERPRINT_PROBE)
}

/// Lemire's fast range: maps a 64-bit hash uniformly onto `0..n` using its high bits.
/// Works for every `n` up to 2^64, unlike a 32-bit reduction that tops out at 2^32.
#[inline(always)]
pub fn fast_range64(hash: u64, n: u64) -> u64 {
    ((u128::from(hash) * u128::from(n)) >> 64) as u64
}

/// The 64-bit finalizer of MurmurHash3 / SplitMix64: a bijection that spreads every input
/// bit over the whole word. Used to derive a second independent-looking hash.
#[inline(always)]
pub const fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Which hash function a serialized filter was built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum HashAlgorithm {
    /// [`DefaultHasher`] (foldhash, seeded; the seed is stored).
    Foldhash = 1,
    /// [`KeyedHasher`] (HighwayHash; the secret key is not stored: the reader supplies it).
    HighwayKeyed = 2,
    /// [`ParquetHasher`]: XXH64 (seed 0) of each key's Parquet plain encoding, a Parquet
    /// column's split-block filter. The seed field holds the column's physical type (low
    /// byte) and type length (above it) instead of a seed.
    ParquetXxh64 = 3,
}

/// A hasher that can be recorded in (and, if unkeyed, restored from) the format.
pub trait PersistentHasher: BuildHasher + Sized {
    /// The algorithm id written to the header.
    const ALGORITHM: HashAlgorithm;
    /// The seed written to the header (0 where nothing may be stored).
    fn stored_seed(&self) -> u64;
    /// Rebuilds the hasher from a stored seed; `None` for keyed hashers, whose key the
    /// caller must supply (`from_bytes_with_hasher`).
    fn from_stored_seed(seed: u64) -> Option<Self>;
    /// A value that tells a keyed hasher's secret apart from others without revealing it,
    /// written to the header so that a reader with the wrong key is refused; never 0 for
    /// a keyed hasher. 0 (the default) for unkeyed hashers, whose seed is stored instead.
    fn key_check(&self) -> u64 {
        0
    }
}

impl PersistentHasher for DefaultHasher {
    const ALGORITHM: HashAlgorithm = HashAlgorithm::Foldhash;
    fn stored_seed(&self) -> u64 {
        self.seed()
    }
    fn from_stored_seed(seed: u64) -> Option<Self> {
        Some(DefaultHasher::with_seed(seed))
    }
}

impl PersistentHasher for KeyedHasher {
    const ALGORITHM: HashAlgorithm = HashAlgorithm::HighwayKeyed;
    fn stored_seed(&self) -> u64 {
        0
    }
    fn from_stored_seed(_: u64) -> Option<Self> {
        None
    }
    /// HighwayHash of a fixed domain string under the key: a keyed PRF output, which does
    /// not reveal the key.
    fn key_check(&self) -> u64 {
        self.hash_one("bloomforge key check v1").max(1)
    }
}

impl PersistentHasher for ParquetHasher {
    const ALGORITHM: HashAlgorithm = HashAlgorithm::ParquetXxh64;
    fn stored_seed(&self) -> u64 {
        self.encoded()
    }
    fn from_stored_seed(seed: u64) -> Option<Self> {
        ParquetHasher::decode(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pre-mixed state must hash exactly as foldhash's `quality::FixedState` with the
    /// same seed: serialized filters record only the algorithm and the seed.
    #[test]
    fn default_hasher_is_foldhash_quality_with_the_seed() {
        for seed in [0u64, 1, 2, 42, u64::MAX] {
            let ours = DefaultHasher::with_seed(seed);
            let theirs = foldhash::quality::FixedState::with_seed(seed);
            assert_eq!(ours.seed(), seed);
            assert_eq!(ours, DefaultHasher::with_seed(seed));
            for key in [0u64, 1, 7, u64::MAX] {
                assert_eq!(ours.hash_one(key), theirs.hash_one(key));
            }
            assert_eq!(
                ours.hash_one("a longer string key"),
                theirs.hash_one("a longer string key")
            );
        }
        assert_eq!(DefaultHasher::default(), DefaultHasher::with_seed(0));
        assert_ne!(DefaultHasher::with_seed(1), DefaultHasher::with_seed(2));
    }

    #[test]
    fn fast_range_covers_large_ranges() {
        let n = 1u64 << 40;
        assert_eq!(fast_range64(u64::MAX, n), n - 1);
        assert_eq!(fast_range64(0, n), 0);
        assert_eq!(fast_range64(1 << 63, n), n / 2);
    }

    #[test]
    fn fingerprints_differ_by_seed_and_key() {
        assert_ne!(
            hasher_fingerprint(&DefaultHasher::with_seed(1)),
            hasher_fingerprint(&DefaultHasher::with_seed(2))
        );
        assert_ne!(
            hasher_fingerprint(&KeyedHasher::with_key([1, 2, 3, 4])),
            hasher_fingerprint(&KeyedHasher::with_key([1, 2, 3, 5]))
        );
        let a = KeyedHasher::random().unwrap();
        let b = KeyedHasher::random().unwrap();
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains(&a.key[0].to_string()));
    }

    #[test]
    fn parquet_hash_is_xxh64_seed0() {
        // Reference value of XXH64("", 0).
        assert_eq!(parquet_hash(b""), 0xef46_db37_51d8_e999);
    }
}
