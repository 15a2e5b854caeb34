//! The `engine` command line (the `cli` feature, on by default): flags parsed once into settings
//! (`flags`), one module per command (`commands`), output for a person (`output`), and exit codes
//! by class in one place (`exit`). `engine/main.rs` only calls [`main`].

mod commands;
mod exit;
mod flags;
mod output;

use anyhow::Result;
use clap::Parser;
use flags::{Cli, Command};

/// The `engine` program: parses the command line, runs one command, and exits with its code.
pub fn main() -> ! {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => exit::usage_error(e),
    };
    if !matches!(cli.command, Command::Hook(_) | Command::Serve(_)) {
        // `engine search … | head`: a reader that stops early ends the process quietly, as for any
        // Unix filter, instead of a panic in println!. The hook and the daemon handle EPIPE
        // themselves (the hook must exit 0 whatever its reader does).
        // SAFETY: setting a signal's disposition to its default before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    exit::output_errors_exit_cleanly();
    match run(cli) {
        Ok(code) => std::process::exit(code),
        Err(err) => exit::fail(&err),
    }
}

/// Runs one command; returns the process exit code.
fn run(cli: Cli) -> Result<i32> {
    // First, while the process has one thread: see `silence_runtime_telemetry`.
    crate::models::silence_runtime_telemetry();
    let config = cli.config.as_deref();
    match cli.command {
        Command::Index(args) => commands::index::run(args, config),
        Command::Export(args) => commands::export::run(args),
        Command::Push(args) => commands::push::run(args, config),
        Command::Status(args) => commands::status::run(args),
        Command::Eval(args) => commands::eval::run(args, config),
        Command::Chunks(args) => commands::chunks::run(args, config),
        Command::Search(args) => commands::search::run(args, config),
        Command::Hook(args) => commands::hook::run(args, config),
        Command::Serve(args) => commands::serve::run(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Config(args) => commands::config::run(args, config),
        Command::Memory(args) => commands::memory::run(args, config),
        Command::Embed(args) => commands::embed::run(args, config),
        Command::Models(args) => commands::models::run(args),
        Command::Doctor => commands::models::doctor(),
    }
}
