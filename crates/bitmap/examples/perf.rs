//! Performance of the bitmap crate and of `bloomforge ints unique` against a sort + scan,
//! `roaring` and memory floors, side by side in one run.
//!
//! ```text
//! cargo build --release -p bloomforge-cli      # for the end-to-end `ints unique` rows
//! cargo run --release -p bloomforge-bitmap --example perf
//! ```
//! `PERF_N` sets the number of values (default 250 million); `PERF_REPS` the repetitions
//! of every timed row (default 3; the median is printed); `PERF_ROARING=0` skips the
//! roaring row (it takes minutes: one insert at a time into array containers). The values
//! are random `u32` (xorshift, fixed seed) written to a binary file in a temporary
//! directory, which is deleted at the end. Every timed answer is checked: counts against
//! the sort + scan, and the printed output of `ints unique` line by line against the
//! sorted values (in one untimed run).
//!
//! The reference, "sort + scan", is what the 2-bitmap replaces: `sort_unstable` of a
//! `Vec<u32>` copy of the values (the copy's allocation included, as `ints unique` pays
//! for its own) and one linear scan counting the runs of length 1; on 2 threads,
//! `par_sort_unstable`. Ratios compare rows on the same number of threads.

use bloomforge_bitmap::{Backend, Bitmap, RangeBuckets, TwoBitmap};
use bloomforge_core::batch::PREFETCH_AHEAD as AHEAD;
use rayon::prelude::*;
use std::io::{BufRead, Write};
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

/// CPU seconds (user + system) of this process and of its waited-for children, from
/// `/proc/self/stat` (clock ticks of 10 ms): a measure a busy machine disturbs less than
/// wall time (other processes take turns on the cores, not CPU time from this one).
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    let tick = 100.0; // USER_HZ on Linux
    let get = |i: usize| f.get(i).copied().unwrap_or(0.0) / tick;
    // utime, stime, cutime, cstime are fields 14-17 (1-based); `rest` starts at field 3.
    (get(11) + get(12), get(13) + get(14))
}

/// Wall and CPU seconds of `f` (this process's CPU if `children` is false, else that of
/// the children it waited for).
fn timed<T>(children: bool, f: impl FnOnce() -> T) -> (T, f64, f64) {
    let c0 = cpu_seconds();
    let (r, t) = secs(f);
    let c1 = cpu_seconds();
    let cpu = if children { c1.1 - c0.1 } else { c1.0 - c0.0 };
    (r, t, cpu)
}

/// The median of `reps` runs of `f` (which returns its own time).
fn median_of(reps: usize, mut f: impl FnMut() -> f64) -> f64 {
    let mut v: Vec<f64> = (0..reps).map(|_| f()).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The medians of wall and CPU seconds over `reps` runs of `f` (which returns both).
fn medians_of(reps: usize, mut f: impl FnMut() -> (f64, f64)) -> (f64, f64) {
    let (mut w, mut c): (Vec<f64>, Vec<f64>) = (0..reps).map(|_| f()).unzip();
    w.sort_by(f64::total_cmp);
    c.sort_by(f64::total_cmp);
    (w[w.len() / 2], c[c.len() / 2])
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// The floor of the 2-bitmap load: one random read-modify-write of a byte per value in a
/// lazily zeroed 1 GiB array (byte `v >> 2`: the byte the 2-bitmap touches), prefetched
/// as far ahead as the crate's batches (core's `PREFETCH_AHEAD`); on `threads` threads
/// partitioned by high bits like the real load.
fn rmw_floor(values: &[u32], threads: usize) -> u64 {
    let mut arr = lazy_zeroed_huge(1 << 30);
    let part = (1usize << 30) / threads;
    arr.par_chunks_mut(part).enumerate().for_each(|(t, chunk)| {
        let lo = (t * part) as u64;
        let base = chunk.as_ptr();
        let mut buf = Vec::with_capacity(1024);
        let flush = |buf: &mut Vec<u32>, chunk: &mut [u8]| {
            for i in 0..buf.len() {
                if let Some(&a) = buf.get(i + AHEAD) {
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
/// prefetched as far ahead as the crate's batches.
fn read_floor(arr: &[u64], queries: &[u32]) -> u64 {
    let base = arr.as_ptr();
    let mut acc = 0u64;
    for (i, &q) in queries.iter().enumerate() {
        if let Some(&a) = queries.get(i + AHEAD) {
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

fn unique_cmd(bin: &Path, file: &Path, threads: usize, count: bool) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["--threads", &threads.to_string()])
        .args(["ints", "unique", "--format", "u32le", "--memory", "4G"])
        .arg(file)
        .stderr(Stdio::inherit());
    if count {
        cmd.arg("--count");
    }
    cmd
}

/// One timed run of `ints unique`: the count it printed (with `--count`), wall and CPU
/// seconds.
fn run_cli(bin: &Path, file: &Path, threads: usize, count: bool) -> (String, f64, f64) {
    let mut cmd = unique_cmd(bin, file, threads, count);
    if !count {
        cmd.stdout(std::fs::File::create("/dev/null").unwrap());
    }
    let (out, t, cpu) = timed(true, || cmd.output().unwrap());
    assert!(out.status.success(), "ints unique failed");
    (
        String::from_utf8(out.stdout).unwrap().trim().to_string(),
        t,
        cpu,
    )
}

/// Checks every line `ints unique` prints against the exactly-once values of `sorted`.
fn check_cli_output(bin: &Path, file: &Path, threads: usize, sorted: &[u32]) {
    let mut child = unique_cmd(bin, file, threads, false)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let reader = std::io::BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
    let mut want = sorted.chunk_by(|a, b| a == b).filter(|r| r.len() == 1);
    let mut lines = 0u64;
    for line in reader.lines() {
        let got: u32 = line.unwrap().parse().unwrap();
        assert_eq!(Some(got), want.next().map(|r| r[0]), "line {lines}");
        lines += 1;
    }
    assert!(
        want.next().is_none(),
        "output ends early after {lines} lines"
    );
    assert!(child.wait().unwrap().success());
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
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
        "# {n} random u32, medians of {reps}; {} ({} logical CPUs), backend {:?}; load average at start {}",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |p| p.get()),
        Backend::detect(),
        load_average()
    );
    println!(
        "| measurement | wall (median) | CPU user+sys (median) | wall per value | against |\n|---|---|---|---|---|"
    );
    let per = |t: f64| t * 1e9 / n as f64;

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

    // Sort + scan: the reference answer and times, 1 and 2 threads.
    let mut sorted = values.clone();
    sorted.sort_unstable();
    let once_sorted = count_once_sorted(&sorted);
    let mut t_sort = [0.0f64; 3];
    let mut cpu_sort = [0.0f64; 3];
    for threads in [1, 2] {
        let p = pool(threads);
        (t_sort[threads], cpu_sort[threads]) = medians_of(reps, || {
            let (once, t, cpu) = timed(false, || {
                p.install(|| {
                    let mut v = values.clone();
                    if threads == 1 {
                        v.sort_unstable();
                    } else {
                        v.par_sort_unstable();
                    }
                    count_once_sorted(&v)
                })
            });
            assert_eq!(once, once_sorted);
            (t, cpu)
        });
        println!(
            "| sort + scan (copy, {}, count runs of 1), {threads} thread(s) | {:.2} s | {:.2} s | {:.1} ns/value | reference |",
            if threads == 1 { "sort_unstable" } else { "par_sort_unstable" },
            t_sort[threads],
            cpu_sort[threads],
            per(t_sort[threads])
        );
    }

    // 2-bitmap load vs the read-modify-write floor.
    let (t, cpu) = medians_of(reps, || {
        let (two, t, cpu) = timed(false, || {
            let mut two = TwoBitmap::full_u32().unwrap();
            two.insert_batch(&values).unwrap();
            two
        });
        assert_eq!(two.count_once(), once_sorted);
        (t, cpu)
    });
    println!(
        "| 2-bitmap load, insert_batch (prefetched, in input order), 1 thread | {t:.2} s | {cpu:.2} s | {:.1} ns/value | |",
        per(t)
    );
    for threads in [1, 2] {
        let p = pool(threads);
        let (t_floor, cpu_floor) = medians_of(reps, || {
            let (sum, t, cpu) = timed(false, || p.install(|| rmw_floor(&values, threads)));
            // Each byte counts its values mod 256; no byte of random data sees 256 of them.
            assert_eq!(sum, n as u64);
            (t, cpu)
        });
        println!(
            "| floor: random read-modify-write of one byte a value in 1 GiB (prefetched, split by high bits), {threads} thread(s) | {t_floor:.2} s | {cpu_floor:.2} s | {:.1} ns/value | |",
            per(t_floor)
        );
        let (t_load, cpu_load) = medians_of(reps, || {
            let (two, t, cpu) = timed(false, || {
                let mut two = TwoBitmap::full_u32().unwrap();
                p.install(|| two.par_insert_batch(&values)).unwrap();
                two
            });
            assert_eq!(two.count_once(), once_sorted);
            (t, cpu)
        });
        println!(
            "| 2-bitmap load, par_insert_batch (grouped by 1 MiB region), {threads} thread(s) | {t_load:.2} s | {cpu_load:.2} s | {:.1} ns/value | load/floor {:.2}x |",
            per(t_load),
            t_load / t_floor
        );
    }
    // The in-memory plan of `ints unique` in-process: values grouped by range, each range
    // counted in a 1 MiB 2-bitmap.
    for threads in [1, 2] {
        let p = pool(threads);
        let (t, cpu) = medians_of(reps, || {
            let (once, t, cpu) = timed(false, || {
                p.install(|| {
                    let buckets = RangeBuckets::par_new(&[&values], 10).unwrap();
                    (0..buckets.buckets())
                        .into_par_iter()
                        .with_min_len(64)
                        .map_init(
                            || TwoBitmap::new(buckets.span()).unwrap(),
                            |t, b| {
                                t.clear();
                                t.insert_bucket(&buckets, b).unwrap();
                                t.count_once()
                            },
                        )
                        .sum::<u64>()
                })
            });
            assert_eq!(once, once_sorted);
            (t, cpu)
        });
        println!(
            "| RangeBuckets (1024 ranges) + a 1 MiB 2-bitmap per range, count once, in-process, {threads} thread(s) | {t:.2} s | {cpu:.2} s | {:.1} ns/value | sort + scan / this: {:.2}x (CPU {:.2}x) |",
            per(t),
            t_sort[threads] / t,
            cpu_sort[threads] / cpu
        );
    }

    // End to end through the command line.
    match cli() {
        Some(bin) => {
            for threads in [1, 2] {
                check_cli_output(&bin, &file, threads, &sorted);
                let mut counts = Vec::new();
                let (t, cpu) = medians_of(reps, || {
                    let (c, t, cpu) = run_cli(&bin, &file, threads, true);
                    counts.push(c);
                    (t, cpu)
                });
                assert!(counts.iter().all(|c| *c == once_sorted.to_string()));
                println!(
                    "| `bloomforge --threads {threads} ints unique --format u32le --count FILE` | {t:.2} s | {cpu:.2} s | {:.1} ns/value | sort + scan / unique: {:.2}x (CPU {:.2}x) |",
                    per(t),
                    t_sort[threads] / t,
                    cpu_sort[threads] / cpu
                );
                let (t, cpu) = medians_of(reps, || {
                    let (_, t, cpu) = run_cli(&bin, &file, threads, false);
                    (t, cpu)
                });
                println!(
                    "| `bloomforge --threads {threads} ints unique --format u32le FILE > /dev/null` ({once_sorted} lines) | {t:.2} s | {cpu:.2} s | {:.1} ns/value | sort + scan / unique: {:.2}x (CPU {:.2}x) |",
                    per(t),
                    t_sort[threads] / t,
                    cpu_sort[threads] / cpu
                );
            }
        }
        None => println!("(no target/release/bloomforge: `cargo build --release -p bloomforge-cli` for the end-to-end rows)"),
    }
    drop(sorted);

    // contains_batch in a 512 MiB bitmap vs the random-read floor.
    let mut bitmap = Bitmap::full_u32().unwrap();
    bitmap.par_insert_batch(&values).unwrap();
    let queries = xorshift(2, n);
    let mut out = vec![false; 1 << 20];
    let hits_plain = queries.iter().filter(|&&q| bitmap.contains(q)).count() as u64;
    let (t_contains, cpu_contains) = medians_of(reps, || {
        let (hits, t, cpu) = timed(false, || {
            let mut hits = 0u64;
            for c in queries.chunks(1 << 20) {
                bitmap.contains_batch(c, &mut out[..c.len()]).unwrap();
                hits += out[..c.len()].iter().filter(|&&h| h).count() as u64;
            }
            hits
        });
        assert_eq!(hits, hits_plain);
        (t, cpu)
    });
    let (t_read, cpu_read) = medians_of(reps, || {
        let (hits, t, cpu) = timed(false, || read_floor(bitmap.as_words(), &queries));
        assert_eq!(hits, hits_plain);
        (t, cpu)
    });
    println!(
        "| floor: random 8-byte read a query in 512 MiB (prefetched), 1 thread | {t_read:.2} s | {cpu_read:.2} s | {:.1} ns/query | |",
        per(t_read)
    );
    println!(
        "| contains_batch, 512 MiB bitmap, {n} random queries, 1 thread | {t_contains:.2} s | {cpu_contains:.2} s | {:.1} ns/query | contains/floor {:.2}x |",
        per(t_contains),
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
        let t = median_of(reps, || {
            let mut u = bitmap.clone();
            u.set_backend(backend).unwrap();
            let ((), t) = secs(|| u.union(&other).unwrap());
            assert_eq!(u.len(), want_len);
            t
        });
        println!(
            "| union of two 512 MiB bitmaps, {}, 1 thread | {:.1} ms | | | {:.1} GB/s (2 x 512 MiB read + 512 MiB written) |",
            backend.name(),
            t * 1e3,
            gb(3.0 * (512u64 << 20) as f64, t)
        );
    }
    // roaring: seen / seen-twice, once = seen - twice (PERF_ROARING=0 skips it: minutes).
    // roaring has no parallel insert, so one thread only.
    if std::env::var("PERF_ROARING").as_deref() != Ok("0") {
        let (once_roaring, t_roaring, cpu_roaring) = timed(false, || {
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
            "| roaring 0.10 (seen / seen-twice bitmaps; it has no parallel insert), 1 thread, one run | {t_roaring:.2} s | {cpu_roaring:.2} s | {:.1} ns/value | {:.0}x the sort + scan |",
            per(t_roaring),
            t_roaring / t_sort[1]
        );
    }
    println!("# load average at end {}", load_average());
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
