//! What a person reads (search results with highlighted query words) and files a command writes
//! (`--out`): written whole or not at all.

use crate::SearchResponse;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file a command writes with `--out`: into a temporary file beside it, renamed over it only
/// once complete, so a failing command leaves the target as it was. A path inside an index
/// directory is refused: overwriting `CURRENT` or a generation's file would destroy the index.
pub(crate) struct OutFile {
    path: PathBuf,
    tmp: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
}

impl OutFile {
    pub fn create(path: &Path) -> Result<OutFile> {
        let abs = std::path::absolute(path)?;
        if abs.ancestors().skip(1).any(|d| d.file_name().is_some_and(|n| n == ".engine") || d.join("CURRENT").is_file())
        {
            return Err(crate::Error::InvalidInput(format!(
                "{} is inside an index directory; write the output elsewhere",
                path.display()
            ))
            .into());
        }
        let name = abs.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let tmp = abs.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let file = std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(OutFile { path: path.to_path_buf(), tmp, file: std::io::BufWriter::new(file) })
    }

    /// Writes `bytes` to `path` whole, or leaves it as it was.
    pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
        let mut out = OutFile::create(path)?;
        out.write_all(bytes).with_context(|| format!("writing {}", path.display()))?;
        out.finish()
    }

    /// Renames the complete file over the target.
    pub fn finish(mut self) -> Result<()> {
        let done = self.file.flush().and_then(|()| self.file.get_ref().sync_all());
        done.and_then(|()| std::fs::rename(&self.tmp, &self.path))
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutFile {
    /// An unfinished file is removed (after `finish` it was renamed away: nothing to remove).
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// How search results are shown to a person.
pub(crate) struct Display {
    /// Colour the query's words (ANSI bold yellow).
    pub color: bool,
    /// Add each hit's legs, ranks, fusion and boosts.
    pub explain: bool,
    /// How far a running indexing run's embedding has got.
    pub embedding: Option<crate::index::Embedding>,
}

const BOLD_YELLOW: &str = "\x1b[1;33m";
const RESET: &str = "\x1b[0m";

/// `text` with exactly the query's words coloured: each occurrence of a word the snippet was
/// placed by ([`crate::hit::snippet_terms`]: no stop words), matched without regard to ASCII case
/// where a word starts, and nothing around it (no neighbouring letters or punctuation).
pub(crate) fn highlight(text: &str, query: &str) -> String {
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

/// Prints results for a person.
pub(crate) fn print_human(resp: &SearchResponse, display: &Display) {
    if resp.degraded {
        eprintln!(
            "engine: answering from BM25 only: {}",
            resp.degraded_reason.as_deref().unwrap_or("no embedding model")
        );
    }
    match (resp.vectors, display.embedding) {
        (Some(v), Some(e)) => eprintln!(
            "engine: still embedding ({} of {} texts done): this search had vectors for {} of {} chunks; the rest are found by BM25 only",
            e.done, e.total, v.embedded, v.chunks
        ),
        (Some(v), None) => eprintln!(
            "engine: {} of {} chunks have vectors (the next `engine index` embeds the rest); the rest are found by BM25 only",
            v.embedded, v.chunks
        ),
        (None, _) => {}
    }
    if let Some(r) = resp.rerank.as_ref().filter(|r| !r.applied) {
        eprintln!("engine: not reranked: {}", r.reason.as_deref().unwrap_or("unknown reason"));
    }
    if resp.results.is_empty() {
        println!("no results for {:?}", resp.query);
        return;
    }
    if let Some(line) = verdict_line(resp) {
        println!("{line}");
    }
    if display.explain {
        if let Some(w) = resp.results.iter().find_map(|h| h.explain.as_ref()).map(|e| e.weights) {
            let intent = format!("{:?}", resp.intent.top).to_lowercase();
            println!(
                "leg weights for a {intent} query: vector {:.2}, bm25 {:.2}, symbol {:.2}",
                w.vector, w.lexical, w.symbol
            );
        }
    }
    for (i, h) in resp.results.iter().enumerate() {
        println!("{:>2}. {:<6}  {}:{}-{}  {}", i + 1, h.confidence.as_str(), h.path, h.start_line, h.end_line, h.title);
        let snippet = if display.color { highlight(&h.snippet, &resp.query) } else { h.snippet.clone() };
        println!("      {snippet}");
        if display.explain {
            for line in explain_lines(h) {
                println!("      {line}");
            }
        }
    }
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
