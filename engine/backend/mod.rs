//! Search backends past one machine: `engine push` copies the index into a distributed engine,
//! and `[backend] url` (`search --backend`) has that engine run the BM25 and vector legs. The
//! rest of the search path — intent, the query embedding, fusion, boosts, labels, abstention,
//! tiers and redaction — stays in [`crate::Engine`], on the local index's chunks, so the same
//! prompts get the same answers whichever runs the legs (docs/scale-out.md).
//!
//! One backend so far: Milvus (Lite, Standalone or Distributed: one gRPC API), through the
//! official Rust SDK behind the `milvus` cargo feature. Its async runtime lives inside
//! [`milvus`]; everything here is synchronous.
//!
//! A machine without the index (only the URL and the model) searches the same way: the chunks
//! the legs find are read from the backend's rows ([`RemoteChunk`]) instead of the local index.

#[cfg(feature = "milvus")]
mod milvus;

use crate::error::{Error, Result};
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// A backend's address: `milvus://HOST:PORT/COLLECTION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BackendUrl {
    /// Host name or address (an IPv6 address in brackets).
    pub host: String,
    /// gRPC port.
    pub port: u16,
    /// The collection holding the index.
    pub collection: String,
}

impl BackendUrl {
    /// Parses `milvus://HOST:PORT/COLLECTION`; anything else is bad input (exit 2), said with the
    /// form expected.
    pub(crate) fn parse(url: &str) -> Result<BackendUrl> {
        let bad = |why: &str| {
            Error::InvalidInput(format!("bad backend URL {url:?}: {why}; expected milvus://HOST:PORT/COLLECTION"))
        };
        let rest = url.strip_prefix("milvus://").ok_or_else(|| bad("the scheme must be milvus://"))?;
        let (authority, collection) = rest.split_once('/').ok_or_else(|| bad("no collection"))?;
        let (host, port) = authority.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        let port: u16 = port.parse().ok().filter(|p| *p > 0).ok_or_else(|| bad("the port is not 1..=65535"))?;
        let host_ok = !host.is_empty()
            && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'));
        if !host_ok {
            return Err(bad("no host, or a host with characters a host name cannot have"));
        }
        // Milvus's rule for collection names.
        let mut chars = collection.chars();
        let name_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && collection.len() <= 255;
        if !name_ok {
            return Err(bad("a collection name is a letter or _ then letters, digits and _"));
        }
        Ok(BackendUrl { host: host.to_string(), port, collection: collection.to_string() })
    }
}

impl fmt::Display for BackendUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "milvus://{}:{}/{}", self.host, self.port, self.collection)
    }
}

/// What one `engine push` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PushReport {
    /// Chunks in the local index.
    pub chunks: usize,
    /// Whether the collection was created by this push.
    pub created: bool,
    /// Chunks written: new ones, and those whose content or fields changed.
    pub upserted: usize,
    /// Chunks the collection held that the index no longer has.
    pub deleted: usize,
    /// Whether the collection's ids and fingerprints were listed from the server; false when
    /// this index's record of its last push to the collection held, the server's row count
    /// agreeing with it (a `--full` push always lists).
    pub listed: bool,
}

/// What one index last pushed to one collection: every row's fingerprint by id, and the rows
/// the collection then held. Kept beside the index (`pushed-HOST_PORT_COLLECTION.json`), so a
/// push with nothing changed compares against it instead of listing every id from the server.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Pushed {
    pub collection_rows: usize,
    pub fingerprints: std::collections::HashMap<String, String>,
}

impl Pushed {
    fn path(index_dir: &Path, url: &BackendUrl) -> std::path::PathBuf {
        let name: String = format!("{}_{}_{}", url.host, url.port, url.collection)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '.' { c } else { '_' })
            .collect();
        index_dir.join(format!("pushed-{name}.json"))
    }

    /// The record of the last push of this index to `url`; `None` when there is none or it
    /// cannot be read (the push then lists the collection).
    pub(crate) fn load(index_dir: &Path, url: &BackendUrl) -> Option<Pushed> {
        let bytes = std::fs::read(Pushed::path(index_dir, url)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub(crate) fn save(&self, index_dir: &Path, url: &BackendUrl) -> Result<()> {
        let bytes = serde_json::to_vec(self).map_err(|e| Error::InvalidInput(format!("the push record: {e}")))?;
        crate::files::atomic::write_atomic(&Pushed::path(index_dir, url), &bytes)
    }
}

/// What the legs are asked for: the lexical leg for `text` (its fields weighted by `boosts`)
/// and the vector leg for `vector`, each when given, `n` hits each; `vector_config` sets how
/// deep the HNSW search looks, as it does on the local graph.
pub(crate) struct RemoteQuery<'a> {
    pub text: Option<&'a str>,
    pub vector: Option<&'a [f32]>,
    pub n: usize,
    pub boosts: &'a crate::config::Bm25Config,
    pub vector_config: &'a crate::config::VectorConfig,
}

/// How long a search waits for the backend: `[backend] timeout_ms`, or less when the caller's
/// deadline (the hook's) comes first; zero when it has passed.
pub(crate) fn wait_for(timeout_ms: u64, deadline: Option<std::time::Instant>) -> Duration {
    let timeout = Duration::from_millis(timeout_ms);
    match deadline {
        Some(d) => timeout.min(d.saturating_duration_since(std::time::Instant::now())),
        None => timeout,
    }
}

/// The two legs as the backend ranked them: chunk ids ([`crate::index::export::ExportedChunk::id`])
/// with the leg's score (BM25, or cosine), best first. `None` for a leg not asked for.
#[derive(Debug, Default)]
pub(crate) struct RemoteLegs {
    pub lexical: Option<Vec<(String, f32)>>,
    pub vector: Option<Vec<(String, f32)>>,
}

/// A chunk as the backend stores it: what the search path reads of a hit the local index does
/// not have (or when there is no local index).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RemoteChunk {
    /// The export id ([`crate::index::export::ExportedChunk::id`]).
    pub id: String,
    pub document: String,
    pub path: String,
    pub title: String,
    pub kind: String,
    pub lang: String,
    pub symbols: Vec<String>,
    pub tags: Vec<String>,
    pub category: String,
    pub text: String,
    pub start_line: usize,
    pub end_line: usize,
    /// When a memory record was created (seconds since the epoch), if known.
    pub created: Option<i64>,
    pub superseded: bool,
    /// The model that embedded it.
    pub model: String,
}

/// A connected backend.
pub struct Backend {
    #[cfg(feature = "milvus")]
    client: milvus::Milvus,
}

impl Backend {
    /// Connects to the backend at `url` within `wait`; each later request is answered within
    /// `timeout` at most. A bad URL is bad input, no answer in time is
    /// [`Error::BackendUnreachable`].
    pub fn connect(url: &str, timeout: Duration, wait: Duration) -> Result<Backend> {
        let url = BackendUrl::parse(url)?;
        #[cfg(feature = "milvus")]
        {
            Ok(Backend { client: milvus::Milvus::connect(url, timeout, wait.min(timeout))? })
        }
        #[cfg(not(feature = "milvus"))]
        {
            let _ = (timeout, wait);
            Err(Error::InvalidInput(format!(
                "{url}: this engine was built without the `milvus` cargo feature; rebuild it with `--features milvus`"
            )))
        }
    }

    /// Brings the backend's collection in line with the index at `index_dir`: creates it if need
    /// be, writes the chunks it lacks or holds in another version, deletes those the index no
    /// longer has. A second push of an unchanged index writes nothing.
    /// `vector` gives the HNSW parameters of a collection it creates. With `full`, the
    /// collection's ids are listed from the server even when this index's record of its last
    /// push agrees with the server's row count.
    pub fn push(&self, index_dir: &Path, vector: &crate::config::VectorConfig, full: bool) -> Result<PushReport> {
        #[cfg(feature = "milvus")]
        {
            self.client.push(index_dir, vector, full)
        }
        #[cfg(not(feature = "milvus"))]
        {
            let _ = (index_dir, vector, full);
            unreachable!("no backend connects without the milvus feature")
        }
    }

    /// The legs `query` asks for, answered within `wait` (else [`Error::BackendUnreachable`]).
    pub(crate) fn legs(&self, query: &RemoteQuery<'_>, wait: Duration) -> Result<RemoteLegs> {
        #[cfg(feature = "milvus")]
        {
            self.client.legs(query, wait)
        }
        #[cfg(not(feature = "milvus"))]
        {
            let _ = (query, wait);
            unreachable!("no backend connects without the milvus feature")
        }
    }
}

impl Backend {
    /// The chunks stored under these export ids (those the backend has), answered within `wait`.
    pub(crate) fn chunks(&self, ids: &[String], wait: Duration) -> Result<Vec<RemoteChunk>> {
        #[cfg(feature = "milvus")]
        {
            self.client.chunks(ids, wait)
        }
        #[cfg(not(feature = "milvus"))]
        {
            let _ = (ids, wait);
            unreachable!("no backend connects without the milvus feature")
        }
    }

    /// Every chunk of one document (up to `limit`), answered within `wait`.
    pub(crate) fn chunks_of(&self, document: &str, limit: usize, wait: Duration) -> Result<Vec<RemoteChunk>> {
        #[cfg(feature = "milvus")]
        {
            self.client.chunks_of(document, limit, wait)
        }
        #[cfg(not(feature = "milvus"))]
        {
            let _ = (document, limit, wait);
            unreachable!("no backend connects without the milvus feature")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_waits_for_the_backend_no_longer_than_its_deadline_leaves() {
        use std::time::Instant;
        assert_eq!(wait_for(3000, None), Duration::from_millis(3000));
        // The hook's deadline (1.5 s) comes before the backend's timeout (3 s).
        let hook = wait_for(3000, Some(Instant::now() + Duration::from_millis(1500)));
        assert!(hook <= Duration::from_millis(1500) && hook > Duration::from_millis(1000), "{hook:?}");
        // A timeout shorter than what is left holds.
        assert_eq!(wait_for(200, Some(Instant::now() + Duration::from_secs(60))), Duration::from_millis(200));
        // A passed deadline leaves nothing to wait.
        assert_eq!(wait_for(3000, Some(Instant::now() - Duration::from_millis(5))), Duration::ZERO);
    }

    #[test]
    fn a_backend_url_is_milvus_host_port_collection_and_anything_else_says_the_form() {
        let url = BackendUrl::parse("milvus://127.0.0.1:19530/project_docs").unwrap();
        assert_eq!((url.host.as_str(), url.port, url.collection.as_str()), ("127.0.0.1", 19530, "project_docs"));
        assert_eq!(url.to_string(), "milvus://127.0.0.1:19530/project_docs");
        assert_eq!(BackendUrl::parse("milvus://[::1]:19530/c").unwrap().host, "[::1]");
        for bad in [
            "http://localhost:19530/c",
            "milvus://localhost/c",
            "milvus://localhost:19530",
            "milvus://localhost:0/c",
            "milvus://localhost:70000/c",
            "milvus://:19530/c",
            "milvus://local host:19530/c",
            "milvus://localhost:19530/9lives",
            "milvus://localhost:19530/a-b",
            "milvus://localhost:19530/",
        ] {
            let err = BackendUrl::parse(bad).unwrap_err();
            assert!(
                err.class() == crate::ErrorClass::Input && err.to_string().contains("milvus://HOST:PORT/COLLECTION"),
                "{bad}: {err}"
            );
        }
    }
}
