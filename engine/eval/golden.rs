//! The project's golden sets: hand-judged queries over corpora committed in `golden/`, with the
//! thresholds CI holds them to. The format is documented in `golden/README.md`; this module reads
//! and checks it, maps ranked hits onto judged keys, and applies the thresholds.
//!
//! A judgment names a document (`docs/runbooks/rollback.md`) or a piece of one
//! (`api/src/session_store.rs#revoke_all_for_user`): a hit matches `path#name` when it comes from
//! that path and its title is `name` (or ends with `::name`, `.name` or `> name`) or it defines the
//! symbol `name`. Naming pieces by symbol rather than by chunk keeps judgments valid when the
//! chunker changes its boundaries.

use super::{Metrics, Qrels, Report};
use crate::error::{Error, IoContext, Result};
use crate::search::intent::Intent;
use crate::Hit;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The file that defines a set, inside its directory.
pub const SET_FILE: &str = crate::ingest::GOLDEN_SET_FILE;
/// The thresholds file, next to the sets.
pub const THRESHOLDS_FILE: &str = "thresholds.toml";

/// Which half of a set to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Split {
    /// Both halves (what the CI gate uses).
    All,
    /// The half tuning may look at.
    Dev,
    /// The half nobody tunes on.
    HeldOut,
}

impl Split {
    /// The half's name in reports (`all`, `dev`, `held-out`).
    pub fn as_str(self) -> &'static str {
        match self {
            Split::All => "all",
            Split::Dev => "dev",
            Split::HeldOut => "held-out",
        }
    }
}

/// Expected confidence of a query's best hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedTier {
    /// The best hit should be labelled "high".
    High,
    /// The best hit should be labelled "medium".
    Medium,
    /// The best hit should be labelled "low".
    Low,
    /// Nothing should be shown.
    None,
}

/// What a prompt is, for the hook's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueryKind {
    /// Something in the corpus answers it.
    Answerable,
    /// A question about the project that nothing in the corpus answers: no context is right.
    NoAnswer,
    /// Not a question about the project (an instruction, an acknowledgement): no context is right.
    Chatter,
    /// Answerable, asked with the session's own words (names, errors, files): a transcript set.
    SameWords,
    /// Answerable, asked in other words (no distinctive identifier from the answer): a transcript set.
    OtherWords,
    /// A question about something else entirely: no context is right.
    Unrelated,
}

impl QueryKind {
    /// Whether something in the corpus answers a prompt of this kind.
    pub fn answerable(self) -> bool {
        matches!(self, QueryKind::Answerable | QueryKind::SameWords | QueryKind::OtherWords)
    }

    /// The kind a name in set files and reports stands for.
    fn named(name: &str) -> Option<QueryKind> {
        use QueryKind::*;
        [Answerable, NoAnswer, Chatter, SameWords, OtherWords, Unrelated].into_iter().find(|k| k.as_str() == name)
    }

    /// The kind's name in set files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryKind::Answerable => "answerable",
            QueryKind::NoAnswer => "no-answer",
            QueryKind::Chatter => "chatter",
            QueryKind::SameWords => "same-words",
            QueryKind::OtherWords => "other-words",
            QueryKind::Unrelated => "unrelated",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetFile {
    name: Option<String>,
    #[serde(default)]
    description: String,
    corpus: Option<String>,
    /// A corpus fetched by `scripts/fetch-corpora.sh` (a table of `golden/corpora.toml`).
    corpus_ref: Option<String>,
    /// Claude Code transcripts: the corpus is what capture makes of them.
    #[serde(default)]
    transcripts: Vec<String>,
    /// Where the transcripts are, relative to the set file (`ENGINE_TRANSCRIPTS` overrides).
    transcripts_dir: Option<String>,
    #[serde(default, rename = "query")]
    queries: Vec<QueryFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryFile {
    id: String,
    text: String,
    #[serde(default)]
    held_out: bool,
    intent: Option<Intent>,
    tier: Option<ExpectedTier>,
    kind: Option<QueryKind>,
    #[serde(default)]
    relevant: BTreeMap<String, i32>,
    /// The session a transcript set's fact comes from (documentation only).
    #[allow(dead_code)]
    session: Option<String>,
    #[serde(default)]
    expect: Vec<String>,
    /// Whether a transcript set's fact is said only after the session's last compaction.
    #[serde(default)]
    after_compaction: bool,
}

/// One judged query.
#[derive(Debug, Clone)]
pub struct GoldenQuery {
    /// The query's id, unique within its set.
    pub id: String,
    /// The query as a user would type it.
    pub text: String,
    /// Whether the query belongs to the held-out half (else the dev half).
    pub held_out: bool,
    /// The intent the classifier should find (`None`: not labelled).
    pub intent: Option<Intent>,
    /// Expected confidence of the best hit (`None`: not stated). Set files may state it
    /// (golden/README.md); no figure is computed from it.
    #[allow(dead_code)]
    pub tier: Option<ExpectedTier>,
    /// What the prompt is; without a `kind` in the file, answerable when a judgment is positive, else no-answer.
    pub kind: QueryKind,
    /// Judged key → grade (0 = judged not relevant). Empty: nothing in the corpus answers it.
    pub relevant: HashMap<String, i32>,
    /// Judged by fact instead (transcript sets): the context answers when it contains every
    /// entry, case aside; an entry's alternatives are separated by ` | `.
    pub expect: Vec<String>,
    /// A transcript set's fact is said only after the session's last compaction.
    pub after_compaction: bool,
}

/// A golden set: its queries and the corpus they are judged against.
#[derive(Debug, Clone)]
pub struct GoldenSet {
    /// The set's name: `name` in `set.toml`, else its directory's name.
    pub name: String,
    /// Free-text description from `set.toml` (empty when absent): for the reader of the file.
    #[allow(dead_code)]
    pub description: String,
    /// The `set.toml` the set was read from.
    pub file: PathBuf,
    /// The corpus directory the judgments refer to.
    pub corpus: PathBuf,
    /// Every judged query, both halves, in file order.
    pub queries: Vec<GoldenQuery>,
    /// The transcripts a transcript set captures into its corpus (empty for other sets).
    pub transcripts: Vec<PathBuf>,
}

fn invalid(file: &Path, what: String) -> Error {
    Error::InvalidInput(format!("{}: {what}", file.display()))
}

impl GoldenSet {
    /// Reads and checks a set: a `set.toml`, or the directory holding one.
    pub fn load(path: &Path) -> Result<GoldenSet> {
        let file = if path.is_dir() { path.join(SET_FILE) } else { path.to_path_buf() };
        let text = std::fs::read_to_string(&file).ctx(|| format!("reading golden set {}", file.display()))?;
        let parsed: SetFile = toml::from_str(&text).map_err(|e| invalid(&file, e.to_string().trim().to_string()))?;
        let dir = file.parent().unwrap_or(Path::new("."));
        let transcripts = transcript_files(&file, &parsed)?;
        let name = parsed.name.unwrap_or_else(|| {
            dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "golden".into())
        });
        let corpus = match (&parsed.corpus, &parsed.corpus_ref) {
            _ if !transcripts.is_empty() => {
                if parsed.corpus.is_some() || parsed.corpus_ref.is_some() {
                    return Err(invalid(
                        &file,
                        "a transcript set makes its own corpus: no corpus or corpus_ref".into(),
                    ));
                }
                transcript_corpus_dir(&name)
            }
            (Some(_), Some(_)) => return Err(invalid(&file, "give corpus or corpus_ref, not both".into())),
            (_, Some(name)) => {
                let fetched = corpora_dir().join(name);
                if !fetched.is_dir() {
                    return Err(invalid(
                        &file,
                        format!(
                            "corpus {name:?} is not fetched (no {}); run scripts/fetch-corpora.sh",
                            fetched.display()
                        ),
                    ));
                }
                fetched
            }
            (corpus, None) => dir.join(corpus.as_deref().unwrap_or("corpus")),
        };
        if transcripts.is_empty() && !corpus.is_dir() {
            return Err(invalid(&file, format!("corpus directory {} does not exist", corpus.display())));
        }
        if parsed.queries.is_empty() {
            return Err(invalid(&file, "no queries ([[query]] tables)".into()));
        }
        let mut seen = HashSet::new();
        let mut queries = Vec::with_capacity(parsed.queries.len());
        for (n, q) in parsed.queries.into_iter().enumerate() {
            let at = format!("query {} ({:?})", n + 1, q.id);
            if q.id.trim().is_empty() {
                return Err(invalid(&file, format!("query {}: empty id", n + 1)));
            }
            if !seen.insert(q.id.clone()) {
                return Err(invalid(&file, format!("{at}: duplicate id")));
            }
            if q.text.trim().is_empty() {
                return Err(invalid(&file, format!("{at}: empty text")));
            }
            for (key, grade) in &q.relevant {
                if *grade < 0 {
                    return Err(invalid(&file, format!("{at}: grade {grade} for {key:?} is negative")));
                }
                let path = key.split_once('#').map_or(key.as_str(), |(p, _)| p);
                if !corpus.join(path).is_file() {
                    return Err(invalid(&file, format!("{at}: judged document {path:?} is not in the corpus")));
                }
            }
            if !q.expect.is_empty() && !q.relevant.is_empty() {
                return Err(invalid(&file, format!("{at}: judge by relevant documents or by expect, not both")));
            }
            if q.expect.iter().any(|e| e.split(" | ").any(|a| a.trim().is_empty())) {
                return Err(invalid(&file, format!("{at}: an expect entry (or one of its alternatives) is empty")));
            }
            let answerable = q.relevant.values().any(|g| *g > 0) || !q.expect.is_empty();
            let kind = match q.kind {
                None if answerable => QueryKind::Answerable,
                None => QueryKind::NoAnswer,
                Some(k) if k.answerable() != answerable => {
                    return Err(invalid(
                        &file,
                        format!("{at}: kind {k:?} does not fit its judgments (answerable needs a relevant document, other kinds none)"),
                    ))
                }
                Some(k) => k,
            };
            queries.push(GoldenQuery {
                id: q.id,
                text: q.text,
                held_out: q.held_out,
                intent: q.intent,
                tier: q.tier,
                kind,
                relevant: q.relevant.into_iter().collect(),
                expect: q.expect,
                after_compaction: q.after_compaction,
            });
        }
        Ok(GoldenSet { name, description: parsed.description, file, corpus, queries, transcripts })
    }

    /// Whether the set is judged by fact (`expect`) rather than by document: it has no ranking
    /// metrics, only the hook's figures.
    pub fn by_fact(&self) -> bool {
        self.queries.iter().all(|q| q.relevant.is_empty())
    }

    /// A transcript set's corpus, made afresh: an empty project into which every transcript is
    /// captured as at the end of its session. Other sets: nothing to do.
    pub fn prepare(&self, capture: &crate::config::CaptureConfig) -> Result<()> {
        if self.transcripts.is_empty() {
            return Ok(());
        }
        let memory = self.corpus.join(crate::memory::DIR);
        if memory.exists() {
            std::fs::remove_dir_all(&memory).ctx(|| format!("clearing {}", memory.display()))?;
        }
        std::fs::create_dir_all(&self.corpus).ctx(|| format!("creating {}", self.corpus.display()))?;
        for t in &self.transcripts {
            crate::memory::capture::capture(
                t,
                &self.corpus,
                crate::memory::capture::Trigger::SessionEnd,
                None,
                capture,
            )?;
        }
        Ok(())
    }

    /// The queries of one half.
    pub fn queries(&self, split: Split) -> impl Iterator<Item = &GoldenQuery> {
        self.queries.iter().filter(move |q| match split {
            Split::All => true,
            Split::Dev => !q.held_out,
            Split::HeldOut => q.held_out,
        })
    }

    /// The judgments as qrels (query id → key → grade).
    pub fn qrels(&self) -> Qrels {
        self.queries.iter().map(|q| (q.id.clone(), q.relevant.clone())).collect()
    }
}

/// Where `scripts/fetch-corpora.sh` unpacks the real-project corpora: `ENGINE_CORPORA_DIR`, else
/// `$XDG_CACHE_HOME/engine/corpora`, else `~/.cache/engine/corpora` (the script's own rule).
pub(crate) fn corpora_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ENGINE_CORPORA_DIR") {
        return PathBuf::from(d);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("engine/corpora")
}

/// A transcript set's transcripts: in `ENGINE_TRANSCRIPTS`, else in the set's `transcripts_dir`
/// (relative to the set file); each as named, or compressed beside it (`name.zst`).
fn transcript_files(file: &Path, parsed: &SetFile) -> Result<Vec<PathBuf>> {
    if parsed.transcripts.is_empty() {
        return Ok(Vec::new());
    }
    let dir = match (std::env::var_os("ENGINE_TRANSCRIPTS").filter(|d| !d.is_empty()), &parsed.transcripts_dir) {
        (Some(env), _) => PathBuf::from(env),
        (None, Some(d)) => file.parent().unwrap_or(Path::new(".")).join(d),
        (None, None) => {
            return Err(invalid(file, "a transcript set needs transcripts_dir (or ENGINE_TRANSCRIPTS)".into()))
        }
    };
    let mut out = Vec::new();
    for t in &parsed.transcripts {
        let plain = dir.join(t);
        let packed = dir.join(format!("{t}.zst"));
        match [plain, packed].into_iter().find(|p| p.is_file()) {
            Some(path) => out.push(path),
            None => return Err(invalid(file, format!("transcript {t} is missing from {}", dir.display()))),
        }
    }
    Ok(out)
}

/// Where a transcript set's captured project is made (under the engine's cache directory).
fn transcript_corpus_dir(set: &str) -> PathBuf {
    corpora_dir().parent().map_or_else(std::env::temp_dir, Path::to_path_buf).join("transcripts").join(set)
}

/// Whether a context answers by fact: it contains every `expect` entry (one of its ` | `
/// alternatives), case aside, markup escapes undone.
pub fn expect_met(context: &str, expect: &[String]) -> bool {
    let text = context
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
        .to_lowercase();
    expect.iter().all(|e| e.split(" | ").any(|alt| text.contains(&alt.trim().to_lowercase())))
}

/// Every set under `dir` (`dir/*/set.toml`), by name; `dir` may also be one set.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.join(SET_FILE).is_file() || dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries = std::fs::read_dir(dir).ctx(|| format!("reading golden directory {}", dir.display()))?;
    let mut sets: Vec<PathBuf> =
        entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.join(SET_FILE).is_file()).collect();
    sets.sort();
    if sets.is_empty() {
        return Err(Error::InvalidInput(format!("no golden sets in {} (no */{SET_FILE})", dir.display())));
    }
    Ok(sets)
}

/// Whether a hit is the judged document or piece `key`.
pub fn matches(key: &str, hit: &Hit) -> bool {
    let (path, name) = match key.split_once('#') {
        Some((p, n)) => (p, Some(n)),
        None => (key, None),
    };
    if hit.path != path && hit.doc != path {
        return false;
    }
    let Some(name) = name else { return true };
    let title = hit.title.as_str();
    title == name
        || [format!("::{name}"), format!(".{name}"), format!("> {name}")].iter().any(|s| title.ends_with(s.as_str()))
        || hit.symbols.iter().any(|s| s == name)
}

/// Turns ranked hits into a ranked list of judged keys for scoring. Each hit becomes the first
/// judged key it matches that no earlier hit took (pieces before whole documents, then by name,
/// so the result is deterministic); a hit matching none becomes its document id. Repeats are
/// dropped, so several chunks of one document count once, as documents do for BEIR. Copies
/// folded into a hit (`Hit::also_in`) follow it when judged.
pub(crate) fn ranked_keys(hits: &[Hit], relevant: &HashMap<String, i32>) -> Vec<String> {
    let mut keys: Vec<&String> = relevant.keys().collect();
    keys.sort_by_key(|k| (!k.contains('#'), k.as_str()));
    let mut out: Vec<String> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for hit in hits {
        let key = keys
            .iter()
            .find(|k| !taken.contains(k.as_str()) && matches(k, hit))
            .map(|k| k.to_string())
            .unwrap_or_else(|| hit.doc.clone());
        if taken.insert(key.clone()) {
            out.push(key);
        }
        // Copies folded into the hit share its entry: a judged one counts as retrieved just
        // after it, the others take no rank (as they take no slot in the results).
        for path in hit.also_in.iter().filter(|p| relevant.contains_key(p.as_str())) {
            if taken.insert(path.clone()) {
                out.push(path.clone());
            }
        }
    }
    out
}

/// Runs a set's queries (one half, or both) in each mode against an engine over its corpus.
pub fn run(engine: &crate::Engine, set: &GoldenSet, split: Split, modes: &[super::RunMode]) -> Result<Report> {
    let chosen: Vec<&GoldenQuery> = set.queries(split).collect();
    if chosen.is_empty() {
        return Err(invalid(&set.file, format!("no {} queries", split.as_str())));
    }
    let queries: Vec<(String, String)> = chosen.iter().map(|q| (q.id.clone(), q.text.clone())).collect();
    let mut groupings = super::intent_groups(&queries);
    let halves = chosen.iter().map(|q| (q.id.clone(), if q.held_out { "held-out" } else { "dev" }.to_string()));
    groupings.insert("split".into(), halves.collect());
    let qrels = set.qrels();
    let judge = |id: &str, hits: &[Hit]| {
        let relevant = &qrels[id];
        let mut ranked = ranked_keys(hits, relevant);
        ranked.truncate(100);
        super::score(&ranked, relevant)
    };
    let is_relevant = |id: &str, hit: &Hit| qrels[id].iter().any(|(k, g)| *g > 0 && matches(k, hit));
    let runs = super::run_queries(engine, &queries, modes, &judge, &is_relevant, &groupings)?;
    let judged = runs.first().map_or(0, |r| r.per_query.len());
    Ok(Report { dataset: set.name.clone(), split: split.as_str().into(), queries: judged, runs })
}

/// The hook path on a set's prompts: prompt in, context out, through the same functions the hook
/// and its daemon run.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HookQuality {
    /// Prompts with a relevant document, and how many of them got context naming one of their
    /// best-graded documents.
    pub answerable: usize,
    /// Answerable prompts whose context named one of their best-graded documents.
    pub answered: usize,
    /// Questions nothing in the corpus answers, and how many of them correctly got no context.
    pub no_answer: usize,
    /// No-answer questions that got no context.
    pub quiet_no_answer: usize,
    /// Prompts that are not questions about the project, and how many correctly got no context.
    pub chatter: usize,
    /// Chatter prompts that got no context.
    pub quiet_chatter: usize,
    /// Hits shown as "high" over all prompts, and how many of them are relevant.
    pub high: usize,
    /// "High" hits that are relevant.
    pub high_relevant: usize,
    /// Mean size of the context given to answerable prompts (characters, model tokens).
    pub mean_chars: f64,
    /// Mean model tokens of the context given to answerable prompts.
    pub mean_tokens: f64,
    /// The figures per kind of prompt, by the kind's name (`same-words`, `unrelated`…).
    pub kinds: BTreeMap<String, KindQuality>,
    /// Answerable prompts whose fact is said only after the session's last compaction.
    pub after_compaction: usize,
    /// Of those, how many were answered.
    pub after_compaction_answered: usize,
}

/// The hook's figures on the prompts of one kind.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct KindQuality {
    /// Prompts of the kind.
    pub prompts: usize,
    /// Prompts the hook got right: answered (an answerable kind), else given no context.
    pub right: usize,
    /// Prompts given context, and that context's characters in all.
    pub given: usize,
    /// Characters of the context given to the kind's prompts, summed.
    pub chars: usize,
}

impl KindQuality {
    /// Mean characters of the context given, when any was.
    pub fn mean_chars(&self) -> Option<f64> {
        (self.given > 0).then(|| self.chars as f64 / self.given as f64)
    }
}

fn share(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl HookQuality {
    /// The figures thresholds can name (`[set.hook]`), when there was something to measure.
    pub(crate) fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "answered" => share(self.answered, self.answerable),
            "silent_no_answer" => share(self.quiet_no_answer, self.no_answer),
            "silent_chatter" => share(self.quiet_chatter, self.chatter),
            "high_precision" => share(self.high_relevant, self.high),
            "context_chars" => Some(self.mean_chars),
            "answered_after_compaction" => share(self.after_compaction_answered, self.after_compaction),
            _ => {
                let (kind, answers) = [("answered_", true), ("silent_", false)]
                    .into_iter()
                    .find_map(|(p, a)| name.strip_prefix(p).map(|k| (k.replace('_', "-"), a)))?;
                let k = self.kinds.get(&kind).filter(|k| k.prompts > 0)?;
                let answerable = QueryKind::named(&kind).is_some_and(QueryKind::answerable);
                (answerable == answers).then(|| k.right as f64 / k.prompts as f64)
            }
        }
    }
}

/// Names of [`HookQuality::metric`]; `context_chars` is a ceiling, the others floors. The
/// per-kind figures of a transcript set: `answered_same_words`, `answered_other_words`,
/// `silent_unrelated` (`silent_no_answer` is the same for every set), and
/// `answered_after_compaction` for the facts said only after a session's last compaction.
pub(crate) const HOOK_METRICS: [&str; 9] = [
    "answered",
    "silent_no_answer",
    "silent_chatter",
    "high_precision",
    "context_chars",
    "answered_same_words",
    "answered_other_words",
    "silent_unrelated",
    "answered_after_compaction",
];

impl std::fmt::Display for HookQuality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |a: usize, b: usize| share(a, b).map_or("-".to_string(), |v| format!("{:.0}%", v * 100.0));
        write!(
            f,
            "answered {}/{} ({}), silent on no-answer {}/{} ({}), silent on chatter {}/{} ({}), high relevant {}/{} ({}), mean context {:.0} chars / {:.0} tokens",
            self.answered,
            self.answerable,
            pct(self.answered, self.answerable),
            self.quiet_no_answer,
            self.no_answer,
            pct(self.quiet_no_answer, self.no_answer),
            self.quiet_chatter,
            self.chatter,
            pct(self.quiet_chatter, self.chatter),
            self.high_relevant,
            self.high,
            pct(self.high_relevant, self.high),
            self.mean_chars,
            self.mean_tokens,
        )?;
        // A set of the plain kinds says all above; a transcript set's kinds get a line each.
        let plain = [QueryKind::Answerable, QueryKind::NoAnswer, QueryKind::Chatter].map(QueryKind::as_str);
        if self.kinds.keys().all(|k| plain.contains(&k.as_str())) {
            return Ok(());
        }
        for (kind, k) in &self.kinds {
            let what = if QueryKind::named(kind).is_some_and(QueryKind::answerable) { "answered" } else { "silent" };
            let chars = k.mean_chars().map_or("no context".to_string(), |c| format!("mean context {c:.0} chars"));
            write!(f, "\n    {kind}: {what} {}/{} ({}), {chars}", k.right, k.prompts, pct(k.right, k.prompts))?;
        }
        if self.after_compaction > 0 {
            let (a, n) = (self.after_compaction_answered, self.after_compaction);
            write!(f, "\n    said only after the last compaction: answered {a}/{n} ({})", pct(a, n))?;
        }
        Ok(())
    }
}

/// Runs a set's prompts (one half, or both) through the hook path.
pub fn hook_quality(engine: &crate::Engine, set: &GoldenSet, split: Split) -> Result<HookQuality> {
    let config = &engine.settings.hook;
    let mut q = HookQuality::default();
    let (mut chars, mut tokens, mut given) = (0usize, 0usize, 0usize);
    for query in set.queries(split) {
        let block = match crate::integrations::prompt::gate(&query.text, config) {
            crate::integrations::prompt::Gate::Search(text) => {
                crate::integrations::prompt::prompt_context(engine, &text, None)?
            }
            _ => None,
        };
        let relevant: HashSet<String> =
            query.relevant.iter().filter(|(_, g)| **g > 0).map(|(k, _)| path_of(k).to_string()).collect();
        let top = query.relevant.values().copied().max().unwrap_or(0);
        let best: HashSet<String> =
            query.relevant.iter().filter(|(_, g)| **g == top).map(|(k, _)| path_of(k).to_string()).collect();
        // Judged by fact, a set has no relevant documents to check a "high" hit against.
        let by_document = query.expect.is_empty();
        for shown in
            block.iter().flat_map(|b| &b.shown).filter(|s| by_document && s.confidence == crate::hit::Confidence::High)
        {
            q.high += 1;
            q.high_relevant += usize::from(relevant.contains(&shown.path));
        }
        let quiet = block.is_none();
        let k = q.kinds.entry(query.kind.as_str().to_string()).or_default();
        k.prompts += 1;
        if let Some(b) = &block {
            k.given += 1;
            k.chars += b.text.chars().count();
        }
        match query.kind {
            kind if kind.answerable() => {
                q.answerable += 1;
                let answered = block.as_ref().is_some_and(|b| {
                    if query.expect.is_empty() {
                        b.shown.iter().any(|s| best.contains(&s.path))
                    } else {
                        expect_met(&b.text, &query.expect)
                    }
                });
                q.answered += usize::from(answered);
                k.right += usize::from(answered);
                if query.after_compaction {
                    q.after_compaction += 1;
                    q.after_compaction_answered += usize::from(answered);
                }
                if let Some(b) = &block {
                    chars += b.text.chars().count();
                    tokens += engine.count_tokens(&b.text);
                    given += 1;
                }
            }
            QueryKind::NoAnswer => {
                q.no_answer += 1;
                q.quiet_no_answer += usize::from(quiet);
            }
            QueryKind::Chatter => {
                q.chatter += 1;
                q.quiet_chatter += usize::from(quiet);
            }
            _ => {}
        }
        if !query.kind.answerable() {
            k.right += usize::from(quiet);
        }
    }
    if given > 0 {
        q.mean_chars = chars as f64 / given as f64;
        q.mean_tokens = tokens as f64 / given as f64;
    }
    Ok(q)
}

/// The file a judgment names: a key is a path, or a path and one of its chunks (`path#…`).
fn path_of(key: &str) -> &str {
    key.split_once('#').map_or(key, |(p, _)| p)
}

/// One JSON line per prompt of a set's `split`, for fitting and inspecting the hook's decisions:
/// the prompt's kind and half, what the gate did, the query-level evidence, and per hit its label,
/// scores and whether it is relevant. A dev split leaves the held-out prompts out, so reading
/// the lines cannot show the held-out half.
pub fn features(engine: &crate::Engine, set: &GoldenSet, split: Split) -> Result<Vec<serde_json::Value>> {
    let config = &engine.settings.hook;
    let mut out = Vec::new();
    for query in set.queries(split) {
        let gated = crate::integrations::prompt::gate(&query.text, config);
        let resp = match &gated {
            crate::integrations::prompt::Gate::Search(text) => {
                let mut req = crate::integrations::prompt::request(text.as_str(), config);
                req.evidence = true;
                // For the cross-encoder's logits, when `[hook] rerank` runs one.
                req.explain = true;
                Some(engine.search_with(&req)?)
            }
            _ => None,
        };
        let hits: Vec<serde_json::Value> = resp
            .iter()
            .flat_map(|r| &r.results)
            .map(|h| {
                let grade = query.relevant.iter().filter(|(k, _)| matches(k, h)).map(|(_, g)| *g).max().unwrap_or(0);
                serde_json::json!({
                    "path": h.path, "doc": h.path, "score": h.score, "cosine": h.cosine, "bm25": h.bm25,
                    "confidence": h.confidence, "kind": h.kind, "grade": grade, "coverage": h.coverage,
                    "lexical_rank": h.lexical_rank, "vector_rank": h.vector_rank, "rerank_logit": h.explain.as_ref().and_then(|e| e.rerank_logit),
                    "features": super::learned_inputs(h),
                })
            })
            .collect();
        // Grades by path: a judgment may name one chunk of a file (`path#…`), a hit is one.
        let mut judged: BTreeMap<String, i32> = BTreeMap::new();
        for (k, g) in &query.relevant {
            let e = judged.entry(path_of(k).to_string()).or_default();
            *e = (*e).max(*g);
        }
        // What the hook would hand over, and for a set judged by fact whether it holds the fact.
        let block = resp.as_ref().and_then(|r| crate::integrations::prompt::block_for(engine, r));
        let answered =
            (!query.expect.is_empty()).then(|| block.as_ref().is_some_and(|b| expect_met(&b.text, &query.expect)));
        out.push(serde_json::json!({
            "set": set.name, "id": query.id, "text": query.text, "kind": query.kind,
            "held_out": query.held_out, "searched": resp.is_some(), "judged": judged,
            "context": block.as_ref().map(|b| &b.text), "answered": answered,
            "intent": resp.as_ref().map(|r| &r.intent), "evidence": resp.as_ref().map(|r| &r.evidence),
            "verdict": resp.as_ref().map(|r| &r.verdict),
            "hits": hits,
        }));
    }
    Ok(out)
}

/// How many queries with an expected intent the classifier gets right: (right, labelled).
pub fn intent_accuracy(set: &GoldenSet, split: Split) -> (usize, usize) {
    let labelled: Vec<(&GoldenQuery, Intent)> = set.queries(split).filter_map(|q| q.intent.map(|i| (q, i))).collect();
    let right = labelled.iter().filter(|(q, i)| crate::search::intent::classify(&q.text).top == *i).count();
    (right, labelled.len())
}

/// The thresholds table of the hook's figures: `[set.hook] answered = 0.9`.
pub const HOOK: &str = "hook";

/// Minimum metric values per set and mode: `[set.mode] "ndcg@10" = 0.8`; `[set.hook]` holds the
/// hook's figures ([`HOOK_METRICS`]).
pub type Thresholds = BTreeMap<String, BTreeMap<String, BTreeMap<String, f64>>>;

/// The metric names a threshold may use (the JSON report's names).
pub(crate) const METRICS: [&str; 7] = ["p@5", "p@10", "recall@10", "recall@100", "mrr@10", "ndcg@10", "map"];

/// Reads and checks the thresholds file.
pub fn read_thresholds(path: &Path) -> Result<Thresholds> {
    let text = std::fs::read_to_string(path).ctx(|| format!("reading thresholds {}", path.display()))?;
    let t: Thresholds = toml::from_str(&text).map_err(|e| invalid(path, e.to_string().trim().to_string()))?;
    for (set, modes) in &t {
        for (mode, metrics) in modes {
            if mode == HOOK {
                for (m, v) in metrics {
                    if !HOOK_METRICS.contains(&m.as_str()) {
                        return Err(invalid(
                            path,
                            format!("[{set}.hook]: unknown metric {m:?} (one of {})", HOOK_METRICS.join(", ")),
                        ));
                    }
                    if !v.is_finite() || *v < 0.0 || (m != "context_chars" && *v > 1.0) {
                        return Err(invalid(path, format!("[{set}.hook] {m} = {v}: out of range")));
                    }
                }
                continue;
            }
            if super::RunMode::parse(mode).is_none() {
                return Err(invalid(
                    path,
                    format!("[{set}.{mode}]: unknown mode {mode:?} (one of {})", super::RunMode::NAMES.join(", ")),
                ));
            }
            for (m, v) in metrics {
                if !METRICS.contains(&m.as_str()) {
                    return Err(invalid(
                        path,
                        format!("[{set}.{mode}]: unknown metric {m:?} (one of {})", METRICS.join(", ")),
                    ));
                }
                if !(0.0..=1.0).contains(v) {
                    return Err(invalid(path, format!("[{set}.{mode}] {m} = {v}: must be between 0 and 1")));
                }
            }
        }
    }
    Ok(t)
}

/// A metric's value by its report name.
pub(crate) fn metric(m: &Metrics, name: &str) -> Option<f64> {
    Some(match name {
        "p@5" => m.p5,
        "p@10" => m.p10,
        "recall@10" => m.recall10,
        "recall@100" => m.recall100,
        "mrr@10" => m.mrr10,
        "ndcg@10" => m.ndcg10,
        "map" => m.map,
        _ => return None,
    })
}

/// One threshold's outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GateCheck {
    /// The set's name.
    pub set: String,
    /// The run mode (`bm25`, `hybrid`…) or `hook` for the hook's figures.
    pub mode: String,
    /// The metric's report name (`ndcg@10`, `answered`…).
    pub metric: String,
    /// The minimum (or, for `context_chars`, the maximum) the value must meet.
    pub threshold: f64,
    /// `None` when the mode was not run.
    pub value: Option<f64>,
}

impl GateCheck {
    /// Whether the threshold is a ceiling (context size) rather than a floor.
    fn ceiling(&self) -> bool {
        self.mode == HOOK && self.metric == "context_chars"
    }

    /// Whether the value meets the threshold (with 1e-9 of slack); a mode that was not run fails.
    pub fn passed(&self) -> bool {
        self.value.is_some_and(|v| if self.ceiling() { v <= self.threshold + 1e-9 } else { v + 1e-9 >= self.threshold })
    }
}

impl std::fmt::Display for GateCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.value {
            Some(v) if self.passed() => {
                let op = if self.ceiling() { "<=" } else { ">=" };
                write!(f, "ok   {} {} {} = {v:.3} {op} {:.3}", self.set, self.mode, self.metric, self.threshold)
            }
            Some(v) if self.ceiling() => write!(
                f,
                "FAIL {} {} {} = {v:.3} > {:.3} (over by {:.3})",
                self.set,
                self.mode,
                self.metric,
                self.threshold,
                v - self.threshold
            ),
            Some(v) => write!(
                f,
                "FAIL {} {} {} = {v:.3} < {:.3} (short by {:.3})",
                self.set,
                self.mode,
                self.metric,
                self.threshold,
                self.threshold - v
            ),
            None if self.mode == HOOK => {
                write!(f, "FAIL {} hook {}: the set has no prompts to measure it on", self.set, self.metric)
            }
            None => write!(f, "FAIL {} {} {}: mode was not run", self.set, self.mode, self.metric),
        }
    }
}

/// Checks a set's report and hook figures against its thresholds.
pub fn gate(set: &str, report: &Report, hook: &HookQuality, thresholds: &Thresholds) -> Vec<GateCheck> {
    let mut out = Vec::new();
    for (mode, metrics) in thresholds.get(set).into_iter().flatten() {
        let run = report.runs.iter().find(|r| r.mode == *mode);
        for (m, t) in metrics {
            let value = if mode == HOOK { hook.metric(m) } else { run.and_then(|r| metric(&r.metrics, m)) };
            out.push(GateCheck { set: set.to_string(), mode: mode.clone(), metric: m.clone(), threshold: *t, value });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, title: &str, symbols: &[&str]) -> Hit {
        Hit {
            id: format!("{path}#0"),
            doc: path.into(),
            path: path.into(),
            title: title.into(),
            start_line: 1,
            end_line: 2,
            kind: "code".into(),
            symbols: symbols.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn keys_match_documents_titles_and_symbols() {
        let h = hit("api/store.rs", "SessionStore::load", &["load"]);
        assert!(matches("api/store.rs", &h));
        assert!(matches("api/store.rs#load", &h));
        assert!(matches("api/store.rs#SessionStore::load", &h));
        assert!(!matches("api/store.rs#revoke", &h));
        assert!(!matches("api/other.rs#load", &h));
        assert!(matches("docs/a.md#Errors", &hit("docs/a.md", "API conventions > Errors", &[])));
        assert!(!matches("docs/a.md#rors", &hit("docs/a.md", "API conventions > Errors", &[])));
    }

    #[test]
    fn ranked_keys_count_each_judgment_once_and_collapse_other_chunks() {
        let rel: HashMap<String, i32> = [("a.rs#f".to_string(), 2), ("b.md".to_string(), 1)].into_iter().collect();
        let hits = [
            hit("a.rs", "g", &["g"]), // unjudged chunk of a judged file: the document id
            hit("a.rs", "f", &["f"]),
            hit("b.md", "x", &[]),
            hit("b.md", "y", &[]),    // second chunk of b.md: dropped
            hit("a.rs", "f", &["f"]), // an overlapping window of f: dropped
            hit("c.md", "z", &[]),
        ];
        assert_eq!(ranked_keys(&hits, &rel), ["a.rs", "a.rs#f", "b.md", "c.md"]);
        let m = super::super::score(&ranked_keys(&hits, &rel), &rel).unwrap();
        assert_eq!(m.mrr10, 0.5);
        assert_eq!(m.recall10, 1.0);

        let mut folded = hit("d.texi", "x", &[]);
        folded.also_in = vec!["d.info".into(), "b.md".into()];
        let hits = [folded, hit("c.md", "y", &[])];
        assert_eq!(
            ranked_keys(&hits, &rel),
            ["d.texi", "b.md", "c.md"],
            "judged copies rank just after the hit naming them, the others take no rank"
        );
    }

    #[test]
    fn bad_sets_name_the_file_and_the_query() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("corpus")).unwrap();
        std::fs::write(dir.path().join("corpus/a.md"), "# A\n").unwrap();
        let set = dir.path().join(SET_FILE);
        let write = |s: &str| std::fs::write(&set, s).unwrap();
        let err = |s: &str| {
            write(s);
            GoldenSet::load(dir.path()).unwrap_err().to_string()
        };
        let e = err("[[query]]\nid = \"q1\"\ntext = \"x\"\nrelevant = { \"missing.md\" = 1 }\n");
        assert!(e.contains("set.toml") && e.contains("\"q1\"") && e.contains("missing.md"), "{e}");
        let e = err("[[query]]\nid = \"q1\"\ntext = \"x\"\n[[query]]\nid = \"q1\"\ntext = \"y\"\n");
        assert!(e.contains("duplicate id"), "{e}");
        let e = err("[[query]]\nid = \"q1\"\ntext = \"x\"\nrelevnt = {}\n");
        assert!(e.contains("relevnt") && e.contains("line"), "{e}");
        let e = err("[[query]]\nid = \"q1\"\ntext = \"  \"\n");
        assert!(e.contains("empty text"), "{e}");
        assert!(err("description = \"nothing\"\n").contains("no queries"));
        let e = err("[[query]]\nid = \"q1\"\ntext = \"x\"\nkind = \"other-words\"\n");
        assert!(e.contains("OtherWords") && e.contains("does not fit"), "an answerable kind without an answer: {e}");
        let e = err("[[query]]\nid = \"q1\"\ntext = \"x\"\nkind = \"unrelated\"\nexpect = [\"y\"]\n");
        assert!(e.contains("Unrelated") && e.contains("does not fit"), "{e}");
        let e = err("[[query]]\nid = \"q1\"\ntext = \"x\"\nintent = \"vibes\"\n");
        assert!(e.contains("vibes"), "{e}");
        write("[[query]]\nid = \"q1\"\ntext = \"x\"\nheld_out = true\nrelevant = { \"a.md\" = 2 }\n[[query]]\nid = \"q2\"\ntext = \"y\"\n");
        let s = GoldenSet::load(dir.path()).unwrap();
        assert_eq!(s.queries(Split::HeldOut).count(), 1);
        assert_eq!(s.queries(Split::Dev).next().unwrap().id, "q2");
    }

    #[test]
    fn thresholds_are_checked_and_shortfalls_reported() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(THRESHOLDS_FILE);
        std::fs::write(
            &p,
            "[memory.hybrid]\n\"ndcg@10\" = 0.8\n\"mrr@10\" = 0.5\n[memory.vector]\n\"map\" = 0.1\n\
             [memory.hook]\nanswered = 0.9\nsilent_chatter = 0.95\ncontext_chars = 1500\n",
        )
        .unwrap();
        let t = read_thresholds(&p).unwrap();
        let run = super::super::run_report(
            "hybrid",
            [("q".to_string(), Metrics { ndcg10: 0.75, mrr10: 0.9, ..Default::default() })].into_iter().collect(),
            &[],
            &Default::default(),
        );
        let report = Report { dataset: "memory".into(), split: "all".into(), queries: 1, runs: vec![run] };
        let hook = HookQuality { answerable: 10, answered: 9, mean_chars: 1600.0, ..Default::default() };
        let checks = gate("memory", &report, &hook, &t);
        let text: Vec<String> = checks.iter().map(|c| c.to_string()).collect();
        assert!(text.iter().any(|l| l.starts_with("FAIL memory hybrid ndcg@10 = 0.750 < 0.800 (short by 0.050)")));
        assert!(text.iter().any(|l| l.starts_with("ok   memory hook answered = 0.900 >= 0.900")), "{text:?}");
        assert!(text.iter().any(|l| l.starts_with("FAIL memory hook context_chars = 1600.000 > 1500.000")), "{text:?}");
        assert!(
            text.iter().any(|l| l.starts_with("FAIL memory hook silent_chatter: the set has no prompts")),
            "{text:?}"
        );
        assert!(text.iter().any(|l| l.starts_with("ok   memory hybrid mrr@10")));
        assert!(text.iter().any(|l| l.contains("vector map: mode was not run")));
        // A transcript set's figures per kind of prompt.
        let mut hook = HookQuality { after_compaction: 4, after_compaction_answered: 1, ..Default::default() };
        for (kind, prompts, right) in [("same-words", 10, 9), ("other-words", 8, 2), ("unrelated", 5, 5)] {
            hook.kinds.insert(kind.into(), KindQuality { prompts, right, ..Default::default() });
        }
        assert_eq!(hook.metric("answered_same_words"), Some(0.9));
        assert_eq!(hook.metric("answered_other_words"), Some(0.25));
        assert_eq!(hook.metric("silent_unrelated"), Some(1.0));
        assert_eq!(hook.metric("answered_after_compaction"), Some(0.25));
        assert_eq!(hook.metric("silent_other_words"), None, "an answerable kind is answered, not silent");
        assert_eq!(hook.metric("answered_unrelated"), None);
        std::fs::write(&p, "[t.hook]\nanswered_other_words = 0.3\nsilent_unrelated = 0.9\n").unwrap();
        let text: Vec<String> =
            gate("t", &report, &hook, &read_thresholds(&p).unwrap()).iter().map(|c| c.to_string()).collect();
        assert_eq!(text[0], "FAIL t hook answered_other_words = 0.250 < 0.300 (short by 0.050)", "{text:?}");
        assert!(text[1].starts_with("ok   t hook silent_unrelated = 1.000"), "{text:?}");
        std::fs::write(&p, "[memory.hybrid]\n\"ndcg@11\" = 0.8\n").unwrap();
        assert!(read_thresholds(&p).unwrap_err().to_string().contains("ndcg@11"));
        std::fs::write(&p, "[memory.fancy]\n\"map\" = 0.8\n").unwrap();
        assert!(read_thresholds(&p).unwrap_err().to_string().contains("fancy"));
        std::fs::write(&p, "[memory.hook]\nsilence = 0.8\n").unwrap();
        assert!(read_thresholds(&p).unwrap_err().to_string().contains("silence"));
    }
}
