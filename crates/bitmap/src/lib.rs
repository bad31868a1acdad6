//! # bloomforge-bitmap
//!
//! Bitmaps and 2-bitmaps over the u32 domain: membership, distinct and exactly-once integer sets.
