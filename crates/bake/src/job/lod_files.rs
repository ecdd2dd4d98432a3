//! LOD levels in extra files (`BakeSettings::lod_files`): each file read
//! within the import limits, imported, trimmed by `--exclude`, and its
//! skinned meshes attached to the model as lower levels of its skinned mesh
//! nodes ([`rigbake_core::lod_files`]); what the LOD detail record says of
//! each file.

use std::path::{Path, PathBuf};

use rigbake_core::lod_files;
use rigbake_core::{Error, Model, import};
use rigbake_format::meta;
use sha2::{Digest, Sha256};

use crate::settings::BakeSettings;

/// One level file, attached.
#[derive(Debug, Clone)]
pub(super) struct AttachedFile {
    /// Where it was read.
    pub path: PathBuf,
    /// Per attached node of the model, the level node's name in the file.
    pub nodes: Vec<(usize, String)>,
    /// What the LOD detail record says of it (`node` filled per level).
    pub record: meta::LodFileMeta,
}

impl AttachedFile {
    /// The record entry of the level on model node `node`, when it came
    /// from this file.
    pub fn level(&self, node: usize) -> Option<meta::LodFileMeta> {
        let (_, name) = self.nodes.iter().find(|(n, _)| *n == node)?;
        Some(meta::LodFileMeta {
            node: name.clone(),
            ..self.record.clone()
        })
    }
}

/// The stem a level file's nodes are named after (`hero_LOD1`).
pub(crate) fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Refuses more LOD files than a group has levels besides level 0 (file
/// `k` gives level `k + 1`); checked before any file is read, by the bake
/// key and by the job.
pub(crate) fn check_count(settings: &BakeSettings) -> rigbake_core::Result<()> {
    let most = rigbake_core::lod::MAX_LOD_LEVELS - 1;
    if settings.lod_files.len() > most {
        return Err(Error::invalid(
            "lod_files",
            format!(
                "{} LOD files; a LOD group has at most {most} levels besides level 0",
                settings.lod_files.len()
            ),
        ));
    }
    Ok(())
}

/// Reads, imports and attaches every level file of `settings` to `model`,
/// in order (file `k` gives level `k + 1` of each group it matches), and
/// adds the groups; `out_dir` is where the container goes (for the
/// recorded relative paths). Errors name the level file.
pub(super) fn attach_all(
    model: &mut Model,
    input: &Path,
    settings: &BakeSettings,
    out_dir: &Path,
) -> rigbake_core::Result<Vec<AttachedFile>> {
    check_count(settings)?;
    let mut attached = Vec::with_capacity(settings.lod_files.len());
    let (mut all_pairs, mut all_nodes) = (Vec::new(), Vec::new());
    for path in &settings.lod_files {
        let stem = file_stem(path);
        let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same(path, input) {
            return Err(Error::invalid(
                "",
                "is the model itself; a LOD file holds lower levels of the model",
            )
            .with_file(path));
        }
        if attached
            .iter()
            .any(|a: &AttachedFile| file_stem(&a.path) == stem)
        {
            return Err(Error::invalid(
                "",
                format!("a second LOD file named `{stem}`; level files need distinct names"),
            )
            .with_file(path));
        }
        let bytes = import::read_file(path, &settings.import.limits)?;
        let mut level = import::import_bytes(path, &bytes, &settings.import)?;
        crate::exclude::apply(&mut level, &settings.exclude).map_err(|e| e.with_file(path))?;
        let pairs = lod_files::match_nodes(model, &level, &stem).map_err(|e| e.with_file(path))?;
        let nodes =
            lod_files::attach(model, &level, &stem, &pairs).map_err(|e| e.with_file(path))?;
        attached.push(AttachedFile {
            path: path.clone(),
            nodes: nodes
                .iter()
                .zip(&pairs)
                .map(|(&n, p)| (n, level.nodes[p.level].name.clone()))
                .collect(),
            record: meta::LodFileMeta {
                relative_path: crate::source_path::relative_source(path, out_dir),
                file_name: path
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                sha256: format!("{:x}", Sha256::digest(&bytes)),
                node: String::new(),
            },
        });
        all_pairs.push(pairs);
        all_nodes.push(nodes);
    }
    lod_files::add_groups(model, &all_pairs, &all_nodes);
    rigbake_core::lod::check(model, &model.lods)?;
    Ok(attached)
}
