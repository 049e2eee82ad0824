#!/usr/bin/env bash
# Pairs by id on the paired kernel (issue 43) against the pair engine, whole process, from
# release binaries carried in $G (swarrow, pairs_convert, make_db.py, DB.fasta.gz):
#   checks   paired = pair engine (20M candidates, score/end) and paired = --device cpu
#            (1M, default columns), for protein random candidates (unsorted: the plan's
#            counting sort) and DNA read overlaps (in query order: the plan's runs), TSV, cmp
#   timings  `swarrow align --pairs C --seqs S --format arrow | cat`, pair engine against
#            --gpu-paired (its defaults, and DNA at batches of 2M with 4 in flight), rounds
#            alternated, score/end columns and default columns
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
chk "dna reads 20M score/end, paired (query-order runs) vs pair engine" $W/rc.tsv $W/reads.fa "--dna --columns $SE" "" "--gpu-paired"
head -1000001 $W/rc.tsv > $W/rc1.tsv
chk "dna reads 1M default columns, paired vs --device cpu" $W/rc1.tsv $W/reads.fa "--dna" "--device cpu" "--gpu-paired --batch 262144"
chk "protein 20M score/end, paired (counting sort) vs pair engine" $W/c.tsv $W/set.fa "--columns $SE" "" "--gpu-paired"
head -1000001 $W/c.tsv > $W/c1.tsv
chk "protein 1M default columns, paired vs --device cpu" $W/c1.tsv $W/set.fa "" "--device cpu" "--gpu-paired --batch 300000"
echo "== whole process, Arrow stream into a pipe, seconds"
w() { local t0=$(date +%s.%N); bash -c "$1"; awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.2f", b-a}'; }
t() { w "$SW align --pairs $1 --seqs $2 --format arrow $3 | cat > /dev/null"; }
for r in $(seq $ROUNDS); do
  for cols in $SE default; do
    C=$([ $cols = default ] || echo "--columns $cols")
    echo "round $r protein $cols: pair engine $(t $W/c.tsv $W/set.fa "$C"); paired $(t $W/c.tsv $W/set.fa "$C --gpu-paired")"
    echo "round $r dna $cols: pair engine $(t $W/rc.tsv $W/reads.fa "--dna $C"); paired $(t $W/rc.tsv $W/reads.fa "--dna $C --gpu-paired"); paired 2M/4 $(t $W/rc.tsv $W/reads.fa "--dna $C --gpu-paired --batch 2097152 --in-flight 4")"
  done
done
$SW align --pairs $W/rc.tsv --seqs $W/reads.fa --dna --columns $SE --format arrow --gpu-paired --stats 2>&1 >/dev/null | grep -E 'wall|stage|bound|paired call' | head -12
