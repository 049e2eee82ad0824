"""Workflow and data-lake checks, run by scripts/workflow-tests.sh (see there).

  snakemake  both Snakemake rule sets (--cores 2) on the bundled data plus a database with
             planted exact ties across shards; merged results must equal unsharded runs
             (same rows, same E-values), and the documented DuckDB one-liner must equal
             `swarrow merge`.
  lake       Parquet layout (zstd, row groups, run metadata, stable types) read by pyarrow,
             DuckDB and Polars; an Arrow IPC stream read from a pipe by pyarrow and Polars.
  recipes    examples/recipes/*.sh against their expected outputs.
  assembly   the Snakemake assembler stages (target `assembly`, minimap2 and samtools) on
             simulated reads: overlaps.paf equals the unsharded run's PAF byte for byte;
             reads.sorted.bam is valid, indexed, sorted, with the unsharded run's records and
             one primary record a read.

Oracles are independent of swarrow's own output: planted homologs must rank first, a
self-alignment scores the sum of BLOSUM62's diagonal over the full length, unsharded runs
are the reference for sharded ones.
"""
import gzip
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
SW = os.environ.get("SWARROW_BIN", "swarrow")
COLUMNS = ["query", "target", "score", "bits", "evalue", "qstart", "qend", "tstart", "tend",
           "qlen", "tlen", "recomputed"]
TYPES = {"query": pa.string(), "target": pa.string(), "score": pa.int32(), "bits": pa.float64(),
         "evalue": pa.float64(), "qstart": pa.int32(), "qend": pa.int32(), "tstart": pa.int32(),
         "tend": pa.int32(), "qlen": pa.int32(), "tlen": pa.int32(), "recomputed": pa.bool_(),
         "rank": pa.int32(), "qnum": pa.int32()}

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def sh(args, **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"command failed ({r.returncode}): {' '.join(map(str, args))}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def query_ids():
    return [l[1:].split()[0] for l in (EX / "queries.fasta").read_text().splitlines() if l.startswith(">")]


def fasta_records(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        text = f.read()
    recs = []
    for block in text.split(">")[1:]:
        head, _, seq = block.partition("\n")
        recs.append((head.split()[0], "".join(seq.split())))
    return recs


def write_fasta(path, recs):
    with open(path, "w") as f:
        for rid, seq in recs:
            f.write(f">{rid}\n{seq}\n")


def tied_database(path):
    """The bundled database with exact copies of each planted homolog at the very start
    (first shard) and very end (last shard): equal scores across shards, so the merge's
    tie-break (shard order, then shard rank) and the top-k cut are exercised."""
    recs = fasta_records(EX / "db.fasta.gz")
    homologs = [r for r in recs if r[0].startswith("homolog_of_")]
    assert len(homologs) == 6, homologs
    first = [("copy_first_" + rid, seq) for rid, seq in homologs]
    last = [("copy_last_" + rid, seq) for rid, seq in homologs]
    write_fasta(path, first + recs + last)


def same_table(a, b, what):
    a = a.replace_schema_metadata(None)
    b = b.replace_schema_metadata(None)
    ok = a.equals(b)
    if not ok:
        print(f"  {what}: {a.num_rows} vs {b.num_rows} rows", file=sys.stderr)
        for i, (x, y) in enumerate(zip(a.to_pylist(), b.to_pylist())):
            if x != y:
                print(f"  first difference at row {i}:\n    {x}\n    {y}", file=sys.stderr)
                break
    check(ok, what)


def snakemake(workdir, config, targets=()):
    args = ["snakemake", "-s", ROOT / "workflows/snakemake/Snakefile", "--cores", "2",
            *targets, "--directory", workdir, "--quiet", "--config"] + [f"{k}={v}" for k, v in config.items()]
    sh(args)


def part_assembly():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sh([sys.executable, ROOT / "scripts/assembly-sim.py", tmp, "--seed", 7, "--contigs", 2,
            "--contig-len", "10000-14000", "--long", 40, "--long-len", "1500-2500"])
        reads, contigs = tmp / "long.fq", tmp / "genome.fa"
        config = dict(swarrow=SW, reads=reads, contigs=contigs, map_preset="map-pb", outdir="out",
                      shards=3, device="cpu", threads=1)
        snakemake(tmp, config, ["assembly"])
        out = tmp / "out"
        run = ["--device", "cpu", "--quiet"]
        cands = out / "shards/overlap-candidates.paf"
        sh([SW, "align", "--dna", "--mode", "semi-global", "--pairs", cands, "--seqs", reads,
            "-o", tmp / "whole.paf"] + run)
        paf = (out / "overlaps.paf").read_text()
        check(len(paf.splitlines()) == len(cands.read_text().splitlines()) > 0,
              f"overlaps.paf: one line a candidate ({len(paf.splitlines())})")
        check(paf == (tmp / "whole.paf").read_text(), "sharded overlaps.paf == unsharded PAF, byte for byte")
        bam = out / "reads.sorted.bam"
        sh(["samtools", "quickcheck", "-v", bam])
        check((out / "reads.sorted.bam.bai").exists(), "reads.sorted.bam is indexed")
        check("SO:coordinate" in sh(["samtools", "view", "-H", bam]), "reads.sorted.bam is sorted")
        rc = out / "shards/read-candidates.paf"
        sh([SW, "align", "--dna", "--mode", "semi-global", "--free-ends", "target-start,target-end",
            "--pairs", rc, "--seqs", reads, "--target-seqs", contigs, "-o", tmp / "whole.bam"] + run)
        sh(["samtools", "sort", "-o", tmp / "whole.sorted.bam", tmp / "whole.bam"])
        ours = sh(["samtools", "view", bam])
        check(ours == sh(["samtools", "view", tmp / "whole.sorted.bam"]) and ours,
              "sharded reads.sorted.bam records == unsharded run's, sorted")
        placed = {l.split("\t", 1)[0] for l in rc.read_text().splitlines()}
        primary = sh(["samtools", "view", "-F", "0x900", bam]).splitlines()
        check(sorted(l.split("\t", 1)[0] for l in primary) == sorted(placed),
              f"one primary record a read with candidates ({len(primary)} of {len(placed)})")
        idx = sh(["samtools", "idxstats", bam])
        check(sum(int(l.split("\t")[2]) for l in idx.splitlines()) == len(ours.splitlines()),
              "samtools idxstats counts every record mapped")


def part_snakemake():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        db = tmp / "tied.fasta"
        tied_database(db)
        top = 2
        config = dict(swarrow=SW, queries=EX / "queries.fasta", db=db, pairs=EX / "pairs.tsv",
                      outdir="out", shards=3, top=top, max_evalue=10, device="cpu", threads=1)
        snakemake(tmp, config)
        out = tmp / "out"
        common = ["--top", top, "--max-evalue", 10, "--device", "cpu", "--quiet"]
        sh([SW, "search", "-q", EX / "queries.fasta", "-d", db, "-o", tmp / "whole.parquet"] + common)
        sh([SW, "align", "--pairs", EX / "pairs.tsv", "-o", tmp / "whole-align.parquet", "--device", "cpu", "--quiet"])
        whole = pq.read_table(tmp / "whole.parquet")

        # Independent oracle on the reference itself: the planted homolog and its two copies
        # tie; the unsharded ranking puts the copy at the database's start first, then the
        # original; the copy at the end is cut by --top 2.
        rows = whole.to_pylist()
        for q in query_ids():
            got = [r["target"] for r in rows if r["query"] == q]
            check(got == [f"copy_first_homolog_of_{q}", f"homolog_of_{q}"],
                  f"unsharded tied search: {q} -> {got}")

        shards = sorted(out.glob("shards/dbsearch-*.parquet"))
        check(len(shards) == 3, "three database shards searched")
        last_shard_targets = set(pq.read_table(shards[-1]).column("target").to_pylist())
        check(any(t.startswith("copy_last_") for t in last_shard_targets),
              "the last shard found the tied copies that the merge must cut")
        same_table(pq.read_table(out / "search-dbsharded.parquet"), whole,
                   "database-sharded Snakemake run == unsharded search (rows, E-values, ranks)")
        # Query pieces are numbered each from 1 (qnum): the rest is the unsharded run's.
        same_table(pq.read_table(out / "search.parquet").drop_columns(["qnum"]), whole.drop_columns(["qnum"]),
                   "query-sharded Snakemake run == unsharded search (but for each piece's own qnum)")
        same_table(pq.read_table(out / "align.parquet"), pq.read_table(tmp / "whole-align.parquet"),
                   "pair-sharded Snakemake run == unsharded align (input order kept)")

        meta = pq.read_metadata(out / "search-dbsharded.parquet").metadata or {}
        meta = {k.decode(): v.decode() for k, v in meta.items()}
        check("merge" in meta and meta.get("mode") == "search" and "search_space" in meta,
              f"merged Parquet carries run metadata ({sorted(meta)})")
        check(str(db_residues(db)) in meta.get("search_space", ""),
              "merged metadata names the whole database's size")

        # The README's DuckDB one-liner gives the same rows as `swarrow merge`.
        con = duckdb.connect()
        one_liner = duckdb_merge_sql(str(out / "shards/dbsearch-*.parquet"), top)
        via_duckdb = con.sql(one_liner).to_arrow_table()
        merged = pq.read_table(out / "search-dbsharded.parquet")
        key = [("query", "ascending"), ("rank", "ascending")]
        same_table(via_duckdb.cast(merged.schema).sort_by(key), merged.sort_by(key),
                   "DuckDB one-liner merge == swarrow merge")

        # Merging TSV and Arrow stream shards gives the same rows as merging Parquet.
        mixed = []
        for i, s in enumerate(shards):
            fmt = ["tsv", "arrow", "arrow-file"][i % 3]
            dest = tmp / f"shard{i}.{fmt}"
            sh([SW, "search", "-q", EX / "queries.fasta", "-d", out / f"shards/db-{i:03d}.fasta",
                "--db-size", db_residues(db), "--db-seqs", len(fasta_records(db)), "--format", fmt,
                "-o", dest] + common)
            mixed.append(dest)
        # TSV carries no run settings: merge refuses it unless told to trust the shards.
        r = subprocess.run([SW, "merge", "--top", str(top), "-o", str(tmp / "never.tsv")] + [str(m) for m in mixed],
                           capture_output=True, text=True)
        check(r.returncode == 2 and "--trust-shards" in r.stderr and not (tmp / "never.tsv").exists(),
              f"merge refuses TSV shards without --trust-shards (exit {r.returncode}: {r.stderr.strip()})")
        sh([SW, "merge", "--top", top, "--trust-shards", "-o", tmp / "mixed.tsv"] + mixed)
        sh([SW, "merge", "--top", top, "-o", tmp / "parquet.tsv"] + shards)
        check((tmp / "mixed.tsv").read_text() == (tmp / "parquet.tsv").read_text(),
              "merge of TSV + Arrow stream + Arrow file shards == merge of Parquet shards")

        # Shards searched without --db-size disagree on the search space: merge refuses.
        sh([SW, "search", "-q", EX / "queries.fasta", "-d", out / "shards/db-000.fasta",
            "-o", tmp / "bad.parquet"] + common)
        r = subprocess.run([SW, "merge", "--top", str(top), "-o", str(tmp / "never.parquet"),
                            str(tmp / "bad.parquet"), str(shards[1])], capture_output=True, text=True)
        check(r.returncode == 2 and "search_space" in r.stderr and not (tmp / "never.parquet").exists(),
              f"merge refuses shards with different search spaces (exit {r.returncode}: {r.stderr.strip()})")


def db_residues(path):
    return sum(len(s) for _, s in fasta_records(path))


def duckdb_merge_sql(glob, top):
    """The README's DuckDB equivalent of `swarrow merge --top N` (file names sort in shard
    order)."""
    return f"""
        SELECT * EXCLUDE (filename, shard_rank, qnum), qnum
        FROM (
            SELECT * EXCLUDE (rank), rank AS shard_rank,
                   CAST(row_number() OVER (PARTITION BY query
                        ORDER BY score DESC, filename, rank) AS INTEGER) AS rank
            FROM read_parquet('{glob}', filename = true)
        )
        WHERE rank <= {top}
        ORDER BY qnum, rank
    """


def part_lake():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hits = tmp / "hits.parquet"
        sh([SW, "search", "-q", EX / "queries.fasta", "-d", EX / "db.fasta.gz", "-o", hits,
            "--top", 5, "--device", "cpu", "--quiet"])
        md = pq.read_metadata(hits)
        check(md.num_row_groups >= 1 and all(md.row_group(i).num_rows > 0 for i in range(md.num_row_groups)),
              f"Parquet row groups: {md.num_row_groups}")
        codecs = {md.row_group(0).column(c).compression for c in range(md.num_columns)}
        check(codecs == {"ZSTD"}, f"every column chunk zstd-compressed ({codecs})")
        schema = pq.read_schema(hits)
        check([f.name for f in schema] == COLUMNS + ["rank", "qnum"], "Parquet columns in order")
        check(all(schema.field(n).type == t for n, t in TYPES.items()),
              f"stable Arrow types ({[(f.name, str(f.type)) for f in schema]})")
        kv = {k.decode(): v.decode() for k, v in (md.metadata or {}).items()}
        for key in ["swarrow_version", "mode", "scoring", "gap_open", "gap_extend", "search_space"]:
            check(key in kv, f"Parquet key-value metadata has {key}")

        # DuckDB: types as declared; the planted homolog of every query ranks first.
        con = duckdb.connect()
        types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{hits}')").fetchall())
        check(types.get("score") == "INTEGER" and types.get("evalue") == "DOUBLE" and types.get("query") == "VARCHAR"
              and types.get("recomputed") == "BOOLEAN", f"DuckDB column types {types}")
        best = con.execute(f"SELECT query, target FROM '{hits}' WHERE rank = 1 ORDER BY query").fetchall()
        expected = sorted((q, f"homolog_of_{q}") for q in query_ids())
        check(best == expected, "DuckDB: planted homolog is rank 1 for every query")

        # Polars reads the same file with the same types.
        df = pl.read_parquet(hits)
        check(df.schema["score"] == pl.Int32 and df.schema["rank"] == pl.Int32 and df.schema["evalue"] == pl.Float64,
              f"Polars schema {dict(df.schema)}")
        top1 = df.filter(pl.col("rank") == 1).sort("query").select("query", "target").rows()
        check(top1 == expected, "Polars: planted homolog is rank 1 for every query")

        # An Arrow IPC stream from a pipe, read by pyarrow and by Polars.
        stream = subprocess.run([SW, "align", "--pairs", str(EX / "pairs.tsv"), "--device", "cpu", "--quiet"],
                                capture_output=True, check=True).stdout
        table = ipc.open_stream(pa.BufferReader(stream)).read_all()
        check(table.num_rows == 20 and table.column_names == COLUMNS,
              f"pyarrow reads the piped Arrow IPC stream ({table.num_rows} rows)")
        check(table.schema.metadata and b"mode" in table.schema.metadata, "Arrow stream carries run metadata")
        pdf = pl.read_ipc_stream(io.BytesIO(stream))
        pairs = [l.split("\t") for l in (EX / "pairs.tsv").read_text().splitlines()[1:] if l.strip()]
        check(pdf["query"].to_list() == [p[0] for p in pairs] and pdf["target"].to_list() == [p[2] for p in pairs],
              "Polars reads the stream; one row per pair in input order")
        self_pairs = pdf.filter(pl.col("target") == pl.col("query") + "_mut")
        check(self_pairs.height > 0 and (self_pairs["score"] > 0).all(), "mutated homolog pairs score above 0")

        # Candidate pairs kept in the lake as Parquet, with their own column names and a key:
        # swarrow carries the key (and every other column) through, and DuckDB joins the
        # scores back to the candidate table; Polars reads the same from an Arrow stream.
        cand = pa.table({
            "pair_key": pa.array(range(100, 100 + len(pairs)), pa.int64()),
            "seq_a": [p[1] for p in pairs], "id_a": [p[0] for p in pairs],
            "id_b": [p[2] for p in pairs], "seq_b": [p[3] for p in pairs],
            "sample": [f"s{i % 3}" for i in range(len(pairs))],
        })
        cand_path = tmp / "candidates.parquet"
        pq.write_table(cand, cand_path, row_group_size=6)
        names = ["--query-col", "seq_a", "--target-col", "seq_b", "--query-id-col", "id_a", "--target-id-col", "id_b"]
        scored = tmp / "scored.parquet"
        sh([SW, "align", "--pairs", cand_path, *names, "-o", scored, "--device", "cpu", "--quiet"])
        check(pq.read_schema(scored).names == COLUMNS + ["pair_key", "sample"], "carried columns follow the results")
        joined = con.execute(
            f"SELECT c.pair_key, c.id_a = s.query AND c.id_b = s.target AND c.sample = s.sample AS same, s.score "
            f"FROM '{cand_path}' c JOIN '{scored}' s USING (pair_key) ORDER BY c.pair_key").fetchall()
        check(len(joined) == len(pairs) and all(r[1] for r in joined),
              "DuckDB joins every score back to its candidate row by the carried key")
        check([r[2] for r in joined] == pdf["score"].to_list(), "scores from the table equal scores from TSV pairs")
        stream_in = io.BytesIO()
        with ipc.new_stream(stream_in, cand.schema) as w:
            w.write_table(cand, max_chunksize=5)
        out = subprocess.run([SW, "align", "--pairs", "-", *map(str, names), "--device", "cpu", "--quiet"],
                             input=stream_in.getvalue(), capture_output=True, check=True).stdout
        sdf = pl.read_ipc_stream(io.BytesIO(out))
        check(sdf["pair_key"].to_list() == cand["pair_key"].to_pylist() and sdf["sample"].dtype == pl.String
              and sdf["score"].to_list() == pdf["score"].to_list(),
              "Polars reads carried columns from an Arrow stream piped through swarrow")


def part_recipes():
    recipes = sorted((EX / "recipes").glob("*.sh"))
    check(len(recipes) == 3, f"three recipes ({[r.name for r in recipes]})")
    env = dict(os.environ, SWARROW=SW, PYTHON=sys.executable)
    for recipe in recipes:
        expected = recipe.with_suffix(".expected")
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run(["bash", str(recipe)], capture_output=True, text=True,
                               env=dict(env, OUT_DIR=tmp), cwd=ROOT)
        if r.returncode != 0:
            check(False, f"{recipe.name} ran (exit {r.returncode}): {r.stderr[-2000:]}")
            continue
        same = r.stdout == expected.read_text()
        if not same:
            print(f"--- {recipe.name} printed:\n{r.stdout}--- expected:\n{expected.read_text()}", file=sys.stderr)
        check(same, f"{recipe.name} prints {expected.name}")


def main():
    part = sys.argv[1]
    {"snakemake": part_snakemake, "lake": part_lake, "recipes": part_recipes,
     "assembly": part_assembly}[part]()
    passed = "all" if not failures else f"{len(failures)} FAILED:"
    print(f"workflow checks ({part}): {passed}", *failures, sep="\n  " if failures else " ")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
