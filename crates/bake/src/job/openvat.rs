//! The OpenVAT-compatible export (`rigbake vat --compat openvat`): the
//! files OpenVAT's published players (its three.js viewer, the Godot
//! add-on, the Unity package) read, fed by evaluated vertices (not by the
//! VAT texture layout), in OpenVAT's own layout (its `Use Single Row`
//! default): one texel column per vertex, one row per frame. See
//! `docs/openvat.md`.
//!
//! - `<name>_vat.exr`: RGBA f32 without compression (as OpenVAT's EXR32),
//!   `vertices` x `frames`; texel `(g, row)` holds exported vertex `g`'s
//!   offset from the playback mesh at timeline row `row`, in Blender axes,
//!   remapped into 0..1 by `os-remap`; alpha 1.
//! - `<name>_vnrm.exr`: RGB f32 without compression, the same texels, the
//!   unit normal in Blender axes packed as `n * 0.5 + 0.5`.
//! - `<name>.glb`: one mesh, one primitive per exported primitive
//!   (vertices numbered `g` across them in order), at timeline row 0, with
//!   the source's look; TEXCOORD_1 holds each vertex's texel centre at row
//!   0.
//! - `<name>-remap_info.json` and the sidecar `<name>-openvat.rigbake.json`
//!   (the container's own sidecar is `<name>.rigbake.json`).
//!
//! Exported primitives: the VAT plan's, less the levels past 0 of every
//! LOD group (OpenVAT's players draw every primitive of the mesh, so the
//! levels would be drawn on top of each other). Both textures are streamed
//! row batch by row batch (evaluated in parallel, compressed on writer
//! threads), after a first pass over the rows that finds `os-remap`.

use std::io::BufWriter;

use rayon::prelude::*;
use rigbake_core::Model;
use rigbake_core::bake::vat::{self, VatBaker, VatOptions, VatPrimitive};
use rigbake_core::bake::vertices::FrameVertices;
use rigbake_core::error::ErrorKind;
use rigbake_core::timeline::Timeline;
use rigbake_format::digest::DigestFile;
use rigbake_format::glb;
use rigbake_format::openvat::{OpenVatClip, Remap, pack_normal, remap_info, to_blender};
use rigbake_format::texture::Precision;
use rigbake_format::texture::exr::{Rows, StreamSpec, StreamWriter, TextureCompression};
use serde_json::json;

use super::common::{Part, node_name};
use super::mesh;
use super::placement::RestPlacements;
use crate::error::StepError;
use crate::records;
use crate::settings::BakeSettings;
use crate::sink::Sink;

/// The UV set OpenVAT's players read the lookup UV from (three.js `uv1`,
/// Godot `UV2`, Unity `uv2` / TEXCOORD1).
pub const LOOKUP_UV_SET: usize = 1;

/// The most vertices the export takes: OpenVAT writes one texel column a
/// vertex (its `Use Single Row` layout, which the Godot add-on requires),
/// its widest texture is 8,192 texels (the add-on's own limit: meshes
/// under 8,192 vertices), and its players cannot address vertices wrapped
/// into bands.
pub const MAX_VERTICES: usize = 8192;

/// Largest texture the export writes, in bytes of RGBA f32 (1 GiB).
const MAX_TEXTURE_BYTES: u64 = 1 << 30;

/// Texels per row batch of the streamed textures (as the VAT bake's).
const BATCH_TEXELS: usize = 1 << 18;

/// What the export gives the rest of the job.
pub(super) struct OpenVatDone {
    /// Which TEXCOORD sets each primitive of its mesh uses.
    pub uv_sets: Vec<rigbake_format::meta::PrimitiveUvSets>,
    /// LOD levels left out of the export ([`lod_warnings`]).
    pub warnings: Vec<String>,
}

/// The export's texture: one column a vertex, one row a frame.
#[derive(Debug, Clone, Copy)]
struct Dims {
    /// Exported vertices: the texture's width.
    vertices: usize,
    /// Timeline rows: the texture's height.
    frames: usize,
}

/// What both passes over the rows read: the baker, the exported
/// primitives (indices into its plan) and their vertices at row 0.
struct Passes<'b> {
    baker: &'b VatBaker<'b>,
    /// Exported primitives, in plan order, and whether each has normals.
    chosen: Vec<(usize, bool)>,
    dims: Dims,
    /// Every exported vertex's position at row 0, planar (x, y, z planes of
    /// `dims.vertices`).
    rest: Vec<f32>,
}

/// Writes the OpenVAT files of `model`.
pub(super) fn export(
    model: &Model,
    placements: &RestPlacements,
    timeline: &Timeline,
    settings: &BakeSettings,
    sink: &mut dyn Sink,
    observer: &dyn super::Observer,
) -> Result<Part<OpenVatDone>, StepError> {
    let options = options(settings);
    let plan = match vat::plan(model, timeline, &options) {
        Ok(p) => p,
        Err(e) if e.kind == ErrorKind::NothingToBake => return Ok(Part::Skipped(e.message)),
        Err(e) => return Err(StepError::bare(e)),
    };
    let warnings = lod_warnings(model, &plan.primitives);
    let chosen = level_zero(model, &plan.primitives);
    let vertices: usize = chosen.iter().map(|&i| plan.primitives[i].vertices).sum();
    let dims = dims(vertices, timeline.rows, options.max_texture_size)?;
    let baker =
        VatBaker::new(model, timeline, plan, options.convention).map_err(StepError::bare)?;
    let first: Vec<FrameVertices> = chosen.iter().map(|&i| baker.vertices_at(i, 0)).collect();
    let passes = Passes::new(model, &baker, &chosen, dims, &first);
    observer.stage("OpenVAT export: bounds");
    let remap = passes.remap(model)?;
    let textures = passes.write_textures(&model.name, &remap, sink, observer)?;
    observer.stage("OpenVAT export: mesh");
    let (mesh_file, uv_sets) = write_mesh(model, placements, &baker, &chosen, first, &dims, sink)?;
    write_sidecars(model, timeline, &remap, &dims, &textures, &mesh_file, sink)?;
    Ok(Part::Done(OpenVatDone { uv_sets, warnings }))
}

/// The VAT options of the export: normals, no tangents, textures of any
/// size.
fn options(settings: &BakeSettings) -> VatOptions {
    VatOptions {
        normals: true,
        tangents: false,
        power_of_two: false,
        ..settings.vat.options
    }
}

/// Refuses, before anything is baked, a model whose export would be over
/// its size limits (see [`dims`]); a model with nothing to export passes
/// (the export skips it).
pub(super) fn check(
    model: &Model,
    timeline: &Timeline,
    settings: &BakeSettings,
) -> Result<(), StepError> {
    let options = options(settings);
    let plan = match vat::plan(model, timeline, &options) {
        Ok(p) => p,
        Err(e) if e.kind == ErrorKind::NothingToBake => return Ok(()),
        Err(e) => return Err(StepError::bare(e)),
    };
    let vertices: usize = level_zero(model, &plan.primitives)
        .iter()
        .map(|&i| plan.primitives[i].vertices)
        .sum();
    dims(vertices, timeline.rows, options.max_texture_size).map(|_| ())
}

/// The planned primitives the export takes (indices, in plan order): all
/// but those on the nodes of LOD levels past 0, which OpenVAT's players
/// would draw on top of level 0.
fn level_zero(model: &Model, prims: &[VatPrimitive]) -> Vec<usize> {
    let past_zero = |node: usize| model.lods.iter().any(|g| g.levels[1..].contains(&node));
    (0..prims.len())
        .filter(|&i| !past_zero(prims[i].node))
        .collect()
}

/// A warning for each LOD group whose levels past 0 the export leaves out
/// ([`level_zero`]).
fn lod_warnings(model: &Model, prims: &[VatPrimitive]) -> Vec<String> {
    let mut warnings = Vec::new();
    for group in &model.lods {
        if prims.iter().any(|p| group.levels[1..].contains(&p.node)) {
            warnings.push(format!(
                "the OpenVAT export holds level 0 of LOD group `{}` only (its {} further levels are in rigbake's own outputs): OpenVAT's players draw every primitive of the exported mesh, so the levels would be drawn on top of each other",
                node_name(model, group.levels[0]),
                group.levels.len() - 1
            ));
        }
    }
    warnings
}

/// The texture's size for `vertices` x `frames`: an error past
/// [`MAX_VERTICES`] (or `max` texels a side), which OpenVAT's players
/// cannot read, or over [`MAX_TEXTURE_BYTES`].
fn dims(vertices: usize, frames: usize, max: usize) -> Result<Dims, StepError> {
    let limit = MAX_VERTICES.min(max);
    if vertices > limit {
        let which = if limit == MAX_VERTICES {
            format!("OpenVAT's limit of {MAX_VERTICES} vertices")
        } else {
            format!("the limit of {limit} texels a side (--max-texture-size)")
        };
        return Err(StepError::bare(rigbake_core::Error::limit(
            "meshes",
            format!(
                "the OpenVAT export would be {vertices} texels wide ({vertices} vertices), over {which}: OpenVAT writes one texel column per vertex and one row per frame (its `Use Single Row` layout, which the Godot add-on requires; that add-on takes meshes under {MAX_VERTICES} vertices), and its players cannot address vertices wrapped into bands; use rigbake's own VAT (without --compat openvat), whose lookup UV addresses any vertex count, or export fewer meshes (--exclude)"
            ),
        )));
    }
    let texels = (vertices as u64) * (frames as u64);
    if frames > max || texels * 16 > MAX_TEXTURE_BYTES {
        return Err(StepError::bare(rigbake_core::Error::limit(
            "",
            format!(
                "the OpenVAT texture would be {vertices} x {frames} ({vertices} vertices, {frames} frames), over the size limit ({max} pixels a side, {MAX_TEXTURE_BYTES} bytes); OpenVAT's players read one texture of stacked frames and cannot address folded frames or pages, so the export does not fold: raise --max-texture-size, bake fewer clips or a lower --fps, or use rigbake's own VAT (without --compat openvat), whose frames fold"
            ),
        )));
    }
    Ok(Dims { vertices, frames })
}

/// A unit normal as a mesh file stores it ([`FrameVertices::from_flat`]):
/// degenerate directions become +Z.
fn unit(n: [f32; 3]) -> [f32; 3] {
    let d = glam::Vec3::from_array(n);
    if d.length() > 0.5 {
        d.normalize().to_array()
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// Rows of each batch for a texture `width` texels wide.
fn batch_rows(width: usize) -> usize {
    (BATCH_TEXELS / width.max(1)).clamp(1, 256)
}

/// Per-component bounds of one row's offsets, or the first texel whose
/// offset or normal is not finite.
type RowBounds = Result<([f32; 3], [f32; 3]), usize>;

impl<'b> Passes<'b> {
    /// The passes' shared state; `first` holds the exported primitives at
    /// row 0 (as the mesh file stores them).
    fn new(
        model: &Model,
        baker: &'b VatBaker<'b>,
        chosen: &[usize],
        dims: Dims,
        first: &[FrameVertices],
    ) -> Self {
        let w = dims.vertices;
        let mut rest = vec![0.0f32; 3 * w];
        let mut x0 = 0;
        for f in first {
            for (k, p) in f.positions.iter().enumerate() {
                for (c, value) in p.iter().enumerate() {
                    rest[c * w + x0 + k] = *value;
                }
            }
            x0 += f.positions.len();
        }
        let prims = &baker.plan().primitives;
        let chosen = chosen
            .iter()
            .map(|&i| {
                let p = &prims[i];
                (
                    i,
                    model.meshes[p.mesh].primitives[p.primitive]
                        .normals
                        .is_some(),
                )
            })
            .collect();
        Self {
            baker,
            chosen,
            dims,
            rest,
        }
    }

    /// Fills texture row `row` into `pos` (4 planes of the texture's width:
    /// R, G, B, A) and `nrm` (3 planes: R, G, B): every exported vertex's
    /// offset from row 0 in Blender axes (not yet remapped), alpha 1, and
    /// its packed normal in Blender axes (+Z, Blender up, for primitives
    /// without normals).
    fn fill(&self, row: usize, pos: &mut [f32], nrm: &mut [f32]) {
        let w = self.dims.vertices;
        let plan = self.baker.plan();
        let r = &self.rest;
        let mut x0 = 0;
        for &(i, normals) in &self.chosen {
            let v = plan.primitives[i].vertices;
            self.baker
                .fill_primitive(i, row, (w, x0), pos, Some(&mut *nrm));
            for t in x0..x0 + v {
                let o = [
                    pos[t] - r[t],
                    pos[w + t] - r[w + t],
                    pos[2 * w + t] - r[2 * w + t],
                ];
                let b = to_blender(o);
                let n = if normals {
                    pack_normal(to_blender(unit([nrm[t], nrm[w + t], nrm[2 * w + t]])))
                } else {
                    [0.5, 0.5, 1.0]
                };
                for c in 0..3 {
                    pos[c * w + t] = b[c];
                    nrm[c * w + t] = n[c];
                }
            }
            x0 += v;
        }
        pos[3 * w..4 * w].fill(1.0);
    }

    /// The bounds of row `row`'s offsets, in `scratch` (a row of each
    /// texture).
    fn row_bounds(&self, row: usize, scratch: &mut Vec<f32>) -> RowBounds {
        let w = self.dims.vertices;
        scratch.resize(7 * w, 0.0);
        let (pos, nrm) = scratch.split_at_mut(4 * w);
        self.fill(row, pos, nrm);
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for c in 0..3 {
            let (p, n) = (&pos[c * w..(c + 1) * w], &nrm[c * w..(c + 1) * w]);
            if let Some(t) = p
                .iter()
                .zip(n)
                .position(|(a, b)| !a.is_finite() || !b.is_finite())
            {
                // The first bad texel of the row, over every component.
                let first = (0..w)
                    .find(|&t| {
                        (0..3).any(|k| !pos[k * w + t].is_finite() || !nrm[k * w + t].is_finite())
                    })
                    .unwrap_or(t);
                return Err(first);
            }
            for &x in p {
                lo[c] = lo[c].min(x);
                hi[c] = hi[c].max(x);
            }
        }
        Ok((lo, hi))
    }

    /// The first pass: every row evaluated (in parallel) for the range the
    /// offsets are remapped by; an error when an offset or a normal is not
    /// finite (naming the first such vertex) or the range overflows f32.
    fn remap(&self, model: &Model) -> Result<Remap, StepError> {
        let rows: Vec<RowBounds> = (0..self.dims.frames)
            .into_par_iter()
            .map_init(Vec::new, |scratch, row| self.row_bounds(row, scratch))
            .collect();
        let mut remap = Remap {
            min: [f32::INFINITY; 3],
            max: [f32::NEG_INFINITY; 3],
        };
        for (row, bounds) in rows.into_iter().enumerate() {
            let (lo, hi) = bounds.map_err(|g| self.not_finite(model, row, g))?;
            for c in 0..3 {
                remap.min[c] = remap.min[c].min(lo[c]);
                remap.max[c] = remap.max[c].max(hi[c]);
            }
        }
        if self.dims.vertices == 0 || self.dims.frames == 0 {
            remap = Remap {
                min: [0.0; 3],
                max: [0.0; 3],
            };
        }
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

    /// The error for exported vertex `g` whose offset or normal is not
    /// finite at timeline row `row` (finite positions whose difference from
    /// row 0 overflows f32): names the primitive, the vertex and the row.
    fn not_finite(&self, model: &Model, row: usize, g: usize) -> StepError {
        let prims = &self.baker.plan().primitives;
        let mut local = g;
        let mut at = self.chosen[0].0;
        for &(i, _) in &self.chosen {
            if local < prims[i].vertices {
                at = i;
                break;
            }
            local -= prims[i].vertices;
        }
        let prim = &prims[at];
        StepError::bare(rigbake_core::Error::limit(
            format!("meshes[{}].primitives[{}]", prim.mesh, prim.primitive),
            format!(
                "the OpenVAT offset of vertex {local} of node `{}` from frame 0 is not finite at timeline row {row} (its positions are finite, their difference overflows f32); use rigbake's own VAT (without --compat openvat)",
                node_name(model, prim.node)
            ),
        ))
    }

    /// The second pass: writes `<name>_vat.exr` (remapped offsets, RGBA)
    /// and `<name>_vnrm.exr` (packed normals, RGB), 32-bit floats without
    /// compression as OpenVAT's own EXR32 export writes them, row batch by
    /// row batch (rows evaluated in parallel, each file on its own writer
    /// thread), reporting the frames done; returns their names.
    fn write_textures(
        &self,
        name: &str,
        remap: &Remap,
        sink: &mut dyn Sink,
        observer: &dyn super::Observer,
    ) -> Result<(String, String), StepError> {
        let Dims {
            vertices: w,
            frames,
        } = self.dims;
        let names = [format!("{name}_vat.exr"), format!("{name}_vnrm.exr")];
        let fail = |what: &str, e| StepError::during(format!("OpenVAT {what}"), e);
        let mut files = Vec::with_capacity(2);
        for (file, (what, channels)) in names.iter().zip([("positions", 4), ("normals", 3)]) {
            let path = sink.file_target(file)?;
            let out = DigestFile::create(&path)
                .map_err(|e| StepError::io(format!("cannot write {file}"), &path, e))?;
            let digest = out.digest();
            let spec = StreamSpec {
                width: w,
                height: frames,
                channels,
                precision: Precision::F32,
                compression: TextureCompression::None,
            };
            let writer = StreamWriter::new(BufWriter::with_capacity(1 << 20, out), spec)
                .map_err(|e| fail(what, e))?;
            files.push((writer, digest, what, path));
        }
        let step = batch_rows(w);
        let mut first = 0;
        while first < frames {
            let rows = step.min(frames - first);
            let mut take = |k: usize| match files[k].0.take_spare() {
                Some(Rows::F32(v)) => v,
                _ => Vec::new(),
            };
            let (mut pos, mut nrm) = (take(0), take(1));
            pos.resize(rows * 4 * w, 0.0);
            nrm.resize(rows * 3 * w, 0.0);
            pos.par_chunks_mut(4 * w)
                .zip(nrm.par_chunks_mut(3 * w))
                .enumerate()
                .for_each(|(k, (p, n))| {
                    self.fill(first + k, p, n);
                    encode_row(remap, p, w);
                });
            for (k, batch) in [pos, nrm].into_iter().enumerate() {
                let what = files[k].2;
                files[k]
                    .0
                    .push_rows(Rows::F32(batch))
                    .map_err(|e| fail(what, e))?;
            }
            first += rows;
            observer.stage(&format!("OpenVAT export: frame {first}/{frames}"));
        }
        for ((writer, digest, what, path), file) in files.into_iter().zip(&names) {
            writer.finish().map_err(|e| fail(what, e))?;
            let (bytes, crc32) = digest
                .finish()
                .map_err(|e| StepError::io(format!("cannot write {file}"), &path, e))?;
            sink.list_file(file, bytes, crc32);
        }
        let [vat_file, vnrm_file] = names;
        Ok((vat_file, vnrm_file))
    }
}

/// Remaps one row's offsets (R, G, B planes of `w`) into 0..1 in place.
fn encode_row(remap: &Remap, row: &mut [f32], w: usize) {
    for c in 0..3 {
        let (lo, span) = (remap.min[c], remap.max[c] - remap.min[c]);
        for x in &mut row[c * w..(c + 1) * w] {
            *x = if span > 0.0 {
                ((*x - lo) / span).clamp(0.0, 1.0)
            } else {
                0.0
            };
        }
    }
}

/// Writes `<name>.glb`: one mesh, the exported primitives (`chosen`) in
/// plan order at row 0 (`first`), vertices numbered on, each with
/// OpenVAT's lookup UV (its texel centre at row 0), placed on the
/// reference node's rest matrix. Returns its name and its UV sets.
fn write_mesh(
    model: &Model,
    placements: &RestPlacements,
    baker: &VatBaker<'_>,
    chosen: &[usize],
    first: Vec<FrameVertices>,
    dims: &Dims,
    sink: &mut dyn Sink,
) -> Result<(String, Vec<rigbake_format::meta::PrimitiveUvSets>), StepError> {
    let prims = &baker.plan().primitives;
    let mut uv_sets = Vec::with_capacity(chosen.len());
    let mut primitives = Vec::with_capacity(chosen.len());
    let mut g = 0;
    for (&i, f) in chosen.iter().zip(first) {
        let p = &prims[i];
        let src = &model.meshes[p.mesh].primitives[p.primitive];
        let mut out = mesh::base(src);
        let n = f.positions.len();
        out.positions = f.positions;
        out.tangents = f.tangents.filter(|_| f.normals.is_some());
        out.normals = f.normals;
        let lookup = (g..g + n)
            .map(|v| {
                [
                    (v as f32 + 0.5) / dims.vertices as f32,
                    0.5 / dims.frames as f32,
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
    Ok((mesh_file, uv_sets))
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
    let (width, height, frames) = (dims.vertices, dims.frames, dims.frames);
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
        "mesh": {"file": mesh_file, "lookup_uv_set": LOOKUP_UV_SET, "vertices": dims.vertices, "bands": 1},
    });
    let text = serde_json::to_string_pretty(&sidecar).map_err(|e| {
        StepError::bare(rigbake_format::error::FormatError::Invalid(format!(
            "OpenVAT sidecar: {e}"
        )))
    })? + "\n";
    sink.write_file(&format!("{name}-openvat.rigbake.json"), text.as_bytes())?;
    Ok(())
}
