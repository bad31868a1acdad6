//! Bloomier, binary fuse and xor filters against `HashMap` / `HashSet` models, their FP
//! rate against theory, and their serialization.

use std::collections::HashMap;

use bloomforge_retrieval::{BinaryFuseFilter, BloomierFilter, RetrievalError, XorFilter};
use statrs::distribution::{Binomial, DiscreteCDF};

/// Two-sided binomial check: `hits` of `trials` at rate `p` has a false-alarm probability
/// of at most 1e-6.
fn assert_binomial(hits: u64, trials: u64, p: f64, what: &str) {
    let d = Binomial::new(p, trials).unwrap();
    let lower_tail = d.cdf(hits);
    let upper_tail = if hits == 0 {
        1.0
    } else {
        1.0 - d.cdf(hits - 1)
    };
    assert!(
        lower_tail > 0.5e-6 && upper_tail > 0.5e-6,
        "{what}: {hits} of {trials} at p = {p:e} (mean {:.1}): P(X <= hits) = {lower_tail:e}, P(X >= hits) = {upper_tail:e}",
        trials as f64 * p
    );
}

fn string_pairs(n: u32, bits: u32) -> Vec<(String, u32)> {
    (0..n)
        .map(|i| {
            (
                format!(
                    "https://example.org/item/{i}?q={}",
                    i.wrapping_mul(2654435761)
                ),
                i.wrapping_mul(0x9e37_79b9) & ((1u64 << bits) - 1) as u32,
            )
        })
        .collect()
}

#[test]
fn bloomier_exact_on_strings_and_integers() {
    for (n, vbits, fbits) in [
        (0u32, 8u32, 8u32),
        (1, 1, 0),
        (2, 32, 32),
        (10, 5, 3),
        (1000, 16, 8),
        (100_000, 20, 12),
    ] {
        let pairs = string_pairs(n, vbits);
        let model: HashMap<&str, u32> = pairs.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let f = BloomierFilter::build(&pairs, vbits, fbits).unwrap();
        assert_eq!(f.len(), n as u64);
        for (k, v) in &model {
            assert_eq!(f.get(*k), Some(*v), "n {n} key {k}");
        }
        let ints: Vec<(u64, u32)> = (0..u64::from(n))
            .map(|i| (i * 3 + 1, (i as u32) & ((1u64 << vbits) - 1) as u32))
            .collect();
        let g = BloomierFilter::build_with_seed(&ints, vbits, fbits, 99).unwrap();
        for (k, v) in &ints {
            assert_eq!(g.get(k), Some(*v));
        }
    }
}

#[test]
fn bloomier_duplicates_and_parameters() {
    let same = [("a", 1u32), ("b", 2), ("a", 1)];
    let f = BloomierFilter::build(&same, 4, 8).unwrap();
    assert_eq!((f.len(), f.get("a"), f.get("b")), (2, Some(1), Some(2)));
    let clash = [("a", 1u32), ("b", 2), ("a", 3)];
    assert!(matches!(
        BloomierFilter::build(&clash, 4, 8),
        Err(RetrievalError::DuplicateKey { .. })
    ));
    assert!(matches!(
        BloomierFilter::build(&[("a", 16u32)], 4, 8),
        Err(RetrievalError::InvalidParameter { name: "value", .. })
    ));
    assert!(matches!(
        BloomierFilter::build(&[("a", 1u32)], 0, 8),
        Err(RetrievalError::InvalidParameter { .. })
    ));
    assert!(matches!(
        BloomierFilter::build(&[("a", 1u32)], 8, 33),
        Err(RetrievalError::InvalidParameter { .. })
    ));
}

#[test]
fn bloomier_false_positives_match_two_to_minus_f() {
    for (fbits, queries) in [(4u32, 100_000u64), (8, 400_000), (12, 2_000_000)] {
        let pairs = string_pairs(50_000, 10);
        let f = BloomierFilter::build_with_seed(&pairs, 10, fbits, 7).unwrap();
        let hits = (0..queries)
            .filter(|i| f.get(&format!("absent-{i}")).is_some())
            .count() as u64;
        assert_binomial(
            hits,
            queries,
            (-(fbits as f64)).exp2(),
            &format!("bloomier f={fbits}"),
        );
    }
}

#[test]
fn membership_filters_have_no_false_negatives_and_the_theoretical_fp() {
    let keys: Vec<u64> = (0..200_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let fuse8 = BinaryFuseFilter::<u8>::build_from(&keys, 1).unwrap();
    let fuse16 = BinaryFuseFilter::<u16>::build_from(&keys, 2).unwrap();
    let xor8 = XorFilter::<u8>::build_from(&keys, 3).unwrap();
    let xor16 = XorFilter::<u16>::build_from(&keys, 4).unwrap();
    for k in &keys {
        assert!(fuse8.contains(k) && fuse16.contains(k) && xor8.contains(k) && xor16.contains(k));
    }
    assert!(
        fuse8.cells() < (keys.len() as f64 * 1.2) as usize,
        "{}",
        fuse8.cells()
    );
    let q = 2_000_000u64;
    let absent = |i: u64| (i + 200_000).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let count = |f: &dyn Fn(u64) -> bool| (0..q).filter(|&i| f(absent(i))).count() as u64;
    assert_binomial(count(&|k| fuse8.contains(&k)), q, 1.0 / 256.0, "fuse8");
    assert_binomial(count(&|k| fuse16.contains(&k)), q, 1.0 / 65536.0, "fuse16");
    assert_binomial(count(&|k| xor8.contains(&k)), q, 1.0 / 256.0, "xor8");
    assert_binomial(count(&|k| xor16.contains(&k)), q, 1.0 / 65536.0, "xor16");
    let strings: Vec<String> = (0..5000).map(|i| format!("line {i}")).collect();
    let s = BinaryFuseFilter::<u8>::build_from(&strings, 0).unwrap();
    assert!(strings.iter().all(|k| s.contains(k.as_str())));
    assert!(BinaryFuseFilter::<u8>::build_from::<u64>(&[], 0)
        .unwrap()
        .is_empty());
}

#[test]
fn round_trips_and_corrupt_bytes() {
    let pairs = string_pairs(3000, 12);
    let f = BloomierFilter::build(&pairs, 12, 7).unwrap();
    let bytes = f.to_bytes();
    let g = BloomierFilter::from_bytes(&bytes).unwrap();
    for (k, v) in &pairs {
        assert_eq!(g.get(k), Some(*v));
    }
    assert_eq!(g.to_bytes(), bytes);
    let keys: Vec<&String> = pairs.iter().map(|(k, _)| k).collect();
    let fuse = BinaryFuseFilter::<u16>::build(&keys, 5).unwrap();
    let fb = fuse.to_bytes();
    assert_eq!(
        BinaryFuseFilter::<u16>::from_bytes(&fb).unwrap().to_bytes(),
        fb
    );
    let xor = XorFilter::<u8>::build(&keys, 5).unwrap();
    let xb = xor.to_bytes();
    assert_eq!(XorFilter::<u8>::from_bytes(&xb).unwrap().to_bytes(), xb);
    // Foreign width or kind.
    assert!(BinaryFuseFilter::<u8>::from_bytes(&fb).is_err());
    assert!(BinaryFuseFilter::<u8>::from_bytes(&xb).is_err());
    assert!(XorFilter::<u8>::from_bytes(&bytes).is_err());
    // Truncations and bit flips (the checksum catches them; resealed ones the layout checks).
    for cut in [0, 10, 64, 70, bytes.len() - 1] {
        assert!(matches!(
            BloomierFilter::from_bytes(&bytes[..cut]),
            Err(RetrievalError::Core(_))
        ));
    }
    for at in [5, 20, 64, 66, 68, 72, 80, 90, 96, 100, bytes.len() - 3] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        assert!(BloomierFilter::from_bytes(&bad).is_err(), "flip at {at}");
        bloomforge_core::format::reseal(&mut bad);
        // The layout and widths are checked on their own, not only by the checksum; the
        // retry index (bytes 68..72) is any number below 100 there, so like the header's
        // seed only the checksum guards it.
        if (64..64 + 40).contains(&at) && !(68..72).contains(&at) {
            assert!(
                BloomierFilter::from_bytes(&bad).is_err(),
                "resealed flip at {at}"
            );
        }
    }
    let mut retried = bytes.clone();
    retried[68..72].copy_from_slice(&100u32.to_le_bytes());
    bloomforge_core::format::reseal(&mut retried);
    assert!(
        BloomierFilter::from_bytes(&retried).is_err(),
        "retry index 100"
    );
    // A resealed layout of absurd size is refused before anything is allocated.
    let mut huge = bytes.clone();
    huge[64 + 16..64 + 24].copy_from_slice(&(1u64 << 50).to_le_bytes());
    bloomforge_core::format::reseal(&mut huge);
    assert!(BloomierFilter::from_bytes(&huge).is_err());
}

/// Large builds run in parallel; the bytes do not depend on the number of threads, and
/// repeated keys (which take the deduplicating path) are stored once.
#[test]
fn parallel_builds_are_deterministic_and_take_repeats() {
    let keys: Vec<u64> = (0..300_000u64).map(|i| i % 250_000).collect();
    let build = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| BinaryFuseFilter::<u8>::build_from(&keys, 9).unwrap())
    };
    let (one, two) = (build(1), build(2));
    assert_eq!(one.to_bytes(), two.to_bytes());
    assert_eq!(one.len(), 250_000);
    assert!(keys.iter().all(|k| one.contains(k)));
    let pairs: Vec<(u64, u32)> = (0..200_000u64).map(|i| (i, (i % 1000) as u32)).collect();
    let map = BloomierFilter::build(&pairs, 10, 8).unwrap();
    assert!(pairs.iter().all(|(k, v)| map.get(k) == Some(*v)));
}

/// Zero-copy views answer exactly as the owned filters, at any alignment, and refuse what
/// `from_bytes` refuses.
#[test]
fn views_match_the_owned_filters_and_refuse_corrupt_bytes() {
    use bloomforge_retrieval::{BinaryFuseFilterView, BloomierFilterView, XorFilterView};
    let pairs = string_pairs(3000, 11);
    let absent: Vec<String> = (0..20_000).map(|i| format!("absent-{i}")).collect();
    let keys: Vec<&String> = pairs.iter().map(|(k, _)| k).collect();

    let map = BloomierFilter::build(&pairs, 11, 6).unwrap();
    let bytes = map.to_bytes();
    // Shifted by one byte: the view reads unaligned words.
    let mut shifted = vec![0u8; 1];
    shifted.extend_from_slice(&bytes);
    for b in [&bytes[..], &shifted[1..]] {
        let view = BloomierFilterView::from_bytes(b).unwrap();
        assert_eq!(
            (view.len(), view.value_bits(), view.fingerprint_bits()),
            (3000, 11, 6)
        );
        for (k, v) in &pairs {
            assert_eq!(view.get(k), Some(*v));
        }
        // Outside the set: the same answers (values and false positives) as the owner.
        assert!(absent.iter().all(|k| view.get(k) == map.get(k)));
        assert_eq!(view.to_filter().to_bytes(), bytes);
    }

    let fuse = BinaryFuseFilter::<u16>::build(&keys, 3).unwrap();
    let fb = fuse.to_bytes();
    let mut shifted = vec![0u8; 1];
    shifted.extend_from_slice(&fb);
    let view = BinaryFuseFilterView::<u16>::from_bytes(&shifted[1..]).unwrap();
    assert!(keys.iter().all(|k| view.contains(k)));
    assert!(absent.iter().all(|k| view.contains(k) == fuse.contains(k)));
    assert_eq!((view.len(), view.cells()), (fuse.len(), fuse.cells()));
    assert_eq!(view.to_filter().to_bytes(), fb);

    let ints: Vec<u64> = (0..5000).map(|i| i * 7919).collect();
    let xor = XorFilter::<u8>::build_from(&ints, 1).unwrap();
    let xb = xor.to_bytes();
    let view = XorFilterView::<u8>::from_bytes(&xb).unwrap();
    assert!(ints.iter().all(|k| view.contains(k)));
    assert!((0..20_000u64).all(|k| view.contains(&(k * 7919 + 1)) == xor.contains(&(k * 7919 + 1))));
    assert_eq!(view.to_filter().to_bytes(), xb);

    // Foreign kind or width.
    assert!(BinaryFuseFilterView::<u8>::from_bytes(&fb).is_err());
    assert!(XorFilterView::<u8>::from_bytes(&fb).is_err());
    assert!(BinaryFuseFilterView::<u8>::from_bytes(&xb).is_err());
    assert!(BloomierFilterView::from_bytes(&xb).is_err());
    // Truncations and flips.
    for cut in [0, 10, 64, 70, bytes.len() - 1] {
        assert!(BloomierFilterView::from_bytes(&bytes[..cut]).is_err());
        assert!(BinaryFuseFilterView::<u16>::from_bytes(&fb[..cut.min(fb.len() - 1)]).is_err());
    }
    for at in [5, 20, 64, 68, 72, 80, 96, 100, bytes.len() - 3] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        assert!(
            BloomierFilterView::from_bytes(&bad).is_err(),
            "flip at {at}"
        );
        let mut bad = fb.clone();
        bad[at.min(fb.len() - 3)] ^= 0x10;
        assert!(
            BinaryFuseFilterView::<u16>::from_bytes(&bad).is_err(),
            "flip at {at}"
        );
    }
    // A resealed layout that does not match the cells is refused.
    let mut bad = fb.clone();
    bad[64 + 16..64 + 24].copy_from_slice(&(1u64 << 30).to_le_bytes());
    bloomforge_core::format::reseal(&mut bad);
    assert!(BinaryFuseFilterView::<u16>::from_bytes(&bad).is_err());
}

/// Tables of a MiB or more take the batch lookups' prefetching path (smaller ones go
/// without): binary fuse and Bloomier batches answer there exactly as single lookups too,
/// in batches of every length around the 128 keys prefetched ahead.
#[test]
fn large_table_batches_answer_as_single_lookups() {
    let n = 1_200_000u64;
    let keys: Vec<u64> = (0..2 * n)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 7)
        .collect();
    let members = &keys[..n as usize];
    let fuse = BinaryFuseFilter::<u8>::build_from(members, 3).unwrap();
    assert!(fuse.to_bytes().len() >= 1 << 20);
    let pairs: Vec<(u64, u32)> = members
        .iter()
        .map(|&k| (k, (k >> 40) as u32 & 0xff))
        .collect();
    let bloomier = BloomierFilter::build(&pairs, 8, 8).unwrap();
    assert!(bloomier.to_bytes().len() >= 1 << 20);
    for len in [0, 1, 127, 128, 129, 5000, keys.len()] {
        let q = &keys[n as usize - len / 2..][..len];
        let mut out = vec![false; len];
        fuse.contains_batch(q, &mut out).unwrap();
        assert!(
            q.iter().zip(&out).all(|(k, &o)| o == fuse.contains(k)),
            "{len}"
        );
        let mut got = vec![None; len];
        bloomier.get_batch(q, &mut got).unwrap();
        assert!(
            q.iter().zip(&got).all(|(k, &g)| g == bloomier.get(k)),
            "{len}"
        );
    }
}

/// The batch lookups answer exactly as the single ones (members, values and false
/// positives alike), for owned filters and views, every Bloomier cell reader (8, 16 and
/// 32-bit cells, unaligned widths up to 56 bits, wider packed ones), keys and hashes; a
/// length mismatch is an error that leaves `out` untouched.
#[test]
fn batches_answer_as_single_lookups() {
    use bloomforge_retrieval::{BinaryFuseFilterView, BloomierFilterView, XorFilterView};
    use std::hash::BuildHasher;
    let n = 3000u64;
    // Members and non-members, interleaved, more than one block of 64.
    let keys: Vec<u64> = (0..2 * n).map(|i| i * 0x9e37_79b9 + 1).collect();
    let members = &keys[..n as usize];
    let mut out = vec![false; keys.len()];

    let fuse = BinaryFuseFilter::<u8>::build_from(members, 5).unwrap();
    fuse.contains_batch(&keys, &mut out).unwrap();
    assert!(keys.iter().zip(&out).all(|(k, &o)| o == fuse.contains(k)));
    assert!(out[..n as usize].iter().all(|&o| o));
    let hashes: Vec<u64> = keys.iter().map(|k| fuse.hasher().hash_one(k)).collect();
    let mut by_hash = vec![false; keys.len()];
    fuse.contains_hash_batch(&hashes, &mut by_hash).unwrap();
    assert_eq!(by_hash, out);
    let fb = fuse.to_bytes();
    let view = BinaryFuseFilterView::<u8>::from_bytes(&fb).unwrap();
    let mut from_view = vec![false; keys.len()];
    view.contains_batch(&keys, &mut from_view).unwrap();
    assert_eq!(from_view, out);

    let xor = XorFilter::<u16>::build_from(members, 6).unwrap();
    xor.contains_batch(&keys, &mut out).unwrap();
    assert!(keys.iter().zip(&out).all(|(k, &o)| o == xor.contains(k)));
    let xb = xor.to_bytes();
    let mut shifted = vec![0u8; 1];
    shifted.extend_from_slice(&xb);
    let view = XorFilterView::<u16>::from_bytes(&shifted[1..]).unwrap();
    view.contains_batch(&keys, &mut from_view).unwrap();
    assert_eq!(from_view, out);

    let mut short = vec![true; 3];
    assert!(matches!(
        fuse.contains_batch(&keys, &mut short),
        Err(RetrievalError::Core(
            bloomforge_core::Error::LengthMismatch { .. }
        ))
    ));
    assert_eq!(short, vec![true; 3]);

    for (v, f) in [(4, 4), (8, 8), (16, 16), (7, 5), (20, 20), (32, 28)] {
        let pairs: Vec<(u64, u32)> = members
            .iter()
            .map(|&k| (k, (k % (1u64 << v.min(31))) as u32))
            .collect();
        let map = BloomierFilter::build(&pairs, v, f).unwrap();
        let mut got = vec![None; keys.len()];
        map.get_batch(&keys, &mut got).unwrap();
        for (k, g) in keys.iter().zip(&got) {
            assert_eq!(*g, map.get(k), "{v}+{f} bits, key {k}");
        }
        for ((k, val), g) in pairs.iter().zip(&got) {
            assert_eq!(*g, Some(*val), "{v}+{f} bits, member {k}");
        }
        let hashes: Vec<u64> = keys.iter().map(|k| map.hasher().hash_one(k)).collect();
        let mut by_hash = vec![None; keys.len()];
        map.get_hash_batch(&hashes, &mut by_hash).unwrap();
        assert_eq!(by_hash, got);
        let bytes = map.to_bytes();
        let mut shifted = vec![0u8; 1];
        shifted.extend_from_slice(&bytes);
        let view = BloomierFilterView::from_bytes(&shifted[1..]).unwrap();
        let mut from_view = vec![None; keys.len()];
        view.get_batch(&keys, &mut from_view).unwrap();
        assert_eq!(from_view, got, "{v}+{f} bits, view");
        let mut short = vec![Some(9); 2];
        assert!(view.get_batch(&keys, &mut short).is_err());
        assert_eq!(short, vec![Some(9); 2]);
    }
}
