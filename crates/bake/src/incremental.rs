//! Incremental bakes: the bake key (a digest of everything that decides the
//! outputs) and the check that a model's outputs are up to date with it.

use std::path::{Path, PathBuf};

use rigbake_core::import;
use rigbake_format::container::{Container, FORMAT_MAJOR};
use rigbake_format::records::FORMAT_MINOR;
use sha2::{Digest, Sha256};

use crate::error::{BakeError, Stage};
use crate::input::{InputFile, ModelInput};
use crate::settings::BakeSettings;

/// The version of the bake key's composition (`formats/bake-key.md`):
/// bumped whenever [`bake_key`] hashes something else or
/// [`canonical_settings`] writes settings differently, so that a key never
/// stands for two different bakes.
pub const BAKE_KEY_VERSION: u32 = 1;

/// The resolved settings as the bake key hashes them: compact JSON
/// (serde_json), fields in declaration order, enums by their snake_case
/// names, numbers in shortest round-trip form. Independent of `Debug`; the
/// `Serialize` impl names every field of the settings (a setting added by
/// a new option does not compile until it has its place in the key); a
/// test pins the form of the default settings
/// (`formats/golden/bake-key-v1-default-settings.json`).
pub fn canonical_settings(settings: &BakeSettings) -> Result<String, BakeError> {
    serde_json::to_string(settings).map_err(|e| {
        BakeError::new(
            Stage::Key,
            rigbake_core::Error::invalid(
                "",
                format!("cannot write the settings for the bake key: {e}"),
            ),
        )
    })
}

/// The bake key of a model: SHA-256 over the key version, the tool and
/// format versions, the canonical settings ([`canonical_settings`]),
/// whether bone textures go to the shared store (`shared`), every input
/// byte (the model file's bytes and those of its external buffers, each
/// read within the import limits), the source's location relative to the
/// container when one is recorded (`source_location`,
/// [`crate::source_path::relative_source`]), and the bytes of every LOD
/// level file (`settings.lod_files`) with their external buffers. `input`
/// is the model read and parsed with `settings` ([`ModelInput::read`]).
/// Same key, same outputs.
pub fn bake_key(
    input: &ModelInput,
    settings: &BakeSettings,
    shared: bool,
    source_location: Option<&str>,
) -> Result<String, BakeError> {
    let mut h = Sha256::new();
    h.update(format!(
        "rigbake bake key {BAKE_KEY_VERSION}\ntool {}\ncontainer {FORMAT_MAJOR}.{FORMAT_MINOR}\n",
        env!("CARGO_PKG_VERSION")
    ));
    h.update(canonical_settings(settings)?);
    h.update("\n");
    if shared {
        h.update("shared bone textures\n");
    }
    if let Some(location) = source_location {
        h.update(format!("source at {location:?}\n"));
    }
    hash_file(&mut h, input.model(), settings)?;
    // LOD levels in files of their own: their bytes decide the outputs
    // too (their paths are in the settings).
    for level in input.levels() {
        hash_file(&mut h, level, settings)?;
    }
    Ok(format!("{:x}", h.finalize()))
}

/// Feeds a model file's bytes and those of every external file it reads
/// into `h`, each prefixed with its length.
fn hash_file(h: &mut Sha256, file: &InputFile, settings: &BakeSettings) -> Result<(), BakeError> {
    h.update((file.bytes().len() as u64).to_le_bytes());
    h.update(file.bytes());
    for f in file.external() {
        let data = import::read_file(f, &settings.import.limits)
            .map_err(|e| BakeError::new(Stage::Key, e))?;
        h.update((data.len() as u64).to_le_bytes());
        h.update(&data);
    }
    Ok(())
}

/// Whether the file `name` beside the container (in `out_dir`) is a regular
/// file of exactly `bytes` bytes whose CRC-32 is `crc32`.
fn intact(out_dir: &Path, name: &str, bytes: u64, crc32: u32) -> bool {
    rigbake_format::fsread::checksum_regular(&out_dir.join(name), bytes)
        .is_ok_and(|found| found == (bytes, crc32))
}

/// Whether the container at `container` exists, was made with `key`, and
/// every file it covers beside it (in `out_dir`) is present with the
/// recorded size and checksum: bone and VAT textures through their records,
/// meshes and `anchors.exr` through the outputs record. A container without
/// an outputs record (before format 1.5), a file that changed, or a run
/// killed between two renames (new files beside the old container) all mean
/// "rebake".
pub fn up_to_date(container: &Path, out_dir: &Path, key: &str) -> bool {
    up_to_date_outputs(container, out_dir, key).is_some()
}

/// [`up_to_date`], returning what the up-to-date bake consists of: the
/// container, then every file it lists ([`crate::listed::listed_files`]),
/// as paths under `out_dir` (lexically normalised) with their sizes.
/// `None` when the model needs a rebake.
pub fn up_to_date_outputs(
    container: &Path,
    out_dir: &Path,
    key: &str,
) -> Option<Vec<(PathBuf, u64)>> {
    outputs_status(container, out_dir, key, None).ok()
}

/// What the source of a bake is now, to say why its outputs are stale:
/// its bytes and settings.
#[derive(Debug, Clone, Copy)]
pub struct Current<'a> {
    /// The SHA-256 of the model file's bytes, lowercase hex (as the
    /// container's source record holds it).
    pub source_sha256: &'a str,
    /// The model's settings.
    pub settings: &'a BakeSettings,
}

/// [`up_to_date_outputs`], or why the outputs must be baked again: `None`
/// when there is no previous container, else the reason in words (the
/// previous container does not read; rigbake's version, the source model
/// or a recorded setting changed, naming it; another setting or a file the
/// model reads changed; a listed file is missing or changed, naming it).
/// `current`, when given, lets the reason name what changed.
pub fn outputs_status(
    container: &Path,
    out_dir: &Path,
    key: &str,
    current: Option<Current<'_>>,
) -> Result<Vec<(PathBuf, u64)>, Option<String>> {
    if std::fs::symlink_metadata(container).is_err() {
        return Err(None);
    }
    let c = Container::open(container)
        .map_err(|e| Some(format!("the previous container does not read ({e})")))?;
    if c.bake_key() != Some(key) {
        return Err(Some(key_change(c.metadata(), current)));
    }
    let incomplete = || Some("the previous container lists no outputs record".to_owned());
    let outputs = c.records().outputs.as_ref().ok_or_else(incomplete)?;
    let listed = |name: &Option<String>| {
        name.as_deref()
            .is_none_or(|n| outputs.files.iter().any(|f| f.name == n))
    };
    let records_listed = c
        .records()
        .vat
        .as_ref()
        .is_none_or(|v| listed(&v.playback_file))
        && c.records()
            .weights
            .as_ref()
            .is_none_or(|w| listed(&w.mesh_file))
        && c.records()
            .rig
            .as_ref()
            .is_none_or(|r| listed(&r.anchor_texture));
    if !records_listed {
        return Err(incomplete());
    }
    let files = crate::listed::listed_files(&c);
    if let Some(f) = files
        .iter()
        .find(|f| !intact(out_dir, &f.name, f.bytes, f.crc32))
    {
        let path = out_dir.join(&f.name);
        return Err(Some(if std::fs::symlink_metadata(&path).is_err() {
            format!("`{}` of the previous bake is missing", f.name)
        } else {
            format!(
                "`{}` of the previous bake changed (not the recorded size and CRC-32)",
                f.name
            )
        }));
    }
    let container_bytes = std::fs::symlink_metadata(container)
        .map_err(|e| Some(format!("the previous container cannot be read ({e})")))?
        .len();
    let mut all = vec![(container.to_path_buf(), container_bytes)];
    all.extend(
        files
            .into_iter()
            .map(|f| (crate::listed::normalised(&out_dir.join(&f.name)), f.bytes)),
    );
    Ok(all)
}

/// Why a previous bake's key is not this one's, as far as its records
/// tell: rigbake's version, the source model, a recorded option; else
/// another setting or a file the model reads.
fn key_change(previous: &rigbake_format::meta::Metadata, current: Option<Current<'_>>) -> String {
    let version = env!("CARGO_PKG_VERSION");
    if previous.tool.version != version {
        return format!(
            "rigbake's version changed ({} to {version})",
            previous.tool.version
        );
    }
    let Some(now) = current else {
        return "the source or the settings changed".to_owned();
    };
    if previous.source.sha256 != now.source_sha256 {
        return "the source model changed".to_owned();
    }
    let (o, s) = (&previous.options, now.settings);
    let changed = [
        (
            "fps",
            o.fps != s.sampling.fps,
            format!("{} to {}", o.fps, s.sampling.fps),
        ),
        (
            "layout",
            o.layout != s.layout,
            format!("{:?} to {:?}", o.layout, s.layout),
        ),
        (
            "precision",
            o.precision != s.precision,
            format!("{:?} to {:?}", o.precision, s.precision),
        ),
        (
            "max_texture_size",
            o.max_texture_size as usize != s.max_texture_size,
            format!("{} to {}", o.max_texture_size, s.max_texture_size),
        ),
        (
            "sampling rule",
            o.sampling != s.sampling.rule,
            format!("{:?} to {:?}", o.sampling, s.sampling.rule),
        ),
    ];
    match changed.into_iter().find(|(_, differs, _)| *differs) {
        Some((name, _, how)) => format!("the setting {name} changed ({how})"),
        None => {
            "a setting, an output kind, or a file the model reads (buffer, image, LOD file) changed"
                .to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The canonical form of the default settings is pinned: a change to
    /// it (a field added, renamed or moved, an enum spelt differently)
    /// must come with a new [`BAKE_KEY_VERSION`] and a new golden file.
    #[test]
    fn the_canonical_settings_of_the_defaults_are_pinned_to_the_key_version() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "../../formats/golden/bake-key-v{BAKE_KEY_VERSION}-default-settings.json"
        ));
        let text = canonical_settings(&BakeSettings::default()).unwrap();
        if std::env::var_os("RIGBAKE_BLESS").is_some() {
            std::fs::write(&path, format!("{text}\n")).unwrap();
        }
        let pinned = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            pinned.trim_end(),
            text,
            "the canonical settings changed: bump BAKE_KEY_VERSION and write the new golden file (RIGBAKE_BLESS=1)"
        );
    }

    #[test]
    fn settings_that_differ_give_different_keys_and_equal_ones_the_same() {
        let model = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/spec_worked_example.glb");
        let key = |s: &BakeSettings| {
            let input = ModelInput::read(&model, s).unwrap();
            bake_key(&input, s, false, None).unwrap()
        };
        let base = BakeSettings::default();
        let mut fps = base.clone();
        fps.sampling.fps = 30.000001;
        let mut lod = base.clone();
        lod.lod_influences = vec![2];
        let mut exclude = base.clone();
        exclude.exclude = vec!["a,b".into()];
        let mut two = base.clone();
        two.exclude = vec!["a".into(), "b".into()];
        let mut stored = base.clone();
        stored.vat.png_compression = rigbake_format::texture::png::PngCompression::None;
        assert!(
            canonical_settings(&stored)
                .unwrap()
                .contains(r#""compression":"none","png_compression":"none","#),
            "formats/bake-key.md: after `compression`, only when `none`"
        );
        let keys = [
            key(&base),
            key(&fps),
            key(&lod),
            key(&exclude),
            key(&two),
            key(&stored),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(key(&base), key(&base.clone()));
        assert_eq!(keys[0].len(), 64);
    }
}
