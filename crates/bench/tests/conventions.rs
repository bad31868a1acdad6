//! docs/conventions.md, checked on every public filter type of the workspace: at compile
//! time, each type listed here has the serialization methods (`to_bytes`, `from_bytes`,
//! `read_from`), a size getter of the one type the page names (`len() -> u64` where the
//! count is exact, `estimated_len() -> f64` where it is estimated; none for an IBLT) and
//! `expected_false_pos() -> f64` where it answers membership; at run time, every filter
//! type the crates export is listed here, so a new type fails this test until it is
//! added (and so checked).

use bloomforge_bitmap::{AtomicBitmap, AtomicTwoBitmap, Bitmap, TwoBitmap};
use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter,
    BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter,
};
use bloomforge_counting::{AtomicCountingBloomFilter, CountingBloomFilter};
use bloomforge_cuckoo::{ConcurrentCuckooFilter, CuckooFilter};
use bloomforge_dleft::DLeftCountingBloomFilter;
use bloomforge_retrieval::{
    BinaryFuseFilter, BloomierFilter, CompactApproximator, CountMin, Iblt, MaxLattice, XorFilter,
};
use bloomforge_stream::{AttenuatedBloomFilter, ScalableBloomFilter, StableBloomFilter};

fn serializes<T, E, F>(_: fn(&T) -> Vec<u8>, _: fn(&[u8]) -> Result<T, E>, _: F)
where
    F: Fn(&[u8]) -> Result<T, E>,
{
}
fn exact_len<T>(_: fn(&T) -> u64) {}
fn estimated_len<T>(_: fn(&T) -> f64) {}
fn false_pos<T>(_: fn(&T) -> f64) {}

/// The compile-time checks of one type: `$T`, then `len` or `estimated_len`, then
/// `fp` where it answers membership with a false-positive rate.
macro_rules! conventions {
    ($T:ty, $size:ident $(, $fp:ident)?) => {{
        serializes::<$T, _, _>(<$T>::to_bytes, <$T>::from_bytes, |b: &[u8]| <$T>::read_from(b));
        conventions!(@size $T, $size);
        $(conventions!(@fp $T, $fp);)?
        stringify!($T).split('<').next().unwrap().trim()
    }};
    (@size $T:ty, len) => { exact_len::<$T>(<$T>::len) };
    (@size $T:ty, estimated_len) => { estimated_len::<$T>(<$T>::estimated_len) };
    // A set difference (an IBLT) has no count of its own: it lists its entries.
    (@size $T:ty, none) => {};
    (@fp $T:ty, fp) => { false_pos::<$T>(<$T>::expected_false_pos) };
}

/// Types that do not keep the whole page yet, each with what it lacks. A type leaves this
/// list by gaining it (and moving into `checked` below).
const NOT_YET: &[(&str, &str)] = &[];

/// Exported names that end like a filter type's but are not one.
const NOT_FILTERS: &[(&str, &str)] = &[
    ("BuildFilter", "core's builder trait"),
    (
        "SliceFilter",
        "one slice of a scalable filter, read through the stack",
    ),
];

#[test]
fn every_filter_type_keeps_the_conventions() {
    let checked = [
        conventions!(BlockedBloomFilter, estimated_len, fp),
        conventions!(SplitBlockBloomFilter, estimated_len, fp),
        conventions!(StandardBloomFilter, estimated_len, fp),
        conventions!(AtomicBlockedBloomFilter, estimated_len, fp),
        conventions!(AtomicSplitBlockBloomFilter, estimated_len, fp),
        conventions!(AtomicStandardBloomFilter, estimated_len, fp),
        conventions!(CountingBloomFilter, len, fp),
        conventions!(AtomicCountingBloomFilter, estimated_len, fp),
        conventions!(DLeftCountingBloomFilter, len, fp),
        conventions!(Bitmap, len),
        conventions!(TwoBitmap, len),
        conventions!(AtomicBitmap, len),
        conventions!(AtomicTwoBitmap, len),
        conventions!(CuckooFilter, len, fp),
        conventions!(ConcurrentCuckooFilter, len, fp),
        conventions!(ScalableBloomFilter, estimated_len, fp),
        conventions!(StableBloomFilter, estimated_len, fp),
        conventions!(AttenuatedBloomFilter, estimated_len),
        conventions!(BinaryFuseFilter<u8>, len, fp),
        conventions!(XorFilter<u8>, len, fp),
        conventions!(BloomierFilter, len, fp),
        conventions!(Iblt, none),
        conventions!(CompactApproximator<MaxLattice<u8>>, estimated_len),
    ];
    // Every filter-like type the library crates export is checked or listed as not yet.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut missing = Vec::new();
    for krate in [
        "core",
        "counting",
        "dleft",
        "bitmap",
        "cuckoo",
        "stream",
        "retrieval",
    ] {
        let lib = std::fs::read_to_string(format!("{root}/{krate}/src/lib.rs")).unwrap();
        let exported = lib
            .split("pub use ")
            .skip(1)
            .flat_map(|item| item[..item.find(';').unwrap()].split([',', '{', '}', ':']))
            .map(|name| name.trim())
            .filter(|name| {
                let filter_like = ["Filter", "Bitmap", "Approximator", "Iblt"]
                    .iter()
                    .any(|end| name.ends_with(end));
                filter_like && !name.ends_with("View") && !name.starts_with("bloomforge")
            });
        for name in exported {
            let listed = NOT_YET.iter().chain(NOT_FILTERS).any(|(n, _)| *n == name);
            if !checked.contains(&name) && !listed {
                missing.push(format!("{krate}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "types not checked against docs/conventions.md: {missing:?}"
    );
    // `CountMin` is `CompactApproximator<SumLattice<_>>`: listed under its struct's name.
    let _ = CountMin::<u8>::with_cells;
}
