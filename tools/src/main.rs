//! `bloomforge`: build, query, inspect, merge, delete from and export Bloom filters over
//! files of keys.
//!
//! ```text
//! bloomforge build --keys KEYS.txt --out F.bloom [--fp 0.01] [--items N] [--layout ...] [--seed N]
//! bloomforge query --filter F.bloom [--keys KEYS.txt] [--absent] [--count]   (keys from stdin without --keys)
//! bloomforge remove --filter F.bloom --keys KEYS.txt [--out OUT.bloom]     (counting and d-left)
//! bloomforge export --filter F.bloom --out PLAIN.bloom [--layout blocked|standard]   (counting)
//! bloomforge stats --filter F.bloom
//! bloomforge merge --out OUT.bloom A.bloom B.bloom ...
//! ```
//! Keys are lines (without the line terminator), hashed as byte strings. `--items` sizes the
//! filter for that many keys (default: the file's line count); filters merge only when built
//! with the same layout, size, FP target and seed.
//!
//! Layouts: the plain filters `blocked` (default), `split` and `standard`; the counting
//! filters `counting` (4-bit counters, blocked layout) and `counting-standard`, which
//! support `remove`, `query --count` and `export` to a plain read-only filter answering
//! identically (`counting` -> `blocked` of the same size, `counting-standard` ->
//! `standard` of a quarter of the size); and `dleft`, the d-left counting filter
//! (removable, about half the size of a counting filter, but no union: it cannot be merged
//! or exported).
//!
//! `remove` deletes one occurrence of each listed key, in place unless `--out` is given; a
//! key that is not present is listed on stderr and skipped (the filter is unchanged for
//! it). Remove only keys that were inserted: removing a false positive decrements other
//! keys' counters. `query --count` prints the count estimate (an upper bound of inserts
//! minus removes) instead of `maybe`/`absent`, or `N+` for a saturated counter: it reached
//! N, its exact value is lost and removes no longer decrement it (the key stays present).

use bloomforge_core::format::{FilterKind, Header};
use bloomforge_core::{BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter};
use bloomforge_counting::{CounterLayout, CountingBloomFilter, CountingError, COUNTER_MAX};
use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError, SATURATED};
use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;

mod ints;

const USAGE: &str = "usage:
  bloomforge build --keys FILE --out FILTER [--fp P] [--items N] [--seed N]
                   [--layout blocked|split|standard|counting|counting-standard|dleft]
  bloomforge query --filter FILTER [--keys FILE] [--absent] [--count]
  bloomforge remove --filter FILTER --keys FILE [--out FILTER]   (counting, d-left)
  bloomforge export --filter COUNTING --out FILTER [--layout blocked|standard]
  bloomforge stats --filter FILTER
  bloomforge merge --out FILTER INPUT...
  bloomforge ints contains|unique|distinct ...   (integer sets; `bloomforge ints --help`)";

/// A loaded filter of any kind.
enum AnyFilter {
    Blocked(BlockedBloomFilter),
    Split(SplitBlockBloomFilter),
    Standard(StandardBloomFilter),
    /// Either counter layout (`layout()` tells which).
    Counting(CountingBloomFilter),
    /// Boxed: the d-left filter value is several hundred bytes inline.
    DLeft(Box<DLeftCountingBloomFilter>),
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
            FilterKind::CountingBlocked | FilterKind::CountingStandard => AnyFilter::Counting(
                CountingBloomFilter::from_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?,
            ),
            FilterKind::DLeft => AnyFilter::DLeft(Box::new(
                DLeftCountingBloomFilter::from_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?,
            )),
            _ => return Err(format!("{path}: unsupported filter kind")),
        })
    }

    /// The kind's name, as `build --layout` spells it.
    fn name(&self) -> &'static str {
        match self {
            AnyFilter::Blocked(_) => "blocked",
            AnyFilter::Split(_) => "split",
            AnyFilter::Standard(_) => "standard",
            AnyFilter::Counting(f) => match f.layout() {
                CounterLayout::Blocked => "counting",
                CounterLayout::Standard => "counting-standard",
            },
            AnyFilter::DLeft(_) => "dleft",
        }
    }

    fn contains(&self, key: &[u8]) -> bool {
        match self {
            AnyFilter::Blocked(f) => f.contains(key),
            AnyFilter::Split(f) => f.contains(key),
            AnyFilter::Standard(f) => f.contains(key),
            AnyFilter::Counting(f) => f.contains(key),
            AnyFilter::DLeft(f) => f.contains(key),
        }
    }

    /// Whether the filter keeps counts (and can delete): counting and d-left filters.
    fn is_counting(&self) -> bool {
        matches!(self, AnyFilter::Counting(_) | AnyFilter::DLeft(_))
    }

    /// The count estimate as printed by `query --count` (`N+`: saturated, at least N), or
    /// `None` for a plain filter.
    fn count(&self, key: &[u8]) -> Option<String> {
        match self {
            AnyFilter::Counting(f) => Some(match f.count(key) {
                c if c >= COUNTER_MAX => format!("{c}+"),
                c => c.to_string(),
            }),
            AnyFilter::DLeft(f) => Some(match f.count(key) {
                SATURATED => format!("{}+", (1u64 << f.counter_bits()) - 1),
                c => c.to_string(),
            }),
            _ => None,
        }
    }

    /// Removes one occurrence of `key`: `Ok(true)` if removed, `Ok(false)` if it was not
    /// present (nothing changed), `Err` for a plain filter or any other failure.
    fn remove(&mut self, key: &[u8]) -> Result<bool, String> {
        match self {
            AnyFilter::Counting(f) => match f.remove(key) {
                Ok(()) => Ok(true),
                Err(CountingError::NotPresent) => Ok(false),
                Err(e) => Err(e.to_string()),
            },
            AnyFilter::DLeft(f) => match f.remove(key) {
                Ok(()) => Ok(true),
                Err(DLeftError::NotPresent) => Ok(false),
                Err(e) => Err(e.to_string()),
            },
            _ => Err("plain Bloom filters cannot delete".into()),
        }
    }

    /// Streams the serialized filter to `writer` (no in-memory copy of the filter).
    fn write_to(&self, writer: impl Write) -> Result<(), String> {
        match self {
            AnyFilter::Blocked(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Split(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Standard(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::Counting(f) => f.write_to(writer).map_err(|e| e.to_string()),
            AnyFilter::DLeft(f) => f.write_to(writer).map_err(|e| e.to_string()),
        }
    }

    fn union(&mut self, other: &AnyFilter) -> Result<(), String> {
        let r = match (self, other) {
            (AnyFilter::DLeft(_), _) | (_, AnyFilter::DLeft(_)) => {
                return Err(NO_DLEFT_MERGE.into())
            }
            (AnyFilter::Blocked(a), AnyFilter::Blocked(b)) => a.union(b),
            (AnyFilter::Split(a), AnyFilter::Split(b)) => a.union(b),
            (AnyFilter::Standard(a), AnyFilter::Standard(b)) => a.union(b),
            (AnyFilter::Counting(a), AnyFilter::Counting(b)) if a.layout() == b.layout() => {
                return a.union(b).map_err(|e| e.to_string())
            }
            (a, b) => {
                return Err(format!(
                    "cannot merge filters of different layouts ({} and {})",
                    a.name(),
                    b.name()
                ))
            }
        };
        r.map_err(|e| e.to_string())
    }

    fn memory_bits(&self) -> u64 {
        match self {
            AnyFilter::Blocked(f) => f.num_bits(),
            AnyFilter::Split(f) => f.num_bits(),
            AnyFilter::Standard(f) => f.num_bits(),
            AnyFilter::Counting(f) => f.memory_bits(),
            AnyFilter::DLeft(f) => f.memory_bits(),
        }
    }

    fn expected_false_pos(&self) -> f64 {
        match self {
            AnyFilter::Blocked(f) => f.expected_false_pos(),
            AnyFilter::Split(f) => f.expected_false_pos(),
            AnyFilter::Standard(f) => f.expected_false_pos(),
            AnyFilter::Counting(f) => f.expected_false_pos(),
            AnyFilter::DLeft(f) => f.expected_false_pos(),
        }
    }

    /// The probe parameters for the one-line summary of `build` and `export`.
    fn shape(&self) -> String {
        match self {
            AnyFilter::Blocked(f) => format!("k = {}", f.num_hashes()),
            AnyFilter::Split(f) => format!("k = {}", f.num_hashes()),
            AnyFilter::Standard(f) => format!("k = {}", f.num_hashes()),
            AnyFilter::Counting(f) => {
                format!("{} counters, k = {}", f.num_counters(), f.num_hashes())
            }
            AnyFilter::DLeft(f) => format!(
                "d = {}, {} buckets/subtable, w = {}, r = {}, c = {}",
                f.subtables(),
                f.buckets_per_subtable(),
                f.cells_per_bucket(),
                f.remainder_bits(),
                f.counter_bits()
            ),
        }
    }

    /// `stats` output: (field, value) lines.
    fn stats(&self) -> Vec<(&'static str, String)> {
        let plain = |bits: u64, k: u32, est: f64, fp: f64| {
            vec![
                ("bits", bits.to_string()),
                ("bytes", (bits / 8).to_string()),
                ("hashes", k.to_string()),
                ("estimated_keys", format!("{est:.0}")),
                ("bits_per_key", format!("{:.3}", bits as f64 / est.max(1.0))),
                ("expected_false_pos", format!("{fp:.6e}")),
            ]
        };
        let mut fields = vec![("layout", self.name().to_string())];
        fields.extend(match self {
            AnyFilter::Blocked(f) => plain(
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Split(f) => plain(
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Standard(f) => plain(
                f.num_bits(),
                f.num_hashes(),
                f.estimated_len(),
                f.expected_false_pos(),
            ),
            AnyFilter::Counting(f) => {
                let (bits, est) = (f.memory_bits(), f.estimated_len());
                vec![
                    ("counters", f.num_counters().to_string()),
                    ("bits", bits.to_string()),
                    ("bytes", (bits / 8).to_string()),
                    ("hashes", f.num_hashes().to_string()),
                    ("estimated_keys", format!("{est:.0}")),
                    ("bits_per_key", format!("{:.3}", bits as f64 / est.max(1.0))),
                    ("nonzero_counters", f.nonzero_counters().to_string()),
                    ("saturated_counters", f.saturated_counters().to_string()),
                    ("fill", format!("{:.6}", f.fill())),
                    (
                        "expected_false_pos",
                        format!("{:.6e}", f.expected_false_pos()),
                    ),
                ]
            }
            AnyFilter::DLeft(f) => {
                let bits = f.memory_bits();
                let histogram: Vec<String> =
                    f.load_histogram().iter().map(u64::to_string).collect();
                vec![
                    ("subtables", f.subtables().to_string()),
                    ("buckets_per_subtable", f.buckets_per_subtable().to_string()),
                    ("cells_per_bucket", f.cells_per_bucket().to_string()),
                    ("remainder_bits", f.remainder_bits().to_string()),
                    ("counter_bits", f.counter_bits().to_string()),
                    ("cells", f.total_cells().to_string()),
                    ("bits", bits.to_string()),
                    ("bytes", (bits / 8).to_string()),
                    ("len", f.len().to_string()),
                    ("occupied_cells", f.occupied_cells().to_string()),
                    ("saturated_cells", f.saturated_cells().to_string()),
                    (
                        "bits_per_key",
                        format!("{:.3}", bits as f64 / f.len().max(1) as f64),
                    ),
                    ("load", format!("{:.3}", f.load_for(f.len()))),
                    (
                        "expected_false_pos",
                        format!("{:.6e}", f.expected_false_pos()),
                    ),
                    // Buckets holding 0, 1, ..., w occupied cells.
                    ("load_histogram", histogram.join(",")),
                ]
            }
        });
        fields
    }
}

const NO_DLEFT_MERGE: &str = "d-left filters cannot be merged (they have no union: where a \
     fingerprint is stored depends on the other keys); build one filter from all the keys";

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
            if a == "--absent" || a == "--count" {
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

    fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    /// Refuses what `command` does not take (a misspelt `--itmes` would otherwise be
    /// ignored and the filter silently sized from the defaults).
    fn check(
        &self,
        command: &str,
        options: &[&str],
        flags: &[&str],
        positional: bool,
    ) -> Result<(), String> {
        if let Some((name, _)) = self
            .options
            .iter()
            .find(|(n, _)| !options.contains(&n.as_str()))
        {
            return Err(format!("{command} takes no option --{name}\n{USAGE}"));
        }
        if let Some(flag) = self.flags.iter().find(|f| !flags.contains(&f.as_str())) {
            return Err(format!("{command} takes no flag {flag}\n{USAGE}"));
        }
        match self.positional.first() {
            Some(arg) if !positional => {
                Err(format!("{command}: unexpected argument {arg:?}\n{USAGE}"))
            }
            _ => Ok(()),
        }
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

/// Writes a serialized filter to `path` without ever leaving a truncated filter there: an
/// existing regular file is replaced as by [`replace_filter`], a new file is written beside
/// its final name, synced, then renamed into place. Other existing paths (a device, a
/// FIFO such as `/dev/stdout`) are written directly.
fn write_filter(path: &str, filter: &AnyFilter) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => replace_filter(path, filter),
        Ok(_) => std::fs::File::create(path)
            .map_err(|e| format!("{path}: {e}"))
            .and_then(|file| filter.write_to(file).map_err(|e| format!("{path}: {e}"))),
        Err(_) => write_via_temporary(path, std::path::Path::new(path), filter, None),
    }
}

/// Replaces the filter file `path` with `filter` through a temporary file beside it, so an
/// interrupted write never leaves a truncated filter in place. A symbolic link is followed
/// (the file it names is replaced, the link stays), the file's permissions are kept, and
/// the temporary file is synced before the rename and removed on any error.
fn replace_filter(path: &str, filter: &AnyFilter) -> Result<(), String> {
    let target = std::fs::canonicalize(path).map_err(|e| format!("{path}: {e}"))?;
    let metadata = std::fs::metadata(&target).map_err(|e| format!("{path}: {e}"))?;
    if !metadata.is_file() {
        return Err(format!(
            "{path}: not a regular file, cannot be replaced in place; use --out"
        ));
    }
    write_via_temporary(path, &target, filter, Some(metadata.permissions()))
}

/// Writes `filter` to a new temporary file beside `target` (never through an existing file
/// or link: `create_new`), with `permissions` if given, syncs it and renames it to
/// `target`; on any error the temporary file is removed and `target` is untouched.
/// `shown` names the file in error messages.
fn write_via_temporary(
    shown: &str,
    target: &std::path::Path,
    filter: &AnyFilter,
    permissions: Option<std::fs::Permissions>,
) -> Result<(), String> {
    let mut tmp = target.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| format!("{}: {e}", tmp.display()))?;
    let finish = |file: std::fs::File| -> std::io::Result<()> {
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, target)
    };
    filter
        .write_to(&mut file)
        .and_then(|()| finish(file).map_err(|e| e.to_string()))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{shown}: {e}")
        })
}

fn build(args: &Args) -> Result<(), String> {
    args.check(
        "build",
        &["keys", "out", "fp", "items", "seed", "layout"],
        &[],
        false,
    )?;
    let keys_path = args.require("keys")?;
    let keys = read_keys(keys_path)?;
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
        "counting" => {
            let mut f = CountingBloomFilter::with_false_pos(fp)
                .seed(seed)
                .expected_items(n)
                .map_err(|e| e.to_string())?;
            f.insert_batch(&keys);
            AnyFilter::Counting(f)
        }
        "counting-standard" => {
            let mut f = CountingBloomFilter::standard_with_false_pos(fp)
                .seed(seed)
                .expected_items(n)
                .map_err(|e| e.to_string())?;
            f.insert_batch(&keys);
            AnyFilter::Counting(f)
        }
        "dleft" => {
            let mut f = DLeftCountingBloomFilter::with_false_pos(fp)
                .seed(seed)
                .expected_items(n)
                .map_err(|e| e.to_string())?;
            // One by one, to name the line of a key that does not fit (nothing is written).
            for (i, key) in keys.iter().enumerate() {
                f.insert(key.as_slice())
                    .map_err(|e| format!("{keys_path}:{}: {e}", i + 1))?;
            }
            AnyFilter::DLeft(Box::new(f))
        }
        other => {
            return Err(format!(
                "unknown layout {other:?} (blocked, split, standard, counting, counting-standard, dleft)"
            ))
        }
    };
    write_filter(out, &filter)?;
    let bits = filter.memory_bits();
    eprintln!(
        "{} filter: {} keys, {bits} bits ({:.2} bits/key), {}, expected FP {:.3e} -> {out}",
        filter.name(),
        keys.len(),
        bits as f64 / keys.len().max(1) as f64,
        filter.shape(),
        filter.expected_false_pos()
    );
    Ok(())
}

fn query(args: &Args) -> Result<(), String> {
    args.check(
        "query",
        &["filter", "keys"],
        &["--absent", "--count"],
        false,
    )?;
    let path = args.require("filter")?;
    let filter = AnyFilter::read(path)?;
    let absent_only = args.flag("--absent");
    let counts = args.flag("--count");
    if counts && !filter.is_counting() {
        return Err(format!(
            "{path}: --count needs a counting or d-left filter; a {} Bloom filter keeps no counts",
            filter.name()
        ));
    }
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
            // The count only when asked for: it is a second lookup.
            let mark = match counts.then(|| filter.count(key)).flatten() {
                Some(count) => count,
                None if hit => "maybe".to_string(),
                None => "absent".to_string(),
            };
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

fn remove(args: &Args) -> Result<(), String> {
    args.check("remove", &["filter", "keys", "out"], &[], false)?;
    let path = args.require("filter")?;
    let keys_path = args.require("keys")?;
    let mut filter = AnyFilter::read(path)?;
    if !filter.is_counting() {
        return Err(format!(
            "{path}: plain Bloom filters cannot delete (this is a {} filter); build with \
             --layout counting, counting-standard or dleft",
            filter.name()
        ));
    }
    let keys = read_keys(keys_path)?;
    let (mut removed, mut missing) = (0usize, 0usize);
    for (i, key) in keys.iter().enumerate() {
        if filter
            .remove(key)
            .map_err(|e| format!("{keys_path}:{}: {e}", i + 1))?
        {
            removed += 1;
        } else {
            missing += 1;
            eprintln!(
                "{keys_path}:{}: not present, skipped: {}",
                i + 1,
                String::from_utf8_lossy(key)
            );
        }
    }
    let out = match args.get("out") {
        Some(out) => {
            write_filter(out, &filter)?;
            out
        }
        None => {
            replace_filter(path, &filter)?;
            path
        }
    };
    eprintln!(
        "removed {removed} of {} keys ({missing} not present) -> {out}",
        keys.len()
    );
    Ok(())
}

fn export(args: &Args) -> Result<(), String> {
    args.check("export", &["filter", "out", "layout"], &[], false)?;
    let path = args.require("filter")?;
    let out = args.require("out")?;
    let filter = AnyFilter::read(path)?;
    let AnyFilter::Counting(f) = &filter else {
        return Err(format!(
            "{path}: export needs a counting filter (counting or counting-standard); this is a \
             {} filter{}",
            filter.name(),
            match filter {
                AnyFilter::DLeft(_) => ", whose fingerprints have no plain Bloom filter equivalent",
                _ => ", already plain",
            }
        ));
    };
    let (natural, other) = match f.layout() {
        CounterLayout::Blocked => ("blocked", "standard"),
        CounterLayout::Standard => ("standard", "blocked"),
    };
    match args.get("layout").unwrap_or(natural) {
        l if l == natural => {}
        l if l == other => {
            return Err(format!(
                "{path}: a {} filter exports to --layout {natural} only (the plain filter must \
                 place bits as the counters are placed)",
                filter.name()
            ))
        }
        l => return Err(format!("unknown export layout {l:?} (blocked, standard)")),
    }
    let plain = match f.layout() {
        CounterLayout::Blocked => {
            AnyFilter::Blocked(f.to_blocked_bloom().map_err(|e| e.to_string())?)
        }
        CounterLayout::Standard => {
            AnyFilter::Standard(f.to_standard_bloom().map_err(|e| e.to_string())?)
        }
    };
    write_filter(out, &plain)?;
    eprintln!(
        "{} filter exported from {}: {} bits, {} -> {out}",
        plain.name(),
        filter.name(),
        plain.memory_bits(),
        plain.shape()
    );
    Ok(())
}

fn stats(args: &Args) -> Result<(), String> {
    args.check("stats", &["filter"], &[], false)?;
    let path = args.require("filter")?;
    let filter = AnyFilter::read(path)?;
    let text: String = filter
        .stats()
        .into_iter()
        .map(|(name, value)| format!("{name}\t{value}\n"))
        .collect();
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}

fn merge(args: &Args) -> Result<(), String> {
    args.check("merge", &["out"], &[], true)?;
    let out = args.require("out")?;
    let (first, rest) = args
        .positional
        .split_first()
        .ok_or("merge needs at least one input filter")?;
    let mut acc = AnyFilter::read(first)?;
    if matches!(acc, AnyFilter::DLeft(_)) {
        return Err(format!("{first}: {NO_DLEFT_MERGE}"));
    }
    for path in rest {
        acc.union(&AnyFilter::read(path)?)
            .map_err(|e| format!("{path}: {e}"))?;
    }
    write_filter(out, &acc)
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = raw.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if command == "ints" {
        return ints::cli_main(rest.iter().cloned());
    }
    let result = Args::parse(rest).and_then(|args| match command.as_str() {
        "build" => build(&args),
        "query" => query(&args),
        "remove" => remove(&args),
        "export" => export(&args),
        "stats" => stats(&args),
        "merge" => merge(&args),
        // Not `println!`, which panics when stdout is a closed pipe.
        "-h" | "--help" | "help" => {
            writeln!(std::io::stdout(), "{USAGE}").map_err(|e| e.to_string())
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
