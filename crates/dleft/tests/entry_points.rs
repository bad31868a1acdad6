//! `new(expected_items, false_pos)`, the builder sized by `expected_items` / `false_pos`
//! and `with_false_pos(p).expected_items(n)` build the same d-left filter and refuse bad
//! parameters with the same errors.

use bloomforge_core::Error;
use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};

#[test]
fn dleft_entry_points_agree() {
    let fill = |mut f: DLeftCountingBloomFilter| {
        for k in 0..3000u64 {
            f.insert(&k).unwrap();
        }
        f.to_bytes()
    };
    let a = fill(DLeftCountingBloomFilter::new(3000, 0.01).unwrap());
    let b = fill(
        DLeftCountingBloomFilter::builder()
            .expected_items(3000)
            .false_pos(0.01)
            .build()
            .unwrap(),
    );
    let c = fill(
        DLeftCountingBloomFilter::with_false_pos(0.01)
            .expected_items(3000)
            .unwrap(),
    );
    assert!(a == b && a == c);
    let s = fill(
        DLeftCountingBloomFilter::builder()
            .expected_items(3000)
            .seed(5)
            .build()
            .unwrap(),
    );
    assert_ne!(s, a);
    for err in [
        DLeftCountingBloomFilter::new(0, 0.01).err(),
        DLeftCountingBloomFilter::builder()
            .false_pos(0.01)
            .build()
            .err(),
    ] {
        assert_eq!(err, Some(DLeftError::Core(Error::ZeroItems)));
    }
    assert!(matches!(
        DLeftCountingBloomFilter::new(10, 0.0).err(),
        Some(DLeftError::Core(Error::InvalidFalsePositiveRate(_)))
    ));
}

#[test]
fn from_iterator_and_extend_hold_every_key() {
    let keys: Vec<String> = (0..5000).map(|i| format!("key-{i}")).collect();
    let f: DLeftCountingBloomFilter = keys.iter().collect();
    assert_eq!(f.len(), 5000);
    assert!(keys.iter().all(|k| f.contains(k)));
    let mut g = DLeftCountingBloomFilter::new(10_000, 0.01).unwrap();
    g.extend(keys.iter());
    g.try_extend(["one more"]).unwrap();
    assert_eq!(g.len(), 5001);
    assert!(keys.iter().all(|k| g.contains(k)) && g.contains(&"one more"));
}
