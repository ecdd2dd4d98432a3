//! What a bone texture's encoding costs, per clip, measured where it shows:
//! on the skinned mesh and at virtual vertices.
//!
//! Every row of the timeline is evaluated again and each joint's exact
//! skin matrix `S` is compared with the matrix a shader decodes from the
//! stored texture, `S'` (half floats rounded, 16-bit samples scaled back).
//! Skinning is linear, so a vertex `q` with weights `w` moves by
//! `|sum w (S' - S) q| / sum w`; that is tallied for every vertex of every
//! mesh the texture serves, at every frame, with the normals' angle
//! (`sum w A n` against `sum w A' n`, `A` the matrix's upper 3x3, the
//! blend most shaders use). ACL's figure is tallied too: for each joint
//! three virtual vertices [`VIRTUAL_VERTEX_DISTANCE`] from it along its own
//! axes, `|(S' - S) B^-1 (d e_k)|` with `B` the joint's inverse bind (the
//! point's place in mesh space). Morph targets a bone bake drops are not
//! part of the positions measured (the texture does not carry them).

use glam::{DMat4, DVec3, Mat3, Mat4, Vec3, Vec4Swizzles};
use rayon::prelude::*;

use crate::bake::bones::BoneTexture;
use crate::error::Result;
use crate::error_tally::{ErrorFigure, ErrorTally, angle_key};
use crate::eval::evaluate::Evaluator;
use crate::eval::skin;
use crate::model::Model;
use crate::timeline::Timeline;
use rigbake_types::Precision;

/// Distance of ACL's virtual vertices from their joint, model units: 3 cm
/// in glTF's metres, ACL's default for characters.
pub const VIRTUAL_VERTEX_DISTANCE: f64 = 0.03;

/// What one clip of a bone texture costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoneClipError {
    /// Skinned vertex positions, model units.
    pub positions: ErrorFigure,
    /// Skinned normals, degrees (`None` when no mesh has normals).
    pub normals_degrees: Option<ErrorFigure>,
    /// ACL's virtual vertices, model units.
    pub virtual_vertices: ErrorFigure,
}

/// One skinned vertex: its bind position, normal (zero when none) and
/// influences as a slice of the flat lists.
struct Vertices {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    /// Per vertex, `per_vertex` (joint, weight) slots (weight 0: unused).
    slots: Vec<(u16, f32)>,
    /// Slots per vertex.
    per_vertex: Vec<u8>,
    has_normals: bool,
}

/// The vertices of every mesh `tex` serves (each mesh once), whose
/// influences point at joints of the skin.
fn vertices_of(model: &Model, tex: &BoneTexture, joints: usize) -> Vertices {
    let mut meshes: Vec<usize> = tex
        .set
        .members
        .iter()
        .filter_map(|&n| model.nodes[n].mesh)
        .collect();
    meshes.sort_unstable();
    meshes.dedup();
    let mut v = Vertices {
        positions: Vec::new(),
        normals: Vec::new(),
        slots: Vec::new(),
        per_vertex: Vec::new(),
        has_normals: false,
    };
    for prim in meshes.iter().flat_map(|&m| &model.meshes[m].primitives) {
        let Some(inf) = &prim.influences else {
            continue;
        };
        let per = inf.per_vertex.min(u8::MAX as usize);
        v.has_normals |= prim.normals.is_some();
        for (i, p) in prim.positions.iter().enumerate() {
            let slots = (i * inf.per_vertex..i * inf.per_vertex + per).map(|s| {
                let (j, w) = (inf.joints[s], inf.weights[s]);
                if usize::from(j) < joints && w > 0.0 {
                    (j, w)
                } else {
                    (0, 0.0)
                }
            });
            v.slots.extend(slots);
            v.per_vertex.push(per as u8);
            v.positions.push(*p);
            v.normals.push(
                prim.normals
                    .as_ref()
                    .map_or(Vec3::ZERO, |n| n.get(i).copied().unwrap_or(Vec3::ZERO)),
            );
        }
    }
    v
}

/// What one worker keeps between rows.
struct Acc<'m> {
    ev: Evaluator<'m>,
    exact: Vec<DMat4>,
    /// Per joint: decoded minus exact, and the exact matrix, in f32.
    deltas: Vec<(Mat4, Mat3, Mat3)>,
    positions: ErrorTally,
    normals: ErrorTally,
    virtual_vertices: ErrorTally,
}

impl Acc<'_> {
    fn merge(mut self, other: Self) -> Self {
        self.positions.merge(&other.positions);
        self.normals.merge(&other.normals);
        self.virtual_vertices.merge(&other.virtual_vertices);
        self
    }
}

/// Measures what `tex`, stored at `precision`, costs on every clip of
/// `timeline` (see the module docs). Rows are measured in parallel; the
/// figures do not depend on the thread count.
pub fn measure_bone_texture<'a>(
    model: &'a Model,
    timeline: &Timeline,
    tex: &BoneTexture,
    precision: Precision,
) -> Result<Vec<BoneClipError>> {
    let skin = &model.skins[tex.set.skin];
    let joints = skin.joints.len();
    let verts = vertices_of(model, tex, joints);
    // Each joint's virtual vertices in mesh space: B^-1 (d e_k).
    let virtuals: Vec<[DVec3; 3]> = skin
        .inverse_binds
        .iter()
        .map(|b| {
            let bind = b.inverse();
            [DVec3::X, DVec3::Y, DVec3::Z]
                .map(|axis| bind.transform_point3(axis * VIRTUAL_VERTEX_DISTANCE))
        })
        .collect();
    let new_acc = || Acc {
        ev: Evaluator::new(model),
        exact: vec![DMat4::IDENTITY; joints],
        deltas: vec![(Mat4::ZERO, Mat3::ZERO, Mat3::ZERO); joints],
        positions: ErrorTally::new(),
        normals: ErrorTally::new(),
        virtual_vertices: ErrorTally::new(),
    };
    let measure_row = |mut acc: Acc<'a>, row: usize| -> Result<Acc<'a>> {
        timeline.evaluate_row(&mut acc.ev, row);
        let inv = skin::inverse_mesh_global(&acc.ev.globals, tex.set.mesh_node)?;
        skin::skin_matrices(skin, &acc.ev.globals, &inv, &mut acc.exact);
        for (j, (exact, slot)) in acc.exact.iter().zip(&mut acc.deltas).enumerate() {
            let stored = tex.stored_matrix(row, j, precision).as_dmat4();
            let delta = stored - *exact;
            for q in &virtuals[j] {
                let e = delta.transform_point3(*q).length();
                acc.virtual_vertices.add(e as f32);
            }
            let linear = Mat3::from_mat4(exact.as_mat4());
            *slot = (delta.as_mat4(), linear, Mat3::from_mat4(delta.as_mat4()));
        }
        let mut start = 0;
        for (v, &per) in verts.per_vertex.iter().enumerate() {
            let slots = &verts.slots[start..start + usize::from(per)];
            start += usize::from(per);
            let (q, n) = (verts.positions[v], verts.normals[v]);
            let (mut e, mut a, mut da, mut sum) = (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, 0.0f32);
            for &(j, w) in slots {
                if w == 0.0 {
                    continue;
                }
                let (delta, linear, dlinear) = &acc.deltas[usize::from(j)];
                e += w
                    * (delta.x_axis.xyz() * q.x
                        + delta.y_axis.xyz() * q.y
                        + delta.z_axis.xyz() * q.z
                        + delta.w_axis.xyz());
                if verts.has_normals {
                    a += w * (*linear * n);
                    da += w * (*dlinear * n);
                }
                sum += w;
            }
            if sum > 0.0 {
                acc.positions.add(e.length() / sum);
                if verts.has_normals && n != Vec3::ZERO {
                    let b = a + da;
                    acc.normals.add(angle_key(a.dot(b), a.cross(b).length()));
                }
            }
        }
        Ok(acc)
    };
    timeline
        .clips
        .iter()
        .map(|clip| {
            let acc = (clip.start_row..clip.start_row + clip.frames)
                .into_par_iter()
                .try_fold(new_acc, measure_row)
                .try_reduce(new_acc, |a, b| Ok(a.merge(b)))?;
            let degrees = crate::error_tally::degrees_of_key;
            Ok(BoneClipError {
                positions: ErrorFigure::of(&acc.positions, |x| x),
                normals_degrees: verts
                    .has_normals
                    .then(|| ErrorFigure::of(&acc.normals, degrees)),
                virtual_vertices: ErrorFigure::of(&acc.virtual_vertices, |x| x),
            })
        })
        .collect()
}
