//! The integration tests of `bloomforge-stream`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-stream --test integration <module>::`.

mod sim;

mod attenuated;
mod compat;
mod conventions;
mod scalable;
mod stable;
