//! Clip + time -> local pose: per-node TRS and morph weights.
//!
//! A [`LocalPose`] is a caller-owned buffer reused across frames; sampling
//! never allocates. Nodes that no channel of the clip targets keep their exact
//! rest matrix.

use glam::{DQuat, DVec3};

use crate::eval::interpolate::{self, ChannelCursor};
use crate::model::{Channel, Clip, Model, Property, Transform};

/// The local state of every node at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalPose {
    /// Per-node TRS (rest values where not animated).
    pub transforms: Vec<Transform>,
    /// Per node: `true` when a channel set its TRS, so the global pass must
    /// use `transforms` instead of the exact rest matrix.
    pub animated: Vec<bool>,
    /// Morph weights of all nodes, flat; node `n` owns
    /// `weights[weight_offsets[n]..weight_offsets[n + 1]]`.
    pub weights: Vec<f64>,
    /// Offsets into `weights`, one more than there are nodes.
    pub weight_offsets: Vec<usize>,
    rest_weights: Vec<f64>,
}

impl LocalPose {
    /// The rest pose of `model`.
    pub fn rest(model: &Model) -> Self {
        let mut weight_offsets = Vec::with_capacity(model.nodes.len() + 1);
        let mut rest_weights = Vec::new();
        weight_offsets.push(0);
        for node in &model.nodes {
            if let Some(m) = node.mesh {
                let w = node
                    .morph_weights
                    .as_deref()
                    .unwrap_or(&model.meshes[m].default_weights);
                rest_weights.extend(w.iter().map(|v| f64::from(*v)));
            }
            weight_offsets.push(rest_weights.len());
        }
        Self {
            transforms: model.nodes.iter().map(|n| n.rest).collect(),
            animated: vec![false; model.nodes.len()],
            weights: rest_weights.clone(),
            weight_offsets,
            rest_weights,
        }
    }

    /// Resets every node to its rest state (no allocation).
    pub fn reset(&mut self, model: &Model) {
        for ((t, a), n) in self
            .transforms
            .iter_mut()
            .zip(self.animated.iter_mut())
            .zip(&model.nodes)
        {
            *t = n.rest;
            *a = false;
        }
        self.weights.copy_from_slice(&self.rest_weights);
    }

    /// Morph weights of node `n` (empty when it has no morph targets).
    pub fn node_weights(&self, n: usize) -> &[f64] {
        &self.weights[self.weight_offsets[n]..self.weight_offsets[n + 1]]
    }
}

/// Samples `clip` of `model` at time `t` (seconds from the clip start) into
/// `pose`, starting from the rest pose.
pub fn sample_clip(model: &Model, clip: &Clip, t: f64, pose: &mut LocalPose) {
    pose.reset(model);
    for ch in &clip.channels {
        sample_channel(ch, t, pose, &mut ChannelCursor::default());
    }
}

/// [`sample_clip`] with one [`ChannelCursor`] per channel of `clip` kept by
/// the caller between calls (resized here when it does not fit the clip),
/// so a walk over nearby times skips key searches and slerp set-up. The
/// results are identical.
pub fn sample_clip_with(
    model: &Model,
    clip: &Clip,
    t: f64,
    pose: &mut LocalPose,
    cursors: &mut Vec<ChannelCursor>,
) {
    pose.reset(model);
    if cursors.len() != clip.channels.len() {
        cursors.clear();
        cursors.resize(clip.channels.len(), ChannelCursor::default());
    }
    for (ch, cursor) in clip.channels.iter().zip(cursors.iter_mut()) {
        sample_channel(ch, t, pose, cursor);
    }
}

/// Samples one channel at `t` into its node's slot of `pose`.
fn sample_channel(ch: &Channel, t: f64, pose: &mut LocalPose, cursor: &mut ChannelCursor) {
    let node = ch.node;
    let mut buf = [0.0f64; 4];
    match ch.property {
        Property::MorphWeights => {
            let range = pose.weight_offsets[node]..pose.weight_offsets[node + 1];
            interpolate::sample_with(ch, t, &mut pose.weights[range], cursor);
        }
        Property::Translation => {
            interpolate::sample_with(ch, t, &mut buf[..3], cursor);
            pose.transforms[node].translation = DVec3::from_slice(&buf[..3]);
            pose.animated[node] = true;
        }
        Property::Scale => {
            interpolate::sample_with(ch, t, &mut buf[..3], cursor);
            pose.transforms[node].scale = DVec3::from_slice(&buf[..3]);
            pose.animated[node] = true;
        }
        Property::Rotation => {
            interpolate::sample_with(ch, t, &mut buf, cursor);
            pose.transforms[node].rotation = DQuat::from_array(buf);
            pose.animated[node] = true;
        }
    }
}

/// Blends `other` into `pose` with weight `w` of `other`, node by node:
/// translations and scales lerp, rotations slerp on the shortest path, morph
/// weights lerp. A node animated in either pose is animated in the result
/// (the other contributes its rest TRS, which both poses hold).
pub fn blend_poses(pose: &mut LocalPose, other: &LocalPose, w: f64) {
    for ((t, a), (o, oa)) in pose
        .transforms
        .iter_mut()
        .zip(pose.animated.iter_mut())
        .zip(other.transforms.iter().zip(&other.animated))
    {
        if *a || *oa {
            t.translation = t.translation.lerp(o.translation, w);
            t.scale = t.scale.lerp(o.scale, w);
            t.rotation = crate::eval::interpolate::slerp(t.rotation, o.rotation, w);
            *a = true;
        }
    }
    for (x, y) in pose.weights.iter_mut().zip(&other.weights) {
        *x += (y - *x) * w;
    }
}
