//! Finding, checking and importing the model a bake was made from.
//!
//! The source is `--source MODEL` when given, else the file at the path the
//! bake recorded relative to the container (when its SHA-256 still
//! matches), else the file the metadata names (`source.file_name`) beside
//! the container; when none applies the error says to pass `--source`. Its SHA-256 is compared with the recorded
//! one; the caller decides what a mismatch means.

use std::path::{Path, PathBuf};

use rigbake_core::Model;
use rigbake_core::import::{self, ImportOptions};
use rigbake_format::meta::{self, Metadata, SourceLocation};
use sha2::{Digest, Sha256};

use super::LoadError;

/// The imported source model.
#[derive(Debug)]
pub struct SourceModel {
    /// Where it was read from.
    pub path: PathBuf,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Whether that equals the hash recorded in the bake.
    pub sha256_matches: bool,
    /// The model.
    pub model: Model,
}

/// The source model's path when given explicitly (`--source`), checked to
/// be a regular file; a usage error otherwise.
fn explicit_source(path: &Path) -> Result<PathBuf, LoadError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(path.to_path_buf()),
        Ok(_) => Err(LoadError::NotFound(format!(
            "--source {}: not a regular file (a folder, FIFO or device)",
            path.display()
        ))),
        Err(e) => Err(LoadError::NotFound(format!(
            "--source {}: {e}",
            path.display()
        ))),
    }
}

/// The source model's path: `explicit`, else the location the bake
/// recorded relative to the container (`location`, format 1.6) when the
/// file there still has the recorded SHA-256, else the recorded file name
/// beside `file`. A usage error saying what was tried and asking for
/// `--source` when none applies.
pub fn find_source(
    file: &Path,
    metadata: &Metadata,
    location: Option<&SourceLocation>,
    explicit: Option<&Path>,
) -> Result<PathBuf, LoadError> {
    if let Some(path) = explicit {
        return explicit_source(path);
    }
    let options = ImportOptions::default();
    let matches = |path: &Path| {
        import::read_file(path, &options.limits)
            .is_ok_and(|bytes| format!("{:x}", Sha256::digest(&bytes)) == metadata.source.sha256)
    };
    let mut tried = String::new();
    if let Some(location) = location {
        let recorded = &location.relative_path;
        match crate::source_path::follow(file, recorded) {
            Some(path) if path.is_file() && matches(&path) => return Ok(path),
            Some(path) if path.is_file() => {
                tried = format!(
                    "the source recorded at `{recorded}` (from the container: {}) has changed since the bake (its SHA-256 differs)",
                    path.display()
                );
            }
            _ => {
                tried = format!(
                    "the source recorded at `{recorded}` (relative to the container) is missing"
                )
            }
        }
    }
    let name = Path::new(&metadata.source.file_name);
    let beside = file.parent().unwrap_or(Path::new(".")).join(name);
    // The recorded name has no folders; refuse one that does. With a
    // recorded location, a file beside the container is used only when it
    // is the very file baked.
    let plain = name.components().count() == 1 && !metadata.source.file_name.is_empty();
    if plain && beside.is_file() && (location.is_none() || matches(&beside)) {
        return Ok(beside);
    }
    if tried.is_empty() {
        tried = format!(
            "the source model `{}` is not beside the container",
            metadata.source.file_name
        );
    }
    Err(LoadError::NotFound(format!(
        "{}: {tried}; pass --source MODEL",
        file.display()
    )))
}

/// Finds, hashes and imports the source of the bake at `file`.
pub(super) fn load_source(
    file: &Path,
    metadata: &Metadata,
    location: Option<&SourceLocation>,
    explicit: Option<&Path>,
) -> Result<SourceModel, LoadError> {
    let path = find_source(file, metadata, location, explicit)?;
    let options = ImportOptions::default();
    let failed = |e: rigbake_core::Error| LoadError::Damaged(e.to_string());
    let bytes = import::read_file(&path, &options.limits).map_err(failed)?;
    let sha256 = format!("{:x}", Sha256::digest(&bytes));
    let model = import::import_bytes(&path, &bytes, &options).map_err(failed)?;
    Ok(SourceModel {
        sha256_matches: sha256 == metadata.source.sha256,
        sha256,
        path,
        model,
    })
}

/// One recorded LOD file and the levels it gives: `(model node, level
/// node)` names, in record order.
struct RecordedFile<'a> {
    file: &'a meta::LodFileMeta,
    names: Vec<(String, String)>,
}

/// The LOD files the bake recorded (the LOD detail record), each once, in
/// the order their first level appears.
fn recorded_files<'a>(
    lods: &'a meta::LodsMetadata,
    details: &'a meta::LodDetailsMetadata,
) -> Vec<RecordedFile<'a>> {
    let mut out: Vec<RecordedFile<'a>> = Vec::new();
    for (group, levels) in lods.groups.iter().zip(&details.groups) {
        let Some(base) = group.levels.first() else {
            continue;
        };
        for file in levels.iter().filter_map(|l| l.file.as_ref()) {
            let pair = (base.node.clone(), file.node.clone());
            match out
                .iter_mut()
                .find(|r| r.file.file_name == file.file_name && r.file.sha256 == file.sha256)
            {
                Some(r) => r.names.push(pair),
                None => out.push(RecordedFile {
                    file,
                    names: vec![pair],
                }),
            }
        }
    }
    out
}

/// Where the recorded LOD file `f` is now: at its recorded path relative
/// to the container, else beside the source model, else beside the
/// container, whichever has the recorded SHA-256. A usage error naming
/// the file and what was tried when none has.
fn find_lod_file(
    container: &Path,
    source: &Path,
    f: &meta::LodFileMeta,
) -> Result<(PathBuf, Vec<u8>), LoadError> {
    let options = ImportOptions::default();
    let plain = Path::new(&f.file_name).components().count() == 1;
    let candidates = f
        .relative_path
        .as_deref()
        .and_then(|r| crate::source_path::follow(container, r))
        .into_iter()
        .chain(plain.then(|| source.parent().unwrap_or(Path::new(".")).join(&f.file_name)))
        .chain(plain.then(|| {
            container
                .parent()
                .unwrap_or(Path::new("."))
                .join(&f.file_name)
        }));
    let mut changed = None;
    for path in candidates {
        let Ok(bytes) = import::read_file(&path, &options.limits) else {
            continue;
        };
        if format!("{:x}", Sha256::digest(&bytes)) == f.sha256 {
            return Ok((path, bytes));
        }
        changed = Some(path);
    }
    let why = match changed {
        Some(p) => format!(
            "{} has changed since the bake (its SHA-256 differs)",
            p.display()
        ),
        None => format!(
            "it is not at its recorded path ({}) nor beside the source or the container",
            f.relative_path.as_deref().unwrap_or("none recorded")
        ),
    };
    Err(LoadError::NotFound(format!(
        "{}: the LOD file `{}` the bake was made with cannot be used: {why}; put the file the bake read back",
        container.display(),
        f.file_name
    )))
}

/// Attaches the LOD files the bake recorded to the imported source, as
/// the bake did ([`rigbake_core::lod_files::attach_named`]), so that every
/// level's node and mesh exist for playback.
pub(super) fn attach_lod_files(
    container: &Path,
    source: &mut SourceModel,
    lods: Option<&meta::LodsMetadata>,
    details: Option<&meta::LodDetailsMetadata>,
) -> Result<(), LoadError> {
    let (Some(lods), Some(details)) = (lods, details) else {
        return Ok(());
    };
    let options = ImportOptions::default();
    let files = recorded_files(lods, details);
    // Counted before any file is read, as the bake counted them.
    let most = rigbake_core::lod::MAX_LOD_LEVELS - 1;
    if files.len() > most {
        return Err(LoadError::Damaged(format!(
            "{}: the LOD detail record names {} LOD files; a bake reads at most {most}",
            container.display(),
            files.len()
        )));
    }
    for r in files {
        let (path, bytes) = find_lod_file(container, &source.path, r.file)?;
        let failed = |e: rigbake_core::Error| LoadError::Damaged(e.with_file(&path).to_string());
        let level = import::import_bytes(&path, &bytes, &options).map_err(failed)?;
        let stem = Path::new(&r.file.file_name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        rigbake_core::lod_files::attach_named(&mut source.model, &level, &stem, &r.names)
            .map_err(failed)?;
    }
    Ok(())
}
