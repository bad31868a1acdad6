//! Concurrent inserts: threads inserting disjoint key sets, then joined, give exactly the
//! sequential build, and every key is found.

use crate::common;

use bloomforge_core::*;
use common::SplitMix64;
use std::sync::Barrier;

fn check_blocked(bits: u64, threads: usize, keys: &[u64]) {
    let mut sequential = BlockedBloomFilter::with_num_bits(bits).hashes(6).unwrap();
    sequential.insert_batch(keys);
    let shared = AtomicBlockedBloomFilter::with_num_bits(bits)
        .hashes(6)
        .unwrap();
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        for (t, chunk) in keys.chunks(keys.len().div_ceil(threads)).enumerate() {
            let (shared, barrier) = (&shared, &barrier);
            s.spawn(move || {
                barrier.wait();
                // Alternate single and batch inserts so both paths race.
                if t % 2 == 0 {
                    chunk.iter().for_each(|k| {
                        shared.insert(k);
                    });
                } else {
                    shared.insert_batch(chunk);
                }
            });
        }
    });
    assert!(keys.iter().all(|k| shared.contains(k)));
    assert_eq!(
        shared.into_inner(),
        sequential,
        "bits={bits} threads={threads}"
    );
}

fn check_split(blocks: u64, threads: usize, keys: &[u64]) {
    let mut sequential = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
    sequential.insert_batch(keys);
    let shared =
        AtomicSplitBlockBloomFilter::from(SplitBlockBloomFilter::with_num_blocks(blocks).unwrap());
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        for chunk in keys.chunks(keys.len().div_ceil(threads)) {
            let (shared, barrier) = (&shared, &barrier);
            s.spawn(move || {
                barrier.wait();
                chunk.iter().for_each(|k| {
                    shared.insert(k);
                })
            });
        }
    });
    assert!(keys.iter().all(|k| shared.contains(k)));
    assert_eq!(shared.into_inner(), sequential);
}

#[test]
fn disjoint_concurrent_inserts_equal_sequential_build() {
    let mut rng = SplitMix64::new(2024);
    for rep in 0..20 {
        for &threads in &[2usize, 4, 8] {
            // Tiny filters force heavy contention on the same words; large ones test scale.
            let small = rng.keys(2000);
            check_blocked(512, threads, &small);
            check_blocked(4096, threads, &small);
            check_split(1, threads, &small);
            check_split(16, threads, &small);
            if rep < 3 {
                let large = rng.keys(200_000);
                check_blocked(1 << 22, threads, &large);
                check_split(1 << 13, threads, &large);
            }
        }
    }
}

#[test]
fn parallel_bulk_load_equals_sequential() {
    let keys = SplitMix64::new(1).keys(300_000);
    let mut sequential = BlockedBloomFilter::with_false_pos(0.01)
        .expected_items(300_000)
        .unwrap();
    sequential.insert_batch(&keys);
    let mut sequential_split = SplitBlockBloomFilter::with_false_pos(0.01)
        .expected_items(300_000)
        .unwrap();
    sequential_split.insert_batch(&keys);
    let mut sequential_standard = StandardBloomFilter::with_false_pos(0.01)
        .expected_items(300_000)
        .unwrap();
    sequential_standard.insert_batch(&keys);
    for threads in [1usize, 2, 4, 8] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let atomic = AtomicBlockedBloomFilter::with_false_pos(0.01)
            .expected_items(300_000)
            .unwrap();
        pool.install(|| atomic.par_insert_batch(&keys));
        assert_eq!(atomic.into_inner(), sequential);
        let mut plain = BlockedBloomFilter::with_false_pos(0.01)
            .expected_items(300_000)
            .unwrap();
        pool.install(|| plain.par_insert_batch(&keys));
        assert_eq!(plain, sequential);
        let mut split = SplitBlockBloomFilter::with_false_pos(0.01)
            .expected_items(300_000)
            .unwrap();
        pool.install(|| split.par_insert_batch(&keys));
        assert!(keys.iter().all(|k| split.contains(k)));
        assert_eq!(split, sequential_split, "split-block, {threads} threads");
        let atomic_split = AtomicSplitBlockBloomFilter::from(
            SplitBlockBloomFilter::with_false_pos(0.01)
                .expected_items(300_000)
                .unwrap(),
        );
        pool.install(|| atomic_split.par_insert_batch(&keys));
        assert!(keys.iter().all(|k| atomic_split.contains(k)));
        assert_eq!(
            atomic_split.into_inner(),
            sequential_split,
            "atomic split-block, {threads} threads"
        );
        let standard = AtomicStandardBloomFilter::from(
            StandardBloomFilter::with_false_pos(0.01)
                .expected_items(300_000)
                .unwrap(),
        );
        pool.install(|| standard.par_insert_batch(&keys));
        assert_eq!(
            standard.into_inner(),
            sequential_standard,
            "atomic standard, {threads} threads"
        );
    }
}

/// Large enough (>= 2^20 keys into >= 8 MiB) to take the partitioned parallel build.
#[test]
fn partitioned_build_equals_sequential_build() {
    let keys = SplitMix64::new(77).keys((1 << 20) + 12_345);
    // 300 threads exceed the caps on chunks (128) and partitions (1024).
    for threads in [2usize, 3, 4, 300] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut sequential = BlockedBloomFilter::with_num_bits(1 << 27)
            .hashes(7)
            .unwrap();
        sequential.insert_batch(&keys);
        let mut parallel = BlockedBloomFilter::with_num_bits(1 << 27)
            .hashes(7)
            .unwrap();
        pool.install(|| parallel.par_insert_batch(&keys));
        assert!(parallel == sequential, "blocked, {threads} threads");
        let mut sequential = SplitBlockBloomFilter::with_num_blocks((1 << 22) + 7).unwrap();
        sequential.insert_batch(&keys);
        let mut parallel = SplitBlockBloomFilter::with_num_blocks((1 << 22) + 7).unwrap();
        pool.install(|| parallel.par_insert_batch(&keys));
        assert!(parallel == sequential, "split-block, {threads} threads");
    }
}

/// In-cache filters (under 8 MiB) and batches below the partitioned build's threshold
/// (2^20 keys) equal a sequential build for every pool size, odd block counts included.
/// From 2^17 keys an in-cache filter takes the build by private copies OR-ed together
/// (one worker per 2^16 keys, so 2, 3, 7 and 8 workers here), below it the calling thread.
#[test]
fn small_partitioned_build_equals_sequential_build() {
    let keys = SplitMix64::new(78).keys((1 << 18) * 2 + 777);
    for threads in [2usize, 3, 4, 7, 8, 300] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for len in [
            (1 << 16) - 1,
            1 << 16,
            (1 << 17) - 1,
            1 << 17,
            3 << 16,
            (1 << 18) + 1,
            keys.len(),
        ] {
            let keys = &keys[..len];
            for blocks in [1_001u64, 40_009] {
                assert_par_build_equals_sequential(
                    &pool,
                    keys,
                    blocks,
                    6,
                    blocks,
                    &format!("{threads} threads, {len} keys"),
                );
            }
        }
    }
}

/// The copy-and-merge build caps its private copies at 64 MiB in all: a filter just
/// under 8 MiB gets at most 1 + 64 MiB / its size workers (here 9 + 1 of the 15 the keys
/// allow), and the result still equals a sequential build.
#[test]
fn merged_build_with_capped_copies_equals_sequential_build() {
    let keys = SplitMix64::new(79).keys((1 << 20) - 1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(300)
        .build()
        .unwrap();
    let blocks = (7u64 << 20) / 64 + 3;
    assert_par_build_equals_sequential(&pool, &keys, blocks, 7, blocks * 2, "300 threads");
}

/// Builds a blocked filter of `blocked_blocks` 512-bit blocks (`k` hashes) and a
/// split-block filter of `split_blocks` blocks from `keys`, each once with
/// `par_insert_batch` on `pool` and once sequentially, and asserts that every bit agrees.
fn assert_par_build_equals_sequential(
    pool: &rayon::ThreadPool,
    keys: &[u64],
    blocked_blocks: u64,
    k: u32,
    split_blocks: u64,
    what: &str,
) {
    let blocked = || {
        BlockedBloomFilter::with_num_bits(blocked_blocks * 512)
            .hashes(k)
            .unwrap()
    };
    let mut sequential = blocked();
    sequential.insert_batch(keys);
    let mut parallel = blocked();
    pool.install(|| parallel.par_insert_batch(keys));
    assert!(
        parallel == sequential,
        "blocked, {what}, {blocked_blocks} blocks"
    );
    let mut sequential = SplitBlockBloomFilter::with_num_blocks(split_blocks).unwrap();
    sequential.insert_batch(keys);
    let mut parallel = SplitBlockBloomFilter::with_num_blocks(split_blocks).unwrap();
    pool.install(|| parallel.par_insert_batch(keys));
    assert!(
        parallel == sequential,
        "split-block, {what}, {split_blocks} blocks"
    );
}

/// The bounded-memory parallel insert of hashes equals a sequential build for every
/// thread count (including more threads than blocks) and for batch lengths around its
/// threshold (8192), on filters whose block count does not divide evenly.
#[test]
fn ranged_hash_insert_equals_sequential_build() {
    use std::hash::BuildHasher;
    let keys = SplitMix64::new(91).keys(40_000);
    for threads in [1usize, 2, 3, 4, 7, 300] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for len in [0usize, 1, 8191, 8192, 8193, 40_000] {
            for blocks in [1u64, 5, 1001] {
                let mut sequential = BlockedBloomFilter::with_num_bits(blocks * 512)
                    .hashes(6)
                    .unwrap();
                let hashes: Vec<u64> = keys[..len]
                    .iter()
                    .map(|k| sequential.hasher().hash_one(k))
                    .collect();
                sequential.insert_hash_batch(&hashes);
                let mut parallel = BlockedBloomFilter::with_num_bits(blocks * 512)
                    .hashes(6)
                    .unwrap();
                pool.install(|| parallel.par_insert_hash_batch(&hashes));
                assert!(
                    parallel == sequential,
                    "blocked, {threads} threads, {len} hashes, {blocks} blocks"
                );
                let mut sequential = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
                sequential.insert_hash_batch(&hashes);
                let mut parallel = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
                pool.install(|| parallel.par_insert_hash_batch(&hashes));
                assert!(
                    parallel == sequential,
                    "split-block, {threads} threads, {len} hashes, {blocks} blocks"
                );
                for &h in &hashes {
                    assert!(parallel.contains_hash(h));
                }
            }
        }
    }
}

/// Hashes grouped by range in several parts, with splitters of 1 to more ranges than
/// blocks, inserted from pools of 1-7 threads: the bits equal a sequential build's. A
/// splitter of another filter, or parts of another splitter, are refused with the filter
/// unchanged.
#[test]
fn split_insert_equals_sequential_build_and_refuses_foreign_splits() {
    use std::hash::BuildHasher;
    let keys = SplitMix64::new(92).keys(30_000);
    for threads in [1usize, 2, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        // The same check for both layouts: a fresh filter of `blocks` blocks each time.
        macro_rules! check {
            ($name:literal, $fresh:expr, $blocks:expr, $ranges:expr, $chunk:expr) => {{
                let mut sequential = $fresh;
                let hashes: Vec<u64> = keys
                    .iter()
                    .map(|k| sequential.hasher().hash_one(k))
                    .collect();
                sequential.insert_hash_batch(&hashes);
                let mut parallel = $fresh;
                let splitter = parallel.range_splitter($ranges);
                let parts: Vec<RangeSplit> =
                    hashes.chunks($chunk).map(|c| splitter.split(c)).collect();
                assert_eq!(
                    parts.iter().map(RangeSplit::len).sum::<usize>(),
                    hashes.len()
                );
                pool.install(|| parallel.par_insert_split(&splitter, &parts))
                    .unwrap();
                assert!(
                    parallel == sequential,
                    "{}, {threads} threads, {} blocks, {} ranges",
                    $name,
                    $blocks,
                    $ranges
                );
            }};
        }
        for blocks in [1u64, 2, 5, 1001] {
            for ranges in [1usize, 2, 3, 16, 2000] {
                check!(
                    "blocked",
                    BlockedBloomFilter::with_num_bits(blocks * 512)
                        .hashes(6)
                        .unwrap(),
                    blocks,
                    ranges,
                    7_001
                );
                check!(
                    "split-block",
                    SplitBlockBloomFilter::with_num_blocks(blocks).unwrap(),
                    blocks,
                    ranges,
                    9_999
                );
            }
        }
    }
    // Foreign splitters and parts: an error, nothing inserted.
    let hashes: Vec<u64> = (0..1000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let mut f = BlockedBloomFilter::with_num_bits(64 * 512)
        .hashes(6)
        .unwrap();
    let empty = f.clone();
    let other_size = BlockedBloomFilter::with_num_bits(65 * 512)
        .hashes(6)
        .unwrap();
    let other_layout = SplitBlockBloomFilter::with_num_blocks(64).unwrap();
    let mine = f.range_splitter(4);
    for (splitter, parts) in [
        (
            other_size.range_splitter(4),
            vec![other_size.range_splitter(4).split(&hashes)],
        ),
        (
            other_layout.range_splitter(4),
            vec![other_layout.range_splitter(4).split(&hashes)],
        ),
        (
            mine.clone(),
            vec![mine.split(&hashes), f.range_splitter(3).split(&hashes)],
        ),
        (mine.clone(), vec![RangeSplit::default()]),
    ] {
        let e = f.par_insert_split(&splitter, &parts).unwrap_err();
        assert!(matches!(e, Error::RangeMismatch(_)), "{e}");
        assert!(e.to_string().contains("range_splitter"), "{e}");
        assert!(f == empty);
    }
    f.par_insert_split(&mine, &[mine.split(&hashes)]).unwrap();
    assert!(hashes.iter().all(|&h| f.contains_hash(h)));
}
