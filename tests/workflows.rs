//! Workflow-manager and data-lake checks, driven by `scripts/workflow-tests.sh` with the
//! tools `scripts/install-test-deps.sh` installs (the repository's Python venv `.venv`, with
//! Snakemake, DuckDB, Polars and pyarrow among its pins; Debian's `groovy`). In CI (`CI=true`) a missing
//! tool fails the test; elsewhere the test says loudly that it skipped.

use std::path::PathBuf;
use std::process::Command;

/// The script's exit status for "a tool is missing".
const MISSING_TOOL: i32 = 77;

fn run_part(part: &str) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("bash")
        .arg(root.join("scripts/workflow-tests.sh"))
        .arg(part)
        .env("SWARROW_BIN", env!("CARGO_BIN_EXE_swarrow"))
        .env_remove("CUDA_VISIBLE_DEVICES")
        .current_dir(&root)
        .output()
        .expect("run bash scripts/workflow-tests.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(MISSING_TOOL) {
        let in_ci = std::env::var("CI").map(|v| v == "true" || v == "1").unwrap_or(false);
        assert!(!in_ci, "workflow checks '{}' cannot run in CI: {}", part, stderr.trim());
        eprintln!(
            "\n*** SKIPPED workflow checks '{}': {} ***\n*** run `bash scripts/install-test-deps.sh` to enable them ***\n",
            part,
            stderr.trim()
        );
        return;
    }
    assert!(output.status.success(), "workflow checks '{}' failed:\n{}\n{}", part, stdout, stderr);
    print!("{}", stdout);
}

#[test]
fn snakemake_sharded_runs_equal_unsharded_runs() {
    run_part("snakemake");
}

#[test]
fn parquet_and_arrow_stream_read_by_duckdb_polars_pyarrow() {
    run_part("lake");
}

#[test]
fn example_recipes_print_their_expected_outputs() {
    run_part("recipes");
}

#[test]
fn nextflow_files_pass_groovy_syntax_check() {
    run_part("nextflow");
}

/// The Nextflow modules' conda environment installs swarrow from this repository (its pip
/// entry, relative to the file as conda runs pip, is the Python package), every module's
/// `conda` directive names a file that exists, and the docker profile's GPU flag follows a
/// parameter (issue 24, item 7).
#[test]
fn nextflow_modules_install_swarrow_and_gpus_are_a_parameter() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = root.join("workflows/nextflow/modules/local/swarrow");
    let env = std::fs::read_to_string(modules.join("environment.yml")).unwrap();
    let pip: Vec<&str> = env
        .lines()
        .skip_while(|l| l.trim() != "- pip:")
        .skip(1)
        .map(|l| l.trim().trim_start_matches("- ").trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(!pip.is_empty(), "no pip entry in environment.yml");
    let package = modules.join(pip[0]);
    let pyproject = std::fs::read_to_string(package.join("pyproject.toml")).unwrap();
    assert!(pyproject.contains("name = \"swarrow\""), "{} is not the swarrow package", package.display());
    let rust = env.lines().find(|l| l.contains("rust")).expect("rust in environment.yml");
    // The environment's Rust is at least the crate's own minimum (Cargo.toml's rust-version).
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let msrv = manifest.lines().find_map(|l| l.strip_prefix("rust-version = ")).expect("rust-version in Cargo.toml");
    assert!(rust.contains(&format!(">={}", msrv.trim_matches('"'))), "{rust} (Cargo.toml: rust-version = {msrv})");
    for module in ["search", "merge", "align"] {
        let nf = std::fs::read_to_string(modules.join(module).join("main.nf")).unwrap();
        let line = nf.lines().find(|l| l.trim_start().starts_with("conda ")).expect("conda directive");
        let file = line.split('"').nth(1).unwrap().replace("${moduleDir}", &modules.join(module).display().to_string());
        assert!(std::path::Path::new(&file).exists(), "{module}: {file}");
    }
    let config = std::fs::read_to_string(root.join("workflows/nextflow/nextflow.config")).unwrap();
    assert!(!config.contains("'--gpus all'"), "the GPU flag is fixed");
    assert!(config.contains("params.gpus ? \"--gpus ${params.gpus}\""), "docker runOptions do not follow params.gpus");
    let main = std::fs::read_to_string(root.join("workflows/nextflow/main.nf")).unwrap();
    for p in main.lines().filter(|l| l.trim_start().starts_with("*   nextflow run")) {
        for flag in p.split_whitespace().filter(|w| w.starts_with("--")) {
            let name = flag.trim_start_matches("--");
            assert!(
                main.contains(&format!("params.{name} ")),
                "main.nf's header uses {flag} but defines no params.{name}"
            );
        }
    }
}
