//! A preview as PNG bytes: a labelled contact sheet of the plan's cells,
//! or an animated PNG of one clip's frames, rendered a few rows at a time
//! (parallel, bounded memory). The same inputs give the same bytes.

use rigbake_format::image::{Rgb8, encode_apng, encode_png};
use rigbake_preview::sheet;

use super::scene::{Producer, Topology};
use super::{Plan, fit_plan_camera, render_range};
use crate::playback::{Loaded, LoadedClip};

/// Pixels of the picture of `cells` cells of `size` pixels in `columns`
/// columns (a sheet with gaps and labels), or of an animation of `cells`
/// frames; computed in u64 before any allocation or u32 arithmetic.
pub fn pixels(cells: u64, columns: u32, size: u32, animated: bool) -> u64 {
    let size = u64::from(size);
    if animated {
        return cells.saturating_mul(size * size);
    }
    let (columns, gap, label) = (
        u64::from(columns.max(1)),
        u64::from(sheet::GAP),
        u64::from(rigbake_preview::label::LABEL_HEIGHT),
    );
    let rows = cells.div_ceil(columns).max(1);
    (columns.saturating_mul(size + gap) + gap)
        .saturating_mul(rows.saturating_mul(size + label + gap) + gap)
}

/// The frame delay of an animation of `clip` as a PNG fraction of seconds.
fn delay(clip: &LoadedClip) -> (u16, u16) {
    let rate = clip.info.frame_rate();
    if rate.fract() == 0.0 && (1.0..=65535.0).contains(&rate) {
        (1, rate as u16)
    } else if rate > 0.0 {
        ((1000.0 / rate).round().clamp(1.0, 65535.0) as u16, 1000)
    } else {
        (1, 30)
    }
}

/// A rendered preview.
#[derive(Debug)]
pub struct Picture {
    /// The PNG (or APNG) bytes.
    pub png: Vec<u8>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Renders `plan` of `loaded` as a contact sheet (each cell labelled: the
/// clip's name on its first cell, then the frame number), or, with
/// `animated` (a clip index whose frames are the plan's cells), as an
/// animated PNG at the clip's frame rate. The caller checks the size
/// first ([`pixels`] against [`super::MAX_PIXELS`]).
pub fn picture(
    loaded: &Loaded,
    plan: &Plan,
    animated: Option<usize>,
) -> Result<Picture, rigbake_format::FormatError> {
    let topology = Topology::new(loaded, plan.path);
    let camera = fit_plan_camera(loaded, plan, &topology, Producer::Bake);
    let batch = (plan.columns as usize * 4).max(8);
    if let Some(c) = animated {
        let mut images: Vec<Vec<u8>> = Vec::with_capacity(plan.cells.len());
        for first in (0..plan.cells.len()).step_by(batch) {
            let frames = render_range(loaded, plan, &topology, &camera, first, batch);
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
        return Ok(Picture {
            png: encode_apng(&frames, num, den)?,
            width: plan.size,
            height: plan.size,
        });
    }
    let mut s = sheet::Sheet::new(plan.cells.len(), plan.columns, plan.size);
    for first in (0..plan.cells.len()).step_by(batch) {
        let frames = render_range(loaded, plan, &topology, &camera, first, batch);
        for (i, f) in frames.iter().enumerate() {
            s.place(first + i, plan.columns, f);
        }
    }
    for (i, &(c, f)) in plan.cells.iter().enumerate() {
        let first_of_clip = i == 0 || plan.cells[i - 1].0 != c;
        let text = if first_of_clip {
            format!("{} {f}", loaded.clips[c].name)
        } else {
            f.to_string()
        };
        s.label(i, plan.columns, plan.size, &text);
    }
    Ok(Picture {
        png: encode_png(&Rgb8 {
            width: s.width,
            height: s.height,
            pixels: &s.rgb,
        })?,
        width: s.width,
        height: s.height,
    })
}
