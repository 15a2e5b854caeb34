//! One module per command, each with a `run` taking its flags (and the `--config` file where it
//! reads settings) and returning the exit code.

pub(super) mod chunks;
pub(super) mod config;
pub(super) mod embed;
pub(super) mod eval;
pub(super) mod export;
pub(super) mod hook;
pub(super) mod index;
pub(super) mod mcp;
pub(super) mod memory;
pub(super) mod models;
pub(super) mod push;
pub(super) mod search;
pub(super) mod serve;
pub(super) mod status;

use anyhow::Result;
use std::path::PathBuf;

/// The index a command reads: `--index`, else the nearest `.engine/` of the user's above the
/// current directory (an index of someone else's is named and skipped).
pub(super) fn index_dir(index: Option<PathBuf>) -> Result<PathBuf> {
    match index {
        Some(dir) => Ok(dir),
        None => {
            let cwd = std::env::current_dir()?;
            let found = crate::index::store::find_index(&cwd);
            for why in &found.distrusted {
                eprintln!("engine: {why}");
            }
            found.index.ok_or_else(|| crate::Error::IndexMissing { path: cwd.join(".engine") }.into())
        }
    }
}
