//! Batch calls of a few keys against single-key calls: the per-call cost of the pipelined
//! batch loops (their ring of keys ahead), which large batches hide.
//!
//! ```sh
//! cargo run --release -p bloomforge-bench --example small_batches            # 100k keys
//! cargo run --release -p bloomforge-bench --example small_batches -- 1000000
//! ```
//!
//! Each filter (1 %, `n` random-looking `u64` members, in cache at the default `n`; the
//! binary fuse filter at its 2^-8) answers
//! every member with `contains_batch` in calls of 8, 16, 64 and 1024 keys, and with
//! `contains` one key at a time; ns/key, best of 20 passes. Every pass checks that every
//! member was found, so a batch that skipped keys would stop the program.

use bloomforge_core::{BlockedBloomFilter, SplitBlockBloomFilter};
use bloomforge_counting::CountingBloomFilter;
use bloomforge_cuckoo::CuckooFilter;
use bloomforge_dleft::DLeftCountingBloomFilter;
use bloomforge_retrieval::BinaryFuseFilter;
use std::hint::black_box;
use std::time::Instant;

const CHUNKS: [usize; 4] = [8, 16, 64, 1024];
const PASSES: usize = 20;

/// Best time of `PASSES` runs of `pass`, in ns per key of `n`.
fn best(n: usize, mut pass: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..PASSES {
        let t = Instant::now();
        pass();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best * 1e9 / n as f64
}

/// One row: the batch calls by chunk size, then single calls.
fn row(
    name: &str,
    keys: &[u64],
    batch: impl Fn(&[u64], &mut [bool]),
    single: impl Fn(&u64) -> bool,
) {
    let n = keys.len() - keys.len() % CHUNKS[CHUNKS.len() - 1];
    let keys = &keys[..n];
    let mut line = format!("| {name} |");
    for chunk in CHUNKS {
        let mut out = vec![false; chunk];
        let ns = best(n, || {
            for c in keys.chunks_exact(chunk) {
                batch(black_box(c), &mut out);
                assert!(out.iter().all(|&hit| hit), "{name}: a member missed");
            }
        });
        line += &format!(" {ns:.2} |");
    }
    let ns = best(n, || {
        let found = keys.iter().filter(|k| single(black_box(k))).count();
        assert_eq!(found, n, "{name}: a member missed");
    });
    println!("{line} {ns:.2} |");
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("the key count"))
        .unwrap_or(100_000);
    let keys: Vec<u64> = (0..n)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    println!("n = {n} members, each filter sized for 1 %, ns/key (best of {PASSES} passes)\n");
    println!("| filter | batches of 8 | of 16 | of 64 | of 1024 | single calls |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut b = BlockedBloomFilter::new(n, 0.01).expect("blocked");
    b.insert_batch(&keys);
    row(
        "blocked",
        &keys,
        |k, o| b.contains_batch(k, o).unwrap(),
        |k| b.contains(k),
    );
    let mut s = SplitBlockBloomFilter::new(n, 0.01).expect("split-block");
    s.insert_batch(&keys);
    row(
        "split-block",
        &keys,
        |k, o| s.contains_batch(k, o).unwrap(),
        |k| s.contains(k),
    );
    let mut c = CountingBloomFilter::new(n, 0.01).expect("counting");
    c.insert_batch(&keys);
    row(
        "counting",
        &keys,
        |k, o| c.contains_batch(k, o).unwrap(),
        |k| c.contains(k),
    );
    let mut d = DLeftCountingBloomFilter::new(n, 0.01).expect("d-left");
    d.insert_batch(&keys).expect("d-left insert");
    row(
        "d-left",
        &keys,
        |k, o| d.contains_batch(k, o).unwrap(),
        |k| d.contains(k),
    );
    let mut q = CuckooFilter::new(n, 0.01).expect("cuckoo");
    q.insert_batch(&keys).expect("cuckoo insert");
    row(
        "cuckoo",
        &keys,
        |k, o| q.contains_batch(k, o).unwrap(),
        |k| q.contains(k),
    );
    let f = BinaryFuseFilter::<u8>::build_from(&keys, 0).expect("binary fuse");
    row(
        "binary-fuse-8",
        &keys,
        |k, o| f.contains_batch(k, o).unwrap(),
        |k| f.contains(k),
    );
}
