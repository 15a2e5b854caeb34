//! Sections of a marked-up document (Markdown, reStructuredText, AsciiDoc): the one routine that
//! turns a syntax's headings into chunks titled with their heading path ("Flask > Installing").
//! A syntax only says which lines are headings, at what level, and which lines merely decorate a
//! heading (reStructuredText's underlines, left out of the text); text before the first heading
//! gets the document's default title, a heading with no body gives no chunk, and long sections
//! are packed from paragraphs.

use super::{pack, paragraphs, Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

/// A heading: its title's line (0-based), its depth (1 = top) and its text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Heading {
    pub line: usize,
    pub level: usize,
    pub title: String,
}

/// What a syntax found in a document: its headings in line order, and the 0-based lines that
/// only decorate one.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    pub headings: Vec<Heading>,
    pub decorations: Vec<usize>,
}

/// Chunks `doc` by the sections of `outline`; `is_fence` toggles a block never split at a blank
/// line (a fenced code block).
pub(crate) fn chunk(
    doc: &Document,
    outline: &Outline,
    is_fence: &dyn Fn(&str) -> bool,
    config: &ChunkConfig,
    count: Counter,
) -> Vec<Chunk> {
    let mut lines: Vec<&str> = doc.text.lines().collect();
    for &d in &outline.decorations {
        if let Some(l) = lines.get_mut(d) {
            *l = "";
        }
    }
    // (first line, heading path): the text before the first heading has no path.
    let mut starts: Vec<(usize, Vec<String>)> = vec![(0, Vec::new())];
    let mut stack: Vec<(usize, &str)> = Vec::new();
    for h in &outline.headings {
        stack.retain(|(l, _)| *l < h.level);
        stack.push((h.level, &h.title));
        starts.push((h.line, stack.iter().map(|(_, t)| t.to_string()).collect()));
    }
    let fallback = doc.default_title();
    let mut out = Vec::new();
    for (i, (first, path)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(lines.len(), |s| s.0);
        let section = &lines[(*first).min(end)..end];
        let has_body = section.iter().skip(usize::from(!path.is_empty())).any(|l| !l.trim().is_empty());
        if !has_body {
            continue;
        }
        let title = if path.is_empty() { fallback.clone() } else { path.join(" > ") };
        for w in pack(paragraphs(&section.join("\n"), first + 1, is_fence), config, count, "\n\n") {
            out.push(Chunk {
                title: title.clone(),
                text: w.text,
                start_line: w.start_line,
                end_line: w.end_line,
                ..Chunk::default()
            });
        }
    }
    out
}
