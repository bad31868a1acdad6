//! Shared test helpers (deterministic key generation).
#![allow(dead_code)]

pub use bloomforge_testkit::rng::SplitMix64;
