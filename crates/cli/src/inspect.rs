//! `rigbake inspect`: prints the report of [`rigbake::inspect`] (a
//! container) or [`rigbake::inspect_source`] (a source model, by its
//! `.glb`/`.gltf` extension) as a readable summary, or as one JSON document
//! for scripts (`formats/inspect.schema.json`,
//! `formats/inspect-source.schema.json`).

use rigbake::inspect::{load_report, render};

use rigbake::inspect_source::{describe_source, render_source};
use rigbake_core::import::ImportOptions;
use rigbake_core::timeline::Sampling;
use serde::Serialize;

use crate::args::InspectArgs;
use crate::exit::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// Whether `path` names a source model (`.glb` or `.gltf`, any case).
fn is_model(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("glb") || e.eq_ignore_ascii_case("gltf"))
}

/// Runs `rigbake inspect`; returns the exit code.
pub fn run(args: &InspectArgs) -> u8 {
    if is_model(&args.file) {
        return run_source(args);
    }
    if args.scene.is_some() {
        eprintln!("error: --scene applies to a model (.glb, .gltf), not to a container");
        return EXIT_USAGE;
    }
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
    let code = print(args.json, &report, || render(&report));
    if problem.is_some() { EXIT_FAILED } else { code }
}

/// `rigbake inspect MODEL.glb|.gltf`.
fn run_source(args: &InspectArgs) -> u8 {
    if args.verify {
        eprintln!("error: --verify checks a container's checksums; a model has none");
        return EXIT_USAGE;
    }
    if !(args.fps.is_finite() && args.fps > 0.0 && args.fps <= 1000.0) {
        eprintln!(
            "error: --fps must be above 0 and at most 1000, got {}",
            args.fps
        );
        return EXIT_USAGE;
    }
    let options = ImportOptions {
        scene: args.scene,
        ..ImportOptions::default()
    };
    let sampling = Sampling {
        fps: args.fps,
        ..Sampling::default()
    };
    match describe_source(&args.file, &options, sampling) {
        Ok(report) => print(args.json, &report, || render_source(&report)),
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILED
        }
    }
}

/// Prints `report` as JSON or as the text `text` makes.
fn print<T: Serialize>(json: bool, report: &T, text: impl FnOnce() -> String) -> u8 {
    if json {
        match serde_json::to_string_pretty(report) {
            Ok(s) => {
                crate::stdout::println(&s);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FAILED;
            }
        }
    } else {
        crate::stdout::print(&text());
    }
    EXIT_OK
}
