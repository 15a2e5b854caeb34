//! engine: a local, offline hybrid semantic search engine.
//!
//! Pipeline: intent → BM25 (tantivy) ‖ HNSW vectors (hnsw_rs, local ONNX embeddings) → weighted
//! RRF fusion → optional rerank → confidence tiers. Each stage is one module.

pub mod config;
pub mod embed;
pub mod error;
pub mod models;

pub use config::{Settings, SettingsLayer};
pub use embed::{Embedder, HashEmbedder, OnnxEmbedder};
pub use error::{Error, Result};
pub use models::Models;
pub mod abstain;
pub mod chunk;
pub mod fuse;
pub mod hit;
pub mod hook;
pub mod index;
pub mod ingest;
pub mod intent;
pub mod prompt;
pub mod record;
pub mod rerank;
pub mod search;
pub mod secrets;
pub mod serve;
pub mod tier;

pub use search::{Engine, Hit, SearchRequest, SearchResponse};
pub mod eval;
