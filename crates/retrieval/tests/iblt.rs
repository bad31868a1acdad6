//! The IBLT against `HashSet` models.

use std::collections::HashSet;
use std::hash::BuildHasher;

use bloomforge_retrieval::{Iblt, RetrievalError};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn sorted(set: &HashSet<u64>) -> Vec<u64> {
    let mut v: Vec<u64> = set.iter().copied().collect();
    v.sort_unstable();
    v
}

proptest! {
    // Fixed seed: the cases (and so the key hashes) are the same on every run.
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: RngSeed::Fixed(0x1b17), ..ProptestConfig::default() })]

    /// Two sets sharing most keys: the subtraction lists exactly the symmetric difference.
    #[test]
    fn subtract_lists_the_symmetric_difference(
        common in prop::collection::hash_set(any::<u64>(), 0..2000),
        only_a in prop::collection::hash_set(any::<u64>(), 0..40),
        only_b in prop::collection::hash_set(any::<u64>(), 0..40),
    ) {
        let only_a: HashSet<u64> = only_a.difference(&common).copied().collect();
        let only_b: HashSet<u64> = only_b.difference(&common).filter(|k| !only_a.contains(k)).copied().collect();
        // 80 differing entries at most, in a table sized for 200 (330 cells). Two entries
        // sharing all three cells (about 2e-3 per case at 80 entries) would stall decoding;
        // the fixed seed makes the cases, and so the outcome, the same on every run.
        let mut a = Iblt::with_expected_diff(200).unwrap();
        let mut b = Iblt::with_expected_diff(200).unwrap();
        for k in common.iter().chain(&only_a) { a.insert(k); }
        for k in common.iter().chain(&only_b) { b.insert(k); }
        let h = a.hasher();
        let (pa, pb) = a.subtract(&b).unwrap().list_entries().unwrap();
        let want_a: HashSet<u64> = only_a.iter().map(|k| h.hash_one(k)).collect();
        let want_b: HashSet<u64> = only_b.iter().map(|k| h.hash_one(k)).collect();
        prop_assert_eq!(pa, sorted(&want_a));
        prop_assert_eq!(pb, sorted(&want_b));
    }

    /// Inserts and removes on one table leave exactly the model's net entries.
    #[test]
    fn insert_remove_match_a_model(ops in prop::collection::vec((any::<bool>(), 0u64..300), 0..400)) {
        let mut t = Iblt::with_cells(2000, 9).unwrap();
        let mut net: std::collections::HashMap<u64, i64> = Default::default();
        for (ins, k) in ops {
            if ins { t.insert_hash(k); *net.entry(k).or_default() += 1; }
            else { t.remove_hash(k); *net.entry(k).or_default() -= 1; }
        }
        let listable = net.values().all(|c| c.abs() <= 1);
        let res = t.list_entries();
        if listable {
            let (p, n) = res.unwrap();
            let want_p: HashSet<u64> = net.iter().filter(|(_, c)| **c == 1).map(|(k, _)| *k).collect();
            let want_n: HashSet<u64> = net.iter().filter(|(_, c)| **c == -1).map(|(k, _)| *k).collect();
            prop_assert_eq!(p, sorted(&want_p));
            prop_assert_eq!(n, sorted(&want_n));
        }
        prop_assert_eq!(t.is_empty(), net.values().all(|c| *c == 0));
    }
}

#[test]
fn overload_is_a_typed_error_and_mismatches_are_refused() {
    let mut t = Iblt::with_expected_diff(10).unwrap();
    for k in 0..1000u64 {
        t.insert_hash(k);
    }
    assert!(matches!(
        t.list_entries(),
        Err(RetrievalError::DecodeFailed { .. })
    ));
    let other = Iblt::with_expected_diff(11).unwrap();
    assert!(matches!(
        t.subtract(&other),
        Err(RetrievalError::Mismatch {
            what: "cell count",
            ..
        })
    ));
    let seeded = Iblt::with_cells(t.cells(), 1).unwrap();
    assert!(matches!(
        t.subtract(&seeded),
        Err(RetrievalError::Mismatch {
            what: "hasher fingerprint (seed or key)",
            ..
        })
    ));
    assert!(Iblt::with_expected_diff(0).is_err());
}

#[test]
fn round_trip_and_corrupt_bytes() {
    let mut t = Iblt::with_expected_diff(50).unwrap();
    for k in 0..40u64 {
        t.insert(&k);
    }
    let bytes = t.to_bytes();
    let back = Iblt::from_bytes(&bytes).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.list_entries().unwrap(), t.list_entries().unwrap());
    for cut in [0, 30, 64, 79, bytes.len() - 1] {
        assert!(Iblt::from_bytes(&bytes[..cut]).is_err());
    }
    for at in [64, 68, 72] {
        let mut bad = bytes.clone();
        bad[at] ^= 1;
        bloomforge_core::format::reseal(&mut bad);
        assert!(Iblt::from_bytes(&bad).is_err(), "flip at {at}");
    }
}

/// Decoded cells are untrusted: extreme counts (which once overflowed the peeling bound)
/// and "pure" cells whose key does not map to them list to an entry set or a typed error,
/// promptly, never a panic or an endless peel. (Found by the `families` fuzz target.)
#[test]
fn hostile_cells_list_without_panic() {
    let mut t = Iblt::with_cells(30, 3).unwrap();
    for k in 0..12u64 {
        t.insert(&k);
    }
    let bytes = t.to_bytes();
    // Cells start after the 64-byte header and the 16-byte IBLT head: count, key sum,
    // check sum (8 bytes each).
    let cell = |i: usize| 64 + 16 + 24 * i;
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for case in 0..2000 {
        let mut bad = bytes.clone();
        for _ in 0..1 + case % 6 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (rng >> 33) as usize % 30;
            let v: i64 = [i64::MIN, i64::MAX, 1, -1, 0, (rng >> 7) as i64][(rng >> 3) as usize % 6];
            bad[cell(i)..cell(i) + 8].copy_from_slice(&v.to_le_bytes());
            if rng & 1 == 0 {
                // A key sum with its own check: a "pure"-looking cell, maybe in the wrong place.
                let key = rng >> 11;
                let other = (i + 1 + (rng >> 40) as usize % 29) % 30;
                let mut src = Iblt::with_cells(30, 3).unwrap();
                src.insert_hash(key);
                let enc = src.to_bytes();
                let hit = (0..30)
                    .find(|&j| enc[cell(j)..cell(j) + 8] != [0; 8])
                    .unwrap();
                bad[cell(other) + 8..cell(other) + 24]
                    .copy_from_slice(&enc[cell(hit) + 8..cell(hit) + 24]);
            }
        }
        bloomforge_core::format::reseal(&mut bad);
        let u = Iblt::from_bytes(&bad).unwrap();
        let _ = u.list_entries();
    }
}

/// `new`, the builder and `with_expected_diff` agree; `collect` / `extend` build tables
/// whose difference lists exactly the model's.
#[test]
fn new_builder_collect_and_extend() {
    assert_eq!(
        Iblt::new(300).unwrap(),
        Iblt::with_expected_diff(300).unwrap()
    );
    assert_eq!(
        Iblt::builder().expected_diff(300).seed(4).build().unwrap(),
        Iblt::with_cells(Iblt::new(300).unwrap().cells(), 4).unwrap()
    );
    assert_eq!(Iblt::builder().cells(100).build().unwrap().cells(), 102);
    for bad in [
        Iblt::new(0),
        Iblt::builder().build(),
        Iblt::builder().cells(0).build(),
    ] {
        assert!(matches!(bad, Err(RetrievalError::Core(_))));
    }
    let a: Iblt = (0..5000u64).collect();
    let mut b: Iblt = (10..4000u64).collect();
    b.extend([9_000_000u64, 9_000_001]);
    let (only_a, only_b) = a.subtract(&b).unwrap().list_entries().unwrap();
    let h = a.hasher();
    let want = |keys: &mut dyn Iterator<Item = u64>| {
        let mut v: Vec<u64> = keys.map(|k| h.hash_one(k)).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(only_a, want(&mut (0..10u64).chain(4000..5000)));
    assert_eq!(only_b, want(&mut [9_000_000u64, 9_000_001].into_iter()));
}

/// The nominal size decodes: `with_expected_diff(d)`-sized tables (2000 seeds each) list
/// a difference of d random entries. The decode table of `docs/guide/retrieval.md`
/// measures >= 99.7 % at these sizes; if the true rate were only 99.5 %, the failures
/// would be Binomial(2000, 0.005) (mean 10), above 30 with probability below 1e-6
/// (Chernoff), so more than 30 failures means the sizing is wrong, not bad luck (seeds
/// fixed: the test is deterministic).
#[test]
fn nominal_size_decodes_small_differences() {
    for d in [2usize, 10, 30, 100] {
        let cells = Iblt::with_expected_diff(d).unwrap().cells();
        let mut failures = 0;
        for seed in 0..2000u64 {
            let mut t = Iblt::with_cells(cells, seed).unwrap();
            for i in 0..d as u64 {
                t.insert_hash(bloomforge_core::hash::mix64(i ^ (seed << 32) ^ 0x5151));
            }
            match t.list_entries() {
                Ok((pos, neg)) => assert_eq!((pos.len(), neg.len()), (d, 0)),
                Err(_) => failures += 1,
            }
        }
        assert!(
            failures <= 30,
            "d = {d}: {failures} of 2000 tables did not decode"
        );
    }
}
