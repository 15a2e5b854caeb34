//! Exit codes, by class, in one place: 0 done, 1 anything else, 2 bad input or usage, 3 models
//! missing or broken, 4 index state (missing generation, incompatible, locked, damaged), 5 a golden
//! set below its threshold, 6 the search backend (`[backend] url`) unreachable. Errors are
//! printed as one line on stderr.

use crate::error::{one_line, ErrorClass};

/// A usage error: a bad flag or value, as for the library's bad-input errors.
pub(crate) const USAGE: i32 = 2;

/// A golden set scored below its threshold (`engine eval`).
pub(crate) const QUALITY_GATE: i32 = 5;

/// The exit code of an error's class.
fn code(class: ErrorClass) -> i32 {
    match class {
        ErrorClass::Input => USAGE,
        ErrorClass::Model => 3,
        ErrorClass::Index => 4,
        ErrorClass::Unreachable => 6,
        ErrorClass::Other => 1,
    }
}

/// Prints an error the daemon met answering for this process, as [`fail`] prints its own, and
/// returns its class's exit code.
pub(crate) fn report(class: ErrorClass, message: &str) -> i32 {
    eprintln!("engine: {}", one_line(message));
    code(class)
}

/// Prints the error and its causes on one line and exits with its class's code.
pub(crate) fn fail(err: &anyhow::Error) -> ! {
    let class = err.downcast_ref::<crate::Error>().map_or(ErrorClass::Other, crate::Error::class);
    eprintln!("engine: {}", one_line(&message(err)));
    std::process::exit(code(class));
}

/// `println!` panics when stdout cannot be written (a full disk, `> /dev/full`): that is an I/O
/// error like any other, said in one line with exit code 1, not a panic.
pub(crate) fn output_errors_exit_cleanly() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(cause) = message.strip_prefix("failed printing to stdout: ") {
            eprintln!("engine: cannot write the output: {}", one_line(cause));
            std::process::exit(code(ErrorClass::Other));
        }
        previous(info)
    }));
}

/// Help and version go out as clap prints them; a usage error becomes one line.
pub(crate) fn usage_error(e: clap::Error) -> ! {
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
    std::process::exit(USAGE);
}

/// The error and its causes, each said once.
fn message(err: &anyhow::Error) -> String {
    crate::error::said_once(err.chain().map(ToString::to_string))
}
