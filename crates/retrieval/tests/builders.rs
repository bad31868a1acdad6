//! The conventions' entry points on the retrieval structures: every static filter built
//! by its one-line `build`, by its builder (any thread count) and by `collect()` gives the
//! same bytes; any `BuildHasher` can be given (a keyed one included), survives
//! serialization only with the same hasher, and retries without reseeding it; the
//! approximator and IBLT builders take a hasher too.

use std::hash::{BuildHasher, Hasher};

use bloomforge_core::{DefaultHasher, Error as CoreError, KeyedHasher};
use bloomforge_retrieval::{
    BinaryFuseFilter, BinaryFuseFilterView, BloomierFilter, BloomierFilterView, CountMin, Iblt,
    RetrievalError, XorFilter, XorFilterView,
};

const K1: [u64; 4] = [1, 2, 3, 4];
const K2: [u64; 4] = [1, 2, 3, 5];

fn keys(n: u64) -> Vec<String> {
    (0..n).map(|i| format!("key-{i}")).collect()
}

macro_rules! both_ways {
    ($F:ty, $keys:expr) => {{
        let keys: &[String] = $keys;
        let refs: Vec<&String> = keys.iter().collect();
        let one_line = <$F>::build_from(keys, 9).unwrap().to_bytes();
        assert_eq!(<$F>::build(&refs, 9).unwrap().to_bytes(), one_line);
        for threads in [1, 3] {
            let b = <$F>::builder()
                .seed(9)
                .threads(threads)
                .build(keys)
                .unwrap();
            assert_eq!(b.to_bytes(), one_line, "{threads} threads");
        }
        let collected: $F = keys.iter().collect();
        assert_eq!(
            collected.to_bytes(),
            <$F>::build_from(keys, 0).unwrap().to_bytes()
        );
        assert!(keys.iter().all(|k| collected.contains(k)));
    }};
}

/// 100 000 keys: hashing runs on the pool (from 2^16 keys), so thread counts are exercised.
#[test]
fn static_filters_build_alike_every_way() {
    let ks = keys(100_000);
    both_ways!(BinaryFuseFilter<u8>, &ks);
    both_ways!(BinaryFuseFilter<u16>, &ks);
    both_ways!(XorFilter<u8>, &ks);
    both_ways!(XorFilter<u16>, &ks);

    let pairs: Vec<(String, u32)> = ks
        .iter()
        .map(|k| (k.clone(), k.len() as u32 * 100))
        .collect();
    let one_line = BloomierFilter::build_with_seed(&pairs, 11, 9, 4).unwrap();
    for threads in [1, 3] {
        let b = BloomierFilter::builder()
            .value_bits(11)
            .fingerprint_bits(9)
            .seed(4)
            .threads(threads)
            .build(&pairs)
            .unwrap();
        assert_eq!(b.to_bytes(), one_line.to_bytes(), "{threads} threads");
    }
    assert_eq!(
        BloomierFilter::build(&pairs, 11, 9).unwrap().to_bytes(),
        BloomierFilter::builder()
            .value_bits(11)
            .fingerprint_bits(9)
            .build(&pairs)
            .unwrap()
            .to_bytes()
    );
}

/// `collect()` keeps a repeated key's last value, as a `HashMap` does; the builder's
/// defaults are the largest value's width and 7 fingerprint bits (1 %).
#[test]
fn bloomier_defaults_and_collect() {
    let f: BloomierFilter = [("a", 1u32), ("b", 1000), ("a", 3)].into_iter().collect();
    assert_eq!((f.get("a"), f.get("b")), (Some(3), Some(1000)));
    assert_eq!((f.value_bits(), f.fingerprint_bits(), f.len()), (10, 7, 2));
    let zero = BloomierFilter::builder().build(&[("z", 0u32)]).unwrap();
    assert_eq!(zero.value_bits(), 1);
    let widths = |p: f64| {
        BloomierFilter::builder()
            .false_pos(p)
            .build(&[("x", 1u32)])
            .map(|f| f.fingerprint_bits())
    };
    assert_eq!(widths(0.5), Ok(1));
    assert_eq!(widths(0.01), Ok(7));
    assert_eq!(widths(1.0 / 256.0), Ok(8));
    assert_eq!(widths((-32f64).exp2()), Ok(32));
    for bad in [0.0, 1.0, -0.1, f64::NAN] {
        assert!(
            matches!(
                widths(bad),
                Err(RetrievalError::Core(CoreError::InvalidFalsePositiveRate(_)))
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        widths(1e-12),
        Err(RetrievalError::Core(
            CoreError::UnreachableFalsePositiveRate { .. }
        ))
    ));
    // fingerprint_bits wins over false_pos.
    let f = BloomierFilter::builder()
        .false_pos(0.5)
        .fingerprint_bits(12)
        .build(&[("x", 1u32)])
        .unwrap();
    assert_eq!(f.fingerprint_bits(), 12);
    assert!(matches!(
        BloomierFilter::builder()
            .value_bits(3)
            .build(&[("x", 8u32)]),
        Err(RetrievalError::InvalidParameter { name: "value", .. })
    ));
}

#[test]
fn zero_threads_is_a_typed_error() {
    let ks = keys(10);
    let zero = |e: RetrievalError| {
        matches!(
            e,
            RetrievalError::InvalidParameter {
                name: "threads",
                ..
            }
        )
    };
    assert!(zero(
        BinaryFuseFilter::<u8>::builder()
            .threads(0)
            .build(&ks)
            .unwrap_err()
    ));
    assert!(zero(
        XorFilter::<u8>::builder()
            .threads(0)
            .build(&ks)
            .unwrap_err()
    ));
    let pairs = [("x", 1u32)];
    assert!(zero(
        BloomierFilter::builder()
            .threads(0)
            .build(&pairs)
            .unwrap_err()
    ));
}

fn mismatch(e: RetrievalError) -> bool {
    e == RetrievalError::Core(CoreError::HasherMismatch)
}

macro_rules! keyed_round_trip {
    ($F:ident, $V:ident, $W:ty, $keys:expr) => {{
        let keys: &[String] = $keys;
        let f = $F::<$W>::builder()
            .hasher(KeyedHasher::with_key(K1))
            .threads(2)
            .build(keys)
            .unwrap();
        assert!(keys.iter().all(|k| f.contains(k)));
        assert!(keys.iter().all(|k| f.contains_hash(f.hasher().hash_one(k))));
        let bytes = f.to_bytes();
        // The key is not stored: readers without it, or with another, are refused.
        assert!(mismatch($F::<$W>::from_bytes(&bytes).unwrap_err()));
        assert!(mismatch($V::<$W>::from_bytes(&bytes).unwrap_err()));
        let wrong =
            $F::<$W, KeyedHasher>::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K2));
        assert!(mismatch(wrong.unwrap_err()));
        let back = $F::<$W, KeyedHasher>::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K1))
            .unwrap();
        assert_eq!(back.to_bytes(), bytes);
        let view = $V::<$W, KeyedHasher>::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K1))
            .unwrap();
        assert!(keys.iter().all(|k| view.contains(k) && back.contains(k)));
        assert_eq!(view.to_filter().to_bytes(), bytes);
        // An unkeyed filter read with another seed is refused too.
        let seeded = $F::<$W>::build_from(keys, 1).unwrap().to_bytes();
        let other =
            $F::<$W, DefaultHasher>::from_bytes_with_hasher(&seeded, DefaultHasher::with_seed(2));
        assert!(mismatch(other.unwrap_err()));
        let same =
            $F::<$W, DefaultHasher>::from_bytes_with_hasher(&seeded, DefaultHasher::with_seed(1));
        assert_eq!(same.unwrap().to_bytes(), seeded);
        assert_eq!($F::<$W>::read_from(&seeded[..]).unwrap().to_bytes(), seeded);
    }};
}

#[test]
fn keyed_hashers_round_trip_and_other_hashers_are_refused() {
    let ks = keys(3000);
    keyed_round_trip!(BinaryFuseFilter, BinaryFuseFilterView, u8, &ks);
    keyed_round_trip!(BinaryFuseFilter, BinaryFuseFilterView, u16, &ks);
    keyed_round_trip!(XorFilter, XorFilterView, u8, &ks);
    keyed_round_trip!(XorFilter, XorFilterView, u16, &ks);

    let pairs: Vec<(String, u32)> = ks.iter().map(|k| (k.clone(), k.len() as u32)).collect();
    let f = BloomierFilter::builder()
        .hasher(KeyedHasher::with_key(K1))
        .build(&pairs)
        .unwrap();
    assert!(pairs.iter().all(|(k, v)| f.get(k) == Some(*v)));
    let bytes = f.to_bytes();
    assert!(mismatch(BloomierFilter::from_bytes(&bytes).unwrap_err()));
    assert!(mismatch(
        BloomierFilterView::from_bytes(&bytes).unwrap_err()
    ));
    assert!(mismatch(
        BloomierFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K2)).unwrap_err()
    ));
    let back = BloomierFilter::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K1)).unwrap();
    let view =
        BloomierFilterView::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K1)).unwrap();
    assert!(pairs
        .iter()
        .all(|(k, v)| back.get(k) == Some(*v) && view.get(k) == Some(*v)));
    assert_eq!(back.to_bytes(), bytes);

    let mut t = Iblt::builder()
        .expected_diff(50)
        .hasher(KeyedHasher::with_key(K1))
        .build()
        .unwrap();
    let mut u = Iblt::builder()
        .expected_diff(50)
        .hasher(KeyedHasher::with_key(K1))
        .build()
        .unwrap();
    ks.iter().for_each(|k| t.insert(k));
    ks[3..].iter().for_each(|k| u.insert(k));
    let (only_t, only_u) = t.subtract(&u).unwrap().list_entries().unwrap();
    let mut want: Vec<u64> = ks[..3].iter().map(|k| t.hasher().hash_one(k)).collect();
    want.sort_unstable();
    assert_eq!((only_t, only_u), (want, vec![]));
    let other = Iblt::builder()
        .expected_diff(50)
        .hasher(KeyedHasher::with_key(K2))
        .build()
        .unwrap();
    assert!(matches!(
        t.subtract(&other),
        Err(RetrievalError::Mismatch { .. })
    ));
    let bytes = t.to_bytes();
    assert!(mismatch(Iblt::from_bytes(&bytes).unwrap_err()));
    assert!(mismatch(
        Iblt::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K2)).unwrap_err()
    ));
    assert_eq!(
        Iblt::from_bytes_with_hasher(&bytes, KeyedHasher::with_key(K1)).unwrap(),
        t
    );
}

#[test]
fn approximator_takes_a_hasher() {
    let mut keyed = CountMin::<u32>::builder()
        .expected_items(1000)
        .false_pos(0.01)
        .hasher(KeyedHasher::with_key(K1))
        .build()
        .unwrap();
    let mut plain = CountMin::<u32>::new(1000, 0.01).unwrap();
    assert_eq!(
        (keyed.cells(), keyed.num_hashes()),
        (plain.cells(), plain.num_hashes())
    );
    for (i, k) in keys(1000).iter().enumerate() {
        keyed.insert(k, i as u32 % 7 + 1);
        plain.insert(k, i as u32 % 7 + 1);
    }
    for (i, k) in keys(1000).iter().enumerate() {
        assert!(keyed.get(k) > i as u32 % 7);
        assert_eq!(keyed.get(k), keyed.get_hash(keyed.hasher().hash_one(k)));
    }
    let seeded = CountMin::<u32>::builder()
        .expected_items(1000)
        .seed(3)
        .build()
        .unwrap();
    assert_eq!(seeded.hasher().seed(), 3);
}

/// Key sets whose first hashes do not peel (found with the first encoding, which stored a
/// derived seed for them): the builder keeps the hasher it was given and records the retry, and
/// `contains_hash` still takes the hasher's own hashes.
#[test]
fn retries_keep_the_hasher_and_record_the_retry() {
    let small = keys(50);
    let retry_index = |bytes: &[u8]| u32::from_le_bytes(bytes[68..72].try_into().unwrap());
    let f = BinaryFuseFilter::<u8>::build_from(&small, 13).unwrap();
    assert_eq!(f.hasher().seed(), 13);
    let bytes = f.to_bytes();
    assert_ne!(
        retry_index(&bytes),
        0,
        "seed 13 was expected to need a retry"
    );
    assert!(small
        .iter()
        .all(|k| f.contains(k) && f.contains_hash(f.hasher().hash_one(k))));
    let back = BinaryFuseFilterView::<u8>::from_bytes(&bytes).unwrap();
    assert!(small.iter().all(|k| back.contains(k)));
    assert_eq!(back.to_filter().to_bytes(), bytes);

    let x = XorFilter::<u8>::build_from(&small, 8).unwrap();
    assert_eq!(x.hasher().seed(), 8);
    assert_ne!(
        retry_index(&x.to_bytes()),
        0,
        "seed 8 was expected to need a retry"
    );
    assert!(small.iter().all(|k| x.contains(k)));
    let back = XorFilter::<u8>::from_bytes(&x.to_bytes()).unwrap();
    assert!(small
        .iter()
        .all(|k| back.contains_hash(back.hasher().hash_one(k))));

    let pairs: Vec<(String, u32)> = small
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), i as u32 * 3))
        .collect();
    let b = BloomierFilter::build_with_seed(&pairs, 8, 8, 13).unwrap();
    assert_eq!(b.hasher().seed(), 13);
    assert_ne!(
        retry_index(&b.to_bytes()),
        0,
        "seed 13 was expected to need a retry"
    );
    let back = BloomierFilter::from_bytes(&b.to_bytes()).unwrap();
    assert!(pairs.iter().all(|(k, v)| back.get(k) == Some(*v)));
}

/// A hasher that gives every key the same hash: the worst a custom hasher can do.
#[derive(Clone, Debug)]
struct Constant;

struct ConstantState;

impl Hasher for ConstantState {
    fn finish(&self) -> u64 {
        0x1234_5678_9abc_def0
    }
    fn write(&mut self, _: &[u8]) {}
}

impl BuildHasher for Constant {
    type Hasher = ConstantState;
    fn build_hasher(&self) -> ConstantState {
        ConstantState
    }
}

/// Keys that hash alike are one key to a membership filter, and to a Bloomier filter
/// when their values agree; with different values and a hasher that cannot be reseeded
/// the build says so.
#[test]
fn colliding_hashes_are_merged_or_refused() {
    let ks = keys(100);
    let f = BinaryFuseFilter::<u8>::builder()
        .hasher(Constant)
        .build(&ks)
        .unwrap();
    assert_eq!(f.len(), 1);
    assert!(ks.iter().all(|k| f.contains(k)));
    let x = XorFilter::<u16>::builder()
        .hasher(Constant)
        .build(&ks)
        .unwrap();
    assert!(ks.iter().all(|k| x.contains(k)));
    let same: Vec<(&String, u32)> = ks.iter().map(|k| (k, 5)).collect();
    let b = BloomierFilter::builder()
        .hasher(Constant)
        .build(&same)
        .unwrap();
    assert_eq!(b.len(), 1);
    assert!(ks.iter().all(|k| b.get(&k) == Some(5)));
    let differ = [("a", 1u32), ("b", 2)];
    let e = BloomierFilter::builder()
        .hasher(Constant)
        .build(&differ)
        .unwrap_err();
    assert!(matches!(e, RetrievalError::HashCollision { .. }), "{e:?}");
    assert!(e.to_string().contains("another hasher key or seed"));
    // A key given twice with two values is still that error, whatever the hasher.
    let twice = [("a", 1u32), ("a", 2)];
    assert!(matches!(
        BloomierFilter::builder().hasher(Constant).build(&twice),
        Err(RetrievalError::DuplicateKey { .. })
    ));
}
