#!/usr/bin/env bash
# Pairs by id (issues 43, 53), whole process, from release binaries carried in $G
# (swarrow, pairs_convert, make_db.py, DB.fasta.gz). The paired kernel runs where it wins
# (protein, local, score/end columns: src/cli.rs paired_aligner), the pair engine elsewhere;
# `gpu_align_bench paired` compares the two in one process.
#   checks   the GPU = --device cpu (1M candidates, score/end and default columns), for
#            protein random candidates (unsorted: the plan's counting sort) and DNA read
#            overlaps (in query order: the plan's runs), TSV, cmp
#   timings  `swarrow align --pairs C --seqs S --format arrow | cat`, rounds, score/end
#            columns and default columns
#
#   G=.gpu scripts/bench-paired.sh
# Environment: G (.gpu), WORK (/tmp), ROUNDS (2).
set -uo pipefail
G=${G:-.gpu}
W=${WORK:-/tmp}
ROUNDS=${ROUNDS:-2}
SW=$G/swarrow
nvidia-smi --query-gpu=name --format=csv,noheader
python3 $G/make_db.py $G/DB.fasta.gz --residues 45000000 --seed 1 > $W/set.fa 2>/dev/null &
$G/pairs_convert read-overlaps $W/reads.fa $W/rc.tsv 1000000 20 1 2>/dev/null
wait
$G/pairs_convert random-candidates tsv $W/set.fa 20000000 20 > $W/c.tsv 2>/dev/null
SE=query,target,score,qend,tend,qlen,tlen
echo "== checks (TSV, cmp)"
chk() { # label cands seqs extra-args-for-both ref-args paired-args
  $SW align --pairs $2 --seqs $3 --format tsv $4 $5 > $W/a.tsv; $SW align --pairs $2 --seqs $3 --format tsv $4 $6 > $W/b.tsv
  echo "$1: $(($(wc -l < $W/a.tsv) - 1)) pairs, $(cmp -s $W/a.tsv $W/b.tsv && echo identical || echo DIFFER)"; }
head -1000001 $W/rc.tsv > $W/rc1.tsv
head -1000001 $W/c.tsv > $W/c1.tsv
for cols in "--columns $SE" ""; do
  chk "dna reads 1M ${cols:-default columns}, GPU vs --device cpu" $W/rc1.tsv $W/reads.fa "--dna $cols" "--device cpu" ""
  chk "protein 1M ${cols:-default columns}, GPU vs --device cpu" $W/c1.tsv $W/set.fa "$cols" "--device cpu" ""
done
echo "== whole process, Arrow stream into a pipe, seconds"
w() { local t0=$(date +%s.%N); bash -c "$1"; awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.2f", b-a}'; }
t() { w "$SW align --pairs $1 --seqs $2 --format arrow $3 | cat > /dev/null"; }
for r in $(seq $ROUNDS); do
  for cols in $SE default; do
    C=$([ $cols = default ] || echo "--columns $cols")
    echo "round $r protein $cols: $(t $W/c.tsv $W/set.fa "$C")"
    echo "round $r dna $cols: $(t $W/rc.tsv $W/reads.fa "--dna $C")"
  done
done
$SW align --pairs $W/c.tsv --seqs $W/set.fa --columns $SE --format arrow --stats 2>&1 >/dev/null | grep -E 'wall|stage|bound|paired call' | head -12
