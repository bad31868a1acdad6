//! Errors compose: `?` turns a counting (or core) error into core's `Error`, the original
//! comes back by downcasting, and merge refusals name the parameter that differs.

use bloomforge_core::Error;
use bloomforge_counting::{CountingBloomFilter, CountingError};

fn remove_missing() -> Result<(), Error> {
    let mut f = CountingBloomFilter::new(100, 0.01)?;
    f.remove(&"never inserted")?;
    Ok(())
}

#[test]
fn counting_errors_compose_into_core() {
    let err = remove_missing().unwrap_err();
    let Error::Filter(source) = &err else {
        panic!("expected Error::Filter, got {err:?}");
    };
    assert_eq!(
        source.downcast_ref::<CountingError>(),
        Some(&CountingError::NotPresent)
    );
    assert_eq!(err.to_string(), CountingError::NotPresent.to_string());
    // A core error inside a counting error comes back as itself.
    let core: Error = CountingError::Core(Error::ZeroItems).into();
    assert_eq!(core, Error::ZeroItems);
}

#[test]
fn merge_refusals_name_what_differs() {
    let mut a = bloomforge_core::BlockedBloomFilter::with_num_bits(1 << 12)
        .hashes(6)
        .unwrap();
    let b = bloomforge_core::BlockedBloomFilter::with_num_bits(1 << 12)
        .hashes(7)
        .unwrap();
    let msg = a.union(&b).unwrap_err().to_string();
    assert!(msg.contains("k differs (6 vs 7)"), "{msg}");
    assert!(!msg.contains("size differs"), "{msg}");
}
