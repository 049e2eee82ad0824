process SWARROW_MERGE {
    tag "$meta.id"
    label 'process_single'

    conda "${moduleDir}/../environment.yml"
    container "swarrow:0.1.0"

    input:
    // shards in shard order: ties in score are broken by that order, as the unsharded
    // search breaks them by database position.
    tuple val(meta), path(shards, stageAs: 'shards/*')
    val top

    output:
    // Named apart from every input (`.merged.parquet`), as in the other modules.
    tuple val(meta), path("*.merged.parquet"), emit: hits
    path "versions.yml"               , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def inputs = (shards instanceof List ? shards : [shards]).join(' ')
    """
    swarrow merge --top ${top} -o ${prefix}.merged.parquet ${args} ${inputs}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        swarrow: \$(swarrow --version | sed 's/^swarrow //')
    END_VERSIONS
    """
}
