//! Animated bounds: for each clip of a timeline, the axis-aligned box that
//! holds every vertex of every mesh at every frame, for culling. Values are
//! in the space VAT values are in (the VAT reference node: the first bone
//! set's mesh node, else the scene root), which is also the bone path's
//! space when the model has one bone set.
//!
//! Moving primitives are evaluated exactly as the VAT bake evaluates them
//! (same planner, same kernel), each clip's frames through
//! [`VatBaker::culled_bounds`], which skips the chunks of vertices that
//! provably lie inside the box found so far; primitives that never move
//! contribute their rest positions once (with their mesh's default morph
//! weights).

use glam::{DMat4, DVec3};
use rayon::prelude::*;

use crate::bake::vat::{self, CulledBounds, NormalConvention, VatBaker, VatOptions};
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

/// Per timeline row, the box of every moving vertex: the positions the VAT
/// bake writes, gathered as its rows are baked ([`RowBoxes::add_rows`]) so
/// the animated bounds need no second pass over the kernel, or by
/// [`clip_bounds`]'s own pass when no VAT is baked.
#[derive(Debug, Clone, PartialEq)]
pub struct RowBoxes {
    rows: Vec<Aabb>,
}

impl RowBoxes {
    /// Empty boxes for `rows` timeline rows.
    pub fn new(rows: usize) -> Self {
        Self {
            rows: vec![EMPTY; rows],
        }
    }

    /// Grows the boxes by unfolded texture rows `first..` of a texture set
    /// laid out as `layout`: `positions` holds whole planar rows (x, y, z
    /// planes of `layout.width`), as [`VatBaker::fill`] writes them. Padding
    /// texels (beyond the set's last vertex) and rows past the last frame
    /// are left out. Rows are measured in parallel; the result does not
    /// depend on the thread count.
    pub fn add_rows(&mut self, layout: &vat::VatLayout, first: usize, positions: &[f32]) {
        let w = layout.width;
        let measured: Vec<(usize, Aabb)> = positions
            .par_chunks(w * 3)
            .enumerate()
            .filter_map(|(r, row)| {
                let (frame, band) = ((first + r) / layout.bands, (first + r) % layout.bands);
                let real = layout.vertices.saturating_sub(band * w).min(w);
                (frame < layout.frames && frame < self.rows.len())
                    .then(|| (frame, planar_box(row, w, real)))
            })
            .collect();
        for (frame, b) in measured {
            self.rows[frame] = union(self.rows[frame], b);
        }
    }
}

/// The box of the first `count` texels of a planar row (x, y, z planes of
/// `width` floats).
fn planar_box(row: &[f32], width: usize, count: usize) -> Aabb {
    let mut b = [[f32::INFINITY; 4], [f32::NEG_INFINITY; 4]];
    planar_bounds(row, width, 3, count, &mut b);
    [[b[0][0], b[0][1], b[0][2]], [b[1][0], b[1][1], b[1][2]]]
}

/// Widens `acc` (per plane `[min, max]`, planes past `planes` untouched)
/// to the first `count` texels of a planar row of `planes` planes of
/// `width` floats (at most 4), in eight independent lanes of
/// `f32::min`/`max`, which vectorise (plain comparisons compiled to
/// shuffles and ran 2.4 times slower); NaN never enters. The VAT job's
/// PNG bounds pass uses it too.
pub fn planar_bounds(
    row: &[f32],
    width: usize,
    planes: usize,
    count: usize,
    acc: &mut [[f32; 4]; 2],
) {
    const LANES: usize = 8;
    for c in 0..planes.min(4) {
        let values = &row[c * width..c * width + count];
        let (mut lo, mut hi) = ([acc[0][c]; LANES], [acc[1][c]; LANES]);
        let mut chunks = values.chunks_exact(LANES);
        for chunk in &mut chunks {
            for i in 0..LANES {
                lo[i] = lo[i].min(chunk[i]);
                hi[i] = hi[i].max(chunk[i]);
            }
        }
        for &v in chunks.remainder() {
            lo[0] = lo[0].min(v);
            hi[0] = hi[0].max(v);
        }
        acc[0][c] = lo.into_iter().fold(f32::INFINITY, f32::min);
        acc[1][c] = hi.into_iter().fold(f32::NEG_INFINITY, f32::max);
    }
}

/// What the boxes of a timeline are made of besides the moving vertices:
/// the space they are in and the primitives that never move.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticPart {
    /// The reference node (`None`: the scene root).
    pub reference: Option<usize>,
    /// Primitives that never move (node, mesh, primitive).
    pub primitives: Vec<(usize, usize, usize)>,
}

impl StaticPart {
    /// The static part of a VAT plan: its reference node and the
    /// primitives it leaves out because they never move.
    pub fn of_plan(plan: &vat::VatPlan) -> Self {
        Self {
            reference: plan.reference_node,
            primitives: plan.static_primitives.clone(),
        }
    }
}

/// One box per clip of `timeline`, in clip order; a model without mesh
/// vertices gets a zero box at the origin. Moving primitives go through the
/// VAT kernel, frames in parallel, chunks culled where they cannot widen
/// the box; the result does not depend on the thread count (min and max
/// are exact). A position that is not finite is an error naming the
/// primitive, the clip and the frame of the first such row. A VAT bake
/// gathers the same boxes as it writes its rows: [`clip_bounds_from`]
/// turns those into the same result.
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
    match vat::plan(model, timeline, &options) {
        Ok(plan) => {
            let statics = StaticPart::of_plan(&plan);
            let baker = VatBaker::new(model, timeline, plan, options.convention)?;
            // Each clip's frames bounded set by set, most chunks of
            // vertices culled (exactly the kernel's values all the same).
            let sets: Vec<CulledBounds<'_, '_>> = (0..baker.plan().sets.len())
                .map(|i| baker.culled_bounds(i))
                .collect();
            let mut first_non_finite: Option<usize> = None;
            let moving: Vec<Aabb> = timeline
                .clips
                .iter()
                .map(|c| {
                    let end = (c.start_row + c.frames).min(timeline.rows);
                    sets.iter().fold(EMPTY, |b, set| {
                        let f = set.over(c.start_row.min(end)..end);
                        if let Some(row) = f.first_non_finite {
                            first_non_finite = Some(first_non_finite.map_or(row, |r| r.min(row)));
                        }
                        union(b, f.bounds)
                    })
                })
                .collect();
            // The first row holding a value that is not finite, reported as
            // the VAT bake reports it (the primitive, clip and frame).
            if let Some(row) = first_non_finite {
                let widest = baker.plan().sets.iter().map(|s| s.layout.width).max();
                let mut pos = vec![0.0f32; widest.unwrap_or(0) * 3];
                for (i, set) in baker.plan().sets.iter().enumerate() {
                    let pos = &mut pos[..set.layout.width * 3];
                    baker.fill_row(i, row, pos, None, None);
                    baker.check_row(i, row, [Some(pos), None, None])?;
                }
            }
            Ok(clip_boxes(
                model,
                &statics,
                timeline.clips.len(),
                Some(&moving),
            ))
        }
        Err(e) if e.kind == ErrorKind::NothingToBake => {
            let statics = StaticPart {
                reference: reference_node(model),
                primitives: every_primitive(model),
            };
            Ok(clip_bounds_from(model, timeline, &statics, None))
        }
        Err(e) => Err(e),
    }
}

/// One box per clip of `timeline` from the boxes of its moving vertices per
/// row (`None` when nothing moves) and its static part. Zeros are stored
/// as +0.0, so that which of two equal zeros a minimum kept never shows.
pub fn clip_bounds_from(
    model: &Model,
    timeline: &Timeline,
    statics: &StaticPart,
    moving: Option<&RowBoxes>,
) -> Vec<Aabb> {
    let per_clip: Option<Vec<Aabb>> = moving.map(|rows| {
        timeline
            .clips
            .iter()
            .map(|c| {
                let end = (c.start_row + c.frames).min(rows.rows.len());
                rows.rows[c.start_row.min(end)..end]
                    .iter()
                    .fold(EMPTY, |b, r| union(b, *r))
            })
            .collect()
    });
    clip_boxes(model, statics, timeline.clips.len(), per_clip.as_deref())
}

/// One box per clip (`clips` of them): the static part's box united with
/// the clip's box of moving vertices (`moving[c]`; `None` when nothing
/// moves). Zeros are stored as +0.0, so that which of two equal zeros a
/// minimum kept never shows; an empty box is all zeros.
fn clip_boxes(
    model: &Model,
    statics: &StaticPart,
    clips: usize,
    moving: Option<&[Aabb]>,
) -> Vec<Aabb> {
    let fixed = static_box(model, statics.reference, &statics.primitives);
    (0..clips)
        .map(|c| {
            let b = moving.map_or(fixed, |m| union(fixed, m[c]));
            if b[0][0] > b[1][0] {
                [[0.0; 3]; 2]
            } else {
                b.map(|corner| corner.map(|v| v + 0.0))
            }
        })
        .collect()
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
