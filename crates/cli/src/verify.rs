//! `rigbake verify FILE.rigbake [--source MODEL]`: plays every clip of a
//! bake through the runtime reference (both paths the bake holds) and
//! compares the vertices with a direct evaluation of the source glTF, at
//! frame times and at mid-frame times. Exit code 0 when every clip is within
//! tolerance, 1 when not (or a file is damaged, or the source is another
//! file), 2 for usage errors (bad arguments, source not found).
//!
//! Semantics and tolerances are described in `docs/runtime.md`.

use rigbake::playback;
use rigbake::verify::{self as measure, Tolerances};
use rigbake::verify_report as report;

use crate::args::{Verbosity, VerifyArgs};
use crate::exit::{EXIT_FAILED, EXIT_OK, Failure, Outcome};

/// Runs `rigbake verify`: exit code 0 when every clip passes, 1 when not.
pub fn run(args: &VerifyArgs, verbosity: Verbosity) -> Outcome {
    if args.stride == 0 {
        return Err(Failure::Usage("--stride must be at least 1".into()));
    }
    let positive = |v: f64| v.is_finite() && v >= 0.0;
    if !positive(args.tolerance)
        || !positive(args.normal_tolerance)
        || !args.mid_tolerance.is_none_or(positive)
    {
        return Err(Failure::Usage(
            "tolerances must be finite and not negative".into(),
        ));
    }
    // VAT rows are read window by window as the measurement reaches them.
    let loaded = playback::load_with(
        &args.file,
        args.source.as_deref(),
        playback::Paths::All,
        playback::Decode::Rows,
    )?;
    let mut selected = Vec::new();
    if args.clips.is_empty() {
        selected.extend(0..loaded.clips.len());
    } else {
        for name in &args.clips {
            selected.push(crate::preview::clip_index(&loaded, name)?);
        }
    }
    let mut problems = loaded.checksum_mismatches.clone();
    let mut problems_fail = !problems.is_empty();
    if !loaded.source.sha256_matches {
        problems.push(format!(
            "{}: SHA-256 differs from the one the bake recorded for `{}` (baked from another version of the file)",
            loaded.source.path.display(),
            loaded.metadata.source.file_name
        ));
        if args.allow_source_mismatch {
            eprintln!("warning: {}", problems[problems.len() - 1]);
        } else {
            problems_fail = true;
            problems.push("pass --allow-source-mismatch to compare anyway".to_owned());
        }
    }
    let subject = measure::Subject::of(&loaded);
    let mut outputs = Vec::new();
    if !problems_fail || args.allow_source_mismatch || loaded.source.sha256_matches {
        let paths = measure::Path::all(&loaded);
        outputs = measure::measure(&subject, &paths, &selected, args.stride)?;
        if outputs.is_empty() {
            problems.push(format!(
                "{}: nothing to verify: the bake has neither bone-weight channels nor vertex animation textures (bake without --no-weights, or with --vat)",
                args.file.display()
            ));
            problems_fail = true;
        }
    }
    // The recorded numbers besides the textures (root motion, animated
    // bounds), recomputed where they can be.
    let records = measure::records::check_all(&loaded, &outputs);
    if !records.failures.is_empty() {
        problems.extend(records.failures.iter().cloned());
        problems_fail = true;
    }
    let tolerance = Tolerances {
        relative: args.tolerance,
        normal_degrees: args.normal_tolerance,
        mid_relative: args.mid_tolerance,
        accept_recorded_loss: args.accept_recorded_loss,
    };
    let report = report::build(
        &loaded,
        &outputs,
        tolerance,
        args.stride,
        problems,
        problems_fail,
        records,
    );
    if args.json {
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| Failure::Failed(format!("cannot write JSON: {e}")))?;
        crate::stdout::println(&json);
    } else if verbosity != Verbosity::Quiet {
        crate::stdout::print(&report::text(&report));
    } else if !report.pass {
        // -q: only what went wrong.
        for line in report::text(&report).lines().filter(|l| {
            l.starts_with("problem:") || l.starts_with("fail:") || l.starts_with("FAIL")
        }) {
            crate::stdout::println(line);
        }
    }
    Ok(if report.pass { EXIT_OK } else { EXIT_FAILED })
}
