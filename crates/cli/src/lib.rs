//! The `rigbake` command line: arguments, manifests, planning, batch
//! scheduling, progress, reports and rendering. The pipeline itself (one
//! model's bake, playback, verification, preview posing, inspection) is the
//! `rigbake` library crate; this crate decides what to run and shows what
//! happened.

mod args;
mod batch;
mod docs;
mod error;
mod exit;
mod inspect;
mod plan;
mod preview;
mod progress;
mod stdout;
mod verify;
mod view;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser as _;
use rigbake::report;

use crate::exit::{EXIT_FAILED, EXIT_OK, EXIT_USAGE, Failure, Outcome};

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
    // The flags before the subcommand and the subcommand's own together.
    let own: args::OutputFlags = match &cli.command {
        args::Command::Bake(a) => a.output.into(),
        args::Command::Vat(a) => a.output.into(),
        args::Command::MergeReport(a) => a.output.into(),
        args::Command::Verify(a) => a.output.into(),
        args::Command::Preview(a) => a.output.into(),
        _ => args::OutputFlags::default(),
    };
    let Some(output) = cli.output.with(own) else {
        eprintln!("error: -q/--quiet and -v/--verbose cannot be used together");
        return ExitCode::from(EXIT_USAGE);
    };
    let verbosity = output.verbosity();
    let outcome = match cli.command {
        args::Command::Bake(bake) => run_plan(plan::BakePlan::from_bake_args(&bake, verbosity)),
        args::Command::Vat(vat) => run_plan(plan::BakePlan::from_vat_args(&vat, verbosity)),
        args::Command::Inspect(inspect) => inspect::run(&inspect),
        args::Command::MergeReport(m) => merge_reports(&m, verbosity),
        args::Command::Verify(verify) => verify::run(&verify, verbosity),
        args::Command::Preview(preview) => preview::run(&preview, verbosity),
        args::Command::View(view) => view::run(&view),
        args::Command::Completions(c) => docs::completions(c.shell),
        args::Command::Man => docs::man(),
    };
    // The one place a command's error is printed.
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("error: {}", failure.message());
            ExitCode::from(failure.code())
        }
    }
}

fn run_plan(plan: Result<plan::BakePlan, error::UsageError>) -> Outcome {
    let plan = plan?;
    for problem in &plan.problems {
        eprintln!("error: {problem}");
    }
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    let code = batch::execute(&plan)?;
    if !plan.problems.is_empty() && code == EXIT_OK {
        return Err(Failure::Failed(format!(
            "{} path(s) could not be searched or used (see above)",
            plan.problems.len()
        )));
    }
    Ok(code)
}

fn merge_reports(args: &args::MergeReportArgs, verbosity: args::Verbosity) -> Outcome {
    let mut reports = Vec::new();
    for path in &args.reports {
        // A regular file of at most 256 MiB (a FIFO or device is refused
        // without blocking).
        // Read as formats/report.schema.json says: the error names the
        // field the schema refuses.
        let parsed: Result<report::Report, Box<dyn std::error::Error>> =
            rigbake_format::fsread::read_regular(path, 256 << 20)
                .map_err(Into::into)
                .and_then(|b| report::Report::from_json(&b).map_err(Into::into));
        let report = parsed.map_err(|e| {
            Failure::Usage(format!("{}: not a rigbake report: {e}", path.display()))
        })?;
        reports.push(report);
    }
    let merged = report::Report::merge(reports).map_err(|e| Failure::Failed(e.to_string()))?;
    if args.json {
        let json = serde_json::to_string_pretty(&merged);
        stdout::println(&json.map_err(|e| Failure::Failed(e.to_string()))?);
    } else if verbosity != args::Verbosity::Quiet || merged.totals.failed > 0 {
        stdout::println(&merged.summary());
    }
    Ok(if merged.totals.failed > 0 {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}
