//! Rows of `bloomforge-core`, `bloomforge-counting` and `bloomforge-dleft`, and the peer
//! crates measured beside them (fastbloom, bloomfilter, sbbf-rs-safe, parquet, xorf's
//! binary fuse filter, `HashSet`), registered in [`registry`](crate::registry::registry).

use crate::subjects::{boxed_builders, build_err, filter_subject, Sizing, Subject, Target};
use crate::theory::{self, Prediction};
use crate::workload::BenchKey;
use crate::BenchError;
use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter,
    BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter,
};
use bloomforge_counting::{AtomicCountingBloomFilter, CounterLayout, CountingBloomFilter};
use bloomforge_dleft::DLeftCountingBloomFilter;
use std::collections::HashSet;

// ---------------------------------------------------------------------------------------
// bloomforge-core
// ---------------------------------------------------------------------------------------

filter_subject!(BlockedBloomFilter, bits: |f| f.num_bits(),
    predict: |f, n| theory::blocked512(f.num_bits(), n, f.num_hashes()), batch, par, fp);
filter_subject!(AtomicBlockedBloomFilter, bits: |f| f.num_bits(),
    predict: |f, n| theory::blocked512(f.num_bits(), n, f.num_hashes()), batch, par, fp);
filter_subject!(SplitBlockBloomFilter, bits: |f| f.num_bits(),
    predict: |f, n| theory::split_block(f.num_bits(), n), batch, par, fp);
filter_subject!(AtomicSplitBlockBloomFilter, bits: |f| f.num_bits(),
    predict: |f, n| theory::split_block(f.num_bits(), n), batch, par, fp);

fn blocked_plain(s: &Sizing) -> Result<BlockedBloomFilter, BenchError> {
    match s.target {
        Target::BitsPerKey(c) => {
            let m = s.bits(c);
            let k = theory::blocked512_best_k(m as f64 / s.n as f64);
            BlockedBloomFilter::with_num_bits(m).seed(s.seed).hashes(k)
        }
        Target::FalsePos(p) => BlockedBloomFilter::with_false_pos(p)
            .seed(s.seed)
            .expected_items(s.n),
    }
    .map_err(|e| build_err("blocked", e))
}

fn split_plain(s: &Sizing) -> Result<SplitBlockBloomFilter, BenchError> {
    match s.target {
        Target::BitsPerKey(c) => SplitBlockBloomFilter::with_num_bits(s.bits(c))
            .seed(s.seed)
            .hashes(8),
        Target::FalsePos(p) => SplitBlockBloomFilter::with_false_pos(p)
            .seed(s.seed)
            .expected_items(s.n),
    }
    .map_err(|e| build_err("split-block", e))
}

fn standard_plain(s: &Sizing) -> Result<StandardBloomFilter, BenchError> {
    match s.target {
        Target::BitsPerKey(c) => {
            let m = s.bits(c);
            let k = theory::standard_best_k(m as f64 / s.n as f64);
            StandardBloomFilter::with_num_bits(m).seed(s.seed).hashes(k)
        }
        Target::FalsePos(p) => StandardBloomFilter::with_false_pos(p)
            .seed(s.seed)
            .expected_items(s.n),
    }
    .map_err(|e| build_err("standard", e))
}

boxed_builders! {
    build_blocked(|s| blocked_plain(s)?);
    build_blocked_atomic(|s| AtomicBlockedBloomFilter::from(blocked_plain(s)?));
    build_split(|s| split_plain(s)?);
    build_split_atomic(|s| AtomicSplitBlockBloomFilter::from(split_plain(s)?));
    build_standard(|s| standard_plain(s)?);
    build_standard_atomic(|s| AtomicStandardBloomFilter::from(standard_plain(s)?));
    build_counting(|s| counting_plain(s)?);
    build_counting_atomic(|s| AtomicCountingBloomFilter::from(counting_plain(s)?));
}

filter_subject!(StandardBloomFilter, bits: |f| f.num_bits(),
    predict: |f, n| theory::standard(f.num_bits(), n, f.num_hashes()), batch, fp);
filter_subject!(AtomicStandardBloomFilter, bits: |f| f.num_bits(),
    predict: |f, n| theory::standard(f.num_bits(), n, f.num_hashes()), par);

// ---------------------------------------------------------------------------------------
// bloomforge-counting and bloomforge-dleft
// ---------------------------------------------------------------------------------------

/// Counters per 64-byte line of the blocked counting layout.
const COUNTING_LINE: usize = 128;

fn counting_predict(layout: CounterLayout, m: u64, n: u64, k: u32) -> Prediction {
    match layout {
        CounterLayout::Blocked => theory::blocked(m, n, COUNTING_LINE, k),
        _ => theory::standard(m, n, k),
    }
}

filter_subject!(CountingBloomFilter, bits: |f| f.memory_bits(),
    predict: |f, n| counting_predict(f.layout(), f.num_counters(), n, f.num_hashes()),
    batch, fp);
filter_subject!(AtomicCountingBloomFilter, bits: |f| f.memory_bits(),
    predict: |f, n| counting_predict(f.layout(), f.num_counters(), n, f.num_hashes()),
    batch, fp, par);

fn counting_plain(s: &Sizing) -> Result<CountingBloomFilter, BenchError> {
    match s.target {
        Target::BitsPerKey(c) => {
            // The same memory: 4 bits per counter.
            let m = s.bits(c) / 4;
            let per_key = m as f64 / s.n as f64;
            let k = crate::math::best_k(
                |k| bloomforge_counting::math::blocked_fp(per_key, k),
                bloomforge_counting::math::SIZING_MAX_K,
            )
            .0;
            CountingBloomFilter::with_num_counters(m)
                .seed(s.seed)
                .hashes(k)
        }
        Target::FalsePos(p) => CountingBloomFilter::with_false_pos(p)
            .seed(s.seed)
            .expected_items(s.n),
    }
    .map_err(|e| build_err("counting", e))
}

/// A d-left counting filter and the number of inserts it refused (all candidate buckets
/// full).
pub struct DLeft {
    filter: DLeftCountingBloomFilter,
    failures: u64,
}

impl<K: BenchKey> Subject<K> for DLeft {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            if self.filter.insert(k).is_err() {
                self.failures += 1;
            }
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.filter.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        self.filter.memory_bits()
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(self.filter.subtables())
    }
    fn predict(&self, n: u64) -> Prediction {
        theory::fixed(bloomforge_dleft::theory::dlcbf_fp(
            n,
            self.filter.buckets_per_subtable(),
            self.filter.remainder_bits(),
        ))
    }
    fn insert_batch(&mut self, keys: &[K]) -> bool {
        // All or nothing: a batch with a key whose buckets are all full is rolled back,
        // then inserted key by key so the refused keys are counted as in `insert_all`.
        if self.filter.insert_batch(keys).is_err() {
            <Self as Subject<K>>::insert_all(self, keys);
        }
        true
    }
    fn contains_batch(&self, keys: &[K], out: &mut [bool]) -> bool {
        self.filter.contains_batch(keys, out).is_ok()
    }
    fn realised_fp(&self) -> Option<f64> {
        Some(self.filter.realized_false_pos())
    }
    fn insert_failures(&self) -> u64 {
        self.failures
    }
}

/// Default d-left shape: subtables, cells per bucket, counter bits, average load.
pub const DLEFT_SHAPE: (u32, u32, u32, f64) = (4, 8, 2, 6.0);

/// The d-left filter for a sizing: the crate's own sizing for a target FP; for a bits
/// budget, buckets for load 6 and the widest remainder that fits the budget
/// (`w (r + c) / L` bits per key).
///
/// # Errors
/// [`BenchError::Build`] if the crate rejects the shape.
pub fn dleft_for(s: &Sizing) -> Result<DLeftCountingBloomFilter, BenchError> {
    let (d, w, c, load) = DLEFT_SHAPE;
    match s.target {
        Target::BitsPerKey(bits) => {
            let buckets = (s.n as f64 / (f64::from(d) * load)).ceil().max(1.0) as u64;
            let r = ((bits * load / f64::from(w)).floor() as u32)
                .saturating_sub(c)
                .clamp(1, bloomforge_dleft::MAX_CELL_BITS - c);
            DLeftCountingBloomFilter::builder()
                .subtables(d)
                .buckets_per_subtable(buckets)
                .cells_per_bucket(w)
                .remainder_bits(r)
                .counter_bits(c)
                .seed(s.seed)
                .build()
        }
        Target::FalsePos(p) => DLeftCountingBloomFilter::with_false_pos(p)
            .seed(s.seed)
            .expected_items(s.n),
    }
    .map_err(|e| build_err("d-left", e))
}

pub(crate) fn build_dleft<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    Ok(Box::new(DLeft {
        filter: dleft_for(s)?,
        failures: 0,
    }))
}

// ---------------------------------------------------------------------------------------
// Peers
// ---------------------------------------------------------------------------------------

filter_subject!(fastbloom::BloomFilter, bits: |f| f.num_bits() as u64,
    predict: |f, n| theory::standard(f.num_bits() as u64, n, f.num_hashes()));
filter_subject!(fastbloom::AtomicBloomFilter, bits: |f| f.num_bits() as u64,
    predict: |f, n| theory::standard(f.num_bits() as u64, n, f.num_hashes());
    fn par_insert(&mut self, keys: &[K]) -> bool {
        use rayon::prelude::*;
        let this = &*self;
        keys.par_iter().for_each(|k| {
            this.insert(k);
        });
        true
    }
);

/// fastbloom's plain and atomic filters have the same builder.
macro_rules! fastbloom_builder {
    ($name:ident, $Ty:ty) => {
        pub(crate) fn $name<K: BenchKey>(
            s: &Sizing,
            _: &[K],
        ) -> Result<Box<dyn Subject<K>>, BenchError> {
            let seed = u128::from(s.seed);
            Ok(Box::new(match s.target {
                Target::BitsPerKey(c) => {
                    let m = s.bits(c);
                    <$Ty>::with_num_bits(m as usize)
                        .seed(&seed)
                        .hashes(theory::standard_best_k(m as f64 / s.n as f64))
                }
                Target::FalsePos(p) => <$Ty>::with_false_pos(p)
                    .seed(&seed)
                    .expected_items(s.n as usize),
            }))
        }
    };
}
fastbloom_builder!(build_fastbloom, fastbloom::BloomFilter);
fastbloom_builder!(build_fastbloom_atomic, fastbloom::AtomicBloomFilter);

impl<K: BenchKey> Subject<K> for bloomfilter::Bloom<K> {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.set(k);
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.check(key)
    }
    fn memory_bits(&self) -> u64 {
        self.len()
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(self.number_of_hash_functions())
    }
    fn predict(&self, n: u64) -> Prediction {
        theory::standard(self.len(), n, self.number_of_hash_functions())
    }
}

pub(crate) fn build_bloomfilter<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let mut seed = [0u8; 32];
    for (i, chunk) in seed.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&crate::rng::indexed_key(s.seed, i as u64).to_le_bytes());
    }
    let n = s.n.max(1) as usize;
    let bloom = match s.target {
        Target::BitsPerKey(c) => {
            bloomfilter::Bloom::<K>::new_with_seed(s.bits(c).div_ceil(8) as usize, n, &seed)
        }
        Target::FalsePos(p) => bloomfilter::Bloom::<K>::new_for_fp_rate_with_seed(n, p, &seed),
    }
    .map_err(|e| build_err("bloomfilter", e))?;
    Ok(Box::new(bloom))
}

/// sbbf-rs-safe's filter fed XXH64-seed-0 hashes of the keys' plain encoding.
pub struct SbbfRs(sbbf_rs_safe::Filter);

#[inline(always)]
fn xxh64<K: BenchKey>(key: &K) -> u64 {
    key.with_bytes(|b| xxhash_rust::xxh64::xxh64(b, 0))
}

impl<K: BenchKey> Subject<K> for SbbfRs {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.0.insert_hash(xxh64(k));
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains_hash(xxh64(key))
    }
    fn memory_bits(&self) -> u64 {
        self.0.as_bytes().len() as u64 * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(8)
    }
    fn predict(&self, n: u64) -> Prediction {
        theory::split_block(self.0.as_bytes().len() as u64 * 8, n)
    }
}

/// Bits the Parquet specification's sizing formula gives for `n` keys at FP `p`:
/// `-8 n / ln(1 - p^(1/8))` (what sbbf-rs-safe's docs and parquet use).
pub fn parquet_formula_bits(n: u64, p: f64) -> u64 {
    (-8.0 * n as f64 / (1.0 - p.powf(1.0 / 8.0)).ln()) as u64
}

pub(crate) fn build_sbbf_rs<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let bits = match s.target {
        Target::BitsPerKey(c) => s.bits(c),
        Target::FalsePos(p) => parquet_formula_bits(s.n, p),
    };
    // `new(bits_per_key, num_keys)` allocates bits_per_key * num_keys / 8 bytes.
    Ok(Box::new(SbbfRs(sbbf_rs_safe::Filter::new(
        1,
        bits as usize,
    ))))
}

impl<K: BenchKey> Subject<K> for parquet::bloom_filter::Sbbf {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            k.with_bytes(|b| self.insert(b));
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        key.with_bytes(|b| self.check(b))
    }
    fn memory_bits(&self) -> u64 {
        self.num_blocks() as u64 * 256
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(8)
    }
    fn predict(&self, n: u64) -> Prediction {
        theory::split_block(self.num_blocks() as u64 * 256, n)
    }
}

pub(crate) fn build_parquet<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    Ok(Box::new(match s.target {
        Target::BitsPerKey(c) => {
            parquet::bloom_filter::Sbbf::new_with_num_of_bytes(s.bits(c).div_ceil(8) as usize)
        }
        Target::FalsePos(p) => parquet::bloom_filter::Sbbf::new_with_ndv_fpp(s.n, p)
            .map_err(|e| build_err("parquet-sbbf", e))?,
    }))
}

/// xorf's binary fuse filter over `BenchKey::fuse_key`.
pub struct Fuse8(xorf::BinaryFuse8);

impl<K: BenchKey> Subject<K> for Fuse8 {
    fn insert_all(&mut self, _keys: &[K]) {}
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        xorf::Filter::contains(&self.0, &key.fuse_key())
    }
    fn memory_bits(&self) -> u64 {
        self.0.fingerprints.len() as u64 * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(3)
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(1.0 / 256.0)
    }
}

pub(crate) fn build_xorf<K: BenchKey>(
    _: &Sizing,
    keys: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = xorf::BinaryFuse8::try_from_iterator(keys.iter().map(BenchKey::fuse_key))
        .map_err(|e| build_err("xorf-bfuse8", e))?;
    Ok(Box::new(Fuse8(filter)))
}

/// std's `HashSet` (SipHash-1-3): the exact reference.
pub struct ExactSet<K>(HashSet<K>);

impl<K: BenchKey> Subject<K> for ExactSet<K> {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.0.insert(k.clone());
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        let table = self.0.capacity() * (std::mem::size_of::<K>() + 1);
        let heap: usize = self.0.iter().map(BenchKey::heap_bytes).sum();
        (table + heap) as u64 * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        None
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(0.0)
    }
}

pub(crate) fn build_hashset<K: BenchKey>(
    _: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    Ok(Box::new(ExactSet(HashSet::<K>::new())))
}
