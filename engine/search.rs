//! The one search path. [`Engine::search`] is what the CLI, `engine eval` and the hook call; no
//! other code scores documents. It reads top to bottom: intent → BM25 ‖ vector (‖ symbol) →
//! fusion → expansion boost → dedup → optional rerank → confidence labels → hits.
//! [`Engine::context`] turns a response into the tiered context block an LLM gets.

use crate::config::{Mode, Settings};
use crate::embed::{dot, Embedder, OnnxEmbedder};
use crate::error::{Error, Result};
use crate::fuse::{self, Fused, Leg, LegHit};
pub use crate::hit::{snippet, Confidence, Evidence, Explain, Hit};
use crate::index::bm25::{self, Fields};
use crate::index::store::{self, Meta};
use crate::index::vector::VectorStore;
use crate::intent::{self, IntentResult};
use crate::models::Models;
use crate::rerank::{self, OnnxCrossEncoder, RerankReport, Reranker};
use crate::tier::{self, ContextBlock};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tantivy::collector::TopDocs;
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, IndexReader, Searcher, TantivyDocument, Term};

/// One query.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: String,
    pub k: usize,
    pub mode: Mode,
    pub explain: bool,
    /// Also return the query-level [`Evidence`] and every hit's coverage (abstention always
    /// measures them on the first hits; this analyses every hit's text).
    pub evidence: bool,
    /// Overrides `[rerank] mode` for this query.
    pub rerank: Option<crate::config::RerankMode>,
}

impl SearchRequest {
    pub fn new(query: impl Into<String>, k: usize, mode: Mode) -> SearchRequest {
        SearchRequest { query: query.into(), k, mode, explain: false, evidence: false, rerank: None }
    }
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub intent: f64,
    pub embed: f64,
    pub bm25: f64,
    pub vector: f64,
    pub symbol: f64,
    pub fuse: f64,
    pub rerank: f64,
    /// Query-level evidence and abstention.
    pub evidence: f64,
    pub total: f64,
}

/// Hits whose text counts for [`Evidence::coverage`].
const COVERAGE_HITS: usize = 3;
/// Hits whose coverage is measured on every query (for [`Evidence::best_coverage`]).
const MEASURED_HITS: usize = 10;
/// Rank within a leg that counts as the leg agreeing on a hit.
const AGREEMENT_RANK: usize = 10;

/// The answer to one query.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    pub query: String,
    pub mode: Mode,
    pub intent: IntentResult,
    /// True when the vector leg could not run (no model, or it failed) and BM25 answered alone.
    pub degraded: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded_reason: Option<String>,
    /// What the rerank stage did, when it was triggered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankReport>,
    pub results: Vec<Hit>,
    /// When the request asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// Whether anything answers the query ([`crate::abstain`]); `None` when abstention is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::abstain::Verdict>,
    pub timings_ms: Timings,
}

/// An open index: tantivy reader, vectors, metadata, and (unless degraded) the embedder.
pub struct Engine {
    pub dir: PathBuf,
    pub settings: Settings,
    pub meta: Meta,
    generation_dir: PathBuf,
    reader: IndexReader,
    fields: Fields,
    /// Loaded on first use (BM25-only engines never read them) or, by `open`, while the model loads.
    vectors: std::sync::OnceLock<std::result::Result<Vectors, String>>,
    /// Search vectors through the HNSW graph (when the generation has one) rather than exactly.
    use_graph: bool,
    embedder: Option<Arc<dyn Embedder>>,
    embed_error: Option<String>,
    reranker: Option<Arc<dyn Reranker>>,
    rerank_error: Option<String>,
}

/// The vectors of a generation and, for the cosine of any hit, each vector id's row.
struct Vectors {
    store: VectorStore,
    rows: HashMap<u64, usize>,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

impl Engine {
    /// Opens the index at `dir` with the default embedding model. If the model cannot load, the
    /// engine still opens and answers from BM25 (responses say `degraded`, with the reason).
    /// The model is loaded here rather than at the first query: loaded after the index, query
    /// embedding measured ~1.3 ms slower at p50 (`cargo bench --bench search`).
    pub fn open(dir: &Path, settings: Settings) -> Result<Engine> {
        Engine::open_with(dir, settings, true)
    }

    /// [`Engine::open`] for a process that answers one query and exits (the CLI, the hook without
    /// its daemon): vectors are scanned exactly instead of loading the HNSW graph, which costs
    /// far more to load than an exact scan (16k vectors: graph load ~0.3 s, scan 1.7 ms).
    pub fn open_one_shot(dir: &Path, settings: Settings) -> Result<Engine> {
        Engine::open_with(dir, settings, false)
    }

    fn open_with(dir: &Path, settings: Settings, graph: bool) -> Result<Engine> {
        let root = dir.parent().unwrap_or(dir);
        // The model and the vectors (with the HNSW graph) load in parallel: each takes a few
        // hundred milliseconds, and a cold process (the hook without its daemon) pays both.
        let (embedder, engine) = rayon::join(
            || {
                Models::locate(Some(root))
                    .and_then(|m| OnnxEmbedder::load(&m, &settings.embed))
                    .map(|e| Arc::new(e) as Arc<dyn Embedder>)
            },
            || {
                Engine::with_embedder(dir, settings.clone(), None, None).map(|mut e| {
                    e.use_graph &= graph;
                    let _ = e.vectors();
                    e
                })
            },
        );
        let mut engine = engine?;
        match embedder {
            Ok(e) => {
                engine.meta.check_compatible(dir, Some(e.id()))?;
                engine.embedder = Some(e);
            }
            Err(err) => engine.embed_error = Some(err.to_string()),
        }
        Ok(engine.with_configured_reranker())
    }

    fn vectors(&self) -> std::result::Result<&Vectors, String> {
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

    /// Loads the configured cross-encoder, if any and if reranking is not off. A reranker that
    /// cannot load is reported in every response that wanted it; search still answers.
    pub fn with_configured_reranker(mut self) -> Engine {
        if self.settings.rerank.mode == crate::config::RerankMode::Never {
            return self;
        }
        let root = self.dir.parent().unwrap_or(&self.dir).to_path_buf();
        let Ok(models) = Models::locate(Some(&root)) else { return self };
        let loaded: Result<Arc<dyn Reranker>> = if self.settings.rerank.model.as_deref() == Some(rerank::MAXSIM) {
            rerank::MaxSimReranker::load(&models, &self.settings.rerank).map(|r| Arc::new(r) as Arc<dyn Reranker>)
        } else {
            let Some(dir) = OnnxCrossEncoder::configured_dir(&models, &self.settings.rerank) else { return self };
            OnnxCrossEncoder::load(&models, &dir, self.settings.rerank.max_length)
                .map(|r| Arc::new(r) as Arc<dyn Reranker>)
        };
        match loaded {
            Ok(r) => self.reranker = Some(r),
            Err(e) => self.rerank_error = Some(format!("reranker unavailable: {e}")),
        }
        self
    }

    /// Uses this reranker (tests, programs bringing their own).
    pub fn with_reranker(mut self, reranker: Arc<dyn Reranker>) -> Engine {
        self.reranker = Some(reranker);
        self.rerank_error = None;
        self
    }

    /// Opens the index without loading a model, for callers that only run BM25 queries.
    pub fn open_lexical(dir: &Path, settings: Settings) -> Result<Engine> {
        Engine::with_embedder(dir, settings, None, Some("opened without an embedding model (BM25 only)".into()))
    }

    /// Loads the embedding model now, so a long-lived process pays the load before its first query.
    pub fn warm_up(&self) -> Result<()> {
        match &self.embedder {
            Some(e) => e.embed_query("warm up").map(|_| ()),
            None => Ok(()),
        }
    }

    /// Opens the index with a given embedder (or none, with the reason).
    pub fn with_embedder(
        dir: &Path,
        settings: Settings,
        embedder: Option<Arc<dyn Embedder>>,
        embed_error: Option<String>,
    ) -> Result<Engine> {
        let generation_dir =
            store::current_generation(dir)?.ok_or_else(|| Error::IndexMissing { path: dir.to_path_buf() })?;
        let meta = store::read_meta(&generation_dir)?;
        let use_graph = meta.graph;
        meta.check_compatible(dir, embedder.as_ref().map(|e| e.id()))?;
        let (_, reader) = bm25::open_reader(&generation_dir)?;
        let (_, fields) = bm25::schema();
        Ok(Engine {
            dir: dir.to_path_buf(),
            settings,
            meta,
            generation_dir,
            reader,
            fields,
            vectors: std::sync::OnceLock::new(),
            use_graph,
            embedder,
            embed_error,
            reranker: None,
            rerank_error: None,
        })
    }

    /// The live generation this engine reads.
    pub fn generation_dir(&self) -> &Path {
        &self.generation_dir
    }

    /// The embedder, when loaded.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Answers one query.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let started = Instant::now();
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
        let n = self.settings.search.top_n.max(req.k);
        let mut timings = Timings::default();
        let t = Instant::now();
        let intent = intent::classify(query);
        timings.intent = ms(t);
        let searcher = self.reader.searcher();

        // The legs: BM25 and vector concurrently; the symbol leg when the query names identifiers.
        let want_lex = req.mode != Mode::Vector;
        let want_vec = req.mode != Mode::Bm25;
        let ((lexical, lex_ms), (vector, vec_ms)) = rayon::join(
            || self.timed(want_lex, || self.lexical_leg(&searcher, query, n)),
            || self.timed(want_vec, || self.vector_leg(query, n)),
        );
        timings.bm25 = lex_ms;
        let (vector, query_vector, degraded_reason) = match vector {
            Some(Ok((hits, q, embed_ms))) => {
                timings.embed = embed_ms;
                timings.vector = vec_ms - embed_ms;
                (Some(hits), Some(q), None)
            }
            Some(Err(reason)) => (None, None, Some(reason)),
            None => (None, None, None),
        };
        let degraded = degraded_reason.is_some();
        let lexical = match (lexical, degraded) {
            (Some(l), _) => Some(l?),
            // Vector-only mode without a model: BM25 answers instead.
            (None, true) => Some(self.lexical_leg(&searcher, query, n)?),
            (None, false) => None,
        };
        let t = Instant::now();
        let symbol = if req.mode == Mode::Hybrid && !intent.symbols.is_empty() {
            Some(self.symbol_leg(&searcher, &intent.symbols, n)?)
        } else {
            None
        };
        timings.symbol = ms(t);

        // Fusion (a single leg fuses to its own order).
        let t = Instant::now();
        let weights = fuse::mix(&intent, &self.settings.fuse);
        let mut legs = Vec::new();
        let mut addresses: HashMap<u64, DocAddress> = HashMap::new();
        let bm25_scores: HashMap<u64, f32> = lexical.iter().flatten().map(|(h, _)| (h.key, h.score)).collect();
        for (leg, hits) in [(Leg::Lexical, lexical), (Leg::Symbol, symbol)] {
            if let Some(hits) = hits {
                legs.push((leg, hits.iter().map(|(h, _)| *h).collect::<Vec<_>>()));
                addresses.extend(hits.into_iter().map(|(h, a)| (h.key, a)));
            }
        }
        if let Some(v) = vector {
            legs.push((Leg::Vector, v));
        }
        let fused = fuse::fuse(&legs, &weights, &self.settings.fuse);
        timings.fuse = ms(t);

        // Load the best candidates, boost those matching named symbols or paths, dedup.
        let rerank_mode = req.rerank.unwrap_or(self.settings.rerank.mode);
        let reranking =
            req.mode == Mode::Hybrid && rerank::should_rerank(query, &intent, rerank_mode, &self.settings.rerank);
        let want = if reranking { req.k.max(self.settings.rerank.top_k) } else { req.k };
        let candidates = fused.into_iter().take(want * 3 + 10);
        let mut hits: Vec<(Fused, Hit, Vec<String>)> = Vec::new();
        for f in candidates {
            let Some(address) = addresses.get(&f.key).copied().or_else(|| self.address_of(&searcher, f.key)) else {
                continue;
            };
            let hit = self.load_hit(&searcher, address, f.key)?;
            hits.push((f, hit, Vec::new()));
        }
        for (f, hit, boosts) in hits.iter_mut() {
            if expansion_match(&intent, hit) {
                f.score *= self.settings.fuse.expansion_boost;
                boosts.push(format!("expansion x{}", self.settings.fuse.expansion_boost));
            }
            let test_factor = self.settings.fuse.test_factor;
            if test_factor != 1.0 && !intent.about_tests && crate::ingest::is_test_path(&hit.path) {
                f.score *= test_factor;
                boosts.push(format!("test file x{test_factor}"));
            }
        }
        hits.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.key.cmp(&b.0.key)));
        let mut results: Vec<(Fused, Hit, Vec<String>)> = Vec::new();
        for (f, mut hit, boosts) in hits {
            if results.iter().any(|(_, r, _)| r.overlaps(&hit)) {
                continue; // an overlapping window of a chunk already listed
            }
            hit.score = f.score;
            hit.bm25 = bm25_scores.get(&f.key).copied();
            let rank_in = |leg: Leg| f.legs.iter().find(|c| c.leg == leg).map(|c| c.rank);
            (hit.lexical_rank, hit.vector_rank) = (rank_in(Leg::Lexical), rank_in(Leg::Vector));
            hit.cosine = query_vector.as_ref().and_then(|q| {
                let v = self.vectors().ok()?;
                v.rows.get(&f.key).map(|r| dot(q, v.store.row(*r)))
            });
            results.push((f, hit, boosts));
            if results.len() == want {
                break;
            }
        }

        // Optional rerank of the top fused hits, then confidence labels on the final order.
        let t = Instant::now();
        let mut logits: HashMap<u64, f32> = HashMap::new();
        let rerank = reranking.then(|| self.rerank(query, &mut results, &mut logits)).flatten();
        timings.rerank = ms(t);
        results.truncate(req.k);
        let mut results: Vec<Hit> = results
            .into_iter()
            .map(|(f, mut hit, boosts)| {
                // An index written before secrets were redacted at ingest may still hold some.
                hit.snippet = snippet(&crate::secrets::redacted(&hit.text), query, 240);
                if req.explain {
                    hit.explain = Some(Explain {
                        legs: f.legs.clone(),
                        weights,
                        rrf: f.rrf,
                        consensus: f.consensus,
                        boosts,
                        rerank_logit: logits.get(&f.key).copied(),
                        final_score: hit.score,
                    });
                }
                hit
            })
            .collect();
        let t = Instant::now();
        let measured = if req.evidence { results.len() } else { MEASURED_HITS };
        let evidence = self.evidence(&searcher, query, &mut results, measured);
        let verdict = crate::abstain::calibrate(&mut results, &evidence, intent.conversational, &self.settings.abstain);
        if verdict.is_none() {
            // Abstention is off: the ratio labels decide (with it, they would be overwritten).
            tier::label(&mut results, &self.settings.tier);
        }
        let evidence = req.evidence.then_some(evidence);
        timings.evidence = ms(t);
        timings.total = ms(started);
        Ok(SearchResponse {
            query: query.to_string(),
            mode: req.mode,
            intent,
            degraded,
            degraded_reason,
            rerank,
            results,
            evidence,
            verdict,
            timings_ms: timings,
        })
    }

    /// The query-level evidence of a ranked result list; sets each hit's coverage.
    fn evidence(&self, searcher: &Searcher, query: &str, results: &mut [Hit], measured: usize) -> Evidence {
        let mut terms = bm25::terms(query);
        terms.sort();
        terms.dedup();
        let docs = searcher.num_docs().max(1) as f32;
        let f = &self.fields;
        let idf = |t: &str| {
            let df = [f.body, f.title, f.path, f.symbols]
                .iter()
                .map(|&field| searcher.doc_freq(&Term::from_field_text(field, t)).unwrap_or(0))
                .max()
                .unwrap_or(0);
            (df, (1.0 + (docs - df as f32 + 0.5) / (df as f32 + 0.5)).ln())
        };
        let weights: Vec<(&String, u64, f32)> = terms
            .iter()
            .map(|t| {
                let (df, w) = idf(t);
                (t, df, w)
            })
            .collect();
        let total: f32 = weights.iter().map(|w| w.2).sum();
        let share = |keep: &dyn Fn(&(&String, u64, f32)) -> bool| {
            if total > 0.0 {
                weights.iter().filter(|w| keep(w)).map(|w| w.2).sum::<f32>() / total
            } else {
                0.0
            }
        };
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (i, h) in results.iter_mut().take(measured).enumerate() {
            let words: std::collections::HashSet<String> =
                bm25::terms(&format!("{}\n{}\n{}", h.title, h.path, h.text)).into_iter().collect();
            h.coverage = Some(share(&|w| words.contains(w.0.as_str())));
            if i < COVERAGE_HITS {
                seen.extend(words);
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
            coverage: share(&|w| seen.contains(w.0.as_str())),
            unseen: share(&|w| w.1 == 0),
            // The fused ranks are already on the hit: no second list of each leg's top keys.
            agreement: results.first().is_some_and(|b| {
                let within = |rank: Option<usize>| rank.is_some_and(|r| r <= AGREEMENT_RANK);
                within(b.lexical_rank) && within(b.vector_rank)
            }),
            terms: terms.len(),
            best_coverage: results.iter().take(MEASURED_HITS).filter_map(|h| h.coverage).fold(0.0, f32::max),
        }
    }

    /// Reranks the top `[rerank] top_k` hits in place (scores blended, order re-sorted), within
    /// the deadline; `None` when no reranker is configured.
    fn rerank(
        &self,
        query: &str,
        results: &mut [(Fused, Hit, Vec<String>)],
        logits: &mut HashMap<u64, f32>,
    ) -> Option<RerankReport> {
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
        let n = results.len().min(config.top_k);
        let passages: Vec<String> = results[..n].iter().map(|(_, h, _)| format!("{}\n{}", h.title, h.text)).collect();
        let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
        let outcome = rerank::score_within(reranker.as_ref(), query, &refs, config, started);
        let applied = outcome.is_ok();
        let reason = outcome.as_ref().err().cloned();
        if let Ok(scores) = outcome {
            let fused: Vec<f32> = results.iter().map(|(_, h, _)| h.score).collect();
            // Hits past top_k keep their fused share only, so they stay below reranked ones.
            let mut all_logits = scores.clone();
            all_logits.resize(results.len(), f32::NEG_INFINITY);
            let blended = rerank::blend(&fused, &all_logits, config.weight);
            for (i, (f, h, _)) in results.iter_mut().enumerate() {
                h.score = blended[i];
                if i < n {
                    logits.insert(f.key, scores[i]);
                }
            }
            results.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.key.cmp(&b.0.key)));
        }
        Some(RerankReport { model: reranker.id().to_string(), applied, reason, pairs: n, ms: ms(started) })
    }

    /// Model tokens in `text` (an estimate when no model is loaded).
    pub fn count_tokens(&self, text: &str) -> usize {
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
    pub fn context_with(&self, resp: &SearchResponse, config: &crate::config::ContextConfig) -> ContextBlock {
        let count = |s: &str| self.count_tokens(s);
        let neighbours = |h: &Hit| self.neighbours(h, config.neighbours).unwrap_or_default();
        tier::context(&resp.query, &resp.results, config, &neighbours, &count)
    }

    /// Up to `n` chunks on each side of a hit in its document, in line order.
    pub fn neighbours(&self, hit: &Hit, n: usize) -> Result<Vec<Hit>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let q = TermQuery::new(Term::from_field_text(self.fields.doc, &hit.doc), IndexRecordOption::Basic);
        let mut chunks = Vec::new();
        for (_, address) in searcher.search(&q, &TopDocs::with_limit(2000).order_by_score())? {
            let vid = self.vid_of(&searcher, address)?;
            chunks.push(self.load_hit(&searcher, address, vid)?);
        }
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

    fn lexical_leg(&self, searcher: &Searcher, query: &str, n: usize) -> Result<Vec<(LegHit, DocAddress)>> {
        let Some(q) = bm25::query(&self.fields, &self.settings.bm25, query) else {
            return Ok(Vec::new());
        };
        self.ranked(searcher, &*q, n)
    }

    fn symbol_leg(&self, searcher: &Searcher, symbols: &[String], n: usize) -> Result<Vec<(LegHit, DocAddress)>> {
        let Some(q) = bm25::symbol_query(&self.fields, symbols)? else {
            return Ok(Vec::new());
        };
        self.ranked(searcher, &*q, n)
    }

    fn ranked(
        &self,
        searcher: &Searcher,
        q: &dyn tantivy::query::Query,
        n: usize,
    ) -> Result<Vec<(LegHit, DocAddress)>> {
        let top = searcher.search(q, &TopDocs::with_limit(n).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (rank, (score, address)) in top.into_iter().enumerate() {
            let vid = self.vid_of(searcher, address)?;
            out.push((LegHit { key: vid, rank: rank + 1, score }, address));
        }
        Ok(out)
    }

    /// The vector leg; `Err(reason)` when there is no model or it failed (the caller degrades).
    fn vector_leg(&self, query: &str, n: usize) -> std::result::Result<(Vec<LegHit>, Vec<f32>, f64), String> {
        let embedder = self
            .embedder
            .as_ref()
            .ok_or_else(|| self.embed_error.clone().unwrap_or_else(|| "no embedding model".into()))?;
        let t = Instant::now();
        let q = embedder.embed_query(query).map_err(|e| e.to_string())?;
        let embed_ms = ms(t);
        let vectors = &self.vectors()?.store;
        let hits = vectors
            .search(&q, n)
            .into_iter()
            .enumerate()
            .map(|(rank, (row, score))| LegHit { key: vectors.vids[row], rank: rank + 1, score })
            .collect();
        Ok((hits, q, embed_ms))
    }

    fn vid_of(&self, searcher: &Searcher, address: DocAddress) -> Result<u64> {
        let column = searcher.segment_reader(address.segment_ord).fast_fields().u64("vid")?;
        column.first(address.doc_id).ok_or_else(|| Error::IndexCorrupt {
            path: self.generation_dir.clone(),
            reason: "chunk without vector id".into(),
        })
    }

    fn address_of(&self, searcher: &Searcher, vid: u64) -> Option<DocAddress> {
        let q = TermQuery::new(Term::from_field_u64(self.fields.vid, vid), IndexRecordOption::Basic);
        searcher.search(&q, &TopDocs::with_limit(1).order_by_score()).ok()?.first().map(|(_, a)| *a)
    }

    fn load_hit(&self, searcher: &Searcher, address: DocAddress, vid: u64) -> Result<Hit> {
        let d: TantivyDocument = searcher.doc(address)?;
        let f = &self.fields;
        let text = |field| d.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let num = |field| d.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        let all = |field| d.get_all(field).filter_map(|v| v.as_str().map(str::to_string)).collect::<Vec<_>>();
        let doc = text(f.doc);
        let lang = text(f.lang);
        let category = text(f.category);
        let symbols = text(f.symbols);
        Ok(Hit {
            id: format!("{doc}#{vid}"),
            doc,
            path: text(f.path),
            title: text(f.title),
            start_line: num(f.start_line),
            end_line: num(f.end_line),
            score: 0.0,
            confidence: Confidence::Low,
            cosine: None,
            bm25: None,
            lexical_rank: None,
            vector_rank: None,
            coverage: None,
            snippet: String::new(),
            text: text(f.body),
            kind: text(f.kind),
            lang: (!lang.is_empty()).then_some(lang),
            tags: all(f.tags),
            category: (!category.is_empty()).then_some(category),
            symbols: symbols.split_whitespace().map(str::to_string).collect(),
            explain: None,
        })
    }
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
    fn a_k_out_of_bounds_is_refused_before_any_leg_allocates_for_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
        let index = dir.path().join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(crate::HashEmbedder::new(16));
        let source = crate::ingest::Source::Dir(dir.path().to_path_buf());
        crate::index::build(&index, &source, &Settings::default(), embedder.as_ref(), &Default::default()).unwrap();
        let engine = Engine::with_embedder(&index, Settings::default(), Some(embedder), None).unwrap();
        for k in [0, 1001, 1_000_000_000_000, usize::MAX] {
            let err = engine.search(&SearchRequest::new("sessions", k, Mode::Hybrid)).unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)) && err.to_string().contains("allowed 1..=1000"), "{err}");
        }
        assert_eq!(engine.search(&SearchRequest::new("sessions", 1000, Mode::Hybrid)).unwrap().results.len(), 1);
    }
}
