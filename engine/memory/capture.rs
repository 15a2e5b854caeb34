//! Capture: a Claude Code transcript turned into memory records by rules, without a model. Runs on
//! `PreCompact` and `SessionEnd`, so what a session asked, changed and decided outlives its
//! context window.
//!
//! It writes, for the session so far:
//! - one `session` record (updated in place at each capture): the prompts, files created and
//!   edited, commands run, errors met and whether a later run passed, open todos, why it ended;
//! - a `summary` record per compaction summary the transcript holds (the model wrote it: the best
//!   record there is);
//! - `decision` records: sentences of the user or the assistant that state a choice together with
//!   its reason ("switched to X because …");
//! - `convention` records: rules the user states ("always …", "never …", "we use …");
//! - `bugfix` records: a command that failed, the files edited and the explanation given before
//!   the same command passed.
//!
//! Every text goes through secret redaction before it is written ([`MemoryRecord::seal`]); ids are
//! derived from the session and the content, so capturing the same transcript twice writes
//! nothing.

use crate::config::CaptureConfig;
use crate::error::Result;
use crate::memory::transcript::{EventKind, ReadStats, SessionInfo, Todo, TranscriptReader};
use crate::memory::{category, Added, MemoryRecord, MemoryStore};
use regex::Regex;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::path::Path;
use std::sync::LazyLock;

/// The hook event a capture runs for; it becomes the records' `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Before Claude Code compacts the context.
    PreCompact,
    /// When the session ends.
    SessionEnd,
    /// `engine memory capture` from the command line.
    Manual,
}

impl Trigger {
    /// The name written into the records.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::PreCompact => "PreCompact",
            Trigger::SessionEnd => "SessionEnd",
            Trigger::Manual => "manual",
        }
    }
}

/// What a capture found in a transcript.
#[derive(Debug, Default)]
pub struct Capture {
    /// The records, sealed (secrets redacted).
    pub records: Vec<MemoryRecord>,
    /// Lines read, skipped and so on.
    pub stats: ReadStats,
    /// Session id, working directory, branch.
    pub session: SessionInfo,
}

/// What [`capture`] wrote.
#[derive(Debug, Default)]
pub struct CaptureReport {
    /// Records found in the transcript.
    pub found: usize,
    /// New record files.
    pub written: usize,
    /// Records rewritten because the session went on (its session record, mostly).
    pub updated: usize,
    /// Records already stored.
    pub unchanged: usize,
    /// The reader's counts.
    pub stats: ReadStats,
    /// The session's id.
    pub session_id: Option<String>,
}

/// Reads `transcript` and writes its records into the store of the project at `root`.
pub fn capture(
    transcript: &Path,
    root: &Path,
    trigger: Trigger,
    reason: Option<&str>,
    config: &CaptureConfig,
) -> Result<CaptureReport> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(config.deadline_ms);
    let found = extract(crate::memory::transcript::open(transcript)?.until(deadline), trigger, reason, config);
    let mut report = CaptureReport {
        found: found.records.len(),
        stats: found.stats,
        session_id: found.session.session_id,
        ..CaptureReport::default()
    };
    for added in MemoryStore::at_root(root).add_all(found.records)? {
        match added {
            Added::Written(_) => report.written += 1,
            Added::Updated(_) => report.updated += 1,
            Added::Unchanged(_) => report.unchanged += 1,
        }
    }
    Ok(report)
}

/// An error a tool call met, and what followed it.
struct ErrorMet {
    /// The command (normalised) or the tool and its file.
    key: String,
    /// The error's first meaningful line.
    message: String,
    timestamp: String,
    resolved: bool,
    /// Files edited while it was open.
    fix_files: BTreeSet<String>,
    /// What the assistant said about its cause or fix while it was open.
    explanation: Vec<String>,
    /// Whether it is a failed command (a build or test run) rather than a tool's complaint.
    command: bool,
}

/// Reads a transcript's events into records (sealed, not written).
pub fn extract<R: BufRead>(
    mut reader: TranscriptReader<R>,
    trigger: Trigger,
    reason: Option<&str>,
    config: &CaptureConfig,
) -> Capture {
    let mut prompts: Vec<String> = Vec::new();
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let (mut created, mut edited) = (BTreeSet::new(), BTreeSet::new());
    let mut commands: Vec<String> = Vec::new();
    let mut errors: Vec<ErrorMet> = Vec::new();
    let mut todos: Vec<Todo> = Vec::new();
    let mut summaries: Vec<(String, String)> = Vec::new();
    let mut statements: Vec<Statement> = Vec::new();
    let mut recaps: Vec<(String, String)> = Vec::new();
    // Tasks the session read from the project's issue tracker: (task id, when, what it showed).
    let mut tasks: Vec<(String, String, String)> = Vec::new();
    // Per file, the names its edits brought in: where a later session asks "where did we add X".
    let mut introduced: std::collections::BTreeMap<String, BTreeSet<String>> = std::collections::BTreeMap::new();
    let (mut first, mut last) = (String::new(), String::new());
    let mut cwd: Option<String> = None;
    while let Some(event) = reader.next() {
        if cwd.is_none() {
            cwd.clone_from(&reader.session.cwd);
        }
        let ts = event.timestamp.unwrap_or_default();
        if first.is_empty() {
            first.clone_from(&ts);
        }
        if !ts.is_empty() {
            last.clone_from(&ts);
        }
        match event.kind {
            EventKind::Prompt(p) => {
                statements.extend(sentences(&p).map(|s| Statement {
                    text: s,
                    user: true,
                    summary: false,
                    ts: ts.clone(),
                }));
                prompts.push(p);
            }
            EventKind::AssistantText(t) => {
                if is_recap(&t) {
                    recaps.push((ts.clone(), t.clone()));
                }
                for s in sentences(&t) {
                    // The diagnosis comes before the fix: once a file was edited for an error,
                    // what the assistant says next is about something else.
                    for e in errors.iter_mut().filter(|e| !e.resolved && e.fix_files.is_empty()) {
                        if e.explanation.len() < 3 && EXPLAINS.is_match(&s) {
                            e.explanation.push(s.clone());
                        }
                    }
                    statements.push(Statement { text: s, user: false, summary: false, ts: ts.clone() });
                }
            }
            EventKind::ToolCall { id, name, input } => {
                let path = input.get("file_path").or_else(|| input.get("notebook_path")).and_then(Value::as_str);
                // Files outside the project (plans, scratch files) are not the project's history.
                if let Some(path) = path.map(|p| relative(p, cwd.as_deref())).filter(|p| !p.starts_with('/')) {
                    // A file written first and edited after is created; edited first, edited.
                    match name.as_str() {
                        "Write" if !edited.contains(&path) => {
                            created.insert(path.clone());
                        }
                        "Edit" | "MultiEdit" | "NotebookEdit" if !created.contains(&path) => {
                            edited.insert(path.clone());
                        }
                        _ => {}
                    }
                    if matches!(name.as_str(), "Write" | "Edit" | "MultiEdit" | "NotebookEdit") {
                        for e in errors.iter_mut().filter(|e| !e.resolved) {
                            e.fix_files.insert(path.clone());
                        }
                        let names = introduced.entry(path.clone()).or_default();
                        for n in added_names(&input) {
                            if names.len() < config.names_per_file {
                                names.insert(n);
                            }
                        }
                    }
                }
                if name == "Bash" {
                    if let Some(c) = input.get("command").and_then(Value::as_str).map(normalise_command) {
                        // The assistant's own one-line account of a command ("Install happy-dom
                        // for JS DOM testing") says why it ran: a finding of its own.
                        let why = input.get("description").and_then(Value::as_str).unwrap_or("").trim();
                        if why.split_whitespace().count() >= 4 {
                            let text = format!("{} (`{}`).", why.trim_end_matches('.'), clip(&c, 100));
                            statements.push(Statement { text, user: false, summary: false, ts: ts.clone() });
                        }
                        if !c.is_empty() && !commands.contains(&c) {
                            commands.push(c);
                        }
                    }
                }
                calls.insert(id, (name, input));
            }
            EventKind::ToolResult { id, is_error, error, output } => {
                let Some((name, input)) = calls.get(&id) else { continue };
                if let (false, "Bash", Some(out)) = (is_error, name.as_str(), output) {
                    let command = input.get("command").and_then(Value::as_str).map(normalise_command);
                    if let Some(task) = command.as_deref().and_then(tracked_task) {
                        // Redacted whole, then cut: a secret the cut split would no longer match.
                        let out: String = crate::secrets::redacted(&out).chars().take(config.task_chars).collect();
                        // The fullest view of each task (a later `… | head` shows less of it).
                        let room = tasks.len() < config.max_tasks;
                        match tasks.iter_mut().find(|t| t.0 == task) {
                            Some(t) if t.2.len() >= out.len() => {}
                            Some(t) => *t = (task, ts.clone(), out),
                            None if room => tasks.push((task, ts.clone(), out)),
                            None => {}
                        }
                    }
                }
                let key = call_key(name, input, cwd.as_deref());
                if is_error {
                    let message = first_error_line(error.as_deref().unwrap_or(""));
                    // Not problems of the project: the user said no, a sibling call failed, a
                    // file was too long to read in one go.
                    if message.is_empty() || NOT_A_BUG.is_match(&message) {
                        continue;
                    }
                    // Failed again: the edits that count as its fix are the ones after this run.
                    if let Some(open) = errors.iter_mut().find(|e| !e.resolved && e.key == key) {
                        open.message = message;
                        open.fix_files.clear();
                        continue;
                    }
                    let command = name == "Bash";
                    errors.push(ErrorMet {
                        key,
                        message,
                        timestamp: ts.clone(),
                        resolved: false,
                        fix_files: BTreeSet::new(),
                        explanation: Vec::new(),
                        command,
                    });
                } else {
                    for e in errors.iter_mut().filter(|e| !e.resolved && same_run(&e.key, &key)) {
                        e.resolved = true;
                    }
                }
            }
            EventKind::Todos(list) => todos = list,
            EventKind::CompactSummary(s) => {
                // The summary's sentences may state choices too ("used X instead of Y to avoid
                // …"); they are decisions, not findings (the summary is a record of its own).
                let sentences = sentences(strip_continuation(&s)).collect::<Vec<_>>();
                statements.extend(sentences.into_iter().map(|text| Statement {
                    text,
                    user: false,
                    summary: true,
                    ts: ts.clone(),
                }));
                summaries.push((ts, s));
            }
        }
    }
    let session = reader.session.clone();
    let sid = session.session_id.clone().unwrap_or_else(|| "unknown".into());
    let short = sid.chars().take(8).collect::<String>();
    let day = first.get(..10).unwrap_or("").to_string();
    let mut records = Vec::new();
    let mut push = |mut r: MemoryRecord, ts: &str, files: Vec<String>| {
        r.session_id = session.session_id.clone();
        r.source = trigger.as_str().to_string();
        if !ts.is_empty() {
            r.created = ts.to_string();
        }
        r.files = files;
        if let Some(b) = &session.git_branch {
            r.tags = vec![b.clone()];
        }
        r.seal();
        records.push(r);
    };

    if !prompts.is_empty() || !commands.is_empty() || !created.is_empty() || !edited.is_empty() {
        let title = format!(
            "Session {day} on {}: {}",
            session.git_branch.as_deref().unwrap_or("no branch"),
            clip(prompts.first().map_or("", String::as_str), config.title_chars)
        );
        let mut body = format!(
            "Session {short}, {} to {} UTC{}.\n",
            first.get(..16).unwrap_or("?").replace('T', " "),
            last.get(11..16).unwrap_or("?"),
            match (trigger, reason) {
                (Trigger::SessionEnd, Some(r)) => format!(", ended ({r})"),
                (Trigger::SessionEnd, None) => ", ended".to_string(),
                (Trigger::PreCompact, _) => ", captured before a compaction".to_string(),
                (Trigger::Manual, _) => String::new(),
            }
        );
        if !prompts.is_empty() {
            body.push_str("\nAsked:\n");
            for p in prompts.iter().take(config.session_prompts) {
                body.push_str(&format!("- {}\n", clip(&one_line(p), config.prompt_chars)));
            }
            if prompts.len() > config.session_prompts {
                body.push_str(&format!("- … and {} more prompts\n", prompts.len() - config.session_prompts));
            }
        }
        let list = |label: &str, items: &[String], n: usize| -> String {
            if items.is_empty() {
                return String::new();
            }
            let more = if items.len() > n { format!(" and {} more", items.len() - n) } else { String::new() };
            format!("\n{label}: {}{more}.\n", items.iter().take(n).cloned().collect::<Vec<_>>().join(", "))
        };
        body.push_str(&list("Files created", &created.iter().cloned().collect::<Vec<_>>(), config.session_files));
        body.push_str(&list("Files edited", &edited.iter().cloned().collect::<Vec<_>>(), config.session_files));
        let cmds: Vec<String> = commands.iter().map(|c| format!("`{}`", clip(c, 100))).collect();
        body.push_str(&list("Commands run", &cmds, config.session_commands));
        if !errors.is_empty() {
            body.push_str("\nErrors met:\n");
            for e in errors.iter().take(config.session_errors) {
                body.push_str(&format!(
                    "- {}: {} ({})\n",
                    clip(&e.key, 100),
                    clip(&e.message, 200),
                    if e.resolved { "resolved: a later run passed" } else { "not resolved in this session" }
                ));
            }
        }
        let open: Vec<&Todo> = todos.iter().filter(|t| t.status != "completed").collect();
        if !open.is_empty() {
            body.push_str("\nOpen tasks:\n");
            for t in open {
                body.push_str(&format!("- {} ({})\n", clip(&t.content, 200), t.status));
            }
        }
        let files: Vec<String> = created.iter().chain(edited.iter()).take(config.session_files * 2).cloned().collect();
        let r = MemoryRecord::new(category::SESSION, &title, &body, &format!("session:{sid}"));
        push(r, &first, files);
    }

    for (ts, summary) in &summaries {
        let body = strip_continuation(summary);
        let title = format!("What session {short} did up to {} (compaction summary)", ts.get(..10).unwrap_or(&day));
        let r = MemoryRecord::new(
            category::SUMMARY,
            &title,
            body,
            &format!("summary:{sid}:{}", crate::memory::content_hash("", "", body)),
        );
        push(r, ts, Vec::new());
    }

    for (ts, recap) in recaps.iter().rev().take(config.max_recaps) {
        let first_line = recap.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        let title =
            format!("Recap in session {short}: {}", clip(first_line.trim_matches(['*', '#', ' ']), config.title_chars));
        push(MemoryRecord::new(category::SUMMARY, &title, recap.trim(), ""), ts, Vec::new());
    }

    // What the assistant found out and explained, in order: the facts a later session asks
    // about (why a test failed, what a framework does by itself) are mostly said only here.
    let notes: Vec<&Statement> = statements.iter().filter(|s| !s.user && !s.summary && is_finding(&s.text)).collect();
    for (part, group) in notes.chunks(config.notes_per_record).enumerate() {
        let body = group.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("\n\n");
        let title = format!(
            "Findings in session {short}{}: {}",
            if notes.len() > config.notes_per_record { format!(" (part {})", part + 1) } else { String::new() },
            clip(&group[0].text, config.title_chars / 2)
        );
        let r = MemoryRecord::new(category::NOTES, &title, &body, &format!("notes:{sid}:{part}"));
        push(r, &group[0].ts, Vec::new());
    }

    let changed: Vec<String> = introduced
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(file, names)| format!("{file}: {}", names.iter().cloned().collect::<Vec<_>>().join(", ")))
        .collect();
    if !changed.is_empty() {
        let title = format!("Names the edits of session {short} brought in, by file");
        let r = MemoryRecord::new(category::CHANGES, &title, &changed.join("\n\n"), &format!("changes:{sid}"));
        push(r, &first, introduced.keys().cloned().collect());
    }

    // The task as the tracker states it is what the session was asked to build, in the words
    // (names, keys, exact behaviour) a later prompt about that work uses.
    for (task, ts, text) in &tasks {
        // `text` was redacted whole when it was read, so its first line is too.
        let first_line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        let first_line = first_line.trim_start_matches(|c: char| !c.is_alphanumeric());
        // `gh … view` run without a terminal prints `title:\tThe title` first.
        let first_line = first_line.strip_prefix("title:").map_or(first_line, str::trim_start);
        // "○ app-7 · Add a debug view": the id is in the title already.
        let first_line = first_line
            .strip_prefix(task.as_str())
            .map_or(first_line, |rest| rest.trim_start_matches([' ', '·', ':', '-']));
        let title = format!("Task {task}: {}", clip(first_line, config.title_chars));
        let r = MemoryRecord::new(category::TASK, &title, text.trim(), &format!("task:{sid}:{task}"));
        push(r, ts, Vec::new());
    }

    let mut kept = 0;
    let mut seen = BTreeSet::new();
    for s in &statements {
        if kept >= config.max_statements {
            break;
        }
        let Some(cat) = classify(s) else { continue };
        let title = clip(&s.text, config.title_chars);
        if !seen.insert(title.to_lowercase()) {
            continue;
        }
        let who = match (s.user, s.summary) {
            (true, _) => "the user",
            (false, true) => "the compaction summary",
            (false, false) => "the assistant",
        };
        let body = format!("{}\n\n(Said by {who} in session {short}, {}.)", s.text, s.ts.get(..10).unwrap_or(&day));
        push(MemoryRecord::new(cat, &title, &body, ""), &s.ts, Vec::new());
        kept += 1;
    }

    // A failure that passed without an edit was a wrong command, not a bug.
    for e in errors.iter().filter(|e| e.resolved && e.command && !e.fix_files.is_empty()) {
        let title = format!("Fixed: {} failing ({})", clip(&e.key, 60), clip(&e.message, 60));
        let mut body = format!("`{}` failed: {}\n", clip(&e.key, 200), clip(&e.message, 400));
        if !e.explanation.is_empty() {
            body.push_str(&format!("\nCause and fix: {}\n", e.explanation.join(" ")));
        }
        body.push_str(&format!(
            "\nFixed by editing {}; the same command then passed.\n",
            e.fix_files.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
        ));
        push(
            MemoryRecord::new(category::BUGFIX, &title, &body, ""),
            &e.timestamp,
            e.fix_files.iter().cloned().collect(),
        );
    }

    Capture { records, stats: reader.stats.clone(), session }
}

/// A sentence someone said, with who and when.
struct Statement {
    text: String,
    user: bool,
    /// From a compaction summary.
    summary: bool,
    ts: String,
}

static CHOICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(decided|decide to|decision|chose|choose|going with|go with|opted|switch(ed|ing)?( .{1,40})? (to|from)|instead of|rather than|(we|i)('ll| will) use|let's use|replac(e|ed|ing) .{1,60} with|moved? .{1,40} (in)?to|in favou?r of)\b").expect("valid")
});
static REASON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(because|since|so that|to avoid|to keep|to prevent|due to|which (means|avoids|keeps|makes)|otherwise|that way)\b").expect("valid")
});
static RULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(please )?(always|never|don't|do not|make sure|remember to|we use|we don't|use .{1,40} (instead|rather|for all|everywhere)|prefer )|\b(convention|by convention|must always|must never|should always|should never)\b").expect("valid")
});
static EXPLAINS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(the (issue|problem|error|cause|bug|fix|failure) (is|was)|because|caused by|fails? (because|since)|failing (because|since)|the fix|fixed (it|by)|root cause|needs? to be|was missing|is missing|wasn't|isn't)\b").expect("valid")
});
/// A summary's plans ("Optional Next Step: replace …"): what is still to do is not a decision.
static PLAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)next step|^(fix|add|update|replace|remove|implement|create|run|check|write|move|switch)\b")
        .expect("valid")
});
static NOT_A_BUG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)sibling tool call errored|doesn't want to proceed|user rejected|exceeds maximum allowed tokens|file has not been read yet|file has been modified since|was interrupted|string to replace not found|found \d+ matches of the string").expect("valid")
});

static NARRATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(let me|let's|now let me|now i|now,? (let|update|add|run|check|create|fix|read|remove|rewrite|verify|stage|commit|push)|i'll|i will|i need to (read|check|look|see|run)|first,? |next,? |then,? |good[.,!]|great|perfect|ok(ay)?|all \d+ tests pass|compiles clean|clean compile|still compiling|committed|pushed)").expect("valid")
});

/// Whether an assistant sentence states something found out rather than narrating the next step.
fn is_finding(t: &str) -> bool {
    t.len() >= 40
        && t.len() <= 600
        && !t.ends_with(':')
        && !t.ends_with('?')
        && (!NARRATION.is_match(t) || REASON.is_match(t) || EXPLAINS.is_match(t))
}

/// Whether an assistant message is a recap of work done: long, and mostly a list.
fn is_recap(t: &str) -> bool {
    let items = t.lines().filter(|l| {
        let l = l.trim_start();
        l.starts_with("- ")
            || l.starts_with("* ")
            || l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    });
    t.len() >= 400 && items.count() >= 3
}

/// The category of a statement worth its own record, if any.
fn classify(s: &Statement) -> Option<&'static str> {
    let t = &s.text;
    if t.len() < 30 || t.len() > 500 || t.ends_with('?') || t.starts_with('`') {
        return None;
    }
    // A compaction summary already keeps only what mattered: a choice stated there is a
    // decision even without its reason.
    if CHOICE.is_match(t) && (s.summary && !PLAN.is_match(t) || REASON.is_match(t)) {
        return Some(category::DECISION);
    }
    // Rules come from the user: the assistant's "always"/"never" narrate its own steps.
    (s.user && RULE.is_match(t)).then_some(category::CONVENTION)
}

/// The sentences of a text: code blocks, tables and headings left out, lines joined, split after
/// `.`, `!` or `?` followed by a space and a capital or a backtick.
fn sentences(text: &str) -> impl Iterator<Item = String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("```") {
            fenced = !fenced;
            prose.push('\n');
            continue;
        }
        if fenced || l.starts_with('|') || l.starts_with('#') || l.is_empty() {
            prose.push('\n');
            continue;
        }
        let l = l.trim_start_matches(['-', '*', '>', ' ']).trim();
        let l = l.split_once(". ").filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit())).map_or(l, |(_, r)| r);
        prose.push_str(l);
        // A line ending without punctuation is a list item or a heading of its own.
        prose.push(if l.ends_with(['.', '!', '?', ':', ',']) { ' ' } else { '\n' });
    }
    let mut out = Vec::new();
    for para in prose.split('\n') {
        let chars: Vec<char> = para.chars().collect();
        let mut start = 0;
        for i in 0..chars.len() {
            let end = matches!(chars[i], '.' | '!' | '?')
                && chars.get(i + 1) == Some(&' ')
                && chars.get(i + 2).is_some_and(|c| c.is_uppercase() || *c == '`');
            if end || i + 1 == chars.len() {
                let s: String = chars[start..=i].iter().collect::<String>().trim().to_string();
                if !s.is_empty() {
                    out.push(s);
                }
                start = i + 1;
            }
        }
    }
    out.into_iter()
}

/// Identifiers an edit adds (in its new text, not in the text it replaces): names of functions,
/// modules, options and packages: at least four characters, with a `_`, `-` or `.` or a capital
/// after the first letter (plain and capitalised words are prose, not names).
fn added_names(input: &Value) -> BTreeSet<String> {
    static NAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-z_@:][A-Za-z0-9_]*(?:[.\-/][A-Za-z0-9_]+)*[!?]?").expect("valid"));
    let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let (mut new, mut old) =
        (text("new_string") + "\n" + &text("content") + "\n" + &text("new_source"), text("old_string"));
    for e in input.get("edits").and_then(Value::as_array).into_iter().flatten() {
        new.push_str(e.get("new_string").and_then(Value::as_str).unwrap_or(""));
        old.push_str(e.get("old_string").and_then(Value::as_str).unwrap_or(""));
    }
    let before: BTreeSet<&str> = NAME.find_iter(&old).map(|m| m.as_str()).collect();
    NAME.find_iter(&new)
        .map(|m| m.as_str().trim_start_matches(':'))
        .filter(|n| n.len() >= 4 && n.len() <= 60 && !before.contains(n))
        .filter(|n| n.contains(['_', '-', '.']) || n.chars().skip(1).any(|c| c.is_ascii_uppercase()))
        .filter(|n| n.chars().any(|c| c.is_ascii_alphabetic()))
        .map(str::to_string)
        .collect()
}

/// The task a command shows, when it is an issue tracker's view of one (`bd show ID`, `gh issue
/// view ID`, `gh pr view ID`, `glab issue view ID`, `jira issue view ID`): its id.
fn tracked_task(command: &str) -> Option<String> {
    static VIEW: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:bd|beads|gh|glab|jira)\s+(?:(issue|pr|mr)\s+)?(?:show|view)\s+([A-Za-z0-9#]\S*)")
            .expect("valid")
    });
    let c = VIEW.captures(command)?;
    // An issue viewed by its URL is known by the URL's last part (`…/issues/12`: 12).
    let arg = c[2].trim_end_matches('/');
    let id = if arg.contains("://") { arg.rsplit('/').next()? } else { arg };
    // Issues, pull and merge requests are numbered apart: `issue 5` is not `mr 5`.
    Some(match c.get(1) {
        Some(kind) => format!("{} {id}", kind.as_str()),
        None => id.to_string(),
    })
}

/// A Bash command as it is worth listing: the first line, without `cd … &&`, output redirections
/// or extra spaces.
fn normalise_command(command: &str) -> String {
    let mut c = command.lines().next().unwrap_or("").trim().to_string();
    while let Some(rest) = c.strip_prefix("cd ").and_then(|r| r.split_once("&&")).map(|(_, r)| r.trim().to_string()) {
        c = rest;
    }
    for tail in ["2>&1", "| head", "| tail", "| grep"] {
        if let Some(i) = c.find(tail) {
            c.truncate(i);
        }
    }
    c.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What identifies a call for "did the same thing pass later": the command, or tool and file.
fn call_key(name: &str, input: &Value, cwd: Option<&str>) -> String {
    if name == "Bash" {
        return normalise_command(input.get("command").and_then(Value::as_str).unwrap_or(""));
    }
    match input.get("file_path").and_then(Value::as_str) {
        Some(p) => format!("{name} {}", relative(p, cwd)),
        None => name.to_string(),
    }
}

/// Whether a later call reruns a failed one: the same command, or a broader run of it (`mix test`
/// passing after `mix test test/a_test.exs` failed; at least a program and a subcommand).
fn same_run(failed: &str, later: &str) -> bool {
    if failed == later {
        return true;
    }
    let (f, l): (Vec<&str>, Vec<&str>) = (failed.split_whitespace().collect(), later.split_whitespace().collect());
    l.len() >= 2 && f.len() > l.len() && f[..l.len()] == l[..]
}

/// The line of an error message that says what went wrong.
fn first_error_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let telling = lines.iter().find(|l| {
        let l = l.to_lowercase();
        (l.contains("error")
            || l.contains("fail")
            || l.contains("fatal")
            || l.contains("panic")
            || l.contains("warning"))
            && !l.starts_with("exit code")
    });
    let line = telling.or_else(|| lines.iter().find(|l| !l.to_lowercase().starts_with("exit code"))).or(lines.first());
    line.map(|l| one_line(l)).unwrap_or_default()
}

/// `path` relative to the session's working directory when it is inside it.
fn relative(path: &str, cwd: Option<&str>) -> String {
    cwd.and_then(|c| path.strip_prefix(c)).map_or(path, |r| r.trim_start_matches('/')).to_string()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `n` characters, cut at a word boundary with an ellipsis.
fn clip(text: &str, n: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= n {
        return text.to_string();
    }
    let cut: String = text.chars().take(n.saturating_sub(1)).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > n / 2 => cut[..i].to_string(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// A compaction summary without Claude Code's framing ("This session is being continued …").
fn strip_continuation(summary: &str) -> &str {
    let s = summary.trim();
    let s = s
        .strip_prefix("This session is being continued from a previous conversation that ran out of context.")
        .unwrap_or(s);
    let s = s.trim_start();
    let s = s.strip_prefix("The conversation is summarized below:").unwrap_or(s).trim();
    match s.find("\nPlease continue the conversation from where we left") {
        Some(i) => s[..i].trim_end(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(text: &str, user: bool) -> Statement {
        Statement { text: text.into(), user, summary: false, ts: String::new() }
    }

    #[test]
    fn choices_with_reasons_are_decisions_and_user_rules_are_conventions() {
        let d = stmt("We switched the session store to Redis because restarts logged everyone out.", false);
        assert_eq!(classify(&d), Some(category::DECISION));
        assert_eq!(classify(&stmt("Let me switch to the other file and read it.", false)), None, "no reason");
        assert_eq!(
            classify(&stmt("Always run mix format before committing anything.", true)),
            Some(category::CONVENTION)
        );
        assert_eq!(classify(&stmt("Always run mix format before committing anything.", false)), None);
        assert_eq!(classify(&stmt("Should we switch to Redis because of restarts?", true)), None, "a question");
        let summary = |t: &str| Statement { summary: true, ..stmt(t, false) };
        let used = summary("Used a string prefix replacement for path relativization instead of regex");
        assert_eq!(classify(&used), Some(category::DECISION), "a summary's choice needs no reason");
        assert_eq!(classify(&summary("Optional Next Step: replace the guard clause with a pattern match")), None);
        assert_eq!(classify(&summary("Replace the guard clause instead of the pattern")), None, "a plan");
    }

    #[test]
    fn sentences_skip_code_and_tables_and_split_on_capitals() {
        let text =
            "First we tried X. Then `y` failed.\n```\nlet a = 1. B\n```\n| a | b |\n1. A numbered item\n- a bullet";
        let s: Vec<String> = sentences(text).collect();
        assert_eq!(s, ["First we tried X.", "Then `y` failed.", "A numbered item", "a bullet"]);
    }

    #[test]
    fn edits_bring_in_names_not_prose() {
        let edit = serde_json::json!({
            "old_string": "def run(args):\n    pass",
            "new_string": "@dialyzer {:nowarn_function, build: 2}\ndef run(args):\n    # Converts the Result into lazy_html\n    MapSet.to_list(args)"
        });
        let names: Vec<String> = added_names(&edit).into_iter().collect();
        assert_eq!(names, ["MapSet.to_list", "lazy_html", "nowarn_function"], "not Converts, Result or @dialyzer");
        let multi = serde_json::json!({"edits": [{"old_string": "a", "new_string": "useTranscriptHighlighter()"}]});
        assert_eq!(added_names(&multi).into_iter().collect::<Vec<_>>(), ["useTranscriptHighlighter"]);
    }

    /// A transcript line in which the assistant runs one Bash command.
    fn bash_call(id: &str, command: &str, ts: &str) -> String {
        serde_json::json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":id,"name":"Bash","input":{"command":command}}]},"timestamp":ts}).to_string()
    }

    /// A transcript line carrying one tool call's result.
    fn tool_result(id: &str, text: &str, error: bool, ts: &str) -> String {
        serde_json::json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":id,"is_error":error,"content":text}]},"timestamp":ts}).to_string()
    }

    #[test]
    fn a_task_the_tracker_showed_becomes_a_task_record_in_its_fullest_view() {
        let spec = "○ app-7 · Add a debug view   [● P1 · OPEN]\n\nKeep the keyboard shortcut (`Ctrl+Shift+D`) for the debug toggle.";
        let text = [
            r#"{"type":"user","sessionId":"s-2","cwd":"/p","message":{"content":"work on app-7"},"timestamp":"2026-01-05T10:00:00Z"}"#.to_string(),
            bash_call("a", "cd /p && bd show app-7", "2026-01-05T10:01:00Z"),
            tool_result("a", spec, false, "2026-01-05T10:01:01Z"),
            bash_call("b", "bd show app-7 2>&1 | head -1", "2026-01-05T10:02:00Z"),
            tool_result("b", "○ app-7 · Add a debug view", false, "2026-01-05T10:02:01Z"),
            bash_call("c", "gh issue view 12", "2026-01-05T10:03:00Z"),
            tool_result("c", "issue not found", true, "2026-01-05T10:03:01Z"),
            bash_call("d", "git show HEAD", "2026-01-05T10:04:00Z"),
            tool_result("d", "commit abc", false, "2026-01-05T10:04:01Z"),
        ]
        .join("\n");
        let c = extract(
            TranscriptReader::new(std::io::Cursor::new(text.as_bytes())),
            Trigger::PreCompact,
            None,
            &CaptureConfig::default(),
        );
        let tasks: Vec<&MemoryRecord> = c.records.iter().filter(|r| r.category == category::TASK).collect();
        assert_eq!(tasks.len(), 1, "one task, not a failed view nor a git command: {tasks:?}");
        assert_eq!(tasks[0].title, "Task app-7: Add a debug view   [● P1 · OPEN]");
        assert!(tasks[0].content.contains("Ctrl+Shift+D"), "the fullest view: {}", tasks[0].content);
        assert_eq!(tasks[0].created, "2026-01-05T10:01:01Z");
        assert_eq!(tracked_task("gh pr view 81 --comments").as_deref(), Some("pr 81"));
        assert_eq!(tracked_task("glab mr view #5").as_deref(), Some("mr #5"));
        assert_eq!(tracked_task("gh issue view https://github.com/o/r/issues/12").as_deref(), Some("issue 12"));
        assert_eq!(tracked_task("bd list"), None);
    }

    #[test]
    fn commands_are_normalised_and_reruns_recognised() {
        assert_eq!(normalise_command("cd /x/y && mix test test/a_test.exs 2>&1 | tail -5"), "mix test test/a_test.exs");
        assert!(same_run("mix test test/a_test.exs", "mix test"));
        assert!(!same_run("mix test test/a_test.exs", "mix test test/b_test.exs"));
        assert!(!same_run("mix test", "mix test test/a_test.exs"), "a narrower run proves less");
        assert!(!same_run("git push", "git status"));
        assert!(!same_run("ls", "ls -la"), "one word is not a subcommand");
    }

    #[test]
    fn an_error_then_an_edit_then_a_pass_is_a_bugfix_and_the_session_is_summed_up() {
        let lines = [
            r#"{"type":"user","sessionId":"s-1","cwd":"/p","gitBranch":"main","message":{"content":"make the tests pass"},"timestamp":"2026-01-05T10:00:00Z"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cd /p && mix test 2>&1"}}]},"timestamp":"2026-01-05T10:01:00Z"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"Exit code 2\n** (CompileError) lib/a.ex:3: undefined function foo/0"}]},"timestamp":"2026-01-05T10:01:05Z"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"The error is caused by a missing import of Foo. I'll add it."},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/p/lib/a.ex","old_string":"a","new_string":"b"}}]},"timestamp":"2026-01-05T10:02:00Z"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]},"timestamp":"2026-01-05T10:02:01Z"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"mix test"}}]},"timestamp":"2026-01-05T10:03:00Z"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t3","content":"3 tests, 0 failures"}]},"timestamp":"2026-01-05T10:03:05Z"}"#,
        ];
        let text = lines.join("\n");
        let c = extract(
            TranscriptReader::new(std::io::Cursor::new(text.as_bytes())),
            Trigger::SessionEnd,
            Some("logout"),
            &CaptureConfig::default(),
        );
        let session = c.records.iter().find(|r| r.category == "session").unwrap();
        assert!(session.content.contains("make the tests pass"), "{}", session.content);
        assert!(session.content.contains("Files edited: lib/a.ex."), "{}", session.content);
        assert!(session.content.contains("CompileError"), "{}", session.content);
        assert!(session.content.contains("resolved: a later run passed"));
        assert!(session.content.contains("ended (logout)"));
        assert_eq!(session.files, ["lib/a.ex"]);
        let fix = c.records.iter().find(|r| r.category == "bugfix").unwrap();
        assert!(fix.content.contains("missing import of Foo"), "{}", fix.content);
        assert!(fix.content.contains("lib/a.ex"));
        assert_eq!(fix.session_id.as_deref(), Some("s-1"));
        assert_eq!(fix.created, "2026-01-05T10:01:05Z");
    }

    /// One example of every pattern in [`crate::secrets::PATTERNS`] (checked below), and the part
    /// of it that must never reach a record.
    const PLANTED: &[(&str, &str)] = &[
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplantedKeyBody0123456789\n-----END RSA PRIVATE KEY-----",
            "plantedKeyBody",
        ),
        ("Q7n2h9x1b3BlbnNzaC1rZXktdjEAAAAAplantedTail== -----END OPENSSH PRIVATE KEY-----", "plantedTail"),
        ("AKIAIOSFODNN7PLANTED", "AKIAIOSFODNN7PLANTED"),
        ("ghp_PlantedGitHubToken0123456789abcdefghij", "PlantedGitHubToken"),
        ("glpat-PlantedGitLabTok3n12345", "PlantedGitLabTok3n"),
        ("xoxb-1234567890-PlantedSlack", "PlantedSlack"),
        ("sk-ant-api03-PlantedAnthropicKey12345", "PlantedAnthropicKey"),
        ("sk_live_PlantedStripeKey12345", "PlantedStripeKey"),
        ("AIzaSyPlantedGoogleKey0123456789abcdefg", "PlantedGoogleKey"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.PlantedJwtSignature123", "PlantedJwtSignature"),
        ("postgres://admin:PlantedDbPass@db.example.com/app", "PlantedDbPass"),
        ("password = \"PlantedPassw0rd\"", "PlantedPassw0rd"),
    ];

    #[test]
    fn every_secret_pattern_planted_in_a_transcript_is_redacted_before_it_reaches_disk() {
        for (name, _, pattern) in crate::secrets::PATTERNS {
            let re = Regex::new(pattern).unwrap();
            assert!(PLANTED.iter().any(|(s, _)| re.is_match(s)), "no planted example for the {name} pattern");
        }
        let all = PLANTED.iter().map(|(s, _)| *s).collect::<Vec<_>>().join(" and ");
        let line = |v: serde_json::Value| v.to_string();
        let text = [
            line(serde_json::json!({"type":"user","sessionId":"s-9","cwd":"/p","message":{"content":format!("Deploy with {all}")},"timestamp":"2026-01-05T10:00:00Z"})),
            line(serde_json::json!({"type":"assistant","message":{"content":[
                {"type":"text","text":format!("We switched the deploy to the vault because the old key leaked: {all}.")},
                {"type":"tool_use","id":"t1","name":"Bash","input":{"command":format!("deploy --key {all}"),"description":format!("Deploy the release using {all}")}},
                {"type":"tool_use","id":"t2","name":"TodoWrite","input":{"todos":[{"content":format!("Rotate {all}"),"status":"pending"}]}}
            ]},"timestamp":"2026-01-05T10:01:00Z"})),
            line(serde_json::json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":format!("Error: rejected {all}")}]},"timestamp":"2026-01-05T10:01:05Z"})),
            line(serde_json::json!({"type":"assistant","message":{"content":[
                {"type":"text","text":format!("The error is caused by the expired credential {all}.")},
                {"type":"tool_use","id":"t3","name":"Edit","input":{"file_path":"/p/deploy.sh","old_string":"a","new_string":"b"}},
                {"type":"tool_use","id":"t4","name":"Bash","input":{"command":format!("deploy --key {all}")}}
            ]},"timestamp":"2026-01-05T10:02:00Z"})),
            line(serde_json::json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t4","content":"ok"}]},"timestamp":"2026-01-05T10:02:05Z"})),
            bash_call("t5", "gh issue view 42", "2026-01-05T10:03:00Z"),
            tool_result("t5", &format!("Rotate the deploy key\nThe old one was {all}"), false, "2026-01-05T10:03:05Z"),
            line(serde_json::json!({"type":"user","isCompactSummary":true,"message":{"content":format!("Summary: deployed with {all}.")},"timestamp":"2026-01-05T11:00:00Z"})),
        ]
        .join("\n");
        let c = extract(
            TranscriptReader::new(std::io::Cursor::new(text.as_bytes())),
            Trigger::SessionEnd,
            None,
            &CaptureConfig::default(),
        );
        let kinds: BTreeSet<&str> = c.records.iter().map(|r| r.category.as_str()).collect();
        assert!(
            ["session", "summary", "bugfix", "decision", "notes", "task"].iter().all(|k| kinds.contains(k)),
            "{kinds:?}"
        );
        let dir = tempfile::tempdir().unwrap();
        MemoryStore::at_root(dir.path()).add_all(c.records).unwrap();
        let mut files = 0;
        for e in std::fs::read_dir(dir.path().join(crate::memory::DIR)).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            for (_, part) in PLANTED {
                assert!(!text.contains(part), "{part} reached disk:\n{text}");
            }
            files += 1;
        }
        assert!(files >= 5);
    }
}
