//! The `rigbake` command line: argument parsing, planning, running bake jobs
//! and reporting; reading bakes back for `verify` and `preview`. Holds no
//! animation logic: bakes and the runtime reference come from
//! `rigbake-core`, encodings and files from `rigbake-format`, pictures from
//! `rigbake-preview`.

pub mod args;
pub mod inspect;
pub mod job;
pub mod output;
pub mod plan;
pub mod playback;
pub mod preview;
pub mod report;
pub mod verify;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser as _;

/// Exit code when every model succeeded (or was skipped with a reason).
pub const EXIT_OK: u8 = 0;
/// Exit code when at least one model failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for usage errors (bad arguments).
pub const EXIT_USAGE: u8 = 2;

/// Runs the command line with `args` (including the program name).
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    match cli.command {
        args::Command::Bake(bake) => run_plan(plan::BakePlan::from_bake_args(&bake)),
        args::Command::Vat(vat) => run_plan(plan::BakePlan::from_vat_args(&vat)),
        args::Command::Inspect(inspect) => ExitCode::from(inspect::run(&inspect)),
        args::Command::Verify(verify) => ExitCode::from(verify::run(&verify)),
        args::Command::Preview(preview) => ExitCode::from(preview::run(&preview)),
    }
}

fn run_plan(plan: Result<plan::BakePlan, String>) -> ExitCode {
    match plan {
        Ok(plan) => ExitCode::from(plan::execute(&plan)),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
