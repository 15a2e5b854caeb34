//! The tools `engine mcp` offers and the state they run on: the project root, its index, the
//! [`Engine`] opened once (the model stays loaded) and reopened on a new generation, and a chunk
//! reader of the same generation for `get`.
//!
//! Everything a tool returns is the index's text (secrets were redacted when it was indexed, and
//! again here, with control and format characters removed): `get` never reads a file from disk, so
//! it shows nothing the index does not hold, and refuses paths outside the project.

use super::results::{
    chunk_header, Forgotten, GetChunk, GetReply, RecentRecord, RecentReply, Remembered, Reply, SearchHit, SearchReply,
};
use crate::config::{Mode, Settings};
use crate::error::Error;
use crate::hit::Hit;
use crate::index::reader::ChunkReader;
use crate::ingest::Source;
use crate::memory::{self, Added, MemoryRecord, MemoryStore};
use crate::search::{Engine, SearchRequest};
use serde_json::{json, Map, Value};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

/// The tools, in the order `tools/list` gives them.
pub(crate) const NAMES: [&str; 5] = ["search", "get", "remember", "forget", "recent"];

/// What the server tells the client about itself (`initialize` → `instructions`).
pub(crate) const INSTRUCTIONS: &str =
    "Search this project's code, docs and memory records (past decisions, conventions, \
fixes) by meaning and by keyword. search gives compact hits; get gives a hit's full text (and neighbouring chunks). \
remember saves a decision, convention or fact for later sessions; recent lists the newest records; forget deletes one.";

/// Most hits `search` returns.
const MAX_K: usize = 50;
/// Longest query, in characters.
const MAX_QUERY_CHARS: usize = 2000;
/// Characters of a hit's one-line summary.
const SUMMARY_CHARS: usize = 160;
/// `get`'s token budget: default and bounds.
const GET_TOKENS: usize = 2000;
const GET_TOKENS_MIN: usize = 100;
const GET_TOKENS_MAX: usize = 20_000;
/// Most neighbouring chunks `get` adds on each side.
const MAX_NEIGHBOURS: usize = 5;
/// Longest memory record `remember` takes: title and content, in characters.
const MAX_TITLE_CHARS: usize = 300;
const MAX_CONTENT_CHARS: usize = 50_000;
const MAX_TAGS: usize = 20;
const MAX_TAG_CHARS: usize = 64;
/// How long `remember` and `forget` wait for another indexing run to release the index.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// The tool definitions of `tools/list`: names, descriptions and input schemas written for a model.
pub(crate) fn list() -> Value {
    json!([
        {
            "name": "search",
            "title": "Search the project",
            "description": "Search this project's code, docs and memory records (decisions, conventions, fixes from earlier sessions) by meaning and keywords. Returns compact hits (id = path#number, lines, title, confidence high/medium/low, a one-line summary), a warning when nothing seems to answer, and the next step: get with an id gives the full text.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "A question, identifiers or keywords."},
                    "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10, "description": "Number of hits."},
                    "mode": {"type": "string", "enum": ["hybrid", "bm25", "vector"], "default": "hybrid", "description": "hybrid (default); bm25 for exact words and identifiers; vector for meaning alone."},
                    "kind": {"type": "string", "enum": ["code", "docs", "memory"], "description": "Only code, only docs (Markdown, reStructuredText, AsciiDoc, Texinfo, xdoc and text), or only memory records."},
                    "path": {"type": "string", "description": "Only files under this path prefix, relative to the project root (e.g. src/auth/)."},
                    "timings": {"type": "boolean", "default": false, "description": "Add timings_ms, milliseconds per stage (for benchmarks)."}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "outputSchema": SearchReply::schema(),
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "get",
            "title": "Read indexed text",
            "description": "Full text of a search hit (id), or of the indexed chunks covering a file's lines (path, start_line, end_line). neighbours adds that many chunks before and after, for context. Stays within max_tokens.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "A hit id from search (path#number), or a memory record's id (the context's record attribute)."},
                    "path": {"type": "string", "description": "Instead of id: a file path relative to the project root."},
                    "start_line": {"type": "integer", "minimum": 1, "description": "With path: first line wanted (default 1)."},
                    "end_line": {"type": "integer", "minimum": 1, "description": "With path: last line wanted (default: the end)."},
                    "neighbours": {"type": "integer", "minimum": 0, "maximum": MAX_NEIGHBOURS, "default": 0, "description": "Chunks to add on each side."},
                    "max_tokens": {"type": "integer", "minimum": GET_TOKENS_MIN, "maximum": GET_TOKENS_MAX, "default": GET_TOKENS, "description": "Token budget of the answer."}
                },
                "additionalProperties": false
            },
            "outputSchema": GetReply::schema(),
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        },
        {
            "name": "remember",
            "title": "Save a memory record",
            "description": "Save something later sessions should know: a decision and its reason, a convention, a fix, a fact about the project. Written as a JSON file under .claude/memory/ (reviewable in git) and indexed, so search finds it. Never include secrets.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "One line saying what it is about."},
                    "content": {"type": "string", "description": "The record: what, and why."},
                    "category": {"type": "string", "default": "note", "description": "decision, convention, bugfix, note, or another lowercase word."},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Keywords."}
                },
                "required": ["title", "content"],
                "additionalProperties": false
            },
            "outputSchema": Remembered::schema(),
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
        },
        {
            "name": "forget",
            "title": "Delete a memory record",
            "description": "Delete a memory record by its whole id (as recent lists it) and remove it from the index.",
            "inputSchema": {
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The record's whole id (12 hex digits)."}},
                "required": ["id"],
                "additionalProperties": false
            },
            "outputSchema": Forgotten::schema(),
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}
        },
        {
            "name": "recent",
            "title": "Newest memory records",
            "description": "The newest memory records (superseded ones left out), optionally of one category: id, date, category, file, tags, title and the start of the content.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "category": {"type": "string", "description": "Only this category (decision, convention, bugfix, session, summary, note, …)."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10, "description": "Number of records."}
                },
                "additionalProperties": false
            },
            "outputSchema": RecentReply::schema(),
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }
    ])
}

/// A tool's answer: the structured result (what Claude Code hands the model), the same as text,
/// and whether it failed.
pub(crate) struct Output {
    text: String,
    structured: Option<Value>,
    error: bool,
}

impl Output {
    fn ok(reply: &impl Reply) -> Output {
        let structured = serde_json::to_value(reply).expect("a reply serializes");
        Output { text: reply.text(), structured: Some(structured), error: false }
    }

    /// A tool error: the model reads `text` and can act on it.
    pub(crate) fn error(text: String) -> Output {
        Output { text, structured: None, error: true }
    }

    /// The `tools/call` result.
    pub(crate) fn to_json(&self) -> Value {
        let mut r = json!({"content": [{"type": "text", "text": self.text}], "isError": self.error});
        if let Some(s) = &self.structured {
            r["structuredContent"] = s.clone();
        }
        r
    }
}

type ToolResult = std::result::Result<Output, String>;

/// The generation an engine reads: its directory and that directory's inode (`rm -rf .engine &&
/// engine index` reuses the name).
type GenerationId = (PathBuf, u64);

fn generation_id(index: &Path) -> Option<GenerationId> {
    let dir = crate::index::store::current_generation(index).ok()??;
    let ino = std::fs::metadata(&dir).map(|m| std::os::unix::fs::MetadataExt::ino(&m)).ok()?;
    Some((dir, ino))
}

/// The open index, once there is one.
struct Open {
    engine: Engine,
    /// `None`: no local index, the search backend (`[backend] url`) holds the chunks.
    chunks: Option<ChunkReader>,
    generation: Option<GenerationId>,
}

/// Everything the tools run on; lives on the worker thread.
pub(crate) struct State {
    /// The project: memory records live in `root/.claude/memory`, paths are relative to it.
    root: PathBuf,
    /// `--index`, when given; otherwise the index is looked for above `root` until found.
    fixed_index: Option<PathBuf>,
    index: Option<PathBuf>,
    open: Option<Open>,
    /// Why there is no open index, for the tools' errors.
    why_closed: Option<String>,
    /// The generation that failed to open: not tried again until it changes (or the settings do).
    failed: Option<GenerationId>,
    settings: Settings,
    /// The project config file's content when the settings were read.
    config_seen: Option<Vec<u8>>,
}

impl State {
    /// The state for a server started in `cwd`, with `--index` if given. Nothing is opened yet.
    pub(crate) fn start(cwd: &Path, index: Option<PathBuf>) -> State {
        let found = match &index {
            // Named on the command line, and still held to the rule every other way in follows.
            Some(i) => match crate::index::store::distrust(i) {
                Some(why) => {
                    eprintln!("engine mcp: ignored the index {why}");
                    None
                }
                None => Some(i.clone()),
            },
            None => {
                let found = crate::index::store::find_index(cwd);
                for why in &found.distrusted {
                    eprintln!("engine mcp: {why}");
                }
                found.index
            }
        };
        let root = match &found {
            Some(i) => indexed_root(i).unwrap_or_else(|| i.parent().unwrap_or(i).to_path_buf()),
            None => {
                let home = std::env::var_os("HOME").map(PathBuf::from);
                crate::integrations::prompt::own_project(cwd, home.as_deref()).unwrap_or_else(|| cwd.to_path_buf())
            }
        };
        eprintln!(
            "engine mcp: project {}; index {}",
            root.display(),
            found.as_ref().map_or("none yet (run `engine index`)".to_string(), |i| i.display().to_string())
        );
        State {
            root,
            fixed_index: index,
            index: found,
            open: None,
            why_closed: None,
            failed: None,
            settings: Settings::default(),
            config_seen: None,
        }
    }

    /// Opens the index and loads the model (before the first call arrives).
    pub(crate) fn open_now(&mut self) {
        let started = Instant::now();
        self.refresh();
        if let Some(o) = &self.open {
            eprintln!(
                "engine mcp: {} chunks ready in {:.0} ms{}",
                o.engine.meta.chunks,
                started.elapsed().as_secs_f64() * 1e3,
                if o.engine.embedder().is_none() { " (no embedding model: BM25 only)" } else { "" }
            );
        }
    }

    /// Forgets the open index (after a panic), so the next call opens it afresh.
    pub(crate) fn reset(&mut self) {
        self.open = None;
    }

    /// Brings the open index up to date: finds an index that appeared, reloads the settings when
    /// the project's `engine.toml` changed, reopens on a new generation (keeping the model).
    fn refresh(&mut self) {
        if self.index.is_none() {
            self.index = crate::index::store::find_index(&self.root).index;
            if let Some(i) = &self.index {
                // Found above the directory the server started in: the project is what it indexed.
                self.root = indexed_root(i).unwrap_or_else(|| i.parent().unwrap_or(i).to_path_buf());
            }
        }
        let Some(index) = self.index.clone() else {
            if self.open_backend_alone() {
                return;
            }
            self.why_closed = Some(format!(
                "no index for {} yet: run `engine index` in the project (memory tools work without one)",
                self.root.display()
            ));
            return;
        };
        let config = std::fs::read(crate::integrations::prompt::project_config(&index)).ok();
        let mut settings_changed = false;
        if config != self.config_seen || self.open.is_none() {
            let (settings, warnings) = crate::integrations::prompt::project_settings(&index);
            if config != self.config_seen {
                for w in warnings {
                    eprintln!("engine mcp: {w}");
                }
            }
            self.config_seen = config;
            settings_changed = settings != self.settings;
            self.settings = settings;
        }
        if self.open.is_none() {
            let live = generation_id(&index);
            if live.is_none() {
                return self.refresh_generation(&index); // no live generation: closed, looked for again
            }
            if !settings_changed && self.failed == live {
                return; // the same broken generation: its error stands
            }
        }
        if self.open.is_none() || settings_changed {
            // The model is kept unless [embed] changed.
            let keep = self.open.take().filter(|o| o.engine.settings.embed == self.settings.embed);
            self.reopen(&index, keep.as_ref());
            return;
        }
        self.refresh_generation(&index);
    }

    fn refresh_generation(&mut self, index: &Path) {
        let now = generation_id(index);
        match &self.open {
            Some(o) if o.generation == now && now.is_some() => {}
            Some(_) if now.is_some() => {
                // A new generation: the same engine reads it, keeping the model and the reranker.
                let o = self.open.as_mut().expect("matched Some");
                match o.engine.reopen().and_then(|_| ChunkReader::open(o.engine.generation_dir())) {
                    Ok(chunks) => (o.chunks, o.generation) = (Some(chunks), now),
                    Err(e) => {
                        eprintln!("engine mcp: cannot reopen {}: {e}", index.display());
                        self.open = None;
                        (self.why_closed, self.failed) = (Some(e.to_string()), now);
                    }
                }
            }
            _ => {
                // The index went away (deleted, or CURRENT broken): look for it again next time.
                self.open = None;
                if self.fixed_index.is_none() {
                    self.index = None;
                }
                self.why_closed = Some(format!("the index at {} is gone: run `engine index`", index.display()));
            }
        }
    }

    /// A project without an index whose `engine.toml` names a search backend: an engine that
    /// searches through it alone (kept until the file changes; an index that appears later is
    /// read as a new generation). False when no backend is named or the engine cannot open.
    fn open_backend_alone(&mut self) -> bool {
        let index = self.root.join(".engine");
        let config = std::fs::read(crate::integrations::prompt::project_config(&index)).ok();
        if self.open.is_some() && config == self.config_seen {
            return true;
        }
        let (settings, _) = crate::integrations::prompt::project_settings(&index);
        self.open = None;
        if settings.backend.url.is_none() {
            return false;
        }
        (self.config_seen, self.settings) = (config, settings);
        let model = None;
        match Engine::open_serving(&index, self.settings.clone(), model, self.settings.rerank.mode) {
            Ok(engine) => {
                self.open = Some(Open { engine, chunks: None, generation: None });
                (self.why_closed, self.failed) = (None, None);
                true
            }
            Err(e) => {
                eprintln!(
                    "engine mcp: cannot search through {}: {e}",
                    self.settings.backend.url.as_deref().unwrap_or("")
                );
                false
            }
        }
    }

    /// Opens `index`, reusing the loaded model of `keep` when there is one.
    fn reopen(&mut self, index: &Path, keep: Option<&Open>) {
        let generation = generation_id(index);
        let model = keep.and_then(|o| o.engine.embedder().cloned());
        let engine = Engine::open_serving(index, self.settings.clone(), model, self.settings.rerank.mode);
        let opened = engine.and_then(|engine| {
            let chunks = Some(ChunkReader::open(engine.generation_dir())?);
            Ok(Open { engine, chunks, generation: generation.clone() })
        });
        match opened {
            Ok(o) => {
                self.open = Some(o);
                (self.why_closed, self.failed) = (None, None);
            }
            Err(e) => {
                eprintln!("engine mcp: cannot open {}: {e}", index.display());
                self.open = None;
                (self.why_closed, self.failed) = (Some(e.to_string()), generation);
            }
        }
    }

    fn opened(&self) -> std::result::Result<&Open, String> {
        self.open.as_ref().ok_or_else(|| self.why_closed.clone().unwrap_or_else(|| "the index is not open".into()))
    }

    /// Runs one tool; every failure is a tool error the model can act on.
    pub(crate) fn call(&mut self, name: &str, args: &Map<String, Value>) -> Output {
        self.refresh();
        let result = match name {
            "search" => self.search(args),
            "get" => self.get(args),
            "remember" => self.remember(args),
            "forget" => self.forget(args),
            "recent" => self.recent(args),
            _ => Err(format!("unknown tool {name:?}; the tools are {}", NAMES.join(", "))),
        };
        result.unwrap_or_else(Output::error)
    }

    fn search(&mut self, args: &Map<String, Value>) -> ToolResult {
        let a = Args::new(args, "search", &["query", "k", "mode", "kind", "path", "timings"])?;
        let query = a.string("query")?.ok_or("search needs a query: a question, identifiers or keywords")?;
        let query = query.trim();
        if query.is_empty() {
            return Err("the query is empty: give a question, identifiers or keywords".into());
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(format!(
                "the query is {chars} characters; at most {MAX_QUERY_CHARS}: search for the essential words"
            ));
        }
        let k = a.integer("k", 1, MAX_K)?.unwrap_or(10);
        let mode = match a.one_of("mode", &["hybrid", "bm25", "vector"])? {
            Some("bm25") => Mode::Bm25,
            Some("vector") => Mode::Vector,
            Some(_) => Mode::Hybrid,
            None => self.settings.search.mode,
        };
        let kind = a.one_of("kind", &["code", "docs", "memory"])?;
        let prefix = match a.string("path")? {
            Some(p) => Some(self.prefix(p)?),
            None => None,
        };
        let timings = a.boolean("timings")?.unwrap_or(false);
        let open = self.opened()?;
        let filtered = kind.is_some() || prefix.is_some();
        let fetch = if filtered { k.max(self.settings.search.top_n).min(*crate::config::bounds::K.end()) } else { k };
        let resp = open.engine.search_with(&SearchRequest::new(query, fetch, mode)).map_err(|e| e.to_string())?;
        let keep = |h: &&Hit| {
            kind.is_none_or(|k| match k {
                "code" => h.kind == "code",
                "memory" => h.kind == "memory",
                // Docs are every kind that is neither code nor memory, so a new prose kind needs
                // no change here.
                _ => h.kind != "code" && h.kind != "memory",
            }) && prefix.as_deref().is_none_or(|p| h.path.starts_with(p))
        };
        let results: Vec<SearchHit> = resp.results.iter().filter(keep).take(k).map(search_hit).collect();
        let warning = resp.verdict.filter(|v| !v.answers && !results.is_empty()).map(|v| {
            format!(
                "Nothing here seems to answer this (probability {:.2}): treat these as weak leads, or rephrase with names from the project.",
                v.probability
            )
        });
        let next = if results.is_empty() {
            let bm25 = (mode != Mode::Bm25).then_some("mode bm25 for an exact identifier");
            let unfilter = filtered.then_some("drop the kind/path filter");
            let ways: Vec<&str> = ["other words"].into_iter().chain(bm25).chain(unfilter).collect();
            format!("Try {}.", ways.join(", or "))
        } else {
            "get with an id gives the full text (neighbours: N adds the chunks around it).".to_string()
        };
        let reply = SearchReply {
            warning,
            note: search_note(&resp),
            results,
            next,
            timings_ms: timings.then(|| resp.timings_ms.clone()),
        };
        Ok(Output::ok(&reply))
    }

    fn get(&mut self, args: &Map<String, Value>) -> ToolResult {
        let a = Args::new(args, "get", &["id", "path", "start_line", "end_line", "neighbours", "max_tokens"])?;
        let neighbours = a.integer("neighbours", 0, MAX_NEIGHBOURS)?.unwrap_or(0);
        let budget = a.integer("max_tokens", GET_TOKENS_MIN, GET_TOKENS_MAX)?.unwrap_or(GET_TOKENS);
        let (start, end) = (a.integer("start_line", 1, usize::MAX)?, a.integer("end_line", 1, usize::MAX)?);
        let (id, path) = (a.string("id")?, a.string("path")?);
        // Checked before the index: a path outside the project is refused whether or not there is one.
        let path = path.map(|p| self.project_path(p)).transpose()?;
        let open = self.opened()?;
        let chunks = open
            .chunks
            .as_ref()
            .ok_or("get reads the local index, and this project has none: the search results carry each hit's text")?;
        let snapshot = chunks.snapshot();
        let found = match (id, path) {
            (Some(_), Some(_)) => return Err("give either id or path, not both".into()),
            (None, None) => return Err("get needs an id (from search) or a path (with start_line and end_line)".into()),
            (Some(_), None) if start.is_some() || end.is_some() => {
                return Err("start_line and end_line go with path, not with id".into())
            }
            (Some(id), None) if is_record_id(id) => chunks_by_lines(&snapshot, self.record_path(id)?, None, None)?,
            (Some(id), None) => chunk_by_id(&snapshot, id)?,
            (None, Some(rel)) => chunks_by_lines(&snapshot, rel, start, end)?,
        };
        let count = |s: &str| open.engine.count_tokens(s);
        Ok(found.within(neighbours, budget, &count))
    }

    /// The file of the memory record with this id (the context names a stored record by it), as
    /// a path relative to the project.
    fn record_path(&self, id: &str) -> std::result::Result<String, String> {
        let all = MemoryStore::at_root(&self.root).load().map_err(|e| e.to_string())?;
        let stored = all
            .into_iter()
            .find(|s| s.record.id == id)
            .ok_or_else(|| format!("no memory record with id {id:?} (engine memory list shows them)"))?;
        Ok(self.shown(&stored.path))
    }

    /// The project's memory store, when the project is the user's own: indexed by an index the
    /// user owns, or a git work tree or `engine.toml` directory of theirs that is neither the home
    /// directory nor `/` (the rule the hook follows). Elsewhere the memory tools do nothing.
    fn store(&self) -> std::result::Result<MemoryStore, String> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let own =
            self.index.is_some() || crate::integrations::prompt::own_project(&self.root, home.as_deref()).is_some();
        let memory = self.root.join(memory::DIR);
        let distrusted = crate::index::store::distrust(&self.root)
            .or_else(|| memory.exists().then(|| crate::index::store::distrust(&memory)).flatten());
        match (own, distrusted) {
            (true, None) => Ok(MemoryStore::at_root(&self.root)),
            (_, Some(why)) => Err(format!("no memory here: {why}")),
            (false, None) => Err(format!(
                "no project of yours at {}: memory records live in a project (a git work tree or a directory with engine.toml, not your home directory or /); start the server there",
                self.root.display()
            )),
        }
    }

    fn remember(&mut self, args: &Map<String, Value>) -> ToolResult {
        let a = Args::new(args, "remember", &["title", "content", "category", "tags"])?;
        let store = self.store()?;
        let title = a.string("title")?.map(str::trim).unwrap_or_default().to_string();
        let content = a.string("content")?.map(str::trim).unwrap_or_default().to_string();
        if title.is_empty() || content.is_empty() {
            return Err("remember needs a title (one line) and content (what, and why)".into());
        }
        let too_long = |what: &str, n: usize, max: usize| {
            format!(
                "the {what} is {n} characters; at most {max}: keep the essentials, or split it into several records"
            )
        };
        let (tn, cn) = (title.chars().count(), content.chars().count());
        if tn > MAX_TITLE_CHARS {
            return Err(too_long("title", tn, MAX_TITLE_CHARS));
        }
        if cn > MAX_CONTENT_CHARS {
            return Err(too_long("content", cn, MAX_CONTENT_CHARS));
        }
        let category = a.string("category")?.map(|c| c.trim().to_lowercase()).filter(|c| !c.is_empty());
        let category = category.unwrap_or_else(|| memory::category::NOTE.to_string());
        let tags = a.strings("tags")?;
        if tags.len() > MAX_TAGS || tags.iter().any(|t| t.chars().count() > MAX_TAG_CHARS) {
            return Err(format!("at most {MAX_TAGS} tags of at most {MAX_TAG_CHARS} characters each"));
        }
        for (what, text) in [("title", &title), ("content", &content)] {
            memory::refuse_secret(what, text).map_err(|e| {
                format!("not saved: {e}; memory records are plain files in the project. Describe the secret's purpose instead, never its value")
            })?;
        }
        let mut record = MemoryRecord::new(&category, &title, &content, "");
        record.source = "mcp".into();
        record.tags = tags.into_iter().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
        record.seal();
        memory::validate(&record).map_err(|e| e.to_string())?;
        let (status, path) = match store.add(record.clone()).map_err(|e| e.to_string())? {
            Added::Written(p) => ("written", p),
            Added::Updated(p) => ("updated", p),
            Added::Unchanged(id) => {
                let s = store.find(&id).map_err(|e| e.to_string())?;
                let path = self.shown(&s.path);
                return Ok(Output::ok(&Remembered { id, path, status: "unchanged", indexed: true, note: None }));
            }
        };
        let path = self.shown(&path);
        let (indexed, note) = self.reindex();
        Ok(Output::ok(&Remembered { id: record.id, path, status, indexed, note }))
    }

    fn forget(&mut self, args: &Map<String, Value>) -> ToolResult {
        let a = Args::new(args, "forget", &["id"])?;
        let id = a
            .string("id")?
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or("forget needs the id of a memory record (recent lists them)")?;
        let store = self.store()?;
        // The whole id: a prefix could name a record the caller never saw.
        let all = store.load().map_err(|e| e.to_string())?;
        let stored = all
            .into_iter()
            .find(|s| s.record.id == id)
            .ok_or_else(|| format!("no memory record with the id {id:?}: give the whole id, as recent lists it"))?;
        store.delete(&stored).map_err(|e| e.to_string())?;
        let (indexed, note) = self.reindex();
        let r = &stored.record;
        let (id, title, path) = (r.id.clone(), one_line(&r.title, 200), self.shown(&stored.path));
        Ok(Output::ok(&Forgotten { id, title, path, indexed, note }))
    }

    fn recent(&mut self, args: &Map<String, Value>) -> ToolResult {
        let a = Args::new(args, "recent", &["category", "limit"])?;
        let category = a.string("category")?.map(|c| c.trim().to_lowercase()).filter(|c| !c.is_empty());
        let limit = a.integer("limit", 1, MAX_K)?.unwrap_or(10);
        let store = self.store()?;
        let mut all = store.load().map_err(|e| e.to_string())?;
        let superseded = memory::superseded(&all);
        let time = |s: &memory::Stored| memory::parse_time(&s.record.created);
        all.sort_by(|a, b| time(b).cmp(&time(a)).then_with(|| a.record.id.cmp(&b.record.id)));
        let in_category: Vec<&memory::Stored> = all
            .iter()
            .filter(|s| category.as_ref().is_none_or(|c| memory::category::same(&s.record.category, c)))
            .collect();
        let hidden = in_category.iter().filter(|s| superseded.contains(&s.record.id)).count();
        let rows: Vec<&memory::Stored> =
            in_category.into_iter().filter(|s| !superseded.contains(&s.record.id)).take(limit).collect();
        let records: Vec<RecentRecord> = rows
            .iter()
            .map(|s| {
                let r = &s.record;
                RecentRecord {
                    id: r.id.clone(),
                    date: one_line(r.created.get(..10).unwrap_or(&r.created), 40),
                    category: one_line(&r.category, 64),
                    title: one_line(&r.title, 200),
                    tags: r.tags.iter().map(|t| one_line(t, MAX_TAG_CHARS)).collect(),
                    summary: one_line(&r.content, SUMMARY_CHARS),
                    path: self.shown(&s.path),
                }
            })
            .collect();
        let of = category.as_ref().map(|c| format!(" in category {}", one_line(c, 64))).unwrap_or_default();
        let note = match (records.is_empty(), hidden) {
            (true, 0) => Some(format!("No memory records{of} in {} yet.", memory::DIR)),
            (true, _) => Some(format!("No memory records{of} but {hidden} superseded one(s).")),
            (false, 0) => None,
            (false, _) => Some(format!("{hidden} superseded record(s){of} not shown.")),
        };
        let next = (!records.is_empty())
            .then(|| "get with a record's path gives the whole record; forget with its id deletes it.".to_string());
        Ok(Output::ok(&RecentReply { records, note, next }))
    }

    /// After a memory change: an incremental index run of the project, as `engine memory` does,
    /// with the loaded model; then the new generation is opened. Returns whether the index now
    /// has the change, and when it has not, why and when it will.
    fn reindex(&mut self) -> (bool, Option<String>) {
        match self.reindex_now() {
            Ok(()) => (true, None),
            Err(why) => (false, Some(shown_line(&why))),
        }
    }

    fn reindex_now(&mut self) -> std::result::Result<(), String> {
        let later = "it will be after the next `engine index` or session start";
        let Some(index) = self.index.clone() else {
            return Err(format!("the index is not updated: the project has no index yet; {later}"));
        };
        let Some(open) = &self.open else {
            let why = self.why_closed.clone().unwrap_or_default();
            return Err(format!("the index is not updated ({why}); {later}"));
        };
        if let Some(Source::Dir(covered)) = &open.engine.meta.source {
            if *covered != self.root {
                return Err(format!("the index is not updated: it covers {}, not this project", covered.display()));
            }
        }
        let Some(model) = open.engine.embedder().cloned() else {
            return Err(format!("the index is not updated: no embedding model is loaded; {later}"));
        };
        let source = Source::Dir(self.root.clone());
        let started = Instant::now();
        let outcome = loop {
            match crate::index::build(&index, &source, &self.settings, model.as_ref(), &Default::default()) {
                Err(Error::Locked { .. }) if started.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                other => break other,
            }
        };
        match outcome {
            Ok(_) => {
                self.refresh();
                Ok(())
            }
            Err(e) => {
                eprintln!("engine mcp: reindex failed: {e}");
                Err(format!("the index is not updated ({}); {later}", crate::error::one_line(&e.to_string())))
            }
        }
    }

    /// A path given by the client as a project-relative path with `/` separators; an error when
    /// it leads outside the project (`..`, an absolute path elsewhere, a symbolic link out).
    fn project_path(&self, given: &str) -> std::result::Result<String, String> {
        let given = given.trim();
        if given.is_empty() {
            return Err("the path is empty: give a file path relative to the project root".into());
        }
        let outside = || {
            format!(
                "{given} is outside the project ({}): only the project's indexed files can be read",
                self.root.display()
            )
        };
        let joined = self.root.join(given);
        let normal = normalize(&joined).ok_or_else(outside)?;
        let rel = normal.strip_prefix(&self.root).map_err(|_| outside())?;
        // A symbolic link inside the project that leads out of it is outside too (checked on the
        // part of the path that exists).
        let existing = normal.ancestors().find(|p| p.exists()).unwrap_or(&self.root);
        if let (Ok(real), Ok(real_root)) = (std::fs::canonicalize(existing), std::fs::canonicalize(&self.root)) {
            if !real.starts_with(&real_root) {
                return Err(outside());
            }
        }
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        Ok(parts.join("/"))
    }

    /// A search path filter: like [`Self::project_path`], keeping a trailing `/`.
    fn prefix(&self, given: &str) -> std::result::Result<String, String> {
        let trimmed = given.trim();
        if matches!(trimmed, "" | "." | "./") {
            return Ok(String::new());
        }
        let mut rel = self.project_path(trimmed)?;
        if trimmed.ends_with('/') && !rel.is_empty() {
            rel.push('/');
        }
        Ok(rel)
    }

    /// A path for the client: relative to the project root when under it.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).to_string_lossy().into_owned()
    }
}

/// `path` with `.` and `..` resolved lexically; `None` when `..` climbs above the root of the
/// file system.
/// The chunks `get` returns: a document's chunks in line order and the ones asked for.
struct Found {
    all: Vec<Hit>,
    /// Indexes into `all`, in order.
    wanted: Vec<usize>,
}

/// The chunk a search hit's id names (`path#key`), and its document's chunks.
fn chunk_by_id(snapshot: &crate::index::reader::Snapshot, id: &str) -> std::result::Result<Found, String> {
    let stale = || {
        format!("no chunk with id {id:?} in the index: ids change when a file is reindexed; search again, or get by path and lines")
    };
    let not_an_id = || format!("{id:?} is not a hit id: search returns ids like src/main.rs#42");
    let (doc, key) = id.rsplit_once('#').ok_or_else(not_an_id)?;
    let key: u64 = key.parse().map_err(|_| not_an_id())?;
    let address = snapshot.address_of(key).ok_or_else(stale)?;
    let hit = snapshot.load(address, key).map_err(|e| e.to_string())?;
    // Search shows ids cleaned (a file name may hold a secret or a control character): the number
    // finds the chunk, the path only has to match what was shown.
    if hit.doc != doc && shown_line(&hit.doc) != doc {
        return Err(stale());
    }
    let mut all = snapshot.chunks_of(&hit.doc).map_err(|e| e.to_string())?;
    sort_chunks(&mut all);
    let at = all.iter().position(|c| c.id == hit.id).unwrap_or(0);
    Ok(Found { all, wanted: vec![at] })
}

/// Whether a `get` id names a memory record (its 12 hex digits) rather than a hit (`path#number`).
fn is_record_id(id: &str) -> bool {
    id.len() == 12 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The chunks of an indexed file that cover lines `start`..=`end` (the whole file by default).
fn chunks_by_lines(
    snapshot: &crate::index::reader::Snapshot,
    rel: String,
    start: Option<usize>,
    end: Option<usize>,
) -> std::result::Result<Found, String> {
    let mut all = snapshot.chunks_of(&rel).map_err(|e| e.to_string())?;
    if all.is_empty() {
        return Err(format!(
            "{rel} is not in the index: not indexed (ignored, excluded, not text), misspelt, or new since the last `engine index`; search finds indexed paths"
        ));
    }
    sort_chunks(&mut all);
    let (from, to) = (start.unwrap_or(1), end.unwrap_or(usize::MAX));
    if from > to {
        return Err(format!("start_line {from} is after end_line {to}"));
    }
    let wanted: Vec<usize> = (0..all.len()).filter(|&i| all[i].start_line <= to && all[i].end_line >= from).collect();
    if wanted.is_empty() {
        let last = all.iter().map(|c| c.end_line).max().unwrap_or(0);
        return Err(format!("no indexed chunk of {rel} covers lines {from}-{to}: its chunks cover lines 1-{last}"));
    }
    Ok(Found { all, wanted })
}

/// A chunk `get` shows: its index among the document's chunks, the chunk, and whether its text was
/// cut to fit.
type Taken = (usize, GetChunk, bool);

impl Found {
    /// The chunks asked for, then `neighbours` on each side nearest first, within `budget` tokens.
    fn within(&self, neighbours: usize, budget: usize, count: &dyn Fn(&str) -> usize) -> Output {
        let all = &self.all;
        let (first, last) = (self.wanted[0], *self.wanted.last().expect("not empty"));
        let (lo, hi) = (all[first].start_line, all[last].end_line);
        let before: Vec<usize> = (0..first).rev().filter(|&i| all[i].end_line < lo).take(neighbours).collect();
        let after: Vec<usize> = (last + 1..all.len()).filter(|&i| all[i].start_line > hi).take(neighbours).collect();
        let mut order: Vec<(usize, Option<&'static str>)> = self.wanted.iter().map(|&i| (i, None)).collect();
        for n in 0..neighbours {
            order.extend(before.get(n).map(|&i| (i, Some("before"))));
            order.extend(after.get(n).map(|&i| (i, Some("after"))));
        }
        let mut used = 0;
        let mut taken: Vec<Taken> = Vec::new();
        let mut left_out = 0;
        for (i, role) in order {
            let mut chunk = self.chunk(i, role);
            let header = count(&chunk_header(&chunk));
            let cost = header + count(&chunk.text);
            if used + cost <= budget {
                used += cost;
                taken.push((i, chunk, false));
            } else if taken.is_empty() {
                // The chunk asked for does not fit alone: as much of it as fits, by lines.
                chunk.text = cut_to_tokens(&chunk.text, budget.saturating_sub(header), count);
                used += header + count(&chunk.text);
                taken.push((i, chunk, true));
            } else {
                left_out += 1;
            }
        }
        taken.sort_by_key(|t| t.0);
        let cut = taken.iter().any(|t| t.2);
        let chunks = taken.into_iter().map(|t| t.1).collect();
        Output::ok(&GetReply { chunks, note: budget_note(cut, left_out, budget) })
    }

    /// Chunk `i` as `get` shows it, whole.
    fn chunk(&self, i: usize, role: Option<&'static str>) -> GetChunk {
        let c = &self.all[i];
        GetChunk {
            id: shown_line(&c.id),
            lines: [c.start_line, c.end_line],
            title: one_line(&c.title, 200),
            role,
            text: crate::context::visible(&c.text, true),
        }
    }
}

/// What the token budget cut or left out of `get`'s answer, and how to have the rest.
fn budget_note(cut: bool, left_out: usize, budget: usize) -> Option<String> {
    let mut notes = Vec::new();
    if cut {
        notes.push(format!(
            "the chunk asked for is cut to max_tokens = {budget}: raise it (up to {GET_TOKENS_MAX}) for the rest"
        ));
    }
    if left_out > 0 {
        notes.push(format!("{left_out} chunk(s) left out to stay within max_tokens = {budget}"));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// The directory a live index was built from, if it indexed a directory.
fn indexed_root(index: &Path) -> Option<PathBuf> {
    let generation = crate::index::store::current_generation(index).ok()??;
    match crate::index::store::read_meta(&generation).ok()?.source? {
        Source::Dir(root) => Some(root),
        Source::Beir(_) => None,
    }
}

fn sort_chunks(chunks: &mut [Hit]) {
    chunks.sort_by(|a, b| (a.start_line, a.end_line, &a.id).cmp(&(b.start_line, b.end_line, &b.id)));
}

/// The first lines of `text` that fit in `tokens`.
fn cut_to_tokens(text: &str, tokens: usize, count: &dyn Fn(&str) -> usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        let cost = count(line);
        if used + cost > tokens {
            break;
        }
        used += cost;
        out.push_str(line);
    }
    out
}

/// `text` on one line, cleaned (control and format characters out, secrets redacted), at most
/// `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat = crate::context::visible(text, false).split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max).collect();
    cut.push('…');
    cut
}

/// A string the model reads on one line, whole: control and format characters out, secrets
/// redacted, nothing cut (an id or a path must still name its chunk or file).
fn shown_line(text: &str) -> String {
    crate::context::visible(text, false)
}

/// One hit as `search` returns it.
fn search_hit(h: &Hit) -> SearchHit {
    SearchHit {
        id: shown_line(&h.id),
        lines: [h.start_line, h.end_line],
        title: one_line(&h.title, 200),
        category: h.category.as_deref().map(|c| one_line(c, 64)),
        confidence: h.confidence.as_str(),
        summary: one_line(&h.snippet, SUMMARY_CHARS),
        also_in: h.also_in.iter().map(|p| shown_line(p)).collect(),
    }
}

/// How a search ran when it ran on less than the whole index's vectors.
fn search_note(resp: &crate::search::SearchResponse) -> Option<String> {
    let mut notes = Vec::new();
    if resp.degraded {
        notes.push(match &resp.degraded_reason {
            Some(why) => format!("BM25 only: {}", one_line(why, 160)),
            None => "BM25 only".to_string(),
        });
    }
    if let Some(v) = resp.vectors {
        notes.push(format!(
            "{} of {} chunks have a vector yet (indexing is still embedding); the others are found by their words only",
            v.embedded, v.chunks
        ));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// A tool's arguments, checked against the names it takes, with typed getters whose errors say
/// what was expected.
struct Args<'a> {
    map: &'a Map<String, Value>,
    tool: &'static str,
}

impl<'a> Args<'a> {
    fn new(map: &'a Map<String, Value>, tool: &'static str, known: &[&str]) -> std::result::Result<Args<'a>, String> {
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(format!("{tool} has no argument {unknown:?}; its arguments are {}", known.join(", ")));
        }
        Ok(Args { map, tool })
    }

    fn present(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn string(&self, name: &str) -> std::result::Result<Option<&'a str>, String> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("{}: {name} must be a string", self.tool)),
        }
    }

    fn boolean(&self, name: &str) -> std::result::Result<Option<bool>, String> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(format!("{}: {name} must be true or false", self.tool)),
        }
    }

    fn integer(&self, name: &str, min: usize, max: usize) -> std::result::Result<Option<usize>, String> {
        let Some(v) = self.present(name) else { return Ok(None) };
        let range = if max == usize::MAX { format!("≥ {min}") } else { format!("{min} to {max}") };
        let n = v.as_u64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64));
        match n.and_then(|n| usize::try_from(n).ok()) {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(format!("{}: {name} must be an integer {range}, not {v}", self.tool)),
        }
    }

    fn one_of(&self, name: &str, allowed: &[&'static str]) -> std::result::Result<Option<&'static str>, String> {
        match self.string(name)? {
            None => Ok(None),
            Some(s) => allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(s.trim()))
                .copied()
                .map(Some)
                .ok_or_else(|| format!("{}: {name} must be one of {}, not {s:?}", self.tool, allowed.join(", "))),
        }
    }

    fn strings(&self, name: &str) -> std::result::Result<Vec<String>, String> {
        match self.present(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("{}: {name} must be a list of strings", self.tool))
                })
                .collect(),
            Some(_) => Err(format!("{}: {name} must be a list of strings", self.tool)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(root: &Path) -> State {
        State {
            root: root.to_path_buf(),
            fixed_index: None,
            index: None,
            open: None,
            why_closed: None,
            failed: None,
            settings: Settings::default(),
            config_seen: None,
        }
    }

    #[test]
    fn paths_outside_the_project_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        let s = state(&root);
        assert_eq!(s.project_path("src/a.rs").unwrap(), "src/a.rs");
        assert_eq!(s.project_path("./src/../src/a.rs").unwrap(), "src/a.rs");
        assert_eq!(s.project_path(&root.join("src/a.rs").to_string_lossy()).unwrap(), "src/a.rs");
        std::fs::write(dir.path().join("secret.txt"), "x").unwrap();
        assert_eq!(s.project_path("out/project/src/a.rs").unwrap(), "out/project/src/a.rs", "leads back in");
        for bad in ["../secret.txt", "/etc/passwd", "src/../../x", "out/secret.txt", "out/nothing/here", "out"] {
            let e = s.project_path(bad).unwrap_err();
            assert!(e.contains("outside the project"), "{bad}: {e}");
        }
        assert_eq!(s.prefix("src/").unwrap(), "src/");
        assert_eq!(s.prefix("./").unwrap(), "");
        assert!(s.prefix("../").is_err());
    }

    #[test]
    fn arguments_are_checked_with_messages_that_say_what_is_expected() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let args = m(json!({"query": "x", "k": 0}));
        let a = Args::new(&args, "search", &["query", "k"]).unwrap();
        assert!(a.integer("k", 1, 50).unwrap_err().contains("integer 1 to 50"));
        let args = m(json!({"top_k": 3}));
        let e = Args::new(&args, "search", &["query", "k"]).err().unwrap();
        assert!(e.contains("no argument \"top_k\"") && e.contains("query, k"), "{e}");
        let args = m(json!({"k": 5.0, "mode": "BM25", "tags": "one"}));
        let a = Args::new(&args, "t", &["k", "mode", "tags"]).unwrap();
        assert_eq!(a.integer("k", 1, 50).unwrap(), Some(5));
        assert_eq!(a.one_of("mode", &["hybrid", "bm25"]).unwrap(), Some("bm25"));
        assert!(a.strings("tags").unwrap_err().contains("tags must be a list of strings"));
    }

    #[test]
    fn a_chunk_too_long_for_the_budget_is_cut_by_lines() {
        let count = |s: &str| s.split_whitespace().count();
        assert_eq!(cut_to_tokens("a b\nc d\ne f\n", 4, &count), "a b\nc d\n");
        assert_eq!(one_line("a\n\tb\u{200b}c", 10), "a bc");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
