#!/usr/bin/env python3
"""Per-thread CPU of swarrow while a command runs: which stage is the bottleneck.

    scripts/thread-profile.py 'cat pairs.tsv | swarrow align --pairs - > /dev/null'

Runs the command with bash, samples /proc/PID/task/*/stat of every `swarrow` process every
20 ms, and prints per thread name (swarrow names its threads sw-<stage>; pool threads
`sw-pool-3` etc. are summed as `sw-pool-*`): threads, CPU seconds (user + system), the share
of the wall a thread of that name was running (R) when sampled (summed over the threads), and
minor page faults. A stage whose single thread runs close to 100% of the wall is the limit.
Linux only.
"""
import os, re, subprocess, sys, time
from collections import defaultdict

TICK = os.sysconf("SC_CLK_TCK")


def tasks():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if open(f"/proc/{pid}/comm").read().strip() != "swarrow":
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                try:
                    stat = open(f"/proc/{pid}/task/{tid}/stat").read()
                except OSError:
                    continue
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                f = stat[stat.rindex(")") + 2 :].split()
                # fields after the name: state ppid ... minflt(7) ... utime(11) stime(12)
                yield (int(pid), int(tid)), name, f[0], int(f[7]), (int(f[11]) + int(f[12])) / TICK
        except OSError:
            continue


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    start = time.time()
    child = subprocess.Popen(["bash", "-o", "pipefail", "-c", sys.argv[1]])
    last, running, samples = {}, defaultdict(int), 0
    while child.poll() is None:
        samples += 1
        for key, name, state, faults, cpu in tasks():
            last[key] = (name, faults, cpu)
            if state == "R":
                running[key] += 1
        time.sleep(0.02)
    wall = time.time() - start
    groups = defaultdict(lambda: [0, 0.0, 0, 0])
    for key, (name, faults, cpu) in last.items():
        g = groups[re.sub(r"-\d+$", "-*", name)]
        g[0] += 1
        g[1] += cpu
        g[2] += running[key]
        g[3] += faults
    print(f"wall {wall:.2f} s, exit {child.returncode}, {samples} samples")
    print(f"{'thread':<18} {'n':>3} {'CPU s':>8} {'running':>8} {'minflt':>10}")
    for name, (n, cpu, run, faults) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:<18} {n:>3} {cpu:8.2f} {run / max(samples, 1):8.0%} {faults:>10}")
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
