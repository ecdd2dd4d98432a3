//! Compressed models (issue 19, item 14): meshopt-compressed fixtures import
//! to exactly the model their uncompressed originals give (the meshopt codec
//! is lossless without filters; the inputs come from meshoptimizer's own
//! encoder), and damaged or oversized compressed data is a clear error, never
//! a panic. Draco is compared with BrainStem in `crates/cli/tests/compressed.rs`;
//! its damage cases are here.

use rigbake_core::ErrorKind;
use rigbake_core::import::{ImportOptions, Limits, Source, import_slice};
use rigbake_fixtures::builder::Builder;
use rigbake_fixtures::compress::{MESHOPT, meshopt};
use rigbake_fixtures::models;
use rigbake_fixtures::testkit::models::shared_models;
use serde_json::Value;

fn import(bytes: &[u8], options: &ImportOptions) -> rigbake_core::Result<rigbake_core::Model> {
    let source = Source {
        name: "m",
        dir: None,
    };
    std::panic::catch_unwind(|| import_slice(bytes, &source, options))
        .unwrap_or_else(|_| panic!("the importer panicked"))
}

fn fixtures() -> Vec<(&'static str, Builder)> {
    vec![
        ("tentacle", models::tentacle()),
        ("two_skins", models::two_skins()),
        ("eight_influences", models::eight_influences()),
        ("spec_worked_example", models::spec_worked_example()),
    ]
}

#[test]
fn meshopt_compressed_fixtures_import_to_the_same_model() {
    for (name, b) in fixtures() {
        let plain = import(&b.to_glb(), &ImportOptions::default()).expect(name);
        let (packed, views) = meshopt(&b);
        assert!(views >= 4, "{name}: only {views} views compressed");
        let bytes = packed.to_glb();
        let decoded =
            import(&bytes, &ImportOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        same(&decoded, &plain, name);
        // The same through an embedded .gltf (the fallback buffer has no uri).
        let text = packed.to_gltf_embedded();
        let decoded = import(text.as_bytes(), &ImportOptions::default()).expect(name);
        same(&decoded, &plain, &format!("{name} (.gltf)"));
    }
}

/// Each triangle rotated to start at its smallest index: meshopt's
/// triangle codec keeps every triangle and its winding but may rotate its
/// corners.
fn canonical(model: &rigbake_core::Model) -> rigbake_core::Model {
    let mut m = model.clone();
    for prim in m.meshes.iter_mut().flat_map(|mesh| &mut mesh.primitives) {
        if let Some(indices) = &mut prim.indices {
            for t in indices.chunks_exact_mut(3) {
                let k = (0..3).min_by_key(|&k| t[k]).unwrap();
                t.rotate_left(k);
            }
        }
    }
    m
}

/// Asserts two models are equal (up to the rotation of triangle corners),
/// showing where they first differ.
fn same(a: &rigbake_core::Model, b: &rigbake_core::Model, name: &str) {
    let (a, b) = (canonical(a), canonical(b));
    if a != b {
        let (x, y) = (format!("{a:?}"), format!("{b:?}"));
        let at = x.bytes().zip(y.bytes()).take_while(|(p, q)| p == q).count();
        let from = at.saturating_sub(200);
        panic!(
            "{name}: the meshopt copy imports differently:\n  {}\n  {}",
            &x[from..(at + 80).min(x.len())],
            &y[from..(at + 80).min(y.len())]
        );
    }
}

/// The JSON of a builder's document, and a way to write it back.
fn with_json(b: &Builder, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Vec<u8> {
    let mut b = b.clone();
    edit(&mut b.root);
    b.to_glb()
}

fn ext(root: &mut serde_json::Map<String, Value>, view: usize) -> &mut Value {
    &mut root.get_mut("bufferViews").unwrap()[view]["extensions"][MESHOPT]
}

fn compressed_views(b: &Builder) -> Vec<usize> {
    b.root["bufferViews"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, v)| v.get("extensions").is_some())
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn damaged_meshopt_data_is_a_clear_error() {
    let (packed, _) = meshopt(&models::tentacle());
    let views = compressed_views(&packed);
    let options = ImportOptions::default();
    for &v in &views {
        let path = format!("bufferViews[{v}].extensions.{MESHOPT}");
        let (mode, stride, offset, length) = {
            let e = &packed.root["bufferViews"][v]["extensions"][MESHOPT];
            (
                e["mode"].as_str().unwrap().to_owned(),
                e["byteStride"].as_u64().unwrap(),
                e["byteOffset"].as_u64().unwrap() as usize,
                e["byteLength"].as_u64().unwrap() as usize,
            )
        };
        // Cut short: the decoder runs out of data.
        let bytes = with_json(&packed, |r| ext(r, v)["byteLength"] = (length / 2).into());
        let e = import(&bytes, &options).expect_err("truncated stream");
        assert_eq!(e.object, path, "{e}");
        assert!(e.message.contains("damaged"), "{e}");
        // Runs past its buffer.
        let bytes = with_json(&packed, |r| ext(r, v)["byteLength"] = (1usize << 40).into());
        let e = import(&bytes, &options).expect_err("past the buffer");
        assert!(e.message.contains("runs past the end"), "{e}");
        // A wrong header byte.
        let mut broken = packed.clone();
        broken.bin[offset] ^= 0xff;
        let e = import(&broken.to_glb(), &options).expect_err("bad header");
        assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
        // Every other byte flipped in turn: an error or a model, never a panic.
        for k in (offset + 1..offset + length).step_by(7) {
            let mut broken = packed.clone();
            broken.bin[k] = broken.bin[k].wrapping_add(0x5b);
            let _ = import(&broken.to_glb(), &options);
        }
        // Strides and counts the codec cannot take are refused up front.
        let bad_stride = if mode == "ATTRIBUTES" { 6 } else { 3 };
        let bytes = with_json(&packed, |r| ext(r, v)["byteStride"] = bad_stride.into());
        let e = import(&bytes, &options).expect_err("bad stride");
        assert_eq!(e.object, format!("{path}.byteStride"), "{e}");
        if mode == "TRIANGLES" {
            let bytes = with_json(&packed, |r| ext(r, v)["count"] = 7.into());
            let e = import(&bytes, &options).expect_err("count not a multiple of 3");
            assert_eq!(e.object, format!("{path}.count"), "{e}");
        }
        let bytes = with_json(&packed, |r| ext(r, v)["filter"] = "QUATERNION".into());
        if stride != 8 || mode != "ATTRIBUTES" {
            let e = import(&bytes, &options).expect_err("filter on the wrong data");
            assert_eq!(e.object, format!("{path}.filter"), "{e}");
        }
        let bytes = with_json(&packed, |r| ext(r, v)["mode"] = "STRIPS".into());
        let e = import(&bytes, &options).expect_err("unknown mode");
        assert_eq!(e.object, format!("{path}.mode"), "{e}");
    }
}

#[test]
fn meshopt_decoded_sizes_are_bounded_before_allocating() {
    let (packed, _) = meshopt(&models::tentacle());
    let v = compressed_views(&packed)[0];
    // A count of 2^40 elements is refused before anything is allocated.
    let bytes = with_json(&packed, |r| ext(r, v)["count"] = (1u64 << 40).into());
    let e = import(&bytes, &ImportOptions::default()).expect_err("huge count");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert!(e.message.contains("max_decoded_bytes"), "{e}");
    // And the decoded views count against the import's memory budget.
    let tight = ImportOptions {
        limits: Limits {
            max_decoded_bytes: 1000,
            ..Limits::default()
        },
        ..ImportOptions::default()
    };
    let e = import(&packed.to_glb(), &tight).expect_err("over the budget");
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
}

/// The Draco stream of BrainStem_draco's first primitive: (bytes, offset in
/// the BIN chunk's data, length), with the file split into JSON and BIN.
fn draco_file() -> Option<(Value, Vec<u8>)> {
    let dir = shared_models("damaged_draco_streams_are_clear_errors")?;
    let bytes = std::fs::read(dir.join("unsupported/BrainStem_draco.glb")).unwrap();
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let bin = bytes[20 + json_len + 8..].to_vec();
    Some((json, bin))
}

fn glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut b = Builder::new();
    b.root = json.as_object().unwrap().clone();
    b.bin = bin.to_vec();
    b.to_glb()
}

#[test]
fn damaged_draco_streams_are_clear_errors() {
    let Some((json, bin)) = draco_file() else {
        return;
    };
    let options = ImportOptions::default();
    import(&glb(&json, &bin), &options).expect("the intact file imports");
    let prim = &json["meshes"][0]["primitives"][0];
    let view = prim["extensions"]["KHR_draco_mesh_compression"]["bufferView"]
        .as_u64()
        .unwrap() as usize;
    let offset = json["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize;
    let length = json["bufferViews"][view]["byteLength"].as_u64().unwrap() as usize;
    let path = "meshes[0].primitives[0].extensions.KHR_draco_mesh_compression";

    // Cut short.
    let mut short = json.clone();
    short["bufferViews"][view]["byteLength"] = (length / 3).into();
    let e = import(&glb(&short, &bin), &options).expect_err("truncated stream");
    assert_eq!(e.object, path, "{e}");
    // Not a Draco stream at all.
    let mut broken = bin.clone();
    broken[offset..offset + 5].copy_from_slice(b"XXXXX");
    let e = import(&glb(&json, &broken), &options).expect_err("bad magic");
    assert_eq!(e.object, path, "{e}");
    assert!(e.message.contains("damaged"), "{e}");
    // Bytes changed throughout: an error or a model, never a panic or hang.
    for k in (offset + 5..offset + length).step_by(97) {
        let mut broken = bin.clone();
        broken[k] ^= 0xa5;
        let _ = import(&glb(&json, &broken), &options);
    }
    // A stream that decodes more points than the accessor declares is
    // refused by the decoder's limits, not allocated.
    let mut fewer = json.clone();
    let position = prim["attributes"]["POSITION"].as_u64().unwrap() as usize;
    fewer["accessors"][position]["count"] = 3.into();
    let e = import(&glb(&fewer, &bin), &options).expect_err("more points than declared");
    assert!(e.object.starts_with("meshes[0].primitives[0]"), "{e}");
    // An attribute id the stream lacks.
    let mut missing = json.clone();
    missing["meshes"][0]["primitives"][0]["extensions"]["KHR_draco_mesh_compression"]["attributes"]
        ["NORMAL"] = 99.into();
    let e = import(&glb(&missing, &bin), &options).expect_err("missing attribute");
    assert_eq!(e.object, "meshes[0].primitives[0].attributes.NORMAL", "{e}");
}

#[test]
fn a_draco_attribute_the_extension_does_not_name_is_an_error() {
    let Some((mut json, bin)) = draco_file() else {
        return;
    };
    let ext = &mut json["meshes"][0]["primitives"][0]["extensions"]["KHR_draco_mesh_compression"];
    ext["attributes"].as_object_mut().unwrap().remove("NORMAL");
    let e = import(&glb(&json, &bin), &ImportOptions::default()).expect_err("NORMAL has no data");
    assert_eq!(e.object, "meshes[0].primitives[0].attributes.NORMAL", "{e}");
    assert!(e.message.contains("does not name NORMAL"), "{e}");
}

#[test]
fn meshopt_views_follow_the_extensions_rules_and_unread_views_are_never_decoded() {
    let (packed, _) = meshopt(&models::tentacle());
    let options = ImportOptions::default();
    let views = compressed_views(&packed);
    let attributes = views
        .iter()
        .copied()
        .find(|&v| packed.root["bufferViews"][v]["extensions"][MESHOPT]["mode"] == "ATTRIBUTES")
        .expect("a compressed vertex stream");
    let path = format!("bufferViews[{attributes}].extensions.{MESHOPT}");
    let stride = packed.root["bufferViews"][attributes]["extensions"][MESHOPT]["byteStride"]
        .as_u64()
        .unwrap();
    // The parent view's byteStride must equal the extension's: a mismatch
    // used to bake with exit 0 and scrambled positions.
    let bytes = with_json(&packed, |r| {
        r.get_mut("bufferViews").unwrap()[attributes]["byteStride"] = (stride + 4).into();
    });
    let e = import(&bytes, &options).expect_err("strides differ");
    assert_eq!(e.object, format!("{path}.byteStride"), "{e}");
    assert!(
        e.message
            .contains("differs from the buffer view's byteStride"),
        "{e}"
    );
    // Equal strides are fine.
    let bytes = with_json(&packed, |r| {
        r.get_mut("bufferViews").unwrap()[attributes]["byteStride"] = stride.into();
    });
    import(&bytes, &options).expect("equal strides");
    // And its byteLength must be count * byteStride.
    let bytes = with_json(&packed, |r| {
        let count = ext(r, attributes)["count"].as_u64().unwrap();
        ext(r, attributes)["count"] = (count - 1).into();
    });
    let e = import(&bytes, &options).expect_err("count does not fill the view");
    assert_eq!(e.object, format!("{path}.count"), "{e}");
    assert!(e.message.contains("byteLength"), "{e}");
    // A compressed view that no accessor reads is never decoded: damaged
    // data there is no error, and costs nothing.
    let bytes = with_json(&packed, |r| {
        let views = r.get_mut("bufferViews").unwrap().as_array_mut().unwrap();
        let mut unread = views[attributes].clone();
        // Cut to 3 bytes: decoding it would fail as damaged.
        unread["extensions"][MESHOPT]["byteLength"] = 3.into();
        views.push(unread);
    });
    let model = import(&bytes, &options).expect("an unread view is not decoded");
    let plain = import(&packed.to_glb(), &options).unwrap();
    assert_eq!(canonical(&model), canonical(&plain));
}
