//! Format compatibility: bytes written by an earlier version must load, answer as they did
//! then, and re-encode to the same bytes.
//!
//! `tests/data/compat/c8558a0/` (named after the revision that wrote it) holds bytes of the
//! first encoding, from before the retrieval filters took a hasher parameter and recorded
//! their retry index (the layout's then-reserved word, 0 in all of them). They were written
//! by a generator like [`write_fixtures`] run against that version's API
//! (`build_from(&keys, seed)`,
//! `build_with_seed`, `Iblt::with_cells`), with these parameters:
//! - `fuse8`, `fuse16`, `xor8`, `xor16`: `BinaryFuseFilter` / `XorFilter` of `u8` / `u16` over
//!   the 1000 keys `key-0`..`key-999` (`String`s), seed 42;
//! - `fuse8-retried`, `xor8-retried`: the 50 keys `key-0`..`key-49`, seeds 13 and 8, whose
//!   first seed did not peel: that version stored a derived seed instead;
//! - `bloomier`: `key-i -> (7 i) mod 4096`, 12 value bits, 8 fingerprint bits, seed 42;
//! - `bloomier-retried`: the 50 keys, `key-i -> 3 i`, 8 and 8 bits, seed 13 (retried);
//! - `iblt`: `Iblt::with_cells(60, 42)`, `key-0`..`key-999` inserted, `key-0`..`key-994`
//!   removed (five entries left).
//!
//! `tests/data/compat/888a351/` (likewise named) holds the fixtures of the format below
//! with fingerprints derived by a full mix of the hash (fingerprint derivation 0): every
//! `*-retried` and `*-keyed` filter listed below but `iblt-keyed`. The current Bloomier,
//! binary fuse and xor filters derive their fingerprints by one multiply (derivation 1,
//! recorded in bits 8..16 of the Bloomier's fingerprint-width word and of a membership
//! filter's layout tag word); the files of both derivations must load and answer as they
//! did.
//!
//! `tests/data/compat/` itself holds bytes of the format that records the retry index and
//! takes any hasher, written by [`write_fixtures`] (its filters but the IBLT with
//! derivation 1, their derivation-0 versions in `888a351/`; it runs with the tests and
//! checks that today's code still writes exactly these bytes; run
//! `BLOOMFORGE_WRITE_FIXTURES=1 cargo test -p bloomforge-retrieval --test integration
//! compat::` only to add fixtures of a NEW format; never to overwrite these). Only what the first encoding
//! could not write: first-attempt builds of the default hasher differ from its fixtures
//! only by the derivation (tested below).
//! - `fuse8-retried`, `xor8-retried`, `bloomier-retried`: the same keys, seeds and widths
//!   as the `c8558a0/` ones, now stored with their seed as given and a retry index above 0;
//! - `fuse16-keyed`, `xor8-keyed`: the 1000 keys, `builder().hasher(KeyedHasher::with_key(
//!   [1, 2, 3, 4]))`; `bloomier-keyed`: the 1000 pairs of `bloomier`, 12 and 8 bits, that
//!   hasher; `iblt-keyed`: `Iblt::with_cells_and_hasher(60, that hasher)`, filled as `iblt`.
//!
//! - `countmin8-blocked`: `CountMin::<u8>` with the blocked layout, `with_layout(Blocked,
//!   4096, 4, DefaultHasher::with_seed(7))`, `key-i` inserted with value `i % 5 + 1`;
//!   `max16`: `CompactApproximator::<MaxLattice<u16>>::with_seed(3000, 5, 9)`, `key-i` with
//!   `7 i`.
//!
//! `<name>.maybe.txt` lists the non-members `key-1000`..`key-2999` the filter answered
//! `true` for (for Bloomier filters: `key value` of those that got `Some(value)`).

use std::hash::BuildHasher;

use bloomforge_core::Error as CoreError;
use bloomforge_core::KeyedHasher;
use bloomforge_retrieval::{
    BinaryFuseFilter, BinaryFuseFilterView, BloomierFilter, BloomierFilterView, CellLayout,
    CompactApproximator, CountMin, Iblt, MaxLattice, MinLattice, RetrievalError, XorFilter,
    XorFilterView,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/");
const KEY: [u64; 4] = [1, 2, 3, 4];

fn keyed() -> KeyedHasher {
    KeyedHasher::with_key(KEY)
}

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
        assert_eq!(f.len(), $members as u64, "{name}");
        check_membership(name, $members, &|k| f.contains(k));
        // The hasher's own hash answers as the key.
        check_membership(name, $members, &|k| f.contains_hash(f.hasher().hash_one(k)));
        let v = <$V>::from_bytes(&bytes).unwrap();
        check_membership(name, $members, &|k| v.contains(k));
        assert_eq!(f.to_bytes(), bytes, "{name}: re-encoding changed the bytes");
        assert_eq!(v.to_filter().to_bytes(), bytes, "{name}: the view's copy");
        // The batch paths answer as the single lookups, owned and viewed.
        let keys: Vec<String> = (0..3000).map(key).collect();
        let single: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
        let mut out = vec![false; keys.len()];
        f.contains_batch(&keys, &mut out).unwrap();
        assert_eq!(out, single, "{name}: contains_batch");
        v.contains_batch(&keys, &mut out).unwrap();
        assert_eq!(out, single, "{name}: the view's contains_batch");
        f
    }};
}

/// The non-members `key-1000`..`key-2999` that get a value get the one listed (`key value`
/// lines of `<name>.maybe.txt`), and no other does.
fn check_bloomier_non_members(name: &str, get: &dyn Fn(&str) -> Option<u32>) {
    let now: Vec<String> = (1000..3000)
        .filter_map(|i| get(&key(i)).map(|v| format!("{} {v}", key(i))))
        .collect();
    let then: Vec<String> = read_text(&format!("{name}.maybe.txt"))
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(now, then, "{name}: non-members answer differently");
}

fn check_bloomier(name: &str, members: usize, value: impl Fn(usize) -> u32) -> BloomierFilter {
    let bytes = read(&format!("{name}.bin"));
    let f = BloomierFilter::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let v = BloomierFilterView::from_bytes(&bytes).unwrap();
    assert_eq!(f.len(), members as u64);
    for i in 0..members {
        assert_eq!(f.get(&key(i)), Some(value(i)), "{name}: {}", key(i));
        assert_eq!(v.get(&key(i)), Some(value(i)), "{name}: {} (view)", key(i));
        assert_eq!(f.get_hash(f.hasher().hash_one(key(i))), Some(value(i)));
    }
    check_bloomier_non_members(name, &|k| f.get(k));
    assert_eq!(f.to_bytes(), bytes, "{name}: re-encoding changed the bytes");
    assert_eq!(v.to_filter().to_bytes(), bytes, "{name}: the view's copy");
    // The batch paths answer as the single lookups, owned and viewed.
    let keys: Vec<String> = (0..3000).map(key).collect();
    let single: Vec<Option<u32>> = keys.iter().map(|k| f.get(k)).collect();
    let mut out = vec![None; keys.len()];
    f.get_batch(&keys, &mut out).unwrap();
    assert_eq!(out, single, "{name}: get_batch");
    v.get_batch(&keys, &mut out).unwrap();
    assert_eq!(out, single, "{name}: the view's get_batch");
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

/// Where the first seed peels, today's code writes the bytes of `c8558a0/` from the same
/// keys and seed (the hasher parameter and the retry index changed nothing else) but for
/// the fingerprint derivation: the same length and layout, the derivation (1) in the
/// layout's tag word (membership filters) or the fingerprint-width word (Bloomier), other
/// cells.
#[test]
fn first_attempt_builds_differ_from_c8558a0_by_the_derivation_only() {
    let keys: Vec<String> = (0..1000).map(key).collect();
    // `at`: the payload offset of the word that records the derivation.
    let only_derivation = |name: &str, new: Vec<u8>, at: usize, cells: usize| {
        let old = read(name);
        assert_eq!(new.len(), old.len(), "{name}");
        let word = |b: &[u8]| u32::from_le_bytes(b[64 + at..68 + at].try_into().unwrap());
        assert_eq!(word(&new), word(&old) | 1 << 8, "{name}");
        assert_eq!(word(&old) >> 8, 0, "{name}");
        let (mut a, mut b) = (new.clone(), old.clone());
        a[64 + at..68 + at].fill(0);
        b[64 + at..68 + at].fill(0);
        assert_eq!(a[64..64 + cells], b[64..64 + cells], "{name}: layout");
        assert_ne!(a[64 + cells..], b[64 + cells..], "{name}: cells");
    };
    let layout = 32;
    only_derivation(
        "c8558a0/fuse8.bin",
        BinaryFuseFilter::<u8>::build_from(&keys, 42)
            .unwrap()
            .to_bytes(),
        0,
        layout,
    );
    only_derivation(
        "c8558a0/fuse16.bin",
        BinaryFuseFilter::<u16>::builder()
            .seed(42)
            .build(&keys)
            .unwrap()
            .to_bytes(),
        0,
        layout,
    );
    only_derivation(
        "c8558a0/xor8.bin",
        XorFilter::<u8>::build_from(&keys, 42).unwrap().to_bytes(),
        0,
        layout,
    );
    only_derivation(
        "c8558a0/xor16.bin",
        XorFilter::<u16>::builder()
            .seed(42)
            .build(&keys)
            .unwrap()
            .to_bytes(),
        0,
        layout,
    );
    let pairs: Vec<(String, u32)> = (0..1000).map(|i| (key(i), (i as u32 * 7) % 4096)).collect();
    only_derivation(
        "c8558a0/bloomier.bin",
        BloomierFilter::build_with_seed(&pairs, 12, 8, 42)
            .unwrap()
            .to_bytes(),
        36,
        layout + 8,
    );
    let same = |name: &str, bytes: Vec<u8>| assert_eq!(bytes, read(name), "{name}");
    let mut t = Iblt::with_cells(60, 42).unwrap();
    keys.iter().for_each(|k| t.insert(k));
    keys[..995].iter().for_each(|k| t.remove(k));
    same("c8558a0/iblt.bin", t.to_bytes());
}

/// The retry index of a membership or Bloomier filter's bytes (payload bytes 4..8).
fn retry_index(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes[68..72].try_into().unwrap())
}

#[test]
fn retried_filters_of_this_format_still_load() {
    for (name, seed) in [
        ("888a351/fuse8-retried", 13),
        ("888a351/xor8-retried", 8),
        ("fuse8-retried", 13),
        ("xor8-retried", 8),
    ] {
        let bytes = read(&format!("{name}.bin"));
        assert_ne!(retry_index(&bytes), 0, "{name}");
        let f = if name.contains("fuse") {
            let f = membership!(name, 50, BinaryFuseFilter<u8>, BinaryFuseFilterView<u8>);
            f.hasher().seed()
        } else {
            let f = membership!(name, 50, XorFilter<u8>, XorFilterView<u8>);
            f.hasher().seed()
        };
        assert_eq!(f, seed, "{name}: the seed given is stored");
    }
    for name in ["888a351/bloomier-retried", "bloomier-retried"] {
        let bytes = read(&format!("{name}.bin"));
        assert_ne!(retry_index(&bytes), 0, "{name}");
        let f = check_bloomier(name, 50, |i| i as u32 * 3);
        assert_eq!(f.hasher().seed(), 13, "{name}");
    }
}

#[test]
fn keyed_filters_of_this_format_load_with_their_key_only() {
    let mismatch = |e: RetrievalError| e == RetrievalError::Core(CoreError::HasherMismatch);
    let other = || KeyedHasher::with_key([1, 2, 3, 5]);

    for dir in ["888a351/", ""] {
        let name = format!("{dir}fuse16-keyed");
        let bytes = read(&format!("{name}.bin"));
        assert!(mismatch(
            BinaryFuseFilter::<u16>::from_bytes(&bytes).unwrap_err()
        ));
        assert!(mismatch(
            BinaryFuseFilter::<u16, KeyedHasher>::from_bytes_with_hasher(&bytes, other())
                .unwrap_err()
        ));
        let f =
            BinaryFuseFilter::<u16, KeyedHasher>::from_bytes_with_hasher(&bytes, keyed()).unwrap();
        let v = BinaryFuseFilterView::<u16, KeyedHasher>::from_bytes_with_hasher(&bytes, keyed())
            .unwrap();
        check_membership(&name, 1000, &|k| f.contains(k));
        check_membership(&name, 1000, &|k| v.contains(k));
        assert_eq!(f.to_bytes(), bytes, "{name}");

        let name = format!("{dir}xor8-keyed");
        let bytes = read(&format!("{name}.bin"));
        assert!(mismatch(XorFilter::<u8>::from_bytes(&bytes).unwrap_err()));
        let f = XorFilter::<u8, KeyedHasher>::from_bytes_with_hasher(&bytes, keyed()).unwrap();
        let v = XorFilterView::<u8, KeyedHasher>::from_bytes_with_hasher(&bytes, keyed()).unwrap();
        check_membership(&name, 1000, &|k| f.contains(k));
        check_membership(&name, 1000, &|k| v.contains(k));
        assert_eq!(f.to_bytes(), bytes, "{name}");
    }

    for name in ["888a351/bloomier-keyed", "bloomier-keyed"] {
        let bytes = read(&format!("{name}.bin"));
        assert!(mismatch(BloomierFilter::from_bytes(&bytes).unwrap_err()));
        assert!(mismatch(
            BloomierFilter::from_bytes_with_hasher(&bytes, other()).unwrap_err()
        ));
        let f = BloomierFilter::from_bytes_with_hasher(&bytes, keyed()).unwrap();
        let v = BloomierFilterView::from_bytes_with_hasher(&bytes, keyed()).unwrap();
        for i in 0..1000 {
            let want = Some((i as u32 * 7) % 4096);
            assert_eq!(
                (f.get(&key(i)), v.get(&key(i))),
                (want, want),
                "{name}: {}",
                key(i)
            );
        }
        check_bloomier_non_members(name, &|k| f.get(k));
        assert_eq!(f.to_bytes(), bytes, "{name}");
    }

    let bytes = read("iblt-keyed.bin");
    assert!(mismatch(Iblt::from_bytes(&bytes).unwrap_err()));
    assert!(mismatch(
        Iblt::from_bytes_with_hasher(&bytes, other()).unwrap_err()
    ));
    let t = Iblt::from_bytes_with_hasher(&bytes, keyed()).unwrap();
    let (pos, neg) = t.list_entries().unwrap();
    let mut want: Vec<u64> = (995..1000).map(|i| keyed().hash_one(key(i))).collect();
    want.sort_unstable();
    assert_eq!((pos, neg), (want, vec![]));
    assert_eq!(t.to_bytes(), bytes);
}

/// The fingerprint derivation each fixture records (a Bloomier filter: bits 8..16 of
/// payload bytes 36..40; a binary fuse or xor filter: of payload bytes 0..4), and an
/// unknown one refused by name.
#[test]
fn fingerprint_derivations_are_recorded_and_checked() {
    let word = |b: &[u8]| u32::from_le_bytes(b[100..104].try_into().unwrap());
    for (name, derivation) in [
        ("c8558a0/bloomier", 0),
        ("888a351/bloomier-retried", 0),
        ("888a351/bloomier-keyed", 0),
        ("bloomier-retried", 1),
        ("bloomier-keyed", 1),
    ] {
        assert_eq!(
            word(&read(&format!("{name}.bin"))) >> 8,
            derivation,
            "{name}"
        );
    }
    // Membership filters: bits 8.. of the layout's tag word (payload bytes 0..4); the
    // Bloomier's tag word carries none.
    let tag = |b: &[u8]| u32::from_le_bytes(b[64..68].try_into().unwrap());
    for (name, derivation) in [
        ("c8558a0/fuse8", 0),
        ("c8558a0/xor16", 0),
        ("888a351/fuse8-retried", 0),
        ("888a351/xor8-keyed", 0),
        ("fuse8-retried", 1),
        ("xor8-retried", 1),
        ("fuse16-keyed", 1),
        ("xor8-keyed", 1),
        ("bloomier-keyed", 0),
    ] {
        assert_eq!(
            tag(&read(&format!("{name}.bin"))) >> 8,
            derivation,
            "{name}"
        );
    }
    for code in [2u32, 255] {
        let mut bad = read("fuse16-keyed.bin");
        bad[64..68].copy_from_slice(&(1 | code << 8).to_le_bytes());
        bloomforge_core::format::reseal(&mut bad);
        let got = BinaryFuseFilter::<u16, KeyedHasher>::from_bytes_with_hasher(&bad, keyed())
            .unwrap_err();
        let corrupt = RetrievalError::Core(CoreError::Corrupt {
            reason: "unknown fingerprint derivation",
        });
        assert_eq!(got, corrupt, "{code}");
    }
    // A Bloomier filter's layout refuses a derivation in the tag word.
    let mut bad = read("bloomier-keyed.bin");
    bad[64..68].copy_from_slice(&(1u32 | 1 << 8).to_le_bytes());
    bloomforge_core::format::reseal(&mut bad);
    assert_eq!(
        BloomierFilter::from_bytes_with_hasher(&bad, keyed()).unwrap_err(),
        RetrievalError::Core(CoreError::Corrupt {
            reason: "unknown or inconsistent layout"
        })
    );
    for code in [2u32, 255] {
        let mut bad = read("bloomier-retried.bin");
        bad[100..104].copy_from_slice(&(8 | code << 8).to_le_bytes());
        bloomforge_core::format::reseal(&mut bad);
        let corrupt = RetrievalError::Core(CoreError::Corrupt {
            reason: "unknown fingerprint derivation",
        });
        assert_eq!(
            BloomierFilter::from_bytes(&bad).unwrap_err(),
            corrupt,
            "{code}"
        );
        assert_eq!(
            BloomierFilterView::from_bytes(&bad).unwrap_err(),
            corrupt,
            "{code}"
        );
    }
}

fn write_maybe(name: &str, contains: impl Fn(&str) -> bool) {
    let maybe: String = (1000..3000)
        .map(key)
        .filter(|k| contains(k))
        .map(|k| k + "\n")
        .collect();
    fixture(format!("{DATA}{name}.maybe.txt"), maybe);
}

fn write_bloomier_maybe<S: BuildHasher>(name: &str, b: &BloomierFilter<S>) {
    let maybe: String = (1000..3000)
        .filter_map(|i| b.get(&key(i)).map(|v| format!("{} {v}\n", key(i))))
        .collect();
    fixture(format!("{DATA}{name}.maybe.txt"), maybe);
}

/// Writes the fixtures of this format (see the file's docs).
#[test]
fn write_fixtures() {
    let write = |name: &str, bytes: Vec<u8>| {
        fixture(format!("{DATA}{name}.bin"), bytes);
    };
    let small: Vec<String> = (0..50).map(key).collect();
    let f = BinaryFuseFilter::<u8>::build_from(&small, 13).unwrap();
    write("fuse8-retried", f.to_bytes());
    write_maybe("fuse8-retried", |k| f.contains(k));
    let f = XorFilter::<u8>::build_from(&small, 8).unwrap();
    write("xor8-retried", f.to_bytes());
    write_maybe("xor8-retried", |k| f.contains(k));
    let pairs: Vec<(String, u32)> = (0..50).map(|i| (key(i), i as u32 * 3)).collect();
    let b = BloomierFilter::build_with_seed(&pairs, 8, 8, 13).unwrap();
    write("bloomier-retried", b.to_bytes());
    write_bloomier_maybe("bloomier-retried", &b);

    let keys: Vec<String> = (0..1000).map(key).collect();
    let f = BinaryFuseFilter::<u16>::builder()
        .hasher(keyed())
        .build(&keys)
        .unwrap();
    write("fuse16-keyed", f.to_bytes());
    write_maybe("fuse16-keyed", |k| f.contains(k));
    let f = XorFilter::<u8>::builder()
        .hasher(keyed())
        .build(&keys)
        .unwrap();
    write("xor8-keyed", f.to_bytes());
    write_maybe("xor8-keyed", |k| f.contains(k));
    let pairs: Vec<(String, u32)> = (0..1000).map(|i| (key(i), (i as u32 * 7) % 4096)).collect();
    let b = BloomierFilter::builder()
        .value_bits(12)
        .fingerprint_bits(8)
        .hasher(keyed())
        .build(&pairs)
        .unwrap();
    write("bloomier-keyed", b.to_bytes());
    write_bloomier_maybe("bloomier-keyed", &b);
    let mut t = Iblt::with_cells_and_hasher(60, keyed()).unwrap();
    keys.iter().for_each(|k| t.insert(k));
    keys[..995].iter().for_each(|k| t.remove(k));
    write("iblt-keyed", t.to_bytes());
    let (c, m) = approximators();
    write("countmin8-blocked", c.to_bytes());
    write("max16", m.to_bytes());
}

/// The approximators of the fixtures `countmin8-blocked` and `max16` (see the file's docs).
fn approximators() -> (CountMin<u8>, CompactApproximator<MaxLattice<u16>>) {
    let hasher = bloomforge_core::DefaultHasher::with_seed(7);
    let mut c = CountMin::<u8>::with_layout(CellLayout::Blocked, 4096, 4, hasher).unwrap();
    let mut m = CompactApproximator::<MaxLattice<u16>>::with_seed(3000, 5, 9).unwrap();
    for i in 0..1000 {
        c.insert(&key(i), (i % 5 + 1) as u8);
        m.insert(&key(i), (7 * i) as u16);
    }
    (c, m)
}

#[test]
fn approximators_of_this_format_still_load() {
    let (c, m) = approximators();
    let bytes = read("countmin8-blocked.bin");
    let back = CountMin::<u8>::from_bytes(&bytes).unwrap();
    assert_eq!(back.layout(), CellLayout::Blocked);
    for i in 0..3000 {
        assert_eq!(back.get(&key(i)), c.get(&key(i)), "{i}");
    }
    assert_eq!(back.to_bytes(), bytes);
    let bytes = read("max16.bin");
    let back = CompactApproximator::<MaxLattice<u16>>::read_from(&bytes[..]).unwrap();
    for i in 0..3000 {
        assert_eq!(back.get(&key(i)), m.get(&key(i)), "{i}");
    }
    assert_eq!(back.to_bytes(), bytes);
    // Read only as the type written: another lattice, another cell width.
    for wrong in [
        CompactApproximator::<MinLattice<u16>>::from_bytes(&bytes).map(drop),
        CompactApproximator::<MaxLattice<u8>>::from_bytes(&bytes).map(drop),
    ] {
        assert!(
            matches!(wrong, Err(RetrievalError::Core(CoreError::Corrupt { .. }))),
            "{wrong:?}"
        );
    }
}

/// Writes `bytes` to `path` when `BLOOMFORGE_WRITE_FIXTURES` is set (regenerating the
/// fixtures after an intended format change); otherwise checks that today's code writes
/// exactly the committed bytes, so an unintended change of the encoding fails here.
fn fixture(path: impl AsRef<std::path::Path>, bytes: impl AsRef<[u8]>) {
    let (path, bytes) = (path.as_ref(), bytes.as_ref());
    if std::env::var_os("BLOOMFORGE_WRITE_FIXTURES").is_some() {
        std::fs::write(path, bytes).unwrap();
    } else {
        let old = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            old == bytes,
            "{}: today's code writes other bytes",
            path.display()
        );
    }
}
