//! The index directory: generations, the metadata file, the writer lock and the embedding cache.
//!
//! ```text
//! .engine/
//!   CURRENT            name of the live generation (replaced atomically by rename)
//!   lock               writer lock (flock), holds the writer's pid
//!   gen-000007/        one complete generation: meta.json, tantivy/, vectors.bin, graph.hnsw.*
//!   cache/<model>.vec  embedding cache, append-only, keyed by hash of the chunk text
//!   stats.json         each file's stat and content hash when last read (a cache of no generation)
//! ```
//!
//! A run writes a new generation beside the live one and switches `CURRENT` only once the new one
//! is complete and synced, so a process killed at any moment leaves the previous generation
//! searchable; the next run deletes the unfinished directory. Tantivy segment files are immutable,
//! so a new generation hard-links the previous one's segments instead of copying them.

use crate::error::{Error, IoContext, Result};
use crate::ingest::{FileStat, Kind, Lang, Source};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Bump when the on-disk layout or the tantivy schema changes.
pub(crate) const SCHEMA_VERSION: u32 = 1;
pub(crate) const META: &str = "meta.json";
/// Name of the file in the index directory naming the live generation.
pub const CURRENT: &str = "CURRENT";
pub(crate) const TANTIVY_DIR: &str = "tantivy";

/// A document's entry in the metadata.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DocEntry {
    /// Hash of the document's title and text when it was indexed: a different hash means re-chunk it.
    pub hash: String,
    /// The document's display path.
    pub path: String,
    /// The document's kind.
    pub kind: Kind,
    /// The document's language, for code.
    #[serde(default)]
    pub lang: Option<Lang>,
    /// Vector ids of its chunks, in order.
    pub vids: Vec<u64>,
    /// Some of its chunks have no vector in this generation: its text went live before the run
    /// finished embedding it (and the run may have been stopped). The next run embeds it again,
    /// from the cache as far as it got.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// Its first lines say a tool generated it (`ingest::generated_head`): search ranks it below
    /// the files people wrote.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generated: bool,
}

/// The metadata of one generation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    /// Layout and tantivy schema version that wrote the generation.
    pub schema_version: u32,
    /// Chunker version that cut the chunks.
    pub chunker_version: u32,
    /// Id of the embedder that made the vectors (for the ONNX model: its id and max length).
    pub model_id: String,
    /// Floats per vector.
    pub dimensions: usize,
    /// This generation's number (its directory is `gen-NNNNNN`).
    pub generation: u64,
    /// Seconds since the epoch when this generation was written.
    pub updated_unix: u64,
    /// What was indexed (`None` before the first run wrote it).
    pub source: Option<Source>,
    /// The vector id the next new chunk gets.
    pub next_vid: u64,
    /// Chunks in the generation (every one searchable by BM25).
    pub chunks: usize,
    /// Chunks with a vector, when fewer than `chunks`: the generation made the text searchable
    /// while its run was still embedding. `None`: every chunk has its vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<usize>,
    /// Whether an HNSW graph was written beside the vectors.
    pub graph: bool,
    /// Documents whose content changed in the run that wrote this generation.
    #[serde(default)]
    pub changed: Vec<String>,
    /// Memory records another record supersedes, as (document id, record title): search ranks
    /// them below the newer record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<(String, String)>,
    /// When each memory record was created, as (document id, record title, category, seconds
    /// since the epoch): what `[search] memory_half_life_days` decays by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_created: Vec<crate::memory::CreatedAt>,
    /// The `[chunk] memory_max_tokens` memory records were cut with (`None`: before it was
    /// recorded); when the setting changes, the next run cuts them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max_tokens: Option<usize>,
    /// Every indexed document, by id.
    pub docs: BTreeMap<String, DocEntry>,
}

impl Meta {
    /// Metadata of an empty index for this model and vector size.
    pub fn new(model_id: &str, dimensions: usize) -> Meta {
        Meta {
            schema_version: SCHEMA_VERSION,
            chunker_version: crate::chunk::CHUNKER_VERSION,
            model_id: model_id.to_string(),
            dimensions,
            generation: 0,
            updated_unix: 0,
            source: None,
            next_vid: 0,
            chunks: 0,
            vectors: None,
            graph: false,
            changed: Vec::new(),
            superseded: Vec::new(),
            memory_created: Vec::new(),
            memory_max_tokens: None,
            docs: BTreeMap::new(),
        }
    }

    /// Errors unless this index was built by this schema, chunker and model.
    pub(crate) fn check_compatible(&self, dir: &Path, model_id: Option<&str>) -> Result<()> {
        let found =
            format!("schema v{}, chunker v{}, model {}", self.schema_version, self.chunker_version, self.model_id);
        let expected = format!(
            "schema v{}, chunker v{}, model {}",
            SCHEMA_VERSION,
            crate::chunk::CHUNKER_VERSION,
            model_id.unwrap_or(&self.model_id)
        );
        if found != expected {
            return Err(Error::IndexIncompatible { path: dir.to_path_buf(), found, expected });
        }
        Ok(())
    }
}

pub(crate) fn gen_name(n: u64) -> String {
    format!("gen-{n:06}")
}

fn gen_number(name: &str) -> Option<u64> {
    name.strip_prefix("gen-")?.parse().ok()
}

/// An index path naming something that is not a directory: the caller named the wrong path
/// (a usage error), nothing to rebuild.
pub(crate) fn not_a_directory(dir: &Path) -> Error {
    Error::InvalidInput(format!("{} is not a directory (an index is a directory)", dir.display()))
}

fn corrupt(dir: &Path, reason: String) -> Error {
    Error::IndexCorrupt { path: dir.to_path_buf(), reason }
}

/// The live generation's directory, if any; an error when `CURRENT` names no generation
/// directory.
pub fn current_generation(dir: &Path) -> Result<Option<PathBuf>> {
    let name = match std::fs::read_to_string(dir.join(CURRENT)) {
        Ok(name) => name.trim().to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) if dir.exists() && !dir.is_dir() => return Err(not_a_directory(dir)),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            return Err(corrupt(dir, format!("{CURRENT} is not text")))
        }
        Err(e) => return Err(Error::io(format!("reading {}", dir.join(CURRENT).display()), e)),
    };
    if gen_number(&name).is_none() {
        return Err(corrupt(dir, format!("{CURRENT} holds {name:?}, not a generation name")));
    }
    let gen_dir = dir.join(&name);
    match std::fs::metadata(&gen_dir) {
        Ok(m) if m.is_dir() => Ok(Some(gen_dir)),
        Ok(_) => Err(corrupt(dir, format!("{name}, named by {CURRENT}, is not a directory"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(corrupt(dir, format!("{CURRENT} names {name}, which does not exist")))
        }
        Err(e) => Err(Error::io(format!("reading {}", gen_dir.display()), e)),
    }
}

/// Why the current user should not trust a directory or file, if they should not: it, or the
/// symbolic link leading to it, belongs to another user, or others may write to it. An index is
/// what the hook puts into the model's context, so one planted by another local user (in a shared
/// directory such as `/tmp`) must never be read, nor a daemon socket inside it be asked.
pub(crate) fn distrust(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    for meta in [std::fs::symlink_metadata(path), std::fs::metadata(path)] {
        let meta = match meta {
            Ok(m) => m,
            Err(e) => return Some(format!("{} cannot be read ({e})", path.display())),
        };
        if meta.uid() != me {
            return Some(format!("{} belongs to uid {}, not to you (uid {me})", path.display(), meta.uid()));
        }
        if !meta.file_type().is_symlink() && meta.mode() & 0o022 != 0 {
            return Some(format!("{} is writable by other users (mode {:o})", path.display(), meta.mode() & 0o777));
        }
    }
    None
}

/// An index found by walking up from a directory.
#[derive(Debug, Default)]
pub struct Found {
    /// The nearest `.engine/` at or above the start that the current user owns.
    pub index: Option<PathBuf>,
    /// Indexes passed over on the way, each with the reason.
    pub distrusted: Vec<String>,
}

/// The nearest trusted `.engine/` at or above `start` (see [`distrust`]); untrusted ones are
/// passed over and reported.
pub fn find_index(start: &Path) -> Found {
    let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
    let mut found = Found::default();
    for dir in start.ancestors().map(|d| d.join(".engine")) {
        if !dir.join(CURRENT).is_file() {
            continue;
        }
        match distrust(&dir) {
            Some(why) => found.distrusted.push(format!("ignored the index {why}")),
            None => {
                found.index = Some(dir);
                break;
            }
        }
    }
    found
}

/// Reads a generation's metadata.
pub(crate) fn read_meta(gen_dir: &Path) -> Result<Meta> {
    let path = gen_dir.join(META);
    let index_dir = gen_dir.parent().unwrap_or(gen_dir);
    let shown = || format!("{}/{META}", gen_dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(corrupt(index_dir, format!("{} is missing", shown())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            return Err(corrupt(index_dir, format!("{} is not text", shown())))
        }
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    serde_json::from_str(&text).map_err(|e| corrupt(index_dir, format!("{}: {e}", shown())))
}

/// File in a generation listing the size and sha256 of every other file of it, written last.
pub(crate) const CHECKSUMS: &str = "checksums.json";

/// How much of a generation [`verify`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Sizes of every file, and the bytes of the metadata: cheap enough for every open.
    Quick,
    /// The bytes of every file (`engine index`, `engine status`).
    Full,
}

/// One file's size and sha256, as the generation recorded them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sum {
    pub len: u64,
    pub sha256: String,
}

/// Whether a generation holds the files it recorded: [`Error::IndexCorrupt`] naming the first
/// that differs. A generation written before checksums were recorded passes unchecked.
pub(crate) fn verify(gen_dir: &Path, check: Check) -> Result<()> {
    let index_dir = gen_dir.parent().unwrap_or(gen_dir);
    let sums = match std::fs::read(gen_dir.join(CHECKSUMS)) {
        Ok(bytes) => serde_json::from_slice::<BTreeMap<String, Sum>>(&bytes)
            .map_err(|e| corrupt(index_dir, format!("{CHECKSUMS} of {}: {e}", shown(gen_dir))))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("reading {}", gen_dir.join(CHECKSUMS).display()), e)),
    };
    // A full check of files whose stat is unchanged since the last one passed is not repeated:
    // any write to a file moves its change time.
    let stamp = (check == Check::Full).then(|| stat_stamp(gen_dir, &sums));
    let stamp_file = index_dir.join(VERIFIED_GENERATION);
    if let Some(Some(stamp)) = &stamp {
        if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s == *stamp) {
            return Ok(());
        }
    }
    for (name, sum) in &sums {
        let path = gen_dir.join(name);
        let len = std::fs::metadata(&path)
            .map(|m| m.len())
            .map_err(|e| corrupt(index_dir, format!("{}/{name} cannot be read ({e})", shown(gen_dir))))?;
        if len != sum.len {
            return Err(corrupt(
                index_dir,
                format!("{}/{name} has {len} bytes, not the {} written", shown(gen_dir), sum.len),
            ));
        }
        if check == Check::Full || name == META {
            let got = sha256_file(&path).ctx(|| format!("reading {}", path.display()))?;
            if got != sum.sha256 {
                return Err(corrupt(
                    index_dir,
                    format!("{}/{name} is not the file written (sha256 differs)", shown(gen_dir)),
                ));
            }
        }
    }
    if let Some(Some(stamp)) = stamp {
        let _ = crate::files::atomic::write_private(&stamp_file, stamp.as_bytes());
    }
    Ok(())
}

/// File in the index directory with the stat of every file of the generation last verified in
/// full.
const VERIFIED_GENERATION: &str = "verified-generation";

/// The generation's name and each recorded file's inode, size and times, one line each (`None`
/// when one cannot be read: then nothing is skipped).
fn stat_stamp(gen_dir: &Path, sums: &BTreeMap<String, Sum>) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = format!("{}\n", shown(gen_dir));
    for name in sums.keys() {
        let m = std::fs::metadata(gen_dir.join(name)).ok()?;
        out.push_str(&format!(
            "{name} {} {} {} {}.{} {}.{}\n",
            m.dev(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        ));
    }
    Some(out)
}

/// Records the size and sha256 of every file of a generation being written (what `previous`, a
/// generation it hard-links files from, recorded for the same file is taken as it is), synced.
pub(crate) fn write_checksums(gen_dir: &Path, previous: Option<&Path>) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let known: BTreeMap<String, Sum> = previous
        .and_then(|p| std::fs::read(p.join(CHECKSUMS)).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut sums = BTreeMap::new();
    for path in files_below(gen_dir)? {
        let name = path.strip_prefix(gen_dir).expect("below").to_string_lossy().into_owned();
        if name == CHECKSUMS || name.ends_with(".lock") {
            continue;
        }
        let m = std::fs::metadata(&path).ctx(|| format!("reading {}", path.display()))?;
        let linked = previous.map(|p| p.join(&name)).and_then(|p| std::fs::metadata(p).ok());
        let reuse = known.get(&name).filter(|_| linked.is_some_and(|l| l.ino() == m.ino() && l.dev() == m.dev()));
        let sum = match reuse {
            Some(sum) => sum.clone(),
            None => Sum { len: m.len(), sha256: sha256_file(&path).ctx(|| format!("reading {}", path.display()))? },
        };
        sums.insert(name, sum);
    }
    let json = serde_json::to_vec(&sums).map_err(|e| Error::io("serialising checksums", e.into()))?;
    write_synced(&gen_dir.join(CHECKSUMS), &json)
}

/// Every regular file below `dir`.
fn files_below(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).ctx(|| format!("listing {}", dir.display()))? {
        let path = entry.ctx(|| format!("listing {}", dir.display()))?.path();
        if path.is_dir() {
            out.extend(files_below(&path)?);
        } else if path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut h)?;
    Ok(hex::encode(h.finalize()))
}

/// A generation's directory name, for messages.
fn shown(gen_dir: &Path) -> String {
    gen_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Creates a file that must not exist yet, in a generation being written: files of a live
/// generation may be hard links shared with it and are never opened for writing.
pub(crate) fn create_new(path: &Path) -> Result<std::fs::File> {
    std::fs::File::options().write(true).create_new(true).open(path).ctx(|| format!("creating {}", path.display()))
}

/// Writes a file and fsyncs it.
pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::File::create(path).ctx(|| format!("creating {}", path.display()))?;
    f.write_all(bytes).ctx(|| format!("writing {}", path.display()))?;
    f.sync_all().ctx(|| format!("syncing {}", path.display()))
}

pub(crate) fn sync_dir(path: &Path) -> Result<()> {
    std::fs::File::open(path).and_then(|f| f.sync_all()).ctx(|| format!("syncing directory {}", path.display()))
}

/// Makes `gen_dir` the live generation: write `CURRENT.tmp`, fsync, rename over `CURRENT`, fsync.
pub(crate) fn switch_current(dir: &Path, gen_dir: &Path) -> Result<()> {
    let name = gen_dir.file_name().expect("generation dir has a name").to_string_lossy();
    let tmp = dir.join("CURRENT.tmp");
    write_synced(&tmp, format!("{name}\n").as_bytes())?;
    std::fs::rename(&tmp, dir.join(CURRENT)).ctx(|| format!("switching {}", dir.join(CURRENT).display()))?;
    sync_dir(dir)
}

/// A fresh generation number, above every directory present (live, old or unfinished).
pub(crate) fn next_generation(dir: &Path) -> Result<u64> {
    let mut max = 0;
    for entry in std::fs::read_dir(dir).ctx(|| format!("listing {}", dir.display()))? {
        let entry = entry.ctx(|| format!("listing {}", dir.display()))?;
        if let Some(n) = gen_number(&entry.file_name().to_string_lossy()) {
            max = max.max(n);
        }
    }
    Ok(max + 1)
}

/// Deletes every generation except `keep` (the live one and the one before it, which a reader
/// that opened it moments ago may still be using).
pub(crate) fn remove_generations_except(dir: &Path, keep: &[&Path]) -> Result<()> {
    for entry in std::fs::read_dir(dir).ctx(|| format!("listing {}", dir.display()))? {
        let entry = entry.ctx(|| format!("listing {}", dir.display()))?;
        let path = entry.path();
        if gen_number(&entry.file_name().to_string_lossy()).is_some() && !keep.iter().any(|k| *k == path) {
            // A damaged index can hold a file where a generation directory belongs.
            let removed = if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
            removed.ctx(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

/// Hard-links (immutable segment files) or copies (tantivy's own metadata) `from` into `to`.
pub(crate) fn link_tantivy(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).ctx(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).ctx(|| format!("listing {}", from.display()))? {
        let entry = entry.ctx(|| format!("listing {}", from.display()))?;
        let name = entry.file_name();
        let name_s = name.to_string_lossy();
        if name_s.ends_with(".lock") {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if name_s == "meta.json" || name_s == ".managed.json" {
            std::fs::copy(&src, &dst).ctx(|| format!("copying {}", src.display()))?;
        } else if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).ctx(|| format!("copying {}", src.display()))?;
        }
    }
    Ok(())
}

/// The writer lock: held for the whole of an indexing run, released when dropped (or when the
/// process dies — flock locks die with their process, so a killed writer never blocks the next).
pub struct WriterLock {
    _file: std::fs::File,
}

impl WriterLock {
    /// Takes the lock of the index at `dir` without waiting, writing this process's pid into it.
    /// [`Error::Locked`] (naming the holder's pid) when another process holds it.
    pub fn acquire(dir: &Path) -> Result<WriterLock> {
        let path = dir.join("lock");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .ctx(|| format!("opening {}", path.display()))?;
        // SAFETY: flock on a file descriptor we own.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            let holder = match holder.trim() {
                "" => "another process".to_string(),
                pid => format!("pid {pid}"),
            };
            return Err(Error::Locked { path: dir.to_path_buf(), holder });
        }
        file.set_len(0).ctx(|| format!("writing {}", path.display()))?;
        let _ = write!(file, "{}", std::process::id());
        Ok(WriterLock { _file: file })
    }
}

/// The build of the program running: its version and its executable's size and modification
/// time. A recorded hash is only as good as the code that redacted and hashed the file (secret
/// patterns change without a version bump), so any other build reads every file once more.
fn reader_identity() -> &'static str {
    static IDENTITY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let exe = std::env::current_exe().and_then(std::fs::metadata).map(|m| crate::ingest::FileStat::of(&m));
        match exe {
            Ok(s) => format!("{} {} {}", env!("CARGO_PKG_VERSION"), s.size, s.mtime_ns),
            // Unknown build: a fresh value per process, so nothing recorded is ever trusted.
            Err(_) => format!("{} unknown {}", env!("CARGO_PKG_VERSION"), std::process::id()),
        }
    });
    &IDENTITY
}

/// Name of the [`StatCache`] file in the index directory.
pub(crate) const STATS: &str = "stats.json";

/// Each file's content hash as of a stat of it: a scan passes over a file whose stat is the one
/// recorded here when the recorded hash is the one the live generation indexed. Only facts about
/// files are kept (this stat, this content), true whichever generation is live, so the file
/// belongs to none. Losing it, or a torn write, only means every file is read once more: it is
/// replaced by rename but not synced.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StatCache {
    /// The program that hashed the files ([`reader_identity`]): another build may read or redact
    /// them differently, so its hashes are not trusted.
    version: String,
    files: BTreeMap<String, (FileStat, String)>,
}

impl StatCache {
    /// The cache of the index at `index_dir`; empty when missing, unreadable or of another version.
    pub fn load(index_dir: &Path) -> StatCache {
        std::fs::read(index_dir.join(STATS))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<StatCache>(&bytes).ok())
            .filter(|c| c.version == reader_identity())
            .unwrap_or_default()
    }

    /// The content hash of the file `id` if `stat` is the one recorded with it.
    pub fn hash_of(&self, id: &str, stat: &FileStat) -> Option<&str> {
        self.files.get(id).filter(|(s, _)| s == stat).map(|(_, h)| h.as_str())
    }

    /// The cache after a scan: the files it read (with a settled stat), and the ones it passed
    /// over as they were; files it did not see are dropped.
    pub fn updated<'a>(&self, read: impl Iterator<Item = (&'a str, FileStat, &'a str)>, kept: &[String]) -> StatCache {
        let mut files: BTreeMap<String, (FileStat, String)> =
            read.map(|(id, stat, hash)| (id.to_string(), (stat, hash.to_string()))).collect();
        for id in kept {
            if let Some(record) = self.files.get(id) {
                files.insert(id.clone(), record.clone());
            }
        }
        StatCache { version: reader_identity().to_string(), files }
    }

    /// Writes the cache into `index_dir` (replacing the old one at once).
    pub fn save(&self, index_dir: &Path) -> Result<()> {
        let tmp = index_dir.join(format!("{STATS}.tmp"));
        let bytes = serde_json::to_vec(self).map_err(|e| Error::io("serialising file stats", e.into()))?;
        std::fs::write(&tmp, bytes).ctx(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, index_dir.join(STATS)).ctx(|| format!("replacing {}", index_dir.join(STATS).display()))
    }
}

/// Embedding cache: (model id, hash of the embedded text) → vector. Append-only records of a
/// 16-byte key and `dim` floats; a torn last record (a killed writer) is ignored on load.
/// In memory the vectors sit in one flat array (no allocation per vector), read record by record.
pub(crate) struct EmbedCache {
    path: PathBuf,
    dim: usize,
    rows: HashMap<[u8; 16], u32>,
    data: Vec<f32>,
    file: Option<std::fs::File>,
}

pub(crate) fn text_key(text: &str) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(text.as_bytes());
    d[..16].try_into().expect("16 bytes")
}

impl EmbedCache {
    /// The whole cache of `model_id` in `index_dir`.
    #[cfg(test)]
    pub fn open(index_dir: &Path, model_id: &str, dim: usize) -> Result<EmbedCache> {
        EmbedCache::open_for(index_dir, model_id, dim, None)
    }

    /// The cache of `model_id` in `index_dir`, holding in memory only the vectors of `keys` (all
    /// when `None`): a run that adds a few chunks to a large index looks up only those, and so
    /// neither decodes nor keeps the rest.
    pub fn open_for(
        index_dir: &Path,
        model_id: &str,
        dim: usize,
        keys: Option<&std::collections::HashSet<[u8; 16]>>,
    ) -> Result<EmbedCache> {
        use std::io::Read;
        let dir = index_dir.join("cache");
        std::fs::create_dir_all(&dir).ctx(|| format!("creating {}", dir.display()))?;
        let safe: String =
            model_id.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
        let path = dir.join(format!("{safe}.vec"));
        let mut cache = EmbedCache { path, dim, rows: HashMap::new(), data: Vec::new(), file: None };
        let Ok(file) = std::fs::File::open(&cache.path) else { return Ok(cache) };
        let record = 16 + dim * 4;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let whole = len / record as u64 * record as u64;
        cache.data.reserve((whole / record as u64) as usize * dim);
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file.take(whole));
        let mut buf = vec![0u8; record];
        loop {
            match reader.read_exact(&mut buf) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(Error::io(format!("reading {}", cache.path.display()), e)),
            }
            let key: [u8; 16] = buf[..16].try_into().expect("16");
            if keys.is_some_and(|k| !k.contains(&key)) || cache.rows.contains_key(&key) {
                continue;
            }
            let row = cache.push(&mut buf[16..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4"))));
            cache.rows.insert(key, row);
        }
        if whole != len {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&cache.path)
                .ctx(|| format!("opening {}", cache.path.display()))?;
            f.set_len(whole).ctx(|| format!("trimming {}", cache.path.display()))?;
        }
        Ok(cache)
    }

    fn push(&mut self, v: &mut dyn Iterator<Item = f32>) -> u32 {
        let row = (self.data.len() / self.dim) as u32;
        self.data.extend(v);
        row
    }

    pub fn get(&self, key: &[u8; 16]) -> Option<&[f32]> {
        let row = *self.rows.get(key)? as usize;
        Some(&self.data[row * self.dim..(row + 1) * self.dim])
    }

    /// Drops the vectors read from disk (the file keeps them): [`EmbedCache::get`] finds only
    /// what is inserted from now on.
    pub(crate) fn forget(&mut self) {
        (self.rows, self.data) = (HashMap::new(), Vec::new());
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Appends new vectors (one write per batch).
    pub(crate) fn insert_many(&mut self, items: Vec<([u8; 16], Vec<f32>)>) -> Result<()> {
        if self.file.is_none() {
            self.file = Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)
                    .ctx(|| format!("opening {}", self.path.display()))?,
            );
        }
        let mut buf = Vec::with_capacity(items.len() * (16 + self.dim * 4));
        for (k, v) in &items {
            buf.extend_from_slice(k);
            for x in v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
        }
        let file = self.file.as_mut().expect("opened above");
        file.write_all(&buf).ctx(|| format!("writing {}", self.path.display()))?;
        for (k, v) in items {
            if !self.rows.contains_key(&k) && v.len() == self.dim {
                let row = self.push(&mut v.into_iter());
                self.rows.insert(k, row);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_survives_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = EmbedCache::open(dir.path(), "m/1", 2).unwrap();
        c.insert_many(vec![(text_key("a"), vec![1.0, 2.0]), (text_key("b"), vec![3.0, 4.0])]).unwrap();
        drop(c);
        let path = dir.path().join("cache/m_1.vec");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&path, bytes).unwrap();
        let c = EmbedCache::open(dir.path(), "m/1", 2).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(&text_key("b")).unwrap(), [3.0, 4.0]);
        assert!(c.get(&text_key("c")).is_none());
    }

    #[test]
    fn a_second_writer_is_refused_with_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let _held = WriterLock::acquire(dir.path()).unwrap();
        // flock is per open file description, so a second open in this process conflicts too.
        let err = WriterLock::acquire(dir.path()).err().unwrap();
        assert!(err.to_string().contains(&format!("pid {}", std::process::id())), "{err}");
    }
}
