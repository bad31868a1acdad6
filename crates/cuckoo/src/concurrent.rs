//! [`ConcurrentCuckooFilter`]: inserts, queries and removes through `&self` from many
//! threads, by sharding: up to 256 independent sub-filters, each behind its own `RwLock`.
//!
//! This is *not* libcuckoo's design (striped locks over the buckets of one table, or an
//! optimistic version scheme with lock-free reads): the key's hash picks one of `2^s`
//! shards (fast range of a re-mixed hash, so the shard choice is independent of the bits
//! that pick buckets and fingerprints; `s` grows with the size, at most 256 shards, each
//! sized for at least 1024 keys), each shard is a whole [`CuckooFilter`], and a kick chain
//! never leaves its shard, so no operation takes two locks and there is no lock ordering.
//! Threads contend only on the same shard; queries share it, an insert or remove holds
//! its shard's write lock for the whole kick chain and blocks that shard's readers.
//!
//! What it costs against one table:
//! - **Memory.** The keys do not split evenly, so each shard is sized for its mean share
//!   plus eight standard deviations and 16 keys: +23.9 % slots at 10 000 and 40 000 keys
//!   (8 and 32 shards), +21.3 % at 100 000, +13.2 % at 1M, +4.1 % at 10M, +1.3 % at 100M
//!   (256 shards), plus a lock and 16 padding bytes per shard.
//! - **An unlucky shard fills early.** The first `Full` comes when *one* shard reaches its
//!   own first-failure load, while the others sit below theirs: in the stress test (40 000
//!   expected keys, 32 shards, 4 seeds) the first failure came at 0.910-0.936 of the total
//!   capacity, against 0.96-0.97 for one table. The margin above still puts it at 1.20-1.23x
//!   the expected keys there, and a failed insert changes nothing (the shard's stash rule).
//! - Fewer shards, more contention, for small filters (one shard below 2048 keys).

use crate::error::{CuckooError, Result};
use crate::filter::{CuckooBuilder, CuckooFilter};
use crate::table::{Fingerprint, Fp12};
use bloomforge_core::format::{self, u32_at, u64_at, FilterKind, PersistentHasher};
use bloomforge_core::hash::{fast_range64, mix64};
use bloomforge_core::{DefaultHasher, RemoveOutcome};
use core::hash::{BuildHasher, Hash};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A cuckoo filter shared between threads (`Send + Sync`): `insert(&self)`,
/// `contains(&self)`, `remove(&self)`.
///
/// ```
/// use bloomforge_cuckoo::ConcurrentCuckooFilter;
/// let f = ConcurrentCuckooFilter::new(100_000, 0.01)?;
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let f = &f;
///         s.spawn(move || {
///             for k in 0..1000u64 {
///                 f.insert(&(t * 1000 + k)).unwrap();
///             }
///         });
///     }
/// });
/// assert!((0..4000u64).all(|k| f.contains(&k)));
/// assert_eq!(f.len(), 4000);
/// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
/// ```
#[derive(Debug)]
pub struct ConcurrentCuckooFilter<F: Fingerprint = Fp12, S = DefaultHasher> {
    shards: Box<[RwLock<CuckooFilter<F, S>>]>,
    hasher: S,
}

/// Shards for `items` keys: a power of two, at most 256, each shard sized for at least
/// 1024 keys.
fn shard_count(items: u64) -> usize {
    let mut s = 1usize;
    while s < 256 && items / (2 * s as u64) >= 1024 {
        s *= 2;
    }
    s
}

/// Keys one shard is sized for: its mean share plus eight standard deviations of the
/// binomial split (so an uneven split does not fill one shard early) and a small floor.
fn per_shard(items: u64, shards: usize) -> u64 {
    let mean = items as f64 / shards as f64;
    (mean + 8.0 * mean.sqrt() + 16.0).ceil() as u64
}

impl ConcurrentCuckooFilter {
    /// A shared filter for `expected_items` keys at `false_pos` (12-bit fingerprints, 4-slot
    /// buckets where they reach `false_pos`, default hasher; see [`CuckooFilter::new`]).
    ///
    /// # Errors
    /// As [`CuckooFilter::new`].
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self> {
        Self::builder()
            .expected_items(expected_items)
            .false_pos(false_pos)
            .build()
    }

    /// The builder, with [`CuckooFilter::builder`]'s setters; `expected_items` counts the
    /// keys of all shards together:
    ///
    /// ```
    /// use bloomforge_cuckoo::{ConcurrentCuckooFilter, Fp16};
    /// let f = ConcurrentCuckooFilter::builder()
    ///     .expected_items(100_000)
    ///     .false_pos(0.0005)
    ///     .bucket_size(4)
    ///     .max_kicks(500)
    ///     .seed(7)
    ///     .fingerprint::<Fp16>()
    ///     .build()?;
    /// f.insert(&"key")?;
    /// assert!(f.contains(&"key"));
    /// assert!(f.capacity() >= 100_000);
    /// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
    /// ```
    pub fn builder() -> ConcurrentCuckooBuilder {
        ConcurrentCuckooBuilder {
            inner: CuckooFilter::builder(),
            expected_items: 0,
        }
    }
}

/// Builder of a [`ConcurrentCuckooFilter`]: [`CuckooBuilder`]'s setters, with
/// `expected_items` the keys of all shards together (each shard is built for its share
/// with a margin).
#[must_use]
#[derive(Clone, Debug)]
pub struct ConcurrentCuckooBuilder<F: Fingerprint = Fp12, S = DefaultHasher> {
    inner: CuckooBuilder<F, S>,
    expected_items: u64,
}

impl Default for ConcurrentCuckooBuilder {
    fn default() -> Self {
        ConcurrentCuckooFilter::builder()
    }
}

impl<F: Fingerprint> ConcurrentCuckooBuilder<F, DefaultHasher> {
    /// The default hasher with this seed (as [`CuckooBuilder::seed`]).
    pub fn seed(self, seed: u64) -> Self {
        Self {
            inner: self.inner.seed(seed),
            ..self
        }
    }
}

impl<F: Fingerprint, S: BuildHasher + Clone> ConcurrentCuckooBuilder<F, S> {
    /// Keys of all shards together (required, at least 1).
    pub fn expected_items(self, n: u64) -> Self {
        Self {
            expected_items: n,
            ..self
        }
    }
    /// As [`CuckooBuilder::false_pos`].
    pub fn false_pos(self, p: f64) -> Self {
        Self {
            inner: self.inner.false_pos(p),
            ..self
        }
    }
    /// As [`CuckooBuilder::bucket_size`].
    pub fn bucket_size(self, b: u32) -> Self {
        Self {
            inner: self.inner.bucket_size(b),
            ..self
        }
    }
    /// As [`CuckooBuilder::max_kicks`].
    pub fn max_kicks(self, kicks: u32) -> Self {
        Self {
            inner: self.inner.max_kicks(kicks),
            ..self
        }
    }
    /// As [`CuckooBuilder::target_load`].
    pub fn target_load(self, load: f64) -> Self {
        Self {
            inner: self.inner.target_load(load),
            ..self
        }
    }
    /// As [`CuckooBuilder::hasher`] (one hasher for every shard and the shard choice).
    pub fn hasher<S2: BuildHasher + Clone>(self, hasher: S2) -> ConcurrentCuckooBuilder<F, S2> {
        ConcurrentCuckooBuilder {
            inner: self.inner.hasher(hasher),
            expected_items: self.expected_items,
        }
    }
    /// As [`CuckooBuilder::fingerprint`].
    pub fn fingerprint<F2: Fingerprint>(self) -> ConcurrentCuckooBuilder<F2, S> {
        ConcurrentCuckooBuilder {
            inner: self.inner.fingerprint::<F2>(),
            expected_items: self.expected_items,
        }
    }
    /// Validates the parameters and allocates the shards.
    ///
    /// # Errors
    /// As [`CuckooBuilder::build`].
    pub fn build(self) -> Result<ConcurrentCuckooFilter<F, S>> {
        ConcurrentCuckooFilter::from_builder(self.inner, self.expected_items)
    }
}

impl<F: Fingerprint, S: BuildHasher + Clone> ConcurrentCuckooFilter<F, S> {
    /// Shards built by `builder` for `expected_items` keys in all (the builder's own
    /// `expected_items` is replaced by each shard's share). [`builder`](ConcurrentCuckooFilter::builder)
    /// does the same without naming the count twice.
    ///
    /// # Errors
    /// As [`CuckooBuilder::build`].
    pub fn from_builder(builder: CuckooBuilder<F, S>, expected_items: u64) -> Result<Self> {
        if expected_items == 0 {
            return Err(bloomforge_core::Error::ZeroItems.into());
        }
        let shards = shard_count(expected_items);
        let each = per_shard(expected_items, shards);
        let first = builder.clone().expected_items(each).build()?;
        let hasher = first.hasher().clone();
        let mut all = Vec::with_capacity(shards);
        all.push(RwLock::new(first));
        for _ in 1..shards {
            all.push(RwLock::new(builder.clone().expected_items(each).build()?));
        }
        Ok(Self {
            shards: all.into_boxed_slice(),
            hasher,
        })
    }

    #[inline]
    fn shard(&self, hash: u64) -> usize {
        fast_range64(mix64(hash), self.shards.len() as u64) as usize
    }

    fn read(&self, i: usize) -> RwLockReadGuard<'_, CuckooFilter<F, S>> {
        // A lock is poisoned only by a panic while it is held, and the calls made under
        // it (a shard's insert, query, remove, clear) do not panic; a poisoned shard is
        // still used rather than turning every later call into a panic.
        self.shards[i].read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, i: usize) -> RwLockWriteGuard<'_, CuckooFilter<F, S>> {
        self.shards[i].write().unwrap_or_else(|e| e.into_inner())
    }

    /// Inserts a key by hash.
    ///
    /// # Errors
    /// [`CuckooError::Full`] when the key's shard is full; nothing changed.
    pub fn insert_hash(&self, hash: u64) -> Result<()> {
        self.write(self.shard(hash)).insert_hash(hash)
    }
    /// Whether a key with this hash may be present.
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.read(self.shard(hash)).contains_hash(hash)
    }
    /// Removes one copy of a key by hash ([`RemoveOutcome::Removed`], as
    /// [`CuckooFilter::remove_hash`]).
    ///
    /// # Errors
    /// [`CuckooError::NotPresent`]; nothing changed.
    pub fn remove_hash(&self, hash: u64) -> Result<RemoveOutcome> {
        self.write(self.shard(hash)).remove_hash(hash)
    }

    /// Inserts `key` (see [`CuckooFilter::insert`]).
    ///
    /// # Errors
    /// [`CuckooError::Full`] when the key's shard is full; nothing changed.
    pub fn insert<T: Hash + ?Sized>(&self, key: &T) -> Result<()> {
        self.insert_hash(self.hasher.hash_one(key))
    }
    /// Whether `key` may be present.
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }
    /// Removes one copy of `key` ([`RemoveOutcome::Removed`]; the caveat of
    /// [`CuckooFilter::remove`] applies).
    ///
    /// # Errors
    /// [`CuckooError::NotPresent`]; nothing changed.
    pub fn remove<T: Hash + ?Sized>(&self, key: &T) -> Result<RemoveOutcome> {
        self.remove_hash(self.hasher.hash_one(key))
    }

    /// Inserts the keys of `iter` in order through `&self` and stops at the first that
    /// does not fit: the keys before it stay inserted, that key and the rest are not.
    ///
    /// # Errors
    /// [`CuckooError::Full`] from the first failing insert.
    pub fn try_extend<T: Hash, I: IntoIterator<Item = T>>(&self, iter: I) -> Result<()> {
        for key in iter {
            self.insert(&key)?;
        }
        Ok(())
    }

    /// Fingerprints stored in all shards (a snapshot: shards are read one after another).
    pub fn len(&self) -> u64 {
        (0..self.shards.len()).map(|i| self.read(i).len()).sum()
    }
    /// Whether nothing is stored (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Slots of all shards.
    pub fn capacity(&self) -> u64 {
        (0..self.shards.len())
            .map(|i| self.read(i).capacity())
            .sum()
    }
    /// The expected false-positive rate at the current loads: a query goes to one shard,
    /// each with equal probability (a hash picks it), so the mean of the shards' rates
    /// ([`CuckooFilter::expected_false_pos`]; a snapshot).
    pub fn expected_false_pos(&self) -> f64 {
        let n = self.shards.len();
        (0..n)
            .map(|i| self.read(i).expected_false_pos())
            .sum::<f64>()
            / n as f64
    }
    /// Number of shards (lock stripes).
    pub fn num_shards(&self) -> usize {
        self.shards.len()
    }
    /// Bits of all shards' tables.
    pub fn memory_bits(&self) -> u64 {
        (0..self.shards.len())
            .map(|i| self.read(i).memory_bits())
            .sum()
    }
    /// Empties every shard.
    pub fn clear(&self) {
        for i in 0..self.shards.len() {
            self.write(i).clear();
        }
    }
    /// The shards, each a plain filter (for checks and serialization of each shard).
    pub fn into_shards(self) -> Vec<CuckooFilter<F, S>> {
        self.shards
            .into_vec()
            .into_iter()
            .map(|l| l.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }
}

/// Bytes of the sharded payload's head: the shard count (`u32`) and a reserved word.
const SHARDED_HEAD: usize = 8;

impl<F: Fingerprint, S: PersistentHasher + Clone> ConcurrentCuckooFilter<F, S> {
    /// Writes the filter in core's format (kind [`FilterKind::ConcurrentCuckoo`]): the shard
    /// count, then each shard as a whole [`CuckooFilter`] encoding (kind `Cuckoo`) after
    /// its length. Each shard is written under its read lock, one after another: inserts
    /// that run meanwhile are in the bytes or not, shard by shard, and every shard's bytes
    /// are consistent (they pass their checksum).
    ///
    /// # Errors
    /// `Core(Io)` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, mut writer: W) -> Result<()> {
        writer
            .write_all(&self.to_bytes())
            .map_err(|e| bloomforge_core::Error::from(e).into())
    }

    /// The filter in core's format (see [`write_to`](Self::write_to)).
    pub fn to_bytes(&self) -> Vec<u8> {
        // One snapshot of each shard, so the lengths, bits and items written agree.
        let shards: Vec<Vec<u8>> = (0..self.shards.len())
            .map(|i| self.read(i).to_bytes())
            .collect();
        let mut head = Vec::with_capacity(SHARDED_HEAD);
        head.extend_from_slice(&(shards.len() as u32).to_le_bytes());
        head.extend_from_slice(&0u32.to_le_bytes());
        let payload_len =
            SHARDED_HEAD as u64 + shards.iter().map(|b| 8 + b.len() as u64).sum::<u64>();
        let (mut bits, mut items, mut probes) = (0u64, 0u64, 0u32);
        for b in &shards {
            let h = format::Header::parse(b).expect("a shard's own encoding");
            bits += h.num_bits;
            items += h.items;
            probes = h.num_hashes;
        }
        let mut out = Vec::with_capacity(format::HEADER_LEN + payload_len as usize);
        format::encode_to(
            &mut out,
            FilterKind::ConcurrentCuckoo,
            &self.hasher,
            probes,
            bits,
            items,
            payload_len,
            |sink| {
                sink(&head);
                for b in &shards {
                    sink(&(b.len() as u64).to_le_bytes());
                    sink(b);
                }
            },
        )
        .expect("writing to a Vec cannot fail");
        out
    }

    /// Reads a filter written by [`to_bytes`](Self::to_bytes) with the hasher given (for
    /// keyed hashers, whose key is not stored); every shard must have been built with it.
    ///
    /// # Errors
    /// `Core(Corrupt)` / `Core(UnsupportedVersion)` for bad bytes (a shard count that is
    /// not a power of two up to 256, shards of other sizes than announced or of different
    /// bucket sizes), `Core(HasherMismatch)`, [`CuckooError::FingerprintMismatch`].
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
        Self::decode(bytes, Some(hasher))
    }

    fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
        let corrupt = |reason| -> CuckooError { bloomforge_core::Error::Corrupt { reason }.into() };
        let (header, payload, hasher) =
            format::decode::<S>(bytes, FilterKind::ConcurrentCuckoo, hasher)?;
        if payload.len() < SHARDED_HEAD || u32_at(payload, 4) != 0 {
            return Err(corrupt(
                "sharded cuckoo payload head is short or its reserved word is set",
            ));
        }
        let count = u32_at(payload, 0) as usize;
        if !count.is_power_of_two() || count > 256 {
            return Err(corrupt("shard count is not a power of two up to 256"));
        }
        let mut rest = &payload[SHARDED_HEAD..];
        let mut shards = Vec::with_capacity(count);
        let (mut bits, mut items) = (0u64, 0u64);
        for _ in 0..count {
            if rest.len() < 8 {
                return Err(corrupt("sharded cuckoo payload ends before a shard"));
            }
            let len = u64_at(rest, 0);
            let body = &rest[8..];
            if len > body.len() as u64 {
                return Err(corrupt("a shard is longer than the payload left"));
            }
            let (shard_bytes, tail) = body.split_at(len as usize);
            let shard = CuckooFilter::<F, S>::decode(shard_bytes, Some(hasher.clone()))?;
            if shard.bucket_size != header.num_hashes {
                return Err(corrupt("a shard's bucket size differs from the header's"));
            }
            bits += shard.memory_bits();
            items += shard.len();
            shards.push(RwLock::new(shard));
            rest = tail;
        }
        if !rest.is_empty() || bits != header.num_bits || items != header.items {
            return Err(corrupt(
                "shard sizes or counts do not add up to the header's",
            ));
        }
        Ok(Self {
            shards: shards.into_boxed_slice(),
            hasher,
        })
    }
}

impl<F: Fingerprint> ConcurrentCuckooFilter<F, DefaultHasher> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes), rebuilding the default
    /// hasher from the stored seed.
    ///
    /// ```
    /// use bloomforge_cuckoo::ConcurrentCuckooFilter;
    /// let f = ConcurrentCuckooFilter::new(10_000, 0.01)?;
    /// f.insert(&42u64)?;
    /// let g: ConcurrentCuckooFilter = ConcurrentCuckooFilter::from_bytes(&f.to_bytes())?;
    /// assert!(g.contains(&42u64));
    /// assert_eq!(g.num_shards(), f.num_shards());
    /// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized filter from `reader`.
    ///
    /// # Errors
    /// `Core(Io)` if the reader fails or ends early; otherwise as [`from_bytes`](Self::from_bytes).
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

/// Inserts every key as [`insert`](ConcurrentCuckooFilter::insert) does (a repeated key
/// is stored again). **Panics** if a shard fills up, as [`CuckooFilter`]'s `Extend` does;
/// use [`try_extend`](ConcurrentCuckooFilter::try_extend) to get the error instead. The
/// inserts take `&self`: `(&filter).extend(keys)` works from any number of threads.
impl<T: Hash, F: Fingerprint, S: BuildHasher + Clone> Extend<T> for ConcurrentCuckooFilter<F, S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        (&*self).extend(iter);
    }
}

/// As the owned `Extend`, through a shared reference.
impl<T: Hash, F: Fingerprint, S: BuildHasher + Clone> Extend<T> for &ConcurrentCuckooFilter<F, S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        if let Err(e) = self.try_extend(iter) {
            panic!("ConcurrentCuckooFilter::extend: {e}; use try_extend to handle a full filter");
        }
    }
}

/// Rebuilds a [`FromIterator`] filter with a quarter more room at most this many times.
const FROM_ITER_MAX_GROWTHS: u32 = 16;

/// Collects the keys as a **set**, as [`CuckooFilter`]'s `FromIterator` does (a repeated
/// key is stored once, keys deduplicated by their 64-bit hash), into shards built by
/// [`ConcurrentCuckooFilter::new`]'s defaults (12-bit fingerprints, 4-slot buckets,
/// default hasher) for the number of distinct keys. If a shard overflows it rebuilds with
/// a quarter more room, at most 16 times. **Panics** with
/// "ConcurrentCuckooFilter::from_iter: ..." if the filter cannot be allocated or the keys
/// still do not fit; use [`ConcurrentCuckooFilter::builder`] and
/// [`try_extend`](ConcurrentCuckooFilter::try_extend) to get errors instead.
impl<T: Hash> FromIterator<T> for ConcurrentCuckooFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let hasher = CuckooFilter::builder().build_hasher();
        let mut hashes: Vec<u64> = iter.into_iter().map(|k| hasher.hash_one(&k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let mut items = (hashes.len() as u64).max(1);
        for _ in 0..=FROM_ITER_MAX_GROWTHS {
            let f = Self::from_builder(CuckooFilter::builder(), items)
                .unwrap_or_else(|e| panic!("ConcurrentCuckooFilter::from_iter: {e}"));
            if hashes.iter().all(|&h| f.insert_hash(h).is_ok()) {
                return f;
            }
            items += items.div_ceil(4);
        }
        panic!(
            "ConcurrentCuckooFilter::from_iter: {} distinct keys did not fit after \
             {FROM_ITER_MAX_GROWTHS} rebuilds with more room",
            hashes.len()
        );
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<ConcurrentCuckooFilter>();
    is::<CuckooFilter>();
    let _: Option<CuckooError> = None;
}
