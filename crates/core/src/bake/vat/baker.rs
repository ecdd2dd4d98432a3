//! Computing VAT texels: per-row matrix palettes once in f64, stored as f32
//! 3x4 matrices, then the per-vertex kernel in f32 over row batches in
//! parallel.

use glam::{DMat4, Vec3, Vec4};
use rayon::prelude::*;

use crate::bake::vat_kernel::{self, Columns, Span, columns};
use crate::bake::vertices::FrameVertices;
use crate::error::{Error, Result};
use crate::eval::evaluate::Evaluator;
use crate::model::Model;
use crate::timeline::Timeline;

use super::{Deformation, NormalConvention, VatPlan, VatPrimitive};

mod position_bounds;

pub use position_bounds::{CulledBounds, FrameBounds};

/// Per-row inputs of the kernel, computed once for all rows: for each row a
/// record of affine matrices (every used skin's joints, then every rigid
/// node) and a record of morph weights (every morphed node's targets).
#[derive(Debug, Clone)]
struct Palettes {
    /// Affine matrices per row.
    affines_per_row: usize,
    /// `rows * affines_per_row` matrices, as columns.
    affines: Vec<Columns>,
    /// Morph weights per row.
    weights_per_row: usize,
    /// `rows * weights_per_row` weights.
    weights: Vec<f32>,
    /// Offset of each skin's joints in a row record (`None`: unused).
    skin_offset: Vec<Option<usize>>,
    /// Offset of each rigid node's matrix in a row record.
    rigid_offset: Vec<Option<usize>>,
    /// Offset of each morphed node's weights in a weight record.
    weight_offset: Vec<Option<usize>>,
}

/// Per-primitive data prepared for the kernel: planar positions and normals
/// (x plane, y plane, z plane of `vertices` floats each),
/// and `slots` (palette index, weight) influences per vertex with weights
/// renormalised (rigid primitives: one influence of weight 1).
#[derive(Debug, Clone)]
struct Prepared {
    positions: Vec<f32>,
    normals: Vec<f32>,
    slots: usize,
    joints: Vec<u16>,
    weights: Vec<f32>,
}

/// Whether every value is finite (no infinity, no NaN), in eight lanes that
/// vectorise: `v * 0` is 0 for a finite `v` and NaN otherwise.
pub fn all_finite(values: &[f32]) -> bool {
    const LANES: usize = 8;
    let mut acc = [0.0f32; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for chunk in &mut chunks {
        for i in 0..LANES {
            acc[i] += chunk[i] * 0.0;
        }
    }
    let rest = chunks.remainder().iter().fold(0.0f32, |a, v| a + v * 0.0);
    acc.iter().all(|a| *a == 0.0) && rest == 0.0
}

/// Computes VAT texels for a plan: palettes once, then any batch of texture
/// rows of any primitive on request.
#[derive(Debug)]
pub struct VatBaker<'m> {
    model: &'m Model,
    plan: VatPlan,
    convention: NormalConvention,
    palettes: Palettes,
    prepared: Vec<Prepared>,
    /// Each clip's name and first timeline row, for errors.
    clips: Vec<(String, usize)>,
}

/// Output buffers for a batch of texture rows, planar per row: row `r` of a
/// stream with `c` components holds `c` planes of `width` floats (x plane,
/// y plane, ...), the layout EXR stores scanlines in. Positions and normals
/// have 3 components, tangents 4.
#[derive(Debug)]
pub struct VatBatch<'a> {
    /// Positions.
    pub positions: &'a mut [f32],
    /// Normals, if baked for this primitive.
    pub normals: Option<&'a mut [f32]>,
    /// Tangents, if baked for this primitive.
    pub tangents: Option<&'a mut [f32]>,
}

impl Prepared {
    /// The per-vertex data of planned primitive `p`: positions and normals
    /// planar (all x, then y, then z), and its influences with weights
    /// renormalised (one joint of weight 1 for rigid and morph-only
    /// primitives).
    fn of(model: &Model, p: &VatPrimitive) -> Self {
        let prim = &model.meshes[p.mesh].primitives[p.primitive];
        let vertices = prim.vertex_count();
        let planar = |v: &[Vec3]| {
            (0..3)
                .flat_map(|c| v.iter().map(move |x| x[c]))
                .collect::<Vec<f32>>()
        };
        let positions = planar(&prim.positions);
        let normals = prim
            .normals
            .as_deref()
            .map(planar)
            .unwrap_or_else(|| vec![0.0; vertices * 3]);
        match (p.deformation, &prim.influences) {
            (Deformation::Skinned { .. }, Some(inf)) => {
                let mut weights = inf.weights.clone();
                for w in weights.chunks_exact_mut(inf.per_vertex) {
                    let total: f32 = w.iter().sum();
                    w.iter_mut().for_each(|x| *x /= total);
                }
                Prepared {
                    positions,
                    normals,
                    slots: inf.per_vertex,
                    joints: inf.joints.clone(),
                    weights,
                }
            }
            _ => Prepared {
                positions,
                normals,
                slots: 1,
                joints: vec![0; vertices],
                weights: vec![1.0; vertices],
            },
        }
    }
}

impl<'m> VatBaker<'m> {
    /// Evaluates every timeline row once (in parallel) and prepares the
    /// per-vertex data of every planned primitive.
    pub fn new(
        model: &'m Model,
        timeline: &Timeline,
        plan: VatPlan,
        convention: NormalConvention,
    ) -> Result<Self> {
        let nodes = model.nodes.len();
        let mut skin_offset = vec![None; model.skins.len()];
        let mut rigid_offset = vec![None; nodes];
        let mut weight_offset = vec![None; nodes];
        let (mut affines_per_row, mut weights_per_row) = (0, 0);
        for p in &plan.primitives {
            match p.deformation {
                Deformation::Skinned { skin } if skin_offset[skin].is_none() => {
                    skin_offset[skin] = Some(affines_per_row);
                    affines_per_row += model.skins[skin].joints.len();
                }
                Deformation::Rigid if rigid_offset[p.node].is_none() => {
                    rigid_offset[p.node] = Some(affines_per_row);
                    affines_per_row += 1;
                }
                _ => {}
            }
            if p.morphed && weight_offset[p.node].is_none() {
                weight_offset[p.node] = Some(weights_per_row);
                weights_per_row += model.meshes[p.mesh].default_weights.len();
            }
        }
        let rows = timeline.rows;
        crate::timeline::check_evaluations(rows, model)?;
        let mut affines = vec![[0.0f32; 16]; rows * affines_per_row.max(1)];
        let mut weights = vec![0.0f32; rows * weights_per_row.max(1)];
        let reference = plan.reference_node;
        let results: Vec<Result<()>> = affines
            .par_chunks_mut(affines_per_row.max(1))
            .zip(weights.par_chunks_mut(weights_per_row.max(1)))
            .enumerate()
            .map_init(
                || Evaluator::new(model),
                |ev, (row, (affine_row, weight_row))| {
                    timeline.evaluate_row(ev, row);
                    let inv_ref = match reference {
                        Some(r) => crate::eval::skin::inverse_mesh_global(&ev.globals, r)?,
                        None => DMat4::IDENTITY,
                    };
                    for (s, offset) in skin_offset.iter().enumerate() {
                        let Some(offset) = *offset else { continue };
                        let skin = &model.skins[s];
                        for (k, (&j, ibm)) in
                            skin.joints.iter().zip(&skin.inverse_binds).enumerate()
                        {
                            affine_row[offset + k] = columns(&(inv_ref * ev.globals[j] * *ibm));
                        }
                    }
                    for (n, offset) in rigid_offset.iter().enumerate() {
                        if let Some(offset) = *offset {
                            affine_row[offset] = columns(&(inv_ref * ev.globals[n]));
                        }
                    }
                    for (n, offset) in weight_offset.iter().enumerate() {
                        if let Some(offset) = *offset {
                            for (k, w) in ev.local.node_weights(n).iter().enumerate() {
                                weight_row[offset + k] = *w as f32;
                            }
                        }
                    }
                    Ok(())
                },
            )
            .collect();
        timeline.first_row_error(results)?;
        // Finite inputs can still overflow down a hierarchy; never bake that.
        if let Some(k) = affines
            .iter()
            .position(|m| !m.iter().all(|v| v.is_finite()))
        {
            let row = k / affines_per_row.max(1);
            let (c, frame) = timeline.locate_row(row);
            return Err(Error::invalid(
                "nodes",
                format!(
                    "a vertex transform is not finite at clip `{}`, frame {frame}: transforms overflow",
                    timeline.clips[c].name
                ),
            )
            .with_hint("check the model for absurdly large scales or translations"));
        }
        let palettes = Palettes {
            affines_per_row,
            affines,
            weights_per_row,
            weights,
            skin_offset,
            rigid_offset,
            weight_offset,
        };
        let prepared = plan
            .primitives
            .iter()
            .map(|p| Prepared::of(model, p))
            .collect();
        Ok(Self {
            model,
            plan,
            convention,
            palettes,
            prepared,
            clips: timeline
                .clips
                .iter()
                .map(|c| (c.name.clone(), c.start_row))
                .collect(),
        })
    }

    /// The plan being baked.
    pub fn plan(&self) -> &VatPlan {
        &self.plan
    }

    /// Fills texture rows `first_row..first_row + rows` of texture set `set`
    /// (an index into `plan().sets`) into `out`, in parallel over rows.
    ///
    /// Finite palettes and vertices can still multiply past the range of
    /// f32: every filled row is checked while it is in cache, and a value
    /// that is not finite (in any stream) is an error naming the primitive,
    /// the clip and the frame of the first such row, never a texture of
    /// infinities a reader cannot use.
    pub fn fill(&self, set: usize, first_row: usize, rows: usize, out: VatBatch<'_>) -> Result<()> {
        let index = set;
        let w = self.plan.sets[set].layout.width;
        let VatBatch {
            positions,
            normals,
            tangents,
        } = out;
        // Split every output into per-row slices and process rows in parallel.
        let pos_rows = positions[..rows * w * 3].par_chunks_mut(w * 3);
        let mut nrm_rows: Vec<Option<&mut [f32]>> = match normals {
            Some(n) => n[..rows * w * 3].chunks_mut(w * 3).map(Some).collect(),
            None => (0..rows).map(|_| None).collect(),
        };
        let mut tan_rows: Vec<Option<&mut [f32]>> = match tangents {
            Some(t) => t[..rows * w * 4].chunks_mut(w * 4).map(Some).collect(),
            None => (0..rows).map(|_| None).collect(),
        };
        let bad = pos_rows
            .zip(nrm_rows.par_iter_mut())
            .zip(tan_rows.par_iter_mut())
            .enumerate()
            .filter_map(|(i, ((pos, nrm), tan))| {
                let row = first_row + i;
                self.fill_row(index, row, pos, nrm.as_deref_mut(), tan.as_deref_mut());
                self.check_row(set, row, [Some(&*pos), nrm.as_deref(), tan.as_deref()])
                    .err()
                    .map(|e| (row, e))
            })
            .min_by_key(|(row, _)| *row);
        match bad {
            None => Ok(()),
            Some((_, e)) => Err(e),
        }
    }

    /// Checks texture row `row` of set `set` as [`Self::fill_row`] filled
    /// it (positions, and normals and tangents when given): an error naming
    /// the primitive, clip and frame when a value is not finite.
    pub fn check_row(&self, set: usize, row: usize, streams: [Option<&[f32]>; 3]) -> Result<()> {
        if streams.iter().flatten().all(|values| all_finite(values)) {
            return Ok(());
        }
        let (primitive, stream) = self.first_non_finite(set, row, streams);
        Err(self.non_finite_error(set, row, primitive, stream))
    }

    /// The member primitive and the stream name of the first texel of
    /// texture row `row` of set `set` holding a value that is not finite.
    fn first_non_finite(
        &self,
        set: usize,
        row: usize,
        streams: [Option<&[f32]>; 3],
    ) -> (usize, &'static str) {
        let s = &self.plan.sets[set];
        let w = s.layout.width;
        let band_start = (row % s.layout.bands) * w;
        for (values, name, floats) in [
            (streams[0], "positions", 3),
            (streams[1], "normals", 3),
            (streams[2], "tangents", 4),
        ] {
            let Some(values) = values else { continue };
            let texel = (0..floats)
                .flat_map(|c| {
                    values[c * w..(c + 1) * w]
                        .iter()
                        .position(|v| !v.is_finite())
                })
                .min();
            if let Some(x) = texel {
                let vertex = band_start + x;
                let member = s
                    .members
                    .iter()
                    .copied()
                    .find(|&m| {
                        let p = &self.plan.primitives[m];
                        (p.first_vertex..p.first_vertex + p.vertices).contains(&vertex)
                    })
                    .unwrap_or(s.members[0]);
                return (member, name);
            }
        }
        (s.members[0], "positions")
    }

    /// The error for a value that is not finite in `stream` of `primitive`
    /// at texture row `row` of set `set`.
    fn non_finite_error(&self, set: usize, row: usize, primitive: usize, stream: &str) -> Error {
        let frame_row = row / self.plan.sets[set].layout.bands;
        let c = self
            .clips
            .partition_point(|(_, start)| *start <= frame_row)
            .saturating_sub(1);
        let (clip, start) = self.clips.get(c).map_or(("", 0), |(n, s)| (n.as_str(), *s));
        let p = &self.plan.primitives[primitive];
        Error::invalid(
            format!("meshes[{}].primitives[{}]", p.mesh, p.primitive),
            format!(
                "the deformed {stream} of node `{}` are not finite at clip `{clip}`, frame {}: the model's coordinates and transforms multiply past the range of 32-bit floats",
                self.model.nodes[p.node].name,
                frame_row - start
            ),
        )
        .with_hint("check the model for absurdly large scales, translations, vertex coordinates or morph targets")
    }

    /// Every vertex of primitive `index` at timeline row `row`, in vertex
    /// order, ready for a mesh file: positions, and unit normals and tangents
    /// when the source primitive has them (whether or not the plan bakes
    /// them). Degenerate directions become +Z (normals) and +X (tangents);
    /// tangent `w` is exactly +-1.
    pub fn vertices_at(&self, index: usize, row: usize) -> FrameVertices {
        let p = &self.plan.primitives[index];
        let prim = &self.model.meshes[p.mesh].primitives[p.primitive];
        let v = p.vertices;
        let (mut pos, mut nrm) = (vec![0.0; v * 3], vec![0.0; v * 3]);
        let mut tan = vec![0.0; v * 4];
        self.fill_span(
            index,
            row,
            0..v,
            v,
            0,
            &mut pos,
            prim.normals.is_some().then_some(&mut nrm[..]),
            prim.tangents.is_some().then_some(&mut tan[..]),
        );
        let mut positions = Vec::with_capacity(v * 3);
        let mut normals = Vec::with_capacity(v * 3);
        let mut tangents = Vec::with_capacity(v * 4);
        for x in 0..v {
            positions.extend([pos[x], pos[v + x], pos[2 * v + x]]);
            normals.extend([nrm[x], nrm[v + x], nrm[2 * v + x]]);
            tangents.extend([tan[x], tan[v + x], tan[2 * v + x], tan[3 * v + x]]);
        }
        FrameVertices::from_flat(
            &positions,
            prim.normals.is_some().then_some(&normals[..]),
            prim.tangents.is_some().then_some(&tangents[..]),
        )
    }

    /// Deforms every vertex of primitive `index` at timeline row `row` into
    /// planar buffers of `width` floats a plane (x, y and z planes, so `pos`
    /// holds at least `3 * width`), from texel `x0` on, on the calling
    /// thread, without allocating once warm: positions, and normals (not
    /// normalised) when `nrm` is given and the source primitive has them
    /// (whether or not the plan bakes them; otherwise `nrm` is left as it
    /// is). The kernel of [`Self::vertices_at`] and [`Self::fill`].
    pub fn fill_primitive(
        &self,
        index: usize,
        row: usize,
        (width, x0): (usize, usize),
        pos: &mut [f32],
        nrm: Option<&mut [f32]>,
    ) {
        let p = &self.plan.primitives[index];
        let has_normals = self.model.meshes[p.mesh].primitives[p.primitive]
            .normals
            .is_some();
        let nrm = nrm.filter(|_| has_normals);
        self.fill_span(index, row, 0..p.vertices, width, x0, pos, nrm, None);
    }

    /// Fills texture row `texture_row` (one band of one frame) of texture
    /// set `set` into one row's planar buffers (positions and normals 3
    /// planes of `width` floats, tangents 4), on the calling thread: each
    /// member primitive's vertices on that band through the vectorised
    /// kernel (tangents, rarely asked for, through a plain loop). Texels
    /// beyond the last vertex are zero, and so are the normals and tangents
    /// of members that have none. [`VatBaker::fill`] runs this over rows in
    /// parallel; callers that encode each row as soon as it is made (keeping
    /// it in cache) call it directly.
    pub fn fill_row(
        &self,
        set: usize,
        texture_row: usize,
        pos: &mut [f32],
        mut nrm: Option<&mut [f32]>,
        mut tan: Option<&mut [f32]>,
    ) {
        let s = &self.plan.sets[set];
        let layout = s.layout;
        let w = layout.width;
        let frame = texture_row / layout.bands;
        let band = texture_row % layout.bands;
        let band_start = band * w;
        let band_end = (band_start + w).min(layout.vertices).max(band_start);
        let span_of = |index: usize| {
            let p = &self.plan.primitives[index];
            let start = p.first_vertex.max(band_start);
            let end = (p.first_vertex + p.vertices).min(band_end);
            (start < end).then_some((p, start, end))
        };
        // Texels no member writes are zero: padding past the last vertex,
        // and (members tile the set's vertices) nothing else, unless a
        // member lacks normals or tangents. Zeroing only those keeps the
        // kernel from writing every row twice.
        let covered: usize = s
            .members
            .iter()
            .filter_map(|&i| span_of(i))
            .map(|(_, a, b)| b - a)
            .sum();
        let written = if frame < layout.frames && covered == band_end - band_start {
            band_end - band_start
        } else {
            0
        };
        let zero = |planes: &mut [f32], count: usize, range: std::ops::Range<usize>| {
            for c in 0..count {
                planes[c * w + range.start..c * w + range.end].fill(0.0);
            }
        };
        zero(pos, 3, written..w);
        if let Some(n) = nrm.as_deref_mut() {
            zero(n, 3, written..w);
        }
        if let Some(t) = tan.as_deref_mut() {
            zero(t, 4, written..w);
        }
        if frame >= layout.frames {
            return;
        }
        for &index in &s.members {
            let Some((p, start, end)) = span_of(index) else {
                continue;
            };
            let texels = start - band_start..end - band_start;
            if !p.normals
                && let Some(n) = nrm.as_deref_mut()
            {
                zero(n, 3, texels.clone());
            }
            if !p.tangents
                && let Some(t) = tan.as_deref_mut()
            {
                zero(t, 4, texels);
            }
            let local = start - p.first_vertex..end - p.first_vertex;
            self.fill_span(
                index,
                frame,
                local,
                w,
                start - band_start,
                pos,
                nrm.as_deref_mut().filter(|_| p.normals),
                tan.as_deref_mut().filter(|_| p.tangents),
            );
        }
    }

    /// The matrices primitive `index` is deformed by at timeline row
    /// `frame`: its skin's joints, or its node's matrix when rigid.
    fn palette(&self, index: usize, frame: usize) -> &[Columns] {
        let p = &self.plan.primitives[index];
        let pal = &self.palettes;
        let row = &pal.affines[frame * pal.affines_per_row..(frame + 1) * pal.affines_per_row];
        match p.deformation {
            Deformation::Skinned { skin } => {
                let offset = pal.skin_offset[skin].unwrap_or_default();
                &row[offset..offset + self.model.skins[skin].joints.len()]
            }
            Deformation::Rigid => {
                let offset = pal.rigid_offset[p.node].unwrap_or_default();
                &row[offset..offset + 1]
            }
        }
    }

    /// Deforms vertices `range` of primitive `index` at timeline row `frame`
    /// into planar buffers of `w` floats per plane, starting at texel `x0`.
    #[allow(clippy::too_many_arguments)]
    fn fill_span(
        &self,
        index: usize,
        frame: usize,
        range: std::ops::Range<usize>,
        w: usize,
        x0: usize,
        pos: &mut [f32],
        nrm: Option<&mut [f32]>,
        tan: Option<&mut [f32]>,
    ) {
        let p = &self.plan.primitives[index];
        let (first, count) = (range.start, range.len());
        let (px, rest) = pos[..3 * w].split_at_mut(w);
        let (py, pz) = rest.split_at_mut(w);
        let mut out_pos = [&mut px[x0..], &mut py[x0..], &mut pz[x0..]];
        let mut out_nrm = nrm.map(|n| {
            let (nx, rest) = n[..3 * w].split_at_mut(w);
            let (ny, nz) = rest.split_at_mut(w);
            [&mut nx[x0..], &mut ny[x0..], &mut nz[x0..]]
        });
        let prim = &self.model.meshes[p.mesh].primitives[p.primitive];
        let pal = &self.palettes;
        let palette = self.palette(index, frame);
        let pr = &self.prepared[index];
        let vertices = p.vertices;
        let slots = pr.slots;
        // Morph targets apply before skinning (SPEC section 3): into scratch.
        let targets = prim.morph_targets.len();
        let morph_weights: &[f32] = match pal.weight_offset[p.node] {
            Some(offset) if p.morphed => {
                &pal.weights[frame * pal.weights_per_row + offset..][..targets]
            }
            _ => &[],
        };
        let exact = self.convention == NormalConvention::InverseTranspose;
        MORPH_SCRATCH.with_borrow_mut(|(mp, mn)| {
            let (positions, normals): ([&[f32]; 3], [&[f32]; 3]) = if morph_weights.is_empty() {
                let at = |c: usize| c * vertices + range.start..c * vertices + range.end;
                (
                    [0, 1, 2].map(|c| &pr.positions[at(c)]),
                    [0, 1, 2].map(|c| &pr.normals[at(c)]),
                )
            } else {
                morph(prim, morph_weights, range.clone(), mp, mn);
                let n = range.len();
                (
                    [0, 1, 2].map(|c| &mp[c * n..(c + 1) * n]),
                    [0, 1, 2].map(|c| &mn[c * n..(c + 1) * n]),
                )
            };
            let span = Span {
                positions,
                normals,
                joints: &pr.joints[range.start * slots..range.end * slots],
                weights: &pr.weights[range.start * slots..range.end * slots],
                slots,
            };
            let [px, py, pz] = &mut out_pos;
            let out_n = out_nrm
                .as_mut()
                .map(|[nx, ny, nz]| [&mut nx[..count], &mut ny[..count], &mut nz[..count]]);
            vat_kernel::deform(
                palette,
                span,
                [&mut px[..count], &mut py[..count], &mut pz[..count]],
                out_n,
                exact,
            );
            if let Some(out) = tan {
                for i in 0..count {
                    let v = first + i;
                    let mut t = prim.tangents.as_ref().map_or(Vec4::ZERO, |t| t[v]);
                    for (k, &wt) in morph_weights.iter().enumerate() {
                        if let Some(d) = &prim.morph_targets[k].tangents {
                            t += (d[v] * wt).extend(0.0);
                        }
                    }
                    let mut m = [0.0f32; 16];
                    for (&j, &wj) in span.joints[i * slots..(i + 1) * slots]
                        .iter()
                        .zip(&span.weights[i * slots..(i + 1) * slots])
                    {
                        for (e, c) in m.iter_mut().zip(&palette[usize::from(j)]) {
                            *e += wj * c;
                        }
                    }
                    let d = Vec3::new(
                        m[0] * t.x + m[4] * t.y + m[8] * t.z,
                        m[1] * t.x + m[5] * t.y + m[9] * t.z,
                        m[2] * t.x + m[6] * t.y + m[10] * t.z,
                    )
                    .normalize_or_zero();
                    for (c, value) in [d.x, d.y, d.z, t.w].into_iter().enumerate() {
                        out[c * w + x0 + i] = value;
                    }
                }
            }
        });
    }
}

thread_local! {
    /// Morphed positions and normals of the row being filled, reused so the
    /// per-frame path never allocates once warm.
    static MORPH_SCRATCH: std::cell::RefCell<(Vec<f32>, Vec<f32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Positions and normals of vertices `range` with morph targets applied,
/// planar (x, y, z planes of `range.len()` floats), into reused buffers.
fn morph(
    prim: &crate::model::Primitive,
    weights: &[f32],
    range: std::ops::Range<usize>,
    positions: &mut Vec<f32>,
    normals: &mut Vec<f32>,
) {
    let n = range.len();
    positions.clear();
    normals.clear();
    for c in 0..3 {
        positions.extend(prim.positions[range.clone()].iter().map(|v| v[c]));
        match &prim.normals {
            Some(nv) => normals.extend(nv[range.clone()].iter().map(|v| v[c])),
            None => normals.resize(normals.len() + n, 0.0),
        }
    }
    for (target, &w) in prim.morph_targets.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        for (out, deltas) in [
            (&mut *positions, &target.positions),
            (&mut *normals, &target.normals),
        ] {
            if let Some(d) = deltas {
                for (i, delta) in d[range.clone()].iter().enumerate() {
                    for c in 0..3 {
                        out[c * n + i] += delta[c] * w;
                    }
                }
            }
        }
    }
}
