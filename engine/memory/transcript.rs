//! Claude Code session transcripts (JSON lines), read as a stream of events: what the user asked,
//! what the assistant said and which tools it called, whether a call failed, the todo list, and
//! the summaries Claude Code writes when it compacts a session. Memory capture is built on it.
//!
//! Real transcripts mix many line types (progress, system, file-history snapshots, queue
//! operations…) and change between versions, so unknown types and fields are counted and
//! skipped, never an error; so are lines that are not JSON (a transcript being written ends in a
//! partial line) and lines longer than a bound (a tool result holding a whole file), which are
//! read past without being held in memory.

use serde_json::Value;
use std::collections::VecDeque;
use std::io::BufRead;

/// Lines longer than this are skipped (and counted) without being held in memory.
pub const MAX_LINE: usize = 4 << 20;

/// At most this much of a transcript file is read (its start: a session's later turns past it
/// are not captured).
pub const MAX_BYTES: u64 = 256 << 20;

/// How much of a failed tool call's message an [`EventKind::ToolResult`] keeps.
pub const ERROR_CHARS: usize = 1500;

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// When, as the transcript says (RFC 3339), if it does.
    pub timestamp: Option<String>,
    /// What.
    pub kind: EventKind,
}

/// The kinds of [`Event`].
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// A prompt the user typed (not a tool result, a slash-command wrapper or a notification).
    Prompt(String),
    /// Text the assistant wrote (thinking left out).
    AssistantText(String),
    /// A tool call: its id, the tool's name and its input.
    ToolCall {
        /// The id its result refers to.
        id: String,
        /// The tool (`Edit`, `Write`, `Bash`, …).
        name: String,
        /// The tool's input, as the assistant sent it.
        input: Value,
    },
    /// The result of a tool call: whether it failed, and then the start of its message (a
    /// successful result's content is not kept).
    ToolResult {
        /// The id of the call.
        id: String,
        /// Whether the tool reported an error.
        is_error: bool,
        /// The first [`ERROR_CHARS`] characters of an error's text (`None` when it succeeded).
        error: Option<String>,
        /// A successful call's output (`None` when it failed): as the transcript has it, neither
        /// redacted nor cut (what keeps it does both).
        output: Option<String>,
    },
    /// The todo list as the assistant last set it (`TodoWrite`).
    Todos(Vec<Todo>),
    /// The summary Claude Code wrote of the session so far when it compacted it.
    CompactSummary(String),
}

/// One item of a todo list.
#[derive(Debug, Clone, PartialEq)]
pub struct Todo {
    /// What is to be done.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

/// What the reader saw besides events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadStats {
    /// Lines read.
    pub lines: usize,
    /// Lines that were not a JSON object (a truncated last line, garbage).
    pub invalid: usize,
    /// Lines longer than the reader's bound, skipped unread.
    pub oversized: usize,
    /// Lines of a type this reader does not know.
    pub unknown: usize,
    /// Bytes read up to the end of the last complete line (where a later read can resume).
    pub bytes: u64,
    /// Reading stopped early: at [`MAX_BYTES`], or at the reader's deadline.
    pub cut: bool,
}

/// Where and in which session the transcript was written (the last value seen of each).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionInfo {
    /// The session's id.
    pub session_id: Option<String>,
    /// The working directory.
    pub cwd: Option<String>,
    /// The git branch checked out.
    pub git_branch: Option<String>,
}

/// Streams the [`Event`]s of a transcript; [`stats`](Self::stats) and [`session`](Self::session)
/// hold what it has seen so far.
pub struct TranscriptReader<R> {
    reader: R,
    line: Vec<u8>,
    pending: VecDeque<Event>,
    max_line: usize,
    /// Bytes of the line being read that are not yet counted in `stats.bytes`.
    partial: u64,
    /// Lines read, invalid, oversized and of unknown types.
    pub stats: ReadStats,
    /// Session id, working directory and branch.
    pub session: SessionInfo,
    /// Past this, the stream ends as if the file did ([`ReadStats::cut`]).
    deadline: Option<std::time::Instant>,
}

/// A transcript as [`open`] reads it.
pub type FileReader = TranscriptReader<Box<dyn BufRead + Send>>;

/// Opens a transcript file: only a regular file (a FIFO, a device or a directory is refused
/// without blocking on it), at most [`MAX_BYTES`] of it, decompressed when its name ends in
/// `.zst` (how this repository vendors the transcripts its tests read).
pub fn open(path: &std::path::Path) -> crate::Result<FileReader> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |e: std::io::Error| crate::Error::io(format!("opening transcript {}", path.display()), e);
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one forever.
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(failed)?;
    let kind = file.metadata().map_err(failed)?.file_type();
    if !kind.is_file() {
        return Err(crate::Error::InvalidInput(format!(
            "transcript {} is not a regular file ({}); not read",
            path.display(),
            if kind.is_dir() { "a directory" } else { "a FIFO, socket or device" }
        )));
    }
    let capped = file.take(MAX_BYTES);
    let reader: Box<dyn BufRead + Send> = if path.extension().is_some_and(|e| e == "zst") {
        let decoder = zstd::stream::read::Decoder::new(capped).map_err(failed)?;
        Box::new(std::io::BufReader::with_capacity(1 << 16, decoder.take(MAX_BYTES)))
    } else {
        Box::new(std::io::BufReader::with_capacity(1 << 16, capped))
    };
    Ok(TranscriptReader::new(reader))
}

impl<R: BufRead> TranscriptReader<R> {
    /// A reader over `reader`, skipping lines longer than [`MAX_LINE`].
    pub fn new(reader: R) -> TranscriptReader<R> {
        TranscriptReader::with_max_line(reader, MAX_LINE)
    }

    /// A reader skipping lines longer than `max_line` bytes.
    pub fn with_max_line(reader: R, max_line: usize) -> TranscriptReader<R> {
        TranscriptReader {
            reader,
            line: Vec::new(),
            pending: VecDeque::new(),
            max_line,
            partial: 0,
            stats: ReadStats::default(),
            session: SessionInfo::default(),
            deadline: None,
        }
    }

    /// Stops reading at `deadline` (a hook's share of its timeout): what was read stands.
    pub fn until(mut self, deadline: std::time::Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Reads the next line into `self.line`: `None` at the end, `Some(false)` for a line over the
    /// bound (read past, not kept).
    fn next_line(&mut self) -> std::io::Result<Option<bool>> {
        self.line.clear();
        let (mut any, mut over) = (false, false);
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(any.then_some(!over));
            }
            any = true;
            let newline = buf.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(buf.len());
            if !over {
                if self.line.len() + take > self.max_line {
                    over = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(&buf[..take]);
                }
            }
            self.reader.consume(take + usize::from(newline.is_some()));
            self.partial += (take + usize::from(newline.is_some())) as u64;
            if newline.is_some() {
                self.stats.bytes += std::mem::take(&mut self.partial);
                return Ok(Some(!over));
            }
        }
    }

    fn parse_line(&mut self) {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(&self.line) else {
            self.stats.invalid += 1;
            return;
        };
        let text = |key: &str| line.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        for (key, slot) in [
            ("sessionId", &mut self.session.session_id),
            ("cwd", &mut self.session.cwd),
            ("gitBranch", &mut self.session.git_branch),
        ] {
            if let Some(v) = text(key) {
                *slot = Some(v);
            }
        }
        let timestamp = text("timestamp");
        let content = line.get("message").and_then(|m| m.get("content"));
        let kinds = match line.get("type").and_then(Value::as_str).unwrap_or_default() {
            "user" if line.get("isCompactSummary").and_then(Value::as_bool) == Some(true) => content
                .map(plain_text)
                .filter(|s| !s.trim().is_empty())
                .map(EventKind::CompactSummary)
                .into_iter()
                .collect(),
            "user" => user_events(content, line.get("isMeta").and_then(Value::as_bool) == Some(true)),
            "assistant" => assistant_events(content),
            // Known, and nothing a memory needs: hook and tool progress, system notes, file
            // snapshots, the prompt queue, session titles.
            "progress" | "system" | "file-history-snapshot" | "queue-operation" | "summary" => Vec::new(),
            _ => {
                self.stats.unknown += 1;
                Vec::new()
            }
        };
        self.pending.extend(kinds.into_iter().map(|kind| Event { timestamp: timestamp.clone(), kind }));
    }
}

/// What a user line holds: the prompt typed (not in a meta line), and tool results.
fn user_events(content: Option<&Value>, meta: bool) -> Vec<EventKind> {
    match content {
        Some(Value::String(s)) if !meta => prompt(s).map(redacted).map(EventKind::Prompt).into_iter().collect(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("tool_result") => Some(tool_result(b)),
                Some("text") if !meta => {
                    b.get("text").and_then(Value::as_str).and_then(prompt).map(redacted).map(EventKind::Prompt)
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A tool result block: a failure keeps the start of its message, a success its output, both
/// redacted whole, before anything cuts them (a secret the cut split would no longer match).
fn tool_result(b: &Value) -> EventKind {
    let is_error = b.get("is_error").and_then(Value::as_bool) == Some(true);
    let text = redacted(b.get("content").map(plain_text).unwrap_or_default());
    let (error, output) =
        if is_error { (Some(text.chars().take(ERROR_CHARS).collect()), None) } else { (None, Some(text)) };
    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default().to_string();
    EventKind::ToolResult { id, is_error, error, output }
}

/// A text with its secrets redacted: every text an event carries is, before anything reads it
/// (a key's BEGIN line split from its body by a later step, or names taken from a password's
/// letters, would no longer be recognised).
fn redacted(text: String) -> String {
    crate::secrets::redact_owned(text)
}

/// Redacts every string inside a tool's input (a command, an edit's new text, a file written).
fn redact_strings(v: &mut Value) {
    match v {
        Value::String(s) => *s = redacted(std::mem::take(s)),
        Value::Array(items) => items.iter_mut().for_each(redact_strings),
        Value::Object(map) => map.values_mut().for_each(redact_strings),
        _ => {}
    }
}

/// What an assistant line holds: its text and its tool calls (a todo list update is also its own
/// event); thinking is left out.
fn assistant_events(content: Option<&Value>) -> Vec<EventKind> {
    let mut out = Vec::new();
    for b in content.and_then(Value::as_array).into_iter().flatten() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = b.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
                    out.push(EventKind::AssistantText(redacted(t.to_string())));
                }
            }
            Some("tool_use") => {
                let name = b.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                let mut input = b.get("input").cloned().unwrap_or(Value::Null);
                redact_strings(&mut input);
                if name == "TodoWrite" {
                    out.push(EventKind::Todos(todos(input.get("todos"))));
                }
                let id = b.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                out.push(EventKind::ToolCall { id, name, input });
            }
            _ => {}
        }
    }
    out
}

impl<R: BufRead> Iterator for TranscriptReader<R> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                return Some(e);
            }
            if self.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                self.stats.cut = true;
                return None;
            }
            // A read error ends the stream like the end of the file: what was read stands.
            match self.next_line().ok()? {
                None => {
                    self.stats.cut |= self.stats.bytes + self.partial >= MAX_BYTES;
                    return None;
                }
                Some(false) => {
                    self.stats.lines += 1;
                    self.stats.oversized += 1;
                }
                Some(true) => {
                    self.stats.lines += 1;
                    if !self.line.iter().all(u8::is_ascii_whitespace) {
                        self.parse_line();
                    }
                }
            }
        }
    }
}

/// The text of a message content: a string, or its text blocks joined.
fn plain_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Text Claude Code puts in a user message that the user did not type.
const WRAPPERS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<task-notification>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "Caveat: The messages below were generated by the user while running local commands",
];

/// The prompt a user message holds, reminders removed; `None` for wrappers and empty text.
fn prompt(text: &str) -> Option<String> {
    let mut rest = text.to_string();
    while let (Some(start), Some(end)) = (rest.find("<system-reminder>"), rest.find("</system-reminder>")) {
        if end < start {
            break;
        }
        rest.replace_range(start..end + "</system-reminder>".len(), "");
    }
    let rest = rest.trim();
    (!rest.is_empty() && !WRAPPERS.iter().any(|w| rest.starts_with(w))).then(|| rest.to_string())
}

fn todos(list: Option<&Value>) -> Vec<Todo> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(Todo {
                content: t.get("content")?.as_str()?.to_string(),
                status: t.get("status").and_then(Value::as_str).unwrap_or("pending").to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Vec<EventKind>, ReadStats, SessionInfo) {
        let mut r = TranscriptReader::with_max_line(std::io::Cursor::new(text.as_bytes()), 2000);
        let events = r.by_ref().map(|e| e.kind).collect();
        (events, r.stats, r.session)
    }

    /// Lines shaped like Claude Code 2.1's, fields and all.
    const SESSION: &str = r#"{"type":"file-history-snapshot","messageId":"m1","snapshot":{},"isSnapshotUpdate":false}
{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/u/app","sessionId":"s-1","version":"2.1.3","gitBranch":"main","type":"user","message":{"role":"user","content":"why does the server not start?"},"uuid":"u1","timestamp":"2026-01-05T10:00:00.000Z"}
{"type":"progress","data":{"type":"hook_progress"},"toolUseID":"t0","parentToolUseID":"t0","sessionId":"s-1","timestamp":"2026-01-05T10:00:01.000Z"}
{"type":"assistant","sessionId":"s-1","message":{"role":"assistant","content":[{"type":"thinking","thinking":"let me look"},{"type":"text","text":"Let me run it."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"mix phx.server"}}]},"timestamp":"2026-01-05T10:00:02.000Z"}
{"type":"user","sessionId":"s-1","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"port 4000 in use","is_error":true}]},"toolUseResult":"Error: port 4000 in use","timestamp":"2026-01-05T10:00:03.000Z"}
{"type":"assistant","sessionId":"s-1","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"TodoWrite","input":{"todos":[{"content":"Free port 4000","status":"completed"},{"content":"Add a PORT variable","status":"pending"}]}}]},"timestamp":"2026-01-05T10:00:04.000Z"}
{"type":"user","sessionId":"s-1","message":{"role":"user","content":"<command-name>/clear</command-name>"},"timestamp":"2026-01-05T10:00:05.000Z"}
{"type":"user","isMeta":true,"sessionId":"s-1","message":{"role":"user","content":"Caveat: generated"},"timestamp":"2026-01-05T10:00:05.500Z"}
{"type":"user","sessionId":"s-1","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]},"timestamp":"2026-01-05T10:00:06.000Z"}
{"type":"user","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"sessionId":"s-1","gitBranch":"fix/port","message":{"role":"user","content":"This session is being continued. Summary: the port was taken."},"timestamp":"2026-01-05T11:00:00.000Z"}
{"type":"a-type-from-the-future","sessionId":"s-1"}
{"type":"user","sessionId":"s-1","message":{"role":"user","content":"thanks <system-reminder>ignore</system-reminder> now add the PORT variable"},"timestamp":"2026-01-05T11:00:01.000Z"}
{"type":"assistant","sessionId":"s-1","message":{"role":"assist"#;

    #[test]
    fn a_session_reads_as_prompts_calls_results_todos_and_summaries() {
        let (events, stats, session) = read(SESSION);
        assert_eq!(
            events,
            [
                EventKind::Prompt("why does the server not start?".into()),
                EventKind::AssistantText("Let me run it.".into()),
                EventKind::ToolCall {
                    id: "t1".into(),
                    name: "Bash".into(),
                    input: serde_json::json!({"command": "mix phx.server"})
                },
                EventKind::ToolResult {
                    id: "t1".into(),
                    is_error: true,
                    error: Some("port 4000 in use".into()),
                    output: None,
                },
                EventKind::Todos(vec![
                    Todo { content: "Free port 4000".into(), status: "completed".into() },
                    Todo { content: "Add a PORT variable".into(), status: "pending".into() },
                ]),
                EventKind::ToolCall {
                    id: "t2".into(),
                    name: "TodoWrite".into(),
                    input: serde_json::json!({"todos": [
                        {"content": "Free port 4000", "status": "completed"},
                        {"content": "Add a PORT variable", "status": "pending"}
                    ]})
                },
                EventKind::CompactSummary("This session is being continued. Summary: the port was taken.".into()),
                EventKind::Prompt("thanks  now add the PORT variable".into()),
            ]
        );
        // The truncated last line is invalid (and not counted in the bytes a later read resumes
        // from); the unknown type is counted, not an error.
        let complete = SESSION.rfind('\n').unwrap() as u64 + 1;
        assert_eq!(stats, ReadStats { lines: 13, invalid: 1, oversized: 0, unknown: 1, bytes: complete, cut: false });
        assert_eq!(session.session_id.as_deref(), Some("s-1"));
        assert_eq!(session.cwd.as_deref(), Some("/home/u/app"));
        assert_eq!(session.git_branch.as_deref(), Some("fix/port"));
    }

    #[test]
    fn long_lines_and_garbage_are_skipped_and_counted() {
        let long = format!(
            r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"x","content":"{}"}}]}}}}"#,
            "a".repeat(5000)
        );
        let text = format!("not json\n\n{long}\n[1,2]\n{}\n", r#"{"type":"user","message":{"content":"hello"}}"#);
        let (events, stats, _) = read(&text);
        assert_eq!(events, [EventKind::Prompt("hello".into())]);
        assert_eq!(
            stats,
            ReadStats { lines: 5, invalid: 2, oversized: 1, unknown: 0, bytes: text.len() as u64, cut: false }
        );
    }

    #[test]
    fn timestamps_come_with_events() {
        let mut r = TranscriptReader::new(std::io::Cursor::new(SESSION.as_bytes()));
        assert_eq!(r.next().unwrap().timestamp.as_deref(), Some("2026-01-05T10:00:00.000Z"));
    }
}
