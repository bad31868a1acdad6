//! Serialization: round trips for every kind and hasher, and typed errors (never a panic)
//! for truncated, corrupted and hostile input.

use crate::common;

use bloomforge_core::format::{Header, HEADER_LEN};
use bloomforge_core::*;
use common::SplitMix64;
use proptest::prelude::*;

fn filled_blocked() -> BlockedBloomFilter {
    let mut f = BlockedBloomFilter::with_false_pos(0.01)
        .seed(9)
        .expected_items(2000)
        .unwrap();
    f.insert_batch(&SplitMix64::new(1).keys(2000));
    f
}

#[test]
fn round_trips() {
    let keys = SplitMix64::new(1).keys(2000);
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

/// `write_to` (and `to_bytes`, which collects it) streams exactly the bytes `format::encode`
/// builds from the whole payload, for every kind, through several 64 KiB pieces for filters
/// larger than that, and reports a failing writer as `Io`.
#[test]
fn write_to_streams_the_bytes_of_to_bytes() {
    struct FailAfter(usize);
    impl std::io::Write for FailAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() > self.0 {
                return Err(std::io::Error::other("disk full"));
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let keys = SplitMix64::new(5).keys(20_000);
    for bits in [512u64, 1 << 21] {
        let mut b = BlockedBloomFilter::with_num_bits(bits).hashes(6).unwrap();
        let mut s = SplitBlockBloomFilter::with_num_bits(bits)
            .hashes(8)
            .unwrap();
        let mut st = StandardBloomFilter::with_num_bits(bits + 3)
            .hashes(5)
            .unwrap();
        b.insert_batch(&keys);
        s.insert_batch(&keys);
        st.insert_batch(&keys);
        // The reference: the whole payload in memory, through `format::encode`.
        let whole = |kind, k, num_bits, bytes: &[u8], payload: Vec<u8>| {
            let items = Header::parse(bytes).unwrap().items;
            let hasher = bloomforge_core::hash::DefaultHasher::default();
            bloomforge_core::format::encode(kind, &hasher, k, num_bits, items, payload)
        };
        let blocked_payload: Vec<u8> = b
            .blocks()
            .iter()
            .flat_map(|blk| blk.words.iter().flat_map(|w| w.to_le_bytes()))
            .collect();
        let standard_payload: Vec<u8> =
            st.as_words().iter().flat_map(|w| w.to_le_bytes()).collect();
        let (bb, sb, stb) = (b.to_bytes(), s.to_bytes(), st.to_bytes());
        use bloomforge_core::format::FilterKind;
        assert_eq!(
            bb,
            whole(FilterKind::Blocked512, 6, bits, &bb, blocked_payload)
        );
        assert_eq!(
            sb,
            whole(
                FilterKind::SplitBlock256,
                8,
                bits,
                &sb,
                s.to_parquet_bytes()
            )
        );
        assert_eq!(
            stb,
            whole(FilterKind::Standard, 5, bits + 3, &stb, standard_payload)
        );
        type WriteTo<'a> = &'a dyn Fn(&mut dyn std::io::Write) -> Result<()>;
        let cases: [(Vec<u8>, WriteTo); 3] = [
            (bb, &|w| b.write_to(w)),
            (sb, &|w| s.write_to(w)),
            (stb, &|w| st.write_to(w)),
        ];
        for (bytes, write) in cases {
            let mut out = Vec::new();
            write(&mut out).unwrap();
            assert_eq!(out, bytes, "{bits} bits");
            let failed = write(&mut FailAfter(bytes.len() / 2));
            assert!(matches!(failed, Err(Error::Io(_))), "{failed:?}");
        }
        // The atomic twins write the same bytes from their live words.
        let mut out = Vec::new();
        AtomicBlockedBloomFilter::from(b.clone())
            .write_to(&mut out)
            .unwrap();
        assert_eq!(out, b.to_bytes());
        out.clear();
        AtomicSplitBlockBloomFilter::from(s.clone())
            .write_to(&mut out)
            .unwrap();
        assert_eq!(out, s.to_bytes());
        out.clear();
        AtomicStandardBloomFilter::from(st.clone())
            .write_to(&mut out)
            .unwrap();
        assert_eq!(out, st.to_bytes());
        let atomic = AtomicStandardBloomFilter::from(st.clone());
        assert_eq!(atomic.estimated_len(), st.estimated_len());
    }
}

/// A payload that differs between `encode_to`'s checksum pass and its write pass (as an
/// atomic filter with concurrent inserts would) is an `Io` error, never a silent file that
/// fails its checksum later.
#[test]
fn payload_changing_between_passes_is_an_error() {
    use bloomforge_core::format::{encode_to, FilterKind};
    let hasher = bloomforge_core::hash::DefaultHasher::default();
    let pass = std::cell::Cell::new(0u8);
    let mut out = Vec::new();
    let r = encode_to(
        &mut out,
        FilterKind::Standard,
        &hasher,
        3,
        64,
        0,
        8,
        |sink| {
            pass.set(pass.get() + 1);
            sink(&[pass.get(); 8]);
        },
    );
    assert!(matches!(r, Err(Error::Io(_))), "{r:?}");
    // A length other than announced writes nothing.
    let mut out = Vec::new();
    let r = encode_to(
        &mut out,
        FilterKind::Standard,
        &hasher,
        3,
        64,
        0,
        16,
        |sink| sink(&[0u8; 8]),
    );
    assert!(matches!(r, Err(Error::Io(_))) && out.is_empty(), "{r:?}");
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

/// `bytes` copied to a 64-byte boundary (views borrow the blocks in place).
fn aligned(bytes: &[u8]) -> (Vec<u8>, std::ops::Range<usize>) {
    let mut buf = vec![0u8; bytes.len() + 64];
    let at = buf.as_ptr().align_offset(64);
    buf[at..at + bytes.len()].copy_from_slice(bytes);
    (buf, at..at + bytes.len())
}

/// A reader that supplies a hasher with another seed or key would answer "absent" for
/// every inserted key: every reader refuses it (plain filters, views, all three kinds).
#[test]
fn wrong_seed_or_key_is_refused() {
    let keys = SplitMix64::new(5).keys(500);
    let key = [1, 2, 3, 4];
    let other_key = [1, 2, 3, 5];

    let mut b = BlockedBloomFilter::with_num_bits(1 << 14)
        .seed(9)
        .hashes(6)
        .unwrap();
    b.insert_batch(&keys);
    let (buf, range) = aligned(&b.to_bytes());
    let bytes = &buf[range];
    let wrong = DefaultHasher::with_seed(1);
    assert_eq!(
        BlockedBloomFilter::from_bytes_with_hasher(bytes, wrong).unwrap_err(),
        Error::HasherMismatch
    );
    assert_eq!(
        BlockedBloomFilterView::from_bytes_with_hasher(bytes, wrong).unwrap_err(),
        Error::HasherMismatch
    );
    let right = BlockedBloomFilter::from_bytes_with_hasher(bytes, DefaultHasher::with_seed(9));
    assert!(keys.iter().all(|k| right.as_ref().unwrap().contains(k)));

    let mut s = SplitBlockBloomFilter::with_num_blocks(64).unwrap();
    s.insert_batch(&keys);
    let (buf, range) = aligned(&s.to_bytes());
    let bytes = &buf[range];
    assert_eq!(
        SplitBlockBloomFilter::from_bytes_with_hasher(bytes, wrong).unwrap_err(),
        Error::HasherMismatch
    );
    assert_eq!(
        SplitBlockBloomFilterView::from_bytes_with_hasher(bytes, wrong).unwrap_err(),
        Error::HasherMismatch
    );

    let mut st = StandardBloomFilter::with_num_bits(10_007)
        .seed(3)
        .hashes(7)
        .unwrap();
    st.insert_batch(&keys);
    assert_eq!(
        StandardBloomFilter::from_bytes_with_hasher(&st.to_bytes(), wrong).unwrap_err(),
        Error::HasherMismatch
    );

    // Keyed: the header records a check value of the key, not the key.
    let mut kb = BlockedBloomFilter::with_num_bits(1 << 14)
        .hasher(KeyedHasher::with_key(key))
        .hashes(6)
        .unwrap();
    kb.insert_batch(&keys);
    let (buf, range) = aligned(&kb.to_bytes());
    let bytes = &buf[range];
    assert_ne!(Header::parse(bytes).unwrap().key_check, 0);
    assert_eq!(&bytes[4..6], &[3, 0], "filters are written as version 3");
    assert_eq!(
        BlockedBloomFilter::from_bytes_with_hasher(bytes, KeyedHasher::with_key(other_key))
            .unwrap_err(),
        Error::HasherMismatch
    );
    assert_eq!(
        BlockedBloomFilterView::from_bytes_with_hasher(bytes, KeyedHasher::with_key(other_key))
            .unwrap_err(),
        Error::HasherMismatch
    );
    let back =
        BlockedBloomFilterView::from_bytes_with_hasher(bytes, KeyedHasher::with_key(key)).unwrap();
    assert!(keys.iter().all(|k| back.contains(k)));
    let mut ks = StandardBloomFilter::with_num_bits(10_007)
        .hasher(KeyedHasher::with_key(key))
        .hashes(7)
        .unwrap();
    ks.insert_batch(&keys);
    assert_eq!(
        StandardBloomFilter::from_bytes_with_hasher(
            &ks.to_bytes(),
            KeyedHasher::with_key(other_key)
        )
        .unwrap_err(),
        Error::HasherMismatch
    );
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
    v[4] = 4;
    assert_eq!(
        BlockedBloomFilter::from_bytes(&v).unwrap_err(),
        Error::UnsupportedVersion(4)
    );
    // Version 3: the checksum covers the header, so any changed header byte is refused
    // (the probe count, seed and sizes included, which a reader cannot check otherwise).
    assert_eq!(&bytes[4..6], &[3, 0]);
    for at in 0..HEADER_LEN {
        for x in [0x01u8, 0x80] {
            let mut v = bytes.clone();
            v[at] ^= x;
            assert!(
                BlockedBloomFilter::from_bytes(&v).is_err(),
                "byte {at} ^ {x:#x}"
            );
        }
    }
}

#[test]
fn version_1_and_2_files_are_still_read() {
    let f = filled_blocked();
    let v3 = f.to_bytes();
    // Version 1: payload-only checksum, bytes 56..64 reserved (zero).
    let mut v1 = v3.clone();
    v1[4..6].copy_from_slice(&1u16.to_le_bytes());
    bloomforge_core::format::reseal(&mut v1);
    assert_eq!(BlockedBloomFilter::from_bytes(&v1).unwrap(), f);
    let mut bad = v1.clone();
    bad[60] = 1;
    assert!(matches!(
        BlockedBloomFilter::from_bytes(&bad),
        Err(Error::Corrupt { .. })
    ));
    // Its checksum is the payload's XXH64 alone.
    assert_eq!(
        u64::from_le_bytes(v1[48..56].try_into().unwrap()),
        xxhash_rust::xxh64::xxh64(&v1[HEADER_LEN..], 0)
    );
    // Version 2: the same checksum, with a keyed filter's key check in bytes 56..64.
    let key = [5u64, 6, 7, 8];
    let mut kf = BlockedBloomFilter::with_num_bits(4096)
        .hasher(KeyedHasher::with_key(key))
        .hashes(6)
        .unwrap();
    kf.insert(&1u64);
    let mut v2 = kf.to_bytes();
    v2[4..6].copy_from_slice(&2u16.to_le_bytes());
    bloomforge_core::format::reseal(&mut v2);
    let back = BlockedBloomFilter::from_bytes_with_hasher(&v2, KeyedHasher::with_key(key)).unwrap();
    assert_eq!(back, kf);
    assert_eq!(
        BlockedBloomFilter::from_bytes_with_hasher(&v2, KeyedHasher::with_key([0, 0, 0, 1]))
            .unwrap_err(),
        Error::HasherMismatch
    );
}

/// `v` with the header's payload length and checksum rewritten to match its payload, so
/// decoding gets past the checksum to the field checks.
fn reseal(mut v: Vec<u8>) -> Vec<u8> {
    let payload_len = (v.len() - HEADER_LEN) as u64;
    v[40..48].copy_from_slice(&payload_len.to_le_bytes());
    bloomforge_core::format::reseal(&mut v);
    v
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..400), magic in any::<bool>()) {
        if magic && bytes.len() >= 8 {
            bytes[..4].copy_from_slice(b"BLMF");
            bytes[4..6].copy_from_slice(&1u16.to_le_bytes());
        }
        // Whatever decodes re-encodes to the very bytes it came from (no byte ignored).
        if let Ok(f) = BlockedBloomFilter::from_bytes(&bytes) {
            prop_assert_eq!(f.to_bytes(), bytes.clone());
        }
        if let Ok(f) = SplitBlockBloomFilter::from_bytes(&bytes) {
            prop_assert_eq!(f.to_bytes(), bytes.clone());
        }
        if let Ok(f) = StandardBloomFilter::from_bytes(&bytes) {
            prop_assert_eq!(f.to_bytes(), bytes.clone());
        }
        if let Ok(f) = BlockedBloomFilter::read_from(bytes.as_slice()) {
            let encoded = f.to_bytes();
            prop_assert_eq!(&bytes[..encoded.len()], encoded.as_slice());
        }
        match SplitBlockBloomFilter::from_parquet_bitset(&bytes) {
            Ok(f) => prop_assert_eq!(f.to_parquet_bytes(), bytes.clone()),
            // A Parquet bitset is any whole number of 32-byte blocks, at least one.
            Err(_) => prop_assert!(bytes.is_empty() || bytes.len() % 32 != 0),
        }
    }

    /// Hostile headers with a valid checksum (random bytes almost never get past it):
    /// any k, bit count, kind and payload length, each also often left consistent so the
    /// later checks are reached. Decoding must fail with a typed error or give a usable
    /// filter whose shape matches its payload.
    #[test]
    fn resealed_hostile_headers_never_panic(
        which in 0usize..3,
        kind in prop_oneof![3 => Just(None), 1 => (0u8..5).prop_map(Some)],
        k in prop_oneof![3 => Just(None), 1 => (0u32..70).prop_map(Some), 1 => any::<u32>().prop_map(Some)],
        bits in prop_oneof![3 => Just(None), 1 => (0u64..5000).prop_map(Some), 1 => any::<u64>().prop_map(Some)],
        resize in prop_oneof![Just(0i64), (-8i64..8).prop_map(|b| b * 64), -600i64..600],
    ) {
        let mut st = StandardBloomFilter::with_num_bits(300).hashes(5).unwrap();
        st.insert_batch(&SplitMix64::new(4).keys(50));
        let mut v = [
            filled_blocked().to_bytes(),
            SplitBlockBloomFilter::with_num_blocks(4).unwrap().to_bytes(),
            st.to_bytes(),
        ][which].clone();
        let len = (v.len() as i64 + resize).max(HEADER_LEN as i64) as usize;
        v.resize(len, 0xa5);
        let payload_bits = (v.len() - HEADER_LEN) as u64 * 8;
        if let Some(kind) = kind {
            v[6] = kind;
        }
        if let Some(k) = k {
            v[8..12].copy_from_slice(&k.to_le_bytes());
        }
        // `None`: the bit count the payload holds (a plausible header).
        v[24..32].copy_from_slice(&bits.unwrap_or(payload_bits).to_le_bytes());
        let v = reseal(v);
        if let Ok(f) = BlockedBloomFilter::from_bytes(&v) {
            prop_assert!((1..=64).contains(&f.num_hashes()));
            prop_assert_eq!(f.num_bits(), payload_bits);
            let _ = (f.contains(&1u64), f.estimated_len(), f.expected_false_pos());
            prop_assert_eq!(BlockedBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
        }
        if let Ok(f) = SplitBlockBloomFilter::from_bytes(&v) {
            prop_assert_eq!(f.num_hashes(), 8);
            prop_assert_eq!(f.num_bits(), payload_bits);
            let _ = (f.contains(&1u64), f.estimated_len(), f.expected_false_pos());
            prop_assert_eq!(SplitBlockBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
        }
        if let Ok(f) = StandardBloomFilter::from_bytes(&v) {
            prop_assert!((1..=64).contains(&f.num_hashes()));
            prop_assert_eq!(f.num_bits().div_ceil(64) * 64, payload_bits);
            let _ = (f.contains(&1u64), f.estimated_len(), f.expected_false_pos());
            prop_assert_eq!(StandardBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
        }
        // Reading from a stream decides as decoding the bytes does.
        prop_assert_eq!(
            BlockedBloomFilter::read_from(v.as_slice()).ok(),
            BlockedBloomFilter::from_bytes(&v).ok()
        );
    }
}

/// `union_bytes` ORs a serialized filter in place: the bits of `union(from_bytes(..))`,
/// and every refusal leaves the filter as it was.
#[test]
fn union_bytes_equals_union_of_the_decoded_filter() {
    let mut rng = SplitMix64::new(41);
    let mut a = SplitBlockBloomFilter::new(20_000, 0.01).unwrap();
    let mut b = SplitBlockBloomFilter::new(20_000, 0.01).unwrap();
    let mut x = BlockedBloomFilter::new(20_000, 0.01).unwrap();
    let mut y = BlockedBloomFilter::new(20_000, 0.01).unwrap();
    for _ in 0..10_000 {
        a.insert(&rng.next_u64());
        let key = rng.next_u64();
        b.insert(&key);
        x.insert(&rng.next_u64());
        y.insert(&key);
    }
    let mut expected = a.clone();
    expected.union(&b).unwrap();
    let mut got = a.clone();
    got.union_bytes(&b.to_bytes()).unwrap();
    assert_eq!(got, expected);
    let mut expected = x.clone();
    expected.union(&y).unwrap();
    let mut got = x.clone();
    got.union_bytes(&y.to_bytes()).unwrap();
    assert_eq!(got, expected);

    // Refused, unchanged: another size, another seed, a flipped payload bit, truncated
    // bytes, another kind.
    let before = a.clone();
    let other_size = SplitBlockBloomFilter::new(40_000, 0.01).unwrap().to_bytes();
    assert!(matches!(
        a.union_bytes(&other_size),
        Err(Error::IncompatibleFilters { .. })
    ));
    let other_seed = SplitBlockBloomFilter::builder()
        .expected_items(20_000)
        .false_pos(0.01)
        .hasher(DefaultHasher::with_seed(9))
        .build()
        .unwrap()
        .to_bytes();
    assert!(matches!(
        a.union_bytes(&other_seed),
        Err(Error::HasherMismatch)
    ));
    let mut flipped = b.to_bytes();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert!(matches!(
        a.union_bytes(&flipped),
        Err(Error::Corrupt { .. })
    ));
    assert!(a.union_bytes(&b.to_bytes()[..100]).is_err());
    assert!(a.union_bytes(&x.to_bytes()).is_err());
    assert_eq!(a, before);
}

/// From 16 MiB on, the fill estimate and the expected FP are summed in parallel chunks
/// whose sums are added in order: the same values on every pool size (so a file's header
/// never depends on the number of threads), and the plain filters, written straight from
/// memory, write the same bytes as their atomic twins, streamed block by block.
#[test]
fn large_filters_sum_and_write_the_same_on_every_pool() {
    let keys = SplitMix64::new(11).keys(300_000);
    let bits = 1u64 << 27; // 16 MiB: the parallel threshold
    let mut b = BlockedBloomFilter::with_num_bits(bits).hashes(6).unwrap();
    let mut s = SplitBlockBloomFilter::with_num_bits(bits)
        .hashes(8)
        .unwrap();
    b.insert_batch(&keys);
    s.insert_batch(&keys);
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            (
                [
                    b.estimated_len().to_bits(),
                    b.expected_false_pos().to_bits(),
                    s.estimated_len().to_bits(),
                    s.expected_false_pos().to_bits(),
                ],
                b.to_bytes(),
                s.to_bytes(),
            )
        })
    };
    let (sums, bb, sb) = on(1);
    for threads in [2, 7] {
        let (other, obb, osb) = on(threads);
        assert_eq!(sums, other, "{threads} threads");
        assert!(obb == bb && osb == sb, "{threads} threads");
    }
    for est in [f64::from_bits(sums[0]), f64::from_bits(sums[2])] {
        assert!((est / 300_000.0 - 1.0).abs() < 0.02, "{est}");
    }
    let mut out = Vec::new();
    AtomicBlockedBloomFilter::from(b.clone())
        .write_to(&mut out)
        .unwrap();
    assert!(out == bb);
    out.clear();
    AtomicSplitBlockBloomFilter::from(s.clone())
        .write_to(&mut out)
        .unwrap();
    assert!(out == sb);
    let back = BlockedBloomFilter::from_bytes(&bb).unwrap();
    assert!(back == b);
}

/// From 16 MiB on, `from_bytes` fills a block or standard filter's memory on every thread
/// of the pool in huge-page-sized chunks (a last partial chunk included): the copy equals
/// the original on every pool size.
#[test]
fn large_filters_read_back_the_same_on_every_pool() {
    let keys = SplitMix64::new(12).keys(50_000);
    let mut st = StandardBloomFilter::with_num_bits((1u64 << 27) + 77)
        .hashes(5)
        .unwrap();
    st.insert_batch(&keys);
    let mut b = BlockedBloomFilter::with_num_bits((1u64 << 27) + 512 * 9)
        .hashes(6)
        .unwrap();
    b.insert_batch(&keys);
    let (stb, bb) = (st.to_bytes(), b.to_bytes());
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (st2, b2) = pool.install(|| {
            (
                StandardBloomFilter::from_bytes(&stb).unwrap(),
                BlockedBloomFilter::from_bytes(&bb).unwrap(),
            )
        });
        assert!(st2 == st && b2 == b, "{threads} threads");
        let copy = pool.install(|| b.clone());
        assert!(copy == b, "clone, {threads} threads");
    }
}

/// `read_from_file` gives what `from_bytes` of the file's bytes gives, for both block
/// layouts, and refuses what it refuses: a flipped payload bit (checksum), a truncated
/// file, a byte past the filter, another kind.
#[test]
fn read_from_file_equals_from_bytes_and_refuses_bad_files() {
    let dir = std::env::temp_dir().join(format!("bloomforge-read-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys = SplitMix64::new(8).keys(5_000);
    let mut blocked = BlockedBloomFilter::new(5_000, 0.01).unwrap();
    blocked.insert_batch(&keys);
    let mut split = SplitBlockBloomFilter::new(5_000, 0.01).unwrap();
    split.insert_batch(&keys);
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let good = blocked.to_bytes();
    let path = write("blocked.bloom", &good);
    assert_eq!(BlockedBloomFilter::read_from_file(&path).unwrap(), blocked);
    let path = write("split.bloom", &split.to_bytes());
    assert_eq!(SplitBlockBloomFilter::read_from_file(&path).unwrap(), split);
    assert!(
        BlockedBloomFilter::read_from_file(&path).is_err(),
        "another kind"
    );

    let mut flipped = good.clone();
    flipped[HEADER_LEN + 100] ^= 4;
    let mut longer = good.clone();
    longer.push(0);
    for (what, bytes) in [
        ("flipped payload bit", flipped),
        ("truncated", good[..good.len() - 1].to_vec()),
        ("header only", good[..HEADER_LEN].to_vec()),
        ("half a header", good[..HEADER_LEN / 2].to_vec()),
        ("a byte past the filter", longer),
    ] {
        let path = write("bad.bloom", &bytes);
        let from_file = BlockedBloomFilter::read_from_file(&path);
        assert!(from_file.is_err(), "{what}");
        assert!(BlockedBloomFilter::from_bytes(&bytes).is_err(), "{what}");
    }
    assert!(BlockedBloomFilter::read_from_file(dir.join("missing.bloom")).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The atomic filters serialize as their plain forms do (`to_bytes` from a snapshot) and
/// read either type's bytes (`from_bytes`, `read_from`).
#[test]
fn atomic_filters_round_trip_their_bytes() {
    let keys = SplitMix64::new(12).keys(2_000);
    let blocked = AtomicBlockedBloomFilter::new(2_000, 0.01).unwrap();
    blocked.insert_batch(&keys);
    let bytes = blocked.to_bytes();
    assert_eq!(bytes, blocked.snapshot().to_bytes());
    let back = AtomicBlockedBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(back.to_bytes(), bytes);
    assert_eq!(
        AtomicBlockedBloomFilter::read_from(bytes.as_slice())
            .unwrap()
            .to_bytes(),
        bytes
    );
    assert!(keys.iter().all(|k| back.contains(k)));

    let split = AtomicSplitBlockBloomFilter::new(2_000, 0.01).unwrap();
    split.insert_batch(&keys);
    let bytes = split.to_bytes();
    assert_eq!(
        AtomicSplitBlockBloomFilter::from_bytes(&bytes)
            .unwrap()
            .to_bytes(),
        bytes
    );

    let standard = AtomicStandardBloomFilter::new(2_000, 0.01).unwrap();
    standard.insert_batch(&keys);
    let bytes = standard.to_bytes();
    assert_eq!(bytes, standard.snapshot().to_bytes());
    let back = AtomicStandardBloomFilter::read_from(bytes.as_slice()).unwrap();
    assert_eq!(back.to_bytes(), bytes);
    assert!(AtomicStandardBloomFilter::from_bytes(&bytes[..bytes.len() - 1]).is_err());
}
