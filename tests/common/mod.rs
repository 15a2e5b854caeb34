//! Helpers shared by the integration tests: run the real binary, copy the sample corpus.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binary under test: this build's, or `ENGINE_TEST_BIN` (to show a regression test fails
/// on an older build).
pub fn bin() -> PathBuf {
    std::env::var_os("ENGINE_TEST_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_engine")), PathBuf::from)
}

/// Runs the engine binary; returns (exit code, stdout, stderr). `engine search` runs
/// [`in_process`] (`engine_with_daemon` for the tests of the daemon).
pub fn engine(args: &[&str], cwd: Option<&Path>) -> (i32, String, String) {
    engine_with_daemon(&in_process(args), cwd)
}

/// `args` with `--no-daemon` after `search`, wherever the subcommand stands (after global flags
/// such as `--config F`): a daemon a test's search started would outlive the test on the shared
/// sample index and answer the other tests' searches, with its own environment (no model, say).
pub fn in_process<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    if let Some(at) = all.iter().position(|a| *a == "search") {
        all.insert(at + 1, "--no-daemon");
    }
    all
}

/// Runs the engine binary as given; returns (exit code, stdout, stderr).
pub fn engine_with_daemon(args: &[&str], cwd: Option<&Path>) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args).env_remove("ENGINE_MODELS_DIR").env_remove("ORT_DYLIB_PATH");
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let out: Output = cmd.output().expect("run engine");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Copies a tree, leaving out `.engine` directories: an index built in the checkout (README's
/// first command builds sample/.engine) names its own project, and a test working on the copy
/// would write into the checkout.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() == ".engine" {
            continue;
        }
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A temp copy of sample/.
pub fn sample_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("sample"), dir.path());
    dir
}

pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// One index of sample/, built once per test binary and shared by its tests.
pub fn sample_index() -> &'static PathBuf {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let idx = dir.path().join("idx");
        let (code, _, err) =
            engine(&["index", root().join("sample").to_str().unwrap(), "--index", idx.to_str().unwrap()], None);
        assert_eq!(code, 0, "{err}");
        (dir, idx)
    })
    .1
}

/// A models directory whose model.onnx is garbage (every other file links to the real one), for
/// `ENGINE_MODELS_DIR`.
pub fn broken_models() -> tempfile::TempDir {
    let models = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(root().join("models")).unwrap() {
        let e = e.unwrap();
        if e.file_name() == "model.onnx" {
            std::fs::write(models.path().join("model.onnx"), b"garbage").unwrap();
        } else if e.path().is_file() {
            std::os::unix::fs::symlink(e.path(), models.path().join(e.file_name())).unwrap();
        }
    }
    models
}

/// The real Claude Code transcripts vendored in `tests/data/transcripts` (`SOURCE.md` there), as
/// plain JSON lines: the compressed ones are unpacked once per test binary into Cargo's temporary
/// directory for tests.
pub fn transcripts() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let from = root().join("tests/data/transcripts");
        let to = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("transcripts-{}", std::process::id()));
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(&from).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            match name.strip_suffix(".zst") {
                Some(plain) => {
                    let mut decoder = zstd::stream::read::Decoder::new(std::fs::File::open(&path).unwrap()).unwrap();
                    let mut out = std::fs::File::create(to.join(plain)).unwrap();
                    std::io::copy(&mut decoder, &mut out).unwrap();
                }
                None => {
                    std::fs::copy(&path, to.join(&name)).unwrap();
                }
            }
        }
        to
    })
    .clone()
}

/// A copy of sample/ with an index and this engine.toml.
pub fn project(config: &str) -> tempfile::TempDir {
    let dir = sample_copy();
    std::fs::write(dir.path().join("engine.toml"), config).unwrap();
    let (code, _, err) = engine(&["index", dir.path().to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    dir
}

/// Runs `exe` in `cwd` as a user whose home is `home` (no XDG_DATA_HOME, ENGINE_MODELS_DIR or
/// ORT_DYLIB_PATH); returns (exit code, stdout, stderr).
pub fn engine_as_user(exe: &Path, home: &Path, args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("ENGINE_MODELS_DIR")
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .unwrap();
    (exit_code(out.status), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// A UserPromptSubmit event for `text`, asked in `cwd`.
pub fn prompt(cwd: &Path, text: &str) -> Vec<u8> {
    serde_json::json!({
        "hook_event_name": "UserPromptSubmit", "prompt": text, "cwd": cwd,
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl"
    })
    .to_string()
    .into_bytes()
}

/// Runs `engine hook [args]` with `input` on stdin; returns (exit code, stdout, stderr).
pub fn hook(input: &[u8], args: &[&str], env: &[(&str, &Path)]) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.arg("hook").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.env_remove("ENGINE_MODELS_DIR").env_remove("CLAUDE_PROJECT_DIR").current_dir(std::env::temp_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    // A hook that hangs is killed (exit 137) rather than hanging the suite: Claude Code would
    // have stopped waiting long before.
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let pid = child.id().to_string();
    let watchdog = std::thread::spawn(move || {
        let waited = finished.recv_timeout(std::time::Duration::from_secs(120));
        if waited == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    });
    let out = child.wait_with_output().unwrap();
    drop(done);
    watchdog.join().unwrap();
    writer.join().unwrap();
    (
        exit_code(out.status),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The exit code, or 128 + the signal that killed the process (as a shell shows it: 139 = SIGSEGV).
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().or_else(|| status.signal().map(|s| 128 + s)).unwrap_or(-1)
}
