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
//! the distance between the unit vectors, where `A = 1 / |sum_k w_k n_k|`
//! is computed per vertex from the CPU reference's normals at each row's
//! two frames
//! ([`NORMAL_ULPS`] = 64 covers the cofactor products, the two
//! normalisations and the octahedral decode).

use glam::Vec3;
use half::f16;
use rigbake_core::bake::MatrixLayout;
use rigbake_core::runtime::bone_path::{self, BoneTextureView};
use rigbake_core::runtime::vat_path::{self, VatAddress, VatDecode, VatSamples, VatTextureView};
use rigbake_core::runtime::{GpuState, RuntimeVertex};
use rigbake_format::texture::quantize::{octahedral_encode, to_unorm16};

use crate::bakes::{self, Loaded, VatShape};
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
}

/// How VAT textures are stored (the CLI's `--vat-encoding` and
/// `--direction-encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VatEncoding {
    /// EXR, 32-bit floats.
    Exr32,
    /// EXR, half floats.
    Exr16,
    /// PNG16: positions to bounds, normals octahedral.
    Png16Octahedral,
    /// PNG16: positions and normals to bounds.
    Png16Bounds,
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
    let mut stats = Stats::default();
    for p in &bake.primitives {
        let tex = &bake.textures[p.texture];
        let halves: Vec<f16> = match precision {
            BonePrecision::F16 => tex.data.iter().map(|&v| f16::from_f32(v)).collect(),
            BonePrecision::F32 => Vec::new(),
        };
        let cpu_texels: Vec<f32> = match precision {
            BonePrecision::F16 => halves.iter().map(|h| h.to_f32()).collect(),
            BonePrecision::F32 => tex.data.clone(),
        };
        let view = BoneTextureView {
            width: tex.width as u32,
            height: tex.height as u32,
            layout,
            texels: &cpu_texels,
        };
        let scale = bone_scale(&cpu_texels, layout, &p.positions);
        let (cases, gpu_states) = cases(loaded, view.height);
        stats.coverage = states::coverage(&cases);
        let texels = match precision {
            BonePrecision::F16 => Texels::F16(&halves),
            BonePrecision::F32 => Texels::F32(&tex.data),
        };
        let params = ParamValues {
            vat_positions: StreamDecode::FLOAT,
            vat_normals: StreamDecode::FLOAT,
            bone_layout: match layout {
                MatrixLayout::Mat4 => 0,
                MatrixLayout::Mat3x4 => 1,
            },
            bone_height: view.height,
            channels: bake.channels as u32,
            vat: [1, 1, 1],
        };
        let textures = Textures {
            bones: Some(TextureData {
                width: view.width,
                height: view.height,
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
        }
    }
    let coordinate = positions
        .iter()
        .flatten()
        .fold(0.0f32, |m, v| m.max(v.abs()));
    3.0 * linear * coordinate + translation
}

/// A VAT texture as uploaded and as the CPU reference reads it.
struct Encoded {
    gpu_f32: Vec<f32>,
    gpu_f16: Vec<f16>,
    gpu_q: Vec<u16>,
    cpu_f32: Vec<f32>,
    decode: StreamDecode,
    /// Largest absolute decoded value.
    scale: f32,
}

impl Encoded {
    fn texels(&self) -> Texels<'_> {
        if !self.gpu_q.is_empty() {
            Texels::Unorm16(&self.gpu_q)
        } else if !self.gpu_f16.is_empty() {
            Texels::F16(&self.gpu_f16)
        } else {
            Texels::F32(&self.gpu_f32)
        }
    }

    fn view(&self, p: &bakes::VatPrimitive) -> VatTextureView<'_> {
        let samples = if self.gpu_q.is_empty() {
            VatSamples::Float(&self.cpu_f32)
        } else {
            VatSamples::Unorm16(&self.gpu_q)
        };
        let decode = match self.decode.encoding {
            1 => VatDecode::Bounds {
                min: self.decode.min,
                max: self.decode.max,
            },
            2 => VatDecode::Octahedral,
            _ => VatDecode::Float,
        };
        VatTextureView {
            width: p.width,
            height: p.height,
            channels: 4,
            samples,
            decode,
        }
    }
}

/// Per-channel bounds of the real texels (vertices of real frames) of `data`.
fn bounds(p: &bakes::VatPrimitive, data: &[f32]) -> ([f32; 4], [f32; 4]) {
    let address = VatAddress {
        width: p.width,
        bands: p.bands,
        frames: p.frames,
    };
    let (mut lo, mut hi) = ([f32::INFINITY; 4], [f32::NEG_INFINITY; 4]);
    for row in 0..p.frames {
        for v in 0..p.vertices {
            let (x, y) = address.texel(v, row);
            let at = ((y * p.width + x) * 4) as usize;
            for c in 0..3 {
                lo[c] = lo[c].min(data[at + c]);
                hi[c] = hi[c].max(data[at + c]);
            }
        }
    }
    for c in 0..4 {
        if lo[c] > hi[c] || c == 3 {
            (lo[c], hi[c]) = (0.0, 0.0);
        }
    }
    (lo, hi)
}

/// Encodes one stream's `f32` texels as `encoding` stores them (the format
/// crate's own quantisers for PNG16).
fn encode(
    p: &bakes::VatPrimitive,
    data: &[f32],
    encoding: VatEncoding,
    direction: bool,
) -> Encoded {
    let max_abs = |d: &[f32]| d.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    match encoding {
        VatEncoding::Exr32 => Encoded {
            gpu_f32: data.to_vec(),
            gpu_f16: Vec::new(),
            gpu_q: Vec::new(),
            cpu_f32: data.to_vec(),
            decode: StreamDecode::FLOAT,
            scale: max_abs(data),
        },
        VatEncoding::Exr16 => {
            let halves: Vec<f16> = data.iter().map(|&v| f16::from_f32(v)).collect();
            let cpu: Vec<f32> = halves.iter().map(|h| h.to_f32()).collect();
            Encoded {
                scale: max_abs(&cpu),
                gpu_f32: Vec::new(),
                gpu_f16: halves,
                gpu_q: Vec::new(),
                cpu_f32: cpu,
                decode: StreamDecode::FLOAT,
            }
        }
        VatEncoding::Png16Octahedral if direction => {
            let mut q = vec![0u16; data.len()];
            for (t, out) in data.chunks_exact(4).zip(q.chunks_exact_mut(4)) {
                let e = octahedral_encode([t[0], t[1], t[2]]);
                out[0] = to_unorm16(e[0], -1.0, 1.0);
                out[1] = to_unorm16(e[1], -1.0, 1.0);
            }
            Encoded {
                gpu_f32: Vec::new(),
                gpu_f16: Vec::new(),
                gpu_q: q,
                cpu_f32: Vec::new(),
                decode: StreamDecode {
                    encoding: 2,
                    min: [0.0; 4],
                    max: [0.0; 4],
                },
                scale: 1.0,
            }
        }
        VatEncoding::Png16Octahedral | VatEncoding::Png16Bounds => {
            let (min, max) = bounds(p, data);
            let mut q = vec![0u16; data.len()];
            for (t, out) in data.chunks_exact(4).zip(q.chunks_exact_mut(4)) {
                for c in 0..4 {
                    out[c] = to_unorm16(t[c], min[c], max[c]);
                }
            }
            let scale = min.iter().chain(&max).fold(0.0f32, |m, v| m.max(v.abs()));
            Encoded {
                gpu_f32: Vec::new(),
                gpu_f16: Vec::new(),
                gpu_q: q,
                cpu_f32: Vec::new(),
                decode: StreamDecode {
                    encoding: 1,
                    min,
                    max,
                },
                scale,
            }
        }
    }
}

/// The VAT path of every baked primitive of `loaded`.
pub fn vat_path(
    gpu: &Gpu,
    kernels: &Kernels,
    loaded: &Loaded,
    encoding: VatEncoding,
    shape: VatShape,
) -> Result<Stats, String> {
    let primitives = bakes::vat_bake(loaded, shape)?;
    let mut stats = Stats::default();
    for p in &primitives {
        stats.max_bands = stats.max_bands.max(p.bands);
        let positions = encode(p, &p.positions, encoding, false);
        let normals = p.normals.as_ref().map(|n| encode(p, n, encoding, true));
        let address = VatAddress {
            width: p.width,
            bands: p.bands,
            frames: p.frames,
        };
        let (cases, gpu_states) = cases(loaded, p.frames);
        stats.coverage = states::coverage(&cases);
        fn data<'a>(p: &bakes::VatPrimitive, e: &'a Encoded) -> TextureData<'a> {
            TextureData {
                width: p.width,
                height: p.height,
                texels: e.texels(),
            }
        }
        let textures = Textures {
            bones: None,
            vat_positions: Some(data(p, &positions)),
            vat_normals: normals.as_ref().map(|n| data(p, n)),
        };
        let params = ParamValues {
            vat_positions: positions.decode,
            vat_normals: normals.as_ref().map_or(StreamDecode::FLOAT, |n| n.decode),
            bone_layout: 0,
            bone_height: 1,
            channels: 0,
            vat: [p.width, p.bands, p.frames],
        };
        let input = VertexInput {
            positions: &p.rest_positions,
            normals: p.rest_normals.as_deref(),
            channels: &[],
        };
        let got = kernels
            .run(gpu, Entry::Vat, &textures, &params, &input, &gpu_states)
            .map_err(|e| format!("{} {}: {e}", loaded.name, p.name))?;
        let pos_view = positions.view(p);
        let nrm_view = normals.as_ref().map(|n| n.view(p));
        for (case, gpu_vertices) in cases.iter().zip(&got) {
            for (v, g) in gpu_vertices.iter().enumerate() {
                let rest = Vec3::from(p.rest_positions[v]);
                let rest_n = p.rest_normals.as_ref().map(|n| Vec3::from(n[v]));
                let deform = |s: &GpuState| {
                    vat_path::deform_vertex(
                        &address,
                        &pos_view,
                        nrm_view.as_ref(),
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

/// A point drawing with a shipped vertex entry point against the same
/// points placed on the CPU from the reference's vertices: per pixel, the
/// nearest point's depth, or nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RenderCheck {
    /// Pixels covered in the GPU's image.
    pub covered: usize,
    /// Pixels covered in either image, except those a point within
    /// rounding of a pixel edge might reach.
    pub union: usize,
    /// Of these, pixels where both are covered with depths within
    /// [`DEPTH_TOLERANCE`].
    pub agreeing: usize,
    /// The same count for the undeformed input placed on the CPU (shows
    /// that the check tells poses apart).
    pub undeformed_agreeing: usize,
}

/// Depths agree within this (depth spans `[0.1, 0.9]` over the model's
/// depth): far above f32 rounding of the placement (about 1e-7), far
/// below what a pose changes.
pub const DEPTH_TOLERANCE: f32 = 1e-5;

/// Fits the box of `points` into clip space: x and y to `[-0.9, 0.9]` (one
/// scale, aspect kept, shifted by an odd fraction of a pixel so that
/// vertices on the model's symmetry planes do not sit on pixel edges), z
/// to depths `[0.1, 0.9]`.
fn fit(points: &[Vec3]) -> glam::Mat4 {
    let lo = points.iter().fold(Vec3::INFINITY, |a, p| a.min(*p));
    let hi = points.iter().fold(Vec3::NEG_INFINITY, |a, p| a.max(*p));
    let extent = (hi - lo).max(Vec3::splat(1e-6));
    let s = 1.8 / extent.x.max(extent.y);
    let centre = (lo + hi) * 0.5;
    let shift = 2.0 / crate::render::SIZE as f32;
    glam::Mat4::from_translation(glam::Vec3::new(0.37 * shift, 0.29 * shift, 0.1))
        * glam::Mat4::from_scale(glam::Vec3::new(s, s, 0.8 / extent.z))
        * glam::Mat4::from_translation(-glam::Vec3::new(centre.x, centre.y, lo.z))
}

/// Points closer than this (in pixels) to a pixel edge may land on either
/// side: rasterisers snap vertex positions to a sub-pixel grid (1/256
/// pixel in lavapipe) before choosing the pixel.
const EDGE_MARGIN: f32 = 1.0 / 64.0;

/// Points placed by `m` on the CPU: the nearest depth per pixel (1.0 where
/// none lands), and which pixels a point near an edge might also reach
/// (WebGPU's viewport: NDC y up, pixel rows down; a point lands in the
/// pixel that contains it).
fn cpu_points(m: &glam::Mat4, points: impl Iterator<Item = Vec3>) -> (Vec<f32>, Vec<bool>) {
    let size = crate::render::SIZE as i64;
    let mut depths = vec![1.0f32; (size * size) as usize];
    let mut ambiguous = vec![false; depths.len()];
    let mut touched = Vec::new();
    for p in points {
        let c = m.project_point3(p);
        let fx = (c.x + 1.0) * 0.5 * size as f32;
        let fy = (1.0 - c.y) * 0.5 * size as f32;
        let (x, y) = (fx.floor() as i64, fy.floor() as i64);
        let near = |f: f32| {
            let r = f - f.floor();
            if r < EDGE_MARGIN {
                -1
            } else if r > 1.0 - EDGE_MARGIN {
                1
            } else {
                0
            }
        };
        let (nx, ny) = (near(fx), near(fy));
        touched.clear();
        touched.push((x, y));
        if nx != 0 {
            touched.push((x + nx, y));
        }
        if ny != 0 {
            touched.push((x, y + ny));
        }
        if nx != 0 && ny != 0 {
            touched.push((x + nx, y + ny));
        }
        let edge = touched.len() > 1;
        for &(tx, ty) in &touched {
            if (0..size).contains(&tx) && (0..size).contains(&ty) {
                let at = (ty * size + tx) as usize;
                ambiguous[at] |= edge;
                if (tx, ty) == (x, y) {
                    depths[at] = depths[at].min(c.z);
                }
            }
        }
    }
    (depths, ambiguous)
}

/// (pixels covered in either and not ambiguous, of these the pixels where
/// both are covered with depths within [`DEPTH_TOLERANCE`]).
fn agreement(image: &[f32], (expected, ambiguous): &(Vec<f32>, Vec<bool>)) -> (usize, usize) {
    let mut union = 0;
    let mut agreeing = 0;
    for ((x, y), skip) in image.iter().zip(expected).zip(ambiguous) {
        if (*x < 1.0 || *y < 1.0) && !skip {
            union += 1;
            if *x < 1.0 && *y < 1.0 && (x - y).abs() <= DEPTH_TOLERANCE {
                agreeing += 1;
            }
        }
    }
    (union, agreeing)
}

/// Draws the first skinned primitive of `loaded` with `bone_vertex` in the
/// state `case` (f32 `mat4` texture).
pub fn render_bones(gpu: &Gpu, loaded: &Loaded, case: &Case) -> Result<RenderCheck, String> {
    let bake = bakes::bone_bake(loaded, MatrixLayout::Mat4, 4)?;
    let p = bake
        .primitives
        .first()
        .ok_or_else(|| format!("{}: no skinned primitive", loaded.name))?;
    let tex = &bake.textures[p.texture];
    let view = BoneTextureView {
        width: tex.width as u32,
        height: tex.height as u32,
        layout: MatrixLayout::Mat4,
        texels: &tex.data,
    };
    let ch = bake.channels;
    let reference: Vec<Vec3> = (0..p.positions.len())
        .map(|v| {
            let normal = p.normals.as_ref().map(|n| Vec3::from(n[v]));
            bone_path::deform_vertex(
                &view,
                &case.state,
                &p.channels[v * ch..(v + 1) * ch],
                Vec3::from(p.positions[v]),
                normal,
            )
            .position
        })
        .collect();
    let wvp = fit(&reference);
    let image = crate::render::draw_points(
        gpu,
        Entry::Bones,
        &Textures {
            bones: Some(TextureData {
                width: view.width,
                height: view.height,
                texels: Texels::F32(&tex.data),
            }),
            ..Textures::default()
        },
        &ParamValues {
            vat_positions: StreamDecode::FLOAT,
            vat_normals: StreamDecode::FLOAT,
            bone_layout: 0,
            bone_height: view.height,
            channels: ch as u32,
            vat: [1, 1, 1],
        },
        &VertexInput {
            positions: &p.positions,
            normals: p.normals.as_deref(),
            channels: &p.channels,
        },
        &case.state,
        wvp,
    )?;
    Ok(render_check(
        &image,
        &wvp,
        &reference,
        p.positions.iter().map(|x| Vec3::from(*x)),
    ))
}

/// Draws the first VAT primitive of `loaded` with `vat_vertex` in the state
/// `case` (EXR32 textures).
pub fn render_vat(gpu: &Gpu, loaded: &Loaded, case: &Case) -> Result<RenderCheck, String> {
    let primitives = bakes::vat_bake(loaded, VatShape::cli_default())?;
    let p = primitives
        .first()
        .ok_or_else(|| format!("{}: no VAT primitive", loaded.name))?;
    let positions = encode(p, &p.positions, VatEncoding::Exr32, false);
    let normals = p
        .normals
        .as_ref()
        .map(|n| encode(p, n, VatEncoding::Exr32, true));
    let address = VatAddress {
        width: p.width,
        bands: p.bands,
        frames: p.frames,
    };
    let pos_view = positions.view(p);
    let reference: Vec<Vec3> = (0..p.vertices)
        .map(|v| {
            vat_path::deform_vertex(
                &address,
                &pos_view,
                None,
                &case.state,
                v,
                Vec3::from(p.rest_positions[v as usize]),
                None,
            )
            .position
        })
        .collect();
    let wvp = fit(&reference);
    let image = crate::render::draw_points(
        gpu,
        Entry::Vat,
        &Textures {
            bones: None,
            vat_positions: Some(TextureData {
                width: p.width,
                height: p.height,
                texels: positions.texels(),
            }),
            vat_normals: normals.as_ref().map(|n| TextureData {
                width: p.width,
                height: p.height,
                texels: n.texels(),
            }),
        },
        &ParamValues {
            vat_positions: StreamDecode::FLOAT,
            vat_normals: StreamDecode::FLOAT,
            bone_layout: 0,
            bone_height: 1,
            channels: 0,
            vat: [p.width, p.bands, p.frames],
        },
        &VertexInput {
            positions: &p.rest_positions,
            normals: p.rest_normals.as_deref(),
            channels: &[],
        },
        &case.state,
        wvp,
    )?;
    Ok(render_check(
        &image,
        &wvp,
        &reference,
        p.rest_positions.iter().map(|x| Vec3::from(*x)),
    ))
}

fn render_check(
    image: &crate::render::DepthImage,
    wvp: &glam::Mat4,
    reference: &[Vec3],
    undeformed: impl Iterator<Item = Vec3>,
) -> RenderCheck {
    let expected = cpu_points(wvp, reference.iter().copied());
    let (union, agreeing) = agreement(&image.depths, &expected);
    let (_, undeformed_agreeing) = agreement(&image.depths, &cpu_points(wvp, undeformed));
    RenderCheck {
        covered: image.covered().count(),
        union,
        agreeing,
        undeformed_agreeing,
    }
}
