//! Pair inputs the end-to-end tests build: random protein pairs (half related) as TSV,
//! FASTA, an Arrow table with carried columns, Parquet and Arrow IPC.
#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};

/// A pair: query id, query residues, target id, target residues.
pub type Pair = [String; 4];

/// `n` protein pairs (xorshift, no dependency), half of them related, ids unique.
pub fn pairs(n: usize) -> Vec<Pair> {
    const AA: &[u8] = b"ACDEFGHIKLMNPQRSTVWY";
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut below = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    (0..n)
        .map(|i| {
            let q: String = (0..20 + below(160)).map(|_| AA[below(20)] as char).collect();
            let t: String = if i % 2 == 0 {
                let mut t = String::new();
                for c in q.chars() {
                    if below(10) != 0 {
                        t.push(if below(6) == 0 { AA[below(20)] as char } else { c });
                    }
                }
                t
            } else {
                (0..20 + below(160)).map(|_| AA[below(20)] as char).collect()
            };
            [format!("q{i}"), q, format!("t{i}"), t + "W"]
        })
        .collect()
}

pub fn tsv(pairs: &[Pair]) -> String {
    let mut text = String::from("query_id\tquery_seq\ttarget_id\ttarget_seq\n");
    for p in pairs {
        text.push_str(&p.join("\t"));
        text.push('\n');
    }
    text
}

pub fn fasta(pairs: &[Pair], id: usize) -> String {
    pairs.iter().map(|p| format!(">{} pair\n{}\n", p[id], p[id + 1])).collect()
}

/// The pairs as a table: the pair columns as `make` builds them from their strings, with
/// carried columns `key` (int64) and `note` (utf8) around them.
pub fn table(pairs: &[Pair], make: [&dyn Fn(Vec<&str>) -> ArrayRef; 4]) -> RecordBatch {
    let col = |k: usize| make[k](pairs.iter().map(|p| p[k].as_str()).collect());
    let key: ArrayRef = Arc::new(Int64Array::from_iter_values((0..pairs.len() as i64).map(|i| 100 + i)));
    let note: ArrayRef = Arc::new(StringArray::from_iter_values(pairs.iter().map(|p| format!("n-{}", p[0]))));
    RecordBatch::try_from_iter([
        ("key", key),
        ("query_id", col(0)),
        ("query_seq", col(1)),
        ("note", note),
        ("target_id", col(2)),
        ("target_seq", col(3)),
    ])
    .unwrap()
}

pub fn utf8(v: Vec<&str>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

/// Parquet with row groups of 37 rows: more row groups than decoding threads.
pub fn parquet(batch: &RecordBatch) -> Vec<u8> {
    let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(37)).build();
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out
}

/// An Arrow IPC stream (or file) of the batch in three record batches.
pub fn arrow_ipc(batch: &RecordBatch, file: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let parts = [batch.slice(0, 50), batch.slice(50, 200), batch.slice(250, batch.num_rows() - 250)];
    if file {
        let mut w = arrow::ipc::writer::FileWriter::try_new(&mut out, &batch.schema()).unwrap();
        parts.iter().for_each(|b| w.write(b).unwrap());
        w.finish().unwrap();
    } else {
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
        parts.iter().for_each(|b| w.write(b).unwrap());
        w.finish().unwrap();
    }
    out
}

pub fn write(dir: &Path, name: &str, data: &[u8]) -> String {
    let path = dir.join(name);
    fs::write(&path, data).unwrap();
    path.to_str().unwrap().to_string()
}
