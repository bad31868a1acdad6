//! Helpers shared by the integration tests.
#![allow(dead_code)]

use bloomforge_core::hash::mix64;
use bloomforge_dleft::{Backend, DLeftCountingBloomFilter};

/// Distinct pseudo-random keys: `count` values from stream `stream`.
pub fn keys(stream: u64, count: usize) -> Vec<u64> {
    (0..count as u64)
        .map(|i| mix64(i ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_add(stream))
        .collect()
}

/// Keys from `keys(stream_a, ..)` and `keys(stream_b, ..)` never coincide in practice; this
/// checks it for the sets a test uses.
pub fn assert_disjoint(a: &[u64], b: &[u64]) {
    let set: std::collections::HashSet<_> = a.iter().collect();
    assert!(b.iter().all(|k| !set.contains(k)), "key streams overlap");
}

/// Every backend this CPU runs, scalar first.
pub fn backends() -> Vec<Backend> {
    Backend::available()
}

/// A filter with explicit parameters.
pub fn build(d: u32, b: u64, w: u32, r: u32, c: u32, seed: u64) -> DLeftCountingBloomFilter {
    DLeftCountingBloomFilter::builder()
        .subtables(d)
        .buckets_per_subtable(b)
        .cells_per_bucket(w)
        .remainder_bits(r)
        .counter_bits(c)
        .seed(seed)
        .build()
        .expect("valid parameters")
}
