//! How fast can any two-bucket cuckoo query be, next to split-block? A lower bound that
//! tells whether a format change could reach the goal `contains` <= 1.2x split-block at 1M
//! keys:
//! `cargo run --release -p bloomforge-cuckoo --example query_floor -- [keys, default 996000]`.
//!
//! The "minimal" table is the cheapest cuckoo derivation there is, the one a format change
//! could buy at most: a power-of-two table (`i1` = low hash bits, no fast range), the
//! paper's `i2 = i1 xor H(fp)` with one multiply, a 16-bit fingerprint taken from the top
//! hash bits (no multiply; forced odd, so nonzero), 4 slots in one `u64` per bucket and
//! the SWAR zero-lane test inlined (no call, no dispatch, no stash, no 12-bit widening).
//! At the default 996 000 keys it holds 2^18 buckets at load 0.95 (16.8 bits per key).
//! Beside it, in the same process and on the same queries: this crate's
//! `CuckooFilter::new(n, 0.01)` and core's `SplitBlockBloomFilter::new(n, 0.01)`, both
//! with the default hasher, as the minimal table. Prints ns/query (best of 9 interleaved
//! rounds of 10^6 member queries) and the ratios to split-block.
//!
//! The minimal table's inserts are a plain kick loop (500 kicks, random slot); a failed
//! insert drops the fingerprint it carries, so members are counted as found only up to
//! the number of failures, which the example prints.

use bloomforge_core::{DefaultHasher, SplitBlockBloomFilter};
use bloomforge_cuckoo::CuckooFilter;
use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::Instant;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The odd multiplier of `H(fp)`.
const SPREAD: u64 = 0x5bd1_e995_5bd1_e995;
/// One in each 16-bit lane.
const LANES: u64 = 0x0001_0001_0001_0001;

/// The cheapest two-bucket cuckoo table: see the module docs.
struct Minimal {
    table: Vec<u64>,
    mask: u64,
    hasher: DefaultHasher,
}

impl Minimal {
    fn new(buckets: u64) -> Self {
        assert!(buckets.is_power_of_two());
        Self {
            table: vec![0; buckets as usize],
            mask: buckets - 1,
            hasher: DefaultHasher::default(),
        }
    }

    #[inline(always)]
    fn alt(&self, bucket: u64, fp: u64) -> u64 {
        bucket ^ ((fp.wrapping_mul(SPREAD) >> 40) & self.mask)
    }

    #[inline(always)]
    fn probe(&self, hash: u64) -> (u64, u64, u64) {
        let fp = (hash >> 48) | 1;
        let i1 = hash & self.mask;
        (fp, i1, self.alt(i1, fp))
    }

    #[inline(always)]
    fn holds(word: u64, fp: u64) -> bool {
        let x = word ^ fp.wrapping_mul(LANES);
        x.wrapping_sub(LANES) & !x & (LANES << 15) != 0
    }

    #[inline(always)]
    fn contains(&self, key: &u64) -> bool {
        let (fp, i1, i2) = self.probe(self.hasher.hash_one(key));
        // SAFETY: `i1` and `i2` are masked with `mask = table.len() - 1` (a power of two
        // minus one), so both are below `table.len()`.
        let (w1, w2) = unsafe {
            (
                *self.table.get_unchecked(i1 as usize),
                *self.table.get_unchecked(i2 as usize),
            )
        };
        Self::holds(w1, fp) | Self::holds(w2, fp)
    }

    fn place(&mut self, bucket: u64, fp: u64) -> bool {
        let w = &mut self.table[bucket as usize];
        for slot in 0..4 {
            if (*w >> (16 * slot)) & 0xffff == 0 {
                *w |= fp << (16 * slot);
                return true;
            }
        }
        false
    }

    /// Inserts `key`; `false` if 500 kicks found no room (a fingerprint was dropped).
    fn insert(&mut self, key: &u64, rng: &mut u64) -> bool {
        let (mut fp, i1, i2) = self.probe(self.hasher.hash_one(key));
        if self.place(i1, fp) || self.place(i2, fp) {
            return true;
        }
        let mut bucket = if splitmix(rng) & 1 == 0 { i1 } else { i2 };
        for _ in 0..500 {
            let slot = splitmix(rng) & 3;
            let w = &mut self.table[bucket as usize];
            let victim = (*w >> (16 * slot)) & 0xffff;
            *w = (*w & !(0xffff << (16 * slot))) | (fp << (16 * slot));
            fp = victim;
            bucket = self.alt(bucket, fp);
            if self.place(bucket, fp) {
                return true;
            }
        }
        false
    }
}

/// One timed pass of `f` over `queries` queries: ns per query and `f`'s hit count.
fn timed<F: FnMut() -> usize>(queries: usize, mut f: F) -> (f64, usize) {
    let t = Instant::now();
    let hits = black_box(f());
    (t.elapsed().as_secs_f64() * 1e9 / queries as f64, hits)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("keys: a positive integer"))
        .unwrap_or(996_000);
    assert!(n >= 1000, "use at least 1000 keys");
    let mut seed = 1;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();

    let buckets = ((n as f64 / 4.0 / 0.95).ceil() as u64).next_power_of_two();
    let mut minimal = Minimal::new(buckets);
    let mut rng = 7;
    let failures = keys.iter().filter(|k| !minimal.insert(k, &mut rng)).count();
    let mut split = SplitBlockBloomFilter::new(n as u64, 0.01).expect("split-block sizing");
    split.insert_batch(&keys);
    let mut cuckoo = CuckooFilter::new(n as u64, 0.01).expect("cuckoo sizing");
    for k in &keys {
        cuckoo
            .insert(k)
            .expect("the cuckoo filter is sized for n keys");
    }

    let q = 1_000_000;
    let queries: Vec<u64> = (0..q).map(|i| keys[i % n]).collect();
    let mut t = [f64::INFINITY; 3];
    for _ in 0..9 {
        let (a, hits) = timed(q, || queries.iter().filter(|k| minimal.contains(k)).count());
        // Each failed insert dropped one stored fingerprint: at most one member lost per
        // failure, each queried at most ceil(q / n) times.
        assert!(
            hits + failures * q.div_ceil(n) >= q,
            "minimal table lost members"
        );
        let (b, hits) = timed(q, || queries.iter().filter(|k| split.contains(k)).count());
        assert_eq!(hits, q, "split-block lost members");
        let (c, hits) = timed(q, || queries.iter().filter(|k| cuckoo.contains(k)).count());
        assert_eq!(hits, q, "cuckoo lost members");
        t = [t[0].min(a), t[1].min(b), t[2].min(c)];
    }
    let stored = n - failures;
    println!(
        "{n} keys; minimal table: {buckets} buckets, load {:.3}, {:.1} bits/key, {failures} failed inserts",
        stored as f64 / (buckets * 4) as f64,
        (buckets * 64) as f64 / n as f64
    );
    println!(
        "{:<34}{:>8.2} ns  {:>5.2}x split-block",
        "minimal cuckoo (pow2, xor, 16-bit)",
        t[0],
        t[0] / t[1]
    );
    println!(
        "{:<34}{:>8.2} ns  {:>5.2}x split-block",
        "CuckooFilter::new(n, 0.01)",
        t[2],
        t[2] / t[1]
    );
    println!("{:<34}{:>8.2} ns", "SplitBlockBloomFilter (1 %)", t[1]);
}
