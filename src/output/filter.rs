//! Row thresholds (`--min-score`, `--max-evalue`, `--min-pident`, ...): each a bound on one
//! output column, checked on the very value that column would be written with, so a kept
//! row is one whose written value passes and a threshold needs no column of its own. The
//! pipelines check each bound as soon as its column's [`Need`] level is computed, so the
//! work of later levels (start pass, traceback) runs only for the rows still kept.

use super::batch::{ResultBatch, Value};
use super::columns::{Column, Need};
use crate::error::{Error, Result};

/// One bound: the column's value at least (`min`) or at most `value`, compared in the units
/// the user gave it in: `per` user units make one column unit (1 for the column's own units,
/// 100 for a fraction column given in percent, 0.01 for a percent column given as a
/// fraction).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    column: Column,
    min: bool,
    value: f64,
    per: f64,
}

/// The thresholds of a run; empty keeps every row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thresholds {
    bounds: Vec<Bound>,
}

/// The thresholds a user can set, in the units of their columns; `None` for unset.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThresholdValues {
    /// Raw score (the `score` column), at least.
    pub min_score: Option<i64>,
    /// Bit score, at least.
    pub min_bits: Option<f64>,
    /// E-value, at most.
    pub max_evalue: Option<f64>,
    /// Percent identity (`pident`, 0-100), at least.
    pub min_pident: Option<f64>,
    /// Aligned query span over query length (`qcov`, 0-1), at least.
    pub min_qcov: Option<f64>,
    /// Aligned target span over target length (`tcov`, 0-1), at least.
    pub min_tcov: Option<f64>,
}

impl Thresholds {
    /// The thresholds of `v`, each checked: a clear usage error names the option (as
    /// `options` spells it: `--min-score`, or `min_score=` from Python) and the bad value.
    pub fn new(v: &ThresholdValues) -> Result<Thresholds> {
        let mut bounds = Vec::new();
        let mut add = |name: &str, column: Column, min: bool, value: Option<f64>, range: (f64, f64)| -> Result<()> {
            let Some(value) = value else { return Ok(()) };
            if value.is_nan() || value < range.0 || value > range.1 {
                let (lo, hi) = range;
                let within = if hi.is_infinite() { format!("at least {lo}") } else { format!("from {lo} to {hi}") };
                return Err(Error::usage(format!("--{name}: {value} is out of range (a number {within})")));
            }
            bounds.push(Bound { column, min, value, per: 1.0 });
            Ok(())
        };
        let inf = f64::INFINITY;
        // Scores may fall below 0 outside local mode: local runs refuse a negative bound
        // ([`Thresholds::check_local`]).
        add("min-score", Column::Score, true, v.min_score.map(|s| s as f64), (i32::MIN as f64, i32::MAX as f64))?;
        add("min-bits", Column::Bits, true, v.min_bits, (0.0, inf))?;
        add("max-evalue", Column::Evalue, false, v.max_evalue, (0.0, inf))?;
        add("min-pident", Column::Pident, true, v.min_pident, (0.0, 100.0))?;
        add("min-qcov", Column::Qcov, true, v.min_qcov, (0.0, 1.0))?;
        add("min-tcov", Column::Tcov, true, v.min_tcov, (0.0, 1.0))?;
        Ok(Thresholds { bounds })
    }

    /// The same thresholds with a bound on a ratio column (`pident`, `qcov`, `tcov`) given in
    /// other units: `percent` true for a fraction column in percent (DIAMOND's
    /// `--query-cover 70` is `qcov` >= 70%), false for `pident` as a fraction (MMseqs2's
    /// `--min-seq-id 0.55`). The value is checked in those units (`name`: the option) and
    /// compared in them exactly: a row passes when its ratio (from the integers it is made of)
    /// in the user's units, rounded once, is at least `value`, so a row whose written value
    /// equals the typed one (qcov 0.7 for 70) always passes.
    pub fn with_scaled(mut self, name: &str, column: Column, percent: bool, value: f64) -> Result<Thresholds> {
        let (hi, per) = if percent { (100.0, 100.0) } else { (1.0, 0.01) };
        if value.is_nan() || !(0.0..=hi).contains(&value) {
            return Err(Error::usage(format!("--{name}: {value} is out of range (a number from 0 to {hi})")));
        }
        if !matches!(column, Column::Pident | Column::Qcov | Column::Tcov) {
            return Err(Error::Internal(format!("threshold in other units on column {}", column.name())));
        }
        self.bounds.retain(|b| b.column != column);
        self.bounds.push(Bound { column, min: true, value, per });
        Ok(self)
    }

    /// Local alignments score 0 or more: a negative `--min-score` there is a mistake.
    pub fn check_local(&self) -> Result<()> {
        match self.bounds.iter().find(|b| b.column == Column::Score && b.value < 0.0) {
            Some(b) => Err(Error::usage(format!(
                "--min-score: {} is out of range in local mode (local scores are 0 or more; negative scores \
                 exist in --mode global and semi-global)",
                b.value
            ))),
            None => Ok(()),
        }
    }

    /// The option of the first threshold that reads bits or E-values, as the user names it.
    pub fn statistics_option(&self) -> Option<&'static str> {
        self.bounds.iter().find_map(|b| match b.column {
            Column::Bits => Some("--min-bits"),
            Column::Evalue => Some("--max-evalue"),
            _ => None,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }

    /// What the thresholds need computed (the most of their columns' needs).
    pub fn need(&self) -> Option<Need> {
        self.bounds.iter().map(|b| b.column.need()).max()
    }

    /// True when a threshold bounds a column of `need` exactly (checked at that level).
    pub fn at(&self, need: Need) -> bool {
        self.bounds.iter().any(|b| b.column.need() == need)
    }

    /// True when a threshold reads more than the score (a start or the traceback: identity,
    /// coverage), so rows passing it need not be a prefix of a ranking by score.
    pub fn beyond_score(&self) -> bool {
        self.bounds.iter().any(|b| b.column.need() > Need::ScoreEnd)
    }

    /// True when a hit of this score fails a threshold on the score, bits or E-value (`bits`
    /// and the smallest `evalue` a hit of this score can have: `None` where there are no
    /// statistics), so that every hit of this score or less fails it too.
    pub fn fails_by_score(&self, score: i32, bits: Option<f64>, evalue: Option<f64>) -> bool {
        self.bounds.iter().any(|b| match b.column {
            Column::Score => (score as f64) < b.value,
            Column::Bits => bits.is_some_and(|v| v < b.value),
            Column::Evalue => evalue.is_some_and(|v| v > b.value),
            _ => false,
        })
    }

    /// True when a threshold reads bits or E-values, which need statistics.
    pub fn need_statistics(&self) -> bool {
        self.bounds.iter().any(|b| matches!(b.column, Column::Bits | Column::Evalue))
    }

    /// Per row of `rows`, whether it passes every threshold on a column of level `need`.
    /// A null value (no statistics) passes no bound.
    pub fn keep(&self, rows: &ResultBatch, need: Need) -> Result<Vec<bool>> {
        let bounds: Vec<&Bound> = self.bounds.iter().filter(|b| b.column.need() == need).collect();
        (0..rows.len())
            .map(|i| {
                for b in &bounds {
                    let value = if b.per != 1.0 {
                        // The ratio in the user's units, rounded once (both products exact).
                        let (num, den) = rows.ratio(b.column, i)?;
                        Some(if b.per > 1.0 { num * b.per / den } else { num / (den / b.per) })
                    } else {
                        match rows.value(b.column, i)? {
                            Value::Int(v) => Some(v as f64),
                            Value::Float(v) => v,
                            Value::Text(_) | Value::Bool(_) => None,
                        }
                    };
                    let pass = value.is_some_and(|v| if b.min { v >= b.value } else { v <= b.value });
                    if !pass {
                        return Ok(false);
                    }
                }
                Ok(true)
            })
            .collect()
    }

    /// Drops the rows of `rows` that fail a threshold of level `need`; returns the marks
    /// (None when every row was kept, so callers skip their own subsetting).
    pub fn apply(&self, rows: &mut ResultBatch, need: Need) -> Result<Option<Vec<bool>>> {
        if !self.at(need) {
            return Ok(None);
        }
        let keep = self.keep(rows, need)?;
        if keep.iter().all(|&k| k) {
            return Ok(None);
        }
        rows.retain(&keep)?;
        Ok(Some(keep))
    }

    /// One line for run metadata and `--stats`: `score >= 50, evalue <= 1e-5`; a bound given
    /// in other units shows the value as typed: `qcov >= 70%`, `pident >= 0.55 as a fraction`.
    pub fn describe(&self) -> String {
        let b = |b: &Bound| {
            let unit = match b.per {
                p if p > 1.0 => "%",
                p if p < 1.0 => " as a fraction",
                _ => "",
            };
            format!("{} {} {}{unit}", b.column.name(), if b.min { ">=" } else { "<=" }, b.value)
        };
        self.bounds.iter().map(b).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_usage_errors_naming_the_option() {
        let bad = [
            ThresholdValues { max_evalue: Some(f64::NAN), ..Default::default() },
            ThresholdValues { max_evalue: Some(-1e-5), ..Default::default() },
            ThresholdValues { min_pident: Some(100.5), ..Default::default() },
            ThresholdValues { min_qcov: Some(1.5), ..Default::default() },
            ThresholdValues { min_tcov: Some(-0.1), ..Default::default() },
            ThresholdValues { min_bits: Some(f64::NAN), ..Default::default() },
        ];
        let names = ["--max-evalue", "--max-evalue", "--min-pident", "--min-qcov", "--min-tcov", "--min-bits"];
        for (v, name) in bad.iter().zip(names) {
            let e = Thresholds::new(v).unwrap_err();
            assert!(matches!(e, Error::Input(_)), "{e:?}");
            assert!(e.to_string().contains(name), "{e}");
        }
        let ok = ThresholdValues {
            min_pident: Some(100.0),
            min_qcov: Some(0.0),
            max_evalue: Some(f64::INFINITY),
            ..Default::default()
        };
        let t = Thresholds::new(&ok).unwrap();
        assert_eq!(t.need(), Some(Need::PathStats));
        assert!(t.at(Need::ScoreEnd) && t.at(Need::Coordinates) && !t.at(Need::Path));
        assert!(Thresholds::new(&ThresholdValues::default()).unwrap().is_empty());
    }
}
