#!/usr/bin/python3
"""Issue 36's CPU table in one run: swarrow's CPU engine against parasail on the same data
and threads, each pair of runs alternated (A, B, A, B, ...) so a busy machine slows both
alike. Called by `scripts/bench-cpu.sh table`; see there for the arguments.

Every run is timed by wall clock and by the CPU time (user + system) of its process tree.
Ratios are parasail / swarrow (above 1: swarrow faster), per round, then the median and
the spread over rounds; for the long pair, two threads / one thread.
"""
import os, platform, resource, statistics, subprocess, sys, time

BENCH, DB, QUERIES, PAIRS_Q, PAIRS_T, THREADS, ROUNDS, LONG, SECTIONS, SWARROW = sys.argv[1:11]
THREADS, ROUNDS, LONG = int(THREADS), int(ROUNDS), int(LONG)
SECTIONS = SECTIONS.split(",")
HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def run(cmd, tty=False):
    """Runs cmd; returns (wall seconds, CPU seconds of the process tree, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if tty:  # parasail_aligner refuses to run unless stdin is a terminal
        master, slave = os.openpty()
        p = subprocess.run(cmd, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        os.close(master)
        os.close(slave)
    else:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def summary(xs):
    xs = sorted(xs)
    return f"{statistics.median(xs):.2f} [{xs[0]:.2f}-{xs[-1]:.2f}]"


def versus(name, ours, theirs):
    """Alternates ours and theirs ROUNDS times; prints both and the ratios."""
    rw, rc, lines = [], [], []
    for r in range(ROUNDS):
        a = run(*ours)
        b = run(*theirs)
        rw.append(b[0] / a[0])
        rc.append(b[1] / a[1])
        lines.append(f"  round {r + 1}: swarrow {a[0]:.2f} s wall {a[1]:.2f} s CPU | parasail {b[0]:.2f} s wall {b[1]:.2f} s CPU")
    print(f"{name}: parasail/swarrow wall {summary(rw)}, CPU {summary(rc)}")
    for line in lines:
        print(line)
    sys.stdout.flush()
    return statistics.median(rw), statistics.median(rc)


def split_queries():
    out, cur = [], None
    for line in open(QUERIES):
        if line.startswith(">"):
            cur = [line]
            out.append(cur)
        elif cur is not None:
            cur.append(line)
    paths = []
    for k, rec in enumerate(out):
        path = os.path.join(os.path.dirname(PAIRS_Q), f"query{k + 1}.fasta")
        with open(path, "w") as f:
            f.writelines(rec)
        length = sum(len(l.strip()) for l in rec[1:])
        paths.append((path, length))
    return paths


def parasail_search(queries):
    return ["parasail_aligner", "-a", "sw_striped_profile_avx2_256_sat", "-x", "-o", "12", "-e", "1", "-m", "blosum62",
            "-t", str(THREADS), "-f", DB, "-q", queries, "-g", os.path.join(os.path.dirname(PAIRS_Q), "parasail.csv")]


print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs; load average {os.getloadavg()[0]:.1f} at start")
print(f"{ROUNDS} rounds, {THREADS} threads, each pair of runs alternated")
sys.stdout.flush()
if "search" in SECTIONS:
    versus(f"search, {QUERIES} x {DB}",
           ([BENCH, "search", DB, QUERIES, str(THREADS)],), (parasail_search(QUERIES), True))
if "queries" in SECTIONS:
    worst = None
    for path, length in split_queries():
        w, c = versus(f"query of {length} residues alone", ([BENCH, "search", DB, path, str(THREADS)],),
                      (parasail_search(path), True))
        worst = min(worst or c, c)
    print(f"each query alone: lowest median CPU ratio {worst:.2f}")
PARASAIL_PAIRS = ["/usr/bin/python3", os.path.join(HERE, "parasail_pairs.py"), PAIRS_Q, PAIRS_T, str(THREADS)]
if "align" in SECTIONS:
    versus(f"align, pairs {PAIRS_Q} / {PAIRS_T}", ([BENCH, "align", PAIRS_Q, PAIRS_T, str(THREADS)],),
           (PARASAIL_PAIRS,))
    # The same pairs as a user runs them: the command line reads both FASTA files, aligns
    # (score and all four coordinates) and writes an Arrow file.
    out = os.path.join(os.path.dirname(PAIRS_Q), "align-table.arrow")
    versus("align, command line (FASTA in, Arrow file out)",
           ([SWARROW, "align", "-q", PAIRS_Q, "-t", PAIRS_T, "--device", "cpu", "--threads", str(THREADS),
             "--quiet", "--format", "arrow", "-o", out],),
           (PARASAIL_PAIRS,))
if "long" in SECTIONS:
    rw, lines = [], []
    for r in range(ROUNDS):
        one = run([BENCH, "longpair", DB, str(LONG), "1"])
        two = run([BENCH, "longpair", DB, str(LONG), str(THREADS)])
        rw.append(two[0] / one[0])
        lines.append(f"  round {r + 1}: 1 thread {one[0]:.1f} s wall {one[1]:.1f} s CPU | {THREADS} threads {two[0]:.1f} s wall "
                     f"{two[1]:.1f} s CPU | {two[2].strip()}")
    print(f"one pair of {LONG} residues against itself: {THREADS} threads / 1 thread, wall {summary(rw)}")
    for line in lines:
        print(line)
print(f"load average {os.getloadavg()[0]:.1f} at the end")
