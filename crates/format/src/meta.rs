//! The metadata of one bake: where it came from, how it was made, and how to
//! address every texture. Normative description: `formats/metadata.md`.
//!
//! These are plain serde types; the container stores them with bincode (see
//! [`crate::codec`]) and `inspect --json` prints them as JSON. Released
//! records are frozen (bincode identifies fields by position, and a new enum
//! variant breaks older readers): new information goes into a new record in a
//! new container section, as the VAT record did in format 1.1.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::texture::Precision;

/// Everything known about one baked model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Metadata {
    /// The tool that wrote the bake.
    pub tool: Tool,
    /// The source model.
    pub source: SourceFile,
    /// The options the bake ran with.
    pub options: BakeOptions,
    /// Baked clips, in row order.
    pub clips: Vec<ClipMeta>,
    /// Baked matrix sets (one per distinct skin), in texture order.
    pub skins: Vec<SkinMeta>,
    /// Every texture of the bake.
    pub textures: Vec<TextureMeta>,
}

/// Name and version of the writing tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Tool {
    /// Always `rigbake`.
    #[schemars(extend("const" = "rigbake"))]
    pub name: String,
    /// The tool's semantic version.
    pub version: String,
}

/// Identity of the source model file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SourceFile {
    /// File name (no directories, so bakes do not depend on where they ran).
    pub file_name: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub sha256: String,
    /// File size in bytes.
    pub bytes: u64,
}

/// Pixel layout of a matrix in a bone texture.
pub use rigbake_types::MatrixLayout;
/// How frame times are chosen (SPEC section 2).
pub use rigbake_types::SampleRule as SamplingRule;

/// Options a bake ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BakeOptions {
    /// Frames per second.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub fps: f64,
    /// Frame time rule.
    pub sampling: SamplingRule,
    /// Bone texture layout.
    pub layout: MatrixLayout,
    /// Bone texture precision.
    pub precision: Precision,
    /// Largest texture width or height allowed.
    #[schemars(range(min = 1))]
    pub max_texture_size: u32,
}

/// One baked clip: a block of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClipMeta {
    /// Clip name.
    pub name: String,
    /// First texture row.
    pub start_row: u32,
    /// Number of rows (frames).
    #[schemars(range(min = 1))]
    pub frames: u32,
    /// Frames per second.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub fps: f64,
    /// Duration in seconds.
    #[schemars(range(min = 0))]
    pub duration: f64,
    /// Whether the clip loops.
    pub looping: bool,
}

/// One baked matrix set: a skin as seen from the mesh node(s) that use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SkinMeta {
    /// Skin name from the source.
    pub name: String,
    /// Joint node names in texture order (joint `j` is pixel block `j`).
    #[schemars(length(min = 1))]
    pub joints: Vec<String>,
    /// Parent of each joint in joint-index space, -1 for roots.
    #[schemars(inner(range(min = -1)))]
    pub parents: Vec<i32>,
    /// Names of the mesh nodes that play from this set.
    pub mesh_nodes: Vec<String>,
    /// Index of the bone-matrix texture in `textures`.
    pub texture: u32,
}

/// What a texture holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TextureKind {
    /// Skin matrices: one row per frame, one pixel block per joint.
    BoneMatrices,
}

/// How texture bytes are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// OpenEXR, scanlines, ZIP compression, RGBA (also written, and to be
    /// ignored, for textures in the KTX2 or DDS container).
    ExrZip,
    /// 16-bit RGBA PNG: a texture at precision `unorm16` in the default
    /// container. Since format 1.13.
    Png16,
}

/// Where a texture's encoded bytes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// In the file named by the texture's `name`, beside the container.
    File,
    /// Embedded in the container's section with this index.
    Section(u32),
}

/// One texture of a bake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TextureMeta {
    /// What it holds.
    pub kind: TextureKind,
    /// File name (`bones.skin0.exr`): the file beside the container, or the
    /// name to give the embedded bytes when extracting them.
    pub name: String,
    /// Width in pixels.
    #[schemars(range(min = 1))]
    pub width: u32,
    /// Height in pixels.
    #[schemars(range(min = 1))]
    pub height: u32,
    /// Matrix layout (bone textures).
    pub layout: MatrixLayout,
    /// Sample precision.
    pub precision: Precision,
    /// Byte encoding.
    pub encoding: Encoding,
    /// Size of the encoded bytes.
    pub bytes: u64,
    /// CRC-32 (IEEE) of the encoded bytes.
    pub crc32: u32,
    /// Where the encoded bytes are.
    pub storage: Storage,
    /// Largest absolute error the encoding introduced, in the texture's
    /// units (0 for lossless encodings).
    #[schemars(range(min = 0))]
    pub max_error: f64,
}

// ---------------------------------------------------------------------------
// VAT section (container section kind 3, since format 1.1). A record of its
// own so that 1.0 readers, which skip unknown sections, stay correct.

pub use rigbake_types::{DirectionEncoding, NormalConvention, VatEncoding};

/// What a vertex animation texture holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VatStream {
    /// Positions (RGB = x, y, z in model units).
    Positions,
    /// Unit normals (RGB, or octahedral RG).
    Normals,
    /// Unit tangents (RGB or octahedral RG) with handedness in A.
    Tangents,
}

/// How a baked primitive is deformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Deformation {
    /// Linear blend skinning.
    Skinned,
    /// The transform of its node (props on joints, animated nodes).
    Rigid,
}

/// One vertex animation texture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VatTextureMeta {
    /// What it holds.
    pub stream: VatStream,
    /// File name (`<node>.p<k>.positions.exr`).
    pub name: String,
    /// Width in texels.
    #[schemars(range(min = 1))]
    pub width: u32,
    /// Height in texels.
    #[schemars(range(min = 1))]
    pub height: u32,
    /// Channels stored: 3 (RGB) or 4 (RGBA).
    #[schemars(range(min = 3, max = 4))]
    pub channels: u8,
    /// Sample encoding.
    pub encoding: VatEncoding,
    /// Direction encoding (normals and tangents; `float` for EXR).
    pub direction_encoding: DirectionEncoding,
    /// Per-channel `[min, max]` for bounds-normalised PNG channels:
    /// `value = min + sample / 65535 * (max - min)`.
    pub bounds: Option<[[f32; 4]; 2]>,
    /// Size of the encoded bytes.
    pub bytes: u64,
    /// CRC-32 of the encoded bytes.
    pub crc32: u32,
    /// Where the encoded bytes are.
    pub storage: Storage,
    /// Largest error the encoding introduced: model units for positions,
    /// degrees for normals and tangents.
    #[schemars(range(min = 0))]
    pub max_error: f64,
}

/// One baked primitive instance and how to address its textures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VatPrimitiveMeta {
    /// Name of the node instancing the mesh.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// Primitive index within the mesh.
    pub primitive: u32,
    /// How it deforms.
    pub deformation: Deformation,
    /// Whether morph targets were applied.
    pub morphed: bool,
    /// Vertices (in glTF primitive order).
    #[schemars(range(min = 1))]
    pub vertices: u32,
    /// Timeline rows (frames of all clips).
    #[schemars(range(min = 1))]
    pub frames: u32,
    /// Texture width: vertex `v` is at `x = v mod width`.
    #[schemars(range(min = 1))]
    pub width: u32,
    /// Texture rows per frame: vertex `v` of row `r` is at
    /// `y = r * bands + v div width`.
    #[schemars(range(min = 1))]
    pub bands: u32,
    /// Texture height (`frames * bands`, or padded).
    #[schemars(range(min = 1))]
    pub height: u32,
    /// Index of the positions texture in the VAT record's `textures`.
    pub positions: u32,
    /// Index of the normals texture, if baked.
    pub normals: Option<u32>,
    /// Index of the tangents texture, if baked.
    pub tangents: Option<u32>,
    /// Index of this primitive's mesh in the playback `.glb`.
    pub playback_mesh: u32,
}

/// A primitive that never moves (not baked; render it as a plain mesh).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StaticPrimitiveMeta {
    /// Node name.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// Primitive index.
    pub primitive: u32,
}

/// The VAT part of a bake. Rows are the clip table's rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VatMetadata {
    /// Node whose space all values are in; `null`: the scene root.
    pub reference_node: Option<String>,
    /// Normal convention used.
    pub normal_convention: NormalConvention,
    /// Sample encoding of every texture.
    pub encoding: VatEncoding,
    /// Direction encoding for PNG.
    pub direction_encoding: DirectionEncoding,
    /// Largest texture size the bake allowed.
    #[schemars(range(min = 1))]
    pub max_texture_size: u32,
    /// Whether sizes were padded to powers of two.
    pub power_of_two: bool,
    /// File name of the playback mesh (`.glb`), if written.
    pub playback_file: Option<String>,
    /// Baked primitives.
    pub primitives: Vec<VatPrimitiveMeta>,
    /// Primitives that do not move.
    pub static_primitives: Vec<StaticPrimitiveMeta>,
    /// Every VAT texture.
    pub textures: Vec<VatTextureMeta>,
}

// ---------------------------------------------------------------------------
// Bone-weight section (container section kind 4, since format 1.2).

/// Names of the glTF application-specific attributes that carry the bone
/// channels in the weights mesh: `_RIGBAKE_UV1` holds channel UV1, and so on.
pub const WEIGHT_ATTRIBUTE_PREFIX: &str = "_RIGBAKE_UV";

/// One skinned primitive instance's bone-weight channels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WeightsPrimitiveMeta {
    /// Name of the node instancing the mesh.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// Primitive index within the mesh.
    pub primitive: u32,
    /// Index in the metadata's `skins` of the bone set whose texture the bone
    /// indices address (the index space).
    pub skin: u32,
    /// Vertices, in glTF primitive order.
    #[schemars(range(min = 1))]
    pub vertices: u32,
    /// Container section (kind 5) holding `vertices * channels` RGBA f32
    /// little-endian values: vertex by vertex, channel by channel.
    pub section: u32,
    /// Largest fraction of a vertex's weight that was dropped.
    #[schemars(range(min = 0, max = 1))]
    pub dropped_max: f64,
    /// Mean fraction of weight dropped per vertex.
    #[schemars(range(min = 0, max = 1))]
    pub dropped_mean: f64,
    /// Largest position error truncation causes over the baked frames, in
    /// model units.
    #[schemars(range(min = 0))]
    pub position_error: f64,
    /// For a rigid prop bound to a joint (weight 1): that joint's name.
    pub bound_to: Option<String>,
    /// Mesh index in the weights `.glb`.
    pub mesh_index: u32,
    /// Primitive index within that mesh.
    pub mesh_primitive: u32,
}

/// The bone-weight part of a bake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WeightsMetadata {
    /// Pairs kept per vertex (1 to 8).
    #[schemars(range(min = 1, max = 8))]
    pub max_influences: u32,
    /// RGBA channels per vertex (`ceil(max_influences / 2)`): channel `c` is
    /// `(bone[2c], weight[2c], bone[2c+1], weight[2c+1])`.
    #[schemars(range(min = 1, max = 4))]
    pub channels: u32,
    /// The weights mesh (`.glb`), if written.
    pub mesh_file: Option<String>,
    /// Every skinned primitive instance.
    pub primitives: Vec<WeightsPrimitiveMeta>,
}

// ---------------------------------------------------------------------------
// Rig section (container section kind 6, since format 1.3): anchors, props,
// and where baked clips came from (blends, ranges).

/// Why a node is an anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnchorReason {
    /// Named by the user (`--anchor NAME`).
    Requested,
    /// Chosen by `--anchors auto`.
    Auto,
    /// A rigid prop reported as an anchor (its own node).
    Prop,
}

/// One anchor track.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AnchorMeta {
    /// The socket node's name.
    pub node: String,
    /// Why it is an anchor.
    pub reason: AnchorReason,
    /// For props: the mesh to draw with this anchor's transform.
    pub mesh: Option<String>,
}

/// How a rigid prop was handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PropMode {
    /// Bound to its joint as a single-influence skinned mesh (in the weights
    /// record and mesh).
    Bound,
    /// Reported as an anchor (its node's track) with its mesh.
    Anchor,
}

/// A rigid mesh hanging under a joint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PropMeta {
    /// Node holding the mesh.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// The joint it hangs under.
    pub joint: String,
    /// Bone set (index in `skins`) of that joint.
    pub skin: u32,
    /// How it was handled.
    pub mode: PropMode,
}

/// Where a baked clip came from, when it is not simply a whole animation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(deny_unknown_fields)]
pub enum ClipOrigin {
    /// The time range `start..end` (seconds) of an animation.
    Range {
        /// Index in `clips`.
        clip: u32,
        /// Animation name.
        source: String,
        /// Start, seconds.
        #[schemars(range(min = 0))]
        start: f64,
        /// End, seconds.
        #[schemars(range(min = 0))]
        end: f64,
    },
    /// A fixed-weight blend of two animations at the same normalised phase.
    Blend {
        /// Index in `clips`.
        clip: u32,
        /// First animation.
        first: String,
        /// Second animation.
        second: String,
        /// Weight of the second.
        #[schemars(range(min = 0, max = 1))]
        weight: f64,
    },
}

/// The rig part of a bake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RigMetadata {
    /// Model-space node of the anchor tracks (as for VAT); `null`: scene root.
    pub reference_node: Option<String>,
    /// Anchor tracks, in track order.
    pub anchors: Vec<AnchorMeta>,
    /// Container section (kind 7) with the tracks: per row, per anchor, the
    /// 4x4 matrix column by column as 16 little-endian f32.
    pub anchor_section: Option<u32>,
    /// `anchors.exr` beside the container, if exported: RGBA f32, one row per
    /// frame, pixel `4a + c` holding column `c` of anchor `a`.
    pub anchor_texture: Option<String>,
    /// Rigid props found under joints.
    pub props: Vec<PropMeta>,
    /// Baked clips that are ranges or blends.
    pub clip_origins: Vec<ClipOrigin>,
}

// ---------------------------------------------------------------------------
// Outputs section (container section kind 9, since format 1.5): the files
// beside the container that no other record checksums.

/// One file written beside the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputFileMeta {
    /// File name, beside the container.
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// CRC-32 (IEEE) of its bytes.
    pub crc32: u32,
}

/// Which TEXCOORD sets of one primitive of a mesh file hold what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrimitiveUvSets {
    /// The mesh file beside the container (`<model>.vat.glb`,
    /// `<model>.weights.glb`, `<model>.glb` of the OpenVAT export).
    pub file: String,
    /// Mesh index in that file.
    pub mesh: u32,
    /// Primitive index in that mesh.
    pub primitive: u32,
    /// UV sets of the source primitive (in the file, in order, except that
    /// those from `lookup` on sit one set higher).
    pub source_sets: u32,
    /// The set holding the VAT lookup UV, if the mesh has one.
    pub lookup: Option<u32>,
    /// The first set holding bone-weight pairs (`--weights-as-uv`): set
    /// `weights_first + 2c` holds `(bone, weight)` of channel `c`'s first
    /// pair, the next set its second pair.
    pub weights_first: Option<u32>,
    /// How many sets hold weight pairs (two per channel; 0 without).
    pub weights_sets: u32,
}

/// The UV-set record (container section kind 10, since format 1.6): for
/// every primitive of every mesh file, which TEXCOORD sets hold the VAT
/// lookup UV and the bone-weight pairs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UvSetsMetadata {
    /// Primitives, file by file, in mesh and primitive order.
    pub primitives: Vec<PrimitiveUvSets>,
}

/// Every file of the bake beside the container that no other record
/// checksums: the weights and playback meshes and `anchors.exr`. With the
/// texture records, it lets a reader (and the up-to-date check) prove that
/// every output belongs to this container.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OutputsMetadata {
    /// The files, in the order they were written.
    pub files: Vec<OutputFileMeta>,
}

// ---------------------------------------------------------------------------
// Bounds section (container section kind 12, since format 1.6): animated
// bounds for culling.

/// The box of one clip: every vertex of every mesh at every frame lies in
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClipBoundsMeta {
    /// Smallest `[x, y, z]`.
    pub min: [f32; 3],
    /// Largest `[x, y, z]`.
    pub max: [f32; 3],
}

/// Animated bounds, one box per clip of the clip table, in clip order, in
/// the space of `reference_node` (the VAT reference: the first bone set's
/// mesh node; `None`: the scene root).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundsMetadata {
    /// Node whose space the boxes are in; `None`: the scene root.
    pub reference_node: Option<String>,
    /// One box per clip.
    pub clips: Vec<ClipBoundsMeta>,
}

// ---------------------------------------------------------------------------
// Bone-range section (container section kind 21, since format 1.13): the
// ranges 16-bit normalised bone textures map their samples to.

/// The ranges of the bone textures stored at precision `unorm16` (the `qts`
/// layout only): a texture's texel `2j + 1` holds the translation
/// `(x, y, z)` and the scale as `min + sample / 65535 * (max - min)` per
/// channel, and texel `2j` the quaternion as `sample / 65535 * 2 - 1`
/// (formats/bone-matrix-texture.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BoneRangesMetadata {
    /// One entry per texture of the metadata's texture table, in its order:
    /// `[min, max]` (each `[x, y, z, scale]`) for a texture at precision
    /// `unorm16`, `null` for every other.
    pub textures: Vec<Option<[[f32; 4]; 2]>>,
}

// ---------------------------------------------------------------------------
// Clip-error section (container section kind 22, since format 1.14): what
// each texture's encoding costs, per clip, measured at bake time.

/// A maximum and a 99th percentile of errors over every vertex (or virtual
/// vertex) at every frame of one clip. The percentile is an upper bound,
/// within 6.25% of the exact one (formats/metadata.md, "Clip errors").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ErrorFigure {
    /// The largest error.
    #[schemars(range(min = 0))]
    pub max: f64,
    /// The 99th percentile, at most `max`.
    #[schemars(range(min = 0))]
    pub p99: f64,
}

/// What a texture's encoding costs on one clip: the position a shader
/// reads (skinned from the decoded bone matrices, or read from the VAT)
/// against the exact one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClipErrorMeta {
    /// Vertex positions, model units (the reference node's space).
    pub positions: ErrorFigure,
    /// Normals, degrees; `null` when no normals are read.
    pub normals_degrees: Option<ErrorFigure>,
    /// Bone textures only: ACL's virtual vertices (three per joint, at the
    /// record's `virtual_vertex_distance` along the joint's axes), model
    /// units; `null` for VAT.
    pub virtual_vertices: Option<ErrorFigure>,
}

/// Which texture a [`TextureClipErrors`] entry measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorSubject {
    /// A bone-matrix texture: `texture` indexes the metadata's texture
    /// table.
    BoneMatrices,
    /// A VAT texture set: `texture` indexes the VAT record's `textures`
    /// (the set's first positions texture).
    Vat,
}

/// One texture's errors, per clip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TextureClipErrors {
    /// What `texture` indexes.
    pub subject: ErrorSubject,
    /// The texture (see [`ErrorSubject`]).
    pub texture: u32,
    /// One entry per clip of the metadata's clip table, in its order.
    pub clips: Vec<ClipErrorMeta>,
}

/// The clip-error record (section kind 22, since format 1.14): per texture
/// and clip, what its encoding costs, with the model's size the relative
/// figures divide by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClipErrorsMetadata {
    /// The model's size, model units: the diagonal of the box around every
    /// node origin and vertex in the rest pose (1 when that is zero).
    #[schemars(range(min = 0))]
    pub model_size: f64,
    /// Distance of the virtual vertices from their joint, model units.
    #[schemars(range(min = 0))]
    pub virtual_vertex_distance: f64,
    /// Every texture measured: the bone textures, then the VAT sets.
    pub textures: Vec<TextureClipErrors>,
}

// ---------------------------------------------------------------------------
// Root-motion section (container section kind 16, since format 1.8): the
// motion removed from clips baked in place, as a track an engine applies.

pub use rigbake_types::RootMotionMode;

/// Root motion of one clip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClipRootMotionMeta {
    /// What the bake did with the clip's root motion.
    pub mode: RootMotionMode,
    /// How far the root travels over the clip: its horizontal position at
    /// the clip's end (its duration) minus at its first frame, in the scene
    /// root's space (`y` is 0); zero for `keep`.
    pub displacement: [f64; 3],
    /// The yaw removed at the clip's end, radians, unwrapped (0 unless the
    /// mode is `extract_yaw`).
    pub rotation: f64,
    /// The motion at the clip's end, `[x, y, z, yaw]` like a track entry:
    /// what one full play moves the instance by (a loop accumulates it
    /// once per cycle), and where the track heads across a loop's wrap
    /// after the last frame; zero for `keep`.
    pub end: [f64; 4],
    /// Per frame of the clip (empty for `keep`): the motion
    /// `M = T(x, y, z) Ry(yaw)` taken out of that frame, as
    /// `[x, y, z, yaw]`, in the scene root's space; frame 0 is the identity.
    pub track: Vec<[f64; 4]>,
}

/// The root-motion record: written when any clip is baked in place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RootMotionMetadata {
    /// The motion root's node name.
    pub node: String,
    /// One entry per clip of the clip table, in order.
    pub clips: Vec<ClipRootMotionMeta>,
}

// ---------------------------------------------------------------------------
// Layout section (container section kind 11, since format 1.7): how the VAT
// primitives share texture sets, and where folded textures continue.

pub use rigbake_types::VatLayoutMode;

/// How the VAT record's primitives sit in their textures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VatPlacement {
    /// `atlas` (one texture set for every primitive) or `per_primitive`.
    pub layout: VatLayoutMode,
    /// Per VAT primitive (same order as `VatMetadata::primitives`): its
    /// first vertex in its texture set; vertex `v` is set vertex
    /// `first_vertex + v`.
    pub first_vertex: Vec<u32>,
}

/// Which texture a fold describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FoldedTexture {
    /// A bone-matrix texture: index into `Metadata::textures`.
    Bones(u32),
    /// A VAT texture: index into `VatMetadata::textures` of its first page;
    /// page `k` is texture `index + k`.
    Vat(u32),
    /// The anchor texture of the rig record.
    Anchors,
}

/// How a texture whose rows would exceed the maximum size continues its
/// frames in further column blocks and pages. Timeline row `r`, texel
/// `(x, y)` of its unfolded row block (`x < block_width`, `y < row_height`),
/// is at page `b / blocks_per_page`, texel
/// `((b mod blocks_per_page) * block_width + x, (r mod rows_per_block) * row_height + y)`
/// with `b = r div rows_per_block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FoldMeta {
    /// The folded texture.
    pub texture: FoldedTexture,
    /// Timeline rows per column block.
    pub rows_per_block: u32,
    /// Texel rows one timeline row takes (1 for bones and anchors, `bands`
    /// for VAT).
    pub row_height: u32,
    /// Texel columns of one block (the unfolded width).
    pub block_width: u32,
    /// Blocks side by side on one page.
    pub blocks_per_page: u32,
    /// Pages (one texture each).
    pub pages: u32,
}

/// The layout record: what a reader needs besides the older records to
/// address atlas VATs and folded textures. A container without it has
/// per-primitive VAT textures and no folds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LayoutMetadata {
    /// VAT placement; `null` when the bake has no VAT.
    pub vat: Option<VatPlacement>,
    /// Every folded texture (textures not listed are not folded).
    pub folds: Vec<FoldMeta>,
}

// ---------------------------------------------------------------------------
/// The source record (section kind 13, since 1.7): where the source model
/// was when the bake was made, so that `verify` and `preview` find it
/// without `--source`. A reader uses it only when the file found there has
/// the SHA-256 the metadata records.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SourceLocation {
    /// The model's path relative to the container's folder, `/`-separated
    /// UTF-8 (`../../models/knight.glb`): `..` and plain names only, no
    /// root, no `.`, no empty part, at most 4096 bytes.
    pub relative_path: String,
}

// ---------------------------------------------------------------------------
// Morphs section (container section kind 14, since format 1.7): the morph
// targets a bone-matrix bake leaves out.

/// A mesh instance whose morph targets the bone-matrix bake does not carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedMorphMeta {
    /// Name of the node that instances the mesh.
    pub node: String,
    /// glTF mesh index.
    pub mesh: u32,
    /// Its primitives that have morph targets (glTF primitive indices).
    pub primitives: Vec<u32>,
    /// Number of morph targets.
    pub targets: u32,
    /// Whether a baked clip animates the instance's morph weights (otherwise
    /// only its non-zero default weights are lost).
    pub animated: bool,
}

/// rigbake's choice for morph targets on the bone-matrix path: they are
/// dropped (the textures hold skin matrices only) and reported; a VAT bake
/// (`--vat`) carries them. Written only when the bake drops any.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MorphsMetadata {
    /// The mesh instances whose morph targets are dropped, in node order.
    pub dropped: Vec<DroppedMorphMeta>,
}

// ---------------------------------------------------------------------------
// VAT compression section (container section kind 10, since format 1.6):
// how each VAT texture's bytes are compressed (the VAT record is frozen).

pub use rigbake_types::TextureCompression;

/// How the VAT textures of a bake are compressed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VatCompressionMetadata {
    /// The EXR compression asked for (`--compression`), recorded as asked
    /// even for PNG bakes.
    pub requested: TextureCompression,
    /// Per texture of the VAT record's `textures`, in the same order: the
    /// compression its file has (`deflate` for PNG).
    pub textures: Vec<TextureCompression>,
}

// ---------------------------------------------------------------------------
// LOD section (container section kind 17, since format 1.8): the model's LOD
// groups and where each level's outputs are.

pub use rigbake_types::LodSource;

/// One level of a LOD group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodLevelMeta {
    /// Name of the node instancing the level's mesh.
    pub node: String,
    /// Name of that mesh.
    pub mesh: String,
    /// Vertices of the level (every primitive of its mesh).
    pub vertices: u32,
    /// Triangles of the level (indexed or not; 0 for points and lines).
    pub triangles: u32,
    /// Screen coverage from the source (`MSFT_screencoverage`), if given.
    pub screen_coverage: Option<f64>,
    /// The weights mesh holding this level, when weights were written
    /// (`<model>.weights.glb` for level 0, `<model>.lod<n>.weights.glb`
    /// for level `n`).
    pub weights_file: Option<String>,
    /// The level's entries in the weights record's `primitives`, in order.
    pub weights_primitives: Vec<u32>,
    /// The level's entries in the VAT record's `primitives` (= meshes of
    /// the VAT playback mesh), in order; empty without a VAT bake.
    pub vat_primitives: Vec<u32>,
}

/// One LOD group: a skinned mesh and its lower levels of detail, sharing
/// one skin (one bone texture) and one VAT texture set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodGroupMeta {
    /// How the group was recognised.
    pub source: LodSource,
    /// The levels, level 0 (full detail) first.
    #[schemars(length(min = 2, max = 16))]
    pub levels: Vec<LodLevelMeta>,
}

/// The LOD record (section kind 17, since format 1.8): written only when
/// the model has LOD groups.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodsMetadata {
    /// The groups, in the order of their level-0 nodes.
    pub groups: Vec<LodGroupMeta>,
}

// ---------------------------------------------------------------------------
// LOD detail section (container section kind 18, since format 1.9): per LOD
// level, the file it came from and the influences it keeps.

/// A LOD level read from a file of its own (`hero_LOD1.glb`), not from
/// the source model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodFileMeta {
    /// The file's path relative to the container's folder, `/`-separated
    /// (the source record's rules), when it could be expressed.
    pub relative_path: Option<String>,
    /// The file's name (no folders).
    pub file_name: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub sha256: String,
    /// The name of the level's skinned mesh node in that file.
    pub node: String,
}

/// What one LOD level keeps of its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodLevelDetail {
    /// The file the level came from; `null`: the source model itself.
    pub file: Option<LodFileMeta>,
    /// Influences kept per vertex at this level (1 to 8).
    #[schemars(range(min = 1, max = 8))]
    pub max_influences: u32,
    /// Largest fraction of a vertex's weight dropped at this level (0 when
    /// no weights were baked).
    #[schemars(range(min = 0))]
    pub dropped_max: f64,
    /// Largest position error the dropped influences cause at this level
    /// over the baked frames, in model units (0 when none were dropped).
    #[schemars(range(min = 0))]
    pub position_error: f64,
}

/// The LOD detail record (section kind 18, since format 1.9): one entry
/// per group and level of the LOD record, in the same order. Written
/// exactly when the LOD record is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodDetailsMetadata {
    /// Per group, per level.
    pub groups: Vec<Vec<LodLevelDetail>>,
}

// ---------------------------------------------------------------------------
// Texture-container record (section kind 19, since format 1.10).

pub use rigbake_types::TextureContainer;

/// The texture-container record (section kind 19, since format 1.10):
/// written when the bake's textures are KTX2 or DDS files instead of EXR
/// (and PNG). Every texture of the bake (bone-matrix, VAT, anchors) is then
/// in that container, holding the samples the texture records describe as
/// RGBA: 32-bit floats, half floats, or 16-bit UNORM for `png16` VAT
/// textures. A folded VAT stream's pages are the array layers of one file:
/// every page's texture record names that file (page `k` is layer `k`).
/// Absent: EXR and PNG, one file per page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TextureContainerMetadata {
    /// `ktx2`, `ktx2_zstd` or `dds` (never `exr`: that is the absence of
    /// this record).
    pub container: TextureContainer,
}

// ---------------------------------------------------------------------------
// Placement record (section kind 20, since format 1.11).

/// Where a space stands in the source scene: a node and its rest-pose
/// global matrix (the node's own and its ancestors' transforms as the file
/// gives them, no animation applied).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Placement {
    /// The node; `null`: the scene root (the matrix is then the identity).
    pub node: Option<String>,
    /// The node's rest-pose global matrix, column-major (glTF's order):
    /// element `4 * c + r` is row `r` of column `c`.
    pub matrix: [f64; 16],
}

impl Placement {
    /// The identity placement of the scene root.
    pub const ROOT: Self = Self {
        node: None,
        matrix: [
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ],
    };

    /// Whether the matrix is exactly the identity.
    pub fn is_identity(&self) -> bool {
        self.matrix == Self::ROOT.matrix
    }
}

/// How the VAT playback mesh's lookup TEXCOORD set addresses its texels
/// (`formats/vat.md`, "Playback mesh").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LookupUv {
    /// The texel centre at row 0, normalised: `((x + 0.5) / page_width,
    /// (band + 0.5) / height)` (every bake before format 1.11; misaddressed
    /// when an importer stores UVs as half floats).
    TexelCentre,
    /// The vertex's column index `s` in its set, split into two integers
    /// below 2048, `(s mod 2048, floor(s / 2048))`: exact in half floats.
    SplitIndex,
}

/// The placement record (section kind 20, since format 1.11): where the
/// spaces of the bake stand in the source scene, so that a loader places
/// the meshes without the source, and how the playback mesh's lookup UV is
/// encoded. Written by every bake of 1.11 and later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PlacementMetadata {
    /// The reference node (VAT positions and normals, anchors, bounds and
    /// root motion are in its space): the node of the VAT record's, the
    /// rig record's and the bounds record's `reference_node`.
    pub reference: Placement,
    /// One per bone set, in the metadata's `skins` order: its texture's
    /// space node (the set's first mesh node), whose space the bone
    /// texture's skin matrices move the weights mesh's vertices into.
    pub skins: Vec<Placement>,
    /// The encoding of the VAT playback mesh's lookup UV.
    pub lookup_uv: LookupUv,
}
