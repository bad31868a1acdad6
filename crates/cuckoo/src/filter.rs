//! [`CuckooFilter`]: the table, insert with bounded kicks and a victim stash, queries,
//! removal and the pipelined batch loops.

use crate::error::{CuckooError, Result};
use crate::math;
use crate::table::{self, Fingerprint, Fp12, Kernel, PAD};
use bloomforge_core::batch::{prefetch, HashSource, Hashes, Keys};
use bloomforge_core::hash::fast_range64;
use bloomforge_core::{Backend, DefaultHasher, RemoveOutcome};
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;

/// Default bound on evictions per insert (the paper's 500).
pub const DEFAULT_MAX_KICKS: u32 = 500;

/// Keys ahead whose two buckets the batch loops hash and prefetch.
const AHEAD: usize = 32;

/// Largest bucket count (keeps `hf + m` and byte offsets far from overflow).
pub(crate) const MAX_BUCKETS: u64 = 1 << 56;

/// Odd 64-bit constant (2^64 / golden ratio) that spreads a fingerprint over the range
/// before the fast range reduction picks its offset.
const FP_SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

/// A cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher, CoNEXT 2014): approximate
/// membership with deletion, `f` bits per slot at ~95 % load.
///
/// A key's 64-bit hash gives its fingerprint `fp` in `1..2^f` (low 32 bits, fast range)
/// and its first bucket `i1` (fast range of the whole hash onto the `m` buckets). The
/// alternate bucket depends on `i1` and `fp` only (partial-key cuckoo hashing), so an
/// evicted fingerprint can move without its key: `i2 = (H(fp) - i1) mod m` with
/// `H(fp) = fast_range(fp * φ, m)`. This is the paper's `i1 xor hash(fp)` for a table of
/// any size (xor needs a power-of-two `m`, which would waste up to half the memory at a
/// given load): both are involutions, `alt(alt(i)) = i`.
///
/// Insert places `fp` in a free slot of `i1` or `i2`; with both full it evicts a random
/// slot's fingerprint and moves it to its own alternate bucket, up to `max_kicks` times
/// (default 500). A chain that runs out leaves its last fingerprint in a one-entry
/// *victim stash* (queried with the table), so no key is ever lost; while the stash is
/// occupied, an insert that finds both buckets full returns [`CuckooError::Full`] without
/// changing anything. Removing a key that frees a slot of the stashed fingerprint's
/// buckets moves it back.
///
/// The fingerprint size is the type parameter `F` ([`Fp8`](crate::Fp8), [`Fp12`] (the
/// default, packed), [`Fp16`](crate::Fp16)); `S` is the hasher.
pub struct CuckooFilter<F: Fingerprint = Fp12, S = DefaultHasher> {
    pub(crate) table: Vec<u8>,
    pub(crate) num_buckets: u64,
    pub(crate) bucket_size: u32,
    pub(crate) bucket_bytes: usize,
    pub(crate) len: u64,
    pub(crate) max_kicks: u32,
    pub(crate) stash_fp: u32,
    pub(crate) stash_bucket: u64,
    pub(crate) rng: u64,
    pub(crate) hasher: S,
    pub(crate) backend: Backend,
    pub(crate) kernel: Kernel,
    pub(crate) _fp: PhantomData<F>,
}

impl<F: Fingerprint, S: Clone> Clone for CuckooFilter<F, S> {
    fn clone(&self) -> Self {
        Self {
            table: self.table.clone(),
            num_buckets: self.num_buckets,
            bucket_size: self.bucket_size,
            bucket_bytes: self.bucket_bytes,
            len: self.len,
            max_kicks: self.max_kicks,
            stash_fp: self.stash_fp,
            stash_bucket: self.stash_bucket,
            rng: self.rng,
            hasher: self.hasher.clone(),
            backend: self.backend,
            kernel: self.kernel,
            _fp: PhantomData,
        }
    }
}

impl<F: Fingerprint, S> core::fmt::Debug for CuckooFilter<F, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("fingerprint_bits", &F::BITS)
            .field("bucket_size", &self.bucket_size)
            .field("num_buckets", &self.num_buckets)
            .field("len", &self.len)
            .field("stash_occupied", &(self.stash_fp != 0))
            .field("backend", &self.backend)
            .finish()
    }
}

/// A key's place: its fingerprint and the byte offsets of its two buckets.
#[derive(Clone, Copy, Default)]
pub(crate) struct Probe {
    pub(crate) fp: u32,
    pub(crate) i1: u64,
    pub(crate) i2: u64,
}

/// The geometry that maps hashes to probes (shared by the filter and its view).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    pub(crate) num_buckets: u64,
    pub(crate) bucket_size: u32,
    pub(crate) bucket_bytes: usize,
}

impl Geometry {
    #[inline(always)]
    pub(crate) fn fingerprint<F: Fingerprint>(hash: u64) -> u32 {
        // Fast range of the low 32 bits onto 1..=MASK (0 marks an empty slot).
        (((hash & 0xffff_ffff) * u64::from(F::MASK)) >> 32) as u32 + 1
    }

    #[inline(always)]
    pub(crate) fn alt(&self, bucket: u64, fp: u32) -> u64 {
        let m = self.num_buckets;
        let hf = fast_range64(u64::from(fp).wrapping_mul(FP_SPREAD), m);
        let r = hf + m - bucket;
        if r >= m {
            r - m
        } else {
            r
        }
    }

    #[inline(always)]
    pub(crate) fn probe<F: Fingerprint>(&self, hash: u64) -> Probe {
        let fp = Self::fingerprint::<F>(hash);
        let i1 = fast_range64(hash, self.num_buckets);
        Probe {
            fp,
            i1,
            i2: self.alt(i1, fp),
        }
    }

    #[inline(always)]
    pub(crate) fn start(&self, bucket: u64) -> usize {
        bucket as usize * self.bucket_bytes
    }
}

/// A bucket-match kernel as a type, so batch loops instantiate per kernel.
trait MatchKernel {
    /// Whether `fp` is in the bucket at byte `b1` or `b2` of the table at `t`.
    ///
    /// # Safety
    /// - Both bucket starts `b1` and `b2` satisfy the contract of [`table::slot_at`] for
    ///   `t`, and `bs` is the table's slots per bucket.
    /// - The CPU supports the kernel: AVX2 for `Avx2Kernel` (callers check with
    ///   `Backend::is_available()` before the filter's `Kernel::Avx2` is built), nothing
    ///   for `ScalarKernel`.
    unsafe fn matches<F: Fingerprint>(
        t: *const u8,
        b1: usize,
        b2: usize,
        fp: u32,
        bs: usize,
    ) -> bool;
}

struct ScalarKernel;
impl MatchKernel for ScalarKernel {
    /// The SWAR kernel where the bucket fits a `u64`, else the slot loop.
    ///
    /// # Safety
    /// Both bucket starts satisfy the contract of [`table::slot_at`] for `t`, and `bs` is the
    /// table's slots per bucket. No CPU feature is needed.
    #[inline(always)]
    unsafe fn matches<F: Fingerprint>(
        t: *const u8,
        b1: usize,
        b2: usize,
        fp: u32,
        bs: usize,
    ) -> bool {
        // SAFETY: forwarded from the caller (the SWAR kernel where the bucket fits a u64).
        unsafe {
            if table::swar_fits::<F>(bs) {
                table::matches_swar::<F>(t, b1, b2, fp, bs)
            } else {
                table::matches_scalar::<F>(t, b1, b2, fp, bs)
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
struct Avx2Kernel;
#[cfg(target_arch = "x86_64")]
impl MatchKernel for Avx2Kernel {
    /// [`table::matches_avx2`].
    ///
    /// # Safety
    /// The CPU supports AVX2 (callers check with `Backend::is_available()`), and both bucket
    /// starts satisfy the contract of [`table::slot_at`] for `t`, with `bs` the table's slots
    /// per bucket.
    #[inline(always)]
    unsafe fn matches<F: Fingerprint>(
        t: *const u8,
        b1: usize,
        b2: usize,
        fp: u32,
        bs: usize,
    ) -> bool {
        // SAFETY: forwarded from the caller (the CPU has AVX2).
        unsafe { table::matches_avx2::<F>(t, b1, b2, fp, bs) }
    }
}

impl CuckooFilter {
    /// A filter for `expected_items` keys at false-positive rate `false_pos`, with 12-bit
    /// fingerprints, 4-slot buckets (2-slot buckets where 4 cannot reach `false_pos`:
    /// below ~0.18 %; 0.098 % is the floor of 12 bits, below it use
    /// `builder().fingerprint::<Fp16>()`), 500 kicks and the default hasher.
    ///
    /// ```
    /// let mut f = bloomforge_cuckoo::CuckooFilter::new(1000, 0.01)?;
    /// f.insert(&"key")?;
    /// assert!(f.contains(&"key"));
    /// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
    /// ```
    ///
    /// # Errors
    /// `Core(ZeroItems)`, `Core(InvalidFalsePositiveRate)`, [`CuckooError::FingerprintTooShort`],
    /// `Core(TooLarge)` / `Core(AllocationFailed)`.
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self> {
        Self::builder()
            .expected_items(expected_items)
            .false_pos(false_pos)
            .build()
    }

    /// A builder (12-bit fingerprints and the default hasher until told otherwise).
    pub fn builder() -> CuckooBuilder {
        CuckooBuilder::new()
    }
}

impl<F: Fingerprint, S> CuckooFilter<F, S> {
    pub(crate) fn geometry(&self) -> Geometry {
        Geometry {
            num_buckets: self.num_buckets,
            bucket_size: self.bucket_size,
            bucket_bytes: self.bucket_bytes,
        }
    }

    /// Fingerprint bits (`F::BITS`).
    pub fn fingerprint_bits(&self) -> u32 {
        F::BITS
    }
    /// Slots per bucket (2, 4 or 8).
    pub fn bucket_size(&self) -> u32 {
        self.bucket_size
    }
    /// Number of buckets.
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }
    /// Bound on evictions per insert.
    pub fn max_kicks(&self) -> u32 {
        self.max_kicks
    }
    /// The hasher.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }
    /// Fingerprints stored (inserts minus removes; the stash included).
    pub fn len(&self) -> u64 {
        self.len
    }
    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Slots of the table (`num_buckets * bucket_size`); the stash holds one more.
    pub fn capacity(&self) -> u64 {
        self.num_buckets * u64::from(self.bucket_size)
    }
    /// `len / capacity`.
    pub fn load_factor(&self) -> f64 {
        self.len as f64 / self.capacity() as f64
    }
    /// Whether the victim stash holds a fingerprint (the next insert that finds both its
    /// buckets full fails).
    pub fn stash_occupied(&self) -> bool {
        self.stash_fp != 0
    }
    /// Bits of the table (`capacity * f`; the 16 padding bytes and the stash excluded).
    pub fn memory_bits(&self) -> u64 {
        self.capacity() * u64::from(F::BITS)
    }
    /// Bytes allocated for the table (with its 16 padding bytes).
    pub fn allocated_bytes(&self) -> usize {
        self.table.len()
    }
    /// The expected false-positive rate at the current load ([`math::fp_exact`]).
    pub fn expected_false_pos(&self) -> f64 {
        math::fp_exact(self.bucket_size, F::BITS, self.load_factor())
    }
    /// The SIMD backend the queries use.
    pub fn backend(&self) -> Backend {
        self.backend
    }
    /// Overrides the backend (benchmarks and tests; every backend answers alike).
    ///
    /// # Errors
    /// `Core(BackendUnavailable)` if this CPU cannot run `backend`; nothing changes then.
    pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
        if !backend.is_available() {
            return Err(bloomforge_core::Error::BackendUnavailable(backend.name()).into());
        }
        self.backend = backend;
        self.kernel = Kernel::for_backend(backend);
        Ok(())
    }

    /// Empties the filter (the table is zeroed, the allocation kept).
    pub fn clear(&mut self) {
        self.table.fill(0);
        self.len = 0;
        self.stash_fp = 0;
        self.stash_bucket = 0;
    }

    #[inline(always)]
    fn slot(&self, bucket: u64, j: usize) -> u32 {
        debug_assert!(bucket < self.num_buckets && j < self.bucket_size as usize);
        // SAFETY: `bucket < num_buckets`, `j < bucket_size`, and the table holds
        // `num_buckets * bucket_bytes + PAD` bytes.
        unsafe { table::slot_at::<F>(self.table.as_ptr(), self.geometry().start(bucket), j) }
    }

    #[inline(always)]
    fn set(&mut self, bucket: u64, j: usize, value: u32) {
        debug_assert!(bucket < self.num_buckets && j < self.bucket_size as usize);
        let start = self.geometry().start(bucket);
        // SAFETY: as in `slot`, for the table we hold mutably.
        unsafe { table::set_slot::<F>(self.table.as_mut_ptr(), start, j, value) }
    }

    /// Puts `fp` in a free slot of `bucket`; whether there was one.
    #[inline(always)]
    fn try_place(&mut self, bucket: u64, fp: u32) -> bool {
        for j in 0..self.bucket_size as usize {
            if self.slot(bucket, j) == 0 {
                self.set(bucket, j, fp);
                return true;
            }
        }
        false
    }

    /// Removes one copy of `fp` from `bucket`; whether there was one.
    #[inline(always)]
    fn take(&mut self, bucket: u64, fp: u32) -> bool {
        for j in 0..self.bucket_size as usize {
            if self.slot(bucket, j) == fp {
                self.set(bucket, j, 0);
                return true;
            }
        }
        false
    }

    #[inline(always)]
    fn next_rand(&mut self) -> u64 {
        // xorshift64*: the eviction choices need no more than this.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[inline(always)]
    fn stash_matches(&self, p: &Probe) -> bool {
        self.stash_fp == p.fp && (self.stash_bucket == p.i1 || self.stash_bucket == p.i2)
    }

    /// Inserts a key by its 64-bit hash (callers that hash themselves).
    ///
    /// # Errors
    /// [`CuckooError::Full`]: both buckets full and the stash occupied; nothing changed.
    pub fn insert_hash(&mut self, hash: u64) -> Result<()> {
        let p = self.geometry().probe::<F>(hash);
        self.insert_probe(p)
    }

    fn insert_probe(&mut self, p: Probe) -> Result<()> {
        // Start the second bucket's load now: `try_place(i1)` branches on the first one's
        // slots, and out of cache the two misses should overlap.
        prefetch(
            self.table
                .as_ptr()
                .wrapping_add(self.geometry().start(p.i2)),
        );
        if self.try_place(p.i1, p.fp) || self.try_place(p.i2, p.fp) {
            self.len += 1;
            return Ok(());
        }
        if self.stash_fp != 0 {
            return Err(CuckooError::Full {
                len: self.len,
                capacity: self.capacity(),
            });
        }
        let geometry = self.geometry();
        let mut bucket = if self.next_rand() & 1 == 0 {
            p.i1
        } else {
            p.i2
        };
        let mut fp = p.fp;
        for _ in 0..self.max_kicks {
            let j = (self.next_rand() % u64::from(self.bucket_size)) as usize;
            let victim = self.slot(bucket, j);
            self.set(bucket, j, fp);
            fp = victim;
            bucket = geometry.alt(bucket, fp);
            if self.try_place(bucket, fp) {
                self.len += 1;
                return Ok(());
            }
        }
        // The chain ran out: the last evicted fingerprint waits in the stash, still found
        // by queries (bucket is one of its two buckets).
        self.stash_fp = fp;
        self.stash_bucket = bucket;
        self.len += 1;
        Ok(())
    }

    /// Whether a key with this 64-bit hash may be present.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let g = self.geometry();
        let p = g.probe::<F>(hash);
        // SAFETY: both buckets are below `num_buckets`, so their starts satisfy the
        // kernels' contract; the kernel was built from an available backend.
        let hit = unsafe {
            self.kernel.matches_one::<F>(
                self.table.as_ptr(),
                g.start(p.i1),
                g.start(p.i2),
                p.fp,
                self.bucket_size as usize,
            )
        };
        hit || self.stash_matches(&p)
    }

    /// Removes one copy of a key's fingerprint by its 64-bit hash: always
    /// [`RemoveOutcome::Removed`] (a cuckoo filter has no counters to saturate: each copy
    /// is its own fingerprint), the answer type every deletable filter of the workspace
    /// gives.
    ///
    /// # Errors
    /// [`CuckooError::NotPresent`] if neither bucket nor the stash holds the fingerprint;
    /// nothing changed.
    pub fn remove_hash(&mut self, hash: u64) -> Result<RemoveOutcome> {
        let p = self.geometry().probe::<F>(hash);
        self.remove_probe(p).map(|()| RemoveOutcome::Removed)
    }

    /// Moves the stashed fingerprint back into the table if one of its buckets has room.
    fn unstash(&mut self) {
        if self.stash_fp == 0 {
            return;
        }
        let (fp, bucket) = (self.stash_fp, self.stash_bucket);
        let other = self.geometry().alt(bucket, fp);
        if self.try_place(bucket, fp) || self.try_place(other, fp) {
            self.stash_fp = 0;
            self.stash_bucket = 0;
        }
    }

    /// The false-positive rate of the current contents, computed from the table: the
    /// probability that a key never inserted (a uniformly random hash) is reported
    /// present, counting each distinct fingerprint of its two buckets once (and the stash).
    /// Equals [`math::fp_exact`] in expectation, minus the effect of equal fingerprints
    /// sharing a bucket.
    pub fn realized_false_pos(&self) -> f64 {
        let g = self.geometry();
        let b = self.bucket_size as usize;
        let mut hits = 0u64;
        let mut seen = [0u32; 8];
        for i in 0..self.num_buckets {
            let mut distinct = 0;
            for j in 0..b {
                let v = self.slot(i, j);
                if v != 0 && !seen[..distinct].contains(&v) {
                    seen[distinct] = v;
                    distinct += 1;
                }
            }
            // Queries with first bucket i and fp in S(i) hit ...
            hits += distinct as u64;
            // ... and queries whose *alternate* bucket is i (first bucket alt(i, v)) with
            // fp = v hit unless v is already in alt(i, v), counted there.
            for &v in &seen[..distinct] {
                let a = g.alt(i, v);
                if !(0..b).any(|j| self.slot(a, j) == v) {
                    hits += 1;
                }
            }
        }
        if self.stash_fp != 0 {
            let (v, s) = (self.stash_fp, self.stash_bucket);
            let a = g.alt(s, v);
            let in_table = (0..b).any(|j| self.slot(s, j) == v || self.slot(a, j) == v);
            if !in_table {
                hits += if a == s { 1 } else { 2 };
            }
        }
        hits as f64 * math::slot_match_probability(F::BITS) / self.num_buckets as f64
    }

    /// Checks the table against its counters: the number of occupied slots plus the stash
    /// equals `len`, and the stash's bucket is in range. For tests and after loading.
    pub fn validate(&self) -> core::result::Result<(), String> {
        let mut occupied = 0u64;
        for i in 0..self.num_buckets {
            for j in 0..self.bucket_size as usize {
                occupied += u64::from(self.slot(i, j) != 0);
            }
        }
        occupied += u64::from(self.stash_fp != 0);
        if occupied != self.len {
            return Err(format!(
                "{occupied} fingerprints stored but len is {}",
                self.len
            ));
        }
        if self.stash_fp != 0 && self.stash_bucket >= self.num_buckets {
            return Err("stash bucket out of range".into());
        }
        if self.table[self.table.len() - PAD..].iter().any(|&b| b != 0) {
            return Err("padding is not zero".into());
        }
        Ok(())
    }

    /// The pipelined query loop: hashes and prefetches both buckets `AHEAD` keys ahead.
    ///
    /// # Safety
    /// The CPU supports kernel `K`: AVX2 for `Avx2Kernel` (core's dispatch picks it only for
    /// a backend that passed `Backend::is_available()`), nothing for `ScalarKernel`. There
    /// is no other precondition: the buckets probed are below `num_buckets` of this
    /// filter's table. `out` receives the first
    /// `min(src.len(), out.len())` answers.
    #[inline(always)]
    unsafe fn contains_loop<K: MatchKernel, Src: HashSource>(&self, src: &Src, out: &mut [bool]) {
        let g = self.geometry();
        let base = self.table.as_ptr();
        let bs = self.bucket_size as usize;
        let n = src.len().min(out.len());
        let out = &mut out[..n];
        bloomforge_core::batch_pipeline!(ahead: AHEAD, len: n,
        prepare |k| {
            let p = g.probe::<F>(src.hash_at(k));
            prefetch(base.wrapping_add(g.start(p.i1)));
            prefetch(base.wrapping_add(g.start(p.i2)));
            p
        },
        probe |k, p| {
            // SAFETY: both buckets are below `num_buckets`; the caller guarantees K's
            // CPU features.
            let hit = unsafe { K::matches::<F>(base, g.start(p.i1), g.start(p.i2), p.fp, bs) };
            out[k] = hit || self.stash_matches(&p);
        });
    }

    fn contains_source<Src: HashSource>(&self, src: &Src, out: &mut [bool]) -> Result<()> {
        if src.len() != out.len() {
            return Err(bloomforge_core::Error::LengthMismatch {
                keys: src.len(),
                out: out.len(),
            }
            .into());
        }
        d_contains_loop(self.backend, self, src, out);
        Ok(())
    }

    /// [`contains_hash`](Self::contains_hash) for a batch of hashes, pipelined.
    ///
    /// # Errors
    /// `Core(LengthMismatch)` if the lengths differ (`out` untouched).
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        self.contains_source(&Hashes(hashes), out)
    }

    /// Inserts hashes in order, prefetching both buckets of the keys ahead. On failure
    /// the hashes inserted by this call are removed again, so the filter answers exactly
    /// as before.
    ///
    /// # Errors
    /// [`CuckooError::BatchFull`] with the index of the first hash that did not fit.
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) -> Result<()> {
        self.insert_source(&Hashes(hashes))
    }

    fn insert_source<Src: HashSource>(&mut self, src: &Src) -> Result<()> {
        let g = self.geometry();
        let base = self.table.as_ptr();
        bloomforge_core::batch_pipeline!(ahead: AHEAD, len: src.len(),
        prepare |k| {
            let p = g.probe::<F>(src.hash_at(k));
            prefetch(base.wrapping_add(g.start(p.i1)));
            prefetch(base.wrapping_add(g.start(p.i2)));
            p
        },
        probe |k, p| {
            if self.insert_probe(p).is_err() {
                for back in (0..k).rev() {
                    let p = g.probe::<F>(src.hash_at(back));
                    self.remove_probe(p)
                        .expect("a fingerprint inserted by this batch is still stored");
                }
                return Err(CuckooError::BatchFull { index: k });
            }
        });
        Ok(())
    }

    fn remove_probe(&mut self, p: Probe) -> Result<()> {
        prefetch(
            self.table
                .as_ptr()
                .wrapping_add(self.geometry().start(p.i2)),
        );
        if self.take(p.i1, p.fp) || self.take(p.i2, p.fp) {
            self.len -= 1;
            self.unstash();
            return Ok(());
        }
        if self.stash_fp != 0 && self.stash_matches(&p) {
            self.stash_fp = 0;
            self.stash_bucket = 0;
            self.len -= 1;
            return Ok(());
        }
        Err(CuckooError::NotPresent)
    }
}

/// [`CuckooFilter::contains_loop`] as a free function, for core's dispatch.
///
/// # Safety
/// As `contains_loop`: the CPU supports kernel `K`.
#[inline(always)]
unsafe fn contains_loop<K: MatchKernel, F: Fingerprint, S: Sized, Src: HashSource>(
    filter: &CuckooFilter<F, S>,
    src: &Src,
    out: &mut [bool],
) {
    // SAFETY: forwarded contract.
    unsafe { filter.contains_loop::<K, Src>(src, out) }
}

// Core's dispatch with this crate's match kernels: AVX2 for the `Avx2` and `Avx512`
// backends (two buckets of at most 16 bytes fill one 256-bit register; 512 bits would only
// add idle lanes), the scalar (SWAR) kernel for `Scalar` and `Wide`. A filter holds a
// backend only after `Backend::is_available()`, which covers AVX2 for both.
bloomforge_core::dispatch_kernels! {
    kernels {
        avx512: Avx2Kernel ["avx2"],
        avx2: Avx2Kernel ["avx2"],
        wide: ScalarKernel,
        scalar: ScalarKernel,
    }
    /// The pipelined query loop with the kernel of `backend` (the filter's own).
    fn d_contains_loop<F: Fingerprint, S: Sized, Src: HashSource>(
        filter: &CuckooFilter<F, S>,
        src: &Src,
        out: &mut [bool]
    ) -> () => contains_loop
}

impl<F: Fingerprint, S: BuildHasher> CuckooFilter<F, S> {
    /// Inserts `key` (a multiset: inserting a key twice stores two copies).
    ///
    /// # Errors
    /// [`CuckooError::Full`]: both of the key's buckets are full and the victim stash is
    /// occupied. Nothing changed: every key inserted before still answers `true`.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.insert_hash(self.hasher.hash_one(key))
    }

    /// Whether `key` may be present (`false`: certainly not).
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// Removes one copy of `key`'s fingerprint: [`RemoveOutcome::Removed`] (the only
    /// outcome here: no counter can saturate, each copy of a key is its own fingerprint).
    ///
    /// Removing a key that was never inserted may delete the fingerprint of another key
    /// that shares a bucket and a fingerprint with it (a false positive), and that key then
    /// reads absent: remove only keys you inserted.
    ///
    /// # Errors
    /// [`CuckooError::NotPresent`] if the fingerprint is in neither bucket nor the stash;
    /// nothing changed.
    pub fn remove<T: Hash + ?Sized>(&mut self, key: &T) -> Result<RemoveOutcome> {
        self.remove_hash(self.hasher.hash_one(key))
    }

    /// Answers `contains` for every key into `out`, hashing and prefetching both buckets
    /// of the keys ahead.
    ///
    /// # Errors
    /// `Core(LengthMismatch)` if `keys` and `out` differ in length (`out` untouched).
    pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
        self.contains_source(
            &Keys {
                keys,
                hasher: &self.hasher,
            },
            out,
        )
    }

    /// Inserts every key in order, prefetching ahead. On failure the keys inserted by this
    /// call are removed again, so the filter answers exactly as before.
    ///
    /// # Errors
    /// [`CuckooError::BatchFull`] with the index of the first key that did not fit.
    pub fn insert_batch<T: Hash>(&mut self, keys: &[T]) -> Result<()> {
        let hashes: Vec<u64> = keys.iter().map(|k| self.hasher.hash_one(k)).collect();
        self.insert_source(&Hashes(&hashes))
    }

    /// Inserts the keys of `iter` in order and stops at the first that does not fit: the
    /// keys before it stay inserted, that key and the rest are not.
    ///
    /// # Errors
    /// [`CuckooError::Full`] from the first failing insert.
    pub fn try_extend<T: Hash, I: IntoIterator<Item = T>>(&mut self, iter: I) -> Result<()> {
        // Through the pipelined batch insert, a chunk at a time. A chunk that fails leaves
        // the filter answering as before; it is then inserted key by key up to the key
        // that fails.
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

/// Inserts every key, as [`insert`](CuckooFilter::insert) does: a key that is already
/// present is stored again (a multiset, so that each copy can be removed once).
/// **Panics** if the filter fills up (a cuckoo insert can fail, and `Extend` cannot report
/// it; dropping the key silently would make it a false negative). A key repeated more
/// than `2 * bucket_size` times always fills its two buckets. Use
/// [`CuckooFilter::try_extend`] to get the error instead, or collect with [`FromIterator`],
/// which stores each distinct key once.
impl<T: Hash, F: Fingerprint, S: BuildHasher> Extend<T> for CuckooFilter<F, S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        if let Err(e) = self.try_extend(iter) {
            panic!("CuckooFilter::extend: {e}; use try_extend to handle a full filter");
        }
    }
}

/// Rebuilds a [`FromIterator`] filter with a quarter more room at most this many times
/// (1.25^16 ≈ 36 times the first size) before giving up.
const FROM_ITER_MAX_GROWTHS: u32 = 16;

/// Collects the keys as a **set** and builds a filter with 12-bit fingerprints, 4-slot
/// buckets and the default hasher, sized for the number of distinct keys at the default
/// target load (0.94).
///
/// A key that occurs several times in the iterator is stored once (keys are deduplicated
/// by their 64-bit hash, so two keys whose hashes are equal count as one: they are one key
/// to every operation of the filter anyway). Unlike [`insert`](CuckooFilter::insert) and
/// [`Extend`], which store a copy per call, this makes `collect` work for any input: a key
/// repeated more than `2 * bucket_size` times would otherwise fill both its buckets and
/// no table size could hold it. Remove a collected key once.
///
/// In the rare case the last keys do not fit, it rebuilds with a quarter more room, at
/// most 16 times. **Panics** with "CuckooFilter::from_iter: ..." if the filter cannot be
/// allocated or (never seen for distinct hashes) the keys still do not fit after that;
/// build the filter with [`CuckooFilter::builder`] and use
/// [`try_extend`](CuckooFilter::try_extend) to handle those cases as errors.
impl<T: Hash> FromIterator<T> for CuckooFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let builder = CuckooFilter::builder();
        let hasher = builder.build_hasher();
        let mut hashes: Vec<u64> = iter.into_iter().map(|k| hasher.hash_one(&k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let mut items = (hashes.len() as u64).max(1);
        for _ in 0..=FROM_ITER_MAX_GROWTHS {
            let mut f = builder
                .clone()
                .expected_items(items)
                .build()
                .unwrap_or_else(|e| panic!("CuckooFilter::from_iter: {e}"));
            if f.insert_hash_batch(&hashes).is_ok() {
                return f;
            }
            items += items.div_ceil(4);
        }
        panic!(
            "CuckooFilter::from_iter: {} distinct keys did not fit after {FROM_ITER_MAX_GROWTHS} \
             rebuilds with more room",
            hashes.len()
        );
    }
}

impl<T: Hash + ?Sized, F: Fingerprint, S: BuildHasher> bloomforge_core::Filter<T>
    for CuckooFilter<F, S>
{
    type InsertError = CuckooError;
    fn insert(&mut self, key: &T) -> Result<bool> {
        let hash = self.hasher.hash_one(key);
        let present = self.contains_hash(hash);
        self.insert_hash(hash)?;
        Ok(present)
    }
    fn contains(&self, key: &T) -> bool {
        CuckooFilter::contains(self, key)
    }
    fn memory_bits(&self) -> u64 {
        CuckooFilter::memory_bits(self)
    }
    fn expected_false_pos(&self) -> f64 {
        CuckooFilter::expected_false_pos(self)
    }
}

/// Builder of [`CuckooFilter`] (the conventions' names): `expected_items` (required),
/// `false_pos` (optional: checked against the theory, and it picks the bucket size when
/// `bucket_size` is not given), `bucket_size` (2, 4 or 8), `max_kicks` (default 500),
/// `target_load` (default [`math::default_target_load`]), `seed` / `hasher`, and
/// `fingerprint::<Fp8 | Fp12 | Fp16>()`.
///
/// ```
/// use bloomforge_cuckoo::{CuckooFilter, Fp16};
/// let f = CuckooFilter::builder()
///     .expected_items(10_000)
///     .false_pos(0.0005)
///     .bucket_size(4)
///     .max_kicks(500)
///     .seed(7)
///     .fingerprint::<Fp16>()
///     .build()?;
/// assert_eq!((f.fingerprint_bits(), f.bucket_size()), (16, 4));
/// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
/// ```
#[must_use]
#[derive(Clone, Debug)]
pub struct CuckooBuilder<F: Fingerprint = Fp12, S = DefaultHasher> {
    expected_items: u64,
    false_pos: Option<f64>,
    bucket_size: Option<u32>,
    max_kicks: u32,
    target_load: Option<f64>,
    hasher: S,
    _fp: PhantomData<F>,
}

impl Default for CuckooBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl CuckooBuilder {
    /// A builder with the defaults (12-bit fingerprints, default hasher, seed 0).
    pub fn new() -> Self {
        Self {
            expected_items: 0,
            false_pos: None,
            bucket_size: None,
            max_kicks: DEFAULT_MAX_KICKS,
            target_load: None,
            hasher: DefaultHasher::default(),
            _fp: PhantomData,
        }
    }
}

impl<F: Fingerprint> CuckooBuilder<F, DefaultHasher> {
    /// The default hasher with this seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.hasher = DefaultHasher::with_seed(seed);
        self
    }
}

impl<F: Fingerprint, S: BuildHasher> CuckooBuilder<F, S> {
    /// The hasher the filter will use (a clone).
    pub(crate) fn build_hasher(&self) -> S
    where
        S: Clone,
    {
        self.hasher.clone()
    }

    /// Keys the filter must hold (required, at least 1).
    pub fn expected_items(mut self, n: u64) -> Self {
        self.expected_items = n;
        self
    }
    /// Target false-positive rate in (0, 1) at `expected_items` keys.
    pub fn false_pos(mut self, p: f64) -> Self {
        self.false_pos = Some(p);
        self
    }
    /// Slots per bucket: 2, 4 (the default) or 8.
    pub fn bucket_size(mut self, b: u32) -> Self {
        self.bucket_size = Some(b);
        self
    }
    /// Evictions an insert may make before it stashes its last victim (default 500).
    pub fn max_kicks(mut self, kicks: u32) -> Self {
        self.max_kicks = kicks;
        self
    }
    /// Load (occupied / total slots) at `expected_items` keys, in (0, 1]; the default
    /// keeps a margin below the first-failure load ([`math::default_target_load`]).
    pub fn target_load(mut self, load: f64) -> Self {
        self.target_load = Some(load);
        self
    }
    /// Another hasher (the seed setter then no longer applies).
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> CuckooBuilder<F, S2> {
        CuckooBuilder {
            expected_items: self.expected_items,
            false_pos: self.false_pos,
            bucket_size: self.bucket_size,
            max_kicks: self.max_kicks,
            target_load: self.target_load,
            hasher,
            _fp: PhantomData,
        }
    }
    /// Another fingerprint size.
    pub fn fingerprint<F2: Fingerprint>(self) -> CuckooBuilder<F2, S> {
        CuckooBuilder {
            expected_items: self.expected_items,
            false_pos: self.false_pos,
            bucket_size: self.bucket_size,
            max_kicks: self.max_kicks,
            target_load: self.target_load,
            hasher: self.hasher,
            _fp: PhantomData,
        }
    }

    /// Validates the parameters and allocates the filter.
    ///
    /// # Errors
    /// `Core(ZeroItems)`, `Core(InvalidFalsePositiveRate)`, [`CuckooError::InvalidParameter`]
    /// (bucket size, target load), [`CuckooError::FingerprintTooShort`],
    /// `Core(TooLarge)`, `Core(AllocationFailed)`.
    pub fn build(self) -> Result<CuckooFilter<F, S>> {
        use bloomforge_core::Error as E;
        if self.expected_items == 0 {
            return Err(E::ZeroItems.into());
        }
        if let Some(p) = self.false_pos {
            if !(p > 0.0 && p < 1.0) {
                return Err(E::InvalidFalsePositiveRate(p).into());
            }
        }
        if let Some(b) = self.bucket_size {
            if ![2, 4, 8].contains(&b) {
                return Err(CuckooError::InvalidParameter {
                    name: "bucket_size",
                    value: f64::from(b),
                    reason: "slots per bucket must be 2, 4 or 8",
                });
            }
        }
        if let Some(load) = self.target_load {
            if !(load > 0.0 && load <= 1.0) {
                return Err(CuckooError::InvalidParameter {
                    name: "target_load",
                    value: load,
                    reason: "the load must lie in (0, 1]",
                });
            }
        }
        let load_of = |b| {
            self.target_load
                .unwrap_or_else(|| math::default_target_load(b))
        };
        let candidates: &[u32] = match self.bucket_size {
            Some(ref b) => core::slice::from_ref(b),
            None => &[4, 2],
        };
        let bucket_size = match self.false_pos {
            None => candidates[0],
            Some(p) => match candidates
                .iter()
                .copied()
                .find(|&b| math::fp_exact(b, F::BITS, load_of(b)) <= p)
            {
                Some(b) => b,
                None => {
                    let b = *candidates.last().unwrap_or(&4);
                    return Err(CuckooError::FingerprintTooShort {
                        requested: p,
                        bits: F::BITS,
                        best: math::fp_exact(b, F::BITS, load_of(b)),
                        bucket_size: b,
                    });
                }
            },
        };
        let load = load_of(bucket_size);
        let num_buckets = math::buckets_for(self.expected_items, bucket_size, load)
            .filter(|&m| m <= MAX_BUCKETS)
            .ok_or(E::TooLarge {
                requested: self.expected_items,
                max: (MAX_BUCKETS as f64 * f64::from(bucket_size) * load) as u64,
            })?;
        CuckooFilter::with_buckets(num_buckets, bucket_size, self.max_kicks, self.hasher)
    }
}

impl<F: Fingerprint, S> CuckooFilter<F, S> {
    /// An empty filter of `num_buckets` buckets (validated by the caller: at least 1, at most
    /// `MAX_BUCKETS`, `bucket_size` in {2, 4, 8}).
    pub(crate) fn with_buckets(
        num_buckets: u64,
        bucket_size: u32,
        max_kicks: u32,
        hasher: S,
    ) -> Result<Self> {
        let bucket_bytes = (bucket_size * F::BITS / 8) as usize;
        let bytes = usize::try_from(num_buckets)
            .ok()
            .and_then(|m| m.checked_mul(bucket_bytes))
            .and_then(|b| b.checked_add(PAD))
            .ok_or(bloomforge_core::Error::TooLarge {
                requested: num_buckets,
                max: (usize::MAX / bucket_bytes) as u64,
            })?;
        let table = bloomforge_core::memory::try_vec_filled(bytes, 0u8)
            .map_err(|_| bloomforge_core::Error::AllocationFailed { bytes })?;
        let backend = Backend::detect();
        Ok(Self {
            table,
            num_buckets,
            bucket_size,
            bucket_bytes,
            len: 0,
            max_kicks,
            stash_fp: 0,
            stash_bucket: 0,
            rng: (0x853c_49e6_748f_ea9b ^ num_buckets) | 1,
            hasher,
            backend,
            kernel: Kernel::for_backend(backend),
            _fp: PhantomData,
        })
    }
}
