//! Building and refreshing the index: scan → diff against the live generation → chunk changed
//! documents → embed new chunk texts (cache first) while tantivy indexes them → write vectors and
//! graph → switch generations. Re-running on unchanged input does no work beyond the scan.

pub mod bm25;
mod build;
pub mod export;
mod progress;
pub(crate) mod reader;
mod status;
pub mod store;
pub mod vector;

pub use build::build;
pub use progress::{embedding, Embedding};
pub use status::status;

use crate::chunk::Chunk;
use serde::Serialize;

/// Seconds spent per phase.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Seconds {
    /// Scanning the source: walking the tree and reading the files.
    pub walk: f64,
    /// Chunking the changed documents.
    pub chunk: f64,
    /// Embedding the chunk texts the cache lacked (while tantivy indexes).
    pub embed: f64,
    /// Writing the tantivy index, on its own thread alongside embedding.
    pub bm25: f64,
    /// Writing the vectors and, when built, the HNSW graph.
    pub vector: f64,
    /// The whole run.
    pub total: f64,
    /// From the start until the new text was searchable (BM25, and the vectors there were).
    pub searchable: f64,
}

/// What an indexing run did (`engine index --json`).
#[derive(Debug, Default, Clone, Serialize)]
pub struct IndexReport {
    /// Documents the scan saw: files walked, or a BEIR collection's records.
    pub files_scanned: usize,
    /// Documents new or changed since the live generation, re-chunked.
    pub files_changed: usize,
    /// Documents of the live generation no longer in the source.
    pub files_removed: usize,
    /// Files not read again: their stat was the one they had when last read, and the live
    /// generation indexed what they held then.
    pub files_unread: usize,
    /// Files the scan did not index (unsupported type, binary, too large, invalid UTF-8, unreadable).
    pub files_skipped: usize,
    /// Chunks of the changed documents.
    pub chunks_added: usize,
    /// Chunks dropped with changed or removed documents.
    pub chunks_removed: usize,
    /// Distinct chunk texts the model embedded (not in the embedding cache).
    pub chunks_embedded: usize,
    /// New chunks whose vector came from the cache (or from an identical text in this run).
    pub chunks_cached: usize,
    /// Wall time per phase.
    pub seconds: Seconds,
    /// One line per file the scan skipped for a reason the user should know about.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Options of one run.
#[derive(Default)]
pub struct BuildOptions<'a> {
    /// Ignore the live generation (and its compatibility) and build from scratch.
    pub rebuild: bool,
    /// Called with (chunks embedded so far, chunks to embed).
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
    /// Release the embedder's memory ([`Embedder::release`](crate::Embedder::release)) once every chunk is embedded, so the
    /// HNSW build does not stack on top of it: the peak of a first index. For a one-shot run; a
    /// server that embeds queries next would load the model again.
    pub release_model: bool,
}

/// The text the model embeds for a chunk: its title (heading path, symbol path, record title),
/// then its body.
pub fn embed_text(chunk: &Chunk) -> String {
    titled_text(&chunk.title, &chunk.text)
}

/// [`embed_text`] of a chunk's title and body, wherever they come from (a stored hit too).
pub(crate) fn titled_text(title: &str, text: &str) -> String {
    if title.is_empty() || text.starts_with(title) {
        text.to_string()
    } else {
        format!("{title}\n{text}")
    }
}
