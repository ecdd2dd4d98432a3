//! Errors of the command line before any model is baked: bad arguments,
//! manifests and settings (exit code 2), and reports that cannot be merged.
//! Failures of one model's bake are `rigbake::BakeError`s instead.

use std::path::PathBuf;

use rigbake::options::SettingsError;

/// The largest `--jobs`.
pub const MAX_JOBS: usize = 1024;

/// A usage error: what the user gave cannot be run (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// A model path given on the command line does not exist.
    #[error("`{}`: no such file or folder", .0.display())]
    NoSuchInput(PathBuf),
    /// A VAT-only setting given to `bake` without `--vat` (and without a
    /// manifest that could ask for VAT): it would be ignored (the flag's
    /// name, without its dashes).
    #[error("--{0} only applies to vertex animation textures: add --vat (or use `rigbake vat`)")]
    VatFlagWithoutVat(&'static str),
    /// `--compression` (or `--zip`) with `--format png16` on the command
    /// line: PNG is always deflate. (A manifest's compression simply does
    /// not apply to its PNG models.)
    #[error(
        "{0} applies to EXR formats only: png16 is always deflate (drop it, or use --format exr16 or exr32)"
    )]
    PngCompression(&'static str),
    /// `--png-compression` where no model could write a PNG file (why).
    #[error("--png-compression applies to PNG files only: {0}")]
    NoPngFiles(String),
    /// `--compression` (or `--zip`) with a KTX2 or DDS texture container.
    #[error(
        "{0} applies to EXR files only: --texture-container {1} stores texels uncompressed (use ktx2-zstd for Zstandard supercompression, or drop {0})"
    )]
    GpuCompression(&'static str, &'static str),
    /// The manifest cannot be read or parsed.
    #[error(transparent)]
    Manifest(#[from] rigbake::manifest::ManifestError),
    /// Models cannot be listed.
    #[error(transparent)]
    Discover(#[from] rigbake::discover::DiscoverError),
    /// Folder discovery found problems and no model (the text names them).
    #[error("{0}")]
    Discovery(String),
    /// `--lod MODEL=LOD1.glb,...` names a model that is not an input.
    #[error("--lod {}=...: `{}` is not one of the models to bake (give it as an input)", .0.display(), .0.display())]
    LodModel(PathBuf),
    /// The run's LOD groups do not form one model per group
    /// ([`rigbake::lod_siblings::check_groups`]).
    #[error("LOD levels: {0}")]
    LodGroups(String),
    /// A folder holds no model.
    #[error("`{}` holds no .glb or .gltf file", .0.display())]
    NoModels(PathBuf),
    /// A manifest entry's path pattern is not a glob.
    #[error("{}:{line}: bad path pattern `{pattern}`: {reason}", manifest.display())]
    Pattern {
        /// The manifest.
        manifest: PathBuf,
        /// Line of the entry.
        line: usize,
        /// The pattern (cut when very long).
        pattern: String,
        /// Why.
        reason: String,
    },
    /// A manifest entry's absolute path lies outside the models folder.
    #[error("{}:{line}: `{pattern}` is an absolute path outside `{}`; `path` is relative to the manifest's `models` folder (default: the manifest's folder)", manifest.display(), root.display())]
    OutsideModels {
        /// The manifest.
        manifest: PathBuf,
        /// Line of the entry.
        line: usize,
        /// The pattern.
        pattern: String,
        /// The models folder.
        root: PathBuf,
    },
    /// A manifest entry matches no model.
    #[error("{}:{line}: `{pattern}` matches no .glb or .gltf file under `{}`", manifest.display(), root.display())]
    NoMatch {
        /// The manifest.
        manifest: PathBuf,
        /// Line of the entry.
        line: usize,
        /// The pattern.
        pattern: String,
        /// The folder searched.
        root: PathBuf,
    },
    /// `rigbake bake` with no model, no --manifest, and no `rigbake.toml`
    /// in the current folder.
    #[error(
        "nothing to bake: give models or folders, --manifest FILE, or run in a folder with a rigbake.toml"
    )]
    NothingToBake,
    /// No output folder was given (neither `--out` nor the manifest's `out`).
    #[error("no output folder: give --out DIR (or `out` in the manifest)")]
    NoOut,
    /// `--jobs` outside 1..=[`MAX_JOBS`].
    #[error("--jobs must be 1 to {max}, got {0}", max = MAX_JOBS)]
    Jobs(usize),
    /// `--shard` is not `K/N`.
    #[error("--shard must be K/N with 1 <= K <= N <= {max}, got `{0}`", max = rigbake::report::MAX_SHARDS)]
    Shard(String),
    /// An input has no file name.
    #[error("`{}` is not a file name", .0.display())]
    NotAFile(PathBuf),
    /// Two models would write the same folder.
    #[error("`{first}` and `{second}` would both write to `{}`; bake them into different --out folders", dir.display())]
    SameOutput {
        /// One model.
        first: String,
        /// The other.
        second: String,
        /// The folder.
        dir: PathBuf,
    },
    /// A model's output folder would have a name that is empty, `.` or
    /// `..` (it would write outside `--out`).
    #[error(
        "`{id}`: cannot name an output folder `{part}` (it would write outside --out); rename the model file"
    )]
    OutputName {
        /// The model.
        id: String,
        /// The offending folder name.
        part: String,
    },
    /// Two different files read as the same id (names that are not valid
    /// UTF-8 and differ only in their invalid bytes).
    #[error(
        "{first:?} and {second:?} are different files that both read as `{id}`; rename one (file names should be valid UTF-8)"
    )]
    SameId {
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
        /// The id both read as.
        id: String,
    },
    /// Settings given on the command line cannot be used.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A model's resolved settings are invalid.
    #[error("{id}: {source}")]
    ModelSettings {
        /// The model.
        id: String,
        /// Why.
        source: SettingsError,
    },
    /// `--clip NAME` names no clip of the bake.
    #[error("{}: no clip named `{name}` (the bake has: {})", file.display(), known.join(", "))]
    NoClip {
        /// The container.
        file: PathBuf,
        /// The name given.
        name: String,
        /// The clips the bake has.
        known: Vec<String>,
    },
}
