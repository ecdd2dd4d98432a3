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

/// The TEXCOORD set a primitive with `source_sets` UV sets gets for the VAT
/// lookup UV: `chosen` (`--lookup-uv-set`), else the lowest free set.
pub(super) fn lookup_set(source_sets: usize, chosen: Option<usize>) -> usize {
    chosen.unwrap_or(source_sets)
}

/// The highest TEXCOORD set three.js reads (`uv3`); sets above it are
/// dropped by its importer.
pub(super) const THREEJS_LAST_UV_SET: u32 = 3;

/// Renumbers the UV sets the materials of `doc` read after a set was
/// inserted at `at` (the sets from `at` on moved up by one): every texture
/// reference's `texCoord` (default 0), and the `texCoord` override of
/// `KHR_texture_transform`, that is `at` or above grows by one.
pub(super) fn shift_material_uv_sets(doc: &mut GlbDocument, at: usize) {
    fn walk(object: &mut serde_json::Map<String, serde_json::Value>, at: usize, info: bool) {
        if info {
            let t = object
                .get("texCoord")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0) as usize;
            if t >= at {
                object.insert("texCoord".into(), (t + 1).into());
            }
        }
        for (key, value) in object.iter_mut() {
            let is_info = key.ends_with("Texture") && value.get("index").is_some();
            let is_transform = key == "KHR_texture_transform";
            match value {
                serde_json::Value::Object(o) if is_transform => {
                    if let Some(t) = o.get("texCoord").and_then(serde_json::Value::as_u64)
                        && t as usize >= at
                    {
                        o.insert("texCoord".into(), (t + 1).into());
                    }
                }
                serde_json::Value::Object(o) => walk(o, at, is_info),
                serde_json::Value::Array(a) => {
                    for v in a.iter_mut().filter_map(serde_json::Value::as_object_mut) {
                        walk(v, at, false);
                    }
                }
                _ => {}
            }
        }
    }
    for m in &mut doc.materials {
        walk(&mut m.properties, at, false);
    }
}

/// Puts `values` in UV set `set` of `prim`, moving the sets from `set` on up
/// by one; when the primitive has fewer sets, the gap is filled with copies
/// of `values` (glTF wants sets numbered from 0 without gaps).
pub(super) fn insert_uv_set(prim: &mut GlbPrimitive, set: usize, values: Vec<[f32; 2]>) {
    while prim.tex_coords.len() < set {
        prim.tex_coords.push(values.clone());
    }
    prim.tex_coords.insert(set, values);
}
