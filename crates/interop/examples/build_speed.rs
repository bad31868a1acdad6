//! Builds Guava and Spark (versions 1 and 2) filters of `N` URL keys
//! (`https://example.org/item/{i}`) at 1 % false positives, on one thread
//! (`insert_batch`) and on every thread (`par_insert_batch`), prints ns a key, checks the
//! two builds are the same bits, that every key is found and the false-positive rate of
//! absent keys, and writes each filter to `OUT_DIR/{format}.bin` for `tools/interop/bench`,
//! which times the real libraries on the same keys and compares their bytes.
//!
//! ```sh
//! cargo run --release -p bloomforge-interop --example build_speed -- 100000000 target/interop/bench
//! ```

use bloomforge_interop::{ForeignFilter, ForeignFormat};
use std::time::Instant;

const CHUNK: u64 = 1 << 20;
const FP: f64 = 0.01;

fn keys(start: u64, end: u64) -> Vec<String> {
    (start..end)
        .map(|i| format!("https://example.org/item/{i}"))
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().as_deref().unwrap_or("10000000").parse()?;
    let out =
        std::path::PathBuf::from(args.next().unwrap_or_else(|| "target/interop/bench".into()));
    std::fs::create_dir_all(&out)?;
    let threads = rayon::current_num_threads();
    println!("format\tbuild\tns/key");
    for format in ForeignFormat::ALL {
        let mut one = ForeignFilter::new(format, n, FP)?;
        let mut all = ForeignFilter::new(format, n, FP)?;
        let (mut t_one, mut t_all) = (0f64, 0f64);
        let mut start = 0;
        while start < n {
            let end = (start + CHUNK).min(n);
            let chunk = keys(start, end);
            let t = Instant::now();
            one.insert_batch(&chunk);
            t_one += t.elapsed().as_secs_f64();
            let t = Instant::now();
            all.par_insert_batch(&chunk);
            t_all += t.elapsed().as_secs_f64();
            start = end;
        }
        assert!(one == all, "{format}: the parallel build differs");
        // Every key is found (a sample spread over the range), and absent keys answer at
        // about the designed rate.
        let step = (n / 100_000).max(1);
        let sample: Vec<String> = (0..n)
            .step_by(step as usize)
            .map(|i| format!("https://example.org/item/{i}"))
            .collect();
        let mut found = vec![false; sample.len()];
        one.contains_batch(&sample, &mut found)?;
        assert!(found.iter().all(|&f| f), "{format}: a false negative");
        let absent = keys(n, n + 100_000);
        let mut hits = vec![false; absent.len()];
        one.contains_batch(&absent, &mut hits)?;
        let fp = hits.iter().filter(|&&h| h).count() as f64 / absent.len() as f64;
        assert!(fp < 3.0 * FP, "{format}: false-positive rate {fp}");
        println!("{format}\t1 thread\t{:.1}", t_one * 1e9 / n as f64);
        println!("{format}\t{threads} threads\t{:.1}", t_all * 1e9 / n as f64);
        println!("{format}\tfalse positives\t{fp:.4}");
        std::fs::write(out.join(format!("{format}.bin")), one.to_bytes())?;
    }
    Ok(())
}
