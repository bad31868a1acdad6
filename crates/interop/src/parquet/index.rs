//! [`index_file`]: a Parquet file rewritten with bloomforge's split-block filters, its data
//! pages copied byte for byte.

use super::column::{
    find_column, hash_column, invalid, num_rows, open, parquet_error, read_sbbf, row_group_reader,
    to_sbbf, Sizing, DEFAULT_FALSE_POS,
};
use crate::error::{Error, Result};
use bloomforge_core::SplitBlockBloomFilter;
use parquet::bloom_filter::Sbbf;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::{BloomFilterPosition, WriterProperties, WriterVersion};
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::file::writer::SerializedFileWriter;
use rayon::slice::ParallelSliceMut;
use std::fmt;
use std::fs::{File, Permissions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A progress callback of [`IndexOptions::on_progress`].
pub type ProgressFn = Arc<dyn Fn(&IndexEvent<'_>) + Send + Sync>;

/// What [`index_file`] does: the columns to index, the false-positive rate, what to do
/// with filters already in the file, and an optional progress callback.
///
/// ```
/// use bloomforge_interop::parquet::IndexOptions;
/// let options = IndexOptions::new(["url", "id"]).false_pos(0.001).keep_existing(true);
/// assert_eq!(options.columns, ["url", "id"]);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct IndexOptions {
    /// The columns to index, by name (top-level columns; a name given twice counts once).
    pub columns: Vec<String>,
    /// The false-positive rate each row group's filter is sized for, from the row group's
    /// exact distinct count (default [`DEFAULT_FALSE_POS`], 1 %).
    pub false_pos: f64,
    /// Keep the filter a named column's chunk already has instead of replacing it
    /// (default `false`: named columns always get bloomforge's filter).
    pub keep_existing: bool,
    /// Called as the work advances (see [`IndexEvent`]); `None` by default.
    pub progress: Option<ProgressFn>,
}

impl IndexOptions {
    /// Indexes `columns` at the default false-positive rate, replacing their filters.
    pub fn new<I, S>(columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            columns: columns.into_iter().map(Into::into).collect(),
            false_pos: DEFAULT_FALSE_POS,
            keep_existing: false,
            progress: None,
        }
    }

    /// Sets the false-positive rate each row group's filter is sized for.
    #[must_use]
    pub fn false_pos(mut self, false_pos: f64) -> Self {
        self.false_pos = false_pos;
        self
    }

    /// Keeps filters that named columns' chunks already have.
    #[must_use]
    pub fn keep_existing(mut self, keep: bool) -> Self {
        self.keep_existing = keep;
        self
    }

    /// Sets the progress callback.
    #[must_use]
    pub fn on_progress(mut self, f: impl Fn(&IndexEvent<'_>) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

impl fmt::Debug for IndexOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexOptions")
            .field("columns", &self.columns)
            .field("false_pos", &self.false_pos)
            .field("keep_existing", &self.keep_existing)
            .field("progress", &self.progress.as_ref().map(|_| "Fn"))
            .finish()
    }
}

/// A step of [`index_file`], reported to [`IndexOptions::progress`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum IndexEvent<'a> {
    /// The temporary output file was created (it is renamed to the output on success and
    /// removed on error; a caller that may be killed can remove it on a signal).
    TempFile(&'a Path),
    /// A row group was written.
    RowGroup {
        /// Its index.
        index: usize,
        /// The number of row groups in the file.
        total: usize,
        /// Its rows.
        rows: u64,
        /// Its column chunks' compressed bytes (what was copied).
        bytes: u64,
        /// Values hashed for its filters.
        values: u64,
    },
}

/// What [`index_file`] did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct IndexReport {
    /// Row groups in the file.
    pub row_groups: usize,
    /// Rows in the file.
    pub rows: u64,
    /// One entry per named column, in the order named.
    pub columns: Vec<ColumnReport>,
    /// Filters of columns not named, carried over as they were.
    pub filters_kept: usize,
    /// The output's size in bytes.
    pub output_bytes: u64,
}

/// What [`index_file`] did for one named column.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ColumnReport {
    /// The column's name.
    pub column: String,
    /// Row groups given a bloomforge filter.
    pub row_groups_indexed: usize,
    /// Row groups whose existing filter was kept ([`IndexOptions::keep_existing`]).
    pub row_groups_kept: usize,
    /// Distinct values over the indexed row groups (each row group's exact count, summed).
    pub distinct_values: u64,
    /// Bitset bytes of the bloomforge filters written for the column.
    pub filter_bytes: u64,
    /// The mean over the indexed row groups of each filter's false-positive rate, computed
    /// from its fill (core's `expected_false_pos`): the chance that a row group not holding
    /// a value is still read for it. `0` when no row group was indexed.
    pub estimated_false_pos: f64,
    /// The largest of those rates.
    pub max_estimated_false_pos: f64,
}

/// Rewrites the Parquet file `input` as `output` with a split-block Bloom filter per row
/// group for each column of `options.columns`, built by bloomforge.
///
/// * **Data untouched.** Every column chunk's bytes are copied as they are
///   (`SerializedRowGroupWriter::append_column`): no page is decoded and re-encoded, so
///   compression, encodings, page sizes, statistics and the page indexes (column and
///   offset indexes, their offsets moved with the chunks) stay as the writer made them.
///   The schema (the input's own schema tree), row-group boundaries and row counts,
///   key-value metadata (`ARROW:schema` included), `created_by`, the format version and
///   the row groups' sorting columns (when every row group declares the same) are kept.
/// * **Filters.** For a named column, each row group's values are read with the parquet
///   crate's typed column reader, hashed as Parquet hashes them (XXH64 of the plain
///   encoding, [`bloomforge_core::parquet_hash`]), sorted and deduplicated, and a
///   [`SplitBlockBloomFilter`] sized for that exact distinct count at
///   `options.false_pos` ([`parquet_num_blocks`](super::parquet_num_blocks)) stores them.
///   Columns not named keep the filter they had (read from the input and written again);
///   named columns get bloomforge's filter unless `options.keep_existing` and the chunk
///   already has one. The filters are written after each row group, as parquet-rs writes
///   its own.
/// * **Memory.** One row group's hashes of one column at a time (8 bytes per non-null
///   value of that chunk), one batch of decoded values, and the filters of the row group
///   being written (each at most [`MAX_BITSET_BYTES`](super::MAX_BITSET_BYTES)); never
///   the file's data.
/// * **Output.** Written to a temporary file in `output`'s directory, synced, and renamed
///   to `output` only on success, with the permissions of the file it replaces (or of
///   `input`). `output` may be `input` (in place): the input is read to the end before the
///   rename replaces it. On any error the input is untouched and the temporary file
///   removed. An existing `output` that is a symbolic link is followed.
///
/// Not supported (an error): encrypted files and chunks stored in other files
/// (`file_path`).
///
/// # Errors
/// * [`Error::Io`] when a file cannot be opened, written, synced or renamed;
/// * [`Error::Parquet`] when the input is not a Parquet file (or is corrupt);
/// * [`Error::InvalidParquet`] for a column that is missing (with the file's columns),
///   nested, repeated or `BOOLEAN`, or an unreadable existing filter;
/// * [`Error::InvalidArgument`] for no columns; [`Error::Core`] for a false-positive rate
///   outside (0, 1).
pub fn index_file(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    options: &IndexOptions,
) -> Result<IndexReport> {
    let (input, output) = (input.as_ref(), output.as_ref());
    if options.columns.is_empty() {
        return Err(Error::InvalidArgument(
            "no column to index: name at least one".to_string(),
        ));
    }
    let sizing = Sizing::new(options.false_pos)?;
    let (file, reader) = open(input, true)?;
    let metadata = reader.metadata();
    let schema = metadata.file_metadata().schema_descr();
    let mut targets: Vec<usize> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for name in &options.columns {
        let index = find_column(input, schema, name)?;
        if !targets.contains(&index) {
            targets.push(index);
            names.push(name.clone());
        }
    }
    for (i, row_group) in metadata.row_groups().iter().enumerate() {
        if let Some(chunk) = row_group.columns().iter().find(|c| c.file_path().is_some()) {
            return Err(invalid(
                input,
                format!(
                    "row group {i}, column {:?} is stored in another file; such files are \
                     not supported",
                    chunk.column_path().string()
                ),
            ));
        }
    }

    let (target, permissions) = output_target(input, output)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
    if let Some(progress) = &options.progress {
        progress(&IndexEvent::TempFile(temp.path()));
    }
    let job = Job {
        input,
        file: &file,
        reader: &reader,
        metadata,
        targets: &targets,
        names: &names,
        sizing,
        options,
    };
    let out_file = temp.as_file().try_clone().map_err(|source| Error::Io {
        path: temp.path().to_path_buf(),
        source,
    })?;
    let mut report = job.write(out_file, temp.path())?;
    let io = |source| Error::Io {
        path: temp.path().to_path_buf(),
        source,
    };
    temp.as_file().set_permissions(permissions).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    report.output_bytes = temp.as_file().metadata().map_err(io)?.len();
    temp.persist(&target).map_err(|e| Error::Io {
        path: target.clone(),
        source: e.error,
    })?;
    Ok(report)
}

/// The file to write (an existing output followed through symbolic links) and the
/// permissions to give it.
fn output_target(input: &Path, output: &Path) -> Result<(PathBuf, Permissions)> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    match std::fs::metadata(output) {
        Ok(m) if m.is_file() => {
            let target = std::fs::canonicalize(output).map_err(io(output))?;
            Ok((target, m.permissions()))
        }
        Ok(_) => Err(invalid(
            output,
            "not a regular file; the output must be a file path",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let permissions = std::fs::metadata(input).map_err(io(input))?.permissions();
            Ok((output.to_path_buf(), permissions))
        }
        Err(e) => Err(io(output)(e)),
    }
}

/// The inputs of one rewrite.
struct Job<'a> {
    input: &'a Path,
    file: &'a File,
    reader: &'a SerializedFileReader<File>,
    metadata: &'a ParquetMetaData,
    targets: &'a [usize],
    names: &'a [String],
    sizing: Sizing,
    options: &'a IndexOptions,
}

impl Job<'_> {
    /// The writer's properties: everything the footer keeps from the input.
    fn properties(&self) -> WriterProperties {
        let file_metadata = self.metadata.file_metadata();
        let mut builder = WriterProperties::builder()
            .set_key_value_metadata(file_metadata.key_value_metadata().cloned())
            .set_writer_version(if file_metadata.version() >= 2 {
                WriterVersion::PARQUET_2_0
            } else {
                WriterVersion::PARQUET_1_0
            })
            .set_bloom_filter_position(BloomFilterPosition::AfterRowGroup);
        // Readers use `created_by` to work around known bugs of the writer that encoded the
        // pages and statistics, which are the input's: keep it.
        if let Some(created_by) = file_metadata.created_by() {
            builder = builder.set_created_by(created_by.to_string());
        }
        // Sorting columns are a per-row-group field that parquet-rs's writer sets for all
        // row groups at once: kept when every row group declares the same.
        let row_groups = self.metadata.row_groups();
        let sorting = row_groups
            .first()
            .and_then(|r| r.sorting_columns().cloned());
        if row_groups
            .iter()
            .all(|r| r.sorting_columns() == sorting.as_ref())
        {
            builder = builder.set_sorting_columns(sorting);
        }
        builder.build()
    }

    /// Writes the indexed file to `out` (shown as `shown` in errors).
    fn write(&self, out: File, shown: &Path) -> Result<IndexReport> {
        let input = self.input;
        let write_err = |e| parquet_error(shown, e);
        let schema = self.metadata.file_metadata().schema_descr();
        let mut writer = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, out),
            schema.root_schema_ptr(),
            Arc::new(self.properties()),
        )
        .map_err(write_err)?;
        let mut report = IndexReport {
            row_groups: self.metadata.num_row_groups(),
            rows: 0,
            columns: self
                .names
                .iter()
                .map(|name| ColumnReport {
                    column: name.clone(),
                    row_groups_indexed: 0,
                    row_groups_kept: 0,
                    distinct_values: 0,
                    filter_bytes: 0,
                    estimated_false_pos: 0.0,
                    max_estimated_false_pos: 0.0,
                })
                .collect(),
            filters_kept: 0,
            output_bytes: 0,
        };
        let column_index = self.metadata.column_index();
        let offset_index = self.metadata.offset_index();
        let mut hashes: Vec<u64> = Vec::new();
        for (rg, row_group) in self.metadata.row_groups().iter().enumerate() {
            let mut filters: Vec<Option<Sbbf>> = vec![None; row_group.num_columns()];
            let mut values = 0u64;
            // Named columns: bloomforge's filter, or the one the chunk has.
            for (slot, &col) in self.targets.iter().enumerate() {
                let chunk = row_group.column(col);
                let entry = &mut report.columns[slot];
                if self.options.keep_existing && chunk.bloom_filter_offset().is_some() {
                    filters[col] = read_sbbf(input, self.file, chunk, rg)?;
                    entry.row_groups_kept += 1;
                    continue;
                }
                hashes.clear();
                let reader = row_group_reader(input, self.reader, rg)?;
                let max_def = chunk.column_descr().max_def_level();
                hash_column(reader.as_ref(), col, max_def, &mut hashes).map_err(|e| {
                    invalid(
                        input,
                        format!(
                            "row group {rg}, column {:?}: {e}",
                            chunk.column_path().string()
                        ),
                    )
                })?;
                values += hashes.len() as u64;
                if hashes.len() >= 1 << 16 {
                    hashes.par_sort_unstable();
                } else {
                    hashes.sort_unstable();
                }
                hashes.dedup();
                let distinct = hashes.len() as u64;
                let mut filter =
                    SplitBlockBloomFilter::with_num_blocks(self.sizing.num_blocks(distinct))?;
                filter.insert_hash_batch(&hashes);
                let fp = filter.expected_false_pos();
                entry.row_groups_indexed += 1;
                entry.distinct_values += distinct;
                entry.filter_bytes += filter.num_blocks() as u64 * 32;
                entry.estimated_false_pos += fp;
                entry.max_estimated_false_pos = entry.max_estimated_false_pos.max(fp);
                filters[col] = Some(to_sbbf(&filter));
            }
            // Other columns: the filter they had.
            for (col, chunk) in row_group.columns().iter().enumerate() {
                if !self.targets.contains(&col) && chunk.bloom_filter_offset().is_some() {
                    filters[col] = read_sbbf(input, self.file, chunk, rg)?;
                    report.filters_kept += usize::from(filters[col].is_some());
                }
            }
            let rows = num_rows(row_group);
            let mut bytes = 0u64;
            let mut group = writer.next_row_group().map_err(write_err)?;
            for (col, chunk) in row_group.columns().iter().enumerate() {
                let size = u64::try_from(chunk.compressed_size()).unwrap_or(0);
                bytes += size;
                let close = ColumnCloseResult {
                    bytes_written: size,
                    rows_written: rows,
                    metadata: chunk.clone(),
                    bloom_filter: filters[col].take(),
                    column_index: column_index.and_then(|c| c.get(rg)?.get(col)).cloned(),
                    offset_index: offset_index.and_then(|o| o.get(rg)?.get(col)).cloned(),
                };
                group.append_column(self.file, close).map_err(write_err)?;
            }
            group.close().map_err(write_err)?;
            report.rows += rows;
            if let Some(progress) = &self.options.progress {
                progress(&IndexEvent::RowGroup {
                    index: rg,
                    total: report.row_groups,
                    rows,
                    bytes,
                    values,
                });
            }
        }
        let out = writer.into_inner().map_err(write_err)?;
        let mut out = out;
        out.flush().map_err(|source| Error::Io {
            path: shown.to_path_buf(),
            source,
        })?;
        for entry in &mut report.columns {
            if entry.row_groups_indexed > 0 {
                entry.estimated_false_pos /= entry.row_groups_indexed as f64;
            }
        }
        Ok(report)
    }
}
