//! `SessionStart`: the index brought up to date and the session digest (the last session's record,
//! project decisions and conventions, files changed since), chosen by why the session started.

use super::{answer, reindex_unless_locked, take_pending, Outcome, Payload};
use crate::config::{HookConfig, Settings};
use crate::context::{clean, clean_text};
use crate::error::Result;
use crate::memory::{category, MemoryStore, Stored};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// File in the index directory with the document hashes seen at the last session start.
pub(crate) const SESSION_SNAPSHOT: &str = "session-docs.json";

/// File in the index directory with the ids of the captured memory records the last `startup`
/// saw.
const SESSION_RECORDS: &str = "session-records.json";

pub(super) fn on_session_start(payload: &Payload, index: &Path, settings: &Settings) -> Outcome {
    let source = Source::parse(payload.source.as_deref().unwrap_or("startup"));
    let mut notes = Vec::new();
    let mut tell = Vec::new();
    // The index catches up (edits recorded since, files changed outside the session) in a process
    // of its own: a pull that brought thousands of files must not hold the session up.
    take_pending(index);
    match reindex_unless_locked(index, &settings.hook) {
        Ok(true) => {}
        // The run holding the index may have walked past files changed since: the next prompt
        // starts another once it is done.
        Ok(false) => crate::integrations::prompt::defer_reindex(index),
        Err(e) => notes.push(format!("reindex skipped: {e}")),
    }
    if let Err(e) = crate::Models::locate() {
        tell.push(format!("no embedding model, so answers come from keyword search only: {e}"));
    }
    let budget = Duration::from_millis(settings.hook.session_start_budget_ms);
    let digest = within(budget, {
        let (index, settings, session) = (index.to_path_buf(), settings.clone(), payload.session_id.clone());
        move || {
            let root = index.parent().unwrap_or(&index).to_path_buf();
            session_digest(&index, &root, &settings, source, session.as_deref())
        }
    });
    let context = match digest {
        Some(Ok(digest)) => {
            if source == Source::Startup && digest.captured > 0 {
                tell.push(format!(
                    "{} memory records were captured from your last session into .claude/memory/ (review them; commit what the team should keep)",
                    digest.captured
                ));
            }
            digest.text
        }
        Some(Err(crate::Error::IndexCorrupt { reason, .. })) => {
            // The detached run started above rebuilds a damaged index by itself.
            tell.push(format!("the index is damaged ({reason}) and is being rebuilt in the background"));
            None
        }
        Some(Err(e)) => {
            notes.push(e.to_string());
            None
        }
        None => {
            notes.push(format!(
                "the digest was not ready within [hook] session_start_budget_ms ({} ms)",
                budget.as_millis()
            ));
            None
        }
    };
    let out = answer(context, notes);
    if tell.is_empty() {
        out
    } else {
        out.telling(tell.join("; "))
    }
}

/// Runs `work` in a thread and waits at most `budget` for it (`None`: late, or it panicked). A late
/// worker is left behind: the hook process ends with its answer ([`super::finish`]).
fn within<T: Send + 'static>(budget: Duration, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if let Ok(value) = crate::error::catch_panic(work) {
            let _ = tx.send(value);
        }
    });
    rx.recv_timeout(budget).ok()
}

/// Why a session started, as `SessionStart` says; it decides what the digest holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A new session: the last session's record, project knowledge, files changed since.
    Startup,
    /// A resumed session: its own records, files changed since.
    Resume,
    /// Right after a compaction: what was captured from this session before it, then project
    /// knowledge.
    Compact,
    /// After `/clear`: project knowledge only.
    Clear,
    /// A session forked from another: the conversation it continues is already in the model's
    /// context, so project knowledge and the files changed since, without a session's records.
    Fork,
}

impl Source {
    /// Unknown and missing sources are taken as `startup`.
    pub(crate) fn parse(s: &str) -> Source {
        match s {
            "resume" => Source::Resume,
            "compact" => Source::Compact,
            "clear" => Source::Clear,
            "fork" => Source::Fork,
            _ => Source::Startup,
        }
    }
}

/// What a session start hands over: the digest for the model, and how many records were captured
/// from sessions since the last one started (only counted for `startup`), for the user.
pub(crate) struct Digest {
    pub(crate) text: Option<String>,
    pub(crate) captured: usize,
}

/// The session digest, chosen by `source`: records of the last (`startup`) or this session
/// (`resume`, `compact`), then project knowledge (the `[hook] digest_categories`, newest first),
/// then the files changed since the last session started (`startup`, `resume`, `fork`). Superseded
/// records are left out; the whole stays within `[hook] digest_max_chars`, sized by whole
/// elements, never cut afterwards (a cut could split a tag).
pub(crate) fn session_digest(
    index: &Path,
    root: &Path,
    settings: &Settings,
    source: Source,
    session_id: Option<&str>,
) -> Result<Digest> {
    const OPEN: &str = "<memory-context kind=\"session\">\n";
    const CLOSE: &str = "</memory-context>\n";
    let config = &settings.hook;
    let all = MemoryStore::at_root(root).load()?;
    let captured = if source == Source::Startup { captured_since_last_session(index, &all) } else { 0 };
    let picked = pick_records(&all, source, session_id, config);
    let changes = matches!(source, Source::Startup | Source::Resume | Source::Fork);
    let room = if changes { config.digest_max_chars * 3 / 4 } else { config.digest_max_chars };
    let mut used = chars(OPEN) + chars(CLOSE);
    let mut body = String::new();
    for line in picked.iter().map(|s| record_line(s, root, settings)) {
        if used + chars(&line) <= room {
            used += chars(&line);
            body.push_str(&line);
        }
    }
    if changes {
        body.push_str(&changes_note(index, used, settings)?);
    }
    Ok(Digest { text: (!body.is_empty()).then(|| format!("{OPEN}{body}{CLOSE}")), captured })
}

/// Records captured from sessions (they carry a session id) that the last `startup` did not see;
/// remembers what this one sees. 0 the first time.
fn captured_since_last_session(index: &Path, all: &[Stored]) -> usize {
    let now: std::collections::BTreeSet<&str> =
        all.iter().filter(|s| s.record.session_id.is_some()).map(|s| s.record.id.as_str()).collect();
    let before: Option<std::collections::BTreeSet<String>> = swap_snapshot(&index.join(SESSION_RECORDS), &now);
    before.map_or(0, |before| now.iter().filter(|id| !before.contains(**id)).count())
}

/// Puts `now` in the snapshot file at `path` (atomically; a failed write only loses the next
/// comparison) and returns what the file held before: `None` when there was none or it was
/// unreadable.
fn swap_snapshot<T: serde::de::DeserializeOwned>(path: &Path, now: &impl serde::Serialize) -> Option<T> {
    let before = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok());
    if let Ok(json) = serde_json::to_string(now) {
        let _ = crate::files::atomic::write_atomic(path, json.as_bytes());
    }
    before
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The records a digest shows, in order: the session's own (or the last session's), then project
/// knowledge.
fn pick_records<'a>(
    all: &'a [Stored],
    source: Source,
    session_id: Option<&str>,
    config: &HookConfig,
) -> Vec<&'a Stored> {
    let gone = crate::memory::superseded(all);
    let mut live: Vec<&Stored> = all.iter().filter(|s| !gone.contains(&s.record.id)).collect();
    live.sort_by(|a, b| b.record.created.cmp(&a.record.created).then(a.path.cmp(&b.path)));
    let is_session = |s: &&Stored| s.record.category == category::SESSION;
    let of_this = |s: &&Stored| session_id.is_some() && s.record.session_id.as_deref() == session_id;
    // Within a session's records: what it did, what the model summed up, what it decided.
    let rank = |s: &Stored| match s.record.category.as_str() {
        category::SESSION => 0,
        category::SUMMARY => 1,
        category::DECISION => 2,
        category::CONVENTION => 3,
        category::BUGFIX => 4,
        _ => 5,
    };
    let mut picked: Vec<&Stored> = Vec::new();
    match source {
        Source::Startup => picked.extend(live.iter().find(|s| is_session(s) && !of_this(s))),
        Source::Resume | Source::Compact => {
            let mut own: Vec<&Stored> = live.iter().copied().filter(of_this).collect();
            own.sort_by_key(|s| rank(s));
            picked.extend(own);
        }
        Source::Clear | Source::Fork => {}
    }
    if source != Source::Resume {
        let taken: HashSet<&str> = picked.iter().map(|p| p.record.id.as_str()).collect();
        let wanted = |s: &&Stored| {
            config.digest_categories.iter().any(|c| category::same(c, &s.record.category))
                && !taken.contains(s.record.id.as_str())
        };
        let knowledge: Vec<&Stored> = live.iter().copied().filter(wanted).take(config.digest_records).collect();
        picked.extend(knowledge);
    }
    picked
}

/// One record of the digest as an element: category, path, title and the start of its content.
fn record_line(s: &Stored, root: &Path, settings: &Settings) -> String {
    let (r, c) = (&s.record, &settings.context);
    let path = s.path.strip_prefix(root).unwrap_or(&s.path).to_string_lossy();
    // A session or summary record is the story of a session: more of it is worth showing.
    let size = if matches!(r.category.as_str(), category::SESSION | category::SUMMARY) {
        settings.hook.digest_session_chars
    } else {
        c.summary_chars
    };
    // Secrets go before the summary cuts the content (a cut token no longer matches).
    let content = crate::context::visible(&r.content, false);
    let summary = crate::context::summary(&content, size);
    // Titles are cut where a reader expects it too, not mid-word.
    let title = crate::context::summary(&crate::context::visible(&r.title, false), c.title_chars);
    format!(
        "<memory-compact category=\"{}\" path=\"{}\" title=\"{}\">{}</memory-compact>\n",
        clean(&r.category, c.tag_chars, false),
        clean(&path, c.path_chars, false),
        clean(&title, c.title_chars, false),
        clean_text(&summary, size, false),
    )
}

/// The note listing the files changed since the last session started, within what is left of
/// `[hook] digest_max_chars` after `used`; empty when nothing changed or nothing fits.
fn changes_note(index: &Path, used: usize, settings: &Settings) -> Result<String> {
    let (max, c) = (settings.hook.digest_max_chars, &settings.context);
    // Only the file list needs the index's metadata (large on a large index).
    let generation = crate::index::store::current_generation(index)?
        .ok_or_else(|| crate::Error::IndexMissing { path: index.to_path_buf() })?;
    let changed = changed_since_last_session(index, &crate::index::store::read_meta(&generation)?);
    if changed.is_empty() {
        return Ok(String::new());
    }
    let head = format!("<memory-note>Changed since the last session ({} files): ", changed.len());
    let tail = "</memory-note>\n";
    let mut listed: Vec<String> = Vec::new();
    let mut note_chars = chars(&head) + chars(tail);
    for p in changed.iter().take(20) {
        let p = clean_text(p, c.path_chars, false);
        // Room for the path, its separator and the "and N more" line.
        if used + note_chars + chars(&p) + 2 + 24 > max {
            break;
        }
        note_chars += chars(&p) + 2;
        listed.push(p);
    }
    let more = changed.len() - listed.len();
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    if listed.is_empty() && used + note_chars + chars(&more) > max {
        return Ok(String::new());
    }
    Ok(format!("{head}{}{more}{tail}", listed.join(", ")))
}

/// Documents added, changed or removed since the snapshot taken at the last session start; takes
/// a new snapshot. The first session has no snapshot and reports nothing.
fn changed_since_last_session(index: &Path, meta: &crate::index::store::Meta) -> Vec<String> {
    let now: std::collections::BTreeMap<String, String> =
        meta.docs.values().map(|d| (d.path.clone(), d.hash.clone())).collect();
    let before: Option<std::collections::BTreeMap<String, String>> = swap_snapshot(&index.join(SESSION_SNAPSHOT), &now);
    let Some(before) = before else { return Vec::new() };
    let mut changed: Vec<String> =
        now.iter().filter(|(p, h)| before.get(*p) != Some(h)).map(|(p, _)| p.clone()).collect();
    changed.extend(before.keys().filter(|p| !now.contains_key(*p)).cloned());
    changed.sort();
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryRecord;
    use std::path::PathBuf;

    fn stored(category: &str, title: &str, session: &str, created: &str) -> Stored {
        let mut record = MemoryRecord::new(category, title, "content", title);
        record.session_id = Some(session.to_string());
        record.created = created.to_string();
        Stored { path: PathBuf::from(format!("{title}.json")), position: 0, in_file: 1, record }
    }

    #[test]
    fn a_digest_line_ends_at_a_word() {
        let settings = Settings::default();
        let mut s = stored(category::DECISION, "Sessions live in Redis", "x", "2026-01-01T00:00:00Z");
        let words = ["persistence", "restarted", "memcached", "sessions", "evicted"];
        s.record.content = (0..60).map(|i| words[i % words.len()]).collect::<Vec<_>>().join(" ");
        s.path = PathBuf::from("/p/.claude/memory/decision.json");
        let line = record_line(&s, Path::new("/p"), &settings);
        let text = line.split('>').nth(1).unwrap().trim_end_matches("</memory-compact");
        let last = text.strip_suffix('…').unwrap_or_else(|| panic!("cut with …: {line}")).rsplit(' ').next().unwrap();
        assert!(words.contains(&last), "{line}");
        assert!(text.chars().count() <= settings.context.summary_chars, "{line}");
    }

    #[test]
    fn each_source_picks_its_records() {
        let all = [
            stored(category::SESSION, "last session", "old", "2026-01-01T00:00:00Z"),
            stored(category::SUMMARY, "this session's summary", "now", "2026-01-02T00:00:00Z"),
            stored(category::DECISION, "a decision", "old", "2026-01-01T00:00:00Z"),
        ];
        let config = HookConfig::default();
        let titles = |source: &str| -> Vec<String> {
            pick_records(&all, Source::parse(source), Some("now"), &config)
                .iter()
                .map(|s| s.record.title.clone())
                .collect()
        };
        assert_eq!(titles("startup"), ["last session", "a decision"]);
        assert_eq!(titles("resume"), ["this session's summary"]);
        assert_eq!(titles("compact"), ["this session's summary", "a decision"]);
        assert_eq!(titles("clear"), ["a decision"]);
        // A fork continues a conversation the model already holds: no session's records.
        assert_eq!(titles("fork"), ["a decision"]);
        assert_eq!(Source::parse("something new"), Source::Startup);
    }
}
