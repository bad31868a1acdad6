//! Split-block Bloom filters added to existing Parquet files, and probes of any Parquet
//! file's filters.
//!
//! A Parquet writer may store, per row group and column, a split-block Bloom filter of
//! the chunk's values, which readers (parquet-rs, DataFusion, Spark, Trino, DuckDB, Arrow
//! C++) consult to skip row groups for `column = value`. Many files have none: DuckDB
//! writes filters only for dictionary-encoded chunks (not for the high-cardinality columns
//! that need them most), Polars and PyArrow write none. [`index_file`] retrofits them:
//!
//! * it copies every column chunk's bytes as they are (no decoding, no re-encoding) and
//!   keeps the schema, row groups, compression, encodings, statistics, page indexes and
//!   key-value metadata;
//! * for each named column it reads the row group's values with the parquet crate's
//!   typed column reader, hashes them as Parquet does ([`bloomforge_core::parquet_hash`]:
//!   XXH64, seed 0, of the plain encoding) and stores a
//!   [`SplitBlockBloomFilter`](bloomforge_core::SplitBlockBloomFilter) sized for the
//!   row group's exact distinct count: bit for bit the filter a Parquet writer would have
//!   stored at that size;
//! * filters of the other columns are kept.
//!
//! [`probe`] answers, per row group, whether a value may be there ([`ProbeAnswer`]);
//! [`filters`] lists each chunk's filter, its size and its false-positive rate.
//!
//! ```
//! use bloomforge_interop::parquet::{filters, index_file, probe, IndexOptions, ProbeAnswer};
//! # use parquet::data_type::{ByteArray, ByteArrayType};
//! # use parquet::file::properties::WriterProperties;
//! # use parquet::file::writer::SerializedFileWriter;
//! # use parquet::schema::parser::parse_message_type;
//! # use std::sync::Arc;
//! let dir = tempfile::tempdir()?;
//! let (plain, indexed) = (dir.path().join("urls.parquet"), dir.path().join("indexed.parquet"));
//! # let schema = Arc::new(parse_message_type("message m { required binary url (UTF8); }")?);
//! # let mut w = SerializedFileWriter::new(
//! #     std::fs::File::create(&plain)?, schema, Arc::new(WriterProperties::default()))?;
//! # for urls in [["a.org", "b.org"], ["c.org", "d.org"]] {
//! #     let mut rg = w.next_row_group()?;
//! #     let mut col = rg.next_column()?.unwrap();
//! #     let values: Vec<ByteArray> = urls.iter().map(|u| ByteArray::from(*u)).collect();
//! #     col.typed::<ByteArrayType>().write_batch(&values, None, None)?;
//! #     col.close()?;
//! #     rg.close()?;
//! # }
//! # w.close()?;
//! // urls.parquet: two row groups of a `url` column, without filters.
//! let report = index_file(&plain, &indexed, &IndexOptions::new(["url"]).false_pos(0.01))?;
//! assert_eq!(report.columns[0].row_groups_indexed, 2);
//!
//! let answers = probe(&indexed, "url", &"c.org".into())?;
//! assert_eq!(answers[1].answer, ProbeAnswer::MayContain); // never a false negative
//! assert!(filters(&indexed)?.iter().all(|f| f.filter.is_some()));
//! assert_eq!(probe(&plain, "url", &"c.org".into())?[0].answer, ProbeAnswer::NoFilter);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Limits
//!
//! * Top-level, non-repeated columns of every physical type but `BOOLEAN`; a nested or
//!   repeated column is refused (most readers consult filters only for top-level columns).
//! * Encrypted files and column chunks stored in other files are refused.
//! * A filter is at most [`MAX_BITSET_BYTES`] (128 MiB): a row group of more than about
//!   100 million distinct values (at 1 %) gets that filter, at a false-positive rate above
//!   the target (reported).
//! * The page indexes are carried over; the per-file `sorting_columns` only when every
//!   row group declares the same (the parquet crate's writer sets them for the whole
//!   file).

mod column;
mod index;
mod inspect;

pub use column::{parquet_num_blocks, DEFAULT_FALSE_POS, MAX_BITSET_BYTES};
pub use index::{index_file, ColumnReport, IndexEvent, IndexOptions, IndexReport, ProgressFn};
pub use inspect::{
    filters, probe, ColumnFilterInfo, FilterSummary, ProbeAnswer, ProbeValue, RowGroupAnswer,
};
