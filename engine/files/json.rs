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
