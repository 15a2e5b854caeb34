//! Issue 11 through the real binary: bounded settings and flags, lenient config loading for the
//! hook, a daemon that follows its config and its index directory, exit codes and one-line
//! messages for damaged indexes and unusable paths or config files.

use crate::common::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Generous: CI machines can be very loaded.
const PATIENCE: Duration = Duration::from_secs(180);

/// A copy of sample/ with an engine.toml and an index.
fn project(config: &str) -> tempfile::TempDir {
    let dir = sample_copy();
    std::fs::write(dir.path().join("engine.toml"), config).unwrap();
    build_index(dir.path());
    dir
}

fn build_index(root: &Path) {
    let (code, _, err) = engine(&["index", root.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
}

/// Runs `engine hook --plain` on a prompt; returns (exit code, stdout, stderr).
fn hook_prompt(cwd: &Path, text: &str) -> (i32, String, String) {
    let payload = serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": text, "cwd": cwd});
    let mut child = Command::new(bin())
        .args(["hook", "--plain"])
        .env_remove("ENGINE_MODELS_DIR")
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts an error: this exit code, exactly one line on stderr, containing every `needle`.
fn assert_error(what: &str, (code, _, err): (i32, String, String), want_code: i32, needles: &[&str]) {
    assert_eq!(code, want_code, "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: one line: {err:?}");
    for n in needles {
        assert!(err.contains(n), "{what}: {n:?} not in {err:?}");
    }
}

fn until(what: &str, mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        assert!(t.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start_daemon(index: &Path) -> Child {
    let child = Command::new(bin())
        .args(["serve", "--index", index.to_str().unwrap()])
        .env_remove("ENGINE_MODELS_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    until("the daemon's socket", || index.join("engine.sock").exists());
    child
}

/// Waits for the daemon to exit by itself (killing it if it does not, so no test leaves one).
fn assert_exits(mut daemon: Child, what: &str) {
    let t = Instant::now();
    while t.elapsed() < PATIENCE {
        if let Some(status) = daemon.try_wait().unwrap() {
            assert!(status.success(), "{what}: {status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
    panic!("{what}: the daemon still ran after {PATIENCE:?}");
}

#[test]
fn config_check_rejects_every_unbounded_value_naming_key_value_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("engine.toml");
    let cases = [
        ("[search]\nk = 1000000000000\n", "[search] k = 1000000000000 is out of range: allowed 1..=1000"),
        ("[search]\nk = 18446744073709551615\n", "`k = 18446744073709551615`"),
        ("[search]\ntop_n = 0\n", "[search] top_n = 0 is out of range: allowed 1..=10000"),
        ("[hook]\nk = 1000000000000\n", "[hook] k = 1000000000000 is out of range: allowed 1..=1000"),
        ("[hook]\nk = 18446744073709551615\n", "`k = 18446744073709551615`"),
        ("[embed]\nthreads = 1000000\n", "[embed] threads = 1000000 is out of range: allowed 1..=256"),
        ("[embed]\nbatch_size = 100000\n", "[embed] batch_size = 100000 is out of range: allowed 1..=64"),
        ("[index]\nmax_file_size = 2147483648\n", "[index] max_file_size = 2147483648 is out of range"),
        ("[vector]\nef_search = 1000000\n", "[vector] ef_search = 1000000 is out of range: allowed 1..=10000"),
        ("[rerank]\ndeadline_ms = 3600000\n", "[rerank] deadline_ms = 3600000 is out of range: allowed 1..=600000"),
        ("[hook]\ndeadline_ms = 18446744073\n", "[hook] deadline_ms = 18446744073 is out of range"),
        ("[hook]\nidle_timeout_s = 0\n", "[hook] idle_timeout_s = 0 is out of range"),
        ("[hook]\ndigest_max_chars = 9999999999\n", "[hook] digest_max_chars = 9999999999 is out of range"),
        ("[context]\nneighbours = 1000000\n", "[context] neighbours = 1000000 is out of range: allowed 0..=100"),
        ("[fuse]\nk_vector = 0.0\n", "[fuse] k_vector = 0 is out of range: allowed a finite number above 0"),
        ("[fuse]\nk_symbol = nan\n", "[fuse] k_symbol = NaN is out of range"),
        ("[fuse]\ncode = { vector = -1.0, lexical = 0.1, symbol = 0.1 }\n", "[fuse] code.vector = -1"),
        ("[bm25]\ntitle_boost = inf\n", "[bm25] title_boost = inf is out of range"),
        ("[tier]\nfloor_medium = 0.9\n", "[tier] floor_medium = 0.9 is above floor_high = 0.4"),
    ];
    for (text, want) in cases {
        std::fs::write(&cfg, text).unwrap();
        let (code, _, err) = engine(&["config", "check", cfg.to_str().unwrap()], None);
        assert_eq!(code, 2, "{text:?}: {err}");
        assert!(err.contains(want), "{text:?}: {want:?} not in {err:?}");
    }
    // Every other command refuses such a file in one line.
    std::fs::write(&cfg, "[search]\nk = 1000000000000\n").unwrap();
    let r = engine(&["search", "sessions", "--config", cfg.to_str().unwrap()], None);
    assert_error("[search] k for search", r, 2, &["[search] k = 1000000000000", "1..=1000"]);
}

#[test]
fn huge_k_flags_are_one_line_usage_errors() {
    let idx = sample_index().to_str().unwrap();
    for k in ["1000000000000", "18446744073709551615", "0"] {
        let r = engine(&["search", "sessions", "--index", idx, "-k", k], None);
        assert_error(k, r, 2, &[&format!("'{k}'"), "--k", "1..=1000"]);
    }
    let r = engine(&["serve", "--index", idx, "--idle-timeout", "99999999999"], None);
    assert_error("--idle-timeout", r, 2, &["--idle-timeout", "1..=604800"]);
    let r = engine(&["embed", "--batch-size", "1000000", "x"], None);
    assert_error("--batch-size", r, 2, &["--batch-size", "1..=64"]);
    // In range, it answers.
    let (code, out, err) = engine(&["search", "sessions", "--index", idx, "-k", "1000", "--json"], None);
    assert_eq!(code, 0, "{err}");
    assert!(!json(&out)["results"].as_array().unwrap().is_empty());
}

#[test]
fn the_hook_keeps_answering_when_a_config_section_is_out_of_range() {
    // The [hook] section falls back whole, daemon = true included: the hook starts a daemon,
    // which exits when the temp directory (its index) is deleted at the end.
    let p = project("[hook]\nk = 1000000000000\n[context]\noutput_mode = \"legacy\"\n");
    let (code, out, err) = hook_prompt(p.path(), "why did we move sessions off memcached?");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.lines().next().unwrap_or(""),
        "engine hook: config: [hook] k = 1000000000000 is out of range: allowed 1..=1000; using the [hook] defaults"
    );
    assert!(out.contains("decision-session-store.json"), "still answers: {out}");
    // The valid [context] section was kept: legacy mode shows every hit, a file's chunks each as
    // a result of its own (tiered mode shows each file once), until the budget is spent.
    let paths: Vec<&str> = out.split("<result ").skip(1).filter_map(|r| r.split('"').nth(3)).collect();
    let distinct: std::collections::HashSet<&&str> = paths.iter().collect();
    assert!(paths.len() > distinct.len(), "{out}");
}

/// A hook deadline long enough for the daemon to answer even on a loaded machine, so an answer
/// without a note on stderr shows that the daemon (not the in-process fallback) gave it.
const DAEMON_CONFIG: &str = "[hook]\nidle_timeout_s = 600\ndeadline_ms = 60000\n";
const QUESTION: &str = "why did we move sessions off memcached?";

/// Starts a daemon on the project's index and waits until it has answered a prompt.
fn ready_daemon(project: &Path) -> Child {
    let daemon = start_daemon(&project.join(".engine"));
    let (code, out, err) = hook_prompt(project, QUESTION);
    assert_eq!((code, err.as_str()), (0, ""), "answered by the daemon");
    assert!(out.contains("decision-session-store.json"), "{out}");
    daemon
}

#[test]
fn the_daemon_exits_when_its_index_is_deleted_or_replaced() {
    let p = project(DAEMON_CONFIG);
    let index = p.path().join(".engine");
    let daemon = ready_daemon(p.path());
    std::fs::remove_dir_all(&index).unwrap();
    build_index(p.path());
    assert_exits(daemon, "index replaced (rm -rf .engine && engine index)");
    let daemon = ready_daemon(p.path());
    std::fs::remove_dir_all(&index).unwrap();
    assert_exits(daemon, "index deleted");
}

#[test]
fn the_daemon_follows_edits_of_its_config() {
    let base = DAEMON_CONFIG;
    let p = project(base);
    let config = p.path().join("engine.toml");
    let daemon = ready_daemon(p.path());
    let q = QUESTION;
    let (code, first, err) = hook_prompt(p.path(), q);
    assert_eq!((code, err.as_str()), (0, ""));
    // Answers of at most one character: nothing fits, nothing is printed.
    std::fs::write(&config, format!("{base}max_chars = 1\n")).unwrap();
    assert_eq!(hook_prompt(p.path(), q), (0, String::new(), String::new()));
    // Legacy output: every hit in full.
    std::fs::write(&config, format!("{base}[context]\noutput_mode = \"legacy\"\n")).unwrap();
    let (code, legacy, err) = hook_prompt(p.path(), q);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(legacy.matches("<result ").count() > first.matches("<result ").count(), "{legacy}");
    // Fixed again: the first answer again.
    std::fs::write(&config, base).unwrap();
    assert_eq!(hook_prompt(p.path(), q), (0, first, String::new()));
    drop(p); // deletes the index: the daemon exits
    assert_exits(daemon, "project deleted");
}

/// Ways an index can be damaged; each must be exit 4 with the rebuild hint, and rebuilding fixes it.
fn damage(kind: &str, idx: &Path) {
    let gen = idx.join(std::fs::read_to_string(idx.join("CURRENT")).unwrap().trim());
    let tantivy = gen.join("tantivy");
    let segment_files = || {
        std::fs::read_dir(&tantivy)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "idx" || e == "store"))
            .collect::<Vec<PathBuf>>()
    };
    match kind {
        "CURRENT names a missing generation" => std::fs::write(idx.join("CURRENT"), "gen-000099\n").unwrap(),
        "meta.json missing" => std::fs::remove_file(gen.join("meta.json")).unwrap(),
        "meta.json corrupt" => std::fs::write(gen.join("meta.json"), "{ not json").unwrap(),
        "tantivy directory missing" => std::fs::remove_dir_all(&tantivy).unwrap(),
        "tantivy segment file missing" => std::fs::remove_file(&segment_files()[0]).unwrap(),
        "tantivy files truncated" => segment_files().iter().for_each(|f| std::fs::write(f, "junk").unwrap()),
        "tantivy meta corrupt" => std::fs::write(tantivy.join("meta.json"), "junk").unwrap(),
        "generation is a file" => {
            std::fs::remove_dir_all(&gen).unwrap();
            std::fs::write(&gen, "x").unwrap();
        }
        other => panic!("unknown damage {other}"),
    }
}

#[test]
fn damaged_indexes_exit_4_with_the_rebuild_hint_on_one_line() {
    for kind in [
        "CURRENT names a missing generation",
        "meta.json missing",
        "meta.json corrupt",
        "tantivy directory missing",
        "tantivy segment file missing",
        "tantivy files truncated",
        "tantivy meta corrupt",
        "generation is a file",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let idx = dir.path().join("idx");
        copy_dir(sample_index(), &idx);
        damage(kind, &idx);
        let i = idx.to_str().unwrap();
        for args in [&["search", "sessions", "--index", i][..], &["search", "sessions", "--mode", "bm25", "--index", i]]
        {
            assert_error(kind, engine(args, None), 4, &["is damaged", "`engine index` rebuilds it"]);
        }
        assert_error(kind, engine(&["status", "--index", i], None), 4, &["is damaged", "`engine index` rebuilds it"]);
        // The hint works: indexing finds the damage and rebuilds.
        let sample = root().join("sample");
        let (code, _, err) = engine(&["index", sample.to_str().unwrap(), "--index", i], None);
        assert_eq!(code, 0, "{kind}: rebuild: {err}");
        assert!(err.contains("damaged") && err.contains("rebuilt it"), "{kind}: {err}");
        let (code, out, err) = engine(&["search", "sessions", "--index", i, "--json"], None);
        assert_eq!(code, 0, "{kind}: after the rebuild: {err}");
        assert!(!json(&out)["results"].as_array().unwrap().is_empty(), "{kind}");
    }
}

#[test]
fn an_index_path_that_is_a_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("somefile");
    std::fs::write(&file, "not an index").unwrap();
    let f = file.to_str().unwrap();
    let sample = root().join("sample");
    for args in [
        &["search", "sessions", "--index", f][..],
        &["search", "sessions", "--mode", "bm25", "--index", f],
        &["status", "--index", f],
        &["index", sample.to_str().unwrap(), "--index", f],
    ] {
        assert_error(&format!("{args:?}"), engine(args, None), 2, &[f, "is not a directory"]);
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not an index", "left alone");
}

#[test]
fn unreadable_config_files_are_one_line_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("engine.toml");
    let c = cfg.to_str().unwrap();
    let idx = sample_index().to_str().unwrap();
    std::fs::write(&cfg, b"[search]\nk = \xff\n").unwrap();
    for args in [&["search", "sessions", "--index", idx, "--config", c][..], &["config", "check", c]] {
        assert_error("non-UTF-8 config", engine(args, None), 2, &[c, "not UTF-8"]);
    }
    std::fs::write(&cfg, "[search]\nk = 3\n[hook\nk = 2\n").unwrap();
    for args in [&["search", "sessions", "--index", idx, "--config", c][..], &["config", "check", c]] {
        assert_error("TOML syntax error", engine(args, None), 2, &[c, "line 3", "invalid table header", "`[hook`"]);
    }
}

#[test]
fn errors_are_one_line_even_for_a_cwd_with_a_newline_and_name_their_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("line\nbreak");
    std::fs::create_dir(&odd).unwrap();
    let r = engine(&["search", "sessions"], Some(&odd));
    assert_error("cwd with a newline", r, 2, &["no index at", "line\\nbreak"]);
    // An OS error wrapped by the library is said once, not once per layer.
    let idx = dir.path().join("idx");
    let missing = dir.path().join("no-such-collection");
    let (code, _, err) =
        engine(&["index", "--beir", missing.to_str().unwrap(), "--index", idx.to_str().unwrap()], None);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}
