//! Format compatibility: bitmaps written by an earlier version must load, hold exactly
//! what they held, and re-encode to the same bytes.
//!
//! The fixtures in `tests/data/compat/` were written by [`write_fixtures`] (it runs with
//! the tests and checks that today's code still writes exactly these bytes; run
//! `BLOOMFORGE_WRITE_FIXTURES=1 cargo test -p bloomforge-bitmap --test integration compat::`
//! only to add fixtures of a NEW format; never to overwrite these): format version 3.
//! - `bitmap.bin`: `Bitmap::new(10_000)` holding `7 i mod 10_000` for `i` in `0..1000`
//!   (universe not a multiple of 64, so the last word has padding);
//! - `two-bitmap.bin`: `TwoBitmap::new(5_000)` with `3 i mod 5_000` inserted once for
//!   `i` in `0..1000` and again for every `i` divisible by 4.

use std::collections::BTreeSet;

use bloomforge_bitmap::{
    AtomicBitmap, AtomicTwoBitmap, Bitmap, BitmapView, Seen, TwoBitmap, TwoBitmapView,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/compat/");

fn bitmap_values() -> BTreeSet<u32> {
    (0..1000u32).map(|i| i * 7 % 10_000).collect()
}

fn two_bitmap_inserts() -> Vec<u32> {
    let mut v: Vec<u32> = (0..1000u32).map(|i| i * 3 % 5_000).collect();
    v.extend((0..1000u32).filter(|i| i % 4 == 0).map(|i| i * 3 % 5_000));
    v
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn bitmaps_written_before_still_load() {
    let bytes = read("bitmap.bin");
    let b = Bitmap::from_bytes(&bytes).unwrap();
    let view = BitmapView::from_bytes(&bytes).unwrap();
    let want = bitmap_values();
    assert_eq!((b.universe(), b.len()), (10_000, want.len() as u64));
    assert_eq!(b.iter().collect::<BTreeSet<u32>>(), want);
    for x in 0..10_064u32 {
        assert_eq!(b.contains(x), want.contains(&x), "{x}");
        assert_eq!(view.contains(x), want.contains(&x), "{x} (view)");
    }
    assert_eq!(b.to_bytes(), bytes);
    assert_eq!(Bitmap::read_from(&bytes[..]).unwrap(), b);
    // The atomic form reads and writes the same bytes.
    let a = AtomicBitmap::from_bytes(&bytes).unwrap();
    assert_eq!(a.to_bytes(), bytes);
    let a = AtomicBitmap::read_from(&bytes[..]).unwrap();
    let mut streamed = Vec::new();
    a.write_to(&mut streamed).unwrap();
    assert_eq!(streamed, bytes);
    assert!(a.into_inner() == b);
}

#[test]
fn two_bitmaps_written_before_still_load() {
    let bytes = read("two-bitmap.bin");
    let t = TwoBitmap::from_bytes(&bytes).unwrap();
    let view = TwoBitmapView::from_bytes(&bytes).unwrap();
    let mut times = std::collections::HashMap::<u32, u32>::new();
    for x in two_bitmap_inserts() {
        *times.entry(x).or_default() += 1;
    }
    assert_eq!(t.universe(), 5_000);
    assert_eq!(t.count_distinct(), times.len() as u64);
    for x in 0..5_064u32 {
        let want = match times.get(&x) {
            None => Seen::Never,
            Some(1) => Seen::Once,
            Some(_) => Seen::Many,
        };
        assert_eq!(t.seen(x), want, "{x}");
        assert_eq!(view.seen(x), want, "{x} (view)");
    }
    assert_eq!(t.to_bytes(), bytes);
    assert_eq!(TwoBitmap::read_from(&bytes[..]).unwrap(), t);
    // The atomic form reads and writes the same bytes.
    let a = AtomicTwoBitmap::from_bytes(&bytes).unwrap();
    assert_eq!(a.to_bytes(), bytes);
    let a = AtomicTwoBitmap::read_from(&bytes[..]).unwrap();
    let mut streamed = Vec::new();
    a.write_to(&mut streamed).unwrap();
    assert_eq!(streamed, bytes);
    assert!(a.into_inner() == t);
}

/// Writes the fixtures (see the file's docs).
#[test]
fn write_fixtures() {
    let mut b = Bitmap::new(10_000).unwrap();
    b.extend(bitmap_values());
    fixture(format!("{DATA}bitmap.bin"), b.to_bytes());
    let mut t = TwoBitmap::new(5_000).unwrap();
    for x in two_bitmap_inserts() {
        t.insert(x).unwrap();
    }
    fixture(format!("{DATA}two-bitmap.bin"), t.to_bytes());
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
