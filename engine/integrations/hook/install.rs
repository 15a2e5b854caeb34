//! `engine hook install` / `uninstall`: the engine's hook entries merged into (and taken out of)
//! a Claude Code settings file, everything else in it kept as it was.

use crate::error::Result;
use crate::files::atomic::write_atomic;
use crate::integrations::install::InstallReport;
use serde_json::Value;
use std::path::Path;

/// The hook entries `engine hook install` adds: (event, matcher, timeout in seconds).
pub(crate) const ENTRIES: [(&str, Option<&str>, u64); 5] = [
    ("UserPromptSubmit", None, 5),
    ("SessionStart", None, 30),
    ("PostToolUse", Some("Edit|Write|NotebookEdit|MultiEdit"), 5),
    ("PreCompact", None, 30),
    ("SessionEnd", None, 30),
];

/// Ends every command install writes. Claude Code runs hook commands through a shell, which takes
/// it for a comment; install and uninstall know their own entries by it, whatever the binary is
/// called (`engine-dev`, a copy under another name).
pub(crate) const MARKER: &str = "# engine-hook";

/// The command a hook entry runs.
pub fn hook_command(exe: &Path) -> String {
    let p = exe.display().to_string();
    let program = if p.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        p
    } else {
        format!("'{}'", p.replace('\'', "'\\''"))
    };
    format!("{program} hook {MARKER}")
}

/// Whether install added this hook command: it ends with the marker, or it is an entry written
/// before the marker existed (`…/engine hook`), so those installs still uninstall cleanly.
fn is_ours(command: &str) -> bool {
    let command = command.trim_end();
    if command.strip_suffix(MARKER).is_some_and(|rest| rest.ends_with(char::is_whitespace)) {
        return true;
    }
    let Some(program) = command.strip_suffix(" hook") else { return false };
    let program = program.trim_matches('\'');
    Path::new(program).file_name().is_some_and(|n| n == "engine")
}

/// Whether any hook of any event in these settings is one install added.
fn has_ours(settings: &Value) -> bool {
    settings["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|events| events.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|entry| entry["hooks"].as_array())
        .flatten()
        .any(|h| h["command"].as_str().is_some_and(is_ours))
}

/// Merges the engine's hook entries into a Claude Code settings file, keeping everything else.
/// Idempotent: events that already run an engine hook (any binary's) are left alone.
pub fn install(path: &Path, exe: &Path) -> Result<InstallReport> {
    let old = crate::files::json::read(path)?;
    let mut new = old.value.clone();
    if !new.is_object() {
        return Err(crate::Error::InvalidInput(format!(
            "{}: top level is not an object; left unchanged",
            path.display()
        )));
    }
    let command = hook_command(exe);
    let mut changed = Vec::new();
    let hooks = new.as_object_mut().expect("checked").entry("hooks").or_insert_with(|| serde_json::json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(crate::Error::InvalidInput(format!(
            "{}: \"hooks\" is not an object; left unchanged",
            path.display()
        )));
    };
    for (event, matcher, timeout) in ENTRIES {
        let list = hooks.entry(event).or_insert_with(|| serde_json::json!([]));
        let Some(list) = list.as_array_mut() else {
            return Err(crate::Error::InvalidInput(format!(
                "{}: hooks.{event} is not an array; left unchanged",
                path.display()
            )));
        };
        let present = list.iter().any(|entry| {
            entry["hooks"].as_array().is_some_and(|hs| hs.iter().any(|h| h["command"].as_str().is_some_and(is_ours)))
        });
        if present {
            continue;
        }
        let mut entry = serde_json::json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]});
        if let Some(m) = matcher {
            entry["matcher"] = Value::String(m.to_string());
        }
        list.push(entry);
        changed.push(event.to_string());
    }
    if changed.is_empty() {
        return Ok(InstallReport { changed, backup: None });
    }
    // The backup is the user's own file. One that already holds entries of ours is the result of
    // an earlier install (or a partial one): saving it would overwrite the real original.
    let backup = match &old.text {
        Some(text) if !has_ours(&old.value) => Some(crate::files::json::backup(path, text)?),
        _ => None,
    };
    write_atomic(path, crate::files::json::render(&new, old.text.as_deref()).as_bytes())?;
    Ok(InstallReport { changed, backup })
}

/// Removes exactly the entries install added (by the marker, or old-style `…/engine hook`);
/// other hooks and settings stay, in their order. Writes no backup: the file it changes holds our
/// entries, and the backup is kept for the user's own file.
pub fn uninstall(path: &Path) -> Result<InstallReport> {
    let old = crate::files::json::read(path)?;
    let mut new = old.value.clone();
    let mut changed = Vec::new();
    if let Some(hooks) = new.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, _, _) in ENTRIES {
            let Some(list) = hooks.get_mut(event).and_then(Value::as_array_mut) else { continue };
            let mut removed = false;
            list.retain_mut(|entry| {
                let Some(hs) = entry.get_mut("hooks").and_then(Value::as_array_mut) else { return true };
                let before = hs.len();
                hs.retain(|h| !h["command"].as_str().is_some_and(is_ours));
                if hs.len() == before {
                    return true;
                }
                removed = true;
                // An entry that held only our hook goes with it; the user's own empty ones stay.
                !hs.is_empty()
            });
            if removed {
                changed.push(event.to_string());
                if list.is_empty() {
                    // shift_remove: `remove` would move the last key into this one's place.
                    hooks.shift_remove(event);
                }
            }
        }
        if !changed.is_empty() && hooks.is_empty() {
            new.as_object_mut().expect("has hooks, so an object").shift_remove("hooks");
        }
    }
    if !changed.is_empty() {
        write_atomic(path, crate::files::json::render(&new, old.text.as_deref()).as_bytes())?;
    }
    Ok(InstallReport { changed, backup: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_merges_idempotently_and_uninstall_removes_exactly_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let original = serde_json::json!({
            "model": "opus",
            "hooks": {
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "other-tool check", "timeout": 3}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]
            }
        });
        std::fs::write(&path, serde_json::to_string_pretty(&original).unwrap()).unwrap();
        let exe = Path::new("/opt/bin/engine");
        let r = install(&path, exe).unwrap();
        assert_eq!(r.changed, ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        let backup = r.backup.unwrap();
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(backup).unwrap()).unwrap(), original);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"], "/opt/bin/engine hook # engine-hook");
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Edit|Write|NotebookEdit|MultiEdit");
        // Idempotent: a second install changes nothing (even from another build's path).
        let again = install(&path, Path::new("/usr/local/bin/engine")).unwrap();
        assert!(again.changed.is_empty() && again.backup.is_none());
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(), v);
        // Uninstall: back to the original.
        let r = uninstall(&path).unwrap();
        assert_eq!(r.changed.len(), 5);
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(), original);
        // Broken JSON is never overwritten.
        std::fs::write(&path, "{ not json").unwrap();
        assert!(install(&path, exe).unwrap_err().to_string().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        // A path with spaces is quoted.
        assert_eq!(hook_command(Path::new("/my tools/engine")), "'/my tools/engine' hook # engine-hook");
        assert!(is_ours("'/my tools/engine' hook # engine-hook"));
    }

    #[test]
    fn entries_are_recognised_by_the_marker_or_as_old_style_engine_hooks() {
        for ours in [
            "/opt/eng2 hook # engine-hook",
            "'/my tools/engine-dev' hook # engine-hook  ",
            "/usr/local/bin/engine hook",
            "'/my tools/engine' hook",
        ] {
            assert!(is_ours(ours), "{ours:?}");
        }
        for theirs in ["/opt/eng2 hook", "other-tool check", "notify #engine-hook", "/usr/bin/engine hook --plain", ""]
        {
            assert!(!is_ours(theirs), "{theirs:?}");
        }
    }

    /// A settings file in the layout install writes (two-space pretty JSON), keys deliberately
    /// out of alphabetical order, with a user hook and an empty entry of the user's own.
    /// A user's settings file with hooks of other tools, an empty entry and keys out of order.
    const ORIGINAL: &str = include_str!("../../../tests/data/claude-settings.json");

    #[test]
    fn another_binary_name_installs_once_keeps_the_original_and_uninstalls_to_it_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, ORIGINAL).unwrap();
        let r = install(&path, Path::new("/opt/tools/eng2")).unwrap();
        assert_eq!(r.changed, ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        let backup = r.backup.unwrap();
        assert_eq!(backup, dir.path().join("settings.json.bak"));
        let installed = std::fs::read_to_string(&path).unwrap();
        assert!(installed.contains("\"/opt/tools/eng2 hook # engine-hook\""), "{installed}");
        // Key order is the user's: model, permissions (deny before allow), hooks, env (ZED first).
        let at = |k: &str| installed.find(k).unwrap();
        assert!(at("\"model\"") < at("\"permissions\"") && at("\"permissions\"") < at("\"hooks\""));
        assert!(at("\"deny\"") < at("\"allow\"") && at("\"ZED\"") < at("\"ALPHA\""), "{installed}");
        // Installing again, from the same name or another one, adds nothing and keeps the backup.
        for exe in ["/opt/tools/eng2", "/home/me/bin/engine-dev"] {
            let again = install(&path, Path::new(exe)).unwrap();
            assert_eq!(again, InstallReport { changed: vec![], backup: None }, "{exe}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
        }
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), ORIGINAL);
        let r = uninstall(&path).unwrap();
        assert_eq!(r.changed, ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        assert_eq!(r.backup, None);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ORIGINAL, "uninstall restores the file exactly");
        assert_eq!(uninstall(&path).unwrap().changed, Vec::<String>::new());
        // Nothing else was left in the directory (no temporary files).
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["settings.json", "settings.json.bak"]);
    }

    #[test]
    fn old_style_entries_count_as_ours_and_a_modified_file_is_never_backed_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let bak = crate::files::json::backup_path(&path);
        std::fs::write(&bak, "the user's original\n").unwrap();
        // An install from before the marker, of one event only (the user removed the others).
        let old = serde_json::json!({"hooks": {"UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "/usr/local/bin/engine hook", "timeout": 5}]}
        ]}});
        std::fs::write(&path, serde_json::to_string_pretty(&old).unwrap()).unwrap();
        let r = install(&path, Path::new("/opt/eng2")).unwrap();
        assert_eq!(r.changed, ["SessionStart", "PostToolUse", "PreCompact", "SessionEnd"]);
        assert_eq!(r.backup, None, "the file held an entry of ours: not a backup of the user's file");
        assert_eq!(std::fs::read_to_string(&bak).unwrap(), "the user's original\n");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 1, "{v}");
        // Uninstall removes the old-style entry and the new ones alike.
        assert_eq!(uninstall(&path).unwrap().changed.len(), 5);
        assert_eq!(
            serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn a_symlinked_settings_file_stays_a_link_and_its_target_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir(&dotfiles).unwrap();
        std::fs::write(dotfiles.join("claude.json"), ORIGINAL).unwrap();
        let claude = dir.path().join(".claude");
        std::fs::create_dir(&claude).unwrap();
        let link = claude.join("settings.json");
        std::os::unix::fs::symlink("../dotfiles/claude.json", &link).unwrap();
        install(&link, Path::new("/opt/eng2")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(dotfiles.join("claude.json")).unwrap().contains("# engine-hook"));
        assert_eq!(std::fs::read_to_string(claude.join("settings.json.bak")).unwrap(), ORIGINAL);
        uninstall(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(dotfiles.join("claude.json")).unwrap(), ORIGINAL);
        // A link to a file that does not exist yet: the file is created where the link points.
        let dangling = claude.join("other.json");
        std::os::unix::fs::symlink("../dotfiles/new/other.json", &dangling).unwrap();
        install(&dangling, Path::new("/opt/eng2")).unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        assert!(dotfiles.join("new/other.json").is_file());
    }

    #[test]
    fn a_failed_write_leaves_the_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // Renaming a file over a non-empty directory fails (even for root): the write fails
        // after its temporary file was created and written.
        let target = dir.path().join("settings.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "x").unwrap();
        let err = write_atomic(&target, b"{}").unwrap_err().to_string();
        assert!(err.starts_with(&format!("writing {}: ", target.display())), "{err}");
        let names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names, ["settings.json"]);
        assert_eq!(std::fs::read_to_string(target.join("keep")).unwrap(), "x");
    }
}
