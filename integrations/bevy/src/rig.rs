//! What moves an instance beside its textures: anchor tracks with the
//! props that hang on them (a sword, a shield, a helmet baked with
//! `--props anchors`), and root motion (clips baked in place with
//! `--root-motion extract`). Both are played by `rigbake-core`'s runtime
//! reference from the instance's own animation state
//! ([`AnchorTrackView::sample_state`], [`root_motion::motion_during`]).
//!
//! Props are meshes of the source model: the loader asks Bevy's glTF loader
//! for the source (`source.file_name` of the bake, beside the container, or
//! [`RigbakeSettings::source`]), and each prop is drawn by its mesh's
//! primitives under an entity that follows its anchor.

use bevy::gltf::{Gltf, GltfMesh, GltfNode};
use bevy::prelude::*;
use rigbake_core::runtime::anchor_path::AnchorTrackView;
use rigbake_core::runtime::root_motion::{self, RootMotionTrack};
use rigbake_core::runtime::{AnimationState, ClipInfo};

use crate::animation::{RigbakeInstance, RigbakePath, RigbakeSpawned};
use crate::loader::RigbakeBake;

/// The anchor tracks of a bake and the props that follow them.
#[derive(Debug)]
pub struct AnchorTracks {
    /// Socket node names, in track order.
    pub names: Vec<String>,
    /// Per timeline row, per anchor, the model-space matrix column by
    /// column (the container's track section, formats/rig.md).
    pub data: Vec<f32>,
    /// The reference node's placement (the placement record): anchors are
    /// in its space, like the VAT.
    pub placement: Mat4,
    /// Props baked as anchors.
    pub props: Vec<PropAnchor>,
    /// The source model, when there are props to draw.
    pub source: Option<Handle<Gltf>>,
}

impl AnchorTracks {
    /// The tracks as the runtime reference reads them.
    pub fn view(&self) -> AnchorTrackView<'_> {
        AnchorTrackView {
            anchors: self.names.len(),
            data: &self.data,
        }
    }

    /// Where anchor `anchor` is, under the instance, in `state`: the
    /// reference placement times the sampled track. None when nothing
    /// plays.
    pub fn transform(&self, anchor: usize, state: &AnimationState) -> Option<Transform> {
        let m = self.view().sample_state(anchor, state)?;
        Some(Transform::from_matrix(self.placement * bevy_mat4(m)))
    }

    /// The anchor called `name`.
    pub fn anchor(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

/// A `rigbake-core` matrix (its own glam) as Bevy's.
pub(crate) fn bevy_mat4(m: rigbake_core::glam::DMat4) -> Mat4 {
    Mat4::from_cols_array(&m.to_cols_array().map(|v| v as f32))
}

/// A prop baked as an anchor: its track and its mesh in the source model.
#[derive(Debug, Clone)]
pub struct PropAnchor {
    /// Its anchor (track index).
    pub anchor: usize,
    /// The node that holds the mesh.
    pub node: String,
    /// The mesh's name.
    pub mesh: String,
}

/// One clip's root-motion track.
#[derive(Debug, Clone)]
pub struct ClipMotion {
    /// Per frame, `[x, y, z, yaw]`.
    pub track: Vec<[f64; 4]>,
    /// The motion of one whole play.
    pub end: [f64; 4],
}

/// Per clip (clip-table order), its root-motion track when it was baked in
/// place.
#[derive(Debug, Default)]
pub struct RootMotion {
    /// One entry per clip; None: the clip keeps its motion.
    pub clips: Vec<Option<ClipMotion>>,
}

impl RootMotion {
    /// The motion `[x, y, z, yaw]` an instance makes while its state goes
    /// from `before` to `after` in one update of `dt` seconds;
    /// `clips` is the bake's clip table (in row order).
    pub fn during(
        &self,
        clips: &[ClipInfo],
        before: &AnimationState,
        after: &AnimationState,
        dt: f64,
    ) -> [f64; 4] {
        let track = |info: &ClipInfo| {
            let i = clips
                .binary_search_by_key(&info.start_row, |c| c.start_row)
                .ok()?;
            let m = self.clips.get(i)?.as_ref()?;
            Some(RootMotionTrack {
                frames: &m.track,
                end: m.end,
            })
        };
        root_motion::motion_during(track, before, after, dt)
    }
}

/// How a bake is loaded (`AssetServer::load_with_settings`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RigbakeSettings {
    /// The source model whose meshes props are drawn with, as an asset
    /// path relative to the container's folder (a leading `/`: from the
    /// asset root); default: the bake's `source.file_name` beside the
    /// container.
    pub source: Option<String>,
}

/// Marks a prop entity under an instance.
#[derive(Component, Debug)]
pub struct RigbakeProp {
    /// The anchor it follows.
    pub anchor: usize,
}

/// Marks an instance whose props are spawned (or that has none).
#[derive(Component)]
pub struct RigbakePropsSpawned;

/// Spawns, under every instance whose bake and source model have loaded,
/// one entity per prop (following its anchor) holding the prop mesh's
/// primitives, unless the instance draws the VAT and the VAT holds the
/// prop (a rigid VAT primitive) already. A bake without props, or whose
/// source failed to load (a warning names it), gets none.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_props(
    mut commands: Commands,
    assets: Res<AssetServer>,
    bakes: Res<Assets<RigbakeBake>>,
    gltfs: Res<Assets<Gltf>>,
    gltf_meshes: Res<Assets<GltfMesh>>,
    gltf_nodes: Res<Assets<GltfNode>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut grey: Local<Option<Handle<StandardMaterial>>>,
    instances: Query<(Entity, &RigbakeInstance, &RigbakeSpawned), Without<RigbakePropsSpawned>>,
) {
    for (entity, instance, spawned) in &instances {
        let Some(bake) = bakes.get(&instance.bake) else {
            continue;
        };
        let Some((anchors, source)) = bake
            .anchors
            .as_ref()
            .and_then(|a| Some((a, a.source.as_ref()?)))
        else {
            commands.entity(entity).insert(RigbakePropsSpawned);
            continue;
        };
        if let Some(bevy::asset::LoadState::Failed(e)) = assets.get_load_state(source) {
            warn!("bevy_rigbake: props not drawn: the source model did not load: {e}");
            commands.entity(entity).insert(RigbakePropsSpawned);
            continue;
        }
        let Some(gltf) = gltfs.get(source) else {
            continue;
        };
        // The VAT draws every rigid prop itself; the bone path's weights
        // hold none baked as anchors.
        let in_vat = |node: &str| {
            spawned.path == RigbakePath::Vat
                && bake
                    .vat
                    .as_ref()
                    .is_some_and(|v| v.primitives.iter().any(|p| p.node == node))
        };
        let mut children = Vec::new();
        for prop in anchors.props.iter().filter(|p| !in_vat(&p.node)) {
            let mesh = gltf
                .named_meshes
                .get(prop.mesh.as_str())
                .or_else(|| {
                    let node = gltf_nodes.get(gltf.named_nodes.get(prop.node.as_str())?)?;
                    node.mesh.as_ref()
                })
                .and_then(|h| gltf_meshes.get(h));
            let Some(mesh) = mesh else {
                warn!(
                    "bevy_rigbake: prop `{}`: no mesh `{}` in the source model",
                    prop.node, prop.mesh
                );
                continue;
            };
            let parts: Vec<Entity> = mesh
                .primitives
                .iter()
                .map(|p| {
                    // The source's own material: the StandardMaterial
                    // Bevy's glTF loader makes of it (label `<material>/std`).
                    let material = p
                        .material
                        .as_ref()
                        .and_then(|h| {
                            let path = h.path()?;
                            let label = format!("{}/std", path.label()?);
                            Some(assets.load::<StandardMaterial>(path.clone().with_label(label)))
                        })
                        .unwrap_or_else(|| {
                            grey.get_or_insert_with(|| {
                                materials.add(crate::source_material::base_material())
                            })
                            .clone()
                        });
                    commands
                        .spawn((Mesh3d(p.mesh.clone()), MeshMaterial3d(material)))
                        .id()
                })
                .collect();
            let at = anchors
                .transform(prop.anchor, instance.animation())
                .unwrap_or_default();
            children.push(
                commands
                    .spawn((
                        at,
                        Visibility::default(),
                        RigbakeProp {
                            anchor: prop.anchor,
                        },
                    ))
                    .add_children(&parts)
                    .id(),
            );
        }
        commands
            .entity(entity)
            .insert(RigbakePropsSpawned)
            .add_children(&children);
    }
}

/// Moves every prop to its anchor in its instance's current state.
pub(crate) fn follow_anchors(
    bakes: Res<Assets<RigbakeBake>>,
    instances: Query<(&RigbakeInstance, &Children), With<RigbakePropsSpawned>>,
    mut props: Query<(&RigbakeProp, &mut Transform)>,
) {
    for (instance, children) in &instances {
        let Some(anchors) = bakes.get(&instance.bake).and_then(|b| b.anchors.as_ref()) else {
            continue;
        };
        for child in children.iter() {
            if let Ok((prop, mut transform)) = props.get_mut(child)
                && let Some(at) = anchors.transform(prop.anchor, instance.animation())
            {
                *transform = at;
            }
        }
    }
}
