//! Scalable Bloom filter rows: `bloomforge-stream`'s [`ScalableBloomFilter`] and the peer
//! crate `growable-bloom-filter`, registered in [`registry`](crate::subjects::registry).
//!
//! Both grow from an initial capacity of `n / 100` keys (at least 1) with growth factor
//! 2 and tightening ratio 0.85, so `n` keys take seven slices: the rows measure a filter
//! that had to grow, not one sized for `n`. A false-positive target `P` goes to both as
//! given (a bits-per-key budget, which a growing filter cannot take, runs both at 1 %).
//! The two read `P` differently: ours builds slice `i` for `P (1 - r) r^i`, so the
//! compound rate stays below `P`; `growable-bloom-filter` builds it for `P r^i`, whose sum
//! tends to `P / (1 - r)`, 6.7 `P`. Each row's theory is its own design: ours from each
//! slice's keys with core's blocked theory, the peer's `1 - Π (1 - P r^i)`.
//!
//! At the harness's small sizes our insert time is dominated by sizing each new slice:
//! core's layout-exact solver (`BlockedBloomFilter::with_false_pos`) takes about 1-3 ms
//! a slice on this machine (35 ms for the first, which fills its tables). A stack has
//! `log2(n / n0)` slices, so this vanishes per key at large `n`.

use crate::subjects::{Sizing, Subject, Target};
use crate::theory::{self, Prediction};
use crate::workload::BenchKey;
use crate::BenchError;
use bloomforge_core::math::ProbeModel;
use bloomforge_stream::ScalableBloomFilter;

/// Growth factor of both rows.
const GROWTH: usize = 2;
/// Tightening ratio of both rows.
const TIGHTENING: f64 = 0.85;

fn target(s: &Sizing) -> f64 {
    match s.target {
        Target::FalsePos(p) => p,
        Target::BitsPerKey(_) => 0.01,
    }
}

fn initial_capacity(s: &Sizing) -> u64 {
    (s.n / 100).max(1)
}

/// A bloomforge scalable filter and the inserts it refused (past its slice limit).
pub struct Scalable {
    filter: ScalableBloomFilter,
    failures: u64,
}

impl<K: BenchKey> Subject<K> for Scalable {
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
        self.filter.memory_bytes() * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        None
    }
    /// Slice `i` holds its capacity of the `n` keys in turn (the last the rest); the
    /// compound rate of core's blocked theory for each slice's bits, keys and `k`.
    fn predict(&self, n: u64) -> Prediction {
        let (mut left, mut pass, mut var) = (n, 1.0, 0.0);
        for (f, _, cap) in self.filter.slices_with_len() {
            let keys = left.min(cap);
            left -= keys;
            if keys == 0 {
                continue; // an empty slice answers no
            }
            let p = if f.num_blocks() == 1 {
                // One block: its load is the key count, not a binomial draw.
                let k = f.num_hashes();
                let fp =
                    theory::math::block_inner_fp(512, k, keys as usize, ProbeModel::Replace, 1);
                theory::fixed(fp[keys as usize])
            } else {
                theory::blocked512(f.num_bits(), keys, f.num_hashes())
            };
            pass *= 1.0 - p.fp;
            var += p.instance_sd * p.instance_sd;
        }
        Prediction {
            fp: 1.0 - pass,
            instance_sd: var.sqrt(),
        }
    }
    fn insert_batch(&mut self, keys: &[K]) -> bool {
        let n = keys.len();
        let mut done = 0;
        while done < n {
            match self.filter.insert_batch(&keys[done..]) {
                Ok(_) => break,
                Err(bloomforge_stream::StreamError::BatchStopped { index, .. }) => {
                    self.failures += 1;
                    done += index + 1;
                }
                Err(_) => return false,
            }
        }
        true
    }
    fn contains_batch(&self, keys: &[K], out: &mut [bool]) -> bool {
        self.filter.contains_batch(keys, out).is_ok()
    }
    fn realised_fp(&self) -> Option<f64> {
        Some(self.filter.false_pos_now())
    }
    fn insert_failures(&self) -> u64 {
        self.failures
    }
}

/// The `scalable` row.
///
/// # Errors
/// [`BenchError::Build`] if the parameters are refused.
pub fn build_scalable<K: BenchKey>(s: &Sizing, _: &[K]) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = ScalableBloomFilter::builder()
        .expected_items(initial_capacity(s))
        .false_pos(target(s))
        .growth_factor(GROWTH as f64)
        .tightening_ratio(TIGHTENING)
        .seed(s.seed)
        .build()
        .map_err(|e| BenchError::Build {
            filter: "scalable",
            reason: e.to_string(),
        })?;
    Ok(Box::new(Scalable {
        filter,
        failures: 0,
    }))
}

/// `growable-bloom-filter` 2.1 (xxh3 double hashing, partitioned slices, `k = ceil(log2
/// 1/p)` partitions of `ceil(capacity / ln 2)` bits each).
pub struct Growable {
    filter: growable_bloom_filter::GrowableBloom,
    initial: u64,
    false_pos: f64,
}

impl Growable {
    /// Slice `i`'s capacity and rate, for the slices present.
    fn slices(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let total = self.filter.capacity() as u64;
        let (mut sum, mut i) = (0u64, 0i32);
        std::iter::from_fn(move || {
            if sum >= total {
                return None;
            }
            let cap = self.initial * (GROWTH as u64).pow(i as u32);
            let p = self.false_pos * TIGHTENING.powi(i);
            sum += cap;
            i += 1;
            Some((cap, p))
        })
    }

    /// Bits its slices occupy, by the crate's sizing (it offers no accessor).
    pub fn bits(&self) -> u64 {
        self.slices()
            .map(|(cap, p)| {
                let k = (1.0 / p).log2().ceil() as u64;
                let slice = (cap as f64 / std::f64::consts::LN_2).ceil() as u64;
                (k * slice).div_ceil(8) * 8
            })
            .sum()
    }
}

impl<K: BenchKey> Subject<K> for Growable {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.filter.insert(k);
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.filter.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        self.bits()
    }
    fn num_hashes(&self) -> Option<u32> {
        None
    }
    fn predict(&self, _n: u64) -> Prediction {
        let pass: f64 = self.slices().map(|(_, p)| 1.0 - p).product();
        theory::fixed(1.0 - pass)
    }
}

/// The `growable-bloom-filter` row.
///
/// # Errors
/// Never; the signature is the registry's.
pub fn build_growable<K: BenchKey>(s: &Sizing, _: &[K]) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = growable_bloom_filter::GrowableBloomBuilder::new()
        .estimated_insertions(initial_capacity(s) as usize)
        .desired_error_ratio(target(s))
        .growth_factor(GROWTH)
        .tightening_ratio(TIGHTENING)
        .build();
    Ok(Box::new(Growable {
        filter,
        initial: initial_capacity(s),
        false_pos: target(s),
    }))
}
