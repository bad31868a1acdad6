//! Scalable Bloom filter: growth, the compound false-positive bound, batches, union,
//! serialization and errors.

use bloomforge_stream::{ScalableBloomFilter, SliceFilter, SliceLayout, StreamError};
use proptest::prelude::*;
use statrs::distribution::{Binomial, DiscreteCDF};
use std::collections::HashSet;

/// Both slice layouts.
const LAYOUTS: [SliceLayout; 2] = [SliceLayout::Blocked, SliceLayout::Standard];

/// After 1000x the initial capacity (100 -> 100 000 keys, ten slices) there is no false
/// negative, the compound rate from the slices' fill is below `P`, and the measured
/// false-positive count is below the (1 - 2.5e-7) quantile of Binomial(Q, P): if the true
/// rate is at most `P` (the design), each of the four runs (two rates, two layouts) fails
/// with probability at most 2.5e-7, the test at most 1e-6. Fixed seeds.
#[test]
fn fp_stays_below_target_after_1000x_growth() {
    for layout in LAYOUTS {
        for (p, seed) in [(0.01, 1u64), (0.001, 2)] {
            fp_after_growth(layout, p, seed);
        }
    }
}

fn fp_after_growth(layout: SliceLayout, p: f64, seed: u64) {
    {
        let mut f = ScalableBloomFilter::builder()
            .expected_items(100)
            .false_pos(p)
            .seed(seed)
            .layout(layout)
            .build()
            .unwrap();
        assert_eq!(f.layout(), layout);
        let keys: Vec<u64> = (0..100_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        f.insert_batch(&keys).unwrap();
        assert_eq!(f.num_slices(), 10);
        assert!(
            f.estimated_len() <= 100_000.0 && f.estimated_len() > 99_000.0,
            "len {}",
            f.estimated_len()
        );
        let mut out = vec![false; keys.len()];
        f.contains_batch(&keys, &mut out).unwrap();
        assert!(out.iter().all(|&b| b), "false negative");
        assert!(
            f.false_pos_now() <= p,
            "compound rate {} > {p}",
            f.false_pos_now()
        );

        let q = 2_000_000u64;
        let probes: Vec<u64> = (0..q).map(|i| (1u64 << 50) + i).collect();
        let mut out = vec![false; probes.len()];
        f.contains_batch(&probes, &mut out).unwrap();
        let hits = out.iter().filter(|&&b| b).count() as u64;
        let hi = Binomial::new(p, q).unwrap().inverse_cdf(1.0 - 2.5e-7);
        assert!(
            hits <= hi,
            "{layout:?}, p={p}: {hits} false positives of {q}, bound {hi}"
        );
        // The single-key path agrees with the batch.
        for (k, &b) in probes.iter().zip(&out).take(20_000) {
            assert_eq!(f.contains(k), b);
        }
    }
}

#[test]
fn new_and_builder_agree_and_grow() {
    let mut a = ScalableBloomFilter::new(50, 0.02).unwrap();
    let mut b = ScalableBloomFilter::builder()
        .expected_items(50)
        .false_pos(0.02)
        .growth_factor(2.0)
        .tightening_ratio(0.85)
        .build()
        .unwrap();
    for i in 0..1000u32 {
        assert_eq!(a.insert(&i).unwrap(), b.insert(&i).unwrap());
    }
    assert_eq!(a, b);
    assert!(a.capacity() as f64 >= a.estimated_len());
    assert_eq!(a.capacity(), 50 + 100 + 200 + 400 + 800);
    assert_eq!(a.num_slices(), 5);
    assert!(a.memory_bytes() > 0);
    assert_eq!(a.slices().len(), 5);
    // A key already present is reported and not counted again.
    let len = a.estimated_len();
    assert!(a.insert(&7u32).unwrap());
    assert_eq!(a.estimated_len(), len);
    a.clear();
    assert!(a.is_empty() && a.num_slices() == 1 && !a.contains(&7u32));
}

#[test]
fn slice_limit_is_a_typed_error_and_leaves_the_filter_unchanged() {
    let mut f = ScalableBloomFilter::builder()
        .expected_items(10)
        .max_slices(2)
        .build()
        .unwrap();
    let mut i = 0u64;
    let err = loop {
        let before = f.clone();
        match f.insert(&i) {
            Ok(_) => i += 1,
            Err(e) => {
                assert_eq!(f, before);
                break e;
            }
        }
    };
    assert!(
        matches!(
            err,
            StreamError::TooManySlices {
                max_slices: 2,
                len: 30,
                capacity: 30
            }
        ),
        "{err}"
    );
    assert!((0..i).all(|k| f.contains(&k)));
    // Composes into core's error and back.
    let core: bloomforge_core::Error = err.clone().into();
    match &core {
        bloomforge_core::Error::Filter(s) => {
            assert_eq!(s.downcast_ref::<StreamError>(), Some(&err))
        }
        other => panic!("{other:?}"),
    }
    // The batch names the key that failed.
    let keys: Vec<u64> = (1000..1010).collect();
    match f.insert_batch(&keys) {
        Err(StreamError::BatchStopped { index: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_parameters_are_typed_errors() {
    use bloomforge_core::Error as E;
    assert!(matches!(
        ScalableBloomFilter::new(0, 0.01),
        Err(StreamError::Core(E::ZeroItems))
    ));
    assert!(matches!(
        ScalableBloomFilter::new(10, 1.0),
        Err(StreamError::Core(E::InvalidFalsePositiveRate(_)))
    ));
    let b = || ScalableBloomFilter::builder().expected_items(10);
    for (r, name) in [
        (b().growth_factor(0.5).build(), "growth_factor"),
        (b().growth_factor(f64::NAN).build(), "growth_factor"),
        (b().tightening_ratio(1.0).build(), "tightening_ratio"),
        (b().max_slices(0).build(), "max_slices"),
        (b().max_slices(65).build(), "max_slices"),
    ] {
        match r {
            Err(StreamError::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let f = ScalableBloomFilter::new(10, 0.01).unwrap();
    let mut out = vec![false; 2];
    assert!(matches!(
        f.contains_batch(&[1u8], &mut out),
        Err(StreamError::Core(E::LengthMismatch { keys: 1, out: 2 }))
    ));
}

#[test]
fn union_of_equal_stacks() {
    for layout in LAYOUTS {
        union_in(layout);
    }
}

fn union_in(layout: SliceLayout) {
    // Standard slices need 30 / rate bits: from 1500 keys at 1.5e-3 every slice has them.
    let n0 = match layout {
        SliceLayout::Standard => 1500,
        _ => 20,
    };
    let mk = || {
        ScalableBloomFilter::builder()
            .expected_items(n0)
            .seed(3)
            .layout(layout)
            .build()
            .unwrap()
    };
    let (mut a, mut b) = (mk(), mk());
    for i in 0..5 * n0 {
        a.insert(&i).unwrap();
    }
    for i in 1 << 30..(1 << 30) + 25 * n0 {
        b.insert(&i).unwrap();
    }
    assert!(b.num_slices() >= 5);
    assert!(b.slices().all(|s| s.layout() == layout));
    let (la, lb) = (a.estimated_len(), b.estimated_len());
    a.union(&b).unwrap();
    assert_eq!(a.num_slices(), b.num_slices());
    assert_eq!(a.estimated_len(), la + lb);
    assert!((0..5 * n0)
        .chain(1 << 30..(1 << 30) + 25 * n0)
        .all(|k| a.contains(&k)));

    let other = ScalableBloomFilter::builder()
        .expected_items(n0)
        .seed(4)
        .layout(layout)
        .build()
        .unwrap();
    let before = a.clone();
    match a.union(&other) {
        Err(StreamError::Incompatible {
            parameter: "hasher",
            ..
        }) => {}
        r => panic!("{r:?}"),
    }
    let other = ScalableBloomFilter::builder()
        .expected_items(n0 + 1)
        .seed(3)
        .layout(layout)
        .build()
        .unwrap();
    let e = a.union(&other).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot combine filters: initial capacity differs ({n0} vs {}); build both with the same parameters",
            n0 + 1
        )
    );
    // A stack of the other layout (equal in every other parameter) is refused by name.
    let other_layout = LAYOUTS.into_iter().find(|&l| l != layout).unwrap();
    let mut other = ScalableBloomFilter::builder()
        .expected_items(n0)
        .seed(3)
        .layout(other_layout)
        .build()
        .unwrap();
    other.insert(&1u64).unwrap();
    match a.union(&other) {
        Err(StreamError::Incompatible {
            parameter: "slice layout",
            ..
        }) => {}
        r => panic!("{r:?}"),
    }
    assert_eq!(a, before);
}

#[test]
fn serialization_round_trips_and_rejects_damage() {
    for layout in LAYOUTS {
        round_trip_in(layout);
    }
}

fn round_trip_in(layout: SliceLayout) {
    // Standard slices need 30 / rate bits: a first slice of 1500 keys at 1.5e-3 has them.
    let (n0, keys) = match layout {
        SliceLayout::Standard => (1500, 3200u64),
        _ => (8, 400),
    };
    let mut f = ScalableBloomFilter::builder()
        .expected_items(n0)
        .seed(9)
        .layout(layout)
        .build()
        .unwrap();
    for i in 0..keys / 2 {
        f.insert(&i).unwrap();
    }
    let bytes = f.to_bytes();
    let g = ScalableBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(f, g);
    assert_eq!(g.layout(), layout);
    assert!(g.slices().all(|s| s.layout() == layout));
    assert_eq!(ScalableBloomFilter::read_from(&bytes[..]).unwrap(), f);
    let mut w = Vec::new();
    f.write_to(&mut w).unwrap();
    assert_eq!(w, bytes);
    // Growth continues after a round trip exactly as before.
    let (mut f2, mut g2) = (f.clone(), g);
    for i in keys / 2..keys {
        assert_eq!(f2.insert(&i).unwrap(), g2.insert(&i).unwrap());
    }
    assert_eq!(f2, g2);
    // Every truncation and every single-byte change is refused, never a panic.
    for n in 0..bytes.len() {
        assert!(ScalableBloomFilter::from_bytes(&bytes[..n]).is_err());
    }
    for i in (0..bytes.len()).step_by(7) {
        let mut bad = bytes.clone();
        bad[i] ^= 0x40;
        assert!(ScalableBloomFilter::from_bytes(&bad).is_err(), "byte {i}");
    }
    // Hostile but well-sealed payloads: a slice count past the limit.
    let mut bad = bytes.clone();
    let at = bloomforge_core::format::HEADER_LEN + 36;
    bad[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
    bad[8..12].copy_from_slice(&1000u32.to_le_bytes());
    bloomforge_core::format::reseal(&mut bad);
    assert!(ScalableBloomFilter::from_bytes(&bad).is_err());
    // An unknown stack layout (bits 16..24 of the slice-limit word).
    let mut bad = bytes.clone();
    bad[at - 2] = 7;
    bloomforge_core::format::reseal(&mut bad);
    match ScalableBloomFilter::from_bytes(&bad) {
        Err(StreamError::Core(bloomforge_core::Error::Corrupt { reason })) => {
            assert_eq!(reason, "scalable filter: unknown slice layout")
        }
        r => panic!("{r:?}"),
    }
    if layout != SliceLayout::Blocked {
        // (A standard stack may hold both kinds: nothing more to refuse by kind.)
        return;
    }
    // A standard slice in a blocked stack: the second slice's kind byte changed
    // (blocked 1 -> standard 3), both checksums resealed.
    let f = f2;
    assert!(f.num_slices() >= 2);
    let bytes = f.to_bytes();
    let first = bloomforge_core::format::HEADER_LEN + 40;
    let first_len = u64::from_le_bytes(bytes[first + 8..first + 16].try_into().unwrap());
    let second = first + 16 + first_len as usize + 16;
    let mut bad = bytes.clone();
    bad[second + 6] ^= 1 ^ 3;
    bloomforge_core::format::reseal(&mut bad[second..]);
    bloomforge_core::format::reseal(&mut bad);
    match ScalableBloomFilter::from_bytes(&bad) {
        Err(StreamError::Core(bloomforge_core::Error::Corrupt { reason })) => {
            assert_eq!(reason, "scalable filter: a slice of another layout")
        }
        r => panic!("{r:?}"),
    }
}

#[test]
fn extend_and_from_iter() {
    let f: ScalableBloomFilter = (0..5000u64).collect();
    assert!((0..5000u64).all(|k| f.contains(&k)));
    assert!(f.num_slices() >= 3);
    let mut g = ScalableBloomFilter::new(10, 0.01).unwrap();
    g.extend(["a", "b", "c"]);
    assert!(g.contains("a") && g.contains("c"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Against a `HashSet`: every inserted key is present; `len` counts at most the
    /// distinct keys; the batch query equals the single one.
    #[test]
    fn model(keys in proptest::collection::vec(0u64..5000, 0..600), probes in proptest::collection::vec(0u64..10_000, 0..200), standard: bool) {
        let layout = if standard { SliceLayout::Standard } else { SliceLayout::Blocked };
        let mut f = ScalableBloomFilter::builder().expected_items(4).false_pos(0.05).layout(layout).build().unwrap();
        let mut set = HashSet::new();
        for k in &keys {
            let maybe = f.insert(k).unwrap();
            let new = set.insert(*k);
            prop_assert!(new || maybe);
        }
        prop_assert!(f.estimated_len() <= set.len() as f64);
        prop_assert!(set.iter().all(|k| f.contains(k)));
        let mut out = vec![false; probes.len()];
        f.contains_batch(&probes, &mut out).unwrap();
        for (k, b) in probes.iter().zip(out) {
            prop_assert_eq!(f.contains(k), b);
        }
    }
}

/// Every filter of the crate can be sent to and shared between threads.
#[test]
fn filters_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<ScalableBloomFilter>();
    check::<bloomforge_stream::StableBloomFilter>();
    check::<bloomforge_stream::AttenuatedBloomFilter>();
    check::<StreamError>();
}

/// The pipelined batch insert builds exactly the filter of one-by-one inserts (keys
/// repeated within and across batches, many growths), and counts the same new keys.
#[test]
fn batch_insert_equals_one_by_one() {
    for layout in LAYOUTS {
        batch_insert_in(layout);
    }
}

fn batch_insert_in(layout: SliceLayout) {
    let mk = || {
        ScalableBloomFilter::builder()
            .expected_items(50)
            .seed(11)
            .layout(layout)
            .build()
            .unwrap()
    };
    let (mut a, mut b) = (mk(), mk());
    let mut x = 5u64;
    for round in 0..40u64 {
        let keys: Vec<u64> = (0..1000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(round | 1);
                (x >> 40) % 30_000
            })
            .collect();
        let new_b = keys.iter().filter(|k| !b.insert(*k).unwrap()).count() as u64;
        assert_eq!(a.insert_batch(&keys).unwrap(), new_b);
        assert_eq!(a, b);
    }
    assert!(a.num_slices() >= 8);
}

/// The batch query (slice by slice, newest first, on the keys still undecided) answers
/// exactly as single queries: members spread over every slice, non-members (some of them
/// false positives of old slices, some of the newest), a repeated key, an empty batch, and
/// a length mismatch that leaves `out` untouched.
#[test]
fn batch_query_equals_single_queries() {
    for layout in LAYOUTS {
        batch_query_in(layout);
    }
}

fn batch_query_in(layout: SliceLayout) {
    use std::hash::BuildHasher;
    let mut f = ScalableBloomFilter::builder()
        .expected_items(64)
        .false_pos(0.2)
        .seed(21)
        .layout(layout)
        .build()
        .unwrap();
    let members: Vec<u64> = (0..60_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    f.insert_batch(&members).unwrap();
    assert!(f.num_slices() >= 10);
    let mut keys: Vec<u64> = members.iter().step_by(7).copied().collect();
    keys.extend((0..40_000u64).map(|i| (1 << 40) + i));
    keys.push(members[0]);
    keys.push(members[0]);
    let mut out = vec![false; keys.len()];
    f.contains_batch(&keys, &mut out).unwrap();
    let single: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
    assert_eq!(out, single);
    let positives = out.iter().filter(|&&b| b).count();
    assert!(positives > members.len() / 7 && positives < keys.len());
    let hashes: Vec<u64> = keys.iter().map(|k| f.hasher().hash_one(k)).collect();
    let mut by_hash = vec![false; keys.len()];
    f.contains_hash_batch(&hashes, &mut by_hash).unwrap();
    assert_eq!(by_hash, single);
    f.contains_batch::<u64>(&[], &mut []).unwrap();
    let mut short = vec![true; 3];
    assert!(f.contains_batch(&keys[..4], &mut short).is_err());
    assert_eq!(short, vec![true; 3]);
}

/// A stack of `P` = `p`, tightening `r`, initial capacity `n0` in `layout`, fed keys
/// 0, 1, 2, .. until it has `slices` slices.
fn grown(p: f64, r: f64, n0: u64, layout: SliceLayout, slices: usize) -> ScalableBloomFilter {
    let mut f = ScalableBloomFilter::builder()
        .expected_items(n0)
        .false_pos(p)
        .tightening_ratio(r)
        .layout(layout)
        .build()
        .unwrap();
    let mut i = 0u64;
    while f.num_slices() < slices {
        f.insert(&i).unwrap();
        i += 1;
    }
    f
}

/// Each slice meets its rate `P (1 - r) r^i` by core's blocked formula at its actual bits
/// and `k`, and never takes more bits than core's own sizing: the same slice where core's
/// `k` is best (the default settings), fewer bits below rates of about 1e-4, where core's
/// search window for `k` misses the best one.
#[test]
fn slices_meet_their_rate_in_no_more_bits_than_cores_sizing() {
    use bloomforge_core::math::blocked512_fp;
    use bloomforge_core::BlockedBloomFilter;
    let mut fewer_bits = 0;
    for (p, r, n0, slices) in [
        (0.01, 0.85, 100u64, 8),
        (0.01, 0.5, 100, 8),
        (0.001, 0.85, 200, 7),
    ] {
        let f = grown(p, r, n0, SliceLayout::Blocked, slices);
        for (i, (slice, _, cap)) in f.slices_with_len().enumerate() {
            let rate = p * (1.0 - r) * r.powi(i as i32);
            let c = slice.num_bits() as f64 / cap as f64;
            assert!(
                blocked512_fp(c, slice.num_hashes()) <= rate,
                "p={p} r={r} slice {i}"
            );
            let core = BlockedBloomFilter::with_false_pos(rate)
                .expected_items(cap)
                .unwrap();
            assert!(slice.num_bits() <= core.num_bits(), "p={p} r={r} slice {i}");
            if slice.num_bits() < core.num_bits() {
                assert!(rate < 1e-4, "p={p} r={r} slice {i}: rate {rate}");
                assert!(slice.num_hashes() < core.num_hashes());
                fewer_bits += 1;
            } else if r == 0.85 && p == 0.01 {
                assert_eq!(slice.shape(), core.shape(), "slice {i}");
            }
        }
    }
    assert!(fewer_bits >= 3, "{fewer_bits}");
}

/// Standard slices: each meets its rate `P (1 - r) r^i` by the classic formula at its
/// bits and `k` and is exactly core's standard sizing for it, where that sizing has at
/// least `30 / rate` bits (where core's double-hashed probes hold the rate); a smaller
/// slice is a blocked one, meeting its rate by core's blocked formula. The stack takes
/// fewer bits than the blocked one and than `growable-bloom-filter` 2.1.1 at the same
/// guarantee (its slices sized for `P (1 - r) r^i` by its `Bloom::new`: `ceil(log2 1/p)`
/// partitions of `ceil(cap / ln 2)` bits, whole bytes; formula copied here as data).
#[test]
fn standard_slices_meet_their_rate_in_fewer_bits_than_blocked_and_growable() {
    use bloomforge_core::math::{blocked512_fp, std_fp};
    use bloomforge_core::StandardBloomFilter;
    let growable_slice_bits = |cap: u64, p: f64| {
        let k = (1.0 / p).log2().ceil() as u64;
        (k * (cap as f64 / std::f64::consts::LN_2).ceil() as u64).div_ceil(8) * 8
    };
    // (P, r, n0, slices, how many slices are blocked)
    for (p, r, n0, slices, blocked_slices) in
        [(0.01, 0.85, 1000u64, 12, 1), (0.001, 0.85, 2000, 10, 4)]
    {
        let standard = grown(p, r, n0, SliceLayout::Standard, slices);
        let blocked = grown(p, r, n0, SliceLayout::Blocked, slices);
        let mut growable = 0u64;
        let mut fell_back = 0;
        for (i, (slice, _, cap)) in standard.slices_with_len().enumerate() {
            let rate = p * (1.0 - r) * r.powi(i as i32);
            let core = StandardBloomFilter::with_false_pos(rate)
                .expected_items(cap)
                .unwrap();
            let holds = core.num_bits() as f64 >= 30.0 / rate;
            match slice {
                SliceFilter::Standard(s) => {
                    assert!(holds, "p={p} r={r} slice {i}");
                    assert!(
                        std_fp(s.num_bits() as f64, cap as f64, s.num_hashes()) <= rate,
                        "p={p} r={r} slice {i}"
                    );
                    assert_eq!(s.shape(), core.shape(), "p={p} r={r} slice {i}");
                }
                SliceFilter::Blocked(b) => {
                    assert!(!holds, "p={p} r={r} slice {i}");
                    let c = b.num_bits() as f64 / cap as f64;
                    assert!(
                        blocked512_fp(c, b.num_hashes()) <= rate,
                        "p={p} r={r} slice {i}"
                    );
                    fell_back += 1;
                }
                _ => panic!("slice {i}: {:?}", slice.layout()),
            }
            growable += growable_slice_bits(cap, rate);
        }
        assert_eq!(fell_back, blocked_slices, "p={p} r={r}");
        let bits = standard.memory_bytes() * 8;
        assert!(bits < blocked.memory_bytes() * 8, "p={p} r={r}");
        assert!(bits < growable, "p={p} r={r}: {bits} >= {growable}");
    }
}

/// A standard-layout stack whose slices are all too small for standard filters (`n0` =
/// 10, `P` = 0.1 %: slice 0 would be 183 bits, where core's double-hashed probes add
/// about 1.4e-3 to its rate), so all blocked, keeps its bound: the
/// false positives among 2 * 10^6 non-members stay below the (1 - 1e-6) quantile of
/// Binomial(2 * 10^6, P). Fixed seed; a true rate at most `P` fails with probability at
/// most 1e-6.
#[test]
fn tiny_standard_slices_keep_the_bound() {
    let p = 0.001;
    let mut f = ScalableBloomFilter::builder()
        .expected_items(10)
        .false_pos(p)
        .layout(SliceLayout::Standard)
        .seed(5)
        .build()
        .unwrap();
    let keys: Vec<u64> = (0..5000u64).collect();
    f.insert_batch(&keys).unwrap();
    assert!(f.num_slices() >= 9);
    assert!(f.slices().all(|s| s.layout() == SliceLayout::Blocked));
    let q = 2_000_000u64;
    let probes: Vec<u64> = (0..q).map(|i| (1u64 << 40) + i).collect();
    let mut out = vec![false; probes.len()];
    f.contains_batch(&probes, &mut out).unwrap();
    let hits = out.iter().filter(|&&b| b).count() as u64;
    let hi = Binomial::new(p, q).unwrap().inverse_cdf(1.0 - 1e-6);
    assert!(hits <= hi, "{hits} false positives of {q}, bound {hi}");
}
