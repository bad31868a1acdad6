//! # bloomforge-stream
//!
//! Scalable, stable and attenuated Bloom filters for growing, unbounded and routed sets.
