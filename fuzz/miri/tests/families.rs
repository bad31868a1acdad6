//! The unsafe paths of the counting, bitmap and cuckoo crates at sizes Miri interprets in
//! seconds: the counting filter's line kernels and pipelined batches (plain and atomic,
//! the plain <-> atomic casts), the bitmaps' word kernels, plain <-> atomic casts and field
//! extraction, the cuckoo filter's unaligned bucket reads (scalar and SWAR), its
//! pipelined batch query, the zero-copy view and the sharded filter.
//!
//! `cargo +nightly miri test` in this directory (see ../README.md). It also runs natively.

use bloomforge_bitmap::{AtomicBitmap, AtomicTwoBitmap, Bitmap, Seen, TwoBitmap};
use bloomforge_core::{Backend, RemoveOutcome};
use bloomforge_counting::{AtomicCountingBloomFilter, CountingBloomFilter};
use bloomforge_cuckoo::{ConcurrentCuckooFilter, CuckooFilter, CuckooFilterView, Fp16, Fp8};

/// More keys than the batch loops' prefetch windows, so their rings wrap.
const N: u64 = 70;

#[test]
fn counting_kernels_batches_and_atomic_casts() {
    // Explicit counters and probes: sizing from a false-positive target sums the
    // theory's series, which Miri interprets slowly.
    let mut f = CountingBloomFilter::with_num_counters(2048)
        .hashes(6)
        .unwrap();
    for backend in Backend::available() {
        f.set_backend(backend).unwrap();
        f.clear();
        let keys: Vec<u64> = (0..N).collect();
        f.insert_batch(&keys);
        let mut out = vec![false; keys.len()];
        f.contains_batch(&keys, &mut out).unwrap();
        assert!(out.iter().all(|&x| x), "{backend:?}");
        for k in &keys[..10] {
            f.insert(k);
            assert_eq!(f.remove(k).unwrap(), RemoveOutcome::Removed);
        }
        f.remove_batch(&keys, &mut out).unwrap();
        assert!(out.iter().all(|&x| x), "{backend:?}");
        assert!(keys.iter().all(|k| !f.contains(k)) || f.len() == 0);
    }
    // Plain -> atomic -> plain reinterpret the lines in place.
    let a = AtomicCountingBloomFilter::from(f);
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let a = &a;
            s.spawn(move || {
                let keys: Vec<u64> = (t * 100..t * 100 + 20).collect();
                a.insert_batch(&keys);
                for k in &keys {
                    a.insert(k);
                }
            });
        }
    });
    assert!((0..20u64).chain(100..120).all(|k| a.contains(&k)));
    let bytes = a.to_bytes();
    let back = a.into_inner();
    assert_eq!(back.to_bytes(), bytes);
    assert!(CountingBloomFilter::from_bytes(&bytes).is_ok());
}

#[test]
fn bitmap_kernels_and_atomic_casts() {
    let values: Vec<u32> = (0..300u32).map(|i| (i * 37) % 1000).collect();
    for backend in Backend::available() {
        let mut b = Bitmap::new(1000).unwrap();
        b.set_backend(backend).unwrap();
        b.insert_batch(&values).unwrap();
        let mut c = Bitmap::new(1000).unwrap();
        c.set_backend(backend).unwrap();
        c.insert_batch(&[1, 2, 999]).unwrap();
        b.union(&c).unwrap();
        assert_eq!(b.len(), b.iter().count() as u64);
        let mut t = TwoBitmap::new(1000).unwrap();
        t.set_backend(backend).unwrap();
        t.insert_batch(&values).unwrap();
        t.insert_batch(&values[..50]).unwrap();
        let mut once = Vec::new();
        t.append_once(0..1000, 0, &mut once);
        assert_eq!(once, t.iter_once().collect::<Vec<_>>(), "{backend:?}");
        assert_eq!(t.count_many(), t.iter_many().count() as u64);
        assert_eq!(t.seen(values[0]), Seen::Many);
    }
    // Plain <-> atomic reinterpret the words in place; concurrent inserts through `&`.
    let a = AtomicBitmap::from(Bitmap::new(1000).unwrap());
    let t = AtomicTwoBitmap::from(TwoBitmap::new(1000).unwrap());
    std::thread::scope(|s| {
        for half in values.chunks(150) {
            let (a, t) = (&a, &t);
            s.spawn(move || {
                a.insert_batch(half).unwrap();
                t.insert_batch(half).unwrap();
            });
        }
    });
    let bytes = a.to_bytes();
    let plain = a.into_inner();
    assert_eq!(plain.to_bytes(), bytes);
    assert_eq!(t.into_inner().len(), plain.len());
}

#[test]
fn cuckoo_buckets_batches_view_and_shards() {
    fn run<F: bloomforge_cuckoo::Fingerprint>(bucket: u32) {
        let mut f: CuckooFilter<F> = CuckooFilter::builder()
            .expected_items(100)
            .bucket_size(bucket)
            .fingerprint::<F>()
            .build()
            .unwrap();
        let hashes: Vec<u64> = (0..N)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        f.insert_hash_batch(&hashes).unwrap();
        for backend in Backend::available() {
            f.set_backend(backend).unwrap();
            let mut out = vec![false; hashes.len()];
            f.contains_hash_batch(&hashes, &mut out).unwrap();
            assert!(out.iter().all(|&x| x), "{backend:?}");
            assert!(hashes.iter().all(|&h| f.contains_hash(h)));
        }
        let bytes = f.to_bytes();
        let view = CuckooFilterView::<F>::from_bytes(&bytes).unwrap();
        assert!(hashes.iter().all(|&h| view.contains_hash(h)));
        for &h in &hashes[..10] {
            f.remove_hash(h).unwrap();
        }
    }
    run::<Fp8>(2);
    run::<bloomforge_cuckoo::Fp12>(4);
    run::<Fp16>(8);
    let c = ConcurrentCuckooFilter::new(3000, 0.01).unwrap();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let c = &c;
            s.spawn(move || {
                for k in t * 50..t * 50 + 30 {
                    c.insert(&k).unwrap();
                }
            });
        }
    });
    let back =
        ConcurrentCuckooFilter::<bloomforge_cuckoo::Fp12>::from_bytes(&c.to_bytes()).unwrap();
    assert!((0..30u64).chain(50..80).all(|k| back.contains(&k)));
}
