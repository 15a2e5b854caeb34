//! Project memory as files: one JSON record per file under `.claude/memory/`, readable and
//! reviewable in git, written atomically. Records written by hand (`{"title","category","tags",
//! "content"}`, one per file, an array or JSON lines) load too; the engine's own records add an
//! id, the files and session they came from, timestamps, a content hash and the ids they
//! supersede. Capture ([`crate::memory::capture`]), `engine memory` and the hook's session digest all go
//! through [`MemoryStore`].

use crate::error::{Error, Result};
use crate::files::atomic::write_atomic;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Where a project's memory records live, relative to its root.
pub const DIR: &str = ".claude/memory";

/// Categories the engine writes itself. Records written by hand may use any other.
pub mod category {
    /// What a session asked, changed, ran and left open.
    pub const SESSION: &str = "session";
    /// The summary Claude Code wrote when it compacted a session.
    pub const SUMMARY: &str = "summary";
    /// A choice and its reason.
    pub const DECISION: &str = "decision";
    /// A rule the project follows.
    pub const CONVENTION: &str = "convention";
    /// An error and the change that made it go away.
    pub const BUGFIX: &str = "bugfix";
    /// The names a session's edits brought in, by file.
    pub const CHANGES: &str = "changes";
    /// A task the session worked from, as the project's issue tracker showed it.
    pub const TASK: &str = "task";
    /// A note: what the assistant found out and explained during a session, or one added with
    /// `engine memory add` without a category.
    pub const NOTE: &str = "note";

    /// What captured notes were called until 2026-11: read as [`NOTE`] wherever a category is
    /// read, so records already written and configs naming it keep working.
    const NOTES_BEFORE: &str = "notes";

    /// The one name of a category: `notes` is [`NOTE`], every other name is itself.
    pub fn canonical(category: &str) -> &str {
        if category.eq_ignore_ascii_case(NOTES_BEFORE) {
            NOTE
        } else {
            category
        }
    }

    /// Whether two category names (a record's, a config's or a filter's) name the same category.
    pub fn same(a: &str, b: &str) -> bool {
        canonical(a).eq_ignore_ascii_case(canonical(b))
    }
}

/// One memory record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// Stable id (12 hex digits); a record written by hand gets one derived from its file.
    #[serde(default)]
    pub id: String,
    /// `session`, `summary`, `decision`, `convention`, `bugfix`, `note` or one of the user's own.
    #[serde(default)]
    pub category: String,
    /// One line saying what the record is about.
    #[serde(default)]
    pub title: String,
    /// The record itself.
    #[serde(default, alias = "text", alias = "body")]
    pub content: String,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Project files the record is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The Claude Code session it was captured from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// What wrote it: `PreCompact`, `SessionEnd`, `manual`, `import`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// When what it records happened (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub created: String,
    /// When the record was last written.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub updated: String,
    /// [`content_hash`] of category, title and content: equal hashes are the same record.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hash: String,
    /// Ids of older records this one replaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    /// Where the content was quoted from when the session's user did not write it (an issue
    /// tracker's view of a task: `issue 42 via gh, by mallory`): the context block shows it as
    /// quoted material from there, data rather than instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quoted: Option<String>,
}

impl MemoryRecord {
    /// A record with its hash and an id derived from `id_seed` (or, when empty, the hash), created
    /// now.
    pub fn new(category: &str, title: &str, content: &str, id_seed: &str) -> MemoryRecord {
        let now = now_rfc3339();
        let mut r = MemoryRecord {
            id: String::new(),
            category: category.to_string(),
            title: title.to_string(),
            content: content.to_string(),
            tags: Vec::new(),
            files: Vec::new(),
            session_id: None,
            source: String::new(),
            created: now.clone(),
            updated: now,
            hash: String::new(),
            supersedes: Vec::new(),
            quoted: None,
        };
        r.seal();
        r.id = if id_seed.is_empty() { r.hash[..12].to_string() } else { short_hash(id_seed) };
        r
    }

    /// Redacts secrets from every text field, gives the category its one name
    /// ([`category::canonical`]) and recomputes the hash. Runs on whole strings, before anything
    /// cuts them, and before the record reaches disk.
    pub fn seal(&mut self) {
        let clean = |s: &mut String| {
            if let std::borrow::Cow::Owned(r) = crate::secrets::redacted(s) {
                *s = r;
            }
        };
        if self.category != category::canonical(&self.category) {
            self.category = category::canonical(&self.category).to_string();
        }
        clean(&mut self.title);
        clean(&mut self.content);
        self.tags.iter_mut().for_each(clean);
        self.files.iter_mut().for_each(clean);
        self.quoted.iter_mut().for_each(clean);
        self.hash = content_hash(&self.category, &self.title, &self.content);
    }

    /// `title` and `content` joined, as a near-duplicate check compares them.
    fn words(&self) -> HashSet<String> {
        words(&format!("{} {}", self.title, self.content))
    }
}

/// Hash of a record's meaning: whitespace runs and letter case do not count.
pub fn content_hash(category: &str, title: &str, content: &str) -> String {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    let mut h = Sha256::new();
    for part in [norm(category), norm(title), norm(content)] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

fn short_hash(seed: &str) -> String {
    hex::encode(&Sha256::digest(seed.as_bytes())[..6])
}

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2).map(str::to_lowercase).collect()
}

/// A record as found on disk.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The file holding it.
    pub path: PathBuf,
    /// Its position in that file (0 for a file of one record).
    pub position: usize,
    /// How many records the file holds.
    pub in_file: usize,
    /// The record.
    pub record: MemoryRecord,
}

/// What [`MemoryStore::add`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Added {
    /// A new file.
    Written(PathBuf),
    /// The record with this id changed and its file was rewritten.
    Updated(PathBuf),
    /// A record with the same id and content, or the same content under another id, exists:
    /// nothing written.
    Unchanged(String),
}

/// The store's writer lock, held while it is alive.
struct WriteLock {
    _dir: std::fs::File,
}

/// The memory directory of one project.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    dir: PathBuf,
}

impl MemoryStore {
    /// The store of the project at `root` (`root/.claude/memory`; created on the first write).
    pub fn at_root(root: &Path) -> MemoryStore {
        MemoryStore { dir: root.join(DIR) }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every record in the directory, by file name then position. Files that are not records are
    /// skipped; a hand-written record gets an id from its file name and position, a hash, and its
    /// file's modification time as `created`.
    pub fn load(&self) -> Result<Vec<Stored>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(format!("reading {}", self.dir.display()), e)),
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "jsonl")))
            .collect();
        paths.sort();
        let mut out = Vec::new();
        for path in paths {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok().map(rfc3339);
            for mut s in stored_in(&path, &text) {
                if s.record.created.is_empty() {
                    s.record.created = modified.clone().unwrap_or_default();
                }
                out.push(s);
            }
        }
        Ok(out)
    }

    /// Writes `record` (sealed first: secrets redacted, hash computed) unless the same content is
    /// already stored. A record whose id exists is replaced in place, keeping its `created`.
    pub fn add(&self, record: MemoryRecord) -> Result<Added> {
        Ok(self.add_all(vec![record])?.remove(0))
    }

    /// [`add`](Self::add) for several records, reading the directory once, under the store's
    /// writer lock: concurrent writers (captures, imports, the MCP server) see each other's
    /// records, so an id is stored once.
    pub fn add_all(&self, records: Vec<MemoryRecord>) -> Result<Vec<Added>> {
        let _lock = self.lock()?;
        let mut existing = self.load()?;
        let mut out = Vec::with_capacity(records.len());
        for mut record in records {
            record.seal();
            validate(&record)?;
            if let Some(s) = existing.iter_mut().find(|s| s.record.id == record.id) {
                if s.record.hash == record.hash && s.record.files == record.files && s.record.tags == record.tags {
                    out.push(Added::Unchanged(record.id));
                    continue;
                }
                record.created = s.record.created.clone();
                self.rewrite(s, Some(&record))?;
                s.record = record;
                out.push(Added::Updated(s.path.clone()));
                continue;
            }
            if let Some(s) = existing.iter().find(|s| s.record.hash == record.hash) {
                out.push(Added::Unchanged(s.record.id.clone()));
                continue;
            }
            let path = self.dir.join(file_name(&record));
            write_atomic(&path, &to_file(&record))?;
            existing.push(Stored { path: path.clone(), position: 0, in_file: 1, record });
            out.push(Added::Written(path));
        }
        Ok(out)
    }

    /// The record with this id (or the only one whose id starts with it).
    pub fn find(&self, id: &str) -> Result<Stored> {
        let all = self.load()?;
        if let Some(s) = all.iter().find(|s| s.record.id == id) {
            return Ok(s.clone());
        }
        let matches: Vec<&Stored> = all.iter().filter(|s| !id.is_empty() && s.record.id.starts_with(id)).collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(Error::InvalidInput(format!("no memory record with id {id} in {}", self.dir.display()))),
            many => Err(Error::InvalidInput(format!(
                "id {id} is ambiguous: {} records start with it ({})",
                many.len(),
                many.iter().map(|s| s.record.id.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// Removes a record: its file, or its entry in a file of several.
    pub fn delete(&self, stored: &Stored) -> Result<()> {
        let _lock = self.lock()?;
        self.rewrite(stored, None)
    }

    /// Removes several records (as [`load`](Self::load) returned them), each file rewritten once
    /// and removed when none of its records is left.
    pub fn delete_all(&self, stored: &[Stored]) -> Result<()> {
        let _lock = self.lock()?;
        let mut by_file: std::collections::BTreeMap<&Path, Vec<&Stored>> = Default::default();
        for s in stored {
            by_file.entry(s.path.as_path()).or_default().push(s);
        }
        for (path, group) in by_file {
            let positions: HashSet<usize> = group.iter().map(|s| s.position).collect();
            let in_file = group[0].in_file;
            if in_file <= 1 || (0..in_file).all(|p| positions.contains(&p)) {
                std::fs::remove_file(path).map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
                continue;
            }
            let mut values = read_values(path, in_file)?;
            let mut drop: Vec<usize> = positions.into_iter().collect();
            drop.sort_unstable_by(|a, b| b.cmp(a));
            for p in drop {
                values.remove(p);
            }
            write_values(path, &values)?;
        }
        Ok(())
    }

    /// Writes `record` over the stored one, in its file and position, whatever changed (unlike
    /// [`add`](Self::add), which leaves a record whose hash, files and tags are unchanged alone).
    /// The record is sealed and validated first; returns it as written, and the file now holding
    /// it: a file of its own named by the store after its category and title is renamed to follow
    /// them ([`MemoryStore::follow_title`]).
    pub fn replace(&self, stored: &Stored, mut record: MemoryRecord) -> Result<(MemoryRecord, PathBuf)> {
        record.seal();
        validate(&record)?;
        let _lock = self.lock()?;
        self.rewrite(stored, Some(&record))?;
        let path = self.follow_title(stored, &record)?;
        Ok((record, path))
    }

    /// Renames the file of a record the store named (`category-title-id.json`, one record in it)
    /// to the name its category and title give now; returns where it is. The rename never
    /// replaces another file (a name taken keeps the old one) and is one step, so the record is
    /// under one name or the other, never both or neither.
    fn follow_title(&self, stored: &Stored, record: &MemoryRecord) -> Result<PathBuf> {
        let ours = stored
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(&format!("-{}.json", record.id)));
        let wanted = self.dir.join(file_name(record));
        if stored.in_file > 1 || !ours || wanted == stored.path {
            return Ok(stored.path.clone());
        }
        match crate::files::atomic::rename_no_clobber(&stored.path, &wanted) {
            Ok(true) => Ok(wanted),
            Ok(false) => Ok(stored.path.clone()),
            Err(e) => Err(Error::io(format!("renaming {} to {}", stored.path.display(), wanted.display()), e)),
        }
    }

    /// Takes the store's writer lock (an exclusive `flock` on the memory directory itself, so no
    /// lock file sits among the records), waiting for another writer to finish; the directory is
    /// created if missing. Temporary files left by a writer that was killed mid-write go: while the
    /// lock is held no other writer has one open.
    fn lock(&self) -> Result<WriteLock> {
        use std::os::unix::io::AsRawFd;
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(format!("creating {}", self.dir.display()), e))?;
        let dir =
            std::fs::File::open(&self.dir).map_err(|e| Error::io(format!("opening {}", self.dir.display()), e))?;
        // SAFETY: flock on a descriptor we own; it waits, and is released when the file closes.
        if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::io(format!("locking {}", self.dir.display()), e));
        }
        for entry in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().ends_with(".tmp") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(WriteLock { _dir: dir })
    }

    /// Replaces (or with `None` removes) one stored record, leaving the file's other records.
    fn rewrite(&self, stored: &Stored, with: Option<&MemoryRecord>) -> Result<()> {
        if stored.in_file <= 1 {
            return match with {
                Some(r) => write_atomic(&stored.path, &to_file(r)),
                None => std::fs::remove_file(&stored.path)
                    .map_err(|e| Error::io(format!("removing {}", stored.path.display()), e)),
            };
        }
        let mut values = read_values(&stored.path, stored.position + 1)?;
        match with {
            Some(r) => values[stored.position] = serde_json::to_value(r).expect("a record serializes"),
            None => {
                values.remove(stored.position);
            }
        }
        write_values(&stored.path, &values)
    }
}

/// The JSON values of a file of several records (an array or JSON lines); an error when it holds
/// fewer than `at_least` (it changed since it was loaded).
fn read_values(path: &Path, at_least: usize) -> Result<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    let values: Vec<serde_json::Value> = if let Ok(v) = serde_json::from_str(&text) {
        v
    } else {
        text.lines().filter(|l| !l.trim().is_empty()).filter_map(|l| serde_json::from_str(l).ok()).collect()
    };
    if values.len() < at_least {
        return Err(Error::InvalidInput(format!("{} changed while it was read", path.display())));
    }
    Ok(values)
}

/// Writes a file of several records back in its form: JSON lines for `.jsonl`, else an array.
fn write_values(path: &Path, values: &[serde_json::Value]) -> Result<()> {
    let bytes = if path.extension().is_some_and(|e| e == "jsonl") {
        values.iter().map(|v| format!("{v}\n")).collect::<String>().into_bytes()
    } else {
        let mut t = serde_json::to_string_pretty(&values).expect("values serialize");
        t.push('\n');
        t.into_bytes()
    };
    write_atomic(path, &bytes)
}

/// Refuses a `what` (title, content…) that is mostly secret-looking (by non-whitespace bytes):
/// `engine memory add`, edit, import and the MCP `remember` tool refuse such a record rather than
/// store a redaction marker. The error names the kinds of secret, never the secret.
pub fn refuse_secret(what: &str, text: &str) -> Result<()> {
    if !crate::secrets::mostly_secret(text) {
        return Ok(());
    }
    Err(Error::InvalidInput(format!("the {what} is mostly a secret ({})", crate::secrets::kinds(text).join(", "))))
}

fn to_file(record: &MemoryRecord) -> Vec<u8> {
    let mut t = serde_json::to_string_pretty(record).expect("a record serializes");
    t.push('\n');
    t.into_bytes()
}

/// The records of the file `path` holding `text` (none when it is not records). A record written
/// by hand gets an id from the file's name and its position, and its hash.
fn stored_in(path: &Path, text: &str) -> Vec<Stored> {
    let records = parse(text).unwrap_or_default();
    let n = records.len();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stored = records.into_iter().enumerate().map(|(position, mut record)| {
        if record.id.is_empty() {
            record.id = short_hash(&format!("{name}#{position}"));
        }
        // A record captured before categories had one name is read under the one it has now.
        let renamed = record.category != category::canonical(&record.category);
        if renamed {
            record.category = category::canonical(&record.category).to_string();
        }
        if record.hash.is_empty() || renamed {
            record.hash = content_hash(&record.category, &record.title, &record.content);
        }
        Stored { path: path.to_path_buf(), position, in_file: n, record }
    });
    stored.collect()
}

/// A file's records, in the forms [`crate::memory::record::parse`] accepts; `None` when it holds none.
fn parse(text: &str) -> Option<Vec<MemoryRecord>> {
    crate::memory::record::parse_as(text, |r: &MemoryRecord| !r.content.is_empty() || !r.title.is_empty())
}

/// The largest record fields accepted: a record is a note a prompt's context quotes from, and a
/// larger one would be skipped by the indexer ([index] max_file_size) and never found.
pub mod limits {
    /// Characters of an id.
    pub const ID: usize = 64;
    /// Characters of a title.
    pub const TITLE: usize = 1_000;
    /// Characters of the content.
    pub const CONTENT: usize = 200_000;
    /// Characters of a category.
    pub const CATEGORY: usize = 40;
    /// Tags, and characters of each.
    pub const TAGS: usize = 64;
    /// Characters of a tag.
    pub const TAG: usize = 100;
    /// Files a record names.
    pub const FILES: usize = 512;
}

/// Checks what `engine memory add` and import accept.
pub fn validate(record: &MemoryRecord) -> Result<()> {
    if record.title.trim().is_empty() {
        return Err(Error::InvalidInput("a memory record needs a title".into()));
    }
    if record.content.trim().is_empty() {
        return Err(Error::InvalidInput(format!("memory record \"{}\" has no content", record.title)));
    }
    let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok(&record.category) || record.category.len() > limits::CATEGORY {
        return Err(Error::InvalidInput(format!(
            "category \"{}\" should be up to {} lowercase letters, digits and '-' (e.g. decision, convention, note)",
            record.category.chars().take(limits::CATEGORY).collect::<String>(),
            limits::CATEGORY
        )));
    }
    if !record.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') || record.id.is_empty() {
        let shown: String = record.id.chars().take(limits::ID).collect();
        return Err(Error::InvalidInput(format!("record id \"{shown}\" should be letters, digits and '-'")));
    }
    let too_long = |what: &str, n: usize, max: usize| {
        (n > max).then(|| Error::InvalidInput(format!("the {what} has {n} characters: at most {max}")))
    };
    let checks = [
        too_long("id", record.id.chars().count(), limits::ID),
        too_long("title", record.title.chars().count(), limits::TITLE),
        too_long("content", record.content.chars().count(), limits::CONTENT),
        (record.tags.len() > limits::TAGS)
            .then(|| Error::InvalidInput(format!("{} tags: at most {}", record.tags.len(), limits::TAGS))),
        record.tags.iter().find_map(|t| too_long("tag", t.chars().count(), limits::TAG)),
        (record.files.len() > limits::FILES)
            .then(|| Error::InvalidInput(format!("{} files: at most {}", record.files.len(), limits::FILES))),
    ];
    match checks.into_iter().flatten().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The name of a record's own file: `category-title-id.json`, so a listing reads as the records.
fn file_name(record: &MemoryRecord) -> String {
    format!("{}-{}-{}.json", slug(&record.category, 20), slug(&record.title, 48), record.id)
}

/// A file-name-safe lowercase slug of `text`, at most `max` characters.
fn slug(text: &str, max: usize) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
        if s.len() >= max {
            break;
        }
    }
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() {
        "record".into()
    } else {
        s
    }
}

/// Ids of records another record replaces: those it names in `supersedes`, and older records of
/// the same category and the same title (case and spacing aside).
pub fn superseded(records: &[Stored]) -> HashSet<String> {
    let mut out: HashSet<String> = records.iter().flat_map(|s| s.record.supersedes.iter().cloned()).collect();
    let mut newest: HashMap<(String, String), &MemoryRecord> = HashMap::new();
    for s in records {
        let r = &s.record;
        let key = (r.category.to_lowercase(), r.title.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase());
        match newest.get(&key) {
            Some(n) if (n.created.as_str(), n.id.as_str()) >= (r.created.as_str(), r.id.as_str()) => {
                out.insert(r.id.clone());
            }
            Some(n) => {
                out.insert(n.id.clone());
                newest.insert(key, r);
            }
            None => {
                newest.insert(key, r);
            }
        }
    }
    out
}

/// When a memory record was created: (document id, record title, category, seconds since the
/// epoch).
pub type CreatedAt = (String, String, String, i64);

/// What search needs to know of the memory documents given as (document id, text), read in one
/// pass: the superseded records as (document id, record title), for search to rank below what
/// replaces them; and when each record was created as (document id, record title, category,
/// seconds since the epoch), for records whose `created` parses, for recency decay.
pub(crate) fn ranking_facts<'a>(
    docs: impl Iterator<Item = (&'a str, &'a str)>,
) -> (Vec<(String, String)>, Vec<CreatedAt>) {
    let all: Vec<Stored> = docs.flat_map(|(doc, text)| stored_in(Path::new(doc), text)).collect();
    let gone = superseded(&all);
    let doc = |s: &Stored| s.path.to_string_lossy().into_owned();
    let mut superseded: Vec<(String, String)> =
        all.iter().filter(|s| gone.contains(&s.record.id)).map(|s| (doc(s), s.record.title.clone())).collect();
    let mut created: Vec<CreatedAt> = all
        .iter()
        .filter_map(|s| {
            Some((doc(s), s.record.title.clone(), s.record.category.clone(), parse_time(&s.record.created)?))
        })
        .collect();
    superseded.sort();
    superseded.dedup();
    created.sort();
    created.dedup();
    (superseded, created)
}

/// Groups of near-duplicate records (same category, word overlap ≥ `threshold` Jaccard), each
/// group's newest first. Each record not yet grouped leads a group of the later records close to
/// it. Pairs are found through the rarest words of each record (a prefix filter: two sets with a
/// Jaccard of at least `threshold` share one of their `|x| − ⌈threshold·|x|⌉ + 1` rarest words),
/// so thousands of records take milliseconds, not a comparison of every pair.
pub fn near_duplicates(records: &[Stored], threshold: f32) -> Vec<Vec<String>> {
    let sets = word_ids(records);
    // The same sets by id, for intersections by merging.
    let by_id: Vec<Vec<u32>> = sets
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.sort_unstable();
            s
        })
        .collect();
    let prefix = |i: usize| {
        let n = sets[i].len();
        let keep = if threshold > 0.0 { n + 1 - ((threshold * n as f32).ceil() as usize).min(n) } else { n };
        &sets[i][..keep.min(n)]
    };
    let mut postings: HashMap<u32, Vec<usize>> = HashMap::new();
    for i in 0..records.len() {
        for &w in prefix(i) {
            postings.entry(w).or_default().push(i);
        }
    }
    let mut taken = vec![false; records.len()];
    let mut groups = Vec::new();
    for i in 0..records.len() {
        if taken[i] {
            continue;
        }
        let mut candidates: Vec<usize> = if threshold > 0.0 {
            prefix(i).iter().flat_map(|w| postings[w].iter().copied()).filter(|&j| j > i).collect()
        } else {
            (i + 1..records.len()).collect()
        };
        candidates.sort_unstable();
        candidates.dedup();
        let mut group = vec![i];
        for j in candidates {
            if taken[j] || records[i].record.category != records[j].record.category {
                continue;
            }
            if jaccard(&by_id[i], &by_id[j]) >= threshold {
                group.push(j);
                taken[j] = true;
            }
        }
        if group.len() > 1 {
            group.sort_by(|&a, &b| records[b].record.created.cmp(&records[a].record.created));
            groups.push(group.into_iter().map(|k| records[k].record.id.clone()).collect());
        }
    }
    groups
}

/// Each record's distinct words as ids, ordered rarest first (across the records), then by id.
fn word_ids(records: &[Stored]) -> Vec<Vec<u32>> {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let sets: Vec<Vec<u32>> = records
        .iter()
        .map(|s| {
            s.record
                .words()
                .into_iter()
                .map(|w| {
                    let next = ids.len() as u32;
                    *ids.entry(w).or_insert(next)
                })
                .collect()
        })
        .collect();
    let mut df = vec![0u32; ids.len()];
    sets.iter().flatten().for_each(|&w| df[w as usize] += 1);
    sets.into_iter()
        .map(|mut set| {
            set.sort_unstable_by_key(|&w| (df[w as usize], w));
            set
        })
        .collect()
}

/// |a ∩ b| / |a ∪ b| of two sets of word ids, each sorted (an empty union counts as 1).
fn jaccard(a: &[u32], b: &[u32]) -> f32 {
    let (mut i, mut j, mut inter) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = (a.len() + b.len() - inter).max(1);
    inter as f32 / union as f32
}

/// Groups of records with equal hashes, each newest first.
pub fn exact_duplicates(records: &[Stored]) -> Vec<Vec<&Stored>> {
    let mut by_hash: BTreeMap<&str, Vec<&Stored>> = BTreeMap::new();
    for s in records {
        by_hash.entry(s.record.hash.as_str()).or_default().push(s);
    }
    let mut groups: Vec<Vec<&Stored>> = by_hash.into_values().filter(|g| g.len() > 1).collect();
    for g in &mut groups {
        g.sort_by(|a, b| {
            parse_time(&b.record.created)
                .cmp(&parse_time(&a.record.created))
                .then_with(|| b.record.id.cmp(&a.record.id))
        });
    }
    groups
}

/// What gc would delete, each record once with the first reason found: exact duplicates, near
/// duplicates (each group's newest kept), superseded records, then records past their category's
/// age (`now`: seconds since the epoch). `engine memory gc` deletes them with `--apply`.
pub fn gc_plan(all: &[Stored], config: &crate::config::MemoryConfig, now: i64) -> Vec<(Stored, String)> {
    let mut plan: Vec<(Stored, String)> = Vec::new();
    let mut planned: HashSet<String> = HashSet::new();
    let mut take = |s: &Stored, why: String, plan: &mut Vec<(Stored, String)>| {
        if planned.insert(s.record.id.clone()) {
            plan.push((s.clone(), why));
        }
    };
    for group in exact_duplicates(all) {
        for s in &group[1..] {
            take(s, format!("exact duplicate of {}", group[0].record.id), &mut plan);
        }
    }
    let left: Vec<Stored> =
        all.iter().filter(|s| !plan.iter().any(|(p, _)| p.record.id == s.record.id)).cloned().collect();
    let by_id: HashMap<&str, &Stored> = left.iter().map(|s| (s.record.id.as_str(), s)).collect();
    for group in near_duplicates(&left, config.near_duplicate) {
        for id in &group[1..] {
            if let Some(s) = by_id.get(id.as_str()) {
                take(s, format!("near duplicate of {}", group[0]), &mut plan);
            }
        }
    }
    let superseded = superseded(all);
    for s in all.iter().filter(|s| superseded.contains(&s.record.id)) {
        let by = all.iter().find(|o| o.record.supersedes.contains(&s.record.id));
        let why = match by {
            Some(o) => format!("superseded by {}", o.record.id),
            None => "superseded by a newer record of the same category and title".to_string(),
        };
        take(s, why, &mut plan);
    }
    for s in all {
        let (days, key) = match s.record.category.as_str() {
            category::SESSION => (config.session_max_age_days, "session_max_age_days"),
            category::BUGFIX => (config.bugfix_max_age_days, "bugfix_max_age_days"),
            _ => continue,
        };
        let Some(created) = parse_time(&s.record.created) else { continue };
        if days > 0 && now - created > days as i64 * 86_400 {
            let why = format!(
                "{} record older than {days} days (created {}; [memory] {key})",
                s.record.category,
                s.record.created.get(..10).unwrap_or(&s.record.created)
            );
            take(s, why, &mut plan);
        }
    }
    plan
}

/// The time now as RFC 3339 UTC, to the second (`2026-11-24T09:48:00Z`).
pub fn now_rfc3339() -> String {
    rfc3339(std::time::SystemTime::now())
}

/// `t` as RFC 3339 UTC, to the second.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since the epoch (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Seconds since the epoch of an RFC 3339 time (`2026-01-05T10:00:00.000Z`, offsets honoured), or
/// of a bare date (`2026-01-05`, midnight UTC).
pub fn parse_time(text: &str) -> Option<i64> {
    let t = text.trim();
    let num = |s: &str| s.parse::<i64>().ok();
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, rest)) => (d, Some(rest)),
        None => (t, None),
    };
    let mut d = date.split('-');
    let (y, m, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let (y2, m2) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * m2 + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let mut secs = days * 86_400;
    if let Some(rest) = time {
        let (clock, offset) = match rest.find(['Z', 'z', '+', '-']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let mut c = clock.split(':');
        let h = num(c.next()?)?;
        let min = c.next().map_or(Some(0), num)?;
        let s = c.next().map_or(Some(0), |s| num(s.split('.').next().unwrap_or("0")))?;
        secs += h * 3600 + min * 60 + s;
        if let Some(sign @ ('+' | '-')) = offset.chars().next() {
            let mut o = offset[1..].split(':');
            let (oh, om) = (num(o.next()?)?, o.next().map_or(Some(0), num)?);
            let off = oh * 3600 + om * 60;
            secs -= if sign == '+' { off } else { -off };
        }
    }
    Some(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_and_offsets_count() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_003_200);
        let s = rfc3339(t);
        assert_eq!(s, "2026-11-18T12:00:00Z");
        assert_eq!(parse_time(&s), Some(1_795_003_200));
        assert_eq!(parse_time("2026-11-18T13:00:00.250+01:00"), Some(1_795_003_200));
        assert_eq!(parse_time("2026-11-18"), Some(1_795_003_200 - 12 * 3600));
        assert_eq!(parse_time("2024-02-29T00:00:00Z"), Some(1_709_164_800));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(parse_time("2026-13-01"), None);
    }

    #[test]
    fn the_same_content_is_written_once_and_an_id_is_updated_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::at_root(dir.path());
        let a = MemoryRecord::new("decision", "Use Redis for sessions", "Because restarts lost them.", "");
        let Added::Written(path) = store.add(a.clone()).unwrap() else { panic!("first add writes") };
        assert!(path.file_name().unwrap().to_str().unwrap().starts_with("decision-use-redis-for-sessions-"));
        // Same meaning, other spacing and case, other id: nothing new.
        let mut b = MemoryRecord::new("decision", "use redis  for sessions", "because restarts lost them.", "x");
        b.tags.push("t".into());
        assert_eq!(store.add(b).unwrap(), Added::Unchanged(a.id.clone()));
        let mut changed = a.clone();
        changed.content = "Because restarts lost them; TTL 30 days.".into();
        assert_eq!(store.add(changed).unwrap(), Added::Updated(path.clone()));
        let all = store.load().unwrap();
        assert_eq!(all.len(), 1);
        assert!(all[0].record.content.contains("TTL"));
        store.delete(&all[0]).unwrap();
        assert!(store.load().unwrap().is_empty());
    }

    #[test]
    fn secrets_never_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::at_root(dir.path());
        let token = format!("ghp_{}", "a1B2".repeat(10));
        let r = MemoryRecord::new("note", "Deploy token", &format!("The CI uses {token} to push."), "");
        let Added::Written(path) = store.add(r).unwrap() else { panic!() };
        let text = std::fs::read_to_string(path).unwrap();
        assert!(!text.contains(&token), "{text}");
        assert!(text.contains("to push"));
    }

    #[test]
    fn hand_written_files_load_and_one_record_of_several_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::at_root(dir.path());
        std::fs::create_dir_all(store.dir()).unwrap();
        std::fs::write(store.dir().join("a.json"), r#"[{"title":"one","content":"x"},{"title":"two","content":"y"}]"#)
            .unwrap();
        std::fs::write(store.dir().join("package.json"), r#"{"name":"p"}"#).unwrap();
        let all = store.load().unwrap();
        assert_eq!(all.len(), 2);
        assert_ne!(all[0].record.id, all[1].record.id);
        assert!(!all[0].record.created.is_empty(), "the file's time stands in");
        store.delete(&all[0]).unwrap();
        let left = store.load().unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].record.title, "two");
        assert!(store.find("zzzz").unwrap_err().to_string().contains("no memory record"));
    }

    #[test]
    fn several_records_go_at_once_and_a_file_left_empty_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::at_root(dir.path());
        std::fs::create_dir_all(store.dir()).unwrap();
        let lines = [
            r#"{"title":"one","content":"x"}"#,
            r#"{"title":"two","content":"y"}"#,
            r#"{"title":"three","content":"z"}"#,
        ];
        std::fs::write(store.dir().join("a.jsonl"), lines.join("\n")).unwrap();
        std::fs::write(
            store.dir().join("b.json"),
            r#"[{"title":"four","content":"w"},{"title":"five","content":"v"}]"#,
        )
        .unwrap();
        store.add(MemoryRecord::new("note", "six", "u", "")).unwrap();
        let all = store.load().unwrap();
        assert_eq!(all.len(), 6);
        let pick = |titles: &[&str]| -> Vec<Stored> {
            all.iter().filter(|s| titles.contains(&s.record.title.as_str())).cloned().collect()
        };
        store.delete_all(&pick(&["one", "three", "four", "five", "six"])).unwrap();
        let left = store.load().unwrap();
        assert_eq!(left.iter().map(|s| s.record.title.as_str()).collect::<Vec<_>>(), ["two"]);
        assert!(!store.dir().join("b.json").exists(), "no record left: the file goes");
        assert_eq!(
            std::fs::read_to_string(store.dir().join("a.jsonl")).unwrap().lines().count(),
            1,
            "still JSON lines"
        );
    }

    #[test]
    fn replace_writes_whatever_changed_in_place_and_validates_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::at_root(dir.path());
        let Added::Written(path) = store.add(MemoryRecord::new("note", "Queue", "Jobs go to SQS.", "")).unwrap() else {
            panic!()
        };
        let stored = store.load().unwrap().remove(0);
        let mut r = stored.record.clone();
        r.supersedes.push("abc".into());
        let token = format!("ghp_{}", "a1B2".repeat(10));
        r.content = format!("Jobs go to SQS; the token was {token}.");
        let (written, kept) = store.replace(&stored, r).unwrap();
        assert_eq!(kept, path, "same title, same file");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&token) && text.contains("\"abc\""), "{text}");
        assert_eq!(written.hash, content_hash("note", "Queue", &written.content));
        let mut bad = written.clone();
        bad.category = "Not A Category".into();
        assert!(store.replace(&store.load().unwrap()[0], bad).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "a refused record changes nothing");
    }

    #[test]
    fn a_new_title_renames_the_file_without_replacing_another() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::at_root(dir.path());
        let Added::Written(old) = store.add(MemoryRecord::new("note", "Queue", "Jobs go to SQS.", "")).unwrap() else {
            panic!()
        };
        let stored = store.load().unwrap().remove(0);
        let mut r = stored.record.clone();
        r.title = "Job queue on SQS".into();
        let (_, new) = store.replace(&stored, r).unwrap();
        assert_eq!(
            new.file_name().unwrap().to_str().unwrap(),
            format!("note-job-queue-on-sqs-{}.json", stored.record.id)
        );
        assert!(!old.exists() && new.is_file());
        let names = |d: &Path| std::fs::read_dir(d).unwrap().count();
        assert_eq!(names(store.dir()), 1);
        // The name the next title wants is taken (by a file of someone else's): the record keeps
        // its name, and the other file is untouched.
        let stored = store.load().unwrap().remove(0);
        let taken = store.dir().join(format!("note-mine-{}.json", stored.record.id));
        std::fs::write(&taken, "not a record of ours").unwrap();
        let mut r = stored.record.clone();
        r.title = "Mine".into();
        let (written, at) = store.replace(&stored, r).unwrap();
        assert_eq!((at, written.title.as_str()), (new.clone(), "Mine"));
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "not a record of ours");
        // A file named by hand keeps its name.
        std::fs::remove_file(&taken).unwrap();
        let mine = store.dir().join("my-notes.json");
        std::fs::rename(&new, &mine).unwrap();
        let stored = store.load().unwrap().remove(0);
        let mut r = stored.record.clone();
        r.title = "Another".into();
        assert_eq!(store.replace(&stored, r).unwrap().1, mine);
    }

    #[test]
    fn notes_captured_under_the_old_name_are_read_as_note() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::at_root(dir.path());
        std::fs::create_dir_all(store.dir()).unwrap();
        let old = r#"{"id":"0123456789ab","category":"notes","title":"How capture works","content":"It reads the transcript.","hash":"x"}"#;
        std::fs::write(store.dir().join("notes-how-capture-works-0123456789ab.json"), old).unwrap();
        let r = store.load().unwrap().remove(0).record;
        assert_eq!(r.category, "note");
        assert_eq!(r.hash, content_hash("note", &r.title, &r.content), "the hash follows the name");
        assert!(category::same("notes", "Note") && !category::same("note", "decision"));
        let parsed = crate::memory::record::parse(old).unwrap();
        assert_eq!(parsed[0].category.as_deref(), Some("note"), "what the index reads too");
        let mut added = MemoryRecord::new("notes", "t", "c", "");
        added.seal();
        assert_eq!(added.category, "note", "and what is written");
    }

    #[test]
    fn a_text_that_is_mostly_a_secret_is_told_apart() {
        let token = format!("ghp_{}", "a1B2".repeat(10));
        let refused = |t: &str| refuse_secret("content", t).is_err();
        assert!(refused(&token));
        assert!(refused(&format!("token {token}")));
        assert!(!refused(&format!("The deploy job pushes with {token} from the CI secrets store.")));
        assert!(!refused("no secret here"));
        let message = refuse_secret("content", &token).unwrap_err().to_string();
        assert_eq!(message, "the content is mostly a secret (GitHub token)");
    }

    #[test]
    fn newer_records_supersede_older_ones_of_the_same_title_or_named() {
        let mk = |id: &str, title: &str, created: &str, sup: &[&str]| Stored {
            path: PathBuf::new(),
            position: 0,
            in_file: 1,
            record: MemoryRecord {
                id: id.into(),
                category: "decision".into(),
                title: title.into(),
                created: created.into(),
                supersedes: sup.iter().map(|s| s.to_string()).collect(),
                ..MemoryRecord::new("decision", title, "c", id)
            },
        };
        let rs = [
            mk("a", "Session store", "2026-01-01T00:00:00Z", &[]),
            mk("b", "session  store", "2026-02-01T00:00:00Z", &[]),
            mk("c", "Queue", "2026-01-01T00:00:00Z", &[]),
            mk("d", "Job runner", "2026-03-01T00:00:00Z", &["c"]),
        ];
        let s = superseded(&rs);
        assert_eq!(s, HashSet::from(["a".to_string(), "c".to_string()]));
    }

    /// The near-duplicate groups by comparing every pair: what the prefix filter must find.
    fn every_pair(records: &[Stored], threshold: f32) -> Vec<Vec<String>> {
        let sets: Vec<HashSet<String>> = records.iter().map(|s| s.record.words()).collect();
        let mut taken = vec![false; records.len()];
        let mut groups = Vec::new();
        for i in 0..records.len() {
            if taken[i] {
                continue;
            }
            let mut group = vec![i];
            for j in i + 1..records.len() {
                if taken[j] || records[i].record.category != records[j].record.category {
                    continue;
                }
                let inter = sets[i].intersection(&sets[j]).count() as f32;
                let union = sets[i].union(&sets[j]).count().max(1) as f32;
                if inter / union >= threshold {
                    group.push(j);
                    taken[j] = true;
                }
            }
            if group.len() > 1 {
                group.sort_by(|&a, &b| records[b].record.created.cmp(&records[a].record.created));
                groups.push(group.into_iter().map(|k| records[k].record.id.clone()).collect());
            }
        }
        groups
    }

    proptest::proptest! {
        #[test]
        fn near_duplicates_are_the_groups_every_pair_would_give(
            docs in proptest::collection::vec((0..2u8, proptest::collection::vec(0..12u8, 0..8)), 0..40),
            threshold in 0.0f32..1.0,
        ) {
            let records: Vec<Stored> = docs.iter().enumerate().map(|(i, (cat, words))| {
                let text: Vec<String> = words.iter().map(|w| format!("word{w}")).collect();
                let mut r = MemoryRecord::new(if *cat == 0 { "note" } else { "decision" }, "t", &text.join(" "), &i.to_string());
                r.created = format!("2026-01-{:02}T00:00:00Z", 1 + i % 28);
                Stored { path: PathBuf::new(), position: 0, in_file: 1, record: r }
            }).collect();
            proptest::prop_assert_eq!(near_duplicates(&records, threshold), every_pair(&records, threshold));
        }
    }
}
