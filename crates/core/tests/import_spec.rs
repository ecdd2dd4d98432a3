//! Import tests whose expected values are derived by hand from the glTF 2.0
//! specification, not from rigbake's code: sparse accessors (section
//! 3.6.2.3: without a buffer view the dense data is zeros), index component
//! types, `KHR_mesh_quantization` (normalized integers decode as
//! `max(c / 127, -1)`, `c / 255`, `max(c / 32767, -1)`, `c / 65535`; section
//! 3.11), one mesh bound by two skins, scenes (section 3.5), and the rules
//! the spec and the Khronos validator enforce (versions, matrix or TRS,
//! unique joints, invertible inverse binds). Every fixture built here is also
//! checked by the Khronos glTF-Validator when node and the validator package
//! are installed (`npm ci --prefix tools/node`); without them the check is
//! skipped, visibly, unless `RIGBAKE_REQUIRE_GLTF_VALIDATOR` is set.

use std::path::Path;
use std::process::Command;

use glam::{DMat4, DVec3, Vec2, Vec3};
use rigbake_core::import::{ImportOptions, Limits, Source, import_bytes, import_slice};
use rigbake_core::{ErrorKind, Model};
use rigbake_fixtures::spec_cases::{
    indexed_quad, one_mesh_two_skins, quantized_triangle, sparse_morph_target, sparse_positions,
    two_scenes,
};
use rigbake_fixtures::{Builder, Component};
use serde_json::{Value, json};

const NO_DIR: Source<'static> = Source {
    name: "spec",
    dir: None,
};

fn import_with(b: &Builder, options: &ImportOptions) -> rigbake_core::Result<Model> {
    import_slice(&b.to_glb(), &NO_DIR, options)
}

fn import(b: &Builder) -> Model {
    import_with(b, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs the Khronos glTF-Validator on `b` (as a GLB) and requires no errors
/// (the test kit's runner: skips visibly when node or the validator is
/// missing, unless `RIGBAKE_REQUIRE_GLTF_VALIDATOR` is set).
fn assert_valid(name: &str, b: &Builder) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(format!("{name}.glb"));
    std::fs::write(&file, b.to_glb()).unwrap();
    let Some(report) = rigbake_fixtures::testkit::gltf_validator::validate(&file) else {
        return;
    };
    assert_eq!(
        report["issues"]["numErrors"], 0,
        "{name}: {:#}",
        report["issues"]
    );
}

fn assert_close3(got: &[Vec3], want: &[[f32; 3]], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (*g - Vec3::from_array(*w)).abs().max_element() <= 1e-6,
            "{what} element {k}: {g} != {w:?}"
        );
    }
}

#[test]
fn sparse_positions_decode_with_and_without_a_buffer_view() {
    for with_view in [true, false] {
        let b = sparse_positions(with_view);
        assert_valid(&format!("sparse_positions_{with_view}"), &b);
        let model = import(&b);
        assert_close3(
            &model.meshes[0].primitives[0].positions,
            &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 3.0, 0.0]],
            &format!("with_view {with_view}"),
        );
    }
}

#[test]
fn sparse_morph_targets_decode_with_and_without_a_buffer_view() {
    for with_view in [true, false] {
        let b = sparse_morph_target(with_view);
        assert_valid(&format!("sparse_morph_{with_view}"), &b);
        let model = import(&b);
        let prim = &model.meshes[0].primitives[0];
        assert_eq!(prim.morph_targets.len(), 1);
        let deltas = prim.morph_targets[0].positions.as_deref().unwrap();
        assert_close3(
            deltas,
            &[[0.5, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
            &format!("with_view {with_view}"),
        );
        assert_eq!(model.meshes[0].default_weights, vec![0.25]);
    }
}

#[test]
fn indices_of_every_component_type_decode() {
    for component in [Component::U8, Component::U16, Component::U32] {
        let b = indexed_quad(component);
        assert_valid(&format!("indices_{component:?}"), &b);
        let model = import(&b);
        assert_eq!(
            model.meshes[0].primitives[0].indices.as_deref(),
            Some(&[0u32, 1, 2, 0, 2, 3][..]),
            "{component:?}"
        );
    }
}

#[test]
fn quantized_positions_and_texcoords_dequantize_by_the_spec_formula() {
    // Worked by hand from the raw integers in `quantized_raw` and
    // `quantized_uv_raw` with the formulas of glTF 2.0 section 3.11.
    type Case = (Component, [[f32; 3]; 3], [[f32; 2]; 3]);
    let cases: [Case; 4] = [
        (
            Component::I8,
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, -1.0, 64.0 / 127.0]],
            [[0.0, 1.0], [-1.0, 64.0 / 127.0], [1.0, 0.0]],
        ),
        (
            Component::U8,
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.2, 128.0 / 255.0]],
            [[0.0, 1.0], [0.2, 128.0 / 255.0], [1.0, 0.0]],
        ),
        (
            Component::I16,
            [
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, -1.0, 16384.0 / 32767.0],
            ],
            [[0.0, 1.0], [-1.0, 16384.0 / 32767.0], [1.0, 0.0]],
        ),
        (
            Component::U16,
            [
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 0.2, 32768.0 / 65535.0],
            ],
            [[0.0, 1.0], [0.2, 32768.0 / 65535.0], [1.0, 0.0]],
        ),
    ];
    for (component, positions, uvs) in cases {
        let b = quantized_triangle(component);
        assert_valid(&format!("quantized_{component:?}"), &b);
        let model = import(&b);
        let prim = &model.meshes[0].primitives[0];
        assert_close3(&prim.positions, &positions, &format!("{component:?}"));
        assert_eq!(prim.tex_coords.len(), 1);
        for (k, (got, want)) in prim.tex_coords[0].iter().zip(uvs).enumerate() {
            assert!(
                (*got - Vec2::from_array(want)).abs().max_element() <= 1e-6,
                "{component:?} uv {k}: {got} != {want:?}"
            );
        }
    }
    // Without the extension, integer positions are not glTF 2.0.
    let mut b = quantized_triangle(Component::I16);
    b.root.remove("extensionsUsed");
    b.root.remove("extensionsRequired");
    let e = import_with(&b, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert_eq!(e.object, "meshes[0].primitives[0].attributes.POSITION");
}

#[test]
fn one_mesh_bound_by_two_skins_keeps_both_bindings() {
    let b = one_mesh_two_skins();
    assert_valid("one_mesh_two_skins", &b);
    let model = import(&b);
    assert_eq!(model.meshes.len(), 1);
    let (first, second) = (&model.nodes[4], &model.nodes[5]);
    assert_eq!(
        (first.name.as_str(), second.name.as_str()),
        ("first", "second")
    );
    assert_eq!((first.mesh, second.mesh), (Some(0), Some(0)));
    assert_eq!((first.skin, second.skin), (Some(0), Some(1)));
    assert_eq!(model.skins[0].joints, vec![0, 1]);
    assert_eq!(model.skins[1].joints, vec![2, 3]);
    let t = |x, y| DMat4::from_translation(DVec3::new(x, y, 0.0));
    assert_eq!(
        model.skins[0].inverse_binds,
        vec![t(2.0, 0.0), t(2.0, -1.0)]
    );
    assert_eq!(
        model.skins[1].inverse_binds,
        vec![t(-2.0, 0.0), t(-2.0, -1.0)]
    );
    // Bind pose: joint global times inverse bind is the identity for every
    // joint of both skins, so each instance rests where the mesh is.
    for skin in &model.skins {
        for (&j, ibm) in skin.joints.iter().zip(&skin.inverse_binds) {
            let mut global = model.nodes[j].rest_matrix;
            let mut parent = model.nodes[j].parent;
            while let Some(p) = parent {
                global = model.nodes[p].rest_matrix * global;
                parent = model.nodes[p].parent;
            }
            assert!((global * *ibm).abs_diff_eq(DMat4::IDENTITY, 1e-12));
        }
    }
    let influences = model.meshes[0].primitives[0].influences.as_ref().unwrap();
    let joints: Vec<u16> = (0..4).map(|v| influences.vertex(v).0[0]).collect();
    assert_eq!(joints, vec![0, 0, 1, 1]);
    assert_eq!(model.clips[0].channels.len(), 2);
}

fn names(model: &Model) -> Vec<&str> {
    model.nodes.iter().map(|n| n.name.as_str()).collect()
}

fn clips(model: &Model) -> Vec<(&str, f64, usize)> {
    model
        .clips
        .iter()
        .map(|c| (c.name.as_str(), c.duration, c.channels.len()))
        .collect()
}

fn scene(index: Option<usize>) -> ImportOptions {
    ImportOptions {
        scene: index,
        ..ImportOptions::default()
    }
}

#[test]
fn only_the_chosen_scene_is_imported() {
    let b = two_scenes();
    assert_valid("two_scenes", &b);
    // The default scene (`scene: 0`): the other scene, the skeleton it uses
    // and the orphan are left out, with the clips that only animate them.
    let model = import(&b);
    assert_eq!(names(&model), ["a_root", "a_mesh"]);
    assert_eq!(model.nodes[0].children, vec![1]);
    assert_eq!(model.nodes[1].parent, Some(0));
    assert_eq!(model.topological_order, vec![0, 1]);
    assert!(model.skins.is_empty());
    assert_eq!(clips(&model), [("move_a", 1.0, 1), ("both", 1.0, 1)]);
    assert_eq!(model.clips[1].channels[0].node, 0);

    // Scene 1; node indices follow glTF order among the kept nodes.
    let model = import_with(&b, &scene(Some(1))).unwrap();
    assert_eq!(names(&model), ["b_mesh", "b_skinned", "bone0", "bone1"]);
    assert_eq!(model.skins.len(), 1);
    assert_eq!(model.skins[0].joints, vec![2, 3]);
    assert_eq!(model.nodes[1].skin, Some(0));
    assert_eq!(model.nodes[3].parent, Some(2));
    assert_eq!(model.nodes[2].mesh, None);
    assert_eq!(
        clips(&model),
        [("move_b", 2.0, 1), ("both", 3.0, 1), ("bend", 4.0, 1)]
    );
    assert_eq!(model.clips[2].channels[0].node, 3);
    assert!(model.has_skinned_mesh());

    // A skeleton left out of the scene (the validator's NODE_SKIN_NO_SCENE,
    // but gltf-transform writes such files) is kept for the skinned mesh.
    let mut outside = b.clone();
    outside.root["scenes"][1]["nodes"] = json!([2, 3]);
    assert_eq!(import_with(&outside, &scene(Some(1))).unwrap(), model);
    // ... but a mesh below such a joint is not baked.
    let mut below = outside.clone();
    below.get_mut("nodes", 5).insert("mesh".into(), json!(0));
    let kept = import_with(&below, &scene(Some(1))).unwrap();
    assert_eq!(names(&kept), ["b_mesh", "b_skinned", "bone0", "bone1"]);
    assert_eq!(kept.nodes[3].mesh, None);

    // The file's `scene` picks the default.
    let mut one = b.clone();
    one.root.insert("scene".into(), json!(1));
    assert_eq!(import(&one), model);
    // Without `scene`, scene 0.
    let mut none = b.clone();
    none.root.remove("scene");
    assert_eq!(names(&import(&none)), ["a_root", "a_mesh"]);
    // Without scenes, every node.
    let mut all = b.clone();
    all.root.remove("scene");
    all.root.remove("scenes");
    let model = import(&all);
    assert_eq!(model.nodes.len(), 7);
    assert_eq!(model.clips.len(), 4);

    // A scene the file does not have.
    let e = import_with(&b, &scene(Some(2))).unwrap_err();
    assert_eq!((e.kind, e.object.as_str()), (ErrorKind::Invalid, "scenes"));
    assert!(
        e.message
            .contains("scene 2 was asked for, but the file has 2 scenes"),
        "{e}"
    );
    // A scene root that is not a root node.
    let mut bad = b.clone();
    bad.root["scenes"][0]["nodes"] = json!([1]);
    let e = import_with(&bad, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.object, "scenes[0].nodes[0]");
    assert!(e.message.contains("child of nodes[0]"), "{e}");
}

// --- What the spec and the validator refuse --------------------------------

fn two_joint() -> Builder {
    rigbake_fixtures::models::two_joint()
}

fn expect(b: &Builder, kind: ErrorKind, object: &str, words: &str) {
    let e = import_with(b, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.object, object, "{e}");
    assert!(e.message.contains(words), "{e}");
}

#[test]
fn versions_other_than_gltf_2_are_refused() {
    let mut b = two_joint();
    b.root["asset"]["version"] = json!("3.0");
    expect(&b, ErrorKind::Unsupported, "asset.version", "glTF 3.0");
    let mut b = two_joint();
    b.root["asset"]["minVersion"] = json!("2.1");
    expect(
        &b,
        ErrorKind::Invalid,
        "asset.minVersion",
        "greater than version 2.0",
    );
    let mut b = two_joint();
    b.root["asset"]["version"] = json!("2.1");
    b.root["asset"]["minVersion"] = json!("2.1");
    expect(
        &b,
        ErrorKind::Unsupported,
        "asset.minVersion",
        "requires glTF 2.1",
    );
    let mut b = two_joint();
    b.root["asset"]["version"] = json!("two");
    expect(
        &b,
        ErrorKind::Malformed,
        "asset.version",
        "not a glTF version",
    );
    // A later minor version without minVersion is readable as 2.0.
    let mut b = two_joint();
    b.root["asset"]["version"] = json!("2.1");
    import(&b);
}

#[test]
fn a_matrix_together_with_trs_is_refused() {
    let mut b = two_joint();
    let node = b.get_mut("nodes", 2);
    node.insert(
        "matrix".into(),
        json!(rigbake_fixtures::parts::translation_matrix([0.0; 3])),
    );
    node.insert("scale".into(), json!([1.0, 1.0, 1.0]));
    expect(
        &b,
        ErrorKind::Invalid,
        "nodes[2].matrix",
        "both `matrix` and `scale`",
    );
    // A matrix alone is fine, unless the node is animated.
    b.get_mut("nodes", 2).remove("scale");
    import(&b);
    let mut b = two_joint();
    let node = b.get_mut("nodes", 1);
    node.remove("translation");
    node.remove("rotation");
    node.insert(
        "matrix".into(),
        json!(rigbake_fixtures::parts::translation_matrix([0.0, 1.0, 0.0])),
    );
    let e = import_with(&b, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.object.ends_with(".target.node"), "{e}");
    assert!(e.message.contains("which has a `matrix`"), "{e}");
}

#[test]
fn a_joint_listed_twice_in_a_skin_is_refused() {
    let mut b = two_joint();
    b.get_mut("skins", 0)
        .insert("joints".into(), json!([0, 1, 0]));
    b.get_mut("skins", 0).remove("inverseBindMatrices");
    expect(
        &b,
        ErrorKind::Invalid,
        "skins[0].joints[2]",
        "nodes[0] is already joint 0 of this skin",
    );
}

/// `two_joint` with the inverse bind matrix of joint 1 replaced by `m`.
fn with_inverse_bind(m: [f32; 16]) -> Builder {
    let mut b = two_joint();
    let acc = b.root["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
    let view = b.root["accessors"][acc]["bufferView"].as_u64().unwrap() as usize;
    let start = b.root["bufferViews"][view]["byteOffset"]
        .as_u64()
        .unwrap_or(0) as usize
        + b.root["accessors"][acc]["byteOffset"].as_u64().unwrap_or(0) as usize
        + 64;
    let bytes: Vec<u8> = m.iter().flat_map(|v| v.to_le_bytes()).collect();
    b.bin[start..start + 64].copy_from_slice(&bytes);
    b
}

#[test]
fn zero_singular_or_projective_inverse_binds_are_refused() {
    let path = "skins[0].inverseBindMatrices";
    expect(
        &with_inverse_bind([0.0; 16]),
        ErrorKind::Invalid,
        path,
        "matrix 1 has last row (0, 0, 0, 0)",
    );
    // Last row right, but the 3x3 part flattens Y.
    let mut flat = [0.0f32; 16];
    flat[0] = 1.0;
    flat[10] = 1.0;
    flat[15] = 1.0;
    expect(
        &with_inverse_bind(flat),
        ErrorKind::Invalid,
        path,
        "matrix 1 is singular",
    );
    let mut projective = [0.0f32; 16];
    for k in [0, 5, 10, 15] {
        projective[k] = 1.0;
    }
    projective[3] = 0.5;
    expect(
        &with_inverse_bind(projective),
        ErrorKind::Invalid,
        path,
        "last row (0.5, 0, 0, 1)",
    );
    // A tiny but uniform scale is invertible, whatever the units.
    let mut tiny = [0.0f32; 16];
    for k in [0, 5, 10] {
        tiny[k] = 1e-4;
    }
    tiny[15] = 1.0;
    import(&with_inverse_bind(tiny));
}

// --- Memory budget -------------------------------------------------------------

fn small_budget(bytes: u64) -> ImportOptions {
    ImportOptions {
        limits: Limits {
            max_decoded_bytes: bytes,
            ..Limits::default()
        },
        ..ImportOptions::default()
    }
}

/// `sparse_positions(false)` with its accessor's count raised to `count` (the
/// single sparse element stays): a few hundred bytes claiming `count`
/// vertices.
fn sparse_bomb(count: usize) -> Builder {
    let mut b = sparse_positions(false);
    b.root["accessors"][0]["count"] = json!(count);
    b
}

#[test]
fn a_sparse_accessor_without_data_is_charged_at_full_size() {
    // 2^26 vertices from one sparse element: refused by the per-accessor
    // limit before anything is allocated.
    let e = import_with(&sparse_bomb(1 << 26), &ImportOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert_eq!(e.object, "meshes[0].primitives[0].attributes.POSITION");
    // 2^22 vertices (48 MiB decoded) against a 32 MiB budget: refused by the
    // budget, naming it and the numbers.
    let e = import_with(&sparse_bomb(1 << 22), &small_budget(32 << 20)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert_eq!(e.object, "meshes[0].primitives[0].attributes.POSITION");
    assert!(
        e.message.contains(&format!(
            "needs {} bytes; with the 0 bytes already decoded that is more than the import memory budget of {} bytes (max_decoded_bytes)",
            (1u64 << 22) * 12,
            32u64 << 20
        )),
        "{e}"
    );
    // Within the budget it decodes (zeros but the sparse elements).
    let model = import_with(&sparse_bomb(1 << 16), &small_budget(32 << 20)).unwrap();
    assert_eq!(model.meshes[0].primitives[0].positions.len(), 1 << 16);
}

#[test]
fn every_use_of_a_shared_accessor_is_charged() {
    // 200 primitives sharing one 10,000-vertex POSITION accessor: 120 kB
    // each, 24 MB together, over a 16 MiB budget.
    let mut b = Builder::new();
    let positions: Vec<f64> = (0..30_000).map(|k| f64::from(k % 7)).collect();
    let acc = b.positions(&positions);
    let prims: Vec<Value> = (0..200)
        .map(|_| json!({"attributes": {"POSITION": acc}}))
        .collect();
    let mesh = rigbake_fixtures::parts::add_mesh(&mut b, "shared", prims);
    let node = b.node(json!({"mesh": mesh}));
    b.scene(&[node]);
    let e = import_with(&b, &small_budget(16 << 20)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert!(e.message.contains("max_decoded_bytes"), "{e}");
    assert!(e.object.starts_with("meshes[0].primitives[1"), "{e}");
    import_with(&b, &small_budget(32 << 20)).unwrap();
}

#[test]
fn default_limits_keep_an_import_under_a_gibibyte() {
    let limits = Limits::default();
    assert!(limits.max_decoded_bytes <= 512 << 20);
    assert!(limits.max_accessor_components * 4 <= 256 << 20);
    assert!(limits.max_total_components as u64 * 4 <= limits.max_decoded_bytes);
}

// --- Files that are not regular files ---------------------------------------

#[cfg(unix)]
fn mkfifo(path: &Path) -> bool {
    match Command::new("mkfifo").arg(path).status() {
        Ok(s) if s.success() => true,
        _ => {
            println!("SKIPPED: mkfifo is not available");
            false
        }
    }
}

/// Runs `f` on another thread and fails if it takes more than 20 s (a hang).
fn without_hanging<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("the call hung")
}

#[cfg(unix)]
#[test]
fn fifos_as_models_or_buffers_are_refused_without_hanging() {
    use rigbake_core::import::read_file;
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("model.glb");
    if !mkfifo(&fifo) {
        return;
    }
    let e = without_hanging(move || read_file(&fifo, &Limits::default()).unwrap_err());
    assert_eq!(e.kind, ErrorKind::Io, "{e}");
    assert!(e.message.contains("not a regular file"), "{e}");

    // An external buffer that is a FIFO.
    let (json, _) = two_joint().to_gltf_external("buffer.bin");
    let model = tmp.path().join("m.gltf");
    std::fs::write(&model, &json).unwrap();
    assert!(mkfifo(&tmp.path().join("buffer.bin")));
    let e = without_hanging(move || {
        import_bytes(&model, json.as_bytes(), &ImportOptions::default()).unwrap_err()
    });
    assert_eq!(e.object, "buffers[0]", "{e}");
    assert!(e.message.contains("not a regular file"), "{e}");
}

#[test]
fn external_buffers_over_the_limit_are_refused_before_reading() {
    use rigbake_core::import::{Parsed, read_file};
    let tmp = tempfile::tempdir().unwrap();
    let (json, bin) = two_joint().to_gltf_external("buffer.bin");
    let model = tmp.path().join("m.gltf");
    std::fs::write(&model, &json).unwrap();
    std::fs::write(tmp.path().join("buffer.bin"), &bin).unwrap();
    let small = ImportOptions {
        limits: Limits {
            max_file_bytes: bin.len() as u64 - 1,
            ..Limits::default()
        },
        ..ImportOptions::default()
    };
    // The bake key lists the files first: the size is checked there.
    let parsed = Parsed::new(&model, json.clone().into_bytes()).unwrap();
    let e = parsed.external_files(&small).unwrap_err();
    assert_eq!(
        (e.kind, e.object.as_str()),
        (ErrorKind::Limit, "buffers[0]")
    );
    assert!(
        e.message.contains(&format!(
            "is {} bytes, more than the limit of {}",
            bin.len(),
            bin.len() - 1
        )),
        "{e}"
    );
    // Within the limit, each listed file reads through `read_file`.
    let files = parsed.external_files(&ImportOptions::default()).unwrap();
    assert_eq!(files, vec![tmp.path().join("buffer.bin")]);
    assert_eq!(read_file(&files[0], &Limits::default()).unwrap(), bin);
}

// --- Real models ----------------------------------------------------------------

/// The shared third-party models (`RIGBAKE_MODELS`, else `../shared/models`
/// beside the repository), or `None` with a visible skip unless
/// `RIGBAKE_REQUIRE_MODELS` is set.
fn shared_models() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("RIGBAKE_MODELS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"),
        std::path::PathBuf::from,
    );
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("RIGBAKE_REQUIRE_MODELS").is_none(),
        "RIGBAKE_REQUIRE_MODELS is set but {} is missing",
        dir.display()
    );
    println!("SKIPPED: no shared models at {}", dir.display());
    None
}

#[test]
fn every_shared_model_imports_whole_under_the_default_limits() {
    let Some(dir) = shared_models() else { return };
    let mut seen = 0;
    for group in std::fs::read_dir(&dir).unwrap() {
        let group = group.unwrap().path();
        if !group.is_dir() || group.ends_with("unsupported") || group.ends_with("tools") {
            continue;
        }
        for file in std::fs::read_dir(&group).unwrap() {
            let file = file.unwrap().path();
            let ext = file.extension().and_then(|e| e.to_str());
            if !matches!(ext, Some("glb" | "gltf")) {
                continue;
            }
            let options = ImportOptions::default();
            let bytes = rigbake_core::import::read_file(&file, &options.limits).unwrap();
            let model = import_bytes(&file, &bytes, &options).unwrap_or_else(|e| panic!("{e}"));
            // Every node of these models is in their one scene.
            let (root, _) = gltf_json_nodes(&bytes);
            assert_eq!(model.nodes.len(), root, "{}", file.display());
            seen += 1;
        }
    }
    assert!(seen >= 15, "only {seen} models found in {}", dir.display());
}

/// The number of nodes the glTF JSON of `bytes` lists, and its JSON.
fn gltf_json_nodes(bytes: &[u8]) -> (usize, Value) {
    let json = if bytes.starts_with(b"glTF") {
        let len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
        &bytes[20..20 + len]
    } else {
        bytes
    };
    let doc: Value = serde_json::from_slice(json).unwrap();
    (doc["nodes"].as_array().map_or(0, Vec::len), doc)
}
