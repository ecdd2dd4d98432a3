//! Compressed models bake and verify (issue 19, item 14):
//!
//! - BrainStem with `KHR_draco_mesh_compression` (a third-party copy) bakes,
//!   passes `rigbake verify`, and its bake matches the bake of the
//!   uncompressed `khronos/BrainStem.glb` within Draco's quantization: the
//!   bound is derived from the quantization bits found in the file and the
//!   position range its accessors record.
//! - a fixture compressed with meshoptimizer's encoder
//!   (`EXT_meshopt_compression`) bakes, verifies, and gives bone and vertex
//!   animation textures byte-identical to the uncompressed fixture's.

mod common;

use std::path::{Path, PathBuf};

use common::reference::direct_global;
use common::{bake, read_exr, rigbake, shared_models};
use glam::{DMat4, DVec3};
use rigbake_core::Model;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use serde_json::Value;

fn verify(container: &Path, source: &Path) -> (i32, String) {
    let r = rigbake(&[
        "verify".as_ref(),
        container.as_os_str(),
        "--source".as_ref(),
        source.as_os_str(),
    ]);
    (
        r.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&r.stderr)
        ),
    )
}

fn glb_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + len]).unwrap()
}

/// The quantization of one Draco-compressed POSITION attribute: the bits
/// and the grid step, found from the file. Draco stores a position as
/// `min + q * range / (2^bits - 1)` with `q` an integer, `min` the
/// attribute's per-axis minimum and `range` its largest per-axis extent,
/// which the accessor's `min`/`max` record. The bits are the smallest count
/// whose grid holds every decoded coordinate (grids of different bit counts
/// are not nested, so only the encoder's fits a whole primitive).
fn quantization(accessor: &Value, positions: &[glam::Vec3]) -> (u32, f64) {
    let min: Vec<f64> = accessor["min"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32 as f64)
        .collect();
    let max: Vec<f64> = accessor["max"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32 as f64)
        .collect();
    let range = (0..3).map(|c| max[c] - min[c]).fold(0.0, f64::max);
    for bits in 1..=30u32 {
        let step = range / f64::from((1u32 << bits) - 1);
        let fits = positions.iter().all(|p| {
            (0..3).all(|c| {
                let q = (f64::from(p[c]) - min[c]) / step;
                // Within 2% of a grid point: f32 rounding of the decoded
                // value moves it by far less than that at these bit counts.
                (q - q.round()).abs() <= 0.02
            })
        });
        if fits {
            return (bits, step);
        }
    }
    panic!("no quantization grid of 1 to 30 bits holds the decoded positions")
}

/// The rest-pose global matrix of the node holding the (only) skinned mesh.
fn mesh_global(model: &Model) -> DMat4 {
    let node = model.nodes.iter().position(|n| n.mesh.is_some()).unwrap();
    direct_global(model, &LocalPose::rest(model), node)
}

/// Skin matrix `j` at `row` of a mat4-layout bone texture.
fn matrix(tex: &common::Rgba, row: usize, j: usize) -> DMat4 {
    let at = |c: usize| {
        let i = (row * tex.width + 4 * j + c) * 4;
        glam::DVec4::new(
            f64::from(tex.data[i]),
            f64::from(tex.data[i + 1]),
            f64::from(tex.data[i + 2]),
            f64::from(tex.data[i + 3]),
        )
    };
    DMat4::from_cols(at(0), at(1), at(2), at(3))
}

/// A vertex skinned with the matrices of `row`: `sum w_i * M_i * p`.
fn skinned(tex: &common::Rgba, row: usize, p: DVec3, slots: &[(u16, f32)]) -> DVec3 {
    let total: f64 = slots.iter().map(|(_, w)| f64::from(*w)).sum();
    slots
        .iter()
        .map(|&(j, w)| matrix(tex, row, usize::from(j)).transform_point3(p) * f64::from(w) / total)
        .sum()
}

fn influences(model: &Model, prim: usize, v: usize) -> Vec<(u16, f32)> {
    let inf = model.meshes[0].primitives[prim]
        .influences
        .as_ref()
        .unwrap();
    let k = inf.per_vertex;
    (0..k)
        .map(|s| (inf.joints[v * k + s], inf.weights[v * k + s]))
        .filter(|(_, w)| *w > 0.0)
        .collect()
}

#[test]
fn draco_brainstem_bakes_verifies_and_matches_brainstem() {
    let Some(dir) = shared_models("draco_brainstem_bakes_verifies_and_matches_brainstem") else {
        return;
    };
    let plain_file = dir.join("khronos/BrainStem.glb");
    let draco_file = dir.join("unsupported/BrainStem_draco.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &[plain_file.clone(), draco_file.clone()],
        out.path(),
        &["--layout", "mat4"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let container = out.path().join("BrainStem_draco/BrainStem_draco.rigbake");
    let (code, text) = verify(&container, &draco_file);
    assert_eq!(code, 0, "verify fails on the Draco bake:\n{text}");

    let plain = import_file(&plain_file, &ImportOptions::default()).unwrap();
    let draco = import_file(&draco_file, &ImportOptions::default()).unwrap();
    let tex_plain = read_exr(&out.path().join("BrainStem/bones.skin0.exr"));
    let tex_draco = read_exr(&out.path().join("BrainStem_draco/bones.skin0.exr"));
    assert_eq!(
        (tex_plain.width, tex_plain.height),
        (tex_draco.width, tex_draco.height)
    );

    // The copy differs from the original in one more way than compression:
    // it drops an empty node between the Z-up root and the skeleton, so its
    // skeleton is a root of its own instead of lying under the Z-up node
    // that also holds the mesh. The model-space skin matrices therefore
    // differ by that node's matrix G: plain = G * draco. Both files are
    // otherwise the same skeleton and animation (same joints, inverse binds
    // and keys), so after G they agree to f32 rounding.
    let g = mesh_global(&draco);
    assert!(
        (g - mesh_global(&plain))
            .abs()
            .to_cols_array()
            .iter()
            .all(|d| *d < 1e-12)
    );
    let joints = tex_plain.width / 4;
    let mut largest = 0.0f64;
    for row in 0..tex_plain.height {
        for j in 0..joints {
            let a = matrix(&tex_plain, row, j);
            let b = g * matrix(&tex_draco, row, j);
            let scale = a
                .abs()
                .to_cols_array()
                .iter()
                .fold(1.0f64, |m, v| m.max(*v));
            let diff = (a - b)
                .abs()
                .to_cols_array()
                .iter()
                .fold(0.0f64, |m, v| m.max(*v));
            assert!(
                diff <= 1e-5 * scale,
                "row {row} joint {j}: skin matrices differ by {diff:e}"
            );
            // Largest linear stretch a matrix applies (column-norm bound).
            let stretch = a.x_axis.truncate().length()
                + a.y_axis.truncate().length()
                + a.z_axis.truncate().length();
            largest = largest.max(stretch);
        }
    }

    // Vertices: Draco re-orders them, so each decoded vertex is matched to
    // an original one of the same primitive within the quantization bound
    // and the same influences; then both are skinned with their own bake's
    // matrices and compared.
    let json = glb_json(&draco_file);
    let diagonal = common::reference::diagonal(
        plain.meshes[0]
            .primitives
            .iter()
            .flat_map(|p| p.positions.iter().map(|q| q.as_dvec3())),
    );
    let mut bits_seen = Vec::new();
    let mut worst_ratio = 0.0f64;
    let rows: Vec<usize> = (0..tex_plain.height).step_by(25).collect();
    for (p, prim) in draco.meshes[0].primitives.iter().enumerate() {
        let accessor_index = json["meshes"][0]["primitives"][p]["attributes"]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        let (bits, step) = quantization(&json["accessors"][accessor_index], &prim.positions);
        bits_seen.push(bits);
        // Rounding to the grid moves each coordinate by at most half a
        // step: at most sqrt(3) / 2 steps in all (plus f32 rounding).
        let bound = 3f64.sqrt() / 2.0 * step + 1e-6;
        let original = &plain.meshes[0].primitives[p];
        for (v, pos) in prim.positions.iter().enumerate() {
            let slots = influences(&draco, p, v);
            let d = pos.as_dvec3();
            let found = original.positions.iter().enumerate().find(|(u, q)| {
                q.as_dvec3().distance(d) <= bound && influences(&plain, p, *u) == slots
            });
            let Some((u, q)) = found else {
                panic!(
                    "primitive {p}: decoded vertex {v} at {pos} has no original within {bound:e}"
                );
            };
            for &row in &rows {
                let a = skinned(&tex_plain, row, q.as_dvec3(), &influences(&plain, p, u));
                let b = g.transform_point3(skinned(&tex_draco, row, d, &slots));
                // A position error e moves a skinned vertex by at most the
                // largest stretch times e; 1e-5 of the diagonal covers f32.
                let allowed = largest * bound + 1e-5 * diagonal;
                let err = a.distance(b);
                assert!(
                    err <= allowed,
                    "primitive {p} vertex {v} row {row}: {err:e} > {allowed:e}"
                );
                worst_ratio = worst_ratio.max(err / allowed);
            }
        }
    }
    bits_seen.sort_unstable();
    bits_seen.dedup();
    eprintln!(
        "Draco BrainStem: position quantization bits {bits_seen:?}; worst error {worst_ratio:.3} of the bound"
    );
    // The file really is quantized (a lossless copy would need no bound).
    assert!(
        bits_seen.iter().all(|b| (8..=20).contains(b)),
        "{bits_seen:?}"
    );
}

#[test]
fn meshopt_fixture_bakes_verifies_and_matches_the_uncompressed_bake() {
    let dir = tempfile::tempdir().unwrap();
    let tentacle = rigbake_fixtures::models::tentacle();
    let (packed, views) = rigbake_fixtures::compress::meshopt(&tentacle);
    assert!(views >= 6, "{views} views compressed");
    let plain_file = dir.path().join("plain/tentacle.glb");
    let packed_file = dir.path().join("packed/tentacle.glb");
    for (file, bytes) in [
        (&plain_file, tentacle.to_glb()),
        (&packed_file, packed.to_glb()),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    let outs: Vec<PathBuf> = ["plain", "packed"]
        .iter()
        .map(|d| dir.path().join(format!("out-{d}")))
        .collect();
    for (file, out) in [(&plain_file, &outs[0]), (&packed_file, &outs[1])] {
        let r = bake(std::slice::from_ref(file), out, &["--vat"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let (code, text) = verify(&outs[1].join("tentacle/tentacle.rigbake"), &packed_file);
    assert_eq!(code, 0, "verify fails on the meshopt bake:\n{text}");
    // meshopt without filters is lossless and keeps the vertex order: the
    // textures are the same bytes.
    for name in ["bones.skin0.exr", "tentacle.vat.positions.exr"] {
        let a = std::fs::read(outs[0].join("tentacle").join(name)).unwrap();
        let b = std::fs::read(outs[1].join("tentacle").join(name)).unwrap();
        assert!(a == b, "{name} differs between the plain and meshopt bakes");
    }
}
