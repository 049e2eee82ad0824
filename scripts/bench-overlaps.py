#!/usr/bin/env python3
"""Long-read overlaps to miniasm assemblies (issue 57): minimap2's own PAF against swarrow's
alignments of minimap2's candidates in several modes and windows, each assembled by miniasm
and judged by its contigs (number, largest, total) and the part of the genome they cover
(contigs placed on the genome by minimap2 -x map-pb, covered bases of the genome, as a union).

    bench-overlaps.py DIR READS GENOME [--swarrow BIN] [--miniasm-args "-s 500"]
                      [--variants "NAME:: ARGS;..."] [--threads N]

DIR holds (or receives) ava.paf, minimap2 -x ava-pb of READS against themselves. Each
variant is a name and the swarrow arguments added to `align --dna --pairs ava.paf --seqs
READS -o X.paf`; the default list is issue 57's table. Prints one Markdown row a variant, with
the seconds swarrow took.
"""
import argparse
import os
import subprocess
import time

DEFAULT = (
    "semi-global, default window:: --mode semi-global;"
    "semi-global, --window full:: --mode semi-global --window full;"
    "local, default window:: --mode local;"
    "overlap P = 0:: --mode overlap --clip-penalty 0;"
    "overlap P = 10:: --mode overlap --clip-penalty 10;"
    "overlap P = 20:: --mode overlap --clip-penalty 20;"
    "overlap P = 40:: --mode overlap --clip-penalty 40;"
    "overlap P = 80:: --mode overlap --clip-penalty 80;"
    "overlap P = 20, --window full:: --mode overlap --clip-penalty 20 --window full"
)


def run(cmd, out=None):
    with open(out, "w") if out else open(os.devnull, "w") as f:
        subprocess.run(cmd, shell=True, check=True, stdout=f, stderr=subprocess.DEVNULL)


def judge(d, reads, genome, paf, miniasm_args, tag):
    gfa = os.path.join(d, f"{tag}.gfa")
    run(f"miniasm {miniasm_args} -f {reads} {paf}", gfa)
    contigs = []
    with open(gfa) as f:
        for line in f:
            if line.startswith("S\t"):
                x = line.split("\t")
                contigs.append((x[1], x[2]))
    fa = os.path.join(d, f"{tag}.contigs.fa")
    with open(fa, "w") as f:
        for name, seq in contigs:
            f.write(f">{name}\n{seq}\n")
    glen = 0
    with open(genome) as f:
        glen = sum(len(l.strip()) for l in f if not l.startswith(">"))
    covered = 0
    if contigs:
        placed = subprocess.run(
            f"minimap2 -x map-pb {genome} {fa}", shell=True, check=True, capture_output=True, text=True
        ).stdout
        spans = {}
        for line in placed.splitlines():
            x = line.split("\t")
            if "tp:A:P" in line:
                spans.setdefault(x[5], []).append((int(x[7]), int(x[8])))
        for v in spans.values():
            v.sort()
            end = 0
            for s, e in v:
                s = max(s, end)
                if e > s:
                    covered += e - s
                end = max(end, e)
    lens = sorted((len(s) for _, s in contigs), reverse=True)
    return len(lens), (lens[0] if lens else 0), sum(lens), covered / glen if glen else 0.0


def paf_kinds(paf):
    """Rows, and rows that reach neither a start and an end border (internal by miniasm's
    strict reading: no overhang 0 on a start side and an end side)."""
    rows = internal = 0
    with open(paf) as f:
        for line in f:
            x = line.split("\t")
            ql, qs, qe, strand, tl, ts, te = int(x[1]), int(x[2]), int(x[3]), x[4], int(x[6]), int(x[7]), int(x[8])
            rows += 1
            q_first, q_last = qs == 0, qe == ql
            begins, ends = (q_first, q_last) if strand == "+" else (q_last, q_first)
            contained = (q_first and q_last) or (ts == 0 and te == tl)
            if not contained and not ((begins or ts == 0) and (ends or te == tl)):
                internal += 1
    return rows, internal


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("reads")
    ap.add_argument("genome")
    ap.add_argument("--swarrow", default="target/debug/swarrow")
    ap.add_argument("--miniasm-args", default="")
    ap.add_argument("--variants", default=DEFAULT)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    ava = os.path.join(a.dir, "ava.paf")
    if not os.path.exists(ava):
        run(f"minimap2 -t {a.threads} -x ava-pb {a.reads} {a.reads}", ava)
    print(f"| variant | rows | rows not reaching the ends | contigs | largest | total | genome covered | swarrow s |")
    print(f"|---|---|---|---|---|---|---|---|")
    rows, internal = paf_kinds(ava)
    n, big, tot, cov = judge(a.dir, a.reads, a.genome, ava, a.miniasm_args, "mm")
    print(f"| minimap2's own PAF | {rows} | {internal} | {n} | {big} | {tot} | {100 * cov:.1f}% | |", flush=True)
    for v in a.variants.split(";"):
        name, args = v.split("::", 1)
        tag = "".join(c if c.isalnum() else "_" for c in name)
        out = os.path.join(a.dir, f"{tag}.paf")
        t0 = time.time()
        run(f"{a.swarrow} align --dna --threads {a.threads} --pairs {ava} --seqs {a.reads} {args} -o {out}")
        secs = time.time() - t0
        rows, internal = paf_kinds(out)
        n, big, tot, cov = judge(a.dir, a.reads, a.genome, out, a.miniasm_args, tag)
        print(f"| {name} | {rows} | {internal} | {n} | {big} | {tot} | {100 * cov:.1f}% | {secs:.1f} |", flush=True)


if __name__ == "__main__":
    main()
