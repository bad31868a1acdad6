//! The integration tests of `bloomforge-cuckoo`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-cuckoo --test integration <module>::`.

mod api;
mod compat;
mod concurrent;
mod fp;
mod load;
mod model;
mod persist;
