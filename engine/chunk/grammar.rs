//! Parser and scanner grammars (yacc/bison `.y`, lex/flex `.l`): chunked by their structure, not
//! as plain text. The `%%` lines cut a grammar in three sections:
//! - definitions (`%option`, `%token`, start conditions, lex name definitions, `%{ … %}` C code),
//!   titled `parse.y: definitions`, with the names each window declares in `symbols`;
//! - rules: in yacc one chunk per nonterminal (`expr : alternatives ;`, leading comments kept),
//!   titled `parse.y: expr`; in lex one chunk per start-condition block (`<SECT2>{ … }`), titled
//!   `scan.l: <SECT2>`, and the rules outside any block titled `scan.l: rules`;
//! - user code: C, chunked by function like any C file.
//!
//! A grammar without a `%%` line is chunked as plain text.

use super::{code, pack, Chunk, Counter, Unit};
use crate::config::ChunkConfig;
use crate::ingest::{Document, Lang};
use regex::Regex;
use std::sync::LazyLock;

/// A yacc rule's head: the nonterminal at the start of a line, then `:`.
static YACC_RULE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^([A-Za-z_][\w.]*)\s*:").expect("valid"));
/// A nonterminal alone on its line, its `:` on the next.
static YACC_NAME_ALONE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^([A-Za-z_][\w.]*)\s*$").expect("valid"));
/// A lex start-condition block's opening line: `<A,B>{`.
static LEX_BLOCK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^<([\w,*\s]+)>\s*\{\s*$").expect("valid"));
/// Declarations that name tokens or start conditions: `%token <t> A B`, `%x SECT2 CODE`.
static DECLARATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^%(?:token|left|right|nonassoc|precedence|type|nterm|x|s|start)\b(.*)$").expect("valid")
});
/// A lex name definition at the start of a line: `DIGIT  [0-9]`.
static NAME_DEFINITION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^([A-Za-z_][\w-]*)\s+\S").expect("valid"));
/// A `<type>` tag in a declaration, which names no symbol.
static TYPE_TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<[^>]*>").expect("valid"));
/// A C macro the definitions' code defines.
static DEFINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*#\s*define\s+(\w+)").expect("valid"));

/// Chunks a grammar by section; plain text when it has no `%%` line.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    let lines: Vec<&str> = doc.text.lines().collect();
    let marks: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim_end() == "%%").take(2).collect();
    let Some(&first) = marks.first() else {
        return super::text::chunk(doc, config, count);
    };
    let rules_end = marks.get(1).copied().unwrap_or(lines.len());
    let g = Grammar { lines: &lines, file: doc.file_name(), config, count };
    let mut out = g.definitions(first, doc.lang == Some(Lang::Yacc));
    let rules = if doc.lang == Some(Lang::Yacc) {
        g.yacc_rules(first + 1, rules_end)
    } else {
        g.lex_rules(first + 1, rules_end)
    };
    out.extend(rules);
    if rules_end + 1 < lines.len() {
        out.extend(user_code(doc, &lines, rules_end + 1, config, count));
    }
    out.sort_by_key(|c| (c.start_line, c.end_line));
    out
}

/// The user-code section, chunked as C with its line numbers in the grammar file.
fn user_code(doc: &Document, lines: &[&str], from: usize, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    let text = lines[from..].join("\n");
    let section = Document::new(&doc.path, doc.kind, Some(Lang::C), text);
    let mut chunks = code::chunk(&section, config, count);
    for c in &mut chunks {
        c.start_line += from;
        c.end_line += from;
    }
    chunks
}

struct Grammar<'a> {
    lines: &'a [&'a str],
    file: &'a str,
    config: &'a ChunkConfig,
    count: Counter<'a>,
}

impl Grammar<'_> {
    /// Packs lines `lo..hi` (0-based, exclusive; blank edges trimmed) into chunks titled
    /// `file: what`, each window's symbols those `symbols_of` finds on its own lines.
    fn emit(&self, lo: usize, hi: usize, what: &str, symbols_of: &dyn Fn(usize) -> Vec<String>) -> Vec<Chunk> {
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi && self.lines[lo].trim().is_empty() {
            lo += 1;
        }
        while hi > lo && self.lines[hi - 1].trim().is_empty() {
            hi -= 1;
        }
        let units = (lo..hi).map(|n| Unit { text: self.lines[n].to_string(), start_line: n + 1, end_line: n + 1 });
        pack(units.collect(), self.config, self.count, "\n")
            .into_iter()
            .map(|w| {
                let mut symbols: Vec<String> = Vec::new();
                for s in (w.start_line - 1..w.end_line).flat_map(symbols_of) {
                    if !symbols.contains(&s) {
                        symbols.push(s);
                    }
                }
                Chunk {
                    title: format!("{}: {what}", self.file),
                    text: w.text,
                    symbols,
                    start_line: w.start_line,
                    end_line: w.end_line,
                    ..Chunk::default()
                }
            })
            .collect()
    }

    /// The definitions section, `0..end`: the names it declares (tokens, start conditions, lex
    /// name definitions, macros of its C code) are the windows' symbols.
    fn definitions(&self, end: usize, yacc: bool) -> Vec<Chunk> {
        let mut in_code = false;
        let per_line: Vec<Vec<String>> = self.lines[..end]
            .iter()
            .map(|line| {
                let t = line.trim_end();
                if t.starts_with("%{") || t.starts_with("%}") {
                    in_code = t.starts_with("%{");
                    return Vec::new();
                }
                declared(line, in_code || yacc)
            })
            .collect();
        self.emit(0, end, "definitions", &|n| per_line[n].clone())
    }

    /// Yacc rules in `lo..hi`: one chunk (or more, over budget) per nonterminal, from its head
    /// (with the comment above it) to the next head; what precedes the first head is `rules`.
    fn yacc_rules(&self, lo: usize, hi: usize) -> Vec<Chunk> {
        let code: Vec<&str> = self.lines[lo..hi].to_vec();
        let (depths, blanked) = code::lex_c(&code);
        let mut heads: Vec<(usize, String)> = Vec::new();
        for (k, line) in blanked.iter().enumerate() {
            if depths[k] != 0 {
                continue;
            }
            let name = YACC_RULE.captures(line).map(|c| c[1].to_string()).or_else(|| {
                let next_colon = blanked.get(k + 1).is_some_and(|n| n.trim_start().starts_with(':'));
                next_colon.then(|| YACC_NAME_ALONE.captures(line).map(|c| c[1].to_string())).flatten()
            });
            if let Some(name) = name {
                heads.push((self.comment_start(lo + k, lo), name));
            }
        }
        let mut out = Vec::new();
        let first = heads.first().map_or(hi, |h| h.0);
        out.extend(self.emit(lo, first, "rules", &|_| Vec::new()));
        for (i, (start, name)) in heads.iter().enumerate() {
            let end = heads.get(i + 1).map_or(hi, |h| h.0);
            out.extend(self.emit(*start, end, name, &|_| vec![name.clone()]));
        }
        out
    }

    /// Where line `at` starts with the comment lines directly above it (none above `floor`).
    fn comment_start(&self, at: usize, floor: usize) -> usize {
        let mut s = at;
        while s > floor {
            if !code::is_comment_line(self.lines[s - 1]) {
                break;
            }
            s -= 1;
        }
        s
    }

    /// Lex rules in `lo..hi`: a chunk per start-condition block (`<A,B>{` to the `}` that starts
    /// a line), titled and tagged with its conditions; runs of rules outside blocks as `rules`.
    fn lex_rules(&self, lo: usize, hi: usize) -> Vec<Chunk> {
        let mut out = Vec::new();
        let mut loose = lo;
        let mut i = lo;
        while i < hi {
            let Some(caps) = LEX_BLOCK.captures(self.lines[i].trim_end()) else {
                i += 1;
                continue;
            };
            let conditions: Vec<String> = caps[1].split(',').map(|c| c.trim().to_string()).collect();
            let close = (i + 1..hi).find(|&j| self.lines[j].trim_end() == "}").unwrap_or(hi - 1);
            let start = self.comment_start(i, loose);
            out.extend(self.emit(loose, start, "rules", &|_| Vec::new()));
            let what = format!("<{}>", conditions.join(","));
            out.extend(self.emit(start, close + 1, &what, &|_| conditions.clone()));
            i = close + 1;
            loose = i;
        }
        out.extend(self.emit(loose, hi, "rules", &|_| Vec::new()));
        out
    }
}

/// The names a definitions-section line declares: tokens and start conditions of a `%`
/// declaration, a C macro (in code), or else a lex name definition.
fn declared(line: &str, in_code: bool) -> Vec<String> {
    if let Some(caps) = DECLARATION.captures(line) {
        let rest = TYPE_TAG.replace_all(&caps[1], " ");
        return rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .filter(|w| w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
            .map(str::to_string)
            .collect();
    }
    if let Some(caps) = DEFINE.captures(line) {
        return vec![caps[1].to_string()];
    }
    match NAME_DEFINITION.captures(line) {
        Some(caps) if !in_code => vec![caps[1].to_string()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    fn run(path: &str, text: &str, max_tokens: usize) -> Vec<Chunk> {
        let doc = Document::new(path, Kind::Code, Lang::from_path(path), text.to_string());
        let chunks = super::super::chunk_document(
            &doc,
            &ChunkConfig { max_tokens, overlap: 0.15, ..ChunkConfig::default() },
            &approx_tokens,
        );
        super::super::assert_ranges_honest(text, &chunks);
        chunks
    }

    use crate::chunk::titled_ranges as titles;

    fn symbols_of<'a>(chunks: &'a [Chunk], title: &str) -> Vec<&'a str> {
        chunks.iter().filter(|c| c.title == title).flat_map(|c| c.symbols.iter().map(String::as_str)).collect()
    }

    /// A bison grammar in the style of flex's own parse.y: C prologue, token declarations,
    /// rules with actions (braces inside character literals and strings), user-code section.
    const CALC_Y: &str = r#"/* calc.y - a desk calculator */
%{
#include <stdio.h>
#define YYSTYPE double
int yylex (void);
%}

%token NUMBER
%token <name> IDENT '{'
%left '+' '-'

%%
input	:  /* empty */
	|  input line
	;

/* One line of input: an expression to print. */
line	:  '\n'
	|  expr '\n'
			{ printf ("%g\n", $1); /* a } in a comment */ }
	;

expr
	:  expr '+' expr	{ $$ = $1 + $3; }
	|  '{' expr '}'		{ $$ = $2; }
	|  NUMBER
	;
%%

/* Reports a syntax error. */

void yyerror (const char *msg)
{
	fprintf (stderr, "%s\n", msg);
}
"#;

    #[test]
    fn a_yacc_grammar_is_chunked_by_section_and_rule() {
        let c = run("src/calc.y", CALC_Y, 256);
        assert_eq!(
            titles(&c),
            [
                "calc.y: definitions:1-10",
                "calc.y: input:13-15",
                "calc.y: line:17-21",
                "calc.y: expr:23-27",
                "calc.y: yyerror:30-35",
            ]
        );
        assert_eq!(symbols_of(&c, "calc.y: definitions"), ["YYSTYPE", "NUMBER", "IDENT"]);
        assert_eq!(symbols_of(&c, "calc.y: expr"), ["expr"]);
        assert_eq!(symbols_of(&c, "calc.y: yyerror"), ["yyerror"]);
    }

    #[test]
    fn a_long_yacc_rule_is_split_under_its_own_title() {
        let alts: String = (0..40).map(|i| format!("\t|  ALT{i} term\t{{ $$ = mk({i}); }}\n")).collect();
        let src = format!("%token A\n%%\nterm\t:  A\n{alts}\t;\n%%\n");
        let c = run("big.y", &src, 80);
        let rule: Vec<&Chunk> = c.iter().filter(|c| c.title == "big.y: term").collect();
        assert!(rule.len() > 2, "{:?}", titles(&c));
        assert!(rule.iter().all(|c| c.symbols == ["term"]));
        assert_eq!(rule.last().map(|c| c.end_line), Some(44));
    }

    /// A flex scanner in the style of flex's own scan.l: start conditions, name definitions,
    /// options, start-condition blocks with actions, loose rules, user code.
    const WORDS_L: &str = r#"/* words.l - counts words */
%{
#include "words.h"
int nwords = 0;
%}

%option noyywrap yylineno
%x COMMENT STRING

WORD	[A-Za-z]+
DIGIT	[0-9]

%%
{WORD}		++nwords;
"/*"		BEGIN(COMMENT);

<COMMENT>{
	"*/"	BEGIN(INITIAL);
	.|\n	/* skip */
}

/* Strings: a quote to the next quote. */
<STRING,COMMENT>{
	\"	{ BEGIN(INITIAL); }
	[^"]+	{ add_text (yytext); }
}
{DIGIT}+	return NUMBER;
%%

int main (void)
{
	yylex ();
	return nwords;
}
"#;

    #[test]
    fn a_lex_scanner_is_chunked_by_section_and_start_condition() {
        let c = run("src/words.l", WORDS_L, 256);
        assert_eq!(
            titles(&c),
            [
                "words.l: definitions:1-11",
                "words.l: rules:14-15",
                "words.l: <COMMENT>:17-20",
                "words.l: <STRING,COMMENT>:22-26",
                "words.l: rules:27-27",
                "words.l: main:30-34",
            ]
        );
        assert_eq!(symbols_of(&c, "words.l: definitions"), ["COMMENT", "STRING", "WORD", "DIGIT"]);
        assert_eq!(symbols_of(&c, "words.l: <STRING,COMMENT>"), ["STRING", "COMMENT"]);
        assert_eq!(symbols_of(&c, "words.l: main"), ["main"]);
    }

    #[test]
    fn a_grammar_without_sections_is_plain_text() {
        let c = run("notes.l", "just some notes\n\nabout lex", 256);
        assert_eq!(titles(&c), ["notes.l:1-3"]);
        assert!(c[0].symbols.is_empty());
    }
}
