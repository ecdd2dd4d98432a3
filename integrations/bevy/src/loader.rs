//! The `.rigbake` asset loader: the container read through
//! `rigbake-format` (every record checked, its own size bound), its clip
//! table, and for the vertex-animation path each primitive's playback mesh
//! (through Bevy's glTF loader, `<playback>.glb#Mesh{k}/Primitive0`) and
//! its textures, decoded whole to RGBA 32-bit floats as a shader reads
//! them (EXR values as stored, normalised samples as `code / max`).

use std::io::Cursor;

use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext, RenderAssetUsages};
use bevy::gltf::Gltf;
use bevy::prelude::*;
use bevy::render::render_resource::{
    Extent3d, TextureDimension, TextureFormat, TextureViewDescriptor, TextureViewDimension,
};
use rigbake_core::runtime::ClipInfo;
use rigbake_format::container::Container;
use rigbake_format::meta::{
    DirectionEncoding, FoldedTexture, Storage, VatEncoding, VatMetadata, VatTextureMeta,
};
use rigbake_format::texture::gpu::{self, GpuSamples, TextureContainer};

use bevy::render::storage::ShaderBuffer;

use crate::material::{
    BoneParams, BoneRangeUniform, VatLayoutUniform, VatParams, VatStreamUniform,
};
use crate::rig::{AnchorTracks, ClipMotion, PropAnchor, RigbakeSettings, RootMotion};

/// A bake, loaded: its clips and what its vertex-animation path draws.
#[derive(Asset, TypePath, Debug)]
pub struct RigbakeBake {
    /// Clip names, in clip-table order.
    pub clip_names: Vec<String>,
    /// The runtime's view of each clip (rows, frames, rate, looping).
    pub clips: Vec<ClipInfo>,
    /// The vertex-animation path, when the bake has one.
    pub vat: Option<VatPath>,
    /// The bone-matrix path, when the bake has bone textures and weights.
    pub bones: Option<BonePath>,
    /// Anchor tracks and the props on them, when the bake has any.
    pub anchors: Option<AnchorTracks>,
    /// Root-motion tracks of clips baked in place.
    pub root_motion: RootMotion,
    /// The box every clip stays in, in the instance's space: the bounds
    /// record's boxes joined, else the VAT's positions' range; None when
    /// the bake has neither.
    pub bounds: Option<(Vec3, Vec3)>,
}

impl RigbakeBake {
    /// The index of the clip called `name`.
    pub fn clip(&self, name: &str) -> Option<usize> {
        self.clip_names.iter().position(|n| n == name)
    }
}

/// Every baked primitive of the vertex-animation path.
#[derive(Debug)]
pub struct VatPath {
    /// One entry per baked primitive, in the VAT record's order.
    pub primitives: Vec<VatPrimitive>,
    /// The reference node's placement in the source scene (the placement
    /// record; identity before it): VAT values are in that node's space,
    /// so the primitives sit under the instance at this transform.
    pub placement: Mat4,
    /// The playback mesh file (its materials are the primitives').
    pub file: Handle<Gltf>,
    /// The box the positions stay in (every texel of the position
    /// textures, padding included), placed.
    pub bounds: Option<(Vec3, Vec3)>,
}

/// One baked primitive: its playback mesh and textures.
#[derive(Debug, Clone)]
pub struct VatPrimitive {
    /// Its mesh's index in the playback mesh file.
    pub playback_mesh: usize,
    /// The source node it deforms (props baked as anchors are also in the
    /// VAT, as rigid primitives).
    pub node: String,
    /// The primitive's playback mesh (model space; place it with the
    /// instance's transform).
    pub mesh: Handle<Mesh>,
    /// Its positions, one array layer per page.
    pub positions: Handle<Image>,
    /// Its normals (the positions again for packed normals); None: no
    /// normals baked, the mesh's own are used.
    pub normals: Option<Handle<Image>>,
    /// Addressing and decoding, as the shader's uniform.
    pub params: VatParams,
    /// Its LOD level, when it is a level of a LOD group (the LOD record).
    pub lod_level: Option<u32>,
}

/// Every skinned primitive of the bone-matrix path.
#[derive(Debug)]
pub struct BonePath {
    /// One entry per weights primitive, in the weights record's order.
    pub primitives: Vec<BonePrimitive>,
}

/// One skinned primitive: its weights mesh, weight channels and bone
/// texture.
#[derive(Debug, Clone)]
pub struct BonePrimitive {
    /// The weights mesh's primitive (bind pose, mesh space).
    pub mesh: Handle<Mesh>,
    /// The weights mesh file (its materials are the primitives').
    pub file: Handle<Gltf>,
    /// The mesh's index in that file.
    pub mesh_index: usize,
    /// The primitive's index in that mesh.
    pub mesh_primitive: usize,
    /// Its bone set's texture (RGBA floats as a shader reads them).
    pub texture: Handle<Image>,
    /// Its weight channels, `channels` RGBA values a vertex
    /// (`array<vec4<f32>>`, formats/weights.md).
    pub weights: Handle<ShaderBuffer>,
    /// Layout, height, fold and channels, as the shader's uniform.
    pub params: BoneParams,
    /// The bone set's space node in the source scene (the placement
    /// record): the primitive sits under the instance at this transform.
    pub placement: Mat4,
    /// Its LOD level, when it is a level of a LOD group (the LOD record).
    pub lod_level: Option<u32>,
}

/// Why a bake cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Reading the container or a texture beside it failed.
    #[error("{file}: {reason}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        reason: String,
    },
}

fn fail(file: impl std::fmt::Display, reason: impl std::fmt::Display) -> LoadError {
    LoadError::Read {
        file: file.to_string(),
        reason: reason.to_string(),
    }
}

/// The largest container the loader reads: 4 GiB (two textures at the
/// format crate's decode limit, embedded).
pub const MAX_CONTAINER_BYTES: u64 = 2 * rigbake_format::texture::MAX_DECODED_BYTES;

/// Reads `reader` to its end, refusing more than `limit` bytes (it stops
/// one read past the limit, never holding much more).
async fn read_bounded(reader: &mut dyn Reader, limit: u64) -> Result<Vec<u8>, String> {
    use bevy::tasks::futures_lite::AsyncReadExt;
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(bytes);
        }
        if bytes.len() as u64 + n as u64 > limit {
            return Err(format!("larger than the {limit} bytes a container may be"));
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

/// Loads `.rigbake` containers as [`RigbakeBake`].
#[derive(Default, TypePath)]
pub struct RigbakeLoader;

impl AssetLoader for RigbakeLoader {
    type Asset = RigbakeBake;
    type Settings = RigbakeSettings;
    type Error = LoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &RigbakeSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<RigbakeBake, LoadError> {
        let name = load_context.path().to_string();
        let bytes = read_bounded(reader, MAX_CONTAINER_BYTES)
            .await
            .map_err(|e| fail(&name, e))?;
        let mut container =
            Container::from_reader(Cursor::new(bytes)).map_err(|e| fail(&name, e))?;
        container.verify().map_err(|e| fail(&name, e))?;
        let rule = container.metadata().options.sampling;
        let clips = &container.metadata().clips;
        let clip_names = clips.iter().map(|c| c.name.clone()).collect();
        let clip_infos = clips
            .iter()
            .map(|c| ClipInfo {
                start_row: c.start_row,
                frames: c.frames,
                fps: c.fps,
                duration: c.duration,
                looping: c.looping,
                rule,
            })
            .collect();
        let vat = match container.records().vat.clone() {
            Some(v) => Some(load_vat(&name, &mut container, &v, load_context).await?),
            None => None,
        };
        let bones = match container.records().weights.clone() {
            Some(w) if w.mesh_file.is_some() => {
                Some(load_bones(&name, &mut container, &w, load_context).await?)
            }
            _ => None,
        };
        let anchors = load_anchors(&name, &mut container, settings, load_context)?;
        let root_motion = RootMotion {
            clips: container
                .records()
                .root_motion
                .as_ref()
                .map(|r| {
                    r.clips
                        .iter()
                        .map(|c| {
                            (!c.track.is_empty()).then(|| ClipMotion {
                                track: c.track.clone(),
                                end: c.end,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        let bounds = bounds(&container).or_else(|| vat.as_ref().and_then(|v| v.bounds));
        Ok(RigbakeBake {
            bounds,
            clip_names,
            clips: clip_infos,
            vat,
            bones,
            anchors,
            root_motion,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["rigbake"]
    }
}

/// The reference node's placement (the placement record; identity before
/// it): VAT values, anchors and bounds are in that node's space.
fn reference_placement(container: &Container<Cursor<Vec<u8>>>) -> Mat4 {
    container
        .records()
        .placement
        .as_ref()
        .map_or(Mat4::IDENTITY, |p| {
            Mat4::from_cols_array(&p.reference.matrix.map(|v| v as f32))
        })
}

/// The bounds record's boxes joined and placed by the reference node's
/// placement (the boxes are in its space).
fn bounds(container: &Container<Cursor<Vec<u8>>>) -> Option<(Vec3, Vec3)> {
    let record = container.records().bounds.as_ref()?;
    let placement = reference_placement(container);
    let (lo, hi) = record.clips.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), b| (lo.min(Vec3::from(b.min)), hi.max(Vec3::from(b.max))),
    );
    (lo.is_finite() && hi.is_finite() && lo.cmple(hi).all()).then(|| place_box(placement, lo, hi))
}

/// The box around `lo..hi` moved by `m`.
pub(crate) fn place_box(m: Mat4, lo: Vec3, hi: Vec3) -> (Vec3, Vec3) {
    (0..8).fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(a, b), i| {
            let pick = |k: usize| if i >> k & 1 == 0 { lo[k] } else { hi[k] };
            let p = m.transform_point3(Vec3::new(pick(0), pick(1), pick(2)));
            (a.min(p), b.max(p))
        },
    )
}

/// The anchor tracks (their section, sized by the container's own check)
/// and, when props hang on them, the source model to draw them with.
fn load_anchors(
    name: &str,
    container: &mut Container<Cursor<Vec<u8>>>,
    settings: &RigbakeSettings,
    load_context: &mut LoadContext<'_>,
) -> Result<Option<AnchorTracks>, LoadError> {
    let Some(rig) = container.records().rig.clone() else {
        return Ok(None);
    };
    let Some(section) = rig.anchor_section else {
        return Ok(None);
    };
    let raw = container
        .read_section(section as usize)
        .map_err(|e| fail(name, format!("anchor tracks: {e}")))?;
    let data = raw
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let props: Vec<PropAnchor> = rig
        .anchors
        .iter()
        .enumerate()
        .filter_map(|(anchor, a)| {
            Some(PropAnchor {
                anchor,
                node: a.node.clone(),
                mesh: a.mesh.clone()?,
            })
        })
        .collect();
    let source = if props.is_empty() {
        None
    } else {
        let file = match &settings.source {
            Some(path) => path.clone(),
            None => {
                // The recorded name, beside the container: a plain name
                // only, never a path out of the folder.
                let recorded = &container.metadata().source.file_name;
                if !rigbake_format::check::is_plain_file_name(recorded) {
                    return Err(fail(
                        name,
                        format!("the source file name `{recorded}` is not a plain file name"),
                    ));
                }
                recorded.clone()
            }
        };
        let path = load_context
            .path()
            .resolve_embed_str(&file)
            .map_err(|e| fail(name, format!("source model `{file}`: {e}")))?;
        Some(load_context.load(path))
    };
    let placement = reference_placement(container);
    Ok(Some(AnchorTracks {
        names: rig.anchors.iter().map(|a| a.node.clone()).collect(),
        data,
        placement,
        props,
        source,
    }))
}

/// The VAT path: per primitive its playback mesh, textures and uniform.
async fn load_vat(
    name: &str,
    container: &mut Container<Cursor<Vec<u8>>>,
    vat: &VatMetadata,
    load_context: &mut LoadContext<'_>,
) -> Result<VatPath, LoadError> {
    let playback = vat
        .playback_file
        .clone()
        .ok_or_else(|| fail(name, "the bake has a VAT but no playback mesh file"))?;
    let gpu_container = container.records().texture_container();
    let layout = container.records().layout.clone().unwrap_or_default();
    let mut images: Vec<Option<Handle<Image>>> = vec![None; vat.textures.len()];
    // The positions' range per float texture, and over the whole VAT.
    let mut ranges: Vec<Option<(Vec3, Vec3)>> = vec![None; vat.textures.len()];
    let mut range: Option<(Vec3, Vec3)> = None;
    let levels = lod_levels(
        container.records().lods.as_ref(),
        vat.primitives.len(),
        |l| &l.vat_primitives,
    );
    let mut primitives = Vec::with_capacity(vat.primitives.len());
    for (i, p) in vat.primitives.iter().enumerate() {
        let fold = layout
            .folds
            .iter()
            .find(|f| f.texture == FoldedTexture::Vat(p.positions));
        let pages = fold.map_or(1, |f| f.pages.max(1));
        let positions_uniform = stream_uniform(&vat.textures[p.positions as usize]);
        let positions = texture_set(
            name,
            container,
            vat,
            (p.positions, pages),
            gpu_container,
            &mut images,
            &mut ranges,
            load_context,
        )
        .await?;
        let t = &vat.textures[p.positions as usize];
        let r = match t.bounds {
            Some([lo, hi]) if t.encoding.is_normalised() => Some((
                Vec3::new(lo[0], lo[1], lo[2]),
                Vec3::new(hi[0], hi[1], hi[2]),
            )),
            _ => ranges[p.positions as usize],
        };
        if let Some(r) = r {
            range = Some(range.map_or(r, |(lo, hi): (Vec3, Vec3)| (lo.min(r.0), hi.max(r.1))));
        }
        let (normals, normals_uniform) = match p.normals {
            Some(n) => {
                let h = texture_set(
                    name,
                    container,
                    vat,
                    (n, pages),
                    gpu_container,
                    &mut images,
                    &mut ranges,
                    load_context,
                )
                .await?;
                (Some(h), stream_uniform(&vat.textures[n as usize]))
            }
            None => (None, VatStreamUniform::default()),
        };
        let first_vertex = layout
            .vat
            .as_ref()
            .and_then(|l| l.first_vertex.get(i).copied())
            .unwrap_or(0);
        let params = VatParams {
            positions: positions_uniform,
            normals: normals_uniform,
            addressing: VatLayoutUniform {
                width: p.width,
                bands: p.bands,
                frames: p.frames,
                first_vertex,
                rows_per_block: fold.map_or(0, |f| f.rows_per_block),
                blocks_per_page: fold.map_or(0, |f| f.blocks_per_page),
            },
        };
        let mesh_path = load_context
            .path()
            .resolve_embed_str(&format!("{playback}#Mesh{}/Primitive0", p.playback_mesh))
            .map_err(|e| fail(name, format!("playback mesh `{playback}`: {e}")))?;
        let mesh = load_context.load(mesh_path);
        primitives.push(VatPrimitive {
            playback_mesh: p.playback_mesh as usize,
            node: p.node.clone(),
            mesh,
            positions,
            normals,
            params,
            lod_level: levels[i],
        });
    }
    let placement = reference_placement(container);
    let file = load_context
        .path()
        .resolve_embed_str(&playback)
        .map_err(|e| fail(name, format!("playback mesh `{playback}`: {e}")))?;
    let bounds = range.map(|(lo, hi)| place_box(placement, lo, hi));
    Ok(VatPath {
        primitives,
        bounds,
        placement,
        file: load_context.load(file),
    })
}

/// The LOD level of each entry of a record's primitive list (VAT or
/// weights), from the LOD record: `entries(level)` lists a level's.
fn lod_levels(
    lods: Option<&rigbake_format::meta::LodsMetadata>,
    count: usize,
    entries: impl Fn(&rigbake_format::meta::LodLevelMeta) -> &[u32],
) -> Vec<Option<u32>> {
    let mut out = vec![None; count];
    for group in lods.iter().flat_map(|l| &l.groups) {
        for (level, meta) in group.levels.iter().enumerate() {
            for &e in entries(meta) {
                if let Some(slot) = out.get_mut(e as usize) {
                    *slot = Some(level as u32);
                }
            }
        }
    }
    out
}

/// The weights mesh file of each weights primitive: a LOD level's own
/// (`<model>.lod<n>.weights.glb`, its LOD record entry), else the record's.
fn weights_files(
    lods: Option<&rigbake_format::meta::LodsMetadata>,
    weights: &rigbake_format::meta::WeightsMetadata,
) -> Vec<String> {
    let mut out = vec![weights.mesh_file.clone().unwrap_or_default(); weights.primitives.len()];
    for level in lods.iter().flat_map(|l| &l.groups).flat_map(|g| &g.levels) {
        if let Some(file) = &level.weights_file {
            for &e in &level.weights_primitives {
                if let Some(slot) = out.get_mut(e as usize) {
                    *slot = file.clone();
                }
            }
        }
    }
    out
}

/// The bone path: per weights primitive its mesh, channels, texture and
/// uniform.
async fn load_bones(
    name: &str,
    container: &mut Container<Cursor<Vec<u8>>>,
    weights: &rigbake_format::meta::WeightsMetadata,
    load_context: &mut LoadContext<'_>,
) -> Result<BonePath, LoadError> {
    let lods = container.records().lods.clone();
    let files = weights_files(lods.as_ref(), weights);
    let levels = lod_levels(lods.as_ref(), weights.primitives.len(), |l| {
        &l.weights_primitives
    });
    let metadata = container.metadata().clone();
    let layout = container.records().layout.clone().unwrap_or_default();
    let ranges = container.records().bone_ranges.clone();
    let placement = container.records().placement.clone();
    let gpu_container = container.records().texture_container();
    let mut textures: Vec<Option<Handle<Image>>> = vec![None; metadata.textures.len()];
    let channels = weights.channels.clamp(1, 4);
    // Timeline rows: the last row a state may read is `rows - 1`.
    let rows = metadata
        .clips
        .iter()
        .map(|c| c.start_row.saturating_add(c.frames))
        .max()
        .unwrap_or(1);
    let mut primitives = Vec::with_capacity(weights.primitives.len());
    for (k, p) in weights.primitives.iter().enumerate() {
        let skin = metadata.skins.get(p.skin as usize).ok_or_else(|| {
            fail(
                name,
                format!("weights primitive {k}: no bone set {}", p.skin),
            )
        })?;
        let t = skin.texture as usize;
        let meta = &metadata.textures[t];
        let texture = match &textures[t] {
            Some(h) => h.clone(),
            None => {
                let bytes = texture_bytes(
                    name,
                    container,
                    (&meta.name, meta.bytes, meta.crc32, meta.storage),
                    load_context,
                )
                .await?;
                let floats = decode_bone_texture(meta, &bytes, gpu_container)
                    .map_err(|e| fail(&meta.name, e))?;
                let image =
                    rgba_image(meta.width, meta.height, 1, floats, TextureViewDimension::D2);
                let h = load_context.add_labeled_asset(format!("bones{t}"), image);
                textures[t] = Some(h.clone());
                h
            }
        };
        let raw = container
            .read_section(p.section as usize)
            .map_err(|e| fail(name, format!("weights of `{}`: {e}", p.mesh)))?;
        let expected = p.vertices as usize * weights.channels as usize * 16;
        if raw.len() != expected {
            return Err(fail(
                name,
                format!(
                    "weights of `{}` are {} bytes, the record says {expected}",
                    p.mesh,
                    raw.len()
                ),
            ));
        }
        let values: Vec<Vec4> = raw
            .chunks_exact(16)
            .map(|b| {
                let f = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                Vec4::new(f(0), f(4), f(8), f(12))
            })
            .collect();
        let weights_buffer =
            load_context.add_labeled_asset(format!("weights{k}"), ShaderBuffer::from(values));
        let fold = layout
            .folds
            .iter()
            .find(|f| f.texture == FoldedTexture::Bones(t as u32));
        let unorm = meta.precision == rigbake_format::texture::Precision::Unorm16;
        let matrix_layout = match meta.layout {
            rigbake_format::meta::MatrixLayout::Mat4 => 0,
            rigbake_format::meta::MatrixLayout::Mat3x4 => 1,
            rigbake_format::meta::MatrixLayout::Qts if unorm => 3,
            rigbake_format::meta::MatrixLayout::Qts => 2,
        };
        let [min, max] = ranges
            .as_ref()
            .and_then(|r| r.textures.get(t).copied().flatten())
            .unwrap_or([[0.0; 4], [1.0; 4]]);
        let params = BoneParams {
            matrix_layout,
            height: rows,
            // Unfolded: one block of every row (rigbake.wgsl's
            // `bone_block_texel`).
            rows_per_block: fold.map_or(rows, |f| f.rows_per_block),
            block_width: fold.map_or(meta.width, |f| f.block_width),
            channels,
            range: BoneRangeUniform {
                min: Vec4::from_array(min),
                max: Vec4::from_array(max),
            },
        };
        let mesh_path = load_context
            .path()
            .resolve_embed_str(&format!(
                "{}#Mesh{}/Primitive{}",
                files[k], p.mesh_index, p.mesh_primitive
            ))
            .map_err(|e| fail(name, format!("weights mesh `{}`: {e}", files[k])))?;
        let mesh = load_context.load(mesh_path);
        let file = load_context
            .path()
            .resolve_embed_str(&files[k])
            .map_err(|e| fail(name, format!("weights mesh `{}`: {e}", files[k])))?;
        let file = load_context.load(file);
        let placement = placement
            .as_ref()
            .and_then(|pl| pl.skins.get(p.skin as usize))
            .map_or(Mat4::IDENTITY, |s| {
                Mat4::from_cols_array(&s.matrix.map(|v| v as f32))
            });
        primitives.push(BonePrimitive {
            mesh,
            file,
            mesh_index: p.mesh_index as usize,
            mesh_primitive: p.mesh_primitive as usize,
            texture,
            weights: weights_buffer,
            params,
            placement,
            lod_level: levels[k],
        });
    }
    Ok(BonePath { primitives })
}

/// RGBA floats of a bone-matrix texture as a shader reads them (floats as
/// stored, 16-bit normalised samples as `q / 65535`).
fn decode_bone_texture(
    t: &rigbake_format::meta::TextureMeta,
    bytes: &[u8],
    gpu_container: TextureContainer,
) -> Result<Vec<f32>, rigbake_format::FormatError> {
    use rigbake_format::texture::{exr, png};
    let (w, h) = (t.width as usize, t.height as usize);
    let unorm = t.precision == rigbake_format::texture::Precision::Unorm16;
    if !gpu_container.is_exr() {
        let spec = rigbake_format::texture::gpu_spec::GpuSpec {
            width: w,
            height: h,
            layers: 1,
            sample: rigbake_format::texture::gpu_spec::SampleType::of_precision(t.precision),
        };
        return Ok(unorm_floats(gpu::read(bytes, gpu_container, &spec)?));
    }
    if unorm {
        let d = png::read_expecting(Cursor::new(bytes), w, h)?;
        return Ok(d.samples.iter().map(|&q| f32::from(q) / 65535.0).collect());
    }
    Ok(exr::read_expecting(Cursor::new(bytes), w, h)?.data)
}

/// GPU samples as the floats a shader's fetch returns.
fn unorm_floats(samples: GpuSamples) -> Vec<f32> {
    match samples {
        GpuSamples::Float(v) => v,
        GpuSamples::Unorm16(v) => v.iter().map(|&q| f32::from(q) / 65535.0).collect(),
        GpuSamples::Unorm { codes, max } => codes
            .iter()
            .enumerate()
            .map(|(i, &q)| f32::from(q) / f32::from(max[i % 4]))
            .collect(),
    }
}

/// An RGBA32F image of `layers` layers viewed as `dimension`.
fn rgba_image(
    width: u32,
    height: u32,
    layers: u32,
    floats: Vec<f32>,
    dimension: TextureViewDimension,
) -> Image {
    let mut image = Image::new(
        Extent3d {
            width,
            height,
            depth_or_array_layers: layers,
        },
        TextureDimension::D2,
        bytemuck::cast_slice(&floats).to_vec(),
        TextureFormat::Rgba32Float,
        RenderAssetUsages::RENDER_WORLD,
    );
    image.texture_view_descriptor = Some(TextureViewDescriptor {
        dimension: Some(dimension),
        ..default()
    });
    image
}

/// The shader's decoding of one VAT texture record.
fn stream_uniform(t: &VatTextureMeta) -> VatStreamUniform {
    let encoding = if !t.encoding.is_normalised() {
        0
    } else {
        match t.direction_encoding {
            DirectionEncoding::Octahedral
                if t.stream != rigbake_format::meta::VatStream::Positions =>
            {
                2
            }
            DirectionEncoding::Packed => 3,
            _ => 1,
        }
    };
    let [min, max] = t.bounds.unwrap_or([[0.0; 4], [1.0; 4]]);
    VatStreamUniform {
        encoding,
        bounds_min: Vec4::from_array(min),
        bounds_max: Vec4::from_array(max),
    }
}

/// The image of the `pages` pages of the stream whose page 0 is texture
/// `first` (one layer a page), decoded once and shared by every primitive
/// of its set.
async fn texture_set(
    name: &str,
    container: &mut Container<Cursor<Vec<u8>>>,
    vat: &VatMetadata,
    (first, pages): (u32, u32),
    gpu_container: TextureContainer,
    images: &mut [Option<Handle<Image>>],
    ranges: &mut [Option<(Vec3, Vec3)>],
    load_context: &mut LoadContext<'_>,
) -> Result<Handle<Image>, LoadError> {
    if let Some(h) = &images[first as usize] {
        return Ok(h.clone());
    }
    let t = &vat.textures[first as usize];
    let (width, height) = (t.width as usize, t.height as usize);
    let page_floats = width * height * 4;
    // Bounded before anything is allocated: RGBA32F of every page.
    let bytes_needed = page_floats as u64 * u64::from(pages) * 4;
    if bytes_needed > rigbake_format::texture::MAX_DECODED_BYTES {
        return Err(fail(
            &t.name,
            format!(
                "{pages} pages of {width} x {height} RGBA floats are {bytes_needed} bytes, more than the {} a texture may decode to",
                rigbake_format::texture::MAX_DECODED_BYTES
            ),
        ));
    }
    let mut floats = Vec::new();
    if gpu_container.is_exr() {
        for k in 0..pages {
            let page = &vat.textures[(first + k) as usize];
            let bytes = texture_bytes(
                name,
                container,
                (&page.name, page.bytes, page.crc32, page.storage),
                load_context,
            )
            .await?;
            floats.extend(decode_file(page, &bytes).map_err(|e| fail(&page.name, e))?);
        }
    } else {
        let bytes = texture_bytes(
            name,
            container,
            (&t.name, t.bytes, t.crc32, t.storage),
            load_context,
        )
        .await?;
        let spec = rigbake_format::texture::gpu_spec::GpuSpec {
            width,
            height,
            layers: pages as usize,
            sample: rigbake_format::vat::sample_type(t.encoding),
        };
        let samples = gpu::read(&bytes, gpu_container, &spec).map_err(|e| fail(&t.name, e))?;
        floats = unorm_floats(samples);
    }
    if floats.len() != page_floats * pages as usize {
        return Err(fail(
            &t.name,
            format!(
                "decodes to {} values, the records say {} pages of {width} x {height} RGBA",
                floats.len(),
                pages
            ),
        ));
    }
    if t.stream == rigbake_format::meta::VatStream::Positions && !t.encoding.is_normalised() {
        ranges[first as usize] = floats
            .chunks_exact(4)
            .map(|p| Vec3::new(p[0], p[1], p[2]))
            .filter(|p| p.is_finite())
            .fold(None, |r: Option<(Vec3, Vec3)>, p| {
                Some(r.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))))
            });
    }
    let image = rgba_image(
        t.width,
        t.height,
        pages,
        floats,
        TextureViewDimension::D2Array,
    );
    let handle = load_context.add_labeled_asset(format!("vat{first}"), image);
    images[first as usize] = Some(handle.clone());
    Ok(handle)
}

/// The encoded bytes of texture `t`: embedded in the container, or the
/// file beside it (its name is a plain file name: the container's checks
/// refuse separators), checked against the recorded size and CRC-32.
async fn texture_bytes(
    name: &str,
    container: &mut Container<Cursor<Vec<u8>>>,
    (file, size, crc, storage): (&str, u64, u32, Storage),
    load_context: &mut LoadContext<'_>,
) -> Result<Vec<u8>, LoadError> {
    let bytes = match storage {
        Storage::Section(s) => container
            .read_section(s as usize)
            .map_err(|e| fail(name, format!("texture `{file}`: {e}")))?,
        Storage::File => {
            let path = load_context
                .path()
                .resolve_embed_str(file)
                .map_err(|e| fail(file, e))?;
            load_context
                .read_asset_bytes(path)
                .await
                .map_err(|e| fail(file, e))?
        }
    };
    if bytes.len() as u64 != size || crc32(&bytes) != crc {
        return Err(fail(
            file,
            format!(
                "{} bytes with CRC-32 {:08x}, the container records {size} bytes with {crc:08x}",
                bytes.len(),
                crc32(&bytes)
            ),
        ));
    }
    Ok(bytes)
}

fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// RGBA floats of one EXR or PNG page, as a shader reads them.
fn decode_file(t: &VatTextureMeta, bytes: &[u8]) -> Result<Vec<f32>, rigbake_format::FormatError> {
    use rigbake_format::texture::{exr, png};
    let (w, h) = (t.width as usize, t.height as usize);
    Ok(match t.encoding {
        VatEncoding::Exr32 | VatEncoding::Exr16 => {
            exr::read_expecting(Cursor::new(bytes), w, h)?.data
        }
        _ => {
            let d = png::read_expecting(Cursor::new(bytes), w, h)?;
            let c = d.channels;
            let mut out = Vec::with_capacity(w * h * 4);
            for texel in d.samples.chunks_exact(c) {
                for k in 0..4 {
                    out.push(texel.get(k).map_or(1.0, |&q| f32::from(q) / 65535.0));
                }
            }
            out
        }
    })
}
