//! `UserPromptSubmit` and `PostToolUse`: a prompt's context (from the warm daemon, else searched in
//! this process within the deadline, BM25 answering when the model is late), and the record of
//! edited paths the next prompt reindexes.

use super::{answer, reindex_unless_locked, take_pending, Outcome, Payload};
use crate::config::Settings;
use crate::integrations::prompt::{gate, prompt_context, Gate};
use crate::search::Engine;
use std::path::Path;
use std::time::{Duration, Instant};

pub(super) fn on_prompt(payload: &Payload, index: &Path, settings: Settings) -> Outcome {
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
        // The daemon gets its share of the deadline; the rest is left to answer in process.
        let share = Duration::from_millis((config.deadline_ms as f32 * config.daemon_share) as u64);
        match crate::integrations::daemon::ask(index, &query, edited, Instant::now() + share) {
            Ok(None) => return answer(None, notes),
            Ok(Some(context)) => match crate::context::sanitize_block(&context) {
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
            Ok(false) => crate::integrations::prompt::defer_reindex(index),
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
            let result = crate::error::catch_panic(|| {
                Engine::open_one_shot(&index, settings).and_then(|e| {
                    let degraded = e.embedder().is_none();
                    prompt_context(&e, &query, Some(deadline)).map(|c| (c.map(|b| b.text), degraded))
                })
            });
            let _ = tx.send(
                result.map_err(|why| format!("the search stopped ({why})")).and_then(|r| r.map_err(|e| e.to_string())),
            );
        });
    }
    let lexical = crate::error::catch_panic(|| {
        Engine::open_lexical(index, settings)
            .and_then(|e| prompt_context(&e, query, Some(deadline)))
            .map(|c| c.map(|b| b.text))
    })
    .unwrap_or_else(|why| Err(crate::Error::Inference(format!("the search stopped ({why})"))));
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

/// Records the path an Edit, Write or NotebookEdit touched (cheap: one line appended). The next prompt has the
/// daemon reindex before it searches, or starts a detached reindex; SessionStart reindexes too.
pub(super) fn on_tool_use(payload: &Payload, index: &Path) -> Outcome {
    let input = &payload.tool_input;
    let path = ["file_path", "notebook_path", "path"].iter().find_map(|k| input[*k].as_str());
    let Some(path) = path else { return Outcome::default() };
    match crate::integrations::prompt::record_pending(index, path) {
        Ok(()) => Outcome::default(),
        Err(e) => Outcome::quiet(format!("could not record the edit of {path}: {e}")),
    }
}
