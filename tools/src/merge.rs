//! `merge`: the union (or, `--intersect`, the intersection) of filters built with the
//! same kind, size and seed.

use crate::error::{CliError, Result};
use crate::filter::{AnyFilter, NO_DLEFT_MERGE, NO_STABLE_MERGE};
use crate::output::write_filter;
use std::path::PathBuf;

/// Union (or intersect) filters built with the same kind, size, FP target and seed.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  bloomforge merge mon.bloom tue.bloom -o week.bloom\n  \
    bloomforge merge a.bloom b.bloom -o both.bloom --intersect"
)]
pub(crate) struct Args {
    /// The input filters.
    #[arg(value_name = "FILTER", required = true)]
    inputs: Vec<PathBuf>,
    /// The filter to write.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "OUT")]
    output: PathBuf,
    /// Intersect (a key present in every input may be present) instead of union;
    /// plain kinds only. The result's FP is at most the inputs' smallest.
    #[arg(long)]
    intersect: bool,
}

/// Runs `merge`.
pub(crate) fn run(args: Args) -> Result<()> {
    let (first, rest) = args
        .inputs
        .split_first()
        .ok_or("merge needs at least one input filter")?;
    let mut acc = AnyFilter::read(first)?;
    if matches!(acc, AnyFilter::DLeft(_)) {
        return Err(CliError::at(first.display(), NO_DLEFT_MERGE));
    }
    if matches!(acc, AnyFilter::Stable(_)) {
        return Err(CliError::at(first.display(), NO_STABLE_MERGE));
    }
    for path in rest {
        let other = AnyFilter::read(path)?;
        let r = if args.intersect {
            acc.intersect(&other)
        } else {
            acc.union(&other)
        };
        r.map_err(|e| CliError::at(path.display(), e))?;
    }
    write_filter(&args.output, &acc)
}
