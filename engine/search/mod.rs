//! The one search path. [`Engine::search`] is what the CLI, `engine eval` and the hook call; no
//! other code scores documents. It reads top to bottom: intent → BM25 ‖ vector (‖ symbol) →
//! fusion → expansion boost → dedup → optional rerank → confidence labels → hits.
//! [`Engine::context`] turns a response into the tiered context block an LLM gets.

pub(crate) mod builder;
mod duplicates;
pub(crate) mod fuse;
pub(crate) mod intent;
mod remote;
pub mod rerank;

use crate::backend::Backend;
use crate::config::Weights;
use crate::config::{FuseMethod, Mode, RerankMode, Settings};
use crate::context::{self, ContextBlock};
use crate::embed::{dot, Embedder, OnnxEmbedder};
use crate::error::{Error, Result};
use crate::hit::{snippet, Evidence, Explain, Hit};
use crate::index::bm25;
use crate::index::reader::{ChunkAddress, ChunkReader, Snapshot};
use crate::index::store::{self, Meta};
use crate::index::vector::VectorStore;
use crate::models::Models;
use fuse::{Fused, Leg, LegHit};
use intent::IntentResult;
use rerank::{OnnxCrossEncoder, RerankReport, Reranker};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// One query.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// The query text; surrounding whitespace is ignored, and an empty query is an error.
    pub query: String,
    /// Results wanted (1 to 1000).
    pub k: usize,
    /// Legs to search.
    pub mode: Mode,
    /// Attach an [`Explain`] to every hit.
    pub explain: bool,
    /// Also return the query-level [`Evidence`] and every hit's coverage (abstention always
    /// measures them on the first hits; this analyses every hit's text).
    pub evidence: bool,
    /// Overrides `[rerank] mode` for this query.
    pub rerank: Option<crate::config::RerankMode>,
    /// Fill every hit's [`Hit::snippet`](crate::Hit::snippet) (on by default; a caller that only
    /// reads the hits' text, such as the hook's context block, saves redacting each whole text).
    pub snippets: bool,
    /// When the search backend (`[backend] url`) is unreachable, run the legs on the local index
    /// instead of failing (the hook: a prompt is answered whatever the backend's state); the
    /// response says so in [`SearchResponse::backend_error`].
    pub local_fallback: bool,
    /// The caller's deadline (the hook's): the search backend is waited for until then at most,
    /// `[backend] timeout_ms` being the longest wait. `None`: that timeout alone.
    pub deadline: Option<Instant>,
}

impl SearchRequest {
    /// A request for `k` results in `mode`, with snippets, without explanation, evidence or rerank
    /// override.
    pub fn new(query: impl Into<String>, k: usize, mode: Mode) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            k,
            mode,
            explain: false,
            evidence: false,
            rerank: None,
            snippets: true,
            local_fallback: false,
            deadline: None,
        }
    }
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    /// Classifying the query's intent.
    pub intent: f64,
    /// Embedding the query.
    pub embed: f64,
    /// The lexical leg.
    pub bm25: f64,
    /// The vector leg, without embedding the query.
    pub vector: f64,
    /// The symbol leg (0 when it did not run: not hybrid, or no identifier in the query).
    pub symbol: f64,
    /// Fusing the legs' lists.
    pub fuse: f64,
    /// The rerank stage (0 when it did not run).
    pub rerank: f64,
    /// Loading, boosting and de-duplicating the fused candidates.
    pub candidates: f64,
    /// Snippets (and explanations) of the hits returned.
    pub hits: f64,
    /// Query-level evidence and abstention.
    pub evidence: f64,
    /// The whole search, end to end.
    pub total: f64,
}

/// The answer to one query.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    /// The query as searched (trimmed).
    pub query: String,
    /// The mode searched in.
    pub mode: Mode,
    /// The query's intent and the symbols, paths and modules found in it.
    pub intent: IntentResult,
    /// True when the vector leg could not run (no model, or it failed) and BM25 answered alone,
    /// or when, without a local index, a signal only that index has was left out.
    pub degraded: bool,
    /// Why, when `degraded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded_reason: Option<String>,
    /// What the rerank stage did, when it was triggered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankReport>,
    /// The hits, best first: at most `k`, labelled.
    pub results: Vec<Hit>,
    /// When the request asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// While an indexing run is still embedding: how many chunks have a vector yet (the others
    /// are found by BM25 only). `None` when every chunk has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorCoverage>,
    /// The search backend that ran the BM25 and vector legs (`[backend] url`); `None`: the local
    /// index did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Why the backend could not run the legs when the request let the local index run them
    /// instead ([`SearchRequest::local_fallback`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_error: Option<String>,
    /// Whether anything answers the query (the abstention verdict); `None` when abstention is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::context::abstain::Verdict>,
    /// Milliseconds per stage.
    pub timings_ms: Timings,
}

/// Chunks with a vector, of all chunks in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VectorCoverage {
    /// Chunks with a vector.
    pub embedded: usize,
    /// All chunks.
    pub chunks: usize,
}

/// An open index: its chunks, vectors, metadata, and (unless degraded) the embedder.
pub struct Engine {
    /// The index directory.
    pub(crate) dir: PathBuf,
    /// The settings every search uses.
    pub(crate) settings: Settings,
    /// The metadata of the generation that was live when the engine opened.
    pub(crate) meta: Meta,
    generation_dir: PathBuf,
    /// The full-text side of the index; `None` for an engine without a local index, whose
    /// search backend (`[backend] url`) holds the chunks.
    reader: Option<ChunkReader>,
    /// Loaded on first use (BM25-only engines never read them) or, by `open`, while the model loads.
    vectors: std::sync::OnceLock<std::result::Result<Vectors, String>>,
    /// Search vectors through the HNSW graph (when the generation has one) rather than exactly.
    use_graph: bool,
    /// Opened for one query or two ([`Engine::open_one_shot`]): never load the graph.
    exact_only: bool,
    embedder: Option<Arc<dyn Embedder>>,
    embed_error: Option<String>,
    reranker: Option<Arc<dyn Reranker>>,
    rerank_error: Option<String>,
    /// The search backend running the legs when `[backend] url` is set: connected at the first
    /// search that needs it (an engine opens whatever the backend's state), kept across reopens.
    backend: std::sync::Mutex<Option<Arc<Backend>>>,
    /// This generation's chunk keys by export id (the ids the backend answers with), filled a
    /// document at a time as the backend's hits name them.
    backend_keys: std::sync::Mutex<remote::Keys>,
}

/// The vectors of a generation and, for the cosine of any hit, each vector id's row.
struct Vectors {
    store: VectorStore,
    rows: HashMap<u64, usize>,
}

/// What the retrieval legs found for one query.
#[derive(Default)]
struct Legs {
    /// Each hit with where the local index has it (`None`: a chunk only the backend has).
    lexical: Option<Vec<(LegHit, Option<ChunkAddress>)>>,
    symbol: Option<Vec<(LegHit, Option<ChunkAddress>)>>,
    vector: Option<Vec<LegHit>>,
    query_vector: Option<Vec<f32>>,
    /// Why the vector leg did not run, when it was wanted, or what an engine without a local
    /// index left out.
    degraded_reason: Option<String>,
    /// The backend that ran the text and vector legs, if one did.
    backend: Option<String>,
    /// Why the backend did not, when the local index ran them in its place.
    backend_error: Option<String>,
    /// The chunks only the backend has, by the key they were given for this query: their export
    /// ids, read from the backend when fusion keeps them ([`Engine::remote_chunks`]).
    remote: HashMap<u64, String>,
    /// When the backend's answers are due: what is left of the wait after the legs.
    backend_due: Option<Instant>,
    /// Where the text legs found each chunk, and its BM25 score (filled by [`Legs::index`]).
    addresses: HashMap<u64, ChunkAddress>,
    bm25: HashMap<u64, f32>,
    /// Cosines not read from the local vectors: of chunks the text legs found that have no vector
    /// yet, embedded for this query, and those the backend's vector leg gave.
    cosines: HashMap<u64, f32>,
}

impl Legs {
    /// The legs' ranked lists, as fusion takes them.
    fn ranked(&self) -> Vec<(Leg, Vec<LegHit>)> {
        let found = |hits: &Vec<(LegHit, Option<ChunkAddress>)>| hits.iter().map(|(h, _)| *h).collect::<Vec<_>>();
        let mut legs = Vec::new();
        legs.extend(self.lexical.as_ref().map(|h| (Leg::Lexical, found(h))));
        legs.extend(self.symbol.as_ref().map(|h| (Leg::Symbol, found(h))));
        legs.extend(self.vector.clone().map(|h| (Leg::Vector, h)));
        legs
    }

    /// The vector leg's best cosine minus its `rank`-th; `None` when it did not run or found
    /// fewer (an index that small, or not yet embedded, is not what the model was fitted on).
    fn cosine_gap(&self, rank: usize) -> Option<f32> {
        let hits = self.vector.as_ref()?;
        Some(hits.first()?.score - hits.get(rank.max(1) - 1)?.score)
    }

    /// Indexes the text legs' hits by key, once the legs are in.
    fn index(mut self) -> Legs {
        for (h, a) in [&self.lexical, &self.symbol].into_iter().flatten().flatten() {
            if let Some(a) = a {
                self.addresses.insert(h.key, *a);
            }
        }
        self.bm25 = self.lexical.iter().flatten().map(|(h, _)| (h.key, h.score)).collect();
        self
    }

    /// Adds what was left out to the degraded reason.
    fn degrade(&mut self, what: &str) {
        self.degraded_reason = Some(match self.degraded_reason.take() {
            Some(reason) => format!("{reason}; {what}"),
            None => what.to_string(),
        });
    }

    /// Where a text leg found this chunk (the vector leg knows only keys).
    fn address_of(&self, key: u64) -> Option<ChunkAddress> {
        self.addresses.get(&key).copied()
    }

    fn bm25_score(&self, key: u64) -> Option<f32> {
        self.bm25.get(&key).copied()
    }
}

/// A fused hit on its way to the results: its stored chunk, the boosts it got and, once
/// reranked, the cross-encoder's logit.
struct Candidate {
    fused: Fused,
    hit: Hit,
    /// Where the local index has it (`None`: read from the search backend).
    address: Option<ChunkAddress>,
    /// A memory record a newer one supersedes.
    superseded: bool,
    /// A memory record's category and creation time (seconds since the epoch), when known.
    created: Option<(String, i64)>,
    boosts: Vec<String>,
    /// The product of the boosts' factors.
    factor: f32,
    logit: Option<f32>,
    /// The learned fusion's inputs and probability, when it ordered the candidates.
    learned: Option<([f32; fuse::FEATURES.len()], f32)>,
}

impl Candidate {
    fn boost(&mut self, factor: f32, why: &str) {
        self.fused.score *= factor;
        self.factor *= factor;
        self.boosts.push(format!("{why} x{factor}"));
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Runs a stage, adding its milliseconds to `slot`.
fn timed<T>(slot: &mut f64, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    *slot += ms(t);
    out
}

impl Engine {
    /// Opens the index for a server that stays up (the hook's daemon, the MCP server): reusing
    /// `model` when one is already loaded, else loading it and warming it up; with a reranker only
    /// if `rerank` (the mode of the requests it will serve) wants one, so a server never waits
    /// for a model it does not use.
    pub(crate) fn open_serving(
        dir: &Path,
        settings: Settings,
        model: Option<Arc<dyn Embedder>>,
        rerank: RerankMode,
    ) -> Result<Engine> {
        match model {
            Some(model) => {
                let models = Models::locate().map(|m| m.cached_in(dir));
                Ok(Engine::with_embedder(dir, settings, Some(model), None)?
                    .with_configured_reranker(models.as_ref().ok(), rerank))
            }
            None => {
                let engine = Engine::open_for(dir, settings, true, rerank)?;
                engine.warm_up()?;
                Ok(engine)
            }
        }
    }

    /// Opens the index at `dir` with the model found by [`Models::locate`], with the HNSW graph
    /// if `graph`, and a reranker if `rerank` wants one; if the model cannot load, the engine
    /// answers from BM25 and says so (`degraded`, with the reason). The daemon's and the MCP
    /// server's way in ([`Engine::open_serving`]) and the one-shot hook's; library users go
    /// through [`Engine::builder`], where a missing model is an error.
    /// The model is loaded here rather than at the first query: loaded after the index, the
    /// query embedding is slower (`cargo bench --bench search`).
    fn open_for(dir: &Path, settings: Settings, graph: bool, rerank: RerankMode) -> Result<Engine> {
        let models = Models::locate().map(|m| m.cached_in(dir));
        Ok(Engine::open_parts(dir, settings, &models, graph, false)?
            .with_configured_reranker(models.as_ref().ok(), rerank))
    }

    /// [`Engine::open_for`] for a process that answers one query and exits (the hook without its
    /// daemon): vectors are scanned exactly instead of loading the HNSW graph, which costs far
    /// more to load than an exact scan.
    /// It is the hook's, so it loads a reranker only if `[hook] rerank` wants one.
    pub(crate) fn open_one_shot(dir: &Path, settings: Settings) -> Result<Engine> {
        let rerank = settings.hook.rerank;
        Engine::open_for(dir, settings, false, rerank)
    }

    /// Opens the index with the model of `models` (no reranker yet). When that is an error or
    /// the model does not load: the error if `required`, else an engine without a model that
    /// keeps the reason for every response.
    pub(crate) fn open_parts(
        dir: &Path,
        settings: Settings,
        models: &Result<Models>,
        graph: bool,
        required: bool,
    ) -> Result<Engine> {
        // The model and the vectors (with the HNSW graph) load in parallel: each takes a few
        // hundred milliseconds, and a cold process (the hook without its daemon) pays both.
        let (embedder, engine) = rayon::join(
            || match models {
                Ok(m) => OnnxEmbedder::load(m, &settings).map_err(Some),
                Err(_) => Err(None),
            },
            || {
                Engine::with_embedder(dir, settings.clone(), None, None).map(|mut e| {
                    if !graph {
                        e = e.without_graph();
                    }
                    let _ = e.vectors();
                    e
                })
            },
        );
        let mut engine = engine?;
        match (embedder, models) {
            (Ok(e), _) => {
                if engine.has_local_index() {
                    engine.meta.check_compatible(dir, Some(e.id()))?;
                }
                engine.embedder = Some(Arc::new(e));
            }
            (Err(Some(load)), _) if required => return Err(load),
            (Err(Some(load)), _) => engine.embed_error = Some(load.to_string()),
            (Err(None), Err(not_found)) => engine.embed_error = Some(not_found.to_string()),
            (Err(None), Ok(_)) => unreachable!("models were found"),
        }
        Ok(engine)
    }

    fn vectors(&self) -> std::result::Result<&Vectors, String> {
        if self.reader.is_none() {
            return Err("no local index".into());
        }
        self.vectors
            .get_or_init(|| {
                let store = VectorStore::open(&self.generation_dir, self.use_graph, &self.settings.vector)
                    .map_err(|e| e.to_string())?;
                let rows = store.vids.iter().enumerate().map(|(row, vid)| (*vid, row)).collect();
                Ok(Vectors { store, rows })
            })
            .as_ref()
            .map_err(String::clone)
    }

    /// Loads the configured cross-encoder from `models`, if any and unless `wanted` (the rerank
    /// mode of the requests this engine will serve) is never. A reranker that cannot load is
    /// reported in every response that wanted it; search still answers.
    pub(crate) fn with_configured_reranker(mut self, models: Option<&Models>, wanted: RerankMode) -> Engine {
        if wanted == RerankMode::Never {
            return self;
        }
        let Some(models) = models else { return self };
        let loaded: Result<Arc<dyn Reranker>> = if self.settings.rerank.model.as_deref() == Some(rerank::MAXSIM) {
            rerank::MaxSimReranker::load(models, &self.settings.rerank).map(|r| Arc::new(r) as Arc<dyn Reranker>)
        } else {
            let Some(dir) = OnnxCrossEncoder::configured_dir(models, &self.settings.rerank) else { return self };
            OnnxCrossEncoder::load(models, &dir, self.settings.rerank.max_length)
                .map(|r| Arc::new(r) as Arc<dyn Reranker>)
        };
        match loaded {
            Ok(r) => self.reranker = Some(r),
            Err(e) => self.rerank_error = Some(format!("reranker unavailable: {e}")),
        }
        self
    }

    /// Uses this reranker (tests, programs bringing their own).
    pub(crate) fn with_reranker(mut self, reranker: Arc<dyn Reranker>) -> Engine {
        self.reranker = Some(reranker);
        self.rerank_error = None;
        self
    }

    /// Opens the index without loading a model, for callers that only run BM25 queries.
    pub(crate) fn open_lexical(dir: &Path, settings: Settings) -> Result<Engine> {
        Engine::with_embedder(dir, settings, None, Some("opened without an embedding model (BM25 only)".into()))
    }

    /// Runs the embedding model once, so a long-lived process pays its warm-up before the first
    /// query.
    pub fn warm_up(&self) -> Result<()> {
        match &self.embedder {
            Some(e) => e.embed_query("warm up").map(|_| ()),
            None => Ok(()),
        }
    }

    /// Opens the index with a given embedder (or none, with the reason).
    pub(crate) fn with_embedder(
        dir: &Path,
        settings: Settings,
        embedder: Option<Arc<dyn Embedder>>,
        embed_error: Option<String>,
    ) -> Result<Engine> {
        let Some(generation_dir) = store::current_generation(dir)? else {
            // Another machine's index, searched through the backend alone.
            if settings.backend.url.is_some() {
                return Ok(Engine::without_index(dir, settings, embedder, embed_error));
            }
            return Err(Error::IndexMissing { path: dir.to_path_buf() });
        };
        store::verify(&generation_dir, store::Check::Quick)?;
        let meta = store::read_meta(&generation_dir)?;
        let use_graph = meta.graph;
        meta.check_compatible(dir, embedder.as_ref().map(|e| e.id()))?;
        let reader = Some(ChunkReader::open(&generation_dir)?);
        Ok(Engine {
            dir: dir.to_path_buf(),
            settings,
            meta,
            generation_dir,
            reader,
            vectors: std::sync::OnceLock::new(),
            use_graph,
            exact_only: false,
            embedder,
            embed_error,
            reranker: None,
            rerank_error: None,
            backend: std::sync::Mutex::new(None),
            backend_keys: Default::default(),
        })
    }

    /// An engine with no local index at `dir`: its search backend (`[backend] url`) runs the
    /// legs and holds the chunks.
    fn without_index(
        dir: &Path,
        settings: Settings,
        embedder: Option<Arc<dyn Embedder>>,
        embed_error: Option<String>,
    ) -> Engine {
        let (model, dimensions) = embedder.as_ref().map(|e| (e.id().to_string(), e.dimensions())).unwrap_or_default();
        Engine {
            dir: dir.to_path_buf(),
            settings,
            meta: Meta::new(&model, dimensions),
            generation_dir: PathBuf::new(),
            reader: None,
            vectors: std::sync::OnceLock::new(),
            use_graph: false,
            exact_only: false,
            embedder,
            embed_error,
            reranker: None,
            rerank_error: None,
            backend: std::sync::Mutex::new(None),
            backend_keys: Default::default(),
        }
    }

    /// Whether this engine has a local index (else its search backend holds the chunks).
    pub(crate) fn has_local_index(&self) -> bool {
        self.reader.is_some()
    }

    /// Scans vectors exactly from now on instead of loading the HNSW graph.
    pub(crate) fn without_graph(mut self) -> Engine {
        (self.use_graph, self.exact_only) = (false, true);
        self
    }

    /// Reads the index's live generation again (after an indexing run), keeping the models.
    pub(crate) fn reopen(&mut self) -> Result<()> {
        let fresh = Engine::with_embedder(&self.dir, self.settings.clone(), self.embedder.clone(), None)?;
        (self.meta, self.generation_dir, self.reader, self.vectors, self.backend_keys) =
            (fresh.meta, fresh.generation_dir, fresh.reader, fresh.vectors, fresh.backend_keys);
        self.use_graph = fresh.use_graph && !self.exact_only;
        Ok(())
    }

    /// A new engine on the index's live generation with this one's settings and models, its
    /// vectors loaded: a server swaps it in whole while requests still read this one.
    pub(crate) fn reopened(&self) -> Result<Engine> {
        let mut fresh = Engine::with_embedder(&self.dir, self.settings.clone(), self.embedder.clone(), None)?;
        fresh.use_graph = fresh.use_graph && !self.exact_only;
        fresh.exact_only = self.exact_only;
        fresh.embed_error = self.embed_error.clone();
        (fresh.reranker, fresh.rerank_error) = (self.reranker.clone(), self.rerank_error.clone());
        fresh.backend = std::sync::Mutex::new(self.connected_backend());
        fresh.preload();
        Ok(fresh)
    }

    /// Loads the vectors now rather than at the first query (a server's first answer would
    /// otherwise pay for it, and every request arriving meanwhile wait on it).
    pub(crate) fn preload(&self) {
        let _ = self.vectors();
    }

    /// The live generation this engine reads.
    pub(crate) fn generation_dir(&self) -> &Path {
        &self.generation_dir
    }

    /// The settings every search uses.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The embedder, when loaded.
    pub(crate) fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Answers a query with `[search] k` results in `[search] mode` (hybrid by default).
    pub fn search(&self, query: &str) -> Result<SearchResponse> {
        let config = &self.settings.search;
        self.search_with(&SearchRequest::new(query, config.k, config.mode))
    }

    /// Answers one request. Search only reads: a full-text error, or a panic below (a dependency
    /// asserting on a damaged file), is the index's damage, an error like any other, and a
    /// server or the hook keeps running.
    pub fn search_with(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let damaged =
            |why: String| Error::IndexCorrupt { path: self.dir.clone(), reason: format!("reading it failed ({why})") };
        match crate::error::catch_panic(|| self.stages(req)) {
            Ok(Err(Error::Tantivy(e))) => Err(damaged(e.to_string())),
            Ok(answer) => answer,
            Err(why) => Err(damaged(why)),
        }
    }

    /// The search, stage by stage: each stage is a function below, in this order.
    fn stages(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
        let query = self.checked(req)?;
        let mut timings = Timings::default();
        let intent = timed(&mut timings.intent, || intent::classify(query));
        let snapshot = self.reader.as_ref().map(ChunkReader::snapshot);
        let snapshot = snapshot.as_ref();
        let legs = self.legs(snapshot, query, &intent, req, &mut timings)?;
        let weights = fuse::mix(&intent, &self.settings.fuse);
        let fused = timed(&mut timings.fuse, || fuse::fuse(&legs.ranked(), &weights, &self.settings.fuse));
        let reranking = req.mode == Mode::Hybrid
            && rerank::should_rerank(
                query,
                &intent,
                req.rerank.unwrap_or(self.settings.rerank.mode),
                &self.settings.rerank,
            );
        let wanted = if reranking { req.k.max(self.settings.rerank.top_k) } else { req.k };
        // Learned fusion weighs the legs against each other: with one leg there is nothing to fuse,
        // and a single-leg mode is that leg's ranking under every method.
        let learning = req.mode == Mode::Hybrid && self.settings.fuse.method == FuseMethod::Learned;
        let depth = if learning { wanted.max(self.settings.fuse.learned_depth) } else { wanted };
        let mut candidates =
            timed(&mut timings.candidates, || self.candidates(snapshot, fused, &legs, (query, &intent), depth))?;
        if learning {
            timed(&mut timings.fuse, || self.learned(snapshot, query, &intent, &mut candidates));
            candidates.truncate(wanted);
        }
        let rerank = timed(&mut timings.rerank, || reranking.then(|| self.rerank(query, &mut candidates)).flatten());
        let addresses: Vec<Option<ChunkAddress>> = candidates.iter().take(req.k).map(|c| c.address).collect();
        let mut results = timed(&mut timings.hits, || self.hits(candidates, req, query, weights));
        let gap = legs.cosine_gap(self.settings.abstain.gap_rank);
        let (evidence, verdict) = timed(&mut timings.evidence, || {
            self.labels(snapshot, query, &intent, (&mut results, &addresses), gap, req.evidence)
        });
        timings.total = ms(started);
        Ok(SearchResponse {
            query: query.to_string(),
            mode: req.mode,
            intent,
            degraded: legs.degraded_reason.is_some(),
            degraded_reason: legs.degraded_reason,
            rerank,
            results,
            evidence,
            vectors: self.meta.vectors.map(|embedded| VectorCoverage { embedded, chunks: self.meta.chunks }),
            backend: legs.backend,
            backend_error: legs.backend_error,
            verdict,
            timings_ms: timings,
        })
    }

    /// The query, trimmed, when it and `k` can be answered.
    fn checked<'q>(&self, req: &'q SearchRequest) -> Result<&'q str> {
        let query = req.query.trim();
        if query.is_empty() {
            return Err(Error::InvalidInput("empty query: give some words to search for".into()));
        }
        // Settings and flags are checked against the same bounds; this guards library callers,
        // for whom a huge k would be a huge allocation in every leg.
        let allowed = crate::config::bounds::K;
        if !allowed.contains(&req.k) {
            return Err(Error::InvalidInput(format!(
                "k = {} is out of range: allowed {}..={}",
                req.k,
                allowed.start(),
                allowed.end()
            )));
        }
        Ok(query)
    }

    /// Retrieval: BM25 and vector (on the search backend when `[backend] url` names one, else
    /// concurrently on the local index), then the symbol leg when the query names identifiers
    /// (on the local index: without one, it is left out and said so).
    fn legs(
        &self,
        snapshot: Option<&Snapshot>,
        query: &str,
        intent: &IntentResult,
        req: &SearchRequest,
        timings: &mut Timings,
    ) -> Result<Legs> {
        let mut backend_error = None;
        let remote = match self.settings.backend.url.as_deref() {
            Some(url) => match self.remote_legs(url, snapshot, query, req, timings) {
                Ok(legs) => Some(legs),
                Err(e) if req.local_fallback && snapshot.is_some() && e.class() == crate::ErrorClass::Unreachable => {
                    backend_error = Some(e.to_string());
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        let mut legs = match (remote, snapshot) {
            (Some(legs), _) => legs,
            (None, Some(snapshot)) => Legs { backend_error, ..self.local_legs(snapshot, query, req, timings)? },
            (None, None) => unreachable!("without a local index the backend's error is returned"),
        };
        if req.mode == Mode::Hybrid && !intent.symbols.is_empty() {
            let n = self.settings.search.top_n.max(req.k);
            match snapshot {
                Some(snapshot) => {
                    let found = timed(&mut timings.symbol, || snapshot.symbols(&intent.symbols, n))?;
                    legs.symbol = Some(found.into_iter().map(|(h, a)| (h, Some(a))).collect());
                }
                None => legs.degrade("no symbol leg (it needs the local index)"),
            }
        }
        let mut legs = legs.index();
        if let (None, Some(snapshot)) = (&legs.backend, snapshot) {
            self.embed_fresh(snapshot, &mut legs)?;
        }
        Ok(legs)
    }

    /// BM25 and vector on the local index, concurrently. Without a model the vector leg is
    /// replaced by BM25 (degraded).
    fn local_legs(&self, snapshot: &Snapshot, query: &str, req: &SearchRequest, timings: &mut Timings) -> Result<Legs> {
        let located = |hits: Vec<(LegHit, ChunkAddress)>| hits.into_iter().map(|(h, a)| (h, Some(a))).collect();
        let (mode, n) = (req.mode, self.settings.search.top_n.max(req.k));
        let (want_lex, want_vec) = (mode != Mode::Vector, mode != Mode::Bm25);
        // A thread of its own for the lexical leg: rayon::join from outside its pool (the daemon,
        // the MCP server) queues both halves and often runs them one after the other.
        let ((lexical, lex_ms), (vector, vec_ms)) = std::thread::scope(|scope| {
            let lexical = scope.spawn(|| {
                crate::error::catch_panic(|| self.timed(want_lex, || snapshot.lexical(&self.settings.bm25, query, n)))
            });
            // At least as deep as the abstention's cosine gap looks.
            let vector = self.timed(want_vec, || self.vector_leg(query, n.max(self.settings.abstain.gap_rank)));
            let lexical =
                lexical.join().unwrap_or_else(|_| Err("the lexical leg stopped".into())).unwrap_or_else(|why| {
                    let reason = format!("the full-text index failed ({why})");
                    (Some(Err(Error::IndexCorrupt { path: self.dir.clone(), reason })), 0.0)
                });
            (lexical, vector)
        });
        timings.bm25 = lex_ms;
        let mut legs = Legs::default();
        match vector {
            Some(Ok((hits, q, embed_ms))) => {
                timings.embed = embed_ms;
                timings.vector = vec_ms - embed_ms;
                (legs.vector, legs.query_vector) = (Some(hits), Some(q));
            }
            Some(Err(reason)) => legs.degraded_reason = Some(reason),
            None => {}
        }
        legs.lexical = match lexical {
            Some(l) => Some(located(l?)),
            // Vector-only mode without a model: BM25 answers instead.
            None if legs.degraded_reason.is_some() => Some(located(snapshot.lexical(&self.settings.bm25, query, n)?)),
            None => None,
        };
        Ok(legs)
    }

    /// Ranks in the vector leg the chunks the lexical leg found that have no vector yet: a record
    /// just captured or remembered is in the text index as soon as its reindex publishes the text
    /// generation, a minute before the niced run has embedded it, and a chunk one leg cannot see
    /// loses fusion to everything both legs found. The first `[search] embed_fresh` of them are
    /// embedded now (a few short records: milliseconds with the model loaded) and placed by their
    /// cosine, as the finished index will place them.
    fn embed_fresh(&self, snapshot: &Snapshot, legs: &mut Legs) -> Result<()> {
        let (Some(lexical), Some(vector), Some(q), Some(embedder), Ok(vectors)) =
            (&legs.lexical, &mut legs.vector, &legs.query_vector, &self.embedder, self.vectors())
        else {
            return Ok(());
        };
        let fresh: Vec<(u64, ChunkAddress)> = lexical
            .iter()
            .filter_map(|(h, a)| Some((h.key, (*a)?)))
            .filter(|(key, _)| !vectors.rows.contains_key(key))
            .take(self.settings.search.embed_fresh)
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        let texts = fresh
            .iter()
            .map(|(key, address)| snapshot.load(*address, *key).map(|h| crate::index::titled_text(&h.title, &h.text)))
            .collect::<Result<Vec<String>>>()?;
        let embedded = embedder.embed(&texts.iter().map(String::as_str).collect::<Vec<_>>())?;
        let depth = vector.len();
        for ((key, _), v) in fresh.iter().zip(embedded) {
            let score = dot(q, &v);
            legs.cosines.insert(*key, score);
            vector.push(LegHit { key: *key, rank: 0, score });
        }
        vector.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        // As deep as the leg searched: a fresh chunk below its last hit is not found by it.
        if vectors.rows.len() > depth {
            vector.truncate(depth);
        }
        for (i, h) in vector.iter_mut().enumerate() {
            h.rank = i + 1;
        }
        Ok(())
    }

    /// The best fused hits loaded from the index, boosted (named symbols and paths; test files
    /// down unless the query is about tests, vendored and generated files unless it names them),
    /// re-sorted, with overlapping windows of one chunk dropped and copies of a better hit's text
    /// folded into it: up to `wanted` of them.
    fn candidates(
        &self,
        snapshot: Option<&Snapshot>,
        fused: Vec<Fused>,
        legs: &Legs,
        (query, intent): (&str, &IntentResult),
        wanted: usize,
    ) -> Result<Vec<Candidate>> {
        let mut candidates = self.load_candidates(snapshot, fused, legs, wanted)?;
        for c in candidates.iter_mut() {
            self.boost(c, query, intent);
        }
        Ok(self.keep(candidates, legs, wanted))
    }

    /// The first fused hits, read from the local index or, for chunks only the backend has, from
    /// the backend.
    fn load_candidates(
        &self,
        snapshot: Option<&Snapshot>,
        fused: Vec<Fused>,
        legs: &Legs,
        wanted: usize,
    ) -> Result<Vec<Candidate>> {
        let config = &self.settings.search;
        let fused: Vec<Fused> =
            fused.into_iter().take(wanted * config.candidates_factor + config.candidates_extra).collect();
        let mut remote = self.remote_chunks(legs, &fused)?;
        let mut candidates = Vec::new();
        for fused in fused {
            let local = || {
                let snapshot = snapshot?;
                legs.address_of(fused.key).or_else(|| snapshot.address_of(fused.key)).map(|a| (snapshot, a))
            };
            let candidate = |hit: Hit, address, superseded, created| Candidate {
                fused: fused.clone(),
                hit,
                address,
                superseded,
                created,
                boosts: Vec::new(),
                factor: 1.0,
                logit: None,
                learned: None,
            };
            if let Some((hit, superseded, created)) = remote.remove(&fused.key) {
                candidates.push(candidate(hit, None, superseded, created));
            } else if let Some((snapshot, address)) = local() {
                let hit = snapshot.load(address, fused.key)?;
                let (superseded, created) = self.memory_facts(&hit);
                candidates.push(candidate(hit, Some(address), superseded, created));
            }
        }
        Ok(candidates)
    }

    /// A candidate's boosts: the query's expansions, test and non-test files, vendored and
    /// generated code, superseded and aging memory records.
    fn boost(&self, c: &mut Candidate, query: &str, intent: &IntentResult) {
        let config = &self.settings.search;
        let fuse = &self.settings.fuse;
        if expansion_match(intent, &c.hit) {
            c.boost(fuse.expansion_boost, "expansion");
        }
        let test = crate::ingest::is_test_path(&c.hit.path);
        if fuse.test_factor != 1.0 && !intent.about_tests && test {
            c.boost(fuse.test_factor, "test file");
        }
        if fuse.non_test_factor != 1.0 && intent.about_tests && !test {
            c.boost(fuse.non_test_factor, "not a test file");
        }
        if fuse.third_party_factor != 1.0 {
            if let Some(why) = self.third_party(&c.hit).filter(|_| !names(query, &c.hit)) {
                c.boost(fuse.third_party_factor, why);
            }
        }
        if c.hit.kind == "memory" && c.superseded {
            c.boost(config.superseded_factor, "superseded");
        }
        if c.hit.kind == "memory" && config.memory_half_life_days > 0.0 {
            if let Some(age) = self.memory_age_days(c.created.as_ref()) {
                c.boost(0.5f32.powf(age / config.memory_half_life_days), "recency");
            }
        }
    }

    /// The boosted candidates in score order, overlapping windows of one chunk dropped and
    /// copies of a better hit's text folded into it: up to `wanted` of them, with their scores,
    /// leg ranks and cosines.
    fn keep(&self, mut candidates: Vec<Candidate>, legs: &Legs, wanted: usize) -> Vec<Candidate> {
        let config = &self.settings.search;
        candidates.sort_by(|a, b| b.fused.score.total_cmp(&a.fused.score).then(a.fused.key.cmp(&b.fused.key)));
        let mut kept: Vec<Candidate> = Vec::new();
        let mut kept_pairs: Vec<duplicates::Pairs> = Vec::new();
        let overlap = config.duplicate_overlap;
        for mut c in candidates {
            if kept.iter().any(|k| k.hit.overlaps(&c.hit)) {
                continue; // an overlapping window of a chunk already listed
            }
            let pairs = if overlap > 0.0 { duplicates::Pairs::of(&c.hit.text) } else { Default::default() };
            let copied =
                kept.iter().zip(&kept_pairs).position(|(k, p)| k.hit.doc != c.hit.doc && pairs.copies(p, overlap));
            if let Some(i) = copied {
                let also = &mut kept[i].hit.also_in;
                if !also.contains(&c.hit.path) {
                    also.push(c.hit.path.clone());
                }
                continue;
            }
            kept_pairs.push(pairs);
            c.hit.score = c.fused.score;
            c.hit.bm25 = legs.bm25_score(c.fused.key);
            let rank_in = |leg: Leg| c.fused.legs.iter().find(|l| l.leg == leg).map(|l| l.rank);
            (c.hit.lexical_rank, c.hit.vector_rank) = (rank_in(Leg::Lexical), rank_in(Leg::Vector));
            c.hit.cosine = legs.query_vector.as_ref().and_then(|q| {
                let v = self.vectors().ok()?;
                v.rows.get(&c.fused.key).map(|r| dot(q, v.store.row(*r)))
            });
            c.hit.cosine = c.hit.cosine.or_else(|| legs.cosines.get(&c.fused.key).copied());
            kept.push(c);
            if kept.len() == wanted {
                break;
            }
        }
        kept
    }

    /// Why a hit's file is not the project's own writing, if it is not: it lies under a vendored
    /// directory, it is a translation catalog (its messages in another language, which folding
    /// cannot match with the source's), or it is code whose first lines say a tool generated it
    /// or that sits beside the grammar it is generated from (`parse.c` and `parse.y`). Generated
    /// prose (an Info file, a man page) is left to duplicate folding: it answers as well as its
    /// source does.
    fn third_party(&self, hit: &Hit) -> Option<&'static str> {
        if crate::ingest::is_vendored_path(&hit.path) {
            return Some("vendored");
        }
        if crate::ingest::is_translation_path(&hit.path) {
            return Some("translation");
        }
        let docs = &self.meta.docs;
        let generated = hit.kind == "code"
            && (docs.get(&hit.doc).is_some_and(|e| e.generated)
                || crate::ingest::grammar_sources(&hit.doc).iter().any(|g| docs.contains_key(g)));
        generated.then_some("generated")
    }

    /// Whether a local hit's memory record is superseded, and its category and creation time.
    fn memory_facts(&self, hit: &Hit) -> (bool, Option<(String, i64)>) {
        if hit.kind != "memory" {
            return (false, None);
        }
        let superseded = self.meta.superseded.iter().any(|(doc, title)| *doc == hit.doc && *title == hit.title);
        let created = self.meta.memory_created.iter().find(|(doc, title, _, _)| *doc == hit.doc && *title == hit.title);
        (superseded, created.map(|(_, _, category, at)| (category.clone(), *at)))
    }

    /// Days since a memory record was `created` (its category and time), when its category
    /// decays and its time is known.
    fn memory_age_days(&self, created: Option<&(String, i64)>) -> Option<f32> {
        let config = &self.settings.search;
        let (category, created) = created?;
        if !config.memory_decay_categories.iter().any(|c| crate::memory::category::same(c, category)) {
            return None;
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs() as i64;
        Some((now - created).max(0) as f32 / 86_400.0)
    }

    /// Reorders candidates (in fused order) by the learned fusion's score, which becomes their
    /// fused score: what the rerank stage blends and labels compare.
    fn learned(&self, snapshot: Option<&Snapshot>, query: &str, intent: &IntentResult, candidates: &mut [Candidate]) {
        let (terms, weights) = term_weights(snapshot, query);
        let places: Vec<(Option<ChunkAddress>, &Hit)> = candidates.iter().map(|c| (c.address, &c.hit)).collect();
        let found = occurring(snapshot, &terms, &places);
        let signals: Vec<fuse::Signals> = candidates
            .iter()
            .zip(found)
            .map(|(c, found)| fuse::Signals {
                lexical_rank: c.hit.lexical_rank,
                bm25: c.hit.bm25,
                vector_rank: c.hit.vector_rank,
                cosine: c.hit.cosine,
                coverage: share(&weights, &|t| found[t]),
                fused: c.fused.score,
            })
            .collect();
        for (c, x) in candidates.iter_mut().zip(fuse::learned_features(&signals, intent)) {
            let p = fuse::learned_probability(&x, &self.settings.fuse);
            // The boosts (tests, expansion matches, superseded records) reach the model only
            // through the boosted fused score, one feature among 14; applied to its probability
            // as well, they hold for its order as they hold for RRF's (docs/quality.md, "Learned fusion").
            (c.fused.score, c.hit.score) = (p * c.factor, p * c.factor);
            c.learned = Some((x, p));
        }
        candidates.sort_by(|a, b| b.fused.score.total_cmp(&a.fused.score).then(a.fused.key.cmp(&b.fused.key)));
    }

    /// The first `k` candidates as hits, with snippets and (when asked) their explanation.
    fn hits(&self, candidates: Vec<Candidate>, req: &SearchRequest, query: &str, weights: Weights) -> Vec<Hit> {
        let snippet_chars = self.settings.search.snippet_chars;
        candidates
            .into_iter()
            .take(req.k)
            .map(|c| {
                let mut hit = c.hit;
                if req.snippets {
                    // An index written before secrets were redacted at ingest may still hold some.
                    hit.snippet = snippet(&crate::secrets::redacted(&hit.text), query, snippet_chars);
                }
                if req.explain {
                    hit.explain = Some(Explain {
                        legs: c.fused.legs,
                        weights,
                        rrf: c.fused.rrf,
                        consensus: c.fused.consensus,
                        boosts: c.boosts,
                        rerank_logit: c.logit,
                        learned: c.learned.map(|(x, probability)| crate::hit::LearnedExplain {
                            features: fuse::FEATURES.iter().copied().zip(x).collect(),
                            probability,
                        }),
                        final_score: hit.score,
                    });
                }
                hit
            })
            .collect()
    }

    /// Confidence: the query-level evidence, the abstention verdict and each hit's label (the
    /// score-ratio labels of `context::labels::label` when abstention is off).
    fn labels(
        &self,
        snapshot: Option<&Snapshot>,
        query: &str,
        intent: &IntentResult,
        (results, addresses): (&mut [Hit], &[Option<ChunkAddress>]),
        cosine_gap: Option<f32>,
        report_evidence: bool,
    ) -> (Option<Evidence>, Option<crate::context::abstain::Verdict>) {
        let measured = if report_evidence { results.len() } else { self.settings.abstain.measured_hits };
        let evidence = self.evidence(snapshot, query, results, &addresses[..measured.min(addresses.len())], cosine_gap);
        let verdict =
            crate::context::abstain::calibrate(results, &evidence, intent.conversational, &self.settings.abstain);
        if verdict.is_none() {
            context::label(results, &self.settings.tier);
        }
        (report_evidence.then_some(evidence), verdict)
    }

    /// The query-level evidence of a ranked result list (and the vector leg's cosine gap); sets
    /// the coverage of the hits at `measured` (the first hits' places in the index).
    fn evidence(
        &self,
        snapshot: Option<&Snapshot>,
        query: &str,
        results: &mut [Hit],
        measured: &[Option<ChunkAddress>],
        cosine_gap: Option<f32>,
    ) -> Evidence {
        let config = &self.settings.abstain;
        let (terms, weights) = term_weights(snapshot, query);
        let share = |keep: &dyn Fn(usize) -> bool| share(&weights, keep);
        let mut seen = vec![false; terms.len()];
        let places: Vec<(Option<ChunkAddress>, &Hit)> = measured.iter().copied().zip(results.iter()).collect();
        let found = occurring(snapshot, &terms, &places);
        for (i, (h, found)) in results.iter_mut().zip(found).enumerate() {
            h.coverage = Some(share(&|t| found[t]));
            if i < config.coverage_hits {
                seen.iter_mut().zip(&found).for_each(|(s, f)| *s |= f);
            }
        }
        Evidence {
            top_cosine: results.iter().filter_map(|h| h.cosine).reduce(f32::max),
            second_cosine: {
                let mut c: Vec<f32> = results.iter().filter_map(|h| h.cosine).collect();
                c.sort_by(|a, b| b.total_cmp(a));
                c.get(1).copied()
            },
            top_bm25: results.iter().filter_map(|h| h.bm25).reduce(f32::max),
            coverage: share(&|t| seen[t]),
            unseen: share(&|t| weights[t].0 == 0),
            // The fused ranks are already on the hit: no second list of each leg's top keys.
            agreement: results.first().is_some_and(|b| {
                let within = |rank: Option<usize>| rank.is_some_and(|r| r <= config.agreement_rank);
                within(b.lexical_rank) && within(b.vector_rank)
            }),
            terms: terms.len(),
            best_coverage: results.iter().take(config.measured_hits).filter_map(|h| h.coverage).fold(0.0, f32::max),
            cosine_gap,
        }
    }

    /// Reranks the first `[rerank] top_k` candidates in place (scores blended, order re-sorted),
    /// within the deadline; `None` when no reranker is configured.
    fn rerank(&self, query: &str, candidates: &mut [Candidate]) -> Option<RerankReport> {
        let config = &self.settings.rerank;
        let started = Instant::now();
        let Some(reranker) = &self.reranker else {
            return self.rerank_error.as_ref().map(|reason| RerankReport {
                model: String::new(),
                applied: false,
                reason: Some(reason.clone()),
                pairs: 0,
                ms: 0.0,
            });
        };
        let n = candidates.len().min(config.top_k);
        let passages: Vec<String> =
            candidates[..n].iter().map(|c| format!("{}\n{}", c.hit.title, c.hit.text)).collect();
        let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
        let outcome =
            rerank::score_within(reranker.as_ref(), query, &refs, config, &|| started.elapsed().as_millis() as u64);
        let applied = outcome.is_ok();
        let reason = outcome.as_ref().err().cloned();
        if let Ok(scores) = outcome {
            let fused: Vec<f32> = candidates.iter().map(|c| c.hit.score).collect();
            // Candidates past top_k keep their fused share only, so they stay below reranked ones.
            let mut all_logits = scores.clone();
            all_logits.resize(candidates.len(), f32::NEG_INFINITY);
            let blended = rerank::blend(&fused, &all_logits, config.weight);
            for (i, c) in candidates.iter_mut().enumerate() {
                c.hit.score = blended[i];
                c.logit = scores.get(i).copied().filter(|_| i < n);
            }
            candidates.sort_by(|a, b| b.hit.score.total_cmp(&a.hit.score).then(a.fused.key.cmp(&b.fused.key)));
        }
        Some(RerankReport { model: reranker.id().to_string(), applied, reason, pairs: n, ms: ms(started) })
    }

    /// Model tokens in `text` (an estimate when no model is loaded).
    pub(crate) fn count_tokens(&self, text: &str) -> usize {
        match &self.embedder {
            Some(e) => e.count_tokens(text),
            None => crate::embed::approx_tokens(text),
        }
    }

    /// The context block for a response: tiered by confidence, within the token budget.
    pub fn context(&self, resp: &SearchResponse) -> ContextBlock {
        self.context_with(resp, &self.settings.context)
    }

    /// [`Engine::context`] with other context settings (the hook shrinks the budget to fit).
    pub(crate) fn context_with(&self, resp: &SearchResponse, config: &crate::config::ContextConfig) -> ContextBlock {
        let count = |s: &str| self.count_tokens(s);
        let neighbours = |h: &Hit| self.neighbours(h, config.neighbours).unwrap_or_default();
        context::context(&resp.query, &resp.results, config, &neighbours, &count)
    }

    /// Up to `n` chunks on each side of a hit in its document, in line order.
    pub fn neighbours(&self, hit: &Hit, n: usize) -> Result<Vec<Hit>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut chunks = match &self.reader {
            Some(reader) => reader.snapshot().chunks_of(&hit.doc)?,
            None => self.remote_chunks_of(&hit.doc)?,
        };
        chunks.sort_by_key(|c| (c.start_line, c.end_line));
        let before = chunks.iter().filter(|c| c.end_line < hit.start_line).rev().take(n).cloned();
        let after = chunks.iter().filter(|c| c.start_line > hit.end_line).take(n).cloned();
        let mut out: Vec<Hit> = before.collect();
        out.reverse();
        out.extend(after);
        Ok(out)
    }

    fn timed<T>(&self, run: bool, f: impl FnOnce() -> T) -> (Option<T>, f64) {
        if !run {
            return (None, 0.0);
        }
        let t = Instant::now();
        let out = f();
        (Some(out), ms(t))
    }

    /// The query's embedding and the milliseconds it took: what the local vector leg and the
    /// backend's search with. `Err(reason)` when there is no model or it failed (the caller
    /// degrades: BM25 answers alone).
    fn embed_query(&self, query: &str) -> std::result::Result<(Vec<f32>, f64), String> {
        let embedder = self
            .embedder
            .as_ref()
            .ok_or_else(|| self.embed_error.clone().unwrap_or_else(|| "no embedding model".into()))?;
        let t = Instant::now();
        let q = embedder.embed_query(query).map_err(|e| e.to_string())?;
        Ok((q, ms(t)))
    }

    /// The vector leg; `Err(reason)` when there is no model or it failed (the caller degrades).
    fn vector_leg(&self, query: &str, n: usize) -> std::result::Result<(Vec<LegHit>, Vec<f32>, f64), String> {
        let (q, embed_ms) = self.embed_query(query)?;
        let vectors = &self.vectors()?.store;
        let hits = vectors
            .search(&q, n)
            .into_iter()
            .enumerate()
            .map(|(rank, (row, score))| LegHit { key: vectors.vids[row], rank: rank + 1, score })
            .collect();
        Ok((hits, q, embed_ms))
    }
}

/// The query's distinct analyzed terms, and for each its document frequency and IDF weight.
/// Without a local index the frequencies are unknown: every term weighs the same and none counts
/// as unseen (said in the degraded reason, [`remote::LEFT_OUT`]).
fn term_weights(snapshot: Option<&Snapshot>, query: &str) -> (Vec<String>, Vec<(u64, f32)>) {
    let mut terms = bm25::terms(query);
    terms.sort();
    terms.dedup();
    let Some(snapshot) = snapshot else {
        let weights = vec![(1, 1.0); terms.len()];
        return (terms, weights);
    };
    let docs = snapshot.num_docs().max(1) as f32;
    let weights = terms
        .iter()
        .map(|t| {
            let df = snapshot.doc_freq(t);
            (df, (1.0 + (docs - df as f32 + 0.5) / (df as f32 + 0.5)).ln())
        })
        .collect();
    (terms, weights)
}

/// For each hit, which of the analysed `terms` its title, path or body holds: from the local
/// index's postings when it has every hit, else by analysing the hits' texts (the same answer).
fn occurring(snapshot: Option<&Snapshot>, terms: &[String], hits: &[(Option<ChunkAddress>, &Hit)]) -> Vec<Vec<bool>> {
    let addresses: Option<Vec<ChunkAddress>> = hits.iter().map(|(a, _)| *a).collect();
    match (snapshot, addresses) {
        (Some(snapshot), Some(addresses)) => snapshot.occurring(terms, &addresses),
        _ => hits.iter().map(|(_, h)| bm25::occurring(terms, &[&h.title, &h.path, &h.text])).collect(),
    }
}

/// The share of the query's term weight held by the terms `keep` (an index into the terms) picks.
fn share(weights: &[(u64, f32)], keep: &dyn Fn(usize) -> bool) -> f32 {
    let total: f32 = weights.iter().map(|w| w.1).sum();
    if total > 0.0 {
        weights.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, w)| w.1).sum::<f32>() / total
    } else {
        0.0
    }
}

/// Whether the query names a vendored or generated hit's file: its file name, or, for vendored
/// code, a directory of its path below the project's top one (the vendored library's own
/// folder; a generated file's folder is the project's own, and naming it names no generated file).
fn names(query: &str, hit: &Hit) -> bool {
    let query = query.to_lowercase();
    let words: Vec<&str> = query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')).collect();
    let path = hit.path.to_lowercase();
    let mut parts = path.split('/').filter(|p| !p.is_empty());
    let file = parts.next_back().unwrap_or_default();
    let vendored = crate::ingest::is_vendored_path(&hit.path);
    (file.len() > 3 && query.contains(file))
        || (vendored && parts.skip(1).any(|dir| dir.len() > 2 && words.contains(&dir)))
}

/// Whether a hit defines a symbol, or lives at a path, that the query names.
fn expansion_match(intent: &IntentResult, hit: &Hit) -> bool {
    intent.symbols.iter().any(|s| hit.symbols.iter().any(|h| h.eq_ignore_ascii_case(s)))
        || intent.paths.iter().any(|p| hit.path.ends_with(p.as_str()))
        || intent.modules.iter().any(|m| hit.title.ends_with(m.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cosine_gap_is_the_vector_legs_best_cosine_over_its_nth() {
        let legs = |scores: &[f32]| Legs {
            vector: Some(
                scores.iter().enumerate().map(|(i, &score)| LegHit { key: i as u64, rank: i + 1, score }).collect(),
            ),
            ..Legs::default()
        };
        let gap = legs(&[0.9, 0.8, 0.7, 0.6]).cosine_gap(3).unwrap();
        assert!((gap - 0.2).abs() < 1e-6, "{gap}");
        assert_eq!(legs(&[0.9, 0.5]).cosine_gap(10), None, "fewer hits than the rank");
        assert_eq!(legs(&[]).cosine_gap(10), None);
        assert_eq!(Legs::default().cosine_gap(10), None, "no vector leg, no gap");
    }

    #[test]
    fn a_k_out_of_bounds_is_refused_before_any_leg_allocates_for_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
        let index = dir.path().join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(crate::HashEmbedder::new(16));
        let source = crate::ingest::Source::Dir(dir.path().to_path_buf());
        crate::index::build(&index, &source, &Settings::default(), embedder.as_ref(), &Default::default()).unwrap();
        let engine = Engine::with_embedder(&index, Settings::default(), Some(embedder), None).unwrap();
        for k in [0, 1001, 1_000_000_000_000, usize::MAX] {
            let err = engine.search_with(&SearchRequest::new("sessions", k, Mode::Hybrid)).unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)) && err.to_string().contains("allowed 1..=1000"), "{err}");
        }
        assert_eq!(engine.search_with(&SearchRequest::new("sessions", 1000, Mode::Hybrid)).unwrap().results.len(), 1);
    }

    /// The hashing embedder's id, but every call fails: an index run stopped while embedding.
    struct Stopped(crate::HashEmbedder);

    impl Embedder for Stopped {
        fn id(&self) -> &str {
            self.0.id()
        }
        fn dimensions(&self) -> usize {
            self.0.dimensions()
        }
        fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>> {
            Err(Error::Inference("stopped while embedding".into()))
        }
    }

    /// Issue 36: a record captured a moment ago was the BM25 top hit yet missing from hybrid
    /// results while its reindex embedded it (the text generation is live a minute before the
    /// vectors).
    #[test]
    fn a_chunk_without_a_vector_yet_is_ranked_by_the_vector_leg_too() {
        let dir = tempfile::tempdir().unwrap();
        let memory = dir.path().join(".claude/memory");
        std::fs::create_dir_all(&memory).unwrap();
        let record = |title: &str, content: &str| serde_json::json!({"title": title, "content": content}).to_string();
        for i in 0..40 {
            let content = format!("Session store note {i}: the deploy keeps sessions in redis shard {i}.");
            std::fs::write(memory.join(format!("note-{i}.json")), record(&format!("Sessions {i}"), &content)).unwrap();
        }
        let index = dir.path().join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(crate::HashEmbedder::new(16));
        let source = crate::ingest::Source::Dir(dir.path().to_path_buf());
        crate::index::build(&index, &source, &Settings::default(), embedder.as_ref(), &Default::default()).unwrap();
        let fresh = "The websocket heartbeat timeout is 45 seconds since the proxy drops idle sockets.";
        std::fs::write(memory.join("fresh.json"), record("Heartbeat timeout", fresh)).unwrap();
        let stopped = Stopped(crate::HashEmbedder::new(16));
        assert!(crate::index::build(&index, &source, &Settings::default(), &stopped, &Default::default()).is_err());
        let query = "websocket heartbeat timeout proxy idle sockets sessions deploy";
        let search = |embed_fresh: usize| {
            let mut settings = Settings::default();
            settings.search.embed_fresh = embed_fresh;
            let engine = Engine::with_embedder(&index, settings, Some(embedder.clone()), None).unwrap();
            let bm25 = engine.search_with(&SearchRequest::new(query, 10, Mode::Bm25)).unwrap().results;
            assert!(bm25[0].path.ends_with("fresh.json"), "the text is live: {:?}", bm25[0].path);
            engine.search_with(&SearchRequest::new(query, 10, Mode::Hybrid)).unwrap().results
        };
        let before = search(0);
        let seen = before.iter().find(|h| h.path.ends_with("fresh.json"));
        assert!(seen.is_none_or(|h| h.cosine.is_none() && h.vector_rank.is_none()), "{seen:?}");
        let after = search(Settings::default().search.embed_fresh);
        let at = |hits: &[Hit]| hits.iter().position(|h| h.path.ends_with("fresh.json")).unwrap_or(usize::MAX);
        let hit = &after[at(&after)];
        assert!(hit.cosine.is_some_and(|c| c > 0.3) && hit.vector_rank.is_some(), "{hit:?}");
        assert!(at(&after) < at(&before), "found by both legs, it ranks higher: {} then {}", at(&before), at(&after));
    }

    #[test]
    fn recency_decay_lowers_old_records_of_the_decaying_categories_only_when_turned_on() {
        let dir = tempfile::tempdir().unwrap();
        let memory = dir.path().join(".claude/memory");
        std::fs::create_dir_all(&memory).unwrap();
        let record = |category: &str, created: &str| {
            serde_json::json!({"title": format!("Redis sessions ({category})"), "category": category,
                "content": "Sessions live in Redis with a one hour expiry.", "created": created})
            .to_string()
        };
        std::fs::write(memory.join("old-session.json"), record("session", "2020-01-01T00:00:00Z")).unwrap();
        std::fs::write(memory.join("old-decision.json"), record("decision", "2020-01-01T00:00:00Z")).unwrap();
        let index = dir.path().join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(crate::HashEmbedder::new(16));
        let source = crate::ingest::Source::Dir(dir.path().to_path_buf());
        crate::index::build(&index, &source, &Settings::default(), embedder.as_ref(), &Default::default()).unwrap();
        let search = |half_life: f32| {
            let mut settings = Settings::default();
            settings.search.memory_half_life_days = half_life;
            let engine = Engine::with_embedder(&index, settings, Some(embedder.clone()), None).unwrap();
            let mut req = SearchRequest::new("redis sessions expiry", 2, Mode::Hybrid);
            req.explain = true;
            engine.search_with(&req).unwrap().results
        };
        let off = search(0.0);
        assert!(off.iter().all(|h| h.explain.as_ref().unwrap().boosts.is_empty()), "off by default");
        let on = search(30.0);
        let session = on.iter().find(|h| h.path.contains("old-session")).unwrap();
        let decision = on.iter().find(|h| h.path.contains("old-decision")).unwrap();
        assert!(session.explain.as_ref().unwrap().boosts.iter().any(|b| b.starts_with("recency x")), "{session:?}");
        assert!(decision.explain.as_ref().unwrap().boosts.is_empty(), "decisions do not decay by default");
        assert_eq!(on[0].path, decision.path, "the decayed record ranks below");
    }

    #[test]
    fn learned_fusion_reads_coverage_from_the_postings_as_analysing_the_texts_would_and_explains_itself() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cache.md"), "# Caching sessions\n\nThe session cache expires entries.\n")
            .unwrap();
        std::fs::write(
            dir.path().join("auth.rs"),
            "/// Checks tokens.\nfn verify_token(t: &str) -> bool { t.len() > 3 }\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.txt"), "Redis holds the queue; sessions are elsewhere.\n").unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_cache.py"),
            "def test_cached_sessions_expire():\n    assert cache.expired(session)\n",
        )
        .unwrap();
        let index = dir.path().join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(crate::HashEmbedder::new(16));
        let source = crate::ingest::Source::Dir(dir.path().to_path_buf());
        crate::index::build(&index, &source, &Settings::default(), embedder.as_ref(), &Default::default()).unwrap();
        let mut settings = Settings::default();
        settings.fuse.method = FuseMethod::Learned;
        let engine = Engine::with_embedder(&index, settings, Some(embedder), None).unwrap();
        let snapshot = engine.reader.as_ref().unwrap().snapshot();
        let (terms, _) = term_weights(Some(&snapshot), "how do cached sessions expire? verifyToken redis");
        let chunks: Vec<(u64, Hit)> = snapshot.all().collect::<Result<_>>().unwrap();
        let addresses: Vec<ChunkAddress> = chunks.iter().map(|(k, _)| snapshot.address_of(*k).unwrap()).collect();
        let from_postings = snapshot.occurring(&terms, &addresses);
        for ((_, hit), found) in chunks.iter().zip(&from_postings) {
            assert_eq!(*found, bm25::occurring(&terms, &[&hit.title, &hit.path, &hit.text]), "{}", hit.path);
        }
        assert!(
            from_postings.iter().any(|f| f.iter().any(|x| *x)) && from_postings.iter().any(|f| !f.iter().all(|x| *x))
        );

        let mut req = SearchRequest::new("how do cached sessions expire?", 4, Mode::Hybrid);
        req.explain = true;
        let r = engine.search_with(&req).unwrap();
        let explained = r.results[0].explain.as_ref().and_then(|e| e.learned.as_ref()).expect("learned features");
        assert_eq!(explained.features.len(), fuse::FEATURES.len());
        // The score it is ranked by is the probability times the boosts' factors: a test file,
        // the query not being about tests, keeps [fuse] test_factor (0.8) under learned fusion too.
        for hit in &r.results {
            let explain = hit.explain.as_ref().unwrap();
            let probability = explain.learned.as_ref().unwrap().probability;
            if hit.path.starts_with("tests/") {
                assert_eq!(explain.boosts, ["test file x0.8"], "{hit:?}");
                assert!((hit.score - probability * 0.8).abs() < 1e-6, "{hit:?}");
            } else {
                assert!(explain.boosts.is_empty() && hit.score == probability, "{hit:?}");
            }
        }
        assert!(r.results.iter().any(|h| h.path.starts_with("tests/")), "{:?}", r.results);
        let coverage = explained.features.iter().find(|(n, _)| *n == "coverage").unwrap().1;
        assert!(coverage > 0.0 && coverage <= 1.0, "{coverage}");
    }

    /// An engine over `files` (path, text) with the hashing embedder and `settings`.
    fn engine_over(files: &[(&str, &str)], settings: Settings) -> (tempfile::TempDir, Engine) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let at = dir.path().join(path);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
        let index = dir.path().join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(crate::HashEmbedder::new(64));
        let source = crate::ingest::Source::Dir(dir.path().to_path_buf());
        crate::index::build(&index, &source, &settings, embedder.as_ref(), &Default::default()).unwrap();
        let engine = Engine::with_embedder(&index, settings, Some(embedder), None).unwrap();
        (dir, engine)
    }

    fn paths(engine: &Engine, query: &str) -> Vec<(String, Vec<String>)> {
        let r = engine.search_with(&SearchRequest::new(query, 10, Mode::Bm25)).unwrap();
        r.results.into_iter().map(|h| (h.path, h.also_in)).collect()
    }

    #[test]
    fn a_copy_of_a_better_hit_in_another_file_is_folded_into_it_and_named() {
        let manual = "the scanner keeps the number of the current line read from its input in the global \
            variable yylineno; the option is implied by lex compatibility mode and costs a little speed \
            because every newline matched must be counted by the generated tables";
        let files = [
            ("doc/manual.texi", format!("@node Options\n@item yylineno\n{manual}\n")),
            ("doc/manual.info", format!("File: manual.info\n\n'yylineno'\n     {manual}\n")),
            ("doc/other.md", "# Speed\n\nThe line number is kept in a variable; counting costs speed.\n".into()),
        ];
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let (_dir, engine) = engine_over(&files, Settings::default());
        let found = paths(&engine, "current line number variable yylineno");
        assert_eq!(found.len(), 2, "{found:?}");
        let (first, also) = &found[0];
        assert!(first.starts_with("doc/manual."), "{found:?}");
        let copy = if first.ends_with(".texi") { "doc/manual.info" } else { "doc/manual.texi" };
        assert_eq!(also, &[copy.to_string()], "{found:?}");
        assert_eq!(found[1], ("doc/other.md".to_string(), Vec::new()));

        let mut off = Settings::default();
        off.search.duplicate_overlap = 0.0;
        let (_dir, engine) = engine_over(&files, off);
        let found = paths(&engine, "current line number variable yylineno");
        assert_eq!(found.len(), 3, "0 keeps every copy: {found:?}");
        assert!(found.iter().all(|(_, also)| also.is_empty()), "{found:?}");
    }

    #[test]
    fn vendored_and_generated_files_rank_below_the_projects_own_unless_named() {
        // The generated and vendored files say the words more often: without the factor they lead.
        let rule = "the default rule echoes every unmatched character to the output";
        let files = [
            ("src/parse.y", format!("%%\nstmt: pattern action ;\n/* {rule} */\n")),
            ("src/parse.c", format!("/* {rule} */\n/* {rule} */\nint yyparse(void) {{ return 0; }}\n")),
            ("src/echo.c", format!("/* {rule} */\nvoid echo(void) {{}}\n")),
            ("vendor/libecho/echo.c", format!("/* {rule} */\n/* {rule} */\nvoid vecho(void) {{}}\n")),
            (
                "src/gen/tables.c",
                format!("/* Code generated by mktables. DO NOT EDIT. */\n/* {rule} */\n/* {rule} */\n"),
            ),
            ("po/fi.po", format!("#: src/echo.c:2\nmsgid \"{rule}\"\nmsgstr \"oletussääntö kaiuttaa {rule}\"\n")),
        ];
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let mut settings = Settings::default();
        settings.search.duplicate_overlap = 0.0;
        let query = "default rule echoes unmatched characters";
        let (_dir, engine) = engine_over(&files, settings.clone());
        let order: Vec<String> = paths(&engine, query).into_iter().map(|(p, _)| p).collect();
        let own = |p: &String| p == "src/parse.y" || p == "src/echo.c";
        assert!(order.len() == 6 && order[..2].iter().all(own), "{order:?}");

        // Named by file or by the vendored library's folder, it is not held back.
        let boosts = |query: &str, path: &str| {
            let mut req = SearchRequest::new(query, 10, Mode::Bm25);
            req.explain = true;
            let r = engine.search_with(&req).unwrap();
            r.results.into_iter().find(|h| h.path == path).unwrap().explain.unwrap().boosts
        };
        for (named, path, why) in [
            ("in parse.c", "src/parse.c", "generated x0.6"),
            ("in libecho", "vendor/libecho/echo.c", "vendored x0.6"),
            ("in fi.po", "po/fi.po", "translation x0.6"),
        ] {
            assert_eq!(boosts(query, path), [why]);
            assert!(!boosts(&format!("{query} {named}"), path).iter().any(|b| b == why), "{named}");
        }
        // A generated file's folder is the project's own: naming it names no generated file.
        assert_eq!(boosts(&format!("{query} in gen"), "src/gen/tables.c"), ["generated x0.6"]);

        settings.fuse.third_party_factor = 1.0;
        let (_dir, engine) = engine_over(&files, settings);
        let order: Vec<String> = paths(&engine, query).into_iter().map(|(p, _)| p).collect();
        assert!(!order[..2].iter().all(own), "the factor is what holds them back: {order:?}");
    }
}
