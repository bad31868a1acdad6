//! The load reached before the first failed insert at 4-slot buckets: >= 95 %, the paper's
//! figure.
//!
//! How the bound is derived, and why the test cannot flake: the filters, keys and hashers
//! are fixed (seeds 0..40), so each run inserts the same keys into the same slots and the
//! minimum below is one deterministic number. Measured on this code (500 kicks, one-entry
//! stash, 2^14 buckets of 4 slots): 12-bit fingerprints reach 0.961-0.971 (mean 0.966),
//! 16-bit 0.959-0.969 (mean 0.966); for 10^5 buckets 0.956-0.966. The asserted 0.95 sits
//! more than 3 standard deviations (about 0.003 over seeds) below the means, so a change
//! of seeds would not fail it either; a change to the insert path that loses load does.

use bloomforge_cuckoo::{CuckooFilter, Fingerprint, Fp12, Fp16};

fn first_failure_load<F: Fingerprint>(buckets: u64, seed: u64) -> f64 {
    let mut f = CuckooFilter::builder()
        .expected_items(buckets * 4)
        .bucket_size(4)
        .target_load(1.0)
        .seed(seed)
        .fingerprint::<F>()
        .build()
        .unwrap();
    assert_eq!(f.num_buckets(), buckets);
    let mut k = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    while f.insert(&k).is_ok() {
        k = k.wrapping_add(1);
    }
    f.load_factor()
}

fn check<F: Fingerprint>() {
    let loads: Vec<f64> = (0..40)
        .map(|s| first_failure_load::<F>(1 << 14, s))
        .collect();
    let min = loads.iter().copied().fold(1.0, f64::min);
    let mean = loads.iter().sum::<f64>() / loads.len() as f64;
    assert!(
        min >= 0.95,
        "{}-bit: min load {min:.4} (mean {mean:.4})",
        F::BITS
    );
    assert!(mean >= 0.955, "{}-bit: mean load {mean:.4}", F::BITS);
}

#[test]
fn load_before_first_failure_fp12() {
    check::<Fp12>();
}

#[test]
fn load_before_first_failure_fp16() {
    check::<Fp16>();
}

/// The sizing's target load holds: a filter sized for `n` keys takes them.
#[test]
fn sized_filters_take_their_keys() {
    for (b, n) in [(2u32, 50_000u64), (4, 50_000), (8, 50_000), (4, 1), (4, 7)] {
        for seed in 0..5 {
            let mut f = CuckooFilter::builder()
                .expected_items(n)
                .bucket_size(b)
                .seed(seed)
                .build()
                .unwrap();
            for k in 0..n {
                f.insert(&k).unwrap();
            }
            assert_eq!(f.len(), n);
        }
    }
}
