//! Every kernel this CPU runs gives the answers of the portable one, and none goes
//! untested: the CPU's own flags (`/proc/cpuinfo`, read by `bloomforge_testkit::cpu`
//! independently of std's detection) say which kernels must run here; a kernel the flags
//! allow but the filter does not select fails the test instead of being skipped, and each
//! kernel that cannot run here is named on stderr.

use bloomforge_core::Backend;
use bloomforge_dleft::DLeftCountingBloomFilter;
use bloomforge_testkit::cpu::{cpu_runs, report, target_features};
use bloomforge_testkit::rng::SplitMix64;
use std::collections::HashSet;

/// Each kernel with the CPU flags it needs (`filter.rs`: `kernel_is_avx2`,
/// `kernel_is_avx512`, and the `#[target_feature]` of `src/arch`), in `/proc/cpuinfo`'s
/// spelling.
const REQUIRED: &[(Backend, &[&str])] = &[
    (Backend::Scalar, &[]),
    (Backend::Avx2, &["avx2", "popcnt", "bmi1"]),
    (
        Backend::Avx512,
        &[
            "avx2",
            "popcnt",
            "bmi1",
            "avx512f",
            "avx512vl",
            "avx512dq",
            "avx512bw",
            "avx512vbmi",
            "avx512_bitalg",
        ],
    ),
];

/// Tables of both bucket maps (a power-of-two bucket count and a general one) and both
/// AVX-512-eligible and other shapes: d = 4 with 8 cells of 12 + 2 bits (14-byte buckets,
/// the AVX-512 kernel's), d = 4 with 8 cells of 16 + 4 bits, and d = 3.
fn tables() -> Vec<DLeftCountingBloomFilter> {
    let build = |d: u32, buckets: u64, w: u32, r: u32, c: u32| {
        DLeftCountingBloomFilter::builder()
            .subtables(d)
            .buckets_per_subtable(buckets)
            .cells_per_bucket(w)
            .remainder_bits(r)
            .counter_bits(c)
            .seed(7)
            .build()
            .unwrap()
    };
    vec![
        build(4, 1000, 8, 12, 2),
        build(4, 1024, 8, 12, 2),
        build(4, 1000, 8, 16, 4),
        build(3, 1500, 8, 12, 2),
    ]
}

/// Inserts, counts, removes and probes (single and batch) on `f` with `backend`; every
/// answer in order.
fn run(mut f: DLeftCountingBloomFilter, backend: Backend) -> (DLeftCountingBloomFilter, Vec<u64>) {
    f.set_backend(backend).unwrap();
    let keys = SplitMix64::new(3).keys(12_000);
    let others = SplitMix64::new(4).keys(20_000);
    let mut answers = Vec::new();
    for k in &keys[..6_000] {
        answers.push(u64::from(f.insert(k).unwrap()));
    }
    f.insert_batch(&keys[6_000..]).unwrap();
    for k in keys.iter().step_by(3) {
        answers.push(u64::from(f.remove(k).is_ok()));
    }
    for k in keys.iter().chain(&others) {
        answers.push(u64::from(f.contains(k)));
        answers.push(f.count(k).get());
    }
    let mut out = vec![false; others.len()];
    f.contains_batch(&others, &mut out).unwrap();
    answers.extend(out.iter().map(|&b| u64::from(b)));
    (f, answers)
}

#[test]
fn every_kernel_the_cpu_has_matches_the_portable_one() {
    let mut ran = HashSet::new();
    for table in tables() {
        let (reference, answers) = run(table.clone(), Backend::Scalar);
        assert_eq!(reference.kernel(), Backend::Scalar);
        for &(backend, flags) in REQUIRED {
            if !cpu_runs(flags) {
                continue;
            }
            let (f, a) = run(table.clone(), backend);
            // Where the CPU has the flags, the filter runs that kernel, except the
            // AVX-512 one on tables it does not suit (then the AVX2 kernel).
            let suits_avx512 = f.subtables() == 4
                && f.remainder_bits() + f.counter_bits() <= 16
                && !f.buckets_per_subtable().is_power_of_two();
            let want = match backend {
                Backend::Avx512 if !suits_avx512 => Backend::Avx2,
                b => b,
            };
            let shape = (
                f.subtables(),
                f.buckets_per_subtable(),
                f.remainder_bits(),
                f.counter_bits(),
            );
            assert_eq!(f.kernel(), want, "{} on {shape:?}", backend.name());
            ran.insert(f.kernel());
            assert!(f == reference, "{}: the tables differ", backend.name());
            assert_eq!(a, answers, "{}: the answers differ", backend.name());
        }
    }
    for &(backend, flags) in REQUIRED {
        if !ran.contains(&backend) {
            assert!(
                !cpu_runs(flags),
                "{} has its flags but never ran",
                backend.name()
            );
            report(&format!(
                "dleft: kernel {} not run here (the CPU lacks one of {flags:?})",
                backend.name()
            ));
        }
    }
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
