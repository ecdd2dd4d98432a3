//! The JSON sidecar `<stem>.rigbake.json`: the engine-facing description of
//! a bake, written beside every container (`formats/sidecar.md`, schema
//! `formats/sidecar.schema.json`). It says, in plain JSON, what an engine
//! needs to play the bake: clips and their rows, animated bounds, joints,
//! anchors, every texture with its size, layout, encoding, value bounds,
//! recorded error and row orientation, and how the meshes address them.
//!
//! It is a pure function of the container's records ([`Sidecar::build`]),
//! so `rigbake inspect --json` shows the same document (its `sidecar`
//! field) for any container, and a test keeps the file and that field equal.

use rigbake_format::meta::{
    DirectionEncoding, FoldMeta, FoldedTexture, Metadata, PrimitiveUvSets, RootMotionMetadata,
    Storage, VatLayoutMode,
};
use rigbake_format::texture::gpu::TextureContainer;
use schemars::JsonSchema;
use serde::Serialize;

/// Version of the sidecar document layout.
pub const SIDECAR_SCHEMA_VERSION: u32 = 1;

/// The file name of the sidecar of container `container_name`.
pub fn sidecar_name(container_name: &str) -> String {
    format!("{container_name}.json")
}

/// How texture rows map to file rows and texels to coordinates: the same
/// for every texture of a bake (`formats/textures.md`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Orientation {
    /// Which file row is texture row 0.
    pub rows: RowOrder,
    /// Where in a texel it is sampled.
    pub texel: TexelPosition,
}

/// Which file row is texture row 0 (the same for every bake).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RowOrder {
    /// Texture row 0 (the first frame of the first clip) is EXR scanline 0
    /// (the top line of the data window, written first) and the first row
    /// of a PNG. A loader that flips images vertically on upload (three.js
    /// `flipY`, OpenGL-style bottom-up uploads) puts row `r` at
    /// `height - 1 - r`.
    Row0First,
}

/// Where a texel is sampled (the same for every bake).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TexelPosition {
    /// Texel `(x, y)` is sampled at `((x + 0.5) / width, (y + 0.5) /
    /// height)`, `y` counted from row 0, with nearest filtering.
    Centre,
}

/// The orientation every bake uses.
pub const ORIENTATION: Orientation = Orientation {
    rows: RowOrder::Row0First,
    texel: TexelPosition::Centre,
};

/// The sidecar `<stem>.rigbake.json`: the engine-facing description of a
/// bake, written beside every container (`formats/sidecar.md`). Fields
/// may be added in later schema versions; `schema_version` changes when a
/// field changes meaning or disappears.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Sidecar {
    /// The document layout's version: it changes when a field changes
    /// meaning or disappears.
    #[schemars(extend("const" = SIDECAR_SCHEMA_VERSION))]
    pub schema_version: u32,
    /// The container's file name, beside the sidecar.
    pub container: String,
    /// The source model's file name and SHA-256.
    pub source: SourceRef,
    /// Frames per second of every clip.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub fps: f64,
    /// Frame time rule (`fixed_rate` or `even_spread`).
    pub sampling: rigbake_format::meta::SamplingRule,
    /// Row order and texel centres of every texture.
    pub orientation: Orientation,
    /// Node whose space positions, bounds and anchors are in (`null`: the
    /// scene root).
    pub reference_node: Option<String>,
    /// Where the reference node stands in the source scene: its name and
    /// rest-pose global matrix (column-major), the node transform of the
    /// VAT meshes (format 1.11; the key is absent for older containers).
    /// An instance's world transform is instance * root motion (scene
    /// space) * placement * vertex.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "rigbake_format::meta::Placement")]
    pub placement: Option<rigbake_format::meta::Placement>,
    /// Clips in row order.
    pub clips: Vec<SidecarClip>,
    /// Bone sets: joints and their texture.
    pub skins: Vec<SidecarSkin>,
    /// Anchor tracks.
    pub anchors: Vec<SidecarAnchor>,
    /// The anchor texture, if written.
    pub anchor_texture: Option<SidecarAnchorTexture>,
    /// Every texture of the bake.
    pub textures: Vec<SidecarTexture>,
    /// The bone-weight path: the weights mesh and its channels.
    pub weights: Option<SidecarWeights>,
    /// The VAT path: the playback mesh and each primitive's addressing.
    pub vat: Option<SidecarVat>,
    /// Root motion of clips baked in place (`null` when every clip keeps
    /// its motion): the motion root, and per clip (in clip order) its mode,
    /// total travel and turn, and per-frame track (see
    /// `docs/root-motion.md`). The same fields as the container's record.
    pub root_motion: Option<RootMotionMetadata>,
    /// LOD groups, when the model has any (the key is absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lods: Vec<SidecarLodGroup>,
    /// What each texture's encoding costs per clip (the clip-error record,
    /// field for field: formats/metadata.md, "Clip errors"); absent for
    /// containers before format 1.14.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip_errors: Option<rigbake_format::meta::ClipErrorsMetadata>,
}

/// One LOD group: a skinned mesh and its lower levels of detail, sharing
/// one bone texture and one VAT texture set.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarLodGroup {
    /// How it was recognised: `msft_lod`, `name_suffix` or `manifest`.
    pub source: rigbake_format::meta::LodSource,
    /// The levels, level 0 (full detail) first.
    #[schemars(length(min = 2, max = 16))]
    pub levels: Vec<SidecarLodLevel>,
}

/// One level of a LOD group.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarLodLevel {
    /// Level number (0: full detail).
    pub level: u32,
    /// The LOD record's entry, field for field (node, mesh, vertices,
    /// triangles, screen coverage, weights file, weights and VAT
    /// primitives).
    #[serde(flatten)]
    pub record: rigbake_format::meta::LodLevelMeta,
    /// The file the level came from, when it is not the source model
    /// (absent otherwise): path relative to the container, name, SHA-256
    /// and the level's node in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "rigbake_format::meta::LodFileMeta")]
    pub file: Option<rigbake_format::meta::LodFileMeta>,
    /// Bone-weight pairs the level keeps per vertex (format 1.9 and later).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1, max = 8))]
    pub max_influences: Option<u32>,
    /// Largest fraction of a vertex's weight the level dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0))]
    pub dropped_max: Option<f64>,
    /// Largest position error the dropped influences cause, model units.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0))]
    pub position_error: Option<f64>,
}

/// The source a bake came from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SourceRef {
    /// File name.
    pub file_name: String,
    /// SHA-256 of its bytes, lowercase hex.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub sha256: String,
}

/// One clip.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarClip {
    /// Name.
    pub name: String,
    /// First texture row.
    pub start_row: u32,
    /// Frames (rows).
    #[schemars(range(min = 1))]
    pub frames: u32,
    /// Frames per second.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub fps: f64,
    /// Duration in seconds.
    #[schemars(range(min = 0))]
    pub duration: f64,
    /// Whether it loops.
    pub looping: bool,
    /// Box holding every vertex at every frame of the clip (`null` for a
    /// container without the bounds record, format < 1.6).
    pub bounds: Option<SidecarBox>,
}

/// An axis-aligned box.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarBox {
    /// Smallest x, y, z.
    pub min: [f32; 3],
    /// Largest x, y, z.
    pub max: [f32; 3],
}

/// One bone set.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarSkin {
    /// Source skin name.
    pub name: String,
    /// Joint names: joint `j` is pixel block `j` of the texture.
    pub joints: Vec<String>,
    /// Parent of each joint (-1: root).
    #[schemars(inner(range(min = -1)))]
    pub parents: Vec<i32>,
    /// Mesh nodes playing from this set.
    pub mesh_nodes: Vec<String>,
    /// Index in `textures` of its bone texture.
    pub texture: usize,
    /// Where the set's space node stands: its name and rest-pose global
    /// matrix, the node transform of its weights meshes (format 1.11; the
    /// key is absent for older containers).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "rigbake_format::meta::Placement")]
    pub placement: Option<rigbake_format::meta::Placement>,
}

/// One anchor track.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarAnchor {
    /// The node.
    pub node: String,
    /// `requested`, `auto` or `prop`.
    pub reason: rigbake_format::meta::AnchorReason,
    /// For props: the mesh drawn with the anchor.
    pub mesh: Option<String>,
    /// First pixel of its matrix in a row of the anchor texture (`4a`:
    /// pixels `4a..4a+4` are the matrix columns).
    pub pixel: usize,
}

/// The anchor texture (`--anchors-exr`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarAnchorTexture {
    /// File name beside the container.
    pub file: String,
    /// How its rows fold, when taller than the maximum size.
    pub fold: Option<SidecarFold>,
}

/// How a texture taller than the maximum size continues its rows in column
/// blocks (formats/metadata.md, `FoldMeta`): timeline row `r`, texel
/// `(x, y)` of its unfolded row is at texel
/// `((b mod blocks_per_page) * block_width + x, (r mod rows_per_block) * row_height + y)`
/// with `b = r div rows_per_block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarFold {
    /// Timeline rows per column block.
    #[schemars(range(min = 1))]
    pub rows_per_block: u32,
    /// Texel rows one timeline row takes.
    #[schemars(range(min = 1))]
    pub row_height: u32,
    /// Texel columns of one block (the unfolded width).
    #[schemars(range(min = 1))]
    pub block_width: u32,
    /// Blocks side by side.
    #[schemars(range(min = 1))]
    pub blocks_per_page: u32,
    /// Pages (one texture each).
    #[schemars(range(min = 1))]
    pub pages: u32,
}

impl From<&FoldMeta> for SidecarFold {
    fn from(f: &FoldMeta) -> Self {
        Self {
            rows_per_block: f.rows_per_block,
            row_height: f.row_height,
            block_width: f.block_width,
            blocks_per_page: f.blocks_per_page,
            pages: f.pages,
        }
    }
}

/// What a texture holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Skin matrices.
    BoneMatrices,
    /// VAT positions.
    VatPositions,
    /// VAT normals.
    VatNormals,
    /// VAT tangents.
    VatTangents,
}

/// One texture.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarTexture {
    /// File name beside the container (or the name of embedded bytes).
    pub file: String,
    /// Where its bytes are.
    pub storage: TextureStorage,
    /// What it holds.
    pub role: Role,
    /// Width in texels.
    #[schemars(range(min = 1))]
    pub width: u32,
    /// Height in texels.
    #[schemars(range(min = 1))]
    pub height: u32,
    /// Channels stored (4: RGBA, 3: RGB).
    #[schemars(range(min = 3, max = 4))]
    pub channels: u8,
    /// Matrix layout (`mat4`, `mat3x4`) of bone textures; `null` for VAT.
    pub layout: Option<rigbake_format::meta::MatrixLayout>,
    /// File container and sample type.
    pub encoding: TextureEncoding,
    /// `zstd` for KTX2 files with Zstandard supercompression; absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Supercompression")]
    pub supercompression: Option<Supercompression>,
    /// Per-channel `[min, max]` for bounds-normalised PNG16 samples
    /// (`value = min + sample / 65535 * (max - min)`): VAT textures, and
    /// `qts` bone textures at `unorm16` (their texel `2j + 1`; texel `2j`
    /// is the quaternion as `sample / 65535 * 2 - 1`); `null` otherwise.
    pub bounds: Option<[[f32; 4]; 2]>,
    /// How a VAT direction texture's 16-bit samples decode (`png16` and
    /// the `unorm16` containers): `bounds` (by `bounds`, as positions),
    /// `octahedral` (R, G the octahedral coordinates) or `packed` (the
    /// alpha of the positions texel holds `256 * ux + uy`, and `file` names
    /// the positions file; since format 1.13); absent for positions, bone
    /// textures and float samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "DirectionEncoding")]
    pub direction_encoding: Option<DirectionEncoding>,
    /// Largest error the encoding introduced (model units; degrees for VAT
    /// normals and tangents).
    #[schemars(range(min = 0))]
    pub max_error: f64,
    /// How its rows fold, when taller than the maximum size; `null`: row
    /// `r` is texel row `r` (VAT: `r * bands`). Every page of a folded VAT
    /// stream carries its stream's fold.
    pub fold: Option<SidecarFold>,
    /// Which page of its folded VAT stream this texture is, for pages after
    /// the first (page `k` of the stream whose first page is texture `t` is
    /// texture `t + k`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1))]
    pub page: Option<u32>,
    /// For KTX2 and DDS pages of a folded VAT stream: the array layer of
    /// `file` that holds this page (every page names the same file); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub layer: Option<u32>,
}

/// Where a texture's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TextureStorage {
    /// A file beside the container, named by `file`.
    File,
    /// Embedded in the container (`file` names the bytes when extracted).
    Embedded,
    /// In the shared bone store: `file` is a path relative to the
    /// container's folder.
    Shared,
}

/// A texture's file container and sample type. KTX2 and DDS files
/// (`--texture-container`) hold RGBA texels, alpha 1 for RGB streams;
/// their UNORM samples decode as PNG16's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TextureEncoding {
    /// OpenEXR, 32-bit floats.
    ExrF32,
    /// OpenEXR, 16-bit half floats.
    ExrF16,
    /// 16-bit PNG, samples normalised to the texture's `bounds`.
    Png16,
    /// KTX2, 32-bit floats.
    Ktx2F32,
    /// KTX2, 16-bit half floats.
    Ktx2F16,
    /// KTX2, 16-bit UNORM samples normalised to the texture's `bounds`.
    Ktx2Unorm16,
    /// DDS, 32-bit floats.
    DdsF32,
    /// DDS, 16-bit half floats.
    DdsF16,
    /// DDS, 16-bit UNORM samples normalised to the texture's `bounds`.
    DdsUnorm16,
    /// KTX2, `R8G8B8A8_UNORM` samples normalised like `ktx2_unorm16`
    /// (VAT `unorm8`, since format 1.15).
    Ktx2Unorm8,
    /// KTX2, `A2B10G10R10_UNORM_PACK32` samples normalised like
    /// `ktx2_unorm16` (VAT `unorm10`, since format 1.15).
    Ktx2Unorm10,
    /// DDS, `R8G8B8A8_UNORM` samples (VAT `unorm8`).
    DdsUnorm8,
    /// DDS, `R10G10B10A2_UNORM` samples (VAT `unorm10`).
    DdsUnorm10,
}

/// A KTX2 file's supercompression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Supercompression {
    /// Zstandard (KTX2 `supercompressionScheme` 2).
    Zstd,
}

/// The sidecar's `encoding` of samples `sample` (`f32`, `f16`, `unorm16`)
/// in the bake's `container` (`png` for the default container's 16-bit
/// files).
fn encoding_name(container: TextureContainer, sample: &str) -> TextureEncoding {
    use TextureEncoding as E;
    match (container, sample) {
        (TextureContainer::Exr, "f32") => E::ExrF32,
        (TextureContainer::Exr, "f16") => E::ExrF16,
        (TextureContainer::Exr, _) => E::Png16,
        (TextureContainer::Ktx2 | TextureContainer::Ktx2Zstd, "f32") => E::Ktx2F32,
        (TextureContainer::Ktx2 | TextureContainer::Ktx2Zstd, "f16") => E::Ktx2F16,
        (TextureContainer::Ktx2 | TextureContainer::Ktx2Zstd, "unorm8") => E::Ktx2Unorm8,
        (TextureContainer::Ktx2 | TextureContainer::Ktx2Zstd, "unorm10") => E::Ktx2Unorm10,
        (TextureContainer::Dds, "unorm8") => E::DdsUnorm8,
        (TextureContainer::Dds, "unorm10") => E::DdsUnorm10,
        (TextureContainer::Ktx2 | TextureContainer::Ktx2Zstd, _) => E::Ktx2Unorm16,
        (TextureContainer::Dds, "f32") => E::DdsF32,
        (TextureContainer::Dds, "f16") => E::DdsF16,
        (TextureContainer::Dds, _) => E::DdsUnorm16,
    }
}

/// The bone-weight path.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarWeights {
    /// The weights mesh file, if written.
    pub mesh_file: Option<String>,
    /// Bone/weight pairs per vertex.
    #[schemars(range(min = 1, max = 8))]
    pub max_influences: u32,
    /// RGBA channels per vertex: channel `c` is `(bone 2c, weight 2c, bone
    /// 2c+1, weight 2c+1)`.
    #[schemars(range(min = 1, max = 4))]
    pub channels: u32,
    /// The mesh attribute names of the channels, in channel order.
    pub attributes: Vec<String>,
    /// Every skinned primitive instance.
    pub primitives: Vec<SidecarWeightsPrimitive>,
}

/// One primitive of the weights mesh.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarWeightsPrimitive {
    /// Node name in the source.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// Primitive index in the source mesh.
    pub primitive: u32,
    /// Index in `skins` of the bone set whose texture the bone indices
    /// address.
    pub skin: u32,
    /// The weights mesh file holding this primitive when it is not
    /// `weights.mesh_file` (LOD levels 1 and up); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub mesh_file: Option<String>,
    /// Mesh and primitive index in the weights mesh file.
    pub mesh_index: u32,
    /// Primitive index within that mesh.
    pub mesh_primitive: u32,
    /// For a prop bound to a joint: the joint.
    pub bound_to: Option<String>,
    /// With `--weights-as-uv`: the first TEXCOORD set holding the weight
    /// pairs (two sets per channel: bones, then weights); `null` otherwise.
    pub weights_uv_first: Option<u32>,
    /// Largest position error the influence limit causes (model units).
    #[schemars(range(min = 0))]
    pub position_error: f64,
}

/// The VAT path.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarVat {
    /// The playback mesh file, if written.
    pub mesh_file: Option<String>,
    /// `inverse_transpose` or `blended_matrix`.
    pub normal_convention: rigbake_format::meta::NormalConvention,
    /// `atlas` (one texture set for every primitive) or `per_primitive`.
    pub layout: VatLayoutMode,
    /// How the playback mesh's lookup UV addresses texels: `split_index`
    /// (format 1.11); absent for older bakes, whose lookup UV is the
    /// normalised texel centre (`formats/vat.md`, "Playback mesh").
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "rigbake_format::meta::LookupUv")]
    pub lookup_uv: Option<rigbake_format::meta::LookupUv>,
    /// Each baked primitive: where its vertices are in its textures.
    pub primitives: Vec<SidecarVatPrimitive>,
}

/// One VAT primitive.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SidecarVatPrimitive {
    /// Node name in the source.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// Primitive index in the source mesh.
    pub primitive: u32,
    /// Vertices.
    #[schemars(range(min = 1))]
    pub vertices: u32,
    /// Its first vertex in its texture set: vertex `v` is set vertex
    /// `a = first_vertex + v`, at texel `(a mod width, r * bands + a div
    /// width)` for timeline row `r`.
    pub first_vertex: u32,
    /// Texture width.
    #[schemars(range(min = 1))]
    pub width: u32,
    /// Texture rows per frame.
    #[schemars(range(min = 1))]
    pub bands: u32,
    /// Index in `textures` of its positions.
    pub positions: usize,
    /// Index of its normals, if baked.
    pub normals: Option<usize>,
    /// Index of its tangents, if baked.
    pub tangents: Option<usize>,
    /// Mesh index in the playback mesh file.
    pub playback_mesh: u32,
    /// The TEXCOORD set of its playback mesh holding the lookup UV (`null`
    /// for a container older than 1.7: the last set).
    pub lookup_uv_set: Option<u32>,
}

/// What a sidecar is built from: one container's name, metadata and
/// records.
#[derive(Debug, Clone, Copy)]
pub struct Records<'a> {
    /// The container's file name.
    pub container: &'a str,
    /// Bake metadata.
    pub metadata: &'a Metadata,
    /// Every optional record.
    pub records: &'a rigbake_format::records::Records,
}

fn storage_name(storage: Storage, name: &str) -> TextureStorage {
    match storage {
        Storage::Section(_) => TextureStorage::Embedded,
        Storage::File if name.contains('/') => TextureStorage::Shared,
        Storage::File => TextureStorage::File,
    }
}

impl Sidecar {
    /// The sidecar of a container's records.
    pub fn build(r: Records<'_>) -> Self {
        let m = r.metadata;
        let fold = |t: FoldedTexture| {
            r.records
                .layout
                .as_ref()
                .and_then(|l| l.folds.iter().find(|f| f.texture == t))
                .map(SidecarFold::from)
        };
        let textures = textures_part(&r);
        let vat_base = m.textures.len();
        let boxes = r.records.bounds.as_ref().map(|b| &b.clips);
        Self {
            schema_version: SIDECAR_SCHEMA_VERSION,
            container: r.container.to_owned(),
            source: SourceRef {
                file_name: m.source.file_name.clone(),
                sha256: m.source.sha256.clone(),
            },
            fps: m.options.fps,
            sampling: m.options.sampling,
            orientation: ORIENTATION,
            reference_node: r
                .records
                .bounds
                .as_ref()
                .and_then(|b| b.reference_node.clone())
                .or_else(|| {
                    r.records
                        .vat
                        .as_ref()
                        .and_then(|v| v.reference_node.clone())
                })
                .or_else(|| {
                    r.records
                        .rig
                        .as_ref()
                        .and_then(|g| g.reference_node.clone())
                }),
            placement: r.records.placement.as_ref().map(|p| p.reference.clone()),
            clips: m
                .clips
                .iter()
                .enumerate()
                .map(|(i, c)| SidecarClip {
                    name: c.name.clone(),
                    start_row: c.start_row,
                    frames: c.frames,
                    fps: c.fps,
                    duration: c.duration,
                    looping: c.looping,
                    bounds: boxes.and_then(|b| b.get(i)).map(|b| SidecarBox {
                        min: b.min,
                        max: b.max,
                    }),
                })
                .collect(),
            skins: m
                .skins
                .iter()
                .enumerate()
                .map(|(i, s)| SidecarSkin {
                    name: s.name.clone(),
                    joints: s.joints.clone(),
                    parents: s.parents.clone(),
                    mesh_nodes: s.mesh_nodes.clone(),
                    texture: s.texture as usize,
                    placement: r
                        .records
                        .placement
                        .as_ref()
                        .and_then(|p| p.skins.get(i))
                        .cloned(),
                })
                .collect(),
            anchors: r
                .records
                .rig
                .as_ref()
                .map(|g| {
                    g.anchors
                        .iter()
                        .enumerate()
                        .map(|(a, x)| SidecarAnchor {
                            node: x.node.clone(),
                            reason: x.reason,
                            mesh: x.mesh.clone(),
                            pixel: 4 * a,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            anchor_texture: r
                .records
                .rig
                .as_ref()
                .and_then(|g| g.anchor_texture.clone())
                .map(|file| SidecarAnchorTexture {
                    file,
                    fold: fold(FoldedTexture::Anchors),
                }),
            textures,
            weights: weights_part(&r),
            vat: vat_part(&r, vat_base),
            root_motion: r.records.root_motion.as_ref().cloned(),
            clip_errors: r.records.clip_errors.as_ref().cloned(),
            lods: lods_part(&r),
        }
    }

    /// The document as pretty-printed JSON with a final newline (the
    /// sidecar file's bytes: deterministic, field order fixed).
    pub fn to_bytes(&self) -> serde_json::Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// Every texture: the bone textures, then the VAT textures (with their
/// folds, pages and layers).
fn textures_part(r: &Records<'_>) -> Vec<SidecarTexture> {
    use rigbake_format::meta::{VatEncoding, VatStream};
    use rigbake_format::texture::Precision;
    let m = r.metadata;
    let container = r.records.texture_container();
    let supercompression =
        (container == TextureContainer::Ktx2Zstd).then_some(Supercompression::Zstd);
    let fold = |t: FoldedTexture| {
        r.records
            .layout
            .as_ref()
            .and_then(|l| l.folds.iter().find(|f| f.texture == t))
            .map(SidecarFold::from)
    };
    let mut textures: Vec<SidecarTexture> = m
        .textures
        .iter()
        .enumerate()
        .map(|(i, t)| SidecarTexture {
            fold: fold(FoldedTexture::Bones(i as u32)),
            page: None,
            file: t.name.clone(),
            storage: storage_name(t.storage, &t.name),
            role: Role::BoneMatrices,
            width: t.width,
            height: t.height,
            channels: 4,
            layout: Some(t.layout),
            encoding: encoding_name(
                container,
                match t.precision {
                    Precision::F32 => "f32",
                    Precision::F16 => "f16",
                    Precision::Unorm16 => "unorm16",
                },
            ),
            supercompression,
            layer: None,
            bounds: r
                .records
                .bone_ranges
                .as_ref()
                .and_then(|b| b.textures.get(i).copied().flatten()),
            direction_encoding: None,
            max_error: t.max_error,
        })
        .collect();
    if let Some(vat) = r.records.vat.as_ref() {
        // Each VAT texture's fold and page: a folded stream's fold is
        // recorded on its first page, and pages follow it in order.
        let mut pages: Vec<(Option<SidecarFold>, Option<u32>)> =
            vec![(None, None); vat.textures.len()];
        for f in r.records.layout.as_ref().map_or(&[][..], |l| &l.folds[..]) {
            if let FoldedTexture::Vat(first) = f.texture {
                for k in 0..f.pages {
                    let at = first as usize + k as usize;
                    if let Some(slot) = pages.get_mut(at) {
                        *slot = (Some(SidecarFold::from(f)), (k > 0).then_some(k));
                    }
                }
            }
        }
        textures.extend(vat.textures.iter().zip(pages).map(|(t, (fold, page))| {
            SidecarTexture {
                fold,
                page,
                file: t.name.clone(),
                storage: storage_name(t.storage, &t.name),
                role: match t.stream {
                    VatStream::Positions => Role::VatPositions,
                    VatStream::Normals => Role::VatNormals,
                    VatStream::Tangents => Role::VatTangents,
                },
                width: t.width,
                height: t.height,
                channels: t.channels,
                layout: None,
                encoding: encoding_name(
                    container,
                    match t.encoding {
                        VatEncoding::Exr32 => "f32",
                        VatEncoding::Exr16 => "f16",
                        VatEncoding::Png16 => "unorm16",
                        VatEncoding::Unorm8 => "unorm8",
                        VatEncoding::Unorm10 => "unorm10",
                    },
                ),
                supercompression,
                // KTX2 and DDS keep a folded stream's pages as layers.
                layer: fold
                    .filter(|f| f.pages > 1 && !container.is_exr())
                    .map(|_| page.unwrap_or(0)),
                bounds: t.bounds,
                direction_encoding: (t.stream != VatStream::Positions
                    && t.encoding.is_normalised())
                .then_some(t.direction_encoding),
                max_error: t.max_error,
            }
        }));
    }
    textures
}

/// The UV-set record's entry of primitive `primitive` of mesh `mesh` in
/// mesh file `file`.
fn uv_entry<'a>(
    r: &Records<'a>,
    file: Option<&String>,
    mesh: u32,
    primitive: u32,
) -> Option<&'a PrimitiveUvSets> {
    let file = file?;
    r.records
        .uv_sets
        .as_ref()?
        .primitives
        .iter()
        .find(|u| &u.file == file && u.mesh == mesh && u.primitive == primitive)
}

/// The weights mesh of weights entry `entry` when it is a LOD level above
/// 0 (those live in their level's own file).
fn lod_file<'a>(r: &Records<'a>, entry: usize) -> Option<&'a String> {
    r.records
        .lods
        .as_ref()?
        .groups
        .iter()
        .flat_map(|g| g.levels.iter().skip(1))
        .find(|l| l.weights_primitives.contains(&(entry as u32)))
        .and_then(|l| l.weights_file.as_ref())
}

/// The sidecar's bone-weight part.
fn weights_part(r: &Records<'_>) -> Option<SidecarWeights> {
    let uv = |file, mesh, primitive| uv_entry(r, file, mesh, primitive);
    let lod_file = |entry| lod_file(r, entry);
    r.records.weights.as_ref().map(|w| SidecarWeights {
        mesh_file: w.mesh_file.clone(),
        max_influences: w.max_influences,
        channels: w.channels,
        attributes: (1..=w.channels)
            .map(|c| format!("{}{c}", rigbake_format::meta::WEIGHT_ATTRIBUTE_PREFIX))
            .collect(),
        primitives: w
            .primitives
            .iter()
            .enumerate()
            .map(|(i, p)| SidecarWeightsPrimitive {
                node: p.node.clone(),
                mesh: p.mesh.clone(),
                primitive: p.primitive,
                skin: p.skin,
                mesh_file: lod_file(i).cloned(),
                mesh_index: p.mesh_index,
                mesh_primitive: p.mesh_primitive,
                bound_to: p.bound_to.clone(),
                weights_uv_first: uv(
                    lod_file(i).or(w.mesh_file.as_ref()),
                    p.mesh_index,
                    p.mesh_primitive,
                )
                .and_then(|u| u.weights_first),
                position_error: p.position_error,
            })
            .collect(),
    })
}

/// The sidecar's VAT part; its texture indices start at `vat_base`.
fn vat_part(r: &Records<'_>, vat_base: usize) -> Option<SidecarVat> {
    let placement = r.records.layout.as_ref().and_then(|l| l.vat.as_ref());
    let uv = |file, mesh, primitive| uv_entry(r, file, mesh, primitive);
    r.records.vat.as_ref().map(|v| SidecarVat {
        mesh_file: v.playback_file.clone(),
        normal_convention: v.normal_convention,
        layout: placement.map_or(VatLayoutMode::PerPrimitive, |p| p.layout),
        lookup_uv: r.records.placement.as_ref().map(|p| p.lookup_uv),
        primitives: v
            .primitives
            .iter()
            .enumerate()
            .map(|(i, p)| SidecarVatPrimitive {
                first_vertex: placement
                    .and_then(|pl| pl.first_vertex.get(i).copied())
                    .unwrap_or(0),
                node: p.node.clone(),
                mesh: p.mesh.clone(),
                primitive: p.primitive,
                vertices: p.vertices,
                width: p.width,
                bands: p.bands,
                positions: vat_base + p.positions as usize,
                normals: p.normals.map(|i| vat_base + i as usize),
                tangents: p.tangents.map(|i| vat_base + i as usize),
                playback_mesh: p.playback_mesh,
                lookup_uv_set: uv(v.playback_file.as_ref(), p.playback_mesh, 0)
                    .and_then(|u| u.lookup),
            })
            .collect(),
    })
}

/// The sidecar's LOD groups, with each level's details.
fn lods_part(r: &Records<'_>) -> Vec<SidecarLodGroup> {
    r.records.lods.as_ref().map_or_else(Vec::new, |l| {
        l.groups
            .iter()
            .enumerate()
            .map(|(gi, g)| SidecarLodGroup {
                source: g.source,
                levels: g
                    .levels
                    .iter()
                    .enumerate()
                    .map(|(k, level)| {
                        (
                            k,
                            level,
                            r.records
                                .lod_details
                                .as_ref()
                                .and_then(|d| d.groups.get(gi)?.get(k)),
                        )
                    })
                    .map(|(k, level, detail)| SidecarLodLevel {
                        level: k as u32,
                        record: level.clone(),
                        file: detail.and_then(|d| d.file.clone()),
                        max_influences: detail.map(|d| d.max_influences),
                        dropped_max: detail.map(|d| d.dropped_max),
                        position_error: detail.map(|d| d.position_error),
                    })
                    .collect(),
            })
            .collect()
    })
}
