//! `parquet`: split-block Bloom filters added to existing Parquet files (`index`), and the
//! filters of any Parquet file probed (`probe`) and listed (`filters`), through
//! `bloomforge_interop::parquet`.

use crate::error::{CliError, Result};
use crate::progress::{note, Progress};
use bloomforge_interop::parquet::{
    self as pq, ColumnFilterInfo, IndexEvent, IndexOptions, ProbeAnswer, ProbeValue,
};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The `bloomforge parquet` commands.
#[derive(clap::Subcommand)]
pub(crate) enum ParquetCommand {
    // The help texts are the argument structs' doc comments.
    Index(IndexArgs),
    Probe(ProbeArgs),
    Filters(FiltersArgs),
}

/// Add split-block Bloom filters to a Parquet file, row group by row group
///
/// Rewrites IN with a filter in each row group for every --column, the one Parquet
/// readers (DuckDB, Spark, Trino, DataFusion, Arrow) consult to skip row groups for
/// `column = value`. The data is not re-encoded: every column chunk's bytes are copied
/// as they are, so the rows, schema, row groups, compression, encodings, statistics,
/// page indexes and key-value metadata stay; only the filters are added (or replaced).
/// Filters of other columns are kept.
///
/// Each row group's filter is sized for its exact number of distinct values at --fp
/// (rounded up to a power of two, at most 128 MiB).
///
/// Memory: 8 bytes per value of one column of the largest row group, plus the filters of
/// the row group being written; never the file's data.
///
/// The output is written to a temporary file beside it and renamed into place on
/// success; on any error IN is untouched.
#[derive(clap::Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:\n  bloomforge parquet index events.parquet -o indexed.parquet --column url\n  \
    bloomforge parquet index events.parquet --in-place --column url --column user_id --fp 0.001\n  \
    bloomforge parquet probe indexed.parquet url https://example.org/"
)]
pub(crate) struct IndexArgs {
    /// The Parquet file.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The output file.
    #[arg(
        short,
        long,
        value_name = "OUT",
        required_unless_present = "in_place",
        conflicts_with = "in_place"
    )]
    output: Option<PathBuf>,
    /// Replace IN itself (through a temporary file and a rename).
    #[arg(long)]
    in_place: bool,
    /// A column to index (top-level; repeat for several).
    #[arg(short, long = "column", value_name = "NAME", required = true)]
    columns: Vec<String>,
    /// False-positive rate each row group's filter is sized for.
    #[arg(long, default_value_t = pq::DEFAULT_FALSE_POS, value_name = "P")]
    fp: f64,
    /// Keep the filter a named column's chunk already has instead of replacing it.
    #[arg(long)]
    keep_existing: bool,
}

/// Print which row groups of a Parquet file may hold a value, by their stored filters
///
/// One line per row group (`row group 3: may contain`, `absent` or `no filter`), then a
/// count. Any writer's filters are read (bloomforge's, parquet-rs's, DuckDB's, Spark's).
/// VALUE is taken as the column stores it: a string's bytes for BYTE_ARRAY, a decimal
/// integer for INT32/INT64 (refused if out of range), a number for FLOAT/DOUBLE, exactly
/// N bytes or 0x and hex digits for FIXED_LEN_BYTE_ARRAY(N) (a UUID for UUID columns).
///
/// Memory: one filter at a time. Exit status 0 whatever the answers.
#[derive(clap::Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:\n  bloomforge parquet probe indexed.parquet url https://example.org/\n  \
    bloomforge parquet probe indexed.parquet user_id 42 | tail -n 1"
)]
pub(crate) struct ProbeArgs {
    /// The Parquet file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The column.
    #[arg(value_name = "COLUMN")]
    column: String,
    /// The value.
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    value: String,
}

/// Print every column chunk of a Parquet file with its stored Bloom filter
///
/// One line per row group and column, tab-separated, after a header line: row group,
/// column, physical type, rows, filter bytes, estimated distinct values and estimated
/// false-positive rate (from the filter's fill), `-` where the chunk has no filter.
///
/// Memory: one filter at a time.
#[derive(clap::Args)]
#[command(
    verbatim_doc_comment,
    after_help = "Examples:\n  bloomforge parquet filters indexed.parquet\n  \
    bloomforge parquet filters indexed.parquet --json | jq 'select(.column == \"url\")'"
)]
pub(crate) struct FiltersArgs {
    /// The Parquet file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// One JSON object a line (numbers as numbers, `null` where there is no filter)
    /// instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs a `parquet` command.
pub(crate) fn run(command: ParquetCommand) -> Result<()> {
    match command {
        ParquetCommand::Index(a) => index(a),
        ParquetCommand::Probe(a) => probe(a),
        ParquetCommand::Filters(a) => filters(a),
    }
}

fn error(e: bloomforge_interop::Error) -> CliError {
    CliError::Msg(e.to_string())
}

fn index(args: IndexArgs) -> Result<()> {
    let output = match (&args.output, args.in_place) {
        (Some(o), false) => o.clone(),
        (None, true) => args.input.clone(),
        _ => return Err("give either -o OUT or --in-place".into()),
    };
    let total = std::fs::metadata(&args.input).ok().map(|m| m.len());
    let progress = Progress::bytes(&format!("indexing {}", args.input.display()), total);
    // The temporary output, registered for removal on Ctrl-C while it exists.
    let temp: Arc<Mutex<Option<PathBuf>>> = Arc::new(Mutex::new(None));
    let (bar, temp_seen) = (progress.clone(), temp.clone());
    let options = IndexOptions::new(args.columns.iter().cloned())
        .false_pos(args.fp)
        .keep_existing(args.keep_existing)
        .on_progress(move |event| match event {
            IndexEvent::TempFile(path) => {
                crate::cleanup::register(path);
                if let Ok(mut t) = temp_seen.lock() {
                    *t = Some(path.to_path_buf());
                }
            }
            IndexEvent::RowGroup { bytes, values, .. } => {
                bar.inc(*bytes);
                bar.inc_keys(*values);
            }
            _ => {}
        });
    let started = std::time::Instant::now();
    let result = pq::index_file(&args.input, &output, &options);
    progress.finish();
    if let Ok(Some(path)) = temp.lock().map(|t| t.clone()) {
        crate::cleanup::unregister(&path);
    }
    let report = result.map_err(error)?;
    note!(
        "{}: {} row groups, {} rows, written in {:.2} s",
        output.display(),
        report.row_groups,
        report.rows,
        started.elapsed().as_secs_f64()
    );
    for c in &report.columns {
        let kept = if c.row_groups_kept > 0 {
            format!(", {} existing kept", c.row_groups_kept)
        } else {
            String::new()
        };
        note!(
            "  {}: {} row groups indexed{kept}, {} distinct values, {} filter bytes, \
             est. FP {:.2e} (max {:.2e})",
            c.column,
            c.row_groups_indexed,
            c.distinct_values,
            c.filter_bytes,
            c.estimated_false_pos,
            c.max_estimated_false_pos
        );
    }
    if report.filters_kept > 0 {
        note!("  {} filters of other columns kept", report.filters_kept);
    }
    Ok(())
}

fn probe(args: ProbeArgs) -> Result<()> {
    let answers =
        pq::probe(&args.file, &args.column, &ProbeValue::Text(args.value)).map_err(error)?;
    let mut text = String::new();
    let (mut may, mut absent, mut none) = (0usize, 0usize, 0usize);
    for a in &answers {
        let word = match a.answer {
            ProbeAnswer::MayContain => {
                may += 1;
                "may contain"
            }
            ProbeAnswer::Absent => {
                absent += 1;
                "absent"
            }
            ProbeAnswer::NoFilter => {
                none += 1;
                "no filter"
            }
        };
        text.push_str(&format!("row group {}: {word}\n", a.row_group));
    }
    text.push_str(&format!(
        "{may} of {} row groups may contain the value ({absent} absent, {none} without a filter)\n",
        answers.len()
    ));
    write_stdout(text.as_bytes())
}

fn filters(args: FiltersArgs) -> Result<()> {
    let list = pq::filters(&args.file).map_err(error)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let result = (|| -> std::io::Result<()> {
        if !args.json {
            writeln!(
                out,
                "row_group\tcolumn\ttype\trows\tfilter_bytes\test_distinct\test_fp"
            )?;
        }
        for info in &list {
            if args.json {
                writeln!(out, "{}", json_line(info))?;
            } else {
                let (bytes, distinct, fp) = match &info.filter {
                    Some(f) => (
                        f.bitset_bytes.to_string(),
                        format!("{:.0}", f.estimated_distinct),
                        format!("{:.3e}", f.estimated_false_pos),
                    ),
                    None => ("-".into(), "-".into(), "-".into()),
                };
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{bytes}\t{distinct}\t{fp}",
                    info.row_group, info.column, info.physical_type, info.rows
                )?;
            }
        }
        out.flush()
    })();
    result.map_err(|e| CliError::io("stdout", e))
}

fn json_line(info: &ColumnFilterInfo) -> serde_json::Value {
    let f = info.filter.as_ref();
    serde_json::json!({
        "row_group": info.row_group,
        "column": info.column,
        "type": info.physical_type,
        "rows": info.rows,
        "filter_bytes": f.map(|f| f.bitset_bytes),
        "est_distinct": f.map(|f| f.estimated_distinct.round()),
        "est_fp": f.map(|f| f.estimated_false_pos),
    })
}

fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| CliError::io("stdout", e))
}
