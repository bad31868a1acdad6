//! Serialization: round trips for both layouts and both hashers, refusal of other kinds,
//! wrong hashers, truncated and corrupted input (typed errors, never a panic), and the
//! `serde` feature.

use bloomforge_core::format::{self, decode, encode, FilterKind, Header, HEADER_LEN};
use bloomforge_core::hash::DefaultHasher;
use bloomforge_core::{BlockedBloomFilter, Error, KeyedHasher};
use bloomforge_counting::{CounterLayout, CountingBloomFilter, CountingError};

const KEY: [u64; 4] = [9, 8, 7, 6];

fn filled(layout: CounterLayout, counters: u64) -> CountingBloomFilter {
    let mut f =
        CountingBloomFilter::with_shape(layout, counters, 5, DefaultHasher::with_seed(42)).unwrap();
    for i in 0..200u64 {
        f.insert(&i);
        if i % 3 == 0 {
            f.insert(&i);
        }
    }
    for i in 0..20u64 {
        f.remove(&i).unwrap();
    }
    f
}

/// Re-encodes `bytes` with `payload` (fresh length and checksum), other fields kept.
fn reseal(bytes: &[u8], payload: Vec<u8>) -> Vec<u8> {
    let h = Header::parse(bytes).unwrap();
    encode(
        h.kind,
        &DefaultHasher::with_seed(h.seed),
        h.num_hashes,
        h.num_bits,
        h.items,
        payload,
    )
}

fn is_corrupt(r: Result<CountingBloomFilter, CountingError>) -> bool {
    matches!(r, Err(CountingError::Core(Error::Corrupt { .. })))
}

#[test]
fn round_trips_keep_every_counter() {
    for (layout, counters) in [
        (CounterLayout::Blocked, 1024),
        (CounterLayout::Standard, 1000),
        (CounterLayout::Standard, 129),
        // Over 64 KiB of counters: `write_to` streams it in several pieces.
        (CounterLayout::Blocked, 300_032),
        (CounterLayout::Standard, 300_001),
    ] {
        let f = filled(layout, counters);
        let bytes = f.to_bytes();
        let h = Header::parse(&bytes).unwrap();
        assert_eq!(h.num_bits, 4 * f.num_counters());
        assert_eq!(h.num_hashes, 5);
        assert_eq!(bytes.len(), HEADER_LEN + f.num_blocks() * 64);
        let g = CountingBloomFilter::from_bytes(&bytes).unwrap();
        assert_eq!(g, f);
        assert_eq!(g.layout(), layout);
        assert_eq!(g.num_counters(), f.num_counters());
        for i in 0..200u64 {
            assert_eq!(g.count(&i), f.count(&i), "key {i}");
        }
        // The same bytes as `format::encode` of the whole payload in memory.
        let payload: Vec<u8> = f
            .as_lines()
            .iter()
            .flat_map(|line| line.words.iter().flat_map(|w| w.to_le_bytes()))
            .collect();
        let kind = match layout {
            CounterLayout::Blocked => FilterKind::CountingBlocked,
            CounterLayout::Standard => FilterKind::CountingStandard,
        };
        let hasher = DefaultHasher::with_seed(42);
        assert_eq!(
            bytes,
            encode(kind, &hasher, 5, h.num_bits, h.items, payload)
        );
        // Through io, and from the atomic twin's live counters.
        let mut out = Vec::new();
        f.write_to(&mut out).unwrap();
        assert_eq!(out, bytes);
        let mut from_atomic = Vec::new();
        bloomforge_counting::AtomicCountingBloomFilter::from(f.clone())
            .write_to(&mut from_atomic)
            .unwrap();
        // The same counters; the header's item count is the atomic filter's estimate
        // (it keeps no exact count) where the plain filter writes its `len`.
        assert!(CountingBloomFilter::from_bytes(&from_atomic).unwrap() == f);
        assert_eq!(from_atomic.len(), bytes.len());
        let mut with_trailer = out.clone();
        with_trailer.extend_from_slice(b"next file");
        assert_eq!(
            CountingBloomFilter::read_from(&with_trailer[..]).unwrap(),
            f
        );
    }
}

#[test]
fn keyed_filters_need_their_key() {
    let mut f =
        CountingBloomFilter::with_shape(CounterLayout::Blocked, 512, 4, KeyedHasher::with_key(KEY))
            .unwrap();
    f.insert(&"secret");
    let bytes = f.to_bytes();
    let g =
        CountingBloomFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(KEY)).unwrap();
    assert_eq!(g, f);
    assert!(g.contains(&"secret"));
    for wrong in [
        CountingBloomFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key([1, 2, 3, 4]))
            .err(),
        CountingBloomFilter::from_bytes(&bytes).err(),
    ] {
        assert_eq!(wrong, Some(CountingError::Core(Error::HasherMismatch)));
    }
    // A seeded filter read with another seed.
    let plain = filled(CounterLayout::Blocked, 512).to_bytes();
    assert_eq!(
        CountingBloomFilter::from_bytes_with_hasher(&plain, DefaultHasher::with_seed(1)).err(),
        Some(CountingError::Core(Error::HasherMismatch))
    );
}

#[test]
fn other_kinds_are_refused_both_ways() {
    let counting = filled(CounterLayout::Blocked, 512).to_bytes();
    assert!(BlockedBloomFilter::from_bytes(&counting).is_err());
    let blocked = BlockedBloomFilter::with_num_bits(512 * 4)
        .hashes(5)
        .unwrap()
        .to_bytes();
    assert!(is_corrupt(CountingBloomFilter::from_bytes(&blocked)));
    // A blocked-layout payload relabelled as standard and vice versa still decodes only
    // as a well-formed filter of the label's layout.
    let mut relabelled = counting.clone();
    relabelled[6] = FilterKind::CountingStandard as u8;
    format::reseal(&mut relabelled);
    let g = CountingBloomFilter::from_bytes(&relabelled).unwrap();
    assert_eq!(g.layout(), CounterLayout::Standard);
}

#[test]
fn bad_sizes_and_stray_counters_are_corrupt() {
    let f = filled(CounterLayout::Standard, 200);
    let bytes = f.to_bytes();
    let h = Header::parse(&bytes).unwrap();
    let payload = bytes[HEADER_LEN..].to_vec();
    let with_bits = |bits: u64| {
        let mut b = bytes.clone();
        b[24..32].copy_from_slice(&bits.to_le_bytes());
        format::reseal(&mut b);
        b
    };
    // Not a whole number of counters, zero, more lines than the payload, fewer lines.
    for bits in [
        h.num_bits + 1,
        0,
        h.num_bits + 4 * 128,
        4 * 100,
        u64::MAX - 3,
    ] {
        assert!(
            is_corrupt(CountingBloomFilter::from_bytes(&with_bits(bits))),
            "{bits}"
        );
    }
    // Fewer counters but the same number of lines: fine while the dropped ones are zero.
    assert!(
        CountingBloomFilter::from_bytes(&with_bits(4 * 129)).is_ok() || {
            // (counters 129..200 hold keys: refused as stray counters)
            is_corrupt(CountingBloomFilter::from_bytes(&with_bits(4 * 129)))
        }
    );
    // A non-zero counter past the filter's size (standard layout, 200 of 256 slots).
    let mut stray = payload.clone();
    *stray.last_mut().unwrap() = 0x10;
    assert!(is_corrupt(CountingBloomFilter::from_bytes(&reseal(
        &bytes, stray
    ))));
    // Blocked filters hold whole lines.
    let b = filled(CounterLayout::Blocked, 256).to_bytes();
    let mut odd = b.clone();
    odd[24..32].copy_from_slice(&(4u64 * 200).to_le_bytes());
    format::reseal(&mut odd);
    assert!(is_corrupt(CountingBloomFilter::from_bytes(&odd)));
    // Probe counts outside 1..=64.
    for k in [0u32, 65, u32::MAX] {
        let mut bad = bytes.clone();
        bad[8..12].copy_from_slice(&k.to_le_bytes());
        format::reseal(&mut bad);
        assert!(matches!(
            CountingBloomFilter::from_bytes(&bad),
            Err(CountingError::Core(Error::InvalidHashCount { .. }))
        ));
    }
    // Unresealed edits fail the checksum, which covers header and payload.
    let mut edited = bytes.clone();
    edited[8] ^= 1;
    assert!(is_corrupt(CountingBloomFilter::from_bytes(&edited)));
    let mut flipped = bytes.clone();
    flipped[HEADER_LEN + 3] ^= 0x40;
    assert!(is_corrupt(CountingBloomFilter::from_bytes(&flipped)));
}

#[test]
fn truncated_and_mutated_input_never_panics() {
    let f = filled(CounterLayout::Standard, 300);
    let bytes = f.to_bytes();
    for len in 0..bytes.len() {
        assert!(
            CountingBloomFilter::from_bytes(&bytes[..len]).is_err(),
            "length {len}"
        );
        assert!(
            CountingBloomFilter::read_from(&bytes[..len]).is_err(),
            "length {len}"
        );
    }
    // Every single-byte change is an error: the checksum covers the header too.
    for at in 0..bytes.len() {
        for x in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[at] ^= x;
            assert!(
                CountingBloomFilter::from_bytes(&b).is_err(),
                "byte {at} ^ {x:#x}"
            );
        }
    }
    // The header announces the payload: decode() agrees with from_bytes on what it holds.
    let (h, payload, _) =
        decode::<DefaultHasher>(&bytes, FilterKind::CountingStandard, None).unwrap();
    assert_eq!(h.payload_len as usize, payload.len());
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip() {
    let f = filled(CounterLayout::Blocked, 1024);
    let json = serde_json::to_string(&f).unwrap();
    let g: CountingBloomFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(g, f);
    let keyed = CountingBloomFilter::with_shape(
        CounterLayout::Standard,
        100,
        3,
        KeyedHasher::with_key(KEY),
    )
    .unwrap();
    let json = serde_json::to_string(&keyed).unwrap();
    assert!(serde_json::from_str::<CountingBloomFilter<KeyedHasher>>(&json).is_err());
}

/// From 16 MiB on a table is read back on every thread of the pool, in huge-page-sized
/// chunks: the copy equals the original, on a one-thread pool and on several, for both
/// layouts (a last partial chunk included).
#[test]
fn large_tables_round_trip_on_every_pool() {
    for (layout, counters) in [
        (CounterLayout::Blocked, (1u64 << 25) + 128 * 7),
        (CounterLayout::Standard, (1u64 << 25) + 1001),
    ] {
        let f = filled(layout, counters);
        let bytes = f.to_bytes();
        assert!(bytes.len() > 16 << 20);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let back = pool
                .install(|| CountingBloomFilter::from_bytes(&bytes))
                .unwrap();
            assert!(back == f, "{layout:?}, {threads} threads");
            assert_eq!(back.to_bytes(), bytes);
        }
    }
}
