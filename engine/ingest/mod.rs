//! Sources of documents: a directory walk (honouring .gitignore, .ignore and hidden-file rules the
//! way ripgrep does, with include/exclude globs, plus `.claude/memory/` although it is hidden) and
//! BEIR corpora (`corpus.jsonl`, one `{"_id","title","text"}` per line, `_id` kept as document id).
//! Binary files, files over the size limit, invalid UTF-8 content and file names that are not
//! UTF-8 (never converted lossily: two such names could merge into one) are skipped with a warning
//! naming the file; nothing here panics on bad input.

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
    Markdown,
    Code,
    Memory,
    Text,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Markdown => "markdown",
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
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Go,
    Java,
    C,
    Cpp,
}

impl Lang {
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
            _ => return None,
        })
    }

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
        }
    }
}

/// Text-like extensions indexed as plain text.
const TEXT_EXTENSIONS: &[&str] =
    &["txt", "rst", "adoc", "org", "toml", "yaml", "yml", "ini", "cfg", "sh", "sql", "html", "css"];

/// One document to index.
#[derive(Debug, Clone)]
pub struct Document {
    /// Stable id: the relative path for files, `_id` for BEIR records.
    pub id: String,
    /// Display path (relative to the indexed root).
    pub path: String,
    pub kind: Kind,
    pub lang: Option<Lang>,
    pub title: Option<String>,
    pub text: String,
    /// Whether `path` names a file (false for records of a collection, whose id is no name).
    pub is_file: bool,
}

impl Document {
    pub fn new(path: &str, kind: Kind, lang: Option<Lang>, text: String) -> Document {
        Document { id: path.to_string(), path: path.to_string(), kind, lang, title: None, text, is_file: true }
    }

    /// A file's document, typed by its name; `None` for types the engine does not index.
    pub fn from_path(path: &str, text: String) -> Option<Document> {
        classify(path).map(|(kind, lang)| Document::new(path, kind, lang, text))
    }

    /// The last path component.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The title chunks get when the content has none: the document's title, else the file name
    /// for files, else nothing (a collection record's id carries no meaning to embed).
    pub fn default_title(&self) -> String {
        match (&self.title, self.is_file) {
            (Some(t), _) => t.clone(),
            (None, true) => self.file_name().to_string(),
            (None, false) => String::new(),
        }
    }

    /// Content hash: what decides whether the document must be re-chunked.
    pub fn hash(&self) -> String {
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
    pub documents: Vec<Document>,
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

/// Walks `root` and reads every indexable file.
pub fn scan_dir(root: &Path, config: &IndexConfig, index_dir: Option<&Path>) -> Result<Scan> {
    if !root.is_dir() {
        return Err(Error::InvalidInput(format!("{} is not a directory", root.display())));
    }
    let include = globset(&config.include, "include")?;
    let exclude = globset(&config.exclude, "exclude")?;
    let index_dir = index_dir.and_then(|d| d.canonicalize().ok());
    let mut scan = Scan::default();
    let mut roots = vec![root.to_path_buf()];
    for extra in &config.hidden_include {
        let p = root.join(extra);
        if p.is_dir() {
            roots.push(p);
        }
    }
    let mut seen = std::collections::HashSet::new();
    for walk_root in &roots {
        let walker =
            ignore::WalkBuilder::new(walk_root).hidden(true).git_ignore(true).ignore(true).require_git(false).build();
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    scan.warnings.push(format!("skipped: {e}"));
                    continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            if let (Some(idx), Ok(canon)) = (&index_dir, path.canonicalize()) {
                if canon.starts_with(idx) {
                    continue;
                }
            }
            let rel_path = path.strip_prefix(root).unwrap_or(path);
            if !seen.insert(rel_path.to_path_buf()) {
                continue;
            }
            scan.files_scanned += 1;
            // A lossy conversion would merge `x\xff.md` and `x\xfe.md` into one `x\u{fffd}.md`.
            let Some(rel) = rel_path.to_str().map(|r| r.replace('\\', "/")) else {
                scan.skipped += 1;
                scan.warnings.push(format!("skipped {rel_path:?}: the file name is not valid UTF-8"));
                continue;
            };
            if include.as_ref().is_some_and(|g| !g.is_match(&rel)) || exclude.as_ref().is_some_and(|g| g.is_match(&rel))
            {
                scan.skipped += 1;
                continue;
            }
            let Some((kind, lang)) = classify(&rel) else {
                scan.skipped += 1;
                continue;
            };
            match read_text(path, config.max_file_size) {
                Ok(text) => {
                    if kind == Kind::Memory && crate::chunk::memory::parse(&text).is_none() {
                        // JSON that is not memory records (package.json, tokenizer files…).
                        scan.skipped += 1;
                        continue;
                    }
                    scan.documents.push(Document::new(&rel, kind, lang, text));
                }
                Err(why) => {
                    scan.skipped += 1;
                    scan.warnings.push(format!("skipped {rel}: {why}"));
                }
            }
        }
    }
    scan.documents.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(scan)
}

/// Reads a file as UTF-8 text, or says why not.
fn read_text(path: &Path, max: u64) -> std::result::Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > max {
        return Err(format!("{} bytes is over the {max}-byte limit ([index] max_file_size)", meta.len()));
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
        let title = d.title.filter(|t| !t.trim().is_empty());
        scan.documents.push(Document {
            id: id.clone(),
            path: id,
            kind: Kind::Text,
            lang: None,
            title,
            text: d.text,
            is_file: false,
        });
    }
    Ok(scan)
}

/// Scans a source.
pub fn scan(source: &Source, config: &IndexConfig, index_dir: Option<&Path>) -> Result<Scan> {
    match source {
        Source::Dir(root) => scan_dir(root, config, index_dir),
        Source::Beir(dir) => scan_beir(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let scan = scan_dir(root, &config, None).unwrap();
        let ids: Vec<&str> = scan.documents.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, [".claude/memory/m.json", "a.md", "b.rs"]);
        assert_eq!(scan.documents[0].kind, Kind::Memory);
        assert_eq!(scan.documents[2].lang, Some(Lang::Rust));
        let w = scan.warnings.join("\n");
        assert!(w.contains("blob.txt: binary"), "{w}");
        assert!(w.contains("bad.txt: invalid UTF-8"), "{w}");
        assert!(w.contains("big.txt: 2000 bytes"), "{w}");
        let config = IndexConfig { exclude: vec!["*.rs".into()], ..IndexConfig::default() };
        let scan = scan_dir(root, &config, None).unwrap();
        assert!(!scan.documents.iter().any(|d| d.id == "b.rs"));
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
        let scan = scan_dir(root, &IndexConfig::default(), None).unwrap();
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
