//! Writes this crate's filters in the layout of `tests/data` (see its README), built from
//! the same key files and parameters, for `tools/interop/roundtrip`, which has the real
//! Guava and Spark libraries read them, answer the probes, and compare their own bytes.
//!
//! ```sh
//! cargo run --release -p bloomforge-interop --example write_fixtures -- target/interop/ours
//! ```

#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

use fixtures::{data_dir, read_keys, read_manifest, HEADER};
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .ok_or("usage: write_fixtures OUT_DIR")?;
    let out = std::path::Path::new(&out);
    std::fs::create_dir_all(out)?;
    let data = data_dir();
    let mut manifest = std::fs::File::create(out.join("fixtures.tsv"))?;
    writeln!(manifest, "{HEADER}")?;
    for mut row in read_manifest(&data) {
        let keys = read_keys(&data.join(&row.keys));
        let probes = read_keys(&data.join(&row.probes));
        let mut f = row.empty_filter();
        f.par_insert_batch(&keys);
        let answers: String = probes
            .iter()
            .map(|k| if f.contains(k) { '1' } else { '0' })
            .collect();
        row.num_bits = f.num_bits();
        std::fs::write(out.join(format!("{}.bin", row.name)), f.to_bytes())?;
        std::fs::write(out.join(format!("{}.answers", row.name)), answers + "\n")?;
        writeln!(manifest, "{}", row.line())?;
    }
    println!("wrote {}", out.display());
    Ok(())
}
