//! Error paths and edge cases on tiny tables: full buckets, saturated counters, absent
//! keys, invalid parameters. Every failed operation must leave the filter unchanged.

use crate::common;

use bloomforge_core::{Count, RemoveOutcome};
use bloomforge_core::{Filter, KeyedHasher};
use bloomforge_dleft::{Backend, DLeftCountingBloomFilter, DLeftError};
use common::{build, keys};

/// Keys whose true fingerprints are pairwise distinct in `f`.
fn distinct_fingerprints(f: &DLeftCountingBloomFilter, n: usize) -> Vec<u64> {
    let mut seen = std::collections::HashSet::new();
    keys(7, 10_000)
        .into_iter()
        .filter(|k| seen.insert(f.fingerprint(k)))
        .take(n)
        .collect()
}

#[test]
fn bucket_full_leaves_the_filter_unchanged() {
    for backend in Backend::available() {
        // One subtable, one bucket, two cells: the third distinct fingerprint fails.
        let mut f = build(1, 1, 2, 10, 2, 3);
        f.set_backend(backend).unwrap();
        let ks = distinct_fingerprints(&f, 3);
        assert_eq!(f.insert(&ks[0]), Ok(false));
        assert_eq!(f.insert(&ks[1]), Ok(false));
        let before = f.clone();
        assert_eq!(f.insert(&ks[2]), Err(DLeftError::BucketFull));
        assert!(f == before, "BucketFull changed the filter");
        assert!(!f.contains(&ks[2]));
        // A stored fingerprint still counts up when its buckets are full.
        assert_eq!(f.insert(&ks[0]), Ok(true));
        assert_eq!(f.count(&ks[0]).get(), 2);
        assert_eq!(f.len(), 3);
        // Freeing a cell makes room again.
        f.remove(&ks[1]).unwrap();
        assert_eq!(f.insert(&ks[2]), Ok(false));
        f.validate().unwrap();
    }
}

#[test]
fn all_d_buckets_must_be_full() {
    // d = 3 subtables of one bucket with one cell each: three distinct fingerprints fit,
    // one per subtable, leftmost first; the fourth fails.
    let mut f = build(3, 1, 1, 12, 2, 5);
    let ks = distinct_fingerprints(&f, 4);
    for (i, k) in ks[..3].iter().enumerate() {
        assert_eq!(f.insert(k), Ok(false));
        let (subtable, bucket, cell) = f.locate_cell_of_hash(f.hash_key(k)).unwrap();
        assert_eq!(
            (subtable, bucket, cell),
            (i, 0, 0),
            "least loaded, leftmost on ties"
        );
    }
    let before = f.clone();
    assert_eq!(f.insert(&ks[3]), Err(DLeftError::BucketFull));
    assert!(f == before);
}

#[test]
fn ties_go_left_and_loads_balance() {
    // d = 2, one bucket each, 4 cells: placements alternate 0, 1, 0, 1, ...
    let mut f = build(2, 1, 4, 12, 2, 8);
    let ks = distinct_fingerprints(&f, 8);
    for (i, k) in ks.iter().enumerate() {
        f.insert(k).unwrap();
        let (subtable, _, _) = f.locate_cell_of_hash(f.hash_key(k)).unwrap();
        assert_eq!(subtable, i % 2, "key {i}");
    }
    assert_eq!(f.load_histogram(), vec![0, 0, 0, 0, 2]);
    assert_eq!(
        f.load_histogram_per_subtable(),
        vec![vec![0, 0, 0, 0, 1]; 2]
    );
}

#[test]
fn saturated_counters_stick() {
    for c in [1u32, 2, 3] {
        let max = (1u64 << c) - 1;
        let mut f = build(4, 16, 8, 12, c, 1);
        let k = 12345u64;
        for i in 1..=max + 2 {
            assert_eq!(f.insert(&k), Ok(i > 1));
            let want = if i >= max {
                Count::AtLeast(max)
            } else {
                Count::Exact(i)
            };
            assert_eq!(f.count(&k), want, "c={c} after {i} inserts");
        }
        assert_eq!(f.saturated_cells(), 1);
        // Removes succeed but never decrement or free a saturated cell.
        for _ in 0..max + 5 {
            assert_eq!(f.remove(&k), Ok(RemoveOutcome::Saturated));
            assert_eq!(f.count(&k), Count::AtLeast(max));
            assert!(f.contains(&k));
        }
        assert_eq!(f.len(), 0);
        assert_eq!(f.occupied_cells(), 1);
        f.validate().unwrap();
    }
}

#[test]
fn counters_count_up_and_down() {
    let mut f = build(4, 16, 8, 12, 3, 1);
    let k = "key";
    for i in 1..=6u64 {
        f.insert(&k).unwrap();
        assert_eq!(f.count(&k).get(), i);
    }
    for i in (0..6u64).rev() {
        f.remove(&k).unwrap();
        assert_eq!(f.count(&k).get(), i);
    }
    assert!(!f.contains(&k));
    assert!(f.is_empty());
    assert_eq!(f.remove(&k), Err(DLeftError::NotPresent));
}

#[test]
fn not_present_leaves_the_filter_unchanged() {
    let mut f = build(4, 64, 8, 16, 2, 9);
    for k in keys(1, 500) {
        f.insert(&k).unwrap();
    }
    let before = f.clone();
    let mut failures = 0;
    for k in keys(2, 500) {
        if f.count(&k).get() == 0 {
            assert_eq!(f.remove(&k), Err(DLeftError::NotPresent));
            failures += 1;
        }
    }
    assert!(failures > 400);
    assert!(f == before);
}

fn invalid(result: Result<DLeftCountingBloomFilter, DLeftError>, param: &str) {
    match result {
        Err(DLeftError::InvalidParameter { name, .. }) => assert_eq!(name, param),
        other => panic!("{param}: expected InvalidParameter, got {other:?}"),
    }
}

#[test]
fn parameters_are_validated() {
    let b = DLeftCountingBloomFilter::builder;
    invalid(b().subtables(0).build(), "subtables");
    invalid(b().subtables(9).build(), "subtables");
    invalid(b().buckets_per_subtable(0).build(), "buckets_per_subtable");
    invalid(b().cells_per_bucket(0).build(), "cells_per_bucket");
    invalid(b().cells_per_bucket(17).build(), "cells_per_bucket");
    invalid(b().counter_bits(0).build(), "counter_bits");
    invalid(b().counter_bits(9).build(), "counter_bits");
    invalid(b().remainder_bits(0).build(), "remainder_bits");
    invalid(
        b().remainder_bits(31).counter_bits(2).build(),
        "remainder_bits",
    );
    // q + r <= 64: B 2^r must not exceed 2^64.
    invalid(
        b().buckets_per_subtable(1 << 40)
            .remainder_bits(25)
            .counter_bits(2)
            .build(),
        "buckets_per_subtable",
    );
    invalid(
        b().buckets_per_subtable(u64::MAX).remainder_bits(1).build(),
        "buckets_per_subtable",
    );
    // Valid extremes build.
    assert!(b().remainder_bits(30).counter_bits(2).build().is_ok());
    assert!(b()
        .remainder_bits(24)
        .counter_bits(8)
        .cells_per_bucket(16)
        .build()
        .is_ok());
    assert!(b()
        .remainder_bits(1)
        .counter_bits(1)
        .cells_per_bucket(1)
        .subtables(1)
        .buckets_per_subtable(1)
        .build()
        .is_ok());
    assert!(b().subtables(8).cells_per_bucket(16).build().is_ok());
    // Too large for the address space.
    assert!(matches!(
        b().subtables(8)
            .buckets_per_subtable(1 << 60)
            .remainder_bits(4)
            .build(),
        Err(DLeftError::Core(bloomforge_core::Error::TooLarge { .. }))
    ));

    let fp = DLeftCountingBloomFilter::with_false_pos;
    for p in [0.0, 1.0, -0.5, f64::NAN, 2.0] {
        assert!(matches!(
            fp(p).expected_items(100),
            Err(DLeftError::Core(
                bloomforge_core::Error::InvalidFalsePositiveRate(_)
            ))
        ));
    }
    assert!(matches!(
        fp(0.01).expected_items(0),
        Err(DLeftError::Core(bloomforge_core::Error::ZeroItems))
    ));
    invalid(fp(0.01).subtables(0).expected_items(10), "subtables");
    invalid(
        fp(0.01).cells_per_bucket(20).expected_items(10),
        "cells_per_bucket",
    );
    invalid(fp(0.01).counter_bits(0).expected_items(10), "counter_bits");
    for load in [0.0, -1.0, f64::NAN, f64::INFINITY, 8.5] {
        assert!(matches!(
            fp(0.01).target_load(load).expected_items(10),
            Err(DLeftError::InvalidTargetLoad { .. })
        ));
    }
    invalid(fp(1e-300).expected_items(u64::MAX), "expected_items");
    let r = fp(0.5).expected_items(1 << 62);
    assert!(
        matches!(
            r,
            Err(DLeftError::Core(
                bloomforge_core::Error::TooLarge { .. }
                    | bloomforge_core::Error::AllocationFailed { .. }
            ))
        ),
        "{r:?}"
    );
}

#[test]
fn batch_length_mismatch_and_agreement() {
    let mut f = DLeftCountingBloomFilter::with_false_pos(0.01)
        .expected_items(5000)
        .unwrap();
    let present = keys(3, 5000);
    for k in &present {
        f.insert(k).unwrap();
    }
    let mut out = vec![false; 3];
    assert!(matches!(
        f.contains_batch(&present[..4], &mut out),
        Err(DLeftError::Core(bloomforge_core::Error::LengthMismatch {
            keys: 4,
            out: 3
        }))
    ));
    let queries: Vec<u64> = present.iter().copied().chain(keys(4, 5000)).collect();
    for backend in Backend::available() {
        f.set_backend(backend).unwrap();
        let mut out = vec![false; queries.len()];
        f.contains_batch(&queries, &mut out).unwrap();
        for (k, &got) in queries.iter().zip(&out) {
            assert_eq!(got, f.contains(k));
        }
        assert!(out[..5000].iter().all(|&b| b));
        for n in [0, 1, 7, 8, 9, 300] {
            let hs: Vec<u64> = queries[..n].iter().map(|k| f.hash_key(k)).collect();
            let mut out = vec![false; n];
            f.contains_hash_batch(&hs, &mut out).unwrap();
            assert!(hs.iter().zip(&out).all(|(&h, &b)| b == f.contains_hash(h)));
        }
    }
}

#[test]
fn filter_trait_custom_hasher_and_threads() {
    // `bits`: the filter's own `memory_bits`, which the trait must report.
    fn use_filter<F: Filter<str, InsertError = DLeftError>>(f: &mut F, bits: u64) {
        assert_eq!(f.insert("a"), Ok(false));
        assert_eq!(f.insert("a"), Ok(true));
        assert!(f.contains("a"));
        assert_eq!(f.memory_bits(), bits);
        assert!(f.expected_false_pos() > 0.0);
    }
    let mut f = DLeftCountingBloomFilter::with_false_pos(0.01)
        .expected_items(100)
        .unwrap();
    let bits = DLeftCountingBloomFilter::memory_bits(&f);
    assert!(bits >= 8 * 100, "{bits}");
    use_filter(&mut f, bits);
    let mut g = DLeftCountingBloomFilter::builder()
        .hasher(KeyedHasher::with_key([1, 2, 3, 4]))
        .build()
        .unwrap();
    let bits = DLeftCountingBloomFilter::memory_bits(&g);
    assert!(bits >= 8 * 100, "{bits}");
    use_filter(&mut g, bits);
    let mut h = DLeftCountingBloomFilter::with_false_pos(0.01)
        .seed(3)
        .hasher(KeyedHasher::with_key([5, 6, 7, 8]))
        .expected_items(100)
        .unwrap();
    let bits = DLeftCountingBloomFilter::memory_bits(&h);
    assert!(bits >= 8 * 100, "{bits}");
    use_filter(&mut h, bits);

    fn assert_sync<T: Send + Sync>(_: &T) {}
    assert_sync(&f);
    // Concurrent reads through `&self`.
    let ks = keys(9, 2000);
    let mut f = DLeftCountingBloomFilter::with_false_pos(0.01)
        .expected_items(2000)
        .unwrap();
    for k in &ks {
        f.insert(k).unwrap();
    }
    std::thread::scope(|s| {
        for t in 0..2 {
            let (f, ks) = (&f, &ks);
            s.spawn(move || {
                for k in ks.iter().skip(t) {
                    assert!(f.contains(k) && f.count(k).get() >= 1);
                }
            });
        }
    });
}

#[test]
fn clear_and_reports() {
    let mut f = DLeftCountingBloomFilter::with_false_pos(0.01)
        .expected_items(1000)
        .unwrap();
    assert!(f.bits_per_key().is_infinite());
    for k in keys(5, 1000) {
        f.insert(&k).unwrap();
    }
    assert_eq!(f.len(), 1000);
    assert!((f.bits_per_key() - f.memory_bits() as f64 / 1000.0).abs() < 1e-9);
    assert!(f.expected_false_pos() <= 0.01);
    assert!(f.realized_false_pos() <= f.expected_false_pos() * 1.01);
    // Inserting the same keys again doubles `len` but not the stored fingerprints, so
    // the expected FP of the contents does not move.
    let once = f.expected_false_pos();
    for k in keys(5, 1000) {
        f.insert(&k).unwrap();
    }
    assert_eq!(f.len(), 2000);
    assert_eq!(f.expected_false_pos(), once);
    for k in keys(5, 1000) {
        f.remove(&k).unwrap();
    }
    assert_eq!(
        f.load_histogram().iter().sum::<u64>(),
        u64::from(f.subtables()) * f.buckets_per_subtable()
    );
    let cells: u64 = f
        .load_histogram()
        .iter()
        .enumerate()
        .map(|(i, &n)| i as u64 * n)
        .sum();
    assert_eq!(cells, f.occupied_cells());
    assert!(f.allocated_bytes() as u64 * 8 > f.memory_bits());
    let dbg = format!("{f:?}");
    assert!(dbg.contains("DLeftCountingBloomFilter") && dbg.contains("len: 1000"));
    f.clear();
    assert!(f.is_empty() && f.occupied_cells() == 0);
    assert_eq!(
        f.load_histogram()[0],
        u64::from(f.subtables()) * f.buckets_per_subtable()
    );
    f.validate().unwrap();
}

#[test]
fn batches_are_all_or_nothing() {
    for backend in Backend::available() {
        // Batch == sequential when everything fits.
        let ks = keys(11, 3000);
        let mut a = DLeftCountingBloomFilter::with_false_pos(0.01)
            .expected_items(3000)
            .unwrap();
        let mut b = a.clone();
        a.set_backend(backend).unwrap();
        b.set_backend(backend).unwrap();
        a.insert_batch(&ks).unwrap();
        for k in &ks {
            b.insert(k).unwrap();
        }
        assert!(a == b);
        a.remove_batch(&ks[..1000]).unwrap();
        for k in &ks[..1000] {
            b.remove(k).unwrap();
        }
        assert!(a == b);
        a.validate().unwrap();

        // A batch that overflows a tiny table is rolled back completely, including a
        // counter it had saturated (sticky counters cannot be undone by `remove`).
        let mut f = build(1, 1, 2, 10, 2, 3);
        f.set_backend(backend).unwrap();
        let ks = distinct_fingerprints(&f, 3);
        f.insert(&ks[0]).unwrap();
        f.insert(&ks[0]).unwrap();
        let before = f.clone();
        let batch = [ks[0], ks[1], ks[1], ks[2]]; // ks[0] saturates; ks[2] does not fit
        assert_eq!(
            f.insert_batch(&batch),
            Err(DLeftError::BatchFailed {
                index: 3,
                error: Box::new(DLeftError::BucketFull)
            })
        );
        assert!(f == before, "failed insert_batch changed the filter");
        assert_eq!(f.count(&ks[0]).get(), 2);
        // Removal batch with an absent key in the middle: rolled back.
        let before = f.clone();
        let r = f.remove_batch(&[ks[0], ks[0], ks[1]]);
        assert_eq!(
            r,
            Err(DLeftError::BatchFailed {
                index: 2,
                error: Box::new(DLeftError::NotPresent)
            })
        );
        assert!(f == before, "failed remove_batch changed the filter");
        assert_eq!(f.insert_batch::<u64>(&[]), Ok(()));
        assert_eq!(f.remove_hash_batch(&[]), Ok(()));
        f.validate().unwrap();
    }
}

/// A remove batch that fails at its last key is rolled back exactly, after freeing cells
/// in every subtable and at every cell position (freed cells are journalled compactly and
/// restored from the key's hash): `d` = 4 and 8, `w` = 8 and 16, power-of-two and
/// general bucket counts, keys inserted once (their removal frees the cell) and twice.
#[test]
fn failed_remove_batch_restores_freed_cells() {
    for backend in Backend::available() {
        for (d, b, w) in [(4, 64, 8), (8, 48, 16), (4, 100, 8), (2, 32, 16)] {
            let mut f = build(d, b, w, 8, 3, 5);
            f.set_backend(backend).unwrap();
            let resident = keys(21, (d as usize) * (b as usize) * (w as usize) / 2);
            let mut inserted = Vec::new();
            for (n, k) in resident.iter().enumerate() {
                if f.insert(k).is_ok() {
                    inserted.push(*k);
                    if n % 3 == 0 && f.insert(k).is_ok() {
                        inserted.push(*k);
                    }
                }
            }
            let absent = keys(22, 1000)
                .into_iter()
                .find(|k| !f.contains(k))
                .expect("an absent key");
            let before = f.clone();
            let mut batch = inserted.clone();
            batch.push(absent);
            assert_eq!(
                f.remove_batch(&batch),
                Err(DLeftError::BatchFailed {
                    index: inserted.len(),
                    error: Box::new(DLeftError::NotPresent)
                })
            );
            assert!(
                f == before,
                "failed remove_batch changed the filter ({d}, {b}, {w})"
            );
            f.validate().unwrap();
            // And without the absent key it empties the filter.
            f.remove_batch(&inserted).unwrap();
            assert!(f.is_empty() && f.occupied_cells() == 0);
        }
    }
}

/// Tables from 12 MiB on prefetch 64 keys ahead in their batch loops (8 below): batches
/// there still equal the keys one by one, on every backend, including batches shorter
/// than that distance.
#[test]
fn batches_of_a_large_table_equal_one_by_one() {
    let members = keys(41, 200_000);
    let others = keys(42, 50_000);
    common::assert_disjoint(&members, &others);
    for backend in Backend::available() {
        let mut batch = DLeftCountingBloomFilter::with_false_pos(0.01)
            .expected_items(5_000_000)
            .unwrap();
        assert!(
            batch.allocated_bytes() >= 12 << 20,
            "{}",
            batch.allocated_bytes()
        );
        batch.set_backend(backend).unwrap();
        let mut single = batch.clone();
        batch.insert_batch(&members[..30]).unwrap();
        batch.insert_batch(&members[30..]).unwrap();
        for k in &members {
            single.insert(k).unwrap();
        }
        assert!(batch.to_bytes() == single.to_bytes(), "{backend:?}");
        let queries: Vec<u64> = members.iter().chain(&others).copied().collect();
        let mut out = vec![false; queries.len()];
        batch.contains_batch(&queries, &mut out).unwrap();
        assert!(queries
            .iter()
            .zip(&out)
            .all(|(k, &b)| b == single.contains(k)));
        assert!(out[..members.len()].iter().all(|&b| b));
        // Batches shorter than, as long as and just past the 64 keys located ahead.
        for n in [0, 1, 63, 64, 65] {
            let q = &queries[members.len() - n / 2..][..n];
            let mut out = vec![false; n];
            batch.contains_batch(q, &mut out).unwrap();
            assert!(
                q.iter().zip(&out).all(|(k, &b)| b == single.contains(k)),
                "{n}"
            );
        }
        batch.remove_batch(&members[..100_000]).unwrap();
        for k in &members[..100_000] {
            single.remove(k).unwrap();
        }
        assert!(batch.to_bytes() == single.to_bytes(), "{backend:?}");
    }
}
