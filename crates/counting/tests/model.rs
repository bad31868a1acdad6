//! Model-based tests: the filters against an exact multiset (`HashMap<key, count>`).

use crate::common;

use bloomforge_core::{Count, RemoveOutcome};
use bloomforge_counting::{
    AtomicCountingBloomFilter, CounterLayout, CountingBloomFilter, CountingError, COUNTER_MAX,
};
use common::counters;
use proptest::prelude::*;
use std::collections::HashMap;

#[derive(Clone, Debug)]
enum Op {
    Insert(u16),
    Remove(u16),
}

fn ops(domain: u16) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0..domain).prop_map(Op::Insert),
            2 => (0..domain).prop_map(Op::Remove),
        ],
        0..400,
    )
}

/// A tiny filter so keys collide and counters saturate.
fn tiny(layout: CounterLayout, seed: u64) -> CountingBloomFilter {
    match layout {
        CounterLayout::Blocked => CountingBloomFilter::with_num_counters(256)
            .seed(seed)
            .hashes(4)
            .unwrap(),
        CounterLayout::Standard => CountingBloomFilter::standard_with_num_counters(200)
            .seed(seed)
            .hashes(3)
            .unwrap(),
    }
}

/// Runs `ops` against the filter, its atomic twin and the exact multiset, checking after
/// every step: no false negative, `count >= min(true count, 15)`, removes of present keys
/// succeed, removes of absent keys either fail with the filter unchanged or (a false
/// positive) behave as documented.
fn run_model(layout: CounterLayout, seed: u64, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut f = tiny(layout, seed);
    let atomic = AtomicCountingBloomFilter::from(tiny(layout, seed));
    let mut model: HashMap<u16, u32> = HashMap::new();
    for op in ops {
        match *op {
            Op::Insert(key) => {
                f.insert(&key);
                atomic.insert(&key);
                *model.entry(key).or_default() += 1;
            }
            Op::Remove(key) => {
                let truth = model.get(&key).copied().unwrap_or(0);
                if truth > 0 {
                    let saturated = f.count(&key).is_saturated();
                    let outcome = f.remove(&key);
                    prop_assert!(outcome.is_ok(), "{:?}", outcome);
                    prop_assert_eq!(atomic.remove(&key), outcome.clone());
                    if saturated {
                        // Every counter at 15: none moved.
                        prop_assert_eq!(outcome, Ok(RemoveOutcome::Saturated));
                    }
                    model.insert(key, truth - 1);
                } else if !f.contains(&key) {
                    let before = f.clone();
                    prop_assert_eq!(f.remove(&key), Err(CountingError::NotPresent));
                    prop_assert_eq!(atomic.remove(&key), Err(CountingError::NotPresent));
                    prop_assert!(f == before, "a failed remove changed the filter");
                } else {
                    // A false positive: removing it is outside the contract. Check the
                    // documented behaviour on a copy (each of the key's non-saturated
                    // counters loses exactly one, nothing else changes) and drop the copy
                    // so the model stays exact.
                    let mut copy = f.clone();
                    let count_before = copy.count(&key);
                    let outcome = copy.remove(&key);
                    prop_assert!(outcome.is_ok());
                    let (old, new) = (counters(&f), counters(&copy));
                    let mut changed = 0;
                    for (a, b) in old.iter().zip(&new) {
                        if a != b {
                            prop_assert!(*a >= 1 && *a < COUNTER_MAX && *b == a - 1);
                            changed += 1;
                        }
                    }
                    prop_assert!(changed <= f.num_hashes());
                    let expect = match count_before {
                        Count::AtLeast(_) => Count::AtLeast(u64::from(COUNTER_MAX)),
                        Count::Exact(n) => Count::Exact(n - 1),
                    };
                    prop_assert_eq!(copy.count(&key), expect);
                }
            }
        }
        prop_assert_eq!(f.len(), model.values().map(|&t| u64::from(t)).sum::<u64>());
        for (key, &truth) in &model {
            if truth > 0 {
                prop_assert!(f.contains(key), "false negative for {}", key);
                prop_assert!(atomic.contains(key), "atomic false negative for {}", key);
                prop_assert!(f.count(key).get() >= u64::from(truth.min(COUNTER_MAX)));
            }
        }
        // The atomic twin answers every query as the plain filter (members, false
        // positives and negatives alike).
        for key in 0u16..64 {
            prop_assert_eq!(atomic.contains(&key), f.contains(&key), "key {}", key);
        }
    }
    // The atomic twin ran the same operations: identical counters.
    prop_assert!(atomic.into_inner() == f, "atomic and plain filters differ");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn blocked_matches_multiset(seed in 0u64..4, ops in ops(64)) {
        run_model(CounterLayout::Blocked, seed, &ops)?;
    }

    #[test]
    fn standard_matches_multiset(seed in 0u64..4, ops in ops(64)) {
        run_model(CounterLayout::Standard, seed, &ops)?;
    }

    /// Union: the saturating counter-wise sum; contains every key of both operands.
    #[test]
    fn union_is_saturating_sum(a in prop::collection::vec(0u16..500, 0..300),
                               b in prop::collection::vec(0u16..500, 0..300)) {
        for layout in [CounterLayout::Blocked, CounterLayout::Standard] {
            let (mut fa, mut fb) = (tiny(layout, 1), tiny(layout, 1));
            fa.extend(a.iter());
            fb.extend(b.iter());
            let mut u = fa.clone();
            u.union(&fb).unwrap();
            for ((x, y), z) in counters(&fa).iter().zip(counters(&fb)).zip(counters(&u)) {
                prop_assert_eq!(z, (x + y).min(COUNTER_MAX));
            }
            for key in a.iter().chain(&b) {
                prop_assert!(u.contains(key));
            }
            let mut v = fb.clone();
            v.union(&fa).unwrap();
            prop_assert!(u == v, "union is not commutative");
        }
    }
}

#[test]
fn union_rejects_mismatched_filters_unchanged() {
    let mut a = tiny(CounterLayout::Blocked, 1);
    a.insert(&1u8);
    let before = a.clone();
    for other in [
        tiny(CounterLayout::Blocked, 2),
        tiny(CounterLayout::Standard, 1),
        CountingBloomFilter::with_num_counters(512)
            .seed(1)
            .hashes(4)
            .unwrap(),
        CountingBloomFilter::with_num_counters(256)
            .seed(1)
            .hashes(5)
            .unwrap(),
    ] {
        let err = a.union(&other).unwrap_err();
        assert!(
            matches!(err, CountingError::IncompatibleFilters { .. }),
            "{err}"
        );
        assert!(a == before);
    }
}

#[test]
fn counts_are_exact_without_collisions() {
    let mut f = CountingBloomFilter::with_false_pos(1e-4)
        .expected_items(1000)
        .unwrap();
    for i in 0..10u32 {
        for _ in 0..i {
            f.insert(&i);
        }
    }
    for i in 0..10u32 {
        assert_eq!(f.count(&i), Count::Exact(u64::from(i)), "key {i}");
    }
    for _ in 0..40 {
        f.insert(&"hot");
    }
    assert_eq!(f.count(&"hot"), Count::AtLeast(15));
    assert!(f.saturated_counters() >= 1);
}

/// The atomic counting filter serializes as the plain one does and reads its bytes.
#[test]
fn atomic_counting_filter_round_trips_its_bytes() {
    use bloomforge_counting::AtomicCountingBloomFilter;
    let f = AtomicCountingBloomFilter::new(1_000, 0.01).unwrap();
    let keys: Vec<u64> = (0..1_000).collect();
    f.insert_batch(&keys);
    let bytes = f.to_bytes();
    assert_eq!(bytes, f.snapshot().to_bytes());
    let back = AtomicCountingBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(back.to_bytes(), bytes);
    let read = AtomicCountingBloomFilter::read_from(bytes.as_slice()).unwrap();
    assert!(keys.iter().all(|k| read.contains(k)));
    assert!(AtomicCountingBloomFilter::from_bytes(&bytes[1..]).is_err());
}
