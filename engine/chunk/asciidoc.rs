//! AsciiDoc: one section per `=` title (`== Installing`; one `=` more per level, the document
//! title being `= Flask`), titled with its heading path by [`super::sections`]. Nothing inside a
//! delimited block (listing `----`, literal `....`, example `====`, sidebar `****`, quote
//! `____`, passthrough `++++`, comment `////`, open `--`, fenced "```") is a title, and a listing,
//! literal or fenced block is never split at a blank line. Two-line (setext) titles of old
//! documents are read as text.

use super::sections::{self, Heading, Outline};
use super::{Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

/// The delimiter a line is, if it opens or closes a delimited block.
fn delimiter(line: &str) -> Option<&str> {
    let t = line.trim_end();
    if t == "--" || t.starts_with("```") {
        return Some(if t == "--" { t } else { "```" });
    }
    let c = t.chars().next()?;
    (t.len() >= 4 && "-.=*_+/".contains(c) && t.chars().all(|x| x == c)).then_some(t)
}

/// A listing, literal or fenced block: kept whole when packing.
fn is_fence(line: &str) -> bool {
    delimiter(line).is_some_and(|d| d == "```" || (d.len() >= 4 && (d.starts_with('-') || d.starts_with('.'))))
}

/// `Some((level, text))` for a section title line.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&b| b == b'=').count();
    let rest = &line[level..];
    let text = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('\t'))?.trim().trim_end_matches('=').trim();
    ((1..=6).contains(&level) && !text.is_empty()).then_some((level, text))
}

/// The section titles of an AsciiDoc document, delimited blocks aside.
fn outline(text: &str) -> Outline {
    let mut headings = Vec::new();
    let mut open: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        match (open, delimiter(line)) {
            (None, Some(d)) => open = Some(d),
            (Some(o), Some(d)) if o == d => open = None,
            (None, None) => {
                if let Some((level, title)) = heading(line) {
                    headings.push(Heading { line: i, level, title: title.to_string() });
                }
            }
            _ => {}
        }
    }
    Outline { headings, decorations: Vec::new() }
}

/// Chunks an AsciiDoc document by section; text before the first title gets the default title.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    sections::chunk(doc, &outline(&doc.text), &is_fence, config, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    #[test]
    fn titles_nest_by_their_equals_signs_and_blocks_hold_none() {
        let text = include_str!("../../tests/data/rst-docs/deploying.adoc");
        let doc = Document::new("docs/deploying.adoc", Kind::AsciiDoc, None, text.to_string());
        let c = chunk(&doc, &ChunkConfig::default(), &approx_tokens);
        crate::chunk::assert_ranges_honest(text, &c);
        let t = crate::chunk::titled_ranges(&c);
        assert_eq!(
            t,
            [
                "Deploying to Production:1-4",
                "Deploying to Production > Self-Hosted Options:6-15",
                "Deploying to Production > Self-Hosted Options > Gunicorn:17-19",
                "Deploying to Production > Hosting Platforms:21-27",
            ]
        );
        assert!(c[1].text.contains("== not a title: inside a listing block"));
    }
}
