//! Capture: a Claude Code transcript turned into memory records by rules, without a model. Runs on
//! `PreCompact`, `PostCompact` and `SessionEnd`, so what a session asked, changed and decided
//! outlives its context window.
//!
//! It writes, for the session so far:
//! - one `session` record (updated in place at each capture): the prompts, files created and
//!   edited, commands run, errors met and whether a later run passed, open todos, why it ended;
//! - a `summary` record per compaction summary the transcript holds (the model wrote it: the best
//!   record there is), and for the one `PostCompact` hands over (`compact_summary`) when the
//!   transcript does not hold it yet;
//! - `decision` records: sentences of the user or the assistant that state a choice together with
//!   its reason ("switched to X because …");
//! - `convention` records: rules the user states ("always …", "never …", "we use …");
//! - `bugfix` records: a command that failed, the files edited and the explanation given before
//!   the same command passed.
//!
//! Every text goes through secret redaction before it is written ([`MemoryRecord::seal`]); ids are
//! derived from the session and the content, so capturing the same transcript twice writes
//! nothing.

mod records;
mod session;
mod text;

use crate::config::CaptureConfig;
use crate::error::Result;
use crate::memory::transcript::{ReadStats, SessionInfo, TranscriptReader};
use crate::memory::{Added, MemoryRecord, MemoryStore};
use session::Session;
use std::io::BufRead;
use std::path::Path;

/// The hook event a capture runs for; it becomes the records' `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Before Claude Code compacts the context.
    PreCompact,
    /// After it compacted, with the summary it wrote.
    PostCompact,
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
            Trigger::PostCompact => "PostCompact",
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
    capture_with_summary(transcript, root, trigger, reason, None, config)
}

/// [`capture`], and `summary` (the compaction summary `PostCompact` hands over) taken as the
/// session's latest compaction summary unless the transcript already holds it.
pub fn capture_with_summary(
    transcript: &Path,
    root: &Path,
    trigger: Trigger,
    reason: Option<&str>,
    summary: Option<&str>,
    config: &CaptureConfig,
) -> Result<CaptureReport> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(config.deadline_ms);
    let reader = crate::memory::transcript::open(transcript)?.until(deadline);
    let found = extract_with_summary(reader, trigger, reason, summary, config);
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

/// Reads a transcript's events into records (sealed, not written): [`extract_with_summary`]
/// without a summary from outside, as the tests read their transcripts.
#[cfg(test)]
fn extract<R: BufRead>(
    reader: TranscriptReader<R>,
    trigger: Trigger,
    reason: Option<&str>,
    config: &CaptureConfig,
) -> Capture {
    extract_with_summary(reader, trigger, reason, None, config)
}

/// Reads a transcript's events into records (sealed, not written), and a compaction summary
/// from outside the transcript if there is one: it comes after the transcript's events, dated with the last of them, unless a summary the transcript holds
/// already says it (Claude Code writes the summary into the transcript too, wrapped in a preamble;
/// the hook may run before or after that line is written).
pub fn extract_with_summary<R: BufRead>(
    mut reader: TranscriptReader<R>,
    trigger: Trigger,
    reason: Option<&str>,
    summary: Option<&str>,
    config: &CaptureConfig,
) -> Capture {
    let mut session = Session::new(config);
    while let Some(event) = reader.next() {
        session.event(event, reader.session.cwd.as_ref());
    }
    if let Some(summary) = summary.map(text::strip_continuation).filter(|s| !s.is_empty()) {
        let known = session.summaries.iter().any(|(_, s)| text::strip_continuation(s).contains(summary));
        if !known {
            let kind = crate::memory::transcript::EventKind::CompactSummary(summary.to_string());
            let timestamp = Some(session.last.clone()).filter(|t| !t.is_empty());
            session.event(crate::memory::transcript::Event { timestamp, kind }, reader.session.cwd.as_ref());
        }
    }
    let records = session.records(&reader.session, trigger, reason);
    Capture { records, stats: reader.stats.clone(), session: reader.session.clone() }
}

#[cfg(test)]
mod tests {
    use super::text::*;
    use super::*;
    use crate::memory::category;
    use std::collections::BTreeSet;

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

    /// Issue 38: a decision's body held its title again, word for word.
    #[test]
    fn a_decisions_body_continues_its_title_instead_of_repeating_it() {
        let short = "We switched the session store to Redis because restarts logged everyone out.";
        let long = format!(
            "We moved the thumbnail jobs to the worker pool because {} kept blocking uploads.",
            "the web process ".repeat(8)
        );
        let line = |text: &str, ts: &str| {
            serde_json::json!({"type":"assistant","message":{"content":[{"type":"text","text":text}]},"timestamp":ts})
                .to_string()
        };
        let text = [
            r#"{"type":"user","sessionId":"s-3","cwd":"/p","message":{"content":"tidy up"},"timestamp":"2026-01-05T10:00:00Z"}"#.to_string(),
            line(short, "2026-01-05T10:01:00Z"),
            line(&long, "2026-01-05T10:02:00Z"),
        ]
        .join("\n");
        let config = CaptureConfig::default();
        let c =
            extract(TranscriptReader::new(std::io::Cursor::new(text.as_bytes())), Trigger::SessionEnd, None, &config);
        let decisions: Vec<&MemoryRecord> = c.records.iter().filter(|r| r.category == category::DECISION).collect();
        assert_eq!(decisions.len(), 2, "{:?}", c.records);
        let whole = decisions.iter().find(|r| r.title == short).expect("the short one is its title");
        assert!(
            !whole.content.contains("Redis") && whole.content.starts_with("(Said by the assistant"),
            "{}",
            whole.content
        );
        let cut = decisions.iter().find(|r| r.title.ends_with('…')).expect("the long one is clipped");
        let shown = cut.title.trim_end_matches('…');
        assert!(long.starts_with(shown) && !cut.content.contains(shown), "{cut:?}");
        let rest = cut.content.lines().next().unwrap().trim_start_matches('…');
        assert!(long.ends_with(rest) && rest.ends_with("kept blocking uploads."), "{}", cut.content);
        assert_eq!(format!("{shown} {rest}"), long, "title and body hold the statement once");
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

    /// Issue 36: values an edit set after the last compaction (a port, a grid) and what the user
    /// answered when asked were in no record: no summary covers a session's last stretch.
    #[test]
    fn lines_edits_added_after_the_last_compaction_and_the_users_answers_are_kept() {
        let edit = |id: &str, old: &str, new: &str, ts: &str| {
            serde_json::json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":id,"name":"Edit",
                "input":{"file_path":"/p/config/test.exs","old_string":old,"new_string":new}}]},"timestamp":ts})
            .to_string()
        };
        let ask = serde_json::json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"q",
            "name":"AskUserQuestion","input":{"questions":[]}}]},"timestamp":"2026-01-05T11:05:00Z"});
        let text = [
            r#"{"type":"user","sessionId":"s-3","cwd":"/p","message":{"content":"fix the test config"},"timestamp":"2026-01-05T10:00:00Z"}"#.to_string(),
            edit("e1", "http: [port: 4000]", "http: [port: 4001]", "2026-01-05T10:01:00Z"),
            r#"{"type":"user","isCompactSummary":true,"sessionId":"s-3","message":{"content":"Summary: moved the test port to 4001."},"timestamp":"2026-01-05T11:00:00Z"}"#.to_string(),
            edit("e2", "http: [port: 4001]", "http: [port: 4002],\nserver: false\nend", "2026-01-05T11:01:00Z"),
            ask.to_string(),
            tool_result("q", "User has answered your questions: \"Skip the pre-commit hook?\"=\"main was clean; fix the issues\". You can now continue.", false, "2026-01-05T11:05:09Z"),
        ]
        .join("\n");
        let c = extract(
            TranscriptReader::new(std::io::Cursor::new(text.as_bytes())),
            Trigger::SessionEnd,
            None,
            &CaptureConfig::default(),
        );
        let tail = c.records.iter().find(|r| r.title.contains("after its last compaction")).expect("a tail record");
        assert_eq!(tail.content, "config/test.exs:\nhttp: [port: 4002],\nserver: false", "{}", tail.content);
        assert_eq!(tail.created, "2026-01-05T11:00:00Z");
        assert!(!c.records.iter().any(|r| r.content.contains("port: 4001]") && r.category == category::CHANGES));
        let answer = c.records.iter().find(|r| r.category == category::DECISION).expect("the answer");
        assert_eq!(answer.title, "Asked in session s-3: Skip the pre-commit hook?");
        assert!(answer.content.ends_with("The user answered: main was clean; fix the issues"), "{}", answer.content);
        let limited = CaptureConfig { tail_lines_per_file: 1, ..CaptureConfig::default() };
        let c =
            extract(TranscriptReader::new(std::io::Cursor::new(text.as_bytes())), Trigger::SessionEnd, None, &limited);
        let tail = c.records.iter().find(|r| r.title.contains("after its last compaction")).unwrap();
        assert_eq!(tail.content, "config/test.exs:\nhttp: [port: 4002],");
    }

    /// One example of each family of secret the redaction knows (checked below), and the part
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
        for (secret, _) in PLANTED {
            assert!(!crate::secrets::kinds(secret).is_empty(), "{secret:?} is not caught");
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
            ["session", "summary", "bugfix", "decision", "note", "task"].iter().all(|k| kinds.contains(k)),
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
