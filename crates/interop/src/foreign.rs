//! Either foreign filter, recognised from its bytes.

use crate::key::Key;
use crate::{Error, GuavaBloomFilter, GuavaStrategy, Result, SparkBloomFilter, SparkVersion};
use std::fmt;
use std::str::FromStr;

/// A serialized filter format of another system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ForeignFormat {
    /// Guava's `BloomFilter.writeTo`.
    Guava,
    /// Spark's `BloomFilter.writeTo`, version 1.
    SparkV1,
    /// Spark's `BloomFilter.writeTo`, version 2.
    SparkV2,
}

impl ForeignFormat {
    /// Every format, in the order of their names.
    pub const ALL: [ForeignFormat; 3] = [
        ForeignFormat::Guava,
        ForeignFormat::SparkV1,
        ForeignFormat::SparkV2,
    ];

    /// The format's name on the command line and in SQL: `guava`, `spark-v1`, `spark-v2`.
    pub fn name(self) -> &'static str {
        match self {
            ForeignFormat::Guava => "guava",
            ForeignFormat::SparkV1 => "spark-v1",
            ForeignFormat::SparkV2 => "spark-v2",
        }
    }

    /// The format of `bytes`, told from their first bytes alone: a Spark filter starts
    /// with the `int` 1 or 2 (bytes `00 00 00 01|02`), a Guava filter with its strategy
    /// ordinal (0 or 1) and a non-zero hash count. `None` for anything else (bloomforge's
    /// own files start with their magic). Only the header is looked at: the bytes may
    /// still be truncated or corrupt.
    pub fn detect(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [0, 0, 0, 1, ..] => Some(ForeignFormat::SparkV1),
            [0, 0, 0, 2, ..] => Some(ForeignFormat::SparkV2),
            [0 | 1, k, _, ..] if *k != 0 => Some(ForeignFormat::Guava),
            _ => None,
        }
    }
}

impl fmt::Display for ForeignFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ForeignFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        ForeignFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown format {s:?} (known: guava, spark-v1, spark-v2)"
                ))
            })
    }
}

/// A Guava or Spark filter, as [`ForeignFilter::from_bytes`] finds it.
///
/// ```
/// use bloomforge_interop::{ForeignFilter, ForeignFormat, SparkBloomFilter};
/// let mut spark = SparkBloomFilter::new(100, 0.01)?;
/// spark.insert("x");
/// let f = ForeignFilter::from_bytes(&spark.to_bytes())?;
/// assert_eq!(f.format(), ForeignFormat::SparkV2);
/// assert!(f.contains("x"));
/// # Ok::<(), bloomforge_interop::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForeignFilter {
    /// Guava's filter.
    Guava(GuavaBloomFilter),
    /// Spark's filter.
    Spark(SparkBloomFilter),
}

macro_rules! each {
    ($self:expr, $f:ident => $e:expr) => {
        match $self {
            ForeignFilter::Guava($f) => $e,
            ForeignFilter::Spark($f) => $e,
        }
    };
}

impl ForeignFilter {
    /// Reads either system's bytes, recognised by [`ForeignFormat::detect`].
    ///
    /// # Errors
    /// [`Error::Format`] when the bytes are neither format, or are truncated or corrupt.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        match ForeignFormat::detect(bytes) {
            Some(ForeignFormat::Guava) => GuavaBloomFilter::from_bytes(bytes).map(Self::Guava),
            Some(_) => SparkBloomFilter::from_bytes(bytes).map(Self::Spark),
            None => Err(Error::Format {
                format: "guava or spark",
                reason: format!(
                    "the first bytes {:02x?} are neither a Spark version (00 00 00 01 or 02) nor a Guava strategy and hash count",
                    &bytes[..bytes.len().min(4)]
                ),
            }),
        }
    }

    /// Reads the bytes as `format` (no detection).
    ///
    /// # Errors
    /// [`Error::Format`] when they are not that format.
    pub fn from_bytes_as(bytes: &[u8], format: ForeignFormat) -> Result<Self> {
        let f = match format {
            ForeignFormat::Guava => Self::Guava(GuavaBloomFilter::from_bytes(bytes)?),
            _ => Self::Spark(SparkBloomFilter::from_bytes(bytes)?),
        };
        if f.format() != format {
            return Err(Error::Format {
                format: format.name(),
                reason: format!("the bytes are a {} filter", f.format()),
            });
        }
        Ok(f)
    }

    /// An empty filter of `format` sized by that system's formulas for `expected_items`
    /// at `false_pos` (Guava: `MURMUR128_MITZ_64`; Spark: seed 0).
    ///
    /// # Errors
    /// As [`GuavaBloomFilter::new`] / [`SparkBloomFilter::with_version`].
    pub fn new(format: ForeignFormat, expected_items: u64, false_pos: f64) -> Result<Self> {
        Ok(match format {
            ForeignFormat::Guava => Self::Guava(GuavaBloomFilter::new(expected_items, false_pos)?),
            ForeignFormat::SparkV1 => Self::Spark(SparkBloomFilter::with_version(
                SparkVersion::V1,
                expected_items,
                false_pos,
                0,
            )?),
            ForeignFormat::SparkV2 => Self::Spark(SparkBloomFilter::with_version(
                SparkVersion::V2,
                expected_items,
                false_pos,
                0,
            )?),
        })
    }

    /// The format.
    pub fn format(&self) -> ForeignFormat {
        match self {
            ForeignFilter::Guava(_) => ForeignFormat::Guava,
            ForeignFilter::Spark(s) => match s.version() {
                SparkVersion::V1 => ForeignFormat::SparkV1,
                SparkVersion::V2 => ForeignFormat::SparkV2,
            },
        }
    }

    /// Adds `key` as that system funnels it.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        each!(self, f => f.insert(key))
    }

    /// Whether `key` may have been added.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        each!(self, f => f.contains(key))
    }

    /// Adds every key (the batch path).
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        each!(self, f => f.insert_batch(keys))
    }

    /// Adds every key on rayon's current pool.
    pub fn par_insert_batch<K: Key + Sync>(&mut self, keys: &[K]) {
        each!(self, f => f.par_insert_batch(keys))
    }

    /// Answers for every key into `out`.
    ///
    /// # Errors
    /// `Error::Core(LengthMismatch)` when the lengths differ.
    pub fn contains_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        each!(self, f => f.contains_batch(keys, out))
    }

    /// Adds `other`'s keys.
    ///
    /// # Errors
    /// [`Error::Incompatible`] unless both are the same format and shape.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        match (self, other) {
            (ForeignFilter::Guava(a), ForeignFilter::Guava(b)) => a.union(b),
            (ForeignFilter::Spark(a), ForeignFilter::Spark(b)) => a.union(b),
            (a, b) => Err(Error::Incompatible(format!(
                "a {} and a {} filter",
                a.format(),
                b.format()
            ))),
        }
    }

    /// The number of bits.
    pub fn num_bits(&self) -> u64 {
        each!(self, f => f.num_bits())
    }

    /// The number of probes a key sets.
    pub fn num_hashes(&self) -> u32 {
        each!(self, f => f.num_hashes())
    }

    /// The number of set bits.
    pub fn count_ones(&self) -> u64 {
        each!(self, f => f.count_ones())
    }

    /// `(set bits / bits)^k`: the false-positive rate as the filter is now.
    pub fn expected_false_pos(&self) -> f64 {
        each!(self, f => f.expected_false_pos())
    }

    /// The distinct keys that best explain the set bits (an estimate).
    pub fn estimated_len(&self) -> f64 {
        each!(self, f => f.estimated_len())
    }

    /// The serialized bytes in the filter's own format.
    pub fn to_bytes(&self) -> Vec<u8> {
        each!(self, f => f.to_bytes())
    }

    /// Guava's strategy, or `None` for a Spark filter.
    pub fn guava_strategy(&self) -> Option<GuavaStrategy> {
        match self {
            ForeignFilter::Guava(g) => Some(g.strategy()),
            ForeignFilter::Spark(_) => None,
        }
    }
}
