//! The library's one error type. Every fallible public function returns [`Result`]; the binary maps
//! each variant to an exit-code class (see [`Error::exit_code`]) and prints the message on one line
//! ([`one_line`]), so every message names what was wrong, where, and — when there is one — the
//! command that fixes it.

use std::path::PathBuf;

/// Errors of the engine library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model or runtime file is absent or unreadable.
    #[error("model file {path} is missing or unreadable: {reason} (run `engine models install`, or scripts/fetch-models.sh in a checkout)")]
    ModelMissing {
        /// The file looked for.
        path: PathBuf,
        /// Why it could not be used (the I/O error, or what is wrong with it).
        reason: String,
    },

    /// A model or runtime file exists but could not be loaded (corrupt, wrong format, wrong ABI).
    #[error("could not load {path}: {reason} (the file looks corrupt; run `engine models install`, or scripts/fetch-models.sh in a checkout, to reinstall it)")]
    ModelLoad {
        /// The file that failed to load.
        path: PathBuf,
        /// The loader's error.
        reason: String,
    },

    /// No models directory was found.
    #[error("no models directory found (looked in: {searched}); run `engine models install` (or scripts/fetch-models.sh in a checkout) or set ENGINE_MODELS_DIR")]
    ModelsDirNotFound {
        /// Every place looked in, in order, separated by `; `.
        searched: String,
    },

    /// Running the embedding or reranking model failed.
    #[error("model inference failed: {0}")]
    Inference(String),

    /// No index exists where one was expected.
    #[error("no index at {path} (create it with `engine index`)")]
    IndexMissing {
        /// The index directory.
        path: PathBuf,
    },

    /// The index was written by a different schema, chunker or model.
    #[error("index at {path} was built with {found}, but this engine uses {expected}; rebuild it with `engine index --rebuild`")]
    IndexIncompatible {
        /// The index directory.
        path: PathBuf,
        /// What the index was built with (schema, chunker and model versions, or vector size).
        found: String,
        /// What this engine would build it with, in the same form.
        expected: String,
    },

    /// Another process holds the index writer lock.
    #[error(
        "index at {path} is being written by another `engine index` (lock held: {holder}); wait for it or try again"
    )]
    Locked {
        /// The index directory.
        path: PathBuf,
        /// Who holds the lock: `pid N`, or `another process` when the lock file names none.
        holder: String,
    },

    /// The index files are damaged beyond what the engine repairs by itself.
    #[error("index at {path} is damaged: {reason}; `engine index` rebuilds it")]
    IndexCorrupt {
        /// The damaged file or directory.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// A configuration value is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),

    /// The caller passed something unusable (empty query, malformed file line, unknown id…).
    #[error("{0}")]
    InvalidInput(String),

    /// An I/O failure, with what was being done and on which path.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, and on which path.
        context: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A failure inside tantivy.
    #[error("full-text index error: {0}")]
    Tantivy(#[from] tantivy::TantivyError),

    /// The search backend (`[backend] url`) could not be reached: no server there, or it did not
    /// answer in time.
    #[error("the search backend at {url} is unreachable: {reason} (start it, or search without --backend / `[backend] url`)")]
    BackendUnreachable {
        /// The backend's URL.
        url: String,
        /// What the connection or the request met.
        reason: String,
    },

    /// The search backend answered with an error (a collection of another model or vector size,
    /// a request it refused).
    #[error("the search backend at {url} failed: {reason}")]
    Backend {
        /// The backend's URL.
        url: String,
        /// The server's or the client's error.
        reason: String,
    },
}

/// Result alias used throughout the library.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps an I/O error with what was being done, e.g. `Error::io("reading /x/y", e)`.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    /// What kind of failure this is, for a caller that reacts by kind (the `engine` binary maps
    /// each class to its exit code).
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::InvalidInput(_) | Error::Config(_) | Error::IndexMissing { .. } => ErrorClass::Input,
            Error::ModelMissing { .. } | Error::ModelLoad { .. } | Error::ModelsDirNotFound { .. } => ErrorClass::Model,
            Error::IndexIncompatible { .. } | Error::Locked { .. } | Error::IndexCorrupt { .. } => ErrorClass::Index,
            Error::Inference(_) | Error::Io { .. } | Error::Tantivy(_) | Error::Backend { .. } => ErrorClass::Other,
            Error::BackendUnreachable { .. } => ErrorClass::Unreachable,
        }
    }
}

/// The kinds of [`Error`]: what a caller can do about one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ErrorClass {
    /// Bad input or usage: the caller can fix the call (an empty query, a bad value, no index
    /// where one was named).
    Input,
    /// Model files missing or broken: install them again.
    Model,
    /// Index state: built by another model or schema, locked by a writer, or damaged; rebuild or
    /// wait.
    Index,
    /// The search backend (`[backend] url`) is down or too slow: start it, or search locally.
    Unreachable,
    /// Anything else (I/O, inference, an error the search backend answered with).
    Other,
}

/// An error and its causes, each said once, joined by `: `: library errors already end with
/// their source, which a chain of causes would repeat. The `engine` binary's one line, whether the
/// error happened in its process or in the daemon that answered for it.
pub(crate) fn said_once(causes: impl IntoIterator<Item = String>) -> String {
    let mut out = String::new();
    for text in causes {
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// [`said_once`] over an error and its `source` chain.
pub(crate) fn chain_text(err: &(dyn std::error::Error + 'static)) -> String {
    said_once(std::iter::successors(Some(err), |e| e.source()).map(ToString::to_string))
}

/// `message` on one line: line breaks and other control characters (from a path, a config
/// value, a dependency's multi-line message) are escaped, so an error is always exactly one line.
pub fn one_line(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

thread_local! {
    /// Set while [`catch_panic`] runs: the panic it turns into an error is not printed.
    static QUIET_PANIC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic inside it into `Err(message)` without printing it. For dependencies
/// that assert on damaged input instead of returning an error (tantivy on truncated files); other
/// panics, anywhere else, still go to the previous panic hook.
pub(crate) fn catch_panic<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET_PANIC.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    let was_quiet = QUIET_PANIC.with(|q| q.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET_PANIC.with(|q| q.set(was_quiet));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panicked".into())
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_line_breaks_and_control_characters() {
        assert_eq!(one_line("no index at /tmp/a\nb/.engine"), "no index at /tmp/a\\nb/.engine");
        assert_eq!(one_line("x\r\u{1b}[31m\u{2028}y"), "x\\r\\u{1b}[31m\\u{2028}y");
        assert_eq!(one_line("plain: ünïcode ok"), "plain: ünïcode ok");
    }

    #[test]
    fn a_caught_panic_becomes_its_message() {
        assert_eq!(catch_panic(|| 7), Ok(7));
        assert_eq!(catch_panic(|| -> i32 { panic!("truncated {}", "file") }), Err("truncated file".to_string()));
    }
}
