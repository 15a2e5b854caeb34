//! Excerpts that keep a text's lines: code and lists read as they were written, line breaks and
//! indentation kept (less the indentation every line shares), and a cut falls between two lines.
//! Only a line longer than the whole excerpt's room is cut inside (a paragraph written on one
//! line, minified code), between words where it has spaces; every cut is marked `…`.

use crate::hit::snippet_terms;

/// A text's lines made ready to cut: trailing whitespace and blank edges gone, each run of blank
/// lines made one, and the indentation all lines share removed.
pub(super) fn lines(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(line);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let indent = common_indent(&out);
    out.into_iter().map(|l| l.get(indent..).unwrap_or_default()).collect()
}

/// Bytes of leading blanks (spaces and tabs, so a byte count) every non-blank line starts with.
fn common_indent(lines: &[&str]) -> usize {
    let mut common: Option<&str> = None;
    for l in lines.iter().filter(|l| !l.is_empty()) {
        let lead = &l[..l.len() - l.trim_start_matches([' ', '\t']).len()];
        common = Some(match common {
            None => lead,
            Some(c) => &c[..c.bytes().zip(lead.bytes()).take_while(|(a, b)| a == b).count()],
        });
    }
    common.map_or(0, str::len)
}

/// The whole text, as [`lines`] lays it out.
pub(super) fn whole(text: &str) -> String {
    lines(text).join("\n")
}

/// The one line of `text` that best shows `query`, without its indentation: the first holding
/// the most distinct query words, else the first with a letter or digit in it, an attribute or
/// decorator line (`#[derive(…)]`, `@click.group()`) only when nothing else has. A line longer
/// than `max` characters is cut to the [`excerpt`] of it that best shows them.
pub(super) fn line(text: &str, query: &str, max: usize) -> String {
    let terms = snippet_terms(query);
    let distinct = |l: &str| {
        let lower = l.to_ascii_lowercase();
        terms.iter().filter(|t| lower.contains(t.as_str())).count()
    };
    let best = text
        .lines()
        .map(str::trim)
        .enumerate()
        .filter(|(_, l)| l.chars().any(char::is_alphanumeric))
        .max_by_key(|(i, l)| (distinct(l), !l.starts_with(['@', '#']), std::cmp::Reverse(*i)))
        .map_or("", |(_, l)| l);
    excerpt(best, query, max)
}

/// A piece of text an excerpt is made of: a line, or part of a line too long for the excerpt.
struct Segment<'a> {
    text: &'a str,
    /// What joins it to the segment before: a line break, or the space (or nothing, inside a
    /// word) where a long line was cut.
    sep: &'static str,
    chars: usize,
}

impl Segment<'_> {
    fn starts_line(&self) -> bool {
        self.sep == "\n"
    }
}

/// The text's lines as segments: a line of at most `max` characters whole, a longer one in
/// pieces of about a quarter of `max`, cut after a space where there is one.
fn segments<'a>(lines: &[&'a str], max: usize) -> Vec<Segment<'a>> {
    let piece = (max / 4).max(1);
    let mut out = Vec::new();
    for line in lines {
        let chars = line.chars().count();
        if chars <= max {
            out.push(Segment { text: line, sep: "\n", chars });
            continue;
        }
        let (mut rest, mut sep) = (*line, "\n");
        while !rest.is_empty() {
            let limit = rest.char_indices().nth(piece).map_or(rest.len(), |(i, _)| i);
            let (end, next, after) = match rest[..limit].rfind(' ').filter(|&i| i > 0 && limit < rest.len()) {
                Some(i) => (i, i + 1, " "),
                None => (limit, limit, ""),
            };
            let text = &rest[..end];
            out.push(Segment { text, sep, chars: text.chars().count() });
            (rest, sep) = (&rest[next..], after);
        }
    }
    out
}

/// Where query words occur in one segment: which words, and the character offsets of the first
/// and the end of the last.
struct Matches {
    terms: Vec<usize>,
    first: usize,
    last: usize,
}

fn matches(seg: &Segment, terms: &[String]) -> Option<Matches> {
    // ASCII case folding keeps byte offsets.
    let lower = seg.text.to_ascii_lowercase();
    let found: Vec<(usize, usize, usize)> = terms
        .iter()
        .enumerate()
        .flat_map(|(t, term)| lower.match_indices(term.as_str()).map(move |(at, m)| (t, at, at + m.len())))
        .collect();
    let first = found.iter().map(|f| f.1).min()?;
    let last = found.iter().map(|f| f.2).max()?;
    let chars = |byte: usize| seg.text[..byte].chars().count();
    Some(Matches { terms: found.iter().map(|f| f.0).collect(), first: chars(first), last: chars(last) })
}

/// The part of `text` of at most `max` characters (plus the `…` marks) that best shows `query`,
/// whole lines wherever the lines fit: the window holding the most distinct query words; among
/// those one that cuts no line, then one placed so that a third of the room left goes before the
/// first of them (what answers a question tends to follow the words it names). No query word
/// anywhere: the start of the text.
pub(super) fn excerpt(text: &str, query: &str, max: usize) -> String {
    let lines = lines(text);
    let segs = segments(&lines, max.max(1));
    // Characters before each segment in the text, separators included.
    let mut before = vec![0usize; segs.len() + 1];
    for (i, s) in segs.iter().enumerate() {
        before[i + 1] = before[i] + s.chars + if i == 0 { 0 } else { s.sep.len() };
    }
    // Characters of the window [s, e): its segments and the separators between them.
    let size = |s: usize, e: usize| before[e] - before[s] - if s == 0 { 0 } else { segs[s].sep.len() };
    if segs.is_empty() || size(0, segs.len()) <= max {
        return render(&segs, 0, segs.len());
    }
    let terms = snippet_terms(query);
    let found: Vec<Option<Matches>> = segs.iter().map(|s| matches(s, &terms)).collect();
    if found.iter().all(Option::is_none) {
        let end = (1..=segs.len()).take_while(|&e| size(0, e) <= max).last().unwrap_or(1);
        return render(&segs, 0, end);
    }
    let mut best = (0usize, false, std::cmp::Reverse(usize::MAX), 0usize, 0usize);
    let mut end = 0;
    for start in 0..segs.len() {
        end = end.max(start + 1);
        while end < segs.len() && size(start, end + 1) <= max {
            end += 1;
        }
        let mut seen = vec![false; terms.len()];
        let (mut first, mut last) = (None, 0);
        for (i, m) in found.iter().enumerate().take(end).skip(start) {
            let Some(m) = m else { continue };
            m.terms.iter().for_each(|&t| seen[t] = true);
            let offset = size(start, i + 1) - segs[i].chars;
            first.get_or_insert(offset + m.first);
            last = offset + m.last;
        }
        let distinct = seen.iter().filter(|s| **s).count();
        let whole = segs[start].starts_line() && segs.get(end).is_none_or(Segment::starts_line);
        let miss = first.map_or(0, |f: usize| f.abs_diff(max.saturating_sub(last - f) / 3));
        let key = (distinct, whole, std::cmp::Reverse(miss), start, end);
        if (key.0, key.1, key.2) > (best.0, best.1, best.2) {
            best = key;
        }
    }
    let (mut start, mut end) = (best.3, best.4);
    // A blank line at either edge says nothing.
    while end > start + 1 && segs[start].text.is_empty() {
        start += 1;
    }
    while end > start + 1 && segs[end - 1].text.is_empty() {
        end -= 1;
    }
    render(&segs, start, end)
}

/// The segments [start, end) joined, each cut marked: `…` on a line of its own where whole
/// lines were left out, next to the text where a line was cut.
fn render(segs: &[Segment], start: usize, end: usize) -> String {
    let mut out = String::new();
    if start > 0 {
        out.push_str(match segs[start].sep {
            "\n" => "…\n",
            " " => "… ",
            _ => "…",
        });
    }
    for (i, s) in segs.iter().enumerate().take(end).skip(start) {
        if i > start {
            out.push_str(s.sep);
        }
        out.push_str(s.text);
    }
    if let Some(next) = segs.get(end) {
        out.push_str(match next.sep {
            "\n" => "\n…",
            " " => " …",
            _ => "…",
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = "    /// Loads a session, refreshing its expiry.
    pub fn load(&self, id: &str) -> Result<Option<Session>, StoreError> {
        let key = format!(\"{}:{}\", self.prefix, id);


        let raw: Option<String> = conn.get_ex(&key, SESSION_TTL)?;   
        raw.map(|r| serde_json::from_str(&r)).transpose()
    }
";

    #[test]
    fn lines_lose_shared_indentation_trailing_blanks_and_repeated_blank_lines() {
        let l = lines(CODE);
        assert_eq!(l[0], "/// Loads a session, refreshing its expiry.");
        assert_eq!(l[2], "    let key = format!(\"{}:{}\", self.prefix, id);");
        assert_eq!(l[3], "", "two blank lines become one");
        assert_eq!(l[4], "    let raw: Option<String> = conn.get_ex(&key, SESSION_TTL)?;", "trailing blanks go");
        assert_eq!(l.len(), 7);
        // Tabs count as indentation; a line with less keeps what it has.
        assert_eq!(lines("\n\tif x {\n\t\ty()\n\t}\n\n"), ["if x {", "\ty()", "}"]);
        assert_eq!(lines("  a\n b"), [" a", "b"]);
    }

    #[test]
    fn a_text_that_fits_is_whole_and_a_cut_falls_between_lines() {
        assert_eq!(excerpt(CODE, "session", 1000), whole(CODE));
        // Room for three lines: the ones with the query's words, cut between lines and marked.
        let e = excerpt(CODE, "serde_json transpose raw", 120);
        assert!(e.starts_with("…\n    let raw: Option<String>") && e.contains(".transpose()\n"), "{e}");
        assert!(!e.contains("let key"), "{e}");
        for line in e.lines().filter(|l| *l != "…") {
            assert!(lines(CODE).contains(&line), "{line:?} is not a whole line");
        }
        // No query word: the start, whole lines.
        let e = excerpt(CODE, "nothing here", 130);
        assert!(e.starts_with("/// Loads a session") && e.ends_with("\n…"), "{e}");
        assert!(e.chars().count() <= 130 + 2);
    }

    #[test]
    fn a_line_is_the_one_naming_the_query_else_the_first_with_a_word() {
        assert_eq!(line(CODE, "serde_json", 100), "raw.map(|r| serde_json::from_str(&r)).transpose()");
        assert_eq!(line(CODE, "SESSION_TTL raw", 100), "let raw: Option<String> = conn.get_ex(&key, SESSION_TTL)?;");
        assert_eq!(line("}\n\n  fn main() {\n}", "nothing", 100), "fn main() {");
        assert_eq!(line("#[derive(Debug)]\n@cache\npub struct Store {", "nothing", 100), "pub struct Store {");
        let long = format!("{} redis {}", "a ".repeat(100), "b ".repeat(100));
        let l = line(&long, "redis", 40);
        assert!(l.starts_with("… ") && l.contains("redis") && l.ends_with(" …") && l.chars().count() <= 44, "{l}");
    }

    #[test]
    fn only_a_line_longer_than_the_room_is_cut_inside_at_a_space() {
        let para = format!("{} the session store moved to redis because {}", "filler ".repeat(60), "tail ".repeat(60));
        let text = format!("# Heading\n{para}\nlast line");
        let e = excerpt(&text, "session store redis", 100);
        assert!(e.contains("session store moved to redis"), "{e}");
        assert!(e.starts_with("… ") && e.ends_with(" …") && e.chars().count() <= 104, "{e}");
        assert!(!e.contains("fille ") && !e.contains(" ail"), "cut between words: {e}");
        // A line without spaces is cut where it must be.
        let blob = "x".repeat(500);
        let e = excerpt(&blob, "q", 100);
        assert_eq!(e, format!("{}…", "x".repeat(100)));
        // Whole lines win over a cut line holding as many of the query's words.
        let text = format!("{}\nshort line about redis\n{}", "redis ".repeat(50), "more ".repeat(3));
        assert_eq!(excerpt(&text, "redis", 60), "…\nshort line about redis\nmore more more");
    }
}
