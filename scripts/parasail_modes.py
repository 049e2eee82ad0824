#!/usr/bin/python3
"""parasail's global and semi-global scores, the oracle of tests/modes_parasail.rs.

  parasail_modes.py MATRIX OPEN EXTEND FUNCS

MATRIX: a parasail matrix name (blosum62) or dna:MATCH:MISMATCH (over ACGT). OPEN and EXTEND
are parasail's: its open includes the first gap position, so swarrow's 10/1 is its 11/1.
FUNCS: a comma list of parasail function families (nw, sg, sg_qb, sg_qe, sg_qx, sg_db, sg_de,
sg_dx, sg_qb_de, sg_qe_db), each run as FAMILY_striped_32 (exact 32-bit). In parasail s1 is
the query and s2 the database (target) sequence. stdin: lines `QUERY TARGET`; stdout: per
line the scores of FUNCS in order, space separated.
"""
import sys

import parasail


def main():
    spec, open_, extend, funcs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
    if spec.startswith("dna:"):
        _, matched, mismatched = spec.split(":")
        matrix = parasail.matrix_create("ACGT", int(matched), int(mismatched))
    else:
        matrix = getattr(parasail, spec)
    fs = [getattr(parasail, f + "_striped_32") for f in funcs]
    out, buf = sys.stdout, []
    for line in sys.stdin:
        q, t = line.split()
        buf.append(" ".join(str(f(q, t, open_, extend, matrix).score) for f in fs))
        if len(buf) >= 256:
            out.write("\n".join(buf) + "\n")
            buf.clear()
    if buf:
        out.write("\n".join(buf) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
