//! Maven xdoc (`src/site/xdoc/*.xml`), the site documentation of Java projects: one section per
//! `<section name="…">` and `<subsection name="…">`, titled with its heading path by
//! [`super::sections`] (`Frequently Asked Questions > Does it support multi-threading?`). Ingest
//! reads an XML file as xdoc only when it is one (a `<document>` root with a named section); other
//! XML is text. A `<source>` block is never split at a blank line.

use super::sections::{self, Heading, Outline};
use super::{Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

/// Whether a line opens or closes a `<source>` block.
fn is_fence(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("<source") || t.ends_with("</source>")
}

/// The text of an attribute value as a reader sees it: `&amp;` as `&`.
fn unescape(value: &str) -> String {
    value.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// `Some((level, title))` for a line that opens a section or subsection.
fn heading(line: &str) -> Option<(usize, String)> {
    let t = line.trim_start();
    let (level, rest) =
        if let Some(r) = t.strip_prefix("<section") { (1, r) } else { (2, t.strip_prefix("<subsection")?) };
    let rest = rest.strip_prefix(char::is_whitespace)?;
    let at = rest.find("name=")? + "name=".len();
    let quote = rest[at..].chars().next().filter(|q| *q == '"' || *q == '\'')?;
    let value = &rest[at + 1..];
    let title = unescape(value[..value.find(quote)?].trim());
    (!title.is_empty()).then_some((level, title))
}

/// The sections of an xdoc document.
fn outline(text: &str) -> Outline {
    let headings = text
        .lines()
        .enumerate()
        .filter_map(|(i, line)| heading(line).map(|(level, title)| Heading { line: i, level, title }))
        .collect();
    Outline { headings, decorations: Vec::new() }
}

/// Chunks an xdoc document by section; the properties before the first section get the default
/// title.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    sections::chunk(doc, &outline(&doc.text), &is_fence, config, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    #[test]
    fn sections_and_subsections_are_titled_by_name() {
        let text = include_str!("../../tests/data/doc-markup/faq.xml");
        assert!(crate::ingest::is_xdoc(text));
        let doc = Document::new("src/site/xdoc/faq.xml", Kind::Xdoc, None, text.to_string());
        let c = chunk(&doc, &ChunkConfig::default(), &approx_tokens);
        crate::chunk::assert_ranges_honest(text, &c);
        let t = crate::chunk::titled_ranges(&c);
        assert_eq!(
            t,
            [
                "faq.xml:1-8",
                "Frequently Asked Questions:10-13",
                "Frequently Asked Questions > Does it support multi-threading?:14-26",
                "Frequently Asked Questions > What is <ISO8601> & why?:28-31",
                "Upgrading:33-39",
            ]
        );
        assert!(c[2].text.contains("lock.acquire();\n\n  parse();"), "a source block stays whole: {:?}", c[2]);
    }

    #[test]
    fn other_xml_is_not_xdoc() {
        use crate::ingest::is_xdoc;
        assert!(!is_xdoc("<project>\n  <modelVersion>4.0.0</modelVersion>\n</project>\n"));
        assert!(!is_xdoc("<document>\n  <body><p>no sections</p></body>\n</document>\n"));
        assert_eq!(heading("<sectionx name=\"a\">"), None);
        assert_eq!(heading("  <subsection name='Why?'>"), Some((2, "Why?".to_string())));
    }
}
