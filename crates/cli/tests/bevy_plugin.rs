//! bevy_rigbake (integrations/bevy) plays bakes in Bevy like rigbake's own
//! CPU preview: its `.rigbake` asset loader, its vertex-animation material
//! (docs/shaders/rigbake.wgsl's `vat_deform`, imported as a Bevy shader
//! module) and its per-instance state (rigbake-core's runtime, one storage
//! buffer per bake read by `MeshTag`) render on Mesa's lavapipe through
//! `rigbake-bevy-shots` (integrations/bevy/src/bin), and each silhouette
//! is compared with `rigbake::preview` of the same state: the bake played
//! through the runtime reference (`Producer::Bake`), intersection over
//! union at least 0.99. Fox on the VAT path (two clips, a crossfade
//! halfway), CesiumMan on the bone path (`mat4` f32 and `qts` `unorm16`,
//! its weight channels read from the container), Knight's props on their
//! anchor tracks and its root motion. A container that is not one is
//! refused with the loader's message naming the file. The `crowd` example
//! plays every shared model that bakes on both paths.
//!
//! Needs the binaries: `RIGBAKE_BEVY_SHOTS` and `RIGBAKE_BEVY_CROWD` name
//! them, else `tools/openvat-player/target/debug/rigbake-bevy-shots` and
//! `.../examples/crowd` (`cargo build --locked --manifest-path
//! tools/openvat-player/Cargo.toml --workspace --bins --examples`),
//! and lavapipe. Without them the tests skip with a message, unless
//! `RIGBAKE_REQUIRE_BEVY` is set: then they fail (CI sets it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{iou, shared_models};
use rigbake::playback;
use rigbake::preview::scene::{self, PathChoice, Producer, Topology};
use rigbake::preview::{fit_camera, render};
use rigbake_core::runtime::{AnimationState, PlayMode};

/// Pixels per side of the compared frames.
const SIZE: u32 = 256;

/// The same triangles from the same camera, differing only in
/// rasterisation rules along the outline.
const MIN_IOU: f64 = 0.99;

fn required() -> bool {
    std::env::var_os("RIGBAKE_REQUIRE_BEVY").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The shots binary and lavapipe's ICD file, or `None` after a notice.
fn shots_binary(test: &str) -> Option<(PathBuf, PathBuf)> {
    bevy_binary(test, "RIGBAKE_BEVY_SHOTS", "rigbake-bevy-shots")
}

/// A binary of the Bevy workspace (the variable `var` names it, else
/// `tools/openvat-player/target/debug/<built>`) and lavapipe's ICD file, or
/// `None` after a notice.
fn bevy_binary(test: &str, var: &str, built: &str) -> Option<(PathBuf, PathBuf)> {
    let binary = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tools/openvat-player/target/debug")
            .join(built)
    });
    let why = if !binary.is_file() {
        format!(
            "no {built} at {} (build it: cargo build --locked --manifest-path \
             tools/openvat-player/Cargo.toml --workspace --bins --examples, or set {var})",
            binary.display()
        )
    } else if let Some(icd) = common::lavapipe_icd() {
        return Some((binary, icd));
    } else {
        "Mesa's lavapipe is not installed (Debian package mesa-vulkan-drivers)".to_owned()
    };
    if required() {
        panic!("{test}: {why}, and RIGBAKE_REQUIRE_BEVY is set");
    }
    rigbake_fixtures::testkit::notice(&format!("SKIPPED {test}: {why}"));
    None
}

/// Runs the binary on `jobs` (written beside `dir`); returns its output.
fn run_shots(
    binary: &Path,
    icd: &Path,
    jobs: &serde_json::Value,
    file: &Path,
) -> std::process::Output {
    std::fs::write(file, serde_json::to_vec_pretty(jobs).unwrap()).unwrap();
    Command::new(binary)
        .arg(file)
        .env("VK_ICD_FILENAMES", icd)
        .env("WGPU_BACKEND", "vulkan")
        .env("RUST_LOG", "info,wgpu=error,naga=warn")
        .output()
        .unwrap()
}

/// Bakes `model` into `out` with `flags` and loads the container
/// `out/<stem>/<stem>.rigbake` for playback (the preview's reference).
fn bake_and_load(model: &Path, out: &Path, flags: &[&str]) -> playback::Loaded {
    let r = common::bake(&[model.to_path_buf()], out, flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stem = model.file_stem().unwrap().to_str().unwrap();
    let container = out.join(stem).join(format!("{stem}.rigbake"));
    playback::load(&container, Some(model), playback::Paths::All)
        .unwrap_or_else(|e| panic!("{}: {e}", container.display()))
}

/// [`run_shots`], which must succeed (`what` names the run in the
/// message); returns its stdout and stderr.
fn shots_ok(
    binary: &Path,
    icd: &Path,
    jobs: &serde_json::Value,
    file: &Path,
    what: &str,
) -> String {
    let run = run_shots(binary, icd, jobs, file);
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        run.status.success(),
        "rigbake-bevy-shots failed on {what}:\n{log}"
    );
    log
}

fn camera_json(camera: &rigbake_preview::Camera) -> serde_json::Value {
    let v = |d: glam::DVec3| serde_json::json!([d.x, d.y, d.z]);
    serde_json::json!({
        "right": v(camera.right),
        "up": v(camera.up),
        "forward": v(camera.forward),
        "center": v(camera.center),
        "half_extent": camera.half_extent,
    })
}

#[test]
fn bevy_rigbake_plays_fox_on_the_vat_path_like_the_preview() {
    let test = "bevy_rigbake_plays_fox_on_the_vat_path_like_the_preview";
    let Some(models) = shared_models(test) else {
        return;
    };
    let Some((binary, icd)) = shots_binary(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bakes");
    let model = models.join("khronos/Fox.glb");
    let loaded = bake_and_load(&model, &out, &["--vat", "--normals", "--fps", "15"]);
    let topology = Topology::new(&loaded, PathChoice::Vat);
    let mut shots = Vec::new();
    let mut expected = Vec::new();
    // A frame a third into two clips.
    for clip in [0usize, 1] {
        let c = &loaded.clips[clip];
        let k = c.info.frames / 3;
        let pose = scene::pose(&loaded, &topology, PathChoice::Vat, Producer::Bake, clip, k);
        let camera = fit_camera(std::slice::from_ref(&pose), SIZE);
        let shot = tmp.path().join(format!("clip{clip}.png"));
        shots.push(serde_json::json!({
            "clip": clip,
            "time": c.info.frame_time(k),
            "camera": camera_json(&camera),
            "out": shot,
        }));
        expected.push((
            format!("Fox {} frame {k}", c.name),
            shot,
            render(&pose, &topology, &camera).covered,
        ));
    }
    // Halfway through a crossfade of one second from clip 0 (at its frame
    // 3) to clip 2: the state rigbake-core's runtime makes, posed by the
    // preview's runtime reference.
    let (from, to) = (&loaded.clips[0].info, &loaded.clips[2].info);
    let mut state = AnimationState::new();
    state.play(*from, PlayMode::of(from), 1.0);
    state.seek(from.frame_time(3));
    state.crossfade(*to, PlayMode::of(to), 1.0, 1.0);
    let gpu = state.update(0.5);
    assert_eq!(gpu.active_rows().count(), 2, "two clips blend halfway");
    let pose = scene::pose_state(&loaded, &topology, PathChoice::Vat, &gpu);
    let camera = fit_camera(std::slice::from_ref(&pose), SIZE);
    let shot = tmp.path().join("crossfade.png");
    shots.push(serde_json::json!({
        "clip": 2,
        "time": 0.0,
        "fade": {"from": 0, "from_time": from.frame_time(3), "duration": 1.0, "elapsed": 0.5},
        "camera": camera_json(&camera),
        "out": shot,
    }));
    expected.push((
        "Fox crossfade halfway".to_owned(),
        shot.clone(),
        render(&pose, &topology, &camera).covered,
    ));
    // The outgoing clip alone, from the same camera: what a player that
    // ignored the fade would draw (the test must tell them apart).
    let alone = scene::pose(&loaded, &topology, PathChoice::Vat, Producer::Bake, 0, 3);
    let unfaded = render(&alone, &topology, &camera).covered;
    let jobs = serde_json::json!({
        "dir": out,
        "bake": "Fox/Fox.rigbake",
        "size": SIZE,
        "shots": shots,
    });
    let started = std::time::Instant::now();
    let log = shots_ok(&binary, &icd, &jobs, &tmp.path().join("jobs.json"), "Fox");
    assert!(
        log.contains("llvmpipe"),
        "not on lavapipe (llvmpipe):\n{log}"
    );
    rigbake_fixtures::testkit::notice(&format!(
        "bevy_rigbake: Fox in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let mut failures = Vec::new();
    for (what, shot, covered) in &expected {
        let (w, h, mask) = common::alpha_mask(shot);
        assert_eq!((w, h), (SIZE, SIZE), "{what}");
        let (score, area) = iou(&mask, covered);
        rigbake_fixtures::testkit::notice(&format!(
            "bevy_rigbake {what}: IoU {score:.4} over {area} pixels"
        ));
        if area < 500 || score < MIN_IOU {
            failures.push(format!("{what}: IoU {score:.4} over {area} pixels"));
        }
    }
    assert!(failures.is_empty(), "below {MIN_IOU}: {failures:#?}");
    let (_, _, mask) = common::alpha_mask(&shot);
    let (score, _) = iou(&mask, &unfaded);
    rigbake_fixtures::testkit::notice(&format!(
        "bevy_rigbake crossfade against clip 0 alone: IoU {score:.4}"
    ));
    assert!(
        score < 0.97,
        "the crossfade draws clip 0 alone ({score:.4}): the test cannot tell"
    );
}

#[test]
fn bevy_rigbake_plays_cesium_man_on_the_bone_path_like_the_preview() {
    let test = "bevy_rigbake_plays_cesium_man_on_the_bone_path_like_the_preview";
    let Some(models) = shared_models(test) else {
        return;
    };
    let Some((binary, icd)) = shots_binary(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bakes");
    let model = models.join("khronos/CesiumMan.glb");
    // The default bone texture (mat4 f32) and the smallest (qts unorm16),
    // whose shader decodes the recorded range.
    let mut expected = Vec::new();
    for (dir, flags) in [
        ("mat4", &["--fps", "15"][..]),
        (
            "qts",
            &["--fps", "15", "--layout", "qts", "--precision", "unorm16"][..],
        ),
    ] {
        let loaded = bake_and_load(&model, &out.join(dir), flags);
        let topology = Topology::new(&loaded, PathChoice::Bones);
        let c = &loaded.clips[0];
        let k = c.info.frames / 3;
        let pose = scene::pose(&loaded, &topology, PathChoice::Bones, Producer::Bake, 0, k);
        let camera = fit_camera(std::slice::from_ref(&pose), SIZE);
        let shot = tmp.path().join(format!("{dir}.png"));
        let jobs = serde_json::json!({
            "dir": out.join(dir),
            "bake": "CesiumMan/CesiumMan.rigbake",
            "path": "bones",
            "size": SIZE,
            "shots": [{"clip": 0, "time": c.info.frame_time(k), "camera": camera_json(&camera), "out": shot}],
        });
        shots_ok(
            &binary,
            &icd,
            &jobs,
            &tmp.path().join(format!("{dir}.json")),
            dir,
        );
        // The rest pose, from the same camera: what a shader that ignored
        // the bone texture would draw.
        let rest = scene::pose(&loaded, &topology, PathChoice::Bones, Producer::Bake, 0, 0);
        expected.push((
            format!("CesiumMan bones {dir} {} frame {k}", c.name),
            shot,
            render(&pose, &topology, &camera).covered,
            render(&rest, &topology, &camera).covered,
        ));
    }
    let mut failures = Vec::new();
    for (what, shot, covered, other) in &expected {
        let (_, _, mask) = common::alpha_mask(shot);
        let (score, area) = iou(&mask, covered);
        let (rest, _) = iou(&mask, other);
        rigbake_fixtures::testkit::notice(&format!(
            "bevy_rigbake {what}: IoU {score:.4} over {area} pixels (against the clip's first frame: {rest:.4})"
        ));
        if area < 500 || score < MIN_IOU || rest > 0.97 {
            failures.push(format!(
                "{what}: IoU {score:.4} over {area} pixels, {rest:.4} against the first frame"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "below {MIN_IOU}, or not told from the first frame: {failures:#?}"
    );
}

#[test]
fn bevy_rigbake_switches_lod_levels_by_distance() {
    // The tentacle_lods fixture (levels of 204, 108 and 50 vertices in
    // MSFT_lod): level 0 matches the preview (which draws level 0); level 2
    // on the bone path (its own weights mesh) and on the VAT path (its own
    // atlas columns) draw the same; chosen by distance (the camera 8 half
    // extents away, beyond both thresholds) the instance draws level 2
    // exactly as when asked for it, a different picture from level 0.
    let test = "bevy_rigbake_switches_lod_levels_by_distance";
    let Some((binary, icd)) = shots_binary(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bakes");
    let model = rigbake_fixtures::fixture("tentacle_lods.glb");
    let loaded = bake_and_load(&model, &out, &["--vat", "--normals", "--fps", "10"]);
    let topology = Topology::new(&loaded, PathChoice::Vat);
    let c = &loaded.clips[0];
    let k = c.info.frames / 3;
    let pose = scene::pose(&loaded, &topology, PathChoice::Vat, Producer::Bake, 0, k);
    let camera = fit_camera(std::slice::from_ref(&pose), SIZE);
    let distance = 8.0 * camera.half_extent;
    let shot = |name: &str, path: &str, lod: serde_json::Value| {
        let file = tmp.path().join(format!("{name}.png"));
        let jobs = serde_json::json!({
            "dir": out,
            "bake": "tentacle_lods/tentacle_lods.rigbake",
            "path": path,
            "lod": lod,
            "size": SIZE,
            "shots": [{"clip": 0, "time": c.info.frame_time(k), "camera": camera_json(&camera), "out": file}],
        });
        shots_ok(
            &binary,
            &icd,
            &jobs,
            &tmp.path().join(format!("{name}.json")),
            name,
        );
        common::alpha_mask(&file).2
    };
    let level0 = shot("vat-0", "vat", serde_json::json!(0));
    let vat2 = shot("vat-2", "vat", serde_json::json!(2));
    let bones2 = shot("bones-2", "bones", serde_json::json!(2));
    let near = shot(
        "vat-near",
        "vat",
        serde_json::json!([distance * 2.0, distance * 3.0]),
    );
    let far = shot(
        "vat-far",
        "vat",
        serde_json::json!([distance * 0.25, distance * 0.5]),
    );
    let reference = render(&pose, &topology, &camera).covered;
    let scores = [
        (
            "level 0 against the preview",
            iou(&level0, &reference).0,
            true,
        ),
        ("level 2, bones against VAT", iou(&bones2, &vat2).0, true),
        (
            "near by distance against level 0",
            iou(&near, &level0).0,
            true,
        ),
        ("far by distance against level 2", iou(&far, &vat2).0, true),
        ("level 2 against level 0", iou(&vat2, &level0).0, false),
    ];
    for (what, score, same) in scores {
        rigbake_fixtures::testkit::notice(&format!(
            "bevy_rigbake tentacle_lods {what}: IoU {score:.4}"
        ));
        if same {
            assert!(score >= MIN_IOU, "{what}: IoU {score:.4}");
        } else {
            assert!(
                score < MIN_IOU,
                "{what}: IoU {score:.4}: the levels look alike, the test cannot tell"
            );
        }
    }
}

#[test]
fn bevy_rigbake_instances_of_one_bake_keep_their_own_states() {
    // Two CesiumMan instances drawn in one frame from one storage buffer of
    // states (slots by MeshTag), side by side, each at its own clip time:
    // both match the preview of their own state, posed together.
    let test = "bevy_rigbake_instances_of_one_bake_keep_their_own_states";
    let Some(models) = shared_models(test) else {
        return;
    };
    let Some((binary, icd)) = shots_binary(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bakes");
    let model = models.join("khronos/CesiumMan.glb");
    let loaded = bake_and_load(&model, &out, &["--vat", "--normals", "--fps", "15"]);
    for (path, choice) in [("vat", PathChoice::Vat), ("bones", PathChoice::Bones)] {
        let topology = Topology::new(&loaded, choice);
        let c = &loaded.clips[0];
        let (a, b) = (c.info.frames / 4, c.info.frames / 2);
        let first = scene::pose(&loaded, &topology, choice, Producer::Bake, 0, a);
        let mut second = scene::pose(&loaded, &topology, choice, Producer::Bake, 0, b);
        // The model is about 1.9 units tall: 1.5 units to the side clears it.
        let offset = glam::Vec3::new(1.5, 0.0, 0.0);
        for m in &mut second {
            for p in &mut m.positions {
                *p += offset;
            }
        }
        let both: Vec<_> = first.iter().chain(&second).cloned().collect();
        let camera = fit_camera(std::slice::from_ref(&both), SIZE);
        let shot = tmp.path().join(format!("{path}.png"));
        let jobs = serde_json::json!({
            "dir": out,
            "bake": "CesiumMan/CesiumMan.rigbake",
            "path": path,
            "size": SIZE,
            "others": [{"clip": 0, "time": c.info.frame_time(b), "offset": [offset.x, offset.y, offset.z]}],
            "shots": [{"clip": 0, "time": c.info.frame_time(a), "camera": camera_json(&camera), "out": shot}],
        });
        shots_ok(
            &binary,
            &icd,
            &jobs,
            &tmp.path().join(format!("{path}.json")),
            path,
        );
        let mask = common::alpha_mask(&shot).2;
        let (score, area) = iou(&mask, &render(&both, &topology, &camera).covered);
        // Both at the first instance's state: what one shared slot draws.
        let mut same = scene::pose(&loaded, &topology, choice, Producer::Bake, 0, a);
        for m in &mut same {
            for p in &mut m.positions {
                *p += offset;
            }
        }
        let alike: Vec<_> = first.iter().chain(&same).cloned().collect();
        let (shared, _) = iou(&mask, &render(&alike, &topology, &camera).covered);
        rigbake_fixtures::testkit::notice(&format!(
            "bevy_rigbake two CesiumMan instances ({path}): IoU {score:.4} over {area} pixels (both in one state: {shared:.4})"
        ));
        assert!(
            score >= MIN_IOU && area > 500,
            "{path}: IoU {score:.4} over {area} pixels"
        );
        assert!(
            shared < MIN_IOU,
            "{path}: the two states look alike ({shared:.4}): the test cannot tell"
        );
    }
}

/// Knight baked with its props as anchors (`--props anchors`) and its
/// clips in place (`--root-motion extract`), played by bevy_rigbake with
/// the props on their anchor tracks and root motion moving the instance,
/// looks like Knight baked the default way (props bound to their joints in
/// the bone texture, the motion kept in the textures) in the preview: two
/// independent routes to the same silhouette. Both of bevy_rigbake's
/// paths; each shot also differs from the anchored bake's own preview (no
/// props, in place), so neither the props nor the motion can go missing
/// unseen.
#[test]
fn bevy_rigbake_draws_knight_props_on_anchors_and_moves_it_by_root_motion() {
    let test = "bevy_rigbake_draws_knight_props_on_anchors_and_moves_it_by_root_motion";
    let Some(models) = shared_models(test) else {
        return;
    };
    let Some((binary, icd)) = shots_binary(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let model = models.join("kaykit/Knight.glb");
    let clips = [
        "--fps",
        "15",
        "--clip",
        "1H_Melee_Attack_Chop",
        "--clip",
        "Dodge_Backward",
    ];
    let anchored_dir = tmp.path().join("anchored");
    let mut flags = clips.to_vec();
    flags.extend([
        "--props",
        "anchors",
        "--root-motion",
        "extract",
        "--vat",
        "--normals",
    ]);
    let anchored = bake_and_load(&model, &anchored_dir, &flags);
    // The props' meshes come from the source model beside the bake.
    std::fs::copy(&model, anchored_dir.join("Knight/Knight.glb")).unwrap();
    let bound = bake_and_load(&model, &tmp.path().join("bound"), &clips);
    let bound_topology = Topology::new(&bound, PathChoice::Bones);
    // The anchored bake's bone path: its weights hold no props.
    let anchored_topology = Topology::new(&anchored, PathChoice::Bones);
    let mut shots = Vec::new();
    let mut expected = Vec::new();
    for (name, at) in [("1H_Melee_Attack_Chop", 0.5), ("Dodge_Backward", 0.7)] {
        let clip = bound.clips.iter().position(|c| c.name == name).unwrap();
        let c = &bound.clips[clip];
        let k = (f64::from(c.info.frames) * at) as u32;
        let pose = scene::pose(
            &bound,
            &bound_topology,
            PathChoice::Bones,
            Producer::Bake,
            clip,
            k,
        );
        let camera = fit_camera(std::slice::from_ref(&pose), SIZE);
        // Knight's material is double-sided (glTF `doubleSided`), which
        // Bevy honours on the props (the cape is one plane) and the CPU
        // preview, culling back faces, does not: draw both faces.
        let pose: Vec<_> = pose
            .iter()
            .cloned()
            .chain(pose.iter().map(|p| scene::PosedMesh {
                mirrored: !p.mirrored,
                ..p.clone()
            }))
            .collect();
        let clip_anchored = anchored.clips.iter().position(|c| c.name == name).unwrap();
        let without = scene::pose(
            &anchored,
            &anchored_topology,
            PathChoice::Bones,
            Producer::Bake,
            clip_anchored,
            k,
        );
        expected.push((
            format!("Knight {name} frame {k}"),
            render(&pose, &bound_topology, &camera).covered,
            render(&without, &anchored_topology, &camera).covered,
        ));
        shots.push((clip_anchored, c.info.frame_time(k), camera));
    }
    let mut failures = Vec::new();
    for path in ["vat", "bones"] {
        let jobs = serde_json::json!({
            "dir": anchored_dir,
            "bake": "Knight/Knight.rigbake",
            "path": path,
            "root_motion": true,
            "size": SIZE,
            "shots": shots.iter().enumerate().map(|(i, (clip, time, camera))| serde_json::json!({
                "clip": clip,
                "time": time,
                "walk": true,
                "camera": camera_json(camera),
                "out": tmp.path().join(format!("{path}{i}.png")),
            })).collect::<Vec<_>>(),
        });
        shots_ok(
            &binary,
            &icd,
            &jobs,
            &tmp.path().join(format!("{path}.json")),
            &format!("Knight {path}"),
        );
        for (i, (what, covered, without)) in expected.iter().enumerate() {
            let (_, _, mask) = common::alpha_mask(&tmp.path().join(format!("{path}{i}.png")));
            let (score, area) = iou(&mask, covered);
            let (bare, _) = iou(&mask, without);
            rigbake_fixtures::testkit::notice(&format!(
                "bevy_rigbake {what} ({path}): IoU {score:.4} over {area} pixels (against the anchored bake without props or motion: {bare:.4})"
            ));
            if area < 500 || score < MIN_IOU || bare > 0.97 {
                failures.push(format!(
                    "{what} ({path}): IoU {score:.4} over {area} pixels, {bare:.4} without props or motion"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn bevy_rigbake_refuses_a_file_that_is_not_a_container() {
    let test = "bevy_rigbake_refuses_a_file_that_is_not_a_container";
    let Some((binary, icd)) = shots_binary(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.rigbake"),
        b"not a rigbake container at all",
    )
    .unwrap();
    let jobs = serde_json::json!({
        "dir": tmp.path(),
        "bake": "bad.rigbake",
        "size": 32,
        "shots": [{"clip": 0, "time": 0.0, "out": tmp.path().join("x.png"),
                   "camera": {"right": [1, 0, 0], "up": [0, 1, 0], "forward": [0, 0, -1],
                              "center": [0, 0, 0], "half_extent": 1}}],
    });
    let run = run_shots(&binary, &icd, &jobs, &tmp.path().join("jobs.json"));
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("loading failed") && err.contains("bad.rigbake"),
        "{err}"
    );
    assert!(!tmp.path().join("x.png").exists());
}

/// The `crowd` example (integrations/bevy/examples/crowd.rs), headless,
/// plays every shared model that bakes, on both paths where the bake has
/// them: it loads all 17 bakes of a folder, stands each once per path in
/// its grid cell, plays a few frames and reports the pixels each instance
/// drew in its cell. Every bake must load, every skinned model stand on
/// both paths (the others on the VAT path), and every instance draw.
#[test]
fn the_crowd_example_plays_every_shared_model_on_both_paths() {
    let test = "the_crowd_example_plays_every_shared_model_on_both_paths";
    let Some(models) = shared_models(test) else {
        return;
    };
    let Some((binary, icd)) = bevy_binary(test, "RIGBAKE_BEVY_CROWD", "examples/crowd") else {
        return;
    };
    let models: Vec<PathBuf> = rigbake_fixtures::testkit::models::model_files(&models)
        .into_iter()
        .filter(|m| !m.to_string_lossy().contains("unsupported"))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bakes");
    // 10 fps keeps BrainStem's textures small; the example plays any rate.
    let r = common::bake(&models, &out, &["--vat", "--fps", "10"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let started = std::time::Instant::now();
    let run = Command::new(&binary)
        .arg(&out)
        .args(["--headless"])
        .arg(tmp.path().join("crowd.png"))
        .args(["--frames", "5", "--size", "512"])
        .env("VK_ICD_FILENAMES", &icd)
        .env("WGPU_BACKEND", "vulkan")
        .env("RUST_LOG", "warn,wgpu=error,naga=warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "crowd failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    rigbake_fixtures::testkit::notice(&format!(
        "crowd example: {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let mut drawn = std::collections::BTreeMap::new();
    for line in stdout.lines().filter_map(|l| l.strip_prefix("crowd: ")) {
        if let Some((who, px)) = line.split_once(": ")
            && let Some(px) = px.strip_suffix(" pixels")
        {
            drawn.insert(who.to_owned(), px.parse::<usize>().unwrap());
        }
    }
    let mut bakes = 0;
    for m in &models {
        let stem = m.file_stem().unwrap().to_str().unwrap();
        let container = out.join(stem).join(format!("{stem}.rigbake"));
        if !container.is_file() {
            continue; // no animation: the bake skips it
        }
        bakes += 1;
        let skinned = !rigbake_fixtures::testkit::models::UNSKINNED.contains(&stem);
        let paths: &[&str] = if skinned { &["vat", "bones"] } else { &["vat"] };
        for path in paths {
            let who = format!("{stem}/{stem}.rigbake {path}");
            let px = drawn.get(&who).copied();
            assert!(
                px.is_some_and(|px| px > 20),
                "{who}: drew {px:?} pixels\n{stdout}"
            );
        }
    }
    assert_eq!(bakes, 17, "every animated shared model baked");
    assert_eq!(
        drawn.len(),
        drawn.keys().filter(|k| k.contains(".rigbake ")).count()
    );
}
