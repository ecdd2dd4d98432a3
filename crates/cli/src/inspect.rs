//! `rigbake inspect`: prints the report of [`rigbake::inspect`] as a
//! readable summary, or as one JSON document for scripts
//! (`formats/inspect.schema.json`).

pub use rigbake::inspect::{INSPECT_SCHEMA_VERSION, InspectReport, load_report, render};

use crate::args::InspectArgs;
use crate::exit::{EXIT_FAILED, EXIT_OK};

/// Runs `rigbake inspect`; returns the exit code.
pub fn run(args: &InspectArgs) -> u8 {
    let (report, problem) = match load_report(&args.file, args.verify) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILED;
        }
    };
    if let Some(p) = &problem {
        eprintln!("error: {p}");
    }
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => {
                crate::stdout::println(&s);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FAILED;
            }
        }
    } else {
        crate::stdout::print(&render(&report));
    }
    if problem.is_some() {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}
