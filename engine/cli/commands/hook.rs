//! `engine hook`: the Claude Code hook itself (event JSON on stdin), and `hook install` /
//! `hook uninstall`.

use crate::cli::flags::{HookAction, HookArgs, Scope};
use crate::integrations::hook::Invocation;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub(crate) fn run(args: HookArgs, config: Option<&Path>) -> Result<i32> {
    match args.action {
        None => answer(&Invocation { plain: args.plain, config: config.map(Path::to_path_buf) }),
        Some(HookAction::Install(scope)) => install(&scope),
        Some(HookAction::Uninstall(scope)) => uninstall(&scope),
    }
}

/// Reads the event, prints what the hook says and exits 0, whatever happened.
fn answer(how: &Invocation) -> ! {
    use std::io::Read;
    let mut input = Vec::new();
    // Never fail on stdin: an unreadable one is reported like malformed JSON.
    let _ = std::io::stdin().take(64 << 20).read_to_end(&mut input);
    // Does not return: `finish` leaves with `_exit`, so exit never races ONNX Runtime.
    crate::integrations::hook::finish(crate::integrations::hook::run(&input, how))
}

/// `.claude/settings.json` of this project, or of the user.
fn settings_file(scope: &Scope) -> Result<PathBuf> {
    if scope.user {
        let home = std::env::var_os("HOME").ok_or_else(|| crate::Error::InvalidInput("HOME is not set".into()))?;
        Ok(PathBuf::from(home).join(".claude/settings.json"))
    } else {
        Ok(std::env::current_dir()?.join(".claude/settings.json"))
    }
}

fn install(scope: &Scope) -> Result<i32> {
    let path = settings_file(scope)?;
    let exe = std::env::current_exe()?;
    let r = crate::integrations::hook::install(&path, &exe)?;
    if r.changed.is_empty() {
        println!("{}: the engine's hooks are already installed", path.display());
    } else {
        println!(
            "{}: added {} ({})",
            path.display(),
            r.changed.join(", "),
            crate::integrations::hook::hook_command(&exe)
        );
    }
    if let Some(b) = r.backup {
        println!("previous file kept as {}", b.display());
    }
    Ok(0)
}

fn uninstall(scope: &Scope) -> Result<i32> {
    let path = settings_file(scope)?;
    let r = crate::integrations::hook::uninstall(&path)?;
    if r.changed.is_empty() {
        println!("{}: no engine hooks to remove", path.display());
    } else {
        println!("{}: removed the engine's {} hooks", path.display(), r.changed.join(", "));
    }
    if let Some(b) = r.backup {
        println!("previous file kept as {}", b.display());
    }
    Ok(0)
}
