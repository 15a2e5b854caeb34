//! What the daemon shares between the threads answering connections and the watch thread.
//!
//! Engines are read-only and shared as `Arc`s: a request takes the current one and answers from it
//! with no lock held. Whatever replaces an engine (a reindex, a new generation, a config reload)
//! builds the new one beside it, serialised by `writer`, and swaps it in; a reader waits at most
//! for the swap itself.

use super::search::{render, Failure, Printed, SearchCall};
use super::{inode, DirId};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::search::Engine;
use crate::{Mode, Settings};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

/// Locks a mutex whatever a panicking holder left: every guarded value is replaced whole.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Opens the engine prompts are answered with, reusing an already loaded embedder when there is one.
fn open_engine(index: &Path, settings: Settings, embedder: Option<Arc<dyn Embedder>>) -> Result<Engine> {
    let rerank = settings.hook.rerank;
    Engine::open_serving(index, settings, embedder, rerank)
}

/// A counting semaphore: at most `n` searches at once, so requests arriving together finish one
/// after another instead of all sharing the cores and all finishing last.
pub(super) struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

/// One permit, given back when dropped.
pub(super) struct Permit<'a>(&'a Permits);

impl Permits {
    pub fn new(n: usize) -> Permits {
        Permits { free: Mutex::new(n.max(1)), freed: Condvar::new() }
    }

    pub fn acquire(&self) -> Permit<'_> {
        let mut free = lock(&self.free);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *lock(&self.0.free) += 1;
        self.0.freed.notify_one();
    }
}

/// The daemon's state.
pub(super) struct Daemon {
    pub index: PathBuf,
    pub dir: DirId,
    pub socket: PathBuf,
    pub socket_ino: Option<u64>,
    /// `--idle-timeout`; otherwise the (reloadable) `[hook] idle_timeout_s`.
    pub idle_override: Option<Duration>,
    pub started: Instant,
    /// The engine prompts are answered with (the project's settings, the HNSW graph).
    engine: RwLock<Arc<Engine>>,
    /// The project's settings and the config file's content they were read from (`None`: no file).
    config: Mutex<(Settings, Option<Vec<u8>>)>,
    /// Held by whatever replaces an engine or writes the index.
    writer: Mutex<()>,
    /// The engine `engine search` was last answered with: its settings are the command's, its
    /// vectors scanned exactly, as the command opens them in its own process.
    searcher: Mutex<Option<Arc<Engine>>>,
    last_request: Mutex<Instant>,
    /// Requests answered, of each kind: prompts, searches.
    pub prompts: AtomicU64,
    pub searches: AtomicU64,
    /// Searches running at once at most.
    pub permits: Permits,
}

impl Daemon {
    /// Opens the index with the project's settings (loading the model).
    pub fn open(index: PathBuf, dir: DirId, socket: PathBuf, idle_override: Option<Duration>) -> Result<Daemon> {
        let config_seen = std::fs::read(crate::integrations::prompt::project_config(&index)).ok();
        let (settings, warnings) = crate::integrations::prompt::project_settings(&index);
        for w in warnings {
            eprintln!("engine serve: {w}");
        }
        let engine = open_engine(&index, settings.clone(), None)?;
        Ok(Daemon::with_engine(index, dir, socket, idle_override, engine, settings, config_seen))
    }

    pub fn with_engine(
        index: PathBuf,
        dir: DirId,
        socket: PathBuf,
        idle_override: Option<Duration>,
        engine: Engine,
        settings: Settings,
        config_seen: Option<Vec<u8>>,
    ) -> Daemon {
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
        Daemon {
            socket_ino: inode(&socket),
            index,
            dir,
            socket,
            idle_override,
            started: Instant::now(),
            engine: RwLock::new(Arc::new(engine)),
            config: Mutex::new((settings, config_seen)),
            writer: Mutex::new(()),
            searcher: Mutex::new(None),
            last_request: Mutex::new(Instant::now()),
            prompts: AtomicU64::new(0),
            searches: AtomicU64::new(0),
            permits: Permits::new(workers),
        }
    }

    /// The engine prompts are answered with now.
    pub fn engine(&self) -> Arc<Engine> {
        self.engine.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn swap(&self, engine: Engine) {
        *self.engine.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(engine);
    }

    pub fn settings(&self) -> Settings {
        lock(&self.config).0.clone()
    }

    pub fn touch(&self) {
        *lock(&self.last_request) = Instant::now();
    }

    /// Whether this daemon no longer serves anything: its index directory was deleted or
    /// replaced, or its socket is gone or another daemon's (no client can reach it then).
    pub fn orphaned(&self) -> bool {
        super::dir_id(&self.index) != Some(self.dir) || inode(&self.socket) != self.socket_ino
    }

    pub fn idle_too_long(&self) -> bool {
        let idle = self.idle_override.unwrap_or(Duration::from_secs(lock(&self.config).0.hook.idle_timeout_s));
        lock(&self.last_request).elapsed() >= idle
    }

    /// Exits, removing the socket only if it is still ours, not one a newer daemon bound since.
    pub fn exit(&self, why: &str) -> ! {
        eprintln!("engine serve: {why}; exiting");
        if self.socket_ino.is_some() && inode(&self.socket) == self.socket_ino {
            let _ = std::fs::remove_file(&self.socket);
        }
        // As in `hook::finish`: no exit handlers or ONNX Runtime destructors may run under a thread
        // still inside the runtime (the warm-up, a reindex, a search on another connection).
        // SAFETY: _exit only ends the process.
        unsafe { libc::_exit(0) }
    }

    /// Exits when orphaned; reloads the settings when the config file changed.
    pub fn check(&self) {
        if self.orphaned() {
            self.exit(&format!("{} was removed or replaced", self.index.display()));
        }
        self.reload_if_changed();
    }

    /// Reloads the settings after the config file changed (content compared: a rewrite can keep
    /// the size and the modification time). Keeps the model unless `[embed]` changed.
    pub fn reload_if_changed(&self) {
        let path = crate::integrations::prompt::project_config(&self.index);
        if std::fs::read(&path).ok() == lock(&self.config).1 {
            return;
        }
        let _writer = lock(&self.writer);
        // Read again under the lock: another thread may have reloaded it meanwhile.
        let content = std::fs::read(&path).ok();
        if content == lock(&self.config).1 {
            return;
        }
        let (settings, warnings) = crate::integrations::prompt::project_settings(&self.index);
        for w in warnings {
            eprintln!("engine serve: {w}");
        }
        let current = self.settings();
        if settings == current {
            lock(&self.config).1 = content;
            return;
        }
        let engine = self.engine();
        let keep = if settings.embed == current.embed { engine.embedder().cloned() } else { None };
        match open_engine(&self.index, settings.clone(), keep) {
            Ok(engine) => {
                self.swap(engine);
                *lock(&self.config) = (settings, content);
            }
            Err(e) => {
                eprintln!("engine serve: config changed but the index could not be reopened: {e}");
                lock(&self.config).1 = content;
            }
        }
    }

    /// Reads the new generation when one appeared (an index run finished), keeping the models.
    /// A reader that finds another thread already at it answers from the engine it has.
    pub fn refresh(&self) {
        if self.stale() {
            if let Ok(_writer) = self.writer.try_lock() {
                self.refresh_locked();
            }
        }
    }

    fn stale(&self) -> bool {
        matches!(crate::index::store::current_generation(&self.index), Ok(Some(g)) if g != self.engine().generation_dir())
    }

    /// [`Daemon::refresh`], `writer` held.
    fn refresh_locked(&self) {
        if !self.stale() {
            return;
        }
        match self.engine().reopened() {
            Ok(engine) => self.swap(engine),
            Err(e) => eprintln!("engine serve: could not reopen the index: {e}"),
        }
    }

    /// Brings the index up to date with the project (files were edited), then reads it.
    pub fn reindex(&self) {
        let Some(embedder) = self.engine().embedder().cloned() else { return };
        let settings = self.settings();
        let _writer = lock(&self.writer);
        match crate::integrations::prompt::reindex(&self.index, &settings, embedder.as_ref()) {
            Ok(()) => {}
            // Another run holds the index (a first index, a capture's): the next prompt tries
            // again rather than the edits waiting for the next edit.
            Err(Error::Locked { .. }) => crate::integrations::prompt::defer_reindex(&self.index),
            Err(e) => eprintln!("engine serve: reindex failed: {e}"),
        }
        self.refresh_locked();
    }

    /// Answers `engine search`: `Err(why)` when this daemon cannot answer exactly as the
    /// command would in its own process (it then searches there).
    pub fn search(&self, call: &SearchCall) -> std::result::Result<std::result::Result<Printed, Failure>, String> {
        let engine = self.searcher(&call.settings)?;
        let _permit = self.permits.acquire();
        Ok(render(&engine, call).map_err(|e| Failure::of(&e)))
    }

    /// The engine for a search with `settings`: the one kept when it has those settings and reads
    /// the live generation, else one opened as `engine search` opens it, with the daemon's model.
    fn searcher(&self, settings: &Settings) -> std::result::Result<Arc<Engine>, String> {
        let served = self.engine();
        let lexical = settings.search.mode == Mode::Bm25;
        let embedder = match served.embedder() {
            _ if lexical => None,
            Some(e) if settings.embed == self.settings().embed => Some(e.clone()),
            Some(_) => return Err("the search's [embed] settings are not the daemon's".into()),
            None => return Err("the daemon has no embedding model".into()),
        };
        let mut kept = lock(&self.searcher);
        let live = crate::index::store::current_generation(&self.index).ok().flatten();
        if let Some(e) =
            kept.as_ref().filter(|e| e.settings() == settings && Some(e.generation_dir()) == live.as_deref())
        {
            return Ok(e.clone());
        }
        let dir = &self.index;
        let opened = match embedder {
            None => Engine::open_lexical(dir, settings.clone()),
            Some(embedder) => Engine::with_embedder(dir, settings.clone(), Some(embedder), None).map(|e| {
                let models = crate::models::Models::locate().map(|m| m.cached_in(dir));
                e.without_graph().with_configured_reranker(models.as_ref().ok(), settings.rerank.mode)
            }),
        };
        let engine = Arc::new(opened.map_err(|e| format!("opening the index for the search: {e}"))?);
        if !lexical {
            engine.preload();
        }
        *kept = Some(engine.clone());
        Ok(engine)
    }
}
