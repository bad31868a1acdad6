//! The Bloom filters of other systems, bit for bit, and Bloom filters retrofitted into
//! existing Parquet files.
//!
//! Guide: [Guava and Spark filters][guide]; [Parquet][parquet-guide].
//!
//! [guide]: https://github.com/bloomforge/bloomforge/blob/main/docs/guide/interop.md
//! [parquet-guide]: https://github.com/bloomforge/bloomforge/blob/main/docs/parquet.md
//!
//! * [`GuavaBloomFilter`]: Guava's `com.google.common.hash.BloomFilter` (the Bloom filter
//!   of most Java services), in its `writeTo` / `readFrom` form;
//! * [`SparkBloomFilter`]: Spark's `org.apache.spark.util.sketch.BloomFilter`
//!   (`df.stat.bloomFilter`, the runtime Bloom-filter join), versions 1 and 2;
//! * [`ForeignFilter`]: either, recognised from its bytes;
//! * [`parquet`]: split-block filters added to (or replaced in) the row groups of an
//!   existing Parquet file without rewriting its data, and probes of a file's filters.
//!
//! The same parameters give the same bits as the other system: a filter built here and
//! written with `to_bytes` is read by Guava's `BloomFilter.readFrom` or Spark's
//! `BloomFilter.readFrom` and answers `mightContain` like the one it would have built, and
//! the reverse. Keys are funnelled as those systems funnel them (see [`Key`]).
//!
//! ```
//! use bloomforge_interop::GuavaBloomFilter;
//! let mut f = GuavaBloomFilter::new(1000, 0.01)?;
//! f.insert("https://example.org/");
//! f.insert(&42i64);
//! assert!(f.contains("https://example.org/"));
//! let bytes = f.to_bytes(); // what Guava's BloomFilter.writeTo writes
//! assert_eq!(GuavaBloomFilter::from_bytes(&bytes)?, f);
//! # Ok::<(), bloomforge_interop::Error>(())
//! ```
#![deny(unsafe_code)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod bits;
mod error;
mod foreign;
mod guava;
mod key;
pub mod murmur3;
pub mod parquet;
mod spark;

pub use error::{Error, Result};
pub use foreign::{ForeignFilter, ForeignFormat};
pub use guava::{GuavaBloomFilter, GuavaStrategy};
pub use key::{Key, KeyRef};
pub use spark::{SparkBloomFilter, SparkVersion, SPARK_MAX_HASHES};

/// The crate README's and the guide page's examples, compiled and run as doctests.
#[cfg(doctest)]
pub mod pages {
    #[doc = include_str!("../README.md")]
    pub struct ReadmeDoctests;
    #[doc = include_str!("../../../docs/guide/interop.md")]
    pub struct Guide;
}
