//! The ONNX embedder: the manifest's model (all-MiniLM-L6-v2 by default, or the one `[embed] model`
//! names) through fastembed's user-defined model API on the process's one ONNX Runtime
//! environment, pooled as the manifest says (mean or `[CLS]`), L2-normalised, with the model's
//! query and passage prefixes; and its lazy form, which loads the model on first use.

use super::tokens::{approx_tokens, WordPieceCounter};
use super::Embedder;
use crate::config::EmbedConfig;
use crate::error::{Error, Result};
use crate::models::{ort_environment, EmbedderEntry, Models};
use fastembed::{
    InitOptionsUserDefined, Pooling, QuantizationMode, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use std::sync::Mutex;

/// The ONNX embedder (fastembed over ort, sharing the process's ONNX Runtime environment).
pub struct OnnxEmbedder {
    id: String,
    dimensions: usize,
    batch_size: usize,
    max_chars: usize,
    batch_tokens: usize,
    max_length: usize,
    query_prefix: String,
    passage_prefix: String,
    /// One run at a time (ort's `run` takes the session mutably).
    model: Mutex<TextEmbedding>,
    counter: TokenCounter,
}

/// Exact model-token counts: the model's tokenizer without padding or truncation, with an
/// allocation-free path for ASCII text where it agrees with the tokenizer.
struct TokenCounter {
    tokenizer: tokenizers::Tokenizer,
    fast: Option<WordPieceCounter>,
}

impl TokenCounter {
    fn new(mut tokenizer: tokenizers::Tokenizer, path: &std::path::Path) -> Result<TokenCounter> {
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| Error::ModelLoad { path: path.to_path_buf(), reason: e.to_string() })?;
        let fast = WordPieceCounter::new(&tokenizer).filter(|f| f.agrees_with(&tokenizer));
        Ok(TokenCounter { tokenizer, fast })
    }

    /// The tokenizer of the models' embedding model alone (no ONNX session).
    fn load(models: &Models, entry: &EmbedderEntry) -> Result<TokenCounter> {
        let path = model_file(models, entry, "tokenizer.json")?;
        let tokenizer = tokenizers::Tokenizer::from_file(&path)
            .map_err(|e| Error::ModelLoad { path: path.clone(), reason: e.to_string() })?;
        TokenCounter::new(tokenizer, &path)
    }

    fn count(&self, text: &str) -> usize {
        let slow = |t: &str| self.tokenizer.encode_fast(t, false).map(|e| e.len()).unwrap_or_else(|_| approx_tokens(t));
        match &self.fast {
            Some(f) => f.count_mixed(text, &slow),
            None => slow(text),
        }
    }
}

/// The path of the embedder's file `what` names: a file name (its last path component), or
/// `*.onnx` for the graph. A derived file (the graph made from a package's) comes before the
/// packages' own, as the manifest lists them.
fn model_file(models: &Models, entry: &EmbedderEntry, what: &str) -> Result<std::path::PathBuf> {
    let derived = entry.derived.iter().map(|d| d.file.as_str());
    let packaged = entry.packages.iter().flat_map(|p| p.files.iter().map(|f| f.file.as_str()));
    let matches = |f: &str| match what.strip_prefix('*') {
        Some(extension) => f.ends_with(extension),
        None => std::path::Path::new(f).file_name().is_some_and(|n| n == what),
    };
    let found = derived.chain(packaged).find(|f| matches(f)).ok_or_else(|| {
        Error::Config(format!(
            "{}: the embedder {} lists no file named {what}",
            models.dir.join(crate::models::MANIFEST).display(),
            entry.id
        ))
    })?;
    models.file(found)
}

impl OnnxEmbedder {
    /// Loads the embedding model named by the manifest of `models`, run with the `[embed]`
    /// settings (batch sizes, threads, token limit).
    pub fn load(models: &Models, settings: &crate::Settings) -> Result<OnnxEmbedder> {
        OnnxEmbedder::load_with(models, &settings.embed)
    }

    /// [`OnnxEmbedder::load`] with the `[embed]` section alone.
    pub(crate) fn load_with(models: &Models, config: &EmbedConfig) -> Result<OnnxEmbedder> {
        let entry = models.manifest.embedder_named(config.model.as_deref())?;
        let find = |name: &str| model_file(models, entry, name);
        let read = |path: &std::path::Path| {
            std::fs::read(path).map_err(|e| Error::ModelMissing { path: path.to_path_buf(), reason: e.to_string() })
        };
        let onnx_path = find("*.onnx")?;
        let tok_path = find("tokenizer.json")?;
        let cfg_path = find("config.json")?;
        let stm_path = find("special_tokens_map.json")?;
        let tcfg_path = find("tokenizer_config.json")?;
        let env = ort_environment(&models.runtime_library()?)?;

        let tokenizer_files = TokenizerFiles {
            tokenizer_file: read(&tok_path)?,
            config_file: read(&cfg_path)?,
            special_tokens_map_file: read(&stm_path)?,
            tokenizer_config_file: read(&tcfg_path)?,
        };
        let model = UserDefinedEmbeddingModel::new(read(&onnx_path)?, tokenizer_files)
            .with_pooling(match entry.pooling {
                crate::models::Pooling::Mean => Pooling::Mean,
                crate::models::Pooling::Cls => Pooling::Cls,
            })
            // The graph quantizes activations itself, per row (scripts/derive-embedder.py), so a
            // text's vector does not depend on its batch; fastembed must not quantize again.
            .with_quantization(QuantizationMode::None);
        let max_length = config.max_length.max(8);
        let cpu = ort::ep::CPU::default().with_arena_allocator(config.memory_arena).build();
        let mut options = InitOptionsUserDefined::new()
            .with_environment(env)
            .with_max_length(max_length)
            .with_execution_providers(vec![cpu]);
        if let Some(threads) = config.threads {
            options = options.with_intra_threads(threads);
        }
        let spinning = if config.spinning { "1" } else { "0" };
        options.session_config.push(("session.intra_op.allow_spinning".into(), spinning.into()));
        let text_embedding = TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| {
            let mut reason = e.to_string();
            if reason.contains("MatMulNBits") {
                // Not a corrupt file: a runtime other than the pinned one (ORT_DYLIB_PATH).
                reason.push_str(" (this ONNX Runtime cannot run the 8-bit MatMulNBits of the derived graph: use the runtime models.toml pins, or unset ORT_DYLIB_PATH)");
            }
            // fastembed names the JSON file it could not parse; otherwise the graph is at fault.
            let path = [&tok_path, &cfg_path, &stm_path, &tcfg_path]
                .into_iter()
                .find(|p| p.file_name().is_some_and(|n| reason.contains(&*n.to_string_lossy())))
                .unwrap_or(&onnx_path);
            Error::ModelLoad { path: path.clone(), reason }
        })?;
        trim_heap();
        let counter = TokenCounter::new(text_embedding.tokenizer.clone(), &tok_path)?;
        Ok(OnnxEmbedder {
            id: model_id(entry, config),
            dimensions: entry.dimensions,
            query_prefix: entry.query_prefix.clone(),
            passage_prefix: entry.passage_prefix.clone(),
            batch_size: config.batch_size.max(1),
            batch_tokens: config.batch_tokens,
            max_length,
            // Indented code can average well over 10 characters per token (whitespace makes no
            // tokens), so the cut leaves 40 per token: never less than the model would see.
            max_chars: max_length * 40,
            model: Mutex::new(text_embedding),
            counter,
        })
    }
}

/// Returns freed heap memory to the system. Loading the model goes through intermediate copies
/// of its weights (ONNX Runtime's graph optimisation and packing), and glibc would otherwise keep
/// the freed pages resident.
pub(crate) fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The identity of the vectors a model makes. They depend on the truncation length too, so it is
/// part of what index metadata and the embedding cache are checked against.
pub(crate) fn model_id(entry: &EmbedderEntry, config: &EmbedConfig) -> String {
    format!("{}@{}", entry.id, config.max_length.max(8))
}

/// The ONNX embedder, loaded on first use: an indexing run with nothing new to embed never pays
/// the model load (most of a no-change reindex otherwise).
pub struct LazyOnnxEmbedder {
    models: Models,
    config: EmbedConfig,
    entry: EmbedderEntry,
    id: String,
    loaded: Mutex<Option<std::sync::Arc<OnnxEmbedder>>>,
    /// The tokenizer alone, for chunking: a run whose chunks are all cached loads no ONNX session.
    counter: std::sync::OnceLock<Option<TokenCounter>>,
}

impl LazyOnnxEmbedder {
    /// An embedder for the embedding model `[embed] model` names, with these run-time settings;
    /// nothing is loaded until first use. Fails only when the manifest lists no such model.
    pub fn new(models: Models, settings: &crate::Settings) -> Result<LazyOnnxEmbedder> {
        let config = settings.embed.clone();
        let entry = models.manifest.embedder_named(config.model.as_deref())?.clone();
        let id = model_id(&entry, &config);
        Ok(LazyOnnxEmbedder {
            models,
            config,
            entry,
            id,
            loaded: Mutex::new(None),
            counter: std::sync::OnceLock::new(),
        })
    }

    fn get(&self) -> Result<std::sync::Arc<OnnxEmbedder>> {
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        let e = std::sync::Arc::new(OnnxEmbedder::load_with(&self.models, &self.config)?);
        *slot = Some(e.clone());
        Ok(e)
    }
}

impl Embedder for LazyOnnxEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimensions(&self) -> usize {
        self.entry.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.get()?.embed(texts)
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        self.get()?.embed_query(query)
    }

    fn release(&self) {
        // A run still holding the session keeps it alive until it ends.
        self.loaded.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    fn count_tokens(&self, text: &str) -> usize {
        // A model that cannot load fails the run at `embed`, with its own error.
        match self.counter.get_or_init(|| TokenCounter::load(&self.models, &self.entry).ok()) {
            Some(counter) => counter.count(text),
            None => approx_tokens(text),
        }
    }
}

/// Cuts `text` to at most `max_chars` bytes on a character boundary.
fn clip(text: &str, max_chars: usize) -> &str {
    if text.len() <= max_chars {
        return text;
    }
    let mut end = max_chars;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl Embedder for OnnxEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_with(&mut self.lock(), &self.passage_prefix, texts)
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let mut vectors = self.embed_with(&mut self.lock(), &self.query_prefix, &[query])?;
        vectors.pop().ok_or_else(|| Error::Inference("the model returned no vector".into()))
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.counter.count(text)
    }
}

impl OnnxEmbedder {
    /// The model, to this caller alone; a panic in another caller's run leaves it usable.
    fn lock(&self) -> std::sync::MutexGuard<'_, TextEmbedding> {
        self.model.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Embeds `texts`, each after `prefix` (the model's query or passage instruction).
    fn embed_with(&self, model: &mut TextEmbedding, prefix: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let prefixed: Vec<String>;
        let texts: Vec<&str> = if prefix.is_empty() {
            texts.to_vec()
        } else {
            prefixed = texts.iter().map(|t| format!("{prefix}{t}")).collect();
            prefixed.iter().map(String::as_str).collect()
        };
        let clipped: Vec<&str> = texts.iter().map(|t| clip(t, self.max_chars)).collect();
        // With [CLS] and [SEP], as the model sees them after truncation.
        let tokens: Vec<usize> = clipped.iter().map(|t| (self.count_tokens(t) + 2).min(self.max_length)).collect();
        let mut order: Vec<usize> = (0..clipped.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(tokens[i]));
        let mut out = vec![Vec::new(); clipped.len()];
        let mut start = 0;
        while start < order.len() {
            // Longest first, so the first text of a run sets its padded length.
            let fit = (self.batch_tokens / tokens[order[start]].max(1)).clamp(1, self.batch_size);
            let batch = &order[start..(start + fit).min(order.len())];
            start += batch.len();
            let batch_texts: Vec<&str> = batch.iter().map(|&i| clipped[i]).collect();
            let vectors = model.embed(&batch_texts, Some(batch.len())).map_err(|e| Error::Inference(e.to_string()))?;
            if vectors.len() != batch.len() {
                return Err(Error::Inference(format!("expected {} vectors, got {}", batch.len(), vectors.len())));
            }
            for (&i, v) in batch.iter().zip(vectors) {
                if v.len() != self.dimensions {
                    return Err(Error::Inference(format!(
                        "model returned {} dimensions, the manifest says {}",
                        v.len(),
                        self.dimensions
                    )));
                }
                out[i] = v;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_respects_char_boundaries() {
        let s = "é".repeat(10);
        assert_eq!(clip(&s, 5), "éé");
        assert_eq!(clip("abc", 10), "abc");
    }
}
