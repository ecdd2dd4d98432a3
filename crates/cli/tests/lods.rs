//! LODs (issue 18): a model with three levels of detail, declared by
//! `MSFT_lod`, by `_LOD<n>` names or by the manifest (`[[model.lod]]`,
//! `--lod`), bakes into one bone texture, one weights mesh per level and
//! one VAT atlas; every level, skinned from its own weights mesh and the
//! bone texture, and read through its own lookup UV from the VAT, matches
//! direct evaluation (`rigbake_core::reference`). Bad declarations are
//! clear errors.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use common::reference::{clip_of_row, deform, diagonal, pose_at};
use common::{bake, glb_primitive, read_exr, rgba_f32, rigbake};
use glam::{DVec3, Mat4, Vec4};
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_fixtures::builder::Builder;
use rigbake_fixtures::lods::{LodStyle, level_names, tentacle_lods};
use rigbake_format::container::Container;
use rigbake_format::meta::{LodSource, LodsMetadata, Metadata, VatMetadata, WeightsMetadata};
use serde_json::json;

/// Position errors are f32 rounding of matrices and arithmetic (about
/// 1e-7 of the diagonal measured); the acceptance bound used throughout
/// the suite is 1e-5 of the diagonal.
const TOLERANCE: f64 = 1e-5;

fn write(dir: &Path, name: &str, b: &Builder) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, b.to_glb()).unwrap();
    path
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

struct Baked {
    dir: PathBuf,
    meta: Metadata,
    weights: WeightsMetadata,
    vat: Option<VatMetadata>,
    lods: LodsMetadata,
    channels: Vec<Vec<[f32; 4]>>,
}

/// The container was written in the format this build writes.
fn assert_current_version<R: std::io::Read + std::io::Seek>(c: &Container<R>) {
    use rigbake_format::container::FORMAT_MAJOR;
    use rigbake_format::records::FORMAT_MINOR;
    assert_eq!(
        c.version().to_string(),
        format!("{FORMAT_MAJOR}.{FORMAT_MINOR}")
    );
}

fn open(out: &Path, model: &Path) -> Baked {
    let name = stem(model);
    let dir = out.join(&name);
    let mut c = Container::open(&dir.join(format!("{name}.rigbake"))).unwrap();
    c.verify().unwrap();
    assert_current_version(&c);
    let weights = c
        .records()
        .weights
        .as_ref()
        .expect("a weights record")
        .clone();
    let channels = weights
        .primitives
        .iter()
        .map(|p| rgba_f32(&c.read_section(p.section as usize).unwrap()))
        .collect();
    Baked {
        meta: c.metadata().clone(),
        vat: c.records().vat.as_ref().cloned(),
        lods: c.records().lods.as_ref().expect("a LOD record").clone(),
        weights,
        channels,
        dir,
    }
}

fn bake_ok(models: &[PathBuf], out: &Path, flags: &[&str]) {
    let r = bake(models, out, flags);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Reads a float VEC4 or VEC3 attribute of a GLB primitive as f32 values.
fn floats(blob: &[u8], acc: &gltf::Accessor<'_>) -> Vec<f32> {
    let view = acc.view().unwrap();
    let start = view.offset() + acc.offset();
    let n = acc.count() * acc.dimensions().multiplicity();
    blob[start..start + 4 * n]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Skins every vertex of level `level`'s weights mesh the way a shader does
/// (its positions and `_RIGBAKE_UV*` channels from the GLB, matrices from
/// the bone EXR) at every row, and returns the largest distance to direct
/// evaluation relative to the diagonal.
fn weights_mesh_error(b: &Baked, model: &rigbake_core::Model, level: usize) -> f64 {
    let group = &b.lods.groups[0];
    let l = &group.levels[level];
    let file = b
        .dir
        .join(l.weights_file.as_deref().expect("a weights mesh"));
    if let Some(issues) = common::gltf_validator(&file) {
        assert_eq!(issues["numErrors"], 0, "{}: {issues}", file.display());
        assert_eq!(issues["numWarnings"], 0, "{}: {issues}", file.display());
    }
    let g = gltf::Gltf::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let blob = g.blob.clone().unwrap();
    assert_eq!(l.weights_primitives.len(), 1);
    let p = &b.weights.primitives[l.weights_primitives[0] as usize];
    assert_eq!(p.node, l.node);
    let prim = glb_primitive(&g, p.mesh_index as usize, p.mesh_primitive as usize);
    let positions = floats(&blob, &prim.get(&gltf::Semantic::Positions).unwrap());
    let per = b.weights.channels as usize;
    let channels: Vec<Vec<f32>> = (1..=per)
        .map(|c| {
            let semantic = gltf::mesh::Semantic::Extras(format!("RIGBAKE_UV{c}"));
            floats(&blob, &prim.get(&semantic).expect("channel attribute"))
        })
        .collect();
    // The GLB's channels are the container's.
    let from_container = &b.channels[l.weights_primitives[0] as usize];
    for (c, values) in channels.iter().enumerate() {
        let want: Vec<f32> = from_container
            .iter()
            .skip(c)
            .step_by(per)
            .flatten()
            .copied()
            .collect();
        assert_eq!(values, &want);
    }
    assert_eq!(b.meta.textures.len(), 1, "one bone texture");
    let tex = read_exr(&b.dir.join(&b.meta.textures[0].name));
    let node = model
        .nodes
        .iter()
        .position(|n| n.name == l.node && n.mesh.is_some())
        .unwrap();
    let rows: usize = b.meta.clips.iter().map(|c| c.frames as usize).sum();
    let mut pose = LocalPose::rest(model);
    let mut results = Vec::new();
    for row in 0..rows {
        let (clip, frame) = clip_of_row(&b.meta.clips, row);
        pose_at(model, clip, frame, &mut pose);
        let direct = deform(model, &pose, node, 0, Some(node));
        assert_eq!(direct.len() * 3, positions.len());
        for (v, d) in direct.iter().enumerate() {
            let rest = DVec3::new(
                f64::from(positions[3 * v]),
                f64::from(positions[3 * v + 1]),
                f64::from(positions[3 * v + 2]),
            );
            let mut acc = DVec3::ZERO;
            for ch in &channels {
                let pairs = &ch[4 * v..4 * v + 4];
                for (bone, weight) in [(pairs[0], pairs[1]), (pairs[2], pairs[3])] {
                    if weight == 0.0 {
                        continue;
                    }
                    let px = |c: usize| {
                        let at = (row * tex.width + 4 * bone as usize + c) * 4;
                        Vec4::from_slice(&tex.data[at..at + 4])
                    };
                    let m = Mat4::from_cols(px(0), px(1), px(2), px(3)).as_dmat4();
                    acc += m.transform_point3(rest) * f64::from(weight);
                }
            }
            results.push((acc.distance(d.position), d.position));
        }
    }
    let diag = diagonal(results.iter().map(|r| r.1)).max(1e-9);
    results.iter().map(|r| r.0 / diag).fold(0.0, f64::max)
}

/// Reads level `level` back from the VAT the way a shader does: its mesh
/// in the playback GLB, each vertex's lookup UV, the texel of every row in
/// the positions EXR; returns the largest distance to direct evaluation
/// (in the reference node's space) relative to the diagonal.
fn vat_error(b: &Baked, model: &rigbake_core::Model, level: usize) -> f64 {
    let vat = b.vat.as_ref().expect("a VAT record");
    let l = &b.lods.groups[0].levels[level];
    assert_eq!(l.vat_primitives.len(), 1);
    let index = l.vat_primitives[0] as usize;
    let p = &vat.primitives[index];
    assert_eq!(p.node, l.node);
    let file = b.dir.join(vat.playback_file.as_deref().unwrap());
    let g = gltf::Gltf::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let blob = g.blob.clone().unwrap();
    let prim = glb_primitive(&g, p.playback_mesh as usize, 0);
    // The tube has one UV set; the lookup UV is the next one.
    let lookup = floats(&blob, &prim.get(&gltf::Semantic::TexCoords(1)).unwrap());
    let tex = read_exr(&b.dir.join(&vat.textures[p.positions as usize].name));
    let node = model
        .nodes
        .iter()
        .position(|n| n.name == l.node && n.mesh.is_some())
        .unwrap();
    let reference = vat
        .reference_node
        .as_ref()
        .map(|r| model.nodes.iter().position(|n| &n.name == r).unwrap());
    let rows: usize = b.meta.clips.iter().map(|c| c.frames as usize).sum();
    let mut pose = LocalPose::rest(model);
    let mut results = Vec::new();
    for row in 0..rows {
        let (clip, frame) = clip_of_row(&b.meta.clips, row);
        pose_at(model, clip, frame, &mut pose);
        let direct = deform(model, &pose, node, 0, reference);
        assert_eq!(direct.len() * 2, lookup.len());
        for (v, d) in direct.iter().enumerate() {
            let s = common::lookup_vertex([lookup[2 * v], lookup[2 * v + 1]]);
            let (x, band) = (s % p.width as usize, s / p.width as usize);
            let y = row * p.bands as usize + band;
            let at = (y * tex.width + x) * 4;
            let got = DVec3::new(
                f64::from(tex.data[at]),
                f64::from(tex.data[at + 1]),
                f64::from(tex.data[at + 2]),
            );
            results.push((got.distance(d.position), d.position));
        }
    }
    let diag = diagonal(results.iter().map(|r| r.1)).max(1e-9);
    results.iter().map(|r| r.0 / diag).fold(0.0, f64::max)
}

/// The acceptance of issue 18 (LODs), for each way of declaring them.
#[test]
fn three_lods_share_one_bone_texture_and_every_level_matches_direct_evaluation() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            rigbake_fixtures::fixture("tentacle_lods.glb"),
            LodSource::MsftLod,
            level_names(LodStyle::MsftLod),
            vec![],
        ),
        (
            write(
                tmp.path(),
                "suffix.glb",
                &tentacle_lods(LodStyle::NameSuffix),
            ),
            LodSource::NameSuffix,
            level_names(LodStyle::NameSuffix),
            vec![],
        ),
        (
            write(tmp.path(), "plain.glb", &tentacle_lods(LodStyle::Plain)),
            LodSource::Manifest,
            level_names(LodStyle::Plain),
            vec![
                "--lod",
                "tentacle_mesh=tentacle_mesh_low,tentacle_mesh_lowest",
            ],
        ),
    ];
    for (model_path, source, names, extra) in &cases {
        let name = stem(model_path);
        let out = tmp.path().join(format!("out_{name}"));
        let mut flags = vec!["--vat", "--format", "exr32", "--normals"];
        flags.extend(extra);
        bake_ok(std::slice::from_ref(model_path), &out, &flags);
        let b = open(&out, model_path);
        let model = import_file(model_path, &ImportOptions::default()).unwrap();

        // One bone set and texture, played by all three levels.
        assert_eq!(b.meta.skins.len(), 1, "{name}");
        assert_eq!(b.meta.textures.len(), 1, "{name}");
        assert_eq!(
            b.meta.skins[0].mesh_nodes,
            names.map(str::to_owned),
            "{name}"
        );

        // The record lists the group, its levels and their files.
        assert_eq!(b.lods.groups.len(), 1, "{name}");
        let group = &b.lods.groups[0];
        assert_eq!(group.source, *source, "{name}");
        let nodes: Vec<&str> = group.levels.iter().map(|l| l.node.as_str()).collect();
        assert_eq!(nodes, names, "{name}");
        let files: Vec<Option<String>> = group
            .levels
            .iter()
            .map(|l| l.weights_file.clone())
            .collect();
        assert_eq!(
            files,
            [
                Some(format!("{name}.weights.glb")),
                Some(format!("{name}.lod1.weights.glb")),
                Some(format!("{name}.lod2.weights.glb")),
            ],
            "{name}"
        );
        let vertices: Vec<u32> = group.levels.iter().map(|l| l.vertices).collect();
        assert!(
            vertices[0] == 204 && vertices[1] < vertices[0] && vertices[2] < vertices[1],
            "{name}: meshopt reduced each level: {vertices:?}"
        );
        let coverage: Vec<Option<f64>> = group.levels.iter().map(|l| l.screen_coverage).collect();
        if *source == LodSource::MsftLod {
            assert_eq!(coverage, [Some(0.5), Some(0.2), Some(0.01)]);
        } else {
            assert_eq!(coverage, [None, None, None]);
        }

        // Each level's weights mesh skins like direct evaluation, and so
        // does each level read from the VAT atlas.
        for level in 0..3 {
            let e = weights_mesh_error(&b, &model, level);
            assert!(e < TOLERANCE, "{name} LOD{level} weights: {e}");
            let e = vat_error(&b, &model, level);
            assert!(e < TOLERANCE, "{name} LOD{level} VAT: {e}");
        }
        // The VAT is one atlas: each level has its own columns.
        let vat = b.vat.as_ref().unwrap();
        assert_eq!(vat.textures.len(), 2, "{name}: positions and normals");
        let width: u32 = vertices.iter().sum();
        assert!(vat.primitives.iter().all(|p| p.width == width), "{name}");

        // `rigbake verify` plays both paths of all three levels.
        let container = b.dir.join(format!("{name}.rigbake"));
        let r = rigbake(&[
            OsStr::new("verify"),
            container.as_os_str(),
            OsStr::new("--source"),
            model_path.as_os_str(),
            OsStr::new("--json"),
        ]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
        let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_eq!(report["pass"], true);
        for o in report["outputs"].as_array().unwrap() {
            assert_eq!(o["primitives"], 3, "{name}: {}", o["output"]);
        }

        // The sidecar lists the group, and each level's weights entries
        // name their file.
        let sidecar: serde_json::Value = serde_json::from_slice(
            &std::fs::read(b.dir.join(format!("{name}.rigbake.json"))).unwrap(),
        )
        .unwrap();
        let lods = &sidecar["lods"][0];
        assert_eq!(lods["levels"].as_array().unwrap().len(), 3);
        assert_eq!(lods["levels"][2]["node"], names[2]);
        let prims = sidecar["weights"]["primitives"].as_array().unwrap();
        assert_eq!(prims[0].get("mesh_file"), None);
        assert_eq!(
            prims[1]["mesh_file"],
            json!(format!("{name}.lod1.weights.glb"))
        );
    }
}

/// Pictures (`rigbake preview`, and the view test's reference) draw level 0
/// of every LOD group of the bake, whichever way the group was declared:
/// `MSFT_lod`, `_LOD<n>` names, and `--lod` (which the source knows nothing
/// of: the levels used to be drawn overlapping).
#[test]
fn pictures_draw_level_zero_of_every_group() {
    use rigbake::playback;
    use rigbake::preview::scene::{PathChoice, Topology};
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (rigbake_fixtures::fixture("tentacle_lods.glb"), vec![]),
        (
            write(
                tmp.path(),
                "suffix.glb",
                &tentacle_lods(LodStyle::NameSuffix),
            ),
            vec![],
        ),
        (
            write(tmp.path(), "plain.glb", &tentacle_lods(LodStyle::Plain)),
            vec![
                "--lod",
                "tentacle_mesh=tentacle_mesh_low,tentacle_mesh_lowest",
            ],
        ),
    ];
    for (model_path, extra) in &cases {
        let name = stem(model_path);
        let out = tmp.path().join(format!("pictures_{name}"));
        let mut flags = vec!["--vat"];
        flags.extend(extra);
        bake_ok(std::slice::from_ref(model_path), &out, &flags);
        let file = out.join(&name).join(format!("{name}.rigbake"));
        let loaded = playback::load(&file, Some(model_path), playback::Paths::All).unwrap();
        let model = &loaded.source.model;
        let levels = &loaded.lod_levels;
        assert_eq!(
            levels.iter().filter(|l| l.is_some()).count(),
            3,
            "{name}: three levels known"
        );
        for path in [PathChoice::Bones, PathChoice::Vat] {
            let drawn: Vec<&str> = Topology::new(&loaded, path)
                .drawn_nodes()
                .into_iter()
                .map(|n| model.nodes[n].name.as_str())
                .collect();
            let base = level_names(LodStyle::Plain)[0];
            let expected = if name == "suffix" {
                level_names(LodStyle::NameSuffix)[0]
            } else {
                base
            };
            assert_eq!(drawn, [expected], "{name} {path:?}");
        }
    }
}

/// `[[model.lod]]` in a manifest declares a group like `--lod`.
#[test]
fn manifest_lod_table_declares_a_group() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "plain.glb", &tentacle_lods(LodStyle::Plain));
    let manifest = tmp.path().join("rigbake.toml");
    std::fs::write(
        &manifest,
        "[[model]]\npath = \"plain.glb\"\n\n[[model.lod]]\nbase = \"tentacle_mesh\"\nlevels = [\"tentacle_mesh_low\", \"tentacle_mesh_lowest\"]\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let r = rigbake(&[
        OsStr::new("bake"),
        OsStr::new("--manifest"),
        manifest.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let b = open(&out, Path::new("plain.glb"));
    assert_eq!(b.lods.groups[0].source, LodSource::Manifest);
    assert_eq!(b.lods.groups[0].levels.len(), 3);
    assert!(b.dir.join("plain.lod2.weights.glb").is_file());

    // Without a declaration the plain model has no LODs: no record, one
    // weights mesh holding all three nodes (as before LODs existed).
    let out = tmp.path().join("out_plain");
    bake_ok(&[tmp.path().join("plain.glb")], &out, &[]);
    let c = Container::open(&out.join("plain").join("plain.rigbake")).unwrap();
    assert!(c.records().lods.as_ref().is_none());
    assert!(!out.join("plain").join("plain.lod1.weights.glb").exists());
}

/// Runs a bake expected to fail; returns its stderr.
fn bake_fails(model: &Path, out: &Path, flags: &[&str]) -> String {
    let r = bake(&[model.to_path_buf()], out, flags);
    let stderr = String::from_utf8_lossy(&r.stderr).into_owned();
    assert!(!r.status.success(), "expected a failure: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn bad_lod_declarations_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let msft = || tentacle_lods(LodStyle::MsftLod);
    let set_ids = |b: &mut Builder, ids: serde_json::Value| {
        let base = b.node_named("tentacle_mesh");
        b.get_mut("nodes", base)
            .insert("extensions".into(), json!({"MSFT_lod": {"ids": ids}}));
    };

    // MSFT_lod naming a node that does not exist.
    let mut b = msft();
    set_ids(&mut b, json!([1000]));
    let e = bake_fails(&write(tmp.path(), "range.glb", &b), &out, &[]);
    assert!(
        e.contains("MSFT_lod.ids[0]") && e.contains("nodes[1000] does not exist"),
        "{e}"
    );

    // MSFT_lod naming its own node.
    let mut b = msft();
    let base = b.node_named("tentacle_mesh");
    set_ids(&mut b, json!([base]));
    let e = bake_fails(&write(tmp.path(), "self.glb", &b), &out, &[]);
    assert!(e.contains("the base node itself"), "{e}");

    // A cycle: the level lists its base as its own level.
    let mut b = msft();
    let low = b.node_named("tentacle_mesh_low");
    b.get_mut("nodes", low)
        .insert("extensions".into(), json!({"MSFT_lod": {"ids": [base]}}));
    let e = bake_fails(&write(tmp.path(), "cycle.glb", &b), &out, &[]);
    assert!(e.contains("chains and cycles are refused"), "{e}");

    // Ids that are not node indices.
    let mut b = msft();
    set_ids(&mut b, json!([-1]));
    let e = bake_fails(&write(tmp.path(), "negative.glb", &b), &out, &[]);
    assert!(e.contains("MSFT_lod") && e.contains("schema"), "{e}");

    // A level bound to a different skin (same joints, other bind pose).
    for (style, level) in [
        (LodStyle::MsftLod, "tentacle_mesh_low"),
        (LodStyle::NameSuffix, "tentacle_LOD1"),
    ] {
        let mut b = tentacle_lods(style);
        let joints = b.root["skins"][0]["joints"].clone();
        let skin = b.push("skins", json!({"name": "other", "joints": joints}));
        let n = b.node_named(level);
        b.get_mut("nodes", n).insert("skin".into(), json!(skin));
        let e = bake_fails(&write(tmp.path(), "skin.glb", &b), &out, &[]);
        assert!(
            e.contains(level) && e.contains("skin `other`") && e.contains("share one skin"),
            "{e}"
        );
    }

    // A level that does not move with level 0 cannot share its texture.
    let mut b = tentacle_lods(LodStyle::NameSuffix);
    let n = b.node_named("tentacle_LOD2");
    b.get_mut("nodes", n)
        .insert("translation".into(), json!([1.0, 0.0, 0.0]));
    let e = bake_fails(&write(tmp.path(), "moved.glb", &b), &out, &[]);
    assert!(
        e.contains("tentacle_LOD2") && e.contains("cannot share one bone texture"),
        "{e}"
    );

    // The manifest (here --lod) naming a missing node, or a joint.
    let plain = write(tmp.path(), "plain.glb", &tentacle_lods(LodStyle::Plain));
    let e = bake_fails(
        &plain,
        &out,
        &[
            "--lod",
            "tentacle_mesh=tentacle_mesh_lo,tentacle_mesh_lowest",
        ],
    );
    assert!(
        e.contains("no node named `tentacle_mesh_lo`") && e.contains("tentacle_mesh_low"),
        "{e}"
    );
    let e = bake_fails(&plain, &out, &["--lod", "tentacle_mesh=seg3"]);
    assert!(
        e.contains("`seg3`") && e.contains("not a skinned mesh node"),
        "{e}"
    );
    let e = bake_fails(&plain, &out, &["--lod", "tentacle_mesh"]);
    assert!(e.contains("BASE=LOD1,LOD2"), "{e}");
    // No half-written output.
    assert!(!out.join("plain").join("plain.rigbake").exists());
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats")
        .join(name);
    let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("the schema itself is valid")
}

fn inspect_json(file: &Path) -> serde_json::Value {
    let r = rigbake(&[
        OsStr::new("inspect"),
        file.as_os_str(),
        OsStr::new("--json"),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    serde_json::from_slice(&r.stdout).unwrap()
}

fn assert_valid(validator: &jsonschema::Validator, doc: &serde_json::Value, what: &str) {
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

/// The sidecar, `inspect --json` of the container and of the source list
/// the LODs and follow their documented schemas; the text reports show
/// them.
#[test]
fn lod_documents_follow_their_schemas_and_text_reports_show_them() {
    let model = rigbake_fixtures::fixture("tentacle_lods.glb");
    let tmp = tempfile::tempdir().unwrap();
    bake_ok(
        std::slice::from_ref(&model),
        tmp.path(),
        &["--vat", "--weights-as-uv"],
    );
    let dir = tmp.path().join("tentacle_lods");
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("tentacle_lods.rigbake.json")).unwrap())
            .unwrap();
    assert_valid(&schema("sidecar.schema.json"), &sidecar, "sidecar");
    // The weight pairs' UV sets are found in each level's own file.
    for p in sidecar["weights"]["primitives"].as_array().unwrap() {
        assert_eq!(p["weights_uv_first"], 1, "{p}");
    }

    let container = dir.join("tentacle_lods.rigbake");
    let report = inspect_json(&container);
    assert_valid(&schema("inspect.schema.json"), &report, "inspect");
    assert_eq!(report["sidecar"], sidecar);
    assert_eq!(report["lods"]["groups"][0]["source"], "msft_lod");
    assert_eq!(
        report["lods"]["groups"][0]["levels"][1]["weights_file"],
        "tentacle_lods.lod1.weights.glb"
    );
    let r = rigbake(&[OsStr::new("inspect"), container.as_os_str()]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("LODs (1 group)")
            && text.contains("LOD2 tentacle_mesh_lowest")
            && text.contains("tentacle_lods.lod2.weights.glb"),
        "{text}"
    );

    let source = inspect_json(&model);
    assert_valid(&schema("inspect-source.schema.json"), &source, "source");
    let levels = &source["lods"][0]["levels"];
    assert_eq!(levels[0]["node"], "tentacle_mesh");
    assert_eq!(levels[0]["vertices"], 204);
    assert_eq!(levels.as_array().unwrap().len(), 3);
    let r = rigbake(&[OsStr::new("inspect"), model.as_os_str()]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("LOD1 tentacle_mesh_low") && text.contains("from MSFT_lod"),
        "{text}"
    );
}

/// `data` of primitive `p` of the mesh on `node` of `model`, as fixture
/// data (positions, normals, first UV set, influences, indices).
fn primitive_data(
    model: &rigbake_core::Model,
    node: usize,
    p: usize,
) -> rigbake_fixtures::parts::PrimitiveData {
    let prim = &model.meshes[model.nodes[node].mesh.unwrap()].primitives[p];
    let inf = prim.influences.as_ref().expect("skinned");
    let mut sets = Vec::new();
    for s in 0..inf.per_vertex / 4 {
        let (mut j, mut w) = (Vec::new(), Vec::new());
        for v in 0..prim.vertex_count() {
            let (joints, weights) = inf.vertex(v);
            j.push([0, 1, 2, 3].map(|k| joints[4 * s + k]));
            w.push([0, 1, 2, 3].map(|k| f64::from(weights[4 * s + k])));
        }
        sets.push((j, w));
    }
    rigbake_fixtures::parts::PrimitiveData {
        positions: prim
            .positions
            .iter()
            .map(|v| v.as_dvec3().to_array())
            .collect(),
        normals: prim
            .normals
            .iter()
            .flatten()
            .map(|v| v.as_dvec3().to_array())
            .collect(),
        uvs: prim.tex_coords.first().map_or_else(Vec::new, |uv| {
            uv.iter()
                .map(|t| [f64::from(t.x), f64::from(t.y)])
                .collect()
        }),
        influence_sets: sets,
        indices: prim.indices.clone().expect("indexed"),
        ..Default::default()
    }
}

/// A third-party character with LODs made at run time: CesiumMan's body
/// simplified by meshopt to 50% and 20% of its triangles, declared with
/// MSFT_lod on its mesh node (whose parent carries a matrix), bakes into
/// one bone texture and three weights meshes, and every level matches
/// direct evaluation on both paths.
#[test]
fn cesium_man_with_meshopt_lods_bakes_and_verifies_every_level() {
    let Some(models) =
        common::shared_models("cesium_man_with_meshopt_lods_bakes_and_verifies_every_level")
    else {
        return;
    };
    let source = models.join("khronos/CesiumMan.glb");
    let bytes = std::fs::read(&source).unwrap();
    let original = import_file(&source, &ImportOptions::default()).unwrap();
    let body = original.skinned_nodes().next().unwrap();
    let data = primitive_data(&original, body, 0);
    let mut b = Builder::from_glb(&bytes);
    let mut ids = Vec::new();
    for (k, ratio) in rigbake_fixtures::lods::LOD_RATIOS.iter().enumerate() {
        let level = rigbake_fixtures::lods::simplified(&data, *ratio);
        assert!(level.positions.len() < data.positions.len());
        let prim = rigbake_fixtures::parts::primitive(
            &mut b,
            &level,
            rigbake_fixtures::builder::Component::U16,
        );
        let mesh =
            rigbake_fixtures::parts::add_mesh(&mut b, &format!("body_lod{}", k + 1), vec![prim]);
        ids.push(b.node(json!({"name": format!("cesium_lod{}", k + 1), "mesh": mesh, "skin": 0})));
    }
    b.get_mut("nodes", body)
        .insert("extensions".into(), json!({"MSFT_lod": {"ids": ids}}));
    b.root.insert("extensionsUsed".into(), json!(["MSFT_lod"]));
    let tmp = tempfile::tempdir().unwrap();
    let model_path = write(tmp.path(), "CesiumLods.glb", &b);
    let out = tmp.path().join("out");
    bake_ok(
        std::slice::from_ref(&model_path),
        &out,
        &["--vat", "--format", "exr32"],
    );
    let baked = open(&out, &model_path);
    let model = import_file(&model_path, &ImportOptions::default()).unwrap();
    // The levels hang below the body's parent, like the body.
    let parent = model.nodes.iter().position(|n| n.name == "node0").unwrap();
    for &n in &model.lods[0].levels {
        assert_eq!(model.nodes[n].parent, Some(parent));
    }
    assert_eq!(baked.meta.textures.len(), 1);
    assert_eq!(baked.lods.groups[0].levels.len(), 3);
    for level in 0..3 {
        let e = weights_mesh_error(&baked, &model, level);
        assert!(e < TOLERANCE, "CesiumMan LOD{level} weights: {e}");
        let e = vat_error(&baked, &model, level);
        assert!(e < TOLERANCE, "CesiumMan LOD{level} VAT: {e}");
    }
    let container = baked.dir.join("CesiumLods.rigbake");
    let r = rigbake(&[
        OsStr::new("verify"),
        container.as_os_str(),
        OsStr::new("--source"),
        model_path.as_os_str(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
}

// ---------------------------------------------------------------------------
// Levels in extra files (issue 35)

/// A LOD file of the model `bytes` (imported as `model`), as `gltfpack
/// -si` or a DCC's LOD export writes one: the same skeleton, every skinned
/// mesh node's mesh simplified by meshopt to `ratio` of its triangles.
fn level_file(bytes: &[u8], model: &rigbake_core::Model, ratio: f64) -> Builder {
    let mut b = Builder::from_glb(bytes);
    let skinned: Vec<usize> = model.skinned_nodes().collect();
    for node in skinned {
        let mesh = &model.meshes[model.nodes[node].mesh.unwrap()];
        let prims = (0..mesh.primitives.len())
            .map(|p| {
                let level =
                    rigbake_fixtures::lods::simplified(&primitive_data(model, node, p), ratio);
                rigbake_fixtures::parts::primitive(
                    &mut b,
                    &level,
                    rigbake_fixtures::builder::Component::U16,
                )
            })
            .collect();
        let m = rigbake_fixtures::parts::add_mesh(&mut b, &format!("{}_lod", mesh.name), prims);
        b.get_mut("nodes", node).insert("mesh".into(), json!(m));
    }
    b
}

/// The model `base` with the skinned meshes of `levels` attached as its
/// lower LOD levels, as the bake documents it (the direct evaluation
/// reference the levels are compared with).
fn with_level_files(base: &Path, levels: &[PathBuf]) -> rigbake_core::Model {
    use rigbake_core::lod_files::{add_groups, attach, match_nodes};
    let mut model = import_file(base, &ImportOptions::default()).unwrap();
    let (mut pairs, mut added) = (Vec::new(), Vec::new());
    for path in levels {
        let level = import_file(path, &ImportOptions::default()).unwrap();
        let stem = stem(path);
        let p = match_nodes(&model, &level, &stem).unwrap();
        added.push(attach(&mut model, &level, &stem, &p).unwrap());
        pairs.push(p);
    }
    add_groups(&mut model, &pairs, &added);
    model
}

fn details(container: &Path) -> rigbake_format::meta::LodDetailsMetadata {
    let c = Container::open(container).unwrap();
    assert_current_version(&c);
    c.records()
        .lod_details
        .as_ref()
        .expect("a LOD detail record")
        .clone()
}

fn verify(container: &Path, flags: &[&str]) -> std::process::Output {
    let mut args = vec![OsStr::new("verify"), container.as_os_str()];
    args.extend(flags.iter().map(OsStr::new));
    rigbake(&args)
}

/// CesiumMan with two LOD files beside it (meshopt at 50% and 20%, made
/// here): baking the folder finds them, bakes them as levels 1 and 2 (one
/// bone texture, three weights meshes, one atlas) and not as models; every
/// level, skinned from its weights mesh and read from the VAT, matches
/// direct evaluation of its own file; `verify` finds the files through the
/// recorded paths; changing a level file rebakes the model.
#[test]
fn cesium_man_with_lod_files_beside_it_bakes_every_level_against_its_own_file() {
    let Some(models) = common::shared_models(
        "cesium_man_with_lod_files_beside_it_bakes_every_level_against_its_own_file",
    ) else {
        return;
    };
    let source = models.join("khronos/CesiumMan.glb");
    let bytes = std::fs::read(&source).unwrap();
    let original = import_file(&source, &ImportOptions::default()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("models");
    std::fs::create_dir(&dir).unwrap();
    let base = dir.join("CesiumMan.glb");
    std::fs::write(&base, &bytes).unwrap();
    let levels: Vec<PathBuf> = rigbake_fixtures::lods::LOD_RATIOS
        .iter()
        .enumerate()
        .map(|(k, ratio)| {
            write(
                &dir,
                &format!("CesiumMan_LOD{}.glb", k + 1),
                &level_file(&bytes, &original, *ratio),
            )
        })
        .collect();
    let out = tmp.path().join("out");
    let r = bake(
        std::slice::from_ref(&dir),
        &out,
        &["--vat", "--format", "exr32"],
    );
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    for k in 1..=2 {
        assert!(
            stderr.contains(&format!(
                "CesiumMan_LOD{k}.glb: a LOD level of CesiumMan.glb"
            )),
            "{stderr}"
        );
        assert!(
            !out.join(format!("CesiumMan_LOD{k}")).exists(),
            "not a model of its own"
        );
    }
    let baked = open(&out, &base);
    assert_eq!(baked.meta.textures.len(), 1, "one bone texture");
    let group = &baked.lods.groups[0];
    assert_eq!(group.levels.len(), 3);
    let container = baked.dir.join("CesiumMan.rigbake");
    let d = details(&container);
    assert!(d.groups[0][0].file.is_none(), "level 0 is the model itself");
    for k in 1..=2 {
        let f = d.groups[0][k].file.as_ref().expect("a level file");
        assert_eq!(f.file_name, format!("CesiumMan_LOD{k}.glb"));
        assert_eq!(
            f.relative_path.as_deref(),
            Some(&format!("../../models/CesiumMan_LOD{k}.glb")[..])
        );
        assert_eq!(
            f.node,
            original.nodes[original.skinned_nodes().next().unwrap()].name
        );
        let weights_file = group.levels[k].weights_file.as_deref().unwrap();
        assert_eq!(weights_file, format!("CesiumMan.lod{k}.weights.glb"));
    }
    let model = with_level_files(&base, &levels);
    let vertices: Vec<u32> = group.levels.iter().map(|l| l.vertices).collect();
    assert!(
        vertices[0] > vertices[1] && vertices[1] > vertices[2],
        "{vertices:?}"
    );
    for level in 0..3 {
        let e = weights_mesh_error(&baked, &model, level);
        assert!(e < TOLERANCE, "CesiumMan LOD{level} weights: {e}");
        let e = vat_error(&baked, &model, level);
        assert!(e < TOLERANCE, "CesiumMan LOD{level} VAT: {e}");
    }
    let v = verify(&container, &[]);
    assert!(
        v.status.success(),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );

    // Up to date, until a level file changes.
    let again = bake(
        std::slice::from_ref(&dir),
        &out,
        &["--vat", "--format", "exr32"],
    );
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 baked, 1 up to date"));
    std::fs::write(&levels[1], level_file(&bytes, &original, 0.1).to_glb()).unwrap();
    let changed = bake(
        std::slice::from_ref(&dir),
        &out,
        &["--vat", "--format", "exr32"],
    );
    let text = String::from_utf8_lossy(&changed.stderr);
    assert!(text.contains("1 baked, 0 up to date"), "{text}");
    // verify refuses a level file that changed after the bake.
    std::fs::write(&levels[0], level_file(&bytes, &original, 0.3).to_glb()).unwrap();
    let v = verify(&container, &[]);
    assert_eq!(v.status.code(), Some(2));
    let text = String::from_utf8_lossy(&v.stderr);
    assert!(
        text.contains("CesiumMan_LOD1.glb") && text.contains("SHA-256"),
        "{text}"
    );
}

/// The tentacle fixture and a LOD file of it: named on the command line
/// (`--lod MODEL=FILE`) it bakes and verifies; a level file whose skeleton
/// differs from the model's (a renamed joint, a moved inverse bind) is
/// refused with an error naming the file and the joint.
#[test]
fn lod_files_with_another_skeleton_are_refused_naming_the_joint() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let bytes = std::fs::read(fixtures.join("tentacle.glb")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("tentacle.glb");
    std::fs::write(&base, &bytes).unwrap();
    let model = import_file(&base, &ImportOptions::default()).unwrap();
    let skin = &model.skins[0];
    let joint = skin.joints[1];
    let joint_name = model.nodes[joint].name.clone();

    let good = write(
        tmp.path(),
        "tentacle_low.glb",
        &level_file(&bytes, &model, 0.5),
    );
    let lod = format!("{}={}", base.display(), good.display());
    let out = tmp.path().join("out");
    bake_ok(
        std::slice::from_ref(&base),
        &out,
        &["--lod", &lod, "--max-influences", "4,1"],
    );
    let container = out.join("tentacle/tentacle.rigbake");
    let d = details(&container);
    let kept: Vec<u32> = d.groups[0].iter().map(|l| l.max_influences).collect();
    assert_eq!(kept, [4, 1]);
    assert!(
        d.groups[0][1].position_error > d.groups[0][0].position_error,
        "{d:?}"
    );
    let v = verify(&container, &["--accept-recorded-loss"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    let inspect = rigbake(&[OsStr::new("inspect"), container.as_os_str()]);
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        text.contains("LOD1 tentacle_low/")
            && text.contains("1 influence")
            && text.contains("from tentacle_low.glb"),
        "{text}"
    );

    let mut renamed = level_file(&bytes, &model, 0.5);
    renamed
        .get_mut("nodes", joint)
        .insert("name".into(), json!("renamed_joint"));
    let ibm: Vec<f64> = skin
        .inverse_binds
        .iter()
        .enumerate()
        .flat_map(|(j, m)| {
            let mut m = *m;
            if j == 1 {
                m.w_axis.y += 0.25;
            }
            m.to_cols_array()
        })
        .collect();
    let mut moved = level_file(&bytes, &model, 0.5);
    let accessor = moved.floats(&ibm, "MAT4");
    moved
        .get_mut("skins", 0)
        .insert("inverseBindMatrices".into(), json!(accessor));
    for (name, b, words) in [
        (
            "renamed",
            renamed,
            vec!["`renamed_joint`", "is not a joint of the model's skin"],
        ),
        (
            "moved",
            moved,
            vec![
                &format!("`{joint_name}`")[..],
                "inverse bind matrix differs",
            ],
        ),
    ] {
        let file = write(tmp.path(), &format!("tentacle_{name}.glb"), &b);
        let lod = format!("{}={}", base.display(), file.display());
        let text = bake_fails(&base, &tmp.path().join(name), &["--lod", &lod]);
        assert!(text.contains(&format!("tentacle_{name}.glb")), "{text}");
        for w in words {
            assert!(text.contains(w), "{name}: `{w}` in {text}");
        }
    }
}

/// Knight with two LOD files of all six skinned meshes and
/// `max_influences = [4, 2, 1]` in the manifest: each level keeps its own
/// count, the recorded losses grow level by level, and `verify` passes
/// every level against its own recorded loss (and fails without it).
#[test]
fn knight_with_fewer_influences_per_level_records_growing_losses() {
    let Some(models) =
        common::shared_models("knight_with_fewer_influences_per_level_records_growing_losses")
    else {
        return;
    };
    let bytes = std::fs::read(models.join("kaykit/Knight.glb")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("chars");
    std::fs::create_dir(&dir).unwrap();
    let base = dir.join("Knight.glb");
    std::fs::write(&base, &bytes).unwrap();
    let original = import_file(&base, &ImportOptions::default()).unwrap();
    for (name, ratio) in [("Knight_far.glb", 0.5), ("Knight_farthest.glb", 0.2)] {
        write(&dir, name, &level_file(&bytes, &original, ratio));
    }
    let manifest = tmp.path().join("rigbake.toml");
    std::fs::write(
        &manifest,
        "models = \"chars\"\nout = \"out\"\n\n[[model]]\npath = \"Knight.glb\"\nfps = 10\nmax_influences = [4, 2, 1]\nlod_files = [\"Knight_far.glb\", \"Knight_farthest.glb\"]\n\n[[model.clip]]\nsource = \"1H_Melee_Attack_Chop\"\n",
    )
    .unwrap();
    let r = rigbake(&[
        OsStr::new("bake"),
        OsStr::new("--manifest"),
        manifest.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    let container = tmp.path().join("out/Knight/Knight.rigbake");
    let d = details(&container);
    assert_eq!(d.groups.len(), 6, "one group per skinned mesh");
    let mut worst = [0.0f64; 3];
    for group in &d.groups {
        let kept: Vec<u32> = group.iter().map(|l| l.max_influences).collect();
        assert_eq!(kept, [4, 2, 1]);
        assert_eq!(
            group[0].position_error, 0.0,
            "Knight has at most 4 influences"
        );
        for (w, l) in worst.iter_mut().zip(group) {
            *w = w.max(l.position_error);
        }
    }
    assert!(worst[0] < worst[1] && worst[1] < worst[2], "{worst:?}");
    let v = verify(&container, &[]);
    assert_eq!(v.status.code(), Some(1), "the losses exceed the tolerance");
    assert!(String::from_utf8_lossy(&v.stdout).contains("--accept-recorded-loss"));
    let v = verify(&container, &["--accept-recorded-loss"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}

/// More LOD files than a group has levels are refused before any is read
/// (these do not even exist).
#[test]
fn too_many_lod_files_are_refused_before_any_is_read() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("tentacle.glb");
    std::fs::copy(fixtures.join("tentacle.glb"), &base).unwrap();
    let levels: Vec<String> = (1..=16).map(|k| format!("missing_{k}.glb")).collect();
    let lod = format!("{}={}", base.display(), levels.join(","));
    let text = bake_fails(&base, &tmp.path().join("out"), &["--lod", &lod]);
    assert!(text.contains("16 LOD files"), "{text}");
    assert!(!text.contains("missing_1.glb"), "no file was read: {text}");
}

/// LOD groups are checked as a graph before any model leaves the run: a
/// model given as its own level, a cycle, a chain, and a `_LOD1` sibling
/// that is a link to its base are each a usage error (exit 2) naming the
/// files, never a run that quietly bakes nothing.
#[test]
fn lod_groups_that_are_no_forest_are_refused_naming_the_files() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let tmp = tempfile::tempdir().unwrap();
    let copy = |name: &str| {
        let p = tmp.path().join(name);
        std::fs::copy(fixtures.join("tentacle.glb"), &p).unwrap();
        p
    };
    let (a, b, c) = (copy("a.glb"), copy("b.glb"), copy("c.glb"));
    let out = tmp.path().join("out");
    let arg = |m: &Path, l: &Path| format!("{}={}", m.display(), l.display());
    let cases: Vec<(Vec<PathBuf>, Vec<String>, &str)> = vec![
        (vec![a.clone()], vec![arg(&a, &a)], "its own level"),
        (
            vec![a.clone(), b.clone()],
            vec![arg(&a, &b), arg(&b, &a)],
            "levels of its own",
        ),
        (
            vec![a.clone(), b.clone()],
            vec![arg(&a, &b), arg(&b, &c)],
            "levels of its own",
        ),
    ];
    for (models, lods, words) in cases {
        let mut flags: Vec<&str> = Vec::new();
        for l in &lods {
            flags.extend(["--lod", l.as_str()]);
        }
        let r = bake(&models, &out, &flags);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{lods:?}: {stderr}");
        assert!(stderr.contains(words), "{lods:?}: {stderr}");
        assert!(
            stderr.contains("a.glb") || stderr.contains("b.glb"),
            "{stderr}"
        );
        assert!(!out.exists(), "nothing written: {lods:?}");
    }
    // A `_LOD1` sibling that links to its base, found in a folder.
    #[cfg(unix)]
    {
        let folder = tmp.path().join("models");
        std::fs::create_dir(&folder).unwrap();
        std::fs::copy(fixtures.join("tentacle.glb"), folder.join("hero.glb")).unwrap();
        std::os::unix::fs::symlink(folder.join("hero.glb"), folder.join("hero_LOD1.glb")).unwrap();
        let r = bake(std::slice::from_ref(&folder), &out, &[]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("hero_LOD1.glb") && stderr.contains("same file"),
            "{stderr}"
        );
        // A hard link is the same file too.
        std::fs::remove_file(folder.join("hero_LOD1.glb")).unwrap();
        std::fs::hard_link(folder.join("hero.glb"), folder.join("hero_LOD1.glb")).unwrap();
        let r = bake(std::slice::from_ref(&folder), &out, &[]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("same file"), "{stderr}");
        assert!(!out.exists(), "nothing written");
    }
}
