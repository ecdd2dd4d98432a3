//! Raw command-line arguments (clap). Validated into a plan by [`crate::plan`].
//!
//! The bake settings' flags are declared with their manifest keys in
//! [`rigbake::options`] ([`SettingFlags`], [`BakeFlags`]); they are
//! optional so that the plan can tell "not given" from a default: built-in
//! defaults < manifest `[defaults]` < matching `[[model]]` entries < flags
//! given on the command line.

use std::path::PathBuf;
use std::sync::LazyLock;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use rigbake::options::{BakeFlags, SettingFlags};
use rigbake_format::container::FORMAT_MAJOR;
use rigbake_format::records::FORMAT_MINOR;

/// `rigbake --version`: the tool's version and the container format it
/// writes (the format crate's version, so a new record changes it there
/// alone).
fn version() -> &'static str {
    static VERSION: LazyLock<String> = LazyLock::new(|| {
        format!(
            "{} (container format {FORMAT_MAJOR}.{FORMAT_MINOR})",
            env!("CARGO_PKG_VERSION")
        )
    });
    VERSION.as_str()
}

/// The exit codes, listed at the end of `rigbake --help`.
pub const EXIT_CODES_HELP: &str = "Exit codes: 0 when every model was baked, up to date or skipped with a reason (and for \
verify: every check passed); 1 when any model or check failed; 2 for usage errors (bad \
arguments, manifest or paths).";

/// Bake skeletal animation into GPU textures for crowds.
#[derive(Debug, Parser)]
#[command(name = "rigbake", version = version(), about, long_about = None, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// How much every command prints.
    #[command(flatten)]
    pub output: OutputFlags,
}

/// `-v` and `-q` before the subcommand (`rigbake -q bake ...`): the same
/// as the subcommand's own `-v`/`-q`, for the commands that have them
/// (bake, vat, verify, preview, merge-report; see README, "Output").
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct OutputFlags {
    /// Print more (bake, vat, preview; before the subcommand: see its own
    /// -v).
    #[arg(long, short, action = ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Print nothing but errors (bake, vat, verify, preview, merge-report;
    /// before the subcommand: see its own -q).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `-v` and `-q` of `bake` and `vat`.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct BakeOutputFlags {
    /// Print more: the files each baked model wrote (and removed).
    #[arg(long, short, action = ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Print nothing but errors: no progress, warnings or summary (--json
    /// still prints the report).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `-v` and `-q` of `preview`.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct PreviewOutputFlags {
    /// Print more: the frames drawn per clip.
    #[arg(long, short, action = ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Print nothing but errors: no `wrote` line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `-q` of `verify`.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct VerifyOutputFlags {
    /// Print only problems and failures: nothing when every check passes
    /// (--json still prints the report).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `-q` of `merge-report`.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct MergeOutputFlags {
    /// Print nothing but errors: no summary unless a model failed (--json
    /// still prints the merged report).
    #[arg(long, short)]
    pub quiet: bool,
}

impl From<BakeOutputFlags> for OutputFlags {
    fn from(f: BakeOutputFlags) -> Self {
        Self {
            verbose: f.verbose,
            quiet: f.quiet,
        }
    }
}

impl From<PreviewOutputFlags> for OutputFlags {
    fn from(f: PreviewOutputFlags) -> Self {
        Self {
            verbose: f.verbose,
            quiet: f.quiet,
        }
    }
}

impl From<VerifyOutputFlags> for OutputFlags {
    fn from(f: VerifyOutputFlags) -> Self {
        Self {
            verbose: 0,
            quiet: f.quiet,
        }
    }
}

impl From<MergeOutputFlags> for OutputFlags {
    fn from(f: MergeOutputFlags) -> Self {
        Self {
            verbose: 0,
            quiet: f.quiet,
        }
    }
}

/// How much to print, from [`OutputFlags`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `-q`: errors only.
    Quiet,
    /// The default: progress, summaries, what was written.
    Normal,
    /// `-v`: details too.
    Verbose,
}

impl OutputFlags {
    /// The flags before the subcommand together with the subcommand's own;
    /// `None` when one asks for quiet and the other for verbose.
    pub fn with(self, own: OutputFlags) -> Option<Self> {
        let both = Self {
            verbose: self.verbose.saturating_add(own.verbose),
            quiet: self.quiet || own.quiet,
        };
        (!(both.quiet && both.verbose > 0)).then_some(both)
    }

    /// The level the flags ask for.
    pub fn verbosity(self) -> Verbosity {
        if self.quiet {
            Verbosity::Quiet
        } else if self.verbose > 0 {
            Verbosity::Verbose
        } else {
            Verbosity::Normal
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Bake models: bone-matrix textures, bone weights, a container (and
    /// vertex animation textures with --vat). Takes files, folders, or a
    /// manifest.
    Bake(BakeArgs),
    /// Convert animated meshes to vertex animation textures (VAT) only.
    Vat(VatArgs),
    /// Show what a .rigbake container holds, or what a .gltf/.glb model
    /// holds before baking.
    Inspect(InspectArgs),
    /// Join the JSON reports of several (sharded) bakes into one.
    MergeReport(MergeReportArgs),
    /// Check a bake: play it through the runtime reference and compare with
    /// a direct evaluation of its source model.
    Verify(VerifyArgs),
    /// Render a bake as a contact sheet (or an animated PNG of one clip).
    Preview(PreviewArgs),
    /// Play bakes in the browser: a local server (127.0.0.1 only) and a
    /// WebGL2 page showing a crowd through either playback path.
    View(crate::view::ViewArgs),
    /// Print a shell completion script (e.g. `rigbake completions bash >
    /// /etc/bash_completion.d/rigbake`).
    Completions(CompletionsArgs),
    /// Print the manual page (roff; `rigbake man | man -l -`).
    Man,
}

/// Arguments of `rigbake completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Options about the run itself (not the bake's contents).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Output folder; each model's results go to OUT/<model path without
    /// extension>/ (or the manifest's `out`).
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores). Outputs do not depend on it.
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print the report as one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Rebake models whose outputs are up to date.
    #[arg(long)]
    pub force: bool,
    /// Bake only shard K of N (e.g. 2/3): a deterministic share of the
    /// models, for CI matrices.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
}

/// Arguments of `rigbake bake`.
#[derive(Debug, Args)]
pub struct BakeArgs {
    /// glTF (.gltf) or binary glTF (.glb) files, or folders to search for
    /// them (recursively). With none and no --manifest, `rigbake.toml` in
    /// the current folder is the manifest.
    #[arg(value_name = "MODEL|DIR")]
    pub inputs: Vec<PathBuf>,
    /// A TOML manifest listing models and their settings (see
    /// docs/manifest.md).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// Run options.
    #[command(flatten)]
    pub run: RunArgs,
    /// Bake settings of `bake` and `vat`.
    #[command(flatten)]
    pub settings: SettingFlags,
    /// Bake settings of `bake` alone.
    #[command(flatten)]
    pub bake: BakeFlags,
    /// Write identical bone textures of different models once, in
    /// OUT/_shared/, and point the containers at that copy.
    #[arg(long)]
    pub share_bones: bool,
    /// How much the run prints.
    #[command(flatten)]
    pub output: BakeOutputFlags,
}

/// Arguments of `rigbake vat`.
#[derive(Debug, Args)]
pub struct VatArgs {
    /// glTF (.gltf) or binary glTF (.glb) files, or folders to search for
    /// them (recursively). With none and no --manifest, `rigbake.toml` in
    /// the current folder is the manifest.
    #[arg(value_name = "MODEL|DIR")]
    pub inputs: Vec<PathBuf>,
    /// A TOML manifest listing models and their settings (see
    /// docs/manifest.md); each model it lists gets VAT only (a model with
    /// `outputs = []` stays skipped).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// Run options.
    #[command(flatten)]
    pub run: RunArgs,
    /// Bake settings.
    #[command(flatten)]
    pub settings: SettingFlags,
    /// Also write the files another tool's players read: `openvat` writes
    /// OpenVAT's `<model>_vat.exr`, `<model>_vnrm.exr`, `<model>.glb`,
    /// `<model>-remap_info.json` (see docs/openvat.md).
    #[arg(long, value_enum, value_name = "TOOL")]
    pub compat: Option<Compat>,
    /// How much the run prints.
    #[command(flatten)]
    pub output: BakeOutputFlags,
}

/// Other tools' VAT conventions `rigbake vat --compat` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// OpenVAT (Blender add-on; players for three.js, Godot, Unity).
    Openvat,
}

/// Arguments of `rigbake inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The .rigbake container to read, or a source model (.glb, .gltf) to
    /// describe before baking it: scenes, skins, meshes, clips, sockets and
    /// extensions.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print one JSON document (schema: formats/inspect.schema.json for a
    /// container, formats/inspect-source.schema.json for a model).
    #[arg(long)]
    pub json: bool,
    /// Also read every payload and texture file and check every checksum
    /// (containers only).
    #[arg(long)]
    pub verify: bool,
    /// Frame rate the clip frame counts use (models only; as `bake --fps`).
    #[arg(long, value_name = "FPS", default_value_t = 30.0)]
    pub fps: f64,
    /// The scene to describe (models only; as `bake --scene`).
    #[arg(long, value_name = "N")]
    pub scene: Option<usize>,
}

/// Arguments of `rigbake merge-report`.
#[derive(Debug, Args)]
pub struct MergeReportArgs {
    /// JSON reports written by `rigbake bake --json`.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Print the merged report as JSON on stdout (default: a summary).
    #[arg(long)]
    pub json: bool,
    /// How much merge-report prints.
    #[command(flatten)]
    pub output: MergeOutputFlags,
}

/// Arguments of `rigbake verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The .rigbake container to check.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The model the bake was made from (default: the path the bake
    /// recorded relative to the container, if that file is unchanged; else
    /// the recorded file name beside the container).
    #[arg(long, value_name = "MODEL")]
    pub source: Option<PathBuf>,
    /// Largest position error at frame times, beyond the errors the bake
    /// recorded for lossy encodings, relative to the bounding-box diagonal.
    #[arg(long, default_value_t = rigbake::verify::DEFAULT_RELATIVE_TOLERANCE, value_name = "REL")]
    pub tolerance: f64,
    /// Largest normal error at frame times, beyond recorded errors, in
    /// degrees (judged where the bake records a bound or is exact).
    #[arg(long, default_value_t = 0.01, value_name = "DEGREES")]
    pub normal_tolerance: f64,
    /// Also judge mid-frame position errors (relative to the diagonal);
    /// without it they are only reported.
    #[arg(long, value_name = "REL")]
    pub mid_tolerance: Option<f64>,
    /// Check every N-th frame (and always the last) of every clip.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub stride: usize,
    /// Check only this clip (repeatable; default: every clip).
    #[arg(long = "clip", value_name = "NAME")]
    pub clips: Vec<String>,
    /// Compare even when the source's SHA-256 differs from the recorded one
    /// (reported as a problem, but not a failure by itself).
    #[arg(long)]
    pub allow_source_mismatch: bool,
    /// Accept the position loss the bake recorded for dropped bone
    /// influences (--max-influences below the source's count): judge
    /// against it instead of against the source. Without it such a bake
    /// fails when its error against the source exceeds --tolerance.
    #[arg(long)]
    pub accept_recorded_loss: bool,
    /// Print one JSON document (see docs/runtime.md).
    #[arg(long)]
    pub json: bool,
    /// How much verify prints.
    #[command(flatten)]
    pub output: VerifyOutputFlags,
}

/// `--path` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PathArg {
    /// The bone-matrix texture with the bone-weight channels.
    Bones,
    /// The vertex animation textures.
    Vat,
}

/// Arguments of `rigbake preview`.
#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// The .rigbake container to show.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The PNG to write.
    #[arg(long, short, value_name = "PNG")]
    pub out: PathBuf,
    /// The model the bake was made from (default: the path the bake
    /// recorded relative to the container, if that file is unchanged; else
    /// the recorded file name beside the container); it provides the triangles.
    #[arg(long, value_name = "MODEL")]
    pub source: Option<PathBuf>,
    /// Which playback path to show (default: bones when the bake has them).
    #[arg(long, value_enum)]
    pub path: Option<PathArg>,
    /// Frames per clip, evenly spaced from the first to the last.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub columns: u32,
    /// Width and height of each frame in pixels.
    #[arg(long, default_value_t = 160, value_name = "PIXELS")]
    pub size: u32,
    /// Show only this clip (repeatable; default: every clip).
    #[arg(long = "clip", value_name = "NAME")]
    pub clips: Vec<String>,
    /// Write an animated PNG of every frame of this clip instead.
    #[arg(long, value_name = "CLIP")]
    pub animate: Option<String>,
    /// How much preview prints.
    #[command(flatten)]
    pub output: PreviewOutputFlags,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_version_names_the_container_format_written() {
        let shown = Cli::command().render_version();
        assert_eq!(
            shown.trim_end(),
            format!(
                "rigbake {} (container format {FORMAT_MAJOR}.{FORMAT_MINOR})",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}
