//! The first hour of a new user: options typed from BLAST/DIAMOND/MMseqs2 habits, the default
//! format of a redirected stdout, help examples that run as pasted, completions and man page,
//! and the progress line on a terminal (run under a pseudo-terminal with `script`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin_path() -> &'static str {
    env!("CARGO_BIN_EXE_swarrow")
}

fn bin() -> Command {
    let mut c = Command::new(bin_path());
    c.env_remove("CUDA_VISIBLE_DEVICES").stdin(Stdio::null());
    c
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn ex(name: &str) -> String {
    examples().join(name).to_str().unwrap().to_string()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run swarrow")
}

fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "swarrow {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn in_ci() -> bool {
    std::env::var("CI").map(|v| v == "true" || v == "1").unwrap_or(false)
}

/// BLAST tabular rows of a search: (query, evalue) per row.
fn blast_rows(stdout: &[u8]) -> Vec<(String, f64)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 12, "BLAST tabular (outfmt 6) has 12 columns: {l}");
            (f[0].to_string(), f[10].trim().parse().unwrap())
        })
        .collect()
}

#[test]
fn search_aliases_mean_the_long_options() {
    let (q, d) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let base = ["search", "-q", &q, "-d", &d, "--device", "cpu"];
    let long =
        ok(&[&base[..], &["--top", "2", "--max-evalue", "1e-3", "--threads", "1", "--format", "blast"]].concat());
    let rows = blast_rows(&long.stdout);
    // The options did something: at most 2 rows per query, every E-value within 1e-3, and the
    // bundled data has hits (one planted homolog per query).
    assert!(!rows.is_empty());
    for (query, evalue) in &rows {
        assert!(rows.iter().filter(|(q, _)| q == query).count() <= 2, "{query}");
        assert!(*evalue <= 1e-3, "{query} {evalue}");
    }
    let unfiltered = blast_rows(&ok(&[&base[..], &["--format", "blast"]].concat()).stdout);
    assert!(unfiltered.len() > rows.len(), "defaults (10 hits, E <= 10) keep more rows");
    for short in [
        &["-k", "2", "-e", "1e-3", "-p", "1", "--outfmt", "6"][..],
        &["--max-target-seqs", "2", "--evalue", "1e-3", "-p", "1", "--format", "m8"][..],
        &["-k", "2", "--evalue=1e-3", "--threads", "1", "--outfmt", "tabular"][..],
    ] {
        let o = ok(&[&base[..], short].concat());
        assert_eq!(o.stdout, long.stdout, "{short:?}");
    }
}

#[test]
fn align_takes_q_and_t_and_every_subcommand_takes_quiet() {
    let (a, b) = (ex("pair-queries.fasta"), ex("pair-targets.fasta"));
    let long = ok(&["align", "--query", &a, "--target", &b, "--format", "tsv", "--device", "cpu", "--quiet"]);
    let short = ok(&["align", "-q", &a, "-t", &b, "--format", "tsv", "--device", "cpu", "--quiet"]);
    assert_eq!(short.stdout, long.stdout);
    // The two FASTA files are examples/pairs.tsv's columns: the same 20 rows as --pairs.
    let pairs = ok(&["align", "--pairs", &ex("pairs.tsv"), "--format", "tsv", "--device", "cpu"]);
    assert_eq!(short.stdout, pairs.stdout);
    assert_eq!(String::from_utf8_lossy(&short.stdout).lines().count(), 21);

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.swdb");
    let o = ok(&["makedb", &ex("db.fasta.gz"), "-o", db.to_str().unwrap(), "--quiet"]);
    assert!(o.stderr.is_empty() && db.metadata().unwrap().len() > 0);
    let hits = dir.path().join("hits.parquet");
    ok(&["search", "-q", &ex("queries.fasta"), "-d", db.to_str().unwrap(), "-o", hits.to_str().unwrap(), "--quiet"]);
    let merged = dir.path().join("merged.parquet");
    ok(&["merge", "--quiet", "--top", "10", "-o", merged.to_str().unwrap(), hits.to_str().unwrap()]);
    assert!(merged.exists());
}

#[test]
fn outfmt_with_blast_columns_writes_them_and_top_is_explained() {
    let o = ok(&["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "--outfmt", "6 qseqid sseqid pident"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(!text.is_empty());
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "{line}");
        let pident: f64 = f[2].parse().unwrap();
        assert!((0.0..=100.0).contains(&pident) && f[2].split('.').nth(1).map(str::len) == Some(3), "{line}");
    }
    let o = run(&["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "--outfmt", "6 qseqid staxids"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown column 'staxids'"), "{err}");
    let help = String::from_utf8_lossy(&ok(&["search", "--help"]).stdout).to_string();
    for needle in ["--max-target-seqs", "not DIAMOND's", "-e, --max-evalue", "--evalue", "-p, --threads", "--outfmt"] {
        assert!(help.contains(needle), "search --help lacks {needle:?}:\n{help}");
    }
}

/// Runs `cmd` in `sh` with swarrow on PATH, in `dir`.
fn shell(dir: &Path, cmd: &str) -> Output {
    let bindir = Path::new(bin_path()).parent().unwrap();
    let path = format!("{}:{}", bindir.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", cmd])
        .env("PATH", path)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn redirected_stdout_takes_the_format_of_its_file_else_tsv_and_arrow_into_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let search = format!("swarrow search -q {} -d {} --device cpu", ex("queries.fasta"), ex("db.fasta.gz"));
    for (redirect, file) in [
        ("> hits.tsv", "hits.tsv"),
        ("> x.parquet", "x.parquet"),
        ("> hits.m8", "hits.m8"),
        ("> hits.out", "hits.out"),
        ("| cat > piped", "piped"),
    ] {
        let o = shell(dir.path(), &format!("{search} {redirect}"));
        assert!(o.status.success(), "{redirect}: {}", String::from_utf8_lossy(&o.stderr));
        let bytes = fs::read(dir.path().join(file)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        match file {
            "hits.tsv" | "hits.out" => assert!(text.starts_with("query\ttarget\tscore\t"), "{file}: {text:.80}"),
            "x.parquet" => assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"), "{file}"),
            "hits.m8" => assert!(!text.starts_with("query") && text.lines().all(|l| l.split('\t').count() == 12)),
            // An Arrow IPC stream begins with the continuation marker of its schema message.
            _ => assert_eq!(&bytes[..4], &[0xff; 4], "{file}: not an Arrow IPC stream"),
        }
    }
}

/// The example lines of `swarrow <sub> --help`: the indented lines under "Example(s)".
fn help_examples(sub: &str) -> Vec<String> {
    let help = String::from_utf8_lossy(&ok(&[sub, "--help"]).stdout).to_string();
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.starts_with("Example") {
            inside = true;
        } else if inside && line.starts_with("  ") {
            out.push(line.trim().to_string());
        } else {
            inside = false;
        }
    }
    out
}

#[test]
fn help_examples_run_as_pasted_from_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for d in ["examples", "workflows"] {
        std::os::unix::fs::symlink(root.join(d), dir.path().join(d)).unwrap();
    }
    let mut ran = 0;
    // makedb first: search's examples use its db.swdb.
    for sub in ["makedb", "search", "align", "merge"] {
        let lines = help_examples(sub);
        assert!(!lines.is_empty(), "swarrow {sub} --help has no examples");
        for line in lines {
            assert!(!line.ends_with('\\'), "one command per line: {line}");
            assert!(line.len() <= 100, "example too wide to paste from a terminal: {line}");
            let o = shell(dir.path(), &line);
            assert!(o.status.success(), "{sub} --help example failed: {line}\n{}", String::from_utf8_lossy(&o.stderr));
            ran += 1;
        }
    }
    assert!(ran >= 10, "{ran} examples");
    // What they wrote is what they say: TSV with hits, BLAST tabular, Parquet.
    let tsv = fs::read_to_string(dir.path().join("hits.tsv")).unwrap();
    assert!(tsv.starts_with("query\t") && tsv.lines().count() > 1);
    assert!(fs::read(dir.path().join("hits.parquet")).unwrap().starts_with(b"PAR1"));
    assert!(fs::read(dir.path().join("merged.parquet")).unwrap().starts_with(b"PAR1"));
    assert!(fs::read(dir.path().join("from-pipe.parquet")).unwrap().starts_with(b"PAR1"));
}

#[test]
fn completions_and_man_page_come_from_the_clap_definitions() {
    let bash = String::from_utf8(ok(&["completions", "bash"]).stdout).unwrap();
    assert!(bash.contains("complete") && bash.contains("--max-evalue") && bash.contains("makedb"), "{bash:.200}");
    let zsh = String::from_utf8(ok(&["completions", "zsh"]).stdout).unwrap();
    assert!(zsh.starts_with("#compdef swarrow"), "{zsh:.80}");
    let man = String::from_utf8(ok(&["man"]).stdout).unwrap();
    assert!(man.contains(".TH swarrow") && man.contains("search"), "{man:.200}");
    let dir = tempfile::tempdir().unwrap();
    ok(&["man", "--dir", dir.path().to_str().unwrap()]);
    let page = fs::read_to_string(dir.path().join("swarrow-search.1")).unwrap();
    assert!(page.contains("max\\-target\\-seqs") || page.contains("max-target-seqs"), "{page:.300}");
}

/// Writes `n` random protein sequences of `len` residues, with ids `prefix_i`.
fn random_fasta(path: &Path, prefix: &str, n: usize, len: usize, seed: u64) {
    const AA: &[u8] = b"ARNDCQEGHILKMFPSTWYV";
    let mut x = seed;
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(">{prefix}_{i}\n"));
        for _ in 0..len {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            text.push(AA[((x >> 33) % 20) as usize] as char);
        }
        text.push('\n');
    }
    fs::write(path, text).unwrap();
}

/// Runs `cmd` under a pseudo-terminal (`script`), so stdout and stderr are terminals; returns
/// what the terminal received, or None when `script` is missing (outside CI only).
fn under_pty(dir: &Path, cmd: &str) -> Option<String> {
    let has_script = Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_script {
        assert!(!in_ci(), "`script` (util-linux) is needed in CI");
        eprintln!("*** SKIPPED: no `script` command for the pseudo-terminal test ***");
        return None;
    }
    let o = Command::new("script")
        .args(["-q", "-e", "-c", cmd, "/dev/null"])
        .env("SWARROW_PROGRESS_MS", "25")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{cmd}: {}", String::from_utf8_lossy(&o.stdout));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn a_cpu_search_of_20_queries_shows_a_moving_bar_with_eta_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    random_fasta(&dir.path().join("q.fasta"), "q", 20, 300, 1);
    // 20 x 300 x 1,500,000 = 9.0 Gcells: a second or more on 2 cores, many frames apart.
    random_fasta(&dir.path().join("db.fasta"), "t", 6000, 250, 2);
    // -e 1e6: random sequences' best hits have E-values near 1-10; keep all 10 per query.
    let cmd = format!("{} search -q q.fasta -d db.fasta --device cpu -e 1e6 -o hits.tsv", bin_path());
    let Some(screen) = under_pty(dir.path(), &cmd) else { return };
    // Every frame: "\r\x1b[2K" then the line. The aligning frames carry a bar, a percentage of
    // the total in cells, and an ETA once cells are done.
    let frames: Vec<&str> = screen.split("\r\x1b[2K").filter(|f| f.contains("aligning")).collect();
    let percents: Vec<u32> = frames
        .iter()
        .filter_map(|f| f.split_once("] ").and_then(|(_, rest)| rest.trim_start().split('%').next()?.parse().ok()))
        .collect();
    let mut distinct = percents.clone();
    distinct.dedup();
    assert!(distinct.len() >= 3, "the bar must move: {percents:?}\n{screen:?}");
    assert!(percents.windows(2).all(|w| w[0] <= w[1]), "never backwards: {percents:?}");
    assert!(
        frames.iter().any(|f| f.contains("/9.0 Gcells") && f.contains("ETA ") && !f.contains("ETA --")),
        "{screen:?}"
    );
    // The end: the line erased, then one summary naming queries, hits, cells and the rate.
    let summary = screen.lines().find(|l| l.contains("swarrow: 20 queries")).expect("summary line");
    assert!(summary.contains("200 hits") && summary.contains("9.0 Gcells") && summary.contains("GCUPS"), "{summary}");
    let tail = screen.rsplit("\r\x1b[2K").next().unwrap();
    assert!(tail.trim_start().starts_with("swarrow: 20 queries"), "no progress line left after the summary: {tail:?}");
    // The results are the same as without a terminal.
    let plain = dir.path().join("plain.tsv");
    let o = bin()
        .args([
            "search",
            "-q",
            "q.fasta",
            "-d",
            "db.fasta",
            "--device",
            "cpu",
            "-e",
            "1e6",
            "-o",
            plain.to_str().unwrap(),
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(o.stderr.is_empty(), "without a terminal stderr stays empty: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(fs::read(dir.path().join("hits.tsv")).unwrap(), fs::read(&plain).unwrap());
}

#[test]
fn results_on_the_terminal_have_no_progress_line_among_them() {
    let dir = tempfile::tempdir().unwrap();
    random_fasta(&dir.path().join("q.fasta"), "q", 20, 300, 3);
    random_fasta(&dir.path().join("db.fasta"), "t", 1000, 250, 4);
    let cmd = format!("{} search -q q.fasta -d db.fasta --device cpu -k 3 -e 1e6", bin_path());
    let Some(screen) = under_pty(dir.path(), &cmd) else { return };
    // What remains visible of each line is the text after its last erase.
    let visible: Vec<&str> =
        screen.lines().map(|l| l.rsplit("\r\x1b[2K").next().unwrap().trim_end_matches('\r')).collect();
    let rows: Vec<&&str> = visible.iter().filter(|l| l.contains('\t')).collect();
    assert_eq!(rows.len(), 1 + 20 * 3, "header and 3 hits per query:\n{screen:?}");
    assert!(rows[0].starts_with("query\ttarget"), "{}", rows[0]);
    for row in rows {
        assert!(!row.contains("GCUPS") && !row.contains("aligning") && !row.contains('['), "{row:?}");
    }
    assert!(visible.iter().any(|l| l.starts_with("swarrow: 20 queries, 60 hits")), "{visible:?}");
}

#[test]
fn the_gpu_notice_and_engine_banner_only_in_verbose_mode_and_missing_input_first() {
    let (q, d) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let quiet_run = ok(&["search", "-q", &q, "-d", &d, "--format", "tsv"]);
    assert!(quiet_run.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet_run.stderr));
    let verbose = ok(&["search", "-q", &q, "-d", &d, "--format", "tsv", "-v"]);
    assert!(
        String::from_utf8_lossy(&verbose.stderr).contains("aligning on "),
        "{}",
        String::from_utf8_lossy(&verbose.stderr)
    );
    for args in [
        vec!["search", "-q", "missing.fasta", "-d", &d, "-v"],
        vec!["search", "-q", &q, "-d", "missing.fasta.gz", "-v"],
        vec!["align", "--pairs", "missing.tsv", "-v"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("swarrow: error: ") && err.contains("no such file"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "only the error: {err}");
    }
}
