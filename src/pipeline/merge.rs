//! `swarrow merge`: combines the outputs of sharded runs into the output one unsharded run
//! would have written.
//!
//! - Search results (a `rank` column): the global top N per query. A database split in order
//!   into shards, each searched with `--db-size`/`--db-seqs` of the whole database, gives the
//!   same scores and E-values as the whole; the unsharded ranking (score descending, then the
//!   target's position in the database) is then score descending, then shard order (the order
//!   of the inputs), then the shard's own rank. Ranks are renumbered 1..N. Queries come out
//!   in the order of the query input, by the `qnum` every shard carries (a shard may lack
//!   hits of some queries, so the shards' row order alone cannot give it).
//! - Align results (no `rank`): the shards concatenated in input order, streamed.
//!
//! Inputs are any output of `swarrow search`/`align` except BLAST tabular, read by
//! [`crate::io::results`]. Shards must agree on the run facts that make their scores and
//! E-values comparable (mode, scoring, gap costs, search space). A shard that carries no such
//! facts (TSV, or metadata stripped by another tool) cannot be checked: merge refuses it unless
//! `--trust-shards` is given, and then the merged output keeps only the metadata every shard
//! has, with a note that the settings were not checked, so it never claims what it cannot know.

use crate::error::{Error, Result, Where};
use crate::io::results::{ResultInput as Shard, Row};
use crate::output::{self, Format, Mode, ResultBatch, ResultRow, RunMetadata};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

/// Run facts every shard must share: without them scores or E-values are not comparable.
const MUST_AGREE: [&str; 5] = ["mode", "scoring", "gap_open", "gap_extend", "search_space"];

/// Run facts shards must share where they record them (outputs of older versions may not):
/// the E-value model, and the E-value cut and thresholds of a search (shards cut differently
/// would keep different hits).
const MUST_AGREE_IF_RECORDED: [&str; 3] = ["evalue_model", "max_evalue", "thresholds"];

/// Run facts a run records only where they differ from a default: a shard with run settings
/// that lacks one has the default (local mode; no thresholds), and must agree on it too, so a
/// local shard never merges under a global one's `alignment_mode`, nor a shard without
/// thresholds under another's `thresholds`.
const ABSENT_MEANS: [(&str, &str); 2] = [("alignment_mode", "local"), ("thresholds", "none")];

/// Rows per batch handed to the writer.
const WRITE_BATCH_ROWS: usize = 65_536;

/// Merges `inputs` (in shard order) into `output` (`None` = stdout) in `format`. `top` is
/// required for search results and refused for align results.
///
/// `trust_shards`: accept shards without run settings (see the module documentation).
/// `announcement` is said just before the first rows are written.
pub fn merge(
    inputs: &[PathBuf],
    top: Option<usize>,
    trust_shards: bool,
    format: Format,
    output: Option<&Path>,
    announcement: Option<output::Announcement>,
) -> Result<()> {
    if inputs.is_empty() {
        return Err(Error::usage("merge: give at least one input"));
    }
    if format.is_blast_tabular() {
        return Err(no_blast_tabular());
    }
    if format.is_alignment_format() {
        return Err(Error::usage(format!(
            "merge cannot write {format}: its fields come from the traceback and the sequences, which the shards do \
             not carry; merge into Parquet, Arrow or TSV, or write {format} in every shard and join them (PAF: cat; \
             SAM/BAM: samtools cat or merge)"
        )));
    }
    if inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Error::usage("merge: only one input can be read from stdin"));
    }
    refuse_same_file_twice(inputs)?;
    let mut shards = inputs.iter().map(|p| Shard::open(p)).collect::<Result<Vec<_>>>()?;
    let mode = common_mode(&shards)?;
    let mut meta = merged_metadata(&shards, trust_shards)?;
    match (mode, top) {
        (Mode::Search, None) => {
            return Err(Error::usage("merge: search results need --top N (normally the --top of the shard runs)"))
        }
        (Mode::Search, Some(0)) => return Err(Error::usage("merge: --top must be at least 1")),
        (Mode::Align, Some(_)) => {
            return Err(Error::usage("merge: --top applies to search results; align results have no ranking"))
        }
        _ => {}
    }
    if let Some(top) = top {
        check_top(&shards, top)?;
        meta.push("top", top.to_string());
    }
    meta.push(
        "merge",
        match top {
            Some(n) => format!(
                "swarrow merge of {} shards: top {} per query by score, then shard order, then shard rank",
                shards.len(),
                n
            ),
            None => format!("swarrow merge of {} shards: concatenated in shard order", shards.len()),
        },
    );
    // Shards written before `qnum` existed order their queries only by their rows.
    let numbered = shards.iter().all(|s| s.numbered);
    let mut columns = output::Columns::default_for(mode, format);
    if mode == Mode::Search && !numbered {
        columns.0.retain(|&c| c != output::Column::Qnum);
        if let Some(old) = shards.iter().find(|s| !s.numbered) {
            eprintln!(
                "swarrow: note: merge: {} has no qnum column (written by an older swarrow): queries are ordered by \
                 their rows in the shards, which can differ from the query input's order where a shard holds no hit \
                 of a query; search the shards again to keep the input's order",
                old.source
            );
        }
    }
    let writer = output::create_writer_carrying(format, &columns, &arrow::datatypes::Schema::empty(), &meta, output)?;
    let mut writer: Box<dyn output::ResultWriter> = Box::new(output::Announced::new(writer, announcement));
    match top {
        Some(top) => {
            let mut merger = TopMerger::new(top, numbered, query_inputs(&shards));
            for (i, shard) in shards.iter_mut().enumerate() {
                while let Some(rows) = shard.next_rows()? {
                    merger.add(i, rows).map_err(|problem| Error::file(&shard.source, problem))?;
                }
            }
            let names: Vec<String> = shards.iter().map(|s| s.source.to_string()).collect();
            for batch in merger.finish(&names)? {
                writer.write(&batch)?;
            }
        }
        None => {
            for shard in shards.iter_mut() {
                while let Some(rows) = shard.next_rows()? {
                    for chunk in rows.chunks(WRITE_BATCH_ROWS) {
                        writer.write(&to_batch(chunk.iter().map(|r| (r, 0)), false)?)?;
                    }
                }
            }
        }
    }
    writer.finish()
}

/// BLAST tabular needs the traceback's statistics (pident, length, mismatch, gapopen), which
/// shards do not carry: refused before anything is read or written.
pub fn no_blast_tabular() -> Error {
    Error::usage(
        "merge cannot write BLAST tabular (--format blast, --outfmt 6/7, -o *.m8): its columns pident, length, \
         mismatch and gapopen come from the traceback, which the shards do not carry; merge into Parquet, Arrow or \
         TSV (-o merged.parquet); shards of the queries searched with --outfmt 6 can simply be concatenated",
    )
}

/// Each shard's query input, numbered in order of first appearance, where every shard
/// names its own (`queries`, written by `search` for a regular file): shards of one query
/// input (database shards) order their queries by `qnum` together, shards of query pieces
/// come in shard order. `None` where a shard names none (TSV, stdin, older versions).
fn query_inputs(shards: &[Shard]) -> Option<Vec<usize>> {
    let mut names: Vec<&str> = Vec::new();
    shards
        .iter()
        .map(|s| {
            let name = s.metadata.iter().find(|(k, _)| k == "queries").map(|(_, v)| v.as_str())?;
            Some(names.iter().position(|n| *n == name).unwrap_or_else(|| {
                names.push(name);
                names.len() - 1
            }))
        })
        .collect()
}

/// Rows with their rank (ignored by align writers) as a writer batch; `numbered`: with
/// their query numbers.
fn to_batch<'a>(rows: impl Iterator<Item = (&'a Row, i32)>, numbered: bool) -> Result<ResultBatch> {
    let mut batch = ResultBatch::new();
    let mut qnum = Vec::new();
    for (r, rank) in rows {
        qnum.extend(r.qnum.filter(|_| numbered));
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
            rank,
        });
    }
    if numbered {
        batch.set_query_numbers(qnum)?;
    }
    Ok(batch)
}

/// A candidate hit: the row and the shard it came from.
struct Candidate {
    shard: usize,
    row: Row,
}

impl Candidate {
    /// Unsharded ranking: score descending, then database position, which for a database
    /// split in order is shard order, then the shard's own rank.
    fn key(&self) -> (Reverse<i32>, usize, i64) {
        (Reverse(self.row.score), self.shard, self.row.order)
    }
}

/// Hits grouped by query, each group trimmed to the best `top` as it grows so memory stays
/// proportional to queries x top, not to the number of shards.
struct TopMerger {
    top: usize,
    index: HashMap<String, usize>,
    groups: Vec<Vec<Candidate>>,
    /// Query order seen in each shard (group indices, consecutive repeats removed).
    sequences: Vec<Vec<usize>>,
    /// Per group: 1 + the last shard whose rows held it (0: none yet).
    last_shard: Vec<usize>,
    /// The rank of the shard's previous row.
    last_rank: i64,
    /// Every row carries its query's number in the query input: queries are ordered by it.
    numbered: bool,
    /// Each shard's query input ([`query_inputs`]), where every shard names it.
    inputs: Option<Vec<usize>>,
}

impl TopMerger {
    fn new(top: usize, numbered: bool, inputs: Option<Vec<usize>>) -> TopMerger {
        TopMerger {
            numbered,
            inputs,
            top,
            index: HashMap::new(),
            groups: Vec::new(),
            sequences: Vec::new(),
            last_shard: Vec::new(),
            last_rank: 0,
        }
    }

    /// Adds rows of `shard` (shards in order, each shard's rows in its order). A query whose
    /// hits come in two runs, or whose ranks start again at 1, is two queries with one id:
    /// their hits cannot be told apart, and the problem is returned (`search` refuses such
    /// queries; a shard can still hold them if written by an older version or another tool).
    fn add(&mut self, shard: usize, rows: Vec<Row>) -> std::result::Result<(), String> {
        while self.sequences.len() <= shard {
            self.sequences.push(Vec::new());
        }
        for row in rows {
            let g = match self.index.get(&row.query) {
                Some(&g) => {
                    let first = self.groups[g].first().map(|c| (c.shard, c.row.qnum));
                    let input = |shard: usize| self.inputs.as_ref().map(|i| i[shard]);
                    if let Some((other, qnum)) = first.filter(|f| self.numbered && input(f.0) != input(shard)) {
                        return Err(format!(
                            "query {} is in shards of two query inputs (query {} of this one, query {} of shard {}'s): \
                             merge cannot tell which place it takes; give every query its own id",
                            crate::error::quoted_id(&row.query),
                            row.qnum.map_or("?".into(), |n| n.to_string()),
                            qnum.map_or("?".into(), |n| n.to_string()),
                            other + 1
                        ));
                    }
                    if let Some((other, qnum)) = first.filter(|f| self.numbered && f.1 != row.qnum) {
                        return Err(format!(
                            "query {} is query {} of the query input here but query {} in shard {}: the shards \
                             searched different query inputs; search every shard with the same queries",
                            crate::error::quoted_id(&row.query),
                            row.qnum.map_or("?".into(), |n| n.to_string()),
                            qnum.map_or("?".into(), |n| n.to_string()),
                            other + 1
                        ));
                    }
                    g
                }
                None => {
                    self.index.insert(row.query.clone(), self.groups.len());
                    self.groups.push(Vec::new());
                    self.last_shard.push(0);
                    self.groups.len() - 1
                }
            };
            let seq = &mut self.sequences[shard];
            let duplicate = if seq.last() != Some(&g) {
                seq.push(g);
                std::mem::replace(&mut self.last_shard[g], shard + 1) == shard + 1
            } else {
                row.order <= self.last_rank
            };
            if duplicate {
                return Err(format!(
                    "query {} has two separate lists of hits: two queries with one id, whose hits merge cannot \
                     keep apart; give every query its own id and search again",
                    crate::error::quoted_id(&row.query)
                ));
            }
            self.last_rank = row.order;
            let group = &mut self.groups[g];
            group.push(Candidate { shard, row });
            if group.len() >= 2 * self.top.max(1024) {
                trim(group, self.top);
            }
        }
        Ok(())
    }

    /// The merged rows in query order, top N per query, ranked 1..N, in writer batches.
    /// One hit (query and target) kept from two shards means two shards hold the same part
    /// of the database (a shard given twice, a retried job's copy): an error naming both
    /// (`shards` names them).
    fn finish(mut self, shards: &[String]) -> Result<Vec<ResultBatch>> {
        let order = if self.numbered {
            // Each group holds rows (trimmed, never emptied), all of one query number and
            // one query input: ordered by input (shard order), then number.
            let first = |g: usize| self.groups[g].first().map(|c| (c.shard, c.row.qnum.unwrap_or(0)));
            let inputs = match &self.inputs {
                Some(inputs) => inputs.clone(),
                // Unnamed inputs (TSV shards): one input, unless two queries share a number,
                // as the shards of query pieces, each numbered from 1, do.
                None => {
                    let mut seen = std::collections::HashSet::new();
                    let pieces = (0..self.groups.len()).any(|g| first(g).is_some_and(|(_, n)| !seen.insert(n)));
                    (0..self.sequences.len()).map(|shard| if pieces { shard } else { 0 }).collect()
                }
            };
            let mut order: Vec<usize> = (0..self.groups.len()).collect();
            order.sort_by_key(|&g| first(g).map(|(shard, n)| (inputs.get(shard).copied().unwrap_or(0), n)));
            order
        } else {
            query_order(self.groups.len(), &self.sequences)
        };
        let mut batches = Vec::new();
        let mut pending: Vec<(Row, i32)> = Vec::new();
        for g in order {
            let mut group = std::mem::take(&mut self.groups[g]);
            trim(&mut group, self.top);
            let mut targets: HashMap<&str, usize> = HashMap::with_capacity(group.len());
            for c in &group {
                match targets.insert(c.row.target.as_str(), c.shard) {
                    Some(other) if other != c.shard => {
                        let name = |i: usize| shards.get(i).map_or_else(|| format!("shard {}", i + 1), |n| n.clone());
                        return Err(Error::usage(format!(
                            "merge: {} and {} both hold the hit of query {} on target {}: two shards hold the \
                             same part of the database (a shard given twice?); give each shard once",
                            name(other),
                            name(c.shard),
                            crate::error::quoted_id(&c.row.query),
                            crate::error::quoted_id(&c.row.target)
                        )));
                    }
                    _ => {}
                }
            }
            for (i, c) in group.into_iter().enumerate() {
                pending.push((c.row, i as i32 + 1));
            }
            if pending.len() >= WRITE_BATCH_ROWS {
                batches.push(to_batch(pending.iter().map(|(r, k)| (r, *k)), self.numbered)?);
                pending.clear();
            }
        }
        if !pending.is_empty() || batches.is_empty() {
            batches.push(to_batch(pending.iter().map(|(r, k)| (r, *k)), self.numbered)?);
        }
        Ok(batches)
    }
}

/// Sorts a query's candidates into the unsharded ranking and keeps the best `top`.
fn trim(group: &mut Vec<Candidate>, top: usize) {
    group.sort_by_key(|c| c.key());
    group.truncate(top);
}

/// An order of the queries that respects the order of every shard (each shard lists its
/// queries in query-input order, some possibly missing): a topological sort of "comes after"
/// in any shard, taking the query seen first whenever several are free. Shards that disagree
/// (a cycle) fall back to first appearance for the queries involved.
fn query_order(n: usize, sequences: &[Vec<usize>]) -> Vec<usize> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for seq in sequences {
        for w in seq.windows(2) {
            next[w[0]].push(w[1]);
            indegree[w[1]] += 1;
        }
    }
    // Group indices are numbered in order of first appearance: the smallest free one first.
    let mut free: BinaryHeap<Reverse<usize>> = (0..n).filter(|&g| indegree[g] == 0).map(Reverse).collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut lowest_pending = 0;
    while order.len() < n {
        let g = match free.pop() {
            Some(Reverse(g)) if !done[g] => g,
            Some(_) => continue,
            None => {
                // A cycle: take the first query not yet placed.
                while done[lowest_pending] {
                    lowest_pending += 1;
                }
                lowest_pending
            }
        };
        done[g] = true;
        order.push(g);
        for &h in &next[g] {
            indegree[h] = indegree[h].saturating_sub(1);
            if indegree[h] == 0 && !done[h] {
                free.push(Reverse(h));
            }
        }
    }
    order
}

/// The same file given twice (by two names, a repeated glob, a link) is refused before
/// anything is read: its rows would count twice.
fn refuse_same_file_twice(inputs: &[PathBuf]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut seen: HashMap<(u64, u64), &PathBuf> = HashMap::new();
    for p in inputs.iter().filter(|p| p.as_os_str() != "-") {
        let Ok(m) = std::fs::metadata(p) else { continue };
        if !m.is_file() {
            continue;
        }
        if let Some(first) = seen.insert((m.dev(), m.ino()), p) {
            return Err(Error::usage(format!(
                "merge: {} and {} are the same file: each shard must be given once",
                first.display(),
                p.display()
            )));
        }
    }
    Ok(())
}

/// A shard searched with `-k N` holds at most N hits per query: a merged top larger than N
/// could miss hits an unsharded search reports. Refused, naming the shard; a shard that
/// records no `top` (older versions, TSV) cannot be checked, and a note says so.
fn check_top(shards: &[Shard], top: usize) -> Result<()> {
    let mut unknown = None;
    for s in shards {
        match s.metadata.iter().find(|(k, _)| k == "top").map(|(_, v)| v.parse::<usize>()) {
            Some(Ok(kept)) if kept < top => {
                return Err(Error::usage(format!(
                    "merge: {} kept at most {} hits per query (searched with --top {}), fewer than merge --top {}: \
                     the merged result could miss hits an unsharded search reports; merge with --top {} or less, \
                     or search the shards with --top {}",
                    s.source, kept, kept, top, kept, top
                )))
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => unknown = unknown.or(Some(&s.source)),
        }
    }
    if let Some(source) = unknown {
        eprintln!(
            "swarrow: note: merge: {} does not record the --top it was searched with; merge --top {} assumes each \
             shard kept at least {} hits per query",
            source, top, top
        );
    }
    Ok(())
}

/// The mode all shards share: search results carry `rank`, align results do not.
fn common_mode(shards: &[Shard]) -> Result<Mode> {
    let first = shards[0].mode;
    if let Some(other) = shards.iter().find(|s| s.mode != first) {
        return Err(Error::usage(format!(
            "merge: {} holds {} results but {} holds {} results; merge shards of one kind of run",
            shards[0].source, first, other.source, other.mode
        )));
    }
    Ok(first)
}

/// The run metadata of the merged output: each key in first-seen order with the shards'
/// common value, or their distinct values joined by ", " where they differ (database name,
/// size, engine). Keys in [`MUST_AGREE`] that differ are an error. A shard without one of
/// them is an error too, unless `trust_shards`: then only keys every shard has are kept, and
/// a `settings_unchecked` key says which shard had none.
fn merged_metadata(shards: &[Shard], trust_shards: bool) -> Result<RunMetadata> {
    // Align runs have no search space; everything else in MUST_AGREE every run records.
    let lacks = |s: &Shard, key: &str| !s.metadata.iter().any(|(m, _)| m == key);
    let unchecked: Vec<&Shard> = shards
        .iter()
        .filter(|s| MUST_AGREE.iter().any(|k| lacks(s, k) && !(*k == "search_space" && s.mode == Mode::Align)))
        .collect();
    if let Some(first) = unchecked.first() {
        if !trust_shards {
            let what = if first.is_tsv() { "is TSV, which carries" } else { "carries" };
            return Err(Error::usage(format!(
                "merge: {} {} no run settings (scoring, gap costs, search space), so merge cannot check that \
                 the shards agree; write shards as Parquet or Arrow IPC, or pass --trust-shards to merge them unchecked",
                first.source, what
            )));
        }
    }
    let mut keys: Vec<&str> = Vec::new();
    for s in shards {
        for (k, _) in &s.metadata {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    if !unchecked.is_empty() {
        keys.retain(|k| shards.iter().all(|s| s.metadata.iter().any(|(m, _)| m == k)));
    }
    let mut meta = RunMetadata::new();
    if let Some(first) = unchecked.first() {
        meta.push(
            "settings_unchecked",
            format!(
                "merged with --trust-shards: {} carries no run settings, so scoring, gap costs and search space \
                 were not checked; only metadata every shard carries is kept",
                first.source
            ),
        );
    }
    for key in keys {
        let default = ABSENT_MEANS.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let mut values: Vec<(&str, &Where)> = Vec::new();
        for s in shards {
            let recorded = s.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
            // A shard with run settings that lacks a key of ABSENT_MEANS has its default.
            let checked = !unchecked.iter().any(|u| std::ptr::eq(*u, s));
            if let Some(v) = recorded.or(default.filter(|_| checked)) {
                if !values.iter().any(|(seen, _)| *seen == v) {
                    values.push((v, &s.source));
                }
            }
        }
        let must_agree = MUST_AGREE.contains(&key) || MUST_AGREE_IF_RECORDED.contains(&key) || default.is_some();
        if values.len() > 1 && must_agree {
            return Err(Error::usage(format!(
                "merge: shards disagree on {}: '{}' in {} but '{}' in {}; their scores or E-values are not comparable{}",
                key,
                values[0].0,
                values[0].1,
                values[1].0,
                values[1].1,
                match key {
                    "search_space" => " (run every shard with the same --db-size and --db-seqs)",
                    "evalue_model" => " (run every shard with the same --evalue-model)",
                    "max_evalue" => " (run every shard with the same --max-evalue, -e)",
                    "thresholds" => " (run every shard with the same --min-score, --min-pident, ... thresholds)",
                    "alignment_mode" => " (align every shard with the same --mode and --free-ends)",
                    _ => "",
                }
            )));
        }
        if key == "top" {
            // The merge's own --top, checked against every shard's in `check_top`.
            continue;
        }
        let joined: Vec<&str> = values.iter().map(|(v, _)| *v).collect();
        meta.push(key, joined.join(", "));
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(query: &str, target: &str, score: i32, order: i64) -> Row {
        Row {
            query: query.into(),
            target: target.into(),
            score,
            bits: None,
            evalue: None,
            qstart: 1,
            qend: 1,
            tstart: 1,
            tend: 1,
            qlen: 1,
            tlen: 1,
            recomputed: false,
            order,
            qnum: None,
        }
    }

    /// (query, target, rank) of the merged output.
    fn merged(top: usize, shards: Vec<Vec<Row>>) -> Vec<(String, String, i32)> {
        let mut m = TopMerger::new(top, false, None);
        for (i, rows) in shards.into_iter().enumerate() {
            m.add(i, rows).unwrap();
        }
        m.finish(&[])
            .unwrap()
            .iter()
            .flat_map(|b| b.rows().map(|r| (r.query.to_string(), r.target.to_string(), r.rank)).collect::<Vec<_>>())
            .collect()
    }

    fn names(v: &[(String, String, i32)]) -> Vec<String> {
        v.iter().map(|(q, t, k)| format!("{q}:{t}:{k}")).collect()
    }

    // Hand-built case: database t1..t6 split in order into shards {t1,t2,t3} and {t4,t5,t6};
    // the unsharded top 3 by (score desc, database position) is worked out by hand.
    #[test]
    fn global_top_k_breaks_ties_by_shard_order_then_shard_rank() {
        let shard0 = vec![row("q", "t2", 50, 1), row("q", "t1", 40, 2), row("q", "t3", 40, 3)];
        let shard1 = vec![row("q", "t5", 50, 1), row("q", "t4", 45, 2), row("q", "t6", 40, 3)];
        let got = merged(3, vec![shard0, shard1]);
        assert_eq!(names(&got), ["q:t2:1", "q:t5:2", "q:t4:3"]);
    }

    #[test]
    fn ties_at_the_cut_keep_the_earlier_shard() {
        let shard0 = vec![row("q", "a", 10, 1)];
        let shard1 = vec![row("q", "b", 10, 1)];
        assert_eq!(names(&merged(1, vec![shard1.clone(), shard0.clone()])), ["q:b:1"]);
        assert_eq!(names(&merged(1, vec![shard0, shard1])), ["q:a:1"]);
    }

    // Queries come out in input order even when some shard has no hit for some query.
    #[test]
    fn query_order_respects_every_shard() {
        let shard0 = vec![row("A", "x", 5, 1), row("C", "x", 5, 1)];
        let shard1 = vec![row("B", "y", 5, 1), row("C", "y", 4, 1)];
        let got = merged(5, vec![shard0, shard1]);
        assert_eq!(names(&got), ["A:x:1", "B:y:1", "C:x:1", "C:y:2"]);
    }

    #[test]
    fn query_order_survives_disagreeing_shards() {
        // Shard 0 says A before B, shard 1 says B before A: every query still comes out once.
        let order = query_order(2, &[vec![0, 1], vec![1, 0]]);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1]);
    }

    #[test]
    fn large_groups_are_trimmed_without_changing_the_result() {
        // 5000 hits for one query across two shards, scores cycling; the best 3 by hand:
        // score 99 first appears at i=99 (shard 0, rank 100), then i=199 and i=299.
        let rows = |shard: usize| -> Vec<Row> {
            (0..2500).map(|i| row("q", &format!("s{shard}_{i}"), (i % 100) as i32, i as i64 + 1)).collect()
        };
        let got = merged(3, vec![rows(0), rows(1)]);
        assert_eq!(names(&got), ["q:s0_99:1", "q:s0_199:2", "q:s0_299:3"]);
    }
}
