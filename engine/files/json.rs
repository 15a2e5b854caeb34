//! A user's JSON configuration file as `engine hook install` and `engine mcp install` edit it
//! (Claude Code's `settings.json`, `.mcp.json`, `~/.claude.json`): read leniently (no file or a
//! blank one is `{}`), written back in the file's own key order, the original kept as `FILE.bak`.

use crate::error::{Error, Result};
use crate::files::atomic::write_atomic;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A file as found: its text (`None` when there is no file) and its JSON (`{}` when there is no
/// file or it is blank).
pub(crate) struct JsonFile {
    pub text: Option<String>,
    pub value: Value,
}

/// Reads `path`; a file that is not valid JSON is an error saying it is left unchanged.
pub(crate) fn read(path: &Path) -> Result<JsonFile> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let value = if text.trim().is_empty() {
                serde_json::json!({})
            } else {
                serde_json::from_str(&text).map_err(|e| {
                    Error::InvalidInput(format!("{} is not valid JSON ({e}); left unchanged", path.display()))
                })?
            };
            Ok(JsonFile { text: Some(text), value })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(JsonFile { text: None, value: serde_json::json!({}) }),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// `value` as install and uninstall write it: pretty JSON in the file's own key order
/// (serde_json's `preserve_order`), ending in a newline when the file did or is new.
pub(crate) fn render(value: &Value, old_text: Option<&str>) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    if old_text.is_none_or(|t| t.ends_with('\n')) {
        text.push('\n');
    }
    text
}

/// Where install keeps the user's file as it was: `settings.json.bak` next to the path given.
pub(crate) fn backup_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".bak");
    PathBuf::from(p)
}

/// Saves `text` (the file as it was) at [`backup_path`], before the file itself is touched: a
/// failure here changes nothing, and says so.
pub(crate) fn backup(path: &Path, text: &str) -> Result<PathBuf> {
    let b = backup_path(path);
    write_atomic(&b, text.as_bytes()).map_err(|e| match e {
        Error::Io { source, .. } => {
            Error::io(format!("backing up {} to {} (nothing changed)", path.display(), b.display()), source)
        }
        other => other,
    })?;
    Ok(b)
}

/// What uninstall did to the file beyond removing its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// The file, rewritten without the entries.
    Written,
    /// The backup install made held exactly what is left: it is back in place byte for byte, and
    /// the backup is gone.
    Restored,
    /// Install created the file and nothing but its entries was ever in it: the file is gone (and
    /// a `.claude` directory it leaves empty).
    Removed,
}

/// Writes what uninstall leaves of a file (`new`, read from `old_text`) so the project is as install
/// found it: the original bytes again when the backup install made holds exactly `new` (nothing
/// else changed since), no file at all when there is no backup and `new` is empty (install created
/// it: a file that existed is always backed up), else `new` written in place, the backup kept.
pub(crate) fn write_uninstalled(path: &Path, new: &Value, old_text: Option<&str>) -> Result<Left> {
    let target = crate::files::atomic::resolve_links(path);
    let backup = backup_path(path);
    match std::fs::read(&backup) {
        Ok(original) if serde_json::from_slice::<Value>(&original).is_ok_and(|v| v == *new) => {
            write_atomic(path, &original)?;
            std::fs::remove_file(&backup).map_err(|e| Error::io(format!("removing {}", backup.display()), e))?;
            return Ok(Left::Restored);
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if new.as_object().is_some_and(serde_json::Map::is_empty) {
                std::fs::remove_file(&target).map_err(|e| Error::io(format!("removing {}", target.display()), e))?;
                // Install made `.claude/` for the file when it was missing; an empty one goes too
                // (remove_dir leaves a directory that holds anything).
                if let Some(dir) = path.parent().filter(|d| d.file_name().is_some_and(|n| n == ".claude")) {
                    let _ = std::fs::remove_dir(dir);
                }
                return Ok(Left::Removed);
            }
        }
        Err(e) => return Err(Error::io(format!("reading {}", backup.display()), e)),
    }
    write_atomic(path, render(new, old_text).as_bytes())?;
    Ok(Left::Written)
}
