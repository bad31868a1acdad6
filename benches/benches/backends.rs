//! The blocked and split-block probes on every SIMD backend this CPU has
//! (`Backend::available()`, selected with `set_backend`), single-key and batch, in cache
//! (1M keys) and out of cache (`BLOOMFORGE_BENCH_BIG`, default 16M).

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use bloomforge_benches::{keys, label, sizes};
use bloomforge_core::{Backend, BlockedBloomFilter, SplitBlockBloomFilter};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

macro_rules! per_backend {
    ($c:expr, $name:expr, $filter:expr, $members:expr, $others:expr) => {{
        let (members, others): (&[u64], &[u64]) = ($members, $others);
        let mut f = $filter;
        f.insert_batch(members);
        let fps = others.iter().filter(|k| f.contains(*k)).count();
        let n = members.len();
        let mut g = $c.benchmark_group(format!("backend-{}/{}", $name, label(n)));
        g.throughput(Throughput::Elements(others.len() as u64));
        if n > 2_000_000 {
            g.sample_size(10).measurement_time(Duration::from_secs(5));
        }
        let mut out = vec![false; others.len()];
        for backend in Backend::available() {
            f.set_backend(backend).unwrap();
            assert!(
                members.iter().all(|k| f.contains(k)),
                "{} {:?}: false negative",
                $name,
                backend
            );
            g.bench_function(format!("{}-single", backend.name()), |b| {
                b.iter(|| {
                    assert_eq!(
                        black_box(others).iter().filter(|k| f.contains(*k)).count(),
                        fps
                    )
                });
            });
            g.bench_function(format!("{}-batch", backend.name()), |b| {
                b.iter(|| {
                    f.contains_batch(black_box(others), &mut out).unwrap();
                    assert_eq!(out.iter().filter(|&&x| x).count(), fps);
                });
            });
        }
        g.finish();
    }};
}

fn backends(c: &mut Criterion) {
    for n in sizes() {
        let (members, others) = keys(n, n.min(1 << 20));
        let bits = n as u64 * 10;
        per_backend!(
            c,
            "blocked",
            BlockedBloomFilter::with_num_bits(bits).hashes(6).unwrap(),
            &members,
            &others
        );
        per_backend!(
            c,
            "split-block",
            SplitBlockBloomFilter::with_num_bits(bits)
                .hashes(8)
                .unwrap(),
            &members,
            &others
        );
    }
}

criterion_group!(benches, backends);
criterion_main!(benches);
