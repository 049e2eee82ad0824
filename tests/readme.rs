//! The README's commands run as written: `scripts/readme-check.sh --quick` runs every ```sh
//! block in order in a fresh copy of the repository, with this build's binary standing in
//! for the ```sh slow blocks (build, install, test suite; `bash scripts/readme-check.sh`
//! without --quick runs those too). In CI (`CI=true`) a missing tool fails the test;
//! elsewhere the test says loudly that it skipped.

use std::path::PathBuf;
use std::process::Command;

/// The script's exit status for "a tool the README assumes is missing".
const MISSING_TOOL: i32 = 77;

#[test]
fn readme_commands_run_in_order_on_a_fresh_copy() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("bash")
        .arg(root.join("scripts/readme-check.sh"))
        .arg("--quick")
        .env("SWARROW", env!("CARGO_BIN_EXE_swarrow"))
        .env_remove("CUDA_VISIBLE_DEVICES")
        .current_dir(&root)
        .output()
        .expect("run bash scripts/readme-check.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(MISSING_TOOL) {
        let in_ci = std::env::var("CI").map(|v| v == "true" || v == "1").unwrap_or(false);
        assert!(!in_ci, "the README check cannot run in CI: {}", stderr.trim());
        eprintln!("\n*** SKIPPED the README check: {} ***\n", stderr.trim());
        return;
    }
    assert!(output.status.success(), "README commands failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("every README command ran"), "{stdout}");
}

/// Issue 35, item 17: the README's performance table and `docs/perf.svg` are what
/// `scripts/perf-plot.py` makes of `docs/perf.tsv`, and every figure there is in the
/// BENCHMARKS.md section its row names (`perf-plot.py --check`).
#[test]
fn performance_table_and_plot_follow_the_recorded_figures() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(root.join("scripts/perf-plot.py"))
        .arg("--check")
        .current_dir(&root)
        .output()
        .expect("run python3 scripts/perf-plot.py --check");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// The features of every crate `package`'s build compiles, as `cargo tree` resolves them:
/// one line per crate and version, its feature lists (host and target builds apart) sorted.
fn build_features(package: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--locked", "--offline", "-e", "normal,build", "-f", "{p}|{f}", "--prefix", "none"])
        .args(["--no-dedupe", "-p", package])
        .current_dir(&root)
        .output()
        .expect("run cargo tree");
    assert!(output.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&output.stderr));
    let mut crates: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let Some((name, features)) = line.split_once('|') else { continue };
        let name = name.trim_end_matches(" (*)").trim().to_string();
        let lists = crates.entry(name).or_default();
        if !lists.contains(&features.to_string()) {
            lists.push(features.to_string());
            lists.sort();
        }
    }
    crates
}

/// Issue 35, item 16: `pip install ./python` reuses the release build `examples/run.sh` made
/// (the README's first two steps) only if every crate both builds compile gets the same
/// features in each: else cargo compiles that crate, and everything above it up to this
/// library, a second time.
#[test]
fn the_python_package_and_the_command_line_build_shared_crates_alike() {
    let command_line = build_features("swarrow");
    let python = build_features("swarrow-python");
    let differ: Vec<String> = command_line
        .iter()
        .filter_map(|(name, lists)| {
            let theirs = python.get(name)?;
            (theirs != lists).then(|| format!("{name}: swarrow {lists:?}, swarrow-python {theirs:?}"))
        })
        .collect();
    assert!(command_line.contains_key("arrow v60.1.0") || command_line.keys().any(|k| k.starts_with("arrow v")));
    assert!(differ.is_empty(), "shared crates built with other features:\n{}", differ.join("\n"));
}
