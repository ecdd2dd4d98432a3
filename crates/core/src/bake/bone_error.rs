//! What a bone texture's encoding costs, per clip, measured where it shows:
//! on the skinned mesh and at virtual vertices.
//!
//! Every row of the timeline is evaluated again and each joint's exact
//! skin matrix `S` is compared with the matrix a shader decodes from the
//! stored texture, `S'` (half floats rounded, 16-bit samples scaled back).
//! Skinning is linear, so a vertex `q` with weights `w` (summing to 1)
//! moves by `|sum w (S' - S) q|`: the VAT bake's kernel skins every vertex
//! of every mesh the texture serves with the palette of differences
//! `S' - S`, at every frame, and the lengths are tallied. ACL's figure is
//! tallied too: for each joint three virtual vertices
//! [`VIRTUAL_VERTEX_DISTANCE`] from it along its own axes, `|(S' - S) B^-1
//! (d e_k)|` with `B` the joint's inverse bind (the point's place in mesh
//! space). Rigid props bound to a joint are measured with the mesh, their
//! vertices skinned by that joint alone. Morph targets a bone bake drops
//! are not part of the positions measured (the texture does not carry
//! them), and normals are not measured: they turn by the same matrices,
//! whose error the positions and the virtual vertices show.

use glam::{DMat4, DVec3};
use rayon::prelude::*;

use crate::bake::anchors::BoundProp;
use crate::bake::bones::BoneTexture;
use crate::bake::vat_kernel::{Columns, Span, deform};
use crate::error::Result;
use crate::error_tally::{ErrorFigure, ErrorTally, distance_of_key};
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
    /// ACL's virtual vertices, model units.
    pub virtual_vertices: ErrorFigure,
}

/// The skinned vertices of a texture, as the kernel reads them: planar
/// bind positions and their influences (joint, weight), weights summing to
/// 1, in groups by influence count: group `k` holds the vertices with `k +
/// 1` influences of non-zero weight, `k + 1` slots each. A vertex's error
/// is the same wherever it sits (the tally is a histogram), and dropping
/// zero-weight slots changes no sum (a zero weight adds a zero), so the
/// kernel blends only what counts: every BrainStem vertex has one
/// influence of four slots.
struct Vertices {
    positions: [Vec<f32>; 3],
    joints: Vec<u16>,
    weights: Vec<f32>,
    /// The groups, by influence count.
    groups: Vec<Group>,
}

/// One group of [`Vertices`].
#[derive(Debug, Clone)]
struct Group {
    /// Its vertices (indices into the planes).
    vertices: std::ops::Range<usize>,
    /// Its first entry in `joints` and `weights`.
    first_entry: usize,
    /// Influences per vertex.
    slots: usize,
}

/// The vertices of every mesh `tex` serves (each mesh once) with
/// influences, their weights normalised, and of the bound `props`, grouped
/// by influence count; influences on joints the skin lacks are dropped.
fn vertices_of(
    model: &Model,
    tex: &BoneTexture,
    joints: usize,
    props: &[(usize, &BoundProp)],
) -> Vertices {
    let mut meshes: Vec<usize> = tex
        .set
        .members
        .iter()
        .filter_map(|&n| model.nodes[n].mesh)
        .collect();
    meshes.sort_unstable();
    meshes.dedup();
    let prims: Vec<_> = meshes
        .iter()
        .flat_map(|&m| &model.meshes[m].primitives)
        .filter(|p| p.influences.is_some())
        .collect();
    let most = prims
        .iter()
        .filter_map(|p| p.influences.as_ref().map(|i| i.per_vertex))
        .max()
        .unwrap_or(0)
        .max(1);
    // Per influence count: planar positions, joints, weights.
    type Gathered = ([Vec<f32>; 3], Vec<u16>, Vec<f32>);
    let mut by_count: Vec<Gathered> = vec![Default::default(); most];
    // One vertex's influences, reused from vertex to vertex.
    let mut slot: Vec<(u16, f32)> = Vec::with_capacity(most);
    for prim in prims {
        let Some(inf) = &prim.influences else {
            continue;
        };
        for (i, p) in prim.positions.iter().enumerate() {
            slot.clear();
            slot.extend((0..inf.per_vertex).filter_map(|s| {
                let k = i * inf.per_vertex + s;
                match (inf.joints.get(k), inf.weights.get(k)) {
                    (Some(&j), Some(&w)) if usize::from(j) < joints && w > 0.0 => Some((j, w)),
                    _ => None,
                }
            }));
            let sum: f32 = slot.iter().map(|s| s.1).sum();
            // No influence sums to 0 (or NaN): the vertex is left out.
            if sum.is_nan() || sum <= 0.0 {
                continue;
            }
            let (positions, js, ws) = &mut by_count[slot.len() - 1];
            js.extend(slot.iter().map(|s| s.0));
            ws.extend(slot.iter().map(|s| s.1 / sum));
            for (plane, c) in positions.iter_mut().zip(p.to_array()) {
                plane.push(c);
            }
        }
    }
    // Bound props: one influence, weight 1.
    for &(joint, prop) in props {
        let Ok(j) = u16::try_from(joint) else {
            continue;
        };
        if joint >= joints {
            continue;
        }
        let (positions, js, ws) = &mut by_count[0];
        for p in prop.primitives.iter().flat_map(|p| &p.positions) {
            js.push(j);
            ws.push(1.0);
            for (plane, &c) in positions.iter_mut().zip(p) {
                plane.push(c);
            }
        }
    }
    let mut v = Vertices {
        positions: [Vec::new(), Vec::new(), Vec::new()],
        joints: Vec::new(),
        weights: Vec::new(),
        groups: Vec::new(),
    };
    for (k, (positions, js, ws)) in by_count.into_iter().enumerate() {
        if positions[0].is_empty() {
            continue;
        }
        let start = v.positions[0].len();
        v.groups.push(Group {
            vertices: start..start + positions[0].len(),
            first_entry: v.joints.len(),
            slots: k + 1,
        });
        for (all, plane) in v.positions.iter_mut().zip(positions) {
            all.extend(plane);
        }
        v.joints.extend(js);
        v.weights.extend(ws);
    }
    v
}

/// What one worker keeps between rows.
struct Acc<'m> {
    ev: Evaluator<'m>,
    exact: Vec<DMat4>,
    /// Per joint, decoded minus exact, as kernel columns.
    palette: Vec<Columns>,
    /// The skinned differences, planar.
    out: [Vec<f32>; 3],
    positions: ErrorTally,
    virtual_vertices: ErrorTally,
}

impl Acc<'_> {
    fn merge(mut self, other: Self) -> Self {
        self.positions.merge(&other.positions);
        self.virtual_vertices.merge(&other.virtual_vertices);
        self
    }
}

/// Measures what `tex`, stored at `precision`, costs on every clip of
/// `timeline` (see the module docs). Rows are measured in parallel; the
/// figures do not depend on the thread count.
///
/// `props` are the rigid props bound to a joint of this texture's skin
/// (joint index, [`BoundProp`]): their vertices are skinned by that joint
/// alone, weight 1, as the weights output plays them, and are measured
/// with the mesh's (a sword's tip, far from its hand, shows a rotation's
/// error more than any skin vertex).
pub fn measure_bone_texture<'a>(
    model: &'a Model,
    timeline: &Timeline,
    tex: &BoneTexture,
    precision: Precision,
    props: &[(usize, &BoundProp)],
) -> Result<Vec<BoneClipError>> {
    let skin = &model.skins[tex.set.skin];
    let joints = skin.joints.len();
    let verts = vertices_of(model, tex, joints, props);
    let count = verts.positions[0].len();
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
        palette: vec![[0.0; 16]; joints],
        out: [vec![0.0; count], vec![0.0; count], vec![0.0; count]],
        positions: ErrorTally::new(),
        virtual_vertices: ErrorTally::new(),
    };
    let measure_row = |mut acc: Acc<'a>, row: usize| -> Result<Acc<'a>> {
        timeline.evaluate_row(&mut acc.ev, row);
        let inv = skin::inverse_mesh_global(&acc.ev.globals, tex.set.mesh_node)?;
        skin::skin_matrices(skin, &acc.ev.globals, &inv, &mut acc.exact);
        for (j, (exact, slot)) in acc.exact.iter().zip(&mut acc.palette).enumerate() {
            let stored = tex.stored_matrix(row, j, precision).as_dmat4();
            let delta = stored - *exact;
            for q in &virtuals[j] {
                let e = delta.transform_point3(*q).length_squared();
                acc.virtual_vertices.add(e as f32);
            }
            for (c, v) in slot.iter_mut().zip(delta.to_cols_array()) {
                *c = v as f32;
            }
        }
        let [x, y, z] = &mut acc.out;
        for g in &verts.groups {
            let (at, entries) = (
                g.vertices.clone(),
                g.first_entry..g.first_entry + g.vertices.len() * g.slots,
            );
            let span = Span {
                positions: [0, 1, 2].map(|c| &verts.positions[c][at.clone()]),
                normals: [&[], &[], &[]],
                joints: &verts.joints[entries.clone()],
                weights: &verts.weights[entries],
                slots: g.slots,
            };
            let out = [&mut x[at.clone()], &mut y[at.clone()], &mut z[at]];
            deform(&acc.palette, span, out, None, false);
        }
        let moved = [&x[..], &y[..], &z[..]];
        acc.positions
            .extend_planar(moved, moved, |p, _| p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
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
            Ok(BoneClipError {
                positions: ErrorFigure::of(&acc.positions, distance_of_key, f64::MAX),
                virtual_vertices: ErrorFigure::of(&acc.virtual_vertices, distance_of_key, f64::MAX),
            })
        })
        .collect()
}
