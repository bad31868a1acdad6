//! Public API odds and ends: reconstruction from lines, the shared `Filter` trait,
//! builders and their errors.

use bloomforge_core::{Error, Filter};
use bloomforge_counting::{
    AtomicCountingBloomFilter, CounterLayout, CounterLine, CountingBloomFilter, CountingError,
};

fn fill(f: &mut dyn Filter<u64, InsertError = core::convert::Infallible>) {
    for k in 0..500u64 {
        f.insert(&k).unwrap();
    }
}

#[test]
fn from_iterator_and_atomic_clone() {
    let f: CountingBloomFilter = (0..1000u64).collect();
    assert!((0..1000u64).all(|k| f.contains(&k)));
    assert!(f.expected_false_pos() <= 0.0101);
    let empty: CountingBloomFilter = core::iter::empty::<u64>().collect();
    assert!(!empty.contains(&1u64));
    let a = AtomicCountingBloomFilter::from(f.clone());
    let b = a.clone();
    b.remove(&7u64).unwrap();
    assert_eq!(a.snapshot(), f, "a clone is an independent copy");
    assert_eq!(b.count(&7u64).get(), f.count(&7u64).get() - 1);
}

#[test]
fn filter_trait_works_for_both_types() {
    let mut plain = CountingBloomFilter::with_false_pos(0.01)
        .expected_items(1000)
        .unwrap();
    fill(&mut plain);
    let mut atomic = AtomicCountingBloomFilter::with_false_pos(0.01)
        .expected_items(1000)
        .unwrap();
    fill(&mut atomic);
    for k in 0..500u64 {
        assert!(Filter::contains(&plain, &k) && Filter::contains(&atomic, &k));
    }
    assert_eq!(Filter::<u64>::memory_bits(&plain), plain.memory_bits());
    let (a, b) = (
        Filter::<u64>::expected_false_pos(&plain),
        Filter::<u64>::expected_false_pos(&atomic),
    );
    assert!(a > 0.0 && a == b);
}

#[test]
fn lines_round_trip() {
    for layout in [CounterLayout::Blocked, CounterLayout::Standard] {
        let mut f = CountingBloomFilter::sized_for(
            layout,
            0.01,
            1000,
            bloomforge_core::DefaultHasher::default(),
        )
        .unwrap();
        f.extend(0..1000u32);
        let g = CountingBloomFilter::from_lines(
            layout,
            f.as_lines().to_vec(),
            f.num_counters(),
            f.num_hashes(),
            *f.hasher(),
        )
        .unwrap();
        assert!(f == g);
        // Wrong number of lines.
        let err = CountingBloomFilter::from_lines(
            layout,
            f.as_lines()[1..].to_vec(),
            f.num_counters(),
            f.num_hashes(),
            *f.hasher(),
        )
        .unwrap_err();
        assert!(matches!(err, CountingError::InvalidLines { .. }), "{err}");
    }
    // A standard filter of 130 counters: counters 130..256 of the two lines are padding.
    let mut lines = vec![CounterLine::ZERO; 2];
    lines[1].words[7] = 0xF << 60;
    let err = CountingBloomFilter::from_lines(
        CounterLayout::Standard,
        lines,
        130,
        3,
        bloomforge_core::DefaultHasher::default(),
    )
    .unwrap_err();
    assert!(matches!(err, CountingError::InvalidLines { .. }), "{err}");
}

#[test]
fn builders_validate_input() {
    let e = CountingBloomFilter::with_false_pos(0.0)
        .expected_items(10)
        .unwrap_err();
    assert_eq!(e, CountingError::Core(Error::InvalidFalsePositiveRate(0.0)));
    let e = CountingBloomFilter::with_false_pos(0.01)
        .expected_items(0)
        .unwrap_err();
    assert_eq!(e, CountingError::Core(Error::ZeroItems));
    let e = CountingBloomFilter::with_num_counters(0)
        .hashes(3)
        .unwrap_err();
    assert_eq!(e, CountingError::Core(Error::ZeroBits));
    let e = CountingBloomFilter::standard_with_num_counters(100)
        .hashes(65)
        .unwrap_err();
    assert!(matches!(
        e,
        CountingError::Core(Error::InvalidHashCount { k: 65, .. })
    ));
    let e = CountingBloomFilter::with_num_counters(u64::MAX)
        .hashes(3)
        .unwrap_err();
    assert!(
        matches!(e, CountingError::Core(Error::TooLarge { .. })),
        "{e}"
    );
    // A target below what the sizing cap reaches is refused, not silently missed (the
    // blocked layout tops out near 2.8e-9 at 256 counters per key).
    let e = CountingBloomFilter::with_false_pos(1e-10)
        .expected_items(1000)
        .unwrap_err();
    assert!(
        matches!(e, CountingError::Core(Error::UnreachableFalsePositiveRate { best, .. }) if best > 1e-10),
        "{e}"
    );
    let f = CountingBloomFilter::with_false_pos(1e-8)
        .expected_items(1000)
        .unwrap();
    assert!(
        bloomforge_counting::math::blocked_fp(f.num_counters() as f64 / 1000.0, f.num_hashes())
            <= 1e-8 * (1.0 + 1e-9)
    );
    // Messages say what to do.
    assert!(CountingError::NotPresent.to_string().contains("unchanged"));
}

#[test]
fn builders_choose_layout_and_size() {
    let f = CountingBloomFilter::with_num_counters(1000)
        .seed(3)
        .hashes(5)
        .unwrap();
    assert_eq!(f.layout(), CounterLayout::Blocked);
    assert_eq!(f.num_counters(), 1024);
    assert_eq!(f.num_blocks(), 8);
    let g = CountingBloomFilter::standard_with_num_counters(1000)
        .hashes(5)
        .unwrap();
    assert_eq!(g.layout(), CounterLayout::Standard);
    assert_eq!(g.num_counters(), 1000);
    let s = CountingBloomFilter::standard_with_false_pos(0.01)
        .expected_items(10_000)
        .unwrap();
    let (m, k) = bloomforge_core::math::std_size(10_000, 0.01);
    assert_eq!((s.num_counters(), s.num_hashes()), (m, k));
    assert!(f.is_empty() && g.is_empty());
    // Sizing scales with n: the same k, at least 10 counters per key at 1 %.
    for i in 1..=20u64 {
        let g = CountingBloomFilter::with_false_pos(0.01)
            .expected_items(i * 1000)
            .unwrap();
        assert_eq!(g.num_hashes(), 6);
        assert!(
            g.num_counters() >= i * 1000 * 10,
            "{i}: {}",
            g.num_counters()
        );
    }
}

#[test]
fn len_counts_inserts_minus_removes_and_survives_bytes_and_union() {
    let mut f = CountingBloomFilter::new(1_000, 0.01).unwrap();
    assert_eq!((f.len(), f.is_empty()), (0, true));
    for i in 0..100u64 {
        f.insert(&i);
    }
    for i in 0..30u64 {
        f.remove(&i).unwrap();
    }
    assert!(f.remove(&"never inserted").is_err());
    assert_eq!(f.len(), 70);
    let mut g = CountingBloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g.len(), 70);
    g.insert_batch(&[1000u64, 1001]);
    let mut removed = [false; 2];
    g.remove_batch(&[1000u64, 5000], &mut removed).unwrap();
    assert_eq!(g.len(), 71 - u64::from(removed[1]));
    f.union(&g).unwrap();
    assert_eq!(f.len(), 70 + g.len());
    f.clear();
    assert_eq!((f.len(), f.is_empty()), (0, true));
}
