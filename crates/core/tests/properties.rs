//! Properties that must hold for every key, size and backend: no false negatives, every SIMD
//! backend bit-identical to the scalar oracle, batch calls identical to single calls, typed
//! errors on bad input.

use crate::common;

use bloomforge_core::*;
use common::SplitMix64;
use core::hash::BuildHasher;
use proptest::prelude::*;

fn blocked(bits: u64, k: u32, backend: Backend) -> BlockedBloomFilter {
    let mut f = BlockedBloomFilter::with_num_bits(bits).hashes(k).unwrap();
    f.set_backend(backend).unwrap();
    f
}

fn split(blocks: u64, backend: Backend) -> SplitBlockBloomFilter {
    let mut f = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
    f.set_backend(backend).unwrap();
    f
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_false_negatives(
        keys in proptest::collection::vec(any::<Vec<u8>>(), 0..300),
        bits in 1u64..50_000,
        k in 1u32..=64,
    ) {
        for backend in Backend::available() {
            let mut b = blocked(bits, k, backend);
            let mut s = split(bits.div_ceil(256), backend);
            let mut st = StandardBloomFilter::with_num_bits(bits).hashes(k).unwrap();
            for key in &keys {
                b.insert(key);
                s.insert(key);
                st.insert(key);
            }
            for key in &keys {
                prop_assert!(b.contains(key));
                prop_assert!(s.contains(key));
                prop_assert!(st.contains(key));
            }
            let mut atomic = AtomicBlockedBloomFilter::with_num_bits(bits).hashes(k).unwrap();
            atomic.set_backend(backend).unwrap();
            for key in &keys {
                atomic.insert(key);
            }
            prop_assert!(keys.iter().all(|key| atomic.contains(key)));
            prop_assert_eq!(atomic.into_inner(), b);
        }
    }

    #[test]
    fn strings_and_integers(keys in proptest::collection::vec(".*", 0..100), ints in proptest::collection::vec(any::<u64>(), 0..100)) {
        let mut f = BlockedBloomFilter::with_false_pos(0.01).expected_items(200).unwrap();
        f.extend(keys.iter().map(String::as_str));
        f.extend(ints.iter());
        prop_assert!(keys.iter().all(|k| f.contains(k.as_str())));
        prop_assert!(ints.iter().all(|k| f.contains(k)));
    }
}

/// Hashes that exercise edge positions: 0, all ones, single bits, and random.
fn edge_hashes(rng: &mut SplitMix64, n: usize) -> Vec<u64> {
    let mut v = vec![
        0,
        u64::MAX,
        1,
        1 << 63,
        u64::MAX >> 1,
        0xffff_ffff,
        0xffff_ffff_0000_0000,
    ];
    v.extend((0..64).map(|i| 1u64 << i));
    v.extend(rng.keys(n));
    v
}

#[test]
fn every_backend_matches_the_scalar_oracle() {
    let mut rng = SplitMix64::new(7);
    let hashes = edge_hashes(&mut rng, 5000);
    let probes = edge_hashes(&mut rng, 20_000);
    // 1 block (every key in one block), a few blocks, many; k from 1 to the maximum.
    for &bits in &[1u64, 512, 4096, 1 << 20] {
        for &k in &[1u32, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64] {
            let mut oracle = blocked(bits, k, Backend::Scalar);
            oracle.insert_hash_batch(&hashes);
            let oracle_answers: Vec<bool> =
                probes.iter().map(|&h| oracle.contains_hash(h)).collect();
            for backend in Backend::available() {
                let mut f = blocked(bits, k, backend);
                for &h in &hashes {
                    f.insert_hash(h);
                }
                assert_eq!(f.blocks(), oracle.blocks(), "{backend:?} bits={bits} k={k}");
                let answers: Vec<bool> = probes.iter().map(|&h| f.contains_hash(h)).collect();
                assert_eq!(answers, oracle_answers, "{backend:?} bits={bits} k={k}");
                let atomic = AtomicBlockedBloomFilter::from(blocked(bits, k, backend));
                for &h in &hashes {
                    atomic.insert_hash(h);
                }
                let answers: Vec<bool> = probes.iter().map(|&h| atomic.contains_hash(h)).collect();
                assert_eq!(
                    answers, oracle_answers,
                    "atomic {backend:?} bits={bits} k={k}"
                );
                let atomic = atomic.into_inner();
                assert_eq!(
                    atomic.blocks(),
                    oracle.blocks(),
                    "atomic {backend:?} bits={bits} k={k}"
                );
            }
        }
        let blocks = bits.div_ceil(256);
        let mut oracle = split(blocks, Backend::Scalar);
        oracle.insert_hash_batch(&hashes);
        let oracle_answers: Vec<bool> = probes.iter().map(|&h| oracle.contains_hash(h)).collect();
        for backend in Backend::available() {
            let mut f = split(blocks, backend);
            for &h in &hashes {
                f.insert_hash(h);
            }
            assert_eq!(f.blocks(), oracle.blocks(), "{backend:?} blocks={blocks}");
            let answers: Vec<bool> = probes.iter().map(|&h| f.contains_hash(h)).collect();
            assert_eq!(answers, oracle_answers, "{backend:?}");
            let atomic = AtomicSplitBlockBloomFilter::from(split(blocks, backend));
            for &h in &hashes {
                atomic.insert_hash(h);
            }
            let answers: Vec<bool> = probes.iter().map(|&h| atomic.contains_hash(h)).collect();
            assert_eq!(
                answers, oracle_answers,
                "atomic {backend:?} blocks={blocks}"
            );
            let atomic = atomic.into_inner();
            assert_eq!(
                atomic.blocks(),
                oracle.blocks(),
                "atomic {backend:?} blocks={blocks}"
            );
        }
    }
}

#[test]
fn all_ones_and_empty_filters() {
    let mut rng = SplitMix64::new(11);
    let probes = rng.keys(2000);
    // The log says which kernels the machine running the tests checked against the oracle
    // (an AVX2-only CI machine cannot run the AVX-512 ones).
    eprintln!("backends exercised: {:?}", Backend::available());
    for backend in Backend::available() {
        let empty = blocked(4096, 64, backend);
        assert!(probes.iter().all(|&h| !empty.contains_hash(h)));
        let full = BlockedBloomFilter::from_blocks(
            vec![
                Block512 {
                    words: [u64::MAX; 8]
                };
                8
            ],
            64,
            DefaultHasher::default(),
        )
        .map(|mut f| {
            f.set_backend(backend).unwrap();
            f
        })
        .unwrap();
        assert!(probes.iter().all(|&h| full.contains_hash(h)));
        let mut out = vec![false; probes.len()];
        full.contains_hash_batch(&probes, &mut out).unwrap();
        assert!(out.iter().all(|&b| b));
        let s = split(8, backend);
        assert!(probes.iter().all(|&h| !s.contains_hash(h)));
        let mut full = SplitBlockBloomFilter::from_parquet_bitset(&[0xff; 256]).unwrap();
        full.set_backend(backend).unwrap();
        assert!(probes.iter().all(|&h| full.contains_hash(h)), "{backend:?}");
        out.fill(false);
        full.contains_hash_batch(&probes, &mut out).unwrap();
        assert!(out.iter().all(|&b| b), "{backend:?}");
        let full = AtomicSplitBlockBloomFilter::from(full);
        assert_eq!(full.backend(), backend);
        assert!(probes.iter().all(|&h| full.contains_hash(h)), "{backend:?}");
        out.fill(false);
        full.contains_hash_batch(&probes, &mut out).unwrap();
        assert!(out.iter().all(|&b| b), "{backend:?}");
    }
}

/// Batch queries of a plain or atomic filter, by key and by hash, give its single-call
/// answers (`out` starts as the opposite answers, so every slot must be written); the
/// answers are returned.
macro_rules! check_batch_queries {
    ($f:expr, $keys:expr, $hashes:expr, $what:expr) => {{
        let (f, keys, hashes): (_, &[u64], &[u64]) = (&$f, $keys, $hashes);
        let expect: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
        let by_hash: Vec<bool> = hashes.iter().map(|&h| f.contains_hash(h)).collect();
        assert_eq!(by_hash, expect, "contains_hash, {:?}", $what);
        let mut out: Vec<bool> = expect.iter().map(|&b| !b).collect();
        f.contains_batch(keys, &mut out).unwrap();
        assert_eq!(out, expect, "contains_batch, {:?}", $what);
        out.iter_mut().for_each(|b| *b = !*b);
        f.contains_hash_batch(hashes, &mut out).unwrap();
        assert_eq!(out, expect, "contains_hash_batch, {:?}", $what);
        expect
    }};
}

/// Inserting `keys` (or their `hashes`) by batch, and one by one through the atomic
/// filter, sets exactly the bits of single plain `insert`s into a fresh `$new`; returns
/// that filter.
macro_rules! check_batch_inserts {
    ($new:expr, $Atomic:ty, $keys:expr, $hashes:expr, $what:expr) => {{
        let (keys, hashes): (&[u64], &[u64]) = ($keys, $hashes);
        let mut single = $new;
        keys.iter().for_each(|k| {
            single.insert(k);
        });
        let mut f = $new;
        hashes.iter().for_each(|&h| {
            f.insert_hash(h);
        });
        assert_eq!(f, single, "insert_hash, {:?}", $what);
        let mut f = $new;
        f.insert_batch(keys);
        assert_eq!(f, single, "insert_batch, {:?}", $what);
        let mut f = $new;
        f.insert_hash_batch(hashes);
        assert_eq!(f, single, "insert_hash_batch, {:?}", $what);
        let atomic = <$Atomic>::from($new);
        keys.iter().for_each(|k| {
            atomic.insert(k);
        });
        assert_eq!(atomic.into_inner(), single, "atomic insert, {:?}", $what);
        let atomic = <$Atomic>::from($new);
        hashes.iter().for_each(|&h| {
            atomic.insert_hash(h);
        });
        assert_eq!(
            atomic.into_inner(),
            single,
            "atomic insert_hash, {:?}",
            $what
        );
        let atomic = <$Atomic>::from($new);
        atomic.insert_batch(keys);
        assert_eq!(
            atomic.into_inner(),
            single,
            "atomic insert_batch, {:?}",
            $what
        );
        let atomic = <$Atomic>::from($new);
        atomic.insert_hash_batch(hashes);
        assert_eq!(
            atomic.into_inner(),
            single,
            "atomic insert_hash_batch, {:?}",
            $what
        );
        single
    }};
}

/// Every batch length 0..=257 (all pipeline tails), plain and atomic, every backend: batch
/// queries answer as single queries on all-members batches, random member / non-member
/// batches and empty filters; batch inserts set the bits of single inserts, which match the
/// scalar backend's.
#[test]
fn batches_match_single_calls_for_every_length() {
    let mut rng = SplitMix64::new(3);
    let members = rng.keys(257);
    let others = rng.keys(257);
    // Each slot a member or a non-member at random; its prefixes are the random batches.
    let mixed: Vec<u64> = members
        .iter()
        .zip(&others)
        .map(|(&m, &o)| if rng.next_u64() & 1 == 0 { m } else { o })
        .collect();
    let hash = |keys: &[u64]| -> Vec<u64> {
        let hasher = DefaultHasher::default();
        keys.iter().map(|k| hasher.hash_one(k)).collect()
    };
    let (member_hashes, mixed_hashes) = (hash(&members), hash(&mixed));
    for backend in Backend::available() {
        // Queries: 16 Kibit filters holding `members`, and empty ones.
        let mut b = blocked(1 << 14, 7, backend);
        let mut s = split(64, backend);
        let atomic_empty_b = AtomicBlockedBloomFilter::from(b.clone());
        let atomic_empty_s = AtomicSplitBlockBloomFilter::from(s.clone());
        let (empty_b, empty_s) = (b.clone(), s.clone());
        members.iter().for_each(|k| {
            b.insert(k);
            s.insert(k);
        });
        let atomic_b = AtomicBlockedBloomFilter::from(b.clone());
        let atomic_s = AtomicSplitBlockBloomFilter::from(s.clone());
        assert!(mixed.iter().any(|k| !b.contains(k)) && mixed.iter().any(|k| !s.contains(k)));
        for len in 0..=257usize {
            for (batch, keys, hashes) in [
                ("all members", &members[..len], &member_hashes[..len]),
                ("random", &mixed[..len], &mixed_hashes[..len]),
            ] {
                let what = (backend, len, batch);
                let answers = check_batch_queries!(b, keys, hashes, ("blocked", what));
                let atomic = check_batch_queries!(atomic_b, keys, hashes, ("atomic blocked", what));
                assert_eq!(atomic, answers, "{what:?}");
                let answers_s = check_batch_queries!(s, keys, hashes, ("split", what));
                let atomic = check_batch_queries!(atomic_s, keys, hashes, ("atomic split", what));
                assert_eq!(atomic, answers_s, "{what:?}");
                if batch == "all members" {
                    assert!(answers.iter().chain(&answers_s).all(|&a| a), "{what:?}");
                }
                for answers in [
                    check_batch_queries!(empty_b, keys, hashes, ("empty blocked", what)),
                    check_batch_queries!(
                        atomic_empty_b,
                        keys,
                        hashes,
                        ("empty atomic blocked", what)
                    ),
                    check_batch_queries!(empty_s, keys, hashes, ("empty split", what)),
                    check_batch_queries!(
                        atomic_empty_s,
                        keys,
                        hashes,
                        ("empty atomic split", what)
                    ),
                ] {
                    assert!(answers.iter().all(|&a| !a), "{what:?}");
                }
            }
            // Inserts: small filters, so batches hit the same blocks again and again.
            let (keys, hashes) = (&mixed[..len], &mixed_hashes[..len]);
            let what = (backend, len);
            let single = check_batch_inserts!(
                blocked(1 << 12, 5, backend),
                AtomicBlockedBloomFilter,
                keys,
                hashes,
                ("blocked", what)
            );
            let mut oracle = blocked(1 << 12, 5, Backend::Scalar);
            keys.iter().for_each(|k| {
                oracle.insert(k);
            });
            assert_eq!(single.blocks(), oracle.blocks(), "blocked {what:?}");
            let single = check_batch_inserts!(
                split(16, backend),
                AtomicSplitBlockBloomFilter,
                keys,
                hashes,
                ("split", what)
            );
            let mut oracle = split(16, Backend::Scalar);
            keys.iter().for_each(|k| {
                oracle.insert(k);
            });
            assert_eq!(single.blocks(), oracle.blocks(), "split {what:?}");
        }
    }
}

#[test]
fn batch_length_mismatch_is_an_error() {
    let f = BlockedBloomFilter::with_num_bits(1024).hashes(4).unwrap();
    let mut out = vec![true; 3];
    let err = f.contains_batch(&[1u64, 2], &mut out).unwrap_err();
    assert_eq!(err, Error::LengthMismatch { keys: 2, out: 3 });
    assert_eq!(out, vec![true; 3], "out untouched on error");
    let a = AtomicSplitBlockBloomFilter::with_num_bits(1024)
        .hashes(8)
        .unwrap();
    assert!(a.contains_hash_batch(&[1, 2, 3, 4], &mut out).is_err());
}

#[test]
fn bad_input_gives_typed_errors() {
    // Targets below what a layout reaches at its largest supported size are refused, not
    // silently missed.
    assert!(matches!(
        SplitBlockBloomFilter::with_false_pos(1e-12).expected_items(10),
        Err(Error::UnreachableFalsePositiveRate { .. })
    ));
    assert!(matches!(
        BlockedBloomFilter::with_false_pos(1e-16).expected_items(10),
        Err(Error::UnreachableFalsePositiveRate { .. })
    ));
    assert!(BlockedBloomFilter::with_false_pos(1e-9)
        .expected_items(10)
        .is_ok());
    for p in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            BlockedBloomFilter::with_false_pos(p).expected_items(10),
            Err(Error::InvalidFalsePositiveRate(_))
        ));
        assert!(SplitBlockBloomFilter::with_false_pos(p)
            .expected_items(10)
            .is_err());
        assert!(StandardBloomFilter::with_false_pos(p)
            .expected_items(10)
            .is_err());
    }
    assert_eq!(
        BlockedBloomFilter::with_false_pos(0.01)
            .expected_items(0)
            .unwrap_err(),
        Error::ZeroItems
    );
    assert_eq!(
        BlockedBloomFilter::with_num_bits(0).hashes(3).unwrap_err(),
        Error::ZeroBits
    );
    assert_eq!(
        StandardBloomFilter::with_num_bits(0).hashes(3).unwrap_err(),
        Error::ZeroBits
    );
    for k in [0, 65, 1000] {
        assert!(matches!(
            BlockedBloomFilter::with_num_bits(512).hashes(k),
            Err(Error::InvalidHashCount { .. })
        ));
        assert!(matches!(
            StandardBloomFilter::with_num_bits(512).hashes(k),
            Err(Error::InvalidHashCount { .. })
        ));
    }
    assert!(matches!(
        SplitBlockBloomFilter::with_num_bits(512).hashes(7),
        Err(Error::InvalidHashCount {
            k: 7,
            min: 8,
            max: 8
        })
    ));
    assert!(matches!(
        SplitBlockBloomFilter::with_num_blocks(0),
        Err(Error::ZeroBits)
    ));
    assert!(matches!(
        SplitBlockBloomFilter::with_num_blocks((1 << 32) + 1),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        BlockedBloomFilter::with_num_bits(u64::MAX).hashes(7),
        Err(Error::TooLarge { .. } | Error::AllocationFailed { .. })
    ));
    assert!(BlockedBloomFilter::with_false_pos(1e-300)
        .expected_items(u64::MAX)
        .is_err());
    for len in [0usize, 1, 31, 33, 100] {
        assert!(matches!(
            SplitBlockBloomFilter::from_parquet_bitset(&vec![0u8; len]),
            Err(Error::InvalidBitset { .. })
        ));
    }
    // Every layout and every atomic builder: n = 0, 0 bits, k out of range.
    assert_eq!(
        SplitBlockBloomFilter::with_false_pos(0.01)
            .expected_items(0)
            .unwrap_err(),
        Error::ZeroItems
    );
    assert_eq!(
        StandardBloomFilter::with_false_pos(0.01)
            .expected_items(0)
            .unwrap_err(),
        Error::ZeroItems
    );
    assert_eq!(
        SplitBlockBloomFilter::with_num_bits(0)
            .hashes(8)
            .unwrap_err(),
        Error::ZeroBits
    );
    for k in [0, 9, 64] {
        assert!(matches!(
            SplitBlockBloomFilter::with_num_bits(512).hashes(k),
            Err(Error::InvalidHashCount { .. })
        ));
    }
    assert_eq!(
        AtomicBlockedBloomFilter::with_false_pos(0.01)
            .expected_items(0)
            .unwrap_err(),
        Error::ZeroItems
    );
    assert_eq!(
        AtomicSplitBlockBloomFilter::with_false_pos(0.01)
            .expected_items(0)
            .unwrap_err(),
        Error::ZeroItems
    );
    assert!(matches!(
        AtomicBlockedBloomFilter::with_false_pos(1.5).expected_items(10),
        Err(Error::InvalidFalsePositiveRate(_))
    ));
    assert_eq!(
        AtomicBlockedBloomFilter::with_num_bits(0)
            .hashes(3)
            .unwrap_err(),
        Error::ZeroBits
    );
    assert!(matches!(
        AtomicBlockedBloomFilter::with_num_bits(512).hashes(0),
        Err(Error::InvalidHashCount { .. })
    ));
    assert!(matches!(
        AtomicSplitBlockBloomFilter::with_num_bits(512).hashes(9),
        Err(Error::InvalidHashCount { .. })
    ));
    assert!(BlockedBloomFilter::from_blocks(vec![], 3, DefaultHasher::default()).is_err());
    assert!(StandardBloomFilter::from_words(vec![0; 2], 64, 3, DefaultHasher::default()).is_err());
}

#[test]
fn union_and_intersect_check_compatibility() {
    let mut a = BlockedBloomFilter::with_num_bits(4096).hashes(5).unwrap();
    let mut b = BlockedBloomFilter::with_num_bits(4096).hashes(5).unwrap();
    a.insert(&"a");
    b.insert(&"b");
    let before = a.clone();
    for other in [
        BlockedBloomFilter::with_num_bits(8192).hashes(5).unwrap(),
        BlockedBloomFilter::with_num_bits(4096).hashes(6).unwrap(),
        BlockedBloomFilter::with_num_bits(4096)
            .seed(1)
            .hashes(5)
            .unwrap(),
    ] {
        assert!(matches!(
            a.union(&other),
            Err(Error::IncompatibleFilters { .. })
        ));
        assert!(matches!(
            a.intersect(&other),
            Err(Error::IncompatibleFilters { .. })
        ));
        assert_eq!(a, before, "unchanged on error");
    }
    let mut u = a.clone();
    u.union(&b).unwrap();
    assert!(u.contains(&"a") && u.contains(&"b"));
    let mut i = u.clone();
    i.intersect(&a).unwrap();
    assert!(i.contains(&"a"));
    assert_eq!(i, a);

    let mut s1 = StandardBloomFilter::with_num_bits(1000).hashes(3).unwrap();
    let s2 = StandardBloomFilter::with_num_bits(1001).hashes(3).unwrap();
    assert!(s1.union(&s2).is_err());
    let mut p1 = SplitBlockBloomFilter::with_num_blocks(4).unwrap();
    let p2 = SplitBlockBloomFilter::with_num_blocks(5).unwrap();
    assert!(p1.union(&p2).is_err());
    // Keyed hashers with different keys are incompatible.
    let mut k1 = BlockedBloomFilter::with_num_bits(512)
        .hasher(KeyedHasher::with_key([1, 2, 3, 4]))
        .hashes(3)
        .unwrap();
    let k2 = BlockedBloomFilter::with_num_bits(512)
        .hasher(KeyedHasher::with_key([1, 2, 3, 5]))
        .hashes(3)
        .unwrap();
    assert!(k1.union(&k2).is_err());
}

#[test]
fn estimates_and_clear() {
    let mut f = BlockedBloomFilter::with_false_pos(0.01)
        .expected_items(100_000)
        .unwrap();
    let keys = SplitMix64::new(5).keys(100_000);
    f.insert_batch(&keys);
    let est = f.estimated_len();
    assert!((est - 100_000.0).abs() < 3_000.0, "estimate {est}");
    let mut s = StandardBloomFilter::with_false_pos(0.01)
        .expected_items(100_000)
        .unwrap();
    s.insert_batch(&keys);
    assert!((s.estimated_len() - 100_000.0).abs() < 3_000.0);
    assert!(f.expected_false_pos() < 0.011);
    f.clear();
    assert!(f.is_empty());
    assert_eq!(f.expected_false_pos(), 0.0);
    let collected: BlockedBloomFilter = (0..1000u32).collect();
    assert!((0..1000u32).all(|i| collected.contains(&i)));
}

#[test]
fn filters_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<BlockedBloomFilter>();
    check::<SplitBlockBloomFilter>();
    check::<StandardBloomFilter>();
    check::<AtomicBlockedBloomFilter>();
    check::<AtomicSplitBlockBloomFilter>();
    check::<AtomicStandardBloomFilter>();
    check::<BlockedBloomFilter<KeyedHasher>>();
}

#[test]
fn standard_batches_and_atomic_standard_match_single_calls() {
    let mut rng = SplitMix64::new(17);
    let members = rng.keys(300);
    let others = rng.keys(300);
    let mut f = StandardBloomFilter::with_num_bits(5000).hashes(5).unwrap();
    let empty = f.clone();
    f.insert_batch(&members[..150]);
    let mut single = StandardBloomFilter::with_num_bits(5000).hashes(5).unwrap();
    members[..150].iter().for_each(|k| {
        single.insert(k);
    });
    assert_eq!(f, single);
    let atomic = AtomicStandardBloomFilter::with_num_bits(5000)
        .hashes(5)
        .unwrap();
    members[..150].iter().for_each(|k| {
        atomic.insert(k);
    });
    for len in 0..=257usize {
        // Members and non-members interleaved.
        let keys: Vec<u64> = members
            .iter()
            .zip(&others)
            .flat_map(|(a, b)| [*a, *b])
            .take(len)
            .collect();
        let hashes: Vec<u64> = keys.iter().map(|k| f.hasher().hash_one(k)).collect();
        let expect: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
        let mut out = vec![false; len];
        f.contains_batch(&keys, &mut out).unwrap();
        assert_eq!(out, expect, "{len}");
        f.contains_hash_batch(&hashes, &mut out).unwrap();
        assert_eq!(out, expect);
        assert_eq!(
            keys.iter().map(|k| atomic.contains(k)).collect::<Vec<_>>(),
            expect
        );
        empty.contains_batch(&keys, &mut out).unwrap();
        assert!(out.iter().all(|&b| !b));
        atomic.contains_batch(&keys, &mut out).unwrap();
        assert_eq!(out, expect, "atomic, {len}");
        atomic.contains_hash_batch(&hashes, &mut out).unwrap();
        assert_eq!(out, expect, "atomic by hash, {len}");
        let mut by_hash = StandardBloomFilter::with_num_bits(5000).hashes(5).unwrap();
        by_hash.insert_hash_batch(&hashes);
        let mut by_key = StandardBloomFilter::with_num_bits(5000).hashes(5).unwrap();
        by_key.insert_batch(&keys);
        assert_eq!(by_hash, by_key);
        let atomic_by_key = AtomicStandardBloomFilter::with_num_bits(5000)
            .hashes(5)
            .unwrap();
        atomic_by_key.insert_batch(&keys);
        let atomic_by_hash = atomic_by_key.clone();
        atomic_by_hash.insert_hash_batch(&hashes);
        assert_eq!(atomic_by_key.snapshot(), by_key);
        assert_eq!(atomic_by_hash.snapshot(), by_key);
    }
    assert!(matches!(
        atomic.contains_batch(&members, &mut [false; 3]),
        Err(Error::LengthMismatch { .. })
    ));
    assert_eq!(atomic.snapshot(), f);
    assert_eq!(atomic.expected_false_pos(), f.expected_false_pos());
    assert_eq!(StandardBloomFilter::from(atomic), f);
}

/// Above 16 MiB the standard filter's batch calls take the prefetching pipeline (below,
/// a plain loop): same answers and bits as single calls there too, for every tail length.
#[test]
fn standard_pipelined_batch_matches_single_calls_on_a_large_array() {
    let mut f = StandardBloomFilter::with_num_bits(150_000_000)
        .hashes(7)
        .unwrap();
    let members: Vec<u64> = (0..5_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    f.insert_batch(&members);
    let mut single = StandardBloomFilter::with_num_bits(150_000_000)
        .hashes(7)
        .unwrap();
    for k in &members[..37] {
        single.insert(k);
    }
    let mut part = StandardBloomFilter::with_num_bits(150_000_000)
        .hashes(7)
        .unwrap();
    part.insert_batch(&members[..37]);
    assert!(part == single);
    drop(part);
    for k in &members[37..] {
        single.insert(k);
    }
    assert!(single == f);
    drop(single);
    let keys: Vec<u64> = members.iter().flat_map(|&k| [k, !k]).collect();
    let expect: Vec<bool> = keys.iter().map(|k| f.contains(k)).collect();
    assert!(expect.iter().step_by(2).all(|&b| b));
    for len in (0..=40).chain([257, keys.len()]) {
        let mut out = vec![false; len];
        f.contains_batch(&keys[..len], &mut out).unwrap();
        assert_eq!(out, expect[..len], "{len}");
    }
}

/// The early-exit query answers as `contains_hash` on both sides of the 16 MiB rule (the
/// small array's `contains_hash` takes all probes branch-free), for members and for
/// non-members, some of them false positives; `prefetch_hash` changes nothing.
#[test]
fn standard_early_exit_query_matches_contains_hash() {
    use std::hash::BuildHasher;
    for bits in [20_000u64, 150_000_000] {
        let mut f = StandardBloomFilter::with_num_bits(bits).hashes(7).unwrap();
        let n = (bits / 5).min(20_000);
        let keys: Vec<u64> = (0..n)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        f.insert_batch(&keys);
        let before = f.clone();
        let mut positives = 0;
        for i in 0..2 * n + 5000 {
            let h = f.hasher().hash_one(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            f.prefetch_hash(h, 3);
            f.prefetch_hash(h, 100);
            let yes = f.contains_hash(h);
            assert_eq!(f.contains_hash_early_exit(h), yes, "bits {bits}, key {i}");
            positives += usize::from(yes);
        }
        assert!(positives >= n as usize, "bits {bits}: {positives}");
        if bits == 20_000 {
            assert!(
                positives > n as usize + 100,
                "small array: no false positive tried"
            );
        }
        assert!(f == before);
    }
}

#[test]
fn atomic_statistics_match_plain() {
    let keys = SplitMix64::new(23).keys(5000);
    let mut plain = BlockedBloomFilter::with_false_pos(0.01)
        .expected_items(5000)
        .unwrap();
    plain.insert_batch(&keys);
    let atomic = AtomicBlockedBloomFilter::from(plain.clone());
    assert_eq!(atomic.count_ones(), plain.count_ones());
    assert_eq!(atomic.expected_false_pos(), plain.expected_false_pos());
    assert_eq!(atomic.estimated_len(), plain.estimated_len());
    let split = AtomicSplitBlockBloomFilter::with_num_blocks(64).unwrap();
    split.insert_batch(&keys);
    assert_eq!(split.count_ones(), split.snapshot().count_ones());
    // Clones are independent copies of the bits.
    let copy = atomic.clone();
    assert_eq!(copy.snapshot(), plain);
    copy.insert(&u64::MAX);
    assert_eq!(atomic.snapshot(), plain);
    assert_eq!(split.clone().snapshot(), split.snapshot());
}

/// The shared `Filter` trait: generic code inserts and queries every filter of this crate
/// (plain and atomic) and sees the same answers as the inherent methods.
#[test]
fn filter_trait_is_generic_over_every_filter() {
    fn exercise<F: Filter<u64, InsertError = core::convert::Infallible>>(f: &mut F) {
        let keys = SplitMix64::new(77).keys(300);
        let mut fresh = 0;
        for k in &keys {
            fresh += usize::from(!f.insert(k).unwrap());
        }
        assert!(fresh > 250, "most inserts of distinct keys are new");
        assert!(keys.iter().all(|k| f.contains(k)));
        // Every filter below has 2^14 bits.
        assert_eq!(f.memory_bits(), 1 << 14);
        let fp = f.expected_false_pos();
        assert!(fp > 0.0 && fp < 0.05, "{fp}");
    }
    let mut b = BlockedBloomFilter::with_num_bits(1 << 14)
        .hashes(6)
        .unwrap();
    exercise(&mut b);
    let mut s = SplitBlockBloomFilter::with_num_blocks(64).unwrap();
    exercise(&mut s);
    let mut st = StandardBloomFilter::with_num_bits(1 << 14)
        .hashes(6)
        .unwrap();
    exercise(&mut st);
    let mut ab = AtomicBlockedBloomFilter::with_num_bits(1 << 14)
        .hashes(6)
        .unwrap();
    exercise(&mut ab);
    let mut asb = AtomicSplitBlockBloomFilter::with_num_blocks(64).unwrap();
    exercise(&mut asb);
    let mut ast = AtomicStandardBloomFilter::with_num_bits(1 << 14)
        .hashes(6)
        .unwrap();
    exercise(&mut ast);
}

/// Filters of 16 MiB and more take the grouped batch-insert pipeline on the blocked
/// layout (with every kernel but AVX-512's, which keeps one key per prefetch): every batch
/// length around its group and ring sizes (16, 32) matches single inserts, on every
/// backend.
#[test]
fn large_blocked_batch_insert_matches_single_calls() {
    let bits = 1u64 << 27; // 16 MiB
    let keys = SplitMix64::new(4242).keys(300);
    for backend in Backend::available() {
        for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 257, 300] {
            let mut batch = blocked(bits, 7, backend);
            batch.insert_batch(&keys[..len]);
            let mut single = blocked(bits, 7, backend);
            for k in &keys[..len] {
                single.insert(k);
            }
            assert!(batch == single, "{} len {len}", backend.name());
            let mut hashed = blocked(bits, 7, backend);
            let hashes: Vec<u64> = keys[..len]
                .iter()
                .map(|k| hashed.hasher().hash_one(k))
                .collect();
            hashed.insert_hash_batch(&hashes);
            assert!(hashed == single, "{} hashes, len {len}", backend.name());
        }
    }
}
