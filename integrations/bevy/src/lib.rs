//! bevy_rigbake: a Rust game plays a rigbake bake.
//!
//! - [`RigbakeLoader`] loads `.rigbake` containers through `rigbake-format`
//!   (every record checked; load errors name the file and the reason).
//! - [`VatMaterial`] draws the vertex-animation path and [`BoneMaterial`]
//!   the bone-matrix path: StandardMaterial shading over vertex stages that
//!   call docs/shaders/rigbake.wgsl's `vat_deform` and `bone_deform`,
//!   imported as a shader module, not copied.
//! - [`RigbakeInstance`] is the per-instance component (clip, time, speed,
//!   crossfade); each frame the plugin turns it into the GPU state of
//!   docs/runtime.md with `rigbake-core`'s runtime reference and writes all
//!   instances of a bake to one storage buffer, read by `MeshTag`, so
//!   instances of a bake draw as instanced batches.
//! - Props baked as anchors (`--props anchors`) follow their anchor tracks,
//!   drawn with the source model's meshes; clips baked in place
//!   (`--root-motion extract`) move an instance whose
//!   [`RigbakeInstance::root_motion`] is set.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_rigbake::{RigbakeInstance, RigbakePlugin};
//!
//! fn setup(mut commands: Commands, assets: Res<AssetServer>) {
//!     let bake = assets.load("Fox/Fox.rigbake");
//!     let mut fox = RigbakeInstance::new(bake);
//!     fox.play(1, 1.0, None);
//!     commands.spawn((fox, Transform::default()));
//! }
//!
//! App::new()
//!     .add_plugins((DefaultPlugins, RigbakePlugin))
//!     .add_systems(Startup, setup)
//!     .run();
//! ```

pub mod animation;
pub mod headless;
pub mod loader;
pub mod material;
pub mod rig;
pub mod shader;
mod source_material;

use bevy::prelude::*;

pub use animation::{RigbakeInstance, RigbakeLod, RigbakePath, RigbakePrimitive, RigbakeSpawned};
pub use loader::{RigbakeBake, RigbakeLoader};
pub use material::{BoneExtension, BoneMaterial, VatExtension, VatMaterial};
pub use rig::{RigbakeProp, RigbakeSettings};

/// Registers the loader, the shaders, the material and the systems.
pub struct RigbakePlugin;

impl Plugin for RigbakePlugin {
    fn build(&self, app: &mut App) {
        shader::register(app);
        app.init_asset::<RigbakeBake>()
            .register_asset_loader(RigbakeLoader)
            .add_plugins(MaterialPlugin::<VatMaterial>::default())
            .add_plugins(MaterialPlugin::<BoneMaterial>::default())
            .init_resource::<animation::BakeDraws>()
            .add_systems(
                PostUpdate,
                (
                    animation::spawn_primitives,
                    animation::update_states,
                    animation::select_lods,
                    rig::spawn_props,
                    rig::follow_anchors,
                )
                    .chain()
                    .before(bevy::transform::TransformSystems::Propagate),
            );
    }
}
