//! The lexical leg: a tantivy index of chunks with fields for title, body, symbols, path, tags,
//! kind and lang, and a code-aware analyzer. The analyzer splits camelCase, PascalCase,
//! snake_case, kebab-case and dotted.paths / `a::b` paths into parts while also indexing the whole
//! identifier, lowercases, drops English stop words and stems; the same analyzer reads queries, so
//! `getUserName`, `get_user_name` and "get user name" meet in the middle.

use crate::config::Bm25Config;
use crate::error::{Error, Result};
use crate::index::store;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, RegexQuery, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};
use tantivy::{Index, IndexReader, Term};

/// Name under which the analyzer is registered with tantivy.
pub(crate) const ANALYZER: &str = "code";

/// The schema's fields.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// The chunk's vector id: its key in the vector store and in fusion.
    pub vid: Field,
    /// The document id, untokenised (what a changed document's chunks are deleted by).
    pub doc: Field,
    /// The document's display path, analysed.
    pub path: Field,
    /// The chunk's title, analysed.
    pub title: Field,
    /// The chunk's text, analysed.
    pub body: Field,
    /// The symbols the chunk defines, analysed.
    pub symbols: Field,
    /// Raw lowercased symbol names, for the symbol leg's exact and prefix matches.
    pub symbol_raw: Field,
    /// A memory record's tags, analysed.
    pub tags: Field,
    /// A memory record's category, untokenised.
    pub category: Field,
    /// The document's kind name ([`crate::ingest::Kind::as_str`]), untokenised.
    pub kind: Field,
    /// The code's language name ([`crate::ingest::Lang::as_str`]), untokenised; absent for other kinds.
    pub lang: Field,
    /// First line of the chunk, stored only.
    pub start_line: Field,
    /// Last line of the chunk, stored only.
    pub end_line: Field,
}

/// Builds the schema.
pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let fields = Fields {
        vid: b.add_u64_field("vid", INDEXED | STORED | FAST),
        doc: b.add_text_field("doc", STRING | STORED),
        path: b.add_text_field("path", text.clone()),
        title: b.add_text_field("title", text.clone()),
        body: b.add_text_field("body", text.clone()),
        symbols: b.add_text_field("symbols", text.clone()),
        symbol_raw: b.add_text_field("symbol_raw", STRING),
        tags: b.add_text_field("tags", text),
        category: b.add_text_field("category", STRING | STORED),
        kind: b.add_text_field("kind", STRING | STORED),
        lang: b.add_text_field("lang", STRING | STORED),
        start_line: b.add_u64_field("start_line", STORED),
        end_line: b.add_u64_field("end_line", STORED),
    };
    (b.build(), fields)
}

/// The analyzer used for every text field and for queries.
pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer)
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("English stop words"))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Registers the analyzer on an index (needed on every open).
pub(crate) fn register(index: &Index) {
    index.tokenizers().register(ANALYZER, analyzer());
}

/// Opens a generation's full-text index for reading. Missing or damaged files are
/// [`Error::IndexCorrupt`]; tantivy asserts on some truncated files instead of returning an
/// error, so a panic while opening is damage too.
pub(crate) fn open_reader(gen_dir: &Path) -> Result<(Index, IndexReader)> {
    let dir = gen_dir.join(store::TANTIVY_DIR);
    let opened = crate::error::catch_panic(|| -> tantivy::Result<(Index, IndexReader)> {
        let index = Index::open_in_dir(&dir)?;
        register(&index);
        let reader = index.reader()?;
        Ok((index, reader))
    });
    let reason = match opened {
        Ok(Ok(pair)) => return Ok(pair),
        Ok(Err(e)) => e.to_string(),
        Err(panic) => panic,
    };
    let name = gen_dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    Err(Error::IndexCorrupt {
        path: gen_dir.parent().unwrap_or(gen_dir).to_path_buf(),
        reason: format!("{name}/{} cannot be opened ({reason})", store::TANTIVY_DIR),
    })
}

/// Splits text into words, identifier parts and whole compound identifiers.
#[derive(Clone, Default)]
pub(crate) struct CodeTokenizer;

/// A precomputed token stream.
pub(crate) struct VecTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = VecTokenStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        VecTokenStream { tokens: code_tokens(text), next: 0 }
    }
}

/// Splits one word (alphanumerics and `_`) at `_` and case changes: `getHTTPResponse_v2` →
/// get, HTTP, Response, v2.
fn split_word(word: &str, base: usize, out: &mut Vec<(usize, usize)>) {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if c == '_' {
            if let Some(s) = start.take() {
                out.push((base + s, base + i));
            }
            continue;
        }
        if let Some(s) = start {
            let prev = chars[k - 1].1;
            let next = chars.get(k + 1).map(|x| x.1);
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
                || (prev.is_numeric() && c.is_alphabetic() && c.is_uppercase());
            if boundary {
                out.push((base + s, base + i));
                start = Some(i);
            }
        } else {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((base + s, base + word.len()));
    }
}

/// Tokens of `text` for the code analyzer (before lowercasing, stop words and stemming).
pub(crate) fn code_tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut position = 0usize;
    let push = |tokens: &mut Vec<Token>, from: usize, to: usize, position: usize| {
        tokens.push(Token {
            offset_from: from,
            offset_to: to,
            position,
            text: text[from..to].to_string(),
            position_length: 1,
        });
    };
    let bytes = text.as_bytes();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < text.len() {
        let c = text[i..].chars().next().expect("in bounds");
        if !is_word(c) {
            i += c.len_utf8();
            continue;
        }
        // A compound: words joined by `.`, `-`, `::` or `/` with no spaces.
        let start = i;
        let mut words: Vec<(usize, usize)> = Vec::new();
        loop {
            let ws = i;
            while i < text.len() {
                let ch = text[i..].chars().next().expect("in bounds");
                if !is_word(ch) {
                    break;
                }
                i += ch.len_utf8();
            }
            words.push((ws, i));
            let joiner = if text[i..].starts_with("::") {
                2
            } else if i < text.len() && matches!(bytes[i], b'.' | b'-' | b'/') {
                1
            } else {
                0
            };
            let after = i + joiner;
            if joiner > 0 && after < text.len() && text[after..].chars().next().is_some_and(is_word) {
                i = after;
            } else {
                break;
            }
        }
        let end = i;
        let first_position = position;
        for &(ws, we) in &words {
            let mut parts = Vec::new();
            split_word(&text[ws..we], ws, &mut parts);
            if parts.len() > 1 {
                push(&mut tokens, ws, we, position);
            }
            for (ps, pe) in parts {
                push(&mut tokens, ps, pe, position);
                position += 1;
            }
        }
        if words.len() > 1 {
            push(&mut tokens, start, end, first_position);
        }
    }
    tokens
}

/// Analyzes `text` into index terms.
pub fn terms(text: &str) -> Vec<String> {
    let mut a = analyzer();
    let mut stream = a.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// Which of `terms` (sorted analyzed terms, as [`terms`] makes them) occur among the analyzed
/// words of `texts`: what a hit's coverage means. The search path reads the same answer from the
/// postings (`Snapshot::occurring`), which is tested against this; a search without a local
/// index analyses its hits' texts with it.
pub(crate) fn occurring(terms: &[String], texts: &[&str]) -> Vec<bool> {
    let mut found = vec![false; terms.len()];
    let mut left = terms.len();
    let mut a = analyzer();
    for text in texts {
        let mut stream = a.token_stream(text);
        while left > 0 && stream.advance() {
            if let Ok(i) = terms.binary_search_by(|t| t.as_str().cmp(&stream.token().text)) {
                if !found[i] {
                    found[i] = true;
                    left -= 1;
                }
            }
        }
    }
    found
}

/// The BM25 query: every analyzed term of the query, in every boosted field, as SHOULD clauses.
pub fn query(fields: &Fields, config: &Bm25Config, text: &str) -> Option<Box<dyn Query>> {
    let mut terms = terms(text);
    terms.sort();
    terms.dedup();
    if terms.is_empty() {
        return None;
    }
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (field, boost) in [
        (fields.title, config.title_boost),
        (fields.body, config.body_boost),
        (fields.symbols, config.symbols_boost),
        (fields.path, config.path_boost),
        (fields.tags, config.tags_boost),
    ] {
        if boost <= 0.0 {
            continue;
        }
        for t in &terms {
            let q = TermQuery::new(Term::from_field_text(field, t), IndexRecordOption::WithFreqs);
            clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
        }
    }
    if config.phrase_boost > 0.0 {
        let mut phrases: Vec<&str> = quoted(text).into_iter().map(|span| &text[span]).collect();
        phrases.sort_unstable();
        phrases.dedup();
        for phrase in phrases {
            let Some(words) = phrase_terms(phrase) else { continue };
            for (field, boost) in [(fields.title, config.title_boost), (fields.body, config.body_boost)] {
                if boost <= 0.0 {
                    continue;
                }
                let terms = words.iter().map(|(at, w)| (*at, Term::from_field_text(field, w))).collect();
                let phrase =
                    BoostQuery::new(Box::new(PhraseQuery::new_with_offset(terms)), boost * config.phrase_boost);
                clauses.push((Occur::Should, Box::new(phrase)));
            }
        }
    }
    Some(Box::new(BooleanQuery::new(clauses)))
}

/// Where the text quotes something: the byte ranges inside `"…"`, `` `…` ``, `“…”`, `‘…’`, or `'…'`
/// opened after a non-word character and closed before one (so "don't" quotes nothing). A quoted
/// span is a message or name the user copied, to be matched as written. A `"`, `` ` `` or `“`
/// left open quotes the rest (a message cut short); a `'` or `‘` left open was an apostrophe
/// ('cause) and quotes nothing.
pub(crate) fn quoted(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(after_apostrophe) = quoted_from(text, at, &mut spans) {
        at = after_apostrophe;
    }
    spans
}

/// Adds the quoted spans of `text[at..]` to `spans`; where to scan again when a `'` or `‘` never
/// closes (just after it).
fn quoted_from(text: &str, at: usize, spans: &mut Vec<Range<usize>>) -> Option<usize> {
    let mut open: Option<(char, usize)> = None;
    let mut prev = text[..at].chars().next_back();
    let mut chars = text[at..].char_indices().map(|(i, c)| (at + i, c)).peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let apostrophe = matches!(c, '\'' | '\u{2019}');
        match open {
            Some((close, from)) if c == close && !(apostrophe && next.is_some_and(char::is_alphanumeric)) => {
                spans.push(from..i);
                open = None;
            }
            // A second opening single quote inside one: the first was an apostrophe ('cause it's 'x').
            Some(('\'' | '\u{2019}', _))
                if c == '\u{2018}' || (c == '\'' && !prev.is_some_and(char::is_alphanumeric)) =>
            {
                open = Some((if c == '\'' { c } else { '\u{2019}' }, i + c.len_utf8()));
            }
            None => {
                let close = match c {
                    '"' | '`' => Some(c),
                    '\u{201c}' => Some('\u{201d}'),
                    '\u{2018}' => Some('\u{2019}'),
                    '\'' if !prev.is_some_and(char::is_alphanumeric) => Some(c),
                    _ => None,
                };
                open = close.map(|close| (close, i + c.len_utf8()));
            }
            Some(_) => {}
        }
        prev = Some(c);
    }
    match open {
        Some(('\'' | '\u{2019}', from)) => Some(from),
        Some((_, from)) => {
            spans.push(from..text.len());
            None
        }
        None => None,
    }
}

/// A quoted span's analyzed words with their positions, one per position (an identifier's parts,
/// not the whole, since the parts are what every occurrence indexes); `None` under two words.
fn phrase_terms(span: &str) -> Option<Vec<(usize, String)>> {
    let mut a = analyzer();
    let mut stream = a.token_stream(span);
    // position → (width, term): the narrowest token at each position.
    let mut words: BTreeMap<usize, (usize, String)> = BTreeMap::new();
    while stream.advance() {
        let t = stream.token();
        let width = t.offset_to - t.offset_from;
        if words.get(&t.position).is_none_or(|(w, _)| width < *w) {
            words.insert(t.position, (width, t.text.clone()));
        }
    }
    (words.len() >= 2).then(|| words.into_iter().map(|(at, (_, w))| (at, w)).collect())
}

/// The symbol leg's query: exact (weight 2) and prefix (weight 1) matches on raw symbol names.
pub(crate) fn symbol_query(fields: &Fields, symbols: &[String]) -> Result<Option<Box<dyn Query>>> {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for s in symbols {
        let s = s.to_lowercase();
        if s.len() < 2 {
            continue;
        }
        let exact = TermQuery::new(Term::from_field_text(fields.symbol_raw, &s), IndexRecordOption::Basic);
        clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(exact), 2.0))));
        if s.len() >= 3 {
            let prefix = RegexQuery::from_pattern(&format!("{}.*", regex_escape(&s)), fields.symbol_raw)?;
            clauses.push((Occur::Should, Box::new(prefix)));
        }
    }
    Ok((!clauses.is_empty()).then(|| Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>))
}

fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if !c.is_alphanumeric() && c != '_' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Vec<String> {
        code_tokens(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn identifiers_split_and_stay_whole() {
        assert_eq!(raw("getUserName"), ["getUserName", "get", "User", "Name"]);
        assert_eq!(raw("get_user_name"), ["get_user_name", "get", "user", "name"]);
        assert_eq!(raw("HTTPServer"), ["HTTPServer", "HTTP", "Server"]);
        assert_eq!(raw("kebab-case"), ["kebab", "case", "kebab-case"]);
        assert_eq!(raw("std::io::Read"), ["std", "io", "Read", "std::io::Read"]);
        assert_eq!(raw("os.path.join(x)"), ["os", "path", "join", "os.path.join", "x"]);
        assert_eq!(raw("The end. Next"), ["The", "end", "Next"]);
    }

    #[test]
    fn occurring_finds_analyzed_terms_across_texts() {
        let mut q = terms("parsing the Sessions cache budget");
        q.sort();
        q.dedup();
        let found = occurring(&q, &["Session store", "src/cache.rs", "fn parseConfig() {}"]);
        let hit: Vec<&str> = q.iter().zip(&found).filter(|(_, f)| **f).map(|(t, _)| t.as_str()).collect();
        assert_eq!(hit, ["cach", "pars", "session"]);
        assert_eq!(occurring(&q, &[]), vec![false; q.len()]);
    }

    #[test]
    fn analyzer_lowercases_stems_and_drops_stop_words() {
        assert_eq!(terms("The caching of Sessions"), ["cach", "session"]);
        let a = terms("parseConfigFile");
        assert!(
            a.contains(&"pars".to_string())
                && a.contains(&"config".to_string())
                && a.contains(&"parseconfigfil".to_string()),
            "{a:?}"
        );
        assert_eq!(terms("parse config file"), ["pars", "config", "file"]);
    }

    #[test]
    fn quoted_spans_skip_apostrophes() {
        let spans = |text: &str| -> Vec<String> { quoted(text).into_iter().map(|r| text[r].to_string()).collect() };
        assert_eq!(spans("what does 'flex scanner jammed' mean"), ["flex scanner jammed"]);
        assert_eq!(spans("don't run `cargo test` or \"make check\""), ["cargo test", "make check"]);
        assert_eq!(
            spans("it says \u{201c}no such zone\u{201d} and \u{2018}can\u{2019}t parse\u{2019}"),
            ["no such zone", "can\u{2019}t parse"]
        );
        assert!(spans("the users' files aren't 'closed").is_empty());
        // A lone opening apostrophe quotes nothing and hides nothing after it.
        assert_eq!(spans("'cause it says \"did you mean x\""), ["did you mean x"]);
        assert_eq!(spans("'cause it's 'broken pipe' again"), ["broken pipe"]);
        assert_eq!(spans("\u{2018}cause it\u{2019}s `x y`"), ["x y"]);
        // A message cut short is quoted to the end.
        assert_eq!(spans("it fails with \"error: did you mean"), ["error: did you mean"]);
    }

    #[test]
    fn phrase_terms_keep_parts_and_gaps() {
        let words = phrase_terms("the parseConfig of a file").expect("a phrase");
        let text: Vec<&str> = words.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(text, ["pars", "config", "file"]);
        let at: Vec<usize> = words.iter().map(|(at, _)| *at).collect();
        assert_eq!(at, [1, 2, 5], "stop words leave their positions behind");
        assert!(phrase_terms("the parse").is_none(), "one word is not a phrase");
    }

    #[test]
    fn positions_advance_per_part() {
        let t = code_tokens("fooBar baz");
        let pos: Vec<usize> = t.iter().map(|t| t.position).collect();
        assert_eq!(pos, [0, 0, 1, 2]);
    }
}
