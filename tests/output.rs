//! Output writers: every format read back by an independent reader (arrow's and parquet's own
//! readers, a small text parser here) and compared with the rows that went in.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int32Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;

use swarrow::engine::traceback::PathStats;
use swarrow::output::{create_writer, resolve_format, Format, Mode, ResultBatch, ResultRow, RunMetadata, Stdout};
use swarrow::Error;

/// A row as the test expects to read it back (owned, independent of the writer's types).
#[derive(Debug, Clone, PartialEq)]
struct Row {
    query: String,
    target: String,
    score: i32,
    bits: Option<f64>,
    evalue: Option<f64>,
    qstart: i32,
    qend: i32,
    tstart: i32,
    tend: i32,
    qlen: i32,
    tlen: i32,
    recomputed: bool,
    rank: Option<i32>,
}

#[allow(clippy::too_many_arguments)]
fn row(
    query: &str,
    target: &str,
    score: i32,
    bits: Option<f64>,
    evalue: Option<f64>,
    coords: [i32; 4],
    lens: [i32; 2],
    recomputed: bool,
    rank: i32,
) -> Row {
    Row {
        query: query.into(),
        target: target.into(),
        score,
        bits,
        evalue,
        qstart: coords[0],
        qend: coords[1],
        tstart: coords[2],
        tend: coords[3],
        qlen: lens[0],
        tlen: lens[1],
        recomputed,
        rank: Some(rank),
    }
}

/// Two batches: nulls, a zero-score row (coordinates 0), tiny and huge e-values, non-ASCII ids.
fn sample(mode: Mode) -> Vec<Vec<Row>> {
    let mut batches = vec![
        vec![
            row("q1", "sp|P1|A", 57, Some(25.44), Some(1.5e-5), [1, 30, 2, 31], [30, 40], false, 1),
            row("q1", "t3", 12, None, None, [4, 9, 7, 12], [30, 12], true, 2),
            row("q1", "t9", 0, Some(0.0), Some(12.3), [0, 0, 0, 0], [30, 5], false, 3),
        ],
        vec![
            row("q2_\u{fc}", "t1", 2100, Some(812.7), Some(0.0), [3, 700, 1, 698], [701, 698], false, 1),
            row("q2_\u{fc}", "t2", 31, Some(9.54), Some(3.2e-190), [5, 20, 5, 20], [701, 20], false, 2),
            row("q3", "t4", 40, Some(17.2), Some(0.567), [1, 8, 1, 8], [8, 8], false, 1),
        ],
    ];
    if mode == Mode::Align {
        for r in batches.iter_mut().flatten() {
            r.rank = None;
        }
    }
    batches
}

/// The rows as a writer batch; search rows (with a rank) numbered by query, the batch's
/// first query being query `first` + 1 of the input. Returns the queries numbered so far.
fn to_batch_from(rows: &[Row], first: u64) -> (ResultBatch, u64) {
    let mut batch = ResultBatch::new();
    for r in rows {
        batch.push(ResultRow {
            query: &r.query,
            target: &r.target,
            score: r.score,
            bits: r.bits,
            evalue: r.evalue,
            qstart: r.qstart,
            qend: r.qend,
            tstart: r.tstart,
            tend: r.tend,
            qlen: r.qlen,
            tlen: r.tlen,
            recomputed: r.recomputed,
            rank: r.rank.unwrap_or(0),
        });
        batch.push_stats(stats_of(r));
    }
    let mut next = first;
    if rows.iter().all(|r| r.rank.is_some()) {
        let mut k = 0;
        while k < rows.len() {
            let n = rows[k..].iter().take_while(|r| r.query == rows[k].query).count();
            batch.push_query(&rows[k].query, n);
            k += n;
        }
        next = batch.number_queries(first).unwrap();
    }
    (batch, next)
}

fn to_batch(rows: &[Row]) -> ResultBatch {
    to_batch_from(rows, 0).0
}

/// Made-up traceback statistics of a sample row (BLAST tabular needs them): the shorter span
/// in pairs, three in four identical, one gap where the spans differ.
fn stats_of(r: &Row) -> PathStats {
    if r.score == 0 {
        return PathStats::default();
    }
    let (m, n) = ((r.qend - r.qstart + 1) as u32, (r.tend - r.tstart + 1) as u32);
    let pairs = m.min(n);
    PathStats::from_counts(pairs, pairs * 3 / 4, (m != n) as u32, m, n)
}

fn metadata(mode: Mode) -> RunMetadata {
    let mut m = RunMetadata::new();
    m.push("swarrow.version", "0.1.0");
    m.push("swarrow.mode", mode.as_str());
    m.push("swarrow.scoring", "BLOSUM62");
    m.push("swarrow.gap_open", "11");
    m.push("swarrow.gap_extend", "1");
    m
}

/// Writes the sample through `format` into `dir/name` and returns the path.
fn write_sample(dir: &Path, name: &str, format: Format, mode: Mode) -> PathBuf {
    let path = dir.join(name);
    let mut writer = create_writer(format, mode, &metadata(mode), Some(&path)).unwrap();
    let mut queries = 0;
    for rows in sample(mode) {
        let (batch, next) = to_batch_from(&rows, queries);
        writer.write(&batch).unwrap();
        queries = next;
    }
    writer.finish().unwrap();
    path
}

const COLUMNS: [&str; 12] =
    ["query", "target", "score", "bits", "evalue", "qstart", "qend", "tstart", "tend", "qlen", "tlen", "recomputed"];

fn expected_names(mode: Mode) -> Vec<&'static str> {
    let mut names = COLUMNS.to_vec();
    if mode == Mode::Search {
        names.extend(["rank", "qnum"]);
    }
    names
}

/// Checks names, types and nullability of an Arrow schema read back from a file.
fn check_schema(schema: &arrow::datatypes::Schema, mode: Mode) {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, expected_names(mode));
    for field in schema.fields() {
        let (ty, nullable) = match field.name().as_str() {
            "query" | "target" => (DataType::Utf8, false),
            "bits" | "evalue" => (DataType::Float64, true),
            "recomputed" => (DataType::Boolean, false),
            _ => (DataType::Int32, false),
        };
        assert_eq!(field.data_type(), &ty, "{}", field.name());
        assert_eq!(field.is_nullable(), nullable, "{}", field.name());
    }
}

fn rows_from_arrow(batches: &[RecordBatch], mode: Mode) -> Vec<Row> {
    let mut rows = Vec::new();
    for b in batches {
        let col = |name: &str| b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}"));
        let text = |name: &str| col(name).as_string::<i32>().clone();
        let int = |name: &str| col(name).as_primitive::<Int32Type>().clone();
        let float = |name: &str| col(name).as_primitive::<Float64Type>().clone();
        let (query, target) = (text("query"), text("target"));
        let (bits, evalue) = (float("bits"), float("evalue"));
        let recomputed = col("recomputed").as_boolean().clone();
        let ints: Vec<_> =
            ["score", "qstart", "qend", "tstart", "tend", "qlen", "tlen"].iter().map(|n| int(n)).collect();
        let rank = (mode == Mode::Search).then(|| int("rank"));
        let opt = |a: &arrow::array::Float64Array, i: usize| a.is_valid(i).then(|| a.value(i));
        for i in 0..b.num_rows() {
            rows.push(Row {
                query: query.value(i).into(),
                target: target.value(i).into(),
                score: ints[0].value(i),
                bits: opt(&bits, i),
                evalue: opt(&evalue, i),
                qstart: ints[1].value(i),
                qend: ints[2].value(i),
                tstart: ints[3].value(i),
                tend: ints[4].value(i),
                qlen: ints[5].value(i),
                tlen: ints[6].value(i),
                recomputed: recomputed.value(i),
                rank: rank.as_ref().map(|r| r.value(i)),
            });
        }
    }
    rows
}

fn all_rows(mode: Mode) -> Vec<Row> {
    sample(mode).into_iter().flatten().collect()
}

fn check_metadata_keys<'a>(found: impl Fn(&str) -> Option<&'a String>, mode: Mode) {
    for (k, v) in metadata(mode).iter() {
        assert_eq!(found(k).map(String::as_str), Some(v), "metadata {k}");
    }
}

#[test]
fn arrow_stream_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [Mode::Search, Mode::Align] {
        let path = write_sample(dir.path(), "out.arrows", Format::ArrowStream, mode);
        let reader = arrow::ipc::reader::StreamReader::try_new(File::open(&path).unwrap(), None).unwrap();
        let schema = reader.schema();
        check_schema(&schema, mode);
        check_metadata_keys(|k| schema.metadata().get(k), mode);
        let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
        assert_eq!(batches.len(), 2, "one IPC batch per written batch");
        assert_eq!(rows_from_arrow(&batches, mode), all_rows(mode));
    }
}

#[test]
fn arrow_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [Mode::Search, Mode::Align] {
        let path = write_sample(dir.path(), "out.arrow", Format::ArrowFile, mode);
        let reader = arrow::ipc::reader::FileReader::try_new(File::open(&path).unwrap(), None).unwrap();
        let schema = reader.schema();
        check_schema(&schema, mode);
        check_metadata_keys(|k| schema.metadata().get(k), mode);
        let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
        assert_eq!(rows_from_arrow(&batches, mode), all_rows(mode));
    }
}

#[test]
fn parquet_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [Mode::Search, Mode::Align] {
        let path = write_sample(dir.path(), "out.parquet", Format::Parquet, mode);
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        check_schema(builder.schema(), mode);
        let schema = builder.schema().clone();
        check_metadata_keys(|k| schema.metadata().get(k), mode);

        let meta = builder.metadata().clone();
        let key_values: std::collections::HashMap<String, String> = meta
            .file_metadata()
            .key_value_metadata()
            .expect("parquet key-value metadata")
            .iter()
            .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
            .collect();
        check_metadata_keys(|k| key_values.get(k), mode);
        assert_eq!(meta.file_metadata().num_rows(), 6);
        for group in meta.row_groups() {
            for column in group.columns() {
                assert!(
                    matches!(column.compression(), Compression::ZSTD(_)),
                    "{}: {:?}",
                    column.column_path(),
                    column.compression()
                );
                assert!(column.statistics().is_some(), "{}: no statistics", column.column_path());
            }
        }

        let batches: Vec<RecordBatch> = builder.build().unwrap().map(|b| b.unwrap()).collect();
        assert_eq!(rows_from_arrow(&batches, mode), all_rows(mode));
    }
}

/// Fields of `line`, split on tabs; the line must end with a newline.
fn fields(line: &str) -> Vec<&str> {
    line.split('\t').collect()
}

fn text_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "text output must end with a newline");
    text.lines().map(str::to_string).collect()
}

fn parse_opt(field: &str, null: &str) -> Option<f64> {
    if field == null {
        None
    } else {
        Some(field.trim().parse().unwrap_or_else(|e| panic!("{field:?}: {e}")))
    }
}

#[test]
fn tsv_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [Mode::Search, Mode::Align] {
        let path = write_sample(dir.path(), "out.tsv", Format::Tsv, mode);
        let lines = text_lines(&path);
        assert_eq!(fields(&lines[0]), expected_names(mode), "header line");
        let expected = all_rows(mode);
        assert_eq!(lines.len(), 1 + expected.len());
        for (line, want) in lines[1..].iter().zip(&expected) {
            let f = fields(line);
            assert_eq!(f.len(), expected_names(mode).len(), "{line}");
            let int = |i: usize| f[i].parse::<i32>().unwrap();
            let got = Row {
                query: f[0].into(),
                target: f[1].into(),
                score: int(2),
                bits: parse_opt(f[3], ""),
                evalue: parse_opt(f[4], ""),
                qstart: int(5),
                qend: int(6),
                tstart: int(7),
                tend: int(8),
                qlen: int(9),
                tlen: int(10),
                recomputed: match f[11] {
                    "true" => true,
                    "false" => false,
                    other => panic!("recomputed {other:?}"),
                },
                rank: (mode == Mode::Search).then(|| int(12)),
            };
            // bits carry one decimal; e-values are rounded as BLAST rounds them (3 significant
            // digits or 1-3 decimals, 0 below 1e-180); everything else is exact.
            match (got.bits, want.bits) {
                (Some(g), Some(w)) => assert!((g - w).abs() <= 0.05 + 1e-12, "bits {g} vs {w}"),
                (g, w) => assert_eq!(g, w),
            }
            match (got.evalue, want.evalue) {
                (Some(g), Some(w)) if w < 1e-180 => assert_eq!(g, 0.0),
                (Some(g), Some(w)) => assert!((g - w).abs() <= blast_evalue_rounding(w), "evalue {g} vs {w}"),
                (g, w) => assert_eq!(g, w),
            }
            assert_eq!(f[3].split('.').nth(1).map(str::len).unwrap_or(1), 1, "bits {}", f[3]);
            assert_eq!(Row { bits: want.bits, evalue: want.evalue, ..got }, *want);
        }
    }
}

/// The largest rounding error of BLAST's e-value format for `w`: 3 significant digits in
/// scientific notation, else 3, 2, 1 or 0 decimals.
fn blast_evalue_rounding(w: f64) -> f64 {
    let half_unit = if w < 0.0009 {
        0.005 * w
    } else if w < 0.1 {
        0.0005
    } else if w < 1.0 {
        0.005
    } else if w < 10.0 {
        0.05
    } else {
        0.5
    };
    half_unit * (1.0 + 1e-9)
}

#[test]
fn blast_tabular_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [Mode::Search, Mode::Align] {
        let path = write_sample(dir.path(), "out.m8", Format::Blast, mode);
        let lines = text_lines(&path);
        let expected = all_rows(mode);
        assert_eq!(lines.len(), expected.len(), "no header line");
        for (line, want) in lines.iter().zip(&expected) {
            // qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore
            let f = fields(line);
            assert_eq!(f.len(), 12, "{line}");
            let int = |i: usize| f[i].parse::<i32>().unwrap();
            assert_eq!((f[0], f[1]), (want.query.as_str(), want.target.as_str()));
            let st = stats_of(want);
            assert_eq!(f[2], format!("{:.3}", st.pident()));
            assert_eq!([int(3), int(4), int(5)], [st.length as i32, st.mismatch as i32, st.gapopen as i32]);
            let got = [int(6), int(7), int(8), int(9)];
            assert_eq!(got, [want.qstart, want.qend, want.tstart, want.tend]);
            // BLAST rounds: bit scores to 0.1 (or to an integer above 99.9), e-values to 3
            // significant digits, and everything below 1e-180 to 0.
            match (parse_opt(f[11], "*"), want.bits) {
                (Some(g), Some(w)) => assert!((g - w).abs() <= 1.0, "bitscore {g} vs {w}"),
                (g, w) => assert_eq!(g, w),
            }
            match (parse_opt(f[10], "*"), want.evalue) {
                (Some(g), Some(w)) if w < 1e-180 => assert_eq!(g, 0.0),
                (Some(g), Some(w)) => {
                    assert!((g - w).abs() <= blast_evalue_rounding(w), "evalue {g} vs {w}")
                }
                (g, w) => assert_eq!(g, w),
            }
        }
        // Hand-checked against BLAST's printf formats (%.2e, %4.1f, %3ld, %3.2f, 0.0).
        assert_eq!(lines[0], "q1\tsp|P1|A\t73.333\t30\t8\t0\t1\t30\t2\t31\t1.50e-05\t25.4");
        assert_eq!(lines[1], "q1\tt3\t66.667\t6\t2\t0\t4\t9\t7\t12\t*\t*");
        assert_eq!(lines[3], "q2_\u{fc}\tt1\t74.928\t698\t175\t0\t3\t700\t1\t698\t0.0\t812");
        assert_eq!(lines[4], "q2_\u{fc}\tt2\t75.000\t16\t4\t0\t5\t20\t5\t20\t0.0\t 9.5");
        assert_eq!(lines[5], "q3\tt4\t75.000\t8\t2\t0\t1\t8\t1\t8\t0.57\t17.2");
    }
}

#[test]
fn empty_outputs_are_valid_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.parquet");
    create_writer(Format::Parquet, Mode::Search, &metadata(Mode::Search), Some(&p)).unwrap().finish().unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&p).unwrap()).unwrap();
    check_schema(builder.schema(), Mode::Search);
    assert_eq!(builder.metadata().file_metadata().num_rows(), 0);

    let p = dir.path().join("empty.arrows");
    create_writer(Format::ArrowStream, Mode::Align, &metadata(Mode::Align), Some(&p)).unwrap().finish().unwrap();
    let reader = arrow::ipc::reader::StreamReader::try_new(File::open(&p).unwrap(), None).unwrap();
    check_schema(&reader.schema(), Mode::Align);
    assert_eq!(reader.count(), 0);

    let p = dir.path().join("empty.tsv");
    create_writer(Format::Tsv, Mode::Align, &metadata(Mode::Align), Some(&p)).unwrap().finish().unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{}\n", COLUMNS.join("\t")));
}

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn file_output_appears_only_when_finished() {
    let dir = tempfile::tempdir().unwrap();
    for (format, name) in [
        (Format::Parquet, "a.parquet"),
        (Format::ArrowFile, "a.arrow"),
        (Format::ArrowStream, "a.arrows"),
        (Format::Tsv, "a.tsv"),
        (Format::Blast, "a.m8"),
    ] {
        let target = dir.path().join(name);
        let temp = format!(".{name}.swarrow-tmp-{}-", std::process::id());
        let mut writer = create_writer(format, Mode::Search, &metadata(Mode::Search), Some(&target)).unwrap();
        writer.write(&to_batch(&sample(Mode::Search)[0])).unwrap();
        let entries = dir_entries(dir.path());
        assert!(entries.len() == 1 && entries[0].starts_with(&temp), "{format}: only the temporary file: {entries:?}");
        writer.finish().unwrap();
        assert_eq!(dir_entries(dir.path()), vec![name.to_string()], "{format}: renamed");
        std::fs::remove_file(&target).unwrap();
    }
}

#[test]
fn dropped_writer_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    // An older result under the same name must survive a failed run untouched.
    let old = dir.path().join("old.tsv");
    std::fs::write(&old, "previous result\n").unwrap();
    for (format, name) in [
        (Format::Parquet, "b.parquet"),
        (Format::ArrowFile, "b.arrow"),
        (Format::ArrowStream, "b.arrows"),
        (Format::Tsv, "old.tsv"),
        (Format::Blast, "b.m8"),
    ] {
        let target = dir.path().join(name);
        let mut writer = create_writer(format, Mode::Align, &metadata(Mode::Align), Some(&target)).unwrap();
        writer.write(&to_batch(&sample(Mode::Align)[1])).unwrap();
        drop(writer); // an error happened upstream: no finish()
        assert_eq!(dir_entries(dir.path()), vec!["old.tsv".to_string()], "{format}");
    }
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "previous result\n");
}

fn input_error_message(result: swarrow::Result<Box<dyn swarrow::output::ResultWriter>>) -> String {
    match result {
        Err(e @ Error::Input(_)) => {
            assert_eq!(e.exit_code(), 2);
            e.to_string()
        }
        Err(e) => panic!("expected an input error, got {e:?}"),
        Ok(_) => panic!("expected an input error, got a writer"),
    }
}

#[test]
fn missing_or_unusable_output_directory_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let meta = metadata(Mode::Search);

    let missing = dir.path().join("no_such_dir").join("out.parquet");
    let msg = input_error_message(create_writer(Format::Parquet, Mode::Search, &meta, Some(&missing)));
    assert!(msg.contains(&missing.display().to_string()), "{msg}");
    assert!(msg.contains("does not exist"), "{msg}");

    let file = dir.path().join("plain_file");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("out.tsv");
    let msg = input_error_message(create_writer(Format::Tsv, Mode::Search, &meta, Some(&under_file)));
    assert!(msg.contains("not a directory"), "{msg}");

    let msg = input_error_message(create_writer(Format::Tsv, Mode::Search, &meta, Some(dir.path())));
    assert!(msg.contains("is a directory"), "{msg}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        // root ignores permission bits: only check where the directory really is read-only.
        let probe = locked.join("probe");
        if std::fs::write(&probe, "").is_ok() {
            std::fs::remove_file(&probe).unwrap();
            eprintln!("running with permission to write anywhere: read-only case skipped");
        } else {
            let target = locked.join("out.arrow");
            let msg = input_error_message(create_writer(Format::ArrowFile, Mode::Search, &meta, Some(&target)));
            assert!(msg.contains(&target.display().to_string()), "{msg}");
            assert!(msg.contains("not writable"), "{msg}");
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn format_names_parse_and_unknown_names_list_the_choices() {
    let names = [
        ("arrow", Format::ArrowStream),
        ("arrow-file", Format::ArrowFile),
        ("parquet", Format::Parquet),
        ("tsv", Format::Tsv),
        ("blast", Format::Blast),
        ("Parquet", Format::Parquet),
    ];
    for (name, format) in names {
        assert_eq!(Format::parse(name).unwrap(), format, "{name}");
    }
    let err = Format::parse("csv").unwrap_err();
    assert_eq!(err.exit_code(), 2);
    let msg = err.to_string();
    for name in ["csv", "arrow", "arrow-file", "parquet", "tsv", "blast"] {
        assert!(msg.contains(name), "{msg}");
    }
}

#[test]
fn format_resolution_table() {
    use Format::*;
    let p = |s: &'static str| Some(Path::new(s));
    let cases: [(Option<Format>, Option<&Path>, bool, Format); 21] = [
        // --format wins over everything but a binary format's name (refused below)
        (Some(Tsv), p("x.out"), false, Tsv),
        (Some(Parquet), None, true, Parquet),
        (Some(Blast), p("-"), false, Blast),
        // by extension (case-insensitive), whatever the terminal
        (None, p("out.parquet"), true, Parquet),
        (None, p("out.pq"), false, Parquet),
        (None, p("dir/out.PARQUET"), false, Parquet),
        (None, p("out.arrows"), false, ArrowStream),
        (None, p("out.arrow"), true, ArrowFile),
        (None, p("out.ipc"), false, ArrowFile),
        (None, p("out.feather"), false, ArrowFile),
        (None, p("out.tsv"), false, Tsv),
        (None, p("out.txt"), false, Tsv),
        (None, p("out.m8"), false, Blast),
        (None, p("out.blast"), false, Blast),
        (None, p("out.tab"), false, Blast),
        (None, p("a.b.tsv"), false, Tsv),
        // standard output: a stream into pipes, text onto terminals
        (None, None, false, ArrowStream),
        (None, None, true, Tsv),
        (None, p("-"), false, ArrowStream),
        (None, p("-"), true, Tsv),
        (Some(ArrowFile), None, false, ArrowFile),
    ];
    for (explicit, output, terminal, want) in cases {
        let stdout = if terminal { Stdout::Terminal } else { Stdout::Pipe };
        assert_eq!(
            resolve_format(explicit, output, &stdout).unwrap(),
            want,
            "{explicit:?} {output:?} terminal={terminal}"
        );
    }
    // Other names are text, as the same name behind `>` is (BLAST users write .out, .m8, .txt).
    for other in ["out.csv", "results", "hits.out"] {
        assert_eq!(resolve_format(None, Some(Path::new(other)), &Stdout::Pipe).unwrap(), Tsv, "{other}");
    }
    // A compressed name would hold plain data, and a binary format's name another format
    // (issue 44, item 16): refused; text formats take each other's names.
    for (explicit, name) in
        [(None, "out.parquet.gz"), (None, "hits.tsv.gz"), (Some(Tsv), "out.parquet"), (Some(Parquet), "o.arrow")]
    {
        assert!(resolve_format(explicit, Some(Path::new(name)), &Stdout::Pipe).is_err(), "{explicit:?} {name}");
    }
    assert_eq!(resolve_format(Some(Blast), Some(Path::new("hits.tsv")), &Stdout::Pipe).unwrap(), Blast);
}

/// Issue 44, item 10: Parquet (and Arrow) outputs are the same bytes whatever --threads is:
/// no run detail that varies with it (the engine's thread count) is in the metadata.
#[test]
fn outputs_are_the_same_bytes_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let examples = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let (q, db) = (examples.join("queries.fasta"), examples.join("db.fasta.gz"));
    for format in ["parquet", "arrow-file"] {
        let mut outputs = Vec::new();
        for threads in ["1", "2", "3"] {
            let out = d.join(format!("{threads}.{format}"));
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_swarrow"))
                .args(["search", "--device", "cpu", "--quiet", "-p", threads, "--format", format, "-o"])
                .arg(&out)
                .arg("-q")
                .arg(&q)
                .arg("-d")
                .arg(&db)
                .env_remove("SWARROW_ENGINE")
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert!(outputs.iter().all(|o| *o == outputs[0]), "{format}: bytes differ with --threads");
        assert!(!outputs[0].windows(7).any(|w| w == b"threads"), "{format}: a thread count in the metadata");
    }
}
