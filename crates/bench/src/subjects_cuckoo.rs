//! Cuckoo filter rows: `bloomforge-cuckoo`'s [`CuckooFilter`] and the peer crates
//! `cuckoofilter` and `scalable_cuckoo_filter`, registered in
//! [`registry`](crate::registry::registry).
//!
//! Sizing. Ours: a target FP goes to `CuckooFilter::new` (12-bit fingerprints, 4-slot
//! buckets, or 2-slot where 12 bits need them), falling back to 16-bit fingerprints below
//! what 12 bits reach; a bits-per-key budget picks the widest fingerprint (8, 12, 16) that
//! fits at 94 % load and sizes the table to the budget (or, under 8.5 bits/key, to the
//! smallest table that holds the keys: a cuckoo filter has no smaller form). `cuckoofilter` has fixed 8-bit
//! fingerprints (about 3 % FP) and a power-of-two table: it is sized for the keys at 95 %
//! load, rounded up by the crate (so 1M keys get 2^21 slots). `scalable_cuckoo_filter`
//! takes the target FP (or 1 % for a bits budget) and grows from the key count.
//!
//! `scalable_cuckoo_filter` reports only its configured rate, an upper bound over its
//! growing stack of sub-filters; the row's "theory" is that bound, so a measured rate well
//! below it is flagged as outside the theory interval (the filter is not wrong).
//!
//! `cuckoofilter`'s `add` drops a random other key when it reports `NotEnoughSpace` (its
//! documented behaviour); the row counts such failures as insert failures.

use crate::subjects::{Sizing, Subject, Target};
use crate::theory::{self, Prediction};
use crate::workload::BenchKey;
use crate::BenchError;
use bloomforge_cuckoo::{math, CuckooError, CuckooFilter, Fingerprint, Fp12, Fp16, Fp8};

fn build_err(filter: &'static str, e: impl std::fmt::Display) -> BenchError {
    BenchError::Build {
        filter,
        reason: e.to_string(),
    }
}

/// A bloomforge cuckoo filter and the inserts it refused.
pub struct Cuckoo<F: Fingerprint> {
    filter: CuckooFilter<F>,
    failures: u64,
}

impl<F: Fingerprint, K: BenchKey> Subject<K> for Cuckoo<F> {
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
        Some(2)
    }
    fn predict(&self, n: u64) -> Prediction {
        let load = n as f64 / self.filter.capacity() as f64;
        theory::fixed(math::fp_exact(
            self.filter.bucket_size(),
            F::BITS,
            load.min(1.0),
        ))
    }
    fn insert_batch(&mut self, keys: &[K]) -> bool {
        // All or nothing: a batch that overflows is rolled back, then inserted key by key
        // so the refused keys are counted as in `insert_all`.
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

fn boxed<F: Fingerprint, K: BenchKey>(
    filter: Result<CuckooFilter<F>, CuckooError>,
) -> Result<Box<dyn Subject<K>>, BenchError> {
    Ok(Box::new(Cuckoo {
        filter: filter.map_err(|e| build_err("cuckoo", e))?,
        failures: 0,
    }))
}

/// The `cuckoo` row's filter for a sizing (see the module docs).
///
/// # Errors
/// [`BenchError::Build`] if the crate rejects the sizing.
pub fn build_cuckoo<K: BenchKey>(s: &Sizing, _: &[K]) -> Result<Box<dyn Subject<K>>, BenchError> {
    match s.target {
        Target::FalsePos(p) => {
            let twelve = CuckooFilter::builder()
                .expected_items(s.n)
                .false_pos(p)
                .seed(s.seed)
                .build();
            match twelve {
                Err(CuckooError::FingerprintTooShort { .. }) => boxed::<Fp16, K>(
                    CuckooFilter::builder()
                        .expected_items(s.n)
                        .false_pos(p)
                        .seed(s.seed)
                        .fingerprint::<Fp16>()
                        .build(),
                ),
                other => boxed::<Fp12, K>(other),
            }
        }
        Target::BitsPerKey(c) => {
            let load = math::default_target_load(4);
            let f = [16u32, 12, 8]
                .into_iter()
                .find(|&f| f64::from(f) <= c * load)
                .unwrap_or(8);
            // The budget's bits over `f` bits a slot, filled to `load`; a budget too small
            // to hold the keys at all (under 8.5 bits/key) gets the smallest table that
            // does (its bits/key, reported as measured, then exceed the budget).
            let items = (((s.bits(c) / u64::from(f)) as f64 * load) as u64)
                .max(s.n)
                .max(1);
            macro_rules! build {
                ($F:ty) => {
                    boxed::<$F, K>(
                        CuckooFilter::builder()
                            .expected_items(items)
                            .bucket_size(4)
                            .seed(s.seed)
                            .fingerprint::<$F>()
                            .build(),
                    )
                };
            }
            match f {
                16 => build!(Fp16),
                12 => build!(Fp12),
                _ => build!(Fp8),
            }
        }
    }
}

/// `cuckoofilter` 0.5 with its default (SipHash-1-3) hasher.
pub struct PeerCuckoo {
    filter: cuckoofilter::CuckooFilter<std::collections::hash_map::DefaultHasher>,
    failures: u64,
}

impl<K: BenchKey> Subject<K> for PeerCuckoo {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            if self.filter.add(k).is_err() {
                self.failures += 1;
            }
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.filter.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        self.filter.memory_usage() as u64 * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(2)
    }
    fn predict(&self, n: u64) -> Prediction {
        let slots = (self.filter.memory_usage() as u64).max(1);
        theory::fixed(math::fp_exact(4, 8, (n as f64 / slots as f64).min(1.0)))
    }
    fn insert_failures(&self) -> u64 {
        self.failures
    }
}

/// The `cuckoofilter` row (fixed 8-bit fingerprints: the target FP cannot be chosen).
///
/// # Errors
/// Never; the signature is the registry's.
pub fn build_cuckoofilter<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let cap = match s.target {
        Target::FalsePos(_) => (s.n as f64 / 0.95).ceil() as usize,
        // A byte per slot: the budget's bytes are its slots (rounded by the crate), at
        // least enough for the keys at 95 % load.
        Target::BitsPerKey(c) => {
            ((s.bits(c) / 8) as usize).max((s.n as f64 / 0.95).ceil() as usize)
        }
    };
    Ok(Box::new(PeerCuckoo {
        filter: cuckoofilter::CuckooFilter::with_capacity(cap),
        failures: 0,
    }))
}

/// `scalable_cuckoo_filter` 0.3 (SipHash-1-3; a seeded `StdRng`, since its default
/// `ThreadRng` is not `Send`).
pub struct ScalableCuckoo<K: BenchKey>(
    scalable_cuckoo_filter::ScalableCuckooFilter<
        K,
        scalable_cuckoo_filter::DefaultHasher,
        rand::rngs::StdRng,
    >,
);

impl<K: BenchKey> Subject<K> for ScalableCuckoo<K> {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.0.insert(k);
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        self.0.bits()
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(2)
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(self.0.false_positive_probability())
    }
}

/// The `scalable-cuckoo` row.
///
/// # Errors
/// Never; the signature is the registry's.
pub fn build_scalable_cuckoo<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    use rand::SeedableRng;
    let p = match s.target {
        Target::FalsePos(p) => p,
        Target::BitsPerKey(_) => 0.01,
    };
    let filter = scalable_cuckoo_filter::ScalableCuckooFilterBuilder::new()
        .initial_capacity(s.n as usize)
        .false_positive_probability(p)
        .rng(rand::rngs::StdRng::seed_from_u64(s.seed))
        .finish::<K>();
    Ok(Box::new(ScalableCuckoo(filter)))
}
