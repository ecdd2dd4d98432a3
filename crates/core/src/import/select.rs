//! Scene selection: the imported model holds one glTF scene.
//!
//! The scene is [`ImportOptions::scene`](super::ImportOptions::scene) when
//! given, else the file's `scene`, else scene 0; a file without scenes keeps
//! every node. The model keeps, in glTF order:
//!
//! - every node of the scene (the scene's root nodes and their descendants);
//! - the joints (and `skeleton`) of every skin used by a mesh instance of the
//!   scene, with their ancestors, even when they lie outside the scene
//!   (exporters such as gltf-transform leave skeletons out of the scene).
//!   Such nodes are posed but never baked: their mesh, skin and morph
//!   weights are dropped.
//!
//! Skins whose joints are not all kept are dropped (no mesh of the scene uses
//! them). Animation channels that target dropped nodes are dropped, and so
//! are morph-weight channels of nodes whose mesh was dropped; a clip left
//! without channels is dropped, and a clip's duration counts only the
//! channels kept. Meshes and materials are kept whole, so their indices stay
//! those of the file. When the scene holds every node, the model is the file's
//! own, unchanged.

use gltf::json::Root;

use crate::error::{Error, Result};
use crate::model::{Clip, Model, Property};

/// Refuses a requested scene the file does not have (before any decoding).
pub(super) fn check_index(root: &Root, scene: Option<usize>) -> Result<()> {
    match scene {
        Some(s) if s >= root.scenes.len() => Err(Error::invalid(
            "scenes",
            format!(
                "scene {s} was asked for, but the file has {} scene{}",
                root.scenes.len(),
                if root.scenes.len() == 1 { "" } else { "s" }
            ),
        )
        .with_hint("scenes are numbered from 0; `rigbake inspect` lists them")),
        _ => Ok(()),
    }
}

/// The root nodes of the chosen scene, or `None` to keep every node.
fn scene_roots(doc: &gltf::Document, scene: Option<usize>) -> Option<(usize, Vec<usize>)> {
    let root = doc.as_json();
    let index = scene
        .or_else(|| root.scene.map(|s| s.value()))
        .or_else(|| (!root.scenes.is_empty()).then_some(0))?;
    let nodes = root.scenes.get(index)?.nodes.iter().map(|n| n.value());
    Some((index, nodes.collect()))
}

/// Reduces `model` to the chosen scene (see the module documentation).
pub(super) fn scene(model: Model, doc: &gltf::Document, scene: Option<usize>) -> Result<Model> {
    let Some((index, roots)) = scene_roots(doc, scene) else {
        return Ok(model);
    };
    let count = model.nodes.len();
    let mut in_scene = vec![false; count];
    let mut stack = Vec::new();
    for (k, &r) in roots.iter().enumerate() {
        if let Some(p) = model.nodes[r].parent {
            return Err(Error::invalid(
                format!("scenes[{index}].nodes[{k}]"),
                format!(
                    "nodes[{r}] is listed as a root of the scene, but it is a child of nodes[{p}]"
                ),
            )
            .with_hint("a scene lists only root nodes (glTF 2.0, section 3.5.1)"));
        }
        stack.push(r);
    }
    // Parentless MSFT_lod levels of a scene root are roots of the scene too.
    for group in &model.lods {
        if roots.contains(&group.levels[0]) {
            stack.extend(
                group.levels[1..]
                    .iter()
                    .filter(|&&n| model.nodes[n].parent.is_none()),
            );
        }
    }
    while let Some(n) = stack.pop() {
        if !in_scene[n] {
            in_scene[n] = true;
            stack.extend(&model.nodes[n].children);
        }
    }
    for group in &model.lods {
        let base = group.levels[0];
        if let Some(&out) = group.levels[1..]
            .iter()
            .find(|&&n| in_scene[base] && !in_scene[n])
        {
            return Err(Error::invalid(
                format!("nodes[{base}].extensions.MSFT_lod"),
                format!(
                    "level nodes[{out}] is outside scene {index}, which holds its base nodes[{base}]"
                ),
            )
            .with_hint("a LOD level is either parentless (it takes its base's place) or in the base's scene"));
        }
    }
    if in_scene.iter().all(|&k| k) {
        return Ok(model);
    }

    // Joints of the skins the scene's mesh instances use, with ancestors.
    let mut keep = in_scene.clone();
    for (i, node) in model.nodes.iter().enumerate() {
        let (true, Some(_), Some(s)) = (in_scene[i], node.mesh, node.skin) else {
            continue;
        };
        let skin = &model.skins[s];
        for &j in skin.joints.iter().chain(&skin.skeleton) {
            let mut cursor = Some(j);
            while let Some(n) = cursor.filter(|&n| !keep[n]) {
                keep[n] = true;
                cursor = model.nodes[n].parent;
            }
        }
    }
    Ok(subset(model, &in_scene, &keep))
}

/// The model restricted to the nodes in `keep`; nodes kept but not in the
/// scene lose their mesh, skin and morph weights.
fn subset(model: Model, in_scene: &[bool], keep: &[bool]) -> Model {
    let mut new_index = vec![None; keep.len()];
    let mut next = 0;
    for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
        new_index[i] = Some(next);
        next += 1;
    }
    let remap = |i: usize| new_index[i];

    let mut skin_index = vec![None; model.skins.len()];
    let mut skins = Vec::new();
    for (s, mut skin) in model.skins.into_iter().enumerate() {
        let joints: Option<Vec<usize>> = skin.joints.iter().map(|&j| remap(j)).collect();
        let skeleton = skin.skeleton.map(remap);
        if let (Some(joints), None | Some(Some(_))) = (joints, skeleton) {
            skin.joints = joints;
            skin.skeleton = skeleton.flatten();
            skin_index[s] = Some(skins.len());
            skins.push(skin);
        }
    }

    let mut nodes = Vec::with_capacity(next);
    let mut baked = Vec::with_capacity(next);
    for (i, mut node) in model.nodes.into_iter().enumerate() {
        if !keep[i] {
            continue;
        }
        node.parent = node.parent.and_then(remap);
        node.children = node.children.iter().filter_map(|&c| remap(c)).collect();
        if in_scene[i] {
            node.skin = node.skin.and_then(|s| skin_index[s]);
        } else {
            node.mesh = None;
            node.skin = None;
            node.morph_weights = None;
        }
        baked.push(node.mesh.is_some());
        nodes.push(node);
    }

    let clips = model
        .clips
        .into_iter()
        .filter_map(|clip| {
            let channels: Vec<_> = clip
                .channels
                .into_iter()
                .filter_map(|mut ch| {
                    ch.node = remap(ch.node)?;
                    (ch.property != Property::MorphWeights || baked[ch.node]).then_some(ch)
                })
                .collect();
            let duration = channels
                .iter()
                .filter_map(|c| c.times.last())
                .fold(0.0f64, |d, t| d.max(f64::from(*t)));
            (!channels.is_empty()).then_some(Clip {
                name: clip.name,
                duration,
                channels,
            })
        })
        .collect();

    // Groups whose base left the scene go with it (their levels did too).
    let lods = model
        .lods
        .into_iter()
        .filter(|g| in_scene[g.levels[0]])
        .map(|mut g| {
            g.levels = g.levels.iter().filter_map(|&n| remap(n)).collect();
            g
        })
        .collect();
    let topological_order = model
        .topological_order
        .iter()
        .filter_map(|&i| remap(i))
        .collect();
    Model {
        name: model.name,
        nodes,
        skins,
        meshes: model.meshes,
        clips,
        materials: model.materials,
        looks: model.looks,
        topological_order,
        lods,
    }
}
