//! The Milvus backend against a real Milvus Lite server (`ENGINE_MILVUS_LITE`, installed pinned by
//! `scripts/test.sh` through `scripts/test-clients.sh`): `engine push` of sample/ and of the code
//! golden set's corpus, search through the server giving the local engine's answers, incremental
//! pushes, a server stopped mid-run, and bad URLs. Each test starts its own server on a free
//! loopback port in a temporary data directory and stops it by PID, also when the test panics.

use crate::common::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A Milvus Lite server of this test's: killed by PID when dropped.
struct Server {
    child: Child,
    port: u16,
    _data: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let exe = std::env::var_os("ENGINE_MILVUS_LITE").map(PathBuf::from).unwrap_or_else(|| {
            panic!("ENGINE_MILVUS_LITE is not set: run the suite with scripts/test.sh, or eval \"$(scripts/test-clients.sh)\" first")
        });
        assert!(exe.is_file(), "ENGINE_MILVUS_LITE={} is not a file: run scripts/test-clients.sh", exe.display());
        let data = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = std::fs::File::create(data.path().join("server.log")).unwrap();
        let child = Command::new(&exe)
            .args(["server", "--data-dir"])
            .arg(data.path().join("db"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut server = Server { child, port, _data: data };
        server.wait_until_listening();
        server
    }

    /// Polls the port until the server accepts connections; a server that exits first fails
    /// the test with its log.
    fn wait_until_listening(&mut self) {
        for _ in 0..1200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                let log = std::fs::read_to_string(self._data.path().join("server.log")).unwrap_or_default();
                panic!("milvus-lite exited ({status}) before listening:\n{log}");
            }
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("milvus-lite did not listen on port {} within two minutes", self.port);
    }

    fn url(&self, collection: &str) -> String {
        format!("milvus://127.0.0.1:{}/{collection}", self.port)
    }

    fn stop(&mut self) {
        // By PID: the child's own, never a name.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `engine push URL --index INDEX --json`: the report.
fn push(url: &str, index: &Path) -> serde_json::Value {
    push_with(url, index, &[])
}

fn push_with(url: &str, index: &Path, flags: &[&str]) -> serde_json::Value {
    let mut args = vec!["push", url, "--index", index.to_str().unwrap(), "--json"];
    args.extend(flags);
    let (code, out, err) = engine(&args, None);
    assert_eq!(code, 0, "{err}");
    json(&out)
}

/// The export's rows by id, each without its vector (what a push compares).
fn exported(index: &Path) -> HashMap<String, serde_json::Value> {
    let (code, out, err) = engine(&["export", "--index", index.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .map(|l| {
            let mut row = json(l);
            row.as_object_mut().unwrap().remove("vector");
            (row["id"].as_str().unwrap().to_string(), row)
        })
        .collect()
}

/// (path, label) of a search's hits, and its verdict.
fn answers(index: &Path, query: &str, backend: Option<&str>) -> (Vec<(String, String)>, serde_json::Value) {
    let mut args = vec!["search", "--json", "-k", "5", "--index", index.to_str().unwrap()];
    if let Some(url) = backend {
        args.extend(["--backend", url]);
    }
    args.push(query);
    let (code, out, err) = engine(&args, None);
    assert_eq!(code, 0, "{query}: {err}");
    let v = json(&out);
    assert_eq!(v["backend"].as_str(), backend, "{v}");
    let hits = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h["confidence"].as_str().unwrap_or_default().to_string()))
        .collect();
    (hits, v["verdict"].clone())
}

/// (path, first line) of the hits of `engine search` run in `cwd`, a directory with no index,
/// through `url` alone; and the response's degraded reason.
fn answers_without_index(cwd: &Path, query: &str, url: &str) -> (Vec<(String, u64)>, String) {
    let (code, out, err) = engine(&["search", "--json", "-k", "5", "--backend", url, query], Some(cwd));
    assert_eq!(code, 0, "{query}: {err}");
    let v = json(&out);
    assert_eq!(v["backend"].as_str(), Some(url), "{v}");
    let hits = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h["start_line"].as_u64().unwrap()))
        .collect();
    (hits, v["degraded_reason"].as_str().unwrap_or_default().to_string())
}

/// [`answers_without_index`] of the local index at `index`, for comparison.
fn local_places(index: &Path, query: &str) -> Vec<(String, u64)> {
    let (code, out, err) = engine(&["search", "--json", "-k", "5", "--index", index.to_str().unwrap(), query], None);
    assert_eq!(code, 0, "{query}: {err}");
    json(&out)["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h["start_line"].as_u64().unwrap()))
        .collect()
}

fn index_of(dir: &Path) -> PathBuf {
    let index = dir.join(".engine");
    let (code, _, err) = engine(&["index", dir.to_str().unwrap(), "--index", index.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    index
}

/// Queries of the code golden set (its `text = "…"` lines).
fn golden_code_queries() -> Vec<String> {
    let set = std::fs::read_to_string(root().join("golden/code/set.toml")).unwrap();
    set.lines().filter_map(|l| l.strip_prefix("text = \"")?.strip_suffix('"').map(str::to_string)).collect()
}

#[test]
fn search_through_milvus_gives_the_local_engines_top_results_and_labels() {
    let server = Server::start();
    let sample = sample_copy();
    let corpus = tempfile::tempdir().unwrap();
    copy_dir(&root().join("golden/code/corpus"), corpus.path());
    let sets = [
        (
            index_of(sample.path()),
            "sample",
            vec![
                "why did we move sessions off memcached?".to_string(),
                "how are uploads resized".to_string(),
                "redis session expiry".to_string(),
            ],
        ),
        (index_of(corpus.path()), "code", golden_code_queries()),
    ];
    // Another machine: the URL and the model, no index.
    let elsewhere = tempfile::tempdir().unwrap();
    for (index, collection, queries) in &sets {
        let url = server.url(collection);
        let report = push(&url, index);
        assert_eq!(report["created"], true, "{report}");
        assert_eq!(report["upserted"], report["chunks"], "{report}");
        assert!(queries.len() >= 3);
        for q in queries {
            let (local, local_verdict) = answers(index, q, None);
            let (remote, remote_verdict) = answers(index, q, Some(&url));
            assert_eq!(remote.first(), local.first(), "{collection}: {q}\nlocal  {local:?}\nmilvus {remote:?}");
            assert_eq!(
                remote_verdict["answers"], local_verdict["answers"],
                "{collection}: {q}\nlocal  {local_verdict}\nmilvus {remote_verdict}"
            );
            // Without the local index the chunks come from the server's rows: the same first
            // hits, and what could not be had is said.
            let (alone, degraded) = answers_without_index(elsewhere.path(), q, &url);
            let local = local_places(index, q);
            // Chunks fused to the same score are ordered by their key, which only the local index
            // has, and without the index's document frequencies learned fusion weighs the query's
            // words alike: on the code set two close hits may swap, so its first file is one of the
            // local first two.
            let (alone_paths, local_paths): (Vec<&String>, Vec<&String>) =
                (alone.iter().map(|h| &h.0).collect(), local.iter().map(|h| &h.0).collect());
            let same = match *collection {
                "sample" => alone[..3] == local[..3],
                _ => local_paths[..2].contains(&alone_paths[0]),
            };
            assert!(same, "{collection}: {q}\nlocal {local:?}\nalone {alone:?}");
            assert!(degraded.contains("no local index"), "{degraded}");
        }
    }
    assert!(!elsewhere.path().join(".engine").exists(), "a search without an index writes none");
    // The hook of a project without an index whose engine.toml names the server answers from it.
    let url = server.url("sample");
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("engine.toml"), format!("[backend]\nurl = \"{url}\"\n")).unwrap();
    let q = "why did we move sessions off memcached?";
    let (code, out, err) = hook(&prompt(project.path(), q), &[], &[]);
    assert_eq!(code, 0, "{err}");
    let context = json(&out)["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_string();
    let top = &local_places(&sets[0].0, q)[0].0;
    assert!(context.contains(&format!("path=\"{top}\"")), "{context}\n{err}");
    // ... and so does its MCP server; `get` needs the local index and says so.
    let mut mcp = crate::mcp::Raw::start(project.path(), &[]);
    let found = mcp.call(1, "search", serde_json::json!({"query": q, "k": 1}));
    let text = crate::mcp::text_of(&found);
    assert!(found["isError"] == false && text.contains(top.as_str()), "{found}");
    let got = mcp.call(2, "get", serde_json::json!({"path": top, "start_line": 1, "end_line": 3}));
    assert!(got["isError"] == true && crate::mcp::text_of(&got).contains("local index"), "{got}");
    mcp.finish();
}

#[test]
fn a_push_writes_only_what_changed_and_deletes_what_was_removed() {
    let server = Server::start();
    let project = sample_copy();
    let index = index_of(project.path());
    let url = server.url("incremental");
    let first = push(&url, &index);
    assert_eq!((first["created"].as_bool(), first["deleted"].as_u64()), (Some(true), Some(0)), "{first}");
    let unchanged = push(&url, &index);
    assert_eq!(
        (unchanged["created"].as_bool(), unchanged["upserted"].as_u64(), unchanged["deleted"].as_u64()),
        (Some(false), Some(0), Some(0)),
        "a second push of the same index writes nothing: {unchanged}"
    );
    // ... and compares against the record of the first instead of listing the collection,
    // unless asked to (`--full`).
    assert_eq!(unchanged["listed"], false, "{unchanged}");
    let full = push_with(&url, &index, &["--full"]);
    assert_eq!((full["listed"].as_bool(), full["upserted"].as_u64()), (Some(true), Some(0)), "{full}");

    // An edited file: exactly the rows whose id or fields changed are written, the old
    // versions deleted.
    let before = exported(&index);
    let doc = project.path().join("docs/architecture.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    std::fs::write(
        &doc,
        format!("{text}\n## Backups\n\nNightly snapshots of the Postgres volume go to cold storage.\n"),
    )
    .unwrap();
    index_of(project.path());
    let after = exported(&index);
    let written = after.iter().filter(|(id, row)| before.get(*id) != Some(row)).count();
    let gone = before.keys().filter(|id| !after.contains_key(*id)).count();
    assert!(written > 0);
    let edited = push(&url, &index);
    assert_eq!((edited["upserted"].as_u64(), edited["deleted"].as_u64()), (Some(written as u64), Some(gone as u64)));
    let (hits, _) = answers(&index, "nightly snapshots postgres cold storage", Some(&url));
    assert_eq!(hits[0].0, "docs/architecture.md", "{hits:?}");

    // A removed file: its chunks are deleted and nothing else is written.
    let removed: HashSet<String> =
        after.values().filter(|r| r["path"] == "docs/architecture.md").map(|r| r["id"].to_string()).collect();
    std::fs::remove_file(&doc).unwrap();
    index_of(project.path());
    let pruned = push(&url, &index);
    assert_eq!((pruned["upserted"].as_u64(), pruned["deleted"].as_u64()), (Some(0), Some(removed.len() as u64)));
    let (hits, _) = answers(&index, "nightly snapshots postgres cold storage", Some(&url));
    assert!(hits.iter().all(|(path, _)| path != "docs/architecture.md"), "{hits:?}");
}

#[test]
fn a_server_stopped_mid_run_is_the_unreachable_class_and_the_hook_answers_from_the_local_index() {
    let mut server = Server::start();
    let url = server.url("stopped");
    let config = format!("[hook]\ndaemon = false\ndeadline_ms = 600000\n\n[backend]\nurl = \"{url}\"\n");
    let p = project(&config);
    let index = p.path().join(".engine");
    push(&url, &index);
    let q = "why did we move sessions off memcached?";
    let (up, _) = answers(&index, q, Some(&url));
    server.stop();

    let (code, out, err) =
        engine(&["search", "--json", "--index", index.to_str().unwrap(), "--backend", &url, q], None);
    assert_eq!((code, out.as_str()), (6, ""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("engine: the search backend at {url} is unreachable")), "{err}");
    let (code, _, err) = engine(&["push", &url, "--index", index.to_str().unwrap()], None);
    assert_eq!(code, 6, "{err}");

    // The hook reads `[backend] url` from engine.toml and answers from the local index.
    let (code, out, err) = hook(&prompt(p.path(), q), &[], &[]);
    assert_eq!((code, err.as_str()), (0, ""));
    let context = json(&out)["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string();
    assert!(context.contains(&up[0].0), "{context}");

    // Without a local index there is nothing to fall back on: the search is the unreachable
    // class in one line, and the hook adds nothing.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("engine.toml"), &config).unwrap();
    let (code, out, err) = engine(&["search", "--json", "--backend", &url, q], Some(elsewhere.path()));
    assert_eq!((code, out.as_str()), (6, ""), "{err}");
    assert!(err.lines().count() == 1 && err.contains("is unreachable"), "{err}");
    let (code, out, err) = hook(&prompt(elsewhere.path(), q), &[], &[]);
    assert_eq!(code, 0, "{err}");
    let added = match out.trim() {
        "" => None,
        out => json(out)["hookSpecificOutput"]["additionalContext"].as_str().map(str::to_string),
    };
    assert!(added.as_ref().is_none_or(|c| c.is_empty()), "{added:?}");
    assert!(!elsewhere.path().join(".engine").exists());
}

#[test]
fn a_push_lists_the_collection_again_when_another_index_wrote_to_it() {
    let server = Server::start();
    let url = server.url("shared");
    let sample = sample_index();
    let corpus = tempfile::tempdir().unwrap();
    copy_dir(&root().join("golden/code/corpus"), corpus.path());
    let other = index_of(corpus.path());
    push(&url, sample);
    // Another index replaces the collection's rows: the sample index's record no longer
    // matches the server's row count, so its next push lists the collection and restores it.
    let replaced = push(&url, &other);
    let back = push(&url, sample);
    assert_eq!(back["listed"], true, "{back}");
    assert_eq!(back["deleted"], replaced["chunks"], "{back} after {replaced}");
    assert_eq!(back["upserted"], back["chunks"], "{back}");
    let again = push(&url, sample);
    assert_eq!((again["listed"].as_bool(), again["upserted"].as_u64()), (Some(false), Some(0)), "{again}");
}

#[test]
fn the_hook_does_not_wait_past_its_deadline_for_a_server_that_accepts_and_never_answers() {
    // A port that accepts connections (the kernel completes them) and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("milvus://127.0.0.1:{}/hangs", silent.local_addr().unwrap().port());
    // The backend's own timeout is the longest allowed: only the hook's deadline (1.5 s by
    // default) can end the wait. A hook waiting for the server is killed by the test's
    // watchdog (exit 137) instead of answering.
    let p = project(&format!("[hook]\ndaemon = false\n\n[backend]\nurl = \"{url}\"\ntimeout_ms = 600000\n"));
    let index = p.path().join(".engine");
    let q = "why did we move sessions off memcached?";
    let (local, _) = answers(&index, q, None);
    let (code, out, err) = hook(&prompt(p.path(), q), &[], &[]);
    assert_eq!(code, 0, "{err}");
    // At the deadline the hook answers from what the local index had ready (its BM25 answer,
    // said on stderr), not from the server.
    assert!(err.is_empty() || err.contains("deadline passed"), "{err}");
    let context = json(&out)["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string();
    assert!(context.contains(&local[0].0), "the local index answers: {context}");
    drop(silent);
}

#[test]
fn a_bad_backend_url_is_a_usage_error() {
    let index = sample_index();
    for url in ["http://127.0.0.1:19530/c", "milvus://127.0.0.1/c", "milvus://127.0.0.1:19530/no-dashes"] {
        let (code, out, err) =
            engine(&["search", "--index", index.to_str().unwrap(), "--backend", url, "sessions"], None);
        assert_eq!((code, out.as_str()), (2, ""), "{url}: {err}");
        assert!(err.contains("expected milvus://HOST:PORT/COLLECTION") && err.lines().count() == 1, "{err}");
        let (code, _, err) = engine(&["push", url, "--index", index.to_str().unwrap()], None);
        assert_eq!(code, 2, "{url}: {err}");
    }
}
