//! # bloomforge-cuckoo
//!
//! Cuckoo filter: deletable membership with SIMD bucket matching.
