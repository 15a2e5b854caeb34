//! The result types every stage after retrieval shares: a hit, why it ranks where it does, how
//! sure the engine is of it, the query-level evidence, and the snippet of its text that matches.
//! Their own module, so the stages that read them (labels, abstention, context) and the search that
//! makes them do not depend on each other.

use serde::Serialize;

/// The retrieval legs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Leg {
    /// Nearest neighbours of the query's embedding.
    Vector,
    /// BM25 over the chunks' text fields.
    Lexical,
    /// Chunks defining identifiers the query names.
    Symbol,
}

/// One leg's hit: a key (vector id), its 1-based rank and its raw score in that leg.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LegHit {
    pub key: u64,
    pub rank: usize,
    pub score: f32,
}

/// What a leg contributed to a fused hit.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LegContribution {
    /// The leg that found the hit.
    pub leg: Leg,
    /// The hit's 1-based rank in that leg.
    pub rank: usize,
    /// The leg's own score: cosine for the vector leg, the full-text (BM25) score for the others.
    pub raw_score: f32,
    /// What the leg added to the RRF sum: weight / (k + rank).
    pub rrf: f32,
}

/// How sure the engine is that a hit answers the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    #[default]
    /// Weak evidence: left out of a tiered context.
    Low,
    /// Some evidence: a one-line summary in a tiered context.
    Medium,
    /// Strong evidence: shown with its text (snippet, neighbours or full chunk) in a tiered context.
    High,
}

impl Confidence {
    /// The label's lowercase name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// Why a hit ranks where it does.
#[derive(Debug, Clone, Serialize)]
pub struct Explain {
    /// Each leg that found the hit, with its rank, raw score and RRF share.
    pub legs: Vec<LegContribution>,
    /// The leg weights mixed for this query's intent.
    pub weights: crate::config::Weights,
    /// The weighted RRF sum over the legs.
    pub rrf: f32,
    /// The consensus factor applied to the RRF sum (1 when one leg found the hit).
    pub consensus: f32,
    /// Factors applied after fusion, e.g. `expansion x1.1`, `test file x0.8`.
    pub boosts: Vec<String>,
    /// The cross-encoder's logit, when the hit was reranked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_logit: Option<f32>,
    /// With learned fusion (`[fuse] method = "learned"`): the model's inputs by name
    /// (the learned fusion's features, in order), then its probability, which became the fused score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learned: Option<LearnedExplain>,
    /// The score the hit is ranked by (see [`Hit::score`]).
    pub final_score: f32,
}

/// What the learned fusion read of a hit and what it made of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LearnedExplain {
    /// Each feature's name and value.
    pub features: Vec<(&'static str, f32)>,
    /// The model's probability that the hit is relevant; the hit's score is it times the boosts.
    pub probability: f32,
}

/// One result.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Hit {
    /// Chunk id: `<document id>#<vector id>`.
    pub id: String,
    /// Document id (the path, or the BEIR `_id`).
    pub doc: String,
    /// Display path, relative to the indexed root (for a BEIR record, its `_id`).
    pub path: String,
    /// The chunk's title: heading path, symbol path or record title.
    pub title: String,
    /// First line of the chunk in its document, 1-based.
    pub start_line: usize,
    /// Last line of the chunk, inclusive.
    pub end_line: usize,
    /// The ranking score: the boosted fused score, or the blended score when reranked.
    pub score: f32,
    /// How sure the engine is that this hit answers the query.
    pub confidence: Confidence,
    /// Raw cosine between the query and the chunk (the evidence confidence floors use).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f32>,
    /// Raw BM25 score, when the lexical leg found the chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25: Option<f32>,
    /// Rank of the chunk in the lexical and in the vector leg, when that leg found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<usize>,
    /// Rank of the chunk in the vector leg, when that leg found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<usize>,
    /// Share of the query's term weight (IDF) that occurs in the chunk's title, path and text
    /// (when the request asked for evidence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f32>,
    /// About `[search] snippet_chars` characters of the chunk around the query's words, whitespace collapsed.
    pub snippet: String,
    /// The chunk's full body (not serialised).
    #[serde(skip)]
    pub text: String,
    /// The document's kind (`markdown`, `code`, `memory`, `text`).
    pub kind: String,
    /// The language of a code chunk (`rust`, `python`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// A memory record's tags.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// A memory record's category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Symbols the chunk defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    /// Other files holding nearly the same text, folded into this hit (`[search]
    /// duplicate_overlap`), best first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<String>,
    /// Why the hit ranks where it does, when the request asked (`explain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

impl Hit {
    /// Whether two hits are windows of the same document sharing a line. The pieces of one long
    /// memory record share its lines (the record is one JSON string) but not their text: they
    /// are parts, not windows of each other.
    pub(crate) fn overlaps(&self, other: &Hit) -> bool {
        self.doc == other.doc
            && self.start_line <= other.end_line
            && other.start_line <= self.end_line
            && !(self.kind == "memory" && self.id != other.id)
    }
}

/// How well the index as a whole answers the query, beyond each hit's own score: the inputs of
/// the decision to say nothing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    /// Raw cosine of the best and second-best hits, when the query was embedded.
    pub top_cosine: Option<f32>,
    /// The second-highest raw cosine among the results, when at least two have one.
    pub second_cosine: Option<f32>,
    /// Best raw BM25 score among the results.
    pub top_bm25: Option<f32>,
    /// Share of the query's term weight (IDF) that occurs in the best hits' text.
    pub coverage: f32,
    /// Share of the query's term weight carried by terms no chunk of the index contains.
    pub unseen: f32,
    /// Whether the best hit is in the top 10 of both the lexical and the vector leg.
    pub agreement: bool,
    /// Distinct analyzed terms of the query.
    pub terms: usize,
    /// The best [`Hit::coverage`] among the first hits: how much of the query one chunk holds.
    pub best_coverage: f32,
    /// How far the vector leg's best cosine stands above its `[abstain] gap_rank`-th: a prompt
    /// that something answers is close to a few chunks, one that only shares the project's topic
    /// is about as close to many. `None` without a model.
    pub cosine_gap: Option<f32>,
}

/// Words too common to place a window by.
const SNIPPET_STOP: &[&str] = &[
    "about", "after", "and", "are", "but", "can", "did", "does", "for", "from", "get", "has", "have", "how", "into",
    "its", "not", "now", "our", "out", "that", "the", "their", "them", "then", "there", "these", "they", "this", "was",
    "way", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// The words of `query` a snippet is placed by: longer than two characters, not too common,
/// ASCII-lowercased, sorted, each once.
pub(crate) fn snippet_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|t| t.len() > 2)
        .map(str::to_ascii_lowercase)
        .filter(|t| !SNIPPET_STOP.contains(&t.as_str()))
        .collect();
    terms.sort();
    terms.dedup();
    terms
}

/// The part of `text` (whitespace collapsed) of at most `max` characters that best shows `query`:
/// the window holding the most distinct query words, placed so that a third of the room left
/// goes before the first of them and two thirds after (what answers a question tends to follow
/// the words it names).
pub fn snippet(text: &str, query: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    // ASCII case folding keeps byte offsets, so windows found in `lower` cut `flat` on the same bytes.
    let lower = flat.to_ascii_lowercase();
    let terms = snippet_terms(query);
    // Every occurrence of a query word: (start, end, which word), in text order.
    let mut hits: Vec<(usize, usize, usize)> = terms
        .iter()
        .enumerate()
        .flat_map(|(i, t)| lower.match_indices(t.as_str()).map(move |(p, m)| (p, p + m.len(), i)))
        .collect();
    hits.sort_unstable();
    let starts: Vec<usize> = std::iter::once(0).chain(lower.match_indices(' ').map(|(i, _)| i + 1)).collect();
    // Slide a window of `max` bytes over word starts, counting the words inside it.
    let (mut counts, mut distinct) = (vec![0usize; terms.len()], 0usize);
    let (mut lo, mut hi) = (0usize, 0usize);
    let mut best_key = (0usize, usize::MAX);
    let mut best = 0usize;
    for &s in &starts {
        let end = s + max;
        while hi < hits.len() && hits[hi].1 <= end {
            counts[hits[hi].2] += 1;
            distinct += usize::from(counts[hits[hi].2] == 1);
            hi += 1;
        }
        while lo < hi && hits[lo].0 < s {
            counts[hits[lo].2] -= 1;
            distinct -= usize::from(counts[hits[lo].2] == 0);
            lo += 1;
        }
        if distinct > 0 {
            let (first, last) = (hits[lo].0, hits[hi - 1].1);
            let slack = max.saturating_sub(last - first);
            let miss = (first - s).abs_diff(slack / 3);
            if distinct > best_key.0 || (distinct == best_key.0 && miss < best_key.1) {
                (best_key, best) = ((distinct, miss), s);
            }
        }
        // Later windows would only be shorter.
        if end >= lower.len() {
            break;
        }
    }
    let mut out: String = flat[best..].chars().take(max).collect();
    if best > 0 {
        out.insert_str(0, "… ");
    }
    if flat.len() - best > out.len() {
        out.push_str(" …");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_picks_the_window_with_query_terms() {
        let text = format!("{} the session store moved to redis {}", "filler ".repeat(100), "tail ".repeat(100));
        let s = snippet(&text, "session store", 60);
        assert!(s.contains("session store"), "{s}");
        assert!(s.chars().count() <= 64);
        assert_eq!(snippet("short text", "x", 60), "short text");
    }

    #[test]
    fn snippet_leaves_room_after_the_words_it_found() {
        let text = format!(
            "{} the toggle_debug event updates the computer through update_computer_inputs and the view renders again {}",
            "filler ".repeat(100),
            "tail ".repeat(100)
        );
        // The first window holding every word would end at "toggle_debug"; the answer follows it.
        let s = snippet(&text, "how does the toggle of debug work?", 120);
        assert!(s.contains("toggle_debug") && s.contains("update_computer_inputs"), "{s}");
        // Words too common to place a window by do not pull it into the filler.
        let s = snippet(&format!("{}{text}", "how the does what ".repeat(40)), "how does the toggle_debug work", 120);
        assert!(s.contains("update_computer_inputs"), "{s}");
        // Case folding keeps byte offsets on text that is not ASCII.
        let odd = format!("{} İstanbul ÅSA toggle_debug {}", "ß ".repeat(200), "ǅ ".repeat(200));
        assert!(snippet(&odd, "toggle_debug", 40).contains("toggle_debug"));
    }
}
