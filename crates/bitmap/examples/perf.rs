//! Performance of the bitmap crate against `roaring`, a sort + scan and memory floors.
//!
//! ```text
//! cargo build --release -p bloomforge-cli      # for the end-to-end `ints unique` rows
//! cargo run --release -p bloomforge-bitmap --example perf
//! ```
//! `PERF_N` sets the number of values (default 250 million); `PERF_REPS` the repetitions
//! of the fast measurements (default 3; the median is printed); `PERF_ROARING=0` skips
//! the roaring row (it takes minutes). The values are random
//! `u32` (xorshift, fixed seed) written to a binary file in a temporary directory, which
//! is deleted at the end. Every timed answer is checked.

use bloomforge_bitmap::{Backend, Bitmap, TwoBitmap};
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn xorshift(seed: u64, n: usize) -> Vec<u32> {
    let chunk = 1 << 20;
    (0..n.div_ceil(chunk))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut s = seed ^ (c as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let len = chunk.min(n - c * chunk);
            (0..len).map(move |_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 32) as u32
            })
        })
        .collect()
}

fn secs<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// The floor of the 2-bitmap load: one random read-modify-write of a byte per value in a
/// lazily zeroed 1 GiB array (byte `v >> 2`: the byte the 2-bitmap touches), prefetched
/// 16 ahead; on `threads` threads partitioned by high bits like the real load.
fn rmw_floor(values: &[u32], threads: usize) -> u64 {
    let mut arr = lazy_zeroed_huge(1 << 30);
    let part = (1usize << 30) / threads;
    arr.par_chunks_mut(part).enumerate().for_each(|(t, chunk)| {
        let lo = (t * part) as u64;
        let base = chunk.as_ptr();
        let mut buf = Vec::with_capacity(1024);
        let flush = |buf: &mut Vec<u32>, chunk: &mut [u8]| {
            for i in 0..buf.len() {
                if let Some(&a) = buf.get(i + 16) {
                    bloomforge_core::batch::prefetch(base.wrapping_add(a as usize));
                }
                let b = &mut chunk[buf[i] as usize];
                *b = b.wrapping_add(1);
            }
            buf.clear();
        };
        for &v in values {
            let local = u64::from(v >> 2).wrapping_sub(lo);
            if local < part as u64 {
                buf.push(local as u32);
                if buf.len() == 1024 {
                    flush(&mut buf, chunk);
                }
            }
        }
        flush(&mut buf, chunk);
    });
    arr.par_iter().map(|&b| u64::from(b)).sum()
}

/// `n` zero bytes allocated as the 2-bitmap is: zero pages filled on first touch, advised
/// for transparent huge pages.
fn lazy_zeroed_huge(n: usize) -> Vec<u8> {
    let layout = std::alloc::Layout::array::<u8>(n).unwrap();
    // SAFETY: the layout's size is non-zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    assert!(!ptr.is_null());
    // SAFETY: `ptr` is a live zeroed allocation of `n` bytes; the slice ends here.
    let region =
        unsafe { std::slice::from_raw_parts_mut(ptr.cast::<std::mem::MaybeUninit<u8>>(), n) };
    bloomforge_core::memory::advise_huge_pages(region);
    // SAFETY: allocated by the global allocator with `Layout::array::<u8>(n)`, the layout
    // of a `Vec<u8>` of capacity `n`; all bytes are initialised (zero).
    unsafe { Vec::from_raw_parts(ptr, n, n) }
}

/// The floor of `contains_batch`: one random 8-byte read per query in a 512 MiB array,
/// prefetched 16 ahead.
fn read_floor(arr: &[u64], queries: &[u32]) -> u64 {
    let base = arr.as_ptr();
    let mut acc = 0u64;
    for (i, &q) in queries.iter().enumerate() {
        if let Some(&a) = queries.get(i + 16) {
            bloomforge_core::batch::prefetch(base.wrapping_add((a >> 6) as usize));
        }
        acc = acc.wrapping_add(arr[(q >> 6) as usize] >> (q & 63) & 1);
    }
    acc
}

fn cli() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/release/examples/perf -> target/release/bloomforge
    let p = exe.parent()?.parent()?.join("bloomforge");
    p.exists().then_some(p)
}

fn run_cli(bin: &Path, file: &Path, threads: usize, count: bool) -> (String, f64) {
    let mut cmd = Command::new(bin);
    cmd.args(["ints", "unique", "--format", "u32le", "--memory", "4G"])
        .arg(file)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .stderr(Stdio::inherit());
    if count {
        cmd.arg("--count");
    } else {
        cmd.stdout(std::fs::File::create("/dev/null").unwrap());
    }
    let (out, t) = secs(|| cmd.output().unwrap());
    assert!(out.status.success(), "ints unique failed");
    (String::from_utf8(out.stdout).unwrap().trim().to_string(), t)
}

fn main() {
    let n: usize = std::env::var("PERF_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250_000_000);
    let reps: usize = std::env::var("PERF_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let gb = |bytes: f64, t: f64| bytes / t / 1e9;
    println!(
        "# {n} random u32, medians of {reps} (sort, roaring: one run); backend {:?}",
        Backend::detect()
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("values.u32");
    {
        let values = xorshift(1, n);
        let mut w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        for c in values.chunks(1 << 20) {
            let bytes: Vec<u8> = c.iter().flat_map(|v| v.to_le_bytes()).collect();
            w.write_all(&bytes).unwrap();
        }
        w.flush().unwrap();
    }
    let values: Vec<u32> = std::fs::read(&file)
        .unwrap()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(values.len(), n);

    // Sort + scan: the reference answer.
    let (once_sorted, t_sort1) = secs(|| {
        let mut v = values.clone();
        v.sort_unstable();
        count_once_sorted(&v)
    });
    let (once_sorted2, t_sort2) = secs(|| {
        pool(2).install(|| {
            let mut v = values.clone();
            v.par_sort_unstable();
            count_once_sorted(&v)
        })
    });
    assert_eq!(once_sorted, once_sorted2);
    println!(
        "| sort + scan (exactly-once count), 1 thread | {t_sort1:.2} s | {:.1} ns/value |",
        t_sort1 * 1e9 / n as f64
    );
    println!(
        "| sort + scan, 2 threads (par_sort_unstable) | {t_sort2:.2} s | {:.1} ns/value |",
        t_sort2 * 1e9 / n as f64
    );

    // 2-bitmap load vs the read-modify-write floor.
    let t_plain = median(
        (0..reps)
            .map(|_| {
                let (two, t) = secs(|| {
                    let mut two = TwoBitmap::full_u32().unwrap();
                    two.insert_batch(&values).unwrap();
                    two
                });
                assert_eq!(two.count_once(), once_sorted);
                t
            })
            .collect(),
    );
    println!(
        "| 2-bitmap load, insert_batch (prefetched, in input order), 1 thread | {t_plain:.2} s | {:.1} ns/value |",
        t_plain * 1e9 / n as f64
    );
    for threads in [1, 2] {
        let p = pool(threads);
        let t_load = median(
            (0..reps)
                .map(|_| {
                    let (two, t) = secs(|| {
                        let mut two = TwoBitmap::full_u32().unwrap();
                        p.install(|| two.par_insert_batch(&values)).unwrap();
                        two
                    });
                    assert_eq!(two.count_once(), once_sorted);
                    t
                })
                .collect(),
        );
        let t_floor = median(
            (0..reps)
                .map(|_| {
                    let (sum, t) = secs(|| p.install(|| rmw_floor(&values, threads)));
                    // Each byte counts its values mod 256; no byte of random data sees 256 of them.
                    assert_eq!(sum, n as u64);
                    t
                })
                .collect(),
        );
        println!(
            "| 2-bitmap load, par_insert_batch (bucketed by 1 MiB region), {threads} thread(s) | {t_load:.2} s | {:.1} ns/value | floor {t_floor:.2} s ({:.1} ns/value), load/floor {:.2}x |",
            t_load * 1e9 / n as f64,
            t_floor * 1e9 / n as f64,
            t_load / t_floor
        );
    }

    // End to end through the command line.
    match cli() {
        Some(bin) => {
            for threads in [1, 2] {
                let runs: Vec<(String, f64)> =
                    (0..reps).map(|_| run_cli(&bin, &file, threads, true)).collect();
                assert!(runs.iter().all(|(c, _)| *c == once_sorted.to_string()));
                let t = median(runs.iter().map(|r| r.1).collect());
                println!(
                    "| `bloomforge ints unique --format u32le --count FILE`, {threads} thread(s) | {t:.2} s | sort+scan(1 thread)/unique {:.2}x |",
                    t_sort1 / t
                );
                let t = median((0..reps).map(|_| run_cli(&bin, &file, threads, false).1).collect());
                println!(
                    "| `bloomforge ints unique --format u32le FILE > /dev/null`, {threads} thread(s) | {t:.2} s | sort+scan(1 thread)/unique {:.2}x |",
                    t_sort1 / t
                );
            }
        }
        None => println!("(no target/release/bloomforge: `cargo build --release -p bloomforge-cli` for the end-to-end rows)"),
    }

    // contains_batch in a 512 MiB bitmap vs the random-read floor.
    let mut bitmap = Bitmap::full_u32().unwrap();
    bitmap.par_insert_batch(&values).unwrap();
    let queries = xorshift(2, n);
    let mut out = vec![false; 1 << 20];
    let hits_plain = queries.iter().filter(|&&q| bitmap.contains(q)).count() as u64;
    let t_contains = median(
        (0..reps)
            .map(|_| {
                let (hits, t) = secs(|| {
                    let mut hits = 0u64;
                    for c in queries.chunks(1 << 20) {
                        bitmap.contains_batch(c, &mut out[..c.len()]).unwrap();
                        hits += out[..c.len()].iter().filter(|&&h| h).count() as u64;
                    }
                    hits
                });
                assert_eq!(hits, hits_plain);
                t
            })
            .collect(),
    );
    let t_read = median(
        (0..reps)
            .map(|_| {
                let (hits, t) = secs(|| read_floor(bitmap.as_words(), &queries));
                assert_eq!(hits, hits_plain);
                t
            })
            .collect(),
    );
    println!(
        "| contains_batch, 512 MiB bitmap, 1 thread | {t_contains:.2} s | {:.1} ns/query | read floor {t_read:.2} s ({:.1} ns/query), contains/floor {:.2}x |",
        t_contains * 1e9 / n as f64,
        t_read * 1e9 / n as f64,
        t_contains / t_read
    );

    // union of two 512 MiB bitmaps.
    let mut other = Bitmap::full_u32().unwrap();
    other.par_insert_batch(&queries).unwrap();
    drop(queries);
    let want_len = {
        let mut u = bitmap.clone();
        u.set_backend(Backend::Scalar).unwrap();
        u.union(&other).unwrap();
        u.len()
    };
    for backend in Backend::available() {
        let t = median(
            (0..reps)
                .map(|_| {
                    let mut u = bitmap.clone();
                    u.set_backend(backend).unwrap();
                    let ((), t) = secs(|| u.union(&other).unwrap());
                    assert_eq!(u.len(), want_len);
                    t
                })
                .collect(),
        );
        println!(
            "| union of two 512 MiB bitmaps, {} | {:.3} s | {:.1} GB/s (2 x 512 MiB read + 512 MiB written) |",
            backend.name(),
            t,
            gb(3.0 * (512u64 << 20) as f64, t)
        );
    }
    // roaring: seen / seen-twice, once = seen - twice (PERF_ROARING=0 skips it: minutes).
    if std::env::var("PERF_ROARING").as_deref() != Ok("0") {
        let (once_roaring, t_roaring) = secs(|| {
            let mut seen = roaring::RoaringBitmap::new();
            let mut twice = roaring::RoaringBitmap::new();
            for &v in &values {
                if !seen.insert(v) {
                    twice.insert(v);
                }
            }
            (seen - twice).len()
        });
        assert_eq!(once_roaring, once_sorted);
        println!(
            "| roaring (seen / seen-twice), 1 thread | {t_roaring:.2} s | {:.1} ns/value |",
            t_roaring * 1e9 / n as f64
        );
    }
    drop(dir); // deletes the data file
}

fn count_once_sorted(v: &[u32]) -> u64 {
    let mut once = 0u64;
    let mut i = 0;
    while i < v.len() {
        let mut j = i + 1;
        while j < v.len() && v[j] == v[i] {
            j += 1;
        }
        once += u64::from(j - i == 1);
        i = j;
    }
    once
}
