//! The CPU features the workspace's kernels use, detected once per process.
//!
//! Every crate of the workspace asks this module (through [`CpuFeatures::detected`] and
//! [`Backend`](super::Backend)'s checks) whether the CPU runs a kernel; no crate calls
//! `is_x86_feature_detected!` itself, so the answer is the same everywhere and Miri (which
//! runs no SIMD intrinsic) sees an empty set.

use core::sync::atomic::{AtomicU32, Ordering};

/// A set of x86-64 CPU features beyond the compilation target.
///
/// A [`Backend`](super::Backend) needs a base set
/// ([`required_features`](super::Backend::required_features)); a kernel that needs more
/// (the counting filter's AVX-512 kernels need AVX-512BW, the d-left AVX-512 kernel VBMI
/// and BITALG) states it as an extra set and checks
/// [`is_available_with`](super::Backend::is_available_with).
///
/// ```
/// use bloomforge_core::arch::CpuFeatures;
/// let wanted = CpuFeatures::AVX512F | CpuFeatures::AVX512BW;
/// assert!(wanted.contains(CpuFeatures::AVX512BW));
/// assert!(!CpuFeatures::NONE.contains(wanted));
/// // What this CPU has: always a superset of the empty set.
/// assert!(CpuFeatures::detected().contains(CpuFeatures::NONE));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CpuFeatures(u32);

/// Every named feature with its `/proc/cpuinfo` spelling (as `std` detects it).
const NAMED: [(CpuFeatures, &str); 11] = [
    (CpuFeatures::POPCNT, "popcnt"),
    (CpuFeatures::BMI1, "bmi1"),
    (CpuFeatures::BMI2, "bmi2"),
    (CpuFeatures::AVX2, "avx2"),
    (CpuFeatures::AVX512F, "avx512f"),
    (CpuFeatures::AVX512BW, "avx512bw"),
    (CpuFeatures::AVX512VL, "avx512vl"),
    (CpuFeatures::AVX512DQ, "avx512dq"),
    (CpuFeatures::AVX512VBMI, "avx512vbmi"),
    (CpuFeatures::AVX512BITALG, "avx512_bitalg"),
    (CpuFeatures::AVX512VPOPCNTDQ, "avx512_vpopcntdq"),
];

/// Bit set once the detection ran (so a CPU with no feature is not detected again).
const DETECTED_FLAG: u32 = 1 << 31;
static DETECTED: AtomicU32 = AtomicU32::new(0);

impl CpuFeatures {
    /// The empty set.
    pub const NONE: CpuFeatures = CpuFeatures(0);
    /// `popcnt`.
    pub const POPCNT: CpuFeatures = CpuFeatures(1 << 0);
    /// `bmi1` (`tzcnt`, `blsr`).
    pub const BMI1: CpuFeatures = CpuFeatures(1 << 1);
    /// `bmi2` (`pext`, `pdep`).
    pub const BMI2: CpuFeatures = CpuFeatures(1 << 2);
    /// AVX2.
    pub const AVX2: CpuFeatures = CpuFeatures(1 << 3);
    /// AVX-512 Foundation.
    pub const AVX512F: CpuFeatures = CpuFeatures(1 << 4);
    /// AVX-512 byte and word lanes.
    pub const AVX512BW: CpuFeatures = CpuFeatures(1 << 5);
    /// AVX-512 on 128- and 256-bit registers.
    pub const AVX512VL: CpuFeatures = CpuFeatures(1 << 6);
    /// AVX-512 doubleword and quadword instructions.
    pub const AVX512DQ: CpuFeatures = CpuFeatures(1 << 7);
    /// AVX-512 VBMI (`vpermb`, `vpmultishiftqb`).
    pub const AVX512VBMI: CpuFeatures = CpuFeatures(1 << 8);
    /// AVX-512 BITALG (`vpopcntb`, `vpopcntw`).
    pub const AVX512BITALG: CpuFeatures = CpuFeatures(1 << 9);
    /// AVX-512 VPOPCNTDQ (`vpopcntd`, `vpopcntq`).
    pub const AVX512VPOPCNTDQ: CpuFeatures = CpuFeatures(1 << 10);

    /// Every feature this type names.
    pub const ALL: CpuFeatures = CpuFeatures((1 << NAMED.len()) - 1);

    /// The feature `/proc/cpuinfo` spells `name` (`"avx512bw"`, `"avx512_vpopcntdq"`).
    pub fn from_name(name: &str) -> Option<CpuFeatures> {
        NAMED.iter().find(|(_, n)| *n == name).map(|&(f, _)| f)
    }

    /// Both sets.
    #[inline]
    pub const fn union(self, other: CpuFeatures) -> CpuFeatures {
        CpuFeatures(self.0 | other.0)
    }

    /// Whether every feature of `other` is in `self`.
    #[inline]
    pub const fn contains(self, other: CpuFeatures) -> bool {
        self.0 & other.0 == other.0
    }

    /// The features of this CPU, detected on the first call and cached. Empty on other
    /// architectures and under Miri.
    #[inline]
    pub fn detected() -> CpuFeatures {
        let cached = DETECTED.load(Ordering::Relaxed);
        if cached & DETECTED_FLAG != 0 {
            return CpuFeatures(cached & !DETECTED_FLAG);
        }
        let found = detect();
        DETECTED.store(found.0 | DETECTED_FLAG, Ordering::Relaxed);
        found
    }

    /// Whether this CPU has every feature of the set.
    #[inline]
    pub fn is_detected(self) -> bool {
        CpuFeatures::detected().contains(self)
    }

    /// The features' names as `/proc/cpuinfo` spells them (`"avx2"`, `"avx512_bitalg"`).
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        NAMED
            .into_iter()
            .filter(move |(f, _)| self.contains(*f))
            .map(|(_, name)| name)
    }
}

impl core::ops::BitOr for CpuFeatures {
    type Output = CpuFeatures;
    #[inline]
    fn bitor(self, rhs: CpuFeatures) -> CpuFeatures {
        self.union(rhs)
    }
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
fn detect() -> CpuFeatures {
    let mut found = CpuFeatures::NONE;
    let mut add = |present: bool, f: CpuFeatures| {
        if present {
            found = found.union(f);
        }
    };
    add(std::is_x86_feature_detected!("popcnt"), CpuFeatures::POPCNT);
    add(std::is_x86_feature_detected!("bmi1"), CpuFeatures::BMI1);
    add(std::is_x86_feature_detected!("bmi2"), CpuFeatures::BMI2);
    add(std::is_x86_feature_detected!("avx2"), CpuFeatures::AVX2);
    add(
        std::is_x86_feature_detected!("avx512f"),
        CpuFeatures::AVX512F,
    );
    add(
        std::is_x86_feature_detected!("avx512bw"),
        CpuFeatures::AVX512BW,
    );
    add(
        std::is_x86_feature_detected!("avx512vl"),
        CpuFeatures::AVX512VL,
    );
    add(
        std::is_x86_feature_detected!("avx512dq"),
        CpuFeatures::AVX512DQ,
    );
    add(
        std::is_x86_feature_detected!("avx512vbmi"),
        CpuFeatures::AVX512VBMI,
    );
    add(
        std::is_x86_feature_detected!("avx512bitalg"),
        CpuFeatures::AVX512BITALG,
    );
    add(
        std::is_x86_feature_detected!("avx512vpopcntdq"),
        CpuFeatures::AVX512VPOPCNTDQ,
    );
    found
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
fn detect() -> CpuFeatures {
    CpuFeatures::NONE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a = CpuFeatures::AVX2 | CpuFeatures::POPCNT;
        assert!(a.contains(CpuFeatures::AVX2));
        assert!(a.contains(CpuFeatures::NONE));
        assert!(!a.contains(CpuFeatures::AVX2 | CpuFeatures::AVX512F));
        assert_eq!(a.names().collect::<Vec<_>>(), ["popcnt", "avx2"]);
        assert_eq!(
            NAMED.iter().fold(CpuFeatures::NONE, |s, (f, _)| s | *f),
            CpuFeatures::ALL
        );
        for name in CpuFeatures::ALL.names() {
            assert_eq!(
                CpuFeatures::from_name(name)
                    .unwrap()
                    .names()
                    .collect::<Vec<_>>(),
                [name]
            );
        }
        assert_eq!(CpuFeatures::from_name("sse9"), None);
    }

    #[test]
    fn detection_is_cached_and_stable() {
        let first = CpuFeatures::detected();
        assert_eq!(CpuFeatures::detected(), first);
        assert_eq!(first.0 & DETECTED_FLAG, 0);
    }
}
