//! Guava's and Spark's filters on the command line: `build --format`, `query` and `stats`
//! of their files (recognised from the first bytes, or `--format`), and `convert`.
//! The filters are bloomforge-interop's, which reads and writes both systems' bytes
//! exactly.

use crate::error::{CliError, Result};
use crate::input::{Block, BlockStream, Source};
use crate::output::write_file;
use crate::progress::{note, Progress};
use crate::stats::Stat;
use bloomforge_interop::{ForeignFilter, ForeignFormat, KeyRef};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A filter file's format: bloomforge's own, or another system's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// bloomforge's format (every `--kind`).
    Bloomforge,
    /// Guava's `BloomFilter.writeTo` (strategy MURMUR128_MITZ_64).
    Guava,
    /// Spark's `BloomFilter.writeTo`, version 1 (Spark before 4.1).
    SparkV1,
    /// Spark's `BloomFilter.writeTo`, version 2 (Spark 4.1 and later).
    SparkV2,
}

impl Format {
    pub(crate) fn foreign(self) -> Option<ForeignFormat> {
        match self {
            Format::Bloomforge => None,
            Format::Guava => Some(ForeignFormat::Guava),
            Format::SparkV1 => Some(ForeignFormat::SparkV1),
            Format::SparkV2 => Some(ForeignFormat::SparkV2),
        }
    }

    fn of(f: ForeignFormat) -> Self {
        match f {
            ForeignFormat::Guava => Format::Guava,
            ForeignFormat::SparkV1 => Format::SparkV1,
            _ => Format::SparkV2,
        }
    }

    fn name(self) -> &'static str {
        self.foreign().map_or("bloomforge", ForeignFormat::name)
    }
}

/// How the lines of a key file are funnelled into a Guava or Spark filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum KeyType {
    /// Each line's bytes (Guava `stringFunnel(UTF_8)` / `byteArrayFunnel()`, Spark
    /// `putString` / `putBinary`).
    #[default]
    String,
    /// Each line a decimal 64-bit integer (Guava `longFunnel()`, Spark `putLong`).
    Long,
}

/// The format of the file at `path`, from its first bytes: `Some` for a Guava or Spark
/// filter, `None` for anything else (bloomforge's files start with `BLMF`).
pub(crate) fn detect(path: &Path) -> Result<Option<ForeignFormat>> {
    let mut head = [0u8; 4];
    let mut f = std::fs::File::open(path).map_err(|e| CliError::io(path, e))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]).map_err(|e| CliError::io(path, e))? {
            0 => break,
            r => n += r,
        }
    }
    if head[..n] == bloomforge_core::format::MAGIC[..n.min(4)] && n == 4 {
        return Ok(None);
    }
    Ok(ForeignFormat::detect(&head[..n]))
}

/// Reads the Guava or Spark filter at `path` (`format`: as that format, else detected).
pub(crate) fn read(path: &Path, format: Option<ForeignFormat>) -> Result<ForeignFilter> {
    let bytes = std::fs::read(path).map_err(|e| CliError::io(path, e))?;
    let r = match format {
        Some(f) => ForeignFilter::from_bytes_as(&bytes, f),
        None => ForeignFilter::from_bytes(&bytes),
    };
    r.map_err(|e| CliError::at(path.display(), e))
}

fn write(path: &Path, filter: &ForeignFilter) -> Result<()> {
    let bytes = filter.to_bytes();
    write_file(path, |f| f.write_all(&bytes))
}

/// A block's keys as the filter takes them; `long` lines parsed as `i64`.
fn with_keys<T>(
    block: &Block,
    key_type: KeyType,
    name: &str,
    f: impl FnOnce(&[KeyRef<'_>]) -> T,
) -> Result<T> {
    let keys: Vec<KeyRef<'_>> = match key_type {
        KeyType::String => block.keys().map(KeyRef::Bytes).collect(),
        KeyType::Long => {
            let mut v = Vec::with_capacity(block.len());
            for (i, k) in block.keys().enumerate() {
                let n = std::str::from_utf8(k)
                    .ok()
                    .and_then(|s| s.trim().parse::<i64>().ok())
                    .ok_or_else(|| {
                        CliError::at(
                            format!("{name}:{}", block.line_number(i)),
                            format!(
                                "{:?} is not a 64-bit integer (--key-type long)",
                                String::from_utf8_lossy(k)
                            ),
                        )
                    })?;
                v.push(KeyRef::Long(n));
            }
            v
        }
    };
    Ok(f(&keys))
}

/// `build --format guava|spark-v1|spark-v2`: the filter that system builds for
/// `expected` keys at `fp`, from every key of `sources`, with every thread.
pub(crate) fn build(
    sources: &[Source],
    output: &Path,
    format: ForeignFormat,
    expected: u64,
    fp: f64,
    key_type: KeyType,
    keep_empty: bool,
) -> Result<()> {
    let mut filter = ForeignFilter::new(format, expected, fp)
        .map_err(|e| CliError::Msg(format!("--format {format}: {e}")))?;
    let mut total = 0u64;
    for source in sources {
        let progress = Progress::bytes(&format!("inserting {}", source.name()), source.size()?);
        let mut reader = BlockStream::open(source, keep_empty, progress.clone())?;
        let mut block = Block::default();
        while reader.next_block(&mut block)? {
            with_keys(&block, key_type, reader.name(), |keys| {
                filter.par_insert_batch(keys)
            })?;
            total += block.len() as u64;
        }
        progress.finish();
    }
    write(output, &filter)?;
    note!(
        "{}: {format} filter of {} bits, {} hashes, {total} keys inserted, est. false-positive rate {:.3e}",
        output.display(),
        filter.num_bits(),
        filter.num_hashes(),
        filter.expected_false_pos()
    );
    Ok(())
}

/// `query` of a Guava or Spark filter: prints the keys that may be present (`absent`: the
/// others), in input order.
pub(crate) fn query(
    filter: &ForeignFilter,
    sources: &[Source],
    absent: bool,
    key_type: KeyType,
    keep_empty: bool,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let werr = |e: std::io::Error| CliError::io("stdout", e);
    let (mut total, mut present) = (0u64, 0u64);
    for source in sources {
        let progress = Progress::bytes(&format!("querying {}", source.name()), source.size()?);
        let mut reader = BlockStream::open(source, keep_empty, progress.clone())?;
        let mut block = Block::default();
        let mut answers = Vec::new();
        while reader.next_block(&mut block)? {
            answers.resize(block.len(), false);
            with_keys(&block, key_type, reader.name(), |keys| {
                filter.contains_batch(keys, &mut answers)
            })?
            .map_err(|e| CliError::Msg(e.to_string()))?;
            for (i, &hit) in answers.iter().enumerate() {
                present += u64::from(hit);
                if hit != absent {
                    out.write_all(block.key(i)).map_err(werr)?;
                    out.write_all(b"\n").map_err(werr)?;
                }
            }
            total += block.len() as u64;
        }
        progress.finish();
    }
    out.flush().map_err(werr)?;
    note!(
        "{present} of {total} keys may be present ({} filter)",
        filter.format()
    );
    Ok(())
}

/// `stats` of a Guava or Spark filter: (name, typed value) pairs, named as for
/// bloomforge's filters.
pub(crate) fn stats(filter: &ForeignFilter) -> Vec<(&'static str, Stat)> {
    let bits = filter.num_bits();
    let mut v = vec![
        ("format", Stat::text(filter.format().to_string())),
        ("bits", bits.into()),
        ("bytes", (bits / 8).into()),
        ("hashes", filter.num_hashes().into()),
        ("ones", filter.count_ones().into()),
        (
            "fill",
            Stat::fixed(filter.count_ones() as f64 / bits as f64, 6),
        ),
        ("estimated_keys", Stat::estimate(filter.estimated_len())),
        ("expected_false_pos", Stat::sci(filter.expected_false_pos())),
    ];
    match filter {
        ForeignFilter::Guava(g) => v.push(("strategy", Stat::text(g.strategy().name()))),
        ForeignFilter::Spark(s) => v.push(("seed", s.seed().into())),
        _ => {}
    }
    v
}

/// Convert a filter file to another format, where the bits carry over exactly.
#[derive(clap::Args)]
#[command(after_help = "\
Only conversions that keep every answer are made. A Guava or Spark file is read and written
again in the format it is (checking it and dropping nothing); between different formats the
probe positions of a key differ (Guava hashes with Murmur3_128, Spark with Murmur3_x86_32,
Spark's two versions combine the hashes differently, bloomforge uses its own hash), so the
bits of one cannot answer for the other: the command refuses and names the build that makes
the filter from the keys.

Examples:
  bloomforge convert from-spark.bin -o checked.bin --to spark-v2
  bloomforge build urls.txt -o urls.guava --format guava --expected 1000000 --fp 0.01")]
pub(crate) struct ConvertArgs {
    /// The filter to convert (bloomforge, Guava or Spark; recognised from its bytes).
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The file to write (replaced atomically).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    to: Format,
}

/// `convert`.
pub(crate) fn convert(args: ConvertArgs) -> Result<()> {
    let from = match detect(&args.input)? {
        Some(f) => Format::of(f),
        None => Format::Bloomforge,
    };
    if from != args.to {
        let rebuild = match args.to.foreign() {
            Some(f) => format!("bloomforge build KEYS -o OUT --format {f} --expected N --fp P"),
            None => "bloomforge build KEYS -o OUT --expected N --fp P".into(),
        };
        return Err(CliError::at(
            args.input.display(),
            format!(
                "a {} filter cannot be converted to {} exactly: the two hash a key to \
                 different bit positions, so these bits cannot answer for the other format; \
                 rebuild from the keys: {rebuild}",
                from.name(),
                args.to.name()
            ),
        ));
    }
    match from.foreign() {
        Some(f) => {
            let filter = read(&args.input, Some(f))?;
            write(&args.output, &filter)?;
            note!(
                "{}: {} filter of {} bits written unchanged",
                args.output.display(),
                f,
                filter.num_bits()
            );
        }
        None => {
            let filter = crate::filter::AnyFilter::read(&args.input)?;
            crate::output::write_filter(&args.output, &filter)?;
            note!(
                "{}: {} filter written unchanged",
                args.output.display(),
                filter.name()
            );
        }
    }
    Ok(())
}
