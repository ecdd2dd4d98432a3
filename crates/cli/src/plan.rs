//! Validated bake plans: inputs found, settings resolved per model, output
//! folders chosen and shards selected, once, before any work starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use rigbake::discover::discover;
use rigbake_types::{TextureCompression, TextureContainer, VatEncoding};
use sha2::{Digest, Sha256};

use crate::args::{BakeArgs, RunArgs, VatArgs, Verbosity};
use crate::error::{MAX_JOBS, UsageError};
use rigbake::manifest::Manifest;
use rigbake::options::{
    Layer as _, LodArg, Options, SettingFlags, check_max_texture_size, parse_blend,
};
use rigbake::settings::BakeSettings;

/// One model to bake and where its outputs go.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeJob {
    /// The model file.
    pub input: PathBuf,
    /// How reports name it: its path relative to the folder or manifest it
    /// was found through (`/` separators), or the path as given.
    pub id: String,
    /// Its output folder.
    pub out_dir: PathBuf,
    /// Its settings.
    pub settings: BakeSettings,
}

/// The manifest a bare `rigbake bake` uses, in the current folder.
pub const DEFAULT_MANIFEST: &str = "rigbake.toml";

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Nothing but errors.
    Quiet,
    /// One line per event (logs, CI).
    Lines,
    /// Live bars (a terminal).
    Bars,
}

/// A validated bake invocation (`rigbake bake` or `rigbake vat`).
#[derive(Debug, Clone, PartialEq)]
pub struct BakePlan {
    /// Models in a stable order (sorted by id).
    pub jobs: Vec<BakeJob>,
    /// Models of other shards (not baked here).
    pub other_shards: usize,
    /// The shard baked, as (k, n), 1-based.
    pub shard: Option<(usize, usize)>,
    /// Worker threads, `None` for all cores.
    pub threads: Option<usize>,
    /// How to show progress.
    pub progress: ProgressMode,
    /// `-v`: list the files each baked model wrote.
    pub list_files: bool,
    /// Print the report as JSON on stdout.
    pub json: bool,
    /// Rebake up-to-date models.
    pub force: bool,
    /// The output root.
    pub out: PathBuf,
    /// Share identical bone textures across models (in `out/_shared`).
    pub share_bones: bool,
    /// What folder discovery could not search or use (see
    /// [`rigbake::discover::Discovery::problems`]): printed, and the run fails at the end.
    pub problems: Vec<String>,
    /// What the user should know before the run (LOD level files baked as
    /// levels of their model, not on their own): printed.
    pub notes: Vec<String>,
}

/// The output folder of a model found as `id` (`a/b/c.glb` -> `out/a/b/c`).
/// Every folder name must be a plain name: an empty one, `.` or `..` (a
/// model named `...glb`) would write beside or above `out`, so it is
/// refused.
fn out_dir_for(out: &Path, id: &str) -> Result<PathBuf, UsageError> {
    let without_ext = id.rsplit_once('.').map_or(id, |(stem, _)| stem);
    let mut dir = out.to_path_buf();
    for part in without_ext.split('/') {
        dir.push(plain_name(id, part)?);
    }
    Ok(dir)
}

/// `part` if it is a plain folder name (not empty, `.`, `..`, and with no
/// separator), else the error naming model `id`.
fn plain_name<'a>(id: &str, part: &'a str) -> Result<&'a str, UsageError> {
    let mut components = Path::new(part).components();
    match (components.next(), components.next()) {
        (Some(std::path::Component::Normal(_)), None) => Ok(part),
        _ => Err(UsageError::OutputName {
            id: id.to_owned(),
            part: part.to_owned(),
        }),
    }
}

/// Whether two input paths name the same file (the same model given
/// twice), comparing real paths, not the ids made from them.
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Parses `--shard K/N` ([`rigbake::report::parse_shard`]: 1 <= K <= N <=
/// [`rigbake::report::MAX_SHARDS`]).
fn parse_shard(text: &str) -> Result<(usize, usize), UsageError> {
    rigbake::report::parse_shard(text).ok_or_else(|| UsageError::Shard(text.to_owned()))
}

/// The shard (1-based) a model id belongs to among `n`: a hash of the id, so
/// adding a model never moves the others.
pub fn shard_of(id: &str, n: usize) -> usize {
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_le_bytes(first) % n as u64) as usize + 1
}

fn progress_mode(verbosity: Verbosity) -> ProgressMode {
    use std::io::IsTerminal as _;
    if verbosity == Verbosity::Quiet {
        ProgressMode::Quiet
    } else if std::io::stderr().is_terminal() {
        ProgressMode::Bars
    } else {
        ProgressMode::Lines
    }
}

/// Inputs as (path, id, options so far) before output folders are known.
type Found = Vec<(PathBuf, String, Options, bool)>;

/// Expands files and folders given on the command line; the bool says
/// whether the model was found in a folder (its output mirrors the path).
fn expand_inputs(
    inputs: &[PathBuf],
    base: &Options,
    out: &Path,
    problems: &mut Vec<String>,
) -> Result<Found, UsageError> {
    let mut found = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let d = discover(input, Some(out))?;
            let models = d.models;
            if models.is_empty() {
                return Err(if d.problems.is_empty() {
                    UsageError::NoModels(input.clone())
                } else {
                    UsageError::Discovery(d.problems.join("; "))
                });
            }
            problems.extend(d.problems);
            for (path, id) in models {
                found.push((path, id, base.clone(), true));
            }
        } else if std::fs::symlink_metadata(input)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            return Err(UsageError::NoSuchInput(input.clone()));
        } else {
            let id = input.to_string_lossy().replace('\\', "/");
            found.push((input.clone(), id, base.clone(), false));
        }
    }
    Ok(found)
}

/// The longest manifest path pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;

/// Compiles a manifest path pattern; the error says why in plain words.
/// Goes through a `GlobSet` because `Glob::compile_matcher` panics when the
/// pattern is past the regex engine's size or nesting limits. (A plain
/// `String` error, justified: its only caller wraps it at once in a
/// `UsageError` that names the manifest, the line and the pattern.)
fn compile_pattern(pattern: &str) -> Result<GlobSet, String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the pattern is {} bytes long; the limit is {MAX_PATTERN_BYTES}",
            pattern.len()
        ));
    }
    let glob = Glob::new(pattern).map_err(|e| e.kind().to_string())?;
    GlobSetBuilder::new()
        .add(glob)
        .build()
        .map_err(|e| format!("too large or too deeply nested to match: {e}"))
}

/// A pattern as an error message shows it (cut when very long).
fn shown_pattern(pattern: &str) -> String {
    rigbake::inspect::shown(pattern)
}

/// A manifest `path` as a pattern relative to the models folder `root`:
/// a relative one as it is; an absolute one (`/work/models/*.glb`) with
/// `root`'s absolute path taken off its front; `None` when it lies outside
/// `root`.
fn relative_pattern(pattern: &str, root: &Path) -> Option<String> {
    if !Path::new(pattern).is_absolute() {
        return Some(pattern.to_owned());
    }
    // The folder as given (when absolute) and its canonical path.
    let roots = [Some(root.to_path_buf()), root.canonicalize().ok()];
    roots.into_iter().flatten().find_map(|root| {
        let root = root.to_str()?.trim_end_matches('/').to_owned();
        let rest = pattern.strip_prefix(&root)?.strip_prefix('/')?;
        (!rest.is_empty()).then(|| rest.to_owned())
    })
}

/// Models a manifest selects, each with defaults and every matching entry
/// applied in file order.
fn expand_manifest(
    manifest: &Manifest,
    base: &Options,
    out: &Path,
    problems: &mut Vec<String>,
) -> Result<Found, UsageError> {
    let d = discover(&manifest.root, Some(out))?;
    problems.extend(d.problems);
    let all = d.models;
    // Keyed by id and real path: two files whose names read the same after
    // lossy conversion stay two models (and collide clearly later).
    let mut selected: BTreeMap<(String, PathBuf), Options> = BTreeMap::new();
    for entry in &manifest.models {
        let pattern = relative_pattern(&entry.pattern, &manifest.root).ok_or_else(|| {
            UsageError::OutsideModels {
                manifest: manifest.path.clone(),
                line: entry.line,
                pattern: shown_pattern(&entry.pattern),
                root: manifest.root.clone(),
            }
        })?;
        let glob = compile_pattern(&pattern).map_err(|reason| UsageError::Pattern {
            manifest: manifest.path.clone(),
            line: entry.line,
            pattern: shown_pattern(&entry.pattern),
            reason,
        })?;
        let mut matched = false;
        for (path, id) in &all {
            if glob.is_match(id) {
                matched = true;
                let draft = selected
                    .entry((id.clone(), path.clone()))
                    .or_insert_with(|| manifest.defaults.clone().over(base.clone()));
                *draft = entry.overrides.clone().over(std::mem::take(draft));
            }
        }
        if !matched {
            return Err(UsageError::NoMatch {
                manifest: manifest.path.clone(),
                line: entry.line,
                pattern: entry.pattern.clone(),
                root: manifest.root.clone(),
            });
        }
    }
    Ok(selected
        .into_iter()
        .map(|((id, path), d)| (path, id, d, true))
        .collect())
}

/// Checks setting flags that are wrong whatever the manifest says, so the
/// error names the flag.
fn check_flags(flags: &SettingFlags) -> Result<(), UsageError> {
    if let Some(m) = flags.max_texture_size {
        check_max_texture_size("--max-texture-size", m)?;
    }
    let vat = &flags.vat;
    let zip = vat.zip == Some(true);
    let compressed = zip
        || vat
            .compression
            .is_some_and(|c| c != TextureCompression::None);
    if let Some(container) = flags
        .texture_container
        .filter(|c| !c.is_exr() && compressed)
    {
        let flag = if zip { "--zip" } else { "--compression" };
        return Err(UsageError::GpuCompression(flag, container_name(container)));
    }
    if vat.format == Some(VatEncoding::Png16) {
        if zip {
            return Err(UsageError::PngCompression("--zip"));
        }
        if vat
            .compression
            .is_some_and(|c| c != TextureCompression::None)
        {
            return Err(UsageError::PngCompression("--compression"));
        }
    }
    Ok(())
}

/// The name of a GPU texture container on the command line.
fn container_name(container: TextureContainer) -> &'static str {
    match container {
        TextureContainer::Ktx2 => "ktx2",
        TextureContainer::Ktx2Zstd => "ktx2-zstd",
        _ => "dds",
    }
}

/// `--png-compression` where no model could write a PNG file: with a KTX2
/// or DDS container, or with a format other than png16 that no manifest
/// (`manifest`) or error budget (`budget`, `--max-error`) could change.
fn check_png_compression(
    flags: &SettingFlags,
    manifest: bool,
    budget: bool,
) -> Result<(), UsageError> {
    if flags.vat.png_compression.is_none() {
        return Ok(());
    }
    if let Some(container) = flags.texture_container.filter(|c| !c.is_exr()) {
        return Err(UsageError::NoPngFiles(format!(
            "--texture-container {} writes its textures as KTX2 or DDS files (drop one of the two)",
            container_name(container)
        )));
    }
    match flags.vat.format {
        _ if budget => Ok(()),
        Some(VatEncoding::Png16) => Ok(()),
        None if manifest => Ok(()),
        Some(format) => Err(UsageError::NoPngFiles(format!(
            "--format {} writes no PNG file (drop it, or use --format png16)",
            clap::ValueEnum::to_possible_value(&format)
                .map_or_else(String::new, |v| v.get_name().to_owned())
        ))),
        None => Err(UsageError::NoPngFiles(
            "the VAT format is exr16 by default (drop it, or add --format png16)".to_owned(),
        )),
    }
}

/// The first VAT-only flag set in `flags`, by its name on the command line
/// without the dashes.
fn vat_only_flag(flags: &SettingFlags) -> Option<&'static str> {
    flags.vat.given().into_iter().find_map(|o| o.flag)
}

/// The manifest of a `bake` or `vat` run: `--manifest FILE`, or with no
/// model and no `--manifest`, `rigbake.toml` in the current folder (a usage
/// error when there is none); `None` when models were given without one.
fn load_manifest(
    inputs: &[PathBuf],
    manifest: Option<&Path>,
) -> Result<Option<Manifest>, UsageError> {
    let default_manifest =
        (inputs.is_empty() && manifest.is_none()).then(|| PathBuf::from(DEFAULT_MANIFEST));
    if let Some(path) = &default_manifest
        && !path.is_file()
    {
        return Err(UsageError::NothingToBake);
    }
    manifest
        .or(default_manifest.as_deref())
        .map(Manifest::load)
        .transpose()
        .map_err(UsageError::from)
}

/// What [`gather`] found: the output folder, the models, and what was
/// noticed on the way.
struct Gathered {
    out: PathBuf,
    found: Found,
    /// Paths that could not be searched or used (the run fails at the end).
    problems: Vec<String>,
    /// What the user should know (LOD files baked as levels).
    notes: Vec<String>,
}

/// The output folder (`--out`, else the manifest's `out`) and the models of
/// a `bake` or `vat` run: the inputs given, then the manifest's, with the
/// problems found while searching folders; LOD level files attached to
/// their models (`--lod` in `flags`, manifest `lod_files`, siblings found in folders)
/// and taken out of the models.
fn gather(
    inputs: &[PathBuf],
    manifest: Option<&Manifest>,
    run: &RunArgs,
    flags: &SettingFlags,
) -> Result<Gathered, UsageError> {
    let out = run
        .out
        .clone()
        .or_else(|| manifest.and_then(|m| m.out.clone()))
        .ok_or(UsageError::NoOut)?;
    let mut problems = Vec::new();
    let mut found = expand_inputs(inputs, &Options::default(), &out, &mut problems)?;
    if let Some(m) = manifest {
        found.extend(expand_manifest(
            m,
            &Options::default(),
            &out,
            &mut problems,
        )?);
    }
    let notes = attach_lod_files(&mut found, &flags.lod_args)?;
    Ok(Gathered {
        out,
        found,
        problems,
        notes,
    })
}

/// Gives each model its LOD level files: `--lod MODEL=LOD1.glb,...` (the
/// model must be an input), else those the manifest named, else, for a
/// model found in a folder, `<stem>_LOD<n>` files beside it
/// ([`rigbake::lod_siblings`]). Every level file that is also an input is
/// taken out of the models; the notes say so.
fn attach_lod_files(found: &mut Found, lod: &[LodArg]) -> Result<Vec<String>, UsageError> {
    for arg in lod {
        let LodArg::Files { model, levels } = arg else {
            continue;
        };
        let mut matched = false;
        for (path, _, draft, _) in found.iter_mut() {
            if same_file(path, model) {
                draft.lod_files = Some(levels.clone());
                matched = true;
            }
        }
        if !matched {
            return Err(UsageError::LodModel(model.clone()));
        }
    }
    let paths: Vec<PathBuf> = found.iter().map(|f| f.0.clone()).collect();
    for group in rigbake::lod_siblings::find(&paths) {
        let (_, _, draft, mirrored) = &mut found[group.base];
        if *mirrored && lod_files(draft).is_empty() {
            draft.lod_files = Some(group.levels.iter().map(|&i| paths[i].clone()).collect());
        }
    }
    let groups: Vec<(PathBuf, Vec<PathBuf>)> = found
        .iter()
        .map(|(path, _, draft, _)| (path.clone(), lod_files(draft).to_vec()))
        .collect();
    rigbake::lod_siblings::check_groups(&groups).map_err(UsageError::LodGroups)?;
    let mut levels: Vec<(PathBuf, String)> = Vec::new();
    for (_, id, draft, _) in found.iter() {
        levels.extend(lod_files(draft).iter().map(|l| (l.clone(), id.clone())));
    }
    let mut notes = Vec::new();
    found.retain(|(path, id, _, _)| {
        let Some((_, base)) = levels.iter().find(|(l, _)| same_file(l, path)) else {
            return true;
        };
        notes.push(format!(
            "{id}: a LOD level of {base}, baked with it and not as a model of its own"
        ));
        false
    });
    notes.dedup();
    Ok(notes)
}

/// The LOD level files of a model's options.
fn lod_files(options: &Options) -> &[PathBuf] {
    options.lod_files.as_deref().unwrap_or_default()
}

/// Puts the flags' options over every model's, after checking the
/// `--blend` texts (when there is a model to bake them for).
fn apply_flags(found: &mut Found, flags: &Options) -> Result<(), UsageError> {
    if !found.is_empty() {
        for b in &flags.blend_args {
            parse_blend(b)?;
        }
    }
    for (_, _, d, _) in found.iter_mut() {
        *d = flags.clone().over(std::mem::take(d));
    }
    Ok(())
}

impl BakePlan {
    /// Validates `rigbake bake` arguments; the error is a usage message.
    /// With no model and no `--manifest`, `rigbake.toml` in the current
    /// folder is the manifest (a usage error when there is none).
    pub fn from_bake_args(args: &BakeArgs, verbosity: Verbosity) -> Result<Self, UsageError> {
        let manifest = load_manifest(&args.inputs, args.manifest.as_deref())?;
        // Without --vat and without a manifest (whose models may ask for
        // VAT), a VAT-only flag would be silently ignored.
        if !args.bake.add_vat
            && manifest.is_none()
            && let Some(flag) = vat_only_flag(&args.settings)
        {
            return Err(UsageError::VatFlagWithoutVat(flag));
        }
        check_flags(&args.settings)?;
        check_png_compression(
            &args.settings,
            manifest.is_some(),
            args.bake.max_error.is_some(),
        )?;
        let mut g = gather(&args.inputs, manifest.as_ref(), &args.run, &args.settings)?;
        let flags = Options::from_bake_flags(args.settings.clone(), args.bake.clone());
        apply_flags(&mut g.found, &flags)?;
        let mut plan = Self::assemble(g.found, g.out, &args.run, verbosity)?;
        plan.share_bones = args.share_bones;
        plan.problems = g.problems;
        plan.notes = g.notes;
        Ok(plan)
    }

    /// Validates `rigbake vat` arguments; the error is a usage message.
    /// Like `bake`, with no model and no `--manifest`, `rigbake.toml` in the
    /// current folder is the manifest; every model it lists gets VAT only.
    pub fn from_vat_args(args: &VatArgs, verbosity: Verbosity) -> Result<Self, UsageError> {
        let manifest = load_manifest(&args.inputs, args.manifest.as_deref())?;
        check_flags(&args.settings)?;
        check_png_compression(&args.settings, manifest.is_some(), false)?;
        let mut g = gather(&args.inputs, manifest.as_ref(), &args.run, &args.settings)?;
        apply_flags(&mut g.found, &Options::from(args.settings.clone()))?;
        for (_, _, d, _) in &mut g.found {
            d.vat_only();
            if args.compat == Some(crate::args::Compat::Openvat) {
                d.openvat();
            }
        }
        let mut plan = Self::assemble(g.found, g.out, &args.run, verbosity)?;
        plan.problems = g.problems;
        plan.notes = g.notes;
        Ok(plan)
    }

    fn assemble(
        found: Found,
        out: PathBuf,
        run: &RunArgs,
        verbosity: Verbosity,
    ) -> Result<Self, UsageError> {
        if let Some(jobs) = run.jobs
            && !(1..=MAX_JOBS).contains(&jobs)
        {
            return Err(UsageError::Jobs(jobs));
        }
        let shard = run.shard.as_deref().map(parse_shard).transpose()?;
        let mut by_dir: BTreeMap<PathBuf, (PathBuf, String)> = BTreeMap::new();
        let mut jobs = Vec::with_capacity(found.len());
        for (input, id, draft, mirrored) in found {
            let settings = draft
                .resolve()
                .map_err(|source| UsageError::ModelSettings {
                    id: id.clone(),
                    source,
                })?;
            let out_dir = if mirrored {
                out_dir_for(&out, &id)?
            } else {
                let stem = input
                    .file_stem()
                    .ok_or_else(|| UsageError::NotAFile(input.clone()))?;
                out.join(plain_name(&id, &stem.to_string_lossy())?)
            };
            if let Some((other_input, other)) = by_dir.get(&out_dir) {
                if same_file(other_input, &input) {
                    continue; // the same model given twice
                }
                if *other == id {
                    return Err(UsageError::SameId {
                        first: other_input.clone(),
                        second: input,
                        id,
                    });
                }
                return Err(UsageError::SameOutput {
                    first: other.clone(),
                    second: id,
                    dir: out_dir,
                });
            }
            by_dir.insert(out_dir.clone(), (input.clone(), id.clone()));
            jobs.push(BakeJob {
                input,
                id,
                out_dir,
                settings,
            });
        }
        jobs.sort_by(|a, b| a.id.cmp(&b.id));
        let total = jobs.len();
        if let Some((k, n)) = shard {
            jobs.retain(|j| shard_of(&j.id, n) == k);
        }
        Ok(Self {
            other_shards: total - jobs.len(),
            jobs,
            shard,
            threads: run.jobs,
            progress: progress_mode(verbosity),
            list_files: verbosity == Verbosity::Verbose,
            json: run.json,
            force: run.force,
            out,
            share_bones: false,
            problems: Vec::new(),
            notes: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_and_parse() {
        let ids: Vec<String> = (0..50).map(|i| format!("m{i}.glb")).collect();
        let mut counts = [0usize; 3];
        for id in &ids {
            let s = shard_of(id, 3);
            assert!((1..=3).contains(&s));
            counts[s - 1] += 1;
            assert_eq!(shard_of(id, 3), s, "stable");
        }
        assert!(counts.iter().all(|c| *c > 5), "{counts:?}");
        assert_eq!(parse_shard("2/3").unwrap(), (2, 3));
        assert!(
            parse_shard("0/3").is_err() && parse_shard("4/3").is_err() && parse_shard("x").is_err()
        );
        // N is bounded where it is parsed: a report of such a run would
        // otherwise list billions of missing shards when merged.
        assert_eq!(parse_shard("1/4096").unwrap(), (1, 4096));
        assert!(parse_shard("1/4097").is_err());
        assert!(parse_shard("1/18446744073709551615").is_err());
    }

    #[test]
    fn output_folders_mirror_relative_paths() {
        assert_eq!(
            out_dir_for(Path::new("out"), "chars/knight.glb").unwrap(),
            PathBuf::from("out/chars/knight")
        );
        assert_eq!(
            out_dir_for(Path::new("out"), "fox.gltf").unwrap(),
            PathBuf::from("out/fox")
        );
        for bad in [
            "...glb", "a/...glb", "./x.glb", "a//b.glb", "../x.glb", "..gltf",
        ] {
            assert!(out_dir_for(Path::new("out"), bad).is_err(), "{bad}");
        }
    }
}
