//! Issue 33 through the real binary: nothing the user does not own is loaded, stored or handed to
//! the model as the project's own; damaged or hostile inputs never stop a prompt.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Generous: CI machines can be very loaded.
const PATIENCE: Duration = Duration::from_secs(300);

/// A `models/` directory as another local user could leave it in a shared folder: the real
/// manifest and model, and an "ONNX Runtime" whose constructor creates `mark` when anything loads
/// it.
fn hostile_models(dir: &Path, mark: &Path) {
    let models = dir.join("models");
    std::fs::create_dir_all(&models).unwrap();
    for e in std::fs::read_dir(root().join("models")).unwrap() {
        let e = e.unwrap();
        if e.path().is_file() && !e.file_name().to_string_lossy().starts_with("libonnxruntime") {
            std::os::unix::fs::symlink(e.path(), models.join(e.file_name())).unwrap();
        }
    }
    let source = models.join("evil.c");
    std::fs::write(
        &source,
        format!(
            "#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void run(void) {{ int f = open({:?}, O_CREAT | O_WRONLY, 0600); if (f >= 0) close(f); }}\n",
            mark.to_str().unwrap()
        ),
    )
    .unwrap();
    let lib = models.join("libonnxruntime.so.1.31.1");
    let built = Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&lib).arg(&source).status().unwrap();
    assert!(built.success(), "cc could not build the test library");
}

/// Runs the binary as a user without models of their own (an empty HOME, no ENGINE_MODELS_DIR):
/// it can only find the ones next to it (the checkout's) or, wrongly, the hostile ones.
fn engine_in(cwd: &Path, home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
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

#[test]
fn a_models_directory_in_a_shared_folder_or_a_cloned_repository_is_never_loaded() {
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let home = tempfile::tempdir().unwrap();
    let mark = home.path().join("ran");
    hostile_models(shared.path(), &mark);
    let below = shared.path().join("work/deeper");
    std::fs::create_dir_all(&below).unwrap();

    // A search from below the shared folder.
    let index = sample_index().to_str().unwrap().to_string();
    let (code, out, err) = engine_in(&below, home.path(), &["search", "why redis", "--index", &index, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["degraded"], false, "answered with the real model: {err}");
    assert!(!mark.exists(), "the shared folder's runtime library ran");
    assert!(!err.contains(&*shared.path().to_string_lossy()), "{err}");

    // A cloned repository that ships a models/ folder, opened in a session: the first run indexes
    // it in the background.
    let repo = shared.path().join("repo");
    copy_dir(&root().join("sample"), &repo);
    std::fs::create_dir(repo.join(".git")).unwrap();
    hostile_models(&repo, &mark);
    let start = serde_json::json!({"hook_event_name": "SessionStart", "source": "startup", "cwd": repo});
    let (code, _, err) = hook(start.to_string().as_bytes(), &["--plain"], &[("HOME", home.path())]);
    assert_eq!(code, 0, "{err}");
    let index: PathBuf = repo.join(".engine");
    wait_until_embedded(&index);
    assert!(!mark.exists(), "the repository's runtime library ran");
}

/// Waits until an index built in the background has a vector for every chunk.
fn wait_until_embedded(index: &Path) {
    let t = Instant::now();
    loop {
        let (code, out, _) = engine(&["status", "--index", index.to_str().unwrap(), "--json"], None);
        if code == 0 {
            let s = json(&out);
            if s["vectors"] == s["chunks"] && s["chunks"].as_u64() > Some(0) {
                return;
            }
        }
        assert!(t.elapsed() < PATIENCE, "{} was never fully embedded", index.display());
        std::thread::sleep(Duration::from_millis(200));
    }
}
