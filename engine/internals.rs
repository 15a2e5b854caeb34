//! Internals this repository's own tests and benches reach (feature `internals`, which the
//! package's dev-dependency on itself turns on). Not an API: no stability, no documentation
//! promise; a program depending on the crate has no reason to enable it.

pub use crate::backend::{Backend, PushReport};
pub use crate::chunk::chunk_document;
pub use crate::config::{ChunkConfig, ContextConfig, TierConfig, VectorConfig};
pub use crate::context::{context, label};
pub use crate::embed::tokens::WordPieceCounter;
pub use crate::embed::{dot, LazyOnnxEmbedder};
pub use crate::eval::percentile;
pub use crate::index::store::current_generation;
pub use crate::index::store::WriterLock;
pub use crate::index::vector::{top_k, Graph, VectorStore};
pub use crate::index::{build, embed_text, status};
pub use crate::ingest::scan_beir;
pub use crate::memory::transcript;
pub use crate::search::rerank::sigmoid;
