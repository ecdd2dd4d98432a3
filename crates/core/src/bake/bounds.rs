//! Animated bounds: for each clip of a timeline, the axis-aligned box that
//! holds every vertex of every mesh at every frame, for culling. Values are
//! in the space VAT values are in (the VAT reference node: the first bone
//! set's mesh node, else the scene root), which is also the bone path's
//! space when the model has one bone set.
//!
//! Moving primitives are evaluated exactly as the VAT bake evaluates them
//! (same planner, same kernel); primitives that never move contribute their
//! rest positions once (with their mesh's default morph weights).

use glam::{DMat4, DVec3};
use rayon::prelude::*;

use crate::bake::vat::{self, NormalConvention, VatBaker, VatOptions};
use crate::error::{ErrorKind, Result};
use crate::eval::evaluate::Evaluator;
use crate::model::Model;
use crate::timeline::Timeline;

/// An axis-aligned box: `[min, max]`, each `[x, y, z]`.
pub type Aabb = [[f32; 3]; 2];

/// The empty box (min above max), the identity of [`grow`].
const EMPTY: Aabb = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];

/// Grows `b` to hold `p`.
fn grow(b: &mut Aabb, p: [f32; 3]) {
    for k in 0..3 {
        b[0][k] = b[0][k].min(p[k]);
        b[1][k] = b[1][k].max(p[k]);
    }
}

/// The union of two boxes.
fn union(mut a: Aabb, b: Aabb) -> Aabb {
    grow(&mut a, b[0]);
    grow(&mut a, b[1]);
    a
}

/// One box per clip of `timeline`, in clip order; a model without mesh
/// vertices gets a zero box at the origin. Rows are evaluated in parallel;
/// the result does not depend on the thread count (min and max are exact).
pub fn clip_bounds(model: &Model, timeline: &Timeline) -> Result<Vec<Aabb>> {
    let options = VatOptions {
        normals: false,
        tangents: false,
        convention: NormalConvention::default(),
        // One band per frame: the layout only addresses rows here, no texture
        // is made, so no size limit applies.
        max_texture_size: usize::MAX >> 8,
        power_of_two: false,
        layout: vat::VatLayoutMode::Atlas,
    };
    let (moving, reference) = match vat::plan(model, timeline, &options) {
        Ok(plan) => {
            let reference = plan.reference_node;
            let statics = plan.static_primitives.clone();
            let baker = VatBaker::new(model, timeline, plan, options.convention)?;
            // One atlas set, one band per frame (its width is the vertex count),
            // so texture row `row` is timeline row `row`: positions only,
            // through the VAT kernel, into a per-thread planar scratch row.
            let widest = baker
                .plan()
                .sets
                .iter()
                .map(|s| s.layout.width)
                .max()
                .unwrap_or(0);
            let rows: Vec<Aabb> = (0..timeline.rows)
                .into_par_iter()
                .map_init(
                    || vec![0.0f32; widest * 3],
                    |scratch, row| {
                        let mut b = EMPTY;
                        for (i, set) in baker.plan().sets.iter().enumerate() {
                            let (w, n) = (set.layout.width, set.layout.vertices);
                            let pos = &mut scratch[..w * 3];
                            baker.fill_row(i, row, pos, None, None);
                            for v in 0..n {
                                grow(&mut b, [pos[v], pos[w + v], pos[2 * w + v]]);
                            }
                        }
                        b
                    },
                )
                .collect();
            (Some((rows, statics)), reference)
        }
        Err(e) if e.kind == ErrorKind::NothingToBake => (None, reference_node(model)),
        Err(e) => return Err(e),
    };
    let statics = match &moving {
        Some((_, statics)) => statics.clone(),
        None => every_primitive(model),
    };
    let fixed = static_box(model, reference, &statics);
    Ok(timeline
        .clips
        .iter()
        .map(|c| {
            let mut b = fixed;
            if let Some((rows, _)) = &moving {
                for r in &rows[c.start_row..c.start_row + c.frames] {
                    b = union(b, *r);
                }
            }
            if b[0][0] > b[1][0] { [[0.0; 3]; 2] } else { b }
        })
        .collect())
}

/// The node whose space the boxes are in: the VAT reference node (the
/// first bone set's mesh node), `None` for the scene root.
pub fn reference_node(model: &Model) -> Option<usize> {
    crate::bake::bones::bone_sets(model)
        .first()
        .map(|s| s.mesh_node)
}

/// Every (node, mesh, primitive) of the model.
fn every_primitive(model: &Model) -> Vec<(usize, usize, usize)> {
    let mut all = Vec::new();
    for (n, node) in model.nodes.iter().enumerate() {
        if let Some(m) = node.mesh {
            all.extend((0..model.meshes[m].primitives.len()).map(|p| (n, m, p)));
        }
    }
    all
}

/// The box of primitives that never move: rest positions (with default
/// morph weights) carried into the reference node's space.
fn static_box(model: &Model, reference: Option<usize>, prims: &[(usize, usize, usize)]) -> Aabb {
    let ev = Evaluator::new(model);
    let to_reference = reference.map_or(DMat4::IDENTITY, |r| ev.globals[r].inverse());
    let mut b = EMPTY;
    for &(n, m, p) in prims {
        let mesh = &model.meshes[m];
        let prim = &mesh.primitives[p];
        let weights = model.nodes[n]
            .morph_weights
            .as_deref()
            .unwrap_or(&mesh.default_weights);
        let matrix = to_reference * ev.globals[n];
        for (v, pos) in prim.positions.iter().enumerate() {
            let mut q = pos.as_dvec3();
            for (t, w) in prim.morph_targets.iter().zip(weights) {
                if let Some(d) = &t.positions {
                    q += d[v].as_dvec3() * f64::from(*w);
                }
            }
            let q: DVec3 = matrix.transform_point3(q);
            grow(&mut b, q.as_vec3().to_array());
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_grow_to_hold_points_and_unions_hold_both() {
        let mut b = EMPTY;
        grow(&mut b, [1.0, -2.0, 3.0]);
        grow(&mut b, [-1.0, 4.0, 0.5]);
        assert_eq!(b, [[-1.0, -2.0, 0.5], [1.0, 4.0, 3.0]]);
        let u = union(b, [[0.0, 0.0, 0.0], [9.0, 0.0, 0.0]]);
        assert_eq!(u, [[-1.0, -2.0, 0.0], [9.0, 4.0, 3.0]]);
    }
}
