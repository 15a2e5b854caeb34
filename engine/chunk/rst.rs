//! reStructuredText: one section per title, titled with its heading path ("Flask > Installing")
//! by [`super::sections`]. A title is a line of text under a blank line (or the file's start)
//! underlined, and optionally overlined, with one punctuation character repeated; the levels are
//! the adornment styles in the order they first appear, as docutils reads them. Titles start in
//! the first column, so nothing inside an indented literal block (`::`, `.. code-block::`) or a
//! directive's body is taken for one. The adornment lines are left out of the chunks' text.

use super::sections::{self, Heading, Outline};
use super::{Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

/// Shortest adornment docutils takes under a longer title (it warns, and reads the title).
const SHORT_ADORNMENT: usize = 4;

/// The adornment character and length of a line that is one punctuation character repeated from
/// the first column.
fn adornment(line: &str) -> Option<(char, usize)> {
    let t = line.trim_end();
    let c = t.chars().next()?;
    let len = t.chars().count();
    (len >= 2 && c.is_ascii_punctuation() && t.chars().all(|x| x == c)).then_some((c, len))
}

/// A line that may be a title: text from the first column that is not itself an adornment.
fn title_text(line: &str) -> Option<&str> {
    let starts_flush = line.chars().next().is_some_and(|c| !c.is_whitespace());
    (starts_flush && adornment(line).is_none()).then_some(line.trim())
}

fn blank(lines: &[&str], i: Option<usize>) -> bool {
    i.is_none_or(|i| lines[i].trim().is_empty())
}

/// The title at line `i`, if one starts there: (style, title line, lines it spans).
fn title_at<'a>(lines: &[&'a str], i: usize) -> Option<((char, bool), &'a str, usize)> {
    if !blank(lines, i.checked_sub(1)) {
        return None;
    }
    let width = |s: &str| s.chars().count();
    if let Some((c, len)) = adornment(lines[i]) {
        // Overline, title (which may be inset), underline of the same character and length.
        let text = lines.get(i + 1).map(|l| l.trim()).filter(|t| !t.is_empty() && adornment(t).is_none())?;
        let under = lines.get(i + 2).and_then(|l| adornment(l))?;
        return (under == (c, len) && len >= width(text)).then_some(((c, true), text, 3));
    }
    let text = title_text(lines[i])?;
    let (c, len) = lines.get(i + 1).and_then(|l| adornment(l))?;
    (len >= width(text) || len >= SHORT_ADORNMENT).then_some(((c, false), text, 2))
}

/// The titles of a reStructuredText document and their adornment lines.
fn outline(text: &str) -> Outline {
    let lines: Vec<&str> = text.lines().collect();
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut out = Outline::default();
    let mut i = 0;
    while i < lines.len() {
        let Some((style, title, span)) = title_at(&lines, i) else {
            i += 1;
            continue;
        };
        let level = match styles.iter().position(|s| *s == style) {
            Some(p) => p + 1,
            None => {
                styles.push(style);
                styles.len()
            }
        };
        // The title's line starts the section; an overline stays behind, blank, in the one before.
        let line = if style.1 { i + 1 } else { i };
        out.decorations.extend(if style.1 { vec![i, i + 2] } else { vec![i + 1] });
        out.headings.push(Heading { line, level, title: title.to_string() });
        i += span;
    }
    out
}

/// Chunks a reStructuredText document by section; text before the first title gets the default title.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    sections::chunk(doc, &outline(&doc.text), &|_| false, config, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    fn chunks(name: &str, text: &str) -> Vec<Chunk> {
        let doc = Document::new(name, Kind::Rst, None, text.to_string());
        let c = chunk(&doc, &ChunkConfig::default(), &approx_tokens);
        crate::chunk::assert_ranges_honest(text, &c);
        c
    }

    use crate::chunk::titled_ranges as titles;

    #[test]
    fn sections_nest_by_the_order_styles_first_appear_and_literal_blocks_hold_no_titles() {
        let text = include_str!("../../tests/data/rst-docs/cli.rst");
        let c = chunks("docs/cli.rst", text);
        assert_eq!(
            titles(&c),
            [
                "cli.rst:1-1",
                "Command Line Interface:3-10",
                "Command Line Interface > Application Discovery:13-28",
                "Command Line Interface > Run the Development Server:31-41",
                "Command Line Interface > Run the Development Server > Debug Mode:44-48",
                "Command Line Interface > Run the Development Server > Watch and Ignore Files with the Reloader:51-55",
                "Command Line Interface > Custom Commands:58-62",
                "Command Line Interface > Registering Commands with Blueprints:65-69",
            ]
        );
        // The underline is left out; the literal block's heading-like lines are kept as text.
        assert!(c[1].text.starts_with("Command Line Interface\n\nInstalling Flask"), "{}", c[1].text);
        assert!(c[2].text.contains("A heading inside a literal block\n    ----"), "{}", c[2].text);
        assert!(c[3].text.contains("Not a title either"), "{}", c[3].text);
    }

    #[test]
    fn an_overlined_title_is_a_style_of_its_own() {
        let c = chunks("docs/index.rst", include_str!("../../tests/data/rst-docs/index.rst"));
        let t: Vec<&str> = c.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            t,
            ["index.rst", "Welcome to Flask", "Welcome to Flask > User's Guide", "Welcome to Flask > API Reference"]
        );
        assert!(!c[1].text.contains("=="), "{}", c[1].text);
    }

    #[test]
    fn what_is_not_a_title() {
        // Under a paragraph's second line, indented, a transition, a too-short underline.
        let text = "Some text\ngoes on here\n-------------\n\n  Indented\n  --------\n\n----------\n\nLong title here\n--\n\nReal\n====\nbody\n";
        let c = chunks("a.rst", text);
        assert_eq!(titles(&c), ["a.rst:1-11", "Real:13-15"]);
    }
}
