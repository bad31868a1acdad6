//! `gen-urls` (hidden): URL files for the benchmarks of `docs/benchmarks.md` and
//! `docs/cli.md`. Line `j` of file `f` is, for every 7th line (`j % 7 == 6`), a repeat of
//! an earlier line of the same file; otherwise the `i`-th fresh URL, `i = j - j / 7`,
//! whose id is shared by every file when `i` is even (id `i / 2`) and private to file `f`
//! when odd. So two files of N lines share about 3N/7 distinct URLs. URLs are ~64 bytes,
//! their ids hashed so that neither file is sorted.

use crate::error::Result;
use crate::output::write_file;
use bloomforge_core::hash::mix64;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Generate a URL file (benchmarks).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Number of lines.
    #[arg(long)]
    lines: u64,
    /// Which file of the family (0, 1, ...): odd fresh lines are private to it.
    #[arg(long, default_value_t = 0)]
    file: u64,
    /// Output file.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
}

fn url(id: u64, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let h = mix64(id);
    out.extend_from_slice(b"https://cdn");
    out.push(b'0' + (h % 10) as u8);
    out.extend_from_slice(b".example-shop.com/item/");
    for i in (0..16).rev() {
        out.push(HEX[((h >> (4 * i)) & 15) as usize]);
    }
    out.extend_from_slice(b"?ref=");
    let g = mix64(h);
    for i in (0..8).rev() {
        out.push(HEX[((g >> (4 * i)) & 15) as usize]);
    }
    out.push(b'\n');
}

/// The id of fresh URL `i` of file `f` (shared ids even, private odd, disjoint).
fn id_of(i: u64, f: u64) -> u64 {
    if i.is_multiple_of(2) {
        (i / 2) << 1
    } else {
        (((i / 2) << 8 | (f & 0xff)) << 1) | 1
    }
}

/// Runs `gen-urls`.
pub(crate) fn run(args: Args) -> Result<()> {
    write_file(&args.output, |file| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut line = Vec::with_capacity(80);
        let mut rng = mix64(args.file ^ 0x5eed);
        for j in 0..args.lines {
            let i = if j % 7 == 6 {
                // Repeat an earlier fresh line.
                rng = mix64(rng.wrapping_add(j));
                let fresh = j - j / 7;
                rng % fresh
            } else {
                j - j / 7
            };
            line.clear();
            url(id_of(i, args.file), &mut line);
            w.write_all(&line)?;
        }
        w.flush()
    })
}
