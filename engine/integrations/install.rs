//! What the install commands share: the report of what `install` or `uninstall` changed in a
//! settings file.

use std::path::PathBuf;

/// What install or uninstall did.
#[derive(Debug, PartialEq)]
pub struct InstallReport {
    /// Events (hook) or servers (MCP) whose entries were added (install) or removed (uninstall).
    pub changed: Vec<String>,
    /// Where install saved the file as it was before (only ever a file without our entries).
    pub backup: Option<PathBuf>,
}
