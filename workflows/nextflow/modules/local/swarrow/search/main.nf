process SWARROW_SEARCH {
    tag "$meta.id"
    label 'process_gpu'
    // One GPU per task where the executor schedules GPUs; `--device auto` falls back to the
    // CPU when the task lands on a machine without one.
    accelerator 1

    conda "${moduleDir}/../environment.yml"
    container "swarrow:0.1.0"

    input:
    tuple val(meta), path(queries)
    path db

    output:
    // Named apart from every input (`.hits.parquet`): an input staged as pairs.parquet
    // of meta.id `pairs` must not be the output too.
    tuple val(meta), path("*.hits.parquet"), emit: hits
    path "versions.yml"               , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    // ext.args: extra options, e.g. "--top 10 --db-size 1234567 --db-seqs 890" for a database
    // shard (E-values of the whole database) or "--matrix BLOSUM80".
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    swarrow search \\
        -q ${queries} \\
        -d ${db} \\
        -o ${prefix}.hits.parquet \\
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
    touch ${prefix}.hits.parquet

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        swarrow: \$(swarrow --version | sed 's/^swarrow //')
    END_VERSIONS
    """
}
