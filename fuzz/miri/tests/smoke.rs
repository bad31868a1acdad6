//! Every `unsafe` path of bloomforge-core at sizes Miri can interpret in seconds:
//! `alloc_zeroed` -> `Box<[B]>` (raw.rs), plain <-> atomic `Box` casts (raw.rs,
//! standard.rs), the `Block256` u64 views (layout.rs), `SplitBlockBloomFilter::as_bytes`
//! (filters.rs), the pipelined batch loops with prefetch and `get_unchecked` (raw.rs,
//! standard.rs), the scalar and `wide` kernels, and concurrent atomic inserts.
//!
//! `cargo +nightly miri test` in this directory (see ../README.md). It also runs natively.

use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter, Backend,
    Block256, Block512, BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter,
};

/// Hashes at the edges of the block-index reductions, then a few mixed ones.
fn hashes(n: usize) -> Vec<u64> {
    let mut v = vec![
        0,
        u64::MAX,
        1,
        1 << 63,
        u64::MAX >> 1,
        0xffff_ffff,
        0xffff_ffff_0000_0000,
    ];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    while v.len() < n {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        v.push(z ^ (z >> 31));
    }
    v.truncate(n);
    v
}

/// More keys than the batch prefetch window (32) so the ring buffer wraps.
const N: usize = 70;

#[test]
fn backends_available_under_miri_are_portable() {
    let avail = Backend::available();
    assert_eq!(avail[0], Backend::Scalar);
    if cfg!(miri) {
        assert_eq!(avail, vec![Backend::Scalar, Backend::Wide]);
    }
}

#[test]
fn blocked_alloc_batches_atomic_cast() {
    let hs = hashes(N);
    // 1 block, a non-power-of-two count, several blocks; k at the kernel's edges.
    for (bits, k) in [(1u64, 1u32), (3 * 512, 7), (8 * 512 - 1, 64)] {
        let mut oracle = BlockedBloomFilter::with_num_bits(bits).hashes(k).unwrap();
        oracle.set_backend(Backend::Scalar).unwrap();
        for &h in &hs {
            oracle.insert_hash(h);
        }
        for backend in Backend::available() {
            let mut f = BlockedBloomFilter::with_num_bits(bits).hashes(k).unwrap();
            f.set_backend(backend).unwrap();
            f.insert_hash_batch(&hs);
            assert_eq!(f.blocks(), oracle.blocks(), "{backend:?}");
            let mut out = vec![false; hs.len()];
            f.contains_hash_batch(&hs, &mut out).unwrap();
            assert!(out.iter().all(|&b| b));
            let keys: Vec<u32> = (0..N as u32).collect();
            f.insert_batch(&keys);
            let mut out = vec![false; keys.len()];
            f.contains_batch(&keys, &mut out).unwrap();
            assert!(out.iter().all(|&b| b));

            // Plain -> atomic -> plain reuses the allocation (Box cast both ways).
            let atomic = AtomicBlockedBloomFilter::from(f.clone());
            assert!(keys.iter().all(|key| atomic.contains(key)));
            atomic.insert_hash_batch(&hs[..40]);
            let mut out = vec![false; 40];
            atomic.contains_hash_batch(&hs[..40], &mut out).unwrap();
            assert!(out.iter().all(|&b| b));
            let snap = atomic.snapshot();
            let back = atomic.into_inner();
            assert_eq!(back, f);
            assert_eq!(snap, f);
        }
        // union / intersect / count_ones / clear go through the u64 word views.
        let mut a = oracle.clone();
        a.union(&oracle).unwrap();
        a.intersect(&oracle).unwrap();
        assert_eq!(a, oracle);
        assert_eq!(
            a.count_ones(),
            oracle
                .blocks()
                .iter()
                .map(Block512::count_ones)
                .map(u64::from)
                .sum::<u64>()
        );
        a.clear();
        assert!(a.is_empty());
        let decoded = BlockedBloomFilter::from_bytes(&oracle.to_bytes()).unwrap();
        assert_eq!(decoded, oracle);
        let rebuilt =
            BlockedBloomFilter::from_blocks(oracle.blocks().to_vec(), k, *oracle.hasher()).unwrap();
        assert_eq!(rebuilt, oracle);
    }
}

#[test]
fn split_alloc_views_as_bytes_atomic_cast() {
    let hs = hashes(N);
    for blocks in [1u64, 3, 8] {
        let mut oracle = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
        oracle.set_backend(Backend::Scalar).unwrap();
        for &h in &hs {
            oracle.insert_hash(h);
        }
        for backend in Backend::available() {
            let mut f = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
            f.set_backend(backend).unwrap();
            f.insert_hash_batch(&hs);
            assert_eq!(f.blocks(), oracle.blocks(), "{backend:?}");
            let mut out = vec![false; hs.len()];
            f.contains_hash_batch(&hs, &mut out).unwrap();
            assert!(out.iter().all(|&b| b));
            let atomic = AtomicSplitBlockBloomFilter::from(f.clone());
            for &h in &hs[..10] {
                assert!(atomic.insert_hash(h));
            }
            assert_eq!(atomic.count_ones(), f.count_ones());
            assert_eq!(atomic.into_inner(), f);
        }
        // as_bytes: the blocks viewed as bytes; to_parquet_bytes: the portable copy.
        let bytes = oracle.as_bytes();
        assert_eq!(bytes.len() as u64, blocks * 32);
        assert_eq!(bytes, oracle.to_parquet_bytes().as_slice());
        assert_eq!(
            SplitBlockBloomFilter::from_parquet_bitset(bytes)
                .unwrap()
                .blocks(),
            oracle.blocks()
        );
        // Block256 as four u64 words: union, intersect, count_ones.
        let mut a = oracle.clone();
        let mut other = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
        other.insert_hash(12345);
        a.union(&other).unwrap();
        a.intersect(&oracle).unwrap();
        assert_eq!(a, oracle);
        let ones: u64 = oracle
            .blocks()
            .iter()
            .map(Block256::count_ones)
            .map(u64::from)
            .sum();
        assert_eq!(oracle.count_ones(), ones);
        assert_eq!(
            SplitBlockBloomFilter::from_bytes(&oracle.to_bytes()).unwrap(),
            oracle
        );
    }
}

#[test]
fn standard_alloc_pipeline_atomic_cast() {
    let hs = hashes(N);
    for (bits, k) in [(1u64, 1u32), (100, 5), (64 * 5, 64)] {
        let mut f = StandardBloomFilter::with_num_bits(bits).hashes(k).unwrap();
        f.insert_hash_batch(&hs);
        let mut out = vec![false; hs.len()];
        f.contains_hash_batch(&hs, &mut out).unwrap();
        assert!(out.iter().all(|&b| b));
        let keys: Vec<u16> = (0..N as u16).collect();
        f.insert_batch(&keys);
        let mut out = vec![false; keys.len()];
        f.contains_batch(&keys, &mut out).unwrap();
        assert!(out.iter().all(|&b| b));
        let atomic = AtomicStandardBloomFilter::from(f.clone());
        assert!(atomic.insert_hash(hs[3]));
        assert!(keys.iter().all(|key| atomic.contains(key)));
        assert_eq!(atomic.snapshot(), f);
        assert_eq!(atomic.into_inner(), f);
        assert_eq!(StandardBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
        let mut g = f.clone();
        g.union(&f).unwrap();
        g.intersect(&f).unwrap();
        assert_eq!(g, f);
    }
}

#[test]
fn concurrent_atomic_inserts_are_race_free() {
    let hs = hashes(48);
    let blocked = AtomicBlockedBloomFilter::with_num_bits(2 * 512)
        .hashes(6)
        .unwrap();
    let split = AtomicSplitBlockBloomFilter::with_num_blocks(2).unwrap();
    let standard = AtomicStandardBloomFilter::with_num_bits(500)
        .hashes(4)
        .unwrap();
    std::thread::scope(|s| {
        for part in hs.chunks(12) {
            let (blocked, split, standard) = (&blocked, &split, &standard);
            s.spawn(move || {
                blocked.insert_hash_batch(part);
                for &h in part {
                    split.insert_hash(h);
                    standard.insert_hash(h);
                    assert!(blocked.contains_hash(h));
                }
            });
        }
    });
    let (b, s, st) = (
        blocked.into_inner(),
        split.into_inner(),
        standard.into_inner(),
    );
    assert!(hs
        .iter()
        .all(|&h| b.contains_hash(h) && s.contains_hash(h) && st.contains_hash(h)));
}

#[test]
fn rayon_parallel_inserts() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let keys: Vec<u32> = (0..200).collect();
    let mut plain = BlockedBloomFilter::with_num_bits(4 * 512)
        .hashes(4)
        .unwrap();
    pool.install(|| plain.par_insert_batch(&keys));
    let atomic = AtomicBlockedBloomFilter::with_num_bits(4 * 512)
        .hashes(4)
        .unwrap();
    pool.install(|| atomic.par_insert_batch(&keys));
    let standard = AtomicStandardBloomFilter::with_num_bits(3000)
        .hashes(3)
        .unwrap();
    pool.install(|| standard.par_insert_batch(&keys));
    let mut sequential = BlockedBloomFilter::with_num_bits(4 * 512)
        .hashes(4)
        .unwrap();
    sequential.insert_batch(&keys);
    assert_eq!(plain, sequential);
    assert_eq!(atomic.into_inner(), sequential);
    assert!(keys.iter().all(|key| standard.contains(key)));
}
