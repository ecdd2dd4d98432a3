//! The GLB writer: re-import with the `gltf` crate, the Khronos
//! glTF-Validator, determinism, index widths and every refusal.
//!
//! The validator test needs `node` and the npm package installed in
//! `tools/node/` (`npm ci --prefix tools/node`). Without them it is skipped
//! with a message, unless `RIGBAKE_REQUIRE_GLTF_VALIDATOR` is set (CI sets
//! it), in which case it fails.

use gltf::mesh::Semantic;
use rigbake_fixtures::testkit::gltf_validator;
use rigbake_format::FormatError;
use rigbake_format::glb::{
    GlbDocument, GlbMaterial, GlbMesh, GlbPrimitive, PrimitiveMode, write_glb, write_glb_to,
};
use serde_json::json;

/// A flat `w` x `h` vertex grid in the XY plane, facing +Z, two triangles per
/// cell, with normals, tangents and one UV set.
fn grid(w: usize, h: usize) -> GlbPrimitive {
    let mut p = GlbPrimitive::default();
    let mut uv = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let (u, v) = (x as f32 / (w - 1) as f32, y as f32 / (h - 1) as f32);
            p.positions.push([u * 2.0 - 1.0, v * 3.0, 0.25]);
            uv.push([u, 1.0 - v]);
        }
    }
    let n = w * h;
    p.normals = Some(vec![[0.0, 0.0, 1.0]; n]);
    p.tangents = Some(vec![[1.0, 0.0, 0.0, 1.0]; n]);
    p.tex_coords = vec![uv];
    let mut indices = Vec::new();
    for y in 0..h - 1 {
        for x in 0..w - 1 {
            let i = (y * w + x) as u32;
            let (r, u, ru) = (i + 1, i + w as u32, i + w as u32 + 1);
            indices.extend_from_slice(&[i, r, ru, i, ru, u]);
        }
    }
    p.indices = Some(indices);
    p
}

/// A "VAT playback mesh": baked geometry with a second UV set that holds each
/// vertex's texel in the vertex-animation texture.
fn vat_doc() -> GlbDocument {
    let mut body = grid(4, 3);
    let vat_uv: Vec<[f32; 2]> = (0..body.positions.len())
        .map(|i| [(i as f32 + 0.5) / 16.0, 0.5 / 4.0])
        .collect();
    body.tex_coords.push(vat_uv);
    body.material = Some(1);
    // An unindexed triangle with a tilted normal and a mirrored tangent.
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let wing = GlbPrimitive {
        positions: vec![[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [0.0, 1.0, -0.75]],
        normals: Some(vec![[0.0, s, s], [0.0, s, s], [0.0, s, s]]),
        tangents: Some(vec![[1.0, 0.0, 0.0, -1.0]; 3]),
        tex_coords: vec![vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]; 2],
        material: Some(0),
        ..Default::default()
    };
    GlbDocument {
        meshes: vec![
            GlbMesh {
                name: "Body".into(),
                primitives: vec![body, wing],
                matrix: None,
            },
            GlbMesh {
                name: "Héad \"quoted\"".into(),
                primitives: vec![grid(3, 3)],
                matrix: None,
            },
        ],
        materials: vec![
            GlbMaterial {
                name: "skin".into(),
                extras: Some(json!({ "source_material": 3 })),
                ..Default::default()
            },
            GlbMaterial {
                name: "cloth".into(),
                extras: None,
                ..Default::default()
            },
        ],
        generator: "rigbake test".into(),
        ..Default::default()
    }
}

/// A "bone-weight mesh": (bone index, weight) pairs as application-specific
/// attributes, no JOINTS/WEIGHTS.
fn bone_weight_doc() -> GlbDocument {
    let mut prim = grid(5, 2);
    let n = prim.positions.len();
    prim.custom = vec![
        (
            "_BONES".into(),
            (0..n).map(|i| [i as f32 % 4.0, 1.0, 2.0, 7.0]).collect(),
        ),
        (
            "_WEIGHTS".into(),
            (0..n)
                .map(|i| [0.5, 0.25, 0.25 - i as f32 / 100.0, i as f32 / 100.0])
                .collect(),
        ),
    ];
    GlbDocument {
        meshes: vec![GlbMesh {
            name: "skinned".into(),
            primitives: vec![prim],
            matrix: None,
        }],
        materials: vec![],
        generator: "rigbake test".into(),
        ..Default::default()
    }
}

/// Points, `n` vertices, indexed in order.
fn points_doc(n: usize) -> GlbDocument {
    let prim = GlbPrimitive {
        mode: PrimitiveMode::Points,
        positions: (0..n).map(|i| [i as f32, (i % 7) as f32, -1.0]).collect(),
        indices: Some((0..n as u32).rev().collect()),
        ..Default::default()
    };
    GlbDocument {
        meshes: vec![GlbMesh {
            name: "points".into(),
            primitives: vec![prim],
            matrix: None,
        }],
        materials: vec![],
        generator: String::new(),
        ..Default::default()
    }
}

/// The JSON chunk of a GLB, checking the framing on the way.
fn json_chunk(glb: &[u8]) -> serde_json::Value {
    let word = |at: usize| u32::from_le_bytes(glb[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(&glb[..4], b"glTF");
    assert_eq!(word(4), 2);
    assert_eq!(word(8), glb.len());
    let json_len = word(12);
    assert_eq!(&glb[16..20], b"JSON");
    assert_eq!(json_len % 4, 0);
    let json = &glb[20..20 + json_len];
    let bin_at = 20 + json_len;
    assert_eq!(word(bin_at) % 4, 0);
    assert_eq!(&glb[bin_at + 4..bin_at + 8], b"BIN\0");
    assert_eq!(bin_at + 8 + word(bin_at), glb.len());
    serde_json::from_slice(json).unwrap()
}

/// Re-imports `bytes` and checks that it holds exactly `doc`.
fn assert_round_trip(doc: &GlbDocument, bytes: &[u8]) {
    let gltf = gltf::Gltf::from_slice(bytes).expect("gltf crate reads the GLB");
    let blob = gltf.blob.as_deref().expect("BIN chunk");
    let buffers = |_: gltf::Buffer<'_>| Some(blob);
    let asset = &gltf.document.as_json().asset;
    assert_eq!(asset.generator.as_deref(), Some(doc.generator.as_str()));
    assert_eq!(asset.version, "2.0");

    let scene = gltf.default_scene().expect("default scene");
    let nodes: Vec<_> = scene.nodes().collect();
    assert_eq!(nodes.len(), doc.meshes.len());
    assert_eq!(gltf.meshes().len(), doc.meshes.len());
    for (node, want) in nodes.iter().zip(&doc.meshes) {
        assert_eq!(node.name(), Some(want.name.as_str()));
        let identity =
            std::array::from_fn(|c| std::array::from_fn(|r| f32::from(u8::from(r == c))));
        assert_eq!(node.transform().matrix(), identity);
        assert_eq!(node.children().len(), 0);
        let mesh = node.mesh().expect("node has a mesh");
        assert_eq!(mesh.name(), Some(want.name.as_str()));
        assert_eq!(mesh.primitives().len(), want.primitives.len());
        for (prim, want) in mesh.primitives().zip(&want.primitives) {
            assert_eq!(prim.mode().as_gl_enum(), want.mode.gltf_mode());
            let r = prim.reader(buffers);
            let got: Vec<_> = r.read_positions().unwrap().collect();
            assert_eq!(got, want.positions);
            let got = r.read_normals().map(|it| it.collect::<Vec<_>>());
            assert_eq!(got, want.normals);
            let got = r.read_tangents().map(|it| it.collect::<Vec<_>>());
            assert_eq!(got, want.tangents);
            for (set, uv) in want.tex_coords.iter().enumerate() {
                let got: Vec<_> = r.read_tex_coords(set as u32).unwrap().into_f32().collect();
                assert_eq!(&got, uv, "TEXCOORD_{set}");
            }
            assert!(r.read_tex_coords(want.tex_coords.len() as u32).is_none());
            assert!(r.read_joints(0).is_none() && r.read_weights(0).is_none());
            let got = r.read_indices().map(|it| it.into_u32().collect::<Vec<_>>());
            assert_eq!(got, want.indices);
            for (name, values) in &want.custom {
                let semantic = Semantic::Extras(name[1..].to_string());
                let accessor = prim.get(&semantic).expect("custom attribute present");
                assert_eq!(accessor.data_type(), gltf::accessor::DataType::F32);
                assert_eq!(accessor.dimensions(), gltf::accessor::Dimensions::Vec4);
                let got: Vec<[f32; 4]> = gltf::accessor::Iter::new(accessor, buffers)
                    .unwrap()
                    .collect();
                assert_eq!(&got, values, "{name}");
            }
            let expected = 1
                + usize::from(want.normals.is_some())
                + usize::from(want.tangents.is_some())
                + want.tex_coords.len()
                + want.custom.len();
            assert_eq!(prim.attributes().count(), expected);
            assert_eq!(prim.material().index(), want.material);

            // POSITION bounds are exact.
            let pos = prim.get(&Semantic::Positions).unwrap();
            let (min, max) = (pos.min().unwrap(), pos.max().unwrap());
            for c in 0..3 {
                let lo = want
                    .positions
                    .iter()
                    .map(|p| p[c])
                    .fold(f32::INFINITY, f32::min);
                let hi = want
                    .positions
                    .iter()
                    .map(|p| p[c])
                    .fold(f32::NEG_INFINITY, f32::max);
                assert_eq!(min[c].as_f64().unwrap(), f64::from(lo));
                assert_eq!(max[c].as_f64().unwrap(), f64::from(hi));
            }
        }
    }

    assert_eq!(gltf.materials().len(), doc.materials.len());
    for (mat, want) in gltf.materials().zip(&doc.materials) {
        assert_eq!(mat.name(), Some(want.name.as_str()));
        let extras = mat
            .extras()
            .as_ref()
            .map(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).unwrap());
        assert_eq!(extras, want.extras);
        let pbr = mat.pbr_metallic_roughness();
        assert!(pbr.base_color_texture().is_none());
        assert_eq!(pbr.base_color_factor(), [1.0; 4]);
    }

    // One buffer, one tightly packed, aligned view per accessor.
    assert_eq!(gltf.buffers().len(), 1);
    assert_eq!(gltf.views().len(), gltf.accessors().len());
    for view in gltf.views() {
        assert_eq!(view.offset() % 4, 0);
        assert_eq!(view.stride(), None);
        assert!(view.target().is_some());
    }
}

#[test]
fn documents_round_trip_through_the_gltf_crate() {
    for doc in [
        vat_doc(),
        bone_weight_doc(),
        points_doc(10),
        points_doc(70_000),
    ] {
        let bytes = write_glb(&doc).unwrap();
        json_chunk(&bytes);
        assert_round_trip(&doc, &bytes);
    }
}

#[test]
fn output_is_deterministic_and_write_to_matches() {
    let doc = vat_doc();
    let a = write_glb(&doc).unwrap();
    let b = write_glb(&doc.clone()).unwrap();
    assert_eq!(a, b);
    let mut c = Vec::new();
    write_glb_to(&doc, &mut c).unwrap();
    assert_eq!(a, c);
}

#[test]
fn json_layout_follows_the_rules() {
    let doc = vat_doc();
    let json = json_chunk(&write_glb(&doc).unwrap());
    assert_eq!(
        json["asset"],
        json!({ "version": "2.0", "generator": "rigbake test" })
    );
    assert_eq!(json["scene"], 0);
    assert_eq!(json["scenes"], json!([{ "nodes": [0, 1] }]));
    assert_eq!(
        json["nodes"][1],
        json!({ "name": "Héad \"quoted\"", "mesh": 1 })
    );
    assert_eq!(json["materials"][1], json!({ "name": "cloth" }));
    let views = json["bufferViews"].as_array().unwrap();
    let mut end = 0;
    for view in views {
        let offset = view["byteOffset"].as_u64().unwrap();
        assert_eq!(offset % 4, 0);
        assert!(offset >= end && offset - end < 4, "tightly packed");
        end = offset + view["byteLength"].as_u64().unwrap();
        assert!(view.get("byteStride").is_none());
    }
    assert_eq!(json["buffers"][0]["byteLength"], end.next_multiple_of(4));
    let indices = &json["accessors"][json["meshes"][0]["primitives"][0]["indices"]
        .as_u64()
        .unwrap() as usize];
    assert_eq!(indices["componentType"], 5123);
    let view = &views[indices["bufferView"].as_u64().unwrap() as usize];
    assert_eq!(view["target"], 34963);
}

#[test]
fn index_width_follows_the_vertex_count() {
    let component = |n| {
        let json = json_chunk(&write_glb(&points_doc(n)).unwrap());
        json["accessors"][1]["componentType"].as_u64().unwrap()
    };
    assert_eq!(
        component(65_535),
        5123,
        "UNSIGNED_SHORT up to 65535 vertices"
    );
    assert_eq!(component(65_536), 5125, "UNSIGNED_INT above");
}

fn refused(doc: &GlbDocument) -> String {
    let mut out = Vec::new();
    match write_glb_to(doc, &mut out) {
        Err(FormatError::Invalid(msg)) => {
            assert!(out.is_empty(), "nothing written for a refused document");
            msg
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn invalid_documents_are_refused() {
    type Edit = fn(&mut GlbDocument);
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("no meshes", |d| d.meshes.clear(), "no meshes"),
        (
            "no primitives",
            |d| d.meshes[1].primitives.clear(),
            "mesh 1 (\"Héad \\\"quoted\\\"\") has no primitives",
        ),
        (
            "no vertices",
            |d| d.meshes[0].primitives[1] = GlbPrimitive::default(),
            "primitive 1: no vertices",
        ),
        (
            "short normals",
            |d| {
                d.meshes[0].primitives[0].normals.as_mut().unwrap().pop();
            },
            "NORMAL has 11 values but there are 12 positions",
        ),
        (
            "long tangents",
            |d| {
                d.meshes[0].primitives[0]
                    .tangents
                    .as_mut()
                    .unwrap()
                    .push([1.0, 0.0, 0.0, 1.0])
            },
            "TANGENT has 13 values",
        ),
        (
            "short uv",
            |d| {
                d.meshes[0].primitives[0].tex_coords[1].pop();
            },
            "TEXCOORD_1 has 11 values",
        ),
        (
            "short custom",
            |d| d.meshes[0].primitives[0].custom = vec![("_X".into(), vec![[0.0; 4]])],
            "_X has 1 values",
        ),
        (
            "NaN position",
            |d| d.meshes[0].primitives[0].positions[5][1] = f32::NAN,
            "POSITION[5] is not finite",
        ),
        (
            "infinite uv",
            |d| d.meshes[0].primitives[0].tex_coords[0][2][0] = f32::INFINITY,
            "TEXCOORD_0[2] is not finite",
        ),
        (
            "NaN custom",
            |d| d.meshes[0].primitives[0].custom = vec![("_X".into(), vec![[f32::NAN; 4]; 12])],
            "_X[0] is not finite",
        ),
        (
            "long normal",
            |d| d.meshes[0].primitives[0].normals.as_mut().unwrap()[3] = [0.0, 0.0, 1.01],
            "NORMAL[3] is not unit length",
        ),
        (
            "zero tangent",
            |d| d.meshes[0].primitives[0].tangents.as_mut().unwrap()[4] = [0.0, 0.0, 0.0, 1.0],
            "TANGENT[4] xyz is not unit length",
        ),
        (
            "tangent w",
            |d| d.meshes[0].primitives[0].tangents.as_mut().unwrap()[0][3] = 0.5,
            "TANGENT[0] w is not 1 or -1",
        ),
        (
            "tangent without normal",
            |d| d.meshes[0].primitives[0].normals = None,
            "TANGENT without NORMAL",
        ),
        (
            "custom name",
            |d| d.meshes[0].primitives[0].custom = vec![("BONES".into(), vec![[0.0; 4]; 12])],
            "custom attribute \"BONES\" must be '_' followed by a name",
        ),
        (
            "bare underscore",
            |d| d.meshes[0].primitives[0].custom = vec![("_".into(), vec![[0.0; 4]; 12])],
            "custom attribute \"_\" must be",
        ),
        (
            "duplicate custom",
            |d| d.meshes[0].primitives[0].custom = vec![("_A".into(), vec![[0.0; 4]; 12]); 2],
            "custom attribute \"_A\" appears twice",
        ),
        (
            "index out of range",
            |d| d.meshes[0].primitives[0].indices.as_mut().unwrap()[7] = 12,
            "index [7] = 12 is out of range (12 vertices)",
        ),
        (
            "empty indices",
            |d| d.meshes[0].primitives[0].indices = Some(vec![]),
            "the index list is empty",
        ),
        (
            "index count",
            |d| {
                d.meshes[0].primitives[0].indices.as_mut().unwrap().pop();
            },
            "35 vertices or indices do not suit mode Triangles",
        ),
        (
            "vertex count",
            |d| d.meshes[0].primitives[1].mode = PrimitiveMode::Lines,
            "3 vertices or indices do not suit mode Lines",
        ),
        (
            "material",
            |d| d.meshes[1].primitives[0].material = Some(2),
            "mesh 1 (\"Héad \\\"quoted\\\"\") primitive 0: material 2 is out of range (2 materials)",
        ),
        (
            "extras",
            |d| d.materials[1].extras = Some(json!([1, 2])),
            "material 1 (\"cloth\"): extras must be a JSON object",
        ),
    ];
    for (what, edit, expected) in cases {
        let mut doc = vat_doc();
        edit(&mut doc);
        let msg = refused(&doc);
        assert!(msg.starts_with("GLB: "), "{what}: {msg}");
        assert!(msg.contains(expected), "{what}: {msg:?} lacks {expected:?}");
    }
}

#[test]
fn khronos_validator_finds_no_errors_or_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let mut unindexed = vat_doc();
    for prim in &mut unindexed.meshes[0].primitives {
        prim.indices = None;
        prim.mode = PrimitiveMode::Points;
    }
    let big = GlbDocument {
        meshes: vec![GlbMesh {
            name: "big".into(),
            primitives: vec![grid(300, 220)],
            matrix: None,
        }],
        ..bone_weight_doc()
    };
    let docs = [
        ("vat", vat_doc()),
        ("bone_weights", bone_weight_doc()),
        ("unindexed", unindexed),
        ("u32_indices", big),
        ("points", points_doc(5)),
    ];
    for (name, doc) in docs {
        let file = dir.path().join(format!("{name}.glb"));
        std::fs::write(&file, write_glb(&doc).unwrap()).unwrap();
        let Some(report) = gltf_validator::validate(&file) else {
            return;
        };
        let issues = &report["issues"];
        eprintln!("{name}: {issues}");
        assert_eq!(issues["numErrors"], 0, "{name}: {issues:#}");
        assert_eq!(issues["numWarnings"], 0, "{name}: {issues:#}");
    }

    // Negative control: the harness does see errors (a wrong POSITION max).
    let glb = write_glb(&points_doc(5)).unwrap();
    let mut json = json_chunk(&glb);
    json["accessors"][0]["max"][0] = json!(99.0);
    let file = dir.path().join("broken.glb");
    std::fs::write(&file, reframe(&json, &glb)).unwrap();
    let report = gltf_validator::validate(&file).unwrap();
    let codes: Vec<_> = report["issues"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["ACCESSOR_MAX_MISMATCH"], "{report:#}");
}

/// `glb` with its JSON chunk replaced by `json` (BIN chunk kept).
fn reframe(json: &serde_json::Value, glb: &[u8]) -> Vec<u8> {
    let old_json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let bin_chunk = &glb[20 + old_json_len..];
    let mut json = serde_json::to_vec(json).unwrap();
    json.resize(json.len().next_multiple_of(4), b' ');
    let total = 12 + 8 + json.len() + bin_chunk.len();
    let mut out = Vec::new();
    for word in [0x4654_6C67, 2, total as u32, json.len() as u32, 0x4E4F_534A] {
        out.extend_from_slice(&u32::to_le_bytes(word));
    }
    out.extend_from_slice(&json);
    out.extend_from_slice(bin_chunk);
    out
}

/// A document with a textured material: texture 0 (sampler 0, image 0)
/// through `KHR_texture_transform`, texture 1 (image 1) as emission.
fn textured_doc() -> GlbDocument {
    let mut doc = vat_doc();
    let props = json!({
        "pbrMetallicRoughness": {"baseColorTexture": {"index": 0,
            "extensions": {"KHR_texture_transform": {"scale": [2.0, 2.0]}}}},
        "emissiveTexture": {"index": 1},
        "emissiveFactor": [1.0, 1.0, 1.0]
    });
    doc.materials[0].properties = props.as_object().unwrap().clone();
    doc.textures = vec![
        json!({"sampler": 0, "source": 0})
            .as_object()
            .unwrap()
            .clone(),
        json!({"source": 1}).as_object().unwrap().clone(),
    ];
    doc.samplers = vec![json!({"magFilter": 9728}).as_object().unwrap().clone()];
    // Smallest valid PNG and JPEG-like payloads are not needed: the writer
    // never decodes images, it embeds bytes under their MIME type.
    doc.images = vec![
        rigbake_format::glb::GlbImage {
            name: Some("a".into()),
            mime_type: "image/png".into(),
            bytes: vec![1, 2, 3, 4, 5],
        },
        rigbake_format::glb::GlbImage {
            name: None,
            mime_type: "image/jpeg".into(),
            bytes: vec![9; 7],
        },
    ];
    doc.extensions_required = vec!["KHR_texture_transform".into(), "KHR_unused".into()];
    doc
}

#[test]
fn looks_are_embedded_as_buffer_views_with_their_extensions() {
    let bytes = write_glb(&textured_doc()).unwrap();
    // Split by hand: the gltf crate refuses files that require extensions.
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + n]).unwrap();
    let blob = &bytes[20 + n + 8..];
    for (i, want) in [vec![1u8, 2, 3, 4, 5], vec![9; 7]].iter().enumerate() {
        let image = &json["images"][i];
        assert!(image.get("uri").is_none());
        let view = &json["bufferViews"][image["bufferView"].as_u64().unwrap() as usize];
        assert!(view.get("target").is_none(), "{view}");
        let start = view["byteOffset"].as_u64().unwrap() as usize;
        assert_eq!(&blob[start..start + want.len()], &want[..]);
    }
    assert_eq!(json["images"][0]["mimeType"], "image/png");
    assert_eq!(json["images"][0]["name"], "a");
    assert_eq!(json["extensionsUsed"], json!(["KHR_texture_transform"]));
    assert_eq!(json["extensionsRequired"], json!(["KHR_texture_transform"]));
    assert_eq!(json["materials"][0]["emissiveTexture"], json!({"index": 1}));
    assert_eq!(json["materials"][0]["name"], "skin");
    assert_eq!(json["textures"][0], json!({"sampler": 0, "source": 0}));
}

#[test]
fn looks_with_dangling_indices_are_refused() {
    let mut doc = textured_doc();
    doc.materials[1].properties = json!({"occlusionTexture": {"index": 2}})
        .as_object()
        .unwrap()
        .clone();
    let e = write_glb(&doc).unwrap_err().to_string();
    assert!(e.contains("texture 2") && e.contains("cloth"), "{e}");
    let mut doc = textured_doc();
    doc.textures[1].insert("source".into(), json!(5));
    let e = write_glb(&doc).unwrap_err().to_string();
    assert!(e.contains("texture 1") && e.contains("image 5"), "{e}");
    let mut doc = textured_doc();
    doc.textures[0].insert("sampler".into(), json!(1));
    let e = write_glb(&doc).unwrap_err().to_string();
    assert!(e.contains("sampler 1"), "{e}");
    let mut doc = textured_doc();
    doc.images[1].bytes.clear();
    let e = write_glb(&doc).unwrap_err().to_string();
    assert!(e.contains("image 1"), "{e}");
    let mut doc = textured_doc();
    doc.materials[0]
        .properties
        .insert("name".into(), json!("x"));
    assert!(write_glb(&doc).is_err());
}

/// A writer that records the size of every write and can fail after a
/// number of bytes.
struct Recorder {
    writes: Vec<usize>,
    bytes: Vec<u8>,
    fail_after: Option<usize>,
}

impl std::io::Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self
            .fail_after
            .is_some_and(|n| self.bytes.len() + buf.len() > n)
        {
            return Err(std::io::Error::other("disk full"));
        }
        self.writes.push(buf.len());
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_bin_chunk_is_streamed_view_by_view_not_held_whole() {
    // Several views (positions, normals, tangents, UVs, indices): the BIN
    // chunk reaches the writer one view at a time, never as one buffer, and
    // the bytes are those of `write_glb`.
    let doc = vat_doc();
    let whole = write_glb(&doc).unwrap();
    let json_len = u32::from_le_bytes(whole[12..16].try_into().unwrap()) as usize;
    let bin_len = whole.len() - 20 - json_len - 8;
    let mut rec = Recorder {
        writes: Vec::new(),
        bytes: Vec::new(),
        fail_after: None,
    };
    write_glb_to(&doc, &mut rec).unwrap();
    assert_eq!(rec.bytes, whole);
    // Header, JSON chunk, BIN length, BIN type, then the views.
    assert_eq!(rec.writes[..4], [20, json_len, 4, 4]);
    let views = &rec.writes[4..];
    assert_eq!(views.iter().sum::<usize>(), bin_len);
    assert!(
        views.len() > 1 && views.iter().all(|&n| n < bin_len),
        "the BIN chunk ({bin_len} bytes) was written whole: {views:?}"
    );
    // A writer that fails part-way through the BIN chunk: an error, no panic.
    let mut failing = Recorder {
        writes: Vec::new(),
        bytes: Vec::new(),
        fail_after: Some(whole.len() - bin_len / 2),
    };
    assert!(write_glb_to(&doc, &mut failing).is_err());
}
