//! `rigbake inspect MODEL.glb|.gltf` describes a source before baking: its
//! scenes, skins, meshes, clips, sockets and extensions. The expectations
//! come from the glTF JSON read here with serde_json alone (not through
//! rigbake's importer) and from the models' published descriptions
//! (`shared/models/SOURCES.md`).

mod common;

use std::path::Path;

use common::rigbake;
use rigbake_fixtures::testkit::models::shared_models;
use serde_json::Value;

fn inspect(file: &Path, flags: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["inspect".as_ref(), file.as_os_str()];
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    rigbake(&args)
}

/// The JSON document for `file`, checked against
/// formats/inspect-source.schema.json.
fn document(file: &Path, flags: &[&str]) -> Value {
    let schema: Value = serde_json::from_slice(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/inspect-source.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema itself is valid");
    let mut all = vec!["--json"];
    all.extend_from_slice(flags);
    let r = inspect(file, &all);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: Value = serde_json::from_slice(&r.stdout).expect("one JSON document");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:#?}", file.display());
    doc
}

/// The JSON chunk of a GLB, parsed independently of rigbake.
fn glb_json(file: &Path) -> Value {
    let bytes = std::fs::read(file).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + len]).unwrap()
}

/// Duration of animation `a`: the largest `max` of its samplers' inputs.
fn duration(json: &Value, a: &Value) -> f64 {
    a["samplers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            json["accessors"][s["input"].as_u64().unwrap() as usize]["max"][0]
                .as_f64()
                .unwrap()
        })
        .fold(0.0, f64::max)
}

#[test]
fn fox_lists_its_three_clips_with_frame_counts_at_the_chosen_rate() {
    let Some(models) = shared_models("fox_lists_its_three_clips") else {
        return;
    };
    let fox = models.join("khronos/Fox.glb");
    let json = glb_json(&fox);
    for fps in [30.0, 24.0] {
        let doc = document(&fox, &["--fps", &fps.to_string()]);
        let clips = doc["clips"].as_array().unwrap();
        let names: Vec<&str> = clips.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Survey", "Walk", "Run"]);
        for (clip, anim) in clips.iter().zip(json["animations"].as_array().unwrap()) {
            let d = duration(&json, anim);
            assert!((clip["duration"].as_f64().unwrap() - d).abs() < 1e-6);
            // SPEC section 2: floor(duration * fps + 1e-4) + 1 frames.
            let frames = (d * fps + 1e-4).floor() as u64 + 1;
            assert_eq!(clip["frames"].as_u64(), Some(frames), "{fps} fps");
        }
    }
    let doc = document(&fox, &[]);
    let joints = json["skins"][0]["joints"].as_array().unwrap().len();
    assert_eq!(doc["skins"][0]["joints"].as_array().unwrap().len(), joints);
    let prim = &doc["meshes"][0]["primitives"][0];
    assert_eq!(prim["deforms"]["kind"], "skinned");
    assert_eq!(prim["vertices"], 1728, "SOURCES.md: 1728 verts");
    assert_eq!(
        doc["scenes"].as_array().unwrap().len(),
        json["scenes"].as_array().unwrap().len()
    );
    assert_eq!(doc["baked_scene"], 0);

    let text = inspect(&fox, &[]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    for line in [
        "Survey: 3.417 s, 103 frames",
        "Walk: 0.708 s, 22 frames",
        "Run: 1.158 s, 35 frames",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
}

#[test]
fn props_on_joints_sockets_and_morphs_are_told_apart() {
    let Some(models) = shared_models("props_on_joints_sockets_and_morphs") else {
        return;
    };
    // Knight: swords and shields hang from the hand slots (SOURCES.md).
    let doc = document(&models.join("kaykit/Knight.glb"), &[]);
    let mesh = |node: &str| {
        doc["meshes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["node"] == node)
            .unwrap_or_else(|| panic!("{node} not listed"))
            .clone()
    };
    let sword = mesh("1H_Sword");
    assert_eq!(sword["primitives"][0]["deforms"]["kind"], "rigid_on_joint");
    assert_eq!(sword["primitives"][0]["deforms"]["joint"], "handslot.r");
    assert_eq!(
        mesh("Knight_Body")["primitives"][0]["deforms"]["kind"],
        "skinned"
    );
    let sockets: Vec<&str> = doc["sockets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["node"].as_str().unwrap())
        .collect();
    assert!(
        sockets.contains(&"handslot.l") && sockets.contains(&"handslot.r"),
        "{sockets:?}"
    );
    assert_eq!(
        doc["clips"].as_array().unwrap().len(),
        76,
        "SOURCES.md: 76 clips"
    );

    // greenman: three socket bones, named so.
    let doc = document(&models.join("raylib/greenman.glb"), &[]);
    for s in ["socket_hat", "socket_hand_L", "socket_hand_R"] {
        assert!(
            doc["sockets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["node"] == s && k["reason"] == "name"),
            "{s}"
        );
    }

    // RobotExpressive: the head has 3 morph targets (SOURCES.md).
    let doc = document(&models.join("threejs/RobotExpressive.glb"), &[]);
    let morphs: Vec<u64> = doc["meshes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["primitives"].as_array().unwrap().clone())
        .map(|p| p["morph_targets"].as_u64().unwrap())
        .filter(|&n| n > 0)
        .collect();
    assert!(
        !morphs.is_empty() && morphs.iter().all(|&n| n == 3),
        "{morphs:?}"
    );
}

#[test]
fn extensions_and_scenes_come_from_the_file() {
    // A fixture of our own with a second scene and declared extensions,
    // edited here from tentacle.glb's JSON.
    let dir = tempfile::tempdir().unwrap();
    let src = rigbake_fixtures::fixture("tentacle.glb");
    let mut b = rigbake_fixtures::builder::Builder::from_glb(&std::fs::read(&src).unwrap());
    let json = &mut b.root;
    json.insert(
        "extensionsUsed".into(),
        serde_json::json!(["KHR_materials_unlit", "KHR_texture_transform"]),
    );
    json.insert(
        "extensionsRequired".into(),
        serde_json::json!(["KHR_materials_unlit"]),
    );
    let scenes = json["scenes"].as_array().unwrap().clone();
    let mut second = scenes[0].clone();
    second["name"] = "empty".into();
    second["nodes"] = serde_json::json!([]);
    json.insert(
        "scenes".into(),
        Value::Array(vec![scenes[0].clone(), second]),
    );
    json.insert("scene".into(), 0.into());
    let glb = b.to_glb();
    let file = dir.path().join("two_scenes.glb");
    std::fs::write(&file, &glb).unwrap();

    let doc = document(&file, &[]);
    assert_eq!(
        doc["extensions_used"],
        serde_json::json!(["KHR_materials_unlit", "KHR_texture_transform"])
    );
    assert_eq!(
        doc["extensions_required"],
        serde_json::json!(["KHR_materials_unlit"])
    );
    let listed = doc["scenes"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1]["name"], "empty");
    assert_eq!(listed[0]["default"], true);
    assert_eq!(listed[1]["default"], false);
    assert!(!doc["meshes"].as_array().unwrap().is_empty());
    // The second scene has no nodes: nothing to bake in it.
    let doc = document(&file, &["--scene", "1"]);
    assert_eq!(doc["baked_scene"], 1);
    assert!(doc["meshes"].as_array().unwrap().is_empty());
    // A scene the file does not have is refused, naming the count.
    let r = inspect(&file, &["--scene", "5"]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("two_scenes.glb") && err.contains("2 scenes"),
        "{err}"
    );
}

#[test]
fn bad_requests_are_refused_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = rigbake_fixtures::fixture("tentacle.glb");
    // --verify checks a container's checksums: nothing to check in a model.
    let r = inspect(&fixture, &["--verify"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--verify"));
    let r = inspect(&fixture, &["--fps", "0"]);
    assert_eq!(r.status.code(), Some(2));
    // A damaged model is a failure naming the file.
    let broken = dir.path().join("broken.glb");
    std::fs::write(&broken, b"glTF\x02\0\0\0garbage").unwrap();
    let r = inspect(&broken, &[]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("broken.glb"));
    assert!(r.stdout.is_empty());
}
