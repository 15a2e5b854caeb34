//! The one way for a program to open or build an [`Engine`]: [`Engine::builder`].
//!
//! A builder names the index directory and, optionally, the settings, where the models are, an
//! embedder or reranker of the caller's own, and whether the model is needed at all. It then
//! either opens the index ([`EngineBuilder::open`]) or indexes a source into it first
//! ([`EngineBuilder::index`]), reusing the model it loaded for both.

use crate::config::Settings;
use crate::embed::{Embedder, OnnxEmbedder};
use crate::error::{Error, Result};
use crate::index::{self, BuildOptions, IndexReport};
use crate::ingest::Source;
use crate::models::Models;
use crate::search::rerank::Reranker;
use crate::search::Engine;
use std::path::PathBuf;
use std::sync::Arc;

/// What to do about the embedding model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ModelUse {
    /// Load it; a model that cannot load is an error.
    Required,
    /// Load it; without it, answer from BM25 and say so in every response.
    Bm25Fallback,
    /// Do not load it: BM25 only.
    Lexical,
}

/// Opens or builds an [`Engine`]; made by [`Engine::builder`].
///
/// ```no_run
/// # fn main() -> engine::Result<()> {
/// let engine = engine::Engine::builder("notes/.engine").open()?;
/// let answer = engine.search("where are sessions stored?")?;
/// # Ok(()) }
/// ```
#[must_use = "a builder does nothing until `open` or `index`"]
pub struct EngineBuilder {
    index_dir: PathBuf,
    settings: Settings,
    models_dir: Option<PathBuf>,
    embedder: Option<Arc<dyn Embedder>>,
    reranker: Option<Arc<dyn Reranker>>,
    model: ModelUse,
    graph: bool,
}

impl Engine {
    /// A builder for the index at `index_dir` (a directory `engine index` or
    /// [`EngineBuilder::index`] writes, e.g. `project/.engine`), with default settings and the
    /// model found by [`Models::locate`].
    pub fn builder(index_dir: impl Into<PathBuf>) -> EngineBuilder {
        EngineBuilder {
            index_dir: index_dir.into(),
            settings: Settings::default(),
            models_dir: None,
            embedder: None,
            reranker: None,
            model: ModelUse::Required,
            graph: true,
        }
    }

    /// Indexes `source` into this engine's index (only what changed since the last run) with
    /// the model already loaded, and reads the new generation from then on.
    ///
    /// An engine opened without a model ([`EngineBuilder::lexical_only`], or a BM25 fallback)
    /// cannot index: that is [`Error::InvalidInput`].
    pub fn update(&mut self, source: &Source) -> Result<IndexReport> {
        let embedder = self.embedder().cloned().ok_or_else(|| {
            Error::InvalidInput("this engine has no embedding model loaded, so it cannot index".into())
        })?;
        let report = index::build(&self.dir, source, &self.settings, embedder.as_ref(), &BuildOptions::default())?;
        self.reopen()?;
        Ok(report)
    }
}

impl EngineBuilder {
    /// Uses these settings (e.g. from [`Settings::load`]) instead of the defaults.
    pub fn settings(mut self, settings: Settings) -> EngineBuilder {
        self.settings = settings;
        self
    }

    /// Loads the models from this directory (one holding `models.toml`, as
    /// `scripts/fetch-models.sh --dest DIR` installs it) instead of looking for one.
    pub fn models_dir(mut self, dir: impl Into<PathBuf>) -> EngineBuilder {
        self.models_dir = Some(dir.into());
        self
    }

    /// Embeds with this embedder instead of loading the ONNX model (an index must have been
    /// built with the same embedder: its id is checked).
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> EngineBuilder {
        self.embedder = Some(embedder);
        self
    }

    /// Reranks with this reranker instead of the one `[rerank]` configures.
    pub fn reranker(mut self, reranker: Arc<dyn Reranker>) -> EngineBuilder {
        self.reranker = Some(reranker);
        self
    }

    /// Opens without any model: BM25 only, nothing loaded but the index.
    pub fn lexical_only(mut self) -> EngineBuilder {
        self.model = ModelUse::Lexical;
        self
    }

    /// When the model cannot load, answer from BM25 and say so in each response (`degraded`,
    /// with the reason) rather than failing to open: what the `engine` binary and the hook do.
    pub fn bm25_fallback(mut self) -> EngineBuilder {
        self.model = ModelUse::Bm25Fallback;
        self
    }

    /// For a process that answers a query or two and exits: vectors are scanned exactly rather
    /// than loading the HNSW graph, which costs far more to load than a scan
    /// (docs/performance.md, "Warm and cold").
    pub(crate) fn one_shot(mut self) -> EngineBuilder {
        self.graph = false;
        self
    }

    /// Opens the index. [`Error::IndexMissing`] when there is none yet, unless the settings name
    /// a search backend (`[backend] url`), which then holds the chunks; a model that cannot load
    /// is an error unless [`EngineBuilder::bm25_fallback`] or [`EngineBuilder::lexical_only`].
    pub fn open(self) -> Result<Engine> {
        let (dir, settings) = (&self.index_dir, self.settings.clone());
        let models = match self.model {
            ModelUse::Lexical => None,
            // Found now, with its own error, rather than as a degraded response later.
            ModelUse::Required if self.embedder.is_none() => Some(Ok(self.models()?)),
            _ => Some(self.models()),
        };
        let engine = match (self.model, self.embedder.clone(), &models) {
            (ModelUse::Lexical, _, _) => Engine::open_lexical(dir, settings)?,
            (_, Some(embedder), _) => Engine::with_embedder(dir, settings, Some(embedder), None)?,
            (use_, None, Some(models)) => {
                Engine::open_parts(dir, settings, models, self.graph, use_ == ModelUse::Required)?
            }
            (_, None, None) => unreachable!("models are looked up unless lexical"),
        };
        let engine = if self.graph { engine } else { engine.without_graph() };
        Ok(match self.reranker {
            Some(r) => engine.with_reranker(r),
            None => {
                let rerank = engine.settings.rerank.mode;
                engine.with_configured_reranker(models.as_ref().and_then(|m| m.as_ref().ok()), rerank)
            }
        })
    }

    /// Indexes `source` into the index directory (creating it, or updating only what changed),
    /// then opens it with the same model.
    pub fn index(self, source: &Source) -> Result<(Engine, IndexReport)> {
        self.index_with(source, &BuildOptions::default())
    }

    /// [`EngineBuilder::index`] with options (a rebuild from scratch, a progress callback).
    pub fn index_with(mut self, source: &Source, options: &BuildOptions) -> Result<(Engine, IndexReport)> {
        let embedder = match self.embedder.clone() {
            Some(e) => e,
            None => Arc::new(OnnxEmbedder::load(&self.models()?, &self.settings)?),
        };
        let report = index::build(&self.index_dir, source, &self.settings, embedder.as_ref(), options)?;
        if self.model != ModelUse::Lexical {
            self = self.embedder(embedder);
        }
        Ok((self.open()?, report))
    }

    fn models(&self) -> Result<Models> {
        let models = match &self.models_dir {
            Some(dir) => Models::open(dir)?,
            None => Models::locate()?,
        };
        Ok(models.cached_in(&self.index_dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sessions.md"), "# Sessions\n\nSessions live in Redis since March.\n").unwrap();
        dir
    }

    /// [`project`], indexed with the hashing embedder; its index directory.
    fn indexed_project() -> (tempfile::TempDir, PathBuf) {
        let dir = project();
        let index = dir.path().join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(32));
        Engine::builder(&index).embedder(embedder).index(&Source::Dir(dir.path().to_path_buf())).unwrap();
        (dir, index)
    }

    #[test]
    fn index_then_update_reads_the_new_generation_with_the_same_model() {
        let dir = project();
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(32));
        let source = Source::Dir(dir.path().to_path_buf());
        let (mut engine, report) =
            Engine::builder(dir.path().join(".engine")).embedder(embedder.clone()).index(&source).unwrap();
        assert_eq!(
            (report.files_changed, engine.search("redis sessions").unwrap().results[0].path.as_str()),
            (1, "sessions.md")
        );
        assert!(engine.search("thumbnail worker").unwrap().results.iter().all(|h| h.path != "thumbnails.md"));

        std::fs::write(dir.path().join("thumbnails.md"), "# Thumbnails\n\nThe thumbnail worker resizes uploads.\n")
            .unwrap();
        let report = engine.update(&source).unwrap();
        assert_eq!((report.files_changed, report.files_scanned), (1, 2));
        assert_eq!(engine.search("thumbnail worker").unwrap().results[0].path, "thumbnails.md");
        // The same model, not a second one: the engine still holds the embedder it was given.
        assert!(Arc::ptr_eq(engine.embedder().unwrap(), &embedder));
    }

    #[test]
    fn a_missing_model_is_an_error_unless_bm25_was_asked_for() {
        let (_dir, index) = indexed_project();
        let no_models = tempfile::tempdir().unwrap();

        let err = Engine::builder(&index).models_dir(no_models.path()).open().err().expect("no model: an error");
        assert_eq!(err.class(), crate::error::ErrorClass::Model, "{err}");
        assert!(err.to_string().contains("models.toml"), "{err}");

        let lexical = Engine::builder(&index).models_dir(no_models.path()).lexical_only().open().unwrap();
        let resp = lexical.search("redis").unwrap();
        assert!(resp.degraded && resp.results[0].path == "sessions.md");

        let fallback = Engine::builder(&index).models_dir(no_models.path()).bm25_fallback().open().unwrap();
        let resp = fallback.search("redis").unwrap();
        assert!(resp.degraded && resp.degraded_reason.unwrap().contains("models.toml"));
        assert_eq!(resp.results[0].path, "sessions.md");
    }

    #[test]
    fn an_engine_without_a_model_cannot_index() {
        let (dir, index) = indexed_project();
        let mut engine = Engine::builder(&index).lexical_only().open().unwrap();
        let err = engine.update(&Source::Dir(dir.path().to_path_buf())).unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    }
}
