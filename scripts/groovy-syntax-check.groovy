// Parses each file given (Nextflow scripts, nf-test files and configs are Groovy) up to
// Groovy's CONVERSION phase: syntax only, no Nextflow semantics. Exit 1 when any fails.
import org.codehaus.groovy.control.CompilationUnit
import org.codehaus.groovy.control.Phases

int failed = 0
for (name in args) {
    def unit = new CompilationUnit()
    unit.addSource(new File(name))
    try {
        unit.compile(Phases.CONVERSION)
        println "groovy syntax ok: ${name}"
    } catch (Exception e) {
        failed++
        System.err.println "groovy syntax error: ${name}: ${e.message}"
    }
}
System.exit(failed ? 1 : 0)
