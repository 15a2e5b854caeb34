//! A deterministic fake embedder for unit tests of the other stages (never a stand-in for the
//! real model's own tests).

use super::{normalize, Embedder};
use crate::error::Result;

/// Deterministic fake: hashes lowercase word tokens (and their 3-grams) into signed buckets.
/// Similar wording gives similar vectors, which is enough to test fusion and storage.
pub struct HashEmbedder {
    dimensions: usize,
}

impl HashEmbedder {
    /// A fake embedder of `dimensions`-float, L2-normalised vectors.
    pub fn new(dimensions: usize) -> HashEmbedder {
        HashEmbedder { dimensions }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

impl Embedder for HashEmbedder {
    fn id(&self) -> &str {
        "hash-fake"
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dimensions];
                for word in t.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                    let w = word.to_lowercase();
                    let h = fnv1a(w.as_bytes());
                    v[(h % self.dimensions as u64) as usize] += if h >> 63 == 0 { 1.0 } else { -1.0 };
                    let chars: Vec<char> = w.chars().collect();
                    for g in chars.windows(3) {
                        let h = fnv1a(g.iter().collect::<String>().as_bytes());
                        v[(h % self.dimensions as u64) as usize] += if h >> 63 == 0 { 0.3 } else { -0.3 };
                    }
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
}
