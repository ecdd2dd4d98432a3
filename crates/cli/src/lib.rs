//! The `rigbake` command line: argument parsing, planning, running bake jobs
//! and reporting; reading bakes back for `verify` and `preview`. Holds no
//! animation logic: bakes and the runtime reference come from
//! `rigbake-core`, encodings and files from `rigbake-format`, pictures from
//! `rigbake-preview`.

pub mod args;
pub mod batch;
pub mod inspect;
pub mod job;
pub mod manifest;
pub mod output;
pub mod plan;
pub mod playback;
pub mod preview;
pub mod progress;
pub mod report;
pub mod settings;
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
        args::Command::MergeReport(m) => ExitCode::from(merge_reports(&m)),
        args::Command::Verify(verify) => ExitCode::from(verify::run(&verify)),
        args::Command::Preview(preview) => ExitCode::from(preview::run(&preview)),
    }
}

fn run_plan(plan: Result<plan::BakePlan, String>) -> ExitCode {
    match plan {
        Ok(plan) => ExitCode::from(batch::execute(&plan)),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn merge_reports(args: &args::MergeReportArgs) -> u8 {
    let mut reports = Vec::new();
    for path in &args.reports {
        let parsed = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<report::Report>(&b).map_err(|e| e.to_string()));
        match parsed {
            Ok(r) => reports.push(r),
            Err(e) => {
                eprintln!("error: {}: not a rigbake report: {e}", path.display());
                return EXIT_USAGE;
            }
        }
    }
    let merged = match report::Report::merge(reports) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILED;
        }
    };
    if args.json {
        match serde_json::to_string_pretty(&merged) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("error: {e}"),
        }
    } else {
        println!("{}", merged.summary());
    }
    if merged.totals.failed > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}
