//! Hand-computed cases: skin matrices, interpolation modes, frame counts and
//! the SPEC's worked example, on fixtures whose every number is stated in
//! `crates/fixtures/src/models.rs`.

use std::f64::consts::FRAC_1_SQRT_2;

use glam::{DMat4, DVec3, Mat4, Vec4};
use rigbake_core::bake::{BoneBakeOptions, bake_bone_textures};
use rigbake_core::import::{ImportOptions, Source, import_file, import_slice};
use rigbake_core::layout::MatrixLayout;
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
            "requires_draco",
            ErrorKind::Unsupported,
            "extensionsRequired[0]",
            "unsupported extension KHR_draco_mesh_compression",
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
