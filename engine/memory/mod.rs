//! Project memory: records under `.claude/memory/`, the store that reads and writes them, and the
//! loop that fills it from Claude Code transcripts (transcript → capture → records).

pub mod capture;
pub(crate) mod record;
mod store;
pub mod transcript;

pub use store::*;
