"""swarrow: exact Smith-Waterman local alignment (affine gaps) on NVIDIA GPUs and CPUs,
Arrow tables in and Arrow tables out.

Inputs are anything with ``__arrow_c_stream__`` (pyarrow Table and RecordBatchReader,
Polars DataFrame, DuckDB relation), an object with ``to_arrow()``, a pandas DataFrame, a
dict of columns (``{"query_id": [...], "query_seq": [...], ...}``), or an iterable of
pyarrow RecordBatches (Spark's ``mapInArrow``); they reach the engines through the Arrow
C data interface without a copy. Results are pyarrow Tables (``align_batches``: an
iterator of RecordBatches). Options, columns, conventions and error messages are those of
the ``swarrow`` command line (gap of length k costs open + k * extend; BLOSUM62 11/1 by
default; coordinates 1-based inclusive). Errors raise ``SwarrowError`` (a ValueError).
"""

import itertools
import sys
from collections.abc import Mapping

from . import _swarrow
from ._swarrow import Aligner as _NativeAligner
from ._swarrow import SwarrowError, __version__

__all__ = ["Aligner", "SwarrowError", "align", "align_batches", "search", "pairhmm", "main", "__version__"]

_ENGINE_OPTIONS = ("matrix", "dna", "match_score", "mismatch", "gap_open", "gap_extend", "evalue_model",
                   "device", "threads", "verbose", "progress", "batch_pairs", "mode", "free_ends", "strand")


def _stream(obj, name):
    """An object with __arrow_c_stream__ for `obj` (None stays None)."""
    if obj is None or hasattr(obj, "__arrow_c_stream__"):
        return obj
    if hasattr(obj, "to_arrow"):  # Polars before the PyCapsule protocol, Spark-side helpers
        return obj.to_arrow()
    if hasattr(obj, "arrow") and callable(obj.arrow):  # DuckDB relations
        return obj.arrow()
    import pyarrow as pa

    if isinstance(obj, Mapping):  # columns by name: {"query_id": [...], "query_seq": [...], ...}
        try:
            return pa.table(dict(obj))
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise TypeError(f"{name}: a dict is read as columns by name, each a list of values of one "
                            f"length ({e})") from None
    if type(obj).__module__.startswith("pandas"):  # a pandas DataFrame without the protocol
        return pa.Table.from_pandas(obj, preserve_index=False)
    expected = (f"{name}: expected a table (pyarrow Table/RecordBatchReader, Polars or pandas DataFrame, "
                f"DuckDB relation, a dict of columns) or an iterable of pyarrow RecordBatches")
    try:
        batches = iter(obj)
    except TypeError:
        raise TypeError(f"{expected}, got {type(obj).__name__}") from None

    first = next(batches, None)
    if first is None:
        raise SwarrowError(f"{name}: an empty iterable of record batches has no schema; pass a pyarrow Table")
    if not isinstance(first, pa.RecordBatch):
        raise TypeError(f"{expected}, got {type(obj).__name__} of {type(first).__name__}")
    return pa.RecordBatchReader.from_batches(first.schema, itertools.chain([first], batches))


class Aligner(_NativeAligner):
    """An engine opened once (the GPU when present, else the CPU) and reused across calls.

    Aligner(*, matrix=None, dna=False, match_score=2, mismatch=-3, gap_open=None,
            gap_extend=None, evalue_model="classic", device="auto", threads=None,
            verbose=False, progress=False, batch_pairs=None, mode="local", free_ends=None,
            strand=None)

    ``strand`` ("plus", "minus", "both"; DNA) is the command line's ``--strand``.

    ``align(pairs, seqs=None, target_seqs=None, *, columns=None, query_col="query_seq",
    target_col="target_seq", query_id_col="query_id", target_id_col="target_id",
    carry="all", seqs_id_col="id", seqs_col="sequence", min_score=None, max_evalue=None,
    min_bits=None, min_pident=None, min_qcov=None, min_tcov=None, window=None,
    region_cols=None, strand_col=None)`` returns a pyarrow Table of the pairs that pass the
    thresholds (as the command line's ``--min-score`` ...); with ``seqs``, ``region_cols``
    ([qstart, qend, tstart, tend], 0-based half-open) and ``strand_col`` place each candidate,
    aligned inside its window (``window``: margin in residues, default 200, or "full"), as
    the command line's ``--region-cols``, ``--strand-col`` and ``--window``;
    ``align_batches(...)`` (same arguments) an iterator of RecordBatches with a ``schema``.
    """

    def align(self, pairs, seqs=None, target_seqs=None, **options):
        import pyarrow as pa

        batches = self.align_batches(pairs, seqs, target_seqs, **options)
        return pa.Table.from_batches(list(batches), schema=batches.schema)

    def align_batches(self, pairs, seqs=None, target_seqs=None, **options):
        return super().align_batches(_stream(pairs, "pairs"), _stream(seqs, "seqs"),
                                     _stream(target_seqs, "target_seqs"), **options)


def _split(options):
    engine = {k: options.pop(k) for k in list(options) if k in _ENGINE_OPTIONS}
    return engine, options


def align(pairs, seqs=None, target_seqs=None, **options):
    """Aligns the pairs of a table (see Aligner for the options); returns a pyarrow Table."""
    engine, rest = _split(options)
    return Aligner(**engine).align(pairs, seqs, target_seqs, **rest)


def align_batches(pairs, seqs=None, target_seqs=None, **options):
    """As align, yielding RecordBatches as they are computed."""
    engine, rest = _split(options)
    return Aligner(**engine).align_batches(pairs, seqs, target_seqs, **rest)


def search(queries, database, **options):
    """Protein queries (columns id, sequence) against a database table; the best hits per
    query as a pyarrow Table (options: top, max_evalue, matrix, gap_open, gap_extend,
    columns, evalue_model, db_size, db_seqs, id_col, seq_col, device, threads, min_score,
    min_bits, min_pident, min_qcov, min_tcov)."""
    return _swarrow.search(_stream(queries, "queries"), _stream(database, "database"), **options)


def pairhmm(pairs=None, *, reads=None, haplotypes=None, **options):
    """GATK PairHMM log10 likelihoods of a pairs table, or of reads x haplotypes by group."""
    return _swarrow.pairhmm(_stream(pairs, "pairs"), reads=_stream(reads, "reads"),
                            haplotypes=_stream(haplotypes, "haplotypes"), **options)


def main():
    """The swarrow command line, in-process (the `swarrow` console script)."""
    sys.exit(_swarrow.main(sys.argv))
