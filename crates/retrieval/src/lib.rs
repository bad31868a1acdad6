//! # bloomforge-retrieval
//!
//! Bloomier, xor and binary fuse filters, compact approximators and invertible Bloom lookup tables.
