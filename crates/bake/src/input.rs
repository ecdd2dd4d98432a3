//! A bake's input, read and parsed once: the model file and the LOD level
//! files its settings name, each with the external files (buffers, images)
//! it reads. The bake key hashes it ([`crate::bake_key`]), the job imports
//! it and protects it from being overwritten; nothing reads or parses the
//! source files again during a bake.

use std::path::{Path, PathBuf};

use rigbake_core::import::Parsed;
use sha2::{Digest, Sha256};

use crate::error::{BakeError, Stage};
use crate::settings::BakeSettings;

/// One glTF or GLB file of a bake, parsed, with the files it reads.
#[derive(Debug)]
pub struct InputFile {
    parsed: Parsed,
    external: Vec<PathBuf>,
    sha256: String,
}

impl InputFile {
    /// Reads and parses the file at `path` and lists what it reads, within
    /// `settings.import`'s limits.
    fn read(path: &Path, settings: &BakeSettings) -> rigbake_core::Result<Self> {
        let parsed = Parsed::read(path, &settings.import.limits)?;
        let external = parsed.external_files(&settings.import)?;
        let sha256 = format!("{:x}", Sha256::digest(parsed.bytes()));
        Ok(Self {
            parsed,
            external,
            sha256,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.parsed.path()
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.parsed.bytes()
    }

    /// The file, parsed.
    pub fn parsed(&self) -> &Parsed {
        &self.parsed
    }

    /// The external files it reads ([`Parsed::external_files`]).
    pub fn external(&self) -> &[PathBuf] {
        &self.external
    }

    /// The SHA-256 of its bytes, lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

/// What one model's bake reads: the model file and its LOD level files
/// (`BakeSettings::lod_files`, in order), each read and parsed once.
#[derive(Debug)]
pub struct ModelInput {
    model: InputFile,
    levels: Vec<InputFile>,
}

impl ModelInput {
    /// Reads and parses the model at `path` and the LOD level files of
    /// `settings` (counted before any is read), listing the files each
    /// reads; the bake of this input must use the same `settings`. Errors
    /// name the file.
    pub fn read(path: &Path, settings: &BakeSettings) -> Result<Self, BakeError> {
        let model =
            InputFile::read(path, settings).map_err(|e| BakeError::new(Stage::Import, e))?;
        check_lod_count(settings).map_err(|e| BakeError::new(Stage::Key, e))?;
        let levels = settings
            .lod_files
            .iter()
            .map(|level| InputFile::read(level, settings))
            .collect::<rigbake_core::Result<_>>()
            .map_err(|e| BakeError::new(Stage::Key, e))?;
        Ok(Self { model, levels })
    }

    /// The model file's path.
    pub fn path(&self) -> &Path {
        self.model.path()
    }

    /// The model file.
    pub fn model(&self) -> &InputFile {
        &self.model
    }

    /// The LOD level files, in the order of `BakeSettings::lod_files`.
    pub fn levels(&self) -> &[InputFile] {
        &self.levels
    }

    /// Every file the bake reads: the model, then each level file, each
    /// followed by the files it reads.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(&self.model)
            .chain(&self.levels)
            .flat_map(|f| std::iter::once(f.path()).chain(f.external.iter().map(PathBuf::as_path)))
    }
}

/// Refuses more LOD files than a group has levels besides level 0 (file
/// `k` gives level `k + 1`); checked before any is read
/// (by [`ModelInput::read`]).
fn check_lod_count(settings: &BakeSettings) -> rigbake_core::Result<()> {
    let most = rigbake_core::lod::MAX_LOD_LEVELS - 1;
    if settings.lod_files.len() > most {
        return Err(rigbake_core::Error::invalid(
            "lod_files",
            format!(
                "{} LOD files; a LOD group has at most {most} levels besides level 0",
                settings.lod_files.len()
            ),
        ));
    }
    Ok(())
}
