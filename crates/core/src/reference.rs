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
    /// Unit normal; zero when the source has none, it degenerates, or the
    /// blended matrix is too close to singular to define it
    /// ([`MIN_NORMAL_VOLUME`]).
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
    // Once per joint, not per influence: how long each joint matrix's
    // columns are, to tell how much of a blend cancelled out.
    let joint_columns: Vec<DVec3> = joint_mats
        .iter()
        .map(|m| column_lengths(&DMat3::from_mat4(*m)))
        .collect();
    let rigid = inv_ref * globals.get(node);
    (0..p.positions.len())
        .map(|v| {
            let mut pos = p.positions[v].as_dvec3();
            let mut nrm = p.normals.as_ref().map_or(DVec3::ZERO, |x| x[v].as_dvec3());
            // The size of the terms summed into the normal: a morphed normal
            // that (nearly) cancels out has no direction to judge.
            let mut nrm_terms = nrm.length();
            let mut tan = p.tangents.as_ref().map_or(DVec4::X, |x| x[v].as_dvec4());
            for (t, target) in p.morph_targets.iter().enumerate() {
                let w = weights.get(t).copied().unwrap_or(0.0);
                if let Some(d) = &target.positions {
                    pos += d[v].as_dvec3() * w;
                }
                if let Some(d) = &target.normals {
                    nrm += d[v].as_dvec3() * w;
                    nrm_terms += (d[v].as_dvec3() * w).length();
                }
                if let Some(d) = &target.tangents {
                    tan += d[v].as_dvec3().extend(0.0) * w;
                }
            }
            // The blended matrix, and per column of its upper 3x3 the sum of
            // the lengths of the columns blended into it (how much of it
            // cancelled out).
            let (m, column_terms) = match (skin, &p.influences) {
                (Some(_), Some(inf)) => {
                    let (js, ws) = inf.vertex(v);
                    let total: f64 = ws.iter().map(|w| f64::from(*w)).sum();
                    let mut acc = DMat4::ZERO;
                    let mut terms = DVec3::ZERO;
                    for (&j, &w) in js.iter().zip(ws) {
                        if w > 0.0 {
                            let (j, w) = (usize::from(j), f64::from(w) / total);
                            acc += joint_mats[j] * w;
                            terms += joint_columns[j] * w;
                        }
                    }
                    (acc, terms)
                }
                _ => (rigid, column_lengths(&DMat3::from_mat4(rigid))),
            };
            let upper = DMat3::from_mat4(m);
            let normal = match convention {
                _ if nrm.length() < MIN_NORMAL_VOLUME * nrm_terms => DVec3::ZERO,
                NormalConvention::InverseTranspose if !well_conditioned(&upper, column_terms) => {
                    DVec3::ZERO
                }
                NormalConvention::InverseTranspose => {
                    // The bake's unnormalised normal is the cofactor's,
                    // `det` times this.
                    in_f32_range(upper.inverse().transpose() * nrm * upper.determinant().abs())
                }
                NormalConvention::BlendedMatrix => in_f32_range(upper * nrm),
            };
            Deformed {
                position: m.transform_point3(pos),
                normal: normal.normalize_or_zero(),
                tangent: (upper * tan.truncate()).normalize_or_zero().extend(tan.w),
            }
        })
        .collect()
}

/// How well a blended matrix defines its normals, at least this in both
/// measures of [`well_conditioned`] for them to be judged. A matrix that
/// defines none: two joints blended half and half across a 180° twist
/// (the candy-wrapper collapse of linear blend skinning) cancel out to a
/// matrix of rank 1 or 2. Near that, the direction of the inverse
/// transpose depends on the last bits of the matrix, and the f32 bake and
/// runtime and this f64 reference may rightly disagree by up to 180°
/// (found by fuzzing): an f32 cofactor's angular error grows like 6e-8
/// over these ratios, reaching verify's 0.01° near 3.5e-4. The same ratio
/// bounds a morphed normal against the sum of the lengths of its terms
/// (base normal plus weighted deltas): one that nearly cancels out has no
/// direction to judge either.
pub const MIN_NORMAL_VOLUME: f64 = 1e-3;

/// `r`, or zero when its squared length is outside f32's normal range:
/// the bake normalises the same unnormalised normal in f32, where such a
/// square underflows or overflows and the normal is documented to come out
/// zero (a huge morph delta, a tiny scale; found by fuzzing), so it has no
/// direction to compare.
fn in_f32_range(r: DVec3) -> DVec3 {
    let len2 = r.length_squared();
    if (f64::from(f32::MIN_POSITIVE)..=f64::from(f32::MAX)).contains(&len2) {
        r
    } else {
        DVec3::ZERO
    }
}

fn column_lengths(m: &DMat3) -> DVec3 {
    DVec3::new(m.x_axis.length(), m.y_axis.length(), m.z_axis.length())
}

/// Whether `upper` (blended from columns whose lengths sum to
/// `column_terms`) defines its normals: no column cancelled out below
/// [`MIN_NORMAL_VOLUME`] of its terms, and the columns, normalised, span a
/// volume of at least that much (they are not nearly coplanar).
fn well_conditioned(upper: &DMat3, column_terms: DVec3) -> bool {
    let lengths = column_lengths(upper);
    let kept = lengths / column_terms;
    let volume = upper.determinant().abs() / lengths.element_product();
    kept.is_finite()
        && kept.min_element() >= MIN_NORMAL_VOLUME
        && volume.is_finite()
        && volume >= MIN_NORMAL_VOLUME
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

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    /// Rotations and scales are judged; a half-and-half blend across a 180°
    /// twist (the candy-wrapper collapse), exactly or nearly, is not.
    #[test]
    fn normals_are_judged_only_where_the_blend_defines_them() {
        let r = DMat3::from_quat(DQuat::from_rotation_y(0.7));
        let one = |m: &DMat3| well_conditioned(m, column_lengths(m));
        // A blend of `a` and `b`, half and half.
        let half = |a: DMat3, b: DMat3| {
            well_conditioned(
                &((a + b) * 0.5),
                (column_lengths(&a) + column_lengths(&b)) * 0.5,
            )
        };
        assert!(one(&r));
        let scaled = r * DMat3::from_diagonal(DVec3::new(0.01, 3.0, 40.0));
        assert!(one(&scaled), "an anisotropic scale defines its normals");
        assert!(half(r, scaled));
        let twist = |angle: f64| r * DMat3::from_quat(DQuat::from_rotation_x(angle));
        let pi = std::f64::consts::PI;
        assert!(!half(r, twist(pi)), "the collapse");
        assert!(!half(r, twist(pi - 1e-4)), "next to it");
        assert!(half(r, twist(pi - 0.1)));
        assert!(half(r, twist(0.5)));
        // Columns that do not cancel but end up nearly coplanar.
        let flat = DMat3::from_cols(DVec3::X, DVec3::Y, DVec3::new(1.0, 1.0, 1e-5));
        assert!(!one(&flat));
        assert!(!one(&DMat3::ZERO));
    }

    /// A normal whose square leaves f32's range comes out zero in the bake
    /// (`vat_kernel`), so the reference has none to compare either.
    #[test]
    fn normals_beyond_the_f32_range_are_undefined() {
        let n = DVec3::new(0.6, 0.0, 0.8);
        assert_eq!(in_f32_range(n * 1e3), n * 1e3);
        assert_eq!(in_f32_range(n * 1e-18), n * 1e-18);
        assert_eq!(in_f32_range(n * 1e20), DVec3::ZERO, "its square overflows");
        assert_eq!(
            in_f32_range(n * 1e-20),
            DVec3::ZERO,
            "its square underflows"
        );
    }
}
