//! Format compatibility: scalable, stable and attenuated Bloom filters written by an
//! earlier version must load, answer exactly as they did then (`<name>.maybe.txt`), and
//! re-encode to the same bytes.
//!
//! The fixtures in `tests/data/compat/` were written by [`write_fixtures`] (it runs with
//! the tests and checks that today's code still writes exactly these bytes; run
//! `BLOOMFORGE_WRITE_FIXTURES=1 cargo test -p bloomforge-stream --test integration compat::`
//! only to add fixtures of a NEW format; never to overwrite these): format version 3. Keys are
//! the strings `key-i`.
//! - `scalable.bin`: `ScalableBloomFilter::builder().expected_items(100).false_pos(0.01)
//!   .seed(42)`, `key-0`..`key-999` inserted (several slices); `scalable-keyed.bin` the same
//!   with `.hasher(KeyedHasher::with_key([1, 2, 3, 4]))`. Maybe lists: `key-1000`..`key-2999`.
//! - `stable.bin`: `StableBloomFilter::builder().cells(8192).cell_bits(3).false_pos(0.01)
//!   .seed(42).rng_seed(7)`, `key-0`..`key-999` inserted; maybe list over `key-0`..`key-2999`
//!   (a stable filter forgets). `stable.after.bin`: the same filter after inserting
//!   `key-3000`..`key-3199` too, so the stored generator state must continue as it did.
//! - `attenuated.bin`: node 1 of depth 3 (`expected_items(1000).seed(42)`) holding
//!   `key-1000`..`key-1099`, with neighbours 2 (holding `key-0`..`key-499`) and 3
//!   (`key-500`..`key-999`) merged in; the maybe list has `key-i neighbour hops` for every
//!   `key-0`..`key-2999` that `route` sends somewhere.

use bloomforge_core::KeyedHasher;
use bloomforge_stream::{AttenuatedBloomFilter, ScalableBloomFilter, StableBloomFilter};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/");
const KEY: [u64; 4] = [1, 2, 3, 4];

fn key(i: usize) -> String {
    format!("key-{i}")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn read_text(name: &str) -> String {
    String::from_utf8(read(name)).unwrap()
}

fn maybe_list(range: std::ops::Range<usize>, contains: impl Fn(&str) -> bool) -> String {
    range
        .map(key)
        .filter(|k| contains(k))
        .map(|k| k + "\n")
        .collect()
}

fn routes(f: &AttenuatedBloomFilter) -> String {
    (0..3000)
        .map(key)
        .filter_map(|k| f.route(&k).map(|(n, h)| format!("{k} {n} {h}\n")))
        .collect()
}

#[test]
fn scalable_filters_written_before_still_load() {
    let bytes = read("scalable.bin");
    let f = ScalableBloomFilter::from_bytes(&bytes).unwrap();
    assert!((0..1000).all(|i| f.contains(&key(i))));
    assert_eq!(
        maybe_list(1000..3000, |k| f.contains(k)),
        read_text("scalable.maybe.txt")
    );
    assert_eq!(f.to_bytes(), bytes);
    assert_eq!(ScalableBloomFilter::read_from(&bytes[..]).unwrap(), f);

    let bytes = read("scalable-keyed.bin");
    assert!(ScalableBloomFilter::from_bytes(&bytes).is_err());
    let f =
        ScalableBloomFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(KEY)).unwrap();
    assert!((0..1000).all(|i| f.contains(&key(i))));
    assert_eq!(
        maybe_list(1000..3000, |k| f.contains(k)),
        read_text("scalable-keyed.maybe.txt")
    );
    assert_eq!(f.to_bytes(), bytes);
    assert!(ScalableBloomFilter::from_bytes_with_hasher(
        &bytes,
        KeyedHasher::with_key([1, 2, 3, 5])
    )
    .is_err());
}

#[test]
fn stable_filters_written_before_still_load_and_continue() {
    let bytes = read("stable.bin");
    let mut f = StableBloomFilter::from_bytes(&bytes).unwrap();
    assert!(f.contains(&key(999)), "the last key inserted is present");
    assert_eq!(
        maybe_list(0..3000, |k| f.contains(k)),
        read_text("stable.maybe.txt")
    );
    assert_eq!(f.to_bytes(), bytes);
    assert_eq!(StableBloomFilter::read_from(&bytes[..]).unwrap(), f);
    for i in 3000..3200 {
        f.insert(&key(i));
    }
    assert_eq!(f.to_bytes(), read("stable.after.bin"));
}

#[test]
fn attenuated_filters_written_before_still_load() {
    let bytes = read("attenuated.bin");
    let f = AttenuatedBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!((f.node_id(), f.depth()), (1, 3));
    assert_eq!(f.neighbours().collect::<Vec<_>>(), vec![2, 3]);
    assert!((1000..1100).all(|i| f.contains_local(&key(i))));
    // Neighbour 2 is asked first at each level, so its keys route to it in one hop;
    // neighbour 3's go one hop too (to 2 only where 2's level 0 has a false positive).
    assert!((0..500).all(|i| f.route(&key(i)) == Some((2, 1))));
    assert!((500..1000).all(|i| f.route(&key(i)).is_some_and(|(_, h)| h == 1)));
    assert_eq!(routes(&f), read_text("attenuated.maybe.txt"));
    assert_eq!(f.to_bytes(), bytes);
}

/// Writes the fixtures (see the file's docs).
#[test]
fn write_fixtures() {
    let write = |name: &str, bytes: Vec<u8>| fixture(format!("{DATA}{name}"), bytes);
    let builder = ScalableBloomFilter::builder()
        .expected_items(100)
        .false_pos(0.01)
        .seed(42);
    let mut f = builder.clone().build().unwrap();
    (0..1000).for_each(|i| assert!(f.insert(&key(i)).is_ok()));
    write("scalable.bin", f.to_bytes());
    write(
        "scalable.maybe.txt",
        maybe_list(1000..3000, |k| f.contains(k)).into_bytes(),
    );
    let mut f = builder.hasher(KeyedHasher::with_key(KEY)).build().unwrap();
    (0..1000).for_each(|i| assert!(f.insert(&key(i)).is_ok()));
    write("scalable-keyed.bin", f.to_bytes());
    write(
        "scalable-keyed.maybe.txt",
        maybe_list(1000..3000, |k| f.contains(k)).into_bytes(),
    );

    let mut f = StableBloomFilter::builder()
        .cells(8192)
        .cell_bits(3)
        .false_pos(0.01)
        .seed(42)
        .rng_seed(7)
        .build()
        .unwrap();
    (0..1000).for_each(|i| f.insert(&key(i)));
    write("stable.bin", f.to_bytes());
    write(
        "stable.maybe.txt",
        maybe_list(0..3000, |k| f.contains(k)).into_bytes(),
    );
    (3000..3200).for_each(|i| f.insert(&key(i)));
    write("stable.after.bin", f.to_bytes());

    let node = |id| {
        AttenuatedBloomFilter::builder()
            .node_id(id)
            .depth(3)
            .expected_items(1000)
            .seed(42)
            .build()
            .unwrap()
    };
    let (mut a, mut b, mut c) = (node(1), node(2), node(3));
    (1000..1100).for_each(|i| {
        a.insert(&key(i));
    });
    (0..500).for_each(|i| {
        b.insert(&key(i));
    });
    (500..1000).for_each(|i| {
        c.insert(&key(i));
    });
    a.add_neighbour(2).unwrap();
    a.add_neighbour(3).unwrap();
    b.add_neighbour(1).unwrap();
    c.add_neighbour(1).unwrap();
    a.merge_from_neighbour(&b).unwrap();
    a.merge_from_neighbour(&c).unwrap();
    write("attenuated.bin", a.to_bytes());
    write("attenuated.maybe.txt", routes(&a).into_bytes());
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
