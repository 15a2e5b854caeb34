//! `engine memory` end to end: the real binary in a temporary project, its records read back from
//! `.claude/memory/` as files.

use crate::common::{bin, engine, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `engine memory [args]` in `dir` with `stdin` (none: empty) and extra environment; returns
/// (exit code, stdout, stderr).
fn memory_with(dir: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.arg("memory").args(args).current_dir(dir);
    cmd.env_remove("ENGINE_MODELS_DIR").env_remove("ORT_DYLIB_PATH").env_remove("VISUAL").env("EDITOR", "false");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run engine");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.unwrap_or("").as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn memory(dir: &Path, args: &[&str]) -> (i32, String, String) {
    memory_with(dir, args, None, &[])
}

/// Runs and expects exit 0; returns stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let (code, out, err) = memory(dir, args);
    assert_eq!(code, 0, "engine memory {args:?}: {err}");
    out
}

fn memory_dir(project: &Path) -> PathBuf {
    project.join(".claude/memory")
}

/// Every record file's text.
fn files(project: &Path) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(memory_dir(project))
        .map(|rd| rd.map(|e| e.unwrap().path()).map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// `list --json [extra]` as values.
fn listed(project: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["list", "--json"];
    args.extend_from_slice(extra);
    json(&ok(project, &args)).as_array().unwrap().clone()
}

fn ids(records: &[serde_json::Value]) -> Vec<String> {
    records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

/// A record file written by hand.
fn plant(project: &Path, name: &str, record: serde_json::Value) {
    std::fs::create_dir_all(memory_dir(project)).unwrap();
    std::fs::write(memory_dir(project).join(name), serde_json::to_string_pretty(&record).unwrap()).unwrap();
}

#[test]
fn add_list_show_edit_filter_export_delete_and_import_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();

    // add with --content: the id and the file are printed, the file holds the record.
    let out = ok(
        p,
        &[
            "add",
            "--title",
            "Use Redis for sessions",
            "--content",
            "Memcached lost every session on restart; Redis with AOF keeps them.",
            "--category",
            "decision",
            "--tag",
            "sessions",
            "--tag",
            "redis",
            "--file",
            "src/session.py",
        ],
    );
    let (redis, path) = out.trim().split_once(' ').unwrap();
    assert_eq!(redis.len(), 12, "{out}");
    assert!(p.join(path).is_file() && path.starts_with(".claude/memory/decision-use-redis-for-sessions-"), "{out}");
    let on_disk = json(&std::fs::read_to_string(p.join(path)).unwrap());
    assert_eq!(on_disk["id"], redis);
    assert_eq!(on_disk["source"], "manual");
    assert_eq!(on_disk["tags"], serde_json::json!(["sessions", "redis"]));
    assert_eq!(on_disk["files"], serde_json::json!(["src/session.py"]));

    // add with the content on stdin (no --content, and "-"); the category defaults to note.
    let (code, out, err) = memory_with(
        p,
        &["add", "--title", "Run mix format", "--category", "convention", "--tag", "style"],
        Some("Always run mix format before committing.\n"),
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let format = out.split_whitespace().next().unwrap().to_string();
    let (code, out, err) =
        memory_with(p, &["add", "--title", "Staging host", "--content", "-"], Some("Staging runs on stg-2."), &[]);
    assert_eq!(code, 0, "{err}");
    let staging = out.split_whitespace().next().unwrap().to_string();
    let shown = json(&ok(p, &["show", &staging, "--json"]));
    assert_eq!((shown["category"].as_str(), shown["content"].as_str()), (Some("note"), Some("Staging runs on stg-2.")));

    // The same content again writes nothing.
    let (code, out, err) = memory_with(p, &["add", "--title", "Staging host"], Some("Staging runs on stg-2."), &[]);
    assert_eq!((code, out.split_whitespace().next()), (0, Some(staging.as_str())), "{err}");
    assert!(err.contains("already stored"), "{err}");
    assert_eq!(files(p).len(), 3);

    // A record written by hand a year ago: listed last (newest first).
    plant(
        p,
        "old-queue.json",
        serde_json::json!({"id": "0ld0000queue", "title": "Jobs go to SQS", "category": "decision",
            "content": "We queue jobs in SQS.", "created": "2025-01-05T10:00:00Z", "tags": ["queue"]}),
    );
    let all = listed(p, &[]);
    assert_eq!(all.len(), 4);
    assert_eq!(ids(&all).last().unwrap(), "0ld0000queue");
    assert!(all.iter().all(|r| r["superseded"] == false && r["path"].as_str().unwrap().ends_with(".json")));
    let text = ok(p, &["list"]);
    assert_eq!(text.lines().count(), 4, "{text}");
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("0ld0000queue  decision    2025-01-05  Jobs go to SQS"), "{text}");

    // show by a prefix: the whole record.
    let text = ok(p, &["show", &redis[..6]]);
    assert!(text.contains(&format!("id         {redis}")), "{text}");
    assert!(text.contains("tags       sessions, redis"), "{text}");
    assert!(text.trim_end().ends_with("Memcached lost every session on restart; Redis with AOF keeps them."), "{text}");
    let before = json(&ok(p, &["show", &redis[..6], "--json"]));
    assert_eq!(before["id"], redis);

    // edit with flags: those fields change; id and created stay; the hash follows the title.
    let out = ok(p, &["edit", &redis[..6], "--title", "Use Redis for web sessions", "--tag", "infra"]);
    assert!(out.starts_with(redis), "{out}");
    let after = json(&ok(p, &["show", redis, "--json"]));
    assert_eq!(after["title"], "Use Redis for web sessions");
    assert_eq!(after["tags"], serde_json::json!(["infra"]));
    assert_eq!(after["content"], before["content"]);
    assert_eq!((&after["id"], &after["created"]), (&before["id"], &before["created"]));
    assert_ne!(after["hash"], before["hash"]);
    assert!(after["updated"].as_str().unwrap() >= before["updated"].as_str().unwrap());
    assert_eq!(files(p).len(), 4, "edited in place");
    // Issue 38: the file keeps following the title (it kept the old name).
    let renamed = format!("decision-use-redis-for-web-sessions-{redis}.json");
    assert!(out.contains(&renamed), "{out}");
    assert_eq!(files(p).iter().filter(|(f, _)| f.ends_with(&renamed)).count(), 1, "{:?}", files(p));
    assert!(!p.join(path).exists(), "the old name is gone");
    // A bad category is refused and changes nothing.
    let (code, _, err) = memory(p, &["edit", redis, "--category", "Not Valid"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("category \"Not Valid\""), "{err}");
    assert_eq!(json(&ok(p, &["show", redis, "--json"])), after);

    // Filters.
    assert_eq!(ids(&listed(p, &["--category", "decision"])).len(), 2);
    assert_eq!(ids(&listed(p, &["--tag", "style"])), [format]);
    assert_eq!(ids(&listed(p, &["--tag", "INFRA"])), [redis.to_string()]);
    let since = listed(p, &["--since", "2026-01-01"]);
    assert_eq!(since.len(), 3);
    assert!(!ids(&since).contains(&"0ld0000queue".to_string()));
    assert_eq!(listed(p, &["--since", "2025-01-05T09:00:00-02:00"]).len(), 3, "11:00 UTC is after the old one");
    assert_eq!(listed(p, &["--since", "2025-01-05T09:00:00Z"]).len(), 4);
    let (code, _, err) = memory(p, &["list", "--since", "last-tuesday"]);
    assert_eq!(code, 2);
    assert!(err.contains("\"last-tuesday\""), "{err}");

    // export, delete, import: the record is back as it was.
    let export = dir.path().join("export.jsonl");
    let (code, _, err) = memory(p, &["export", "--out", export.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let exported = std::fs::read_to_string(&export).unwrap();
    assert_eq!(exported.lines().count(), 4);
    assert_eq!(ok(p, &["export"]), exported, "stdout by default");
    let out = ok(p, &["delete", &redis[..8]]);
    assert!(out.contains(&format!("deleted {redis}")), "{out}");
    assert_eq!(listed(p, &[]).len(), 3);
    let out = ok(p, &["import", export.to_str().unwrap()]);
    assert!(out.contains("1 written") && out.contains("3 unchanged"), "{out}");
    assert_eq!(json(&ok(p, &["show", redis, "--json"])), after);
    // From stdin too, and again: nothing new.
    let (code, out, err) = memory_with(p, &["import", "-"], Some(&exported), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0 written"), "{out}");

    // One bad line and nothing is imported; the message names the line.
    let bad = dir.path().join("bad.jsonl");
    let good = r#"{"title":"Cache TTL","content":"Cache entries live 5 minutes."}"#;
    std::fs::write(&bad, format!("{good}\n\n{{\"title\": \"no content\"}}\nnot json\n")).unwrap();
    let (code, _, err) = memory(p, &["import", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("line 3:") && err.contains("no content") && err.contains("line 4:"), "{err}");
    assert!(!err.contains("line 1:"), "{err}");
    assert_eq!(listed(p, &[]).len(), 4, "nothing imported");
    // The good line alone imports, with an id and the note category.
    std::fs::write(&bad, format!("{good}\n")).unwrap();
    ok(p, &["import", bad.to_str().unwrap()]);
    let cache = listed(p, &["--category", "note"]);
    assert!(cache
        .iter()
        .any(|r| r["title"] == "Cache TTL" && r["source"] == "import" && r["id"].as_str().unwrap().len() == 12));
}

#[test]
fn gc_lists_duplicates_and_old_and_superseded_records_and_deletes_only_with_apply() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let rec = |id: &str, category: &str, title: &str, content: &str, created: &str| serde_json::json!({"id": id, "category": category, "title": title, "content": content, "created": created});
    // An exact duplicate (other spacing and case), a near duplicate, a session past 90 days, a
    // record superseded by name, and two that stay.
    plant(
        p,
        "a1.json",
        rec("dup000000old", "decision", "Use Redis", "Sessions live in Redis.", "2026-01-01T00:00:00Z"),
    );
    plant(
        p,
        "a2.json",
        rec("dup000000new", "decision", "use redis", "sessions  live in Redis.", "2026-02-01T00:00:00Z"),
    );
    let near = "The deploy pipeline runs the integration tests then pushes the image to the staging registry";
    plant(p, "b1.json", rec("near00000old", "convention", "Deploy pipeline order", near, "2026-01-01T00:00:00Z"));
    let nearer = format!("{near} first");
    plant(p, "b2.json", rec("near00000new", "convention", "Deploy pipeline order", &nearer, "2026-02-01T00:00:00Z"));
    plant(p, "c.json", rec("session00old", "session", "A session", "Asked about queues.", "2020-01-01T00:00:00Z"));
    plant(p, "d1.json", rec("queue0000sqs", "decision", "Queue", "Jobs go to SQS.", "2026-01-01T00:00:00Z"));
    let mut d2 = rec("queue000kafk", "decision", "Job runner", "Jobs go to Kafka now.", "2026-03-01T00:00:00Z");
    d2["supersedes"] = serde_json::json!(["queue0000sqs"]);
    plant(p, "d2.json", d2);
    plant(p, "e.json", rec("keep00000000", "note", "Staging host", "Staging runs on stg-2.", "2026-01-01T00:00:00Z"));

    let stats = json(&ok(p, &["stats", "--json"]));
    assert_eq!(stats["records"], 8);
    assert_eq!(stats["exact_duplicate_groups"], 1);
    assert!(stats["near_duplicate_groups"].as_u64().unwrap() >= 2, "{stats}");
    assert_eq!(stats["superseded"], 3, "{stats}");
    assert_eq!(stats["by_category"]["decision"], 4);
    assert_eq!(stats["oldest"], "2020-01-01T00:00:00Z");
    let text = ok(p, &["stats"]);
    assert!(text.contains("records     8 in 8 files") && text.contains("superseded  3"), "{text}");

    let before = files(p);
    let out = ok(p, &["gc"]);
    let line = |id: &str| out.lines().find(|l| l.contains(id)).unwrap_or_else(|| panic!("{id} not listed: {out}"));
    assert!(line("dup000000old").contains("exact duplicate of dup000000new"), "{out}");
    assert!(line("near00000old").contains("near duplicate of near00000new"), "{out}");
    assert!(line("session00old").contains("older than 90 days"), "{out}");
    assert!(line("queue0000sqs").contains("superseded by queue000kafk"), "{out}");
    for kept in ["dup000000new", "near00000new", "queue000kafk", "keep00000000"] {
        assert!(out.lines().all(|l| !l.trim_start().starts_with(kept)), "{kept}: {out}");
    }
    assert!(out.starts_with("would delete 4 of 8 records") && out.contains("nothing deleted"), "{out}");
    assert_eq!(files(p), before, "a dry run deletes nothing");
    let plan = json(&ok(p, &["gc", "--json"]));
    assert_eq!(plan["applied"], false);
    assert_eq!(plan["records"].as_array().unwrap().len(), 4);

    let out = ok(p, &["gc", "--apply"]);
    assert!(out.starts_with("deleted 4 of 8 records"), "{out}");
    let mut left = ids(&listed(p, &["--all"]));
    left.sort();
    assert_eq!(left, ["dup000000new", "keep00000000", "near00000new", "queue000kafk"]);
    assert_eq!(files(p).len(), 4);
    assert!(ok(p, &["gc"]).starts_with("nothing to delete"));
}

#[test]
fn superseded_records_are_hidden_unless_all() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let out = ok(p, &["add", "--title", "Queue", "--content", "Jobs go to SQS.", "--category", "decision"]);
    let old = out.split_whitespace().next().unwrap().to_string();
    let out = ok(
        p,
        &["add", "--title", "Job runner", "--content", "Kafka.", "--category", "decision", "--supersedes", &old[..5]],
    );
    let new = out.split_whitespace().next().unwrap().to_string();
    assert_eq!(json(&ok(p, &["show", &new, "--json"]))["supersedes"], serde_json::json!([old]));
    let (code, out, err) = memory(p, &["list"]);
    assert_eq!(code, 0);
    assert!(out.contains(&new) && !out.contains(&old), "{out}");
    assert!(err.contains("1 superseded record(s) not shown"), "{err}");
    let out = ok(p, &["list", "--all"]);
    assert!(out.lines().any(|l| l.starts_with(&old) && l.ends_with("[superseded]")), "{out}");
    assert!(ok(p, &["show", &old]).contains(&format!("superseded by {new}")));
}

#[test]
fn secrets_are_refused_or_redacted_and_unknown_ids_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let token = format!("ghp_{}", "a1B2c3D4e5F6".repeat(3));
    assert_eq!(token.len(), 40);

    // Mostly a secret: refused, nothing written.
    let (code, _, err) = memory(p, &["add", "--title", "CI token", "--content", &token]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("mostly a secret") && err.contains("GitHub token") && !err.contains(&token), "{err}");
    assert!(files(p).is_empty());
    let (code, _, err) = memory_with(p, &["add", "--title", "CI token"], Some(&format!("token: {token}\n")), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(files(p).is_empty());

    // A secret inside a real note: stored redacted, never as itself.
    let content = format!("The deploy job pushes images with {token} from the CI secrets store.");
    let out = ok(p, &["add", "--title", "How deploys push", "--content", &content]);
    let id = out.split_whitespace().next().unwrap().to_string();
    let saved = files(p);
    assert_eq!(saved.len(), 1);
    assert!(!saved[0].1.contains(&token) && saved[0].1.contains("[redacted]"), "{}", saved[0].1);
    assert!(!ok(p, &["show", &id]).contains(&token));
    assert!(!ok(p, &["export"]).contains(&token));
    // Not through an edit either.
    ok(
        p,
        &[
            "edit",
            &id,
            "--content",
            &format!("Pushes use {token} (rotated monthly by the platform team, kept in the vault)."),
        ],
    );
    assert!(!files(p)[0].1.contains(&token));
    // Nor through an import.
    let line = serde_json::json!({"title": "Imported token", "content": token}).to_string();
    let (code, _, err) = memory_with(p, &["import", "-"], Some(&line), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("line 1:") && err.contains("mostly a secret"), "{err}");

    // Unknown ids: exit 2, the id named.
    for args in [&["show", "deadbeef0000"][..], &["delete", "deadbeef0000"], &["edit", "deadbeef0000", "--title", "x"]]
    {
        let (code, _, err) = memory(p, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("deadbeef0000"), "{err}");
    }
    // delete with one unknown id among known ones deletes nothing.
    let (code, _, _) = memory(p, &["delete", &id, "deadbeef0000"]);
    assert_eq!(code, 2);
    assert_eq!(files(p).len(), 1);
    // Empty titles and bad categories.
    let (code, _, err) = memory(p, &["add", "--title", " ", "--content", "x"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = memory(p, &["add", "--title", "t", "--content", "x", "--category", "Bad Cat"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = memory(p, &["add", "--title", "t"]);
    assert_eq!(code, 2, "empty stdin is no content: {err}");
    assert_eq!(files(p).len(), 1);
}

#[test]
fn edit_opens_the_editor_and_refuses_an_invalid_edit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let out = ok(p, &["add", "--title", "Session store", "--content", "Sessions live in Memcached.", "--tag", "a"]);
    let id = out.split_whitespace().next().unwrap().to_string();
    let before = json(&ok(p, &["show", &id, "--json"]));
    let script = |name: &str, body: &str| {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_str().unwrap().to_string()
    };

    let sed = script("valkey.sh", r#"sed -i 's/Memcached/Valkey/' "$1""#);
    let (code, _, err) = memory_with(p, &["edit", &id], None, &[("EDITOR", &sed)]);
    assert_eq!(code, 0, "{err}");
    let after = json(&ok(p, &["show", &id, "--json"]));
    assert_eq!(after["content"], "Sessions live in Valkey.");
    assert_eq!((&after["id"], &after["created"], &after["tags"]), (&before["id"], &before["created"], &before["tags"]));
    assert_ne!(after["hash"], before["hash"]);
    // $VISUAL comes first.
    let (code, _, err) = memory_with(p, &["edit", &id], None, &[("EDITOR", "false"), ("VISUAL", &sed)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("unchanged"), "the second sed finds nothing to change: {err}");

    // Broken JSON, an empty title, a failing editor: clear errors, nothing changed.
    let broken = script("broken.sh", r#"sed -i 's/"title"/"title/' "$1""#);
    let (code, _, err) = memory_with(p, &["edit", &id], None, &[("EDITOR", &broken)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not valid JSON") && err.contains("nothing changed"), "{err}");
    remove_kept_edit(&err);
    let untitled = script("untitled.sh", r#"sed -i 's/"title": "Session store"/"title": ""/' "$1""#);
    let (code, _, err) = memory_with(p, &["edit", &id], None, &[("EDITOR", &untitled)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs a title"), "{err}");
    remove_kept_edit(&err);
    let (code, _, err) = memory_with(p, &["edit", &id], None, &[("EDITOR", "false")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nothing changed"), "{err}");
    assert_eq!(json(&ok(p, &["show", &id, "--json"])), after);
}

#[test]
fn capture_reads_a_transcript_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let lines = [
        r#"{"type":"user","sessionId":"s-cli-1","cwd":"/p","gitBranch":"main","message":{"content":"make the tests pass"},"timestamp":"2026-01-05T10:00:00Z"}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cd /p && mix test 2>&1"}}]},"timestamp":"2026-01-05T10:01:00Z"}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"Exit code 2\n** (CompileError) lib/a.ex:3: undefined function foo/0"}]},"timestamp":"2026-01-05T10:01:05Z"}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"The error is caused by a missing import of Foo. I'll add it."},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/p/lib/a.ex","old_string":"a","new_string":"b"}}]},"timestamp":"2026-01-05T10:02:00Z"}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]},"timestamp":"2026-01-05T10:02:01Z"}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"mix test"}}]},"timestamp":"2026-01-05T10:03:00Z"}"#,
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t3","content":"3 tests, 0 failures"}]},"timestamp":"2026-01-05T10:03:05Z"}"#,
    ];
    let transcript = dir.path().join("t.jsonl");
    std::fs::write(&transcript, lines.join("\n")).unwrap();
    let t = transcript.to_str().unwrap();
    let report = json(&ok(p, &["capture", t, "--reason", "clear", "--json"]));
    assert_eq!(report["session_id"], "s-cli-1");
    let written = report["written"].as_u64().unwrap();
    assert!(written >= 2, "a session record and a bugfix: {report}");
    let records = listed(p, &["--session", "s-cli"]);
    assert_eq!(records.len() as u64, written);
    assert!(records.iter().any(|r| r["category"] == "bugfix"), "{records:?}");
    assert!(records.iter().all(|r| r["source"] == "manual"));
    let out = ok(p, &["capture", t]);
    assert!(out.contains("0 written, 0 updated"), "{out}");
    let (code, _, err) = memory(p, &["capture", "missing.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing.jsonl"), "{err}");
}

#[test]
fn a_change_updates_the_projects_index() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("notes.md"), "# Notes\n\nThe build uses make.\n").unwrap();
    let (code, _, err) = engine(&["index", p.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    // From a subdirectory: the project root is the one holding .engine.
    let sub = p.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    let (code, out, err) = memory(
        &sub,
        &["add", "--title", "Quokka deploys", "--content", "Deploys go through the quokka pipeline.", "--tag", "ops"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".claude/memory/note-quokka-deploys-") || p.join(".claude/memory").is_dir(), "{out}");
    assert_eq!(files(p).len(), 1, "written under the project root, not the subdirectory");
    assert!(err.contains("updated"), "{err}");
    let search = |q: &str| {
        let (code, out, err) = engine(&["search", q, "--mode", "bm25", "--json"], Some(p));
        assert_eq!(code, 0, "{err}");
        json(&out)["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(search("quokka pipeline").iter().any(|path| path.starts_with(".claude/memory/")));
    // --no-reindex leaves it, and says so.
    let id = ok(p, &["list", "--json"]);
    let id = json(&id)[0]["id"].as_str().unwrap().to_string();
    let (code, _, err) = memory(p, &["delete", &id, "--no-reindex"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("not updated"), "{err}");
    assert!(!search("quokka pipeline").is_empty(), "still in the index until the next run");
    let (code, _, err) = engine(&["index", p.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    assert!(search("quokka pipeline").iter().all(|path| !path.starts_with(".claude/memory/")));
}

/// Removes the file an invalid edit was kept in, named in the error, so runs leave none behind.
fn remove_kept_edit(err: &str) {
    let path = err.split("the edit is kept in ").nth(1).and_then(|rest| rest.split(')').next());
    let path = path.unwrap_or_else(|| panic!("the error names the kept edit: {err}"));
    std::fs::remove_file(path.trim()).unwrap();
}
