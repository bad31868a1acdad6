//! [`CompactApproximator`]: Boldi & Vigna's compact approximator, a Bloom-filter-like map
//! from keys to values of a lattice.

use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

use bloomforge_core::builder::DEFAULT_FALSE_POS;
use bloomforge_core::hash::{fast_range64, mix64, DefaultHasher};

use crate::RetrievalError;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// An unsigned cell type: `u8`, `u16`, `u32` or `u64`.
pub trait Counter: sealed::Sealed + Copy + Ord + Send + Sync + std::fmt::Debug + 'static {
    /// The smallest value (0).
    const MIN: Self;
    /// The largest value.
    const MAX: Self;
    /// Addition that stops at [`MAX`](Self::MAX).
    fn saturating_add(self, other: Self) -> Self;
}

macro_rules! counter {
    ($($t:ty),*) => {$(
        impl Counter for $t {
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn saturating_add(self, other: Self) -> Self {
                <$t>::saturating_add(self, other)
            }
        }
    )*};
}
counter!(u8, u16, u32, u64);

/// What a compact approximator stores: cells start at [`bottom`](Self::bottom), an insert
/// combines its value into each of the key's cells with [`join`](Self::join), and a lookup
/// combines the key's cells with [`meet`](Self::meet). When `join` is a lattice join and
/// `meet` its meet, a lookup is never below (in the lattice order) the join of the values
/// inserted under that key.
pub trait Lattice {
    /// The cell value.
    type Value: Copy + Send + Sync + std::fmt::Debug;
    /// The value of an empty cell.
    fn bottom() -> Self::Value;
    /// Combines an inserted value into a cell.
    fn join(cell: Self::Value, value: Self::Value) -> Self::Value;
    /// Combines two cells on lookup.
    fn meet(a: Self::Value, b: Self::Value) -> Self::Value;
}

/// Maximum: `get` is never below the largest value inserted under the key.
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxLattice<T>(PhantomData<T>);

impl<T: Counter> Lattice for MaxLattice<T> {
    type Value = T;
    fn bottom() -> T {
        T::MIN
    }
    #[inline(always)]
    fn join(cell: T, value: T) -> T {
        cell.max(value)
    }
    #[inline(always)]
    fn meet(a: T, b: T) -> T {
        a.min(b)
    }
}

/// Minimum (the order reversed): `get` is never above the smallest value inserted under
/// the key; a key never inserted reads `T::MAX` unless its cells were all touched.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinLattice<T>(PhantomData<T>);

impl<T: Counter> Lattice for MinLattice<T> {
    type Value = T;
    fn bottom() -> T {
        T::MAX
    }
    #[inline(always)]
    fn join(cell: T, value: T) -> T {
        cell.min(value)
    }
    #[inline(always)]
    fn meet(a: T, b: T) -> T {
        a.max(b)
    }
}

/// The additive instance (a count-min sketch): inserts add (saturating at `T::MAX`),
/// lookups take the minimum; `get` is never below the key's total (nor below `T::MAX`
/// once that total saturates).
#[derive(Clone, Copy, Debug, Default)]
pub struct SumLattice<T>(PhantomData<T>);

impl<T: Counter> Lattice for SumLattice<T> {
    type Value = T;
    fn bottom() -> T {
        T::MIN
    }
    #[inline(always)]
    fn join(cell: T, value: T) -> T {
        cell.saturating_add(value)
    }
    #[inline(always)]
    fn meet(a: T, b: T) -> T {
        a.min(b)
    }
}

/// A compact approximator (Boldi & Vigna 2005): `m` cells of lattice values in `k`
/// hash-partitioned subtables (one probe each, so a key's probes are distinct and
/// independent); `insert(key, v)` joins `v` into the key's `k` cells, `get(key)` meets them.
///
/// With `n` distinct keys, a key's answer is exact at least when one of its cells holds no
/// other key, which happens with probability `1 - (1 - (1 - k/m)^(n-1))^k`.
///
/// Sized from the theory with [`new`](Self::new)`(expected_items, false_pos)` (the
/// probability that a key's answer is not exact, whose formula is the standard Bloom
/// filter's) or the [builder](Self::builder); by cells and probes with
/// [`with_cells`](Self::with_cells).
///
/// ```
/// use bloomforge_retrieval::{CompactApproximator, MaxLattice};
/// let mut a = CompactApproximator::<MaxLattice<u32>>::new(1000, 0.01)?;
/// let mut b = CompactApproximator::<MaxLattice<u32>>::builder()
///     .expected_items(1000)
///     .false_pos(0.01)
///     .seed(0)
///     .build()?;
/// for t in [&mut a, &mut b] {
///     t.insert("x", 7);
///     t.insert("x", 5);
/// }
/// assert!(a.get("x") >= 7);
/// assert_eq!(a.get("x"), b.get("x"));
/// let c: CompactApproximator<MaxLattice<u32>> = [("x", 7), ("y", 2)].into_iter().collect();
/// assert!(c.get("x") >= 7 && c.get("y") >= 2);
/// // A keyed hasher for keys from untrusted parties:
/// let key = bloomforge_core::KeyedHasher::with_key([1, 2, 3, 4]);
/// let mut keyed = CompactApproximator::<MaxLattice<u32>>::builder()
///     .expected_items(1000)
///     .hasher(key)
///     .build()?;
/// keyed.insert("x", 7);
/// assert!(keyed.get("x") >= 7);
/// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
/// ```
#[derive(Clone, Debug)]
pub struct CompactApproximator<L: Lattice, S = DefaultHasher> {
    hasher: S,
    k: usize,
    subtable: usize,
    cells: Vec<L::Value>,
}

/// Keys hashed at a time by the batch operations.
const BATCH: usize = 64;
/// Keys ahead of the one applied whose cells are prefetched.
const AHEAD: usize = 4;

/// A count-min sketch: [`CompactApproximator`] over [`SumLattice`].
pub type CountMin<T> = CompactApproximator<SumLattice<T>>;

impl<L: Lattice> CompactApproximator<L> {
    /// Sized for `expected_items` distinct keys so that a key's answer is inexact (some
    /// other key in each of its cells) with probability at most `false_pos`, hasher seed
    /// 0: the same as `Self::builder().expected_items(n).false_pos(p).build()`.
    ///
    /// The probability, `(1 - (1 - k/m)^(n-1))^k` for `m` cells in `k` subtables, is the
    /// standard Bloom filter's false-positive rate, so `m` and `k` are core's
    /// [`std_size`](bloomforge_core::math::std_size) (`k` capped at 16).
    ///
    /// # Errors
    /// [`bloomforge_core::Error::ZeroItems`] for `expected_items == 0`,
    /// [`bloomforge_core::Error::InvalidFalsePositiveRate`] for `false_pos` outside (0, 1)
    /// (both as [`RetrievalError::Core`]); an allocation failure.
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self, RetrievalError> {
        Self::builder()
            .expected_items(expected_items)
            .false_pos(false_pos)
            .build()
    }

    /// The builder: `.expected_items(n).false_pos(p).seed(s).hasher(h).build()`.
    pub fn builder() -> CompactApproximatorBuilder<L> {
        CompactApproximatorBuilder {
            expected_items: 0,
            false_pos: DEFAULT_FALSE_POS,
            hasher: DefaultHasher::with_seed(0),
            _l: PhantomData,
        }
    }

    /// `m` cells (rounded up to a multiple of `k`) and `k` probes, hasher seed 0.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::ZeroBits`] for `m == 0`; [`RetrievalError::InvalidParameter`]
    /// for `k` outside 1..=16; an allocation failure.
    pub fn with_cells(m: usize, k: usize) -> Result<Self, RetrievalError> {
        Self::with_seed(m, k, 0)
    }

    /// [`with_cells`](Self::with_cells) with hasher seed `seed`.
    ///
    /// # Errors
    /// As [`with_cells`](Self::with_cells).
    pub fn with_seed(m: usize, k: usize, seed: u64) -> Result<Self, RetrievalError> {
        Self::with_cells_and_hasher(m, k, DefaultHasher::with_seed(seed))
    }
}

impl<L: Lattice, S: BuildHasher> CompactApproximator<L, S> {
    /// [`with_cells`](CompactApproximator::with_cells) with the caller's hasher (e.g.
    /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys).
    ///
    /// # Errors
    /// As [`with_cells`](CompactApproximator::with_cells).
    pub fn with_cells_and_hasher(m: usize, k: usize, hasher: S) -> Result<Self, RetrievalError> {
        if m == 0 {
            return Err(bloomforge_core::Error::ZeroBits.into());
        }
        if !(1..=16).contains(&k) {
            return Err(RetrievalError::InvalidParameter {
                name: "k",
                value: k as u64,
                expected: "1 to 16 probes",
            });
        }
        let subtable = m.div_ceil(k);
        Ok(CompactApproximator {
            hasher,
            k,
            subtable,
            cells: crate::peel::alloc(subtable.saturating_mul(k), L::bottom())?,
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

    /// Probes per key.
    pub fn hashes(&self) -> usize {
        self.k
    }

    /// The cells of a key hash, one per subtable: double hashing (Kirsch & Mitzenmacher),
    /// `hash + i * step` reduced into subtable `i` by its high bits, with `step` an odd
    /// mix of the hash. One mix a key instead of one a probe.
    #[inline(always)]
    fn positions(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        let step = mix64(hash) | 1;
        let sub = self.subtable;
        (0..self.k).map(move |i| {
            let h = hash.wrapping_add((i as u64).wrapping_mul(step));
            i * sub + fast_range64(h, sub as u64) as usize
        })
    }

    /// Joins `value` into the cells of `key`.
    #[inline]
    pub fn insert<Q: Hash + ?Sized>(&mut self, key: &Q, value: L::Value) {
        self.insert_hash(self.hasher.hash_one(key), value);
    }

    /// [`insert`](Self::insert) for a hash from [`hasher`](Self::hasher).
    #[inline]
    pub fn insert_hash(&mut self, hash: u64, value: L::Value) {
        let step = mix64(hash) | 1;
        let sub = self.subtable;
        for i in 0..self.k {
            let h = hash.wrapping_add((i as u64).wrapping_mul(step));
            let p = i * sub + fast_range64(h, sub as u64) as usize;
            self.cells[p] = L::join(self.cells[p], value);
        }
    }

    /// The meet of the cells of `key`.
    #[inline]
    pub fn get<Q: Hash + ?Sized>(&self, key: &Q) -> L::Value {
        self.get_hash(self.hasher.hash_one(key))
    }

    /// [`get`](Self::get) for a hash from [`hasher`](Self::hasher).
    #[inline]
    pub fn get_hash(&self, hash: u64) -> L::Value {
        let mut p = self.positions(hash);
        let first = self.cells[p.next().expect("k >= 1")];
        p.fold(first, |v, c| L::meet(v, self.cells[c]))
    }

    /// Inserts every `(key, value)` pair, hashing a block of keys first and prefetching
    /// each key's cells a few keys ahead, so the cache misses of different keys overlap
    /// (the single-key [`insert`](Self::insert) waits on its own). Same result as
    /// inserting the pairs one by one.
    pub fn insert_batch<Q: Hash>(&mut self, pairs: &[(Q, L::Value)]) {
        let mut hashes = [0u64; BATCH];
        for block in pairs.chunks(BATCH) {
            for (h, (k, _)) in hashes.iter_mut().zip(block) {
                *h = self.hasher.hash_one(k);
            }
            let hs = &hashes[..block.len()];
            for &h in hs.iter().take(AHEAD) {
                self.prefetch(h);
            }
            for (i, (&h, (_, v))) in hs.iter().zip(block).enumerate() {
                if let Some(&next) = hs.get(i + AHEAD) {
                    self.prefetch(next);
                }
                self.insert_hash(h, *v);
            }
        }
    }

    /// [`get`](Self::get) of every key into `out`, prefetching as
    /// [`insert_batch`](Self::insert_batch) does.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::LengthMismatch`] (as [`RetrievalError::Core`]) when
    /// `out` is not as long as `keys`; `out` is then untouched.
    pub fn get_batch<Q: Hash>(
        &self,
        keys: &[Q],
        out: &mut [L::Value],
    ) -> Result<(), RetrievalError> {
        if keys.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: keys.len(),
                out: out.len(),
            }
            .into());
        }
        let mut hashes = [0u64; BATCH];
        for (block, out) in keys.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (h, k) in hashes.iter_mut().zip(block) {
                *h = self.hasher.hash_one(k);
            }
            let hs = &hashes[..block.len()];
            for &h in hs.iter().take(AHEAD) {
                self.prefetch(h);
            }
            for (i, (&h, o)) in hs.iter().zip(out).enumerate() {
                if let Some(&next) = hs.get(i + AHEAD) {
                    self.prefetch(next);
                }
                *o = self.get_hash(h);
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        for p in self.positions(hash) {
            bloomforge_core::batch::prefetch(self.cells.as_ptr().wrapping_add(p));
        }
    }

    /// Empties every cell.
    pub fn clear(&mut self) {
        self.cells.fill(L::bottom());
    }
}

/// Builder of [`CompactApproximator`] (the conventions' names): `expected_items`
/// (required), `false_pos` (the probability that a key's answer is inexact, default
/// [`DEFAULT_FALSE_POS`]), `seed` or `hasher`; validation in [`build`](Self::build).
#[must_use]
#[derive(Clone, Copy, Debug)]
pub struct CompactApproximatorBuilder<L: Lattice, S = DefaultHasher> {
    expected_items: u64,
    false_pos: f64,
    hasher: S,
    _l: PhantomData<L>,
}

impl<L: Lattice> CompactApproximatorBuilder<L> {
    /// Seeds the default hasher (default 0).
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<L: Lattice, S: BuildHasher> CompactApproximatorBuilder<L, S> {
    /// Distinct keys the approximator will hold (required, at least 1).
    pub fn expected_items(mut self, n: u64) -> Self {
        self.expected_items = n;
        self
    }

    /// Probability, in (0, 1), that a key's answer is not exact at `expected_items` keys.
    pub fn false_pos(mut self, p: f64) -> Self {
        self.false_pos = p;
        self
    }

    /// Uses `hasher` instead of the default (e.g.
    /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys).
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> CompactApproximatorBuilder<L, S2> {
        CompactApproximatorBuilder {
            expected_items: self.expected_items,
            false_pos: self.false_pos,
            hasher,
            _l: PhantomData,
        }
    }

    /// The approximator, `m` and `k` from [`bloomforge_core::math::std_size`].
    ///
    /// # Errors
    /// As [`CompactApproximator::new`].
    pub fn build(self) -> Result<CompactApproximator<L, S>, RetrievalError> {
        if self.expected_items == 0 {
            return Err(bloomforge_core::Error::ZeroItems.into());
        }
        let p = self.false_pos;
        if !(p > 0.0 && p < 1.0) {
            return Err(bloomforge_core::Error::InvalidFalsePositiveRate(p).into());
        }
        let (m, k) = bloomforge_core::math::std_size(self.expected_items, p);
        let m = usize::try_from(m).map_err(|_| bloomforge_core::Error::TooLarge {
            requested: m,
            max: usize::MAX as u64,
        })?;
        CompactApproximator::with_cells_and_hasher(m, (k as usize).clamp(1, 16), self.hasher)
    }
}

/// Collects `(key, value)` pairs into an approximator sized with
/// [`new`](CompactApproximator::new)`(pairs, DEFAULT_FALSE_POS)` (the pairs are gathered
/// first to count them; at least 1), then inserted in order.
///
/// # Panics
/// Only if the table cannot be allocated.
impl<K: Hash, L: Lattice> FromIterator<(K, L::Value)> for CompactApproximator<L> {
    fn from_iter<I: IntoIterator<Item = (K, L::Value)>>(iter: I) -> Self {
        let pairs: Vec<(K, L::Value)> = iter.into_iter().collect();
        let mut a = Self::new((pairs.len() as u64).max(1), DEFAULT_FALSE_POS)
            .expect("valid default parameters; only an allocation failure reaches here");
        a.extend(pairs);
        a
    }
}

/// Inserts every `(key, value)` pair ([`insert`](CompactApproximator::insert) cannot fail).
impl<K: Hash, L: Lattice, S: BuildHasher> Extend<(K, L::Value)> for CompactApproximator<L, S> {
    fn extend<I: IntoIterator<Item = (K, L::Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(&k, v);
        }
    }
}
