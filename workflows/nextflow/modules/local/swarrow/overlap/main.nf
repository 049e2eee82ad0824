process SWARROW_OVERLAP {
    tag "$meta.id"
    label 'process_gpu'
    // One GPU per task where the executor schedules GPUs; `--device auto` falls back to the
    // CPU when the task lands on a machine without one.
    accelerator 1

    conda "${moduleDir}/../environment.yml"
    container "swarrow:0.1.0"

    input:
    // candidates: minimap2's overlap candidates (`minimap2 -x ava-pb reads.fq reads.fq`,
    // a read's candidates adjacent); reads: the FASTQ or FASTA they name.
    tuple val(meta), path(candidates)
    path reads

    output:
    // The overlaps as PAF for miniasm (`.overlaps.paf`, named apart from the candidates).
    tuple val(meta), path("*.overlaps.paf"), emit: overlaps
    path "versions.yml"               , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    // ext.args: extra options, e.g. "--columns cigar" (cg:Z) or "--margin 500".
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    swarrow align \\
        --dna --mode semi-global \\
        --pairs ${candidates} \\
        --seqs ${reads} \\
        -o ${prefix}.overlaps.paf \\
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
    """
    touch ${prefix}.overlaps.paf

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        swarrow: \$(swarrow --version | sed 's/^swarrow //')
    END_VERSIONS
    """
}
