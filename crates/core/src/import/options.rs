//! What the importer is given besides the bytes: options, size limits and
//! where the bytes came from. A leaf: the import steps all read these.

use std::path::Path;

/// Size limits enforced while importing, checked before allocating.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Limits {
    /// Largest model or external buffer file, in bytes.
    pub max_file_bytes: u64,
    /// Largest number of components (elements times components per element)
    /// one accessor may declare.
    pub max_accessor_components: usize,
    /// Largest number of components the whole model may hold: every
    /// accessor decoded (each time it is used) plus one morph weight per
    /// morph target per mesh instance.
    pub max_total_components: usize,
    /// Memory budget of one import, in bytes: every accessor decode (dense
    /// or sparse, with or without a bufferView, each use of a shared
    /// accessor, at 4 bytes per decoded component) and every table built
    /// from decoded data is charged against it before it is allocated.
    pub max_decoded_bytes: u64,
    /// Largest number of nodes.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 2 << 30,
            max_accessor_components: 1 << 26,
            max_total_components: 1 << 27,
            max_decoded_bytes: 512 << 20,
            max_nodes: 1 << 20,
        }
    }
}

/// Options for [`super::import_file`] and [`super::import_slice`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ImportOptions {
    /// Allow external buffers outside the model's folder (off by default).
    pub allow_outside_folder: bool,
    /// Size limits.
    pub limits: Limits,
    /// The scene to import; `None` imports the file's default scene
    /// (`scene`, else scene 0, else every node when the file has no
    /// scenes). Nodes outside the scene are not imported; see the scenes
    /// section of `docs/limits.md`.
    pub scene: Option<usize>,
    /// Also load the look (materials, textures, samplers, images) into
    /// [`crate::model::Model::looks`], for outputs that keep it (off by
    /// default: evaluation never needs it). Image files then count as
    /// inputs in [`super::Parsed::external_files`].
    pub images: bool,
}

/// Where the bytes of a model came from, for resolving relative buffer URIs.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// Display name of the model (usually the file stem).
    pub name: &'a str,
    /// Folder that relative URIs resolve against; `None` refuses them.
    pub dir: Option<&'a Path>,
}
