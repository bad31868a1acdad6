//! The d-left counting Bloom filter.

use crate::arch::{check_backend, scalar::Scalar, Backend, Kernel, Scan};
use crate::error::{DLeftError, Result};
use crate::layout::{
    split_hash, unpermute, GeneralMap, Geometry, Locator, MapKind, Permutations, Pow2Map,
    SHAPE_ANY, SHAPE_NARROW, SHAPE_SMALL, SLACK,
};
use crate::theory;
use bloomforge_core::arch::CpuFeatures;
use bloomforge_core::batch::{prefetch, Ring};
use bloomforge_core::hash::DefaultHasher;
use bloomforge_core::{Count, Filter, RemoveOutcome};
use core::fmt;
use core::hash::{BuildHasher, Hash};

#[cfg(target_arch = "x86_64")]
use crate::arch::{avx2::Avx2, avx512::Avx512};

/// Keys the batch loops locate and prefetch ahead in tables below
/// [`AHEAD_FAR_MIN_BYTES`] (4 buckets a key: 32 lines in flight).
const AHEAD_NEAR: usize = 8;

/// Keys located and prefetched ahead in tables from [`AHEAD_FAR_MIN_BYTES`] on.
const AHEAD_FAR: usize = 64;

// The batch loops run core's pipeline with a ring of `AHEAD_FAR` slots at either distance:
// both must be powers of two, the near one no larger.
const _: () =
    assert!(AHEAD_NEAR.is_power_of_two() && AHEAD_FAR.is_power_of_two() && AHEAD_NEAR <= AHEAD_FAR);

/// The table size from which the batch loops prefetch [`AHEAD_FAR`] keys ahead. Measured
/// on an AMD EPYC Zen 5, 2 cores (32 MiB L3 shared), AVX-512 kernel, 1 % tables, ns/key
/// of `contains_batch` / `insert_batch` at 8 against 64 keys ahead: 2.67 MB (1M keys)
/// 4.6-4.7 / 6.9-7.1 against 4.9 / 7.7; 8 MB 4.9-5.0 / 6.9-7.1 against 5.2-5.3 / 7.7;
/// 13 MB 5.7-6.0 / 11.7-12.4 against 5.2-5.4 / 10.9-11.3; 27 MB (10M keys) 16.0-16.9 /
/// 21.6-22.1 against 7.4-7.5 / 13.1 (32 ahead: 8.4-9.7 / 12.9-13.9).
const AHEAD_FAR_MIN_BYTES: usize = 12 << 20;

/// A d-left counting Bloom filter (Bonomi, Mitzenmacher, Panigrahy, Singh, Varghese,
/// ESA 2006): a counting filter that supports deletion in about half the space of a
/// counting Bloom filter.
///
/// `d` subtables of `B` buckets, `w` cells per bucket, a cell = an `r`-bit remainder and
/// a `c`-bit counter. A key's 64-bit hash gives its true fingerprint `f` in `[B 2^r]`;
/// subtable `i` maps `f` through a fixed random permutation `P_i` to a (bucket,
/// remainder) pair. Insert increments the cell holding the fingerprint if one of the `d`
/// candidate buckets has it, else stores (remainder, 1) in the least-loaded candidate
/// (leftmost on ties). Because each `P_i` is a bijection, a remainder match identifies
/// `f` exactly: one fingerprint occupies at most one cell, so `remove` always finds the
/// right cell and never causes a false negative for another key.
///
/// ```
/// use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};
///
/// let mut f = DLeftCountingBloomFilter::with_false_pos(0.001).expected_items(10_000)?;
/// f.insert(&"apple")?;
/// f.insert(&"apple")?;
/// assert!(f.contains(&"apple"));
/// assert_eq!(f.count(&"apple").get(), 2);
/// f.remove(&"apple")?;
/// assert_eq!(f.count(&"apple").get(), 1);
/// assert_eq!(f.remove(&"pear"), Err(DLeftError::NotPresent));
/// # Ok::<(), DLeftError>(())
/// ```
///
/// Counters saturate at `2^c - 1` and then stick (never decremented, never freed), so
/// [`count`](Self::count) reports `Count::AtLeast(2^c - 1)` for them and
/// [`remove`](Self::remove) `RemoveOutcome::Saturated`. Removing a key
/// that was never inserted may remove another key's fingerprint (a false negative for
/// that key), as with every counting filter: remove only keys you inserted.
///
/// Reads (`contains`, `count`) take `&self` and the filter is `Sync`, so any number of
/// threads may query it at once.
pub struct DLeftCountingBloomFilter<S = DefaultHasher> {
    geo: Geometry,
    perm: Permutations,
    /// `d B` buckets of `bucket_bytes` bytes, then `SLACK` zero bytes.
    table: Box<[u8]>,
    backend: Backend,
    /// The instance of the generic operations that runs ([`route_of`]): the AVX2 kernel
    /// only for an AVX2 or AVX-512 backend on a CPU with AVX2, POPCNT and BMI1 (all AVX2
    /// CPUs have both; checked anyway, see [`kernel_is_avx2`]); the AVX-512 kernel only
    /// for an AVX-512 backend on a CPU with its features and a table it covers.
    route: u8,
    /// Inserts minus removes (saturating at 0).
    len: u64,
    /// Occupied cells = distinct stored fingerprints.
    occupied: u64,
    seed: u64,
    hasher: S,
}

/// Where an operation records the cells it overwrites (for rolling back a batch).
trait Journal {
    /// Cell `j` of the bucket at byte `offset` (the key's candidate in subtable `i`) goes
    /// from `old` to `new`. Returns `false` if the write must not happen (the journal
    /// could not grow).
    fn record(&mut self, i: usize, offset: usize, j: u32, old: u32, new: u32) -> bool;
}

/// A located key of the batch loops' ring: its `d` candidate buckets and remainders.
///
/// Aligned to a cache line (96 bytes padded to 128): each field sits in one line and no
/// entry straddles a page, whatever the stack's alignment. As a bare 96-byte tuple, it
/// makes `insert_batch` of 10^6 keys (1 %, AVX-512) take 21-24 ns a key instead of 7.2-7.6
/// in some processes: under `setarch -R`, with the stack moved by the environment's size,
/// one stack offset in 128 is slow every time (`bloomforge-bench --quick --only d-left`
/// hit it in 2 runs of 5). With the aligned entries none of the 128 offsets is (measured:
/// 7.0-8.4 ns), nor 4 harness runs.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Located([*const u8; 8], [u32; 8]);

impl Located {
    const EMPTY: Located = Located([core::ptr::null(); 8], [0; 8]);
}

const _: () = assert!(size_of::<Located>() == 128);

/// Single operations keep no journal.
struct NoJournal;

impl Journal for NoJournal {
    #[inline(always)]
    fn record(&mut self, _: usize, _: usize, _: u32, _: u32, _: u32) -> bool {
        true
    }
}

/// The journal of a batch: only the writes that the inverse operation cannot undo, i.e.
/// a counter that becomes sticky (an insert saturating it) or a freed cell (a remove
/// emptying it: re-inserting could pick another cell). Everything else is undone by
/// the inverse operation, so a successful insert batch usually records nothing.
struct BatchJournal {
    /// Index of the key being applied.
    key: usize,
    /// Counter bits in place (`(2^c - 1) << r`).
    counter_field: u32,
    /// (key, bucket offset, cell, old value), in key order.
    entries: Vec<(usize, usize, u32, u32)>,
    /// Remove batches: for key `k`, the cell its remove freed as `1 + 16 i + j`
    /// (subtable `i < 8`, cell `j < 16`), or 0. A freed cell held the key's remainder in
    /// subtable `i` with counter 1, so one byte restores it; an entry would take 24 and
    /// measured ~8 ns a key when every remove frees. Empty for insert batches.
    freed: Vec<u8>,
}

impl Journal for BatchJournal {
    #[inline(always)]
    fn record(&mut self, i: usize, offset: usize, j: u32, old: u32, new: u32) -> bool {
        let saturates = new & self.counter_field == self.counter_field;
        if new != 0 && !saturates {
            return true;
        }
        if new == 0 {
            if let Some(slot) = self.freed.get_mut(self.key) {
                debug_assert!(i < 8 && j < 16);
                *slot = 1 + ((i as u8) << 4) + j as u8;
                return true;
            }
        }
        if self.entries.len() == self.entries.capacity() && self.entries.try_reserve(1).is_err() {
            return false;
        }
        self.entries.push((self.key, offset, j, old));
        true
    }
}

/// What an insert or remove did (a one-byte result for the hot paths; the public methods
/// turn it into a `Result`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Insert: a new cell was taken.
    New,
    /// Insert: the fingerprint's counter was incremented (or is saturated). Remove: done.
    Existing,
    /// Insert: all candidate buckets are full.
    Full,
    /// Remove: the fingerprint is not stored.
    Absent,
    /// Remove: the fingerprint's counter is saturated and stays (sticky); `len` dropped.
    Saturated,
    /// Batch: the rollback journal could not grow; nothing was written for this key.
    NoMemory,
}

/// Reads the `s`-bit cell `j` of the bucket at byte `offset`.
#[inline(always)]
fn read_cell(table: &[u8], g: &Geometry, offset: usize, j: u32) -> u32 {
    let bit = j * g.cell_bits;
    let at = offset + (bit / 8) as usize;
    let mut word = [0u8; 8];
    word.copy_from_slice(&table[at..at + 8]);
    let cell_mask = (1u64 << g.cell_bits) - 1;
    ((u64::from_le_bytes(word) >> (bit % 8)) & cell_mask) as u32
}

/// Writes the `s`-bit cell `j` of the bucket at byte `offset`.
#[inline(always)]
fn write_cell(table: &mut [u8], g: &Geometry, offset: usize, j: u32, cell: u32) {
    let bit = j * g.cell_bits;
    let at = offset + (bit / 8) as usize;
    let shift = bit % 8;
    let bytes = &mut table[at..at + 8];
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    let cell_mask = (1u64 << g.cell_bits) - 1;
    let word = (u64::from_le_bytes(word) & !(cell_mask << shift)) | (u64::from(cell) << shift);
    bytes.copy_from_slice(&word.to_le_bytes());
}

impl<S> DLeftCountingBloomFilter<S> {
    /// Builds an empty filter (parameters validated by [`Geometry::new`]).
    pub(crate) fn from_parts(
        subtables: u32,
        buckets: u64,
        cells: u32,
        rem_bits: u32,
        counter_bits: u32,
        seed: u64,
        hasher: S,
    ) -> Result<Self> {
        let geo = Geometry::new(subtables, buckets, cells, rem_bits, counter_bits)?;
        let perm = Permutations::new(&geo, seed);
        let backend = Backend::detect();
        let route = route_of(backend, perm.pow2, &geo);
        let bytes = geo.table_bytes() + SLACK;
        let table = bloomforge_core::memory::try_vec_filled(bytes, 0u8)
            .map_err(|_| bloomforge_core::Error::AllocationFailed { bytes })?;
        Ok(Self {
            geo,
            perm,
            table: table.into_boxed_slice(),
            backend,
            route,
            len: 0,
            occupied: 0,
            seed,
            hasher,
        })
    }

    /// Number of subtables `d`.
    pub fn subtables(&self) -> u32 {
        self.geo.d as u32
    }

    /// Buckets per subtable `B`.
    pub fn buckets_per_subtable(&self) -> u64 {
        self.geo.buckets
    }

    /// Cells per bucket `w`.
    pub fn cells_per_bucket(&self) -> u32 {
        self.geo.cells
    }

    /// Remainder bits per cell `r`.
    pub fn remainder_bits(&self) -> u32 {
        self.geo.rem_bits
    }

    /// Counter bits per cell `c` (counters saturate at `2^c - 1`).
    pub fn counter_bits(&self) -> u32 {
        self.geo.counter_bits
    }

    /// Total number of cells, `d B w`.
    pub fn total_cells(&self) -> u64 {
        self.geo.d as u64 * self.geo.buckets * u64::from(self.geo.cells)
    }

    /// Whether `B` is a power of two, so the permutations are Bonomi et al.'s
    /// `P_i(f) = a_i f mod 2^(q+r)`; otherwise the general bijection of
    /// [`layout`](crate::layout) is used.
    pub fn uses_power_of_two_permutations(&self) -> bool {
        self.perm.pow2
    }

    /// The seed the permutations were drawn from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Keys inserted minus keys removed (each insert of a duplicate counts).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether [`len`](Self::len) is 0 (the workspace's one meaning of `is_empty` for a
    /// filter that counts its keys, as the counting filter's). Cells whose counters
    /// saturated stay occupied after all their keys are removed, so an empty filter can
    /// still answer `true` for such a key; [`occupied_cells`](Self::occupied_cells)
    /// counts them.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Occupied cells: the number of distinct true fingerprints stored.
    pub fn occupied_cells(&self) -> u64 {
        self.occupied
    }

    /// Bits of the table: `d B ceil(w (r + c) / 8) * 8` (the 32-byte read slack at the
    /// end is not counted; see [`allocated_bytes`](Self::allocated_bytes)).
    pub fn memory_bits(&self) -> u64 {
        self.geo.table_bytes() as u64 * 8
    }

    /// Bytes allocated for the table, slack included.
    pub fn allocated_bytes(&self) -> usize {
        self.table.len()
    }

    /// Memory bits per stored key, `memory_bits / len` (infinite when empty).
    pub fn bits_per_key(&self) -> f64 {
        self.memory_bits() as f64 / self.len as f64
    }

    /// Average load `L = n / (d B)` for `n` keys.
    pub fn load_for(&self, n: u64) -> f64 {
        n as f64 / (self.geo.d as f64 * self.geo.buckets as f64)
    }

    /// The false-positive rate of the current contents. It is known exactly: the
    /// [`realized_false_pos`](Self::realized_false_pos), `occupied / (B 2^r)`, so a key
    /// inserted several times counts once (unlike [`len`](Self::len)). For the
    /// prediction after `n` distinct keys, `1 - (1 - 1/(B 2^r))^n`, see
    /// [`expected_false_pos_at`](Self::expected_false_pos_at).
    pub fn expected_false_pos(&self) -> f64 {
        self.realized_false_pos()
    }

    /// The expected false-positive rate after `n` distinct keys.
    pub fn expected_false_pos_at(&self, n: u64) -> f64 {
        theory::dlcbf_fp(n, self.geo.buckets, self.geo.rem_bits)
    }

    /// The false-positive rate of the current contents, exactly: a key that was not
    /// inserted is a false positive iff its true fingerprint is one of the
    /// [`occupied_cells`](Self::occupied_cells) stored ones, so the rate is
    /// `occupied / (B 2^r)` (for an ideal hash).
    pub fn realized_false_pos(&self) -> f64 {
        theory::dlcbf_fp_realized(self.occupied, self.geo.buckets, self.geo.rem_bits)
    }

    /// The bucket-matching backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The kernel this filter's operations run on this CPU: [`Backend::Avx512`] or
    /// [`Backend::Avx2`] where [`set_backend`](Self::set_backend)'s choice, the CPU and
    /// the table's shape select that kernel, else [`Backend::Scalar`] (the portable
    /// kernel, which `Wide` also runs).
    pub fn kernel(&self) -> Backend {
        match self.route {
            route::AVX512_GENERAL_SMALL_4 => Backend::Avx512,
            r if r <= route::AVX2_GENERAL_ANY => Backend::Avx2,
            _ => Backend::Scalar,
        }
    }

    /// Chooses the bucket-matching backend (all give identical results). `Avx512`
    /// selects the AVX-512 kernel (four buckets matched in two 512-bit registers, located
    /// in one 256-bit register) for tables with the general map, `d = 4`, buckets of at most 16
    /// bytes and fewer than `2^32` buckets per subtable, on CPUs with AVX-512 F, VL, DQ,
    /// BW, VBMI and BITALG, and the AVX2 kernel otherwise; `Avx2` the AVX2 kernel (a bucket is one
    /// 256-bit register's worth of cells); `Scalar` and `Wide` the portable kernel. The
    /// default is [`Backend::detect`].
    ///
    /// # Errors
    /// [`DLeftError::Core`] with `BackendUnavailable` if this CPU cannot run `backend`;
    /// the filter keeps its current backend.
    pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
        check_backend(backend)?;
        self.backend = backend;
        self.route = route_of(backend, self.perm.pow2, &self.geo);
        Ok(())
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.table.fill(0);
        self.len = 0;
        self.occupied = 0;
    }

    /// The `d B` bucket loads, subtable by subtable.
    fn bucket_loads(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let g = &self.geo;
        (0..g.d).flat_map(move |i| {
            (0..g.buckets).map(move |b| {
                let off = g.bucket_offset(i, b);
                let load = (0..g.cells)
                    .filter(|&j| g.cell_counter(read_cell(&self.table, g, off, j)) != 0)
                    .count() as u32;
                (i, load)
            })
        })
    }

    /// Bucket-load histogram over all subtables: entry `i` (`0..=w`) is the number of
    /// buckets with exactly `i` occupied cells. Compare with
    /// [`theory::dlcbf_fluid`]`(d, w, L, None).load_fractions()` times `d B`.
    pub fn load_histogram(&self) -> Vec<u64> {
        let mut h = vec![0u64; self.geo.cells as usize + 1];
        for (_, load) in self.bucket_loads() {
            h[load as usize] += 1;
        }
        h
    }

    /// [`load_histogram`](Self::load_histogram) of each subtable separately (the left
    /// subtables fill first).
    pub fn load_histogram_per_subtable(&self) -> Vec<Vec<u64>> {
        let mut h = vec![vec![0u64; self.geo.cells as usize + 1]; self.geo.d];
        for (i, load) in self.bucket_loads() {
            h[i][load as usize] += 1;
        }
        h
    }

    /// Number of cells whose counter is saturated (sticky).
    pub fn saturated_cells(&self) -> u64 {
        let g = &self.geo;
        let mut n = 0;
        for i in 0..g.d {
            for b in 0..g.buckets {
                let off = g.bucket_offset(i, b);
                for j in 0..g.cells {
                    n += u64::from(
                        g.cell_counter(read_cell(&self.table, g, off, j)) == g.counter_max,
                    );
                }
            }
        }
        n
    }

    /// The true fingerprint `f` in `[0, B 2^r)` of a key with 64-bit hash `hash`.
    pub fn fingerprint_of_hash(&self, hash: u64) -> u64 {
        let (u, v) = split_hash(&self.geo, hash);
        (u << self.geo.rem_bits) | v
    }

    /// Checks the table's invariants: every cell is empty (all zero) or holds a counter
    /// in `1..=2^c - 1`, the occupied-cell count matches, no two cells hold the same
    /// true fingerprint, and (when no counter is saturated) `len` is the counter sum. For tests and fuzzing; `O(size)`.
    ///
    /// # Errors
    /// A description of the first violation found.
    #[doc(hidden)]
    pub fn validate(&self) -> core::result::Result<(), String> {
        let g = &self.geo;
        let mut seen = std::collections::HashSet::new();
        let mut occupied = 0u64;
        // `None` once a saturated counter is seen.
        let mut counter_sum = Some(0u64);
        for i in 0..g.d {
            for b in 0..g.buckets {
                let off = g.bucket_offset(i, b);
                for j in 0..g.cells {
                    let cell = read_cell(&self.table, g, off, j);
                    if g.cell_counter(cell) == 0 {
                        if cell != 0 {
                            return Err(format!("empty cell {i}/{b}/{j} not zero: {cell:#x}"));
                        }
                        continue;
                    }
                    occupied += 1;
                    let c = g.cell_counter(cell);
                    counter_sum = counter_sum
                        .filter(|_| c != g.counter_max)
                        .map(|s| s + u64::from(c));
                    let f = unpermute(g, &self.perm, i, b, g.cell_remainder(cell));
                    if !seen.insert(f) {
                        return Err(format!("fingerprint {f:?} stored twice (cell {i}/{b}/{j})"));
                    }
                }
            }
        }
        // Padding bits and slack must stay zero.
        let used = g.cells * g.cell_bits;
        if !used.is_multiple_of(8) {
            for i in 0..g.d {
                for b in 0..g.buckets {
                    let last = self.table[g.bucket_offset(i, b) + g.bucket_bytes - 1];
                    if last >> (used % 8) != 0 {
                        return Err(format!("padding bits of bucket {i}/{b} set"));
                    }
                }
            }
        }
        if self.table[g.table_bytes()..].iter().any(|&x| x != 0) {
            return Err("slack bytes modified".into());
        }
        if occupied != self.occupied {
            return Err(format!(
                "occupied count {} but {occupied} cells occupied",
                self.occupied
            ));
        }
        // Every insert and remove moves `len` and one counter together, except on a
        // saturated counter; so without one, `len` is the sum of the counters.
        if let Some(sum) = counter_sum {
            if sum != self.len {
                return Err(format!("len {} but the counters sum to {sum}", self.len));
            }
        }
        Ok(())
    }

    // ---- generic operations over a kernel ------------------------------------------
    //
    // Every operation is generic over the kernel `K`, the permutation family `M`, the
    // bucket shape `SHAPE` (`SHAPE_ANY` or `geo.shape()`) and the subtable count `D` (0:
    // read `geo.d` at run time; else equal to `geo.d`), so the common configurations get
    // straight-line code with no branch on the parameters.

    /// The candidate bucket (pointer) and remainder of `hash` in each subtable; returns `d`.
    #[inline(always)]
    fn locate<M: MapKind, const D: usize>(
        &self,
        hash: u64,
        buckets: &mut [*const u8; 8],
        rems: &mut [u32; 8],
    ) -> usize {
        let g = &self.geo;
        let d = if D == 0 { g.d } else { D };
        let base = self.table.as_ptr();
        let loc = Locator::<M>::new(g, &self.perm, hash);
        for i in 0..d.min(8) {
            let (offset, rem) = loc.at(i);
            debug_assert!(offset + g.bucket_bytes <= g.table_bytes());
            buckets[i] = base.wrapping_add(offset);
            rems[i] = rem;
        }
        d.min(8)
    }

    /// [`locate`](Self::locate) through the kernel's own locating code where it has one
    /// ([`Kernel::LOCATE4_GENERAL`]: general map, `d = 4`); returns `d`.
    ///
    /// # Safety
    /// - The CPU has the features of `K` (see [`Kernel`]): `kernel_is_avx2` /
    ///   `kernel_is_avx512` confirmed them before [`route_of`] chose the kernel.
    /// - `M` is the filter's permutation family (`GeneralMap` exactly when
    ///   `!self.perm.pow2`), and `D` is 0 or `self.geo.d`.
    /// - If `K::LOCATE4_GENERAL` (the AVX-512 kernel): `self.geo.buckets <= u32::MAX`.
    ///
    /// Every route [`route_of`] picks meets these. The pointers are formed, never read,
    /// here; each is the start of a bucket of this table.
    #[inline(always)]
    unsafe fn locate_k<K: Kernel, M: MapKind, const D: usize>(
        &self,
        hash: u64,
        buckets: &mut [*const u8; 8],
        rems: &mut [u32; 8],
    ) -> usize {
        if K::LOCATE4_GENERAL && M::SAME_REM && D == 4 {
            // SAFETY: `M::SAME_REM` is the general map (`!pow2`) and `D == 4 == geo.d`;
            // `B <= u32::MAX` and the CPU features from the caller.
            let rem = unsafe {
                K::locate4_general(&self.geo, &self.perm, self.table.as_ptr(), hash, buckets)
            };
            *rems = [rem; 8];
            return 4;
        }
        self.locate::<M, D>(hash, buckets, rems)
    }

    /// Whether none of the `d` remainders is 0 (see [`Kernel::any_match`]); for maps with
    /// distinct remainders per subtable, always `false` (the kernels then test the
    /// counters: checking four remainders here led LLVM to vectorize the scalar
    /// `locate` of the power-of-two map, measured slower).
    #[inline(always)]
    fn no_zero_rem<M: MapKind>(rems: &[u32; 8], _d: usize) -> bool {
        M::SAME_REM && rems[0] != 0
    }

    /// Cell `j` of the bucket at `bucket` (a pointer into this table).
    ///
    /// # Safety
    /// - `bucket` points to the start of a bucket of this table (so it is readable for the
    ///   bucket plus the `SLACK` bytes that end the table).
    /// - `j < g.cells`: the cell is read with one unaligned 8-byte load at byte
    ///   `j * g.cell_bits / 8` of the bucket, which the slack covers.
    #[inline(always)]
    unsafe fn cell_at(&self, bucket: *const u8, j: u32) -> u32 {
        let g = &self.geo;
        let bit = j * g.cell_bits;
        // SAFETY: `bit / 8 < bucket_bytes`, so the 8 bytes read stay inside the bucket
        // plus the slack (caller); unaligned reads are allowed.
        let word = unsafe {
            bucket
                .add((bit / 8) as usize)
                .cast::<u64>()
                .read_unaligned()
        };
        ((u64::from_le(word) >> (bit % 8)) as u32) & (((1u64 << g.cell_bits) - 1) as u32)
    }

    /// Adds (`ADD`) or subtracts `delta` to / from the value of cell `j` of the bucket at
    /// byte `offset`, with one read-modify-write of the 8 bytes holding the cell. The
    /// caller makes sure the result fits the cell (no carry or borrow out of it), so no
    /// other cell changes.
    ///
    /// # Safety
    /// - `offset` is the byte offset of a bucket of this table.
    /// - `j < g.cells`: the 8 bytes at `offset + j * g.cell_bits / 8` are read and written
    ///   unaligned, inside the bucket plus the table's trailing `SLACK` bytes.
    ///
    /// That the sum or difference fits the cell is a correctness requirement (another
    /// cell would change), not a memory-safety one.
    #[inline(always)]
    unsafe fn add_to_cell<const ADD: bool>(&mut self, offset: usize, j: u32, delta: u32) {
        let bit = j * self.geo.cell_bits;
        // SAFETY: `offset + bit / 8 + 8 <= offset + bucket_bytes + 7 < table.len()` (the
        // table ends with `SLACK` bytes), so the 8 bytes are inside the table; unaligned
        // accesses are allowed.
        unsafe {
            let p = self
                .table
                .as_mut_ptr()
                .add(offset + (bit / 8) as usize)
                .cast::<u64>();
            let word = u64::from_le(p.read_unaligned());
            let delta = u64::from(delta) << (bit % 8);
            let word = if ADD {
                word.wrapping_add(delta)
            } else {
                word.wrapping_sub(delta)
            };
            p.write_unaligned(word.to_le());
        }
    }

    /// Whether `hash`'s fingerprint is stored: one [`Kernel::any_match`] over its `d`
    /// candidate buckets.
    ///
    /// # Safety
    /// - The CPU has the features of `K` (see [`Kernel`]): `kernel_is_avx2` /
    ///   `kernel_is_avx512` confirmed them before [`route_of`] chose the kernel.
    /// - `M` is the filter's permutation family (`GeneralMap` exactly when
    ///   `!self.perm.pow2`), and `D` is 0 or `self.geo.d`.
    /// - If `K::LOCATE4_GENERAL` (the AVX-512 kernel): `self.geo.buckets <= u32::MAX`.
    /// - `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`.
    ///
    /// Every route [`route_of`] picks meets these. The buckets located here are read for
    /// `bucket_bytes + SLACK` bytes, which the table's trailing `SLACK` bytes (an
    /// invariant of every filter) allow.
    #[inline(always)]
    unsafe fn contains_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &self,
        hash: u64,
    ) -> bool {
        let mut buckets = [core::ptr::null(); 8];
        let mut rems = [0u32; 8];
        // SAFETY: forwarded contract.
        let d = unsafe { self.locate_k::<K, M, D>(hash, &mut buckets, &mut rems) };
        let no_zero_rem = Self::no_zero_rem::<M>(&rems, d);
        // SAFETY: every pointer is a bucket of this table (bucket index < B, subtable
        // < d), so it is readable for the bucket plus the slack; CPU feature and shape
        // from the caller.
        unsafe { K::any_match::<SHAPE>(&self.geo, &buckets, &rems, d, no_zero_rem, M::SAME_REM) }
    }

    /// Scans all `d` candidate buckets of `hash` (no early exit: the loads overlap and no
    /// branch depends on which subtable holds the key). Returns `d` and the scans.
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn scan_all<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &self,
        hash: u64,
        buckets: &mut [*const u8; 8],
        rems: &mut [u32; 8],
        scans: &mut [Scan; 8],
    ) -> usize {
        // SAFETY: forwarded contract.
        let d = unsafe { self.locate_k::<K, M, D>(hash, buckets, rems) };
        for i in 0..d {
            // SAFETY: as in `contains_with`.
            scans[i] = unsafe { K::scan::<SHAPE>(&self.geo, buckets[i], rems[i]) };
        }
        d
    }

    /// The first matching cell (subtable, cell index) among `d` scans, branch-free.
    #[inline(always)]
    fn first_match(scans: &[Scan; 8], d: usize) -> Option<(usize, u32)> {
        let mut all = 0u128;
        for (i, s) in scans.iter().enumerate().take(d) {
            all |= u128::from(s.matches) << (16 * i);
        }
        if all == 0 {
            return None;
        }
        let at = all.trailing_zeros();
        Some(((at / 16) as usize, at % 16))
    }

    /// Finds the cell holding the fingerprint of `hash`: (bucket offset, cell index).
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn find_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &self,
        hash: u64,
    ) -> Option<(usize, u32)> {
        let mut buckets = [core::ptr::null(); 8];
        let mut rems = [0u32; 8];
        if D == 4 && SHAPE != SHAPE_ANY {
            // SAFETY: forwarded contract.
            unsafe { self.locate_k::<K, M, D>(hash, &mut buckets, &mut rems) };
            // SAFETY: `SHAPE != SHAPE_ANY` means `w <= 8`; buckets from `locate`; forwarded
            // contract.
            let hits = unsafe { K::scan4::<SHAPE>(&self.geo, &buckets, &rems, M::SAME_REM) }.hits;
            if hits == 0 {
                return None;
            }
            let at = hits.trailing_zeros();
            let i = (at / 8) as usize;
            return Some((buckets[i] as usize - self.table.as_ptr() as usize, at % 8));
        }
        let mut scans = [Scan::default(); 8];
        // SAFETY: forwarded contract.
        let d =
            unsafe { self.scan_all::<K, M, SHAPE, D>(hash, &mut buckets, &mut rems, &mut scans) };
        let (i, j) = Self::first_match(&scans, d)?;
        Some((buckets[i] as usize - self.table.as_ptr() as usize, j))
    }

    /// Writes cell `j` of the bucket at `offset` if `journal` accepts the write.
    #[inline(always)]
    fn set_cell(
        &mut self,
        i: usize,
        offset: usize,
        j: u32,
        old: u32,
        new: u32,
        journal: &mut impl Journal,
    ) -> bool {
        let ok = journal.record(i, offset, j, old, new);
        if ok {
            write_cell(&mut self.table, &self.geo, offset, j, new);
        }
        ok
    }

    /// Inserts the fingerprint whose candidate buckets and remainders are given.
    ///
    /// # Safety
    /// - `buckets[..d]` and `rems[..d]`, with `d`, are what `locate_k::<K, M, D>` returned
    ///   for this filter (so `d <= 8` and each pointer is a bucket start of this table),
    ///   and the table has not been reallocated since.
    /// - The route contract of [`contains_with`](Self::contains_with): the CPU has the
    ///   features of `K`, `M` is the filter's permutation family, `D` is 0 or
    ///   `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    ///   `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    ///   them).
    #[inline(always)]
    unsafe fn insert_located<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &mut self,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        d: usize,
        journal: &mut impl Journal,
    ) -> Outcome {
        if D == 4 && SHAPE != SHAPE_ANY {
            // SAFETY: forwarded contract.
            return unsafe { self.insert_located4::<K, M, SHAPE>(buckets, rems, journal) };
        }
        // Scan all d buckets (no early exit: the loads overlap and no branch depends on
        // which subtable holds the key).
        let mut scans = [Scan::default(); 8];
        for i in 0..d {
            // SAFETY: as in `contains_with`.
            scans[i] = unsafe { K::scan::<SHAPE>(&self.geo, buckets[i], rems[i]) };
        }
        let table_start = self.table.as_ptr() as usize;
        let (rem_bits, counter_max, cell_mask) =
            (self.geo.rem_bits, self.geo.counter_max, self.geo.cell_mask);
        if let Some((i, j)) = Self::first_match(&scans, d) {
            let offset = buckets[i] as usize - table_start;
            let cell = read_cell(&self.table, &self.geo, offset, j);
            if self.geo.cell_counter(cell) != counter_max
                && !self.set_cell(i, offset, j, cell, cell + (1 << rem_bits), journal)
            {
                return Outcome::NoMemory;
            }
            self.len += 1;
            return Outcome::Existing;
        }
        // Least-loaded bucket, leftmost on ties: the minimum of `load * 8 + i` (no
        // data-dependent branch).
        let mut best = u32::MAX;
        for (i, s) in scans.iter().enumerate().take(d) {
            let key = (s.occupied.count_ones() << 3) | i as u32;
            best = core::hint::select_unpredictable(key < best, key, best);
        }
        let i = (best & 7) as usize;
        let free = !scans[i].occupied & cell_mask;
        if free == 0 {
            return Outcome::Full;
        }
        let offset = buckets[i] as usize - table_start;
        let cell = rems[i] | (1 << rem_bits);
        if !self.set_cell(i, offset, free.trailing_zeros(), 0, cell, journal) {
            return Outcome::NoMemory;
        }
        self.len += 1;
        self.occupied += 1;
        Outcome::New
    }

    /// [`insert_located`](Self::insert_located) for `d = 4` buckets of at most 8 cells:
    /// one pass over the four buckets gives packed hit and occupancy masks.
    ///
    /// # Safety
    /// As for [`insert_located`](Self::insert_located) (buckets and remainders from
    /// `locate_k` on this filter, and the route contract), with `d = 4` and
    /// `SHAPE == self.geo.shape() != SHAPE_ANY` (so `w <= 8`, as `scan4` requires).
    #[inline(always)]
    unsafe fn insert_located4<K: Kernel, M: MapKind, const SHAPE: u8>(
        &mut self,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        journal: &mut impl Journal,
    ) -> Outcome {
        // SAFETY: forwarded contract.
        let scan = unsafe { K::scan4::<SHAPE>(&self.geo, buckets, rems, M::SAME_REM) };
        let table_start = self.table.as_ptr() as usize;
        let (rem_bits, counter_max, cell_mask) =
            (self.geo.rem_bits, self.geo.counter_max, self.geo.cell_mask);
        if scan.hits != 0 {
            let at = scan.hits.trailing_zeros();
            let (i, j) = ((at / 8) as usize, at % 8);
            // SAFETY: `buckets[i]` is a bucket of this table and `j < w` (a hit).
            let cell = unsafe { self.cell_at(buckets[i], j) };
            if cell >> rem_bits != counter_max {
                let offset = buckets[i] as usize - table_start;
                if !journal.record(i, offset, j, cell, cell + (1 << rem_bits)) {
                    return Outcome::NoMemory;
                }
                // SAFETY: a bucket offset and `j < w`; the counter is below its maximum,
                // so the increment stays inside the cell.
                unsafe { self.add_to_cell::<true>(offset, j, 1 << rem_bits) };
            }
            self.len += 1;
            return Outcome::Existing;
        }
        // Least-loaded bucket, leftmost on ties, and its first free cell.
        // SAFETY: the CPU supports `K::BACKEND` (forwarded contract).
        let Some((i, j)) = (unsafe { K::pick4(scan.occupied, cell_mask) }) else {
            return Outcome::Full;
        };
        let offset = buckets[i] as usize - table_start;
        // One remainder for all subtables (general map): no lookup by the chosen `i`.
        let rem = if M::SAME_REM { rems[0] } else { rems[i] };
        let cell = rem | (1 << rem_bits);
        if !journal.record(i, offset, j, 0, cell) {
            return Outcome::NoMemory;
        }
        // SAFETY: a bucket offset and `j < w` (a free cell, all zero).
        unsafe { self.add_to_cell::<true>(offset, j, cell) };
        self.len += 1;
        self.occupied += 1;
        Outcome::New
    }

    /// [`remove_located`](Self::remove_located) for `d = 4` buckets of at most 8 cells.
    ///
    /// # Safety
    /// As for [`insert_located4`](Self::insert_located4): buckets and remainders from
    /// `locate_k` on this filter, the route contract, `d = 4` and
    /// `SHAPE == self.geo.shape() != SHAPE_ANY`.
    #[inline(always)]
    unsafe fn remove_located4<K: Kernel, M: MapKind, const SHAPE: u8>(
        &mut self,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        journal: &mut impl Journal,
    ) -> Outcome {
        // SAFETY: forwarded contract.
        let hits = unsafe { K::scan4::<SHAPE>(&self.geo, buckets, rems, M::SAME_REM) }.hits;
        if hits == 0 {
            return Outcome::Absent;
        }
        let at = hits.trailing_zeros();
        let (i, j) = ((at / 8) as usize, at % 8);
        let offset = buckets[i] as usize - self.table.as_ptr() as usize;
        let (rem_bits, counter_max) = (self.geo.rem_bits, self.geo.counter_max);
        // SAFETY: `buckets[i]` is a bucket of this table and `j < w` (a hit).
        let cell = unsafe { self.cell_at(buckets[i], j) };
        let counter = cell >> rem_bits;
        let sticky = counter == counter_max;
        if !sticky {
            // Counter 1: free the cell (subtract all of it); else decrement.
            let delta = if counter == 1 { cell } else { 1 << rem_bits };
            if !journal.record(i, offset, j, cell, cell - delta) {
                return Outcome::NoMemory;
            }
            // SAFETY: a bucket offset and `j < w`; `delta <= cell` field-wise (no
            // borrow out of the cell).
            unsafe { self.add_to_cell::<false>(offset, j, delta) };
            self.occupied -= u64::from(counter == 1);
        }
        self.len = self.len.saturating_sub(1);
        if sticky {
            Outcome::Saturated
        } else {
            Outcome::Existing
        }
    }

    /// Removes one occurrence of the fingerprint whose candidates are given.
    ///
    /// # Safety
    /// As for [`insert_located`](Self::insert_located): `buckets[..d]` and `rems[..d]`
    /// from `locate_k` on this filter, and the route contract.
    #[inline(always)]
    unsafe fn remove_located<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &mut self,
        buckets: &[*const u8; 8],
        rems: &[u32; 8],
        d: usize,
        journal: &mut impl Journal,
    ) -> Outcome {
        if D == 4 && SHAPE != SHAPE_ANY {
            // SAFETY: forwarded contract.
            return unsafe { self.remove_located4::<K, M, SHAPE>(buckets, rems, journal) };
        }
        let mut scans = [Scan::default(); 8];
        for i in 0..d {
            // SAFETY: as in `contains_with`.
            scans[i] = unsafe { K::scan::<SHAPE>(&self.geo, buckets[i], rems[i]) };
        }
        let Some((i, j)) = Self::first_match(&scans, d) else {
            return Outcome::Absent;
        };
        let offset = buckets[i] as usize - self.table.as_ptr() as usize;
        let g = &self.geo;
        let (rem_bits, counter_max) = (g.rem_bits, g.counter_max);
        let cell = read_cell(&self.table, g, offset, j);
        let counter = g.cell_counter(cell);
        match counter {
            c if c == counter_max => {} // sticky
            1 => {
                if !self.set_cell(i, offset, j, cell, 0, journal) {
                    return Outcome::NoMemory;
                }
                self.occupied -= 1;
            }
            _ => {
                if !self.set_cell(i, offset, j, cell, cell - (1 << rem_bits), journal) {
                    return Outcome::NoMemory;
                }
            }
        }
        self.len = self.len.saturating_sub(1);
        if counter == counter_max {
            Outcome::Saturated
        } else {
            Outcome::Existing
        }
    }

    /// Inserts the fingerprint of `hash`: [`insert_located`](Self::insert_located) after
    /// `locate_k`.
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn insert_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &mut self,
        hash: u64,
    ) -> Outcome {
        let mut buckets = [core::ptr::null(); 8];
        let mut rems = [0u32; 8];
        // SAFETY: forwarded contract.
        let d = unsafe { self.locate_k::<K, M, D>(hash, &mut buckets, &mut rems) };
        // SAFETY: located above; forwarded contract.
        unsafe { self.insert_located::<K, M, SHAPE, D>(&buckets, &rems, d, &mut NoJournal) }
    }

    /// Removes one occurrence of the fingerprint of `hash`:
    /// [`remove_located`](Self::remove_located) after `locate_k`.
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn remove_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &mut self,
        hash: u64,
    ) -> Outcome {
        let mut buckets = [core::ptr::null(); 8];
        let mut rems = [0u32; 8];
        // SAFETY: forwarded contract.
        let d = unsafe { self.locate_k::<K, M, D>(hash, &mut buckets, &mut rems) };
        // SAFETY: located above; forwarded contract.
        unsafe { self.remove_located::<K, M, SHAPE, D>(&buckets, &rems, d, &mut NoJournal) }
    }

    /// Locates `hash` into `located` and prefetches its `d` buckets: what a batch loop
    /// prepares for a key ahead.
    ///
    /// # Safety
    /// As for [`locate_k`](Self::locate_k): the CPU has the features of `K`, `M` is the
    /// filter's permutation family, `D` is 0 or `self.geo.d`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL`. (`d > 8` panics on a
    /// bounds check.)
    #[inline(always)]
    unsafe fn locate_prefetch<K: Kernel, M: MapKind, const D: usize>(
        &self,
        located: &mut Located,
        hash: u64,
        d: usize,
    ) {
        let Located(b, r) = located;
        // SAFETY: forwarded contract.
        unsafe { self.locate_k::<K, M, D>(hash, b, r) };
        for &p in &b[..d] {
            prefetch(p);
        }
    }

    /// How many keys ahead the batch loops locate and prefetch: [`AHEAD_NEAR`] for tables
    /// below [`AHEAD_FAR_MIN_BYTES`], else [`AHEAD_FAR`] (both powers of two).
    #[inline(always)]
    fn batch_ahead(&self) -> usize {
        if self.table.len() >= AHEAD_FAR_MIN_BYTES {
            AHEAD_FAR
        } else {
            AHEAD_NEAR
        }
    }

    /// Inserts (`INSERT`) or removes every hash, locating and prefetching keys ahead
    /// ([`batch_ahead`](Self::batch_ahead)); stops at the first failure and returns its
    /// index and outcome. The writes the inverse operation cannot undo are recorded in
    /// `journal`.
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn update_batch_with<
        K: Kernel,
        M: MapKind,
        const SHAPE: u8,
        const D: usize,
        const INSERT: bool,
    >(
        &mut self,
        hashes: &[u64],
        journal: &mut BatchJournal,
    ) -> Option<(usize, Outcome)> {
        let ahead = self.batch_ahead();
        // A constant when `D` is, so the per-key loops unroll.
        let d = if D == 0 { self.geo.d.min(8) } else { D };
        bloomforge_core::batch_pipeline!(ring: AHEAD_FAR, ahead: ahead, len: hashes.len(),
        // SAFETY: forwarded contract.
        prepare |p| Located::EMPTY => |slot| unsafe {
            self.locate_prefetch::<K, M, D>(slot, hashes[p], d)
        },
        probe |k, Located(buckets, rems)| {
            journal.key = k;
            // SAFETY: located by `locate_prefetch`; forwarded contract.
            let outcome = unsafe {
                if INSERT {
                    self.insert_located::<K, M, SHAPE, D>(&buckets, &rems, d, journal)
                } else {
                    self.remove_located::<K, M, SHAPE, D>(&buckets, &rems, d, journal)
                }
            };
            if matches!(outcome, Outcome::Full | Outcome::Absent | Outcome::NoMemory) {
                return Some((k, outcome));
            }
        });
        None
    }

    /// [`update_batch_with`](Self::update_batch_with) inserting every hash.
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn insert_batch_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &mut self,
        hashes: &[u64],
        journal: &mut BatchJournal,
    ) -> Option<(usize, Outcome)> {
        // SAFETY: forwarded contract.
        unsafe { self.update_batch_with::<K, M, SHAPE, D, true>(hashes, journal) }
    }

    /// [`update_batch_with`](Self::update_batch_with) removing every hash.
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn remove_batch_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &mut self,
        hashes: &[u64],
        journal: &mut BatchJournal,
    ) -> Option<(usize, Outcome)> {
        // SAFETY: forwarded contract.
        unsafe { self.update_batch_with::<K, M, SHAPE, D, false>(hashes, journal) }
    }

    /// Applies a batch all or nothing. On a failure at key `index` (which changed
    /// nothing) the keys before it are undone newest first: a journal entry restores its
    /// cell, a freed cell gets its (remainder, 1) back; otherwise the inverse operation
    /// does (decrement / free after an insert, increment after a remove; a sticky counter
    /// that the key found sticky stays).
    fn apply_batch(
        &mut self,
        hashes: &[u64],
        insert: bool,
        run: impl FnOnce(&mut Self, &[u64], &mut BatchJournal) -> Option<(usize, Outcome)>,
    ) -> Result<()> {
        let mut freed = Vec::new();
        if !insert {
            freed.try_reserve_exact(hashes.len()).map_err(|_| {
                bloomforge_core::Error::AllocationFailed {
                    bytes: hashes.len(),
                }
            })?;
            freed.resize(hashes.len(), 0);
        }
        let mut journal = BatchJournal {
            key: 0,
            counter_field: self.geo.counter_field,
            entries: Vec::new(),
            freed,
        };
        let (len, occupied) = (self.len, self.occupied);
        let Some((index, outcome)) = run(self, hashes, &mut journal) else {
            return Ok(());
        };
        let g = self.geo.clone();
        for k in (0..index).rev() {
            if let Some(&(key, offset, j, old)) = journal.entries.last() {
                if key == k {
                    write_cell(&mut self.table, &g, offset, j, old);
                    journal.entries.pop();
                    continue;
                }
            }
            if let Some(&slot) = journal.freed.get(k).filter(|&&slot| slot != 0) {
                let (i, j) = (usize::from((slot - 1) >> 4), u32::from((slot - 1) & 15));
                let (offset, rem) = self.candidate(hashes[k], i);
                write_cell(&mut self.table, &g, offset, j, rem | (1 << g.rem_bits));
                continue;
            }
            let Some((offset, j)) = self.find_scalar(hashes[k]) else {
                continue; // unreachable: every applied key's fingerprint is stored
            };
            let cell = read_cell(&self.table, &g, offset, j);
            let counter = g.cell_counter(cell);
            let undone = match (insert, counter) {
                (_, c) if c == g.counter_max => cell, // was sticky before this key
                (true, 1) => 0,
                (true, _) => cell - (1 << g.rem_bits),
                (false, _) => cell + (1 << g.rem_bits),
            };
            write_cell(&mut self.table, &g, offset, j, undone);
        }
        (self.len, self.occupied) = (len, occupied);
        let error = match outcome {
            Outcome::Full => DLeftError::BucketFull,
            Outcome::Absent => DLeftError::NotPresent,
            _ => {
                return Err(bloomforge_core::Error::AllocationFailed {
                    bytes: journal
                        .entries
                        .capacity()
                        .saturating_mul(2)
                        .saturating_mul(24),
                }
                .into())
            }
        };
        Err(DLeftError::BatchFailed {
            index,
            error: Box::new(error),
        })
    }

    /// The byte offset of `hash`'s candidate bucket in subtable `i` and the remainder it
    /// stores there.
    fn candidate(&self, hash: u64, i: usize) -> (usize, u32) {
        let mut buckets = [core::ptr::null(); 8];
        let mut rems = [0u32; 8];
        if self.perm.pow2 {
            self.locate::<Pow2Map, 0>(hash, &mut buckets, &mut rems);
        } else {
            self.locate::<GeneralMap, 0>(hash, &mut buckets, &mut rems);
        }
        (buckets[i] as usize - self.table.as_ptr() as usize, rems[i])
    }

    /// The cell of `hash`'s fingerprint, found with the scalar kernel (no dispatch).
    fn find_scalar(&self, hash: u64) -> Option<(usize, u32)> {
        // SAFETY: the scalar kernel needs no CPU feature; SHAPE_ANY and D = 0 fit any
        // geometry; the map follows `perm.pow2`.
        unsafe {
            if self.perm.pow2 {
                self.find_with::<Scalar, Pow2Map, SHAPE_ANY, 0>(hash)
            } else {
                self.find_with::<Scalar, GeneralMap, SHAPE_ANY, 0>(hash)
            }
        }
    }

    /// The counter of the fingerprint of `hash` (0 if absent, [`crate::SATURATED`] if
    /// sticky).
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    #[inline(always)]
    unsafe fn count_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &self,
        hash: u64,
    ) -> u64 {
        // SAFETY: forwarded contract.
        match unsafe { self.find_with::<K, M, SHAPE, D>(hash) } {
            None => 0,
            Some((offset, j)) => {
                let g = &self.geo;
                let c = g.cell_counter(read_cell(&self.table, g, offset, j));
                if c == g.counter_max {
                    crate::SATURATED
                } else {
                    u64::from(c)
                }
            }
        }
    }

    /// Answers [`contains_with`](Self::contains_with) for each of `hashes` into `out`,
    /// locating and prefetching keys ahead.
    ///
    /// # Safety
    /// The route contract of [`contains_with`](Self::contains_with): the CPU has the
    /// features of `K`, `M` is the filter's permutation family, `D` is 0 or
    /// `self.geo.d`, `SHAPE` is `SHAPE_ANY` or `self.geo.shape()`, and
    /// `self.geo.buckets <= u32::MAX` if `K::LOCATE4_GENERAL` (all as [`route_of`] picks
    /// them).
    ///
    /// Callers pass `hashes.len() == out.len()`; other lengths answer the first
    /// `min(hashes.len(), out.len())` hashes (not a memory-safety requirement).
    #[inline(always)]
    unsafe fn contains_hash_batch_with<K: Kernel, M: MapKind, const SHAPE: u8, const D: usize>(
        &self,
        hashes: &[u64],
        out: &mut [bool],
    ) {
        // Locate keys ahead and prefetch their buckets, so that out of cache the misses
        // of many keys overlap.
        let ahead = self.batch_ahead();
        // A constant when `D` is, so the per-key loops unroll.
        let d = if D == 0 { self.geo.d.min(8) } else { D };
        let n = hashes.len().min(out.len());
        bloomforge_core::batch_pipeline!(ring: AHEAD_FAR, ahead: ahead, len: n,
        // SAFETY: forwarded contract.
        prepare |p| Located::EMPTY => |slot| unsafe {
            self.locate_prefetch::<K, M, D>(slot, hashes[p], d)
        },
        probe |k, Located(buckets, rems)| {
            let no_zero_rem = Self::no_zero_rem::<M>(&rems, d);
            // SAFETY: as in `contains_with`.
            out[k] = unsafe {
                K::any_match::<SHAPE>(&self.geo, &buckets, &rems, d, no_zero_rem, M::SAME_REM)
            };
        });
    }
}

/// Whether `backend` selects the AVX2 kernel on this CPU. The kernel's functions are
/// compiled with AVX2, POPCNT (bucket loads) and BMI1 (`tzcnt`); every AVX2 CPU has the
/// other two, but they are separate CPUID bits, so all three are checked (once, when the
/// backend is chosen). A CPU without them uses the scalar kernel.
fn kernel_is_avx2(backend: Backend) -> bool {
    matches!(backend, Backend::Avx2 | Backend::Avx512)
        && Backend::Avx2.is_available_with(AVX2_KERNEL_EXTRA)
}

/// The features the AVX2 kernel needs besides AVX2.
pub(crate) const AVX2_KERNEL_EXTRA: CpuFeatures = CpuFeatures::POPCNT.union(CpuFeatures::BMI1);

/// The features the AVX-512 kernel needs besides AVX2 and AVX-512F.
pub(crate) const AVX512_KERNEL_EXTRA: CpuFeatures = AVX2_KERNEL_EXTRA
    .union(CpuFeatures::AVX512VL)
    .union(CpuFeatures::AVX512DQ)
    .union(CpuFeatures::AVX512BW)
    .union(CpuFeatures::AVX512VBMI)
    .union(CpuFeatures::AVX512BITALG);

/// Whether `backend` selects the AVX-512 kernel on this CPU (where the table suits it,
/// see [`route_of`]): `Avx512`, the AVX2 kernel's features, and AVX-512 F, VL, DQ, BW,
/// VBMI (`vpermb`) and BITALG (`vpopcntb`), each a CPUID bit of its own.
fn kernel_is_avx512(backend: Backend) -> bool {
    backend == Backend::Avx512 && Backend::Avx512.is_available_with(AVX512_KERNEL_EXTRA)
}

/// The instance of the generic operations a filter runs: kernel, permutation family,
/// bucket shape and subtable count, chosen once (construction, `set_backend`) so that
/// each operation dispatches with one jump.
mod persist;

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
mod route {
    pub(super) const AVX2_POW2_SMALL_4: u8 = 0;
    pub(super) const AVX2_POW2_NARROW_4: u8 = 1;
    pub(super) const AVX2_POW2_ANY: u8 = 2;
    pub(super) const AVX2_GENERAL_SMALL_4: u8 = 3;
    pub(super) const AVX2_GENERAL_NARROW_4: u8 = 4;
    pub(super) const AVX2_GENERAL_ANY: u8 = 5;
    pub(super) const SCALAR_POW2_4: u8 = 6;
    pub(super) const SCALAR_POW2_ANY: u8 = 7;
    pub(super) const SCALAR_GENERAL_4: u8 = 8;
    pub(super) const SCALAR_GENERAL_ANY: u8 = 9;
    pub(super) const AVX512_GENERAL_SMALL_4: u8 = 10;
}

/// The [`route`] of a filter with geometry `g` and permutation family `pow2` on
/// `backend`: the AVX-512 kernel for the general map, `d = 4`, buckets of at most 16
/// bytes and `B <= u32::MAX` where [`kernel_is_avx512`]; else the AVX2 kernel where
/// [`kernel_is_avx2`]; else the scalar kernel.
fn route_of(backend: Backend, pow2: bool, g: &Geometry) -> u8 {
    use route::*;
    let d4 = g.d == 4;
    if !pow2
        && d4
        && g.shape() == SHAPE_SMALL
        && g.buckets <= u64::from(u32::MAX)
        && kernel_is_avx512(backend)
    {
        return AVX512_GENERAL_SMALL_4;
    }
    if kernel_is_avx2(backend) {
        match (pow2, g.shape(), d4) {
            (true, SHAPE_SMALL, true) => AVX2_POW2_SMALL_4,
            (true, SHAPE_NARROW, true) => AVX2_POW2_NARROW_4,
            (true, _, _) => AVX2_POW2_ANY,
            (false, SHAPE_SMALL, true) => AVX2_GENERAL_SMALL_4,
            (false, SHAPE_NARROW, true) => AVX2_GENERAL_NARROW_4,
            (false, _, _) => AVX2_GENERAL_ANY,
        }
    } else {
        match (pow2, d4) {
            (true, true) => SCALAR_POW2_4,
            (true, false) => SCALAR_POW2_ANY,
            (false, true) => SCALAR_GENERAL_4,
            (false, false) => SCALAR_GENERAL_ANY,
        }
    }
}

/// Runs `$generic::<Kernel, Map, SHAPE, D>` for the filter's [`route`] (backend,
/// permutation family, bucket shape and subtable count, fixed when the filter is built or
/// its backend set), so the probe loops carry no branch on them. The AVX2 instances are
/// compiled inside `#[target_feature(enable = "avx2")]` functions so the kernel inlines.
macro_rules! dispatch {
    ($this:ident, $generic:ident, $self_ty:ty, ($($arg:ident : $ty:ty),*) -> $ret:ty) => {{
        /// The AVX2 instances, compiled with the kernel's features.
        ///
        /// # Safety
        /// The CPU must support AVX2, POPCNT and BMI1 (callers check with
        /// `kernel_is_avx2`), and the route contract of `contains_with` holds for `M`,
        /// `SHAPE` and `D` (as [`route_of`] picks them).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,popcnt,bmi1")]
        unsafe fn avx2<S, M: MapKind, const SHAPE: u8, const D: usize>(
            this: $self_ty,
            $($arg: $ty),*
        ) -> $ret {
            // SAFETY: runs only with AVX2 (and POPCNT, BMI1) enabled; `M`, `SHAPE` and `D`
            // match the filter (this function's contract, met by `route_of`).
            unsafe { this.$generic::<Avx2, M, SHAPE, D>($($arg),*) }
        }
        /// The AVX-512 instances, compiled with the kernel's features.
        ///
        /// # Safety
        /// The CPU must support AVX2, POPCNT, BMI1 and AVX-512 F, VL, DQ, BW, VBMI and
        /// BITALG (callers check with `kernel_is_avx512`), and the route contract of
        /// `contains_with` holds for `M`, `SHAPE` and `D`, including
        /// `geo.buckets <= u32::MAX` (as [`route_of`] picks them).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,popcnt,bmi1,avx512f,avx512vl,avx512dq,avx512bw,avx512vbmi,avx512bitalg")]
        unsafe fn avx512<S, M: MapKind, const SHAPE: u8, const D: usize>(
            this: $self_ty,
            $($arg: $ty),*
        ) -> $ret {
            // SAFETY: runs only with the AVX-512 kernel's features enabled; `M`, `SHAPE`,
            // `D` and `B <= u32::MAX` match the filter (this function's contract, met by
            // `route_of`).
            unsafe { this.$generic::<Avx512, M, SHAPE, D>($($arg),*) }
        }
        /// The scalar instances, out of line so that the dispatch itself stays small
        /// enough to inline into callers.
        ///
        /// # Safety
        /// No CPU feature is needed; `M` must be the filter's permutation family and `D`
        /// 0 or `geo.d` (the route contract of `contains_with` with `SHAPE_ANY`).
        #[inline(never)]
        unsafe fn scalar<S, M: MapKind, const D: usize>(
            this: $self_ty,
            $($arg: $ty),*
        ) -> $ret {
            // SAFETY: the scalar kernel needs no CPU feature; `SHAPE_ANY` fits any
            // geometry; `M` and `D` match the filter (this function's contract: `D` is 4
            // only when `geo.d == 4`, chosen by `route_of`).
            unsafe { this.$generic::<Scalar, M, SHAPE_ANY, D>($($arg),*) }
        }
        // SAFETY: an AVX2 route is set only when `kernel_is_avx2` confirmed AVX2, POPCNT
        // and BMI1 on this CPU, the AVX-512 route only when `kernel_is_avx512` confirmed
        // its features too and the table is the general map's with `d = 4`, 16-byte
        // buckets and `B <= u32::MAX` (`route_of`); `SHAPE` is `geo.shape()` or
        // `SHAPE_ANY`, `D` is 4 only when `geo.d == 4`, and the map is `Pow2Map` exactly
        // for the `POW2` routes, which `route_of` picks when `perm.pow2`. The scalar
        // kernel needs no CPU feature; `SHAPE_ANY` and `D = 0` fit any geometry.
        unsafe {
            match $this.route {
                #[cfg(target_arch = "x86_64")]
                route::AVX512_GENERAL_SMALL_4 => avx512::<S, GeneralMap, SHAPE_SMALL, 4>($this, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                route::AVX2_GENERAL_SMALL_4 => avx2::<S, GeneralMap, SHAPE_SMALL, 4>($this, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                route::AVX2_GENERAL_NARROW_4 => avx2::<S, GeneralMap, SHAPE_NARROW, 4>($this, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                route::AVX2_GENERAL_ANY => avx2::<S, GeneralMap, SHAPE_ANY, 0>($this, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                route::AVX2_POW2_SMALL_4 => avx2::<S, Pow2Map, SHAPE_SMALL, 4>($this, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                route::AVX2_POW2_NARROW_4 => avx2::<S, Pow2Map, SHAPE_NARROW, 4>($this, $($arg),*),
                #[cfg(target_arch = "x86_64")]
                route::AVX2_POW2_ANY => avx2::<S, Pow2Map, SHAPE_ANY, 0>($this, $($arg),*),
                route::SCALAR_POW2_4 => scalar::<S, Pow2Map, 4>($this, $($arg),*),
                route::SCALAR_POW2_ANY => scalar::<S, Pow2Map, 0>($this, $($arg),*),
                route::SCALAR_GENERAL_4 => scalar::<S, GeneralMap, 4>($this, $($arg),*),
                _ => scalar::<S, GeneralMap, 0>($this, $($arg),*),
            }
        }
    }};
}

impl<S: BuildHasher> DLeftCountingBloomFilter<S> {
    /// Hashes `key` with the filter's hasher.
    #[inline(always)]
    pub fn hash_key<T: Hash + ?Sized>(&self, key: &T) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Where the fingerprint of `hash` is stored: (subtable, bucket, cell index), or
    /// `None` if it is not. For tests (two keys share a cell iff their true fingerprints
    /// are equal).
    #[doc(hidden)]
    pub fn locate_cell_of_hash(&self, hash: u64) -> Option<(usize, u64, u32)> {
        let g = &self.geo;
        let (offset, j) = self.find_scalar(hash)?;
        let bucket = (offset / g.bucket_bytes) as u64;
        Some(((bucket / g.buckets) as usize, bucket % g.buckets, j))
    }

    /// The true fingerprint `f` in `[0, B 2^r)` of `key`.
    pub fn fingerprint<T: Hash + ?Sized>(&self, key: &T) -> u64 {
        self.fingerprint_of_hash(self.hash_key(key))
    }

    /// Inserts `key`. Returns `Ok(true)` if its fingerprint was already stored (its
    /// counter was incremented, or left alone if saturated), `Ok(false)` if a new cell
    /// was taken.
    ///
    /// # Errors
    /// [`DLeftError::BucketFull`] if the fingerprint is new and all `d` candidate buckets
    /// are full; the filter is unchanged.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> Result<bool> {
        self.insert_hash(self.hash_key(key))
    }

    /// [`insert`](Self::insert) for a caller-computed 64-bit hash (use a good hash: the
    /// fingerprint takes its high and low bits).
    ///
    /// # Errors
    /// As for [`insert`](Self::insert).
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> Result<bool> {
        match self.insert_outcome(hash) {
            Outcome::New => Ok(false),
            Outcome::Existing => Ok(true),
            _ => Err(DLeftError::BucketFull),
        }
    }

    /// [`insert_hash`](Self::insert_hash) with a one-byte result.
    fn insert_outcome(&mut self, hash: u64) -> Outcome {
        dispatch!(self, insert_with, &mut DLeftCountingBloomFilter<S>, (hash: u64) -> Outcome)
    }

    /// Removes one occurrence of `key`: decrements its fingerprint's counter and frees the
    /// cell at 0: [`RemoveOutcome::Removed`]. A saturated counter stays (sticky): the
    /// call returns [`RemoveOutcome::Saturated`], `len` drops, and the key keeps answering
    /// present.
    ///
    /// # Errors
    /// [`DLeftError::NotPresent`] if the fingerprint is not stored; the filter is
    /// unchanged.
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&mut self, key: &T) -> Result<RemoveOutcome> {
        self.remove_hash(self.hash_key(key))
    }

    /// [`remove`](Self::remove) for a caller-computed hash.
    ///
    /// # Errors
    /// As for [`remove`](Self::remove).
    #[inline]
    pub fn remove_hash(&mut self, hash: u64) -> Result<RemoveOutcome> {
        match self.remove_outcome(hash) {
            Outcome::Existing => Ok(RemoveOutcome::Removed),
            Outcome::Saturated => Ok(RemoveOutcome::Saturated),
            _ => Err(DLeftError::NotPresent),
        }
    }

    /// [`remove_hash`](Self::remove_hash) with a one-byte result.
    fn remove_outcome(&mut self, hash: u64) -> Outcome {
        dispatch!(self, remove_with, &mut DLeftCountingBloomFilter<S>, (hash: u64) -> Outcome)
    }

    /// Whether `key` may be in the filter (`false`: certainly not).
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hash_key(key))
    }

    /// [`contains`](Self::contains) for a caller-computed hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        dispatch!(self, contains_with, &DLeftCountingBloomFilter<S>, (hash: u64) -> bool)
    }

    /// The counter of `key`'s fingerprint: `Exact(0)` if absent, else at least the number
    /// of times `key` was inserted minus removed (fingerprint collisions add), or
    /// [`Count::AtLeast`]`(2^counter_bits - 1)` if the counter is stuck at its maximum.
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> Count {
        self.count_hash(self.hash_key(key))
    }

    /// [`count`](Self::count) for a caller-computed hash.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> Count {
        let c = dispatch!(self, count_with, &DLeftCountingBloomFilter<S>, (hash: u64) -> u64);
        let max = u64::from(self.geo.counter_max);
        if c == crate::SATURATED {
            Count::AtLeast(max)
        } else {
            Count::Exact(c)
        }
    }

    /// Queries many hashes; `out[i] = contains_hash(hashes[i])`. Buckets are prefetched a
    /// few keys ahead, which pays off once the table outgrows the cache.
    ///
    /// # Errors
    /// `LengthMismatch` (in [`DLeftError::Core`]) unless `hashes.len() == out.len()`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        if hashes.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: hashes.len(),
                out: out.len(),
            }
            .into());
        }
        self.contains_hash_batch_unchecked(hashes, out);
        Ok(())
    }

    /// [`contains_hash_batch`](Self::contains_hash_batch) after the length check.
    fn contains_hash_batch_unchecked(&self, hashes: &[u64], out: &mut [bool]) {
        dispatch!(self, contains_hash_batch_with, &DLeftCountingBloomFilter<S>, (hashes: &[u64], out: &mut [bool]) -> ())
    }

    /// Inserts every key, all or nothing: if some key finds all its buckets full, the
    /// keys of the batch inserted before it are rolled back and the filter is exactly as
    /// before the call. Buckets are located and prefetched a few keys ahead, which pays
    /// off once the table outgrows the cache.
    ///
    /// # Errors
    /// [`DLeftError::BatchFailed`] with the index of the first key that failed and
    /// [`DLeftError::BucketFull`]; `AllocationFailed` (in [`DLeftError::Core`]) if the
    /// rollback journal cannot grow (it holds 24 bytes per counter the batch saturates,
    /// usually none). The filter is unchanged.
    pub fn insert_batch<T: Hash>(&mut self, keys: &[T]) -> Result<()> {
        let hashes: Vec<u64> = keys.iter().map(|k| self.hash_key(k)).collect();
        self.insert_hash_batch(&hashes)
    }

    /// [`insert_batch`](Self::insert_batch) for caller-computed hashes.
    ///
    /// # Errors
    /// As for [`insert_batch`](Self::insert_batch).
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) -> Result<()> {
        self.apply_batch(hashes, true, |f, h, j| f.insert_batch_dispatch(h, j))
    }

    /// Removes one occurrence of every key, all or nothing: if some key is not present,
    /// the removals of the batch before it are rolled back and the filter is exactly as
    /// before the call.
    ///
    /// # Errors
    /// [`DLeftError::BatchFailed`] with the index of the first key that failed and
    /// [`DLeftError::NotPresent`]; `AllocationFailed` (in [`DLeftError::Core`]) if the
    /// rollback journal (one byte per key, allocated before any change) cannot be
    /// allocated. The filter is unchanged.
    pub fn remove_batch<T: Hash>(&mut self, keys: &[T]) -> Result<()> {
        let hashes: Vec<u64> = keys.iter().map(|k| self.hash_key(k)).collect();
        self.remove_hash_batch(&hashes)
    }

    /// [`remove_batch`](Self::remove_batch) for caller-computed hashes.
    ///
    /// # Errors
    /// As for [`remove_batch`](Self::remove_batch).
    pub fn remove_hash_batch(&mut self, hashes: &[u64]) -> Result<()> {
        self.apply_batch(hashes, false, |f, h, j| f.remove_batch_dispatch(h, j))
    }

    /// [`remove_batch`](Self::remove_batch) that also reports what each remove did, as
    /// [`remove`](Self::remove) does: `out[i]` is [`RemoveOutcome::Removed`] or
    /// [`RemoveOutcome::Saturated`] (the key's counter is saturated and stays). All or
    /// nothing, like `remove_batch`: a key that is not present fails the whole batch.
    ///
    /// ```
    /// use bloomforge_core::RemoveOutcome;
    /// let mut f = bloomforge_dleft::DLeftCountingBloomFilter::new(1000, 0.01)?;
    /// for _ in 0..20 {
    ///     f.insert(&"hot")?;
    /// }
    /// f.insert(&"cold")?;
    /// let mut out = [RemoveOutcome::Removed; 2];
    /// f.remove_batch_outcomes(&["cold", "hot"], &mut out)?;
    /// assert_eq!(out, [RemoveOutcome::Removed, RemoveOutcome::Saturated]);
    /// # Ok::<(), bloomforge_dleft::DLeftError>(())
    /// ```
    ///
    /// # Errors
    /// As for [`remove_batch`](Self::remove_batch) (`out` untouched), and core's
    /// `LengthMismatch` (nothing removed) unless `keys.len() == out.len()`.
    pub fn remove_batch_outcomes<T: Hash>(
        &mut self,
        keys: &[T],
        out: &mut [RemoveOutcome],
    ) -> Result<()> {
        if keys.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: keys.len(),
                out: out.len(),
            }
            .into());
        }
        let hashes: Vec<u64> = keys.iter().map(|k| self.hash_key(k)).collect();
        self.remove_hash_batch(&hashes)?;
        // A remove never raises a counter and a saturated one stays: the key's counter is
        // saturated now exactly when it was at its remove, so this is the one-by-one
        // outcome.
        for (o, &h) in out.iter_mut().zip(&hashes) {
            *o = match self.count_hash(h) {
                Count::AtLeast(_) => RemoveOutcome::Saturated,
                Count::Exact(_) => RemoveOutcome::Removed,
            };
        }
        Ok(())
    }

    fn insert_batch_dispatch(
        &mut self,
        hashes: &[u64],
        journal: &mut BatchJournal,
    ) -> Option<(usize, Outcome)> {
        dispatch!(self, insert_batch_with, &mut DLeftCountingBloomFilter<S>, (hashes: &[u64], journal: &mut BatchJournal) -> Option<(usize, Outcome)>)
    }

    fn remove_batch_dispatch(
        &mut self,
        hashes: &[u64],
        journal: &mut BatchJournal,
    ) -> Option<(usize, Outcome)> {
        dispatch!(self, remove_batch_with, &mut DLeftCountingBloomFilter<S>, (hashes: &[u64], journal: &mut BatchJournal) -> Option<(usize, Outcome)>)
    }

    /// Queries many keys; `out[i] = contains(&keys[i])` (hashed in chunks, then
    /// [`contains_hash_batch`](Self::contains_hash_batch)).
    ///
    /// # Errors
    /// `LengthMismatch` (in [`DLeftError::Core`]) unless `keys.len() == out.len()`.
    pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
        if keys.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: keys.len(),
                out: out.len(),
            }
            .into());
        }
        let mut hashes = Ring::<u64, 256>::new();
        for (chunk, out) in keys.chunks(256).zip(out.chunks_mut(256)) {
            let hashes = hashes.fill(chunk.len(), |i| self.hash_key(&chunk[i]));
            self.contains_hash_batch(hashes, out)?;
        }
        Ok(())
    }
}

impl<S: BuildHasher> DLeftCountingBloomFilter<S> {
    /// Inserts the keys of `iter` in order and stops at the first that does not fit: the
    /// keys before it stay inserted, that key and the rest are not.
    ///
    /// # Errors
    /// [`DLeftError::BucketFull`] from the first failing insert.
    pub fn try_extend<T: Hash, I: IntoIterator<Item = T>>(&mut self, iter: I) -> Result<()> {
        // Through the pipelined batch insert, a chunk at a time. A chunk that fails leaves
        // the filter as it was; it is then inserted key by key up to the key that fails.
        bloomforge_core::batch::try_for_each_chunk(iter, |chunk| {
            if self.insert_batch(chunk).is_err() {
                for key in chunk {
                    self.insert(key)?;
                }
            }
            Ok(())
        })
    }
}

/// Inserts every key; **panics** if a key's buckets are all full (a d-left insert can
/// fail, and `Extend` cannot report it; dropping the key silently would make it a false
/// negative). Use [`DLeftCountingBloomFilter::try_extend`] to get the error instead.
impl<T: Hash, S: BuildHasher> Extend<T> for DLeftCountingBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        if let Err(e) = self.try_extend(iter) {
            panic!("DLeftCountingBloomFilter::extend: {e}; use try_extend to handle a full bucket");
        }
    }
}

/// Collects the keys, then builds a filter with the default parameters (false-positive
/// rate [`DEFAULT_FALSE_POS`](bloomforge_core::builder::DEFAULT_FALSE_POS), default
/// hasher) sized for their number; in the rare case a key's buckets are full, it rebuilds
/// with a quarter more room, so every key is inserted. Panics only if memory runs out (as
/// `Vec` does).
impl<T: Hash> FromIterator<T> for DLeftCountingBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let keys: Vec<T> = iter.into_iter().collect();
        let mut items = (keys.len() as u64).max(1);
        loop {
            let mut f =
                DLeftCountingBloomFilter::new(items, bloomforge_core::builder::DEFAULT_FALSE_POS)
                    .expect("a d-left filter for the collected keys could not be allocated");
            if f.insert_batch(&keys).is_ok() {
                return f;
            }
            items += items.div_ceil(4);
        }
    }
}

impl<S: Clone> Clone for DLeftCountingBloomFilter<S> {
    fn clone(&self) -> Self {
        Self {
            geo: self.geo.clone(),
            perm: self.perm.clone(),
            table: self.table.clone(),
            backend: self.backend,
            route: self.route,
            len: self.len,
            occupied: self.occupied,
            seed: self.seed,
            hasher: self.hasher.clone(),
        }
    }
}

/// Equal when parameters, seed, hasher, counts and every cell are equal (the backend is
/// ignored: all backends give identical results).
impl<S: PartialEq> PartialEq for DLeftCountingBloomFilter<S> {
    fn eq(&self, other: &Self) -> bool {
        self.geo == other.geo
            && self.perm == other.perm
            && self.seed == other.seed
            && self.len == other.len
            && self.occupied == other.occupied
            && self.hasher == other.hasher
            && self.table == other.table
    }
}

impl<S> fmt::Debug for DLeftCountingBloomFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DLeftCountingBloomFilter")
            .field("subtables", &self.geo.d)
            .field("buckets_per_subtable", &self.geo.buckets)
            .field("cells_per_bucket", &self.geo.cells)
            .field("remainder_bits", &self.geo.rem_bits)
            .field("counter_bits", &self.geo.counter_bits)
            .field("len", &self.len)
            .field("occupied_cells", &self.occupied)
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl<T: Hash + ?Sized, S: BuildHasher> Filter<T> for DLeftCountingBloomFilter<S> {
    type InsertError = DLeftError;

    fn insert(&mut self, key: &T) -> Result<bool> {
        DLeftCountingBloomFilter::insert(self, key)
    }

    fn contains(&self, key: &T) -> bool {
        DLeftCountingBloomFilter::contains(self, key)
    }

    fn memory_bits(&self) -> u64 {
        DLeftCountingBloomFilter::memory_bits(self)
    }

    fn expected_false_pos(&self) -> f64 {
        DLeftCountingBloomFilter::expected_false_pos(self)
    }
}
