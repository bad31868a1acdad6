//! Byte-for-byte compatibility with `parquet::bloom_filter::Sbbf`.

mod common;

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
    let mut rng = SplitMix64(99);
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
