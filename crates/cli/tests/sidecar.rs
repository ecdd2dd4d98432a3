//! The JSON sidecar `<stem>.rigbake.json` (formats/sidecar.md): written
//! beside every container, valid under formats/sidecar.schema.json, equal
//! to the `sidecar` field of `inspect --json`, consistent with the records
//! `inspect --json` shows, covered by the up-to-date check, and with
//! animated bounds that hold every vertex read back from the VAT textures
//! through the sidecar's own addressing.

mod common;

use std::path::Path;

use common::{bake, read_exr, rigbake};
use rigbake_fixtures::testkit::models::shared_models;
use serde_json::Value;

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

fn validate(doc: &Value) {
    let schema =
        json_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/sidecar.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("the schema itself is valid");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

fn inspect_json(container: &Path) -> Value {
    let r = rigbake(&["inspect".as_ref(), container.as_os_str(), "--json".as_ref()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    serde_json::from_slice(&r.stdout).unwrap()
}

/// Checks the sidecar of `dir/<stem>.rigbake` against the schema and
/// `inspect --json`; returns it.
fn checked_sidecar(dir: &Path, stem: &str) -> Value {
    let container = dir.join(format!("{stem}.rigbake"));
    let sidecar = json_file(&dir.join(format!("{stem}.rigbake.json")));
    validate(&sidecar);
    let doc = inspect_json(&container);
    assert_eq!(
        doc["sidecar"], sidecar,
        "inspect --json shows the same sidecar"
    );
    // Field by field against the records as inspect shows them.
    let clips = doc["metadata"]["clips"].as_array().unwrap();
    let side = sidecar["clips"].as_array().unwrap();
    assert_eq!(clips.len(), side.len());
    for (c, s) in clips.iter().zip(side) {
        for k in ["name", "start_row", "frames", "fps", "duration", "looping"] {
            assert_eq!(c[k], s[k], "{k}");
        }
    }
    let mut files: Vec<&str> = doc["metadata"]["textures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    if doc["vat"].is_object() {
        files.extend(
            doc["vat"]["textures"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap()),
        );
    }
    let listed: Vec<&str> = sidecar["textures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, listed);
    for t in sidecar["textures"].as_array().unwrap() {
        if t["storage"] == "file" && t["encoding"] != "png16" {
            let img = read_exr(&dir.join(t["file"].as_str().unwrap()));
            assert_eq!(img.width as u64, t["width"].as_u64().unwrap());
            assert_eq!(img.height as u64, t["height"].as_u64().unwrap());
        }
    }
    sidecar
}

/// Every vertex of every clip frame, read from the VAT positions textures
/// through the sidecar's addressing, lies in the clip's box, and the box is
/// tight (each face touched within `eps`).
fn bounds_hold_vat_vertices(dir: &Path, sidecar: &Value) {
    let vat = &sidecar["vat"];
    let textures = sidecar["textures"].as_array().unwrap();
    let images: Vec<_> = vat["primitives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let t = &textures[p["positions"].as_u64().unwrap() as usize];
            assert_eq!(t["encoding"], "exr_f32");
            (p.clone(), read_exr(&dir.join(t["file"].as_str().unwrap())))
        })
        .collect();
    for clip in sidecar["clips"].as_array().unwrap() {
        let bmin: Vec<f32> = clip["bounds"]["min"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let bmax: Vec<f32> = clip["bounds"]["max"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let size = (0..3).map(|k| bmax[k] - bmin[k]).fold(0.0f32, f32::max);
        let eps = 1e-6 * size.max(1.0);
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        let start = clip["start_row"].as_u64().unwrap() as usize;
        for row in start..start + clip["frames"].as_u64().unwrap() as usize {
            for (p, img) in &images {
                let (w, bands) = (
                    p["width"].as_u64().unwrap() as usize,
                    p["bands"].as_u64().unwrap() as usize,
                );
                let first = p["first_vertex"].as_u64().unwrap() as usize;
                for v in 0..p["vertices"].as_u64().unwrap() as usize {
                    let a = first + v;
                    let (x, y) = (a % w, row * bands + a / w);
                    let i = (y * img.width + x) * 4;
                    for k in 0..3 {
                        let c = img.data[i + k];
                        assert!(
                            c >= bmin[k] - eps && c <= bmax[k] + eps,
                            "{}: {c} outside [{}, {}]",
                            clip["name"],
                            bmin[k],
                            bmax[k]
                        );
                        lo[k] = lo[k].min(c);
                        hi[k] = hi[k].max(c);
                    }
                }
            }
        }
        for k in 0..3 {
            assert!(
                (lo[k] - bmin[k]).abs() <= eps && (hi[k] - bmax[k]).abs() <= eps,
                "{}: box not tight on axis {k}",
                clip["name"]
            );
        }
    }
}

#[test]
fn fixture_sidecars_agree_with_inspect_in_every_encoding() {
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    for flags in [
        &["--vat", "--format", "exr32"][..],
        &["--vat", "--normals", "--format", "png16"][..],
        &[
            "--embed-textures",
            "--precision",
            "f16",
            "--layout",
            "mat3x4",
        ][..],
        &["--vat", "--normals", "--tangents", "--format", "exr16"][..],
        &[
            "--vat",
            "--normals",
            "--format",
            "png16",
            "--max-texture-size",
            "64",
        ][..],
    ] {
        let r = bake(std::slice::from_ref(&model), out.path(), flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let dir = out.path().join("tentacle");
        let sidecar = checked_sidecar(&dir, "tentacle");
        if flags[1] == "--format" && flags[2] == "exr32" {
            bounds_hold_vat_vertices(&dir, &sidecar);
        }
        if flags[0] == "--embed-textures" {
            assert_eq!(sidecar["textures"][0]["storage"], "embedded");
            assert!(sidecar["vat"].is_null());
        }
        if flags.contains(&"64") {
            // 6 pages per VAT stream, every one listed with the stream's
            // fold; pages after the first say which page they are.
            let textures = sidecar["textures"].as_array().unwrap();
            let p = &sidecar["vat"]["primitives"][0];
            for stream in ["positions", "normals"] {
                let first = p[stream].as_u64().unwrap() as usize;
                for k in 0..6 {
                    let t = &textures[first + k];
                    assert_eq!(t["fold"]["pages"], 6, "{t}");
                    assert_eq!(t["fold"]["row_height"], 4, "{t}");
                    let name = format!("tentacle.vat.{stream}.page{k}.png");
                    assert_eq!(t["file"], name.as_str());
                    if k == 0 {
                        assert!(t.get("page").is_none(), "{t}");
                    } else {
                        assert_eq!(t["page"], k, "{t}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_missing_or_edited_sidecar_is_not_up_to_date() {
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let sidecar = out.path().join("tentacle/tentacle.rigbake.json");
    assert!(
        bake(std::slice::from_ref(&model), out.path(), &[])
            .status
            .success()
    );
    let original = std::fs::read(&sidecar).unwrap();
    for damage in [None, Some(b" ".as_slice())] {
        match damage {
            None => std::fs::remove_file(&sidecar).unwrap(),
            Some(extra) => {
                let mut edited = original.clone();
                edited.extend_from_slice(extra);
                std::fs::write(&sidecar, edited).unwrap();
            }
        }
        let r = bake(std::slice::from_ref(&model), out.path(), &[]);
        assert!(r.status.success());
        let text =
            String::from_utf8_lossy(&r.stderr).to_string() + &String::from_utf8_lossy(&r.stdout);
        assert!(
            text.contains("1 baked"),
            "the damaged sidecar was not rebaked: {text}"
        );
        assert_eq!(std::fs::read(&sidecar).unwrap(), original);
    }
}

#[test]
fn fox_sidecar_lists_clips_bounds_joints_and_textures() {
    let Some(models) = shared_models("fox_sidecar") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &[models.join("khronos/Fox.glb")],
        out.path(),
        &["--vat", "--format", "exr32"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let dir = out.path().join("Fox");
    let sidecar = checked_sidecar(&dir, "Fox");
    let names: Vec<&str> = sidecar["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    assert_eq!(sidecar["skins"][0]["joints"].as_array().unwrap().len(), 24);
    bounds_hold_vat_vertices(&dir, &sidecar);
}
