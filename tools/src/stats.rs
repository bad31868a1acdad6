//! `stats`: a filter's parameters and fill, as `field<TAB>value` lines or JSON.

use crate::error::{CliError, Result};
use crate::filter::AnyFilter;
use std::io::Write;
use std::path::PathBuf;

/// Print a filter's parameters and fill.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  bloomforge stats urls.bloom --json")]
pub(crate) struct Args {
    /// The filter.
    #[arg(value_name = "FILTER", required_unless_present = "filter_opt")]
    filter: Option<PathBuf>,
    /// Old spelling of FILTER.
    #[arg(long = "filter", hide = true, conflicts_with = "filter")]
    filter_opt: Option<PathBuf>,
    /// One JSON object (numbers as numbers) instead of `field<TAB>value` lines.
    #[arg(long)]
    json: bool,
}

/// Runs `stats`.
pub(crate) fn run(args: Args) -> Result<()> {
    let path = args
        .filter
        .or(args.filter_opt)
        .ok_or("missing the FILTER argument")?;
    let fields = match crate::foreign::detect(&path)? {
        Some(format) => crate::foreign::stats(&crate::foreign::read(&path, Some(format))?),
        None => AnyFilter::read(&path)?.stats(),
    };
    let text = if args.json {
        let map: serde_json::Map<String, serde_json::Value> = fields
            .into_iter()
            .map(|(name, value)| {
                let v = match value.parse::<u64>() {
                    Ok(n) => serde_json::Value::from(n),
                    Err(_) => match value.parse::<f64>() {
                        Ok(x) if x.is_finite() => serde_json::Value::from(x),
                        _ => serde_json::Value::from(value),
                    },
                };
                (name.to_string(), v)
            })
            .collect();
        format!("{}\n", serde_json::Value::Object(map))
    } else {
        fields
            .into_iter()
            .map(|(name, value)| format!("{name}\t{value}\n"))
            .collect()
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::io("stdout", e))
}
