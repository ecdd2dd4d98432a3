//! What a source model holds, before anything is baked: `rigbake inspect
//! MODEL.glb|.gltf`. Lists the scenes, skins, meshes and primitives (how
//! each one deforms, its morph targets and UV sets), the clips with their
//! duration, frame count at the chosen frame rate and whether they loop,
//! the socket-like nodes a manifest may name as anchors or prop parents,
//! and the extensions the file uses and requires. Serialised as the
//! `inspect --json` document of a source (`formats/inspect-source.schema.json`).
//!
//! The model is imported exactly as a bake imports it (same limits, same
//! scene selection), so what this lists is what a bake would see.

use std::fmt::Write as _;
use std::path::Path;

use rigbake_core::import::{self, ImportOptions};
use rigbake_core::model::Model;
use rigbake_core::timeline::root_motion::{RootMotionMode, RootMotionRequest};
use rigbake_core::timeline::{Sampling, Timeline};
use schemars::JsonSchema;
use serde::Serialize;

use crate::inspect::shown;

/// Version of the source `inspect --json` document layout.
pub const SOURCE_SCHEMA_VERSION: u32 = 1;

/// Words that mark a node as a socket (case-insensitive substring match).
pub const SOCKET_WORDS: &[&str] = &[
    "socket", "slot", "attach", "mount", "grip", "anchor", "weapon", "prop",
];

/// The document `rigbake inspect MODEL --json` prints: a source model
/// (`.glb` or `.gltf`) as a bake would import it, with the same limits and
/// scene selection (`formats/inspect.md`). Fields may be added in later
/// schema versions; `schema_version` changes when a field changes meaning
/// or disappears.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SourceReport {
    /// The document layout's version: it changes when a field changes
    /// meaning or disappears.
    #[schemars(extend("const" = SOURCE_SCHEMA_VERSION))]
    pub schema_version: u32,
    /// Tells this document from a container's (which has `container`
    /// instead).
    pub kind: DocumentKind,
    /// The model file as given.
    pub file: String,
    /// Every scene of the file, in file order.
    pub scenes: Vec<SceneInfo>,
    /// Index of the scene a bake would use (`null`: the file has no scenes
    /// and every node is used).
    pub baked_scene: Option<usize>,
    /// Skins (joint sets) of the baked scene.
    pub skins: Vec<SkinInfo>,
    /// Mesh instances of the baked scene, in node order.
    pub meshes: Vec<MeshInfo>,
    /// Every animation of the baked scene, at `fps` (a model without
    /// animations has one clip, `rest`).
    pub clips: Vec<ClipInfo>,
    /// The frame rate the frame counts use.
    #[schemars(extend("exclusiveMinimum" = 0), range(max = 1000))]
    pub fps: f64,
    /// Nodes that look like attachment points.
    pub sockets: Vec<SocketInfo>,
    /// LOD groups the model declares (`MSFT_lod`, `_LOD<n>` names); a bake
    /// shares one bone texture per group and writes one weights mesh per
    /// level (`docs/lods.md`).
    pub lods: Vec<LodInfo>,
    /// `extensionsUsed`.
    pub extensions_used: Vec<String>,
    /// `extensionsRequired`.
    pub extensions_required: Vec<String>,
}

/// What an `inspect --json` document describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    /// A source model.
    Source,
}

/// Why a node is listed as a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SocketReason {
    /// Its name contains a socket word: socket, slot, attach, mount, grip,
    /// anchor, weapon or prop, in any case (`SOCKET_WORDS`).
    Name,
    /// An empty node (no mesh, not a joint) whose parent is a joint.
    UnderJoint,
}

/// One LOD group of the model.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodInfo {
    /// How it is declared: `msft_lod` or `name_suffix`.
    #[schemars(extend("enum" = ["msft_lod", "name_suffix"]))]
    pub source: rigbake_core::lod::LodSource,
    /// The levels, level 0 first.
    #[schemars(length(min = 2))]
    pub levels: Vec<LodLevelInfo>,
}

/// One level of a LOD group.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct LodLevelInfo {
    /// Node name.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// Vertices of every primitive of the mesh.
    pub vertices: usize,
}

/// The LOD groups of `model`.
fn lods(model: &Model) -> Vec<LodInfo> {
    model
        .lods
        .iter()
        .map(|g| LodInfo {
            source: g.source,
            levels: g
                .levels
                .iter()
                .map(|&n| {
                    let mesh = model.nodes[n].mesh.map(|m| &model.meshes[m]);
                    LodLevelInfo {
                        node: model.nodes[n].name.clone(),
                        mesh: mesh.map(|m| m.name.clone()).unwrap_or_default(),
                        vertices: mesh
                            .map_or(0, |m| m.primitives.iter().map(|p| p.vertex_count()).sum()),
                    }
                })
                .collect(),
        })
        .collect()
}

/// One scene of the file.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SceneInfo {
    /// Index in the file.
    pub index: usize,
    /// Name (`scene<i>` when unnamed).
    pub name: String,
    /// Number of root nodes.
    pub roots: usize,
    /// Whether it is the file's default scene (`scene`).
    pub default: bool,
}

/// One skin.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SkinInfo {
    /// Skin name.
    pub name: String,
    /// Joint node names, in skin order.
    pub joints: Vec<String>,
}

/// One mesh instance (a node with a mesh).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct MeshInfo {
    /// Node name.
    pub node: String,
    /// Mesh name.
    pub mesh: String,
    /// Its primitives.
    pub primitives: Vec<PrimitiveInfo>,
}

/// How a primitive moves.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schemars(deny_unknown_fields)]
pub enum Deforms {
    /// Skinned by a skin.
    Skinned {
        /// The skin's name.
        skin: String,
    },
    /// Rigid, under a joint (a prop: a sword in a hand).
    RigidOnJoint {
        /// The nearest joint above the node.
        joint: String,
    },
    /// Rigid, not under any joint.
    Rigid,
}

/// One primitive.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PrimitiveInfo {
    /// Index within the mesh.
    pub index: usize,
    /// Vertices.
    pub vertices: usize,
    /// How it moves.
    pub deforms: Deforms,
    /// Morph targets.
    pub morph_targets: usize,
    /// TEXCOORD sets.
    pub uv_sets: usize,
    /// Material name, if any.
    pub material: Option<String>,
}

/// One clip.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClipInfo {
    /// Clip name.
    pub name: String,
    /// Duration in seconds.
    #[schemars(range(min = 0))]
    pub duration: f64,
    /// `floor(duration * fps + 1e-4) + 1`: the rows a bake at `fps` gives
    /// the clip.
    #[schemars(range(min = 1))]
    pub frames: usize,
    /// Whether its first and last poses match (loop detection, as a bake
    /// records it).
    pub looping: bool,
    /// How the skeleton's root travels over the clip (what `--root-motion
    /// extract-yaw` would take out); `null` for a model without a skin.
    pub root_motion: Option<ClipTravel>,
}

/// The skeleton root's travel over one clip.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClipTravel {
    /// The motion root's node name.
    pub node: String,
    /// Horizontal travel `[x, 0, z]` from the first frame to the clip's
    /// end, in scene space.
    pub displacement: [f64; 3],
    /// Its length.
    #[schemars(range(min = 0))]
    pub distance: f64,
    /// Turn about +Y over the clip, radians.
    pub rotation: f64,
    /// Whether the clip loops once baked in place.
    pub loops_in_place: bool,
}

/// A node that looks like an attachment point.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SocketInfo {
    /// Node name.
    pub node: String,
    /// The nearest joint at or above it, if any.
    pub joint: Option<String>,
    /// Why it was listed.
    pub reason: SocketReason,
}

/// Why a source could not be described.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DescribeError(pub String);

/// Reads and describes the model at `path`, importing it with `options`
/// (limits and scene) and counting frames at `sampling`.
pub fn describe_source(
    path: &Path,
    options: &ImportOptions,
    sampling: Sampling,
) -> Result<SourceReport, DescribeError> {
    let fail = |e: rigbake_core::Error| DescribeError(e.to_string());
    let bytes = import::read_file(path, &options.limits).map_err(fail)?;
    let facts = import::document_facts(&bytes).map_err(|e| fail(e.with_file(path)))?;
    let model = import::import_bytes(path, &bytes, options).map_err(fail)?;
    let timeline = Timeline::all_clips(&model, sampling).map_err(|e| fail(e.with_file(path)))?;
    let travel = travel(&model, sampling);
    let baked_scene = options
        .scene
        .or(facts.default_scene)
        .or_else(|| (!facts.scenes.is_empty()).then_some(0));
    Ok(SourceReport {
        schema_version: SOURCE_SCHEMA_VERSION,
        kind: DocumentKind::Source,
        file: path.display().to_string(),
        scenes: facts
            .scenes
            .iter()
            .enumerate()
            .map(|(index, s)| SceneInfo {
                index,
                name: s.name.clone(),
                roots: s.roots.len(),
                default: facts.default_scene == Some(index),
            })
            .collect(),
        baked_scene,
        skins: model
            .skins
            .iter()
            .map(|s| SkinInfo {
                name: s.name.clone(),
                joints: s
                    .joints
                    .iter()
                    .map(|&j| model.nodes[j].name.clone())
                    .collect(),
            })
            .collect(),
        meshes: meshes(&model),
        clips: timeline
            .clips
            .iter()
            .enumerate()
            .map(|(i, c)| ClipInfo {
                name: c.name.clone(),
                duration: c.duration,
                frames: c.frames,
                looping: c.looping,
                root_motion: travel.as_ref().and_then(|t| t.get(i)).map(|t| ClipTravel {
                    node: t.node.clone(),
                    ..*t
                }),
            })
            .collect(),
        fps: sampling.fps,
        sockets: sockets(&model),
        lods: lods(&model),
        extensions_used: facts.extensions_used,
        extensions_required: facts.extensions_required,
    })
}

/// Per clip, the skeleton root's travel, measured by baking every clip in
/// place with yaw (`None` when the model has no skin to find a root in).
fn travel(model: &Model, sampling: Sampling) -> Option<Vec<ClipTravel>> {
    let request = RootMotionRequest {
        mode: RootMotionMode::ExtractYaw,
        node: None,
    };
    let timeline = Timeline::all_clips_with(model, sampling, &request).ok()?;
    let record = crate::records::root_motion(model, &timeline)?;
    Some(
        record
            .clips
            .iter()
            .zip(&timeline.clips)
            .map(|(r, c)| ClipTravel {
                node: record.node.clone(),
                displacement: r.displacement,
                distance: r.displacement[0].hypot(r.displacement[2]),
                rotation: r.rotation,
                loops_in_place: c.looping,
            })
            .collect(),
    )
}

/// For each node, whether it is a joint of some skin.
fn joint_flags(model: &Model) -> Vec<bool> {
    let mut joint = vec![false; model.nodes.len()];
    for &j in model.skins.iter().flat_map(|s| &s.joints) {
        joint[j] = true;
    }
    joint
}

/// The nearest joint at or above `node` (`at_or_above`) or strictly above.
fn joint_above(model: &Model, joint: &[bool], node: usize, at_or_above: bool) -> Option<usize> {
    let mut cursor = if at_or_above {
        Some(node)
    } else {
        model.nodes[node].parent
    };
    // Parent links form a tree (the importer refuses cycles): this ends.
    while let Some(n) = cursor {
        if joint[n] {
            return Some(n);
        }
        cursor = model.nodes[n].parent;
    }
    None
}

fn meshes(model: &Model) -> Vec<MeshInfo> {
    let joint = joint_flags(model);
    model
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(n, node)| {
            let mesh = &model.meshes[node.mesh?];
            let deforms = |skinned: bool| match node.skin {
                Some(s) if skinned => Deforms::Skinned {
                    skin: model.skins[s].name.clone(),
                },
                _ => match joint_above(model, &joint, n, false) {
                    Some(j) => Deforms::RigidOnJoint {
                        joint: model.nodes[j].name.clone(),
                    },
                    None => Deforms::Rigid,
                },
            };
            Some(MeshInfo {
                node: node.name.clone(),
                mesh: mesh.name.clone(),
                primitives: mesh
                    .primitives
                    .iter()
                    .enumerate()
                    .map(|(index, p)| PrimitiveInfo {
                        index,
                        vertices: p.positions.len(),
                        deforms: deforms(p.influences.is_some()),
                        morph_targets: p.morph_targets.len(),
                        uv_sets: p.tex_coords.len(),
                        material: p.material.and_then(|m| model.materials.get(m).cloned()),
                    })
                    .collect(),
            })
        })
        .collect()
}

fn sockets(model: &Model) -> Vec<SocketInfo> {
    let joint = joint_flags(model);
    model
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(n, node)| {
            let lower = node.name.to_lowercase();
            let reason = if SOCKET_WORDS.iter().any(|w| lower.contains(w)) {
                SocketReason::Name
            } else if node.mesh.is_none() && !joint[n] && node.parent.is_some_and(|p| joint[p]) {
                SocketReason::UnderJoint
            } else {
                return None;
            };
            Some(SocketInfo {
                node: node.name.clone(),
                joint: joint_above(model, &joint, n, true).map(|j| model.nodes[j].name.clone()),
                reason,
            })
        })
        .collect()
}

/// The readable summary of a source report.
pub fn render_source(r: &SourceReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", shown(&r.file));
    let _ = writeln!(s, "  scenes:");
    if r.scenes.is_empty() {
        let _ = writeln!(s, "    none (every node is baked)");
    }
    for sc in &r.scenes {
        let mut marks = Vec::new();
        if sc.default {
            marks.push("default");
        }
        if r.baked_scene == Some(sc.index) {
            marks.push("baked");
        }
        let marks = if marks.is_empty() {
            String::new()
        } else {
            format!(" ({})", marks.join(", "))
        };
        let _ = writeln!(
            s,
            "    {} {}: {}{marks}",
            sc.index,
            shown(&sc.name),
            plural(sc.roots, "root node")
        );
    }
    let _ = writeln!(s, "  skins:");
    for sk in &r.skins {
        let _ = writeln!(
            s,
            "    {}: {}",
            shown(&sk.name),
            plural(sk.joints.len(), "joint")
        );
    }
    let _ = writeln!(s, "  meshes:");
    for m in &r.meshes {
        let _ = writeln!(s, "    {} (mesh {})", shown(&m.node), shown(&m.mesh));
        for p in &m.primitives {
            let deforms = match &p.deforms {
                Deforms::Skinned { skin } => format!("skinned by {}", shown(skin)),
                Deforms::RigidOnJoint { joint } => format!("rigid under joint {}", shown(joint)),
                Deforms::Rigid => "rigid".to_owned(),
            };
            let mut extra = String::new();
            if p.morph_targets > 0 {
                extra.push_str(&format!(", {}", plural(p.morph_targets, "morph target")));
            }
            let _ = writeln!(
                s,
                "      primitive {}: {}, {}, {}{extra}",
                p.index,
                plural(p.vertices, "vertex"),
                deforms,
                plural(p.uv_sets, "UV set")
            );
        }
    }
    let _ = writeln!(s, "  clips at {} fps:", r.fps);
    for c in &r.clips {
        // Travel below a thousandth of a unit is rounding, not motion.
        let travel = c
            .root_motion
            .as_ref()
            .filter(|t| t.distance >= 1e-3 || t.rotation.abs() >= 1e-3)
            .map(|t| {
                let mut text = format!("; root travels {:.3}", t.distance);
                if t.rotation.abs() >= 1e-3 {
                    text += &format!(", turns {:.1} degrees", t.rotation.to_degrees());
                }
                if t.loops_in_place && !c.looping {
                    text += ", loops in place";
                }
                text
            })
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "    {}: {:.3} s, {}{}{travel}",
            shown(&c.name),
            c.duration,
            plural(c.frames, "frame"),
            if c.looping { ", loops" } else { "" }
        );
    }
    let _ = writeln!(s, "  sockets:");
    if r.sockets.is_empty() {
        let _ = writeln!(s, "    none found");
    }
    for k in &r.sockets {
        let joint = k
            .joint
            .as_deref()
            .map(|j| format!(" (joint {})", shown(j)))
            .unwrap_or_default();
        let _ = writeln!(s, "    {}{joint}", shown(&k.node));
    }
    if !r.lods.is_empty() {
        let _ = writeln!(s, "  LODs:");
    }
    for g in &r.lods {
        let levels: Vec<String> = g
            .levels
            .iter()
            .enumerate()
            .map(|(k, l)| {
                format!(
                    "LOD{k} {} ({})",
                    shown(&l.node),
                    plural(l.vertices, "vertex")
                )
            })
            .collect();
        let source = match g.source {
            rigbake_core::lod::LodSource::MsftLod => "MSFT_lod",
            rigbake_core::lod::LodSource::NameSuffix => "_LOD<n> names",
            rigbake_core::lod::LodSource::Manifest => "manifest",
        };
        let _ = writeln!(s, "    {} (from {source})", levels.join(", "));
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.iter().map(|e| shown(e)).collect::<Vec<_>>().join(", ")
        }
    };
    let _ = writeln!(s, "  extensions used: {}", list(&r.extensions_used));
    let _ = writeln!(s, "  extensions required: {}", list(&r.extensions_required));
    s
}

/// `1 frame`, `2 frames`, `1 vertex`, `2 vertices`.
fn plural(n: usize, noun: &str) -> String {
    match (n, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "vertex") => format!("{n} vertices"),
        _ => format!("{n} {noun}s"),
    }
}
