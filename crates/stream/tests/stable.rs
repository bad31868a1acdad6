//! Stable Bloom filter: convergence to the stable point, the false-positive rate there,
//! duplicate detection, serialization and errors.

use bloomforge_stream::{stable_false_pos, StableBloomFilter, StreamError};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// Calls of [`converges`] below (one per cell width 1..=8), three statistical assertions
/// each.
const CONVERGENCE_RUNS: u32 = 8;
/// Per-assertion false-alarm probability, 1e-6 / 25 = 4e-8: the file makes
/// `3 * CONVERGENCE_RUNS` = 24 statistical assertions, so it false-alarms with
/// probability at most `24 * ALPHA` = 9.6e-7 (below 1e-6).
const ALPHA: f64 = 1e-6 / (3 * CONVERGENCE_RUNS + 1) as f64;

/// The two-sided standard-normal quantile of ALPHA (about 5.49).
fn z_alpha() -> f64 {
    Normal::new(0.0, 1.0)
        .unwrap()
        .inverse_cdf(1.0 - ALPHA / 2.0)
}

/// On a stream of `(10 + T) m` distinct keys (fixed seeds), after a burn-in of 10 m
/// inserts, the zero fraction is sampled T = 100 times, once every m inserts, and Q fresh
/// keys are queried at each sample.
///
/// 1. Zero fraction. One sample `Z = (1/m) Σ z_i` (z_i: cell i is zero) has variance
///    `(1/m^2) Σ_ij Cov(z_i, z_j)`. Cells fewer than `P` apart can share a decrement run:
///    bound their covariance by `z (1 - z)` (Cauchy-Schwarz); cells further apart share
///    no decrement and depend only through the `k` cells of a common key, a covariance of
///    order `k / m`, neglected. So `Var(Z) <= z (1 - z) (2P - 1) / m`. A cell forgets its
///    state within about `m / k + Max m / P` inserts (a set, then `Max` decrements), less
///    than the m inserts between samples, so the T samples are treated as independent:
///    `Var(mean) <= z (1 - z) (2P - 1) / (m T)`. The mean of 100 such samples is normal
///    to a good approximation; the assertion is `|mean - stable_point| <= z_alpha sd`.
///    The bound grows with `P`, which grows with `Max` (about `k Max / ln(1/z)`): wide
///    cells get a wider tolerance at the same `m` (printed with each run).
/// 2. Measured FP. Given the cells, a fresh key is a false positive with probability
///    `(1 - Z)^k` (its k cells are random), independently across keys: the total count
///    over all samples is Poisson-binomial, which Hoeffding (1956) shows is at least as
///    concentrated as Binomial(TQ, mean p): test the count against that binomial's
///    two-sided ALPHA quantiles.
/// 3. The realised rate against the paper's formula `(1 - stable_point)^k`: through the
///    zero-fraction tolerance, `|Δ| <= k (1 - z_lo)^(k-1) tol`, with z_lo the lower end.
fn converges(cell_bits: u32, fp: f64, hashes: Option<u32>, seed: u64) {
    let m = 50_000u64;
    let mut b = StableBloomFilter::builder()
        .cells(m)
        .cell_bits(cell_bits)
        .false_pos(fp)
        .seed(seed)
        .rng_seed(seed + 100);
    if let Some(k) = hashes {
        b = b.hashes(k);
    }
    let mut f = b.build().unwrap();
    let (k, p) = (f.num_hashes(), f.decrements());
    let z = f.stable_point();
    assert!(f.stable_false_pos() <= fp);
    assert_eq!(
        f.stable_false_pos(),
        stable_false_pos(m, k, p, (1 << cell_bits) - 1)
    );

    let (burn, t, q) = (10 * m, 100u64, 20_000u64);
    let mut key = seed << 48;
    for _ in 0..burn {
        f.insert(&key);
        key += 1;
    }
    let (mut zsum, mut psum, mut hits) = (0.0, 0.0, 0u64);
    let mut probe = (seed << 48) | (1 << 47);
    for _ in 0..t {
        for _ in 0..m {
            f.insert(&key);
            key += 1;
        }
        let zs = f.zero_cells() as f64 / m as f64;
        zsum += zs;
        psum += f.expected_false_pos();
        for _ in 0..q {
            hits += u64::from(f.contains(&probe));
            probe += 1;
        }
    }
    assert!(f.inserts() >= 100 * m);
    let zmean = zsum / t as f64;
    let sd = (z * (1.0 - z) * (2 * p - 1) as f64 / (m * t) as f64).sqrt();
    let tol = z_alpha() * sd;
    eprintln!(
        "d={cell_bits} k={k} P={p}: zero fraction {zmean:.5} vs stable point {z:.5} (tol {tol:.5}); \
         FP {:.5} realised {:.5} theory {:.5}",
        hits as f64 / (t * q) as f64,
        psum / t as f64,
        f.stable_false_pos()
    );
    assert!(
        (zmean - z).abs() <= tol,
        "zero fraction {zmean} vs stable point {z} (tol {tol})"
    );

    let pbar = psum / t as f64;
    let dist = Binomial::new(pbar, t * q).unwrap();
    let (lo, hi) = (
        dist.inverse_cdf(ALPHA / 2.0),
        dist.inverse_cdf(1.0 - ALPHA / 2.0),
    );
    assert!(
        (lo..=hi).contains(&hits),
        "{hits} false positives of {}, expected [{lo}, {hi}]",
        t * q
    );

    let theory = f.stable_false_pos();
    let slope = f64::from(k) * (1.0 - (z - tol)).powi(k as i32 - 1);
    assert!(
        (pbar - theory).abs() <= slope * tol,
        "realised {pbar} vs theory {theory} (tol {})",
        slope * tol
    );
}

#[test]
fn one_bit_cells_converge_to_the_stable_point() {
    converges(1, 0.01, None, 1);
}

#[test]
fn three_bit_cells_converge_to_the_stable_point() {
    converges(3, 0.01, None, 2);
}

#[test]
fn two_bit_cells_with_explicit_k_converge() {
    converges(2, 0.05, Some(3), 3);
}

/// Widths 4..=8 (`Max` up to 255, `P` up to 2443 at 1 %), default and explicit `k`.
/// Together with the three above: [`CONVERGENCE_RUNS`] runs.
#[test]
fn four_to_eight_bit_cells_converge_to_the_stable_point() {
    converges(4, 0.01, None, 4);
    converges(5, 0.02, Some(4), 5);
    converges(6, 0.01, None, 6);
    converges(7, 0.05, Some(3), 7);
    converges(8, 0.01, None, 8);
}

#[test]
fn new_and_builder_agree_and_are_reproducible() {
    let mut a = StableBloomFilter::new(10_000, 3, 0.01).unwrap();
    let mut b = StableBloomFilter::builder()
        .cells(10_000)
        .cell_bits(3)
        .false_pos(0.01)
        .build()
        .unwrap();
    let mut c = StableBloomFilter::builder()
        .cells(10_000)
        .cell_bits(3)
        .false_pos(0.01)
        .rng_seed(1)
        .build()
        .unwrap();
    for i in 0..50_000u64 {
        assert_eq!(a.check_and_insert(&i), b.check_and_insert(&i));
        c.insert(&i);
    }
    assert_eq!(a, b);
    assert_ne!(a, c, "another generator seed decrements other cells");
    assert_eq!(a.num_hashes(), 7);
    assert_eq!(a.memory_bytes(), 10_000u64.div_ceil(21) * 8);
}

/// Each insert decrements a cell at most once (the run of P <= m cells), so a key inserted
/// fewer than Max inserts ago still has every cell non-zero: never a false negative there.
/// Further back, keys are forgotten more and more (false negatives grow with distance).
#[test]
fn recent_keys_are_never_forgotten_and_old_ones_fade() {
    for d in 1..=8u32 {
        let max = (1u64 << d) - 1;
        let mut f = StableBloomFilter::new(4096, d, 0.02).unwrap();
        let mut key = 0u64;
        for _ in 0..20_000 {
            f.insert(&key);
            key += 1;
            for back in 0..max.min(key) {
                assert!(
                    f.contains(&(key - 1 - back)),
                    "d={d}: key {back} inserts ago forgotten"
                );
            }
        }
    }
    // Miss rate by distance, one filter, fixed seeds: it grows.
    let m = 20_000u64;
    let mut f = StableBloomFilter::new(m, 2, 0.01).unwrap();
    let n = 20 * m;
    for i in 0..n {
        f.insert(&i);
    }
    let miss = |dist: u64| {
        let keys = (n - dist - 2000)..(n - dist);
        keys.clone().filter(|k| !f.contains(k)).count() as f64 / keys.count() as f64
    };
    let near = miss(100);
    let mid = miss(m / 4);
    let far = miss(4 * m);
    assert!(near < mid && mid < far, "miss rates {near} {mid} {far}");
    assert!(far > 0.9, "keys 4m inserts ago are mostly forgotten: {far}");
}

#[test]
fn serialization_round_trips_and_continues_alike() {
    let mut f = StableBloomFilter::builder()
        .cells(3001)
        .cell_bits(5)
        .false_pos(0.01)
        .seed(4)
        .rng_seed(9)
        .build()
        .unwrap();
    f.extend(0..10_000u64);
    let bytes = f.to_bytes();
    let mut g = StableBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(f, g);
    assert_eq!(StableBloomFilter::read_from(&bytes[..]).unwrap(), f);
    for i in 10_000..20_000u64 {
        assert_eq!(f.check_and_insert(&i), g.check_and_insert(&i));
    }
    assert_eq!(f, g);
    for n in 0..bytes.len() {
        assert!(StableBloomFilter::from_bytes(&bytes[..n]).is_err());
    }
    for i in (0..bytes.len()).step_by(5) {
        let mut bad = bytes.clone();
        bad[i] ^= 0x10;
        assert!(StableBloomFilter::from_bytes(&bad).is_err(), "byte {i}");
    }
    // Well-sealed but hostile: a bit outside the cells, a width of 9.
    let h = bloomforge_core::format::HEADER_LEN;
    let mut bad = bytes.clone();
    let last = bad.len() - 1;
    bad[last] |= 0x80;
    bloomforge_core::format::reseal(&mut bad);
    assert!(StableBloomFilter::from_bytes(&bad).is_err());
    let mut bad = bytes.clone();
    bad[h + 8] = 9;
    bloomforge_core::format::reseal(&mut bad);
    assert!(StableBloomFilter::from_bytes(&bad).is_err());
}

#[test]
fn invalid_parameters_are_typed_errors() {
    use bloomforge_core::Error as E;
    assert!(matches!(
        StableBloomFilter::new(0, 3, 0.01),
        Err(StreamError::Core(E::ZeroBits))
    ));
    assert!(matches!(
        StableBloomFilter::new(100, 3, 0.0),
        Err(StreamError::Core(E::InvalidFalsePositiveRate(_)))
    ));
    for (r, name) in [
        (StableBloomFilter::new(1000, 0, 0.01), "cell_bits"),
        (StableBloomFilter::new(1000, 9, 0.01), "cell_bits"),
        (
            StableBloomFilter::builder().cells(5).hashes(5).build(),
            "hashes",
        ),
        (
            StableBloomFilter::builder()
                .cells(100)
                .hashes(3)
                .decrements(101)
                .build(),
            "decrements",
        ),
        // A rate P <= m cannot reach: 1e-9 with 8-bit cells on 100 cells.
        (StableBloomFilter::new(100, 8, 1e-9), "false_pos"),
    ] {
        match r {
            Err(StreamError::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let f = StableBloomFilter::new(1000, 3, 0.01).unwrap();
    let mut out = vec![false; 3];
    assert!(f.contains_batch(&[1u8, 2], &mut out).is_err());
    let e: bloomforge_core::Error = StableBloomFilter::new(1000, 9, 0.01).unwrap_err().into();
    assert!(matches!(e, E::Filter(_)));
}

/// The pipelined batch gives the answers and the filter of one-by-one calls.
#[test]
fn batch_check_and_insert_equals_one_by_one() {
    let mk = || {
        StableBloomFilter::builder()
            .cells(5000)
            .cell_bits(2)
            .false_pos(0.02)
            .rng_seed(3)
            .build()
            .unwrap()
    };
    let (mut a, mut b, mut c) = (mk(), mk(), mk());
    for round in 0..20u64 {
        let keys: Vec<u64> = (0..777).map(|i| (i * 7 + round * 300) % 4000).collect();
        let mut out = vec![false; keys.len()];
        a.check_and_insert_batch(&keys, &mut out).unwrap();
        let want: Vec<bool> = keys.iter().map(|k| b.check_and_insert(k)).collect();
        assert_eq!(out, want);
        c.insert_batch(&keys);
        assert_eq!(a, b);
        assert_eq!(a, c);
    }
    let mut out = vec![false; 2];
    let before = a.clone();
    assert!(a.check_and_insert_batch(&[1u64], &mut out).is_err());
    assert_eq!(a, before);
}

/// Targets no finite P reaches are refused, not silently missed.
#[test]
fn unreachable_targets_are_refused() {
    assert_eq!(
        bloomforge_stream::decrements_for(1 << 20, 1, 1, 1e-300),
        None
    );
    assert!(StableBloomFilter::builder()
        .cells(1 << 20)
        .cell_bits(1)
        .hashes(1)
        .false_pos(1e-300)
        .build()
        .is_err());
    for (m, k, d, p) in [
        (1u64 << 20, 7u32, 3u32, 0.01),
        (1000, 2, 1, 0.3),
        (1 << 30, 20, 8, 1e-6),
    ] {
        let max = (1 << d) - 1;
        let dec = bloomforge_stream::decrements_for(m, k, max, p).unwrap();
        assert!(stable_false_pos(m, k, dec, max) <= p);
        assert!(dec == 1 || stable_false_pos(m, k, dec - 1, max) > p);
    }
}
