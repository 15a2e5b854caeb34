//! Where the model files live, which of them may be loaded, and the one ONNX Runtime environment
//! of the process.
//!
//! `models/models.toml` (the manifest) names every file with its sha256; `scripts/fetch-models.sh`
//! installs them. The engine finds the models directory by itself ([`Models::locate`]), only in
//! places the user controls: `ENGINE_MODELS_DIR` if set, else the per-user data directory
//! (`~/.local/share/engine/models`), else a `models/` above the executable (the checkout
//! `target/release/engine` was built in, or a plugin's `bin/engine`), else the checkout the crate
//! was built from; a directory found by looking is used only when no other user can write to it
//! ([`trust`]), and never one above an indexed project or the working directory (a cloned
//! repository could ship a `models/` with a runtime library of its own). Every file is checked
//! against the manifest's sha256 before it is loaded. `ORT_DYLIB_PATH` overrides the runtime
//! library (the user's own choice, as `LD_LIBRARY_PATH` is).
//!
//! ONNX Runtime allows one environment per process; [`ort_environment`] creates it on first use and
//! hands every later caller (the embedder, a reranker) a clone of the same one.

mod manifest;
mod runtime;
mod trust;

pub use manifest::*;
pub(crate) use runtime::ort_environment;
pub use runtime::silence_runtime_telemetry;

pub(crate) use trust::untrusted_dir;

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// File name of the manifest inside a models directory.
pub(crate) const MANIFEST: &str = "models.toml";

/// File in an index directory remembering the model files verified against the manifest.
pub(crate) const VERIFIED: &str = "verified-models.json";

/// A located models directory with its manifest.
#[derive(Debug, Clone)]
pub struct Models {
    /// The models directory.
    pub(crate) dir: PathBuf,
    /// Its parsed `models.toml`.
    pub(crate) manifest: Manifest,
    /// Models directories passed over because another user could write to them, one line each.
    pub(crate) refused: Vec<String>,
    /// Where files verified against the manifest are remembered (none: hashed at every load).
    verified: Option<PathBuf>,
}

impl Models {
    /// Loads the manifest of a models directory the caller names (its files are still checked
    /// against the manifest before they load).
    pub fn open(dir: &Path) -> Result<Models> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::ModelMissing { path: path.clone(), reason: e.to_string() })?;
        let manifest: Manifest =
            toml::from_str(&text).map_err(|e| Error::Config(format!("{}: {}", path.display(), e.message())))?;
        Ok(Models { dir: dir.to_path_buf(), manifest, refused: Vec::new(), verified: None })
    }

    /// Finds the models directory, first match wins: `ENGINE_MODELS_DIR`; the per-user data
    /// directory (where `scripts/fetch-models.sh --dest` puts them);
    /// a `models/` above the executable; the checkout this crate was built from. A directory
    /// found by looking that another user can write to is passed over, and named.
    pub fn locate() -> Result<Models> {
        let env = |name: &str| std::env::var_os(name);
        // Set but empty counts as unset, as for other search-path variables.
        if let Some(dir) = env("ENGINE_MODELS_DIR").filter(|d| !d.is_empty()) {
            return Models::open(Path::new(&dir));
        }
        let mut refused = Vec::new();
        let candidates = candidates(&env);
        for dir in candidates.iter().filter(|dir| dir.join(MANIFEST).is_file()) {
            match untrusted_dir(dir) {
                Some(why) => refused.push(format!("refused the models in {}: {why}", dir.display())),
                None => return Models::open(dir).map(|m| Models { refused, ..m }),
            }
        }
        let mut searched: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        searched.extend(refused);
        Err(Error::ModelsDirNotFound { searched: searched.join("; ") })
    }

    /// Remembers the files verified against the manifest in `index_dir` (the index being opened
    /// or built: the engine writes nowhere else), so a process per prompt does not hash them again.
    pub(crate) fn cached_in(mut self, index_dir: &Path) -> Models {
        self.verified = Some(index_dir.join(VERIFIED));
        self
    }

    /// The models directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of an installed file, checked before it is loaded: a regular file nobody else
    /// can write, holding the bytes the manifest pins for it.
    pub(crate) fn file(&self, name: &str) -> Result<PathBuf> {
        let path = self.dir.join(name);
        trust::verify(&path, self.manifest.sha256_of(name), self.verified.as_deref())?;
        Ok(path)
    }

    /// A file of a directory other than the models directory (`[rerank] model = DIR`): loaded
    /// only from a directory nobody else can write to, as a file nobody else can write.
    pub(crate) fn foreign_file(dir: &Path, name: &str) -> Result<PathBuf> {
        let path = dir.join(name);
        if let Some(why) = untrusted_dir(dir) {
            return Err(Error::ModelLoad { path, reason: format!("refused: {why}") });
        }
        trust::verify(&path, None, None)?;
        Ok(path)
    }

    /// The ONNX Runtime shared library: `ORT_DYLIB_PATH`, else the manifest's runtime file.
    pub(crate) fn runtime_library(&self) -> Result<PathBuf> {
        if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
            let path = PathBuf::from(p);
            return if path.is_file() {
                Ok(path)
            } else {
                Err(Error::ModelMissing { path, reason: "ORT_DYLIB_PATH points to no file".into() })
            };
        }
        let name = self.manifest.runtime.files.first().map(|f| f.file.clone()).unwrap_or_default();
        self.file(&name)
    }
}

type Env<'a> = &'a dyn Fn(&str) -> Option<std::ffi::OsString>;

/// The per-user models directory: `$XDG_DATA_HOME/engine/models`, else
/// `~/.local/share/engine/models` (on macOS `~/Library/Application Support/engine/models`).
pub(crate) fn user_dir(env: Env) -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if !cfg!(target_os = "macos") {
        if let Some(data) = env("XDG_DATA_HOME").and_then(absolute) {
            return Some(data.join("engine").join("models"));
        }
    }
    let home = env("HOME").and_then(absolute)?;
    let data = if cfg!(target_os = "macos") {
        home.join("Library").join("Application Support")
    } else {
        home.join(".local").join("share")
    };
    Some(data.join("engine").join("models"))
}

/// Where [`Models::locate`] looks after `ENGINE_MODELS_DIR`, in order: the per-user directory,
/// the `models/` directories above the executable, the checkout the crate was built from.
fn candidates(env: Env) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = user_dir(env).into_iter().collect();
    if let Ok(exe) = std::env::current_exe() {
        let exe = exe.canonicalize().unwrap_or(exe);
        out.extend(exe.ancestors().skip(1).map(|dir| dir.join("models")).filter(|dir| dir.join(MANIFEST).is_file()));
    }
    // Last resort: the checkout the crate was built from (a target directory elsewhere).
    out.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("models"));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_user_data_directory_comes_first_and_the_checkout_last() {
        let found = candidates(&env_of(&[("HOME", "/home/u")]));
        if !cfg!(target_os = "macos") {
            assert_eq!(found[0], Path::new("/home/u/.local/share/engine/models"));
            let xdg = candidates(&env_of(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")]));
            assert_eq!(xdg[0], Path::new("/data/engine/models"));
            // A relative XDG_DATA_HOME is ignored, as the spec says.
            let relative = candidates(&env_of(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "data")]));
            assert_eq!(relative[0], Path::new("/home/u/.local/share/engine/models"));
        }
        assert_eq!(found.last().unwrap(), &Path::new(env!("CARGO_MANIFEST_DIR")).join("models"));
        // Without HOME there is no user directory; the checkout is still found.
        let bare = candidates(&env_of(&[]));
        assert!(bare.iter().all(|d| !d.ends_with("share/engine/models")), "{bare:?}");
    }

    #[test]
    fn a_models_directory_of_the_working_directory_or_a_project_is_never_a_candidate() {
        let cwd = std::env::current_dir().unwrap();
        let found = candidates(&env_of(&[]));
        let exe_dirs: Vec<PathBuf> = std::env::current_exe().unwrap().ancestors().map(Path::to_path_buf).collect();
        for dir in &found {
            let above = dir.parent().unwrap();
            assert!(
                exe_dirs.iter().any(|e| e == above)
                    || dir.starts_with(env!("CARGO_MANIFEST_DIR"))
                    || dir.ends_with("engine/models"),
                "{} is not above the executable ({cwd:?})",
                dir.display()
            );
        }
    }
}
