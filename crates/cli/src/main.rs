//! The `rigbake` command: parses arguments and hands over to the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    rigbake_cli::run(std::env::args_os())
}
