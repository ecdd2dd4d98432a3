//! Turning model primitives into GLB primitives for the meshes rigbake
//! writes (VAT playback, bone-weight meshes): topology, UVs, indices and
//! materials are kept; vertex order never changes. The documents carry the
//! source's look (materials with their textures, samplers and embedded
//! images), so the meshes render as the source did.

use rigbake_core::Model;
use rigbake_core::model::Primitive;
use rigbake_format::glb::{GlbDocument, GlbImage, GlbMaterial, GlbMesh, GlbPrimitive};

/// A GLB document of `meshes` with every material of the model: the
/// source's material properties, textures, samplers and images where the
/// look was loaded, and the material's index in the source under
/// `extras.source_material` (merged into the source's own extras).
pub(super) fn document(model: &Model, meshes: Vec<GlbMesh>) -> GlbDocument {
    let looks = &model.looks;
    GlbDocument {
        meshes,
        materials: model
            .materials
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let mut properties = looks.materials.get(i).cloned().unwrap_or_default();
                properties.remove("name");
                let mut extras = match properties.remove("extras") {
                    Some(serde_json::Value::Object(o)) => o,
                    _ => serde_json::Map::new(),
                };
                extras.insert("source_material".into(), i.into());
                GlbMaterial {
                    name: name.clone(),
                    extras: Some(serde_json::Value::Object(extras)),
                    properties,
                }
            })
            .collect(),
        textures: looks.textures.clone(),
        samplers: looks.samplers.clone(),
        images: looks
            .images
            .iter()
            .map(|image| GlbImage {
                name: image.name.clone(),
                mime_type: image.mime_type.clone(),
                bytes: image.bytes.clone(),
            })
            .collect(),
        extensions_required: looks.extensions_required.clone(),
        generator: format!("rigbake {}", env!("CARGO_PKG_VERSION")),
    }
}

/// A GLB primitive with the source's topology, UV sets, indices and material;
/// the caller fills positions, normals, tangents and extra attributes.
pub(super) fn base(prim: &Primitive) -> GlbPrimitive {
    GlbPrimitive {
        mode: prim.mode,
        tex_coords: prim
            .tex_coords
            .iter()
            .map(|set| set.iter().map(|uv| uv.to_array()).collect())
            .collect(),
        indices: prim.indices.clone(),
        material: prim.material,
        ..GlbPrimitive::default()
    }
}
