//! Evaluation: the metrics (P@5, P@10, Recall@10, Recall@100, MRR@10, nDCG@10, MAP), readers for
//! BEIR queries and qrels and TREC run files, and side-by-side reports. Every ranking decision is
//! made with these numbers, so they follow trec_eval's definitions: gain is the relevance grade
//! with a log2 discount, unjudged documents count as not relevant, and queries with no relevant
//! document are left out of the means (as BEIR's evaluation does).

mod compare;
pub mod golden;

pub use compare::Comparison;

use crate::error::{Error, IoContext, Result};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// query id → (document id → grade)
/// Where `engine eval` keeps the index of a collection or golden corpus (`kind` is `beir` or
/// `golden`), keyed by its absolute path: datasets may be read-only, and indexes are reused.
pub fn cache_index_dir(kind: &str, corpus: &Path) -> PathBuf {
    let abs = std::path::absolute(corpus).unwrap_or_else(|_| corpus.to_path_buf());
    let name = abs.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "corpus".into());
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    use sha2::Digest;
    let tag = hex::encode(&sha2::Sha256::digest(abs.to_string_lossy().as_bytes())[..4]);
    base.join("engine").join(kind).join(format!("{name}-{tag}"))
}

/// The project's own index when `corpus` is a project that has one (`corpus/.engine`, trusted):
/// evaluating one's own project searches what `engine index` built rather than embedding the
/// whole project again into the cache.
pub fn project_index(corpus: &Path) -> Option<PathBuf> {
    let own = std::path::absolute(corpus).ok()?.join(".engine");
    crate::index::store::find_index(corpus).index.filter(|found| *found == own)
}

pub(crate) type Qrels = BTreeMap<String, HashMap<String, i32>>;

/// Reads qrels: `query-id corpus-id score` (BEIR, an optional header) or `qid 0 docid score`
/// (TREC), tab or space separated. A malformed line is an error naming file and line.
pub fn read_qrels(path: &Path) -> Result<Qrels> {
    read_qrels_for(path, None)
}

/// [`read_qrels`], also rejecting a query id that `queries` does not hold (naming the line).
pub fn read_qrels_for(path: &Path, queries: Option<&BTreeMap<String, String>>) -> Result<Qrels> {
    let text = std::fs::read_to_string(path).ctx(|| format!("reading qrels {}", path.display()))?;
    let mut qrels = Qrels::new();
    for (n, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.is_empty() || (n == 0 && cols.first().is_some_and(|c| c.contains("query"))) {
            continue;
        }
        let (q, d, g) = match cols.len() {
            3 => (cols[0], cols[1], cols[2]),
            4 => (cols[0], cols[2], cols[3]),
            k => {
                return Err(Error::InvalidInput(format!(
                    "{}:{}: expected 3 or 4 columns, found {k}",
                    path.display(),
                    n + 1
                )))
            }
        };
        let grade: i32 = g.parse().map_err(|_| {
            Error::InvalidInput(format!("{}:{}: relevance {g:?} is not an integer", path.display(), n + 1))
        })?;
        if queries.is_some_and(|qs| !qs.contains_key(q)) {
            return Err(Error::InvalidInput(format!(
                "{}:{}: query id {q:?} is not in the queries file",
                path.display(),
                n + 1
            )));
        }
        qrels.entry(q.to_string()).or_default().insert(d.to_string(), grade);
    }
    if qrels.is_empty() {
        return Err(Error::InvalidInput(format!("{}: no judgments", path.display())));
    }
    Ok(qrels)
}

/// Reads BEIR `queries.jsonl` (`{"_id","text"}` per line).
pub fn read_queries(path: &Path) -> Result<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).ctx(|| format!("reading queries {}", path.display()))?;
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| Error::InvalidInput(format!("{}:{}: {e}", path.display(), n + 1)))?;
        let id = match &v["_id"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => {
                return Err(Error::InvalidInput(format!("{}:{}: no _id", path.display(), n + 1)))
            }
            other => other.to_string(),
        };
        let q =
            v["text"].as_str().ok_or_else(|| Error::InvalidInput(format!("{}:{}: no text", path.display(), n + 1)))?;
        out.insert(id, q.to_string());
    }
    Ok(out)
}

/// Reads a TREC run (`qid Q0 docid rank score tag`) into ranked lists, ordered as trec_eval
/// orders them: score descending, then document id descending. Duplicate (qid, docid) pairs are
/// an error naming the line.
pub fn read_run(path: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let text = std::fs::read_to_string(path).ctx(|| format!("reading run {}", path.display()))?;
    let mut rows: BTreeMap<String, Vec<(f64, String)>> = BTreeMap::new();
    let mut seen = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.is_empty() {
            continue;
        }
        if cols.len() != 6 {
            return Err(Error::InvalidInput(format!(
                "{}:{}: expected 6 columns (qid Q0 docid rank score tag), found {}",
                path.display(),
                n + 1,
                cols.len()
            )));
        }
        let score: f64 = cols[4].parse().map_err(|_| {
            Error::InvalidInput(format!("{}:{}: score {:?} is not a number", path.display(), n + 1, cols[4]))
        })?;
        if !seen.insert((cols[0].to_string(), cols[2].to_string())) {
            return Err(Error::InvalidInput(format!(
                "{}:{}: duplicate entry for query {} document {}",
                path.display(),
                n + 1,
                cols[0],
                cols[2]
            )));
        }
        rows.entry(cols[0].to_string()).or_default().push((score, cols[2].to_string()));
    }
    if rows.is_empty() {
        return Err(Error::InvalidInput(format!("{}: empty run", path.display())));
    }
    Ok(rows
        .into_iter()
        .map(|(q, mut r)| {
            r.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            (q, r.into_iter().map(|(_, d)| d).collect())
        })
        .collect())
}

/// Metrics of one query (or their means).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// Share of the first 5 results that are relevant.
    #[serde(rename = "p@5")]
    pub p5: f64,
    /// Share of the first 10 results that are relevant.
    #[serde(rename = "p@10")]
    pub p10: f64,
    /// Share of the relevant documents found in the first 10 results.
    #[serde(rename = "recall@10")]
    pub recall10: f64,
    /// Share of the relevant documents found in the first 100 results.
    #[serde(rename = "recall@100")]
    pub recall100: f64,
    /// Reciprocal rank of the first relevant result within the first 10 (0 when there is none).
    #[serde(rename = "mrr@10")]
    pub mrr10: f64,
    /// Normalised discounted cumulative gain of the first 10 results, graded.
    #[serde(rename = "ndcg@10")]
    pub ndcg10: f64,
    /// Average precision over the whole ranked list.
    pub map: f64,
}

/// Scores one ranked list (document ids, best first, no duplicates). `None` when the query has no
/// relevant document.
pub fn score(ranked: &[String], judged: &HashMap<String, i32>) -> Option<Metrics> {
    let n_rel = judged.values().filter(|g| **g > 0).count();
    if n_rel == 0 {
        return None;
    }
    let grade = |d: &str| judged.get(d).copied().unwrap_or(0).max(0);
    let hits_at = |k: usize| ranked.iter().take(k).filter(|d| grade(d) > 0).count() as f64;
    let mrr10 = ranked.iter().take(10).position(|d| grade(d) > 0).map_or(0.0, |p| 1.0 / (p + 1) as f64);
    let dcg: f64 = ranked.iter().take(10).enumerate().map(|(i, d)| grade(d) as f64 / ((i + 2) as f64).log2()).sum();
    let mut ideal: Vec<i32> = judged.values().copied().filter(|g| *g > 0).collect();
    ideal.sort_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal.iter().take(10).enumerate().map(|(i, g)| *g as f64 / ((i + 2) as f64).log2()).sum();
    let mut found = 0.0;
    let mut ap = 0.0;
    for (i, d) in ranked.iter().enumerate() {
        if grade(d) > 0 {
            found += 1.0;
            ap += found / (i + 1) as f64;
        }
    }
    Some(Metrics {
        p5: hits_at(5) / 5.0,
        p10: hits_at(10) / 10.0,
        recall10: hits_at(10) / n_rel as f64,
        recall100: hits_at(100) / n_rel as f64,
        mrr10,
        ndcg10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        map: ap / n_rel as f64,
    })
}

/// The mean of per-query metrics.
pub fn mean(all: &[Metrics]) -> Metrics {
    let n = all.len().max(1) as f64;
    let mut m = Metrics::default();
    for x in all {
        m.p5 += x.p5 / n;
        m.p10 += x.p10 / n;
        m.recall10 += x.recall10 / n;
        m.recall100 += x.recall100 / n;
        m.mrr10 += x.mrr10 / n;
        m.ndcg10 += x.ndcg10 / n;
        m.map += x.map / n;
    }
    m
}

/// The value at quantile `q` (nearest rank) of unsorted samples.
pub fn percentile(samples: &[f64], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// One configuration's results.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The run's name: a [`RunMode`] name, or a run file's stem.
    pub mode: String,
    /// Mean metrics over the queries that have a relevant document.
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Search latency per query, end to end (all zero for a scored run file).
    pub latency_ms: Latency,
    /// Means per group of queries, by grouping ("intent": the detected intent; "split": dev or
    /// held-out for golden sets).
    pub breakdown: BTreeMap<String, BTreeMap<String, Group>>,
    /// Per confidence label, over the top 10 hits of every query: how many hits got it and the
    /// share of them that are relevant.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub calibration: BTreeMap<String, Calibration>,
    /// Metrics per query id (only queries with a relevant document).
    #[serde(skip)]
    pub per_query: BTreeMap<String, Metrics>,
}

/// The mean scores of a group of queries.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Group {
    /// Queries in the group that count towards the means.
    pub queries: usize,
    /// Mean nDCG@10 of the group.
    #[serde(rename = "ndcg@10")]
    pub ndcg10: f64,
    /// Mean MRR@10 of the group.
    #[serde(rename = "mrr@10")]
    pub mrr10: f64,
}

/// Hits with one confidence label and how many of them are relevant.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Calibration {
    /// Hits with the label.
    pub hits: usize,
    /// How many of them are relevant.
    pub relevant: usize,
    /// `relevant / hits`.
    pub share: f64,
}

/// Hits per query whose labels the calibration table counts.
pub(crate) const CALIBRATION_DEPTH: usize = 10;

/// A query id → group name map, by grouping name.
pub(crate) type Groupings = BTreeMap<String, HashMap<String, String>>;

/// A query whose score differs between two runs: (query id, score in A, score in B).
pub(crate) type Delta = (String, f64, f64);

/// A side-by-side report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// What was evaluated: a golden set's or BEIR collection's name, or a run file's path.
    pub dataset: String,
    /// The half or split evaluated (for a run file, the qrels file's path).
    pub split: String,
    /// Queries judged (those with a relevant document).
    pub queries: usize,
    /// One report per mode, in the order asked for.
    pub runs: Vec<RunReport>,
}

/// Builds a run report from per-query results.
pub fn run_report(
    mode: &str,
    per_query: BTreeMap<String, Metrics>,
    latencies: &[f64],
    groupings: &Groupings,
) -> RunReport {
    let all: Vec<Metrics> = per_query.values().copied().collect();
    let mut breakdown = BTreeMap::new();
    for (grouping, of) in groupings {
        let mut groups: BTreeMap<String, Vec<Metrics>> = BTreeMap::new();
        for (q, m) in &per_query {
            if let Some(g) = of.get(q) {
                groups.entry(g.clone()).or_default().push(*m);
            }
        }
        let means = groups
            .into_iter()
            .map(|(g, ms)| {
                let m = mean(&ms);
                (g, Group { queries: ms.len(), ndcg10: m.ndcg10, mrr10: m.mrr10 })
            })
            .collect();
        breakdown.insert(grouping.clone(), means);
    }
    RunReport {
        mode: mode.to_string(),
        metrics: mean(&all),
        latency_ms: Latency { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
        breakdown,
        calibration: BTreeMap::new(),
        per_query,
    }
}

impl Report {
    /// The Markdown table, modes side by side, then the per-intent breakdown.
    pub fn markdown(&self) -> String {
        let mut s = format!("### {} ({}, {} queries)\n\n", self.dataset, self.split, self.queries);
        s.push_str("| mode | P@5 | P@10 | R@10 | R@100 | MRR@10 | nDCG@10 | MAP | p50 ms | p95 ms |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.runs {
            let m = &r.metrics;
            s.push_str(&format!(
                "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {:.1} |\n",
                r.mode,
                m.p5,
                m.p10,
                m.recall10,
                m.recall100,
                m.mrr10,
                m.ndcg10,
                m.map,
                r.latency_ms.p50,
                r.latency_ms.p95
            ));
        }
        let groupings: std::collections::BTreeSet<&String> =
            self.runs.iter().flat_map(|r| r.breakdown.keys()).collect();
        for grouping in groupings {
            let names: std::collections::BTreeSet<&String> =
                self.runs.iter().filter_map(|r| r.breakdown.get(grouping)).flat_map(|g| g.keys()).collect();
            s.push_str(&format!("\nnDCG@10 by {grouping} (queries):\n\n| mode |"));
            for n in &names {
                s.push_str(&format!(" {n} |"));
            }
            s.push_str("\n|---|");
            s.push_str(&"---|".repeat(names.len()));
            s.push('\n');
            for r in &self.runs {
                s.push_str(&format!("| {} |", r.mode));
                for n in &names {
                    match r.breakdown.get(grouping).and_then(|g| g.get(*n)) {
                        Some(g) => s.push_str(&format!(" {:.3} ({}) |", g.ndcg10, g.queries)),
                        None => s.push_str(" – |"),
                    }
                }
                s.push('\n');
            }
        }
        if self.runs.iter().any(|r| !r.calibration.is_empty()) {
            s.push_str(&format!(
                "\nConfidence calibration (top {CALIBRATION_DEPTH} hits per query; share relevant):\n\n| mode | high | medium | low |\n|---|---|---|---|\n"
            ));
            for r in self.runs.iter().filter(|r| !r.calibration.is_empty()) {
                s.push_str(&format!("| {} |", r.mode));
                for label in ["high", "medium", "low"] {
                    match r.calibration.get(label) {
                        Some(c) => s.push_str(&format!(" {:.0}% of {} |", c.share * 100.0, c.hits)),
                        None => s.push_str(" – |"),
                    }
                }
                s.push('\n');
            }
        }
        s
    }

    /// Run `a` against run `b`, query by query (nDCG@10), with how sure the mean difference is.
    pub fn compare(&self, a: &str, b: &str) -> Result<Comparison> {
        let find = |m: &str| {
            self.runs.iter().find(|r| r.mode == m).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "--compare: no run named {m:?} (runs: {})",
                    self.runs.iter().map(|r| r.mode.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })
        };
        Ok(Comparison::of(find(a)?, find(b)?))
    }
}

/// Judges one query's hits: the query id and its ranked hits → metrics (`None`: no relevant
/// document, left out of the means).
pub(crate) type Judge<'a> = dyn Fn(&str, &[crate::Hit]) -> Option<Metrics> + 'a;

/// Whether one hit is relevant to a query (for the calibration table).
pub(crate) type IsRelevant<'a> = dyn Fn(&str, &crate::Hit) -> bool + 'a;

/// Runs queries (id, text) through [`crate::Engine::search`] in each mode, 150 hits each, and
/// judges them.
pub(crate) fn run_queries(
    engine: &crate::Engine,
    queries: &[(String, String)],
    modes: &[RunMode],
    judge: &Judge,
    is_relevant: &IsRelevant,
    groupings: &Groupings,
) -> Result<Vec<RunReport>> {
    if queries.is_empty() {
        return Err(Error::InvalidInput("no queries to run".into()));
    }
    let mut runs = Vec::new();
    for &run in modes {
        let mut per_query = BTreeMap::new();
        let mut latencies = Vec::new();
        let mut calibration: BTreeMap<String, Calibration> = BTreeMap::new();
        for (id, q) in queries {
            let mut req = crate::SearchRequest::new(q.as_str(), 150, run.mode);
            req.rerank = Some(run.rerank);
            let t = std::time::Instant::now();
            let resp = engine.search_with(&req)?;
            latencies.push(t.elapsed().as_secs_f64() * 1e3);
            if let Some(m) = judge(id, &resp.results) {
                per_query.insert(id.clone(), m);
            }
            for hit in resp.results.iter().take(CALIBRATION_DEPTH) {
                let c = calibration.entry(hit.confidence.as_str().to_string()).or_default();
                c.hits += 1;
                c.relevant += usize::from(is_relevant(id, hit));
            }
        }
        for c in calibration.values_mut() {
            c.share = c.relevant as f64 / c.hits.max(1) as f64;
        }
        let mut report = run_report(run.name(), per_query, &latencies, groupings);
        report.calibration = calibration;
        runs.push(report);
    }
    Ok(runs)
}

/// The detected intent of each query, for the per-intent breakdown.
pub(crate) fn intent_groups(queries: &[(String, String)]) -> Groupings {
    let intents = queries
        .iter()
        .map(|(id, q)| (id.clone(), crate::search::intent::classify(q).top.as_str().to_string()))
        .collect();
    [("intent".to_string(), intents)].into_iter().collect()
}

/// Runs every judged query of a BEIR-style collection in each mode; documents are ranked by their
/// best chunk, 100 per query.
pub fn run_modes(
    engine: &crate::Engine,
    queries: &BTreeMap<String, String>,
    qrels: &Qrels,
    modes: &[RunMode],
) -> Result<Vec<RunReport>> {
    let judged: Vec<(String, String)> =
        queries.iter().filter(|(id, _)| qrels.contains_key(*id)).map(|(i, q)| (i.clone(), q.clone())).collect();
    if judged.is_empty() {
        return Err(Error::InvalidInput("no query has judgments: the query ids and the qrels do not match".into()));
    }
    let judge = |id: &str, hits: &[crate::Hit]| {
        let mut seen = HashSet::new();
        let ranked: Vec<String> =
            hits.iter().map(|h| h.doc.clone()).filter(|d| seen.insert(d.clone())).take(100).collect();
        score(&ranked, &qrels[id])
    };
    let is_relevant = |id: &str, hit: &crate::Hit| qrels[id].get(&hit.doc).is_some_and(|g| *g > 0);
    run_queries(engine, &judged, modes, &judge, &is_relevant, &intent_groups(&judged))
}

/// One JSON line per judged query of a BEIR-style collection, for fitting and inspecting fusion
/// (`scripts/fit/fit-fusion.py`): the query's intent and evidence, its judgments, and its first 100
/// hybrid hits with each leg's rank and score, cosine, coverage, fused score and grade.
pub fn candidates(
    engine: &crate::Engine,
    set: &str,
    queries: &BTreeMap<String, String>,
    qrels: &Qrels,
) -> Result<Vec<serde_json::Value>> {
    let mut out = Vec::new();
    for (id, text) in queries.iter().filter(|(id, _)| qrels.contains_key(*id)) {
        let mut req = crate::SearchRequest::new(text.as_str(), 100, crate::config::Mode::Hybrid);
        (req.explain, req.evidence) = (true, true);
        // The fused order is what fit-fusion.py learns from, whatever `[rerank] mode` says.
        req.rerank = Some(crate::config::RerankMode::Never);
        let resp = engine.search_with(&req)?;
        let hits: Vec<serde_json::Value> = resp
            .results
            .iter()
            .map(|h| {
                serde_json::json!({
                    "doc": h.doc, "score": h.score, "cosine": h.cosine, "bm25": h.bm25, "coverage": h.coverage,
                    "lexical_rank": h.lexical_rank, "vector_rank": h.vector_rank, "kind": h.kind,
                    "grade": qrels[id].get(&h.doc).copied().unwrap_or(0), "features": learned_inputs(h),
                })
            })
            .collect();
        out.push(serde_json::json!({
            "set": set, "id": id, "text": text, "judged": qrels[id], "intent": resp.intent,
            "evidence": resp.evidence, "hits": hits,
        }));
    }
    Ok(out)
}

/// The learned fusion's inputs for a hit it scored, in the order of its weights. A fit reads
/// them rather than recomputing them from the hit, whose score is by then the model's own output.
pub(crate) fn learned_inputs(hit: &crate::Hit) -> Option<Vec<f32>> {
    let learned = hit.explain.as_ref()?.learned.as_ref()?;
    Some(learned.features.iter().map(|(_, x)| *x).collect())
}

/// One configuration a report compares: a search mode, with or without the rerank stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunMode {
    /// The legs searched.
    pub mode: crate::config::Mode,
    /// Whether the rerank stage runs: never, always, or by the configured rules.
    pub rerank: crate::config::RerankMode,
}

impl RunMode {
    /// Every name [`RunMode::parse`] accepts.
    pub(crate) const NAMES: [&'static str; 5] = ["bm25", "vector", "hybrid", "hybrid+rerank", "hybrid+auto"];

    /// `bm25`, `vector`, `hybrid` (never reranked), `hybrid+rerank` (always), `hybrid+auto` (the
    /// configured trigger rules).
    pub fn parse(name: &str) -> Option<RunMode> {
        use crate::config::{Mode, RerankMode};
        let (mode, rerank) = match name.trim().to_ascii_lowercase().as_str() {
            "bm25" => (Mode::Bm25, RerankMode::Never),
            "vector" => (Mode::Vector, RerankMode::Never),
            "hybrid" => (Mode::Hybrid, RerankMode::Never),
            "hybrid+rerank" => (Mode::Hybrid, RerankMode::Always),
            "hybrid+auto" => (Mode::Hybrid, RerankMode::Auto),
            _ => return None,
        };
        Some(RunMode { mode, rerank })
    }

    /// The name [`RunMode::parse`] reads back.
    pub fn name(self) -> &'static str {
        use crate::config::{Mode, RerankMode};
        match (self.mode, self.rerank) {
            (Mode::Bm25, _) => "bm25",
            (Mode::Vector, _) => "vector",
            (Mode::Hybrid, RerankMode::Never) => "hybrid",
            (Mode::Hybrid, RerankMode::Always) => "hybrid+rerank",
            (Mode::Hybrid, RerankMode::Auto) => "hybrid+auto",
        }
    }

    /// Parses a comma-separated list, naming a bad entry.
    pub fn parse_list(list: &str) -> Result<Vec<RunMode>> {
        list.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                RunMode::parse(s).ok_or_else(|| {
                    Error::InvalidInput(format!("unknown mode {s:?} (one of {})", RunMode::NAMES.join(", ")))
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, i32)]) -> HashMap<String, i32> {
        pairs.iter().map(|(d, g)| (d.to_string(), *g)).collect()
    }

    fn list(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn binary_relevance_by_hand() {
        // Relevant: a, c. Ranked: x a y c.
        let m = score(&list(&["x", "a", "y", "c"]), &judged(&[("a", 1), ("c", 1), ("x", 0)])).unwrap();
        assert!((m.p5 - 0.4).abs() < 1e-12);
        assert!((m.p10 - 0.2).abs() < 1e-12);
        assert!((m.recall10 - 1.0).abs() < 1e-12);
        assert!((m.mrr10 - 0.5).abs() < 1e-12);
        // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((m.ndcg10 - dcg / idcg).abs() < 1e-12);
        // AP = (1/2 + 2/4) / 2.
        assert!((m.map - 0.5).abs() < 1e-12);
    }

    #[test]
    fn graded_relevance_uses_the_grade_as_gain() {
        let m = score(&list(&["b", "a"]), &judged(&[("a", 2), ("b", 1)])).unwrap();
        let dcg = 1.0 + 2.0 / 3f64.log2();
        let idcg = 2.0 + 1.0 / 3f64.log2();
        assert!((m.ndcg10 - dcg / idcg).abs() < 1e-12);
        assert_eq!(m.mrr10, 1.0);
    }

    #[test]
    fn unjudged_and_missing_documents_count_as_not_relevant() {
        let m = score(&list(&["u1", "u2"]), &judged(&[("a", 1)])).unwrap();
        assert_eq!((m.ndcg10, m.mrr10, m.recall100, m.map), (0.0, 0.0, 0.0, 0.0));
        assert!(score(&list(&["a"]), &judged(&[("a", 0)])).is_none(), "no relevant document: left out");
        assert!(score(&list(&[]), &judged(&[("a", 1)])).is_some());
    }

    #[test]
    fn run_files_tie_break_like_trec_eval_and_reject_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.trec");
        std::fs::write(&p, "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq1 Q0 c 3 0.9 t\n").unwrap();
        assert_eq!(read_run(&p).unwrap()["q1"], list(&["c", "b", "a"]));
        std::fs::write(&p, "q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n").unwrap();
        let e = read_run(&p).unwrap_err().to_string();
        assert!(e.contains("run.trec:2") && e.contains("duplicate"), "{e}");
        std::fs::write(&p, "").unwrap();
        assert!(read_run(&p).unwrap_err().to_string().contains("empty run"));
    }

    #[test]
    fn qrels_accept_beir_and_trec_and_name_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q.tsv");
        std::fs::write(&p, "query-id\tcorpus-id\tscore\n1\td1\t1\n1 0 d2 2\n").unwrap();
        let q = read_qrels(&p).unwrap();
        assert_eq!(q["1"]["d2"], 2);
        std::fs::write(&p, "1\td1\t1\n1\td1\n").unwrap();
        let e = read_qrels(&p).unwrap_err().to_string();
        assert!(e.contains("q.tsv:2") && e.contains("columns"), "{e}");
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let s: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&s, 0.5), 50.0);
        assert_eq!(percentile(&s, 0.95), 95.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
