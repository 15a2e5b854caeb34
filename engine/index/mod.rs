//! Building and refreshing the index: scan → diff against the live generation → chunk changed
//! documents → embed new chunk texts (cache first) while tantivy indexes them → write vectors and
//! graph → switch generations. Re-running on unchanged input does no work beyond the scan.

pub mod bm25;
pub(crate) mod reader;
pub mod store;
pub mod vector;

use crate::chunk::{chunk_document, Chunk};
use crate::config::Settings;
use crate::embed::Embedder;
use crate::error::{Error, IoContext, Result};
use crate::ingest::{self, Document, Source};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;
use store::{DocEntry, EmbedCache, Meta, WriterLock};
use tantivy::{doc, Index, IndexWriter, TantivyDocument, Term};

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
}

/// The text the model embeds for a chunk: its title (heading path, symbol path, record title),
/// then its body.
pub fn embed_text(chunk: &Chunk) -> String {
    if chunk.title.is_empty() || chunk.text.starts_with(&chunk.title) {
        chunk.text.clone()
    } else {
        format!("{}\n{}", chunk.title, chunk.text)
    }
}

struct NewChunk {
    vid: u64,
    doc: usize,
    chunk: Chunk,
    key: [u8; 16],
}

/// Indexes `source` into `index_dir`, incrementally unless `options.rebuild`.
pub fn build(
    index_dir: &Path,
    source: &Source,
    settings: &Settings,
    embedder: &dyn Embedder,
    options: &BuildOptions,
) -> Result<IndexReport> {
    let started = Instant::now();
    check_paths(index_dir, source)?;
    std::fs::create_dir_all(index_dir).ctx(|| format!("creating index directory {}", index_dir.display()))?;
    let _lock = WriterLock::acquire(index_dir)?;
    let live = match store::current_generation(index_dir) {
        // A rebuild is what a damaged index needs: it starts from nothing anyway.
        Err(Error::IndexCorrupt { .. }) if options.rebuild => None,
        other => other?,
    };
    let previous: Option<(PathBuf, Meta)> = match (&live, options.rebuild) {
        (Some(dir), false) => {
            let meta = store::read_meta(dir)?;
            meta.check_compatible(index_dir, Some(embedder.id()))?;
            // Found damaged now rather than half-way through linking its segments.
            bm25::open_reader(dir)?;
            if meta.dimensions != embedder.dimensions() {
                return Err(Error::IndexIncompatible {
                    path: index_dir.to_path_buf(),
                    found: format!("{} dimensions", meta.dimensions),
                    expected: format!("{} dimensions", embedder.dimensions()),
                });
            }
            Some((dir.clone(), meta))
        }
        _ => None,
    };
    // Unfinished generations of killed runs go first; they were never live.
    let keep: Vec<&Path> = live.iter().map(PathBuf::as_path).collect();
    store::remove_generations_except(index_dir, &keep)?;

    let mut report = IndexReport::default();
    let t = Instant::now();
    let scan = ingest::scan(source, &settings.index, Some(index_dir))?;
    report.files_scanned = scan.files_scanned;
    report.files_skipped = scan.skipped;
    report.warnings = scan.warnings;
    report.seconds.walk = t.elapsed().as_secs_f64();

    let (previous, old_meta) = match previous {
        Some((dir, meta)) => (Some(dir), meta),
        None => (None, Meta::new(embedder.id(), embedder.dimensions())),
    };
    let seen: HashSet<&str> = scan.documents.iter().map(|d| d.id.as_str()).collect();
    let hashes: Vec<String> = scan.documents.par_iter().map(Document::hash).collect();
    let changed: Vec<usize> = (0..scan.documents.len())
        .filter(|&i| old_meta.docs.get(&scan.documents[i].id).is_none_or(|e| e.hash != hashes[i]))
        .collect();
    let removed: Vec<String> = old_meta.docs.keys().filter(|id| !seen.contains(id.as_str())).cloned().collect();
    report.files_changed = changed.len();
    report.files_removed = removed.len();
    if previous.is_some() && changed.is_empty() && removed.is_empty() {
        report.seconds.total = started.elapsed().as_secs_f64();
        return Ok(report);
    }

    // Chunk what changed.
    let t = Instant::now();
    let count = |s: &str| embedder.count_tokens(s);
    let chunked: Vec<Vec<Chunk>> =
        changed.par_iter().map(|&i| chunk_document(&scan.documents[i], &settings.chunk, &count)).collect();
    let mut meta = old_meta;
    let mut dropped: HashSet<u64> = HashSet::new();
    for id in changed.iter().map(|&i| &scan.documents[i].id).chain(removed.iter()) {
        if let Some(e) = meta.docs.remove(id) {
            report.chunks_removed += e.vids.len();
            dropped.extend(e.vids);
        }
    }
    let mut new_chunks = Vec::new();
    for (&i, chunks) in changed.iter().zip(chunked) {
        let d = &scan.documents[i];
        let mut vids = Vec::with_capacity(chunks.len());
        for chunk in chunks {
            let vid = meta.next_vid;
            meta.next_vid += 1;
            vids.push(vid);
            let key = store::text_key(&embed_text(&chunk));
            new_chunks.push(NewChunk { vid, doc: i, chunk, key });
        }
        meta.docs.insert(
            d.id.clone(),
            DocEntry { hash: hashes[i].clone(), path: d.path.clone(), kind: d.kind, lang: d.lang, vids },
        );
    }
    report.chunks_added = new_chunks.len();
    report.seconds.chunk = t.elapsed().as_secs_f64();

    let generation = store::next_generation(index_dir)?;
    let gen_dir = index_dir.join(store::gen_name(generation));
    std::fs::create_dir_all(&gen_dir).ctx(|| format!("creating {}", gen_dir.display()))?;

    // Embedding (the long pole) runs while tantivy indexes the same chunks on another thread.
    let changed_ids: Vec<&str> =
        changed.iter().map(|&i| scan.documents[i].id.as_str()).chain(removed.iter().map(String::as_str)).collect();
    let mut cache = EmbedCache::open(index_dir, embedder.id(), embedder.dimensions())?;
    let (bm25_result, embed_result) = std::thread::scope(|s| {
        let bm25 = s.spawn(|| {
            let t = Instant::now();
            write_tantivy(previous.as_deref(), &gen_dir, &changed_ids, &new_chunks, &scan.documents)
                .map(|()| t.elapsed().as_secs_f64())
        });
        let t = Instant::now();
        let embedded = embed_missing(&new_chunks, &mut cache, embedder, options);
        let embed_secs = t.elapsed().as_secs_f64();
        (bm25.join().expect("tantivy thread"), embedded.map(|n| (n, embed_secs)))
    });
    report.seconds.bm25 = bm25_result?;
    let (embedded, embed_secs) = embed_result?;
    report.chunks_embedded = embedded;
    report.chunks_cached = new_chunks.len() - embedded;
    report.seconds.embed = embed_secs;

    // Vectors: the previous rows minus dropped ones, plus the new ones.
    let t = Instant::now();
    let dim = embedder.dimensions();
    let (mut vids, mut data) = match &previous {
        Some(dir) => {
            let old = vector::VectorStore::open(dir, false, &settings.vector)?;
            let mut vids = Vec::with_capacity(old.len());
            let mut data = Vec::with_capacity(old.data.len());
            for (i, v) in old.vids.iter().enumerate() {
                if !dropped.contains(v) {
                    vids.push(*v);
                    data.extend_from_slice(old.row(i));
                }
            }
            (vids, data)
        }
        None => (Vec::new(), Vec::new()),
    };
    for c in &new_chunks {
        vids.push(c.vid);
        data.extend_from_slice(cache.get(&c.key).expect("embedded above"));
    }
    meta.graph = vector::VectorStore::write(&gen_dir, dim, &vids, &data, &settings.vector)?;
    report.seconds.vector = t.elapsed().as_secs_f64();

    meta.generation = generation;
    meta.chunks = vids.len();
    meta.source = Some(source.clone());
    meta.updated_unix =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    meta.changed = changed.iter().map(|&i| scan.documents[i].id.clone()).collect();
    let meta_json = serde_json::to_vec(&meta).map_err(|e| Error::io("serialising meta", e.into()))?;
    store::write_synced(&gen_dir.join(store::META), &meta_json)?;
    store::sync_dir(&gen_dir)?;
    store::switch_current(index_dir, &gen_dir)?;
    let mut keep = vec![gen_dir.as_path()];
    if let Some(l) = &live {
        keep.push(l.as_path());
    }
    store::remove_generations_except(index_dir, &keep)?;
    report.seconds.total = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Usage errors before anything is created: an index path or a source directory that is a file.
fn check_paths(index_dir: &Path, source: &Source) -> Result<()> {
    if index_dir.exists() && !index_dir.is_dir() {
        return Err(store::not_a_directory(index_dir));
    }
    match source {
        Source::Dir(root) if !root.is_dir() => {
            Err(Error::InvalidInput(format!("{} is not a directory to index", root.display())))
        }
        _ => Ok(()),
    }
}

/// Embeds every new chunk text the cache does not have; returns how many were embedded.
fn embed_missing(
    chunks: &[NewChunk],
    cache: &mut EmbedCache,
    embedder: &dyn Embedder,
    options: &BuildOptions,
) -> Result<usize> {
    let mut todo: Vec<(usize, [u8; 16])> = Vec::new();
    let mut queued = HashSet::new();
    for (i, c) in chunks.iter().enumerate() {
        if cache.get(&c.key).is_none() && queued.insert(c.key) {
            todo.push((i, c.key));
        }
    }
    // Globally sorted by length so each model batch pads to similar lengths.
    todo.sort_by_key(|(i, _)| std::cmp::Reverse(chunks[*i].chunk.text.len() + chunks[*i].chunk.title.len()));
    // Batches large enough to keep the model busy, small enough that a killed run loses little.
    const STEP: usize = 64;
    let mut done = 0;
    for batch in todo.chunks(STEP) {
        let texts: Vec<String> = batch.iter().map(|(i, _)| embed_text(&chunks[*i].chunk)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = embedder.embed(&refs)?;
        cache.insert_many(batch.iter().map(|(_, k)| *k).zip(vectors).collect())?;
        done += batch.len();
        if let Some(p) = options.progress {
            p(done, todo.len());
        }
    }
    Ok(todo.len())
}

/// Writes the new generation's tantivy index: the previous one's segments (hard-linked), minus
/// changed and removed documents, plus the new chunks; one atomic commit.
fn write_tantivy(
    previous: Option<&Path>,
    gen_dir: &Path,
    changed: &[&str],
    chunks: &[NewChunk],
    docs: &[Document],
) -> Result<()> {
    let dir = gen_dir.join(store::TANTIVY_DIR);
    let (schema, f) = bm25::schema();
    let index = match previous {
        Some(prev) => {
            store::link_tantivy(&prev.join(store::TANTIVY_DIR), &dir)?;
            Index::open_in_dir(&dir)?
        }
        None => {
            std::fs::create_dir_all(&dir).ctx(|| format!("creating {}", dir.display()))?;
            Index::create_in_dir(&dir, schema)?
        }
    };
    bm25::register(&index);
    let mut writer: IndexWriter = index.writer_with_num_threads(1, 64 * 1024 * 1024)?;
    for id in changed {
        writer.delete_term(Term::from_field_text(f.doc, id));
    }
    for c in chunks {
        let d = &docs[c.doc];
        let mut doc: TantivyDocument = doc!(
            f.vid => c.vid,
            f.doc => d.id.as_str(),
            f.path => d.path.as_str(),
            f.title => c.chunk.title.as_str(),
            f.body => c.chunk.text.as_str(),
            f.symbols => c.chunk.symbols.join(" "),
            f.kind => d.kind.as_str(),
            f.start_line => c.chunk.start_line as u64,
            f.end_line => c.chunk.end_line as u64,
        );
        for s in &c.chunk.symbols {
            doc.add_text(f.symbol_raw, s.to_lowercase());
        }
        for t in &c.chunk.tags {
            doc.add_text(f.tags, t);
        }
        if let Some(cat) = &c.chunk.category {
            doc.add_text(f.category, cat);
        }
        if let Some(lang) = d.lang {
            doc.add_text(f.lang, lang.as_str());
        }
        writer.add_document(doc)?;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    for entry in std::fs::read_dir(&dir).ctx(|| format!("listing {}", dir.display()))? {
        let p = entry.ctx(|| format!("listing {}", dir.display()))?.path();
        if p.is_file() {
            std::fs::File::open(&p).and_then(|f| f.sync_all()).ctx(|| format!("syncing {}", p.display()))?;
        }
    }
    store::sync_dir(&dir)
}

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
    /// Chunks (and vectors) indexed.
    pub chunks: usize,
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
        graph: meta.graph,
        updated_unix: meta.updated_unix,
        bytes_on_disk: dir_size(&gen) + dir_size(&index_dir.join("cache")),
        by_kind,
        by_lang,
    })
}
