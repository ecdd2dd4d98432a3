//! End-to-end bone-matrix bakes: every shared model bakes or is refused
//! cleanly; textures read back with the exr crate reproduce an independent
//! direct evaluation; outputs do not depend on the thread count.

mod common;

use std::path::{Path, PathBuf};

use common::reference::direct_global;
use common::{bake, model_files, read_exr, shared_models, tree};
use glam::{DMat4, DVec3, Mat4, Vec4};
use rigbake_core::eval::sample::{LocalPose, sample_clip};
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_format::container::Container;
use rigbake_format::meta::{MatrixLayout, Metadata};

/// Shared models without a skin: they must be skipped with "no skinned mesh".
const UNSKINNED: &[&str] = &[
    "AnimatedMorphCube",
    "BoxAnimated",
    "InterpolationTest",
    "MorphStressTest",
    "SimpleMorph",
    "greenman_hat",
    "greenman_shield",
    "greenman_sword",
];

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn read_metadata(dir: &Path, stem: &str) -> Metadata {
    let path = dir.join(format!("{stem}.rigbake"));
    Container::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .metadata()
        .clone()
}

#[test]
fn every_shared_model_bakes_or_is_refused_cleanly() {
    let Some(models) = shared_models("every_shared_model_bakes_or_is_refused_cleanly") else {
        return;
    };
    let files = model_files(&models);
    let out = tempfile::tempdir().unwrap();
    let result = bake(&files, out.path(), &[]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        result.status.code(),
        Some(0),
        "every model bakes or is skipped (the Draco file is decoded):\n{stderr}"
    );
    for file in &files {
        let name = stem(file);
        let shown = file.display().to_string();
        // Warnings (morph targets the bone textures drop) come before the
        // report line.
        let line = stderr
            .lines()
            .find(|l| l.contains(&shown) && !l.starts_with("warning: "))
            .unwrap_or_else(|| panic!("no report line for {shown}:\n{stderr}"));
        // Lines read `[n/N] baked ...`, `[n/N] skipped ...`, `[n/N] error: ...`.
        let line = line.split_once("] ").map_or(line, |(_, rest)| rest);
        if UNSKINNED.contains(&name.as_str()) {
            assert!(line.starts_with("skipped "), "{line}");
            assert!(line.contains("no skinned mesh"), "{line}");
            // An unskinned model with animated meshes: the line says what
            // bakes it (the greenman props have no animation).
            assert_eq!(
                line.contains("`--vat` bakes"),
                !name.starts_with("greenman_"),
                "{line}"
            );
        } else {
            assert!(line.starts_with("baked "), "{line}");
            let dir = out.path().join(&name);
            let meta = read_metadata(&dir, &name);
            assert!(!meta.textures.is_empty());
            for t in &meta.textures {
                assert!(dir.join(&t.name).is_file(), "{name}: {} missing", t.name);
            }
        }
    }
}

fn texture_matrix(tex: &common::Rgba, layout: MatrixLayout, row: usize, joint: usize) -> DMat4 {
    let ppj = match layout {
        MatrixLayout::Mat4 => 4,
        MatrixLayout::Mat3x4 => 3,
        MatrixLayout::Qts => 2,
    };
    let px = |i: usize| {
        let at = (row * tex.width + joint * ppj + i) * 4;
        Vec4::from_slice(&tex.data[at..at + 4])
    };
    let m = match layout {
        MatrixLayout::Mat4 => Mat4::from_cols(px(0), px(1), px(2), px(3)),
        MatrixLayout::Mat3x4 => Mat4::from_cols(px(0), px(1), px(2), Vec4::W).transpose(),
        // glam's own quaternion, scale and translation (formats/
        // bone-matrix-texture.md, "qts"), not the crate's decoder.
        MatrixLayout::Qts => {
            let (q, ts) = (px(0).as_dvec4(), px(1).as_dvec4());
            return DMat4::from_scale_rotation_translation(
                DVec3::splat(ts.w),
                glam::DQuat::from_vec4(q).normalize(),
                ts.truncate(),
            );
        }
    };
    m.as_dmat4()
}

/// Largest error, relative to the model's bounding-box diagonal, between
/// skinning every bind-pose vertex with the baked texture and with the
/// direct path, over every frame. The box is that of the directly skinned
/// vertices over all frames, in model space (the space both results are in;
/// it can differ from the bind-pose positions' own scale, as in Xbot whose
/// armature carries a 0.01 scale).
fn round_trip_error(model_path: &Path, out: &Path) -> f64 {
    let name = stem(model_path);
    let model = import_file(model_path, &ImportOptions::default()).unwrap();
    let dir = out.join(&name);
    let meta = read_metadata(&dir, &name);
    let mut worst = 0.0f64;
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let mut pose = LocalPose::rest(&model);
    for skin_meta in &meta.skins {
        let tex_meta = &meta.textures[skin_meta.texture as usize];
        let tex = read_exr(&dir.join(&tex_meta.name));
        assert_eq!(tex.height as u32, tex_meta.height);
        for mesh_node_name in &skin_meta.mesh_nodes {
            let node = model
                .nodes
                .iter()
                .position(|n| &n.name == mesh_node_name && n.mesh.is_some() && n.skin.is_some())
                .unwrap_or_else(|| panic!("{name}: no skinned node named {mesh_node_name}"));
            let skin = &model.skins[model.nodes[node].skin.unwrap()];
            let mesh = &model.meshes[model.nodes[node].mesh.unwrap()];
            for clip in &meta.clips {
                let clip_index = model.clips.iter().position(|c| c.name == clip.name);
                for frame in 0..clip.frames as usize {
                    let t = (frame as f64 / clip.fps).min(clip.duration);
                    match clip_index {
                        Some(c) => sample_clip(&model, &model.clips[c], t, &mut pose),
                        None => pose.reset(&model),
                    }
                    let row = clip.start_row as usize + frame;
                    let inv_mesh = direct_global(&model, &pose, node).inverse();
                    let direct: Vec<DMat4> = skin
                        .joints
                        .iter()
                        .zip(&skin.inverse_binds)
                        .map(|(&j, ibm)| inv_mesh * direct_global(&model, &pose, j) * *ibm)
                        .collect();
                    let baked: Vec<DMat4> = (0..skin.joints.len())
                        .map(|j| texture_matrix(&tex, tex_meta.layout, row, j))
                        .collect();
                    for prim in &mesh.primitives {
                        let Some(inf) = &prim.influences else {
                            continue;
                        };
                        for (v, p) in prim.positions.iter().enumerate() {
                            let (js, ws) = inf.vertex(v);
                            let total: f64 = ws.iter().map(|w| f64::from(*w)).sum();
                            let p = p.as_dvec3();
                            let (mut a, mut b) = (DVec3::ZERO, DVec3::ZERO);
                            for (&j, &w) in js.iter().zip(ws) {
                                let w = f64::from(w) / total;
                                a += direct[usize::from(j)].transform_point3(p) * w;
                                b += baked[usize::from(j)].transform_point3(p) * w;
                            }
                            worst = worst.max((a - b).length());
                            lo = lo.min(a);
                            hi = hi.max(a);
                        }
                    }
                }
            }
        }
    }
    worst / (hi - lo).length()
}

#[test]
fn bone_textures_reproduce_direct_evaluation_on_every_skinned_model() {
    let Some(models) =
        shared_models("bone_textures_reproduce_direct_evaluation_on_every_skinned_model")
    else {
        return;
    };
    let skinned: Vec<PathBuf> = model_files(&models)
        .into_iter()
        .filter(|p| !UNSKINNED.contains(&stem(p).as_str()))
        .collect();
    for layout in ["mat4", "mat3x4"] {
        let out = tempfile::tempdir().unwrap();
        let result = bake(&skinned, out.path(), &["--layout", layout]);
        assert!(
            result.status.success(),
            "{}",
            String::from_utf8_lossy(&result.stderr)
        );
        for model in &skinned {
            let err = round_trip_error(model, out.path());
            eprintln!(
                "{} ({layout}): max error / diagonal = {err:.2e}",
                stem(model)
            );
            // f32 storage of matrices whose entries are O(1) in model units:
            // a few ulps of the diagonal; 1e-5 leaves two orders of margin.
            assert!(
                err <= 1e-5,
                "{} ({layout}): relative error {err:e}",
                model.display()
            );
        }
    }
}

#[test]
fn fixtures_round_trip_through_the_texture() {
    let fixtures: Vec<PathBuf> = [
        "two_joint.gltf",
        "spec_worked_example.glb",
        "tentacle.glb",
        "hierarchy.gltf",
    ]
    .iter()
    .map(|f| rigbake_fixtures::fixture(f))
    .collect();
    // qts: f32 rounding of a unit quaternion (2^-24 per component) moves
    // an entry by a few 1e-7 of the matrix; 1e-6 of the diagonal still
    // holds on these small rigs (the hierarchy's root scales by 2).
    for flags in [&[][..], &["--layout", "qts"]] {
        let out = tempfile::tempdir().unwrap();
        let result = bake(&fixtures, out.path(), flags);
        assert!(
            result.status.success(),
            "{}",
            String::from_utf8_lossy(&result.stderr)
        );
        for f in &fixtures {
            let err = round_trip_error(f, out.path());
            assert!(err <= 1e-6, "{} {flags:?}: {err:e}", f.display());
        }
    }
}

#[test]
fn qts_refuses_a_non_uniform_scale_naming_joint_clip_frame_and_figure() {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    // The two-joint rig's tip (bound at y = 1) stretched along y from 1 to
    // 2 over one second. Its skin matrix T(0,1,0) S(1, sy, 1) T(0,-1,0) has
    // no qts form: the volume-keeping scale is sy^(1/3), so the y entry is
    // off by sy - sy^(1/3), relative to the largest entry sy; worst at the
    // last frame (sy = 2): (2 - 2^(1/3)) / 2 = 0.370.
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    let a = add_animation(&mut b, "stretch");
    let keys = [1.0, 1.0, 1.0, 1.0, 2.0, 1.0];
    add_channel(&mut b, a, 1, "scale", "LINEAR", &[0.0, 1.0], &keys);
    let model = dir.path().join("stretched.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let out = dir.path().join("out");
    let result = bake(std::slice::from_ref(&model), &out, &["--layout", "qts"]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    let expected = (2.0 - 2f64.cbrt()) / 2.0;
    for part in [
        "stretched.glb",
        "skins[0].joints[1]",
        "`tip`",
        "clip `stretch`, frame 30",
        "non-uniform scale",
        &format!("{expected:.2e}"),
        "--layout mat4",
    ] {
        assert!(stderr.contains(part), "`{part}` missing from:\n{stderr}");
    }
    assert!(
        !out.join("stretched").exists(),
        "a refused model wrote files"
    );
    // The matrix layouts hold it.
    let result = bake(&[model], &out, &["--layout", "mat3x4"]);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn qts_bakes_reproduce_direct_evaluation_or_name_a_matrix_it_cannot_hold() {
    let Some(models) =
        shared_models("qts_bakes_reproduce_direct_evaluation_or_name_a_matrix_it_cannot_hold")
    else {
        return;
    };
    let mut baked = 0;
    for model in model_files(&models)
        .into_iter()
        .filter(|p| !UNSKINNED.contains(&stem(p).as_str()))
    {
        let out = tempfile::tempdir().unwrap();
        let result = bake(
            std::slice::from_ref(&model),
            out.path(),
            &["--layout", "qts"],
        );
        let stderr = String::from_utf8_lossy(&result.stderr);
        if result.status.success() {
            // As the matrix layouts (see above), plus the form's own f32
            // rounding: a few 1e-7 of the diagonal on every shared model.
            let err = round_trip_error(&model, out.path());
            eprintln!("{} (qts): max error / diagonal = {err:.2e}", stem(&model));
            assert!(
                err <= 1e-5,
                "{} (qts): relative error {err:e}",
                model.display()
            );
            baked += 1;
        } else {
            // Refused: the message says why, and the named matrix really
            // is beyond a rotation with a uniform scale.
            assert!(
                stderr.contains("non-uniform scale, shear or a mirror"),
                "{stderr}"
            );
            assert_not_a_similarity(&model, &stderr);
        }
    }
    assert!(baked >= 3, "qts baked only {baked} shared models");
}

/// Re-evaluates the skin matrix a qts refusal names (`skins[s].joints[j]`,
/// clip, frame) directly and checks that its upper 3x3 `A` is not a
/// rotation times a uniform scale: `A^T A` differs from `s^2 I` by more
/// than 1e-6 of `s^2` (the bake's limit is 1e-5 of the largest entry).
fn assert_not_a_similarity(model_path: &Path, stderr: &str) {
    let field = |after: &str, until: char| -> String {
        let at = stderr
            .find(after)
            .unwrap_or_else(|| panic!("no `{after}` in {stderr}"))
            + after.len();
        stderr[at..].split(until).next().unwrap().to_owned()
    };
    let skin: usize = field("skins[", ']').parse().unwrap();
    let joint: usize = field("].joints[", ']').parse().unwrap();
    let clip = field("in clip `", '`');
    let frame: usize = field("`, frame ", ',').parse().unwrap();
    let model = import_file(model_path, &ImportOptions::default()).unwrap();
    let c = model.clips.iter().position(|c| c.name == clip).unwrap();
    let mut pose = LocalPose::rest(&model);
    sample_clip(
        &model,
        &model.clips[c],
        (frame as f64 / 30.0).min(model.clips[c].duration),
        &mut pose,
    );
    let node = model.skins[skin].joints[joint];
    let mesh_node = model
        .nodes
        .iter()
        .position(|n| n.skin == Some(skin) && n.mesh.is_some())
        .unwrap();
    let m = direct_global(&model, &pose, mesh_node).inverse()
        * direct_global(&model, &pose, node)
        * model.skins[skin].inverse_binds[joint];
    let a = glam::DMat3::from_mat4(m);
    let gram = a.transpose() * a;
    let s2 = a.determinant().abs().powf(2.0 / 3.0);
    let off = (0..3)
        .flat_map(|c| (0..3).map(move |r| (c, r)))
        .map(|(c, r)| (gram.col(c)[r] - if c == r { s2 } else { 0.0 }).abs())
        .fold(0.0, f64::max);
    assert!(
        off > 1e-6 * s2,
        "{}: joint {joint} at `{clip}` frame {frame} is a similarity ({off:e})",
        model_path.display()
    );
}

#[test]
fn outputs_are_identical_with_one_and_two_threads() {
    let mut inputs: Vec<PathBuf> = ["two_joint.gltf", "tentacle.glb", "hierarchy.gltf"]
        .iter()
        .map(|f| rigbake_fixtures::fixture(f))
        .collect();
    if let Some(models) =
        shared_models("outputs_are_identical_with_one_and_two_threads (shared part)")
    {
        inputs.extend(
            model_files(&models)
                .into_iter()
                .filter(|p| !UNSKINNED.contains(&stem(p).as_str())),
        );
    }
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    for (dir, jobs) in [(&one, "1"), (&two, "2")] {
        let r = bake(&inputs, dir.path(), &["--jobs", jobs, "--precision", "f16"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let (a, b) = (tree(one.path()), tree(two.path()));
    assert_eq!(a.len(), b.len());
    assert!(!a.is_empty());
    for ((pa, ba), (pb, bb)) in a.iter().zip(&b) {
        assert_eq!(pa, pb);
        assert!(
            ba == bb,
            "{} differs between --jobs 1 and --jobs 2",
            pa.display()
        );
    }
}

#[test]
fn exit_codes_follow_the_contract() {
    let out = tempfile::tempdir().unwrap();
    let good = rigbake_fixtures::fixture("two_joint.gltf");
    let bad = rigbake_fixtures::fixture("degenerate/cycle.gltf");
    let r = bake(std::slice::from_ref(&good), out.path(), &[]);
    assert_eq!(r.status.code(), Some(0));
    let r = bake(&[good.clone(), bad.clone()], out.path(), &[]);
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    let line = stderr.lines().find(|l| l.contains("] error:")).unwrap();
    assert!(
        line.contains("cycle.gltf") && line.contains("nodes[") && line.contains("cycle"),
        "{line}"
    );
    assert!(
        stderr.contains("0 baked, 1 up to date, 0 skipped, 1 failed"),
        "the good model was baked by the first run: {stderr}"
    );
    // Usage errors exit with 2.
    let r = bake(std::slice::from_ref(&good), out.path(), &["--fps", "0"]);
    assert_eq!(r.status.code(), Some(2));
    let r = common::rigbake(&["bake".as_ref(), good.as_os_str()]);
    assert_eq!(r.status.code(), Some(2), "missing --out");
    // A model path that does not exist is a usage error (exit 2) naming it
    // (issue 19 item 12): nothing was baked.
    let r = bake(&[PathBuf::from("does/not/exist.glb")], out.path(), &[]);
    assert_eq!(r.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("exist.glb") && stderr.contains("no such file or folder"),
        "{stderr}"
    );
}

#[test]
fn layout_fallback_bakes_what_qts_cannot_hold_as_a_matrix_layout_and_says_so() {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    // The stretched two-joint rig of the refusal test above, asked for as
    // qts with `--layout-fallback mat3x4`: it bakes, in mat3x4, with a
    // warning that names the joint; the texture then reproduces direct
    // evaluation as any mat3x4 bake does.
    let dir = tempfile::tempdir().unwrap();
    let mut b = rigbake_fixtures::models::two_joint();
    let a = add_animation(&mut b, "stretch");
    let keys = [1.0, 1.0, 1.0, 1.0, 2.0, 1.0];
    add_channel(&mut b, a, 1, "scale", "LINEAR", &[0.0, 1.0], &keys);
    let model = dir.path().join("stretched.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let out = dir.path().join("out");
    let flags = ["--layout", "qts", "--layout-fallback", "mat3x4"];
    let result = bake(std::slice::from_ref(&model), &out, &flags);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stderr}");
    assert!(
        stderr.contains("bone textures baked as mat3x4 (--layout-fallback)")
            && stderr.contains("skins[0].joints[1]")
            && stderr.contains("clip `stretch`, frame 30"),
        "{stderr}"
    );
    let meta = read_metadata(&out.join("stretched"), "stretched");
    assert_eq!(meta.textures[0].layout, MatrixLayout::Mat3x4);
    assert!(round_trip_error(&model, &out) <= 1e-6);
    // A model qts holds keeps qts: the fallback is only a fallback.
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    let result = bake(std::slice::from_ref(&tentacle), &out, &flags);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(!String::from_utf8_lossy(&result.stderr).contains("--layout-fallback"));
    let meta = read_metadata(&out.join("tentacle"), "tentacle");
    assert_eq!(meta.textures[0].layout, MatrixLayout::Qts);
    // A lossy fallback is a usage error.
    let result = bake(
        &[tentacle],
        &out,
        &["--layout", "qts", "--layout-fallback", "qts"],
    );
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("layout_fallback must be `mat4` or `mat3x4`"),
        "{stderr}"
    );
}
