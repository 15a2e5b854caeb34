//! The one ONNX Runtime environment of the process, made from the verified runtime library, with
//! the runtime's telemetry switched off before it loads.

use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Mutex;

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
