//! The records a read session becomes, one function per kind: the session itself, compaction
//! summaries, recaps, findings, the names edits brought in, tracker tasks, decisions and
//! conventions, and bugs fixed.

use super::session::Session;
use super::text::{classify, clip, is_finding, one_line, strip_continuation, title_and_rest, Statement};
use super::Trigger;
use crate::memory::transcript::{SessionInfo, Todo};
use crate::memory::{category, MemoryRecord};
use std::collections::BTreeSet;

/// A record on its way out: when what it records happened, and the files it is about.
struct Draft {
    record: MemoryRecord,
    ts: String,
    files: Vec<String>,
}

fn draft(record: MemoryRecord, ts: &str, files: Vec<String>) -> Draft {
    Draft { record, ts: ts.to_string(), files }
}

/// How the records of one session are named.
struct Names {
    /// The session's id (`unknown` without one).
    sid: String,
    /// Its first 8 characters.
    short: String,
    /// The day the session started (`YYYY-MM-DD`).
    day: String,
}

impl Session<'_> {
    /// Every record of the session, sealed (secrets redacted).
    pub fn records(&self, info: &SessionInfo, trigger: Trigger, reason: Option<&str>) -> Vec<MemoryRecord> {
        let sid = info.session_id.clone().unwrap_or_else(|| "unknown".into());
        let names = Names { short: sid.chars().take(8).collect(), day: self.first.get(..10).unwrap_or("").into(), sid };
        let mut drafts: Vec<Draft> = self.session_record(info, &names, trigger, reason).into_iter().collect();
        drafts.extend(self.summary_records(&names));
        drafts.extend(self.recap_records(&names));
        drafts.extend(self.notes_records(&names));
        drafts.extend(self.changes_record(&names));
        drafts.extend(self.tail_record(&names));
        drafts.extend(self.answer_records(&names));
        drafts.extend(self.task_records(&names));
        drafts.extend(self.statement_records(&names));
        drafts.extend(self.bugfix_records());
        drafts.into_iter().map(|d| finish(d, info, trigger)).collect()
    }

    /// What the session asked, changed, ran, met and left open (updated in place at each capture).
    fn session_record(&self, info: &SessionInfo, n: &Names, trigger: Trigger, reason: Option<&str>) -> Option<Draft> {
        let config = self.config();
        if self.prompts.is_empty() && self.commands.is_empty() && self.created.is_empty() && self.edited.is_empty() {
            return None;
        }
        let title = format!(
            "Session {} on {}: {}",
            n.day,
            info.git_branch.as_deref().unwrap_or("no branch"),
            clip(self.prompts.first().map_or("", String::as_str), config.title_chars)
        );
        let ended = match (trigger, reason) {
            (Trigger::SessionEnd, Some(r)) => format!(", ended ({r})"),
            (Trigger::SessionEnd, None) => ", ended".to_string(),
            (Trigger::PreCompact, _) => ", captured before a compaction".to_string(),
            (Trigger::PostCompact, _) => ", captured after a compaction".to_string(),
            (Trigger::Manual, _) => String::new(),
        };
        let mut body = format!(
            "Session {}, {} to {} UTC{ended}.\n",
            n.short,
            self.first.get(..16).unwrap_or("?").replace('T', " "),
            self.last.get(11..16).unwrap_or("?"),
        );
        body.push_str(&self.asked());
        body.push_str(&listed(
            "Files created",
            &self.created.iter().cloned().collect::<Vec<_>>(),
            config.session_files,
        ));
        body.push_str(&listed("Files edited", &self.edited.iter().cloned().collect::<Vec<_>>(), config.session_files));
        let cmds: Vec<String> = self.commands.iter().map(|c| format!("`{}`", clip(c, 100))).collect();
        body.push_str(&listed("Commands run", &cmds, config.session_commands));
        body.push_str(&self.errors_met());
        body.push_str(&open_tasks(&self.todos));
        let files: Vec<String> =
            self.created.iter().chain(self.edited.iter()).take(config.session_files * 2).cloned().collect();
        let r = MemoryRecord::new(category::SESSION, &title, &body, &format!("session:{}", n.sid));
        Some(draft(r, &self.first, files))
    }

    /// The session record's list of prompts.
    fn asked(&self) -> String {
        let config = self.config();
        if self.prompts.is_empty() {
            return String::new();
        }
        let mut out = String::from("\nAsked:\n");
        for p in self.prompts.iter().take(config.session_prompts) {
            out.push_str(&format!("- {}\n", clip(&one_line(p), config.prompt_chars)));
        }
        if self.prompts.len() > config.session_prompts {
            out.push_str(&format!("- … and {} more prompts\n", self.prompts.len() - config.session_prompts));
        }
        out
    }

    /// The session record's list of errors, and whether a later run passed.
    fn errors_met(&self) -> String {
        if self.errors.is_empty() {
            return String::new();
        }
        let mut out = String::from("\nErrors met:\n");
        for e in self.errors.iter().take(self.config().session_errors) {
            out.push_str(&format!(
                "- {}: {} ({})\n",
                clip(&e.key, 100),
                clip(&e.message, 200),
                if e.resolved { "resolved: a later run passed" } else { "not resolved in this session" }
            ));
        }
        out
    }

    /// One record per compaction summary (the model wrote it: the best record there is).
    fn summary_records(&self, n: &Names) -> Vec<Draft> {
        let mut out = Vec::new();
        for (ts, summary) in &self.summaries {
            let body = strip_continuation(summary);
            let title =
                format!("What session {} did up to {} (compaction summary)", n.short, ts.get(..10).unwrap_or(&n.day));
            let seed = format!("summary:{}:{}", n.sid, crate::memory::content_hash("", "", body));
            out.push(draft(MemoryRecord::new(category::SUMMARY, &title, body, &seed), ts, Vec::new()));
        }
        out
    }

    /// The last `max_recaps` recaps of work done.
    fn recap_records(&self, n: &Names) -> Vec<Draft> {
        let mut out = Vec::new();
        for (ts, recap) in self.recaps.iter().rev().take(self.config().max_recaps) {
            let first_line = recap.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            let heading = clip(first_line.trim_matches(['*', '#', ' ']), self.config().title_chars);
            let title = format!("Recap in session {}: {heading}", n.short);
            out.push(draft(MemoryRecord::new(category::SUMMARY, &title, recap.trim(), ""), ts, Vec::new()));
        }
        out
    }

    /// What the assistant found out and explained, in order: the facts a later session asks
    /// about (why a test failed, what a framework does by itself) are mostly said only here.
    fn notes_records(&self, n: &Names) -> Vec<Draft> {
        let per = self.config().notes_per_record;
        let notes: Vec<&Statement> =
            self.statements.iter().filter(|s| !s.user && !s.summary && is_finding(&s.text)).collect();
        let mut out = Vec::new();
        for (part, group) in notes.chunks(per).enumerate() {
            let body = group.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("\n\n");
            let title = format!(
                "Findings in session {}{}: {}",
                n.short,
                if notes.len() > per { format!(" (part {})", part + 1) } else { String::new() },
                clip(&group[0].text, self.config().title_chars / 2)
            );
            let r = MemoryRecord::new(category::NOTE, &title, &body, &format!("notes:{}:{part}", n.sid));
            out.push(draft(r, &group[0].ts, Vec::new()));
        }
        out
    }

    /// The names the session's edits brought in, by file.
    fn changes_record(&self, n: &Names) -> Option<Draft> {
        let changed: Vec<String> = self
            .introduced
            .iter()
            .filter(|(_, names)| !names.is_empty())
            .map(|(file, names)| format!("{file}: {}", names.iter().cloned().collect::<Vec<_>>().join(", ")))
            .collect();
        if changed.is_empty() {
            return None;
        }
        let title = format!("Names the edits of session {} brought in, by file", n.short);
        let r = MemoryRecord::new(category::CHANGES, &title, &changed.join("\n\n"), &format!("changes:{}", n.sid));
        Some(draft(r, &self.first, self.introduced.keys().cloned().collect()))
    }

    /// The lines the edits added after the last compaction, by file: a session that ends is not
    /// compacted again, so no summary holds the values, settings and calls of its last stretch.
    fn tail_record(&self, n: &Names) -> Option<Draft> {
        let files: Vec<String> = self
            .tail
            .iter()
            .filter(|(_, lines)| !lines.is_empty())
            .map(|(file, lines)| format!("{file}:\n{}", lines.join("\n")))
            .collect();
        if files.is_empty() {
            return None;
        }
        let since = if self.summaries.is_empty() { "" } else { " after its last compaction" };
        let title = format!("Lines the edits of session {} added{since}, by file", n.short);
        let r = MemoryRecord::new(category::CHANGES, &title, &files.join("\n\n"), &format!("tail:{}", n.sid));
        let at = self.summaries.last().map_or(self.first.as_str(), |(ts, _)| ts.as_str());
        Some(draft(r, at, self.tail.keys().cloned().collect()))
    }

    /// What the user answered when the assistant asked: a decision in the user's own words.
    fn answer_records(&self, n: &Names) -> Vec<Draft> {
        let mut out = Vec::new();
        for (i, (ts, question, answer)) in self.answers.iter().enumerate() {
            let title = format!("Asked in session {}: {}", n.short, clip(question, self.config().title_chars));
            let body = format!("{question}\n\nThe user answered: {answer}");
            let seed = format!("answer:{}:{i}", n.sid);
            out.push(draft(MemoryRecord::new(category::DECISION, &title, &body, &seed), ts, Vec::new()));
        }
        out
    }

    /// The tasks as the tracker states them: what the session was asked to build, in the words
    /// (names, keys, exact behaviour) a later prompt about that work uses.
    fn task_records(&self, n: &Names) -> Vec<Draft> {
        let mut out = Vec::new();
        for task in &self.tasks {
            // The text was redacted whole when it was read, so its first line is too.
            let first_line = task.text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            let first_line = first_line.trim_start_matches(|c: char| !c.is_alphanumeric());
            // `gh … view` run without a terminal prints `title:\tThe title` first.
            let first_line = first_line.strip_prefix("title:").map_or(first_line, str::trim_start);
            // "○ app-7 · Add a debug view": the id is in the title already.
            let first_line = first_line
                .strip_prefix(task.id.as_str())
                .map_or(first_line, |rest| rest.trim_start_matches([' ', '·', ':', '-']));
            let title = format!("Task {}: {}", task.id, clip(first_line, self.config().title_chars));
            let seed = format!("task:{}:{}", n.sid, task.id);
            let mut record = MemoryRecord::new(category::TASK, &title, task.text.trim(), &seed);
            // What a tracker shows is someone's text, not the session's: it is kept as a quote.
            let by = task.author.as_ref().map(|a| format!(", by {a}")).unwrap_or_default();
            record.quoted = Some(format!("{} via {}{by}", task.id, task.tool));
            out.push(draft(record, &task.ts, Vec::new()));
        }
        out
    }

    /// Decisions (a choice and its reason) and conventions (a rule the user states).
    fn statement_records(&self, n: &Names) -> Vec<Draft> {
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        for s in &self.statements {
            if out.len() >= self.config().max_statements {
                break;
            }
            let Some(cat) = classify(s) else { continue };
            let (title, rest) = title_and_rest(&s.text, self.config().title_chars);
            if !seen.insert(title.to_lowercase()) {
                continue;
            }
            let who = match (s.user, s.summary) {
                (true, _) => "the user",
                (false, true) => "the compaction summary",
                (false, false) => "the assistant",
            };
            let when = s.ts.get(..10).unwrap_or(&n.day);
            let said = format!("(Said by {who} in session {}, {when}.)", n.short);
            let body = if rest.is_empty() { said } else { format!("{rest}\n\n{said}") };
            out.push(draft(MemoryRecord::new(cat, &title, &body, ""), &s.ts, Vec::new()));
        }
        out
    }

    /// A command that failed, the files edited and the explanation given before it passed. A
    /// failure that passed without an edit was a wrong command, not a bug.
    fn bugfix_records(&self) -> Vec<Draft> {
        let mut out = Vec::new();
        for e in self.errors.iter().filter(|e| e.resolved && e.command && !e.fix_files.is_empty()) {
            let title = format!("Fixed: {} failing ({})", clip(&e.key, 60), clip(&e.message, 60));
            let mut body = format!("`{}` failed: {}\n", clip(&e.key, 200), clip(&e.message, 400));
            if !e.explanation.is_empty() {
                body.push_str(&format!("\nCause and fix: {}\n", e.explanation.join(" ")));
            }
            body.push_str(&format!(
                "\nFixed by editing {}; the same command then passed.\n",
                e.fix_files.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
            ));
            let r = MemoryRecord::new(category::BUGFIX, &title, &body, "");
            out.push(draft(r, &e.timestamp, e.fix_files.iter().cloned().collect()));
        }
        out
    }
}

/// A draft as it is written: the session's id, the trigger, when, the files, the branch as a tag;
/// sealed (secrets redacted, hash computed).
fn finish(d: Draft, info: &SessionInfo, trigger: Trigger) -> MemoryRecord {
    let mut r = d.record;
    r.session_id = info.session_id.clone();
    r.source = trigger.as_str().to_string();
    if !d.ts.is_empty() {
        r.created = d.ts;
    }
    r.files = d.files;
    if let Some(b) = &info.git_branch {
        r.tags = vec![b.clone()];
    }
    r.seal();
    r
}

/// `label: a, b, c and N more.` on a line of its own (nothing when the list is empty).
fn listed(label: &str, items: &[String], n: usize) -> String {
    if items.is_empty() {
        return String::new();
    }
    let more = if items.len() > n { format!(" and {} more", items.len() - n) } else { String::new() };
    format!("\n{label}: {}{more}.\n", items.iter().take(n).cloned().collect::<Vec<_>>().join(", "))
}

/// The todos not completed, one line each.
fn open_tasks(todos: &[Todo]) -> String {
    let open: Vec<&Todo> = todos.iter().filter(|t| t.status != "completed").collect();
    if open.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nOpen tasks:\n");
    for t in open {
        out.push_str(&format!("- {} ({})\n", clip(&t.content, 200), t.status));
    }
    out
}
