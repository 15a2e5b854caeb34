//! Where the model files live and how the one ONNX Runtime environment of the process is made.
//!
//! `models/models.toml` (the manifest) names every file; `scripts/fetch-models.sh` installs them.
//! The engine finds the models directory by itself: `ENGINE_MODELS_DIR` if set, else the first
//! `models/` holding a `models.toml` above the indexed root, above the current directory or above
//! the executable (so `target/release/engine` finds the checkout's `models/`), else the checkout the
//! binary was built from. `ORT_DYLIB_PATH`
//! overrides the runtime library. Users set no variables.
//!
//! ONNX Runtime allows one environment per process; [`ort_environment`] creates it on first use and
//! hands every later caller (the embedder now, a reranker later) a clone of the same one.

use crate::error::{Error, IoContext, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the manifest inside a models directory.
pub const MANIFEST: &str = "models.toml";

/// The parsed manifest.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub runtime: RuntimeEntry,
    pub embedder: EmbedderEntry,
    #[serde(default)]
    pub reranker: Option<RerankerEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RuntimeEntry {
    pub package: String,
    pub version: String,
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct EmbedderEntry {
    /// Identifies the model in index metadata and the embedding cache.
    pub id: String,
    pub dimensions: usize,
    pub pooling: String,
    pub normalize: bool,
    pub max_length: usize,
    pub packages: Vec<PackageEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PackageEntry {
    pub package: String,
    pub version: String,
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RerankerEntry {
    pub id: String,
    #[serde(default)]
    pub max_length: Option<usize>,
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FileEntry {
    pub file: String,
    pub sha256: String,
}

/// A located models directory with its manifest.
#[derive(Debug, Clone)]
pub struct Models {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl Models {
    /// Loads the manifest of an explicit models directory.
    pub fn open(dir: &Path) -> Result<Models> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).ctx(|| format!("reading model manifest {}", path.display()))?;
        let manifest: Manifest =
            toml::from_str(&text).map_err(|e| Error::Config(format!("{}: {}", path.display(), e.message())))?;
        Ok(Models { dir: dir.to_path_buf(), manifest })
    }

    /// Finds the models directory: `ENGINE_MODELS_DIR`, else a `models/models.toml` above `near`
    /// (typically the indexed root), the current directory, or the executable.
    pub fn locate(near: Option<&Path>) -> Result<Models> {
        if let Some(dir) = std::env::var_os("ENGINE_MODELS_DIR") {
            return Models::open(Path::new(&dir));
        }
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
        // Last resort: the checkout the binary was built from (a target directory elsewhere).
        starts.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
        for start in &starts {
            for dir in start.ancestors() {
                let candidate = dir.join("models");
                if candidate.join(MANIFEST).is_file() {
                    return Models::open(&candidate);
                }
            }
        }
        let searched = starts.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        Err(Error::ModelsDirNotFound { searched })
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
    pub fn runtime_library(&self) -> Result<PathBuf> {
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
pub const TELEMETRY_OFF: [(&str, &str); 2] = [("ORT_DISABLE_TELEMETRY", "1"), ("ORT_TELEMETRY_DISABLED", "1")];

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
pub fn ort_environment(library: &Path) -> Result<ort::environment::Environment> {
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
