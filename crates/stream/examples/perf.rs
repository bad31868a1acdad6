//! Side-by-side figures for the README (one run, one machine): the scalable filter's
//! memory and false-positive rate as it grows, against a fixed `BlockedBloomFilter` sized
//! for the same n at the same rate and against `growable-bloom-filter` 2.1 at equal
//! settings; insert and query times; the stable filter's cost per insert.
//!
//! `cargo run --release -p bloomforge-stream --example perf`
//!
//! Every answer is checked: all inserted keys must be found, else the run stops.

use bloomforge_core::BlockedBloomFilter;
use bloomforge_stream::{ScalableBloomFilter, StableBloomFilter};
use growable_bloom_filter::{GrowableBloom, GrowableBloomBuilder};
use std::hint::black_box;
use std::time::Instant;

const N0: u64 = 1000;
const P: f64 = 0.01;
const R: f64 = 0.85;

fn key(i: u64) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x1234_5678
}

/// growable-bloom-filter's memory by its own sizing (v2.1.1 `Bloom::new`: `ceil(log2
/// 1/p)` partitions of `ceil(capacity / ln 2)` bits, whole bytes), for its slices.
fn growable_bytes(g: &GrowableBloom, n0: u64, p: f64) -> u64 {
    let (mut sum, mut i, mut bytes) = (0u64, 0i32, 0u64);
    while sum < g.capacity() as u64 {
        let cap = n0 << i;
        let pi = p * R.powi(i);
        let k = (1.0 / pi).log2().ceil() as u64;
        bytes += (k * (cap as f64 / std::f64::consts::LN_2).ceil() as u64).div_ceil(8);
        sum += cap;
        i += 1;
    }
    bytes
}

fn growable(n0: u64, p: f64) -> GrowableBloom {
    GrowableBloomBuilder::new()
        .estimated_insertions(n0 as usize)
        .desired_error_ratio(p)
        .growth_factor(2)
        .tightening_ratio(R)
        .build()
}

fn fp_of(q: u64, contains: impl Fn(u64) -> bool) -> f64 {
    (0..q).filter(|&i| contains(key(i | (1 << 62)))).count() as f64 / q as f64
}

fn main() {
    let checkpoints = [10_000u64, 100_000, 1_000_000, 10_000_000];
    let q = 1_000_000u64;
    println!("Scalable filters grown from n0 = {N0}, target P = {P}, s = 2, r = {R}; FP over {q} non-members.");
    println!();
    println!("| n | slices | ours bits/key | ours FP | fixed blocked bits/key | fixed FP | growable bits/key | growable FP | growable at P(1-r) bits/key | its FP |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut ours = ScalableBloomFilter::builder()
        .expected_items(N0)
        .false_pos(P)
        .tightening_ratio(R)
        .build()
        .unwrap();
    let mut peer = growable(N0, P);
    let mut peer_eq = growable(N0, P * (1.0 - R));
    let mut done = 0u64;
    let (mut t_ours, mut t_peer) = (0.0, 0.0);
    for &n in &checkpoints {
        let t = Instant::now();
        for i in done..n {
            ours.insert(&key(i)).unwrap();
        }
        t_ours += t.elapsed().as_secs_f64();
        let t = Instant::now();
        for i in done..n {
            peer.insert(key(i));
        }
        t_peer += t.elapsed().as_secs_f64();
        for i in done..n {
            peer_eq.insert(key(i));
        }
        done = n;
        let mut fixed = BlockedBloomFilter::new(n, P).unwrap();
        for i in 0..n {
            fixed.insert(&key(i));
        }
        // Every member is found by every filter.
        let keys: Vec<u64> = (0..n).map(key).collect();
        let mut out = vec![false; keys.len()];
        ours.contains_batch(&keys, &mut out).unwrap();
        assert!(out.iter().all(|&b| b), "scalable: false negative");
        assert!(
            keys.iter()
                .all(|k| peer.contains(k) && peer_eq.contains(k) && fixed.contains(k)),
            "false negative"
        );
        let bpk = |bytes: u64| bytes as f64 * 8.0 / n as f64;
        println!(
            "| {n} | {} | {:.2} | {:.5} | {:.2} | {:.5} | {:.2} | {:.5} | {:.2} | {:.5} |",
            ours.num_slices(),
            bpk(ours.memory_bytes()),
            fp_of(q, |k| ours.contains(&k)),
            bpk(fixed.num_bits() / 8),
            fp_of(q, |k| fixed.contains(&k)),
            bpk(growable_bytes(&peer, N0, P)),
            fp_of(q, |k| peer.contains(k)),
            bpk(growable_bytes(&peer_eq, N0, P * (1.0 - R))),
            fp_of(q, |k| peer_eq.contains(k)),
        );
    }
    let n = *checkpoints.last().unwrap();
    let mut batched = ScalableBloomFilter::builder()
        .expected_items(N0)
        .false_pos(P)
        .tightening_ratio(R)
        .build()
        .unwrap();
    let all: Vec<u64> = (0..n).map(key).collect();
    let t = Instant::now();
    for chunk in all.chunks(1 << 16) {
        batched.insert_batch(chunk).unwrap();
    }
    let t_batch = t.elapsed().as_secs_f64();
    assert!(
        batched == ours,
        "batch and one-by-one inserts build the same filter"
    );
    drop(all);
    println!();
    println!(
        "Inserting {n} keys through insert_batch (chunks of 65536): {:.1} ns/key.",
        t_batch * 1e9 / n as f64
    );
    println!("Inserting {n} keys one by one (each insert first queries every slice): ours {:.1} ns/key, growable {:.1} ns/key.", t_ours * 1e9 / n as f64, t_peer * 1e9 / n as f64);

    // Queries at n = 10M, three runs each, median.
    let pos: Vec<u64> = (0..q).map(|i| key(i * (n / q))).collect();
    let neg: Vec<u64> = (0..q).map(|i| key(i | (1 << 61))).collect();
    let median = |mut f: Box<dyn FnMut() -> usize>| {
        let mut v: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed().as_secs_f64() * 1e9 / q as f64
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v[1]
    };
    let o = &ours;
    let g = &peer;
    let (pk, nk) = (&pos, &neg);
    let ours_pos = median(Box::new(move || {
        pk.iter().filter(|k| o.contains(*k)).count()
    }));
    let ours_neg = median(Box::new(move || {
        nk.iter().filter(|k| o.contains(*k)).count()
    }));
    let ours_neg_batch = median(Box::new(move || {
        let mut out = vec![false; nk.len()];
        o.contains_batch(nk, &mut out).unwrap();
        out.iter().filter(|&&b| b).count()
    }));
    let peer_pos = median(Box::new(move || {
        pk.iter().filter(|k| g.contains(*k)).count()
    }));
    let peer_neg = median(Box::new(move || {
        nk.iter().filter(|k| g.contains(*k)).count()
    }));
    println!("Queries at n = {n} (median of 3 runs of {q}): ours {ours_pos:.1} ns positive, {ours_neg:.1} ns negative, {ours_neg_batch:.1} ns negative in a batch; growable {peer_pos:.1} ns positive, {peer_neg:.1} ns negative.");

    // RedisBloom's documented defaults: capacity 100, error rate 1 %, expansion 2.
    let mut redis = ScalableBloomFilter::builder()
        .expected_items(100)
        .false_pos(0.01)
        .build()
        .unwrap();
    for i in 0..1_000_000u64 {
        redis.insert(&key(i)).unwrap();
    }
    println!(
        "With RedisBloom's default capacity 100, 1 %, expansion 2, after 1M keys: {} slices, {:.2} bits/key, FP {:.5}.",
        redis.num_slices(),
        redis.memory_bytes() as f64 * 8.0 / 1e6,
        fp_of(q, |k| redis.contains(&k))
    );

    // Stable filter: 2^23 cells of 3 bits (3 MiB), 1 % at the stable point.
    let mut s = StableBloomFilter::new(1 << 23, 3, 0.01).unwrap();
    let m = 20_000_000u64;
    let t = Instant::now();
    let mut seen = 0u64;
    for i in 0..m {
        seen += u64::from(s.check_and_insert(&key(i)));
    }
    let ns = t.elapsed().as_secs_f64() * 1e9 / m as f64;
    println!(
        "Stable filter, 2^23 cells of 3 bits (k = {}, P = {}), {m} distinct keys: {ns:.1} ns per check_and_insert; \
         {:.4} reported seen (FP) vs {:.4} at the stable point; zero fraction {:.4} vs stable point {:.4}.",
        s.num_hashes(),
        s.decrements(),
        seen as f64 / m as f64,
        s.stable_false_pos(),
        s.zero_cells() as f64 / s.cells() as f64,
        s.stable_point()
    );

    // The Rust crate `stable-bloom-filter` 0.3 at the same cells, bits and target (it
    // halves the optimal k: k = 3 here; FNV hashing, bit-packed cells, thread_rng).
    use stable_bloom_filter::Filter;
    let mut peer = stable_bloom_filter::stable::StableBloomFilter::new(1 << 23, 3, 0.01);
    let t = Instant::now();
    let mut seen = 0u64;
    for i in 0..m {
        seen += u64::from(peer.test_and_add(&key(i).to_le_bytes()));
    }
    let ns = t.elapsed().as_secs_f64() * 1e9 / m as f64;
    println!(
        "stable-bloom-filter 0.3, same cells and target (k = {}, P = {}): {ns:.1} ns per test_and_add; \
         {:.4} reported seen vs {:.4} at its stable point.",
        peer.k(),
        peer.p(),
        seen as f64 / m as f64,
        peer.false_positive_rate()
    );
    // Ours with the same k = 3 (P from our solver), for a like-for-like time.
    let mut s3 = StableBloomFilter::builder()
        .cells(1 << 23)
        .cell_bits(3)
        .false_pos(0.01)
        .hashes(3)
        .build()
        .unwrap();
    let t = Instant::now();
    let mut seen = 0u64;
    for i in 0..m {
        seen += u64::from(s3.check_and_insert(&key(i)));
    }
    let ns = t.elapsed().as_secs_f64() * 1e9 / m as f64;
    println!(
        "Ours with k = 3 (P = {}): {ns:.1} ns per check_and_insert; {:.4} reported seen vs {:.4} at the stable point.",
        s3.decrements(),
        seen as f64 / m as f64,
        s3.stable_false_pos()
    );

    // Out of cache: 2^28 cells of 3 bits (96 MiB), one by one vs the pipelined batch.
    let keys: Vec<u64> = (0..5_000_000u64).map(key).collect();
    let mk = || StableBloomFilter::new(1 << 28, 3, 0.01).unwrap();
    let (mut one, mut batch) = (mk(), mk());
    let t = Instant::now();
    let seen_one: Vec<bool> = keys.iter().map(|k| one.check_and_insert(k)).collect();
    let t_one = t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64;
    let t = Instant::now();
    let mut seen_batch = vec![false; keys.len()];
    for (k, o) in keys.chunks(1 << 16).zip(seen_batch.chunks_mut(1 << 16)) {
        batch.check_and_insert_batch(k, o).unwrap();
    }
    let t_batch = t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64;
    assert!(
        seen_one == seen_batch && one == batch,
        "batch differs from one by one"
    );
    println!(
        "Stable filter out of cache, 2^28 cells of 3 bits (96 MiB), 5M keys: {t_one:.1} ns one by one, \
         {t_batch:.1} ns per key through check_and_insert_batch."
    );
}
