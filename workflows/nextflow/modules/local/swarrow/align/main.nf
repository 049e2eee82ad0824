process SWARROW_ALIGN {
    tag "$meta.id"
    label 'process_gpu'
    // One GPU per task where the executor schedules GPUs; `--device auto` falls back to the
    // CPU when the task lands on a machine without one.
    accelerator 1

    conda "${moduleDir}/../environment.yml"
    container "swarrow:0.1.0"

    input:
    // pairs: a pair table (TSV, Arrow, Parquet) with the sequences, or candidate ids when
    // seqs (a FASTA, makedb or table of id and sequence) is given; [] for none.
    tuple val(meta), path(pairs)
    path seqs

    output:
    // Named apart from every input (`.aligned.parquet`): an input staged as pairs.parquet
    // of meta.id `pairs` must not be the output too. ext.format: parquet (default), arrow,
    // tsv, paf, sam or bam (the README's read rules: a read's candidates adjacent).
    tuple val(meta), path("*.aligned.{parquet,arrow,tsv,paf,sam,bam}"), emit: alignments
    path "versions.yml"               , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    // ext.args: extra options, e.g. "--columns query,target,score,cigar" or "--dna".
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def by_id = seqs ? "--seqs ${seqs}" : ''
    def format = task.ext.format ?: 'parquet'
    """
    swarrow align \\
        --pairs ${pairs} \\
        ${by_id} \\
        -o ${prefix}.aligned.${format} \\
        --threads ${task.cpus} \\
        --quiet \\
        ${args}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        swarrow: \$(swarrow --version | sed 's/^swarrow //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    def format = task.ext.format ?: 'parquet'
    """
    touch ${prefix}.aligned.${format}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        swarrow: \$(swarrow --version | sed 's/^swarrow //')
    END_VERSIONS
    """
}
