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

/// A small deterministic generator of offsets.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Every file below `dir`, sorted.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_below(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn flipped_bytes_in_any_file_of_the_index_never_stop_a_prompt_and_indexing_repairs_them() {
    let clean = tempfile::tempdir().unwrap();
    copy_dir(&root().join("sample"), clean.path());
    std::fs::write(clean.path().join("engine.toml"), "[hook]\ndaemon = false\n").unwrap();
    let (code, _, err) = engine(&["index", clean.path().to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let index = clean.path().join(".engine");
    let generation = index.join(std::fs::read_to_string(index.join("CURRENT")).unwrap().trim());
    let files: Vec<PathBuf> = files_below(&generation)
        .into_iter()
        .filter(|f| std::fs::metadata(f).unwrap().len() > 0)
        .map(|f| f.strip_prefix(clean.path()).unwrap().to_path_buf())
        .collect();
    assert!(files.len() >= 8, "{files:?}");
    let mut rng = Lcg(33);
    for file in &files {
        let project = tempfile::tempdir().unwrap();
        copy_dir_with_index(clean.path(), project.path());
        let victim = project.path().join(file);
        let mut bytes = std::fs::read(&victim).unwrap();
        for _ in 0..3 {
            let at = rng.next(bytes.len() as u64) as usize;
            bytes[at] ^= 0xff;
        }
        std::fs::write(&victim, &bytes).unwrap();
        let shown = file.display();
        let prompt = serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": "why did we move sessions to redis?", "cwd": project.path()});
        let (code, out, err) = hook(prompt.to_string().as_bytes(), &[], &[]);
        assert_eq!(code, 0, "{shown}: the hook failed: {err}");
        assert!(out.is_empty() || serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{shown}: {out}");
        let i = project.path().join(".engine");
        let (code, _, err) = engine(&["search", "sessions redis", "--index", i.to_str().unwrap()], None);
        assert!(code == 0 || code == 4, "{shown}: search exited {code}: {err}");
        let (code, _, err) = engine(&["index", project.path().to_str().unwrap()], None);
        assert_eq!(code, 0, "{shown}: indexing did not repair: {err}");
        let (code, out, err) = engine(&["search", "sessions redis", "--index", i.to_str().unwrap(), "--json"], None);
        assert_eq!(code, 0, "{shown}: after indexing: {err}");
        assert!(!json(&out)["results"].as_array().unwrap().is_empty(), "{shown}: nothing found after the repair");
        let (code, _, err) = engine(&["status", "--index", i.to_str().unwrap()], None);
        assert_eq!(code, 0, "{shown}: status after the repair: {err}");
    }
}

/// Copies a project with its `.engine/` (which `copy_dir` leaves out).
fn copy_dir_with_index(from: &Path, to: &Path) {
    copy_dir(from, to);
    copy_index(&from.join(".engine"), &to.join(".engine"));
}

fn copy_index(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_index(&e.path(), &dst);
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}
