//! The bone-weight output: reduce every skinned primitive's influences,
//! store the channels as container sections, measure the truncation error,
//! and write the weights mesh.

use rigbake_core::Model;
use rigbake_core::bake::anchors;
use rigbake_core::bake::vertices::FrameVertices;
use rigbake_core::bake::weights::{self, channel_count};
use rigbake_core::model::Primitive;
use rigbake_format::glb;
use rigbake_format::meta::{self, WEIGHT_ATTRIBUTE_PREFIX};
use rigbake_format::records::SectionKind;

use super::bones::BonesPart;
use super::common::node_name;
use super::mesh;
use super::placement::RestPlacements;
use super::rig::RigPlan;
use crate::error::{Source, StepError};
use crate::settings::BakeSettings;
use crate::sink::Sink;

/// The weights mesh file of LOD level `level`: `<model>.weights.glb` for
/// level 0 (and every mesh that is no LOD), `<model>.lod<n>.weights.glb`
/// for level `n`.
pub(super) fn mesh_file_name(model: &str, level: usize) -> String {
    if level == 0 {
        format!("{model}.weights.glb")
    } else {
        format!("{model}.lod{level}.weights.glb")
    }
}

/// The bone-weight channels of `model` and, per record entry, the node it
/// came from.
pub(super) struct WeightsPart {
    /// The record.
    pub record: meta::WeightsMetadata,
    /// Per entry of `record.primitives`: the source node.
    pub nodes: Vec<usize>,
    /// Which TEXCOORD sets each primitive of the weights meshes uses.
    pub uv_sets: Vec<meta::PrimitiveUvSets>,
}

/// Reduces, stores and describes the bone-weight channels of `model`; each
/// LOD level's primitives go to that level's weights mesh
/// ([`mesh_file_name`]).
pub(super) fn bake(
    model: &Model,
    rest: &RestPlacements,
    bones: &BonesPart,
    rig: &RigPlan,
    settings: &BakeSettings,
    sink: &mut dyn Sink,
) -> Result<WeightsPart, StepError> {
    let mesh_file = mesh_file_name(&model.name, 0);
    let as_uv = settings.weights_as_uv;
    // Every primitive's channels are sized for the most pairs any LOD
    // level keeps; a level that keeps fewer has zero pairs above its own.
    let max = settings.most_influences();
    let channels = channel_count(max);
    let level_of = rigbake_core::lod::level_of(model);
    let mut primitives = Vec::new();
    let mut entry_nodes = Vec::new();
    let mut uv_sets = Vec::new();
    // Per LOD level: its meshes and which node each mesh is.
    let mut files: Vec<(String, Vec<glb::GlbMesh>)> = vec![(mesh_file.clone(), Vec::new())];
    let mut mesh_of_node: Vec<(usize, usize)> = Vec::new();
    // Each mesh stands on its bone set's space node (the skin matrices
    // move bind-space vertices into that node's space).
    let placed = |set: usize| Some(rest.matrix(Some(bones.baked[set].set.mesh_node)));
    for (node, p) in weights::skinned_primitives(model) {
        let set = bones
            .baked
            .iter()
            .position(|t| t.set.members.contains(&node))
            .ok_or_else(|| StepError::bare(Source::MissingBoneTexture { node }))?;
        let level = level_of[node].map_or(0, |(_, l)| l);
        let kept = settings.influences_at(level);
        let reduced = weights::reduce_primitive(model, node, p, kept).map_err(StepError::bare)?;
        let position_error = weights::truncation_error(model, &reduced, &bones.baked[set]);
        let values = reduced.channels_in(channels);
        let section = store_channels(sink, &values)?;

        // The weights mesh of the node's LOD level: one mesh per skinned
        // node, its primitives in order.
        while files.len() <= level {
            files.push((mesh_file_name(&model.name, files.len()), Vec::new()));
        }
        let (file, meshes) = &mut files[level];
        let mesh_index = match mesh_of_node.iter().find(|(n, _)| *n == node) {
            Some((_, i)) => *i,
            None => {
                meshes.push(glb::GlbMesh {
                    name: node_name(model, node),
                    primitives: Vec::new(),
                    matrix: placed(set),
                });
                mesh_of_node.push((node, meshes.len() - 1));
                meshes.len() - 1
            }
        };
        let src = &model.meshes[reduced.mesh].primitives[p];
        let out = weights_primitive(src, FrameVertices::bind_pose(src), &values, channels, as_uv);
        meshes[mesh_index].primitives.push(out);
        uv_sets.push(weight_sets(
            file,
            mesh_index,
            meshes[mesh_index].primitives.len() - 1,
            src,
            channels,
            as_uv,
        ));
        entry_nodes.push(node);

        primitives.push(meta::WeightsPrimitiveMeta {
            node: node_name(model, node),
            mesh: model.meshes[reduced.mesh].name.clone(),
            primitive: p as u32,
            skin: set as u32,
            vertices: reduced.vertex_count() as u32,
            section: section as u32,
            dropped_max: reduced.dropped_max,
            dropped_mean: reduced.dropped_mean,
            position_error,
            bound_to: None,
            mesh_index: mesh_index as u32,
            mesh_primitive: (meshes[mesh_index].primitives.len() - 1) as u32,
        });
    }
    let meshes = &mut files[0].1;
    // Rigid props bound to their joint: one influence, weight 1.
    let sets: Vec<_> = bones.baked.iter().map(|t| t.set.clone()).collect();
    for (prop, _) in rig.props.iter().filter(|(_, bound)| *bound) {
        let bound = anchors::bind_prop(model, &sets, prop).map_err(StepError::bare)?;
        let mesh = model.nodes[prop.node].mesh.unwrap_or_default();
        meshes.push(glb::GlbMesh {
            name: node_name(model, prop.node),
            primitives: Vec::new(),
            matrix: placed(prop.set),
        });
        let mesh_index = meshes.len() - 1;
        for (p, vertices) in bound.primitives.into_iter().enumerate() {
            let count = vertices.positions.len();
            let mut first = [0.0f32; 4];
            first[0] = prop.joint as f32;
            first[1] = 1.0;
            let values: Vec<[f32; 4]> = (0..count)
                .flat_map(|_| (0..channels).map(move |c| if c == 0 { first } else { [0.0; 4] }))
                .collect();
            let section = store_channels(sink, &values)?;
            let src = &model.meshes[mesh].primitives[p];
            let out = weights_primitive(src, vertices, &values, channels, as_uv);
            meshes[mesh_index].primitives.push(out);
            uv_sets.push(weight_sets(&mesh_file, mesh_index, p, src, channels, as_uv));
            primitives.push(meta::WeightsPrimitiveMeta {
                node: node_name(model, prop.node),
                mesh: model.meshes[mesh].name.clone(),
                primitive: p as u32,
                skin: prop.set as u32,
                vertices: count as u32,
                section: section as u32,
                dropped_max: 0.0,
                dropped_mean: 0.0,
                position_error: 0.0,
                bound_to: Some(node_name(model, prop.joint_node)),
                mesh_index: mesh_index as u32,
                mesh_primitive: p as u32,
            });
            entry_nodes.push(prop.node);
        }
    }
    for (file, meshes) in files {
        if meshes.is_empty() && file != mesh_file {
            continue;
        }
        let doc = mesh::document(model, meshes);
        sink.write_file_streamed(&file, &mut |out| {
            glb::write_glb_to(&doc, out).map_err(|e| StepError::during("weights mesh", e))
        })?;
    }
    Ok(WeightsPart {
        record: meta::WeightsMetadata {
            max_influences: max as u32,
            channels: channels as u32,
            mesh_file: Some(mesh_file),
            primitives,
        },
        nodes: entry_nodes,
        uv_sets,
    })
}

/// Stores one primitive's channel values (`channels` VEC4s per vertex) as a
/// vertex-data section of the container; returns the section's index.
fn store_channels(sink: &mut dyn Sink, values: &[[f32; 4]]) -> Result<usize, StepError> {
    let bytes: Vec<u8> = values
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    sink.add_section(SectionKind::VertexData, &bytes)
}

/// The UV-set record of one primitive of the weights mesh: the source's
/// sets, then (with `as_uv`) two sets per channel.
fn weight_sets(
    file: &str,
    mesh: usize,
    primitive: usize,
    src: &Primitive,
    channels: usize,
    as_uv: bool,
) -> meta::PrimitiveUvSets {
    meta::PrimitiveUvSets {
        file: file.to_owned(),
        mesh: mesh as u32,
        primitive: primitive as u32,
        source_sets: src.tex_coords.len() as u32,
        lookup: None,
        weights_first: as_uv.then_some(src.tex_coords.len() as u32),
        weights_sets: if as_uv { 2 * channels as u32 } else { 0 },
    }
}

/// A primitive of the weights mesh: `src`'s indices, UVs and material,
/// `vertices` as its geometry (tangents only with normals), and the channel
/// values as the custom attributes `_RIGBAKE_UV1..` ([`WEIGHT_ATTRIBUTE_PREFIX`])
/// and, with `as_uv`, as TEXCOORD sets after the source's: channel `c`'s
/// `(bone, weight)` pairs in sets `n + 2c` and `n + 2c + 1`.
fn weights_primitive(
    src: &Primitive,
    vertices: FrameVertices,
    values: &[[f32; 4]],
    channels: usize,
    as_uv: bool,
) -> glb::GlbPrimitive {
    let mut out = mesh::base(src);
    out.positions = vertices.positions;
    out.tangents = vertices.tangents.filter(|_| vertices.normals.is_some());
    out.normals = vertices.normals;
    out.custom = (0..channels)
        .map(|c| {
            let name = format!("{WEIGHT_ATTRIBUTE_PREFIX}{}", c + 1);
            (
                name,
                values.iter().skip(c).step_by(channels).copied().collect(),
            )
        })
        .collect();
    if as_uv {
        for c in 0..channels {
            let channel = values.iter().skip(c).step_by(channels);
            out.tex_coords
                .push(channel.clone().map(|v| [v[0], v[1]]).collect());
            out.tex_coords.push(channel.map(|v| [v[2], v[3]]).collect());
        }
    }
    out
}
