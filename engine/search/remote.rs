//! The legs run by a search backend (`[backend] url`, docs/scale-out.md): the query is embedded
//! here as for the local vector leg, the backend ranks its chunks by BM25 and by cosine, and each
//! chunk it names is found in the local index when there is one (its key, a document at a time),
//! else read from the backend's row. Fusion, boosts, labels, abstention and the context block then
//! run on those chunks exactly as they do for the local legs.
//!
//! Without a local index some signals are not to be had: the symbol leg, the document frequencies
//! that weigh the query's terms, which files a tool generated. The search leaves them out and says
//! so in its degraded reason.

use super::fuse::{Fused, LegHit};
use super::{Engine, Legs, SearchRequest, Timings};
use crate::backend::{Backend, RemoteChunk, RemoteQuery};
use crate::config::Mode;
use crate::error::{Error, Result};
use crate::hit::Hit;
use crate::index::reader::Snapshot;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a search without a local index leaves out (its degraded reason).
pub(super) const LEFT_OUT: &str = "no local index: the query's terms weigh the same (their document frequencies \
                                   are the local index's) and generated files are not told apart";

/// The keys of this generation's chunks by export id, for the documents the backend's hits named
/// so far: each document's chunks are hashed once per generation, when a hit first names it.
#[derive(Default)]
pub(super) struct Keys {
    by_id: HashMap<String, u64>,
    documents: HashSet<String>,
}

/// A chunk read from the backend, as the candidates stage takes it: the hit, whether its memory
/// record is superseded, and its category and creation time.
pub(super) type RemoteHit = (Hit, bool, Option<(String, i64)>);

impl Engine {
    /// The BM25 and vector legs as the backend at `url` ranks them; an error when it cannot be
    /// reached or answers with one.
    pub(super) fn remote_legs(
        &self,
        url: &str,
        snapshot: Option<&Snapshot>,
        query: &str,
        req: &SearchRequest,
        timings: &mut Timings,
    ) -> Result<Legs> {
        let wait = crate::backend::wait_for(self.settings.backend.timeout_ms, req.deadline);
        if wait.is_zero() {
            return Err(Error::BackendUnreachable {
                url: url.to_string(),
                reason: "the caller's deadline passed before the backend was asked".into(),
            });
        }
        let due = Instant::now() + wait;
        let backend = self.backend_for(url, wait)?;
        let n = self.settings.search.top_n.max(req.k);
        let mut legs = Legs { backend: Some(url.to_string()), backend_due: Some(due), ..Legs::default() };
        let query_vector = match req.mode {
            Mode::Bm25 => None,
            _ => match self.embed_query(query) {
                Ok((q, embed_ms)) => {
                    timings.embed = embed_ms;
                    Some(q)
                }
                Err(reason) => {
                    legs.degrade(&reason);
                    None
                }
            },
        };
        if snapshot.is_none() {
            legs.degrade(LEFT_OUT);
        }
        // Vector-only mode without a model: BM25 answers instead, as on the local index.
        let want_lex = req.mode != Mode::Vector || query_vector.is_none();
        let depth = n.max(self.settings.abstain.gap_rank);
        let started = Instant::now();
        let asked = RemoteQuery {
            text: want_lex.then_some(query),
            vector: query_vector.as_deref(),
            n: depth,
            boosts: &self.settings.bm25,
            vector_config: &self.settings.vector,
        };
        let remote = backend.legs(&asked, due.saturating_duration_since(Instant::now()))?;
        // The two run side by side on the backend, as the local legs do on two threads.
        (timings.bm25, timings.vector) = (super::ms(started), super::ms(started));
        let named = remote.lexical.iter().chain(remote.vector.iter()).flatten().map(|(id, _)| id.as_str());
        let local = self.local_keys(snapshot, named)?;
        let mut ranked = |hits: Vec<(String, f32)>, limit: usize| -> Vec<LegHit> {
            let mut out = Vec::new();
            for (i, (id, score)) in hits.into_iter().take(limit).enumerate() {
                let key = match local.get(&id) {
                    Some(key) => *key,
                    None => {
                        let key = remote_key(&id);
                        legs.remote.insert(key, id);
                        key
                    }
                };
                out.push(LegHit { key, rank: i + 1, score });
            }
            out
        };
        let lexical = remote.lexical.map(|hits| ranked(hits, n));
        let vector = remote.vector.map(|hits| ranked(hits, depth));
        legs.lexical = lexical.map(|hits| {
            let address = |key: u64| snapshot.filter(|_| !legs.remote.contains_key(&key))?.address_of(key);
            hits.into_iter().map(|h| (h, address(h.key))).collect()
        });
        // The backend's cosines stand in for the local vectors' where those lack the chunk.
        legs.cosines = vector.iter().flatten().map(|h| (h.key, h.score)).collect();
        legs.vector = vector;
        legs.query_vector = query_vector;
        Ok(legs)
    }

    /// The chunks fusion kept that only the backend has, read from it in one request.
    pub(super) fn remote_chunks(&self, legs: &Legs, fused: &[Fused]) -> Result<HashMap<u64, RemoteHit>> {
        let wanted: Vec<(u64, &String)> =
            fused.iter().filter_map(|f| legs.remote.get(&f.key).map(|id| (f.key, id))).collect();
        let (Some(url), Some(due), Some(backend)) = (&legs.backend, legs.backend_due, self.connected_backend()) else {
            return Ok(HashMap::new());
        };
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let wait = due.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            let reason = "the caller's deadline passed before the backend's chunks were read".into();
            return Err(Error::BackendUnreachable { url: url.clone(), reason });
        }
        let ids: Vec<String> = wanted.iter().map(|(_, id)| (*id).clone()).collect();
        let mut by_id: HashMap<String, RemoteChunk> =
            backend.chunks(&ids, wait)?.into_iter().map(|c| (c.id.clone(), c)).collect();
        // The query was embedded with this engine's model: another model's vectors (of the same
        // size) would answer without an error, and wrongly.
        let model = self.embedder.as_ref().map(|e| e.id().to_string());
        if let Some(other) = by_id.values().find(|c| model.as_ref().is_some_and(|m| *m != c.model)) {
            let reason = format!(
                "the collection was pushed from an index embedded with {}, and this engine's model is {}: \
                 search with that model, or push an index of this one",
                other.model,
                model.unwrap_or_default()
            );
            return Err(Error::Backend { url: url.clone(), reason });
        }
        Ok(wanted.into_iter().filter_map(|(key, id)| Some((key, remote_hit(by_id.remove(id)?)))).collect())
    }

    /// Every chunk of a document as the backend holds it (the neighbours of a hit when there is
    /// no local index); none when no backend is connected.
    pub(super) fn remote_chunks_of(&self, doc: &str) -> Result<Vec<Hit>> {
        let Some(backend) = self.connected_backend() else { return Ok(Vec::new()) };
        let wait = Duration::from_millis(self.settings.backend.timeout_ms);
        let chunks = backend.chunks_of(doc, crate::index::reader::CHUNKS_PER_DOCUMENT, wait)?;
        Ok(chunks.into_iter().map(|c| remote_hit(c).0).collect())
    }

    /// The connected backend, connecting now (within `wait`) if there is none yet.
    fn backend_for(&self, url: &str, wait: Duration) -> Result<Arc<Backend>> {
        let mut slot = self.backend.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(backend) = slot.as_ref() {
            return Ok(backend.clone());
        }
        let timeout = Duration::from_millis(self.settings.backend.timeout_ms);
        let backend = Arc::new(Backend::connect(url, timeout, wait)?);
        *slot = Some(backend.clone());
        Ok(backend)
    }

    /// The backend this engine connected to, for an engine that replaces it.
    pub(super) fn connected_backend(&self) -> Option<Arc<Backend>> {
        self.backend.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// This generation's key of each export id in `ids` that the local index has. A document's
    /// chunks are hashed the first time a hit names it ([`Keys`]), not the whole index up front.
    fn local_keys<'a>(
        &self,
        snapshot: Option<&Snapshot>,
        ids: impl Iterator<Item = &'a str>,
    ) -> Result<HashMap<String, u64>> {
        let Some(snapshot) = snapshot else { return Ok(HashMap::new()) };
        let mut keys = self.backend_keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut out = HashMap::new();
        for id in ids {
            let Some(doc) = crate::index::export::document_of(id) else { continue };
            if keys.documents.insert(doc.to_string()) {
                for (key, hit) in snapshot.keyed_chunks_of(doc)? {
                    keys.by_id.insert(crate::index::export::chunk_id(&hit.doc, &hit.title, &hit.text), key);
                }
            }
            if let Some(key) = keys.by_id.get(id) {
                out.insert(id.to_string(), *key);
            }
        }
        Ok(out)
    }
}

/// The key a chunk only the backend has gets for one query: a hash of its export id with the top
/// bit set, apart from every local key (vector ids, counted from 0).
fn remote_key(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    id.hash(&mut hasher);
    hasher.finish() | 1 << 63
}

/// A backend's chunk as an unscored hit, with its memory record's facts.
fn remote_hit(c: RemoteChunk) -> RemoteHit {
    let created = c.created.map(|at| (c.category.clone(), at));
    let hit = Hit {
        id: c.id,
        doc: c.document,
        path: c.path,
        title: c.title,
        start_line: c.start_line,
        end_line: c.end_line,
        text: c.text,
        kind: c.kind,
        lang: (!c.lang.is_empty()).then_some(c.lang),
        tags: c.tags,
        category: (!c.category.is_empty()).then_some(c.category),
        symbols: c.symbols,
        ..Hit::default()
    };
    (hit, c.superseded, created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_only_the_backend_has_gets_a_key_no_local_chunk_has() {
        let a = remote_key("docs/a.md#0123456789abcdef");
        assert_eq!(a, remote_key("docs/a.md#0123456789abcdef"), "the same id, the same key");
        assert_ne!(a, remote_key("docs/b.md#0123456789abcdef"));
        assert!(a >= 1 << 63);
    }

    #[test]
    fn a_backend_chunk_is_a_hit_with_its_memory_records_facts() {
        let chunk = RemoteChunk {
            id: "memory/a.json#00ff".into(),
            document: "memory/a.json".into(),
            path: ".claude/memory/a.json".into(),
            kind: "memory".into(),
            category: "decision".into(),
            created: Some(1_700_000_000),
            superseded: true,
            start_line: 1,
            end_line: 4,
            ..RemoteChunk::default()
        };
        let (hit, superseded, created) = remote_hit(chunk);
        assert_eq!((hit.doc.as_str(), hit.lang, hit.category.as_deref()), ("memory/a.json", None, Some("decision")));
        assert_eq!((superseded, created), (true, Some(("decision".to_string(), 1_700_000_000))));
    }
}
