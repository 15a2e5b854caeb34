//! The `engine` command line: a thin layer over the library. Parses flags, runs one command, and
//! turns a library error into a one-line message and an exit code by class.

use clap::Parser;

mod cli;
use engine::error::one_line;

/// Exit code of a usage error (bad flag or value), as for the library's bad-input errors.
const EXIT_USAGE: i32 = 2;

fn main() {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    if !matches!(cli.command, cli::Command::Hook { .. } | cli::Command::Serve { .. }) {
        // `engine search … | head`: a reader that stops early ends the process quietly, as for any
        // Unix filter, instead of a panic in println!. The hook and the daemon handle EPIPE
        // themselves (the hook must exit 0 whatever its reader does).
        // SAFETY: setting a signal's disposition to its default before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    match cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            let code = err.downcast_ref::<engine::Error>().map(engine::Error::exit_code).unwrap_or(1);
            eprintln!("engine: {}", one_line(&message(&err)));
            std::process::exit(code);
        }
    }
}

/// Help and version go out as clap prints them; a usage error becomes one line.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let rendered = e.render().to_string();
    let mut text = String::new();
    for line in rendered.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("For more information") {
            continue;
        }
        if !text.is_empty() {
            // "…not provided:" introduces the next line; other lines are separate remarks.
            text.push_str(if text.ends_with(':') { " " } else { "; " });
        }
        text.push_str(line);
    }
    eprintln!("engine: {}", one_line(text.strip_prefix("error: ").unwrap_or(&text)));
    std::process::exit(EXIT_USAGE);
}

/// The error and its causes, each said once: library errors already end with their source, which
/// anyhow's chain would repeat.
fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
