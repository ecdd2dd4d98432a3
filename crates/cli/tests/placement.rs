//! Bakes that land right in loaders that know nothing of rigbake (issue
//! 32, items 1 and 2), on every shared model:
//!
//! - **placement**: each mesh rigbake writes carries its space's rest-pose
//!   global matrix as its node transform, so the playback mesh's first
//!   frame, moved by its node matrix alone, stands where direct evaluation
//!   of the source stands it in the scene; the weights meshes stand on
//!   their bone set's space; the sidecar says the same as the container;
//! - **half-float UVs**: every lookup UV of the playback mesh, quantised to
//!   f16 (what Godot 3's default import and Unity's mesh compression
//!   store), still names its own texel; with `--weights-as-uv` every bone
//!   index survives f16 exactly.

mod common;

use std::path::{Path, PathBuf};

use common::reference::{clip_of_row, deform, diagonal, mesh_node, pose_at};
use common::{bake, containers, shared_models};
use glam::{DMat4, DVec3};
use half::f16;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_format::container::Container;
use rigbake_format::meta::{LookupUv, PrimitiveUvSets};

/// A glTF node's matrix (column-major) as f64.
fn node_matrix(node: &gltf::Node<'_>) -> DMat4 {
    let m = node.transform().matrix();
    DMat4::from_cols_array_2d(&m.map(|c| c.map(f64::from)))
}

/// The float values of a VEC2/VEC3/VEC4 FLOAT accessor.
fn floats<const N: usize>(blob: &[u8], accessor: &gltf::Accessor<'_>) -> Vec<[f32; N]> {
    let view = accessor.view().unwrap();
    let start = view.offset() + accessor.offset();
    (0..accessor.count())
        .map(|i| {
            let at = start + i * N * 4;
            std::array::from_fn(|k| {
                f32::from_le_bytes(blob[at + 4 * k..at + 4 * k + 4].try_into().unwrap())
            })
        })
        .collect()
}

/// The UV-set entry of one primitive of one mesh file.
fn uv_entry<'a>(
    sets: &'a [PrimitiveUvSets],
    file: &str,
    mesh: usize,
    primitive: usize,
) -> &'a PrimitiveUvSets {
    sets.iter()
        .find(|p| p.file == file && p.mesh as usize == mesh && p.primitive as usize == primitive)
        .unwrap_or_else(|| panic!("no UV-set entry for {file} mesh {mesh} primitive {primitive}"))
}

/// One model's checks; returns the largest placement error relative to
/// the model's diagonal.
fn check_model(container: &Path, source: &Path) -> f64 {
    let dir = container.parent().unwrap();
    let c = Container::open(container).unwrap();
    let name = container.display().to_string();
    let placement = c
        .records()
        .placement
        .as_ref()
        .expect("format 1.11 writes a placement record");
    assert_eq!(placement.lookup_uv, LookupUv::SplitIndex, "{name}");
    let sidecar: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join(format!(
            "{}.json",
            container.file_name().unwrap().to_string_lossy()
        )))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        sidecar["placement"],
        serde_json::to_value(&placement.reference).unwrap(),
        "{name}"
    );
    let uv_sets = c
        .records()
        .uv_sets
        .as_ref()
        .map(|u| u.primitives.clone())
        .unwrap_or_default();
    let model = import_file(source, &ImportOptions::default()).unwrap();
    // A loader reads the node matrix as f32 (the gltf crate does).
    let as_f32 = |m: &[f64; 16]| DMat4::from_cols_array(m).as_mat4().as_dmat4();
    let reference = as_f32(&placement.reference.matrix);
    let mut worst = 0.0f64;

    // The playback mesh: its first frame, moved by the node matrix alone,
    // is the source's first frame in the scene.
    if let Some(vat) = c.records().vat.as_ref() {
        let file = vat.playback_file.as_deref().unwrap();
        let g = gltf::Gltf::from_slice(&std::fs::read(dir.join(file)).unwrap()).unwrap();
        let blob = g.blob.clone().unwrap();
        let first_vertex = c
            .records()
            .layout
            .as_ref()
            .and_then(|l| l.vat.as_ref())
            .map(|l| l.first_vertex.clone());
        let (clip, frame) = clip_of_row(&c.metadata().clips, 0);
        let mut pose = LocalPose::rest(&model);
        pose_at(&model, clip, frame, &mut pose);
        let mut placed = Vec::new();
        for (i, p) in vat.primitives.iter().enumerate() {
            let mesh = p.playback_mesh as usize;
            let node = g
                .nodes()
                .find(|n| n.mesh().map(|m| m.index()) == Some(mesh));
            let matrix = node_matrix(&node.unwrap());
            assert_eq!(matrix, reference, "{name}: {file} mesh {mesh}'s node");
            let prim = g.meshes().nth(mesh).unwrap().primitives().next().unwrap();
            let positions = floats::<3>(&blob, &prim.get(&gltf::Semantic::Positions).unwrap());
            let want = deform(
                &model,
                &pose,
                mesh_node(&model, &p.node),
                p.primitive as usize,
                None,
            );
            for (got, want) in positions.iter().zip(&want) {
                let got = matrix.transform_point3(DVec3::from(got.map(f64::from)));
                placed.push((got.distance(want.position), want.position));
            }
            // Each lookup UV, stored as half floats, still names its vertex.
            let set = uv_entry(&uv_sets, file, mesh, 0).lookup.unwrap();
            let lookup = floats::<2>(&blob, &prim.get(&gltf::Semantic::TexCoords(set)).unwrap());
            let first = first_vertex.as_ref().map_or(0, |f| f[i] as usize);
            for (v, uv) in lookup.iter().enumerate() {
                let half = uv.map(|c| f16::from_f32(c).to_f32());
                assert_eq!(
                    common::lookup_vertex(half),
                    first + v,
                    "{name}: vertex {v} of VAT primitive {i} read as half floats"
                );
            }
        }
        let diag = diagonal(placed.iter().map(|p| p.1)).max(1e-9);
        worst = placed.iter().map(|p| p.0 / diag).fold(worst, f64::max);
    }

    // The weights meshes stand on their bone set's space; the bone indices
    // of `--weights-as-uv` survive half floats.
    if let Some(weights) = c.records().weights.as_ref() {
        let Some(file) = weights.mesh_file.as_deref() else {
            return worst;
        };
        let g = gltf::Gltf::from_slice(&std::fs::read(dir.join(file)).unwrap()).unwrap();
        let blob = g.blob.clone().unwrap();
        for p in weights.primitives.iter().filter(|p| p.bound_to.is_none()) {
            let Some(node) = g
                .nodes()
                .find(|n| n.mesh().map(|m| m.index()) == Some(p.mesh_index as usize))
            else {
                continue; // a LOD level's mesh, in its own file
            };
            let want = as_f32(&placement.skins[p.skin as usize].matrix);
            assert_eq!(
                node_matrix(&node),
                want,
                "{name}: {file} node {:?}",
                node.name()
            );
            let entry = uv_entry(
                &uv_sets,
                file,
                p.mesh_index as usize,
                p.mesh_primitive as usize,
            );
            let Some(first) = entry.weights_first else {
                continue;
            };
            let prim = g
                .meshes()
                .nth(p.mesh_index as usize)
                .unwrap()
                .primitives()
                .nth(p.mesh_primitive as usize)
                .unwrap();
            for set in first..first + entry.weights_sets {
                let pairs = floats::<2>(&blob, &prim.get(&gltf::Semantic::TexCoords(set)).unwrap());
                for pair in pairs {
                    let bone = pair[0];
                    assert_eq!(f16::from_f32(bone).to_f32(), bone, "{name}: bone index");
                }
            }
        }
    }
    worst
}

/// The source model of a baked container (the bake ran on `models`).
fn source_of(models: &Path, container: &Path) -> PathBuf {
    let c = Container::open(container).unwrap();
    let file = &c.metadata().source.file_name;
    common::model_files(models)
        .into_iter()
        .find(|m| m.file_name().is_some_and(|n| n.to_string_lossy() == *file))
        .unwrap()
}

#[test]
fn every_shared_model_stands_where_its_source_stands_and_survives_half_float_uvs() {
    let Some(models) = shared_models(
        "every_shared_model_stands_where_its_source_stands_and_survives_half_float_uvs",
    ) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    // A low frame rate keeps the bakes small: placement and addressing do
    // not depend on the frame count.
    bake(
        std::slice::from_ref(&models),
        out.path(),
        &["--vat", "--weights-as-uv", "--fps", "4"],
    );
    let baked = containers(out.path());
    assert!(baked.len() >= 10, "{} models baked", baked.len());
    let mut report = Vec::new();
    for container in &baked {
        let worst = check_model(container, &source_of(&models, container));
        report.push(format!("{}: {worst:.2e}", container.display()));
        // f32 positions moved by an f32 node matrix: a few f32 roundings
        // of the model's extent and translation (measured: at most 2.8e-7,
        // Xbot).
        assert!(
            worst <= 2e-6,
            "{}: the placed first frame is {worst:e} of the diagonal from the source's",
            container.display()
        );
    }
    eprintln!("{}", report.join("\n"));
}

/// Two nodes of one name (issue 49, class 4): the joint `root` (node 0, at
/// the identity) is renamed `mesh`, the name of the mesh node (node 2, the
/// bake's reference and bone-set space), which stands scaled by 2 at
/// (1, 0, 6). The bake records the mesh node's matrix; `verify` used to
/// look the name up and take the first node (the joint), failing a correct
/// bake, and the viewer's catalogue placed older bakes on the joint. Now
/// every reader takes the space the record names: the one mesh node of the
/// name (a bone or an empty never is a space), and the record's matrix.
#[test]
fn a_space_whose_name_a_bone_shares_is_verified_and_placed_by_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    let mesh = b.first_mesh_node();
    let root = b.node_named("root");
    assert!(root < mesh, "the joint comes first");
    b.get_mut("nodes", root)
        .insert("name".into(), serde_json::json!("mesh"));
    let node = b.get_mut("nodes", mesh);
    node.insert("translation".into(), serde_json::json!([1.0, 0.0, 6.0]));
    node.insert("scale".into(), serde_json::json!([2.0, 2.0, 2.0]));
    let model = dir.path().join("twin.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let out = dir.path().join("out");
    let o = bake(std::slice::from_ref(&model), &out, &["--vat"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let container = out.join("twin/twin.rigbake");

    // The record: the mesh node's matrix, not the joint's identity.
    let c = Container::open(&container).unwrap();
    let record = c.records().placement.clone().expect("a placement record");
    let want = [
        2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 6.0, 1.0,
    ];
    assert_eq!(record.reference.node.as_deref(), Some("mesh"));
    assert_eq!(record.reference.matrix, want);
    assert_eq!(record.skins.len(), 1);
    assert_eq!(record.skins[0].matrix, want);

    // verify passes, the placement checked.
    let r = common::rigbake(&[
        "verify".as_ref(),
        container.as_os_str(),
        "--source".as_ref(),
        model.as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(text.contains("checked: placement of 2 space(s)"), "{text}");

    // The sidecar says what the record says.
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("twin/twin.rigbake.json")).unwrap())
            .unwrap();
    assert_eq!(sidecar["placement"]["matrix"], serde_json::json!(want));
    assert_eq!(
        sidecar["skins"][0]["placement"]["matrix"],
        serde_json::json!(want)
    );

    // The viewer's catalogue places the space on the mesh node too (what
    // a bake without the record, before format 1.11, is stood on).
    let catalog = rigbake_view::Catalog::open(&container, Some(&model)).unwrap();
    let index: serde_json::Value =
        serde_json::from_slice(&rigbake_view::server::bakes_json(&catalog).unwrap()).unwrap();
    assert_eq!(
        index["bakes"][0]["placements"]["mesh"],
        serde_json::json!(want)
    );
    assert_eq!(index["bakes"][0]["placement_note"], serde_json::Value::Null);
}
