//! Saturation: counters forced to 15 stay there, and removing keys never creates a false
//! negative for keys still present.

use crate::common;

use bloomforge_core::{Count, RemoveOutcome};
use bloomforge_counting::{CounterLayout, CountingBloomFilter, COUNTER_MAX};
use common::counters;

fn check_saturation(mut f: CountingBloomFilter) {
    // 150 keys x 4 inserts into ~128 counters: most counters saturate.
    let keys: Vec<u32> = (0..150).collect();
    for _ in 0..4 {
        for k in &keys {
            f.insert(k);
        }
    }
    let saturated = f.saturated_counters();
    assert!(
        saturated > f.num_counters() / 2,
        "only {saturated} saturated"
    );
    assert_eq!(f.counter_histogram()[15], saturated);

    // Remove every key, one occurrence at a time, in an order that interleaves keys; after
    // each remove every key with occurrences left must still read present.
    let mut left = vec![4u32; keys.len()];
    for round in 0..4 {
        for step in 0..keys.len() {
            let i = if round % 2 == 0 {
                step
            } else {
                keys.len() - 1 - step
            };
            let k = &keys[i];
            assert!(f.remove(k).is_ok(), "remove of present key {k} failed");
            left[i] -= 1;
            for (j, kj) in keys.iter().enumerate() {
                if left[j] > 0 {
                    assert!(f.contains(kj), "false negative for {kj}");
                }
            }
        }
    }
    // Everything removed: saturated counters are sticky (they cost false positives, never
    // false negatives); every other counter is back to 0.
    assert_eq!(f.saturated_counters(), saturated);
    assert!(counters(&f).iter().all(|&c| c == 0 || c == COUNTER_MAX));
}

#[test]
fn blocked_saturation_never_creates_false_negatives() {
    check_saturation(
        CountingBloomFilter::with_num_counters(128)
            .hashes(4)
            .unwrap(),
    );
}

#[test]
fn standard_saturation_never_creates_false_negatives() {
    let f = CountingBloomFilter::standard_with_num_counters(128)
        .hashes(4)
        .unwrap();
    assert_eq!(f.layout(), CounterLayout::Standard);
    check_saturation(f);
}

#[test]
fn saturated_counter_ignores_decrements() {
    let mut f = CountingBloomFilter::with_num_counters(128)
        .hashes(1)
        .unwrap();
    for _ in 0..20 {
        f.insert(&7u8);
    }
    assert_eq!(f.count(&7u8), Count::AtLeast(15));
    for _ in 0..20 {
        // The CLI and callers learn that the key stays.
        assert_eq!(f.remove(&7u8), Ok(RemoveOutcome::Saturated));
    }
    assert_eq!(f.count(&7u8), Count::AtLeast(15));
    let mut g = CountingBloomFilter::with_num_counters(128)
        .hashes(1)
        .unwrap();
    g.insert(&7u8);
    g.insert(&7u8);
    assert_eq!(g.count(&7u8), Count::Exact(2));
    assert_eq!(g.remove(&7u8), Ok(RemoveOutcome::Removed));
    assert_eq!(g.count(&7u8), Count::Exact(1));
    assert!(f.contains(&7u8));
}
