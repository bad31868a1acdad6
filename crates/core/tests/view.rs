//! Zero-copy views: same answers as the filter they were written from, and typed errors
//! for every input they cannot borrow.

use bloomforge_core::{
    Backend, BlockedBloomFilter, BlockedBloomFilterView, Error, KeyedHasher, SplitBlockBloomFilter,
    SplitBlockBloomFilterView,
};
use std::hash::BuildHasher;

/// `bytes` copied into a buffer at a 64-byte boundary plus `shift` bytes; the returned
/// range is where they sit.
fn placed(bytes: &[u8], shift: usize) -> (Vec<u8>, std::ops::Range<usize>) {
    let mut buf = vec![0u8; bytes.len() + 128];
    let at = buf.as_ptr().align_offset(64) + shift;
    buf[at..at + bytes.len()].copy_from_slice(bytes);
    (buf, at..at + bytes.len())
}

fn keys(n: u64, salt: u64) -> Vec<u64> {
    (0..n)
        .map(|i| {
            (i ^ salt)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(17)
        })
        .collect()
}

#[test]
fn blocked_view_answers_as_the_filter() {
    let members = keys(5_000, 1);
    let others = keys(20_000, 2);
    let mut f = BlockedBloomFilter::with_false_pos(0.01)
        .expected_items(5_000)
        .unwrap();
    f.insert_batch(&members);
    let (buf, range) = placed(&f.to_bytes(), 0);
    let mut view = BlockedBloomFilterView::from_bytes(&buf[range.clone()]).unwrap();
    assert_eq!(view.num_bits(), f.num_bits());
    assert_eq!(view.num_hashes(), f.num_hashes());
    assert_eq!(view.num_blocks(), f.num_blocks());
    assert_eq!(view.blocks(), f.blocks());
    assert_eq!(view.count_ones(), f.count_ones());
    assert_eq!(view.expected_false_pos(), f.expected_false_pos());
    assert_eq!(view.to_filter(), f);
    let all: Vec<u64> = members.iter().chain(&others).copied().collect();
    let expect: Vec<bool> = all.iter().map(|k| f.contains(k)).collect();
    assert!(expect[..members.len()].iter().all(|&b| b));
    for backend in Backend::available() {
        view.set_backend(backend).unwrap();
        let single: Vec<bool> = all.iter().map(|k| view.contains(k)).collect();
        assert_eq!(single, expect, "{backend:?}");
        let mut out = vec![false; all.len()];
        view.contains_batch(&all, &mut out).unwrap();
        assert_eq!(out, expect, "{backend:?}");
        let hashes: Vec<u64> = all.iter().map(|k| view.hasher().hash_one(k)).collect();
        view.contains_hash_batch(&hashes, &mut out).unwrap();
        assert_eq!(out, expect, "{backend:?}");
    }
    let mut short = vec![false; 3];
    assert!(matches!(
        view.contains_batch(&all, &mut short),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(format!("{view:?}").contains("BlockedBloomFilterView"));
}

#[test]
fn split_view_answers_as_the_filter() {
    let members = keys(3_000, 3);
    let others = keys(10_000, 4);
    let mut f = SplitBlockBloomFilter::with_false_pos(0.01)
        .expected_items(3_000)
        .unwrap();
    f.insert_batch(&members);
    let (buf, range) = placed(&f.to_bytes(), 32);
    let view = SplitBlockBloomFilterView::from_bytes(&buf[range]).unwrap();
    assert_eq!(view.to_filter(), f);
    for k in members.iter().chain(&others) {
        assert_eq!(view.contains(k), f.contains(k));
    }
    let mut out = vec![false; others.len()];
    view.contains_batch(&others, &mut out).unwrap();
    assert_eq!(
        out,
        others.iter().map(|k| f.contains(k)).collect::<Vec<_>>()
    );
}

#[test]
fn misaligned_buffers_are_refused_not_copied() {
    let mut f = BlockedBloomFilter::with_num_bits(4096).hashes(6).unwrap();
    f.insert(&1u64);
    let bytes = f.to_bytes();
    for shift in [1, 8, 32] {
        let (buf, range) = placed(&bytes, shift);
        assert!(matches!(
            BlockedBloomFilterView::from_bytes(&buf[range]),
            Err(Error::ZeroCopy { .. })
        ));
    }
    let mut s = SplitBlockBloomFilter::with_num_blocks(8).unwrap();
    s.insert(&1u64);
    let (buf, range) = placed(&s.to_bytes(), 16);
    assert!(matches!(
        SplitBlockBloomFilterView::from_bytes(&buf[range]),
        Err(Error::ZeroCopy { .. })
    ));
}

#[test]
fn corrupt_truncated_and_foreign_bytes_are_errors() {
    let mut f = BlockedBloomFilter::with_num_bits(8192).hashes(7).unwrap();
    f.insert_batch(&keys(100, 5));
    let bytes = f.to_bytes();

    // A flipped payload bit: the checksum catches it; the unverified view opens and still
    // answers (wrongly for at most the keys touching that bit), without undefined behaviour.
    let mut bad = bytes.clone();
    *bad.last_mut().unwrap() ^= 0x80;
    let (buf, range) = placed(&bad, 0);
    assert!(matches!(
        BlockedBloomFilterView::from_bytes(&buf[range.clone()]),
        Err(Error::Corrupt { .. })
    ));
    let unverified = BlockedBloomFilterView::from_bytes_unverified(&buf[range]).unwrap();
    assert_eq!(unverified.count_ones().abs_diff(f.count_ones()), 1);

    // Every truncation.
    let (buf, range) = placed(&bytes, 0);
    for len in 0..bytes.len() {
        assert!(BlockedBloomFilterView::from_bytes(&buf[range.start..range.start + len]).is_err());
    }

    // A split-block filter's bytes are not a blocked filter, and vice versa.
    let s = SplitBlockBloomFilter::with_num_blocks(16).unwrap();
    let (buf, range) = placed(&s.to_bytes(), 0);
    assert!(matches!(
        BlockedBloomFilterView::from_bytes(&buf[range]),
        Err(Error::Corrupt { .. })
    ));
    let (buf, range) = placed(&bytes, 0);
    assert!(matches!(
        SplitBlockBloomFilterView::from_bytes(&buf[range]),
        Err(Error::Corrupt { .. })
    ));
}

#[test]
fn keyed_filters_need_their_key() {
    let hasher = KeyedHasher::with_key([1, 2, 3, 4]);
    let mut f = BlockedBloomFilter::with_false_pos(0.01)
        .hasher(hasher.clone())
        .expected_items(100)
        .unwrap();
    f.insert(&"secret");
    let (buf, range) = placed(&f.to_bytes(), 0);
    assert!(matches!(
        BlockedBloomFilterView::from_bytes(&buf[range.clone()]),
        Err(Error::HasherMismatch)
    ));
    let view = BlockedBloomFilterView::from_bytes_with_hasher(&buf[range], hasher).unwrap();
    assert!(view.contains(&"secret"));
    assert_eq!(view.to_filter(), f);
}
