//! The integration tests of `bloomforge-retrieval`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-retrieval --test integration <module>::`.

mod approx;
mod backends;
mod builders;
mod compat;
mod filters;
mod iblt;
