//! crowd: plays a folder of bakes as a crowd with bevy_rigbake.
//!
//! ```text
//! cargo run --example crowd --features window -- BAKE_DIR        # a window
//! cargo run --example crowd -- BAKE_DIR --headless OUT.png [--frames N] [--size PX]
//! ```
//!
//! Every `.rigbake` container under BAKE_DIR (up to 4 folders deep, at most
//! 256) is loaded; each bake stands in the crowd once per path it has (VAT,
//! bone textures), scaled to one grid cell, playing its first clip, each
//! instance at its own time (headless: all from the start). Keys
//! (window): `N` plays the next clip, `C` crossfades to it over half a
//! second, `P` switches every instance to the other path, `Space` pauses.
//!
//! Without the `window` feature (or with `--headless`) it renders
//! offscreen: after N frames (default 30, at 30 fps of game time) it writes
//! OUT.png and prints, per instance, its bake, path and the pixels drawn
//! in its cell; it exits 1 when a bake failed to load or an instance drew
//! nothing. Primitives a bake left static (`static_primitives` of its VAT
//! record, not in the playback mesh) are not drawn: they are the source's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bevy::camera::primitives::MeshAabb;
use bevy::camera::{RenderTarget, ScalingMode};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy::render::view::Msaa;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::time::TimeUpdateStrategy;
use bevy_rigbake::{RigbakeBake, RigbakeInstance, RigbakePath, RigbakePlugin, RigbakeSpawned};

/// Folders searched below BAKE_DIR.
const MAX_DEPTH: usize = 4;
/// Bakes loaded at most.
const MAX_BAKES: usize = 256;

#[derive(Resource)]
struct Crowd {
    bakes: Vec<(String, Handle<RigbakeBake>)>,
    /// Per instance: bake name, path, grid cell.
    slots: Vec<(String, RigbakePath, UVec2)>,
    columns: u32,
    spawned: bool,
    failed: Vec<String>,
    clip: usize,
    /// Each instance starts at its own time (the window); headless, all
    /// start at the clip's start, so the picture does not depend on a
    /// phase that may show a part edge-on.
    stagger: bool,
}

#[derive(Resource)]
struct Headless {
    out: PathBuf,
    frames: u32,
    size: u32,
    target: Option<Handle<Image>>,
    frame: u32,
    asked: bool,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: crowd BAKE_DIR [--headless OUT.png] [--frames N] [--size PX]";
    let dir = PathBuf::from(args.next().unwrap_or_else(|| exit_with(usage)));
    let (mut out, mut frames, mut size) = (None, 30u32, 1024u32);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| exit_with(usage));
        match flag.as_str() {
            "--headless" => out = Some(PathBuf::from(value)),
            "--frames" => frames = value.parse().unwrap_or_else(|_| exit_with(usage)),
            "--size" => size = value.parse().unwrap_or_else(|_| exit_with(usage)),
            _ => exit_with(usage),
        }
    }
    let bakes = find_bakes(&dir);
    if bakes.is_empty() {
        exit_with(&format!("{}: no .rigbake containers", dir.display()));
    }
    let asset_dir = dir.to_string_lossy().into_owned();
    let mut app = App::new();
    let headless = out.is_some() || !cfg!(feature = "window");
    if headless {
        let out = out.unwrap_or_else(|| PathBuf::from("crowd.png"));
        app.add_plugins(bevy_rigbake::headless::plugins(asset_dir))
            .add_plugins(bevy_rigbake::headless::run_loop())
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
                1.0 / 30.0,
            )))
            .insert_resource(Headless {
                out,
                frames,
                size: size.clamp(64, 4096),
                target: None,
                frame: 0,
                asked: false,
            })
            .add_systems(Update, screenshot_when_done);
    } else {
        app.add_plugins(DefaultPlugins.set(AssetPlugin {
            file_path: asset_dir,
            meta_check: bevy::asset::AssetMetaCheck::Never,
            ..default()
        }))
        .add_systems(Update, keys);
    }
    app.add_plugins(RigbakePlugin)
        .insert_resource(Bakes(bakes))
        .add_systems(Startup, setup)
        .add_systems(Update, spawn_crowd);
    match app.run() {
        AppExit::Success => {}
        AppExit::Error(code) => std::process::exit(i32::from(code.get())),
    }
}

fn exit_with(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2)
}

#[derive(Resource)]
struct Bakes(Vec<String>);

/// The containers under `dir` (paths relative to it, sorted), bounded in
/// depth and count.
fn find_bakes(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < MAX_DEPTH {
                stack.push((p, depth + 1));
            } else if kind.is_file() && p.extension().is_some_and(|e| e == "rigbake") {
                if let Ok(rel) = p.strip_prefix(dir) {
                    found.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    found.sort();
    found.truncate(MAX_BAKES);
    found
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    bakes: Res<Bakes>,
    mut images: ResMut<Assets<Image>>,
    headless: Option<ResMut<Headless>>,
) {
    let stagger = headless.is_none();
    let handles: Vec<(String, Handle<RigbakeBake>)> = bakes
        .0
        .iter()
        .map(|b| (b.clone(), assets.load(b.clone())))
        .collect();
    commands.insert_resource(Crowd {
        bakes: handles,
        slots: Vec::new(),
        columns: 1,
        spawned: false,
        failed: Vec::new(),
        clip: 0,
        stagger,
    });
    let mut camera = commands.spawn((
        Camera3d::default(),
        Projection::Orthographic(OrthographicProjection::default_3d()),
        Transform::default(),
        Msaa::Off,
    ));
    if let Some(mut h) = headless {
        let target = bevy_rigbake::headless::render_target(&mut images, h.size);
        camera.insert((
            Camera {
                clear_color: ClearColorConfig::Custom(Color::NONE),
                ..default()
            },
            RenderTarget::Image(target.clone().into()),
            Tonemapping::None,
        ));
        h.target = Some(target);
    }
    commands.spawn(bevy_rigbake::headless::key_light());
}

/// The paths a bake can be drawn on.
fn paths(bake: &RigbakeBake) -> Vec<RigbakePath> {
    let mut out = Vec::new();
    if bake.vat.is_some() {
        out.push(RigbakePath::Vat);
    }
    if bake.bones.is_some() {
        out.push(RigbakePath::Bones);
    }
    out
}

/// The rest-pose box of a bake's meshes on `path`, placed; None until
/// they are loaded.
fn extent(bake: &RigbakeBake, path: RigbakePath, meshes: &Assets<Mesh>) -> Option<(Vec3, Vec3)> {
    let parts: Vec<(&Handle<Mesh>, Mat4)> = match (path, &bake.vat, &bake.bones) {
        (RigbakePath::Vat, Some(v), _) => v
            .primitives
            .iter()
            .map(|p| (&p.mesh, v.placement))
            .collect(),
        (_, _, Some(b)) => b
            .primitives
            .iter()
            .map(|p| (&p.mesh, p.placement))
            .collect(),
        _ => Vec::new(),
    };
    let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for (mesh, placement) in parts {
        let aabb = meshes.get(mesh)?.compute_aabb()?;
        for corner in [aabb.min(), aabb.max()] {
            let p = placement.transform_point3(corner.into());
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    (lo.x <= hi.x).then_some((lo, hi))
}

/// Once every bake has loaded (or failed), stands each in the crowd once
/// per path, scaled into its grid cell, and frames the grid.
#[allow(clippy::too_many_arguments)]
fn spawn_crowd(
    mut commands: Commands,
    mut crowd: ResMut<Crowd>,
    assets: Res<AssetServer>,
    bakes: Res<Assets<RigbakeBake>>,
    meshes: Res<Assets<Mesh>>,
    mut camera: Query<(&mut Transform, &mut Projection), With<Camera3d>>,
    mut exit: MessageWriter<AppExit>,
) {
    if crowd.spawned {
        return;
    }
    use bevy::asset::RecursiveDependencyLoadState as State;
    let mut failed = Vec::new();
    let mut ready = Vec::new();
    for (name, handle) in &crowd.bakes {
        match assets.get_recursive_dependency_load_state(handle) {
            Some(State::Loaded) => ready.push((name.clone(), handle.clone())),
            Some(State::Failed(e)) => failed.push(format!("{name}: {e}")),
            _ => return,
        }
    }
    let mut placed = Vec::new();
    for (name, handle) in &ready {
        let Some(bake) = bakes.get(handle) else {
            return;
        };
        for path in paths(bake) {
            // The bake's animated bounds, else the meshes' rest pose.
            let Some(bounds) = bake.bounds.or_else(|| extent(bake, path, &meshes)) else {
                return;
            };
            placed.push((name.clone(), handle.clone(), path, bounds));
        }
    }
    let columns = (placed.len() as f32).sqrt().ceil().max(1.0) as u32;
    let rows = (placed.len() as u32).div_ceil(columns).max(1);
    for (i, (name, handle, path, (lo, hi))) in placed.into_iter().enumerate() {
        let cell = UVec2::new(i as u32 % columns, i as u32 / columns);
        let scale = 0.8 / (hi - lo).max_element().max(1e-6);
        let center = (lo + hi) * 0.5 * scale;
        let mut instance = RigbakeInstance::new(handle);
        instance.path = path;
        let start = if crowd.stagger { i as f64 * 0.13 } else { 0.0 };
        instance.play(0, 1.0, Some(true)).seek(start);
        commands.spawn((
            instance,
            Transform::from_translation(Vec3::new(cell.x as f32, -(cell.y as f32), 0.0) - center)
                .with_scale(Vec3::splat(scale)),
        ));
        println!(
            "crowd: {name} on the {} path in cell {cell}, box {lo} .. {hi}",
            path_name(path)
        );
        crowd.slots.push((name, path, cell));
    }
    // A front view (looking down -Z) of the grid, one unit a cell.
    if let Ok((mut t, mut p)) = camera.single_mut() {
        // A square of `side` cells whose top-left cell is the image's.
        let side = columns.max(rows) as f32;
        let middle = Vec3::new((side - 1.0) * 0.5, -(side - 1.0) * 0.5, 0.0);
        *t = Transform::from_translation(middle + Vec3::Z * 50.0).looking_at(middle, Vec3::Y);
        *p = Projection::Orthographic(OrthographicProjection {
            near: 0.0,
            far: 100.0,
            scaling_mode: ScalingMode::Fixed {
                width: side,
                height: side,
            },
            ..OrthographicProjection::default_3d()
        });
    }
    crowd.columns = columns.max(rows);
    for f in &failed {
        eprintln!("crowd: FAILED {f}");
    }
    crowd.failed = failed;
    crowd.spawned = true;
    if crowd.slots.is_empty() {
        exit.write(AppExit::from_code(1));
    }
}

fn path_name(path: RigbakePath) -> &'static str {
    match path {
        RigbakePath::Bones => "bones",
        _ => "vat",
    }
}

/// Headless: after the frames asked for, one screenshot; then the pixels
/// each instance drew in its cell, and the exit code.
fn screenshot_when_done(
    mut commands: Commands,
    mut headless: ResMut<Headless>,
    crowd: Res<Crowd>,
    spawned: Query<(), With<RigbakeSpawned>>,
) {
    if !crowd.spawned || headless.asked || spawned.iter().count() < crowd.slots.len() {
        return;
    }
    headless.frame += 1;
    if headless.frame < headless.frames {
        return;
    }
    headless.asked = true;
    let Some(target) = headless.target.clone() else {
        return;
    };
    let out = headless.out.clone();
    let slots = crowd.slots.clone();
    let cells = crowd.columns;
    let failed = crowd.failed.len();
    commands.spawn(Screenshot::image(target)).observe(
        move |ev: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
            let image = ev
                .image
                .clone()
                .try_into_dynamic()
                .expect("a screenshot")
                .to_rgba8();
            let (w, h) = image.dimensions();
            if let Err(e) = image.save(&out) {
                eprintln!("crowd: {}: {e}", out.display());
                exit.write(AppExit::from_code(1));
                return;
            }
            let cell_px = w as f32 / cells as f32;
            let mut empty = 0;
            for (name, path, cell) in &slots {
                let x0 = (cell.x as f32 * cell_px) as u32;
                let y0 = (cell.y as f32 * cell_px) as u32;
                let x1 = (((cell.x + 1) as f32 * cell_px) as u32).min(w);
                let y1 = (((cell.y + 1) as f32 * cell_px) as u32).min(h);
                let drawn = (y0..y1)
                    .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                    .filter(|&(x, y)| image.get_pixel(x, y)[3] > 127)
                    .count();
                println!("crowd: {name} {}: {drawn} pixels", path_name(*path));
                empty += usize::from(drawn == 0);
            }
            println!(
                "crowd: wrote {} ({} instances, {failed} bakes failed)",
                out.display(),
                slots.len()
            );
            exit.write(if failed > 0 || empty > 0 {
                AppExit::from_code(1)
            } else {
                AppExit::Success
            });
        },
    );
}

/// Window: `N` next clip, `C` crossfade to it, `P` other path, `Space`
/// pause.
fn keys(
    mut commands: Commands,
    input: Res<ButtonInput<KeyCode>>,
    mut crowd: ResMut<Crowd>,
    bakes: Res<Assets<RigbakeBake>>,
    mut instances: Query<(Entity, &mut RigbakeInstance)>,
    mut paused: Local<bool>,
) {
    let next = input.just_pressed(KeyCode::KeyN);
    let fade = input.just_pressed(KeyCode::KeyC);
    if next || fade {
        crowd.clip += 1;
    }
    if input.just_pressed(KeyCode::Space) {
        *paused = !*paused;
    }
    for (entity, mut instance) in &mut instances {
        instance.speed = if *paused { 0.0 } else { 1.0 };
        let Some(bake) = bakes.get(&instance.bake) else {
            continue;
        };
        let clip = crowd.clip % bake.clips.len().max(1);
        if next {
            instance.play(clip, 1.0, Some(true));
        } else if fade {
            instance.crossfade(clip, 1.0, 0.5);
        }
        if input.just_pressed(KeyCode::KeyP) {
            let other = match instance.path {
                RigbakePath::Bones if bake.vat.is_some() => RigbakePath::Vat,
                _ if bake.bones.is_some() => RigbakePath::Bones,
                p => p,
            };
            if other != instance.path {
                instance.path = other;
                // The plugin spawns the other path's primitives anew.
                commands
                    .entity(entity)
                    .remove::<(RigbakeSpawned, bevy_rigbake::rig::RigbakePropsSpawned)>()
                    .despawn_related::<Children>();
            }
        }
    }
}
