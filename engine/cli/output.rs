//! What a person reads: search results with highlighted query words.

use crate::SearchResponse;
use std::io::IsTerminal;

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

/// Prints results for a person.
pub(crate) fn print_human(resp: &SearchResponse) {
    let color = std::io::stdout().is_terminal();
    if resp.degraded {
        eprintln!(
            "engine: answering from BM25 only: {}",
            resp.degraded_reason.as_deref().unwrap_or("no embedding model")
        );
    }
    if let Some(v) = resp.vectors {
        eprintln!(
            "engine: still embedding: {} of {} chunks have vectors; the rest are found by BM25 only",
            v.embedded, v.chunks
        );
    }
    if let Some(r) = resp.rerank.as_ref().filter(|r| !r.applied) {
        eprintln!("engine: not reranked: {}", r.reason.as_deref().unwrap_or("unknown reason"));
    }
    if resp.results.is_empty() {
        println!("no results for {:?}", resp.query);
    }
    for (i, h) in resp.results.iter().enumerate() {
        println!(
            "{:>2}. {:.4} {:<6}  {}:{}-{}  {}",
            i + 1,
            h.score,
            h.confidence.as_str(),
            h.path,
            h.start_line,
            h.end_line,
            h.title
        );
        println!("      {}", highlight(&h.snippet, &resp.query, color));
    }
}
