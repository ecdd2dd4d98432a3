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
use crate::exit::{EXIT_OK, Failure, Outcome};

/// Whether `path` names a source model (`.glb` or `.gltf`, any case).
fn is_model(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("glb") || e.eq_ignore_ascii_case("gltf"))
}

/// Runs `rigbake inspect`.
pub fn run(args: &InspectArgs) -> Outcome {
    if args.file.is_dir() {
        return Err(Failure::Usage(format!(
            "`{}` is a folder; inspect reads one container (.rigbake) or model (.glb, .gltf) file",
            args.file.display()
        )));
    }
    if is_model(&args.file) {
        return run_source(args);
    }
    if args.scene.is_some() {
        return Err(Failure::Usage(
            "--scene applies to a model (.glb, .gltf), not to a container".into(),
        ));
    }
    let (report, problem) =
        load_report(&args.file, args.verify).map_err(|e| Failure::Failed(e.to_string()))?;
    // The report of a damaged container is still shown, then the failure.
    print(args.json, &report, || render(&report))?;
    match problem {
        Some(p) => Err(Failure::Failed(p.to_string())),
        None => Ok(EXIT_OK),
    }
}

/// `rigbake inspect MODEL.glb|.gltf`.
fn run_source(args: &InspectArgs) -> Outcome {
    if args.verify {
        return Err(Failure::Usage(
            "--verify checks a container's checksums; a model has none".into(),
        ));
    }
    if !(args.fps.is_finite() && args.fps > 0.0 && args.fps <= 1000.0) {
        return Err(Failure::Usage(format!(
            "--fps must be above 0 and at most 1000, got {}",
            args.fps
        )));
    }
    let options = ImportOptions {
        scene: args.scene,
        ..ImportOptions::default()
    };
    let sampling = Sampling {
        fps: args.fps,
        ..Sampling::default()
    };
    let report = describe_source(&args.file, &options, sampling)
        .map_err(|e| Failure::Failed(e.to_string()))?;
    print(args.json, &report, || render_source(&report))
}

/// Prints `report` as JSON or as the text `text` makes.
fn print<T: Serialize>(json: bool, report: &T, text: impl FnOnce() -> String) -> Outcome {
    if json {
        let json = serde_json::to_string_pretty(report);
        crate::stdout::println(&json.map_err(|e| Failure::Failed(e.to_string()))?);
    } else {
        crate::stdout::print(&text());
    }
    Ok(EXIT_OK)
}
