//! Which model files may be loaded. A models directory found by looking (the per-user data
//! directory, the install or checkout the executable runs from) is used only when the user
//! controls it: the directory and every directory above it owned by the user or root, and none of
//! them writable by group or others, unless it is a sticky directory of root's such as `/tmp`
//! (there nobody can rename or replace another user's entry). The files are held to the same rule
//! and, when the manifest pins them, to their sha256 before they are loaded: the runtime library
//! is code that runs in the process, and a model or tokenizer decides what is stored and answered.
//!
//! Hashing a model costs a tenth of a second; the hook starts a process per prompt. A file once
//! verified is remembered by device, inode, size, modification and change time in the index being
//! opened (`verified-models.json`; the engine writes nowhere else): any write to the file changes
//! its change time, which no user can set back.

use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why `dir` is not a place this user controls, if it is not.
pub(crate) fn untrusted_dir(dir: &Path) -> Option<String> {
    let dir = match dir.canonicalize() {
        Ok(d) => d,
        Err(e) => return Some(format!("{} cannot be resolved ({e})", dir.display())),
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for d in dir.ancestors() {
        let Ok(m) = std::fs::metadata(d) else { return Some(format!("{} cannot be read", d.display())) };
        let sticky_root = m.mode() & libc::S_ISVTX != 0 && m.uid() == 0;
        if m.uid() != me && m.uid() != 0 {
            return Some(format!("{} belongs to uid {}, not to you (uid {me})", d.display(), m.uid()));
        }
        if m.mode() & 0o022 != 0 && !(sticky_root && d != dir) {
            return Some(format!("{} is writable by {}", d.display(), writers(m.mode())));
        }
    }
    None
}

/// Why a file may not be loaded from a trusted directory, if it may not: another user's, or
/// writable by others.
fn untrusted_file(path: &Path, m: &std::fs::Metadata) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me && m.uid() != 0 {
        return Some(format!("{} belongs to uid {}, not to you (uid {me})", path.display(), m.uid()));
    }
    (m.mode() & 0o022 != 0).then(|| format!("{} is writable by {}", path.display(), writers(m.mode())))
}

fn writers(mode: u32) -> &'static str {
    match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (true, true) => "its group and others",
        (true, false) => "its group",
        _ => "others",
    }
}

/// Checks a file before it is loaded: a regular file, the user's own (or root's) and writable by
/// nobody else, and, when the manifest pins it, holding exactly the pinned bytes.
/// Verified files are remembered in the file `cache` (none: hashed every time).
pub(crate) fn verify(path: &Path, sha256: Option<&str>, cache: Option<&Path>) -> Result<()> {
    let m =
        std::fs::metadata(path).map_err(|e| Error::ModelMissing { path: path.to_path_buf(), reason: e.to_string() })?;
    if !m.is_file() || m.len() == 0 {
        return Err(Error::ModelMissing { path: path.to_path_buf(), reason: "empty or not a regular file".into() });
    }
    if let Some(why) = untrusted_file(path, &m) {
        return Err(Error::ModelLoad { path: path.to_path_buf(), reason: format!("refused: {why}") });
    }
    let Some(want) = sha256 else { return Ok(()) };
    let stamp = Stamp::of(path, &m, want);
    if Cache::load(cache).contains(&stamp) {
        return Ok(());
    }
    let got = hash_file(path).map_err(|e| Error::ModelMissing { path: path.to_path_buf(), reason: e.to_string() })?;
    if !got.eq_ignore_ascii_case(want) {
        return Err(Error::ModelLoad {
            path: path.to_path_buf(),
            reason: format!("sha256 is {got}, the manifest pins {want}: not the file it names"),
        });
    }
    Cache::remember(cache, stamp);
    Ok(())
}

fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut h = Sha256::new();
    let mut f = std::fs::File::open(path)?;
    std::io::copy(&mut f, &mut h)?;
    Ok(hex::encode(h.finalize()))
}

/// What identifies a file's bytes without reading them, and the hash they were checked against.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Stamp {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    sha256: String,
}

impl Stamp {
    fn of(path: &Path, m: &std::fs::Metadata, sha256: &str) -> Stamp {
        Stamp {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
            sha256: sha256.to_ascii_lowercase(),
        }
    }
}

/// The files verified before.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Cache {
    verified: Vec<Stamp>,
}

impl Cache {
    /// The cache at `path`, if it is the user's own file (anything else is ignored, never
    /// trusted).
    fn load(path: Option<&Path>) -> Cache {
        let Some(path) = path else { return Cache::default() };
        match std::fs::metadata(path) {
            Ok(m) if untrusted_file(path, &m).is_none() => {}
            _ => return Cache::default(),
        }
        std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    /// Adds a verified file; older stamps of the same path go. Failing to write only costs a
    /// hash next time.
    fn remember(path: Option<&Path>, stamp: Stamp) {
        let Some(path) = path else { return };
        let mut cache = Cache::load(Some(path));
        cache.verified.retain(|s| s.path != stamp.path);
        cache.verified.push(stamp);
        if let Ok(json) = serde_json::to_vec(&cache) {
            let _ = crate::files::atomic::write_private(path, &json);
        }
    }

    fn contains(&self, stamp: &Stamp) -> bool {
        self.verified.contains(stamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_directory_writable_by_others_is_refused_and_a_sticky_root_one_above_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path().join("models");
        std::fs::create_dir(&models).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The temporary directory is under /tmp: sticky and root's, so it does not count.
        assert_eq!(untrusted_dir(&models), None);
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = untrusted_dir(&models).unwrap();
        assert!(why.contains("writable by its group and others"), "{why}");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(untrusted_dir(&models).is_some(), "the models directory itself may not be shared, sticky or not");
    }

    #[test]
    fn a_pinned_file_must_hold_the_pinned_bytes_and_a_change_is_seen_through_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("verified-models.json");
        let f = dir.path().join("model.onnx");
        std::fs::write(&f, b"weights").unwrap();
        let good = hex::encode(Sha256::digest(b"weights"));
        verify(&f, Some(&good), Some(&cache)).unwrap();
        assert!(cache.is_file(), "remembered");
        verify(&f, Some(&good), Some(&cache)).unwrap();
        // Same size, new bytes: the change time moved, so the cache no longer vouches for it.
        std::fs::write(&f, b"WEIGHTS").unwrap();
        let err = verify(&f, Some(&good), Some(&cache)).unwrap_err().to_string();
        assert!(err.contains("the manifest pins"), "{err}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = verify(&f, None, None).unwrap_err().to_string();
        assert!(err.contains("writable by its group and others"), "{err}");
    }
}
