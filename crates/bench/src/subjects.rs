//! The filters under test: one [`Subject`] trait over every filter, ours and peers, and
//! the types of the [`registry`](crate::registry::registry) that lists them. The rows
//! themselves live in `subjects_core` (core, counting, d-left and their peers) and one
//! `subjects_<crate>` module per other family.
//!
//! Adding a filter takes a few lines: implement [`Subject`] for it (two required
//! methods, three describing it, and whatever optional fast paths it has), write one
//! generic build function from a [`Sizing`], and add one [`Entry`] with the
//! [`entry!`](crate::entry) macro to [`registry`](crate::registry::registry).
//!
//! Every filter hashes with its own default hasher (ours: foldhash; fastbloom and
//! bloomfilter: SipHash; sbbf-rs-safe and parquet: XXH64 as the Parquet spec says; xorf:
//! the `u64` key itself, std's SipHash for strings; `HashSet`: std's SipHash), so the
//! hash cost is part of every number, as users would pay it.

use crate::theory::Prediction;
use crate::workload::BenchKey;
use crate::BenchError;

/// One filter under test, for keys of type `K`.
///
/// Loops over key slices live inside the implementations (the default methods are
/// instantiated for each implementing type), so a measurement pays one dynamic call per
/// slice, not per key.
pub trait Subject<K>: Send + Sync {
    /// Inserts every key, one call per key (the single-key path). Static filters (built
    /// from the key set by their [`BuildFn`]) do nothing here.
    fn insert_all(&mut self, keys: &[K]);

    /// Whether `key` may be present (the single-key query).
    fn contains_one(&self, key: &K) -> bool;

    /// Bits of memory the filter's table occupies.
    fn memory_bits(&self) -> u64;

    /// Probes per key, where the layout has such a number.
    fn num_hashes(&self) -> Option<u32>;

    /// Predicted false-positive rate once `n` distinct keys are in.
    fn predict(&self, n: u64) -> Prediction;

    /// How many of `keys` are reported present, by single-key queries.
    fn count_contains(&self, keys: &[K]) -> usize {
        keys.iter().map(|k| usize::from(self.contains_one(k))).sum()
    }

    /// Single-key answers into `out` (same length as `keys`).
    fn contains_each(&self, keys: &[K], out: &mut [bool]) {
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.contains_one(k);
        }
    }

    /// Batch insert; `false` if the filter has no batch path.
    fn insert_batch(&mut self, _keys: &[K]) -> bool {
        false
    }

    /// Batch query into `out`; `false` if the filter has no batch path.
    fn contains_batch(&self, _keys: &[K], _out: &mut [bool]) -> bool {
        false
    }

    /// Inserts `keys` from all threads of the current rayon pool; `false` if the filter
    /// has no concurrent insert.
    fn par_insert(&mut self, _keys: &[K]) -> bool {
        false
    }

    /// The false-positive rate of this instance computed from its own contents (e.g.
    /// block popcounts), where the filter offers it.
    fn realised_fp(&self) -> Option<f64> {
        None
    }

    /// Inserts that failed so far (a d-left table with every candidate bucket full).
    fn insert_failures(&self) -> u64 {
        0
    }

    /// Members of `members` whose looked-up value is not the one stored, for a filter
    /// that stores values (the Bloomier row's `get`); 0 for membership filters.
    fn wrong_values(&self, _members: &[K]) -> usize {
        0
    }
}

/// How to size a filter: `n` keys at a bits-per-key budget or a target false-positive
/// rate, each filter applying its own rules.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sizing {
    /// Keys that will be inserted.
    pub n: u64,
    /// The budget.
    pub target: Target,
    /// Seed for the filters that take one.
    pub seed: u64,
}

/// A sizing budget.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub enum Target {
    /// The same memory for every filter: `c` bits per key (`k` chosen best for each
    /// layout; filters that round sizes, such as parquet's power-of-two, round).
    BitsPerKey(f64),
    /// The same target false-positive rate, each filter sized by its own formula.
    FalsePos(f64),
}

impl Target {
    /// Short label (`10 bits/key`, `FP 1%`).
    pub fn label(&self) -> String {
        match *self {
            Target::BitsPerKey(c) => format!("{c} bits/key"),
            Target::FalsePos(p) => format!("target FP {}%", p * 100.0),
        }
    }
}

impl Sizing {
    /// Total bits for a bits-per-key budget (at least 64).
    pub fn bits(&self, c: f64) -> u64 {
        ((self.n as f64 * c).ceil() as u64).max(64)
    }
}

/// Where a filter comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Origin {
    /// A bloomforge filter.
    Ours,
    /// A peer crate.
    Peer,
    /// A reference point (exact set, memory floor).
    Reference,
}

/// The memory layout, which decides the theory and the plot colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Layout {
    /// `k` probes anywhere in the array.
    Standard,
    /// One 512-bit block per key.
    Blocked512,
    /// Parquet split block: 8 words of 32 bits, one bit each.
    SplitBlock256,
    /// Binary fuse filter with 8-bit fingerprints (static).
    BinaryFuse8,
    /// Binary fuse filter with 16-bit fingerprints (static).
    BinaryFuse16,
    /// Xor filter (1.23 n cells) with 8-bit fingerprints (static).
    Xor8,
    /// Xor filter with 16-bit fingerprints (static).
    Xor16,
    /// Bloomier filter: values with fingerprints in a binary fuse table (static).
    Bloomier,
    /// Count-min sketch (compact approximator) used as a membership filter.
    CountMin,
    /// An exact set.
    Exact,
    /// Counting Bloom filter.
    Counting,
    /// d-left counting Bloom filter.
    DLeft,
    /// Cuckoo filter (buckets of fingerprints).
    Cuckoo,
    /// A growing stack of Bloom filters (scalable Bloom filter).
    Scalable,
    /// Cells that count down: a filter at its stable point (stable Bloom filter).
    Stable,
    /// Random cache-line reads (the physical floor).
    Floor,
}

impl Layout {
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Standard => "standard",
            Layout::Blocked512 => "blocked-512",
            Layout::SplitBlock256 => "split-block-256",
            Layout::BinaryFuse8 => "binary-fuse-8",
            Layout::BinaryFuse16 => "binary-fuse-16",
            Layout::Xor8 => "xor-8",
            Layout::Xor16 => "xor-16",
            Layout::Bloomier => "bloomier",
            Layout::CountMin => "count-min",
            Layout::Exact => "exact",
            Layout::Counting => "counting",
            Layout::DLeft => "d-left",
            Layout::Cuckoo => "cuckoo",
            Layout::Scalable => "scalable",
            Layout::Stable => "stable",
            Layout::Floor => "floor",
        }
    }
}

/// Builds a filter for a sizing; static filters are built from the member keys here.
pub type BuildFn<K> = fn(&Sizing, &[K]) -> Result<Box<dyn Subject<K>>, BenchError>;

/// One filter in the registry.
pub struct Entry {
    /// Name used in tables and by `--only`.
    pub name: &'static str,
    /// Memory layout.
    pub layout: Layout,
    /// Ours, peer or reference.
    pub origin: Origin,
    /// Built once from the full key set (no incremental insert).
    pub is_static: bool,
    /// Hashing and configuration, for the report.
    pub notes: &'static str,
    /// Builder for `u64` keys.
    pub build_u64: BuildFn<u64>,
    /// Builder for string keys.
    pub build_str: BuildFn<String>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .field("layout", &self.layout)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// Key types the registry builds for.
pub trait RegistryKey: BenchKey {
    /// This key type's builder of `entry`.
    fn builder(entry: &Entry) -> BuildFn<Self>;
}

impl RegistryKey for u64 {
    fn builder(entry: &Entry) -> BuildFn<u64> {
        entry.build_u64
    }
}

impl RegistryKey for String {
    fn builder(entry: &Entry) -> BuildFn<String> {
        entry.build_str
    }
}

/// An [`Entry`] from a name, layout, origin, static flag, notes and a generic build
/// function `fn build<K: BenchKey>(&Sizing, &[K]) -> Result<Box<dyn Subject<K>>, _>`.
#[macro_export]
macro_rules! entry {
    ($name:expr, $layout:ident, $origin:ident, static = $static:expr, $notes:expr, $build:ident) => {
        $crate::subjects::Entry {
            name: $name,
            layout: $crate::subjects::Layout::$layout,
            origin: $crate::subjects::Origin::$origin,
            is_static: $static,
            notes: $notes,
            build_u64: $build::<u64>,
            build_str: $build::<String>,
        }
    };
}

/// The [`Subject`] impl of a filter with `insert(&key)`, `contains(&key)` and
/// `num_hashes()` (ours and the peers'): `bits` and `predict` are closures of the filter
/// (and of `n`); each flag adds methods (`batch`: `insert_batch` / `contains_batch`, `par`:
/// `par_insert_batch`, `fp`: `expected_false_pos`), and items after a `;` are added as
/// written.
macro_rules! filter_subject {
    ($Ty:ty, bits: $bits:expr, predict: $predict:expr $(, $flag:ident)* $(; $($item:tt)*)?) => {
        impl<K: BenchKey> Subject<K> for $Ty {
            fn insert_all(&mut self, keys: &[K]) {
                for k in keys {
                    self.insert(k);
                }
            }
            #[inline]
            fn contains_one(&self, key: &K) -> bool {
                self.contains(key)
            }
            fn memory_bits(&self) -> u64 {
                $crate::subjects::apply(self, $bits)
            }
            fn num_hashes(&self) -> Option<u32> {
                Some(self.num_hashes())
            }
            fn predict(&self, n: u64) -> Prediction {
                $crate::subjects::apply_n(self, n, $predict)
            }
            $($crate::subjects::filter_subject!(@$flag $Ty);)*
            $($($item)*)?
        }
    };
    (@batch $Ty:ty) => {
        fn insert_batch(&mut self, keys: &[K]) -> bool {
            <$Ty>::insert_batch(self, keys);
            true
        }
        fn contains_batch(&self, keys: &[K], out: &mut [bool]) -> bool {
            <$Ty>::contains_batch(self, keys, out).is_ok()
        }
    };
    (@par $Ty:ty) => {
        fn par_insert(&mut self, keys: &[K]) -> bool {
            self.par_insert_batch(keys);
            true
        }
    };
    (@fp $Ty:ty) => {
        fn realised_fp(&self) -> Option<f64> {
            Some(self.expected_false_pos())
        }
    };
}
pub(crate) use filter_subject;

/// `g(t)`: gives [`filter_subject!`]'s `bits` closure its argument type, so that it can
/// call the filter's methods.
#[inline(always)]
pub(crate) fn apply<T: ?Sized, R>(t: &T, g: impl FnOnce(&T) -> R) -> R {
    g(t)
}

/// `g(t, n)`, as [`apply`] for the `predict` closure.
#[inline(always)]
pub(crate) fn apply_n<T: ?Sized, R>(t: &T, n: u64, g: impl FnOnce(&T, u64) -> R) -> R {
    g(t, n)
}

/// Build functions (`fn build<K: BenchKey>(&Sizing, &[K]) -> Result<Box<dyn Subject<K>>,
/// _>`, what [`entry!`](crate::entry) takes) that box the filter `$make` gives from the
/// sizing (`$make` may use `?`).
macro_rules! boxed_builders {
    ($($name:ident(|$s:ident| $make:expr);)*) => {$(
        pub(crate) fn $name<K: BenchKey>(
            $s: &Sizing,
            _: &[K],
        ) -> Result<Box<dyn Subject<K>>, BenchError> {
            Ok(Box::new($make))
        }
    )*};
}
pub(crate) use boxed_builders;

pub(crate) fn build_err(filter: &'static str, e: impl std::fmt::Display) -> BenchError {
    BenchError::Build {
        filter,
        reason: e.to_string(),
    }
}
