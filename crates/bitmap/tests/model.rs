//! Model-based tests against `BTreeSet` / `BTreeMap`, every backend against the scalar
//! oracle, serialization round trips and corrupt input.

use bloomforge_bitmap::{
    AtomicBitmap, AtomicTwoBitmap, Backend, Bitmap, BitmapError, BitmapView, Seen, TwoBitmap,
    TwoBitmapView,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug)]
enum Op {
    Insert(u32),
    Remove(u32),
    Contains(u32),
    Batch(Vec<u32>),
}

/// Values near 0, the universe's end and word boundaries, and anything.
fn value(universe: u64) -> impl Strategy<Value = u32> {
    let top = (universe - 1) as u32;
    prop_oneof![
        Just(0u32),
        Just(top),
        (0u32..8).prop_map(move |k| (k * 64).min(top)),
        (0u32..8).prop_map(move |k| (k * 64 + 63).min(top)),
        (0u32..8).prop_map(move |k| (k * 32 + 31).min(top)),
        (0..=top),
    ]
}

fn op(universe: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => value(universe).prop_map(Op::Insert),
        1 => value(universe).prop_map(Op::Remove),
        1 => any::<u32>().prop_map(Op::Contains),
        1 => prop::collection::vec(value(universe), 0..40).prop_map(Op::Batch),
    ]
}

fn universe() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(1u64),
        Just(63),
        Just(64),
        Just(65),
        Just(1000),
        Just(4096),
        1u64..5000
    ]
}

fn case() -> impl Strategy<Value = (u64, Vec<Op>)> {
    universe().prop_flat_map(|u| (Just(u), prop::collection::vec(op(u), 0..120)))
}

fn check_bitmap(b: &Bitmap, model: &BTreeSet<u32>) {
    assert_eq!(b.len(), model.len() as u64);
    assert_eq!(b.is_empty(), model.is_empty());
    assert!(b.iter().eq(model.iter().copied()));
    for (k, &x) in model.iter().enumerate() {
        assert_eq!(b.select(k as u64), Some(x));
        assert_eq!(b.rank(u64::from(x)), k as u64);
        assert_eq!(b.rank(u64::from(x) + 1), k as u64 + 1);
    }
    assert_eq!(b.select(model.len() as u64), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn bitmap_matches_btreeset((u, ops) in case()) {
        let mut b = Bitmap::new(u).unwrap();
        let mut model = BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert(x) => prop_assert_eq!(b.insert(x), model.insert(x)),
                Op::Remove(x) => prop_assert_eq!(b.remove(x), model.remove(&x)),
                Op::Contains(x) => prop_assert_eq!(b.contains(x), model.contains(&x)),
                Op::Batch(xs) => {
                    b.insert_batch(&xs).unwrap();
                    model.extend(xs.iter().copied());
                    let mut out = vec![false; xs.len()];
                    b.contains_batch(&xs, &mut out).unwrap();
                    prop_assert!(out.iter().all(|&o| o));
                }
            }
        }
        check_bitmap(&b, &model);
        // Round trip through the format and the view.
        let bytes = b.to_bytes();
        prop_assert_eq!(&Bitmap::from_bytes(&bytes).unwrap(), &b);
        let view = BitmapView::from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.len(), model.len() as u64);
        for x in 0..u.min(5000) as u32 {
            prop_assert_eq!(view.contains(x), model.contains(&x));
        }
    }

    #[test]
    fn set_algebra_matches_btreeset(
        (u, a, c) in universe().prop_flat_map(|u| (
            Just(u),
            prop::collection::vec(value(u), 0..200),
            prop::collection::vec(value(u), 0..200),
        ))
    ) {
        let (sa, sc): (BTreeSet<u32>, BTreeSet<u32>) =
            (a.iter().copied().collect(), c.iter().copied().collect());
        for backend in Backend::available() {
            let mut x = Bitmap::builder().universe(u).backend(backend).build().unwrap();
            x.insert_batch(&a).unwrap();
            let mut y = Bitmap::new(u).unwrap();
            y.par_insert_batch(&c).unwrap();
            let cases: [(SetOp, BTreeSet<u32>); 4] = [
                (Bitmap::union, sa.union(&sc).copied().collect()),
                (Bitmap::intersect, sa.intersection(&sc).copied().collect()),
                (Bitmap::difference, sa.difference(&sc).copied().collect()),
                (Bitmap::xor, sa.symmetric_difference(&sc).copied().collect()),
            ];
            for (f, want) in cases {
                let mut z = x.clone();
                f(&mut z, &y).unwrap();
                check_bitmap(&z, &want);
            }
        }
    }

    #[test]
    fn two_bitmap_matches_btreemap(
        (u, a, c) in universe().prop_flat_map(|u| (
            Just(u),
            prop::collection::vec(value(u), 0..200),
            prop::collection::vec(value(u), 0..200),
        ))
    ) {
        let mut t = TwoBitmap::new(u).unwrap();
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for &x in &a {
            let before = t.insert(x).unwrap();
            let n = counts.entry(x).or_default();
            prop_assert_eq!(before, state(*n));
            *n += 1;
        }
        let mut t2 = TwoBitmap::new(u).unwrap();
        t2.par_insert_batch(&c).unwrap();
        let mut c2 = BTreeMap::new();
        for &x in &c {
            *c2.entry(x).or_insert(0usize) += 1;
        }
        check_two(&t2, &c2);
        check_two(&t, &counts);
        for backend in Backend::available() {
            let mut m = t.clone();
            m.set_backend(backend).unwrap();
            m.merge(&t2).unwrap();
            let mut sum = counts.clone();
            for (&x, &n) in &c2 {
                *sum.entry(x).or_default() += n;
            }
            check_two(&m, &sum);
        }
        let bytes = t.to_bytes();
        prop_assert_eq!(&TwoBitmap::from_bytes(&bytes).unwrap(), &t);
        let view = TwoBitmapView::from_bytes(&bytes).unwrap();
        for x in 0..u as u32 {
            prop_assert_eq!(view.seen(x), t.seen(x));
        }
    }
}

type SetOp = fn(&mut Bitmap, &Bitmap) -> Result<(), BitmapError>;

fn state(n: usize) -> Seen {
    match n {
        0 => Seen::Never,
        1 => Seen::Once,
        _ => Seen::Many,
    }
}

fn check_two(t: &TwoBitmap, counts: &BTreeMap<u32, usize>) {
    let once: Vec<u32> = counts.iter().filter(|e| *e.1 == 1).map(|e| *e.0).collect();
    let many: Vec<u32> = counts.iter().filter(|e| *e.1 > 1).map(|e| *e.0).collect();
    assert_eq!(t.iter_once().collect::<Vec<_>>(), once);
    assert_eq!(t.iter_many().collect::<Vec<_>>(), many);
    assert_eq!(t.count_once(), once.len() as u64);
    assert_eq!(t.count_many(), many.len() as u64);
    assert_eq!(t.count_distinct(), counts.len() as u64);
    for x in 0..t.universe().min(5000) as u32 {
        assert_eq!(t.seen(x), state(counts.get(&x).copied().unwrap_or(0)));
    }
    check_listing(t, &once, &many);
}

/// The bulk listings (`append_once`, `append_many`, `for_each_once_block`) agree with the
/// model on the whole universe, on ranges that start and end inside words, and with an
/// offset (which wraps).
fn check_listing(t: &TwoBitmap, once: &[u32], many: &[u32]) {
    let u = t.universe();
    let mut got = vec![7];
    t.append_once(0..u64::MAX, 0, &mut got);
    assert_eq!(got[0], 7);
    assert_eq!(&got[1..], once);
    let mut got = Vec::new();
    t.append_many(0..u, 0, &mut got);
    assert_eq!(got, many);
    let mut blocks = Vec::new();
    t.for_each_once_block(0..u, 0, |b| {
        assert!(!b.is_empty() && b.len() <= 2048);
        blocks.extend_from_slice(b);
    });
    assert_eq!(blocks, once);
    let top = u.min(1 << 20);
    for (lo, hi) in [
        (0, 1),
        (1, 31),
        (31, 33),
        (32, 64),
        (5, 5),
        (63, 2100),
        (top / 3, top),
        (top - 1, top + 5),
    ] {
        for offset in [0u32, 1000, u32::MAX - 10] {
            let want = |src: &[u32]| -> Vec<u32> {
                src.iter()
                    .filter(|&&x| (lo..hi).contains(&u64::from(x)))
                    .map(|&x| offset.wrapping_add(x))
                    .collect()
            };
            let mut got = Vec::new();
            t.append_once(lo..hi, offset, &mut got);
            assert_eq!(got, want(once), "once in {lo}..{hi} + {offset}");
            let mut got = Vec::new();
            t.append_many(lo..hi, offset, &mut got);
            assert_eq!(got, want(many), "many in {lo}..{hi} + {offset}");
            let mut got = Vec::new();
            t.for_each_once_block(lo..hi, offset, |b| got.extend_from_slice(b));
            assert_eq!(got, want(once), "blocks in {lo}..{hi} + {offset}");
        }
    }
}

#[test]
fn the_whole_u32_domain_at_both_ends() {
    let mut b = Bitmap::full_u32().unwrap();
    assert!(b.is_empty());
    for x in [0, 63, 64, u32::MAX - 64, u32::MAX] {
        assert!(b.insert(x));
        assert!(!b.insert(x));
    }
    assert!(b.contains(u32::MAX) && !b.contains(u32::MAX - 1));
    assert_eq!(b.len(), 5);
    assert_eq!(
        b.iter().collect::<Vec<_>>(),
        [0, 63, 64, u32::MAX - 64, u32::MAX]
    );
    assert_eq!(b.rank(1 << 32), 5);
    assert_eq!(b.rank(u64::from(u32::MAX)), 4);
    assert_eq!(b.select(4), Some(u32::MAX));
    b.par_insert_batch(&[7, u32::MAX, 1 << 31]).unwrap();
    assert_eq!(b.len(), 7);
    let mut out = [false; 3];
    b.contains_batch(&[7, 8, 1 << 31], &mut out).unwrap();
    assert_eq!(out, [true, false, true]);
    assert!(b.remove(u32::MAX) && !b.contains(u32::MAX));
    b.clear();
    assert!(b.is_empty());
}

#[test]
fn out_of_range_and_bad_parameters_are_typed_errors() {
    assert_eq!(Bitmap::new(0).unwrap_err(), BitmapError::InvalidUniverse(0));
    assert!(matches!(
        Bitmap::new((1 << 32) + 1),
        Err(BitmapError::InvalidUniverse(_))
    ));
    let mut b = Bitmap::new(100).unwrap();
    assert!(matches!(
        b.try_insert(100),
        Err(BitmapError::OutOfRange {
            value: 100,
            universe: 100
        })
    ));
    assert!(b.insert_batch(&[1, 2, 100]).is_err());
    assert!(b.is_empty(), "a refused batch inserts nothing");
    assert!(b.try_extend([5, 200]).is_err());
    assert!(b.is_empty());
    assert!(!b.contains(u32::MAX) && !b.remove(1000));
    let mut out = [false; 2];
    assert!(matches!(
        b.contains_batch(&[1], &mut out),
        Err(BitmapError::Core(bloomforge_core::Error::LengthMismatch {
            keys: 1,
            out: 2
        }))
    ));
    let other = Bitmap::new(101).unwrap();
    assert!(matches!(
        b.union(&other),
        Err(BitmapError::UniverseMismatch {
            left: 100,
            right: 101
        })
    ));
    let mut t = TwoBitmap::new(10).unwrap();
    assert!(t.insert(10).is_err());
    assert!(t.insert_batch(&[1, 11]).is_err() && t.is_empty());
    assert!(t.merge(&TwoBitmap::new(11).unwrap()).is_err());
    assert_eq!(t.seen(1000), Seen::Never);
}

#[test]
fn from_iterator_and_extend() {
    let b: Bitmap = [5u32, 1, 5, 300].into_iter().collect();
    assert_eq!(b.universe(), 301);
    assert_eq!(b.iter().collect::<Vec<_>>(), [1, 5, 300]);
    let mut c = Bitmap::new(301).unwrap();
    c.extend([300, 1, 5]);
    assert_eq!(b, c);
    let t: TwoBitmap = [3u32, 3, 4].into_iter().collect();
    assert_eq!(t.iter_once().collect::<Vec<_>>(), [4]);
    assert_eq!(t.iter_many().collect::<Vec<_>>(), [3]);
    let empty: Bitmap = std::iter::empty().collect();
    assert!(empty.is_empty());
}

#[test]
fn corrupt_bytes_are_refused() {
    let mut b = Bitmap::new(100).unwrap();
    b.insert_batch(&[0, 50, 99]).unwrap();
    let good = b.to_bytes();
    let corrupt = |bytes: &[u8]| {
        matches!(
            Bitmap::from_bytes(bytes),
            Err(BitmapError::Core(
                bloomforge_core::Error::Corrupt { .. }
                    | bloomforge_core::Error::UnsupportedVersion(_)
            ))
        )
    };
    // Truncations, flipped bits (checksum), and the wrong kind.
    for cut in [0, 10, 63, 64, good.len() - 1] {
        assert!(corrupt(&good[..cut]), "cut {cut}");
    }
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x10;
        assert!(Bitmap::from_bytes(&bad).is_err(), "flip at {i}");
    }
    assert!(TwoBitmap::from_bytes(&good).is_err());
    // Well-sealed but inconsistent: a bit beyond the universe, a wrong item count, a
    // universe of 0, a payload that does not match the universe.
    let resealed = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut bad = good.clone();
        edit(&mut bad);
        bloomforge_core::format::reseal(&mut bad);
        corrupt(&bad)
    };
    assert!(resealed(&|v| v[64 + 15] |= 0x80)); // value 127 >= 100
    assert!(resealed(&|v| v[32] = 4)); // items
    assert!(resealed(&|v| v[24..32].copy_from_slice(&0u64.to_le_bytes())));
    assert!(resealed(
        &|v| v[24..32].copy_from_slice(&1000u64.to_le_bytes())
    ));
    assert!(resealed(
        &|v| v[24..32].copy_from_slice(&(1u64 << 33).to_le_bytes())
    ));
    assert!(resealed(&|v| v[8] = 1)); // a probe count
                                      // A 2-bitmap with a `11` field.
    let mut t = TwoBitmap::new(40).unwrap();
    t.insert_batch(&[1, 2, 2]).unwrap();
    let mut bad = t.to_bytes();
    bad[64] |= 0b1100; // value 1: 01 -> 11
    bad[32] = 3; // keep the item count consistent with the bits
    bloomforge_core::format::reseal(&mut bad);
    assert!(matches!(
        TwoBitmap::from_bytes(&bad),
        Err(BitmapError::Core(bloomforge_core::Error::Corrupt { .. }))
    ));
    // read_from / write_to.
    let mut buf = Vec::new();
    t.write_to(&mut buf).unwrap();
    assert_eq!(TwoBitmap::read_from(&buf[..]).unwrap(), t);
    assert!(TwoBitmap::read_from(&buf[..buf.len() - 1]).is_err());
    assert_eq!(Bitmap::read_from(&good[..]).unwrap(), b);
}

/// Values anywhere in the whole `u32` domain, with its edges and word boundaries
/// (0, 1, 63, 64, 2^32 - 64, 2^32 - 1 and their neighbours) drawn often.
fn full_value() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0u32,
            1,
            31,
            32,
            63,
            64,
            65,
            1 << 31,
            u32::MAX - 64,
            u32::MAX - 63, // 2^32 - 64
            u32::MAX - 32,
            u32::MAX - 1,
            u32::MAX, // 2^32 - 1
        ]),
        1 => 0u32..256,
        1 => (u32::MAX - 255)..=u32::MAX,
        2 => any::<u32>(),
    ]
}

fn full_ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => full_value().prop_map(Op::Insert),
            1 => full_value().prop_map(Op::Remove),
            1 => full_value().prop_map(Op::Contains),
            1 => prop::collection::vec(full_value(), 0..40).prop_map(Op::Batch),
        ],
        0..100,
    )
}

/// Full-universe cases are few (each scans 512 MiB or 1 GiB of mostly untouched zero
/// pages a few times) and their seed is fixed, so a run never depends on chance.
fn full_config() -> ProptestConfig {
    ProptestConfig {
        cases: 12,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x2_0000_0000),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The model's values and their neighbours (within the domain): the places to probe
/// without scanning 2^32 values.
fn probes<'a>(keys: impl Iterator<Item = &'a u32>) -> BTreeSet<u32> {
    let mut p: BTreeSet<u32> = [0, 1, 63, 64, u32::MAX - 63, u32::MAX].into();
    for &x in keys {
        p.extend([x.wrapping_sub(1), x, x.wrapping_add(1)]);
    }
    p
}

/// Checks a full-universe bitmap against its model without an O(2^32) loop: the ordered
/// values, the count, membership at every probe, and rank / select at the model's ends.
fn check_full_bitmap(b: &Bitmap, model: &BTreeSet<u32>) {
    assert_eq!(b.universe(), 1 << 32);
    assert!(b.iter().eq(model.iter().copied()));
    assert_eq!(b.len(), model.len() as u64);
    assert_eq!(b.is_empty(), model.is_empty());
    for x in probes(model.iter()) {
        assert_eq!(b.contains(x), model.contains(&x), "value {x}");
    }
    assert_eq!(b.rank(1 << 32), model.len() as u64);
    if let (Some(&lo), Some(&hi)) = (model.first(), model.last()) {
        assert_eq!(b.select(0), Some(lo));
        assert_eq!(b.select(model.len() as u64 - 1), Some(hi));
        assert_eq!(b.rank(u64::from(hi)), model.len() as u64 - 1);
    }
    assert_eq!(b.select(model.len() as u64), None);
}

/// Checks a full-universe 2-bitmap against its counts, as [`check_full_bitmap`].
fn check_full_two(t: &TwoBitmap, counts: &BTreeMap<u32, usize>) {
    assert_eq!(t.universe(), 1 << 32);
    let once: Vec<u32> = counts.iter().filter(|e| *e.1 == 1).map(|e| *e.0).collect();
    let many: Vec<u32> = counts.iter().filter(|e| *e.1 > 1).map(|e| *e.0).collect();
    assert_eq!(t.iter_once().collect::<Vec<_>>(), once);
    assert_eq!(t.iter_many().collect::<Vec<_>>(), many);
    assert_eq!(t.count_once(), once.len() as u64);
    assert_eq!(t.count_many(), many.len() as u64);
    assert_eq!(t.is_empty(), counts.is_empty());
    for x in probes(counts.keys()) {
        let want = state(counts.get(&x).copied().unwrap_or(0));
        assert_eq!(t.seen(x), want, "value {x}");
    }
    let mut got = Vec::new();
    t.append_once(0..1 << 32, 0, &mut got);
    assert_eq!(got, once);
    let mut got = Vec::new();
    t.append_many((1 << 32) - 100..1 << 32, 0, &mut got);
    assert_eq!(
        got,
        many.iter()
            .copied()
            .filter(|&x| x >= u32::MAX - 99)
            .collect::<Vec<_>>()
    );
}

proptest! {
    #![proptest_config(full_config())]

    #[test]
    fn full_universe_bitmap_matches_btreeset(ops in full_ops()) {
        let mut b = Bitmap::full_u32().unwrap();
        let mut model = BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert(x) => prop_assert_eq!(b.insert(x), model.insert(x)),
                Op::Remove(x) => prop_assert_eq!(b.remove(x), model.remove(&x)),
                Op::Contains(x) => prop_assert_eq!(b.contains(x), model.contains(&x)),
                Op::Batch(xs) => {
                    b.par_insert_batch(&xs).unwrap();
                    model.extend(xs.iter().copied());
                    let mut out = vec![false; xs.len()];
                    b.contains_batch(&xs, &mut out).unwrap();
                    prop_assert!(out.iter().all(|&o| o));
                }
            }
        }
        check_full_bitmap(&b, &model);
    }

    #[test]
    fn full_universe_two_bitmap_matches_btreemap(ops in full_ops()) {
        let mut t = TwoBitmap::full_u32().unwrap();
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for op in ops {
            match op {
                // A 2-bitmap has no remove: the model's remove is a second insert.
                Op::Insert(x) | Op::Remove(x) => {
                    let n = counts.entry(x).or_default();
                    prop_assert_eq!(t.insert(x).unwrap(), state(*n));
                    *n += 1;
                }
                Op::Contains(x) => {
                    let want = state(counts.get(&x).copied().unwrap_or(0));
                    prop_assert_eq!(t.seen(x), want);
                }
                Op::Batch(xs) => {
                    if xs.len() % 2 == 0 {
                        t.insert_batch(&xs).unwrap();
                    } else {
                        t.par_insert_batch(&xs).unwrap();
                    }
                    for &x in &xs {
                        *counts.entry(x).or_default() += 1;
                    }
                }
            }
        }
        check_full_two(&t, &counts);
    }

    #[test]
    fn full_universe_atomic_bitmap_matches_btreeset(ops in full_ops()) {
        let a = AtomicBitmap::full_u32().unwrap();
        let mut model = BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert(x) => prop_assert_eq!(a.insert(x).unwrap(), model.insert(x)),
                Op::Remove(x) => prop_assert_eq!(a.remove(x), model.remove(&x)),
                Op::Contains(x) => prop_assert_eq!(a.contains(x), model.contains(&x)),
                Op::Batch(xs) => {
                    a.insert_batch(&xs).unwrap();
                    model.extend(xs.iter().copied());
                }
            }
        }
        prop_assert_eq!(a.universe(), 1u64 << 32);
        prop_assert_eq!(a.len(), model.len() as u64);
        prop_assert_eq!(a.is_empty(), model.is_empty());
        for x in probes(model.iter()) {
            prop_assert_eq!(a.contains(x), model.contains(&x), "value {}", x);
        }
        check_full_bitmap(&a.into_inner(), &model);
    }

    #[test]
    fn full_universe_atomic_two_bitmap_matches_btreemap(ops in full_ops()) {
        let a = AtomicTwoBitmap::full_u32().unwrap();
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(x) | Op::Remove(x) => {
                    let n = counts.entry(x).or_default();
                    prop_assert_eq!(a.insert(x).unwrap(), state(*n));
                    *n += 1;
                }
                Op::Contains(x) => {
                    let want = state(counts.get(&x).copied().unwrap_or(0));
                    prop_assert_eq!(a.seen(x), want);
                }
                Op::Batch(xs) => {
                    a.insert_batch(&xs).unwrap();
                    for &x in &xs {
                        *counts.entry(x).or_default() += 1;
                    }
                }
            }
        }
        prop_assert_eq!(a.universe(), 1u64 << 32);
        for x in probes(counts.keys()) {
            let want = state(counts.get(&x).copied().unwrap_or(0));
            prop_assert_eq!(a.seen(x), want, "value {}", x);
        }
        check_full_two(&a.into_inner(), &counts);
    }
}

/// The parallel loads over the whole domain with enough values for their chunked
/// (per-thread word range) path: the domain's edges among 100 000 fixed-seed values, on
/// a pool of 3 threads (an odd split of the words).
#[test]
fn full_universe_parallel_loads_match_the_models() {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut values: Vec<u32> = (0..100_000)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 32) as u32
        })
        .collect();
    values.extend([0, 1, 63, 64, u32::MAX - 63, u32::MAX]);
    values.extend([0, u32::MAX, u32::MAX]); // seen two and three times
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for &x in &values {
        *counts.entry(x).or_default() += 1;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let mut t = TwoBitmap::full_u32().unwrap();
    pool.install(|| t.par_insert_batch(&values)).unwrap();
    check_full_two(&t, &counts);
    let mut b = Bitmap::full_u32().unwrap();
    pool.install(|| b.par_insert_batch(&values)).unwrap();
    check_full_bitmap(&b, &counts.keys().copied().collect());
    // The atomic forms, filled from the pool's threads at once.
    let a = AtomicBitmap::full_u32().unwrap();
    let a2 = AtomicTwoBitmap::full_u32().unwrap();
    pool.install(|| {
        use rayon::prelude::*;
        values.par_chunks(4096).for_each(|c| {
            a.insert_batch(c).unwrap();
            a2.insert_batch(c).unwrap();
        })
    });
    assert_eq!(a.len(), counts.len() as u64);
    check_full_bitmap(&a.into_inner(), &counts.keys().copied().collect());
    check_full_two(&a2.into_inner(), &counts);
}
