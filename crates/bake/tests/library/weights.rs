//! Bone-weight channels: hand cases on the eight-influence fixture, the
//! container section and the weights mesh agree, and skinning a vertex the
//! way a shader does (channels + bone texture) reproduces direct evaluation.

use std::path::{Path, PathBuf};

use glam::{DVec3, Mat4, Vec4};
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_format::container::Container;
use rigbake_format::meta::{Metadata, WeightsMetadata};

use crate::common::reference::{clip_of_row, deform, diagonal, pose_at};
use crate::common::{
    assert_none_failed, bake, bake_all, glb_primitive, model_files, read_exr, rgba_f32, settings,
    shared_models, stem,
};

/// Metadata, weight record, and each primitive's channels (RGBA per vertex
/// per channel) read from the container's vertex-data sections.
fn open(out: &Path, name: &str) -> (Metadata, WeightsMetadata, Vec<Vec<[f32; 4]>>) {
    let mut c = Container::open(&out.join(name).join(format!("{name}.rigbake"))).unwrap();
    c.verify().unwrap();
    let w = c
        .records()
        .weights
        .as_ref()
        .expect("a weights record")
        .clone();
    let data = w
        .primitives
        .iter()
        .map(|p| rgba_f32(&c.read_section(p.section as usize).unwrap()))
        .collect();
    (c.metadata().clone(), w, data)
}

/// (bone, weight) pairs of vertex `v` from its channels.
fn pairs(channels: &[[f32; 4]], per_vertex: usize, v: usize) -> Vec<(f32, f32)> {
    channels[v * per_vertex..(v + 1) * per_vertex]
        .iter()
        .flat_map(|c| [(c[0], c[1]), (c[2], c[3])])
        .collect()
}

#[test]
fn eight_influences_reduce_to_the_hand_computed_pairs() {
    let model = rigbake_fixtures::fixture("eight_influences.gltf");
    for max in [8usize, 6, 4, 1] {
        let out = tempfile::tempdir().unwrap();
        let r = bake(&model, out.path(), &settings(|s| s.max_influences = max)).baked();
        let (_, w, data) = open(out.path(), "eight_influences");
        // Every dropped influence here moves vertices far beyond verify's
        // tolerance (the fixture's joints all move): a warning says so,
        // with the recorded movement; keeping all eight says nothing.
        let warned = r.warnings.iter().find(|l| l.contains("--max-influences"));
        match (max, warned) {
            (8, None) => {}
            (8, Some(line)) => panic!("nothing dropped, yet: {line}"),
            (_, None) => panic!(
                "max {max}: no warning about dropped influences: {:?}",
                r.warnings
            ),
            (_, Some(line)) => {
                let moved = format!("{:.3e}", w.primitives[0].position_error);
                assert!(
                    line.contains(&format!("keeping {max} bone influence")),
                    "{line}"
                );
                assert!(line.contains(&moved), "`{moved}` missing from {line}");
                assert!(line.contains("--accept-recorded-loss"), "{line}");
            }
        }
        assert_eq!(w.max_influences as usize, max);
        assert_eq!(w.channels as usize, max.div_ceil(2));
        let per = w.channels as usize;
        for v in 0..18 {
            // The fixture gives joint (v + k) % 9 the weight (8 - k) / 36: the
            // strongest `max` are k = 0..max, renormalised by their sum.
            let all = rigbake_fixtures::models::eight_influences_of(v);
            let kept_sum: f64 = all[..max].iter().map(|p| p.1).sum();
            let got = pairs(&data[0], per, v);
            for (k, (bone, weight)) in got.iter().enumerate() {
                if k < max {
                    assert_eq!(
                        *bone,
                        f32::from(all[k].0),
                        "max {max}, vertex {v}, pair {k}"
                    );
                    assert!((f64::from(*weight) - all[k].1 / kept_sum).abs() < 1e-6);
                } else {
                    assert_eq!((*bone, *weight), (0.0, 0.0), "padding pairs are (0, 0)");
                }
            }
            let sum: f64 = got.iter().map(|p| f64::from(p.1)).sum();
            assert!((sum - 1.0).abs() < 1e-6, "weights sum to {sum}");
        }
        let p = &w.primitives[0];
        let dropped = 1.0 - (0..max).map(|k| (8 - k) as f64).sum::<f64>() / 36.0;
        assert!((p.dropped_max - dropped).abs() < 1e-6 && (p.dropped_mean - dropped).abs() < 1e-6);
        assert_eq!(
            p.position_error == 0.0,
            max == 8,
            "an error exactly when weight is dropped"
        );
    }
}

#[test]
fn dropping_cesium_mans_influences_warns_with_the_worst_movement() {
    // CesiumMan has up to 4 influences per vertex: keeping 2 moves
    // vertices by about 2.6% of its size, which verify then rejects; the
    // bake must say so instead of passing silently. Keeping 4 drops
    // nothing and says nothing.
    let Some(dir) = shared_models("dropping_cesium_mans_influences_warns_with_the_worst_movement")
    else {
        return;
    };
    let file = dir.join("khronos/CesiumMan.glb");
    for (max, warns) in [(2, true), (4, false)] {
        let out = tempfile::tempdir().unwrap();
        let r = bake(&file, out.path(), &settings(|s| s.max_influences = max)).baked();
        let line = r
            .warnings
            .iter()
            .find(|l| l.contains("bone influences per vertex"));
        assert_eq!(
            line.is_some(),
            warns,
            "max influences {max}: {:?}",
            r.warnings
        );
        if let Some(line) = line {
            let (_, w, _) = open(out.path(), "CesiumMan");
            let worst = w
                .primitives
                .iter()
                .map(|p| p.position_error)
                .fold(0.0, f64::max);
            assert!(line.contains(&format!("{worst:.3e}")), "{line}");
            assert!(line.contains("of the model's size"), "{line}");
        }
    }
}

#[test]
fn weights_mesh_is_valid_gltf_with_the_channels_as_attributes() {
    let mut models = vec![
        rigbake_fixtures::fixture("eight_influences.gltf"),
        rigbake_fixtures::fixture("two_skins.glb"),
    ];
    if let Some(shared) =
        shared_models("weights_mesh_is_valid_gltf_with_the_channels_as_attributes (shared part)")
    {
        models.extend(
            [
                "kaykit/Knight.glb",
                "khronos/CesiumMan.glb",
                "threejs/RobotExpressive.glb",
            ]
            .map(|f| shared.join(f)),
        );
    }
    let out = tempfile::tempdir().unwrap();
    assert_none_failed(&bake_all(&models, out.path(), &settings(|_| {})));
    for m in &models {
        let name = stem(m);
        let (_, w, data) = open(out.path(), &name);
        let file = out.path().join(&name).join(w.mesh_file.as_deref().unwrap());
        if let Some(report) = rigbake_fixtures::testkit::gltf_validator::validate(&file) {
            let issues = &report["issues"];
            assert_eq!(issues["numErrors"], 0, "{name}: {issues}");
            assert_eq!(issues["numWarnings"], 0, "{name}: {issues}");
        }
        let g = gltf::Gltf::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let blob = g.blob.clone().unwrap();
        let source = import_file(m, &ImportOptions::default()).unwrap();
        for (p, channels) in w.primitives.iter().zip(&data) {
            let prim = glb_primitive(&g, p.mesh_index as usize, p.mesh_primitive as usize);
            let names: Vec<String> = prim.attributes().map(|(s, _)| s.to_string()).collect();
            assert!(
                !names
                    .iter()
                    .any(|n| n.starts_with("JOINTS") || n.starts_with("WEIGHTS")),
                "{names:?}"
            );
            for c in 0..w.channels as usize {
                let semantic = gltf::mesh::Semantic::Extras(format!("RIGBAKE_UV{}", c + 1));
                let acc = prim
                    .get(&semantic)
                    .unwrap_or_else(|| panic!("{name}: _RIGBAKE_UV{} missing", c + 1));
                let view = acc.view().unwrap();
                let start = view.offset() + acc.offset();
                let values = rgba_f32(&blob[start..start + acc.count() * 16]);
                let expected: Vec<[f32; 4]> = channels
                    .iter()
                    .skip(c)
                    .step_by(w.channels as usize)
                    .copied()
                    .collect();
                assert_eq!(values, expected, "{name}: channel UV{}", c + 1);
            }
            if p.bound_to.is_some() {
                continue; // a bound prop: positions in its joint's bind space (crates/cli/tests/rig.rs)
            }
            // Original positions are kept, in the same vertex order.
            let node = source
                .nodes
                .iter()
                .position(|n| n.name == p.node && n.skin.is_some())
                .unwrap();
            let src =
                &source.meshes[source.nodes[node].mesh.unwrap()].primitives[p.primitive as usize];
            let reader = prim.reader(|_| Some(&blob[..]));
            let positions: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
            let want: Vec<[f32; 3]> = src.positions.iter().map(|v| v.to_array()).collect();
            assert_eq!(positions, want, "{name}: positions");
        }
    }
    // Two skins: two index spaces, each primitive pointing at its own.
    let (meta, w, _) = open(out.path(), "two_skins");
    let spaces: Vec<(String, u32, usize)> = w
        .primitives
        .iter()
        .map(|p| {
            (
                p.node.clone(),
                p.skin,
                meta.skins[p.skin as usize].joints.len(),
            )
        })
        .collect();
    assert_eq!(
        spaces,
        [
            ("left_mesh".to_owned(), 0, 2),
            ("right_mesh".to_owned(), 1, 3)
        ]
    );
}

/// Skins every vertex of every weighted primitive the way a shader does
/// (channels + matrices read back from the bone EXR) at every `stride`-th
/// row and compares with direct evaluation; returns (largest error relative to
/// the diagonal, largest recorded truncation error relative to the diagonal).
fn shader_skinning_error(model_path: &Path, out: &Path, stride: usize) -> (f64, f64) {
    let name = stem(model_path);
    let model = import_file(model_path, &ImportOptions::default()).unwrap();
    let (meta, w, data) = open(out, &name);
    let dir = out.join(&name);
    let mut pose = LocalPose::rest(&model);
    let (mut worst, mut worst_recorded) = (0.0f64, 0.0f64);
    let rows: usize = meta.clips.iter().map(|c| c.frames as usize).sum();
    for (p, channels) in w.primitives.iter().zip(&data) {
        if p.bound_to.is_some() {
            continue; // bound props are checked in crates/cli/tests/rig.rs
        }
        let tex =
            read_exr(&dir.join(&meta.textures[meta.skins[p.skin as usize].texture as usize].name));
        let node = model
            .nodes
            .iter()
            .position(|n| n.name == p.node && n.skin.is_some())
            .unwrap();
        let src = &model.meshes[model.nodes[node].mesh.unwrap()].primitives[p.primitive as usize];
        let per = w.channels as usize;
        let mut results = Vec::new();
        for row in (0..rows).step_by(stride) {
            let (clip, frame) = clip_of_row(&meta.clips, row);
            pose_at(&model, clip, frame, &mut pose);
            let direct = deform(&model, &pose, node, p.primitive as usize, Some(node));
            for (v, d) in direct.iter().enumerate() {
                let mut acc = DVec3::ZERO;
                for (bone, weight) in pairs(channels, per, v) {
                    if weight == 0.0 {
                        continue;
                    }
                    let j = bone as usize;
                    let px = |c: usize| {
                        let at = (row * tex.width + 4 * j + c) * 4;
                        Vec4::from_slice(&tex.data[at..at + 4])
                    };
                    let m = Mat4::from_cols(px(0), px(1), px(2), px(3)).as_dmat4();
                    acc += m.transform_point3(src.positions[v].as_dvec3()) * f64::from(weight);
                }
                results.push((acc.distance(d.position), d.position));
            }
        }
        let diag = diagonal(results.iter().map(|r| r.1)).max(1e-9);
        for (e, _) in &results {
            worst = worst.max(e / diag);
        }
        worst_recorded = worst_recorded.max(p.position_error / diag);
    }
    (worst, worst_recorded)
}

#[test]
fn shader_skinning_reproduces_direct_evaluation_on_every_skinned_model() {
    let Some(models) =
        shared_models("shader_skinning_reproduces_direct_evaluation_on_every_skinned_model")
    else {
        return;
    };
    let mut files: Vec<PathBuf> = model_files(&models)
        .into_iter()
        // BrainStem's Draco copy is compared with BrainStem in crates/cli/tests/compressed.rs.
        .filter(|p| !stem(p).contains("draco"))
        .collect();
    files.push(rigbake_fixtures::fixture("eight_influences.gltf"));
    let out = tempfile::tempdir().unwrap();
    // No failure: models without skins are skipped, not failed.
    assert_none_failed(&bake_all(
        &files,
        out.path(),
        &settings(|s| s.max_influences = 8),
    ));
    let out2 = tempfile::tempdir().unwrap();
    assert_none_failed(&bake_all(
        &files,
        out2.path(),
        &settings(|s| s.max_influences = 2),
    ));
    let mut checked = 0;
    for f in &files {
        let name = stem(f);
        if !out
            .path()
            .join(&name)
            .join(format!("{name}.rigbake"))
            .exists()
        {
            continue; // no skin: skipped
        }
        let rows: usize = Container::open(&out.path().join(&name).join(format!("{name}.rigbake")))
            .unwrap()
            .metadata()
            .clips
            .iter()
            .map(|c| c.frames as usize)
            .sum();
        let stride = rows.div_ceil(40);
        // Nothing dropped: f32 matrices only (see bones.rs).
        let (e, recorded) = shader_skinning_error(f, out.path(), stride);
        assert_eq!(recorded, 0.0, "{name}: nothing dropped at 8 influences");
        assert!(e <= 1e-5, "{name}: {e:e}");
        // Two pairs: within the recorded truncation error (plus f32 noise).
        let (e2, recorded2) = shader_skinning_error(f, out2.path(), stride);
        eprintln!("{name}: full {e:.2e}; 2 pairs {e2:.2e} (recorded {recorded2:.2e})");
        assert!(
            e2 <= recorded2 + 1e-5,
            "{name}: {e2:e} > recorded {recorded2:e}"
        );
        checked += 1;
    }
    assert!(checked >= 13, "{checked} models checked");
}
