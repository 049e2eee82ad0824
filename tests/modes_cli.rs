//! `swarrow align --mode global|semi-global` (issue 42) on the CPU: hand-checked rows, null
//! bits and E-values, and the usage errors. The modes themselves are checked against
//! parasail in `modes_parasail.rs`.

mod common;
use common::*;

/// TSV rows of `align` on `pairs` (TSV input) with `args`; the header dropped.
fn align(pairs: &str, args: &[&str]) -> Vec<Vec<String>> {
    let mut all = vec![
        "align",
        "--pairs",
        "-",
        "--device",
        "cpu",
        "--quiet",
        "--format",
        "tsv",
        "--columns",
        "query,score,bits,evalue,qstart,qend,tstart,tend,cigar,qaln,taln",
    ];
    all.extend_from_slice(args);
    let o = run_stdin(&all, pairs.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap().lines().skip(1).map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

const PAIRS: &str = "p1\tHEAG\tt1\tHEA\np2\tW\tt2\tHEAGW\np3\tACDEF\tt3\tGGACDEFGG\n";

#[test]
fn global_rows_are_the_whole_sequences_without_statistics() {
    // BLOSUM62 11/1: HEAG/HEA- 17 - 12 = 5; ----W/HEAGW 11 - 15 = -4; ACDEF against
    // GGACDEFGG globally: 4 + 9 + 6 + 5 + 6 = 30 less two 2-gaps (13 each) = 4.
    let rows = align(PAIRS, &["--mode", "global"]);
    let want = [
        ["p1", "5", "", "", "1", "4", "1", "3", "3=1I", "HEAG", "HEA-"],
        ["p2", "-4", "", "", "1", "1", "1", "5", "4D1=", "----W", "HEAGW"],
        ["p3", "4", "", "", "1", "5", "1", "9", "2D5=2D", "--ACDEF--", "GGACDEFGG"],
    ];
    assert_eq!(rows, want.map(|r| r.map(str::to_string).to_vec()).to_vec());
}

#[test]
fn semi_global_frees_the_named_ends() {
    // The query inside the target: the target's ends are free.
    let rows = align(PAIRS, &["--mode", "semi-global", "--free-ends", "target-start,target-end"]);
    assert_eq!(rows[2][..9], ["p3", "30", "", "", "1", "5", "3", "7", "5="]);
    // All four free (the default): HEA against HEA.
    let rows = align(PAIRS, &["--mode", "semi-global"]);
    assert_eq!(rows[0][..9], ["p1", "17", "", "", "1", "3", "1", "3", "3="]);
}

#[test]
fn local_mode_is_the_default_and_unchanged() {
    let rows = align(PAIRS, &[]);
    let explicit = align(PAIRS, &["--mode", "local"]);
    assert_eq!(rows, explicit);
    assert_eq!(rows[0][..9], ["p1", "17", rows[0][2].as_str(), rows[0][3].as_str(), "1", "3", "1", "3", "3="]);
    assert!(!rows[0][2].is_empty(), "local mode has bits");
}

/// `--device cuda` takes the modes as it takes local mode: where no GPU runs, both fail alike
/// (the GPU engine's reason, never a mode refusal); where one runs, both succeed.
#[test]
fn modes_ask_the_gpu_as_local_mode_does() {
    let run = |extra: &[&str]| {
        let mut all = vec!["align", "--pairs", "-", "--quiet", "--device", "cuda", "--format", "tsv"];
        all.extend_from_slice(extra);
        run_stdin(&all, PAIRS.as_bytes())
    };
    let local = run(&[]);
    for mode in [&["--mode", "global"][..], &["--mode", "semi-global", "--free-ends", "query-start"][..]] {
        let o = run(mode);
        assert_eq!(o.status.code(), local.status.code(), "{mode:?}: {}", stderr(&o));
        if !local.status.success() {
            assert_eq!(stderr(&o), stderr(&local), "{mode:?}");
            assert!(o.stdout.is_empty());
        }
    }
}

#[test]
fn mode_usage_errors() {
    for (args, says) in [
        (&["--mode", "glocal"][..], "unknown mode \"glocal\""),
        (&["--mode", "global", "--free-ends", "query-end"][..], "semi-global only"),
        (&["--mode", "semi-global", "--free-ends", "query-begin"][..], "unknown end \"query-begin\""),
    ] {
        let mut all = vec!["align", "--pairs", "-", "--quiet"];
        all.extend_from_slice(args);
        let o = run_stdin(&all, PAIRS.as_bytes());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}
