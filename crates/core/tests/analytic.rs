//! Hand-computed cases: skin matrices, interpolation modes, frame counts and
//! the SPEC's worked example, on fixtures whose every number is stated in
//! `crates/fixtures/src/models.rs`.

use std::f64::consts::FRAC_1_SQRT_2;

use glam::{DMat4, DVec3, Mat4, Vec4};
use rigbake_core::bake::{BoneBakeOptions, bake_bone_textures};
use rigbake_core::import::{ImportOptions, Source, import_file, import_slice};
use rigbake_core::layout::MatrixLayout;
use rigbake_core::timeline::loops::{LoopOptions, detect_loops_with, model_size};
use rigbake_core::timeline::{Sampling, Timeline};
use rigbake_core::{ErrorKind, Model};
use rigbake_fixtures::fixture;
use serde_json::json;

fn load(name: &str) -> Model {
    import_file(&fixture(name), &ImportOptions::default()).expect("fixture imports")
}

/// Hand matrix: rotation by `deg` about +Z around the pivot (0, 1, 0),
/// i.e. T(0,1,0) * Rz * T(0,-1,0): translation (sin, 1 - cos, 0).
fn pivot_rotation(deg: f64) -> Mat4 {
    let (s, c) = deg.to_radians().sin_cos();
    Mat4::from_cols(
        Vec4::new(c as f32, s as f32, 0.0, 0.0),
        Vec4::new(-s as f32, c as f32, 0.0, 0.0),
        Vec4::new(0.0, 0.0, 1.0, 0.0),
        Vec4::new(s as f32, (1.0 - c) as f32, 0.0, 1.0),
    )
}

fn assert_mat(actual: Mat4, expected: Mat4, what: &str) {
    assert!(
        actual.abs_diff_eq(expected, 1e-6),
        "{what}:\n actual   {actual:?}\n expected {expected:?}"
    );
}

#[test]
fn two_joint_linear_turn_gives_hand_computed_skin_matrices() {
    let model = load("two_joint.gltf");
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let clip = &timeline.clips[0];
    assert_eq!(clip.name, "turn_linear");
    assert_eq!(clip.frames, 31, "1.0 s at 30 fps");
    for layout in [MatrixLayout::Mat4, MatrixLayout::Mat3x4] {
        let options = BoneBakeOptions {
            layout,
            ..BoneBakeOptions::default()
        };
        let tex = &bake_bone_textures(&model, &timeline, &options).unwrap()[0];
        assert_eq!(tex.width, 2 * layout.pixels_per_joint());
        // The root never moves.
        for row in [0, 15, 30] {
            assert_mat(tex.matrix(row, 0), Mat4::IDENTITY, "root");
        }
        assert_mat(
            tex.matrix(clip.start_row, 1),
            pivot_rotation(0.0),
            "tip t=0",
        );
        assert_mat(
            tex.matrix(clip.start_row + 15, 1),
            pivot_rotation(45.0),
            "tip t=0.5",
        );
        assert_mat(
            tex.matrix(clip.start_row + 30, 1),
            pivot_rotation(90.0),
            "tip t=1",
        );
    }
    // And the vertex at the tip, (0.1, 2, 0), lands where rotating it by 45
    // degrees about (0, 1, 0) puts it.
    let tex = &bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap()[0];
    let p = tex
        .matrix(15, 1)
        .transform_point3(glam::Vec3::new(0.1, 2.0, 0.0));
    let expected = glam::Vec3::new(
        (0.1 * FRAC_1_SQRT_2 - FRAC_1_SQRT_2) as f32,
        (1.0 + 0.1 * FRAC_1_SQRT_2 + FRAC_1_SQRT_2) as f32,
        0.0,
    );
    assert!(p.abs_diff_eq(expected, 1e-6), "{p:?} vs {expected:?}");
}

#[test]
fn step_holds_the_previous_key() {
    let model = load("two_joint.gltf");
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let clip = &timeline.clips[1];
    assert_eq!(clip.name, "turn_step");
    let tex = &bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap()[0];
    for frame in [0, 15, 29] {
        assert_mat(
            tex.matrix(clip.start_row + frame, 1),
            Mat4::IDENTITY,
            "step before t=1",
        );
    }
    assert_mat(
        tex.matrix(clip.start_row + 30, 1),
        pivot_rotation(90.0),
        "step at t=1",
    );
}

#[test]
fn cubic_spline_matches_the_hermite_formula_by_hand() {
    // Key 0: v0 = (0,1,0), b0 = (2,0,0); key 1: a1 = (0,3,0), v1 = (1,1,0);
    // dt = 1. At u = 0.5: h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = -0.125.
    // x = 0.125*2 + 0.5*1 = 0.75; y = 0.5*1 + 0.5*1 - 0.125*3 = 0.625.
    // Skin matrix = T(x, y, 0) * T(0, -1, 0) = T(0.75, -0.375, 0).
    let model = load("two_joint.gltf");
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let clip = &timeline.clips[2];
    assert_eq!(clip.name, "slide_cubic");
    let tex = &bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap()[0];
    let expected = Mat4::from_translation(glam::Vec3::new(0.75, -0.375, 0.0));
    assert_mat(tex.matrix(clip.start_row + 15, 1), expected, "cubic t=0.5");
    // At u = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875.
    // x = 0.140625*2 + 0.15625 = 0.4375; y = 0.84375 + 0.15625 - 0.140625 = 0.859375.
    // 0.25 s is not on the 30 fps grid; sample it through a 4 fps timeline.
    let four = Timeline::all_clips(
        &model,
        Sampling {
            fps: 4.0,
            ..Sampling::default()
        },
    )
    .unwrap();
    let tex = &bake_bone_textures(&model, &four, &BoneBakeOptions::default()).unwrap()[0];
    let expected = Mat4::from_translation(glam::Vec3::new(0.4375, 0.859_375 - 1.0, 0.0));
    assert_mat(
        tex.matrix(four.clips[2].start_row + 1, 1),
        expected,
        "cubic t=0.25",
    );
}

#[test]
fn spec_worked_example_gives_a_140_by_383_texture() {
    let model = load("spec_worked_example.glb");
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let names: Vec<_> = timeline.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Move", "Idle", "Death"]);
    let frames: Vec<_> = timeline.clips.iter().map(|c| c.frames).collect();
    assert_eq!(frames, [38, 301, 44]);
    let starts: Vec<_> = timeline.clips.iter().map(|c| c.start_row).collect();
    assert_eq!(starts, [0, 38, 339]);
    let tex = &bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap()[0];
    assert_eq!((tex.width, tex.height), (140, 383));
    assert_eq!(tex.data.len() * 4, 140 * 383 * 16, "16 bytes per pixel");
}

#[test]
fn frame_counts_of_short_and_single_key_clips() {
    // 0.7 s -> 22 frames, 3.3333333 s -> 101 frames, a single key -> 1 frame.
    let mut b = rigbake_fixtures::models::two_joint();
    for (name, times) in [
        ("short", vec![0.0, 0.7]),
        ("long", vec![0.0, 3.333_333_3]),
        ("pose", vec![0.0]),
    ] {
        let a = rigbake_fixtures::parts::add_animation(&mut b, name);
        let keys: Vec<f64> = (0..times.len())
            .flat_map(|_| [0.0, 0.0, 0.0, 1.0])
            .collect();
        rigbake_fixtures::parts::add_channel(&mut b, a, 1, "rotation", "LINEAR", &times, &keys);
    }
    let bytes = b.to_glb();
    let source = Source {
        name: "frames",
        dir: None,
    };
    let model = import_slice(&bytes, &source, &ImportOptions::default()).unwrap();
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let frames: Vec<_> = timeline.clips[3..]
        .iter()
        .map(|c| (c.name.as_str(), c.frames))
        .collect();
    assert_eq!(frames, [("short", 22), ("long", 101), ("pose", 1)]);
    assert!(
        timeline.clips[5].looping,
        "a one-frame pose trivially loops"
    );
}

#[test]
fn hierarchy_reads_matrix_nodes_sparse_normalized_keys_and_external_buffers() {
    let model = load("hierarchy.gltf");
    let spine = model.nodes.iter().position(|n| n.name == "spine").unwrap();
    // Dense identity keys with key 1 replaced (sparse) by 90 degrees about Z,
    // stored as normalized SHORTs: at t = 0.5 the spine turns 90 degrees, at
    // 0.25 halfway (45 degrees).
    let mut ev = rigbake_core::eval::evaluate::Evaluator::new(&model);
    ev.evaluate_clip(0, 0.5);
    let q = ev.local.transforms[spine].rotation;
    let expected = glam::DQuat::from_rotation_z(90f64.to_radians());
    assert!(q.dot(expected).abs() > 1.0 - 1e-9, "{q:?}");
    ev.evaluate_clip(0, 0.25);
    let q = ev.local.transforms[spine].rotation;
    let expected = glam::DQuat::from_rotation_z(45f64.to_radians());
    assert!(q.dot(expected).abs() > 1.0 - 1e-9, "{q:?}");
    // The root's matrix is kept exactly: scale 2, translate x + 1.
    let world = &model.nodes[0];
    assert_eq!(
        world.rest_matrix,
        DMat4::from_cols_array(&[
            2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0, 1.0
        ])
    );
    // UVs were normalized UNSIGNED_SHORT: 1/7 decodes to 9362/65535.
    let uv = model.meshes[0].primitives[0].tex_coords[0][1];
    assert!((f64::from(uv.x) - 9362.0 / 65535.0).abs() < 1e-7);

    // Skin matrices put the mesh in the space of `body` (offset (0, 0, 3)
    // under `world`): at rest a vertex bound fully to `spine` maps by
    // inverse(body global) * spine global * inverse bind = inverse(body global).
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let tex = &bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap()[0];
    let body_global = DMat4::from_cols_array(&[
        2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 6.0, 1.0,
    ]);
    let p = DVec3::new(1.0, 2.0, 3.0);
    let at_rest = tex.matrix(0, 0).as_dmat4().transform_point3(p);
    assert!(
        (at_rest - body_global.inverse().transform_point3(p)).length() < 1e-6,
        "{at_rest:?}"
    );
}

#[test]
fn degenerate_fixtures_are_reported_with_the_object_and_reason() {
    let cases = [
        (
            "zero_weight_vertex",
            ErrorKind::Invalid,
            "meshes[0].primitives[0].attributes.WEIGHTS_0",
            "vertex 3 has no positive weight",
        ),
        ("cycle", ErrorKind::Invalid, "nodes[", "cycle"),
        (
            "keys_not_increasing",
            ErrorKind::Invalid,
            "animations[0].channels[0]",
            "key times are not increasing",
        ),
        (
            "nan_key",
            ErrorKind::Invalid,
            "animations[0].samplers[0].output",
            "non-finite",
        ),
        (
            "joint_out_of_range",
            ErrorKind::Invalid,
            "meshes[0].primitives[0].attributes.JOINTS_0",
            "joint 7",
        ),
        (
            "requires_unknown_extension",
            ErrorKind::Unsupported,
            "extensionsRequired[0]",
            "unsupported extension KHR_animation_pointer",
        ),
    ];
    for (name, kind, object, reason) in cases {
        let path = fixture(&format!("degenerate/{name}.gltf"));
        let e = import_file(&path, &ImportOptions::default()).expect_err(name);
        assert_eq!(e.kind, kind, "{name}: {e}");
        assert!(
            e.object.starts_with(object),
            "{name}: object `{}`",
            e.object
        );
        assert!(
            e.message.contains(reason),
            "{name}: message `{}`",
            e.message
        );
        assert_eq!(
            e.file.as_deref(),
            Some(path.as_path()),
            "{name}: names the file"
        );
    }
    // A static prop imports but has nothing for a bone bake.
    let model = load("degenerate/static_prop.gltf");
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let e = bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NothingToBake);
    assert!(e.message.contains("no skinned mesh"));
}

#[test]
fn validation_catches_count_zero_and_joint_not_a_node() {
    let source = Source {
        name: "bad",
        dir: None,
    };
    // Accessor count 0.
    let mut b = rigbake_fixtures::models::two_joint();
    let acc = b.root["meshes"][0]["primitives"][0]["attributes"]["NORMAL"]
        .as_u64()
        .unwrap() as usize;
    b.get_mut("accessors", acc).insert("count".into(), json!(0));
    let e = import_slice(&b.to_glb(), &source, &ImportOptions::default()).unwrap_err();
    assert!(e.message.contains("count is 0"), "{e}");
    assert_eq!(e.object, "meshes[0].primitives[0].attributes.NORMAL");
    // A joint that is not a node.
    let mut b = rigbake_fixtures::models::two_joint();
    b.get_mut("skins", 0)
        .insert("joints".into(), json!([0, 99]));
    let e = import_slice(&b.to_glb(), &source, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Malformed);
    assert!(e.object.starts_with("skins[0].joints"), "{e}");
}

// ---------------------------------------------------------------------------
// Several keys per channel: STEP at and between interior key times, and
// CUBICSPLINE rotation and scale over segments of different lengths. The
// expectations come from the glTF 2.0 spec (Appendix C, "Interpolation"):
//
// - STEP: the value of key k holds for t_k <= t < t_{k+1}; at an interior
//   key time the new key's value applies.
// - CUBICSPLINE: with u = (t - t_k) / dt and dt = t_{k+1} - t_k,
//   p(u) = h00 v_k + h10 dt b_k + h01 v_{k+1} + h11 dt a_{k+1}, where b_k is
//   key k's out-tangent and a_{k+1} key k+1's in-tangent, h00 = 2u^3 - 3u^2
//   + 1, h10 = u^3 - 2u^2 + u, h01 = -2u^3 + 3u^2, h11 = u^3 - u^2;
//   rotations are normalised afterwards.

/// `two_joint` plus three clips on `tip` (node 1): `step4` (rotation STEP
/// 0, 30, 60, 90 degrees about +Z at t = 0, 0.5, 0.75, 1), `scale_cubic`
/// and `turn_cubic` (CUBICSPLINE, keys at t = 0, 1, 1.5: see the tests).
fn many_keys() -> Model {
    use rigbake_fixtures::parts::{add_animation, add_channel, axis_angle};
    let mut b = rigbake_fixtures::models::two_joint();
    let tip = 1;
    let keys: Vec<f64> = [0.0, 30.0, 60.0, 90.0]
        .iter()
        .flat_map(|&d| axis_angle([0.0, 0.0, 1.0], d))
        .collect();
    let a = add_animation(&mut b, "step4");
    add_channel(
        &mut b,
        a,
        tip,
        "rotation",
        "STEP",
        &[0.0, 0.5, 0.75, 1.0],
        &keys,
    );
    let a = add_animation(&mut b, "scale_cubic");
    add_channel(
        &mut b,
        a,
        tip,
        "scale",
        "CUBICSPLINE",
        &[0.0, 1.0, 1.5],
        &SCALE_KEYS,
    );
    let a = add_animation(&mut b, "turn_cubic");
    add_channel(
        &mut b,
        a,
        tip,
        "rotation",
        "CUBICSPLINE",
        &[0.0, 1.0, 1.5],
        &turn_keys(),
    );
    let source = Source {
        name: "many_keys",
        dir: None,
    };
    import_slice(&b.to_glb(), &source, &ImportOptions::default()).unwrap()
}

/// `scale_cubic`: (in-tangent, value, out-tangent) per key.
#[rustfmt::skip]
const SCALE_KEYS: [f64; 27] = [
    0.0, 0.0, 0.0,  1.0, 1.0, 1.0,  2.0, 0.0, 0.0,  // t = 0
    0.0, 4.0, 0.0,  2.0, 1.0, 1.0,  0.0, 0.0, -2.0, // t = 1
    1.0, 0.0, 0.0,  1.0, 1.0, 3.0,  0.0, 0.0, 0.0,  // t = 1.5
];

/// `turn_cubic`: values 0, 90, 180 degrees about +Z; key 1's out-tangent
/// and key 2's in-tangent are not zero.
fn turn_keys() -> Vec<f64> {
    let q = axis_angle4;
    let zero = [0.0; 4];
    [
        zero,
        q(0.0),
        zero,
        zero,
        q(90.0),
        [0.0, 0.0, 0.5, -0.25],
        [0.0, 0.0, 0.3, 0.6],
        q(180.0),
        zero,
    ]
    .concat()
}

/// Skin matrix of `tip` (bound at (0, 1, 0)) for a local rotation `q` and
/// scale `s`: T(0,1,0) * R * S * T(0,-1,0).
fn tip_skin(q: glam::DQuat, s: DVec3) -> Mat4 {
    let m = DMat4::from_translation(DVec3::Y)
        * DMat4::from_quat(q)
        * DMat4::from_scale(s)
        * DMat4::from_translation(-DVec3::Y);
    m.as_mat4()
}

#[test]
fn step_holds_each_key_until_the_next_key_time() {
    let model = many_keys();
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let clip = &timeline.clips[3];
    assert_eq!(clip.name, "step4");
    assert_eq!(clip.frames, 31);
    let tex = &bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap()[0];
    // 30 fps: frame 15 is t = 0.5 (key 1), frames 22 and 23 straddle
    // t = 0.75 (key 2), frame 30 is the last key.
    for (frame, degrees) in [
        (0, 0.0),
        (1, 0.0),
        (14, 0.0),
        (15, 30.0),
        (16, 30.0),
        (22, 30.0),
        (23, 60.0),
        (29, 60.0),
        (30, 90.0),
    ] {
        assert_mat(
            tex.matrix(clip.start_row + frame, 1),
            pivot_rotation(degrees),
            &format!("step frame {frame}"),
        );
    }
}

/// Hermite basis at `u` (glTF spec, Appendix C).
fn hermite(u: f64) -> [f64; 4] {
    let (u2, u3) = (u * u, u * u * u);
    [
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    ]
}

#[test]
fn cubic_spline_scale_over_two_segments_by_hand() {
    // Sampled at 4 fps: t = 0, 0.25, ..., 1.5 (7 frames).
    let model = many_keys();
    let four = Timeline::all_clips(
        &model,
        Sampling {
            fps: 4.0,
            ..Sampling::default()
        },
    )
    .unwrap();
    let clip = &four.clips[4];
    assert_eq!(clip.name, "scale_cubic");
    assert_eq!(clip.frames, 7);
    let tex = &bake_bone_textures(&model, &four, &BoneBakeOptions::default()).unwrap()[0];
    // Worked by hand from SCALE_KEYS:
    // t = 0.25 (dt = 1, u = 0.25; h = .84375, .140625, .15625, -.046875):
    //   x = .84375 + .140625*2 + .15625*2 = 1.4375
    //   y = .84375 + .15625 - .046875*4 = .8125, z = 1
    // t = 0.5 (u = 0.5; h = .5, .125, .5, -.125):
    //   x = .5 + .25 + 1 = 1.75, y = .5 + .5 - .5 = .5, z = 1
    // t = 1.25 (dt = 0.5, u = 0.5): b1 = (0,0,-2), a2 = (1,0,0):
    //   x = 1 + 1*.125*.5*0 + .5 - .125*.5*1 = 1.4375
    //   y = .5 + .5 = 1, z = .5 - .125*.5*2 + 1.5 = 1.875
    for (frame, s) in [
        (0, [1.0, 1.0, 1.0]),
        (1, [1.4375, 0.8125, 1.0]),
        (2, [1.75, 0.5, 1.0]),
        (4, [2.0, 1.0, 1.0]),
        (5, [1.4375, 1.0, 1.875]),
        (6, [1.0, 1.0, 3.0]),
    ] {
        let expected = tip_skin(glam::DQuat::IDENTITY, DVec3::from_array(s));
        assert_mat(
            tex.matrix(clip.start_row + frame, 1),
            expected,
            &format!("scale frame {frame}"),
        );
    }
    // The basis used above, checked against its definition.
    assert_eq!(hermite(0.25), [0.84375, 0.140625, 0.15625, -0.046875]);
    assert_eq!(hermite(0.5), [0.5, 0.125, 0.5, -0.125]);
}

#[test]
fn cubic_spline_rotation_over_two_segments_by_hand() {
    let model = many_keys();
    let four = Timeline::all_clips(
        &model,
        Sampling {
            fps: 4.0,
            ..Sampling::default()
        },
    )
    .unwrap();
    let clip = &four.clips[5];
    assert_eq!(clip.name, "turn_cubic");
    let tex = &bake_bone_textures(&model, &four, &BoneBakeOptions::default()).unwrap()[0];
    // Segment 0 has zero tangents: at u = 0.5 the result is the normalised
    // average of the 0 and 90 degree quaternions, exactly 45 degrees.
    assert_mat(
        tex.matrix(clip.start_row + 2, 1),
        pivot_rotation(45.0),
        "turn t=0.5",
    );
    // Segment 1 (dt = 0.5) at u = 0.5, by the spec's formula on the raw
    // key values (x, y, z, w), then normalised.
    let q90 = axis_angle4(90.0);
    let q180 = axis_angle4(180.0);
    let (b1, a2) = ([0.0, 0.0, 0.5, -0.25], [0.0, 0.0, 0.3, 0.6]);
    let h = hermite(0.5);
    let dt = 0.5;
    let raw: Vec<f64> = (0..4)
        .map(|i| h[0] * q90[i] + h[1] * dt * b1[i] + h[2] * q180[i] + h[3] * dt * a2[i])
        .collect();
    // z = .5*.70711 + .125*.5*.5 + .5*1 - .125*.5*.3 = 0.866053...
    // w = .5*.70711 - .125*.5*.25 + 0 - .125*.5*.6 = 0.300428...
    let q = glam::DQuat::from_xyzw(raw[0], raw[1], raw[2], raw[3]).normalize();
    let degrees = 2.0 * q.z.atan2(q.w).to_degrees();
    assert!((degrees - 141.74).abs() < 0.01, "hand estimate: {degrees}");
    assert_mat(
        tex.matrix(clip.start_row + 5, 1),
        tip_skin(q, DVec3::ONE),
        "turn t=1.25",
    );
    assert_mat(
        tex.matrix(clip.start_row + 6, 1),
        pivot_rotation(180.0),
        "turn t=1.5",
    );
}

fn axis_angle4(degrees: f64) -> [f64; 4] {
    rigbake_fixtures::parts::axis_angle([0.0, 0.0, 1.0], degrees)
}

// ---------------------------------------------------------------------------
// Loop detection edges (SPEC section 2: a clip loops when its poses at the
// clip start and the clip end match; translations within 1e-4 of the
// skeleton's extent, the linear part within 1e-3 of its scale).

/// `two_joint` plus `tip` clips of 1 s; returns each clip's loop flag by
/// name, with the default loop options.
fn loop_flags(clips: &[(&str, &str, &[f64], &[f64])]) -> Vec<(String, bool)> {
    loop_flags_with(clips, &LoopOptions::default()).0
}

/// [`loop_flags`] with `options`; also returns the model's size.
fn loop_flags_with(
    clips: &[(&str, &str, &[f64], &[f64])],
    options: &LoopOptions,
) -> (Vec<(String, bool)>, f64) {
    use rigbake_fixtures::parts::{add_animation, add_channel};
    let mut b = rigbake_fixtures::models::two_joint();
    for (name, path, times, values) in clips {
        let a = add_animation(&mut b, name);
        add_channel(&mut b, a, 1, path, "LINEAR", times, values);
    }
    let source = Source {
        name: "loops",
        dir: None,
    };
    let model = import_slice(&b.to_glb(), &source, &ImportOptions::default()).unwrap();
    let mut timeline = Timeline::plan_all(&model, Sampling::default()).unwrap();
    detect_loops_with(&mut timeline, &model, options);
    let flags = timeline
        .clips
        .iter()
        .map(|c| (c.name.clone(), c.looping))
        .collect();
    (flags, model_size(&model))
}

#[test]
fn loop_detection_treats_q_and_minus_q_as_one_rotation() {
    // A full turn about +Z in two halves: the last key, 360 degrees, is the
    // quaternion (0, 0, 0, -1), the negation of the first; both are the
    // identity rotation, so the poses match and the clip loops. A half turn
    // does not.
    let turn: Vec<f64> = [0.0, 180.0, 360.0]
        .iter()
        .flat_map(|&d| rigbake_fixtures::parts::axis_angle([0.0, 0.0, 1.0], d))
        .collect();
    assert!(turn[11] < -0.999_999, "the last key is -q: {turn:?}");
    let half: Vec<f64> = [0.0, 90.0, 180.0]
        .iter()
        .flat_map(|&d| rigbake_fixtures::parts::axis_angle([0.0, 0.0, 1.0], d))
        .collect();
    // The same rest rotation written as -identity at both ends.
    let negated = [0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0];
    let flags = loop_flags(&[
        ("full_turn", "rotation", &[0.0, 0.5, 1.0], &turn),
        ("half_turn", "rotation", &[0.0, 0.5, 1.0], &half),
        ("minus_q_to_q", "rotation", &[0.0, 1.0], &negated),
    ]);
    let flag = |n: &str| flags.iter().find(|(name, _)| name == n).unwrap().1;
    assert!(!flag("turn_linear"), "0 -> 90 degrees does not loop");
    assert!(flag("full_turn"), "{flags:?}");
    assert!(!flag("half_turn"), "{flags:?}");
    assert!(flag("minus_q_to_q"), "{flags:?}");
}

#[test]
fn loop_detection_tolerance_edges() {
    // The tolerance alone (the continuity test off): 1% of the model's size
    // for node origins, about 0.01 rad for rotations. The tip's end position
    // misses its start by 0.5% of the size (loops) or 2% (does not); its end
    // rotation by 0.3 degrees (0.005 rad, loops) or 1.2 degrees (0.02 rad,
    // does not).
    let size = loop_flags_with(&[], &LoopOptions::default()).1;
    let slide = |miss: f64| vec![0.0, 1.0, 0.0, 0.0, 0.3, 0.0, miss * size, 1.0, 0.0];
    let (near, far) = (slide(0.005), slide(0.02));
    let q = |d: f64| rigbake_fixtures::parts::axis_angle([0.0, 0.0, 1.0], d);
    let small: Vec<f64> = [q(0.0), q(45.0), q(0.3)].concat();
    let large: Vec<f64> = [q(0.0), q(45.0), q(1.2)].concat();
    let times: &[f64] = &[0.0, 0.5, 1.0];
    let tolerance_only = LoopOptions {
        step_factor: 0.0,
        ..LoopOptions::default()
    };
    let clips: &[(&str, &str, &[f64], &[f64])] = &[
        ("near", "translation", times, &near),
        ("far", "translation", times, &far),
        ("small", "rotation", times, &small),
        ("large", "rotation", times, &large),
    ];
    let (flags, _) = loop_flags_with(clips, &tolerance_only);
    let flag = |n: &str| flags.iter().find(|(name, _)| name == n).unwrap().1;
    assert!(flag("near"), "{flags:?}");
    assert!(!flag("far"), "{flags:?}");
    assert!(flag("small"), "{flags:?}");
    assert!(!flag("large"), "{flags:?}");
}

#[test]
fn loop_detection_accepts_a_wrap_no_larger_than_a_frame_step() {
    // The tip turns steadily about +Z at 90 degrees per second (3 degrees
    // per frame at 30 fps) for 1 s and its end misses the start pose by one
    // frame's turn (a cycle without a duplicate end frame: loops), by four
    // frames' turn (does not), or turns away at the end (does not).
    let q = |d: f64| rigbake_fixtures::parts::axis_angle([0.0, 0.0, 1.0], d);
    let cycle = |end: f64| -> Vec<f64> { [q(0.0), q(-45.0), q(-90.0), q(-45.0), q(end)].concat() };
    let (one, four) = (cycle(-3.0), cycle(-12.0));
    let away: Vec<f64> = [q(0.0), q(-45.0), q(-90.0), q(-45.0), q(-6.0), q(-9.0)].concat();
    let times: &[f64] = &[0.0, 0.25, 0.5, 0.75, 0.95, 1.0];
    let clips: &[(&str, &str, &[f64], &[f64])] = &[
        ("one_step", "rotation", &times[..5], &one),
        ("four_steps", "rotation", &times[..5], &four),
        ("turns_away", "rotation", times, &away),
    ];
    let (flags, _) = loop_flags_with(clips, &LoopOptions::default());
    let flag = |n: &str| flags.iter().find(|(name, _)| name == n).unwrap().1;
    assert!(flag("one_step"), "{flags:?}");
    assert!(!flag("four_steps"), "{flags:?}");
    assert!(!flag("turns_away"), "{flags:?}");
}

#[test]
fn cubic_spline_morph_weights_over_two_segments_by_hand() {
    use rigbake_core::eval::sample::{LocalPose, sample_clip};
    use rigbake_fixtures::parts::{PrimitiveData, add_animation, add_channel, add_mesh, primitive};
    // One triangle with two morph targets; the node's weights animated with
    // CUBICSPLINE keys at t = 0, 1, 1.5. Per key, glTF stores the two
    // in-tangents, the two values, then the two out-tangents.
    let mut b = rigbake_fixtures::Builder::new();
    let data = PrimitiveData {
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        morph_positions: vec![vec![[0.0, 0.0, 1.0]; 3], vec![[1.0, 0.0, 0.0]; 3]],
        ..PrimitiveData::default()
    };
    let prim = primitive(&mut b, &data, rigbake_fixtures::Component::U16);
    let mesh = add_mesh(&mut b, "morph", vec![prim]);
    b.get_mut("meshes", mesh)
        .insert("weights".into(), json!([0.0, 0.0]));
    let node = b.node(json!({"name": "morphing", "mesh": mesh}));
    b.scene(&[node]);
    #[rustfmt::skip]
    let keys = [
        0.0, 0.0,   0.0, 1.0,   2.0, -1.0, // t = 0:   a0, v0, b0
        4.0, 0.0,   1.0, 0.0,   0.0, 2.0,  // t = 1:   a1, v1, b1
        1.0, -2.0,  0.5, 0.5,   0.0, 0.0,  // t = 1.5: a2, v2, b2
    ];
    let a = add_animation(&mut b, "weights_cubic");
    add_channel(
        &mut b,
        a,
        node,
        "weights",
        "CUBICSPLINE",
        &[0.0, 1.0, 1.5],
        &keys,
    );
    let source = Source {
        name: "morph_cubic",
        dir: None,
    };
    let model = import_slice(&b.to_glb(), &source, &ImportOptions::default()).unwrap();
    // By hand (dt = 1 on the first segment, 0.5 on the second):
    // t = 0.25 (h = .84375, .140625, .15625, -.046875):
    //   w0 = .140625*2 + .15625*1 - .046875*4 = .25
    //   w1 = .84375*1 - .140625*1 = .703125
    // t = 0.5 (h = .5, .125, .5, -.125):
    //   w0 = .125*2 + .5*1 - .125*4 = .25,  w1 = .5 - .125 = .375
    // t = 1.25: w0 = .5*1 + .5*.5 - .125*.5*1 = .6875
    //           w1 = .125*.5*2 + .5*.5 - .125*.5*(-2) = .5
    let mut pose = LocalPose::rest(&model);
    for (t, want) in [
        (0.0, [0.0, 1.0]),
        (0.25, [0.25, 0.703_125]),
        (0.5, [0.25, 0.375]),
        (1.0, [1.0, 0.0]),
        (1.25, [0.6875, 0.5]),
        (1.5, [0.5, 0.5]),
    ] {
        sample_clip(&model, &model.clips[0], t, &mut pose);
        let got = pose.node_weights(node);
        assert_eq!(got.len(), 2);
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "t = {t}: {got:?}, expected {want:?}");
        }
    }
}

#[test]
fn loop_detection_compares_morph_weights_within_their_tolerance() {
    use rigbake_fixtures::parts::{PrimitiveData, add_animation, add_channel, add_mesh, primitive};
    // One triangle with two morph targets; LINEAR weight clips whose end
    // misses the start by 0.005 (loops: the tolerance is 0.01) or 0.02
    // (does not; the continuity test is off), and one ending exactly where
    // it starts after moving.
    let mut b = rigbake_fixtures::Builder::new();
    let data = PrimitiveData {
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        morph_positions: vec![vec![[0.0, 0.0, 1.0]; 3], vec![[1.0, 0.0, 0.0]; 3]],
        ..PrimitiveData::default()
    };
    let prim = primitive(&mut b, &data, rigbake_fixtures::Component::U16);
    let mesh = add_mesh(&mut b, "morph", vec![prim]);
    let node = b.node(json!({"name": "morphing", "mesh": mesh}));
    b.scene(&[node]);
    for (name, end) in [
        ("round_trip", [0.0, 1.0]),
        ("near", [0.0, 1.0 - 0.005]),
        ("far", [0.0, 1.0 - 0.02]),
    ] {
        let keys = [0.0, 1.0, 0.7, 0.2, end[0], end[1]];
        let a = add_animation(&mut b, name);
        add_channel(
            &mut b,
            a,
            node,
            "weights",
            "LINEAR",
            &[0.0, 0.5, 1.0],
            &keys,
        );
    }
    let source = Source {
        name: "morph_loops",
        dir: None,
    };
    let model = import_slice(&b.to_glb(), &source, &ImportOptions::default()).unwrap();
    let mut timeline = Timeline::plan_all(&model, Sampling::default()).unwrap();
    let tolerance_only = LoopOptions {
        step_factor: 0.0,
        ..LoopOptions::default()
    };
    detect_loops_with(&mut timeline, &model, &tolerance_only);
    let flags: Vec<(&str, bool)> = timeline
        .clips
        .iter()
        .map(|c| (c.name.as_str(), c.looping))
        .collect();
    assert_eq!(
        flags,
        [("round_trip", true), ("near", true), ("far", false)],
        "morph weights decide the loop flag when nothing else moves"
    );
}
