//! The loop pass, run over a planned timeline: a clip loops when its poses
//! at the clip start and the clip end match (SPEC section 2). Planning
//! ([`super::plan`]) leaves every loop flag `false`; this pass evaluates two
//! poses per clip and sets them; user overrides come after it
//! ([`crate::timeline::Timeline::build`]).

use glam::{DMat4, DVec3};

use super::plan::Timeline;
use crate::eval::evaluate::Evaluator;
use crate::model::Model;

/// The loop pass: sets each clip's loop flag, `true` when its poses at the
/// clip start and the clip end match. Poses are compared through every
/// node's global matrix: the upper 3x3 within `1e-3` of its largest column length (about
/// 0.06 degrees), the translation within `1e-4` of the skeleton's extent
/// (the diagonal of the box around all node origins at the clip start),
/// and morph weights within `1e-4`. The clip end rather than the last
/// sampled frame is compared because at a fixed rate the last frame may
/// fall short of the end by up to one frame, while a cyclic animation is
/// authored to match at its end.
pub fn detect_loops(timeline: &mut Timeline, model: &Model) {
    let mut ev = Evaluator::new(model);
    let mut first_globals = ev.globals.clone();
    let mut first_weights = ev.local.weights.clone();
    for c in 0..timeline.clips.len() {
        timeline.evaluate_time(&mut ev, c, 0.0);
        first_globals.clone_from(&ev.globals);
        first_weights.clone_from(&ev.local.weights);
        timeline.evaluate_time(&mut ev, c, timeline.clips[c].duration);
        timeline.clips[c].looping = globals_match(&first_globals, &ev.globals)
            && first_weights
                .iter()
                .zip(&ev.local.weights)
                .all(|(a, b)| (a - b).abs() <= 1e-4);
    }
}

/// Whether two sets of global matrices describe the same pose (see
/// [`detect_loops`] for the tolerances).
fn globals_match(a: &[DMat4], b: &[DMat4]) -> bool {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for m in a {
        lo = lo.min(m.w_axis.truncate());
        hi = hi.max(m.w_axis.truncate());
    }
    let extent = (hi - lo).length();
    let extent = if extent.is_finite() && extent > 0.0 {
        extent
    } else {
        1.0
    };
    a.iter().zip(b).all(|(a, b)| {
        let size = a
            .x_axis
            .truncate()
            .length()
            .max(a.y_axis.truncate().length())
            .max(a.z_axis.truncate().length());
        let linear_ok = [
            (a.x_axis, b.x_axis),
            (a.y_axis, b.y_axis),
            (a.z_axis, b.z_axis),
        ]
        .iter()
        .all(|(u, v)| (u.truncate() - v.truncate()).abs().max_element() <= 1e-3 * size);
        linear_ok && a.w_axis.truncate().distance(b.w_axis.truncate()) <= 1e-4 * extent
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    fn at(x: f64, angle: f64) -> DMat4 {
        DMat4::from_rotation_translation(DQuat::from_rotation_z(angle), DVec3::new(x, 0.0, 0.0))
    }

    #[test]
    fn poses_match_within_the_stated_tolerances() {
        // Two nodes 2 units apart: the translation tolerance is 1e-4 * 2.
        let a = [at(0.0, 0.0), at(2.0, 0.0)];
        assert!(globals_match(&a, &a));
        assert!(globals_match(&a, &[at(0.0, 0.0), at(2.0 + 1.5e-4, 0.0)]));
        assert!(!globals_match(&a, &[at(0.0, 0.0), at(2.0 + 2.5e-4, 0.0)]));
        // Rotations: entries move by about the angle; the bound is 1e-3.
        assert!(globals_match(&a, &[at(0.0, 0.0), at(2.0, 0.5e-3)]));
        assert!(!globals_match(&a, &[at(0.0, 0.0), at(2.0, 2e-3)]));
    }
}
