//! Empty library: the Miri smoke tests live in `tests/smoke.rs`.
