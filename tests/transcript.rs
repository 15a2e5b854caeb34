//! The transcript reader on real Claude Code sessions (the shared transcripts), whole, truncated
//! and blown up to the size of a long working day.

use crate::common::transcripts;
use engine::internals::transcript::{self, EventKind, ReadStats};
use std::io::Write;

const LONG: [&str; 2] = ["8463c716-a2ea-4c14-9efa-87158ebd9f20", "4d5611e5-241a-462a-8d15-5122611a9569"];

fn read_all(path: &std::path::Path) -> (Vec<EventKind>, ReadStats, transcript::SessionInfo) {
    let mut reader = transcript::open(path).unwrap();
    let events = reader.by_ref().map(|e| e.kind).collect();
    (events, reader.stats, reader.session)
}

#[test]
fn real_sessions_read_without_loss_or_noise() {
    for id in LONG {
        let (events, stats, session) = read_all(&transcripts().join(format!("{id}.jsonl")));
        assert_eq!((stats.invalid, stats.oversized, stats.unknown), (0, 0, 0), "{id}: {stats:?}");
        assert!(stats.lines > 1500, "{id}: {stats:?}");
        assert_eq!(session.session_id.as_deref(), Some(id));
        assert!(session.cwd.is_some() && session.git_branch.is_some(), "{session:?}");
        // Every call has its result, and the session's first prompt is the task it was given.
        let calls = events.iter().filter(|e| matches!(e, EventKind::ToolCall { .. })).count();
        let results = events.iter().filter(|e| matches!(e, EventKind::ToolResult { .. })).count();
        assert!(calls > 100 && calls == results, "{id}: {calls} calls, {results} results");
        let prompts: Vec<&String> =
            events.iter().filter_map(|e| if let EventKind::Prompt(p) = e { Some(p) } else { None }).collect();
        assert!(prompts[0].starts_with("Work on bead spotter-"), "{prompts:?}");
        // Notifications and wrappers are not prompts; the compaction summary is its own event.
        assert!(prompts.iter().all(|p| !p.starts_with('<') && !p.starts_with("This session is being continued")));
        let summaries: Vec<&String> =
            events.iter().filter_map(|e| if let EventKind::CompactSummary(s) = e { Some(s) } else { None }).collect();
        assert_eq!(summaries.len(), 1, "{id}");
        assert!(summaries[0].len() > 1000, "{id}: a summary of {} bytes", summaries[0].len());
        assert!(events.iter().any(|e| matches!(e, EventKind::AssistantText(_))));
    }
}

#[test]
fn a_transcript_cut_mid_line_loses_only_that_line() {
    let whole = std::fs::read(transcripts().join(format!("{}.jsonl", LONG[0]))).unwrap();
    let (all, _, _) = read_all(&transcripts().join(format!("{}.jsonl", LONG[0])));
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    // Halfway through some line, as when a session is still being written.
    let mid = whole.len() / 2;
    let start = whole[..mid].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    std::fs::write(&cut, &whole[..start + (mid - start).max(10)]).unwrap();
    let (events, stats, _) = read_all(&cut);
    assert_eq!(stats.invalid, 1, "{stats:?}");
    assert!(events.len() < all.len() && all.starts_with(&events[..events.len() - 1]));
}

#[test]
fn a_fifty_megabyte_transcript_streams() {
    let path = transcripts().join(format!("{}.jsonl", LONG[1]));
    let one = std::fs::read(&path).unwrap();
    let (once, _, _) = read_all(&path);
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let copies = (50 << 20) / one.len() + 1;
    let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    for _ in 0..copies {
        f.write_all(&one).unwrap();
    }
    f.flush().unwrap();
    drop(f);
    assert!(std::fs::metadata(&big).unwrap().len() >= 50 << 20);
    // Events are counted as they stream by, not collected.
    let mut reader = transcript::open(&big).unwrap();
    let n = reader.by_ref().count();
    assert_eq!(n, once.len() * copies);
    assert_eq!(reader.stats.invalid, 0);
}
