//! The `engine` command line: a thin layer over the library. Parses flags, runs one command, and
//! turns a library error into a one-line message and an exit code by class.

use clap::Parser;

fn main() {
    let cli = engine::cli::Cli::parse();
    match engine::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            let code = err.downcast_ref::<engine::Error>().map(engine::Error::exit_code).unwrap_or(1);
            eprintln!("engine: {err:#}");
            std::process::exit(code);
        }
    }
}
