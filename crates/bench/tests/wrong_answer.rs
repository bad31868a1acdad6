//! A filter that answers wrongly must make the run fail, not post a number. The broken
//! filter is added with the same few lines any new filter takes.

use bloomforge_bench::measure::{measure_entry, Ctx};
use bloomforge_bench::subjects::{Sizing, Subject, Target};
use bloomforge_bench::theory::{self, Prediction};
use bloomforge_bench::workload::{random_u64, BenchKey};
use bloomforge_bench::{entry, BenchError};
use std::collections::HashSet;

/// Forgets every 1000th key it is given: false negatives.
struct Forgetful<K>(HashSet<K>, usize);

impl<K: BenchKey> Subject<K> for Forgetful<K> {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.1 += 1;
            if self.1 == 1000 {
                self.1 = 0;
            } else {
                self.0.insert(k.clone());
            }
        }
    }
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        64 * self.0.len() as u64
    }
    fn num_hashes(&self) -> Option<u32> {
        None
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(0.0)
    }
}

fn build_forgetful<K: BenchKey>(_: &Sizing, _: &[K]) -> Result<Box<dyn Subject<K>>, BenchError> {
    Ok(Box::new(Forgetful(HashSet::new(), 0)))
}

/// Right on single queries, wrong on batch queries.
struct BadBatch(bloomforge_core::BlockedBloomFilter);

impl<K: BenchKey> Subject<K> for BadBatch {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.0.insert(k);
        }
    }
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        self.0.num_bits()
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(self.0.num_hashes())
    }
    fn predict(&self, n: u64) -> Prediction {
        theory::blocked512(self.0.num_bits(), n, self.0.num_hashes())
    }
    fn contains_batch(&self, keys: &[K], out: &mut [bool]) -> bool {
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.0.contains(k);
        }
        if let Some(o) = out.last_mut() {
            *o = !*o;
        }
        true
    }
}

fn build_bad_batch<K: BenchKey>(s: &Sizing, _: &[K]) -> Result<Box<dyn Subject<K>>, BenchError> {
    let f = bloomforge_core::BlockedBloomFilter::with_num_bits(s.n * 10)
        .hashes(7)
        .map_err(|e| BenchError::Config(e.to_string()))?;
    Ok(Box::new(BadBatch(f)))
}

fn ctx() -> Ctx {
    Ctx {
        warmup: 0,
        reps: 1,
        pools: Vec::new(),
    }
}

#[test]
fn false_negatives_fail_the_run() {
    let e = entry!("forgetful", Exact, Reference, static = false, "test", build_forgetful);
    let w = random_u64(5000, 5000, 3);
    let s = Sizing {
        n: 5000,
        target: Target::BitsPerKey(10.0),
        seed: 3,
    };
    let err = measure_entry(&ctx(), &e, &w, &s).unwrap_err();
    assert!(
        matches!(&err, BenchError::WrongAnswer { what, .. } if what.contains("false negatives")),
        "{err}"
    );
}

#[test]
fn batch_disagreeing_with_single_fails_the_run() {
    let e = entry!("bad-batch", Blocked512, Ours, static = false, "test", build_bad_batch);
    let w = random_u64(5000, 5000, 3);
    let s = Sizing {
        n: 5000,
        target: Target::BitsPerKey(10.0),
        seed: 3,
    };
    let err = measure_entry(&ctx(), &e, &w, &s).unwrap_err();
    assert!(matches!(err, BenchError::WrongAnswer { .. }), "{err}");
}
