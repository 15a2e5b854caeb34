//! The Milvus backend, through the official Rust SDK (`milvus-sdk-rust`). One collection per
//! index: a row per chunk keyed by its content-stable export id, its normalised vector in an
//! HNSW index (cosine), and for each field the local BM25 leg searches (title, body, symbols,
//! path, tags) that field's terms, scored by Milvus's own BM25 function into a sparse field of
//! its own; beside them the fields the pipeline reads (path, lines, title, kind, lang, symbols,
//! tags, category, created, superseded) and a fingerprint of them all, which is what makes a
//! push incremental.
//!
//! Parity with the local BM25 leg: the terms are this engine's analyzer's (code-aware splitting,
//! stop words, stemming: `index::bm25::terms`), written one per word so that Milvus's standard
//! analyzer keeps each as it is, and the lexical leg is the sum of the fields' BM25 scores
//! weighted by `[bm25]`'s boosts, as tantivy's query is — summed here, over each field's top hits.
//! A quoted span's phrase match (`[bm25] phrase_boost`) counts on the local index only: the
//! terms Milvus holds carry no positions.
//!
//! The SDK is async (tokio, tonic): a runtime of one worker thread lives here and every call
//! blocks on it, so the rest of the engine stays synchronous.

use super::{BackendUrl, PushReport, Pushed, RemoteChunk, RemoteLegs};
use crate::config::VectorConfig;
use crate::error::{Error, Result};
use crate::index::bm25;
use crate::index::export::{self, ExportedChunk};
use milvus::v2 as sdk;
use milvus::v2::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

const ID: &str = "id";
const FINGERPRINT: &str = "fingerprint";
const DENSE: &str = "dense";
/// The BM25 fields: the terms of each (a VarChar Milvus analyses) and its sparse vector.
const TEXT_FIELDS: [&str; 5] = ["title", "body", "symbols", "path", "tags"];
/// Milvus's longest VarChar, in bytes.
const MAX_VARCHAR: usize = 65_535;
/// Rows per upsert: well under gRPC's message limit for 1024-float vectors and long texts.
const UPSERT_BATCH: usize = 500;
/// Ids per delete and rows per page of the id listing.
const ID_BATCH: usize = 1000;
/// BM25's term-frequency saturation and length normalisation: tantivy's (the local leg's), said
/// on every sparse index because Milvus's defaults are not the same everywhere (Milvus Lite
/// takes k1 = 1.5 when none is given).
const BM25_K1: f32 = 1.2;
const BM25_B: f32 = 0.75;

/// The scalar fields beside the vectors: (name, max bytes for a VarChar, or 0 for Int64/Bool).
const VARCHARS: [(&str, usize); 10] = [
    ("document", MAX_VARCHAR),
    ("path", 4096),
    ("title", MAX_VARCHAR),
    ("kind", 64),
    ("lang", 64),
    ("symbols", MAX_VARCHAR),
    ("tags", MAX_VARCHAR),
    ("category", 256),
    ("model", 512),
    ("text", MAX_VARCHAR),
];

/// The Int64 scalar fields, and the one Bool.
const INT64S: [&str; 3] = ["start_line", "end_line", "created"];
const SUPERSEDED: &str = "superseded";

pub(super) struct Milvus {
    url: BackendUrl,
    runtime: tokio::runtime::Runtime,
    client: ClientV2,
    rows: std::sync::OnceLock<usize>,
}

impl Milvus {
    /// Connects within `wait`; every later request has `timeout` at most.
    pub(super) fn connect(url: BackendUrl, timeout: Duration, wait: Duration) -> Result<Milvus> {
        reachable(&url, wait)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("engine-milvus")
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting the Milvus client's runtime", e))?;
        let config = ConnectConfig::new()
            .uri(format!("http://{}:{}", url.host, url.port))
            .connect_timeout(wait)
            .rpc_timeout(timeout)
            // A stopped server is said at once, not retried for seconds.
            .retry(RetryConfig::new().max_attempts(1))
            .telemetry(TelemetryConfig::new().enabled(false));
        let client = match runtime.block_on(async { tokio::time::timeout(wait, ClientV2::new(&config)).await }) {
            Ok(connected) => connected.map_err(|e| failure(&url, e))?,
            Err(_) => {
                let reason = format!("no answer within {} ms", wait.as_millis());
                return Err(Error::BackendUnreachable { url: url.to_string(), reason });
            }
        };
        Ok(Milvus { url, runtime, client, rows: std::sync::OnceLock::new() })
    }

    pub(super) fn push(&self, index_dir: &Path, vector: &VectorConfig, full: bool) -> Result<PushReport> {
        let (meta, chunks) = export::chunks(index_dir)?;
        if let Some(embedded) = meta.vectors {
            return Err(Error::InvalidInput(format!(
                "the index at {} is still embedding ({embedded} of {} chunks have a vector): push once `engine index` is done",
                index_dir.display(),
                meta.chunks
            )));
        }
        let created = self.ensure_collection(meta.dimensions, vector)?;
        // The record of the last push holds while the server has the rows it left there.
        let recorded = match Pushed::load(index_dir, &self.url) {
            Some(p) if !full && !created && p.collection_rows == self.count()? => Some(p.fingerprints),
            _ => None,
        };
        let listed = recorded.is_none();
        let stored = match recorded {
            Some(fingerprints) => fingerprints,
            None => self.stored_fingerprints()?,
        };
        let rows: Vec<(String, String, serde_json::Value)> = chunks
            .into_iter()
            .map(|(_, chunk)| {
                let (fingerprint, row) = row(chunk);
                (row[ID].as_str().unwrap_or_default().to_string(), fingerprint, row)
            })
            .collect();
        let local: HashSet<&str> = rows.iter().map(|(id, _, _)| id.as_str()).collect();
        let stale: Vec<String> = stored.keys().filter(|id| !local.contains(id.as_str())).cloned().collect();
        let changed: Vec<serde_json::Value> = rows
            .iter()
            .filter(|(id, fingerprint, _)| stored.get(id) != Some(fingerprint))
            .map(|(_, _, row)| row.clone())
            .collect();
        for batch in changed.chunks(UPSERT_BATCH) {
            let insert = InsertRequest::builder()
                .collection_name(&self.url.collection)
                .rows(batch.to_vec())
                .build()
                .map_err(|e| failure(&self.url, e))?;
            let request = UpsertRequest::builder().insert(insert).build().map_err(|e| failure(&self.url, e))?;
            self.call(self.client.upsert(request))?;
        }
        for batch in stale.chunks(ID_BATCH) {
            // A filter rather than `ids`: the SDK sends ids as a filter template, which Milvus
            // Lite does not take.
            let ids: Vec<String> = batch.iter().map(|id| string_literal(id)).collect();
            let request = DeleteRequest::builder()
                .collection_name(&self.url.collection)
                .filter(format!("{ID} in [{}]", ids.join(", ")))
                .build()
                .map_err(|e| failure(&self.url, e))?;
            self.call(self.client.delete(request))?;
        }
        if !changed.is_empty() || !stale.is_empty() {
            // Sealed segments get their indexes; Milvus Lite otherwise rebuilds the BM25 index of
            // its unflushed rows at every search.
            let flush = FlushRequest::builder()
                .collection_names([&self.url.collection])
                .build()
                .map_err(|e| failure(&self.url, e))?;
            self.call(self.client.flush(flush))?;
        }
        let chunks = rows.len();
        // Chunks of one document with the same text share an id: one row.
        let fingerprints: HashMap<String, String> = rows.into_iter().map(|(id, fp, _)| (id, fp)).collect();
        Pushed { collection_rows: fingerprints.len(), fingerprints }.save(index_dir, &self.url)?;
        Ok(PushReport { chunks, created, upserted: changed.len(), deleted: stale.len(), listed })
    }

    /// Creates and loads the collection when there is none; refuses one whose vectors have
    /// another size. True when it was created.
    fn ensure_collection(&self, dimensions: usize, vector: &VectorConfig) -> Result<bool> {
        let name = &self.url.collection;
        let exists = self
            .call(self.client.has_collection(
                HasCollectionRequest::builder().collection_name(name).build().map_err(|e| failure(&self.url, e))?,
            ))?
            .exists();
        if exists {
            let described = self.call(
                self.client.describe_collection(
                    DescribeCollectionRequest::builder()
                        .collection_name(name)
                        .build()
                        .map_err(|e| failure(&self.url, e))?,
                ),
            )?;
            let fields = described.description().get_schema().get_fields();
            let has = |name: &str| fields.iter().any(|f| f.get_name() == name);
            let engines = has(FINGERPRINT) && TEXT_FIELDS.iter().all(|f| has(&format!("{f}_sparse")));
            let dense = fields.iter().find(|f| f.get_name() == DENSE).map(|f| f.get_dimension() as usize);
            let problem = match dense {
                _ if !engines => Some("is not one `engine push` wrote (or an older engine's)".to_string()),
                Some(d) if d != dimensions => {
                    Some(format!("holds vectors of {d} while the index has vectors of {dimensions}"))
                }
                _ => None,
            };
            if let Some(problem) = problem {
                return Err(Error::Backend {
                    url: self.url.to_string(),
                    reason: format!("collection {name} {problem}: push to another collection, or drop this one"),
                });
            }
        } else {
            let request = CreateCollectionRequest::builder()
                .collection_name(name)
                .schema(schema(dimensions))
                .index_params(
                    vec![IndexParam::new()
                        .field_name(DENSE)
                        .index_type(IndexType::Hnsw)
                        .metric_type(MetricType::Cosine)
                        .extra_params(index_params(
                            serde_json::json!({"M": vector.m, "efConstruction": vector.ef_construction}),
                        ))]
                    .into_iter()
                    .chain(TEXT_FIELDS.iter().map(|f| {
                        IndexParam::new()
                            .field_name(format!("{f}_sparse"))
                            .index_type(IndexType::SparseInvertedIndex)
                            .metric_type(MetricType::Bm25)
                            .extra_params(index_params(serde_json::json!({"bm25_k1": BM25_K1, "bm25_b": BM25_B})))
                    }))
                    .collect(),
                )
                .build()
                .map_err(|e| failure(&self.url, e))?;
            self.call(self.client.create_collection(request))?;
        }
        let load = LoadCollectionRequest::builder().collection_name(name).build().map_err(|e| failure(&self.url, e))?;
        self.call(self.client.load_collection(load))?;
        Ok(!exists)
    }

    /// Rows in the collection now (`count(*)`, consistent with every write before it).
    fn count(&self) -> Result<usize> {
        let request = QueryRequest::builder()
            .collection_name(&self.url.collection)
            .filter("")
            .output_fields(["count(*)"])
            .consistency_level(sdk::ConsistencyLevel::Strong)
            .build()
            .map_err(|e| failure(&self.url, e))?;
        let answer = self.call(self.client.query(request))?;
        let rows = answer.results().rows().map_err(|e| failure(&self.url, e))?;
        let mut count = 0;
        for row in rows {
            count = row.get_i64("count(*)").map_err(|e| failure(&self.url, e))?;
        }
        Ok(count.max(0) as usize)
    }

    /// Every stored chunk id with its fingerprint, page by page in id order (`id > last`, with
    /// the `iterator` parameter that has Milvus order a page by primary key; the SDK's own
    /// iterator needs a collection id that Milvus Lite does not give).
    fn stored_fingerprints(&self) -> Result<HashMap<String, String>> {
        let mut out = HashMap::new();
        let mut last: Option<String> = None;
        loop {
            let filter = match &last {
                Some(id) => format!("{ID} > {}", string_literal(id)),
                None => format!("{ID} != \"\""),
            };
            let request = QueryRequest::builder()
                .collection_name(&self.url.collection)
                .filter(filter)
                .output_fields([ID, FINGERPRINT])
                .limit(ID_BATCH as i64)
                .extra_params(HashMap::from([("iterator".to_string(), "true".to_string())]))
                .consistency_level(sdk::ConsistencyLevel::Strong)
                .build()
                .map_err(|e| failure(&self.url, e))?;
            let page = self.call(self.client.query(request))?;
            let mut rows = 0;
            for row in page.results().rows().map_err(|e| failure(&self.url, e))? {
                let id = row.get_str(ID).map_err(|e| failure(&self.url, e))?;
                let fingerprint = row.get_str(FINGERPRINT).map_err(|e| failure(&self.url, e))?;
                if last.as_deref().is_none_or(|l| id > l) {
                    last = Some(id.to_string());
                }
                out.insert(id.to_string(), fingerprint.to_string());
                rows += 1;
            }
            if rows < ID_BATCH {
                return Ok(out);
            }
        }
    }

    /// The two legs, `n` hits each, answered within `wait` (else the backend counts as
    /// unreachable: the caller has a deadline).
    ///
    /// The lexical leg is the sum over fields of each field's BM25 times its boost, as the local
    /// leg's query is; each field answers its own top `n`, so a chunk one field ranks past its
    /// `n`th would lose that field's share of its sum. A second round asks each field that
    /// answered a full `n` for the score of the chunks another field found and it did not.
    pub(super) fn legs(&self, query: &super::RemoteQuery, wait: Duration) -> Result<RemoteLegs> {
        let started = std::time::Instant::now();
        let left = || wait.saturating_sub(started.elapsed());
        let n = query.n;
        let rows = self.rows(wait)?;
        let words = query.text.map(|text| {
            let mut terms = bm25::terms(text);
            terms.sort();
            terms.dedup();
            words(&terms)
        });
        let b = query.boosts;
        let weighted = [b.title_boost, b.body_boost, b.symbols_boost, b.path_boost, b.tags_boost];
        let fields: Vec<(String, f32)> = match words.as_deref() {
            Some(w) if !w.is_empty() => TEXT_FIELDS
                .iter()
                .zip(weighted)
                .filter(|(_, boost)| *boost > 0.0)
                .map(|(f, boost)| (format!("{f}_sparse"), boost))
                .collect(),
            _ => Vec::new(),
        };
        let text = |w: &str| SearchVectors::EmbeddedText(vec![w.to_string()]);
        let mut requests = Vec::new();
        for (field, _) in &fields {
            requests.push(self.request(field, text(words.as_deref().unwrap_or_default()), n, HashMap::new(), None)?);
        }
        if let Some(v) = query.vector {
            let ef = HashMap::from([("ef".to_string(), query.vector_config.ef_search_for(rows).max(n).to_string())]);
            requests.push(self.request(DENSE, SearchVectors::Float(vec![v.to_vec()]), n, ef, None)?);
        }
        let mut answers = self.searches(requests, left())?;
        let vector =
            query.vector.and_then(|_| answers.pop()).map(|hits| hits.into_iter().map(|h| (h.id, h.score)).collect());
        let lexical = match query.text {
            Some(_) => {
                let found: HashSet<String> = answers.iter().flatten().map(|h| h.id.clone()).collect();
                let mut follow = Vec::new();
                let mut which = Vec::new();
                for (i, answer) in answers.iter().enumerate() {
                    // Fewer than `n`: the field answered every chunk it scores at all.
                    if answer.len() < n {
                        continue;
                    }
                    let have: HashSet<&str> = answer.iter().map(|h| h.id.as_str()).collect();
                    let missing: Vec<String> =
                        found.iter().filter(|id| !have.contains(id.as_str())).map(|id| string_literal(id)).collect();
                    if !missing.is_empty() {
                        let filter = format!("{ID} in [{}]", missing.join(", "));
                        let w = words.as_deref().unwrap_or_default();
                        follow.push(self.request(
                            &fields[i].0,
                            text(w),
                            missing.len(),
                            HashMap::new(),
                            Some(filter),
                        )?);
                        which.push(i);
                    }
                }
                for (i, more) in which.into_iter().zip(self.searches(follow, left())?) {
                    answers[i].extend(more);
                }
                Some(summed(fields.iter().map(|(_, boost)| *boost).zip(answers), n))
            }
            None => None,
        };
        Ok(RemoteLegs { lexical, vector })
    }

    /// The rows stored under `ids`, a batch of ids per query.
    pub(super) fn chunks(&self, ids: &[String], wait: Duration) -> Result<Vec<RemoteChunk>> {
        let mut out = Vec::with_capacity(ids.len());
        let started = std::time::Instant::now();
        for batch in ids.chunks(ID_BATCH) {
            let ids: Vec<String> = batch.iter().map(|id| string_literal(id)).collect();
            let filter = format!("{ID} in [{}]", ids.join(", "));
            out.extend(self.chunk_rows(filter, batch.len(), wait.saturating_sub(started.elapsed()))?);
        }
        Ok(out)
    }

    /// The rows of one document, up to `limit`.
    pub(super) fn chunks_of(&self, document: &str, limit: usize, wait: Duration) -> Result<Vec<RemoteChunk>> {
        self.chunk_rows(format!("document == {}", string_literal(document)), limit, wait)
    }

    /// The rows `filter` keeps, with every field the search path reads of a chunk.
    fn chunk_rows(&self, filter: String, limit: usize, wait: Duration) -> Result<Vec<RemoteChunk>> {
        // Every stored field but the vectors and the fingerprint, as the schema declares them.
        let fields: Vec<&str> =
            [ID].into_iter().chain(VARCHARS.map(|(name, _)| name)).chain(INT64S).chain([SUPERSEDED]).collect();
        let request = QueryRequest::builder()
            .collection_name(&self.url.collection)
            .filter(filter)
            .output_fields(fields)
            .limit(limit.max(1) as i64)
            .build()
            .map_err(|e| failure(&self.url, e))?;
        let answer = self
            .runtime
            .block_on(async { tokio::time::timeout(wait, self.client.query(request)).await })
            .map_err(|_| self.late(wait))?
            .map_err(|e| failure(&self.url, e))?;
        let bad = |e| failure(&self.url, e);
        let mut out = Vec::new();
        for row in answer.results().rows().map_err(bad)? {
            let text = |name: &str| row.get_str(name).map(str::to_string).map_err(bad);
            let lines = |name: &str| -> Result<Vec<String>> {
                Ok(text(name)?.split('\n').filter(|s| !s.is_empty()).map(str::to_string).collect())
            };
            let created = row.get_i64("created").map_err(bad)?;
            out.push(RemoteChunk {
                id: text(ID)?,
                document: text("document")?,
                path: text("path")?,
                title: text("title")?,
                kind: text("kind")?,
                lang: text("lang")?,
                symbols: lines("symbols")?,
                tags: lines("tags")?,
                category: text("category")?,
                text: text("text")?,
                start_line: row.get_i64("start_line").map_err(bad)?.max(0) as usize,
                end_line: row.get_i64("end_line").map_err(bad)?.max(0) as usize,
                // 0 is what a push writes for "not known".
                created: (created != 0).then_some(created),
                superseded: row.get_bool(SUPERSEDED).map_err(bad)?,
                model: text("model")?,
            });
        }
        Ok(out)
    }

    /// One search of `field` for `vectors`, `limit` hits, among the rows `filter` keeps.
    fn request(
        &self,
        field: &str,
        vectors: SearchVectors,
        limit: usize,
        params: HashMap<String, String>,
        filter: Option<String>,
    ) -> Result<SearchRequest> {
        let mut builder = SearchRequest::builder()
            .collection_name(&self.url.collection)
            .vector_field(field)
            .vectors(vectors)
            .limit(limit as i64)
            .extra_params(params)
            .consistency_level(sdk::ConsistencyLevel::Strong);
        if field != DENSE {
            // The document and first line order the lexical leg's ties as the local index's order does.
            builder = builder.output_fields(["document", "start_line"]);
        }
        if let Some(filter) = filter {
            builder = builder.filter(filter);
        }
        builder.build().map_err(|e| failure(&self.url, e))
    }

    /// Runs the searches side by side, each answer's hits best first, all within `wait`.
    fn searches(&self, requests: Vec<SearchRequest>, wait: Duration) -> Result<Vec<Vec<Ranked>>> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let all = futures::future::join_all(requests.into_iter().map(|r| self.client.search(r)));
        let answers =
            self.runtime.block_on(async { tokio::time::timeout(wait, all).await }).map_err(|_| self.late(wait))?;
        answers.into_iter().map(|a| a.map(|a| ranked(&a)).map_err(|e| failure(&self.url, e))).collect()
    }

    /// Rows in the collection (asked once per connection): how deep an HNSW search looks, as
    /// `[vector]` sets it for a graph of that size.
    fn rows(&self, wait: Duration) -> Result<usize> {
        if let Some(rows) = self.rows.get() {
            return Ok(*rows);
        }
        let request = GetCollectionStatsRequest::builder()
            .collection_name(&self.url.collection)
            .build()
            .map_err(|e| failure(&self.url, e))?;
        let stats = self
            .runtime
            .block_on(async { tokio::time::timeout(wait, self.client.get_collection_stats(request)).await })
            .map_err(|_| self.late(wait))?
            .map_err(|e| failure(&self.url, e))?;
        Ok(*self.rows.get_or_init(|| stats.row_count().unwrap_or(0).max(0) as usize))
    }

    /// No answer within `wait`.
    fn late(&self, wait: Duration) -> Error {
        Error::BackendUnreachable {
            url: self.url.to_string(),
            reason: format!("no answer within {} ms", wait.as_millis()),
        }
    }

    /// Runs one SDK call to its end on the runtime, its error said as the engine's.
    fn call<T>(&self, f: impl std::future::Future<Output = milvus::v2::error::Result<T>>) -> Result<T> {
        self.runtime.block_on(f).map_err(|e| failure(&self.url, e))
    }
}

/// Whether anything listens at the URL's address: the SDK retries a refused connection until its
/// timeout, where a stopped server should be said at once (the hook has a deadline).
fn reachable(url: &BackendUrl, timeout: Duration) -> Result<()> {
    use std::net::{TcpStream, ToSocketAddrs};
    let unreachable = |reason: String| Error::BackendUnreachable { url: url.to_string(), reason };
    let host = url.host.trim_start_matches('[').trim_end_matches(']');
    let addresses = (host, url.port).to_socket_addrs().map_err(|e| unreachable(format!("resolving {host}: {e}")))?;
    let mut last = format!("{host} has no address");
    for address in addresses {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("connecting to {address}: {e}"),
        }
    }
    Err(unreachable(last))
}

/// `s` as a string literal of Milvus's filter expressions.
fn string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A chunk's document and first line: what orders the lexical leg's ties.
type Place = Option<(String, i64)>;

/// One hit of one search.
#[derive(Clone)]
struct Ranked {
    id: String,
    score: f32,
    /// The chunk's document and first line, when the search asked for them.
    place: Place,
}

/// The hits of the one query, best first.
fn ranked(response: &milvus::v2::response::dql::SearchResponse) -> Vec<Ranked> {
    let mut out = Vec::new();
    for result in response.results() {
        let Ids::VarChar(ids) = result.get_ids() else { continue };
        let places: Vec<Place> = match result.rows() {
            Ok(rows) => rows
                .map(|row| Some((row.get_str("document").ok()?.to_string(), row.get_i64("start_line").ok()?)))
                .collect(),
            Err(_) => Vec::new(),
        };
        for (i, (id, score)) in ids.iter().zip(result.get_scores()).enumerate() {
            out.push(Ranked { id: id.clone(), score: *score, place: places.get(i).cloned().flatten() });
        }
    }
    out
}

/// The lexical leg: each field's BM25 times its boost, summed per chunk over the fields'
/// answers (`(boost, hits)`), best first; a tie ordered by document and first line, as the local
/// index orders chunks of equal score (by their place in it, which is that order).
fn summed(answers: impl Iterator<Item = (f32, Vec<Ranked>)>, n: usize) -> Vec<(String, f32)> {
    let mut summed: HashMap<String, (f32, Place)> = HashMap::new();
    for (boost, hits) in answers {
        // BM25 is never negative: Milvus Lite answers with it negated (as a distance, smaller
        // first), Milvus itself with it as it is.
        for hit in hits {
            let entry = summed.entry(hit.id).or_insert((0.0, None));
            entry.0 += boost * hit.score.abs();
            entry.1 = entry.1.take().or(hit.place);
        }
    }
    let mut hits: Vec<(String, (f32, Place))> = summed.into_iter().collect();
    hits.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then_with(|| a.1 .1.cmp(&b.1 .1)).then_with(|| a.0.cmp(&b.0)));
    hits.truncate(n);
    hits.into_iter().map(|(id, (score, _))| (id, score)).collect()
}

/// An index's build parameters as Milvus takes them from every client: one `params` key holding
/// them as JSON (Milvus Lite reads nothing else; Milvus Standalone also takes them one per key).
fn index_params(params: serde_json::Value) -> HashMap<String, String> {
    HashMap::from([("params".to_string(), params.to_string())])
}

fn schema(dimensions: usize) -> CollectionSchema {
    let mut schema = sdk::CollectionSchema::new()
        .add_field(
            FieldSchema::new()
                .name(ID)
                .data_type(sdk::DataType::VarChar)
                .max_length(MAX_VARCHAR as u32)
                .primary_key(true),
        )
        .add_field(FieldSchema::new().name(FINGERPRINT).data_type(sdk::DataType::VarChar).max_length(64))
        .add_field(FieldSchema::new().name(DENSE).data_type(sdk::DataType::FloatVector).dimension(dimensions as u32));
    for field in TEXT_FIELDS {
        let terms = format!("{field}_terms");
        let sparse = format!("{field}_sparse");
        schema = schema
            .add_field(
                FieldSchema::new()
                    .name(&terms)
                    .data_type(sdk::DataType::VarChar)
                    .max_length(MAX_VARCHAR as u32)
                    .enable_analyzer(true),
            )
            .add_field(FieldSchema::new().name(&sparse).data_type(sdk::DataType::SparseFloatVector))
            .add_function(
                Function::new()
                    .name(format!("{field}_bm25"))
                    .function_type(FunctionType::Bm25)
                    .input_fields([terms])
                    .output_fields([sparse]),
            );
    }
    for (name, max) in VARCHARS {
        schema =
            schema.add_field(FieldSchema::new().name(name).data_type(sdk::DataType::VarChar).max_length(max as u32));
    }
    for name in INT64S {
        schema = schema.add_field(FieldSchema::new().name(name).data_type(sdk::DataType::Int64));
    }
    schema.add_field(FieldSchema::new().name(SUPERSEDED).data_type(sdk::DataType::Bool))
}

/// Analysed terms as words Milvus's standard analyzer takes as they are (letters, digits and
/// `_`): any other character of a term (the `.` of `os.path`, the `::` of `a::b`) is written as
/// `_xHH_` with its code point, the same for chunks and queries.
fn words(terms: &[String]) -> String {
    let mut out = String::new();
    for term in terms {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in term.chars() {
            if c.is_alphanumeric() || c == '_' {
                out.push(c);
            } else {
                out.push_str(&format!("_x{:x}_", c as u32));
            }
        }
    }
    out
}

/// A chunk as a row, and the fingerprint of everything in it but the vector (which the content
/// hash and the model id, both in it, decide).
fn row(chunk: ExportedChunk) -> (String, serde_json::Value) {
    let cut = |s: &str, max: usize| {
        let mut end = s.len().min(max);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_string()
    };
    let terms =
        |texts: &[&str]| cut(&words(&texts.iter().flat_map(|t| bm25::terms(t)).collect::<Vec<_>>()), MAX_VARCHAR);
    let mut row = serde_json::json!({
        ID: cut(&chunk.id, MAX_VARCHAR),
        "title_terms": terms(&[&chunk.title]),
        "body_terms": terms(&[&chunk.text]),
        "symbols_terms": terms(&chunk.symbols.iter().map(String::as_str).collect::<Vec<_>>()),
        "path_terms": terms(&[&chunk.path]),
        "tags_terms": terms(&chunk.tags.iter().map(String::as_str).collect::<Vec<_>>()),
        "document": cut(&chunk.document, MAX_VARCHAR),
        "path": cut(&chunk.path, 4096),
        "title": cut(&chunk.title, MAX_VARCHAR),
        "kind": cut(&chunk.kind, 64),
        "lang": cut(chunk.lang.as_deref().unwrap_or_default(), 64),
        "symbols": cut(&chunk.symbols.join("\n"), MAX_VARCHAR),
        "tags": cut(&chunk.tags.join("\n"), MAX_VARCHAR),
        "category": cut(chunk.category.as_deref().unwrap_or_default(), 256),
        "model": cut(&chunk.model, 512),
        "text": cut(&chunk.text, MAX_VARCHAR),
        "start_line": chunk.start_line as i64,
        "end_line": chunk.end_line as i64,
        "created": chunk.created.unwrap_or(0),
        "superseded": chunk.superseded,
    });
    let fingerprint = hex::encode(Sha256::digest(row.to_string().as_bytes()));
    row[FINGERPRINT] = fingerprint.clone().into();
    row[DENSE] = chunk.vector.unwrap_or_default().into();
    (fingerprint, row)
}

/// An SDK error as the engine's: no connection, or none in time, is [`Error::BackendUnreachable`];
/// anything the server answered is [`Error::Backend`].
fn failure(url: &BackendUrl, e: milvus::v2::error::Error) -> Error {
    use milvus::v2::error::Error as E;
    let unreachable = |e: &E| match e {
        E::Timeout(_) | E::Cancelled(_) => true,
        E::Grpc(status) => {
            matches!(status.code(), tonic::Code::Unavailable | tonic::Code::DeadlineExceeded | tonic::Code::Cancelled)
                && !status.message().is_empty()
        }
        _ => false,
    };
    let gone = match &e {
        E::RetryExhausted { source, .. } => unreachable(source),
        other => unreachable(other),
    };
    let reason = crate::error::chain_text(&e);
    if gone {
        Error::BackendUnreachable { url: url.to_string(), reason }
    } else {
        Error::Backend { url: url.to_string(), reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str, score: f32, line: i64) -> Ranked {
        let document = id.split('#').next().unwrap_or_default().to_string();
        Ranked { id: id.to_string(), score, place: Some((document, line)) }
    }

    #[test]
    fn the_lexical_leg_sums_each_fields_boosted_bm25_and_orders_ties_by_document_and_line() {
        // Milvus Lite answers BM25 negated; the sum takes its size.
        let title = vec![hit("a.md#ff", -2.0, 1)];
        let body = vec![hit("b.md#00", -3.0, 12), hit("b.md#11", -3.0, 1), hit("a.md#ff", -1.0, 1)];
        let answers = || vec![(2.0, title.clone()), (1.0, body.clone())].into_iter();
        let got = summed(answers(), 10);
        let want: Vec<(String, f32)> = vec![("a.md#ff".into(), 5.0), ("b.md#11".into(), 3.0), ("b.md#00".into(), 3.0)];
        assert_eq!(got, want);
        assert_eq!(summed(answers(), 2), want[..2]);
    }

    #[test]
    fn index_parameters_travel_as_one_params_json() {
        let params = index_params(serde_json::json!({"bm25_k1": BM25_K1, "bm25_b": BM25_B}));
        assert_eq!(params.len(), 1);
        let parsed: serde_json::Value = serde_json::from_str(&params["params"]).unwrap();
        assert_eq!((parsed["bm25_k1"].as_f64(), parsed["bm25_b"].as_f64()), (Some(1.2f32 as f64), Some(0.75)));
    }
}
