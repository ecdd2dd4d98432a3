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
//! - the **jump** is the largest distance any node's origin moves between
//!   the pose at the clip end and the pose at the clip start (morph weights:
//!   the largest change of any weight);
//! - the clip loops when the jump is at most [`LoopOptions::tolerance`]
//!   (1% of the model's size by default), **or** at most
//!   [`LoopOptions::step_factor`] (1.5) times the largest step between two
//!   neighbouring frames at the seam (the last two frames, the first two):
//!   a wrap no bigger than the clip's own motion there looks continuous.
//!   Clips authored without a duplicate end frame (Mixamo's run and walk,
//!   whose end pose is one step before the start pose) loop by the second
//!   test; a death or sit-down clip, whose end pose is far from its start
//!   while the motion at the seam is slow, does not.
//!
//! Node origins carry rotations too: a joint that turns moves every child
//! joint (and end joint) below it.

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
            jump <= options.step_factor * step
        } else {
            false
        };
        timeline.clips[c].looping = looping;
    }
}

/// What the loop test compares of one pose.
struct Pose {
    origins: Vec<DVec3>,
    weights: Vec<f64>,
}

impl Pose {
    /// The jump between two poses, relative to `size`: the largest origin
    /// distance over `size`, or the largest morph weight change, whichever
    /// is larger.
    fn distance(&self, other: &Pose, size: f64) -> f64 {
        let origins = self
            .origins
            .iter()
            .zip(&other.origins)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f64::max)
            / size;
        let weights = self
            .weights
            .iter()
            .zip(&other.weights)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        origins.max(weights)
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
    }
}
