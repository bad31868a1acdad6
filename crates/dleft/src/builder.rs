//! Builders: explicit parameters ([`DLeftBuilder`]) or sized from a target
//! false-positive rate ([`DLeftFalsePosBuilder`], [`DLeftSizing`]).

use crate::error::{DLeftError, Result};
use crate::filter::DLeftCountingBloomFilter;
use crate::layout::{
    Geometry, MAX_CELLS_PER_BUCKET, MAX_CELL_BITS, MAX_COUNTER_BITS, MAX_SUBTABLES,
};
use crate::theory;
use bloomforge_core::hash::DefaultHasher;
use core::hash::BuildHasher;

/// Default number of subtables `d`.
pub const DEFAULT_SUBTABLES: u32 = 4;
/// Default cells per bucket `w`.
pub const DEFAULT_CELLS_PER_BUCKET: u32 = 8;
/// Default counter bits `c`: 4, so a key is stuck (its counter saturated and sticky)
/// only after 15 more inserts than removes of its fingerprint. With 2-bit counters (the
/// earlier default) one trial left 239 of 1258 fully removed keys stuck at `3+`; 2 bits
/// save ~2 bits per cell (about 12 % of the table) where keys are rarely inserted twice.
pub const DEFAULT_COUNTER_BITS: u32 = 4;

/// Builder with explicit parameters:
/// `DLeftCountingBloomFilter::builder().subtables(4).buckets_per_subtable(1 << 14)
/// .cells_per_bucket(8).remainder_bits(12).counter_bits(2).seed(7).build()?`.
///
/// Every parameter is validated by [`build`](Self::build) (typed errors, no panics).
#[must_use = "a builder does nothing until finished with .build()"]
#[derive(Clone, Debug)]
pub struct DLeftBuilder<S = DefaultHasher> {
    subtables: u32,
    buckets: u64,
    cells: u32,
    rem_bits: u32,
    counter_bits: u32,
    seed: u64,
    hasher: S,
    /// `Some` when sized from `expected_items` (and `false_pos`) rather than explicitly.
    items: Option<u64>,
    false_pos: Option<f64>,
}

impl DLeftBuilder {
    /// Defaults: 4 subtables of 1024 buckets, 8 cells per bucket, 12-bit remainders, 4-bit
    /// counters ([`DEFAULT_COUNTER_BITS`]), seed 0, [`DefaultHasher`].
    pub fn new() -> Self {
        Self {
            subtables: DEFAULT_SUBTABLES,
            buckets: 1024,
            cells: DEFAULT_CELLS_PER_BUCKET,
            rem_bits: 12,
            counter_bits: DEFAULT_COUNTER_BITS,
            seed: 0,
            hasher: DefaultHasher::default(),
            items: None,
            false_pos: None,
        }
    }

    /// Seeds both the default hasher and the permutations. Filters must share a seed to
    /// give the same fingerprints.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            seed,
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl Default for DLeftBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: BuildHasher> DLeftBuilder<S> {
    /// Sizes the filter for `items` keys (the conventions' builder): with this set,
    /// [`build`](Self::build) chooses the buckets and remainder bits for
    /// [`false_pos`](Self::false_pos) (default 0.01) as
    /// [`DLeftFalsePosBuilder`] does, keeping `subtables`, `cells_per_bucket` and
    /// `counter_bits`; `buckets_per_subtable` and `remainder_bits` are then ignored.
    pub fn expected_items(self, items: u64) -> Self {
        Self {
            items: Some(items),
            ..self
        }
    }

    /// The target false-positive rate at `expected_items` keys (default 0.01).
    pub fn false_pos(self, fp: f64) -> Self {
        Self {
            false_pos: Some(fp),
            ..self
        }
    }

    /// Number of subtables `d` (`1..=8`; default 4).
    pub fn subtables(self, d: u32) -> Self {
        Self {
            subtables: d,
            ..self
        }
    }

    /// Buckets per subtable `B` (at least 1; a power of two selects Bonomi et al.'s
    /// `a_i f mod 2^(q+r)` permutations, any other value the general bijection; `B 2^r`
    /// at most `2^64`).
    pub fn buckets_per_subtable(self, buckets: u64) -> Self {
        Self { buckets, ..self }
    }

    /// Cells per bucket `w` (`1..=16`; default 8).
    pub fn cells_per_bucket(self, w: u32) -> Self {
        Self { cells: w, ..self }
    }

    /// Remainder bits `r` (at least 1, `r + c <= 32`).
    pub fn remainder_bits(self, r: u32) -> Self {
        Self {
            rem_bits: r,
            ..self
        }
    }

    /// Counter bits `c` (`1..=8`; default 4, [`DEFAULT_COUNTER_BITS`]). Counters saturate
    /// at `2^c - 1`.
    pub fn counter_bits(self, c: u32) -> Self {
        Self {
            counter_bits: c,
            ..self
        }
    }

    /// Seeds the permutations only (keeps the hasher); [`seed`](DLeftBuilder::seed) on
    /// the default-hasher builder seeds both.
    pub fn permutation_seed(self, seed: u64) -> Self {
        Self { seed, ..self }
    }

    /// Uses `hasher` instead of the default (e.g.
    /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys). Keeps the
    /// permutation seed set so far.
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> DLeftBuilder<S2> {
        DLeftBuilder {
            subtables: self.subtables,
            buckets: self.buckets,
            cells: self.cells,
            rem_bits: self.rem_bits,
            counter_bits: self.counter_bits,
            seed: self.seed,
            hasher,
            items: self.items,
            false_pos: self.false_pos,
        }
    }

    /// Builds the empty filter.
    ///
    /// # Errors
    /// [`DLeftError::InvalidParameter`] for a parameter out of range,
    /// [`DLeftError::Core`] (`TooLarge`, `AllocationFailed`) if the table does not fit;
    /// when sized from a false-positive rate, `ZeroItems` (in [`DLeftError::Core`]) if
    /// `false_pos` was given without `expected_items`, and the errors of
    /// [`DLeftFalsePosBuilder::expected_items`].
    pub fn build(self) -> Result<DLeftCountingBloomFilter<S>> {
        if self.items.is_some() || self.false_pos.is_some() {
            return DLeftFalsePosBuilder {
                fp: self
                    .false_pos
                    .unwrap_or(bloomforge_core::builder::DEFAULT_FALSE_POS),
                subtables: self.subtables,
                cells: self.cells,
                counter_bits: self.counter_bits,
                target_load: None,
                seed: self.seed,
                hasher: self.hasher,
            }
            .expected_items(self.items.unwrap_or(0));
        }
        DLeftCountingBloomFilter::from_parts(
            self.subtables,
            self.buckets,
            self.cells,
            self.rem_bits,
            self.counter_bits,
            self.seed,
            self.hasher,
        )
    }
}

/// Builder sized from a target false-positive rate:
/// `DLeftCountingBloomFilter::with_false_pos(0.001).expected_items(n)?`.
///
/// The shape (`d`, `w`, `c`, target load) can be changed before
/// [`expected_items`](Self::expected_items); the remainder bits and bucket count are then
/// chosen by [`DLeftSizing::compute`].
#[must_use = "a builder does nothing until finished with .expected_items(n)"]
#[derive(Clone, Debug)]
pub struct DLeftFalsePosBuilder<S = DefaultHasher> {
    fp: f64,
    subtables: u32,
    cells: u32,
    counter_bits: u32,
    target_load: Option<f64>,
    seed: u64,
    hasher: S,
}

impl DLeftFalsePosBuilder {
    /// Starts a builder for false-positive rate `fp` (validated when finished).
    pub fn new(fp: f64) -> Self {
        Self {
            fp,
            subtables: DEFAULT_SUBTABLES,
            cells: DEFAULT_CELLS_PER_BUCKET,
            counter_bits: DEFAULT_COUNTER_BITS,
            target_load: None,
            seed: 0,
            hasher: DefaultHasher::default(),
        }
    }

    /// Seeds both the default hasher and the permutations.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            seed,
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<S: BuildHasher> DLeftFalsePosBuilder<S> {
    /// Number of subtables `d` (`1..=8`; default 4).
    pub fn subtables(self, d: u32) -> Self {
        Self {
            subtables: d,
            ..self
        }
    }

    /// Cells per bucket `w` (`1..=16`; default 8).
    pub fn cells_per_bucket(self, w: u32) -> Self {
        Self { cells: w, ..self }
    }

    /// Counter bits `c` (`1..=8`; default 4, [`DEFAULT_COUNTER_BITS`]).
    pub fn counter_bits(self, c: u32) -> Self {
        Self {
            counter_bits: c,
            ..self
        }
    }

    /// Average bucket load to size for at `n` keys (default
    /// [`theory::default_target_load`]`(d, w)`, 6 for `d = 4, w = 8`). Higher loads save
    /// space and risk [`DLeftError::BucketFull`].
    pub fn target_load(self, load: f64) -> Self {
        Self {
            target_load: Some(load),
            ..self
        }
    }

    /// Seeds the permutations only (keeps the hasher).
    pub fn permutation_seed(self, seed: u64) -> Self {
        Self { seed, ..self }
    }

    /// Uses `hasher` instead of the default. Keeps the permutation seed set so far.
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> DLeftFalsePosBuilder<S2> {
        DLeftFalsePosBuilder {
            fp: self.fp,
            subtables: self.subtables,
            cells: self.cells,
            counter_bits: self.counter_bits,
            target_load: self.target_load,
            seed: self.seed,
            hasher,
        }
    }

    /// The parameters [`expected_items`](Self::expected_items) would choose for `items`
    /// keys.
    ///
    /// # Errors
    /// As for [`expected_items`](Self::expected_items).
    pub fn sizing(&self, items: u64) -> Result<DLeftSizing> {
        DLeftSizing::compute(
            items,
            self.fp,
            self.subtables,
            self.cells,
            self.counter_bits,
            self.target_load,
        )
    }

    /// Builds a filter sized for `items` keys at the target false-positive rate.
    ///
    /// # Errors
    /// `InvalidFalsePositiveRate` / `ZeroItems` (in [`DLeftError::Core`]) unless
    /// `0 < fp < 1` and `items > 0`; [`DLeftError::InvalidParameter`] /
    /// [`DLeftError::InvalidTargetLoad`] for a shape out of range; `TooLarge` /
    /// `AllocationFailed` if the table does not fit.
    pub fn expected_items(self, items: u64) -> Result<DLeftCountingBloomFilter<S>> {
        let plan = self.sizing(items)?;
        DLeftCountingBloomFilter::from_parts(
            plan.subtables,
            plan.buckets_per_subtable,
            plan.cells_per_bucket,
            plan.remainder_bits,
            plan.counter_bits,
            self.seed,
            self.hasher,
        )
    }
}

/// The shape chosen for `n` keys at false-positive rate `p`.
///
/// For each remainder width `r` the bucket count is the smallest `B` with
/// `1 - (1 - 1/(B 2^r))^n <= p` and `n / (d B) <= L` (the target load); the `r` whose
/// table is smallest wins (ties: the larger `r`, i.e. the lower false-positive rate). With
/// `d = 4`, `w = 8`, `c = 4` (the defaults), `L = 6` this gives `r = ceil(log2(d L / p))`
/// at load 6 or `r - 1` at the load that meets `p` exactly, whichever takes fewer bits:
/// 21.3 bits/key at `p = 1 %` (FP 0.58 %), 25.3 bits/key at `p = 0.1 %` (FP 0.073 %) for
/// a million keys (`tests/sizing_table.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct DLeftSizing {
    /// Subtables `d`.
    pub subtables: u32,
    /// Buckets per subtable `B` (any integer >= 1, not only powers of two).
    pub buckets_per_subtable: u64,
    /// Cells per bucket `w`.
    pub cells_per_bucket: u32,
    /// Remainder bits `r`.
    pub remainder_bits: u32,
    /// Counter bits `c`.
    pub counter_bits: u32,
    /// The average load the sizing aimed at (an upper bound of the actual load).
    pub target_load: f64,
    /// Average load at `n` keys, `n / (d B)`.
    pub load: f64,
    /// Expected false-positive rate at `n` distinct keys, `1 - (1 - 1/(B 2^r))^n`.
    pub false_pos: f64,
    /// Table size in bits.
    pub memory_bits: u64,
    /// `memory_bits / n`.
    pub bits_per_key: f64,
}

impl DLeftSizing {
    /// Chooses `B` and `r` for `items` keys at false-positive rate `fp` with `d`
    /// subtables, `w` cells per bucket, `c` counter bits and average load at most
    /// `target_load` (default [`theory::default_target_load`]`(d, w)`).
    ///
    /// # Errors
    /// As for [`DLeftFalsePosBuilder::expected_items`].
    pub fn compute(
        items: u64,
        fp: f64,
        subtables: u32,
        cells: u32,
        counter_bits: u32,
        target_load: Option<f64>,
    ) -> Result<Self> {
        if !(fp > 0.0 && fp < 1.0) {
            return Err(bloomforge_core::Error::InvalidFalsePositiveRate(fp).into());
        }
        if items == 0 {
            return Err(bloomforge_core::Error::ZeroItems.into());
        }
        // Validate the shape with a placeholder size (typed errors for d, w, c).
        Geometry::new(subtables, 1, cells, 1, counter_bits)?;
        debug_assert!(subtables <= MAX_SUBTABLES && cells <= MAX_CELLS_PER_BUCKET);
        debug_assert!(counter_bits <= MAX_COUNTER_BITS);
        let load = match target_load {
            Some(l) if l.is_finite() && l > 0.0 && l <= f64::from(cells) => l,
            Some(l) => return Err(DLeftError::InvalidTargetLoad { load: l, cells }),
            None => theory::default_target_load(subtables, cells),
        };
        let n = items as f64;
        let d = u64::from(subtables);
        // Smallest universe M = B 2^r with 1 - (1 - 1/M)^n <= fp: 1/M <= t.
        let t = -((-fp).ln_1p() / n).exp_m1();
        let b_load = (n / (f64::from(subtables) * load)).ceil().max(1.0);
        let mut best: Option<(u128, Self)> = None;
        for r in 1..=(MAX_CELL_BITS - counter_bits) {
            let b_fp = (1.0 / (t * f64::from(r).exp2())).ceil();
            let b = b_fp.max(b_load);
            if b.is_nan() || b >= 2f64.powi(63) {
                continue;
            }
            let mut b = b as u64;
            // Floating-point slack: step up until the exact formula meets the target.
            let mut tries = 0;
            while theory::dlcbf_fp(items, b, r) > fp && tries < 64 {
                b += 1 + b / 1_000_000;
                tries += 1;
            }
            if u128::from(b) << r > 1u128 << 64 || theory::dlcbf_fp(items, b, r) > fp {
                continue;
            }
            let bucket_bits = u128::from((cells * (r + counter_bits)).div_ceil(8) * 8);
            let bits = u128::from(d) * u128::from(b) * bucket_bits;
            if best
                .as_ref()
                .is_none_or(|(best_bits, _)| bits <= *best_bits)
            {
                let plan = Self {
                    subtables,
                    buckets_per_subtable: b,
                    cells_per_bucket: cells,
                    remainder_bits: r,
                    counter_bits,
                    target_load: load,
                    load: n / (d as f64 * b as f64),
                    false_pos: theory::dlcbf_fp(items, b, r),
                    memory_bits: u64::try_from(bits).unwrap_or(u64::MAX),
                    bits_per_key: bits as f64 / n,
                };
                best = Some((bits, plan));
            }
        }
        match best {
            Some((_, plan)) => Ok(plan),
            None => Err(DLeftError::InvalidParameter {
                name: "expected_items",
                value: items,
                reason: "too many items for this false-positive rate: the fingerprint space \
                         B 2^r would exceed 2^64 (raise the false-positive rate)",
            }),
        }
    }
}

/// The filter's constructors that start a builder live with the builders (the filter
/// module does not know them).
impl DLeftCountingBloomFilter {
    /// Sized for `expected_items` keys at false-positive rate `false_pos`, with the
    /// default shape and hasher: the same as
    /// `Self::builder().expected_items(n).false_pos(p).build()` and
    /// `Self::with_false_pos(p).expected_items(n)`.
    ///
    /// ```
    /// # use bloomforge_dleft::DLeftCountingBloomFilter;
    /// let a = DLeftCountingBloomFilter::new(10_000, 0.01)?;
    /// let b = DLeftCountingBloomFilter::builder().expected_items(10_000).false_pos(0.01).build()?;
    /// assert_eq!(a.memory_bits(), b.memory_bits());
    /// # Ok::<(), bloomforge_dleft::DLeftError>(())
    /// ```
    ///
    /// # Errors
    /// As [`DLeftFalsePosBuilder::expected_items`].
    pub fn new(expected_items: u64, false_pos: f64) -> crate::Result<Self> {
        Self::builder()
            .expected_items(expected_items)
            .false_pos(false_pos)
            .build()
    }

    /// Starts a builder sized from a target false-positive rate; finish with
    /// [`expected_items`](DLeftFalsePosBuilder::expected_items).
    ///
    /// ```
    /// # use bloomforge_dleft::DLeftCountingBloomFilter;
    /// let f = DLeftCountingBloomFilter::with_false_pos(0.01).expected_items(1_000_000)?;
    /// assert!(f.expected_false_pos_at(1_000_000) <= 0.01);
    /// # Ok::<(), bloomforge_dleft::DLeftError>(())
    /// ```
    pub fn with_false_pos(fp: f64) -> DLeftFalsePosBuilder {
        DLeftFalsePosBuilder::new(fp)
    }

    /// Starts a builder: explicit parameters (defaults: 4 subtables of 1024 buckets, 8
    /// cells per bucket, 12-bit remainders, 4-bit counters, seed 0), or
    /// `.expected_items(n).false_pos(p)` to size it as [`new`](Self::new) does.
    ///
    /// ```
    /// # use bloomforge_dleft::DLeftCountingBloomFilter;
    /// let f = DLeftCountingBloomFilter::builder()
    ///     .subtables(4)
    ///     .buckets_per_subtable(1 << 14)
    ///     .cells_per_bucket(8)
    ///     .remainder_bits(12)
    ///     .counter_bits(2)
    ///     .seed(7)
    ///     .build()?;
    /// assert_eq!(f.memory_bits(), 4 * (1 << 14) * 8 * 14);
    /// # Ok::<(), bloomforge_dleft::DLeftError>(())
    /// ```
    pub fn builder() -> DLeftBuilder {
        DLeftBuilder::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bits per key of a counting Bloom filter with 4-bit counters at its optimum:
    /// `4 * log2(1/p) / ln 2`.
    fn cbf_bits_per_key(p: f64) -> f64 {
        4.0 * (1.0 / p).log2() / core::f64::consts::LN_2
    }

    #[test]
    fn sizing_meets_the_target_and_the_load() {
        for p in [0.5, 0.1, 1e-2, 3e-3, 1e-3, 1e-4, 1e-6, 1e-9] {
            for n in [1u64, 2, 7, 100, 12_345, 1_000_000, 1 << 40] {
                if n as f64 / p > 2f64.powi(64) {
                    // The fingerprint universe B 2^r of a 64-bit hash is too small.
                    assert!(matches!(
                        DLeftSizing::compute(n, p, 4, 8, 2, None),
                        Err(DLeftError::InvalidParameter {
                            name: "expected_items",
                            ..
                        })
                    ));
                    continue;
                }
                let s = DLeftSizing::compute(n, p, 4, 8, 2, None).unwrap();
                assert!(s.false_pos <= p, "n={n} p={p}: {s:?}");
                assert_eq!(
                    s.false_pos,
                    theory::dlcbf_fp(n, s.buckets_per_subtable, s.remainder_bits)
                );
                assert!(s.load <= s.target_load + 1e-12, "n={n} p={p}: {s:?}");
                assert_eq!(s.target_load, 6.0);
                assert!(s.remainder_bits + s.counter_bits <= MAX_CELL_BITS);
                // Not oversized: one bucket fewer breaks the load or the target.
                let fewer = s.buckets_per_subtable - 1;
                if fewer > 0 {
                    let over_load = n as f64 / (4.0 * fewer as f64) > s.target_load;
                    let over_fp = theory::dlcbf_fp(n, fewer, s.remainder_bits) > p;
                    assert!(over_load || over_fp, "n={n} p={p}: B could shrink: {s:?}");
                }
            }
        }
    }

    #[test]
    fn half_the_space_of_a_counting_bloom_filter() {
        // The design goal: at 1 % and 0.1 %, at most 0.55x the bits per key of a counting
        // Bloom filter with 4-bit counters, here even compared at the *target* rate
        // (the d-left filter's own rate is lower still).
        for (p, want_bits) in [(1e-2, 18.67), (1e-3, 22.67)] {
            let s = DLeftSizing::compute(1_000_000, p, 4, 8, 2, None).unwrap();
            assert!((s.bits_per_key - want_bits).abs() < 0.01, "{s:?}");
            let ratio = s.bits_per_key / cbf_bits_per_key(p);
            assert!(ratio <= 0.55, "p={p}: ratio {ratio:.3}");
            assert!(s.bits_per_key / cbf_bits_per_key(s.false_pos) <= 0.55);
        }
        // Paper's configuration at 1 %: r = 12, L = 6, 8 (12 + 2) / 6 bits per key.
        let s = DLeftSizing::compute(1_000_000, 1e-2, 4, 8, 2, None).unwrap();
        assert_eq!((s.remainder_bits, s.buckets_per_subtable), (12, 41_667));
        assert_eq!(s.memory_bits, 4 * 41_667 * 8 * 14);
    }

    #[test]
    fn sizing_shapes_and_errors() {
        let s = DLeftSizing::compute(10_000, 1e-3, 2, 16, 3, Some(10.0)).unwrap();
        assert_eq!(
            (s.subtables, s.cells_per_bucket, s.counter_bits),
            (2, 16, 3)
        );
        assert!(s.load <= 10.0 && s.false_pos <= 1e-3);
        let t = DLeftSizing::compute(10_000, 1e-3, 2, 16, 3, None).unwrap();
        assert_eq!(t.target_load, theory::default_target_load(2, 16));
        assert!(matches!(
            DLeftSizing::compute(10, 0.01, 4, 8, 2, Some(9.0)),
            Err(DLeftError::InvalidTargetLoad { .. })
        ));
        let b = DLeftFalsePosBuilder::new(0.01)
            .subtables(3)
            .cells_per_bucket(4)
            .counter_bits(3)
            .target_load(2.0);
        let plan = b.sizing(5000).unwrap();
        let f = b.expected_items(5000).unwrap();
        assert_eq!(f.buckets_per_subtable(), plan.buckets_per_subtable);
        assert_eq!(f.remainder_bits(), plan.remainder_bits);
        assert_eq!(f.memory_bits(), plan.memory_bits);
        assert_eq!(
            (f.subtables(), f.cells_per_bucket(), f.counter_bits()),
            (3, 4, 3)
        );
    }
}
