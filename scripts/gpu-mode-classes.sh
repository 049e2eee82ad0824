# Shared setup of scripts/gpu-check-modes.sh and scripts/gpu-check-mode-paths.sh (sourced,
# with the caller's arguments, after it sets WORK): the binaries carried in $G, the GPU
# environment, the pair classes of `gpu_align_bench make-shapes` and their pair counts
# (DIV divides them), the classes asked for ("$@", else all), and `class_pairs CLASS`,
# which sets n (pairs), dna (--dna or empty) and d (the class's files in $WORK, its pairs
# in $d.tsv, made once per count) and adds n to total.
G=${G:-.gpu}
DIV=${DIV:-1}
mkdir -p "$WORK"
. "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
B=$G/gpu_align_bench
SW=$G/swarrow
declare -A PAIRS=([protein-short]=400000 [dna-reads]=400000 [protein-mid]=120000 [protein-long]=40000
    [protein-vlong]=150 [dna-read-contig]=60000 [dna-vlong]=30)
classes=${*:-"protein-short dna-reads protein-mid protein-long protein-vlong dna-read-contig dna-vlong"}
failed=0 total=0
sec() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }

class_pairs() {
    n=$(( (${PAIRS[$1]} + DIV - 1) / DIV ))
    dna=""; case $1 in dna-*) dna="--dna" ;; esac
    d=$WORK/$1
    [ -s "$d.tsv" ] && [ "$(cat "$d.n" 2>/dev/null)" = "$n" ] ||
        { $B make-shapes --class "$1" --pairs "$n" --query "$d.q.fa" --target "$d.t.fa" --tsv "$d.tsv" && echo "$n" > "$d.n"; }
    total=$((total + n))
}
