//! The integration tests of `bloomforge-dleft`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-dleft --test integration <module>::`.

mod common;

mod backends;
mod collisions;
mod compat;
mod conventions;
mod entry_points;
mod errors;
mod fp;
mod load;
mod model;
mod persist;
mod readme;
mod sizing_table;
