//! The Python package `bloomforge` (module `bloomforge._bloomforge`, re-exported by
//! `python/bloomforge/__init__.py`): thin `#[pyclass]` layers over the Rust filters. No
//! filter logic lives here: keys are hashed by the `keys` module with each filter's own
//! hasher and handed to the filter's hash and batch calls; bytes are the library's format.
//! The Guava and Spark filters (`interop`) take keys as those systems funnel them
//! (`interop_keys`) and read and write those systems' bytes; `parquet` wraps the Parquet
//! retrofit of bloomforge-interop.
//!
//! Guide: <https://github.com/bloomforge/bloomforge/blob/main/docs/python.md>

#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod atomic;
mod bitmap;
mod bloom;
mod counting;
mod cuckoo;
mod dleft;
mod errors;
mod iblt;
mod interop;
mod interop_keys;
mod keys;
mod parquet;
mod retrieval;
mod shared;
mod stream;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _bloomforge(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FormatError", m.py().get_type::<errors::FormatError>())?;
    m.add_class::<bloom::BloomFilter>()?;
    m.add_class::<counting::CountingBloomFilter>()?;
    m.add_class::<cuckoo::CuckooFilter>()?;
    m.add_class::<iblt::Iblt>()?;
    m.add_class::<dleft::DLeftCountingBloomFilter>()?;
    m.add_class::<stream::ScalableBloomFilter>()?;
    m.add_class::<stream::StableBloomFilter>()?;
    m.add_class::<bitmap::Bitmap>()?;
    m.add_class::<bitmap::TwoBitmap>()?;
    m.add_class::<retrieval::BinaryFuseFilter>()?;
    m.add_class::<retrieval::XorFilter>()?;
    m.add_class::<retrieval::BloomierFilter>()?;
    m.add_class::<atomic::AtomicBloomFilter>()?;
    m.add_class::<interop::GuavaBloomFilter>()?;
    m.add_class::<interop::SparkBloomFilter>()?;
    m.add_function(wrap_pyfunction!(interop::read_foreign_filter, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::parquet_index, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::parquet_probe, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::parquet_filters, m)?)?;
    Ok(())
}
