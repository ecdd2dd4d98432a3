//! Vertex animation textures (SPEC section 7): for every timeline row, the
//! fully deformed position (and optionally normal and tangent) of every
//! vertex of every primitive that moves.
//!
//! **Model space.** All VAT values of a model are in the space of its
//! reference node: the mesh node of its first skinned instance (the space of
//! its bone-matrix texture), or the scene root when nothing is skinned. A
//! vertex's value is `inverse(reference_global) * world`, where `world` is
//! where glTF renders it: `sum_i w_i * joint_global_i * inverse_bind_i * p`
//! for skinned vertices (morph targets applied first), `node_global * p` for
//! rigid ones.
//!
//! **Layout.** Primitives are grouped into texture sets: one set for the
//! whole model (an atlas, the default) or one per primitive. A set's
//! vertices are its primitives' vertices one after the other (primitive `k`
//! starts at set vertex `first_vertex_k`); set vertex `v` of timeline row `r`
//! lives at texel `(v mod width, r * bands + v div width)`, where
//! `width = min(vertices, max size)` and `bands = ceil(vertices / width)`
//! (wrapping keeps every texture within the maximum size). Optional
//! power-of-two padding rounds width and height up; padding texels are zero.
//!
//! The work is split for speed: per-row matrix palettes are computed once in
//! f64 and stored as f32 3x4 matrices, then the per-vertex kernel runs in f32
//! over row batches in parallel. Nothing here allocates per vertex or per
//! frame.

use glam::{DMat4, Vec3, Vec4};
use rayon::prelude::*;

use crate::bake::bones;
use crate::bake::vat_kernel::{self, Columns, Span, columns};
use crate::bake::vertices::FrameVertices;
use crate::error::{Error, ErrorKind, Result};
use crate::eval::evaluate::Evaluator;
use crate::fold::{Fold, FoldError};
use crate::model::{Model, Property};
use crate::timeline::Timeline;

pub use rigbake_types::{NormalConvention, VatLayoutMode};

/// Options of the VAT bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct VatOptions {
    /// Bake normals (of primitives that have them).
    pub normals: bool,
    /// Bake tangents (of primitives that have them).
    pub tangents: bool,
    /// Normal transformation convention.
    pub convention: NormalConvention,
    /// Largest texture width and height.
    pub max_texture_size: usize,
    /// Round texture sizes up to powers of two.
    pub power_of_two: bool,
    /// One texture set per model (atlas) or per primitive.
    pub layout: VatLayoutMode,
}

impl Default for VatOptions {
    fn default() -> Self {
        Self {
            normals: false,
            tangents: false,
            convention: NormalConvention::InverseTranspose,
            max_texture_size: 8192,
            power_of_two: false,
            layout: VatLayoutMode::Atlas,
        }
    }
}

/// Most pages (textures per stream) a folded VAT texture set may take.
pub const MAX_VAT_PAGES: u32 = 256;

/// Where a texel of a vertex-animation texture lives.
///
/// Unfolded, set vertex `v` of timeline row `r` is texel
/// `(v mod width, r * bands + v div width)` of the only page. When
/// `frames * bands` rows would be taller than the maximum size, the rows
/// fold ([`Fold`]): timeline rows continue in further column blocks of
/// `width` texels and, when those do not fit one texture side by side, on
/// further pages; [`VatLayout::texel`] gives `(page, x, y)` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VatLayout {
    /// Vertices of the texture set (all its primitives).
    pub vertices: usize,
    /// Timeline rows (frames of all clips).
    pub frames: usize,
    /// Wrap width in texels (the width of one column block).
    pub width: usize,
    /// Texture rows per frame (`ceil(vertices / width)`).
    pub bands: usize,
    /// Page (texture) height in texels: `frames * bands` unfolded,
    /// `rows_per_block * bands` folded (padded if asked).
    pub height: usize,
    /// Page (texture) width in texels: `width` unfolded,
    /// `blocks_per_page * width` folded (padded if asked).
    pub page_width: usize,
    /// How timeline rows are placed ([`Fold::unfolded`] when they fit).
    pub fold: Fold,
}

impl VatLayout {
    /// The layout of `vertices` over `frames` rows within `max` texels per
    /// side: wrapped into bands when wider than `max`, folded into column
    /// blocks and pages when taller.
    pub fn new(vertices: usize, frames: usize, max: usize, power_of_two: bool) -> Result<Self> {
        let pad = |n: usize| {
            if power_of_two {
                n.next_power_of_two()
            } else {
                n
            }
        };
        let mut width = pad(vertices.min(max).max(1));
        if width > max {
            width = if power_of_two {
                prev_power_of_two(max)
            } else {
                max
            };
        }
        if width == 0 {
            return Err(Error::limit(
                "",
                format!("a maximum texture size of {max} holds no texel"),
            ));
        }
        let bands = vertices.div_ceil(width).max(1);
        if !power_of_two {
            // As narrow as the same number of bands allows, so the last
            // band is nearly full: padding stays under one texel per band
            // (BrainStem's 34,159 vertices: 5 bands of 6,832, not 8,192).
            width = vertices.div_ceil(bands).max(1);
        }
        let height = pad(frames.max(1) * bands);
        if height <= max {
            return Ok(Self {
                vertices,
                frames,
                width,
                bands,
                height,
                page_width: width,
                fold: Fold::unfolded(width as u32, bands as u32, frames as u32),
            });
        }
        // Fold within the largest size whose padding stays within `max`.
        let fit = if power_of_two {
            prev_power_of_two(max)
        } else {
            max
        };
        let fold = Fold::plan(width as u64, bands as u64, frames as u64, fit as u64, true)
            .map_err(|e| match e {
                FoldError::RowTooLarge { .. } | FoldError::TooManyBlocks { .. } => Error::limit(
                    "",
                    format!(
                        "one frame of {vertices} vertices takes {bands} texture rows of {width} texels, more than the maximum size {max}, so VAT frames cannot fold"
                    ),
                )
                .with_hint("raise the maximum texture size (up to 65536), or bake per primitive (--vat-layout per-primitive), whose sets are smaller"),
            })?;
        if fold.pages > MAX_VAT_PAGES {
            return Err(Error::limit(
                "",
                format!(
                    "{vertices} vertices over {frames} frames would fold into {} pages of {max} x {max} texels per stream, over the limit of {MAX_VAT_PAGES}",
                    fold.pages
                ),
            )
            .with_hint("raise the maximum texture size (up to 65536), lower the fps, or bake fewer clips"));
        }
        Ok(Self {
            vertices,
            frames,
            width,
            bands,
            height: pad(fold.height() as usize),
            page_width: pad(fold.width() as usize),
            fold,
        })
    }

    /// Whether frame rows continue in further column blocks or pages.
    pub fn is_folded(&self) -> bool {
        self.fold.is_folded()
    }

    /// Pages (textures per stream).
    pub fn pages(&self) -> usize {
        self.fold.pages as usize
    }

    /// Texel rows one column block holds (`frames * bands` unfolded).
    pub fn block_height(&self) -> usize {
        self.fold.height() as usize
    }

    /// Texel `(page, x, y)` of set vertex `vertex` at timeline row `row`.
    pub fn texel(&self, vertex: usize, row: usize) -> (usize, usize, usize) {
        let (p, x, y) = self.fold.texel(
            (vertex % self.width) as u32,
            (vertex / self.width) as u32,
            row as u32,
        );
        (p as usize, x as usize, y as usize)
    }
}

fn prev_power_of_two(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}

/// What deforms a baked primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deformation {
    /// Linear blend skinning with this skin (index into `Model::skins`).
    Skinned {
        /// The skin.
        skin: usize,
    },
    /// The node's own (animated) transform.
    Rigid,
}

/// One primitive instance that the VAT bake covers.
#[derive(Debug, Clone, PartialEq)]
pub struct VatPrimitive {
    /// The node instancing the mesh.
    pub node: usize,
    /// The mesh.
    pub mesh: usize,
    /// The primitive within the mesh.
    pub primitive: usize,
    /// Skinned or rigid.
    pub deformation: Deformation,
    /// Whether morph targets apply (the mesh has some).
    pub morphed: bool,
    /// Whether normals are baked.
    pub normals: bool,
    /// Whether tangents are baked.
    pub tangents: bool,
    /// Vertices of the primitive.
    pub vertices: usize,
    /// The texture set holding it (index into `VatPlan::sets`).
    pub set: usize,
    /// Its first vertex in the set: vertex `v` is set vertex `first_vertex + v`.
    pub first_vertex: usize,
    /// Texel addressing of its set.
    pub layout: VatLayout,
}

/// One texture set: a position texture (and normal and tangent textures when
/// any member bakes them) holding the vertices of `members`, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct VatSet {
    /// Texel addressing (`layout.vertices`: all members' vertices).
    pub layout: VatLayout,
    /// Member primitives (indices into `VatPlan::primitives`), in vertex order.
    pub members: Vec<usize>,
    /// Whether the set has a normal texture (some member bakes normals;
    /// members without normals read zero there).
    pub normals: bool,
    /// Whether the set has a tangent texture.
    pub tangents: bool,
}

/// Which primitives a VAT bake covers and in what space.
#[derive(Debug, Clone, PartialEq)]
pub struct VatPlan {
    /// The node whose space all values are in (`None`: the scene root).
    pub reference_node: Option<usize>,
    /// Primitives that move, in node then primitive order.
    pub primitives: Vec<VatPrimitive>,
    /// Primitives that never move (node, mesh, primitive): not baked.
    pub static_primitives: Vec<(usize, usize, usize)>,
    /// Texture sets: one (an atlas) or one per primitive, as asked.
    pub sets: Vec<VatSet>,
    /// How primitives were grouped.
    pub mode: VatLayoutMode,
}

/// Chooses what to bake: skinned primitives, primitives whose morph weights
/// are animated, and rigid primitives whose node or an ancestor (or the
/// reference node or an ancestor) is animated.
pub fn plan(model: &Model, timeline: &Timeline, options: &VatOptions) -> Result<VatPlan> {
    let mut trs_animated = vec![false; model.nodes.len()];
    let mut weights_animated = vec![false; model.nodes.len()];
    for ch in model.clips.iter().flat_map(|c| &c.channels) {
        match ch.property {
            Property::MorphWeights => weights_animated[ch.node] = true,
            _ => trs_animated[ch.node] = true,
        }
    }
    let chain_animated = |node: usize| {
        let mut cursor = Some(node);
        while let Some(n) = cursor {
            if trs_animated[n] {
                return true;
            }
            cursor = model.nodes[n].parent;
        }
        false
    };
    let reference_node = bones::bone_sets(model).first().map(|s| s.mesh_node);
    let reference_moves = reference_node.is_some_and(chain_animated);
    let mut primitives = Vec::new();
    let mut static_primitives = Vec::new();
    for (n, node) in model.nodes.iter().enumerate() {
        let Some(m) = node.mesh else { continue };
        let mesh = &model.meshes[m];
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let deformation = match (node.skin, &prim.influences) {
                (Some(skin), Some(_)) => Deformation::Skinned { skin },
                _ => Deformation::Rigid,
            };
            let morphed = !prim.morph_targets.is_empty();
            let moves = matches!(deformation, Deformation::Skinned { .. })
                || (morphed && weights_animated[n])
                || chain_animated(n)
                || reference_moves;
            if !moves {
                static_primitives.push((n, m, p));
                continue;
            }
            let vertices = prim.vertex_count();
            let layout = VatLayout::new(
                vertices,
                timeline.rows,
                options.max_texture_size,
                options.power_of_two,
            )
            .map_err(|e| Error {
                object: format!("meshes[{m}].primitives[{p}]"),
                ..e
            })?;
            primitives.push(VatPrimitive {
                node: n,
                mesh: m,
                primitive: p,
                deformation,
                morphed,
                normals: options.normals && prim.normals.is_some(),
                tangents: options.tangents && prim.tangents.is_some(),
                vertices,
                set: primitives.len(),
                first_vertex: 0,
                layout,
            });
        }
    }
    if primitives.is_empty() {
        return Err(Error::new(
            ErrorKind::NothingToBake,
            "",
            "no animated mesh: nothing for a vertex animation bake",
        ));
    }
    let sets = match options.layout {
        VatLayoutMode::PerPrimitive => primitives
            .iter()
            .enumerate()
            .map(|(i, p)| VatSet {
                layout: p.layout,
                members: vec![i],
                normals: p.normals,
                tangents: p.tangents,
            })
            .collect(),
        VatLayoutMode::Atlas => vec![atlas(&mut primitives, timeline.rows, options)?],
    };
    Ok(VatPlan {
        reference_node,
        primitives,
        static_primitives,
        sets,
        mode: options.layout,
    })
}

/// Packs every primitive into one set, vertices in plan order, and points
/// each primitive at it. Each primitive fits on its own (checked by the
/// caller), so only the atlas as a whole can be too large.
fn atlas(primitives: &mut [VatPrimitive], rows: usize, options: &VatOptions) -> Result<VatSet> {
    let mut total = 0usize;
    for p in primitives.iter_mut() {
        p.set = 0;
        p.first_vertex = total;
        total = total.saturating_add(p.vertices);
    }
    let layout = VatLayout::new(total, rows, options.max_texture_size, options.power_of_two)
        .map_err(|e| Error {
            object: "vat atlas".to_owned(),
            message: format!(
                "the atlas of {} primitives: {}",
                primitives.len(),
                e.message
            ),
            ..e
        })?;
    for p in primitives.iter_mut() {
        p.layout = layout;
    }
    Ok(VatSet {
        layout,
        members: (0..primitives.len()).collect(),
        normals: primitives.iter().any(|p| p.normals),
        tangents: primitives.iter().any(|p| p.tangents),
    })
}

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
            .map(|p| {
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
            })
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
        let row = &pal.affines[frame * pal.affines_per_row..(frame + 1) * pal.affines_per_row];
        let palette = match p.deformation {
            Deformation::Skinned { skin } => {
                let offset = pal.skin_offset[skin].unwrap_or_default();
                &row[offset..offset + self.model.skins[skin].joints.len()]
            }
            Deformation::Rigid => {
                let offset = pal.rigid_offset[p.node].unwrap_or_default();
                &row[offset..offset + 1]
            }
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_wraps_and_pads() {
        let l = VatLayout::new(10, 5, 8192, false).unwrap();
        assert_eq!((l.width, l.bands, l.height), (10, 1, 5));
        assert_eq!(l.texel(7, 3), (0, 7, 3));
        // 20 vertices within 16: two bands of 10 (not 16 and 4).
        let l = VatLayout::new(20, 5, 16, false).unwrap();
        assert_eq!((l.width, l.bands, l.height), (10, 2, 10));
        assert_eq!(l.texel(19, 2), (0, 9, 2 * 2 + 1));
        let l = VatLayout::new(21, 5, 16, false).unwrap();
        assert_eq!((l.width, l.bands), (11, 2));
        let l = VatLayout::new(10, 5, 8192, true).unwrap();
        assert_eq!((l.width, l.bands, l.height), (16, 1, 8));
        // Width 12 is not a power of two: wrap at 8 instead; 3 rows pad to 4.
        let l = VatLayout::new(20, 1, 12, true).unwrap();
        assert_eq!((l.width, l.bands, l.height), (8, 3, 4));
        assert!(!l.is_folded() && l.page_width == l.width);
        // 5 bands of 4 texels: one frame is taller than 4.
        let e = VatLayout::new(20, 5, 4, false).unwrap_err();
        assert!(
            e.message
                .contains("one frame of 20 vertices takes 5 texture rows")
        );
    }

    #[test]
    fn tall_sets_fold_into_blocks_then_pages() {
        // 3 vertices over 10 frames at 8: 2 blocks of 5 rows side by side.
        let l = VatLayout::new(3, 10, 8, false).unwrap();
        assert!(l.is_folded());
        assert_eq!(
            (l.width, l.bands, l.height, l.page_width, l.pages()),
            (3, 1, 5, 6, 1)
        );
        assert_eq!(l.texel(2, 7), (0, 3 + 2, 2));
        // 12 vertices at 8: 2 bands of 6; 4 frames fit a block, one block
        // fits a page: 10 rows need 3 blocks, so 3 pages of 4 rows.
        let l = VatLayout::new(12, 10, 8, false).unwrap();
        assert_eq!((l.width, l.bands, l.pages()), (6, 2, 3));
        assert_eq!((l.page_width, l.height), (6, 8));
        // Vertex 9 is texel 3 of band 1; row 9 is row 1 of page 2.
        assert_eq!(l.texel(9, 9), (2, 3, 2 + 1));
        // Power of two: pages are padded, folding within 8.
        let l = VatLayout::new(3, 10, 12, true).unwrap();
        assert_eq!((l.width, l.height, l.page_width), (4, 8, 8));
        // BrainStem's atlas at 4096: 9 bands of 3,796 texels, 3 pages of
        // 349 frames.
        let l = VatLayout::new(34_159, 1047, 4096, false).unwrap();
        assert_eq!(
            (l.width, l.bands, l.pages(), l.height),
            (3796, 9, 3, 349 * 9)
        );
    }
}
