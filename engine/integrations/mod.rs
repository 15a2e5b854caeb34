//! Where the engine meets Claude Code: the prompt pipeline they share, the hook, its warm daemon
//! and the MCP server.

pub mod daemon;
pub mod hook;
pub(crate) mod install;
pub mod mcp;
pub(crate) mod prompt;
