//! Files replaced atomically: a reader (Claude Code reading its settings, the indexer reading a
//! memory record) sees the old file or the new one, never half of either.

use crate::error::Result;
use std::path::{Path, PathBuf};

/// `path` with symlinks followed to the file they name (even one that does not exist yet), so a
/// write replaces that file and the link stays a link (dotfile managers link settings.json).
pub(crate) fn resolve_links(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    // The kernel gives up after 40 links too; reading such a path then fails with its error.
    for _ in 0..40 {
        let Ok(next) = std::fs::read_link(&p) else { break };
        p = match p.parent() {
            Some(dir) => dir.join(next),
            None => next,
        };
    }
    p
}

/// Replaces the file `path` leads to with `bytes`, atomically: a temporary file in the same
/// directory (so the rename cannot cross file systems), synced, renamed over it. The file keeps
/// its permissions. On failure the temporary file is removed and the file is left as it was.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let target = resolve_links(path);
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| crate::Error::io(format!("creating {}", dir.display()), e))?;
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // The pid keeps two installs running at once from writing into one temporary file.
    let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
    let written = (|| {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        if let Ok(m) = std::fs::metadata(&target) {
            f.set_permissions(m.permissions())?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::Error::io(format!("writing {}", target.display()), e)
    })
}

/// [`write_atomic`] for a file only its owner may read or write (mode 0600), in a directory that
/// must exist: caches and state of the user's own.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let written = (|| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::Error::io(format!("writing {}", path.display()), e)
    })
}

/// Renames `from` to `to` unless `to` exists: `Ok(false)`, nothing changed, when it does. One
/// step where the system has one (Linux's `renameat2` with `RENAME_NOREPLACE`); elsewhere, or on
/// a file system without it, a hard link (which never replaces a file) then the old name removed.
pub(crate) fn rename_no_clobber(from: &Path, to: &Path) -> std::io::Result<bool> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
        let (f, t) = (c(from)?, c(to)?);
        // SAFETY: two NUL-terminated paths that outlive the call.
        let rc =
            unsafe { libc::renameat2(libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), libc::RENAME_NOREPLACE) };
        if rc == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EEXIST) => return Ok(false),
            Some(libc::EINVAL | libc::ENOSYS) => {}
            _ => return Err(e),
        }
    }
    match std::fs::hard_link(from, to) {
        Ok(()) => std::fs::remove_file(from).map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}
