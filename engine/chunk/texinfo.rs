//! Texinfo (`.texi`, `.texinfo`, `.txi`), the manual format of GNU C projects: one section per
//! sectioning command (`@chapter`, `@section`, `@subsection`, their `@unnumbered…` and
//! `@appendix…` forms, `@top` and the `@heading` family), titled with its heading path by
//! [`super::sections`] (`FAQ > How do I use my own I/O classes?`). `@node` lines only name a
//! section for navigation and are left out of the text; nothing inside `@ignore` or an example
//! block is a title, and an example block is never split at a blank line.

use super::sections::{self, Heading, Outline};
use super::{Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

/// Sectioning commands and the depth each opens (1 = chapter).
const HEADINGS: &[(&str, usize)] = &[
    ("top", 1),
    ("chapter", 1),
    ("unnumbered", 1),
    ("appendix", 1),
    ("majorheading", 1),
    ("chapheading", 1),
    ("section", 2),
    ("unnumberedsec", 2),
    ("appendixsec", 2),
    ("heading", 2),
    ("subsection", 3),
    ("unnumberedsubsec", 3),
    ("appendixsubsec", 3),
    ("subheading", 3),
    ("subsubsection", 4),
    ("unnumberedsubsubsec", 4),
    ("appendixsubsubsec", 4),
    ("subsubheading", 4),
];

/// Blocks whose lines are literal: kept whole when packing, and never titles.
const LITERAL: &[&str] = &["example", "smallexample", "lisp", "smalllisp", "display", "format", "verbatim"];

/// The `@command` a line starts with, and the rest of the line.
fn command(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix('@')?;
    let end = rest.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len());
    (end > 0).then(|| (&rest[..end], rest[end..].trim()))
}

/// Whether a line opens or closes a literal block.
fn is_fence(line: &str) -> bool {
    match command(line.trim_end()) {
        Some(("end", what)) => LITERAL.contains(&what),
        Some((name, _)) => LITERAL.contains(&name),
        None => false,
    }
}

/// A title as a reader sees it: `@code{yylex()}` as `yylex()`, `@@` as `@`.
fn plain(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut chars = title.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '@' if matches!(chars.peek(), Some('@' | '{' | '}')) => out.extend(chars.next()),
            // `@code{` opens a group whose braces are dropped.
            '@' => {
                while chars.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                    chars.next();
                }
                if chars.peek() == Some(&'{') {
                    chars.next();
                }
            }
            '{' | '}' => {}
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// The sections of a Texinfo document; `@node` lines are decorations.
fn outline(text: &str) -> Outline {
    let mut outline = Outline::default();
    // The block a line is in: a literal block or `@ignore`, by name.
    let mut open: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let Some((name, rest)) = command(line.trim_end()) else {
            continue;
        };
        match open {
            Some(block) => {
                if name == "end" && rest == block {
                    open = None;
                }
            }
            None if name == "ignore" || LITERAL.contains(&name) => open = Some(name),
            None if name == "node" => outline.decorations.push(i),
            None => {
                let level = HEADINGS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l);
                let title = plain(rest);
                if let (Some(level), false) = (level, title.is_empty()) {
                    outline.headings.push(Heading { line: i, level, title });
                }
            }
        }
    }
    outline
}

/// Chunks a Texinfo manual by section; text before the first heading gets the default title.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    sections::chunk(doc, &outline(&doc.text), &is_fence, config, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    #[test]
    fn sections_nest_by_command_and_nodes_examples_and_ignored_text_hold_no_title() {
        let text = include_str!("../../tests/data/doc-markup/scanner.texi");
        let doc = Document::new("doc/scanner.texi", Kind::Texinfo, None, text.to_string());
        let c = chunk(&doc, &ChunkConfig::default(), &approx_tokens);
        crate::chunk::assert_ranges_honest(text, &c);
        let t = crate::chunk::titled_ranges(&c);
        assert_eq!(
            t,
            [
                "scanner.texi:1-3",
                "Scanner:6-7",
                "Start Conditions:10-22",
                "Start Conditions > Exclusive start conditions:25-26",
                "FAQ:29-30",
                "FAQ > How do I use yylex() from C++?:33-34",
            ]
        );
        assert!(c.iter().all(|c| !c.text.contains("@node")), "{c:?}");
        assert!(c[2].text.contains("@section not a title"), "{:?}", c[2]);
    }

    #[test]
    fn titles_lose_their_markup() {
        assert_eq!(plain("How do I use @code{yylex()} with @@-signs?"), "How do I use yylex() with @-signs?");
        assert_eq!(plain("The @samp{%option} @{braces@}"), "The %option {braces}");
    }
}
