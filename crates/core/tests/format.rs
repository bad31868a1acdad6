//! Serialization: round trips for every kind and hasher, and typed errors (never a panic)
//! for truncated, corrupted and hostile input.

mod common;

use bloomforge_core::format::{Header, HEADER_LEN};
use bloomforge_core::*;
use common::SplitMix64;
use proptest::prelude::*;

fn filled_blocked() -> BlockedBloomFilter {
    let mut f = BlockedBloomFilter::with_false_pos(0.01)
        .seed(9)
        .expected_items(2000)
        .unwrap();
    f.insert_batch(&SplitMix64(1).keys(2000));
    f
}

#[test]
fn round_trips() {
    let keys = SplitMix64(1).keys(2000);
    let b = filled_blocked();
    let back = BlockedBloomFilter::from_bytes(&b.to_bytes()).unwrap();
    assert_eq!(back, b);
    assert!(keys.iter().all(|k| back.contains(k)));
    let mut via_io = Vec::new();
    b.write_to(&mut via_io).unwrap();
    assert_eq!(BlockedBloomFilter::read_from(via_io.as_slice()).unwrap(), b);

    let mut s = SplitBlockBloomFilter::with_false_pos(0.01)
        .expected_items(2000)
        .unwrap();
    s.insert_batch(&keys);
    let bytes = s.to_bytes();
    assert_eq!(
        &bytes[HEADER_LEN..],
        s.as_bytes(),
        "split payload is the Parquet bitset"
    );
    assert_eq!(SplitBlockBloomFilter::from_bytes(&bytes).unwrap(), s);

    let mut st = StandardBloomFilter::with_num_bits(10_007)
        .seed(3)
        .hashes(7)
        .unwrap();
    st.insert_batch(&keys[..500]);
    let back = StandardBloomFilter::from_bytes(&st.to_bytes()).unwrap();
    assert_eq!(back, st);
    let mut via_io = Vec::new();
    st.write_to(&mut via_io).unwrap();
    assert_eq!(
        StandardBloomFilter::read_from(via_io.as_slice()).unwrap(),
        st
    );

    let header = Header::parse(&b.to_bytes()).unwrap();
    assert_eq!(header.seed, 9);
    assert!((header.items as f64 - 2000.0).abs() < 100.0);
}

#[test]
fn keyed_filters_need_their_key() {
    let key = [0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321, 77, 78];
    let mut f = BlockedBloomFilter::with_num_bits(4096)
        .hasher(KeyedHasher::with_key(key))
        .hashes(5)
        .unwrap();
    f.insert(&"secret");
    let bytes = f.to_bytes();
    assert!(
        !bytes
            .windows(8)
            .any(|w| w == key[0].to_le_bytes() || w == key[1].to_le_bytes()),
        "the key is not stored"
    );
    assert_eq!(
        BlockedBloomFilter::from_bytes_with_hasher(&bytes, DefaultHasher::default()).unwrap_err(),
        Error::HasherMismatch
    );
    assert_eq!(
        BlockedBloomFilter::from_bytes(&bytes).unwrap_err(),
        Error::HasherMismatch
    );
    let back =
        BlockedBloomFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(key)).unwrap();
    assert!(back.contains(&"secret"));
}

#[test]
fn wrong_kind_version_and_checksum_are_errors() {
    let bytes = filled_blocked().to_bytes();
    assert!(matches!(
        SplitBlockBloomFilter::from_bytes(&bytes),
        Err(Error::Corrupt { .. })
    ));
    assert!(matches!(
        StandardBloomFilter::from_bytes(&bytes),
        Err(Error::Corrupt { .. })
    ));
    let mut v = bytes.clone();
    v[4] = 2;
    assert_eq!(
        BlockedBloomFilter::from_bytes(&v).unwrap_err(),
        Error::UnsupportedVersion(2)
    );
    let mut v = bytes.clone();
    *v.last_mut().unwrap() ^= 1;
    assert!(matches!(
        BlockedBloomFilter::from_bytes(&v),
        Err(Error::Corrupt { .. })
    ));
    // A header announcing a huge payload: no allocation, a typed error.
    let mut v = bytes[..HEADER_LEN].to_vec();
    v[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(BlockedBloomFilter::from_bytes(&v).is_err());
    assert!(BlockedBloomFilter::read_from(v.as_slice()).is_err());
    // Bad k survives the checksum (it is in the header) but not the constructor.
    let mut v = bytes.clone();
    v[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert!(matches!(
        BlockedBloomFilter::from_bytes(&v),
        Err(Error::InvalidHashCount { .. })
    ));
}

#[test]
fn every_truncation_and_header_bit_flip_is_an_error() {
    let bytes = filled_blocked().to_bytes();
    for len in 0..bytes.len() {
        assert!(
            BlockedBloomFilter::from_bytes(&bytes[..len]).is_err(),
            "len {len}"
        );
        assert!(BlockedBloomFilter::read_from(&bytes[..len]).is_err());
    }
    for bit in 0..HEADER_LEN * 8 {
        let mut v = bytes.clone();
        v[bit / 8] ^= 1 << (bit % 8);
        // Flips in the seed or item count give a valid filter; nothing may panic.
        let _ = BlockedBloomFilter::from_bytes(&v);
        let _ = SplitBlockBloomFilter::from_bytes(&v);
        let _ = StandardBloomFilter::from_bytes(&v);
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..400), magic in any::<bool>()) {
        if magic && bytes.len() >= 8 {
            bytes[..4].copy_from_slice(b"BLMF");
            bytes[4..6].copy_from_slice(&1u16.to_le_bytes());
        }
        let _ = BlockedBloomFilter::from_bytes(&bytes);
        let _ = SplitBlockBloomFilter::from_bytes(&bytes);
        let _ = StandardBloomFilter::from_bytes(&bytes);
        let _ = BlockedBloomFilter::read_from(bytes.as_slice());
        let _ = SplitBlockBloomFilter::from_parquet_bitset(&bytes);
    }
}
