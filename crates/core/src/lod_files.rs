//! LOD levels from extra files: the skinned meshes of `hero_LOD1.glb`,
//! `hero_LOD2.glb`, ... added to the model of `hero.glb` as lower levels of
//! its skinned mesh nodes (`docs/lods.md`, "Levels in extra files").
//!
//! A level file is imported on its own; [`match_nodes`] pairs each of its
//! skinned mesh nodes with a skinned mesh node of the base model (by name,
//! a `_LOD<n>` suffix ignored on either side, or the single one with the
//! single one), and [`attach`] checks the level's skeleton against the
//! base's joint by joint (same names, inverse binds and rest pose within
//! [`SKIN_TOLERANCE`]), then appends the level's mesh to the base model
//! on a new node that takes its base node's place (same parent, same rest
//! transform) and is bound to the base's skin, the joint indices of every
//! vertex renumbered into the base skin. The level file's own animations,
//! other nodes and transforms are not used: the base model's skeleton
//! plays every level.
//!
//! Attaching is deterministic: the same files attached in the same order
//! give the same nodes, so `verify` and `preview` rebuild the model a bake
//! was made from by attaching the recorded files again.

use std::collections::HashMap;

use glam::DMat4;

use crate::error::{Error, Result};
use crate::lod::{self, LodSource};
use crate::model::{LodGroup, Mesh, Model, Node};

/// How far a level's inverse bind or rest-pose matrix entry may be from
/// the base's, relative to the largest entry of the base's matrix (at
/// least 1): `|a - b| <= SKIN_TOLERANCE * max(1, max |b|)`. Exporters write
/// the same skeleton with f32 rounding differences (about 1e-7); a joint
/// moved on purpose differs by far more.
pub const SKIN_TOLERANCE: f64 = 1e-5;

/// One pairing of a level file's skinned mesh node with the base node it
/// is a lower level of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodePair {
    /// The base model's skinned mesh node (level 0 of the group).
    pub base: usize,
    /// The level file's skinned mesh node.
    pub level: usize,
}

fn skinned(model: &Model) -> Vec<usize> {
    model.skinned_nodes().collect()
}

/// `name` without a `_LOD<n>` suffix.
fn stem_of(name: &str) -> &str {
    lod::split_suffix(name).map_or(name, |(prefix, _)| prefix)
}

/// Pairs every skinned mesh node of `level` (the file named `file`) with
/// a skinned mesh node of `base`: the one whose name equals it once a
/// `_LOD<n>` suffix is removed from both, or, when each model has exactly
/// one skinned mesh node, those two. Nodes of `base` that are lower levels
/// of an in-model group already are not candidates. A level node with no
/// match, or with two, is an error naming the file and the node.
pub fn match_nodes(base: &Model, level: &Model, file: &str) -> Result<Vec<NodePair>> {
    let is_lower: Vec<bool> = lod::level_of(base)
        .into_iter()
        .map(|l| l.is_some_and(|(_, level)| level > 0))
        .collect();
    let candidates: Vec<usize> = skinned(base)
        .into_iter()
        .filter(|&n| !is_lower[n])
        .collect();
    let ours = skinned(level);
    if ours.is_empty() {
        return Err(Error::invalid(
            format!("LOD file `{file}`"),
            "has no skinned mesh node, so it holds no level of detail of the model",
        ));
    }
    if let ([b], [l]) = (&candidates[..], &ours[..]) {
        return Ok(vec![NodePair {
            base: *b,
            level: *l,
        }]);
    }
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for &n in &candidates {
        by_name
            .entry(stem_of(&base.nodes[n].name))
            .or_default()
            .push(n);
    }
    let mut pairs = Vec::with_capacity(ours.len());
    for &l in &ours {
        let name = &level.nodes[l].name;
        match by_name.get(stem_of(name)).map(Vec::as_slice) {
            Some([b]) => {
                if let Some(other) = pairs.iter().find(|p: &&NodePair| p.base == *b) {
                    return Err(Error::invalid(
                        format!("LOD file `{file}`"),
                        format!(
                            "its skinned mesh nodes `{}` and `{name}` both match the model's node `{}`; a file holds one level of each mesh",
                            level.nodes[other.level].name, base.nodes[*b].name
                        ),
                    ));
                }
                pairs.push(NodePair { base: *b, level: l });
            }
            Some(many) => {
                return Err(Error::invalid(
                    format!("LOD file `{file}`, node `{name}`"),
                    format!(
                        "matches {} skinned mesh nodes of the model by name; rename them so that each level node matches one",
                        many.len()
                    ),
                ));
            }
            None => {
                let names: Vec<&str> = candidates
                    .iter()
                    .map(|&n| base.nodes[n].name.as_str())
                    .collect();
                return Err(Error::invalid(
                    format!("LOD file `{file}`, node `{name}`"),
                    format!(
                        "matches no skinned mesh node of the model by name (the model's are {}); name each level node like the node it is a level of (a `_LOD<n>` suffix is ignored)",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
    }
    Ok(pairs)
}

/// Rest-pose global matrix of every node.
fn rest_globals(model: &Model) -> Vec<DMat4> {
    let mut out = vec![DMat4::IDENTITY; model.nodes.len()];
    for &n in &model.topological_order {
        let node = &model.nodes[n];
        out[n] = match node.parent {
            Some(p) => out[p] * node.rest_matrix,
            None => node.rest_matrix,
        };
    }
    out
}

/// The largest entry difference of `a` from `b`, and whether it is within
/// [`SKIN_TOLERANCE`] of `b`'s scale.
fn difference(a: &DMat4, b: &DMat4) -> (f64, bool) {
    let (a, b) = (a.to_cols_array(), b.to_cols_array());
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let d = a
        .iter()
        .zip(&b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    (d, d <= SKIN_TOLERANCE * scale)
}

/// For each joint of the level node's skin, the base skin's joint of the
/// same name; errors name the joint and the difference.
fn joint_map(
    base: &Model,
    base_globals: &[DMat4],
    level: &Model,
    level_globals: &[DMat4],
    pair: NodePair,
    file: &str,
) -> Result<Vec<u16>> {
    let (Some(bs), Some(ls)) = (base.nodes[pair.base].skin, level.nodes[pair.level].skin) else {
        return Err(Error::invalid(
            format!("LOD file `{file}`"),
            "a matched node has no skin",
        ));
    };
    let (bskin, lskin) = (&base.skins[bs], &level.skins[ls]);
    let object = |joint: &str| {
        format!(
            "LOD file `{file}`, node `{}`, joint `{joint}`",
            level.nodes[pair.level].name
        )
    };
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(bskin.joints.len());
    for (j, &n) in bskin.joints.iter().enumerate() {
        if by_name.insert(base.nodes[n].name.as_str(), j).is_some() {
            return Err(Error::invalid(
                object(&base.nodes[n].name),
                format!(
                    "two joints of the model's skin `{}` have this name, so the level's joints cannot be matched by name",
                    bskin.name
                ),
            ));
        }
    }
    lskin
        .joints
        .iter()
        .enumerate()
        .map(|(j, &n)| {
            let name = &level.nodes[n].name;
            let Some(&b) = by_name.get(name.as_str()) else {
                return Err(Error::invalid(
                    object(name),
                    format!(
                        "is not a joint of the model's skin `{}` (no joint of that name); a level must use the model's skeleton",
                        bskin.name
                    ),
                ));
            };
            let (d, ok) = difference(&lskin.inverse_binds[j], &bskin.inverse_binds[b]);
            if !ok {
                return Err(Error::invalid(
                    object(name),
                    format!(
                        "its inverse bind matrix differs from the model's by {d:.3e} (tolerance {SKIN_TOLERANCE:.0e} of the matrix's scale); a level must be bound to the same skeleton"
                    ),
                ));
            }
            let (d, ok) = difference(&level_globals[n], &base_globals[bskin.joints[b]]);
            if !ok {
                return Err(Error::invalid(
                    object(name),
                    format!(
                        "its rest pose (global matrix) differs from the model's by {d:.3e} (tolerance {SKIN_TOLERANCE:.0e} of the matrix's scale); a level must have the same rest pose"
                    ),
                ));
            }
            u16::try_from(b).map_err(|_| Error::invalid(object(name), "joint index out of range"))
        })
        .collect()
}

/// The name of the node a level from `file_stem` gets in the model:
/// `<file stem>/<node name in that file>`.
pub fn attached_name(file_stem: &str, node: &str) -> String {
    format!("{file_stem}/{node}")
}

/// Appends the levels `pairs` of `level` (the file whose stem is
/// `file_stem`) to `base`: per pair, a copy of the level node's mesh with
/// joint indices renumbered into the base node's skin and materials
/// matched by name, on a new node named [`attached_name`] with the base
/// node's parent, rest transform and skin. Returns the new nodes, one per
/// pair. Errors (a level node without a mesh, a joint missing from the
/// base skin, an inverse bind or rest pose that differs) name the file,
/// the node and the joint.
pub fn attach(
    base: &mut Model,
    level: &Model,
    file_stem: &str,
    pairs: &[NodePair],
) -> Result<Vec<usize>> {
    let (base_globals, level_globals) = (rest_globals(base), rest_globals(level));
    let mut added = Vec::with_capacity(pairs.len());
    for &pair in pairs {
        let remap = joint_map(base, &base_globals, level, &level_globals, pair, file_stem)?;
        let Some(mesh) = level.nodes[pair.level].mesh else {
            return Err(Error::invalid(
                format!(
                    "LOD file `{file_stem}`, node `{}`",
                    level.nodes[pair.level].name
                ),
                "has no mesh",
            ));
        };
        let mut mesh: Mesh = level.meshes[mesh].clone();
        for p in &mut mesh.primitives {
            if let Some(inf) = &mut p.influences {
                for j in &mut inf.joints {
                    // Out-of-range indices carry zero weight (the importer
                    // checked weighted ones); keep them in range anyway.
                    *j = remap.get(usize::from(*j)).copied().unwrap_or(0);
                }
            }
            p.material = p.material.and_then(|m| {
                let name = level.materials.get(m)?;
                base.materials.iter().position(|b| b == name)
            });
        }
        base.meshes.push(mesh);
        let b = &base.nodes[pair.base];
        let node = Node {
            name: attached_name(file_stem, &level.nodes[pair.level].name),
            parent: b.parent,
            children: Vec::new(),
            rest: b.rest,
            rest_matrix: b.rest_matrix,
            mesh: Some(base.meshes.len() - 1),
            skin: b.skin,
            morph_weights: level.nodes[pair.level].morph_weights.clone(),
        };
        let id = base.nodes.len();
        if let Some(p) = node.parent {
            base.nodes[p].children.push(id);
        }
        base.nodes.push(node);
        // The parent is an older node, so appending keeps parents first.
        base.topological_order.push(id);
        added.push(id);
    }
    Ok(added)
}

/// [`attach`] with the pairs given by name: `(model node, level node)`,
/// as a bake recorded them (the LOD detail record), so that playback
/// rebuilds the model the bake was made from. A name that is no skinned
/// mesh node of its model is an error.
pub fn attach_named(
    base: &mut Model,
    level: &Model,
    file_stem: &str,
    names: &[(String, String)],
) -> Result<Vec<usize>> {
    let find = |m: &Model, name: &str| {
        m.nodes
            .iter()
            .position(|n| n.name == name && n.mesh.is_some() && n.skin.is_some())
    };
    let pairs = names
        .iter()
        .map(|(b, l)| match (find(base, b), find(level, l)) {
            (Some(base), Some(level)) => Ok(NodePair { base, level }),
            _ => Err(Error::invalid(
                format!("LOD file `{file_stem}`, node `{l}`"),
                format!(
                    "the bake recorded it as a level of `{b}`, but one of the two is no skinned mesh node now"
                ),
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    attach(base, level, file_stem, &pairs)
}

/// Adds level `k + 1` from `added[k]` (the nodes [`attach`] returned for
/// file `k`, paired with `pairs[k]`) to the group of each base node,
/// creating the group when the base node has none. Groups keep their base
/// node's order; a base node that is level 0 of an in-model group gets
/// the file levels after its own.
pub fn add_groups(model: &mut Model, pairs: &[Vec<NodePair>], added: &[Vec<usize>]) {
    for (file_pairs, nodes) in pairs.iter().zip(added) {
        for (pair, &node) in file_pairs.iter().zip(nodes) {
            match model.lods.iter_mut().find(|g| g.levels[0] == pair.base) {
                Some(group) => {
                    group.levels.push(node);
                    group.coverage.clear();
                }
                None => model.lods.push(LodGroup {
                    source: LodSource::Manifest,
                    levels: vec![pair.base, node],
                    coverage: Vec::new(),
                }),
            }
        }
    }
    model.lods.sort_by_key(|g| g.levels[0]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_relative_to_the_matrix_scale() {
        let a = DMat4::from_scale(glam::DVec3::splat(100.0));
        let mut b = a;
        b.x_axis.x += 5e-4;
        assert!(
            difference(&b, &a).1,
            "5e-4 of 100 is within 1e-5 of the scale"
        );
        b.x_axis.x += 1e-2;
        let (d, ok) = difference(&b, &a);
        assert!(!ok && (d - 0.0105).abs() < 1e-9, "{d}");
        let mut c = DMat4::IDENTITY;
        c.w_axis.y = 2e-5;
        assert!(!difference(&c, &DMat4::IDENTITY).1, "scale 1: 2e-5 is over");
    }

    #[test]
    fn suffixes_are_ignored_when_matching_names() {
        assert_eq!(stem_of("Body_LOD1"), "Body");
        assert_eq!(stem_of("Body"), "Body");
        assert_eq!(attached_name("hero_LOD1", "Body"), "hero_LOD1/Body");
    }
}
