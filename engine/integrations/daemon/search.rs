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
        Output::Text => human(&resp, call.color),
        Output::ContextJson => Printed { stdout: json_line(&engine.context(&resp))?, ..Printed::default() },
        Output::Context => Printed { stdout: engine.context(&resp).text, ..Printed::default() },
    })
}

fn json_line<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map(|s| s + "\n")
        .map_err(|e| Error::io("writing the output", std::io::Error::other(e)))
}

fn highlight(text: &str, query: &str, color: bool) -> String {
    if !color {
        return text.to_string();
    }
    let terms: Vec<String> =
        query.split(|c: char| !c.is_alphanumeric()).filter(|t| t.len() > 2).map(str::to_lowercase).collect();
    text.split(' ')
        .map(|w| {
            let lw = w.to_lowercase();
            if terms.iter().any(|t| lw.contains(t.as_str())) {
                format!("\x1b[1;33m{w}\x1b[0m")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Results for a person, and the notes on how they were found.
fn human(resp: &SearchResponse, color: bool) -> Printed {
    use std::fmt::Write;
    let mut p = Printed::default();
    if resp.degraded {
        let why = resp.degraded_reason.as_deref().unwrap_or("no embedding model");
        let _ = writeln!(p.stderr, "engine: answering from BM25 only: {why}");
    }
    if let Some(v) = resp.vectors {
        let _ = writeln!(
            p.stderr,
            "engine: still embedding: {} of {} chunks have vectors; the rest are found by BM25 only",
            v.embedded, v.chunks
        );
    }
    if let Some(r) = resp.rerank.as_ref().filter(|r| !r.applied) {
        let _ = writeln!(p.stderr, "engine: not reranked: {}", r.reason.as_deref().unwrap_or("unknown reason"));
    }
    if resp.results.is_empty() {
        let _ = writeln!(p.stdout, "no results for {:?}", resp.query);
    }
    for (i, h) in resp.results.iter().enumerate() {
        let _ = writeln!(
            p.stdout,
            "{:>2}. {:.4} {:<6}  {}:{}-{}  {}",
            i + 1,
            h.score,
            h.confidence.as_str(),
            h.path,
            h.start_line,
            h.end_line,
            h.title
        );
        let _ = writeln!(p.stdout, "      {}", highlight(&h.snippet, &resp.query, color));
    }
    p
}
