//! engine: a local, offline hybrid semantic search engine for a project's files (notes,
//! Markdown, code, JSON memory records).
//!
//! A query runs intent → BM25 (tantivy) ‖ HNSW vectors (hnsw_rs, local ONNX embeddings) → weighted
//! RRF fusion → optional rerank → confidence labels and abstention; [`Engine::search`] reads as
//! those stages. [`Engine::context_for_prompt`] turns a prompt into the tiered context block the
//! Claude Code hook adds to it.
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
//! The stages are modules of their own for programs that assemble a pipeline differently:
//! [`ingest`] and [`chunk`] (files into chunks), [`embed`], [`index`], [`rerank`], [`tier`]
//! (labels and the context block), [`eval`] (golden sets and BEIR collections), and the hook
//! and its daemon ([`hook`], [`serve`]) that the `engine` binary runs.
#![warn(missing_docs)]

pub mod capture;
pub mod chunk;
pub mod config;
pub mod embed;
pub mod error;
pub mod eval;
pub mod hook;
pub mod index;
pub mod ingest;
pub mod mcp;
pub mod memory;
pub mod models;
pub mod rerank;
pub mod serve;
pub mod tier;
pub mod transcript;

mod abstain;
mod atomic;
mod builder;
mod fuse;
mod hit;
mod intent;
mod json_file;
mod prompt;
mod record;
mod search;
mod secrets;

pub use abstain::Verdict;
pub use builder::EngineBuilder;
pub use config::{Mode, Settings, SettingsLayer};
pub use embed::{Embedder, HashEmbedder, OnnxEmbedder};
pub use error::{Error, Result};
pub use fuse::{Leg, LegContribution};
pub use hit::{Confidence, Evidence, Explain, Hit, LearnedExplain};
pub use index::{BuildOptions, IndexReport};
pub use ingest::Source;
pub use intent::{Intent, IntentResult};
pub use models::Models;
pub use rerank::{RerankReport, Reranker};
pub use search::{Engine, SearchRequest, SearchResponse, Timings, VectorCoverage};
pub use tier::ContextBlock;
