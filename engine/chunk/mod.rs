//! Chunking: one chunker per kind of document (Markdown, reStructuredText, AsciiDoc, Texinfo and
//! Maven xdoc by section through [`sections`], code, with yacc and lex grammars by [`grammar`],
//! JSON memory records, plain text),
//! all producing [`Chunk`]s within a token budget. Budgets are counted with the embedding model's
//! tokenizer, so a chunk is what the model actually sees. [`pack`] is the one packing routine every
//! chunker uses: it fills windows with units (paragraphs, blocks, lines) in order, splits units that
//! alone exceed the budget, and carries trailing units into the next window as overlap.

pub mod asciidoc;
pub mod code;
pub mod grammar;
pub mod markdown;
pub mod memory;
pub mod rst;
mod sections;
pub mod texinfo;
pub mod text;
pub mod xdoc;

use crate::config::ChunkConfig;
use crate::ingest::{Document, Kind, Lang};

/// Bump when chunk boundaries change, so indexes built by older chunkers are rebuilt (4: each
/// document's entry says whether a tool generated it, which only a re-read of the file tells;
/// 5: yacc and lex grammars by section and rule, C titles with their file, C comments one
/// blank line above a function kept with it, Texinfo and xdoc by section).
pub(crate) const CHUNKER_VERSION: u32 = 5;

/// A piece of a document: what is indexed, embedded and returned.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk {
    /// Heading path, symbol path or record title.
    pub title: String,
    /// The chunk's body, without its title.
    pub text: String,
    /// Symbols the chunk defines (code).
    pub symbols: Vec<String>,
    /// A memory record's tags (empty for other documents).
    pub tags: Vec<String>,
    /// A memory record's category (`None` for other documents or when the record has none).
    pub category: Option<String>,
    /// 1-based inclusive line range in the source document.
    pub start_line: usize,
    /// Last line of that range.
    pub end_line: usize,
}

/// Counts model tokens.
pub(crate) type Counter<'a> = &'a (dyn Fn(&str) -> usize + Sync);

/// Splits a document according to its kind.
pub fn chunk_document(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    let mut chunks = match doc.kind {
        Kind::Markdown => markdown::chunk(doc, config, count),
        Kind::Rst => rst::chunk(doc, config, count),
        Kind::AsciiDoc => asciidoc::chunk(doc, config, count),
        Kind::Texinfo => texinfo::chunk(doc, config, count),
        Kind::Xdoc => xdoc::chunk(doc, config, count),
        Kind::Code if matches!(doc.lang, Some(Lang::Yacc | Lang::Lex)) => grammar::chunk(doc, config, count),
        Kind::Code => code::chunk(doc, config, count),
        Kind::Memory => memory::chunk(doc, config, count),
        Kind::Text => text::chunk(doc, config, count),
    };
    chunks.retain(|c| !c.text.trim().is_empty());
    chunks
}

/// A unit of packing: some text and its line range.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub text: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// A packed window.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Window {
    pub text: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// Splits `text` (starting at `first_line`) into paragraph units at blank lines; lines for which
/// `keep_together(line)` toggles a region (code fences) never split inside that region.
pub(crate) fn paragraphs(text: &str, first_line: usize, is_fence: &dyn Fn(&str) -> bool) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    let mut start = first_line;
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        let lineno = first_line + i;
        if is_fence(line) {
            in_fence = !in_fence;
        }
        if line.trim().is_empty() && !in_fence {
            if !cur.is_empty() {
                units.push(Unit { text: cur.join("\n"), start_line: start, end_line: lineno - 1 });
                cur.clear();
            }
            continue;
        }
        if cur.is_empty() {
            start = lineno;
        }
        cur.push(line);
    }
    if !cur.is_empty() {
        units.push(Unit { text: cur.join("\n"), start_line: start, end_line: start + cur.len() - 1 });
    }
    units
}

/// Packs units into windows of at most `config.max_tokens` tokens with ~`config.overlap` overlap.
/// `sep` joins units inside a window ("\n\n" for paragraphs, "\n" for lines).
pub(crate) fn pack(units: Vec<Unit>, config: &ChunkConfig, count: Counter, sep: &str) -> Vec<Window> {
    let budget = config.max_tokens.max(16);
    let overlap = (budget as f32 * config.overlap) as usize;
    let mut sized: Vec<(Unit, usize)> = Vec::new();
    for u in units {
        explode(u, budget, count, &mut sized);
    }
    let mut windows = Vec::new();
    let mut cur: Vec<(Unit, usize)> = Vec::new();
    let mut cur_tokens = 0;
    let emit = |cur: &[(Unit, usize)], windows: &mut Vec<Window>| {
        if let (Some(first), Some(last)) = (cur.first(), cur.last()) {
            let text = cur.iter().map(|(u, _)| u.text.as_str()).collect::<Vec<_>>().join(sep);
            windows.push(Window { text, start_line: first.0.start_line, end_line: last.0.end_line });
        }
    };
    for (unit, tokens) in sized {
        if cur_tokens + tokens > budget && !cur.is_empty() {
            emit(&cur, &mut windows);
            // Carry the trailing units that fit in the overlap (never the whole window).
            let mut keep = 0;
            let mut kept_tokens = 0;
            for (_, t) in cur.iter().rev().take(cur.len() - 1) {
                if kept_tokens + t > overlap || kept_tokens + t + tokens > budget {
                    break;
                }
                kept_tokens += t;
                keep += 1;
            }
            cur.drain(..cur.len() - keep);
            cur_tokens = kept_tokens;
        }
        cur_tokens += tokens;
        cur.push((unit, tokens));
    }
    emit(&cur, &mut windows);
    windows
}

/// Splits a unit over budget into lines, and a line over budget into word (or character) runs.
fn explode(unit: Unit, budget: usize, count: Counter, out: &mut Vec<(Unit, usize)>) {
    let tokens = count(&unit.text);
    if tokens <= budget {
        out.push((unit, tokens));
        return;
    }
    if unit.start_line < unit.end_line || unit.text.contains('\n') {
        for (i, line) in unit.text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let n = unit.start_line + i;
            explode(Unit { text: line.to_string(), start_line: n, end_line: n }, budget, count, out);
        }
        return;
    }
    // One long line: cut into pieces of roughly `budget` tokens.
    let pieces = tokens.div_ceil(budget).max(2);
    let words: Vec<&str> = unit.text.split_whitespace().collect();
    let parts: Vec<String> = if words.len() >= pieces * 2 {
        words.chunks(words.len().div_ceil(pieces)).map(|w| w.join(" ")).collect()
    } else {
        let chars: Vec<char> = unit.text.chars().collect();
        chars.chunks(chars.len().div_ceil(pieces)).map(|c| c.iter().collect()).collect()
    };
    for p in parts {
        let t = count(&p);
        if t > budget && p.len() > 1 && p.len() < unit.text.len() {
            explode(Unit { text: p, ..unit.clone() }, budget, count, out);
        } else {
            out.push((Unit { text: p, ..unit.clone() }, t));
        }
    }
}

/// Each chunk as `title:start-end`, the form chunker tests compare.
#[cfg(test)]
pub(crate) fn titled_ranges(chunks: &[Chunk]) -> Vec<String> {
    chunks.iter().map(|c| format!("{}:{}-{}", c.title, c.start_line, c.end_line)).collect()
}

/// Asserts that each chunk's line range says where its text is: the range's first and last lines
/// hold text of the chunk, and every line of the chunk is found in the range, in order.
#[cfg(test)]
pub(crate) fn assert_ranges_honest(source: &str, chunks: &[Chunk]) {
    let lines: Vec<&str> = source.lines().collect();
    for c in chunks {
        let range = &lines[c.start_line - 1..c.end_line];
        let mut at = 0;
        for line in c.text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let found = range[at..].iter().position(|l| l.contains(line));
            let found = found.unwrap_or_else(|| panic!("{line:?} not in lines {}-{}", c.start_line, c.end_line));
            at += found;
        }
        for edge in [range[0], range[range.len() - 1]] {
            let edge = edge.trim();
            assert!(
                !edge.is_empty() && c.text.lines().any(|l| !l.trim().is_empty() && edge.contains(l.trim())),
                "lines {}-{} of {:?}: the edge line {edge:?} is not in its text",
                c.start_line,
                c.end_line,
                c.title
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;

    fn cfg(max_tokens: usize) -> ChunkConfig {
        ChunkConfig { max_tokens, overlap: 0.15, ..ChunkConfig::default() }
    }

    #[test]
    fn paragraphs_keep_fenced_blocks_whole() {
        let text = "para one\nstill one\n\n```\ncode\n\nmore code\n```\n\nlast";
        let units = paragraphs(text, 1, &|l: &str| l.trim_start().starts_with("```"));
        assert_eq!(units.len(), 3);
        assert_eq!((units[0].start_line, units[0].end_line), (1, 2));
        assert!(units[1].text.contains("more code"));
        assert_eq!((units[2].start_line, units[2].end_line), (10, 10));
    }

    #[test]
    fn pack_respects_budget_and_overlaps() {
        let units: Vec<Unit> = (1..=20)
            .map(|i| Unit { text: format!("word{i} alpha beta gamma delta"), start_line: i, end_line: i })
            .collect();
        let windows = pack(units, &cfg(40), &approx_tokens, "\n");
        assert!(windows.len() > 2);
        for w in &windows {
            assert!(approx_tokens(&w.text) <= 40, "{}", w.text);
        }
        // Consecutive windows share their boundary line (overlap).
        assert!(windows[1].start_line <= windows[0].end_line);
        assert_eq!(windows.last().unwrap().end_line, 20);
    }

    #[test]
    fn a_huge_single_line_is_split() {
        let line = "token ".repeat(5000);
        let windows = pack(vec![Unit { text: line, start_line: 1, end_line: 1 }], &cfg(100), &approx_tokens, "\n");
        assert!(windows.len() >= 50);
        assert!(windows.iter().all(|w| approx_tokens(&w.text) <= 100));
        let no_spaces = "x".repeat(20000);
        let windows = pack(vec![Unit { text: no_spaces, start_line: 1, end_line: 1 }], &cfg(100), &approx_tokens, "\n");
        assert!(windows.iter().all(|w| approx_tokens(&w.text) <= 100));
    }
}
