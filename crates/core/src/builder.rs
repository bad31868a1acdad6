//! Builders that read as a sentence:
//! `BlockedBloomFilter::with_false_pos(0.01).expected_items(1_000_000)?` or
//! `BlockedBloomFilter::with_num_bits(1 << 24).hashes(7)?`, with `.seed(..)` and
//! `.hasher(..)` in between.

use crate::hash::DefaultHasher;
use crate::Error;
use core::hash::BuildHasher;
use core::marker::PhantomData;

/// A filter family the builders can size and construct. Implemented by every filter type
/// of the workspace (the counting and d-left crates included) so they share one builder.
pub trait BuildFilter {
    /// The filter type built with hasher `S`.
    type Filter<S: BuildHasher>;
    /// The error construction returns.
    type Error: From<Error>;

    /// Sized for `items` keys at false-positive rate `fp` (already validated: `0 < fp < 1`,
    /// `items > 0`), with the layout's own FP formula.
    fn for_false_pos<S: BuildHasher>(
        fp: f64,
        items: u64,
        hasher: S,
    ) -> Result<Self::Filter<S>, Self::Error>;

    /// Exactly `bits` bits (rounded up to whole blocks) and `hashes` probes per key.
    fn for_bits_and_hashes<S: BuildHasher>(
        bits: u64,
        hashes: u32,
        hasher: S,
    ) -> Result<Self::Filter<S>, Self::Error>;
}

/// Builder from a target false-positive rate; finish with [`expected_items`](Self::expected_items).
#[must_use = "a builder does nothing until finished with .expected_items(n)"]
#[derive(Clone, Debug)]
pub struct FalsePosBuilder<F, S = DefaultHasher> {
    fp: f64,
    hasher: S,
    kind: PhantomData<fn() -> F>,
}

/// Builder from an explicit size; finish with [`hashes`](Self::hashes).
#[must_use = "a builder does nothing until finished with .hashes(k)"]
#[derive(Clone, Debug)]
pub struct NumBitsBuilder<F, S = DefaultHasher> {
    bits: u64,
    hasher: S,
    kind: PhantomData<fn() -> F>,
}

impl<F: BuildFilter> FalsePosBuilder<F> {
    /// Starts a builder for false-positive rate `fp` (validated when finished).
    pub fn new(fp: f64) -> Self {
        Self {
            fp,
            hasher: DefaultHasher::default(),
            kind: PhantomData,
        }
    }

    /// Seeds the default hasher. Filters must share a seed to be combined.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<F: BuildFilter, S: BuildHasher> FalsePosBuilder<F, S> {
    /// Uses `hasher` instead of the default (e.g. [`KeyedHasher`](crate::KeyedHasher) for
    /// untrusted keys).
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> FalsePosBuilder<F, S2> {
        FalsePosBuilder {
            fp: self.fp,
            hasher,
            kind: PhantomData,
        }
    }

    /// Builds a filter sized for `items` keys at the target false-positive rate.
    ///
    /// # Errors
    /// [`Error::InvalidFalsePositiveRate`] unless `0 < fp < 1`, [`Error::ZeroItems`] for
    /// `items == 0`, [`Error::TooLarge`] / [`Error::AllocationFailed`] if it does not fit.
    pub fn expected_items(self, items: u64) -> Result<F::Filter<S>, F::Error> {
        if !(self.fp > 0.0 && self.fp < 1.0) {
            return Err(Error::InvalidFalsePositiveRate(self.fp).into());
        }
        if items == 0 {
            return Err(Error::ZeroItems.into());
        }
        F::for_false_pos(self.fp, items, self.hasher)
    }
}

impl<F: BuildFilter> NumBitsBuilder<F> {
    /// Starts a builder for `bits` bits (rounded up to whole blocks).
    pub fn new(bits: u64) -> Self {
        Self {
            bits,
            hasher: DefaultHasher::default(),
            kind: PhantomData,
        }
    }

    /// Seeds the default hasher. Filters must share a seed to be combined.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<F: BuildFilter, S: BuildHasher> NumBitsBuilder<F, S> {
    /// Uses `hasher` instead of the default.
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> NumBitsBuilder<F, S2> {
        NumBitsBuilder {
            bits: self.bits,
            hasher,
            kind: PhantomData,
        }
    }

    /// Builds the filter with `k` probes per key.
    ///
    /// # Errors
    /// [`Error::ZeroBits`] for 0 bits, [`Error::InvalidHashCount`] for `k` outside the
    /// layout's range, [`Error::TooLarge`] / [`Error::AllocationFailed`] if it does not fit.
    pub fn hashes(self, k: u32) -> Result<F::Filter<S>, F::Error> {
        if self.bits == 0 {
            return Err(Error::ZeroBits.into());
        }
        F::for_bits_and_hashes(self.bits, k, self.hasher)
    }
}

/// The builder every filter of the workspace shares, named alike everywhere:
/// `Type::builder().expected_items(n).false_pos(p).seed(s).hasher(h).build()?`.
///
/// `expected_items` is required; `false_pos` defaults to 0.01 ([`DEFAULT_FALSE_POS`]);
/// the hasher defaults to [`DefaultHasher`] with its default seed. Validation happens in
/// [`build`](Self::build), with the same errors as [`FalsePosBuilder::expected_items`].
///
/// ```
/// use bloomforge_core::BlockedBloomFilter;
///
/// let a = BlockedBloomFilter::builder().expected_items(1000).false_pos(0.01).seed(7).build()?;
/// let b = BlockedBloomFilter::with_false_pos(0.01).seed(7).expected_items(1000)?;
/// assert_eq!(a, b);
/// # Ok::<(), bloomforge_core::Error>(())
/// ```
#[must_use = "a builder does nothing until finished with .build()"]
#[derive(Clone, Debug)]
pub struct Builder<F, S = DefaultHasher> {
    items: Option<u64>,
    fp: f64,
    hasher: S,
    kind: PhantomData<fn() -> F>,
}

/// The false-positive rate a [`Builder`] uses when none is given.
pub const DEFAULT_FALSE_POS: f64 = 0.01;

impl<F: BuildFilter> Default for Builder<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: BuildFilter> Builder<F> {
    /// A builder with no item count yet, [`DEFAULT_FALSE_POS`] and the default hasher.
    pub fn new() -> Self {
        Self {
            items: None,
            fp: DEFAULT_FALSE_POS,
            hasher: DefaultHasher::default(),
            kind: PhantomData,
        }
    }

    /// Seeds the default hasher. Filters must share a seed to be combined.
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<F: BuildFilter, S: BuildHasher> Builder<F, S> {
    /// The number of distinct keys the filter is sized for (required).
    pub fn expected_items(self, items: u64) -> Self {
        Self {
            items: Some(items),
            ..self
        }
    }

    /// The target false-positive rate at `expected_items` keys, in (0, 1).
    pub fn false_pos(self, fp: f64) -> Self {
        Self { fp, ..self }
    }

    /// Uses `hasher` instead of the default (e.g. [`KeyedHasher`](crate::KeyedHasher) for
    /// untrusted keys).
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> Builder<F, S2> {
        Builder {
            items: self.items,
            fp: self.fp,
            hasher,
            kind: PhantomData,
        }
    }

    /// Builds the filter, sized with the layout's own FP formula.
    ///
    /// # Errors
    /// [`Error::ZeroItems`] when `expected_items` was not set or is 0,
    /// [`Error::InvalidFalsePositiveRate`] unless `0 < false_pos < 1`, and the errors of
    /// the filter's sizing (too large, allocation).
    pub fn build(self) -> Result<F::Filter<S>, F::Error> {
        FalsePosBuilder::<F, S> {
            fp: self.fp,
            hasher: self.hasher,
            kind: PhantomData,
        }
        .expected_items(self.items.unwrap_or(0))
    }
}

/// The constructors every filter with a [`Builder`] has: `new(n, p)`, `builder()`,
/// `with_false_pos(p)` and the size constructor (`with_num_bits`, or `with_num_counters`
/// for counters), generated for `$T` (with the default hasher) with the type's own sizing
/// sentences. `$T` implements [`BuildFilter`].
///
/// ```ignore
/// bloomforge_core::builder_constructors! {
///     MyFilter,
///     new: " and the blocked layout",
///     false_pos: "The layout's own FP formula picks bits and probes.",
///     with_num_bits: "`bits` bits (rounded up to whole blocks)",
/// }
/// ```
#[macro_export]
macro_rules! builder_constructors {
    (
        $T:ty,
        new: $new_doc:literal,
        false_pos: $fp_doc:literal,
        $size_fn:ident: $size_doc:literal $(,)?
    ) => {
        impl $T {
            #[doc = concat!(
                "Sized for `expected_items` keys at false-positive rate `false_pos`, with the ",
                "default hasher", $new_doc, ": the same as ",
                "`Self::builder().expected_items(n).false_pos(p).build()`.\n\n",
                "# Errors\nAs `Builder::build`."
            )]
            pub fn new(
                expected_items: u64,
                false_pos: f64,
            ) -> ::core::result::Result<Self, <Self as $crate::builder::BuildFilter>::Error> {
                Self::builder()
                    .expected_items(expected_items)
                    .false_pos(false_pos)
                    .build()
            }

            /// The builder: `.expected_items(n).false_pos(p).seed(s).hasher(h).build()`.
            pub fn builder() -> $crate::builder::Builder<Self> {
                $crate::builder::Builder::new()
            }

            #[doc = concat!(
                "Starts a builder for target false-positive rate `fp`; finish with ",
                "`.expected_items(n)`. ", $fp_doc
            )]
            pub fn with_false_pos(fp: f64) -> $crate::builder::FalsePosBuilder<Self> {
                $crate::builder::FalsePosBuilder::new(fp)
            }

            #[doc = concat!("Starts a builder for ", $size_doc, "; finish with `.hashes(k)`.")]
            pub fn $size_fn(size: u64) -> $crate::builder::NumBitsBuilder<Self> {
                $crate::builder::NumBitsBuilder::new(size)
            }
        }
    };
}
