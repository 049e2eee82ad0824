"""The Python package against independent oracles: the `swarrow` command line built by cargo
(SWARROW_BIN) on the same inputs (Arrow columns equal, metadata included), parasail's scores
(Debian's python3-parasail, run by /usr/bin/python3), the command line's error messages, and
buffer addresses for the zero-copy path. Run by scripts/test-python.sh."""

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as csv
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

import swarrow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BIN = os.environ.get("SWARROW_BIN", str(ROOT / "target" / "debug" / "swarrow"))
IN_CI = os.environ.get("CI") == "true"


def cli(*args, check=True):
    """Runs the command line; returns (stdout bytes, stderr text, exit status)."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True)
    if check and p.returncode != 0:
        raise AssertionError(f"swarrow {' '.join(map(str, args))}: {p.stderr.decode()}")
    return p.stdout, p.stderr.decode(), p.returncode


def cli_table(*args):
    out, _, _ = cli(*args, "--format", "arrow", "--quiet")
    return ipc.open_stream(out).read_all()


def pairs_table():
    return csv.read_csv(EXAMPLES / "pairs.tsv", parse_options=csv.ParseOptions(delimiter="\t"))


def write_stream(table, path):
    with ipc.new_stream(path, table.schema) as w:
        w.write_table(table)
    return path


def fasta_table(path):
    """ids (up to the first whitespace) and sequences of a FASTA file, as the oracle reads it."""
    opener = gzip.open if str(path).endswith(".gz") else open
    ids, seqs, cur = [], [], None
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                if cur is not None:
                    seqs.append("".join(cur))
                ids.append(line[1:].split()[0])
                cur = []
            elif line:
                cur.append(line)
    seqs.append("".join(cur))
    return pa.table({"id": ids, "sequence": seqs})


def assert_same(got, want, check_metadata=True):
    assert got.schema.names == want.schema.names
    for name in want.schema.names:
        assert got.column(name).combine_chunks().equals(want.column(name).combine_chunks()), name
    assert got.schema.equals(want.schema, check_metadata=check_metadata)


def test_align_equals_the_command_line_on_the_same_table(tmp_path):
    table = pairs_table().append_column("key", pa.array(range(20), pa.int64()))
    path = write_stream(table, tmp_path / "pairs.arrows")
    assert_same(swarrow.align(table), cli_table("align", "--pairs", path))
    cols = "std,qlen,tlen,cigar,qaln,taln,qcov,tcov,qcovhsp"
    assert_same(swarrow.align(table, columns=cols, gap_open=10, gap_extend=2, matrix="BLOSUM80"),
                cli_table("align", "--pairs", path, "--columns", cols, "--gap-open", 10, "--gap-extend", 2,
                          "--matrix", "BLOSUM80"))


def test_dna_scoring_and_named_columns_equal_the_command_line(tmp_path):
    table = pa.table({"a": ["r1", "r2", "r3"], "sa": ["ACGTACGTTTGACC", "ACGTNNACGU", "GGGGCCCCAAAATTTT"],
                      "b": ["c1", "c2", "c3"], "sb": ["ACGTACCTTTGACC", "ACGTACGT", "GGGGAAAATTTT"],
                      "sample": ["s1", "s2", "s3"]})
    path = write_stream(table, tmp_path / "dna.arrows")
    opts = dict(query_id_col="a", query_col="sa", target_id_col="b", target_col="sb")
    got = swarrow.align(table, dna=True, match_score=1, mismatch=-4, gap_open=3, gap_extend=1, **opts)
    want = cli_table("align", "--pairs", path, "--dna", "--match", 1, "--mismatch", -4, "--gap-open", 3,
                     "--gap-extend", 1, "--query-id-col", "a", "--query-col", "sa", "--target-id-col", "b",
                     "--target-col", "sb")
    assert_same(got, want)
    assert got.column("sample").to_pylist() == ["s1", "s2", "s3"]


def test_pairs_by_id_against_sequence_tables_equal_the_command_line(tmp_path):
    seqs = fasta_table(EXAMPLES / "queries.fasta")
    db = fasta_table(EXAMPLES / "db.fasta.gz")
    candidates = csv.read_csv(EXAMPLES / "candidates.tsv", parse_options=csv.ParseOptions(delimiter="\t"))
    s = pq.write_table(seqs, tmp_path / "seqs.parquet")
    pq.write_table(db, tmp_path / "db.parquet")
    got = swarrow.align(candidates, seqs=seqs, target_seqs=db, columns="std,cigar")
    want = cli_table("align", "--pairs", EXAMPLES / "candidates.tsv", "--seqs", tmp_path / "seqs.parquet",
                     "--target-seqs", tmp_path / "db.parquet", "--columns", "std,cigar")
    assert s is None and got.num_rows == 12
    assert_same(got, want)


def test_scores_equal_parasail():
    table = pairs_table()
    got = swarrow.align(table, gap_open=10, gap_extend=1).column("score").to_pylist()
    # parasail's open includes the first gap position: its 11/1 is our 10/1.
    script = ("import json, sys, parasail\n"
              "pairs = json.load(sys.stdin)\n"
              "print(json.dumps([parasail.sw_striped_32(q, t, 11, 1, parasail.blosum62).score for q, t in pairs]))\n")
    pairs = list(zip(table.column("query_seq").to_pylist(), table.column("target_seq").to_pylist()))
    try:
        p = subprocess.run(["/usr/bin/python3", "-c", script], input=json.dumps(pairs), capture_output=True,
                           text=True)
    except FileNotFoundError:
        p = None
    if p is None or p.returncode != 0:
        if IN_CI:
            raise AssertionError(f"parasail is missing: {p and p.stderr}")
        pytest.skip("parasail (Debian python3-parasail) is not installed: bash scripts/install-test-deps.sh")
    assert got == json.loads(p.stdout)


def test_search_equals_the_command_line():
    queries = fasta_table(EXAMPLES / "queries.fasta")
    db = fasta_table(EXAMPLES / "db.fasta.gz")
    got = swarrow.search(queries, db, top=5, max_evalue=1e-3)
    want = cli_table("search", "-q", EXAMPLES / "queries.fasta", "-d", EXAMPLES / "db.fasta.gz", "-k", 5, "-e",
                     "1e-3")
    # The metadata names the database (its file on the command line).
    assert_same(got, want, check_metadata=False)
    assert got.num_rows > 0
    assert got.schema.metadata[b"mode"] == b"search"


def test_pairhmm_equals_the_command_line(tmp_path):
    rows = []
    for g, haps in enumerate([["ACGTACGTTAGCATCGATCGATTACG", "ACGTACGTTAGCATCGTTCGATTACGA"], ["NCGTACG"]]):
        for r, read in enumerate(["ACGTTAGCAT", "GATCGATTAC", "A"]):
            for h, hap in enumerate(haps):
                n = len(read)
                rows.append({"read": f"g{g}r{r}", "read_bases": read, "base_quals": "I" * n, "ins_quals": "5" * n,
                             "del_quals": "9" * n, "haplotype": f"g{g}h{h}", "hap_bases": hap, "group": f"g{g}"})
    table = pa.Table.from_pylist(rows)
    path = write_stream(table, tmp_path / "ph.arrows")
    got = swarrow.pairhmm(table, gcp=12)
    assert_same(got, cli_table("pairhmm", "--pairs", path, "--gcp", 12))
    assert got.num_rows == 9


def error_of(*args):
    _, err, status = cli(*args, "--quiet", check=False)
    assert status == 2, err
    assert err.startswith("swarrow: error: "), err
    return err[len("swarrow: error: "):].strip()


@pytest.mark.parametrize("case", ["bad residue", "missing column", "wrong type", "null", "bad option"])
def test_errors_raise_with_the_command_lines_message(tmp_path, case):
    table = pairs_table()
    extra = []
    if case == "bad residue":
        seqs = table.column("query_seq").to_pylist()
        seqs[3] = seqs[3][:5] + "1" + seqs[3][6:]
        table = table.set_column(1, "query_seq", pa.array(seqs))
    elif case == "missing column":
        table = table.drop_columns(["target_id"])
    elif case == "wrong type":
        table = table.set_column(1, "query_seq", pa.array(range(20), pa.int64()))
    elif case == "null":
        table = table.set_column(3, "target_seq", pa.array([None] + table.column("target_seq").to_pylist()[1:]))
    else:
        extra = ["--columns", "score,nonsense"]
    path = write_stream(table, tmp_path / "bad.arrows")
    want = error_of("align", "--pairs", path, *extra).replace(str(path), "pairs")
    # Options named as Python takes them.
    for flag, keyword in [("--query-col", "query_col="), ("--target-col", "target_col="),
                          ("--query-id-col", "query_id_col="), ("--target-id-col", "target_id_col=")]:
        want = want.replace(flag + ",", keyword + ",").replace(flag + ")", keyword + ")")
    want = want.replace("--columns:", "columns:")
    with pytest.raises(swarrow.SwarrowError) as e:
        swarrow.align(table, columns="score,nonsense" if extra else None)
    assert str(e.value) == want
    assert isinstance(e.value, ValueError)


def test_column_errors_name_keyword_arguments():
    table = pairs_table().rename_columns(["qid", "query_seq", "target_id", "target_seq"])
    with pytest.raises(swarrow.SwarrowError) as e:
        swarrow.align(table)
    message = str(e.value)
    assert "missing column query_id" in message, message
    assert "name others with query_col=, target_col=, query_id_col=, target_id_col=" in message, message
    assert "--" not in message, message
    assert swarrow.align(table, query_id_col="qid").num_rows == 20


def test_a_dict_of_columns_is_a_table():
    table = pairs_table()
    want = swarrow.align(table)
    assert swarrow.align(table.to_pydict()).equals(want)
    with pytest.raises(TypeError, match="^pairs: a dict is read as columns by name"):
        swarrow.align({"query_id": ["a", "b"], "query_seq": ["MK"]})
    with pytest.raises(TypeError, match="^pairs: expected a table .* got list of str"):
        swarrow.align(["query_id", "query_seq"])


def test_an_aligner_says_what_it_aligns_with():
    assert re.fullmatch(r"Aligner\(engine='(cpu|cuda)[^']*', matrix='BLOSUM62', gap_open=11, gap_extend=1\)",
                        repr(swarrow.Aligner(device="cpu"))), repr(swarrow.Aligner(device="cpu"))
    dna = repr(swarrow.Aligner(device="cpu", dna=True, gap_open=4))
    assert re.fullmatch(r"Aligner\(engine='cpu[^']*', matrix='[^']+', gap_open=4, gap_extend=2\)", dna), dna


def test_scoring_option_errors_are_the_command_lines():
    want = error_of("align", "--pairs", EXAMPLES / "pairs.tsv", "--dna", "--mismatch", 3)
    with pytest.raises(swarrow.SwarrowError, match="^--mismatch is a score") as e:
        swarrow.Aligner(dna=True, mismatch=3)
    assert str(e.value) == want
    with pytest.raises(TypeError):
        swarrow.align(42)


def test_carried_columns_leave_as_the_buffers_that_came_in():
    n = 20_000
    table = pairs_table()
    table = pa.concat_tables([table] * (n // 20)).combine_chunks()
    payload = pa.array([f"payload-{i}" * 3 for i in range(n)])
    table = table.append_column("payload", payload)
    address = table.column("payload").chunks[0].buffers()[2].address
    aligner = swarrow.Aligner(batch_pairs=3000)
    out = aligner.align(table, columns="score")
    chunks = out.column("payload").chunks
    assert len(chunks) > 1  # several batches, each a slice of the one input buffer
    assert {c.buffers()[2].address for c in chunks} == {address}
    assert out.column("payload").to_pylist() == payload.to_pylist()


def test_an_aligner_is_reused_and_streams_batches_in_order():
    table = pairs_table()
    aligner = swarrow.Aligner(batch_pairs=3)
    whole = aligner.align(table)
    stream = aligner.align_batches(pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=4)))
    batches = list(stream)
    assert len(batches) > 1
    assert pa.Table.from_batches(batches, schema=stream.schema).equals(whole)
    # A plain iterable of record batches (what Spark's mapInArrow hands over) works too.
    again = aligner.align(iter(table.to_batches(max_chunksize=7)))
    assert again.equals(whole)
    # An error in the middle of a stream is raised by the iterator.
    seqs = table.column("target_seq").to_pylist()
    seqs[15] = "MK!"
    bad = table.set_column(3, "target_seq", pa.array(seqs))
    with pytest.raises(swarrow.SwarrowError, match=r"^pairs: record 16 \(.*\): target_seq: invalid residue '!'"):
        list(aligner.align_batches(bad))


def test_polars_and_duckdb_inputs():
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    table = pairs_table()
    want = swarrow.align(table)
    assert swarrow.align(polars.from_arrow(table)).equals(want)
    rel = duckdb.sql(f"SELECT * FROM read_csv('{EXAMPLES / 'pairs.tsv'}', delim='\t', header=true)")
    assert_same(swarrow.align(rel), want)


def test_the_console_script_is_the_command_line(tmp_path):
    script = Path(sys.executable).with_name("swarrow")
    args = ["align", "--pairs", EXAMPLES / "pairs.tsv", "--format", "tsv"]
    ours = subprocess.run([script, *map(str, args)], capture_output=True)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == cli(*args)[0]
    bad = subprocess.run([script, "align", "--pairs", tmp_path / "missing.tsv"], capture_output=True)
    assert bad.returncode == 2
    assert bad.stderr.decode().startswith("swarrow: error: ")


def test_the_readme_python_example_runs_as_shown():
    # The README shows examples/python_align.py verbatim; it must run and align every pair.
    example = (EXAMPLES / "python_align.py").read_text()
    assert example in (ROOT / "README.md").read_text(), "README's Python example differs from the file"
    p = subprocess.run([sys.executable, str(EXAMPLES / "python_align.py")], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = sum(1 for line in (EXAMPLES / "pairs.tsv").read_text().splitlines()[1:] if line.strip())
    assert p.stdout.startswith(f"{rows} pairs aligned"), p.stdout


def test_thresholds_keep_the_rows_of_the_full_table_that_pass(tmp_path):
    """Thresholds as keyword arguments: the full result filtered here (pyarrow), and the
    command line's thresholded output, metadata included."""
    import pyarrow.compute as pc

    table = pairs_table()
    cols = "query,target,score,evalue,pident,qcov"
    full = swarrow.align(table, columns=cols)
    got = swarrow.align(table, columns=cols, min_score=30, min_pident=30.0, min_qcov=0.2)
    keep = pc.and_(pc.and_(pc.greater_equal(full["score"], 30), pc.greater_equal(full["pident"], 30.0)),
                   pc.greater_equal(full["qcov"], 0.2))
    want = full.filter(keep)
    assert 0 < want.num_rows < full.num_rows
    assert_same(got, want, check_metadata=False)
    path = write_stream(table, tmp_path / "pairs.arrows")
    assert_same(got, cli_table("align", "--pairs", path, "--columns", cols, "--min-score", "30",
                               "--min-pident", "30", "--min-qcov", "0.2"))
    with pytest.raises(swarrow.SwarrowError, match="^min_pident: 150 is out of range"):
        swarrow.align(table, min_pident=150)


def test_modes_equal_the_command_line(tmp_path):
    """mode= and free_ends= as the command line's --mode and --free-ends (global and
    semi-global scores below zero included; bits and E-values null outside local)."""
    table = pairs_table()
    path = write_stream(table, tmp_path / "pairs.arrows")
    cols = "query,target,score,bits,qstart,qend,tstart,tend,cigar"
    for mode, ends in [("global", None), ("semi-global", "target-start,target-end")]:
        got = swarrow.align(table, columns=cols, mode=mode, free_ends=ends)
        args = ["--mode", mode] + (["--free-ends", ends] if ends else [])
        assert_same(got, cli_table("align", "--pairs", path, "--columns", cols, *args))
        assert got.column("bits").null_count == got.num_rows
    with pytest.raises(swarrow.SwarrowError, match="mode: unknown mode"):
        swarrow.align(table, mode="glocal")


# Issue 60 item 13: strand, window, region_cols and strand_col against parasail on the
# test's own reverse complements and windows (sliced here, by hand).

COMPLEMENT = str.maketrans("ACGT", "TGCA")


def revcomp(s):
    return s.translate(COMPLEMENT)[::-1]


def parasail_dna_scores(pairs, match, mismatch, gap_open, gap_extend):
    """parasail's local scores of (query, target) DNA pairs; our open o, extend e is its o + e, e."""
    script = ("import json, sys, parasail\n"
              "m, x, o, e, pairs = json.load(sys.stdin)\n"
              "mat = parasail.matrix_create('ACGT', m, x)\n"
              "print(json.dumps([parasail.sw_striped_32(q, t, o + e, e, mat).score for q, t in pairs]))\n")
    try:
        p = subprocess.run(["/usr/bin/python3", "-c", script], capture_output=True, text=True,
                           input=json.dumps([match, mismatch, gap_open, gap_extend, pairs]))
    except FileNotFoundError:
        p = None
    if p is None or p.returncode != 0:
        if IN_CI:
            raise AssertionError(f"parasail is missing: {p and p.stderr}")
        pytest.skip("parasail (Debian python3-parasail) is not installed: bash scripts/install-test-deps.sh")
    return json.loads(p.stdout)


def dna_pairs(n, seed):
    """Reads and the contigs they came from, on either strand, with a few changes."""
    import random

    rng = random.Random(seed)
    base = lambda: rng.choice("ACGT")
    ids, qs, tids, ts = [], [], [], []
    for i in range(n):
        contig = "".join(base() for _ in range(60 + rng.randrange(60)))
        at = rng.randrange(len(contig) - 30)
        read = "".join(c if rng.random() > 0.08 else base() for c in contig[at:at + 20 + rng.randrange(10)])
        ids.append(f"r{i}")
        qs.append(revcomp(read) if i % 2 else read)
        tids.append(f"c{i}")
        ts.append(contig)
    return ids, qs, tids, ts


SCORING = dict(dna=True, match_score=2, mismatch=-3, gap_open=5, gap_extend=2)


def test_strand_aligns_the_reverse_complement_as_parasail_scores_it():
    ids, qs, tids, ts = dna_pairs(40, 60)
    table = pa.table({"query_id": ids, "query_seq": qs, "target_id": tids, "target_seq": ts})
    plus = parasail_dna_scores(list(zip(qs, ts)), 2, -3, 5, 2)
    minus = parasail_dna_scores([[revcomp(q), t] for q, t in zip(qs, ts)], 2, -3, 5, 2)
    cols = "query,strand,score"
    for strand, want_scores, want_strands in [
        ("plus", plus, ["+"] * len(qs)),
        ("minus", minus, ["-"] * len(qs)),
        # both: the better strand, a tie going to plus.
        ("both", [max(p, m) for p, m in zip(plus, minus)], ["-" if m > p else "+" for p, m in zip(plus, minus)]),
    ]:
        for got in [swarrow.align(table, columns=cols, strand=strand, **SCORING),
                    swarrow.Aligner(strand=strand, **SCORING).align(table, columns=cols)]:
            assert got.column("score").to_pylist() == want_scores, strand
            assert got.column("strand").to_pylist() == want_strands, strand
    assert any(m > p for p, m in zip(plus, minus)) and any(p > m for p, m in zip(plus, minus))
    with pytest.raises(swarrow.SwarrowError, match="strand must be 'plus', 'minus' or 'both'"):
        swarrow.Aligner(strand="reverse", **SCORING)


def test_regions_strands_and_windows_place_candidates_as_sliced_by_hand():
    import random

    rng = random.Random(61)
    ids, qs, tids, ts = dna_pairs(30, 62)
    seqs = pa.table({"id": ids + tids, "sequence": qs + ts})
    rows = []
    for i in range(len(ids)):
        q, t = qs[i], ts[i]
        qs0 = rng.randrange(len(q))
        qe0 = qs0 + 1 + rng.randrange(len(q) - qs0)  # not empty: parasail takes no empty sequence
        ts0 = rng.randrange(len(t))
        te0 = ts0 + 1 + rng.randrange(len(t) - ts0)
        rows.append((ids[i], tids[i], qs0, qe0, ts0, te0, "-" if i % 2 else "+"))
    cands = pa.table({name: [r[k] for r in rows] for k, name in
                      enumerate(["query_id", "target_id", "qs", "qe", "ts", "te", "st"])})
    by_id = {**dict(zip(ids, qs)), **dict(zip(tids, ts))}

    def window(s, e, n, margin):
        return (0, n) if margin is None else (max(s - margin, 0), min(e + margin, n))

    for margin in [0, 5, None]:
        pairs = []
        for qid, tid, qs0, qe0, ts0, te0, st in rows:
            q, t = by_id[qid], by_id[tid]
            qa, qb = window(qs0, qe0, len(q), margin)
            ta, tb = window(ts0, te0, len(t), margin)
            qw = q[qa:qb]
            pairs.append([revcomp(qw) if st == "-" else qw, t[ta:tb]])
        want = parasail_dna_scores(pairs, 2, -3, 5, 2)
        got = swarrow.align(cands, seqs=seqs, columns="query,target,strand,score", region_cols=["qs", "qe", "ts", "te"],
                            strand_col="st", window="full" if margin is None else margin, **SCORING)
        assert got.column("score").to_pylist() == want, margin
        assert got.column("strand").to_pylist() == [r[6] for r in rows]
    # The strand column alone: whole sequences on each candidate's strand.
    whole = parasail_dna_scores([[revcomp(by_id[r[0]]) if r[6] == "-" else by_id[r[0]], by_id[r[1]]] for r in rows],
                                2, -3, 5, 2)
    got = swarrow.align(cands, seqs=seqs, columns="query,score", strand_col="st", **SCORING)
    assert got.column("score").to_pylist() == whole
    with pytest.raises(ValueError, match="region_cols: four column names"):
        swarrow.align(cands, seqs=seqs, region_cols=["qs", "qe"], **SCORING)
