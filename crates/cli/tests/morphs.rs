//! Morph targets on the bone-matrix path (issue 19, item 1): the bone
//! textures hold skin matrices only, so rigbake drops morph targets there,
//! warns once per mesh instance (naming the node, mesh and primitives and
//! suggesting `--vat`), and records the choice in the container's morphs
//! record (format 1.6). A VAT bake keeps the morphs and does not warn.

mod common;

use std::path::Path;

use common::{bake, shared_models};
use rigbake_fixtures::parts::{add_animation, add_channel};
use rigbake_format::container::Container;
use rigbake_format::meta::{DroppedMorphMeta, MorphsMetadata};
use serde_json::json;

/// `two_joint` with one POSITION morph target on its skinned primitive and
/// a clip `blink` animating its weight.
fn skinned_and_morphed() -> rigbake_fixtures::Builder {
    let mut b = rigbake_fixtures::models::two_joint();
    let deltas: Vec<f64> = (0..10).flat_map(|_| [0.0, 0.0, 0.2]).collect();
    let target = b.floats(&deltas, "VEC3");
    b.get_mut("meshes", 0)["primitives"][0]["targets"] = json!([{"POSITION": target}]);
    b.get_mut("meshes", 0)
        .insert("weights".into(), json!([0.0]));
    let node = b.first_mesh_node();
    let a = add_animation(&mut b, "blink");
    add_channel(
        &mut b,
        a,
        node,
        "weights",
        "LINEAR",
        &[0.0, 1.0],
        &[0.0, 1.0],
    );
    b
}

fn morphs(out: &Path, stem: &str) -> Option<MorphsMetadata> {
    let c = Container::open(&out.join(stem).join(format!("{stem}.rigbake"))).unwrap();
    c.morphs().cloned()
}

#[test]
fn morphs_of_a_skinned_primitive_are_dropped_with_a_warning_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("morphed.glb");
    std::fs::write(&file, skinned_and_morphed().to_glb()).unwrap();
    let out = dir.path().join("out");
    let r = bake(std::slice::from_ref(&file), &out, &[]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("warning:"))
        .unwrap_or_else(|| panic!("no warning:\n{stderr}"));
    for part in [
        "morphed.glb",
        "meshes[0].primitives[0]",
        "1 morph targets",
        "--vat",
    ] {
        assert!(warning.contains(part), "`{part}` missing from: {warning}");
    }
    let node = rigbake_core::import::import_file(&file, &Default::default())
        .unwrap()
        .nodes
        .iter()
        .find(|n| n.mesh.is_some())
        .unwrap()
        .name
        .clone();
    assert!(warning.contains(&format!("`{node}`")), "{warning}");
    assert_eq!(
        morphs(&out, "morphed"),
        Some(MorphsMetadata {
            dropped: vec![DroppedMorphMeta {
                node,
                mesh: 0,
                primitives: vec![0],
                targets: 1,
                animated: true,
            }],
        })
    );

    // With --vat the morphs are baked (into the VAT): no warning, and the
    // record still says the bone textures leave them out.
    let out_vat = dir.path().join("out-vat");
    let r = bake(std::slice::from_ref(&file), &out_vat, &["--vat"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");
    assert_eq!(morphs(&out_vat, "morphed"), morphs(&out, "morphed"));

    // Without morph targets there is neither a warning nor a record.
    let plain = dir.path().join("plain.glb");
    std::fs::write(&plain, rigbake_fixtures::models::two_joint().to_glb()).unwrap();
    let out_plain = dir.path().join("out-plain");
    let r = bake(std::slice::from_ref(&plain), &out_plain, &[]);
    assert!(!String::from_utf8_lossy(&r.stderr).contains("warning:"));
    assert_eq!(morphs(&out_plain, "plain"), None);
}

#[test]
fn robot_expressive_head_morphs_are_reported() {
    let Some(dir) = shared_models("robot_expressive_head_morphs_are_reported") else {
        return;
    };
    let file = dir.join("threejs/RobotExpressive.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&file), out.path(), &[]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("node `Head`") && warnings[0].contains("3 morph targets"),
        "{}",
        warnings[0]
    );
    let record = morphs(out.path(), "RobotExpressive").expect("a morphs record");
    assert_eq!(record.dropped.len(), 1);
    assert_eq!(record.dropped[0].node, "Head");
    assert_eq!(record.dropped[0].targets, 3);
    assert!(record.dropped[0].animated);
}
