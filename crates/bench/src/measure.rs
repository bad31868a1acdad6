//! The measurements: per-scenario tables, the FP-vs-bits/key and ns/key-vs-size sweeps,
//! thread scaling, SIMD backends and hasher costs.
//!
//! Every measured run checks its answers: members must all be found (no false
//! negatives; a filter that stores values returns each member's own), batch answers must equal single-key answers, a filter built by batch or by
//! several threads must answer like the one built key by key, and repeated query passes
//! must agree. A failed check returns [`BenchError::WrongAnswer`] before any number of
//! that filter is recorded.

use crate::rng::{indexed_key, SplitMix64};
use crate::subjects::{Entry, Layout, Origin, RegistryKey, Sizing, Subject, Target};
use crate::theory::{self, Prediction};
use crate::timing::{measure, measure_with, CpuClock, Timing};
use crate::workload::{BenchKey, Workload};
use crate::BenchError;
use bloomforge_core::batch::{prefetch, PREFETCH_AHEAD};
use bloomforge_core::hash::fast_range64;
use bloomforge_testkit::stats::{clopper_pearson, fp_consistent};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

/// False-positive significance level of the consistency flag (per row).
pub const FP_ALPHA: f64 = 1e-6;

/// Measured false positives of one filter against its theory.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FpStat {
    /// Non-members reported present.
    pub false_positives: u64,
    /// Non-members queried.
    pub queries: u64,
    /// `false_positives / queries`.
    pub measured: f64,
    /// 95 % Clopper-Pearson interval of the measured rate.
    pub ci95: (f64, f64),
    /// The layout's predicted rate at this size and key count.
    pub theory: f64,
    /// Instance-to-instance standard deviation of the predicted rate.
    pub theory_sd: f64,
    /// The filter's own realised rate from its contents, where it offers one.
    pub realised: Option<f64>,
    /// `measured / theory` (NaN when the theory is 0).
    pub ratio: f64,
    /// Consistent with theory (and with the realised rate) at `alpha = 1e-6`.
    pub consistent: bool,
    /// Distance from theory in standard deviations, where the normal test decided.
    pub z: Option<f64>,
}

impl FpStat {
    /// Tests `x` false positives in `q` queries against `pred` (and `realised`, an exact
    /// Binomial test, when given).
    pub fn new(x: u64, q: u64, pred: Prediction, realised: Option<f64>) -> FpStat {
        let check = fp_consistent(x, q, pred.fp, FP_ALPHA, 0.0, pred.instance_sd);
        let realised_ok = match realised {
            Some(p) => fp_consistent(x, q, p, FP_ALPHA, 0.0, 0.0).ok,
            None => true,
        };
        let measured = x as f64 / q as f64;
        FpStat {
            false_positives: x,
            queries: q,
            measured,
            ci95: clopper_pearson(x, q, 0.05),
            theory: pred.fp,
            theory_sd: pred.instance_sd,
            realised,
            ratio: if pred.fp > 0.0 {
                measured / pred.fp
            } else {
                f64::NAN
            },
            consistent: check.ok && realised_ok,
            z: check.z,
        }
    }
}

/// Bulk-load time at one thread count.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BulkPoint {
    /// Threads of the pinned rayon pool.
    pub threads: usize,
    /// Wall time per key (process CPU time in `cpu_ns_per_key`).
    pub timing: Timing,
}

/// One filter measured on one scenario.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// Workload name.
    pub workload: String,
    /// Members inserted.
    pub n: u64,
    /// Sizing budget label.
    pub target: String,
    /// Filter name.
    pub filter: String,
    /// Layout name.
    pub layout: &'static str,
    /// Ours, peer or reference.
    pub origin: Origin,
    /// Hashing and configuration.
    pub notes: &'static str,
    /// Memory bits per member.
    pub bits_per_key: f64,
    /// Probes per key.
    pub k: Option<u32>,
    /// Build + single-key inserts (static filters: the build).
    pub insert: Option<Timing>,
    /// Build + batch insert.
    pub insert_batch: Option<Timing>,
    /// Single-key queries of members.
    pub query_pos: Option<Timing>,
    /// Single-key queries of non-members.
    pub query_neg: Option<Timing>,
    /// Batch queries of members.
    pub query_pos_batch: Option<Timing>,
    /// Batch queries of non-members.
    pub query_neg_batch: Option<Timing>,
    /// Build + concurrent insert at each thread count.
    pub bulk: Vec<BulkPoint>,
    /// False positives against theory.
    pub fp: Option<FpStat>,
}

/// One point of the FP-vs-bits/key sweep.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FpPoint {
    /// Filter name.
    pub filter: String,
    /// Layout name.
    pub layout: &'static str,
    /// Ours, peer or reference.
    pub origin: Origin,
    /// The budget asked for.
    pub target_bits_per_key: f64,
    /// Memory bits per key actually used.
    pub bits_per_key: f64,
    /// Probes per key.
    pub k: Option<u32>,
    /// Keys inserted.
    pub n: u64,
    /// The measurement against theory.
    pub fp: FpStat,
}

/// One point of the ns/key-vs-size sweep.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SizePoint {
    /// Filter name (or `floor`).
    pub filter: String,
    /// Layout name.
    pub layout: &'static str,
    /// Filter size asked for, bytes.
    pub bytes: u64,
    /// Keys inserted (10 bits per key).
    pub n: u64,
    /// Single-key member queries, ns/key.
    pub pos_ns: f64,
    /// Single-key non-member queries, ns/key.
    pub neg_ns: f64,
    /// Batch member queries, ns/key.
    pub pos_batch_ns: Option<f64>,
    /// Batch non-member queries, ns/key.
    pub neg_batch_ns: Option<f64>,
}

/// One SIMD backend of one filter.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BackendRow {
    /// Filter name.
    pub filter: String,
    /// Backend name.
    pub backend: String,
    /// Members.
    pub n: u64,
    /// Single-key inserts into a fresh filter.
    pub insert_ns: f64,
    /// Batch inserts into a fresh filter.
    pub insert_batch_ns: f64,
    /// Single-key member queries.
    pub pos_ns: f64,
    /// Single-key non-member queries.
    pub neg_ns: f64,
    /// Batch non-member queries.
    pub neg_batch_ns: f64,
}

/// Cost of hashing one key with one hasher.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct HasherRow {
    /// Hasher name.
    pub hasher: String,
    /// Key type.
    pub keys: String,
    /// Nanoseconds per key.
    pub ns_per_key: f64,
}

/// Shared state of a run: the plan's repetitions and the pinned pools.
pub struct Ctx {
    /// Untimed warm-up runs.
    pub warmup: usize,
    /// Timed repetitions.
    pub reps: usize,
    /// One pinned pool per thread count.
    pub pools: Vec<(usize, rayon::ThreadPool)>,
}

/// A rayon pool of `threads` threads, each pinned to a core (round robin) by its
/// `start_handler`; the calling thread stays unpinned.
///
/// # Errors
/// [`BenchError::ThreadPool`] if the pool cannot be built.
pub fn pinned_pool(threads: usize) -> Result<rayon::ThreadPool, BenchError> {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("bloomforge-bench-{i}"))
        .start_handler(move |i| {
            if !cores.is_empty() {
                core_affinity::set_for_current(cores[i % cores.len()]);
            }
        })
        .build()
        .map_err(|e| BenchError::ThreadPool(e.to_string()))
}

fn wrong(filter: &str, workload: &str, what: String) -> BenchError {
    BenchError::WrongAnswer {
        filter: filter.to_string(),
        workload: workload.to_string(),
        what,
    }
}

fn count_true(out: &[bool]) -> usize {
    out.iter().map(|&b| usize::from(b)).sum()
}

/// Checks that `f` finds all of `members`.
fn check_members<K>(
    f: &dyn Subject<K>,
    members: &[K],
    filter: &str,
    workload: &str,
    how: &str,
) -> Result<(), BenchError> {
    let failures = f.insert_failures();
    if failures > 0 {
        return Err(wrong(
            filter,
            workload,
            format!("{failures} inserts failed during {how} (table full); size it larger"),
        ));
    }
    let wrong_values = f.wrong_values(members);
    if wrong_values > 0 {
        return Err(wrong(
            filter,
            workload,
            format!(
                "{wrong_values} members looked up a value other than the stored one after {how}"
            ),
        ));
    }
    let found = f.count_contains(members);
    if found != members.len() {
        return Err(wrong(
            filter,
            workload,
            format!(
                "{} of {} members not found after {how} (false negatives)",
                members.len() - found,
                members.len()
            ),
        ));
    }
    Ok(())
}

/// Checks that `g` answers every key of `keys` as `reference` says.
fn check_same_answers<K>(
    g: &dyn Subject<K>,
    keys: &[K],
    reference: &[bool],
    filter: &str,
    workload: &str,
    how: &str,
) -> Result<(), BenchError> {
    let mut out = vec![false; keys.len()];
    g.contains_each(keys, &mut out);
    if let Some(i) = out.iter().zip(reference).position(|(a, b)| a != b) {
        return Err(wrong(
            filter,
            workload,
            format!("{how}: answer for non-member #{i} differs from the single-key build"),
        ));
    }
    Ok(())
}

/// Sums one word of `reads` random 64-byte lines of `buf`: the addresses come from a
/// generator, not from loaded data, so the misses overlap (the memory-level-parallel
/// floor every filter query pays at least once). Each address is computed and prefetched
/// [`PREFETCH_AHEAD`] reads before it is read, exactly as the filters' batch pipelines do:
/// without that, a large buffer's reads wait on page walks the filters' batches overlap
/// (measured at 100M keys, 125 MB: 29 ns plain vs 13 ns for a prefetched filter batch),
/// and the "floor" would sit above what it bounds.
pub fn random_line_reads(buf: &[u64], reads: usize, seed: u64) -> u64 {
    let lines = (buf.len() / 8).max(1) as u64;
    let mut rng = SplitMix64::new(seed);
    let mut ring = [0usize; PREFETCH_AHEAD];
    for slot in ring.iter_mut().take(reads) {
        *slot = fast_range64(rng.next_u64(), lines) as usize * 8;
        prefetch(buf[*slot..].as_ptr());
    }
    let mut sum = 0u64;
    for i in 0..reads {
        let slot = i % PREFETCH_AHEAD;
        sum = sum.wrapping_add(buf[ring[slot]]);
        if i + PREFETCH_AHEAD < reads {
            ring[slot] = fast_range64(rng.next_u64(), lines) as usize * 8;
            prefetch(buf[ring[slot]..].as_ptr());
        }
    }
    sum
}

/// `ops` locked read-modify-writes (`fetch_or` of one random bit) on random lines of
/// `buf`, prefetched [`PREFETCH_AHEAD`] ahead as the filters' batches are: the floor of an
/// atomic insert, which needs at least one such instruction per key. A locked instruction
/// also orders the memory operations around it, so its cost does not overlap as plain
/// stores do (measured: ~6.5 ns each, in L1 or out of it, on an AMD EPYC Zen 5; see
/// `docs/benchmarks.md`).
pub fn random_line_locked_ors(buf: &[AtomicU64], ops: usize, seed: u64) -> u64 {
    let lines = (buf.len() / 8).max(1) as u64;
    let mut rng = SplitMix64::new(seed);
    let mut ring = [0usize; PREFETCH_AHEAD];
    for slot in ring.iter_mut().take(ops) {
        *slot = fast_range64(rng.next_u64(), lines) as usize * 8;
        prefetch(buf[*slot..].as_ptr());
    }
    let mut sum = 0u64;
    for i in 0..ops {
        let slot = i % PREFETCH_AHEAD;
        let bits = rng.next_u64();
        let word = &buf[ring[slot] + (bits >> 61) as usize];
        sum = sum.wrapping_add(word.fetch_or(1 << (bits & 63), Ordering::Relaxed));
        if i + PREFETCH_AHEAD < ops {
            ring[slot] = fast_range64(rng.next_u64(), lines) as usize * 8;
            prefetch(buf[ring[slot]..].as_ptr());
        }
    }
    sum
}

/// A buffer of `bytes` bytes (whole lines), every page written so reads hit real memory.
/// On Linux it is advised for transparent huge pages before it is written, as the core
/// filters' arrays are, so floor and filters pay the same TLB costs.
pub fn floor_buffer(bytes: u64) -> Vec<u64> {
    let words = (bytes / 8).max(8) as usize;
    let mut v: Vec<u64> = Vec::with_capacity(words);
    bloomforge_core::memory::advise_huge_pages(v.spare_capacity_mut());
    v.extend(0..words as u64);
    v
}

/// Times the physical floor: `reads` independent random line reads of `buf`.
///
/// # Errors
/// Only through [`measure`] (never in practice).
pub fn measure_floor(ctx: &Ctx, buf: &[u64], reads: usize) -> Result<Timing, BenchError> {
    let (t, _) = measure(ctx.warmup, ctx.reps, reads, CpuClock::Thread, || {
        Ok(black_box(random_line_reads(black_box(buf), reads, 7)))
    })?;
    Ok(t)
}

/// Measures one registry entry on one workload.
///
/// # Errors
/// [`BenchError::WrongAnswer`] if any check fails; build errors.
pub fn measure_entry<K: RegistryKey>(
    ctx: &Ctx,
    entry: &Entry,
    w: &Workload<K>,
    sizing: &Sizing,
) -> Result<Row, BenchError> {
    let build = K::builder(entry);
    let (members, others) = (&w.members[..], &w.non_members[..]);
    let n = members.len();
    let (name, wl) = (entry.name, w.name.as_str());

    // Inserts into a freshly built empty filter (construction untimed); a static filter's
    // insert is its construction from the key set.
    let (insert, f) = if entry.is_static {
        measure(ctx.warmup, ctx.reps, n, CpuClock::Thread, || {
            build(sizing, members)
        })?
    } else {
        measure_with(
            ctx.warmup,
            ctx.reps,
            n,
            CpuClock::Thread,
            || build(sizing, members),
            |f| {
                f.insert_all(black_box(members));
                Ok(())
            },
        )?
    };
    check_members(&*f, members, name, wl, "single-key inserts")?;

    let (query_pos, _) = measure(ctx.warmup, ctx.reps, n, CpuClock::Thread, || {
        let found = f.count_contains(black_box(members));
        if found != n {
            return Err(wrong(name, wl, format!("{} members not found", n - found)));
        }
        Ok(())
    })?;
    let mut reference = vec![false; others.len()];
    f.contains_each(others, &mut reference);
    let fps = count_true(&reference);
    let (query_neg, _) = measure(ctx.warmup, ctx.reps, others.len(), CpuClock::Thread, || {
        let x = f.count_contains(black_box(others));
        if x != fps {
            return Err(wrong(
                name,
                wl,
                format!("repeated non-member queries gave {x} then {fps} positives"),
            ));
        }
        Ok(())
    })?;

    // Batch queries: member answers all true, non-member answers equal the single ones.
    let (mut query_pos_batch, mut query_neg_batch) = (None, None);
    if f.contains_batch(&[], &mut []) {
        let mut out = vec![false; n];
        let (t, _) = measure(ctx.warmup, ctx.reps, n, CpuClock::Thread, || {
            f.contains_batch(black_box(members), &mut out);
            let found = count_true(&out);
            if found != n {
                return Err(wrong(
                    name,
                    wl,
                    format!("batch query: {} members not found", n - found),
                ));
            }
            Ok(())
        })?;
        query_pos_batch = Some(t);
        let mut out = vec![false; others.len()];
        let (t, _) = measure(ctx.warmup, ctx.reps, others.len(), CpuClock::Thread, || {
            f.contains_batch(black_box(others), &mut out);
            Ok(count_true(&out))
        })?;
        if out != reference {
            return Err(wrong(
                name,
                wl,
                "batch query answers differ from single-key answers".into(),
            ));
        }
        query_neg_batch = Some(t);
    }

    // Batch insert into a fresh filter; it must answer like the single-key build.
    let mut insert_batch = None;
    let probe_batch = {
        let mut g = build(sizing, &members[..0])?;
        g.insert_batch(&[])
    };
    if probe_batch && !entry.is_static {
        let (t, g) = measure_with(
            ctx.warmup,
            ctx.reps,
            n,
            CpuClock::Thread,
            || build(sizing, members),
            |g| {
                g.insert_batch(black_box(members));
                Ok(())
            },
        )?;
        check_members(&*g, members, name, wl, "batch insert")?;
        check_same_answers(&*g, others, &reference, name, wl, "batch-built filter")?;
        insert_batch = Some(t);
    }

    // Concurrent bulk loads, one pinned pool per thread count.
    let mut bulk = Vec::new();
    let probe_par = {
        let mut g = build(sizing, &members[..0])?;
        g.par_insert(&[])
    };
    if probe_par && !entry.is_static {
        for (threads, pool) in &ctx.pools {
            let (t, g) = measure_with(
                ctx.warmup,
                ctx.reps,
                n,
                CpuClock::Process,
                || build(sizing, members),
                |g| {
                    pool.install(|| g.par_insert(black_box(members)));
                    Ok(())
                },
            )?;
            let how = format!("bulk load on {threads} threads");
            check_members(&*g, members, name, wl, &how)?;
            check_same_answers(&*g, others, &reference, name, wl, &how)?;
            bulk.push(BulkPoint {
                threads: *threads,
                timing: t,
            });
        }
    }

    let fp = FpStat::new(
        fps as u64,
        others.len() as u64,
        f.predict(n as u64),
        f.realised_fp(),
    );
    Ok(Row {
        workload: w.name.clone(),
        n: n as u64,
        target: sizing.target.label(),
        filter: name.to_string(),
        layout: entry.layout.name(),
        origin: entry.origin,
        notes: entry.notes,
        bits_per_key: f.memory_bits() as f64 / n.max(1) as f64,
        k: f.num_hashes(),
        insert: Some(insert),
        insert_batch,
        query_pos: Some(query_pos),
        query_neg: Some(query_neg),
        query_pos_batch,
        query_neg_batch,
        bulk,
        fp: Some(fp),
    })
}

/// The physical-floor row of a scenario: random line reads of a buffer as large as a
/// filter of `bits_per_key` bits per member.
///
/// # Errors
/// Never in practice (see [`measure`]).
pub fn floor_row(
    ctx: &Ctx,
    workload: &str,
    n: usize,
    queries: usize,
    bits_per_key: f64,
    target: &Target,
) -> Result<Row, BenchError> {
    let bytes = ((n as f64 * bits_per_key / 8.0).ceil() as u64).max(64);
    let buf = floor_buffer(bytes);
    let t = measure_floor(ctx, &buf, queries)?;
    Ok(Row {
        workload: workload.to_string(),
        n: n as u64,
        target: target.label(),
        filter: "floor: random 64 B reads".into(),
        layout: Layout::Floor.name(),
        origin: Origin::Reference,
        notes: "independent random cache-line reads of an equal-size buffer, prefetched as far ahead as the filters' batches are (core's PREFETCH_AHEAD)",
        bits_per_key: bytes as f64 * 8.0 / n.max(1) as f64,
        k: None,
        insert: None,
        insert_batch: None,
        query_pos: Some(t),
        query_neg: Some(t),
        query_pos_batch: None,
        query_neg_batch: None,
        bulk: Vec::new(),
        fp: None,
    })
}

/// The atomic floor row of a scenario: one locked `fetch_or` per key on random lines of a
/// buffer as large as the filter (the insert column; no query columns). No atomic insert
/// can go below it: it must publish its bits with at least one locked instruction.
///
/// # Errors
/// Never in practice (see [`measure`]).
pub fn locked_floor_row(
    ctx: &Ctx,
    workload: &str,
    n: usize,
    bits_per_key: f64,
    target: &Target,
) -> Result<Row, BenchError> {
    let bytes = ((n as f64 * bits_per_key / 8.0).ceil() as u64).max(64);
    let buf: Vec<AtomicU64> = floor_buffer(bytes)
        .into_iter()
        .map(AtomicU64::new)
        .collect();
    let (t, _) = measure(ctx.warmup, ctx.reps, n, CpuClock::Thread, || {
        Ok(black_box(random_line_locked_ors(black_box(&buf), n, 11)))
    })?;
    Ok(Row {
        workload: workload.to_string(),
        n: n as u64,
        target: target.label(),
        filter: "floor: 1 locked OR per key".into(),
        layout: Layout::Floor.name(),
        origin: Origin::Reference,
        notes: "one relaxed fetch_or per key on random lines of an equal-size buffer, prefetched as far ahead as the filters' batches are: the least an atomic insert pays",
        bits_per_key: bytes as f64 * 8.0 / n.max(1) as f64,
        k: None,
        insert: Some(t),
        insert_batch: None,
        query_pos: None,
        query_neg: None,
        query_pos_batch: None,
        query_neg_batch: None,
        bulk: Vec::new(),
        fp: None,
    })
}

/// One point of the FP sweep: build at `c` bits per key, insert, count false positives.
///
/// # Errors
/// [`BenchError::WrongAnswer`] on false negatives; build errors.
pub fn fp_point(
    entry: &Entry,
    w: &Workload<u64>,
    c: f64,
    seed: u64,
) -> Result<FpPoint, BenchError> {
    let n = w.members.len();
    let sizing = Sizing {
        n: n as u64,
        target: Target::BitsPerKey(c),
        seed,
    };
    let mut f = (entry.build_u64)(&sizing, &w.members)?;
    if !f.insert_batch(&w.members) {
        f.insert_all(&w.members);
    }
    check_members(&*f, &w.members, entry.name, &w.name, "inserts (FP sweep)")?;
    let x = f.count_contains(&w.non_members);
    Ok(FpPoint {
        filter: entry.name.to_string(),
        layout: entry.layout.name(),
        origin: entry.origin,
        target_bits_per_key: c,
        bits_per_key: f.memory_bits() as f64 / n as f64,
        k: f.num_hashes(),
        n: n as u64,
        fp: FpStat::new(
            x as u64,
            w.non_members.len() as u64,
            f.predict(n as u64),
            f.realised_fp(),
        ),
    })
}

/// One point of the size sweep for `entry`: a filter of `bytes` bytes filled at 10 bits
/// per key from a generated key stream, then timed on member and non-member queries.
///
/// # Errors
/// [`BenchError::WrongAnswer`] on false negatives or batch/single disagreement.
pub fn size_point(
    ctx: &Ctx,
    entry: &Entry,
    bytes: u64,
    queries: usize,
    seed: u64,
) -> Result<SizePoint, BenchError> {
    const BITS_PER_KEY: f64 = 10.0;
    const CHUNK: usize = 1 << 20;
    let n = ((bytes * 8) as f64 / BITS_PER_KEY) as u64;
    let sizing = Sizing {
        n,
        target: Target::BitsPerKey(BITS_PER_KEY),
        seed,
    };
    let mut f = (entry.build_u64)(&sizing, &[])?;
    let mut chunk = Vec::with_capacity(CHUNK);
    let mut start = 0u64;
    while start < n {
        let end = (start + CHUNK as u64).min(n);
        chunk.clear();
        chunk.extend((start..end).map(|i| indexed_key(seed, i)));
        let done = f.insert_batch(&chunk)
            || ctx
                .pools
                .last()
                .is_some_and(|(_, pool)| pool.install(|| f.par_insert(&chunk)));
        if !done {
            f.insert_all(&chunk);
        }
        start = end;
    }
    let q = queries.min(n as usize).max(1);
    let members: Vec<u64> = (0..q as u64).map(|i| indexed_key(seed, i)).collect();
    let others: Vec<u64> = (0..queries as u64)
        .map(|i| indexed_key(seed, (1u64 << 62) + i))
        .collect();
    let wl = format!("size sweep {bytes} B");
    check_members(&*f, &members, entry.name, &wl, "fill")?;
    let (pos, _) = measure(ctx.warmup, ctx.reps, q, CpuClock::Thread, || {
        Ok(f.count_contains(black_box(&members)))
    })?;
    let (neg, x) = measure(ctx.warmup, ctx.reps, others.len(), CpuClock::Thread, || {
        Ok(f.count_contains(black_box(&others)))
    })?;
    let (mut pos_batch, mut neg_batch) = (None, None);
    if f.contains_batch(&[], &mut []) {
        let mut out = vec![false; q];
        let (t, found) = measure(ctx.warmup, ctx.reps, q, CpuClock::Thread, || {
            f.contains_batch(black_box(&members), &mut out);
            Ok(count_true(&out))
        })?;
        if found != q {
            return Err(wrong(entry.name, &wl, "batch query missed members".into()));
        }
        pos_batch = Some(t.ns_per_key);
        let mut out = vec![false; others.len()];
        let (t, y) = measure(ctx.warmup, ctx.reps, others.len(), CpuClock::Thread, || {
            f.contains_batch(black_box(&others), &mut out);
            Ok(count_true(&out))
        })?;
        if y != x {
            return Err(wrong(
                entry.name,
                &wl,
                format!("batch found {y} non-member positives, single-key {x}"),
            ));
        }
        neg_batch = Some(t.ns_per_key);
    }
    Ok(SizePoint {
        filter: entry.name.to_string(),
        layout: entry.layout.name(),
        bytes,
        n,
        pos_ns: pos.ns_per_key,
        neg_ns: neg.ns_per_key,
        pos_batch_ns: pos_batch,
        neg_batch_ns: neg_batch,
    })
}

/// The floor point of the size sweep.
///
/// # Errors
/// Never in practice.
pub fn size_floor_point(ctx: &Ctx, bytes: u64, queries: usize) -> Result<SizePoint, BenchError> {
    let buf = floor_buffer(bytes);
    let t = measure_floor(ctx, &buf, queries)?;
    Ok(SizePoint {
        filter: "floor".into(),
        layout: Layout::Floor.name(),
        bytes,
        n: ((bytes * 8) as f64 / 10.0) as u64,
        pos_ns: t.ns_per_key,
        neg_ns: t.ns_per_key,
        pos_batch_ns: None,
        neg_batch_ns: None,
    })
}

/// Per-backend numbers of the blocked, split-block and counting filters on `w`.
///
/// # Errors
/// [`BenchError::WrongAnswer`] if a backend misses a member or disagrees with scalar.
pub fn backend_rows(
    ctx: &Ctx,
    w: &Workload<u64>,
    c: f64,
    seed: u64,
) -> Result<Vec<BackendRow>, BenchError> {
    use bloomforge_core::{Backend, BlockedBloomFilter, SplitBlockBloomFilter};
    let n = w.members.len();
    let m = ((n as f64 * c).ceil() as u64).max(64);
    let k = theory::blocked512_best_k(c);
    let mut rows = Vec::new();
    macro_rules! per_backend {
        ($name:expr, $make:expr) => {{
            let mut reference: Option<Vec<bool>> = None;
            for backend in Backend::available() {
                let make = || -> Result<_, BenchError> {
                    let mut f = $make.map_err(|e| BenchError::Build {
                        filter: $name,
                        reason: e.to_string(),
                    })?;
                    f.set_backend(backend).map_err(|e| BenchError::Build {
                        filter: $name,
                        reason: e.to_string(),
                    })?;
                    Ok(f)
                };
                let (ins, _) =
                    measure_with(ctx.warmup, ctx.reps, n, CpuClock::Thread, make, |f| {
                        for key in black_box(&w.members) {
                            f.insert(key);
                        }
                        Ok(())
                    })?;
                let (ins_b, f) =
                    measure_with(ctx.warmup, ctx.reps, n, CpuClock::Thread, make, |f| {
                        f.insert_batch(black_box(&w.members));
                        Ok(())
                    })?;
                let wl = format!("{} backend {}", w.name, backend.name());
                let (pos, found) = measure(ctx.warmup, ctx.reps, n, CpuClock::Thread, || {
                    Ok(black_box(&w.members)
                        .iter()
                        .filter(|k| f.contains(*k))
                        .count())
                })?;
                if found != n {
                    return Err(wrong(
                        $name,
                        &wl,
                        format!("{} members not found", n - found),
                    ));
                }
                let (neg, _) = measure(
                    ctx.warmup,
                    ctx.reps,
                    w.non_members.len(),
                    CpuClock::Thread,
                    || {
                        Ok(black_box(&w.non_members)
                            .iter()
                            .filter(|k| f.contains(*k))
                            .count())
                    },
                )?;
                let mut out = vec![false; w.non_members.len()];
                let (neg_b, _) = measure(
                    ctx.warmup,
                    ctx.reps,
                    w.non_members.len(),
                    CpuClock::Thread,
                    || {
                        f.contains_batch(black_box(&w.non_members), &mut out)
                            .map_err(|e| wrong($name, &wl, e.to_string()))
                    },
                )?;
                match &reference {
                    None => reference = Some(out),
                    Some(r) if *r != out => {
                        return Err(wrong(
                            $name,
                            &wl,
                            "answers differ from the scalar backend".into(),
                        ))
                    }
                    Some(_) => {}
                }
                rows.push(BackendRow {
                    filter: $name.to_string(),
                    backend: backend.name().to_string(),
                    n: n as u64,
                    insert_ns: ins.ns_per_key,
                    insert_batch_ns: ins_b.ns_per_key,
                    pos_ns: pos.ns_per_key,
                    neg_ns: neg.ns_per_key,
                    neg_batch_ns: neg_b.ns_per_key,
                });
            }
        }};
    }
    per_backend!(
        "blocked",
        BlockedBloomFilter::with_num_bits(m).seed(seed).hashes(k)
    );
    per_backend!(
        "split-block",
        SplitBlockBloomFilter::with_num_bits(m).seed(seed).hashes(8)
    );
    // The counting filter at the same number of counters per key (4 bits each).
    let counting_k = bloomforge_core::math::best_k(
        |k| bloomforge_counting::math::blocked_fp(c, k),
        bloomforge_counting::math::SIZING_MAX_K,
    )
    .0;
    per_backend!(
        "counting",
        bloomforge_counting::CountingBloomFilter::with_num_counters(m)
            .seed(seed)
            .hashes(counting_k)
    );
    Ok(rows)
}

/// Cost of hashing `u64` keys and URL strings with each hasher the filters use.
///
/// # Errors
/// Never in practice.
pub fn hasher_rows(ctx: &Ctx, keys: usize, seed: u64) -> Result<Vec<HasherRow>, BenchError> {
    use std::hash::BuildHasher;
    let ints: Vec<u64> = (0..keys as u64).map(|i| indexed_key(seed, i)).collect();
    let urls: Vec<String> = (0..keys.min(1 << 20) as u64)
        .map(|i| crate::workload::url(seed, i))
        .collect();
    let mut rows = Vec::new();
    fn time_hash<K: BenchKey>(
        ctx: &Ctx,
        keys: &[K],
        hash: impl Fn(&K) -> u64,
    ) -> Result<f64, BenchError> {
        let (t, _) = measure(ctx.warmup, ctx.reps, keys.len(), CpuClock::Thread, || {
            Ok(black_box(keys)
                .iter()
                .fold(0u64, |acc, k| acc.wrapping_add(hash(k))))
        })?;
        Ok(t.ns_per_key)
    }
    let foldhash = bloomforge_core::DefaultHasher::with_seed(seed);
    let sip = std::collections::hash_map::RandomState::new();
    let keyed = bloomforge_core::KeyedHasher::with_key([seed, 1, 2, 3]);
    macro_rules! both {
        ($name:expr, $hash:expr) => {{
            rows.push(HasherRow {
                hasher: $name.into(),
                keys: "u64".into(),
                ns_per_key: time_hash(ctx, &ints, $hash)?,
            });
            rows.push(HasherRow {
                hasher: $name.into(),
                keys: "url".into(),
                ns_per_key: time_hash(ctx, &urls, $hash)?,
            });
        }};
    }
    both!("foldhash (bloomforge default)", |k: &_| foldhash
        .hash_one(k));
    both!("SipHash-1-3 (std, fastbloom)", |k: &_| sip.hash_one(k));
    both!("XXH64 (Parquet)", |k: &_| BenchKey::with_bytes(k, |b| {
        xxhash_rust::xxh64::xxh64(b, 0)
    }));
    both!("HighwayHash (KeyedHasher)", |k: &_| keyed.hash_one(k));
    Ok(rows)
}

/// The counting filter's counters after inserting `w`'s members, against theory.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CountingSection {
    /// Keys inserted.
    pub n: u64,
    /// Counters.
    pub counters: u64,
    /// Probes per key.
    pub k: u32,
    /// Target false-positive rate it was sized for.
    pub target_fp: f64,
    /// `histogram[v]` = counters holding `v` (15 = saturated).
    pub histogram: Vec<u64>,
    /// Exact Binomial(n, q) distribution of one counter (`q` = chance a key increments
    /// it), the last entry the tail `>= 15`.
    pub binomial: Vec<f64>,
    /// Poisson(n q) approximation, same bins.
    pub poisson: Vec<f64>,
    /// Saturated counters.
    pub saturated: u64,
    /// Union bound on any counter saturating (`m P(Poisson >= 16)`).
    pub overflow_union_bound: f64,
}

/// Builds a blocked counting filter for `p`, inserts the members and compares its counter
/// histogram with the Binomial / Poisson counter distribution.
///
/// # Errors
/// [`BenchError::WrongAnswer`] if a member is missing; build errors.
pub fn counting_section(
    w: &Workload<u64>,
    p: f64,
    seed: u64,
) -> Result<CountingSection, BenchError> {
    use bloomforge_counting::CountingBloomFilter;
    let n = w.members.len() as u64;
    let mut f = CountingBloomFilter::with_false_pos(p)
        .seed(seed)
        .expected_items(n)
        .map_err(|e| BenchError::Build {
            filter: "counting",
            reason: e.to_string(),
        })?;
    f.insert_batch(&w.members);
    let missing = w.members.iter().filter(|k| !f.contains(*k)).count();
    if missing > 0 {
        return Err(wrong(
            "counting",
            &w.name,
            format!("{missing} members not found"),
        ));
    }
    let (m, k) = (f.num_counters(), f.num_hashes());
    // A key increments each distinct counter of its k probes in its 128-counter line once.
    let line = 128.0f64;
    let distinct = -line * (f64::from(k) * (-1.0 / line).ln_1p()).exp_m1();
    let q = distinct / m as f64;
    let top = 15usize;
    let tail_fold = |mut v: Vec<f64>| {
        let rest: f64 = 1.0 - v[..top].iter().sum::<f64>();
        v.truncate(top);
        v.push(rest.max(0.0));
        v
    };
    let binomial = tail_fold(theory::math::binomial_pmf_range(n, q, top as u64));
    let poisson = tail_fold(
        (0..=top as u64)
            .map(|t| theory::math::poisson_pmf(n as f64 * q, t))
            .collect(),
    );
    Ok(CountingSection {
        n,
        counters: m,
        k,
        target_fp: p,
        histogram: f.counter_histogram().to_vec(),
        binomial,
        poisson,
        saturated: f.saturated_counters(),
        overflow_union_bound: (m as f64 * theory::math::poisson_tail(n as f64 * q, 16)).min(1.0),
    })
}

/// The d-left filter's bucket loads after inserting `w`'s members, against the fluid
/// limit.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DLeftSection {
    /// Keys inserted.
    pub n: u64,
    /// Target false-positive rate it was sized for.
    pub target_fp: f64,
    /// Subtables `d`.
    pub subtables: u32,
    /// Buckets per subtable `B`.
    pub buckets_per_subtable: u64,
    /// Cells per bucket `w`.
    pub cells_per_bucket: u32,
    /// Remainder bits `r`.
    pub remainder_bits: u32,
    /// Counter bits.
    pub counter_bits: u32,
    /// Average load `n / (d B)`.
    pub load: f64,
    /// Average load of occupied cells `cells / (d B)`: keys whose fingerprint is already
    /// stored share its cell, so this is the load the d-left process sees (the fluid
    /// limit is evaluated here).
    pub cell_load: f64,
    /// Memory bits per key.
    pub bits_per_key: f64,
    /// `histogram[i]` = buckets holding `i` keys.
    pub histogram: Vec<u64>,
    /// Fluid-limit fraction of buckets at each load.
    pub fluid: Vec<f64>,
    /// Inserts refused (all candidates full).
    pub failed_inserts: u64,
    /// Expected refusals by the fluid limit.
    pub expected_failures: f64,
    /// Saturated (sticky) cells.
    pub saturated_cells: u64,
    /// Expected FP `1 - (1 - 1/(B 2^r))^n`, and the realised FP from the contents.
    pub fp_theory: f64,
    /// Realised FP (distinct fingerprints / `B 2^r`).
    pub fp_realised: f64,
}

/// Builds a d-left filter for `p`, inserts the members and compares its bucket loads with
/// the fluid limit.
///
/// # Errors
/// [`BenchError::WrongAnswer`] if a member is missing; build errors.
pub fn dleft_section(w: &Workload<u64>, p: f64, seed: u64) -> Result<DLeftSection, BenchError> {
    let n = w.members.len() as u64;
    let mut f = crate::subjects_core::dleft_for(&Sizing {
        n,
        target: Target::FalsePos(p),
        seed,
    })?;
    let mut failed = 0u64;
    for k in &w.members {
        if f.insert(k).is_err() {
            failed += 1;
        }
    }
    let missing = w.members.iter().filter(|k| !f.contains(*k)).count() as u64;
    if missing > failed {
        return Err(wrong(
            "d-left",
            &w.name,
            format!("{missing} members not found"),
        ));
    }
    let (d, b, cells) = (
        f.subtables(),
        f.buckets_per_subtable(),
        f.cells_per_bucket(),
    );
    let load = n as f64 / (f64::from(d) * b as f64);
    let cell_load = f.occupied_cells() as f64 / (f64::from(d) * b as f64);
    let fluid = bloomforge_dleft::theory::dlcbf_fluid(d, cells, cell_load, None);
    Ok(DLeftSection {
        n,
        target_fp: p,
        subtables: d,
        buckets_per_subtable: b,
        cells_per_bucket: cells,
        remainder_bits: f.remainder_bits(),
        counter_bits: f.counter_bits(),
        load,
        cell_load,
        bits_per_key: f.memory_bits() as f64 / n as f64,
        histogram: f.load_histogram(),
        fluid: fluid.load_fractions(),
        failed_inserts: failed,
        expected_failures: fluid.overflow_per_bucket * f64::from(d) * b as f64,
        saturated_cells: f.saturated_cells(),
        fp_theory: bloomforge_dleft::theory::dlcbf_fp(n, b, f.remainder_bits()),
        fp_realised: f.realized_false_pos(),
    })
}
