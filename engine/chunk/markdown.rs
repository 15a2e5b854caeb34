//! Markdown: one section per heading, titled with its heading path ("Setup > Models"); long
//! sections are packed from paragraphs, and a fenced code block is never split at a blank line.

use super::{pack, paragraphs, Chunk, Counter};
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

/// Chunks a markdown document by heading section; text before the first heading gets the default title.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    // (heading path, first line number, lines)
    let mut sections: Vec<(Vec<String>, usize, Vec<&str>)> = vec![(Vec::new(), 1, Vec::new())];
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut in_fence = false;
    for (i, line) in doc.text.lines().enumerate() {
        if is_fence(line) {
            in_fence = !in_fence;
        }
        if !in_fence {
            if let Some((level, text)) = heading(line) {
                stack.retain(|(l, _)| *l < level);
                stack.push((level, text.to_string()));
                sections.push((stack.iter().map(|(_, t)| t.clone()).collect(), i + 1, Vec::new()));
            }
        }
        sections.last_mut().expect("one section").2.push(line);
    }
    let fallback = doc.default_title();
    let mut out = Vec::new();
    for (path, first, lines) in sections {
        let has_body = lines.iter().skip(usize::from(!path.is_empty())).any(|l| !l.trim().is_empty());
        if !has_body {
            continue;
        }
        let title = if path.is_empty() { fallback.clone() } else { path.join(" > ") };
        let units = paragraphs(&lines.join("\n"), first, &is_fence);
        for w in pack(units, config, count, "\n\n") {
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
    }
}
