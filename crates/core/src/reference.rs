//! Direct evaluation: where glTF puts every vertex at an instant, computed
//! straight from the model in f64 (globals by following parent links, each
//! node's once per pose, morph targets, then skinning or the node's own
//! matrix), with no texture, no palette and no cached order. It is the
//! yardstick bakes are verified against (`rigbake verify`, the test
//! suite); only keyframe interpolation ([`crate::eval::sample::sample_clip`])
//! and, for blended clips, the pose blend that defines them
//! ([`crate::eval::sample::blend_poses`]) are shared with the bakes.
//!
//! What it is good at: checking the runtime path against the bake (every
//! frame and mid-frame, normals in both conventions, blends and ranges),
//! with exactly the model the bake saw. What it cannot do: catch a bug in
//! the importer or in keyframe interpolation, since it shares them with the
//! bake. That is the job of the three.js oracle, an outside glTF
//! implementation the bakes are compared with in CI (`docs/oracle.md`).

use glam::{DMat3, DMat4, DVec3, DVec4};

use crate::bake::vat::NormalConvention;
use crate::eval::sample::{LocalPose, blend_poses, sample_clip};
use crate::model::Model;
use crate::timeline::ClipSource;

/// The local matrix of node `n` at `pose`.
fn local(model: &Model, pose: &LocalPose, n: usize) -> DMat4 {
    if pose.animated[n] {
        pose.transforms[n].to_matrix()
    } else {
        model.nodes[n].rest_matrix
    }
}

/// Global matrix of `node`: the product of local matrices up its parent chain.
/// Walks the whole chain; for many nodes of one pose use [`DirectGlobals`].
pub fn direct_global(model: &Model, pose: &LocalPose, node: usize) -> DMat4 {
    let mut m = local(model, pose, node);
    let mut products = 0u64;
    let mut cursor = model.nodes[node].parent;
    while let Some(p) = cursor {
        m = local(model, pose, p) * m;
        products += 1;
        cursor = model.nodes[p].parent;
    }
    crate::work::add(crate::work::Counter::ReferenceProducts, products);
    m
}

/// Global matrices of one pose, each node's computed at most once, on
/// demand: a node's global is its parent's times its local matrix, the
/// parent's found the same way. Asking for every node of a chain `d` deep
/// costs `d` products, not `d * d / 2` as [`direct_global`] per node would.
///
/// The order comes from following parent links from the nodes asked for,
/// with an explicit stack (no recursion, however deep), not from the
/// model's cached topological order, so this stays independent of the
/// bakes' evaluator.
#[derive(Debug)]
pub struct DirectGlobals<'a> {
    model: &'a Model,
    pose: &'a LocalPose,
    known: Vec<Option<DMat4>>,
    chain: Vec<usize>,
}

impl<'a> DirectGlobals<'a> {
    /// Nothing computed yet for `pose`.
    pub fn new(model: &'a Model, pose: &'a LocalPose) -> Self {
        Self {
            model,
            pose,
            known: vec![None; model.nodes.len()],
            chain: Vec::new(),
        }
    }

    /// Global matrix of `node` (computed with its uncomputed ancestors).
    pub fn get(&mut self, node: usize) -> DMat4 {
        if let Some(m) = self.known[node] {
            return m;
        }
        // Up to the nearest known ancestor (or past the root) ...
        self.chain.clear();
        let mut cursor = Some(node);
        let mut base = None;
        while let Some(n) = cursor {
            if let Some(m) = self.known[n] {
                base = Some(m);
                break;
            }
            self.chain.push(n);
            cursor = self.model.nodes[n].parent;
        }
        // ... then down again, parents first.
        let mut products = 0u64;
        for &n in self.chain.iter().rev() {
            let l = local(self.model, self.pose, n);
            let m = match base {
                Some(b) => {
                    products += 1;
                    b * l
                }
                None => l,
            };
            self.known[n] = Some(m);
            base = Some(m);
        }
        crate::work::add(crate::work::Counter::ReferenceProducts, products);
        base.unwrap_or(DMat4::IDENTITY)
    }
}

/// Poses `pose` at `time` seconds into animation `clip` of the model, or at
/// the rest pose when `clip` is `None` (the synthetic `rest` clip).
pub fn pose_at(model: &Model, clip: Option<usize>, time: f64, pose: &mut LocalPose) {
    match clip.and_then(|c| model.clips.get(c)) {
        Some(c) => sample_clip(model, c, time, pose),
        None => pose.reset(model),
    }
}

/// Poses `pose` at `time` seconds into a baked clip of `duration` seconds
/// that comes from `source`: an animation from its `start`, the rest pose,
/// or two animations at the same phase `time / duration` blended by
/// `weight` (the bake's definition, [`ClipSource::Blend`]; `scratch` holds
/// the second animation's pose).
pub fn source_pose_at(
    model: &Model,
    source: &ClipSource,
    duration: f64,
    time: f64,
    pose: &mut LocalPose,
    scratch: &mut LocalPose,
) {
    match *source {
        ClipSource::Animation { clip, start, .. } => pose_at(model, Some(clip), start + time, pose),
        ClipSource::Rest => pose_at(model, None, time, pose),
        ClipSource::Blend { a, b, weight } => {
            let phase = if duration > 0.0 { time / duration } else { 0.0 };
            let (Some(ca), Some(cb)) = (model.clips.get(a), model.clips.get(b)) else {
                pose.reset(model);
                return;
            };
            sample_clip(model, ca, phase * ca.duration, pose);
            sample_clip(model, cb, phase * cb.duration, scratch);
            blend_poses(pose, scratch, weight);
        }
    }
}

/// A deformed vertex: position, unit normal (zero when degenerate or
/// absent), unit tangent with its handedness.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deformed {
    /// Position.
    pub position: DVec3,
    /// Unit normal; zero when the source has none or it degenerates.
    pub normal: DVec3,
    /// Unit tangent xyz and handedness w.
    pub tangent: DVec4,
}

/// Every vertex of primitive `prim` of the mesh on `node`, deformed at
/// `pose`, in the space of `reference` (the scene root when `None`).
/// Skinning weights are all of the vertex's influences, renormalised;
/// normals use `convention` (SPEC section 3). Panics only on indices the
/// caller did not take from the model.
pub fn deform(
    model: &Model,
    pose: &LocalPose,
    node: usize,
    prim: usize,
    reference: Option<usize>,
    convention: NormalConvention,
) -> Vec<Deformed> {
    let mut globals = DirectGlobals::new(model, pose);
    let inv_ref = reference.map_or(DMat4::IDENTITY, |r| globals.get(r).inverse());
    let n = &model.nodes[node];
    let Some(mesh) = n.mesh.map(|m| &model.meshes[m]) else {
        return Vec::new();
    };
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
                .map(|(&j, ibm)| inv_ref * globals.get(j) * *ibm)
                .collect()
        })
        .unwrap_or_default();
    let rigid = inv_ref * globals.get(node);
    (0..p.positions.len())
        .map(|v| {
            let mut pos = p.positions[v].as_dvec3();
            let mut nrm = p.normals.as_ref().map_or(DVec3::ZERO, |x| x[v].as_dvec3());
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
                        if w > 0.0 {
                            acc += joint_mats[usize::from(j)] * (f64::from(w) / total);
                        }
                    }
                    acc
                }
                _ => rigid,
            };
            let upper = DMat3::from_mat4(m);
            let normal_matrix = match convention {
                NormalConvention::InverseTranspose => upper.inverse().transpose(),
                NormalConvention::BlendedMatrix => upper,
            };
            Deformed {
                position: m.transform_point3(pos),
                normal: (normal_matrix * nrm).normalize_or_zero(),
                tangent: (upper * tan.truncate()).normalize_or_zero().extend(tan.w),
            }
        })
        .collect()
}

/// Diagonal of the box around `points` (0 when there are none).
pub fn diagonal(points: impl Iterator<Item = DVec3>) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for p in points {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if lo.x <= hi.x {
        (hi - lo).length()
    } else {
        0.0
    }
}
