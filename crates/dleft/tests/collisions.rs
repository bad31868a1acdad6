//! The seed scenario: with permutation fingerprints, two keys share a
//! (subtable, bucket, remainder) cell exactly when their true fingerprints are equal,
//! so deleting one key can never take away another key's cell. Tiny remainders force
//! thousands of fingerprint collisions; deletions run in adversarial orders.

use crate::common;

use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};
use common::{build, keys};
use std::collections::HashMap;

/// Inserts `keys` (skipping those that find all buckets full) and returns the inserted
/// ones.
fn fill(f: &mut DLeftCountingBloomFilter, keys: &[u64]) -> Vec<u64> {
    let mut inserted = Vec::new();
    for &k in keys {
        match f.insert(&k) {
            Ok(_) => inserted.push(k),
            Err(DLeftError::BucketFull) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    inserted
}

/// Cells are shared exactly by keys with equal true fingerprints.
fn check_cells(f: &DLeftCountingBloomFilter, resident: &[u64]) {
    let mut cell_of_fp = HashMap::new();
    let mut fp_of_cell = HashMap::new();
    for &k in resident {
        let h = f.hash_key(&k);
        let fp = f.fingerprint_of_hash(h);
        let cell = f.locate_cell_of_hash(h).expect("resident key has a cell");
        assert_eq!(
            *cell_of_fp.entry(fp).or_insert(cell),
            cell,
            "one fingerprint, two cells"
        );
        assert_eq!(
            *fp_of_cell.entry(cell).or_insert(fp),
            fp,
            "one cell, two fingerprints"
        );
    }
    f.validate().unwrap();
}

/// Deletes `order` one by one; after each deletion every remaining key is still found.
fn delete_in_order(f: &mut DLeftCountingBloomFilter, resident: &[u64], order: &[usize]) {
    let mut alive = vec![true; resident.len()];
    for (step, &i) in order.iter().enumerate() {
        f.remove(&resident[i]).expect("resident key removes");
        alive[i] = false;
        if step % 7 == 0 || step + 1 == order.len() {
            for (j, &k) in resident.iter().enumerate() {
                if alive[j] {
                    assert!(
                        f.contains(&k),
                        "false negative after {} deletions",
                        step + 1
                    );
                }
            }
            f.validate().unwrap();
        }
    }
}

fn scenarios(d: u32, b: u64, r: u32, c: u32, seed: u64) {
    let universe = b << r;
    // Three times as many keys as fingerprints: most fingerprints are shared.
    let ks = keys(seed, (3 * universe as usize).min(600));
    let mut f = build(d, b, 8, r, c, seed);
    let resident = fill(&mut f, &ks);
    assert!(
        resident.len() > ks.len() / 4,
        "too few keys fit: {}",
        resident.len()
    );
    check_cells(&f, &resident);
    let mut by_fp: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, &k) in resident.iter().enumerate() {
        by_fp.entry(f.fingerprint(&k)).or_default().push(i);
    }
    let shared = by_fp.values().filter(|v| v.len() > 1).count();
    assert!(
        shared * 4 > by_fp.len(),
        "collisions too rare: {shared} of {}",
        by_fp.len()
    );

    let n = resident.len();
    // 1. reverse insertion order; 2. insertion order; 3. round-robin over fingerprint
    // groups (one member of every colliding group, then the next...); 4. whole groups,
    // largest first; 5. a fixed pseudo-random permutation.
    let mut orders: Vec<Vec<usize>> = vec![(0..n).rev().collect(), (0..n).collect()];
    let mut groups: Vec<Vec<usize>> = by_fp.into_values().collect();
    groups.sort_by_key(|g| (std::cmp::Reverse(g.len()), g[0]));
    let depth = groups.iter().map(Vec::len).max().unwrap_or(0);
    orders.push(
        (0..depth)
            .flat_map(|l| groups.iter().filter_map(move |g| g.get(l).copied()))
            .collect(),
    );
    orders.push(groups.iter().flatten().copied().collect());
    let mut perm: Vec<usize> = (0..n).collect();
    let mut state = seed;
    for i in (1..n).rev() {
        state = bloomforge_core::hash::mix64(state.wrapping_add(i as u64));
        perm.swap(i, (state % (i as u64 + 1)) as usize);
    }
    orders.push(perm);
    for order in orders {
        assert_eq!(order.len(), n);
        let mut g = build(d, b, 8, r, c, seed);
        let again = fill(&mut g, &resident);
        assert_eq!(again.len(), n, "the same keys fit again");
        delete_in_order(&mut g, &resident, &order);
        // Everything removed, except fingerprints whose counters saturated (sticky).
        assert_eq!(g.len(), 0);
        assert_eq!(g.occupied_cells(), g.saturated_cells());
    }
}

#[test]
fn collisions_with_power_of_two_buckets() {
    for (r, seed) in [(1, 1u64), (2, 2), (3, 3), (4, 4)] {
        scenarios(4, 8, r, 3, seed);
    }
    scenarios(2, 4, 3, 4, 5);
}

#[test]
fn collisions_with_general_buckets() {
    for (r, seed) in [(1, 11u64), (2, 12), (3, 13), (4, 14)] {
        scenarios(4, 7, r, 3, seed);
    }
    scenarios(3, 10, 2, 2, 15);
}

/// Without the permutations (independent bucket and remainder hashes) two keys with
/// different fingerprints can share a cell, and deleting one makes the other vanish. The
/// filter never does that: here every pair of keys that share a cell has equal true
/// fingerprints, and `count` is the number of resident keys with that fingerprint.
#[test]
fn counts_are_per_true_fingerprint() {
    let mut f = build(4, 5, 8, 3, 4, 99);
    let ks = keys(42, 120);
    let resident = fill(&mut f, &ks);
    let mut per_fp: HashMap<u64, u64> = HashMap::new();
    for &k in &resident {
        *per_fp.entry(f.fingerprint(&k)).or_default() += 1;
    }
    for &k in &resident {
        let n = per_fp[&f.fingerprint(&k)];
        let want = if n >= 15 {
            bloomforge_core::Count::AtLeast(15)
        } else {
            bloomforge_core::Count::Exact(n)
        };
        assert_eq!(f.count(&k), want);
    }
    assert_eq!(f.occupied_cells(), per_fp.len() as u64);
}
