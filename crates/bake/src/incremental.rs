//! Incremental bakes: the bake key (a digest of everything that decides the
//! outputs) and the check that a model's outputs are up to date with it.

use std::path::Path;

use rigbake_core::import;
use rigbake_format::container::{Container, FORMAT_MAJOR, FORMAT_MINOR};
use rigbake_format::meta::Storage;
use sha2::{Digest, Sha256};

use crate::error::{BakeError, Stage, StepError};
use crate::settings::BakeSettings;

/// The bake key of a model: SHA-256 over the tool and format versions, the
/// resolved settings, and every input byte (`bytes`, the model file at
/// `input`, and its external buffers). Same key, same outputs.
pub fn bake_key(input: &Path, bytes: &[u8], settings: &BakeSettings) -> Result<String, BakeError> {
    let mut h = Sha256::new();
    h.update(format!(
        "rigbake {}\ncontainer {FORMAT_MAJOR}.{FORMAT_MINOR}\n",
        env!("CARGO_PKG_VERSION")
    ));
    h.update(format!("{settings:?}\n"));
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
    let files = import::external_files(input, bytes, &settings.import)
        .map_err(|e| BakeError::new(Stage::Key, e))?;
    for f in files {
        let data = std::fs::read(&f).map_err(|e| {
            StepError::io(format!("cannot read `{}`", f.display()), &f, e).at(Stage::Key)
        })?;
        h.update((data.len() as u64).to_le_bytes());
        h.update(&data);
    }
    Ok(format!("{:x}", h.finalize()))
}

/// Whether the container at `container` exists, was made with `key`, and
/// every file it lists beside it (in `out_dir`) is present with the
/// recorded size.
pub fn up_to_date(container: &Path, out_dir: &Path, key: &str) -> bool {
    let Ok(c) = Container::open(container) else {
        return false;
    };
    if c.bake_key() != Some(key) {
        return false;
    }
    let sized = |name: &str, bytes: u64| {
        std::fs::metadata(out_dir.join(name)).is_ok_and(|m| m.len() == bytes)
    };
    let bones = c
        .metadata()
        .textures
        .iter()
        .all(|t| t.storage != Storage::File || sized(&t.name, t.bytes));
    let vat = c.vat().is_none_or(|v| {
        v.textures
            .iter()
            .all(|t| t.storage != Storage::File || sized(&t.name, t.bytes))
            && v.playback_file
                .as_deref()
                .is_none_or(|f| out_dir.join(f).is_file())
    });
    let weights = c.weights().is_none_or(|w| {
        w.mesh_file
            .as_deref()
            .is_none_or(|f| out_dir.join(f).is_file())
    });
    bones && vat && weights
}
