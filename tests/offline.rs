//! A local, offline tool writes nothing but its index: the real binary indexes a copy of sample/,
//! searches it with the model, and runs the hook (every event, in process and through the daemon
//! the hook starts) with HOME, every XDG directory and TMPDIR pointing into an empty temp tree.
//! Afterwards that tree is as it was, except the project's `.engine/`. ONNX Runtime's telemetry
//! client (a device id and an event queue under ~/.cache/Microsoft) is what this guards against.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Variables that would change what the binary does about telemetry, removed so the binary has to
/// silence ONNX Runtime by itself: the runtime's own switches, and the CI markers it honours too
/// (CI runs this test with CI=true, which alone would hide a regression).
const UNSET: [&str; 19] = [
    "ENGINE_MODELS_DIR",
    "ORT_DYLIB_PATH",
    "ORT_DISABLE_TELEMETRY",
    "ORT_TELEMETRY_DISABLED",
    "ORT_RUNNING_UNIT_TESTS",
    "CI",
    "TF_BUILD",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "CIRCLECI",
    "TRAVIS",
    "JENKINS_URL",
    "CODEBUILD_BUILD_ID",
    "BUILDKITE",
    "TEAMCITY_VERSION",
    "APPVEYOR",
    "BITBUCKET_BUILD_NUMBER",
    "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI",
    "DOTNET_RUNNING_IN_CONTAINER",
];

const XDG: [&str; 7] = [
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
];

struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }
    fn index(&self) -> PathBuf {
        self.project().join(".engine")
    }

    /// The binary with the sandbox's environment, run from an empty directory of the sandbox.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        cmd.args(args).current_dir(self.root.path().join("cwd"));
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("XDG_") {
                cmd.env_remove(name);
            }
        }
        for name in UNSET {
            cmd.env_remove(name);
        }
        cmd.env("HOME", self.home()).env("TMPDIR", self.root.path().join("tmp"));
        for name in XDG {
            cmd.env(name, self.home());
        }
        cmd
    }

    fn run(&self, args: &[&str], stdin: Option<&serde_json::Value>) -> (i32, String, String) {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let input = stdin.map(|v| v.to_string()).unwrap_or_default();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn hook(&self, event: serde_json::Value) -> (i32, String, String) {
        self.run(&["hook", "--plain"], Some(&event))
    }

    /// Ids of `engine serve` processes for this sandbox's index (the one the hook started).
    fn daemons(&self) -> Vec<i32> {
        let want = ["serve".to_string(), "--index".to_string(), self.index().display().to_string()];
        let mut pids = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
            let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else { continue };
            let args: Vec<String> =
                cmdline.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            let zombie = std::fs::read_to_string(e.path().join("stat"))
                .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')));
            if args.len() >= 4 && args[1..4] == want && !zombie {
                pids.push(pid);
            }
        }
        pids
    }

    /// Stops the daemon the hook started and waits until it is gone.
    fn stop_daemons(&self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let pids = self.daemons();
            if pids.is_empty() {
                return;
            }
            assert!(Instant::now() < deadline, "daemon {pids:?} did not stop");
            for pid in pids {
                // SAFETY: kill has no memory preconditions; pid is a daemon of this test's index.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // A failed assertion must not leave a daemon running until its idle timeout.
        for pid in self.daemons() {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
}

/// Every path under `root` with its content (files), link target (symlinks) or nothing (dirs).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let kind = e.file_type().unwrap();
            if kind.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                walk(&path, root, out);
            } else if kind.is_symlink() {
                out.insert(rel, std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes());
            } else if kind.is_file() {
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            } else {
                out.insert(rel, b"<special>".to_vec());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn nothing_is_written_outside_the_index_directory() {
    let sandbox = Sandbox { root: tempfile::tempdir().unwrap() };
    let tree = sandbox.root.path().to_path_buf();
    for d in ["home", "tmp", "cwd"] {
        std::fs::create_dir(tree.join(d)).unwrap();
    }
    copy_dir(&root().join("sample"), &sandbox.project());
    // The test's own settings, written before the first snapshot: generous deadlines, so every
    // answer comes from the full engine (model loaded) on however loaded a machine.
    let in_process = "[hook]\ndaemon = false\ndeadline_ms = 600000\n";
    let with_daemon = "[hook]\ndeadline_ms = 600000\nidle_timeout_s = 600\n";
    let config = sandbox.project().join("engine.toml");
    std::fs::write(&config, in_process).unwrap();
    let before = snapshot(&tree);

    let (code, _, err) = sandbox.run(&["index", sandbox.project().to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let index = sandbox.index();
    let (code, out, err) = sandbox.run(
        // In process: a search may start a daemon for the next one, and here the hook's prompt
        // below is the one that starts it.
        &[
            "search",
            "--no-daemon",
            "why did we move sessions off memcached?",
            "--index",
            index.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["degraded"], false, "the model must run for this test to mean anything: {out}");

    let cwd = sandbox.project();
    let edit = serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": cwd,
        "tool_input": {"file_path": cwd.join("docs/runbook.md")}});
    let start = serde_json::json!({"hook_event_name": "SessionStart", "source": "startup", "cwd": cwd});
    let ask = |q: &str| serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": q, "cwd": cwd});
    let question = "why did we move sessions off memcached?";

    // In process: the edit is recorded, SessionStart reindexes it, the prompt loads the model here.
    assert_eq!(sandbox.hook(edit.clone()), (0, String::new(), String::new()));
    let (code, out, err) = sandbox.hook(start.clone());
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.contains("<memory-context kind=\"session\">"), "{out}");
    let (code, out, err) = sandbox.hook(ask(question));
    assert_eq!((code, err.as_str()), (0, ""), "answered by the full engine, in process");
    assert!(out.contains("decision-session-store.json"), "{out}");

    // With the daemon: the first prompt starts it (and is answered in process), later ones and a
    // reindex after an edit are the daemon's.
    std::fs::write(&config, with_daemon).unwrap();
    let (code, out, err) = sandbox.hook(ask(question));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("started one"), "{err}");
    assert!(out.contains("decision-session-store.json"), "{out}");
    let socket = index.join("engine.sock");
    let t = Instant::now();
    while !socket.exists() {
        assert!(t.elapsed() < Duration::from_secs(300), "the daemon never bound {}", socket.display());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(sandbox.hook(edit), (0, String::new(), String::new()));
    let (code, out, err) = sandbox.hook(ask("how do I fix the flaky upload test"));
    assert_eq!((code, err.as_str()), (0, ""), "answered by the daemon");
    assert!(!out.is_empty());
    let (code, _, err) = sandbox.hook(start);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(sandbox.daemons().len(), 1, "one daemon, started by the hook");
    sandbox.stop_daemons();
    std::fs::write(&config, in_process).unwrap();

    let after = snapshot(&tree);
    let outside_index = |p: &&PathBuf| !p.starts_with("project/.engine");
    let added: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).filter(outside_index).collect();
    let removed: Vec<_> = before.keys().filter(|p| !after.contains_key(*p)).collect();
    let changed: Vec<_> =
        before.iter().filter(|(p, v)| after.get(*p).is_some_and(|a| a != *v)).map(|(p, _)| p).collect();
    assert!(added.is_empty(), "written outside the index directory: {added:?}");
    assert!(removed.is_empty() && changed.is_empty(), "removed {removed:?}, changed {changed:?}");
    assert!(after.keys().any(|p| p.starts_with("project/.engine")), "the index is where it belongs");
}
