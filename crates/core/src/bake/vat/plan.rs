//! Which primitives a VAT bake covers, how each deforms, and how they are
//! grouped into texture sets (an atlas or one set per primitive).

use crate::bake::bones;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Model, Property};
use crate::timeline::Timeline;

use super::{VatLayout, VatLayoutMode, VatOptions};

/// What deforms a baked primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deformation {
    /// Linear blend skinning with this skin (index into `Model::skins`).
    Skinned {
        /// The skin.
        skin: usize,
    },
    /// The node's own (animated) transform.
    Rigid,
}

/// One primitive instance that the VAT bake covers.
#[derive(Debug, Clone, PartialEq)]
pub struct VatPrimitive {
    /// The node instancing the mesh.
    pub node: usize,
    /// The mesh.
    pub mesh: usize,
    /// The primitive within the mesh.
    pub primitive: usize,
    /// Skinned or rigid.
    pub deformation: Deformation,
    /// Whether morph targets apply (the mesh has some).
    pub morphed: bool,
    /// Whether normals are baked.
    pub normals: bool,
    /// Whether tangents are baked.
    pub tangents: bool,
    /// Vertices of the primitive.
    pub vertices: usize,
    /// The texture set holding it (index into `VatPlan::sets`).
    pub set: usize,
    /// Its first vertex in the set: vertex `v` is set vertex `first_vertex + v`.
    pub first_vertex: usize,
    /// Texel addressing of its set.
    pub layout: VatLayout,
}

/// One texture set: a position texture (and normal and tangent textures when
/// any member bakes them) holding the vertices of `members`, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct VatSet {
    /// Texel addressing (`layout.vertices`: all members' vertices).
    pub layout: VatLayout,
    /// Member primitives (indices into `VatPlan::primitives`), in vertex order.
    pub members: Vec<usize>,
    /// Whether the set has a normal texture (some member bakes normals;
    /// members without normals read zero there).
    pub normals: bool,
    /// Whether the set has a tangent texture.
    pub tangents: bool,
}

/// Which primitives a VAT bake covers and in what space.
#[derive(Debug, Clone, PartialEq)]
pub struct VatPlan {
    /// The node whose space all values are in (`None`: the scene root).
    pub reference_node: Option<usize>,
    /// Primitives that move, in node then primitive order.
    pub primitives: Vec<VatPrimitive>,
    /// Primitives that never move (node, mesh, primitive): not baked.
    pub static_primitives: Vec<(usize, usize, usize)>,
    /// Texture sets: one (an atlas) or one per primitive, as asked.
    pub sets: Vec<VatSet>,
    /// How primitives were grouped.
    pub mode: VatLayoutMode,
}

/// Chooses what to bake: skinned primitives, primitives whose morph weights
/// are animated, and rigid primitives whose node or an ancestor (or the
/// reference node or an ancestor) is animated.
pub fn plan(model: &Model, timeline: &Timeline, options: &VatOptions) -> Result<VatPlan> {
    let mut trs_animated = vec![false; model.nodes.len()];
    let mut weights_animated = vec![false; model.nodes.len()];
    for ch in model.clips.iter().flat_map(|c| &c.channels) {
        match ch.property {
            Property::MorphWeights => weights_animated[ch.node] = true,
            _ => trs_animated[ch.node] = true,
        }
    }
    let chain_animated = |node: usize| {
        let mut cursor = Some(node);
        while let Some(n) = cursor {
            if trs_animated[n] {
                return true;
            }
            cursor = model.nodes[n].parent;
        }
        false
    };
    let reference_node = bones::bone_sets(model).first().map(|s| s.mesh_node);
    let reference_moves = reference_node.is_some_and(chain_animated);
    let mut primitives = Vec::new();
    let mut static_primitives = Vec::new();
    for (n, node) in model.nodes.iter().enumerate() {
        let Some(m) = node.mesh else { continue };
        let mesh = &model.meshes[m];
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let deformation = match (node.skin, &prim.influences) {
                (Some(skin), Some(_)) => Deformation::Skinned { skin },
                _ => Deformation::Rigid,
            };
            let morphed = !prim.morph_targets.is_empty();
            let moves = matches!(deformation, Deformation::Skinned { .. })
                || (morphed && weights_animated[n])
                || chain_animated(n)
                || reference_moves;
            if !moves {
                static_primitives.push((n, m, p));
                continue;
            }
            let vertices = prim.vertex_count();
            let layout = VatLayout::new(
                vertices,
                timeline.rows,
                options.max_texture_size,
                options.power_of_two,
            )
            .map_err(|e| Error {
                object: format!("meshes[{m}].primitives[{p}]"),
                ..e
            })?;
            primitives.push(VatPrimitive {
                node: n,
                mesh: m,
                primitive: p,
                deformation,
                morphed,
                normals: options.normals && prim.normals.is_some(),
                tangents: options.tangents && prim.tangents.is_some(),
                vertices,
                set: primitives.len(),
                first_vertex: 0,
                layout,
            });
        }
    }
    if primitives.is_empty() {
        return Err(Error::new(
            ErrorKind::NothingToBake,
            "",
            "no animated mesh: nothing for a vertex animation bake",
        ));
    }
    let sets = match options.layout {
        VatLayoutMode::PerPrimitive => primitives
            .iter()
            .enumerate()
            .map(|(i, p)| VatSet {
                layout: p.layout,
                members: vec![i],
                normals: p.normals,
                tangents: p.tangents,
            })
            .collect(),
        VatLayoutMode::Atlas => vec![atlas(&mut primitives, timeline.rows, options)?],
    };
    Ok(VatPlan {
        reference_node,
        primitives,
        static_primitives,
        sets,
        mode: options.layout,
    })
}

/// Packs every primitive into one set, vertices in plan order, and points
/// each primitive at it. Each primitive fits on its own (checked by the
/// caller), so only the atlas as a whole can be too large.
fn atlas(primitives: &mut [VatPrimitive], rows: usize, options: &VatOptions) -> Result<VatSet> {
    let mut total = 0usize;
    for p in primitives.iter_mut() {
        p.set = 0;
        p.first_vertex = total;
        total = total.saturating_add(p.vertices);
    }
    let layout = VatLayout::new(total, rows, options.max_texture_size, options.power_of_two)
        .map_err(|e| Error {
            object: "vat atlas".to_owned(),
            message: format!(
                "the atlas of {} primitives: {}",
                primitives.len(),
                e.message
            ),
            ..e
        })?;
    for p in primitives.iter_mut() {
        p.layout = layout;
    }
    Ok(VatSet {
        layout,
        members: (0..primitives.len()).collect(),
        normals: primitives.iter().any(|p| p.normals),
        tangents: primitives.iter().any(|p| p.tangents),
    })
}
