//! The command line as a new user meets it: help for every flag, the demo script.

use crate::common::*;

/// Issue 38: `engine status --index/--json` had no help. (Every flag of every command is checked
/// by the unit test in engine/cli/flags; this is the help a user reads.)
#[test]
fn status_help_documents_its_flags() {
    let (code, out, err) = engine(&["help", "status"], None);
    assert_eq!(code, 0, "{err}");
    let line = |flag: &str| {
        out.lines().find(|l| l.trim_start().starts_with(flag)).unwrap_or_else(|| panic!("{out}")).to_string()
    };
    for flag in ["--index", "--json"] {
        let l = line(flag);
        assert!(l.split_whitespace().count() > 2, "{flag} has no help: {l}");
    }
}

/// Issue 38: the demo wrote its index to a fixed path in the temporary directory, shared by every
/// user of the machine. It now uses a directory of its own and removes it.
#[test]
fn the_demo_uses_a_temporary_directory_of_its_own_and_removes_it() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let fake = tempfile::tempdir().unwrap();
    // The binary is built: a cargo that does nothing, and models from where the tests get them.
    let cargo = fake.path().join("cargo");
    std::fs::write(&cargo, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let target = bin().parent().unwrap().parent().unwrap().to_path_buf();
    let models = std::env::var_os("ENGINE_MODELS_DIR").map_or_else(|| root().join("models"), Into::into);
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new("bash")
        .arg(root().join("scripts/demo.sh"))
        .env("PATH", path)
        .env("TMPDIR", tmp.path())
        .env("CARGO_TARGET_DIR", &target)
        .env("ENGINE_MODELS_DIR", &models)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("$ engine search \"retry_with_backoff\"") && stdout.contains("src/upload.py"), "{stdout}");
    assert!(stdout.contains(&format!("indexed {}/engine-demo.", tmp.path().display())), "{stdout}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "nothing left in TMPDIR");
}
