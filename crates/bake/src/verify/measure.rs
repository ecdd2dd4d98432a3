//! Measuring a bake: play every clip through the runtime reference at frame
//! times and at mid-frame times, evaluate the source directly at the same
//! instants ([`super::play`]), and gather error statistics per clip and
//! per output.
//!
//! Samples are evaluated in parallel, each by one worker, and folded in
//! sample order, so the numbers do not depend on the thread count.

use std::collections::BTreeSet;

use rayon::prelude::*;
use rigbake_core::runtime::{ClipInfo, PlayMode};

use super::play::{Jobs, Kind, Path, Sample, SampleResult, Scratch, Subject, state_at};
use super::stats::{ClipStats, Output, OutputStats, Stats, grow};
use crate::playback::{LoadError, VatPlayback};

/// The instants checked in clip `clip`: every `stride`-th frame and the
/// last, played once (frame `i` is row `i`, even at a loop's last frame);
/// the midpoint of every `stride`-th pair of frames played in the clip's
/// own mode; and for a loop whose last frame falls short of the clip end,
/// the midpoint of that wrap interval.
fn samples_of(clip: usize, info: &ClipInfo, stride: usize) -> Vec<Sample> {
    let last = info.frames.max(1) - 1;
    let mut frames: Vec<u32> = (0..=last).step_by(stride).collect();
    if frames.last() != Some(&last) {
        frames.push(last);
    }
    let mut out: Vec<Sample> = frames
        .into_iter()
        .map(|i| Sample {
            clip,
            time: info.frame_time(i),
            mode: PlayMode::Once,
            kind: Kind::Frame,
        })
        .collect();
    let mode = PlayMode::of(info);
    for i in (0..last).step_by(stride) {
        out.push(Sample {
            clip,
            time: (info.frame_time(i) + info.frame_time(i + 1)) / 2.0,
            mode,
            kind: Kind::Mid,
        });
    }
    if info.looping && info.length_frames() > f64::from(last) {
        out.push(Sample {
            clip,
            time: (info.frame_time(last) + info.length()) / 2.0,
            mode: PlayMode::Loop,
            kind: Kind::Mid,
        });
    }
    out
}

/// Evaluates `samples` on every path of `paths`, in parallel; per
/// sample, one result per path, in the order of `samples`.
fn evaluate(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    samples: &[Sample],
) -> Vec<Vec<SampleResult>> {
    let jobs = Jobs::new(subject.model, paths);
    samples
        .par_iter()
        .map_init(
            || Scratch::new(subject.model),
            |scratch, s| jobs.sample(subject, s, scratch),
        )
        .collect()
}

/// Evaluates `samples` in row order (neighbours share rows), in groups
/// whose rows fit `window_bytes` of the deferred VAT path `vat` (all at
/// once without one), each on a window of just those rows. The results
/// come back in the order of `samples`, so the folded numbers depend on
/// neither the windows nor the order.
fn streamed(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    vat: Option<&VatPlayback>,
    samples: &[Sample],
    window_bytes: u64,
) -> Result<Vec<Vec<SampleResult>>, LoadError> {
    let frames = vat.map_or(u32::MAX, |v| {
        v.primitives
            .iter()
            .map(|p| p.address.frames)
            .max()
            .unwrap_or(0)
    });
    let reads: Vec<BTreeSet<u32>> = samples
        .iter()
        .map(|s| {
            let gpu = state_at(&subject.clips[s.clip].info, s.time, s.mode);
            gpu.rows_read(frames.saturating_sub(1)).collect()
        })
        .collect();
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by_key(|&i| (reads[i].first().copied().unwrap_or(0), i));
    let row_bytes = vat.map_or(0, |v| v.row_bytes().max(1));
    let max_rows = (window_bytes.checked_div(row_bytes).unwrap_or(u64::MAX)).max(1) as usize;
    let mut results: Vec<Vec<SampleResult>> = samples.iter().map(|_| Vec::new()).collect();
    let (mut group, mut rows): (Vec<usize>, BTreeSet<u32>) = Default::default();
    let mut run = |group: &mut Vec<usize>, rows: &mut BTreeSet<u32>| {
        let window = match vat {
            Some(vat) => Some((vat, vat.window(&rows.iter().copied().collect::<Vec<_>>())?)),
            None => None,
        };
        let windowed: Vec<Path<'_>> = paths
            .iter()
            .map(|p| match (p, &window) {
                (Path::Vat(v), Some((vat, w))) if std::ptr::eq(*v, *vat) => Path::Vat(w),
                _ => *p,
            })
            .collect();
        let batch: Vec<Sample> = group.iter().map(|&i| samples[i]).collect();
        for (&i, r) in group.iter().zip(evaluate(subject, &windowed, &batch)) {
            results[i] = r;
        }
        group.clear();
        rows.clear();
        Ok::<_, LoadError>(())
    };
    for i in order {
        let new = reads[i].difference(&rows).count();
        if !group.is_empty() && rows.len() + new > max_rows {
            run(&mut group, &mut rows)?;
        }
        rows.extend(&reads[i]);
        group.push(i);
    }
    if !group.is_empty() {
        run(&mut group, &mut rows)?;
    }
    Ok(results)
}

/// Decoded texture bytes a streamed VAT measurement holds at once (one
/// window of rows), unless a single sample needs more.
pub const WINDOW_BYTES: u64 = 48 << 20;

/// Measures the outputs `paths` over the clips in `selected` (indices
/// into the clip table), checking every `stride`-th frame; one
/// [`OutputStats`] per path, in order. Every sample's direct evaluation is
/// computed once for all paths. A VAT path loaded with
/// [`crate::playback::Decode::Rows`] is streamed: its rows are decoded a
/// window of at most [`WINDOW_BYTES`] at a time; the numbers are the same
/// as with textures decoded whole. An error is a texture that fails to
/// decode.
pub fn measure(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    selected: &[usize],
    stride: usize,
) -> Result<Vec<OutputStats>, LoadError> {
    measure_windowed(subject, paths, selected, stride, WINDOW_BYTES)
}

/// [`measure`] with windows of at most `window_bytes` (tests use tiny
/// windows to cross many window edges).
pub fn measure_windowed(
    subject: &Subject<'_>,
    paths: &[Path<'_>],
    selected: &[usize],
    stride: usize,
    window_bytes: u64,
) -> Result<Vec<OutputStats>, LoadError> {
    let samples: Vec<Sample> = selected
        .iter()
        .flat_map(|&c| samples_of(c, &subject.clips[c].info, stride.max(1)))
        .collect();
    let deferred = paths.iter().find_map(|p| match p {
        Path::Vat(v) if v.is_deferred() => Some(*v),
        _ => None,
    });
    let evaluated = streamed(subject, paths, deferred, &samples, window_bytes)?;
    // Each path's samples folded in sample order.
    let mut outputs = Vec::new();
    for (k, path) in paths.iter().enumerate() {
        let (output, primitives) = match path {
            Path::Bones(b) => (Output::Bones, b.primitives.len()),
            Path::Vat(v) => (Output::Vat, v.primitives.len()),
        };
        let mut clips: Vec<ClipStats> = selected
            .iter()
            .map(|&clip| ClipStats {
                clip,
                frames: Stats::default(),
                mid: Stats::default(),
            })
            .collect();
        let mut direct = None;
        for (s, r) in samples.iter().zip(evaluated.iter().map(|r| &r[k])) {
            let Some(entry) = clips.iter_mut().find(|c| c.clip == s.clip) else {
                continue;
            };
            match s.kind {
                Kind::Frame => {
                    entry.frames.merge(&r.stats);
                    if let Some((lo, hi)) = r.direct {
                        grow(&mut direct, lo, hi);
                    }
                }
                Kind::Mid => entry.mid.merge(&r.stats),
            }
        }
        let diagonal = direct.map_or(0.0, |(lo, hi)| (hi - lo).length());
        outputs.push(OutputStats {
            output,
            primitives,
            diagonal,
            clips,
        });
    }
    Ok(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigbake_core::timeline::SampleRule;

    #[test]
    fn samples_cover_frames_mids_and_the_wrap() {
        // 103 frames, 102.5 frames long: the half-frame wrap gets a midpoint.
        let info = ClipInfo {
            start_row: 0,
            frames: 103,
            fps: 30.0,
            duration: 102.5 / 30.0,
            looping: true,
            rule: SampleRule::FixedRate,
        };
        let s = samples_of(0, &info, 10);
        let times = |kind: Kind| -> Vec<f64> {
            s.iter()
                .filter(|s| s.kind == kind)
                .map(|s| s.time)
                .collect()
        };
        let frames = times(Kind::Frame);
        assert_eq!(frames.len(), 12, "0, 10, ..., 100 and the last (102)");
        assert!((frames[11] - 102.0 / 30.0).abs() < 1e-12);
        let mids = times(Kind::Mid);
        assert_eq!(mids.len(), 12, "0.5, 10.5, ..., 100.5 and the wrap");
        assert!((mids[0] - 0.5 / 30.0).abs() < 1e-12);
        assert!((mids[11] - 102.25 / 30.0).abs() < 1e-9);
        // The wrap midpoint plays the lerp from the last frame to the first.
        let g = state_at(&info, mids[11], PlayMode::Loop);
        assert_eq!((g.rows[0][2], g.rows[1][2]), (102.0, 0.0));
    }
}
