//! Source code: chunks at function / method / class / impl boundaries, titled with the enclosing
//! symbol path (`Store::open`, `Cache.get`), with the defined names in `symbols`, leading doc
//! comments, attributes and decorators kept with their definition, and oversized bodies split
//! with overlap. Lines outside any definition (imports, top-level statements) are packed into
//! module-level chunks titled with the file name.
//!
//! Why heuristics and not tree-sitter: the eight grammars add much to a clean build and eight C
//! compilations to keep working (docs/experiments.md, "Tree-sitter"). What retrieval needs from a parser is only definition boundaries and names, and
//! a small lexer (strings, comments, brace depth; indentation and triple-quoted strings for
//! Python) plus one definition pattern table per language finds them: the tests at the bottom of
//! this file are the accuracy sample — every definition of a realistic file per language, found
//! by name and line range. Tree-sitter's accuracy on the same sample was not measured; switch if
//! real repositories show boundaries these heuristics miss.
//! line range. Known limits: C/C++ macros that open braces, and K&R-style definitions.
//!
//! C and C++ definitions are titled with their file (`gen.c: gentabs`): no class says where they
//! are. Yacc and lex grammars are chunked by [`super::grammar`], whose user-code section comes back
//! here.

use super::{pack, Chunk, Counter, Unit};
use crate::config::ChunkConfig;
use crate::ingest::{Document, Lang};
use regex::Regex;
use std::sync::LazyLock;

/// A definition found in the source.
#[derive(Debug, Clone)]
struct Def {
    name: String,
    /// Receiver type for Go methods (`func (s *Store) Open`).
    receiver: Option<String>,
    /// 0-based line range, inclusive, including leading comments.
    start: usize,
    end: usize,
    children: Vec<Def>,
}

struct Pattern {
    re: Regex,
    container: bool,
}

fn pats(list: &[(&str, bool)]) -> Vec<Pattern> {
    list.iter()
        .map(|(re, container)| Pattern { re: Regex::new(re).expect("valid pattern"), container: *container })
        .collect()
}

const JS_KEYWORDS: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "function",
    "else",
    "do",
    "try",
    "new",
    "await",
    "typeof",
    "super",
    "constructor_",
];

static RUST: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    pats(&[
        (
            r"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|default|extern(?:\s+\x22[^\x22]*\x22)?)\s+)*fn\s+(\w+)",
            false,
        ),
        (
            r"^(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?impl\b(?:\s*<[^{]*?>)?\s+(?:[\w:]+(?:<[^{]*?>)?\s+for\s+)?(?:dyn\s+)?([\w:]+)",
            true,
        ),
        (r"^(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?(?:trait|mod)\s+(\w+)", true),
        (r"^(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|union)\s+(\w+)", false),
        (r"^macro_rules!\s*(\w+)", false),
    ])
});
static PYTHON: LazyLock<Vec<Pattern>> =
    LazyLock::new(|| pats(&[(r"^(?:async\s+)?def\s+(\w+)", false), (r"^class\s+(\w+)", true)]));
static JS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    pats(&[
        (r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+(\w+)", true),
        (r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:interface|namespace|module|enum)\s+(\w+)", true),
        (r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(\w+)", false),
        (
            r"^(?:export\s+)?(?:const|let|var)\s+(\w+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|(?:\([^)]*\)|\w+)\s*(?::[^=]+)?=>)",
            false,
        ),
        (r"^(?:export\s+)?type\s+(\w+)\s*(?:<[^=]*>)?\s*=", false),
        (
            r"^(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)\s+)*\*?(\w+)\s*(?:<[^(]*>)?\s*\([^;]*$",
            false,
        ),
    ])
});
static GO: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    pats(&[
        (r"^func\s*(?:\(\s*\w*\s*\*?\s*(\w+)[^)]*\)\s*)?(\w+)", false),
        (r"^type\s+(\w+)\s+(?:struct|interface)\b", false),
    ])
});
static JAVA: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    pats(&[
        (
            r"^(?:@\w+\s+)*(?:(?:public|private|protected|static|final|abstract|sealed|non-sealed|strictfp)\s+)*(?:class|interface|enum|record|@interface)\s+(\w+)",
            true,
        ),
        (
            r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|protected|static|final|abstract|synchronized|native|default|strictfp)\s+)*(?:<[^>]+>\s+)?[\w<>\[\],.?]+(?:\s*<[^>]*>)?\s+(\w+)\s*\([^;]*$",
            false,
        ),
        (r"^(?:(?:public|private|protected)\s+)(\w+)\s*\([^;]*$", false),
    ])
});
static C: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    pats(&[
        (r"^(?:template\s*<[^>]*>\s*)?(?:class|struct|union|namespace)\s+(\w+)[^;]*$", true),
        (r"^(?:typedef\s+)?enum\s+(?:class\s+)?(\w+)[^;]*$", false),
        (r"^(?:template\s*<[^>]*>\s*)?(?:[\w:*&<>,~]+\s+)+[*&]*\s*((?:\w+::)*~?\w+)\s*\([^;]*$", false),
        (r"^((?:\w+::)*~?\w+)\s*\([^;]*$", false),
    ])
});

fn patterns(lang: Lang) -> &'static [Pattern] {
    match lang {
        Lang::Rust => &RUST,
        Lang::Python => &PYTHON,
        Lang::JavaScript | Lang::TypeScript => &JS,
        Lang::Go => &GO,
        Lang::Java => &JAVA,
        // A grammar's user-code section is C (`super::grammar`).
        Lang::C | Lang::Cpp | Lang::Yacc | Lang::Lex => &C,
    }
}

const NOT_NAMES: &[&str] =
    &["if", "for", "while", "switch", "catch", "return", "else", "do", "sizeof", "new", "delete", "throw"];

/// Per line: brace depth at its start, and the line with strings and comments blanked out.
fn lex(lines: &[&str], lang: Lang) -> (Vec<i32>, Vec<String>) {
    let mut depth = 0i32;
    let mut depths = Vec::with_capacity(lines.len());
    let mut code = Vec::with_capacity(lines.len());
    let mut block_comment = false;
    let mut string: Option<char> = None;
    let quote_strings = !matches!(lang, Lang::Rust);
    for line in lines {
        depths.push(depth);
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::with_capacity(line.len());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            if block_comment {
                if c == '*' && next == Some('/') {
                    block_comment = false;
                    i += 1;
                }
            } else if let Some(q) = string {
                if c == '\\' {
                    i += 1;
                } else if c == q {
                    string = None;
                }
            } else if c == '/' && next == Some('/') {
                break;
            } else if c == '/' && next == Some('*') {
                block_comment = true;
                i += 1;
            } else if c == '"' || (c == '`' && matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Go)) {
                string = Some(c);
                out.push(' ');
            } else if c == '\'' {
                // Rust lifetimes ('a) are not strings; char literals are 'x' or '\n'.
                let is_char = quote_strings || next == Some('\\') || chars.get(i + 2) == Some(&'\'');
                if is_char {
                    string = Some('\'');
                }
                out.push(' ');
            } else {
                if c == '{' {
                    depth += 1;
                } else if c == '}' {
                    depth -= 1;
                }
                out.push(c);
            }
            i += 1;
        }
        // Single-quoted strings do not span lines in these languages.
        if string == Some('\'') {
            string = None;
        }
        code.push(out);
    }
    (depths, code)
}

/// [`lex`] for C: what a grammar's actions are written in.
pub(crate) fn lex_c(lines: &[&str]) -> (Vec<i32>, Vec<String>) {
    lex(lines, Lang::C)
}

fn match_def(line: &str, lang: Lang) -> Option<(String, bool, Option<String>)> {
    let t = line.trim();
    for p in patterns(lang) {
        if let Some(caps) = p.re.captures(t) {
            let (name, receiver) = match (lang, caps.get(2)) {
                (Lang::Go, Some(method)) => (method.as_str().to_string(), caps.get(1).map(|m| m.as_str().to_string())),
                _ => (caps.get(1)?.as_str().to_string(), None),
            };
            let bare = name.rsplit("::").next().unwrap_or(&name);
            if NOT_NAMES.contains(&bare)
                || (matches!(lang, Lang::JavaScript | Lang::TypeScript) && JS_KEYWORDS.contains(&bare))
            {
                return None;
            }
            return Some((name, p.container, receiver));
        }
    }
    None
}

/// Leading comments, attributes and decorators directly above `start` belong to the definition.
fn leading(lines: &[&str], start: usize, floor: usize, lang: Lang) -> usize {
    let mut s = start;
    while s > floor {
        let t = lines[s - 1].trim_start();
        let attached = is_comment_line(t)
            || t.starts_with('@')
            || (lang == Lang::Rust && t.starts_with("#["))
            || (lang == Lang::Python && t.starts_with('#'));
        if !attached || t.is_empty() {
            break;
        }
        s -= 1;
    }
    if s == start && matches!(lang, Lang::C | Lang::Cpp) {
        s = comment_above_blank(lines, start, floor).unwrap_or(s);
    }
    s
}

/// Whether a line of a C-like language is (part of) a comment: `//`, `/*` or a block's `*` line.
pub(crate) fn is_comment_line(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("/*") || t.starts_with('*') || t.starts_with("//")
}

/// C style puts a function's comment one blank line above it (`/* Generate the tables. */`,
/// blank, `void gentabs (void)`): that comment block's first line, when it is a short block of
/// its own (a blank line or the floor above it, so neither a licence header nor the tail of a
/// statement).
fn comment_above_blank(lines: &[&str], start: usize, floor: usize) -> Option<usize> {
    const MAX_LINES: usize = 12;
    if start < floor + 2 || !lines[start - 1].trim().is_empty() || !lines[start - 2].trim_end().ends_with("*/") {
        return None;
    }
    let mut s = start - 1;
    while s > floor && is_comment_line(lines[s - 1]) {
        s -= 1;
    }
    let len = start - 1 - s;
    let alone = s == floor || lines[s - 1].trim().is_empty();
    (len > 0 && len <= MAX_LINES && alone && lines[s].trim_start().starts_with("/*")).then_some(s)
}

/// A file of a brace language as [`lex`] read it: its lines, each line's brace depth at its
/// start, and its code with strings and comments blanked.
struct Lexed<'a> {
    lines: &'a [&'a str],
    depths: &'a [i32],
    code: &'a [String],
    lang: Lang,
}

/// Brace languages: definitions in `lo..hi` whose line starts at `depth`.
fn brace_defs(src: &Lexed, lo: usize, hi: usize, depth: i32) -> Vec<Def> {
    let Lexed { lines, depths, code, lang } = *src;
    let mut defs = Vec::new();
    let mut i = lo;
    let mut floor = lo;
    while i < hi {
        if depths[i] != depth {
            i += 1;
            continue;
        }
        let found = match_def(&code[i], lang).and_then(|d| body_opens(code, i, hi).map(|open| (d, open)));
        let Some(((name, container, receiver), open)) = found else {
            i += 1;
            continue;
        };
        let mut end = open;
        while end + 1 < hi && depths[end + 1] > depth {
            end += 1;
        }
        if end + 1 < lines.len()
            && end + 1 < hi
            && code[end + 1].trim_start().starts_with('}')
            && depths[end + 1] == depth + 1
        {
            end += 1;
        }
        let start = leading(lines, i, floor, lang);
        let children = if container { brace_defs(src, open + 1, end + 1, depth + 1) } else { Vec::new() };
        defs.push(Def { name, receiver, start, end, children });
        i = end + 1;
        floor = i;
    }
    defs
}

/// Where the body of a definition starting at line `i` opens: the first `{` within a few lines,
/// unless a `;` ends it first (a declaration).
fn body_opens(code: &[String], i: usize, hi: usize) -> Option<usize> {
    for (j, line) in code.iter().enumerate().take(hi.min(i + 8)).skip(i) {
        for c in line.chars() {
            match c {
                '{' => return Some(j),
                ';' => return None,
                _ => {}
            }
        }
    }
    None
}

/// Python: definitions in `lo..hi` at exactly `indent`; a body ends before the next non-blank
/// line indented no deeper than the definition.
fn python_defs(lines: &[&str], in_string: &[bool], lo: usize, hi: usize, indent: usize) -> Vec<Def> {
    let ind = |l: &str| l.len() - l.trim_start().len();
    let mut defs = Vec::new();
    let mut i = lo;
    let mut floor = lo;
    while i < hi {
        let line = lines[i];
        if in_string[i] || line.trim().is_empty() || ind(line) != indent {
            i += 1;
            continue;
        }
        let Some((name, _, _)) = match_def(line, Lang::Python) else {
            i += 1;
            continue;
        };
        // Skip a multi-line signature (until the line whose code ends with ':').
        let mut body = i;
        while body + 1 < hi && !lines[body].trim_end().ends_with(':') {
            body += 1;
        }
        let mut end = body;
        let mut j = body + 1;
        while j < hi {
            let l = lines[j];
            if !l.trim().is_empty() && !in_string[j] && ind(l) <= indent {
                break;
            }
            if !l.trim().is_empty() {
                end = j;
            }
            j += 1;
        }
        let start = leading(lines, i, floor, Lang::Python);
        let child_indent =
            (body + 1..=end).find(|&k| !lines[k].trim().is_empty() && !in_string[k]).map(|k| ind(lines[k]));
        let children = match child_indent {
            Some(ci) if ci > indent => python_defs(lines, in_string, body + 1, end + 1, ci),
            _ => Vec::new(),
        };
        defs.push(Def { name, receiver: None, start, end, children });
        i = end + 1;
        floor = i;
    }
    defs
}

/// Marks lines that start inside a triple-quoted string.
fn python_strings(lines: &[&str]) -> Vec<bool> {
    let mut inside: Option<&str> = None;
    lines
        .iter()
        .map(|line| {
            let starts_inside = inside.is_some();
            let mut rest: &str = line;
            loop {
                match inside {
                    Some(q) => match rest.find(q) {
                        Some(p) => {
                            rest = &rest[p + 3..];
                            inside = None;
                        }
                        None => break,
                    },
                    None => {
                        let a = rest.find("\"\"\"");
                        let b = rest.find("'''");
                        let (p, q) = match (a, b) {
                            (Some(a), Some(b)) if b < a => (b, "'''"),
                            (Some(a), _) => (a, "\"\"\""),
                            (None, Some(b)) => (b, "'''"),
                            (None, None) => break,
                        };
                        rest = &rest[p + 3..];
                        inside = Some(q);
                    }
                }
            }
            starts_inside
        })
        .collect()
}

/// C, C++, and the grammars whose actions and user code are C: titled by file, named with `::`.
fn c_like(lang: Lang) -> bool {
    matches!(lang, Lang::C | Lang::Cpp | Lang::Yacc | Lang::Lex)
}

fn separator(lang: Lang) -> &'static str {
    if lang == Lang::Rust || c_like(lang) {
        "::"
    } else {
        "."
    }
}

struct Emitter<'a> {
    lines: &'a [&'a str],
    /// C and C++ definitions have no class to say where they are: their titles start with
    /// the file name (`gen.c: gentabs`).
    file_prefix: Option<String>,
    config: &'a ChunkConfig,
    count: Counter<'a>,
    sep: &'static str,
    out: Vec<Chunk>,
}

impl Emitter<'_> {
    fn text(&self, lo: usize, hi: usize) -> String {
        self.lines[lo..=hi].join("\n")
    }

    /// Packs each range line by line (blank edge lines trimmed) into chunks with this title and
    /// these symbols. Ranges are never packed together: a chunk's line range must say where its
    /// text is, and the pieces of a container's head (its header, a field between two methods,
    /// its closing lines) can lie hundreds of lines apart. `braces`: stray closing braces are
    /// trimmed too (noise in module-level and container-head chunks).
    fn pack_lines(&mut self, ranges: &[(usize, usize)], title: &str, symbols: &[String], braces: bool) {
        let blank = |n: usize| {
            let t = self.lines[n].trim();
            t.is_empty() || (braces && (t == "}" || t == "};"))
        };
        for &(mut lo, mut hi) in ranges {
            while lo <= hi && blank(lo) {
                lo += 1;
            }
            while hi > lo && blank(hi) {
                hi -= 1;
            }
            if lo > hi {
                continue;
            }
            let units = (lo..=hi).map(|n| Unit { text: self.lines[n].to_string(), start_line: n + 1, end_line: n + 1 });
            for w in pack(units.collect(), self.config, self.count, "\n") {
                self.out.push(Chunk {
                    title: title.to_string(),
                    text: w.text,
                    symbols: symbols.to_vec(),
                    start_line: w.start_line,
                    end_line: w.end_line,
                    ..Chunk::default()
                });
            }
        }
    }

    fn def(&mut self, d: &Def, parent: &str) {
        let name = match &d.receiver {
            Some(r) => format!("{r}.{}", d.name),
            None => d.name.clone(),
        };
        let path = match (parent.is_empty(), &self.file_prefix) {
            (true, Some(file)) => format!("{file}: {name}"),
            (true, None) => name.clone(),
            (false, _) => format!("{parent}{}{name}", self.sep),
        };
        let text = self.text(d.start, d.end);
        let fits = (self.count)(&text) <= self.config.max_tokens;
        if fits || d.children.is_empty() {
            let mut symbols = vec![name.rsplit(self.sep).next().unwrap_or(&name).to_string()];
            if name.contains('.') || name.contains("::") {
                symbols.push(name.clone());
            }
            collect_names(&d.children, &mut symbols);
            if fits {
                self.out.push(Chunk {
                    title: path,
                    text,
                    symbols,
                    start_line: d.start + 1,
                    end_line: d.end + 1,
                    ..Chunk::default()
                });
            } else {
                self.pack_lines(&[(d.start, d.end)], &path, &symbols, false);
            }
            return;
        }
        // Too big a container: its members become chunks, and what lies between them (the
        // header, fields, closing brace) becomes the container's own chunk.
        let mut rest = Vec::new();
        let mut cursor = d.start;
        for c in &d.children {
            if c.start > cursor {
                rest.push((cursor, c.start - 1));
            }
            cursor = c.end + 1;
        }
        if cursor <= d.end {
            rest.push((cursor, d.end));
        }
        let symbols = vec![name.clone()];
        self.pack_lines(&rest, &path, &symbols, true);
        for c in &d.children {
            self.def(c, &path);
        }
    }
}

fn collect_names(defs: &[Def], out: &mut Vec<String>) {
    for d in defs {
        if !out.contains(&d.name) {
            out.push(d.name.clone());
        }
        collect_names(&d.children, out);
    }
}

/// Chunks a source file at its definitions, plus module-level chunks for the lines between them, in line order.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    let lang = doc.lang.unwrap_or(Lang::C);
    let lines: Vec<&str> = doc.text.lines().collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let defs = if lang == Lang::Python {
        let strings = python_strings(&lines);
        python_defs(&lines, &strings, 0, lines.len(), 0)
    } else {
        let (depths, code) = lex(&lines, lang);
        brace_defs(&Lexed { lines: &lines, depths: &depths, code: &code, lang }, 0, lines.len(), 0)
    };
    let file = doc.file_name().to_string();
    let file_prefix = c_like(lang).then(|| file.clone());
    let mut e = Emitter { lines: &lines, file_prefix, config, count, sep: separator(lang), out: Vec::new() };
    // Module-level lines between definitions, packed together under the file name.
    let mut gaps = Vec::new();
    let mut cursor = 0;
    for d in &defs {
        if d.start > cursor {
            gaps.push((cursor, d.start - 1));
        }
        cursor = d.end + 1;
    }
    if cursor < lines.len() {
        gaps.push((cursor, lines.len() - 1));
    }
    e.pack_lines(&gaps, &file, &[], true);
    for d in &defs {
        e.def(d, "");
    }
    let mut out = e.out;
    out.sort_by_key(|c| (c.start_line, c.end_line));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    fn run(path: &str, text: &str, max_tokens: usize) -> Vec<Chunk> {
        let doc = Document::new(path, Kind::Code, Lang::from_path(path), text.to_string());
        chunk(&doc, &ChunkConfig { max_tokens, overlap: 0.15, ..ChunkConfig::default() }, &approx_tokens)
    }

    use crate::chunk::titled_ranges as titles;

    #[test]
    fn rust_functions_impls_and_doc_comments() {
        let src = r#"use std::io;

/// Opens the store.
/// Second doc line.
#[inline]
pub fn open(path: &str) -> io::Result<Store> {
    let s = "}{ not a brace";
    Ok(Store { path: path.to_string() })
}

pub(crate) struct Store {
    path: String,
}

impl<'a> Display for Store {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)
    }
}

impl Store {
    /// Reads a key.
    pub fn get(&self, key: &str) -> Option<&str> {
        let c = '{';
        None
    }

    pub async fn put(&mut self, key: &str) {
        todo!()
    }
}
"#;
        let c = run("src/store.rs", src, 256);
        assert_eq!(titles(&c), ["store.rs:1-1", "open:3-9", "Store:11-13", "Store:15-19", "Store:21-31"]);
        assert!(c[4].symbols.contains(&"get".to_string()) && c[4].symbols.contains(&"put".to_string()));
        // Small budget: the impl splits into its methods, titled with the path.
        let c = run("src/store.rs", src, 30);
        let t = titles(&c);
        assert!(t.iter().any(|x| x.starts_with("Store::get:22-")), "{t:?}");
        assert!(t.contains(&"Store::put:28-30".to_string()), "{t:?}");
    }

    #[test]
    fn python_classes_methods_decorators_and_docstrings() {
        let src = r#"import os

class Cache:
    """A cache.

def not_a_function():
    """

    def __init__(self):
        self.items = {}

    @property
    def size(self):
        return len(self.items)

async def fetch(url,
                timeout=3):
    return await get(url)
"#;
        let c = run("cache.py", src, 256);
        assert_eq!(titles(&c), ["cache.py:1-1", "Cache:3-14", "fetch:16-18"]);
        assert!(c[1].symbols.contains(&"size".to_string()));
        assert!(!c[1].symbols.contains(&"not_a_function".to_string()));
        let c = run("cache.py", src, 20);
        crate::chunk::assert_ranges_honest(src, &c);
        let t = titles(&c);
        assert!(t.contains(&"Cache.size:12-14".to_string()), "{t:?}");
        assert!(t.contains(&"Cache.__init__:9-10".to_string()), "{t:?}");
    }

    #[test]
    fn a_big_classs_scattered_head_is_never_one_chunk_spanning_its_methods() {
        // A class over budget: its header, a field between two long methods and its last field
        // are the class's own text; one chunk of them would claim every line in between.
        let body: String = (0..40).map(|i| format!("        x{i} = compute({i})\n")).collect();
        let src = format!(
            "class App:\n    \"\"\"The app.\"\"\"\n\n    def one(self):\n{body}\n    request_class = Request\n\n    def two(self):\n{body}\n    response_class = Response\n"
        );
        let c = run("app.py", &src, 120);
        crate::chunk::assert_ranges_honest(&src, &c);
        let own: Vec<String> =
            c.iter().filter(|c| c.title == "App").map(|c| format!("{}-{}", c.start_line, c.end_line)).collect();
        assert_eq!(own, ["1-2", "46-46", "90-90"], "{:?}", titles(&c));
    }

    #[test]
    fn javascript_and_typescript() {
        let src = r#"import x from "y";

export class UploadQueue {
  constructor(limit) {
    this.limit = limit;
  }

  async retry(job) {
    if (job.tries > 3) { return; }
    return this.push(job);
  }
}

export const parseSize = (s) => {
  return Number(s.replace("MB", ""));
};

function helper() { return `}` ; }

export interface Options {
  limit: number;
}
"#;
        let c = run("web/queue.ts", src, 256);
        assert_eq!(
            titles(&c),
            ["queue.ts:1-1", "UploadQueue:3-12", "parseSize:14-16", "helper:18-18", "Options:20-22"]
        );
        assert!(c[1].symbols.contains(&"retry".to_string()) && c[1].symbols.contains(&"constructor".to_string()));
        let c = run("web/queue.js", src, 25);
        assert!(titles(&c).iter().any(|x| x.starts_with("UploadQueue.retry:8-")), "{:?}", titles(&c));
    }

    #[test]
    fn go_methods_carry_their_receiver() {
        let src = "package store\n\n// Store keeps things.\ntype Store struct {\n\tpath string\n}\n\n// Open opens it.\nfunc (s *Store) Open(name string) error {\n\treturn nil\n}\n\nfunc New() *Store {\n\treturn &Store{}\n}\n";
        let c = run("store.go", src, 256);
        assert_eq!(titles(&c), ["store.go:1-1", "Store:3-6", "Store.Open:8-11", "New:13-15"]);
        assert!(c[2].symbols.contains(&"Open".to_string()) && c[2].symbols.contains(&"Store.Open".to_string()));
    }

    #[test]
    fn java_and_cpp() {
        let java = "package a;\n\npublic class Billing {\n    private int total;\n\n    /** Charges. */\n    public Receipt charge(Card card, int cents) throws Exception {\n        if (cents < 0) { throw new Exception(); }\n        return new Receipt();\n    }\n}\n";
        let c = run("Billing.java", java, 55);
        let t = titles(&c);
        assert!(t.contains(&"Billing.charge:6-10".to_string()), "{t:?}");
        let cpp = "#include <vector>\n\nnamespace net {\nint Socket::connect(const char* host) {\n    return 0;\n}\n}\n\nstatic void usage(void);\n\nint main(int argc, char** argv) {\n    return 0;\n}\n";
        let c = run("net.cpp", cpp, 256);
        let t = titles(&c);
        assert!(t.contains(&"net.cpp: net:3-7".to_string()), "{t:?}");
        assert!(c.iter().any(|c| c.symbols.contains(&"Socket::connect".to_string())), "{c:?}");
        assert!(t.contains(&"net.cpp: main:11-13".to_string()), "{t:?}");
    }

    #[test]
    fn c_functions_keep_the_comment_a_blank_line_above_them_but_not_the_licence() {
        // flex's style: a licence header, includes, and each function's comment one blank line
        // above it.
        let src = "/* gen.c - code generation */
/* Copyright (c) 1990 The Regents. */

#include \"flexdef.h\"

/* Generate the code to keep backing-up information. */

void gen_backing_up (void)
{
	if (reject)
		return;
}


/* Indent to the current level.
 * Twice for a nested block.
 */

void do_indent (void)
{
	indent_level++;
}

int x; /* a counter */

static int count (int n)
{
	return n;
}
";
        let c = run("src/gen.c", src, 256);
        crate::chunk::assert_ranges_honest(src, &c);
        assert_eq!(
            titles(&c),
            ["gen.c:1-4", "gen.c: gen_backing_up:6-12", "gen.c: do_indent:15-22", "gen.c:24-24", "gen.c: count:26-29"]
        );
        assert_eq!(c[1].symbols, ["gen_backing_up"]);
    }

    #[test]
    fn a_licence_header_right_above_the_first_function_stays_module_level() {
        let licence: String = (0..20).map(|i| format!("/*  licence line {i} */\n")).collect();
        let src = format!("{licence}\nint main (void)\n{{\n\treturn 0;\n}}\n");
        let c = run("main.c", &src, 256);
        assert_eq!(titles(&c), ["main.c:1-20", "main.c: main:22-25"]);
    }

    #[test]
    fn an_oversized_function_is_split_with_overlap() {
        let body: String = (0..200).map(|i| format!("    let v{i} = compute({i});\n")).collect();
        let src = format!("fn big() {{\n{body}}}\n");
        let c = run("big.rs", &src, 100);
        assert!(c.len() > 3);
        assert!(c.iter().all(|c| c.title == "big" && c.symbols == ["big"]));
        assert!(c[1].start_line <= c[0].end_line, "overlap");
    }
}
