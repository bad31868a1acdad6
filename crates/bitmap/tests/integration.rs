//! The integration tests of `bloomforge-bitmap`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-bitmap --test integration <module>::`.

mod backends;
mod compat;
mod conventions;
mod lazy;
mod model;
mod threads;
