process SWARROW_MAP {
    tag "$meta.id"
    label 'process_gpu'
    // One GPU per task where the executor schedules GPUs; `--device auto` falls back to the
    // CPU when the task lands on a machine without one.
    accelerator 1

    conda "${moduleDir}/../environment.yml"
    container "swarrow:0.1.0"

    input:
    // candidates: minimap2's candidates of the reads on the contigs (`minimap2 -x sr
    // contigs.fa reads.fq`, a read's candidates adjacent); reads and contigs they name.
    tuple val(meta), path(candidates)
    path reads
    path contigs

    output:
    // The reads placed on the contigs (query-global), sorted by coordinate and indexed.
    tuple val(meta), path("*.sorted.bam"), path("*.sorted.bam.bai"), emit: bam
    path "versions.yml"               , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    // ext.args: extra options, e.g. "--margin 500" or "--eqx".
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    swarrow align \\
        --dna --mode semi-global --free-ends target-start,target-end \\
        --pairs ${candidates} \\
        --seqs ${reads} \\
        --target-seqs ${contigs} \\
        -o ${prefix}.unsorted.bam \\
        --threads ${task.cpus} \\
        --quiet \\
        ${args}
    samtools sort -@ ${task.cpus} -o ${prefix}.sorted.bam ${prefix}.unsorted.bam
    samtools index ${prefix}.sorted.bam
    rm ${prefix}.unsorted.bam

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        swarrow: \$(swarrow --version | sed 's/^swarrow //')
        samtools: \$(samtools --version | sed -n '1s/^samtools //p')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.sorted.bam ${prefix}.sorted.bam.bai

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        swarrow: \$(swarrow --version | sed 's/^swarrow //')
    END_VERSIONS
    """
}
