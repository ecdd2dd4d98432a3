//! What every vertex of a playback path holds at one timeline row (the
//! bone path: the vertex skinned with that row's blended matrix; the VAT
//! path: its decoded texels), computed once per row and kept while the
//! samples next to it read the row again. `verify` checks every frame and
//! every mid-frame in row order, so each row is computed about once
//! instead of three times, and the bone path fetches each bone's matrix
//! once per row (a palette) instead of once per vertex and influence. The
//! runtime reference's frame lerp and row blend
//! ([`rigbake_core::runtime::rows::blend_rows`]) then blend these values
//! with the arithmetic a single vertex's playback uses, so every number is
//! the same to the bit.

use glam::Vec3;
use rigbake_core::Model;
use rigbake_core::model::Primitive;
use rigbake_core::runtime::GpuState;
use rigbake_core::runtime::bone_path::{BoneTextureView, blend_pairs, weighted_pairs};
use rigbake_core::runtime::math::{Rows3x4, cofactor_normals_columns, transform_point};
use rigbake_core::runtime::rows::RowValues;
use rigbake_core::runtime::vat_path;

use super::measure::{Path, encoded_matrix_bound};
use crate::playback::{BonePlayback, VatPlayback};

/// Rows kept per path (a verify sample reads at most four: two state rows
/// and their next rows).
const KEPT: usize = 6;

/// The source primitive a playback primitive plays (`None` when the node
/// has no such primitive).
pub(super) fn source_primitive(model: &Model, node: usize, primitive: usize) -> Option<&Primitive> {
    let mesh = model.nodes.get(node)?.mesh?;
    model.meshes.get(mesh)?.primitives.get(primitive)
}

/// One path's values at the rows recently read.
pub(super) struct PathRows<'p> {
    path: Path<'p>,
    /// Per primitive of the path: where its vertices start in a row's
    /// values, and how many of them are compared.
    spans: Vec<(usize, usize)>,
    /// The last timeline row of each texture the path reads (a next row
    /// is clamped to it), distinct.
    last_rows: Vec<u32>,
    kept: Vec<Kept>,
    clock: u64,
    /// Zeros for every vertex: what a row not computed reads (never).
    zeros: Vec<RowValues>,
    /// The bone path's bound on each vertex's position error from its
    /// texture's recorded encoding error
    /// ([`super::measure::encoded_matrix_bound`]), laid out like a row's
    /// values: the same at every sample, so computed once. Empty for the
    /// VAT path.
    bounds: Vec<f64>,
    /// The bone path's weighted pairs of every vertex, laid out like a
    /// row's values: the same at every row, so taken once. Empty for the
    /// VAT path.
    pairs: VertexPairs,
}

/// The `(bone, weight)` pairs [`blend_pairs`] adds for each vertex
/// ([`weighted_pairs`]), vertex after vertex.
#[derive(Default)]
struct VertexPairs {
    /// Where each vertex's pairs start in `pairs`, and one past the last.
    starts: Vec<usize>,
    pairs: Vec<(u32, f32)>,
}

impl VertexPairs {
    /// The pairs of every compared vertex of the bone path `bones`.
    fn of(bones: &BonePlayback, spans: &[(usize, usize)]) -> Self {
        let k = bones.channels;
        let mut out = Self::default();
        for (prim, &(_, count)) in bones.primitives.iter().zip(spans) {
            for v in 0..count {
                out.starts.push(out.pairs.len());
                let channels = prim.channels.get(v * k..(v + 1) * k).unwrap_or_default();
                out.pairs.extend(weighted_pairs(channels));
            }
        }
        out.starts.push(out.pairs.len());
        out
    }

    /// The pairs of vertex `v` (none past the last vertex).
    #[inline(always)]
    fn vertex(&self, v: usize) -> &[(u32, f32)] {
        match (self.starts.get(v), self.starts.get(v + 1)) {
            (Some(&a), Some(&b)) => self.pairs.get(a..b).unwrap_or_default(),
            _ => &[],
        }
    }
}

struct Kept {
    row: u32,
    used: u64,
    values: Vec<RowValues>,
}

impl<'p> PathRows<'p> {
    /// Nothing computed yet for `path` of `model`.
    pub(super) fn new(model: &Model, path: Path<'p>) -> Self {
        let (counts, mut last_rows): (Vec<usize>, Vec<u32>) = match path {
            Path::Bones(b) => b
                .primitives
                .iter()
                .map(|p| {
                    let src = source_primitive(model, p.node, p.primitive);
                    let vertices = src.map_or(0, Primitive::vertex_count);
                    let channels = match b.channels {
                        0 => vertices,
                        k => p.channels.len() / k,
                    };
                    let rows = b.textures.get(p.set).map_or(0, |t| t.rows);
                    (vertices.min(channels), rows.saturating_sub(1))
                })
                .unzip(),
            Path::Vat(v) => v
                .primitives
                .iter()
                .map(|p| {
                    let src = source_primitive(model, p.node, p.primitive);
                    (
                        src.map_or(0, Primitive::vertex_count),
                        p.address.frames.saturating_sub(1),
                    )
                })
                .unzip(),
        };
        last_rows.sort_unstable();
        last_rows.dedup();
        let mut start = 0;
        let spans: Vec<(usize, usize)> = counts
            .into_iter()
            .map(|n| {
                let span = (start, n);
                start += n;
                span
            })
            .collect();
        let bounds = match path {
            Path::Bones(b) => b
                .primitives
                .iter()
                .zip(&spans)
                .flat_map(|(p, &(_, count))| {
                    let max_error = b.textures.get(p.set).map_or(0.0, |t| t.max_error);
                    let src = source_primitive(model, p.node, p.primitive);
                    (0..count).map(move |v| match src {
                        Some(src) => encoded_matrix_bound(max_error, p.vertex(src, v).0.as_dvec3()),
                        None => 0.0,
                    })
                })
                .collect(),
            Path::Vat(_) => Vec::new(),
        };
        let pairs = match path {
            Path::Bones(b) => VertexPairs::of(b, &spans),
            Path::Vat(_) => VertexPairs::default(),
        };
        Self {
            path,
            bounds,
            pairs,
            zeros: vec![RowValues::default(); start],
            spans,
            last_rows,
            kept: Vec::new(),
            clock: 0,
        }
    }

    /// Where primitive `k`'s vertices start in a row's values, and how
    /// many are compared.
    pub(super) fn span(&self, k: usize) -> (usize, usize) {
        self.spans.get(k).copied().unwrap_or((0, 0))
    }

    /// The bone path's position bounds of primitive `k`'s compared
    /// vertices (empty for the VAT path).
    pub(super) fn bounds(&self, k: usize) -> &[f64] {
        let (start, count) = self.span(k);
        self.bounds.get(start..start + count).unwrap_or_default()
    }

    /// Computes the rows `state` reads (each active row, and its next row
    /// where it blends into it) that are not kept, evicting the rows read
    /// least recently.
    #[inline(always)]
    pub(super) fn prepare(&mut self, model: &Model, state: &GpuState) {
        self.clock += 1;
        if !state.enabled {
            return;
        }
        for s in state.active_rows() {
            let row = s[2] as u32;
            self.keep(model, row);
            if s[1] > 0.0 {
                for k in 0..self.last_rows.len() {
                    let next = row.saturating_add(1).min(self.last_rows[k]);
                    self.keep(model, next);
                }
            }
        }
    }

    #[inline(always)]
    fn keep(&mut self, model: &Model, row: u32) {
        if let Some(k) = self.kept.iter_mut().find(|k| k.row == row) {
            k.used = self.clock;
            return;
        }
        let total = self.spans.last().map_or(0, |(s, n)| s + n);
        let mut values = if self.kept.len() < KEPT {
            Vec::with_capacity(total)
        } else {
            // The least recently read row goes (never one this sample
            // reads: at most four are, fewer than KEPT).
            let k = (0..self.kept.len())
                .min_by_key(|&k| self.kept[k].used)
                .unwrap_or(0);
            let mut old = self.kept.swap_remove(k).values;
            old.clear();
            old
        };
        match self.path {
            Path::Bones(b) => bone_row(model, b, &self.spans, &self.pairs, row, &mut values),
            Path::Vat(v) => vat_row(v, &self.spans, row, &mut values),
        }
        self.kept.push(Kept {
            row,
            used: self.clock,
            values,
        });
    }

    /// The rows [`PathRows::prepare`] computed for this sample, to read.
    pub(super) fn resolved(&self) -> Resolved<'_> {
        let mut rows: [(u32, &[RowValues]); KEPT] = [(u32::MAX, &[]); KEPT];
        for (slot, k) in rows.iter_mut().zip(&self.kept) {
            *slot = (k.row, &k.values);
        }
        Resolved {
            rows,
            len: self.kept.len(),
            zeros: &self.zeros,
        }
    }
}

/// The kept rows of a path, borrowed for one sample.
pub(super) struct Resolved<'r> {
    rows: [(u32, &'r [RowValues]); KEPT],
    len: usize,
    zeros: &'r [RowValues],
}

impl<'r> Resolved<'r> {
    /// Every vertex's values at `row` (zeros if the row was not prepared:
    /// never), from the vertex at `from` (a span's start plus a vertex).
    pub(super) fn row(&self, row: u32, from: usize) -> &'r [RowValues] {
        let values = self.rows[..self.len]
            .iter()
            .find(|(r, _)| *r == row)
            .map_or(self.zeros, |(_, v)| *v);
        values.get(from..).unwrap_or_default()
    }
}

/// Every compared vertex of the bone path skinned at `row`, appended to
/// `out`: each bone set's matrices at the row fetched once (the texels
/// `bone_matrix` reads, so the same blend).
#[inline(always)]
fn bone_row(
    model: &Model,
    bones: &BonePlayback,
    spans: &[(usize, usize)],
    pairs: &VertexPairs,
    row: u32,
    out: &mut Vec<RowValues>,
) {
    let mut palettes: Vec<Option<Vec<Rows3x4>>> = vec![None; bones.textures.len()];
    let mut block = SkinBlock::boxed();
    for (prim, &(first, count)) in bones.primitives.iter().zip(spans) {
        let (Some(src), Some(texture)) = (
            source_primitive(model, prim.node, prim.primitive),
            bones.textures.get(prim.set),
        ) else {
            // Nothing to play (the load checks the sets; never reached).
            out.extend(std::iter::repeat_n(RowValues::default(), count));
            continue;
        };
        let view = texture.view();
        let palette = palettes[prim.set].get_or_insert_with(|| {
            let joints = view.width.div_ceil(view.layout.pixels_per_joint() as u32);
            (0..joints).map(|j| view.bone_matrix(j, row)).collect()
        });
        // `skin` a block at a time: the blend and the position per
        // vertex, the normals over the block's columns.
        for start in (0..count).step_by(SKIN_BLOCK) {
            let len = SKIN_BLOCK.min(count - start);
            let b = &mut *block;
            for i in 0..len {
                let v = start + i;
                let (position, normal) = prim.vertex(src, v);
                // A small closure, inlined into the instruction-set copy;
                // a bone past the palette (never) reads the texture.
                let m = blend_pairs(pairs.vertex(first + v), |bone| {
                    match palette.get(bone as usize) {
                        Some(m) => *m,
                        None => past_palette(&view, bone, row),
                    }
                });
                b.positions[i] = transform_point(&m, position);
                for (r, row) in m.iter().enumerate() {
                    for c in 0..3 {
                        b.upper[3 * r + c][i] = row[c];
                    }
                }
                let n = normal.unwrap_or(Vec3::ZERO);
                for c in 0..3 {
                    b.normals[c][i] = n[c];
                }
                b.has_normal[i] = normal.is_some();
            }
            cofactor_normals_columns(&b.upper, &b.normals, len, &mut b.unit);
            for i in 0..len {
                let n = Vec3::new(b.unit[0][i], b.unit[1][i], b.unit[2][i]);
                out.push((b.positions[i], if b.has_normal[i] { n } else { Vec3::ZERO }));
            }
        }
    }
}

/// The matrix of a bone past a row's palette, read from the texture (out
/// of line: never reached for the bones a texture holds).
#[cold]
#[inline(never)]
fn past_palette(view: &BoneTextureView<'_>, bone: u32, row: u32) -> Rows3x4 {
    view.bone_matrix(bone, row)
}

/// Vertices [`bone_row`] skins at a time.
const SKIN_BLOCK: usize = 64;

/// [`bone_row`]'s scratch: a block's positions, the upper 3x3 of each
/// blended matrix and each normal in columns, and the unit normals.
struct SkinBlock {
    positions: [Vec3; SKIN_BLOCK],
    upper: [[f32; SKIN_BLOCK]; 9],
    normals: [[f32; SKIN_BLOCK]; 3],
    has_normal: [bool; SKIN_BLOCK],
    unit: [[f32; SKIN_BLOCK]; 3],
}

impl SkinBlock {
    fn boxed() -> Box<Self> {
        Box::new(Self {
            positions: [Vec3::ZERO; SKIN_BLOCK],
            upper: [[0.0; SKIN_BLOCK]; 9],
            normals: [[0.0; SKIN_BLOCK]; 3],
            has_normal: [false; SKIN_BLOCK],
            unit: [[0.0; SKIN_BLOCK]; 3],
        })
    }
}

/// Every vertex of the VAT path at `row`, appended to `out`: the texels
/// [`vat_path::row_values`] reads, walked along the row a run of texels
/// at a time.
#[inline(always)]
fn vat_row(vat: &VatPlayback, spans: &[(usize, usize)], row: u32, out: &mut Vec<RowValues>) {
    for (prim, &(_, count)) in vat.primitives.iter().zip(spans) {
        let positions = prim.positions.views();
        let normals = prim.normals.as_ref().map(|n| n.views());
        prim.address.for_each_run(count as u32, row, |_, texel, n| {
            vat_path::run_values(&positions, normals.as_deref(), texel, n, out);
        });
    }
}
