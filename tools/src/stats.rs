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
            .map(|(name, value)| (name.to_string(), value.json()))
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

/// One `stats` value, typed: the text form rounds it for reading, the JSON form keeps the
/// type (integers as integers, rates at full precision, lists as arrays).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stat {
    /// A count or size.
    Int(u64),
    /// A signed integer (a seed).
    Signed(i64),
    /// A rate or ratio, shown with `digits` decimals (`scientific`: in `1.234e-5` form).
    Real {
        /// The value.
        value: f64,
        /// Decimals shown in the text form.
        digits: usize,
        /// Scientific notation in the text form.
        scientific: bool,
    },
    /// A name.
    Text(String),
    /// A list of counts (shown comma-separated).
    Ints(Vec<u64>),
}

impl Stat {
    /// A rate shown with `digits` decimals.
    pub(crate) fn fixed(value: f64, digits: usize) -> Self {
        Stat::Real {
            value,
            digits,
            scientific: false,
        }
    }

    /// A probability shown as `1.234567e-5`.
    pub(crate) fn sci(value: f64) -> Self {
        Stat::Real {
            value,
            digits: 6,
            scientific: true,
        }
    }

    /// A name or label.
    pub(crate) fn text(value: impl Into<String>) -> Self {
        Stat::Text(value.into())
    }

    /// An estimated count, rounded to the nearest integer (negative or NaN: 0).
    pub(crate) fn estimate(value: f64) -> Self {
        Stat::Int(if value.is_finite() && value > 0.0 {
            value.round() as u64
        } else {
            0
        })
    }

    /// The JSON value: a number for counts and finite rates, a string for names and for
    /// rates that JSON cannot hold (infinite, NaN), an array for lists.
    fn json(self) -> serde_json::Value {
        match self {
            Stat::Int(n) => n.into(),
            Stat::Signed(n) => n.into(),
            Stat::Real { value, .. } if value.is_finite() => value.into(),
            real @ Stat::Real { .. } => real.to_string().into(),
            Stat::Text(s) => s.into(),
            Stat::Ints(v) => v.into(),
        }
    }
}

impl From<u64> for Stat {
    fn from(n: u64) -> Self {
        Stat::Int(n)
    }
}

impl From<u32> for Stat {
    fn from(n: u32) -> Self {
        Stat::Int(u64::from(n))
    }
}

impl From<i32> for Stat {
    fn from(n: i32) -> Self {
        Stat::Signed(i64::from(n))
    }
}

impl From<usize> for Stat {
    fn from(n: usize) -> Self {
        Stat::Int(n as u64)
    }
}

impl std::fmt::Display for Stat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stat::Int(n) => write!(f, "{n}"),
            Stat::Signed(n) => write!(f, "{n}"),
            Stat::Real {
                value,
                digits,
                scientific: true,
            } => write!(f, "{value:.digits$e}"),
            Stat::Real { value, digits, .. } => write!(f, "{value:.digits$}"),
            Stat::Text(s) => f.write_str(s),
            Stat::Ints(v) => {
                let parts: Vec<String> = v.iter().map(u64::to_string).collect();
                f.write_str(&parts.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Stat;

    #[test]
    fn text_and_json_forms() {
        let cases = [
            (Stat::Int(42), "42", "42"),
            (Stat::from(-7i32), "-7", "-7"),
            (Stat::fixed(0.123_456_78, 3), "0.123", "0.12345678"),
            (Stat::sci(1.5e-5), "1.500000e-5", "0.000015"),
            (Stat::text("split"), "split", "\"split\""),
            (Stat::Ints(vec![1, 2, 3]), "1,2,3", "[1,2,3]"),
            (Stat::fixed(f64::INFINITY, 3), "inf", "\"inf\""),
            (Stat::estimate(99.6), "100", "100"),
            (Stat::estimate(f64::NAN), "0", "0"),
        ];
        for (stat, text, json) in cases {
            assert_eq!(stat.to_string(), text);
            assert_eq!(stat.json().to_string(), json);
        }
    }
}
