//! Morph targets on the bone-matrix path (issue 19, item 1): the bone
//! textures hold skin matrices only, so rigbake drops morph targets there,
//! warns once per mesh instance (naming the node, mesh and primitives and
//! suggesting `--vat`), and records the choice in the container's morphs
//! record (format 1.6). A VAT bake keeps the morphs and does not warn.

use std::path::Path;

use rigbake_core::timeline::ClipSpec;
use rigbake_fixtures::parts::{add_animation, add_channel};
use rigbake_format::container::Container;
use rigbake_format::meta::{DroppedMorphMeta, MorphsMetadata};
use serde_json::json;

use crate::common::{bake, settings, shared_models, with_vat};

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
    c.records().morphs.as_ref().cloned()
}

#[test]
fn morphs_of_a_skinned_primitive_are_dropped_with_a_warning_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("morphed.glb");
    std::fs::write(&file, skinned_and_morphed().to_glb()).unwrap();
    let out = dir.path().join("out");
    let r = bake(&file, &out, &settings(|_| {})).baked();
    // (`rigbake bake` names the model in front of the warning.)
    let warning = r.warnings.first().expect("a warning");
    for part in ["meshes[0].primitives[0]", "1 morph targets", "--vat"] {
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
    let r = bake(&file, &out_vat, &settings(with_vat)).baked();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(morphs(&out_vat, "morphed"), morphs(&out, "morphed"));

    // Without morph targets there is neither a warning nor a record.
    let plain = dir.path().join("plain.glb");
    std::fs::write(&plain, rigbake_fixtures::models::two_joint().to_glb()).unwrap();
    let out_plain = dir.path().join("out-plain");
    let r = bake(&plain, &out_plain, &settings(|_| {}));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(morphs(&out_plain, "plain"), None);
}

#[test]
fn a_weights_channel_whose_keys_are_all_zero_drops_nothing() {
    // The same model, but `blink` keys the weight at 0 and 0: it never
    // shows, so nothing is dropped, warned about or recorded.
    let mut b = skinned_and_morphed();
    let node = b.first_mesh_node();
    let a = add_animation(&mut b, "still");
    add_channel(
        &mut b,
        a,
        node,
        "weights",
        "LINEAR",
        &[0.0, 1.0],
        &[0.0, 0.0],
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zeroed.glb");
    // Only the all-zero clip is baked.
    std::fs::write(&file, b.to_glb()).unwrap();
    let out = dir.path().join("out");
    let still = settings(|s| s.clips = vec![ClipSpec::whole("still")]);
    let r = bake(&file, &out, &still).baked();
    assert!(
        !r.warnings.iter().any(|w| w.contains("morph")),
        "{:?}",
        r.warnings
    );
    assert_eq!(morphs(&out, "zeroed"), None);
    // Both clips: `blink` shows the target, so it is reported again.
    let out_both = dir.path().join("out-both");
    let r = bake(&file, &out_both, &settings(|_| {}));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("1 morph targets animated by the baked clips")),
        "{:?}",
        r.warnings
    );
    assert!(morphs(&out_both, "zeroed").is_some_and(|m| m.dropped[0].animated));
}

#[test]
fn robot_expressive_morph_keys_are_all_zero_so_nothing_is_dropped() {
    // RobotExpressive's head has 3 morph targets and 14 clips with
    // `weights` channels, but every key of those channels is 0 (checked
    // here from the file itself) and its default weights are 0: the bone
    // bake loses nothing, so it neither warns nor records a drop.
    let Some(dir) = shared_models("robot_expressive_morph_keys_are_all_zero_so_nothing_is_dropped")
    else {
        return;
    };
    let file = dir.join("threejs/RobotExpressive.glb");
    let g = gltf::Gltf::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut keys = 0;
    for anim in g.animations() {
        for ch in anim.channels() {
            if let Some(gltf::animation::util::ReadOutputs::MorphTargetWeights(w)) =
                ch.reader(|_| g.blob.as_deref()).read_outputs()
            {
                for v in w.into_f32() {
                    assert_eq!(v, 0.0);
                    keys += 1;
                }
            }
        }
    }
    assert!(keys > 1000, "{keys} morph-weight keys");
    let out = tempfile::tempdir().unwrap();
    let r = bake(&file, out.path(), &settings(|_| {})).baked();
    assert!(
        !r.warnings.iter().any(|w| w.contains("morph")),
        "{:?}",
        r.warnings
    );
    assert_eq!(morphs(out.path(), "RobotExpressive"), None);
}
