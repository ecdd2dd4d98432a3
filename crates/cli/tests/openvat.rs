//! The OpenVAT-compatible export (`rigbake vat --compat openvat`), decoded
//! with OpenVAT's players' math by `tools/openvat/decode.py` (Python and the
//! OpenEXR reference library, no rigbake code) and compared with direct
//! evaluation (`rigbake_core::reference`).
//!
//! Tolerance: the positions texture stores `t = (offset - Min) / (Max -
//! Min)` as 32-bit floats in 0..1, whose spacing is at most 2^-24; decoding
//! `Min + t * (Max - Min)` is then off by at most `(Max - Min) * 2^-24` per
//! component, plus the rounding of computing `t` and the offset in f32 (a
//! few ulps of the offsets' span). Allowed: `8 * 2^-24 * span` plus the
//! VAT evaluator's own f32 error against the f64 reference, 2e-6 of the
//! model's size (the VAT tests' bound).

mod common;

use std::path::Path;
use std::process::Command;

use common::reference::{clip_of_row, deform, diagonal, mesh_node, pose_at};
use common::{glb_primitive, rigbake, shared_models};
use glam::DVec3;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_format::container::Container;

/// Runs the player-math decoder on an export; when python3 or its OpenEXR
/// module is missing and `RIGBAKE_REQUIRE_OPENEXR` is unset, the same
/// player math in Rust ([`decode_here`], the exr crate reading the EXR).
fn decode(folder: &Path, name: &str, stride: usize) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/openvat/decode.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(folder)
        .arg(name)
        .arg(stride.to_string())
        .output();
    let required = std::env::var_os("RIGBAKE_REQUIRE_OPENEXR").is_some();
    match out {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        Ok(o) if o.status.code() == Some(3) && !required => {
            eprintln!("python3 has no OpenEXR module (pip install OpenEXR): decoding in Rust");
            Some(decode_here(folder, name, stride))
        }
        Ok(o) => panic!("decode.py failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) if !required => {
            eprintln!("cannot run python3 ({e}): decoding in Rust");
            Some(decode_here(folder, name, stride))
        }
        Err(e) => panic!("cannot run python3: {e}"),
    }
}

/// `tools/openvat/decode.py`'s player math and output, in Rust: the EXR
/// read by the exr crate, the mesh by the gltf crate (no rigbake code).
fn decode_here(folder: &Path, name: &str, stride: usize) -> serde_json::Value {
    let info: serde_json::Value = serde_json::from_slice(
        &std::fs::read(folder.join(format!("{name}-remap_info.json"))).unwrap(),
    )
    .unwrap();
    let v3 =
        |k: &str| -> [f64; 3] { std::array::from_fn(|c| info["os-remap"][k][c].as_f64().unwrap()) };
    let (lo, hi) = (v3("Min"), v3("Max"));
    let vat = common::read_exr(&folder.join(format!("{name}_vat.exr")));
    let (w, h) = (vat.width, vat.height);
    let g = gltf::Gltf::from_slice(&std::fs::read(folder.join(format!("{name}.glb"))).unwrap())
        .unwrap();
    let blob = g.blob.clone().unwrap();
    let (mut rest, mut uv1) = (Vec::new(), Vec::new());
    for prim in g.meshes().next().unwrap().primitives() {
        let p = prim.get(&gltf::Semantic::Positions).unwrap();
        let t = prim.get(&gltf::Semantic::TexCoords(1)).unwrap();
        rest.extend(accessor_floats(&blob, &p, 3));
        uv1.extend(accessor_floats(&blob, &t, 2));
    }
    let mut out = Vec::new();
    for (clip, a) in info["animations"].as_object().unwrap() {
        let start = a["startFrame"].as_u64().unwrap() as usize;
        let count = a["endFrame"].as_u64().unwrap() as usize - start + 1;
        let mut frames: Vec<usize> = (0..count).step_by(stride).collect();
        if frames.last() != Some(&(count - 1)) {
            frames.push(count - 1);
        }
        let decoded: Vec<serde_json::Value> = frames
            .iter()
            .map(|&frame| {
                let row = (start - 1 + frame) as f64;
                let positions: Vec<[f64; 3]> = rest
                    .iter()
                    .zip(&uv1)
                    .map(|(r, uv)| {
                        let x = (uv[0] as f64 * w as f64).floor() as usize;
                        let y = ((uv[1] as f64 + row / h as f64) * h as f64).floor() as usize;
                        let i = (y * w + x) * 4;
                        let o: [f64; 3] = std::array::from_fn(|c| {
                            lo[c] + vat.data[i + c] as f64 * (hi[c] - lo[c])
                        });
                        [r[0] as f64 + o[0], r[1] as f64 + o[2], r[2] as f64 - o[1]]
                    })
                    .collect();
                serde_json::json!({"frame": frame, "positions": positions})
            })
            .collect();
        out.push(serde_json::json!({"name": clip, "frames": decoded}));
    }
    serde_json::json!({ "clips": out })
}

/// The f32 elements of `n` components of accessor `a` in `blob`.
fn accessor_floats(blob: &[u8], a: &gltf::Accessor<'_>, n: usize) -> Vec<Vec<f32>> {
    let view = a.view().unwrap();
    let stride = view.stride().unwrap_or(4 * n);
    let start = view.offset() + a.offset();
    (0..a.count())
        .map(|i| {
            (0..n)
                .map(|k| {
                    let at = start + i * stride + 4 * k;
                    f32::from_le_bytes(blob[at..at + 4].try_into().unwrap())
                })
                .collect()
        })
        .collect()
}

/// Decodes the export of `model` and compares every decoded vertex with
/// direct evaluation; returns (largest error, tolerance).
fn check(model: &Path, name: &str, stride: usize) -> Option<(f64, f64)> {
    let out = tempfile::tempdir().unwrap();
    common::openvat_export(model, out.path());
    check_export(model, &out.path().join(name), name, stride)
}

/// [`check`] of an export already written to `dir`.
fn check_export(model: &Path, dir: &Path, name: &str, stride: usize) -> Option<(f64, f64)> {
    let decoded = decode(dir, name, stride)?;
    let info: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!("{name}-remap_info.json"))).unwrap(),
    )
    .unwrap();
    let lo = &info["os-remap"]["Min"];
    let hi = &info["os-remap"]["Max"];
    let span = (0..3)
        .map(|c| hi[c].as_f64().unwrap() - lo[c].as_f64().unwrap())
        .fold(0.0f64, f64::max);
    let c = Container::open(&dir.join(format!("{name}.rigbake"))).unwrap();
    let meta = c.metadata().clone();
    let vat = c.records().vat.as_ref().unwrap().clone();
    let source = import_file(model, &ImportOptions::default()).unwrap();
    let reference = vat.reference_node.as_ref().map(|n| mesh_node(&source, n));
    let mut pose = LocalPose::rest(&source);
    let mut worst = 0.0f64;
    let mut all = Vec::new();
    for clip in decoded["clips"].as_array().unwrap() {
        let meta_clip = meta.clips.iter().find(|c| c.name == clip["name"]).unwrap();
        for f in clip["frames"].as_array().unwrap() {
            let frame = f["frame"].as_u64().unwrap() as usize;
            let (same, at) = clip_of_row(&meta.clips, meta_clip.start_row as usize + frame);
            assert_eq!((same.name.as_str(), at), (meta_clip.name.as_str(), frame));
            pose_at(&source, meta_clip, frame, &mut pose);
            let want: Vec<DVec3> = vat
                .primitives
                .iter()
                .flat_map(|p| {
                    let node = mesh_node(&source, &p.node);
                    deform(&source, &pose, node, p.primitive as usize, reference)
                        .into_iter()
                        .map(|d| d.position)
                })
                .collect();
            let got = f["positions"].as_array().unwrap();
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                let g = DVec3::new(
                    g[0].as_f64().unwrap(),
                    g[1].as_f64().unwrap(),
                    g[2].as_f64().unwrap(),
                );
                worst = worst.max((g - *w).abs().max_element());
            }
            all.extend(want);
        }
    }
    let tolerance = 8.0 * span * 2f64.powi(-24) + 2e-6 * diagonal(all.into_iter());
    eprintln!("{name}: largest error {worst:e}, tolerance {tolerance:e}");
    Some((worst, tolerance))
}

#[test]
fn fox_export_names_its_clips_and_decodes_to_direct_evaluation() {
    let Some(shared) = shared_models("fox_export_names_its_clips_and_decodes_to_direct_evaluation")
    else {
        return;
    };
    let model = shared.join("khronos/Fox.glb");
    let out = tempfile::tempdir().unwrap();
    common::openvat_export(&model, out.path());
    let dir = out.path().join("Fox");
    let text = std::fs::read_to_string(dir.join("Fox-remap_info.json")).unwrap();
    let info: serde_json::Value = serde_json::from_str(&text).unwrap();
    let names: Vec<&String> = info["animations"].as_object().unwrap().keys().collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["Run", "Survey", "Walk"]);
    // The players keep the JSON order: clip order as in the source.
    let at = |n: &str| text.find(&format!("\"{n}\"")).unwrap();
    assert!(
        at("Survey") < at("Walk") && at("Walk") < at("Run"),
        "{text}"
    );
    let frames = info["os-remap"]["Frames"].as_u64().unwrap();
    assert_eq!(info["animations"]["Survey"]["startFrame"], 1);
    assert_eq!(info["animations"]["Run"]["endFrame"], frames);
    for f in [
        "Fox_vat.exr",
        "Fox_vnrm.exr",
        "Fox.glb",
        "Fox-openvat.rigbake.json",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    if let Some(issues) = common::gltf_validator(&dir.join("Fox.glb")) {
        assert_eq!(issues["numErrors"], 0, "{issues}");
        assert_eq!(issues["numWarnings"], 0, "{issues}");
    }
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("Fox-openvat.rigbake.json")).unwrap())
            .unwrap();
    assert_eq!(sidecar["clips"].as_array().unwrap().len(), 3);
    assert_eq!(sidecar["mesh"]["lookup_uv_set"], 1);
    assert_eq!(sidecar["remap"]["min"], info["os-remap"]["Min"]);

    let Some((worst, tolerance)) = check(&model, "Fox", 5) else {
        return;
    };
    assert!(
        worst <= tolerance,
        "largest error {worst}, tolerance {tolerance}"
    );
}

#[test]
fn textured_fixture_export_keeps_its_look_with_the_lookup_in_uv_set_1() {
    let model = rigbake_fixtures::fixture("textured.gltf");
    let out = tempfile::tempdir().unwrap();
    common::openvat_export(&model, out.path());
    let file = out.path().join("textured/textured.glb");
    if let Some(issues) = common::gltf_validator(&file) {
        assert_eq!(issues["numErrors"], 0, "{issues}");
        assert_eq!(issues["numWarnings"], 0, "{issues}");
    }
    let g = gltf::Gltf::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let prim = glb_primitive(&g, 0, 0);
    // Five source sets plus the lookup: set 0 stays, the lookup is set 1,
    // source sets 1..4 move to 2..5 and the emission texture follows (2 -> 3).
    assert_eq!(
        prim.attributes()
            .filter(|(s, _)| matches!(s, gltf::Semantic::TexCoords(_)))
            .count(),
        6
    );
    let m = prim.material();
    assert_eq!(m.emissive_texture().unwrap().tex_coord(), 3);
    assert_eq!(
        m.pbr_metallic_roughness()
            .base_color_texture()
            .unwrap()
            .tex_coord(),
        0
    );
    let Some((worst, tolerance)) = check(&model, "textured", 1) else {
        return;
    };
    assert!(
        worst <= tolerance,
        "largest error {worst}, tolerance {tolerance}"
    );
}

#[test]
fn an_export_taller_than_the_maximum_is_refused_not_folded() {
    // The tentacle's 204 vertices fit 210 texels, its frames at 120 fps do
    // not: rigbake's own VAT folds them into pages, OpenVAT's players
    // cannot read that, so the export is refused with what helps.
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let out = tempfile::tempdir().unwrap();
    let stderr = refused(
        &model,
        out.path(),
        &["--max-texture-size", "210", "--fps", "120"],
    );
    assert!(
        stderr.contains("the OpenVAT texture would be 204 x ")
            && stderr.contains("cannot address folded frames or pages"),
        "{stderr}"
    );
}

/// Runs `rigbake vat MODEL --compat openvat` with `flags`, which must fail
/// (exit 1) leaving no texture behind; returns stderr.
fn refused(model: &Path, out: &Path, flags: &[&str]) -> String {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "vat".as_ref(),
        model.as_os_str(),
        "--compat".as_ref(),
        "openvat".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ];
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    let r = rigbake(&args);
    let stderr = String::from_utf8_lossy(&r.stderr).into_owned();
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    let written: Vec<_> = walk(out);
    assert!(
        written.iter().all(|p| !p.ends_with(".exr")),
        "no texture is left behind: {written:?}"
    );
    stderr
}

/// Every file under `dir`, as strings.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.to_string_lossy().into_owned());
        }
    }
    out
}

/// The export's node stands on the reference node's rest pose (the
/// container's placement record), and it is in OpenVAT's own layout (its
/// `Use Single Row` default, which its players read): one band, the
/// texture as wide as the exported vertices and as tall as the frames,
/// every lookup UV (`TEXCOORD_1`) naming its own vertex's column at row 0.
/// Returns the texture's width.
fn assert_placed_and_one_band(dir: &Path, name: &str) -> usize {
    let c = Container::open(&dir.join(format!("{name}.rigbake"))).unwrap();
    let placement = c
        .records()
        .placement
        .as_ref()
        .expect("a placement record")
        .reference
        .clone();
    let g =
        gltf::Gltf::from_slice(&std::fs::read(dir.join(format!("{name}.glb"))).unwrap()).unwrap();
    let node = g.nodes().next().unwrap();
    let want = glam::DMat4::from_cols_array(&placement.matrix).as_mat4();
    assert_eq!(
        glam::Mat4::from_cols_array_2d(&node.transform().matrix()),
        want,
        "{name}: the export's node matrix"
    );
    let sidecar: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!("{name}-openvat.rigbake.json"))).unwrap(),
    )
    .unwrap();
    let info: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!("{name}-remap_info.json"))).unwrap(),
    )
    .unwrap();
    let frames = info["os-remap"]["Frames"].as_u64().unwrap() as usize;
    let vertices = sidecar["mesh"]["vertices"].as_u64().unwrap() as usize;
    assert_eq!(sidecar["mesh"]["bands"], 1, "{name}: {sidecar}");
    let vat = common::read_exr(&dir.join(format!("{name}_vat.exr")));
    let vnrm = common::read_exr(&dir.join(format!("{name}_vnrm.exr")));
    for (what, exr) in [("positions", &vat), ("normals", &vnrm)] {
        assert_eq!(
            (exr.width, exr.height),
            (vertices, frames),
            "{name}: the {what} texture is one band"
        );
        assert_eq!(
            sidecar["textures"][what]["width"], vertices,
            "{name}: {sidecar}"
        );
        assert_eq!(
            sidecar["textures"][what]["height"], frames,
            "{name}: {sidecar}"
        );
    }
    let blob = g.blob.clone().unwrap();
    let mut vertex = 0;
    for prim in g.meshes().next().unwrap().primitives() {
        let a = prim.get(&gltf::Semantic::TexCoords(1)).unwrap();
        for uv in accessor_floats(&blob, &a, 2) {
            // The texel a point sampler reads: floor(uv * size).
            let got = (
                (uv[0] * vertices as f32).floor() as usize,
                (uv[1] * frames as f32).floor() as usize,
            );
            assert_eq!(got, (vertex, 0), "{name}: vertex {vertex}'s lookup {uv:?}");
            vertex += 1;
        }
    }
    assert_eq!(vertex, vertices, "{name}: every exported vertex is drawn");
    vertices
}

/// OpenVAT's own layout (issue 50.1): one band, the texture as wide as the
/// exported vertices (CesiumMan 3,273, RobotExpressive 7,214, girl's two
/// primitives 496, each vertex counted once), each export decoding to
/// direct evaluation and standing on its placement; past OpenVAT's 8,192
/// vertices (Xbot 28,374, BrainStem 34,159) the export is refused naming
/// the limit, never folded into bands its players misread.
#[test]
fn exports_are_one_band_as_wide_as_the_vertices_up_to_openvats_limit() {
    let Some(shared) =
        shared_models("exports_are_one_band_as_wide_as_the_vertices_up_to_openvats_limit")
    else {
        return;
    };
    for (file, name, width, stride) in [
        ("raylib/girl.glb", "girl", 496, 7),
        ("khronos/CesiumMan.glb", "CesiumMan", 3273, 7),
        ("threejs/RobotExpressive.glb", "RobotExpressive", 7214, 29),
    ] {
        let model = shared.join(file);
        let out = tempfile::tempdir().unwrap();
        common::openvat_export(&model, out.path());
        let dir = out.path().join(name);
        let c = Container::open(&dir.join(format!("{name}.rigbake"))).unwrap();
        let vat_vertices: u32 = c
            .records()
            .vat
            .as_ref()
            .unwrap()
            .primitives
            .iter()
            .map(|p| p.vertices)
            .sum();
        assert_eq!(vat_vertices as usize, width, "{name}");
        assert_eq!(assert_placed_and_one_band(&dir, name), width, "{name}");
        if let Some((worst, tolerance)) = check_export(&model, &dir, name, stride) {
            assert!(
                worst <= tolerance,
                "{name}: largest error {worst}, tolerance {tolerance}"
            );
        }
    }
    for (file, vertices) in [
        ("reexports/Xbot.glb", 28374),
        ("khronos/BrainStem.glb", 34159),
    ] {
        let out = tempfile::tempdir().unwrap();
        let stderr = refused(&shared.join(file), out.path(), &["--fps", "4"]);
        assert!(
            stderr.contains(&format!(
                "the OpenVAT export would be {vertices} texels wide ({vertices} vertices), over OpenVAT's limit of 8192 vertices"
            )) && stderr.contains(file.rsplit('/').next().unwrap()),
            "{file}: {stderr}"
        );
    }
}

/// A model wider than OpenVAT's limit, built here: the tentacle's mesh on
/// 41 nodes is 8,364 vertices. The export is refused naming the limit, the
/// file and `meshes`; a maximum texture size under the width is named as
/// the limit instead.
#[test]
fn an_export_wider_than_openvats_limit_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::builder::Builder::from_glb(
        &std::fs::read(rigbake_fixtures::fixture("tentacle.glb")).unwrap(),
    );
    let mesh_node = b.node_named("tentacle_mesh");
    for k in 1..41 {
        let copy = b.node(serde_json::json!({"name": format!("copy{k}"), "mesh": 0, "skin": 0}));
        b.get_mut("scenes", 0)["nodes"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!(copy));
        assert_ne!(copy, mesh_node);
    }
    let model = tmp.path().join("wide.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let out = tmp.path().join("out");
    let stderr = refused(&model, &out, &[]);
    assert!(
        stderr.contains("wide.glb")
            && stderr.contains("meshes: the OpenVAT export would be 8364 texels wide (8364 vertices), over OpenVAT's limit of 8192 vertices")
            && stderr.contains("cannot address vertices wrapped into bands"),
        "{stderr}"
    );
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    let stderr = refused(&tentacle, &out, &["--max-texture-size", "200"]);
    assert!(
        stderr.contains("over the limit of 200 texels a side (--max-texture-size)"),
        "{stderr}"
    );
}

/// A model with LOD levels (issue 49, class 9): the export holds level 0
/// only, never every level stacked into one mesh for OpenVAT's players to
/// draw on top of each other, and says so.
#[test]
fn an_export_of_a_model_with_lod_levels_holds_level_zero_only() {
    let model = rigbake_fixtures::fixture("tentacle_lods.glb");
    let out = tempfile::tempdir().unwrap();
    let warnings = common::openvat_export_with(&model, out.path(), &[]);
    assert!(
        warnings.contains("the OpenVAT export holds level 0 of LOD group `tentacle_mesh` only (its 2 further levels"),
        "{warnings}"
    );
    let dir = out.path().join("tentacle_lods");
    let source = import_file(&model, &ImportOptions::default()).unwrap();
    let level0 = mesh_node(&source, "tentacle_mesh");
    let mesh = source.nodes[level0].mesh.unwrap();
    let want: usize = source.meshes[mesh]
        .primitives
        .iter()
        .map(|p| p.vertex_count())
        .sum();
    let total: usize = source
        .nodes
        .iter()
        .filter_map(|n| n.mesh)
        .flat_map(|m| &source.meshes[m].primitives)
        .map(|p| p.vertex_count())
        .sum();
    assert!(want < total, "the fixture's levels add vertices");
    assert_eq!(assert_placed_and_one_band(&dir, "tentacle_lods"), want);
    let g = gltf::Gltf::from_slice(&std::fs::read(dir.join("tentacle_lods.glb")).unwrap()).unwrap();
    assert_eq!(
        g.meshes().next().unwrap().primitives().count(),
        source.meshes[mesh].primitives.len()
    );
}
