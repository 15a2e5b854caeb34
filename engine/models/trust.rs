//! Which model files may be loaded. A models directory found by looking (the per-user data
//! directory, the install or checkout the executable runs from) is used only when the user
//! controls it: the directory and every directory above it owned by the user or root, and none of
//! them writable by group or others, unless it is a sticky directory of root's such as `/tmp`
//! (there nobody can rename or replace another user's entry), or writable only by the user's own
//! private group (a umask of 002, Ubuntu's default, makes every directory a program creates —
//! Claude Code's plugin cache too — group-writable; a group named after the user, its primary
//! group, that no one else belongs to lets no one else write). The files are held to the same rule
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
        if m.mode() & 0o022 != 0 && !(sticky_root && d != dir) && !only_mine_writable(&m, me) {
            return Some(format!("{} is writable by {}", d.display(), writers(m.mode())));
        }
    }
    None
}

/// Whether a file or directory writable by its group lets no one but this user write: not
/// writable by others, and its group the user's private group.
fn only_mine_writable(m: &std::fs::Metadata, me: libc::uid_t) -> bool {
    m.mode() & 0o002 == 0 && private_group(m.gid(), me)
}

/// Whether `gid` is the user's private group: the user's primary group, named after the user,
/// with no other member, and no other account in `/etc/passwd` has it as its primary group.
pub(crate) fn private_group(gid: libc::gid_t, me: libc::uid_t) -> bool {
    let Some((name, primary)) = account(me) else { return false };
    let Some((group, members)) = group(gid) else { return false };
    if primary != gid || group != name || members.iter().any(|m| *m != name) {
        return false;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    !passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .any(|f| f.len() > 3 && f[0] != name && f[3].parse::<libc::gid_t>() == Ok(gid))
}

/// The user's name and primary group.
fn account(uid: libc::uid_t) -> Option<(String, libc::gid_t)> {
    let mut buf = vec![0 as libc::c_char; 1 << 16];
    // SAFETY: a zeroed passwd is a valid out-parameter; getpwuid_r writes only into it and `buf`
    // (whose length it is given), and the strings read after it point into `buf`, still alive.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut found = std::ptr::null_mut();
        if libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found) != 0 || found.is_null() {
            return None;
        }
        Some((std::ffi::CStr::from_ptr(pwd.pw_name).to_string_lossy().into_owned(), pwd.pw_gid))
    }
}

/// A group's name and listed members.
fn group(gid: libc::gid_t) -> Option<(String, Vec<String>)> {
    let mut buf = vec![0 as libc::c_char; 1 << 16];
    // SAFETY: as in `account`; gr_mem is a null-terminated array of strings inside `buf`.
    unsafe {
        let mut grp: libc::group = std::mem::zeroed();
        let mut found = std::ptr::null_mut();
        if libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut found) != 0 || found.is_null() {
            return None;
        }
        let mut members = Vec::new();
        let mut at = grp.gr_mem;
        while !at.is_null() && !(*at).is_null() {
            members.push(std::ffi::CStr::from_ptr(*at).to_string_lossy().into_owned());
            at = at.add(1);
        }
        Some((std::ffi::CStr::from_ptr(grp.gr_name).to_string_lossy().into_owned(), members))
    }
}

/// Why a file may not be loaded from a trusted directory, if it may not: another user's, or
/// writable by others.
fn untrusted_file(path: &Path, m: &std::fs::Metadata) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me && m.uid() != 0 {
        return Some(format!("{} belongs to uid {}, not to you (uid {me})", path.display(), m.uid()));
    }
    (m.mode() & 0o022 != 0 && !only_mine_writable(m, me))
        .then(|| format!("{} is writable by {}", path.display(), writers(m.mode())))
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
    fn a_directory_writable_by_the_users_private_group_only_is_the_users() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path().join("models");
        std::fs::create_dir(&models).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        // SAFETY: geteuid and getegid have no preconditions.
        let (me, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let file = models.join("model.onnx");
        std::fs::write(&file, b"weights").unwrap();
        std::os::unix::fs::chown(&models, Some(me), Some(gid)).unwrap();
        std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o775)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).unwrap();
        // What the private-group rule decides here depends on this machine's accounts; the
        // directory and the file are judged by it alike.
        let private = private_group(gid, me);
        assert_eq!(untrusted_dir(&models).is_none(), private, "{:?}", untrusted_dir(&models));
        assert_eq!(verify(&file, None, None).is_ok(), private);
        // Writable by others: refused whatever the group.
        std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(untrusted_dir(&models).unwrap().contains("its group and others"));
        // A group that is not the user's primary one is never private.
        assert!(!private_group(gid.wrapping_add(4242), me));
        if me == 0 && std::fs::read_to_string("/etc/group").unwrap_or_default().lines().any(|l| l == "root:x:0:") {
            assert!(private, "root's group, with no other member, is root's own");
        }
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
