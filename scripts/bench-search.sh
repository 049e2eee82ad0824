#!/usr/bin/env bash
# Times `swarrow search` end to end and prints cells, wall time and GCUPS.
#   scripts/bench-search.sh QUERIES DB [extra swarrow search arguments...]
# GCUPS = sum over queries of (query length x database residues) / wall seconds.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 QUERIES DB [swarrow args...]" >&2; exit 2; }
q=$1; db=$2; shift 2
sw=${SWARROW:-./target/release/swarrow}
cells=$(/usr/bin/env python3 - "$q" "$db" <<'PY'
import gzip, sys
def lengths(p):
    if p.endswith('.swdb'):
        return None
    op = gzip.open if open(p, 'rb').read(2) == b'\x1f\x8b' else open
    n = []; cur = 0; seen = False
    with op(p, 'rt') as f:
        for line in f:
            if line.startswith('>'):
                if seen: n.append(cur)
                cur = 0; seen = True
            else:
                cur += len(line.strip())
    if seen: n.append(cur)
    return n
q = lengths(sys.argv[1]); d = lengths(sys.argv[2])
print(sum(q) * sum(d))
PY
)
start=$(date +%s.%N)
"$sw" search -q "$q" -d "$db" --quiet --format tsv "$@" >/dev/null
end=$(date +%s.%N)
python3 -c "import sys; c=$cells; w=$end-$start; print(f'cells {c:.3e}  wall {w:.2f} s  {c/w/1e9:.1f} GCUPS')"
