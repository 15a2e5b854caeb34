//! The library's one error type. Every fallible public function returns [`Result`]; the binary maps
//! each variant to an exit-code class (see [`Error::exit_code`]) and prints the message as is, so
//! every message names what was wrong, where, and — when there is one — the command that fixes it.

use std::path::PathBuf;

/// Errors of the engine library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model or runtime file is absent or unreadable.
    #[error("model file {path} is missing or unreadable: {reason} (run scripts/fetch-models.sh)")]
    ModelMissing { path: PathBuf, reason: String },

    /// A model or runtime file exists but could not be loaded (corrupt, wrong format, wrong ABI).
    #[error("could not load {path}: {reason} (the file looks corrupt; run scripts/fetch-models.sh to reinstall it)")]
    ModelLoad { path: PathBuf, reason: String },

    /// No models directory was found.
    #[error("no models directory found (looked in: {searched}); run scripts/fetch-models.sh or set ENGINE_MODELS_DIR")]
    ModelsDirNotFound { searched: String },

    /// Running the embedding or reranking model failed.
    #[error("model inference failed: {0}")]
    Inference(String),

    /// No index exists where one was expected.
    #[error("no index at {path} (create it with `engine index`)")]
    IndexMissing { path: PathBuf },

    /// The index was written by a different schema, chunker or model.
    #[error("index at {path} was built with {found}, but this engine uses {expected}; rebuild it with `engine index --rebuild`")]
    IndexIncompatible { path: PathBuf, found: String, expected: String },

    /// Another process holds the index writer lock.
    #[error(
        "index at {path} is being written by another `engine index` (lock held: {holder}); wait for it or try again"
    )]
    Locked { path: PathBuf, holder: String },

    /// The index files are damaged beyond what the engine repairs by itself.
    #[error("index at {path} is damaged: {reason}; rebuild it with `engine index --rebuild`")]
    IndexCorrupt { path: PathBuf, reason: String },

    /// A configuration value is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),

    /// The caller passed something unusable (empty query, malformed file line, unknown id…).
    #[error("{0}")]
    InvalidInput(String),

    /// An I/O failure, with what was being done and on which path.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    /// A failure inside tantivy.
    #[error("full-text index error: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
}

/// Result alias used throughout the library.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps an I/O error with what was being done, e.g. `Error::io("reading /x/y", e)`.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    /// The process exit code for this error's class: 2 for bad input or usage (the caller can fix
    /// the call), 3 for missing or broken models, 4 for index state (missing, incompatible,
    /// locked, damaged), 1 for anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::InvalidInput(_) | Error::Config(_) => 2,
            Error::IndexMissing { .. } => 2,
            Error::ModelMissing { .. } | Error::ModelLoad { .. } | Error::ModelsDirNotFound { .. } => 3,
            Error::IndexIncompatible { .. } | Error::Locked { .. } | Error::IndexCorrupt { .. } => 4,
            Error::Inference(_) | Error::Io { .. } | Error::Tantivy(_) => 1,
        }
    }
}

/// Shorthand to attach a context to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::io(context(), e))
    }
}
