//! `rigbake preview FILE.rigbake --out PNG`: a contact sheet of the bake
//! played through the runtime reference (rows: clips, columns: evenly
//! spaced frames), or with `--animate CLIP` an animated PNG of one clip,
//! rendered by `rigbake-preview` from the documented default camera fitted
//! to the bounds over every frame shown. The same inputs give the same
//! bytes. Exit code 0 when written, 1 on damaged or unwritable files, 2 for
//! usage errors.

use rigbake::playback::{self, Loaded};
use rigbake::preview::picture::{self, Picture};
use rigbake::preview::scene::{PathChoice, rows_drawn};
use rigbake::preview::{MAX_PIXELS, Plan, spaced_frames};

use crate::args::{PathArg, PreviewArgs, Verbosity};
use crate::error::UsageError;
use crate::exit::{EXIT_OK, Failure, Outcome};

fn usage(message: impl Into<String>) -> Failure {
    Failure::Usage(message.into())
}

/// The index of the clip called `name`.
pub fn clip_index(loaded: &Loaded, name: &str) -> Result<usize, UsageError> {
    loaded
        .clips
        .iter()
        .position(|c| c.name == name)
        .ok_or_else(|| UsageError::NoClip {
            file: loaded.file.clone(),
            name: name.to_owned(),
            known: loaded.clips.iter().map(|c| c.name.clone()).collect(),
        })
}

/// Runs `rigbake preview`.
pub fn run(args: &PreviewArgs, verbosity: Verbosity) -> Outcome {
    if args.columns == 0 || !(16..=2048).contains(&args.size) {
        return Err(usage("--columns must be at least 1 and --size 16 to 2048"));
    }
    if !has_png_extension(&args.out) {
        return Err(usage(format!(
            "{}: preview writes PNG (an animated PNG with --animate): name the file *.png",
            args.out.display()
        )));
    }
    // VAT rows stay on disk until the cells to draw are known.
    let mut loaded = playback::load_with(
        &args.file,
        args.source.as_deref(),
        match args.path {
            Some(PathArg::Bones) => playback::Paths::Bones,
            Some(PathArg::Vat) => playback::Paths::Vat,
            None => playback::Paths::BonesElseVat,
        },
        playback::Decode::Rows,
    )?;
    // The image never replaces the bake or its source.
    rigbake::listed::bake_inputs(&args.file, &loaded.source.path)
        .check(&args.out)
        .map_err(|e| usage(e.to_string()))?;
    let path = match (args.path, &loaded.bones, &loaded.vat) {
        (Some(PathArg::Bones), Some(_), _) | (None, Some(_), _) => PathChoice::Bones,
        (Some(PathArg::Vat), _, Some(_)) | (None, None, Some(_)) => PathChoice::Vat,
        (None, None, None) => {
            return Err(Failure::Failed(format!(
                "{}: nothing to show: the bake has neither bone-weight channels nor vertex animation textures",
                args.file.display()
            )));
        }
        (Some(p), _, _) => {
            return Err(usage(format!(
                "{}: the bake has no {} path",
                args.file.display(),
                if p == PathArg::Bones {
                    "bone-matrix (with weights)"
                } else {
                    "VAT"
                }
            )));
        }
    };
    // Which clips, and how many cells: counted before anything is
    // allocated, so a huge --columns is refused by the image-size check
    // instead of sizing a list of cells.
    let (selected, animated) = match &args.animate {
        Some(name) => {
            let c = clip_index(&loaded, name)?;
            (vec![c], Some(c))
        }
        None if args.clips.is_empty() => ((0..loaded.clips.len()).collect(), None),
        None => {
            let selected: Result<Vec<usize>, UsageError> =
                args.clips.iter().map(|n| clip_index(&loaded, n)).collect();
            (selected?, None)
        }
    };
    let (columns, cell_count) = match animated {
        Some(c) => (1, u64::from(loaded.clips[c].info.frames.max(1))),
        None => (
            args.columns,
            (selected.len() as u64).saturating_mul(u64::from(args.columns)),
        ),
    };
    let pixels = picture::pixels(cell_count, columns, args.size, animated.is_some());
    if pixels > MAX_PIXELS {
        return Err(usage(format!(
            "the image would have {pixels} pixels (more than {MAX_PIXELS}); use a smaller --size, fewer --columns or --clip"
        )));
    }
    let mut cells = Vec::new();
    match animated {
        Some(c) => cells.extend((0..loaded.clips[c].info.frames.max(1)).map(|f| (c, f))),
        None => {
            for c in selected {
                let frames = spaced_frames(loaded.clips[c].info.frames, args.columns);
                cells.extend(frames.into_iter().map(|f| (c, f)));
            }
        }
    }
    if let Some(vat) = loaded.vat.as_ref().filter(|v| v.is_deferred()) {
        let window = vat.window(&rows_drawn(&loaded, &cells));
        loaded.vat = Some(window.map_err(|e| Failure::Failed(e.to_string()))?);
    }
    let plan = Plan {
        path,
        cells,
        columns,
        size: args.size,
    };
    let drawn = picture::picture(&loaded, &plan, animated);
    let written: Result<Picture, Box<dyn std::error::Error>> =
        drawn.map_err(Into::into).and_then(|p| {
            std::fs::write(&args.out, &p.png)
                .map(|()| p)
                .map_err(Into::into)
        });
    let Picture {
        png, width, height, ..
    } = written.map_err(|e| Failure::Failed(format!("{}: {e}", args.out.display())))?;
    if verbosity != Verbosity::Quiet {
        eprintln!(
            "wrote {} ({width} x {height}, {}, {} path; {})",
            args.out.display(),
            what_was_drawn(&loaded, &plan, animated),
            if path == PathChoice::Bones {
                "bone-matrix"
            } else {
                "VAT"
            },
            rigbake::report::human_bytes(png.len() as u64)
        );
    }
    if verbosity == Verbosity::Verbose {
        for line in frames_drawn(&loaded, &plan) {
            eprintln!("  {line}");
        }
    }
    Ok(EXIT_OK)
}

/// Whether `path` ends in `.png` (any case): the only format preview
/// writes, so a `x.jpg` is refused rather than filled with PNG bytes.
fn has_png_extension(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

/// `3 clips x 8 frames` or `an animated PNG of 92 frames of `wave``.
fn what_was_drawn(loaded: &Loaded, plan: &Plan, animated: Option<usize>) -> String {
    use rigbake::report::count;
    match animated {
        Some(c) => format!(
            "an animated PNG of {} of `{}`",
            count(plan.cells.len() as u64, "frame", None),
            loaded.clips[c].name
        ),
        None => {
            let mut clips: Vec<usize> = plan.cells.iter().map(|&(c, _)| c).collect();
            clips.dedup();
            format!(
                "{} x {}",
                count(clips.len() as u64, "clip", None),
                count(u64::from(plan.columns), "column", None)
            )
        }
    }
}

/// `-v`: one line per clip with the frames drawn (`wave: frames 0, 13, 26`).
fn frames_drawn(loaded: &Loaded, plan: &Plan) -> Vec<String> {
    let mut lines: Vec<(usize, Vec<String>)> = Vec::new();
    for &(c, f) in &plan.cells {
        match lines.last_mut() {
            Some((last, frames)) if *last == c => frames.push(f.to_string()),
            _ => lines.push((c, vec![f.to_string()])),
        }
    }
    lines
        .into_iter()
        .map(|(c, frames)| format!("{}: frames {}", loaded.clips[c].name, frames.join(", ")))
        .collect()
}
