//! A read's records as a mapper reports them (issue 60): which record is primary, which are
//! secondary or supplementary, their MAPQ and SAM's `SA:Z`. Decided here, once per finished
//! group of rows, before anything is encoded: every writer then reads a row and its
//! [`Decision`] only (SAM/BAM FLAG, MAPQ, `SA:Z`; PAF's column 12 and `tp:A`; the `mapq` and
//! `flag` columns of the table formats).
//!
//! # The rules (README, "A read's records")
//! - **Group**: consecutive rows of one query id, in output order, whatever the input kind
//!   (candidates of a read arrive together: minimap2 writes them adjacent, a sorted table
//!   too). A group may span batches: [`Grouped`] holds a batch until the next one shows
//!   where its last group ends. A read whose rows are not adjacent makes one group per run.
//!   Rows without an alignment (no record, no PAF line) take part in no decision.
//! - **Primary**: the best score of the group; ties go to the first row in output order.
//! - **Secondary or supplementary**: the other rows, taken by score (ties in output order):
//!   a row whose query interval overlaps that of the primary, or of a supplementary row
//!   already taken, by more than half of the shorter interval is secondary (0x100);
//!   otherwise it is supplementary (0x800). With a supplementary row in a group, its primary
//!   and supplementary records carry `SA:Z` (the SAM specification's
//!   `rname,pos,strand,CIGAR,mapQ,NM;` of every other primary or supplementary record of the
//!   read, the primary first); secondary records carry none.
//! - **MAPQ** of a primary or supplementary row of score `s1`: `s2` is the best score of the
//!   other rows whose query interval overlaps it by more than half of the shorter one (0 for
//!   none), `id` its identity (identical pairs / alignment columns);
//!   `MAPQ = round(40 x (1 - s2/s1) x ln(s1) x w)`, `w = 1` for `id >= 0.95`, else `id^2`
//!   (minimap2's score term, bwa's identity penalty), clamped to 0-60; 0 where `s1 <= 1`.
//!   Secondary rows get 0. Two equal placements give 0, a unique one of score >= 5 and
//!   identity >= 0.95 gives 60.

use std::collections::VecDeque;

use super::batch::ResultBatch;
use super::sink::OutputTime;
use super::ResultWriter;
use crate::error::Result;

/// A row's part in its read's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// No alignment: no record.
    #[default]
    Unaligned,
    Primary,
    Secondary,
    Supplementary,
}

/// What a row's record says beyond the row itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    pub role: Role,
    pub mapq: u8,
    /// `SA:Z`'s value (SAM/BAM, primary and supplementary records of a chimeric read).
    pub sa: Option<Box<str>>,
}

impl Decision {
    /// SAM's FLAG of the row's record, on strand `minus`: 0x10 on minus, 0x100 secondary,
    /// 0x800 supplementary; 0x4 (unmapped) for a row without an alignment.
    pub fn flag(&self, minus: bool) -> u16 {
        let role = match self.role {
            Role::Unaligned => return 0x4,
            Role::Primary => 0,
            Role::Secondary => 0x100,
            Role::Supplementary => 0x800,
        };
        role | if minus { 0x10 } else { 0 }
    }

    /// PAF's `tp:A`: `S` for a secondary alignment, `P` for the primary and supplementary
    /// ones (as minimap2 writes them).
    pub fn paf_type(&self) -> char {
        if self.role == Role::Secondary {
            'S'
        } else {
            'P'
        }
    }
}

/// MAPQ of a record of score `s1` whose best competitor scores `s2`, at identity `id`.
pub fn mapq(s1: i32, s2: i32, identity: f64) -> u8 {
    if s1 <= 1 {
        return 0;
    }
    let s1f = f64::from(s1);
    let s2 = f64::from(s2.clamp(0, s1));
    let w = if identity >= 0.95 { 1.0 } else { identity * identity };
    let q = 40.0 * (1.0 - s2 / s1f) * s1f.ln() * w;
    (q + 0.5).floor().clamp(0.0, 60.0) as u8
}

/// What the rules read of a row with an alignment.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub score: i32,
    /// 1-based inclusive, on the query as given.
    pub qstart: i32,
    pub qend: i32,
    pub identity: f64,
}

/// True when two query intervals overlap by more than half of the shorter one.
fn overlapping(a: &Candidate, b: &Candidate) -> bool {
    let overlap = (a.qend.min(b.qend) - a.qstart.max(b.qstart) + 1).max(0) as i64;
    let shorter = (a.qend - a.qstart + 1).min(b.qend - b.qstart + 1).max(0) as i64;
    2 * overlap > shorter
}

/// The role and MAPQ of each of a group's candidates (in output order), and the order of
/// its primary and supplementary ones (primary first) for `SA:Z`.
pub fn decide(group: &[Candidate]) -> (Vec<(Role, u8)>, Vec<usize>) {
    if let [one] = group {
        return (vec![(Role::Primary, mapq(one.score, 0, one.identity))], vec![0]);
    }
    let mut order: Vec<usize> = (0..group.len()).collect();
    order.sort_by(|&a, &b| group[b].score.cmp(&group[a].score)); // stable: ties in output order
    let mut roles = vec![(Role::Secondary, 0u8); group.len()];
    let mut taken: Vec<usize> = Vec::new();
    for &i in &order {
        if taken.iter().any(|&t| overlapping(&group[i], &group[t])) {
            continue;
        }
        roles[i].0 = if taken.is_empty() { Role::Primary } else { Role::Supplementary };
        taken.push(i);
    }
    for &t in &taken {
        let s2 = (0..group.len())
            .filter(|&k| k != t && overlapping(&group[t], &group[k]))
            .map(|k| group[k].score)
            .max()
            .unwrap_or(0);
        roles[t].1 = mapq(group[t].score, s2, group[t].identity);
    }
    (roles, taken)
}

/// A record's `SA:Z` element but its MAPQ: (`rname,pos,strand,CIGAR,`, `NM`).
pub(super) type SaElement = (String, u32);

/// How `SA:Z` elements are made (SAM/BAM only): the record's CIGAR and NM as the SAM writer
/// encodes them.
pub(super) type SaMaker = Box<dyn Fn(&ResultBatch, usize) -> Result<SaElement> + Send>;

/// A writer whose rows get their [`Decision`]s first: batches are held until the group that
/// ends each is known to be finished (the next batch starts another query, or the input
/// ended), so that groups spanning batches are decided whole. Output lags one batch.
pub(super) struct Grouped {
    inner: Box<dyn ResultWriter>,
    sa: Option<SaMaker>,
    /// Held batches: every row decided but those of the open group.
    queue: VecDeque<ResultBatch>,
    /// Where the open group starts: (index in `queue`, row).
    open: Option<(usize, usize)>,
    /// Rows of the group being decided: (index in `queue`, row), and of them those with an
    /// alignment and their candidates; reused.
    rows: Vec<(usize, usize)>,
    aligned: Vec<(usize, usize)>,
    cands: Vec<Candidate>,
}

impl Grouped {
    pub(super) fn new(inner: Box<dyn ResultWriter>, sa: Option<SaMaker>) -> Grouped {
        Grouped {
            inner,
            sa,
            queue: VecDeque::new(),
            open: None,
            rows: Vec::new(),
            aligned: Vec::new(),
            cands: Vec::new(),
        }
    }

    /// Decides the group of `self.rows`.
    fn decide_rows(&mut self) -> Result<()> {
        self.cands.clear();
        self.aligned.clear();
        for &(b, i) in &self.rows {
            let batch = &self.queue[b];
            if !super::paf::is_aligned(batch, i) {
                continue;
            }
            let row = batch.row(i);
            let identity = batch.stats_of(i).map_or(1.0, |s| match s.length {
                0 => 0.0,
                n => f64::from(s.nident) / f64::from(n),
            });
            self.cands.push(Candidate { score: row.score, qstart: row.qstart, qend: row.qend, identity });
            self.aligned.push((b, i));
        }
        let aligned = &self.aligned;
        if let ([(b, i)], [one]) = (aligned.as_slice(), self.cands.as_slice()) {
            // Most reads: one candidate, primary (what `decide` says, without its vectors).
            let mapq = mapq(one.score, 0, one.identity);
            self.queue[*b].decisions_mut()[*i] = Decision { role: Role::Primary, mapq, sa: None };
            return Ok(());
        }
        if aligned.is_empty() {
            return Ok(());
        }
        let (roles, taken) = decide(&self.cands);
        let chimeric = taken.len() > 1;
        let mut elements: Vec<String> = Vec::new();
        if let (true, Some(make)) = (chimeric, self.sa.as_ref()) {
            for &t in &taken {
                let (b, i) = aligned[t];
                let (head, nm) = make(&self.queue[b], i)?;
                elements.push(format!("{head}{},{nm};", roles[t].1));
            }
        }
        for (k, &(b, i)) in aligned.iter().enumerate() {
            let (role, mapq) = roles[k];
            let sa = match (elements.is_empty(), taken.iter().position(|&t| t == k)) {
                (false, Some(me)) => Some(
                    elements
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != me)
                        .map(|(_, e)| e.as_str())
                        .collect::<String>()
                        .into(),
                ),
                _ => None,
            };
            self.queue[b].decisions_mut()[i] = Decision { role, mapq, sa };
        }
        Ok(())
    }

    /// Writes every held batch (all decided).
    fn release(&mut self) -> Result<()> {
        self.open = None;
        while let Some(batch) = self.queue.pop_front() {
            self.inner.write(&batch)?;
        }
        Ok(())
    }

    /// Decides the open group, through row `end` (exclusive) of the last held batch.
    fn close_open(&mut self, end: usize) -> Result<()> {
        let Some((first, row)) = self.open else { return Ok(()) };
        self.rows.clear();
        let last = self.queue.len() - 1;
        for b in first..=last {
            let from = if b == first { row } else { 0 };
            let to = if b == last { end } else { self.queue[b].len() };
            self.rows.extend((from..to).map(|i| (b, i)));
        }
        self.decide_rows()
    }
}

/// The end of the run of rows of one query that starts at `from`.
fn run_end(batch: &ResultBatch, from: usize) -> usize {
    let query = batch.query(from);
    (from + 1..batch.len()).find(|&i| batch.query(i) != query).unwrap_or(batch.len())
}

impl ResultWriter for Grouped {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        // Borrowed rows (merge, tests): a copy to hold.
        self.write_owned(batch.clone())
    }

    fn write_owned(&mut self, mut batch: ResultBatch) -> Result<()> {
        let n = batch.len();
        batch.decisions_mut().clear();
        batch.decisions_mut().resize(n, Decision::default());
        let mut start = 0;
        if let Some((b, i)) = self.open {
            let continues = n > 0 && batch.query(0) == self.queue[b].query(i);
            let head = if continues { run_end(&batch, 0) } else { 0 };
            self.queue.push_back(batch);
            if head == n {
                return Ok(()); // the whole batch continues the open group
            }
            self.close_open(head)?;
            batch = self.queue.pop_back().unwrap_or_default();
            start = head;
        }
        self.release()?;
        if n == 0 {
            return self.inner.write(&batch);
        }
        self.queue.push_back(batch);
        let mut from = start;
        loop {
            let end = run_end(&self.queue[0], from);
            if end == n {
                self.open = Some((0, from));
                return Ok(());
            }
            self.rows.clear();
            self.rows.extend((from..end).map(|i| (0, i)));
            self.decide_rows()?;
            from = end;
        }
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        if !self.queue.is_empty() {
            let end = self.queue.back().map_or(0, |b| b.len());
            self.close_open(end)?;
        }
        self.release()?;
        self.inner.finish()
    }

    fn output_time(&self) -> Option<OutputTime> {
        self.inner.output_time()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(score: i32, qstart: i32, qend: i32) -> Candidate {
        Candidate { score, qstart, qend, identity: 1.0 }
    }

    // Expected roles worked out by hand from the rules in the module's header.
    #[test]
    fn primary_is_the_best_ties_go_first_and_overlap_decides_secondary() {
        // Worse first: the second row is primary; the first overlaps it wholly: secondary.
        let (roles, taken) = decide(&[c(50, 1, 100), c(90, 1, 100)]);
        assert_eq!(roles[0].0, Role::Secondary);
        assert_eq!(roles[1].0, Role::Primary);
        assert_eq!(taken, [1]);
        // A tie: the first in output order is primary, MAPQ 0 (the other is as good).
        let (roles, _) = decide(&[c(90, 1, 100), c(90, 1, 100)]);
        assert_eq!(roles, [(Role::Primary, 0), (Role::Secondary, 0)]);
        // Chimera: 1-60 and 61-150 do not overlap: primary and supplementary; a third row
        // on 70-150 overlaps the supplementary (81 of 81 > half): secondary.
        let (roles, taken) = decide(&[c(60, 1, 60), c(90, 61, 150), c(30, 70, 150)]);
        assert_eq!([roles[0].0, roles[1].0, roles[2].0], [Role::Supplementary, Role::Primary, Role::Secondary]);
        assert_eq!(taken, [1, 0]);
        // Exactly half of the shorter (50 of 100) is not more than half: supplementary.
        let (roles, _) = decide(&[c(90, 1, 100), c(80, 51, 150)]);
        assert_eq!(roles[1].0, Role::Supplementary);
        let (roles, _) = decide(&[c(90, 1, 100), c(80, 50, 150)]);
        assert_eq!(roles[1].0, Role::Secondary);
    }

    /// What the writer under [`Grouped`] receives: every row's decision, in order.
    #[derive(Clone, Default)]
    struct Seen(std::sync::Arc<std::sync::Mutex<Vec<(String, Decision)>>>);

    impl ResultWriter for Seen {
        fn write(&mut self, batch: &ResultBatch) -> Result<()> {
            let mut seen = self.0.lock().unwrap();
            for i in 0..batch.len() {
                seen.push((batch.query(i).to_string(), batch.decision(i).cloned().unwrap()));
            }
            Ok(())
        }
        fn finish(self: Box<Self>) -> Result<()> {
            Ok(())
        }
    }

    /// Rows cut into batches anywhere (empty batches, a read spanning three batches, a
    /// batch holding one read only) get the decisions of their whole group: the same as
    /// one batch of every row, whose groups [`decide`] takes whole here.
    #[test]
    fn groups_spanning_batches_are_decided_whole() {
        // (query, score, qstart, qend); score 0: no alignment (coordinates 0).
        let rows: Vec<(&str, i32, i32, i32)> = vec![
            ("a", 10, 1, 50),
            ("b", 5, 1, 40),
            ("b", 9, 1, 40),
            ("b", 0, 0, 0),
            ("b", 9, 41, 90),
            ("b", 7, 45, 90),
            ("c", 3, 1, 10),
            ("a", 8, 1, 50),
        ];
        let batch_of = |part: &[(&str, i32, i32, i32)]| {
            let mut b = ResultBatch::new();
            for &(q, score, qstart, qend) in part {
                b.push(crate::output::ResultRow {
                    query: q,
                    target: "t",
                    score,
                    bits: None,
                    evalue: None,
                    qstart,
                    qend,
                    tstart: qstart,
                    tend: qend,
                    qlen: 100,
                    tlen: 100,
                    recomputed: false,
                    rank: 0,
                });
            }
            b
        };
        // The account: each run of one query decided whole.
        let mut want: Vec<(String, Decision)> = Vec::new();
        let mut start = 0;
        while start < rows.len() {
            let end = (start..rows.len()).find(|&k| rows[k].0 != rows[start].0).unwrap_or(rows.len());
            let aligned: Vec<usize> = (start..end).filter(|&k| rows[k].1 > 0).collect();
            let cands: Vec<Candidate> = aligned
                .iter()
                .map(|&k| Candidate { score: rows[k].1, qstart: rows[k].2, qend: rows[k].3, identity: 1.0 })
                .collect();
            let (roles, _) = decide(&cands);
            for (k, row) in rows.iter().enumerate().take(end).skip(start) {
                let d = match aligned.iter().position(|&a| a == k) {
                    Some(j) => Decision { role: roles[j].0, mapq: roles[j].1, sa: None },
                    None => Decision::default(),
                };
                want.push((row.0.to_string(), d));
            }
            start = end;
        }
        assert_eq!(want[2].1.role, Role::Primary);
        assert_eq!(want[4].1.role, Role::Supplementary);
        assert_eq!(want[7].1.role, Role::Primary, "a's second run is a group of its own");
        for cuts in [vec![8], vec![1, 1, 1, 1, 1, 1, 1, 1], vec![0, 2, 0, 3, 0, 3, 0], vec![3, 3, 2], vec![5, 3]] {
            let seen = Seen::default();
            let mut w = Grouped::new(Box::new(seen.clone()), None);
            let mut at = 0;
            for n in &cuts {
                w.write_owned(batch_of(&rows[at..at + n])).unwrap();
                at += n;
            }
            Box::new(w).finish().unwrap();
            assert_eq!(*seen.0.lock().unwrap(), want, "batches of {cuts:?}");
        }
    }

    #[test]
    fn mapq_follows_the_written_formula() {
        assert_eq!(mapq(100, 0, 1.0), 60);
        assert_eq!(mapq(100, 100, 1.0), 0);
        assert_eq!(mapq(4, 0, 1.0), 55); // 40 x ln 4 = 55.45
        assert_eq!(mapq(1, 0, 1.0), 0);
        assert_eq!(mapq(-5, 0, 1.0), 0);
        // 40 x (1 - 90/100) x ln 100 = 18.42; at identity 0.9: x 0.81 = 14.92.
        assert_eq!(mapq(100, 90, 1.0), 18);
        assert_eq!(mapq(100, 90, 0.9), 15);
        // A competitor scoring more than the record (a secondary of another part): 0.
        assert_eq!(mapq(50, 80, 1.0), 0);
    }
}
