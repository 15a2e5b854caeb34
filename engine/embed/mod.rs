//! Text → vector. The [`Embedder`] trait is what the index and the search path call; the ONNX
//! implementation runs all-MiniLM-L6-v2 through fastembed's user-defined model API (mean pooling
//! over the attention mask, L2 normalisation), and [`HashEmbedder`] is a deterministic fake for
//! unit tests of other stages — never a stand-in for the real model's tests.
//!
//! Inputs are sorted by length before batching so each batch pads to similar lengths; results
//! come back in input order. Texts are cut to a character budget before tokenising: the model only
//! sees `max_length` tokens anyway, and a 100k-character input should not cost a 100k tokenisation.

mod hash;
mod onnx;
pub(crate) mod tokens;

pub use hash::HashEmbedder;
pub(crate) use onnx::trim_heap;
pub use onnx::{LazyOnnxEmbedder, OnnxEmbedder};
pub use tokens::approx_tokens;

use crate::error::{Error, Result};

/// Turns texts into vectors the vector leg can compare by dot product.
///
/// The contract every implementation keeps, which the index and the search path rely on:
/// - `embed` returns one vector per text, in the order of `texts`, each of exactly
///   [`dimensions`](Embedder::dimensions) floats and L2-normalised (a zero vector only for a text
///   with nothing to embed), so a dot product is a cosine.
/// - The same text gives the same vector whatever else is in the call (batching is invisible):
///   the embedding cache stores vectors by text and reuses them across runs.
/// - [`id`](Embedder::id) names the model and its settings that change vectors; an index built
///   with one id is refused by an embedder with another (a rebuild is asked for).
/// - Errors are [`Error::Inference`] (a failed run) or a model error at load; a failed call
///   leaves the embedder usable.
/// - It may be called from several threads at once (`Send + Sync`).
pub trait Embedder: Send + Sync {
    /// Identifies the model (stored in index metadata and embedding-cache keys).
    fn id(&self) -> &str;
    /// Vector dimension.
    fn dimensions(&self) -> usize;
    /// Embeds every text; `out[i]` belongs to `texts[i]`.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// Embeds one query.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        self.embed(&[query])?.pop().ok_or_else(|| Error::Inference("the embedder returned no vector".into()))
    }
    /// Number of model tokens in `text` (no truncation); used for chunk and context budgets.
    fn count_tokens(&self, text: &str) -> usize {
        approx_tokens(text)
    }
    /// Frees the memory the model holds, if it can be loaded again on the next call (ONNX
    /// Runtime's session and arena). Indexing asks for it before the HNSW build.
    fn release(&self) {}
}

/// L2-normalises in place (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Dot product; equals cosine similarity for normalised vectors.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent sums let the compiler vectorise (a single running sum cannot be
    // reordered, so it stays scalar); this is the inner loop of exact vector search.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_embedder_is_deterministic_and_normalised() {
        let e = HashEmbedder::new(64);
        let a = e.embed(&["session store redis", ""]).unwrap();
        let b = e.embed(&["session store redis"]).unwrap();
        assert_eq!(a[0], b[0]);
        assert!((dot(&a[0], &a[0]) - 1.0).abs() < 1e-5);
        assert!(a[1].iter().all(|x| *x == 0.0));
    }

    #[test]
    fn approx_tokens_counts_words_and_punctuation() {
        assert_eq!(approx_tokens(""), 0);
        assert_eq!(approx_tokens("a man eats"), 3);
        assert_eq!(approx_tokens("fn foo()"), 4);
    }
}
