//! The fuzz targets' checks as a library: libFuzzer runs them through the binaries in
//! `fuzz_targets/` (nightly, `cargo fuzz`), and `tests/replay.rs` runs them on stable in CI
//! over the committed corpus in `seeds/` plus a bounded number of generated inputs.
#![allow(missing_docs, clippy::all)]

pub mod builders;
pub mod decode;
pub mod families;
pub mod ops;
