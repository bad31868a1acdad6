//! docs/conventions.md for d-left's errors: a failed batch exposes its cause as
//! `source()`, and `?` into core's `Error` keeps the chain.

use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};
use std::error::Error as _;

fn overflow() -> Result<(), DLeftError> {
    let mut f = DLeftCountingBloomFilter::builder()
        .subtables(2)
        .buckets_per_subtable(2)
        .cells_per_bucket(2)
        .remainder_bits(8)
        .build()?;
    let keys: Vec<u64> = (0..100).collect();
    f.insert_batch(&keys)
}

#[test]
fn batch_failed_has_its_cause_as_source() {
    let err = overflow().unwrap_err();
    let DLeftError::BatchFailed { index, error } = &err else {
        panic!("{err:?}")
    };
    assert!(*index >= 8, "eight cells fit");
    let source = err.source().expect("BatchFailed has a source");
    // The source is the boxed cause (`Box<DLeftError>`, the field's type).
    let cause = source.downcast_ref::<Box<DLeftError>>().unwrap();
    assert_eq!(cause, error);
    assert_eq!(source.to_string(), error.to_string());
    assert!(matches!(**cause, DLeftError::BucketFull), "{cause:?}");
}

#[test]
fn question_mark_into_core_keeps_the_chain() {
    fn run() -> bloomforge_core::Result<()> {
        overflow()?;
        Ok(())
    }
    let err = run().unwrap_err();
    let bloomforge_core::Error::Filter(wrapped) = &err else {
        panic!("{err:?}")
    };
    assert!(matches!(
        wrapped.downcast_ref::<DLeftError>(),
        Some(DLeftError::BatchFailed { .. })
    ));
    // Same message, same source chain as the d-left error.
    assert_eq!(err.to_string(), overflow().unwrap_err().to_string());
    let cause = err.source().expect("the cause passes through");
    assert!(matches!(
        cause.downcast_ref::<Box<DLeftError>>().map(|b| &**b),
        Some(DLeftError::BucketFull)
    ));
    // A core error inside a d-left error comes back as itself.
    fn zero() -> bloomforge_core::Result<()> {
        DLeftCountingBloomFilter::new(0, 0.01)?;
        Ok(())
    }
    assert_eq!(zero().unwrap_err(), bloomforge_core::Error::ZeroItems);
}

/// `remove_batch_outcomes` reports the one-by-one outcomes; a failing batch changes
/// neither the filter nor `out`.
#[test]
fn remove_batch_outcomes_equal_one_by_one() {
    use bloomforge_core::RemoveOutcome;
    let mut f = DLeftCountingBloomFilter::builder()
        .expected_items(1000)
        .false_pos(0.01)
        .counter_bits(2)
        .seed(4)
        .build()
        .unwrap();
    for k in 0..300u64 {
        for _ in 0..2 + k % 5 {
            f.insert(&k).unwrap();
        }
    }
    let keys: Vec<u64> = (0..300u64).chain(0..100).collect();
    let mut one_by_one = f.clone();
    let want: Vec<RemoveOutcome> = keys.iter().map(|k| one_by_one.remove(k).unwrap()).collect();
    assert!(want.contains(&RemoveOutcome::Saturated) && want.contains(&RemoveOutcome::Removed));
    let mut out = vec![RemoveOutcome::Removed; keys.len()];
    f.remove_batch_outcomes(&keys, &mut out).unwrap();
    assert_eq!(out, want);
    assert_eq!(f.to_bytes(), one_by_one.to_bytes());

    let before = f.to_bytes();
    let mut out = vec![RemoveOutcome::Saturated; 3];
    let err = f
        .remove_batch_outcomes(&[1u64, 1_000_000, 2], &mut out)
        .unwrap_err();
    assert!(
        matches!(err, DLeftError::BatchFailed { index: 1, .. }),
        "{err:?}"
    );
    assert_eq!(out, vec![RemoveOutcome::Saturated; 3]);
    assert_eq!(f.to_bytes(), before);
    let mut short = [RemoveOutcome::Removed; 1];
    assert!(f.remove_batch_outcomes(&[1u64, 2], &mut short).is_err());
    assert_eq!(f.to_bytes(), before);
}
