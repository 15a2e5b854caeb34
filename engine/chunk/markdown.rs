//! Markdown: one section per ATX heading (`## Models`), titled with its heading path
//! ("Setup > Models") by [`super::sections`]; a fenced code block hides the `#` lines inside it and
//! is never split at a blank line.

use super::sections::{self, Heading, Outline};
use super::{Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// `Some((level, text))` for an ATX heading line.
fn heading(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    let level = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with(' ') && !rest.starts_with('\t') {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim()))
}

/// The headings of a Markdown text, fenced blocks aside.
fn outline(text: &str) -> Outline {
    let mut headings = Vec::new();
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        if is_fence(line) {
            in_fence = !in_fence;
        }
        if let Some((level, title)) = heading(line).filter(|_| !in_fence) {
            headings.push(Heading { line: i, level, title: title.to_string() });
        }
    }
    Outline { headings, decorations: Vec::new() }
}

/// Chunks a markdown document by heading section; text before the first heading gets the default title.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    sections::chunk(doc, &outline(&doc.text), &is_fence, config, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    #[test]
    fn headings_become_paths_and_fences_hide_hashes() {
        let text = "intro text\n\n# Setup\nsetup body\n## Models\nmodel body\n```sh\n# not a heading\n```\n# Usage\nuse it\n## Empty\n";
        let doc = Document::new("docs/a.md", Kind::Markdown, None, text.to_string());
        let chunks = chunk(&doc, &ChunkConfig::default(), &approx_tokens);
        let titles: Vec<&str> = chunks.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(titles, ["a.md", "Setup", "Setup > Models", "Usage"]);
        assert!(chunks[2].text.contains("# not a heading"));
        assert_eq!((chunks[2].start_line, chunks[2].end_line), (5, 9));
        crate::chunk::assert_ranges_honest(text, &chunks);
    }
}
