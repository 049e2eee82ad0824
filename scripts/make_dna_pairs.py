#!/usr/bin/env python3
"""Seeded DNA pairs shaped like an assembler's contig/read alignments (issue 19, compute-bound
benchmark): each side 1-10 kb by default. Most pairs are related (the query is a window of
the target with substitutions and short indels, possibly reverse-free); the rest unrelated.

  make_dna_pairs.py --pairs N --query q.fa --target t.fa [--len 1000 10000] [--seed S]
                    [--related 0.7] [--subst 0.05] [--indel 0.01]
Record i of the query file pairs with record i of the target file.
"""
import argparse
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--len", type=int, nargs=2, default=[1000, 10000], metavar=("MIN", "MAX"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--related", type=float, default=0.7)
    ap.add_argument("--subst", type=float, default=0.05)
    ap.add_argument("--indel", type=float, default=0.01)
    a = ap.parse_args()
    lo, hi = a.len
    if not (1 <= lo <= hi):
        ap.error("--len needs 1 <= MIN <= MAX")
    rng = random.Random(a.seed)
    with open(a.query, "w") as fq, open(a.target, "w") as ft:
        for i in range(a.pairs):
            tlen = rng.randint(lo, hi)
            t = "".join(rng.choices("ACGT", k=tlen))
            qlen = rng.randint(lo, hi)
            if rng.random() < a.related:
                # A window of the target (as long as the target allows), mutated.
                w = min(qlen, tlen)
                start = rng.randint(0, tlen - w)
                out = []
                for c in t[start:start + w]:
                    r = rng.random()
                    if r < a.indel / 2:
                        continue  # deletion
                    if r < a.indel:
                        out.append(rng.choice("ACGT"))  # insertion before c
                    out.append(rng.choice("ACGT") if rng.random() < a.subst else c)
                q = "".join(out) or "A"
            else:
                q = "".join(rng.choices("ACGT", k=qlen))
            fq.write(f">q{i}\n{q}\n")
            ft.write(f">t{i}\n{t}\n")


if __name__ == "__main__":
    main()
