//! The metadata of one bake: where it came from, how it was made, and how to
//! address every texture. Normative description: `formats/metadata.md`.
//!
//! These are plain serde types; the container stores them with bincode (see
//! [`crate::codec`]) and `inspect --json` prints them as JSON. Field order matters for bincode:
//! never reorder fields or enum variants; new ones go at the end.

use serde::{Deserialize, Serialize};

use crate::texture::Precision;

/// Everything known about one baked model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    /// Always `rigbake`.
    pub name: String,
    /// The tool's semantic version.
    pub version: String,
}

/// Identity of the source model file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// File name (no directories, so bakes do not depend on where they ran).
    pub file_name: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// File size in bytes.
    pub bytes: u64,
}

/// How frame times are chosen (SPEC section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingRule {
    /// `t = min(i / fps, duration)`.
    #[default]
    FixedRate,
    /// `t = i * duration / (frames - 1)`.
    EvenSpread,
}

/// Pixel layout of a matrix in a bone texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatrixLayout {
    /// 4 pixels per joint; pixel `4j + c` is column `c`.
    #[default]
    Mat4,
    /// 3 pixels per joint; pixel `3j + r` is row `r` of the upper 3x4.
    Mat3x4,
}

/// Options a bake ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BakeOptions {
    /// Frames per second.
    pub fps: f64,
    /// Frame time rule.
    pub sampling: SamplingRule,
    /// Bone texture layout.
    pub layout: MatrixLayout,
    /// Bone texture precision.
    pub precision: Precision,
    /// Largest texture width or height allowed.
    pub max_texture_size: u32,
}

/// One baked clip: a block of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClipMeta {
    /// Clip name.
    pub name: String,
    /// First texture row.
    pub start_row: u32,
    /// Number of rows (frames).
    pub frames: u32,
    /// Frames per second.
    pub fps: f64,
    /// Duration in seconds.
    pub duration: f64,
    /// Whether the clip loops.
    pub looping: bool,
}

/// One baked matrix set: a skin as seen from the mesh node(s) that use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkinMeta {
    /// Skin name from the source.
    pub name: String,
    /// Joint node names in texture order (joint `j` is pixel block `j`).
    pub joints: Vec<String>,
    /// Parent of each joint in joint-index space, -1 for roots.
    pub parents: Vec<i32>,
    /// Names of the mesh nodes that play from this set.
    pub mesh_nodes: Vec<String>,
    /// Index of the bone-matrix texture in [`Metadata::textures`].
    pub texture: u32,
}

/// What a texture holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextureKind {
    /// Skin matrices: one row per frame, one pixel block per joint.
    BoneMatrices,
}

/// How texture bytes are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// OpenEXR, scanlines, ZIP compression, RGBA.
    ExrZip,
}

/// Where a texture's encoded bytes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// In the file named [`TextureMeta::name`], beside the container.
    File,
    /// Embedded in the container's section with this index.
    Section(u32),
}

/// One texture of a bake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextureMeta {
    /// What it holds.
    pub kind: TextureKind,
    /// File name (`bones.skin0.exr`): the file beside the container, or the
    /// name to give the embedded bytes when extracting them.
    pub name: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
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
    pub max_error: f64,
}
