//! The meshes rigbake writes (`.weights.glb`, `.vat.glb`) keep the source's
//! look: materials, textures, samplers and images (embedded whatever their
//! source), material extensions listed in `extensionsUsed`, and they stay
//! valid under the Khronos glTF-Validator. Expected images come from the
//! source files (read with the gltf crate) or from the fixture generator,
//! never from rigbake.

mod common;

use std::path::{Path, PathBuf};

use common::{bake, shared_models};
use serde_json::Value;

/// The JSON chunk and BIN chunk of a GLB.
fn glb_parts(file: &Path) -> (Value, Vec<u8>) {
    let raw = std::fs::read(file).unwrap();
    let g = gltf::Gltf::from_slice(&raw).unwrap();
    let n = u32::from_le_bytes(raw[12..16].try_into().unwrap()) as usize;
    let full: Value = serde_json::from_slice(&raw[20..20 + n]).unwrap();
    (full, g.blob.unwrap_or_default())
}

/// The bytes of image `i` of a GLB (a buffer view of its BIN chunk).
fn image_bytes(json: &Value, bin: &[u8], i: usize) -> Vec<u8> {
    let view = &json["bufferViews"][json["images"][i]["bufferView"].as_u64().unwrap() as usize];
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let len = view["byteLength"].as_u64().unwrap() as usize;
    bin[start..start + len].to_vec()
}

fn assert_valid(file: &Path) {
    if let Some(issues) = common::gltf_validator(file) {
        assert_eq!(issues["numErrors"], 0, "{}: {issues}", file.display());
        assert_eq!(issues["numWarnings"], 0, "{}: {issues}", file.display());
    }
}

fn meshes_of(out: &Path, name: &str) -> Vec<PathBuf> {
    ["weights", "vat"]
        .map(|kind| out.join(name).join(format!("{name}.{kind}.glb")))
        .to_vec()
}

#[test]
fn cesium_man_meshes_keep_the_base_colour_texture() {
    let Some(shared) = shared_models("cesium_man_meshes_keep_the_base_colour_texture") else {
        return;
    };
    let model = shared.join("khronos/CesiumMan.glb");
    // The source's base-colour image, read with the gltf crate.
    let source = gltf::Gltf::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    let blob = source.blob.clone().unwrap();
    let material = source.document.materials().next().unwrap();
    let info = material
        .pbr_metallic_roughness()
        .base_color_texture()
        .expect("CesiumMan has a base-colour texture");
    let want = match info.texture().source().source() {
        gltf::image::Source::View { view, .. } => {
            blob[view.offset()..view.offset() + view.length()].to_vec()
        }
        gltf::image::Source::Uri { .. } => panic!("CesiumMan embeds its image"),
    };
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model), out.path(), &["--vat"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for file in meshes_of(out.path(), "CesiumMan") {
        assert_valid(&file);
        let (json, bin) = glb_parts(&file);
        let m = &json["materials"][0];
        assert_eq!(m["name"], material.name().unwrap(), "{}", file.display());
        let t = m["pbrMetallicRoughness"]["baseColorTexture"]["index"]
            .as_u64()
            .expect("a base-colour texture") as usize;
        let image = json["textures"][t]["source"].as_u64().unwrap() as usize;
        assert_eq!(json["images"][image]["mimeType"], "image/jpeg");
        assert!(
            image_bytes(&json, &bin, image) == want,
            "{}: image bytes",
            file.display()
        );
        // Every mesh primitive still points at the material.
        for mesh in json["meshes"].as_array().unwrap() {
            for p in mesh["primitives"].as_array().unwrap() {
                assert_eq!(p["material"], 0);
            }
        }
    }
}

#[test]
fn file_and_data_uri_images_are_embedded_with_their_extensions() {
    use rigbake_fixtures::looks::{emissive_png, textured_png};
    let model = rigbake_fixtures::fixture("textured.gltf");
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model), out.path(), &["--vat"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for file in meshes_of(out.path(), "textured") {
        assert_valid(&file);
        let (json, bin) = glb_parts(&file);
        assert_eq!(image_bytes(&json, &bin, 0), textured_png());
        assert_eq!(image_bytes(&json, &bin, 1), emissive_png());
        assert_eq!(json["images"][0]["name"], "checker");
        assert_eq!(json["images"][1]["mimeType"], "image/png");
        assert!(json["images"][0].get("uri").is_none());
        let m = &json["materials"][0];
        assert_eq!(
            m["pbrMetallicRoughness"]["baseColorTexture"]["extensions"]["KHR_texture_transform"]["offset"],
            serde_json::json!([0.5, 0.0])
        );
        assert_eq!(
            m["emissiveTexture"],
            serde_json::json!({"index": 1, "texCoord": 2})
        );
        assert_eq!(
            m["extensions"]["KHR_materials_emissive_strength"]["emissiveStrength"],
            2.0
        );
        assert_eq!(
            json["extensionsUsed"],
            serde_json::json!(["KHR_materials_emissive_strength", "KHR_texture_transform"])
        );
        assert_eq!(json["samplers"][0]["magFilter"], 9728);
        assert_eq!(
            json["textures"][0],
            serde_json::json!({"sampler": 0, "source": 0})
        );
    }
}

#[test]
fn an_unreadable_image_is_left_out_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("textured.gltf");
    std::fs::copy(rigbake_fixtures::fixture("textured.gltf"), &model).unwrap();
    // textured.png is missing: images[0] cannot be read.
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model), out.path(), &["--vat"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning:")
            && stderr.contains("images[0]")
            && stderr.contains("textured.png"),
        "{stderr}"
    );
    for file in meshes_of(out.path(), "textured") {
        assert_valid(&file);
        let (json, bin) = glb_parts(&file);
        assert_eq!(json["images"].as_array().unwrap().len(), 1);
        assert_eq!(
            image_bytes(&json, &bin, 0),
            rigbake_fixtures::looks::emissive_png()
        );
        assert_eq!(json["textures"], serde_json::json!([{"source": 0}]));
        let m = &json["materials"][0];
        // The base colour lost its texture, kept its factors; the emission
        // texture is renumbered.
        assert!(
            m["pbrMetallicRoughness"].get("baseColorTexture").is_none(),
            "{m}"
        );
        assert_eq!(m["pbrMetallicRoughness"]["metallicFactor"], 0.0);
        assert_eq!(m["emissiveTexture"]["index"], 0);
        assert_eq!(
            json["extensionsUsed"],
            serde_json::json!(["KHR_materials_emissive_strength"])
        );
    }
}

#[test]
fn a_changed_image_makes_the_bake_out_of_date() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("textured.gltf");
    std::fs::copy(rigbake_fixtures::fixture("textured.gltf"), &model).unwrap();
    std::fs::write(
        dir.path().join("textured.png"),
        rigbake_fixtures::looks::textured_png(),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let first = bake(std::slice::from_ref(&model), out.path(), &[]);
    assert!(first.status.success());
    let again = bake(std::slice::from_ref(&model), out.path(), &[]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("0 baked, 1 up to date"), "{stderr}");
    std::fs::write(
        dir.path().join("textured.png"),
        rigbake_fixtures::looks::emissive_png(),
    )
    .unwrap();
    let changed = bake(std::slice::from_ref(&model), out.path(), &[]);
    let stderr = String::from_utf8_lossy(&changed.stderr);
    assert!(stderr.contains("1 baked, 0 up to date"), "{stderr}");
    let (json, bin) = glb_parts(&out.path().join("textured/textured.weights.glb"));
    assert_eq!(
        image_bytes(&json, &bin, 0),
        rigbake_fixtures::looks::emissive_png()
    );
}
