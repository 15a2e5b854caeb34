//! Sources of documents: a directory walk (honouring .gitignore, .ignore and hidden-file rules the
//! way ripgrep does, with include/exclude globs, plus `.claude/memory/` although it is hidden) and
//! BEIR corpora (`corpus.jsonl`, one `{"_id","title","text"}` per line, `_id` kept as document id).
//! Binary files, files over the size limit, invalid UTF-8 content and file names that are not
//! UTF-8 (never converted lossily: two such names could merge into one) are skipped with a warning
//! naming the file; nothing here panics on bad input. Secret-looking strings are redacted from
//! every document here, so they never reach the index.

use crate::config::IndexConfig;
use crate::error::{Error, IoContext, Result};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What kind of document, which picks the chunker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Markdown (`.md`, `.markdown`, `.mdx`): chunked by heading.
    Markdown,
    /// reStructuredText (`.rst`, `.rest`): chunked by section title.
    Rst,
    /// AsciiDoc (`.adoc`, `.asciidoc`): chunked by section title.
    AsciiDoc,
    /// Texinfo manuals (`.texi`, `.texinfo`, `.txi`): chunked by sectioning command.
    Texinfo,
    /// Maven xdoc site documents (`.xml` with a `<document>` root and sections): chunked by
    /// section and subsection; other XML is [`Kind::Text`].
    Xdoc,
    /// Source code in one of the [`Lang`]s: chunked by definition.
    Code,
    /// JSON or JSONL memory records: one chunk per record.
    Memory,
    /// Anything else that is text, and BEIR records: chunked by paragraph.
    Text,
}

impl Kind {
    /// The kind's name as stored in the index and shown in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Markdown => "markdown",
            Kind::Rst => "rst",
            Kind::AsciiDoc => "asciidoc",
            Kind::Texinfo => "texinfo",
            Kind::Xdoc => "xdoc",
            Kind::Code => "code",
            Kind::Memory => "memory",
            Kind::Text => "text",
        }
    }
}

/// Programming languages the code chunker understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// `.rs`
    Rust,
    /// `.py`, `.pyi`
    Python,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`
    JavaScript,
    /// `.ts`, `.tsx`, `.mts`, `.cts`
    TypeScript,
    /// `.go`
    Go,
    /// `.java`
    Java,
    /// `.c`, `.h`
    C,
    /// C++: `.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`
    Cpp,
    /// yacc/bison grammars: `.y`, `.yy`, `.ypp`
    Yacc,
    /// lex/flex scanners: `.l`, `.ll`, `.lpp`, `.lex`
    Lex,
}

impl Lang {
    /// The language a path's extension names (case-insensitive); `None` for any other extension.
    pub fn from_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        Some(match ext.as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "tsx" | "mts" | "cts" => Lang::TypeScript,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Lang::Cpp,
            "y" | "yy" | "ypp" => Lang::Yacc,
            "l" | "ll" | "lpp" | "lex" => Lang::Lex,
            _ => return None,
        })
    }

    /// The language's lowercase name as stored in the index and shown in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Yacc => "yacc",
            Lang::Lex => "lex",
        }
    }
}

/// Text-like extensions indexed as plain text. Files of any other unknown type are indexed as
/// plain text too when their content is text (see [`plain_text`]).
const TEXT_EXTENSIONS: &[&str] = &["txt", "org", "toml", "yaml", "yml", "ini", "cfg", "sh", "sql", "html", "css"];

/// Files written by tools, not people: lockfiles, source maps, minified bundles, vector images.
/// Their text only adds noise to a search.
const GENERATED_NAMES: &[&str] = &[
    "cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "pipfile.lock",
    "composer.lock",
    "gemfile.lock",
    "go.sum",
];
const GENERATED_SUFFIXES: &[&str] = &[".min.js", ".min.css", ".map", ".svg", ".lock"];
/// Markers tools put at the top of files they generate.
const GENERATED_MARKERS: &[&str] = &["@generated", "DO NOT EDIT"];

/// A file of an unknown type longer than this with lines this long on average is minified or data.
const MINIFIED_MEAN_LINE: usize = 300;
/// Any line longer than this marks a file of an unknown type as minified or data.
const MINIFIED_MAX_LINE: usize = 5_000;

/// Whether a file's name says a tool wrote it.
fn generated_name(rel: &str) -> bool {
    let lower = rel.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    GENERATED_NAMES.contains(&name) || GENERATED_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Whether a path names a test, benchmark or fixture: a `test`/`tests`/`__tests__`/`spec`/
/// `fixtures`/`benches`/`benchmarks`/`testdata`/`testsuite` directory (Maven's `src/test/java`
/// among them), a name like `test_x.py`, `x_test.go`, `x.test.js`, `x.spec.ts`, `x.bench.js`,
/// or a JUnit class name (`TestPeriod.java`, `PeriodTest.java`, `PeriodTests.java`,
/// `PeriodIT.java`; case matters there: `Contest.java` is no test).
pub(crate) fn is_test_path(path: &str) -> bool {
    static TEST: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(^|/)(tests?|__tests__|specs?|fixtures?|benchmarks?|benches|testdata|testsuites?)/|(^|/)test_[^/]*$|_tests?\.[a-z]+$|\.(test|spec|bench)\.[a-z]+$|(?-i:(^|/)Test[A-Z]\w*\.java$|[a-z0-9](Tests?|IT|TestCase)\.java$)",
        )
        .expect("valid")
    });
    TEST.is_match(path)
}

/// Whether a path lies in a directory of code the project took from elsewhere: `vendor/`,
/// `third_party/` (and its spellings), `deps/`.
pub(crate) fn is_vendored_path(path: &str) -> bool {
    static VENDORED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)(^|/)(vendor|vendored|third[_-]?party|3rd[_-]?party|deps|_deps)/").expect("valid")
    });
    VENDORED.is_match(path)
}

/// Whether a path is a gettext translation catalog (`po/fi.po`, `messages.pot`): it repeats every
/// message of the project's sources, once per language.
pub(crate) fn is_translation_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".po") || lower.ends_with(".pot")
}

/// Whether the first lines of a file say a tool wrote it ("generated by", "DO NOT EDIT", a Bison
/// or makeinfo banner): it repeats what its source says, in the tool's words.
pub(crate) fn generated_head(text: &str) -> bool {
    static MARKER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)generated (automatically )?(by|from|with)|auto-?generated|do not (edit|modify)|@generated|made by gnu bison|produced by makeinfo|created from \S+ via",
        )
        .expect("valid")
    });
    let head: String = text.lines().take(GENERATED_HEAD_LINES).collect::<Vec<_>>().join("\n");
    MARKER.is_match(&head.chars().take(800).collect::<String>())
}

/// Lines at the top of a file where a tool's "generated" banner is looked for.
const GENERATED_HEAD_LINES: usize = 6;

/// Extensions of parser and scanner grammars (yacc/bison, lex/flex, JavaCC) whose generated
/// source sits beside them under the same name: `parse.y` → `parse.c`, `parse.h`.
const GRAMMAR_EXTENSIONS: &[&str] = &["y", "yy", "ypp", "l", "ll", "lpp", "jj"];

/// The grammar files a generated source of this path would come from (same directory and
/// name, a grammar extension), for a C, C++ or Java path; empty for any other.
pub(crate) fn grammar_sources(path: &str) -> Vec<String> {
    let Some((stem, ext)) = path.rsplit_once('.') else { return Vec::new() };
    if stem.ends_with('/') || !matches!(ext, "c" | "h" | "cc" | "cpp" | "cxx" | "hh" | "hpp" | "java") {
        return Vec::new();
    }
    GRAMMAR_EXTENSIONS.iter().map(|g| format!("{stem}.{g}")).collect()
}

/// Whether the content of a file of an unknown type is text a person wrote: not minified, not
/// one long line of data, not marked as generated near its top.
fn plain_text(text: &str) -> bool {
    let head: String = text.chars().take(2048).collect();
    if GENERATED_MARKERS.iter().any(|m| head.contains(m)) {
        return false;
    }
    let lines = text.lines().count().max(1);
    let longest = text.lines().map(str::len).max().unwrap_or(0);
    !text.trim().is_empty()
        && longest <= MINIFIED_MAX_LINE
        && (text.len() < 1024 || text.len() / lines <= MINIFIED_MEAN_LINE)
}

/// One document to index.
#[derive(Debug, Clone)]
pub struct Document {
    /// Stable id: the relative path for files, `_id` for BEIR records.
    pub id: String,
    /// Display path (relative to the indexed root).
    pub path: String,
    /// What kind of document it is, which picks the chunker.
    pub kind: Kind,
    /// Its language, for code (`None` otherwise).
    pub lang: Option<Lang>,
    /// A title given with the document (a BEIR record's); `None` for files.
    pub title: Option<String>,
    /// The full content (secrets already redacted when a scan read it).
    pub text: String,
    /// Whether `path` names a file (false for records of a collection, whose id is no name).
    pub is_file: bool,
    /// The file's stat when it was read, if it had settled (see [`FileStat::settled`]): what lets
    /// the next scan pass over it unread.
    pub stat: Option<FileStat>,
}

/// What the file system says about a file: enough to tell, without reading it, that it is the
/// file that was read before. The change time catches what the modification time alone would
/// miss (a tool that restores the old mtime after writing, `touch -d`), the inode a file replaced
/// by another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStat {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Status change time, nanoseconds since the epoch.
    pub ctime_ns: i64,
    /// Device the inode number belongs to.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
}

/// How long a file must have been left alone before its stat is trusted: a write within the same
/// timestamp tick as the read would leave the stat unchanged, and some file systems tick in whole
/// seconds (FAT: two).
const SETTLE_NS: i64 = 3_000_000_000;

impl FileStat {
    /// The stat of a file from its metadata.
    pub fn of(meta: &std::fs::Metadata) -> FileStat {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        FileStat {
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// Whether the file had been left alone long enough before `now_ns` (when the scan started)
    /// that any later change shows in its times.
    pub fn settled(&self, now_ns: i64) -> bool {
        self.mtime_ns.max(self.ctime_ns) < now_ns.saturating_sub(SETTLE_NS)
    }
}

/// Nanoseconds since the epoch, now.
fn now_ns() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0);
    #[cfg(test)]
    let now = now + CLOCK_AHEAD_NS.with(|c| c.get());
    now
}

#[cfg(test)]
thread_local! {
    static CLOCK_AHEAD_NS: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// Makes scans on this thread see the clock `secs` ahead, so a test's files count as settled
/// without the test waiting for them to.
#[cfg(test)]
pub(crate) fn pretend_clock_ahead(secs: i64) {
    CLOCK_AHEAD_NS.with(|c| c.set(secs * 1_000_000_000));
}

impl Document {
    /// A file's document at `path` (its id too), with no title.
    pub fn new(path: &str, kind: Kind, lang: Option<Lang>, text: String) -> Document {
        Document {
            id: path.to_string(),
            path: path.to_string(),
            kind,
            lang,
            title: None,
            text,
            is_file: true,
            stat: None,
        }
    }

    /// A file's document, typed by its name and content; `None` for files the engine does not
    /// index (generated, minified, not text).
    pub fn from_path(path: &str, text: String) -> Option<Document> {
        kind_of(path, &text).map(|(kind, lang)| Document::new(path, kind, lang, text))
    }

    /// The last path component.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The title chunks get when the content has none: the document's title, else the file name
    /// for files, else nothing (a collection record's id carries no meaning to embed).
    pub(crate) fn default_title(&self) -> String {
        match (&self.title, self.is_file) {
            (Some(t), _) => t.clone(),
            (None, true) => self.file_name().to_string(),
            (None, false) => String::new(),
        }
    }

    /// Content hash: what decides whether the document must be re-chunked.
    pub(crate) fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.title.as_deref().unwrap_or("").as_bytes());
        h.update([0]);
        h.update(self.text.as_bytes());
        hex::encode(&h.finalize()[..16])
    }
}

/// Where documents come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// A directory tree.
    Dir(PathBuf),
    /// A BEIR collection directory (holding `corpus.jsonl`).
    Beir(PathBuf),
}

/// What a scan found, with what it skipped and why.
#[derive(Debug, Default)]
pub struct Scan {
    /// The documents to index.
    pub documents: Vec<Document>,
    /// Ids of the files passed over unread because the caller knew them unchanged by their stat.
    pub unchanged: Vec<String>,
    /// Files seen by the walk (indexed or not).
    pub files_scanned: usize,
    /// Files not indexed: unsupported type, binary, too large, invalid UTF-8, unreadable.
    pub skipped: usize,
    /// One line per file skipped for a reason the user should know about.
    pub warnings: Vec<String>,
}

fn globset(patterns: &[String], what: &str) -> Result<Option<GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| Error::Config(format!("[index] {what}: bad glob {p:?}: {e}")))?);
    }
    b.build().map(Some).map_err(|e| Error::Config(format!("[index] {what}: {e}")))
}

/// Classifies a file by name; `None` for types the engine does not index.
fn classify(rel: &str) -> Option<(Kind, Option<Lang>)> {
    let lower = rel.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if matches!(ext, "md" | "markdown" | "mdx") {
        return Some((Kind::Markdown, None));
    }
    if matches!(ext, "rst" | "rest") {
        return Some((Kind::Rst, None));
    }
    if matches!(ext, "adoc" | "asciidoc") {
        return Some((Kind::AsciiDoc, None));
    }
    if matches!(ext, "texi" | "texinfo" | "txi") {
        return Some((Kind::Texinfo, None));
    }
    if ext == "xml" {
        return Some((Kind::Xdoc, None));
    }
    if let Some(lang) = Lang::from_path(&lower) {
        return Some((Kind::Code, Some(lang)));
    }
    if matches!(ext, "json" | "jsonl") {
        return Some((Kind::Memory, None));
    }
    if TEXT_EXTENSIONS.contains(&ext)
        || !lower.rsplit('/').next().unwrap_or("").contains('.') && lower.ends_with("readme")
    {
        return Some((Kind::Text, None));
    }
    None
}

/// Whether an XML file is a Maven xdoc document: a `<document>` root with at least one section.
pub(crate) fn is_xdoc(text: &str) -> bool {
    text.contains("<document") && text.contains("<section name=")
}

/// What a file is, from its name and content; `None` for a file the engine does not index.
fn kind_of(rel: &str, text: &str) -> Option<(Kind, Option<Lang>)> {
    if generated_name(rel) {
        return None;
    }
    content_kind(classify(rel), text)
}

/// What a file whose name is not a generated one's is, from what its name says (`known`) and its
/// content.
fn content_kind(known: Option<(Kind, Option<Lang>)>, text: &str) -> Option<(Kind, Option<Lang>)> {
    match known {
        // JSON that is not memory records (package.json, tsconfig.json…) is text.
        Some((Kind::Memory, _)) if crate::memory::record::parse(text).is_none() => {
            plain_text(text).then_some((Kind::Text, None))
        }
        Some((Kind::Xdoc, _)) if !is_xdoc(text) => plain_text(text).then_some((Kind::Text, None)),
        Some(known) => Some(known),
        // Every other text file: man pages, shell completions, Makefiles…
        None => plain_text(text).then_some((Kind::Text, None)),
    }
}

/// Says, from a file's id and stat, that the caller has it indexed as it is: the scan need not
/// read it.
pub type Unchanged<'a> = &'a (dyn Fn(&str, &FileStat) -> bool + Sync);

/// A file's identity: its device and inode numbers.
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Walks `root` and reads every indexable file but those `unchanged` knows.
pub(crate) fn scan_dir(
    root: &Path,
    config: &IndexConfig,
    index_dir: Option<&Path>,
    unchanged: Unchanged,
) -> Result<Scan> {
    if !root.is_dir() {
        return Err(Error::InvalidInput(format!("{} is not a directory", root.display())));
    }
    // The index directory is left out by identity (device and inode), checked on directories
    // only: the walk follows no symbolic links, so nothing under another directory is in it, and
    // one stat per directory is far cheaper than resolving every file's path.
    let index_id = index_dir.and_then(|d| std::fs::metadata(d).ok()).map(|m| identity(&m));
    let mut walk = Walk {
        root,
        config,
        include: globset(&config.include, "include")?,
        exclude: globset(&config.exclude, "exclude")?,
        unchanged,
        started: now_ns(),
        scan: Scan::default(),
        seen: std::collections::HashSet::new(),
    };
    for walk_root in walk_roots(root, config) {
        // The walker filters entries below a root, never the root itself (`hidden_include`
        // naming the index directory).
        if index_id.is_some() && std::fs::metadata(&walk_root).ok().map(|m| identity(&m)) == index_id {
            continue;
        }
        let walker = ignore::WalkBuilder::new(&walk_root)
            .hidden(true)
            .git_ignore(true)
            .ignore(true)
            .require_git(false)
            .filter_entry(move |e| {
                let dir = e.file_type().is_some_and(|t| t.is_dir());
                !(dir && golden_set_dir(e.path()))
                    && (!(index_id.is_some() && dir) || e.metadata().map_or(true, |m| Some(identity(&m)) != index_id))
            })
            .build();
        for entry in walker {
            match entry {
                Ok(e) if e.file_type().is_some_and(|t| t.is_file()) => walk.file(e.path()),
                Ok(_) => {}
                Err(e) => walk.scan.warnings.push(format!("skipped: {e}")),
            }
        }
    }
    let mut scan = walk.scan;
    scan.documents.sort_by(|a, b| a.id.cmp(&b.id));
    scan.unchanged.sort();
    Ok(scan)
}

/// The file that defines a golden set (`engine eval`), inside its directory.
pub const GOLDEN_SET_FILE: &str = "set.toml";

/// Whether `dir` holds a golden set: a `set.toml` with queries (golden/README.md). Its queries
/// and judgments are about the project, not of it: indexed, a set's own query text would be the
/// best hit for every query it holds.
fn golden_set_dir(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join(GOLDEN_SET_FILE)) else { return false };
    toml::from_str::<toml::Table>(&text).is_ok_and(|t| t.get("query").is_some_and(toml::Value::is_array))
}

/// The directories a scan walks: the root, and the hidden directories `[index] hidden_include`
/// names that exist.
fn walk_roots(root: &Path, config: &IndexConfig) -> Vec<std::path::PathBuf> {
    let mut roots = vec![root.to_path_buf()];
    roots.extend(config.hidden_include.iter().map(|extra| root.join(extra)).filter(|p| p.is_dir()));
    roots
}

/// A directory scan in progress.
struct Walk<'a> {
    root: &'a Path,
    config: &'a IndexConfig,
    include: Option<globset::GlobSet>,
    exclude: Option<globset::GlobSet>,
    unchanged: Unchanged<'a>,
    /// When the scan started: a file changed since may change again before its stat settles.
    started: i64,
    scan: Scan,
    /// Paths already taken (a hidden root is also below the main one).
    seen: std::collections::HashSet<std::path::PathBuf>,
}

impl Walk<'_> {
    /// One file the walk found: skipped, known unchanged, or read.
    fn file(&mut self, path: &Path) {
        let rel_path = path.strip_prefix(self.root).unwrap_or(path);
        if !self.seen.insert(rel_path.to_path_buf()) {
            return;
        }
        self.scan.files_scanned += 1;
        // A lossy conversion would merge `x\xff.md` and `x\xfe.md` into one `x\u{fffd}.md`.
        let Some(rel) = rel_path.to_str().map(|r| r.replace('\\', "/")) else {
            self.skip(Some(format!("skipped {rel_path:?}: the file name is not valid UTF-8")));
            return;
        };
        let excluded = self.include.as_ref().is_some_and(|g| !g.is_match(&rel))
            || self.exclude.as_ref().is_some_and(|g| g.is_match(&rel));
        if excluded || generated_name(&rel) {
            self.skip(None);
            return;
        }
        let stat = match std::fs::metadata(path) {
            Ok(meta) => FileStat::of(&meta),
            Err(e) => return self.skip(Some(format!("skipped {rel}: {e}"))),
        };
        // Over the size limit: read, to be refused with its warning (the limit may be new).
        if stat.size <= self.config.max_file_size && (self.unchanged)(&rel, &stat) {
            self.scan.unchanged.push(rel);
            return;
        }
        self.read(path, rel, stat);
    }

    /// Reads a file into a document. Secrets never enter the index: redacted here, on the whole
    /// document, before any chunk boundary could split one into pieces no pattern recognises.
    fn read(&mut self, path: &Path, rel: String, stat: FileStat) {
        let known = classify(&rel);
        match read_text(path, stat.size, self.config.max_file_size).map(crate::secrets::redact_owned) {
            Ok(text) => match content_kind(known, &text) {
                Some((kind, lang)) => {
                    let mut doc = Document::new(&rel, kind, lang, text);
                    // Taken before the read: a change after it shows as a different stat.
                    doc.stat = stat.settled(self.started).then_some(stat);
                    self.scan.documents.push(doc);
                }
                None => self.skip(None),
            },
            // An unknown type that is not text (an image, an archive) is expected: no warning. So
            // is XML that is not text: its name only guessed it might be xdoc.
            Err(_) if known.is_none_or(|(kind, _)| kind == Kind::Xdoc) => self.skip(None),
            Err(why) => self.skip(Some(format!("skipped {rel}: {why}"))),
        }
    }

    fn skip(&mut self, warning: Option<String>) {
        self.scan.skipped += 1;
        self.scan.warnings.extend(warning);
    }
}

/// Reads a file of `size` bytes as UTF-8 text, or says why not.
fn read_text(path: &Path, size: u64, max: u64) -> std::result::Result<String, String> {
    if size > max {
        return Err(format!("{size} bytes is over the {max}-byte limit ([index] max_file_size)"));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err("binary file".into());
    }
    String::from_utf8(bytes).map_err(|e| format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()))
}

#[derive(Deserialize)]
struct BeirDoc {
    #[serde(rename = "_id")]
    id: serde_json::Value,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    text: String,
}

/// Reads a BEIR `corpus.jsonl`. A malformed line is an error naming the file and line.
pub fn scan_beir(dir: &Path) -> Result<Scan> {
    let path = if dir.is_file() { dir.to_path_buf() } else { dir.join("corpus.jsonl") };
    let text = std::fs::read_to_string(&path).ctx(|| format!("reading BEIR corpus {}", path.display()))?;
    let mut scan = Scan::default();
    let mut ids = std::collections::HashSet::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let d: BeirDoc = serde_json::from_str(line)
            .map_err(|e| Error::InvalidInput(format!("{}:{}: not a BEIR document: {e}", path.display(), n + 1)))?;
        let id = match d.id {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        if !ids.insert(id.clone()) {
            return Err(Error::InvalidInput(format!("{}:{}: duplicate _id {id:?}", path.display(), n + 1)));
        }
        scan.files_scanned += 1;
        let title = d.title.filter(|t| !t.trim().is_empty()).map(crate::secrets::redact_owned);
        scan.documents.push(Document {
            id: id.clone(),
            path: id,
            kind: Kind::Text,
            lang: None,
            title,
            text: crate::secrets::redact_owned(d.text),
            is_file: false,
            stat: None,
        });
    }
    Ok(scan)
}

/// Scans a source, passing over the files `unchanged` knows (a collection is read whole).
pub fn scan_except(
    source: &Source,
    config: &IndexConfig,
    index_dir: Option<&Path>,
    unchanged: Unchanged,
) -> Result<Scan> {
    match source {
        Source::Dir(root) => scan_dir(root, config, index_dir, unchanged),
        Source::Beir(dir) => scan_beir(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_recognised() {
        for p in [
            "tests/util.rs",
            "test/levels.test.js",
            "src/__tests__/a.ts",
            "test_core.py",
            "pkg/x_test.go",
            "a/b.spec.ts",
            "benchmarks/basic.bench.js",
            "test/fixtures/x.js",
            "crates/x/benches/b.rs",
            "src/test/java/org/joda/time/TestPeriod_Basics.java",
            "core/PeriodTest.java",
            "core/PeriodTests.java",
            "core/PeriodIT.java",
            "testsuite/regex/run.c",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "src/testing.py",
            "lib/levels.js",
            "docs/testing.rst",
            "contest/x.rs",
            "latest.md",
            "src/main/java/org/x/Contest.java",
            "src/main/java/org/x/Testimony.java",
            "src/main/java/org/x/SPLIT.java",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn vendored_paths_generated_banners_and_grammar_outputs_are_recognised() {
        for p in ["vendor/zlib/inflate.c", "third_party/abseil/a.h", "lib/third-party/x.js", "deps/lua/lvm.c"] {
            assert!(is_vendored_path(p), "{p}");
        }
        for p in ["src/vendors.rs", "docs/dependencies.md", "src/deps.c", "vendor.go"] {
            assert!(!is_vendored_path(p), "{p}");
        }
        for (p, catalog) in [("po/fi.po", true), ("po/flex.pot", true), ("PO/DE.PO", true), ("src/report.c", false)] {
            assert_eq!(is_translation_path(p), catalog, "{p}");
        }
        assert!(!is_translation_path("docs/potato.md") && !is_translation_path("src/repo"));
        for head in [
            "/* A Bison parser, made by GNU Bison 3.0.4.  */\n",
            "This is flex.info, produced by makeinfo version 6.1 from flex.texi.\n",
            "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n",
            "# Makefile.in generated by automake 1.15 from Makefile.am.\n",
            "/* File created from flex.skl via mkskel.sh */\n",
        ] {
            assert!(generated_head(head), "{head}");
        }
        let later = format!("{}/* generated by hand, once */\n", "int x;\n".repeat(GENERATED_HEAD_LINES));
        for text in ["/* The scanner flex builds: its tables are generated at run time */", later.as_str()] {
            assert!(!generated_head(text), "{text}");
        }
        assert_eq!(grammar_sources("src/parse.c")[0], "src/parse.y");
        assert!(grammar_sources("src/scan.h").contains(&"src/scan.l".to_string()));
        assert!(grammar_sources("README.md").is_empty() && grammar_sources("src/.c").is_empty());
    }

    #[test]
    fn walk_honours_ignores_and_includes_claude_memory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".claude/memory")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(root.join("a.md"), "# A\ntext").unwrap();
        std::fs::write(root.join("b.rs"), "fn b() {}").unwrap();
        std::fs::write(root.join("build/out.md"), "ignored").unwrap();
        std::fs::write(root.join(".hidden/x.md"), "hidden").unwrap();
        std::fs::write(root.join(".claude/memory/m.json"), r#"{"title":"t","content":"c"}"#).unwrap();
        std::fs::write(root.join("package.json"), r#"{"name":"x"}"#).unwrap();
        std::fs::write(root.join("blob.txt"), b"ab\0cd").unwrap();
        std::fs::write(root.join("bad.txt"), b"ok \xff\xfe").unwrap();
        std::fs::write(root.join("big.txt"), "x".repeat(2000)).unwrap();
        let config = IndexConfig { max_file_size: 1000, ..IndexConfig::default() };
        let scan = scan_dir(root, &config, None, &|_, _| false).unwrap();
        let ids: Vec<&str> = scan.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, [".claude/memory/m.json", "a.md", "b.rs", "package.json"]);
        assert_eq!(scan.documents[3].kind, Kind::Text, "JSON that is not memory records is text");
        assert_eq!(scan.documents[0].kind, Kind::Memory);
        assert_eq!(scan.documents[2].lang, Some(Lang::Rust));
        let w = scan.warnings.join("\n");
        assert!(w.contains("blob.txt: binary"), "{w}");
        assert!(w.contains("bad.txt: invalid UTF-8"), "{w}");
        assert!(w.contains("big.txt: 2000 bytes"), "{w}");
        let config = IndexConfig { exclude: vec!["*.rs".into()], ..IndexConfig::default() };
        let scan = scan_dir(root, &config, None, &|_, _| false).unwrap();
        assert!(!scan.documents.iter().any(|d| d.id == "b.rs"));
    }

    #[test]
    fn secrets_are_redacted_from_whole_documents() {
        let dir = tempfile::tempdir().unwrap();
        // A key long enough to be cut into several chunks: its tail must not survive either.
        let body: String = (0..60).map(|i| format!("MIIEowIBAAKCAQEA{i:04}abcdefghijklmnopqrstuvwx\n")).collect();
        let key = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----");
        std::fs::write(dir.path().join("notes.md"), format!("# Deploy\n\nthe key:\n\n{key}\n\nafter")).unwrap();
        std::fs::write(dir.path().join("m.json"), r#"{"title":"db","content":"password: hunter2hunter2"}"#).unwrap();
        let scan = scan_dir(dir.path(), &IndexConfig::default(), None, &|_, _| false).unwrap();
        let all: String = scan.documents.iter().map(|d| d.text.as_str()).collect();
        assert!(!all.contains("MIIEow") && !all.contains("hunter2"), "{all}");
        assert!(all.contains("the key:\n\n[redacted]\n\nafter"), "{all}");
        let memory = scan.documents.iter().find(|d| d.id == "m.json").unwrap();
        assert_eq!(memory.kind, Kind::Memory, "the record is still a record");
    }

    #[test]
    fn every_text_file_is_indexed_and_generated_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |name: &str, text: &[u8]| {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("doc/rg.1", b".TH RG 1\n.SH NAME\nrg \\- recursively search\n");
        write("complete/_rg", b"#compdef rg\n_rg() { _arguments '--hidden[search hidden files]' }\n");
        write("Makefile", b"test:\n\tcargo test\n");
        write("Dockerfile", b"FROM debian:12\nRUN apt-get update\n");
        write("notes.weird-ext", b"plain words a person wrote\n");
        write("Cargo.lock", b"[[package]]\nname = \"x\"\n");
        write("web/app.min.js", b"var a=1;");
        write("gen/api.txt.in", b"// Code generated by a tool. DO NOT EDIT.\nfn x() {}\n");
        write("data/blob.dat", &[0u8, 159, 146, 150]);
        write("data/one-line.csv", format!("{}\n", "1,2,3,".repeat(2000)).as_bytes());
        write("logo.png", &[137, 80, 78, 71, 0, 0]);
        let scan = scan_dir(root, &IndexConfig::default(), None, &|_, _| false).unwrap();
        let ids: Vec<&str> = scan.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["Dockerfile", "Makefile", "complete/_rg", "doc/rg.1", "notes.weird-ext"]);
        assert!(scan.documents.iter().all(|d| d.kind == Kind::Text));
        assert!(scan.warnings.is_empty(), "binary files of unknown types are expected: {:?}", scan.warnings);
        // [index] exclude still wins.
        let config = IndexConfig { exclude: vec!["doc/**".into()], ..IndexConfig::default() };
        let scan = scan_dir(root, &config, None, &|_, _| false).unwrap();
        assert!(!scan.documents.iter().any(|d| d.id == "doc/rg.1"));
    }

    #[test]
    fn manuals_and_site_pages_are_told_from_other_xml_by_name_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, body: &[u8]| {
            std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
            std::fs::write(root.join(rel), body).unwrap();
        };
        write("doc/flex.texi", b"@node Top\n@top flex\n");
        write("site/faq.xml", include_bytes!("../../tests/data/doc-markup/faq.xml"));
        write("pom.xml", b"<project>\n  <modelVersion>4.0.0</modelVersion>\n</project>\n");
        write("data/blob.xml", &[0u8, 159, 146, 150]);
        let scan = scan_dir(root, &IndexConfig::default(), None, &|_, _| false).unwrap();
        let kinds: Vec<(&str, Kind)> = scan.documents.iter().map(|d| (d.id.as_str(), d.kind)).collect();
        assert_eq!(kinds, [("doc/flex.texi", Kind::Texinfo), ("pom.xml", Kind::Text), ("site/faq.xml", Kind::Xdoc)]);
        assert!(scan.warnings.is_empty(), "XML that is not text is skipped quietly: {:?}", scan.warnings);
    }

    #[test]
    fn file_names_that_are_not_utf8_are_skipped_with_a_warning_each() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("ok.md"), "# Ok\ntext").unwrap();
        // Both would become "x\u{fffd}.md" through a lossy conversion.
        for name in [&b"x\xff.md"[..], &b"x\xfe.md"[..]] {
            std::fs::write(root.join(std::ffi::OsStr::from_bytes(name)), "# X\ntext").unwrap();
        }
        let scan = scan_dir(root, &IndexConfig::default(), None, &|_, _| false).unwrap();
        let ids: Vec<&str> = scan.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["ok.md"]);
        assert_eq!((scan.files_scanned, scan.skipped), (3, 2));
        let mut warnings = scan.warnings.clone();
        warnings.sort();
        assert_eq!(
            warnings,
            [
                "skipped \"x\\xFE.md\": the file name is not valid UTF-8",
                "skipped \"x\\xFF.md\": the file name is not valid UTF-8"
            ]
        );
    }

    #[test]
    fn beir_keeps_ids_and_names_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\":\"d1\",\"title\":\"T\",\"text\":\"x\"}\n{\"_id\":2,\"text\":\"y\"}\n",
        )
        .unwrap();
        let scan = scan_beir(dir.path()).unwrap();
        assert_eq!(scan.documents[1].id, "2");
        assert_eq!(scan.documents[0].title.as_deref(), Some("T"));
        std::fs::write(dir.path().join("corpus.jsonl"), "{\"_id\":\"d1\"}\nnot json\n").unwrap();
        let err = scan_beir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("corpus.jsonl:2"), "{err}");
    }
}
