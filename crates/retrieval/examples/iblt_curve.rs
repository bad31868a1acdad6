//! Decode success rate of an IBLT against cells per difference entry: for each d and
//! ratio, 2000 tables (seeds 0..2000) of `ratio * d` cells hold d random entries; prints
//! the fraction that `list_entries` decodes completely (and checks every decoded list),
//! then the same at `with_expected_diff(d)`'s size (cells and cells per entry printed).
//!
//! `cargo run --release -p bloomforge-retrieval --example iblt_curve`

use bloomforge_retrieval::Iblt;

fn main() {
    let trials = 2000u64;
    let ratios = [1.1, 1.2, 1.3, 1.4, 1.5, 1.75, 2.0];
    print!("| d \\ cells/d |");
    for r in ratios {
        print!(" {r} |");
    }
    println!(" with_expected_diff(d): cells (per entry) | its decode rate |");
    println!("|---|{}---|---|", "---|".repeat(ratios.len()));
    for d in [10usize, 30, 100, 300, 1000, 10_000] {
        print!("| {d} |");
        let mut cells_list: Vec<usize> = ratios
            .iter()
            .map(|r| (r * d as f64).ceil() as usize)
            .collect();
        let nominal = Iblt::with_expected_diff(d).unwrap().cells();
        cells_list.push(nominal);
        for (i, cells) in cells_list.into_iter().enumerate() {
            if i == ratios.len() {
                print!(" {nominal} ({:.2}) |", nominal as f64 / d as f64);
            }
            let mut ok = 0;
            for seed in 0..trials {
                let mut t = Iblt::with_cells(cells, seed).unwrap();
                let mut want: Vec<u64> = (0..d as u64)
                    .map(|i| bloomforge_core::hash::mix64(i ^ (seed << 32)))
                    .collect();
                for &h in &want {
                    t.insert_hash(h);
                }
                if let Ok((pos, neg)) = t.list_entries() {
                    want.sort_unstable();
                    assert_eq!(pos, want, "a decoded list must be exact");
                    assert!(neg.is_empty());
                    ok += 1;
                }
            }
            print!(" {:.4} |", ok as f64 / trials as f64);
        }
        println!();
    }
}
