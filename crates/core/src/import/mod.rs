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
mod compression;
mod draco;
mod facts;
mod files;
mod lods;
mod looks;
mod meshes;
mod meshopt;
mod options;
mod parse;
mod scene;
mod select;
mod version;

use std::ops::Range;
use std::path::{Path, PathBuf};

pub use facts::{DocumentFacts, SceneFacts, document_facts};
pub use looks::sniff as sniff_image;
pub use meshes::MAX_INFLUENCE_SETS;
pub use options::{ImportOptions, Limits, Source};
pub use parse::documents_parsed;

use crate::error::{Error, ErrorKind, Result};
use crate::model::Model;

/// Mesh compression extensions rigbake decodes (see `docs/limits.md`,
/// "Compressed models"): Draco primitives and meshopt buffer views.
pub const COMPRESSION_EXTENSIONS: &[&str] = &[
    "KHR_draco_mesh_compression",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
];

/// Required extensions rigbake accepts: `KHR_mesh_quantization` and the
/// compression extensions (decoded), and extensions that only concern
/// materials, textures, lights or cameras, which no bake reads.
pub const ACCEPTED_REQUIRED_EXTENSIONS: &[&str] = &[
    "KHR_mesh_quantization",
    "KHR_draco_mesh_compression",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
];

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
/// each path [`Parsed::external_files`] returns.
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
    let name = model_name(path);
    let source = Source {
        name: &name,
        dir: Some(path.parent().unwrap_or(Path::new("."))),
    };
    import_slice(bytes, &source, options).map_err(|e| e.with_file(path))
}

/// A model file read and parsed once: its bytes, the GLB split into its
/// chunks and the JSON deserialised into glTF's types (nothing validated
/// yet). Both what a file reads beside it ([`Parsed::external_files`]) and
/// its import ([`Parsed::import`]) start from it, so a caller that needs
/// both (a bake: its key hashes every input byte, then it imports) parses
/// the file once ([`documents_parsed`] counts the parses).
pub struct Parsed {
    path: PathBuf,
    bytes: Vec<u8>,
    document: gltf::Document,
    /// Where the JSON text lies in `bytes`.
    json: Range<usize>,
    /// Where the GLB binary chunk lies in `bytes`.
    blob: Option<Range<usize>>,
}

impl std::fmt::Debug for Parsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parsed")
            .field("path", &self.path)
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl Parsed {
    /// Reads the model at `path` within `limits` ([`read_file`]) and
    /// parses it.
    pub fn read(path: &Path, limits: &Limits) -> Result<Self> {
        Self::new(path, read_file(path, limits)?)
    }

    /// Parses `bytes`, the contents of the model file at `path` (relative
    /// buffer URIs resolve against its folder); errors name the file.
    pub fn new(path: &Path, bytes: Vec<u8>) -> Result<Self> {
        let (root, json, blob) = parse::parse(&bytes).map_err(|e| e.with_file(path))?;
        let (json, blob) = (within(&bytes, json), blob.map(|b| within(&bytes, b)));
        Ok(Self {
            path: path.to_path_buf(),
            document: gltf::Document::from_json_without_validation(root),
            bytes,
            json,
            blob,
        })
    }

    /// The model file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The external files the model reads, checked as importing would
    /// check them (no URLs, nothing outside the model's folder, only
    /// regular files, none over `options.limits.max_file_bytes`): its
    /// buffers, and with `options.images` the image files beside it that
    /// pass the same checks (those that do not are left out of the look
    /// with a warning, so they are not inputs). Used to key incremental
    /// bakes on every input byte: read each with [`read_file`], which stays
    /// within the limit even if the file changes in between.
    pub fn external_files(&self, options: &ImportOptions) -> Result<Vec<PathBuf>> {
        let json = &self.bytes[self.json.clone()];
        let fallback = compression::read(json)
            .map_err(|e| e.with_file(&self.path))?
            .fallback_buffers;
        let source = Source {
            name: "",
            dir: Some(self.path.parent().unwrap_or(Path::new("."))),
        };
        let mut files = buffers::external_files(&self.document, &source, options, &fallback)
            .map_err(|e| e.with_file(&self.path))?;
        if options.images {
            files.extend(looks::image_files(json, &source, options));
        }
        Ok(files)
    }

    /// Imports the model (see [`import_bytes`], which parses and imports
    /// in one call).
    pub fn import(&self, options: &ImportOptions) -> Result<Model> {
        let name = model_name(&self.path);
        let source = Source {
            name: &name,
            dir: Some(self.path.parent().unwrap_or(Path::new("."))),
        };
        let blob = self.blob.clone().map(|b| &self.bytes[b]);
        import_document(
            &self.document,
            &self.bytes[self.json.clone()],
            blob,
            &source,
            options,
        )
        .map_err(|e| e.with_file(&self.path))
    }
}

/// Where `part`, a slice of `whole`, lies in it.
fn within(whole: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

/// The name a model is imported under: its file name without extension.
fn model_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned())
}

/// Imports a glTF or GLB held in memory.
pub fn import_slice(bytes: &[u8], source: &Source<'_>, options: &ImportOptions) -> Result<Model> {
    let (root, json, blob) = parse::parse(bytes)?;
    let document = gltf::Document::from_json_without_validation(root);
    import_document(&document, json, blob, source, options)
}

/// Imports a parsed document (`json` its text, `blob` the GLB binary
/// chunk): validation, limits, buffers, then the model.
fn import_document(
    doc: &gltf::Document,
    json: &[u8],
    blob: Option<&[u8]>,
    source: &Source<'_>,
    options: &ImportOptions,
) -> Result<Model> {
    let root = doc.as_json();
    version::check(&root.asset)?;
    select::check_index(root, options.scene)?;
    check_extensions(root)?;
    let compressed = compression::read(json)?;
    parse::validate(root, json, &draco_accessors(root, &compressed))?;
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
    let buffers = buffers::load(doc, blob, source, options, &compressed.fallback_buffers)?;
    let looks = if options.images {
        looks::load(json, doc, &buffers, source, options)?
    } else {
        crate::model::Looks::default()
    };
    let (decoded_views, decoded_bytes) =
        decode_meshopt(doc, &compressed, &buffers, &options.limits)?;
    let reader = accessor::AccessorReader::new(&buffers, &decoded_views, &options.limits);
    reader.charge_bytes(decoded_bytes, "bufferViews")?;
    let quantized = doc.extensions_used().any(|e| e == "KHR_mesh_quantization");

    let meshes = meshes::build(doc, &reader, quantized, &compressed.draco)?;
    let (mut nodes, mut topological_order) = scene::build_nodes(doc, &meshes, &reader)?;
    let skins = scene::build_skins(doc, &reader)?;
    scene::check_skinned_instances(&nodes, &skins, &meshes)?;
    let msft_lods = lods::read(json, nodes.len())?;
    let msft_lods = lods::place(&mut nodes, &mut topological_order, msft_lods)?;
    let clips = animations::build(doc, &reader, &nodes, &meshes, quantized)?;
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
        lods: msft_lods,
    };
    let mut model = select::scene(model, doc, options.scene)?;
    let mut taken = vec![false; model.nodes.len()];
    for &n in model.lods.iter().flat_map(|g| &g.levels) {
        taken[n] = true;
    }
    let by_name = crate::lod::by_name_suffix(&model, &taken)?;
    model.lods.extend(by_name);
    crate::lod::check(&model, &model.lods)?;
    Ok(model)
}

/// The accessors that Draco streams fill (attributes and indices of
/// compressed primitives): they have no `bufferView` of their own.
fn draco_accessors(root: &gltf::json::Root, compressed: &compression::Compression) -> Vec<usize> {
    let mut out = Vec::new();
    for &(m, p) in compressed.draco.keys() {
        if let Some(prim) = root.meshes.get(m).and_then(|mesh| mesh.primitives.get(p)) {
            out.extend(prim.attributes.values().map(|a| a.value()));
            out.extend(prim.indices.map(|i| i.value()));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Decodes the meshopt-compressed buffer views that something reads (an
/// accessor, a sparse accessor's indices or values, an image), in view
/// order, each once, checked against its parent view (the extension's
/// rules: `byteStride` equal to the parent's when it has one, the parent's
/// `byteLength` equal to `count * byteStride`) and against what is left of
/// the memory budget before it is allocated. A view nothing reads is never
/// decoded. Returns the decoded views and their total size.
fn decode_meshopt(
    doc: &gltf::Document,
    compressed: &compression::Compression,
    buffers: &[std::borrow::Cow<'_, [u8]>],
    limits: &Limits,
) -> Result<(std::collections::BTreeMap<usize, Vec<u8>>, u64)> {
    let mut views = std::collections::BTreeMap::new();
    if compressed.meshopt.is_empty() {
        return Ok((views, 0));
    }
    let mut read = vec![false; doc.views().len()];
    for a in doc.accessors() {
        if let Some(v) = a.view() {
            read[v.index()] = true;
        }
        if let Some(s) = a.sparse() {
            read[s.indices().view().index()] = true;
            read[s.values().view().index()] = true;
        }
    }
    for image in doc.images() {
        if let gltf::image::Source::View { view, .. } = image.source() {
            read[view.index()] = true;
        }
    }
    let parents: Vec<gltf::buffer::View<'_>> = doc.views().collect();
    let mut used = 0u64;
    for (v, ext, view) in &compressed.meshopt {
        if !read.get(*v).copied().unwrap_or(false) {
            continue;
        }
        let path = format!("bufferViews[{v}].extensions.{ext}");
        let parent = parents.get(*v).map(|p| meshopt::Parent {
            stride: p.stride(),
            length: p.length(),
        });
        let source = buffers
            .get(view.buffer)
            .filter(|_| !compressed.fallback_buffers.contains(&view.buffer))
            .ok_or_else(|| {
                Error::invalid(
                    format!("{path}.buffer"),
                    format!(
                        "buffers[{}] does not exist or is a fallback buffer without data",
                        view.buffer
                    ),
                )
            })?;
        let budget = limits.max_decoded_bytes.saturating_sub(used);
        let bytes = meshopt::decode_view(view, parent, ext, source, budget, &path)?;
        used += bytes.len() as u64;
        views.insert(*v, bytes);
    }
    Ok((views, used))
}

/// What to run to remove a required extension rigbake does not implement.
fn removal_hint(ext: &str) -> String {
    format!(
        "rigbake does not implement {ext}; write the model without it: re-export it with {ext} turned off, or rewrite it with `npx @gltf-transform/cli copy IN.glb OUT.glb` (gltf-transform drops the extensions it does not implement)"
    )
}

fn check_extensions(root: &gltf::json::Root) -> Result<()> {
    for (i, ext) in root.extensions_required.iter().enumerate() {
        let ext = ext.as_str();
        if !accepted_required(ext) {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("extensionsRequired[{i}]"),
                format!(
                    "unsupported extension {ext}: the file requires it and rigbake does not implement it"
                ),
            )
            .with_hint(removal_hint(ext)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_and_compression_extensions_are_accepted() {
        assert!(accepted_required("KHR_materials_unlit"));
        assert!(accepted_required("KHR_texture_transform"));
        assert!(accepted_required("KHR_mesh_quantization"));
        assert!(accepted_required("KHR_draco_mesh_compression"));
        assert!(accepted_required("EXT_meshopt_compression"));
        assert!(!accepted_required("KHR_animation_pointer"));
    }

    #[test]
    fn unsupported_required_extensions_are_named_with_the_way_out() {
        let root: gltf::json::Root = serde_json::from_str(
            r#"{"asset":{"version":"2.0"},"extensionsUsed":["EXT_x"],"extensionsRequired":["KHR_draco_mesh_compression","EXT_x"]}"#,
        )
        .unwrap();
        let e = check_extensions(&root).unwrap_err();
        assert_eq!(e.object, "extensionsRequired[1]");
        assert!(e.message.contains("unsupported extension EXT_x"), "{e}");
        let hint = e.hint.unwrap();
        assert!(
            hint.contains("EXT_x") && hint.contains("gltf-transform"),
            "{hint}"
        );
    }
}
