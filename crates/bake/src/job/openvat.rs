//! The OpenVAT-compatible export (`rigbake vat --compat openvat`): the
//! files OpenVAT's published players (its three.js viewer, the Godot
//! add-on, the Unity package) read, fed by evaluated vertices (not by the
//! VAT texture layout). See `docs/openvat.md`.
//!
//! - `<name>_vat.exr`: RGBA f32; texel `(g % width, band * frames + row)`
//!   (`band = g / width`) holds vertex `g`'s offset from the playback mesh
//!   at timeline row `row`, in Blender axes, remapped into 0..1 by
//!   `os-remap`; alpha 1.
//! - `<name>_vnrm.exr`: the same texels, the unit normal in Blender axes
//!   packed as `n * 0.5 + 0.5`.
//! - `<name>.glb`: one mesh, one primitive per baked primitive (vertices
//!   numbered `g` across them in order), at timeline row 0, with the
//!   source's look; TEXCOORD_1 holds each vertex's texel centre at row 0.
//! - `<name>-remap_info.json` and the sidecar `<name>-openvat.rigbake.json`
//!   (the container's own sidecar is `<name>.rigbake.json`).

use std::io::Cursor;

use rigbake_core::Model;
use rigbake_core::bake::vat::{self, VatBaker, VatOptions};
use rigbake_core::bake::vertices::FrameVertices;
use rigbake_core::error::ErrorKind;
use rigbake_core::timeline::Timeline;
use rigbake_format::glb;
use rigbake_format::openvat::{OpenVatClip, Remap, pack_normal, remap_info, to_blender};
use rigbake_format::texture::{Precision, RgbaImage, exr};
use serde_json::json;

use super::common::Part;
use super::mesh;
use super::placement::RestPlacements;
use crate::error::StepError;
use crate::records;
use crate::settings::BakeSettings;
use crate::sink::Sink;

/// The UV set OpenVAT's players read the lookup UV from (three.js `uv1`,
/// Godot `UV2`, Unity `uv2` / TEXCOORD1).
pub const LOOKUP_UV_SET: usize = 1;

/// Largest texture the export writes, in bytes of RGBA f32 (1 GiB): both
/// textures are built whole in memory.
const MAX_TEXTURE_BYTES: u64 = 1 << 30;

/// Refuses offsets or normals that are not finite (finite positions whose
/// difference from frame 0 overflows f32), naming the primitive and row:
/// every number the export writes is finite.
fn check_finite(
    model: &Model,
    prims: &[rigbake_core::bake::vat::VatPrimitive],
    offsets: &[[f32; 3]],
    normals: &[[f32; 3]],
    vertices: usize,
) -> Result<(), StepError> {
    let bad = |v: &[f32; 3]| !v.iter().all(|x| x.is_finite());
    let Some(at) = offsets
        .iter()
        .zip(normals)
        .position(|(o, n)| bad(o) || bad(n))
    else {
        return Ok(());
    };
    let (row, mut g) = (at / vertices.max(1), at % vertices.max(1));
    let prim = prims
        .iter()
        .find(|p| {
            let inside = g < p.vertices;
            if !inside {
                g -= p.vertices;
            }
            inside
        })
        .unwrap_or(&prims[0]);
    Err(StepError::bare(rigbake_core::Error::limit(
        format!("meshes[{}].primitives[{}]", prim.mesh, prim.primitive),
        format!(
            "the OpenVAT offset of vertex {g} of node `{}` from frame 0 is not finite at timeline row {row} (its positions are finite, their difference overflows f32); use rigbake's own VAT (without --compat openvat)",
            model.nodes[prim.node].name
        ),
    )))
}

/// The longest texture side whose normalised texel centres half floats
/// still tell apart: a half float in `[0.5, 1)` is within `2^-12` of the
/// value, less than half a texel (`1 / (2 * side)`) up to 2,047 texels.
pub const HALF_FLOAT_SAFE_SIDE: usize = 2047;

/// The export's texture width for `vertices` over `frames` rows, and
/// whether its lookup UVs stay exact in half floats: the fewest bands
/// whose width and height are both at most [`HALF_FLOAT_SAFE_SIDE`] (and
/// `max`; one band when the vertices fit), else OpenVAT's own wrapping at
/// `max`.
fn texture_width(vertices: usize, frames: usize, max: usize) -> (usize, bool) {
    let side = HALF_FLOAT_SAFE_SIDE.min(max);
    let bands = vertices.div_ceil(side).max(1);
    let width = vertices.div_ceil(bands).max(1);
    if bands * frames.max(1) <= side {
        return (width, true);
    }
    let width = vertices.min(max).max(1);
    (width, false)
}

/// What the export wrote, for the report.
pub(super) struct OpenVatDone;

/// The export's one texture: `width` texels wide, each frame `bands` rows
/// (vertices wrapped), frames stacked: `height = bands * frames`.
#[derive(Debug, Clone, Copy)]
struct Dims {
    vertices: usize,
    frames: usize,
    width: usize,
    bands: usize,
    height: usize,
}

impl Dims {
    /// The texel index of exported vertex `g` at row `row`.
    fn texel(&self, g: usize, row: usize) -> usize {
        ((g / self.width) * self.frames + row) * self.width + g % self.width
    }
}

/// Writes the OpenVAT files of `model`.
pub(super) fn export(
    model: &Model,
    placements: &RestPlacements,
    timeline: &Timeline,
    settings: &BakeSettings,
    sink: &mut dyn Sink,
    uv_sets: &mut Vec<rigbake_format::meta::PrimitiveUvSets>,
    observer: &dyn super::Observer,
) -> Result<Part<OpenVatDone>, StepError> {
    let options = VatOptions {
        normals: true,
        tangents: false,
        power_of_two: false,
        ..settings.vat.options
    };
    let plan = match vat::plan(model, timeline, &options) {
        Ok(p) => p,
        Err(e) if e.kind == ErrorKind::NothingToBake => return Ok(Part::Skipped(e.message)),
        Err(e) => return Err(StepError::bare(e)),
    };
    let baker =
        VatBaker::new(model, timeline, plan, options.convention).map_err(StepError::bare)?;
    let prims = &baker.plan().primitives;
    // Each primitive's own vertices (`layout.vertices` is its whole texture
    // set's, the same for every member of an atlas).
    let vertices: usize = prims.iter().map(|p| p.vertices).sum();
    let dims = dims(vertices, timeline.rows, options.max_texture_size, observer)?;
    let (first, offsets, normals) = frame_values(&baker, &dims);
    check_finite(model, prims, &offsets, &normals, vertices)?;
    let remap = remap_of(&offsets)?;
    let textures = write_textures(&model.name, &dims, &remap, &offsets, &normals, sink)?;
    let mesh_file = write_mesh(model, placements, &baker, first, &dims, sink, uv_sets)?;
    write_sidecars(model, timeline, &remap, &dims, &textures, &mesh_file, sink)?;
    Ok(Part::Done(OpenVatDone))
}

/// The texture's size for `vertices` x `frames` within `max` texels a
/// side: a warning when its lookup UV is not exact in half floats, an
/// error over the size limit (the export does not fold).
fn dims(
    vertices: usize,
    frames: usize,
    max: usize,
    observer: &dyn super::Observer,
) -> Result<Dims, StepError> {
    let (width, half_safe) = texture_width(vertices, frames, max);
    let bands = vertices.div_ceil(width);
    let height = bands * frames;
    if !half_safe {
        observer.warning(&format!(
            "the OpenVAT export is {width} x {height} texels: its lookup UV (OpenVAT's normalised texel centre) is exact in half floats only up to {HALF_FLOAT_SAFE_SIDE} texels a side, so an engine that stores UVs as half floats (Godot 3's default import, Unity's mesh compression) reads wrong texels; turn that mesh compression off, or use rigbake's own VAT, whose lookup UV survives it"
        ));
    }
    let texels = (width as u64) * (height as u64);
    if height > max || texels * 16 > MAX_TEXTURE_BYTES {
        return Err(StepError::bare(rigbake_core::Error::limit(
            "",
            format!(
                "the OpenVAT texture would be {width} x {height} ({vertices} vertices, {frames} frames), over the size limit ({max} pixels a side, {MAX_TEXTURE_BYTES} bytes); OpenVAT's players read one texture of stacked frames and cannot address folded frames or pages, so the export does not fold: raise --max-texture-size, bake fewer clips or a lower --fps, or use rigbake's own VAT (without --compat openvat), whose frames fold"
            ),
        )));
    }
    Ok(Dims {
        vertices,
        frames,
        width,
        bands,
        height,
    })
}

/// Every primitive's vertices at row 0 (the playback mesh, OpenVAT's
/// "start frame" proxy), and every exported vertex's offset from it and
/// packed normal at every row, in Blender's axes (row-major: row, then
/// exported vertex).
fn frame_values(
    baker: &VatBaker<'_>,
    dims: &Dims,
) -> (Vec<FrameVertices>, Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let count = baker.plan().primitives.len();
    let first: Vec<_> = (0..count).map(|i| baker.vertices_at(i, 0)).collect();
    let rest: Vec<[f32; 3]> = first.iter().flat_map(|f| f.positions.clone()).collect();
    let (vertices, frames) = (dims.vertices, dims.frames);
    let mut offsets = vec![[0.0f32; 3]; vertices * frames];
    let mut normals = vec![[0.5f32, 0.5, 1.0]; vertices * frames];
    for row in 0..frames {
        let mut g = 0;
        for (i, at_first) in first.iter().enumerate() {
            let now = if row == 0 {
                at_first.clone()
            } else {
                baker.vertices_at(i, row)
            };
            for (k, p) in now.positions.iter().enumerate() {
                let r = rest[g + k];
                let at = row * vertices + g + k;
                offsets[at] = to_blender([p[0] - r[0], p[1] - r[1], p[2] - r[2]]);
                if let Some(n) = &now.normals {
                    normals[at] = pack_normal(to_blender(n[k]));
                }
            }
            g += now.positions.len();
        }
    }
    (first, offsets, normals)
}

/// The range the offsets are remapped by into 0..1; an error when it
/// overflows f32.
fn remap_of(offsets: &[[f32; 3]]) -> Result<Remap, StepError> {
    let remap = Remap::of(offsets).unwrap_or(Remap {
        min: [0.0; 3],
        max: [0.0; 3],
    });
    if let Some(c) = (0..3).find(|&c| !(remap.max[c] - remap.min[c]).is_finite()) {
        return Err(StepError::bare(rigbake_core::Error::limit(
            "",
            format!(
                "the OpenVAT position offsets span more than f32 holds along {} ({:e} to {:e}): OpenVAT stores offsets remapped into 0..1 by their range; use rigbake's own VAT (without --compat openvat)",
                ["x", "y", "z"][c],
                remap.min[c],
                remap.max[c]
            ),
        )));
    }
    Ok(remap)
}

/// Writes `<name>_vat.exr` (remapped offsets) and `<name>_vnrm.exr`
/// (packed normals); returns their names.
fn write_textures(
    name: &str,
    dims: &Dims,
    remap: &Remap,
    offsets: &[[f32; 3]],
    normals: &[[f32; 3]],
    sink: &mut dyn Sink,
) -> Result<(String, String), StepError> {
    let image = |values: &dyn Fn(usize) -> [f32; 3]| {
        let mut data = vec![0.0f32; dims.width * dims.height * 4];
        for row in 0..dims.frames {
            for g in 0..dims.vertices {
                let v = values(row * dims.vertices + g);
                let t = dims.texel(g, row) * 4;
                data[t..t + 4].copy_from_slice(&[v[0], v[1], v[2], 1.0]);
            }
        }
        data
    };
    let encode = |data: &[f32], what: &str| -> Result<Vec<u8>, StepError> {
        let mut out = Cursor::new(Vec::new());
        exr::write(
            &mut out,
            &RgbaImage {
                width: dims.width,
                height: dims.height,
                data,
            },
            Precision::F32,
        )
        .map_err(|e| StepError::during(format!("OpenVAT {what}"), e))?;
        Ok(out.into_inner())
    };
    let vat_file = format!("{name}_vat.exr");
    let vnrm_file = format!("{name}_vnrm.exr");
    let positions = encode(&image(&|i| remap.encode(offsets[i])), "positions")?;
    sink.write_file(&vat_file, &positions)?;
    drop(positions);
    let packed = encode(&image(&|i| normals[i]), "normals")?;
    sink.write_file(&vnrm_file, &packed)?;
    Ok((vat_file, vnrm_file))
}

/// Writes `<name>.glb`: one mesh, the primitives in plan order at row 0,
/// vertices numbered on, each with OpenVAT's lookup UV, placed on the
/// reference node's rest matrix; records its UV sets. Returns its name.
fn write_mesh(
    model: &Model,
    placements: &RestPlacements,
    baker: &VatBaker<'_>,
    first: Vec<FrameVertices>,
    dims: &Dims,
    sink: &mut dyn Sink,
    uv_sets: &mut Vec<rigbake_format::meta::PrimitiveUvSets>,
) -> Result<String, StepError> {
    let prims = &baker.plan().primitives;
    let mut primitives = Vec::with_capacity(prims.len());
    let mut g = 0;
    for (p, f) in prims.iter().zip(first) {
        let src = &model.meshes[p.mesh].primitives[p.primitive];
        let mut out = mesh::base(src);
        let n = f.positions.len();
        out.positions = f.positions;
        out.tangents = f.tangents.filter(|_| f.normals.is_some());
        out.normals = f.normals;
        let lookup = (g..g + n)
            .map(|v| {
                let (x, band) = (v % dims.width, v / dims.width);
                [
                    (x as f32 + 0.5) / dims.width as f32,
                    ((band * dims.frames) as f32 + 0.5) / dims.height as f32,
                ]
            })
            .collect();
        mesh::insert_uv_set(&mut out, LOOKUP_UV_SET, lookup);
        uv_sets.push(rigbake_format::meta::PrimitiveUvSets {
            file: format!("{}.glb", model.name),
            mesh: 0,
            primitive: primitives.len() as u32,
            source_sets: src.tex_coords.len() as u32,
            lookup: Some(LOOKUP_UV_SET as u32),
            weights_first: None,
            weights_sets: 0,
        });
        primitives.push(out);
        g += n;
    }
    let mut doc = mesh::document(
        model,
        vec![glb::GlbMesh {
            name: model.name.clone(),
            primitives,
            matrix: Some(placements.reference(model)),
        }],
    );
    mesh::shift_material_uv_sets(&mut doc, LOOKUP_UV_SET);
    let mesh_file = format!("{}.glb", model.name);
    let bytes = glb::write_glb(&doc).map_err(|e| StepError::during("OpenVAT mesh", e))?;
    sink.write_file(&mesh_file, &bytes)?;
    Ok(mesh_file)
}

/// Writes OpenVAT's `<name>-remap_info.json` and rigbake's
/// `<name>-openvat.rigbake.json`.
fn write_sidecars(
    model: &Model,
    timeline: &Timeline,
    remap: &Remap,
    dims: &Dims,
    (vat_file, vnrm_file): &(String, String),
    mesh_file: &str,
    sink: &mut dyn Sink,
) -> Result<(), StepError> {
    let name = &model.name;
    let (width, height, frames) = (dims.width, dims.height, dims.frames);
    let clips: Vec<OpenVatClip> = records::clip_table(timeline)
        .into_iter()
        .map(|c| OpenVatClip {
            name: c.name,
            start_row: c.start_row,
            frames: c.frames,
            fps: c.fps,
            looping: c.looping,
        })
        .collect();
    let info = remap_info(remap, frames as u32, &clips);
    sink.write_file(&format!("{name}-remap_info.json"), info.as_bytes())?;
    let sidecar = json!({
        "format": "rigbake-openvat",
        "version": 1,
        "model": name,
        "axes": "blender-z-up",
        "remap": {"min": remap.min, "max": remap.max, "frames": frames},
        "clips": clips.iter().map(|c| json!({
            "name": c.name,
            "start_row": c.start_row,
            "frames": c.frames,
            "fps": c.fps,
            "looping": c.looping,
        })).collect::<Vec<_>>(),
        "textures": {
            "positions": {"file": vat_file, "width": width, "height": height, "encoding": "exr32", "content": "offset-remapped"},
            "normals": {"file": vnrm_file, "width": width, "height": height, "encoding": "exr32", "content": "normal-packed"},
        },
        "mesh": {"file": mesh_file, "lookup_uv_set": LOOKUP_UV_SET, "vertices": dims.vertices, "bands": dims.bands},
    });
    let text = serde_json::to_string_pretty(&sidecar).map_err(|e| {
        StepError::bare(rigbake_format::error::FormatError::Invalid(format!(
            "OpenVAT sidecar: {e}"
        )))
    })? + "\n";
    sink.write_file(&format!("{name}-openvat.rigbake.json"), text.as_bytes())?;
    Ok(())
}
