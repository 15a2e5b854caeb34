//! `engine hook`: the Claude Code hook itself (event JSON on stdin), and `hook install` /
//! `hook uninstall`.

use crate::cli::flags::{HookAction, HookArgs, Scope};
use crate::integrations::hook::Invocation;
use crate::integrations::install::{program_for, Scope as Where};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub(crate) fn run(args: HookArgs, config: Option<&Path>) -> Result<i32> {
    match args.action {
        None => answer(&Invocation { plain: args.plain, config: config.map(Path::to_path_buf), plugin: args.plugin }),
        Some(HookAction::Install(scope)) => install(&scope),
        Some(HookAction::Uninstall(scope)) => uninstall(&scope),
        Some(HookAction::PrintConfig(what)) => {
            let config = match what.plugin {
                true => crate::integrations::hook::plugin_config(),
                false => crate::integrations::hook::settings_config(Path::new(crate::integrations::install::BARE)),
            };
            println!("{}", serde_json::to_string_pretty(&config)?);
            Ok(0)
        }
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

/// `.claude/settings.json` of this project (shared), `.claude/settings.local.json` (this
/// machine), or `~/.claude/settings.json` (the user's).
fn settings_file(scope: &Scope) -> Result<PathBuf> {
    match scope.scope() {
        Where::User => {
            let home = std::env::var_os("HOME").ok_or_else(|| crate::Error::InvalidInput("HOME is not set".into()))?;
            Ok(PathBuf::from(home).join(".claude/settings.json"))
        }
        Where::Local => Ok(std::env::current_dir()?.join(".claude/settings.local.json")),
        Where::Project => Ok(std::env::current_dir()?.join(".claude/settings.json")),
    }
}

fn install(scope: &Scope) -> Result<i32> {
    let path = settings_file(scope)?;
    let exe = program_for(scope.scope(), &std::env::current_exe()?, std::env::var_os("PATH").as_deref())?;
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
        println!("{}: removed the engine's {} hooks{}", path.display(), r.changed.join(", "), left(r.left));
    }
    if let Some(b) = r.backup {
        println!("previous file kept as {}", b.display());
    }
    Ok(0)
}

/// What uninstall did to the file, as the end of its line.
pub(crate) fn left(left: Option<crate::integrations::install::Left>) -> &'static str {
    use crate::integrations::install::Left;
    match left {
        Some(Left::Restored) => "; the file is restored from its backup, which is removed",
        Some(Left::Removed) => "; the file is removed (install created it)",
        Some(Left::Written) | None => "",
    }
}
