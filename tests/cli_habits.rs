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
        // A person's terminal names its type; without one (CI) the line is not drawn.
        .env("TERM", "xterm")
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

/// Issue 24, item 1: BLAST+'s single-dash options, with BLAST's meaning. Each command of the
/// issue gives exactly what our spelling gives.
#[test]
fn blast_single_dash_options_mean_what_they_mean_in_blast() {
    let (q, d) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let same = |blast: &[&str], ours: &[&str]| {
        let b = ok(&[&["search", "--device", "cpu"][..], blast].concat());
        let o = ok(&[&["search", "--device", "cpu"][..], ours].concat());
        assert_eq!(b.stdout, o.stdout, "{blast:?} vs {ours:?}");
        assert!(!b.stdout.is_empty(), "{blast:?}");
        b.stdout
    };
    // `-outfmt 6` was `unexpected argument '6'` (read as `-o utfmt`).
    let m8 = same(&["-q", &q, "-d", &d, "-outfmt", "6"], &["-q", &q, "-d", &d, "--outfmt", "6"]);
    assert!(String::from_utf8_lossy(&m8).lines().all(|l| l.split('\t').count() == 12));
    same(
        &["-q", &q, "-d", &d, "-outfmt", "6", "-evalue", "1e-5"],
        &["-q", &q, "-d", &d, "--format", "blast", "-e", "1e-5"],
    );
    same(
        &["-q", &q, "-d", &d, "-outfmt", "6", "-max_target_seqs", "5"],
        &["-q", &q, "-d", &d, "--format", "blast", "-k", "5"],
    );
    same(
        &["-q", &q, "-d", &d, "-outfmt", "6", "-num_threads", "2"],
        &["-q", &q, "-d", &d, "--format", "blast", "-p", "2"],
    );
    same(&["-query", &q, "-db", &d, "-outfmt", "6"], &["-q", &q, "-d", &d, "--format", "blast"]);
    // BLAST's -gapopen 11 -gapextend 1 is our default 11/1 (BLAST's convention is ours).
    same(
        &["-query", &q, "-db", &d, "-outfmt", "6", "-gapopen", "11", "-gapextend", "1"],
        &["-q", &q, "-d", &d, "-outfmt", "6"],
    );
    let g = same(
        &["-query", &q, "-db", &d, "-outfmt", "6", "-gapopen", "9", "-gapextend", "2", "-matrix", "BLOSUM80"],
        &["-q", &q, "-d", &d, "--format", "blast", "--gap-open", "9", "--gap-extend", "2", "--matrix", "BLOSUM80"],
    );
    assert_ne!(g, m8, "the gap costs and matrix changed the alignments");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hits.m8");
    ok(&["search", "-query", &q, "-db", &d, "-out", out.to_str().unwrap(), "--device", "cpu"]);
    assert_eq!(fs::read(&out).unwrap(), m8, "-out hits.m8 writes BLAST tabular by its extension");
    let help = String::from_utf8_lossy(&ok(&["search", "--help"]).stdout).to_string();
    assert!(help.contains("-max_target_seqs") && help.contains("-gapopen 11 -gapextend 1"), "{help}");
}

/// Issue 24, item 2: `--outfmt "6 std qlen slen"` and `qcovhsp`.
#[test]
fn outfmt_takes_std_and_qcovhsp() {
    let (q, d) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let std12 = String::from_utf8(ok(&["search", "-q", &q, "-d", &d, "--outfmt", "6"]).stdout).unwrap();
    let more =
        String::from_utf8(ok(&["search", "-q", &q, "-d", &d, "--outfmt", "6 std qlen slen qcovhsp"]).stdout).unwrap();
    assert_eq!(std12.lines().count(), more.lines().count());
    for (a, b) in std12.lines().zip(more.lines()) {
        let f: Vec<&str> = b.split('\t').collect();
        assert_eq!(f.len(), 15, "{b}");
        assert_eq!(f[..12].join("\t"), a);
        // BLAST's qcovhsp from the printed qstart, qend, qlen: 100 x span / qlen, + 0.5 below
        // 99, truncated (tabular.cpp, x_SetQueryCovSeqalign).
        let n = |k: usize| f[k].parse::<i64>().unwrap();
        let pct = 100.0 * (n(7) - n(6) + 1) as f64 / n(12) as f64;
        let want = if pct < 99.0 { pct + 0.5 } else { pct } as i64;
        assert_eq!(n(14), want, "{b}");
    }
    // Hand-checked rows: the first query's planted homolog covers all 361 residues (100); the
    // second's covers 236 of 237, 99.58%, which BLAST prints as 99.
    assert!(more
        .lines()
        .any(|l| l.starts_with("tr|H6QJ35|H6QJ35_RICMA\thomolog_of_") && l.ends_with("\t361\t355\t100")));
    assert!(more
        .lines()
        .any(|l| l.starts_with("tr|A0A0S2ES34|") && l.contains("\thomolog_of_") && l.ends_with("\t237\t233\t99")));
    // --columns takes them too, in every format.
    let tsv =
        String::from_utf8(ok(&["search", "-q", &q, "-d", &d, "--format", "tsv", "--columns", "std,qcovhsp"]).stdout)
            .unwrap();
    assert!(
        tsv.starts_with(
            "query\ttarget\tpident\tlength\tmismatch\tgapopen\tqstart\tqend\ttstart\ttend\tevalue\tbits\tqcovhsp\n"
        ),
        "{tsv:.200}"
    );
}

/// The `| you type |` table of the README's habits: every spelling in it runs as written,
/// placeholders filled in (what each means is checked by the tests above).
#[test]
fn every_habit_in_the_readme_table_works() {
    let readme = fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| you type |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() >= 6, "{table:?}");
    let (q, d) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let dir = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for row in table {
        let typed = row.split('|').nth(1).unwrap();
        for spelling in typed.split('`').skip(1).step_by(2) {
            let filled = spelling
                .replace("A.fa", &ex("pair-queries.fasta"))
                .replace("B.fa", &ex("pair-targets.fasta"))
                .replace(" E", " 1e-5")
                .replace(" N", " 2")
                .replace(" O", " 10")
                .replace(" X", " 2")
                .replace(" M", " BLOSUM62")
                .replace(" Q", &format!(" {q}"))
                .replace(" DB", &format!(" {d}"))
                .replace(" F", &format!(" {}", dir.path().join(format!("f{ran}.m8")).display()))
                .replace("hits.m8", dir.path().join(format!("h{ran}.m8")).to_str().unwrap());
            let words: Vec<String> = if filled.contains('"') {
                // One quoted value: `--outfmt "6 ..."`.
                let (head, quoted) = filled.split_once('"').unwrap();
                let mut w: Vec<String> = head.split_whitespace().map(String::from).collect();
                w.push(quoted.trim_end_matches('"').to_string());
                w
            } else {
                filled.split_whitespace().map(String::from).collect()
            };
            let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
            let cmd: Vec<&str> = if args.first() == Some(&"align") {
                args.extend(["--format", "tsv", "--device", "cpu"]);
                args
            } else if args.contains(&"-query") {
                [&["search", "--device", "cpu"][..], &args].concat()
            } else {
                [&["search", "-q", &q, "-d", &d, "--device", "cpu"][..], &args].concat()
            };
            let o = run(&cmd);
            assert!(o.status.success(), "README habit `{spelling}` failed: {}", String::from_utf8_lossy(&o.stderr));
            ran += 1;
        }
    }
    assert!(ran >= 12, "{ran} spellings");
}

/// Runs `cmd` in bash in `dir` with swarrow on PATH, and the exit status, stdout and stderr.
fn sh_in(dir: &Path, cmd: &str) -> (i32, Vec<u8>, String) {
    let o = shell(dir, cmd);
    (o.status.code().unwrap_or(-1), o.stdout, String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Issue 24, item 3: a default Arrow stream into a pipe is announced once on stderr.
#[test]
fn a_default_arrow_stream_into_a_pipe_is_announced_once() {
    let dir = tempfile::tempdir().unwrap();
    let search = format!("swarrow search -q {} -d {} --device cpu", ex("queries.fasta"), ex("db.fasta.gz"));
    let note = format!("swarrow: {}\n", swarrow::output::PIPE_NOTE);
    let (rc, out, err) = sh_in(dir.path(), &format!("{search} | awk -F'\\t' '$5<1e-5' | wc -l"));
    assert_eq!((rc, err.as_str()), (0, note.as_str()), "the issue's pipeline");
    assert!(!out.is_empty());
    let (rc, _, err) = sh_in(dir.path(), &format!("{search} --format tsv | awk -F'\\t' '$5<1e-5' | wc -l"));
    assert_eq!((rc, err.as_str()), (0, ""), "a chosen format needs no note");
    for quiet in [format!("{search} --quiet | cat > /dev/null"), format!("{search} --format arrow | cat > /dev/null")] {
        let (rc, _, err) = sh_in(dir.path(), &quiet);
        assert_eq!((rc, err.as_str()), (0, ""), "{quiet}");
    }
    for redirect in ["> hits.tsv", "> hits.parquet", "> /dev/null", "-o hits.arrows"] {
        let (rc, _, err) = sh_in(dir.path(), &format!("{search} {redirect}"));
        assert_eq!((rc, err.as_str()), (0, ""), "{redirect}");
    }
    let (rc, _, err) = sh_in(dir.path(), &format!("swarrow align --pairs {} | cat > /dev/null", ex("pairs.tsv")));
    assert_eq!((rc, err.as_str()), (0, note.as_str()), "align");
}

/// Issue 24, item 6: `-o /dev/null` needs no --format; man and completions are listed; the
/// --columns help names every column.
#[test]
fn discoverable_subcommands_and_columns() {
    let o = ok(&["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "-o", "/dev/null"]);
    assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    ok(&["align", "--pairs", &ex("pairs.tsv"), "-o", "/dev/null"]);
    let help = String::from_utf8_lossy(&ok(&["--help"]).stdout).to_string();
    for sub in ["search", "align", "makedb", "merge", "pairhmm", "completions", "man"] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(&format!("{sub} "))), "--help lacks {sub}:\n{help}");
    }
    for sub in ["search", "align"] {
        let help = String::from_utf8_lossy(&ok(&[sub, "--help"]).stdout).to_string();
        let columns = help.split("--columns").nth(1).unwrap().split("\n  -").next().unwrap().to_string();
        for name in ["qheader", "theader", "qcovhsp", "qcov", "cigar", "std"] {
            assert!(columns.contains(name), "{sub} --columns help lacks {name}:\n{columns}");
        }
    }
}

/// Issue 24, item 4: nothing half-written on failure, and an empty input is a valid, empty
/// output (exit 0, a note) in every format.
#[test]
fn failures_leave_stdout_empty_and_empty_inputs_give_empty_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("empty.fa"), "").unwrap();
    fs::write(d.join("reads.fq"), "@r1\nMKVL\n+\nIII\nII\n").unwrap();
    let db = ex("db.fasta.gz");
    // The commands: empty queries into Parquet and TSV.
    let (rc, _, err) = sh_in(d, &format!("swarrow search -q empty.fa -d {db} > e.parquet"));
    assert_eq!(rc, 0, "{err}");
    assert_eq!(err, "swarrow: note: empty.fa: no queries; wrote an empty result\n");
    let file = fs::File::open(d.join("e.parquet")).unwrap();
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    assert_eq!(builder.metadata().file_metadata().num_rows(), 0);
    assert_eq!(builder.schema().field(0).name(), "query");
    assert_eq!(builder.schema().metadata().get("mode").map(String::as_str), Some("search"));
    let (rc, _, _) = sh_in(d, &format!("swarrow search -q empty.fa -d {db} > e.tsv"));
    assert_eq!(rc, 0);
    assert_eq!(
        fs::read_to_string(d.join("e.tsv")).unwrap(),
        "query\ttarget\tscore\tbits\tevalue\tqstart\tqend\ttstart\ttend\tqlen\ttlen\trecomputed\trank\tqnum\n"
    );
    // align on an empty stdin: a schema, exit 0 (it wrote a schema and exited 2).
    let (rc, out, err) = sh_in(d, "printf '' | swarrow align --pairs - --quiet");
    assert_eq!((rc, err.as_str()), (0, ""));
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(out), None).unwrap();
    assert_eq!(reader.schema().field(2).name(), "score");
    assert_eq!(reader.count(), 0);
    let (rc, _, err) = sh_in(d, "printf '' | swarrow align --pairs - --format tsv > a.tsv");
    assert_eq!((rc, err.as_str()), (0, "swarrow: note: <stdin>: no pairs; wrote an empty result\n"));
    assert!(fs::read_to_string(d.join("a.tsv")).unwrap().starts_with("query\ttarget\tscore\t"));
    let (rc, _, _) = sh_in(d, "swarrow align -q empty.fa -t empty.fa > a.parquet");
    assert_eq!(rc, 0);
    assert!(fs::read(d.join("a.parquet")).unwrap().ends_with(b"PAR1"));
    // Errors leave nothing: a damaged FASTQ query, in every format.
    for out in ["fq.parquet", "fq.tsv", "fq.arrows", "fq.m8"] {
        let (rc, _, err) = sh_in(d, &format!("swarrow search -q reads.fq -d {db} > {out}"));
        assert_eq!(rc, 2, "{err}");
        assert!(err.contains("reads.fq: record 1 (r1): line 5: 5 qualities for 4 residues"), "{err}");
        assert_eq!(fs::metadata(d.join(out)).unwrap().len(), 0, "{out}: bytes on stdout before the error");
    }
    // A bad pairhmm table (3 base qualities for 4 bases).
    let header = "read\tread_bases\tbase_quals\tins_quals\tdel_quals\thaplotype\thap_bases\n";
    fs::write(d.join("bad.tsv"), format!("{header}r1\tACGT\tIII\tIIII\tIIII\th1\tACGTT\n")).unwrap();
    for out in ["ph.parquet", "ph.tsv"] {
        let (rc, _, err) = sh_in(d, &format!("swarrow pairhmm --pairs bad.tsv > {out}"));
        assert_eq!(rc, 2, "{err}");
        assert!(err.contains("bad.tsv: record 1 (r1): 3 base qualities for 4 bases"), "{err}");
        assert_eq!(fs::metadata(d.join(out)).unwrap().len(), 0, "{out}");
    }
    // pairhmm: an empty table is an empty result; the engine is named only with -v.
    fs::write(d.join("none.tsv"), header).unwrap();
    let (rc, _, err) = sh_in(d, "swarrow pairhmm --pairs none.tsv --format tsv > none.out");
    assert_eq!((rc, err.as_str()), (0, "swarrow: note: none.tsv: no pairs; wrote an empty result\n"));
    fs::write(d.join("one.tsv"), format!("{header}r1\tACGT\tIIII\tIIII\tIIII\th1\tACGTT\n")).unwrap();
    let (rc, _, err) = sh_in(d, "swarrow pairhmm --pairs one.tsv --format tsv > one.out");
    assert_eq!((rc, err.as_str()), (0, ""), "pairhmm is silent about its engine without -v");
    let (rc, _, err) = sh_in(d, "swarrow pairhmm --pairs one.tsv --format tsv -v > one.out");
    assert_eq!(rc, 0);
    assert!(err.contains("computing likelihoods on "), "{err}");
}

/// `-o /dev/stdout` (and `/dev/fd/1`) into a pipe writes to the pipe: the kernel resolves
/// those links to `pipe:[N]`, not to a path, so they must not be written beside as a file.
/// Oracle: the same command with no `-o`.
#[test]
fn dev_stdout_as_output_writes_to_the_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let align = format!("swarrow align --pairs {} --device cpu --format tsv", ex("pairs.tsv"));
    let (rc, plain, err) = sh_in(dir.path(), &format!("{align} | cat"));
    assert_eq!((rc, err.as_str()), (0, ""));
    assert!(plain.starts_with(b"query\t"));
    for dev in ["/dev/stdout", "/dev/fd/1"] {
        let (rc, out, err) = sh_in(dir.path(), &format!("{align} -o {dev} | cat"));
        assert_eq!((rc, err.as_str()), (0, ""), "{dev}");
        assert_eq!(out, plain, "{dev}");
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written beside");
}

/// Issue 35, item 13: `search ... | cut -f1,2 | sort | uniq | wc -l` from a terminal: the
/// note that the pipe gets binary stays on the screen as a line of its own, above the progress
/// line (a note printed beside the line was joined to a frame and went with it), and says
/// what to type.
#[test]
fn the_pipe_note_stays_on_the_screen_beside_the_progress_line() {
    let dir = tempfile::tempdir().unwrap();
    random_fasta(&dir.path().join("q.fasta"), "q", 20, 300, 5);
    // A database that takes a few frames to load and search.
    random_fasta(&dir.path().join("db.fasta"), "t", 6000, 250, 6);
    let cmd =
        format!("{} search -q q.fasta -d db.fasta --device cpu -e 1e6 | cut -f1,2 | sort | uniq | wc -l", bin_path());
    let Some(screen) = under_pty(dir.path(), &cmd) else { return };
    assert!(screen.contains("\r\x1b[2K"), "no progress frames drawn: {screen:?}");
    let visible: Vec<&str> =
        screen.lines().map(|l| l.rsplit("\r\x1b[2K").next().unwrap().trim_end_matches('\r')).collect();
    let notes: Vec<&&str> = visible.iter().filter(|l| l.contains("Arrow IPC stream")).collect();
    assert_eq!(notes.len(), 1, "the note once, whole, on a line of its own:\n{visible:#?}\n{screen:?}");
    assert!(notes[0].starts_with("swarrow: note: stdout is a pipe") && notes[0].contains("--format tsv"), "{notes:?}");
    let at = |text: &str| visible.iter().position(|l| l.contains(text));
    assert!(at("Arrow IPC stream") < at("swarrow: 20 queries"), "the note comes before the summary: {visible:#?}");
}

/// Issue 35, items 9, 11 and 12: DIAMOND's unquoted `--outfmt 6 qseqid sseqid ...` (search and
/// align), DIAMOND's `--out`, and `-o` names whose extension swarrow does not know (BLAST
/// users' `.out`, `.blast6`, none) writing TSV as the same name behind `>` does.
#[test]
fn diamond_fields_unquoted_out_and_unknown_extensions() {
    let (q, d) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let search = ["search", "-q", &q, "-d", &d, "--device", "cpu"];
    let quoted = ok(&[&search[..], &["--outfmt", "6 qseqid sseqid pident qcovhsp", "-k", "2"]].concat());
    let unquoted = ok(&[&search[..], &["--outfmt", "6", "qseqid", "sseqid", "pident", "qcovhsp", "-k", "2"]].concat());
    assert_eq!(unquoted.stdout, quoted.stdout);
    let text = String::from_utf8_lossy(&unquoted.stdout).to_string();
    assert_eq!(text.lines().count(), 12, "2 hits of each of 6 queries: {text}");
    assert!(text.lines().all(|l| l.split('\t').count() == 4), "{text}");
    let blast = ok(&[&search[..], &["-outfmt", "6", "std", "qlen", "-k", "1"]].concat());
    assert!(String::from_utf8_lossy(&blast.stdout).lines().all(|l| l.split('\t').count() == 13));
    let align = ["align", "-q", &ex("pair-queries.fasta"), "-t", &ex("pair-targets.fasta"), "--device", "cpu"];
    let o = ok(&[&align[..], &["--outfmt", "6", "qseqid", "sseqid", "score"]].concat());
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(text.lines().count(), 20, "{text}");
    assert!(text.lines().all(|l| l.split('\t').count() == 3), "{text}");
    // An unknown field is named, not taken for a stray argument.
    let o = run(&[&search[..], &["--outfmt", "6", "qseqid", "staxids"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown column 'staxids'"));

    let dir = tempfile::tempdir().unwrap();
    let line = format!("swarrow search -q {q} -d {d} --device cpu");
    let redirected = shell(dir.path(), &format!("{line} > redirected.out"));
    assert!(redirected.status.success());
    let want = fs::read(dir.path().join("redirected.out")).unwrap();
    assert!(want.starts_with(b"query\ttarget\tscore\t"), "{}", String::from_utf8_lossy(&want));
    for (option, name) in
        [("-o", "hits.out"), ("-o", "hits.blast6"), ("-o", "hits"), ("--out", "out.tsv"), ("--out", "x.out")]
    {
        let o = shell(dir.path(), &format!("{line} {option} {name}"));
        assert!(o.status.success(), "{option} {name}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(fs::read(dir.path().join(name)).unwrap(), want, "{option} {name}");
    }
}

/// Issue 35, item 10: `-outfmt 7` is BLAST tabular with BLAST's comment lines around each
/// query's lines (their exact form is checked against blastp in tests/blast.rs): the lines
/// themselves are those of `-outfmt 6`, every query is listed, and align refuses it.
#[test]
fn outfmt_7_is_outfmt_6_with_comment_lines_per_query() {
    let dir = tempfile::tempdir().unwrap();
    let queries = dir.path().join("q.fasta");
    let mut text = fs::read_to_string(ex("queries.fasta")).unwrap();
    text.push_str(">no_hit nothing like it\nWWWWWWWWWWWW\n");
    fs::write(&queries, text).unwrap();
    let q = queries.to_str().unwrap().to_string();
    let search = ["search", "-q", &q, "-d", &ex("db.fasta.gz"), "--device", "cpu", "-e", "1e-5"];
    let six = String::from_utf8(ok(&[&search[..], &["--outfmt", "6"]].concat()).stdout).unwrap();
    let seven = String::from_utf8(ok(&[&search[..], &["-outfmt", "7"]].concat()).stdout).unwrap();
    let data: Vec<&str> = seven.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(data, six.lines().collect::<Vec<_>>());
    let titles: Vec<&str> = seven.lines().filter_map(|l| l.strip_prefix("# Query: ")).collect();
    assert_eq!(titles.len(), 7, "{seven}");
    assert_eq!(titles[6], "no_hit nothing like it");
    assert!(seven.contains("# Query: no_hit nothing like it\n# Database: db.fasta.gz\n# 0 hits found\n"), "{seven}");
    assert!(seven.ends_with("# BLAST processed 7 queries\n"), "{seven}");
    let o = run(&["align", "--pairs", &ex("pairs.tsv"), "--outfmt", "7"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--outfmt 6"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 44, item 4: a word that starts like a BLAST+ option is read in BLAST's meaning
/// (`-out=x.tsv`, `-evalue=1e-5`) or refused naming it, never split into a short option with
/// a glued value (`-outfmt6` as `-o utfmt6` wrote a file named `utfmt6`).
#[test]
fn blast_spellings_are_never_split_into_short_options() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (q, db) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let files = |d: &Path| {
        let mut v: Vec<String> =
            fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    };
    let search = |extra: &[&str]| {
        bin()
            .current_dir(d)
            .args([&["search", "-q", &q, "-d", &db, "--device", "cpu"][..], extra].concat())
            .output()
            .unwrap()
    };
    for (words, needle) in [
        (&["-outfmt6"][..], "'-outfmt6' is BLAST's -outfmt glued to its value: write '-outfmt 6'"),
        (&["-outfmt7"][..], "'-outfmt7' is BLAST's -outfmt glued to its value"),
        (&["-outx.tsv"][..], "'-outx.tsv' is BLAST's -out glued to its value"),
        (&["-evalue1e-5"][..], "BLAST's -evalue glued"),
        (&["-max_hsps", "1"][..], "'-max_hsps': BLAST+'s -max_hsps is not an option of swarrow"),
        (&["-max_hsps=1"][..], "BLAST+'s -max_hsps is not an option of swarrow"),
        (&["-task", "blastp"][..], "BLAST+'s -task is not an option of swarrow"),
    ] {
        let o = search(words);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{words:?}: {err}");
        assert!(err.starts_with("swarrow: error: ") && err.contains(needle), "{words:?}: {err}");
        assert!(files(d).is_empty(), "{words:?} wrote {:?}", files(d));
    }
    // The `=` forms mean what BLAST's options mean: -out=x.tsv writes x.tsv, -outfmt=6 is
    // BLAST tabular, -evalue=1e-5 cuts like -evalue 1e-5.
    let o = search(&["-out=x.tsv", "-outfmt=6", "-evalue=1e-5"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files(d), ["x.tsv"]);
    let rows = blast_rows(&fs::read(d.join("x.tsv")).unwrap());
    assert!(!rows.is_empty() && rows.iter().all(|(_, e)| *e <= 1e-5), "{rows:?}");
    // Our own glued short options still work.
    let o = search(&["-k1", "-e1e-3", "--format", "tsv"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
