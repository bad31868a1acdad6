//! Which SIMD backends the machine running the tests must run, from the CPU's own feature
//! flags: `/proc/cpuinfo` on Linux, read independently of std's detection, so a backend
//! that silently dropped out of a crate's detected set (a detection bug, a lost `cfg`)
//! fails a backends test instead of going untested.

/// Whether the CPU has the feature `flag` (`/proc/cpuinfo`'s spelling: `avx2`,
/// `avx512f`, `avx512bw`, `avx512vbmi`, ...): from `/proc/cpuinfo` on Linux, else std's
/// detection (x86-64 only; `false` for a flag it does not know).
pub fn cpu_has(flag: &str) -> bool {
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        if let Some(line) = info.lines().find(|l| l.starts_with("flags")) {
            return line.split_whitespace().any(|f| f == flag);
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        match flag {
            "avx2" => return std::is_x86_feature_detected!("avx2"),
            "avx512f" => return std::is_x86_feature_detected!("avx512f"),
            "avx512bw" => return std::is_x86_feature_detected!("avx512bw"),
            "avx512vl" => return std::is_x86_feature_detected!("avx512vl"),
            "avx512dq" => return std::is_x86_feature_detected!("avx512dq"),
            "avx512vbmi" => return std::is_x86_feature_detected!("avx512vbmi"),
            "avx512_bitalg" => return std::is_x86_feature_detected!("avx512bitalg"),
            "avx512_vpopcntdq" => return std::is_x86_feature_detected!("avx512vpopcntdq"),
            "bmi1" => return std::is_x86_feature_detected!("bmi1"),
            "bmi2" => return std::is_x86_feature_detected!("bmi2"),
            "popcnt" => return std::is_x86_feature_detected!("popcnt"),
            _ => {}
        }
    }
    false
}

/// Whether the machine running the tests must run a backend that needs every flag of
/// `flags`: always for none; otherwise only on x86-64, outside Miri, with every flag.
pub fn cpu_runs(flags: &[&str]) -> bool {
    flags.is_empty()
        || (cfg!(target_arch = "x86_64") && !cfg!(miri) && flags.iter().all(|f| cpu_has(f)))
}

/// Writes `line` to the test run's stderr, visible even when the test passes: the test
/// harness captures `println!` and `eprintln!`, not writes to the stderr handle. For the
/// one line a backends test prints per backend it could not run.
pub fn report(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Every CPU feature a `#[target_feature(enable = "...")]` of the `.rs` files directly in
/// `dirs` enables, or a `kernels { .. }` table of core's `dispatch_kernels!` lists (the
/// features its wrappers are compiled with), with its file, in `/proc/cpuinfo`'s spelling
/// (`avx512bitalg` is `avx512_bitalg` there, `avx512vpopcntdq` `avx512_vpopcntdq`): what a
/// crate's table of the flags each backend needs must list. Comment lines are skipped.
///
/// # Panics
/// When a directory cannot be read, or when no attribute is found (a moved source tree
/// would otherwise pass the check with nothing checked).
pub fn target_features(dirs: &[std::path::PathBuf]) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            let code: String = text
                .lines()
                .map(str::trim_start)
                .filter(|l| !l.starts_with("//"))
                .flat_map(|l| ["\n", l])
                .collect();
            let mut flags = Vec::new();
            for part in code.split("target_feature(enable = \"").skip(1) {
                let list = &part[..part.find('"').expect("a closing quote")];
                flags.extend(list.split(',').map(str::trim));
            }
            for table in code.split("\nkernels {").skip(1) {
                let table = &table[..table.find('}').expect("a closing brace")];
                for list in table.split('[').skip(1) {
                    let list = &list[..list.find(']').expect("a closing bracket")];
                    // Quoted names only (the macro's own pattern has none).
                    flags.extend(
                        list.split(',')
                            .map(str::trim)
                            .filter_map(|f| f.strip_prefix('"').and_then(|f| f.strip_suffix('"'))),
                    );
                }
            }
            for flag in flags.into_iter().filter(|f| !f.is_empty()) {
                let name = match flag {
                    "avx512bitalg" => "avx512_bitalg",
                    "avx512vpopcntdq" => "avx512_vpopcntdq",
                    other => other,
                };
                found.push((path.clone(), name.to_string()));
            }
        }
    }
    assert!(!found.is_empty(), "no #[target_feature] found in {dirs:?}");
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_flags_always_run_and_unknown_flags_never() {
        assert!(cpu_runs(&[]));
        assert!(!cpu_has("no-such-flag"));
        assert!(!cpu_runs(&["no-such-flag"]));
    }

    /// Every x86-64 CPU this workspace runs on has SSE2 (the x86-64 baseline).
    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn the_x86_64_baseline_is_seen() {
        assert!(cpu_has("sse2"));
    }
}
