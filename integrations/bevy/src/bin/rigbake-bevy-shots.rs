//! Renders a bake with bevy_rigbake, headless, into silhouette PNGs: the
//! checker that tests compare with `rigbake preview` (crates/cli/tests/
//! bevy_plugin.rs). Renders offscreen with wgpu (Mesa's lavapipe in CI);
//! no window is opened.
//!
//! ```text
//! rigbake-bevy-shots JOBS.json
//! ```
//!
//! `JOBS.json`:
//!
//! ```json
//! {
//!   "dir": "/abs/bake/dir",             // the asset folder
//!   "bake": "Fox/Fox.rigbake",          // relative to dir
//!   "path": "vat",                      // or "bones" (default: the bake's VAT if any)
//!   "lod": 2,                           // a LOD level, or [d1, d2]: by distance (default 0)
//!   "others": [{"clip": 0, "time": 0.2, "offset": [x, y, z]}],  // more instances, held still
//!   "root_motion": true,                // clips baked in place move the instance (default false)
//!   "size": 256,
//!   "shots": [
//!     {"clip": 1, "time": 0.4,          // clip index, seconds into it
//!      "fade": {"from": 0, "from_time": 0.2, "duration": 1.0, "elapsed": 0.5},
//!      "walk": true,                    // played (looping) from the start for `time` instead
//!      "camera": {"right": [x,y,z], "up": [x,y,z], "forward": [x,y,z],
//!                 "center": [x,y,z], "half_extent": h},
//!      "out": "/abs/shot.png"}
//!   ]
//! }
//! ```
//!
//! Each shot is an orthographic view (`half_extent` model units from the
//! image centre to its edge, as rigbake's CPU preview camera) written as an
//! RGBA PNG whose alpha is the silhouette (clear colour transparent). The
//! clock stands still; each shot sets the instance's state: `clip` played
//! and seeked to `time`, or with `fade`, clip `from` seeked to `from_time`
//! then a crossfade to `clip` of `duration` advanced by `elapsed` seconds
//! (both clips advance meanwhile), or with `walk` the instance put back at
//! the origin and `clip` played, looping, from its start for `time`
//! seconds in one step (root motion, when on, moves it meanwhile). Props
//! baked as anchors are drawn when the source model lies beside the bake.
//! Exit 2 when the bake fails to load, with the loader's message. Prints
//! `shot N: W x H, C covered pixels`.

use std::path::PathBuf;
use std::time::Duration;

use bevy::camera::{Projection, RenderTarget, ScalingMode};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy::render::view::Msaa;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::time::TimeUpdateStrategy;
use bevy_rigbake::{
    RigbakeBake, RigbakeInstance, RigbakeLod, RigbakePath, RigbakePlugin, headless,
};

#[derive(Clone)]
struct CameraSpec {
    up: Vec3,
    forward: Vec3,
    center: Vec3,
    half_extent: f32,
}

#[derive(Clone, Copy)]
struct Fade {
    from: usize,
    from_time: f64,
    duration: f64,
    elapsed: f64,
}

#[derive(Clone)]
struct Shot {
    clip: usize,
    time: f64,
    walk: bool,
    fade: Option<Fade>,
    camera: CameraSpec,
    out: PathBuf,
}

#[derive(Resource)]
struct Jobs {
    bake: String,
    path: RigbakePath,
    lod: RigbakeLod,
    root_motion: bool,
    /// Further instances: clip, time, translation.
    others: Vec<(usize, f64, Vec3)>,
    size: u32,
    shots: Vec<Shot>,
}

#[derive(Resource)]
struct Handles {
    target: Handle<Image>,
    bake: Handle<RigbakeBake>,
}

#[derive(Component)]
struct ShotCamera;

/// The instance the shots set the state of.
#[derive(Component)]
struct Driven;

#[derive(Resource, Default)]
struct Progress {
    frame: u32,
    shot: usize,
    set_at: Option<u32>,
    waiting: bool,
    counts: Vec<Vec<u8>>,
}

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
    let jobs_file = std::env::args()
        .nth(1)
        .expect("usage: rigbake-bevy-shots JOBS.json");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&jobs_file).expect("the jobs file"))
            .expect("jobs JSON");
    let s = |k: &str| {
        doc[k]
            .as_str()
            .unwrap_or_else(|| panic!("jobs: {k}"))
            .to_string()
    };
    let shots = doc["shots"]
        .as_array()
        .expect("jobs: shots")
        .iter()
        .map(|j| {
            let c = &j["camera"];
            let f = &j["fade"];
            Shot {
                clip: j["clip"].as_u64().expect("shot clip") as usize,
                time: j["time"].as_f64().expect("shot time"),
                walk: j["walk"].as_bool().unwrap_or(false),
                fade: f.is_object().then(|| Fade {
                    from: f["from"].as_u64().expect("fade from") as usize,
                    from_time: f["from_time"].as_f64().expect("fade from_time"),
                    duration: f["duration"].as_f64().expect("fade duration"),
                    elapsed: f["elapsed"].as_f64().expect("fade elapsed"),
                }),
                camera: CameraSpec {
                    up: vec3(&c["up"]),
                    forward: vec3(&c["forward"]),
                    center: vec3(&c["center"]),
                    half_extent: c["half_extent"].as_f64().expect("half_extent") as f32,
                },
                out: PathBuf::from(j["out"].as_str().expect("shot out")),
            }
        })
        .collect();
    let path = match doc["path"].as_str() {
        Some("bones") => RigbakePath::Bones,
        Some("vat") => RigbakePath::Vat,
        _ => RigbakePath::Auto,
    };
    let lod = match &doc["lod"] {
        serde_json::Value::Number(n) => RigbakeLod::Level(n.as_u64().expect("lod level") as u32),
        serde_json::Value::Array(d) => RigbakeLod::ByDistance(
            d.iter()
                .map(|x| x.as_f64().expect("lod distance") as f32)
                .collect(),
        ),
        _ => RigbakeLod::Full,
    };
    let others = doc["others"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| {
                    (
                        o["clip"].as_u64().expect("other clip") as usize,
                        o["time"].as_f64().expect("other time"),
                        vec3(&o["offset"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let jobs = Jobs {
        bake: s("bake"),
        path,
        lod,
        root_motion: doc["root_motion"].as_bool().unwrap_or(false),
        others,
        size: doc["size"].as_u64().unwrap_or(256) as u32,
        shots,
    };
    let mut app = App::new();
    app.add_plugins(headless::plugins(s("dir")))
        .add_plugins(headless::run_loop())
        .add_plugins(RigbakePlugin)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO))
        .insert_resource(jobs)
        .init_resource::<Progress>()
        .init_resource::<Captured>()
        .add_systems(Startup, setup)
        .add_systems(Update, drive);
    match app.run() {
        AppExit::Success => {}
        AppExit::Error(code) => std::process::exit(i32::from(code.get())),
    }
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    jobs: Res<Jobs>,
) {
    let target = headless::render_target(&mut images, jobs.size);
    let bake: Handle<RigbakeBake> = assets.load(jobs.bake.clone());
    commands.spawn((
        Camera3d::default(),
        Camera {
            clear_color: ClearColorConfig::Custom(Color::NONE),
            ..default()
        },
        RenderTarget::Image(target.clone().into()),
        Msaa::Off,
        Tonemapping::None,
        Projection::Orthographic(OrthographicProjection::default_3d()),
        Transform::default(),
        ShotCamera,
    ));
    commands.spawn(headless::key_light());
    let mut instance = RigbakeInstance::new(bake.clone());
    instance.path = jobs.path;
    instance.lod = jobs.lod.clone();
    instance.root_motion = jobs.root_motion;
    commands.spawn((instance, Transform::default(), Driven));
    // Instances of the same bake, each in its own state: one storage
    // buffer, one slot each.
    for &(clip, time, offset) in &jobs.others {
        let mut other = RigbakeInstance::new(bake.clone());
        other.path = jobs.path;
        other.lod = jobs.lod.clone();
        other.play(clip, 1.0, None).seek(time);
        commands.spawn((other, Transform::from_translation(offset)));
    }
    commands.insert_resource(Handles { target, bake });
}

/// Frames a shot's state is left to settle before its first screenshot.
const SETTLE: u32 = 3;
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
    bakes: Res<Assets<RigbakeBake>>,
    meshes: Res<Assets<Mesh>>,
    mut instances: Query<(&mut RigbakeInstance, &mut Transform), With<Driven>>,
    mut camera: Query<(&mut Transform, &mut Projection), (With<ShotCamera>, Without<Driven>)>,
    mut exit: MessageWriter<AppExit>,
) {
    progress.frame += 1;
    let frame = progress.frame;
    if let Some(bevy::asset::LoadState::Failed(e)) = assets.get_load_state(&handles.bake) {
        eprintln!("rigbake-bevy-shots: loading failed: {e}");
        exit.write(AppExit::from_code(2));
        return;
    }
    if frame > GIVE_UP {
        eprintln!(
            "rigbake-bevy-shots: gave up after {GIVE_UP} frames (shot {})",
            progress.shot
        );
        exit.write(AppExit::from_code(3));
        return;
    }
    // Wait for the bake, its meshes and textures.
    let Some(bake) = bakes.get(&handles.bake) else {
        return;
    };
    if !assets.is_loaded_with_dependencies(&handles.bake) {
        return;
    }
    let vat_meshes = bake
        .vat
        .iter()
        .flat_map(|v| v.primitives.iter().map(|p| &p.mesh));
    let bone_meshes = bake
        .bones
        .iter()
        .flat_map(|b| b.primitives.iter().map(|p| &p.mesh));
    if vat_meshes
        .chain(bone_meshes)
        .any(|m| meshes.get(m).is_none())
    {
        return;
    }
    for (shot, w, h, pixels) in captured.0.drain(..) {
        progress.waiting = false;
        if shot != progress.shot {
            continue;
        }
        let covered = pixels.chunks(4).filter(|p| p[3] > 127).count();
        progress.counts.push(pixels.clone());
        let n = progress.counts.len();
        if n >= 2 && covered > 0 && progress.counts[n - 2] == progress.counts[n - 1] {
            write_png(&jobs.shots[shot].out, w, h, &pixels);
            println!("shot {shot}: {w} x {h}, {covered} covered pixels");
            progress.shot += 1;
            progress.set_at = None;
            progress.counts.clear();
        } else if n > 20 {
            eprintln!("rigbake-bevy-shots: shot {shot} never settled ({covered} covered pixels)");
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
        for (mut instance, mut at) in &mut instances {
            match shot.fade {
                None if shot.walk => {
                    *at = Transform::default();
                    instance.play(shot.clip, 1.0, Some(true)).step(shot.time);
                }
                None => {
                    instance.play(shot.clip, 0.0, None).seek(shot.time);
                }
                Some(f) => {
                    // The outgoing clip at `from_time`, then the fade
                    // advanced by `elapsed` (the state's own clock: speed
                    // 1 for the advance, the clock standing still after).
                    instance.play(f.from, 1.0, None).seek(f.from_time);
                    instance.crossfade(shot.clip, 1.0, f.duration);
                    instance.step(f.elapsed);
                }
            }
        }
        let c = &shot.camera;
        let distance = 8.0 * c.half_extent;
        let (mut t, mut p) = camera.single_mut().expect("the camera");
        *t = Transform::from_translation(c.center - c.forward * distance)
            .looking_to(c.forward, c.up);
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
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().expect("PNG header");
    writer.write_image_data(rgba).expect("PNG data");
}
