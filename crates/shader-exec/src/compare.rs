//! Runs one path of one model on the GPU and through the CPU reference
//! (`rigbake_core::runtime`) with the same texels, vertices and states, and
//! measures the differences against stated tolerances.
//!
//! **Tolerances.** Both sides compute in `f32` with the same formulas; they
//! differ only in rounding: operation order, fused multiply-adds (allowed
//! in SPIR-V), and the driver's division, square root and unorm-to-float
//! conversion (Vulkan allows a few ulps). Every value a path sums is bounded
//! by the path's *scale* `S`:
//!
//! - bone path: `S = 3 * max|linear entry| * max|bind coordinate| +
//!   max|translation|` over the texture and the primitive, which bounds
//!   every term of `M * p` (blend weights are convex);
//! - VAT path: `S = max|decoded value|` of the positions texture (for PNG16,
//!   the larger bound), which bounds every term of the lerps and the blend.
//!
//! The longest chain of roundings is about 40 operations on either side
//! (up to 8 weighted matrix sums, a 4-term dot product, a lerp and a 4-row
//! blend), each off by at most half an ulp of a value no larger than `S`,
//! so positions may differ by `POSITION_ULPS * f32::EPSILON * S`
//! ([`POSITION_ULPS`] = 64, about 1.5x that worst case).
//!
//! Normals are unit vectors, normalised per row and once more after the
//! blend; that last normalisation divides the rounding error by the length
//! of the blended normal, which is short when the rows' normals point far
//! apart. The tolerance is therefore `NORMAL_ULPS * f32::EPSILON * A` on
//! the distance between the unit vectors, where
//! `A = 1 / |sum_k w_k lerp(n(r_k), n(r_k + 1), f_k)|` is computed per
//! vertex from the CPU reference's normals at each row's two frames
//! ([`NORMAL_ULPS`] = 64 covers the cofactor products, the two
//! normalisations and the octahedral decode).

use glam::Vec3;
use half::f16;
use rigbake_core::fold::Fold;
use rigbake_core::layout::MatrixLayout;
use rigbake_core::runtime::bone_path::{self, BoneTextureView};
use rigbake_core::runtime::vat_path::{self, VatAddress};
use rigbake_core::runtime::{GpuState, RuntimeVertex};

use crate::bakes::{self, Loaded, VatShape};
use crate::encode::{Encoded, VatEncoding, encode};
use crate::gpu::Gpu;
use crate::kernel::{Entry, GpuVertex, Kernels, Texels, TextureData, Textures, VertexInput};
use crate::states::{self, Case};
use crate::uniforms::{ParamValues, StreamDecode};

/// Position tolerance in units of `f32::EPSILON * S` (see the module docs).
pub const POSITION_ULPS: f32 = 64.0;

/// Normal tolerance in units of `f32::EPSILON * A` (see the module docs).
pub const NORMAL_ULPS: f32 = 64.0;

/// Largest normal amplification `A` used (a blended normal shorter than
/// `1 / MAX_AMPLIFICATION` is all rounding noise on both sides).
pub const MAX_AMPLIFICATION: f32 = 1e4;

/// How a bone texture is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BonePrecision {
    /// `rgba32float`.
    F32,
    /// `rgba16float` (the CPU reads the same halves widened).
    F16,
    /// `rgba16unorm`, `qts` only: the 16-bit normalised form over the
    /// texture's range (`--precision unorm16`; the CPU reads `q / 65535`).
    Unorm16,
}

/// The measured differences of one path of one model.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Vertices compared (all primitives, all states).
    pub vertices: usize,
    /// Of these, vertices whose normals were compared.
    pub normals: usize,
    /// Largest position difference, model units.
    pub max_position: f32,
    /// The same in units of `f32::EPSILON * S`.
    pub max_position_ulps: f32,
    /// Largest normal difference (distance of unit vectors).
    pub max_normal: f32,
    /// The same in units of `f32::EPSILON * A`.
    pub max_normal_ulps: f32,
    /// Vertices whose position is off by more than the tolerance.
    pub position_failures: usize,
    /// Vertices whose normal is off by more than the tolerance.
    pub normal_failures: usize,
    /// The first few failures, described.
    pub failures: Vec<String>,
    /// Most active rows in one state, and whether a row had a fraction.
    pub coverage: (usize, bool),
    /// Most texture rows per frame of a primitive (VAT path; 0 otherwise).
    pub max_bands: u32,
    /// Largest first vertex of a VAT primitive in its texture set (atlas).
    pub max_first_vertex: u32,
    /// Most pages of a folded VAT (0: none folded).
    pub max_pages: u32,
    /// Most column blocks side by side on a folded VAT page.
    pub max_blocks_per_page: u32,
}

impl Stats {
    fn record(
        &mut self,
        what: &str,
        position: f32,
        scale: f32,
        normal: Option<f32>,
        amplification: f32,
    ) {
        self.vertices += 1;
        self.normals += usize::from(normal.is_some());
        let normal = normal.unwrap_or(0.0);
        let eps = f32::EPSILON;
        let p_ulps = if scale > 0.0 {
            position / (eps * scale)
        } else {
            0.0
        };
        let n_ulps = normal / (eps * amplification);
        self.max_position = self.max_position.max(position);
        self.max_position_ulps = self.max_position_ulps.max(p_ulps);
        self.max_normal = self.max_normal.max(normal);
        self.max_normal_ulps = self.max_normal_ulps.max(n_ulps);
        let bad_position = !within(position, POSITION_ULPS * eps * scale);
        let bad_normal = !within(n_ulps, NORMAL_ULPS);
        self.position_failures += usize::from(bad_position);
        self.normal_failures += usize::from(bad_normal);
        if (bad_position || bad_normal) && self.failures.len() < 8 {
            self.failures.push(format!(
                "{what}: position off by {position:e} ({p_ulps:.1} ulps of S = {scale:e}), \
                 normal off by {normal:e} ({n_ulps:.1} ulps of A = {amplification})"
            ));
        }
    }
}

/// `value <= limit`, false for NaN (a NaN from the GPU is a failure).
fn within(value: f32, limit: f32) -> bool {
    matches!(
        value.partial_cmp(&limit),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    )
}

/// The distance between the unit normals, when the CPU has one.
fn normal_error(cpu: &RuntimeVertex, gpu: &GpuVertex) -> Option<f32> {
    cpu.normal.map(|n| n.distance(gpu.normal))
}

/// `1 / |sum_k w_k lerp(n(r_k), n(r_k + 1), f_k)|`, the factor by which the
/// final normalisation enlarges rounding errors, from `frame_normal(r)`
/// (the reference's unit normal at texture row `r` alone; rows past
/// `last_row` clamp as the shaders clamp them); clamped to
/// [`MAX_AMPLIFICATION`], and 1 when there are no normals.
fn amplification(
    state: &GpuState,
    last_row: u32,
    mut frame_normal: impl FnMut(GpuState) -> Option<Vec3>,
) -> f32 {
    if !state.enabled {
        return 1.0;
    }
    let mut at_row = |row: u32| {
        let mut one = GpuState::DISABLED;
        one.enabled = true;
        one.rows[0] = [1.0, 0.0, row as f32, 0.0];
        frame_normal(one)
    };
    let mut sum = Vec3::ZERO;
    for r in state.active_rows() {
        let (weight, fraction, row) = (r[0], r[1], r[2] as u32);
        let Some(n0) = at_row(row) else {
            return 1.0;
        };
        let n1 = if fraction > 0.0 {
            at_row(row.saturating_add(1).min(last_row)).unwrap_or(n0)
        } else {
            n0
        };
        sum += (n0 + (n1 - n0) * fraction) * weight;
    }
    (1.0 / sum.length()).clamp(1.0, MAX_AMPLIFICATION)
}

/// The states for a texture of `rows` rows, and their coverage.
fn cases(loaded: &Loaded, rows: u32) -> (Vec<Case>, Vec<GpuState>) {
    let cases = states::schedule(&loaded.clips(), rows);
    let gpu_states = cases.iter().map(|c| c.state).collect();
    (cases, gpu_states)
}

/// The bone-matrix path of every skinned primitive of `loaded`.
pub fn bone_path(
    gpu: &Gpu,
    kernels: &Kernels,
    loaded: &Loaded,
    layout: MatrixLayout,
    precision: BonePrecision,
    max_influences: usize,
) -> Result<Stats, String> {
    let bake = bakes::bone_bake(loaded, layout, max_influences)?;
    bone_path_of(gpu, kernels, loaded, &bake, precision)
}

/// [`bone_path()`] with textures within `max_texture_size` texels per side,
/// so that long timelines fold their rows into column blocks.
pub fn bone_path_within(
    gpu: &Gpu,
    kernels: &Kernels,
    loaded: &Loaded,
    layout: MatrixLayout,
    max_influences: usize,
    max_texture_size: usize,
) -> Result<(Stats, Vec<rigbake_core::fold::Fold>), String> {
    let bake = bakes::bone_bake_within(loaded, layout, max_influences, max_texture_size)?;
    let folds = bake.textures.iter().map(|t| t.fold).collect();
    Ok((
        bone_path_of(gpu, kernels, loaded, &bake, BonePrecision::F32)?,
        folds,
    ))
}

fn bone_path_of(
    gpu: &Gpu,
    kernels: &Kernels,
    loaded: &Loaded,
    bake: &bakes::BoneBake,
    precision: BonePrecision,
) -> Result<Stats, String> {
    let mut stats = Stats::default();
    for p in &bake.primitives {
        let exact = &bake.textures[p.texture];
        let layout = exact.layout;
        let mut unorm = exact.clone();
        if precision == BonePrecision::Unorm16 {
            let joints = (exact.fold.block_width as usize) / layout.pixels_per_joint();
            unorm.to_unorm16(joints, loaded.timeline.rows);
        }
        let tex = if unorm.range.is_some() { &unorm } else { exact };
        let halves: Vec<f16> = match precision {
            BonePrecision::F16 => tex.data.iter().map(|&v| f16::from_f32(v)).collect(),
            _ => Vec::new(),
        };
        let samples: Vec<u16> = match precision {
            BonePrecision::Unorm16 => tex
                .data
                .iter()
                .map(|&v| (v * 65535.0).round() as u16)
                .collect(),
            _ => Vec::new(),
        };
        let cpu_texels: Vec<f32> = match precision {
            BonePrecision::F16 => halves.iter().map(|h| h.to_f32()).collect(),
            BonePrecision::F32 | BonePrecision::Unorm16 => tex.data.clone(),
        };
        let view = BoneTextureView {
            width: tex.width as u32,
            height: tex.height as u32,
            rows: loaded.timeline.rows as u32,
            fold: tex.fold,
            layout,
            texels: &cpu_texels,
            range: tex.range,
        };
        let scale = bone_scale(&exact.data, layout, &p.positions);
        let (cases, gpu_states) = cases(loaded, view.height);
        stats.coverage = states::coverage(&cases);
        let texels = match precision {
            BonePrecision::F16 => Texels::F16(&halves),
            BonePrecision::F32 => Texels::F32(&tex.data),
            BonePrecision::Unorm16 => Texels::Unorm16(&samples),
        };
        let range = tex.range.unwrap_or_default();
        let params = ParamValues {
            vat_positions: StreamDecode::FLOAT,
            vat_normals: StreamDecode::FLOAT,
            bone_layout: match layout {
                MatrixLayout::Mat4 => 0,
                MatrixLayout::Mat3x4 => 1,
                MatrixLayout::Qts if tex.range.is_some() => 3,
                MatrixLayout::Qts => 2,
            },
            bone_range: range,
            bone_height: view.rows,
            channels: bake.channels as u32,
            bone_rows_per_block: view.fold.rows_per_block,
            bone_block_width: view.fold.block_width,
            vat: [1, 1, 1, 0, 0, 1],
        };
        let textures = Textures {
            bones: Some(TextureData {
                width: view.width,
                height: view.height,
                layers: 1,
                texels,
            }),
            ..Textures::default()
        };
        let input = VertexInput {
            positions: &p.positions,
            normals: p.normals.as_deref(),
            channels: &p.channels,
        };
        let got = kernels
            .run(gpu, Entry::Bones, &textures, &params, &input, &gpu_states)
            .map_err(|e| format!("{} {}: {e}", loaded.name, p.name))?;
        let ch = bake.channels;
        for (case, gpu_vertices) in cases.iter().zip(&got) {
            for (v, g) in gpu_vertices.iter().enumerate() {
                let channels = &p.channels[v * ch..(v + 1) * ch];
                let position = Vec3::from(p.positions[v]);
                let normal = p.normals.as_ref().map(|n| Vec3::from(n[v]));
                let deform =
                    |s: &GpuState| bone_path::deform_vertex(&view, s, channels, position, normal);
                let cpu = deform(&case.state);
                let a = amplification(&case.state, view.height.saturating_sub(1), |one| {
                    deform(&one).normal
                });
                stats.record(
                    &format!("{} {} vertex {v}, {}", loaded.name, p.name, case.label),
                    cpu.position.distance(g.position),
                    scale,
                    normal_error(&cpu, g),
                    a,
                );
            }
        }
    }
    Ok(stats)
}

/// The bone path's scale `S` (see the module docs).
fn bone_scale(texels: &[f32], layout: MatrixLayout, positions: &[[f32; 3]]) -> f32 {
    let (mut linear, mut translation) = (0.0f32, 0.0f32);
    let ppj = layout.pixels_per_joint();
    for (i, t) in texels.chunks_exact(4).enumerate() {
        let c = i % ppj;
        match layout {
            // Columns: 0..2 linear, 3 translation (w row ignored).
            MatrixLayout::Mat4 if c == 3 => {
                translation = translation.max(t[..3].iter().fold(0.0, |m, v| m.max(v.abs())));
            }
            MatrixLayout::Mat4 => {
                linear = linear.max(t[..3].iter().fold(0.0, |m, v| m.max(v.abs())))
            }
            // Rows: xyz linear, w translation.
            MatrixLayout::Mat3x4 => {
                linear = linear.max(t[..3].iter().fold(0.0, |m, v| m.max(v.abs())));
                translation = translation.max(t[3].abs());
            }
            // Quaternion (unit: entries of R at most 1), then translation
            // and the scale that multiplies R.
            MatrixLayout::Qts if c == 0 => {}
            MatrixLayout::Qts => {
                translation = translation.max(t[..3].iter().fold(0.0, |m, v| m.max(v.abs())));
                linear = linear.max(t[3].abs());
            }
        }
    }
    let coordinate = positions
        .iter()
        .flatten()
        .fold(0.0f32, |m, v| m.max(v.abs()));
    3.0 * linear * coordinate + translation
}

/// The VAT path of every baked primitive of `loaded`.
pub fn vat_path(
    gpu: &Gpu,
    kernels: &Kernels,
    loaded: &Loaded,
    encoding: VatEncoding,
    shape: VatShape,
) -> Result<Stats, String> {
    vat_path_folded(gpu, kernels, loaded, encoding, shape, None)
}

/// [`vat_path()`], with every primitive's textures folded (column blocks and
/// pages, formats/vat.md "Folding") to fit `fold_max` texels a side when
/// given: the textures are uploaded as arrays of pages, and the shader's
/// folded addressing is compared with the CPU reference's.
pub fn vat_path_folded(
    gpu: &Gpu,
    kernels: &Kernels,
    loaded: &Loaded,
    encoding: VatEncoding,
    shape: VatShape,
    fold_max: Option<u32>,
) -> Result<Stats, String> {
    let primitives = bakes::vat_bake(loaded, shape)?;
    let mut stats = Stats::default();
    for p in &primitives {
        stats.max_bands = stats.max_bands.max(p.bands);
        stats.max_first_vertex = stats.max_first_vertex.max(p.first_vertex);
        let fold = match fold_max {
            Some(max) => Some(
                Fold::plan(
                    u64::from(p.width),
                    u64::from(p.bands),
                    u64::from(p.frames),
                    u64::from(max),
                    true,
                )
                .map_err(|e| format!("{} {}: no fold within {max}: {e:?}", loaded.name, p.name))?,
            ),
            None => None,
        };
        let unfolded = match (encoding, &p.normals) {
            (VatEncoding::Png16Packed, Some(n)) => {
                let (positions, normals) = crate::encode::encode_packed(p, &p.positions, n);
                (positions, Some(normals))
            }
            _ => (
                encode(p, &p.positions, encoding, false),
                p.normals.as_ref().map(|n| encode(p, n, encoding, true)),
            ),
        };
        let (positions, normals) = match &fold {
            Some(f) => (
                unfolded.0.folded(p, f),
                unfolded.1.as_ref().map(|n| n.folded(p, f)),
            ),
            None => unfolded,
        };
        let (page_w, page_h, pages) = match &fold {
            Some(f) => (f.width(), f.height(), f.pages),
            None => (p.width, p.height, 1),
        };
        if let Some(f) = &fold {
            stats.max_pages = stats.max_pages.max(f.pages);
            stats.max_blocks_per_page = stats.max_blocks_per_page.max(f.blocks_per_page);
        }
        let (rows_per_block, blocks_per_page) =
            fold.map_or((0, 1), |f| (f.rows_per_block, f.blocks_per_page));
        let address = VatAddress {
            width: p.width,
            bands: p.bands,
            frames: p.frames,
            first_vertex: p.first_vertex,
            rows_per_block,
            blocks_per_page,
        };
        let (cases, gpu_states) = cases(loaded, p.frames);
        stats.coverage = states::coverage(&cases);
        fn data(e: &Encoded, (width, height, layers): (u32, u32, u32)) -> TextureData<'_> {
            TextureData {
                width,
                height,
                layers,
                texels: e.texels(),
            }
        }
        let size = (page_w, page_h, pages);
        let textures = Textures {
            bones: None,
            vat_positions: Some(data(&positions, size)),
            vat_normals: normals.as_ref().map(|n| data(n, size)),
        };
        let params = ParamValues {
            vat_positions: positions.decode,
            vat_normals: normals.as_ref().map_or(StreamDecode::FLOAT, |n| n.decode),
            bone_layout: 0,
            bone_range: [[0.0; 4]; 2],
            bone_height: 1,
            channels: 0,
            bone_rows_per_block: 1,
            bone_block_width: 1,
            vat: [
                p.width,
                p.bands,
                p.frames,
                p.first_vertex,
                rows_per_block,
                blocks_per_page,
            ],
        };
        let input = VertexInput {
            positions: &p.rest_positions,
            normals: p.rest_normals.as_deref(),
            channels: &[],
        };
        let got = kernels
            .run(gpu, Entry::Vat, &textures, &params, &input, &gpu_states)
            .map_err(|e| format!("{} {}: {e}", loaded.name, p.name))?;
        let pos_view = positions.page_views(page_w, page_h, pages);
        let nrm_view = normals
            .as_ref()
            .map(|n| n.page_views(page_w, page_h, pages));
        for (case, gpu_vertices) in cases.iter().zip(&got) {
            for (v, g) in gpu_vertices.iter().enumerate() {
                let rest = Vec3::from(p.rest_positions[v]);
                let rest_n = p.rest_normals.as_ref().map(|n| Vec3::from(n[v]));
                let deform = |s: &GpuState| {
                    vat_path::deform_vertex(
                        &address,
                        &pos_view,
                        nrm_view.as_deref(),
                        s,
                        v as u32,
                        rest,
                        rest_n,
                    )
                };
                let cpu = deform(&case.state);
                let a = amplification(&case.state, p.frames.saturating_sub(1), |one| {
                    deform(&one).normal
                });
                stats.record(
                    &format!("{} {} vertex {v}, {}", loaded.name, p.name, case.label),
                    cpu.position.distance(g.position),
                    positions.scale,
                    normal_error(&cpu, g),
                    a,
                );
            }
        }
    }
    Ok(stats)
}
