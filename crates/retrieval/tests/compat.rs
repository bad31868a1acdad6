//! Format compatibility: bytes written by an earlier version must load, answer as they did
//! then, and re-encode to the same bytes.
//!
//! `tests/data/compat/c8558a0/` holds bytes written by the code of commit c8558a0, before
//! the retrieval filters took a hasher parameter and recorded their retry index (the
//! layout's then-reserved word, 0 in all of them). They were written by a generator like
//! [`write_fixtures`] run against that commit's API (`build_from(&keys, seed)`,
//! `build_with_seed`, `Iblt::with_cells`), with these parameters:
//! - `fuse8`, `fuse16`, `xor8`, `xor16`: `BinaryFuseFilter` / `XorFilter` of `u8` / `u16` over
//!   the 1000 keys `key-0`..`key-999` (`String`s), seed 42;
//! - `fuse8-retried`, `xor8-retried`: the 50 keys `key-0`..`key-49`, seeds 13 and 8, whose
//!   first seed did not peel: that code stored a derived seed instead;
//! - `bloomier`: `key-i -> (7 i) mod 4096`, 12 value bits, 8 fingerprint bits, seed 42;
//! - `bloomier-retried`: the 50 keys, `key-i -> 3 i`, 8 and 8 bits, seed 13 (retried);
//! - `iblt`: `Iblt::with_cells(60, 42)`, `key-0`..`key-999` inserted, `key-0`..`key-994`
//!   removed (five entries left).
//!
//! `<name>.maybe.txt` lists the non-members `key-1000`..`key-2999` the filter answered
//! `true` for (for Bloomier filters: `key value` of those that got `Some(value)`).

use std::hash::BuildHasher;

use bloomforge_retrieval::{
    BinaryFuseFilter, BinaryFuseFilterView, BloomierFilter, BloomierFilterView, Iblt, XorFilter,
    XorFilterView,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/");

fn read(path: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn read_text(path: &str) -> String {
    std::fs::read_to_string(format!("{DATA}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn key(i: usize) -> String {
    format!("key-{i}")
}

/// Members `key-0`..`key-{members}` answer `true`, the non-members answer as listed.
fn check_membership(name: &str, members: usize, contains: &dyn Fn(&str) -> bool) {
    for i in 0..members {
        assert!(contains(&key(i)), "{name}: {} lost", key(i));
    }
    let now: Vec<String> = (1000..3000).map(key).filter(|k| contains(k)).collect();
    let then: Vec<String> = read_text(&format!("{name}.maybe.txt"))
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(now, then, "{name}: non-members answer differently");
}

macro_rules! membership {
    ($name:expr, $members:expr, $F:ty, $V:ty) => {{
        let name: &str = $name;
        let bytes = read(&format!("{name}.bin"));
        let f = <$F>::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(f.len(), $members, "{name}");
        check_membership(name, $members, &|k| f.contains(k));
        // The hasher's own hash answers as the key.
        check_membership(name, $members, &|k| f.contains_hash(f.hasher().hash_one(k)));
        let v = <$V>::from_bytes(&bytes).unwrap();
        check_membership(name, $members, &|k| v.contains(k));
        assert_eq!(f.to_bytes(), bytes, "{name}: re-encoding changed the bytes");
        f
    }};
}

fn check_bloomier(name: &str, members: usize, value: impl Fn(usize) -> u32) -> BloomierFilter {
    let bytes = read(&format!("{name}.bin"));
    let f = BloomierFilter::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let v = BloomierFilterView::from_bytes(&bytes).unwrap();
    assert_eq!(f.len(), members);
    for i in 0..members {
        assert_eq!(f.get(&key(i)), Some(value(i)), "{name}: {}", key(i));
        assert_eq!(v.get(&key(i)), Some(value(i)), "{name}: {} (view)", key(i));
        assert_eq!(f.get_hash(f.hasher().hash_one(key(i))), Some(value(i)));
    }
    let now: Vec<String> = (1000..3000)
        .filter_map(|i| f.get(&key(i)).map(|v| format!("{} {v}", key(i))))
        .collect();
    let then: Vec<String> = read_text(&format!("{name}.maybe.txt"))
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(now, then, "{name}: non-members answer differently");
    assert_eq!(f.to_bytes(), bytes, "{name}: re-encoding changed the bytes");
    f
}

#[test]
fn membership_filters_of_c8558a0_still_load() {
    for (name, f) in [("c8558a0/fuse8", 42), ("c8558a0/fuse8-retried", 13)] {
        let members = if name.ends_with("retried") { 50 } else { 1000 };
        let g = membership!(
            name,
            members,
            BinaryFuseFilter<u8>,
            BinaryFuseFilterView<u8>
        );
        // A retried filter of that code stored the seed that peeled, not the one asked for.
        assert_eq!(g.hasher().seed() == f, !name.ends_with("retried"), "{name}");
    }
    membership!(
        "c8558a0/fuse16",
        1000,
        BinaryFuseFilter<u16>,
        BinaryFuseFilterView<u16>
    );
    for name in ["c8558a0/xor8", "c8558a0/xor8-retried"] {
        let members = if name.ends_with("retried") { 50 } else { 1000 };
        membership!(name, members, XorFilter<u8>, XorFilterView<u8>);
    }
    membership!("c8558a0/xor16", 1000, XorFilter<u16>, XorFilterView<u16>);
}

#[test]
fn bloomier_filters_of_c8558a0_still_load() {
    let f = check_bloomier("c8558a0/bloomier", 1000, |i| (i as u32 * 7) % 4096);
    assert_eq!((f.value_bits(), f.fingerprint_bits()), (12, 8));
    assert_eq!(f.hasher().seed(), 42);
    let g = check_bloomier("c8558a0/bloomier-retried", 50, |i| i as u32 * 3);
    assert_ne!(g.hasher().seed(), 13, "the retried seed is stored");
}

#[test]
fn iblt_of_c8558a0_still_loads() {
    let bytes = read("c8558a0/iblt.bin");
    let t = Iblt::from_bytes(&bytes).unwrap();
    assert_eq!(t.hasher().seed(), 42);
    let (pos, neg) = t.list_entries().unwrap();
    let mut want: Vec<u64> = (995..1000).map(|i| t.hasher().hash_one(key(i))).collect();
    want.sort_unstable();
    assert_eq!((pos, neg), (want, vec![]));
    assert_eq!(t.to_bytes(), bytes);
}

/// Where the first seed peels, today's code writes the bytes c8558a0 wrote from the same
/// keys and seed: the hasher parameter and the retry index changed nothing else.
#[test]
fn first_attempt_builds_are_byte_identical_to_c8558a0() {
    let keys: Vec<String> = (0..1000).map(key).collect();
    let same = |name: &str, bytes: Vec<u8>| assert_eq!(bytes, read(name), "{name}");
    same(
        "c8558a0/fuse8.bin",
        BinaryFuseFilter::<u8>::build_from(&keys, 42)
            .unwrap()
            .to_bytes(),
    );
    same(
        "c8558a0/fuse16.bin",
        BinaryFuseFilter::<u16>::builder()
            .seed(42)
            .build(&keys)
            .unwrap()
            .to_bytes(),
    );
    same(
        "c8558a0/xor8.bin",
        XorFilter::<u8>::build_from(&keys, 42).unwrap().to_bytes(),
    );
    same(
        "c8558a0/xor16.bin",
        XorFilter::<u16>::builder()
            .seed(42)
            .build(&keys)
            .unwrap()
            .to_bytes(),
    );
    let pairs: Vec<(String, u32)> = (0..1000).map(|i| (key(i), (i as u32 * 7) % 4096)).collect();
    same(
        "c8558a0/bloomier.bin",
        BloomierFilter::build_with_seed(&pairs, 12, 8, 42)
            .unwrap()
            .to_bytes(),
    );
    let mut t = Iblt::with_cells(60, 42).unwrap();
    keys.iter().for_each(|k| t.insert(k));
    keys[..995].iter().for_each(|k| t.remove(k));
    same("c8558a0/iblt.bin", t.to_bytes());
}
