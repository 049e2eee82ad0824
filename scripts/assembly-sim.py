#!/usr/bin/env python3
"""Simulated data for the assembler stages (issues 51, 57): a random genome of contigs, and
reads drawn from both strands with errors (substitutions, insertions, deletions in equal
parts, or in the parts --error-mix gives).

    assembly-sim.py OUTDIR [--seed N] [--contigs N] [--contig-len MIN-MAX]
                    [--repeats N] [--repeat-len L] [--repeat-div F]
                    [--short N] [--short-len L] [--long N] [--long-len MIN-MAX] [--error F]
                    [--error-mix SUB,INS,DEL]

--repeats N copies one random repeat of --repeat-len bases N times into each contig (each
copy with --repeat-div of the simulator's errors, non-overlapping): reads that share only a
copy are the candidates an overlapper must call internal matches. --error-mix weighs the
error kinds, e.g. 0.1,0.6,0.3 for PacBio CLR-like reads (insertion-rich); without it each
kind is a third (and the random draws are those of earlier versions, so seeds keep their
data).

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


def mutate(rng, seq, rate, mix=None):
    """Each base independently an error with probability `rate` (error positions drawn by
    geometric skips, so a read costs its errors, not its bases); `mix`: the weights of
    substitution, insertion, deletion (None: a third each)."""
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
        if mix is None:
            kind = rng.randrange(3)
        else:
            r = rng.random() * sum(mix)
            kind = 0 if r < mix[0] else 1 if r < mix[0] + mix[1] else 2
        if kind == 0:  # substitution
            out.append(rng.choice([b for b in "ACGT" if b != base]))
        elif kind == 1:  # insertion after the base
            out.append(base + rng.choice("ACGT"))
        # kind 2: deletion
        at = pos + 1


def span(text):
    lo, hi = text.split("-")
    return int(lo), int(hi)


def mix_of(text):
    w = [float(x) for x in text.split(",")]
    if len(w) != 3 or min(w) < 0 or sum(w) <= 0:
        raise SystemExit(f"--error-mix {text!r}: three weights SUB,INS,DEL")
    return w


def add_repeats(rng, seq, copies, length, div):
    """`seq` with `copies` diverged copies of one random repeat of `length` written over it
    at random non-overlapping places."""
    if copies == 0:
        return seq
    if copies * length > len(seq):
        raise SystemExit(f"{copies} repeats of {length} do not fit in a contig of {len(seq)}")
    repeat = "".join(rng.choices("ACGT", k=length))
    # Non-overlapping starts: `copies` gaps of free sequence drawn between the copies.
    free = len(seq) - copies * length
    cuts = sorted(rng.randrange(free + 1) for _ in range(copies))
    out, at = [], 0
    for k, c in enumerate(cuts):
        start = c + k * length
        copy = mutate(rng, repeat, div)[:length].ljust(length, "A")
        out.append(seq[at:start])
        out.append(copy)
        at = start + length
    out.append(seq[at:])
    return "".join(out)


def reads(rng, contigs, n, lens, rate, prefix, mix=None):
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
        seq = mutate(rng, piece, rate, mix)
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
    ap.add_argument("--error-mix", type=mix_of, default=None)
    ap.add_argument("--repeats", type=int, default=0)
    ap.add_argument("--repeat-len", type=int, default=1000)
    ap.add_argument("--repeat-div", type=float, default=0.01)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.outdir, exist_ok=True)
    contigs = {}
    for i in range(a.contigs):
        n = rng.randint(*a.contig_len)
        contigs[f"ctg{i}"] = "".join(rng.choices("ACGT", k=n))
    if a.repeats:
        for name in contigs:
            contigs[name] = add_repeats(rng, contigs[name], a.repeats, a.repeat_len, a.repeat_div)
    with open(os.path.join(a.outdir, "genome.fa"), "w") as f:
        for name, seq in contigs.items():
            f.write(f">{name}\n")
            for k in range(0, len(seq), 80):
                f.write(seq[k : k + 80] + "\n")
    if a.short:
        recs = reads(rng, contigs, a.short, (a.short_len, a.short_len), a.error, "s", a.error_mix)
        write_fastq(os.path.join(a.outdir, "short.fq"), recs)
    if a.long:
        recs = reads(rng, contigs, a.long, a.long_len, a.error, "l", a.error_mix)
        write_fastq(os.path.join(a.outdir, "long.fq"), recs)


if __name__ == "__main__":
    main()
