//! Decoding untrusted bytes of the filter families outside core (format kinds 7-18): the
//! bitmaps (`bloomforge-bitmap`), the cuckoo filter (`bloomforge-cuckoo`), the scalable,
//! stable and attenuated Bloom filters (`bloomforge-stream`) and the retrieval structures
//! (`bloomforge-retrieval`: binary fuse, xor, Bloomier, IBLT). Every reader and zero-copy
//! view must return a filter or a typed error, never panic or allocate beyond the input;
//! a view opens exactly when its reader does and answers alike; any filter a reader returns
//! re-encodes to bytes that decode to the same encoding again.
//!
//! Mode byte (first input byte), as in [`crate::decode`]:
//! * even: the rest goes as-is to every reader (`from_bytes`, `read_from`,
//!   `from_bytes_with_hasher` with a keyed hasher, the views);
//! * odd: the rest drives a structured mutation of a VALID encoding of a small filter of one
//!   kind (header field edits, parameter-block words, payload truncation / extension /
//!   flips), re-sealed or not, so edited fields get past the checksum to the field checks.
//!   An unedited encoding must decode to exactly its bytes, by exactly one reader.
//!
//! [`valid_encodings`] lists a valid encoding of every kind, used by the stable test that
//! tries every truncation and random byte flips of each, and to write `seeds/families/`.

use std::fmt::Debug;

use arbitrary::{Arbitrary, Unstructured};
use bloomforge_bitmap::{Bitmap, BitmapView, Seen, TwoBitmap, TwoBitmapView};
use bloomforge_core::format::{Header, HEADER_LEN};
use bloomforge_core::KeyedHasher;
use bloomforge_cuckoo::{ConcurrentCuckooFilter, CuckooFilter, CuckooFilterView, Fp12, Fp16, Fp8};
use bloomforge_retrieval::{
    BinaryFuseFilter, BinaryFuseFilterView, BloomierFilter, BloomierFilterView, CellLayout,
    CompactApproximator, Iblt, MaxLattice, MinLattice, SumLattice, XorFilter, XorFilterView,
};
use bloomforge_stream::{AttenuatedBloomFilter, ScalableBloomFilter, StableBloomFilter};

/// The key of every keyed filter this target writes and reads.
const KEY: [u64; 4] = [1, 2, 3, 4];

fn keyed() -> KeyedHasher {
    KeyedHasher::with_key(KEY)
}

/// One fuzz case from raw bytes.
pub fn run_bytes(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        check_all(rest);
    } else if let Ok(m) = Mutation::arbitrary_take_rest(Unstructured::new(rest)) {
        mutated(m);
    }
}

/// The payload length the header announces, if the header parses.
fn announced(bytes: &[u8]) -> Option<usize> {
    let h = Header::parse(bytes).ok()?;
    usize::try_from(h.payload_len).ok()?.checked_add(HEADER_LEN)
}

/// What the readers made of some bytes: the re-encoding of each filter they returned.
#[derive(Default)]
pub struct Verdict {
    /// `(reader, re-encoded bytes)` for every reader that accepted the input.
    pub accepted: Vec<(&'static str, Vec<u8>)>,
}

impl Verdict {
    /// Checks a reader's answer: an error, or a filter whose encoding decodes to a filter
    /// with the same encoding (recorded as accepted).
    fn reader<T, E: Debug>(
        &mut self,
        what: &'static str,
        got: &Result<T, E>,
        encode: impl Fn(&T) -> Vec<u8>,
        decode: impl Fn(&[u8]) -> Result<T, E>,
    ) {
        if let Ok(f) = got {
            let once = encode(f);
            let back =
                decode(&once).unwrap_or_else(|e| panic!("{what}: re-encoding refused: {e:?}"));
            assert_eq!(encode(&back), once, "{what}: round trip changed the bytes");
            self.accepted.push((what, once));
        }
    }
}

/// `read_from` reads exactly the announced bytes: it accepts `bytes` exactly when
/// `from_bytes` accepts `bytes[..announced]`, and then gives the same encoding.
fn check_read_from<T, E: Debug>(
    what: &str,
    bytes: &[u8],
    via_io: Result<T, E>,
    from_bytes: impl Fn(&[u8]) -> Result<T, E>,
    encode: impl Fn(&T) -> Vec<u8>,
) {
    let Some(n) = announced(bytes).filter(|&n| n <= bytes.len()) else {
        assert!(
            via_io.is_err(),
            "{what}: read_from accepted a short or bad header"
        );
        return;
    };
    match (via_io, from_bytes(&bytes[..n])) {
        (Ok(a), Ok(b)) => assert_eq!(encode(&a), encode(&b), "{what}: read_from differs"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "{what}: read_from and from_bytes disagree: {:?} vs {:?}",
            a.err(),
            b.err()
        ),
    }
}

/// Whether a reader and its view agree on opening.
fn same_verdict<A, B: Debug, E1: Debug, E2: Debug>(
    what: &str,
    a: &Result<A, E1>,
    b: &Result<B, E2>,
) {
    assert_eq!(
        a.is_ok(),
        b.is_ok(),
        "{what}: reader and view disagree: {:?} vs {:?}",
        a.as_ref().err(),
        b.as_ref().err()
    );
}

/// Values a decoded bitmap of `universe` values is queried with.
fn probes(universe: u64) -> [u32; 7] {
    let u = universe.min(u64::from(u32::MAX)) as u32;
    [0, 1, 63, 64, u / 2, u.saturating_sub(1), u]
}

fn check_bitmaps(bytes: &[u8], v: &mut Verdict) {
    let direct = Bitmap::from_bytes(bytes);
    let view = BitmapView::from_bytes(bytes);
    same_verdict("bitmap", &direct, &view);
    if let (Ok(f), Ok(w)) = (&direct, &view) {
        assert_eq!((f.len(), f.universe()), (w.len(), w.universe()));
        for x in probes(f.universe()) {
            assert_eq!(f.contains(x), w.contains(x), "bitmap view at {x}");
        }
        assert_eq!(&w.to_bitmap().expect("a view's bitmap"), f);
        let mut g = f.clone();
        let x = (bytes.len() as u64 % f.universe()) as u32;
        g.insert(x);
        assert!(g.contains(x));
    }
    v.reader("bitmap", &direct, Bitmap::to_bytes, Bitmap::from_bytes);
    check_read_from(
        "bitmap",
        bytes,
        Bitmap::read_from(bytes),
        Bitmap::from_bytes,
        Bitmap::to_bytes,
    );

    let direct = TwoBitmap::from_bytes(bytes);
    let view = TwoBitmapView::from_bytes(bytes);
    same_verdict("two-bitmap", &direct, &view);
    if let (Ok(f), Ok(w)) = (&direct, &view) {
        assert_eq!((f.len(), f.universe()), (w.len(), w.universe()));
        for x in probes(f.universe()) {
            assert_eq!(f.seen(x), w.seen(x), "two-bitmap view at {x}");
        }
        assert_eq!(&w.to_two_bitmap().expect("a view's bitmap"), f);
        let mut g = f.clone();
        let x = (bytes.len() as u64 % f.universe()) as u32;
        g.insert(x).expect("in the universe");
        assert_ne!(g.seen(x), Seen::Never);
    }
    v.reader(
        "two-bitmap",
        &direct,
        TwoBitmap::to_bytes,
        TwoBitmap::from_bytes,
    );
    check_read_from(
        "two-bitmap",
        bytes,
        TwoBitmap::read_from(bytes),
        TwoBitmap::from_bytes,
        TwoBitmap::to_bytes,
    );
}

macro_rules! check_cuckoo {
    ($F:ty, $what:literal, $bytes:expr, $v:expr) => {{
        let bytes: &[u8] = $bytes;
        let direct = CuckooFilter::<$F>::from_bytes(bytes);
        let view = CuckooFilterView::<$F>::from_bytes(bytes);
        same_verdict($what, &direct, &view);
        if let (Ok(f), Ok(w)) = (&direct, &view) {
            f.validate()
                .expect("an accepted cuckoo table is well formed");
            assert_eq!(f.len(), w.len());
            for k in 0..8u64 {
                assert_eq!(f.contains(&k), w.contains(&k), "{} view", $what);
            }
            let mut g = f.clone();
            if g.insert(&bytes.len()).is_ok() {
                assert!(g.contains(&bytes.len()));
                g.remove(&bytes.len())
                    .expect("an inserted key is removable");
                g.validate().expect("still well formed");
            }
        }
        $v.reader(
            $what,
            &direct,
            |f| f.to_bytes(),
            CuckooFilter::<$F>::from_bytes,
        );
        check_read_from(
            $what,
            bytes,
            CuckooFilter::<$F>::read_from(bytes),
            CuckooFilter::<$F>::from_bytes,
            |f| f.to_bytes(),
        );
        let keyed_direct = CuckooFilter::<$F, KeyedHasher>::from_bytes_with_hasher(bytes, keyed());
        let keyed_view = CuckooFilterView::<$F, KeyedHasher>::with_hasher(bytes, keyed());
        same_verdict($what, &keyed_direct, &keyed_view);
        if keyed_direct.is_ok() {
            assert!(direct.is_err(), "{}: decoded both keyed and unkeyed", $what);
        }
        $v.reader(
            $what,
            &keyed_direct,
            |f| f.to_bytes(),
            |b| CuckooFilter::<$F, KeyedHasher>::from_bytes_with_hasher(b, keyed()),
        );
    }};
}

fn check_cuckoo(bytes: &[u8], v: &mut Verdict) {
    check_cuckoo!(Fp8, "cuckoo-fp8", bytes, v);
    check_cuckoo!(Fp12, "cuckoo-fp12", bytes, v);
    check_cuckoo!(Fp16, "cuckoo-fp16", bytes, v);
    let sharded = ConcurrentCuckooFilter::<Fp12>::from_bytes(bytes);
    if let Ok(f) = &sharded {
        // A decoded (possibly hostile) filter takes queries and inserts without panicking.
        let _ = f.contains(&bytes.len());
        let _ = f.insert(&bytes.len());
        let _ = f.expected_false_pos();
    }
    // Re-encoded from the bytes (an insert above changed the filter).
    let sharded = ConcurrentCuckooFilter::<Fp12>::from_bytes(bytes);
    v.reader(
        "concurrent-cuckoo",
        &sharded,
        ConcurrentCuckooFilter::to_bytes,
        ConcurrentCuckooFilter::<Fp12>::from_bytes,
    );
    check_read_from(
        "concurrent-cuckoo",
        bytes,
        ConcurrentCuckooFilter::<Fp12>::read_from(bytes),
        ConcurrentCuckooFilter::<Fp12>::from_bytes,
        ConcurrentCuckooFilter::to_bytes,
    );
    let keyed_sharded = ConcurrentCuckooFilter::<Fp12, _>::from_bytes_with_hasher(bytes, keyed());
    v.reader(
        "concurrent-cuckoo-keyed",
        &keyed_sharded,
        |f| f.to_bytes(),
        |b| ConcurrentCuckooFilter::<Fp12, _>::from_bytes_with_hasher(b, keyed()),
    );
}

fn check_stream(bytes: &[u8], v: &mut Verdict) {
    let scalable = ScalableBloomFilter::from_bytes(bytes);
    if let Ok(f) = &scalable {
        for k in 0..8u64 {
            let _ = f.contains(&k);
        }
    }
    v.reader(
        "scalable",
        &scalable,
        ScalableBloomFilter::to_bytes,
        ScalableBloomFilter::from_bytes,
    );
    check_read_from(
        "scalable",
        bytes,
        ScalableBloomFilter::read_from(bytes),
        ScalableBloomFilter::from_bytes,
        ScalableBloomFilter::to_bytes,
    );
    let keyed_scalable = ScalableBloomFilter::from_bytes_with_hasher(bytes, keyed());
    v.reader(
        "scalable-keyed",
        &keyed_scalable,
        |f| f.to_bytes(),
        |b| ScalableBloomFilter::from_bytes_with_hasher(b, keyed()),
    );

    let stable = StableBloomFilter::from_bytes(bytes);
    if let Ok(f) = &stable {
        let mut g = f.clone();
        g.insert(&bytes.len());
        assert!(g.contains(&bytes.len()));
    }
    v.reader(
        "stable",
        &stable,
        StableBloomFilter::to_bytes,
        StableBloomFilter::from_bytes,
    );
    check_read_from(
        "stable",
        bytes,
        StableBloomFilter::read_from(bytes),
        StableBloomFilter::from_bytes,
        StableBloomFilter::to_bytes,
    );
    let keyed_stable = StableBloomFilter::from_bytes_with_hasher(bytes, keyed());
    v.reader(
        "stable-keyed",
        &keyed_stable,
        |f| f.to_bytes(),
        |b| StableBloomFilter::from_bytes_with_hasher(b, keyed()),
    );

    let attenuated = AttenuatedBloomFilter::from_bytes(bytes);
    if let Ok(f) = &attenuated {
        let mut g = f.clone();
        g.insert(&bytes.len());
        assert!(g.contains_local(&bytes.len()));
        let _ = g.route(&0u64);
    }
    v.reader(
        "attenuated",
        &attenuated,
        AttenuatedBloomFilter::to_bytes,
        AttenuatedBloomFilter::from_bytes,
    );
    let keyed_attenuated = AttenuatedBloomFilter::from_bytes_with_hasher(bytes, keyed());
    v.reader(
        "attenuated-keyed",
        &keyed_attenuated,
        |f| f.to_bytes(),
        |b| AttenuatedBloomFilter::from_bytes_with_hasher(b, keyed()),
    );
}

macro_rules! check_membership {
    ($F:ident, $V:ident, $W:ty, $what:literal, $bytes:expr, $v:expr) => {{
        let bytes: &[u8] = $bytes;
        let direct = $F::<$W>::from_bytes(bytes);
        let view = $V::<$W>::from_bytes(bytes);
        same_verdict($what, &direct, &view);
        if let (Ok(f), Ok(w)) = (&direct, &view) {
            assert_eq!((f.len(), f.cells()), (w.len(), w.cells()));
            for k in 0..8u64 {
                assert_eq!(f.contains(&k), w.contains(&k), "{} view", $what);
            }
            assert_eq!(w.to_filter().to_bytes(), f.to_bytes());
        }
        $v.reader($what, &direct, |f| f.to_bytes(), $F::<$W>::from_bytes);
        check_read_from(
            $what,
            bytes,
            $F::<$W>::read_from(bytes),
            $F::<$W>::from_bytes,
            |f| f.to_bytes(),
        );
        let keyed_direct = $F::<$W, KeyedHasher>::from_bytes_with_hasher(bytes, keyed());
        let keyed_view = $V::<$W, KeyedHasher>::from_bytes_with_hasher(bytes, keyed());
        same_verdict($what, &keyed_direct, &keyed_view);
        if keyed_direct.is_ok() {
            assert!(direct.is_err(), "{}: decoded both keyed and unkeyed", $what);
        }
        $v.reader(
            $what,
            &keyed_direct,
            |f| f.to_bytes(),
            |b| $F::<$W, KeyedHasher>::from_bytes_with_hasher(b, keyed()),
        );
    }};
}

fn check_retrieval(bytes: &[u8], v: &mut Verdict) {
    check_membership!(
        BinaryFuseFilter,
        BinaryFuseFilterView,
        u8,
        "fuse8",
        bytes,
        v
    );
    check_membership!(
        BinaryFuseFilter,
        BinaryFuseFilterView,
        u16,
        "fuse16",
        bytes,
        v
    );
    check_membership!(XorFilter, XorFilterView, u8, "xor8", bytes, v);
    check_membership!(XorFilter, XorFilterView, u16, "xor16", bytes, v);

    let direct = BloomierFilter::from_bytes(bytes);
    let view = BloomierFilterView::from_bytes(bytes);
    same_verdict("bloomier", &direct, &view);
    if let (Ok(f), Ok(w)) = (&direct, &view) {
        assert_eq!(f.len(), w.len());
        for k in 0..8u64 {
            let got = f.get(&k);
            assert_eq!(got, w.get(&k), "bloomier view");
            if let Some(x) = got {
                assert!(
                    u64::from(x) < 1u64 << f.value_bits(),
                    "value wider than its bits"
                );
            }
        }
        assert_eq!(w.to_filter().to_bytes(), f.to_bytes());
    }
    v.reader(
        "bloomier",
        &direct,
        BloomierFilter::to_bytes,
        BloomierFilter::from_bytes,
    );
    check_read_from(
        "bloomier",
        bytes,
        BloomierFilter::read_from(bytes),
        BloomierFilter::from_bytes,
        BloomierFilter::to_bytes,
    );
    let keyed_direct = BloomierFilter::from_bytes_with_hasher(bytes, keyed());
    let keyed_view = BloomierFilterView::from_bytes_with_hasher(bytes, keyed());
    same_verdict("bloomier-keyed", &keyed_direct, &keyed_view);
    v.reader(
        "bloomier-keyed",
        &keyed_direct,
        |f| f.to_bytes(),
        |b| BloomierFilter::from_bytes_with_hasher(b, keyed()),
    );

    let iblt = Iblt::from_bytes(bytes);
    if let Ok(t) = &iblt {
        // Listing a decoded (possibly hostile) table ends, with entries or a typed error.
        let _ = t.list_entries();
        let mut u = t.clone();
        u.insert(&bytes.len());
        u.remove(&bytes.len());
        assert_eq!(&u, t);
        assert!(t.subtract(t).expect("same shape").is_empty());
    }
    v.reader("iblt", &iblt, Iblt::to_bytes, Iblt::from_bytes);
    check_read_from(
        "iblt",
        bytes,
        Iblt::read_from(bytes),
        Iblt::from_bytes,
        Iblt::to_bytes,
    );
    let keyed_iblt = Iblt::from_bytes_with_hasher(bytes, keyed());
    if let Ok(t) = &keyed_iblt {
        let _ = t.list_entries();
    }
    v.reader(
        "iblt-keyed",
        &keyed_iblt,
        |t| t.to_bytes(),
        |b| Iblt::from_bytes_with_hasher(b, keyed()),
    );
}

/// The compact approximators' readers, as each of this crate's lattices and widths.
fn check_approximators(bytes: &[u8], v: &mut Verdict) {
    macro_rules! each {
        ($($name:literal => $T:ty),*) => {$(
            let got = <$T>::from_bytes(bytes);
            if let Ok(a) = &got {
                // A decoded (possibly hostile) table answers and estimates without panicking.
                let _ = a.get(&bytes.len());
                let _ = a.estimated_len();
            }
            v.reader($name, &got, <$T>::to_bytes, <$T>::from_bytes);
            check_read_from($name, bytes, <$T>::read_from(bytes), <$T>::from_bytes, <$T>::to_bytes);
        )*};
    }
    let keyed_max8 =
        CompactApproximator::<MaxLattice<u8>, _>::from_bytes_with_hasher(bytes, keyed());
    if let Ok(a) = &keyed_max8 {
        let _ = a.get(&bytes.len());
    }
    v.reader(
        "approx-max8-keyed",
        &keyed_max8,
        |a| a.to_bytes(),
        |b| CompactApproximator::<MaxLattice<u8>, _>::from_bytes_with_hasher(b, keyed()),
    );
    each!(
        "approx-max8" => CompactApproximator<MaxLattice<u8>>,
        "approx-min16" => CompactApproximator<MinLattice<u16>>,
        "approx-sum32" => CompactApproximator<SumLattice<u32>>,
        "approx-sum64" => CompactApproximator<SumLattice<u64>>
    );
}

/// Runs every reader and view of kinds 7-18 on `bytes`.
pub fn check_all(bytes: &[u8]) -> Verdict {
    let mut v = Verdict::default();
    check_bitmaps(bytes, &mut v);
    check_cuckoo(bytes, &mut v);
    check_stream(bytes, &mut v);
    check_retrieval(bytes, &mut v);
    check_approximators(bytes, &mut v);
    v
}

/// Which small filter the structured mode encodes.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Kind {
    Bitmap {
        universe: u16,
    },
    TwoBitmap {
        universe: u16,
    },
    Cuckoo {
        fingerprint: u8,
        bucket: u8,
        items: u8,
    },
    Scalable {
        initial: u8,
    },
    Stable {
        cells: u16,
        cell_bits: u8,
    },
    Attenuated {
        depth: u8,
        neighbours: u8,
    },
    Fuse {
        wide: bool,
    },
    Xor {
        wide: bool,
    },
    Bloomier {
        value_bits: u8,
        fingerprint_bits: u8,
    },
    Iblt {
        cells: u8,
    },
    /// A `ConcurrentCuckooFilter` of 12-bit fingerprints.
    Concurrent {
        items: u16,
    },
    /// A `CompactApproximator<MaxLattice<u8>>`.
    Approx {
        blocked: bool,
        cells: u8,
    },
}

#[derive(Arbitrary, Debug)]
enum Edit {
    Version(u16),
    Kind(u8),
    Algorithm(u8),
    Hashes(u32),
    Seed(u64),
    NumBits(u64),
    NumBitsDelta(i16),
    Items(u64),
    PayloadLen(u64),
    KeyCheck(u64),
    Byte {
        at: u8,
        val: u8,
    },
    /// A little-endian word in the payload's first 256 bytes (the parameter blocks).
    PayloadU32 {
        at: u8,
        val: u32,
    },
    PayloadU64 {
        at: u8,
        val: u64,
    },
    /// A small change of a parameter-block word (off-by-one sizes and counts).
    PayloadDelta {
        at: u8,
        delta: i8,
    },
}

#[derive(Arbitrary, Debug)]
enum PayloadEdit {
    Keep,
    Truncate(u16),
    Extend(Vec<u8>),
    Grow(u8),
    Flip { at: u16, val: u8 },
}

#[derive(Arbitrary, Debug)]
pub struct Mutation {
    kind: Kind,
    /// Encode with `KeyedHasher` (where the kind hashes keys) instead of foldhash.
    keyed: bool,
    seed: u64,
    keys: Vec<u32>,
    payload: PayloadEdit,
    fix_len: bool,
    /// Re-seal the checksum after the edits (else the checksum must catch them).
    reseal: bool,
    edits: Vec<Edit>,
}

fn put(bytes: &mut [u8], at: usize, v: &[u8]) {
    if at + v.len() <= bytes.len() {
        bytes[at..at + v.len()].copy_from_slice(v);
    }
}

/// A valid encoding of a small filter of `kind` holding `keys` (at most 256 of them).
pub fn encode(kind: Kind, keyed_hasher: bool, seed: u64, keys: &[u32]) -> Vec<u8> {
    let keys = &keys[..keys.len().min(256)];
    match kind {
        Kind::Bitmap { universe } => {
            let universe = u64::from(universe) + 1;
            let mut b = Bitmap::new(universe).expect("a small universe");
            for &k in keys {
                b.insert((u64::from(k) % universe) as u32);
            }
            b.to_bytes()
        }
        Kind::TwoBitmap { universe } => {
            let universe = u64::from(universe) + 1;
            let mut b = TwoBitmap::new(universe).expect("a small universe");
            for &k in keys {
                b.insert((u64::from(k) % universe) as u32)
                    .expect("in the universe");
            }
            b.to_bytes()
        }
        Kind::Cuckoo {
            fingerprint,
            bucket,
            items,
        } => {
            let n = u64::from(items) + 1;
            let b = [2, 4, 8][usize::from(bucket % 3)];
            macro_rules! cuckoo {
                ($F:ty) => {{
                    let builder = CuckooFilter::builder()
                        .expected_items(n)
                        .bucket_size(b)
                        .seed(seed)
                        .fingerprint::<$F>();
                    if keyed_hasher {
                        let mut f = builder.hasher(keyed()).build().expect("valid parameters");
                        for k in keys {
                            let _ = f.insert(k);
                        }
                        f.to_bytes()
                    } else {
                        let mut f = builder.build().expect("valid parameters");
                        for k in keys {
                            let _ = f.insert(k);
                        }
                        f.to_bytes()
                    }
                }};
            }
            match fingerprint % 3 {
                0 => cuckoo!(Fp8),
                1 => cuckoo!(Fp12),
                _ => cuckoo!(Fp16),
            }
        }
        Kind::Scalable { initial } => {
            let builder = ScalableBloomFilter::builder()
                .expected_items(u64::from(initial % 32) + 1)
                .seed(seed);
            if keyed_hasher {
                let mut f = builder.hasher(keyed()).build().expect("valid parameters");
                for k in keys {
                    let _ = f.insert(k);
                }
                f.to_bytes()
            } else {
                let mut f = builder.build().expect("valid parameters");
                for k in keys {
                    let _ = f.insert(k);
                }
                f.to_bytes()
            }
        }
        Kind::Stable { cells, cell_bits } => {
            let shape = |cells: u64, bits: u32| {
                StableBloomFilter::builder()
                    .cells(cells)
                    .cell_bits(bits)
                    .seed(seed)
            };
            let (cells, bits) = (u64::from(cells % 4096) + 64, u32::from(cell_bits % 8) + 1);
            // Not every small shape reaches the default 1 % (the builder says so): then
            // 1024 cells of 3 bits, which does.
            let builder = if shape(cells, bits).build().is_ok() {
                shape(cells, bits)
            } else {
                shape(1024, 3)
            };
            if keyed_hasher {
                let mut f = builder.hasher(keyed()).build().expect("valid parameters");
                keys.iter().for_each(|k| f.insert(k));
                f.to_bytes()
            } else {
                let mut f = builder.build().expect("valid parameters");
                keys.iter().for_each(|k| f.insert(k));
                f.to_bytes()
            }
        }
        Kind::Attenuated { depth, neighbours } => {
            let depth = usize::from(depth % 4) + 1;
            macro_rules! attenuated {
                ($node:expr) => {{
                    let node = $node;
                    let mut a = node(1).expect("valid parameters");
                    let mut b = node(2).expect("valid parameters");
                    for k in keys {
                        b.insert(k);
                    }
                    b.add_neighbour(1).expect("a new neighbour");
                    a.add_neighbour(2).expect("a new neighbour");
                    for n in 0..u64::from(neighbours % 4) {
                        a.add_neighbour(10 + n).expect("a new neighbour");
                    }
                    a.merge_from_neighbour(&b).expect("same shape");
                    a.insert(&seed);
                    a.to_bytes()
                }};
            }
            let base = AttenuatedBloomFilter::builder()
                .expected_items(16)
                .depth(depth)
                .seed(seed);
            if keyed_hasher {
                attenuated!(|id| base.clone().hasher(keyed()).node_id(id).build())
            } else {
                attenuated!(|id| base.clone().node_id(id).build())
            }
        }
        Kind::Fuse { wide } | Kind::Xor { wide } => {
            let xor = matches!(kind, Kind::Xor { .. });
            macro_rules! static_filter {
                ($F:ident, $W:ty) => {{
                    if keyed_hasher {
                        $F::<$W>::builder()
                            .hasher(keyed())
                            .build(keys)
                            .expect("builds")
                            .to_bytes()
                    } else {
                        $F::<$W>::builder()
                            .seed(seed)
                            .build(keys)
                            .expect("builds")
                            .to_bytes()
                    }
                }};
            }
            match (xor, wide) {
                (false, false) => static_filter!(BinaryFuseFilter, u8),
                (false, true) => static_filter!(BinaryFuseFilter, u16),
                (true, false) => static_filter!(XorFilter, u8),
                (true, true) => static_filter!(XorFilter, u16),
            }
        }
        Kind::Bloomier {
            value_bits,
            fingerprint_bits,
        } => {
            let value_bits = u32::from(value_bits % 32) + 1;
            let fingerprint_bits = u32::from(fingerprint_bits % 33);
            let mask = (1u64 << value_bits) - 1;
            let mut pairs: Vec<(u32, u32)> = keys
                .iter()
                .map(|&k| (k, (u64::from(k.rotate_left(7)) & mask) as u32))
                .collect();
            pairs.sort_unstable();
            pairs.dedup();
            let builder = BloomierFilter::builder()
                .value_bits(value_bits)
                .fingerprint_bits(fingerprint_bits);
            if keyed_hasher {
                builder
                    .hasher(keyed())
                    .build(&pairs)
                    .expect("builds")
                    .to_bytes()
            } else {
                builder.seed(seed).build(&pairs).expect("builds").to_bytes()
            }
        }
        Kind::Iblt { cells } => {
            let cells = usize::from(cells) + 1;
            if keyed_hasher {
                let mut t = Iblt::with_cells_and_hasher(cells, keyed()).expect("valid");
                keys.iter().for_each(|k| t.insert(k));
                keys.iter().step_by(2).for_each(|k| t.remove(k));
                t.to_bytes()
            } else {
                let mut t = Iblt::with_cells(cells, seed).expect("valid");
                keys.iter().for_each(|k| t.insert(k));
                keys.iter().step_by(2).for_each(|k| t.remove(k));
                t.to_bytes()
            }
        }
        Kind::Concurrent { items } => {
            let builder = ConcurrentCuckooFilter::builder()
                .expected_items(u64::from(items) + 1)
                .seed(seed);
            if keyed_hasher {
                let f = builder.hasher(keyed()).build().expect("valid parameters");
                keys.iter().for_each(|k| drop(f.insert(k)));
                f.to_bytes()
            } else {
                let f = builder.build().expect("valid parameters");
                keys.iter().for_each(|k| drop(f.insert(k)));
                f.to_bytes()
            }
        }
        Kind::Approx { blocked, cells } => {
            let layout = if blocked {
                CellLayout::Blocked
            } else {
                CellLayout::Subtables
            };
            let cells = usize::from(cells) + 1;
            if keyed_hasher {
                let mut a = CompactApproximator::<MaxLattice<u8>, _>::with_layout(
                    layout,
                    cells,
                    3,
                    keyed(),
                )
                .expect("valid");
                keys.iter().for_each(|&k| a.insert(&k, k as u8));
                a.to_bytes()
            } else {
                let hasher = bloomforge_core::DefaultHasher::with_seed(seed);
                let mut a =
                    CompactApproximator::<MaxLattice<u8>, _>::with_layout(layout, cells, 3, hasher)
                        .expect("valid");
                keys.iter().for_each(|&k| a.insert(&k, k as u8));
                a.to_bytes()
            }
        }
    }
}

/// A valid encoding of every kind (unkeyed and keyed), with a name for its seed file.
pub fn valid_encodings() -> Vec<(String, Vec<u8>)> {
    let keys: Vec<u32> = (0..40u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let kinds = [
        ("bitmap", Kind::Bitmap { universe: 1000 }),
        ("two-bitmap", Kind::TwoBitmap { universe: 700 }),
        (
            "cuckoo-fp8",
            Kind::Cuckoo {
                fingerprint: 0,
                bucket: 1,
                items: 60,
            },
        ),
        (
            "cuckoo-fp12",
            Kind::Cuckoo {
                fingerprint: 1,
                bucket: 0,
                items: 30,
            },
        ),
        (
            "cuckoo-fp16",
            Kind::Cuckoo {
                fingerprint: 2,
                bucket: 2,
                items: 50,
            },
        ),
        ("scalable", Kind::Scalable { initial: 8 }),
        (
            "stable",
            Kind::Stable {
                cells: 300,
                cell_bits: 2,
            },
        ),
        (
            "attenuated",
            Kind::Attenuated {
                depth: 2,
                neighbours: 2,
            },
        ),
        ("fuse8", Kind::Fuse { wide: false }),
        ("fuse16", Kind::Fuse { wide: true }),
        ("xor8", Kind::Xor { wide: false }),
        ("xor16", Kind::Xor { wide: true }),
        (
            "bloomier",
            Kind::Bloomier {
                value_bits: 9,
                fingerprint_bits: 8,
            },
        ),
        ("iblt", Kind::Iblt { cells: 40 }),
        ("concurrent-cuckoo", Kind::Concurrent { items: 5000 }),
        (
            "approx",
            Kind::Approx {
                blocked: false,
                cells: 60,
            },
        ),
        (
            "approx-blocked",
            Kind::Approx {
                blocked: true,
                cells: 128,
            },
        ),
    ];
    let mut out = Vec::new();
    for (name, kind) in kinds {
        out.push((name.to_owned(), encode(kind, false, 7, &keys)));
        if !matches!(kind, Kind::Bitmap { .. } | Kind::TwoBitmap { .. }) {
            out.push((format!("{name}-keyed"), encode(kind, true, 7, &keys)));
        }
    }
    out
}

fn mutated(m: Mutation) {
    let mut bytes = encode(m.kind, m.keyed, m.seed, &m.keys);
    let untouched = m.edits.is_empty() && matches!(m.payload, PayloadEdit::Keep);
    let original = bytes.clone();
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
            Edit::Seed(v) => put(&mut bytes, 16, &v.to_le_bytes()),
            Edit::NumBits(v) => put(&mut bytes, 24, &v.to_le_bytes()),
            Edit::NumBitsDelta(d) => {
                let at = 24;
                let v = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
                put(
                    &mut bytes,
                    at,
                    &v.wrapping_add_signed(i64::from(d)).to_le_bytes(),
                );
            }
            Edit::Items(v) => put(&mut bytes, 32, &v.to_le_bytes()),
            Edit::PayloadLen(v) => put(&mut bytes, 40, &v.to_le_bytes()),
            Edit::KeyCheck(v) => put(&mut bytes, 56, &v.to_le_bytes()),
            Edit::Byte { at, val } => bytes[usize::from(at) % HEADER_LEN] = val,
            Edit::PayloadU32 { at, val } => {
                put(&mut bytes, HEADER_LEN + usize::from(at), &val.to_le_bytes())
            }
            Edit::PayloadU64 { at, val } => {
                put(&mut bytes, HEADER_LEN + usize::from(at), &val.to_le_bytes())
            }
            Edit::PayloadDelta { at, delta } => {
                let at = HEADER_LEN + usize::from(at);
                if at + 8 <= bytes.len() {
                    let v = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
                    put(
                        &mut bytes,
                        at,
                        &v.wrapping_add_signed(i64::from(delta)).to_le_bytes(),
                    );
                }
            }
        }
    }
    if m.reseal {
        bloomforge_core::format::reseal(&mut bytes);
    }
    let verdict = check_all(&bytes);
    assert!(
        verdict.accepted.len() <= 1,
        "bytes accepted by several readers: {:?}",
        verdict.accepted.iter().map(|(w, _)| w).collect::<Vec<_>>()
    );
    if untouched {
        let [(what, again)] = &verdict.accepted[..] else {
            panic!("an unmodified {:?} encoding was refused", m.kind);
        };
        assert_eq!(
            again, &original,
            "{what}: a valid encoding does not re-encode to itself"
        );
    } else if !m.reseal && bytes != original {
        assert!(
            verdict.accepted.is_empty(),
            "edited bytes passed the checksum: {:?}",
            verdict.accepted.iter().map(|(w, _)| w).collect::<Vec<_>>()
        );
    }
}
