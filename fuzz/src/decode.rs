//! Decoding untrusted bytes: every reader must return a filter or a typed error, never
//! panic or allocate beyond the input, and any filter it returns must be well formed.
//!
//! Mode byte (first input byte):
//! * even: the rest goes as-is to every reader (`from_bytes`, `read_from`,
//!   `from_bytes_with_hasher`, `from_parquet_bitset`);
//! * odd: the rest drives a structured mutation of a VALID encoding of a small filter
//!   (header field edits, payload truncation / extension) and the checksum is re-sealed, so
//!   mutated headers get past the checksum (which covers the header) to the field checks.

use arbitrary::{Arbitrary, Unstructured};
use bloomforge_core::block::BLOCKED_MAX_HASHES;
use bloomforge_core::format::{Header, HEADER_LEN};
use bloomforge_core::{
    BlockedBloomFilter, BlockedBloomFilterView, KeyedHasher, SplitBlockBloomFilter,
    SplitBlockBloomFilterView, StandardBloomFilter, STANDARD_MAX_HASHES,
};
use bloomforge_counting::CountingBloomFilter;
use bloomforge_dleft::DLeftCountingBloomFilter;

/// The key of every keyed filter this target writes and reads.
const KEY: [u64; 4] = [1, 2, 3, 4];

/// One fuzz case from raw bytes.
pub fn run_bytes(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        check_all(rest);
    } else if let Ok(m) = Mutation::arbitrary_take_rest(Unstructured::new(rest)) {
        resealed(m);
    }
}

/// The payload length the header announces, if the header parses.
fn announced(bytes: &[u8]) -> Option<usize> {
    let h = Header::parse(bytes).ok()?;
    usize::try_from(h.payload_len).ok()?.checked_add(HEADER_LEN)
}

macro_rules! check_block_kind {
    ($F:ident, $bytes:expr, $block_bits:expr, $kmin:expr, $kmax:expr) => {{
        let bytes: &[u8] = $bytes;
        let direct = $F::from_bytes(bytes);
        if let Ok(f) = &direct {
            let h = Header::parse(bytes).expect("accepted bytes have a valid header");
            let payload = &bytes[HEADER_LEN..];
            assert!(
                ($kmin..=$kmax).contains(&f.num_hashes()),
                "k {} out of range",
                f.num_hashes()
            );
            assert_eq!(f.num_hashes(), h.num_hashes);
            assert_eq!(
                f.num_bits(),
                payload.len() as u64 * 8,
                "num_bits != payload bits"
            );
            assert_eq!(f.num_bits(), h.num_bits);
            assert_eq!(f.num_bits(), f.num_blocks() as u64 * $block_bits);
            assert!(f.num_blocks() >= 1);
            let again = f.to_bytes();
            assert_eq!(&again[HEADER_LEN..], payload, "payload does not round-trip");
            let back = $F::from_bytes(&again).expect("re-encoding must decode");
            assert_eq!(
                &back, f,
                "to_bytes/from_bytes round trip changed the filter"
            );
            let fp = f.expected_false_pos();
            assert!((0.0..=1.0).contains(&fp), "expected_false_pos {fp}");
            assert!(!f.estimated_len().is_nan());
            // Queries and inserts on a decoded filter are in bounds.
            let mut g = f.clone();
            g.insert(&payload.len());
            assert!(g.contains(&payload.len()));
        }
        // The reader reads exactly header + announced payload.
        let via_io = $F::read_from(bytes);
        if let Ok(f) = &via_io {
            let n = announced(bytes).expect("read_from accepted an unparsable header");
            assert!(n <= bytes.len());
            assert_eq!(
                $F::from_bytes(&bytes[..n]).as_ref(),
                Ok(f),
                "read_from and from_bytes disagree"
            );
        }
        if let Ok(f) = &direct {
            assert_eq!(
                via_io.as_ref(),
                Ok(f),
                "from_bytes accepted what read_from refused"
            );
        }
        // Filters written with foldhash never decode as keyed ones and vice versa.
        let keyed = $F::<KeyedHasher>::from_bytes_with_hasher(bytes, KeyedHasher::with_key(KEY));
        if let Ok(f) = &keyed {
            assert!(direct.is_err(), "bytes decoded both as keyed and unkeyed");
            assert_eq!(f.num_bits(), (bytes.len() - HEADER_LEN) as u64 * 8);
            assert_eq!(
                $F::<KeyedHasher>::from_bytes_with_hasher(
                    &f.to_bytes(),
                    KeyedHasher::with_key(KEY)
                )
                .as_ref(),
                Ok(f)
            );
        }
        usize::from(direct.is_ok()) + usize::from(keyed.is_ok())
    }};
}

fn check_standard(bytes: &[u8]) -> usize {
    let direct = StandardBloomFilter::from_bytes(bytes);
    if let Ok(f) = &direct {
        let h = Header::parse(bytes).expect("accepted bytes have a valid header");
        let payload = &bytes[HEADER_LEN..];
        assert!((1..=STANDARD_MAX_HASHES).contains(&f.num_hashes()));
        assert_eq!(f.num_hashes(), h.num_hashes);
        assert_eq!(f.num_bits(), h.num_bits);
        assert!(f.num_bits() >= 1);
        assert_eq!(
            f.num_bits().div_ceil(64) * 8,
            payload.len() as u64,
            "num_bits does not match the payload words"
        );
        assert_eq!(f.as_words().len() * 8, payload.len());
        // Bits at positions >= num_bits are cleared, the rest kept.
        for (i, w) in f.as_words().iter().enumerate() {
            let mut x = [0u8; 8];
            x.copy_from_slice(&payload[i * 8..i * 8 + 8]);
            let stored = u64::from_le_bytes(x);
            let valid = (f.num_bits() - i as u64 * 64).min(64);
            let mask = if valid == 64 {
                u64::MAX
            } else {
                (1u64 << valid) - 1
            };
            assert_eq!(*w, stored & mask, "word {i} not restored");
        }
        let back = StandardBloomFilter::from_bytes(&f.to_bytes()).expect("re-encoding decodes");
        assert_eq!(&back, f);
        let fp = f.expected_false_pos();
        assert!((0.0..=1.0).contains(&fp), "expected_false_pos {fp}");
        assert!(!f.estimated_len().is_nan());
        let mut g = f.clone();
        g.insert(&payload.len());
        assert!(g.contains(&payload.len()));
    }
    let via_io = StandardBloomFilter::read_from(bytes);
    if let Ok(f) = &via_io {
        let n = announced(bytes).expect("read_from accepted an unparsable header");
        assert_eq!(StandardBloomFilter::from_bytes(&bytes[..n]).as_ref(), Ok(f));
    }
    if let Ok(f) = &direct {
        assert_eq!(via_io.as_ref(), Ok(f));
    }
    let keyed = StandardBloomFilter::from_bytes_with_hasher(bytes, KeyedHasher::with_key(KEY));
    if let Ok(f) = &keyed {
        assert!(direct.is_err(), "bytes decoded both as keyed and unkeyed");
        assert_eq!(
            f.num_bits(),
            Header::parse(bytes).map(|h| h.num_bits).unwrap_or(0)
        );
        assert_eq!(
            StandardBloomFilter::from_bytes_with_hasher(&f.to_bytes(), KeyedHasher::with_key(KEY))
                .as_ref(),
            Ok(f)
        );
    }
    usize::from(direct.is_ok()) + usize::from(keyed.is_ok())
}

fn check_parquet(bytes: &[u8]) {
    if let Ok(f) = SplitBlockBloomFilter::from_parquet_bitset(bytes) {
        assert_eq!(f.num_bits(), bytes.len() as u64 * 8);
        assert_eq!(f.num_hashes(), 8);
        assert_eq!(f.as_bytes(), bytes);
        assert_eq!(f.to_parquet_bytes(), bytes);
    } else {
        assert!(
            bytes.is_empty() || !bytes.len().is_multiple_of(32),
            "valid bitset refused"
        );
    }
}

/// Runs every reader on `bytes`; returns how many accepted it (kind x keyed / unkeyed).
/// A zero-copy view of `bytes` (copied to a 64-byte boundary) opens exactly when the
/// copying reader does, and then holds the same filter.
macro_rules! check_view {
    ($F:ident, $V:ident, $bytes:expr) => {{
        let bytes: &[u8] = $bytes;
        let mut buf = vec![0u8; bytes.len() + 64];
        let at = buf.as_ptr().align_offset(64);
        buf[at..at + bytes.len()].copy_from_slice(bytes);
        let aligned = &buf[at..at + bytes.len()];
        match ($F::from_bytes(bytes), $V::from_bytes(aligned)) {
            (Ok(f), Ok(v)) => {
                assert_eq!(v.to_filter(), f, "view != decoded filter");
                assert_eq!(v.contains(&bytes.len()), f.contains(&bytes.len()));
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!("reader and view disagree: {:?} vs {:?}", a.err(), b.err()),
        }
        // Without the checksum pass the view may open corrupted payloads, never panic.
        if let Ok(v) = $V::from_bytes_unverified(aligned) {
            let _ = v.contains(&0u64);
            let _ = v.count_ones();
        }
    }};
}

/// The counting and d-left readers: a filter or an error; an accepted filter is well
/// formed and round-trips.
fn check_other_crates(bytes: &[u8]) -> usize {
    let counting = CountingBloomFilter::from_bytes(bytes);
    if let Ok(f) = &counting {
        assert_eq!(
            CountingBloomFilter::from_bytes(&f.to_bytes()).as_ref(),
            Ok(f)
        );
        assert_eq!(CountingBloomFilter::read_from(bytes).as_ref(), Ok(f));
        let mut g = f.clone();
        g.insert(&bytes.len());
        assert!(g.contains(&bytes.len()));
        g.remove(&bytes.len())
            .expect("an inserted key is removable");
    }
    let dleft = DLeftCountingBloomFilter::from_bytes(bytes);
    if let Ok(f) = &dleft {
        f.validate()
            .expect("an accepted d-left table is well formed");
        assert_eq!(
            DLeftCountingBloomFilter::from_bytes(&f.to_bytes()).as_ref(),
            Ok(f)
        );
        let mut g = f.clone();
        if g.insert(&bytes.len()).is_ok() {
            g.remove(&bytes.len())
                .expect("an inserted key is removable");
            g.validate().expect("still well formed");
        }
    }
    usize::from(counting.is_ok()) + usize::from(dleft.is_ok())
}

fn check_all(bytes: &[u8]) -> usize {
    let others = check_other_crates(bytes);
    let blocked = check_block_kind!(BlockedBloomFilter, bytes, 512, 1, BLOCKED_MAX_HASHES);
    let split = check_block_kind!(SplitBlockBloomFilter, bytes, 256, 8, 8);
    check_view!(BlockedBloomFilter, BlockedBloomFilterView, bytes);
    check_view!(SplitBlockBloomFilter, SplitBlockBloomFilterView, bytes);
    let standard = check_standard(bytes);
    check_parquet(bytes);
    check_parquet(bytes.get(HEADER_LEN..).unwrap_or_default());
    blocked + split + standard + others
}

#[derive(Arbitrary, Debug)]
enum Kind {
    Blocked { blocks: u8, k: u8 },
    Split { blocks: u8 },
    Standard { bits: u16, k: u8 },
}

#[derive(Arbitrary, Debug)]
enum Edit {
    Version(u16),
    Kind(u8),
    Algorithm(u8),
    Hashes(u32),
    SmallHashes(u8),
    Flags(u32),
    Seed(u64),
    NumBits(u64),
    /// num_bits moved by a small amount (reaches off-by-one and off-by-a-block values).
    NumBitsDelta(i16),
    /// num_bits times / divided by a power of two.
    NumBitsShift(i8),
    Items(u64),
    PayloadLen(u64),
    PayloadLenDelta(i16),
    Reserved(u64),
    Byte {
        at: u8,
        val: u8,
    },
}

#[derive(Arbitrary, Debug)]
enum PayloadEdit {
    Keep,
    Truncate(u16),
    Extend(Vec<u8>),
    /// Appends whole zero words / blocks.
    Grow(u8),
    Flip {
        at: u16,
        val: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Mutation {
    kind: Kind,
    /// Encode with `KeyedHasher` (algorithm 2, seed not stored) instead of foldhash.
    keyed: bool,
    seed: u64,
    keys: Vec<u64>,
    payload: PayloadEdit,
    /// Re-write the payload-length field to the actual length after the edits.
    fix_len: bool,
    edits: Vec<Edit>,
}

fn put(bytes: &mut [u8], at: usize, v: &[u8]) {
    bytes[at..at + v.len()].copy_from_slice(v);
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(x)
}

/// A valid encoding of a small filter holding `keys`, checked to decode to itself.
macro_rules! encode {
    ($F:ident, $bits:expr, $k:expr, $m:expr, $keys:expr) => {{
        if $m.keyed {
            let builder = $F::with_num_bits($bits).hasher(KeyedHasher::with_key(KEY));
            let Ok(mut f) = builder.hashes($k) else {
                panic!("valid parameters refused");
            };
            f.insert_batch($keys);
            let bytes = f.to_bytes();
            let back = $F::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(KEY));
            assert_eq!(back.as_ref(), Ok(&f));
            bytes
        } else {
            let Ok(mut f) = $F::with_num_bits($bits).seed($m.seed).hashes($k) else {
                panic!("valid parameters refused");
            };
            f.insert_batch($keys);
            let bytes = f.to_bytes();
            assert_eq!($F::from_bytes(&bytes).as_ref(), Ok(&f));
            bytes
        }
    }};
}

fn resealed(m: Mutation) {
    let keys = &m.keys[..m.keys.len().min(256)];
    // A valid encoding of a small filter, plus the filter itself for comparison.
    let (mut bytes, original_kind) = match m.kind {
        Kind::Blocked { blocks, k } => {
            let bits = (u64::from(blocks % 8) + 1) * 512;
            let k = u32::from(k) % BLOCKED_MAX_HASHES + 1;
            (encode!(BlockedBloomFilter, bits, k, m, keys), 0)
        }
        Kind::Split { blocks } => {
            let bits = (u64::from(blocks % 16) + 1) * 256;
            (encode!(SplitBlockBloomFilter, bits, 8, m, keys), 1)
        }
        Kind::Standard { bits, k } => {
            let bits = u64::from(bits % 4096) + 1;
            let k = u32::from(k) % STANDARD_MAX_HASHES + 1;
            (encode!(StandardBloomFilter, bits, k, m, keys), 2)
        }
    };
    let untouched = m.edits.is_empty() && matches!(m.payload, PayloadEdit::Keep);

    match m.payload {
        PayloadEdit::Keep => {}
        PayloadEdit::Truncate(n) => {
            let keep = bytes.len().saturating_sub(usize::from(n)).max(HEADER_LEN);
            bytes.truncate(keep);
        }
        PayloadEdit::Extend(extra) => bytes.extend_from_slice(&extra[..extra.len().min(1024)]),
        PayloadEdit::Grow(words) => bytes.resize(bytes.len() + usize::from(words) * 8, 0),
        PayloadEdit::Flip { at, val } => {
            let payload_len = bytes.len() - HEADER_LEN;
            if payload_len > 0 {
                bytes[HEADER_LEN + usize::from(at) % payload_len] ^= val;
            }
        }
    }
    if m.fix_len {
        let len = (bytes.len() - HEADER_LEN) as u64;
        put(&mut bytes, 40, &len.to_le_bytes());
    }
    for edit in m.edits.iter().take(16) {
        match *edit {
            Edit::Version(v) => put(&mut bytes, 4, &v.to_le_bytes()),
            Edit::Kind(v) => bytes[6] = v,
            Edit::Algorithm(v) => bytes[7] = v,
            Edit::Hashes(v) => put(&mut bytes, 8, &v.to_le_bytes()),
            Edit::SmallHashes(v) => put(&mut bytes, 8, &u32::from(v).to_le_bytes()),
            Edit::Flags(v) => put(&mut bytes, 12, &v.to_le_bytes()),
            Edit::Seed(v) => put(&mut bytes, 16, &v.to_le_bytes()),
            Edit::NumBits(v) => put(&mut bytes, 24, &v.to_le_bytes()),
            Edit::NumBitsDelta(d) => {
                let v = get_u64(&bytes, 24).wrapping_add_signed(i64::from(d));
                put(&mut bytes, 24, &v.to_le_bytes());
            }
            Edit::NumBitsShift(s) => {
                let v = get_u64(&bytes, 24);
                let v = if s >= 0 {
                    v.wrapping_shl(u32::from(s.unsigned_abs()) % 64)
                } else {
                    v >> (u32::from(s.unsigned_abs()) % 64)
                };
                put(&mut bytes, 24, &v.to_le_bytes());
            }
            Edit::Items(v) => put(&mut bytes, 32, &v.to_le_bytes()),
            Edit::PayloadLen(v) => put(&mut bytes, 40, &v.to_le_bytes()),
            Edit::PayloadLenDelta(d) => {
                let v = get_u64(&bytes, 40).wrapping_add_signed(i64::from(d));
                put(&mut bytes, 40, &v.to_le_bytes());
            }
            Edit::Reserved(v) => put(&mut bytes, 56, &v.to_le_bytes()),
            Edit::Byte { at, val } => bytes[usize::from(at) % HEADER_LEN] = val,
        }
    }
    // Re-seal: the checksum always matches the (possibly edited) payload.
    bloomforge_core::format::reseal(&mut bytes);

    let accepted = check_all(&bytes);
    assert!(accepted <= 1, "bytes accepted as more than one kind");
    if untouched {
        assert_eq!(
            accepted, 1,
            "an unmodified encoding (kind {original_kind}) was refused"
        );
    }
}
