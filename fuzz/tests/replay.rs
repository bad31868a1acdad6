//! The fuzz targets on stable, for CI: every committed input in `seeds/<target>/`, then a
//! bounded number of inputs derived from them (bit flips, byte edits, truncations,
//! extensions, splices) and fresh random ones, from a fixed-seed generator so a failure
//! reproduces. The targets assert their invariants themselves; a violation panics and
//! fails the test, naming the case so it can be saved into `seeds/` and fuzzed further
//! with `cargo +nightly fuzz run <target> seeds/<target>`.
//!
//! `FUZZ_CASES` sets the number of derived inputs per target (default 2000: a few
//! seconds each in CI).

use std::path::{Path, PathBuf};

/// xorshift64*: a small, fixed-seed generator (reproducible cases, no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seeds(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// One derived input: a mutation of a seed (or of two, spliced), or fresh random bytes.
fn derive(rng: &mut Rng, corpus: &[(PathBuf, Vec<u8>)]) -> Vec<u8> {
    let mut data = corpus[rng.below(corpus.len())].1.clone();
    match rng.below(6) {
        0 => {
            for _ in 0..=rng.below(8) {
                if !data.is_empty() {
                    let i = rng.below(data.len());
                    data[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => {
            for _ in 0..=rng.below(4) {
                if !data.is_empty() {
                    let i = rng.below(data.len());
                    data[i] = [0, 1, 0x7F, 0x80, 0xFF][rng.below(5)];
                }
            }
        }
        2 => data.truncate(rng.below(data.len() + 1)),
        3 => {
            let extra = rng.below(64);
            data.extend((0..extra).map(|_| rng.next() as u8));
        }
        4 => {
            let other = &corpus[rng.below(corpus.len())].1;
            let cut = rng.below(data.len() + 1);
            data.truncate(cut);
            data.extend_from_slice(&other[rng.below(other.len() + 1)..]);
        }
        _ => {
            let len = rng.below(1024);
            data = (0..len).map(|_| rng.next() as u8).collect();
        }
    }
    data
}

fn replay(target: &str, run: fn(&[u8]), seed: u64) {
    let corpus = seeds(target);
    for (path, bytes) in &corpus {
        let result = std::panic::catch_unwind(|| run(bytes));
        assert!(result.is_ok(), "{target}: seed {} fails", path.display());
    }
    let cases: usize = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let mut rng = Rng(seed);
    for case in 0..cases {
        let data = derive(&mut rng, &corpus);
        let result = std::panic::catch_unwind(|| run(&data));
        assert!(
            result.is_ok(),
            "{target}: derived case {case} (seed {seed}) fails; its bytes: {data:02x?}"
        );
    }
}

#[test]
fn decode() {
    replay("decode", bloomforge_fuzz::decode::run_bytes, 0x5EED_0001);
}

#[test]
fn ops() {
    replay("ops", bloomforge_fuzz::ops::run_bytes, 0x5EED_0002);
}

#[test]
fn families() {
    replay(
        "families",
        bloomforge_fuzz::families::run_bytes,
        0x5EED_0004,
    );
}

#[test]
fn builders() {
    replay(
        "builders",
        bloomforge_fuzz::builders::run_bytes,
        0x5EED_0003,
    );
}
