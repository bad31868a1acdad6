//! The answers every counting structure of the workspace gives: how many times a key is
//! present ([`Count`]) and what a remove did ([`RemoveOutcome`]).
//!
//! Counters are finite. When one reaches its maximum it *saturates*: it stays there for
//! good (a later decrement could make it undercount and create a false negative), so from
//! then on the structure only knows a lower bound. [`Count`] says which kind of answer a
//! count is, with one meaning in every crate (`bloomforge-counting`'s 4-bit counters
//! saturate at 15, `bloomforge-dleft`'s at `2^counter_bits - 1`).
//!
//! ```
//! use bloomforge_core::{Count, RemoveOutcome};
//!
//! assert_eq!(Count::Exact(3).get(), 3);
//! assert!(Count::AtLeast(15).is_saturated());
//! assert_eq!(Count::AtLeast(15).to_string(), "15+");
//! assert!(Count::Exact(0).is_zero());
//! assert_ne!(RemoveOutcome::Removed, RemoveOutcome::Saturated);
//! ```

use core::fmt;

/// How many times a key is present, as a counting structure can tell.
///
/// Counting filters answer with an upper bound of the true count when keys share
/// counters (false positives add), so `Exact` means "the counter holds exactly this", not
/// "the key was inserted exactly this often"; each type's docs say what its bound is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Count {
    /// The counter holds this value (`0`: the key is certainly absent).
    Exact(u64),
    /// The counter is saturated at this value: the key is present this many times or
    /// more, and removes can no longer bring it down.
    AtLeast(u64),
}

impl Count {
    /// The number: the exact value or the saturation floor.
    #[must_use]
    pub const fn get(self) -> u64 {
        match self {
            Count::Exact(n) | Count::AtLeast(n) => n,
        }
    }

    /// Whether the counter is saturated ([`Count::AtLeast`]).
    #[must_use]
    pub const fn is_saturated(self) -> bool {
        matches!(self, Count::AtLeast(_))
    }

    /// Whether the key is certainly absent (`Exact(0)`).
    #[must_use]
    pub const fn is_zero(self) -> bool {
        matches!(self, Count::Exact(0))
    }

    /// `Exact(value)` below `max`, `AtLeast(max)` at it: the answer of a counter that
    /// saturates at `max`.
    #[must_use]
    pub const fn from_counter(value: u64, max: u64) -> Self {
        if value >= max {
            Count::AtLeast(max)
        } else {
            Count::Exact(value)
        }
    }
}

impl fmt::Display for Count {
    /// `3` for an exact count, `15+` for a saturated one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Count::Exact(n) => write!(f, "{n}"),
            Count::AtLeast(n) => write!(f, "{n}+"),
        }
    }
}

/// What a successful `remove` did. (A key that is not there is an error,
/// `NotPresent`, in each crate's error type, and changes nothing.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RemoveOutcome {
    /// One occurrence was removed: every counter of the key was decremented.
    Removed,
    /// The key's counter (or one of its counters) is saturated and was left as it is: the
    /// filter's count for this key is no longer exact. Where the key has a single counter
    /// (d-left) it now answers present for good; where it has several (counting filters)
    /// it answers present as long as any of them stays above zero, so the key may still
    /// drop out once its other counters reach zero. Rebuild the filter, or use wider
    /// counters, where this matters.
    Saturated,
}

impl RemoveOutcome {
    /// Whether the key's counters were all decremented.
    #[must_use]
    pub const fn is_removed(self) -> bool {
        matches!(self, RemoveOutcome::Removed)
    }
}
