//! LOD levels in extra files (`BakeSettings::lod_files`): each file (read
//! and parsed once with the model, [`crate::input::ModelInput`]) imported,
//! trimmed by `--exclude`, and its skinned meshes attached to the model as
//! lower levels of its skinned mesh nodes ([`rigbake_core::lod_files`]);
//! what the LOD detail record says of each file.

use std::path::{Path, PathBuf};

use rigbake_core::lod_files;
use rigbake_core::{Error, Model};
use rigbake_format::meta;

use crate::input::ModelInput;
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

/// Imports and attaches every level file of `input` to `model`, in order
/// (file `k` gives level `k + 1` of each group it matches), and adds the
/// groups; `out_dir` is where the container goes (for the recorded
/// relative paths). Errors name the level file; `input` read with other
/// level files than `settings` names is refused.
pub(super) fn attach_all(
    model: &mut Model,
    input: &ModelInput,
    settings: &BakeSettings,
    out_dir: &Path,
) -> rigbake_core::Result<Vec<AttachedFile>> {
    let paths = input.levels().iter().map(|f| f.path());
    if !paths.eq(settings.lod_files.iter().map(PathBuf::as_path)) {
        return Err(Error::invalid(
            "lod_files",
            "the model was read with other LOD files than the settings name; read it with the bake's settings",
        ));
    }
    let mut attached = Vec::with_capacity(input.levels().len());
    let (mut all_pairs, mut all_nodes) = (Vec::new(), Vec::new());
    for file in input.levels() {
        let path = file.path();
        let stem = file_stem(path);
        let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same(path, input.path()) {
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
        let mut level = file.parsed().import(&settings.import)?;
        crate::exclude::apply(&mut level, &settings.exclude).map_err(|e| e.with_file(path))?;
        let pairs = lod_files::match_nodes(model, &level, &stem).map_err(|e| e.with_file(path))?;
        let nodes =
            lod_files::attach(model, &level, &stem, &pairs).map_err(|e| e.with_file(path))?;
        attached.push(AttachedFile {
            path: path.to_path_buf(),
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
                sha256: file.sha256().to_owned(),
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
