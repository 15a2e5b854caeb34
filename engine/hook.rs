//! `engine hook`: the Claude Code hook. It reads the event's JSON on stdin and prints context for
//! the prompt (`UserPromptSubmit`), a short project digest (`SessionStart`), or records edited
//! paths (`PostToolUse`). It must never get in the way: whatever goes wrong — bad JSON, no index,
//! no model, a passed deadline — it exits 0 with no stdout (or a BM25-only answer that was ready in
//! time) and one line on stderr saying why. The warm path asks the daemon ([`crate::serve`]).

use crate::atomic::write_atomic;
use crate::config::{HookConfig, Settings};
use crate::error::Result;
use crate::prompt::{gate, project_settings, prompt_context, reindex, Gate};
use crate::search::Engine;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// File in the index directory with the document hashes seen at the last session start.
pub(crate) const SESSION_SNAPSHOT: &str = "session-docs.json";

/// What the hook process prints.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    /// What goes to stdout: the context or digest for the client (`None`: print nothing).
    pub stdout: Option<String>,
    /// What goes to stderr: notes on what failed or was skipped (`None`: nothing to report).
    pub stderr: Option<String>,
}

impl Outcome {
    fn quiet(why: impl Into<String>) -> Outcome {
        Outcome { stdout: None, stderr: Some(format!("engine hook: {}", why.into())) }
    }
}

/// The hook event, as far as the engine reads it.
#[derive(Debug)]
pub struct Payload {
    /// `hook_event_name`: `UserPromptSubmit`, `SessionStart`, `PostToolUse`…
    pub event: String,
    /// The user's prompt (`UserPromptSubmit`).
    pub prompt: Option<String>,
    /// The session's working directory (`None`: the process's own).
    pub cwd: Option<PathBuf>,
    /// Why a session started (`startup`, `resume`, `clear`…; `None`: taken as `startup`).
    pub source: Option<String>,
    /// The tool's arguments (`PostToolUse`): the edited path is `file_path` or `path` (`Null`: absent).
    pub tool_input: Value,
    /// The session's id.
    pub session_id: Option<String>,
    /// The session's transcript (`PreCompact`, `SessionEnd`).
    pub transcript_path: Option<PathBuf>,
    /// Why the session ended (`SessionEnd`: `clear`, `logout`, `prompt_input_exit`…) or what
    /// started a compaction (`PreCompact`: `manual`, `auto`).
    pub reason: Option<String>,
}

/// Parses the event JSON; the error says what is wrong.
pub fn parse(input: &[u8]) -> std::result::Result<Payload, String> {
    let text = std::str::from_utf8(input).map_err(|e| format!("stdin is not UTF-8 ({e})"))?;
    if text.trim().is_empty() {
        return Err("empty stdin (expected the hook's JSON)".into());
    }
    let v: Value = serde_json::from_str(text).map_err(|e| format!("stdin is not valid JSON ({e})"))?;
    let event = match &v["hook_event_name"] {
        Value::String(s) => s.clone(),
        Value::Null => return Err("no hook_event_name in the payload".into()),
        other => return Err(format!("hook_event_name should be a string, found {other}")),
    };
    let string = |key: &str| -> std::result::Result<Option<String>, String> {
        match &v[key] {
            Value::String(s) => Ok(Some(s.clone())),
            Value::Null => Ok(None),
            other => Err(format!("{key} should be a string, found {}", kind(other))),
        }
    };
    Ok(Payload {
        prompt: string("prompt")?,
        cwd: string("cwd")?.map(PathBuf::from),
        source: string("source")?,
        tool_input: v["tool_input"].clone(),
        session_id: string("session_id")?,
        transcript_path: string("transcript_path")?.map(PathBuf::from),
        reason: string("reason")?.or(string("trigger")?),
        event,
    })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JSON Claude Code reads from a hook's stdout.
pub(crate) fn hook_output(event: &str, context: &str) -> String {
    serde_json::json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}).to_string()
}

/// Prints what the hook says and ends the process with status 0 at once, running no exit handlers.
///
/// When the deadline passed, the thread opening the full engine may still be inside ONNX Runtime
/// (loading the library, building the session). A normal `exit` runs atexit handlers and the C++
/// static destructors of the dlopen'ed runtime, which free what that thread is still using: the
/// process died with SIGSEGV or SIGABRT after printing its answer (issue 11: 6 of 60 prompts with
/// a 100 ms deadline). `_exit` ends every thread at once and runs nothing. Nothing is lost: the
/// output is written and flushed here, the worker only reads, files the hook writes are closed
/// before this point, and a daemon or reindex it started is a process of its own.
pub fn finish(out: Outcome) -> ! {
    use std::io::Write;
    // Errors are ignored: a client that stopped reading (EPIPE) must not become a panic and a
    // non-zero exit.
    if let Some(e) = &out.stderr {
        let _ = writeln!(std::io::stderr().lock(), "{e}");
    }
    if let Some(o) = &out.stdout {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{o}").and_then(|()| stdout.flush());
    }
    // SAFETY: _exit only ends the process; no Rust or C++ code runs after it.
    unsafe { libc::_exit(0) }
}

/// Runs the hook on one payload. Never fails: problems become a line on stderr.
pub fn run(input: &[u8], plain: bool) -> Outcome {
    let payload = match parse(input) {
        Ok(p) => p,
        Err(why) => return Outcome::quiet(format!("{why}; nothing added")),
    };
    let cwd = match payload.cwd.clone().or_else(|| std::env::current_dir().ok()) {
        Some(c) => c,
        None => return Outcome::quiet("no cwd in the payload; nothing added"),
    };
    let found = crate::index::store::find_index(&cwd);
    let Some(index) = found.index else {
        if matches!(payload.event.as_str(), "PreCompact" | "SessionEnd") {
            // No index yet: the records are still worth keeping, in a project of one's own.
            let home = std::env::var_os("HOME").map(PathBuf::from);
            return match auto_index_root(&cwd, home.as_deref()) {
                // The project's engine.toml applies even before it has an index ([capture] enabled).
                Some(root) => on_capture(&payload, &root, None, &project_settings(&root.join(".engine")).0),
                None => Outcome::quiet(format!("no project of yours at or above {}; nothing captured", cwd.display())),
            };
        }
        if payload.event == "SessionStart" && found.distrusted.is_empty() {
            if let Some(started) = first_run(&cwd) {
                return started;
            }
        }
        let mut why = found.distrusted;
        why.push(format!("no index of yours at or above {} (run `engine index` there)", cwd.display()));
        return match payload.event.as_str() {
            "UserPromptSubmit" | "SessionStart" => Outcome::quiet(format!("{}; nothing added", why.join("; "))),
            _ => Outcome::default(),
        };
    };
    let (settings, config_warnings) = project_settings(&index);
    let out = match payload.event.as_str() {
        "UserPromptSubmit" => on_prompt(&payload, &index, settings),
        "SessionStart" => on_session_start(&payload, &index, &settings),
        "PostToolUse" => on_tool_use(&payload, &index),
        "PreCompact" | "SessionEnd" => {
            let root = index.parent().unwrap_or(&index).to_path_buf();
            on_capture(&payload, &root, Some(&index), &settings)
        }
        _ => return Outcome::default(),
    };
    // Handlers give the context itself; Claude Code reads it wrapped in its JSON.
    let stdout = out.stdout.map(|c| if plain { c } else { hook_output(&payload.event, &c) });
    let mut stderr: Vec<String> = config_warnings.iter().map(|w| format!("engine hook: {w}")).collect();
    if !found.distrusted.is_empty() {
        stderr.insert(0, format!("engine hook: {}", found.distrusted.join("; ")));
    }
    stderr.extend(out.stderr);
    Outcome { stdout, stderr: (!stderr.is_empty()).then(|| stderr.join("\n")) }
}

fn on_prompt(payload: &Payload, index: &Path, settings: Settings) -> Outcome {
    let Some(prompt) = payload.prompt.as_deref() else {
        return Outcome::quiet("UserPromptSubmit without a prompt; nothing added");
    };
    let config = settings.hook.clone();
    let query = match gate(prompt, &config) {
        Gate::Search(q) => q,
        Gate::Skip => return Outcome::default(),
        Gate::Refuse(why) => return Outcome::quiet(why),
    };
    let edited = take_pending(index);
    let deadline = Instant::now() + Duration::from_millis(config.deadline_ms);
    let mut notes = Vec::new();
    if config.daemon {
        // The daemon's answer is rebuilt from its parts, never printed as is: whatever answers on
        // the socket, only a well-formed block of escaped text reaches the model.
        match crate::serve::ask(index, &query, edited, deadline) {
            Ok(None) => return answer(None, notes),
            Ok(Some(context)) => match crate::tier::sanitize_block(&context) {
                Some(clean) => return answer(Some(clean), notes),
                None => notes.push("the daemon's answer is not a context block; searched in process".into()),
            },
            Err(why) => notes.push(why),
        }
    }
    if edited {
        match reindex_unless_locked(index, &config) {
            Ok(true) => {}
            // Another run (a first index, a capture's) holds the index: the edits stay recorded
            // for the next prompt.
            Ok(false) => crate::prompt::defer_reindex(index),
            Err(e) => notes.push(format!("reindex skipped: {e}")),
        }
    }
    match in_process(index, settings, &query, deadline) {
        Ok((context, note)) => {
            notes.extend(note);
            answer(context, notes)
        }
        Err(why) => {
            notes.push(why);
            Outcome::quiet(format!("{}; nothing added", notes.join("; ")))
        }
    }
}

fn answer(context: Option<String>, notes: Vec<String>) -> Outcome {
    Outcome { stdout: context, stderr: (!notes.is_empty()).then(|| format!("engine hook: {}", notes.join("; "))) }
}

/// Searches in this process within the deadline: the full engine in a thread, and meanwhile a
/// BM25-only answer to fall back on. Returns the context and a note when it fell back.
fn in_process(
    index: &Path,
    settings: Settings,
    query: &str,
    deadline: Instant,
) -> std::result::Result<(Option<String>, Option<String>), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let (index, settings, query) = (index.to_path_buf(), settings.clone(), query.to_string());
        std::thread::spawn(move || {
            let result = Engine::open_one_shot(&index, settings).and_then(|e| {
                let degraded = e.embedder().is_none();
                prompt_context(&e, &query).map(|c| (c.map(|b| b.text), degraded))
            });
            let _ = tx.send(result.map_err(|e| e.to_string()));
        });
    }
    let lexical =
        Engine::open_lexical(index, settings).and_then(|e| prompt_context(&e, query)).map(|c| c.map(|b| b.text));
    let wait = deadline.saturating_duration_since(Instant::now());
    match rx.recv_timeout(wait) {
        Ok(Ok((context, false))) => Ok((context, None)),
        Ok(Ok((context, true))) => Ok((context, Some("no embedding model; answered from BM25".into()))),
        Ok(Err(e)) => match lexical {
            Ok(context) => Ok((context, Some(format!("search failed ({e}); answered from BM25")))),
            Err(_) => Err(format!("search failed: {e}")),
        },
        Err(_) => match lexical {
            Ok(context) => Ok((context, Some("deadline passed; answered from BM25".into()))),
            Err(e) => Err(format!("deadline passed and BM25 failed: {e}")),
        },
    }
}

/// Records the path an Edit or Write touched (cheap: one line appended). The next prompt has the
/// daemon reindex before it searches, or starts a detached reindex; SessionStart reindexes too.
fn on_tool_use(payload: &Payload, index: &Path) -> Outcome {
    let path = payload.tool_input["file_path"].as_str().or_else(|| payload.tool_input["path"].as_str());
    let Some(path) = path else { return Outcome::default() };
    match crate::prompt::record_pending(index, path) {
        Ok(()) => Outcome::default(),
        Err(e) => Outcome::quiet(format!("could not record the edit of {path}: {e}")),
    }
}

/// Whether edits were recorded since the last reindex; clears the record.
fn take_pending(index: &Path) -> bool {
    let path = index.join(crate::prompt::PENDING);
    let recorded = std::fs::read_to_string(&path).is_ok_and(|t| !t.trim().is_empty());
    let _ = std::fs::remove_file(&path);
    recorded
}

/// Starts a detached incremental reindex, so the next prompts see edited files without this one
/// waiting for the model (without a daemon, which reindexes itself before answering), at
/// `[hook] background_nice`.
fn reindex_detached(index: &Path, config: &HookConfig) {
    let root = index.parent().unwrap_or(index);
    if let Ok(exe) = std::env::current_exe() {
        let mut cmd = std::process::Command::new(exe);
        cmd.arg("index").arg(root).arg("--index").arg(index).arg("--json");
        if config.background_nice > 0 {
            cmd.arg("--nice").arg(config.background_nice.to_string());
        }
        let _ = crate::serve::detach(&mut cmd);
    }
}

/// [`reindex_detached`] unless another run holds the index's writer lock (one started now would
/// stop at it): whether it was started.
fn reindex_unless_locked(index: &Path, config: &HookConfig) -> Result<bool> {
    match crate::index::store::WriterLock::acquire(index) {
        Ok(lock) => {
            // Released before the indexer starts so it can take it; a second hook racing this
            // one starts an indexer that stops at the lock.
            drop(lock);
            reindex_detached(index, config);
            Ok(true)
        }
        Err(crate::Error::Locked { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// A session starts in a project that has no index yet: index it in the background (detached,
/// under the writer lock, so never twice at once) and say so; prompts get answers as soon as its
/// text generation is live. `None` where that is not safe or not wanted ([`auto_index_root`],
/// `[hook] auto_index`).
fn first_run(cwd: &Path) -> Option<Outcome> {
    let root = auto_index_root(cwd, std::env::var_os("HOME").map(PathBuf::from).as_deref())?;
    let index = root.join(".engine");
    let (settings, _) = project_settings(&index);
    if !settings.hook.auto_index || index.join(crate::index::store::CURRENT).exists() {
        return None;
    }
    std::fs::create_dir_all(&index).ok()?;
    let what = match reindex_unless_locked(&index, &settings.hook).ok()? {
        true => "started indexing",
        false => "already indexing",
    };
    Some(Outcome::quiet(format!(
        "{what} {} in the background (first run); prompts get context once its text is searchable",
        root.display()
    )))
}

/// The project root a first session may index: the nearest directory at or above `cwd` that is a
/// git work tree or holds an `engine.toml`, owned by this user, and neither `/` nor `home`.
fn auto_index_root(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let cwd = std::path::absolute(cwd).ok()?;
    let root = cwd.ancestors().find(|d| d.join(".git").exists() || d.join("engine.toml").is_file())?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if root.parent().is_none() || home.is_some_and(|h| same(root, h)) {
        return None;
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    (std::fs::metadata(root).ok()?.uid() == me).then(|| root.to_path_buf())
}

/// `PreCompact` and `SessionEnd`: memory records from the transcript ([`crate::capture`]), then a
/// detached incremental reindex so the next prompts and sessions find them.
fn on_capture(payload: &Payload, root: &Path, index: Option<&Path>, settings: &Settings) -> Outcome {
    if !settings.capture.enabled {
        return Outcome::default();
    }
    let Some(transcript) = &payload.transcript_path else {
        return Outcome::quiet(format!("{} without a transcript_path; nothing captured", payload.event));
    };
    let trigger = if payload.event == "PreCompact" {
        crate::capture::Trigger::PreCompact
    } else {
        crate::capture::Trigger::SessionEnd
    };
    match crate::capture::capture(transcript, root, trigger, payload.reason.as_deref(), &settings.capture) {
        Ok(r) if r.written + r.updated == 0 => Outcome::default(),
        Ok(r) => {
            if let Some(index) = index {
                reindex_detached(index, &settings.hook);
            }
            Outcome::quiet(format!(
                "captured {} new and {} updated memory records from {}",
                r.written,
                r.updated,
                transcript.display()
            ))
        }
        Err(e) => Outcome::quiet(format!("capture failed: {e}")),
    }
}

fn on_session_start(payload: &Payload, index: &Path, settings: &Settings) -> Outcome {
    let source = payload.source.as_deref().unwrap_or("startup");
    let root = index.parent().unwrap_or(index).to_path_buf();
    // Bring the index up to date (edits recorded since, files changed outside the session).
    take_pending(index);
    let mut notes = Vec::new();
    let models = crate::Models::locate(Some(&root));
    match models {
        Ok(m) => {
            let embedder = crate::embed::LazyOnnxEmbedder::new(m, settings.embed.clone());
            if let Err(e) = reindex(index, settings, &embedder) {
                notes.push(format!("reindex failed: {e}"));
            }
        }
        Err(e) => notes.push(format!("reindex skipped: {e}")),
    }
    let source = Source::parse(source);
    match session_digest(index, &root, settings, source, payload.session_id.as_deref()) {
        Ok(digest) => answer(digest, notes),
        Err(e) => {
            notes.push(e.to_string());
            answer(None, notes)
        }
    }
}

/// Why a session started, as `SessionStart` says; it decides what the digest holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A new session: the last session's record, project knowledge, files changed since.
    Startup,
    /// A resumed session: its own records, files changed since.
    Resume,
    /// Right after a compaction: what was captured from this session before it, then project
    /// knowledge.
    Compact,
    /// After `/clear`: project knowledge only.
    Clear,
}

impl Source {
    /// Unknown and missing sources are taken as `startup`.
    pub(crate) fn parse(s: &str) -> Source {
        match s {
            "resume" => Source::Resume,
            "compact" => Source::Compact,
            "clear" => Source::Clear,
            _ => Source::Startup,
        }
    }
}

/// The session digest, chosen by `source`: records of the last (`startup`) or this session
/// (`resume`, `compact`), then project knowledge (the `[hook] digest_categories`, newest first),
/// then the files changed since the last session started (`startup`, `resume`). Superseded
/// records are left out; the whole stays within `[hook] digest_max_chars`.
pub(crate) fn session_digest(
    index: &Path,
    root: &Path,
    settings: &Settings,
    source: Source,
    session_id: Option<&str>,
) -> Result<Option<String>> {
    use crate::memory::{category, MemoryStore, Stored};
    let config = &settings.hook;
    let all = MemoryStore::at_root(root).load()?;
    let gone = crate::memory::superseded(&all);
    let mut live: Vec<&Stored> = all.iter().filter(|s| !gone.contains(&s.record.id)).collect();
    live.sort_by(|a, b| b.record.created.cmp(&a.record.created).then(a.path.cmp(&b.path)));
    let is_session = |s: &&Stored| s.record.category == category::SESSION;
    let of_this = |s: &&Stored| session_id.is_some() && s.record.session_id.as_deref() == session_id;
    // Within a session's records: what it did, what the model summed up, what it decided.
    let rank = |s: &Stored| match s.record.category.as_str() {
        category::SESSION => 0,
        category::SUMMARY => 1,
        category::DECISION => 2,
        category::CONVENTION => 3,
        category::BUGFIX => 4,
        _ => 5,
    };
    let mut picked: Vec<&Stored> = Vec::new();
    match source {
        Source::Startup => picked.extend(live.iter().find(|s| is_session(s) && !of_this(s))),
        Source::Resume | Source::Compact => {
            let mut own: Vec<&Stored> = live.iter().copied().filter(of_this).collect();
            own.sort_by_key(|s| rank(s));
            picked.extend(own);
        }
        Source::Clear => {}
    }
    if source != Source::Resume {
        let taken: std::collections::HashSet<&str> = picked.iter().map(|p| p.record.id.as_str()).collect();
        let knowledge: Vec<&Stored> = live
            .iter()
            .copied()
            .filter(|s| {
                config.digest_categories.iter().any(|c| c.eq_ignore_ascii_case(&s.record.category))
                    && !taken.contains(s.record.id.as_str())
            })
            .take(config.digest_records)
            .collect();
        picked.extend(knowledge);
    }
    let c = &settings.context;
    const OPEN: &str = "<memory-context kind=\"session\">\n";
    const CLOSE: &str = "</memory-context>\n";
    // The digest is sized by whole elements, never cut afterwards: a cut could split a tag.
    let chars = |s: &str| s.chars().count();
    let mut used = chars(OPEN) + chars(CLOSE);
    let mut body = String::new();
    let changes = matches!(source, Source::Startup | Source::Resume);
    let room = if changes { config.digest_max_chars * 3 / 4 } else { config.digest_max_chars };
    for s in picked {
        let r = &s.record;
        let path = s.path.strip_prefix(root).unwrap_or(&s.path).to_string_lossy();
        // A session or summary record is the story of a session: more of it is worth showing.
        let size = if matches!(r.category.as_str(), category::SESSION | category::SUMMARY) {
            config.digest_session_chars
        } else {
            c.summary_chars
        };
        // Secrets go before the summary cuts the content (a cut token no longer matches).
        let content = crate::tier::visible(&r.content, false);
        let summary = crate::tier::summary(&content, size);
        let line = format!(
            "<memory-compact category=\"{}\" path=\"{}\" title=\"{}\">{}</memory-compact>\n",
            crate::tier::clean(&r.category, c.tag_chars, false),
            crate::tier::clean(&path, c.path_chars, false),
            crate::tier::clean(&r.title, c.title_chars, false),
            crate::tier::clean(&summary, size, false),
        );
        if used + chars(&line) > room {
            continue;
        }
        used += chars(&line);
        body.push_str(&line);
    }
    if changes {
        // Only the file list needs the index's metadata (large on a large index).
        let meta = crate::index::store::read_meta(
            &crate::index::store::current_generation(index)?
                .ok_or_else(|| crate::Error::IndexMissing { path: index.to_path_buf() })?,
        )?;
        let changed = changed_since_last_session(index, &meta);
        if !changed.is_empty() {
            let head = format!("<memory-note>Changed since the last session ({} files): ", changed.len());
            let tail = "</memory-note>\n";
            let mut listed: Vec<String> = Vec::new();
            let mut note_chars = chars(&head) + chars(tail);
            for p in changed.iter().take(20) {
                let p = crate::tier::clean(p, c.path_chars, false);
                // Room for the path, its separator and the "and N more" line.
                if used + note_chars + chars(&p) + 2 + 24 > config.digest_max_chars {
                    break;
                }
                note_chars += chars(&p) + 2;
                listed.push(p);
            }
            let more = changed.len() - listed.len();
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            if !listed.is_empty() || used + note_chars + chars(&more) <= config.digest_max_chars {
                body.push_str(&format!("{head}{}{more}{tail}", listed.join(", ")));
            }
        }
    }
    if body.is_empty() {
        return Ok(None);
    }
    Ok(Some(format!("{OPEN}{body}{CLOSE}")))
}

/// Documents added, changed or removed since the snapshot taken at the last session start; takes
/// a new snapshot. The first session has no snapshot and reports nothing.
fn changed_since_last_session(index: &Path, meta: &crate::index::store::Meta) -> Vec<String> {
    let path = index.join(SESSION_SNAPSHOT);
    let now: std::collections::BTreeMap<String, String> =
        meta.docs.values().map(|d| (d.path.clone(), d.hash.clone())).collect();
    let before: Option<std::collections::BTreeMap<String, String>> =
        std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok());
    if let Ok(json) = serde_json::to_string(&now) {
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, json).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
    let Some(before) = before else { return Vec::new() };
    let mut changed: Vec<String> =
        now.iter().filter(|(p, h)| before.get(*p) != Some(h)).map(|(p, _)| p.clone()).collect();
    changed.extend(before.keys().filter(|p| !now.contains_key(*p)).cloned());
    changed.sort();
    changed
}

/// The hook entries `engine hook install` adds: (event, matcher, timeout in seconds).
pub(crate) const ENTRIES: [(&str, Option<&str>, u64); 5] = [
    ("UserPromptSubmit", None, 5),
    ("SessionStart", None, 30),
    ("PostToolUse", Some("Edit|Write|MultiEdit"), 5),
    ("PreCompact", None, 30),
    ("SessionEnd", None, 30),
];

/// Ends every command install writes. Claude Code runs hook commands through a shell, which takes
/// it for a comment; install and uninstall know their own entries by it, whatever the binary is
/// called (`engine-dev`, a copy under another name).
pub(crate) const MARKER: &str = "# engine-hook";

/// The command a hook entry runs.
pub fn hook_command(exe: &Path) -> String {
    let p = exe.display().to_string();
    let program = if p.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        p
    } else {
        format!("'{}'", p.replace('\'', "'\\''"))
    };
    format!("{program} hook {MARKER}")
}

/// Whether install added this hook command: it ends with the marker, or it is an entry written
/// before the marker existed (`…/engine hook`), so those installs still uninstall cleanly.
fn is_ours(command: &str) -> bool {
    let command = command.trim_end();
    if command.strip_suffix(MARKER).is_some_and(|rest| rest.ends_with(char::is_whitespace)) {
        return true;
    }
    let Some(program) = command.strip_suffix(" hook") else { return false };
    let program = program.trim_matches('\'');
    Path::new(program).file_name().is_some_and(|n| n == "engine")
}

/// Whether any hook of any event in these settings is one install added.
fn has_ours(settings: &Value) -> bool {
    settings["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|events| events.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|entry| entry["hooks"].as_array())
        .flatten()
        .any(|h| h["command"].as_str().is_some_and(is_ours))
}

/// What install or uninstall did.
#[derive(Debug, PartialEq)]
pub struct InstallReport {
    /// Events whose entries were added (install) or removed (uninstall).
    pub changed: Vec<String>,
    /// Where install saved the file as it was before (only ever a file without our entries).
    pub backup: Option<PathBuf>,
}

/// Merges the engine's hook entries into a Claude Code settings file, keeping everything else.
/// Idempotent: events that already run an engine hook (any binary's) are left alone.
pub fn install(path: &Path, exe: &Path) -> Result<InstallReport> {
    let old = crate::json_file::read(path)?;
    let mut new = old.value.clone();
    if !new.is_object() {
        return Err(crate::Error::InvalidInput(format!(
            "{}: top level is not an object; left unchanged",
            path.display()
        )));
    }
    let command = hook_command(exe);
    let mut changed = Vec::new();
    let hooks = new.as_object_mut().expect("checked").entry("hooks").or_insert_with(|| serde_json::json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(crate::Error::InvalidInput(format!(
            "{}: \"hooks\" is not an object; left unchanged",
            path.display()
        )));
    };
    for (event, matcher, timeout) in ENTRIES {
        let list = hooks.entry(event).or_insert_with(|| serde_json::json!([]));
        let Some(list) = list.as_array_mut() else {
            return Err(crate::Error::InvalidInput(format!(
                "{}: hooks.{event} is not an array; left unchanged",
                path.display()
            )));
        };
        let present = list.iter().any(|entry| {
            entry["hooks"].as_array().is_some_and(|hs| hs.iter().any(|h| h["command"].as_str().is_some_and(is_ours)))
        });
        if present {
            continue;
        }
        let mut entry = serde_json::json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]});
        if let Some(m) = matcher {
            entry["matcher"] = Value::String(m.to_string());
        }
        list.push(entry);
        changed.push(event.to_string());
    }
    if changed.is_empty() {
        return Ok(InstallReport { changed, backup: None });
    }
    // The backup is the user's own file. One that already holds entries of ours is the result of
    // an earlier install (or a partial one): saving it would overwrite the real original.
    let backup = match &old.text {
        Some(text) if !has_ours(&old.value) => Some(crate::json_file::backup(path, text)?),
        _ => None,
    };
    write_atomic(path, crate::json_file::render(&new, old.text.as_deref()).as_bytes())?;
    Ok(InstallReport { changed, backup })
}

/// Removes exactly the entries install added (by the marker, or old-style `…/engine hook`);
/// other hooks and settings stay, in their order. Writes no backup: the file it changes holds our
/// entries, and the backup is kept for the user's own file.
pub fn uninstall(path: &Path) -> Result<InstallReport> {
    let old = crate::json_file::read(path)?;
    let mut new = old.value.clone();
    let mut changed = Vec::new();
    if let Some(hooks) = new.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, _, _) in ENTRIES {
            let Some(list) = hooks.get_mut(event).and_then(Value::as_array_mut) else { continue };
            let mut removed = false;
            list.retain_mut(|entry| {
                let Some(hs) = entry.get_mut("hooks").and_then(Value::as_array_mut) else { return true };
                let before = hs.len();
                hs.retain(|h| !h["command"].as_str().is_some_and(is_ours));
                if hs.len() == before {
                    return true;
                }
                removed = true;
                // An entry that held only our hook goes with it; the user's own empty ones stay.
                !hs.is_empty()
            });
            if removed {
                changed.push(event.to_string());
                if list.is_empty() {
                    // shift_remove: `remove` would move the last key into this one's place.
                    hooks.shift_remove(event);
                }
            }
        }
        if !changed.is_empty() && hooks.is_empty() {
            new.as_object_mut().expect("has hooks, so an object").shift_remove("hooks");
        }
    }
    if !changed.is_empty() {
        write_atomic(path, crate::json_file::render(&new, old.text.as_deref()).as_bytes())?;
    }
    Ok(InstallReport { changed, backup: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_session_indexes_only_a_project_of_ones_own_never_home_or_root() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let deep = project.join("src").join("deep");
        std::fs::create_dir_all(&deep).unwrap();
        // No git work tree and no engine.toml: not a project.
        assert_eq!(auto_index_root(&deep, None), None);
        std::fs::create_dir(project.join(".git")).unwrap();
        assert_eq!(auto_index_root(&deep, None).as_deref(), Some(project.as_path()));
        // A git work tree that is the home directory itself is never indexed on its own.
        assert_eq!(auto_index_root(&deep, Some(&project)), None);
        assert_eq!(auto_index_root(&deep, Some(dir.path())).as_deref(), Some(project.as_path()));
        // engine.toml marks a project too, and the nearest marker wins.
        std::fs::write(project.join("src").join("engine.toml"), "").unwrap();
        assert_eq!(auto_index_root(&deep, None).as_deref(), Some(project.join("src").as_path()));
        assert_eq!(auto_index_root(Path::new("/"), None), None);
    }

    #[test]
    fn install_merges_idempotently_and_uninstall_removes_exactly_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let original = serde_json::json!({
            "model": "opus",
            "hooks": {
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "other-tool check", "timeout": 3}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]
            }
        });
        std::fs::write(&path, serde_json::to_string_pretty(&original).unwrap()).unwrap();
        let exe = Path::new("/opt/bin/engine");
        let r = install(&path, exe).unwrap();
        assert_eq!(r.changed, ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        let backup = r.backup.unwrap();
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(backup).unwrap()).unwrap(), original);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"], "/opt/bin/engine hook # engine-hook");
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Edit|Write|MultiEdit");
        // Idempotent: a second install changes nothing (even from another build's path).
        let again = install(&path, Path::new("/usr/local/bin/engine")).unwrap();
        assert!(again.changed.is_empty() && again.backup.is_none());
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(), v);
        // Uninstall: back to the original.
        let r = uninstall(&path).unwrap();
        assert_eq!(r.changed.len(), 5);
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(), original);
        // Broken JSON is never overwritten.
        std::fs::write(&path, "{ not json").unwrap();
        assert!(install(&path, exe).unwrap_err().to_string().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        // A path with spaces is quoted.
        assert_eq!(hook_command(Path::new("/my tools/engine")), "'/my tools/engine' hook # engine-hook");
        assert!(is_ours("'/my tools/engine' hook # engine-hook"));
    }

    #[test]
    fn entries_are_recognised_by_the_marker_or_as_old_style_engine_hooks() {
        for ours in [
            "/opt/eng2 hook # engine-hook",
            "'/my tools/engine-dev' hook # engine-hook  ",
            "/usr/local/bin/engine hook",
            "'/my tools/engine' hook",
        ] {
            assert!(is_ours(ours), "{ours:?}");
        }
        for theirs in ["/opt/eng2 hook", "other-tool check", "notify #engine-hook", "/usr/bin/engine hook --plain", ""]
        {
            assert!(!is_ours(theirs), "{theirs:?}");
        }
    }

    /// A settings file in the layout install writes (two-space pretty JSON), keys deliberately
    /// out of alphabetical order, with a user hook and an empty entry of the user's own.
    /// A user's settings file with hooks of other tools, an empty entry and keys out of order.
    const ORIGINAL: &str = include_str!("../tests/data/claude-settings.json");

    #[test]
    fn another_binary_name_installs_once_keeps_the_original_and_uninstalls_to_it_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, ORIGINAL).unwrap();
        let r = install(&path, Path::new("/opt/tools/eng2")).unwrap();
        assert_eq!(r.changed, ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        let backup = r.backup.unwrap();
        assert_eq!(backup, dir.path().join("settings.json.bak"));
        let installed = std::fs::read_to_string(&path).unwrap();
        assert!(installed.contains("\"/opt/tools/eng2 hook # engine-hook\""), "{installed}");
        // Key order is the user's: model, permissions (deny before allow), hooks, env (ZED first).
        let at = |k: &str| installed.find(k).unwrap();
        assert!(at("\"model\"") < at("\"permissions\"") && at("\"permissions\"") < at("\"hooks\""));
        assert!(at("\"deny\"") < at("\"allow\"") && at("\"ZED\"") < at("\"ALPHA\""), "{installed}");
        // Installing again, from the same name or another one, adds nothing and keeps the backup.
        for exe in ["/opt/tools/eng2", "/home/me/bin/engine-dev"] {
            let again = install(&path, Path::new(exe)).unwrap();
            assert_eq!(again, InstallReport { changed: vec![], backup: None }, "{exe}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
        }
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), ORIGINAL);
        let r = uninstall(&path).unwrap();
        assert_eq!(r.changed, ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        assert_eq!(r.backup, None);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ORIGINAL, "uninstall restores the file exactly");
        assert_eq!(uninstall(&path).unwrap().changed, Vec::<String>::new());
        // Nothing else was left in the directory (no temporary files).
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["settings.json", "settings.json.bak"]);
    }

    #[test]
    fn old_style_entries_count_as_ours_and_a_modified_file_is_never_backed_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let bak = crate::json_file::backup_path(&path);
        std::fs::write(&bak, "the user's original\n").unwrap();
        // An install from before the marker, of one event only (the user removed the others).
        let old = serde_json::json!({"hooks": {"UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "/usr/local/bin/engine hook", "timeout": 5}]}
        ]}});
        std::fs::write(&path, serde_json::to_string_pretty(&old).unwrap()).unwrap();
        let r = install(&path, Path::new("/opt/eng2")).unwrap();
        assert_eq!(r.changed, ["SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        assert_eq!(r.backup, None, "the file held an entry of ours: not a backup of the user's file");
        assert_eq!(std::fs::read_to_string(&bak).unwrap(), "the user's original\n");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 1, "{v}");
        // Uninstall removes the old-style entry and the new ones alike.
        assert_eq!(uninstall(&path).unwrap().changed.len(), 5);
        assert_eq!(
            serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn a_symlinked_settings_file_stays_a_link_and_its_target_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir(&dotfiles).unwrap();
        std::fs::write(dotfiles.join("claude.json"), ORIGINAL).unwrap();
        let claude = dir.path().join(".claude");
        std::fs::create_dir(&claude).unwrap();
        let link = claude.join("settings.json");
        std::os::unix::fs::symlink("../dotfiles/claude.json", &link).unwrap();
        install(&link, Path::new("/opt/eng2")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(dotfiles.join("claude.json")).unwrap().contains("# engine-hook"));
        assert_eq!(std::fs::read_to_string(claude.join("settings.json.bak")).unwrap(), ORIGINAL);
        uninstall(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(dotfiles.join("claude.json")).unwrap(), ORIGINAL);
        // A link to a file that does not exist yet: the file is created where the link points.
        let dangling = claude.join("other.json");
        std::os::unix::fs::symlink("../dotfiles/new/other.json", &dangling).unwrap();
        install(&dangling, Path::new("/opt/eng2")).unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        assert!(dotfiles.join("new/other.json").is_file());
    }

    #[test]
    fn a_failed_write_leaves_the_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // Renaming a file over a non-empty directory fails (even for root): the write fails
        // after its temporary file was created and written.
        let target = dir.path().join("settings.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "x").unwrap();
        let err = write_atomic(&target, b"{}").unwrap_err().to_string();
        assert!(err.starts_with(&format!("writing {}: ", target.display())), "{err}");
        let names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names, ["settings.json"]);
        assert_eq!(std::fs::read_to_string(target.join("keep")).unwrap(), "x");
    }

    #[test]
    fn payload_errors_say_what_is_wrong() {
        assert!(parse(b"").unwrap_err().contains("empty stdin"));
        assert!(parse(b"{\"hook_event_name\":").unwrap_err().contains("not valid JSON"));
        assert!(parse(&[0xff, 0xfe]).unwrap_err().contains("not UTF-8"));
        assert!(parse(b"{}").unwrap_err().contains("no hook_event_name"));
        assert!(parse(b"{\"hook_event_name\":3}").unwrap_err().contains("should be a string"));
        let e = parse(br#"{"hook_event_name":"UserPromptSubmit","prompt":42}"#).unwrap_err();
        assert!(e.contains("prompt should be a string, found a number"), "{e}");
        let p = parse(br#"{"hook_event_name":"UserPromptSubmit","prompt":"x","cwd":"/tmp"}"#).unwrap();
        assert_eq!((p.event.as_str(), p.prompt.as_deref()), ("UserPromptSubmit", Some("x")));
    }
}

/// Property tests: whatever arrives on stdin, the hook neither panics nor prints anything where
/// there is no index.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(".{0,8}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn payload() -> impl Strategy<Value = Vec<u8>> {
        let event = prop::sample::select(vec!["UserPromptSubmit", "SessionStart", "PostToolUse", "Stop", ""]);
        let fields = (event, json_value(), json_value(), json_value(), any::<bool>());
        let json = fields.prop_map(|(event, prompt, source, tool_input, prompt_is_text)| {
            // Under /proc no one can create an index, whatever else runs on the machine.
            let dir = "/proc/engine-hook-property-no-index";
            let prompt = if prompt_is_text { Value::String(format!("why {prompt}")) } else { prompt };
            serde_json::json!({
                "hook_event_name": event, "prompt": prompt, "cwd": dir, "source": source, "tool_input": tool_input
            })
            .to_string()
            .into_bytes()
        });
        prop_oneof![json, prop::collection::vec(any::<u8>(), 0..200)]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn any_input_is_answered_quietly_without_an_index(input in payload(), cut in any::<prop::sample::Index>()) {
            for bytes in [&input[..], &input[..cut.index(input.len() + 1)]] {
                let out = run(bytes, false);
                prop_assert!(out.stdout.is_none(), "{out:?}");
                prop_assert!(out.stderr.as_deref().is_none_or(|e| e.starts_with("engine hook: ")), "{out:?}");
            }
        }
    }
}
