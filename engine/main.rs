//! The `engine` binary: everything it does is the library's `cli` module (argument parsing,
//! one module per command, exit codes by class), so this file only hands over to it.

fn main() {
    engine::cli::main()
}
