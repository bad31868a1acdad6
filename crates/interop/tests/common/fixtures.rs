//! The fixture layout of `tests/data` (see its README): typed key files, the manifest,
//! and building a filter of ours from a manifest row. Shared by the fixture test and the
//! `write_fixtures` example (which writes the same layout for the live round trip).

use bloomforge_interop::{
    ForeignFilter, GuavaBloomFilter, GuavaStrategy, Key, KeyRef, SparkBloomFilter, SparkVersion,
};
use std::path::{Path, PathBuf};

/// The committed fixtures.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// A typed key of a key file.
#[derive(Clone, Debug)]
pub enum OwnedKey {
    /// `s:` (a string's UTF-8 bytes) or `b:` (a byte array): hashed alike.
    Bytes(Vec<u8>),
    /// `l:` a Java `long`.
    Long(i64),
}

impl Key for OwnedKey {
    fn key_ref(&self) -> KeyRef<'_> {
        match self {
            OwnedKey::Bytes(b) => KeyRef::Bytes(b),
            OwnedKey::Long(v) => KeyRef::Long(*v),
        }
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The keys of a key file.
pub fn read_keys(path: &Path) -> Vec<OwnedKey> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|line| match line.split_once(':') {
            Some(("s", hex)) => {
                let bytes = unhex(hex);
                assert!(std::str::from_utf8(&bytes).is_ok(), "{line}: not UTF-8");
                OwnedKey::Bytes(bytes)
            }
            Some(("b", hex)) => OwnedKey::Bytes(unhex(hex)),
            Some(("l", v)) => OwnedKey::Long(v.parse().expect("a long")),
            _ => panic!("{}: bad key line {line:?}", path.display()),
        })
        .collect()
}

/// One manifest row.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub system: String,
    pub version: String,
    pub expected_items: u64,
    pub fpp: f64,
    pub num_bits: u64,
    pub seed: i32,
    pub keys: String,
    pub probes: String,
}

/// The manifest's header line.
pub const HEADER: &str = "name\tsystem\tversion\texpected_items\tfpp\tnum_bits\tseed\tkeys\tprobes";

/// The rows of `dir/fixtures.tsv`.
pub fn read_manifest(dir: &Path) -> Vec<Row> {
    let path = dir.join("fixtures.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER), "{}: header", path.display());
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 9, "{l}");
            Row {
                name: f[0].into(),
                system: f[1].into(),
                version: f[2].into(),
                expected_items: f[3].parse().expect("expected_items"),
                fpp: f[4].parse().expect("fpp"),
                num_bits: f[5].parse().expect("num_bits"),
                seed: f[6].parse().expect("seed"),
                keys: f[7].into(),
                probes: f[8].into(),
            }
        })
        .collect()
}

impl Row {
    /// The manifest line of this row.
    pub fn line(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.name,
            self.system,
            self.version,
            self.expected_items,
            self.fpp,
            self.num_bits,
            self.seed,
            self.keys,
            self.probes
        )
    }

    /// An empty filter of ours with the row's parameters.
    pub fn empty_filter(&self) -> ForeignFilter {
        match (self.system.as_str(), self.version.as_str()) {
            ("guava", strategy) => {
                let strategy = match strategy {
                    "MURMUR128_MITZ_64" => GuavaStrategy::Murmur128Mitz64,
                    "MURMUR128_MITZ_32" => GuavaStrategy::Murmur128Mitz32,
                    other => panic!("unknown strategy {other}"),
                };
                ForeignFilter::Guava(
                    GuavaBloomFilter::with_strategy(self.expected_items, self.fpp, strategy)
                        .expect("guava parameters"),
                )
            }
            ("spark", v) => {
                let version = match v {
                    "1" => SparkVersion::V1,
                    "2" => SparkVersion::V2,
                    other => panic!("unknown version {other}"),
                };
                ForeignFilter::Spark(
                    SparkBloomFilter::with_version(
                        version,
                        self.expected_items,
                        self.fpp,
                        self.seed,
                    )
                    .expect("spark parameters"),
                )
            }
            (other, _) => panic!("unknown system {other}"),
        }
    }
}
