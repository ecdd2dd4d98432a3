//! An engine's view of a bake: `tools/play_sidecar.py`, written from
//! formats/ alone, reads the JSON sidecar, the EXR textures (OpenEXR's own
//! Python binding) and the GLB meshes (plain JSON and struct), with no
//! rigbake code on the read side, and rebuilds the vertices of both paths
//! (the VAT's through the playback mesh's lookup UV), standing them in the
//! scene by the sidecar's placements (format 1.11); they match direct
//! evaluation in scene space (`rigbake_core::reference`, f64, no texture).
//!
//! Tolerance: 2e-6 of the model's size. Both paths store f32 values (skin
//! matrices, VAT positions) computed in f64: each stored value is within
//! half an f32 ulp (6e-8 relative) of exact, and a skinned position sums
//! up to 8 weighted matrix products of such values, so the error stays
//! below about 1e-6 of the model's extent; 2e-6 leaves room for the
//! reader's own f64 sums.
//!
//! Needs `python3` with the `OpenEXR` module; skipped with a message without
//! it, unless `RIGBAKE_REQUIRE_OPENEXR` is set (CI), where it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::bake;
use common::reference::{deform, mesh_node, pose_at};
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_fixtures::testkit::models::shared_models;
use rigbake_format::meta::ClipMeta;
use serde_json::Value;

/// The player's positions for `path` at `frame` of `clip`, or `None` when
/// python3 or OpenEXR is missing and not required.
fn play(sidecar: &Path, path: &str, clip: &str, frame: usize) -> Option<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/play_sidecar.py");
    let required = std::env::var_os("RIGBAKE_REQUIRE_OPENEXR").is_some();
    let out = match Command::new("python3")
        .arg(&script)
        .arg(sidecar)
        .arg(path)
        .arg(clip)
        .arg(frame.to_string())
        .output()
    {
        Ok(o) => o,
        Err(e) if !required => {
            eprintln!("SKIPPED: cannot run python3: {e}");
            return None;
        }
        Err(e) => panic!("cannot run python3: {e}"),
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("No module named") && !required {
        eprintln!("SKIPPED: python3 has no OpenEXR module (pip install OpenEXR)");
        return None;
    }
    assert!(out.status.success(), "play_sidecar.py failed: {err}");
    Some(serde_json::from_slice(&out.stdout).expect("JSON from the player"))
}

/// Bakes `model` (bones, weights, VAT; EXR f32), then checks both paths at
/// the first, middle and last frame of up to three clips against direct
/// evaluation. Returns false when the player could not run.
fn check_model(model: &Path) -> bool {
    check_model_with(model, &[])
}

/// [`check_model`] with more bake flags.
fn check_model_with(model: &Path, extra: &[&str]) -> bool {
    let out = tempfile::tempdir().unwrap();
    let mut flags = vec!["--vat"];
    if !extra.contains(&"--format") {
        flags.extend(["--format", "exr32"]);
    }
    flags.extend(extra);
    let r = bake(&[model.to_path_buf()], out.path(), &flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stem = model.file_stem().unwrap().to_string_lossy().into_owned();
    let sidecar: PathBuf = out.path().join(&stem).join(format!("{stem}.rigbake.json"));
    let doc: Value = serde_json::from_slice(&std::fs::read(&sidecar).unwrap()).unwrap();
    let source = import_file(model, &ImportOptions::default()).unwrap();
    // Format 1.11: the sidecar records where the reference node stands.
    assert_eq!(
        doc["placement"]["node"], doc["reference_node"],
        "{stem}: the sidecar's placement is not the reference node's"
    );
    // Quantised encodings add their error: a PNG16 VAT its recorded
    // position error (model units, the largest the quantisation made); a
    // `qts` bone texture at `unorm16` up to 1e-4 of the size, the
    // encoding's stated accuracy (Knight: 1.7e-5, docs/performance.md).
    let textures = doc["textures"].as_array().unwrap();
    let png16 = |role: &str| {
        textures
            .iter()
            .filter(|t| t["role"] == role && t["encoding"] == "png16")
            .map(|t| t["max_error"].as_f64().unwrap())
            .reduce(f64::max)
    };
    let vat_slack = png16("vat_positions").unwrap_or(0.0);
    let bones_relative = if png16("bone_matrices").is_some() {
        1e-4
    } else {
        0.0
    };
    let mut pose = LocalPose::rest(&source);
    let mut checked = 0;
    for clip in doc["clips"].as_array().unwrap().iter().take(3) {
        let meta: ClipMeta = serde_json::from_value(clip.clone()).unwrap();
        let frames = meta.frames as usize;
        for frame in [0, frames / 2, frames - 1] {
            pose_at(&source, &meta, frame, &mut pose);
            for path in ["bones", "vat"] {
                let Some(played) = play(&sidecar, path, &meta.name, frame) else {
                    return false;
                };
                // Bakes of format 1.11 record their placements: the
                // player stands the vertices in the scene.
                assert_eq!(
                    played["space"], "scene",
                    "{stem} {path}: the player did not stand the bake by its recorded placement"
                );
                for p in played["primitives"].as_array().unwrap() {
                    let node = mesh_node(&source, p["node"].as_str().unwrap());
                    let prim = p["primitive"].as_u64().unwrap() as usize;
                    let exact = deform(&source, &pose, node, prim, None);
                    let got = p["positions"].as_array().unwrap();
                    assert_eq!(got.len(), exact.len(), "{stem} {path}: vertex count");
                    let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
                    for d in &exact {
                        for k in 0..3 {
                            lo[k] = lo[k].min(d.position[k]);
                            hi[k] = hi[k].max(d.position[k]);
                        }
                    }
                    let size = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max).max(1e-9);
                    let mut worst: f64 = 0.0;
                    for (g, d) in got.iter().zip(&exact) {
                        for k in 0..3 {
                            let v = g[k].as_f64().unwrap();
                            assert!(v.is_finite());
                            worst = worst.max((v - d.position[k]).abs());
                        }
                    }
                    let allowed = match path {
                        "vat" => 2e-6 * size + vat_slack,
                        _ => (2e-6 + bones_relative) * size,
                    };
                    assert!(
                        worst <= allowed,
                        "{stem} {path} {} frame {frame} {}#{prim}: off by {worst:e} ({:e} of the size)",
                        meta.name,
                        p["node"],
                        worst / size
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0, "{stem}: nothing was compared");
    true
}

#[test]
fn a_reader_of_the_sidecar_rebuilds_our_fixture() {
    check_model(&rigbake_fixtures::fixture("tentacle.glb"));
}

#[test]
fn a_reader_of_the_sidecar_rebuilds_folded_and_paged_vats() {
    // At 64 texels the tentacle's VAT (204 vertices in 4 bands, 92 rows)
    // folds into 6 pages and its bone texture into 2 column blocks; at 240
    // fps and 500 texels the VAT's 722 rows fold into 2 column blocks of one
    // page. The first, middle and last frames of each clip land on
    // different blocks and pages.
    let model = rigbake_fixtures::fixture("tentacle.glb");
    check_model_with(&model, &["--max-texture-size", "64"]);
    // The same fold with qts bone textures (2 texels per joint), which the
    // player rebuilds from quaternion, translation and scale.
    check_model_with(&model, &["--max-texture-size", "64", "--layout", "qts"]);
    check_model_with(&model, &["--max-texture-size", "500", "--fps", "240"]);
}

/// The 16-bit forms (format 1.13): PNG16 VAT positions carrying packed
/// normals, read by their `bounds`, and `qts` bone textures at `unorm16`,
/// the quaternion texel as `u * 2 - 1` and the other by `bounds`; the
/// sidecar names the normals' encoding.
#[test]
fn a_reader_of_the_sidecar_rebuilds_16_bit_forms() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let flags = [
        "--format",
        "png16",
        "--normals",
        "--direction-encoding",
        "packed",
        "--layout",
        "qts",
        "--precision",
        "unorm16",
    ];
    if !check_model_with(&model, &flags) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let mut all = vec!["--vat"];
    all.extend(flags);
    let r = bake(std::slice::from_ref(&model), out.path(), &all);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: Value = serde_json::from_slice(
        &std::fs::read(out.path().join("tentacle/tentacle.rigbake.json")).unwrap(),
    )
    .unwrap();
    let textures = doc["textures"].as_array().unwrap();
    let normals: Vec<&Value> = textures
        .iter()
        .filter(|t| t["role"] == "vat_normals")
        .collect();
    assert!(!normals.is_empty());
    for n in normals {
        assert_eq!(n["direction_encoding"], "packed", "{n}");
        assert!(
            textures
                .iter()
                .any(|t| t["role"] == "vat_positions" && t["file"] == n["file"]),
            "{n}: names no positions file"
        );
    }
    assert!(
        textures
            .iter()
            .filter(|t| t["role"] == "vat_positions")
            .all(|t| t.get("direction_encoding").is_none())
    );
}

#[test]
fn a_reader_of_the_sidecar_rebuilds_real_models() {
    let Some(models) = shared_models("a_reader_of_the_sidecar_rebuilds_real_models") else {
        return;
    };
    for m in ["khronos/Fox.glb", "khronos/CesiumMan.glb"] {
        if !check_model(&models.join(m)) {
            return;
        }
    }
}
