//! A counting and a d-left filter side by side (the example of `docs/guide/counting.md`),
//! compiled and run.

#[test]
fn readme_counting_and_dleft_example() {
    main().unwrap();
}

use bloomforge_core::{Count, RemoveOutcome};
use bloomforge_counting::CountingBloomFilter;
use bloomforge_dleft::DLeftCountingBloomFilter;

fn main() -> Result<(), bloomforge_core::Error> {
    let mut c = CountingBloomFilter::new(10_000, 0.01)?;
    let mut d = DLeftCountingBloomFilter::builder()
        .expected_items(10_000)
        .false_pos(0.01)
        .build()?;
    for _ in 0..2 {
        c.insert(&"apple");
        d.insert(&"apple")?;
    }
    assert_eq!(
        (c.count(&"apple"), d.count(&"apple")),
        (Count::Exact(2), Count::Exact(2))
    );
    assert_eq!(c.remove(&"apple")?, RemoveOutcome::Removed);
    assert_eq!(d.remove(&"apple")?, RemoveOutcome::Removed);
    assert_eq!(c.len(), d.len());
    Ok(())
}
