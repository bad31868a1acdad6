//! The conventions' two entry points (`new(expected_items, false_pos)` and the builder)
//! build the same filter as the older `with_false_pos(p).expected_items(n)`, seeded or not,
//! and refuse bad parameters with the same errors, for every core filter.

use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter,
    BlockedBloomFilter, Error, SplitBlockBloomFilter, StandardBloomFilter,
};

macro_rules! check {
    ($T:ty, $fill:expr) => {{
        let keys: Vec<u64> = (0..5000).collect();
        let fill = $fill;
        let a = fill(<$T>::new(5000, 0.02).unwrap(), &keys);
        let b = fill(
            <$T>::builder()
                .expected_items(5000)
                .false_pos(0.02)
                .build()
                .unwrap(),
            &keys,
        );
        let c = fill(
            <$T>::with_false_pos(0.02).expected_items(5000).unwrap(),
            &keys,
        );
        assert!(a == b && a == c, "{}: entry points differ", stringify!($T));
        let s = fill(
            <$T>::builder()
                .expected_items(5000)
                .false_pos(0.02)
                .seed(9)
                .build()
                .unwrap(),
            &keys,
        );
        let t = fill(
            <$T>::with_false_pos(0.02)
                .seed(9)
                .expected_items(5000)
                .unwrap(),
            &keys,
        );
        assert!(s == t && s != a, "{}: seeds", stringify!($T));
        assert_eq!(<$T>::new(0, 0.01).err(), Some(Error::ZeroItems));
        assert_eq!(
            <$T>::builder().false_pos(0.01).build().err(),
            Some(Error::ZeroItems)
        );
        for p in [0.0, 1.0, -0.5, f64::NAN] {
            assert!(matches!(
                <$T>::new(10, p).err(),
                Some(Error::InvalidFalsePositiveRate(_))
            ));
        }
    }};
}

#[test]
fn plain_filters_new_builder_and_with_false_pos_agree() {
    check!(
        BlockedBloomFilter,
        |mut f: BlockedBloomFilter, k: &[u64]| {
            f.insert_batch(k);
            f.to_bytes()
        }
    );
    check!(
        SplitBlockBloomFilter,
        |mut f: SplitBlockBloomFilter, k: &[u64]| {
            f.insert_batch(k);
            f.to_bytes()
        }
    );
    check!(
        StandardBloomFilter,
        |mut f: StandardBloomFilter, k: &[u64]| {
            f.insert_batch(k);
            f.to_bytes()
        }
    );
}

#[test]
fn atomic_filters_new_builder_and_with_false_pos_agree() {
    fn bytes(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out);
        out
    }
    check!(
        AtomicBlockedBloomFilter,
        |f: AtomicBlockedBloomFilter, k: &[u64]| {
            f.insert_batch(k);
            bytes(|o| f.write_to(o).unwrap())
        }
    );
    check!(
        AtomicSplitBlockBloomFilter,
        |f: AtomicSplitBlockBloomFilter, k: &[u64]| {
            f.insert_batch(k);
            bytes(|o| f.write_to(o).unwrap())
        }
    );
    check!(
        AtomicStandardBloomFilter,
        |f: AtomicStandardBloomFilter, k: &[u64]| {
            f.insert_batch(k);
            bytes(|o| f.write_to(o).unwrap())
        }
    );
}
