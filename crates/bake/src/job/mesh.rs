//! Turning model primitives into GLB primitives for the meshes rigbake
//! writes (VAT playback, bone-weight meshes): topology, UVs, indices and
//! materials by reference are kept; vertex order never changes.

use rigbake_core::Model;
use rigbake_core::model::Primitive;
use rigbake_format::glb::{GlbMaterial, GlbPrimitive};

/// Every material of the model by reference: its name, and its index in the
/// source file under `extras.source_material`.
pub(super) fn materials(model: &Model) -> Vec<GlbMaterial> {
    model
        .materials
        .iter()
        .enumerate()
        .map(|(i, name)| GlbMaterial {
            name: name.clone(),
            extras: Some(serde_json::json!({ "source_material": i })),
        })
        .collect()
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
