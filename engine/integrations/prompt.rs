//! The prompt pipeline the hook, its daemon and `engine eval` share: what to do with a prompt
//! before any search (the gate), the context a prompt gets, a project's settings, and bringing its
//! index up to date. One place, so the figures `engine eval` prints are the hook's.

use crate::config::{HookConfig, Mode, Settings};
use crate::error::Result;
use crate::search::{Engine, SearchRequest};
use crate::secrets;
use std::path::{Path, PathBuf};

/// Prompts that get no context: slash commands, greetings and acknowledgements, a word or two.
pub fn trivial(prompt: &str, config: &HookConfig) -> bool {
    let p = prompt.trim();
    if p.starts_with('/') {
        return true;
    }
    let words: Vec<String> =
        p.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    if words.len() < config.min_words {
        // A bare identifier (`revoke_all_for_user`, `SessionStore::load`) or command-line flag
        // (`--pre-glob`, `-uuu`) is a real question.
        let flag = p.split_whitespace().any(|w| {
            let name = w.trim_start_matches('-');
            w.starts_with('-') && name.len() + 2 >= w.len() && name.chars().next().is_some_and(char::is_alphabetic)
        });
        return !flag && crate::search::intent::classify(p).symbols.is_empty();
    }
    const SMALL_TALK: [&str; 22] = [
        "hi", "hello", "hey", "thanks", "thank", "you", "ok", "okay", "yes", "no", "sure", "great", "cool", "nice",
        "continue", "go", "on", "ahead", "please", "lgtm", "done", "good",
    ];
    words.iter().all(|w| SMALL_TALK.contains(&w.as_str()))
}

/// What the hook does with a prompt before any search.
#[derive(Debug, PartialEq)]
pub(crate) enum Gate {
    /// Search for this: the prompt with secrets removed, cut at a word boundary to
    /// `max_query_chars`.
    Search(String),
    /// Nothing to add (a trivial prompt), nothing to say.
    Skip,
    /// Not searched, and why.
    Refuse(String),
}

/// Decides what to do with a prompt; the hook and `engine eval`'s hook figures both go through it.
pub fn gate(prompt: &str, config: &HookConfig) -> Gate {
    // What the user marked private is neither searched for nor part of a refusal's reasons.
    let prompt = &*secrets::without_private(prompt, " ");
    let (clean, secret) = secrets::redact(prompt);
    if secrets::mostly(prompt, secret) {
        return Gate::Refuse(format!(
            "the prompt is mostly a secret ({}); not searched",
            secrets::kinds(prompt).join(", ")
        ));
    }
    if trivial(prompt, config) {
        return Gate::Skip;
    }
    let mut q: String = clean.chars().take(config.max_query_chars).collect();
    if q.len() < clean.len() {
        // Cut at a word boundary.
        if let Some(at) = q.rfind(char::is_whitespace) {
            q.truncate(at);
        }
    }
    if q.trim().is_empty() {
        Gate::Skip
    } else {
        Gate::Search(q)
    }
}

/// Context for one query, as the hook and the daemon compute it: hybrid search, the tiered block,
/// secrets removed from its text, capped at `max_chars`. `None` when nothing relevant was found.
/// The search backend, if any, is waited for until `deadline` at most.
pub(crate) fn prompt_context(
    engine: &Engine,
    query: &str,
    deadline: Option<std::time::Instant>,
) -> Result<Option<crate::context::ContextBlock>> {
    let mut req = request(query, &engine.settings.hook);
    req.deadline = deadline;
    let resp = engine.search_with(&req)?;
    Ok(block_for(engine, &resp))
}

/// The search the hook makes for a prompt: hybrid, `[hook] k` hits, reranked only as `[hook]
/// rerank` says (not `[rerank] mode`: a cross-encoder costs a second per prompt).
pub(crate) fn request(query: &str, config: &crate::config::HookConfig) -> SearchRequest {
    let mut req = SearchRequest::new(query, config.k, Mode::Hybrid);
    req.rerank = Some(config.rerank);
    // The context block cuts its own excerpts from each hit's text, cleaning what it shows.
    req.snippets = false;
    // A prompt is answered from the local index when the search backend is down.
    req.local_fallback = true;
    req
}

/// The hook's context block of a search already made: tiered, then packed again into a smaller
/// budget while it is longer than `[hook] max_chars`.
pub(crate) fn block_for(engine: &Engine, resp: &crate::SearchResponse) -> Option<crate::context::ContextBlock> {
    let config = &engine.settings.hook;
    let mut context = engine.settings.context.clone();
    for _ in 0..4 {
        // Secrets are already out: the block cleans every string it takes in.
        let block = engine.context_with(resp, &context);
        if block.shown.is_empty() {
            return None;
        }
        let chars = block.text.chars().count();
        if chars <= config.max_chars {
            return Some(block);
        }
        // Too long for the client: shrink the token budget in proportion and pack again.
        let ratio = config.max_chars as f32 / chars as f32;
        context.budget_tokens = ((context.budget_tokens as f32 * ratio * 0.95) as usize).max(50);
    }
    None
}

impl Engine {
    /// What the Claude Code hook adds to this prompt: `None` for a trivial prompt (small talk, a
    /// slash command), one that is mostly a secret, or one nothing in the index answers; else
    /// the tiered context block (secrets redacted, markup escaped, within `[hook] max_chars`).
    pub fn context_for_prompt(&self, prompt: &str) -> Result<Option<crate::context::ContextBlock>> {
        match gate(prompt, &self.settings.hook) {
            Gate::Search(query) => prompt_context(self, &query, None),
            Gate::Skip | Gate::Refuse(_) => Ok(None),
        }
    }
}

/// A project's config file: `engine.toml` next to its index directory.
pub(crate) fn project_config(index_dir: &Path) -> PathBuf {
    index_dir.parent().unwrap_or(index_dir).join("engine.toml")
}

/// Settings for a project, leniently ([`Settings::load`]): an invalid section falls back to its
/// defaults, a file that cannot be read or parsed to all defaults; the warnings say which.
pub(crate) fn project_settings(index_dir: &Path) -> (Settings, Vec<String>) {
    match Settings::load(&project_config(index_dir)) {
        Ok(loaded) => loaded,
        Err(e) => (Settings::default(), vec![format!("config: {e}; using the defaults")]),
    }
}

/// Brings an index up to date with its project (the directory holding the index), incrementally.
pub fn reindex(index: &Path, settings: &Settings, embedder: &dyn crate::Embedder) -> Result<()> {
    let root = index.parent().unwrap_or(index).to_path_buf();
    let options = crate::index::BuildOptions::default();
    crate::index::build(index, &crate::ingest::Source::Dir(root), settings, embedder, &options).map(|_| ())
}

/// File in the index directory listing paths edited since the last reindex (the hook appends
/// one line per Edit or Write; the next prompt takes the record and reindexes).
pub(crate) const PENDING: &str = "pending-paths";

/// Keeps edits recorded for the next prompt when this one could not reindex them (another run
/// holds the index's writer lock: its walk may have passed the edited files already).
pub(crate) fn defer_reindex(index: &Path) {
    let _ = record_pending(index, "(reindex deferred: the index was locked)");
}

/// Appends one line to the index's record of edits not yet reindexed.
pub(crate) fn record_pending(index: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(index.join(PENDING))?;
    writeln!(file, "{line}")
}

/// The project a session or an MCP server in `cwd` works in, when it is one of the user's own:
/// the nearest directory at or above `cwd` that is a git work tree or holds an `engine.toml`,
/// owned by this user, and neither `/` nor `home`. Only there does the engine index a project by
/// itself or write memory records.
pub(crate) fn own_project(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let cwd = std::path::absolute(cwd).ok()?;
    let root = cwd.ancestors().find(|d| d.join(".git").exists() || d.join("engine.toml").is_file())?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if root.parent().is_none() || home.is_some_and(|h| same(root, h)) {
        return None;
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    (std::fs::metadata(root).ok()?.uid() == me).then(|| root.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_session_indexes_only_a_project_of_ones_own_never_home_or_root() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let deep = project.join("src").join("deep");
        std::fs::create_dir_all(&deep).unwrap();
        // No git work tree and no engine.toml: not a project.
        assert_eq!(own_project(&deep, None), None);
        std::fs::create_dir(project.join(".git")).unwrap();
        assert_eq!(own_project(&deep, None).as_deref(), Some(project.as_path()));
        // A git work tree that is the home directory itself is never indexed on its own.
        assert_eq!(own_project(&deep, Some(&project)), None);
        assert_eq!(own_project(&deep, Some(dir.path())).as_deref(), Some(project.as_path()));
        // engine.toml marks a project too, and the nearest marker wins.
        std::fs::write(project.join("src").join("engine.toml"), "").unwrap();
        assert_eq!(own_project(&deep, None).as_deref(), Some(project.join("src").as_path()));
        assert_eq!(own_project(Path::new("/"), None), None);
    }

    use proptest::prelude::*;

    #[test]
    fn trivial_prompts_are_recognised() {
        let c = HookConfig::default();
        for p in ["hi", "thanks!", "ok go on", "/clear", "/review the diff", "yes please", "  ", "lgtm", "---", "- ok"]
        {
            assert!(trivial(p, &c), "{p:?}");
        }
        for p in [
            "why did we switch the session store?",
            "fix the flaky upload test again",
            "hi, why is redis slow",
            "revoke_all_for_user",
            "SessionStore::load",
            "--pre-glob",
            "-uuu",
            "--max-columns 0",
        ] {
            assert!(!trivial(p, &c), "{p:?}");
        }
    }

    #[test]
    fn queries_drop_secrets_and_stay_short() {
        let c = HookConfig::default();
        // A secret inside a longer question: searched, without the secret. (Alone, the same
        // token is mostly the prompt and the gate refuses it: tests/hook.rs.)
        let prompt = "why does ghp_0123456789abcdefghijABCDEFGHIJ012345 fail when the nightly deploy job pushes images";
        let Gate::Search(q) = gate(prompt, &c) else { panic!("{:?}", gate(prompt, &c)) };
        assert!(!q.contains("ghp_") && q.contains("why does"), "{q}");
        assert!(matches!(gate("ghp_0123456789abcdefghijABCDEFGHIJ012345", &c), Gate::Refuse(_)));
        let long = "word ".repeat(100_000);
        let Gate::Search(q) = gate(&long, &c) else { panic!() };
        assert!(q.len() <= c.max_query_chars);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn the_gate_never_searches_for_a_secret(words in prop::collection::vec("[a-z]{1,8}", 0..12), at in 0..12usize) {
            let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
            let mut words = words;
            words.insert(at.min(words.len()), token.to_string());
            match gate(&words.join(" "), &HookConfig::default()) {
                Gate::Search(q) => prop_assert!(!q.contains("ghp_") && !q.contains("0123456789abcdef"), "{q}"),
                Gate::Skip | Gate::Refuse(_) => {}
            }
        }
    }
}
