//! `engine mcp`: the real binary driven by a client nobody here wrote — the official MCP Python SDK
//! (`mcp` from PyPI, installed once into a cache directory; a machine where it cannot be installed
//! fails the test, naming what is missing) — and by raw bytes no client would send: malformed,
//! oversized and unknown messages, a cancellation that overtakes a queued call, a project whose
//! index appears and changes while the server runs. Every byte the server writes to stdout must be
//! a JSON-RPC message.

use crate::common::{bin, exit_code, root};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The client `scripts/test-clients.sh` installs: pinned, so a new SDK release cannot change what
/// is tested.
const MCP_CLIENT: &str = "mcp==2.3.0";

fn imports_mcp(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import mcp, anyio"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Python with the MCP SDK: `ENGINE_MCP_PYTHON`, which `scripts/test.sh` sets from
/// `scripts/test-clients.sh` (the pinned client, installed once into a cache).
fn python_with_mcp() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let p = std::env::var_os("ENGINE_MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
            panic!("ENGINE_MCP_PYTHON is not set: run the suite with scripts/test.sh, or eval \"$(scripts/test-clients.sh)\" first")
        });
        assert!(imports_mcp(&p), "ENGINE_MCP_PYTHON={} cannot import {MCP_CLIENT}", p.display());
        p
    })
}

/// A fresh copy of sample/, indexed: the tools may change it.
fn indexed_sample() -> tempfile::TempDir {
    let dir = crate::common::sample_copy();
    index(dir.path());
    dir
}

fn index(project: &Path) {
    let (code, _, err) = crate::common::engine(&["index", project.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
}

/// Runs a command with a time limit; returns (exit code, stdout, stderr).
fn output_within(cmd: &mut Command, limit: Duration) -> (i32, String, String) {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let (out, err) = (drain(Box::new(child.stdout.take().unwrap())), drain(Box::new(child.stderr.take().unwrap())));
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {limit:?}; stderr: {}", err.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (exit_code(status), out.join().unwrap(), err.join().unwrap())
}

/// Lines of a file, each parsed as a JSON-RPC 2.0 response (the server sends no requests or
/// notifications); panics naming the first line that is anything else.
fn responses(path: &Path) -> Vec<Value> {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.is_empty() || text.ends_with(b"\n"), "{}: a message without its newline", path.display());
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: Value = serde_json::from_slice(l)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {}", String::from_utf8_lossy(l)));
            check_response(&v);
            v
        })
        .collect()
}

fn check_response(v: &Value) {
    let o = v.as_object().unwrap_or_else(|| panic!("not a JSON-RPC object: {v}"));
    assert_eq!(o.get("jsonrpc"), Some(&json!("2.0")), "{v}");
    assert!(o.contains_key("id"), "{v}");
    assert!(o.contains_key("result") != o.contains_key("error"), "result xor error: {v}");
    if let Some(e) = o.get("error") {
        assert!(e["code"].is_i64() && e["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    }
}

#[test]
fn the_official_python_client_drives_every_tool_and_the_server_survives_what_it_sends() {
    let python = python_with_mcp();
    let project = indexed_sample();
    let logs = tempfile::tempdir().unwrap();
    let script = root().join("tests/mcp_client.py");
    let (code, out, err) = output_within(
        Command::new(python)
            .arg(&script)
            .arg(bin())
            .arg(project.path())
            .arg(logs.path())
            .env_remove("ENGINE_MODELS_DIR"),
        Duration::from_secs(300),
    );
    assert_eq!(code, 0, "the client script failed:\n{err}");
    let r: Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("report is not JSON ({e}): {out}\n{err}"));
    // Not an error, and (the SDK checked) its structured content conforms to the outputSchema.
    let ok = |k: &str| {
        assert_eq!(r[k]["error"], json!(false), "{k}: {}", r[k]);
        &r[k]
    };
    let tool_error = |k: &str, says: &str| {
        assert_eq!(r[k]["error"], json!(true), "{k}: {}", r[k]);
        let text = r[k]["text"].as_str().unwrap();
        assert!(text.contains(says), "{k}: {text:?} should say {says:?}");
    };
    let results = |k: &str| ok(k)["structured"]["results"].as_array().unwrap().clone();

    // The handshake: the SDK probed server/discover, was told no, and fell back to initialize.
    assert_eq!(r["protocol_version"], "2025-11-25");
    assert_eq!(r["legacy_protocol_version"], "2025-11-25");
    assert_eq!(r["server_name"], "engine");
    assert!(r["tools_capability"].as_bool().unwrap() && r["instructions"].as_str().unwrap().contains("search"));
    assert_eq!(r["legacy_ping"], json!(true));

    // The tool list: five tools, short descriptions, object schemas with the required arguments,
    // and an output schema each, strict (a field it does not declare breaks it).
    let tools = r["tools"].as_object().unwrap();
    assert_eq!(tools.keys().collect::<Vec<_>>(), ["search", "get", "remember", "forget", "recent"]);
    for (name, t) in tools {
        let d = t["description"].as_str().unwrap();
        assert!(!d.is_empty() && d.len() <= 400, "{name}: {} characters", d.len());
        assert_eq!(t["schema"]["type"], "object", "{name}");
        assert_eq!(t["schema"]["additionalProperties"], json!(false), "{name}");
        assert_eq!(t["output_schema"]["type"], "object", "{name}");
        assert_eq!(t["output_schema"]["additionalProperties"], json!(false), "{name}");
    }
    assert_eq!(tools["search"]["schema"]["properties"]["timings"]["type"], "boolean");
    assert_eq!(tools["search"]["output_schema"]["required"], json!(["results", "next"]));
    // The SDK's check is on: it passed the real answer and refused the same one tampered with.
    assert_eq!((&r["schema_accepts_real"], &r["schema_rejects_tampered"]), (&json!(true), &json!(true)));
    assert_eq!(tools["search"]["schema"]["required"], json!(["query"]));
    assert_eq!(tools["remember"]["schema"]["required"], json!(["title", "content"]));
    assert_eq!(tools["search"]["annotations"]["readOnlyHint"], json!(true));
    assert_eq!(tools["forget"]["annotations"]["destructiveHint"], json!(true));

    // search: compact hits, the decision first, the next step; no echo of the arguments, no
    // timings unless asked for; filters hold.
    let hits = results("search");
    assert_eq!(hits.len(), 3);
    assert!(
        hits[0]["id"].as_str().unwrap().starts_with(".claude/memory/decision-session-store.json#"),
        "{}",
        r["search"]
    );
    assert_eq!((&hits[0]["confidence"], &hits[0]["category"]), (&json!("high"), &json!("decision")));
    for h in &hits {
        for key in ["id", "title", "summary", "confidence"] {
            assert!(h[key].as_str().is_some_and(|s| !s.is_empty()), "{key} in {h}");
        }
        let lines = h["lines"].as_array().unwrap();
        assert!(lines.len() == 2 && lines[0].as_u64() <= lines[1].as_u64(), "{h}");
        assert!(h["summary"].as_str().unwrap().chars().count() <= 161, "{h}");
    }
    let answered = &ok("search")["structured"];
    let keys: Vec<&String> = answered.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["results", "next"], "no warning on an answerable query, nothing unasked: {answered}");
    assert!(answered["next"].as_str().unwrap().contains("get with an id"), "{answered}");
    let text = ok("search")["text"].as_str().unwrap();
    assert!(text.contains(".claude/memory/decision-session-store.json#") && text.contains("get with an id"), "{text}");
    let filtered = results("search_filtered");
    assert!(!filtered.is_empty());
    for h in &filtered {
        let id = h["id"].as_str().unwrap();
        let path = id.rsplit_once('#').unwrap().0;
        assert!(path.starts_with("src/") && !path.ends_with(".md") && h.get("category").is_none(), "{filtered:?}");
    }
    // Docs are the prose kinds: no code and no memory record, and the project's docs are found.
    let docs = results("search_docs");
    assert!(!docs.is_empty());
    for h in &docs {
        let path = h["id"].as_str().unwrap().rsplit_once('#').unwrap().0;
        assert!(path.ends_with(".md") && h.get("category").is_none(), "{docs:?}");
    }
    assert!(docs.iter().any(|h| h["id"].as_str().unwrap().starts_with("docs/architecture.md#")), "{docs:?}");
    // A question the project does not answer: the warning is in the structured content the model
    // reads, before the hits, and in the text.
    let unanswerable = ok("search_unanswerable");
    let warning =
        unanswerable["structured"]["warning"].as_str().unwrap_or_else(|| panic!("no warning: {unanswerable}"));
    assert!(warning.contains("Nothing here seems to answer this") && warning.contains("rephrase"), "{warning}");
    assert!(!unanswerable["structured"]["results"].as_array().unwrap().is_empty());
    assert!(unanswerable["text"].as_str().unwrap().starts_with(warning), "{unanswerable}");
    let none = &ok("search_no_hits")["structured"];
    assert_eq!(none["results"], json!([]));
    assert!(none.get("warning").is_none(), "{none}");
    assert_eq!(none["next"], "Try other words, or drop the kind/path filter.", "already bm25: {none}");
    let timed = &ok("search_timings")["structured"];
    assert!(timed["timings_ms"]["total"].as_f64().is_some_and(|ms| ms > 0.0), "{timed}");
    tool_error("search_no_query", "needs a query");
    tool_error("search_bad_k", "k must be an integer 1 to 50");
    tool_error("search_unknown_argument", "no argument \"top_k\"");
    tool_error("search_long_query", "at most 2000");

    // get: by id, with neighbours, by lines, within a budget; nothing outside the project.
    assert!(ok("get_id")["text"].as_str().unwrap().contains("Memcached evicted"), "{}", r["get_id"]);
    let chunks = ok("get_neighbours")["structured"]["chunks"].as_array().unwrap().clone();
    let roles: Vec<&str> = chunks.iter().map(|c| c["role"].as_str().unwrap_or("asked for")).collect();
    assert_eq!(roles, ["before", "asked for", "after"], "{chunks:?}");
    assert_eq!(chunks[1]["id"], "src/session_store.rs#21");
    let lines = &ok("get_lines")["structured"]["chunks"][0];
    assert!(lines["id"].as_str().unwrap().starts_with("src/quota.ts#"), "{lines}");
    assert!(lines["lines"][0].as_u64().unwrap() <= 8 && lines["lines"][1].as_u64().unwrap() >= 3, "{lines}");
    assert!(lines["text"].as_str().unwrap().contains("interface Quota"), "{lines}");
    // Within 100 tokens: part of the runbook, and a note saying what was left out and how to have it.
    let budget = &ok("get_budget")["structured"];
    let shown: usize = budget["chunks"].as_array().unwrap().iter().map(|c| c["text"].as_str().unwrap().len()).sum();
    let whole = std::fs::read_to_string(project.path().join("docs/runbook.md")).unwrap().len();
    assert!(shown > 0 && shown < whole / 2, "{shown} of {whole} bytes: {budget}");
    let note = budget["note"].as_str().unwrap_or_default();
    assert!(note.contains("max_tokens = 100") && (note.contains("left out") || note.contains("raise it")), "{budget}");
    assert!(ok("get_budget")["text"].as_str().unwrap().contains(note));
    tool_error("get_outside", "outside the project");
    tool_error("get_absolute_outside", "outside the project");
    tool_error("get_not_indexed", "not in the index");
    tool_error("get_stale_id", "search again");

    // remember → searchable at once; recent lists it; forget removes it from disk and index.
    let saved = &ok("remember")["structured"];
    assert_eq!((saved["status"].as_str(), saved["indexed"].as_bool()), (Some("written"), Some(true)), "{saved}");
    let id = saved["id"].as_str().unwrap().to_string();
    let file = project.path().join(saved["path"].as_str().unwrap());
    let record = &r["remember_file"];
    assert_eq!((record["category"].as_str(), record["source"].as_str()), (Some("decision"), Some("mcp")));
    assert_eq!(record["tags"], json!(["thumbnails", "images"]));
    ok("remember_again");
    assert_eq!(results("search_remembered")[0]["title"], "Thumbnails are WebP since November");
    assert!(ok("recent")["text"].as_str().unwrap().starts_with(&id), "{}", r["recent"]);
    let decisions = ok("recent_decisions")["structured"]["records"].as_array().unwrap().clone();
    assert!(decisions.len() >= 2 && decisions.iter().all(|d| d["category"] == "decision"), "{decisions:?}");
    tool_error("remember_secret", "mostly a secret");
    tool_error("remember_bad_category", "lowercase letters");
    let memory = std::fs::read_dir(project.path().join(".claude/memory")).unwrap();
    for f in memory {
        assert!(!std::fs::read_to_string(f.unwrap().path()).unwrap().contains("ghp_"), "a secret reached the disk");
    }
    ok("forget");
    assert!(!file.exists());
    tool_error("forget_again", "no memory record");
    assert!(!ok("recent_after_forget")["text"].as_str().unwrap().contains(&id));
    assert!(results("search_after_forget").iter().all(|h| h["title"] != "Thumbnails are WebP since November"));

    // Protocol errors: an unknown tool, a request over the size limit (answered under its own id,
    // so the SDK's call failed at once); the server answered everything after them.
    assert_eq!(r["unknown_tool"]["protocol_error"], -32602, "{}", r["unknown_tool"]);
    assert!(r["unknown_tool"]["message"].as_str().unwrap().contains("search, get, remember, forget, recent"));
    assert_eq!(r["oversized"]["protocol_error"], -32600, "{}", r["oversized"]);
    ok("after_all");
    ok("legacy_search");

    // The cancelled call (sent while the model was still loading) was dropped, never answered.
    assert_eq!(r["cancel_finished"], json!(false));
    let sent: Vec<Value> = std::fs::read_to_string(logs.path().join("auto/in.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cancelled = sent
        .iter()
        .find(|m| m["params"]["arguments"]["query"] == "cancelled while queued")
        .map(|m| m["id"].clone())
        .expect("the cancelled call was sent");
    assert!(sent.iter().any(|m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == cancelled));
    // Nothing but responses on stdout, one per request but the cancelled one.
    for session in ["auto", "legacy"] {
        let answered = responses(&logs.path().join(session).join("out.log"));
        let sent = std::fs::read_to_string(logs.path().join(session).join("in.log")).unwrap();
        let requests = sent.lines().filter(|l| l.contains("\"id\"") && l.contains("\"method\"")).count();
        let dropped = usize::from(session == "auto");
        assert_eq!(answered.len(), requests - dropped, "{session}: {requests} requests");
        if session == "auto" {
            assert!(answered.iter().all(|m| m["id"] != cancelled), "the cancelled call was answered");
        }
    }
}

/// `engine mcp` with raw pipes: what a client wrote, what came back, line by line.
pub(crate) struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
}

impl Raw {
    pub(crate) fn start(cwd: &Path, args: &[&str]) -> Raw {
        Raw::start_with(cwd, args, None)
    }

    /// With `ENGINE_MODELS_DIR` set to `models`; initialized, as a client does first.
    fn start_with(cwd: &Path, args: &[&str], models: Option<&Path>) -> Raw {
        let mut raw = Raw::uninitialized(cwd, args, models);
        raw.send(json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}));
        let got = raw.until_id(&json!("init"));
        assert_eq!(got.len(), 1, "{got:?}");
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    /// A server nothing was sent to yet.
    fn uninitialized(cwd: &Path, args: &[&str], models: Option<&Path>) -> Raw {
        let mut cmd = Command::new(bin());
        match models {
            Some(m) => cmd.env("ENGINE_MODELS_DIR", m),
            None => cmd.env_remove("ENGINE_MODELS_DIR"),
        };
        let mut child = cmd
            .arg("mcp")
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Raw { stdin: child.stdin.take(), child, lines }
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.as_mut().unwrap().write_all(bytes).unwrap();
        self.stdin.as_mut().unwrap().flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_bytes(format!("{message}\n").as_bytes());
    }

    /// The next message: a whole line, valid JSON-RPC.
    fn recv(&self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(60)).expect("an answer within a minute");
        assert!(line.ends_with(b"\n"), "a message without its newline");
        let v: Value = serde_json::from_slice(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {}", String::from_utf8_lossy(&line)));
        check_response(&v);
        v
    }

    /// Messages until the one answering `id`, which is returned last.
    fn until(&self, id: i64) -> Vec<Value> {
        self.until_id(&json!(id))
    }

    fn until_id(&self, id: &Value) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let v = self.recv();
            let done = v["id"] == *id;
            got.push(v);
            if done {
                return got;
            }
        }
    }

    pub(crate) fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}));
        let mut got = self.until(id);
        let v = got.pop().unwrap();
        assert!(got.is_empty(), "unexpected messages: {got:?}");
        v["result"].clone()
    }

    /// Closes stdin; the server must exit 0, with nothing more on stdout.
    pub(crate) fn finish(mut self) {
        drop(self.stdin.take());
        let started = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "the server did not exit after stdin closed");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(exit_code(status), 0);
        let rest: Vec<Vec<u8>> = self.lines.try_iter().collect();
        assert!(rest.is_empty(), "more output: {rest:?}");
    }
}

pub(crate) fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn malformed_oversized_and_unknown_messages_get_errors_and_the_server_carries_on() {
    let index = crate::common::sample_index();
    let mut s = Raw::start(&std::env::temp_dir(), &["--index", index.to_str().unwrap()]);
    let huge = "a".repeat(5 << 20);
    let lines: Vec<Vec<u8>> = vec![
        b"{not json".to_vec(),
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
        br#""just a string""#.to_vec(),
        br#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":3}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":4,"method":"resources/list"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":[1]}}"#.to_vec(),
        format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{huge}"}}}}}}"#).into_bytes(),
        format!(r#"{{"method":"tools/call","params":{{"q":"{huge}"}},"id":8}}"#).into_bytes(),
        b"\xff\xfe{}".to_vec(),
        br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":99,"result":{}}"#.to_vec(),
        b"   ".to_vec(),
        br#"{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"search","arguments":{"query":"redis sessions","k":2}}}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#.to_vec(),
    ];
    for l in &lines {
        s.send_bytes(&[l.as_slice(), b"\n"].concat());
    }
    let mut got = Vec::new();
    while !got.iter().any(|m: &Value| m["id"] == "x-1") || !got.iter().any(|m: &Value| m["id"] == 10) {
        got.push(s.recv());
    }
    let error = |id: Value| -> i64 {
        let m = got
            .iter()
            .find(|m| m["id"] == id && m.get("error").is_some())
            .unwrap_or_else(|| panic!("no error for {id}: {got:?}"));
        m["error"]["code"].as_i64().unwrap()
    };
    let nulls: Vec<i64> =
        got.iter().filter(|m| m["id"].is_null()).map(|m| m["error"]["code"].as_i64().unwrap()).collect();
    // Not JSON, a batch, a string, an id of null, an oversized message whose id comes too late
    // to be read, invalid UTF-8.
    assert_eq!(nulls, [-32700, -32600, -32600, -32600, -32600, -32700], "{got:?}");
    assert_eq!(error(json!(2)), -32600);
    assert_eq!(error(json!(3)), -32600);
    assert_eq!(error(json!(4)), -32601);
    assert_eq!(error(json!(5)), -32602);
    assert_eq!(error(json!(6)), -32602);
    assert_eq!(error(json!(7)), -32600, "oversized, answered under its own id");
    let search = got.iter().find(|m| m["id"] == "x-1").unwrap();
    assert_eq!(search["result"]["isError"], json!(false), "{search}");
    assert!(text_of(&search["result"]).contains("Redis"), "{search}");
    assert_eq!(got.iter().find(|m| m["id"] == 10).unwrap()["result"], json!({}));
    assert_eq!(got.len(), 14, "one answer per request, none for notifications and responses: {got:?}");
    s.finish();
}

#[test]
fn a_call_cancelled_while_queued_gets_no_answer_and_the_next_one_does() {
    let index = crate::common::sample_index();
    let mut s = Raw::start(&std::env::temp_dir(), &["--index", index.to_str().unwrap()]);
    // All at once, while the server still loads the model: the first search is queued when its
    // cancellation arrives.
    let call = |id: i64, q: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "search", "arguments": {"query": q}}});
    let batch = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(2, "redis sessions"),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "changed my mind"}}),
        call(3, "upload quota"),
        // Cancelling what is not running (unknown, or already answered) changes nothing.
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}}),
    ];
    s.send_bytes(batch.iter().map(|m| format!("{m}\n")).collect::<String>().as_bytes());
    let got = s.until(3);
    assert_eq!(got[0]["result"]["protocolVersion"], "2025-06-18", "the version the client asked for");
    assert_eq!(got.len(), 2, "no answer for the cancelled call: {got:?}");
    assert!(text_of(&got[1]["result"]).contains("quota"), "{}", got[1]);
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}));
    let after = s.call(4, "search", json!({"query": "redis sessions", "k": 1}));
    assert!(text_of(&after).contains("Redis"), "{after}");
    s.finish();
}

#[test]
fn a_client_of_an_older_revision_is_offered_one_that_has_output_schemas() {
    // outputSchema and structuredContent came with 2025-06-18: a client asking for an older
    // revision is answered with the newest this server speaks (the client then goes on or leaves),
    // never with the revision it asked for.
    let index = crate::common::sample_index();
    for (asked, agreed) in [
        ("2025-03-26", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
    ] {
        let mut s = Raw::uninitialized(&std::env::temp_dir(), &["--index", index.to_str().unwrap()], None);
        s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}));
        s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        let got = s.until(2);
        assert_eq!(got[0]["result"]["protocolVersion"], agreed, "asked for {asked}");
        for tool in got[1]["result"]["tools"].as_array().unwrap() {
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        }
        s.finish();
    }
}

#[test]
fn an_index_that_appears_or_changes_while_the_server_runs_is_picked_up() {
    let project = crate::common::sample_copy();
    // A project: a git work tree, so memory may be written before it has an index.
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let mut s = Raw::start(project.path(), &[]);
    let none = s.call(1, "search", json!({"query": "sessions"}));
    assert_eq!(none["isError"], json!(true));
    assert!(text_of(&none).contains("no index") && text_of(&none).contains("engine index"), "{none}");
    // Memory works without an index; the record waits for the first index run.
    let saved = s.call(2, "remember", json!({"title": "Zebra releases ship on Thursdays", "content": "Releases named after animals ship on Thursdays after the freeze.", "category": "convention"}));
    assert_eq!(saved["isError"], json!(false), "{saved}");
    assert!(text_of(&saved).contains("no index yet"), "{saved}");
    index(project.path());
    let found = s.call(3, "search", json!({"query": "when do zebra releases ship?", "k": 1}));
    assert!(text_of(&found).contains("Zebra releases ship on Thursdays"), "{found}");
    // A new generation (a file added and indexed by another process) is searched at once.
    std::fs::write(project.path().join("docs/okapi.md"), "# Okapi\n\nThe okapi cache warms every morning at six.\n")
        .unwrap();
    index(project.path());
    let fresh = s.call(4, "search", json!({"query": "okapi cache warming", "k": 1}));
    assert!(text_of(&fresh).contains("docs/okapi.md"), "{fresh}");
    let got = s.call(5, "get", json!({"path": "docs/okapi.md"}));
    assert!(text_of(&got).contains("warms every morning"), "{got}");
    // A record by the id the context names it with (record="…").
    let id = saved["structuredContent"]["id"].as_str().unwrap();
    let got = s.call(6, "get", json!({"id": id}));
    assert!(text_of(&got).contains("after the freeze"), "{got}");
    let missing = s.call(7, "get", json!({"id": "0123456789ab"}));
    assert!(missing["isError"] == json!(true) && text_of(&missing).contains("no memory record"), "{missing}");
    s.finish();
}

#[test]
fn ids_reach_the_model_cleaned_of_secrets_and_control_characters_and_still_get_their_chunk() {
    // File names are the project's text too: the id a hit shows the model (in the structured
    // result and the text) is redacted and stripped like the rest, and get still finds the chunk.
    let project = crate::common::sample_copy();
    let token = "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVb";
    std::fs::write(project.path().join(format!("docs/{token}.md")), "# Okapi\n\nThe okapi cache warms at six.\n")
        .unwrap();
    std::fs::write(project.path().join("docs/zebra\u{202E}dm.txt"), "The zebra queue drains every night.\n").unwrap();
    index(project.path());
    let mut s = Raw::start(project.path(), &[]);
    for (n, (query, file)) in
        [("okapi cache warming", "okapi"), ("zebra queue draining", "zebra")].into_iter().enumerate()
    {
        let found = s.call(2 * n as i64 + 1, "search", json!({"query": query, "k": 1, "mode": "bm25"}));
        let id = found["structuredContent"]["results"][0]["id"].as_str().unwrap_or_default().to_string();
        let everything = found.to_string();
        assert!(!everything.contains("ghp_Zx9") && !everything.contains('\u{202E}'), "{file}: {everything}");
        assert!(id.starts_with("docs/") && (id.contains("[redacted]") || id.starts_with("docs/zebradm.txt#")), "{id}");
        assert!(text_of(&found).contains(&id), "{found}");
        let got = s.call(2 * n as i64 + 2, "get", json!({"id": id}));
        assert_eq!(got["isError"], json!(false), "{got}");
        assert!(got["structuredContent"]["chunks"][0]["text"].as_str().unwrap().contains(file), "{got}");
        assert!(!got.to_string().contains("ghp_Zx9"), "{got}");
    }
    s.finish();
}

#[test]
fn without_a_model_search_answers_from_bm25_and_says_so_and_memory_is_still_saved() {
    let project = indexed_sample();
    let broken = crate::common::broken_models();
    let mut s = Raw::start_with(project.path(), &[], Some(broken.path()));
    let found = s.call(1, "search", json!({"query": "why did we move sessions to redis?", "k": 2}));
    assert_eq!(found["isError"], json!(false), "{found}");
    assert!(text_of(&found).contains("BM25 only") && text_of(&found).contains("Redis"), "{found}");
    let note = found["structuredContent"]["note"].as_str().unwrap_or_default();
    assert!(note.starts_with("BM25 only"), "the structured result says so too: {found}");
    let vector = s.call(2, "search", json!({"query": "sessions", "mode": "vector"}));
    assert!(text_of(&vector).contains("BM25 only"), "{vector}");
    let saved =
        s.call(3, "remember", json!({"title": "Backups run at two", "content": "Nightly backups start at 02:00 UTC."}));
    assert_eq!(saved["isError"], json!(false), "{saved}");
    assert!(text_of(&saved).contains("no embedding model"), "{saved}");
    assert!(std::fs::read_dir(project.path().join(".claude/memory")).unwrap().count() == 4, "the record is on disk");
    s.finish();
}

#[test]
fn install_and_uninstall_merge_into_claude_code_configuration_and_restore_it() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // A project install runs `engine` from PATH: this binary's directory comes first.
    let path = format!("{}:/usr/bin:/bin", bin().parent().unwrap().display());
    let mcp = |args: &[&str], cwd: &Path| {
        let mut cmd = Command::new(bin());
        let out =
            cmd.arg("mcp").args(args).current_dir(cwd).env("HOME", home.path()).env("PATH", &path).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Project scope: .mcp.json, created, then removed again.
    let file = project.path().join(".mcp.json");
    assert!(mcp(&["install"], project.path()).contains("added"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["engine"]["command"], "engine");
    assert_eq!(v["mcpServers"]["engine"]["args"], json!(["mcp"]));
    assert!(mcp(&["install", "--project"], project.path()).contains("already installed"));
    mcp(&["uninstall"], project.path());
    assert!(!file.exists());
    // User scope: ~/.claude.json keeps every other key and server, and comes back byte for byte.
    let user = home.path().join(".claude.json");
    let original = "{\n  \"numStartups\": 12,\n  \"mcpServers\": {\n    \"docs\": {\n      \"type\": \"stdio\",\n      \"command\": \"docs-server\",\n      \"args\": []\n    }\n  },\n  \"projects\": {\n    \"/p\": {\n      \"allowedTools\": []\n    }\n  }\n}\n";
    std::fs::write(&user, original).unwrap();
    assert!(mcp(&["install", "--user"], project.path()).contains("previous file kept"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&user).unwrap()).unwrap();
    assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), ["numStartups", "mcpServers", "projects"]);
    assert_eq!(v["mcpServers"]["docs"]["command"], "docs-server");
    assert_eq!(v["mcpServers"]["engine"]["args"], json!(["mcp"]));
    assert_eq!(v["mcpServers"]["engine"]["command"], bin().to_str().unwrap(), "the user's file names this binary");
    assert_eq!(std::fs::read_to_string(home.path().join(".claude.json.bak")).unwrap(), original);
    mcp(&["uninstall", "--user"], project.path());
    assert_eq!(std::fs::read_to_string(&user).unwrap(), original);
    assert!(mcp(&["uninstall", "--user"], project.path()).contains("no engine MCP server"));
}

#[test]
fn tools_wait_for_initialize_and_memory_tools_stay_in_a_project_of_ones_own() {
    // Before initialize: refused, whatever the call.
    let home = tempfile::tempdir().unwrap();
    let mut s = Raw::uninitialized(home.path(), &[], None);
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {"title": "t", "content": "c"}}}));
    s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let got = s.until(2);
    for m in &got {
        assert_eq!(m["error"]["code"], -32600, "{m}");
        assert!(m["error"]["message"].as_str().unwrap().contains("initialize first"), "{m}");
    }
    s.finish();
    // Started where no project is (a home directory, /): remember, recent and forget refuse and
    // write nothing.
    for dir in [home.path(), Path::new("/")] {
        let mut s = Raw::start(dir, &[]);
        let r = s.call(3, "remember", json!({"title": "Deploy", "content": "We deploy on Fridays."}));
        assert_eq!(r["isError"], true, "{r}");
        assert!(text_of(&r).contains("no project of yours"), "{r}");
        let r = s.call(4, "recent", json!({}));
        assert_eq!(r["isError"], true, "{r}");
        s.finish();
        assert!(!dir.join(".claude/memory").exists() || dir == Path::new("/"), "{}", dir.display());
    }
    assert!(!home.path().join(".claude").exists());
    // In a project: forget wants the whole id, tags a list.
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let mut s = Raw::start(project.path(), &[]);
    let r = s.call(5, "remember", json!({"title": "Deploy day", "content": "We deploy on Fridays.", "tags": "ops"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(text_of(&r).contains("tags must be a list of strings"), "{r}");
    let r = s.call(6, "remember", json!({"title": "Deploy day", "content": "We deploy on Fridays.", "tags": ["ops"]}));
    assert_eq!(r["isError"], false, "{r}");
    let id = r["structuredContent"]["id"].as_str().unwrap().to_string();
    let r = s.call(7, "forget", json!({"id": &id[..1]}));
    assert_eq!(r["isError"], true, "a one-character prefix forgets nothing: {r}");
    let r = s.call(8, "forget", json!({"id": id}));
    assert_eq!(r["isError"], false, "{r}");
    s.finish();
}
