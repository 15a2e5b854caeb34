//! `engine hook` end to end: recorded payloads (valid ones for each event, broken ones) fed to the
//! real binary, with stdout, stderr and the exit code checked exactly; the daemon and the
//! in-process path give the same context.

use crate::common::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// In process, with a deadline no loaded machine reaches: answers come from the full engine.
const IN_PROCESS: &str = "[hook]\ndaemon = false\ndeadline_ms = 600000\n";

fn context_of(stdout: &str) -> String {
    let v = json(stdout);
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit", "{v}");
    v["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string()
}

#[test]
fn a_prompt_gets_tiered_context() {
    let p = project(IN_PROCESS);
    let (code, out, err) = hook(&prompt(p.path(), "why did we move sessions off memcached?"), &[], &[]);
    assert_eq!((code, err.as_str()), (0, ""));
    let ctx = context_of(&out);
    // The decision comes first. Whether it is "high" is the calibrated model's call (engine::abstain):
    // on a corpus of twenty files, "why", "did" and "we" are rare words the record lacks.
    assert!(ctx.starts_with("<memory-context>\n<"), "{ctx}");
    assert!(ctx.lines().nth(1).unwrap().contains(" path=\".claude/memory/decision-session-store.json\""), "{ctx}");
    assert!(ctx.chars().count() <= 8000);
    // --plain: the block itself.
    let (code, out, _) = hook(&prompt(p.path(), "why did we move sessions off memcached?"), &["--plain"], &[]);
    assert_eq!(code, 0);
    assert_eq!(out.trim_end(), ctx.trim_end());
    // From a subdirectory: the index above is found.
    let (_, out, _) = hook(&prompt(&p.path().join("src"), "why did we move sessions off memcached?"), &[], &[]);
    assert_eq!(context_of(&out), ctx);
}

#[test]
fn nothing_relevant_trivial_or_secret_prompts_get_nothing() {
    let p = project(IN_PROCESS);
    for text in ["hi", "thanks!", "/clear", "ok go on"] {
        let (code, out, err) = hook(&prompt(p.path(), text), &[], &[]);
        assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""), "{text:?}");
    }
    let (code, out, err) = hook(&prompt(p.path(), "write a haiku about autumn leaves falling"), &[], &[]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""), "nothing relevant: no context");
    // Turns of the conversation pass the trivial-prompt gate but nothing answers them (abstention).
    for text in ["ok rerun the whole test suite", "looks good, commit it and push the branch"] {
        let (code, out, err) = hook(&prompt(p.path(), text), &[], &[]);
        assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""), "{text:?}");
    }
    let (code, out, err) = hook(&prompt(p.path(), "ghp_0123456789abcdefghijABCDEFGHIJ012345"), &[], &[]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(err, "engine hook: the prompt is mostly a secret (GitHub token); not searched\n");
    // A secret inside a real question: searched without it, and never echoed.
    let (code, out, _) = hook(&prompt(p.path(), "sessions redis memcached with password=hunter2hunter2 why"), &[], &[]);
    assert_eq!(code, 0);
    assert!(!out.contains("hunter2"), "{out}");
}

#[test]
fn broken_payloads_exit_0_with_one_line_on_stderr() {
    let p = project(IN_PROCESS);
    let empty = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"{\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"why".to_vec(), "stdin is not valid JSON"),
        (b"".to_vec(), "empty stdin (expected the hook's JSON); nothing added"),
        (vec![0xff, 0xfe, 0x00], "stdin is not UTF-8"),
        (
            br#"{"hook_event_name":"UserPromptSubmit","prompt":42}"#.to_vec(),
            "prompt should be a string, found a number; nothing added",
        ),
        (br#"{"prompt":"why redis"}"#.to_vec(), "no hook_event_name in the payload; nothing added"),
        (
            serde_json::json!({"hook_event_name":"UserPromptSubmit","cwd":p.path()}).to_string().into_bytes(),
            "UserPromptSubmit without a prompt; nothing added",
        ),
        (prompt(empty.path(), "why did we move sessions off memcached?"), "no index of yours at or above"),
    ];
    for (input, want) in cases {
        let (code, out, err) = hook(&input, &[], &[]);
        assert_eq!(code, 0, "{want}");
        assert_eq!(out, "", "{want}");
        assert!(err.starts_with("engine hook: ") && err.contains(want), "{want:?} not in {err:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // An unknown event: nothing at all.
    let other = serde_json::json!({"hook_event_name":"Notification","cwd":p.path(),"message":"x"}).to_string();
    assert_eq!(hook(other.as_bytes(), &[], &[]), (0, String::new(), String::new()));
    // A 10 MB prompt: cut before searching (the cut itself: `hook::gate`'s unit test), answered.
    // No timing is asserted: on a loaded machine any bound would be a guess.
    let big = format!("why did we move sessions off memcached? {}", "lorem ipsum ".repeat(900_000));
    // Cut to [hook] max_query_chars, the prompt is mostly "lorem ipsum", words no file holds: the
    // hook adds nothing, or (the memory threshold being lower) the one record that answers the
    // question it opens with.
    let (code, out, err) = hook(&prompt(p.path(), &big), &[], &[]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.is_empty() || out.contains("Moved sessions from Memcached to Redis"), "{out}");
}

#[test]
fn a_model_that_cannot_load_or_a_passed_deadline_answers_from_bm25() {
    let p = project(IN_PROCESS);
    let models = broken_models();
    let q = prompt(p.path(), "why did we move sessions off memcached?");
    let (code, out, err) = hook(&q, &[], &[("ENGINE_MODELS_DIR", models.path())]);
    assert_eq!(code, 0);
    assert!(context_of(&out).contains("decision-session-store.json"), "{out}");
    assert_eq!(err, "engine hook: no embedding model; answered from BM25\n");
    std::fs::write(p.path().join("engine.toml"), "[hook]\ndaemon = false\ndeadline_ms = 1\n").unwrap();
    let (code, out, err) = hook(&q, &[], &[]);
    assert_eq!(code, 0);
    assert_eq!(err, "engine hook: deadline passed; answered from BM25\n");
    assert!(out.is_empty() || context_of(&out).contains("<memory-"), "{out}");
}

/// Issue 11: the deadline passing while the worker thread was still starting ONNX Runtime made the
/// process exit under it (C++ static destructors of the runtime ran while the thread used it):
/// SIGSEGV or SIGABRT in about one run in ten. Deadlines spread over the model's start-up, so on a
/// fast or a loaded machine some runs end while the worker is inside the runtime. Only the exit
/// status and the output's validity are checked, never how long anything took.
#[test]
fn a_deadline_passing_while_the_model_starts_never_crashes_the_hook() {
    let p = project(IN_PROCESS);
    let q = prompt(p.path(), "why did we move sessions off memcached?");
    for run in 0..40 {
        let ms = [20, 50, 100, 150, 250, 400][run % 6];
        std::fs::write(p.path().join("engine.toml"), format!("[hook]\ndaemon = false\ndeadline_ms = {ms}\n")).unwrap();
        let (code, out, err) = hook(&q, &[], &[]);
        assert_eq!(code, 0, "run {run} (deadline {ms} ms) exited with {code}; stderr: {err}");
        let wrapped = |c: String| c.starts_with("<memory-context>") || c.starts_with("<project-context>");
        assert!(out.is_empty() || wrapped(context_of(&out)), "run {run}: {out}");
        assert!(err.is_empty() || (err.starts_with("engine hook: ") && err.lines().count() == 1), "run {run}: {err}");
    }
}

#[test]
fn session_start_digests_memory_and_changes_and_edits_are_picked_up() {
    let p = project(IN_PROCESS);
    let start = |source: &str| {
        let v = serde_json::json!({"hook_event_name":"SessionStart","source":source,"cwd":p.path(),"session_id":"s"});
        hook(v.to_string().as_bytes(), &["--plain"], &[])
    };
    let (code, out, err) = start("startup");
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("<memory-context kind=\"session\">"), "{out}");
    assert!(out.contains("category=\"decision\"") && out.contains("Moved sessions from Memcached to Redis"), "{out}");
    assert!(out.contains("category=\"convention\""), "{out}");
    assert!(!out.contains("category=\"bug\""), "only decisions and conventions: {out}");
    assert!(!out.contains("Changed since"), "first session: no snapshot yet: {out}");
    // An edit through the tool: recorded cheaply, then reindexed.
    let file = p.path().join("docs/runbook.md");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n## Rotating the zebra credentials\n\nUse the zebra rotation script.\n");
    std::fs::write(&file, text).unwrap();
    let edit = serde_json::json!({"hook_event_name":"PostToolUse","tool_name":"Edit","cwd":p.path(),
        "tool_input":{"file_path": file}});
    assert_eq!(hook(edit.to_string().as_bytes(), &[], &[]), (0, String::new(), String::new()));
    let pending = p.path().join(".engine/pending-paths");
    assert!(std::fs::read_to_string(&pending).unwrap().contains("docs/runbook.md"));
    // The session starts at once with the digest; the edit is indexed in the background and the
    // prompts see it once that run is done.
    let (code, out, err) = start("resume");
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "", "none of its own records, nothing indexed since: nothing to add");
    let out = until_answered(p.path(), "how do we rotate the zebra credentials", "zebra");
    assert!(out.contains("docs/runbook.md"), "the edit is searchable: {out}");
    // clear: project knowledge only.
    let (_, out, _) = start("clear");
    assert!(out.contains("category=\"decision\"") && !out.contains("Changed since"), "{out}");
    // A notebook edit is recorded too, and a fork gets project knowledge and the changes.
    let notebook = p.path().join("docs/analysis.ipynb");
    std::fs::write(&notebook, r#"{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#).unwrap();
    let edit = serde_json::json!({"hook_event_name":"PostToolUse","tool_name":"NotebookEdit","cwd":p.path(),
        "tool_input":{"notebook_path": notebook, "new_source": "x = 1"}});
    assert_eq!(hook(edit.to_string().as_bytes(), &[], &[]), (0, String::new(), String::new()));
    assert!(std::fs::read_to_string(&pending).unwrap().contains("docs/analysis.ipynb"));
    // The digest lists what the index took in since the last session started: the runbook.
    let (code, out, err) = start("fork");
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.contains("category=\"decision\"") && out.contains("docs/runbook.md"), "{out}");
    assert!(out.contains("Changed since the last session ("), "{out}");
}

/// Asks the hook (in plain form) until its context holds `want`, for up to ten minutes: the
/// background indexing it waits for runs at the lowest priority and takes what the machine gives.
fn until_answered(root: &Path, question: &str, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let (code, out, err) = hook(&prompt(root, question), &["--plain"], &[]);
        assert_eq!(code, 0, "{err}");
        if out.contains(want) {
            return out;
        }
        assert!(Instant::now() < deadline, "no {want:?} in the context 600 s on: {out} {err}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_project_claude_code_names_is_used_wherever_the_session_has_gone() {
    let p = project(IN_PROCESS);
    let elsewhere = tempfile::tempdir().unwrap();
    let ask = prompt(elsewhere.path(), "why did we move sessions off memcached?");
    let (code, out, _) = hook(&ask, &["--plain"], &[]);
    assert_eq!((code, out.as_str()), (0, ""), "no index above the session's cwd");
    let (code, out, err) = hook(&ask, &["--plain"], &[("CLAUDE_PROJECT_DIR", p.path())]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.contains("decision-session-store.json"), "{out}");
}

fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() && t.elapsed() < Duration::from_secs(180) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_daemon_gives_the_same_context_and_survives_bad_requests() {
    let p = project("[hook]\nidle_timeout_s = 20\ndeadline_ms = 600000\n");
    let index: PathBuf = p.path().join(".engine");
    let socket = index.join("engine.sock");
    let mut daemon = Command::new(bin()).args(["serve", "--index", index.to_str().unwrap()]).spawn().unwrap();
    wait_for(&socket);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777, 0o600);
    // A bad request and a request from another build get error answers; the daemon lives on.
    for line in ["not json\n", "{\"binary\":\"other\",\"query\":\"x\"}\n"] {
        let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        s.write_all(line.as_bytes()).unwrap();
        let mut answer = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(&s), &mut answer).unwrap();
        assert!(json(&answer)["error"].is_string(), "{answer}");
    }
    let questions = [
        "why did we move sessions off memcached?",
        "SessionStore load refresh expiry",
        "how do I fix the flaky upload test",
    ];
    let mut warm = Vec::new();
    for q in questions {
        let (code, out, err) = hook(&prompt(p.path(), q), &[], &[]);
        assert_eq!((code, err.as_str()), (0, ""), "{q}");
        warm.push(out);
    }
    std::fs::write(p.path().join("engine.toml"), IN_PROCESS).unwrap();
    for (q, w) in questions.iter().zip(&warm) {
        let (_, out, _) = hook(&prompt(p.path(), q), &[], &[]);
        assert_eq!(&out, w, "daemon and in-process differ for {q:?}");
    }
    // An edit recorded by PostToolUse is indexed by the daemon before it answers the next prompt.
    std::fs::write(p.path().join("engine.toml"), "[hook]\nidle_timeout_s = 20\ndeadline_ms = 600000\n").unwrap();
    let note = p.path().join("docs/zebra.md");
    std::fs::write(
        &note,
        "# Zebra credentials\n\nRotate the zebra credentials with scripts/zebra-rotate.sh every quarter.\n",
    )
    .unwrap();
    let edit = serde_json::json!({"hook_event_name":"PostToolUse","tool_name":"Write","cwd":p.path(),
        "tool_input":{"file_path": note}});
    assert_eq!(hook(edit.to_string().as_bytes(), &[], &[]), (0, String::new(), String::new()));
    let (code, out, err) = hook(&prompt(p.path(), "how often do we rotate the zebra credentials"), &["--plain"], &[]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.contains("docs/zebra.md"), "the edit is in the very next answer: {out}");
    daemon.kill().unwrap();
    let _ = daemon.wait();
    // A dead daemon's socket: the hook falls back and says so.
    std::fs::write(p.path().join("engine.toml"), "[hook]\nidle_timeout_s = 2\ndeadline_ms = 600000\n").unwrap();
    let (code, out, err) = hook(&prompt(p.path(), questions[0]), &[], &[]);
    assert_eq!(code, 0);
    assert_eq!(out, warm[0]);
    assert!(err.contains("no daemon on") && err.contains("started one"), "{err}");
}

#[test]
fn install_and_uninstall_edit_the_project_settings() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join(".claude/settings.json");
    // A project install runs `engine` from PATH: this binary's directory comes first.
    let path = format!("{}:/usr/bin:/bin", bin().parent().unwrap().display());
    let here = |args: &[&str]| run(Command::new(bin()).args(args).current_dir(dir.path()).env("PATH", &path));
    let (code, out, err) = here(&["hook", "install"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("added UserPromptSubmit, SessionStart, PostToolUse, PreCompact, PostCompact, SessionEnd"),
        "{out}"
    );
    let v = json(&std::fs::read_to_string(&settings).unwrap());
    let command = v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().unwrap().to_string();
    assert_eq!(command, "engine hook # engine-hook");
    let (code, out, _) = here(&["hook", "install", "--project"]);
    assert_eq!(code, 0);
    assert!(out.contains("already installed"), "{out}");
    let (code, out, _) = here(&["hook", "uninstall"]);
    assert_eq!(code, 0);
    assert!(out.contains("removed") && out.contains("install created it"), "{out}");
    assert!(!settings.exists());
}

/// Every file and directory under `dir` with its bytes, for comparing trees.
fn tree(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                stack.push(p.clone());
                out.push((name, None));
            } else {
                out.push((name, Some(std::fs::read(&p).unwrap())));
            }
        }
    }
    out.sort();
    out
}

/// Issue 38: `hook uninstall` left a `{}` settings.json it had created, and a `.bak`, where `mcp
/// uninstall` removed its file. Both now leave the project as install found it.
#[test]
fn install_then_uninstall_leaves_the_project_tree_as_it_was() {
    let path = format!("{}:/usr/bin:/bin", bin().parent().unwrap().display());
    let in_dir = |dir: &Path, args: &[&str]| {
        let (code, out, err) = run(Command::new(bin()).args(args).current_dir(dir).env("PATH", &path));
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    // A clean project (a file of its own, no .claude/, no .mcp.json).
    let clean = tempfile::tempdir().unwrap();
    std::fs::write(clean.path().join("README.md"), "# p\n").unwrap();
    let before = tree(clean.path());
    in_dir(clean.path(), &["hook", "install"]);
    in_dir(clean.path(), &["mcp", "install"]);
    assert!(clean.path().join(".claude/settings.json").is_file() && clean.path().join(".mcp.json").is_file());
    in_dir(clean.path(), &["hook", "uninstall"]);
    in_dir(clean.path(), &["mcp", "uninstall"]);
    assert_eq!(tree(clean.path()), before, "byte for byte, nothing added");

    // A project with settings and MCP servers of its own: only the engine's entries go, and the
    // backups install made go with them.
    let own = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(own.path().join(".claude")).unwrap();
    std::fs::write(own.path().join(".claude/settings.json"), SETTINGS).unwrap();
    std::fs::write(own.path().join(".mcp.json"), "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}}").unwrap();
    let before = tree(own.path());
    in_dir(own.path(), &["hook", "install"]);
    in_dir(own.path(), &["mcp", "install"]);
    assert!(own.path().join(".claude/settings.json.bak").is_file() && own.path().join(".mcp.json.bak").is_file());
    let out = in_dir(own.path(), &["hook", "uninstall"]);
    assert!(out.contains("restored from its backup"), "{out}");
    in_dir(own.path(), &["mcp", "uninstall"]);
    assert_eq!(tree(own.path()), before);
}

/// A user's settings in the layout install writes (two-space pretty JSON): keys out of
/// alphabetical order, other tools' hooks, an empty entry (shared with the unit tests).
const SETTINGS: &str = include_str!("data/claude-settings.json");

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    n.sort();
    n
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.env_remove("ENGINE_MODELS_DIR").output().unwrap();
    (
        exit_code(out.status),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 11: installed from a binary not named `engine`, install added its entries again on every
/// run, saved the modified file over the backup, and uninstall removed nothing; a symlinked
/// settings.json became a regular file; uninstall sorted the user's keys; a failed write left
/// settings.json.tmp behind. Here as a local install (settings.local.json), which names the binary
/// whatever it is called.
#[test]
fn install_under_another_name_is_idempotent_keeps_the_file_and_fails_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let eng2 = dir.path().join("bin/eng2");
    std::fs::create_dir_all(eng2.parent().unwrap()).unwrap();
    std::fs::copy(bin(), &eng2).unwrap();
    let project = |name: &str, text: &str| {
        let claude = dir.path().join(name).join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        std::fs::write(claude.join("settings.local.json"), text).unwrap();
        claude
    };
    let eng2_in = |cwd: &Path, args: &[&str]| run(Command::new(&eng2).args(args).current_dir(cwd));

    let claude = project("p1", SETTINGS);
    let settings = claude.join("settings.local.json");
    let (code, out, err) = eng2_in(claude.parent().unwrap(), &["hook", "install", "--local"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        out.contains("added UserPromptSubmit, SessionStart, PostToolUse, PreCompact, PostCompact, SessionEnd")
            && out.contains("eng2 hook # engine-hook"),
        "{out}"
    );
    assert!(out.contains("previous file kept as"), "{out}");
    let installed = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(installed.matches("# engine-hook").count(), 6, "{installed}");
    let (code, out, _) = eng2_in(claude.parent().unwrap(), &["hook", "install", "--local"]);
    assert_eq!(code, 0);
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed, "no duplicates");
    assert_eq!(
        std::fs::read_to_string(claude.join("settings.local.json.bak")).unwrap(),
        SETTINGS,
        "the backup is the original"
    );
    let (code, out, _) = eng2_in(claude.parent().unwrap(), &["hook", "uninstall", "--local"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("removed the engine's UserPromptSubmit, SessionStart, PostToolUse, PreCompact, PostCompact, SessionEnd hooks"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), SETTINGS, "byte for byte, in the user's key order");
    assert_eq!(names(&claude), ["settings.local.json"], "the backup install made went with its entries");

    // A symlinked settings.local.json stays a link; the file it names is written.
    let shared = dir.path().join("dotfiles/claude-settings.local.json");
    std::fs::create_dir_all(shared.parent().unwrap()).unwrap();
    std::fs::write(&shared, SETTINGS).unwrap();
    let claude = dir.path().join("p2/.claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::os::unix::fs::symlink("../../dotfiles/claude-settings.local.json", claude.join("settings.local.json"))
        .unwrap();
    for action in ["install", "uninstall"] {
        let (code, _, err) = eng2_in(claude.parent().unwrap(), &["hook", action, "--local"]);
        assert_eq!((code, err.as_str()), (0, ""), "{action}");
        assert!(
            std::fs::symlink_metadata(claude.join("settings.local.json")).unwrap().file_type().is_symlink(),
            "{action}"
        );
        assert_eq!(std::fs::read_to_string(&shared).unwrap().contains("# engine-hook"), action == "install");
    }
    assert_eq!(std::fs::read_to_string(&shared).unwrap(), SETTINGS);

    // A read-only directory: a clear error, the file as it was, no temporary file. Root writes
    // anywhere, so as root the binary runs as nobody.
    let claude = project("p3", SETTINGS);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = Command::new(&eng2);
    cmd.args(["hook", "install", "--local"]).current_dir(claude.parent().unwrap());
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
    }
    let (code, out, err) = run(&mut cmd);
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.starts_with("engine: ") && err.lines().count() == 1, "{err}");
    assert!(
        err.contains(&claude.join("settings.local.json").display().to_string()) && err.contains("Permission denied"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(claude.join("settings.local.json")).unwrap(), SETTINGS);
    assert_eq!(names(&claude), ["settings.local.json"]);

    // A write that fails after its temporary file was made (here: the file size limit) removes it.
    let claude = project("p4", "{}\n");
    let mut cmd = Command::new(&eng2);
    cmd.args(["hook", "install", "--local"]).current_dir(claude.parent().unwrap());
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit and signal are async-signal-safe; the child only calls them before exec.
        // SIGXFSZ ignored makes a write past the limit fail with EFBIG instead of killing the process.
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit { rlim_cur: 256, rlim_max: 256 };
                libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    let (code, _, err) = run(&mut cmd);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("writing {}", claude.join("settings.local.json").display())) && err.contains("too large"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(claude.join("settings.local.json")).unwrap(), "{}\n");
    assert_eq!(names(&claude), ["settings.local.json", "settings.local.json.bak"], "no temporary file left");
}

/// The niceness of each thread of a process (field 19 of /proc/PID/task/TID/stat, counted after
/// the command name, which may hold spaces).
#[cfg(target_os = "linux")]
fn thread_niceness(pid: u32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .filter_map(|stat| stat.rsplit_once(')')?.1.split_whitespace().nth(16)?.parse().ok())
        .collect()
}

#[test]
#[cfg(target_os = "linux")]
fn background_indexing_runs_at_the_niceness_it_is_given() {
    let dir = sample_copy();
    let mut child = Command::new(bin())
        .args(["index", &dir.path().display().to_string(), "--nice", "19"])
        .env_remove("ENGINE_MODELS_DIR")
        .env_remove("ORT_DYLIB_PATH")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Loading the model keeps it running long enough to be seen with its worker threads: every
    // thread, not only the one that lowered itself, must run at 19.
    let mut most_threads = Vec::new();
    while child.try_wait().unwrap().is_none() {
        let seen = thread_niceness(child.id());
        if seen.len() > most_threads.len() {
            most_threads = seen;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(child.wait().unwrap().success());
    assert!(most_threads.len() > 1, "seen running with its threads: {most_threads:?}");
    assert!(most_threads.iter().all(|&n| n == 19), "threads' niceness: {most_threads:?}");
    // Past the lowest priority: refused, naming the value.
    let (code, _, err) = engine(&["index", &dir.path().display().to_string(), "--nice", "20"], None);
    assert!(code == 2 && err.contains("20"), "{err}");
}

#[test]
fn a_first_session_in_a_project_without_an_index_indexes_it_in_the_background() {
    let dir = sample_copy();
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::write(root.join("engine.toml"), IN_PROCESS).unwrap();
    let start = serde_json::json!({"hook_event_name": "SessionStart", "source": "startup", "cwd": root}).to_string();
    let (code, out, err) = hook(start.as_bytes(), &[], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("started indexing") && err.contains("in the background"), "{err}");
    // The user is told, in the message the client shows them; the model gets nothing.
    let out = serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let message = out["systemMessage"].as_str().unwrap_or_else(|| panic!("no systemMessage: {out}"));
    assert!(message.starts_with("engine: started indexing this project in the background"), "{message}");
    assert!(out.get("hookSpecificOutput").is_none(), "{out}");
    // Prompts get context as soon as the background run has made the text searchable.
    let context = until_answered(root, "why did we move sessions to redis?", "decision-session-store");
    assert!(context.starts_with("<memory-context"), "{context}");
    // Turned off, or outside a project: nothing is started.
    let other = sample_copy();
    std::fs::write(other.path().join("engine.toml"), "[hook]\nauto_index = false\n").unwrap();
    let start = serde_json::json!({"hook_event_name": "SessionStart", "source": "startup", "cwd": other.path()});
    let (code, _, err) = hook(start.to_string().as_bytes(), &[], &[]);
    assert!(code == 0 && err.contains("no index of yours"), "{err}");
    assert!(!other.path().join(".engine").exists());
}

/// After a pull that brought 2,000 files, SessionStart answers with the digest at once (the
/// reindex runs detached) and the prompts see the new files once that run is done. The time is
/// printed, and bounded only far above what foreground indexing would need to be caught.
#[test]
fn session_start_hands_2000_new_files_to_a_background_run_and_answers_with_the_digest() {
    // At normal priority: at the lowest, a busy machine (the rest of the suite) can starve the
    // background run for as long as it stays busy.
    let p = project(&format!("{IN_PROCESS}background_nice = 0\n"));
    let start =
        serde_json::json!({"hook_event_name":"SessionStart","source":"startup","cwd":p.path(),"session_id":"s"});
    let (code, _, err) = hook(start.to_string().as_bytes(), &[], &[]);
    assert_eq!(code, 0, "{err}");
    let bulk = p.path().join("docs/bulk");
    std::fs::create_dir_all(&bulk).unwrap();
    for i in 0..2000 {
        let text = format!(
            "# Ledger note {i}\n\nThe nightly job reconciles ledger batch {i} against the bank export.\n\
             Batch {i} is owned by team {}.\n",
            if i == 1234 { "quokka, who also rotates the settlement keys" } else { "finance" }
        );
        std::fs::write(bulk.join(format!("note-{i}.md")), text).unwrap();
    }
    let t = Instant::now();
    let (code, out, err) = hook(start.to_string().as_bytes(), &[], &[]);
    let took = t.elapsed();
    eprintln!("SessionStart with 2,000 new files: {} ms", took.as_millis());
    assert_eq!((code, err.as_str()), (0, ""));
    let out: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let digest = out["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_else(|| panic!("{out}"));
    assert!(
        digest.starts_with("<memory-context kind=\"session\">") && digest.contains("category=\"decision\""),
        "{digest}"
    );
    assert!(out.get("systemMessage").is_none(), "all is well: nothing to tell the user: {out}");
    assert!(took < Duration::from_secs(60), "SessionStart took {took:?}: was the reindex run in the foreground?");
    let found = until_answered(p.path(), "which team owns the quokka settlement keys", "note-1234.md");
    assert!(found.contains("quokka"), "{found}");
}

/// What the user should act on reaches them in `systemMessage`: no model (answers from keywords
/// only), a damaged index being rebuilt. The model gets the digest as before.
#[test]
fn session_start_tells_the_user_what_is_wrong_in_a_system_message() {
    let p = project(IN_PROCESS);
    let start = serde_json::json!({"hook_event_name":"SessionStart","source":"startup","cwd":p.path()}).to_string();
    let run = |env: &[(&str, &Path)]| {
        let (code, out, err) = hook(start.as_bytes(), &[], env);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"))
    };
    // The pointer to the live generation is damaged: the background run rebuilds the index.
    std::fs::write(p.path().join(".engine/CURRENT"), [0xff, 0xfe, 0x00]).unwrap();
    let out = run(&[]);
    let message = out["systemMessage"].as_str().unwrap_or_else(|| panic!("{out}"));
    assert!(message.contains("the index is damaged") && message.contains("rebuilt in the background"), "{message}");
    let found = until_answered(p.path(), "why did we move sessions off memcached?", "decision-session-store");
    assert!(found.starts_with("<memory-context"), "rebuilt: {found}");
    let nowhere = p.path().join("no-models-here");
    let out = run(&[("ENGINE_MODELS_DIR", &nowhere)]);
    let message = out["systemMessage"].as_str().unwrap_or_else(|| panic!("{out}"));
    assert!(message.starts_with("engine: no embedding model, so answers come from keyword search only"), "{message}");
    assert!(out["hookSpecificOutput"]["additionalContext"].as_str().is_some_and(|d| d.contains("decision")), "{out}");
}
