//! What the install commands share: where each scope writes, which program the entries run, and
//! the report of what `install` or `uninstall` changed.
//!
//! A project file (`.claude/settings.json`, `.mcp.json`) is committed and read on every teammate's
//! machine, so it names the bare program `engine`, found on each machine's `PATH`; writing one is
//! refused unless `engine` on this `PATH` is this very binary (a file pointing at another build
//! would run something other than what was tested). Local and user files stay on this machine and
//! name the binary by its absolute path.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// What install or uninstall did.
#[derive(Debug, PartialEq)]
pub struct InstallReport {
    /// Events (hook) or servers (MCP) whose entries were added (install) or removed (uninstall).
    pub changed: Vec<String>,
    /// Where install saved the file as it was before (only ever a file without our entries).
    pub backup: Option<PathBuf>,
    /// What uninstall left of the file, when it changed it.
    pub left: Option<Left>,
}

pub use crate::files::json::Left;

/// Which Claude Code file an install writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Shared with the team through git: the entries run `engine` from `PATH`.
    Project,
    /// This machine, this project, not committed: the absolute path of this binary.
    Local,
    /// This machine, every project: the absolute path of this binary.
    User,
}

/// The name a project file runs: resolved from each machine's `PATH`.
pub const BARE: &str = "engine";

/// The program an install in `scope` writes, for the running binary `exe`: the absolute path,
/// or for the project scope the bare [`BARE`] once `path_var` (the `PATH` value) is checked to
/// lead to `exe`. The error names the fix.
pub fn program_for(scope: Scope, exe: &Path, path_var: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    if scope != Scope::Project {
        return Ok(exe.to_path_buf());
    }
    let fix = "install it there (`cargo install --path .` in the checkout), or write a file for this machine \
               only with --local (or --user)";
    let Some(found) = path_var.and_then(|p| on_path(BARE, p)) else {
        return Err(Error::InvalidInput(format!(
            "a project install writes the command `{BARE}` for every teammate's PATH, but `{BARE}` is not on \
             this PATH; {fix}"
        )));
    };
    if !same_binary(&found, exe) {
        return Err(Error::InvalidInput(format!(
            "a project install writes the command `{BARE}`, but `{BARE}` on this PATH is {}, not this binary ({}); \
             run the install with that one (`{BARE} hook install`), put this one first on PATH, or {fix}",
            found.display(),
            exe.display()
        )));
    }
    Ok(PathBuf::from(BARE))
}

/// The first executable file called `name` in the directories of a `PATH` value.
fn on_path(name: &str, path_var: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Whether two paths run the same program: the same file, or a copy holding the same bytes.
fn same_binary(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) if x == y => true,
        (Ok(x), Ok(y)) => {
            let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
            size(&x).is_some() && size(&x) == size(&y) && std::fs::read(&x).ok() == std::fs::read(&y).ok()
        }
        _ => false,
    }
}

/// The project Claude Code keys a directory's local settings by: the top of the git work tree
/// holding it (a `.git` directory or file), else the directory itself, symlinks resolved — as
/// `claude mcp add --scope local` does.
pub fn project_root(cwd: &Path) -> PathBuf {
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(&cwd).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn executable(path: &Path, bytes: &[u8]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_project_install_names_engine_only_when_path_leads_to_this_binary() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("build/engine");
        executable(&exe, b"this build");
        let path = |dirs: &[&str]| {
            std::env::join_paths(dirs.iter().map(|d| dir.path().join(d))).unwrap().into_string().unwrap()
        };
        // Local and user scopes keep the absolute path, whatever PATH holds.
        for scope in [Scope::Local, Scope::User] {
            assert_eq!(program_for(scope, &exe, None).unwrap(), exe);
        }
        let err = program_for(Scope::Project, &exe, Some(path(&["none"]).as_ref())).unwrap_err().to_string();
        assert!(err.contains("`engine` is not on this PATH") && err.contains("cargo install --path ."), "{err}");
        assert!(err.contains("--local"), "{err}");
        // A non-executable file of that name is not a command.
        std::fs::create_dir_all(dir.path().join("plain")).unwrap();
        std::fs::write(dir.path().join("plain/engine"), b"x").unwrap();
        assert!(program_for(Scope::Project, &exe, Some(path(&["plain"]).as_ref())).is_err());
        // Another build first on PATH: refused, naming both.
        executable(&dir.path().join("old/engine"), b"an older build");
        let err = program_for(Scope::Project, &exe, Some(path(&["old", "build"]).as_ref())).unwrap_err().to_string();
        assert!(err.contains("old/engine, not this binary") && err.contains("build/engine"), "{err}");
        // This binary, a symlink to it, or a copy of its bytes: the bare name.
        for first in ["build", "link", "copy"] {
            if first == "link" {
                std::fs::create_dir_all(dir.path().join("link")).unwrap();
                std::os::unix::fs::symlink(&exe, dir.path().join("link/engine")).unwrap();
            }
            if first == "copy" {
                executable(&dir.path().join("copy/engine"), b"this build");
            }
            let got = program_for(Scope::Project, &exe, Some(path(&[first, "old"]).as_ref())).unwrap();
            assert_eq!(got, Path::new("engine"), "{first}");
        }
    }

    #[test]
    fn the_local_project_is_the_git_work_tree_above_else_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.join("repo/src/deep")).unwrap();
        std::fs::create_dir_all(root.join("loose/sub")).unwrap();
        assert_eq!(project_root(&root.join("repo/src/deep")), root.join("repo"));
        assert_eq!(project_root(&root.join("loose/sub")), root.join("loose/sub"));
        std::os::unix::fs::symlink(root.join("repo/src"), root.join("alias")).unwrap();
        assert_eq!(project_root(&root.join("alias")), root.join("repo"), "symlinks resolved");
    }
}
