#!/usr/bin/python3
"""Global and semi-global alignment on the CPU against parasail (issue 42): swarrow's SIMD
mode engine against parasail's striped 16-bit nw and sg, the same pairs, the same threads.

  scripts/bench_modes_cpu.py [--pairs 20000] [--threads 2] [--repeat 3] [--swarrow BIN]

Pairs: random pairs of whole sequences of data/DB.fasta.gz-like UniProt FASTA (--db,
default /work/shared/data/DB.fasta.gz), seeded. swarrow runs as a whole process (reading,
aligning, writing TSV to /dev/null) at the default columns (coordinates: starts carried) and
at score and end only; parasail (python3-parasail, /usr/bin/python3) runs nw_striped_16 and
sg_striped_16 in --threads processes, each over its share of the pairs, timed from the start
of the first to the end of the last (loading excluded). BLOSUM62, swarrow --gap-open 10
--gap-extend 1 = parasail open 11 extend 1. Prints the median wall of --repeat runs, GCUPS
(query x target cells per second) and swarrow's rate over parasail's.
"""
import argparse, gzip, multiprocessing as mp, os, random, statistics, subprocess, tempfile, time

SCORE_ONLY = "query,target,score,qend,tend"


def sequences(path):
    opener = gzip.open if path.endswith(".gz") else open
    seq = []
    with opener(path, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                if seq:
                    yield "".join(seq)
                seq = []
            else:
                seq.append(line.strip())
    if seq:
        yield "".join(seq)


def parasail_share(args):
    func, pairs = args
    import parasail

    f = getattr(parasail, func)
    for q, t in pairs:
        f(q, t, 11, 1, parasail.blosum62)


def time_parasail(func, pairs, threads):
    shares = [(func, pairs[k::threads]) for k in range(threads)]
    with mp.get_context("fork").Pool(threads) as pool:
        pool.map(parasail_share, [(func, pairs[:threads])] * threads)  # warm the workers
        t0 = time.perf_counter()
        pool.map(parasail_share, shares, chunksize=1)
        return time.perf_counter() - t0


def time_swarrow(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="/work/shared/data/DB.fasta.gz")
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--swarrow", default="target/release/swarrow")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    pool = list(sequences(a.db))
    pairs = [(rng.choice(pool), rng.choice(pool)) for _ in range(a.pairs)]
    cells = sum(len(q) * len(t) for q, t in pairs)
    work = tempfile.mkdtemp(prefix="swarrow-modes-")
    qf, tf = os.path.join(work, "q.fa"), os.path.join(work, "t.fa")
    with open(qf, "w") as qh, open(tf, "w") as th:
        for k, (q, t) in enumerate(pairs):
            qh.write(f">q{k}\n{q}\n")
            th.write(f">t{k}\n{t}\n")
    print(f"{a.pairs} pairs, {cells / 1e9:.3f} G cells (mean lengths {cells / a.pairs:.0f} cells/pair), "
          f"{a.threads} threads, median of {a.repeat}; {os.cpu_count()} CPUs")
    print(f"{'run':<44} {'seconds':>8} {'GCUPS':>7} {'/parasail':>9}")
    base = [a.swarrow, "align", "-q", qf, "-t", tf, "--gap-open", "10", "--gap-extend", "1",
            "--threads", str(a.threads), "--device", "cpu", "--format", "tsv"]
    for mode, func in [("global", "nw_striped_16"), ("semi-global", "sg_striped_16")]:
        ps = statistics.median(time_parasail(func, pairs, a.threads) for _ in range(a.repeat))
        print(f"{'parasail ' + func:<44} {ps:8.3f} {cells / ps / 1e9:7.2f} {1:9.2f}")
        for label, extra in [("default columns", []), ("score and end", ["--columns", SCORE_ONLY])]:
            cmd = base + ["--mode", mode] + extra
            time_swarrow(cmd)  # warm the page cache
            s = statistics.median(time_swarrow(cmd) for _ in range(a.repeat))
            print(f"{'swarrow --mode ' + mode + ', ' + label:<44} {s:8.3f} {cells / s / 1e9:7.2f} {ps / s:9.2f}")


if __name__ == "__main__":
    main()
