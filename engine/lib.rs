//! engine: a local, offline hybrid semantic search engine for a project's files (notes,
//! Markdown, code, JSON memory records).
//!
//! A query runs intent → BM25 (tantivy) ‖ HNSW vectors (hnsw_rs, local ONNX embeddings) → weighted
//! RRF fusion, its first candidates reordered by a learned model → optional rerank → confidence
//! labels and abstention; [`Engine::search`] reads as those stages.
//! [`Engine::context_for_prompt`] turns a prompt into the tiered context block the Claude Code hook
//! adds to it.
//!
//! Open or build an engine with [`Engine::builder`]:
//!
//! ```
//! use engine::{Engine, HashEmbedder, Source};
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let scratch = tempfile::tempdir()?;
//! # let project = scratch.path();
//! std::fs::write(project.join("notes.md"), "# Sessions\n\nSessions live in Redis since March.\n")?;
//!
//! // A real program leaves out `.embedder(…)`: the builder then loads the ONNX model that
//! // `scripts/fetch-models.sh` installs, and a missing model is an error.
//! let (engine, report) = Engine::builder(project.join(".engine"))
//!     .embedder(Arc::new(HashEmbedder::new(64)))
//!     .index(&Source::Dir(project.to_path_buf()))?;
//! assert_eq!(report.files_changed, 1);
//!
//! let answer = engine.search("where do sessions live?")?;
//! assert_eq!(answer.results[0].path, "notes.md");
//! # Ok(()) }
//! ```
//!
//! The crate root holds the whole public API: the engine and its builder, requests and responses,
//! hits and the context block, settings, the two model traits ([`Embedder`], [`Reranker`]) with
//! their ONNX implementations, and the error type. The stages behind it are private modules, one
//! folder per concept (`docs/ARCHITECTURE.md` maps them): `ingest` and `chunk` (files into
//! chunks), `embed`, `index`, `search` (intent, legs, fusion, rerank), `context` (labels,
//! abstention, the block), `memory` (records, store, transcripts, capture), `integrations` (the
//! Claude Code hook, its daemon, the MCP server) and `eval`. The `cli` feature (on by default)
//! adds the `engine` command line as [`cli`].
#![warn(missing_docs)]

mod backend;
mod chunk;
#[cfg(feature = "cli")]
pub mod cli;
mod config;
mod context;
mod embed;
mod error;
mod eval;
mod files;
mod hit;
mod index;
mod ingest;
mod integrations;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
mod memory;
mod models;
mod search;
mod secrets;

pub use config::{FuseMethod, Mode, OutputMode, RerankMode, Settings, Weights};
pub use context::abstain::Verdict;
pub use context::{ContextBlock, Layer, Rule, Shown};
pub use embed::{Embedder, HashEmbedder, OnnxEmbedder};
pub use error::{Error, ErrorClass, Result};
pub use hit::{Confidence, Evidence, Explain, Hit, LearnedExplain, Leg, LegContribution};
pub use index::{BuildOptions, IndexReport, Seconds};
pub use ingest::Source;
pub use models::Models;
pub use search::builder::EngineBuilder;
pub use search::intent::{Intent, IntentResult};
pub use search::rerank::{OnnxCrossEncoder, RerankReport, Reranker};
pub use search::{Engine, SearchRequest, SearchResponse, Timings, VectorCoverage};
