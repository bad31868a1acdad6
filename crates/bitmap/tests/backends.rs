//! Every backend this CPU runs gives the bitmaps the answers of the portable kernels, and
//! none goes untested: the CPU's own flags (`/proc/cpuinfo`, read by
//! `bloomforge_testkit::cpu` independently of std's detection) say which backends must
//! run here; a backend the flags allow but a bitmap refuses fails the test, and each
//! backend that cannot run here is named on stderr.

use bloomforge_bitmap::{Backend, Bitmap, TwoBitmap};
use bloomforge_testkit::cpu::{cpu_runs, report, target_features};
use bloomforge_testkit::rng::SplitMix64;
use std::collections::HashSet;

/// Each backend with the CPU flags it needs. The AVX-512 popcount also uses VPOPCNTDQ and
/// the AVX-512 field extraction BMI2 where the CPU has them (optional: without them the
/// backend runs its AVX-512F kernels and the scan); `REQUIRED_OPTIONAL` lists them.
const REQUIRED: &[(Backend, &[&str])] = &[
    (Backend::Scalar, &[]),
    (Backend::Wide, &[]),
    (Backend::Avx2, &["avx2"]),
    (Backend::Avx512, &["avx2", "avx512f"]),
];

/// Flags of the optional AVX-512 paths and the atomic popcount (`popcnt`).
const OPTIONAL: &[&str] = &["avx512_vpopcntdq", "bmi2", "popcnt"];

/// Everything a bitmap and a 2-bitmap answer through their kernels with `backend`
/// (popcounts, the four boolean operations, the 2-bitmap merge and its field
/// extraction), or `None` where the bitmaps refuse the backend.
fn run(backend: Backend) -> Option<Vec<u64>> {
    const UNIVERSE: u64 = 1 << 20;
    let mut rng = SplitMix64::new(11);
    let values = |rng: &mut SplitMix64, n: usize| -> Vec<u32> {
        (0..n).map(|_| rng.below(UNIVERSE) as u32).collect()
    };
    let (a_values, b_values) = (values(&mut rng, 60_000), values(&mut rng, 90_000));
    let mut a = Bitmap::new(UNIVERSE).unwrap();
    a.set_backend(backend).ok()?;
    a.insert_batch(&a_values).unwrap();
    let mut b = Bitmap::new(UNIVERSE).unwrap();
    b.insert_batch(&b_values).unwrap();
    let mut answers = vec![a.len(), a.rank(UNIVERSE / 3)];
    for op in [
        Bitmap::union,
        Bitmap::intersect,
        Bitmap::difference,
        Bitmap::xor,
    ] {
        let mut c = a.clone();
        op(&mut c, &b).unwrap();
        answers.push(c.len());
        answers.extend(c.iter().step_by(97).map(u64::from));
    }
    let mut two = TwoBitmap::new(UNIVERSE).unwrap();
    two.set_backend(backend).ok()?;
    two.insert_batch(&a_values).unwrap();
    two.insert_batch(&a_values[..20_000]).unwrap();
    let mut other = TwoBitmap::new(UNIVERSE).unwrap();
    other.insert_batch(&b_values).unwrap();
    two.merge(&other).unwrap();
    answers.extend([two.count_once(), two.count_many(), two.len()]);
    let (mut once, mut many) = (Vec::new(), Vec::new());
    two.append_once(0..UNIVERSE, 0, &mut once);
    two.append_many(17..UNIVERSE - 5, 3, &mut many);
    answers.extend(once.iter().chain(&many).map(|&v| u64::from(v)));
    Some(answers)
}

#[test]
fn every_backend_the_cpu_has_matches_the_portable_kernels() {
    let want = run(Backend::Scalar).expect("scalar always runs");
    for &(backend, flags) in REQUIRED {
        let got = run(backend);
        if cpu_runs(flags) {
            let got = got.unwrap_or_else(|| {
                panic!(
                    "the CPU has {flags:?} but the bitmaps refused {}",
                    backend.name()
                )
            });
            assert!(got == want, "{}: the answers differ", backend.name());
        } else {
            assert!(
                got.is_none(),
                "{} accepted without {flags:?}",
                backend.name()
            );
            report(&format!(
                "bitmap: backend {} not run here (the CPU lacks one of {flags:?})",
                backend.name()
            ));
        }
    }
    if cpu_runs(&["avx512f"]) {
        for flag in ["avx512_vpopcntdq", "bmi2"] {
            if !cpu_runs(&[flag]) {
                report(&format!(
                    "bitmap: the AVX-512 path needing {flag} not run here"
                ));
            }
        }
    }
}

/// `REQUIRED` and `OPTIONAL` name every CPU feature the crate's kernels enable.
#[test]
fn required_flags_cover_the_kernels_target_features() {
    let listed: HashSet<&str> = REQUIRED
        .iter()
        .flat_map(|(_, f)| f.iter().copied())
        .chain(OPTIONAL.iter().copied())
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
