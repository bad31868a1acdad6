//! The cost of the default hasher against the alternatives every filter could use:
//! foldhash (bloomforge's default), SipHash-1-3 (std, fastbloom, bloomfilter), XXH64
//! (Parquet) and HighwayHash (bloomforge's keyed mode), for `u64` keys and 16- and
//! 64-byte strings.

// criterion_group! generates an undocumented `pub fn`.
#![allow(missing_docs)]

use bloomforge_core::{DefaultHasher, KeyedHasher};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hash::{BuildHasher, Hash};
use std::hint::black_box;

const KEYS: usize = 4096;

fn run<K: Hash>(c: &mut Criterion, group: &str, keys: &[K], bytes: impl Fn(&K) -> Vec<u8>) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(keys.len() as u64));
    let fold = DefaultHasher::with_seed(1);
    let sip = std::collections::hash_map::RandomState::new();
    let keyed = KeyedHasher::with_key([1, 2, 3, 4]);
    // Distinct keys must hash to (almost surely) distinct values: a broken hasher that
    // returned a constant would be "fast" but fail here.
    fn distinct(hashes: impl Iterator<Item = u64>, n: usize) {
        let mut v: Vec<u64> = hashes.collect();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), n);
    }
    distinct(keys.iter().map(|k| fold.hash_one(k)), keys.len());
    distinct(keys.iter().map(|k| keyed.hash_one(k)), keys.len());
    let encoded: Vec<Vec<u8>> = keys.iter().map(bytes).collect();
    distinct(
        encoded.iter().map(|b| xxhash_rust::xxh64::xxh64(b, 0)),
        keys.len(),
    );
    g.bench_function("foldhash", |b| {
        b.iter(|| {
            black_box(keys)
                .iter()
                .fold(0u64, |a, k| a ^ fold.hash_one(k))
        })
    });
    g.bench_function("siphash13", |b| {
        b.iter(|| {
            black_box(keys)
                .iter()
                .fold(0u64, |a, k| a ^ sip.hash_one(k))
        })
    });
    g.bench_function("xxh64", |b| {
        b.iter(|| {
            black_box(&encoded)
                .iter()
                .fold(0u64, |a, k| a ^ xxhash_rust::xxh64::xxh64(k, 0))
        })
    });
    g.bench_function("highway-keyed", |b| {
        b.iter(|| {
            black_box(keys)
                .iter()
                .fold(0u64, |a, k| a ^ keyed.hash_one(k))
        })
    });
    g.finish();
}

fn hashers(c: &mut Criterion) {
    let ints: Vec<u64> = (0..KEYS as u64)
        .map(|i| bloomforge_benches::key(9, i))
        .collect();
    run(c, "hash-u64", &ints, |k| k.to_le_bytes().to_vec());
    let s16: Vec<String> = (0..KEYS).map(|i| format!("user:{i:011}")).collect();
    run(c, "hash-str16", &s16, |k| k.as_bytes().to_vec());
    let s64: Vec<String> = (0..KEYS)
        .map(|i| format!("https://www.example.com/products/category/items/{i:016x}"))
        .collect();
    run(c, "hash-str64", &s64, |k| k.as_bytes().to_vec());
}

criterion_group!(benches, hashers);
criterion_main!(benches);
