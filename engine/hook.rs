//! `engine hook`: the Claude Code hook. It reads the event's JSON on stdin and prints context for
//! the prompt (`UserPromptSubmit`), a short project digest (`SessionStart`), or records edited
//! paths (`PostToolUse`). It must never get in the way: whatever goes wrong — bad JSON, no index,
//! no model, a passed deadline — it exits 0 with no stdout (or a BM25-only answer that was ready in
//! time) and one line on stderr saying why. The warm path asks the daemon ([`crate::serve`]).

use crate::config::{HookConfig, Mode, Settings};
use crate::error::Result;
use crate::search::{Engine, SearchRequest};
use crate::secrets;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// File in the index directory listing paths edited since the last reindex.
pub const PENDING: &str = "pending-paths";
/// File in the index directory with the document hashes seen at the last session start.
pub const SESSION_SNAPSHOT: &str = "session-docs.json";

/// What the hook process prints.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub stdout: Option<String>,
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
    pub event: String,
    pub prompt: Option<String>,
    pub cwd: Option<PathBuf>,
    pub source: Option<String>,
    pub tool_input: Value,
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

/// Prompts that get no context: slash commands, greetings and acknowledgements, a word or two.
pub fn trivial(prompt: &str, config: &HookConfig) -> bool {
    let p = prompt.trim();
    if p.starts_with('/') {
        return true;
    }
    let words: Vec<String> =
        p.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    if words.len() < config.min_words {
        // A bare identifier (`revoke_all_for_user`, `SessionStore::load`) is a real question.
        return crate::intent::classify(p).symbols.is_empty();
    }
    const SMALL_TALK: [&str; 22] = [
        "hi", "hello", "hey", "thanks", "thank", "you", "ok", "okay", "yes", "no", "sure", "great", "cool", "nice",
        "continue", "go", "on", "ahead", "please", "lgtm", "done", "good",
    ];
    words.iter().all(|w| SMALL_TALK.contains(&w.as_str()))
}

/// What the hook does with a prompt before any search.
#[derive(Debug, PartialEq)]
pub enum Gate {
    /// Search for this: the prompt with secrets removed, cut at a word boundary to
    /// `max_query_chars`.
    Search(String),
    /// Nothing to add (a trivial prompt), nothing to say.
    Skip,
    /// Not searched, and why.
    Refuse(String),
}

/// Decides what to do with a prompt; the hook and `engine eval`'s hook figures both go through it.
pub fn gate(prompt: &str, config: &HookConfig) -> Gate {
    let (clean, secret) = secrets::redact(prompt);
    if secrets::mostly(prompt, secret) {
        return Gate::Refuse(format!(
            "the prompt is mostly a secret ({}); not searched",
            secrets::kinds(prompt).join(", ")
        ));
    }
    if trivial(prompt, config) {
        return Gate::Skip;
    }
    let mut q: String = clean.chars().take(config.max_query_chars).collect();
    if q.len() < clean.len() {
        // Cut at a word boundary.
        if let Some(at) = q.rfind(char::is_whitespace) {
            q.truncate(at);
        }
    }
    if q.trim().is_empty() {
        Gate::Skip
    } else {
        Gate::Search(q)
    }
}

/// Context for one query, as the hook and the daemon compute it: hybrid search, the tiered block,
/// secrets removed from its text, capped at `max_chars`. `None` when nothing relevant was found.
pub fn prompt_context(engine: &Engine, query: &str) -> Result<Option<crate::tier::ContextBlock>> {
    let config = &engine.settings.hook;
    let resp = engine.search(&SearchRequest::new(query, config.k, Mode::Hybrid))?;
    let mut context = engine.settings.context.clone();
    for _ in 0..4 {
        let mut block = engine.context_with(&resp, &context);
        if block.shown.is_empty() {
            return Ok(None);
        }
        block.text = secrets::redact(&block.text).0;
        let chars = block.text.chars().count();
        if chars <= config.max_chars {
            return Ok(Some(block));
        }
        // Too long for the client: shrink the token budget in proportion and pack again.
        let ratio = config.max_chars as f32 / chars as f32;
        context.budget_tokens = ((context.budget_tokens as f32 * ratio * 0.95) as usize).max(50);
    }
    Ok(None)
}

/// The JSON Claude Code reads from a hook's stdout.
pub fn hook_output(event: &str, context: &str) -> String {
    serde_json::json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}).to_string()
}

/// A project's config file: `engine.toml` next to its index directory.
pub fn project_config(index_dir: &Path) -> PathBuf {
    index_dir.parent().unwrap_or(index_dir).join("engine.toml")
}

/// Settings for a project, leniently ([`Settings::load`]): an invalid section falls back to its
/// defaults, a file that cannot be read or parsed to all defaults; the warnings say which.
pub fn project_settings(index_dir: &Path) -> (Settings, Vec<String>) {
    match Settings::load(&project_config(index_dir)) {
        Ok(loaded) => loaded,
        Err(e) => (Settings::default(), vec![format!("config: {e}; using the defaults")]),
    }
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
    let Some(index) = crate::cli::find_index(&cwd) else {
        return match payload.event.as_str() {
            "UserPromptSubmit" | "SessionStart" => Outcome::quiet(format!(
                "no index at or above {} (run `engine index` there); nothing added",
                cwd.display()
            )),
            _ => Outcome::default(),
        };
    };
    let (settings, config_warnings) = project_settings(&index);
    let out = match payload.event.as_str() {
        "UserPromptSubmit" => on_prompt(&payload, &index, settings),
        "SessionStart" => on_session_start(&payload, &index, &settings),
        "PostToolUse" => on_tool_use(&payload, &index),
        _ => return Outcome::default(),
    };
    // Handlers give the context itself; Claude Code reads it wrapped in its JSON.
    let stdout = out.stdout.map(|c| if plain { c } else { hook_output(&payload.event, &c) });
    let mut stderr: Vec<String> = config_warnings.iter().map(|w| format!("engine hook: {w}")).collect();
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
        match crate::serve::ask(index, &query, edited, deadline) {
            Ok(context) => return answer(context, notes),
            Err(why) => notes.push(why),
        }
    }
    if edited {
        reindex_detached(index);
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
    use std::io::Write;
    let file = std::fs::OpenOptions::new().create(true).append(true).open(index.join(PENDING));
    match file.and_then(|mut f| writeln!(f, "{path}")) {
        Ok(()) => Outcome::default(),
        Err(e) => Outcome::quiet(format!("could not record the edit of {path}: {e}")),
    }
}

/// Whether edits were recorded since the last reindex; clears the record.
fn take_pending(index: &Path) -> bool {
    let path = index.join(PENDING);
    let recorded = std::fs::read_to_string(&path).is_ok_and(|t| !t.trim().is_empty());
    let _ = std::fs::remove_file(&path);
    recorded
}

/// Brings an index up to date with its project (the directory holding the index), incrementally.
pub fn reindex(index: &Path, settings: &Settings, embedder: &dyn crate::Embedder) -> Result<()> {
    let root = index.parent().unwrap_or(index).to_path_buf();
    let options = crate::index::BuildOptions::default();
    crate::index::build(index, &crate::ingest::Source::Dir(root), settings, embedder, &options).map(|_| ())
}

/// Starts a detached incremental reindex, so the next prompts see edited files without this one
/// waiting for the model (without a daemon, which reindexes itself before answering).
fn reindex_detached(index: &Path) {
    let root = index.parent().unwrap_or(index);
    if let Ok(exe) = std::env::current_exe() {
        let mut cmd = std::process::Command::new(exe);
        cmd.arg("index").arg(root).arg("--index").arg(index).arg("--json");
        let _ = crate::serve::detach(&mut cmd);
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
    match session_digest(index, &root, settings, source != "clear") {
        Ok(digest) => answer(digest, notes),
        Err(e) => {
            notes.push(e.to_string());
            answer(None, notes)
        }
    }
}

/// The session digest: the latest decisions and conventions from memory records, and (unless
/// `changes` is false, for `clear`) the files that changed since the last session started.
pub fn session_digest(index: &Path, root: &Path, settings: &Settings, changes: bool) -> Result<Option<String>> {
    let config = &settings.hook;
    let meta = crate::index::store::read_meta(
        &crate::index::store::current_generation(index)?
            .ok_or_else(|| crate::Error::IndexMissing { path: index.to_path_buf() })?,
    )?;
    // Memory records, newest file first.
    let mut records: Vec<(std::time::SystemTime, String, crate::chunk::memory::Record)> = Vec::new();
    for (id, doc) in &meta.docs {
        if doc.kind != crate::ingest::Kind::Memory {
            continue;
        }
        let path = root.join(&doc.path);
        let (Ok(text), Ok(m)) = (std::fs::read_to_string(&path), std::fs::metadata(&path)) else { continue };
        let modified = m.modified().unwrap_or(std::time::UNIX_EPOCH);
        for r in crate::chunk::memory::parse(&text).unwrap_or_default() {
            let category = r.category.as_deref().unwrap_or("");
            if config.digest_categories.iter().any(|c| c.eq_ignore_ascii_case(category)) {
                records.push((modified, id.clone(), r));
            }
        }
    }
    records.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let c = &settings.context;
    let mut body = String::new();
    for (_, path, r) in records.iter().take(config.digest_records) {
        let title = r.title.as_deref().unwrap_or(path);
        let summary = crate::tier::summary(r.content.as_deref().unwrap_or(""), c.summary_chars);
        let line = format!(
            "<memory-compact category=\"{}\" path=\"{}\" title=\"{}\">{}</memory-compact>\n",
            crate::tier::clean(r.category.as_deref().unwrap_or(""), c.tag_chars, false),
            crate::tier::clean(path, c.path_chars, false),
            crate::tier::clean(title, c.title_chars, false),
            crate::tier::clean(&summary, c.summary_chars, false),
        );
        if body.chars().count() + line.chars().count() > config.digest_max_chars * 3 / 4 {
            break;
        }
        body.push_str(&line);
    }
    if changes {
        let changed = changed_since_last_session(index, &meta);
        if !changed.is_empty() {
            let shown: Vec<String> =
                changed.iter().take(20).map(|p| crate::tier::clean(p, c.path_chars, false)).collect();
            let more = if changed.len() > 20 { format!(" and {} more", changed.len() - 20) } else { String::new() };
            body.push_str(&format!(
                "<memory-note>Changed since the last session ({} files): {}{more}</memory-note>\n",
                changed.len(),
                shown.join(", ")
            ));
        }
    }
    if body.is_empty() {
        return Ok(None);
    }
    let (text, _) = secrets::redact(&format!("<memory-context kind=\"session\">\n{body}</memory-context>\n"));
    let text: String = text.chars().take(config.digest_max_chars).collect();
    Ok(Some(text))
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
pub const ENTRIES: [(&str, Option<&str>, u64); 3] =
    [("UserPromptSubmit", None, 5), ("SessionStart", None, 30), ("PostToolUse", Some("Edit|Write|MultiEdit"), 5)];

/// The command a hook entry runs.
pub fn hook_command(exe: &Path) -> String {
    let p = exe.display().to_string();
    if p.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        format!("{p} hook")
    } else {
        format!("'{}' hook", p.replace('\'', "'\\''"))
    }
}

/// Whether a hook command is one that install added (any engine binary's `hook`).
fn is_ours(command: &str) -> bool {
    let Some(program) = command.strip_suffix(" hook") else { return false };
    let program = program.trim_matches('\'');
    Path::new(program).file_name().is_some_and(|n| n == "engine")
}

fn read_settings(path: &Path) -> Result<Option<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Some(serde_json::json!({}))),
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            crate::Error::InvalidInput(format!("{} is not valid JSON ({e}); left unchanged", path.display()))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(crate::Error::io(format!("reading {}", path.display()), e)),
    }
}

/// Writes settings atomically, keeping the previous file as `settings.json.bak`.
fn write_settings(path: &Path, old: Option<&Value>, new: &Value) -> Result<Option<PathBuf>> {
    let io = |what: String| move |e| crate::Error::io(what, e);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    }
    let backup = match old {
        Some(_) => {
            let b = path.with_extension("json.bak");
            std::fs::copy(path, &b).map_err(io(format!("backing up {}", path.display())))?;
            Some(b)
        }
        None => None,
    };
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(new).unwrap_or_default() + "\n";
    std::fs::write(&tmp, text).map_err(io(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io(format!("replacing {}", path.display())))?;
    Ok(backup)
}

/// What install or uninstall did.
#[derive(Debug, PartialEq)]
pub struct InstallReport {
    /// Events whose entries were added (install) or removed (uninstall).
    pub changed: Vec<String>,
    pub backup: Option<PathBuf>,
}

/// Merges the engine's hook entries into a Claude Code settings file, keeping everything else.
/// Idempotent: events that already run an engine hook are left alone.
pub fn install(path: &Path, exe: &Path) -> Result<InstallReport> {
    let old = read_settings(path)?;
    let mut new = old.clone().unwrap_or_else(|| serde_json::json!({}));
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
    let backup = if changed.is_empty() { None } else { write_settings(path, old.as_ref(), &new)? };
    Ok(InstallReport { changed, backup })
}

/// Removes exactly the entries install added; other hooks and settings stay.
pub fn uninstall(path: &Path) -> Result<InstallReport> {
    let Some(old) = read_settings(path)? else { return Ok(InstallReport { changed: vec![], backup: None }) };
    let mut new = old.clone();
    let mut changed = Vec::new();
    if let Some(hooks) = new.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, _, _) in ENTRIES {
            let Some(list) = hooks.get_mut(event).and_then(Value::as_array_mut) else { continue };
            let before = list.clone();
            for entry in list.iter_mut() {
                if let Some(hs) = entry.get_mut("hooks").and_then(Value::as_array_mut) {
                    hs.retain(|h| !h["command"].as_str().is_some_and(is_ours));
                }
            }
            list.retain(|e| e["hooks"].as_array().is_none_or(|hs| !hs.is_empty()));
            if *list != before {
                changed.push(event.to_string());
            }
            if list.is_empty() {
                hooks.remove(event);
            }
        }
        if hooks.is_empty() {
            new.as_object_mut().expect("has hooks, so an object").remove("hooks");
        }
    }
    let backup = if changed.is_empty() { None } else { write_settings(path, Some(&old), &new)? };
    Ok(InstallReport { changed, backup })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.changed, ["UserPromptSubmit", "SessionStart", "PostToolUse"]);
        let backup = r.backup.unwrap();
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(backup).unwrap()).unwrap(), original);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"], "/opt/bin/engine hook");
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Edit|Write|MultiEdit");
        // Idempotent: a second install changes nothing (even from another build's path).
        let again = install(&path, Path::new("/usr/local/bin/engine")).unwrap();
        assert!(again.changed.is_empty() && again.backup.is_none());
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(), v);
        // Uninstall: back to the original.
        let r = uninstall(&path).unwrap();
        assert_eq!(r.changed.len(), 3);
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(), original);
        // Broken JSON is never overwritten.
        std::fs::write(&path, "{ not json").unwrap();
        assert!(install(&path, exe).unwrap_err().to_string().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        // A path with spaces is quoted.
        assert_eq!(hook_command(Path::new("/my tools/engine")), "'/my tools/engine' hook");
        assert!(is_ours("'/my tools/engine' hook"));
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

    #[test]
    fn trivial_prompts_are_recognised() {
        let c = HookConfig::default();
        for p in ["hi", "thanks!", "ok go on", "/clear", "/review the diff", "yes please", "  ", "lgtm"] {
            assert!(trivial(p, &c), "{p:?}");
        }
        for p in [
            "why did we switch the session store?",
            "fix the flaky upload test again",
            "hi, why is redis slow",
            "revoke_all_for_user",
            "SessionStore::load",
        ] {
            assert!(!trivial(p, &c), "{p:?}");
        }
    }

    #[test]
    fn queries_drop_secrets_and_stay_short() {
        let c = HookConfig::default();
        // A secret inside a longer question: searched, without the secret. (Alone, the same
        // token is mostly the prompt and the gate refuses it: tests/hook.rs.)
        let prompt = "why does ghp_0123456789abcdefghijABCDEFGHIJ012345 fail when the nightly deploy job pushes images";
        let Gate::Search(q) = gate(prompt, &c) else { panic!("{:?}", gate(prompt, &c)) };
        assert!(!q.contains("ghp_") && q.contains("why does"), "{q}");
        assert!(matches!(gate("ghp_0123456789abcdefghijABCDEFGHIJ012345", &c), Gate::Refuse(_)));
        let long = "word ".repeat(100_000);
        let Gate::Search(q) = gate(&long, &c) else { panic!() };
        assert!(q.len() <= c.max_query_chars);
    }
}
