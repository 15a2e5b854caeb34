//! What capture keeps of a session as its events stream by: one method per kind of event, each
//! adding to the lists the records are made from ([`super::records`]).

use super::text::{
    added_lines, added_names, answered, call_key, clip, first_error_line, is_recap, normalise_command, relative,
    same_run, sentences, strip_continuation, tracked_task, Statement, EXPLAINS, NOT_A_BUG,
};
use crate::config::CaptureConfig;
use crate::memory::transcript::{Event, EventKind, Todo};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// An error a tool call met, and what followed it.
pub(super) struct ErrorMet {
    /// The command (normalised) or the tool and its file.
    pub key: String,
    /// The error's first meaningful line.
    pub message: String,
    pub timestamp: String,
    pub resolved: bool,
    /// Files edited while it was open.
    pub fix_files: BTreeSet<String>,
    /// What the assistant said about its cause or fix while it was open.
    pub explanation: Vec<String>,
    /// Whether it is a failed command (a build or test run) rather than a tool's complaint.
    pub command: bool,
}

/// A task the session read from the project's issue tracker, in its fullest view.
pub(super) struct Task {
    pub id: String,
    pub ts: String,
    /// What the tracker showed, redacted and cut.
    pub text: String,
    /// The tracker's command (`gh`, `glab`, `bd`, `jira`).
    pub tool: String,
    /// Who wrote the task, when the tracker says.
    pub author: Option<String>,
}

/// A session as far as it was read.
pub(super) struct Session<'c> {
    config: &'c CaptureConfig,
    pub prompts: Vec<String>,
    /// Calls by id, until their result comes: (tool, input).
    calls: HashMap<String, (String, Value)>,
    pub created: BTreeSet<String>,
    pub edited: BTreeSet<String>,
    pub commands: Vec<String>,
    pub errors: Vec<ErrorMet>,
    pub todos: Vec<Todo>,
    /// Compaction summaries: (when, text).
    pub summaries: Vec<(String, String)>,
    pub statements: Vec<Statement>,
    /// Recaps of work done: (when, text).
    pub recaps: Vec<(String, String)>,
    pub tasks: Vec<Task>,
    /// Per file, the names its edits brought in: where a later session asks "where did we add X".
    pub introduced: BTreeMap<String, BTreeSet<String>>,
    /// Per file, the lines its edits added since the last compaction (the summaries hold what
    /// came before): the values and settings nothing else keeps.
    pub tail: BTreeMap<String, Vec<String>>,
    /// The user's answers to the assistant's questions: (when, question, answer).
    pub answers: Vec<(String, String, String)>,
    /// The first and last timestamps seen.
    pub first: String,
    pub last: String,
    cwd: Option<String>,
}

impl<'c> Session<'c> {
    pub fn new(config: &'c CaptureConfig) -> Session<'c> {
        Session {
            config,
            prompts: Vec::new(),
            calls: HashMap::new(),
            created: BTreeSet::new(),
            edited: BTreeSet::new(),
            commands: Vec::new(),
            errors: Vec::new(),
            todos: Vec::new(),
            summaries: Vec::new(),
            statements: Vec::new(),
            recaps: Vec::new(),
            tasks: Vec::new(),
            introduced: BTreeMap::new(),
            tail: BTreeMap::new(),
            answers: Vec::new(),
            first: String::new(),
            last: String::new(),
            cwd: None,
        }
    }

    /// The capture settings the session is read with.
    pub fn config(&self) -> &'c CaptureConfig {
        self.config
    }

    /// Takes one event in; `cwd` is the session's working directory as read so far.
    pub fn event(&mut self, event: Event, cwd: Option<&String>) {
        if self.cwd.is_none() {
            self.cwd = cwd.cloned();
        }
        let ts = event.timestamp.unwrap_or_default();
        if self.first.is_empty() {
            self.first.clone_from(&ts);
        }
        if !ts.is_empty() {
            self.last.clone_from(&ts);
        }
        match event.kind {
            EventKind::Prompt(p) => self.prompt(p, &ts),
            EventKind::AssistantText(t) => self.assistant_text(t, &ts),
            EventKind::ToolCall { id, name, input } => self.tool_call(id, name, input, &ts),
            EventKind::ToolResult { id, is_error, error, output } => {
                self.tool_result(&id, is_error, error.as_deref(), output, &ts)
            }
            EventKind::Todos(list) => self.todos = list,
            EventKind::CompactSummary(s) => self.compact_summary(s, ts),
        }
    }

    fn prompt(&mut self, p: String, ts: &str) {
        let said = sentences(&p).map(|s| Statement { text: s, user: true, summary: false, ts: ts.to_string() });
        self.statements.extend(said);
        self.prompts.push(p);
    }

    fn assistant_text(&mut self, t: String, ts: &str) {
        if is_recap(&t) {
            self.recaps.push((ts.to_string(), t.clone()));
        }
        for s in sentences(&t) {
            // The diagnosis comes before the fix: once a file was edited for an error, what the
            // assistant says next is about something else.
            for e in self.errors.iter_mut().filter(|e| !e.resolved && e.fix_files.is_empty()) {
                if e.explanation.len() < 3 && EXPLAINS.is_match(&s) {
                    e.explanation.push(s.clone());
                }
            }
            self.statements.push(Statement { text: s, user: false, summary: false, ts: ts.to_string() });
        }
    }

    fn tool_call(&mut self, id: String, name: String, input: Value, ts: &str) {
        let path = input.get("file_path").or_else(|| input.get("notebook_path")).and_then(Value::as_str);
        // Files outside the project (plans, scratch files) are not the project's history.
        if let Some(path) = path.map(|p| relative(p, self.cwd.as_deref())).filter(|p| !p.starts_with('/')) {
            self.file_touched(&name, path, &input);
        }
        if name == "Bash" {
            self.command_run(&input, ts);
        }
        self.calls.insert(id, (name, input));
    }

    /// A file a tool wrote or edited: created or edited, part of any open error's fix, and the
    /// names its new text brings in.
    fn file_touched(&mut self, tool: &str, path: String, input: &Value) {
        // A file written first and edited after is created; edited first, edited.
        match tool {
            "Write" if !self.edited.contains(&path) => {
                self.created.insert(path.clone());
            }
            "Edit" | "MultiEdit" | "NotebookEdit" if !self.created.contains(&path) => {
                self.edited.insert(path.clone());
            }
            _ => {}
        }
        if !matches!(tool, "Write" | "Edit" | "MultiEdit" | "NotebookEdit") {
            return;
        }
        for e in self.errors.iter_mut().filter(|e| !e.resolved) {
            e.fix_files.insert(path.clone());
        }
        let kept: usize = self.tail.values().map(Vec::len).sum();
        let room = self.config.tail_lines.saturating_sub(kept);
        let lines = self.tail.entry(path.clone()).or_default();
        let room = room.min(self.config.tail_lines_per_file.saturating_sub(lines.len()));
        let new: Vec<String> = added_lines(input).into_iter().filter(|l| !lines.contains(l)).take(room).collect();
        lines.extend(new);
        let names = self.introduced.entry(path).or_default();
        for n in added_names(input) {
            if names.len() < self.config.names_per_file {
                names.insert(n);
            }
        }
    }

    fn command_run(&mut self, input: &Value, ts: &str) {
        let Some(c) = input.get("command").and_then(Value::as_str).map(normalise_command) else { return };
        // The assistant's own one-line account of a command ("Install happy-dom for JS DOM
        // testing") says why it ran: a finding of its own.
        let why = input.get("description").and_then(Value::as_str).unwrap_or("").trim();
        if why.split_whitespace().count() >= 4 {
            let text = format!("{} (`{}`).", why.trim_end_matches('.'), clip(&c, 100));
            self.statements.push(Statement { text, user: false, summary: false, ts: ts.to_string() });
        }
        if !c.is_empty() && !self.commands.contains(&c) {
            self.commands.push(c);
        }
    }

    fn tool_result(&mut self, id: &str, is_error: bool, error: Option<&str>, output: Option<String>, ts: &str) {
        // A call has one result: taken out, not copied (an input can hold a whole file).
        let Some((name, input)) = self.calls.remove(id) else { return };
        if let (false, "AskUserQuestion", Some(out)) = (is_error, name.as_str(), output.as_deref()) {
            for (q, a) in answered(out) {
                self.answers.push((ts.to_string(), q, a));
            }
        }
        if let (false, "Bash", Some(out)) = (is_error, name.as_str(), output) {
            self.task_viewed(&input, &out, ts);
        }
        let key = call_key(&name, &input, self.cwd.as_deref());
        if is_error {
            self.error_met(key, name == "Bash", error.unwrap_or(""), ts);
        } else {
            for e in self.errors.iter_mut().filter(|e| !e.resolved && same_run(&e.key, &key)) {
                e.resolved = true;
            }
        }
    }

    /// A command's output that is an issue tracker's view of a task: kept, the fullest view of
    /// each task (a later `… | head` shows less of it).
    fn task_viewed(&mut self, input: &Value, out: &str, ts: &str) {
        let command = input.get("command").and_then(Value::as_str).map(normalise_command);
        let Some(id) = command.as_deref().and_then(tracked_task) else { return };
        // Redacted whole, then cut: a secret the cut split would no longer match.
        let text: String = crate::secrets::redacted(out).chars().take(self.config.task_chars).collect();
        let tool = command.as_deref().and_then(|c| c.split_whitespace().next()).unwrap_or("tracker").to_string();
        let task = Task { id, ts: ts.to_string(), author: task_author(&text), text, tool };
        let room = self.tasks.len() < self.config.max_tasks;
        match self.tasks.iter_mut().find(|t| t.id == task.id) {
            Some(t) if t.text.len() >= task.text.len() => {}
            Some(t) => *t = task,
            None if room => self.tasks.push(task),
            None => {}
        }
    }

    fn error_met(&mut self, key: String, command: bool, error: &str, ts: &str) {
        let message = first_error_line(error);
        // Not problems of the project: the user said no, a sibling call failed, a file was too
        // long to read in one go.
        if message.is_empty() || NOT_A_BUG.is_match(&message) {
            return;
        }
        // Failed again: the edits that count as its fix are the ones after this run.
        if let Some(open) = self.errors.iter_mut().find(|e| !e.resolved && e.key == key) {
            open.message = message;
            open.fix_files.clear();
            return;
        }
        self.errors.push(ErrorMet {
            key,
            message,
            timestamp: ts.to_string(),
            resolved: false,
            fix_files: BTreeSet::new(),
            explanation: Vec::new(),
            command,
        });
    }

    fn compact_summary(&mut self, s: String, ts: String) {
        // The summary's sentences may state choices too ("used X instead of Y to avoid …"); they
        // are decisions, not findings (the summary is a record of its own).
        let said = sentences(strip_continuation(&s)).collect::<Vec<_>>();
        self.statements.extend(said.into_iter().map(|text| Statement {
            text,
            user: false,
            summary: true,
            ts: ts.clone(),
        }));
        self.summaries.push((ts, s));
        // What the edits added so far is in this summary, or in the one before.
        self.tail.clear();
    }
}

/// Who wrote a task, as a tracker's view of it says (`author:\tmallory`, `Reporter: Ann`).
fn task_author(text: &str) -> Option<String> {
    static AUTHOR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?im)^\s*(?:author|reporter|created by|opened by|creator)\s*[:\t]\s*(\S[^\n]{0,60})$")
            .expect("valid")
    });
    AUTHOR.captures(text).map(|c| c[1].trim().to_string()).filter(|a| !a.is_empty())
}
