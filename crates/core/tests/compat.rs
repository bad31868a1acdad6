//! Format compatibility: filters written by the `bloomforge` CLI at format version 3
//! (1000 keys `key-0`..`key-999`, seed 42, 1 %, `--expected 1000`) must load,
//! hold every key, answer the non-members `key-1000`..`key-2999` exactly as they did then
//! (`*.maybe.txt`: the ones that read "maybe"), and re-encode to the same bytes. A change
//! to the format, the hashing or the probe derivation fails here.

use bloomforge_core::{BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/");

fn fixture(name: &str) -> (Vec<u8>, Vec<String>) {
    let bytes = std::fs::read(format!("{DATA}{name}.bin")).unwrap();
    let maybe = std::fs::read_to_string(format!("{DATA}{name}.maybe.txt")).unwrap();
    (bytes, maybe.lines().map(str::to_owned).collect())
}

fn check(name: &str, contains: impl Fn(&[u8]) -> bool) {
    let (_, maybe) = fixture(name);
    for i in 0..1000 {
        assert!(
            contains(format!("key-{i}").as_bytes()),
            "{name}: key-{i} lost"
        );
    }
    let now: Vec<String> = (1000..3000)
        .map(|i| format!("key-{i}"))
        .filter(|k| contains(k.as_bytes()))
        .collect();
    assert_eq!(now, maybe, "{name}: non-members answer differently");
}

#[test]
fn blocked_filters_written_before_still_load() {
    let (bytes, _) = fixture("blocked");
    let f = BlockedBloomFilter::from_bytes(&bytes).unwrap();
    check("blocked", |k| f.contains(k));
    assert_eq!(f.to_bytes(), bytes);
}

#[test]
fn split_block_filters_written_before_still_load() {
    let (bytes, _) = fixture("split");
    let f = SplitBlockBloomFilter::from_bytes(&bytes).unwrap();
    check("split", |k| f.contains(k));
    assert_eq!(f.to_bytes(), bytes);
}

#[test]
fn standard_filters_written_before_still_load() {
    let (bytes, _) = fixture("standard");
    let f = StandardBloomFilter::from_bytes(&bytes).unwrap();
    check("standard", |k| f.contains(k));
    assert_eq!(f.to_bytes(), bytes);
}
