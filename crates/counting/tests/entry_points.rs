//! `new(expected_items, false_pos)`, the builder and `with_false_pos(p).expected_items(n)`
//! build the same counting filter and refuse bad parameters with the same errors.

use bloomforge_core::Error;
use bloomforge_counting::{AtomicCountingBloomFilter, CountingBloomFilter, CountingError};

#[test]
fn counting_entry_points_agree() {
    let keys: Vec<u64> = (0..3000).collect();
    let fill = |mut f: CountingBloomFilter| {
        f.insert_batch(&keys);
        f.to_bytes()
    };
    let a = fill(CountingBloomFilter::new(3000, 0.01).unwrap());
    let b = fill(
        CountingBloomFilter::builder()
            .expected_items(3000)
            .false_pos(0.01)
            .build()
            .unwrap(),
    );
    let c = fill(
        CountingBloomFilter::with_false_pos(0.01)
            .expected_items(3000)
            .unwrap(),
    );
    assert!(a == b && a == c);
    let s = fill(
        CountingBloomFilter::builder()
            .expected_items(3000)
            .seed(5)
            .build()
            .unwrap(),
    );
    assert_ne!(s, a);
    let atomic = AtomicCountingBloomFilter::new(3000, 0.01).unwrap();
    atomic.insert_batch(&keys);
    // Same counters (the atomic filter keeps no exact count, so the headers' item counts
    // may differ: one exact, one estimated).
    assert!(atomic.into_inner() == CountingBloomFilter::from_bytes(&a).unwrap());
    for err in [
        CountingBloomFilter::new(0, 0.01).err(),
        CountingBloomFilter::builder().build().err(),
        AtomicCountingBloomFilter::new(0, 0.01).err(),
    ] {
        assert_eq!(err, Some(CountingError::Core(Error::ZeroItems)));
    }
    assert!(matches!(
        CountingBloomFilter::new(10, 1.5).err(),
        Some(CountingError::Core(Error::InvalidFalsePositiveRate(_)))
    ));
}
