//! Every backend the CPU can run is exercised against the scalar oracle, and the backend
//! list is checked against the CPU's own feature flags: read from `/proc/cpuinfo` on Linux,
//! independently of std's detection, so a backend that silently dropped out of
//! `Backend::available()` (a detection bug, a lost `cfg`) fails here instead of going
//! untested by every test that loops over `Backend::available()` (this crate's, and the
//! counting, d-left, bitmap and cuckoo crates' kernel tests).

use bloomforge_core::arch::CpuFeatures;
use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, Backend, BlockedBloomFilter,
    SplitBlockBloomFilter,
};
use bloomforge_testkit::cpu::{cpu_runs, report, target_features};
use std::collections::HashSet;

/// Every backend with the CPU flags its kernels need (`Backend::is_available` and the
/// `#[target_feature]` of the dispatch wrappers in `src/arch`): AVX-512 runs its
/// split-block probes on the AVX2 kernel, so it needs both.
const REQUIRED: &[(Backend, &[&str])] = &[
    (Backend::Scalar, &[]),
    (Backend::Wide, &[]),
    (Backend::Avx2, &["avx2"]),
    (Backend::Avx512, &["avx2", "avx512f"]),
];

/// The backends this CPU must run: scalar and wide everywhere, AVX2 and AVX-512 on x86-64
/// CPUs that have every flag they need.
fn expected() -> Vec<Backend> {
    REQUIRED
        .iter()
        .filter(|(_, flags)| cpu_runs(flags))
        .map(|&(b, _)| b)
        .collect()
}

#[test]
fn available_backends_match_the_cpu_flags() {
    let names = |v: &[Backend]| v.iter().map(|b| b.name()).collect::<Vec<_>>();
    assert_eq!(
        names(&Backend::available()),
        names(&expected()),
        "the CPU has features whose backend is not available (so no test exercises it), \
         or a backend is available without a flag it needs"
    );
    for &(backend, flags) in REQUIRED {
        assert_eq!(
            backend.is_available(),
            expected().contains(&backend),
            "{}: is_available disagrees with the CPU flags {flags:?}",
            backend.name()
        );
        if !cpu_runs(flags) {
            report(&format!(
                "core: backend {} not run here (the CPU lacks one of {flags:?})",
                backend.name()
            ));
        }
    }
    report(&format!(
        "core: kernels checked on {}",
        names(&expected()).join(", ")
    ));
}

/// Core's feature detection, which every crate's kernels ask, agrees with the CPU's flags
/// feature by feature.
#[test]
fn detected_cpu_features_match_the_cpu_flags() {
    for name in CpuFeatures::ALL.names() {
        let feature = CpuFeatures::from_name(name).expect("a named feature");
        assert_eq!(
            feature.is_detected(),
            cpu_runs(&[name]),
            "CpuFeatures::detected() and the CPU flags disagree on {name}"
        );
    }
    report(&format!(
        "core: CPU features detected: {}",
        CpuFeatures::detected()
            .names()
            .collect::<Vec<_>>()
            .join(", ")
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
    let dirs: Vec<_> = ["src", "src/arch"].iter().map(|d| root.join(d)).collect();
    for (path, flag) in target_features(&dirs) {
        assert!(
            listed.contains(flag.as_str()),
            "{}: a kernel enables `{flag}`, which REQUIRED does not list",
            path.display()
        );
    }
}

#[test]
fn every_backend_the_cpu_has_matches_the_scalar_oracle() {
    let keys: Vec<u64> = (0..20_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let queries: Vec<u64> = (0..40_000u64).map(|i| i ^ 0x5555_5555).collect();
    let (members, others) = keys.split_at(10_000);
    // Up to the largest k (its last group of eight probes), in filters large enough that
    // even k = 64 leaves non-members mostly absent.
    for k in [1u32, 3, 8, 11, 16, 21, 64] {
        let mut oracle = BlockedBloomFilter::with_num_bits(1 << 20)
            .hashes(k)
            .unwrap();
        oracle.set_backend(Backend::Scalar).unwrap();
        oracle.insert_batch(members);
        let mut split_oracle = SplitBlockBloomFilter::with_num_bits(1 << 20)
            .hashes(8)
            .unwrap();
        split_oracle.set_backend(Backend::Scalar).unwrap();
        split_oracle.insert_batch(members);
        let want: Vec<bool> = queries.iter().map(|q| oracle.contains(q)).collect();
        let split_want: Vec<bool> = queries.iter().map(|q| split_oracle.contains(q)).collect();
        for backend in expected() {
            // A backend the CPU has must be settable (not skipped) ...
            let mut f = BlockedBloomFilter::with_num_bits(1 << 20)
                .hashes(k)
                .unwrap();
            f.set_backend(backend)
                .unwrap_or_else(|e| panic!("{}: {e}", backend.name()));
            for key in &members[..5000] {
                f.insert(key);
            }
            f.insert_batch(&members[5000..]);
            // ... and give the oracle's bits and answers, single and batched.
            assert!(
                f == oracle,
                "blocked k={k}: {} words differ",
                backend.name()
            );
            let mut out = vec![false; queries.len()];
            f.contains_batch(&queries, &mut out).unwrap();
            assert_eq!(out, want, "blocked k={k} batch: {}", backend.name());
            assert!(queries.iter().zip(&want).all(|(q, &w)| f.contains(q) == w));

            let mut atomic = AtomicBlockedBloomFilter::with_num_bits(1 << 20)
                .hashes(k)
                .unwrap();
            atomic.set_backend(backend).unwrap();
            for key in members {
                atomic.insert(key);
            }
            assert!(
                atomic.into_inner() == oracle,
                "atomic blocked: {}",
                backend.name()
            );

            let mut s = SplitBlockBloomFilter::with_num_bits(1 << 20)
                .hashes(8)
                .unwrap();
            s.set_backend(backend).unwrap();
            s.insert_batch(members);
            assert!(
                s == split_oracle,
                "split-block: {} words differ",
                backend.name()
            );
            s.contains_batch(&queries, &mut out).unwrap();
            assert_eq!(out, split_want, "split-block batch: {}", backend.name());
            let mut sa = AtomicSplitBlockBloomFilter::with_num_bits(1 << 20)
                .hashes(8)
                .unwrap();
            sa.set_backend(backend).unwrap();
            for key in members {
                sa.insert(key);
            }
            assert!(
                sa.into_inner() == split_oracle,
                "atomic split: {}",
                backend.name()
            );
        }
        // Non-members stay mostly absent (the filters are not trivially full).
        assert!(others.iter().filter(|q| oracle.contains(q)).count() < others.len() / 2);
    }
}
