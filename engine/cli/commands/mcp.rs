//! `engine mcp`: the MCP server over stdio, and `mcp install` / `mcp uninstall`.

use crate::cli::flags::{McpAction, McpArgs, Scope};
use crate::integrations::mcp;
use anyhow::Result;

pub(crate) fn run(args: McpArgs) -> Result<i32> {
    match args.action {
        None => {
            mcp::serve(args.index.as_deref())?;
            Ok(0)
        }
        Some(McpAction::Install(scope)) => install(&scope),
        Some(McpAction::Uninstall(scope)) => uninstall(&scope),
    }
}

fn install(scope: &Scope) -> Result<i32> {
    let path = mcp::config_path(scope.user)?;
    let r = mcp::install(&path, &std::env::current_exe()?)?;
    match (r.changed.is_empty(), r.backup) {
        (true, _) => println!("{}: the engine's MCP server is already installed", path.display()),
        (false, backup) => {
            println!("{}: added the MCP server {:?} (`engine mcp`)", path.display(), mcp::SERVER_NAME);
            if let Some(b) = backup {
                println!("previous file kept as {}", b.display());
            }
        }
    }
    Ok(0)
}

fn uninstall(scope: &Scope) -> Result<i32> {
    let path = mcp::config_path(scope.user)?;
    let r = mcp::uninstall(&path)?;
    if r.changed.is_empty() {
        println!("{}: no engine MCP server to remove", path.display());
    } else {
        println!("{}: removed the MCP server {:?}", path.display(), mcp::SERVER_NAME);
    }
    Ok(0)
}
