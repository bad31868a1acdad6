//! The integration tests of `bloomforge-cli`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-cli --test integration <module>::`.

mod support;

mod cli;
mod dedup;
mod diff;
mod interop;
mod ints;
mod mapped;
mod parquet;
mod readme;
mod scalable;
mod stable;
mod streaming;
