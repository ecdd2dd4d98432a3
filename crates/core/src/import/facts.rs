//! Facts about a glTF document that the imported [`Model`](crate::Model)
//! does not keep: its scenes and the extensions it uses and requires. Read
//! from the JSON alone (no buffer is loaded), for `rigbake inspect MODEL`.

use super::parse;
use crate::error::Result;

/// One scene of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneFacts {
    /// The scene's name (`scene<i>` when it has none).
    pub name: String,
    /// Its root nodes (glTF node indices).
    pub roots: Vec<usize>,
}

/// What the document declares besides the data a bake imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentFacts {
    /// The scenes, in file order.
    pub scenes: Vec<SceneFacts>,
    /// The file's `scene` (the default scene), if set.
    pub default_scene: Option<usize>,
    /// `extensionsUsed`, in file order.
    pub extensions_used: Vec<String>,
    /// `extensionsRequired`, in file order.
    pub extensions_required: Vec<String>,
}

/// Reads the facts of a `.gltf` or `.glb` held in memory. Only the JSON is
/// parsed (its size is bounded by the file's, which the caller bounded).
pub fn document_facts(bytes: &[u8]) -> Result<DocumentFacts> {
    let (root, _, _) = parse::parse(bytes)?;
    Ok(DocumentFacts {
        scenes: root
            .scenes
            .iter()
            .enumerate()
            .map(|(i, s)| SceneFacts {
                name: s.name.clone().unwrap_or_else(|| format!("scene{i}")),
                roots: s.nodes.iter().map(|n| n.value()).collect(),
            })
            .collect(),
        default_scene: root.scene.map(|s| s.value()),
        extensions_used: root.extensions_used.clone(),
        extensions_required: root.extensions_required.clone(),
    })
}
