//! Serialization: round trips (both permutation families, saturated counters, keyed
//! hashing), and refusal of other kinds, wrong hashers, truncated, corrupted and
//! deliberately resealed hostile input (typed errors, never a panic or a table whose
//! deletes misbehave).

use bloomforge_core::format::{self, Header, HEADER_LEN};
use bloomforge_core::{BlockedBloomFilter, Error, KeyedHasher};
use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};

fn small(buckets: u64, counter_bits: u32) -> DLeftCountingBloomFilter {
    let mut f = DLeftCountingBloomFilter::builder()
        .subtables(4)
        .buckets_per_subtable(buckets)
        .cells_per_bucket(8)
        .remainder_bits(10)
        .counter_bits(counter_bits)
        .seed(11)
        .build()
        .unwrap();
    for i in 0..300u64 {
        f.insert(&i).unwrap();
        if i % 4 == 0 {
            f.insert(&i).unwrap();
            f.insert(&i).unwrap();
        }
    }
    for i in 0..30u64 {
        f.remove(&i).unwrap();
    }
    f
}

fn is_corrupt<T>(r: Result<T, DLeftError>) -> bool {
    matches!(r, Err(DLeftError::Core(Error::Corrupt { .. })))
}

#[test]
fn round_trips_keep_every_cell() {
    // Power-of-two and general bucket counts; 2-bit counters saturate at 3 (keys inserted
    // three times), 4-bit ones do not.
    // 20_000 buckets: a table over 64 KiB, which `write_to` streams in several pieces.
    for (buckets, c) in [(64, 2), (50, 2), (64, 4), (37, 4), (20_000, 2)] {
        let f = small(buckets, c);
        let bytes = f.to_bytes();
        let h = Header::parse(&bytes).unwrap();
        assert_eq!((h.num_hashes, h.items), (4, f.len()));
        assert_eq!(h.num_bits, f.memory_bits());
        let mut g = DLeftCountingBloomFilter::from_bytes(&bytes).unwrap();
        assert_eq!(g, f);
        for i in 0..300u64 {
            assert_eq!(g.count(&i), f.count(&i), "key {i}");
        }
        // The copy keeps working: deletes find their cells.
        for i in 30..300u64 {
            g.remove(&i).unwrap();
        }
        assert!(g.validate().is_ok());
        let mut out = Vec::new();
        f.write_to(&mut out).unwrap();
        assert_eq!(out, bytes, "write_to streams the bytes of to_bytes");
        out.extend_from_slice(b"trailing");
        assert_eq!(DLeftCountingBloomFilter::read_from(&out[..]).unwrap(), f);
    }
}

#[test]
fn keyed_filters_need_their_key() {
    let key = [3u64, 1, 4, 1];
    let mut f = DLeftCountingBloomFilter::builder()
        .buckets_per_subtable(32)
        .hasher(KeyedHasher::with_key(key))
        .build()
        .unwrap();
    f.insert(&"secret").unwrap();
    let bytes = f.to_bytes();
    let g = DLeftCountingBloomFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(key))
        .unwrap();
    assert!(g.contains(&"secret"));
    for wrong in [
        DLeftCountingBloomFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key([0; 4]))
            .err(),
        DLeftCountingBloomFilter::from_bytes(&bytes).err(),
    ] {
        assert_eq!(wrong, Some(DLeftError::Core(Error::HasherMismatch)));
    }
}

#[test]
fn other_kinds_are_refused_both_ways() {
    let dleft = small(64, 2).to_bytes();
    assert!(BlockedBloomFilter::from_bytes(&dleft).is_err());
    let blocked = BlockedBloomFilter::with_num_bits(4096)
        .hashes(4)
        .unwrap()
        .to_bytes();
    assert!(is_corrupt(DLeftCountingBloomFilter::from_bytes(&blocked)));
}

#[test]
fn truncated_and_changed_bytes_are_errors() {
    let bytes = small(50, 2).to_bytes();
    for len in 0..bytes.len() {
        assert!(
            DLeftCountingBloomFilter::from_bytes(&bytes[..len]).is_err(),
            "length {len}"
        );
        assert!(
            DLeftCountingBloomFilter::read_from(&bytes[..len]).is_err(),
            "length {len}"
        );
    }
    // The checksum covers header and payload: any changed byte is refused.
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0x21;
        assert!(
            DLeftCountingBloomFilter::from_bytes(&b).is_err(),
            "byte {at}"
        );
    }
}

/// `bytes` with `edit` applied to the payload and the checksum recomputed (what a hostile
/// writer can produce).
fn resealed(bytes: &[u8], edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut b = bytes.to_vec();
    edit(&mut b[HEADER_LEN..]);
    format::reseal(&mut b);
    b
}

#[test]
fn resealed_hostile_payloads_are_refused_or_well_formed() {
    let f = small(50, 2);
    let bytes = f.to_bytes();
    let put32 =
        |at: usize, v: u32| move |p: &mut [u8]| p[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let put64 =
        |at: usize, v: u64| move |p: &mut [u8]| p[at..at + 8].copy_from_slice(&v.to_le_bytes());
    // Parameters out of range or inconsistent with the header or the table length.
    for edit in [
        put32(0, 0),
        put32(0, 3),
        put32(0, 9),
        put32(4, 0),
        put32(4, 17),
        put32(8, 0),
    ] {
        assert!(is_corrupt(DLeftCountingBloomFilter::from_bytes(&resealed(
            &bytes, edit
        ))));
    }
    for edit in [put32(8, 11), put32(12, 9), put32(12, 0)] {
        assert!(is_corrupt(DLeftCountingBloomFilter::from_bytes(&resealed(
            &bytes, edit
        ))));
    }
    for edit in [put64(16, 0), put64(16, 51), put64(16, u64::MAX)] {
        assert!(is_corrupt(DLeftCountingBloomFilter::from_bytes(&resealed(
            &bytes, edit
        ))));
    }
    // Counts that disagree with the table. (2-bit counters saturated here, so `len` is
    // not checkable on this one; occupied is.)
    for edit in [put64(40, f.occupied_cells() + 1), put64(40, 0)] {
        assert!(is_corrupt(DLeftCountingBloomFilter::from_bytes(&resealed(
            &bytes, edit
        ))));
    }
    let unsaturated = small(50, 4);
    let ub = unsaturated.to_bytes();
    for len in [0, unsaturated.len() - 1, unsaturated.len() + 1] {
        let b = resealed(&ub, put64(32, len));
        assert!(
            is_corrupt(DLeftCountingBloomFilter::from_bytes(&b)),
            "len {len}"
        );
    }
    // An empty cell (counter 0) with a remainder, found by scanning for a cell to spoil.
    let mut spoiled = 0;
    for at in 48..bytes.len() - HEADER_LEN {
        for bit in 0..8 {
            let b = resealed(&bytes, |p| p[at] ^= 1 << bit);
            match DLeftCountingBloomFilter::from_bytes(&b) {
                // Some flips only move a stored remainder or counter and keep every
                // invariant: then the filter is well formed and its deletes are safe.
                Ok(g) => assert!(g.validate().is_ok()),
                Err(e) => {
                    assert!(
                        matches!(e, DLeftError::Core(Error::Corrupt { .. })),
                        "{e:?}"
                    );
                    spoiled += 1;
                }
            }
        }
        if at > 48 + 200 {
            break;
        }
    }
    assert!(spoiled > 0);
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip() {
    let f = small(64, 2);
    let json = serde_json::to_string(&f).unwrap();
    let g: DLeftCountingBloomFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(g, f);
    assert!(serde_json::from_str::<DLeftCountingBloomFilter>("[0, 1, 2]").is_err());
}
