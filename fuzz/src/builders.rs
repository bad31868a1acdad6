//! Every builder with arbitrary parameters: `with_false_pos(p).expected_items(n)` and
//! `with_num_bits(bits).hashes(k)` must return a well-formed filter or a typed error,
//! never panic.
//!
//! Sizes that would legitimately allocate more than 2^31 bits (256 MiB) are not built:
//! the target predicts the size with the same public sizing functions the builders use
//! and only calls the builder there when an error is certain before any allocation
//! (size beyond the layout's limit, invalid `k`, unreachable FP). libFuzzer's malloc limit
//! (`-rss_limit_mb`, which also caps single allocations) flags any misprediction.

use arbitrary::Arbitrary;
use bloomforge_core::block::BLOCKED_MAX_HASHES;
use bloomforge_core::math::{
    blocked512_fp, blocked512_size, split_block_bits_per_key, split_block_fp, std_fp, std_size,
};
use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter,
    BlockedBloomFilter, Error, KeyedHasher, SplitBlockBloomFilter, StandardBloomFilter,
    STANDARD_MAX_HASHES,
};

/// Largest filter the target lets a builder allocate.
const CAP_BITS: f64 = (1u64 << 31) as f64;
/// `Blocked512::MAX_BLOCKS`: min(isize::MAX / 64, u64::MAX / 512).
const BLOCKED_MAX_BLOCKS: u64 = u64::MAX / 512;
/// `Split256::MAX_BLOCKS`.
const SPLIT_MAX_BLOCKS: u64 = 1 << 32;
/// The standard filter's bit limit.
const STANDARD_MAX_BITS: u64 = (isize::MAX as u64 / 8) * 8;

#[derive(Arbitrary, Debug)]
enum P {
    /// Any bit pattern: NaN, infinities, negatives, subnormals.
    Raw(f64),
    /// 10^-(x / 16): the useful range, densely.
    Decades(u16),
    /// 1 - 2^-(x): close to 1.
    NearOne(u8),
}

#[derive(Arbitrary, Debug)]
enum N {
    Raw(u64),
    Small(u16),
    Pow2(u8),
}

#[derive(Arbitrary, Debug)]
enum Bits {
    Raw(u64),
    Small(u16),
    /// 2^x + delta.
    Pow2 {
        exp: u8,
        delta: i16,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    p: P,
    n: N,
    bits: Bits,
    k: u32,
    small_k: bool,
    seed: u64,
    keyed: bool,
    /// Also size the atomic twins from `p` (the same sizing code as the plain filters, and
    /// sizing dominates the run time, so only on request).
    atomic_fp: bool,
}

#[derive(Clone, Copy, Debug)]
enum Family {
    Blocked,
    Split,
    Standard,
}

/// What a false-positive build must do, predicted from the public sizing functions.
enum Expect {
    /// Build it: `Ok` with this many bits and probes (or the named unreachable error).
    Build { bits: u64, k: u32 },
    /// An error is certain before any allocation.
    Error,
    /// Legitimately larger than the cap: not built.
    Skip,
}

fn predict_fp(family: Family, p: f64, n: u64) -> Expect {
    if !(p > 0.0 && p < 1.0) || n == 0 {
        return Expect::Error;
    }
    match family {
        Family::Blocked | Family::Split => {
            let (c, k, block, max_blocks, best) = match family {
                Family::Blocked => {
                    let (c, k) = blocked512_size(p);
                    (c, k, 512.0, BLOCKED_MAX_BLOCKS, blocked512_fp(c, k))
                }
                _ => {
                    let c = split_block_bits_per_key(p, 8, 32);
                    (c, 8, 256.0, SPLIT_MAX_BLOCKS, split_block_fp(c, 8, 32))
                }
            };
            if best > p * (1.0 + 1e-9) {
                return Expect::Error; // unreachable target
            }
            let blocks = (n as f64 * c / block).ceil();
            if blocks.is_nan() || blocks >= max_blocks as f64 {
                return Expect::Error;
            }
            let bits = blocks.max(1.0) * block;
            if bits > CAP_BITS {
                return Expect::Skip;
            }
            Expect::Build {
                bits: bits as u64,
                k,
            }
        }
        Family::Standard => {
            let (m, k) = std_size(n, p);
            if m > STANDARD_MAX_BITS {
                Expect::Error
            } else if m as f64 > CAP_BITS {
                Expect::Skip
            } else {
                Expect::Build { bits: m, k }
            }
        }
    }
}

fn k_range(family: Family) -> (u32, u32) {
    match family {
        Family::Blocked => (1, BLOCKED_MAX_HASHES),
        Family::Split => (8, 8),
        Family::Standard => (1, STANDARD_MAX_HASHES),
    }
}

/// `(num_bits after rounding, whether the size is within the layout's limit)`.
fn rounded_bits(family: Family, bits: u64) -> (u128, bool) {
    match family {
        Family::Blocked => {
            let blocks = bits.div_ceil(512);
            (u128::from(blocks) * 512, blocks <= BLOCKED_MAX_BLOCKS)
        }
        Family::Split => {
            let blocks = bits.div_ceil(256);
            (u128::from(blocks) * 256, blocks <= SPLIT_MAX_BLOCKS)
        }
        Family::Standard => (u128::from(bits), bits <= STANDARD_MAX_BITS),
    }
}

/// Checks one builder result against the prediction for `with_false_pos(p).expected_items(n)`.
fn check_fp(family: Family, expect: &Expect, p: f64, n: u64, got: Result<(u64, u32), Error>) {
    match (expect, got) {
        (Expect::Skip, _) => unreachable!("skipped builds are not run"),
        (Expect::Error, Ok(shape)) => panic!("{family:?}: p {p:e} n {n} built {shape:?}"),
        (Expect::Error, Err(e)) => {
            assert!(
                matches!(
                    e,
                    Error::InvalidFalsePositiveRate(_)
                        | Error::ZeroItems
                        | Error::TooLarge { .. }
                        | Error::UnreachableFalsePositiveRate { .. }
                ),
                "{family:?}: p {p:e} n {n}: unexpected error {e:?}"
            );
            if !(p > 0.0 && p < 1.0) {
                assert!(matches!(e, Error::InvalidFalsePositiveRate(_)), "{e:?}");
            } else if n == 0 {
                assert_eq!(e, Error::ZeroItems);
            }
        }
        (&Expect::Build { bits, k }, Ok((got_bits, got_k))) => {
            assert_eq!(
                (got_bits, got_k),
                (bits, k),
                "{family:?}: p {p:e} n {n}: shape"
            );
            let (kmin, kmax) = k_range(family);
            assert!((kmin..=kmax).contains(&got_k));
            // The built filter meets the target under its own theory.
            let c = got_bits as f64 / n as f64;
            let fp = match family {
                Family::Blocked => blocked512_fp(c, got_k),
                Family::Split => split_block_fp(c, 8, 32),
                Family::Standard => std_fp(got_bits as f64, n as f64, got_k),
            };
            assert!(
                fp <= p * (1.0 + 1e-6),
                "{family:?}: p {p:e} n {n}: built {got_bits} bits k {got_k} with theory FP {fp:e}"
            );
        }
        (Expect::Build { .. }, Err(e)) => {
            panic!("{family:?}: p {p:e} n {n}: predicted a build, got {e:?}")
        }
    }
}

fn check_bits(family: Family, bits: u64, k: u32, got: Result<(u64, u32), Error>) {
    let (kmin, kmax) = k_range(family);
    let k_ok = (kmin..=kmax).contains(&k);
    let (rounded, size_ok) = rounded_bits(family, bits);
    match got {
        Ok((got_bits, got_k)) => {
            assert!(
                bits > 0 && k_ok && size_ok,
                "{family:?}: built {bits} bits k {k}"
            );
            assert_eq!(
                u128::from(got_bits),
                rounded,
                "{family:?}: {bits} bits rounded wrongly"
            );
            assert_eq!(got_k, k);
        }
        Err(e) => {
            let expected_err = bits == 0 || !k_ok || !size_ok;
            assert!(expected_err, "{family:?}: {bits} bits k {k} refused: {e:?}");
            assert!(
                matches!(
                    e,
                    Error::ZeroBits | Error::InvalidHashCount { .. } | Error::TooLarge { .. }
                ),
                "{family:?}: {bits} bits k {k}: unexpected error {e:?}"
            );
            if bits == 0 {
                assert_eq!(e, Error::ZeroBits);
            }
            if let Error::InvalidHashCount { k: ek, min, max } = e {
                assert_eq!((ek, min, max), (k, kmin, kmax));
                assert!(!k_ok);
            }
            if let Error::TooLarge { .. } = e {
                assert!(!size_ok);
            }
        }
    }
}

/// Whether `with_num_bits(bits).hashes(k)` may be called: small enough, or certain to fail
/// before allocating.
fn bits_runnable(family: Family, bits: u64, k: u32) -> bool {
    let (kmin, kmax) = k_range(family);
    let (rounded, size_ok) = rounded_bits(family, bits);
    bits == 0 || !(kmin..=kmax).contains(&k) || !size_ok || rounded as f64 <= CAP_BITS
}

macro_rules! exercise {
    ($family:expr, $Plain:ident, $Atomic:ident, $input:expr) => {{
        let (family, (p, n, bits, k, seed, keyed, atomic_fp)) = ($family, $input);
        // Sizing is the expensive part: predict once per family.
        let expect = predict_fp(family, p, n);
        if !matches!(expect, Expect::Skip) {
            let got = if keyed {
                $Plain::with_false_pos(p)
                    .hasher(KeyedHasher::with_key([seed, 1, 2, 3]))
                    .expected_items(n)
                    .map(|f| {
                        assert!(f.expected_false_pos() == 0.0);
                        (f.num_bits(), f.num_hashes())
                    })
            } else {
                $Plain::with_false_pos(p)
                    .seed(seed)
                    .expected_items(n)
                    .map(|mut f| {
                        f.insert(&seed);
                        assert!(f.contains(&seed));
                        (f.num_bits(), f.num_hashes())
                    })
            };
            check_fp(family, &expect, p, n, got);
        }
        if atomic_fp && !matches!(expect, Expect::Skip) {
            let got = $Atomic::with_false_pos(p)
                .seed(seed)
                .expected_items(n)
                .map(|f| {
                    f.insert(&seed);
                    assert!(f.contains(&seed));
                    (f.num_bits(), f.num_hashes())
                });
            check_fp(family, &expect, p, n, got);
        }
        if bits_runnable(family, bits, k) {
            let got = $Plain::with_num_bits(bits)
                .seed(seed)
                .hashes(k)
                .map(|mut f| {
                    f.insert(&seed);
                    assert!(f.contains(&seed));
                    (f.num_bits(), f.num_hashes())
                });
            check_bits(family, bits, k, got);
            let got = $Atomic::with_num_bits(bits)
                .hasher(KeyedHasher::with_key([seed, 4, 5, 6]))
                .hashes(k)
                .map(|f| (f.num_bits(), f.num_hashes()));
            check_bits(family, bits, k, got);
        }
    }};
}

/// One fuzz case.
fn fuzz_one(input: Input) {
    let p = match input.p {
        P::Raw(p) => p,
        P::Decades(x) => 10f64.powf(-f64::from(x % 5000) / 16.0),
        P::NearOne(x) => 1.0 - 0.5f64.powi(i32::from(x % 60)),
    };
    let n = match input.n {
        N::Raw(n) => n,
        N::Small(n) => u64::from(n),
        N::Pow2(e) => 1u64.wrapping_shl(u32::from(e)),
    };
    let bits = match input.bits {
        Bits::Raw(b) => b,
        Bits::Small(b) => u64::from(b),
        Bits::Pow2 { exp, delta } => 1u64
            .wrapping_shl(u32::from(exp % 64))
            .wrapping_add_signed(i64::from(delta)),
    };
    let k = if input.small_k { input.k % 80 } else { input.k };
    let args = (p, n, bits, k, input.seed, input.keyed, input.atomic_fp);
    exercise!(
        Family::Blocked,
        BlockedBloomFilter,
        AtomicBlockedBloomFilter,
        args
    );
    exercise!(
        Family::Split,
        SplitBlockBloomFilter,
        AtomicSplitBlockBloomFilter,
        args
    );
    exercise!(
        Family::Standard,
        StandardBloomFilter,
        AtomicStandardBloomFilter,
        args
    );
}

/// One fuzz case from raw bytes, as libFuzzer's typed `fuzz_target!` decodes them.
pub fn run_bytes(data: &[u8]) {
    if let Ok(input) = Input::arbitrary_take_rest(arbitrary::Unstructured::new(data)) {
        fuzz_one(input);
    }
}
