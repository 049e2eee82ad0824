"""The Spark example (examples/spark_align.py) on a local Spark with two executor processes,
over a Parquet dataset of several files: its output must equal the command line's on the
same pairs (SWARROW_BIN). Run by scripts/test-python.sh."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as csv
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]


def main():
    with tempfile.TemporaryDirectory(prefix="swarrow-spark-") as tmp:
        check(Path(tmp))


def check(tmp):
    pairs = csv.read_csv(ROOT / "examples" / "pairs.tsv", parse_options=csv.ParseOptions(delimiter="\t"))
    pairs = pa.concat_tables([pairs] * 5)
    pairs = pairs.append_column("key", pa.array(range(pairs.num_rows), pa.int64()))
    dataset = tmp / "pairs"
    dataset.mkdir()
    for i in range(4):
        pq.write_table(pairs.slice(i * 25, 25), dataset / f"part-{i}.parquet")
    out = tmp / "aligned"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    # Two executor processes (one core, 1 GiB each), each with its own Python worker and
    # aligner: Spark's local-cluster mode, which pip's pyspark runs as it is.
    master = os.environ.get("SWARROW_SPARK_MASTER", "local-cluster[2,1,1024]")
    subprocess.run([sys.executable, str(ROOT / "examples" / "spark_align.py"), str(dataset), str(out),
                    "--master", master, "--columns", "std,cigar", "--threads", "1"], check=True, env=env)
    got = pq.read_table(out).sort_by("key")
    whole = tmp / "all.parquet"
    pq.write_table(pairs, whole)
    cli = subprocess.run([os.environ["SWARROW_BIN"], "align", "--pairs", str(whole), "--columns", "std,cigar",
                          "--format", "arrow", "--quiet"], check=True, capture_output=True).stdout
    want = ipc.open_stream(cli).read_all().sort_by("key")
    assert got.schema.names == want.schema.names, (got.schema.names, want.schema.names)
    assert got.num_rows == want.num_rows == 100
    for name in want.schema.names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    print(f"spark_check: {got.num_rows} rows from {master} equal the command line's")


if __name__ == "__main__":
    main()
