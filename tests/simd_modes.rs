//! The SIMD engine of global and semi-global alignment against the scalar reference
//! (`scalar_modes::align_pair_mode`), on every instruction set this CPU runs: every mode and
//! all 16 free-end sets, both levels, protein and DNA, related and unrelated pairs, empty
//! sides, and scoring schemes whose scores leave 16 bits at short lengths (the boundary
//! between the 16-bit lanes and the reference).

use swarrow::engine::mode::{AlignMode, FreeEnds};
use swarrow::engine::scalar_modes::align_pair_mode;
use swarrow::engine::simd::{Isa, SimdModeEngine};
use swarrow::engine::{Engine, Level};
use swarrow::scoring::{Matrix, Scoring};

fn isas() -> Vec<Isa> {
    Isa::ALL.into_iter().filter(|i| i.supported()).collect()
}

/// Global and the semi-global mode of every free-end set (no free end included).
fn modes() -> Vec<AlignMode> {
    let mut modes = vec![AlignMode::Global];
    for flags in 0..16u8 {
        modes.push(AlignMode::SemiGlobal(FreeEnds::from_flags([
            flags & 1 != 0,
            flags & 2 != 0,
            flags & 4 != 0,
            flags & 8 != 0,
        ])));
    }
    modes
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    fn seq(&mut self, len: usize, codes: u64) -> Vec<u8> {
        (0..len).map(|_| self.below(codes) as u8).collect()
    }

    /// A length, mostly short, sometimes up to `max`.
    fn len(&mut self, max: u64) -> usize {
        match self.below(8) {
            0 => self.below(4) as usize,
            1..=5 => self.below(max / 4) as usize,
            _ => self.below(max) as usize,
        }
    }

    /// `t` mutated: substitutions, insertions and deletions at `rate` in 16.
    fn mutated(&mut self, t: &[u8], codes: u64, rate: u64) -> Vec<u8> {
        let mut q = Vec::with_capacity(t.len());
        for &c in t {
            match self.below(16) {
                r if r >= rate => q.push(c),
                0 => {}
                1 => {
                    q.push(c);
                    q.push(self.below(codes) as u8)
                }
                _ => q.push(self.below(codes) as u8),
            }
        }
        q
    }

    /// Unrelated, mutated copies, containments (either way) and overlaps.
    fn pair(&mut self, max: u64, codes: u64) -> (Vec<u8>, Vec<u8>) {
        let tlen = self.len(max);
        let t = self.seq(tlen, codes);
        let (a, b) = (self.below(t.len() as u64 + 1) as usize, self.below(t.len() as u64 + 1) as usize);
        let part = &t[a.min(b)..a.max(b)];
        let (kind, rate) = (self.below(5), self.below(9));
        match kind {
            0 => {
                let qlen = self.len(max);
                (self.seq(qlen, codes), t)
            }
            1 => (self.mutated(&t, codes, rate), t),
            2 => (self.mutated(part, codes, rate / 2), t),
            3 => (t.clone(), self.mutated(part, codes, rate / 2)),
            _ => {
                // The query's tail is the target's head.
                let qlen = self.len(max / 2);
                let mut q = self.seq(qlen, codes);
                q.extend(self.mutated(&t[..a], codes, rate / 2));
                (q, t)
            }
        }
    }
}

/// Every engine of `isas()` against the reference on `pairs`, in every mode at both levels.
fn check(sc: &Scoring, pairs: &[(Vec<u8>, Vec<u8>)], what: &str) {
    let slices: Vec<(&[u8], &[u8])> = pairs.iter().map(|(q, t)| (q.as_slice(), t.as_slice())).collect();
    for mode in modes() {
        let want: Vec<_> = slices.iter().map(|(q, t)| align_pair_mode(q, t, sc, mode).unwrap()).collect();
        for isa in isas() {
            let engine = SimdModeEngine::with_isa(sc.clone(), mode, 2, isa).unwrap();
            for level in [Level::ScoreEnd, Level::Coordinates] {
                let got = engine.align_slices(&slices, level).unwrap();
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    let w = if level == Level::ScoreEnd { w.end_only() } else { *w };
                    assert_eq!(
                        *g,
                        w,
                        "{what}: {mode} {level:?} on {}: pair {k} of lengths {} and {}",
                        isa.name(),
                        slices[k].0.len(),
                        slices[k].1.len()
                    );
                }
            }
        }
    }
}

#[test]
fn protein_pairs_equal_the_reference() {
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let pairs: Vec<_> = (0..300).map(|_| rng.pair(600, 20)).collect();
    check(&Scoring::new(Matrix::protein("BLOSUM62").unwrap(), 10, 1).unwrap(), &pairs, "BLOSUM62 10/1");
    // A cheap gap opening makes ties between gap paths common.
    check(&Scoring::new(Matrix::protein("BLOSUM62").unwrap(), 0, 2).unwrap(), &pairs[..120], "BLOSUM62 0/2");
}

#[test]
fn queries_in_several_strips_equal_the_reference() {
    // The lanes cut queries past 512 rows into strips, run one after another, each starting
    // from the last row of the one before (H and F): lengths at the cuts and
    // past them, with targets inside the query or the query's pieces inside the target (so
    // paths cross the cuts), beside short pairs streaming through the other lanes.
    let mut rng = Rng(0x51f1_5eed_0bad_cafe);
    let mut pairs = Vec::new();
    for qlen in [511, 512, 513, 700, 1024, 1025, 1300] {
        let q = rng.seq(qlen, 20);
        let a = rng.below(qlen as u64 / 2) as usize;
        let b = a + 20 + rng.below((qlen - a - 20) as u64) as usize;
        let inside = rng.mutated(&q[a..b], 20, 3);
        pairs.push((q.clone(), inside));
        let (before, after) = (rng.below(200) as usize + 1, rng.below(200) as usize + 1);
        let mut t = rng.seq(before, 20);
        t.extend(rng.mutated(&q[a..b], 20, 2));
        t.extend(rng.seq(after, 20));
        pairs.push((q.clone(), t));
        let tlen = rng.below(600) as usize + 1;
        pairs.push((q, rng.seq(tlen, 20)));
    }
    pairs.extend((0..40).map(|_| rng.pair(300, 20)));
    check(&Scoring::new(Matrix::protein("BLOSUM62").unwrap(), 10, 1).unwrap(), &pairs, "strips, BLOSUM62 10/1");
    check(&Scoring::new(Matrix::protein("BLOSUM62").unwrap(), 0, 2).unwrap(), &pairs, "strips, BLOSUM62 0/2");
}

#[test]
fn dna_pairs_equal_the_reference() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let pairs: Vec<_> = (0..300).map(|_| rng.pair(400, 4)).collect();
    check(&Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap(), &pairs, "DNA 2/-3 5/2");
    check(&Scoring::new(Matrix::dna(1, -1), 1, 1).unwrap(), &pairs[..120], "DNA 1/-1 1/1");
}

#[test]
fn scores_past_16_bits_equal_the_reference() {
    // Scores and gaps so large that pairs of a few hundred residues leave 16 bits either way
    // (and the lanes' bound on their lengths falls among them): matches up to 120 x 300,
    // gaps down to -(400 + 100 k).
    let mut rng = Rng(0xdeadbeefcafef00d);
    let pairs: Vec<_> = (0..200).map(|_| rng.pair(700, 4)).collect();
    check(&Scoring::new(Matrix::dna(120, -120), 400, 100).unwrap(), &pairs, "DNA 120/-120 400/100");
    // A pair the forward pass holds but whose reverse pass passes 16 bits (with the query
    // start free): the query's 258 A's score 127 each, 32,766, first in the reverse pass, but
    // only after the target's 200 leading C's cost their gap, 32,566, in the forward pass.
    let (q, mut t) = (vec![0u8; 258], vec![1u8; 200]);
    t.extend(vec![0u8; 258]);
    check(&Scoring::new(Matrix::dna(127, -127), 0, 1).unwrap(), &[(q, t)], "reverse pass past 16 bits");
    // Long unrelated DNA pairs: a global score far below -32,768 (past the lanes' bound), and
    // one pair the lanes hold.
    let long = vec![(rng.seq(3_000, 4), rng.seq(10_000, 4)), (rng.seq(2_000, 4), rng.seq(3_000, 4))];
    let sc = Scoring::new(Matrix::dna(2, -3), 10, 5).unwrap();
    let slices: Vec<(&[u8], &[u8])> = long.iter().map(|(q, t)| (q.as_slice(), t.as_slice())).collect();
    let want: Vec<_> = slices.iter().map(|(q, t)| align_pair_mode(q, t, &sc, AlignMode::Global).unwrap()).collect();
    assert!(want[0].score < -32_768 && want[0].recomputed, "{:?}", want[0]);
    assert!(!want[1].recomputed, "{:?}", want[1]);
    for isa in isas() {
        let got = SimdModeEngine::with_isa(sc.clone(), AlignMode::Global, 2, isa)
            .unwrap()
            .align_slices(&slices, Level::Coordinates)
            .unwrap();
        assert_eq!(got, want, "long global pairs on {}", isa.name());
    }
}
