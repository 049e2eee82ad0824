#!/usr/bin/env python3
"""Simulated data for the assembler stages (issue 51): a random genome of contigs, and reads
drawn from both strands with errors (substitutions, insertions, deletions in equal parts).

    assembly-sim.py OUTDIR [--seed N] [--contigs N] [--contig-len MIN-MAX]
                    [--short N] [--short-len L] [--long N] [--long-len MIN-MAX] [--error F]

Writes OUTDIR/genome.fa (the contigs), OUTDIR/short.fq (reads of --short-len) and
OUTDIR/long.fq (reads of --long-len); a read's name is READ_CONTIG_START_END_STRAND, its true
origin (0-based half-open on the contig's forward strand), so tests can check placements.
Qualities are a fixed 'I' (Phred 40). Deterministic for a seed; standard library only.
"""
import argparse
import math
import os
import random

COMPLEMENT = str.maketrans("ACGT", "TGCA")


def revcomp(s):
    return s.translate(COMPLEMENT)[::-1]


def mutate(rng, seq, rate):
    """Each base independently an error with probability `rate` (error positions drawn by
    geometric skips, so a read costs its errors, not its bases)."""
    if rate <= 0:
        return seq
    out = []
    at = 0
    log_keep = math.log(1.0 - rate)
    while True:
        skip = int(math.log(1.0 - rng.random()) / log_keep)
        pos = at + skip
        if pos >= len(seq):
            out.append(seq[at:])
            return "".join(out)
        out.append(seq[at:pos])
        base = seq[pos]
        kind = rng.randrange(3)
        if kind == 0:  # substitution
            out.append(rng.choice([b for b in "ACGT" if b != base]))
        elif kind == 1:  # insertion after the base
            out.append(base + rng.choice("ACGT"))
        # kind 2: deletion
        at = pos + 1


def span(text):
    lo, hi = text.split("-")
    return int(lo), int(hi)


def reads(rng, contigs, n, lens, rate, prefix):
    names = list(contigs)
    weights = [len(contigs[c]) for c in names]
    out = []
    for i in range(n):
        length = rng.randint(*lens)
        for _ in range(100):
            c = rng.choices(names, weights)[0]
            if len(contigs[c]) >= length:
                break
        else:
            raise SystemExit(f"no contig holds a read of {length}")
        start = rng.randrange(len(contigs[c]) - length + 1)
        piece = contigs[c][start : start + length]
        strand = "+" if rng.random() < 0.5 else "-"
        if strand == "-":
            piece = revcomp(piece)
        seq = mutate(rng, piece, rate)
        tag = "p" if strand == "+" else "m"
        out.append((f"{prefix}{i}_{c}_{start}_{start + length}_{tag}", seq))
    return out


def write_fastq(path, records):
    with open(path, "w") as f:
        for name, seq in records:
            f.write(f"@{name}\n{seq}\n+\n{'I' * len(seq)}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--contigs", type=int, default=20)
    ap.add_argument("--contig-len", type=span, default=(20000, 100000))
    ap.add_argument("--short", type=int, default=0)
    ap.add_argument("--short-len", type=int, default=150)
    ap.add_argument("--long", type=int, default=0)
    ap.add_argument("--long-len", type=span, default=(5000, 15000))
    ap.add_argument("--error", type=float, default=0.01)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.outdir, exist_ok=True)
    contigs = {}
    for i in range(a.contigs):
        n = rng.randint(*a.contig_len)
        contigs[f"ctg{i}"] = "".join(rng.choices("ACGT", k=n))
    with open(os.path.join(a.outdir, "genome.fa"), "w") as f:
        for name, seq in contigs.items():
            f.write(f">{name}\n")
            for k in range(0, len(seq), 80):
                f.write(seq[k : k + 80] + "\n")
    if a.short:
        recs = reads(rng, contigs, a.short, (a.short_len, a.short_len), a.error, "s")
        write_fastq(os.path.join(a.outdir, "short.fq"), recs)
    if a.long:
        recs = reads(rng, contigs, a.long, a.long_len, a.error, "l")
        write_fastq(os.path.join(a.outdir, "long.fq"), recs)


if __name__ == "__main__":
    main()
