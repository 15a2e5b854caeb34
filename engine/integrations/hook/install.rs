//! `engine hook install` / `uninstall`: the engine's hook entries merged into (and taken out of)
//! a Claude Code settings file, everything else in it kept as it was.

use crate::error::Result;
use crate::files::atomic::write_atomic;
use crate::integrations::install::InstallReport;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The hook entries `engine hook install` adds: (event, matcher, timeout in seconds).
pub(crate) const ENTRIES: [(&str, Option<&str>, u64); 6] = [
    ("UserPromptSubmit", None, 5),
    ("SessionStart", None, 30),
    ("PostToolUse", Some("Edit|Write|NotebookEdit|MultiEdit"), 5),
    ("PreCompact", None, 30),
    ("PostCompact", None, 30),
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

/// The root of an installed plugin, as Claude Code substitutes it in a plugin's hook commands.
pub const PLUGIN_ROOT: &str = "${CLAUDE_PLUGIN_ROOT}";

/// One entry of `hooks.<event>`: the matcher (when the event has one) and the hook to run.
fn entry(matcher: Option<&str>, hook: Value) -> Value {
    let mut entry = serde_json::json!({"hooks": [hook]});
    if let Some(m) = matcher {
        entry["matcher"] = Value::String(m.to_string());
    }
    entry
}

/// The `hooks` object for every event the engine handles, each entry's hook made by `hook` from
/// the event's timeout: the one list install and the plugin both take their entries from.
fn hooks_object(hook: impl Fn(u64) -> Value) -> Value {
    let events = ENTRIES
        .iter()
        .map(|(event, matcher, timeout)| (event.to_string(), serde_json::json!([entry(*matcher, hook(*timeout))])));
    Value::Object(events.collect())
}

/// What install writes, as a settings file holding only it (`engine hook print-config`): the
/// entries running `program` (the bare `engine` of a project install, or a path).
pub fn settings_config(program: &Path) -> Value {
    let command = hook_command(program);
    serde_json::json!({"hooks": hooks_object(|timeout| serde_json::json!({"type": "command", "command": command, "timeout": timeout}))})
}

/// A plugin's `hooks/hooks.json` (`engine hook print-config --plugin`): the same events, matchers
/// and timeouts as install, in exec form (no shell between Claude Code and the binary) running the
/// plugin's own `bin/engine hook --plugin`, which steps aside where settings run the engine's hook.
pub fn plugin_config() -> Value {
    let command = format!("{PLUGIN_ROOT}/bin/engine");
    serde_json::json!({
        "description": "engine: project context on each prompt, a digest at session start, memory capture",
        "hooks": hooks_object(|timeout| serde_json::json!(
            {"type": "command", "command": command, "args": ["hook", "--plugin"], "timeout": timeout}
        )),
    })
}

/// The settings file among `files` that runs the engine's own hook (one install added) for
/// `event`, if one does: the plugin's hook then steps aside so the event is handled once.
pub(crate) fn runs_ours(files: &[PathBuf], event: &str) -> Option<PathBuf> {
    // A file that is missing, unreadable or not JSON runs nothing.
    let runs =
        |path: &&PathBuf| crate::files::json::read(path).is_ok_and(|f| event_runs_ours(&f.value["hooks"][event]));
    files.iter().find(runs).cloned()
}

/// Whether one event's entries (`hooks.<event>` of a settings file) run a hook install added.
fn event_runs_ours(entries: &Value) -> bool {
    entries
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["hooks"].as_array())
        .flatten()
        .any(|h| h["command"].as_str().is_some_and(is_ours))
}

/// Points the hooks of ours in one event's entries at `command`: `None` when there is none (the
/// event needs an entry), else whether one ran another program (an earlier install from
/// elsewhere, or by path where a project now wants `engine` from PATH) and was changed in place.
fn repoint(entries: &mut [Value], command: &str) -> Option<bool> {
    let mut present = false;
    let mut changed = false;
    for h in entries.iter_mut().filter_map(|e| e.get_mut("hooks").and_then(Value::as_array_mut)).flatten() {
        if h["command"].as_str().is_some_and(is_ours) {
            present = true;
            if h["command"] != command {
                h["command"] = Value::String(command.to_string());
                changed = true;
            }
        }
    }
    present.then_some(changed)
}

/// Whether any hook of any event in these settings is one install added.
fn has_ours(settings: &Value) -> bool {
    settings["hooks"].as_object().into_iter().flat_map(|events| events.values()).any(event_runs_ours)
}

/// Merges the engine's hook entries into a Claude Code settings file, keeping everything else.
/// Idempotent: an event that already runs this command is left alone; one whose engine hook runs
/// another program (any binary's, recognised by the marker) is pointed at `exe`.
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
        match repoint(list, &command) {
            Some(true) => changed.push(event.to_string()),
            Some(false) => {}
            None => {
                list.push(entry(
                    matcher,
                    serde_json::json!({"type": "command", "command": command, "timeout": timeout}),
                ));
                changed.push(event.to_string());
            }
        }
    }
    if changed.is_empty() {
        return Ok(InstallReport { changed, backup: None, left: None });
    }
    // The backup is the user's own file. One that already holds entries of ours is the result of
    // an earlier install (or a partial one): saving it would overwrite the real original.
    let backup = match &old.text {
        Some(text) if !has_ours(&old.value) => Some(crate::files::json::backup(path, text)?),
        _ => None,
    };
    write_atomic(path, crate::files::json::render(&new, old.text.as_deref()).as_bytes())?;
    Ok(InstallReport { changed, backup, left: None })
}

/// Removes exactly the entries install added (by the marker, or old-style `…/engine hook`);
/// other hooks and settings stay, in their order. The project is left as install found it: the
/// file install created goes, the user's own comes back from its backup byte for byte when nothing
/// else changed ([`crate::files::json::write_uninstalled`]).
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
    let mut left = None;
    if !changed.is_empty() {
        left = Some(crate::files::json::write_uninstalled(path, &new, old.text.as_deref())?);
    }
    Ok(InstallReport { changed, backup: None, left })
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
        assert_eq!(
            r.changed,
            ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "PostCompact", "SessionEnd"]
        );
        let backup = r.backup.unwrap();
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(backup).unwrap()).unwrap(), original);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"], "/opt/bin/engine hook # engine-hook");
        assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Edit|Write|NotebookEdit|MultiEdit");
        // Idempotent: a second install changes nothing.
        let again = install(&path, exe).unwrap();
        assert!(again.changed.is_empty() && again.backup.is_none());
        assert_eq!(serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap(), v);
        // Another build's install points the same entries at it: no duplicates, no new backup.
        let moved = install(&path, Path::new("engine")).unwrap();
        assert_eq!((moved.changed.len(), moved.backup), (ENTRIES.len(), None));
        let w: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(w["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2);
        assert_eq!(w["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"], "engine hook # engine-hook");
        assert_eq!(w["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 30, "only the command changes");
        // Uninstall: back to the original.
        let r = uninstall(&path).unwrap();
        assert_eq!(r.changed.len(), ENTRIES.len());
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

    #[test]
    fn the_plugin_runs_the_events_matchers_and_timeouts_install_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        install(&path, Path::new("engine")).unwrap();
        let installed: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(installed, settings_config(Path::new("engine")), "print-config prints what install writes");
        let plugin = plugin_config();
        let events = |v: &Value| v["hooks"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(events(&plugin), events(&installed));
        for (event, entries) in installed["hooks"].as_object().unwrap() {
            let (ours, theirs) = (&plugin["hooks"][event][0], &entries[0]);
            assert_eq!(ours["matcher"], theirs["matcher"], "{event}");
            assert_eq!(ours["hooks"][0]["timeout"], theirs["hooks"][0]["timeout"], "{event}");
            assert_eq!(ours["hooks"][0]["command"], "${CLAUDE_PLUGIN_ROOT}/bin/engine");
            assert_eq!(ours["hooks"][0]["args"], serde_json::json!(["hook", "--plugin"]));
        }
        assert_eq!(plugin["hooks"]["PostToolUse"][0]["matcher"], "Edit|Write|NotebookEdit|MultiEdit");
    }

    #[test]
    fn the_plugin_steps_aside_for_the_events_a_settings_file_runs_the_engines_hook_for() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let files = [
            dir.path().join("absent.json"),
            file("broken.json", "{ not json"),
            file("other.json", r#"{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "notify"}]}]}}"#),
            file(
                "ours.json",
                r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "engine hook # engine-hook"}]}]}}"#,
            ),
        ];
        assert_eq!(runs_ours(&files, "UserPromptSubmit"), Some(files[3].clone()));
        assert_eq!(runs_ours(&files, "SessionEnd"), None);
        assert_eq!(runs_ours(&files[..3], "UserPromptSubmit"), None);
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
        assert_eq!(
            r.changed,
            ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "PostCompact", "SessionEnd"]
        );
        let backup = r.backup.unwrap();
        assert_eq!(backup, dir.path().join("settings.json.bak"));
        let installed = std::fs::read_to_string(&path).unwrap();
        assert!(installed.contains("\"/opt/tools/eng2 hook # engine-hook\""), "{installed}");
        // Key order is the user's: model, permissions (deny before allow), hooks, env (ZED first).
        let at = |k: &str| installed.find(k).unwrap();
        assert!(at("\"model\"") < at("\"permissions\"") && at("\"permissions\"") < at("\"hooks\""));
        assert!(at("\"deny\"") < at("\"allow\"") && at("\"ZED\"") < at("\"ALPHA\""), "{installed}");
        // Installing again adds nothing; from another binary it only repoints; the backup stays.
        let again = install(&path, Path::new("/opt/tools/eng2")).unwrap();
        assert_eq!(again, InstallReport { changed: vec![], backup: None, left: None });
        assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
        let moved = install(&path, Path::new("/home/me/bin/engine-dev")).unwrap();
        assert_eq!((moved.changed.len(), moved.backup), (ENTRIES.len(), None));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            installed.replace("/opt/tools/eng2 hook", "/home/me/bin/engine-dev hook")
        );
        install(&path, Path::new("/opt/tools/eng2")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), ORIGINAL);
        let r = uninstall(&path).unwrap();
        assert_eq!(
            r.changed,
            ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "PostCompact", "SessionEnd"]
        );
        assert_eq!((r.backup, r.left), (None, Some(crate::integrations::install::Left::Restored)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ORIGINAL, "uninstall restores the file exactly");
        assert_eq!(uninstall(&path).unwrap().changed, Vec::<String>::new());
        // Nothing else was left in the directory: no temporary files, and the backup install made
        // is gone with the entries, since nothing else changed.
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["settings.json"]);
    }

    #[test]
    fn uninstall_leaves_the_project_as_install_found_it() {
        use crate::integrations::install::Left;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude/settings.json");
        // A project without settings: install creates .claude/settings.json, uninstall takes both away.
        install(&path, Path::new("engine")).unwrap();
        assert!(path.is_file());
        assert_eq!(uninstall(&path).unwrap().left, Some(Left::Removed));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no .claude/ left");
        // A .claude/ holding something else of the user's stays, with it.
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(dir.path().join(".claude/commands.md"), "mine").unwrap();
        install(&path, Path::new("engine")).unwrap();
        assert_eq!(uninstall(&path).unwrap().left, Some(Left::Removed));
        assert!(!path.exists() && dir.path().join(".claude/commands.md").is_file());
        // The user's own settings changed while installed: the change is kept, and so is the backup.
        std::fs::write(&path, ORIGINAL).unwrap();
        install(&path, Path::new("engine")).unwrap();
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        v["model"] = Value::String("haiku".into());
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        assert_eq!(uninstall(&path).unwrap().left, Some(Left::Written));
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after["model"], "haiku");
        assert!(!after.to_string().contains("engine-hook"));
        assert_eq!(std::fs::read_to_string(crate::files::json::backup_path(&path)).unwrap(), ORIGINAL);
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
        // The old entry is repointed (and gains the marker), the others are added.
        assert_eq!(
            r.changed,
            ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "PostCompact", "SessionEnd"]
        );
        assert_eq!(r.backup, None, "the file held an entry of ours: not a backup of the user's file");
        assert_eq!(std::fs::read_to_string(&bak).unwrap(), "the user's original\n");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 1, "{v}");
        // Uninstall removes the old-style entry and the new ones alike.
        assert_eq!(uninstall(&path).unwrap().changed.len(), ENTRIES.len());
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
