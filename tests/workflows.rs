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

/// The assembler stages of the Snakemake workflow (issue 60, item 12): overlaps to PAF and
/// reads to a sorted, indexed BAM, sharded, equal to unsharded runs.
#[test]
fn snakemake_assembly_stages_equal_unsharded_runs() {
    run_part("assembly");
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
    for module in ["search", "merge", "align", "overlap", "map"] {
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

/// A task's script as Nextflow renders it (`workflow-tests.sh nextflow-task`); None when
/// groovy is missing outside CI (skipped loudly).
fn nextflow_task_script(module: &std::path::Path, binding: &str) -> Option<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("bash")
        .arg(root.join("scripts/workflow-tests.sh"))
        .args(["nextflow-task".as_ref(), module.as_os_str(), binding.as_ref()])
        .current_dir(&root)
        .output()
        .expect("run bash scripts/workflow-tests.sh nextflow-task");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(MISSING_TOOL) {
        let in_ci = std::env::var("CI").map(|v| v == "true" || v == "1").unwrap_or(false);
        assert!(!in_ci, "Nextflow task scripts cannot be rendered in CI: {}", stderr.trim());
        eprintln!("\n*** SKIPPED Nextflow module runs: {} ***\n", stderr.trim());
        return None;
    }
    assert!(output.status.success(), "rendering {}: {stderr}", module.display());
    Some(String::from_utf8(output.stdout).unwrap())
}

/// The file patterns of a module's `output:` block (`path("*.hits.parquet")`, `path
/// "versions.yml"`).
fn declared_outputs(main_nf: &str) -> Vec<String> {
    main_nf
        .lines()
        .skip_while(|l| l.trim() != "output:")
        .skip(1)
        .take_while(|l| !l.trim().ends_with(':'))
        .filter(|l| !l.trim_start().starts_with("//"))
        .flat_map(|l| l.split("path").skip(1).filter_map(|p| p.split('"').nth(1).map(String::from)).collect::<Vec<_>>())
        .collect()
}

/// Whether `name` matches `pattern` (`*.hits.parquet`, `*.aligned.{sam,bam}` or a plain
/// name), as the glob of a Nextflow output does for files of the work directory.
fn glob_matches(pattern: &str, name: &str) -> bool {
    if let Some((head, rest)) = pattern.split_once('{') {
        let (alternatives, tail) = rest.split_once('}').unwrap();
        return alternatives.split(',').any(|a| glob_matches(&format!("{head}{a}{tail}"), name));
    }
    match pattern.split_once('*') {
        Some((head, tail)) => name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail),
        None => name == pattern,
    }
}

/// The bundled pairs as a Parquet pair table (query_id, query_seq, target_id, target_seq).
fn pairs_parquet(path: &std::path::Path) {
    use arrow::array::{ArrayRef, RecordBatch, StringArray};
    use std::sync::Arc;
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/pairs.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    let columns: Vec<(&str, ArrayRef)> = header
        .iter()
        .enumerate()
        .map(|(k, name)| (*name, Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r[k]))) as ArrayRef))
        .collect();
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Simulated long reads on two contigs and minimap2's candidates (`ava.paf` overlaps,
/// `map.paf` reads on contigs), in `dir`; None where python3, minimap2 or samtools is missing
/// outside CI (the assembler modules' runs are then skipped loudly).
fn assembly_fixtures(dir: &std::path::Path) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let found = |tool: &str| {
        Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().is_ok_and(|o| o.status.success())
    };
    if let Some(tool) = ["python3", "minimap2", "samtools"].into_iter().find(|t| !found(t)) {
        let in_ci = std::env::var("CI").map(|v| v == "true" || v == "1").unwrap_or(false);
        assert!(!in_ci, "{tool} is missing in CI (scripts/install-test-deps.sh installs it)");
        eprintln!("\n*** SKIPPED the assembler modules' runs: {tool} is not installed ***\n");
        return None;
    }
    let sim = root.join("scripts/assembly-sim.py");
    let script = format!(
        "python3 {} . --seed 3 --contigs 2 --contig-len 8000-10000 --long 25 --long-len 1500-2500 && \
         minimap2 -x ava-pb long.fq long.fq > ava.paf 2>/dev/null && \
         minimap2 -x map-pb genome.fa long.fq > map.paf 2>/dev/null",
        sim.display()
    );
    let o = Command::new("sh").args(["-c", &script]).current_dir(dir).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(dir.to_path_buf())
}

/// Issue 35, item 14: every module's task runs as Nextflow runs it: its script (rendered by
/// scripts/nextflow-task.groovy) in a work directory whose inputs are symlinks under their
/// staged names, and it writes the outputs its `output:` block declares, under names apart
/// from the inputs: the README's `--pairs pairs.parquet` (meta.id `pairs`) must not make
/// the module write `pairs.parquet` over its own input.
#[test]
fn nextflow_modules_run_with_inputs_staged_as_symlinks() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let modules = root.join("workflows/nextflow/modules/local/swarrow");
    let examples = root.join("examples");
    let fixtures = tempfile::tempdir().unwrap();
    pairs_parquet(&fixtures.path().join("pairs.parquet"));
    // One set holding both ids of the candidate pairs: the queries and the database.
    let mut set = std::fs::read(examples.join("queries.fasta")).unwrap();
    let db = std::fs::File::open(examples.join("db.fasta.gz")).unwrap();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(db), &mut set).unwrap();
    std::fs::write(fixtures.path().join("set.fasta"), set).unwrap();
    let search_out = tempfile::tempdir().unwrap();
    // The assembler stages' inputs: simulated reads and contigs, minimap2's candidates.
    let assembly = assembly_fixtures(fixtures.path());
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_swarrow"));
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    // (module, meta.id, input variable -> file, other variables as JSON, task.ext as JSON)
    let search_hits = search_out.path().join("queries.hits.parquet");
    type Case<'a> = (&'a str, &'a str, Vec<(&'a str, PathBuf)>, &'a str, &'a str);
    let cases: Vec<Case> = vec![
        (
            "search",
            "queries",
            vec![("queries", examples.join("queries.fasta")), ("db", examples.join("db.fasta.gz"))],
            "",
            r#"{"args": "--top 5"}"#,
        ),
        ("align", "pairs", vec![("pairs", fixtures.path().join("pairs.parquet"))], r#""seqs": []"#, "{}"),
        ("align", "pairs", vec![("pairs", examples.join("pairs.tsv"))], r#""seqs": []"#, r#"{"format": "sam"}"#),
        (
            "align",
            "candidates",
            vec![("pairs", examples.join("candidates.tsv")), ("seqs", fixtures.path().join("set.fasta"))],
            "",
            "{}",
        ),
        // The merged top is the shards' own (merge refuses a larger one: issue 44, item 3).
        ("merge", "hits", vec![("shards", search_hits.clone())], r#""top": 5"#, "{}"),
    ];
    let mut cases = cases;
    if let Some(d) = &assembly {
        cases.push(("overlap", "ava", vec![("candidates", d.join("ava.paf")), ("reads", d.join("long.fq"))], "", "{}"));
        cases.push((
            "map",
            "reads",
            vec![("candidates", d.join("map.paf")), ("reads", d.join("long.fq")), ("contigs", d.join("genome.fa"))],
            "",
            "{}",
        ));
    }
    for (module, id, inputs, extra, ext) in cases {
        let main_nf = modules.join(module).join("main.nf");
        let work = tempfile::tempdir().unwrap();
        // Staged as Nextflow stages them: a symlink named as the file, or by the input's
        // `stageAs` pattern (merge: `shards/*`).
        let mut variables = Vec::new();
        for (variable, file) in &inputs {
            let name = file.file_name().unwrap().to_str().unwrap();
            let staged = if module == "merge" { format!("shards/{name}") } else { name.to_string() };
            std::fs::create_dir_all(work.path().join(&staged).parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(file, work.path().join(&staged)).unwrap();
            variables.push(format!("\"{variable}\": \"{staged}\""));
        }
        let mut fields = variables;
        if !extra.is_empty() {
            fields.push(extra.to_string());
        }
        let process = format!("SWARROW_{}", module.to_uppercase());
        let binding = format!(
            r#"{{"meta": {{"id": "{id}"}}, {}, "task": {{"ext": {ext}, "cpus": 2, "process": "{process}"}}}}"#,
            fields.join(", ")
        );
        let Some(script) = nextflow_task_script(&main_nf, &binding) else { return };
        std::fs::write(work.path().join(".command.sh"), &script).unwrap();
        let run = Command::new("bash")
            .args(["-ue", ".command.sh"])
            .env("PATH", &path)
            .env_remove("CUDA_VISIBLE_DEVICES")
            .current_dir(work.path())
            .output()
            .unwrap();
        assert!(run.status.success(), "{module} ({id}) failed:\n{script}\n{}", String::from_utf8_lossy(&run.stderr));
        let nf = std::fs::read_to_string(&main_nf).unwrap();
        let outputs = declared_outputs(&nf);
        assert!(outputs.len() >= 2, "{module}: outputs {outputs:?}");
        let files: Vec<(String, bool)> = std::fs::read_dir(work.path())
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name().into_string().unwrap(), e.file_type().unwrap().is_symlink()))
            .collect();
        for pattern in &outputs {
            let produced: Vec<&(String, bool)> = files.iter().filter(|(n, _)| glob_matches(pattern, n)).collect();
            assert!(!produced.is_empty(), "{module}: nothing matches output {pattern} in {files:?}");
            assert!(produced.iter().all(|(_, link)| !link), "{module}: output {pattern} matches an input: {files:?}");
        }
        if module == "search" {
            let hits = files.iter().find(|(n, _)| n.ends_with(".parquet")).unwrap();
            std::fs::copy(work.path().join(&hits.0), &search_hits).unwrap();
        }
        let tool = |args: &[&str]| {
            let o = Command::new(args[0]).args(&args[1..]).current_dir(work.path()).output().unwrap();
            assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8(o.stdout).unwrap()
        };
        match module {
            "align" if ext.contains("sam") => {
                let sam = std::fs::read_to_string(work.path().join("pairs.aligned.sam")).unwrap();
                assert!(sam.starts_with("@HD") && sam.lines().filter(|l| !l.starts_with('@')).count() > 0, "{sam}");
            }
            // One line a candidate (every candidate overlaps), a read's primary first decided.
            "overlap" => {
                let paf = std::fs::read_to_string(work.path().join("ava.overlaps.paf")).unwrap();
                let candidates = std::fs::read_to_string(&inputs[0].1).unwrap();
                assert_eq!(paf.lines().count(), candidates.lines().count(), "{paf}");
                assert!(paf.lines().all(|l| l.contains("\ttp:A:P\t") || l.contains("\ttp:A:S\t")), "{paf}");
            }
            // Sorted, indexed, one primary record a read with candidates.
            "map" => {
                tool(&["samtools", "quickcheck", "-v", "reads.sorted.bam"]);
                assert!(tool(&["samtools", "view", "-H", "reads.sorted.bam"]).contains("SO:coordinate"));
                tool(&["samtools", "idxstats", "reads.sorted.bam"]);
                let primary = tool(&["samtools", "view", "-c", "-F", "0x900", "reads.sorted.bam"]);
                let candidates = std::fs::read_to_string(&inputs[0].1).unwrap();
                let reads: std::collections::HashSet<&str> =
                    candidates.lines().map(|l| l.split('\t').next().unwrap()).collect();
                assert_eq!(primary.trim(), reads.len().to_string());
            }
            _ => {}
        }
    }
}
