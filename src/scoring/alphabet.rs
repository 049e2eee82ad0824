//! Residue encoding. Sequences are stored as small integer codes so that engines index
//! substitution matrices directly; the code table is built once per alphabet.

/// The NCBI matrix order; a protein residue's code is its index here.
pub const PROTEIN_LETTERS: &[u8; 24] = b"ARNDCQEGHILKMFPSTWYVBZX*";
/// Code of `X`, which scores every letter outside the matrix alphabet (J, O, U).
pub const PROTEIN_X: u8 = 22;
/// DNA codes: A C G T (U reads as T), then a code for each IUPAC ambiguity code, from
/// [`DNA_OTHER`] on (N first), so that outputs print the letter the input had; every
/// ambiguity code mismatches everything, itself included (`Matrix::dna`,
/// `Scoring::identity_codes`). Other letters are not nucleotides: an input error, so protein
/// files under `--dna` cannot run unnoticed.
pub const DNA_LETTERS: &[u8; 15] = b"ACGTNRYSWKMBDHV";
/// The first ambiguity code's (N's): codes below it are A C G T.
pub const DNA_OTHER: u8 = 4;
/// IUPAC's nucleotide ambiguity codes.
pub const DNA_AMBIGUOUS: &[u8; 11] = b"RYSWKMBDHVN";
/// The complement of each DNA code (IUPAC's: A-T, C-G, R-Y, K-M, B-V, D-H; S, W, N their own).
const DNA_COMPLEMENT: [u8; 15] = {
    let mut c = [0u8; 15];
    let mut i = 0;
    while i < 15 {
        let comp = complement_of(DNA_LETTERS[i]);
        let mut j = 0;
        while DNA_LETTERS[j] != comp {
            j += 1;
        }
        c[i] = j as u8;
        i += 1;
    }
    c
};

/// IUPAC's complement of an uppercase nucleotide letter; other bytes stay.
const fn complement_of(b: u8) -> u8 {
    match b {
        b'A' => b'T',
        b'T' | b'U' => b'A',
        b'C' => b'G',
        b'G' => b'C',
        b'R' => b'Y',
        b'Y' => b'R',
        b'K' => b'M',
        b'M' => b'K',
        b'B' => b'V',
        b'V' => b'B',
        b'D' => b'H',
        b'H' => b'D',
        other => other,
    }
}

const INVALID: u8 = u8::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alphabet {
    Protein,
    Dna,
}

impl Alphabet {
    /// Number of distinct codes.
    pub fn size(self) -> usize {
        match self {
            Alphabet::Protein => PROTEIN_LETTERS.len(),
            Alphabet::Dna => DNA_LETTERS.len(),
        }
    }

    /// The code of the complementary nucleotide (IUPAC's complements: an ambiguity code's is
    /// an ambiguity code).
    pub fn complement(code: u8) -> u8 {
        DNA_COMPLEMENT.get(code as usize).copied().unwrap_or(code)
    }

    /// Appends the reverse complement of DNA `codes` to `out`.
    pub fn reverse_complement_into(codes: &[u8], out: &mut Vec<u8>) {
        out.extend(codes.iter().rev().map(|&c| Self::complement(c)));
    }

    /// The complement of a nucleotide letter, IUPAC ambiguity codes included (R-Y, K-M, B-V,
    /// D-H; S, W and N are their own), case kept; U complements to A; other bytes stay.
    pub fn complement_letter(b: u8) -> u8 {
        let c = complement_of(b.to_ascii_uppercase());
        if b.is_ascii_lowercase() {
            c.to_ascii_lowercase()
        } else {
            c
        }
    }

    /// The letter a code prints as.
    pub fn letter(self, code: u8) -> u8 {
        match self {
            Alphabet::Protein => PROTEIN_LETTERS[code as usize],
            Alphabet::Dna => DNA_LETTERS[code as usize],
        }
    }

    fn table(self) -> &'static [u8; 256] {
        match self {
            Alphabet::Protein => &PROTEIN_TABLE,
            Alphabet::Dna => &DNA_TABLE,
        }
    }

    /// Encodes `raw` in place of `out` (appending). Lowercase reads as uppercase; letters
    /// outside the alphabet take the alphabet's catch-all code. On a byte that is neither a
    /// letter nor `*`, returns its 0-based position in `raw`.
    pub fn encode_into(self, raw: &[u8], out: &mut Vec<u8>) -> Result<(), usize> {
        // Per 64-byte chunk: translate, then look for an invalid byte in one branch-free
        // pass (tight loops without a per-byte exit or capacity check: input parsing runs
        // at GB/s). Work stops within one chunk of an invalid byte, so callers that skip
        // such bytes and call again stay linear.
        let table = self.table();
        out.reserve(raw.len());
        for (k, chunk) in raw.chunks(64).enumerate() {
            let start = out.len();
            out.extend(chunk.iter().map(|&b| table[b as usize]));
            if out[start..].iter().fold(false, |bad, &c| bad | (c == INVALID)) {
                let i = out[start..].iter().position(|&c| c == INVALID).unwrap_or(0);
                out.truncate(start + i);
                return Err(64 * k + i);
            }
        }
        Ok(())
    }

    /// [`Self::encode_into`] writing into `out` (exactly `raw.len()` long) instead of
    /// appending: parallel encoders fill disjoint parts of one buffer.
    pub fn encode_to_slice(self, raw: &[u8], out: &mut [u8]) -> Result<(), usize> {
        let table = self.table();
        for (k, (chunk, dst)) in raw.chunks(64).zip(out.chunks_mut(64)).enumerate() {
            for (d, &b) in dst.iter_mut().zip(chunk) {
                *d = table[b as usize];
            }
            if dst.iter().fold(false, |bad, &c| bad | (c == INVALID)) {
                return Err(64 * k + dst.iter().position(|&c| c == INVALID).unwrap_or(0));
            }
        }
        Ok(())
    }

    pub fn encode(self, raw: &[u8]) -> Result<Vec<u8>, usize> {
        let mut out = Vec::with_capacity(raw.len());
        self.encode_into(raw, &mut out)?;
        Ok(out)
    }

    pub fn decode(self, codes: &[u8]) -> Vec<u8> {
        codes.iter().map(|&c| self.letter(c)).collect()
    }
}

/// Describes an invalid byte of `alphabet` for an error message: a letter that is not a
/// nucleotide is named as such under DNA scoring.
pub fn describe_residue(alphabet: Alphabet, b: u8) -> String {
    if alphabet == Alphabet::Dna && (b.is_ascii_alphabetic() || b == b'*') {
        format!(
            "'{}' is not a nucleotide (--dna reads A, C, G, T, U and the IUPAC codes {})",
            b as char,
            DNA_AMBIGUOUS.iter().map(|&c| c as char).map(String::from).collect::<Vec<_>>().join(" ")
        )
    } else {
        describe_byte(b)
    }
}

/// Describes an invalid byte for an error message.
pub fn describe_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("invalid residue '{}'", b as char)
    } else {
        format!("invalid residue byte 0x{:02x}", b)
    }
}

/// Counts how much of a protein input is made of the letters A, C, G, T and N, as BLAST
/// warns when a protein query looks like nucleotides: a DNA file given to `search` (or to
/// `align` without `--dna`) runs, with meaningless scores. Fed protein codes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NucleotideLook {
    pub residues: usize,
    pub acgtn: usize,
}

impl NucleotideLook {
    /// Residues looked at before a verdict; the first records of an input are enough.
    pub const SAMPLE: usize = 10_000;
    /// Fewer residues than this never look like nucleotides (a short peptide may be all G).
    pub const MIN_RESIDUES: usize = 30;
    /// The share of A, C, G, T, N above which an input looks like nucleotides.
    pub const SHARE: f64 = 0.9;

    /// Adds protein `codes` (up to [`Self::SAMPLE`] residues in all).
    pub fn add(&mut self, codes: &[u8]) {
        const ACGTN: [u8; 5] = [0, 4, 7, 16, 2]; // A C G T N in NCBI order
        let take = Self::SAMPLE.saturating_sub(self.residues).min(codes.len());
        self.residues += take;
        self.acgtn += codes[..take].iter().filter(|c| ACGTN.contains(c)).count();
    }

    /// Enough residues have been seen for a verdict.
    pub fn full(&self) -> bool {
        self.residues >= Self::SAMPLE
    }

    /// The share of A, C, G, T, N when it is over [`Self::SHARE`] of enough residues.
    pub fn looks_like_nucleotides(&self) -> Option<f64> {
        let share = self.acgtn as f64 / self.residues.max(1) as f64;
        (self.residues >= Self::MIN_RESIDUES && share > Self::SHARE).then_some(share)
    }

    /// The warning for `what` (a file and its role), if it looks like nucleotides.
    pub fn warning(&self, what: &str) -> Option<String> {
        self.looks_like_nucleotides().map(|share| {
            format!(
                "swarrow: warning: {what} looks like nucleotides ({:.0}% A, C, G, T, N in its first {} residues) \
                 but is read as protein; for DNA use `swarrow align --dna`",
                100.0 * share,
                self.residues
            )
        })
    }
}

const fn build_protein() -> [u8; 256] {
    let mut t = [INVALID; 256];
    let mut c = b'A';
    while c <= b'Z' {
        t[c as usize] = PROTEIN_X;
        t[(c + 32) as usize] = PROTEIN_X;
        c += 1;
    }
    let mut i = 0;
    while i < PROTEIN_LETTERS.len() {
        let l = PROTEIN_LETTERS[i];
        t[l as usize] = i as u8;
        if l.is_ascii_uppercase() {
            t[(l + 32) as usize] = i as u8;
        }
        i += 1;
    }
    t
}

const fn build_dna() -> [u8; 256] {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < DNA_LETTERS.len() {
        let l = DNA_LETTERS[i];
        t[l as usize] = i as u8;
        t[(l + 32) as usize] = i as u8;
        i += 1;
    }
    t[b'U' as usize] = 3;
    t[b'u' as usize] = 3;
    t
}

static PROTEIN_TABLE: [u8; 256] = build_protein();
static DNA_TABLE: [u8; 256] = build_dna();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protein_codes_follow_ncbi_order_and_fold_case() {
        let a = Alphabet::Protein;
        assert_eq!(a.encode(b"ARNDw*").unwrap(), vec![0, 1, 2, 3, 17, 23]);
        // J, O, U and lowercase j are outside the matrix alphabet: scored as X.
        assert_eq!(a.encode(b"JOUjx").unwrap(), vec![PROTEIN_X; 5]);
        assert_eq!(a.encode(b"AC-D"), Err(2));
        assert_eq!(a.encode(b"AC1"), Err(2));
        assert_eq!(a.encode(b"A C"), Err(1));
    }

    /// Complements: every pair of IUPAC's table both ways, and a reverse complement read
    /// back through the letters.
    #[test]
    fn complements_follow_iupac() {
        for pair in ["AT", "CG", "RY", "KM", "BV", "DH", "SS", "WW", "NN"] {
            let [a, b] = [pair.as_bytes()[0], pair.as_bytes()[1]];
            assert_eq!(Alphabet::complement_letter(a), b);
            assert_eq!(Alphabet::complement_letter(b), a);
            assert_eq!(Alphabet::complement_letter(a.to_ascii_lowercase()), b.to_ascii_lowercase());
        }
        assert_eq!(Alphabet::complement_letter(b'U'), b'A');
        let dna = Alphabet::Dna;
        let mut out = Vec::new();
        Alphabet::reverse_complement_into(&dna.encode(b"AACGTN").unwrap(), &mut out);
        assert_eq!(dna.decode(&out), b"NACGTT");
    }

    /// Each ambiguity code keeps its own code (from DNA_OTHER on) and prints back as its
    /// letter; U reads as T; complements of codes are the codes of IUPAC's complements.
    #[test]
    fn dna_maps_u_to_t_and_keeps_each_ambiguity_code() {
        let a = Alphabet::Dna;
        assert_eq!(a.encode(b"acgtuN").unwrap(), [0, 1, 2, 3, 3, 4]);
        let codes = a.encode(b"NRYSWKMBDHVnryswkmbdhv").unwrap();
        assert!(codes.iter().all(|&c| c >= DNA_OTHER && (c as usize) < a.size()));
        assert_eq!(a.decode(&codes), b"NRYSWKMBDHVNRYSWKMBDHV");
        for l in *b"ACGTNRYSWKMBDHV" {
            let c = a.encode(&[l]).unwrap()[0];
            assert_eq!(a.letter(Alphabet::complement(c)), Alphabet::complement_letter(l), "{}", l as char);
        }
        assert_eq!(a.encode(b"AC.G"), Err(2));
    }

    // IUPAC nucleotide codes are A C G T U R Y S W K M B D H V N; every other letter (and
    // `*`) is not a nucleotide.
    #[test]
    fn dna_refuses_letters_that_are_not_nucleotides() {
        for b in *b"EFIJLOPQXZefijlopqxz*" {
            assert_eq!(Alphabet::Dna.encode(&[b'A', b]), Err(1), "{}", b as char);
            assert!(describe_residue(Alphabet::Dna, b).contains("is not a nucleotide"), "{}", b as char);
        }
        assert_eq!(describe_residue(Alphabet::Dna, b'-'), "invalid residue '-'");
        assert_eq!(describe_residue(Alphabet::Protein, b'-'), "invalid residue '-'");
    }

    #[test]
    fn nucleotide_look_needs_enough_acgtn() {
        let p = Alphabet::Protein;
        let mut dna = NucleotideLook::default();
        dna.add(&p.encode(b"ACGTTGCANNACGTACGTACGTTTGACCAGTACGATCAGTCAG").unwrap());
        assert!(dna.looks_like_nucleotides().is_some_and(|s| s == 1.0));
        // A protein: BLOSUM62's example query (about 20% A, C, G, T, N).
        let mut protein = NucleotideLook::default();
        protein.add(&p.encode(b"MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQ").unwrap());
        assert_eq!(protein.looks_like_nucleotides(), None);
        // Too short to tell.
        let mut short = NucleotideLook::default();
        short.add(&p.encode(b"GAGAGAGAGA").unwrap());
        assert_eq!(short.looks_like_nucleotides(), None);
        // 91 of 100 is over 90%; 90 of 100 is not.
        for (n, want) in [(91, true), (90, false)] {
            let mut look = NucleotideLook::default();
            let seq: Vec<u8> = (0..100).map(|i| if i < n { b'G' } else { b'W' }).collect();
            look.add(&p.encode(&seq).unwrap());
            assert_eq!(look.looks_like_nucleotides().is_some(), want, "{n}");
        }
    }

    #[test]
    fn encode_into_reports_the_first_invalid_byte_and_keeps_the_codes_before_it() {
        // Invalid bytes on both sides of the 64-byte chunk boundary and in a later chunk.
        for bad in [0usize, 1, 63, 64, 65, 127, 128, 200] {
            let mut raw = vec![b'G'; 300];
            raw[bad] = b'-';
            raw[bad + 50] = b'!';
            let mut out = vec![9u8];
            assert_eq!(Alphabet::Dna.encode_into(&raw, &mut out), Err(bad));
            // What was there before, then one G code (2) per residue before the bad byte.
            assert_eq!(out.len(), 1 + bad);
            assert!(out[0] == 9 && out[1..].iter().all(|&c| c == 2));
        }
        let mut out = Vec::new();
        assert_eq!(Alphabet::Dna.encode_into(&[b'T'; 130], &mut out), Ok(()));
        assert_eq!(out, vec![3u8; 130]);
    }
}
