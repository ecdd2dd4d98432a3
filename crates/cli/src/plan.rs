//! Validated bake plans: inputs found, settings resolved per model, output
//! folders chosen and shards selected, once, before any work starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::Glob;
use sha2::{Digest, Sha256};

use crate::args::{BakeArgs, RunArgs, VatArgs};
use crate::error::UsageError;
use crate::manifest::Manifest;
use crate::settings::Draft;
pub use rigbake::settings::BakeSettings;

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
    /// Print the report as JSON on stdout.
    pub json: bool,
    /// Rebake up-to-date models.
    pub force: bool,
    /// The output root.
    pub out: PathBuf,
    /// Share identical bone textures across models (in `out/_shared`).
    pub share_bones: bool,
}

fn is_model(p: &Path) -> bool {
    matches!(
        p.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("glb" | "gltf")
    )
}

/// Every .glb/.gltf under `dir` (following no links, skipping hidden
/// folders), as (path, id relative to `dir`), sorted by id.
pub fn find_models(dir: &Path) -> Result<Vec<(PathBuf, String)>, UsageError> {
    let mut out = Vec::new();
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walker {
        let entry = entry.map_err(|source| UsageError::Walk {
            dir: dir.to_path_buf(),
            source,
        })?;
        if entry.file_type().is_file() && is_model(entry.path()) {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            let id = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            out.push((entry.path().to_path_buf(), id));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// The output folder of a model found as `id` (`a/b/c.glb` -> `out/a/b/c`).
fn out_dir_for(out: &Path, id: &str) -> PathBuf {
    let without_ext = id.rsplit_once('.').map_or(id, |(stem, _)| stem);
    out.join(without_ext)
}

/// Parses `K/N` (1 <= K <= N).
fn parse_shard(text: &str) -> Result<(usize, usize), UsageError> {
    let bad = || UsageError::Shard(text.to_owned());
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// The shard (1-based) a model id belongs to among `n`: a hash of the id, so
/// adding a model never moves the others.
pub fn shard_of(id: &str, n: usize) -> usize {
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_le_bytes(first) % n as u64) as usize + 1
}

fn progress_mode(run: &RunArgs) -> ProgressMode {
    use std::io::IsTerminal as _;
    if run.quiet {
        ProgressMode::Quiet
    } else if std::io::stderr().is_terminal() {
        ProgressMode::Bars
    } else {
        ProgressMode::Lines
    }
}

/// Inputs as (path, id, draft settings) before output folders are known.
type Found = Vec<(PathBuf, String, Draft, bool)>;

/// Expands files and folders given on the command line; the bool says
/// whether the model was found in a folder (its output mirrors the path).
fn expand_inputs(inputs: &[PathBuf], base: &Draft) -> Result<Found, UsageError> {
    let mut found = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let models = find_models(input)?;
            if models.is_empty() {
                return Err(UsageError::NoModels(input.clone()));
            }
            for (path, id) in models {
                found.push((path, id, base.clone(), true));
            }
        } else {
            let id = input.to_string_lossy().replace('\\', "/");
            found.push((input.clone(), id, base.clone(), false));
        }
    }
    Ok(found)
}

/// Models a manifest selects, each with defaults and every matching entry
/// applied in file order.
fn expand_manifest(manifest: &Manifest, base: &Draft) -> Result<Found, UsageError> {
    let all = find_models(&manifest.root)?;
    let mut selected: BTreeMap<String, (PathBuf, Draft)> = BTreeMap::new();
    for entry in &manifest.models {
        let glob = Glob::new(&entry.pattern)
            .map_err(|source| UsageError::Pattern {
                manifest: manifest.path.clone(),
                line: entry.line,
                pattern: entry.pattern.clone(),
                source,
            })?
            .compile_matcher();
        let mut matched = false;
        for (path, id) in &all {
            if glob.is_match(id) {
                matched = true;
                let (_, draft) = selected.entry(id.clone()).or_insert_with(|| {
                    let mut d = base.clone();
                    d.apply(&manifest.defaults);
                    (path.clone(), d)
                });
                draft.apply(&entry.overrides);
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
        .map(|(id, (path, d))| (path, id, d, true))
        .collect())
}

impl BakePlan {
    /// Validates `rigbake bake` arguments; the error is a usage message.
    pub fn from_bake_args(args: &BakeArgs) -> Result<Self, UsageError> {
        let manifest = args.manifest.as_deref().map(Manifest::load).transpose()?;
        let finish = |d: &mut Draft| {
            d.apply_flags(&args.settings);
            d.apply_bake_flags(args);
            d.add_blends(&args.settings.blends)
        };
        let mut found = expand_inputs(&args.inputs, &Draft::new())?;
        if let Some(m) = &manifest {
            found.extend(expand_manifest(m, &Draft::new())?);
        }
        for (_, _, d, _) in &mut found {
            finish(d)?;
        }
        let out = args
            .run
            .out
            .clone()
            .or_else(|| manifest.as_ref().and_then(|m| m.out.clone()))
            .ok_or(UsageError::NoOut(true))?;
        let mut plan = Self::assemble(found, out, &args.run)?;
        plan.share_bones = args.share_bones;
        Ok(plan)
    }

    /// Validates `rigbake vat` arguments; the error is a usage message.
    pub fn from_vat_args(args: &VatArgs) -> Result<Self, UsageError> {
        let mut found = expand_inputs(&args.inputs, &Draft::new())?;
        for (_, _, d, _) in &mut found {
            d.apply_flags(&args.settings);
            d.add_blends(&args.settings.blends)?;
            d.vat_only();
        }
        let out = args.run.out.clone().ok_or(UsageError::NoOut(false))?;
        Self::assemble(found, out, &args.run)
    }

    fn assemble(found: Found, out: PathBuf, run: &RunArgs) -> Result<Self, UsageError> {
        if run.jobs == Some(0) {
            return Err(UsageError::Jobs);
        }
        let shard = run.shard.as_deref().map(parse_shard).transpose()?;
        let mut by_dir: BTreeMap<PathBuf, String> = BTreeMap::new();
        let mut jobs = Vec::with_capacity(found.len());
        for (input, id, draft, mirrored) in found {
            let settings = draft
                .resolve()
                .map_err(|source| UsageError::ModelSettings {
                    id: id.clone(),
                    source,
                })?;
            let out_dir = if mirrored {
                out_dir_for(&out, &id)
            } else {
                out.join(
                    input
                        .file_stem()
                        .ok_or_else(|| UsageError::NotAFile(input.clone()))?,
                )
            };
            if let Some(other) = by_dir.insert(out_dir.clone(), id.clone()) {
                if other == id {
                    continue; // the same model given twice
                }
                return Err(UsageError::SameOutput {
                    first: other,
                    second: id,
                    dir: out_dir,
                });
            }
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
            progress: progress_mode(run),
            json: run.json,
            force: run.force,
            out,
            share_bones: false,
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
    }

    #[test]
    fn output_folders_mirror_relative_paths() {
        assert_eq!(
            out_dir_for(Path::new("out"), "chars/knight.glb"),
            PathBuf::from("out/chars/knight")
        );
        assert_eq!(
            out_dir_for(Path::new("out"), "fox.gltf"),
            PathBuf::from("out/fox")
        );
    }
}
