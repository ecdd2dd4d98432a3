//! rigbake's option vocabulary: every value a bake option can take, defined
//! once and used by the core (`rigbake-core`), the container metadata
//! (`rigbake-format`), manifests and the command line.
//!
//! Serialisation:
//! - variant order is part of the container format (the metadata is
//!   bincode, which records a variant's position): never reorder variants;
//! - serialised names are `snake_case` (the `inspect --json` document);
//! - deserialised names are `kebab-case` (manifest keys such as
//!   `sampling = "even-spread"`), which for one-word values is the same;
//!   the `snake_case` names are accepted too, so the JSON document reads
//!   back into these types;
//! - with the `clap` feature the enums are clap `ValueEnum`s with the same
//!   kebab-case names as the manifest.

pub mod budget;
pub mod qts;

pub use budget::ErrorBudget;

use glam::{DMat4, Mat4, Vec4};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest texture width or height any bake may use or record (and the
/// largest `--max-texture-size`). GPUs cap textures far lower.
pub const TEXTURE_SIZE_LIMIT: u32 = 65_536;

/// One kind of output a bake writes (an entry of a manifest's `outputs`
/// list; `--compat openvat` on the command line). A bake writes a set of
/// them ([`OutputKinds`]); each has its step in the bake job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum OutputKind {
    /// Bone-matrix textures.
    Bones,
    /// Bone-weight channels and the weights mesh (needs `bones`).
    Weights,
    /// Vertex animation textures and the playback mesh.
    Vat,
    /// Anchor tracks (the named anchors, or automatic ones when none are
    /// named).
    Anchors,
    /// The OpenVAT-compatible export (docs/openvat.md).
    #[cfg_attr(feature = "clap", value(name = "openvat"))]
    OpenVat,
}

impl OutputKind {
    /// Every kind, in declaration order.
    pub const ALL: [Self; 5] = [
        Self::Bones,
        Self::Weights,
        Self::Vat,
        Self::Anchors,
        Self::OpenVat,
    ];

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`OutputKind`]s: what one bake writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct OutputKinds(u8);

impl OutputKinds {
    /// The set of `kinds`.
    pub fn of(kinds: &[OutputKind]) -> Self {
        Self(kinds.iter().fold(0, |bits, k| bits | k.bit()))
    }

    /// Whether `kind` is in the set.
    pub fn has(self, kind: OutputKind) -> bool {
        self.0 & kind.bit() != 0
    }

    /// Puts `kind` in the set (`on`) or takes it out.
    pub fn set(&mut self, kind: OutputKind, on: bool) {
        if on {
            self.0 |= kind.bit();
        } else {
            self.0 &= !kind.bit();
        }
    }

    /// The kinds in the set, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = OutputKind> {
        OutputKind::ALL.into_iter().filter(move |k| self.has(*k))
    }
}

/// How frame times are spread over a clip (SPEC section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum SampleRule {
    /// Frame i at min(i / fps, duration): a fixed rate; the last frame may
    /// fall short of the clip end by less than one frame.
    #[default]
    #[serde(alias = "fixed_rate")]
    FixedRate,
    /// Same frame count, spread evenly so the last frame lands exactly on
    /// the clip end: `t = i * duration / (frames - 1)`.
    #[serde(alias = "even_spread")]
    EvenSpread,
}

/// How a matrix is laid out in RGBA pixels of a bone texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum MatrixLayout {
    /// 4 RGBA pixels per joint; pixel `4j + c` is column `c` of the matrix.
    #[default]
    #[cfg_attr(feature = "clap", value(name = "mat4"))]
    Mat4,
    /// 3 RGBA pixels per joint; pixel `3j + r` is row `r` of the upper 3x4.
    #[serde(rename = "mat3x4")]
    #[cfg_attr(feature = "clap", value(name = "mat3x4"))]
    Mat3x4,
    /// 2 RGBA pixels per joint: pixel `2j` is the rotation quaternion,
    /// pixel `2j + 1` the translation and a uniform scale ([`qts`]); lossy
    /// for matrices with non-uniform scale or shear. Since format 1.12.
    #[cfg_attr(feature = "clap", value(name = "qts"))]
    Qts,
}

impl MatrixLayout {
    /// RGBA pixels per joint.
    pub fn pixels_per_joint(self) -> usize {
        match self {
            Self::Mat4 => 4,
            Self::Mat3x4 => 3,
            Self::Qts => qts::TEXELS_PER_JOINT,
        }
    }

    /// Whether decoding gives back the matrix to f32 rounding for every
    /// skin matrix (the matrix layouts) or only for some ([`Self::Qts`]).
    pub fn is_exact(self) -> bool {
        !matches!(self, Self::Qts)
    }

    /// Writes `m` as `pixels_per_joint` RGBA pixels into `out`.
    pub fn encode(self, m: &DMat4, out: &mut [f32]) {
        match self {
            Self::Mat4 => {
                for c in 0..4 {
                    let col = m.col(c).as_vec4();
                    out[c * 4..c * 4 + 4].copy_from_slice(&col.to_array());
                }
            }
            Self::Mat3x4 => {
                for r in 0..3 {
                    let row = m.row(r).as_vec4();
                    out[r * 4..r * 4 + 4].copy_from_slice(&row.to_array());
                }
            }
            Self::Qts => qts::encode(m, out),
        }
    }

    /// Reads a matrix back from its pixels, as a shader would.
    pub fn decode(self, pixels: &[f32]) -> Mat4 {
        let px = |i: usize| Vec4::from_slice(&pixels[i * 4..i * 4 + 4]);
        match self {
            Self::Mat4 => Mat4::from_cols(px(0), px(1), px(2), px(3)),
            Self::Mat3x4 => Mat4::from_cols(px(0), px(1), px(2), Vec4::W).transpose(),
            Self::Qts => qts::decode(pixels),
        }
    }
}

/// Sample precision of a float texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Precision {
    /// 32-bit IEEE float: exact.
    #[default]
    F32,
    /// 16-bit IEEE half float: lossy, range +-65504.
    F16,
    /// 16-bit unsigned normalised integers (`sample / 65535`), mapped to
    /// a range: bone textures in the `qts` layout only ([`qts::Range`]),
    /// stored as 16-bit PNG, or as `R16G16B16A16_UNORM` in KTX2 and DDS.
    /// Since format 1.13.
    Unorm16,
}

/// Sample encoding of vertex animation textures (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum VatEncoding {
    /// EXR with 32-bit floats (exact).
    Exr32,
    /// EXR with 16-bit half floats (default).
    #[default]
    Exr16,
    /// 16-bit PNG normalised to bounds stored in the metadata.
    Png16,
    /// 8-bit normalised samples over the same bounds, `R8G8B8A8_UNORM` in
    /// KTX2 or DDS (`--texture-container`): for distant levels. Since
    /// format 1.15.
    Unorm8,
    /// 10-bit normalised samples over the same bounds (a 2-bit alpha),
    /// `A2B10G10R10_UNORM_PACK32` in KTX2, `R10G10B10A2_UNORM` in DDS.
    /// Since format 1.15.
    Unorm10,
}

impl VatEncoding {
    /// Whether samples are normalised integers over recorded bounds (or
    /// octahedral directions) rather than floats.
    pub fn is_normalised(self) -> bool {
        matches!(self, Self::Png16 | Self::Unorm8 | Self::Unorm10)
    }

    /// Whether the encoding needs a GPU texture container (KTX2 or DDS):
    /// no PNG or EXR holds its samples.
    pub fn needs_gpu_container(self) -> bool {
        matches!(self, Self::Unorm8 | Self::Unorm10)
    }
}

/// The file container of every texture a bake writes (`--texture-container`):
/// the sample type stays what `--precision` and `--format` say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum TextureContainer {
    /// OpenEXR (and 16-bit PNG for `--format png16`): the default.
    #[default]
    Exr,
    /// KTX 2.0, uncompressed, one mip level; folded pages as array layers.
    Ktx2,
    /// KTX 2.0 with Zstandard supercompression (`supercompressionScheme` 2).
    Ktx2Zstd,
    /// DirectDraw Surface with the DX10 header; folded pages as an array.
    Dds,
}

impl TextureContainer {
    /// Whether this is the default (EXR and PNG files).
    pub fn is_exr(&self) -> bool {
        *self == Self::Exr
    }

    /// The file extension of its textures (`None`: EXR or PNG by encoding).
    pub fn extension(self) -> Option<&'static str> {
        match self {
            Self::Exr => None,
            Self::Ktx2 | Self::Ktx2Zstd => Some("ktx2"),
            Self::Dds => Some("dds"),
        }
    }
}

/// How the bytes of a texture file are compressed (`--compression` for VAT
/// EXRs; PNG files are always zlib/deflate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum TextureCompression {
    /// EXR, no compression: fastest to write and read, largest (default).
    #[default]
    None,
    /// EXR ZIP, 16 scanlines per block: lossless.
    Zip,
    /// EXR PIZ (wavelet and Huffman), 32 scanlines per block: lossless.
    Piz,
    /// EXR PXR24, 16 scanlines per block: lossless for half floats, rounds
    /// 32-bit floats to 24 bits (the loss is recorded as the error).
    Pxr24,
    /// PNG's zlib stream (deflate); not a choice for EXR.
    #[cfg_attr(feature = "clap", value(skip))]
    Deflate,
}

impl TextureCompression {
    /// Whether it may change 32-bit float samples (PXR24 only; every mode
    /// is lossless for half floats).
    pub fn lossy_for_f32(self) -> bool {
        self == Self::Pxr24
    }
}

/// How PNG VAT files deflate their image data (`--png-compression`). Both
/// are ordinary PNG files (a zlib stream of deflate blocks); they differ in
/// size and in the time a bake spends compressing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum PngCompression {
    /// Rows filtered with Sub and compressed by fdeflate, the png crate's
    /// fast mode (default).
    #[default]
    Fast,
    /// Rows unfiltered in stored (uncompressed) deflate blocks: no time
    /// spent compressing, files about the size of the texels.
    None,
}

impl PngCompression {
    /// Whether it is the default, [`PngCompression::Fast`] (left out of the
    /// bake key's settings, so keys made before the option stay valid).
    pub fn is_fast(&self) -> bool {
        *self == Self::Fast
    }
}

/// How directions (normals, tangent xyz) are stored in PNG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum DirectionEncoding {
    /// Floats, as they are (what EXR stores; not a choice for PNG).
    #[cfg_attr(feature = "clap", value(skip))]
    Float,
    /// Each axis normalised to its recorded bounds, like positions.
    Bounds,
    /// Octahedral (2 channels): R, G hold the 2D octahedral coordinates
    /// mapped from `[-1, 1]` to `[0, 65535]`; B is 0.
    #[default]
    Octahedral,
    /// Normals packed into the positions texture (one RGBA texture per
    /// frame instead of two): its alpha holds two 8-bit octahedral
    /// coordinates, `256 * ux + uy`. Normals only (tangents keep
    /// `octahedral`). Since format 1.13.
    Packed,
}

/// How normals are transformed (SPEC section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum NormalConvention {
    /// Exact: the inverse transpose of the blended 3x3.
    #[default]
    #[serde(alias = "inverse_transpose")]
    InverseTranspose,
    /// The blended matrix itself (what most GPU shaders do); differs from
    /// the exact one where joints carry non-uniform scale.
    #[serde(alias = "blended_matrix")]
    BlendedMatrix,
}

/// How a VAT bake groups its primitives into texture sets (`--vat-layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum VatLayoutMode {
    /// One texture set per model: every moving primitive packed into one
    /// position (normal, tangent) texture, addressed by vertex offset.
    #[default]
    Atlas,
    /// One texture set per primitive (the layout of format 1.5 and before).
    #[serde(alias = "per_primitive")]
    PerPrimitive,
}

/// What a bake does with the motion of the character's root
/// (`--root-motion`; per model and per clip in manifests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum RootMotionMode {
    /// Bake the motion as it is: the character travels in the textures.
    #[default]
    Keep,
    /// Bake in place: remove the root's horizontal (XZ) translation since
    /// the clip's first frame, and record it as a root-motion track.
    Extract,
    /// As `extract`, and also remove the root's yaw (rotation about +Y)
    /// since the clip's first frame, recorded in the track.
    #[serde(alias = "extract_yaw")]
    ExtractYaw,
}

impl RootMotionMode {
    /// Whether the mode removes anything from the baked frames.
    pub fn extracts(self) -> bool {
        self != Self::Keep
    }
}

/// glTF primitive topology; the discriminants are glTF's `mode` numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
pub enum PrimitiveMode {
    /// Points (0).
    Points = 0,
    /// Separate lines (1).
    Lines = 1,
    /// Closed line loop (2).
    LineLoop = 2,
    /// Line strip (3).
    LineStrip = 3,
    /// Separate triangles (4), the usual case.
    #[default]
    Triangles = 4,
    /// Triangle strip (5).
    TriangleStrip = 5,
    /// Triangle fan (6).
    TriangleFan = 6,
}

impl PrimitiveMode {
    /// The glTF `mode` number.
    pub fn gltf_mode(self) -> u32 {
        self as u32
    }

    /// Whether `count` vertices (or indices) make whole primitives.
    pub fn whole_primitives(self, count: usize) -> bool {
        match self {
            Self::Points => count >= 1,
            Self::Lines => count >= 2 && count.is_multiple_of(2),
            Self::LineLoop | Self::LineStrip => count >= 2,
            Self::Triangles => count >= 3 && count.is_multiple_of(3),
            Self::TriangleStrip | Self::TriangleFan => count >= 3,
        }
    }
}

/// What to do with rigid meshes under joints (`--props`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Props {
    /// Bind each prop to its joint as a single-influence skinned mesh.
    #[default]
    Bind,
    /// Report each prop as an anchor with its mesh.
    Anchors,
}

/// How anchors are chosen besides the named ones (`--anchors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum AnchorsMode {
    /// Pick socket nodes automatically.
    Auto,
}

/// How a LOD group of a model was recognised (recorded per group in the
/// container's LOD record, section kind 17). See `docs/lods.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all(serialize = "snake_case", deserialize = "kebab-case"))]
pub enum LodSource {
    /// The base node's `MSFT_lod` extension lists the lower levels.
    #[serde(alias = "msft_lod")]
    MsftLod,
    /// Sibling mesh nodes named `<name>_LOD<n>` (`<name>` itself or
    /// `<name>_LOD0` is level 0).
    #[serde(alias = "name_suffix")]
    NameSuffix,
    /// The manifest's `[[model.lod]]` table (or `--lod`).
    Manifest,
}

/// One LOD group asked for by the manifest (`[[model.lod]]`) or the
/// command line (`--lod BASE=LOD1,LOD2`): the level-0 node and the nodes
/// of the lower levels, in order. Names are node names of the model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LodSpec {
    /// The level-0 node (a skinned mesh node).
    pub base: String,
    /// The nodes of levels 1, 2, ... (skinned mesh nodes bound to the
    /// base's skin).
    pub levels: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Manifest {
        sampling: SampleRule,
        layout: MatrixLayout,
        convention: NormalConvention,
        format: VatEncoding,
        directions: DirectionEncoding,
    }

    #[test]
    fn output_kinds_are_a_set_and_read_their_manifest_names() {
        let mut set = OutputKinds::of(&[OutputKind::Vat, OutputKind::Bones, OutputKind::Vat]);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [OutputKind::Bones, OutputKind::Vat]
        );
        set.set(OutputKind::Bones, false);
        set.set(OutputKind::OpenVat, true);
        assert!(!set.has(OutputKind::Bones) && set.has(OutputKind::OpenVat));
        assert_eq!(OutputKinds::default().iter().count(), 0);
        let names: Vec<OutputKind> =
            serde_json::from_str(r#"["bones","weights","vat","anchors","openvat"]"#).unwrap();
        assert_eq!(names, OutputKind::ALL);
    }

    #[test]
    fn json_names_read_back() {
        for rule in [SampleRule::FixedRate, SampleRule::EvenSpread] {
            let text = serde_json::to_string(&rule).unwrap();
            assert_eq!(serde_json::from_str::<SampleRule>(&text).unwrap(), rule);
        }
        for c in [
            NormalConvention::InverseTranspose,
            NormalConvention::BlendedMatrix,
        ] {
            let text = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<NormalConvention>(&text).unwrap(), c);
        }
    }

    #[test]
    fn manifests_read_kebab_case_and_json_writes_snake_case() {
        let m: Manifest = toml::from_str(
            "sampling = \"even-spread\"\nlayout = \"mat3x4\"\nconvention = \"blended-matrix\"\nformat = \"png16\"\ndirections = \"bounds\"\n",
        )
        .unwrap();
        assert_eq!(m.sampling, SampleRule::EvenSpread);
        assert_eq!(m.layout, MatrixLayout::Mat3x4);
        assert_eq!(m.convention, NormalConvention::BlendedMatrix);
        assert_eq!(
            (m.format, m.directions),
            (VatEncoding::Png16, DirectionEncoding::Bounds)
        );
        let json = |v: &dyn erased::Json| v.json();
        assert_eq!(json(&SampleRule::EvenSpread), "\"even_spread\"");
        assert_eq!(
            json(&NormalConvention::InverseTranspose),
            "\"inverse_transpose\""
        );
        assert_eq!(json(&MatrixLayout::Mat3x4), "\"mat3x4\"");
        assert_eq!(json(&MatrixLayout::Qts), "\"qts\"");
        assert_eq!(json(&Precision::F16), "\"f16\"");
        assert_eq!(json(&Precision::Unorm16), "\"unorm16\"");
    }

    #[test]
    fn container_bytes_record_the_variant_position() {
        let config = bincode::config::standard();
        let bytes = |v: &dyn erased::Bincode| v.bincode(config);
        // The positions below are part of the container format.
        assert_eq!(bytes(&VatEncoding::Exr32), [0]);
        assert_eq!(bytes(&VatEncoding::Png16), [2]);
        assert_eq!(bytes(&VatEncoding::Unorm8), [3]);
        assert_eq!(bytes(&VatEncoding::Unorm10), [4]);
        assert_eq!(bytes(&DirectionEncoding::Octahedral), [2]);
        assert_eq!(bytes(&SampleRule::EvenSpread), [1]);
        assert_eq!(bytes(&MatrixLayout::Mat3x4), [1]);
        assert_eq!(bytes(&MatrixLayout::Qts), [2]);
        assert_eq!(bytes(&NormalConvention::BlendedMatrix), [1]);
        assert_eq!(bytes(&Precision::F16), [1]);
        assert_eq!(bytes(&Precision::Unorm16), [2]);
    }

    #[test]
    fn layouts_decode_what_they_encode() {
        let m = DMat4::from_cols_array(&[
            1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0, 7.0, 8.0, 9.0, 0.0, 10.0, 11.0, 12.0, 1.0,
        ]);
        for layout in [MatrixLayout::Mat4, MatrixLayout::Mat3x4] {
            let mut px = vec![0.0; layout.pixels_per_joint() * 4];
            layout.encode(&m, &mut px);
            assert_eq!(layout.decode(&px), m.as_mat4(), "{layout:?}");
        }
    }

    /// Object-safe helpers so the tests can list values of different types.
    mod erased {
        pub trait Json {
            fn json(&self) -> String;
        }
        impl<T: serde::Serialize> Json for T {
            fn json(&self) -> String {
                serde_json::to_string(self).unwrap()
            }
        }
        pub trait Bincode {
            fn bincode(&self, config: bincode::config::Configuration) -> Vec<u8>;
        }
        impl<T: serde::Serialize> Bincode for T {
            fn bincode(&self, config: bincode::config::Configuration) -> Vec<u8> {
                bincode::serde::encode_to_vec(self, config).unwrap()
            }
        }
    }
}
