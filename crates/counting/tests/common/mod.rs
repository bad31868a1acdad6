//! Helpers shared by the integration tests.
#![allow(dead_code)]

use bloomforge_counting::{CounterLine, CountingBloomFilter};

/// Every counter of the filter, in storage order (padding counters of a standard-layout
/// filter included; they are always 0).
pub fn counters<S>(f: &CountingBloomFilter<S>) -> Vec<u32> {
    f.as_lines()
        .iter()
        .flat_map(|l: &CounterLine| (0..128).map(move |c| l.counter(c)))
        .collect()
}
