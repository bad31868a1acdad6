//! Side by side, in one run: this crate's cuckoo filter against the `cuckoofilter` and
//! `scalable_cuckoo_filter` crates and this project's counting, d-left and split-block
//! filters, at equal target FP (1 % and 0.1 %).
//!
//! ```text
//! cargo run --release -p bloomforge-cuckoo --example perf            # 1M keys
//! cargo run --release -p bloomforge-cuckoo --example perf -- 10000000 # 10M keys
//! cargo run --release -p bloomforge-cuckoo --example perf -- 100000000 1 0.01 # 1 build, 1 %
//! ```
//!
//! Arguments: keys (default 1M), builds per filter (default 3), target FPs (default
//! `0.01,0.001`).
//!
//! Per filter: bits/key, ns/key for insert, contains of members (+) and non-members (-),
//! batch contains where the filter has one, and remove; the measured FP. Each figure is
//! the median of fresh builds (3 by default); every timed pass checks its answers (all members
//! found, the FP near the filter's own rate, every remove accepted) and the run aborts on
//! a wrong answer. Keys: random `u64`, members and non-members disjoint (top bit).

use bloomforge_core::{Filter, SplitBlockBloomFilter};
use bloomforge_counting::CountingBloomFilter;
use bloomforge_cuckoo::{CuckooFilter, Fp16};
use bloomforge_dleft::DLeftCountingBloomFilter;
use std::hint::black_box;
use std::time::Instant;

fn arg(i: usize) -> Option<String> {
    std::env::args().nth(i)
}

fn reps() -> usize {
    arg(2).map_or(3, |a| {
        a.parse().expect("second argument: builds per filter")
    })
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[derive(Default, Clone)]
struct Row {
    name: String,
    bits_per_key: f64,
    insert: Vec<f64>,
    pos: Vec<f64>,
    neg: Vec<f64>,
    pos_batch: Vec<f64>,
    neg_batch: Vec<f64>,
    remove: Vec<f64>,
    fp: f64,
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    Some(s[s.len() / 2])
}

fn cell(v: &[f64]) -> String {
    median(v).map_or("-".into(), |x| format!("{x:.1}"))
}

/// Times `f` over `n` keys: ns per key.
fn time(n: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / n as f64
}

fn check_pos(name: &str, hits: usize, n: usize) {
    assert_eq!(hits, n, "WRONG ANSWER: {name} lost {} members", n - hits);
}

fn check_neg(name: &str, hits: usize, n: usize, limit: f64) -> f64 {
    let fp = hits as f64 / n as f64;
    assert!(fp <= limit, "WRONG ANSWER: {name} FP {fp} above {limit}");
    fp
}

/// One filter's passes. `$build` makes a fresh filter; `$ins`, `$has`, `$rm` are closures
/// over (&mut f | &f, key).
macro_rules! measure {
    ($row:expr, $keys:expr, $neg:expr, $limit:expr, $build:expr, $bits:expr,
     ins: $ins:expr, has: $has:expr, batch: $batch:expr, rm: $rm:expr) => {{
        let n = $keys.len();
        for _ in 0..reps() {
            let mut f = $build;
            $row.insert.push(time(n, || {
                for k in $keys {
                    $ins(&mut f, k);
                }
            }));
            $row.bits_per_key = $bits(&f) / n as f64;
            let mut hits = 0usize;
            $row.pos.push(time(n, || {
                for k in $keys {
                    hits += usize::from($has(&f, black_box(k)));
                }
            }));
            check_pos(&$row.name, hits, n);
            let mut hits = 0usize;
            $row.neg.push(time(n, || {
                for k in $neg {
                    hits += usize::from($has(&f, black_box(k)));
                }
            }));
            $row.fp = check_neg(&$row.name, hits, n, $limit);
            if let Some(batch) = $batch {
                let mut out = vec![false; n];
                $row.pos_batch.push(time(n, || batch(&f, $keys, &mut out)));
                check_pos(&$row.name, out.iter().filter(|&&b| b).count(), n);
                $row.neg_batch.push(time(n, || batch(&f, $neg, &mut out)));
                check_neg(&$row.name, out.iter().filter(|&&b| b).count(), n, $limit);
            }
            if let Some(rm) = $rm {
                $row.remove.push(time(n, || {
                    for k in $keys {
                        rm(&mut f, k);
                    }
                }));
            }
            drop(f);
        }
    }};
}

type Batch<F> = Option<fn(&F, &[u64], &mut [bool])>;
type Rm<F> = Option<fn(&mut F, &u64)>;

fn main() {
    let n: usize = arg(1).map_or(1_000_000, |a| a.parse().expect("first argument: keys"));
    let mut rng = 0x5eed_u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut rng) >> 1).collect();
    let neg: Vec<u64> = (0..n).map(|_| splitmix(&mut rng) | (1 << 63)).collect();
    let (keys, neg) = (&keys[..], &neg[..]);
    println!(
        "{n} keys, random u64, median of {} builds, ns/key; backend {:?}",
        reps(),
        bloomforge_core::Backend::detect()
    );
    let targets: Vec<f64> = arg(3).map_or(vec![0.01, 0.001], |a| {
        a.split(',')
            .map(|t| {
                t.parse()
                    .expect("third argument: FP targets, e.g. 0.01,0.001")
            })
            .collect()
    });
    for target in targets {
        let mut rows = Vec::new();
        // The limit a pass's measured FP must stay under: 3x the target (cuckoofilter's
        // fixed 8-bit fingerprints: 10 %).
        let limit = target * 3.0;

        let mut r = Row {
            name: "cuckoo (this crate)".into(),
            ..Row::default()
        };
        if CuckooFilter::new(n as u64, target).is_ok() {
            let b: Batch<CuckooFilter> = Some(|f, k, o| f.contains_batch(k, o).unwrap());
            let rm: Rm<CuckooFilter> = Some(|f, k| {
                f.remove(k).unwrap();
            });
            measure!(r, keys, neg, limit, CuckooFilter::new(n as u64, target).unwrap(),
                |f: &CuckooFilter| f.memory_bits() as f64,
                ins: |f: &mut CuckooFilter, k| f.insert(k).unwrap(),
                has: |f: &CuckooFilter, k| f.contains(k),
                batch: b, rm: rm);
            r.name = format!(
                "cuckoo (this crate, f=12, b={})",
                CuckooFilter::new(n as u64, target).unwrap().bucket_size()
            );
            rows.push(r);
        }
        type C16 = CuckooFilter<Fp16>;
        let mut r = Row {
            name: "cuckoo (this crate, f=16, b=4)".into(),
            ..Row::default()
        };
        let build16 = || {
            CuckooFilter::builder()
                .expected_items(n as u64)
                .bucket_size(4)
                .fingerprint::<Fp16>()
                .build()
                .unwrap()
        };
        let b: Batch<C16> = Some(|f, k, o| f.contains_batch(k, o).unwrap());
        let rm: Rm<C16> = Some(|f, k| {
            f.remove(k).unwrap();
        });
        measure!(r, keys, neg, limit, build16(), |f: &C16| f.memory_bits() as f64,
            ins: |f: &mut C16, k| f.insert(k).unwrap(),
            has: |f: &C16, k| f.contains(k),
            batch: b, rm: rm);
        rows.push(r);

        type Cf = cuckoofilter::CuckooFilter<std::collections::hash_map::DefaultHasher>;
        let mut r = Row {
            name: "cuckoofilter 0.5 (f=8, fixed)".into(),
            ..Row::default()
        };
        let rm: Rm<Cf> = Some(|f, k| assert!(f.delete(k), "WRONG ANSWER: cuckoofilter delete"));
        measure!(r, keys, neg, 0.1,
            Cf::with_capacity((n as f64 / 0.95).ceil() as usize),
            |f: &Cf| f.memory_usage() as f64 * 8.0,
            ins: |f: &mut Cf, k| f.add(k).unwrap(),
            has: |f: &Cf, k| f.contains(k),
            batch: None::<fn(&Cf, &[u64], &mut [bool])>, rm: rm);
        rows.push(r);

        type Sc = scalable_cuckoo_filter::ScalableCuckooFilter<u64>;
        let mut r = Row {
            name: "scalable_cuckoo_filter 0.3".into(),
            ..Row::default()
        };
        let rm: Rm<Sc> = Some(|f, k| assert!(f.remove(k), "WRONG ANSWER: scalable remove"));
        measure!(r, keys, neg, limit, Sc::new(n, target), |f: &Sc| f.bits() as f64,
            ins: |f: &mut Sc, k| f.insert(k),
            has: |f: &Sc, k| f.contains(k),
            batch: None::<fn(&Sc, &[u64], &mut [bool])>, rm: rm);
        rows.push(r);

        let mut r = Row {
            name: "counting (4-bit, blocked)".into(),
            ..Row::default()
        };
        let b: Batch<CountingBloomFilter> = Some(|f, k, o| f.contains_batch(k, o).unwrap());
        let rm: Rm<CountingBloomFilter> = Some(|f, k| {
            f.remove(k).unwrap();
        });
        measure!(r, keys, neg, limit,
            CountingBloomFilter::with_false_pos(target).expected_items(n as u64).unwrap(),
            |f: &CountingBloomFilter| f.memory_bits() as f64,
            ins: |f: &mut CountingBloomFilter, k| { f.insert(k); },
            has: |f: &CountingBloomFilter, k| f.contains(k),
            batch: b, rm: rm);
        rows.push(r);

        type Dl = DLeftCountingBloomFilter;
        let mut r = Row {
            name: "d-left".into(),
            ..Row::default()
        };
        let b: Batch<Dl> = Some(|f, k, o| f.contains_batch(k, o).unwrap());
        let rm: Rm<Dl> = Some(|f, k| {
            f.remove(k).unwrap();
        });
        measure!(r, keys, neg, limit,
            Dl::with_false_pos(target).expected_items(n as u64).unwrap(),
            |f: &Dl| f.memory_bits() as f64,
            ins: |f: &mut Dl, k| { f.insert(k).unwrap(); },
            has: |f: &Dl, k| f.contains(k),
            batch: b, rm: rm);
        rows.push(r);

        type Sb = SplitBlockBloomFilter;
        let mut r = Row {
            name: "split-block (no delete)".into(),
            ..Row::default()
        };
        let b: Batch<Sb> = Some(|f, k, o| f.contains_batch(k, o).unwrap());
        measure!(r, keys, neg, limit,
            Sb::with_false_pos(target).expected_items(n as u64).unwrap(),
            |f: &Sb| Filter::<u64>::memory_bits(f) as f64,
            ins: |f: &mut Sb, k| { f.insert(k); },
            has: |f: &Sb, k| f.contains(k),
            batch: b, rm: None::<fn(&mut Sb, &u64)>);
        rows.push(r);

        println!("\n### target FP {}%, {n} keys\n", target * 100.0);
        println!("| filter | bits/key | FP % | insert | contains + | contains - | batch + | batch - | remove |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for r in &rows {
            println!(
                "| {} | {:.2} | {:.3} | {} | {} | {} | {} | {} | {} |",
                r.name,
                r.bits_per_key,
                r.fp * 100.0,
                cell(&r.insert),
                cell(&r.pos),
                cell(&r.neg),
                cell(&r.pos_batch),
                cell(&r.neg_batch),
                cell(&r.remove)
            );
        }
        let get = |prefix: &str| rows.iter().find(|r| r.name.starts_with(prefix));
        if let (Some(c), Some(sb), Some(cf), Some(dl)) = (
            get("cuckoo (this crate, f=12"),
            get("split-block"),
            get("cuckoofilter"),
            get("d-left"),
        ) {
            let pos = |r: &Row| median(&r.pos).unwrap_or(f64::NAN);
            let neg = |r: &Row| median(&r.neg).unwrap_or(f64::NAN);
            println!(
                "\nratios (f=12 row): contains+ / split-block {:.2}x, contains- / split-block {:.2}x; \
                 cuckoofilter / ours: contains+ {:.1}x, contains- {:.1}x; bits/key ours / d-left {:.2}",
                pos(c) / pos(sb),
                neg(c) / neg(sb),
                pos(cf) / pos(c),
                neg(cf) / neg(c),
                c.bits_per_key / dl.bits_per_key
            );
        }
    }
}
