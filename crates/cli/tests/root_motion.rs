//! Root motion (issue 18): `--root-motion extract|extract-yaw` bakes clips
//! in place and records the removed motion as a track.
//!
//! Checked against numbers worked out by hand from the `walker` fixture's
//! keys (the root travels one unit along +Z in 1 s, LINEAR; in `turn` it
//! also turns 90 degrees), against the reference evaluator for Knight's
//! `Dodge_Backward`, and through `rigbake verify`, which plays the in-place
//! textures, moves them by the recorded track and compares them with the
//! source evaluated directly.

mod common;

use std::path::{Path, PathBuf};

use common::reference::direct_global;
use common::{Rgba, bake, read_exr, rigbake, shared_models};
use glam::{DMat4, DVec3};
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_core::reference::pose_at;
use rigbake_format::container::Container;
use serde_json::Value;

fn walker() -> PathBuf {
    rigbake_fixtures::fixture("walker.glb")
}

fn out_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("rigbake-root-motion-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Bakes `model` into `out` with `flags`, asserting success; returns the
/// sidecar.
fn bake_ok(model: &Path, out: &Path, flags: &[&str]) -> Value {
    let o = bake(&[model.to_path_buf()], out, flags);
    assert!(
        o.status.success(),
        "bake failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stem = model.file_stem().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read(out.join(&stem).join(format!("{stem}.rigbake.json"))).unwrap();
    serde_json::from_slice(&text).unwrap()
}

fn container(out: &Path, stem: &str) -> PathBuf {
    out.join(stem).join(format!("{stem}.rigbake"))
}

/// `rigbake verify` passes (exit 0) on both paths the bake holds.
fn assert_verifies(file: &Path) {
    let o = rigbake(&["verify".as_ref(), file.as_os_str()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "verify failed:\n{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("bones:") && text.contains("vat:"), "{text}");
}

fn clip<'a>(sidecar: &'a Value, name: &str) -> (usize, &'a Value) {
    sidecar["clips"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .find(|(_, c)| c["name"] == name)
        .unwrap_or_else(|| panic!("no clip {name}"))
}

fn motion<'a>(sidecar: &'a Value, name: &str) -> &'a Value {
    let (i, _) = clip(sidecar, name);
    &sidecar["root_motion"]["clips"][i]
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Joint `j`'s skin matrix at timeline row `row` of a mat4 bone texture
/// (pixel `4j + c` is column `c`), read with the exr crate.
fn skin_matrix(tex: &Rgba, j: usize, row: usize) -> DMat4 {
    let at = |c: usize| {
        let i = (row * tex.width + 4 * j + c) * 4;
        let p = &tex.data[i..i + 4];
        [p[0] as f64, p[1] as f64, p[2] as f64, p[3] as f64]
    };
    DMat4::from_cols_array_2d(&[at(0), at(1), at(2), at(3)])
}

#[test]
fn a_travelling_walk_bakes_in_place_loops_and_records_its_travel() {
    let out = out_dir("walk");
    let kept = bake_ok(&walker(), &out.join("keep"), &["--vat"]);
    assert!(kept["root_motion"].is_null(), "keep writes no root motion");
    // Kept, the walk ends one unit from where it starts: not a loop.
    assert_eq!(clip(&kept, "walk").1["looping"], false);

    let dir = out.join("extract");
    let sidecar = bake_ok(&walker(), &dir, &["--vat", "--root-motion", "extract"]);
    assert_eq!(sidecar["root_motion"]["node"], "root");
    let (_, walk) = clip(&sidecar, "walk");
    assert_eq!(walk["looping"], true, "in place, the walk loops");
    let m = motion(&sidecar, "walk");
    assert_eq!(m["mode"], "extract");
    // The root's keys go from z = 0 to z = 1 (f32 keys, exact here).
    assert_eq!(floats(&m["displacement"]), [0.0, 0.0, 1.0]);
    assert_eq!(m["rotation"], 0.0);
    // LINEAR keys at 0.25 s steps: z(t) = t, so frame f moved f / 30.
    let track = m["track"].as_array().unwrap();
    assert_eq!(track.len(), 31);
    for (f, e) in track.iter().enumerate() {
        let e = floats(e);
        let want = [0.0, 0.0, f as f64 / 30.0, 0.0];
        for k in 0..4 {
            assert!(
                (e[k] - want[k]).abs() < 1e-6,
                "frame {f}: {e:?} vs {want:?}"
            );
        }
    }

    // The bone texture holds the walk in place: the root joint (joint 0,
    // identity inverse bind, mesh node at the origin) keeps x = z = 0 while
    // its bob (y: 0 -> 0.1 over 0.25 s) stays; and the loop's last row
    // equals its first.
    let tex = read_exr(&dir.join("walker/bones.skin0.exr"));
    let start = walk["start_row"].as_u64().unwrap() as usize;
    for f in 0..31 {
        let t = skin_matrix(&tex, 0, start + f).w_axis;
        assert!(
            t.x.abs() < 1e-6 && t.z.abs() < 1e-6,
            "frame {f}: root at {t}"
        );
    }
    let bob = skin_matrix(&tex, 0, start + 6).w_axis.y;
    assert!((bob - 0.1 * 0.2 / 0.25).abs() < 1e-6, "bob at 0.2 s: {bob}");
    for j in 0..2 {
        let (a, b) = (
            skin_matrix(&tex, j, start),
            skin_matrix(&tex, j, start + 30),
        );
        assert!(a.abs_diff_eq(b, 1e-6), "joint {j}: first {a} vs last {b}");
    }
    assert_verifies(&container(&dir, "walker"));
}

#[test]
fn extract_yaw_also_removes_the_turn() {
    let out = out_dir("turn");
    let dir = out.join("yaw");
    let sidecar = bake_ok(&walker(), &dir, &["--vat", "--root-motion", "extract-yaw"]);
    let (_, turn) = clip(&sidecar, "turn");
    let start = turn["start_row"].as_u64().unwrap() as usize;
    let last = start + turn["frames"].as_u64().unwrap() as usize - 1;
    let m = motion(&sidecar, "turn");
    assert_eq!(m["mode"], "extract_yaw");
    // 90 degrees about +Y and from (0, 0, 0) to (1, 0, 1); f32 keys.
    let rotation = m["rotation"].as_f64().unwrap();
    assert!(
        (rotation - std::f64::consts::FRAC_PI_2).abs() < 1e-6,
        "{rotation}"
    );
    let d = floats(&m["displacement"]);
    assert!(
        (d[0] - 1.0).abs() < 1e-6 && d[1] == 0.0 && (d[2] - 1.0).abs() < 1e-6,
        "{d:?}"
    );
    // In the texture the root neither travels nor turns.
    let tex = read_exr(&dir.join("walker/bones.skin0.exr"));
    for row in start..=last {
        let s = skin_matrix(&tex, 0, row);
        assert!(s.abs_diff_eq(DMat4::IDENTITY, 1e-6), "row {row}: {s}");
    }
    // The turn in place loops (start and end poses agree), and verify
    // applies the turning track.
    assert_eq!(turn["looping"], true);
    assert_verifies(&container(&dir, "walker"));

    // Translation only: the root still turns in the texture (its x axis
    // ends on -Z), and no yaw is recorded.
    let dir = out.join("translation");
    let sidecar = bake_ok(&walker(), &dir, &["--vat", "--root-motion", "extract"]);
    assert_eq!(motion(&sidecar, "turn")["rotation"], 0.0);
    let tex = read_exr(&dir.join("walker/bones.skin0.exr"));
    let x_axis = skin_matrix(&tex, 0, last).x_axis.truncate();
    assert!((x_axis - DVec3::NEG_Z).length() < 1e-6, "{x_axis}");
    let t = skin_matrix(&tex, 0, last).w_axis;
    assert!(t.x.abs() < 1e-6 && t.z.abs() < 1e-6, "{t}");
    assert_verifies(&container(&dir, "walker"));
}

#[test]
fn manifests_set_root_motion_per_model_and_per_clip() {
    let out = out_dir("manifest");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(walker(), out.join("walker.glb")).unwrap();
    let manifest = out.join("rigbake.toml");
    std::fs::write(
        &manifest,
        r#"
[defaults]
root_motion = "extract"

[[model]]
path = "walker.glb"
[[model.clip]]
source = "walk"
root_motion = "keep"
[[model.clip]]
source = "turn"
root_motion = "extract-yaw"
"#,
    )
    .unwrap();
    let baked = out.join("out");
    let o = rigbake(&[
        "bake".as_ref(),
        "--manifest".as_ref(),
        manifest.as_os_str(),
        "--out".as_ref(),
        baked.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sidecar: Value =
        serde_json::from_slice(&std::fs::read(baked.join("walker/walker.rigbake.json")).unwrap())
            .unwrap();
    let walk = motion(&sidecar, "walk");
    assert_eq!(walk["mode"], "keep");
    assert!(walk["track"].as_array().unwrap().is_empty());
    assert_eq!(clip(&sidecar, "walk").1["looping"], false);
    assert_eq!(motion(&sidecar, "turn")["mode"], "extract_yaw");
    // `inspect` shows the record.
    let o = rigbake(&[
        "inspect".as_ref(),
        baked.join("walker/walker.rigbake").as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("root motion (root root"), "{text}");
    assert!(
        text.contains("extract_yaw: travels (1, 1), 1.414 units; turns 90 degrees"),
        "{text}"
    );
    assert!(text.contains("keep: baked as it moves"), "{text}");
}

#[test]
fn a_bad_motion_root_is_a_clear_error() {
    let out = out_dir("errors");
    let o = bake(
        &[walker()],
        &out,
        &["--root-motion", "extract", "--root-node", "roots"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && !err.contains("panicked"), "{err}");
    assert!(err.contains("walker.glb"), "names the file: {err}");
    assert!(
        err.contains("no node named `roots`") && err.contains("root"),
        "{err}"
    );
    // The skinned mesh node as the root: it would carry its own vertices.
    let o = bake(
        &[walker()],
        &out,
        &["--root-motion", "extract", "--root-node", "mesh"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && !err.contains("panicked"), "{err}");
    assert!(err.contains("under the motion root `mesh`"), "{err}");
    // A model without a skin has no skeleton root to default to.
    let static_prop = rigbake_fixtures::fixture("degenerate/static_prop.gltf");
    let o = bake(&[static_prop], &out, &["--vat", "--root-motion", "extract"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && !err.contains("panicked"), "{err}");
    assert!(
        err.contains("no skin") && err.contains("--root-node"),
        "{err}"
    );
}

/// A motion root named while every clip keeps its motion is never looked up,
/// so the bake says it went unused (a misspelt name would otherwise pass).
#[test]
fn an_unused_motion_root_is_a_warning() {
    let out = out_dir("unused-root");
    let o = bake(&[walker()], &out, &["--root-node", "roots"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("walker.glb") && err.contains("motion root `roots`") && err.contains("unused"),
        "{err}"
    );
    // Used, it is not mentioned.
    let o = bake(
        &[walker()],
        &out,
        &["--force", "--root-motion", "extract", "--root-node", "root"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("unused"), "{err}");
}

/// Knight's `Dodge_Backward` moves the root 0.65 units backwards (issue 18's
/// acceptance): the recorded displacement is that travel, as the reference
/// evaluator measures it from the source; the baked root stays put; verify
/// passes.
#[test]
fn knight_dodge_backward_is_baked_in_place() {
    let Some(models) = shared_models("knight_dodge_backward_is_baked_in_place") else {
        return;
    };
    let knight = models.join("kaykit/Knight.glb");
    let out = out_dir("knight");
    let sidecar = bake_ok(
        &knight,
        &out,
        &[
            "--vat",
            "--clip",
            "Dodge_Backward",
            "--root-motion",
            "extract",
        ],
    );
    assert_eq!(sidecar["root_motion"]["node"], "root");
    let d = floats(&motion(&sidecar, "Dodge_Backward")["displacement"]);
    let recorded = DVec3::new(d[0], d[1], d[2]);
    assert!(
        (recorded.length() - 0.65).abs() < 0.05,
        "displacement {recorded} is not 0.65 units long"
    );

    // Independently: the root's global at the clip's start and end.
    let model = import_file(&knight, &ImportOptions::default()).unwrap();
    let anim = model
        .clips
        .iter()
        .position(|c| c.name == "Dodge_Backward")
        .unwrap();
    let root = model.nodes.iter().position(|n| n.name == "root").unwrap();
    let mut pose = LocalPose::rest(&model);
    let mut at = |t: f64| {
        pose_at(&model, Some(anim), t, &mut pose);
        direct_global(&model, &pose, root).w_axis.truncate()
    };
    let travel = at(model.clips[anim].duration) - at(0.0);
    let travel = DVec3::new(travel.x, 0.0, travel.z);
    assert!(
        (recorded - travel).length() < 1e-5,
        "{recorded} vs {travel}"
    );
    // Backwards: the character faces +Z (glTF's forward), so it moves to -Z.
    assert!(
        recorded.z < 0.0 && recorded.x.abs() < 0.01 * recorded.length(),
        "{recorded}"
    );

    // In the bone texture the root's horizontal position stays constant:
    // root global = mesh global * skin matrix * bind (the inverse bind's
    // inverse).
    let (_, dodge) = clip(&sidecar, "Dodge_Backward");
    let start = dodge["start_row"].as_u64().unwrap() as usize;
    let frames = dodge["frames"].as_u64().unwrap() as usize;
    let skin_entry = &sidecar["skins"][0];
    let joint = skin_entry["joints"]
        .as_array()
        .unwrap()
        .iter()
        .position(|j| j == "root")
        .unwrap();
    let mesh_name = skin_entry["mesh_nodes"][0].as_str().unwrap();
    let mesh = model
        .nodes
        .iter()
        .position(|n| n.name == mesh_name && n.mesh.is_some())
        .unwrap();
    let rest = LocalPose::rest(&model);
    let mesh_global = direct_global(&model, &rest, mesh);
    let skin = &model.skins[model.nodes[mesh].skin.unwrap()];
    let bind = skin.inverse_binds[joint].inverse();
    let tex = read_exr(&out.join("Knight").join(skin_entry_file(&sidecar)));
    let place = |row: usize| (mesh_global * skin_matrix(&tex, joint, row) * bind).w_axis;
    let first = place(start);
    for f in 1..frames {
        let p = place(start + f);
        assert!(
            (p.x - first.x).abs() < 1e-5 && (p.z - first.z).abs() < 1e-5,
            "frame {f}: root at {p}, started at {first}"
        );
    }
    assert_verifies(&container(&out, "Knight"));
}

/// The file of the first skin's bone texture.
fn skin_entry_file(sidecar: &Value) -> String {
    let i = sidecar["skins"][0]["texture"].as_u64().unwrap() as usize;
    sidecar["textures"][i]["file"].as_str().unwrap().to_owned()
}

/// `inspect MODEL.glb` tells how far each clip's root travels and turns,
/// and whether it would loop in place, before anything is baked.
#[test]
fn inspect_shows_a_sources_root_travel() {
    let o = rigbake(&["inspect".as_ref(), walker().as_os_str(), "--json".as_ref()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let clips = report["clips"].as_array().unwrap();
    let walk = &clips[0]["root_motion"];
    assert_eq!(walk["node"], "root");
    assert!(
        (walk["distance"].as_f64().unwrap() - 1.0).abs() < 1e-6,
        "{walk}"
    );
    assert_eq!(walk["loops_in_place"], true);
    assert_eq!(clips[0]["looping"], false);
    let turn = &clips[1]["root_motion"];
    assert!(
        (turn["distance"].as_f64().unwrap() - 2f64.sqrt()).abs() < 1e-6,
        "{turn}"
    );
    assert!((turn["rotation"].as_f64().unwrap() - std::f64::consts::FRAC_PI_2).abs() < 1e-6);
    let o = rigbake(&["inspect".as_ref(), walker().as_os_str()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("walk: 1.000 s, 31 frames; root travels 1.000, loops in place"),
        "{text}"
    );
    // A model without a skin has no root to measure.
    let prop = rigbake_fixtures::fixture("degenerate/static_prop.gltf");
    let o = rigbake(&["inspect".as_ref(), prop.as_os_str(), "--json".as_ref()]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(report["clips"][0]["root_motion"].is_null(), "{report}");
}

/// A weighted joint outside the motion root's subtree would keep the motion
/// the bake removes from the others while the track moves the whole mesh
/// (found by fuzzing: the walker with `root`'s children cut baked 1.6 units
/// off and failed verify). Extraction refuses it, naming the joint; keeping
/// the motion still bakes. Unweighted joints outside the root (greenman's
/// hand sockets, girl's IK targets) are fine, and those models verify.
#[test]
fn a_weighted_joint_outside_the_motion_root_is_refused() {
    let mut b = rigbake_fixtures::Builder::from_glb(&std::fs::read(walker()).unwrap());
    let (root, tip) = (b.node_named("root"), b.node_named("tip"));
    b.get_mut("nodes", root).remove("children");
    b.get_mut("scenes", 0)["nodes"]
        .as_array_mut()
        .unwrap()
        .push(tip.into());
    let dir = out_dir("detached");
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("detached.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let o = bake(
        std::slice::from_ref(&model),
        &dir.join("out"),
        &["--root-motion", "extract"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("detached.glb")
            && err.contains(&format!("nodes[{tip}] `tip`"))
            && err.contains("not under the motion root `root`"),
        "{err}"
    );
    bake_ok(&model, &dir.join("kept"), &[]);

    let Some(models) = shared_models("a_weighted_joint_outside_the_motion_root_is_refused") else {
        return;
    };
    for name in ["raylib/greenman.glb", "raylib/girl.glb"] {
        let out = out_dir(&name.replace('/', "-"));
        bake_ok(
            &models.join(name),
            &out,
            &["--vat", "--root-motion", "extract"],
        );
        let stem = Path::new(name)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let container = out.join(&stem).join(format!("{stem}.rigbake"));
        let v = rigbake(&["verify".as_ref(), container.as_os_str()]);
        assert!(
            v.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&v.stdout)
        );
    }
}

/// Rewrites the container at `file` with the section of `kind` replaced
/// by `edit` of it: every other section copied, every checksum right, so
/// only the edited numbers lie.
fn rewrite_record(
    file: &Path,
    kind: rigbake_format::records::SectionKind,
    edit: impl FnOnce(&[u8]) -> Vec<u8>,
) {
    use rigbake_format::container::ContainerWriter;
    use rigbake_format::records::SectionKind;
    let mut c = Container::open(file).unwrap();
    let meta = c.metadata().clone();
    let sections: Vec<_> = c.sections().to_vec();
    let mut payloads = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        payloads.push((s.kind, c.read_section(i).unwrap()));
    }
    drop(c);
    let mut edit = Some(edit);
    let mut w = ContainerWriter::new(std::fs::File::create(file).unwrap()).unwrap();
    for (k, bytes) in &payloads {
        match *k {
            SectionKind::Metadata => {}
            k2 if k2 == kind => {
                let f = edit.take().expect("one section of the kind");
                w.add_section(k2, &f(bytes)).unwrap();
            }
            k2 => {
                w.add_section(k2, bytes).unwrap();
            }
        }
    }
    w.finish(&meta).unwrap();
}

/// verify recomputes the recorded numbers it can (issue 30, class 12): a
/// root-motion `end` and `displacement` one unit off, or animated bounds
/// halved, fail although every texture is right; the untouched bake
/// passes and says what was checked.
#[test]
fn verify_recomputes_root_motion_and_bounds_records() {
    use rigbake_format::codec;
    use rigbake_format::records::SectionKind;
    let out = out_dir("records");
    bake_ok(&walker(), &out, &["--vat", "--root-motion", "extract"]);
    let file = container(&out, "walker");
    let o = rigbake(&["verify".as_ref(), file.as_os_str()]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}");
    assert!(text.contains("checked: root motion of"), "{text}");
    assert!(text.contains("checked: animated bounds of"), "{text}");
    let original = std::fs::read(&file).unwrap();
    type Edit = Box<dyn Fn(&[u8]) -> Vec<u8>>;
    let cases: [(SectionKind, &str, Edit); 3] = [
        (
            SectionKind::RootMotion,
            "the recorded end",
            Box::new(|b| {
                let mut r = codec::decode::<rigbake_format::meta::RootMotionMetadata>(b).unwrap();
                let c = r.clips.iter_mut().find(|c| c.mode.extracts()).unwrap();
                c.end[0] += 1.0;
                codec::encode(&r).unwrap()
            }),
        ),
        (
            SectionKind::RootMotion,
            "the recorded displacement",
            Box::new(|b| {
                let mut r = codec::decode::<rigbake_format::meta::RootMotionMetadata>(b).unwrap();
                let c = r.clips.iter_mut().find(|c| c.mode.extracts()).unwrap();
                c.displacement[0] += 1.0;
                codec::encode(&r).unwrap()
            }),
        ),
        (
            SectionKind::Bounds,
            "animated bounds of clip",
            Box::new(|b| {
                let mut r = codec::decode::<rigbake_format::meta::BoundsMetadata>(b).unwrap();
                for c in &mut r.clips {
                    for k in 0..3 {
                        let mid = (c.min[k] + c.max[k]) / 2.0;
                        c.min[k] = mid + (c.min[k] - mid) / 2.0;
                        c.max[k] = mid + (c.max[k] - mid) / 2.0;
                    }
                }
                codec::encode(&r).unwrap()
            }),
        ),
    ];
    for (kind, needle, edit) in cases {
        std::fs::write(&file, &original).unwrap();
        rewrite_record(&file, kind, |b| edit(b));
        let o = rigbake(&["verify".as_ref(), file.as_os_str()]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(1), "{needle}: {text}");
        assert!(
            text.contains("problem:") && text.contains(needle),
            "{needle}: {text}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
