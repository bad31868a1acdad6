//! Byte-for-byte compatibility with `parquet::bloom_filter::Sbbf`.

use crate::common;

use bloomforge_core::{parquet_hash, SplitBlockBloomFilter};
use common::SplitMix64;
use parquet::bloom_filter::Sbbf;

fn parquet_bytes(sbbf: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    sbbf.write_bitset(&mut out).unwrap();
    out
}

#[test]
fn integer_keys_are_byte_identical() {
    let mut rng = SplitMix64::new(99);
    for &(num_bytes, n) in &[
        (32usize, 10usize),
        (1024, 500),
        (8192, 4000),
        (1 << 16, 60_000),
        (1 << 20, 100_000),
    ] {
        let keys: Vec<i64> = (0..n).map(|_| rng.next_u64() as i64).collect();
        let mut theirs = Sbbf::new_with_num_of_bytes(num_bytes);
        let mut ours = SplitBlockBloomFilter::with_num_blocks((num_bytes / 32) as u64).unwrap();
        for k in &keys {
            theirs.insert(k);
            ours.insert_hash(parquet_hash(&k.to_le_bytes()));
        }
        assert_eq!(
            ours.as_bytes(),
            parquet_bytes(&theirs).as_slice(),
            "{num_bytes} bytes"
        );
        assert_eq!(ours.to_parquet_bytes(), parquet_bytes(&theirs));
        // Each answers the other's queries identically, members and non-members.
        let probes: Vec<i64> = keys
            .iter()
            .copied()
            .chain((0..5000).map(|_| rng.next_u64() as i64))
            .collect();
        let back = Sbbf::new(ours.as_bytes());
        let read = SplitBlockBloomFilter::from_parquet_bitset(&parquet_bytes(&theirs)).unwrap();
        for p in &probes {
            let h = parquet_hash(&p.to_le_bytes());
            assert_eq!(theirs.check(p), ours.contains_hash(h));
            assert_eq!(back.check(p), read.contains_hash(h));
        }
    }
}

#[test]
fn string_keys_are_byte_identical() {
    let keys: Vec<String> = (0..3000)
        .map(|i| format!("https://example.com/a/very/long/shared/prefix/{i}"))
        .collect();
    let mut theirs = Sbbf::new_with_num_of_bytes(4096);
    let mut ours = SplitBlockBloomFilter::with_num_blocks(128).unwrap();
    for k in &keys {
        theirs.insert(k.as_str());
        ours.insert_hash(parquet_hash(k.as_bytes()));
    }
    assert_eq!(ours.as_bytes(), parquet_bytes(&theirs).as_slice());
    let mut hashes: Vec<u64> = keys.iter().map(|k| parquet_hash(k.as_bytes())).collect();
    hashes.extend((0..2000).map(|i| parquet_hash(format!("absent-{i}").as_bytes())));
    let mut out = vec![false; hashes.len()];
    ours.contains_hash_batch(&hashes, &mut out).unwrap();
    for (i, o) in out.iter().enumerate() {
        let key = if i < keys.len() {
            keys[i].clone()
        } else {
            format!("absent-{}", i - keys.len())
        };
        assert_eq!(*o, theirs.check(key.as_str()));
    }
}

/// A Parquet column's filter stored in the project's format with `ParquetHasher`: the
/// column type travels in the header, a reader for another type is refused, integer keys
/// hash through `Hash` as Parquet's plain encoding, and a zero-copy view answers alike.
#[test]
fn parquet_hashed_filters_round_trip_through_the_format() {
    use bloomforge_core::format::{FilterKind, HashAlgorithm, Header};
    use bloomforge_core::{Error, ParquetHasher, SplitBlockBloomFilterView};

    let mut rng = SplitMix64::new(7);
    let keys: Vec<i64> = (0..4000).map(|_| rng.next_u64() as i64).collect();
    let mut theirs = Sbbf::new_with_num_of_bytes(8192);
    let bitset = {
        for k in &keys {
            theirs.insert(k);
        }
        parquet_bytes(&theirs)
    };
    let read = SplitBlockBloomFilter::from_parquet_bitset(&bitset).unwrap();
    let ours = SplitBlockBloomFilter::from_blocks(
        read.blocks().to_vec(),
        read.num_hashes(),
        ParquetHasher::INT64,
    )
    .unwrap();
    let bytes = ours.to_bytes();
    let header = Header::parse(&bytes).unwrap();
    assert_eq!(header.kind, FilterKind::SplitBlock256);
    assert_eq!(header.algorithm, HashAlgorithm::ParquetXxh64);
    assert_eq!(header.seed, 2, "INT64 is physical type 2, no type length");

    let hasher = ParquetHasher::of_bytes(&bytes).unwrap();
    assert_eq!(hasher, ParquetHasher::INT64);
    let back = SplitBlockBloomFilter::from_bytes_with_hasher(&bytes, hasher).unwrap();
    assert_eq!(back.as_bytes(), bitset.as_slice());
    // A view borrows 32-byte-aligned blocks: place the bytes at such an address.
    let mut buf = vec![0u8; bytes.len() + 32];
    let at = buf.as_ptr().align_offset(32);
    buf[at..at + bytes.len()].copy_from_slice(&bytes);
    let view_bytes = &buf[at..at + bytes.len()];
    let view = SplitBlockBloomFilterView::from_bytes_with_hasher(view_bytes, hasher).unwrap();
    for p in keys
        .iter()
        .copied()
        .chain((0..5000).map(|_| rng.next_u64() as i64))
    {
        assert_eq!(back.contains(&p), theirs.check(&p), "{p}");
        assert_eq!(view.contains(&p), theirs.check(&p), "{p}");
    }

    // Another column type, the default hasher, and a filter of the default hasher.
    assert!(matches!(
        SplitBlockBloomFilter::from_bytes_with_hasher(&bytes, ParquetHasher::INT32),
        Err(Error::HasherMismatch)
    ));
    assert!(matches!(
        SplitBlockBloomFilter::from_bytes(&bytes),
        Err(Error::HasherMismatch)
    ));
    assert!(matches!(
        ParquetHasher::of_bytes(&read.to_bytes()),
        Err(Error::HasherMismatch)
    ));
    // A FIXED_LEN_BYTE_ARRAY(16) column keeps its length; 8 is no physical type.
    let fixed = ParquetHasher::new(7, 16).unwrap();
    let f = SplitBlockBloomFilter::from_blocks(read.blocks().to_vec(), 8, fixed).unwrap();
    assert_eq!(ParquetHasher::of_bytes(&f.to_bytes()).unwrap(), fixed);
    assert_eq!(ParquetHasher::new(8, 0), None);
}
