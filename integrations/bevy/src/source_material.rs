//! The materials instances are drawn with: each primitive's own material
//! as the bake's playback or weights mesh file carries it (rigbake copies
//! the source's materials and textures into those files), turned into a
//! `StandardMaterial` by Bevy's glTF loader. A file that fails to load, or
//! a primitive without a material, gets a plain grey.

use bevy::ecs::system::SystemParam;
use bevy::gltf::{Gltf, GltfMesh};
use bevy::prelude::*;

/// A material is not loaded yet: try again next frame.
pub(crate) struct Pending;

/// What finds a primitive's material in a loaded glTF file.
#[derive(SystemParam)]
pub(crate) struct SourceMaterials<'w> {
    assets: Res<'w, AssetServer>,
    gltfs: Res<'w, Assets<Gltf>>,
    meshes: Res<'w, Assets<GltfMesh>>,
    materials: Res<'w, Assets<StandardMaterial>>,
}

impl SourceMaterials<'_> {
    /// The material of primitive `primitive` of mesh `mesh` in `file`
    /// (the StandardMaterial Bevy's glTF loader makes of it, label
    /// `<material>/std`), without a normal map: the plugin's vertex stages
    /// deform no tangents. Grey when the file failed to load or the
    /// primitive has no material.
    pub(crate) fn get(
        &self,
        file: &Handle<Gltf>,
        mesh: usize,
        primitive: usize,
    ) -> Result<StandardMaterial, Pending> {
        use bevy::asset::RecursiveDependencyLoadState as State;
        match self.assets.get_recursive_dependency_load_state(file) {
            Some(State::Loaded) => {}
            Some(State::Failed(_)) | None => return Ok(base_material()),
            _ => return Err(Pending),
        }
        let material = self
            .gltfs
            .get(file)
            .and_then(|g| self.meshes.get(g.meshes.get(mesh)?))
            .and_then(|m| m.primitives.get(primitive)?.material.as_ref())
            .and_then(|h| {
                let path = h.path()?;
                let label = format!("{}/std", path.label()?);
                let std = self
                    .assets
                    .get_handle::<StandardMaterial>(path.clone().with_label(label))?;
                self.materials.get(&std).cloned()
            });
        Ok(material.map_or_else(base_material, |mut m| {
            m.normal_map_texture = None;
            m
        }))
    }
}

/// A plain grey, back faces culled: for primitives without a material.
pub(crate) fn base_material() -> StandardMaterial {
    StandardMaterial {
        base_color: Color::srgb(0.8, 0.8, 0.8),
        cull_mode: Some(bevy::render::render_resource::Face::Back),
        ..default()
    }
}
