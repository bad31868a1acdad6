//! Format compatibility: cuckoo filters written by an earlier version must load, keep
//! every key, answer the non-members exactly as they did then (`<name>.maybe.txt`), and
//! re-encode to the same bytes.
//!
//! The fixtures in `tests/data/compat/` were written by [`write_fixtures`] (it runs with
//! the tests and checks that today's code still writes exactly these bytes; run
//! `BLOOMFORGE_WRITE_FIXTURES=1 cargo test -p bloomforge-cuckoo --test integration compat::`
//! only to add fixtures of a NEW format; never to overwrite these): format version 3. Keys are
//! the strings `key-0`..`key-999`; `key-0`..`key-99` are removed again after inserting,
//! so members are `key-100`..`key-999`, and the maybe lists cover `key-0`..`key-99` and
//! `key-1000`..`key-2999`.
//! - `cuckoo.bin`: `CuckooFilter::builder().expected_items(1000).seed(42)` (12-bit
//!   fingerprints, buckets of 4);
//! - `cuckoo-fp8.bin`: the same with `.bucket_size(2).fingerprint::<Fp8>()`;
//! - `cuckoo-fp16-keyed.bin`: `.fingerprint::<Fp16>().hasher(KeyedHasher::with_key([1, 2,
//!   3, 4]))`, which only that key reads;
//! - `concurrent.bin`: `ConcurrentCuckooFilter::builder().expected_items(20_000).seed(42)`
//!   (16 shards of 12-bit fingerprints), the same keys.

use bloomforge_core::KeyedHasher;
use bloomforge_cuckoo::{
    ConcurrentCuckooFilter, CuckooError, CuckooFilter, CuckooFilterView, Fingerprint, Fp12, Fp16,
    Fp8,
};
use core::hash::BuildHasher;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/");
const KEY: [u64; 4] = [1, 2, 3, 4];

fn key(i: usize) -> String {
    format!("key-{i}")
}

fn non_members() -> impl Iterator<Item = String> {
    (0..100).chain(1000..3000).map(key)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn maybe_list(contains: impl Fn(&str) -> bool) -> String {
    non_members()
        .filter(|k| contains(k))
        .map(|k| k + "\n")
        .collect()
}

fn check<F: Fingerprint, S: BuildHasher + bloomforge_core::format::PersistentHasher>(
    name: &str,
    bytes: &[u8],
    f: &CuckooFilter<F, S>,
    view: &CuckooFilterView<'_, F, S>,
) {
    f.validate().unwrap();
    assert_eq!(f.len(), 900, "{name}");
    assert_eq!(view.len(), 900, "{name}");
    for i in 100..1000 {
        assert!(f.contains(&key(i)), "{name}: {} lost", key(i));
        assert!(view.contains(&key(i)), "{name}: {} lost (view)", key(i));
    }
    let then = String::from_utf8(read(&format!("{name}.maybe.txt"))).unwrap();
    assert_eq!(
        maybe_list(|k| f.contains(k)),
        then,
        "{name}: non-members differ"
    );
    assert_eq!(
        maybe_list(|k| view.contains(k)),
        then,
        "{name}: view differs"
    );
    assert_eq!(f.to_bytes(), bytes, "{name}: re-encoding changed the bytes");
}

#[test]
fn cuckoo_filters_written_before_still_load() {
    let bytes = read("cuckoo.bin");
    let f = CuckooFilter::<Fp12>::from_bytes(&bytes).unwrap();
    check(
        "cuckoo",
        &bytes,
        &f,
        &CuckooFilterView::from_bytes(&bytes).unwrap(),
    );
    assert_eq!(
        CuckooFilter::<Fp12>::read_from(&bytes[..])
            .unwrap()
            .to_bytes(),
        bytes
    );
    let bytes = read("cuckoo-fp8.bin");
    let f = CuckooFilter::<Fp8>::from_bytes(&bytes).unwrap();
    check(
        "cuckoo-fp8",
        &bytes,
        &f,
        &CuckooFilterView::from_bytes(&bytes).unwrap(),
    );
    // Another fingerprint width does not read them.
    assert!(CuckooFilter::<Fp12>::from_bytes(&bytes).is_err());
}

#[test]
fn keyed_cuckoo_filters_written_before_load_with_their_key_only() {
    let bytes = read("cuckoo-fp16-keyed.bin");
    let hasher = KeyedHasher::with_key(KEY);
    let f =
        CuckooFilter::<Fp16, KeyedHasher>::from_bytes_with_hasher(&bytes, hasher.clone()).unwrap();
    let view = CuckooFilterView::<Fp16, KeyedHasher>::with_hasher(&bytes, hasher).unwrap();
    check("cuckoo-fp16-keyed", &bytes, &f, &view);
    let mismatch = |e: CuckooError| e == CuckooError::Core(bloomforge_core::Error::HasherMismatch);
    assert!(mismatch(
        CuckooFilter::<Fp16>::from_bytes(&bytes).unwrap_err()
    ));
    let other = KeyedHasher::with_key([1, 2, 3, 5]);
    assert!(mismatch(
        CuckooFilter::<Fp16, KeyedHasher>::from_bytes_with_hasher(&bytes, other).unwrap_err()
    ));
}

fn fill<F: Fingerprint, S: BuildHasher>(f: &mut CuckooFilter<F, S>) {
    for i in 0..1000 {
        f.insert(&key(i)).unwrap();
    }
    for i in 0..100 {
        f.remove(&key(i)).unwrap();
    }
}

/// Writes the fixtures (see the file's docs).
#[test]
fn write_fixtures() {
    let write = |name: &str, bytes: Vec<u8>, maybe: String| {
        fixture(format!("{DATA}{name}.bin"), bytes);
        fixture(format!("{DATA}{name}.maybe.txt"), maybe);
    };
    let mut f = CuckooFilter::builder()
        .expected_items(1000)
        .seed(42)
        .build()
        .unwrap();
    fill(&mut f);
    write("cuckoo", f.to_bytes(), maybe_list(|k| f.contains(k)));
    let mut f = CuckooFilter::builder()
        .expected_items(1000)
        .seed(42)
        .bucket_size(2)
        .fingerprint::<Fp8>()
        .build()
        .unwrap();
    fill(&mut f);
    write("cuckoo-fp8", f.to_bytes(), maybe_list(|k| f.contains(k)));
    let mut f = CuckooFilter::builder()
        .expected_items(1000)
        .fingerprint::<Fp16>()
        .hasher(KeyedHasher::with_key(KEY))
        .build()
        .unwrap();
    fill(&mut f);
    write(
        "cuckoo-fp16-keyed",
        f.to_bytes(),
        maybe_list(|k| f.contains(k)),
    );
    let c = concurrent();
    write("concurrent", c.to_bytes(), maybe_list(|k| c.contains(k)));
}

/// The filter of `concurrent.bin` (see the file's docs).
fn concurrent() -> ConcurrentCuckooFilter {
    let c = ConcurrentCuckooFilter::builder()
        .expected_items(20_000)
        .seed(42)
        .build()
        .unwrap();
    for i in 0..1000 {
        c.insert(&key(i)).unwrap();
    }
    for i in 0..100 {
        c.remove(&key(i)).unwrap();
    }
    c
}

#[test]
fn concurrent_filters_written_before_still_load() {
    let bytes = read("concurrent.bin");
    let c = ConcurrentCuckooFilter::<Fp12>::from_bytes(&bytes).unwrap();
    assert_eq!((c.num_shards(), c.len()), (16, 900));
    assert!((100..1000).all(|i| c.contains(&key(i))));
    assert_eq!(
        maybe_list(|k| c.contains(k)),
        String::from_utf8(read("concurrent.maybe.txt")).unwrap()
    );
    assert_eq!(c.to_bytes(), bytes);
    let streamed = ConcurrentCuckooFilter::<Fp12>::read_from(&bytes[..]).unwrap();
    let mut again = Vec::new();
    streamed.write_to(&mut again).unwrap();
    assert_eq!(again, bytes);
    // Its shards are whole cuckoo filters; the plain reader refuses the sharded kind.
    assert!(CuckooFilter::<Fp12>::from_bytes(&bytes).is_err());
    assert_eq!(c.into_shards().iter().map(|s| s.len()).sum::<u64>(), 900);
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
