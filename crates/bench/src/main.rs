//! `bloomforge-bench`: runs the harness and prints the markdown report.
//!
//! `cargo run --release -p bloomforge-bench -- --quick` (see `--help`).

use bloomforge_bench::{config, report, run};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cfg = match config::parse_args(std::env::args().skip(1)) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            print!("{}", config::usage());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // clap's message ends with a pointer to `--help`.
            eprint!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&cfg) {
        Ok(r) => {
            if !cfg.quiet {
                println!("{}", report::markdown(&r));
                println!(
                    "Report written to {}/ (report.html, index.md, report.md, CSV, JSON, SVG).",
                    cfg.out_dir.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
