//! [`CompactApproximator`]: Boldi & Vigna's compact approximator, a Bloom-filter-like map
//! from keys to values of a lattice.

use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

use bloomforge_core::builder::DEFAULT_FALSE_POS;
use bloomforge_core::format::{self, u32_at, u64_at, FilterKind, PersistentHasher};
use bloomforge_core::hash::{fast_range64, mix64, DefaultHasher};
use bloomforge_core::Backend;

use crate::line::{LineJoin, LineMeet};
use crate::RetrievalError;

mod sealed {
    use crate::line::{LineJoin, LineMeet};
    use bloomforge_core::Backend;

    /// The cell types, each with its line kernel (`crate::line`).
    pub trait Sealed: Sized {
        /// Joins `value` into the cells of the 64-byte `line` whose bit is set in `mask`
        /// when `backend` has a kernel for it; whether it did.
        fn join_line(
            backend: Backend,
            op: LineJoin,
            line: &mut [Self],
            mask: u64,
            value: Self,
        ) -> bool;
        /// The meet of the cells of the 64-byte `line` whose bit is set in `mask` (at
        /// least one) when `backend` has a kernel for it.
        fn meet_line(backend: Backend, op: LineMeet, line: &[Self], mask: u64) -> Option<Self>;
        /// The meet of the cells of the 64-byte `line` at the first `k` probe positions of
        /// `word` (`(word >> 6 j) & 63`) when a gather kernel exists for the cells and `k`.
        ///
        /// # Safety
        /// The CPU must support AVX-512F, BW and VBMI; callers check with
        /// `line::vbmi_available()` (an approximator's `vbmi` flag). There is no other
        /// precondition: the kernels check the line's length and `k` themselves.
        unsafe fn meet_probes(op: LineMeet, line: &[Self], word: u64, k: usize) -> Option<Self>;
        /// Joins `value` into the cells of the 64-byte `line` at the first `k` probe
        /// positions of `word` (each distinct cell once) when a kernel exists for the
        /// cells and `k`; whether it did.
        ///
        /// # Safety
        /// The CPU must support AVX-512F, BW and VBMI; callers check with
        /// `line::vbmi_available()` (an approximator's `vbmi` flag). There is no other
        /// precondition: the kernels check the line's length and `k` themselves.
        unsafe fn join_probes(
            op: LineJoin,
            line: &mut [Self],
            word: u64,
            k: usize,
            value: Self,
        ) -> bool;
    }
}
pub(crate) use sealed::Sealed as LineCell;

mod sealed_lattice {
    /// This crate's lattices (the ones with a serialized form).
    pub trait Sealed {}
}

/// A lattice whose approximators serialize: this crate's [`MaxLattice`], [`MinLattice`]
/// and [`SumLattice`] over a [`Counter`]. The payload names the lattice and the cell width,
/// so bytes are read back only as the same type.
pub trait PersistentLattice: Lattice + sealed_lattice::Sealed {
    /// The lattice's id in the payload (1 max, 2 min, 3 sum).
    const ID: u8;
    /// Bytes of a cell.
    const CELL_BYTES: usize;
    /// Appends a cell's little-endian bytes.
    fn put_cell(cell: Self::Value, out: &mut Vec<u8>);
    /// The cell of the first [`CELL_BYTES`](Self::CELL_BYTES) little-endian bytes.
    fn get_cell(bytes: &[u8]) -> Self::Value;
}

macro_rules! persistent_lattice {
    ($($lattice:ident = $id:literal),*) => {$(
        impl<T: Counter> sealed_lattice::Sealed for $lattice<T> {}
        impl<T: Counter> PersistentLattice for $lattice<T> {
            const ID: u8 = $id;
            const CELL_BYTES: usize = T::BYTES;
            fn put_cell(cell: T, out: &mut Vec<u8>) {
                cell.put_le(out);
            }
            fn get_cell(bytes: &[u8]) -> T {
                T::get_le(bytes)
            }
        }
    )*};
}
persistent_lattice!(MaxLattice = 1, MinLattice = 2, SumLattice = 3);

/// An unsigned cell type: `u8`, `u16`, `u32` or `u64`.
pub trait Counter: sealed::Sealed + Copy + Ord + Send + Sync + std::fmt::Debug + 'static {
    /// The smallest value (0).
    const MIN: Self;
    /// The largest value.
    const MAX: Self;
    /// Addition that stops at [`MAX`](Self::MAX).
    fn saturating_add(self, other: Self) -> Self;
    /// Bytes of a cell in the serialized table.
    const BYTES: usize;
    /// Appends the cell's little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
    /// The cell of the first [`BYTES`](Self::BYTES) little-endian bytes of `bytes`.
    fn get_le(bytes: &[u8]) -> Self;
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
            const BYTES: usize = size_of::<$t>();
            #[inline]
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; size_of::<$t>()];
                b.copy_from_slice(&bytes[..size_of::<$t>()]);
                <$t>::from_le_bytes(b)
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

    /// Joins `value` into the cells of `line` (a blocked key's line) whose bit is set in
    /// `mask`, each once. The default joins them one at a time; this crate's lattices
    /// join the whole line in one SIMD operation when `backend` has a kernel for their
    /// cells (`Backend::Avx512`, with AVX-512BW), with the same result.
    #[inline(always)]
    fn join_masked(backend: Backend, line: &mut [Self::Value], mask: u64, value: Self::Value) {
        let _ = backend;
        join_each::<Self>(line, mask, value);
    }

    /// The meet of the cells of `line` whose bit is set in `mask` (at least one): a
    /// blocked key's lookup. The default meets them one at a time; this crate's lattices
    /// reduce the whole line in SIMD registers when `backend` has a kernel for their
    /// cells, with the same result.
    #[inline(always)]
    fn meet_masked(backend: Backend, line: &[Self::Value], mask: u64) -> Self::Value {
        let _ = backend;
        meet_each::<Self>(line, mask)
    }

    /// The meet of a blocked key's cells in a line of 64 cells, from their positions: the
    /// first `k` 6-bit fields of `word`, `(word >> 6 j) & 63` (the positions
    /// `meet_masked`'s mask is built from), when the lattice has a kernel that gathers
    /// them; `None` (the default) sends the caller to `meet_masked`. This crate's lattices
    /// on `u8` cells gather up to 8 positions with one `vpermb` and reduce 8 bytes instead
    /// of the whole line, with the same result.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI; callers check with
    /// `Backend::Avx512.is_available_with` (the approximator calls this only where it
    /// found all three). That is the whole contract: an implementation may not assume
    /// anything about `line`'s length or `k`, and `line` is an ordinary shared borrow.
    #[inline(always)]
    unsafe fn meet_probes(line: &[Self::Value], word: u64, k: usize) -> Option<Self::Value> {
        let _ = (line, word, k);
        None
    }

    /// Joins `value` into a blocked key's cells in a line of 64 cells from their positions
    /// (as [`meet_probes`](Self::meet_probes)), each distinct cell once, when the lattice
    /// has a kernel for it; whether it did (`false`, the default, sends the caller to
    /// `join_masked`). This crate's lattices on `u8` cells build the line's mask from up
    /// to 8 positions in vector registers, without the scalar loop over the probes.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI; callers check with
    /// `Backend::Avx512.is_available_with` (the approximator calls this only where it
    /// found all three). That is the whole contract: an implementation may not assume
    /// anything about `line`'s length or `k`, and `line` is an ordinary mutable borrow.
    #[inline(always)]
    unsafe fn join_probes(
        line: &mut [Self::Value],
        word: u64,
        k: usize,
        value: Self::Value,
    ) -> bool {
        let _ = (line, word, k, value);
        false
    }
}

/// The scalar join: `value` into each cell of `line` whose bit is set in `mask`, once.
#[inline(always)]
fn join_each<L: Lattice + ?Sized>(line: &mut [L::Value], mask: u64, value: L::Value) {
    for_each_bit(mask, |p| line[p] = L::join(line[p], value));
}

/// The scalar meet of the cells of `line` whose bit is set in `mask` (at least one).
#[inline(always)]
fn meet_each<L: Lattice + ?Sized>(line: &[L::Value], mask: u64) -> L::Value {
    let mut v = line[mask.trailing_zeros() as usize];
    for_each_bit(mask & (mask - 1), |p| v = L::meet(v, line[p]));
    v
}

/// `join_masked` / `meet_masked` of a lattice whose join and meet are `$join` / `$meet`
/// on `Counter` cells: the line kernels, else the scalar loops.
macro_rules! line_ops_with {
    ($join:expr, $meet:expr) => {
        #[inline(always)]
        fn join_masked(backend: Backend, line: &mut [T], mask: u64, value: T) {
            if !T::join_line(backend, $join, line, mask, value) {
                join_each::<Self>(line, mask, value);
            }
        }
        #[inline(always)]
        fn meet_masked(backend: Backend, line: &[T], mask: u64) -> T {
            T::meet_line(backend, $meet, line, mask)
                .unwrap_or_else(|| meet_each::<Self>(line, mask))
        }
        /// The cells' gather kernel (`LineCell::meet_probes`).
        ///
        /// # Safety
        /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI (the trait's contract).
        #[inline(always)]
        unsafe fn meet_probes(line: &[T], word: u64, k: usize) -> Option<T> {
            // SAFETY: forwarded from the caller.
            unsafe { T::meet_probes($meet, line, word, k) }
        }
        /// The cells' probe join kernel (`LineCell::join_probes`).
        ///
        /// # Safety
        /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI (the trait's contract).
        #[inline(always)]
        unsafe fn join_probes(line: &mut [T], word: u64, k: usize, value: T) -> bool {
            // SAFETY: forwarded from the caller.
            unsafe { T::join_probes($join, line, word, k, value) }
        }
    };
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
    line_ops_with!(LineJoin::Max, LineMeet::Min);
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
    line_ops_with!(LineJoin::Min, LineMeet::Max);
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
    line_ops_with!(LineJoin::SaturatingAdd, LineMeet::Min);
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
#[derive(Debug)]
pub struct CompactApproximator<L: Lattice, S = DefaultHasher> {
    hasher: S,
    k: usize,
    layout: CellLayout,
    /// Cells per subtable ([`CellLayout::Subtables`]) or lines ([`CellLayout::Blocked`]).
    span: usize,
    /// Index of the first cell of line 0 (blocked: the cells before it pad the table to a
    /// 64-byte boundary); 0 for subtables.
    offset: usize,
    cells: Vec<L::Value>,
    /// Runs the blocked layout's line kernels (`crate::line`).
    backend: Backend,
    /// `backend` is `Avx512` and the CPU has VBMI: blocked lines of 64 cells take the
    /// probe kernels ([`Lattice::join_probes`], [`Lattice::meet_probes`]).
    #[cfg_attr(not(all(target_arch = "x86_64", not(miri))), allow(dead_code))]
    vbmi: bool,
}

/// A copy whose blocked lines start on a 64-byte boundary of its own allocation (a
/// derived `clone` would keep the original's padding, right for another address only
/// by chance).
///
/// # Panics
/// Only if the table cannot be allocated (as `Vec::clone`).
impl<L: Lattice, S: Clone> Clone for CompactApproximator<L, S> {
    fn clone(&self) -> Self {
        let mut cells = self.cells.clone();
        let offset = match self.layout {
            CellLayout::Subtables => 0,
            CellLayout::Blocked => {
                let offset = line_start::<L::Value>(cells.as_ptr());
                let used = self.cells.len() - (1 << line_shift::<L::Value>());
                cells.copy_within(self.offset..self.offset + used, offset);
                offset
            }
        };
        CompactApproximator {
            hasher: self.hasher.clone(),
            k: self.k,
            layout: self.layout,
            span: self.span,
            offset,
            cells,
            backend: self.backend,
            vbmi: self.vbmi,
        }
    }
}

/// Where a key's `k` cells lie in a [`CompactApproximator`].
///
/// * [`Subtables`](Self::Subtables) (the default, Boldi & Vigna's layout): `k` subtables
///   of `m / k` cells, one cell in each, so a key's cells are distinct and independent
///   and a key's answer is inexact with the standard Bloom filter's probability
///   `(1 - (1 - k/m)^(n-1))^k`. Each cell is its own cache line: `k` cache misses a key
///   once the table outgrows the cache.
/// * [`Blocked`](Self::Blocked): all of a key's cells in one 64-byte line of `C = 64 /
///   size_of::<L::Value>()` cells (64 for `u8`, 32 for `u16`, 16 for `u32`, 8 for `u64`;
///   the power of two at most that for other sizes), chosen by the hash, and `k` positions
///   in it drawn with replacement (a position drawn twice is one cell: a count-min sketch
///   adds once per distinct cell). One cache miss a key, for some more cells at the same
///   exactness: a key's answer is inexact exactly when every one of its cells was touched
///   by another key, the blocked Bloom filter's false-positive event, whose probability
///   is core's [`blocked_fp`](bloomforge_core::math::blocked_fp)`(m / n, C, k,
///   ProbeModel::Replace)` (Poisson line loads;
///   [`blocked_fp_exact_load`](bloomforge_core::math::blocked_fp_exact_load) for a
///   given table), and [`new`](CompactApproximator::new) sizes for it.
///
/// ```
/// use bloomforge_retrieval::{CellLayout, CountMin};
/// let mut a = CountMin::<u8>::builder()
///     .expected_items(10_000)
///     .false_pos(0.01)
///     .layout(CellLayout::Blocked)
///     .build()?;
/// a.insert("x", 3);
/// a.insert("x", 4);
/// assert!(a.get("x") >= 7);
/// assert_eq!(a.layout(), CellLayout::Blocked);
/// // One 64-cell line a key: more cells than subtables need for the same 1 %.
/// let b = CountMin::<u8>::new(10_000, 0.01)?;
/// assert!(a.cells() > b.cells() && a.cells() % 64 == 0);
/// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CellLayout {
    /// `k` subtables, one cell a key in each.
    #[default]
    Subtables,
    /// One 64-byte line a key, `k` cells in it.
    Blocked,
}

/// Bytes of a blocked line.
const LINE_BYTES: usize = 64;

/// `log2` of the cells of a blocked line for cells of `T`: the largest power of two at
/// most `64 / size_of::<T>()` (at least 1 cell).
const fn line_shift<T>() -> u32 {
    let per_line = LINE_BYTES
        / if size_of::<T>() == 0 {
            1
        } else {
            size_of::<T>()
        };
    if per_line == 0 {
        0
    } else {
        per_line.ilog2()
    }
}

/// Keys hashed at a time by the batch operations.
const BATCH: usize = 1024;
/// Keys ahead of the one applied whose cells are prefetched: one line a key
/// ([`CellLayout::Blocked`]) against `k` for subtables, which at 128 keys ahead would
/// prefetch more lines than the L1 cache holds. Zen 5, 10M keys, count-min `u8`,
/// `insert_batch` / `get_batch` ns/key at 32 and 128 keys ahead: blocked 9.8 / 9.6
/// against 7.0 / 8.1; subtables (k = 6) 21.0 / 18.9 against 24.3 / 22.5.
const AHEAD_BLOCKED: usize = 128;
/// Keys ahead for [`CellLayout::Subtables`] (see [`AHEAD_BLOCKED`]).
const AHEAD_SUBTABLES: usize = 32;

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
            layout: CellLayout::Subtables,
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
        Self::with_layout(CellLayout::Subtables, m, k, hasher)
    }

    /// `m` cells in `layout` (rounded up to a multiple of `k` for subtables, to whole
    /// 64-byte lines for [`CellLayout::Blocked`]), `k` probes, the caller's hasher.
    ///
    /// # Errors
    /// As [`with_cells`](CompactApproximator::with_cells).
    pub fn with_layout(
        layout: CellLayout,
        m: usize,
        k: usize,
        hasher: S,
    ) -> Result<Self, RetrievalError> {
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
        let (span, per_span) = match layout {
            CellLayout::Subtables => (m.div_ceil(k), k),
            CellLayout::Blocked => {
                let per_line = 1usize << line_shift::<L::Value>();
                (m.div_ceil(per_line), per_line)
            }
        };
        let used = span
            .checked_mul(per_span)
            .ok_or(bloomforge_core::Error::TooLarge {
                requested: m as u64,
                max: usize::MAX as u64,
            })?;
        // Blocked: room to start line 0 on a 64-byte boundary.
        let pad = match layout {
            CellLayout::Subtables => 0,
            CellLayout::Blocked => per_span,
        };
        let cells = crate::peel::alloc(used.saturating_add(pad), L::bottom())?;
        let offset = match layout {
            CellLayout::Subtables => 0,
            CellLayout::Blocked => line_start::<L::Value>(cells.as_ptr()),
        };
        Ok(CompactApproximator {
            hasher,
            k,
            layout,
            span,
            offset,
            cells,
            backend: crate::line::default_backend(),
            vbmi: false,
        }
        .with_vbmi())
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Number of cells (the padding that aligns blocked lines not counted).
    pub fn cells(&self) -> usize {
        match self.layout {
            CellLayout::Subtables => self.span * self.k,
            CellLayout::Blocked => self.span << line_shift::<L::Value>(),
        }
    }

    /// The backend of the blocked layout's line kernels (insert and lookup): `Avx512`
    /// where the CPU has AVX-512F and AVX-512BW, else `Scalar`.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Switches the backend of the blocked layout's line kernels (every backend gives the
    /// same cells and answers; for benchmarks and tests). Backends without a line kernel
    /// run the scalar loop.
    ///
    /// ```
    /// use bloomforge_core::Backend;
    /// use bloomforge_retrieval::{CellLayout, CountMin};
    ///
    /// let mut fast = CountMin::<u8>::builder()
    ///     .expected_items(1000)
    ///     .layout(CellLayout::Blocked)
    ///     .build()?;
    /// let mut scalar = fast.clone();
    /// scalar.set_backend(Backend::Scalar)?;
    /// for k in 0..1000u32 {
    ///     fast.insert(&k, 2);
    ///     scalar.insert(&k, 2);
    /// }
    /// assert!((0..2000u32).all(|k| fast.get(&k) == scalar.get(&k)));
    /// assert!((0..1000u32).all(|k| fast.get(&k) >= 2));
    /// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
    /// ```
    ///
    /// # Errors
    /// Core's `BackendUnavailable` if this CPU cannot run it (AVX-512 needs AVX-512F and
    /// AVX-512BW).
    pub fn set_backend(&mut self, backend: Backend) -> Result<(), RetrievalError> {
        if !crate::line::backend_available(backend) {
            return Err(bloomforge_core::Error::BackendUnavailable(backend.name()).into());
        }
        self.backend = backend;
        self.vbmi = backend == Backend::Avx512 && crate::line::vbmi_available();
        Ok(())
    }

    /// `self` with [`vbmi`](Self::vbmi) set from its backend and this CPU.
    fn with_vbmi(mut self) -> Self {
        self.vbmi = self.backend == Backend::Avx512 && crate::line::vbmi_available();
        self
    }

    /// Where a key's cells lie.
    pub fn layout(&self) -> CellLayout {
        self.layout
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.k as u32
    }

    /// The cells of a key hash, one per subtable: double hashing (Kirsch & Mitzenmacher),
    /// `hash + i * step` reduced into subtable `i` by its high bits, with `step` an odd
    /// mix of the hash. One mix a key instead of one a probe.
    #[inline(always)]
    fn positions(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        let step = mix64(hash) | 1;
        let sub = self.span;
        (0..self.k).map(move |i| {
            let h = hash.wrapping_add((i as u64).wrapping_mul(step));
            i * sub + fast_range64(h, sub as u64) as usize
        })
    }

    /// A blocked key's line: the index of its first cell (the line from the hash's high
    /// bits through `fast_range64`).
    #[inline(always)]
    fn line_base(&self, hash: u64) -> usize {
        self.offset + ((fast_range64(hash, self.span as u64) as usize) << line_shift::<L::Value>())
    }

    /// A blocked key's line (its first cell's index) and its cells in the line as a bit
    /// mask: `k` positions of `log2(C)` bits each drawn from a mix of the hash (the line
    /// comes from the hash's high bits through `fast_range64`), with replacement, so a
    /// position drawn twice is one cell.
    #[inline(always)]
    fn line_and_mask(&self, hash: u64) -> (usize, u64) {
        let shift = line_shift::<L::Value>();
        let base = self.line_base(hash);
        if shift == 0 {
            return (base, 1);
        }
        let low = (1u64 << shift) - 1;
        let per_word = (64 / shift) as usize;
        let (mut word, mut todo, mut mask) = (mix64(hash), self.k, 0u64);
        loop {
            // Up to 10 probes of 6 bits (u8 cells) from one word, no check per probe.
            let now = todo.min(per_word);
            let mut r = word;
            for _ in 0..now {
                mask |= 1u64 << (r & low);
                r >>= shift;
            }
            todo -= now;
            if todo == 0 {
                return (base, mask);
            }
            word = mix64(word);
        }
    }

    /// Joins `value` into the cells of `key`.
    #[inline]
    pub fn insert<Q: Hash + ?Sized>(&mut self, key: &Q, value: L::Value) {
        self.insert_hash(self.hasher.hash_one(key), value);
    }

    /// [`insert`](Self::insert) for a hash from [`hasher`](Self::hasher).
    #[inline]
    pub fn insert_hash(&mut self, hash: u64, value: L::Value) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.vbmi && self.layout == CellLayout::Blocked && line_shift::<L::Value>() == 6 {
            /// One insert compiled with VBMI: the probe or line kernel inlines.
            ///
            /// # Safety
            /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI; callers check with
            /// the approximator's `vbmi` flag (set from `line::vbmi_available()`). There is
            /// no other precondition.
            #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
            unsafe fn one<L: Lattice, S: BuildHasher>(
                this: &mut CompactApproximator<L, S>,
                h: u64,
                v: L::Value,
            ) {
                // SAFETY: compiled with, and (caller) run on, AVX-512F, BW and VBMI.
                unsafe { this.insert_hash_inline::<true>(h, v) };
            }
            // SAFETY: `vbmi` is set only with `Backend::Avx512` (AVX-512F and BW checked
            // by `set_backend` / `default_backend`) on a CPU with VBMI.
            unsafe { one(self, hash, value) };
            return;
        }
        // SAFETY: without `VBMI` no CPU feature is needed.
        unsafe { self.insert_hash_inline::<false>(hash, value) };
    }

    /// [`insert_hash`](Self::insert_hash), always inlined (the batch loop's body); with
    /// `VBMI` a blocked line of 64 cells is joined through [`Lattice::join_probes`] first
    /// (`VBMI` as in [`get_hash_inline`](Self::get_hash_inline)).
    ///
    /// # Safety
    /// With `VBMI`, the CPU must support AVX-512F, AVX-512BW and AVX-512VBMI (callers
    /// check with the approximator's `vbmi` flag); without it there is no precondition.
    /// Cells are indexed with bounds checks.
    #[inline(always)]
    unsafe fn insert_hash_inline<const VBMI: bool>(&mut self, hash: u64, value: L::Value) {
        // `k` past the kernels' reach goes straight to the mask path (no line located twice).
        if VBMI
            && self.layout == CellLayout::Blocked
            && line_shift::<L::Value>() == 6
            && self.k <= crate::line::GATHER_MAX
        {
            let base = self.line_base(hash);
            let line = &mut self.cells[base..base + 64];
            // SAFETY: with `VBMI` the CPU has AVX-512F, BW and VBMI (this fn's contract).
            if unsafe { L::join_probes(line, mix64(hash), self.k, value) } {
                return;
            }
        }
        match self.layout {
            CellLayout::Subtables => {
                let step = mix64(hash) | 1;
                let sub = self.span;
                for i in 0..self.k {
                    let h = hash.wrapping_add((i as u64).wrapping_mul(step));
                    let p = i * sub + fast_range64(h, sub as u64) as usize;
                    self.cells[p] = L::join(self.cells[p], value);
                }
            }
            CellLayout::Blocked => {
                let (base, mask) = self.line_and_mask(hash);
                let line = &mut self.cells[base..base + (1 << line_shift::<L::Value>())];
                // Each distinct cell once (a count-min adds once a cell): the mask has
                // merged the positions drawn twice.
                L::join_masked(self.backend, line, mask, value);
            }
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
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.vbmi && self.layout == CellLayout::Blocked && line_shift::<L::Value>() == 6 {
            /// One lookup compiled with VBMI (as in `insert_hash`).
            ///
            /// # Safety
            /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI; callers check with
            /// the approximator's `vbmi` flag (set from `line::vbmi_available()`). There is
            /// no other precondition.
            #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
            unsafe fn one<L: Lattice, S: BuildHasher>(
                this: &CompactApproximator<L, S>,
                h: u64,
            ) -> L::Value {
                // SAFETY: compiled with, and (caller) run on, AVX-512F, BW and VBMI.
                unsafe { this.get_hash_inline::<true>(h) }
            }
            // SAFETY: as in `insert_hash`.
            return unsafe { one(self, hash) };
        }
        // SAFETY: without `VBMI` no CPU feature is needed.
        unsafe { self.get_hash_inline::<false>(hash) }
    }

    /// [`get_hash`](Self::get_hash), always inlined (the batch loop's body); with `VBMI`
    /// a blocked line of 64 cells is met through [`Lattice::meet_probes`] first.
    ///
    /// # Safety
    /// With `VBMI`, the CPU must support AVX-512F, AVX-512BW and AVX-512VBMI (callers
    /// check with the approximator's `vbmi` flag); without it there is no precondition.
    /// Cells are indexed with bounds checks.
    #[inline(always)]
    unsafe fn get_hash_inline<const VBMI: bool>(&self, hash: u64) -> L::Value {
        // `k` past the kernels' reach goes straight to the mask path (no line located twice).
        if VBMI
            && self.layout == CellLayout::Blocked
            && line_shift::<L::Value>() == 6
            && self.k <= crate::line::GATHER_MAX
        {
            let base = self.line_base(hash);
            let line = &self.cells[base..base + 64];
            // SAFETY: with `VBMI` the CPU has AVX-512F, BW and VBMI (this fn's contract).
            if let Some(v) = unsafe { L::meet_probes(line, mix64(hash), self.k) } {
                return v;
            }
        }
        match self.layout {
            CellLayout::Subtables => {
                let mut p = self.positions(hash);
                let first = self.cells[p.next().expect("k >= 1")];
                p.fold(first, |v, c| L::meet(v, self.cells[c]))
            }
            CellLayout::Blocked => {
                let (base, mask) = self.line_and_mask(hash);
                let line = &self.cells[base..base + (1 << line_shift::<L::Value>())];
                // k >= 1: the mask has a bit.
                L::meet_masked(self.backend, line, mask)
            }
        }
    }

    /// Inserts every `(key, value)` pair, hashing a block of keys first and prefetching
    /// each key's cells a few keys ahead, so the cache misses of different keys overlap
    /// (the single-key [`insert`](Self::insert) waits on its own). Same result as
    /// inserting the pairs one by one.
    pub fn insert_batch<Q: Hash>(&mut self, pairs: &[(Q, L::Value)]) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.backend == Backend::Avx512 && self.layout == CellLayout::Blocked {
            /// The loop compiled with AVX-512: the line kernel inlines into it (no call
            /// and `vzeroupper` a key).
            ///
            /// # Safety
            /// The CPU must support AVX-512F and AVX-512BW; callers check with the
            /// approximator's `Backend::Avx512` (set only after `line::backend_available`).
            /// There is no other precondition.
            #[target_feature(enable = "avx512f,avx512bw")]
            unsafe fn avx512<L: Lattice, S: BuildHasher, Q: Hash>(
                this: &mut CompactApproximator<L, S>,
                pairs: &[(Q, L::Value)],
            ) {
                // SAFETY: without `VBMI` no CPU feature is needed.
                unsafe { this.insert_batch_loop::<Q, false>(pairs) };
            }
            /// With VBMI: lines of 64 cells joined by probe ([`Lattice::join_probes`]).
            ///
            /// # Safety
            /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI; callers check with
            /// the approximator's `vbmi` flag. There is no other precondition.
            #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
            unsafe fn avx512_vbmi<L: Lattice, S: BuildHasher, Q: Hash>(
                this: &mut CompactApproximator<L, S>,
                pairs: &[(Q, L::Value)],
            ) {
                // SAFETY: the caller runs this only on a CPU with these features.
                unsafe { this.insert_batch_loop::<Q, true>(pairs) };
            }
            if self.vbmi {
                // SAFETY: as below, and `vbmi` is set only on a CPU with VBMI.
                unsafe { avx512_vbmi(self, pairs) };
            } else {
                // SAFETY: an approximator holds `Backend::Avx512` only after
                // `backend_available` confirmed AVX-512F and AVX-512BW.
                unsafe { avx512(self, pairs) };
            }
            return;
        }
        // SAFETY: without `VBMI` no CPU feature is needed.
        unsafe { self.insert_batch_loop::<Q, false>(pairs) };
    }

    /// [`insert_hash_inline`](Self::insert_hash_inline) of every pair, hashing a block of
    /// keys first and prefetching a few keys ahead.
    ///
    /// # Safety
    /// As [`insert_hash_inline`](Self::insert_hash_inline): with `VBMI`, the CPU must
    /// support AVX-512F, AVX-512BW and AVX-512VBMI; without it there is no precondition.
    #[inline(always)]
    unsafe fn insert_batch_loop<Q: Hash, const VBMI: bool>(&mut self, pairs: &[(Q, L::Value)]) {
        bloomforge_core::batch_pipeline!(blocks: BATCH, ahead: self.batch_ahead(), keys: pairs,
            hash |pair| self.hasher.hash_one(&pair.0),
            fetch |h| self.prefetch(h),
            // SAFETY: forwarded contract.
            probe |pair, h| unsafe { self.insert_hash_inline::<VBMI>(h, pair.1) });
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
        crate::peel::check_batch(keys.len(), out.len())?;
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.backend == Backend::Avx512 && self.layout == CellLayout::Blocked {
            /// As in `insert_batch`: the line kernel inlines into the loop.
            ///
            /// # Safety
            /// The CPU must support AVX-512F and AVX-512BW; callers check with the
            /// approximator's `Backend::Avx512` (set only after `line::backend_available`).
            /// There is no other precondition.
            #[target_feature(enable = "avx512f,avx512bw")]
            unsafe fn avx512<L: Lattice, S: BuildHasher, Q: Hash>(
                this: &CompactApproximator<L, S>,
                keys: &[Q],
                out: &mut [L::Value],
            ) {
                // SAFETY: without `VBMI` no CPU feature is needed.
                unsafe { this.get_batch_loop::<Q, false>(keys, out) };
            }
            /// With VBMI: lines of 64 cells gathered by probe ([`Lattice::meet_probes`]).
            ///
            /// # Safety
            /// The CPU must support AVX-512F, AVX-512BW and AVX-512VBMI; callers check with
            /// the approximator's `vbmi` flag. There is no other precondition.
            #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
            unsafe fn avx512_vbmi<L: Lattice, S: BuildHasher, Q: Hash>(
                this: &CompactApproximator<L, S>,
                keys: &[Q],
                out: &mut [L::Value],
            ) {
                // SAFETY: the caller runs this only on a CPU with these features.
                unsafe { this.get_batch_loop::<Q, true>(keys, out) };
            }
            if self.vbmi {
                // SAFETY: as in `insert_batch`, and `vbmi` is set only on a CPU with VBMI.
                unsafe { avx512_vbmi(self, keys, out) };
            } else {
                // SAFETY: as in `insert_batch`.
                unsafe { avx512(self, keys, out) };
            }
            return Ok(());
        }
        // SAFETY: without `VBMI` no CPU feature is needed.
        unsafe { self.get_batch_loop::<Q, false>(keys, out) };
        Ok(())
    }

    /// [`get_hash_inline`](Self::get_hash_inline) of every key into `out` (the first
    /// `min(keys.len(), out.len())`), hashing a block of keys first and prefetching ahead.
    ///
    /// # Safety
    /// As [`get_hash_inline`](Self::get_hash_inline): with `VBMI`, the CPU must support
    /// AVX-512F, AVX-512BW and AVX-512VBMI; without it there is no precondition.
    #[inline(always)]
    unsafe fn get_batch_loop<Q: Hash, const VBMI: bool>(&self, keys: &[Q], out: &mut [L::Value]) {
        // The pipeline expanded here, not through `peel::lookup_batch`: through that
        // helper's `answer` closure LLVM kept the lookup a call, and the line kernel a
        // second call (with a `vzeroupper`) a key.
        bloomforge_core::batch_pipeline!(blocks: BATCH, ahead: self.batch_ahead(), keys: keys,
            out: out,
            hash |k| self.hasher.hash_one(k),
            fetch |h| self.prefetch(h),
            // SAFETY: forwarded contract.
            probe |o, h| *o = unsafe { self.get_hash_inline::<VBMI>(h) });
    }

    /// Keys ahead whose cells the batch loops prefetch ([`AHEAD_BLOCKED`]).
    #[inline(always)]
    fn batch_ahead(&self) -> usize {
        match self.layout {
            CellLayout::Blocked => AHEAD_BLOCKED,
            CellLayout::Subtables => AHEAD_SUBTABLES,
        }
    }

    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        let cells = self.cells.as_ptr();
        match self.layout {
            CellLayout::Subtables => {
                for p in self.positions(hash) {
                    bloomforge_core::batch::prefetch(cells.wrapping_add(p));
                }
            }
            CellLayout::Blocked => {
                bloomforge_core::batch::prefetch(cells.wrapping_add(self.line_base(hash)));
            }
        }
    }

    /// Empties every cell.
    pub fn clear(&mut self) {
        self.cells.fill(L::bottom());
    }
}

impl<L: Lattice, S> CompactApproximator<L, S>
where
    L::Value: PartialEq,
{
    /// Estimated number of distinct keys inserted with a value other than the lattice's
    /// bottom (such a key changes nothing), from the cells that left the bottom: the
    /// occupancy law inverted per subtable (one cell a key in each) or per line (`k`
    /// cells a key drawn with replacement), as core's
    /// [`keys_from_fill`](bloomforge_core::math::keys_from_fill). The table keeps no
    /// count, so this is an estimate (about `1 / sqrt(cells)` relative error while the
    /// table is far from full).
    pub fn estimated_len(&self) -> f64 {
        use bloomforge_core::math::keys_from_fill;
        let bottom = L::bottom();
        let used = self.used_cells();
        match self.layout {
            CellLayout::Subtables => {
                let set = used.iter().filter(|&&c| c != bottom).count();
                keys_from_fill(set as f64 / self.k as f64, self.span as f64, 1.0)
            }
            CellLayout::Blocked => {
                let per_line = 1usize << line_shift::<L::Value>();
                used.chunks_exact(per_line)
                    .map(|line| {
                        let set = line.iter().filter(|&&c| c != bottom).count();
                        keys_from_fill(set as f64, per_line as f64, self.k as f64)
                    })
                    .sum()
            }
        }
    }
}

impl<L: Lattice, S> CompactApproximator<L, S> {
    /// The cells in use: all of them for subtables, the lines after the alignment
    /// padding for the blocked layout.
    fn used_cells(&self) -> &[L::Value] {
        let used = match self.layout {
            CellLayout::Subtables => self.span * self.k,
            CellLayout::Blocked => self.span << line_shift::<L::Value>(),
        };
        &self.cells[self.offset..self.offset + used]
    }
}

/// Bytes of the payload's head: lattice id, cell width, layout, a zero byte, `k` (`u32`),
/// span (`u64`).
const APPROX_HEAD: usize = 16;

impl<L: PersistentLattice, S: PersistentHasher> CompactApproximator<L, S> {
    /// Writes the table in core's format ([`FilterKind::CompactApproximator`]): the
    /// lattice, cell width, layout, `k` and span, then the cells in use (not the blocked
    /// layout's alignment padding), little-endian; the hasher's seed (or for a keyed
    /// hasher only a check of its key) in the header.
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Io`] if writing fails.
    pub fn write_to<W: std::io::Write>(&self, w: W) -> Result<(), RetrievalError> {
        let used = self.used_cells();
        let mut head = Vec::with_capacity(APPROX_HEAD);
        head.push(L::ID);
        head.push(L::CELL_BYTES as u8);
        head.push(match self.layout {
            CellLayout::Subtables => 0,
            CellLayout::Blocked => 1,
        });
        head.push(0);
        head.extend_from_slice(&(self.k as u32).to_le_bytes());
        head.extend_from_slice(&(self.span as u64).to_le_bytes());
        let cell_bytes = (used.len() * L::CELL_BYTES) as u64;
        format::encode_to(
            w,
            FilterKind::CompactApproximator,
            &self.hasher,
            self.k as u32,
            cell_bytes * 8,
            0,
            APPROX_HEAD as u64 + cell_bytes,
            |sink| {
                sink(&head);
                format::stream_le(used, sink, |&c, buf| L::put_cell(c, buf));
            },
        )?;
        Ok(())
    }

    /// The table in core's format (see [`write_to`](Self::write_to)).
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
    /// As [`from_bytes`](CompactApproximator::from_bytes);
    /// [`bloomforge_core::Error::HasherMismatch`] when `hasher` is not the one the table
    /// was written with.
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, RetrievalError> {
        Self::decode(bytes, Some(hasher))
    }

    fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self, RetrievalError> {
        let corrupt = |reason| RetrievalError::Core(bloomforge_core::Error::Corrupt { reason });
        let (header, payload, hasher) =
            format::decode::<S>(bytes, FilterKind::CompactApproximator, hasher)?;
        if payload.len() < APPROX_HEAD {
            return Err(corrupt("approximator payload shorter than its head"));
        }
        if payload[0] != L::ID || usize::from(payload[1]) != L::CELL_BYTES {
            return Err(corrupt(
                "approximator of another lattice or cell width than the type read",
            ));
        }
        let layout = match (payload[2], payload[3]) {
            (0, 0) => CellLayout::Subtables,
            (1, 0) => CellLayout::Blocked,
            _ => {
                return Err(corrupt(
                    "approximator layout is not 0 (subtables) or 1 (blocked)",
                ))
            }
        };
        let k = u32_at(payload, 4);
        let span = u64_at(payload, 8);
        let body = &payload[APPROX_HEAD..];
        let per_span = match layout {
            CellLayout::Subtables => u64::from(k),
            CellLayout::Blocked => 1u64 << line_shift::<L::Value>(),
        };
        if k != header.num_hashes
            || !(1..=16).contains(&k)
            || span == 0
            || span
                .checked_mul(per_span)
                .and_then(|c| c.checked_mul(L::CELL_BYTES as u64))
                != Some(body.len() as u64)
        {
            return Err(corrupt(
                "approximator cell count does not match k and its span",
            ));
        }
        // The body's length bounds the allocation: nothing is sized from the header alone.
        let mut a = Self::with_layout(layout, body.len() / L::CELL_BYTES, k as usize, hasher)?;
        debug_assert_eq!(a.span as u64, span);
        let start = a.offset;
        for (cell, b) in a.cells[start..]
            .iter_mut()
            .zip(body.chunks_exact(L::CELL_BYTES))
        {
            *cell = L::get_cell(b);
        }
        Ok(a)
    }
}

impl<L: PersistentLattice> CompactApproximator<L> {
    /// Reads a table written by [`to_bytes`](Self::to_bytes) with an unkeyed hasher, as
    /// the same type (lattice and cell width).
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for corrupt,
    /// truncated or foreign bytes, or bytes of another lattice or cell width;
    /// [`bloomforge_core::Error::HasherMismatch`] for a keyed table (read it with
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)).
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

/// Calls `f` with the index of each set bit of `mask`, lowest first.
#[inline(always)]
fn for_each_bit(mut mask: u64, mut f: impl FnMut(usize)) {
    while mask != 0 {
        f(mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

/// Cells to skip from `ptr` so that a blocked line starts on a 64-byte boundary (0 when
/// the cell size does not divide 64: such lines cannot all be aligned anyway).
fn line_start<T>(ptr: *const T) -> usize {
    let size = size_of::<T>();
    let misaligned = ptr as usize % LINE_BYTES;
    if size == 0 || !LINE_BYTES.is_multiple_of(size) || !misaligned.is_multiple_of(size) {
        0
    } else {
        (LINE_BYTES - misaligned) % LINE_BYTES / size
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
    layout: CellLayout,
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

    /// Where a key's cells lie (default [`CellLayout::Subtables`]); sizing follows the
    /// layout's own exactness formula.
    pub fn layout(mut self, layout: CellLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Uses `hasher` instead of the default (e.g.
    /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys).
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> CompactApproximatorBuilder<L, S2> {
        CompactApproximatorBuilder {
            expected_items: self.expected_items,
            false_pos: self.false_pos,
            layout: self.layout,
            hasher,
            _l: PhantomData,
        }
    }

    /// The approximator, `m` and `k` from [`bloomforge_core::math::std_size`] (subtables)
    /// or the blocked formula (the smallest cells per key at which some `k <= 16` reaches
    /// `false_pos`, through core's
    /// [`solve_bits_per_key`](bloomforge_core::math::solve_bits_per_key)).
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
        let (m, k) = match self.layout {
            CellLayout::Subtables => bloomforge_core::math::std_size(self.expected_items, p),
            CellLayout::Blocked => {
                blocked_size(self.expected_items, p, 1 << line_shift::<L::Value>())
            }
        };
        let m = usize::try_from(m).map_err(|_| bloomforge_core::Error::TooLarge {
            requested: m,
            max: usize::MAX as u64,
        })?;
        CompactApproximator::with_layout(self.layout, m, (k as usize).clamp(1, 16), self.hasher)
    }
}

/// `(cells, k)` for `n` keys in blocked lines of `per_line` cells at inexact rate `p`.
fn blocked_size(n: u64, p: f64, per_line: usize) -> (u64, u32) {
    use bloomforge_core::math::{best_k, blocked_fp_cached, solve_bits_per_key, std_bits_per_key};
    let best = |c: f64| best_k(|k| blocked_fp_cached(c, per_line, k), 16);
    let c = solve_bits_per_key(p, std_bits_per_key(p), |c| best(c).1);
    ((n as f64 * c).ceil() as u64, best(c).0)
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

/// Inserts every `(key, value)` pair ([`insert`](CompactApproximator::insert) cannot fail)
/// through the pipelined [`insert_batch`](CompactApproximator::insert_batch),
/// [`EXTEND_CHUNK`](bloomforge_core::batch::EXTEND_CHUNK) pairs at a time.
impl<K: Hash, L: Lattice, S: BuildHasher> Extend<(K, L::Value)> for CompactApproximator<L, S> {
    fn extend<I: IntoIterator<Item = (K, L::Value)>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocked lines start on 64-byte boundaries for every built-in cell size, at sizes
    /// that come from `malloc` as both small and large (mapped) allocations.
    #[test]
    fn blocked_lines_are_cache_lines() {
        fn check<T: Counter>() {
            for m in [1usize, 100, 5000, 1 << 20] {
                let a = CompactApproximator::<MaxLattice<T>>::with_layout(
                    CellLayout::Blocked,
                    m,
                    3,
                    DefaultHasher::with_seed(0),
                )
                .unwrap();
                let first = a.cells.as_ptr().wrapping_add(a.offset) as usize;
                assert_eq!(first % LINE_BYTES, 0, "{} bytes, m {m}", size_of::<T>());
                let per_line = LINE_BYTES / size_of::<T>();
                assert_eq!(1 << line_shift::<T>(), per_line);
                assert!(a.offset + a.cells() <= a.cells.len());
            }
        }
        check::<u8>();
        // A clone is aligned in its own allocation and answers alike.
        let mut a =
            CountMin::<u8>::with_layout(CellLayout::Blocked, 5000, 4, DefaultHasher::with_seed(3))
                .unwrap();
        for k in 0..2000u32 {
            a.insert(&k, (k % 5) as u8);
        }
        let b = a.clone();
        assert_eq!(
            b.cells.as_ptr().wrapping_add(b.offset) as usize % LINE_BYTES,
            0
        );
        assert!((0..4000u32).all(|k| a.get(&k) == b.get(&k)));
        check::<u16>();
        check::<u32>();
        check::<u64>();
        // Sizes that do not divide 64: the largest power of two that fits, unaligned.
        assert_eq!(line_shift::<[u8; 3]>(), 4);
        assert_eq!(line_shift::<[u8; 100]>(), 0);
        assert_eq!(line_start::<[u8; 3]>(std::ptr::dangling::<[u8; 3]>()), 0);
    }

    /// A blocked table filled through every available backend's line kernel holds the
    /// same cells as one filled by the scalar loop (and answers each lookup as the scalar
    /// meet does), for each lattice and cell size, with values that saturate the small
    /// cells, and for 1 to 12 probes a key: up to 8 the batches of `u8` cells take the
    /// VBMI probe kernels where the CPU has VBMI, past 8 the mask kernels, past 10 a second
    /// word of positions.
    #[test]
    fn every_backend_fills_the_same_cells() {
        fn cells<L: Lattice>(backend: Backend, k: usize) -> Vec<L::Value>
        where
            L::Value: From<u8> + PartialEq,
        {
            let mut a = CompactApproximator::<L>::with_layout(
                CellLayout::Blocked,
                4096,
                k,
                DefaultHasher::with_seed(9),
            )
            .unwrap();
            a.set_backend(backend).unwrap();
            assert_eq!(a.backend(), backend);
            for k in 0..3000u32 {
                a.insert(&(k % 1500), L::Value::from((k % 200) as u8 + 1));
            }
            let pairs: Vec<(u32, L::Value)> = (0..3000u32)
                .map(|k| ((k % 700) * 7, L::Value::from((k % 251) as u8)))
                .collect();
            a.insert_batch(&pairs);
            // Lookups through the backend's meet: equal to the scalar loop's.
            let gets: Vec<L::Value> = (0..3000u32).map(|k| a.get(&k)).collect();
            // The batch lookup (its own loop, compiled for the backend) answers alike.
            let keys: Vec<u32> = (0..3000).collect();
            let mut batch = vec![L::bottom(); keys.len()];
            a.get_batch(&keys, &mut batch).unwrap();
            assert!(batch == gets, "{}: get_batch", backend.name());
            a.set_backend(Backend::Scalar).unwrap();
            assert!((0..3000u32).zip(&gets).all(|(k, g)| a.get(&k) == *g));
            a.cells[a.offset..a.offset + a.cells()].to_vec()
        }
        fn check<L: Lattice>()
        where
            L::Value: From<u8> + PartialEq,
        {
            for k in [1, 2, 3, 5, 7, 8, 9, 10, 12] {
                let want = cells::<L>(Backend::Scalar, k);
                for b in Backend::available() {
                    if crate::line::backend_available(b) {
                        assert!(cells::<L>(b, k) == want, "{}, k = {k}", b.name());
                    }
                }
            }
        }
        macro_rules! each {
            ($($t:ty),*) => {$(
                check::<MaxLattice<$t>>();
                check::<MinLattice<$t>>();
                check::<SumLattice<$t>>();
            )*};
        }
        each!(u8, u16, u32, u64);
        let a = CountMin::<u8>::new(100, 0.01).unwrap();
        assert_eq!(a.backend(), crate::line::default_backend());
    }
}
