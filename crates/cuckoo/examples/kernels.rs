//! Single and batch `contains` of a filter of N keys (default 1M, 1 % FP) on every
//! backend this CPU has: `cargo run --release -p bloomforge-cuckoo --example kernels -- N`.
use bloomforge_core::Backend;
use bloomforge_cuckoo::CuckooFilter;
use std::time::Instant;
fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().unwrap());
    let mut f = CuckooFilter::new(n, 0.01).unwrap();
    for k in 0..n {
        f.insert(&k).unwrap();
    }
    let keys: Vec<u64> = (0..1_000_000u64)
        .map(|k| k.wrapping_mul(0x9e3779b97f4a7c15))
        .collect();
    for _ in 0..3 {
        for b in Backend::available() {
            f.set_backend(b).unwrap();
            let t = Instant::now();
            let mut hits = 0usize;
            for k in &keys {
                hits += usize::from(f.contains(std::hint::black_box(k)));
            }
            let single = t.elapsed().as_nanos() as f64 / 1e6;
            let mut out = vec![false; keys.len()];
            let t = Instant::now();
            f.contains_batch(&keys, &mut out).unwrap();
            let batch = t.elapsed().as_nanos() as f64 / 1e6;
            println!("{:?}: single {single:.2} batch {batch:.2} hits {hits}", b);
        }
    }
}
