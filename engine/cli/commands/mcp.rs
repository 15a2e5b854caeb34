//! `engine mcp`: the MCP server over stdio, and `mcp install` / `mcp uninstall` /
//! `mcp print-config`.

use crate::cli::flags::{McpAction, McpArgs, Scope};
use crate::integrations::install::program_for;
use crate::integrations::mcp;
use anyhow::Result;
use std::path::Path;

pub(crate) fn run(args: McpArgs) -> Result<i32> {
    match args.action {
        None => {
            mcp::serve(args.index.as_deref())?;
            Ok(0)
        }
        Some(McpAction::Install(scope)) => install(&scope),
        Some(McpAction::Uninstall(scope)) => uninstall(&scope),
        Some(McpAction::PrintConfig(what)) => {
            let config = match what.plugin {
                true => mcp::plugin_config(),
                false => serde_json::json!({"mcpServers": {
                    mcp::SERVER_NAME: mcp::entry(Path::new(crate::integrations::install::BARE))
                }}),
            };
            println!("{}", serde_json::to_string_pretty(&config)?);
            Ok(0)
        }
    }
}

/// Where the scope writes, as a person reads it: the file, and the project for a local install.
fn shown(target: &mcp::Target) -> String {
    match &target.project {
        Some(project) => format!("{} (project {project})", target.path.display()),
        None => target.path.display().to_string(),
    }
}

fn install(scope: &Scope) -> Result<i32> {
    let target = mcp::target(scope.scope(), &std::env::current_dir()?)?;
    let exe = program_for(scope.scope(), &std::env::current_exe()?, std::env::var_os("PATH").as_deref())?;
    let r = mcp::install_at(&target, &exe)?;
    match (r.changed.is_empty(), r.backup) {
        (true, _) => println!("{}: the engine's MCP server is already installed", shown(&target)),
        (false, backup) => {
            println!("{}: added the MCP server {:?} (`{} mcp`)", shown(&target), mcp::SERVER_NAME, exe.display());
            if let Some(b) = backup {
                println!("previous file kept as {}", b.display());
            }
        }
    }
    Ok(0)
}

fn uninstall(scope: &Scope) -> Result<i32> {
    let target = mcp::target(scope.scope(), &std::env::current_dir()?)?;
    let r = mcp::uninstall_at(&target)?;
    if r.changed.is_empty() {
        println!("{}: no engine MCP server to remove", shown(&target));
    } else {
        println!("{}: removed the MCP server {:?}{}", shown(&target), mcp::SERVER_NAME, super::hook::left(r.left));
    }
    Ok(0)
}
