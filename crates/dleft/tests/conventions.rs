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
