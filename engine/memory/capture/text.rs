//! The rules capture reads a session by: which sentences state a decision, a convention or a
//! finding, which messages recap work, which names an edit brings in, which commands show a task
//! or rerun a failed one, and how texts are cut.

use crate::memory::category;
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// A sentence someone said, with who and when.
pub(super) struct Statement {
    pub text: String,
    pub user: bool,
    /// From a compaction summary.
    pub summary: bool,
    pub ts: String,
}

static CHOICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(decided|decide to|decision|chose|choose|going with|go with|opted|switch(ed|ing)?( .{1,40})? (to|from)|instead of|rather than|(we|i)('ll| will) use|let's use|replac(e|ed|ing) .{1,60} with|moved? .{1,40} (in)?to|in favou?r of)\b").expect("valid")
});
static REASON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(because|since|so that|to avoid|to keep|to prevent|due to|which (means|avoids|keeps|makes)|otherwise|that way)\b").expect("valid")
});
static RULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(please )?(always|never|don't|do not|make sure|remember to|we use|we don't|use .{1,40} (instead|rather|for all|everywhere)|prefer )|\b(convention|by convention|must always|must never|should always|should never)\b").expect("valid")
});
pub(super) static EXPLAINS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(the (issue|problem|error|cause|bug|fix|failure) (is|was)|because|caused by|fails? (because|since)|failing (because|since)|the fix|fixed (it|by)|root cause|needs? to be|was missing|is missing|wasn't|isn't)\b").expect("valid")
});
/// A summary's plans ("Optional Next Step: replace …"): what is still to do is not a decision.
static PLAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)next step|^(fix|add|update|replace|remove|implement|create|run|check|write|move|switch)\b")
        .expect("valid")
});
pub(super) static NOT_A_BUG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)sibling tool call errored|doesn't want to proceed|user rejected|exceeds maximum allowed tokens|file has not been read yet|file has been modified since|was interrupted|string to replace not found|found \d+ matches of the string").expect("valid")
});

static NARRATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(let me|let's|now let me|now i|now,? (let|update|add|run|check|create|fix|read|remove|rewrite|verify|stage|commit|push)|i'll|i will|i need to (read|check|look|see|run)|first,? |next,? |then,? |good[.,!]|great|perfect|ok(ay)?|all \d+ tests pass|compiles clean|clean compile|still compiling|committed|pushed)").expect("valid")
});

/// The lines an edit adds (`Edit`, `MultiEdit`, `Write`, `NotebookEdit`), trimmed, in order: those
/// of its new text that its old text does not have, long enough to say something (a value, a
/// setting, a call), short enough to be one statement.
pub(super) fn added_lines(input: &Value) -> Vec<String> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut pairs = vec![(text(input, "old_string"), text(input, "new_string"))];
    pairs.push((String::new(), text(input, "content")));
    pairs.push((String::new(), text(input, "new_source")));
    for e in input.get("edits").and_then(Value::as_array).into_iter().flatten() {
        pairs.push((text(e, "old_string"), text(e, "new_string")));
    }
    let mut out: Vec<String> = Vec::new();
    for (old, new) in &pairs {
        let before: BTreeSet<&str> = old.lines().map(str::trim).collect();
        for l in new.lines().map(str::trim) {
            let said = (8..=160).contains(&l.len()) && l.chars().filter(|c| c.is_alphanumeric()).count() >= 4;
            if said && !before.contains(l) && !out.iter().any(|o| o == l) {
                out.push(l.to_string());
            }
        }
    }
    out
}

static ANSWER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#""([^"]{3,400})"="([^"]{1,400})""#).expect("valid"));

/// The (question, answer) pairs of an `AskUserQuestion` result (`User has answered your
/// questions: "Q"="A". …`): what the user decided when asked.
pub(super) fn answered(output: &str) -> Vec<(String, String)> {
    ANSWER.captures_iter(output).map(|c| (c[1].trim().to_string(), c[2].trim().to_string())).collect()
}

/// Whether an assistant sentence states something found out rather than narrating the next step.
pub(super) fn is_finding(t: &str) -> bool {
    t.len() >= 40
        && t.len() <= 600
        && !t.ends_with(':')
        && !t.ends_with('?')
        && (!NARRATION.is_match(t) || REASON.is_match(t) || EXPLAINS.is_match(t))
}

/// Whether an assistant message is a recap of work done: long, and mostly a list.
pub(super) fn is_recap(t: &str) -> bool {
    let items = t.lines().filter(|l| {
        let l = l.trim_start();
        l.starts_with("- ")
            || l.starts_with("* ")
            || l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    });
    t.len() >= 400 && items.count() >= 3
}

/// The category of a statement worth its own record, if any.
pub(super) fn classify(s: &Statement) -> Option<&'static str> {
    let t = &s.text;
    if t.len() < 30 || t.len() > 500 || t.ends_with('?') || t.starts_with('`') {
        return None;
    }
    // A compaction summary already keeps only what mattered: a choice stated there is a
    // decision even without its reason.
    if CHOICE.is_match(t) && (s.summary && !PLAN.is_match(t) || REASON.is_match(t)) {
        return Some(category::DECISION);
    }
    // Rules come from the user: the assistant's "always"/"never" narrate its own steps.
    (s.user && RULE.is_match(t)).then_some(category::CONVENTION)
}

/// The sentences of a text: code blocks, tables and headings left out, lines joined, split after
/// `.`, `!` or `?` followed by a space and a capital or a backtick.
pub(super) fn sentences(text: &str) -> impl Iterator<Item = String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("```") {
            fenced = !fenced;
            prose.push('\n');
            continue;
        }
        if fenced || l.starts_with('|') || l.starts_with('#') || l.is_empty() {
            prose.push('\n');
            continue;
        }
        let l = l.trim_start_matches(['-', '*', '>', ' ']).trim();
        let l = l.split_once(". ").filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit())).map_or(l, |(_, r)| r);
        prose.push_str(l);
        // A line ending without punctuation is a list item or a heading of its own.
        prose.push(if l.ends_with(['.', '!', '?', ':', ',']) { ' ' } else { '\n' });
    }
    let mut out = Vec::new();
    for para in prose.split('\n') {
        let chars: Vec<char> = para.chars().collect();
        let mut start = 0;
        for i in 0..chars.len() {
            let end = matches!(chars[i], '.' | '!' | '?')
                && chars.get(i + 1) == Some(&' ')
                && chars.get(i + 2).is_some_and(|c| c.is_uppercase() || *c == '`');
            if end || i + 1 == chars.len() {
                let s: String = chars[start..=i].iter().collect::<String>().trim().to_string();
                if !s.is_empty() {
                    out.push(s);
                }
                start = i + 1;
            }
        }
    }
    out.into_iter()
}

/// Identifiers an edit adds (in its new text, not in the text it replaces): names of functions,
/// modules, options and packages: at least four characters, with a `_`, `-` or `.` or a capital
/// after the first letter (plain and capitalised words are prose, not names).
pub(super) fn added_names(input: &Value) -> BTreeSet<String> {
    static NAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-z_@:][A-Za-z0-9_]*(?:[.\-/][A-Za-z0-9_]+)*[!?]?").expect("valid"));
    let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let (mut new, mut old) =
        (text("new_string") + "\n" + &text("content") + "\n" + &text("new_source"), text("old_string"));
    for e in input.get("edits").and_then(Value::as_array).into_iter().flatten() {
        new.push_str(e.get("new_string").and_then(Value::as_str).unwrap_or(""));
        old.push_str(e.get("old_string").and_then(Value::as_str).unwrap_or(""));
    }
    let before: BTreeSet<&str> = NAME.find_iter(&old).map(|m| m.as_str()).collect();
    NAME.find_iter(&new)
        .map(|m| m.as_str().trim_start_matches(':'))
        .filter(|n| n.len() >= 4 && n.len() <= 60 && !before.contains(n))
        .filter(|n| n.contains(['_', '-', '.']) || n.chars().skip(1).any(|c| c.is_ascii_uppercase()))
        .filter(|n| n.chars().any(|c| c.is_ascii_alphabetic()))
        .map(str::to_string)
        .collect()
}

/// The task a command shows, when it is an issue tracker's view of one (`bd show ID`, `gh issue
/// view ID`, `gh pr view ID`, `glab issue view ID`, `jira issue view ID`): its id.
pub(super) fn tracked_task(command: &str) -> Option<String> {
    static VIEW: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:bd|beads|gh|glab|jira)\s+(?:(issue|pr|mr)\s+)?(?:show|view)\s+([A-Za-z0-9#]\S*)")
            .expect("valid")
    });
    let c = VIEW.captures(command)?;
    // An issue viewed by its URL is known by the URL's last part (`…/issues/12`: 12).
    let arg = c[2].trim_end_matches('/');
    let id = if arg.contains("://") { arg.rsplit('/').next()? } else { arg };
    // Issues, pull and merge requests are numbered apart: `issue 5` is not `mr 5`.
    Some(match c.get(1) {
        Some(kind) => format!("{} {id}", kind.as_str()),
        None => id.to_string(),
    })
}

/// A Bash command as it is worth listing: the first line, without `cd … &&`, output redirections
/// or extra spaces.
pub(super) fn normalise_command(command: &str) -> String {
    let mut c = command.lines().next().unwrap_or("").trim().to_string();
    while let Some(rest) = c.strip_prefix("cd ").and_then(|r| r.split_once("&&")).map(|(_, r)| r.trim().to_string()) {
        c = rest;
    }
    for tail in ["2>&1", "| head", "| tail", "| grep"] {
        if let Some(i) = c.find(tail) {
            c.truncate(i);
        }
    }
    c.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What identifies a call for "did the same thing pass later": the command, or tool and file.
pub(super) fn call_key(name: &str, input: &Value, cwd: Option<&str>) -> String {
    if name == "Bash" {
        return normalise_command(input.get("command").and_then(Value::as_str).unwrap_or(""));
    }
    match input.get("file_path").and_then(Value::as_str) {
        Some(p) => format!("{name} {}", relative(p, cwd)),
        None => name.to_string(),
    }
}

/// Whether a later call reruns a failed one: the same command, or a broader run of it (`mix test`
/// passing after `mix test test/a_test.exs` failed; at least a program and a subcommand).
pub(super) fn same_run(failed: &str, later: &str) -> bool {
    if failed == later {
        return true;
    }
    let (f, l): (Vec<&str>, Vec<&str>) = (failed.split_whitespace().collect(), later.split_whitespace().collect());
    l.len() >= 2 && f.len() > l.len() && f[..l.len()] == l[..]
}

/// The line of an error message that says what went wrong.
pub(super) fn first_error_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let telling = lines.iter().find(|l| {
        let l = l.to_lowercase();
        (l.contains("error")
            || l.contains("fail")
            || l.contains("fatal")
            || l.contains("panic")
            || l.contains("warning"))
            && !l.starts_with("exit code")
    });
    let line = telling.or_else(|| lines.iter().find(|l| !l.to_lowercase().starts_with("exit code"))).or(lines.first());
    line.map(|l| one_line(l)).unwrap_or_default()
}

/// `path` relative to the session's working directory when it is inside it.
pub(super) fn relative(path: &str, cwd: Option<&str>) -> String {
    cwd.and_then(|c| path.strip_prefix(c)).map_or(path, |r| r.trim_start_matches('/')).to_string()
}

pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `n` characters, cut at a word boundary with an ellipsis.
pub(super) fn clip(text: &str, n: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= n {
        return text.to_string();
    }
    let cut: String = text.chars().take(n.saturating_sub(1)).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > n / 2 => cut[..i].to_string(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// A statement as a record's title and the part of it the title could not hold (after `…`, empty
/// when the title holds it all): a record's body continues its title instead of repeating it.
pub(super) fn title_and_rest(text: &str, n: usize) -> (String, String) {
    let text = text.trim();
    if text.chars().count() <= n {
        return (text.to_string(), String::new());
    }
    let title = clip(text, n);
    // `clip` keeps a prefix of the text, less the punctuation and spaces at the cut.
    let shown = title.strip_suffix('…').unwrap_or(&title);
    let rest = text.get(shown.len()..).unwrap_or_default().trim_start_matches([',', ';', ':', ' ']);
    (title.clone(), format!("…{rest}"))
}

/// A compaction summary without Claude Code's framing ("This session is being continued …").
pub(super) fn strip_continuation(summary: &str) -> &str {
    let s = summary.trim();
    let s = s
        .strip_prefix("This session is being continued from a previous conversation that ran out of context.")
        .unwrap_or(s);
    let s = s.trim_start();
    let s = s.strip_prefix("The conversation is summarized below:").unwrap_or(s).trim();
    match s.find("\nPlease continue the conversation from where we left") {
        Some(i) => s[..i].trim_end(),
        None => s,
    }
}
