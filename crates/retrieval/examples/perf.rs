//! Side-by-side timings that check every answer they time: `BinaryFuseFilter<u8>` build
//! (on 2 threads and on 1; medians of 5 interleaved rounds) and lookup, and
//! `BloomierFilter::get` (8-bit values, 8-bit fingerprints), vs `xorf::BinaryFuse8` at 1M
//! and 10M keys (medians of 5 interleaved rounds), and our batch lookups
//! (`contains_batch`, `get_batch`) against xorf's single ones (it has no batch query); the 10M-key build with `.threads(2)`
//! and on a pinned 2-thread pool against xorf's (medians of 7 interleaved rounds); the
//! count-min sketch against the counting filter (both tables built before the clock starts,
//! 2 warm-up rounds, medians of the 5 after them); `Iblt::list_entries` of a 10k difference
//! among 100k and among 10M keys.
//!
//! `cargo run --release -p bloomforge-retrieval --example perf`; `PERF_ONLY=` one of
//! `fuse`, `build`, `approx`, `iblt` runs only that part (`PERF_APPROX_ONLY=1` = `approx`).
//! Each table starts with the load average (`/proc/loadavg`) when it began.
//!
//! xorf takes `u64` keys as they are (it mixes them itself); ours hashes each key with
//! core's `DefaultHasher` (foldhash) first, which its lookup time includes.

use std::hint::black_box;
use std::time::Instant;

use bloomforge_core::hash::mix64;
use bloomforge_core::parallel::pinned_thread_pool;
use bloomforge_counting::CountingBloomFilter;
use bloomforge_retrieval::{BinaryFuseFilter, BloomierFilter, CellLayout, CountMin, Iblt};
use xorf::Filter;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let r = f();
        times.push(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    (median(times), last.expect("runs > 0"))
}

/// The load average now (the first three fields of `/proc/loadavg`).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let only = std::env::var("PERF_ONLY")
        .ok()
        .or_else(|| std::env::var_os("PERF_APPROX_ONLY").map(|_| "approx".to_string()));
    let run = |part: &str| only.as_deref().is_none_or(|o| o == part);
    if run("fuse") {
        fuse_vs_xorf();
    }
    if run("build") {
        build_10m_two_threads();
    }
    if run("approx") {
        approximator_vs_counting();
    }
    if run("iblt") {
        iblt_list();
    }
}

/// The Bloomier value of a key in these tables: its low byte.
fn value_of(k: u64) -> u32 {
    (k & 0xff) as u32
}

fn fuse_vs_xorf() {
    println!("load average {}", load());
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    };
    let (one, two) = (pool(1), pool(2));
    println!("| keys | build ours, 2 threads (s) | build ours, 1 thread (s) | build xorf (s) | build xorf / ours (2 threads) | lookup ours (ns/key) | lookup xorf (ns/key) | lookup ours / xorf | ours, pre-hashed (ns/key) | Bloomier get (ns/key) | Bloomier get / xorf | xorf BinaryFuse16 (ns/key) | Bloomier get / xorf BinaryFuse16 | FP ours | FP xorf | FP Bloomier | contains_batch ours (ns/key) | / xorf | Bloomier get_batch (ns/key) | / xorf BinaryFuse16 |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for n in [1_000_000u64, 10_000_000] {
        let keys: Vec<u64> = (0..n).map(mix64).collect();
        let absent: Vec<u64> = (n..2 * n).map(mix64).collect();
        // Builds interleaved (ours on 2 threads, ours on 1, xorf), 5 rounds, medians: a
        // burst of load on the shared machine then hits all three alike.
        let (mut t2, mut t1, mut tx, mut ratios) = (vec![], vec![], vec![], vec![]);
        let (mut ours, mut theirs) = (None, None);
        for _ in 0..5 {
            let build = || BinaryFuseFilter::<u8>::build_from(&keys, 0).unwrap();
            let (a, f) = time(1, || two.install(build));
            let (b, g) = time(1, || one.install(build));
            assert_eq!(f.to_bytes(), g.to_bytes(), "1 and 2 threads build alike");
            let (c, x) = time(1, || xorf::BinaryFuse8::try_from(&keys[..]).unwrap());
            t2.push(a);
            t1.push(b);
            tx.push(c);
            ratios.push(c / a);
            (ours, theirs) = (Some(f), Some(x));
        }
        let (ours, theirs) = (ours.expect("built"), theirs.expect("built"));
        let (b_ours, b_one, b_xorf, ratio) = (median(t2), median(t1), median(tx), median(ratios));
        let count =
            |f: &dyn Fn(&u64) -> bool, ks: &[u64]| ks.iter().filter(|k| f(black_box(k))).count();
        let hasher = ours.hasher();
        let hashes: Vec<u64> = keys
            .iter()
            .map(|k| std::hash::BuildHasher::hash_one(hasher, k))
            .collect();
        // A Bloomier filter of the same keys: 8-bit values (each key's low byte), 8-bit
        // fingerprints (FP 2^-8, as the binary fuse filters), 16-bit cells.
        let pairs: Vec<(u64, u32)> = keys.iter().map(|&k| (k, value_of(k))).collect();
        let bloomier = BloomierFilter::build(&pairs, 8, 8).unwrap();
        drop(pairs);
        // xorf's filter of the Bloomier's cell width (16 bits, the same memory).
        let wide = xorf::BinaryFuse16::try_from(&keys[..]).unwrap();
        // Through the same `count` as the membership lookups, so every lookup gets its
        // key the same way (a `&u64` into the key array).
        let got = |ks: &[u64]| count(&|k| bloomier.get(k) == Some(value_of(*k)), ks);
        // Lookups interleaved too, 5 rounds, medians (and the median of per-round ratios).
        let (mut lo, mut lx, mut lh, mut lr) = (vec![], vec![], vec![], vec![]);
        let (mut lb, mut lbr, mut lw, mut lwr) = (vec![], vec![], vec![], vec![]);
        let (mut bo, mut bor, mut bb, mut bbr) = (vec![], vec![], vec![], vec![]);
        let mut hit_out = vec![false; keys.len()];
        let mut values = vec![None; keys.len()];
        for _ in 0..5 {
            let (a, hits) = time(1, || count(&|k| ours.contains(k), &keys));
            assert_eq!(hits as u64, n, "ours: a member was missed");
            let (b, hits) = time(1, || count(&|k| theirs.contains(k), &keys));
            assert_eq!(hits as u64, n, "xorf: a member was missed");
            let (c, hits) = time(1, || count(&|h| ours.contains_hash(*h), &hashes));
            assert_eq!(hits as u64, n, "ours (hashes): a member was missed");
            let (d, right) = time(1, || got(&keys));
            assert_eq!(right as u64, n, "Bloomier: a member's value was wrong");
            let (e, hits) = time(1, || count(&|k| wide.contains(k), &keys));
            assert_eq!(hits as u64, n, "xorf BinaryFuse16: a member was missed");
            lw.push(e);
            lwr.push(d / e);
            let (g, ()) = time(1, || {
                ours.contains_batch(black_box(&keys), &mut hit_out).unwrap()
            });
            assert!(
                hit_out.iter().all(|&h| h),
                "ours (batch): a member was missed"
            );
            let (i, ()) = time(1, || {
                bloomier.get_batch(black_box(&keys), &mut values).unwrap()
            });
            assert!(
                keys.iter()
                    .zip(&values)
                    .all(|(&k, &v)| v == Some(value_of(k))),
                "Bloomier (batch): a member's value was wrong"
            );
            bo.push(g);
            bor.push(g / b);
            bb.push(i);
            bbr.push(i / e);
            lo.push(a);
            lx.push(b);
            lh.push(c);
            lr.push(a / b);
            lb.push(d);
            lbr.push(d / b);
        }
        let (l_ours, l_xorf, l_hash, l_ratio) = (median(lo), median(lx), median(lh), median(lr));
        let (l_bloomier, l_bloomier_ratio) = (median(lb), median(lbr));
        let (l_wide, l_wide_ratio) = (median(lw), median(lwr));
        let fp_bloomier =
            absent.iter().filter(|k| bloomier.get(*k).is_some()).count() as f64 / n as f64;
        assert!(
            (fp_bloomier - 1.0 / 256.0).abs() < 0.0004,
            "Bloomier FP {fp_bloomier}"
        );
        let fp_ours = count(&|k| ours.contains(k), &absent) as f64 / n as f64;
        let fp_xorf = count(&|k| theirs.contains(k), &absent) as f64 / n as f64;
        // 2^-8 = 0.0039; at 1M trials six standard deviations are 0.0004.
        assert!((fp_ours - 1.0 / 256.0).abs() < 0.0004, "ours FP {fp_ours}");
        assert!((fp_xorf - 1.0 / 256.0).abs() < 0.0004, "xorf FP {fp_xorf}");
        println!(
            "| {n} | {b_ours:.3} | {b_one:.3} | {b_xorf:.3} | {ratio:.2} | {:.2} | {:.2} | {l_ratio:.2} | {:.2} | {:.2} | {l_bloomier_ratio:.2} | {:.2} | {l_wide_ratio:.2} | {fp_ours:.5} | {fp_xorf:.5} | {fp_bloomier:.5} | {:.2} | {:.2} | {:.2} | {:.2} |",
            l_ours * 1e9 / n as f64,
            l_xorf * 1e9 / n as f64,
            l_hash * 1e9 / n as f64,
            l_bloomier * 1e9 / n as f64,
            l_wide * 1e9 / n as f64,
            median(bo) * 1e9 / n as f64,
            median(bor),
            median(bb) * 1e9 / n as f64,
            median(bbr),
        );
    }
    println!("load average {} (end)", load());
}

/// The 10M-key build: ours with the builder's `.threads(2)` (its own pool, made per
/// build), ours on a pinned 2-thread pool (core's `pinned_thread_pool`, made once), and
/// xorf's (one thread), interleaved, 7 rounds; medians and the median of per-round ratios.
fn build_10m_two_threads() {
    let n = 10_000_000u64;
    let keys: Vec<u64> = (0..n).map(mix64).collect();
    let pinned = pinned_thread_pool(2).expect("a pinned pool");
    println!("\nload average {}", load());
    let (mut tb, mut tp, mut tx, mut rb, mut rp) = (vec![], vec![], vec![], vec![], vec![]);
    let mut reference: Option<Vec<u8>> = None;
    for _ in 0..7 {
        let (a, f) = time(1, || {
            BinaryFuseFilter::<u8>::builder()
                .threads(2)
                .build(&keys)
                .unwrap()
        });
        let (b, g) = time(1, || {
            pinned.install(|| BinaryFuseFilter::<u8>::build_from(&keys, 0).unwrap())
        });
        let (c, x) = time(1, || xorf::BinaryFuse8::try_from(&keys[..]).unwrap());
        let bytes = f.to_bytes();
        assert_eq!(bytes, g.to_bytes(), "the two builds agree");
        if let Some(r) = &reference {
            assert_eq!(r, &bytes, "every round builds the same bytes");
        }
        reference = Some(bytes);
        assert!(keys.iter().all(|k| f.contains(k)), "ours: a member missed");
        assert!(keys.iter().all(|k| x.contains(k)), "xorf: a member missed");
        tb.push(a);
        tp.push(b);
        tx.push(c);
        rb.push(c / a);
        rp.push(c / b);
    }
    println!("| keys | ours .threads(2) (s) | ours, pinned 2-thread pool (s) | xorf (s) | xorf / ours .threads(2) | xorf / ours pinned |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {n} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} |",
        median(tb),
        median(tp),
        median(tx),
        median(rb),
        median(rp)
    );
    println!("load average {} (end)", load());
}

/// `Iblt::list_entries` of a 10k difference (5000 keys only in each table) among 100k
/// keys (as before) and among 10M keys: the time of the listing alone (median of 3;
/// building the tables is not timed), answers checked exactly.
fn iblt_list() {
    println!("\nload average {}", load());
    for total in [100_000u64, 10_000_000] {
        iblt_list_among(total);
    }
    println!("load average {} (end)", load());
}

fn iblt_list_among(total: u64) {
    let d = 10_000usize;
    let mut a = Iblt::with_expected_diff(d).unwrap();
    let mut b = Iblt::with_expected_diff(d).unwrap();
    // Every key in both but one in `total / 5000` (half only in a, half only in b).
    let step = total / 5000;
    assert_eq!(step % 2, 0);
    for i in 0..total {
        if i % step != 0 {
            a.insert_hash(mix64(i));
        }
        if i % step != 1 {
            b.insert_hash(mix64(i));
        }
    }
    let (ts, diff) = time(3, || a.subtract(&b).unwrap());
    let (t, (pa, pb)) = time(3, || diff.list_entries().unwrap());
    assert_eq!((pa.len(), pb.len()), (5000, 5000));
    let want = |r: u64| {
        let mut v: Vec<u64> = (0..total).filter(|i| i % step == r).map(mix64).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        (pa, pb),
        (want(1), want(0)),
        "the listed difference must be exact"
    );
    println!(
        "IBLT: {total} keys a table, list_entries of a {d}-entry difference in {} cells: {:.3} ms (median of 3); subtract {:.3} ms",
        diff.cells(),
        t * 1e3,
        ts * 1e3
    );
}

/// A count-min sketch (`CompactApproximator<SumLattice<u8>>`) against a counting Bloom
/// filter (1 %), insert and count of the same keys (5 interleaved rounds, medians; answers
/// checked: every member counted at least once): in subtables with as many counters and
/// probes as the counting filter, and in blocked lines sized by `new(n, 0.01)` (its own
/// 1 % formula).
/// Rounds run before the 5 that count: the first rounds on fresh tables can run up to 4x
/// slower (measured on an AMD EPYC Zen 5, 2 cores: 27.9, 17.5, 14.2, 8.1, 6.9 ns a
/// blocked insert at 10^6 keys, the counting filter 13.2 to 6.4).
const WARM_UP: usize = 2;

fn approximator_vs_counting() {
    println!("\nload average {}", load());
    println!("\n| keys | layout | counters | k | insert ours (ns/key) | insert counting (ns/key) | ours / counting | get ours (ns/key) | count counting (ns/key) | ours / counting |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut batch_rows = Vec::new();
    for (n, layout) in [1_000_000u64, 10_000_000]
        .into_iter()
        .flat_map(|n| [(n, CellLayout::Subtables), (n, CellLayout::Blocked)])
    {
        let keys: Vec<u64> = (0..n).map(mix64).collect();
        let shape = CountingBloomFilter::new(n, 0.01).unwrap();
        let make = || match layout {
            CellLayout::Subtables => CountMin::<u8>::with_seed(
                shape.num_counters() as usize,
                shape.num_hashes() as usize,
                0,
            )
            .unwrap(),
            CellLayout::Blocked => CountMin::<u8>::builder()
                .expected_items(n)
                .false_pos(0.01)
                .layout(CellLayout::Blocked)
                .build()
                .unwrap(),
        };
        let (m, k) = (make().cells(), make().num_hashes() as usize);
        // Both tables built and every page written before the clock starts: the timed
        // part is the inserts (ours is allocated zeroed and faults its pages in on first
        // touch, the counting filter's constructor writes them).
        let fresh = || {
            let mut a = make();
            a.clear();
            (a, CountingBloomFilter::new(n, 0.01).unwrap())
        };
        let (mut io, mut ic, mut go, mut gc, mut ri, mut rg) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..WARM_UP + 5 {
            let (mut ours, mut theirs) = fresh();
            let (a, ()) = time(1, || {
                for key in &keys {
                    ours.insert(black_box(key), 1);
                }
            });
            let (b, ()) = time(1, || {
                for key in &keys {
                    theirs.insert(black_box(key));
                }
            });
            let (c, low) = time(1, || {
                keys.iter().filter(|k| ours.get(black_box(*k)) == 0).count()
            });
            assert_eq!(low, 0, "ours: a member counted 0");
            let (d, low) = time(1, || {
                keys.iter()
                    .filter(|k| theirs.count(black_box(*k)).is_zero())
                    .count()
            });
            assert_eq!(low, 0, "counting: a member counted 0");
            io.push(a);
            ic.push(b);
            go.push(c);
            gc.push(d);
            ri.push(a / b);
            rg.push(c / d);
        }
        for v in [&mut io, &mut ic, &mut go, &mut gc, &mut ri, &mut rg] {
            v.drain(..WARM_UP);
        }
        // Batches: ours `insert_batch` / `get_batch` vs the counting filter's
        // `insert_batch` / `contains_batch` (it has no count batch).
        let pairs: Vec<(u64, u8)> = keys.iter().map(|&k| (k, 1)).collect();
        let (mut bo, mut bc, mut qo, mut qc, mut rbi, mut rbq) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..WARM_UP + 5 {
            let (mut ours, mut theirs) = fresh();
            let (a, ()) = time(1, || ours.insert_batch(black_box(&pairs)));
            let (b, ()) = time(1, || theirs.insert_batch(black_box(&keys)));
            let mut got = vec![0u8; keys.len()];
            let (c, ()) = time(1, || ours.get_batch(black_box(&keys), &mut got).unwrap());
            assert!(
                got.iter().all(|&g| g >= 1),
                "ours (batch): a member counted 0"
            );
            let mut hit = vec![false; keys.len()];
            let (d, ()) = time(1, || {
                theirs.contains_batch(black_box(&keys), &mut hit).unwrap()
            });
            assert!(hit.iter().all(|&h| h), "counting (batch): a member missed");
            bo.push(a);
            bc.push(b);
            qo.push(c);
            qc.push(d);
            rbi.push(a / b);
            rbq.push(c / d);
        }
        for v in [&mut bo, &mut bc, &mut qo, &mut qc, &mut rbi, &mut rbq] {
            v.drain(..WARM_UP);
        }
        let ns = |v: Vec<f64>| median(v) * 1e9 / n as f64;
        batch_rows.push(format!(
            "| {n} | {layout:?} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            ns(bo),
            ns(bc),
            median(rbi),
            ns(qo),
            ns(qc),
            median(rbq)
        ));
        println!(
            "| {n} | {layout:?} | {m} | {k} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            ns(io),
            ns(ic),
            median(ri),
            ns(go),
            ns(gc),
            median(rg)
        );
    }
    println!("\n| keys | layout | insert_batch ours (ns/key) | insert_batch counting (ns/key) | ours / counting | get_batch ours (ns/key) | contains_batch counting (ns/key) | ours / counting |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in batch_rows {
        println!("{r}");
    }
}
