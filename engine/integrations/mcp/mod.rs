//! `engine mcp`: the index and the project's memory as tools of the Model Context Protocol, served
//! over stdio to Claude Code or any MCP client: `search` (compact hits), `get` (a hit's full text,
//! with neighbouring chunks, within a token budget), `remember`, `forget` and `recent` (memory
//! records under `.claude/memory/`, indexed as they change).
//!
//! The protocol is JSON-RPC 2.0, one message per line, with the `initialize` handshake of MCP
//! 2025-06-18 and 2025-11-25 (the newer when the client offers another: the tools' output schemas
//! came with 2025-06-18, so an older revision is never agreed). It is written
//! here on serde_json rather than with the rmcp SDK, which for five tools would add an async
//! runtime and dozens of crates to the build (docs/guide.md, "MCP server").
//!
//! Threads: the main thread reads stdin and answers the handshake, pings and the tool list itself;
//! tool calls go, in order, to one worker thread that owns the [`Engine`](crate::Engine) (the model
//! is loaded once, in the background, while the client initializes), so a `notifications/cancelled`
//! can overtake a queued call: a cancelled call is dropped, or its answer withheld. The worker
//! picks up new index generations and `engine.toml` changes before each call, as `engine serve`
//! does. Stdout carries protocol messages and nothing else: the protocol writes to a duplicate of
//! the original stdout, and file descriptor 1 is pointed at stderr, where every log line goes, so
//! not even a library printing to stdout can corrupt the stream. A malformed, oversized (over
//! [`MAX_MESSAGE`] bytes) or unknown message gets a JSON-RPC error and the server carries on; a
//! failing tool returns an MCP tool error (`isError`) whose text says what to do instead; a panic
//! inside a tool is caught and reported the same way.

mod install;
mod results;
mod tools;

pub use install::{entry, install_at, plugin_config, target, uninstall_at, Target, SERVER_NAME};

use crate::error::Result;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// Protocol revisions of the `initialize` handshake this server speaks, newest first.
pub const PROTOCOL_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

/// The longest message read, in bytes; a longer line is skipped and answered with an error.
pub const MAX_MESSAGE: usize = 4 << 20;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

/// The protocol's side of stdout: a duplicate of the original descriptor, one message per write.
struct Out {
    file: Mutex<std::fs::File>,
}

impl Out {
    /// Takes stdout for the protocol and points descriptor 1 at stderr for everything else.
    fn take_stdout() -> Out {
        use std::os::fd::FromRawFd;
        // SAFETY: plain descriptor calls on the process's own standard streams; the duplicate is
        // owned by the File from here on.
        let fd = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
        if fd < 0 {
            // No spare descriptor: keep stdout as it is (logs go to stderr anyway).
            return Out { file: Mutex::new(unsafe { std::fs::File::from_raw_fd(libc::STDOUT_FILENO) }) };
        }
        unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) };
        Out { file: Mutex::new(unsafe { std::fs::File::from_raw_fd(fd) }) }
    }

    /// Writes one message as one line. A client that went away ends the server.
    fn send(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("a JSON value serializes");
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = file.write_all(&line).and_then(|_| file.flush()) {
            eprintln!("engine mcp: the client stopped reading ({e}); exiting");
            // SAFETY: _exit only ends the process (no ONNX Runtime destructors under live threads).
            unsafe { libc::_exit(0) }
        }
    }

    fn result(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&self, id: &Value, code: i64, message: impl Into<String>) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}}));
    }
}

/// One `tools/call` on its way to the worker.
struct Job {
    id: Value,
    name: String,
    arguments: Map<String, Value>,
}

/// Calls queued or running, and those of them the client cancelled (keyed by the id's JSON).
#[derive(Default)]
struct Calls {
    open: HashSet<String>,
    cancelled: HashSet<String>,
}

/// What the reading thread and the worker share.
struct Shared {
    out: Out,
    calls: Mutex<Calls>,
    /// The client has sent `initialize`: tools are listed and called only after it.
    initialized: std::sync::atomic::AtomicBool,
}

impl Shared {
    fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Serves MCP on stdin/stdout until stdin closes, then exits the process. `index`: the index to
/// serve (default: the nearest trusted `.engine/` above the working directory, looked for again
/// at each call until there is one).
pub fn serve(index: Option<&Path>) -> Result<()> {
    let cwd = std::env::current_dir().map_err(|e| crate::Error::io("reading the working directory", e))?;
    let index = index.map(std::path::absolute).transpose().map_err(|e| crate::Error::io("resolving --index", e))?;
    // A client that closes the pipe early is a write error to handle, not a signal that kills.
    // SAFETY: changes the disposition of one signal; no handler runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let shared = Arc::new(Shared { out: Out::take_stdout(), calls: Mutex::default(), initialized: false.into() });
    let (jobs, queue) = mpsc::channel::<Job>();
    let worker = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("mcp-tools".into())
            .spawn(move || work(&shared, tools::State::start(&cwd, index), queue))
            .map_err(|e| crate::Error::io("starting the tool thread", e))?
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        match read_message(&mut input, MAX_MESSAGE) {
            Ok(Message::Line(line)) => dispatch(&shared, &jobs, &line),
            Ok(Message::TooLong { head, len }) => {
                let id = leading_id(&head).unwrap_or(Value::Null);
                shared.out.error(
                    &id,
                    INVALID_REQUEST,
                    format!("message of {len} bytes is over the limit of {MAX_MESSAGE}; not read. Send less (a shorter query or record)"),
                );
            }
            Ok(Message::Eof) => break,
            Err(e) => {
                eprintln!("engine mcp: reading stdin: {e}");
                break;
            }
        }
    }
    // The client is gone: finish what was asked (a `remember` writes and indexes), then leave.
    drop(jobs);
    let _ = worker.join();
    // SAFETY: as in `Out::send`.
    unsafe { libc::_exit(0) }
}

/// Runs the queued tool calls in order.
fn work(shared: &Shared, mut state: tools::State, queue: mpsc::Receiver<Job>) {
    state.open_now();
    for job in queue {
        let key = job.id.to_string();
        if shared.calls().cancelled.contains(&key) {
            let mut calls = shared.calls();
            calls.cancelled.remove(&key);
            calls.open.remove(&key);
            continue;
        }
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| state.call(&job.name, &job.arguments)));
        let result = match outcome {
            Ok(r) => r,
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                eprintln!("engine mcp: {} panicked: {why}", job.name);
                state.reset();
                tools::Output::error(format!(
                    "internal error in {} ({why}); the index is reopened on the next call. Try again once; if it repeats, report it",
                    job.name
                ))
            }
        };
        let cancelled = {
            let mut calls = shared.calls();
            calls.open.remove(&key);
            calls.cancelled.remove(&key)
        };
        if !cancelled {
            shared.out.result(&job.id, result.to_json());
        }
    }
}

/// What one read from stdin gave.
enum Message {
    Line(Vec<u8>),
    /// A line over the limit, skipped: its first bytes and its length.
    TooLong {
        head: Vec<u8>,
        len: usize,
    },
    Eof,
}

/// Bytes of an oversized line kept to find its id.
const HEAD: usize = 64 << 10;

/// Reads one line of at most `max` bytes; a longer one is read to its end and thrown away, only
/// its head kept.
fn read_message(input: &mut impl BufRead, max: usize) -> std::io::Result<Message> {
    let mut line = Vec::new();
    let mut len = 0usize;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            // End of input; a last line without its newline still counts.
            return Ok(match len {
                0 => Message::Eof,
                _ if len > max => Message::TooLong { head: line, len },
                _ => Message::Line(line),
            });
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        len += chunk.len();
        if len <= max {
            line.extend_from_slice(chunk);
        } else if line.len() < HEAD {
            let room = HEAD - line.len();
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        } else {
            line.truncate(HEAD);
        }
        let used = newline.map_or(buf.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            return Ok(if len > max {
                line.truncate(HEAD);
                Message::TooLong { head: line, len }
            } else {
                Message::Line(line)
            });
        }
    }
}

/// Handles one line: a request is answered here or queued for the worker; a notification is
/// acted on; anything else gets the JSON-RPC error that names what was wrong.
fn dispatch(shared: &Shared, jobs: &mpsc::Sender<Job>, line: &[u8]) {
    let out = &shared.out;
    let text = line.trim_ascii();
    if text.is_empty() {
        return;
    }
    let message: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            let id = leading_id(text).unwrap_or(Value::Null);
            return out.error(&id, PARSE_ERROR, format!("not JSON ({e}); send one JSON-RPC 2.0 message per line"));
        }
    };
    let Value::Object(message) = message else {
        let why = if message.is_array() {
            "batches are not supported (MCP 2025-06-18 removed them); send one message per line"
        } else {
            "a JSON-RPC message is an object"
        };
        return out.error(&Value::Null, INVALID_REQUEST, why);
    };
    let id = message.get("id").cloned();
    let good_id = id.as_ref().filter(|v| v.is_string() || v.is_i64() || v.is_u64()).cloned();
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return out.error(&good_id.unwrap_or(Value::Null), INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
    }
    let Some(method) = message.get("method") else {
        if message.contains_key("result") || message.contains_key("error") {
            return; // a response; this server sends no requests, so there is nothing to match it to
        }
        return out.error(&good_id.unwrap_or(Value::Null), INVALID_REQUEST, "a request needs a \"method\"");
    };
    let Some(method) = method.as_str() else {
        return out.error(&good_id.unwrap_or(Value::Null), INVALID_REQUEST, "\"method\" must be a string");
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    match (id, good_id) {
        (None, _) => notification(shared, method, &params),
        (Some(_), Some(id)) => request(shared, jobs, id, method, params),
        (Some(_), None) => out.error(&Value::Null, INVALID_REQUEST, "\"id\" must be a string or an integer"),
    }
}

fn notification(shared: &Shared, method: &str, params: &Value) {
    if method == "notifications/cancelled" {
        if let Some(id) = params.get("requestId") {
            let key = id.to_string();
            let mut calls = shared.calls();
            if calls.open.contains(&key) {
                calls.cancelled.insert(key);
            }
        }
    }
    // notifications/initialized and anything else: nothing to do.
}

fn request(shared: &Shared, jobs: &mpsc::Sender<Job>, id: Value, method: &str, params: Value) {
    let out = &shared.out;
    let initialized = shared.initialized.load(std::sync::atomic::Ordering::Acquire);
    match method {
        "tools/list" | "tools/call" if !initialized => {
            out.error(&id, INVALID_REQUEST, format!("{method} before initialize: send initialize first"))
        }
        "initialize" => {
            shared.initialized.store(true, std::sync::atomic::Ordering::Release);
            let asked = params.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
            let version = PROTOCOL_VERSIONS.iter().find(|v| **v == asked).unwrap_or(&PROTOCOL_VERSIONS[0]);
            out.result(
                &id,
                json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": SERVER_NAME, "title": "engine: project search and memory", "version": env!("CARGO_PKG_VERSION")},
                    "instructions": tools::INSTRUCTIONS,
                }),
            );
        }
        "ping" => out.result(&id, json!({})),
        "tools/list" => out.result(&id, json!({"tools": tools::list()})),
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return out.error(&id, INVALID_PARAMS, "tools/call needs params.name, the tool to call");
            };
            if !tools::NAMES.contains(&name) {
                return out.error(
                    &id,
                    INVALID_PARAMS,
                    format!("unknown tool {name:?}; the tools are {}", tools::NAMES.join(", ")),
                );
            }
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(a)) => a.clone(),
                Some(_) => return out.error(&id, INVALID_PARAMS, "params.arguments must be an object"),
            };
            shared.calls().open.insert(id.to_string());
            if let Err(mpsc::SendError(job)) = jobs.send(Job { id, name: name.to_string(), arguments }) {
                shared.calls().open.remove(&job.id.to_string());
                out.error(&job.id, INTERNAL_ERROR, "the tool thread stopped; restart the server");
            }
        }
        "server/discover" => out.error(
            &id,
            METHOD_NOT_FOUND,
            format!(
                "server/discover is not supported; use initialize with protocol {}",
                PROTOCOL_VERSIONS.join(" or ")
            ),
        ),
        other => out.error(
            &id,
            METHOD_NOT_FOUND,
            format!("method {other:?} not found: this server offers initialize, ping, tools/list and tools/call"),
        ),
    }
}

/// The `"id"` of a JSON object whose text may be cut short or malformed further on: an integer
/// or a string among its first members. Lets an oversized or broken request still get its error
/// under its own id, so the client's call fails instead of waiting forever.
fn leading_id(head: &[u8]) -> Option<Value> {
    let b = head;
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        let (key, after) = string_at(b, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value_end(b, i)?;
        if key == b"id" {
            let v: Value = serde_json::from_slice(&b[i..end]).ok()?;
            return (v.is_string() || v.is_i64() || v.is_u64()).then_some(v);
        }
        i = skip_ws(b, end);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The string starting at `i` (its raw content) and the index after its closing quote.
fn string_at(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some((&b[i + 1..j], j + 1)),
            _ => j += 1,
        }
    }
    None
}

/// The index just after the JSON value starting at `i`, if it ends within `b`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_at(b, i).map(|(_, end)| end),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_at(b, j)?.1;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let end = b[i..].iter().position(|c| matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace())?;
            Some(i + end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_a_cut_or_broken_request_is_found_when_it_comes_early() {
        let id = |s: &str| leading_id(s.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"query":"aaa"#),
            Some(json!(7))
        );
        assert_eq!(id(r#" { "id" : "abc" , "method": "x""#), Some(json!("abc")));
        assert_eq!(id(r#"{"params":{"id":3,"q":["}",{"a":1}]},"id":4,"method"#), Some(json!(4)));
        assert_eq!(id(r#"{"method":"tools/call","params":{"query":"cut"#), None);
        assert_eq!(id(r#"{"id":null}"#), None);
        assert_eq!(id(r#"{"id":1.5}"#), None);
        assert_eq!(id("[1,2]"), None);
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":12"#), None, "a number cut at the end may be longer");
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_whole_and_the_next_one_read() {
        let big = format!("{{\"id\":5,\"x\":\"{}\"}}\n{{\"id\":6}}\n", "a".repeat(300));
        let mut input = std::io::BufReader::with_capacity(16, big.as_bytes());
        match read_message(&mut input, 100).unwrap() {
            Message::TooLong { head, len } => {
                assert_eq!(len, 315);
                assert_eq!(leading_id(&head), Some(json!(5)));
            }
            _ => panic!("expected an oversized line"),
        }
        assert!(matches!(read_message(&mut input, 100).unwrap(), Message::Line(l) if l == b"{\"id\":6}"));
        assert!(matches!(read_message(&mut input, 100).unwrap(), Message::Eof));
        let mut last = std::io::BufReader::new(&b"{\"id\":1}"[..]);
        assert!(matches!(read_message(&mut last, 100).unwrap(), Message::Line(_)), "no final newline");
    }
}
