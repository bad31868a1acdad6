//! The atomic forms under threads, and the partitioned parallel loads.

use bloomforge_bitmap::{
    AtomicBitmap, AtomicTwoBitmap, Bitmap, BitmapError, RangeBuckets, Seen, TwoBitmap,
};
use std::collections::{BTreeMap, BTreeSet};

/// A fixed-seed xorshift stream.
fn values(seed: u64, n: usize, universe: u64) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % universe) as u32
        })
        .collect()
}

fn counts(v: &[u32]) -> BTreeMap<u32, usize> {
    let mut m = BTreeMap::new();
    for &x in v {
        *m.entry(x).or_insert(0) += 1;
    }
    m
}

#[test]
fn parallel_loads_match_the_serial_ones() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    // 2^24 and 2^24 + 12345 are dense enough for the partitioned (bucket-by-region) load.
    // 4.5M values: past 2^22, the partition's counting and scatter passes run on all
    // four threads (pieces of the input), which must give the serial result.
    for (seed, universe, n) in [
        (1u64, 1u64 << 20, 200_000),
        (2, 100_003, 200_000),
        (3, 1 << 32, 200_000),
        (4, 1 << 24, 200_000),
        (5, (1 << 24) + 12345, 200_000),
        (6, (1 << 25) + 777, 4_500_000),
    ] {
        let v = values(seed, n, universe);
        let mut serial = TwoBitmap::new(universe).unwrap();
        serial.insert_batch(&v).unwrap();
        let mut par = TwoBitmap::new(universe).unwrap();
        pool.install(|| par.par_insert_batch(&v)).unwrap();
        assert!(par == serial, "2-bitmap, universe {universe}");
        let c = counts(&v);
        assert_eq!(par.count_distinct(), c.len() as u64);
        assert!(par
            .iter_once()
            .eq(c.iter().filter(|e| *e.1 == 1).map(|e| *e.0)));
        if universe < 1 << 32 {
            let mut b = Bitmap::new(universe).unwrap();
            pool.install(|| b.par_insert_batch(&v)).unwrap();
            assert!(b.iter().eq(c.keys().copied()));
        }
    }
}

/// Many runs with fixed seeds: threads insert overlapping streams into one atomic
/// 2-bitmap and one atomic bitmap. Every value inserted twice in total must read Many,
/// once must read Once; exactly one insert per value returns Never, at most one Once; the
/// bitmap loses nothing. Small universes make threads collide on words constantly.
#[test]
fn atomic_forms_lose_nothing_and_never_say_once_for_twice() {
    const THREADS: usize = 4;
    for run in 0..40u64 {
        let universe = [64u64, 1000, 1 << 16][run as usize % 3];
        let streams: Vec<Vec<u32>> = (0..THREADS)
            .map(|t| values(run * 31 + t as u64 + 1, 5_000, universe))
            .collect();
        let two = AtomicTwoBitmap::new(universe).unwrap();
        let one = AtomicBitmap::new(universe).unwrap();
        let returned: Vec<Vec<Seen>> = std::thread::scope(|s| {
            let handles: Vec<_> = streams
                .iter()
                .map(|st| {
                    let (two, one) = (&two, &one);
                    s.spawn(move || {
                        st.iter()
                            .map(|&x| {
                                one.insert(x).unwrap();
                                two.insert(x).unwrap()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let all: Vec<u32> = streams.concat();
        let c = counts(&all);
        let mut nevers: BTreeMap<u32, usize> = BTreeMap::new();
        let mut onces: BTreeMap<u32, usize> = BTreeMap::new();
        for (st, ret) in streams.iter().zip(&returned) {
            for (&x, &r) in st.iter().zip(ret) {
                match r {
                    Seen::Never => *nevers.entry(x).or_default() += 1,
                    Seen::Once => *onces.entry(x).or_default() += 1,
                    Seen::Many => {}
                }
            }
        }
        for (&x, &n) in &c {
            let want = if n == 1 { Seen::Once } else { Seen::Many };
            assert_eq!(two.seen(x), want, "run {run}, value {x} inserted {n} times");
            assert_eq!(
                nevers.get(&x),
                Some(&1),
                "run {run}: one insert of {x} found it new"
            );
            assert_eq!(onces.get(&x).copied().unwrap_or(0), usize::from(n > 1));
            assert!(one.contains(x));
        }
        assert_eq!(one.len(), c.len() as u64);
        let plain = two.into_inner();
        assert_eq!(plain.count_distinct(), c.len() as u64);
        assert_eq!(
            plain.count_many(),
            c.values().filter(|&&n| n > 1).count() as u64
        );
        let b = one.into_inner();
        assert!(b.iter().eq(c.keys().copied()));
    }
}

#[test]
fn atomic_batches_and_conversions() {
    let a = AtomicBitmap::new(1000).unwrap();
    a.insert_batch(&[1, 2, 999]).unwrap();
    assert!(a.insert_batch(&[1000]).is_err());
    assert!(a.insert(1000).is_err());
    assert!(a.remove(2) && !a.remove(2) && !a.remove(5000));
    assert_eq!(a.len(), 2);
    let b = a.into_inner();
    let a: AtomicBitmap = b.clone().into();
    assert!(a.contains(999) && !a.contains(2) && !a.is_empty());
    let t = AtomicTwoBitmap::new(100).unwrap();
    t.insert_batch(&[7, 7, 8]).unwrap();
    assert!(t.insert_batch(&[100]).is_err());
    assert_eq!(
        (t.seen(7), t.seen(8), t.seen(9)),
        (Seen::Many, Seen::Once, Seen::Never)
    );
    let plain = t.into_inner();
    let back: AtomicTwoBitmap = plain.into();
    assert_eq!(back.seen(7), Seen::Many);
}

/// The atomic bitmap's queries (len, iter, contains_batch), snapshot and conversions, and
/// clear (in place for a small array, fresh zero pages for the full domain), after four
/// threads filled it.
#[test]
fn atomic_bitmap_queries_clear_and_conversions() {
    let universe = 1u64 << 20;
    let v = values(11, 20_000, universe);
    let model: BTreeSet<u32> = v.iter().copied().collect();
    let a = AtomicBitmap::new(universe).unwrap();
    std::thread::scope(|s| {
        for c in v.chunks(5_000) {
            let a = &a;
            s.spawn(move || a.insert_batch(c).unwrap());
        }
    });
    assert_eq!(a.len(), model.len() as u64);
    assert_eq!(a.memory_bytes(), universe / 8);
    assert!(a.iter().eq(model.iter().copied()));
    assert!((&a).into_iter().eq(model.iter().copied()));
    // Queries inside and outside the universe.
    let queries = values(12, 10_000, universe * 2);
    let mut out = vec![false; queries.len()];
    a.contains_batch(&queries, &mut out).unwrap();
    for (q, &o) in queries.iter().zip(&out) {
        assert_eq!(o, model.contains(q), "query {q}");
    }
    let mut short = vec![true; 3];
    assert!(matches!(
        a.contains_batch(&queries, &mut short),
        Err(BitmapError::Core(
            bloomforge_core::Error::LengthMismatch { .. }
        ))
    ));
    assert_eq!(short, [true; 3], "out untouched");
    // Snapshot, and the no-copy conversions both ways.
    let snap = a.to_bitmap().unwrap();
    assert!(snap.iter().eq(model.iter().copied()));
    let plain: Bitmap = a.into();
    assert_eq!(plain, snap);
    let mut a = AtomicBitmap::from(plain);
    assert_eq!(a.len(), model.len() as u64);
    a.clear();
    assert!(a.is_empty() && a.iter().next().is_none());
    assert_eq!(a.len(), 0);
    assert!(a.insert(5).unwrap() && a.iter().eq([5]));
    // The whole domain: clear swaps in fresh pages.
    let mut f = AtomicBitmap::full_u32().unwrap();
    for x in [u32::MAX, 0, 64, 63] {
        assert!(f.insert(x).unwrap());
    }
    assert_eq!(f.len(), 4);
    assert_eq!(f.iter().collect::<Vec<_>>(), [0, 63, 64, u32::MAX]);
    f.clear();
    assert!(f.is_empty() && !f.contains(u32::MAX));
    assert_eq!(f.len(), 0);
    // The 2-bitmap's conversions.
    let t = AtomicTwoBitmap::new(100).unwrap();
    t.insert_batch(&[1, 1, 2]).unwrap();
    let plain: TwoBitmap = t.into();
    assert_eq!(plain.iter_once().collect::<Vec<_>>(), [2]);
    assert_eq!(plain.iter_many().collect::<Vec<_>>(), [1]);
}

/// Clearing a small 2-bitmap again and again (in place) and refilling it gives the same
/// answers as a fresh one.
#[test]
fn small_tables_clear_in_place() {
    let mut t = TwoBitmap::new(1 << 16).unwrap();
    let mut b = Bitmap::new(1 << 16).unwrap();
    for round in 0..4u64 {
        let v = values(round + 20, 3_000, 1 << 16);
        t.clear();
        b.clear();
        assert!(t.is_empty() && b.is_empty());
        t.insert_batch(&v).unwrap();
        b.insert_batch(&v).unwrap();
        let c = counts(&v);
        assert!(t
            .iter_once()
            .eq(c.iter().filter(|e| *e.1 == 1).map(|e| *e.0)));
        assert!(b.iter().eq(c.keys().copied()));
    }
}

/// The in-memory plan of `ints unique`: values grouped by range on a pool of threads
/// (pieces large enough for the line-buffered scatter), each range solved with a 2-bitmap
/// of its span, equals the model's exactly-once values; and `insert_bucket` refuses a
/// table smaller than the span.
#[test]
fn range_buckets_solve_exactly_once() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let mut v = values(30, 600_000, 1 << 32);
    v.extend(values(31, 200_000, 1 << 20)); // repeats in the low ranges
    v.extend([0, 0, 1, u32::MAX, 1 << 31, (1 << 31) - 1]);
    let (a, b) = v.split_at(333_333);
    let c = counts(&v);
    let once: Vec<u32> = c.iter().filter(|e| *e.1 == 1).map(|e| *e.0).collect();
    for bits in [1u32, 6, 10] {
        let buckets = pool
            .install(|| RangeBuckets::par_new(&[a, b], bits))
            .unwrap();
        assert_eq!(buckets.len(), v.len());
        let mut got = Vec::new();
        let mut t = TwoBitmap::new(buckets.span()).unwrap();
        for k in 0..buckets.buckets() {
            t.clear();
            t.insert_bucket(&buckets, k).unwrap();
            let base = (k as u64 * buckets.span()) as u32;
            t.for_each_once_block(0..buckets.span(), base, |b| got.extend_from_slice(b));
        }
        assert_eq!(got, once, "{bits} bits");
    }
    let buckets = RangeBuckets::par_new(&[&v], 10).unwrap();
    let mut small = TwoBitmap::new(buckets.span() - 1).unwrap();
    assert!(matches!(
        small.insert_bucket(&buckets, 0),
        Err(BitmapError::UniverseMismatch { .. })
    ));
    assert!(small.is_empty());
}

/// The sparse parallel loads from 4 threads on group the values by range before the
/// updates: on pools of 5 and 16 threads, universes with a ragged last range included,
/// they give the serial result. (The full `u32` universe is covered at 4 threads above;
/// here 2^28 keeps the tables at 64 MiB: random values touch every huge page of a table.)
#[test]
fn grouped_sparse_loads_match_the_serial_ones() {
    for threads in [5usize, 16] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for (seed, universe) in [(7u64, 1u64 << 28), (8, 100_003), (9, (1 << 25) + 777)] {
            let v = values(seed, 300_000, universe);
            let mut serial = TwoBitmap::new(universe).unwrap();
            serial.insert_batch(&v).unwrap();
            let mut par = TwoBitmap::new(universe).unwrap();
            pool.install(|| par.par_insert_batch(&v)).unwrap();
            assert!(
                par == serial,
                "2-bitmap, {threads} threads, universe {universe}"
            );
            let mut serial = Bitmap::new(universe).unwrap();
            serial.insert_batch(&v).unwrap();
            let mut par = Bitmap::new(universe).unwrap();
            pool.install(|| par.par_insert_batch(&v)).unwrap();
            assert!(
                par == serial,
                "bitmap, {threads} threads, universe {universe}"
            );
        }
    }
}
