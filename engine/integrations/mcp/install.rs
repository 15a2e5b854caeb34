//! `engine mcp install` / `uninstall`: the server's entry in Claude Code's MCP configuration —
//! `.mcp.json` at the project root (project scope, shared through git, running `engine` from
//! PATH), the project's entry under `projects` in `~/.claude.json` (local scope: this machine,
//! where `claude mcp add --scope local` puts it), or the `mcpServers` of `~/.claude.json` (user
//! scope). Merge-safe like `engine hook install`: every other key stays, in its order; the file as
//! it was is kept as `FILE.bak` (only ever a file without the engine's entry); writes are atomic
//! and follow a symlinked file; a file that is not valid JSON is reported and left alone.
//! Uninstall removes exactly the entry install wrote.

use crate::error::{Error, Result};
use crate::files::atomic::write_atomic;
use crate::integrations::install::{InstallReport, Scope};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The server's name in `mcpServers` (Claude Code shows its tools as `mcp__engine__search`, …).
pub const SERVER_NAME: &str = "engine";

/// Where an install writes: a file, and for the local scope the project's key under `projects`.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// `.mcp.json` or `~/.claude.json`.
    pub path: PathBuf,
    /// The project whose `mcpServers` are meant (`None`: the file's own `mcpServers`).
    pub project: Option<String>,
}

impl Target {
    /// A file's own `mcpServers`.
    pub fn file(path: &Path) -> Target {
        Target { path: path.to_path_buf(), project: None }
    }
}

/// Where `scope` writes, run in the directory `cwd`: `.mcp.json` there, or `~/.claude.json` for
/// the user or, keyed by the project ([`crate::integrations::install::project_root`]), locally.
pub fn target(scope: Scope, cwd: &Path) -> Result<Target> {
    let home = || -> Result<PathBuf> {
        let home = std::env::var_os("HOME").ok_or_else(|| Error::InvalidInput("HOME is not set".into()))?;
        Ok(PathBuf::from(home).join(".claude.json"))
    };
    Ok(match scope {
        Scope::Project => Target::file(&cwd.join(".mcp.json")),
        Scope::User => Target::file(&home()?),
        Scope::Local => Target {
            path: home()?,
            project: Some(crate::integrations::install::project_root(cwd).display().to_string()),
        },
    })
}

/// The entry install writes for the binary `exe` (the bare `engine` of a project install, or a
/// path).
pub fn entry(exe: &Path) -> Value {
    json!({"type": "stdio", "command": exe.display().to_string(), "args": ["mcp"], "env": {}})
}

/// A plugin's `.mcp.json` (`engine mcp print-config --plugin`): the plugin's own binary.
pub fn plugin_config() -> Value {
    let command = format!("{}/bin/engine", crate::integrations::hook::PLUGIN_ROOT);
    json!({"mcpServers": {SERVER_NAME: {"command": command, "args": ["mcp"]}}})
}

/// Whether an `mcpServers` entry is one install wrote: it runs `… mcp` (whatever the binary is
/// called) with nothing after it.
fn is_ours(entry: &Value) -> bool {
    entry["args"].as_array().is_some_and(|a| a.len() == 1 && a[0] == "mcp") && entry["command"].is_string()
}

/// The object holding `mcpServers` in the file's JSON `top`: the top level, or the project's
/// entry under `projects` (created when `create`).
fn holder<'a>(top: &'a mut Value, target: &Target, create: bool) -> Result<Option<&'a mut Map<String, Value>>> {
    let not_object =
        |what: &str| Error::InvalidInput(format!("{}: {what} is not an object; left unchanged", target.path.display()));
    let Some(top) = top.as_object_mut() else { return Err(not_object("the top level")) };
    let Some(project) = &target.project else { return Ok(Some(top)) };
    if !create && top.get("projects").is_none_or(|p| p.get(project).is_none()) {
        return Ok(None);
    }
    let projects = top.entry("projects").or_insert_with(|| json!({}));
    let projects = projects.as_object_mut().ok_or_else(|| not_object("\"projects\""))?;
    let entry = projects.entry(project.clone()).or_insert_with(|| json!({}));
    entry.as_object_mut().map(Some).ok_or_else(|| not_object(&format!("projects.{project}")))
}

/// Adds (or points at `exe` again) the `engine` server where `target` says, keeping everything
/// else. Idempotent: nothing is written when the same entry is there.
pub fn install_at(target: &Target, exe: &Path) -> Result<InstallReport> {
    let path = &target.path;
    let crate::files::json::JsonFile { text: old_text, value: old } = crate::files::json::read(path)?;
    let mut new = old.clone();
    let top = holder(&mut new, target, true)?.expect("created");
    let had_ours = top.get("mcpServers").is_some_and(|s| s.get(SERVER_NAME).is_some());
    let servers = top.entry("mcpServers").or_insert_with(|| json!({}));
    let Some(servers) = servers.as_object_mut() else {
        return Err(Error::InvalidInput(format!(
            "{}: \"mcpServers\" is not an object; left unchanged",
            path.display()
        )));
    };
    let wanted = entry(exe);
    match servers.get(SERVER_NAME) {
        Some(e) if !is_ours(e) => {
            return Err(Error::InvalidInput(format!(
                "{}: mcpServers.{SERVER_NAME} is another server (not `… mcp`); left unchanged",
                path.display()
            )))
        }
        Some(e) if e["command"] == wanted["command"] => {
            return Ok(InstallReport { changed: Vec::new(), backup: None, left: None })
        }
        // An earlier install of a binary elsewhere: point it at this one, keeping its other keys.
        Some(_) => servers[SERVER_NAME]["command"] = wanted["command"].clone(),
        None => {
            servers.insert(SERVER_NAME.into(), wanted);
        }
    }
    let backup = match &old_text {
        Some(text) if !had_ours => Some(crate::files::json::backup(path, text)?),
        _ => None,
    };
    write_atomic(path, crate::files::json::render(&new, old_text.as_deref()).as_bytes())?;
    Ok(InstallReport { changed: vec![SERVER_NAME.to_string()], backup, left: None })
}

/// Removes the entry install wrote; other servers and keys stay. An `mcpServers` (and a local
/// project's entry) left empty goes; the file is then left as install found it, as `engine hook
/// uninstall` leaves settings ([`crate::files::json::write_uninstalled`]).
pub fn uninstall_at(target: &Target) -> Result<InstallReport> {
    let path = &target.path;
    let crate::files::json::JsonFile { text: old_text, value: old } = crate::files::json::read(path)?;
    let nothing = InstallReport { changed: Vec::new(), backup: None, left: None };
    let mut new = old.clone();
    let Some(top) = holder(&mut new, target, false)? else { return Ok(nothing) };
    if !top.get("mcpServers").and_then(|s| s.get(SERVER_NAME)).is_some_and(is_ours) {
        return Ok(nothing);
    }
    let servers = top.get_mut("mcpServers").and_then(Value::as_object_mut).expect("checked above");
    servers.shift_remove(SERVER_NAME);
    if servers.is_empty() {
        top.shift_remove("mcpServers");
    }
    let emptied = top.is_empty();
    if let (Some(project), true) = (&target.project, emptied) {
        let projects = new["projects"].as_object_mut().expect("holds the project");
        projects.shift_remove(project);
        if projects.is_empty() {
            new.as_object_mut().expect("an object").shift_remove("projects");
        }
    }
    let left = crate::files::json::write_uninstalled(path, &new, old_text.as_deref())?;
    Ok(InstallReport { changed: vec![SERVER_NAME.to_string()], backup: None, left: Some(left) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(path: &Path, exe: &Path) -> Result<InstallReport> {
        install_at(&Target::file(path), exe)
    }

    fn uninstall(path: &Path) -> Result<InstallReport> {
        uninstall_at(&Target::file(path))
    }

    #[test]
    fn install_merges_in_place_and_uninstall_restores_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude.json");
        let original = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  },\n  \"projects\": {}\n}\n";
        std::fs::write(&path, original).unwrap();
        let exe = Path::new("/opt/bin/engine");
        let r = install(&path, exe).unwrap();
        assert_eq!(r.changed, ["engine"]);
        assert_eq!(std::fs::read_to_string(r.backup.unwrap()).unwrap(), original);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["numStartups", "mcpServers", "projects"], "key order kept");
        assert_eq!(v["mcpServers"]["engine"]["args"], json!(["mcp"]));
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert!(install(&path, exe).unwrap().changed.is_empty(), "idempotent");
        let moved = install(&path, Path::new("/usr/local/bin/engine")).unwrap();
        assert_eq!((moved.changed.len(), moved.backup), (1, None), "repointed; the original backup kept");
        assert_eq!(uninstall(&path).unwrap().changed, ["engine"]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        assert!(uninstall(&path).unwrap().changed.is_empty());
    }

    #[test]
    fn a_new_project_file_comes_and_goes_and_foreign_entries_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        install(&path, Path::new("/e/engine")).unwrap();
        assert!(path.exists());
        uninstall(&path).unwrap();
        assert!(!path.exists(), "install created it, uninstall removes it");
        std::fs::write(&path, r#"{"mcpServers":{"engine":{"command":"npx","args":["some-engine"]}}}"#).unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        assert!(install(&path, Path::new("/e/engine")).unwrap_err().to_string().contains("another server"));
        assert!(uninstall(&path).unwrap().changed.is_empty());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        std::fs::write(&path, "{ not json").unwrap();
        assert!(install(&path, Path::new("/e/engine")).unwrap_err().to_string().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
    }
}
