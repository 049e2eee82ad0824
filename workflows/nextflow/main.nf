#!/usr/bin/env nextflow
/*
 * swarrow scatter/gather: split the database (or the queries) into shards, search each shard
 * (one GPU per task where there is one, else the CPU), merge into the global top hits.
 *
 *   nextflow run workflows/nextflow/main.nf --queries q.fasta --db db.fasta.gz --chunk_size 5000
 *   nextflow run workflows/nextflow/main.nf --queries q.fasta --db db.fasta.gz --split queries
 *   nextflow run workflows/nextflow/main.nf --pairs pairs.parquet            (one-to-one align)
 *   nextflow run workflows/nextflow/main.nf --pairs cand.tsv --seqs set.fa   (pairs by id)
 *   nextflow run workflows/nextflow/main.nf --pairs pairs.tsv --format sam   (PAF, SAM, BAM too)
 *   nextflow run workflows/nextflow/main.nf --overlaps ava.paf --reads reads.fq
 *   nextflow run workflows/nextflow/main.nf --candidates sr.paf --reads reads.fq --contigs contigs.fa
 *
 * The assembler stages take minimap2's candidates (a read's candidates adjacent, as minimap2
 * writes them): --overlaps (`minimap2 -x ava-pb reads.fq reads.fq`) gives the overlaps as
 * PAF for miniasm; --candidates (`minimap2 -x sr contigs.fa reads.fq`) places the reads on
 * the contigs, to a sorted, indexed BAM.
 *
 * --chunk_size is the number of records per shard (shards = records / chunk_size).
 *
 * Database shards use the whole database's residues and sequences (--db-size/--db-seqs) so
 * their E-values are those of the unsharded search; `swarrow merge` keeps the global top hits
 * per query with the unsharded tie-break (score, then shard order, then the shard's rank).
 */
nextflow.enable.dsl = 2

include { SWARROW_SEARCH } from './modules/local/swarrow/search/main'
include { SWARROW_MERGE  } from './modules/local/swarrow/merge/main'
include { SWARROW_ALIGN  } from './modules/local/swarrow/align/main'
include { SWARROW_OVERLAP } from './modules/local/swarrow/overlap/main'
include { SWARROW_MAP    } from './modules/local/swarrow/map/main'

params.queries    = "${projectDir}/../../examples/queries.fasta"
params.db         = "${projectDir}/../../examples/db.fasta.gz"
params.split      = 'db'     // 'db': shard the database; 'queries': shard the queries
params.chunk_size = 60       // records per shard (the bundled database of 156 makes 3 shards)
params.top        = 10
params.outdir     = 'swarrow-results'
params.pairs      = null     // a pair table: align it instead of searching
params.seqs       = null     // with --pairs of candidate ids: the sequences they name
params.format     = 'parquet' // --pairs: parquet, arrow, tsv, paf, sam or bam
params.reads      = null     // assembler stages: the reads (FASTQ or FASTA)
params.overlaps   = null     // with --reads: minimap2's overlap candidates (PAF)
params.candidates = null     // with --reads and --contigs: minimap2's read candidates (PAF)
params.contigs    = null     // the contigs the reads are placed on

/* Numbers the chunks of one FASTA in file order: [meta, chunk] with meta.shard = 0, 1, ... */
def numbered(chunks) {
    chunks.withIndex().collect { chunk, i -> [[id: "shard-${i}", shard: i], chunk] }
}

workflow {
    if (params.overlaps || params.candidates) {
        reads = channel.fromPath(params.reads, checkIfExists: true).first()
        if (params.overlaps) {
            overlaps = channel.fromPath(params.overlaps, checkIfExists: true).map { p -> [[id: p.baseName], p] }
            SWARROW_OVERLAP(overlaps, reads)
        }
        if (params.candidates) {
            candidates = channel.fromPath(params.candidates, checkIfExists: true).map { p -> [[id: p.baseName], p] }
            SWARROW_MAP(candidates, reads, channel.fromPath(params.contigs, checkIfExists: true).first())
        }
        return
    }
    if (params.pairs) {
        pairs = channel.fromPath(params.pairs, checkIfExists: true).map { p -> [[id: p.baseName], p] }
        seqs  = params.seqs ? channel.fromPath(params.seqs, checkIfExists: true).first() : []
        SWARROW_ALIGN(pairs, seqs)
        return
    }
    queries = channel.fromPath(params.queries, checkIfExists: true)
    db      = channel.fromPath(params.db, checkIfExists: true)

    if (params.split == 'db') {
        // Whole-database size for E-values: residues and sequences over every record.
        db_stats = db
            .splitFasta(record: [seqString: true])
            .map { rec -> rec.seqString.replaceAll(/\s/, '').length() as long }
            .reduce([0L, 0L]) { acc, len -> [acc[0] + len, acc[1] + 1L] }

        // Shards in database order; the number is the merge's tie-break order.
        shards = db
            .splitFasta(by: params.chunk_size, file: true)
            .toList()
            .flatMap { chunks -> numbered(chunks) }
            .combine(db_stats)
            .map { meta, chunk, residues, seqs -> [meta + [db_residues: residues, db_seqs: seqs], chunk] }

        search_in = shards
            .combine(queries)
            .multiMap { meta, chunk, q ->
                query: [meta, q]
                db: chunk
            }
        SWARROW_SEARCH(search_in.query, search_in.db)
    } else {
        query_shards = queries
            .splitFasta(by: params.chunk_size, file: true)
            .toList()
            .flatMap { chunks -> numbered(chunks) }
        SWARROW_SEARCH(query_shards, db.first())
    }

    // Gather in shard order (tasks finish in any order); published by nextflow.config.
    merge_in = SWARROW_SEARCH.out.hits
        .toSortedList { a, b -> a[0].shard <=> b[0].shard }
        .map { list -> [[id: 'hits'], list.collect { it[1] }] }
    SWARROW_MERGE(merge_in, params.top)
}
