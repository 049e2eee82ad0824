// Prints the shell script Nextflow would run for one task of a module, without Nextflow:
// the module's `script:` block evaluated as Groovy with the task's variables bound, its
// indentation stripped as Nextflow strips it. tests/workflows.rs runs the script in a work
// directory whose inputs are symlinks, as Nextflow stages them.
//
//   groovy scripts/nextflow-task.groovy MODULE/main.nf '{"meta": {"id": "pairs"}, "pairs": "pairs.parquet",
//       "seqs": [], "task": {"ext": {}, "cpus": 2, "process": "SWARROW_ALIGN"}}'
//
// The block runs from the line `script:` to the line `stub:` or the process's closing brace.
import groovy.json.JsonSlurper

if (args.length != 2) {
    System.err.println('usage: nextflow-task.groovy MODULE/main.nf BINDING.json')
    System.exit(2)
}
def lines = new File(args[0]).readLines()
def start = lines.findIndexOf { it.trim() == 'script:' }
if (start < 0) {
    System.err.println("${args[0]}: no script: block")
    System.exit(1)
}
def end = lines.findIndexOf(start + 1) { it.trim() == 'stub:' }
if (end < 0) {
    end = lines.findLastIndexOf { it.trim() == '}' }
}
def block = lines.subList(start + 1, end).join('\n')
def values = new JsonSlurper().parseText(args[1])
def script = new GroovyShell(new Binding(values)).evaluate(block)
print script.toString().stripIndent().trim() + '\n'
