//! crowd_bench: N instances of one bake animated by bevy_rigbake, headless,
//! rendered offscreen (lavapipe here; any wgpu adapter), on its VAT path or
//! its bone path, each instance at its own time in clip 0. Prints the mean
//! frame time (wall clock, render included) and the mean CPU time of the
//! main world's frame (from `First` to `Last`: the state system and
//! everything else Bevy does on the main thread), over `--frames` frames
//! after `--warm-up` frames, and the GPU time of the render passes where
//! the adapter has timestamp queries (Bevy's render diagnostics).
//!
//! ```text
//! crowd-bench ASSET_DIR --bake B --path vat|bones --count N [--frames F] [--warm-up W] [--no-draw]
//! crowd-bench ASSET_DIR --source S --path skinned --count N [...]
//! ```
//!
//! The bake (with `--vat --normals` for the VAT path) and the source glTF
//! are relative to ASSET_DIR. `--path skinned` is Bevy's own animation of
//! the same crowd (`SkinnedMesh` and `AnimationPlayer`, the source's first
//! animation). `--no-draw` turns the camera off: the GPU draws nothing and
//! the figures are the CPU's alone. Frames count from the first with the
//! whole crowd spawned.

use std::time::{Duration, Instant};

use bevy::animation::{AnimatedBy, AnimationTargetId};
use bevy::camera::RenderTarget;
use bevy::diagnostic::DiagnosticsStore;
use bevy::gltf::{Gltf, GltfMesh, GltfNode, GltfSkin};
use bevy::mesh::skinning::SkinnedMesh;
use bevy::prelude::*;
use bevy::render::diagnostic::RenderDiagnosticsPlugin;
use bevy_rigbake::{RigbakeInstance, RigbakePath, RigbakePlugin, headless};

#[derive(Resource, Clone)]
struct Args {
    bake: String,
    /// The source glTF (for `--path skinned`).
    source: String,
    path: String,
    count: usize,
    frames: u32,
    warm_up: u32,
    /// The camera off: nothing is drawn, the CPU side alone is measured.
    no_draw: bool,
}

#[derive(Resource, Default)]
struct Clock {
    frame: u32,
    started: Option<Instant>,
    main_start: Option<Instant>,
    main_total: Duration,
    measured: u32,
    window_start: Option<Instant>,
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let dir = argv
        .next()
        .expect("usage: crowd-bench ASSET_DIR --bake B --path vat|bones --count N [--frames F] [--warm-up W]");
    let mut args = Args {
        bake: String::new(),
        source: String::new(),
        path: "vat".into(),
        count: 1000,
        frames: 60,
        warm_up: 10,
        no_draw: false,
    };
    while let Some(flag) = argv.next() {
        if flag == "--no-draw" {
            args.no_draw = true;
            continue;
        }
        let value = argv
            .next()
            .unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--bake" => args.bake = value,
            "--source" => args.source = value,
            "--warm-up" => args.warm_up = value.parse().expect("--warm-up W"),
            "--path" => args.path = value,
            "--count" => args.count = value.parse().expect("--count N"),
            "--frames" => args.frames = value.parse().expect("--frames F"),
            _ => panic!("unknown flag {flag}"),
        }
    }
    let mut app = App::new();
    app.add_plugins(headless::plugins(dir))
        .add_plugins(headless::run_loop())
        .add_plugins(RigbakePlugin)
        .insert_resource(args)
        .init_resource::<Clock>()
        .add_systems(Startup, setup)
        .add_systems(Update, spawn_skinned)
        .add_plugins(RenderDiagnosticsPlugin)
        .add_systems(First, main_start)
        .add_systems(Last, main_end);
    app.run();
}

/// The grid position of instance `i` of `count`, `spacing` apart.
fn grid(i: usize, count: usize, spacing: f32) -> Vec3 {
    let side = (count as f32).sqrt().ceil() as usize;
    let (x, z) = (i % side, i / side);
    Vec3::new(x as f32 * spacing, 0.0, z as f32 * spacing)
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    args: Res<Args>,
) {
    let target = headless::render_target(&mut images, 256);
    let side = (args.count as f32).sqrt().ceil();
    commands.spawn((
        Camera3d::default(),
        Camera {
            is_active: !args.no_draw,
            ..default()
        },
        RenderTarget::Image(target.into()),
        Transform::from_xyz(side * 0.5, side * 2.0, side * 2.5)
            .looking_at(Vec3::new(side * 0.5, 0.0, side * 0.5), Vec3::Y),
    ));
    commands.spawn(headless::key_light());
    if args.path == "skinned" {
        return;
    }
    let bake = assets.load(args.bake.clone());
    for i in 0..args.count {
        let mut instance = RigbakeInstance::new(bake.clone());
        instance.path = if args.path == "bones" {
            RigbakePath::Bones
        } else {
            RigbakePath::Vat
        };
        instance.play(0, 1.0, Some(true)).seek(i as f64 * 0.037);
        commands.spawn((
            instance,
            Transform::from_translation(grid(i, args.count, 1.0)),
        ));
    }
}

/// Bevy's own animation of the same crowd, the `many_foxes` way without
/// its scene spawner: per instance, the source glTF's nodes as entities
/// (as Bevy's glTF loader builds its scene: `Name`, `Transform`,
/// `AnimationTargetId` and `AnimatedBy` under the animation root, which
/// holds the `AnimationPlayer`), each skinned primitive a `SkinnedMesh`
/// over its joint entities, and the first animation played at the
/// instance's own time. Spawning the loader's own scene copies its
/// components by reflection, which this build's Bevy features do not
/// register (`reflect_auto_register` would rebuild Bevy for one benchmark).
#[allow(clippy::too_many_arguments)]
fn spawn_skinned(
    mut commands: Commands,
    mut done: Local<bool>,
    args: Res<Args>,
    assets: Res<AssetServer>,
    gltfs: Res<Assets<Gltf>>,
    nodes: Res<Assets<GltfNode>>,
    skins: Res<Assets<GltfSkin>>,
    meshes: Res<Assets<GltfMesh>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut source: Local<Option<Handle<Gltf>>>,
) {
    if *done || args.path != "skinned" {
        return;
    }
    let handle = source
        .get_or_insert_with(|| assets.load(args.source.clone()))
        .clone();
    if !assets.is_loaded_with_dependencies(&handle) {
        return;
    }
    let gltf = gltfs.get(&handle).expect("the source glTF");
    *done = true;
    let (graph, animation) = AnimationGraph::from_clip(gltf.animations[0].clone());
    let graph = graphs.add(graph);
    let material = materials.add(StandardMaterial::default());
    let all: Vec<&GltfNode> = gltf
        .nodes
        .iter()
        .map(|h| nodes.get(h).expect("a node"))
        .collect();
    let is_child: Vec<bool> = (0..all.len())
        .map(|i| {
            all.iter().any(|n| {
                n.children
                    .iter()
                    .any(|c| nodes.get(c).is_some_and(|c| c.index == i))
            })
        })
        .collect();
    for i in 0..args.count {
        let root = commands
            .spawn((
                Transform::from_translation(grid(i, args.count, 1.0)),
                Visibility::default(),
            ))
            .id();
        let mut entities = vec![Entity::PLACEHOLDER; all.len()];
        // Depth first from every top-level node: (node, parent entity,
        // animation root entity and the names from it).
        let mut stack: Vec<(usize, Entity, Option<(Entity, Vec<Name>)>)> = (0..all.len())
            .filter(|&n| !is_child[n])
            .map(|n| (n, root, None))
            .collect();
        while let Some((n, parent, context)) = stack.pop() {
            let node = all[n];
            let name = Name::new(node.name.clone());
            let e = commands
                .spawn((
                    node.transform,
                    Visibility::default(),
                    name.clone(),
                    ChildOf(parent),
                ))
                .id();
            entities[n] = e;
            let context = match context {
                None if node.is_animation_root => {
                    let mut player = AnimationPlayer::default();
                    player.play(animation).repeat().seek_to(i as f32 * 0.037);
                    commands
                        .entity(e)
                        .insert((player, AnimationGraphHandle(graph.clone())));
                    Some((e, vec![]))
                }
                c => c,
            };
            let context = context.map(|(player, mut path)| {
                path.push(name);
                commands.entity(e).insert((
                    AnimationTargetId::from_names(path.iter()),
                    AnimatedBy(player),
                ));
                (player, path)
            });
            for c in &node.children {
                let c = nodes.get(c).expect("a node").index;
                stack.push((c, e, context.clone()));
            }
        }
        for node in &all {
            let (Some(mesh), Some(skin)) = (&node.mesh, &node.skin) else {
                continue;
            };
            let skin = skins.get(skin).expect("a skin");
            let joints = skin
                .joints
                .iter()
                .map(|j| entities[nodes.get(j).expect("a joint").index])
                .collect();
            for p in &meshes.get(mesh).expect("a mesh").primitives {
                commands.spawn((
                    Mesh3d(p.mesh.clone()),
                    MeshMaterial3d(material.clone()),
                    SkinnedMesh {
                        inverse_bindposes: skin.inverse_bind_matrices.clone(),
                        joints: Vec::clone(&joints),
                    },
                    ChildOf(entities[node.index]),
                ));
            }
        }
    }
}

/// The GPU time of a frame's render passes, from Bevy's render
/// diagnostics (timestamp queries; none where the adapter lacks them): the
/// sum of the top-level passes' `render/<pass>/elapsed_gpu`, each the mean
/// of its recorded history (the last frames, warm-up included when the run
/// is short).
fn gpu_ms(store: &DiagnosticsStore) -> Option<f64> {
    let passes: Vec<f64> = store
        .iter()
        .filter(|d| {
            let p = d.path().as_str();
            p.starts_with("render/") && p.ends_with("/elapsed_gpu") && p.matches('/').count() == 2
        })
        .filter_map(|d| d.average())
        .collect();
    (!passes.is_empty()).then(|| passes.iter().sum())
}

fn main_start(mut clock: ResMut<Clock>) {
    clock.main_start = Some(Instant::now());
    if clock.started.is_none() {
        clock.started = Some(Instant::now());
    }
}

fn main_end(
    mut clock: ResMut<Clock>,
    args: Res<Args>,
    mut exit: MessageWriter<AppExit>,
    players: Query<&AnimationPlayer>,
    skinned: Query<(), With<SkinnedMesh>>,
    instances: Query<(), With<bevy_rigbake::RigbakeSpawned>>,
    diagnostics: Res<DiagnosticsStore>,
) {
    let Some(start) = clock.main_start else {
        return;
    };
    let main = start.elapsed();
    // Frames count from the first with the whole crowd spawned.
    let spawned = if args.path == "skinned" {
        players.iter().count()
    } else {
        instances.iter().count()
    };
    if spawned < args.count {
        return;
    }
    clock.frame += 1;
    if clock.frame == args.warm_up {
        clock.window_start = Some(Instant::now());
        return;
    }
    if clock.frame > args.warm_up {
        clock.main_total += main;
        clock.measured += 1;
    }
    if clock.measured == args.frames {
        let wall = clock.window_start.map_or(Duration::ZERO, |w| w.elapsed());
        let n = f64::from(clock.measured);
        // What was animated: the instances drawn by the plugin, or Bevy's
        // players still playing and the skinned meshes they move.
        let playing = players.iter().filter(|p| !p.all_finished()).count();
        let gpu = gpu_ms(&diagnostics).map_or_else(
            || "no GPU timestamps".to_owned(),
            |ms| format!("GPU {ms:.2} ms"),
        );
        println!(
            "crowd_bench path={} count={} frames={}{}: {} plugin instances, {} players playing, {} skinned meshes: frame {:.2} ms, main-world CPU {:.3} ms, {}",
            args.path,
            args.count,
            clock.measured,
            if args.no_draw { " (not drawn)" } else { "" },
            instances.iter().count(),
            playing,
            skinned.iter().count(),
            wall.as_secs_f64() * 1e3 / n,
            clock.main_total.as_secs_f64() * 1e3 / n,
            gpu
        );
        exit.write(AppExit::Success);
    }
}
