//! `MSFT_lod` on nodes: the lower levels a skinned mesh node lists, read
//! from the JSON, checked, and placed in the hierarchy.
//!
//! A level node that has no parent takes its base's place: it becomes a
//! child of the base's parent (a root when the base is a root), keeping its
//! own local transform, and is in the scene whenever its base is. A level
//! node with a parent stays where it is. `MSFT_lod` on a node that is not a
//! skinned mesh node is ignored (rigid LODs are not baked as LODs).
//! `MSFT_screencoverage` in the base's extras is kept when it is a list of
//! numbers, one per level.

use serde::Deserialize;

use crate::error::{Error, ErrorKind, Result};
use crate::lod::{LodSource, MAX_LOD_LEVELS};
use crate::model::{LodGroup, Node};

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    nodes: Vec<RawNode>,
}

#[derive(Deserialize)]
struct RawNode {
    #[serde(default)]
    extensions: Option<RawExtensions>,
    #[serde(default)]
    extras: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawExtensions {
    #[serde(rename = "MSFT_lod")]
    msft_lod: Option<RawLod>,
}

#[derive(Deserialize)]
struct RawLod {
    ids: Vec<u64>,
}

/// The `MSFT_lod` groups of the document (node indices of the file), each
/// id checked: in range, not the base, not listed twice, not a level of two
/// groups, not itself a base (chains and cycles are refused).
pub(super) fn read(json: &[u8], node_count: usize) -> Result<Vec<LodGroup>> {
    if !String::from_utf8_lossy(json).contains("MSFT_lod") {
        return Ok(Vec::new());
    }
    let mut de = serde_json::Deserializer::from_slice(json);
    let raw: Raw = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        Error::new(
            ErrorKind::Invalid,
            e.path().to_string(),
            format!(
                "the MSFT_lod extension does not match its schema: {}",
                e.inner()
            ),
        )
    })?;
    let mut groups = Vec::new();
    let mut level_of = vec![None; node_count];
    for (base, node) in raw.nodes.iter().enumerate().take(node_count) {
        let Some(lod) = node.extensions.as_ref().and_then(|e| e.msft_lod.as_ref()) else {
            continue;
        };
        let path = format!("nodes[{base}].extensions.MSFT_lod.ids");
        if lod.ids.is_empty() || lod.ids.len() >= MAX_LOD_LEVELS {
            return Err(Error::invalid(
                path,
                format!(
                    "{} ids; MSFT_lod lists 1 to {} lower levels",
                    lod.ids.len(),
                    MAX_LOD_LEVELS - 1
                ),
            ));
        }
        let mut levels = vec![base];
        for (k, &id) in lod.ids.iter().enumerate() {
            let at = format!("{path}[{k}]");
            let id = usize::try_from(id)
                .ok()
                .filter(|&i| i < node_count)
                .ok_or_else(|| {
                    Error::invalid(
                        &at,
                        format!("nodes[{id}] does not exist (the file has {node_count} nodes)"),
                    )
                })?;
            if levels.contains(&id) {
                return Err(Error::invalid(
                    &at,
                    format!(
                        "nodes[{id}] is {} already",
                        if id == base {
                            "the base node itself".to_owned()
                        } else {
                            format!("a level of nodes[{base}]")
                        }
                    ),
                ));
            }
            if let Some(other) = level_of[id] {
                return Err(Error::invalid(
                    &at,
                    format!(
                        "nodes[{id}] is a level of nodes[{other}] already; a node is a level of one base"
                    ),
                ));
            }
            level_of[id] = Some(base);
            levels.push(id);
        }
        let coverage = node
            .extras
            .as_ref()
            .and_then(|x| x.get("MSFT_screencoverage"))
            .and_then(serde_json::Value::as_array)
            .filter(|a| a.len() == levels.len())
            .and_then(|a| {
                a.iter()
                    .map(|v| v.as_f64().filter(|c| c.is_finite()))
                    .collect::<Option<Vec<f64>>>()
            })
            .unwrap_or_default();
        groups.push(LodGroup {
            source: LodSource::MsftLod,
            levels,
            coverage,
        });
    }
    // A level that is itself a base makes a chain (or a cycle): one flag
    // per node, not a scan of every group per level.
    let mut is_base = vec![false; node_count];
    for g in &groups {
        is_base[g.levels[0]] = true;
    }
    for group in &groups {
        for &id in &group.levels[1..] {
            crate::work::add(crate::work::Counter::LodNodeVisits, 1);
            if is_base[id] {
                return Err(Error::invalid(
                    format!("nodes[{id}].extensions.MSFT_lod"),
                    format!(
                        "nodes[{id}] is a level of nodes[{}] and lists MSFT_lod levels of its own; LOD chains and cycles are refused",
                        group.levels[0]
                    ),
                ));
            }
        }
    }
    Ok(groups)
}

/// Keeps the groups whose base is a skinned mesh node and places their
/// parentless levels beside the base (see the module documentation).
/// `order` (parents first) is rebuilt when a node moved.
pub(super) fn place(
    nodes: &mut [Node],
    order: &mut Vec<usize>,
    groups: Vec<LodGroup>,
) -> Result<Vec<LodGroup>> {
    let groups: Vec<LodGroup> = groups
        .into_iter()
        .filter(|g| {
            let base = &nodes[g.levels[0]];
            base.mesh.is_some() && base.skin.is_some()
        })
        .collect();
    let mut moved = false;
    // Each node's root, found once parents first and kept as a union-find
    // forest as levels move: a parentless level is an ancestor of its base
    // exactly when it is the base's root (no walk up from every base,
    // which a deep hierarchy makes quadratic).
    let mut root_of: Vec<usize> = (0..nodes.len()).collect();
    let find = |root_of: &mut Vec<usize>, mut n: usize| {
        while root_of[n] != n {
            root_of[n] = root_of[root_of[n]];
            n = root_of[n];
        }
        n
    };
    if groups
        .iter()
        .any(|g| g.levels[1..].iter().any(|&id| nodes[id].parent.is_none()))
    {
        for &n in order.iter() {
            crate::work::add(crate::work::Counter::LodNodeVisits, 1);
            if let Some(p) = nodes[n].parent {
                root_of[n] = root_of[p];
            }
        }
    }
    for group in &groups {
        let base = group.levels[0];
        for &id in &group.levels[1..] {
            if nodes[id].parent.is_some() {
                continue;
            }
            // The level would go below itself if it is an ancestor of its base.
            if find(&mut root_of, base) == id {
                return Err(Error::invalid(
                    format!("nodes[{base}].extensions.MSFT_lod"),
                    format!(
                        "level nodes[{id}] is an ancestor of its base nodes[{base}]; a LOD level takes its base's place, so it cannot hold it"
                    ),
                ));
            }
            if let Some(p) = nodes[base].parent {
                root_of[id] = find(&mut root_of, p);
                nodes[id].parent = Some(p);
                nodes[p].children.push(id);
                moved = true;
            }
        }
    }
    if moved {
        *order = parents_first(nodes);
    }
    Ok(groups)
}

/// Node indices, parents before children, roots in index order.
fn parents_first(nodes: &[Node]) -> Vec<usize> {
    let mut order = Vec::with_capacity(nodes.len());
    let mut stack: Vec<usize> = (0..nodes.len())
        .rev()
        .filter(|&i| nodes[i].parent.is_none())
        .collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(nodes[i].children.iter().rev());
    }
    order
}
