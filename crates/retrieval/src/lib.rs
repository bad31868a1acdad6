//! # bloomforge-retrieval
//!
//! Bloomier, xor and binary fuse filters, compact approximators and invertible Bloom lookup
//! tables.
//!
//! ```
//! use bloomforge_retrieval::{BinaryFuseFilter, BloomierFilter};
//! let pairs: Vec<(String, u32)> = (0..1000u32).map(|i| (format!("key{i}"), i * 7)).collect();
//! let map = BloomierFilter::build(&pairs, 16, 16)?;
//! assert_eq!(map.get("key42"), Some(42 * 7));
//! let keys: Vec<&String> = pairs.iter().map(|(k, _)| k).collect();
//! let set = BinaryFuseFilter::<u8>::build(&keys, 0)?;
//! assert!(set.contains("key42"));
//! let back = BinaryFuseFilter::<u8>::from_bytes(&set.to_bytes())?;
//! assert!(back.contains("key999"));
//! # Ok::<(), bloomforge_retrieval::RetrievalError>(())
//! ```

mod approx;
mod bloomier;
mod error;
mod fuse;
mod iblt;
mod peel;

pub use approx::{
    CompactApproximator, CompactApproximatorBuilder, CountMin, Counter, Lattice, MaxLattice,
    MinLattice, SumLattice,
};
pub use bloomier::{BloomierFilter, BloomierFilterView};
pub use error::RetrievalError;
pub use fuse::{BinaryFuseFilter, BinaryFuseFilterView, Fingerprint, XorFilter, XorFilterView};
pub use iblt::{Iblt, IbltBuilder, DEFAULT_EXPECTED_DIFF};
