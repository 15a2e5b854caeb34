//! Memory capture through the real binary: the shared Claude Code transcripts fed to `engine hook`
//! as `SessionEnd`, `PreCompact` and `PostCompact` events (whole, cut, broken, with planted secrets), the records
//! it writes checked on disk, and `SessionStart` giving each source its own digest.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const LONG: [&str; 2] = ["8463c716-a2ea-4c14-9efa-87158ebd9f20", "4d5611e5-241a-462a-8d15-5122611a9569"];

fn event(name: &str, cwd: &Path, session: &str, transcript: &Path, reason: &str) -> Vec<u8> {
    serde_json::json!({
        "hook_event_name": name, "cwd": cwd, "session_id": session,
        "transcript_path": transcript, "reason": reason, "trigger": reason
    })
    .to_string()
    .into_bytes()
}

/// Every record file under the project's memory directory: file name → its text.
fn records(root: &Path) -> BTreeMap<String, String> {
    let dir = root.join(".claude/memory");
    let Ok(entries) = std::fs::read_dir(&dir) else { return BTreeMap::new() };
    entries
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}

/// A project of one's own with no index (capture writes records all the same).
fn bare_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("engine.toml"), "").unwrap();
    dir
}

#[test]
fn session_end_captures_the_real_transcripts_once() {
    let p = bare_project();
    let t = transcripts();
    for id in LONG {
        let (code, out, err) =
            hook(&event("SessionEnd", p.path(), id, &t.join(format!("{id}.jsonl")), "logout"), &[], &[]);
        assert_eq!((code, out.as_str()), (0, ""), "{err}");
        assert!(err.contains("captured") && err.contains("new"), "{err}");
    }
    let first = records(p.path());
    let by_category = |c: &str| -> Vec<serde_json::Value> {
        first.values().map(|t| json(t)).filter(|v| v["category"] == c).collect()
    };
    for text in first.values() {
        let v = json(text);
        for field in ["id", "category", "title", "content", "hash", "session_id", "source", "created", "updated"] {
            assert!(v[field].as_str().is_some_and(|s| !s.is_empty()), "{field} missing: {text}");
        }
        assert_eq!(v["source"], "SessionEnd");
    }
    let sessions = by_category("session");
    assert_eq!(sessions.len(), 2, "one session record per session");
    let fum = sessions.iter().find(|s| s["session_id"] == LONG[0]).unwrap();
    let content = fum["content"].as_str().unwrap();
    assert!(content.contains("Work on bead spotter-fum"), "{content}");
    assert!(content.contains("lib/spotter/services/transcript_renderer.ex"), "{content}");
    assert!(content.contains("Commands run: `bd show spotter-fum`") && content.contains("ended (logout)"), "{content}");
    assert!(content.contains("secret_key_base") && content.contains("resolved"), "errors and their fate: {content}");
    assert!(!content.contains("/home/USER/.claude/plans"), "files outside the project are not listed: {content}");
    let summaries = by_category("summary");
    assert!(summaries.iter().any(|s| s["content"].as_str().unwrap().contains("Primary Request")), "{summaries:?}");
    let fixes = by_category("bugfix");
    assert!(fixes.iter().any(|f| f["content"].as_str().unwrap().contains("config/test.exs")), "{fixes:?}");
    assert!(!by_category("note").is_empty());

    // The same transcripts again: nothing new, not a byte changed.
    for id in LONG {
        let (code, _, err) =
            hook(&event("SessionEnd", p.path(), id, &t.join(format!("{id}.jsonl")), "logout"), &[], &[]);
        assert_eq!((code, err.as_str()), (0, ""));
    }
    assert_eq!(records(p.path()), first);
}

#[test]
fn pre_compact_then_session_end_updates_the_session_record_in_place() {
    let p = bare_project();
    let full = transcripts().join(format!("{}.jsonl", LONG[1]));
    let text = std::fs::read_to_string(&full).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = p.path().join("cut.jsonl");
    std::fs::write(&cut, lines[..lines.len() / 3].join("\n")).unwrap();
    let (code, _, err) = hook(&event("PreCompact", p.path(), LONG[1], &cut, "auto"), &[], &[]);
    assert_eq!(code, 0, "{err}");
    let before = records(p.path());
    let session_file = |r: &BTreeMap<String, String>| -> Vec<String> {
        r.iter().filter(|(_, t)| json(t)["category"] == "session").map(|(f, _)| f.clone()).collect()
    };
    assert_eq!(session_file(&before).len(), 1);
    assert!(before[&session_file(&before)[0]].contains("captured before a compaction"));
    let (code, _, err) = hook(&event("SessionEnd", p.path(), LONG[1], &full, "prompt_input_exit"), &[], &[]);
    assert_eq!(code, 0);
    assert!(err.contains("updated"), "the session record grows: {err}");
    let after = records(p.path());
    assert_eq!(session_file(&after), session_file(&before), "same record, same file");
    let session = json(&after[&session_file(&after)[0]]);
    assert!(session["content"].as_str().unwrap().contains("ended (prompt_input_exit)"));
    assert_eq!(session["created"], json(&before[&session_file(&before)[0]])["created"], "created is kept");
    // Records of the first part stay as they were, but for the session's running ones (its
    // session record, the last part of its notes, the names its edits brought in).
    for (name, text) in &before {
        let category = json(text)["category"].clone();
        if !["session", "note", "changes"].iter().any(|c| category == *c) {
            assert_eq!(after.get(name), Some(text), "{name} changed");
        }
    }
}

#[test]
fn broken_and_missing_transcripts_never_fail_the_hook_and_planted_secrets_never_reach_disk() {
    let p = bare_project();
    let short = std::fs::read_to_string(transcripts().join("short.jsonl")).unwrap();
    let token = "ghp_PlantedInTranscript0123456789abcdefghij";
    let planted = [
        serde_json::json!({"type":"user","sessionId":"s-x","message":{"content":format!("deploy with {token} and AKIAIOSFODNN7PLANTED please")},"timestamp":"2026-02-01T10:00:00Z"}),
        serde_json::json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"b1","name":"Bash","input":{"command":"psql postgres://admin:PlantedDbPass@db/app","description":"Connect to the production database as admin"}}]}}),
    ];
    let mut text = short.clone();
    text.push_str("this line is not JSON\n{\"type\":\"user\",\"message\":");
    text.push('\n');
    for v in &planted {
        text.push_str(&format!("{v}\n"));
    }
    text.push_str(r#"{"type":"assistant","message":{"content":[{"type":"text","text":"cut off"#);
    let broken = p.path().join("broken.jsonl");
    std::fs::write(&broken, text).unwrap();
    let (code, out, err) = hook(&event("SessionEnd", p.path(), "s-x", &broken, "other"), &[], &[]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("captured"), "{err}");
    let written = records(p.path());
    assert!(!written.is_empty());
    for text in written.values() {
        for secret in [token, "AKIAIOSFODNN7PLANTED", "PlantedDbPass"] {
            assert!(!text.contains(secret), "{secret} reached disk: {text}");
        }
    }
    assert!(written.values().any(|t| t.contains("deploy with")), "the text around the secrets is kept");

    let missing = p.path().join("no-such.jsonl");
    let (code, out, err) = hook(&event("PreCompact", p.path(), "s-y", &missing, "manual"), &[], &[]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.contains("capture failed") && err.contains("no-such.jsonl"), "{err}");
    let no_path = serde_json::json!({"hook_event_name":"SessionEnd","cwd":p.path(),"session_id":"s-z"}).to_string();
    let (code, _, err) = hook(no_path.as_bytes(), &[], &[]);
    assert_eq!(code, 0);
    assert!(err.contains("without a transcript_path"), "{err}");
    assert_eq!(records(p.path()), written, "nothing else written");
}

/// A copy of sample/ with an index, as a user's project.
fn indexed_project() -> tempfile::TempDir {
    project("[hook]\ndaemon = false\ndeadline_ms = 600000\n")
}

#[test]
fn session_start_gives_each_source_its_own_digest() {
    let p = indexed_project();
    let told = |session: &str| {
        let v = serde_json::json!({"hook_event_name":"SessionStart","source":"startup","cwd":p.path(),"session_id":session});
        let (code, out, err) = hook(v.to_string().as_bytes(), &[], &[]);
        assert_eq!(code, 0, "{err}");
        let out = serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        out["systemMessage"].as_str().map(str::to_string)
    };
    assert_eq!(told("first-session"), None, "nothing captured yet: nothing to tell");
    let transcript: PathBuf = transcripts().join(format!("{}.jsonl", LONG[0]));
    let (code, _, err) = hook(&event("PreCompact", p.path(), LONG[0], &transcript, "auto"), &[], &[]);
    assert_eq!(code, 0, "{err}");
    // The next session tells the user where the captured records went, once.
    let message = told("second-session").expect("the captured records are announced");
    assert!(message.contains("memory records were captured from your last session into .claude/memory/"), "{message}");
    assert_eq!(told("third-session"), None);
    let start = |source: &str, session: &str| {
        let v =
            serde_json::json!({"hook_event_name":"SessionStart","source":source,"cwd":p.path(),"session_id":session});
        let (code, out, err) = hook(v.to_string().as_bytes(), &["--plain"], &[]);
        assert_eq!(code, 0, "{err}");
        out
    };
    // A new session: the last session's record first, then the project's decisions.
    let out = start("startup", "next-session");
    let session_at = out.find("category=\"session\"").unwrap_or_else(|| panic!("no session record: {out}"));
    let decision_at = out.find("category=\"decision\"").unwrap_or_else(|| panic!("no decisions: {out}"));
    assert!(session_at < decision_at, "{out}");
    assert!(out.contains("spotter-fum"), "{out}");
    assert!(!out.contains("category=\"summary\""), "another session's summary is not startup's business: {out}");
    // Right after a compaction of that session: what was captured from it, then knowledge.
    let out = start("compact", LONG[0]);
    let own = out.find("category=\"session\"").unwrap_or_else(|| panic!("{out}"));
    let summary = out.find("category=\"summary\"").unwrap_or_else(|| panic!("its summary: {out}"));
    assert!(own < summary, "the session record first: {out}");
    let knowledge = out.find("Moved sessions from Memcached").unwrap_or(usize::MAX);
    assert!(summary < knowledge, "its own records before project knowledge: {out}");
    // Resuming it: its own records, no project knowledge beyond them.
    let out = start("resume", LONG[0]);
    assert!(out.contains("category=\"session\"") && !out.contains("Moved sessions from Memcached"), "{out}");
    // Another session resumed: none of these records.
    let out = start("resume", "someone-else");
    assert!(!out.contains("category=\"session\""), "{out}");
    // After /clear: project knowledge only.
    let out = start("clear", LONG[0]);
    assert!(out.contains("category=\"decision\"") && !out.contains("category=\"session\""), "{out}");
    for out in [start("startup", "x"), start("compact", LONG[0])] {
        assert!(out.chars().count() <= 3000 + 64, "within [hook] digest_max_chars: {}", out.chars().count());
    }
}

#[test]
fn a_newer_record_outranks_the_one_it_supersedes() {
    // The golden memory set's records, three superseded pairs among them (by `supersedes`, and
    // by a newer record of the same category and title).
    let p = tempfile::tempdir().unwrap();
    copy_dir(&root().join("golden/memory/corpus/.claude"), &p.path().join(".claude"));
    let (code, _, err) = engine(&["index", p.path().to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    for (query, newer, older) in [
        ("when is the weekly design review?", "design-review-moved-to-thursdays", "design-review-slot-2025-02"),
        (
            "what's the oldest iOS version the app still supports?",
            "ios-minimum-version-2025-10",
            "ios-minimum-version-2025-01",
        ),
        ("what time is standup and where?", "standup-async-2025-11", "standup-time-2025-03"),
    ] {
        for mode in ["hybrid", "bm25", "vector"] {
            let (code, out, err) = engine(&["search", query, "--mode", mode, "--json", "-k", "20"], Some(p.path()));
            assert_eq!(code, 0, "{err}");
            let paths: Vec<String> = json(&out)["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["path"].as_str().unwrap().to_string())
                .collect();
            let rank = |name: &str| paths.iter().position(|p| p.contains(name));
            let new = rank(newer).unwrap_or_else(|| panic!("{mode}: {newer} not found for {query:?}: {paths:?}"));
            assert!(rank(older).is_none_or(|old| new < old), "{mode}: {older} above {newer}: {paths:?}");
        }
    }
}

#[test]
fn a_project_that_turned_capture_off_gets_nothing_even_before_it_has_an_index() {
    let p = bare_project();
    std::fs::write(p.path().join("engine.toml"), "[capture]\nenabled = false\n").unwrap();
    let transcript = transcripts().join("short.jsonl");
    let (code, out, err) = hook(&event("SessionEnd", p.path(), "s-off", &transcript, "logout"), &[], &[]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    assert!(records(p.path()).is_empty());
}

/// Issue 36: the summary `PostCompact` hands over is a record at once (before the session ends),
/// and the same summary met again in the transcript, wrapped in Claude Code's preamble, is the
/// same record, not a second one.
#[test]
fn post_compact_keeps_the_summary_it_hands_over_once() {
    let p = bare_project();
    let short = transcripts().join("short.jsonl");
    let summary = "Primary Request and Intent: zebra-striped rows in the session table.\n\
                   Key decision: the stripes are drawn by CSS nth-child, because the rows re-render on every event.";
    let post = |transcript: &Path| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&event("PostCompact", p.path(), "s", transcript, "auto")).unwrap();
        v["compact_summary"] = summary.into();
        hook(v.to_string().as_bytes(), &[], &[])
    };
    let summaries = |root: &Path| -> Vec<serde_json::Value> {
        records(root).values().map(|t| json(t)).filter(|v| v["category"] == "summary").collect()
    };
    let (code, out, err) = post(&short);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let found = summaries(p.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0]["content"].as_str().unwrap().contains("nth-child"), "{found:?}");
    assert_eq!(found[0]["source"], "PostCompact");
    let first = records(p.path());
    let (code, _, err) = post(&short);
    assert_eq!((code, err.as_str()), (0, ""), "the same event again writes nothing");
    assert_eq!(records(p.path()), first);

    // The transcript now holds the compaction: its summary is the one already kept.
    let compacted = p.path().join("compacted.jsonl");
    let line = serde_json::json!({
        "type": "user", "isCompactSummary": true, "sessionId": "55604662-cf2a-4331-851a-ec234028f8ca",
        "timestamp": "2026-02-10T21:20:00.000Z",
        "message": {"role": "user", "content": format!(
            "This session is being continued from a previous conversation that ran out of context. \
             The conversation is summarized below:\n{summary}\nPlease continue the conversation from where we left it off."
        )}
    });
    let text = std::fs::read_to_string(&short).unwrap();
    std::fs::write(&compacted, format!("{}\n{line}\n", text.trim_end())).unwrap();
    let (code, _, err) = post(&compacted);
    assert_eq!(code, 0, "{err}");
    let found = summaries(p.path());
    assert_eq!(found.len(), 1, "one record for one summary: {found:?}");
}
