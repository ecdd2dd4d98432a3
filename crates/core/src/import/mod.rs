//! glTF 2.0 (`.gltf` with external or embedded buffers, `.glb`) into a
//! validated [`Model`]. The only module that knows glTF.
//!
//! Steps: split GLB chunks and parse the JSON (no images decoded) -> refuse
//! extensions we cannot decode -> schema validation (gltf crate) -> check
//! counts against [`Limits`] -> load buffers -> build nodes, skins, meshes and
//! clips, validating what the gltf crate does not. Every error names the glTF
//! object; [`import_file`] adds the file. No input makes the importer panic,
//! and every allocation sized by the input is checked against the real data
//! or a limit first (see `docs/limits.md`).

mod accessor;
mod animations;
mod buffers;
mod files;
mod looks;
mod meshes;
mod options;
mod parse;
mod scene;
mod select;
mod version;

use std::path::Path;

pub use looks::sniff as sniff_image;
pub use meshes::MAX_INFLUENCE_SETS;
pub use options::{ImportOptions, Limits, Source};

use crate::error::{Error, ErrorKind, Result};
use crate::model::Model;

/// Extensions whose data rigbake cannot decode: files that require them are
/// refused with [`ErrorKind::Unsupported`].
pub const UNDECODABLE_EXTENSIONS: &[&str] = &[
    "KHR_draco_mesh_compression",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
];

/// Required extensions rigbake accepts: `KHR_mesh_quantization` (decoded), and
/// extensions that only concern materials, textures, lights or cameras, which
/// no bake reads.
pub const ACCEPTED_REQUIRED_EXTENSIONS: &[&str] = &["KHR_mesh_quantization"];

fn accepted_required(ext: &str) -> bool {
    ACCEPTED_REQUIRED_EXTENSIONS.contains(&ext)
        || ext.starts_with("KHR_materials_")
        || ext.starts_with("KHR_texture_")
        || matches!(
            ext,
            "KHR_lights_punctual" | "EXT_texture_webp" | "EXT_texture_avif"
        )
}

/// Reads and imports a glTF or GLB file.
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<Model> {
    let bytes = read_file(path, &options.limits)?;
    import_bytes(path, &bytes, options)
}

/// Reads a model (or external buffer) file's bytes. Only regular files are
/// read: folders, FIFOs, sockets and devices are refused before a byte is
/// read (a FIFO is opened without blocking, so it cannot hang). Files over
/// `limits.max_file_bytes` are refused before reading, and never more than
/// the limit is read (a file that grows meanwhile is refused too). Errors
/// name the file.
///
/// This is the reader for every file a model reads: the model itself and
/// each path [`external_files`] returns.
pub fn read_file(path: &Path, limits: &Limits) -> Result<Vec<u8>> {
    let limit = limits.max_file_bytes;
    files::read_bounded(path, limit).map_err(|e| {
        match e {
            files::ReadError::Io(e) => {
                Error::new(ErrorKind::Io, "", format!("cannot read the file: {e}"))
            }
            files::ReadError::Folder => {
                Error::new(ErrorKind::Io, "", "is a folder, not a model file")
            }
            files::ReadError::NotRegular => Error::new(
                ErrorKind::Io,
                "",
                "is not a regular file (a pipe, socket or device); refused",
            ),
            files::ReadError::TooBig(Some(n)) => Error::limit(
                "",
                format!("file is {n} bytes, more than the limit of {limit}"),
            ),
            files::ReadError::TooBig(None) => {
                Error::limit("", format!("file is more than the limit of {limit} bytes"))
            }
        }
        .with_file(path)
    })
}

/// Imports the bytes of the file at `path` (already read); relative buffer
/// URIs resolve against the file's folder and errors name the file.
pub fn import_bytes(path: &Path, bytes: &[u8], options: &ImportOptions) -> Result<Model> {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned());
    let source = Source {
        name: &name,
        dir: Some(path.parent().unwrap_or(Path::new("."))),
    };
    import_slice(bytes, &source, options).map_err(|e| e.with_file(path))
}

/// The external buffer files the model at `path` (whose bytes are given)
/// reads, checked as importing would check them (no URLs, nothing outside
/// the model's folder, only regular files, none over
/// `options.limits.max_file_bytes`). Used to key incremental bakes on every
/// input byte: read each with [`read_file`], which stays within the limit
/// even if the file changes in between. With `options.images`, the image
/// files beside the model that pass the same checks follow the buffers
/// (those that do not are left out of the look with a warning, so they are
/// not inputs).
pub fn external_files(
    path: &Path,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Vec<std::path::PathBuf>> {
    let (root, json, _) = parse::parse(bytes).map_err(|e| e.with_file(path))?;
    let doc = gltf::Document::from_json_without_validation(root);
    let source = Source {
        name: "",
        dir: Some(path.parent().unwrap_or(Path::new("."))),
    };
    let mut files =
        buffers::external_files(&doc, &source, options).map_err(|e| e.with_file(path))?;
    if options.images {
        files.extend(looks::image_files(json, &source, options));
    }
    Ok(files)
}

/// Imports a glTF or GLB held in memory.
pub fn import_slice(bytes: &[u8], source: &Source<'_>, options: &ImportOptions) -> Result<Model> {
    let (root, json, blob) = parse::parse(bytes)?;
    version::check(&root.asset)?;
    select::check_index(&root, options.scene)?;
    check_extensions(&root)?;
    parse::validate(&root, json)?;
    if root.nodes.len() > options.limits.max_nodes {
        return Err(Error::limit(
            "nodes",
            format!(
                "{} nodes, more than the limit of {}",
                root.nodes.len(),
                options.limits.max_nodes
            ),
        ));
    }
    let doc = gltf::Document::from_json_without_validation(root);
    let buffers = buffers::load(&doc, blob, source, options)?;
    let looks = if options.images {
        looks::load(json, &doc, &buffers, source, options)?
    } else {
        crate::model::Looks::default()
    };
    let reader = accessor::AccessorReader::new(&buffers, &options.limits);
    let quantized = doc.extensions_used().any(|e| e == "KHR_mesh_quantization");

    let meshes = meshes::build(&doc, &reader, quantized)?;
    let (nodes, topological_order) = scene::build_nodes(&doc, &meshes, &reader)?;
    let skins = scene::build_skins(&doc, &reader)?;
    scene::check_skinned_instances(&nodes, &skins, &meshes)?;
    let clips = animations::build(&doc, &reader, &nodes, &meshes, quantized)?;
    let model = Model {
        name: source.name.to_owned(),
        nodes,
        skins,
        meshes,
        clips,
        materials: doc
            .materials()
            .enumerate()
            .map(|(i, m)| {
                m.name()
                    .map_or_else(|| format!("material{i}"), str::to_owned)
            })
            .collect(),
        looks,
        topological_order,
    };
    select::scene(model, &doc, options.scene)
}

fn check_extensions(root: &gltf::json::Root) -> Result<()> {
    for (i, ext) in root.extensions_required.iter().enumerate() {
        let ext = ext.as_str();
        if UNDECODABLE_EXTENSIONS.contains(&ext) {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("extensionsRequired[{i}]"),
                format!("unsupported extension {ext}: rigbake cannot decode its data"),
            )
            .with_hint("re-export the model without mesh compression"));
        }
        if !accepted_required(ext) {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("extensionsRequired[{i}]"),
                format!(
                    "unsupported extension {ext}: the file requires it and rigbake does not implement it"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_extensions_are_accepted_and_compression_is_not() {
        assert!(accepted_required("KHR_materials_unlit"));
        assert!(accepted_required("KHR_texture_transform"));
        assert!(accepted_required("KHR_mesh_quantization"));
        assert!(!accepted_required("KHR_draco_mesh_compression"));
        assert!(!accepted_required("KHR_animation_pointer"));
    }
}
