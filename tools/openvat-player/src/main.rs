//! Plays an OpenVAT export (the files OpenVAT's Blender add-on writes, or
//! `rigbake vat MODEL --compat openvat`) with the third-party `bevy_open_vat`
//! crate, unchanged: its `RemapInfo` loader, its `VatAnimator` component and
//! its own WGSL shaders, in Bevy, rendered by wgpu (Mesa's lavapipe in CI)
//! into an offscreen image. No window is opened.
//!
//! ```text
//! openvat-player JOBS.json
//! ```
//!
//! `JOBS.json`:
//!
//! ```json
//! {
//!   "dir": "/abs/export/dir",          // holds the four files below
//!   "glb": "Fox.glb",
//!   "vat": "Fox_vat.exr",
//!   "remap": "Fox-remap_info.json",
//!   "size": 256,
//!   "shots": [
//!     {"clip": "Walk", "time": 0.4,     // seconds into the clip
//!      "camera": {"right": [x,y,z], "up": [x,y,z], "forward": [x,y,z],
//!                 "center": [x,y,z], "half_extent": h},
//!      "out": "/abs/shot.png"}
//!   ]
//! }
//! ```
//!
//! Each shot is an orthographic view (`half_extent` world units from the
//! image centre to its edge, as rigbake's CPU preview camera) written as an
//! RGBA PNG: the clear colour is transparent black, so alpha is the
//! silhouette. Time: the app's clock is frozen at 0 and every animator is
//! given `start_time = -time`, so the player's own shader computes the clip
//! progress `fract((0 - start_time) * rate)` with `rate = 1 / duration` from
//! the clip's `startFrame`, `endFrame` and `framerate`, as it does in a game.
//! Prints one line per shot: `shot N: W x H, C covered pixels`.

use std::path::PathBuf;
use std::time::Duration;

use bevy::app::ScheduleRunnerPlugin;
use bevy::asset::AssetMetaCheck;
use bevy::camera::visibility::NoFrustumCulling;
use bevy::camera::{Projection, RenderTarget, ScalingMode};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::gltf::{Gltf, GltfMesh, GltfNode};
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::render_resource::TextureFormat;
use bevy::render::view::Msaa;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::time::TimeUpdateStrategy;
use bevy::window::ExitCondition;
use bevy_open_vat::data::VatMaterialReady;
use bevy_open_vat::prelude::*;

#[derive(Clone)]
struct CameraSpec {
    right: Vec3,
    up: Vec3,
    forward: Vec3,
    center: Vec3,
    half_extent: f32,
}

#[derive(Clone)]
struct Shot {
    clip: String,
    time: f32,
    camera: CameraSpec,
    out: PathBuf,
}

#[derive(Resource)]
struct Jobs {
    remap_file: String,
    size: u32,
    shots: Vec<Shot>,
}

#[derive(Resource)]
struct Handles {
    target: Handle<Image>,
    remap: Handle<RemapInfo>,
    vat: Handle<Image>,
    clips: Vec<Handle<VatAnimationClip>>,
    gltf: Handle<Gltf>,
}

#[derive(Component)]
struct ModelRoot;

#[derive(Component)]
struct ShotCamera;

/// Progress of the shots.
#[derive(Resource, Default)]
struct Progress {
    /// Frames since start.
    frame: u32,
    /// The scene's meshes all wear the player's VAT material since this frame.
    ready_at: Option<u32>,
    /// The shot being taken.
    shot: usize,
    /// Frame at which the current shot's state was set.
    set_at: Option<u32>,
    /// Screenshot requested and not back yet.
    waiting: bool,
    /// Coverage counts of the screenshots of the current shot, newest last.
    counts: Vec<(usize, Vec<u8>)>,
}

/// Screenshots that came back: (shot index, width, height, RGBA8 pixels).
#[derive(Resource, Default)]
struct Captured(Vec<(usize, u32, u32, Vec<u8>)>);

fn vec3(v: &serde_json::Value) -> Vec3 {
    let a: Vec<f32> = v
        .as_array()
        .expect("a 3-vector")
        .iter()
        .map(|x| x.as_f64().expect("a number") as f32)
        .collect();
    Vec3::new(a[0], a[1], a[2])
}

fn main() {
    let jobs_file = std::env::args().nth(1).expect("usage: openvat-player JOBS.json");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&jobs_file).expect("the jobs file"))
            .expect("jobs JSON");
    let s = |k: &str| doc[k].as_str().unwrap_or_else(|| panic!("jobs: {k}")).to_string();
    let dir = s("dir");
    let shots: Vec<Shot> = doc["shots"]
        .as_array()
        .expect("jobs: shots")
        .iter()
        .map(|j| {
            let c = &j["camera"];
            Shot {
                clip: j["clip"].as_str().expect("shot clip").to_string(),
                time: j["time"].as_f64().expect("shot time") as f32,
                camera: CameraSpec {
                    right: vec3(&c["right"]),
                    up: vec3(&c["up"]),
                    forward: vec3(&c["forward"]),
                    center: vec3(&c["center"]),
                    half_extent: c["half_extent"].as_f64().expect("half_extent") as f32,
                },
                out: PathBuf::from(j["out"].as_str().expect("shot out")),
            }
        })
        .collect();
    let jobs = Jobs {
        remap_file: s("remap"),
        size: doc["size"].as_u64().unwrap_or(256) as u32,
        shots,
    };
    let glb = s("glb");
    let vat = s("vat");

    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(AssetPlugin {
                file_path: dir,
                meta_check: AssetMetaCheck::Never,
                ..default()
            })
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..default()
            })
            .set(RenderPlugin {
                synchronous_pipeline_compilation: true,
                ..default()
            }),
    )
    .add_plugins(ScheduleRunnerPlugin::run_loop(Duration::ZERO))
    .add_plugins(OpenVatPlugin)
    // The clock stands still at 0: the shots set the animation time.
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO))
    .insert_resource(jobs)
    .insert_resource(GlbName(glb))
    .insert_resource(VatName(vat))
    .init_resource::<Progress>()
    .init_resource::<Captured>()
    .add_systems(Startup, setup)
    .add_systems(Update, (spawn_model, no_culling, drive).chain());
    match app.run() {
        AppExit::Success => {}
        AppExit::Error(code) => std::process::exit(i32::from(code.get())),
    }
}

#[derive(Resource)]
struct GlbName(String);
#[derive(Resource)]
struct VatName(String);

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    jobs: Res<Jobs>,
    glb: Res<GlbName>,
    vat: Res<VatName>,
) {
    let mut target = Image::new_target_texture(
        jobs.size,
        jobs.size,
        TextureFormat::Rgba8UnormSrgb,
        None,
    );
    target.texture_descriptor.usage |= bevy::render::render_resource::TextureUsages::COPY_SRC;
    let target = images.add(target);
    let remap: Handle<RemapInfo> = assets.load(jobs.remap_file.clone());
    let vat: Handle<Image> = assets.load(vat.0.clone());
    let mut clips = Vec::new();
    for s in &jobs.shots {
        clips.push(assets.load(format!("{}#{}", jobs.remap_file, s.clip)));
    }
    let gltf: Handle<Gltf> = assets.load(glb.0.clone());
    commands.spawn((
        Camera3d::default(),
        Camera {
            clear_color: ClearColorConfig::Custom(Color::NONE),
            ..default()
        },
        RenderTarget::Image(target.clone().into()),
        Msaa::Off,
        Tonemapping::None,
        Projection::Orthographic(OrthographicProjection {
            scaling_mode: ScalingMode::Fixed {
                width: 2.0,
                height: 2.0,
            },
            ..OrthographicProjection::default_3d()
        }),
        Transform::default(),
        ShotCamera,
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 8000.0,
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(1.0, 2.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 400.0,
        ..default()
    });
    commands.insert_resource(Handles {
        target,
        remap,
        vat,
        clips,
        gltf,
    });
}

/// Spawns every mesh primitive of the glTF as the crate's README does
/// (`Mesh3d` + `MeshMaterial3d<StandardMaterial>` + `Transform` +
/// `VatAnimator`), each at its node's global transform from Bevy's glTF
/// loader (the node matrices, parents included), back faces culled.
#[allow(clippy::too_many_arguments)]
fn spawn_model(
    mut commands: Commands,
    mut spawned: Local<bool>,
    assets: Res<AssetServer>,
    handles: Res<Handles>,
    gltfs: Res<Assets<Gltf>>,
    nodes: Res<Assets<GltfNode>>,
    gltf_meshes: Res<Assets<GltfMesh>>,
    mut std_materials: ResMut<Assets<StandardMaterial>>,
) {
    if *spawned || !assets.is_loaded_with_dependencies(&handles.gltf) {
        return;
    }
    let Some(gltf) = gltfs.get(&handles.gltf) else { return };
    *spawned = true;
    let index = |h: &Handle<GltfNode>| gltf.nodes.iter().position(|n| n.id() == h.id());
    let mut parent = vec![None; gltf.nodes.len()];
    for (i, h) in gltf.nodes.iter().enumerate() {
        for c in &nodes.get(h).expect("a glTF node").children {
            parent[index(c).expect("a child node")] = Some(i);
        }
    }
    let animator = VatAnimator {
        remap_info: handles.remap.clone(),
        vat_texture: handles.vat.clone(),
        current_clip: handles.clips.first().cloned().unwrap_or_default(),
        is_playing: true,
        speed: 1.0,
        ..default()
    };
    let mut count = 0;
    for (i, h) in gltf.nodes.iter().enumerate() {
        let node = nodes.get(h).expect("a glTF node");
        let Some(mesh) = &node.mesh else { continue };
        let mut global = node.transform.to_matrix();
        let mut p = parent[i];
        while let Some(j) = p {
            global = nodes.get(&gltf.nodes[j]).unwrap().transform.to_matrix() * global;
            p = parent[j];
        }
        for prim in &gltf_meshes.get(mesh).expect("a glTF mesh").primitives {
            // Bevy's glTF loader adds each material's StandardMaterial as
            // the sub-asset `<material label>/std`.
            let material: Handle<StandardMaterial> = match &prim.material {
                Some(m) => {
                    let path = m.path().expect("a labelled material");
                    let label = format!("{}/std", path.label().expect("a material label"));
                    assets.load(path.clone().with_label(label))
                }
                None => assets.add(StandardMaterial::default()),
            };
            // Back faces culled, as rigbake's CPU preview (the reference
            // these frames are compared with) always draws: a double-sided
            // material (girl's) would otherwise show its back faces along
            // the outline. The crate copies this material into its own.
            if let Some(mut m) = std_materials.get_mut(&material) {
                m.double_sided = false;
                m.cull_mode = Some(bevy::render::render_resource::Face::Back);
            }
            commands.spawn((
                Mesh3d(prim.mesh.clone()),
                MeshMaterial3d(material),
                Transform::from_matrix(global),
                animator.clone(),
                ModelRoot,
            ));
            count += 1;
        }
    }
    eprintln!("openvat-player: spawned {count} primitives");
}

/// The player's meshes keep their rest-pose bounds; an animated pose may
/// leave them, so nothing is culled (one model, always in view).
fn no_culling(
    mut commands: Commands,
    meshes: Query<Entity, (With<Mesh3d>, Without<NoFrustumCulling>)>,
) {
    for e in &meshes {
        commands.entity(e).insert(NoFrustumCulling);
    }
}

/// Frames a shot's state is left to settle before its first screenshot.
const SETTLE: u32 = 3;
/// Screenshots of one shot that must agree before it is written.
const AGREE: usize = 2;
/// Frames after which the run gives up.
const GIVE_UP: u32 = 3000;

#[allow(clippy::too_many_arguments)]
fn drive(
    mut commands: Commands,
    mut progress: ResMut<Progress>,
    mut captured: ResMut<Captured>,
    jobs: Res<Jobs>,
    handles: Res<Handles>,
    assets: Res<AssetServer>,
    roots: Query<Entity, With<ModelRoot>>,
    ready: Query<(), With<VatMaterialReady>>,
    mut animators: Query<&mut VatAnimator>,
    mut camera: Query<(&mut Transform, &mut Projection), With<ShotCamera>>,
    clips: Res<Assets<VatAnimationClip>>,
    mut exit: MessageWriter<AppExit>,
) {
    progress.frame += 1;
    let frame = progress.frame;
    if frame > GIVE_UP {
        eprintln!(
            "openvat-player: gave up after {GIVE_UP} frames (shot {}, ready {:?}, remap {:?}, vat {:?})",
            progress.shot,
            progress.ready_at,
            assets.get_load_state(&handles.remap),
            assets.get_load_state(&handles.vat),
        );
        exit.write(AppExit::from_code(2));
        return;
    }
    for h in [handles.remap.id().untyped(), handles.vat.id().untyped()] {
        if let Some(bevy::asset::LoadState::Failed(e)) = assets.get_load_state(h) {
            eprintln!("openvat-player: loading failed: {e}");
            exit.write(AppExit::from_code(2));
            return;
        }
    }

    // Wait until every mesh under the scene wears the player's VAT material.
    if progress.ready_at.is_none() {
        let (mut total, mut done) = (0, 0);
        for e in &roots {
            total += 1;
            done += usize::from(ready.get(e).is_ok());
        }
        if total == 0 || done < total || handles.clips.iter().any(|c| clips.get(c).is_none()) {
            return;
        }
        eprintln!("openvat-player: {total} meshes ready at frame {frame}");
        progress.ready_at = Some(frame);
    }

    // Screenshots that came back.
    for (shot, w, h, pixels) in captured.0.drain(..) {
        progress.waiting = false;
        if shot != progress.shot {
            continue;
        }
        let covered = pixels.chunks(4).filter(|p| p[3] > 127).count();
        progress.counts.push((covered, pixels.clone()));
        let n = progress.counts.len();
        let agree = n >= AGREE
            && covered > 0
            && progress.counts[n - AGREE..]
                .iter()
                .all(|(_, p)| *p == progress.counts[n - 1].1);
        if agree {
            let s = &jobs.shots[shot];
            write_png(&s.out, w, h, &pixels);
            println!("shot {shot}: {w} x {h}, {covered} covered pixels");
            progress.shot += 1;
            progress.set_at = None;
            progress.counts.clear();
        } else if n > 20 {
            eprintln!("openvat-player: shot {shot} never settled ({covered} covered pixels)");
            exit.write(AppExit::from_code(3));
            return;
        }
    }
    if progress.shot >= jobs.shots.len() {
        exit.write(AppExit::Success);
        return;
    }

    let shot = &jobs.shots[progress.shot];
    if progress.set_at.is_none() {
        // The player's own playback state: this clip, started `time`
        // seconds before the (frozen) clock's 0.
        let clip = handles.clips[progress.shot].clone();
        for mut a in &mut animators {
            a.current_clip = clip.clone();
            a.is_playing = true;
            a.speed = 1.0;
            a.offset = 0.0;
            a.start_time = -shot.time;
        }
        let c = &shot.camera;
        let distance = 8.0 * c.half_extent;
        let (mut t, mut p) = camera.single_mut().expect("the camera");
        *t = Transform::from_translation(c.center - c.forward * distance)
            .looking_to(c.forward, c.up);
        debug_assert!(t.right().dot(c.right) > 0.999);
        *p = Projection::Orthographic(OrthographicProjection {
            near: 0.0,
            far: 2.0 * distance,
            scaling_mode: ScalingMode::Fixed {
                width: 2.0 * c.half_extent,
                height: 2.0 * c.half_extent,
            },
            ..OrthographicProjection::default_3d()
        });
        progress.set_at = Some(frame);
        return;
    }
    if progress.waiting || frame < progress.set_at.unwrap() + SETTLE {
        return;
    }
    progress.waiting = true;
    let index = progress.shot;
    commands
        .spawn(Screenshot::image(handles.target.clone()))
        .observe(
            move |ev: On<ScreenshotCaptured>, mut captured: ResMut<Captured>| {
                let img = &ev.image;
                let (w, h) = (img.width(), img.height());
                let rgba = img
                    .clone()
                    .try_into_dynamic()
                    .expect("a screenshot image")
                    .to_rgba8()
                    .into_raw();
                captured.0.push((index, w, h, rgba));
            },
        );
    progress.set_at = Some(frame);
}

fn write_png(path: &std::path::Path, w: u32, h: u32, rgba: &[u8]) {
    let file = std::fs::File::create(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().expect("PNG header");
    writer.write_image_data(rgba).expect("PNG data");
}
