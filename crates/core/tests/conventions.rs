//! The workspace conventions (docs/conventions.md) as they apply to core's filters:
//! `is_empty` / `estimated_len` on every filter, plain and atomic.

use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter,
    BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter,
};

/// Core's filters cannot count their keys: `is_empty` means "no bit set", which is
/// `estimated_len() == 0`, on the plain and the atomic forms alike.
#[test]
fn atomic_filters_have_is_empty() {
    let a = AtomicBlockedBloomFilter::new(1000, 0.01).unwrap();
    let s = AtomicSplitBlockBloomFilter::new(1000, 0.01).unwrap();
    let t = AtomicStandardBloomFilter::new(1000, 0.01).unwrap();
    assert!(a.is_empty() && s.is_empty() && t.is_empty());
    assert_eq!(
        (a.estimated_len(), s.estimated_len(), t.estimated_len()),
        (0.0, 0.0, 0.0)
    );
    a.insert(&7u64);
    s.insert(&7u64);
    t.insert(&7u64);
    assert!(!a.is_empty() && !s.is_empty() && !t.is_empty());
    assert!(a.estimated_len() > 0.5 && s.estimated_len() > 0.5 && t.estimated_len() > 0.5);
    // The plain forms agree.
    let (a, s, t): (
        BlockedBloomFilter,
        SplitBlockBloomFilter,
        StandardBloomFilter,
    ) = (a.into_inner(), s.into_inner(), t.into_inner());
    assert!(!a.is_empty() && !s.is_empty() && !t.is_empty());
    let mut a = a;
    a.clear();
    assert!(a.is_empty() && a.estimated_len() == 0.0);
}
