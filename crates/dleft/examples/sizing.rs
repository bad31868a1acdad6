//! Prints the sizing the builder chooses for a few (n, p), with bits per key against a
//! counting Bloom filter with 4-bit counters (`4 * 1.44 * log2(1/p)` bits per key at its
//! target, and at the d-left filter's own expected false-positive rate).
//! `cargo run --release -p bloomforge-dleft --example sizing`
use bloomforge_dleft::DLeftCountingBloomFilter;

fn cbf_bits(p: f64) -> f64 {
    4.0 * (1.0 / p).log2() / std::f64::consts::LN_2
}

fn main() {
    println!("| n | target p | r | B | load | expected FP | bits/key | CBF at target | ratio | CBF at same FP | ratio |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for p in [1e-2, 1e-3, 1e-4, 1e-6] {
        for n in [1_000u64, 1_000_000, 100_000_000] {
            let s = DLeftCountingBloomFilter::with_false_pos(p)
                .sizing(n)
                .unwrap();
            println!(
                "| {n} | {p:e} | {} | {} | {:.2} | {:.3e} | {:.2} | {:.1} | {:.2} | {:.1} | {:.2} |",
                s.remainder_bits,
                s.buckets_per_subtable,
                s.load,
                s.false_pos,
                s.bits_per_key,
                cbf_bits(p),
                s.bits_per_key / cbf_bits(p),
                cbf_bits(s.false_pos),
                s.bits_per_key / cbf_bits(s.false_pos)
            );
        }
    }
}
