//! Raw command-line arguments (clap). Validated into a plan by [`crate::plan`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// rigbake: bake skeletal animation into GPU textures for crowds.
#[derive(Debug, Parser)]
#[command(name = "rigbake", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Bake skinned glTF models: bone-matrix textures and a container
    /// (and vertex animation textures with --vat).
    Bake(BakeArgs),
    /// Convert animated meshes to vertex animation textures (VAT) only.
    Vat(VatArgs),
    /// Show what a .rigbake container holds.
    Inspect(InspectArgs),
    /// Check a bake: play it through the runtime reference and compare with
    /// a direct evaluation of its source model.
    Verify(crate::verify::VerifyArgs),
    /// Render a bake as a contact sheet (or an animated PNG of one clip).
    Preview(crate::preview::PreviewArgs),
}

/// Options shared by every baking command.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Output folder; each model's results go to OUT/<model stem>/.
    #[arg(long, short, value_name = "DIR")]
    pub out: PathBuf,
    /// Frames sampled per second of animation.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// How frame times are spread over a clip.
    #[arg(long, value_enum, default_value_t = SamplingArg::FixedRate)]
    pub sampling: SamplingArg,
    /// Bake only this clip (repeatable; default: every clip).
    #[arg(long = "clip", value_name = "NAME")]
    pub clips: Vec<String>,
    /// Largest texture width or height.
    #[arg(
        long,
        alias = "max-size",
        default_value_t = 8192,
        value_name = "PIXELS"
    )]
    pub max_texture_size: usize,
    /// Store textures inside the container instead of as files beside it.
    #[arg(long)]
    pub embed_textures: bool,
    /// Worker threads (default: all cores). Outputs do not depend on it.
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of vertex animation textures.
#[derive(Debug, Args)]
pub struct VatFlags {
    /// VAT sample encoding.
    #[arg(long = "format", value_enum, default_value_t = VatFormatArg::Exr16)]
    pub format: VatFormatArg,
    /// Also bake normals.
    #[arg(long)]
    pub normals: bool,
    /// Also bake tangents.
    #[arg(long)]
    pub tangents: bool,
    /// How normals are transformed.
    #[arg(long, value_enum, default_value_t = NormalConventionArg::InverseTranspose)]
    pub normal_convention: NormalConventionArg,
    /// How PNG stores normals and tangents.
    #[arg(long, value_enum, default_value_t = DirectionEncodingArg::Octahedral)]
    pub direction_encoding: DirectionEncodingArg,
    /// Pad VAT textures to power-of-two sizes.
    #[arg(long)]
    pub power_of_two: bool,
    /// Compress VAT EXRs with ZIP (smaller, slower to write).
    #[arg(long)]
    pub zip: bool,
}

/// Arguments of `rigbake bake`.
#[derive(Debug, Args)]
pub struct BakeArgs {
    /// glTF (.gltf) or binary glTF (.glb) files to bake.
    #[arg(required = true, value_name = "MODEL")]
    pub models: Vec<PathBuf>,
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Bone texture layout: 4 pixels (4x4 matrix) or 3 pixels (3x4) per joint.
    #[arg(long, value_enum, default_value_t = LayoutArg::Mat4)]
    pub layout: LayoutArg,
    /// Bone texture sample precision.
    #[arg(long, value_enum, default_value_t = PrecisionArg::F32)]
    pub precision: PrecisionArg,
    /// Bone-weight pairs kept per vertex (1 to 8): UV1..UV4 channels.
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub max_influences: usize,
    /// Do not write bone-weight channels and the weights mesh.
    #[arg(long)]
    pub no_weights: bool,
    /// Also bake vertex animation textures.
    #[arg(long)]
    pub vat: bool,
    /// VAT options (used with --vat).
    #[command(flatten)]
    pub vat_flags: VatFlags,
}

/// Arguments of `rigbake vat`.
#[derive(Debug, Args)]
pub struct VatArgs {
    /// glTF (.gltf) or binary glTF (.glb) files to convert.
    #[arg(required = true, value_name = "MODEL")]
    pub models: Vec<PathBuf>,
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// VAT options.
    #[command(flatten)]
    pub vat_flags: VatFlags,
}

/// Arguments of `rigbake inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The .rigbake container to read.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print one JSON document (schema: formats/inspect.schema.json).
    #[arg(long)]
    pub json: bool,
    /// Also read every payload and texture file and check every checksum.
    #[arg(long)]
    pub verify: bool,
}

/// `--sampling` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SamplingArg {
    /// Frame i at min(i / fps, duration).
    FixedRate,
    /// Same frame count, spread so the last frame lands on the clip end.
    EvenSpread,
}

/// `--layout` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// 4 RGBA pixels per joint (matrix columns).
    #[value(name = "mat4")]
    Mat4,
    /// 3 RGBA pixels per joint (rows of the upper 3x4).
    #[value(name = "mat3x4")]
    Mat3x4,
}

/// `--precision` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    /// 32-bit float.
    F32,
    /// 16-bit half float.
    F16,
}

/// `--format` values (VAT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VatFormatArg {
    /// EXR with 16-bit half floats (default).
    Exr16,
    /// EXR with 32-bit floats (exact).
    Exr32,
    /// 16-bit PNG normalised to bounds stored in the metadata.
    Png16,
}

/// `--normal-convention` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NormalConventionArg {
    /// Exact: inverse transpose of the blended matrix.
    InverseTranspose,
    /// The blended matrix itself.
    BlendedMatrix,
}

/// `--direction-encoding` values (PNG normals and tangents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DirectionEncodingArg {
    /// Octahedral (2 channels).
    Octahedral,
    /// Each axis normalised to its bounds.
    Bounds,
}
