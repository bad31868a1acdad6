//! `remove`: deletes keys from a counting or d-left filter, streamed, in place (atomic
//! replace) or into `-o OUT`. Every delete goes through `AnyFilter::remove`.

use crate::error::{CliError, Result};
use crate::filter::AnyFilter;
use crate::input::{KeyOptions, LineReader};
use crate::output::{replace_filter, write_filter};
use crate::progress::{note, Progress};
use bloomforge_core::RemoveOutcome;
use std::ffi::OsString;
use std::path::PathBuf;

/// Delete keys from a counting or d-left filter (one occurrence per line).
///
/// A key that is not present is listed on stderr and skipped (the filter is unchanged
/// for it). A key whose counter is saturated (inserted more often than the counters can
/// count: 15 for counting filters, 2^counter-bits - 1 for d-left) may not come out: its
/// saturated counter is left as is, so it is listed on stderr and counted apart in the
/// summary (a d-left key then stays present for good; a counting-filter key stays while
/// any of its other counters is above zero). Remove only keys
/// that were inserted: removing a false positive decrements other keys' counters.
/// The summary line on stderr counts the three outcomes apart: "removed N of T keys,
/// saturated S (...), not present M (skipped)", where N counts only the keys whose
/// counters all went down (N + S + M = T).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  bloomforge remove users.bloom deleted.txt\n  \
    bloomforge remove users.bloom deleted.txt -o users-new.bloom"
)]
pub(crate) struct Args {
    /// The filter, then key files (`-` or none: stdin).
    #[arg(value_name = "FILTER [KEYS]", required_unless_present = "filter")]
    args: Vec<OsString>,
    /// Old spelling of FILTER.
    #[arg(long, hide = true)]
    filter: Option<PathBuf>,
    /// Old spelling of a KEYS file.
    #[arg(long = "keys", hide = true, value_name = "FILE")]
    keys_opt: Vec<OsString>,
    /// Write the result here instead of replacing FILTER.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "OUT")]
    output: Option<PathBuf>,
    #[command(flatten)]
    key_options: KeyOptions,
}

/// Runs `remove`.
pub(crate) fn run(args: Args) -> Result<()> {
    let (path, sources) =
        crate::query::filter_and_keys(&args.args, args.filter.as_ref(), &args.keys_opt)?;
    let mut filter = AnyFilter::read(&path)?;
    if matches!(filter, AnyFilter::Stable(_)) {
        return Err(CliError::at(
            path.display(),
            "a stable filter cannot delete: it forgets old keys by itself as new ones arrive",
        ));
    }
    if !filter.is_counting() {
        return Err(CliError::at(
            path.display(),
            format!(
                "plain Bloom filters cannot delete (this is a {} filter); build with --kind \
                 counting, counting-standard or dleft",
                filter.name()
            ),
        ));
    }
    let (mut removed, mut missing, mut stuck, mut total) = (0u64, 0u64, 0u64, 0u64);
    for source in &sources {
        let progress = Progress::bytes(&format!("removing {}", source.name()), source.size()?);
        let mut reader = LineReader::open(source, args.key_options.keep_empty, progress.clone())?;
        let name = reader.name().to_string();
        reader.for_each_line(|key, line| {
            total += 1;
            match filter
                .remove(key)
                .map_err(|e| CliError::Msg(format!("{name}:{line}: {e}")))?
            {
                Some(RemoveOutcome::Removed) => removed += 1,
                Some(RemoveOutcome::Saturated) => {
                    // Not counted as removed: its saturated counter did not move.
                    stuck += 1;
                    eprintln!(
                        "{name}:{line}: a saturated counter was left as is, the key may stay \
                         present: {}",
                        String::from_utf8_lossy(key)
                    );
                }
                None => {
                    missing += 1;
                    eprintln!(
                        "{name}:{line}: not present, skipped: {}",
                        String::from_utf8_lossy(key)
                    );
                }
            }
            Ok(())
        })?;
        progress.finish();
    }
    let out = match &args.output {
        Some(out) => {
            write_filter(out, &filter)?;
            out
        }
        None => {
            replace_filter(&path, &filter)?;
            &path
        }
    };
    note!(
        "removed {removed} of {total} keys, saturated {stuck} (a saturated counter left \
         unchanged: the key may stay present), not present {missing} (skipped) -> {}",
        out.display()
    );
    Ok(())
}
