//! The recorded numbers `verify` recomputes besides the played-back
//! vertices (`docs/runtime.md`, "Recorded numbers"):
//!
//! - the **root-motion record**, recomputed from the source: for every
//!   extracting clip, each frame of the track, the motion at the clip's end,
//!   the root's displacement and the rotation;
//! - the **animated bounds**: each clip's recorded box must hold every
//!   vertex the bake played back in place at the checked frames (which the
//!   measurement compares with the source), on an output in the bounds'
//!   space.
//!
//! What it cannot recompute is named in [`RecordChecks::unchecked`].

use rigbake_core::Model;
use rigbake_core::reference::source_pose_at;
use rigbake_core::timeline::root_motion::{self, RootMotionRequest};
use rigbake_format::meta::{BoundsMetadata, RootMotionMetadata, RootMotionMode};

use super::stats::{Output, OutputStats, max_nan};
use crate::playback::LoadedClip;

/// Relative tolerance of recomputed root motion: both are f64 evaluations
/// of the same source poses, equal to the last few bits.
pub const ROOT_MOTION_RELATIVE: f64 = 1e-7;

/// Relative tolerance of the bounds check, of the model's size: the
/// recorded boxes are stored as f32.
pub const BOUNDS_RELATIVE: f64 = 1e-6;

/// Relative tolerance of a recorded placement against the source's
/// rest-pose global: both are the same f64 products.
pub const PLACEMENT_RELATIVE: f64 = 1e-9;

/// Compares the placement record with the source: every named node's
/// rest-pose global matrix, entry by entry within [`PLACEMENT_RELATIVE`]
/// of the matrix's largest entry. A record's node is a space, so a mesh
/// node: it is the one mesh node of its name ([`crate::playback::space_node`]),
/// never the first node of that name (a bone or an empty may share it); a
/// name several mesh nodes share is reported unchecked as ambiguous.
pub fn check_placement(
    model: &Model,
    record: &rigbake_format::meta::PlacementMetadata,
    out: &mut RecordChecks,
) {
    let rest = rigbake_core::eval::sample::LocalPose::rest(model);
    let all = std::iter::once(("the reference", &record.reference))
        .chain(record.skins.iter().map(|s| ("a bone set's space", s)));
    let mut count = 0;
    for (what, placed) in all {
        count += 1;
        let want = match &placed.node {
            None => glam::DMat4::IDENTITY,
            Some(name) => match crate::playback::space_node(model, name) {
                Ok(n) => rigbake_core::reference::direct_global(model, &rest, n),
                Err(crate::playback::SpaceNodeError::Missing) => {
                    out.failures.push(format!(
                        "placement: {what} node `{name}` is not in the source"
                    ));
                    continue;
                }
                Err(ambiguous) => {
                    out.unchecked
                        .push(format!("placement: {what} node `{name}`: {ambiguous}"));
                    continue;
                }
            },
        };
        let want = want.to_cols_array();
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let worst = want
            .iter()
            .zip(&placed.matrix)
            .map(|(w, g)| (w - g).abs())
            .fold(0.0f64, max_nan);
        if worst.is_nan() || worst > PLACEMENT_RELATIVE * scale {
            out.failures.push(format!(
                "placement: the recorded matrix of {what} node `{}` differs from the source's rest pose by {worst:.3e}",
                placed.node.as_deref().unwrap_or("(scene root)")
            ));
        }
    }
    out.checked.push(format!("placement of {count} space(s)"));
}

/// What the record checks found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordChecks {
    /// Records checked, in words (`root motion of 3 clips`).
    pub checked: Vec<String>,
    /// Records or numbers that could not be checked, and why.
    pub unchecked: Vec<String>,
    /// Recorded numbers that disagree with what was recomputed.
    pub failures: Vec<String>,
}

/// Recomputes the root-motion record from `model` for the bake's `clips`
/// (the clip table as loaded) and compares it with `record`.
pub fn check_root_motion(
    model: &Model,
    clips: &[LoadedClip],
    record: &RootMotionMetadata,
    out: &mut RecordChecks,
) {
    if record.clips.len() != clips.len() {
        out.failures.push(format!(
            "root motion: {} entries for {} clips",
            record.clips.len(),
            clips.len()
        ));
        return;
    }
    let modes: Vec<RootMotionMode> = record.clips.iter().map(|c| c.mode).collect();
    let request = RootMotionRequest {
        mode: RootMotionMode::Keep,
        node: Some(record.node.clone()),
    };
    let mut scratch = rigbake_core::eval::sample::LocalPose::rest(model);
    let mut pose_at = |ev: &mut rigbake_core::eval::evaluate::Evaluator<'_>, c: usize, t: f64| {
        let clip = &clips[c];
        source_pose_at(
            model,
            &clip.source,
            clip.info.duration,
            t,
            &mut ev.local,
            &mut scratch,
        );
        ev.update_globals();
    };
    let plan = match root_motion::plan(model, &request, &modes, |ev, c| {
        let t = clips[c].info.frame_time(0);
        pose_at(ev, c, t)
    }) {
        Ok(Some(plan)) => plan,
        Ok(None) => {
            out.checked
                .push("root motion (no clip extracts it)".to_owned());
            return;
        }
        Err(e) => {
            out.unchecked.push(format!(
                "root motion: the motion root `{}` cannot be planned on the source ({e})",
                record.node
            ));
            return;
        }
    };
    let frame_times: Vec<Vec<f64>> = clips
        .iter()
        .zip(&record.clips)
        .map(|(c, r)| {
            if r.mode.extracts() {
                (0..c.info.frames).map(|i| c.info.frame_time(i)).collect()
            } else {
                Vec::new()
            }
        })
        .collect();
    let ends: Vec<f64> = clips.iter().map(|c| c.info.duration).collect();
    let tracks = root_motion::track(model, &plan, &frame_times, &ends, pose_at);
    let entry = |s: &root_motion::RootMotionSample| {
        [s.translation.x, s.translation.y, s.translation.z, s.yaw]
    };
    let mut extracting = 0;
    for (c, ((clip, recorded), track)) in clips.iter().zip(&record.clips).zip(&tracks).enumerate() {
        if !recorded.mode.extracts() {
            continue;
        }
        extracting += 1;
        let start = plan.clips[c].start.position;
        let end = track.end.matrix().transform_point3(start);
        let displacement = (end - start).to_array();
        let scale = recorded
            .track
            .iter()
            .flatten()
            .chain(&recorded.end)
            .chain(&recorded.displacement)
            .fold(1.0f64, |m, v| m.max(v.abs()));
        let tolerance = ROOT_MOTION_RELATIVE * scale;
        let mut differ = |what: &str, got: &[f64], want: &[f64]| {
            let off = got
                .iter()
                .zip(want)
                .map(|(g, w)| (g - w).abs())
                .fold(
                    0.0f64,
                    |m, d| if d.is_nan() { f64::INFINITY } else { m.max(d) },
                );
            if got.len() != want.len() || off > tolerance {
                out.failures.push(format!(
                    "root motion of clip `{}`: the recorded {what} is {got:?}, the source gives {want:?} (off by {off:.3e}, tolerance {tolerance:.1e})",
                    clip.name
                ));
                true
            } else {
                false
            }
        };
        if recorded.track.len() != track.frames.len() {
            out.failures.push(format!(
                "root motion of clip `{}`: {} recorded track frames for {} frames",
                clip.name,
                recorded.track.len(),
                track.frames.len()
            ));
            continue;
        }
        for (i, (got, want)) in recorded.track.iter().zip(&track.frames).enumerate() {
            if differ(&format!("track at frame {i}"), got, &entry(want)) {
                break;
            }
        }
        differ("end", &recorded.end, &entry(&track.end));
        differ("displacement", &recorded.displacement, &displacement);
        differ("rotation", &[recorded.rotation], &[track.end.yaw]);
    }
    out.checked.push(format!(
        "root motion of {extracting} extracting clip(s): track, end, displacement, rotation, against the source"
    ));
}

/// Checks that each clip's recorded box holds the positions played back in
/// place on an output in the bounds' space (`space_matches(output)`).
pub fn check_bounds(
    bounds: &BoundsMetadata,
    clips: &[LoadedClip],
    outputs: &[OutputStats],
    space_matches: impl Fn(Output) -> bool,
    out: &mut RecordChecks,
) {
    let Some(output) = outputs.iter().find(|o| space_matches(o.output)) else {
        out.unchecked.push(
            "animated bounds: no played-back output is in the bounds' space (bone sets in other nodes' spaces)".to_owned(),
        );
        return;
    };
    let mut checked = 0;
    for c in &output.clips {
        let (Some(recorded), Some((lo, hi))) = (bounds.clips.get(c.clip), c.frames.played) else {
            continue;
        };
        checked += 1;
        let extent = hi - lo;
        // The recorded bounds are of the source's motion: a played-back
        // vertex may lie outside them by its recorded encoding error and
        // the recorded loss of dropped influences.
        let slack = |v: f64| {
            BOUNDS_RELATIVE * (output.diagonal + extent.length() + v.abs())
                + c.frames.position_bound_max
                + c.frames.position_loss_max
        };
        for k in 0..3 {
            let (rmin, rmax) = (f64::from(recorded.min[k]), f64::from(recorded.max[k]));
            if lo[k] < rmin - slack(lo[k])
                || hi[k] > rmax + slack(hi[k])
                || rmin.is_nan()
                || rmax.is_nan()
            {
                out.failures.push(format!(
                    "animated bounds of clip `{}`: the recorded box {:?} to {:?} does not hold the played-back vertices ({:?} to {:?}, along {})",
                    clips[c.clip].name,
                    recorded.min,
                    recorded.max,
                    lo,
                    hi,
                    ["x", "y", "z"][k]
                ));
                break;
            }
        }
    }
    out.checked.push(format!(
        "animated bounds of {checked} clip(s), against the {} output's played-back vertices",
        output.output.name()
    ));
    out.unchecked.push(
        "animated bounds: how tight they are, and the primitives no output plays back (static meshes)".to_owned(),
    );
}

/// Slack of the clip-error check: the bake measures in f32 where verify
/// measures in f64 against the source (2% of the figure, 2e-6 of the
/// output's diagonal).
const CLIP_ERROR_SLACK: (f64, f64) = (0.02, 2e-6);

/// Checks that no clip's recorded position error (the clip-error record)
/// is below what verify measured on the played-back vertices of the same
/// output, beyond f32 noise and the recorded loss of dropped influences.
pub fn check_clip_errors(
    record: &rigbake_format::meta::ClipErrorsMetadata,
    clips: &[LoadedClip],
    outputs: &[OutputStats],
    out: &mut RecordChecks,
) {
    use rigbake_format::meta::ErrorSubject;
    let mut checked = 0;
    for o in outputs {
        let subject = match o.output {
            Output::Bones => ErrorSubject::BoneMatrices,
            Output::Vat => ErrorSubject::Vat,
        };
        let entries: Vec<_> = record
            .textures
            .iter()
            .filter(|t| t.subject == subject)
            .collect();
        if entries.is_empty() {
            continue;
        }
        for c in &o.clips {
            let recorded = entries
                .iter()
                .filter_map(|t| t.clips.get(c.clip))
                .map(|e| e.positions.max)
                .fold(0.0, f64::max);
            let measured = c.frames.position_max;
            let (relative, absolute) = CLIP_ERROR_SLACK;
            let allowed =
                recorded * (1.0 + relative) + absolute * o.diagonal + c.frames.position_loss_max;
            checked += 1;
            if measured.partial_cmp(&allowed).is_none_or(|o| o.is_gt()) {
                out.failures.push(format!(
                    "clip-error record of clip `{}` ({}): it records {recorded:.3e}, but the played-back vertices are off by {measured:.3e}",
                    clips.get(c.clip).map_or("", |x| x.name.as_str()),
                    o.output.name()
                ));
            }
        }
    }
    out.checked.push(format!(
        "clip-error record of {checked} clip(s), against the played-back vertices"
    ));
}

/// Every record check for the bake `loaded`, after its `outputs` were
/// measured: the root-motion record when the container has one, the
/// animated bounds when it has them. A container that cannot be read again
/// makes both unchecked.
pub fn check_all(loaded: &crate::playback::Loaded, outputs: &[OutputStats]) -> RecordChecks {
    let mut out = RecordChecks::default();
    let container = match rigbake_format::container::Container::open(&loaded.file) {
        Ok(c) => c,
        Err(e) => {
            out.unchecked.push(format!(
                "recorded numbers: the container does not read again ({e})"
            ));
            return out;
        }
    };
    let model = &loaded.source.model;
    if let Some(record) = container.records().placement.as_ref() {
        check_placement(model, record, &mut out);
    }
    if let Some(record) = container.records().root_motion.as_ref() {
        check_root_motion(model, &loaded.clips, record, &mut out);
    }
    if let Some(record) = container.records().clip_errors.as_ref() {
        check_clip_errors(record, &loaded.clips, outputs, &mut out);
    }
    if let Some(bounds) = container.records().bounds.as_ref() {
        let named = |n: Option<usize>| n.map(|n| model.nodes[n].name.as_str());
        let reference = bounds.reference_node.as_deref();
        let space_matches = |output: Output| match output {
            Output::Vat => loaded
                .vat
                .as_ref()
                .is_some_and(|v| named(v.reference_node) == reference),
            Output::Bones => loaded.bones.as_ref().is_some_and(|b| {
                b.textures
                    .iter()
                    .all(|t| named(Some(t.space_node)) == reference)
            }),
        };
        check_bounds(bounds, &loaded.clips, outputs, space_matches, &mut out);
    }
    out
}
