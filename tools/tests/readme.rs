//! The README's code blocks, checked: every `console` block is run, command by command,
//! in one scratch directory with this build's `bloomforge` first on `PATH`, and its
//! standard output must equal the lines the README shows under the command; the `toml`
//! block must name workspace crates at their versions; `sh` blocks (the set-up and install
//! commands) are run verbatim by `.ci/run`, which this test checks they still are; `rust`
//! blocks are doctests of `bloomforge-datafusion`; `python` blocks are run by the Python
//! package's tests (`crates/python/tests/test_readme.py`). Any other kind of block fails
//! the test, so none goes unchecked.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(info string, body)` of every fenced block of `text`.
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut body = String::new();
            for inner in lines.by_ref() {
                if inner.starts_with("```") {
                    break;
                }
                body.push_str(inner);
                body.push('\n');
            }
            out.push((info.trim().to_string(), body));
        }
    }
    out
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).expect("README.md")
}

#[test]
fn every_block_has_a_checked_kind() {
    for (info, body) in blocks(&readme()) {
        assert!(
            ["console", "sh", "toml", "rust", "python"].contains(&info.as_str()),
            "README block of kind {info:?} is not checked by any test:\n{body}"
        );
    }
}

#[test]
fn console_blocks_print_what_the_readme_shows() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_bloomforge"));
    let dir = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for (info, body) in blocks(&readme()) {
        if info != "console" {
            continue;
        }
        // Commands start with "$ "; the lines up to the next command are its output.
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for line in body.lines() {
            match line.strip_prefix("$ ") {
                Some(cmd) => steps.push((cmd.to_string(), Vec::new())),
                None => steps
                    .last_mut()
                    .expect("a console block starts with a command")
                    .1
                    .push(line.to_string()),
            }
        }
        for (cmd, want) in steps {
            let out = Command::new("bash")
                .args(["-o", "pipefail", "-c", &cmd])
                .current_dir(dir.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "README command failed: {cmd}\n{stderr}"
            );
            let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
            assert_eq!(got, want, "README command printed something else: {cmd}");
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} README commands found");
}

#[test]
fn toml_block_names_workspace_crates() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("workspace version");
    let mut deps = 0;
    for (info, body) in blocks(&readme()) {
        if info != "toml" {
            continue;
        }
        for line in body
            .lines()
            .filter(|l| l.contains('=') && !l.starts_with('['))
        {
            let name = line.split('=').next().unwrap().trim();
            let dir = name
                .strip_prefix("bloomforge-")
                .expect("a bloomforge crate");
            let krate = repo().join("crates").join(dir).join("Cargo.toml");
            let text = std::fs::read_to_string(&krate)
                .unwrap_or_else(|e| panic!("README names {name}: {}: {e}", krate.display()));
            assert!(text.contains(&format!("name = \"{name}\"")), "{name}");
            assert!(
                line.contains(&format!("version = \"{version}\"")),
                "{line}: the workspace is at {version}"
            );
            deps += 1;
        }
    }
    assert!(deps >= 1);
}

#[test]
fn sh_blocks_are_run_by_ci() {
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.contains(".ci/readme-sh"),
        ".ci/run no longer runs the README's sh blocks"
    );
    let sh: Vec<String> = blocks(&readme())
        .into_iter()
        .filter(|(info, _)| info == "sh")
        .map(|(_, body)| body)
        .collect();
    assert!(
        sh.iter().any(|b| b.contains("tools/test-all")),
        "the README's sh blocks lost the test command"
    );
}
