//! Construction, errors, batches and the iterator traits.

use bloomforge_core::Error;
use bloomforge_cuckoo::{math, CuckooError, CuckooFilter, Fp16, Fp8};

#[test]
fn construction_errors() {
    assert_eq!(
        CuckooFilter::new(0, 0.01).unwrap_err(),
        CuckooError::Core(Error::ZeroItems)
    );
    for p in [0.0, 1.0, -1.0, f64::NAN] {
        assert!(matches!(
            CuckooFilter::new(10, p).unwrap_err(),
            CuckooError::Core(Error::InvalidFalsePositiveRate(_))
        ));
    }
    assert!(matches!(
        CuckooFilter::builder()
            .expected_items(10)
            .bucket_size(3)
            .build()
            .unwrap_err(),
        CuckooError::InvalidParameter {
            name: "bucket_size",
            ..
        }
    ));
    assert!(matches!(
        CuckooFilter::builder()
            .expected_items(10)
            .target_load(0.0)
            .build()
            .unwrap_err(),
        CuckooError::InvalidParameter {
            name: "target_load",
            ..
        }
    ));
    assert!(matches!(
        CuckooFilter::new(10, 0.0001).unwrap_err(),
        CuckooError::FingerprintTooShort {
            bits: 12,
            bucket_size: 2,
            ..
        }
    ));
    assert!(matches!(
        CuckooFilter::builder()
            .expected_items(10)
            .false_pos(0.01)
            .fingerprint::<Fp8>()
            .build(),
        Err(CuckooError::FingerprintTooShort { bits: 8, .. })
    ));
    assert!(matches!(
        CuckooFilter::builder()
            .expected_items(u64::MAX)
            .build()
            .unwrap_err(),
        CuckooError::Core(Error::TooLarge { .. })
    ));
    // 12 bits reach 1 % at 4-slot buckets, 0.1 % only at 2-slot buckets.
    assert_eq!(CuckooFilter::new(10, 0.01).unwrap().bucket_size(), 4);
    assert_eq!(CuckooFilter::new(10, 0.001).unwrap().bucket_size(), 2);
    let f16 = CuckooFilter::builder()
        .expected_items(1000)
        .false_pos(0.0002)
        .fingerprint::<Fp16>()
        .build()
        .unwrap();
    assert_eq!(f16.bucket_size(), 4);
    assert!(math::fp_exact(4, 16, 0.94) < 0.0002);
}

#[test]
fn counters_and_clear() {
    let mut f = CuckooFilter::new(1000, 0.01).unwrap();
    assert!(f.is_empty());
    f.insert(&1u64).unwrap();
    f.insert(&1u64).unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!(f.remove(&1u64), Ok(bloomforge_core::RemoveOutcome::Removed));
    assert!(f.contains(&1u64));
    f.remove(&1u64).unwrap();
    assert!(!f.contains(&1u64));
    assert_eq!(f.remove(&1u64), Err(CuckooError::NotPresent));
    for k in 0..500u64 {
        f.insert(&k).unwrap();
    }
    assert!((f.load_factor() - 500.0 / f.capacity() as f64).abs() < 1e-12);
    assert_eq!(f.memory_bits(), f.capacity() * 12);
    f.clear();
    assert!(f.is_empty() && !f.contains(&3u64));
    f.validate().unwrap();
}

#[test]
fn batches() {
    let mut f = CuckooFilter::new(10_000, 0.01).unwrap();
    let keys: Vec<u64> = (0..5000).collect();
    f.insert_batch(&keys).unwrap();
    let mut out = vec![false; 5000];
    f.contains_batch(&keys, &mut out).unwrap();
    assert!(out.iter().all(|&b| b));
    let mut short = vec![true; 3];
    assert!(matches!(
        f.contains_batch(&keys, &mut short).unwrap_err(),
        CuckooError::Core(Error::LengthMismatch { keys: 5000, out: 3 })
    ));
    assert_eq!(short, vec![true; 3]);
}

/// A batch that overflows is rolled back: the filter answers exactly as before.
#[test]
fn failed_batch_changes_no_answer() {
    let mut f = CuckooFilter::builder()
        .expected_items(1000)
        .seed(3)
        .build()
        .unwrap();
    let first: Vec<u64> = (0..900).collect();
    f.insert_batch(&first).unwrap();
    let probe: Vec<u64> = (0..100_000).collect();
    let before: Vec<bool> = probe.iter().map(|k| f.contains(k)).collect();
    let len = f.len();
    let more: Vec<u64> = (1_000_000..1_001_000).collect();
    let err = f.insert_batch(&more).unwrap_err();
    assert!(matches!(err, CuckooError::BatchFull { .. }));
    assert_eq!(f.len(), len);
    let after: Vec<bool> = probe.iter().map(|k| f.contains(k)).collect();
    assert_eq!(after, before);
    f.validate().unwrap();
}

#[test]
fn iterator_traits() {
    let f: CuckooFilter = (0..10_000u64).collect();
    assert_eq!(f.len(), 10_000);
    assert!((0..10_000u64).all(|k| f.contains(&k)));

    let mut g = CuckooFilter::builder().expected_items(100).build().unwrap();
    g.extend(0..50u64);
    assert_eq!(g.len(), 50);
    let err = g.try_extend(100..10_000u64).unwrap_err();
    assert!(matches!(err, CuckooError::Full { .. }));
    assert!((0..50u64).all(|k| g.contains(&k)));
}

#[test]
#[should_panic(expected = "try_extend")]
fn extend_panics_when_full() {
    let mut g = CuckooFilter::builder().expected_items(10).build().unwrap();
    g.extend(0..10_000u64);
}

#[test]
fn core_filter_trait() {
    use bloomforge_core::Filter;
    let mut f = CuckooFilter::new(100, 0.01).unwrap();
    assert!(!Filter::insert(&mut f, &5u64).unwrap());
    assert!(Filter::insert(&mut f, &5u64).unwrap());
    assert!(Filter::contains(&f, &5u64));
    assert!(Filter::<u64>::expected_false_pos(&f) > 0.0);
    let e: Error = CuckooError::Core(Error::ZeroItems).into();
    assert_eq!(e, Error::ZeroItems);
}

/// Collecting heavy duplicates terminates: a key repeated far more often than its two
/// buckets have slots is stored once (FromIterator builds a set), and every key answers.
#[test]
fn collect_heavy_duplicates() {
    // One key 1000 times.
    let f: CuckooFilter = std::iter::repeat_n(42u64, 1000).collect();
    assert_eq!(f.len(), 1);
    assert!(f.contains(&42u64));
    f.validate().unwrap();

    // 200 keys, each 10 to 59 times, interleaved.
    let keys: Vec<u64> = (0..200u64)
        .flat_map(|k| std::iter::repeat_n(k * 7919, 10 + (k % 50) as usize))
        .collect();
    let mut shuffled = keys.clone();
    shuffled.sort_by_key(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let f: CuckooFilter = shuffled.iter().collect();
    assert_eq!(f.len(), 200);
    assert!(keys.iter().all(|k| f.contains(k)));
    f.validate().unwrap();

    // Removing a collected key once removes it.
    let mut f: CuckooFilter = ["a", "b", "a", "a"].into_iter().collect();
    assert_eq!(f.len(), 2);
    f.remove(&"a").unwrap();
    assert!(!f.contains(&"a") && f.contains(&"b"));

    // The empty iterator gives an empty filter.
    let f: CuckooFilter = std::iter::empty::<u64>().collect();
    assert!(f.is_empty());
}

/// Extend keeps insert's multiset meaning: a repeated key stores copies until its two
/// buckets are full, and then extend panics (try_extend returns the error).
#[test]
fn extend_with_heavy_duplicates_reports_full() {
    let mut f = CuckooFilter::builder()
        .expected_items(1000)
        .build()
        .unwrap();
    let err = f.try_extend(std::iter::repeat_n(5u64, 100)).unwrap_err();
    assert!(matches!(err, CuckooError::Full { .. }));
    assert!(f.contains(&5u64));
    let caught = std::panic::catch_unwind(move || {
        let mut f = CuckooFilter::builder()
            .expected_items(1000)
            .build()
            .unwrap();
        f.extend(std::iter::repeat_n(5u64, 100));
    });
    assert!(caught.is_err());
}

/// A reader that fails with an OS-style error.
struct Broken;
impl std::io::Read for Broken {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "boom",
        ))
    }
}

/// `?` from a cuckoo error into core's `Error`: a wrapped core error (an I/O failure, with
/// the `io::Error` as its source) comes back as itself, a cuckoo-only one as
/// `Error::Filter` that downcasts back, with the same message.
#[test]
fn errors_convert_into_core_and_keep_their_source() {
    use std::error::Error as _;
    fn read() -> bloomforge_core::Result<CuckooFilter> {
        Ok(CuckooFilter::read_from(Broken)?)
    }
    let err = read().unwrap_err();
    assert!(matches!(&err, Error::Io(io)
        if io.kind() == Some(std::io::ErrorKind::ConnectionReset)));
    let os = err.source().unwrap().downcast_ref::<std::io::Error>();
    assert_eq!(
        os.map(|e| e.kind()),
        Some(std::io::ErrorKind::ConnectionReset)
    );

    fn fill() -> bloomforge_core::Result<()> {
        let mut f = CuckooFilter::new(10, 0.01)?;
        for _ in 0..100 {
            f.insert(&1u64)?;
        }
        Ok(())
    }
    let err = fill().unwrap_err();
    let Error::Filter(wrapped) = &err else {
        panic!("{err:?}")
    };
    let cuckoo = wrapped.downcast_ref::<CuckooError>().unwrap();
    assert!(matches!(cuckoo, CuckooError::Full { .. }));
    assert_eq!(err.to_string(), cuckoo.to_string());
}
