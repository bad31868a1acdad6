//! End-to-end: build, query, stats and merge through the binary.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bloomforge"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bloomforge-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn build_query_stats_merge() {
    let keys_a = tmp("a.txt");
    let keys_b = tmp("b.txt");
    std::fs::write(
        &keys_a,
        (0..1000).map(|i| format!("user-{i}\n")).collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        &keys_b,
        (1000..1500)
            .map(|i| format!("user-{i}\r\n"))
            .collect::<String>(),
    )
    .unwrap();
    for layout in ["blocked", "split", "standard"] {
        let fa = tmp(&format!("a-{layout}.bloom"));
        let fb = tmp(&format!("b-{layout}.bloom"));
        let merged = tmp(&format!("m-{layout}.bloom"));
        for (keys, out) in [(&keys_a, &fa), (&keys_b, &fb)] {
            let st = bin()
                .args([
                    "build", "--layout", layout, "--fp", "0.001", "--items", "2000", "--keys",
                ])
                .arg(keys)
                .arg("--out")
                .arg(out)
                .status()
                .unwrap();
            assert!(st.success());
        }
        let st = bin()
            .args(["merge", "--out"])
            .arg(&merged)
            .arg(&fa)
            .arg(&fb)
            .status()
            .unwrap();
        assert!(st.success(), "{layout} merge");
        let out = bin()
            .args(["query", "--absent", "--filter"])
            .arg(&merged)
            .arg("--keys")
            .arg(&keys_a)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty(), "no member reported absent");
        let out = bin()
            .args(["query", "--filter"])
            .arg(&merged)
            .arg("--keys")
            .arg(&keys_b)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 500);
        assert!(
            text.lines().all(|l| l.starts_with("maybe\tuser-")),
            "CRLF stripped, all present"
        );
        let out = bin()
            .args(["stats", "--filter"])
            .arg(&merged)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(&format!("layout\t{layout}")), "{text}");
    }
    // Errors are reported, not panics.
    let garbage = tmp("garbage.bloom");
    std::fs::write(&garbage, b"not a filter").unwrap();
    let out = bin()
        .args(["stats", "--filter"])
        .arg(&garbage)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("corrupt"));
    let out = bin()
        .args(["build", "--fp", "2", "--keys"])
        .arg(&keys_a)
        .args(["--out", "/dev/null"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!bin().arg("frobnicate").status().unwrap().success());
    let mixed = bin()
        .args(["merge", "--out"])
        .arg(tmp("x.bloom"))
        .arg(tmp("a-blocked.bloom"))
        .arg(tmp("a-split.bloom"))
        .output()
        .unwrap();
    assert!(!mixed.status.success());
}
