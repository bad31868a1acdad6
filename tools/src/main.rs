//! `bloomforge`: build, query, inspect and merge Bloom filters over files of keys.
//!
//! ```text
//! bloomforge build --keys KEYS.txt --out F.bloom [--fp 0.01] [--items N] [--layout ...] [--seed N]
//! bloomforge query --filter F.bloom [--keys KEYS.txt] [--absent]   (keys from stdin without --keys)
//! bloomforge stats --filter F.bloom
//! bloomforge merge --out OUT.bloom A.bloom B.bloom ...
//! ```
//! Keys are lines (without the line terminator), hashed as byte strings. `--items` sizes the
//! filter for that many keys (default: the file's line count); filters merge only when built
//! with the same layout, size, FP target and seed.

use bloomforge_core::format::{FilterKind, Header};
use bloomforge_core::{BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter};
use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;

const USAGE: &str = "usage:
  bloomforge build --keys FILE --out FILTER [--fp P] [--items N] [--layout blocked|split|standard] [--seed N]
  bloomforge query --filter FILTER [--keys FILE] [--absent]
  bloomforge stats --filter FILTER
  bloomforge merge --out FILTER INPUT...";

/// A loaded filter of any kind.
enum AnyFilter {
    Blocked(BlockedBloomFilter),
    Split(SplitBlockBloomFilter),
    Standard(StandardBloomFilter),
}

impl AnyFilter {
    fn read(path: &str) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        let header = Header::parse(&bytes).map_err(|e| format!("{path}: {e}"))?;
        let wrap = |e: bloomforge_core::Error| format!("{path}: {e}");
        Ok(match header.kind {
            FilterKind::Blocked512 => {
                AnyFilter::Blocked(BlockedBloomFilter::from_bytes(&bytes).map_err(wrap)?)
            }
            FilterKind::SplitBlock256 => {
                AnyFilter::Split(SplitBlockBloomFilter::from_bytes(&bytes).map_err(wrap)?)
            }
            FilterKind::Standard => {
                AnyFilter::Standard(StandardBloomFilter::from_bytes(&bytes).map_err(wrap)?)
            }
            _ => return Err(format!("{path}: unsupported filter kind")),
        })
    }

    fn contains(&self, key: &[u8]) -> bool {
        match self {
            AnyFilter::Blocked(f) => f.contains(key),
            AnyFilter::Split(f) => f.contains(key),
            AnyFilter::Standard(f) => f.contains(key),
        }
    }

    fn to_bytes(&self) -> Vec<u8> {
        match self {
            AnyFilter::Blocked(f) => f.to_bytes(),
            AnyFilter::Split(f) => f.to_bytes(),
            AnyFilter::Standard(f) => f.to_bytes(),
        }
    }

    fn union(&mut self, other: &AnyFilter) -> Result<(), String> {
        let r = match (self, other) {
            (AnyFilter::Blocked(a), AnyFilter::Blocked(b)) => a.union(b),
            (AnyFilter::Split(a), AnyFilter::Split(b)) => a.union(b),
            (AnyFilter::Standard(a), AnyFilter::Standard(b)) => a.union(b),
            _ => return Err("cannot merge filters of different layouts".into()),
        };
        r.map_err(|e| e.to_string())
    }

    /// (layout, bits, hashes, estimated keys, expected FP)
    fn stats(&self) -> (&'static str, u64, u32, f64, f64) {
        match self {
            AnyFilter::Blocked(f) => (
                "blocked",
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Split(f) => (
                "split",
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Standard(f) => (
                "standard",
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
        }
    }
}

/// `--name value` options and positional arguments.
struct Args {
    options: Vec<(String, String)>,
    flags: Vec<String>,
    positional: Vec<String>,
}

impl Args {
    fn parse(raw: &[String]) -> Result<Args, String> {
        let mut args = Args {
            options: Vec::new(),
            flags: Vec::new(),
            positional: Vec::new(),
        };
        let mut it = raw.iter();
        while let Some(a) = it.next() {
            if a == "--absent" {
                args.flags.push(a.clone());
            } else if let Some(name) = a.strip_prefix("--") {
                let value = it.next().ok_or(format!("--{name} needs a value"))?;
                args.options.push((name.to_string(), value.clone()));
            } else {
                args.positional.push(a.clone());
            }
        }
        Ok(args)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn require(&self, name: &str) -> Result<&str, String> {
        self.get(name).ok_or(format!("missing --{name}"))
    }
}

fn read_keys(path: &str) -> Result<Vec<Vec<u8>>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut keys = Vec::new();
    for line in std::io::BufReader::new(file).split(b'\n') {
        let mut line = line.map_err(|e| format!("{path}: {e}"))?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        keys.push(line);
    }
    Ok(keys)
}

fn build(args: &Args) -> Result<(), String> {
    let keys = read_keys(args.require("keys")?)?;
    let out = args.require("out")?;
    let fp: f64 = args
        .get("fp")
        .unwrap_or("0.01")
        .parse()
        .map_err(|_| "--fp must be a number")?;
    let seed: u64 = args
        .get("seed")
        .unwrap_or("0")
        .parse()
        .map_err(|_| "--seed must be an integer")?;
    // Filters are merged only when built for the same size: --items fixes it.
    let n = match args.get("items") {
        Some(v) => v.parse().map_err(|_| "--items must be an integer")?,
        None => keys.len().max(1) as u64,
    };
    let filter = match args.get("layout").unwrap_or("blocked") {
        "blocked" => {
            let mut f = BlockedBloomFilter::with_false_pos(fp)
                .seed(seed)
                .expected_items(n)
                .map_err(|e| e.to_string())?;
            f.insert_batch(&keys);
            AnyFilter::Blocked(f)
        }
        "split" => {
            let mut f = SplitBlockBloomFilter::with_false_pos(fp)
                .seed(seed)
                .expected_items(n)
                .map_err(|e| e.to_string())?;
            f.insert_batch(&keys);
            AnyFilter::Split(f)
        }
        "standard" => {
            let mut f = StandardBloomFilter::with_false_pos(fp)
                .seed(seed)
                .expected_items(n)
                .map_err(|e| e.to_string())?;
            f.insert_batch(&keys);
            AnyFilter::Standard(f)
        }
        other => {
            return Err(format!(
                "unknown layout {other:?} (blocked, split, standard)"
            ))
        }
    };
    std::fs::write(out, filter.to_bytes()).map_err(|e| format!("{out}: {e}"))?;
    let (layout, bits, k, _, fp_now) = filter.stats();
    eprintln!("{layout} filter: {} keys, {bits} bits ({:.2} bits/key), k = {k}, expected FP {fp_now:.3e} -> {out}", keys.len(), bits as f64 / keys.len().max(1) as f64);
    Ok(())
}

fn query(args: &Args) -> Result<(), String> {
    let filter = AnyFilter::read(args.require("filter")?)?;
    let absent_only = args.flags.iter().any(|f| f == "--absent");
    let keys = match args.get("keys") {
        Some(path) => read_keys(path)?,
        None => std::io::stdin()
            .lock()
            .split(b'\n')
            .map(|l| {
                l.map(|mut l| {
                    if l.last() == Some(&b'\r') {
                        l.pop();
                    }
                    l
                })
            })
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut present = 0usize;
    for key in &keys {
        let hit = filter.contains(key);
        present += usize::from(hit);
        let shown = if absent_only { !hit } else { true };
        if shown {
            let mark = if hit { "maybe" } else { "absent" };
            out.write_all(format!("{mark}\t").as_bytes())
                .and_then(|_| out.write_all(key))
                .and_then(|_| out.write_all(b"\n"))
                .map_err(|e| e.to_string())?;
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    eprintln!("{present} of {} keys may be present", keys.len());
    Ok(())
}

fn stats(args: &Args) -> Result<(), String> {
    let path = args.require("filter")?;
    let filter = AnyFilter::read(path)?;
    let (layout, bits, k, est, fp) = filter.stats();
    println!("layout\t{layout}\nbits\t{bits}\nbytes\t{}\nhashes\t{k}\nestimated_keys\t{est:.0}\nbits_per_key\t{:.3}\nexpected_false_pos\t{fp:.6e}", bits / 8, bits as f64 / est.max(1.0));
    Ok(())
}

fn merge(args: &Args) -> Result<(), String> {
    let out = args.require("out")?;
    let (first, rest) = args
        .positional
        .split_first()
        .ok_or("merge needs at least one input filter")?;
    let mut acc = AnyFilter::read(first)?;
    for path in rest {
        acc.union(&AnyFilter::read(path)?)
            .map_err(|e| format!("{path}: {e}"))?;
    }
    std::fs::write(out, acc.to_bytes()).map_err(|e| format!("{out}: {e}"))
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = raw.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = Args::parse(rest).and_then(|args| match command.as_str() {
        "build" => build(&args),
        "query" => query(&args),
        "stats" => stats(&args),
        "merge" => merge(&args),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("bloomforge: {msg}");
            ExitCode::FAILURE
        }
    }
}
