//! insert / contains / batch (and remove, for the deleting filters) for every filter at
//! an in-cache (1M keys) and an out-of-cache size (16M keys; `BLOOMFORGE_BENCH_BIG` to
//! change), ~10 bits per key, with sbbf-rs-safe and fastbloom in the same groups for
//! ratios.
//!
//! Every benchmark asserts its answers: members all found, non-member positives equal to
//! the count measured before timing.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use bloomforge_benches::{keys, label, sizes, xxh64};
use bloomforge_core::{BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter};
use bloomforge_counting::CountingBloomFilter;
use bloomforge_dleft::DLeftCountingBloomFilter;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

const BITS_PER_KEY: u64 = 10;
/// Non-member queries per benchmark (capped at the key count).
const QUERIES: usize = 1 << 20;

/// One filter under benchmark: how to insert, query one key, query a batch.
trait Bench: Clone {
    fn insert_all(&mut self, keys: &[u64]);
    fn contains(&self, key: u64) -> bool;
    /// `None` when the filter has no batch query.
    fn contains_batch(&self, _keys: &[u64], _out: &mut [bool]) -> Option<()> {
        None
    }
}

macro_rules! core_bench {
    ($Ty:ty) => {
        impl Bench for $Ty {
            fn insert_all(&mut self, keys: &[u64]) {
                for k in keys {
                    self.insert(k);
                }
            }
            #[inline]
            fn contains(&self, key: u64) -> bool {
                <$Ty>::contains(self, &key)
            }
            fn contains_batch(&self, keys: &[u64], out: &mut [bool]) -> Option<()> {
                <$Ty>::contains_batch(self, keys, out).ok()
            }
        }
    };
}

core_bench!(BlockedBloomFilter);
core_bench!(SplitBlockBloomFilter);
core_bench!(StandardBloomFilter);

impl Bench for CountingBloomFilter {
    fn insert_all(&mut self, keys: &[u64]) {
        for k in keys {
            self.insert(k);
        }
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        CountingBloomFilter::contains(self, &key)
    }
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) -> Option<()> {
        CountingBloomFilter::contains_batch(self, keys, out).ok()
    }
}

impl Bench for DLeftCountingBloomFilter {
    fn insert_all(&mut self, keys: &[u64]) {
        for k in keys {
            // A refused insert shows up as a missing member in the checks.
            let _ = self.insert(k);
        }
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        DLeftCountingBloomFilter::contains(self, &key)
    }
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) -> Option<()> {
        DLeftCountingBloomFilter::contains_batch(self, keys, out).ok()
    }
}

/// sbbf-rs-safe fed XXH64 (what Parquet uses).
#[derive(Clone)]
struct Sbbf(sbbf_rs_safe::Filter);

impl Bench for Sbbf {
    fn insert_all(&mut self, keys: &[u64]) {
        for &k in keys {
            self.0.insert_hash(xxh64(k));
        }
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(xxh64(key))
    }
}

impl Bench for fastbloom::BloomFilter {
    fn insert_all(&mut self, keys: &[u64]) {
        for k in keys {
            self.insert(k);
        }
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        fastbloom::BloomFilter::contains(self, &key)
    }
}

fn count(f: &impl Bench, keys: &[u64]) -> usize {
    keys.iter().filter(|&&k| f.contains(k)).count()
}

/// Benchmarks one filter: insert into a copy of `empty`, then single and batch queries.
fn bench_filter<F: Bench>(
    c: &mut Criterion,
    name: &str,
    empty: &F,
    members: &[u64],
    others: &[u64],
) {
    let n = members.len();
    let size = label(n);
    let mut full = empty.clone();
    full.insert_all(members);
    // The answers every timed run must reproduce.
    assert_eq!(count(&full, members), n, "{name}: false negatives");
    let fps = count(&full, others);
    let slow = n > 2_000_000;
    let configure = |g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
                     elems: usize| {
        g.throughput(Throughput::Elements(elems as u64));
        if slow {
            g.sample_size(10).measurement_time(Duration::from_secs(8));
        }
    };

    let mut g = c.benchmark_group(format!("insert/{size}"));
    configure(&mut g, n);
    g.bench_function(name, |b| {
        b.iter_batched_ref(
            || empty.clone(),
            |f| {
                f.insert_all(black_box(members));
                assert!(f.contains(members[0]));
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();

    let mut g = c.benchmark_group(format!("contains-positive/{size}"));
    configure(&mut g, n);
    g.bench_function(name, |b| {
        b.iter(|| assert_eq!(count(&full, black_box(members)), n));
    });
    g.finish();

    let mut g = c.benchmark_group(format!("contains-negative/{size}"));
    configure(&mut g, others.len());
    g.bench_function(name, |b| {
        b.iter(|| assert_eq!(count(&full, black_box(others)), fps));
    });
    g.finish();

    let mut out = vec![false; others.len()];
    if full.contains_batch(others, &mut out).is_some() {
        assert_eq!(
            out.iter().filter(|&&x| x).count(),
            fps,
            "{name}: batch != single"
        );
        let mut g = c.benchmark_group(format!("contains-batch-negative/{size}"));
        configure(&mut g, others.len());
        g.bench_function(name, |b| {
            b.iter(|| {
                full.contains_batch(black_box(others), &mut out);
                assert_eq!(out.iter().filter(|&&x| x).count(), fps);
            });
        });
        g.finish();
        let mut out = vec![false; n];
        let mut g = c.benchmark_group(format!("contains-batch-positive/{size}"));
        configure(&mut g, n);
        g.bench_function(name, |b| {
            b.iter(|| {
                full.contains_batch(black_box(members), &mut out);
                assert!(out.iter().all(|&x| x));
            });
        });
        g.finish();
    }
}

/// Batch inserts (ours only).
fn bench_insert_batch(c: &mut Criterion, members: &[u64]) {
    let n = members.len();
    let bits = n as u64 * BITS_PER_KEY;
    let mut g = c.benchmark_group(format!("insert-batch/{}", label(n)));
    g.throughput(Throughput::Elements(n as u64));
    if n > 2_000_000 {
        g.sample_size(10).measurement_time(Duration::from_secs(8));
    }
    macro_rules! one {
        ($name:expr, $empty:expr) => {{
            let empty = $empty;
            g.bench_function($name, |b| {
                b.iter_batched_ref(
                    || empty.clone(),
                    |f| {
                        f.insert_batch(black_box(members));
                        assert!(f.contains(&members[n - 1]));
                    },
                    BatchSize::LargeInput,
                );
            });
        }};
    }
    one!(
        "blocked",
        BlockedBloomFilter::with_num_bits(bits).hashes(6).unwrap()
    );
    one!(
        "split-block",
        SplitBlockBloomFilter::with_num_bits(bits)
            .hashes(8)
            .unwrap()
    );
    one!(
        "standard",
        StandardBloomFilter::with_num_bits(bits).hashes(7).unwrap()
    );
    one!(
        "counting",
        CountingBloomFilter::with_false_pos(0.01)
            .expected_items(n as u64)
            .unwrap()
    );
    g.finish();
}

/// Removes of every member from a full filter (the deleting filters): each remove must
/// succeed and the filter must end empty.
fn bench_remove(c: &mut Criterion, members: &[u64]) {
    let n = members.len();
    let mut g = c.benchmark_group(format!("remove/{}", label(n)));
    g.throughput(Throughput::Elements(n as u64));
    if n > 2_000_000 {
        g.sample_size(10).measurement_time(Duration::from_secs(8));
    }
    let mut counting = CountingBloomFilter::with_false_pos(0.01)
        .expected_items(n as u64)
        .unwrap();
    counting.insert_batch(members);
    g.bench_function("counting", |b| {
        b.iter_batched_ref(
            || counting.clone(),
            |f| {
                for k in members {
                    f.remove(black_box(k)).expect("every member is present");
                }
                assert!(f.is_empty());
            },
            BatchSize::LargeInput,
        );
    });
    let mut dleft = DLeftCountingBloomFilter::with_false_pos(0.01)
        .expected_items(n as u64)
        .unwrap();
    for k in members {
        dleft.insert(k).expect("sized for n keys");
    }
    g.bench_function("d-left", |b| {
        b.iter_batched_ref(
            || dleft.clone(),
            |f| {
                for k in members {
                    f.remove(black_box(k)).expect("every member is present");
                }
                assert!(f.is_empty());
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

fn filters(c: &mut Criterion) {
    for n in sizes() {
        let (members, others) = keys(n, QUERIES.min(n));
        let bits = n as u64 * BITS_PER_KEY;
        bench_filter(
            c,
            "blocked",
            &BlockedBloomFilter::with_num_bits(bits).hashes(6).unwrap(),
            &members,
            &others,
        );
        bench_filter(
            c,
            "split-block",
            &SplitBlockBloomFilter::with_num_bits(bits)
                .hashes(8)
                .unwrap(),
            &members,
            &others,
        );
        bench_filter(
            c,
            "standard",
            &StandardBloomFilter::with_num_bits(bits).hashes(7).unwrap(),
            &members,
            &others,
        );
        bench_filter(
            c,
            "counting",
            &CountingBloomFilter::with_false_pos(0.01)
                .expected_items(n as u64)
                .unwrap(),
            &members,
            &others,
        );
        bench_filter(
            c,
            "d-left",
            &DLeftCountingBloomFilter::with_false_pos(0.01)
                .expected_items(n as u64)
                .unwrap(),
            &members,
            &others,
        );
        bench_filter(
            c,
            "sbbf-rs-safe",
            &Sbbf(sbbf_rs_safe::Filter::new(BITS_PER_KEY as usize, n)),
            &members,
            &others,
        );
        bench_filter(
            c,
            "fastbloom",
            &fastbloom::BloomFilter::with_num_bits(bits as usize)
                .seed(&1)
                .hashes(7),
            &members,
            &others,
        );
        bench_insert_batch(c, &members);
        bench_remove(c, &members);
    }
}

criterion_group!(benches, filters);
criterion_main!(benches);
