//! LOD groups: which skinned mesh nodes of a model are levels of detail of
//! one another, so that they share one bake (one bone texture, one VAT
//! atlas) and get one weights mesh per level (`docs/lods.md`).
//!
//! A group is a list of skinned mesh nodes, level 0 first, all bound to the
//! same skin (or to skins with the same joints and inverse binds). Groups
//! come from three places, in this order of precedence:
//!
//! 1. the manifest (`[[model.lod]]`, [`apply_specs`]), which replaces any
//!    detected group sharing a node with it;
//! 2. a node's `MSFT_lod` extension (read by the importer);
//! 3. node names: sibling skinned mesh nodes named `<name>_LOD<n>`
//!    (case-insensitive `lod`), level 0 being `<name>_LOD0` or `<name>`
//!    itself ([`by_name_suffix`]); levels are ordered by `n` and numbered
//!    by position.
//!
//! Every node is in at most one group. Groups are checked by [`check`];
//! errors name the nodes and say why.

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result};
use crate::model::{LodGroup, Model};

pub use rigbake_types::{LodSource, LodSpec};

/// Most levels one group may have (level 0 included).
pub const MAX_LOD_LEVELS: usize = 16;

/// Most groups the manifest may list for one model.
pub const MAX_LOD_SPECS: usize = 256;

/// Per node: `(group, level)` when the node is a level of a group.
pub fn level_of(model: &Model) -> Vec<Option<(usize, usize)>> {
    let mut out = vec![None; model.nodes.len()];
    for (g, group) in model.lods.iter().enumerate() {
        for (level, &n) in group.levels.iter().enumerate() {
            if let Some(slot) = out.get_mut(n) {
                *slot = Some((g, level));
            }
        }
    }
    out
}

/// Splits `name` into `(prefix, n)` when it ends in `_LOD<n>`
/// (case-insensitive; separator `_`, `-`, `.` or space), with a non-empty
/// prefix and at most 4 digits. Also names LOD files (`hero_LOD1`).
pub fn split_suffix(name: &str) -> Option<(&str, u32)> {
    suffix(name)
}

fn suffix(name: &str) -> Option<(&str, u32)> {
    let at = name.rfind(['_', '-', '.', ' '])?;
    let (prefix, tail) = (&name[..at], &name[at + 1..]);
    let digits = tail.get(3..)?;
    if prefix.is_empty()
        || !tail.get(..3)?.eq_ignore_ascii_case("lod")
        || digits.is_empty()
        || digits.len() > 4
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((prefix, digits.parse().ok()?))
}

fn skinned_mesh(model: &Model, n: usize) -> bool {
    let node = &model.nodes[n];
    node.mesh.is_some() && node.skin.is_some()
}

/// Groups of sibling skinned mesh nodes named `<name>_LOD<n>` (see the
/// module documentation), leaving out nodes `taken` by other groups. A
/// name with a single level (no level 0, or no level above it) is no
/// group. Two nodes of one group with the same level number are an error.
pub fn by_name_suffix(model: &Model, taken: &[bool]) -> Result<Vec<LodGroup>> {
    // (parent, prefix) -> level number -> nodes.
    type Levels = BTreeMap<u32, Vec<usize>>;
    let mut found: BTreeMap<(Option<usize>, &str), Levels> = BTreeMap::new();
    let free = |n: usize| skinned_mesh(model, n) && !taken.get(n).copied().unwrap_or(false);
    for (n, node) in model.nodes.iter().enumerate() {
        if !free(n) {
            continue;
        }
        if let Some((prefix, level)) = suffix(&node.name) {
            found
                .entry((node.parent, prefix))
                .or_default()
                .entry(level)
                .or_default()
                .push(n);
        }
    }
    // Free nodes by (parent, name), in one pass: `<name>` itself is level 0
    // of `<name>_LOD<n>` when it is a free sibling (looked up per group,
    // never by scanning every node again).
    let mut plain: HashMap<(Option<usize>, &str), Vec<usize>> = HashMap::new();
    if !found.is_empty() {
        for (n, node) in model.nodes.iter().enumerate() {
            crate::work::add(crate::work::Counter::LodNodeVisits, 1);
            if free(n) {
                plain
                    .entry((node.parent, node.name.as_str()))
                    .or_default()
                    .push(n);
            }
        }
    }
    let mut groups = Vec::new();
    for ((parent, prefix), mut levels) in found {
        if let std::collections::btree_map::Entry::Vacant(slot) = levels.entry(0)
            && let Some(nodes) = plain.remove(&(parent, prefix))
        {
            slot.insert(nodes);
        }
        if !levels.contains_key(&0) || levels.len() < 2 {
            continue;
        }
        let mut nodes = Vec::with_capacity(levels.len());
        for (level, at) in levels {
            if let [a, b, ..] = at[..] {
                return Err(Error::invalid(
                    format!("nodes[{b}]"),
                    format!(
                        "nodes[{a}] and nodes[{b}] are both level {level} of the LOD group `{prefix}` (named `{}` and `{}`)",
                        model.nodes[a].name, model.nodes[b].name
                    ),
                )
                .with_hint("rename one, or list the group in the manifest ([[model.lod]])"));
            }
            nodes.push(at[0]);
        }
        groups.push(LodGroup {
            source: LodSource::NameSuffix,
            levels: nodes,
            coverage: Vec::new(),
        });
    }
    Ok(groups)
}

/// Whether skins `a` and `b` are the same bone space: the same skin, or
/// the same joints with bit-identical inverse binds.
fn same_skin(model: &Model, a: usize, b: usize) -> bool {
    a == b || {
        let (a, b) = (&model.skins[a], &model.skins[b]);
        a.joints == b.joints && a.inverse_binds == b.inverse_binds
    }
}

fn group_name(model: &Model, group: &LodGroup) -> String {
    group
        .levels
        .first()
        .map_or_else(String::new, |&n| model.nodes[n].name.clone())
}

fn source_words(source: LodSource) -> &'static str {
    match source {
        LodSource::MsftLod => "MSFT_lod",
        LodSource::NameSuffix => "its _LOD<n> name",
        LodSource::Manifest => "the manifest",
    }
}

/// Checks `groups` against `model`: 2 to [`MAX_LOD_LEVELS`] levels, every
/// level a skinned mesh node bound to level 0's skin (or an identical
/// one), no node twice. Errors name the group, the node and the reason.
pub fn check(model: &Model, groups: &[LodGroup]) -> Result<()> {
    let mut seen: Vec<Option<usize>> = vec![None; model.nodes.len()];
    for (g, group) in groups.iter().enumerate() {
        let name = group_name(model, group);
        let object = format!("LOD group `{name}`");
        let from = source_words(group.source);
        if group.levels.len() < 2 || group.levels.len() > MAX_LOD_LEVELS {
            return Err(Error::invalid(
                object,
                format!(
                    "{} levels (from {from}); a LOD group has 2 to {MAX_LOD_LEVELS} levels, level 0 included",
                    group.levels.len()
                ),
            ));
        }
        let base = group.levels[0];
        for (level, &n) in group.levels.iter().enumerate() {
            let Some(node) = model.nodes.get(n) else {
                return Err(Error::invalid(
                    object,
                    format!("level {level} is nodes[{n}], which does not exist"),
                ));
            };
            if let Some(other) = seen[n] {
                let what = if other == g {
                    "twice in this group".to_owned()
                } else {
                    format!(
                        "also in the LOD group `{}`",
                        group_name(model, &groups[other])
                    )
                };
                return Err(Error::invalid(
                    object,
                    format!("node `{}` (nodes[{n}]) is {what}", node.name),
                ));
            }
            seen[n] = Some(g);
            let (Some(_), Some(skin)) = (node.mesh, node.skin) else {
                return Err(Error::invalid(
                    object,
                    format!(
                        "level {level}, node `{}` (nodes[{n}], from {from}), is not a skinned mesh node (it has {}); LODs are levels of a skinned mesh",
                        node.name,
                        if node.mesh.is_none() {
                            "no mesh"
                        } else {
                            "no skin"
                        }
                    ),
                ));
            };
            let base_skin = model.nodes[base].skin.unwrap_or(skin);
            if !same_skin(model, base_skin, skin) {
                return Err(Error::invalid(
                    object,
                    format!(
                        "level {level}, node `{}` (nodes[{n}], from {from}), is bound to skin `{}` but level 0 (`{name}`) to skin `{}`; the levels of a LOD share one skin (one bone texture)",
                        node.name, model.skins[skin].name, model.skins[base_skin].name
                    ),
                )
                .with_hint("bind every level to level 0's skin, or leave the node out of the group"));
            }
        }
    }
    Ok(())
}

/// Resolves the manifest's groups to nodes: each name must name exactly
/// one skinned mesh node (an unknown name is an error suggesting close
/// node names). The result replaces, in `model.lods`, every detected group
/// that shares a node with a manifest group; then all groups are checked.
pub fn apply_specs(model: &mut Model, specs: &[LodSpec]) -> Result<()> {
    if specs.is_empty() {
        return Ok(());
    }
    if specs.len() > MAX_LOD_SPECS {
        return Err(Error::invalid(
            "lod",
            format!(
                "{} LOD groups, more than the limit of {MAX_LOD_SPECS}",
                specs.len()
            ),
        ));
    }
    let mut groups = Vec::with_capacity(specs.len());
    let node_names = crate::node_lookup::NodeNames::new(&model.nodes);
    for spec in specs {
        if spec.levels.is_empty() || spec.levels.len() >= MAX_LOD_LEVELS {
            return Err(Error::invalid(
                format!("lod `{}`", spec.base),
                format!(
                    "{} lower levels; a LOD group lists 1 to {} levels besides its base",
                    spec.levels.len(),
                    MAX_LOD_LEVELS - 1
                ),
            ));
        }
        let levels = std::iter::once(&spec.base)
            .chain(&spec.levels)
            .map(|name| {
                node_names.resolve(name, "a LOD level").map_err(|mut e| {
                    e.object = format!("lod `{}`", spec.base);
                    e
                })
            })
            .collect::<Result<Vec<_>>>()?;
        groups.push(LodGroup {
            source: LodSource::Manifest,
            levels,
            coverage: Vec::new(),
        });
    }
    let mut in_manifest = vec![false; model.nodes.len()];
    for &n in groups.iter().flat_map(|g| &g.levels) {
        in_manifest[n] = true;
    }
    let detected = std::mem::take(&mut model.lods);
    let kept = detected
        .into_iter()
        .filter(|g| !g.levels.iter().any(|&n| in_manifest[n]));
    groups.extend(kept);
    check(model, &groups)?;
    model.lods = groups;
    Ok(())
}

/// Drops from every group the levels whose node lost its mesh (left out
/// with `--exclude`), and the groups left with fewer than two levels.
pub fn drop_meshless(model: &mut Model) {
    let nodes = &model.nodes;
    for group in &mut model.lods {
        let keep: Vec<bool> = group
            .levels
            .iter()
            .map(|&n| nodes[n].mesh.is_some())
            .collect();
        if keep.iter().all(|&k| k) {
            continue;
        }
        let mut k = keep.iter();
        group.levels.retain(|_| *k.next().unwrap_or(&false));
        group.coverage.clear();
    }
    model.lods.retain(|g| g.levels.len() >= 2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_recognised_case_insensitively() {
        assert_eq!(suffix("Body_LOD1"), Some(("Body", 1)));
        assert_eq!(suffix("body_lod0"), Some(("body", 0)));
        assert_eq!(suffix("Hero-Lod12"), Some(("Hero", 12)));
        assert_eq!(suffix("a_b_LOD2"), Some(("a_b", 2)));
        assert_eq!(suffix("_LOD1"), None);
        assert_eq!(suffix("Body_LOD"), None);
        assert_eq!(suffix("Body_LODx"), None);
        assert_eq!(suffix("Body_LOD12345"), None);
        assert_eq!(suffix("BodyLOD1"), None);
        assert_eq!(suffix("Body_LOD1a"), None);
    }
}
