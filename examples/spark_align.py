#!/usr/bin/env python3
"""Aligns the pairs of a Parquet dataset (columns query_id, query_seq, target_id, target_seq;
every other column is carried through) on Spark with swarrow, and writes Parquet.

Each executor's Python worker opens one swarrow.Aligner (the GPU when it has one, else its
CPU cores) and reuses it for every partition it is given (spark.python.worker.reuse);
record batches go from Spark to swarrow and back through Arrow (mapInArrow) without a copy.

  python examples/spark_align.py PAIRS_DIR OUT_DIR [--master local[2]] [--columns std,cigar]
"""
import argparse

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

# One aligner per Python worker process, opened on its first partition.
_ALIGNER = None


def aligner(options):
    global _ALIGNER
    if _ALIGNER is None:
        import swarrow

        _ALIGNER = swarrow.Aligner(**options)
    return _ALIGNER


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pairs", help="Parquet file or directory of Parquet files")
    ap.add_argument("out", help="output directory (Parquet)")
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--columns", default=None, help="swarrow output columns (default: its default columns)")
    ap.add_argument("--dna", action="store_true", help="DNA scoring instead of BLOSUM62")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads per aligner (default: all cores)")
    args = ap.parse_args()
    options = {"dna": args.dna, "threads": args.threads}
    columns = args.columns

    spark = (SparkSession.builder.master(args.master).appName("swarrow-align")
             .config("spark.python.worker.reuse", "true")
             .getOrCreate())
    pairs = spark.read.parquet(args.pairs)

    # The output schema: swarrow's result columns, then the input's other columns, as
    # swarrow reports it for an empty table of the input's Arrow schema.
    import swarrow

    empty = pairs.limit(0).toArrow()
    schema = swarrow.Aligner(device="cpu", threads=1, dna=args.dna).align_batches(empty, columns=columns).schema

    def align(batches):
        yield from aligner(options).align_batches(batches, columns=columns)

    pairs.mapInArrow(align, from_arrow_schema(schema)).write.mode("overwrite").parquet(args.out)
    spark.stop()


if __name__ == "__main__":
    main()
