//! The output columns, in one registry: canonical name, the names BLAST, MMseqs2 and DIAMOND
//! users type for it, Arrow type, and what computing it needs. `--columns` picks and orders
//! them for every format; [`Columns::default_for`] gives each format's default.

use arrow::datatypes::{DataType, Field};

use super::{Format, Mode};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    Query,
    Target,
    Score,
    Bits,
    Evalue,
    Qstart,
    Qend,
    Tstart,
    Tend,
    Qlen,
    Tlen,
    Recomputed,
    Rank,
    Qnum,
    Pident,
    Nident,
    Length,
    Mismatch,
    Gapopen,
    Gaps,
    Qcov,
    Tcov,
    Cigar,
    Qaln,
    Taln,
    Qheader,
    Theader,
    Qcovhsp,
    Strand,
    Mapq,
    Flag,
    Overlap,
}

/// What a column's values come from, from the least work to the most: each level
/// includes those before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// Score and end cell: the forward pass alone.
    ScoreEnd,
    /// Start coordinates too: the reverse pass.
    Coordinates,
    /// The traceback path's statistics (identity, length, mismatches, gaps).
    PathStats,
    /// The path itself (CIGAR, aligned strings).
    Path,
}

impl Need {
    /// The engine level that gives this need's coordinates (paths start from them).
    pub fn level(self) -> crate::engine::Level {
        match self {
            Need::ScoreEnd => crate::engine::Level::ScoreEnd,
            _ => crate::engine::Level::Coordinates,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Float,
    Bool,
}

struct Spec {
    column: Column,
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    need: Need,
    help: &'static str,
}

const SPECS: [Spec; 32] = [
    spec(Column::Query, "query", &["qseqid"], Kind::Text, Need::ScoreEnd, "query id"),
    spec(Column::Target, "target", &["sseqid", "tseqid", "subject"], Kind::Text, Need::ScoreEnd, "target id"),
    spec(Column::Score, "score", &["raw", "rawscore"], Kind::Int, Need::ScoreEnd, "raw alignment score"),
    spec(Column::Bits, "bits", &["bitscore"], Kind::Float, Need::ScoreEnd, "bit score (null without statistics)"),
    spec(Column::Evalue, "evalue", &[], Kind::Float, Need::ScoreEnd, "E-value (null without statistics)"),
    spec(Column::Qstart, "qstart", &[], Kind::Int, Need::Coordinates, "first aligned query residue, 1-based"),
    spec(Column::Qend, "qend", &[], Kind::Int, Need::ScoreEnd, "last aligned query residue"),
    spec(Column::Tstart, "tstart", &["sstart"], Kind::Int, Need::Coordinates, "first aligned target residue"),
    spec(Column::Tend, "tend", &["send"], Kind::Int, Need::ScoreEnd, "last aligned target residue"),
    spec(Column::Qlen, "qlen", &[], Kind::Int, Need::ScoreEnd, "query length"),
    spec(Column::Tlen, "tlen", &["slen"], Kind::Int, Need::ScoreEnd, "target length"),
    spec(Column::Recomputed, "recomputed", &[], Kind::Bool, Need::ScoreEnd, "score above 32,767 (32-bit path)"),
    spec(Column::Rank, "rank", &[], Kind::Int, Need::ScoreEnd, "rank of the hit for its query (search)"),
    spec(
        Column::Qnum,
        "qnum",
        &[],
        Kind::Int,
        Need::ScoreEnd,
        "the query's number in the query input, 1-based (search; merge keeps the input's query order by it)",
    ),
    spec(Column::Pident, "pident", &[], Kind::Float, Need::PathStats, "percent identity: 100 x nident / length"),
    spec(Column::Nident, "nident", &[], Kind::Int, Need::PathStats, "identical pairs"),
    spec(Column::Length, "length", &["alnlen"], Kind::Int, Need::PathStats, "alignment columns: pairs + gap positions"),
    spec(Column::Mismatch, "mismatch", &[], Kind::Int, Need::PathStats, "pairs of different residues"),
    spec(Column::Gapopen, "gapopen", &[], Kind::Int, Need::PathStats, "gaps (runs of gap positions)"),
    spec(Column::Gaps, "gaps", &[], Kind::Int, Need::PathStats, "gap positions"),
    spec(
        Column::Qcov,
        "qcov",
        &[],
        Kind::Float,
        Need::Coordinates,
        "aligned query span / query length, 0-1 (MMseqs2's qcov)",
    ),
    spec(Column::Tcov, "tcov", &[], Kind::Float, Need::Coordinates, "aligned target span / target length, 0-1"),
    spec(
        Column::Cigar,
        "cigar",
        &[],
        Kind::Text,
        Need::Path,
        "extended CIGAR (=, X, I: query residue vs gap, D: target residue vs gap)",
    ),
    spec(Column::Qaln, "qaln", &["qseq"], Kind::Text, Need::Path, "aligned query, - for gaps"),
    spec(Column::Taln, "taln", &["sseq", "tseq"], Kind::Text, Need::Path, "aligned target, - for gaps"),
    spec(
        Column::Qheader,
        "qheader",
        &["qtitle"],
        Kind::Text,
        Need::ScoreEnd,
        "query's FASTA header (null without one)",
    ),
    spec(
        Column::Theader,
        "theader",
        &["stitle", "ttitle"],
        Kind::Text,
        Need::ScoreEnd,
        "target's FASTA header (null without one)",
    ),
    spec(
        Column::Qcovhsp,
        "qcovhsp",
        &[],
        Kind::Int,
        Need::Coordinates,
        "BLAST's query coverage per HSP: 100 x aligned query span / query length, as an integer",
    ),
    spec(
        Column::Strand,
        "strand",
        &["sstrand"],
        Kind::Text,
        Need::ScoreEnd,
        "the query's strand against the target: + as given, - reverse-complemented (DNA, --strand)",
    ),
    spec(
        Column::Mapq,
        "mapq",
        &[],
        Kind::Int,
        Need::PathStats,
        "mapping quality 0-60 from the read's rows (README: a read's records), 0 for secondary rows",
    ),
    spec(
        Column::Flag,
        "flag",
        &[],
        Kind::Int,
        Need::Coordinates,
        "SAM FLAG of the row's record: 16 minus, 256 secondary, 2048 supplementary, 4 no alignment",
    ),
    spec(
        Column::Overlap,
        "overlap",
        &[],
        Kind::Text,
        Need::Coordinates,
        "what the alignment is as an overlap, from its coordinates: containment (a whole sequence aligned), \
         dovetail (it starts at a sequence's start and ends at a sequence's end), internal, or none (no residue \
         of a side)",
    ),
];

const fn spec(
    column: Column,
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    need: Need,
    help: &'static str,
) -> Spec {
    Spec { column, name, aliases, kind, need, help }
}

impl Column {
    fn spec(self) -> &'static Spec {
        // SPECS lists every column once, in declaration order.
        &SPECS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn kind(self) -> Kind {
        self.spec().kind
    }

    pub fn need(self) -> Need {
        self.spec().need
    }

    /// The column a name (canonical or alias, case-insensitive) means.
    pub fn parse(name: &str) -> Option<Column> {
        let name = name.trim().to_ascii_lowercase();
        SPECS.iter().find(|s| s.name == name || s.aliases.contains(&name.as_str())).map(|s| s.column)
    }

    /// BLAST+'s `qcovhsp` of an alignment on query residues `start..=end` of a query of
    /// `len` residues: `100 * (end - start + 1) / len`, rounded half up below 99 and
    /// truncated from 99 on (so only a whole query gives 100); 0 without an alignment.
    pub fn qcovhsp_of(start: i32, end: i32, len: i32) -> i32 {
        if start <= 0 || len <= 0 {
            return 0;
        }
        let pct = 100.0 * f64::from(end - start + 1) / f64::from(len);
        (if pct < 99.0 { pct + 0.5 } else { pct }) as i32
    }

    /// The `overlap` column of an alignment on query residues `qs..=qe` of `ql` (as given)
    /// and target residues `ts..=te` of `tl`, the query on `strand`: `containment` when it
    /// holds a whole sequence, `dovetail` when it starts at the start of one of the aligned
    /// sequences and ends at the end of one (the query's start and end swap on minus),
    /// `internal` otherwise, `none` when it holds no residue of a side (start 0).
    pub fn overlap_of(q: (i32, i32, i32), t: (i32, i32, i32), strand: crate::seq::Strand) -> &'static str {
        let ((qs, qe, ql), (ts, te, tl)) = (q, t);
        if qs <= 0 || ts <= 0 {
            return "none";
        }
        let (q_first, q_last) = (qs == 1, qe == ql);
        let (q_begins, q_ends) = match strand {
            crate::seq::Strand::Plus => (q_first, q_last),
            crate::seq::Strand::Minus => (q_last, q_first),
        };
        if (q_first && q_last) || (ts == 1 && te == tl) {
            "containment"
        } else if (q_begins || ts == 1) && (q_ends || te == tl) {
            "dovetail"
        } else {
            "internal"
        }
    }

    pub fn field(self) -> Field {
        let (ty, nullable) = match self.kind() {
            Kind::Text => (DataType::Utf8, matches!(self, Column::Qheader | Column::Theader)),
            Kind::Int => (DataType::Int32, false),
            Kind::Float => (DataType::Float64, matches!(self, Column::Bits | Column::Evalue)),
            Kind::Bool => (DataType::Boolean, false),
        };
        Field::new(self.name(), ty, nullable)
    }
}

impl Column {
    /// The column's name on BLAST's `# Fields:` comment line (`-outfmt 7`), as BLAST+ 2.12
    /// writes it for the specifier (`qseqid`: `query id`; see [`Columns::blast_fields`] for
    /// `std`'s ids); columns BLAST has not, by their own name.
    pub fn blast_field(self) -> &'static str {
        use Column::*;
        match self {
            Query => "query id",
            Target => "subject id",
            Score => "score",
            Bits => "bit score",
            Evalue => "evalue",
            Qstart => "q. start",
            Qend => "q. end",
            Tstart => "s. start",
            Tend => "s. end",
            Qlen => "query length",
            Tlen => "subject length",
            Pident => "% identity",
            Nident => "identical",
            Length => "alignment length",
            Mismatch => "mismatches",
            Gapopen => "gap opens",
            Gaps => "gaps",
            Qaln => "query seq",
            Taln => "subject seq",
            Theader => "subject title",
            Qcovhsp => "% query coverage per hsp",
            Qheader => "query title",
            Recomputed | Rank | Qnum | Qcov | Tcov | Cigar | Strand | Mapq | Flag | Overlap => self.name(),
        }
    }
}

/// True when `name` is a result column's canonical name (any output may hold it).
pub fn is_column_name(name: &str) -> bool {
    SPECS.iter().any(|s| s.name == name)
}

/// One line per column for help texts: name, aliases, meaning.
pub fn describe_all() -> String {
    SPECS
        .iter()
        .map(|s| {
            let aliases = if s.aliases.is_empty() { String::new() } else { format!(" ({})", s.aliases.join(", ")) };
            format!("  {}{}: {}", s.name, aliases, s.help)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// BLAST's `-outfmt 6` columns, in its order.
pub const BLAST_TABULAR: [Column; 12] = [
    Column::Query,
    Column::Target,
    Column::Pident,
    Column::Length,
    Column::Mismatch,
    Column::Gapopen,
    Column::Qstart,
    Column::Qend,
    Column::Tstart,
    Column::Tend,
    Column::Evalue,
    Column::Bits,
];

/// The columns an output holds, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns(pub Vec<Column>);

impl Columns {
    /// The default of `format` in `mode`: BLAST tabular's twelve, else score and coordinates
    /// (with `rank` in search mode).
    pub fn default_for(mode: Mode, format: Format) -> Columns {
        if format.is_blast_tabular() {
            return Columns(BLAST_TABULAR.to_vec());
        }
        use Column::*;
        let mut v = vec![Query, Target, Score, Bits, Evalue, Qstart, Qend, Tstart, Tend, Qlen, Tlen, Recomputed];
        if mode == Mode::Search {
            v.extend([Rank, Qnum]);
        }
        Columns(v)
    }

    /// `--columns`: names separated by commas or spaces, each once; `rank` in search only;
    /// `std` stands for BLAST's twelve `-outfmt 6` columns, in their order (as in BLAST's
    /// `-outfmt "6 std qlen slen"`).
    pub fn parse(list: &str, mode: Mode) -> Result<Columns> {
        let mut out = Vec::new();
        for name in list.split([',', ' ', '\t']).filter(|n| !n.trim().is_empty()) {
            let named: Vec<Column> = if name.trim().eq_ignore_ascii_case("std") {
                BLAST_TABULAR.to_vec()
            } else {
                vec![Column::parse(name).ok_or_else(|| {
                    let names = SPECS.iter().flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()));
                    let near = crate::error::nearest(name, names.chain(["std"]));
                    let hint = match near.is_empty() {
                        true => String::new(),
                        false => format!("; did you mean {}?", near.join(", ")),
                    };
                    Error::usage(format!(
                        "--columns: unknown column '{}'{hint} (--help lists the columns)",
                        name.trim()
                    ))
                })?]
            };
            for column in named {
                if matches!(column, Column::Rank | Column::Qnum) && mode == Mode::Align {
                    return Err(Error::usage(format!("--columns: '{}' exists in search results only", column.name())));
                }
                if out.contains(&column) {
                    return Err(Error::usage(format!("--columns: '{}' is listed twice", column.name())));
                }
                out.push(column);
            }
        }
        if out.is_empty() {
            return Err(Error::usage("--columns: give at least one column"));
        }
        Ok(Columns(out))
    }

    /// BLAST's `# Fields:` line for these columns (`-outfmt 7`): BLAST's `std`, its default,
    /// names the ids `query acc.ver` and `subject acc.ver`, so columns that begin with `std`'s
    /// twelve (the default, `7 std ...`) are named so; otherwise each by its specifier.
    pub fn blast_fields(&self) -> String {
        let std_first = self.0.starts_with(&BLAST_TABULAR);
        let name = |k: usize, c: Column| match (std_first, k) {
            (true, 0) => "query acc.ver",
            (true, 1) => "subject acc.ver",
            _ => c.blast_field(),
        };
        self.0.iter().enumerate().map(|(k, &c)| name(k, c)).collect::<Vec<_>>().join(", ")
    }

    /// The most any column needs computed.
    pub fn need(&self) -> Need {
        self.0.iter().map(|c| c.need()).max().unwrap_or(Need::ScoreEnd)
    }

    pub fn fields(&self) -> Vec<Field> {
        self.0.iter().map(|c| c.field()).collect()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|c| c.name()).collect()
    }

    pub fn contains(&self, c: Column) -> bool {
        self.0.contains(&c)
    }

    /// True when a column's values come from the reads' record decisions
    /// ([`super::mapping`]): the rows are grouped by read before they are written.
    pub fn are_decided(&self) -> bool {
        self.contains(Column::Mapq) || self.contains(Column::Flag)
    }
}

/// PAF's mandatory columns, in the order its 12 fields use them (`Nident`, `Length` and
/// the other statistics come from the traceback's statistics, [`Need::PathStats`]; the GPU
/// computes them without storing a path).
pub const PAF_MANDATORY: [Column; 14] = [
    Column::Query,
    Column::Qlen,
    Column::Qstart,
    Column::Qend,
    Column::Target,
    Column::Tlen,
    Column::Tstart,
    Column::Tend,
    Column::Nident,
    Column::Length,
    Column::Score,
    Column::Mismatch,
    Column::Gapopen,
    Column::Gaps,
];

/// The path columns: asking for one asks for the path ([`Need::Path`]).
const PATH_COLUMNS: [Column; 3] = [Column::Cigar, Column::Qaln, Column::Taln];

/// What a PAF, SAM or BAM output computes: the format's mandatory columns, and the path
/// where the format needs it or the user asks for it. `given` is `--columns` (None: the
/// default). The rule:
/// - PAF: its 12 columns and `tp NM AS de` always (statistics of the path, [`Need::PathStats`]);
///   `cg:Z` too when a path is asked: `--columns` names `cigar` (or `qaln`/`taln`), or `--eqx`.
/// - SAM/BAM: always the path (CIGAR, MD).
///
/// `--columns` cannot remove a mandatory column; a column the format has no field for is
/// refused (named), not dropped in silence.
pub fn for_alignment_format(format: Format, given: Option<&Columns>, eqx: bool) -> Result<Columns> {
    let mut out: Vec<Column> = PAF_MANDATORY.to_vec();
    // MAPQ and FLAG are fields of every alignment format (PAF: column 12 and tp:A).
    let decided = [Column::Mapq, Column::Flag];
    let writes = |c: Column| PAF_MANDATORY.contains(&c) || PATH_COLUMNS.contains(&c) || decided.contains(&c);
    if let Some(given) = given {
        if let Some(&c) = given.0.iter().find(|&&c| !writes(c)) {
            let (name, path) = match format {
                Format::Paf => ("PAF", "its 12 columns and tp, NM, AS, de (cg with --columns cigar or --eqx)"),
                _ => ("SAM/BAM", "its fixed fields and AS, NM, MD"),
            };
            return Err(Error::usage(format!(
                "--columns: {name} output has no field for '{}': it writes {path}; the columns it can take are \
                 {} (write TSV, Arrow or Parquet for other columns)",
                c.name(),
                PAF_MANDATORY
                    .iter()
                    .chain(&PATH_COLUMNS)
                    .chain(&decided)
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        }
    }
    let path_asked = eqx || given.is_some_and(|g| g.0.iter().any(|c| PATH_COLUMNS.contains(c)));
    if format != Format::Paf || path_asked {
        out.extend(PATH_COLUMNS);
    }
    Ok(Columns(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_in_declaration_order_and_names_are_unique() {
        let mut names = Vec::new();
        for (k, s) in SPECS.iter().enumerate() {
            assert_eq!(s.column as usize, k, "{}", s.name);
            names.push(s.name);
            names.extend(s.aliases);
        }
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a name or alias twice");
    }

    #[test]
    fn parse_accepts_aliases_in_any_case_and_refuses_unknown_or_repeated() {
        let c = Columns::parse("qseqid,SSEQID, pident bitscore", Mode::Search).unwrap();
        assert_eq!(c.0, vec![Column::Query, Column::Target, Column::Pident, Column::Bits]);
        assert_eq!(c.need(), Need::PathStats);
        assert!(Columns::parse("query,nope", Mode::Search).unwrap_err().to_string().contains("unknown column 'nope'"));
        assert!(Columns::parse("query,qseqid", Mode::Search).is_err());
        assert!(Columns::parse("rank", Mode::Align).is_err());
        assert_eq!(Columns::parse("cigar", Mode::Align).unwrap().need(), Need::Path);
    }

    #[test]
    fn std_is_blasts_twelve_and_may_be_followed_by_more() {
        let c = Columns::parse("std qlen slen qcovhsp", Mode::Search).unwrap();
        let mut want = BLAST_TABULAR.to_vec();
        want.extend([Column::Qlen, Column::Tlen, Column::Qcovhsp]);
        assert_eq!(c.0, want);
        assert_eq!(c.need(), Need::PathStats);
        assert!(Columns::parse("std,qseqid", Mode::Search)
            .unwrap_err()
            .to_string()
            .contains("'query' is listed twice"));
        assert_eq!(Column::qcovhsp_of(0, 0, 0), 0);
    }

    /// BLAST+'s qcovhsp (`CBlastTabularInfo::x_SetQueryCovSeqalign`): `tmp = 100 * span /
    /// qlen`, plus 0.5 below 99, truncated; so 99.4 and 99.9 print 99, 100 prints 100.
    /// Expected values worked out by hand from that rule.
    #[test]
    fn qcovhsp_rounds_as_blast_does() {
        let cases = [
            ((1, 100, 100), 100),
            ((1, 99, 100), 99),
            ((1, 994, 1000), 99),
            ((1, 999, 1000), 99),
            ((1, 985, 1000), 99),
            ((1, 984, 1000), 98),
            ((11, 20, 200), 5),
            ((1, 1, 3), 33),
            ((1, 2, 3), 67),
            ((2, 2, 8), 13),
            ((1, 1, 200), 1),
            ((1, 1, 201), 0),
        ];
        for ((start, end, len), want) in cases {
            assert_eq!(Column::qcovhsp_of(start, end, len), want, "{start}-{end} of {len}");
        }
    }

    #[test]
    fn alignment_formats_compute_their_mandatory_columns_and_the_path_when_asked() {
        let paf = for_alignment_format(Format::Paf, None, false).unwrap();
        assert_eq!(paf.need(), Need::PathStats);
        assert!(!paf.contains(Column::Cigar));
        // --columns cannot remove a mandatory column: naming one is the default again.
        assert_eq!(for_alignment_format(Format::Paf, Some(&Columns(vec![Column::Query])), false).unwrap(), paf);
        for asked in [Some(Columns(vec![Column::Cigar])), Some(Columns(vec![Column::Taln]))] {
            let with_path = for_alignment_format(Format::Paf, asked.as_ref(), false).unwrap();
            assert_eq!(with_path.need(), Need::Path);
            assert!(with_path.contains(Column::Cigar));
        }
        assert_eq!(for_alignment_format(Format::Paf, None, true).unwrap().need(), Need::Path);
        for format in [Format::Sam, Format::Bam] {
            assert_eq!(for_alignment_format(format, None, false).unwrap().need(), Need::Path);
        }
        let refused = for_alignment_format(Format::Paf, Some(&Columns(vec![Column::Evalue])), false).unwrap_err();
        assert!(refused.to_string().contains("no field for 'evalue'"), "{refused}");
    }

    #[test]
    fn blast_default_is_outfmt_6() {
        let names = Columns::default_for(Mode::Search, Format::Blast).names().join(" ");
        assert_eq!(names, "query target pident length mismatch gapopen qstart qend tstart tend evalue bits");
    }

    /// Hand-checked overlaps of a 100-residue query and a 200-residue target.
    #[test]
    fn overlap_kinds_by_hand() {
        use crate::seq::Strand::{Minus, Plus};
        let cases = [
            // The query's suffix on the target's prefix; on minus the query's prefix is.
            ((41, 100, 100), (1, 60, 200), Plus, "dovetail"),
            ((1, 60, 100), (1, 60, 200), Minus, "dovetail"),
            ((1, 60, 100), (1, 60, 200), Plus, "internal"),
            // The target's suffix on the query's prefix.
            ((1, 30, 100), (171, 200, 200), Plus, "dovetail"),
            ((71, 100, 100), (171, 200, 200), Minus, "dovetail"),
            // A whole sequence.
            ((1, 100, 100), (51, 150, 200), Plus, "containment"),
            ((1, 100, 100), (51, 150, 200), Minus, "containment"),
            ((10, 90, 100), (1, 200, 200), Plus, "containment"),
            // Short of the ends on a side.
            ((41, 99, 100), (1, 59, 200), Plus, "internal"),
            ((20, 60, 100), (50, 90, 200), Plus, "internal"),
            ((0, 0, 100), (1, 5, 200), Plus, "none"),
        ];
        for (q, t, strand, want) in cases {
            assert_eq!(Column::overlap_of(q, t, strand), want, "{q:?} {t:?} {strand:?}");
        }
    }
}
