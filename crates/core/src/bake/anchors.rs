//! Attachment anchors (SPEC section 8) and rigid props on joints.
//!
//! An anchor is a socket node whose model-space matrix is baked per frame
//! (in the same loop as the bone matrices, see
//! [`crate::bake::frames::bake_frames`]) so a separate prop can follow it. A
//! rigid prop is a mesh parented (directly or through static nodes) under a
//! joint: it can either be reported as an anchor of its own, or bound to that
//! joint as a single-influence skinned mesh so it plays from the bone texture
//! with the body.

use glam::{DMat3, DMat4, Mat4};

use crate::bake::bones::BoneSet;
use crate::bake::vertices::FrameVertices;
use crate::error::{Error, Result};
use crate::layout::MatrixLayout;
use crate::model::{Model, Property};

/// Per-frame matrices of socket nodes in model space:
/// `inverse(reference_global) * socket_global` (SPEC section 8).
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorTracks {
    /// The reference node (the first bone set's mesh node; `None`: the
    /// scene root), the same model space as the bone textures and VAT.
    pub reference: Option<usize>,
    /// Socket nodes, in track order.
    pub nodes: Vec<usize>,
    /// Rows (timeline rows).
    pub rows: usize,
    /// `rows * nodes.len() * 16` floats: per row, per socket, the 4x4 matrix
    /// column by column (the `mat4` pixel layout). The runtime samples them
    /// between rows through [`crate::runtime::anchor_path::AnchorTrackView`].
    pub data: Vec<f32>,
}

impl AnchorTracks {
    /// The matrix of socket `anchor` at `row`.
    pub fn matrix(&self, row: usize, anchor: usize) -> Mat4 {
        let at = (row * self.nodes.len() + anchor) * 16;
        MatrixLayout::Mat4.decode(&self.data[at..at + 16])
    }
}

/// Substrings (case-insensitive) that mark a node name as a socket.
pub const SOCKET_MARKERS: &[&str] = &["socket", "slot", "attach", "mount", "anchor", "hardpoint"];

/// The node `name` names ([`crate::node_lookup::NodeNames::resolve`]: a
/// unique name, a path, or `#N`), as an anchor; a name several nodes share
/// is an error listing them.
pub fn find_node(model: &Model, name: &str) -> Result<usize> {
    crate::node_lookup::NodeNames::new(&model.nodes).resolve(name, "an anchor")
}

/// The nodes named `names`, in order, each as [`find_node`] finds it, in
/// one pass over the nodes and a hash lookup per name.
pub fn find_nodes<S: AsRef<str>>(model: &Model, names: &[S]) -> Result<Vec<usize>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let index = crate::node_lookup::NodeNames::new(&model.nodes);
    names
        .iter()
        .map(|name| index.resolve(name.as_ref(), "an anchor"))
        .collect()
}

/// Joints of any skin that some skinned vertex weights (per node).
fn weighted_joints(model: &Model) -> Vec<bool> {
    let mut weighted = vec![false; model.nodes.len()];
    for n in model.skinned_nodes() {
        let skin = &model.skins[model.nodes[n].skin.unwrap_or_default()];
        let mesh = &model.meshes[model.nodes[n].mesh.unwrap_or_default()];
        for inf in mesh.primitives.iter().filter_map(|p| p.influences.as_ref()) {
            for (&j, &w) in inf.joints.iter().zip(&inf.weights) {
                if w > 0.0 {
                    weighted[skin.joints[usize::from(j)]] = true;
                }
            }
        }
    }
    weighted
}

/// Most sockets [`auto_anchors`] chooses: a model with more socket-like
/// nodes is refused, so that a file cannot make the automatic choice track
/// (and allocate) without bound. Anchors named explicitly are bounded only
/// by the texture limits ([`crate::bake::frames::bake_frames`]).
pub const MAX_AUTO_ANCHORS: usize = 1024;

/// Sockets chosen automatically: nodes under a skeleton (descendants of a
/// skin's joints) that no skinned vertex weights, and that either have a
/// child which is not a joint (a prop or an empty mount point) or a name
/// that marks a socket ([`SOCKET_MARKERS`]). In node order, each node once;
/// linear in the number of nodes.
///
/// Fails with a [`crate::ErrorKind::Limit`] error at `nodes` when more than
/// [`MAX_AUTO_ANCHORS`] nodes qualify.
pub fn auto_anchors(model: &Model) -> Result<Vec<usize>> {
    let mut is_joint = vec![false; model.nodes.len()];
    for s in &model.skins {
        for &j in &s.joints {
            is_joint[j] = true;
        }
    }
    let weighted = weighted_joints(model);
    // Under a skeleton: the node or an ancestor is a joint.
    let mut under = vec![false; model.nodes.len()];
    for &n in &model.topological_order {
        under[n] = is_joint[n] || model.nodes[n].parent.is_some_and(|p| under[p]);
    }
    let chosen: Vec<usize> = (0..model.nodes.len())
        .filter(|&n| under[n] && !weighted[n] && model.nodes[n].mesh.is_none())
        .filter(|&n| {
            let node = &model.nodes[n];
            let lower = node.name.to_lowercase();
            node.children.iter().any(|&c| !is_joint[c])
                || SOCKET_MARKERS.iter().any(|m| lower.contains(m))
        })
        .collect();
    if chosen.len() > MAX_AUTO_ANCHORS {
        return Err(Error::limit(
            "nodes",
            format!(
                "{} nodes qualify as automatic anchors, more than the limit of {MAX_AUTO_ANCHORS}",
                chosen.len()
            ),
        )
        .with_hint("name the sockets to track instead of choosing them automatically"));
    }
    Ok(chosen)
}

/// A rigid mesh hanging under a joint.
#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    /// The node holding the mesh.
    pub node: usize,
    /// Index of the bone set whose skin contains the joint.
    pub set: usize,
    /// The joint's index within that skin.
    pub joint: usize,
    /// The joint's node.
    pub joint_node: usize,
    /// The static transform from the joint to the prop node (the product of
    /// rest matrices below the joint), or `None` when a node in between is
    /// animated, so the prop cannot be bound statically.
    pub offset: Option<DMat4>,
}

/// Every rigid mesh node (a mesh without skinning) whose nearest joint
/// ancestor belongs to one of `sets`' skins, in node order.
///
/// One pass over the nodes, parents first, however deep the hierarchy and
/// however many props it holds: each node inherits its nearest such joint
/// and the static transform below it from its parent.
pub fn find_props(model: &Model, sets: &[BoneSet]) -> Vec<Prop> {
    let n = model.nodes.len();
    let mut animated = vec![false; n];
    for ch in model.clips.iter().flat_map(|c| &c.channels) {
        if ch.property != Property::MorphWeights {
            animated[ch.node] = true;
        }
    }
    // The first bone set (and position in its skin) holding each node.
    let mut joint_of: Vec<Option<(usize, usize)>> = vec![None; n];
    for (s, set) in sets.iter().enumerate() {
        for (j, &node) in model.skins[set.skin].joints.iter().enumerate() {
            if joint_of[node].is_none() {
                joint_of[node] = Some((s, j));
            }
        }
    }
    // Per node, the nearest joint ancestor strictly above it, with the
    // product of the rest matrices from below that joint down to the node
    // inclusive (`None` when one of them is animated).
    let mut below: Vec<Option<(usize, Option<DMat4>)>> = vec![None; n];
    let mut visits = 0u64;
    for &i in &model.topological_order {
        visits += 1;
        let node = &model.nodes[i];
        let local = (!animated[i]).then_some(node.rest_matrix);
        below[i] = node.parent.and_then(|p| {
            if joint_of[p].is_some() {
                Some((p, local))
            } else {
                below[p].map(|(joint, offset)| {
                    let offset = match (offset, local) {
                        (Some(o), Some(l)) => Some(o * l),
                        _ => None,
                    };
                    (joint, offset)
                })
            }
        });
    }
    crate::work::add(crate::work::Counter::PropNodeVisits, visits);
    let mut props = Vec::new();
    for (i, node) in model.nodes.iter().enumerate() {
        let Some(mesh) = node.mesh else { continue };
        let skinned = node.skin.is_some()
            && model.meshes[mesh]
                .primitives
                .iter()
                .any(|p| p.influences.is_some());
        if skinned {
            continue;
        }
        if let Some((joint_node, offset)) = below[i] {
            let Some((set, joint)) = joint_of[joint_node] else {
                continue;
            };
            props.push(Prop {
                node: i,
                set,
                joint,
                joint_node,
                offset,
            });
        }
    }
    props
}

/// A prop bound to its joint: its vertices expressed in the joint's bind
/// space, so that the joint's skin matrix alone places them.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundProp {
    /// Vertices per primitive: `inverse(inverse_bind) * offset * p`, with
    /// normals and tangents transformed accordingly (unit length).
    pub primitives: Vec<FrameVertices>,
}

/// Binds `prop` to its joint (weight 1): for every vertex `p`, the joint's
/// skin matrix times `inverse(inverse_bind_j) * offset * p` equals the
/// prop's model-space position at every frame. Fails when the prop cannot be
/// bound statically or the inverse bind matrix is singular.
pub fn bind_prop(model: &Model, sets: &[BoneSet], prop: &Prop) -> Result<BoundProp> {
    let path = format!("nodes[{}]", prop.node);
    let offset = prop.offset.ok_or_else(|| {
        Error::invalid(
            &path,
            "a node between the prop and its joint is animated; it cannot be bound to the joint",
        )
    })?;
    let ibm = model.skins[sets[prop.set].skin].inverse_binds[prop.joint];
    if ibm.determinant().abs() < 1e-300 {
        return Err(Error::invalid(
            &path,
            "the joint's inverse bind matrix is singular",
        ));
    }
    let m = ibm.inverse() * offset;
    let normal_m = crate::eval::skin::normal_matrix(&m);
    let upper = DMat3::from_mat4(m);
    let mesh = &model.meshes[model.nodes[prop.node].mesh.unwrap_or_default()];
    let primitives = mesh
        .primitives
        .iter()
        .map(|p| {
            let positions: Vec<f32> = p
                .positions
                .iter()
                .flat_map(|v| m.transform_point3(v.as_dvec3()).as_vec3().to_array())
                .collect();
            let normals: Option<Vec<f32>> = p.normals.as_ref().map(|n| {
                n.iter()
                    .flat_map(|v| (normal_m * v.as_dvec3()).as_vec3().to_array())
                    .collect()
            });
            let tangents: Option<Vec<f32>> = p.tangents.as_ref().map(|t| {
                t.iter()
                    .flat_map(|v| {
                        (upper * v.truncate().as_dvec3())
                            .as_vec3()
                            .extend(v.w)
                            .to_array()
                    })
                    .collect()
            });
            FrameVertices::from_flat(&positions, normals.as_deref(), tangents.as_deref())
        })
        .collect();
    Ok(BoundProp { primitives })
}
