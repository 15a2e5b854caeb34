//! `engine export`: every chunk of the live generation as one JSON line, with its vector, for
//! loading into a distributed engine (Qdrant, OpenSearch; see docs/scale-out.md). The schema is
//! [`ExportedChunk`]; ids and hashes depend only on content, so two exports of the same files —
//! on two machines, or before and after a rebuild — agree.

use crate::error::{Error, IoContext, Result};
use crate::index::reader::ChunkReader;
use crate::index::store;
use crate::index::vector::VectorStore;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// One exported chunk (one JSON line).
#[derive(Debug, Serialize)]
pub struct ExportedChunk {
    /// Stable id: the document id, `#`, and the first 16 hex digits of `content_hash`.
    pub id: String,
    /// Document id (the path, or the BEIR `_id`).
    pub document: String,
    /// Display path.
    pub path: String,
    /// First and last line of the chunk in its document (1-based, inclusive).
    pub start_line: usize,
    /// Last line of the chunk, inclusive.
    pub end_line: usize,
    /// Heading path, symbol path or record title.
    pub title: String,
    /// Document kind: `markdown`, `code`, `memory` or `text`.
    pub kind: String,
    /// Language, for code.
    pub lang: Option<String>,
    /// Symbols the chunk defines.
    pub symbols: Vec<String>,
    /// Tags (memory records).
    pub tags: Vec<String>,
    /// sha256 (hex) of the text the model embedded: title and body.
    pub content_hash: String,
    /// The embedding model the vector comes from.
    pub model: String,
    /// The chunk's vector (L2-normalised: cosine = dot product); `None` while still embedding.
    pub vector: Option<Vec<f32>>,
    /// The chunk's body.
    pub text: String,
    /// What a BM25 engine should index for it: title, path, symbols, tags and body, one per line
    /// (the fields this engine searches, without its per-field boosts).
    pub bm25_text: String,
    /// A memory record's category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// When a memory record was created, in seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<i64>,
    /// A memory record that a newer one supersedes (search ranks it lower).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub superseded: bool,
}

/// Every chunk of the index at `index_dir`, in document then line order, each with its key in
/// the live generation (what search's legs return); and the generation's metadata.
pub(crate) fn chunks(index_dir: &Path) -> Result<(store::Meta, Vec<(u64, ExportedChunk)>)> {
    let generation =
        store::current_generation(index_dir)?.ok_or_else(|| Error::IndexMissing { path: index_dir.to_path_buf() })?;
    let meta = store::read_meta(&generation)?;
    let reader = ChunkReader::open(&generation)?;
    let vectors = VectorStore::open(&generation, false, &crate::config::VectorConfig::default())?;
    let rows: HashMap<u64, usize> = vectors.vids.iter().enumerate().map(|(row, vid)| (*vid, row)).collect();
    let snapshot = reader.snapshot();
    let mut chunks: Vec<(u64, crate::hit::Hit)> = snapshot.all().collect::<Result<_>>()?;
    // Document order, then line order: the same files export in the same order.
    chunks.sort_by(|a, b| (&a.1.doc, a.1.start_line, a.1.end_line).cmp(&(&b.1.doc, b.1.start_line, b.1.end_line)));
    let out = chunks
        .into_iter()
        .map(|(key, hit)| {
            let vector = rows.get(&key).map(|r| vectors.row(*r).to_vec());
            (key, exported(hit, vector, &meta))
        })
        .collect();
    Ok((meta, out))
}

/// The id [`ExportedChunk::id`] gives a chunk, from its document id and its embedded text.
pub(crate) fn chunk_id(doc: &str, title: &str, text: &str) -> String {
    id_of(doc, &content_hash(title, text))
}

/// [`ExportedChunk::content_hash`]: the SHA-256 of the text the model embedded.
fn content_hash(title: &str, text: &str) -> String {
    hex::encode(Sha256::digest(crate::index::titled_text(title, text).as_bytes()))
}

fn id_of(doc: &str, content_hash: &str) -> String {
    format!("{doc}#{}", &content_hash[..16])
}

/// The document id an export id ([`chunk_id`]) was made from.
pub(crate) fn document_of(id: &str) -> Option<&str> {
    id.rsplit_once('#').map(|(doc, _)| doc)
}

fn exported(hit: crate::hit::Hit, vector: Option<Vec<f32>>, meta: &store::Meta) -> ExportedChunk {
    let content_hash = content_hash(&hit.title, &hit.text);
    let created = meta.memory_created.iter().find(|(doc, title, _, _)| *doc == hit.doc && *title == hit.title);
    let superseded = meta.superseded.iter().any(|(doc, title)| *doc == hit.doc && *title == hit.title);
    // A record's category is in the chunk itself; the creation times list it only for records
    // with a time.
    let category = hit.category.clone().or_else(|| created.map(|(_, _, category, _)| category.clone()));
    ExportedChunk {
        id: id_of(&hit.doc, &content_hash),
        bm25_text: [hit.title.as_str(), hit.path.as_str(), &hit.symbols.join(" "), &hit.tags.join(" "), &hit.text]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("\n"),
        document: hit.doc,
        path: hit.path,
        start_line: hit.start_line,
        end_line: hit.end_line,
        title: hit.title,
        kind: hit.kind,
        lang: hit.lang,
        symbols: hit.symbols,
        tags: hit.tags,
        content_hash,
        model: meta.model_id.clone(),
        vector,
        text: hit.text,
        category,
        created: created.map(|(_, _, _, at)| *at),
        superseded,
    }
}

/// Writes every chunk of the index at `index_dir` as JSON lines; returns how many.
pub fn export(index_dir: &Path, out: &mut dyn Write) -> Result<usize> {
    let (_, chunks) = chunks(index_dir)?;
    for (_, line) in &chunks {
        let json = serde_json::to_string(line).map_err(|e| Error::io("serialising a chunk", e.into()))?;
        writeln!(out, "{json}").ctx(|| "writing the export".to_string())?;
    }
    Ok(chunks.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{Embedder, HashEmbedder};

    #[test]
    fn every_chunk_is_exported_with_its_vector_and_ids_survive_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.md"),
            "# Sessions\n\nSessions live in Redis.\n\n# Uploads\n\nUploads go to S3.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("b.py"), "def resize(image):\n    return image\n").unwrap();
        let index = dir.path().join(".engine");
        let embedder = HashEmbedder::new(16);
        let source = crate::ingest::Source::Dir(dir.path().to_path_buf());
        let settings = crate::Settings::default();
        crate::index::build(&index, &source, &settings, &embedder, &Default::default()).unwrap();
        let mut first = Vec::new();
        let n = export(&index, &mut first).unwrap();
        let lines: Vec<serde_json::Value> =
            String::from_utf8(first.clone()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(
            (n, lines.len()),
            (store::read_meta(&store::current_generation(&index).unwrap().unwrap()).unwrap().chunks, n)
        );
        let resize = lines.iter().find(|l| l["path"] == "b.py").unwrap();
        assert_eq!(resize["symbols"], serde_json::json!(["resize"]));
        assert_eq!(resize["model"], embedder.id());
        let vector: Vec<f32> = serde_json::from_value(resize["vector"].clone()).unwrap();
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(vector.len() == 16 && (norm - 1.0).abs() < 1e-4, "{vector:?}");
        assert!(resize["bm25_text"].as_str().unwrap().contains("resize"));
        assert!(lines.iter().all(|l| l["id"].as_str().unwrap().starts_with(l["document"].as_str().unwrap())));
        // A rebuild renumbers vectors; the export is the same, line for line.
        let rebuild = crate::index::BuildOptions { rebuild: true, ..Default::default() };
        crate::index::build(&index, &source, &settings, &embedder, &rebuild).unwrap();
        let mut second = Vec::new();
        export(&index, &mut second).unwrap();
        assert_eq!(String::from_utf8(first).unwrap(), String::from_utf8(second).unwrap());
    }
}
