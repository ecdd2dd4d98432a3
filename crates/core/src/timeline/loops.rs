//! The loop pass, run over a planned timeline: a clip loops when wrapping
//! from its end back to its start shows no jump to the eye (SPEC section
//! 2). Planning ([`super::plan`]) leaves every loop flag `false`; this pass
//! evaluates a few poses per clip and sets them; user overrides come after
//! it ([`crate::timeline::Timeline::build`]).
//!
//! The rule, with every distance relative to the model's size (the
//! diagonal of the box around its meshes and nodes at rest,
//! [`model_size`]):
//!
//! - the **jump** between two poses is the largest of, over every node: the
//!   distance its origin moves, over the model's size; and how far its
//!   rotation and scale move a point one model size away from it, over the
//!   model's size (the largest change of a column of its global 3x3 matrix,
//!   over that column's length: about the angle, in radians, for a
//!   rotation). Morph weights count by the largest change of any weight;
//! - the clip loops when the jump is at most [`LoopOptions::tolerance`]
//!   (1% of the model's size by default), **or** at most
//!   [`LoopOptions::step_factor`] (1.5) times the largest step between two
//!   neighbouring frames at the seam (the last two frames, the first two):
//!   a wrap no bigger than the clip's own motion there looks continuous,
//!   provided the clip is moving towards its start pose there (the frame
//!   before the last is farther from the start than the end is; a clip that
//!   snaps away at its last frame does not loop).
//!   Clips authored without a duplicate end frame (Mixamo's run and walk,
//!   whose end pose is one step before the start pose) loop by the second
//!   test; a death or sit-down clip, whose end pose is far from its start
//!   while the motion at the seam is slow, does not.
//!
//! Measuring a node's rotation at one model size from it is conservative for
//! small bones (a finger that turns 0.6 degrees counts like a hip), which
//! keeps a visible twist of a leaf bone from passing as a loop.

use glam::{DMat4, DVec3};

use super::plan::Timeline;
use crate::eval::evaluate::Evaluator;
use crate::model::Model;

/// How loops are detected (see the module documentation for the rule).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopOptions {
    /// Largest jump, as a fraction of the model's size, that always counts
    /// as a loop.
    pub tolerance: f64,
    /// A jump up to this many times the largest frame step at the seam also
    /// counts as a loop (0 turns the continuity test off).
    pub step_factor: f64,
    /// Root-motion hook: when set, every pose's node origins are taken
    /// relative to this node's origin, so a clip that travels (root motion
    /// in the root node's translation) can still loop in place. `None` (the
    /// default) compares the poses as they are; choosing the node is the job
    /// of root-motion extraction.
    pub root_motion_node: Option<usize>,
}

impl Default for LoopOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-2,
            step_factor: 1.5,
            root_motion_node: None,
        }
    }
}

/// The loop pass with the default [`LoopOptions`].
pub fn detect_loops(timeline: &mut Timeline, model: &Model) {
    detect_loops_with(timeline, model, &LoopOptions::default());
}

/// The loop pass: sets each clip's loop flag by the rule of the module
/// documentation. Evaluates two poses per clip, and two more when the jump
/// is over the tolerance.
pub fn detect_loops_with(timeline: &mut Timeline, model: &Model, options: &LoopOptions) {
    let size = model_size(model);
    let mut ev = Evaluator::new(model);
    for c in 0..timeline.clips.len() {
        let clip = &timeline.clips[c];
        let (duration, frames) = (clip.duration, clip.frames);
        let first = snapshot(timeline, &mut ev, c, 0.0, options);
        let end = snapshot(timeline, &mut ev, c, duration, options);
        let jump = first.distance(&end, size);
        let looping = if jump <= options.tolerance {
            true
        } else if options.step_factor > 0.0 && frames >= 2 {
            let sampling = timeline.sampling;
            let clip = &timeline.clips[c];
            let second = clip.frame_time(1, sampling);
            let before_last = clip.frame_time(frames - 2, sampling);
            let last = clip.frame_time(frames - 1, sampling);
            let at_second = snapshot(timeline, &mut ev, c, second, options);
            let at_before_last = snapshot(timeline, &mut ev, c, before_last, options);
            let at_last = snapshot(timeline, &mut ev, c, last, options);
            let step = first
                .distance(&at_second, size)
                .max(at_before_last.distance(&at_last, size));
            // Moving towards the start at the seam: the frame before the
            // last is farther from the start than the end is.
            let approaching = jump < at_before_last.distance(&first, size);
            approaching && jump <= options.step_factor * step
        } else {
            false
        };
        timeline.clips[c].looping = looping;
    }
}

/// What the loop test compares of one pose.
struct Pose {
    origins: Vec<DVec3>,
    /// Each node's global 3x3 columns, each over its length.
    axes: Vec<[DVec3; 3]>,
    weights: Vec<f64>,
}

impl Pose {
    /// The jump between two poses, relative to `size` (see the module
    /// documentation).
    fn distance(&self, other: &Pose, size: f64) -> f64 {
        let origins = self
            .origins
            .iter()
            .zip(&other.origins)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f64::max)
            / size;
        let axes = self
            .axes
            .iter()
            .zip(&other.axes)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(u, v)| u.distance(*v)))
            .fold(0.0, f64::max);
        let weights = self
            .weights
            .iter()
            .zip(&other.weights)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        origins.max(axes).max(weights)
    }
}

fn snapshot(
    timeline: &Timeline,
    ev: &mut Evaluator<'_>,
    c: usize,
    t: f64,
    options: &LoopOptions,
) -> Pose {
    timeline.evaluate_time(ev, c, t);
    let anchor = options
        .root_motion_node
        .and_then(|n| ev.globals.get(n))
        .map_or(DVec3::ZERO, |m| m.w_axis.truncate());
    Pose {
        origins: ev
            .globals
            .iter()
            .map(|m| m.w_axis.truncate() - anchor)
            .collect(),
        axes: ev
            .globals
            .iter()
            .map(|m| {
                // A column's length is the node's scale on that axis: the
                // change is measured against it (a zero column stays zero).
                let length = m
                    .x_axis
                    .truncate()
                    .length()
                    .max(m.y_axis.truncate().length())
                    .max(m.z_axis.truncate().length());
                let k = if length > 0.0 && length.is_finite() {
                    1.0 / length
                } else {
                    0.0
                };
                [
                    m.x_axis.truncate() * k,
                    m.y_axis.truncate() * k,
                    m.z_axis.truncate() * k,
                ]
            })
            .collect(),
        weights: ev.local.weights.clone(),
    }
}

/// The model's size: the diagonal of the box around every node origin and
/// every mesh vertex, placed by the rest pose. 1 when that is zero or not
/// finite (a model of one point).
pub fn model_size(model: &Model) -> f64 {
    let mut globals = vec![DMat4::IDENTITY; model.nodes.len()];
    for &n in &model.topological_order {
        let node = &model.nodes[n];
        globals[n] = match node.parent {
            Some(p) => globals[p] * node.rest_matrix,
            None => node.rest_matrix,
        };
    }
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let mut add = |p: DVec3| {
        lo = lo.min(p);
        hi = hi.max(p);
    };
    for (n, node) in model.nodes.iter().enumerate() {
        add(globals[n].w_axis.truncate());
        if let Some(mesh) = node.mesh.and_then(|m| model.meshes.get(m)) {
            for p in mesh.primitives.iter().flat_map(|p| &p.positions) {
                add(globals[n].transform_point3(p.as_dvec3()));
            }
        }
    }
    let size = (hi - lo).length();
    if size.is_finite() && size > 0.0 {
        size
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pose(origins: &[[f64; 3]]) -> Pose {
        Pose {
            origins: origins.iter().map(|o| DVec3::from(*o)).collect(),
            axes: vec![[DVec3::X, DVec3::Y, DVec3::Z]; origins.len()],
            weights: vec![0.0],
        }
    }

    #[test]
    fn the_jump_is_relative_to_the_model_size() {
        let a = pose(&[[0.0, 0.0, 0.0], [0.0, 2.0, 0.0]]);
        let b = pose(&[[0.0, 0.0, 0.0], [0.03, 2.0, 0.0]]);
        // 0.03 on a model 2 units across is 1.5% of it; on one 4 units
        // across, 0.75%.
        assert!((a.distance(&b, 2.0) - 0.015).abs() < 1e-12);
        assert!((a.distance(&b, 4.0) - 0.0075).abs() < 1e-12);
        let mut c = pose(&[[0.0, 0.0, 0.0], [0.0, 2.0, 0.0]]);
        c.weights = vec![0.25];
        assert_eq!(a.distance(&c, 2.0), 0.25);
        // A rotation of 0.01 rad moves the axes by about 0.01, whatever the
        // size.
        let mut d = pose(&[[0.0, 0.0, 0.0], [0.0, 2.0, 0.0]]);
        let r = glam::DQuat::from_rotation_z(0.01);
        d.axes[1] = [r * DVec3::X, r * DVec3::Y, r * DVec3::Z];
        assert!((a.distance(&d, 2.0) - 0.01).abs() < 1e-6);
        assert!((a.distance(&d, 200.0) - 0.01).abs() < 1e-6);
    }
}
