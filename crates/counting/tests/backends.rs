//! Every kernel backend this CPU runs gives bit-identical results to the portable one.

use bloomforge_core::Backend;
use bloomforge_counting::{CountingBloomFilter, CountingError};

fn run(backend: Backend) -> Option<(CountingBloomFilter, Vec<bool>)> {
    let mut f = CountingBloomFilter::with_false_pos(0.05)
        .seed(9)
        .expected_items(3_000)
        .unwrap();
    f.set_backend(backend).ok()?;
    assert_eq!(f.backend(), backend);
    let keys: Vec<u64> = (0..4_000).map(|i| i * 0x9e37_79b9).collect();
    let mut answers = Vec::new();
    // Single-key operations, with repeats so counters climb and saturate.
    for (i, k) in keys.iter().enumerate() {
        answers.push(f.insert(k));
        if i % 7 == 0 {
            for _ in 0..20 {
                f.insert(k);
            }
        }
    }
    for k in keys.iter().step_by(3) {
        answers.push(f.remove(k).is_ok());
    }
    // Batch operations.
    f.insert_batch(&keys[..1000]);
    let mut removed = vec![false; 1500];
    f.remove_batch(&keys[500..2000], &mut removed).unwrap();
    answers.extend(&removed);
    let probe: Vec<u64> = (0..20_000).collect();
    let mut out = vec![false; probe.len()];
    f.contains_batch(&probe, &mut out).unwrap();
    answers.extend(&out);
    for k in &probe {
        answers.push(f.contains(k));
        answers.push(f.count(k).get() > 1);
    }
    let hashes: Vec<u64> = probe
        .iter()
        .map(|&k| k.wrapping_mul(0xff51_afd7_ed55_8ccd))
        .collect();
    f.insert_hash_batch(&hashes);
    f.contains_hash_batch(&hashes, &mut out).unwrap();
    assert!(out.iter().all(|&b| b));
    Some((f, answers))
}

#[test]
fn backends_agree_with_portable() {
    let (reference, answers) = run(Backend::Scalar).unwrap();
    assert!(reference.saturated_counters() > 0);
    let mut ran = 0;
    for backend in Backend::available() {
        if let Some((f, a)) = run(backend) {
            assert!(f == reference, "{backend:?} counters differ");
            assert_eq!(a, answers, "{backend:?} answers differ");
            ran += 1;
        }
    }
    assert!(ran >= 2);
    // The portable kernel answers to both portable backend names.
    assert!(run(Backend::Wide).is_some(), "Backend::Wide refused");
}

#[test]
fn batch_length_mismatch_is_an_error_and_changes_nothing() {
    let mut f = CountingBloomFilter::with_false_pos(0.01)
        .expected_items(100)
        .unwrap();
    f.insert(&1u8);
    let before = f.clone();
    let mut out = vec![false; 2];
    let err = f.remove_batch(&[1u8], &mut out).unwrap_err();
    assert!(matches!(
        err,
        CountingError::Core(bloomforge_core::Error::LengthMismatch { .. })
    ));
    assert!(f.contains_batch(&[1u8], &mut out).is_err());
    assert!(f == before);
}
