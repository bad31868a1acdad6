//! Compact approximators against `HashMap` models and the exactness theory.

use std::collections::HashMap;

use bloomforge_core::hash::DefaultHasher;
use bloomforge_retrieval::{CellLayout, CompactApproximator, CountMin, MaxLattice, MinLattice};
use statrs::distribution::{Binomial, DiscreteCDF};

/// Two-sided binomial check with false-alarm probability at most 1e-6.
fn assert_binomial(hits: u64, trials: u64, p: f64, what: &str) {
    let d = Binomial::new(p, trials).unwrap();
    let lower_tail = d.cdf(hits);
    let upper_tail = if hits == 0 {
        1.0
    } else {
        1.0 - d.cdf(hits - 1)
    };
    assert!(
        lower_tail > 0.5e-6 && upper_tail > 0.5e-6,
        "{what}: {hits} of {trials}, expected {:.1}",
        trials as f64 * p
    );
}

fn values(n: u64) -> Vec<(u64, u32)> {
    (0..n * 3)
        .map(|i| {
            let x = bloomforge_core::hash::mix64(i);
            (x % n, (x >> 40) as u32 % 1000)
        })
        .collect()
}

const LAYOUTS: [CellLayout; 2] = [CellLayout::Subtables, CellLayout::Blocked];

#[test]
fn bounds_hold_against_a_model() {
    for layout in LAYOUTS {
        bounds_hold(layout);
    }
}

fn bounds_hold(layout: CellLayout) {
    let ops = values(5000);
    let h = || DefaultHasher::with_seed(0);
    let mut max =
        CompactApproximator::<MaxLattice<u32>>::with_layout(layout, 8000, 4, h()).unwrap();
    let mut min =
        CompactApproximator::<MinLattice<u16>>::with_layout(layout, 8000, 4, h()).unwrap();
    let mut sum = CountMin::<u32>::with_layout(layout, 8000, 4, h()).unwrap();
    let mut small = CountMin::<u8>::with_layout(layout, 8000, 4, h()).unwrap();
    assert_eq!(max.layout(), layout);
    let (mut mmax, mut mmin, mut msum) = (HashMap::new(), HashMap::new(), HashMap::new());
    for &(k, v) in &ops {
        max.insert(&k, v);
        min.insert(&k, v as u16);
        sum.insert(&k, v);
        small.insert(&k, (v % 200) as u8);
        let e = mmax.entry(k).or_insert(0u32);
        *e = (*e).max(v);
        let e = mmin.entry(k).or_insert(u16::MAX);
        *e = (*e).min(v as u16);
        let e = msum.entry(k).or_insert((0u32, 0u32));
        *e = (e.0 + v, e.1 + v % 200);
    }
    let mut exact = 0;
    for (k, v) in &mmax {
        assert!(max.get(k) >= *v);
        assert!(min.get(k) <= mmin[k]);
        let (total, small_total) = msum[k];
        assert!(sum.get(k) >= total);
        exact += usize::from(sum.get(k) == total);
        assert!(
            u32::from(small.get(k)) >= small_total.min(255),
            "u8 saturates at 255"
        );
    }
    // 5000 keys in 8000 cells, 4 probes: most answers are still exact (a count-min that
    // added a key twice to a cell drawn twice would not be).
    assert!(exact > mmax.len() / 4, "{layout:?}: {exact} exact");
}

/// One designated key per table (independent trials over seeds): with unit counts (or the
/// designated key's value the smallest for max, the largest for min) its answer is exact
/// exactly when one of its cells holds no other key: probability
/// `1 - (1 - (1 - 1/s)^(n-1))^k` for subtables of `s` cells; for blocked lines of 64 `u8`
/// cells, one minus the blocked Bloom filter's false-positive rate with the other `n - 1`
/// keys' Binomial line loads and probes with replacement (core's
/// `blocked_fp_exact_load`, an independent formula: a Markov chain over a line's touched
/// cells).
#[test]
fn exact_with_the_theoretical_probability() {
    use bloomforge_core::math::{blocked_fp_exact_load, ProbeModel};
    let (m, k, n) = (300usize, 3usize, 100u64);
    let s = (m / k) as f64;
    let p = 1.0 - (1.0 - (1.0 - 1.0 / s).powi(n as i32 - 1)).powi(k as i32);
    exact_as_theory(CellLayout::Subtables, m, k, n, p);
    // Blocked: 4 lines of 64 cells, about 25 other keys a line.
    let m = 256;
    let p = 1.0 - blocked_fp_exact_load(m as u64, n - 1, 64, k as u32, ProbeModel::Replace);
    assert!((0.4..0.9).contains(&p), "{p}");
    exact_as_theory(CellLayout::Blocked, m, k, n, p);
}

fn exact_as_theory(layout: CellLayout, m: usize, k: usize, n: u64, p: f64) {
    let trials = 20_000u64;
    let (mut exact_sum, mut exact_max, mut exact_min) = (0u64, 0u64, 0u64);
    for seed in 0..trials {
        let h = || DefaultHasher::with_seed(seed);
        let mut sum = CountMin::<u8>::with_layout(layout, m, k, h()).unwrap();
        let mut max =
            CompactApproximator::<MaxLattice<u8>>::with_layout(layout, m, k, h()).unwrap();
        let mut min =
            CompactApproximator::<MinLattice<u8>>::with_layout(layout, m, k, h()).unwrap();
        for key in 0..n {
            sum.insert(&key, 1);
            max.insert(&key, if key == 0 { 1 } else { 2 });
            min.insert(&key, if key == 0 { 2 } else { 1 });
        }
        exact_sum += u64::from(sum.get(&0u64) == 1);
        exact_max += u64::from(max.get(&0u64) == 1);
        exact_min += u64::from(min.get(&0u64) == 2);
    }
    assert_binomial(exact_sum, trials, p, &format!("{layout:?} count-min exact"));
    assert_binomial(exact_max, trials, p, &format!("{layout:?} max exact"));
    assert_binomial(exact_min, trials, p, &format!("{layout:?} min exact"));
}

#[test]
fn parameters_are_checked() {
    assert!(CountMin::<u8>::with_cells(0, 3).is_err());
    assert!(CountMin::<u8>::with_cells(10, 0).is_err());
    assert!(CountMin::<u8>::with_cells(10, 17).is_err());
    let mut c = CountMin::<u8>::with_cells(10, 2).unwrap();
    for _ in 0..300 {
        c.insert("a", 1);
    }
    assert_eq!(c.get("a"), 255);
    c.clear();
    assert_eq!(c.get("a"), 0);
}

/// `new(n, p)` and the builder size alike from the theory, and at `n` keys the inexact
/// answers stay at the target rate; `collect` / `extend` match a `HashMap` model's bounds.
#[test]
fn new_builder_and_collect() {
    use bloomforge_retrieval::RetrievalError;
    let n = 20_000u64;
    let mut a = CountMin::<u32>::new(n, 0.01).unwrap();
    let b = CountMin::<u32>::builder()
        .expected_items(n)
        .false_pos(0.01)
        .seed(0)
        .build()
        .unwrap();
    assert_eq!((a.cells(), a.num_hashes()), (b.cells(), b.num_hashes()));
    // core's std_size for 20 000 keys at 1 %: about 9.6 cells a key, k = 7.
    assert_eq!(a.num_hashes(), 7);
    assert!((9.5..9.8).contains(&(a.cells() as f64 / n as f64)));
    for i in 0..n {
        a.insert(&i, 1);
    }
    let inexact = (0..n).filter(|i| a.get(i) != 1).count() as u64;
    // Inexact with probability at most 1 % per key; 200 expected (sd 14): above 300 is
    // 7 sd out (p < 1e-11). (Keys' answers are weakly dependent; the margin covers it.)
    assert!(inexact <= 300, "{inexact}");
    for bad in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(matches!(
            CountMin::<u8>::new(10, bad),
            Err(RetrievalError::Core(
                bloomforge_core::Error::InvalidFalsePositiveRate(_)
            ))
        ));
    }
    assert_eq!(
        CountMin::<u8>::new(0, 0.01).unwrap_err(),
        RetrievalError::Core(bloomforge_core::Error::ZeroItems)
    );
    assert!(CountMin::<u8>::builder().build().is_err());

    let ops = values(3000);
    let collected: CompactApproximator<MaxLattice<u32>> = ops.iter().copied().collect();
    // `collect` sizes for as many keys as pairs, at the default 1 %.
    let mut extended = CompactApproximator::<MaxLattice<u32>>::new(ops.len() as u64, 0.01).unwrap();
    extended.extend(ops.iter().copied());
    let mut model: HashMap<u64, u32> = HashMap::new();
    for &(k, v) in &ops {
        let e = model.entry(k).or_insert(0);
        *e = (*e).max(v);
    }
    for (k, &v) in &model {
        assert!(collected.get(k) >= v);
        assert_eq!(collected.get(k), extended.get(k));
    }
}

/// The batch operations give exactly the single-key results; a length mismatch is an
/// error that leaves `out` untouched.
#[test]
fn batches_match_single_operations() {
    for layout in LAYOUTS {
        batches_match(layout);
    }
}

fn batches_match(layout: CellLayout) {
    let ops = values(4000);
    let h = || DefaultHasher::with_seed(9);
    let mut single = CountMin::<u16>::with_layout(layout, 30_000, 5, h()).unwrap();
    let mut batch = CountMin::<u16>::with_layout(layout, 30_000, 5, h()).unwrap();
    for (k, v) in &ops {
        single.insert(k, *v as u16);
    }
    batch.insert_batch(&ops.iter().map(|&(k, v)| (k, v as u16)).collect::<Vec<_>>());
    let keys: Vec<u64> = (0..5000).collect();
    let mut out = vec![0u16; keys.len()];
    batch.get_batch(&keys, &mut out).unwrap();
    for (k, o) in keys.iter().zip(&out) {
        assert_eq!(*o, single.get(k));
    }
    let mut short = vec![7u16; 3];
    assert!(batch.get_batch(&keys, &mut short).is_err());
    assert_eq!(short, vec![7u16; 3]);
}

/// The blocked layout sized by `new`'s formula: whole 64-cell lines, more cells than
/// subtables need for the same target (one line a key costs some), its own theory at the
/// target, and about that many inexact answers when filled.
#[test]
fn blocked_sizing_meets_the_target() {
    use bloomforge_core::math::{blocked_fp_exact_load, ProbeModel};
    let n = 20_000u64;
    let mut a = CountMin::<u8>::builder()
        .expected_items(n)
        .false_pos(0.01)
        .layout(CellLayout::Blocked)
        .build()
        .unwrap();
    let subtables = CountMin::<u8>::new(n, 0.01).unwrap();
    assert_eq!(a.layout(), CellLayout::Blocked);
    assert_eq!(a.cells() % 64, 0);
    let more = a.cells() as f64 / subtables.cells() as f64;
    assert!((1.0..1.5).contains(&more), "{more}");
    let theory = blocked_fp_exact_load(
        a.cells() as u64,
        n - 1,
        64,
        a.num_hashes(),
        ProbeModel::Replace,
    );
    assert!((0.008..=0.0101).contains(&theory), "{theory}");
    for i in 0..n {
        a.insert(&i, 1);
    }
    let inexact = (0..n).filter(|i| a.get(i) != 1).count() as u64;
    // About 200 expected (binomial sd 14). Keys sharing a line are correlated, which
    // widens the spread by a small factor: 50..=400 is more than 10 binomial sd either
    // side (false alarm far below 1e-6 even at 3x the spread).
    assert!((50..=400).contains(&inexact), "{inexact} of {n}");
    // u16 and u64 cells: 32 and 8 cells a line.
    let wide = CompactApproximator::<MaxLattice<u64>>::builder()
        .expected_items(1000)
        .layout(CellLayout::Blocked)
        .build()
        .unwrap();
    assert_eq!(wide.cells() % 8, 0);
    let half =
        CountMin::<u16>::with_layout(CellLayout::Blocked, 100, 3, DefaultHasher::with_seed(1))
            .unwrap();
    assert_eq!(half.cells(), 128);
}

/// Serialization round trips every lattice, width and layout: the same answers, the same
/// bytes again, through `read_from` too; corrupt, truncated and keyed bytes are refused.
#[test]
fn serialization_round_trips_and_refuses_bad_bytes() {
    use bloomforge_core::Error as CoreError;
    use bloomforge_retrieval::{RetrievalError, SumLattice};
    fn check<L: bloomforge_retrieval::PersistentLattice>(
        a: &CompactApproximator<L>,
        probe: impl Fn(&CompactApproximator<L>, u64) -> String,
    ) {
        let bytes = a.to_bytes();
        let back = CompactApproximator::<L>::from_bytes(&bytes).unwrap();
        let streamed = CompactApproximator::<L>::read_from(&bytes[..]).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(streamed.to_bytes(), bytes);
        assert_eq!((back.layout(), back.cells()), (a.layout(), a.cells()));
        for key in 0..4000u64 {
            assert_eq!(probe(&back, key), probe(a, key), "key {key}");
        }
        // A flipped bit anywhere fails the checksum; every truncation is refused.
        for at in [10, 70, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            assert!(
                CompactApproximator::<L>::from_bytes(&bad).is_err(),
                "flip at {at}"
            );
        }
        for len in [0, 40, 64, 70, bytes.len() - 1] {
            assert!(
                CompactApproximator::<L>::from_bytes(&bytes[..len]).is_err(),
                "len {len}"
            );
        }
    }
    for layout in [CellLayout::Subtables, CellLayout::Blocked] {
        let h = || DefaultHasher::with_seed(5);
        let mut max8 =
            CompactApproximator::<MaxLattice<u8>>::with_layout(layout, 3000, 4, h()).unwrap();
        let mut min16 =
            CompactApproximator::<MinLattice<u16>>::with_layout(layout, 3000, 3, h()).unwrap();
        let mut sum32 = CountMin::<u32>::with_layout(layout, 3000, 5, h()).unwrap();
        let mut sum64 =
            CompactApproximator::<SumLattice<u64>>::with_layout(layout, 3000, 2, h()).unwrap();
        for (key, v) in values(1000) {
            max8.insert(&key, v as u8);
            min16.insert(&key, v as u16);
            sum32.insert(&key, v);
            sum64.insert(&key, u64::from(v));
        }
        check(&max8, |a, k| format!("{}", a.get(&k)));
        check(&min16, |a, k| format!("{}", a.get(&k)));
        check(&sum32, |a, k| format!("{}", a.get(&k)));
        check(&sum64, |a, k| format!("{}", a.get(&k)));
    }
    // A keyed table loads with its key only.
    let key = bloomforge_core::KeyedHasher::with_key([9, 8, 7, 6]);
    let mut keyed = CompactApproximator::<MaxLattice<u8>>::builder()
        .expected_items(100)
        .hasher(key.clone())
        .build()
        .unwrap();
    keyed.insert("x", 7);
    let bytes = keyed.to_bytes();
    assert!(matches!(
        CompactApproximator::<MaxLattice<u8>>::from_bytes(&bytes),
        Err(RetrievalError::Core(CoreError::HasherMismatch))
    ));
    let back =
        CompactApproximator::<MaxLattice<u8>, _>::from_bytes_with_hasher(&bytes, key).unwrap();
    assert_eq!(back.get("x"), 7);
}

/// `estimated_len` counts the distinct keys inserted. The estimator's standard error is
/// of the order of `sqrt(n)` (about 1 % of n at these n, less than 2 % for the blocked
/// layout's per-line sums), so the 6 % margin is several standard errors; keys and hasher
/// seed are fixed, so the outcome is the same on every run.
#[test]
fn estimated_len_tracks_distinct_keys() {
    for layout in [CellLayout::Subtables, CellLayout::Blocked] {
        let mut a = CompactApproximator::<MaxLattice<u8>>::with_layout(
            layout,
            200_000,
            4,
            DefaultHasher::with_seed(1),
        )
        .unwrap();
        assert_eq!(a.estimated_len(), 0.0);
        for n in [20_000u64, 60_000] {
            for key in 0..n {
                a.insert(&key, 1);
                a.insert(&key, 2); // a repeated key counts once
            }
            let est = a.estimated_len();
            assert!(
                (est - n as f64).abs() < 0.06 * n as f64,
                "{layout:?}: {est} for {n}"
            );
        }
    }
}
