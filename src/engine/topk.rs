//! Top-k selection with swarrow's ranking: score descending, then input position ascending.

use super::Hit;
use crate::database::Database;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A hit ordered so that the *worst* ranked hit is the heap's maximum.
#[derive(PartialEq, Eq)]
struct Worst {
    score: i32,
    original: u32,
    hit: Hit,
}

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.cmp(&self.score).then(self.original.cmp(&other.original))
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Keeps the best `k` hits seen; hits with score 0 are never kept (no alignment).
pub struct TopK<'a> {
    k: usize,
    db: &'a Database,
    heap: BinaryHeap<Worst>,
}

impl<'a> TopK<'a> {
    /// Keeps `k` hits at most; memory is sized by the database, never by `k` alone.
    pub fn new(k: usize, db: &'a Database) -> Self {
        let k = k.min(db.len());
        TopK { k, db, heap: BinaryHeap::with_capacity(k) }
    }

    pub fn push(&mut self, hit: Hit) {
        if hit.score <= 0 || self.k == 0 {
            return;
        }
        let w = Worst { score: hit.score, original: self.db.original[hit.target as usize], hit };
        if self.heap.len() < self.k {
            self.heap.push(w);
        } else if let Some(mut top) = self.heap.peek_mut() {
            if w < *top {
                *top = w;
            }
        }
    }

    pub fn merge(&mut self, other: TopK<'a>) {
        for w in other.heap {
            self.push(w.hit);
        }
    }

    /// The kept hits, best first.
    pub fn into_sorted(self) -> Vec<Hit> {
        self.heap.into_sorted_vec().into_iter().map(|w| w.hit).collect()
    }
}

/// Ranks hits from several sources (threads, GPUs, database shards) into one best-first list.
pub fn merge_ranked(db: &Database, k: usize, lists: impl IntoIterator<Item = Vec<Hit>>) -> Vec<Hit> {
    let mut top = TopK::new(k, db);
    for l in lists {
        for h in l {
            top.push(h);
        }
    }
    top.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::Record;

    #[test]
    fn ranks_by_score_then_input_position() {
        // Lengths 3,1,2 -> length order is [1,2,0]: original positions differ from indices.
        let recs = vec![
            Record { id: "a".into(), seq: vec![0; 3], header: String::new() },
            Record { id: "b".into(), seq: vec![0; 1], header: String::new() },
            Record { id: "c".into(), seq: vec![0; 2], header: String::new() },
        ];
        let db = Database::from_records("t", recs);
        assert_eq!(db.original, vec![1, 2, 0]);
        let h = |target, score| Hit { target, score, recomputed: false };
        // Equal scores: target index 2 is input record 0, so it ranks first.
        let got = merge_ranked(&db, 2, vec![vec![h(0, 5), h(1, 5)], vec![h(2, 5)]]);
        assert_eq!(got.iter().map(|h| h.target).collect::<Vec<_>>(), vec![2, 0]);
        let got = merge_ranked(&db, 5, vec![vec![h(0, 1), h(1, 9), h(2, 0)]]);
        assert_eq!(got.iter().map(|h| h.score).collect::<Vec<_>>(), vec![9, 1]);
    }
}
