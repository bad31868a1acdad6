//! The harness's predictions: one [`Prediction`] per configured filter.
//!
//! The formulas are the crates' own: the standard (classic and exact small-`m`), blocked
//! and split-block ones and the Poisson / binomial laws are `bloomforge-core`'s
//! (re-exported here as [`math`]; they reproduce the Python reference `reference.csv` and
//! `std_exact.csv` to 1e-6, see core's `tests/theory_reference.rs`), the d-left counting
//! filter's are `bloomforge_dleft::theory`'s. This module only picks the formula and the
//! instance spread for each filter the harness measures.

pub use bloomforge_core::math;
use bloomforge_core::math::ProbeModel;

/// The predicted false-positive rate of one configured filter, with its spread across
/// filter instances (0 where the prediction is exact for every instance).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Prediction {
    /// Expected false-positive rate for `n` keys.
    pub fp: f64,
    /// Standard deviation of the realised rate across instances holding `n` keys.
    pub instance_sd: f64,
}

/// Standard layout (`k` probes over `m` bits): the exact small-`m` formula
/// ([`math::std_fp_exact`]) where it is cheap (`k n * min(m, k n) <= 2^24`), the classic
/// one elsewhere (where the two differ by less than the measurement can see).
pub fn standard(m: u64, n: u64, k: u32) -> Prediction {
    let throws = u64::from(k).saturating_mul(n);
    let exact = if throws.saturating_mul(m.min(throws)) <= 1 << 24 {
        math::std_fp_exact(m, n, k)
    } else {
        None
    };
    Prediction {
        fp: exact.unwrap_or_else(|| math::std_fp(m as f64, n as f64, k)),
        instance_sd: math::std_fp_instance_sd(m as f64, n as f64, k),
    }
}

/// 512-bit blocked layout, `k` probes with replacement, exact Binomial block loads.
pub fn blocked512(m: u64, n: u64, k: u32) -> Prediction {
    Prediction {
        fp: math::blocked_fp_exact_load(m, n, 512, k, ProbeModel::Replace),
        instance_sd: math::blocked_fp_instance_sd(m, n, 512, k, ProbeModel::Replace),
    }
}

/// Blocked layout with `b`-slot blocks (e.g. 128 counters per line of a counting filter),
/// `k` probes with replacement, exact Binomial block loads.
pub fn blocked(m: u64, n: u64, b: usize, k: u32) -> Prediction {
    Prediction {
        fp: math::blocked_fp_exact_load(m, n, b, k, ProbeModel::Replace),
        instance_sd: math::blocked_fp_instance_sd(m, n, b, k, ProbeModel::Replace),
    }
}

/// Parquet split-block layout (8 words of 32 bits).
pub fn split_block(m: u64, n: u64) -> Prediction {
    Prediction {
        fp: math::split_block_fp(m as f64 / n as f64, 8, 32),
        instance_sd: math::split_block_fp_instance_sd(m, n, 8, 32),
    }
}

/// A filter whose false-positive rate is a fixed `fp` per query, independently for every
/// non-member (binary fuse / xor filters: an `f`-bit fingerprint matches with `2^-f`).
pub fn fixed(fp: f64) -> Prediction {
    Prediction {
        fp,
        instance_sd: 0.0,
    }
}

/// Best `k` in `1..=24` for a 512-bit blocked filter at `c` bits per key.
pub fn blocked512_best_k(c: f64) -> u32 {
    math::best_k(|k| math::blocked512_fp(c, k), math::BLOCKED_SIZING_MAX_K).0
}

/// Best `k` in `1..=64` for a standard filter at `c` bits per key.
pub fn standard_best_k(c: f64) -> u32 {
    math::std_best_k(c, 64).0
}
