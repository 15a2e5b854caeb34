//! `engine hook`: the Claude Code hook. It reads the event's JSON on stdin and prints context for
//! the prompt (`UserPromptSubmit`), a short project digest (`SessionStart`), or records edited
//! paths (`PostToolUse`). It must never get in the way: whatever goes wrong — bad JSON, no index,
//! no model, a passed deadline — it exits 0 with no stdout (or a BM25-only answer that was ready in
//! time) and one line on stderr saying why. The warm path asks the daemon ([`crate::integrations::daemon`]).

mod capture;
mod install;
mod prompt;
mod session;

pub use install::{hook_command, install, plugin_config, settings_config, uninstall, PLUGIN_ROOT};

use crate::config::{HookConfig, Settings};
use crate::error::Result;
use crate::integrations::prompt::{own_project, project_settings};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What the hook process prints.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    /// What goes to stdout: the context or digest for the client (`None`: print nothing).
    pub stdout: Option<String>,
    /// What goes to stderr: notes on what failed or was skipped (`None`: nothing to report).
    pub stderr: Option<String>,
    /// What the user should know or act on, shown to them by the client (the hook output's
    /// `systemMessage`; on stderr with `--plain`). `None` when all is well.
    pub message: Option<String>,
}

impl Outcome {
    fn quiet(why: impl Into<String>) -> Outcome {
        Outcome { stderr: Some(format!("engine hook: {}", why.into())), ..Outcome::default() }
    }

    /// The same, with a message for the user.
    fn telling(mut self, message: String) -> Outcome {
        self.message = Some(message);
        self
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
    /// The tool's arguments (`PostToolUse`): the edited path is `file_path`, `notebook_path` or
    /// `path` (`Null`: absent).
    pub tool_input: Value,
    /// The session's id.
    pub session_id: Option<String>,
    /// The session's transcript (`PreCompact`, `SessionEnd`).
    pub transcript_path: Option<PathBuf>,
    /// Why the session ended (`SessionEnd`: `clear`, `logout`, `prompt_input_exit`…) or what
    /// started a compaction (`PreCompact`, `PostCompact`: `manual`, `auto`).
    pub reason: Option<String>,
    /// The summary the compaction wrote (`PostCompact`).
    pub compact_summary: Option<String>,
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
        compact_summary: string("compact_summary")?,
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

/// The JSON Claude Code reads from a hook's stdout: context for the model, a message for the
/// user, either or both (`None` when there is neither).
pub(crate) fn hook_output(event: &str, context: Option<&str>, message: Option<&str>) -> Option<String> {
    let mut out = serde_json::Map::new();
    if let Some(context) = context {
        out.insert(
            "hookSpecificOutput".into(),
            serde_json::json!({"hookEventName": event, "additionalContext": context}),
        );
    }
    if let Some(message) = message {
        out.insert("systemMessage".into(), Value::String(format!("engine: {message}")));
    }
    (!out.is_empty()).then(|| Value::Object(out).to_string())
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

/// How the hook was started.
#[derive(Debug, Default, Clone)]
pub struct Invocation {
    /// Print the context as plain text rather than the hook's JSON.
    pub plain: bool,
    /// `engine --config F hook`: settings from F instead of the project's `engine.toml`; the
    /// prompt is then answered in this process (the daemon serves the project's own settings).
    pub config: Option<PathBuf>,
    /// `engine hook --plugin`, as the Claude Code plugin runs it: does nothing, silently, for an
    /// event the Claude Code settings already run the engine's own hook for (`engine hook
    /// install`), so a project with both gets its context and capture once.
    pub plugin: bool,
}

impl Invocation {
    /// The settings for a project's index: the given file, else the project's own.
    fn settings(&self, index: &Path) -> (Settings, Vec<String>) {
        let Some(file) = &self.config else { return project_settings(index) };
        match Settings::load(file) {
            Ok((mut settings, warnings)) => {
                settings.hook.daemon = false;
                (settings, warnings)
            }
            Err(e) => (Settings::default(), vec![format!("config: {e}; using the defaults")]),
        }
    }
}

/// The project Claude Code runs the hook for (`CLAUDE_PROJECT_DIR`), when it is a directory: a
/// session that changed directory (`cd` elsewhere) keeps its project.
fn project_dir() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from).filter(|d| d.is_dir())
}

/// Runs the hook on one payload. Never fails: problems become a line on stderr. The outcome's
/// stdout is what the client reads (its JSON, or the context alone with `--plain`).
pub fn run(input: &[u8], how: &Invocation) -> Outcome {
    let payload = match parse(input) {
        Ok(p) => p,
        Err(why) => return Outcome::quiet(format!("{why}; nothing added")),
    };
    let out = dispatch(&payload, how);
    if how.plain {
        let stderr = out.stderr.into_iter().chain(out.message.map(|m| format!("engine: {m}")));
        let stderr: Vec<String> = stderr.collect();
        return Outcome { stdout: out.stdout, stderr: (!stderr.is_empty()).then(|| stderr.join("\n")), message: None };
    }
    let stdout = hook_output(&payload.event, out.stdout.as_deref(), out.message.as_deref());
    Outcome { stdout, ..out }
}

/// The handler's outcome for one event, with the context (not yet wrapped for the client).
fn dispatch(payload: &Payload, how: &Invocation) -> Outcome {
    let cwd = match project_dir().or_else(|| payload.cwd.clone()).or_else(|| std::env::current_dir().ok()) {
        Some(c) => c,
        None => return Outcome::quiet("no cwd in the payload; nothing added"),
    };
    if how.plugin && installed_by_hand(&cwd, &payload.event).is_some() {
        return Outcome::default();
    }
    let found = crate::index::store::find_index(&cwd);
    let Some(index) = found.index else {
        if matches!(payload.event.as_str(), "PreCompact" | "PostCompact" | "SessionEnd") {
            // No index yet: the records are still worth keeping, in a project of one's own.
            let home = std::env::var_os("HOME").map(PathBuf::from);
            return match own_project(&cwd, home.as_deref()) {
                // The project's engine.toml applies even before it has an index ([capture] enabled).
                Some(root) => capture::on_capture(payload, &root, None, &how.settings(&root.join(".engine")).0),
                None => Outcome::quiet(format!("no project of yours at or above {}; nothing captured", cwd.display())),
            };
        }
        if payload.event == "UserPromptSubmit" && found.distrusted.is_empty() {
            if let Some(answered) = through_backend_alone(payload, &cwd, how) {
                return answered;
            }
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
    let (settings, config_warnings) = how.settings(&index);
    let out = match payload.event.as_str() {
        "UserPromptSubmit" => prompt::on_prompt(payload, &index, settings),
        "SessionStart" => session::on_session_start(payload, &index, &settings),
        "PostToolUse" => prompt::on_tool_use(payload, &index),
        "PreCompact" | "PostCompact" | "SessionEnd" => {
            let root = index.parent().unwrap_or(&index).to_path_buf();
            capture::on_capture(payload, &root, Some(&index), &settings)
        }
        _ => return Outcome::default(),
    };
    let mut stderr: Vec<String> = config_warnings.iter().map(|w| format!("engine hook: {w}")).collect();
    if !found.distrusted.is_empty() {
        stderr.insert(0, format!("engine hook: {}", found.distrusted.join("; ")));
    }
    stderr.extend(out.stderr);
    Outcome { stderr: (!stderr.is_empty()).then(|| stderr.join("\n")), ..out }
}

/// A prompt in a project of one's own without an index whose `engine.toml` names a search
/// backend (`[backend] url`): the backend answers it alone (no daemon: a daemon serves a local
/// index). `None` when no backend is configured. An unreachable backend adds nothing.
fn through_backend_alone(payload: &Payload, cwd: &Path, how: &Invocation) -> Option<Outcome> {
    let root = own_project(cwd, std::env::var_os("HOME").map(PathBuf::from).as_deref())?;
    let index = root.join(".engine");
    let (mut settings, _) = how.settings(&index);
    settings.backend.url.as_ref()?;
    settings.hook.daemon = false;
    Some(prompt::on_prompt(payload, &index, settings))
}

/// The Claude Code settings file that runs the engine's own hook for `event` in the project
/// `project`, if one does: the project's shared and local settings, then the user's.
pub(crate) fn installed_by_hand(project: &Path, event: &str) -> Option<PathBuf> {
    let mut files = vec![project.join(".claude/settings.json"), project.join(".claude/settings.local.json")];
    files.extend(std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".claude/settings.json")));
    install::runs_ours(&files, event)
}

fn answer(context: Option<String>, notes: Vec<String>) -> Outcome {
    Outcome {
        stdout: context,
        stderr: (!notes.is_empty()).then(|| format!("engine hook: {}", notes.join("; "))),
        message: None,
    }
}

/// Whether edits were recorded since the last reindex; clears the record.
fn take_pending(index: &Path) -> bool {
    let path = index.join(crate::integrations::prompt::PENDING);
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
        let _ = crate::integrations::daemon::detach(&mut cmd);
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
/// text generation is live. `None` where that is not safe or not wanted ([`own_project`],
/// `[hook] auto_index`).
fn first_run(cwd: &Path) -> Option<Outcome> {
    let root = own_project(cwd, std::env::var_os("HOME").map(PathBuf::from).as_deref())?;
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
    let why = format!("{what} {} in the background (first run)", root.display());
    Some(Outcome::quiet(format!("{why}; prompts get context once its text is searchable")).telling(format!(
        "{what} this project in the background (first run); prompts get context from it in a minute or so"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

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
                let out = run(bytes, &Invocation::default());
                prop_assert!(out.stdout.is_none(), "{out:?}");
                prop_assert!(out.stderr.as_deref().is_none_or(|e| e.starts_with("engine hook: ")), "{out:?}");
            }
        }
    }
}
