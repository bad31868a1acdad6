//! Criterion benchmarks for bloomforge (see `benches/`): shared key generation and
//! benchmark sizing.
//!
//! ```text
//! cargo bench -p bloomforge-benches                       # 1M keys and 16M keys
//! BLOOMFORGE_BENCH_BIG=100000000 cargo bench -p bloomforge-benches -- contains
//! cargo test --benches                                    # each bench once, tiny sizes
//! ```
//!
//! Every benchmark asserts what it looked up (members all found, non-member positives
//! equal to the count measured beforehand), so a wrong filter cannot post a fast number.

/// Environment variable with the out-of-cache key count (default [`DEFAULT_BIG`]).
pub const BIG_ENV: &str = "BLOOMFORGE_BENCH_BIG";
/// Environment variable with the in-cache key count (default [`DEFAULT_SMALL`]).
pub const SMALL_ENV: &str = "BLOOMFORGE_BENCH_SMALL";
/// In-cache size: 1M keys (about 1.2 MiB at 10 bits/key).
pub const DEFAULT_SMALL: usize = 1_000_000;
/// Out-of-cache size: 16M keys (20 MiB); set `BLOOMFORGE_BENCH_BIG=100000000` for the
/// 100M-key (125 MiB) figures.
pub const DEFAULT_BIG: usize = 16_000_000;
/// Sizes used under `cargo test --benches` (each benchmark runs once).
pub const TEST_SIZES: [usize; 2] = [10_000, 50_000];

/// Whether this is a real benchmark run (`cargo bench` passes `--bench`); `cargo test
/// --benches` does not, and then the sizes shrink so the single pass is fast.
pub fn is_bench_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn env_size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(default)
}

/// The key counts to benchmark: `[in-cache, out-of-cache]`.
pub fn sizes() -> [usize; 2] {
    if is_bench_run() {
        [
            env_size(SMALL_ENV, DEFAULT_SMALL),
            env_size(BIG_ENV, DEFAULT_BIG),
        ]
    } else {
        TEST_SIZES
    }
}

/// A label for a key count (`1M`, `16M`, `10k`).
pub fn label(n: usize) -> String {
    let whole = |unit: usize| n >= unit && (n / unit) * unit == n;
    if whole(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if whole(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// SplitMix64 of a counter: distinct keys for distinct indices.
pub fn key(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` members and `q` disjoint non-members.
pub fn keys(n: usize, q: usize) -> (Vec<u64>, Vec<u64>) {
    const SEED: u64 = 0x5eed;
    let members = (0..n as u64).map(|i| key(SEED, i)).collect();
    let others = (n as u64..(n + q) as u64).map(|i| key(SEED, i)).collect();
    (members, others)
}

/// Parquet's hash of a `u64` (XXH64 seed 0 of its little-endian bytes), for sbbf-rs-safe.
#[inline(always)]
pub fn xxh64(k: u64) -> u64 {
    xxhash_rust::xxh64::xxh64(&k.to_le_bytes(), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_and_labels_read_well() {
        let (m, o) = keys(1000, 1000);
        let mut all: Vec<u64> = m.iter().chain(&o).copied().collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 2000);
        assert_eq!(label(16_000_000), "16M");
        assert_eq!(label(10_000), "10k");
        assert_eq!(label(1234), "1234");
    }
}
