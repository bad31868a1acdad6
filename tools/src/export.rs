//! `export`: a counting filter to the plain filter that answers identically.

use crate::error::{CliError, Result};
use crate::filter::AnyFilter;
use crate::output::write_filter;
use crate::progress::note;
use bloomforge_counting::CounterLayout;
use std::path::PathBuf;

/// Convert a counting filter to the plain filter that answers identically
/// (`counting` -> `blocked` of the same size, `counting-standard` -> `standard` of a
/// quarter of the size).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  bloomforge export users-counting.bloom -o users.bloom")]
pub(crate) struct Args {
    /// The counting filter.
    #[arg(value_name = "FILTER", required_unless_present = "filter_opt")]
    filter: Option<PathBuf>,
    /// Old spelling of FILTER.
    #[arg(long = "filter", hide = true, conflicts_with = "filter")]
    filter_opt: Option<PathBuf>,
    /// The plain filter to write.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "OUT")]
    output: PathBuf,
    /// The plain kind (only the one matching the counter layout is possible).
    #[arg(long, alias = "layout", value_name = "KIND")]
    kind: Option<String>,
}

/// Runs `export`.
pub(crate) fn run(args: Args) -> Result<()> {
    let path = args
        .filter
        .or(args.filter_opt)
        .ok_or("missing the FILTER argument")?;
    let filter = AnyFilter::read(&path)?;
    let AnyFilter::Counting(f) = &filter else {
        return Err(CliError::at(
            path.display(),
            format!(
                "export needs a counting filter (counting or counting-standard); this is a \
                 {} filter{}",
                filter.name(),
                match filter {
                    AnyFilter::DLeft(_) =>
                        ", whose fingerprints have no plain Bloom filter equivalent",
                    _ => ", already plain",
                }
            ),
        ));
    };
    let (natural, other) = match f.layout() {
        CounterLayout::Blocked => ("blocked", "standard"),
        CounterLayout::Standard => ("standard", "blocked"),
    };
    match args.kind.as_deref().unwrap_or(natural) {
        l if l == natural => {}
        l if l == other => {
            return Err(CliError::at(
                path.display(),
                format!(
                    "a {} filter exports to --kind {natural} only (the plain filter must \
                     place bits as the counters are placed)",
                    filter.name()
                ),
            ))
        }
        l => {
            return Err(CliError::Msg(format!(
                "unknown export kind {l:?} (blocked, standard)"
            )))
        }
    }
    let plain = match f.layout() {
        CounterLayout::Blocked => AnyFilter::Blocked(
            f.to_blocked_bloom()
                .map_err(|e| CliError::at(path.display(), e))?,
        ),
        CounterLayout::Standard => AnyFilter::Standard(
            f.to_standard_bloom()
                .map_err(|e| CliError::at(path.display(), e))?,
        ),
    };
    write_filter(&args.output, &plain)?;
    note!(
        "{} filter exported from {}: {} bits, {} -> {}",
        plain.name(),
        filter.name(),
        plain.memory_bits(),
        plain.shape(),
        args.output.display()
    );
    Ok(())
}
