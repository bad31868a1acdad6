//! The workspace conventions (docs/conventions.md) as they apply to the counting filters:
//! one meaning of `is_empty`.

use bloomforge_core::RemoveOutcome;
use bloomforge_counting::{AtomicCountingBloomFilter, CountingBloomFilter};

/// `is_empty()` is `len() == 0` on the plain filter (as on d-left's): a saturated key's
/// counters stay set after its last remove, and the filter is still empty.
#[test]
fn is_empty_means_len_zero() {
    let mut f = CountingBloomFilter::new(1000, 0.01).unwrap();
    assert_eq!((f.len(), f.is_empty()), (0, true));
    for _ in 0..20 {
        f.insert(&"hot");
    }
    assert!(!f.is_empty());
    let mut saturated = 0;
    for _ in 0..20 {
        if f.remove(&"hot").unwrap() == RemoveOutcome::Saturated {
            saturated += 1;
        }
    }
    assert!(saturated > 0);
    assert_eq!(f.len(), 0);
    assert!(f.is_empty(), "is_empty follows len");
    assert!(f.contains(&"hot"), "the saturated counters are still set");
    assert!(f.nonzero_counters() > 0);
    f.clear();
    assert!(f.is_empty() && f.nonzero_counters() == 0);
}

/// The atomic filter keeps no count: `is_empty` is "every counter zero", which is
/// `estimated_len() == 0`.
#[test]
fn atomic_is_empty_means_no_counter_set() {
    let f = AtomicCountingBloomFilter::new(1000, 0.01).unwrap();
    assert!(f.is_empty() && f.estimated_len() == 0.0);
    f.insert(&1u64);
    assert!(!f.is_empty() && f.estimated_len() > 0.5);
    f.remove(&1u64).unwrap();
    assert!(f.is_empty() && f.estimated_len() == 0.0);
}

/// `FromIterator` on the atomic filter equals the plain filter's counters; `Extend` works
/// owned and through `&filter` from several threads.
#[test]
fn atomic_collects_and_extends() {
    let keys: Vec<u64> = (0..3000u64).map(|i| i % 1000).collect();
    let a: AtomicCountingBloomFilter = keys.iter().collect();
    let plain: CountingBloomFilter = keys.iter().collect();
    assert!(a.snapshot() == plain);
    assert_eq!(a.count(&5u64).get(), 3);

    let mut a = AtomicCountingBloomFilter::new(5000, 0.01).unwrap();
    a.extend(&keys[..600]);
    std::thread::scope(|s| {
        for chunk in keys[600..].chunks(800) {
            let a = &a;
            s.spawn(move || {
                let mut a = a;
                a.extend(chunk);
            });
        }
    });
    let mut seq = CountingBloomFilter::new(5000, 0.01).unwrap();
    seq.extend(&keys);
    assert!(a.into_inner() == seq, "concurrent extend lost no increment");
}

/// The standard layout has a `builder()`-style entry point with the same setters.
#[test]
fn standard_layout_builder() {
    use bloomforge_counting::CounterLayout;
    let f = CountingBloomFilter::standard_builder()
        .expected_items(5000)
        .false_pos(0.01)
        .seed(3)
        .build()
        .unwrap();
    let g = CountingBloomFilter::standard_with_false_pos(0.01)
        .seed(3)
        .expected_items(5000)
        .unwrap();
    assert_eq!(f.layout(), CounterLayout::Standard);
    assert!(f == g);
    let (m, k) = bloomforge_core::math::std_size(5000, 0.01);
    assert_eq!((f.num_counters(), f.num_hashes()), (m, k));
    assert!(CountingBloomFilter::standard_builder()
        .expected_items(0)
        .build()
        .is_err());
}

/// A refused merge says which parameter differs, with both values.
#[test]
fn incompatible_filters_name_the_parameter() {
    use bloomforge_counting::CountingError;
    let mut a = CountingBloomFilter::with_num_counters(1024)
        .hashes(6)
        .unwrap();
    let b = CountingBloomFilter::with_num_counters(1024)
        .hashes(7)
        .unwrap();
    let err = a.union(&b).unwrap_err();
    assert!(matches!(err, CountingError::IncompatibleFilters { .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with("cannot merge: k differs (6 vs 7);"),
        "{msg}"
    );
    let c = CountingBloomFilter::with_num_counters(2048)
        .seed(5)
        .hashes(6)
        .unwrap();
    let msg = a.union(&c).unwrap_err().to_string();
    assert!(
        msg.contains("size differs (1024 vs 2048 counters)"),
        "{msg}"
    );
    assert!(msg.contains("hasher differs ("), "{msg}");
    assert!(!msg.contains("k differs"), "{msg}");
    let s = CountingBloomFilter::standard_with_num_counters(1024)
        .hashes(6)
        .unwrap();
    let msg = a.union(&s).unwrap_err().to_string();
    assert!(
        msg.contains("layout differs (blocked vs standard)"),
        "{msg}"
    );
}

/// `remove_batch_outcomes` gives exactly the outcomes (and the filter) of removing the keys
/// one by one, saturated keys, absent keys and repeats included, in both layouts and on
/// the atomic filter.
#[test]
fn remove_batch_outcomes_equal_one_by_one() {
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for standard in [false, true] {
        let mut f = if standard {
            CountingBloomFilter::standard_with_num_counters(600)
                .seed(2)
                .hashes(4)
                .unwrap()
        } else {
            CountingBloomFilter::with_num_counters(256)
                .seed(2)
                .hashes(4)
                .unwrap()
        };
        // Small tables and repeated keys: counters saturate, keys share counters.
        for _ in 0..600 {
            f.insert(&(next() % 120));
        }
        let keys: Vec<u64> = (0..400).map(|_| next() % 200).collect();
        let mut one_by_one = f.clone();
        let want: Vec<Option<RemoveOutcome>> =
            keys.iter().map(|k| one_by_one.remove(k).ok()).collect();
        assert!(want.contains(&Some(RemoveOutcome::Saturated)));
        assert!(want.contains(&Some(RemoveOutcome::Removed)));
        assert!(want.contains(&None));
        let atomic = AtomicCountingBloomFilter::from(f.clone());
        let mut out = vec![None; keys.len()];
        f.remove_batch_outcomes(&keys, &mut out).unwrap();
        assert_eq!(out, want, "standard {standard}");
        assert!(f == one_by_one);
        assert_eq!(f.len(), one_by_one.len());
        let mut out = vec![None; keys.len()];
        atomic.remove_batch_outcomes(&keys, &mut out).unwrap();
        assert_eq!(out, want, "atomic, standard {standard}");
        assert!(atomic.into_inner() == one_by_one);
        // Mismatched lengths: an error, nothing removed, `out` untouched.
        let before = f.clone();
        let mut short = [Some(RemoveOutcome::Removed)];
        assert!(f.remove_batch_outcomes(&keys, &mut short).is_err());
        assert_eq!(short, [Some(RemoveOutcome::Removed)]);
        assert!(f == before);
    }
}
