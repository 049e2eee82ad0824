// Computes GKL's PairHMM likelihoods (Intel GKL through its Java API) for test and benchmark
// input read from stdin, one line per record:
//   H <hap bases>                              a haplotype of the current region
//   R <bases> <qual> <ins> <del> <gcp>         a read of the current region (phred+33 text)
//   G                                          end of region: every read x every haplotype
// Prints one log10 likelihood per pair, reads outer and haplotypes inner (GKL's order), in
// the order of the regions. Base qualities are floored at 6 and the others taken as given,
// as GATK does before it calls GKL.
//
// Usage: java -cp <gkl.jar:gatk-native-bindings.jar:.> GklPairHmm double|float THREADS [omp] [bench SECONDS]
// In bench mode nothing is printed per pair: the regions are computed repeatedly for about
// SECONDS and one line reports cells (read length x haplotype length) per second.
import com.intel.gkl.pairhmm.IntelPairHmm;
import com.intel.gkl.pairhmm.IntelPairHmmOMP;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeArguments;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

public class GklPairHmm {
    static final class Region {
        ReadDataHolder[] reads;
        HaplotypeDataHolder[] haps;
        long cells;
    }

    static byte[] phred(String s, int floor) {
        byte[] b = new byte[s.length()];
        for (int i = 0; i < b.length; i++) {
            int q = s.charAt(i) - 33;
            b[i] = (byte) Math.max(q, floor);
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        boolean useDouble = args[0].equals("double");
        int threads = Integer.parseInt(args[1]);
        boolean omp = false;
        double benchSeconds = -1;
        for (int i = 2; i < args.length; i++) {
            if (args[i].equals("omp")) omp = true;
            if (args[i].equals("bench")) benchSeconds = Double.parseDouble(args[++i]);
        }
        IntelPairHmm hmm = omp ? new IntelPairHmmOMP() : new IntelPairHmm();
        if (!hmm.load(null)) {
            System.err.println("GklPairHmm: GKL's native PairHMM did not load" + (omp ? " (OpenMP variant)" : ""));
            System.exit(3);
        }
        PairHMMNativeArguments a = new PairHMMNativeArguments();
        a.maxNumberOfThreads = threads;
        a.useDoublePrecision = useDouble;
        hmm.initialize(a);

        List<Region> regions = new ArrayList<>();
        List<ReadDataHolder> reads = new ArrayList<>();
        List<HaplotypeDataHolder> haps = new ArrayList<>();
        long readBases = 0, hapBases = 0;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in), 1 << 20);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ");
            if (f[0].equals("H")) {
                HaplotypeDataHolder h = new HaplotypeDataHolder();
                h.haplotypeBases = f[1].getBytes();
                haps.add(h);
                hapBases += f[1].length();
            } else if (f[0].equals("R")) {
                ReadDataHolder r = new ReadDataHolder();
                r.readBases = f[1].getBytes();
                r.readQuals = phred(f[2], 6);
                r.insertionGOP = phred(f[3], 0);
                r.deletionGOP = phred(f[4], 0);
                r.overallGCP = phred(f[5], 0);
                reads.add(r);
                readBases += f[1].length();
            } else if (f[0].equals("G")) {
                Region g = new Region();
                g.reads = reads.toArray(new ReadDataHolder[0]);
                g.haps = haps.toArray(new HaplotypeDataHolder[0]);
                g.cells = readBases * hapBases;
                regions.add(g);
                reads.clear();
                haps.clear();
                readBases = 0;
                hapBases = 0;
            } else {
                throw new IllegalArgumentException("bad line: " + line);
            }
        }
        if (benchSeconds < 0) {
            StringBuilder out = new StringBuilder();
            for (Region g : regions) {
                double[] like = new double[g.reads.length * g.haps.length];
                hmm.computeLikelihoods(g.reads, g.haps, like);
                for (double v : like) out.append(v).append('\n');
            }
            System.out.print(out);
        } else {
            long cells = 0, pairs = 0;
            for (Region g : regions) {  // warm-up
                hmm.computeLikelihoods(g.reads, g.haps, new double[g.reads.length * g.haps.length]);
            }
            long start = System.nanoTime();
            double elapsed;
            do {
                for (Region g : regions) {
                    hmm.computeLikelihoods(g.reads, g.haps, new double[g.reads.length * g.haps.length]);
                    cells += g.cells;
                    pairs += (long) g.reads.length * g.haps.length;
                }
                elapsed = (System.nanoTime() - start) / 1e9;
            } while (elapsed < benchSeconds);
            System.out.printf("gkl %s threads=%d%s pairs=%d cells=%d seconds=%.3f gcups=%.3f%n",
                    useDouble ? "double" : "float", threads, omp ? " omp" : "", pairs, cells, elapsed, cells / elapsed / 1e9);
        }
        hmm.done();
    }
}
