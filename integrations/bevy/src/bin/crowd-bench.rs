//! crowd_bench: N instances of one bake animated by bevy_rigbake, headless,
//! rendered offscreen (lavapipe here; any wgpu adapter), on its VAT path or
//! its bone path, each instance at its own time in clip 0. Prints the mean
//! frame time (wall clock, render included) and the mean CPU time of the
//! main world's frame (from `First` to `Last`: the state system and
//! everything else Bevy does on the main thread), over `--frames` frames
//! after `--warm-up` frames.
//!
//! ```text
//! crowd-bench ASSET_DIR --bake Fox/Fox.rigbake --path vat|bones --count N [--frames F] [--warm-up W]
//! ```
//!
//! The bake (with `--vat --normals` for the VAT path) is relative to
//! ASSET_DIR. Bevy's own `SkinnedMesh` animation of the same crowd is not
//! here yet: spawning glTF scenes needs the types they hold registered for
//! reflection, which this build's Bevy features leave out.

use std::time::{Duration, Instant};

use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy_rigbake::{RigbakeInstance, RigbakePath, RigbakePlugin, headless};

#[derive(Resource, Clone)]
struct Args {
    bake: String,
    path: String,
    count: usize,
    frames: u32,
    warm_up: u32,
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
        path: "vat".into(),
        count: 1000,
        frames: 60,
        warm_up: 10,
    };
    while let Some(flag) = argv.next() {
        let value = argv
            .next()
            .unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--bake" => args.bake = value,
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
        RenderTarget::Image(target.into()),
        Transform::from_xyz(side * 0.5, side * 2.0, side * 2.5)
            .looking_at(Vec3::new(side * 0.5, 0.0, side * 0.5), Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(1.0, 2.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
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

fn main_start(mut clock: ResMut<Clock>) {
    clock.main_start = Some(Instant::now());
    if clock.started.is_none() {
        clock.started = Some(Instant::now());
    }
}

fn main_end(mut clock: ResMut<Clock>, args: Res<Args>, mut exit: MessageWriter<AppExit>) {
    clock.frame += 1;
    let Some(start) = clock.main_start else {
        return;
    };
    if clock.frame == args.warm_up {
        clock.window_start = Some(Instant::now());
        return;
    }
    if clock.frame > args.warm_up {
        clock.main_total += start.elapsed();
        clock.measured += 1;
    }
    if clock.measured == args.frames {
        let wall = clock.window_start.map_or(Duration::ZERO, |w| w.elapsed());
        let n = f64::from(clock.measured);
        println!(
            "crowd_bench path={} count={} frames={}: frame {:.2} ms, main-world CPU {:.3} ms",
            args.path,
            args.count,
            clock.measured,
            wall.as_secs_f64() * 1e3 / n,
            clock.main_total.as_secs_f64() * 1e3 / n
        );
        exit.write(AppExit::Success);
    }
}
