//! Kernel tests: every backend this CPU has answers like the scalar oracle.

use crate::table::{self, Fingerprint, Fp12, Fp16, Fp8, Kernel, PAD};
use crate::CuckooFilter;
use bloomforge_core::Backend;

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Random tables (slots often equal to the probe, often empty), every bucket pair and
/// bucket size: the kernel of every available backend equals the scalar loop.
fn kernels_agree<F: Fingerprint>() {
    let mut rng = 0x1234_5678_9abc_def1u64;
    for bucket_size in [2usize, 4, 8] {
        let bucket_bytes = bucket_size * F::BITS as usize / 8;
        let buckets = 64usize;
        let mut t = vec![0u8; buckets * bucket_bytes + PAD];
        for round in 0..200 {
            // Small fingerprint alphabet so matches are common; slot 0 empty often.
            for i in 0..buckets {
                for j in 0..bucket_size {
                    let v = (xorshift(&mut rng) % 5) as u32;
                    let v = if v == 4 { F::MASK } else { v };
                    // SAFETY: i < buckets, j < bucket_size, the table is padded.
                    unsafe { table::set_slot::<F>(t.as_mut_ptr(), i * bucket_bytes, j, v) };
                }
            }
            assert!(
                t[t.len() - PAD..].iter().all(|&b| b == 0),
                "set_slot wrote padding"
            );
            for _ in 0..200 {
                let b1 = (xorshift(&mut rng) % buckets as u64) as usize * bucket_bytes;
                let b2 = (xorshift(&mut rng) % buckets as u64) as usize * bucket_bytes;
                let fp = match xorshift(&mut rng) % 5 {
                    4 => F::MASK,
                    v => v as u32 + 1,
                };
                // SAFETY: bucket starts in range of a padded table.
                let want =
                    unsafe { table::matches_scalar::<F>(t.as_ptr(), b1, b2, fp, bucket_size) };
                for backend in Backend::available() {
                    let k = Kernel::for_backend(backend);
                    // SAFETY: as above; the backend is available.
                    let got = unsafe { k.matches::<F>(t.as_ptr(), b1, b2, fp, bucket_size) };
                    assert_eq!(
                        got,
                        want,
                        "{backend:?} b={bucket_size} f={} round {round}",
                        F::BITS
                    );
                    // SAFETY: as above.
                    let one = unsafe { k.matches_one::<F>(t.as_ptr(), b1, b2, fp, bucket_size) };
                    assert_eq!(
                        one,
                        want,
                        "{backend:?} single-query b={bucket_size} f={} round {round}",
                        F::BITS
                    );
                }
                if table::swar_fits::<F>(bucket_size) {
                    // SAFETY: as above; the bucket fits a u64.
                    let got =
                        unsafe { table::matches_swar::<F>(t.as_ptr(), b1, b2, fp, bucket_size) };
                    assert_eq!(
                        got,
                        want,
                        "SWAR b={bucket_size} f={} round {round}",
                        F::BITS
                    );
                }
            }
        }
    }
}

#[test]
fn kernels_agree_fp8() {
    kernels_agree::<Fp8>();
}
#[test]
fn kernels_agree_fp12() {
    kernels_agree::<Fp12>();
}
#[test]
fn kernels_agree_fp16() {
    kernels_agree::<Fp16>();
}

/// Slots round-trip through set/get without touching their neighbours.
#[test]
fn slots_round_trip() {
    fn check<F: Fingerprint>() {
        for bucket_size in [2usize, 4, 8] {
            let bb = bucket_size * F::BITS as usize / 8;
            let mut t = vec![0u8; 3 * bb + PAD];
            let mut want = vec![0u32; 3 * bucket_size];
            let mut rng = 99u64;
            for _ in 0..1000 {
                let s = (xorshift(&mut rng) % want.len() as u64) as usize;
                let v = (xorshift(&mut rng) as u32) & F::MASK;
                want[s] = v;
                let (i, j) = (s / bucket_size, s % bucket_size);
                // SAFETY: in range of a padded table.
                unsafe { table::set_slot::<F>(t.as_mut_ptr(), i * bb, j, v) };
                for (s2, &w) in want.iter().enumerate() {
                    let (i, j) = (s2 / bucket_size, s2 % bucket_size);
                    // SAFETY: in range of a padded table.
                    assert_eq!(unsafe { table::slot_at::<F>(t.as_ptr(), i * bb, j) }, w);
                }
            }
        }
    }
    check::<Fp8>();
    check::<Fp12>();
    check::<Fp16>();
}

/// Whole filters: batch and single queries agree on every backend.
#[test]
fn filter_backends_agree() {
    let mut f: CuckooFilter<Fp12> = CuckooFilter::builder()
        .expected_items(5000)
        .build()
        .unwrap();
    for k in 0..4000u64 {
        f.insert(&k).unwrap();
    }
    let keys: Vec<u64> = (0..20_000).collect();
    let mut want = vec![false; keys.len()];
    f.set_backend(Backend::Scalar).unwrap();
    f.contains_batch(&keys, &mut want).unwrap();
    for backend in Backend::available() {
        f.set_backend(backend).unwrap();
        let mut out = vec![false; keys.len()];
        f.contains_batch(&keys, &mut out).unwrap();
        assert_eq!(out, want, "{backend:?}");
        for (k, &w) in keys.iter().zip(&want) {
            assert_eq!(f.contains(k), w);
        }
    }
    assert!(want[..4000].iter().all(|&b| b));
}
