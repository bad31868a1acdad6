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
/// Chosen by measurement (see the README): under 1 ns for a `u64`, against 5-17 ns for
/// std's SipHash. foldhash's `fast` variant was tried first and rejected: for one `u64` it
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
/// they cannot drive the false-positive rate up. It costs about 36-40 ns a key (measured on
/// the reference machine, see the README), against ~1.6 ns for [`DefaultHasher`]: use it
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
