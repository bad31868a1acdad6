//! The atomic filter under real concurrency: final states against the sequential result.

use crate::common;

use bloomforge_counting::{AtomicCountingBloomFilter, CounterLayout, CountingBloomFilter};
use common::counters;
use std::sync::Barrier;

fn fresh(layout: CounterLayout) -> CountingBloomFilter {
    match layout {
        CounterLayout::Blocked => CountingBloomFilter::with_false_pos(0.01)
            .seed(5)
            .expected_items(40_000)
            .unwrap(),
        CounterLayout::Standard => CountingBloomFilter::standard_with_false_pos(0.01)
            .seed(5)
            .expected_items(40_000)
            .unwrap(),
    }
}

#[derive(Clone, Copy)]
enum Op {
    Insert(u64),
    Remove(u64),
}

const STRIDE: u64 = 1 << 32;
const PER_THREAD: u64 = 3_000;

/// Thread `t`'s script: it owns keys `t * STRIDE ..`; it removes half of its share of a
/// preloaded set (inserted before the threads start) and inserts, removes and re-inserts
/// fresh keys of its own.
fn script(t: u64) -> Vec<Op> {
    let mut ops = Vec::new();
    for i in 0..PER_THREAD {
        let old = t * STRIDE + i;
        let new = t * STRIDE + (1 << 20) + i;
        ops.push(Op::Insert(new));
        if i % 2 == 0 {
            ops.push(Op::Remove(old));
        }
        if i % 3 == 0 {
            ops.extend([Op::Remove(new), Op::Insert(new), Op::Insert(new)]);
        }
    }
    ops
}

/// Threads inserting and removing disjoint sets concurrently, every remove of a key whose
/// insert happened before it: the final counters equal the sequential result exactly (no
/// counter saturates at this load, so the order of the operations does not matter).
#[test]
fn disjoint_threads_equal_sequential_result() {
    for layout in [CounterLayout::Blocked, CounterLayout::Standard] {
        for threads in [2u64, 4, 8] {
            let preload: Vec<u64> = (0..threads)
                .flat_map(|t| (0..PER_THREAD).map(move |i| t * STRIDE + i))
                .collect();
            let mut seq = fresh(layout);
            seq.insert_batch(&preload);
            let atomic = AtomicCountingBloomFilter::from(seq.clone());
            let scripts: Vec<Vec<Op>> = (0..threads).map(script).collect();
            for op in scripts.iter().flatten() {
                match *op {
                    Op::Insert(k) => {
                        seq.insert(&k);
                    }
                    Op::Remove(k) => {
                        seq.remove(&k).unwrap();
                    }
                }
            }
            let barrier = Barrier::new(threads as usize);
            std::thread::scope(|s| {
                for ops in &scripts {
                    let (atomic, barrier) = (&atomic, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        for op in ops {
                            match *op {
                                Op::Insert(k) => {
                                    atomic.insert(&k);
                                }
                                Op::Remove(k) => {
                                    atomic.remove(&k).expect("remove of an inserted key failed");
                                }
                            }
                        }
                    });
                }
            });
            assert_eq!(seq.saturated_counters(), 0);
            let got = atomic.into_inner();
            assert!(
                got == seq,
                "{layout:?} with {threads} threads differs from the sequential result"
            );
        }
    }
}

/// Removes racing with inserts of the same key, some of them not ordered after any insert
/// of it: the documented guarantee is no underflow and no false negative for keys that
/// stay present; a skipped decrement only leaves a counter higher than the sequential
/// result of the operations that succeeded.
#[test]
fn racing_removes_never_underflow() {
    for layout in [CounterLayout::Blocked, CounterLayout::Standard] {
        let keys: Vec<u64> = (0..20_000).collect();
        let stay: Vec<u64> = (1 << 40..(1 << 40) + 5_000).collect();
        let mut base = fresh(layout);
        base.insert_batch(&keys);
        base.insert_batch(&stay);
        let atomic = AtomicCountingBloomFilter::from(base.clone());
        let barrier = Barrier::new(2);
        // Thread A inserts every key once more; thread B removes every key twice (the
        // second remove races with A's insert of the same key).
        let removed_ok: Vec<bool> = std::thread::scope(|s| {
            let (a, b, keys) = (&atomic, &barrier, &keys);
            s.spawn(move || {
                b.wait();
                for k in keys {
                    a.insert(k);
                }
            });
            let remover = s.spawn(move || {
                b.wait();
                let mut ok = Vec::with_capacity(2 * keys.len());
                for k in keys {
                    ok.push(a.remove(k).is_ok());
                    ok.push(a.remove(k).is_ok());
                }
                ok
            });
            remover.join().unwrap()
        });
        // (A second remove that runs before A's insert of its key is outside the contract:
        // if the key's counters are non-zero because of other keys it decrements theirs,
        // which can make a later first remove report NotPresent. Only final-state
        // guarantees are checked.)
        let got = atomic.into_inner();
        for k in &stay {
            assert!(got.contains(k), "false negative for a key that stayed");
        }
        // Sequential result of the operations that succeeded: all inserts, then the
        // successful removes (each succeeds: every key has two occurrences).
        let mut seq = base.clone();
        seq.insert_batch(&keys);
        for (i, k) in keys.iter().enumerate() {
            for j in 0..2 {
                if removed_ok[2 * i + j] {
                    seq.remove(k).unwrap();
                }
            }
        }
        let skipped: u64 = counters(&got)
            .iter()
            .zip(counters(&seq))
            .map(|(&g, s)| {
                assert!(
                    g >= s,
                    "a counter went below the sequential result (underflow)"
                );
                u64::from(g - s)
            })
            .sum();
        // Skipped decrements happen only where a racing remove emptied a counter between
        // the check and the decrement: at most k per successful remove.
        let ok_removes = removed_ok.iter().filter(|&&ok| ok).count() as u64;
        assert!(skipped <= ok_removes * u64::from(got.num_hashes()));
    }
}

/// `par_insert_batch` equals a sequential build.
#[test]
fn parallel_bulk_load_equals_sequential() {
    let keys: Vec<u64> = (0..100_000).map(|i| i * 7919).collect();
    let atomic = AtomicCountingBloomFilter::from(fresh(CounterLayout::Blocked));
    atomic.par_insert_batch(&keys);
    let mut seq = fresh(CounterLayout::Blocked);
    seq.insert_batch(&keys);
    assert!(atomic.snapshot() == seq);
    assert_eq!(atomic.par_remove_batch(&keys), keys.len() as u64);
    assert!(atomic.into_inner().counter_histogram()[0] > 0);
}
