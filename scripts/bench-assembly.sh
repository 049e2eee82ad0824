#!/usr/bin/env bash
# The assembler stages (issue 51) on a GPU machine, beside minimap2 in the same run, from
# binaries carried in $G (swarrow, minimap2; the simulator is scripts/assembly-sim.py):
#   data     a genome of 20 contigs (20-100 kb) with SHORT reads of 150 bp, and one of 5
#            contigs (0.8-1.2 Mb) with LONG reads of 5-15 kb, both strands, 1% errors
#   reads    minimap2 -x sr candidates; swarrow query-global in the windows to BAM, SAM, PAF
#            and Arrow; GPU against --device cpu (SAM text, @PG aside); --strand both
#            against the candidates' own strands; minimap2 -ax sr (mapping and alignment)
#   overlaps minimap2 -x ava-pb candidates; swarrow by the overlap recipe in the windows,
#            coordinates (Arrow), PAF and PAF with cg:Z of every candidate; GPU against
#            --device cpu (PAF with cg:Z) on the first CHECK_LONG candidates; minimap2 -c
#            (base-level alignment, PAF with cg:Z)
#
#   G=.gpu scripts/bench-assembly.sh
# Environment: G (.gpu), WORK (/tmp/asm), SHORT (500000), LONG (7500), CHECK_LONG (2000),
# STAGES ("reads overlaps"), OVERLAP (the recipe's mode options).
set -uo pipefail
G=${G:-.gpu}
W=${WORK:-/tmp/asm}
SHORT=${SHORT:-500000}
LONG=${LONG:-7500}
CHECK_LONG=${CHECK_LONG:-2000}
# The overlap recipe's mode options (the README's).
OVERLAP=${OVERLAP:---mode overlap}
STAGES=${STAGES:-reads overlaps}
SW=$G/swarrow
MM=$G/minimap2
T=$(nproc)
mkdir -p $W/sr $W/lr
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi --query-gpu=name --format=csv,noheader
# Seconds of a command (its output to the file named first, or /dev/null).
secs() {
  local out=$1
  shift
  local t0=$(date +%s.%N)
  "$@" > "$out" 2> $W/err || { echo "FAILED: $* ($(head -c 400 $W/err))"; }
  awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.2f", b-a}'
}
same() { cmp -s "$1" "$2" && echo identical || echo DIFFER; }
nohdr() { grep -v '^@PG' "$1"; }

case " $STAGES " in *" reads "*)
  python3 scripts/assembly-sim.py $W/sr --seed 1 --contigs 20 --short $SHORT &
esac
case " $STAGES " in *" overlaps "*)
  python3 scripts/assembly-sim.py $W/lr --seed 2 --contigs 5 --contig-len 800000-1200000 --long $LONG &
esac
wait

case " $STAGES " in *" reads "*)
  echo "== reads on contigs: $SHORT reads"
  echo "minimap2 -x sr (candidates): $(secs $W/sr/sr.paf $MM -t $T -x sr $W/sr/genome.fa $W/sr/short.fq) s"
  echo "minimap2 -ax sr (SAM with CIGAR): $(secs /dev/null $MM -t $T -ax sr $W/sr/genome.fa $W/sr/short.fq) s"
  echo "candidates: $(wc -l < $W/sr/sr.paf)"
  SR="align --dna --mode semi-global --free-ends target-start,target-end --pairs $W/sr/sr.paf --seqs $W/sr/short.fq --target-seqs $W/sr/genome.fa"
  for round in 1 2; do
    for f in arrow bam sam paf; do
      echo "round $round swarrow $f: $(secs $W/sr/out.$f $SW $SR --format $f) s"
    done
    echo "round $round swarrow arrow, coordinates only: $(secs /dev/null $SW $SR --format arrow --columns query,target,score,qstart,qend,tstart,tend) s"
    echo "round $round swarrow arrow --strand both: $(secs /dev/null $SW $SR --format arrow --strand both) s"
  done
  $SW $SR --format sam --stats 2>&1 >/dev/null | grep -E 'wall|stage|bound' | head -8
  $SW $SR --format sam --device cpu > $W/sr/cpu.sam
  echo "GPU = CPU, SAM: $(same <(nohdr $W/sr/out.sam) <(nohdr $W/sr/cpu.sam)) ($(grep -vc '^@' $W/sr/cpu.sam) records)"
  $SW $SR --format paf --device cpu > $W/sr/cpu.paf
  echo "GPU = CPU, PAF: $(same $W/sr/out.paf $W/sr/cpu.paf)"
  $SW $SR --format tsv --strand both > $W/sr/gb.tsv
  $SW $SR --format tsv --strand both --device cpu > $W/sr/cb.tsv
  echo "GPU = CPU, --strand both TSV: $(same $W/sr/gb.tsv $W/sr/cb.tsv)"
esac

case " $STAGES " in *" overlaps "*)
  echo "== long-read overlaps: $LONG reads"
  echo "minimap2 -x ava-pb (candidates): $(secs $W/lr/ava.paf $MM -t $T -x ava-pb $W/lr/long.fq $W/lr/long.fq) s"
  echo "candidates: $(wc -l < $W/lr/ava.paf)"
  OV="align --dna $OVERLAP --pairs $W/lr/ava.paf --seqs $W/lr/long.fq"
  echo "swarrow coordinates (Arrow): $(secs /dev/null $SW $OV --format arrow --columns query,target,strand,score,qstart,qend,tstart,tend) s"
  SG="align --dna --mode semi-global --pairs $W/lr/ava.paf --seqs $W/lr/long.fq"
  echo "swarrow coordinates (Arrow), --mode semi-global: $(secs /dev/null $SW $SG --format arrow --columns query,target,strand,score,qstart,qend,tstart,tend) s"
  echo "swarrow PAF, all candidates: $(secs $W/lr/g.paf $SW $OV --format paf) s"
  echo "swarrow PAF with cg:Z, all candidates: $(secs $W/lr/gc.paf $SW $OV --format paf --columns cigar) s"
  $SW $OV --format paf --stats 2>&1 >/dev/null | grep -E 'wall|stage|bound|trace|path|kernel' | head -12
  echo "minimap2 -c -x ava-pb (cg:Z): $(secs /dev/null $MM -t $T -c -x ava-pb $W/lr/long.fq $W/lr/long.fq) s"
  head -$CHECK_LONG $W/lr/ava.paf > $W/lr/check.paf
  OC="align --dna $OVERLAP --pairs $W/lr/check.paf --seqs $W/lr/long.fq"
  $SW $OC --format paf --columns cigar --device cpu > $W/lr/c.paf
  $SW $OC --format paf --columns cigar > $W/lr/gcc.paf
  echo "GPU = CPU, overlaps PAF with cg:Z ($CHECK_LONG candidates): $(same $W/lr/gcc.paf $W/lr/c.paf) ($(wc -l < $W/lr/c.paf) lines)"
esac
