//! The validated, owned model: plain data built once by `import` and read by
//! every later stage.
//!
//! Invariants established by the importer (later stages rely on them and do
//! not re-check): every index is in range; the node hierarchy is a forest and
//! [`Model::topological_order`] lists parents before children; every float is
//! finite; animation key times are finite, non-negative and strictly
//! increasing; rotation keys are unit quaternions; every skinned vertex has a
//! positive weight sum and its weighted joints exist in every skin it is used
//! with. This module never reads files.

use std::collections::HashMap;

use glam::{DMat4, DQuat, DVec3, Vec2, Vec3, Vec4};

/// A skinned or animated model, validated and owned.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Display name (the source file stem).
    pub name: String,
    /// All nodes of the glTF, in glTF order.
    pub nodes: Vec<Node>,
    /// Skins, in glTF order.
    pub skins: Vec<Skin>,
    /// Meshes, in glTF order.
    pub meshes: Vec<Mesh>,
    /// Clips (glTF animations), in glTF order.
    pub clips: Vec<Clip>,
    /// Material names in glTF order (`material<index>` when unnamed), so
    /// outputs can refer to materials by name and index.
    pub materials: Vec<String>,
    /// The source's materials, textures, samplers and images as glTF JSON
    /// and bytes, kept for the meshes rigbake writes (empty unless
    /// [`crate::import::ImportOptions::images`] was set).
    pub looks: Looks,
    /// Node indices ordered so that a parent always comes before its children.
    pub topological_order: Vec<usize>,
    /// LOD groups: skinned mesh nodes that are levels of detail of one
    /// another (see [`crate::lod`]); empty when the model has none.
    pub lods: Vec<LodGroup>,
}

/// One LOD group of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct LodGroup {
    /// How the group was recognised.
    pub source: rigbake_types::LodSource,
    /// Node per level; `levels[0]` is level 0 (the full-detail mesh).
    pub levels: Vec<usize>,
    /// Per level, the screen coverage below which the next level takes
    /// over (`MSFT_screencoverage` in the base node's extras); empty when
    /// not given.
    pub coverage: Vec<f64>,
}

/// A local transform as translation, rotation and scale (matrix `T * R * S`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    /// Translation.
    pub translation: DVec3,
    /// Rotation, a unit quaternion.
    pub rotation: DQuat,
    /// Scale (may be non-uniform or negative).
    pub scale: DVec3,
}

impl Transform {
    /// The identity transform.
    pub const IDENTITY: Self = Self {
        translation: DVec3::ZERO,
        rotation: DQuat::IDENTITY,
        scale: DVec3::ONE,
    };

    /// The matrix `T * R * S`.
    pub fn to_matrix(&self) -> DMat4 {
        DMat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// One node of the hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The node name, or `node<index>` when the glTF gives none.
    pub name: String,
    /// Parent node, `None` for roots.
    pub parent: Option<usize>,
    /// Child nodes in glTF order.
    pub children: Vec<usize>,
    /// The rest transform as TRS (decomposed when the glTF gives a matrix);
    /// animation channels override its parts.
    pub rest: Transform,
    /// The exact rest local matrix (the glTF `matrix`, or `rest` as a matrix).
    /// Used whenever no channel of the current clip targets the node.
    pub rest_matrix: DMat4,
    /// Mesh instanced by this node.
    pub mesh: Option<usize>,
    /// Skin used by this node's mesh.
    pub skin: Option<usize>,
    /// Morph weights given on the node (override the mesh defaults), if any.
    pub morph_weights: Option<Vec<f32>>,
}

/// A skin: joints and their inverse bind matrices.
#[derive(Debug, Clone, PartialEq)]
pub struct Skin {
    /// The skin name, or `skin<index>` when the glTF gives none.
    pub name: String,
    /// Joint node indices; the position in this list is the joint index used
    /// by `JOINTS_n` and by the bone-matrix texture.
    pub joints: Vec<usize>,
    /// One inverse bind matrix per joint (identity when the glTF has none).
    pub inverse_binds: Vec<DMat4>,
    /// The `skeleton` root node, if given.
    pub skeleton: Option<usize>,
}

impl Skin {
    /// Parent of each joint in joint-index space: the nearest ancestor node
    /// that is also a joint of this skin, or `None`. Each node between joints
    /// is visited once, so this is linear in the nodes however deep the
    /// hierarchy.
    pub fn joint_parents(&self, nodes: &[Node]) -> Vec<Option<usize>> {
        let mut joint_of_node: HashMap<usize, usize> = HashMap::with_capacity(self.joints.len());
        for (j, &n) in self.joints.iter().enumerate() {
            joint_of_node.insert(n, j);
        }
        // Nearest joint at or above each non-joint node visited so far.
        let mut nearest: HashMap<usize, Option<usize>> = HashMap::new();
        let mut path = Vec::new();
        self.joints
            .iter()
            .map(|&n| {
                path.clear();
                let mut cursor = nodes[n].parent;
                let found = loop {
                    let Some(p) = cursor else { break None };
                    if let Some(&j) = joint_of_node.get(&p) {
                        break Some(j);
                    }
                    if let Some(&known) = nearest.get(&p) {
                        break known;
                    }
                    if path.len() > nodes.len() {
                        // Not a forest (never true of an imported model).
                        break None;
                    }
                    path.push(p);
                    cursor = nodes[p].parent;
                };
                for &p in &path {
                    nearest.insert(p, found);
                }
                found
            })
            .collect()
    }
}

/// A mesh: primitives plus default morph weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    /// The mesh name, or `mesh<index>` when the glTF gives none.
    pub name: String,
    /// Primitives in glTF order.
    pub primitives: Vec<Primitive>,
    /// Default morph target weights (zeros when the glTF gives none).
    pub default_weights: Vec<f32>,
}

pub use rigbake_types::PrimitiveMode;

/// One primitive: vertex streams, skinning influences and morph targets.
///
/// The vertex order is the glTF accessor order and is kept by every bake.
#[derive(Debug, Clone, PartialEq)]
pub struct Primitive {
    /// Topology.
    pub mode: PrimitiveMode,
    /// Positions (bind pose, mesh space).
    pub positions: Vec<Vec3>,
    /// Normals, if present.
    pub normals: Option<Vec<Vec3>>,
    /// Tangents (xyz + handedness w), if present.
    pub tangents: Option<Vec<Vec4>>,
    /// Texture coordinate sets `TEXCOORD_0..n`, in set order.
    pub tex_coords: Vec<Vec<Vec2>>,
    /// Index buffer, if indexed.
    pub indices: Option<Vec<u32>>,
    /// Material index in the source glTF, if any.
    pub material: Option<usize>,
    /// Skinning influences from every `JOINTS_n`/`WEIGHTS_n` set, if any.
    pub influences: Option<Influences>,
    /// Morph targets, in glTF order.
    pub morph_targets: Vec<MorphTarget>,
}

impl Primitive {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// Raw skinning influences: `per_vertex` (joint, weight) slots per vertex,
/// gathered from all `JOINTS_n`/`WEIGHTS_n` sets in set order (4 per set).
///
/// Weights are kept as stored (not renormalised); every vertex has a positive
/// weight sum.
#[derive(Debug, Clone, PartialEq)]
pub struct Influences {
    /// Slots per vertex (4 times the number of sets).
    pub per_vertex: usize,
    /// Joint indices, `per_vertex` per vertex.
    pub joints: Vec<u16>,
    /// Weights, `per_vertex` per vertex.
    pub weights: Vec<f32>,
}

impl Influences {
    /// The (joints, weights) slots of vertex `v`.
    #[inline]
    pub fn vertex(&self, v: usize) -> (&[u16], &[f32]) {
        let range = v * self.per_vertex..(v + 1) * self.per_vertex;
        (&self.joints[range.clone()], &self.weights[range])
    }
}

/// One morph target: per-vertex deltas.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MorphTarget {
    /// Position deltas.
    pub positions: Option<Vec<Vec3>>,
    /// Normal deltas.
    pub normals: Option<Vec<Vec3>>,
    /// Tangent deltas (xyz).
    pub tangents: Option<Vec<Vec3>>,
}

/// A clip: one glTF animation.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// The animation name, or `clip<index>` when the glTF gives none.
    pub name: String,
    /// Largest key time over all channels, in seconds.
    pub duration: f64,
    /// Channels in glTF order.
    pub channels: Vec<Channel>,
}

/// Which part of a node a channel animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Property {
    /// Translation (3 values per key).
    Translation,
    /// Rotation (4 values per key, unit quaternion x, y, z, w).
    Rotation,
    /// Scale (3 values per key).
    Scale,
    /// Morph target weights (one value per target per key).
    MorphWeights,
}

/// Keyframe interpolation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Hold the previous key.
    Step,
    /// Linear (spherical linear for rotations).
    Linear,
    /// Cubic Hermite spline with in/out tangents.
    CubicSpline,
}

/// One animation channel with its sampler data.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// Target node.
    pub node: usize,
    /// Target property.
    pub property: Property,
    /// Interpolation mode.
    pub interpolation: Interpolation,
    /// Key times in seconds (strictly increasing).
    pub times: Vec<f32>,
    /// Values per key: `width` floats for STEP/LINEAR, `3 * width` for
    /// CUBICSPLINE as (in-tangent, value, out-tangent).
    pub values: Vec<f32>,
    /// Floats per value (3, 4, or the morph target count).
    pub width: usize,
}

impl Model {
    /// Indices of nodes that instance a mesh with a skin.
    pub fn skinned_nodes(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.mesh.is_some() && n.skin.is_some())
            .map(|(i, _)| i)
    }

    /// Whether any node instances a skinned mesh that has skinning influences.
    pub fn has_skinned_mesh(&self) -> bool {
        let influenced = self.meshes_with_influences();
        self.skinned_nodes()
            .any(|n| influenced[self.nodes[n].mesh.unwrap_or_default()])
    }

    /// Per mesh: whether any of its primitives has skinning influences.
    pub fn meshes_with_influences(&self) -> Vec<bool> {
        self.meshes
            .iter()
            .map(|m| m.primitives.iter().any(|p| p.influences.is_some()))
            .collect()
    }

    /// Depth-first ancestors test: whether `node` is `ancestor` or below it.
    pub fn is_descendant(&self, node: usize, ancestor: usize) -> bool {
        let mut cursor = Some(node);
        while let Some(n) = cursor {
            if n == ancestor {
                return true;
            }
            cursor = self.nodes[n].parent;
        }
        false
    }
}

/// The look of a model: its glTF materials, textures, samplers and images,
/// kept so that the meshes rigbake writes render as the source did.
///
/// Materials, textures and samplers are the source's JSON objects, in
/// source order, so the indices between them stay valid; texture indices
/// inside materials and image indices inside textures refer to these lists.
/// Images are loaded into memory whatever their source (GLB buffer view,
/// data URI, file beside the model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Looks {
    /// `materials[i]` of the source, as JSON objects.
    pub materials: Vec<serde_json::Map<String, serde_json::Value>>,
    /// `textures[i]` of the source, as JSON objects.
    pub textures: Vec<serde_json::Map<String, serde_json::Value>>,
    /// `samplers[i]` of the source, as JSON objects.
    pub samplers: Vec<serde_json::Map<String, serde_json::Value>>,
    /// `images[i]` of the source, loaded.
    pub images: Vec<LookImage>,
    /// Entries of the source's `extensionsRequired` (the writer keeps those
    /// that the kept objects still use).
    pub extensions_required: Vec<String>,
    /// What could not be kept, in plain words (an unreadable image and the
    /// textures that used it), for the bake to report.
    pub warnings: Vec<String>,
}

/// One image of the source, loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LookImage {
    /// The image's `name`, if any.
    pub name: Option<String>,
    /// MIME type, sniffed from the bytes where recognised (PNG, JPEG, WebP,
    /// KTX2), else the source's `mimeType`.
    pub mime_type: String,
    /// The encoded image file.
    pub bytes: Vec<u8>,
}
