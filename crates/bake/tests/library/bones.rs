//! Bone-matrix bakes: textures read back with the exr crate reproduce an
//! independent direct evaluation, in every layout; qts refuses a matrix it
//! cannot hold, naming it; outputs do not depend on the thread count.

use std::path::{Path, PathBuf};

use glam::{DMat4, DVec3, Mat4, Vec4};
use rigbake_core::eval::sample::{LocalPose, sample_clip};
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_format::container::Container;
use rigbake_format::meta::{MatrixLayout, Metadata};

use crate::common::reference::direct_global;
use crate::common::{
    Rgba, assert_none_failed, bake, bake_all, model_files, on_threads, read_exr, read_png16,
    settings, shared_models, stem, tree,
};

use rigbake_fixtures::testkit::models::UNSKINNED;

fn read_metadata(dir: &Path, stem: &str) -> Metadata {
    let path = dir.join(format!("{stem}.rigbake"));
    Container::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .metadata()
        .clone()
}

/// The bone-range record's range of texture `k`, if any.
fn read_range(dir: &Path, stem: &str, k: usize) -> Option<[[f32; 4]; 2]> {
    let path = dir.join(format!("{stem}.rigbake"));
    Container::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .records()
        .bone_ranges
        .as_ref()
        .and_then(|r| r.textures[k])
}

/// A bone texture as float texels: an EXR read with the exr crate, or a
/// `unorm16` qts PNG read with the png crate and mapped to the float form
/// by formats/bone-matrix-texture.md's rule (`raw = u / 65535`; the
/// quaternion `raw * 2 - 1`, the rest `min + raw * (max - min)`).
fn read_bone_texture(path: &Path, range: Option<[[f32; 4]; 2]>) -> Rgba {
    let Some([lo, hi]) = range else {
        return read_exr(path);
    };
    let png = read_png16(path);
    let (width, height) = (png.width, png.height);
    let data = png
        .data
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let raw = f64::from(*u) / 65535.0;
            let (texel, c) = (i / 4, i % 4);
            if texel % 2 == 0 {
                (raw * 2.0 - 1.0) as f32
            } else {
                (f64::from(lo[c]) + raw * f64::from(hi[c] - lo[c])) as f32
            }
        })
        .collect();
    Rgba {
        width,
        height,
        data,
    }
}

fn texture_matrix(tex: &Rgba, layout: MatrixLayout, row: usize, joint: usize) -> DMat4 {
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
        let range = read_range(&dir, &name, skin_meta.texture as usize);
        let tex = read_bone_texture(&dir.join(&tex_meta.name), range);
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

/// The shared models with a skin, or `None` (skipped) without the folder.
fn skinned_shared_models(test: &str) -> Option<Vec<PathBuf>> {
    let models = shared_models(test)?;
    Some(
        model_files(&models)
            .into_iter()
            .filter(|p| !UNSKINNED.contains(&stem(p).as_str()))
            .collect(),
    )
}

#[test]
fn bone_textures_reproduce_direct_evaluation_on_every_skinned_model() {
    let Some(skinned) =
        skinned_shared_models("bone_textures_reproduce_direct_evaluation_on_every_skinned_model")
    else {
        return;
    };
    for layout in [MatrixLayout::Mat4, MatrixLayout::Mat3x4] {
        let out = tempfile::tempdir().unwrap();
        assert_none_failed(&bake_all(
            &skinned,
            out.path(),
            &settings(|s| s.layout = layout),
        ));
        for model in &skinned {
            let err = round_trip_error(model, out.path());
            eprintln!(
                "{} ({layout:?}): max error / diagonal = {err:.2e}",
                stem(model)
            );
            // f32 storage of matrices whose entries are O(1) in model units:
            // a few ulps of the diagonal; 1e-5 leaves two orders of margin.
            assert!(
                err <= 1e-5,
                "{} ({layout:?}): relative error {err:e}",
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
    for layout in [MatrixLayout::Mat4, MatrixLayout::Qts] {
        let out = tempfile::tempdir().unwrap();
        assert_none_failed(&bake_all(
            &fixtures,
            out.path(),
            &settings(|s| s.layout = layout),
        ));
        for f in &fixtures {
            let err = round_trip_error(f, out.path());
            assert!(err <= 1e-6, "{} {layout:?}: {err:e}", f.display());
        }
    }
}

/// The two-joint fixture with a clip `stretch` that scales its tip along
/// y from 1 to 2 over one second, written as `stretched.glb` into `dir`.
fn stretched_two_joint(dir: &Path) -> PathBuf {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    let mut b = rigbake_fixtures::models::two_joint();
    let a = add_animation(&mut b, "stretch");
    let keys = [1.0, 1.0, 1.0, 1.0, 2.0, 1.0];
    add_channel(&mut b, a, 1, "scale", "LINEAR", &[0.0, 1.0], &keys);
    let model = dir.join("stretched.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    model
}

#[test]
fn qts_refuses_a_non_uniform_scale_naming_joint_clip_frame_and_figure() {
    // The two-joint rig's tip (bound at y = 1) stretched along y from 1 to
    // 2 over one second. Its skin matrix T(0,1,0) S(1, sy, 1) T(0,-1,0) has
    // no qts form: the volume-keeping scale is sy^(1/3), so the y entry is
    // off by sy - sy^(1/3), relative to the largest entry sy; worst at the
    // last frame (sy = 2): (2 - 2^(1/3)) / 2 = 0.370.
    let dir = tempfile::tempdir().unwrap();
    let model = stretched_two_joint(dir.path());
    let out = dir.path().join("out");
    let refused = bake(&model, &out, &settings(|s| s.layout = MatrixLayout::Qts));
    let error = refused.error();
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
        assert!(error.contains(part), "`{part}` missing from:\n{error}");
    }
    assert!(
        !out.join("stretched").exists(),
        "a refused model wrote files"
    );
    // The matrix layouts hold it.
    bake(&model, &out, &settings(|s| s.layout = MatrixLayout::Mat3x4)).baked();
}

#[test]
fn qts_bakes_reproduce_direct_evaluation_or_name_a_matrix_it_cannot_hold() {
    let Some(skinned) = skinned_shared_models(
        "qts_bakes_reproduce_direct_evaluation_or_name_a_matrix_it_cannot_hold",
    ) else {
        return;
    };
    let qts = settings(|s| s.layout = MatrixLayout::Qts);
    let mut baked = 0;
    for model in skinned {
        let out = tempfile::tempdir().unwrap();
        let result = bake(&model, out.path(), &qts);
        if !result.outcome.is_failure() {
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
            let error = result.error();
            assert!(
                error.contains("non-uniform scale, shear or a mirror"),
                "{error}"
            );
            assert_not_a_similarity(&model, error);
        }
    }
    assert!(baked >= 3, "qts baked only {baked} shared models");
}

#[test]
fn qts_at_unorm16_reproduces_direct_evaluation_within_1e_4_of_the_size() {
    // 16-bit normalised parts: a quaternion step of 2/65535 turns a vertex
    // at distance d from the origin by up to about 1.5e-5 d, a translation
    // step is 1/65535 of its range; both far below 1e-4 of the diagonal
    // (the compact-encoding issue's budget) on the shared models qts holds.
    let Some(skinned) = skinned_shared_models(
        "qts_at_unorm16_reproduces_direct_evaluation_within_1e_4_of_the_size",
    ) else {
        return;
    };
    let unorm = settings(|s| {
        s.layout = MatrixLayout::Qts;
        s.precision = rigbake_format::texture::Precision::Unorm16;
    });
    let mut baked = 0;
    for model in skinned {
        let out = tempfile::tempdir().unwrap();
        let result = bake(&model, out.path(), &unorm);
        if result.outcome.is_failure() {
            assert!(
                result.error().contains("non-uniform scale"),
                "{}",
                result.error()
            );
            continue;
        }
        let name = stem(&model);
        let meta = read_metadata(&out.path().join(&name), &name);
        for t in &meta.textures {
            assert_eq!(t.precision, rigbake_format::texture::Precision::Unorm16);
            assert!(t.name.ends_with(".png"), "{}", t.name);
        }
        let err = round_trip_error(&model, out.path());
        eprintln!("{name} (qts unorm16): max error / diagonal = {err:.2e}");
        assert!(err <= 1e-4, "{name} (qts unorm16): relative error {err:e}");
        baked += 1;
    }
    assert!(baked >= 3, "qts unorm16 baked only {baked} shared models");
}

/// Re-evaluates the skin matrix a qts refusal names (`skins[s].joints[j]`,
/// clip, frame) directly and checks that its upper 3x3 `A` is not a
/// rotation times a uniform scale: `A^T A` differs from `s^2 I` by more
/// than 1e-6 of `s^2` (the bake's limit is 1e-5 of the largest entry).
fn assert_not_a_similarity(model_path: &Path, error: &str) {
    let field = |after: &str, until: char| -> String {
        let at = error
            .find(after)
            .unwrap_or_else(|| panic!("no `{after}` in {error}"))
            + after.len();
        error[at..].split(until).next().unwrap().to_owned()
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
    if let Some(skinned) =
        skinned_shared_models("outputs_are_identical_with_one_and_two_threads (shared part)")
    {
        inputs.extend(skinned);
    }
    let f16 = settings(|s| s.precision = rigbake_format::texture::Precision::F16);
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    for (dir, threads) in [(&one, 1), (&two, 2)] {
        let bakes = on_threads(Some(threads), || bake_all(&inputs, dir.path(), &f16));
        assert_none_failed(&bakes);
    }
    let (a, b) = (tree(one.path()), tree(two.path()));
    assert_eq!(a.len(), b.len());
    assert!(!a.is_empty());
    for ((pa, ba), (pb, bb)) in a.iter().zip(&b) {
        assert_eq!(pa, pb);
        assert!(
            ba == bb,
            "{} differs between one and two threads",
            pa.display()
        );
    }
}

#[test]
fn layout_fallback_bakes_what_qts_cannot_hold_as_a_matrix_layout_and_says_so() {
    // The stretched two-joint rig of the refusal test above, asked for as
    // qts with `--layout-fallback mat3x4`: it bakes, in mat3x4, with a
    // warning that names the joint; the texture then reproduces direct
    // evaluation as any mat3x4 bake does.
    let dir = tempfile::tempdir().unwrap();
    let model = stretched_two_joint(dir.path());
    let out = dir.path().join("out");
    let fallback = settings(|s| {
        s.layout = MatrixLayout::Qts;
        s.layout_fallback = Some(MatrixLayout::Mat3x4);
    });
    let warnings = bake(&model, &out, &fallback).baked().warnings.join("\n");
    assert!(
        warnings.contains("bone textures baked as mat3x4 (--layout-fallback)")
            && warnings.contains("skins[0].joints[1]")
            && warnings.contains("clip `stretch`, frame 30"),
        "{warnings}"
    );
    let meta = read_metadata(&out.join("stretched"), "stretched");
    assert_eq!(meta.textures[0].layout, MatrixLayout::Mat3x4);
    assert!(round_trip_error(&model, &out) <= 1e-6);
    // A model qts holds keeps qts: the fallback is only a fallback.
    let tentacle = rigbake_fixtures::fixture("tentacle.glb");
    let warnings = bake(&tentacle, &out, &fallback).baked().warnings.join("\n");
    assert!(!warnings.contains("--layout-fallback"), "{warnings}");
    let meta = read_metadata(&out.join("tentacle"), "tentacle");
    assert_eq!(meta.textures[0].layout, MatrixLayout::Qts);
    // (A lossy fallback is a usage error of the command line:
    // crates/cli/tests/usability.rs.)
}
