//! `engine status`: what an index holds, read from its live generation.

use super::{bm25, store};
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::Path;

/// Documents and chunks per kind and language, size on disk, model and last update.
#[derive(Debug, Serialize)]
pub struct Status {
    /// The index directory, as given.
    pub index: String,
    /// Number of the live generation.
    pub generation: u64,
    /// Id of the embedding model the vectors were made with.
    pub model: String,
    /// Floats per vector.
    pub dimensions: usize,
    /// Documents indexed.
    pub documents: usize,
    /// Chunks indexed (all searchable by BM25).
    pub chunks: usize,
    /// Chunks with a vector: fewer than `chunks` while an indexing run is still embedding.
    pub vectors: usize,
    /// While an indexing run is embedding: how far it has got (its vectors reach `vectors` when
    /// it ends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<super::Embedding>,
    /// Whether the generation has an HNSW graph (else vector search is exact).
    pub graph: bool,
    /// When the generation was written, in seconds since the Unix epoch.
    pub updated_unix: u64,
    /// Size of the live generation plus the embedding cache, in bytes.
    pub bytes_on_disk: u64,
    /// Documents and chunks per document kind.
    pub by_kind: std::collections::BTreeMap<String, KindCount>,
    /// Documents and chunks per language, for code.
    pub by_lang: std::collections::BTreeMap<String, KindCount>,
}

/// How many documents, and chunks of them, one kind or language has.
#[derive(Debug, Default, Serialize)]
pub struct KindCount {
    /// Documents of this kind or language.
    pub documents: usize,
    /// Their chunks.
    pub chunks: usize,
}

impl Status {
    /// Chunks with a vector, counting those a running indexing run has embedded but not yet
    /// published: what its progress bar shows (texts shared by several chunks count once).
    pub fn embedded(&self) -> usize {
        self.embedding.map_or(self.vectors, |e| (self.vectors + e.done).min(self.chunks))
    }
}

fn dir_size(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Reads the status of the index at `index_dir`.
pub fn status(index_dir: &Path) -> Result<Status> {
    let gen =
        store::current_generation(index_dir)?.ok_or_else(|| Error::IndexMissing { path: index_dir.to_path_buf() })?;
    // Status vouches for the index: every file is checked against what was written.
    store::verify(&gen, store::Check::Full)?;
    let meta = store::read_meta(&gen)?;
    // Status vouches for the index: damaged full-text files are reported here, not at the next search.
    bm25::open_reader(&gen)?;
    let mut by_kind: std::collections::BTreeMap<String, KindCount> = Default::default();
    let mut by_lang: std::collections::BTreeMap<String, KindCount> = Default::default();
    for e in meta.docs.values() {
        let k = by_kind.entry(e.kind.as_str().to_string()).or_default();
        k.documents += 1;
        k.chunks += e.vids.len();
        if let Some(l) = e.lang {
            let k = by_lang.entry(l.as_str().to_string()).or_default();
            k.documents += 1;
            k.chunks += e.vids.len();
        }
    }
    Ok(Status {
        index: index_dir.display().to_string(),
        generation: meta.generation,
        model: meta.model_id.clone(),
        dimensions: meta.dimensions,
        documents: meta.docs.len(),
        chunks: meta.chunks,
        vectors: meta.vectors.unwrap_or(meta.chunks),
        embedding: super::embedding(index_dir),
        graph: meta.graph,
        updated_unix: meta.updated_unix,
        bytes_on_disk: dir_size(&gen) + dir_size(&index_dir.join("cache")),
        by_kind,
        by_lang,
    })
}
