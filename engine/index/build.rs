//! An indexing run, phase by phase: open the live generation → scan the source → chunk what
//! changed → take cached vectors → write the text generation (tantivy) while the model embeds the
//! rest → publish the full generation. Each phase is a method of [`Run`]; [`build`] reads as them.
//!
//! Crash safety: every generation is written beside the live one and switched to by an atomic
//! rename of `CURRENT` once synced, so a kill at any moment leaves a searchable index, and the
//! next run reuses every vector already embedded (the embedding cache survives kills).

use super::store::{self, DocEntry, EmbedCache, Meta, StatCache, WriterLock};
use super::{bm25, embed_text, vector, BuildOptions, IndexReport};
use crate::chunk::{chunk_document, Chunk};
use crate::config::{Settings, VectorConfig};
use crate::embed::Embedder;
use crate::error::{Error, IoContext, Result};
use crate::ingest::{self, Document, Source};
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tantivy::{doc, Index, IndexWriter, TantivyDocument, Term};

/// A chunk of a changed document, with the vector id it gets and the key of its text in the
/// embedding cache.
pub(super) struct NewChunk {
    vid: u64,
    /// Its document's index in the scan.
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
    let run = Run { index_dir, source, settings, embedder, options, started: Instant::now() };
    check_paths(index_dir, source)?;
    std::fs::create_dir_all(index_dir).ctx(|| format!("creating index directory {}", index_dir.display()))?;
    keep_out_of_git(index_dir)?;
    let _lock = WriterLock::acquire(index_dir)?;
    let mut damaged = None;
    let live = run.live_generation(&mut damaged)?;
    let mut report = IndexReport::default();
    if let Some(why) = &damaged {
        report.warnings.push(format!("the index was damaged ({why}); rebuilt it"));
    }
    let mut scanned = run.scan(&live, &mut report)?;
    if live.previous.is_some() && scanned.changed.is_empty() && scanned.removed.is_empty() {
        report.seconds.total = run.started.elapsed().as_secs_f64();
        return Ok(report);
    }
    let (mut meta, new_chunks, dropped) = run.chunk_changed(live.meta.clone(), &scanned, &mut report);
    let text_gen = Generation::next(index_dir, live.dir.clone())?;
    // Until the full generation is live (the end of this function), `status` reads how far
    // embedding has got from here.
    let progress = super::progress::Writer::new(index_dir, text_gen.number);
    run.describe(&mut meta, &scanned);
    let mut vectors = run.cached_vectors(&live, &dropped, &new_chunks)?;
    let texts = Texts::new(&meta, &vectors, &mut scanned);
    let text = run.write_text_and_embed(&live, &text_gen, &new_chunks, &mut vectors, texts, &progress)?;
    report.seconds.bm25 = text.bm25_secs;
    report.chunks_embedded = text.embedded;
    report.chunks_cached = new_chunks.len() - text.embedded;
    report.seconds.embed = text.embed_secs;
    let t = Instant::now();
    run.publish_full(&live, text_gen, &mut meta, new_chunks, vectors)?;
    report.seconds.vector = t.elapsed().as_secs_f64();
    report.seconds.total = run.started.elapsed().as_secs_f64();
    report.seconds.searchable = text.searchable_at.unwrap_or(report.seconds.total);
    Ok(report)
}

/// An index is this machine's (built by this build, from this model): a `.gitignore` in it keeps
/// it out of the project's commits, where `.claude/memory/` is meant to go.
fn keep_out_of_git(index_dir: &Path) -> Result<()> {
    let ignore = index_dir.join(".gitignore");
    if ignore.symlink_metadata().is_err() {
        std::fs::write(&ignore, "*\n").ctx(|| format!("writing {}", ignore.display()))?;
    }
    Ok(())
}

/// What the full-text thread takes: the changed documents' text, the ids to delete, and the
/// metadata the text generation goes live with when there is embedding to wait for.
struct Texts {
    documents: Vec<Document>,
    changed_ids: Vec<String>,
    early_meta: Option<Meta>,
}

impl Texts {
    fn new(meta: &Meta, vectors: &Vectors, scanned: &mut Scanned) -> Texts {
        // The text generation goes live early only when there is embedding to do.
        let early_meta = (!vectors.uncached.is_empty()).then(|| {
            let mut meta = meta.clone();
            for entry in meta.docs.values_mut() {
                entry.pending = entry.vids.iter().any(|v| vectors.uncached.contains(v));
            }
            meta
        });
        let removed = std::mem::take(&mut scanned.removed);
        let changed_ids = meta.changed.iter().cloned().chain(removed).collect();
        Texts { documents: std::mem::take(&mut scanned.documents), changed_ids, early_meta }
    }
}

/// One indexing run's inputs.
struct Run<'a> {
    index_dir: &'a Path,
    source: &'a Source,
    settings: &'a Settings,
    embedder: &'a dyn Embedder,
    options: &'a BuildOptions<'a>,
    started: Instant,
}

/// The live generation the run builds on (none for a first run or a rebuild).
struct Live {
    /// The live generation's directory, whatever the run does with it.
    dir: Option<PathBuf>,
    /// The generation the run reuses (not on a rebuild).
    previous: Option<PathBuf>,
    /// Its metadata, or a fresh one.
    meta: Meta,
}

/// What the scan found and how it differs from the live generation.
struct Scanned {
    documents: Vec<Document>,
    hashes: Vec<String>,
    /// Indexes into `documents` of what is new or changed.
    changed: Vec<usize>,
    /// Ids of the live generation's documents no longer in the source.
    removed: Vec<String>,
}

/// What writing the text and embedding took and did.
struct TextAndEmbed {
    bm25_secs: f64,
    /// Distinct chunk texts the model embedded.
    embedded: usize,
    embed_secs: f64,
    /// When the text generation went live, if before the full one.
    searchable_at: Option<f64>,
}

/// The vectors of the generation being written, and what is still to embed.
struct Vectors {
    rows: vector::Rows,
    cache: EmbedCache,
    /// Vector ids of the new chunks whose text the cache lacked.
    uncached: HashSet<u64>,
}

impl Run<'_> {
    /// The live generation, checked to be compatible and whole (every byte it recorded), and
    /// the unfinished generations of killed runs removed (they were never live). A damaged one is
    /// rebuilt from nothing, vectors from the embedding cache: `rebuilt` says why.
    fn live_generation(&self, rebuilt: &mut Option<String>) -> Result<Live> {
        let live = match store::current_generation(self.index_dir) {
            Err(Error::IndexCorrupt { reason, .. }) => {
                *rebuilt = Some(reason);
                None
            }
            other => other?,
        };
        let previous = match (&live, self.options.rebuild) {
            (Some(dir), false) => match self.compatible_meta(dir) {
                Ok(meta) => Some((dir.clone(), meta)),
                Err(Error::IndexCorrupt { reason, .. }) => {
                    *rebuilt = Some(reason);
                    None
                }
                Err(e) => return Err(e),
            },
            _ => None,
        };
        let keep: Vec<&Path> = live.iter().map(PathBuf::as_path).collect();
        store::remove_generations_except(self.index_dir, &keep)?;
        Ok(match previous {
            Some((dir, meta)) => Live { dir: live, previous: Some(dir), meta },
            None => Live { dir: live, previous: None, meta: Meta::new(self.embedder.id(), self.embedder.dimensions()) },
        })
    }

    /// A live generation's metadata, when this run can add to it.
    fn compatible_meta(&self, dir: &Path) -> Result<Meta> {
        store::verify(dir, store::Check::Full)?;
        let meta = store::read_meta(dir)?;
        meta.check_compatible(self.index_dir, Some(self.embedder.id()))?;
        // Found damaged now rather than half-way through linking its segments.
        bm25::open_reader(dir)?;
        if meta.dimensions != self.embedder.dimensions() {
            return Err(Error::IndexIncompatible {
                path: self.index_dir.to_path_buf(),
                found: format!("{} dimensions", meta.dimensions),
                expected: format!("{} dimensions", self.embedder.dimensions()),
            });
        }
        Ok(meta)
    }

    /// Scans the source, reading only files whose stat changed, and compares it with the live
    /// generation.
    fn scan(&self, live: &Live, report: &mut IndexReport) -> Result<Scanned> {
        let t = Instant::now();
        // Files whose stat says they hold what the live generation indexed are not read again:
        // the walk's cost is then a stat per file. Memory records are always read (every run
        // looks for superseded ones among them), and so is anything the live generation lacks or
        // has pending.
        let stats = if self.options.rebuild { StatCache::default() } else { StatCache::load(self.index_dir) };
        let old = &live.meta;
        let unchanged = |id: &str, stat: &ingest::FileStat| {
            stats.hash_of(id, stat).is_some_and(|hash| {
                old.docs.get(id).is_some_and(|e| e.hash == hash && !e.pending && e.kind != ingest::Kind::Memory)
            })
        };
        let mut scan = ingest::scan_except(self.source, &self.settings.index, Some(self.index_dir), &unchanged)?;
        report.files_scanned = scan.files_scanned;
        report.files_skipped = scan.skipped;
        report.files_unread = scan.unchanged.len();
        report.warnings.append(&mut scan.warnings);
        report.seconds.walk = t.elapsed().as_secs_f64();

        let hashes: Vec<String> = scan.documents.par_iter().map(Document::hash).collect();
        // What was learnt about each file's stat, kept whatever becomes of this run: it is true
        // of the files, not of a generation.
        let new_stats = stats.updated(
            scan.documents.iter().zip(&hashes).filter_map(|(d, h)| Some((d.id.as_str(), d.stat?, h.as_str()))),
            &scan.unchanged,
        );
        if new_stats != stats {
            new_stats.save(self.index_dir)?;
        }
        let seen: HashSet<&str> =
            scan.documents.iter().map(|d| d.id.as_str()).chain(scan.unchanged.iter().map(String::as_str)).collect();
        // Memory records cut with another piece size are cut again. Every memory record is in
        // `scan.documents` (none is skipped on its stat, see `unchanged`), so none is missed.
        let recut = old.memory_max_tokens != Some(self.settings.chunk.memory_max_tokens);
        let changed: Vec<usize> = (0..scan.documents.len())
            .filter(|&i| {
                let d = &scan.documents[i];
                (recut && d.kind == ingest::Kind::Memory)
                    || old.docs.get(&d.id).is_none_or(|e| e.hash != hashes[i] || e.pending)
            })
            .collect();
        let removed: Vec<String> = old.docs.keys().filter(|id| !seen.contains(id.as_str())).cloned().collect();
        report.files_changed = changed.len();
        report.files_removed = removed.len();
        Ok(Scanned { documents: scan.documents, hashes, changed, removed })
    }

    /// Chunks the changed documents and updates the metadata: their new entries, the entries of
    /// removed documents gone. Returns the metadata, the new chunks and the vector ids dropped.
    fn chunk_changed(
        &self,
        mut meta: Meta,
        scanned: &Scanned,
        report: &mut IndexReport,
    ) -> (Meta, Vec<NewChunk>, HashSet<u64>) {
        let t = Instant::now();
        let count = |s: &str| self.embedder.count_tokens(s);
        let docs = &scanned.documents;
        let chunked: Vec<Vec<Chunk>> =
            scanned.changed.par_iter().map(|&i| chunk_document(&docs[i], &self.settings.chunk, &count)).collect();
        meta.memory_max_tokens = Some(self.settings.chunk.memory_max_tokens);
        let mut dropped: HashSet<u64> = HashSet::new();
        for id in scanned.changed.iter().map(|&i| &docs[i].id).chain(scanned.removed.iter()) {
            if let Some(e) = meta.docs.remove(id) {
                report.chunks_removed += e.vids.len();
                dropped.extend(e.vids);
            }
        }
        let mut new_chunks = Vec::new();
        for (&i, chunks) in scanned.changed.iter().zip(chunked) {
            let d = &docs[i];
            let mut vids = Vec::with_capacity(chunks.len());
            for chunk in chunks {
                let vid = meta.next_vid;
                meta.next_vid += 1;
                vids.push(vid);
                let key = store::text_key(&embed_text(&chunk));
                new_chunks.push(NewChunk { vid, doc: i, chunk, key });
            }
            let entry = DocEntry {
                hash: scanned.hashes[i].clone(),
                path: d.path.clone(),
                kind: d.kind,
                lang: d.lang,
                vids,
                pending: false,
                generated: ingest::generated_head(&d.text),
            };
            meta.docs.insert(d.id.clone(), entry);
        }
        report.chunks_added = new_chunks.len();
        report.seconds.chunk = t.elapsed().as_secs_f64();
        (meta, new_chunks, dropped)
    }

    /// What the metadata says of the source beyond its documents: where it is, what changed, and
    /// the memory records' superseded and creation facts search ranks by.
    fn describe(&self, meta: &mut Meta, scanned: &Scanned) {
        meta.source = Some(self.source.clone());
        meta.changed = scanned.changed.iter().map(|&i| scanned.documents[i].id.clone()).collect();
        (meta.superseded, meta.memory_created) = crate::memory::ranking_facts(
            scanned
                .documents
                .iter()
                .filter(|d| d.kind == ingest::Kind::Memory)
                .map(|d| (d.id.as_str(), d.text.as_str())),
        );
    }

    /// The vectors kept: the previous rows (dropped ones tombstoned while a graph links to them),
    /// then the new chunks' cached ones; and which new chunks still need embedding.
    fn cached_vectors(&self, live: &Live, dropped: &HashSet<u64>, new_chunks: &[NewChunk]) -> Result<Vectors> {
        let mut rows = match &live.previous {
            Some(dir) => {
                // The graph's rows are left on disk: while the graph is reused they are only linked.
                let mut rows = vector::Rows::open(dir)?;
                for v in rows.vids.iter_mut().filter(|v| dropped.contains(v)) {
                    *v = vector::TOMBSTONE;
                }
                if rows.graph_rows() == 0 {
                    rows.compact()?;
                }
                rows
            }
            None => vector::Rows::new(self.embedder.dimensions()),
        };
        let wanted: HashSet<[u8; 16]> = new_chunks.iter().map(|c| c.key).collect();
        let (id, dim) = (self.embedder.id(), self.embedder.dimensions());
        let mut cache = EmbedCache::open_for(self.index_dir, id, dim, Some(&wanted))?;
        let mut uncached: HashSet<u64> = HashSet::new();
        for c in new_chunks {
            match cache.get(&c.key) {
                Some(v) => rows.push(c.vid, v),
                None => {
                    uncached.insert(c.vid);
                }
            }
        }
        // The cached vectors are in `rows` now: the cache keeps only what this run embeds.
        cache.forget();
        Ok(Vectors { rows, cache, uncached })
    }

    /// Embedding (the long pole) runs while tantivy indexes the same chunks on another thread,
    /// which then makes the text generation live, so search answers from BM25 within seconds.
    /// That thread owns the documents' text and frees it when done, so the embedding phase holds
    /// only the chunks.
    fn write_text_and_embed(
        &self,
        live: &Live,
        text_gen: &Generation,
        new_chunks: &[NewChunk],
        vectors: &mut Vectors,
        Texts { documents, changed_ids, early_meta }: Texts,
        progress: &super::progress::Writer,
    ) -> Result<TextAndEmbed> {
        let (bm25_result, embed_result) = std::thread::scope(|s| {
            let rows = &mut vectors.rows;
            let bm25 = s.spawn(move || {
                let t = Instant::now();
                let changed: Vec<&str> = changed_ids.iter().map(String::as_str).collect();
                write_tantivy(live.previous.as_deref(), &text_gen.dir, &changed, new_chunks, &documents)?;
                drop(documents);
                let bm25_secs = t.elapsed().as_secs_f64();
                if let Some(mut meta) = early_meta {
                    // The old graph while it still covers most rows, else exact search, until the
                    // full generation has every vector.
                    let plan = match live.previous.as_deref() {
                        Some(from) if rows.graph_reusable(0.5) => Graph::Over(from),
                        _ => Graph::Exact,
                    };
                    text_gen.publish(&mut meta, rows, plan, &self.settings.vector)?;
                }
                // The tantivy writer's arena is free again: give it back while embedding goes on.
                crate::embed::trim_heap();
                Ok::<_, Error>((bm25_secs, self.started.elapsed().as_secs_f64()))
            });
            let t = Instant::now();
            let report = |done: usize, total: usize| {
                progress.write(done, total);
                if let Some(p) = self.options.progress {
                    p(done, total);
                }
            };
            let embedded = embed_missing(new_chunks, &vectors.uncached, &mut vectors.cache, self.embedder, &report);
            if self.options.release_model {
                self.embedder.release();
            }
            (bm25.join().expect("tantivy thread"), embedded.map(|n| (n, t.elapsed().as_secs_f64())))
        });
        let (bm25_secs, searchable_at) = bm25_result?;
        let (embedded, embed_secs) = embed_result?;
        let searchable_at = (!vectors.uncached.is_empty()).then_some(searchable_at);
        Ok(TextAndEmbed { bm25_secs, embedded, embed_secs, searchable_at })
    }

    /// The full generation: every vector, with the graph when the collection is large enough;
    /// a generation of its own when the text generation went live without the new vectors.
    fn publish_full(
        &self,
        live: &Live,
        text_gen: Generation,
        meta: &mut Meta,
        new_chunks: Vec<NewChunk>,
        vectors: Vectors,
    ) -> Result<()> {
        let Vectors { mut rows, cache, uncached } = vectors;
        let full = if uncached.is_empty() {
            Generation { replaces: live.dir.clone(), ..text_gen }
        } else {
            let full = Generation::next(self.index_dir, Some(text_gen.dir.clone()))?;
            store::link_tantivy(&text_gen.dir.join(store::TANTIVY_DIR), &full.dir.join(store::TANTIVY_DIR))?;
            full
        };
        for c in new_chunks.iter().filter(|c| uncached.contains(&c.vid)) {
            rows.push(c.vid, cache.get(&c.key).expect("embedded above"));
        }
        // The graph build needs room: the chunks' text and the cache are not needed any more.
        drop((new_chunks, cache));
        let plan = match &live.previous {
            Some(from) if rows.graph_reusable(self.settings.vector.stale_max) => Graph::Over(from),
            _ => {
                rows.compact()?;
                Graph::Build
            }
        };
        full.publish(meta, &mut rows, plan, &self.settings.vector)
    }
}

/// Where a generation's HNSW graph comes from.
enum Graph<'a> {
    /// The graph of this generation, over the rows' first [`vector::Rows::graph_rows`]: linked,
    /// not rebuilt.
    Over(&'a Path),
    /// Built over every row when there are enough of them (`[vector] exact_below`).
    Build,
    /// None: exact search (the text generation, until every vector is there).
    Exact,
}

/// A generation being written beside the live one.
struct Generation {
    index_dir: PathBuf,
    number: u64,
    dir: PathBuf,
    /// The generation it replaces: kept when it goes live (readers may still have it open).
    replaces: Option<PathBuf>,
}

impl Generation {
    /// A new, empty generation directory.
    fn next(index_dir: &Path, replaces: Option<PathBuf>) -> Result<Generation> {
        let number = store::next_generation(index_dir)?;
        let dir = index_dir.join(store::gen_name(number));
        std::fs::create_dir_all(&dir).ctx(|| format!("creating {}", dir.display()))?;
        Ok(Generation { index_dir: index_dir.to_path_buf(), number, dir, replaces })
    }

    /// Writes the generation's vectors and metadata beside its tantivy index, makes it the live
    /// one, and removes every other generation but the one it replaces.
    fn publish(&self, meta: &mut Meta, rows: &mut vector::Rows, graph: Graph, config: &VectorConfig) -> Result<()> {
        meta.graph = match graph {
            Graph::Over(from) => {
                vector::VectorStore::write_over(&self.dir, rows, from)?;
                true
            }
            Graph::Build => vector::VectorStore::write(&self.dir, rows, config)?,
            Graph::Exact => {
                let exact = VectorConfig { exact_below: usize::MAX, ..config.clone() };
                vector::VectorStore::write(&self.dir, rows, &exact)?
            }
        };
        meta.generation = self.number;
        meta.chunks = meta.docs.values().map(|d| d.vids.len()).sum();
        let vectors = rows.vids.iter().filter(|&&v| v != vector::TOMBSTONE).count();
        meta.vectors = (vectors < meta.chunks).then_some(vectors);
        meta.updated_unix =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let meta_json = serde_json::to_vec(&*meta).map_err(|e| Error::io("serialising meta", e.into()))?;
        store::write_synced(&self.dir.join(store::META), &meta_json)?;
        store::write_checksums(&self.dir, self.replaces.as_deref())?;
        store::sync_dir(&self.dir)?;
        store::switch_current(&self.index_dir, &self.dir)?;
        let mut keep = vec![self.dir.as_path()];
        keep.extend(self.replaces.as_deref());
        store::remove_generations_except(&self.index_dir, &keep)
    }
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

/// Embeds the text of every `uncached` chunk (each distinct text once), telling `report` (done,
/// total) after each batch; returns how many were embedded.
fn embed_missing(
    chunks: &[NewChunk],
    uncached: &HashSet<u64>,
    cache: &mut EmbedCache,
    embedder: &dyn Embedder,
    report: &dyn Fn(usize, usize),
) -> Result<usize> {
    let mut todo: Vec<(usize, [u8; 16])> = Vec::new();
    let mut queued = HashSet::new();
    for (i, c) in chunks.iter().enumerate() {
        if uncached.contains(&c.vid) && queued.insert(c.key) {
            todo.push((i, c.key));
        }
    }
    // Globally sorted by length so each model batch pads to similar lengths.
    todo.sort_by_key(|(i, _)| std::cmp::Reverse(chunks[*i].chunk.text.len() + chunks[*i].chunk.title.len()));
    // Batches large enough to keep the model busy, small enough that a killed run loses little.
    const STEP: usize = 64;
    let mut done = 0;
    // Said at once, so a reader between the text going live and the first batch sees a run at work.
    report(0, todo.len());
    for batch in todo.chunks(STEP) {
        let texts: Vec<String> = batch.iter().map(|(i, _)| embed_text(&chunks[*i].chunk)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = embedder.embed(&refs)?;
        cache.insert_many(batch.iter().map(|(_, k)| *k).zip(vectors).collect())?;
        done += batch.len();
        report(done, todo.len());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;
    use crate::search::{Engine, SearchRequest};
    use std::sync::mpsc;
    use std::sync::Arc;
    use std::sync::Mutex;

    /// The hashing embedder, but each `embed` call first waits for a go from the test, or fails.
    struct Gated {
        inner: HashEmbedder,
        go: Mutex<mpsc::Receiver<bool>>,
        started: Mutex<mpsc::Sender<()>>,
    }

    impl Embedder for Gated {
        fn id(&self) -> &str {
            self.inner.id()
        }
        fn dimensions(&self) -> usize {
            self.inner.dimensions()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            let _ = self.started.lock().unwrap().send(());
            match self.go.lock().unwrap().recv() {
                Ok(true) => self.inner.embed(texts),
                _ => Err(Error::Inference("stopped by the test".into())),
            }
        }
    }

    fn gated() -> (Gated, mpsc::Sender<bool>, mpsc::Receiver<()>) {
        let (go_tx, go_rx) = mpsc::channel();
        let (started_tx, started_rx) = mpsc::channel();
        (
            Gated { inner: HashEmbedder::new(32), go: Mutex::new(go_rx), started: Mutex::new(started_tx) },
            go_tx,
            started_rx,
        )
    }

    fn live_meta(index: &Path) -> Meta {
        store::read_meta(&store::current_generation(index).unwrap().unwrap()).unwrap()
    }

    fn bm25_paths(index: &Path, query: &str) -> Vec<String> {
        let engine = Engine::open_lexical(index, Settings::default()).unwrap();
        let resp = engine.search_with(&SearchRequest::new(query, 5, crate::config::Mode::Bm25)).unwrap();
        resp.results.into_iter().map(|h| h.path).collect()
    }

    /// The live generation's vector store with its graph, and the graph file's inode.
    fn live_vectors(index: &Path, settings: &Settings) -> (vector::VectorStore, u64) {
        use std::os::unix::fs::MetadataExt;
        let generation = store::current_generation(index).unwrap().unwrap();
        let inode = std::fs::metadata(generation.join("graph.hnsw.graph")).unwrap().ino();
        (vector::VectorStore::open(&generation, true, &settings.vector).unwrap(), inode)
    }

    /// The inode of the live generation's file of the graph's rows.
    fn base_inode(index: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        let generation = store::current_generation(index).unwrap().unwrap();
        std::fs::metadata(generation.join("vectors.base")).unwrap().ino()
    }

    #[test]
    fn memory_records_are_cut_again_when_their_piece_size_changes() {
        let project = tempfile::tempdir().unwrap();
        let index = project.path().join(".engine");
        let source = Source::Dir(project.path().into());
        let embedder = HashEmbedder::new(32);
        let facts: Vec<String> = (0..30).map(|i| format!("- fact {i}: the worker keeps queue_{i} warm")).collect();
        let record = serde_json::json!({"title": "Summary", "category": "summary", "content": facts.join("\n\n")});
        std::fs::create_dir_all(project.path().join(".claude/memory")).unwrap();
        std::fs::write(project.path().join(".claude/memory/s.json"), record.to_string()).unwrap();
        std::fs::write(project.path().join("a.md"), "# A\n\nA note about queues.\n").unwrap();
        let mut settings = Settings::default();
        settings.chunk.memory_max_tokens = 200;
        build(&index, &source, &settings, &embedder, &Default::default()).unwrap();
        let (before, generation) = (live_meta(&index).chunks, live_meta(&index).generation);
        // Same files, same setting: nothing to do.
        build(&index, &source, &settings, &embedder, &Default::default()).unwrap();
        assert_eq!(live_meta(&index).generation, generation);
        settings.chunk.memory_max_tokens = 30;
        let report = build(&index, &source, &settings, &embedder, &Default::default()).unwrap();
        let meta = live_meta(&index);
        assert_eq!(report.files_changed, 1, "only the memory record is cut again");
        assert!(meta.chunks > before + 3, "{} pieces, were {before}", meta.chunks);
        assert_eq!(meta.memory_max_tokens, Some(30));
        assert_eq!(bm25_paths(&index, "queue_29").first().map(String::as_str), Some(".claude/memory/s.json"));
    }

    #[test]
    fn a_small_update_reuses_the_graph_and_a_large_one_rebuilds_it() {
        let project = tempfile::tempdir().unwrap();
        let index = project.path().join(".engine");
        let source = Source::Dir(project.path().into());
        let embedder = HashEmbedder::new(32);
        let mut settings = Settings::default();
        settings.vector.exact_below = 10;
        let topics = ["sessions expire after an hour", "thumbnails are resized by a worker", "retries back off"];
        for i in 0..40 {
            let text = format!("# Note {i}\n\nNote {i}: {}.\n", topics[i % 3]);
            std::fs::write(project.path().join(format!("n{i}.md")), text).unwrap();
        }
        build(&index, &source, &settings, &embedder, &Default::default()).unwrap();
        let (before, graph) = live_vectors(&index, &settings);
        let base = base_inode(&index);
        assert_eq!(before.graph_rows(), before.len());

        // One file edited: the graph files are the same (linked), the old row is a tombstone
        // that search never returns, and the new row is found beside the graph.
        let edited = "# Note 7\n\nNote 7: uploads are scanned for viruses.\n";
        std::fs::write(project.path().join("n7.md"), edited).unwrap();
        build(&index, &source, &settings, &embedder, &Default::default()).unwrap();
        let (after, same) = live_vectors(&index, &settings);
        assert_eq!(same, graph, "the graph was rebuilt for one edited file");
        assert_eq!(base_inode(&index), base, "the graph's rows were rewritten for one edited file");
        assert_eq!(after.len(), before.len() + 1);
        assert_eq!(after.graph_rows(), before.len());
        let query = embedder.embed_query(edited).unwrap();
        let hits = after.search(&query, after.len());
        assert_eq!(hits.len(), after.len() - 1, "every live row, and no tombstone");
        assert_eq!(hits[0].0, after.len() - 1, "the new row comes first");
        assert!(hits.iter().all(|&(row, _)| after.vids[row] != vector::TOMBSTONE));
        let meta = live_meta(&index);
        assert_eq!(meta.vectors, None, "every chunk has a vector");

        // Half the files edited: past `stale_max`, so the graph is built again, compacted.
        for i in (0..40).step_by(2) {
            std::fs::write(project.path().join(format!("n{i}.md")), format!("# Note {i}\n\nRewritten {i}.\n")).unwrap();
        }
        build(&index, &source, &settings, &embedder, &Default::default()).unwrap();
        let (rebuilt, other) = live_vectors(&index, &settings);
        assert_ne!(other, graph);
        assert_ne!(base_inode(&index), base);
        assert_eq!(rebuilt.len(), 40);
        assert_eq!(rebuilt.graph_rows(), 40);
        assert!(rebuilt.vids.iter().all(|&v| v != vector::TOMBSTONE));
    }

    /// The hashing embedder, counting `embed` and `release` calls.
    #[derive(Default)]
    struct Releasing {
        embeds: std::sync::atomic::AtomicUsize,
        /// `embeds` at each release.
        releases: Mutex<Vec<usize>>,
    }

    impl Embedder for Releasing {
        fn id(&self) -> &str {
            "releasing"
        }
        fn dimensions(&self) -> usize {
            16
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            self.embeds.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            HashEmbedder::new(16).embed(texts)
        }
        fn release(&self) {
            self.releases.lock().unwrap().push(self.embeds.load(std::sync::atomic::Ordering::SeqCst));
        }
    }

    #[test]
    fn the_model_is_released_after_embedding_only_when_asked() {
        let project = tempfile::tempdir().unwrap();
        let index = project.path().join(".engine");
        let source = Source::Dir(project.path().into());
        let embedder = Releasing::default();
        std::fs::write(project.path().join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
        build(&index, &source, &Settings::default(), &embedder, &Default::default()).unwrap();
        assert!(embedder.releases.lock().unwrap().is_empty());
        std::fs::write(project.path().join("b.md"), "# Uploads\n\nUploads are scanned.\n").unwrap();
        let once = BuildOptions { release_model: true, ..Default::default() };
        build(&index, &source, &Settings::default(), &embedder, &once).unwrap();
        let embeds = embedder.embeds.load(std::sync::atomic::Ordering::SeqCst);
        assert!(embeds >= 2);
        // Released once, after the run's last embedding.
        assert_eq!(*embedder.releases.lock().unwrap(), [embeds]);
        let engine = Engine::builder(&index).embedder(Arc::new(Releasing::default())).open().unwrap();
        assert!(engine.search("uploads").unwrap().results[0].path.ends_with("b.md"));
    }

    #[test]
    fn files_are_read_again_only_when_their_stat_changes() {
        let project = tempfile::tempdir().unwrap();
        let index = project.path().join(".engine");
        let source = Source::Dir(project.path().into());
        let embedder = HashEmbedder::new(32);
        let run = || build(&index, &source, &Settings::default(), &embedder, &Default::default()).unwrap();
        let (a, b) = (project.path().join("a.md"), project.path().join("b.md"));
        std::fs::write(&a, "# Sessions\n\nSessions live in Redis.\n").unwrap();
        std::fs::write(&b, "# Uploads\n\nUploads are scanned.\n").unwrap();
        // Modified "in 30 s": fresh for the next runs however slowly they go.
        let soon = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
        for f in [&a, &b] {
            std::fs::File::options().write(true).open(f).unwrap().set_modified(soon).unwrap();
        }

        // Just written: too recent to trust a stat, so read again next time.
        assert_eq!(run().files_changed, 2);
        assert_eq!((run().files_unread, run().files_changed), (0, 0));

        // Left alone long enough: passed over unread.
        ingest::pretend_clock_ahead(60);
        let report = run();
        assert_eq!((report.files_unread, report.files_changed), (0, 0), "read once more to record the stats");
        assert_eq!((run().files_unread, run().files_scanned), (2, 2));

        // Touched, content the same: read, not re-chunked nor embedded; then unread again.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options().write(true).open(&a).unwrap().set_modified(later).unwrap();
        let report = run();
        assert_eq!((report.files_unread, report.files_changed, report.chunks_embedded), (1, 0, 0));
        assert_eq!(run().files_unread, 2);

        // Edited to the same size with its old modification time put back (as a tool that
        // restores times does, or an edit within the same timestamp tick): the change time
        // still tells, and the edit is indexed.
        let mtime = std::fs::metadata(&b).unwrap().modified().unwrap();
        std::fs::write(&b, "# Uploads\n\nUploads are resized.\n").unwrap();
        std::fs::File::options().write(true).open(&b).unwrap().set_modified(mtime).unwrap();
        let report = run();
        assert_eq!((report.files_unread, report.files_changed), (1, 1));
        assert_eq!(bm25_paths(&index, "resized"), ["b.md"]);

        // Stats recorded by another build of the program (its redaction may differ) are not trusted.
        let stats = std::fs::read_to_string(index.join(store::STATS)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
        let other = stats.replace(v["version"].as_str().unwrap(), "0.1.0 another build");
        std::fs::write(index.join(store::STATS), other).unwrap();
        assert_eq!((run().files_unread, run().files_unread), (0, 2));

        // The index directory is never indexed, even named as a root of its own.
        let mut own = Settings::default();
        own.index.hidden_include = vec![".engine".into()];
        let report = build(&index, &source, &own, &embedder, &Default::default()).unwrap();
        assert_eq!(report.files_scanned, 2);

        // A lost stat cache only costs a read.
        std::fs::remove_file(index.join(store::STATS)).unwrap();
        assert_eq!((run().files_unread, run().files_changed), (0, 0));
        assert_eq!(run().files_unread, 2);

        // A size limit lowered since applies to files passed over before: they leave the index.
        let mut small = Settings::default();
        small.index.max_file_size = 16;
        let report = build(&index, &source, &small, &embedder, &Default::default()).unwrap();
        assert_eq!((report.files_unread, report.files_removed), (0, 2));
        assert!(bm25_paths(&index, "sessions").is_empty());
        ingest::pretend_clock_ahead(0);
    }

    #[test]
    fn new_text_is_searchable_before_its_vectors_are_embedded() {
        let project = tempfile::tempdir().unwrap();
        let index = project.path().join(".engine");
        std::fs::write(project.path().join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
        build(
            &index,
            &Source::Dir(project.path().into()),
            &Settings::default(),
            &HashEmbedder::new(32),
            &Default::default(),
        )
        .unwrap();
        std::fs::write(project.path().join("b.md"), "# Thumbnails\n\nThe thumbnail worker resizes uploads.\n").unwrap();

        let (embedder, go, started) = gated();
        std::thread::scope(|s| {
            // Owned here, so a failing assertion drops it and the run stops instead of waiting.
            let go = go;
            let run = s.spawn(|| {
                build(&index, &Source::Dir(project.path().into()), &Settings::default(), &embedder, &Default::default())
            });
            // The run is now embedding b.md; its text must already be live.
            started.recv().unwrap();
            wait_until_live(|| live_meta(&index).vectors.is_some());
            let meta = live_meta(&index);
            assert_eq!((meta.vectors, meta.chunks), (Some(1), 2));
            assert!(meta.docs["b.md"].pending && !meta.docs["a.md"].pending);
            assert_eq!(bm25_paths(&index, "thumbnail worker")[0], "b.md");
            // Hybrid search answers too, from BM25 and the vectors there are, and says how many.
            let engine = Engine::builder(&index).embedder(Arc::new(HashEmbedder::new(32))).open().unwrap();
            let resp = engine.search("thumbnail worker").unwrap();
            assert!(resp.results.iter().any(|h| h.path == "b.md"), "{:?}", resp.results);
            assert_eq!(resp.vectors.map(|v| (v.embedded, v.chunks)), Some((1, 2)));

            go.send(true).unwrap();
            let report = run.join().unwrap().unwrap();
            assert!(report.seconds.searchable <= report.seconds.total);
        });
        let meta = live_meta(&index);
        assert_eq!((meta.vectors, meta.chunks), (None, 2));
        assert!(meta.docs.values().all(|d| !d.pending));
    }

    /// Waits for a run's text generation to go live (`live`), failing after a deadline no
    /// loaded machine reaches rather than hanging.
    fn wait_until_live(live: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !live() {
            assert!(std::time::Instant::now() < deadline, "the text generation never went live");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Issue 38: `engine status` read "0 of 2277" vectors until the end of a run whose bar said 1472.
    #[test]
    fn status_counts_vectors_as_the_run_embeds_them() {
        let project = tempfile::tempdir().unwrap();
        let index = project.path().join(".engine");
        // More chunks than one batch of the embedding loop: progress after the first.
        for i in 0..100 {
            std::fs::write(project.path().join(format!("n{i}.md")), format!("# Note {i}\n\nQueue {i} is warm.\n"))
                .unwrap();
        }
        let (embedder, go, started) = gated();
        std::thread::scope(|s| {
            let go = go;
            let run = s.spawn(|| {
                build(&index, &Source::Dir(project.path().into()), &Settings::default(), &embedder, &Default::default())
            });
            started.recv().unwrap();
            wait_until_live(|| store::current_generation(&index).unwrap().is_some());
            let st = crate::index::status(&index).unwrap();
            assert_eq!((st.vectors, st.chunks, st.embedding.map(|e| e.done)), (0, 100, Some(0)), "none embedded yet");
            go.send(true).unwrap();
            // The second batch has started: the first one's count is on record.
            started.recv().unwrap();
            let st = crate::index::status(&index).unwrap();
            let e = st.embedding.expect("the run's progress");
            assert_eq!((st.vectors, e.done, e.total, e.pid), (0, 64, 100, std::process::id()));
            assert_eq!(st.embedded(), 64, "what the bar shows");
            go.send(true).unwrap();
            run.join().unwrap().unwrap();
        });
        let st = crate::index::status(&index).unwrap();
        assert_eq!((st.vectors, st.chunks, st.embedding, st.embedded()), (100, 100, None, 100));
        assert!(!index.join(super::super::progress::FILE).exists());
    }

    #[test]
    fn a_run_stopped_while_embedding_leaves_text_that_the_next_run_completes() {
        let project = tempfile::tempdir().unwrap();
        let index = project.path().join(".engine");
        std::fs::write(project.path().join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
        let (embedder, go, _started) = gated();
        go.send(false).unwrap(); // the first embed fails, as a killed or broken model would
        let source = Source::Dir(project.path().into());
        assert!(build(&index, &source, &Settings::default(), &embedder, &Default::default()).is_err());
        let meta = live_meta(&index);
        assert_eq!((meta.vectors, meta.docs["a.md"].pending), (Some(0), true));
        assert_eq!(bm25_paths(&index, "redis sessions"), ["a.md"]);

        // Nothing changed on disk, yet the next run embeds what is pending.
        let report = build(&index, &source, &Settings::default(), &HashEmbedder::new(32), &Default::default()).unwrap();
        assert_eq!((report.files_changed, report.chunks_embedded), (1, 1));
        let meta = live_meta(&index);
        assert_eq!((meta.vectors, meta.chunks, meta.docs["a.md"].pending), (None, 1, false));
        let again = build(&index, &source, &Settings::default(), &HashEmbedder::new(32), &Default::default()).unwrap();
        assert_eq!(again.files_changed, 0);
    }
}
