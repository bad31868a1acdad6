//! `bloomforge diff A.txt B.txt --expected-diff D`: the lines only in A and only in B,
//! found with invertible Bloom lookup tables (`bloomforge_retrieval::Iblt`) instead of
//! sorting or holding either file.
//!
//! Pass 1 streams each file into an IBLT of its line hashes (both tables the same size
//! and seed), subtracts them and lists the difference: hashes only in A and only in B.
//! Pass 2 streams each file again and prints the lines whose hash was listed:
//!
//! ```text
//! <\tLINE    LINE is only in A
//! >\tLINE    LINE is only in B
//! ```
//! A's lines first, then B's, each in file order, each distinct line once (raw bytes, LF
//! terminated). Memory: the two tables (`Iblt::with_expected_diff(D)`:
//! `max(1.5 D, cbrt(4500 D (D - 1))) + 30` cells of 24 bytes each) and the listed hashes,
//! whatever the files' sizes.
//!
//! Lines count as multisets: a line twice in A and once in B is listed once as `<`; a line
//! whose count differs by two or more between the files cannot be listed. A difference of
//! up to D lines decodes with probability at least 99.7 % (measured); the table fills
//! near 1.22 entries a cell (about 1.2 D for large D, more for small D, whose tables are
//! larger), and beyond that, or with the repeated lines above, nothing is printed and the
//! command fails with a message asking for a larger `--expected-diff`.

use std::collections::HashSet;
use std::ffi::OsString;
use std::hash::BuildHasher;
use std::io::Write;

use bloomforge_retrieval::{Iblt, RetrievalError};

use crate::error::{CliError, Result};
use crate::input::{KeyOptions, LineReader, Source};
use crate::progress::Progress;

/// Print the lines only in A (`<\tline`) and only in B (`>\tline`) with two IBLTs.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  bloomforge diff old.txt new.txt --expected-diff 1000")]
pub(crate) struct Args {
    /// The first file (`-` for stdin is refused: it is read twice).
    a: OsString,
    /// The second file.
    b: OsString,
    /// How many lines may differ in all (only in A plus only in B); the tables list up
    /// to about this many, and the command fails clearly beyond.
    #[arg(long, value_name = "D")]
    expected_diff: usize,
    #[command(flatten)]
    key_options: KeyOptions,
}

fn table_of(source: &Source, keep_empty: bool, d: usize) -> Result<Iblt> {
    let mut t =
        Iblt::with_expected_diff(d).map_err(|e| CliError::Msg(format!("--expected-diff: {e}")))?;
    let hasher = *t.hasher();
    LineReader::open(source, keep_empty, Progress::hidden())?.for_each_line(|line, _| {
        t.insert_hash(hasher.hash_one(line));
        Ok(())
    })?;
    Ok(t)
}

fn print_listed(
    source: &Source,
    keep_empty: bool,
    hasher: &impl BuildHasher,
    mut listed: HashSet<u64>,
    mark: &[u8],
    out: &mut impl Write,
) -> Result<()> {
    LineReader::open(source, keep_empty, Progress::hidden())?.for_each_line(|line, _| {
        if !listed.is_empty() && listed.remove(&hasher.hash_one(line)) {
            let io = |e| CliError::io("stdout", e);
            out.write_all(mark).map_err(io)?;
            out.write_all(line).map_err(io)?;
            out.write_all(b"\n").map_err(io)?;
        }
        Ok(())
    })
}

/// Runs `bloomforge diff`.
pub(crate) fn run(args: Args) -> Result<()> {
    let (a, b) = (Source::from_arg(&args.a), Source::from_arg(&args.b));
    if a == Source::Stdin || b == Source::Stdin {
        return Err("diff reads each file twice: name files, not stdin".into());
    }
    let keep = args.key_options.keep_empty;
    let ta = table_of(&a, keep, args.expected_diff)?;
    let tb = table_of(&b, keep, args.expected_diff)?;
    let diff = ta.subtract(&tb).map_err(|e| CliError::Msg(e.to_string()))?;
    let (only_a, only_b) = match diff.list_entries() {
        Ok(lists) => lists,
        Err(RetrievalError::DecodeFailed { recovered, .. }) => {
            return Err(CliError::Msg(format!(
                "the difference exceeds what --expected-diff {} can decode ({recovered} lines \
                 recovered before it stalled); rerun with a larger --expected-diff",
                args.expected_diff
            )))
        }
        Err(e) => return Err(CliError::Msg(e.to_string())),
    };
    let hasher = *ta.hasher();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    print_listed(
        &a,
        keep,
        &hasher,
        only_a.into_iter().collect(),
        b"<\t",
        &mut out,
    )?;
    print_listed(
        &b,
        keep,
        &hasher,
        only_b.into_iter().collect(),
        b">\t",
        &mut out,
    )?;
    out.flush().map_err(|e| CliError::io("stdout", e))?;
    Ok(())
}
