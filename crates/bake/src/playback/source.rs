//! Finding, checking and importing the model a bake was made from.
//!
//! The source is `--source MODEL` when given, else the file the metadata
//! names (`source.file_name`) beside the container; when neither exists the
//! error says to pass `--source`. Its SHA-256 is compared with the recorded
//! one; the caller decides what a mismatch means.

use std::path::{Path, PathBuf};

use rigbake_core::Model;
use rigbake_core::import::{self, ImportOptions};
use rigbake_format::meta::Metadata;
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

/// The source model's path: `explicit`, or the recorded file name beside
/// `file`; a usage error naming both places when it does not exist.
pub fn find_source(
    file: &Path,
    metadata: &Metadata,
    explicit: Option<&Path>,
) -> Result<PathBuf, LoadError> {
    if let Some(path) = explicit {
        return match std::fs::metadata(path) {
            Ok(m) if m.is_file() => Ok(path.to_path_buf()),
            Ok(_) => Err(LoadError::Usage(format!(
                "--source {}: not a regular file (a folder, FIFO or device)",
                path.display()
            ))),
            Err(e) => Err(LoadError::Usage(format!(
                "--source {}: {e}",
                path.display()
            ))),
        };
    }
    let name = Path::new(&metadata.source.file_name);
    let beside = file.parent().unwrap_or(Path::new(".")).join(name);
    // The recorded name has no folders; refuse one that does.
    let plain = name.components().count() == 1 && !metadata.source.file_name.is_empty();
    if plain && beside.is_file() {
        Ok(beside)
    } else {
        Err(LoadError::Usage(format!(
            "{}: the source model `{}` is not beside the container; pass --source MODEL",
            file.display(),
            metadata.source.file_name
        )))
    }
}

/// Finds, hashes and imports the source of the bake at `file`.
pub(super) fn load_source(
    file: &Path,
    metadata: &Metadata,
    explicit: Option<&Path>,
) -> Result<SourceModel, LoadError> {
    let path = find_source(file, metadata, explicit)?;
    let options = ImportOptions::default();
    let failed = |e: rigbake_core::Error| LoadError::Failed(e.to_string());
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
