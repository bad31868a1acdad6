//! The integration tests of `bloomforge-interop`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-interop --test integration <module>::`.

mod common;

mod fixtures;
mod parquet;
