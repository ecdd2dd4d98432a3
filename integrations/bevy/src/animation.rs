//! Per-instance animation: the component a game puts on each instance, the
//! system that turns it into the GPU state of docs/runtime.md (through
//! `rigbake-core`'s runtime reference, the same code the CPU preview and
//! verify play), and the spawning of each instance's primitives.

use bevy::camera::primitives::Aabb;
use bevy::camera::visibility::{NoAutoAabb, NoFrustumCulling};
use bevy::mesh::MeshTag;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::render::storage::ShaderBuffer;
use rigbake_core::runtime::root_motion;
use rigbake_core::runtime::{AnimationState, GpuState, PlayMode};

use crate::loader::RigbakeBake;
use crate::material::{BoneExtension, BoneMaterial, GpuAnimationState, VatExtension, VatMaterial};
use crate::source_material::{Pending, SourceMaterials};

/// Which of a bake's paths an instance draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RigbakePath {
    /// The vertex animation textures when the bake has them, else the
    /// bone-matrix textures.
    #[default]
    Auto,
    /// Vertex animation textures (the playback mesh).
    Vat,
    /// Bone-matrix textures (the weights mesh, skinned in the shader).
    Bones,
}

/// Which LOD level an instance draws, for bakes with LOD groups
/// (docs/lods.md); primitives outside any group are always drawn.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RigbakeLod {
    /// This level (a level past a group's last draws its last).
    Level(u32),
    /// By distance from the first 3D camera: the level is how many of
    /// these distances (ascending, world units) the instance is beyond.
    /// Empty: level 0.
    ByDistance(Vec<f32>),
    /// Level 0.
    #[default]
    Full,
}

/// What an instance is asked to do; applied once its bake has loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Request {
    Play {
        clip: usize,
        speed: f64,
        looping: Option<bool>,
    },
    Crossfade {
        clip: usize,
        speed: f64,
        duration: f64,
    },
    Seek(f64),
    Step(f64),
}

/// One animated instance of a bake. Put it (with a `Transform`) on an
/// entity; the plugin spawns the bake's primitives as its children and
/// plays it. Placement: the instance's transform places the model space
/// of the bake (docs/engines.md).
#[derive(Component, Debug, Clone)]
#[require(Transform, Visibility)]
pub struct RigbakeInstance {
    /// The bake it plays.
    pub bake: Handle<RigbakeBake>,
    /// Seconds of clip time per second of game time (1: real time).
    pub speed: f64,
    /// The path it draws (read when its primitives are spawned).
    pub path: RigbakePath,
    /// The LOD level it draws.
    pub lod: RigbakeLod,
    /// Whether clips baked in place move the instance: each frame the
    /// motion their tracks make is multiplied onto the instance's
    /// `Transform` (docs/root-motion.md, steps 2 to 4), so the transform
    /// walks with the clip. Off: the instance stays where it is put.
    pub root_motion: bool,
    state: AnimationState,
    requests: Vec<Request>,
}

impl RigbakeInstance {
    /// An instance of `bake`, playing its first clip in its own mode.
    pub fn new(bake: Handle<RigbakeBake>) -> Self {
        Self {
            bake,
            speed: 1.0,
            path: RigbakePath::Auto,
            lod: RigbakeLod::Full,
            root_motion: false,
            state: AnimationState::new(),
            requests: vec![Request::Play {
                clip: 0,
                speed: 1.0,
                looping: None,
            }],
        }
    }

    /// Plays clip `clip` from its start at `speed`, looping as asked (None:
    /// as the clip itself does).
    pub fn play(&mut self, clip: usize, speed: f64, looping: Option<bool>) -> &mut Self {
        self.requests.push(Request::Play {
            clip,
            speed,
            looping,
        });
        self
    }

    /// Fades from what plays to clip `clip` over `duration` seconds.
    pub fn crossfade(&mut self, clip: usize, speed: f64, duration: f64) -> &mut Self {
        self.requests.push(Request::Crossfade {
            clip,
            speed,
            duration,
        });
        self
    }

    /// Moves the playing clips to `time` seconds of clip time.
    pub fn seek(&mut self, time: f64) -> &mut Self {
        self.requests.push(Request::Seek(time));
        self
    }

    /// Advances the state by `dt` seconds now, whatever the game's clock
    /// (for example to start halfway through a crossfade).
    pub fn step(&mut self, dt: f64) -> &mut Self {
        self.requests.push(Request::Step(dt));
        self
    }

    /// The state the shader gets now.
    pub fn gpu_state(&self) -> GpuState {
        self.state.gpu_state()
    }

    /// The animation state (the clips playing, their times and weights).
    pub fn animation(&self) -> &AnimationState {
        &self.state
    }

    /// Updates the state by `dt` and returns the root motion `[x, y, z,
    /// yaw]` made meanwhile, composed onto `motion`.
    fn update(&mut self, bake: &RigbakeBake, dt: f64, motion: &mut [f64; 4]) -> GpuState {
        let before = self.state;
        let gpu = self.state.update(dt);
        if self.root_motion {
            let made = bake
                .root_motion
                .during(&bake.clips, &before, &self.state, dt);
            *motion = root_motion::compose(*motion, made);
        }
        gpu
    }

    /// Applies the requests (clips out of range are ignored: the bake has
    /// no such clip), then advances by `dt` seconds of game time. Returns
    /// the GPU state and the root motion made (zero unless
    /// [`RigbakeInstance::root_motion`]).
    fn advance(&mut self, bake: &RigbakeBake, dt: f64) -> (GpuState, [f64; 4]) {
        let mut motion = [0.0; 4];
        for r in std::mem::take(&mut self.requests) {
            match r {
                Request::Play {
                    clip,
                    speed,
                    looping,
                } => {
                    if let Some(c) = bake.clips.get(clip) {
                        let mode = match looping {
                            Some(true) => PlayMode::Loop,
                            Some(false) => PlayMode::Once,
                            None => PlayMode::of(c),
                        };
                        self.state.play(*c, mode, speed);
                    }
                }
                Request::Crossfade {
                    clip,
                    speed,
                    duration,
                } => {
                    if let Some(c) = bake.clips.get(clip) {
                        self.state.crossfade(*c, PlayMode::of(c), speed, duration);
                    }
                }
                Request::Seek(t) => self.state.seek(t),
                Request::Step(dt) => {
                    self.update(bake, dt, &mut motion);
                }
            }
        }
        let gpu = self.update(bake, dt * self.speed, &mut motion);
        (gpu, motion)
    }
}

/// The per-bake GPU resources every instance of a bake shares: one
/// material per baked primitive (so instances batch into instanced draws)
/// and one buffer of instance states.
#[derive(Debug, Clone, Default)]
struct BakeDraw {
    vat: Option<Vec<Handle<VatMaterial>>>,
    bones: Option<Vec<Handle<BoneMaterial>>>,
    states: Handle<ShaderBuffer>,
    instances: usize,
}

/// Every bake's shared draw resources.
#[derive(Resource, Default)]
pub(crate) struct BakeDraws(HashMap<AssetId<RigbakeBake>, BakeDraw>);

/// Marks an instance whose primitives are spawned, with the path they
/// draw ([`RigbakePath::Vat`] or [`RigbakePath::Bones`]).
#[derive(Component, Debug, Clone, Copy)]
pub struct RigbakeSpawned {
    /// The path drawn.
    pub path: RigbakePath,
}

/// Marks the primitive entities the plugin spawns under an instance, with
/// the primitive's LOD level (None: not part of a LOD group).
#[derive(Component)]
pub struct RigbakePrimitive {
    /// The LOD level, from the bake's LOD record.
    pub lod_level: Option<u32>,
}

/// Spawns the primitives of instances whose bake has loaded: the
/// playback meshes (VAT path) or the weights meshes (bone path), at their
/// placement, sharing the bake's materials.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_primitives(
    mut commands: Commands,
    bakes: Res<Assets<RigbakeBake>>,
    instances: Query<(Entity, &RigbakeInstance), Without<RigbakeSpawned>>,
    mut draws: ResMut<BakeDraws>,
    mut vat_materials: ResMut<Assets<VatMaterial>>,
    mut bone_materials: ResMut<Assets<BoneMaterial>>,
    mut buffers: ResMut<Assets<ShaderBuffer>>,
    sources: SourceMaterials,
) {
    for (entity, instance) in &instances {
        let Some(bake) = bakes.get(&instance.bake) else {
            continue;
        };
        let bones = match instance.path {
            RigbakePath::Auto => bake.vat.is_none(),
            RigbakePath::Vat => false,
            RigbakePath::Bones => true,
        };
        // Each primitive's material from its mesh file, once loaded (the
        // first instance of a bake on a path makes the bake's materials).
        let made = draws.0.get(&instance.bake.id()).is_some_and(|d| {
            if bones {
                d.bones.is_some()
            } else {
                d.vat.is_some()
            }
        });
        let base: Result<Vec<StandardMaterial>, Pending> = match (bones, &bake.vat, &bake.bones) {
            _ if made => Ok(Vec::new()),
            (false, Some(v), _) => v
                .primitives
                .iter()
                .map(|p| sources.get(&v.file, p.playback_mesh, 0))
                .collect(),
            (true, _, Some(b)) => b
                .primitives
                .iter()
                .map(|p| sources.get(&p.file, p.mesh_index, p.mesh_primitive))
                .collect(),
            _ => Ok(Vec::new()),
        };
        let Ok(base) = base else {
            continue;
        };
        let draw = draws
            .0
            .entry(instance.bake.id())
            .or_insert_with(|| BakeDraw {
                states: buffers.add(ShaderBuffer::from(vec![GpuAnimationState::default()])),
                ..default()
            });
        let states = draw.states.clone();
        let mut children = Vec::new();
        if let (false, Some(vat)) = (bones, &bake.vat) {
            let materials = draw.vat.get_or_insert_with(|| {
                vat.primitives
                    .iter()
                    .zip(base)
                    .map(|(p, base)| {
                        vat_materials.add(VatMaterial {
                            base,
                            extension: VatExtension {
                                positions: p.positions.clone(),
                                normals: p.normals.clone().unwrap_or_else(|| p.positions.clone()),
                                params: p.params,
                                states: states.clone(),
                            },
                        })
                    })
                    .collect()
            });
            for (p, m) in vat.primitives.iter().zip(materials.iter()) {
                children.push((
                    vat.placement,
                    commands
                        .spawn((
                            Transform::from_matrix(vat.placement),
                            Mesh3d(p.mesh.clone()),
                            MeshMaterial3d(m.clone()),
                            RigbakePrimitive {
                                lod_level: p.lod_level,
                            },
                        ))
                        .id(),
                ));
            }
        } else if let (true, Some(b)) = (bones, &bake.bones) {
            let materials = draw.bones.get_or_insert_with(|| {
                b.primitives
                    .iter()
                    .zip(base)
                    .map(|(p, base)| {
                        bone_materials.add(BoneMaterial {
                            base,
                            extension: BoneExtension {
                                texture: p.texture.clone(),
                                params: p.params,
                                states: states.clone(),
                                weights: p.weights.clone(),
                            },
                        })
                    })
                    .collect()
            });
            for (p, m) in b.primitives.iter().zip(materials.iter()) {
                children.push((
                    p.placement,
                    commands
                        .spawn((
                            Transform::from_matrix(p.placement),
                            Mesh3d(p.mesh.clone()),
                            MeshMaterial3d(m.clone()),
                            RigbakePrimitive {
                                lod_level: p.lod_level,
                            },
                        ))
                        .id(),
                ));
            }
        }
        for (placement, child) in &children {
            // The meshes' own boxes are their rest pose, which an animated
            // pose may leave: cull by the box every clip stays in (the
            // bake's bounds, in the primitive's space), or not at all.
            let mut e = commands.entity(*child);
            e.insert(MeshTag(0));
            match bake.bounds {
                Some((lo, hi)) => {
                    let (lo, hi) = crate::loader::place_box(placement.inverse(), lo, hi);
                    e.insert((Aabb::from_min_max(lo, hi), NoAutoAabb));
                }
                None => {
                    e.insert(NoFrustumCulling);
                }
            }
        }
        let children: Vec<Entity> = children.into_iter().map(|(_, e)| e).collect();
        commands
            .entity(entity)
            .insert(RigbakeSpawned {
                path: if bones {
                    RigbakePath::Bones
                } else {
                    RigbakePath::Vat
                },
            })
            .add_children(&children);
    }
}

/// Advances every instance and writes each bake's states: instance `k` of
/// a bake (in query order) is slot `k`, its primitives tagged `k`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_states(
    time: Res<Time>,
    bakes: Res<Assets<RigbakeBake>>,
    mut instances: Query<
        (&mut RigbakeInstance, &mut Transform, Option<&Children>),
        With<RigbakeSpawned>,
    >,
    mut tags: Query<&mut MeshTag, With<RigbakePrimitive>>,
    mut draws: ResMut<BakeDraws>,
    mut buffers: ResMut<Assets<ShaderBuffer>>,
    mut vat_materials: ResMut<Assets<VatMaterial>>,
    mut bone_materials: ResMut<Assets<BoneMaterial>>,
) {
    let dt = f64::from(time.delta_secs());
    let mut states: HashMap<AssetId<RigbakeBake>, Vec<GpuAnimationState>> = HashMap::default();
    for (mut instance, mut transform, children) in &mut instances {
        let Some(bake) = bakes.get(&instance.bake) else {
            continue;
        };
        let (gpu, motion) = instance.advance(bake, dt);
        if motion != [0.0; 4] {
            let m = crate::rig::bevy_mat4(root_motion::motion_matrix(motion));
            *transform = Transform::from_matrix(transform.to_matrix() * m);
        }
        let list = states.entry(instance.bake.id()).or_default();
        let slot = list.len() as u32;
        list.push(GpuAnimationState {
            rows: gpu.rows.map(Vec4::from_array),
            enabled: u32::from(gpu.enabled),
        });
        for child in children.into_iter().flatten() {
            if let Ok(mut tag) = tags.get_mut(*child)
                && tag.0 != slot
            {
                tag.0 = slot;
            }
        }
    }
    for (id, list) in states {
        let Some(draw) = draws.0.get_mut(&id) else {
            continue;
        };
        let count = list.len();
        if let Some(mut buffer) = buffers.get_mut(&draw.states) {
            buffer.set_data(list);
        }
        if draw.instances != count {
            // A buffer of another size needs new bind groups: touching the
            // materials rebuilds them.
            draw.instances = count;
            for m in draw.vat.iter().flatten() {
                let _ = vat_materials.get_mut(m);
            }
            for m in draw.bones.iter().flatten() {
                let _ = bone_materials.get_mut(m);
            }
        }
    }
}

/// Shows, under each instance, the primitives of the LOD level it asks for
/// (a level past a group's last shows that group's last) and hides the
/// other levels; primitives outside LOD groups stay shown.
pub(crate) fn select_lods(
    instances: Query<(&RigbakeInstance, &GlobalTransform, &Children), With<RigbakeSpawned>>,
    cameras: Query<&GlobalTransform, With<Camera3d>>,
    mut parts: Query<(&RigbakePrimitive, &mut Visibility)>,
) {
    let eye = cameras.iter().next().map(GlobalTransform::translation);
    for (instance, at, children) in &instances {
        let wanted = match &instance.lod {
            RigbakeLod::Full => 0,
            RigbakeLod::Level(l) => *l,
            RigbakeLod::ByDistance(d) => {
                let distance = eye.map_or(0.0, |e| e.distance(at.translation()));
                d.iter().filter(|&&x| distance >= x).count() as u32
            }
        };
        let last = children
            .iter()
            .filter_map(|c| parts.get(c).ok().and_then(|(p, _)| p.lod_level))
            .max()
            .unwrap_or(0);
        let level = wanted.min(last);
        for child in children.iter() {
            if let Ok((part, mut visibility)) = parts.get_mut(child) {
                let shown = part.lod_level.is_none_or(|l| l == level);
                let want = if shown {
                    Visibility::Inherited
                } else {
                    Visibility::Hidden
                };
                if *visibility != want {
                    *visibility = want;
                }
            }
        }
    }
}
