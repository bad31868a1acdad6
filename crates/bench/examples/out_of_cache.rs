//! Out-of-cache timing: the figures behind the 100M-key table of `docs/benchmarks.md`, in
//! one process.
//!
//! ```sh
//! cargo run --release -p bloomforge-bench --example out_of_cache            # 100M keys
//! cargo run --release -p bloomforge-bench --example out_of_cache -- 20000000 # smaller
//! cargo run --release -p bloomforge-bench --example out_of_cache -- 100000000 1,4,16
//! ```
//!
//! `n` random `u64` members at 10 bits per key (k = 7 blocked, 8 split-block), and for
//! the counting comparison both filters sized for 1 %. Measures, median of 3 runs, ns/key:
//! the physical floor (independent random 64-byte reads of a buffer of the filter's size),
//! `insert_batch`, `contains_batch` (members, non-members), single-key `contains`, the
//! blocked filter read back with `from_bytes` and queried again,
//! sbbf-rs-safe and fastbloom single-key queries, and bulk loads (`par_insert_batch`:
//! blocked partitioned and atomic, split-block partitioned) on pinned pools of 1 and 2
//! threads, or of the comma-separated counts given second (a scaling curve on a larger
//! machine; the speedup column is the last count's against the first). Every timed run checks its
//! answers: a member reported absent, or a count of positives that changes between runs,
//! stops the program.

use bloomforge_bench::measure::{floor_buffer, pinned_pool, random_line_reads};
use bloomforge_bench::timing::{measure, measure_with, CpuClock, Timing};
use bloomforge_bench::workload::random_u64;
use bloomforge_bench::BenchError;
use bloomforge_core::{AtomicBlockedBloomFilter, BlockedBloomFilter, SplitBlockBloomFilter};
use bloomforge_counting::CountingBloomFilter;
use std::hint::black_box;

const REPS: usize = 3;
/// Keys per query pass (members and non-members each): enough to cross every page.
const QUERIES: usize = 10_000_000;

fn check(what: &str, ok: bool) -> Result<(), BenchError> {
    if ok {
        Ok(())
    } else {
        Err(BenchError::WrongAnswer {
            filter: what.into(),
            workload: "random-u64".into(),
            what: "a member was reported absent or a positive count changed".into(),
        })
    }
}

fn row(name: &str, t: &Timing, floor: f64) {
    println!(
        "| {name} | {:.1} | {:.2} |",
        t.ns_per_key,
        t.ns_per_key / floor
    );
}

/// Times a batch query over `keys`; `expect` = the number of positives every run must give
/// (`None`: measured on the first run, then required of the others).
fn time_batch(
    name: &str,
    keys: &[u64],
    expect: Option<usize>,
    query: impl Fn(&[u64], &mut [bool]),
) -> Result<Timing, BenchError> {
    let mut out = vec![false; keys.len()];
    let mut seen = expect;
    let (t, _) = measure(1, REPS, keys.len(), CpuClock::Thread, || {
        query(keys, &mut out);
        let hits = out.iter().filter(|&&b| b).count();
        check(name, *seen.get_or_insert(hits) == hits)
    })?;
    Ok(t)
}

/// Times a single-key query loop over `keys`, with the same answer rule as [`time_batch`].
fn time_single(
    name: &str,
    keys: &[u64],
    expect: Option<usize>,
    query: impl Fn(u64) -> bool,
) -> Result<Timing, BenchError> {
    let mut seen = expect;
    let (t, _) = measure(1, REPS, keys.len(), CpuClock::Thread, || {
        let hits = keys.iter().filter(|&&k| query(black_box(k))).count();
        check(name, *seen.get_or_insert(hits) == hits)
    })?;
    Ok(t)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(a) => a.replace('_', "").parse()?,
        None => 100_000_000,
    };
    let pools: Vec<usize> = match std::env::args().nth(2) {
        Some(a) => a
            .split(',')
            .map(|t| t.trim().parse::<usize>())
            .collect::<Result<_, _>>()?,
        None => vec![1, 2],
    };
    if pools.is_empty() || pools.contains(&0) {
        return Err("thread counts must be at least 1".into());
    }
    let q = QUERIES.min(n);
    let w = random_u64(n, q, 0x5eed);
    let members = &w.members[..q];
    let non = &w.non_members[..];
    let bits = n as u64 * 10;

    println!("n = {n} random u64 keys, 10 bits/key ({} MB filters), {q} queries per pass, median of {REPS}\n", bits / 8_000_000);
    println!("| operation | ns/key | / floor |\n|---|---:|---:|");

    let buf = floor_buffer(bits / 8);
    let (floor, _) = measure(1, REPS, q, CpuClock::Thread, || {
        Ok(black_box(random_line_reads(black_box(&buf), q, 7)))
    })?;
    drop(buf);
    let f0 = floor.ns_per_key;
    row(
        &format!(
            "floor: independent random 64-byte reads (prefetched {} ahead), same size",
            bloomforge_core::batch::PREFETCH_AHEAD
        ),
        &floor,
        f0,
    );

    // Blocked: insert_batch into a fresh filter, then queries.
    let (t, blocked) = measure_with(0, REPS, n, CpuClock::Thread, empty_blocked(bits), |f| {
        f.insert_batch(&w.members);
        Ok(())
    })?;
    row("`BlockedBloomFilter::insert_batch`", &t, f0);
    let t = time_batch("blocked", members, Some(q), |k, o| {
        blocked.contains_batch(k, o).expect("lengths match")
    })?;
    row("`BlockedBloomFilter::contains_batch`, members", &t, f0);
    let t = time_batch("blocked", non, None, |k, o| {
        blocked.contains_batch(k, o).expect("lengths match")
    })?;
    row("`BlockedBloomFilter::contains_batch`, non-members", &t, f0);
    let t = time_single("blocked", members, Some(q), |k| blocked.contains(&k))?;
    row(
        "`BlockedBloomFilter::contains`, single key, members",
        &t,
        f0,
    );
    let t = time_single("blocked", non, None, |k| blocked.contains(&k))?;
    row(
        "`BlockedBloomFilter::contains`, single key, non-members",
        &t,
        f0,
    );
    // Read back from its bytes, the filter must be as fast as the one built in place (its
    // memory is allocated the same way: huge pages, filled on every thread).
    let bytes = blocked.to_bytes();
    let mut loads = Vec::with_capacity(REPS);
    let mut loaded = None;
    for _ in 0..REPS {
        let started = std::time::Instant::now();
        let f = BlockedBloomFilter::from_bytes(black_box(&bytes))
            .map_err(|e| BenchError::Config(e.to_string()))?;
        loads.push(started.elapsed().as_secs_f64());
        loaded = Some(f);
    }
    loads.sort_by(f64::total_cmp);
    let loaded = loaded.ok_or_else(|| BenchError::Config("no load ran".into()))?;
    check("blocked from_bytes", loaded == blocked)?;
    println!(
        "| `BlockedBloomFilter::from_bytes` of those {} MB (wall, median) | {:.0} ms | |",
        bytes.len() / 1_000_000,
        loads[loads.len() / 2] * 1e3
    );
    drop(bytes);
    let t = time_batch("blocked", members, Some(q), |k, o| {
        loaded.contains_batch(k, o).expect("lengths match")
    })?;
    row(
        "`BlockedBloomFilter::contains_batch` of that copy, members",
        &t,
        f0,
    );
    drop(loaded);

    let empty = || {
        SplitBlockBloomFilter::with_num_bits(bits)
            .hashes(8)
            .map_err(|e| BenchError::Config(e.to_string()))
    };
    let (t, split) = measure_with(0, REPS, n, CpuClock::Thread, empty, |f| {
        f.insert_batch(&w.members);
        Ok(())
    })?;
    row("`SplitBlockBloomFilter::insert_batch`", &t, f0);
    let t = time_batch("split-block", members, Some(q), |k, o| {
        split.contains_batch(k, o).expect("lengths match")
    })?;
    row("`SplitBlockBloomFilter::contains_batch`, members", &t, f0);
    let t = time_batch("split-block", non, None, |k, o| {
        split.contains_batch(k, o).expect("lengths match")
    })?;
    row(
        "`SplitBlockBloomFilter::contains_batch`, non-members",
        &t,
        f0,
    );
    let t = time_single("split-block", non, None, |k| split.contains(&k))?;
    row(
        "`SplitBlockBloomFilter::contains`, single key, non-members",
        &t,
        f0,
    );
    // `split` stays as the reference for the split-block bulk load below.

    // Peers, single key (neither has a batch API).
    // `new(bits_per_key, num_keys)`.
    let mut sbbf = sbbf_rs_safe::Filter::new(10, n);
    let xxh = |k: u64| xxhash_rust::xxh64::xxh64(&k.to_le_bytes(), 0);
    w.members.iter().for_each(|&k| {
        sbbf.insert_hash(xxh(k));
    });
    let t = time_single("sbbf-rs-safe", members, Some(q), |k| {
        sbbf.contains_hash(xxh(k))
    })?;
    row(
        "sbbf-rs-safe `contains_hash(xxh64)`, single key, members",
        &t,
        f0,
    );
    let t = time_single("sbbf-rs-safe", non, None, |k| sbbf.contains_hash(xxh(k)))?;
    row(
        "sbbf-rs-safe `contains_hash(xxh64)`, single key, non-members",
        &t,
        f0,
    );
    drop(sbbf);
    let mut fast = fastbloom::BloomFilter::with_num_bits(bits as usize).hashes(7);
    w.members.iter().for_each(|k| {
        fast.insert(k);
    });
    let t = time_single("fastbloom", non, None, |k| fast.contains(&k))?;
    row("fastbloom `contains`, single key, non-members", &t, f0);
    drop(fast);

    // Counting vs blocked, both at 1 %.
    let mut at1 = BlockedBloomFilter::with_false_pos(0.01).expected_items(n as u64)?;
    at1.insert_batch(&w.members);
    let tb = time_batch("blocked 1%", non, None, |k, o| {
        at1.contains_batch(k, o).expect("lengths match")
    })?;
    drop(at1);
    let mut counting = CountingBloomFilter::with_false_pos(0.01).expected_items(n as u64)?;
    counting.insert_batch(&w.members);
    time_batch("counting", members, Some(q), |k, o| {
        counting.contains_batch(k, o).expect("lengths match")
    })?;
    let tc = time_batch("counting", non, None, |k, o| {
        counting.contains_batch(k, o).expect("lengths match")
    })?;
    drop(counting);
    println!(
        "| `CountingBloomFilter::contains_batch` (1 %) vs blocked (1 %), non-members | {:.1} vs {:.1} | {:.2}x blocked |",
        tc.ns_per_key,
        tb.ns_per_key,
        tc.ns_per_key / tb.ns_per_key
    );

    // Bulk loads on pinned pools.
    let cols: String = pools.iter().map(|t| format!(" {t} thr ns/key |")).collect();
    let rule: String = pools.iter().map(|_| "---:|").collect();
    println!("\n| bulk load |{cols} speedup |\n|---|{rule}---:|");
    let mut plain = Vec::new();
    let mut atomic = Vec::new();
    let mut plain_split = Vec::new();
    for &threads in &pools {
        let pool = pinned_pool(threads)?;
        let members = &w.members[..];
        plain.push(bulk(
            &pool,
            n,
            "blocked par_insert_batch",
            empty_blocked(bits),
            |f| f.par_insert_batch(members),
            |f| f == blocked,
        )?);
        atomic.push(bulk(
            &pool,
            n,
            "atomic par_insert_batch",
            empty_atomic(bits),
            |f| f.par_insert_batch(members),
            |f| f.into_inner() == blocked,
        )?);
        plain_split.push(bulk(
            &pool,
            n,
            "split-block par_insert_batch",
            empty,
            |f| f.par_insert_batch(members),
            |f| f == split,
        )?);
    }
    for (name, v) in [
        (
            "`BlockedBloomFilter::par_insert_batch` (partitioned)",
            &plain,
        ),
        ("`AtomicBlockedBloomFilter::par_insert_batch`", &atomic),
        (
            "`SplitBlockBloomFilter::par_insert_batch` (partitioned)",
            &plain_split,
        ),
    ] {
        let cells: String = v.iter().map(|t| format!(" {t:.1} |")).collect();
        let speedup = v[0] / v[v.len() - 1];
        println!("| {name} |{cells} {speedup:.2}x |");
    }
    Ok(())
}

/// Median ns/key of `REPS` loads of `n` keys (`load`, run on `pool`) into a fresh filter
/// from `empty`; the last filter must pass `same` (equal to the sequential build).
fn bulk<F: Send>(
    pool: &rayon::ThreadPool,
    n: usize,
    name: &str,
    empty: impl FnMut() -> Result<F, BenchError>,
    load: impl Fn(&mut F) + Sync,
    same: impl FnOnce(F) -> bool,
) -> Result<f64, BenchError> {
    let (t, f) = measure_with(0, REPS, n, CpuClock::Process, empty, |f| {
        pool.install(|| load(f));
        Ok(())
    })?;
    check(name, same(f))?;
    Ok(t.ns_per_key)
}

fn empty_blocked(bits: u64) -> impl FnMut() -> Result<BlockedBloomFilter, BenchError> {
    move || {
        BlockedBloomFilter::with_num_bits(bits)
            .hashes(7)
            .map_err(|e| BenchError::Config(e.to_string()))
    }
}

fn empty_atomic(bits: u64) -> impl FnMut() -> Result<AtomicBlockedBloomFilter, BenchError> {
    move || {
        AtomicBlockedBloomFilter::with_num_bits(bits)
            .hashes(7)
            .map_err(|e| BenchError::Config(e.to_string()))
    }
}
