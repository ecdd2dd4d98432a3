//! The point drawings of [`crate::render`] against the CPU reference: the
//! same primitive, state and placement, the reference's vertices placed as
//! points on the CPU, compared pixel by pixel.

use glam::Vec3;
use rigbake_core::layout::MatrixLayout;
use rigbake_core::runtime::bone_path::{self, BoneTextureView};
use rigbake_core::runtime::root_motion;
use rigbake_core::runtime::vat_path::{self, VatAddress};

use crate::bakes::{self, Loaded, VatShape};
use crate::encode::{VatEncoding, encode};
use crate::gpu::Gpu;
use crate::kernel::{Entry, Texels, TextureData, Textures, VertexInput};
use crate::states::Case;
use crate::uniforms::{ParamValues, Placement, StreamDecode};

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
/// state `case` (f32 `mat4` texture), moved by `root_motion` (`(x, y, z,
/// yaw)`, zero for none).
pub fn render_bones(
    gpu: &Gpu,
    loaded: &Loaded,
    case: &Case,
    root_motion: [f32; 4],
) -> Result<RenderCheck, String> {
    let bake = bakes::bone_bake(loaded, MatrixLayout::Mat4, 4)?;
    let p = bake
        .primitives
        .first()
        .ok_or_else(|| format!("{}: no skinned primitive", loaded.name))?;
    let tex = &bake.textures[p.texture];
    let view = BoneTextureView {
        width: tex.width as u32,
        height: tex.height as u32,
        rows: loaded.timeline.rows as u32,
        fold: tex.fold,
        layout: MatrixLayout::Mat4,
        texels: &tex.data,
        range: None,
    };
    let ch = bake.channels;
    let reference: Vec<Vec3> = (0..p.positions.len())
        .map(|v| {
            let normal = p.normals.as_ref().map(|n| Vec3::from(n[v]));
            let deformed = bone_path::deform_vertex(
                &view,
                &case.state,
                &p.channels[v * ch..(v + 1) * ch],
                Vec3::from(p.positions[v]),
                normal,
            );
            root_motion::apply(root_motion, deformed).position
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
                layers: 1,
                texels: Texels::F32(&tex.data),
            }),
            ..Textures::default()
        },
        &ParamValues {
            vat_positions: StreamDecode::FLOAT,
            vat_normals: StreamDecode::FLOAT,
            bone_layout: 0,
            bone_range: [[0.0; 4]; 2],
            bone_height: view.rows,
            channels: ch as u32,
            bone_rows_per_block: view.fold.rows_per_block,
            bone_block_width: view.fold.block_width,
            vat: [1, 1, 1, 0, 0, 1],
        },
        &VertexInput {
            positions: &p.positions,
            normals: p.normals.as_deref(),
            channels: &p.channels,
        },
        &case.state,
        &Placement {
            world_view_projection: wvp,
            root_motion,
        },
    )?;
    Ok(render_check(
        &image,
        &wvp,
        &reference,
        p.positions.iter().map(|x| moved(root_motion, *x)),
    ))
}

/// Draws the first VAT primitive of `loaded` with `vat_vertex` in the state
/// `case` (EXR32 textures), moved by `root_motion` (zero for none).
pub fn render_vat(
    gpu: &Gpu,
    loaded: &Loaded,
    case: &Case,
    root_motion: [f32; 4],
) -> Result<RenderCheck, String> {
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
        first_vertex: p.first_vertex,
        ..VatAddress::default()
    };
    let pos_view = positions.view(p);
    let reference: Vec<Vec3> = (0..p.vertices)
        .map(|v| {
            let deformed = vat_path::deform_vertex(
                &address,
                std::slice::from_ref(&pos_view),
                None,
                &case.state,
                v,
                Vec3::from(p.rest_positions[v as usize]),
                None,
            );
            root_motion::apply(root_motion, deformed).position
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
                layers: 1,
                texels: positions.texels(),
            }),
            vat_normals: normals.as_ref().map(|n| TextureData {
                width: p.width,
                height: p.height,
                layers: 1,
                texels: n.texels(),
            }),
        },
        &ParamValues {
            vat_positions: StreamDecode::FLOAT,
            vat_normals: StreamDecode::FLOAT,
            bone_layout: 0,
            bone_range: [[0.0; 4]; 2],
            bone_height: 1,
            channels: 0,
            bone_rows_per_block: 1,
            bone_block_width: 1,
            vat: [p.width, p.bands, p.frames, p.first_vertex, 0, 1],
        },
        &VertexInput {
            positions: &p.rest_positions,
            normals: p.rest_normals.as_deref(),
            channels: &[],
        },
        &case.state,
        &Placement {
            world_view_projection: wvp,
            root_motion,
        },
    )?;
    Ok(render_check(
        &image,
        &wvp,
        &reference,
        p.rest_positions.iter().map(|x| moved(root_motion, *x)),
    ))
}

/// An undeformed position moved by the root motion alone.
fn moved(root_motion: [f32; 4], p: [f32; 3]) -> Vec3 {
    let v = rigbake_core::runtime::RuntimeVertex {
        position: Vec3::from(p),
        normal: None,
    };
    root_motion::apply(root_motion, v).position
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
