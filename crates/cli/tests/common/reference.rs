//! Direct evaluation for tests: `rigbake_core::reference` (globals by
//! walking parent chains, skinning and morphing in f64 straight from the
//! model, with no texture, no palette, no cached order; only keyframe
//! interpolation, `sample_clip`, is shared with the bakes, and it has
//! hand-computed tests of its own), plus clip-table helpers.
#![allow(dead_code)]

use rigbake_core::bake::vat::NormalConvention;
use rigbake_core::eval::sample::{LocalPose, sample_clip};
use rigbake_core::model::Model;
use rigbake_format::meta::ClipMeta;

#[allow(unused_imports)]
pub use rigbake_core::reference::{Deformed, diagonal, direct_global};

/// Sample time of `frame` of a fixed-rate clip (SPEC section 2).
pub fn frame_time(clip: &ClipMeta, frame: usize) -> f64 {
    (frame as f64 / clip.fps).min(clip.duration)
}

/// The clip and frame of timeline row `row`.
pub fn clip_of_row(clips: &[ClipMeta], row: usize) -> (&ClipMeta, usize) {
    let c = clips
        .iter()
        .rposition(|c| c.start_row as usize <= row)
        .expect("row inside the clip table");
    (&clips[c], row - clips[c].start_row as usize)
}

/// Poses `pose` at `frame` of the clip named like `clip` (rest pose for the
/// synthetic `rest` clip).
pub fn pose_at(model: &Model, clip: &ClipMeta, frame: usize, pose: &mut LocalPose) {
    match model.clips.iter().position(|c| c.name == clip.name) {
        Some(i) => sample_clip(model, &model.clips[i], frame_time(clip, frame), pose),
        None => pose.reset(model),
    }
}

/// The first node named `name` that instances a mesh.
pub fn mesh_node(model: &Model, name: &str) -> usize {
    model
        .nodes
        .iter()
        .position(|n| n.name == name && n.mesh.is_some())
        .unwrap_or_else(|| panic!("no mesh node named {name}"))
}

/// Every vertex of primitive `prim` of the mesh on `node`, deformed at
/// `pose`, in the space of `reference` (the scene root when `None`), with
/// exact (inverse-transpose) normals: `rigbake_core::reference::deform`.
pub fn deform(
    model: &Model,
    pose: &LocalPose,
    node: usize,
    prim: usize,
    reference: Option<usize>,
) -> Vec<Deformed> {
    rigbake_core::reference::deform(
        model,
        pose,
        node,
        prim,
        reference,
        NormalConvention::InverseTranspose,
    )
}
