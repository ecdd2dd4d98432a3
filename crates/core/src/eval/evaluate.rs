//! One reusable evaluator per worker: sample a clip and compute globals into
//! buffers it owns, so per-frame work allocates nothing.

use glam::DMat4;

use crate::eval::interpolate::ChannelCursor;
use crate::eval::pose;
use crate::eval::sample::{self, LocalPose};
use crate::model::Model;

/// Scratch state for evaluating poses of one model.
#[derive(Debug, Clone)]
pub struct Evaluator<'m> {
    model: &'m Model,
    /// The last sampled local pose.
    pub local: LocalPose,
    /// Global matrices of every node for the last sampled pose.
    pub globals: Vec<DMat4>,
    /// Second pose for blends.
    scratch: LocalPose,
    /// Per clip, one cursor per channel (empty until the clip is sampled).
    cursors: Vec<Vec<ChannelCursor>>,
}

impl<'m> Evaluator<'m> {
    /// An evaluator holding the rest pose.
    pub fn new(model: &'m Model) -> Self {
        let local = LocalPose::rest(model);
        let mut globals = vec![DMat4::IDENTITY; model.nodes.len()];
        pose::compute_globals(model, &local, &mut globals);
        Self {
            model,
            scratch: local.clone(),
            cursors: vec![Vec::new(); model.clips.len()],
            local,
            globals,
        }
    }

    /// The model this evaluator reads.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// Samples clip `clip` at `t` seconds and computes all globals.
    pub fn evaluate_clip(&mut self, clip: usize, t: f64) {
        self.sample(clip, t);
        pose::compute_globals(self.model, &self.local, &mut self.globals);
    }

    /// Samples clip `a` at `ta` and clip `b` at `tb`, blends them with weight
    /// `weight` of `b` (see [`sample::blend_poses`]) and computes all globals.
    pub fn evaluate_blend(&mut self, a: usize, ta: f64, b: usize, tb: f64, weight: f64) {
        self.sample(a, ta);
        std::mem::swap(&mut self.local, &mut self.scratch);
        self.sample(b, tb);
        std::mem::swap(&mut self.local, &mut self.scratch);
        sample::blend_poses(&mut self.local, &self.scratch, weight);
        pose::compute_globals(self.model, &self.local, &mut self.globals);
    }

    /// Computes globals from the current `local` pose (after editing it).
    pub fn update_globals(&mut self) {
        pose::compute_globals(self.model, &self.local, &mut self.globals);
    }

    /// Samples clip `clip` at `t` into `local`, with that clip's cursors.
    fn sample(&mut self, clip: usize, t: f64) {
        sample::sample_clip_with(
            self.model,
            &self.model.clips[clip],
            t,
            &mut self.local,
            &mut self.cursors[clip],
        );
    }
}
