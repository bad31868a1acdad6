//! [`Iblt`]: an invertible Bloom lookup table (Goodrich & Mitzenmacher 2011) over 64-bit
//! key hashes, for set reconciliation.

use std::hash::{BuildHasher, Hash};

use bloomforge_core::format::{self, u32_at, u64_at, FilterKind, PersistentHasher};
use bloomforge_core::hash::{fast_range64, hasher_fingerprint, mix64, DefaultHasher};

use crate::RetrievalError;

/// Probes per key (one in each of three subtables).
const K: usize = 3;
/// Salts of the three probes.
const SALT: [u64; K] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
];
/// Bytes of one serialized cell.
const CELL_BYTES: usize = 24;

/// Bound on the probability that two of `d` entries share all three cells, which no
/// peeling can separate (see [`cells_for_diff`]).
const PAIR_COLLISION_BOUND: f64 = 0.003;

/// Cells for an expected difference `d`: `max(1.5 d, cbrt(4500 d (d - 1))) + 30`.
///
/// 1.5 cells an entry clear the peeling threshold (about 1.22) for large `d`. For small
/// `d` the failures come from pairs of entries that hash to the same three cells (three
/// subtables of `m / 3` cells: probability `27 / m^3` a pair, at most
/// `13.5 d (d - 1) / m^3` over the `d (d - 1) / 2` pairs), which 1.5 d + 30 cells left at
/// 1.5-3 % for d = 10-300; the second term holds that bound to
/// [`PAIR_COLLISION_BOUND`] (0.3 %). It decides up to d = 1333; measured decode rates at
/// the resulting sizes are >= 99.7 % for every d (the table in `docs/guide/retrieval.md`).
fn cells_for_diff(d: usize) -> Result<usize, RetrievalError> {
    if d == 0 {
        return Err(bloomforge_core::Error::ZeroItems.into());
    }
    let d = d as f64;
    let pairs = (13.5 * d * (d - 1.0) / PAIR_COLLISION_BOUND).cbrt();
    Ok((d * 1.5).max(pairs).ceil() as usize + 30)
}

/// One cell: how many entries, the xor of their key hashes and of their check hashes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cell {
    count: i64,
    key_sum: u64,
    hash_sum: u64,
}

#[inline(always)]
fn check(h: u64) -> u64 {
    mix64(h ^ 0x5851_f42d_4c95_7f2d).max(1)
}

/// An invertible Bloom lookup table of 64-bit key hashes: insert and remove keys, subtract
/// two tables, and list what remains while it is small enough (about 0.8 entries per
/// cell at the limit for three probes; see [`with_expected_diff`](Self::with_expected_diff)).
///
/// Cells hold `(count: i64, key_sum: u64 xor, hash_sum: u64 xor)`; the three probes of a key
/// fall in three disjoint subtables, so they are distinct. Listing peels "pure" cells
/// (count ±1 and a hash sum matching the key sum); a wrong pure cell needs a 64-bit check
/// collision.
///
/// ```
/// use bloomforge_retrieval::Iblt;
/// let mut a = Iblt::with_expected_diff(10)?;
/// let mut b = Iblt::with_expected_diff(10)?;
/// for i in 0..1000u32 { a.insert(&i); }
/// for i in 3..1001u32 { b.insert(&i); }
/// let (only_a, only_b) = a.subtract(&b)?.list_entries()?;
/// let h = a.hasher();
/// use std::hash::BuildHasher;
/// assert_eq!(only_a.len(), 3);
/// assert_eq!(only_b, vec![h.hash_one(1000u32)]);
/// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Iblt<S = DefaultHasher> {
    // Kept built (not as a seed) so inserts do not redo a seed's mixing per key.
    hasher: S,
    subtable: usize,
    cells: Vec<Cell>,
}

/// Equal when the cells and the hashers' fingerprints are equal.
impl<S: BuildHasher> PartialEq for Iblt<S> {
    fn eq(&self, other: &Self) -> bool {
        self.subtable == other.subtable
            && self.cells == other.cells
            && hasher_fingerprint(&self.hasher) == hasher_fingerprint(&other.hasher)
    }
}

impl<S: BuildHasher> Eq for Iblt<S> {}

/// The expected difference [`Iblt`]'s `FromIterator` sizes for.
pub const DEFAULT_EXPECTED_DIFF: usize = 1000;

impl Iblt {
    /// A table for a symmetric difference of about `expected_diff` entries, hasher seed 0:
    /// [`with_expected_diff`](Self::with_expected_diff), and the same as
    /// `Iblt::builder().expected_diff(d).build()`. (An IBLT is sized by the difference it
    /// must list, not by the set it holds.)
    ///
    /// ```
    /// use bloomforge_retrieval::Iblt;
    /// let a = Iblt::new(100)?;
    /// let b = Iblt::builder().expected_diff(100).seed(0).build()?;
    /// assert_eq!(a, b);
    /// // A keyed hasher for keys from untrusted parties:
    /// let key = bloomforge_core::KeyedHasher::with_key([1, 2, 3, 4]);
    /// let keyed = Iblt::builder().expected_diff(100).hasher(key).build()?;
    /// assert_eq!(keyed.cells(), a.cells());
    /// let c: Iblt = (0..50u32).collect();
    /// assert_eq!(c.cells(), Iblt::new(bloomforge_retrieval::DEFAULT_EXPECTED_DIFF)?.cells());
    /// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
    /// ```
    ///
    /// # Errors
    /// As [`with_expected_diff`](Self::with_expected_diff).
    pub fn new(expected_diff: usize) -> Result<Self, RetrievalError> {
        Self::builder().expected_diff(expected_diff).build()
    }

    /// The builder: `.expected_diff(d).seed(s).hasher(h).build()`, or `.cells(c)` for a
    /// table of exactly `c` cells (rounded up to three subtables).
    pub fn builder() -> IbltBuilder {
        IbltBuilder {
            expected_diff: None,
            cells: None,
            hasher: DefaultHasher::with_seed(0),
        }
    }

    /// A table that lists a difference of up to `d` entries with high probability:
    /// `max(1.5 d, cbrt(4500 d (d - 1))) + 30` cells rounded up to three equal subtables
    /// (the second term, which decides up to d = 1333, holds the chance that two entries
    /// share all three cells below 0.3 %; the table in `docs/guide/retrieval.md` shows the
    /// decode rate against cells per entry: >= 99.7 % at these sizes). Hasher seed 0.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::ZeroItems`] for `d == 0`; an allocation failure.
    pub fn with_expected_diff(d: usize) -> Result<Self, RetrievalError> {
        Self::with_cells(cells_for_diff(d)?, 0)
    }

    /// A table of `cells` cells (rounded up to a multiple of three) with hasher seed `seed`.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::ZeroBits`] for `cells == 0`; an allocation failure.
    pub fn with_cells(cells: usize, seed: u64) -> Result<Self, RetrievalError> {
        Self::with_cells_and_hasher(cells, DefaultHasher::with_seed(seed))
    }

    /// Reads a table written by [`to_bytes`](Self::to_bytes) with an unkeyed hasher.
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for corrupt,
    /// truncated or foreign bytes; [`bloomforge_core::Error::HasherMismatch`] for a keyed
    /// table (read it with [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, RetrievalError> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized table from `reader` (see [`from_bytes`](Self::from_bytes)).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or [`bloomforge_core::Error::Io`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self, RetrievalError> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

impl<S: BuildHasher> Iblt<S> {
    /// A table of `cells` cells (rounded up to a multiple of three) with the caller's
    /// hasher (e.g. [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys).
    ///
    /// # Errors
    /// As [`with_cells`](Iblt::with_cells).
    pub fn with_cells_and_hasher(cells: usize, hasher: S) -> Result<Self, RetrievalError> {
        if cells == 0 {
            return Err(bloomforge_core::Error::ZeroBits.into());
        }
        let subtable = cells.div_ceil(K);
        let n = subtable
            .checked_mul(K)
            .ok_or(bloomforge_core::Error::TooLarge {
                requested: cells as u64,
                max: usize::MAX as u64 / 64,
            })?;
        Ok(Iblt {
            hasher,
            subtable,
            cells: crate::peel::alloc(n, Cell::default())?,
        })
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.cells.len()
    }

    /// Bytes the table occupies.
    pub fn memory_bytes(&self) -> u64 {
        (self.cells.len() * CELL_BYTES) as u64
    }

    /// Adds `key`.
    pub fn insert<Q: Hash + ?Sized>(&mut self, key: &Q) {
        self.insert_hash(self.hasher.hash_one(key));
    }

    /// Removes `key` (a key never inserted leaves a negative entry, listed second). Every
    /// remove is valid, so unlike a counting filter's there is no outcome to report: a
    /// negative entry is how [`subtract`](Self::subtract) records the keys only the other
    /// side holds.
    pub fn remove<Q: Hash + ?Sized>(&mut self, key: &Q) {
        self.remove_hash(self.hasher.hash_one(key));
    }

    /// Adds a key hash (from [`hasher`](Self::hasher), or any 64-bit id).
    pub fn insert_hash(&mut self, hash: u64) {
        self.apply(hash, 1);
    }

    /// Removes a key hash.
    pub fn remove_hash(&mut self, hash: u64) {
        self.apply(hash, -1);
    }

    /// `self - other`: entries only in `self` keep count +1, entries only in `other` get -1,
    /// common ones cancel.
    ///
    /// # Errors
    /// [`RetrievalError::Mismatch`] when the cell counts or hashers (seeds or keys)
    /// differ; for hashers it reports their fingerprints
    /// ([`hasher_fingerprint`](bloomforge_core::hash::hasher_fingerprint)).
    pub fn subtract(&self, other: &Self) -> Result<Self, RetrievalError>
    where
        S: Clone,
    {
        if self.cells.len() != other.cells.len() {
            return Err(RetrievalError::Mismatch {
                what: "cell count",
                ours: self.cells.len() as u64,
                theirs: other.cells.len() as u64,
            });
        }
        let (ours, theirs) = (
            hasher_fingerprint(&self.hasher),
            hasher_fingerprint(&other.hasher),
        );
        if ours != theirs {
            return Err(RetrievalError::Mismatch {
                what: "hasher fingerprint (seed or key)",
                ours,
                theirs,
            });
        }
        let mut out = self.clone();
        for (a, b) in out.cells.iter_mut().zip(&other.cells) {
            a.count = a.count.wrapping_sub(b.count);
            a.key_sum ^= b.key_sum;
            a.hash_sum ^= b.hash_sum;
        }
        Ok(out)
    }

    /// Whether every cell is empty (nothing left, or everything cancelled).
    pub fn is_empty(&self) -> bool {
        self.cells.iter().all(|c| *c == Cell::default())
    }

    /// Lists the table's entries: `(positive, negative)` key hashes (after
    /// [`subtract`](Self::subtract): only in `self`, only in `other`), each sorted. The
    /// table is not changed.
    ///
    /// # Errors
    /// [`RetrievalError::DecodeFailed`] when peeling stalls with entries left (too many
    /// for the table, or an entry inserted twice with the same sign).
    pub fn list_entries(&self) -> Result<(Vec<u64>, Vec<u64>), RetrievalError> {
        let mut t = Iblt {
            hasher: (),
            subtable: self.subtable,
            cells: self.cells.clone(),
        };
        let pure = |c: &Cell| (c.count == 1 || c.count == -1) && c.hash_sum == check(c.key_sum);
        let mut queue: Vec<usize> = (0..t.cells.len()).filter(|&i| pure(&t.cells[i])).collect();
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        // A genuine peel takes the one entry of a cell that is one of the entry's own
        // cells, and so empties that cell for good: a table lists at most one entry per
        // cell. The bound keeps a corrupt or hostile table (decoded bytes: any counts)
        // from peeling forever; a cell whose key does not map to it is not pure.
        let budget = t.cells.len();
        let mut peels = 0usize;
        while let Some(i) = queue.pop() {
            let c = t.cells[i];
            if !pure(&c) || !t.positions(c.key_sum).contains(&i) {
                continue;
            }
            if peels == budget {
                break;
            }
            peels += 1;
            let h = c.key_sum;
            if c.count == 1 {
                pos.push(h)
            } else {
                neg.push(h)
            }
            t.apply(h, -c.count);
            for p in t.positions(h) {
                if pure(&t.cells[p]) {
                    queue.push(p);
                }
            }
        }
        let stuck = t.cells.iter().filter(|c| **c != Cell::default()).count();
        if stuck > 0 {
            return Err(RetrievalError::DecodeFailed {
                recovered: pos.len() + neg.len(),
                stuck_cells: stuck,
            });
        }
        pos.sort_unstable();
        neg.sort_unstable();
        Ok((pos, neg))
    }
}

/// The cell arithmetic, which needs no hasher.
impl<S> Iblt<S> {
    #[inline(always)]
    fn positions(&self, h: u64) -> [usize; K] {
        let s = self.subtable;
        std::array::from_fn(|i| i * s + fast_range64(mix64(h ^ SALT[i]), s as u64) as usize)
    }

    #[inline(always)]
    fn apply(&mut self, h: u64, delta: i64) {
        let c = check(h);
        for p in self.positions(h) {
            let cell = &mut self.cells[p];
            cell.count = cell.count.wrapping_add(delta);
            cell.key_sum ^= h;
            cell.hash_sum ^= c;
        }
    }
}

impl<S: PersistentHasher> Iblt<S> {
    /// Writes the table in core's format ([`FilterKind::Iblt`]; the hasher's seed, or for
    /// a keyed hasher only a check of its key, in the header).
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Io`] if writing fails.
    pub fn write_to<W: std::io::Write>(&self, w: W) -> Result<(), RetrievalError> {
        let mut head = Vec::with_capacity(16);
        head.extend_from_slice(&(K as u32).to_le_bytes());
        head.extend_from_slice(&0u32.to_le_bytes());
        head.extend_from_slice(&(self.subtable as u64).to_le_bytes());
        format::encode_to(
            w,
            FilterKind::Iblt,
            &self.hasher,
            K as u32,
            self.cells.len() as u64 * 8 * CELL_BYTES as u64,
            0,
            16 + (self.cells.len() * CELL_BYTES) as u64,
            |sink| {
                sink(&head);
                format::stream_le(&self.cells, sink, |c, buf| {
                    buf.extend_from_slice(&c.count.to_le_bytes());
                    buf.extend_from_slice(&c.key_sum.to_le_bytes());
                    buf.extend_from_slice(&c.hash_sum.to_le_bytes());
                });
            },
        )?;
        Ok(())
    }

    /// The table in core's format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Reads a table with the caller's hasher (needed for keyed hashing, whose key is
    /// never stored).
    ///
    /// # Errors
    /// As [`from_bytes`](Iblt::from_bytes); [`bloomforge_core::Error::HasherMismatch`]
    /// when `hasher` is not the one the table was written with.
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, RetrievalError> {
        Self::decode(bytes, Some(hasher))
    }

    fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self, RetrievalError> {
        let corrupt = |reason| RetrievalError::Core(bloomforge_core::Error::Corrupt { reason });
        let (header, payload, hasher) = format::decode::<S>(bytes, FilterKind::Iblt, hasher)?;
        if payload.len() < 16 || u32_at(payload, 0) != K as u32 || u32_at(payload, 4) != 0 {
            return Err(corrupt("IBLT payload head is not (3 probes, reserved 0)"));
        }
        let subtable = u64_at(payload, 8);
        let body = &payload[16..];
        if header.num_hashes != K as u32
            || subtable == 0
            || (body.len() / CELL_BYTES) as u64 != subtable.saturating_mul(K as u64)
            || body.len() % CELL_BYTES != 0
        {
            return Err(corrupt("IBLT cell count does not match its subtables"));
        }
        let cells = body
            .chunks_exact(CELL_BYTES)
            .map(|c| Cell {
                count: u64_at(c, 0) as i64,
                key_sum: u64_at(c, 8),
                hash_sum: u64_at(c, 16),
            })
            .collect();
        Ok(Iblt {
            hasher,
            subtable: subtable as usize,
            cells,
        })
    }
}

/// Builder of [`Iblt`]: `expected_diff` (the symmetric difference it must list) or
/// `cells`, and `seed` or `hasher`; validation in [`build`](Self::build).
#[must_use]
#[derive(Clone, Copy, Debug)]
pub struct IbltBuilder<S = DefaultHasher> {
    expected_diff: Option<usize>,
    cells: Option<usize>,
    hasher: S,
}

impl IbltBuilder {
    /// The hasher's seed (default 0); tables to be subtracted need the same seed.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<S: BuildHasher> IbltBuilder<S> {
    /// Entries of the difference the table must list (sizes it to
    /// `max(1.5 d, cbrt(4500 d (d - 1))) + 30` cells, as
    /// [`Iblt::with_expected_diff`]).
    pub fn expected_diff(mut self, d: usize) -> Self {
        self.expected_diff = Some(d);
        self
    }

    /// Exactly `cells` cells (rounded up to a multiple of three), overriding
    /// `expected_diff`.
    pub fn cells(mut self, cells: usize) -> Self {
        self.cells = Some(cells);
        self
    }

    /// Uses `hasher` instead of the default (e.g.
    /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys); tables to be
    /// subtracted need the same hasher.
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> IbltBuilder<S2> {
        IbltBuilder {
            expected_diff: self.expected_diff,
            cells: self.cells,
            hasher,
        }
    }

    /// The table.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::ZeroItems`] if neither `expected_diff` nor `cells` was
    /// given or `expected_diff` is 0; [`bloomforge_core::Error::ZeroBits`] for 0 cells; an
    /// allocation failure.
    pub fn build(self) -> Result<Iblt<S>, RetrievalError> {
        let cells = match (self.cells, self.expected_diff) {
            (Some(c), _) => c,
            (None, Some(d)) => cells_for_diff(d)?,
            (None, None) => return Err(bloomforge_core::Error::ZeroItems.into()),
        };
        Iblt::with_cells_and_hasher(cells, self.hasher)
    }
}

/// Collects keys into `Iblt::new(DEFAULT_EXPECTED_DIFF)` (seed 0): build the other side
/// with the same size to subtract them.
///
/// # Panics
/// Only if the table cannot be allocated.
impl<K: Hash> FromIterator<K> for Iblt {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        let mut t = Iblt::new(DEFAULT_EXPECTED_DIFF)
            .expect("valid default parameters; only an allocation failure reaches here");
        t.extend(iter);
        t
    }
}

/// Inserts every key ([`insert`](Iblt::insert) cannot fail).
impl<K: Hash, S: BuildHasher> Extend<K> for Iblt<S> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        for k in iter {
            self.insert(&k);
        }
    }
}
