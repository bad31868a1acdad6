//! Every line kernel this CPU runs gives the approximator the answers of the scalar loop,
//! and none goes untested: the CPU's own flags (`/proc/cpuinfo`, read by
//! `bloomforge_testkit::cpu` independently of std's detection) say which kernels must run
//! here; a backend the flags allow but the approximator refuses fails the test, and each
//! kernel that cannot run here is named on stderr.

use bloomforge_core::{Backend, DefaultHasher};
use bloomforge_retrieval::{
    CellLayout, CompactApproximator, Lattice, MaxLattice, MinLattice, SumLattice,
};
use bloomforge_testkit::cpu::{cpu_runs, report, target_features};
use bloomforge_testkit::rng::SplitMix64;
use std::collections::HashSet;

/// The line kernels with the CPU flags they need (`line.rs`: `backend_available`,
/// `vbmi_available` and the `#[target_feature]` of its `avx512` module): the masked
/// kernels with `Backend::Avx512`, and the gathering ones of `u8` lines with at most 8
/// probes, which also need VBMI.
const REQUIRED: &[(&str, Backend, &[&str])] = &[
    ("scalar", Backend::Scalar, &[]),
    ("avx512", Backend::Avx512, &["avx512f", "avx512bw"]),
    (
        "avx512 vbmi",
        Backend::Avx512,
        &["avx512f", "avx512bw", "avx512vbmi"],
    ),
];

/// Inserts and looks up (single and batch) on a blocked approximator of `k` probes with
/// `backend`; every answer in order, or the refusal of the backend.
fn run<L: Lattice>(
    k: usize,
    backend: Backend,
    value: impl Fn(u64) -> L::Value,
) -> Option<Vec<L::Value>>
where
    L::Value: Default + Copy,
{
    let mut a = CompactApproximator::<L>::with_layout(
        CellLayout::Blocked,
        1 << 14,
        k,
        DefaultHasher::with_seed(5),
    )
    .unwrap();
    a.set_backend(backend).ok()?;
    assert_eq!(a.backend(), backend);
    let keys = SplitMix64::new(k as u64).keys(3_000);
    let others = SplitMix64::new(100 + k as u64).keys(5_000);
    for (i, key) in keys[..1_500].iter().enumerate() {
        a.insert(key, value(i as u64));
    }
    let pairs: Vec<(u64, L::Value)> = keys[1_500..]
        .iter()
        .enumerate()
        .map(|(i, &key)| (key, value(i as u64 * 7)))
        .collect();
    a.insert_batch(&pairs);
    let mut answers: Vec<L::Value> = keys.iter().chain(&others).map(|key| a.get(key)).collect();
    let mut out = vec![L::Value::default(); others.len()];
    a.get_batch(&others, &mut out).unwrap();
    answers.extend(out);
    Some(answers)
}

/// For every cell width and lattice, every `k` (the VBMI kernels take `k <= 8`): the
/// backends the CPU runs answer as the scalar loop; the others are refused.
fn check<L: Lattice>(
    name: &str,
    value: impl Fn(u64) -> L::Value + Copy,
    ran: &mut HashSet<&'static str>,
) where
    L::Value: Default + Copy + PartialEq + std::fmt::Debug,
{
    for k in 1..=12 {
        let want = run::<L>(k, Backend::Scalar, value).expect("scalar always runs");
        for &(kernel, backend, flags) in &REQUIRED[1..] {
            let got = run::<L>(k, backend, value);
            if cpu_runs(&flags[..2]) {
                let got = got.unwrap_or_else(|| {
                    panic!(
                        "the CPU has {flags:?} but {name} refused {}",
                        backend.name()
                    )
                });
                assert!(got == want, "{name}, k = {k}: {kernel} answers differ");
                if cpu_runs(flags) || kernel == "avx512" {
                    ran.insert(kernel);
                }
            } else {
                assert!(
                    got.is_none(),
                    "{name}: {} accepted without {flags:?}",
                    backend.name()
                );
            }
        }
    }
}

#[test]
fn every_line_kernel_the_cpu_has_matches_the_scalar_loop() {
    let mut ran = HashSet::new();
    check::<SumLattice<u8>>("CountMin<u8>", |i| (i % 5) as u8, &mut ran);
    check::<MaxLattice<u8>>("max u8", |i| (i % 251) as u8, &mut ran);
    check::<MinLattice<u16>>("min u16", |i| (i * 977) as u16, &mut ran);
    check::<SumLattice<u32>>("CountMin<u32>", |i| (i % 9) as u32, &mut ran);
    check::<MaxLattice<u64>>("max u64", |i| i * 0x9e37_79b9, &mut ran);
    for &(kernel, _, flags) in REQUIRED {
        if kernel != "scalar" && !ran.contains(kernel) {
            assert!(!cpu_runs(flags), "{kernel} has its flags but never ran");
            report(&format!(
                "retrieval: line kernel {kernel} not run here (the CPU lacks one of {flags:?})"
            ));
        }
    }
}

/// `REQUIRED` names every CPU feature the crate's kernels enable.
#[test]
fn required_flags_cover_the_kernels_target_features() {
    let listed: HashSet<&str> = REQUIRED
        .iter()
        .flat_map(|(_, _, f)| f.iter().copied())
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
