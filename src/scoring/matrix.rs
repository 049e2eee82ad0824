//! Substitution matrices: the standard NCBI integer matrices, embedded as their text files,
//! and DNA match/mismatch, all in one square layout indexed by residue code.

use super::alphabet::{Alphabet, DNA_OTHER};
use crate::error::{Error, Result};

const NCBI_MATRICES: &[(&str, &str)] = &[
    ("BLOSUM45", include_str!("matrices/BLOSUM45.txt")),
    ("BLOSUM50", include_str!("matrices/BLOSUM50.txt")),
    ("BLOSUM62", include_str!("matrices/BLOSUM62.txt")),
    ("BLOSUM80", include_str!("matrices/BLOSUM80.txt")),
    ("BLOSUM90", include_str!("matrices/BLOSUM90.txt")),
    ("PAM30", include_str!("matrices/PAM30.txt")),
    ("PAM70", include_str!("matrices/PAM70.txt")),
    ("PAM250", include_str!("matrices/PAM250.txt")),
];

/// Names accepted by `--matrix`, in the order `--help` lists them.
pub fn protein_matrix_names() -> impl Iterator<Item = &'static str> {
    NCBI_MATRICES.iter().map(|(n, _)| *n)
}

/// A square substitution matrix over an alphabet's codes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    pub name: String,
    pub alphabet: Alphabet,
    /// Row-major, `size * size`, indexed `[a * size + b]` by residue code.
    pub scores: Vec<i32>,
}

impl Matrix {
    /// One of the NCBI protein matrices, by case-insensitive name.
    pub fn protein(name: &str) -> Result<Matrix> {
        let upper = name.to_ascii_uppercase();
        let (canon, text) = NCBI_MATRICES.iter().find(|(n, _)| *n == upper).ok_or_else(|| {
            let known: Vec<&str> = protein_matrix_names().collect();
            Error::usage(format!("unknown matrix '{}' (known: {})", name, known.join(", ")))
        })?;
        parse_ncbi(canon, text)
    }

    /// DNA scoring: `matched` for identical A/C/G/T, `mismatched` otherwise, including
    /// every pair involving an ambiguity code.
    pub fn dna(matched: i32, mismatched: i32) -> Matrix {
        let size = Alphabet::Dna.size();
        let mut scores = vec![mismatched; size * size];
        for a in 0..DNA_OTHER as usize {
            scores[a * size + a] = matched;
        }
        Matrix { name: format!("DNA match {} mismatch {}", matched, mismatched), alphabet: Alphabet::Dna, scores }
    }

    pub fn size(&self) -> usize {
        self.alphabet.size()
    }

    #[inline]
    pub fn score(&self, a: u8, b: u8) -> i32 {
        self.scores[a as usize * self.size() + b as usize]
    }

    pub fn max_score(&self) -> i32 {
        self.scores.iter().copied().max().unwrap_or(0)
    }

    pub fn min_score(&self) -> i32 {
        self.scores.iter().copied().min().unwrap_or(0)
    }
}

fn parse_ncbi(name: &str, text: &str) -> Result<Matrix> {
    let bad = |what: &str| Error::Internal(format!("embedded matrix {}: {}", name, what));
    let alphabet = Alphabet::Protein;
    let size = alphabet.size();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
    let header: Vec<u8> =
        lines.next().ok_or_else(|| bad("empty"))?.split_whitespace().map(|t| t.as_bytes()[0]).collect();
    let code = |letter: u8| -> Result<usize> {
        let c = alphabet.encode(&[letter]).map_err(|_| bad("bad letter"))?[0] as usize;
        if alphabet.letter(c as u8) != letter {
            return Err(bad("letter outside the alphabet"));
        }
        Ok(c)
    };
    let mut scores = vec![i32::MIN; size * size];
    for line in lines {
        let mut fields = line.split_whitespace();
        let row = code(fields.next().ok_or_else(|| bad("empty row"))?.as_bytes()[0])?;
        for (col, field) in header.iter().zip(fields) {
            let v: i32 = field.parse().map_err(|_| bad("bad number"))?;
            scores[row * size + code(*col)?] = v;
        }
    }
    if scores.contains(&i32::MIN) {
        return Err(bad("missing entries"));
    }
    Ok(Matrix { name: name.to_string(), alphabet, scores })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_embedded_matrices_parse_and_are_symmetric() {
        for name in protein_matrix_names() {
            let m = Matrix::protein(name).unwrap();
            for a in 0..24u8 {
                for b in 0..24u8 {
                    assert_eq!(m.score(a, b), m.score(b, a), "{} {} {}", name, a, b);
                }
            }
        }
    }

    #[test]
    fn blosum62_spot_values_match_ncbi() {
        let m = Matrix::protein("blosum62").unwrap();
        let enc = |s: &[u8]| Alphabet::Protein.encode(s).unwrap();
        let (w, c, a, x, star) = (enc(b"W")[0], enc(b"C")[0], enc(b"A")[0], enc(b"X")[0], enc(b"*")[0]);
        assert_eq!(m.score(w, w), 11);
        assert_eq!(m.score(c, c), 9);
        assert_eq!(m.score(a, a), 4);
        assert_eq!(m.score(x, x), -1);
        assert_eq!(m.score(a, star), -4);
        assert_eq!(m.score(star, star), 1);
    }

    #[test]
    fn unknown_matrix_is_a_usage_error() {
        let e = Matrix::protein("BLOSUM99").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("unknown matrix 'BLOSUM99'"));
    }
}
