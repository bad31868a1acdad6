//! The `serde` feature: filters round-trip through a text format (JSON: a sequence of
//! numbers) and a byte-string deserializer, corrupted input is refused with the format's
//! error, and keyed filters refuse to deserialize without their key.
#![cfg(feature = "serde")]

use bloomforge_core::{
    BlockedBloomFilter, KeyedHasher, SplitBlockBloomFilter, StandardBloomFilter,
};
use serde::de::value::{BytesDeserializer, Error as ValueError};
use serde::Deserialize;

fn keys() -> Vec<u64> {
    (0..500u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect()
}

macro_rules! round_trip {
    ($F:ident, $f:expr) => {{
        let mut f = $f;
        f.insert_batch(&keys());
        let json = serde_json::to_string(&f).unwrap();
        let back: $F = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        assert!(keys().iter().all(|k| back.contains(k)));
        // The byte-string path (binary formats).
        let bytes = f.to_bytes();
        let back = <$F>::deserialize(BytesDeserializer::<ValueError>::new(&bytes)).unwrap();
        assert_eq!(back, f);
        // A flipped payload byte fails the checksum: an error, not a filter.
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() ^= 1;
        let err = <$F>::deserialize(BytesDeserializer::<ValueError>::new(&bad)).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        // Not a byte sequence at all.
        assert!(serde_json::from_str::<$F>("\"text\"").is_err());
        assert!(serde_json::from_str::<$F>("[1, 2, 300]").is_err());
    }};
}

#[test]
fn plain_filters_round_trip() {
    round_trip!(
        BlockedBloomFilter,
        BlockedBloomFilter::with_false_pos(0.01)
            .expected_items(500)
            .unwrap()
    );
    round_trip!(
        SplitBlockBloomFilter,
        SplitBlockBloomFilter::with_false_pos(0.01)
            .expected_items(500)
            .unwrap()
    );
    round_trip!(
        StandardBloomFilter,
        StandardBloomFilter::with_false_pos(0.01)
            .expected_items(500)
            .unwrap()
    );
}

#[test]
fn keyed_filters_do_not_deserialize_without_the_key() {
    let f = BlockedBloomFilter::with_num_bits(4096)
        .hasher(KeyedHasher::with_key([1, 2, 3, 4]))
        .hashes(6)
        .unwrap();
    let json = serde_json::to_string(&f).unwrap();
    let err = serde_json::from_str::<BlockedBloomFilter<KeyedHasher>>(&json).unwrap_err();
    assert!(err.to_string().contains("hasher mismatch"), "{err}");
    // The bytes are the format's: the key-holder reads them back.
    let bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
    let back =
        BlockedBloomFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key([1, 2, 3, 4]))
            .unwrap();
    assert_eq!(back, f);
}
