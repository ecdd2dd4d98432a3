//! `rigbake preview FILE.rigbake --out PNG`: a contact sheet of the bake
//! played through the runtime reference (rows: clips, columns: evenly
//! spaced frames), or with `--animate CLIP` an animated PNG of one clip,
//! rendered by `rigbake-preview` from the documented default camera fitted
//! to the bounds over every frame shown. The same inputs give the same
//! bytes. Exit code 0 when written, 1 on damaged or unwritable files, 2 for
//! usage errors.

use rigbake::playback::{self, LoadError, Loaded};
use rigbake::preview::{MAX_PIXELS, Plan, fit_plan_camera, render_range, scene, spaced_frames};
use rigbake_format::image::{Rgb8, encode_apng, encode_png};
use rigbake_preview::sheet;
use scene::{PathChoice, Producer, Topology};

use crate::args::{PathArg, PreviewArgs, Verbosity};
use crate::error::UsageError;
use crate::exit::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};

fn usage(message: &str) -> u8 {
    eprintln!("error: {message}");
    EXIT_USAGE
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

/// The frame delay of an animation of `clip` as a PNG fraction of seconds.
fn delay(clip: &playback::LoadedClip) -> (u16, u16) {
    let rate = clip.info.frame_rate();
    if rate.fract() == 0.0 && (1.0..=65535.0).contains(&rate) {
        (1, rate as u16)
    } else if rate > 0.0 {
        ((1000.0 / rate).round().clamp(1.0, 65535.0) as u16, 1000)
    } else {
        (1, 30)
    }
}

/// Runs `rigbake preview`; returns the exit code.
pub fn run(args: &PreviewArgs, verbosity: Verbosity) -> u8 {
    if args.columns == 0 || !(16..=2048).contains(&args.size) {
        return usage("--columns must be at least 1 and --size 16 to 2048");
    }
    if !has_png_extension(&args.out) {
        return usage(&format!(
            "{}: preview writes PNG (an animated PNG with --animate): name the file *.png",
            args.out.display()
        ));
    }
    let loaded = match playback::load(
        &args.file,
        args.source.as_deref(),
        match args.path {
            Some(PathArg::Bones) => playback::Paths::Bones,
            Some(PathArg::Vat) => playback::Paths::Vat,
            None => playback::Paths::BonesElseVat,
        },
    ) {
        Ok(l) => l,
        Err(LoadError::Usage(m)) => return usage(&m),
        Err(LoadError::Failed(m)) => {
            eprintln!("error: {m}");
            return EXIT_FAILED;
        }
    };
    // The image never replaces the bake or its source.
    if let Err(e) = rigbake::listed::bake_inputs(&args.file, &loaded.source.path).check(&args.out) {
        return usage(&e.to_string());
    }
    let path = match (args.path, &loaded.bones, &loaded.vat) {
        (Some(PathArg::Bones), Some(_), _) | (None, Some(_), _) => PathChoice::Bones,
        (Some(PathArg::Vat), _, Some(_)) | (None, None, Some(_)) => PathChoice::Vat,
        (None, None, None) => {
            eprintln!(
                "error: {}: nothing to show: the bake has neither bone-weight channels nor vertex animation textures",
                args.file.display()
            );
            return EXIT_FAILED;
        }
        (Some(p), _, _) => {
            return usage(&format!(
                "{}: the bake has no {} path",
                args.file.display(),
                if p == PathArg::Bones {
                    "bone-matrix (with weights)"
                } else {
                    "VAT"
                }
            ));
        }
    };
    // Which clips, and how many cells: counted before anything is
    // allocated, so a huge --columns is refused by the image-size check
    // instead of sizing a list of cells.
    let (selected, animated) = match &args.animate {
        Some(name) => match clip_index(&loaded, name) {
            Ok(c) => (vec![c], Some(c)),
            Err(e) => return usage(&e.to_string()),
        },
        None => {
            let selected: Result<Vec<usize>, UsageError> = if args.clips.is_empty() {
                Ok((0..loaded.clips.len()).collect())
            } else {
                args.clips.iter().map(|n| clip_index(&loaded, n)).collect()
            };
            match selected {
                Ok(s) => (s, None),
                Err(e) => return usage(&e.to_string()),
            }
        }
    };
    let (columns, cell_count) = match animated {
        Some(c) => (1, u64::from(loaded.clips[c].info.frames.max(1))),
        None => (
            args.columns,
            (selected.len() as u64).saturating_mul(u64::from(args.columns)),
        ),
    };
    let size = u64::from(args.size);
    let pixels = match animated {
        Some(_) => cell_count.saturating_mul(size * size),
        None => {
            // In u64 before any u32 sheet arithmetic: at most 2048-pixel
            // cells, and the cell count bounds the rows.
            let (columns, gap, label) = (
                u64::from(columns),
                u64::from(sheet::GAP),
                u64::from(rigbake_preview::label::LABEL_HEIGHT),
            );
            let rows = cell_count.div_ceil(columns).max(1);
            (columns.saturating_mul(size + gap) + gap)
                .saturating_mul(rows.saturating_mul(size + label + gap) + gap)
        }
    };
    if pixels > MAX_PIXELS {
        return usage(&format!(
            "the image would have {pixels} pixels (more than {MAX_PIXELS}); use a smaller --size, fewer --columns or --clip"
        ));
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
    let plan = Plan {
        path,
        cells,
        columns,
        size: args.size,
    };
    let topology = Topology::new(&loaded, path);
    let camera = fit_plan_camera(&loaded, &plan, &topology, Producer::Bake);
    // A few rows of cells at a time: parallel, with bounded memory.
    let batch = (plan.columns as usize * 4).max(8);
    let bytes = match animated {
        Some(c) => {
            let mut images: Vec<Vec<u8>> = Vec::with_capacity(plan.cells.len());
            for first in (0..plan.cells.len()).step_by(batch) {
                let frames = render_range(&loaded, &plan, &topology, &camera, first, batch);
                images.extend(frames.into_iter().map(|f| f.rgb));
            }
            let (num, den) = delay(&loaded.clips[c]);
            let frames: Vec<Rgb8<'_>> = images
                .iter()
                .map(|rgb| Rgb8 {
                    width: plan.size,
                    height: plan.size,
                    pixels: rgb,
                })
                .collect();
            encode_apng(&frames, num, den)
        }
        None => {
            let mut s = sheet::Sheet::new(plan.cells.len(), plan.columns, plan.size);
            for first in (0..plan.cells.len()).step_by(batch) {
                let frames = render_range(&loaded, &plan, &topology, &camera, first, batch);
                for (i, f) in frames.iter().enumerate() {
                    s.place(first + i, plan.columns, f);
                }
            }
            // Each cell's label: the clip's name on its first cell, then
            // the frame number (clip-table frames, from 0).
            for (i, &(c, f)) in plan.cells.iter().enumerate() {
                let first_of_clip = i == 0 || plan.cells[i - 1].0 != c;
                let text = if first_of_clip {
                    format!("{} {f}", loaded.clips[c].name)
                } else {
                    f.to_string()
                };
                s.label(i, plan.columns, plan.size, &text);
            }
            encode_png(&Rgb8 {
                width: s.width,
                height: s.height,
                pixels: &s.rgb,
            })
        }
    };
    let (width, height) = match animated {
        Some(_) => (plan.size, plan.size),
        None => sheet::Sheet::dimensions(plan.cells.len(), plan.columns, plan.size),
    };
    let written: Result<usize, Box<dyn std::error::Error>> =
        bytes.map_err(Into::into).and_then(|b| {
            std::fs::write(&args.out, &b)
                .map(|()| b.len())
                .map_err(Into::into)
        });
    match written {
        Ok(bytes) => {
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
                    rigbake::report::human_bytes(bytes as u64)
                );
            }
            if verbosity == Verbosity::Verbose {
                for line in frames_drawn(&loaded, &plan) {
                    eprintln!("  {line}");
                }
            }
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {}: {e}", args.out.display());
            EXIT_FAILED
        }
    }
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
