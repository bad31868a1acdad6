//! Stress: threads insert, query and remove through `&self`; nothing is lost.

use bloomforge_cuckoo::{ConcurrentCuckooFilter, CuckooFilter};

#[test]
fn concurrent_inserts_and_removes_lose_nothing() {
    const THREADS: u64 = 4;
    const PER: u64 = 50_000;
    let f = ConcurrentCuckooFilter::new(THREADS * PER, 0.01).unwrap();
    assert!(f.num_shards() > 1);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let f = &f;
            s.spawn(move || {
                let base = t << 40;
                for k in 0..PER {
                    f.insert(&(base + k)).unwrap();
                    // Every key this thread inserted and kept is visible at once.
                    if k.is_multiple_of(64) {
                        assert!(f.contains(&(base + k / 2)) || (k / 2).is_multiple_of(3));
                    }
                    // Remove every third key after inserting it.
                    if k.is_multiple_of(3) {
                        f.remove(&(base + k)).unwrap();
                    }
                }
            });
        }
    });
    let kept = |k: u64| !k.is_multiple_of(3);
    for t in 0..THREADS {
        for k in 0..PER {
            if kept(k) {
                assert!(f.contains(&((t << 40) + k)), "lost key {t}/{k}");
            }
        }
    }
    let expected = THREADS * (0..PER).filter(|&k| kept(k)).count() as u64;
    assert_eq!(f.len(), expected);
    let shards: Vec<CuckooFilter> = f.into_shards();
    for s in &shards {
        s.validate().unwrap();
    }
}

#[test]
fn send_sync() {
    fn is<T: Send + Sync>() {}
    is::<ConcurrentCuckooFilter>();
    is::<CuckooFilter>();
}

/// `FromIterator` collects a set (heavy duplicates terminate), `Extend` works owned and
/// through `&filter` from several threads, and `try_extend` reports a full shard.
#[test]
fn collect_and_extend() {
    let keys: Vec<u64> = (0..20_000u64).map(|i| i % 5000).collect();
    let f: ConcurrentCuckooFilter = keys.iter().collect();
    assert_eq!(f.len(), 5000);
    assert!(keys.iter().all(|k| f.contains(k)));
    let f: ConcurrentCuckooFilter = std::iter::repeat_n(9u64, 1000).collect();
    assert_eq!(f.len(), 1);

    let mut f = ConcurrentCuckooFilter::new(50_000, 0.01).unwrap();
    f.extend(0..1000u64);
    std::thread::scope(|s| {
        for t in 1..4u64 {
            let f = &f;
            s.spawn(move || {
                let mut f = f;
                f.extend(t * 10_000..t * 10_000 + 1000);
            });
        }
    });
    assert_eq!(f.len(), 4000);
    assert!((1..4u64).all(|t| (t * 10_000..t * 10_000 + 1000).all(|k| f.contains(&k))));

    let small = ConcurrentCuckooFilter::new(10, 0.01).unwrap();
    let err = small
        .try_extend(std::iter::repeat_n(1u64, 100))
        .unwrap_err();
    assert!(matches!(err, bloomforge_cuckoo::CuckooError::Full { .. }));
}

/// `ConcurrentCuckooFilter::builder()` takes the plain builder's setters and the total key
/// count once; it answers as `from_builder` with the same parameters, and validates alike.
#[test]
fn builder_matches_from_builder() {
    use bloomforge_cuckoo::{CuckooError, Fp16};
    let a = ConcurrentCuckooFilter::builder()
        .expected_items(50_000)
        .false_pos(0.001)
        .seed(11)
        .build()
        .unwrap();
    let b = ConcurrentCuckooFilter::from_builder(
        CuckooFilter::builder().false_pos(0.001).seed(11),
        50_000,
    )
    .unwrap();
    assert_eq!(
        (a.num_shards(), a.capacity(), a.memory_bits()),
        (b.num_shards(), b.capacity(), b.memory_bits())
    );
    for k in 0..50_000u64 {
        a.insert(&k).unwrap();
        b.insert(&k).unwrap();
    }
    assert!((0..200_000u64).all(|k| a.contains(&k) == b.contains(&k)));
    let c = ConcurrentCuckooFilter::builder()
        .expected_items(1000)
        .bucket_size(8)
        .max_kicks(100)
        .target_load(0.9)
        .fingerprint::<Fp16>()
        .hasher(bloomforge_core::DefaultHasher::with_seed(3))
        .build()
        .unwrap();
    let shards = c.into_shards();
    assert!(shards
        .iter()
        .all(|s| s.fingerprint_bits() == 16 && s.bucket_size() == 8 && s.max_kicks() == 100));
    assert_eq!(
        ConcurrentCuckooFilter::builder().build().unwrap_err(),
        CuckooError::Core(bloomforge_core::Error::ZeroItems)
    );
    assert!(matches!(
        ConcurrentCuckooFilter::builder()
            .expected_items(10)
            .bucket_size(3)
            .build(),
        Err(CuckooError::InvalidParameter {
            name: "bucket_size",
            ..
        })
    ));
}
