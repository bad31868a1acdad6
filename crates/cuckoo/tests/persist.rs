//! Serialization: round trips (with and without an occupied stash), the zero-copy view,
//! hasher and fingerprint-size checks, and corrupt, truncated or edited bytes refused with
//! typed errors.

use bloomforge_core::format::{reseal, HEADER_LEN};
use bloomforge_core::{DefaultHasher, Error};
use bloomforge_cuckoo::{CuckooError, CuckooFilter, CuckooFilterView, Fp16, Fp8};

fn full_filter() -> (CuckooFilter, Vec<u64>) {
    let mut f = CuckooFilter::builder()
        .expected_items(2000)
        .seed(11)
        .build()
        .unwrap();
    let mut keys = Vec::new();
    let mut k = 0u64;
    while f.insert(&k).is_ok() {
        keys.push(k);
        k += 1;
    }
    assert!(f.stash_occupied());
    (f, keys)
}

fn corrupt(e: CuckooError) -> bool {
    matches!(e, CuckooError::Core(Error::Corrupt { .. }))
}

#[test]
fn round_trips() {
    let (f, keys) = full_filter();
    let bytes = f.to_bytes();
    let g: CuckooFilter = CuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(g.len(), f.len());
    assert!(g.stash_occupied());
    g.validate().unwrap();
    let probe: Vec<u64> = (0..10_000).collect();
    assert!(probe.iter().all(|k| f.contains(k) == g.contains(k)));
    assert!(keys.iter().all(|k| g.contains(k)));
    assert_eq!(g.to_bytes(), bytes);

    let mut written = Vec::new();
    f.write_to(&mut written).unwrap();
    assert_eq!(written, bytes);
    let h: CuckooFilter = CuckooFilter::read_from(&written[..]).unwrap();
    assert_eq!(h.to_bytes(), bytes);

    // The view at an odd offset (unaligned loads).
    let mut shifted = vec![0u8; 1];
    shifted.extend_from_slice(&bytes);
    let view: CuckooFilterView = CuckooFilterView::from_bytes(&shifted[1..]).unwrap();
    assert_eq!(view.len(), f.len());
    assert!(probe.iter().all(|k| view.contains(k) == f.contains(k)));

    // Other fingerprint sizes.
    let mut f16 = CuckooFilter::builder()
        .expected_items(100)
        .fingerprint::<Fp16>()
        .build()
        .unwrap();
    f16.insert(&"x").unwrap();
    let g16: CuckooFilter<Fp16> = CuckooFilter::from_bytes(&f16.to_bytes()).unwrap();
    assert!(g16.contains(&"x"));
}

#[test]
fn wrong_type_or_hasher_is_refused() {
    let (f, _) = full_filter();
    let bytes = f.to_bytes();
    assert_eq!(
        CuckooFilter::<Fp8>::from_bytes(&bytes).unwrap_err(),
        CuckooError::FingerprintMismatch {
            stored: 12,
            requested: 8
        }
    );
    assert_eq!(
        CuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes_with_hasher(
            &bytes,
            DefaultHasher::with_seed(12)
        )
        .unwrap_err(),
        CuckooError::Core(Error::HasherMismatch)
    );
    let ok: CuckooFilter =
        CuckooFilter::from_bytes_with_hasher(&bytes, DefaultHasher::with_seed(11)).unwrap();
    assert_eq!(ok.len(), f.len());
    // Another kind's bytes.
    let bloom = bloomforge_core::BlockedBloomFilter::with_false_pos(0.01)
        .expected_items(100)
        .unwrap();
    assert!(corrupt(
        CuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&bloom.to_bytes()).unwrap_err()
    ));
}

#[test]
fn truncated_and_flipped_bytes_are_refused() {
    let mut f = CuckooFilter::new(300, 0.01).unwrap();
    for k in 0..200u64 {
        f.insert(&k).unwrap();
    }
    let bytes = f.to_bytes();
    for cut in 0..bytes.len() {
        assert!(CuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&bytes[..cut]).is_err());
        assert!(CuckooFilterView::<bloomforge_cuckoo::Fp12>::from_bytes(&bytes[..cut]).is_err());
    }
    for at in (0..bytes.len()).step_by(7) {
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        assert!(
            CuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&b).is_err(),
            "flip at {at}"
        );
    }
}

/// Edited fields with a valid checksum: each is caught by the payload checks.
#[test]
fn hostile_fields_are_refused() {
    let (f, _) = full_filter();
    let bytes = f.to_bytes();
    let p = HEADER_LEN;
    let edit = |at: usize, val: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + val.len()].copy_from_slice(val);
        reseal(&mut b);
        CuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&b).unwrap_err()
    };
    assert!(corrupt(edit(p, &3u32.to_le_bytes()))); // bucket size 3
    assert!(corrupt(edit(p, &8u32.to_le_bytes()))); // bucket size differs from header
    assert!(corrupt(edit(p + 4, &9u32.to_le_bytes()))); // fingerprint bits 9
    assert!(corrupt(edit(p + 8, &u64::MAX.to_le_bytes()))); // huge bucket count
    assert!(corrupt(edit(p + 8, &0u64.to_le_bytes()))); // no buckets
    assert!(corrupt(edit(p + 8, &(f.num_buckets() - 1).to_le_bytes()))); // length mismatch
    assert!(corrupt(edit(p + 20, &1u32.to_le_bytes()))); // reserved
    assert!(corrupt(edit(p + 24, &(f.len() + 1).to_le_bytes()))); // len mismatch
    assert!(corrupt(edit(p + 32, &0x1_0000u32.to_le_bytes()))); // stash fp out of range
    assert!(corrupt(edit(p + 40, &u64::MAX.to_le_bytes()))); // stash bucket out of range
    assert!(corrupt(edit(bytes.len() - 1, &[1]))); // padding
    let mut b = bytes.clone();
    b.truncate(HEADER_LEN + 10);
    b[40..48].copy_from_slice(&10u64.to_le_bytes());
    reseal(&mut b);
    assert!(corrupt(
        CuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&b).unwrap_err()
    ));
}

/// The sharded filter round-trips (same answers, same bytes), a keyed one loads with its
/// key only, and corrupt or truncated bytes are refused.
#[test]
fn concurrent_filters_round_trip_and_refuse_bad_bytes() {
    use bloomforge_core::KeyedHasher;
    use bloomforge_cuckoo::ConcurrentCuckooFilter;
    let c = ConcurrentCuckooFilter::new(50_000, 0.01).unwrap();
    for k in 0..20_000u64 {
        c.insert(&k).unwrap();
    }
    let bytes = c.to_bytes();
    let back = ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&bytes).unwrap();
    assert_eq!((back.len(), back.num_shards()), (c.len(), c.num_shards()));
    assert_eq!(back.expected_false_pos(), c.expected_false_pos());
    for k in 0..40_000u64 {
        assert_eq!(back.contains(&k), c.contains(&k), "{k}");
    }
    assert_eq!(back.to_bytes(), bytes);
    for at in [10, 100, bytes.len() / 3, bytes.len() - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 4;
        assert!(
            ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&bad).is_err(),
            "flip at {at}"
        );
        // Re-sealed, the outer checksum passes: the shard's own checks refuse it, or it
        // decodes to a filter that re-encodes to exactly these bytes.
        reseal(&mut bad);
        if let Ok(f) = ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&bad) {
            assert_eq!(f.to_bytes(), bad, "flip at {at}");
        }
    }
    for len in [
        0,
        HEADER_LEN,
        HEADER_LEN + 8,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        assert!(
            ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&bytes[..len]).is_err(),
            "len {len}"
        );
    }
    let key = KeyedHasher::with_key([5, 6, 7, 8]);
    let keyed = ConcurrentCuckooFilter::builder()
        .expected_items(5000)
        .hasher(key.clone())
        .build()
        .unwrap();
    keyed.insert("x").unwrap();
    let bytes = keyed.to_bytes();
    assert!(matches!(
        ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&bytes),
        Err(CuckooError::Core(Error::HasherMismatch))
    ));
    let back =
        ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12, _>::from_bytes_with_hasher(&bytes, key)
            .unwrap();
    assert!(back.contains("x"));
    // The plain filter's bytes are another kind.
    let (plain, _) = full_filter();
    assert!(
        ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&plain.to_bytes()).is_err()
    );
    let _ = DefaultHasher::default();
}
