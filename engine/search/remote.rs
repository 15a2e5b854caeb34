//! The legs run by a search backend (`[backend] url`, docs/scale-out.md): the query is embedded
//! here as for the local vector leg, the backend ranks its chunks by BM25 and by cosine, and its
//! chunk ids are mapped back to this index's chunks, so fusion, boosts, labels, abstention and
//! the context block run on the local chunks exactly as they do for the local legs.

use super::fuse::LegHit;
use super::{timed, Engine, Legs, SearchRequest, Timings};
use crate::backend::{Backend, RemoteQuery};
use crate::config::Mode;
use crate::error::Result;
use crate::index::reader::Snapshot;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

impl Engine {
    /// The BM25 and vector legs as the backend at `url` ranks them; an error when it cannot be
    /// reached or answers with one.
    pub(super) fn remote_legs(
        &self,
        url: &str,
        snapshot: &Snapshot,
        query: &str,
        req: &SearchRequest,
        timings: &mut Timings,
    ) -> Result<Legs> {
        let wait = crate::backend::wait_for(self.settings.backend.timeout_ms, req.deadline);
        if wait.is_zero() {
            return Err(crate::Error::BackendUnreachable {
                url: url.to_string(),
                reason: "the caller's deadline passed before the backend was asked".into(),
            });
        }
        let backend = self.backend_for(url, wait)?;
        let n = self.settings.search.top_n.max(req.k);
        let mut legs = Legs { backend: Some(url.to_string()), ..Legs::default() };
        let query_vector = match req.mode {
            Mode::Bm25 => None,
            _ => match self.embedder.as_ref() {
                Some(e) => Some(timed(&mut timings.embed, || e.embed_query(query))?),
                None => {
                    legs.degraded_reason =
                        Some(self.embed_error.clone().unwrap_or_else(|| "no embedding model".into()));
                    None
                }
            },
        };
        // Vector-only mode without a model: BM25 answers instead, as on the local index.
        let want_lex = req.mode != Mode::Vector || query_vector.is_none();
        let depth = n.max(self.settings.abstain.gap_rank);
        let started = std::time::Instant::now();
        let asked = RemoteQuery {
            text: want_lex.then_some(query),
            vector: query_vector.as_deref(),
            n: depth,
            boosts: &self.settings.bm25,
            vector_config: &self.settings.vector,
        };
        let remote = backend.legs(&asked, wait)?;
        // The two run side by side on the backend, as the local legs do on two threads.
        (timings.bm25, timings.vector) = (super::ms(started), super::ms(started));
        let keys = self.backend_keys(snapshot)?;
        let local = |hits: Vec<(String, f32)>, limit: usize| -> Vec<LegHit> {
            hits.into_iter()
                .filter_map(|(id, score)| keys.get(&id).map(|key| (*key, score)))
                .take(limit)
                .enumerate()
                .map(|(i, (key, score))| LegHit { key, rank: i + 1, score })
                .collect()
        };
        legs.lexical = remote.lexical.map(|hits| {
            local(hits, n).into_iter().filter_map(|h| snapshot.address_of(h.key).map(|a| (h, a))).collect()
        });
        legs.vector = remote.vector.map(|hits| local(hits, depth));
        legs.query_vector = query_vector;
        Ok(legs)
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

    /// Every chunk's key in this generation by its export id (computed once per generation: a
    /// hash of each chunk's text).
    fn backend_keys(&self, snapshot: &Snapshot) -> Result<&HashMap<String, u64>> {
        if let Some(keys) = self.backend_keys.get() {
            return Ok(keys);
        }
        let mut keys = HashMap::new();
        for chunk in snapshot.all() {
            let (key, hit) = chunk?;
            keys.insert(crate::index::export::chunk_id(&hit.doc, &hit.title, &hit.text), key);
        }
        Ok(self.backend_keys.get_or_init(|| keys))
    }
}
