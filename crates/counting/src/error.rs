//! The error type of `bloomforge-counting`.

use crate::CounterLayout;
use core::fmt;

/// What must match for two counting filters to be combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CountingShape {
    /// Counter placement.
    pub layout: CounterLayout,
    /// Number of counters.
    pub num_counters: u64,
    /// Probes per key.
    pub num_hashes: u32,
    /// The hasher's fingerprint (see `bloomforge_core::hash::hasher_fingerprint`).
    pub hasher_fingerprint: u64,
}

impl CountingShape {
    /// What differs between two shapes, naming each parameter and both values
    /// (`"k differs (6 vs 7)"`, as core's [`FilterShape::differences`]), or `"none"`.
    ///
    /// [`FilterShape::differences`]: bloomforge_core::FilterShape::differences
    pub fn differences(&self, other: &CountingShape) -> String {
        let mut out = Vec::new();
        if self.layout != other.layout {
            out.push(format!(
                "layout differs ({} vs {})",
                self.layout, other.layout
            ));
        }
        if self.num_counters != other.num_counters {
            out.push(format!(
                "size differs ({} vs {} counters)",
                self.num_counters, other.num_counters
            ));
        }
        if self.num_hashes != other.num_hashes {
            out.push(format!(
                "k differs ({} vs {})",
                self.num_hashes, other.num_hashes
            ));
        }
        if self.hasher_fingerprint != other.hasher_fingerprint {
            out.push(format!(
                "hasher differs ({:#018x} vs {:#018x}: another seed or key)",
                self.hasher_fingerprint, other.hasher_fingerprint
            ));
        }
        if out.is_empty() {
            "none".to_string()
        } else {
            out.join(", ")
        }
    }
}

impl fmt::Display for CountingShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} layout, {} counters, {} hashes, hasher {:#018x}",
            self.layout, self.num_counters, self.num_hashes, self.hasher_fingerprint
        )
    }
}

/// Everything that can go wrong in `bloomforge-counting`. An operation that returns an
/// error leaves the filter exactly as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CountingError {
    /// `remove` of a key one of whose counters is 0: it was never inserted (or has been
    /// removed as often as inserted). Nothing was changed.
    #[error("key not present (one of its counters is 0): it was never inserted or is already removed; the filter is unchanged")]
    NotPresent,
    /// Union of filters whose layouts, sizes, probe counts or hashers differ.
    #[error("cannot merge: {}; left has {left}, right has {right}: build both with the same layout, size, hashes and hasher", left.differences(right))]
    IncompatibleFilters {
        /// Shape of `self`.
        left: CountingShape,
        /// Shape of the other operand.
        right: CountingShape,
    },
    /// An operation that exists for one layout only (an export to the matching plain
    /// filter) was called on a filter of the other layout.
    #[error("{operation} needs the {needed} layout but this filter uses the {actual} layout; call the export for its layout")]
    WrongLayout {
        /// The operation that was called.
        operation: &'static str,
        /// The layout it needs.
        needed: CounterLayout,
        /// The filter's layout.
        actual: CounterLayout,
    },
    /// Invalid counter lines passed to `from_lines`.
    #[error("invalid counter lines: {reason}")]
    InvalidLines {
        /// What is wrong with them.
        reason: &'static str,
    },
    /// An error from `bloomforge-core` (sizing, allocation, hash count, batch lengths).
    #[error(transparent)]
    Core(#[from] bloomforge_core::Error),
}

/// `?` composes up to core's error: a core error comes back as itself, any other as
/// [`bloomforge_core::Error::Filter`] (downcast it back with `SourceError::downcast_ref`).
impl From<CountingError> for bloomforge_core::Error {
    fn from(e: CountingError) -> Self {
        match e {
            CountingError::Core(core) => core,
            other => bloomforge_core::Error::Filter(bloomforge_core::SourceError::new(other)),
        }
    }
}
