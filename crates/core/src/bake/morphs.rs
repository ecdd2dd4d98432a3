//! Which morph targets a bone-matrix bake leaves out. The bone textures hold
//! skin matrices only, so a mesh instance whose morph targets show (a baked
//! clip animates its weights, or its default weights are not zero) loses
//! them on that path: rigbake reports each such instance, names it, and
//! records the list; a VAT bake, which stores deformed vertices, keeps them.

use crate::model::{Model, Property};
use crate::timeline::{ClipSource, Timeline};

/// A mesh instance whose morph targets the bone-matrix path drops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MorphedInstance {
    /// The node instancing the mesh.
    pub node: usize,
    /// The mesh.
    pub mesh: usize,
    /// Its primitives that have morph targets.
    pub primitives: Vec<usize>,
    /// Number of morph targets.
    pub targets: usize,
    /// Whether a baked clip animates the instance's morph weights to a
    /// non-zero value (a channel whose keys are all zero does not count).
    pub animated: bool,
}

/// Whether a morph-weights channel can make a weight non-zero at some
/// time: some key value is non-zero (for CUBICSPLINE, some value or
/// tangent). A channel whose every key is zero holds every weight at zero
/// at every sampled time (STEP and LINEAR interpolate between its zeros,
/// and a cubic Hermite segment with zero ends and tangents is zero), so
/// it shows nothing and drops nothing.
fn moves_weights(channel: &crate::model::Channel) -> bool {
    channel.values.iter().any(|v| *v != 0.0)
}

/// Every mesh instance of `model` whose morph targets would show in the
/// clips of `timeline` (animated weights, or non-zero default weights), in
/// node order.
pub fn morphed_instances(model: &Model, timeline: &Timeline) -> Vec<MorphedInstance> {
    let mut animated = vec![false; model.nodes.len()];
    let mut mark = |clip: usize| {
        for channel in model.clips.get(clip).map_or(&[][..], |c| &c.channels[..]) {
            if channel.property == Property::MorphWeights && moves_weights(channel) {
                animated[channel.node] = true;
            }
        }
    };
    for clip in &timeline.clips {
        match clip.source {
            ClipSource::Animation { clip, .. } => mark(clip),
            ClipSource::Blend { a, b, .. } => {
                mark(a);
                mark(b);
            }
            ClipSource::Rest => {}
        }
    }
    let mut out = Vec::new();
    for (n, node) in model.nodes.iter().enumerate() {
        let Some(mesh) = node
            .mesh
            .and_then(|m| model.meshes.get(m).map(|mesh| (m, mesh)))
        else {
            continue;
        };
        let (m, mesh) = mesh;
        let primitives: Vec<usize> = mesh
            .primitives
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.morph_targets.is_empty())
            .map(|(i, _)| i)
            .collect();
        if primitives.is_empty() {
            continue;
        }
        let defaults = node
            .morph_weights
            .as_ref()
            .map(|w| w.iter().any(|v| *v != 0.0))
            .unwrap_or_else(|| mesh.default_weights.iter().any(|v| *v != 0.0));
        if animated[n] || defaults {
            out.push(MorphedInstance {
                node: n,
                mesh: m,
                targets: mesh.primitives[primitives[0]].morph_targets.len(),
                primitives,
                animated: animated[n],
            });
        }
    }
    out
}
