//! The integration tests of `bloomforge-core`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-core --test integration <module>::`.

mod common;

mod backends;
mod compat;
mod concurrent;
mod conventions;
mod entry_points;
mod format;
mod fp;
mod parquet_compat;
mod properties;
// The `serde` feature (the module is empty without it; tools/test-all turns it on).
#[path = "serde.rs"]
mod serde_feature;
mod theory_reference;
mod view;
