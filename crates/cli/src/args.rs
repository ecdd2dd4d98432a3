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
    /// Bake skinned glTF models into bone-matrix textures and a container.
    Bake(BakeArgs),
    /// Show what a .rigbake container holds.
    Inspect(InspectArgs),
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

/// Arguments of `rigbake bake`.
#[derive(Debug, Args)]
pub struct BakeArgs {
    /// glTF (.gltf) or binary glTF (.glb) files to bake.
    #[arg(required = true, value_name = "MODEL")]
    pub models: Vec<PathBuf>,
    /// Output folder; each model's results go to OUT/<model stem>/.
    #[arg(long, short, value_name = "DIR")]
    pub out: PathBuf,
    /// Frames sampled per second of animation.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// How frame times are spread over a clip.
    #[arg(long, value_enum, default_value_t = SamplingArg::FixedRate)]
    pub sampling: SamplingArg,
    /// Bone texture layout: 4 pixels (4x4 matrix) or 3 pixels (3x4) per joint.
    #[arg(long, value_enum, default_value_t = LayoutArg::Mat4)]
    pub layout: LayoutArg,
    /// Bone texture sample precision.
    #[arg(long, value_enum, default_value_t = PrecisionArg::F32)]
    pub precision: PrecisionArg,
    /// Largest texture width or height.
    #[arg(long, default_value_t = 8192, value_name = "PIXELS")]
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
