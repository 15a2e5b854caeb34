//! `engine search` wherever it runs: what it asks ([`SearchCall`]: the query, the resolved
//! settings, the output wanted) and what it prints ([`Printed`]), made by one function
//! ([`render`]) in the command's own process or in the warm daemon, so the two cannot differ.

use crate::error::{Error, ErrorClass, Result};
use crate::search::{Engine, SearchRequest};
use crate::{SearchResponse, Settings};
use serde::{Deserialize, Serialize};

/// What `engine search` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Output {
    /// For a person: one line per hit and its snippet.
    Text,
    /// The response as JSON.
    Json,
    /// The context block an LLM gets.
    Context,
    /// The context block as JSON, with the rule that shaped it and what it did with each hit.
    ContextJson,
}

/// One `engine search`: everything that shapes its output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchCall {
    /// The query, as typed.
    pub query: String,
    /// The resolved settings: the config file with the command's flags on top.
    pub settings: Settings,
    /// `--explain`: per-stage scores.
    pub explain: bool,
    /// What to print.
    pub output: Output,
    /// Highlight the query's words (stdout is a terminal).
    pub color: bool,
}

/// What a search prints, on each stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Printed {
    /// Standard output.
    pub stdout: String,
    /// Standard error: notes on a degraded answer.
    pub stderr: String,
}

/// A search that failed where it ran, said as the command says its own errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The error's class (the exit code follows from it).
    pub class: ErrorClass,
    /// The error and its causes, each said once.
    pub message: String,
}

impl Failure {
    pub(crate) fn of(e: &Error) -> Failure {
        Failure { class: e.class(), message: crate::error::chain_text(e) }
    }
}

/// Runs the call's search on `engine` and renders what the command prints.
pub fn render(engine: &Engine, call: &SearchCall) -> Result<Printed> {
    let search = &call.settings.search;
    let mut req = SearchRequest::new(call.query.clone(), search.k, search.mode);
    req.explain = call.explain;
    let resp = engine.search_with(&req)?;
    Ok(match call.output {
        Output::Json => Printed { stdout: json_line(&resp)?, ..Printed::default() },
        Output::Text => human(&resp, call, resp.vectors.and_then(|_| crate::index::embedding(&engine.dir))),
        Output::ContextJson => Printed { stdout: json_line(&engine.context(&resp))?, ..Printed::default() },
        Output::Context => Printed { stdout: engine.context(&resp).text, ..Printed::default() },
    })
}

fn json_line<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map(|s| s + "\n")
        .map_err(|e| Error::io("writing the output", std::io::Error::other(e)))
}

const BOLD_YELLOW: &str = "\x1b[1;33m";
const RESET: &str = "\x1b[0m";

/// `text` with exactly the query's words coloured: each occurrence of a word the snippet was
/// placed by ([`crate::hit::snippet_terms`]: no stop words), matched without regard to ASCII case
/// where a word starts, and nothing around it (no neighbouring letters or punctuation).
fn highlight(text: &str, query: &str) -> String {
    // ASCII case folding keeps byte offsets, so ranges found in `lower` cut `text` on the same bytes.
    let lower = text.to_ascii_lowercase();
    let starts_word = |at: usize| lower[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
    let mut ranges: Vec<(usize, usize)> = crate::hit::snippet_terms(query)
        .iter()
        .flat_map(|t| lower.match_indices(t.as_str()).map(|(at, m)| (at, at + m.len())))
        .filter(|&(at, _)| starts_word(at))
        .collect();
    ranges.sort_unstable();
    // Overlapping matches (`retry` and `retry_with_backoff`) are one coloured run.
    let mut runs: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (from, to) in ranges {
        match runs.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => runs.push((from, to)),
        }
    }
    let mut out = String::with_capacity(text.len() + runs.len() * 11);
    let mut done = 0;
    for (from, to) in runs {
        out.push_str(&text[done..from]);
        out.push_str(BOLD_YELLOW);
        out.push_str(&text[from..to]);
        out.push_str(RESET);
        done = to;
    }
    out.push_str(&text[done..]);
    out
}

/// The line above the hits: how likely it is that anything here answers the query (the
/// abstention model's calibrated probability), which is what tells a reader how much to trust
/// the list; per-hit fused scores are ranks in disguise (0.0126 next to 0.0123) and not shown.
fn verdict_line(resp: &SearchResponse) -> Option<String> {
    let v = resp.verdict?;
    let pct = (v.probability * 100.0).round();
    Some(if v.answers {
        format!("{pct}% likely that something here answers this")
    } else {
        format!("{pct}% likely that something here answers this: too little to go on, every hit is low")
    })
}

/// The `--explain` lines of one hit: each leg's rank and raw score, then how the fused score was
/// made (RRF sum, consensus, learned fusion, boosts, rerank) and how much of the query it holds.
fn explain_lines(h: &crate::Hit) -> Vec<String> {
    let Some(e) = &h.explain else { return Vec::new() };
    let legs: Vec<String> = e
        .legs
        .iter()
        .map(|l| match l.leg {
            crate::hit::Leg::Vector => format!("vector #{} (cosine {:.3})", l.rank, l.raw_score),
            crate::hit::Leg::Lexical => format!("bm25 #{} (score {:.2})", l.rank, l.raw_score),
            crate::hit::Leg::Symbol => format!("symbol #{} (score {:.2})", l.rank, l.raw_score),
        })
        .collect();
    let legs = if legs.is_empty() { "none".to_string() } else { legs.join(", ") };
    let mut fused = format!("rrf {:.4}", e.rrf);
    if e.consensus != 1.0 {
        fused.push_str(&format!(" x{:.2} consensus", e.consensus));
    }
    if let Some(l) = &e.learned {
        fused.push_str(&format!(", learned p {:.3}", l.probability));
    }
    for b in &e.boosts {
        fused.push_str(&format!(", {b}"));
    }
    if let Some(logit) = e.rerank_logit {
        fused.push_str(&format!(", rerank logit {logit:.2}"));
    }
    fused.push_str(&format!(" -> {:.4}", e.final_score));
    let mut lines = vec![format!("legs:  {legs}"), format!("fused: {fused}")];
    if let Some(c) = h.coverage {
        lines.push(format!("holds {:.0}% of the query's term weight", c * 100.0));
    }
    lines
}

/// Results for a person, and the notes on how they were found: the line saying how likely it is
/// that anything answers, then each hit's label, place and snippet (the query's words coloured
/// when `color`), with `--explain`'s lines under it.
fn human(resp: &SearchResponse, call: &SearchCall, embedding: Option<crate::index::Embedding>) -> Printed {
    use std::fmt::Write;
    let mut p = Printed::default();
    if resp.degraded {
        let why = resp.degraded_reason.as_deref().unwrap_or("no embedding model");
        let _ = writeln!(p.stderr, "engine: answering from BM25 only: {why}");
    }
    match (resp.vectors, embedding) {
        (Some(v), Some(e)) => {
            let _ = writeln!(
                p.stderr,
                "engine: still embedding ({} of {} texts done): this search had vectors for {} of {} chunks; the rest are found by BM25 only",
                e.done, e.total, v.embedded, v.chunks
            );
        }
        (Some(v), None) => {
            let _ = writeln!(
                p.stderr,
                "engine: {} of {} chunks have vectors (the next `engine index` embeds the rest); the rest are found by BM25 only",
                v.embedded, v.chunks
            );
        }
        (None, _) => {}
    }
    if let Some(r) = resp.rerank.as_ref().filter(|r| !r.applied) {
        let _ = writeln!(p.stderr, "engine: not reranked: {}", r.reason.as_deref().unwrap_or("unknown reason"));
    }
    if resp.results.is_empty() {
        let _ = writeln!(p.stdout, "no results for {:?}", resp.query);
        return p;
    }
    if let Some(line) = verdict_line(resp) {
        let _ = writeln!(p.stdout, "{line}");
    }
    if call.explain {
        if let Some(w) = resp.results.iter().find_map(|h| h.explain.as_ref()).map(|e| e.weights) {
            let intent = format!("{:?}", resp.intent.top).to_lowercase();
            let _ = writeln!(
                p.stdout,
                "leg weights for a {intent} query: vector {:.2}, bm25 {:.2}, symbol {:.2}",
                w.vector, w.lexical, w.symbol
            );
        }
    }
    for (i, h) in resp.results.iter().enumerate() {
        let (n, label) = (i + 1, h.confidence.as_str());
        let _ = writeln!(p.stdout, "{n:>2}. {label:<6}  {}:{}-{}  {}", h.path, h.start_line, h.end_line, h.title);
        let snippet = if call.color { highlight(&h.snippet, &resp.query) } else { h.snippet.clone() };
        let _ = writeln!(p.stdout, "      {snippet}");
        if !h.also_in.is_empty() {
            let _ = writeln!(p.stdout, "      also in: {}", h.also_in.join(", "));
        }
        if call.explain {
            for line in explain_lines(h) {
                let _ = writeln!(p.stdout, "      {line}");
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The coloured runs of a highlighted text.
    fn coloured(s: &str) -> Vec<&str> {
        s.split(BOLD_YELLOW).skip(1).map(|run| run.split(RESET).next().unwrap()).collect()
    }

    /// Issue 38: a whole space-separated token was coloured when it held a query word anywhere
    /// (`thumbnails.go:`, `(the`), and stop words were coloured too.
    #[test]
    fn highlighting_covers_exactly_the_query_words() {
        let text = "Thumbnails in thumbnails.go: PurgeTmp(dir) removes the thumbnail files of retry_with_backoff.";
        let out = highlight(text, "how are thumbnails purged by retry_with_backoff?");
        assert_eq!(coloured(&out), ["Thumbnails", "thumbnails", "retry_with_backoff"], "{out:?}");
        assert!(out.contains(&format!("{RESET}.go:")), "{out:?}");
        // Case kept as written; the text around the runs unchanged.
        assert_eq!(out.replace(BOLD_YELLOW, "").replace(RESET, ""), text);
        // Inside a word is not a match; a word after `_` or `.` is.
        let out = highlight("cache encache my_cache x.cache", "cache");
        assert_eq!(coloured(&out), ["cache", "cache", "cache"]);
        assert!(out.contains(" encache "), "{out:?}");
        // Overlapping words make one run; text that is not ASCII is cut on the right bytes.
        let out = highlight("ÅSA retry_with_backoff ǅ", "retry retry_with_backoff");
        assert_eq!(coloured(&out), ["retry_with_backoff"]);
        assert!(out.starts_with("ÅSA ") && out.ends_with(" ǅ"));
    }
}
