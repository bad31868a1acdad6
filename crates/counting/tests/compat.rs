//! Format compatibility: counting filters written by the `bloomforge` CLI at format
//! version 3 (1000 keys `key-0`..`key-999`, seed 42, 1 %, `--expected 1000`) must
//! load, count every key once, answer the non-members `key-1000`..`key-2999` exactly as
//! they did then (`*.maybe.txt`), and re-encode to the same bytes.

use bloomforge_counting::CountingBloomFilter;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/");

fn check(name: &str) {
    let bytes = std::fs::read(format!("{DATA}{name}.bin")).unwrap();
    let maybe = std::fs::read_to_string(format!("{DATA}{name}.maybe.txt")).unwrap();
    let f = CountingBloomFilter::from_bytes(&bytes).unwrap();
    for i in 0..1000 {
        let key = format!("key-{i}");
        assert!(f.contains(key.as_bytes()), "{name}: {key} lost");
        assert!(
            f.count(key.as_bytes()).get() >= 1,
            "{name}: {key} counted 0"
        );
    }
    let now: Vec<String> = (1000..3000)
        .map(|i| format!("key-{i}"))
        .filter(|k| f.contains(k.as_bytes()))
        .collect();
    let then: Vec<&str> = maybe.lines().collect();
    assert_eq!(now, then, "{name}: non-members answer differently");
    assert_eq!(f.to_bytes(), bytes);
}

#[test]
fn blocked_counting_filters_written_before_still_load() {
    check("counting");
}

#[test]
fn standard_counting_filters_written_before_still_load() {
    check("counting-standard");
}
