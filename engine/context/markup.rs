//! Making user-controlled text safe inside a context block: control and format characters
//! removed, secrets redacted, cut, XML-escaped; and rebuilding a block that came from elsewhere
//! (the daemon's answer) from its parts, so only a well-formed block of escaped text reaches the
//! model.

/// Unicode format characters (general category Cf): invisible, and some (bidi overrides,
/// zero-width joiners) change how the surrounding text reads.
fn is_format(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F)
}

/// Unicode noncharacters (U+FDD0..U+FDEF and the last two code points of every plane): not
/// allowed in well-formed XML, and meaningless in text.
fn is_noncharacter(c: char) -> bool {
    matches!(c as u32, 0xFDD0..=0xFDEF) || (c as u32 & 0xFFFE) == 0xFFFE
}

/// The visible text of a user-controlled string: control, format and noncharacters removed
/// (newlines and tabs kept in bodies, spaces elsewhere), then secrets redacted. In that order: a
/// zero-width character inside a token would hide it from the patterns and vanish afterwards.
/// Whatever cuts a text (a summary, a snippet) must cut this, never the raw text.
pub(crate) fn visible(s: &str, body: bool) -> String {
    let kept: String = s
        .chars()
        .filter_map(|c| match c {
            '\n' | '\t' if body => Some(c),
            '\n' | '\t' | '\r' => Some(' '),
            c if c.is_control() || is_format(c) || is_noncharacter(c) => None,
            c => Some(c),
        })
        .collect();
    crate::secrets::redact_owned(kept)
}

/// Makes a user-controlled string safe inside an attribute value: [`visible`], cut to
/// `max_chars` characters on a character boundary, then escaped with [`escape_attr`].
pub(crate) fn clean(s: &str, max_chars: usize, body: bool) -> String {
    escape_attr(&cut(s, max_chars, body))
}

/// Makes a user-controlled string safe as element text: [`visible`], cut to `max_chars`
/// characters on a character boundary, then escaped with [`escape_text`].
pub(crate) fn clean_text(s: &str, max_chars: usize, body: bool) -> String {
    escape_text(&cut(s, max_chars, body))
}

fn cut(s: &str, max_chars: usize, body: bool) -> String {
    let kept = visible(s, body);
    let mut cut: String = kept.chars().take(max_chars).collect();
    if kept.chars().nth(max_chars).is_some() {
        cut.push('…');
    }
    cut
}

/// Escapes element text: only what XML requires there, so code and prose keep their `>` and
/// quotes. `&` first (so `&lt;` stays literal text) and `<`; a `>` after `]` too, since `]]>` may
/// not appear in text and a redaction marker (`[redacted]`) ends in `]`.
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut after_bracket = false;
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if after_bracket => out.push_str("&gt;"),
            c => out.push(c),
        }
        after_bracket = c == ']';
    }
    out
}

/// Escapes an attribute value, always written between double quotes: `&`, `<` and `"`.
pub(crate) fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The elements a context block is made of, with the attributes each may carry.
/// `memory-compact` is what blocks of earlier versions (and the session digest) call a medium
/// entry; a daemon of an earlier version may still answer with one.
const BLOCK_ELEMENTS: &[(&str, &[&str])] = &[
    ("project-context", &[]),
    ("memory-context", &["kind"]),
    ("result", &["confidence", "path", "lines", "title", "tags", "category", "quoted", "also_in"]),
    ("memory-compact", &["confidence", "path", "lines", "title", "tags", "category", "quoted", "also_in"]),
    ("neighbour", &["lines", "title"]),
    ("memory-note", &[]),
];

/// Characters kept of one attribute value when a block is rebuilt.
const MAX_ATTRIBUTE_CHARS: usize = 1000;

/// Rebuilds a context block that came from elsewhere (the daemon's answer) from its parts: only
/// the elements and attributes a block is made of, every text and attribute value unescaped and
/// then cleaned and escaped again as if it were indexed content. `None` when the text is not such
/// a block (an unknown element, an unbalanced tag, a stray `&`, text outside the elements): then
/// nothing of it may reach the model.
pub(crate) fn sanitize_block(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut open: Vec<&str> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(tag_start) = rest.strip_prefix('<') {
            let end = tag_end(tag_start)?;
            let tag = &tag_start[..end];
            rest = &tag_start[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                if open.pop() != Some(name) {
                    return None;
                }
                out.push_str(&format!("</{name}>"));
                continue;
            }
            let (tag, closed) = match tag.strip_suffix('/') {
                Some(t) => (t, true),
                None => (tag, false),
            };
            let name_end = tag.find(' ').unwrap_or(tag.len());
            let name = &tag[..name_end];
            let (_, allowed) = BLOCK_ELEMENTS.iter().find(|(n, _)| *n == name)?;
            out.push('<');
            out.push_str(name);
            let mut attrs = &tag[name_end..];
            while !attrs.is_empty() {
                let a = attrs.strip_prefix(' ')?;
                let (key, value) = a.split_once("=\"")?;
                let (value, after) = value.split_once('"')?;
                if !allowed.contains(&key) {
                    return None;
                }
                out.push_str(&format!(" {key}=\"{}\"", clean(&unescape(value)?, MAX_ATTRIBUTE_CHARS, false)));
                attrs = after;
            }
            if closed {
                out.push_str("/>");
            } else {
                out.push('>');
                open.push(name);
            }
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let t = &rest[..end];
            rest = &rest[end..];
            if open.is_empty() {
                if !t.trim().is_empty() {
                    return None;
                }
                out.push_str(&"\n".repeat(t.matches('\n').count()));
            } else {
                out.push_str(&clean_text(&unescape(t)?, usize::MAX, true));
            }
        }
    }
    open.is_empty().then_some(out)
}

/// Where a tag (the text after its `<`) ends: the first `>` outside a quoted attribute value,
/// which may hold a literal `>`.
fn tag_end(tag: &str) -> Option<usize> {
    let mut quoted = false;
    tag.char_indices().find_map(|(i, c)| {
        quoted ^= c == '"';
        (c == '>' && !quoted).then_some(i)
    })
}

/// Undoes [`escape_text`] and [`escape_attr`], and the escapes of earlier versions (`&gt;`,
/// `&quot;` and `&apos;` anywhere); `None` for any other entity or a bare `&`.
fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let (entity, after) = rest[at..].split_once(';')?;
        out.push(match entity {
            "&amp" => '&',
            "&lt" => '<',
            "&gt" => '>',
            "&quot" => '"',
            "&apos" => '\'',
            _ => return None,
        });
        rest = after;
    }
    out.push_str(rest);
    Some(out)
}
