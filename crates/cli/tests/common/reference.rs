//! An independent direct evaluation for tests: globals by walking parent
//! chains, skinning and morphing in f64 straight from the model, with no
//! texture, no palette, no cached order. Only keyframe interpolation
//! (`sample_clip`) is shared with the code under test; it has hand-computed
//! tests of its own.
#![allow(dead_code)]

use glam::{DMat3, DMat4, DVec3, DVec4};
use rigbake_core::model::Model;
use rigbake_core::sample::{LocalPose, sample_clip};
use rigbake_format::meta::ClipMeta;

/// Global matrix of `node`: the product of local matrices up its parent chain.
pub fn direct_global(model: &Model, pose: &LocalPose, node: usize) -> DMat4 {
    let local = |n: usize| {
        if pose.animated[n] {
            pose.transforms[n].to_matrix()
        } else {
            model.nodes[n].rest_matrix
        }
    };
    let mut m = local(node);
    let mut cursor = model.nodes[node].parent;
    while let Some(p) = cursor {
        m = local(p) * m;
        cursor = model.nodes[p].parent;
    }
    m
}

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

/// A deformed vertex: position, unit normal (exact inverse transpose), unit
/// tangent with its handedness.
#[derive(Debug, Clone, Copy)]
pub struct Deformed {
    pub position: DVec3,
    pub normal: DVec3,
    pub tangent: DVec4,
}

/// Every vertex of primitive `prim` of the mesh on `node`, deformed at
/// `pose`, in the space of `reference` (the scene root when `None`).
pub fn deform(
    model: &Model,
    pose: &LocalPose,
    node: usize,
    prim: usize,
    reference: Option<usize>,
) -> Vec<Deformed> {
    let inv_ref = reference.map_or(DMat4::IDENTITY, |r| direct_global(model, pose, r).inverse());
    let n = &model.nodes[node];
    let mesh = &model.meshes[n.mesh.unwrap()];
    let p = &mesh.primitives[prim];
    let weights = pose.node_weights(node);
    let skin = n
        .skin
        .filter(|_| p.influences.is_some())
        .map(|s| &model.skins[s]);
    let joint_mats: Vec<DMat4> = skin
        .map(|s| {
            s.joints
                .iter()
                .zip(&s.inverse_binds)
                .map(|(&j, ibm)| inv_ref * direct_global(model, pose, j) * *ibm)
                .collect()
        })
        .unwrap_or_default();
    let rigid = inv_ref * direct_global(model, pose, node);
    (0..p.positions.len())
        .map(|v| {
            let mut pos = p.positions[v].as_dvec3();
            let mut nrm = p.normals.as_ref().map_or(DVec3::Z, |x| x[v].as_dvec3());
            let mut tan = p.tangents.as_ref().map_or(DVec4::X, |x| x[v].as_dvec4());
            for (t, target) in p.morph_targets.iter().enumerate() {
                let w = weights.get(t).copied().unwrap_or(0.0);
                if let Some(d) = &target.positions {
                    pos += d[v].as_dvec3() * w;
                }
                if let Some(d) = &target.normals {
                    nrm += d[v].as_dvec3() * w;
                }
                if let Some(d) = &target.tangents {
                    tan += d[v].as_dvec3().extend(0.0) * w;
                }
            }
            let m = match (skin, &p.influences) {
                (Some(_), Some(inf)) => {
                    let (js, ws) = inf.vertex(v);
                    let total: f64 = ws.iter().map(|w| f64::from(*w)).sum();
                    let mut acc = DMat4::ZERO;
                    for (&j, &w) in js.iter().zip(ws) {
                        acc += joint_mats[usize::from(j)] * (f64::from(w) / total);
                    }
                    acc
                }
                _ => rigid,
            };
            let upper = DMat3::from_mat4(m);
            Deformed {
                position: m.transform_point3(pos),
                normal: (upper.inverse().transpose() * nrm).normalize_or_zero(),
                tangent: (upper * tan.truncate()).normalize_or_zero().extend(tan.w),
            }
        })
        .collect()
}

/// Diagonal of the box around `points`.
pub fn diagonal(points: impl Iterator<Item = DVec3>) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for p in points {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    (hi - lo).length()
}
