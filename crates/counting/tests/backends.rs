//! Every kernel backend this CPU runs gives bit-identical results to the portable one, and
//! no backend goes untested: the CPU's own feature flags (`/proc/cpuinfo` on Linux, read
//! independently of std's detection) say which backends must run here, and a backend the
//! flags allow but the filter refuses fails the test instead of being skipped.

use bloomforge_core::Backend;
use bloomforge_counting::{CountingBloomFilter, CountingError};
use bloomforge_testkit::cpu::{cpu_runs, report, target_features};
use std::collections::HashSet;

/// Every backend with the CPU flags its counting kernels need (`kernels.rs`:
/// `backend_available` and the `#[target_feature]` of its dispatch wrapper). The AVX-512
/// kernel needs AVX-512BW (byte shuffles) besides AVX-512F, unlike core's.
const REQUIRED: &[(Backend, &[&str])] = &[
    (Backend::Scalar, &[]),
    (Backend::Wide, &[]),
    (Backend::Avx2, &["avx2"]),
    (Backend::Avx512, &["avx2", "avx512f", "avx512bw"]),
];

fn run(backend: Backend) -> Result<(CountingBloomFilter, Vec<bool>), CountingError> {
    let mut f = CountingBloomFilter::with_false_pos(0.05)
        .seed(9)
        .expected_items(3_000)
        .unwrap();
    f.set_backend(backend)?;
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
    Ok((f, answers))
}

/// Every backend the CPU's flags allow is set (a refusal fails) and equals the scalar
/// oracle; every backend they do not allow is refused.
#[test]
fn backends_agree_with_portable() {
    let (reference, answers) = run(Backend::Scalar).unwrap();
    assert!(reference.saturated_counters() > 0);
    let mut ran = Vec::new();
    for &(backend, flags) in REQUIRED {
        if cpu_runs(flags) {
            let (f, a) = run(backend).unwrap_or_else(|e| {
                panic!(
                    "the CPU has {flags:?} but the counting filter refused backend {}: {e} \
                     (so its kernel would go untested)",
                    backend.name()
                )
            });
            assert!(f == reference, "{backend:?} counters differ");
            assert_eq!(a, answers, "{backend:?} answers differ");
            ran.push(backend);
        } else {
            assert!(
                run(backend).is_err(),
                "backend {} accepted on a CPU without {flags:?}",
                backend.name()
            );
            report(&format!(
                "counting: backend {} not run here (the CPU lacks one of {flags:?})",
                backend.name()
            ));
        }
    }
    let names: Vec<&str> = ran.iter().map(|b| b.name()).collect();
    report(&format!(
        "counting: kernels checked on {}",
        names.join(", ")
    ));
}

/// `REQUIRED` names every CPU feature the crate's kernels enable: a kernel that starts
/// needing one more flag must list it there, or this test fails.
#[test]
fn required_flags_cover_the_kernels_target_features() {
    let listed: HashSet<&str> = REQUIRED
        .iter()
        .flat_map(|(_, f)| f.iter().copied())
        .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs: Vec<_> = ["src"].iter().map(|d| root.join(d)).collect();
    for (path, flag) in target_features(&dirs) {
        assert!(
            listed.contains(flag.as_str()),
            "{}: a kernel enables `{flag}`, which REQUIRED does not list",
            path.display()
        );
    }
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
