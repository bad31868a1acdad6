//! Single-thread timings of the d-left filter (ns/key): insert, positive and negative
//! queries (single and batch), count, remove, per backend, for filters sized at 1 % and
//! 0.1 % and a power-of-two table. Each figure is the best of several rounds, timed with
//! the thread's CPU clock on Linux so that time slices lost to other processes on a busy
//! machine do not count.
//!
//! `cargo run --release -p bloomforge-dleft --example perf [n] [backend]`
//!
//! The criterion benches and the comparison harness live in `bloomforge-bench`.

use bloomforge_dleft::{Backend, DLeftCountingBloomFilter};
use std::hint::black_box;
use std::time::Instant;

fn keys(n: u64, salt: u64) -> Vec<u64> {
    (0..n)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt)
        .collect()
}

/// Seconds of CPU time this thread has used (Linux); wall-clock time elsewhere.
fn now() -> f64 {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let mut t = Timespec { sec: 0, nsec: 0 };
        // SAFETY: `t` is a valid, writable timespec; the clock id is Linux's thread CPU
        // clock; libc is linked by std on Linux.
        if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            return t.sec as f64 + t.nsec as f64 * 1e-9;
        }
    }
    thread_local!(static START: Instant = Instant::now());
    START.with(|s| s.elapsed().as_secs_f64())
}

/// Runs `f` and returns (seconds, its result).
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = now();
    let out = f();
    (now() - t, black_box(out))
}

const LABELS: [&str; 9] = [
    "insert",
    "contains (present)",
    "contains (absent)",
    "contains_batch (present)",
    "contains_batch (absent)",
    "count (present)",
    "remove",
    "insert_batch",
    "remove_batch",
];

fn run(name: &str, mut f: DLeftCountingBloomFilter, n: u64, only: Option<&str>) {
    let present = keys(n, 0);
    let absent = keys(n, 0x5555_5555_5555_5555);
    let mut out = vec![false; n as usize];
    let rounds = (20_000_000 / n).clamp(3, 200);
    for backend in Backend::available() {
        if backend == Backend::Wide {
            continue; // the scalar kernel's
        }
        if only.is_some_and(|o| o != backend.name()) {
            continue;
        }
        f.set_backend(backend).unwrap();
        let mut best = [f64::INFINITY; 9];
        let mut fp = 0;
        for _ in 0..rounds {
            f.clear();
            let mut t = [0.0; 9];
            t[7] = timed(|| f.insert_batch(&present).unwrap()).0;
            t[8] = timed(|| f.remove_batch(&present).unwrap()).0;
            f.clear();
            t[0] = timed(|| {
                for k in &present {
                    f.insert(k).unwrap();
                }
            })
            .0;
            let (dt, hits) = timed(|| present.iter().filter(|k| f.contains(k)).count());
            assert_eq!(hits, present.len());
            t[1] = dt;
            (t[2], fp) = timed(|| absent.iter().filter(|k| f.contains(k)).count());
            t[3] = timed(|| f.contains_batch(&present, &mut out).unwrap()).0;
            assert!(out.iter().all(|&b| b));
            t[4] = timed(|| f.contains_batch(&absent, &mut out).unwrap()).0;
            t[5] = timed(|| {
                present
                    .iter()
                    .map(|k| f.count(k).get())
                    .fold(0, u64::wrapping_add)
            })
            .0;
            t[6] = timed(|| {
                present.iter().for_each(|k| {
                    f.remove(k).unwrap();
                })
            })
            .0;
            // Fingerprints shared by 2^c - 1 keys saturate and stay (sticky).
            assert_eq!(f.occupied_cells(), f.saturated_cells());
            for (b, t) in best.iter_mut().zip(t) {
                *b = b.min(t * 1e9 / n as f64);
            }
        }
        println!(
            "{name} [{}] d={} B={} (power of two: {}) w={} r={} c={}: {:.2} bits/key, FP {:.3e} measured, {:.3e} expected",
            backend.name(),
            f.subtables(),
            f.buckets_per_subtable(),
            f.uses_power_of_two_permutations(),
            f.cells_per_bucket(),
            f.remainder_bits(),
            f.counter_bits(),
            f.memory_bits() as f64 / n as f64,
            fp as f64 / n as f64,
            f.expected_false_pos_at(n)
        );
        for (label, b) in LABELS.iter().zip(best) {
            println!("  {label:<26} {b:6.2} ns/key");
        }
    }
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let only = std::env::args().nth(2);
    let only = only.as_deref();
    let ks = keys(n, 0);
    let hasher = bloomforge_core::DefaultHasher::default();
    let (t, _) = timed(|| {
        ks.iter().fold(0u64, |a, k| {
            a ^ core::hash::BuildHasher::hash_one(&hasher, k)
        })
    });
    println!("n = {n}; hashing alone: {:.2} ns/key", t * 1e9 / n as f64);
    for p in [0.01, 0.001] {
        let f = DLeftCountingBloomFilter::with_false_pos(p)
            .expected_items(n)
            .unwrap();
        run(&format!("p = {p}"), f, n, only);
    }
    // Power-of-two B (Bonomi et al.'s a_i f mod 2^(q+r) permutations), r = 12.
    let b = (n / 24).next_power_of_two();
    let f = DLeftCountingBloomFilter::builder()
        .buckets_per_subtable(b)
        .remainder_bits(12)
        .build()
        .unwrap();
    run("power-of-two B", f, n, only);
}
