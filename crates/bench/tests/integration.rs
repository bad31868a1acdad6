//! The integration tests of `bloomforge-bench`, built as one binary: one link and one copy of the
//! generic code they instantiate, instead of one per file. Each module is one file of
//! `tests/`; run one with `cargo test -p bloomforge-bench --test integration <module>::`.

mod report_html;

mod conventions;
mod report_tiny;
mod theory_reference;
mod wrong_answer;
