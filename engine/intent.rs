//! Query intent: rules scored per intent, turned into probabilities by a softmax, plus the
//! expansions found in the query (symbols, file paths, module paths). Fusion mixes its per-intent
//! weight profiles by these probabilities. Table-driven: [`RULES`] is the whole classifier.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// What the user is after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Intent {
    /// A named thing: `parse_config`, `Store::open`, `class Foo`.
    Symbol,
    /// Relations: who calls, call chains, dependencies.
    Flow,
    /// Understanding: how does, why, architecture.
    Concept,
    /// Code by description: error handling code, example of.
    Code,
    /// Everything else.
    Balanced,
}

pub(crate) const INTENTS: [Intent; 5] = [Intent::Symbol, Intent::Flow, Intent::Concept, Intent::Code, Intent::Balanced];

impl Intent {
    /// The intent's lowercase name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Symbol => "symbol",
            Intent::Flow => "flow",
            Intent::Concept => "concept",
            Intent::Code => "code",
            Intent::Balanced => "balanced",
        }
    }
}

/// The classification of one query.
#[derive(Debug, Clone, Serialize)]
pub struct IntentResult {
    /// Probability per intent, in [`INTENTS`] order; sums to 1.
    pub probabilities: Vec<(Intent, f32)>,
    /// The most probable intent.
    pub top: Intent,
    /// Identifiers found in the query.
    pub symbols: Vec<String>,
    /// File paths found in the query.
    pub paths: Vec<String>,
    /// Module paths (`a::b`, `pkg.mod.fn`) found in the query.
    pub modules: Vec<String>,
    /// The prompt talks to the assistant about the session ("revert what you just did", "ok
    /// rerun the tests") rather than asking about the project: see [`conversational`].
    pub conversational: bool,
    /// The query asks about tests, so test files are not demoted: see [`about_tests`].
    pub about_tests: bool,
}

impl IntentResult {
    /// The probability of `intent` (0 if it is not listed).
    pub fn probability(&self, intent: Intent) -> f32 {
        self.probabilities.iter().find(|(i, _)| *i == intent).map_or(0.0, |(_, p)| *p)
    }
}

/// (intent, pattern on the lowercased query, raw score added when it matches)
const RULES: &[(Intent, &str, f32)] = &[
    (
        Intent::Flow,
        r"\bwho (calls|uses|invokes)\b|\bcall(s|ed|ing)? (chain|graph|sites?|hierarchy)\b|\bcallers?\b",
        3.0,
    ),
    (
        Intent::Flow,
        r"\bused by\b|\busages? of\b|\bdepends? on\b|\bdependenc(y|ies)\b|\bfrom \S+ to \S+|\bwhere is \S+ (called|used)\b|\bdata ?flow\b",
        3.0,
    ),
    (Intent::Concept, r"^(how|why|what|explain|describe)\b|\bhow (does|do|is|are)\b|\bwhy (does|do|is|are|did)\b", 2.0),
    (
        Intent::Concept,
        r"\barchitecture\b|\bdesign\b|\boverview\b|\bpurpose of\b|\bdifference between\b|\btrade-?offs?\b|\bexplain\b",
        2.0,
    ),
    (
        Intent::Code,
        r"\berror handling\b|\bexample (of|for)\b|\bsnippet\b|\bsample code\b|\bimplementation of\b|\bcode (for|that|to)\b|\bhow to (write|implement|use)\b",
        2.5,
    ),
    (Intent::Code, r"\b(function|method|class|loop|regex|query) (that|to|for)\b", 1.5),
    // Naming a programming language asks for code in it ("python check if a variable is iterable").
    (
        Intent::Code,
        r"\b(python|java|javascript|typescript|golang|rust|ruby|php|kotlin|swift|scala|bash|powershell|c\+\+|c#|sql)\b",
        2.0,
    ),
    // The same keywords as the declaration extraction below. Not `type`: "data type check" and
    // "type equals" are English far more often than a Go or TypeScript declaration (CoSQA dev:
    // 11 such queries were taken for symbol lookups).
    (Intent::Symbol, r"\b(fn|def|func|class|struct|impl|trait|interface|enum)\s+[A-Za-z_]\w*", 3.0),
];

static COMPILED: LazyLock<Vec<(Intent, Regex, f32)>> =
    LazyLock::new(|| RULES.iter().map(|(i, re, w)| (*i, Regex::new(re).expect("valid rule"), *w)).collect());

static IDENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:[A-Za-z_][A-Za-z0-9_]*(?:::|\.))*[A-Za-z_][A-Za-z0-9_]*(?:\(\))?")
        .expect("valid identifier pattern")
});
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:[\w.-]+/)*[\w-]+\.(?:rs|py|js|jsx|ts|tsx|go|java|c|h|cc|cpp|hpp|md|json|toml|ya?ml|txt|sh)\b|(?:[\w.-]+/)+[\w.-]+").expect("valid path pattern")
});

/// Raw score of an identifier-shaped word: 0 for plain words.
fn identifier_score(word: &str) -> f32 {
    let w = word.trim_end_matches("()");
    let has_lower = w.chars().any(|c| c.is_lowercase());
    // A camelCase hump is lower→Upper→lower ("getUser"); "mRNA" or "pH" are not identifiers.
    let chars: Vec<char> = w.chars().collect();
    let humps = chars.windows(3).filter(|c| c[0].is_lowercase() && c[1].is_uppercase() && c[2].is_lowercase()).count();
    let path_like = w.contains("::") || (w.contains('.') && !w.ends_with('.'));
    let snake = w.contains('_') && w.len() > 2 && !w.starts_with('_');
    if path_like || snake || (humps > 0 && has_lower) {
        2.5
    } else if word.ends_with("()") {
        2.0
    } else {
        0.0
    }
}

/// Classifies a query.
pub(crate) fn classify(query: &str) -> IntentResult {
    let lower = query.to_lowercase();
    let mut raw = [0f32; 5];
    raw[4] = 1.0; // balanced is the prior
    for (intent, re, w) in COMPILED.iter() {
        if re.is_match(&lower) {
            raw[INTENTS.iter().position(|i| i == intent).expect("listed")] += w;
        }
    }
    let paths: Vec<String> =
        PATH.find_iter(query).map(|m| m.as_str().to_string()).filter(|p| p.contains('/') || p.contains('.')).collect();
    let mut symbols = Vec::new();
    let mut modules = Vec::new();
    for m in IDENT.find_iter(query) {
        let word = m.as_str();
        if paths.iter().any(|p| p.contains(word)) {
            continue;
        }
        let score = identifier_score(word);
        if score > 0.0 {
            raw[0] += score;
            let bare = word.trim_end_matches("()").to_string();
            if bare.contains("::") || bare.matches('.').count() >= 1 {
                modules.push(bare.clone());
                if let Some(last) = bare.rsplit([':', '.']).next() {
                    symbols.push(last.to_string());
                }
            }
            symbols.push(bare);
        }
    }
    // `fn foo`, `class Bar`: the name after the keyword is a symbol even if it is one plain word.
    static DECL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b(?:fn|def|func|class|struct|impl|trait|interface|enum)\s+([A-Za-z_]\w*)").expect("valid")
    });
    for c in DECL.captures_iter(query) {
        symbols.push(c[1].to_string());
    }
    // A lone identifier-looking word is a symbol lookup.
    let words: Vec<&str> = query.split_whitespace().collect();
    if words.len() == 1
        && IDENT.find(words[0]).is_some_and(|m| m.as_str().len() == words[0].len())
        && identifier_score(words[0]) > 0.0
    {
        raw[0] += 2.0;
    }
    symbols.sort();
    symbols.dedup();
    let max = raw.iter().copied().fold(f32::MIN, f32::max);
    let exps: Vec<f32> = raw.iter().map(|r| (r - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    let probabilities: Vec<(Intent, f32)> = INTENTS.iter().zip(&exps).map(|(i, e)| (*i, e / sum)).collect();
    let top = probabilities.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|(i, _)| *i).unwrap_or(Intent::Balanced);
    IntentResult {
        probabilities,
        top,
        symbols,
        paths,
        modules,
        conversational: conversational(query),
        about_tests: about_tests(query),
    }
}

/// Words a question about a project starts with.
const QUESTION_WORDS: &[&str] = &[
    "where", "why", "how", "what", "what's", "which", "who", "whom", "whose", "when", "is", "are", "does", "do", "did",
    "can", "could", "should", "would", "will", "was", "were", "has", "have",
];
/// Acknowledgements and fillers a turn of a conversation opens with.
const OPENERS: &[&str] = &[
    "ok", "okay", "hmm", "thanks", "thank", "great", "nice", "fine", "perfect", "wait", "no", "yes", "yeah", "now",
    "please", "cool", "alright", "right", "sure", "so", "and", "then", "also", "lgtm", "good", "looks", "sounds",
];
/// Words that point into the conversation rather than the project: what was just done, by whom.
const DEICTIC: &[&str] = &[
    "that", "it", "this", "those", "these", "again", "you", "you're", "your", "me", "just", "instead", "same", "still",
    "too", "we", "let's", "us",
];

/// Whether a prompt reads as a turn of the conversation rather than a question about the
/// project: not a question (no `?`, no question word first) and either opening with an
/// acknowledgement ("ok", "thanks", "looks good") or pointing back into the session ("that",
/// "again", "what you just did"). A form signal only: abstention weighs it with the evidence,
/// since "fix the flaky upload test again" is both.
pub(crate) fn conversational(query: &str) -> bool {
    if query.contains('?') {
        return false;
    }
    let lower = query.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).collect();
    match words.first() {
        None => false,
        Some(w) if QUESTION_WORDS.contains(w) => false,
        Some(w) if OPENERS.contains(w) => true,
        Some(_) => words.iter().any(|w| DEICTIC.contains(w)),
    }
}

/// Whether a query is about tests, benchmarks or fixtures, so files of that kind are what it wants.
pub(crate) fn about_tests(query: &str) -> bool {
    static TESTS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\b(tests?|testing|tested|spec|specs|fixtures?|bench(mark)?(s|ed|ing)?|pytest|unittest|mocks?)\b",
        )
        .expect("valid")
    });
    TESTS.is_match(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (query, expected top intent, symbols that must be extracted)
    const CASES: &[(&str, Intent, &[&str])] = &[
        ("parse_config", Intent::Symbol, &["parse_config"]),
        ("SessionStore", Intent::Symbol, &["SessionStore"]),
        ("mRNA levels rise in IL-6 deficient mice", Intent::Balanced, &[]),
        ("fn open_index", Intent::Symbol, &["open_index"]),
        ("Store::open", Intent::Symbol, &["Store::open", "open"]),
        ("class UploadQueue", Intent::Symbol, &["UploadQueue"]),
        ("who calls flushBuffer", Intent::Flow, &["flushBuffer"]),
        ("call chain from request to database", Intent::Flow, &[]),
        ("what depends on the auth module", Intent::Flow, &[]),
        ("how does the cache invalidation work", Intent::Concept, &[]),
        ("why did we switch the session store?", Intent::Concept, &[]),
        ("explain the indexing architecture", Intent::Concept, &[]),
        ("error handling code for uploads", Intent::Code, &[]),
        ("example of retry with backoff", Intent::Code, &[]),
        ("python check if a variable is iterable", Intent::Code, &[]),
        ("flaky upload test", Intent::Balanced, &[]),
    ];

    #[test]
    fn table_of_queries() {
        for (q, want, syms) in CASES {
            let r = classify(q);
            assert_eq!(r.top, *want, "{q}: {:?}", r.probabilities);
            for s in *syms {
                assert!(r.symbols.iter().any(|x| x == s), "{q}: symbol {s} not in {:?}", r.symbols);
            }
            let total: f32 = r.probabilities.iter().map(|p| p.1).sum();
            assert!((total - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn paths_and_modules_are_extracted() {
        let r = classify("where is src/index/store.rs used by engine::search::Engine");
        assert!(r.paths.contains(&"src/index/store.rs".to_string()), "{:?}", r.paths);
        assert!(r.modules.contains(&"engine::search::Engine".to_string()), "{:?}", r.modules);
        assert!(r.symbols.contains(&"Engine".to_string()));
    }

    #[test]
    fn session_turns_are_told_from_questions() {
        for p in
            ["ok rerun the whole suite", "revert what you just did", "thanks, that works now", "rename that helper"]
        {
            assert!(conversational(p), "{p}");
        }
        for p in
            ["where is the help width decided", "why does it sleep on exit?", "flaky upload test", "option prompts"]
        {
            assert!(!conversational(p), "{p}");
        }
        assert!(about_tests("how do I simulate input in a unit test") && about_tests("benchmarks of the parser"));
        assert!(!about_tests("where is the latest version decided") && !about_tests("contest entry"));
    }

    #[test]
    fn plain_prose_has_no_symbols() {
        assert!(classify("the quick brown fox jumps").symbols.is_empty());
    }
}
