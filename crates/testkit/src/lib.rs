//! # bloomforge-testkit
//!
//! The statistics bloomforge's tests and benchmark harness check filters with: the normal
//! and binomial distributions, exact binomial tests, Clopper-Pearson intervals and the
//! harness's FP-consistency check. It was `bloomforge_core::stats` until the filters'
//! public API was kept to what a filter needs; it is `publish = false` and used only as a
//! dev-dependency (and by the harness).
//!
//! Why it was kept rather than replaced by `statrs` everywhere: the core and d-left tests
//! and the harness read binomial tails far out (p-values of 1e-9 and below) and the exact
//! coverage of the harness's sample-size rule, and this code is checked against the
//! Python reference (`fp_theory.py`) to near machine precision there; rewriting those
//! tests on another library's numerics would change what they assert. The crates added
//! later (cuckoo, retrieval, stream) use `statrs`.
//!
//! ```
//! use bloomforge_testkit::stats;
//!
//! // 150 false positives among 10 000 queries at a theoretical 1 % (5 sigma): too many?
//! let p = stats::binomial_test_greater(150, 10_000, 0.01);
//! assert!(p < 1e-3);
//! let (lo, hi) = stats::clopper_pearson(100, 10_000, 1e-6);
//! assert!(lo < 0.01 && 0.01 < hi);
//! ```

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

pub mod cpu;
pub mod rng;
pub mod stats;
