//! An app that renders offscreen with no window, as the plugin's checker
//! (`rigbake-bevy-shots`) and benchmark (`crowd-bench`) run: Bevy's
//! default plugins reading assets from one folder, no primary window, a
//! loop that never sleeps, an image to render into, and one light.

use std::time::Duration;

use bevy::app::{PluginGroupBuilder, ScheduleRunnerPlugin};
use bevy::asset::AssetMetaCheck;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::window::ExitCondition;

/// Bevy's default plugins for a windowless app whose assets are under
/// `asset_dir` (no `.meta` files), pipelines compiled before first use.
pub fn plugins(asset_dir: String) -> PluginGroupBuilder {
    DefaultPlugins
        .set(AssetPlugin {
            file_path: asset_dir,
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
        })
}

/// Runs the app's frames back to back (no window to pace them).
pub fn run_loop() -> ScheduleRunnerPlugin {
    ScheduleRunnerPlugin::run_loop(Duration::ZERO)
}

/// A `size` x `size` sRGB RGBA8 image a camera can render into and a
/// screenshot can copy from.
pub fn render_target(images: &mut Assets<Image>, size: u32) -> Handle<Image> {
    let mut target = Image::new_target_texture(size, size, TextureFormat::Rgba8UnormSrgb, None);
    target.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    images.add(target)
}

/// The light the checkers, the benchmark and the example draw under: one
/// directional light from the upper front right, no shadows.
pub fn key_light() -> impl Bundle {
    (
        DirectionalLight {
            illuminance: 8000.0,
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(1.0, 2.0, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
    )
}
