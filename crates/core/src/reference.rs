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
    match PrimitiveDeform::new(model, pose, &mut globals, node, prim, reference) {
        Some(d) => (0..d.vertex_count())
            .map(|v| d.vertex(v, convention))
            .collect(),
        None => Vec::new(),
    }
}

/// An affine matrix: the upper 3x3 and the translation (the fourth row of
/// a glTF node or joint matrix is always `(0, 0, 0, 1)`, so it is not
/// carried through blends).
#[derive(Debug, Clone, Copy)]
struct Affine {
    upper: DMat3,
    translation: DVec3,
}

impl Affine {
    fn of(m: &DMat4) -> Self {
        Self {
            upper: DMat3::from_mat4(*m),
            translation: m.w_axis.truncate(),
        }
    }

    /// `m * p` for the point `p` (with the additions in `DMat4`'s order,
    /// which f64 addition does not depend on).
    fn point(&self, p: DVec3) -> DVec3 {
        self.upper * p + self.translation
    }
}

/// One primitive of one pose, ready to be deformed vertex by vertex: its
/// joint matrices (in the reference space) and the lengths of their
/// columns computed once, not per vertex. [`deform`] is every vertex of
/// one; `rigbake verify` asks for positions and normals only
/// ([`PrimitiveDeform::position_normal`]), into buffers it reuses.
#[derive(Debug)]
pub struct PrimitiveDeform<'a> {
    primitive: &'a crate::model::Primitive,
    /// The node's morph weights at the pose.
    weights: &'a [f64],
    /// Per joint of the skin: its skin matrix and the lengths of its
    /// columns (how much of a blend cancelled out), as a [`Record`];
    /// `None` when the primitive is not skinned.
    joints: Option<Vec<Record>>,
    /// The node's own matrix (for an unskinned primitive) with its column
    /// lengths.
    rigid: Record,
}

/// A matrix and the lengths of its upper 3x3's columns, flat: the x, y
/// and z columns of the upper 3x3, the translation, the three lengths and
/// a zero (16 values, so that blending records is four 4-wide steps).
type Record = [f64; 16];

/// The record every lane of a blend adds when its influence is dropped.
const ZERO_RECORD: Record = [0.0; 16];

/// `m` and its column lengths as a [`Record`].
fn record(m: &DMat4) -> Record {
    let a = Affine::of(m);
    let lengths = column_lengths(&a.upper);
    let mut r = ZERO_RECORD;
    for (k, c) in [
        a.upper.x_axis,
        a.upper.y_axis,
        a.upper.z_axis,
        a.translation,
        lengths,
    ]
    .iter()
    .enumerate()
    {
        r[3 * k..3 * k + 3].copy_from_slice(&c.to_array());
    }
    r
}

/// The matrix and column terms of a record.
fn unrecord(r: &Record) -> (Affine, DVec3) {
    let v = |k: usize| DVec3::new(r[3 * k], r[3 * k + 1], r[3 * k + 2]);
    (
        Affine {
            upper: DMat3::from_cols(v(0), v(1), v(2)),
            translation: v(3),
        },
        v(4),
    )
}

/// The skin records of `joints` blended by the influences (`js`, `ws`)
/// of one vertex, its weights renormalised: `sum(record * w / total)`
/// over the slots with a positive weight, in slot order, from zero.
#[inline(always)]
fn blend_records(joints: &[Record], js: &[u16], ws: &[f32]) -> Record {
    let total: f64 = ws.iter().map(|w| f64::from(*w)).sum();
    let mut acc = ZERO_RECORD;
    for (&j, &w) in js.iter().zip(ws) {
        if w > 0.0
            && let Some(m) = joints.get(usize::from(j))
        {
            let w = f64::from(w) / total;
            for (a, e) in acc.iter_mut().zip(m) {
                *a += e * w;
            }
        }
    }
    acc
}

/// A vertex after morph targets, with the blended matrix that moves it.
struct Blended {
    matrix: Affine,
    /// Per column of the upper 3x3, the sum of the lengths of the columns
    /// blended into it.
    column_terms: DVec3,
    position: DVec3,
    normal: DVec3,
    /// The size of the terms summed into the normal.
    normal_terms: f64,
}

impl<'a> PrimitiveDeform<'a> {
    /// Primitive `prim` of the mesh on `node` at the pose `globals` holds,
    /// in the space of `reference`; `None` when the node has no mesh.
    pub fn new(
        model: &'a Model,
        pose: &'a LocalPose,
        globals: &mut DirectGlobals<'_>,
        node: usize,
        prim: usize,
        reference: Option<usize>,
    ) -> Option<Self> {
        let inv_ref = reference.map_or(DMat4::IDENTITY, |r| globals.get(r).inverse());
        let n = &model.nodes[node];
        let mesh = n.mesh.map(|m| &model.meshes[m])?;
        let p = &mesh.primitives[prim];
        let skin = n
            .skin
            .filter(|_| p.influences.is_some())
            .map(|s| &model.skins[s]);
        let joints = skin.map(|s| {
            s.joints
                .iter()
                .zip(&s.inverse_binds)
                .map(|(&j, ibm)| record(&(inv_ref * globals.get(j) * *ibm)))
                .collect()
        });
        Some(Self {
            primitive: p,
            weights: pose.node_weights(node),
            joints,
            rigid: record(&(inv_ref * globals.get(node))),
        })
    }

    /// Vertices of the primitive.
    pub fn vertex_count(&self) -> usize {
        self.primitive.positions.len()
    }

    /// The record of the matrix that moves vertex `v`: its influences'
    /// blended ([`blend_records`]), or the node's own.
    #[inline(always)]
    fn matrix_record(&self, v: usize) -> Record {
        match (&self.joints, &self.primitive.influences) {
            (Some(joints), Some(inf)) => {
                let (js, ws) = inf.vertex(v);
                blend_records(joints, js, ws)
            }
            _ => self.rigid,
        }
    }

    /// Vertex `v` morphed, with the matrix that skins it (all of its
    /// influences, renormalised) or the node's own.
    #[inline(always)]
    fn blended(&self, v: usize) -> Blended {
        let p = self.primitive;
        let mut position = p.positions[v].as_dvec3();
        let mut normal = p.normals.as_ref().map_or(DVec3::ZERO, |x| x[v].as_dvec3());
        // A morphed normal that (nearly) cancels out has no direction to
        // judge (an unmorphed one never does: its terms are 0 here).
        let mut normal_terms = if p.morph_targets.is_empty() {
            0.0
        } else {
            normal.length()
        };
        for (t, target) in p.morph_targets.iter().enumerate() {
            let w = self.weights.get(t).copied().unwrap_or(0.0);
            if let Some(d) = &target.positions {
                position += d[v].as_dvec3() * w;
            }
            if let Some(d) = &target.normals {
                normal += d[v].as_dvec3() * w;
                normal_terms += (d[v].as_dvec3() * w).length();
            }
        }
        let (matrix, column_terms) = unrecord(&self.matrix_record(v));
        Blended {
            matrix,
            column_terms,
            position,
            normal,
            normal_terms,
        }
    }

    /// The position and unit normal of vertex `v` (the normal zero where
    /// [`Deformed::normal`] says), with normals in `convention`: `rigbake
    /// verify`'s yardstick, one vertex at a time.
    pub fn position_normal(&self, v: usize, convention: NormalConvention) -> (DVec3, DVec3) {
        let b = self.blended(v);
        let (upper, n) = (b.matrix.upper, b.normal);
        let normal = match convention {
            _ if n.length_squared() < (MIN_NORMAL_VOLUME * b.normal_terms).powi(2) => DVec3::ZERO,
            NormalConvention::InverseTranspose => {
                // The inverse transpose times |det| (the bake's unnormalised
                // normal): the cofactor matrix, whose columns are y x z,
                // z x x and x x y, times the sign of det.
                let (x, y, z) = (upper.x_axis, upper.y_axis, upper.z_axis);
                let cofactor = DMat3::from_cols(y.cross(z), z.cross(x), x.cross(y));
                let det = x.dot(cofactor.x_axis);
                if well_conditioned(&upper, b.column_terms, det) {
                    cofactor * n * det.signum()
                } else {
                    DVec3::ZERO
                }
            }
            NormalConvention::BlendedMatrix => upper * n,
        };
        (b.matrix.point(b.position), unit_in_f32_range(normal))
    }

    /// Vertex `v` deformed: position, normal in `convention`, and tangent.
    pub fn vertex(&self, v: usize, convention: NormalConvention) -> Deformed {
        let (position, normal) = self.position_normal(v, convention);
        let p = self.primitive;
        let mut tangent = p.tangents.as_ref().map_or(DVec4::X, |x| x[v].as_dvec4());
        for (t, target) in p.morph_targets.iter().enumerate() {
            let w = self.weights.get(t).copied().unwrap_or(0.0);
            if let Some(d) = &target.tangents {
                tangent += d[v].as_dvec3().extend(0.0) * w;
            }
        }
        let upper = self.blended(v).matrix.upper;
        Deformed {
            position,
            normal,
            tangent: (upper * tangent.truncate())
                .normalize_or_zero()
                .extend(tangent.w),
        }
    }
}

/// How well a blended matrix defines its normals, at least this in both
/// measures of `well_conditioned` for them to be judged. A matrix that
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

/// `r` normalised, or zero when its squared length is outside f32's normal range:
/// the bake normalises the same unnormalised normal in f32, where such a
/// square underflows or overflows and the normal is documented to come out
/// zero (a huge morph delta, a tiny scale; found by fuzzing), so it has no
/// direction to compare.
fn unit_in_f32_range(r: DVec3) -> DVec3 {
    let len2 = r.length_squared();
    if (f64::from(f32::MIN_POSITIVE)..=f64::from(f32::MAX)).contains(&len2) {
        r * (1.0 / len2.sqrt())
    } else {
        DVec3::ZERO
    }
}

fn column_lengths(m: &DMat3) -> DVec3 {
    DVec3::new(m.x_axis.length(), m.y_axis.length(), m.z_axis.length())
}

/// Whether `upper` (blended from columns whose lengths sum to
/// `column_terms`; its determinant `det`) defines its normals: no column
/// cancelled out below [`MIN_NORMAL_VOLUME`] of its terms, and the
/// columns, normalised, span a volume of at least that much (they are not
/// nearly coplanar). Compared squared (no square roots).
fn well_conditioned(upper: &DMat3, column_terms: DVec3, det: f64) -> bool {
    let min2 = MIN_NORMAL_VOLUME * MIN_NORMAL_VOLUME;
    let [x, y, z] = [upper.x_axis, upper.y_axis, upper.z_axis].map(|c| c.length_squared());
    let lengths2 = DVec3::new(x, y, z);
    let terms2 = column_terms * column_terms * min2;
    let volume2 = lengths2.element_product();
    column_terms.cmpgt(DVec3::ZERO).all()
        && terms2.is_finite()
        && lengths2.cmpge(terms2).all()
        && volume2.is_finite()
        && volume2 > 0.0
        && det * det >= min2 * volume2
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
        let one = |m: &DMat3| well_conditioned(m, column_lengths(m), m.determinant());
        // A blend of `a` and `b`, half and half.
        let half = |a: DMat3, b: DMat3| {
            let m = (a + b) * 0.5;
            let terms = (column_lengths(&a) + column_lengths(&b)) * 0.5;
            well_conditioned(&m, terms, m.determinant())
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
        assert!(unit_in_f32_range(n * 1e3).distance(n) < 1e-15);
        assert!(unit_in_f32_range(n * 1e-18).distance(n) < 1e-15);
        assert_eq!(
            unit_in_f32_range(n * 1e20),
            DVec3::ZERO,
            "its square overflows"
        );
        assert_eq!(
            unit_in_f32_range(n * 1e-20),
            DVec3::ZERO,
            "its square underflows"
        );
    }
}
