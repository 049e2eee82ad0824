#!/usr/bin/python3
"""parasail on one-to-one pairs: sw_striped_16 (score and end cell) per
pair, BLOSUM62 open 12 extend 1 (= swarrow's 11/1), one process per thread.

  parasail_pairs.py QUERIES.fa TARGETS.fa THREADS [SWARROW_PAIRS_PER_S]
"""
import sys, time
from multiprocessing import Pool

import parasail


def read(path):
    seqs, cur = [], None
    for line in open(path):
        if line.startswith(">"):
            if cur is not None:
                seqs.append("".join(cur))
            cur = []
        else:
            cur.append(line.strip())
    if cur is not None:
        seqs.append("".join(cur))
    return seqs


def work(chunk):
    total = 0
    for q, t in chunk:
        r = parasail.sw_striped_16(q, t, 12, 1, parasail.blosum62)
        total += r.score + r.end_query + r.end_ref
    return total


def main():
    qf, tf, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    start = time.time()
    pairs = list(zip(read(qf), read(tf)))
    size = (len(pairs) + 8 * threads - 1) // (8 * threads)
    chunks = [pairs[i:i + size] for i in range(0, len(pairs), size)]
    with Pool(threads) as pool:
        checksum = sum(pool.map(work, chunks))
    secs = time.time() - start
    cells = sum(len(q) * len(t) for q, t in pairs)
    rate = len(pairs) / secs
    print(f"engine=parasail sw_striped_16 ({threads} processes) mode=align pairs={len(pairs)} "
          f"cells={cells:.3e} seconds={secs:.3f} pairs_per_s={rate:.0f} gcups={cells / secs / 1e9:.2f} checksum={checksum}")
    if len(sys.argv) > 4:
        print(f"threads={threads} ratio swarrow/parasail = {float(sys.argv[4]) / rate:.2f}")


if __name__ == "__main__":
    main()
