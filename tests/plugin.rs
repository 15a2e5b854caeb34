//! The engine as a Claude Code plugin, driven by the real client (`ENGINE_CLAUDE`: the pinned
//! Claude Code CLI `scripts/test-clients.sh` installs): `scripts/package-plugin.sh` packages this
//! build, `claude plugin validate --strict` accepts the plugin and its marketplace, `claude plugin
//! install` installs it under a temporary HOME, `claude mcp list` finds its server connected, and
//! every command of the installed `hooks.json` runs, exactly as written, on a sample project with
//! event JSON as Claude Code sends it; each answer is held to the hook output schema. Also: the
//! plugin's hook steps aside where the settings run the engine's own hook, and the team-shared and
//! local installs work as Claude Code reads them. Nothing here needs the network or an account.

use crate::common::{bin, copy_dir, exit_code, root, transcripts};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Claude Code CLI: `ENGINE_CLAUDE`, which `scripts/test.sh` sets.
pub(crate) fn claude() -> PathBuf {
    let p = std::env::var_os("ENGINE_CLAUDE").map(PathBuf::from).unwrap_or_else(|| {
        panic!("ENGINE_CLAUDE is not set: run the suite with scripts/test.sh, or eval \"$(scripts/test-clients.sh)\" first")
    });
    assert!(p.is_file(), "ENGINE_CLAUDE={} is not a file", p.display());
    p
}

/// Runs the Claude Code CLI under `home`, in `cwd`, with the umask most Linux desktops give a user
/// (002: every directory it creates is group-writable) and none of its traffic to the network.
pub(crate) fn claude_in(home: &Path, cwd: &Path, args: &[&str], path: Option<&str>) -> (i32, String, String) {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(claude());
    cmd.args(args).current_dir(cwd).env("HOME", home).stdin(Stdio::null());
    for var in ["DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] {
        cmd.env(var, "1");
    }
    cmd.env_remove("ENGINE_MODELS_DIR").env_remove("CLAUDE_PROJECT_DIR").env_remove("XDG_DATA_HOME");
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    // SAFETY: umask is async-signal-safe; the child only calls it before exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o002);
            Ok(())
        });
    }
    let out = cmd.output().expect("run claude");
    (
        exit_code(out.status),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The models directory the suite runs with, which the package copies.
fn models_dir() -> PathBuf {
    std::env::var_os("ENGINE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("models"))
}

/// Packages this build into `out` with `scripts/package-plugin.sh`.
fn package(out: &Path) {
    let script = root().join("scripts/package-plugin.sh");
    let res = Command::new("bash")
        .arg(script)
        .arg(out)
        .arg("--bin")
        .arg(bin())
        .arg("--models")
        .arg(models_dir())
        .output()
        .unwrap();
    assert!(res.status.success(), "package-plugin.sh: {}", String::from_utf8_lossy(&res.stderr));
    assert!(String::from_utf8_lossy(&res.stdout).contains("claude plugin install engine@engine-local"));
}

/// A copy of sample/ as a project of one's own (a git work tree) whose hook answers in process and
/// waits for the model however slow the machine, so the answers are the same every run, and whose
/// first-run index in the background is not starved by a busy machine.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("sample"), dir.path());
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let config = "[hook]\ndaemon = false\ndeadline_ms = 600000\nbackground_nice = 0\n";
    std::fs::write(dir.path().join("engine.toml"), config).unwrap();
    dir
}

/// The event JSON Claude Code 2.1.332 sends a hook (its input schema: the common fields, then the
/// event's own).
fn event(name: &str, project: &Path, transcript: &Path) -> Value {
    let mut v = json!({
        "session_id": "3f1d9a52-8c1e-4d7a-9b52-0c7e2f6a1b90",
        "transcript_path": transcript,
        "cwd": project,
        "permission_mode": "default",
        "hook_event_name": name,
    });
    let own = match name {
        "SessionStart" => json!({"source": "startup", "model": "claude-sonnet-4-5"}),
        "UserPromptSubmit" => json!({"prompt": "why did we move sessions to redis?"}),
        "PostToolUse" => json!({
            "tool_name": "Edit",
            "tool_input": {"file_path": project.join("docs/zebra.md"), "old_string": "weekly", "new_string": "daily", "replace_all": false},
            "tool_response": {"filePath": project.join("docs/zebra.md"), "oldString": "weekly", "newString": "daily"},
            "tool_use_id": "toolu_01A2b3C4d5E6f7G8h9J0k1L2",
        }),
        "PreCompact" => json!({"trigger": "manual", "custom_instructions": null}),
        "PostCompact" => json!({"trigger": "manual", "compact_summary": "Moved the session store to Redis."}),
        "SessionEnd" => json!({"reason": "prompt_input_exit"}),
        other => panic!("no payload for {other}"),
    };
    v.as_object_mut().unwrap().extend(own.as_object().unwrap().clone());
    v
}

/// Holds a hook's stdout to Claude Code's hook output schema: nothing, or one JSON object with the
/// documented fields, its `hookSpecificOutput` (only for the events that have one) naming the event.
fn check_output(event: &str, stdout: &str) -> Option<Value> {
    if stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{event}: not JSON ({e}): {stdout}"));
    let top = v.as_object().unwrap_or_else(|| panic!("{event}: not an object: {stdout}"));
    for (key, value) in top {
        let ok = match key.as_str() {
            "continue" | "suppressOutput" => value.is_boolean(),
            "stopReason" | "systemMessage" | "reason" => value.is_string(),
            "decision" => value == "approve" || value == "block",
            "hookSpecificOutput" => value.is_object(),
            _ => false,
        };
        assert!(ok, "{event}: {key} = {value} is not in the hook output schema: {stdout}");
    }
    let specific = &v["hookSpecificOutput"];
    if specific.is_null() {
        return Some(v);
    }
    let allowed: &[&str] = match event {
        "UserPromptSubmit" => &["hookEventName", "additionalContext", "sessionTitle", "suppressOriginalPrompt"],
        "SessionStart" => &["hookEventName", "additionalContext", "initialUserMessage", "sessionTitle", "watchPaths"],
        "PostToolUse" => &["hookEventName", "additionalContext", "updatedToolOutput", "updatedMCPToolOutput"],
        _ => panic!("{event} has no hookSpecificOutput in the schema: {stdout}"),
    };
    assert_eq!(specific["hookEventName"], event, "{stdout}");
    for (key, value) in specific.as_object().unwrap() {
        assert!(allowed.contains(&key.as_str()), "{event}: hookSpecificOutput.{key} is not in the schema: {stdout}");
        if key == "additionalContext" {
            assert!(value.as_str().is_some_and(|s| !s.trim().is_empty()), "{event}: {stdout}");
        }
    }
    Some(v)
}

/// Runs one hook of a `hooks.json` as Claude Code does in exec form: `command` with its `args`,
/// `${CLAUDE_PLUGIN_ROOT}` replaced in each, no shell; the event on stdin.
fn run_hook(hook: &Value, plugin_root: &Path, project: &Path, home: &Path, input: &Value) -> (i32, String, String) {
    let expand = |s: &str| s.replace("${CLAUDE_PLUGIN_ROOT}", plugin_root.to_str().unwrap());
    let command = expand(hook["command"].as_str().expect("a command hook"));
    let args: Vec<String> =
        hook["args"].as_array().expect("exec form").iter().map(|a| expand(a.as_str().unwrap())).collect();
    let mut child = Command::new(&command)
        .args(&args)
        .current_dir(project)
        .env("HOME", home)
        .env("CLAUDE_PLUGIN_ROOT", plugin_root)
        .env("CLAUDE_PROJECT_DIR", project)
        .env_remove("ENGINE_MODELS_DIR")
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command}: {e}"));
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        exit_code(out.status),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs every hook the `hooks.json` lists for `event` (whose matcher, if any, matches `tool`).
fn run_event(
    hooks: &Value,
    name: &str,
    plugin_root: &Path,
    project: &Path,
    home: &Path,
    transcript: &Path,
) -> Vec<(i32, String, String)> {
    let input = event(name, project, transcript);
    let entries = hooks["hooks"][name].as_array().unwrap_or_else(|| panic!("hooks.json has no {name}"));
    let mut outs = Vec::new();
    for entry in entries {
        if let Some(m) = entry["matcher"].as_str() {
            assert!(m.split('|').any(|t| Some(t) == input["tool_name"].as_str()), "{name}: matcher {m}");
        }
        for hook in entry["hooks"].as_array().unwrap() {
            outs.push(run_hook(hook, plugin_root, project, home, &input));
        }
    }
    outs
}

fn records(project: &Path) -> usize {
    std::fs::read_dir(project.join(".claude/memory")).map(|d| d.count()).unwrap_or(0)
}

/// Waits until the index the first session started in the background is built: `engine index`
/// succeeds once the background run has let go of the index.
fn wait_for_index(engine: &Path, project: &Path, home: &Path) {
    for _ in 0..1500 {
        let out = Command::new(engine)
            .arg("index")
            .arg(project)
            .env("HOME", home)
            .env_remove("ENGINE_MODELS_DIR")
            .output()
            .unwrap();
        if out.status.success() && project.join(".engine/CURRENT").is_file() {
            return;
        }
        assert_eq!(out.status.code(), Some(4), "only the lock may stop it: {}", String::from_utf8_lossy(&out.stderr));
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!("the background index of {} never finished", project.display());
}

/// Where Claude Code put the plugin: its copy in the plugin cache, and the folder it runs the
/// plugin from (the cache, or for a marketplace in a local folder that folder: `readFromFolder`).
struct Installed {
    plugin_root: PathBuf,
    cache: PathBuf,
}

/// Validates the package in `out` strictly (the plugin and the marketplace), adds the marketplace
/// and installs the plugin from it under `home`, as a user would.
fn install(out: &Path, home: &Path, cwd: &Path) -> Installed {
    for dir in [out.join("engine"), out.to_path_buf()] {
        let (code, stdout, stderr) =
            claude_in(home, cwd, &["plugin", "validate", "--strict", dir.to_str().unwrap()], None);
        assert_eq!(code, 0, "validate {}: {stdout}{stderr}", dir.display());
        assert!(stdout.contains("Validation passed"), "{stdout}");
    }
    let (code, stdout, stderr) = claude_in(home, cwd, &["plugin", "marketplace", "add", out.to_str().unwrap()], None);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = claude_in(home, cwd, &["plugin", "install", "engine@engine-local"], None);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, listed, stderr) = claude_in(home, cwd, &["plugin", "list", "--json"], None);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let ours = listed.as_array().unwrap().iter().find(|e| e["id"] == "engine@engine-local").expect("installed").clone();
    assert_eq!(ours["enabled"], true, "{ours}");
    let cache = PathBuf::from(ours["installPath"].as_str().unwrap());
    assert!(cache.starts_with(home.join(".claude/plugins/cache")), "{ours}");
    let plugin_root = ours["readFromFolder"].as_str().map_or(cache.clone(), PathBuf::from);
    Installed { plugin_root, cache }
}

#[test]
fn the_packaged_plugin_installs_with_the_real_client_and_its_hooks_answer_as_the_schema_says() {
    let out = tempfile::tempdir().unwrap();
    package(out.path());
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let p = project.path();
    let Installed { plugin_root, cache } = install(out.path(), home.path(), p);
    let (code, mcp, stderr) = claude_in(home.path(), p, &["mcp", "list"], None);
    assert_eq!(code, 0, "{stderr}");
    let line = mcp.lines().find(|l| l.starts_with("plugin:engine:engine:")).unwrap_or_else(|| panic!("{mcp}"));
    assert!(
        line.contains("Connected") && line.contains(&plugin_root.join("bin/engine").display().to_string()),
        "{mcp}"
    );

    // Every command of the installed hooks.json, as written.
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(plugin_root.join("hooks/hooks.json")).unwrap()).unwrap();
    let events: Vec<&String> = hooks["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(events, ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "PostCompact", "SessionEnd"]);
    let transcript = transcripts().join("short.jsonl");
    let run = |name: &str| {
        let outs = run_event(&hooks, name, &plugin_root, p, home.path(), &transcript);
        assert_eq!(outs.len(), 1, "{name}");
        let (code, stdout, stderr) = outs.into_iter().next().unwrap();
        assert_eq!(code, 0, "{name}: {stderr}");
        (check_output(name, &stdout), stderr)
    };
    // The first session in a project without an index starts indexing it in the background.
    // The user is told in the message the client shows them; the model gets nothing.
    let (first, stderr) = run("SessionStart");
    let first = first.unwrap_or_else(|| panic!("no message: {stderr}"));
    assert!(first["systemMessage"].as_str().is_some_and(|m| m.contains("started indexing")), "{first}");
    assert!(first.get("hookSpecificOutput").is_none() && stderr.contains("started indexing"), "{first} {stderr}");
    let engine = plugin_root.join("bin/engine");
    wait_for_index(&engine, p, home.path());
    let (digest, stderr) = run("SessionStart");
    assert!(digest.is_some(), "the sample's memory makes a digest: {stderr}");
    let (context, stderr) = run("UserPromptSubmit");
    let context = context.unwrap_or_else(|| panic!("no context: {stderr}"));
    let text = context["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(text.contains("Redis") && text.contains("session_store.rs"), "{text}");
    std::fs::write(p.join("docs/zebra.md"), "# Zebra\n\nThe zebra credentials rotate daily.\n").unwrap();
    assert_eq!(run("PostToolUse").0, None);
    assert!(p.join(".engine/pending-paths").is_file(), "the edit is recorded for the next prompt");
    let before = records(p);
    assert_eq!(run("PreCompact").0, None);
    assert_eq!(run("PostCompact").0, None);
    assert_eq!(run("SessionEnd").0, None);
    assert!(records(p) > before, "memory captured from the transcript");

    // The copy in Claude Code's cache answers the same way, its hooks.json run as written there.
    let cached: Value =
        serde_json::from_str(&std::fs::read_to_string(cache.join("hooks/hooks.json")).unwrap()).unwrap();
    assert_eq!(cached, hooks);
    for name in &events {
        for (code, stdout, stderr) in run_event(&cached, name, &cache, p, home.path(), &transcript) {
            assert_eq!(code, 0, "{name}: {stderr}");
            let out = check_output(name, &stdout);
            assert_eq!(out.is_some(), matches!(name.as_str(), "UserPromptSubmit" | "SessionStart"), "{name}: {stderr}");
        }
    }

    // The models were the plugin's own, found beside its binary and checked against their sha256,
    // in the folder Claude Code runs and in its cache alike (group-writable, as umask 002 made it).
    let verified = std::fs::read_to_string(p.join(".engine/verified-models.json")).unwrap();
    assert!(verified.contains(&plugin_root.join("models/model.onnx").display().to_string()), "{verified}");
    let search = Command::new(cache.join("bin/engine"))
        .args(["search", "--json", "how are sessions stored"])
        .current_dir(p)
        .env("HOME", home.path())
        .env_remove("ENGINE_MODELS_DIR")
        .output()
        .unwrap();
    assert!(search.status.success(), "{}", String::from_utf8_lossy(&search.stderr));
    let answer: Value = serde_json::from_slice(&search.stdout).unwrap();
    assert_eq!(answer["degraded"], false, "the cache's models load: {}", String::from_utf8_lossy(&search.stderr));
    let verified = std::fs::read_to_string(p.join(".engine/verified-models.json")).unwrap();
    assert!(verified.contains(&cache.join("models/model.onnx").display().to_string()), "{verified}");
}

/// A project whose settings run the engine's own hook (`engine hook install`) gets each event
/// once: the plugin's hook, run beside it as Claude Code would, prints and writes nothing.
#[test]
fn the_plugin_hook_steps_aside_where_the_settings_run_the_engines_own() {
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let p = project.path();
    // `engine` on PATH is this binary, as a project install wants.
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin().parent().unwrap().display());
    let engine = |args: &[&str], stdin: Option<&Value>| {
        let mut cmd = Command::new(bin());
        cmd.args(args).current_dir(p).env("HOME", home.path()).env("CLAUDE_PROJECT_DIR", p).env("PATH", &path);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let input = stdin.map(Value::to_string).unwrap_or_default();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            exit_code(out.status),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = engine(&["index", p.to_str().unwrap()], None);
    assert_eq!(code, 0, "{stderr}");
    let transcript = transcripts().join("short.jsonl");
    let plugin = |name: &str| engine(&["hook", "--plugin"], Some(&event(name, p, &transcript)));
    // Alone, the plugin's hook answers.
    let (code, alone, stderr) = plugin("UserPromptSubmit");
    assert_eq!(code, 0);
    assert!(check_output("UserPromptSubmit", &alone).is_some(), "{stderr}");
    let installs = [
        (p.join(".claude/settings.json"), "--project"),
        (p.join(".claude/settings.local.json"), "--local"),
        (home.path().join(".claude/settings.json"), "--user"),
    ];
    for (file, flag) in &installs {
        let (code, _, stderr) = engine(&["hook", "install", flag], None);
        assert_eq!(code, 0, "{stderr}");
        assert!(file.is_file(), "{flag} wrote {}", file.display());
        let before = records(p);
        for name in ["UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact", "PostCompact", "SessionEnd"] {
            assert_eq!(plugin(name), (0, String::new(), String::new()), "{name} with {flag}");
        }
        assert_eq!(records(p), before, "nothing captured twice ({flag})");
        // The settings' own hook, run as Claude Code runs a settings command (through a shell),
        // gives the context the plugin's gave alone.
        let installed: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let command = installed["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().unwrap().to_string();
        let mut child = Command::new("sh")
            .args(["-c", &command])
            .current_dir(p)
            .env("HOME", home.path())
            .env("CLAUDE_PROJECT_DIR", p)
            .env("PATH", &path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event("UserPromptSubmit", p, &transcript).to_string().as_bytes())
            .unwrap();
        let by_hand = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&by_hand.stdout), alone, "{command}");
        let (code, _, stderr) = engine(&["hook", "uninstall", flag], None);
        assert_eq!(code, 0, "{stderr}");
    }
    // Settings that run only some events: the plugin steps aside for those alone.
    let only =
        json!({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "engine hook # engine-hook"}]}]}});
    std::fs::write(&installs[0].0, only.to_string()).unwrap();
    assert_eq!(plugin("SessionEnd"), (0, String::new(), String::new()));
    assert!(check_output("UserPromptSubmit", &plugin("UserPromptSubmit").1).is_some());
}

/// The installs a team commits run `engine` from PATH, and refuse, naming the fix, where that
/// would run nothing or something else.
#[test]
fn project_installs_run_engine_from_path_or_say_why_not() {
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let p = project.path();
    let dir_of_bin = bin().parent().unwrap().to_path_buf();
    let system = "/usr/local/bin:/usr/bin:/bin";
    let with_engine = format!("{}:{system}", dir_of_bin.display());
    let install = |what: &str, flags: &[&str], cwd: &Path, path: &str| {
        let out = Command::new(bin())
            .arg(what)
            .arg("install")
            .args(flags)
            .current_dir(cwd)
            .env("HOME", home.path())
            .env("PATH", path)
            .output()
            .unwrap();
        (
            exit_code(out.status),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Not on PATH: refused, nothing written.
    for what in ["hook", "mcp"] {
        for flags in [&[][..], &["--project"][..]] {
            let (code, out, err) = install(what, flags, p, system);
            assert_eq!((code, out.as_str()), (2, ""), "{what} {flags:?}: {err}");
            assert!(
                err.contains("`engine` is not on this PATH")
                    && err.contains("cargo install --path .")
                    && err.contains("--local"),
                "{err}"
            );
        }
    }
    // Another build first on PATH: refused, naming it.
    let other = tempfile::tempdir().unwrap();
    let fake = other.path().join("engine");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let shadowed = format!("{}:{with_engine}", other.path().display());
    let (code, _, err) = install("hook", &["--project"], p, &shadowed);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{}, not this binary", fake.display())), "{err}");
    assert!(!p.join(".claude/settings.json").exists() && !p.join(".mcp.json").exists());

    // On PATH: the bare command, which Claude Code runs from PATH.
    for what in ["hook", "mcp"] {
        let (code, out, err) = install(what, &["--project"], p, &with_engine);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("added"), "{out}");
    }
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(p.join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(settings["hooks"]["SessionStart"][0]["hooks"][0]["command"], "engine hook # engine-hook");
    let printed = Command::new(bin()).args(["hook", "print-config"]).output().unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&printed.stdout).unwrap(),
        settings,
        "print-config shows what install writes"
    );
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(p.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["engine"]["command"], "engine");
    // A project's .mcp.json server waits for each person's approval; approved, it connects.
    std::fs::write(p.join(".claude/settings.local.json"), r#"{"enableAllProjectMcpServers": true}"#).unwrap();
    let trusted =
        json!({"projects": {p.canonicalize().unwrap().display().to_string(): {"hasTrustDialogAccepted": true}}});
    std::fs::write(home.path().join(".claude.json"), trusted.to_string()).unwrap();
    let (code, listed, err) = claude_in(home.path(), p, &["mcp", "list"], Some(&with_engine));
    assert_eq!(code, 0, "{err}");
    assert!(listed.lines().any(|l| l.starts_with("engine: engine mcp") && l.contains("Connected")), "{listed}");
}

/// `--local` stays on this machine, where Claude Code reads it: the hooks in
/// `.claude/settings.local.json`, the server in `~/.claude.json` under the project (its git work
/// tree, from a subdirectory too, as `claude mcp add --scope local` keys it), both by this
/// binary's path, which need not be on PATH.
#[test]
fn local_installs_are_where_claude_code_reads_them() {
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let p = project.path();
    let sub = p.join("src");
    let system = "/usr/local/bin:/usr/bin:/bin";
    let install = |what: &str, cwd: &Path| {
        let mut cmd = Command::new(bin());
        let out = cmd.args([what, "install", "--local"]).current_dir(cwd).env("HOME", home.path()).env("PATH", system);
        let out = out.output().unwrap();
        assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("added"), "{out:?}");
    };
    install("hook", p);
    install("mcp", &sub);
    let local: Value =
        serde_json::from_str(&std::fs::read_to_string(p.join(".claude/settings.local.json")).unwrap()).unwrap();
    assert_eq!(
        local["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!("{} hook # engine-hook", bin().display())
    );
    let user: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap()).unwrap();
    let key = p.canonicalize().unwrap().display().to_string();
    assert_eq!(user["projects"][&key]["mcpServers"]["engine"]["command"], bin().display().to_string(), "{user}");
    let (code, got, err) = claude_in(home.path(), &sub, &["mcp", "get", "engine"], Some(system));
    assert_eq!(code, 0, "{err}");
    assert!(
        got.contains("Local config") && got.contains("Connected") && got.contains(&bin().display().to_string()),
        "{got}"
    );
    let out = Command::new(bin())
        .args(["mcp", "uninstall", "--local"])
        .current_dir(&sub)
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("removed"), "{out:?}");
    let (_, listed, _) = claude_in(home.path(), &sub, &["mcp", "list"], Some(system));
    assert!(!listed.contains("engine:"), "{listed}");
}
