//! The integration tests of `bloomforge-counting`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-counting --test integration <module>::`.

mod common;

mod api;
mod backends;
mod compat;
mod concurrency;
mod conventions;
mod distribution;
mod entry_points;
mod errors;
mod fp;
mod model;
mod persist;
mod saturation;
