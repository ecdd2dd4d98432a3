//! The LOD record: every LOD group of the model (`rigbake_core::lod`), and
//! per level where its outputs are (weights mesh file and record entries,
//! VAT record entries), plus the check that a group's levels share one
//! bone texture.

use rigbake_core::Model;
use rigbake_core::bake::BoneSet;
use rigbake_core::model::{Primitive, PrimitiveMode};
use rigbake_format::meta;

use super::common::node_name;
use crate::error::StepError;

/// Refuses a LOD group whose levels fall into different bone sets: they
/// would need two bone textures (their mesh nodes do not move together).
pub(super) fn check_one_texture(model: &Model, sets: &[BoneSet]) -> Result<(), StepError> {
    for group in &model.lods {
        let set_of = |n: usize| sets.iter().position(|s| s.members.contains(&n));
        let base = group.levels[0];
        for (level, &n) in group.levels.iter().enumerate().skip(1) {
            if set_of(n) != set_of(base) {
                let e = rigbake_core::Error::invalid(
                    format!("LOD group `{}`", node_name(model, base)),
                    format!(
                        "level {level}, node `{}`, does not move with level 0 (its node's global transform differs from `{}`'s), so the levels cannot share one bone texture",
                        node_name(model, n),
                        node_name(model, base)
                    ),
                )
                .with_hint("give every level node level 0's parent and transform");
                return Err(StepError::bare(e));
            }
        }
    }
    Ok(())
}

/// Triangles a primitive draws (0 for points and lines).
fn triangles(p: &Primitive) -> usize {
    let n = p.indices.as_ref().map_or(p.vertex_count(), Vec::len);
    match p.mode {
        PrimitiveMode::Triangles => n / 3,
        PrimitiveMode::TriangleStrip | PrimitiveMode::TriangleFan => n.saturating_sub(2),
        _ => 0,
    }
}

/// The k-th VAT record entry naming a node is the k-th node of that name
/// holding a mesh of the entry's mesh name (the rule playback uses).
fn vat_nodes(model: &Model, vat: &meta::VatMetadata) -> Vec<Option<usize>> {
    let mut used: Vec<(usize, usize)> = Vec::new();
    vat.primitives
        .iter()
        .map(|p| {
            let found = model.nodes.iter().enumerate().find(|(i, n)| {
                n.name == p.node
                    && n.mesh.is_some_and(|m| model.meshes[m].name == p.mesh)
                    && !used
                        .iter()
                        .any(|&(u, q)| u == *i && q == p.primitive as usize)
            });
            let n = found.map(|(i, _)| i);
            if let Some(i) = n {
                used.push((i, p.primitive as usize));
            }
            n
        })
        .collect()
}

/// The LOD record of `model`; `None` when it has no LOD groups.
/// `weights` is the weights record with each entry's node; `weights_file`
/// names a level's weights mesh.
pub(super) fn record(
    model: &Model,
    weights: Option<(&meta::WeightsMetadata, &[usize])>,
    vat: Option<&meta::VatMetadata>,
    weights_file: impl Fn(usize) -> String,
) -> Option<meta::LodsMetadata> {
    if model.lods.is_empty() {
        return None;
    }
    let vat_of = vat.map(|v| vat_nodes(model, v)).unwrap_or_default();
    let groups = model
        .lods
        .iter()
        .map(|group| meta::LodGroupMeta {
            source: group.source,
            levels: group
                .levels
                .iter()
                .enumerate()
                .map(|(level, &n)| {
                    let mesh = model.nodes[n].mesh.map(|m| &model.meshes[m]);
                    let prims = mesh.map_or(&[][..], |m| &m.primitives[..]);
                    let weights_primitives: Vec<u32> = weights
                        .map(|(_, nodes)| {
                            nodes
                                .iter()
                                .enumerate()
                                .filter(|&(_, &node)| node == n)
                                .map(|(i, _)| i as u32)
                                .collect()
                        })
                        .unwrap_or_default();
                    meta::LodLevelMeta {
                        node: node_name(model, n),
                        mesh: mesh.map(|m| m.name.clone()).unwrap_or_default(),
                        vertices: prims.iter().map(Primitive::vertex_count).sum::<usize>() as u32,
                        triangles: prims.iter().map(triangles).sum::<usize>() as u32,
                        screen_coverage: group.coverage.get(level).copied(),
                        weights_file: (!weights_primitives.is_empty()).then(|| weights_file(level)),
                        weights_primitives,
                        vat_primitives: vat_of
                            .iter()
                            .enumerate()
                            .filter(|&(_, &node)| node == Some(n))
                            .map(|(i, _)| i as u32)
                            .collect(),
                    }
                })
                .collect(),
        })
        .collect();
    Some(meta::LodsMetadata { groups })
}

/// The LOD detail record: per group and level of `record`, the file the
/// level came from (`files`), the influences it keeps and the largest
/// weight and position loss of its entries in the weights record.
pub(super) fn details(
    model: &Model,
    record: &meta::LodsMetadata,
    weights: Option<&meta::WeightsMetadata>,
    files: &[super::lod_files::AttachedFile],
    settings: &crate::settings::BakeSettings,
) -> meta::LodDetailsMetadata {
    let groups = record
        .groups
        .iter()
        .zip(&model.lods)
        .map(|(group, nodes)| {
            group
                .levels
                .iter()
                .zip(&nodes.levels)
                .enumerate()
                .map(|(level, (l, &node))| {
                    let entries = l
                        .weights_primitives
                        .iter()
                        .filter_map(|&i| weights.and_then(|w| w.primitives.get(i as usize)));
                    let (dropped, moved) = entries.fold((0.0f64, 0.0f64), |(d, m), p| {
                        (d.max(p.dropped_max), m.max(p.position_error))
                    });
                    meta::LodLevelDetail {
                        file: files.iter().find_map(|f| f.level(node)),
                        max_influences: settings.influences_at(level) as u32,
                        dropped_max: dropped,
                        position_error: moved,
                    }
                })
                .collect()
        })
        .collect();
    meta::LodDetailsMetadata { groups }
}
