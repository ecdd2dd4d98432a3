//! Incremental bakes: the bake key (a digest of everything that decides the
//! outputs) and the check that a model's outputs are up to date with it.

use std::path::{Path, PathBuf};

use rigbake_core::import;
use rigbake_format::container::{Container, FORMAT_MAJOR, FORMAT_MINOR};
use sha2::{Digest, Sha256};

use crate::error::{BakeError, Stage};
use crate::settings::BakeSettings;

/// The bake key of a model: SHA-256 over the tool and format versions, the
/// resolved settings, whether bone textures go to the shared store
/// (`shared`), and every input byte (`bytes`, the model file at `input`, and
/// its external buffers, each read within the import limits), and the
/// source's location relative to the container when one is recorded
/// (`source_location`, [`crate::source_path::relative_source`]), and the
/// bytes of every LOD level file (`settings.lod_files`) with their
/// external buffers. Same key, same outputs.
pub fn bake_key(
    input: &Path,
    bytes: &[u8],
    settings: &BakeSettings,
    shared: bool,
    source_location: Option<&str>,
) -> Result<String, BakeError> {
    let mut h = Sha256::new();
    h.update(format!(
        "rigbake {}\ncontainer {FORMAT_MAJOR}.{FORMAT_MINOR}\n",
        env!("CARGO_PKG_VERSION")
    ));
    h.update(format!("{settings:?}\n"));
    if shared {
        h.update("shared bone textures\n");
    }
    if let Some(location) = source_location {
        h.update(format!("source at {location:?}\n"));
    }
    hash_model(&mut h, input, bytes, settings)?;
    // LOD levels in files of their own: their bytes decide the outputs
    // too (their paths are in the settings).
    for level in &settings.lod_files {
        let data = import::read_file(level, &settings.import.limits)
            .map_err(|e| BakeError::new(Stage::Key, e))?;
        hash_model(&mut h, level, &data, settings)?;
    }
    Ok(format!("{:x}", h.finalize()))
}

/// Feeds a model file's bytes and those of every external file it reads
/// into `h`, each prefixed with its length.
fn hash_model(
    h: &mut Sha256,
    input: &Path,
    bytes: &[u8],
    settings: &BakeSettings,
) -> Result<(), BakeError> {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
    let files = import::external_files(input, bytes, &settings.import)
        .map_err(|e| BakeError::new(Stage::Key, e))?;
    for f in files {
        let data = import::read_file(&f, &settings.import.limits)
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
    let c = Container::open(container).ok()?;
    if c.bake_key() != Some(key) {
        return None;
    }
    let outputs = c.outputs()?;
    let listed = |name: &Option<String>| {
        name.as_deref()
            .is_none_or(|n| outputs.files.iter().any(|f| f.name == n))
    };
    let records_listed = c.vat().is_none_or(|v| listed(&v.playback_file))
        && c.weights().is_none_or(|w| listed(&w.mesh_file))
        && c.rig().is_none_or(|r| listed(&r.anchor_texture));
    if !records_listed {
        return None;
    }
    let files = crate::listed::listed_files(&c);
    if !files
        .iter()
        .all(|f| intact(out_dir, &f.name, f.bytes, f.crc32))
    {
        return None;
    }
    let container_bytes = std::fs::symlink_metadata(container).ok()?.len();
    let mut all = vec![(container.to_path_buf(), container_bytes)];
    all.extend(
        files
            .into_iter()
            .map(|f| (crate::listed::normalised(&out_dir.join(&f.name)), f.bytes)),
    );
    Some(all)
}
