//! `engine memory`: the project's memory records (one JSON file each under `.claude/memory/`, see
//! [`crate::memory`]) from the command line. A thin layer over [`MemoryStore`]: add, list, show,
//! edit, delete, stats, gc, export, import, and capture from a transcript. A command that changes
//! records then brings the project's index up to date, as `engine index` would (an incremental
//! run: only the changed record files are chunked and embedded again).

use super::index::with_progress;
use crate::cli::flags::memory::{MemoryAction, MemoryArgs};
use crate::cli::flags::settings;
use crate::config::SettingsLayer;
use crate::error::one_line;
use crate::index;
use crate::ingest::Source;
use crate::memory::{self, Added, MemoryRecord, MemoryStore, Stored};
use crate::{Error, Settings};
use anyhow::{Context, Result};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

/// The project whose records a command reads, and the index that covers it.
struct Project {
    root: PathBuf,
    index: Option<PathBuf>,
}

/// Runs `engine memory …`; returns the exit code.
pub(crate) fn run(args: MemoryArgs, config: Option<&Path>) -> Result<i32> {
    let settings = settings(config, SettingsLayer::default())?;
    let project = project(args.root, args.index)?;
    let store = MemoryStore::at_root(&project.root);
    let out = Out { json: args.json };
    let changed = match args.action {
        MemoryAction::Add { title, content, category, tags, files, supersedes } => {
            let content = content_arg(content)?;
            add(&store, &project, &out, NewRecord { title, content, category, tags, files, supersedes })?
        }
        MemoryAction::List { category, tag, session, since, all } => {
            list(&store, &out, &Filter { category, tag, session, since: since_arg(since)?, all })?;
            false
        }
        MemoryAction::Show { id } => {
            show(&store, &project, &out, &id)?;
            false
        }
        MemoryAction::Delete { ids } => delete(&store, &project, &out, &ids)?,
        MemoryAction::Edit { id, title, content, category, tags, files } => {
            let content = match content {
                Some(c) if c == "-" => Some(read_stdin()?),
                other => other,
            };
            let changes = Changes { title, content, category, tags, files };
            edit(&store, &project, &out, &id, changes)?
        }
        MemoryAction::Stats => {
            stats(&store, &project, &out, &settings)?;
            false
        }
        MemoryAction::Gc { apply } => gc(&store, &project, &out, &settings, apply)?,
        MemoryAction::Export { out: file } => {
            export(&store, file.as_deref())?;
            false
        }
        MemoryAction::Import { file } => import(&store, &out, &file)?,
        MemoryAction::Capture { transcript, reason } => {
            capture(&project, &out, &settings, &transcript, reason.as_deref())?
        }
    };
    if changed {
        update_index(&project, &settings, args.no_reindex);
    }
    Ok(0)
}

/// How a command prints.
struct Out {
    json: bool,
}

impl Out {
    fn value(&self, v: &serde_json::Value) -> Result<()> {
        println!("{}", serde_json::to_string(v)?);
        Ok(())
    }
}

/// `--root`, `--index`, or the nearest index above the current directory; see [`MemoryArgs`].
fn project(root: Option<PathBuf>, index: Option<PathBuf>) -> Result<Project> {
    let cwd = std::env::current_dir()?;
    let nearest = |start: &Path| {
        let found = index::store::find_index(start);
        for why in &found.distrusted {
            eprintln!("engine: {}", one_line(why));
        }
        found.index
    };
    Ok(match (root, index) {
        (Some(root), index) => {
            let root = std::path::absolute(root)?;
            if !root.is_dir() {
                return Err(invalid(format!("--root {}: no such directory", root.display())));
            }
            let index = index.or_else(|| nearest(&root).filter(|i| i.parent() == Some(root.as_path())));
            Project { root, index }
        }
        (None, Some(index)) => {
            let index = std::path::absolute(index)?;
            let root = indexed_root(&index).or_else(|| index.parent().map(Path::to_path_buf)).unwrap_or(cwd);
            Project { root, index: Some(index) }
        }
        (None, None) => match nearest(&cwd) {
            Some(index) => {
                let root = indexed_root(&index).or_else(|| index.parent().map(Path::to_path_buf)).unwrap_or(cwd);
                Project { root, index: Some(index) }
            }
            None => Project { root: cwd, index: None },
        },
    })
}

/// The directory a live index was built from (its generation's metadata), if it is one.
fn indexed_root(index_dir: &Path) -> Option<PathBuf> {
    let generation = index::store::current_generation(index_dir).ok()??;
    // `index::store::META`, which is private to the library.
    let text = std::fs::read_to_string(generation.join("meta.json")).ok()?;
    match serde_json::from_str::<index::store::Meta>(&text).ok()?.source? {
        Source::Dir(root) => Some(root),
        Source::Beir(_) => None,
    }
}

/// After a change: an incremental `engine index` of the project into its index, when it has one.
/// The change is saved whatever happens here; a failure is a warning.
fn update_index(project: &Project, settings: &Settings, skip: bool) {
    let Some(index) = &project.index else { return };
    let later = "it updates on the next `engine index` or session start";
    if skip {
        eprintln!("engine: index {} not updated (--no-reindex); {later}", index.display());
        return;
    }
    if !matches!(index::store::current_generation(index), Ok(Some(_))) {
        eprintln!("engine: {} is not a built index; not updated", index.display());
        return;
    }
    match indexed_root(index) {
        Some(root) if root != project.root => {
            eprintln!(
                "engine: index {} covers {}, not {}; not updated",
                index.display(),
                root.display(),
                project.root.display()
            );
            return;
        }
        _ => {}
    }
    match with_progress(index, &Source::Dir(project.root.clone()), settings, false, true) {
        Ok(r) => eprintln!(
            "engine: index {} updated: {} files changed, {} removed, {} chunks embedded in {:.2}s",
            index.display(),
            r.files_changed,
            r.files_removed,
            r.chunks_embedded,
            r.seconds.total
        ),
        Err(e) => eprintln!(
            "engine: the records are saved, but index {} was not updated: {}; {later}",
            index.display(),
            one_line(&e.to_string())
        ),
    }
}

fn invalid(message: String) -> anyhow::Error {
    Error::InvalidInput(message).into()
}

/// `--content`: the text, or stdin when absent or `-`.
fn content_arg(content: Option<String>) -> Result<String> {
    match content {
        Some(c) if c != "-" => Ok(c),
        _ => read_stdin(),
    }
}

fn read_stdin() -> Result<String> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprintln!("engine: reading the record's content from stdin (end it with Ctrl-D)");
    }
    let mut bytes = Vec::new();
    stdin.read_to_end(&mut bytes).context("reading stdin")?;
    let text = String::from_utf8(bytes).map_err(|_| invalid("the content on stdin is not UTF-8 text".into()))?;
    Ok(text.trim_end().to_string())
}

fn since_arg(since: Option<String>) -> Result<Option<i64>> {
    since
        .map(|s| {
            memory::parse_time(&s).ok_or_else(|| {
                invalid(format!("--since {s:?} is not a date (YYYY-MM-DD) or an RFC 3339 time (2026-01-05T10:00:00Z)"))
            })
        })
        .transpose()
}

/// Refuses a text that is mostly a secret: redacted, nothing useful would be left.
fn refuse_secret(what: &str, text: &str) -> Result<()> {
    memory::refuse_secret(what, text)
        .map_err(|e| invalid(format!("{e}; not saved: memory records are plain files in the project")))
}

/// A path for a person: relative to the current directory when under it.
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    match cwd.as_deref().and_then(|c| path.strip_prefix(c).ok()) {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

/// A `--file` argument as stored: relative to the project root when it is a path inside it.
fn project_file(root: &Path, file: &str) -> String {
    let abs = std::path::absolute(file).unwrap_or_else(|_| PathBuf::from(file));
    match abs.strip_prefix(root) {
        Ok(rel) if Path::new(file).is_absolute() || abs.exists() => rel.to_string_lossy().into_owned(),
        _ => file.to_string(),
    }
}

fn created_secs(r: &MemoryRecord) -> Option<i64> {
    memory::parse_time(&r.created)
}

/// Newest `created` first (records without a readable time last), then by id.
fn newest_first(records: &mut [Stored]) {
    records.sort_by(|a, b| {
        created_secs(&b.record).cmp(&created_secs(&a.record)).then_with(|| a.record.id.cmp(&b.record.id))
    });
}

fn day(r: &MemoryRecord) -> &str {
    r.created.get(..10).unwrap_or(if r.created.is_empty() { "-" } else { &r.created })
}

/// A record as `list --json` and `delete --json` print it: its fields, its file and whether it is
/// superseded.
fn listed(s: &Stored, superseded: bool) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(&s.record)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("path".into(), s.path.display().to_string().into());
        o.insert("superseded".into(), superseded.into());
    }
    Ok(v)
}

struct NewRecord {
    title: String,
    content: String,
    category: String,
    tags: Vec<String>,
    files: Vec<String>,
    supersedes: Vec<String>,
}

fn add(store: &MemoryStore, project: &Project, out: &Out, new: NewRecord) -> Result<bool> {
    refuse_secret("title", &new.title)?;
    refuse_secret("content", &new.content)?;
    let mut r = MemoryRecord::new(&new.category, &new.title, &new.content, "");
    r.source = "manual".into();
    r.tags = new.tags;
    r.files = new.files.iter().map(|f| project_file(&project.root, f)).collect();
    for id in &new.supersedes {
        let older = store.find(id)?.record.id;
        if !r.supersedes.contains(&older) {
            r.supersedes.push(older);
        }
    }
    r.seal();
    memory::validate(&r)?;
    match store.add(r.clone())? {
        Added::Written(path) | Added::Updated(path) => {
            if out.json {
                out.value(&serde_json::to_value(&r)?)?;
            } else {
                println!("{} {}", r.id, shown(&path));
            }
            Ok(true)
        }
        Added::Unchanged(id) => {
            let s = store.find(&id)?;
            if out.json {
                out.value(&serde_json::to_value(&s.record)?)?;
            } else {
                println!("{} {}", s.record.id, shown(&s.path));
            }
            eprintln!("engine: a record with the same content is already stored as {id}; nothing written");
            Ok(false)
        }
    }
}

struct Filter {
    category: Option<String>,
    tag: Option<String>,
    session: Option<String>,
    since: Option<i64>,
    all: bool,
}

impl Filter {
    fn keeps(&self, r: &MemoryRecord) -> bool {
        self.category.as_ref().is_none_or(|c| memory::category::same(&r.category, c))
            && self.tag.as_ref().is_none_or(|t| r.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
            && self.session.as_ref().is_none_or(|p| r.session_id.as_ref().is_some_and(|s| s.starts_with(p.as_str())))
            && self.since.is_none_or(|t| created_secs(r).is_some_and(|c| c >= t))
    }
}

fn list(store: &MemoryStore, out: &Out, filter: &Filter) -> Result<()> {
    let mut all = store.load()?;
    let superseded = memory::superseded(&all);
    newest_first(&mut all);
    let mut hidden = 0;
    let mut rows = Vec::new();
    for s in all.iter().filter(|s| filter.keeps(&s.record)) {
        let sup = superseded.contains(&s.record.id);
        if sup && !filter.all {
            hidden += 1;
            continue;
        }
        rows.push((s, sup));
    }
    if out.json {
        let v: Vec<serde_json::Value> = rows.iter().map(|(s, sup)| listed(s, *sup)).collect::<Result<_>>()?;
        out.value(&v.into())?;
    } else {
        for (s, sup) in &rows {
            let r = &s.record;
            let mark = if *sup { " [superseded]" } else { "" };
            println!("{}  {:<10}  {}  {}{mark}", r.id, r.category, day(r), one_line(&r.title));
        }
        if rows.is_empty() && all.is_empty() {
            eprintln!("engine: no memory records in {}", shown(store.dir()));
        }
    }
    if hidden > 0 {
        eprintln!("engine: {hidden} superseded record(s) not shown (--all shows them)");
    }
    Ok(())
}

fn show(store: &MemoryStore, project: &Project, out: &Out, id: &str) -> Result<()> {
    let s = store.find(id)?;
    let r = &s.record;
    if out.json {
        return out.value(&serde_json::to_value(r)?);
    }
    let all = store.load()?;
    let line = |k: &str, v: &str| {
        if !v.is_empty() {
            println!("{k:<11}{}", one_line(v));
        }
    };
    line("id", &r.id);
    line("category", &r.category);
    line("title", &r.title);
    line("created", &r.created);
    line("updated", &r.updated);
    line("source", &r.source);
    line("session", r.session_id.as_deref().unwrap_or(""));
    line("tags", &r.tags.join(", "));
    line("files", &r.files.join(", "));
    line("supersedes", &r.supersedes.join(", "));
    let by: Vec<&str> =
        all.iter().filter(|o| o.record.supersedes.contains(&r.id)).map(|o| o.record.id.as_str()).collect();
    if !by.is_empty() {
        line("superseded", &format!("by {}", by.join(", ")));
    } else if memory::superseded(&all).contains(&r.id) {
        line("superseded", "by a newer record of the same category and title");
    }
    let file = s.path.strip_prefix(&project.root).unwrap_or(&s.path).display().to_string();
    line("file", &if s.in_file > 1 { format!("{file} (record {} of {})", s.position + 1, s.in_file) } else { file });
    println!("\n{}", r.content);
    Ok(())
}

fn delete(store: &MemoryStore, project: &Project, out: &Out, ids: &[String]) -> Result<bool> {
    // Every id is resolved before anything is deleted.
    let mut doomed: Vec<Stored> = Vec::new();
    for id in ids {
        let s = store.find(id)?;
        if !doomed.iter().any(|d| d.path == s.path && d.position == s.position) {
            doomed.push(s);
        }
    }
    store.delete_all(&doomed)?;
    if out.json {
        let v: Vec<serde_json::Value> = doomed.iter().map(|s| listed(s, false)).collect::<Result<_>>()?;
        out.value(&v.into())?;
    } else {
        for s in &doomed {
            let file = s.path.strip_prefix(&project.root).unwrap_or(&s.path).display().to_string();
            println!("deleted {} ({}) from {file}", s.record.id, one_line(&s.record.title));
        }
    }
    Ok(true)
}

struct Changes {
    title: Option<String>,
    content: Option<String>,
    category: Option<String>,
    tags: Vec<String>,
    files: Vec<String>,
}

impl Changes {
    fn any(&self) -> bool {
        self.title.is_some()
            || self.content.is_some()
            || self.category.is_some()
            || !self.tags.is_empty()
            || !self.files.is_empty()
    }
}

fn edit(store: &MemoryStore, project: &Project, out: &Out, id: &str, changes: Changes) -> Result<bool> {
    let s = store.find(id)?;
    let old = &s.record;
    let mut r = if changes.any() {
        let mut r = old.clone();
        if let Some(t) = changes.title {
            r.title = t;
        }
        if let Some(c) = changes.content {
            r.content = c;
        }
        if let Some(c) = changes.category {
            r.category = c;
        }
        if !changes.tags.is_empty() {
            r.tags = changes.tags;
        }
        if !changes.files.is_empty() {
            r.files = changes.files.iter().map(|f| project_file(&project.root, f)).collect();
        }
        r
    } else {
        match edit_in_editor(old)? {
            Some(r) => r,
            None => {
                eprintln!("engine: {} unchanged", old.id);
                return Ok(false);
            }
        }
    };
    if r.id != old.id || r.created != old.created {
        eprintln!("engine: a record keeps its id and creation time ({}, {})", old.id, old.created);
    }
    r.id = old.id.clone();
    r.created = old.created.clone();
    refuse_secret("title", &r.title)?;
    refuse_secret("content", &r.content)?;
    let mut sealed = r.clone();
    sealed.seal();
    sealed.updated = old.updated.clone();
    if sealed == *old {
        eprintln!("engine: {} unchanged", old.id);
        if out.json {
            out.value(&serde_json::to_value(old)?)?;
        }
        return Ok(false);
    }
    r.updated = memory::now_rfc3339();
    let (written, path) = store.replace(&s, r)?;
    if out.json {
        out.value(&serde_json::to_value(&written)?)?;
    } else {
        println!("{} {}", written.id, shown(&path));
    }
    Ok(true)
}

/// The record in `$VISUAL`/`$EDITOR` (default `vi`) as a JSON file; `None` when it came back
/// unchanged. A file that is not a record is an error that names what is wrong; it is kept, with
/// its path in the message, so the edit is not lost.
fn edit_in_editor(record: &MemoryRecord) -> Result<Option<MemoryRecord>> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_else(|| "vi".into());
    let mut original = serde_json::to_string_pretty(record)?;
    original.push('\n');
    let name: String = record.id.chars().filter(char::is_ascii_alphanumeric).take(24).collect();
    let path = {
        let (path, mut f) = new_private_file(&format!("engine-memory-{name}"))?;
        f.write_all(original.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
        path
    };
    // As git runs it: the editor may carry arguments (`code --wait`).
    let status =
        std::process::Command::new("sh").arg("-c").arg(format!("{editor} \"$1\"")).arg("sh").arg(&path).status();
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            return Err(invalid(format!("could not run the editor {editor:?}: {e}; nothing changed")));
        }
    };
    if !status.success() {
        let _ = std::fs::remove_file(&path);
        return Err(invalid(format!("the editor {editor:?} failed ({status}); nothing changed")));
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    if text == original {
        let _ = std::fs::remove_file(&path);
        return Ok(None);
    }
    let kept = |why: String| invalid(format!("{why}; nothing changed (the edit is kept in {})", path.display()));
    let edited: MemoryRecord =
        serde_json::from_str(&text).map_err(|e| kept(format!("the edited record is not valid JSON: {e}")))?;
    let mut check = edited.clone();
    check.id = record.id.clone();
    check.seal();
    memory::validate(&check).map_err(|e| kept(format!("the edited record is not valid: {e}")))?;
    memory::refuse_secret("edited content", &edited.content).map_err(|e| kept(e.to_string()))?;
    let _ = std::fs::remove_file(&path);
    Ok(Some(edited))
}

/// A new file in the temp directory that only this user can read, named `{stem}-{pid}-{n}.json`
/// with the first free `n`: an edit an earlier run kept (under a process id since reused) is
/// neither overwritten nor in the way.
fn new_private_file(stem: &str) -> Result<(std::path::PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::env::temp_dir();
    let mut n = 0u32;
    loop {
        let path = dir.join(format!("{stem}-{}-{n}.json", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
}

fn stats(store: &MemoryStore, project: &Project, out: &Out, settings: &Settings) -> Result<()> {
    let all = store.load()?;
    let mut by_category: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_source: BTreeMap<String, usize> = BTreeMap::new();
    for s in &all {
        *by_category.entry(s.record.category.clone()).or_default() += 1;
        let source = if s.record.source.is_empty() { "hand-written" } else { s.record.source.as_str() };
        *by_source.entry(source.to_string()).or_default() += 1;
    }
    let sessions: HashSet<&str> = all.iter().filter_map(|s| s.record.session_id.as_deref()).collect();
    let files: HashSet<&Path> = all.iter().map(|s| s.path.as_path()).collect();
    let bytes: u64 = files.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    let mut dated: Vec<(i64, &str)> =
        all.iter().filter_map(|s| created_secs(&s.record).map(|t| (t, s.record.created.as_str()))).collect();
    dated.sort();
    let superseded = memory::superseded(&all).len();
    let exact = memory::exact_duplicates(&all);
    let near = memory::near_duplicates(&all, settings.memory.near_duplicate);
    let v = serde_json::json!({
        "dir": store.dir().display().to_string(),
        "records": all.len(),
        "files": files.len(),
        "bytes": bytes,
        "by_category": by_category,
        "by_source": by_source,
        "sessions": sessions.len(),
        "oldest": dated.first().map(|d| d.1),
        "newest": dated.last().map(|d| d.1),
        "superseded": superseded,
        "exact_duplicate_groups": exact.len(),
        "exact_duplicate_records": exact.iter().map(Vec::len).sum::<usize>(),
        "near_duplicate_groups": near.len(),
        "near_duplicate_records": near.iter().map(Vec::len).sum::<usize>(),
        "index": project.index.as_ref().map(|i| i.display().to_string()),
    });
    if out.json {
        return out.value(&v);
    }
    let counts = |m: &BTreeMap<String, usize>| {
        let mut v: Vec<(&String, &usize)> = m.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        v.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
    };
    println!(
        "records     {} in {} files, {:.1} KiB, in {}",
        all.len(),
        files.len(),
        bytes as f64 / 1024.0,
        shown(store.dir())
    );
    println!("categories  {}", counts(&by_category));
    println!("sources     {}", counts(&by_source));
    println!("sessions    {}", sessions.len());
    if let (Some(first), Some(last)) = (dated.first(), dated.last()) {
        println!("oldest      {}", first.1);
        println!("newest      {}", last.1);
    }
    println!("superseded  {superseded}");
    println!(
        "duplicates  {} exact group(s) ({} records), {} near-duplicate group(s) ({} records)",
        exact.len(),
        exact.iter().map(Vec::len).sum::<usize>(),
        near.len(),
        near.iter().map(Vec::len).sum::<usize>()
    );
    Ok(())
}

fn gc(store: &MemoryStore, project: &Project, out: &Out, settings: &Settings, apply: bool) -> Result<bool> {
    let all = store.load()?;
    let plan = memory::gc_plan(&all, &settings.memory, memory::parse_time(&memory::now_rfc3339()).unwrap_or(0));
    if apply && !plan.is_empty() {
        let doomed: Vec<Stored> = plan.iter().map(|(s, _)| s.clone()).collect();
        store.delete_all(&doomed)?;
    }
    if out.json {
        let records: Vec<serde_json::Value> = plan
            .iter()
            .map(|(s, why)| {
                serde_json::json!({
                    "id": s.record.id,
                    "category": s.record.category,
                    "created": s.record.created,
                    "title": s.record.title,
                    "path": s.path.display().to_string(),
                    "reason": why,
                })
            })
            .collect();
        out.value(&serde_json::json!({ "applied": apply, "records": records }))?;
    } else {
        if plan.is_empty() {
            println!("nothing to delete ({} records)", all.len());
        } else if apply {
            println!("deleted {} of {} records:", plan.len(), all.len());
        } else {
            println!("would delete {} of {} records:", plan.len(), all.len());
        }
        for (s, why) in &plan {
            let r = &s.record;
            let file = s.path.strip_prefix(&project.root).unwrap_or(&s.path).display().to_string();
            println!("  {}  {:<10}  {}  {}  ({why}; {file})", r.id, r.category, day(r), one_line(&r.title));
        }
        if !apply && !plan.is_empty() {
            println!("nothing deleted: run `engine memory gc --apply` to delete them");
        }
    }
    Ok(apply && !plan.is_empty())
}

fn export(store: &MemoryStore, file: Option<&Path>) -> Result<()> {
    let all = store.load()?;
    let mut text = String::new();
    for s in &all {
        text.push_str(&serde_json::to_string(&s.record)?);
        text.push('\n');
    }
    match file {
        Some(path) => {
            crate::cli::output::OutFile::write(path, text.as_bytes())?;
            eprintln!("engine: exported {} memory records to {}", all.len(), path.display());
        }
        None => {
            std::io::stdout().lock().write_all(text.as_bytes())?;
            eprintln!("engine: exported {} memory records", all.len());
        }
    }
    Ok(())
}

/// One line of an import: a record, ready to add, or why it is not one.
fn import_line(line: &str) -> std::result::Result<MemoryRecord, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    if !value.is_object() {
        return Err("not a JSON object".into());
    }
    let mut r: MemoryRecord = serde_json::from_value(value).map_err(|e| format!("not a memory record: {e}"))?;
    if r.category.trim().is_empty() {
        r.category = memory::category::NOTE.into();
    }
    if r.source.is_empty() {
        r.source = "import".into();
    }
    if r.created.is_empty() {
        r.created = memory::now_rfc3339();
    }
    if r.updated.is_empty() {
        r.updated = r.created.clone();
    }
    for (what, text) in [("title", &r.title), ("content", &r.content)] {
        memory::refuse_secret(what, text).map_err(|e| e.to_string())?;
    }
    r.seal();
    if r.id.is_empty() {
        r.id = r.hash[..12].to_string();
    }
    memory::validate(&r).map_err(|e| e.to_string())?;
    Ok(r)
}

fn import(store: &MemoryStore, out: &Out, file: &Path) -> Result<bool> {
    let (name, bytes) = if file == Path::new("-") {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).context("reading stdin")?;
        ("stdin".to_string(), b)
    } else {
        let b = std::fs::read(file).map_err(|e| invalid(format!("cannot read {}: {e}", file.display())))?;
        (file.display().to_string(), b)
    };
    let text = String::from_utf8(bytes).map_err(|_| invalid(format!("{name} is not UTF-8 text")))?;
    // A byte order mark is how some editors start a UTF-8 file; it is not part of the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut records = Vec::new();
    let mut bad = Vec::new();
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match import_line(line) {
            Ok(r) => match first_line_of.get(&r.id) {
                Some(first) => bad.push(format!("line {}: id {} is also on line {first}", i + 1, r.id)),
                None => {
                    first_line_of.insert(r.id.clone(), i + 1);
                    records.push(r)
                }
            },
            Err(why) => bad.push(format!("line {}: {}", i + 1, one_line(&why))),
        }
    }
    if !bad.is_empty() {
        let more = if bad.len() > 10 { format!("; and {} more", bad.len() - 10) } else { String::new() };
        return Err(invalid(format!(
            "{name}: {} bad line(s), nothing imported: {}{more}",
            bad.len(),
            bad[..bad.len().min(10)].join("; ")
        )));
    }
    let n = records.len();
    let (mut written, mut updated, mut unchanged) = (0, 0, 0);
    for added in store.add_all(records)? {
        match added {
            Added::Written(_) => written += 1,
            Added::Updated(_) => updated += 1,
            Added::Unchanged(_) => unchanged += 1,
        }
    }
    if out.json {
        out.value(&serde_json::json!({"records": n, "written": written, "updated": updated, "unchanged": unchanged}))?;
    } else {
        println!("imported {n} records from {name}: {written} written, {updated} updated, {unchanged} unchanged");
    }
    Ok(written + updated > 0)
}

fn capture(project: &Project, out: &Out, settings: &Settings, transcript: &Path, reason: Option<&str>) -> Result<bool> {
    if !transcript.is_file() {
        return Err(invalid(format!("no transcript at {}", transcript.display())));
    }
    let r = crate::memory::capture::capture(
        transcript,
        &project.root,
        crate::memory::capture::Trigger::Manual,
        reason,
        &settings.capture,
    )?;
    if out.json {
        out.value(&serde_json::json!({
            "transcript": transcript.display().to_string(),
            "session_id": r.session_id,
            "found": r.found,
            "written": r.written,
            "updated": r.updated,
            "unchanged": r.unchanged,
            "lines": r.stats.lines,
            "invalid_lines": r.stats.invalid,
            "oversized_lines": r.stats.oversized,
            "unknown_lines": r.stats.unknown,
        }))?;
    } else {
        println!(
            "{}: {} records found (session {}); {} written, {} updated, {} unchanged",
            shown(transcript),
            r.found,
            r.session_id.as_deref().unwrap_or("unknown"),
            r.written,
            r.updated,
            r.unchanged
        );
        if r.stats.invalid + r.stats.oversized > 0 {
            eprintln!(
                "engine: {} of {} lines skipped ({} not JSON, {} too long)",
                r.stats.invalid + r.stats.oversized,
                r.stats.lines,
                r.stats.invalid,
                r.stats.oversized
            );
        }
    }
    Ok(r.written + r.updated > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_edit_of_an_earlier_run_is_not_in_the_way() {
        let stem = format!("engine-memory-test-{}", std::process::id());
        let (first, _) = new_private_file(&stem).unwrap();
        let (second, _) = new_private_file(&stem).unwrap();
        assert_ne!(first, second);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&second).unwrap().permissions().mode() & 0o777, 0o600);
        for p in [first, second] {
            std::fs::remove_file(p).unwrap();
        }
    }
}
