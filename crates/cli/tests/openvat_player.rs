//! The OpenVAT export (`rigbake vat MODEL --compat openvat`) played by a
//! third-party OpenVAT player: the `bevy_open_vat` crate (crates.io, 0.19,
//! for Bevy 0.19), through its own `RemapInfo` loader, `VatAnimator`
//! component and WGSL shaders, unchanged, on Bevy's glTF and EXR loaders and
//! wgpu. `tools/openvat-player` (a standalone Cargo project with its own
//! lock file) is the app around it: it loads only the export's `<model>.glb`,
//! `<model>_vat.exr` and `<model>-remap_info.json` (no source file), renders
//! offscreen on Mesa's lavapipe and writes PNGs.
//!
//! Fox, CesiumMan and girl (two primitives) are exported; for two clips
//! each, the player draws the model from the CPU preview's orthographic
//! camera (`rigbake::preview::fit_camera`, passed to the player as right /
//! up / forward / centre / half extent) and the silhouette (alpha) is
//! compared with the CPU reference drawing of the source animated by direct
//! evaluation (`Producer::Direct`, no bake involved): intersection over
//! union at least 0.99. Both sides cull back faces (the player's app sets
//! that on the glTF materials before the crate copies them; girl's is
//! double-sided and drew its hair's back faces, 0.94, before).
//!
//! Time: the player is asked for clip time `t = k / framerate` (its clock
//! frozen, `start_time = -t`). `bevy_open_vat` reads the JSON's `startFrame`
//! as a 0-based texture row (`absolute = startFrame + t * framerate`,
//! `openvat_pbr.wgsl` / `openvat_common.wgsl`), while OpenVAT's three.js
//! viewer and Godot add-on (and rigbake's export, docs/openvat.md) number
//! frames from 1: at clip time `t` it shows the clip's frame `k + 1`. The
//! bound applies to the frame the player's code reads (`k + 1`); the overlap
//! with the source at the same time (frame `k`) is printed beside it.
//!
//! Needs the player binary: `RIGBAKE_OPENVAT_PLAYER` names it, else
//! `tools/openvat-player/target/debug/openvat-player` (`cargo build
//! --locked --manifest-path tools/openvat-player/Cargo.toml`), and
//! Mesa's lavapipe (`/usr/share/vulkan/icd.d/lvp_icd.*.json`, selected with
//! `VK_ICD_FILENAMES`). Without them the test is skipped with a message,
//! unless `RIGBAKE_REQUIRE_OPENVAT_PLAYER` is set: then it fails. CI
//! builds the player (`.ci/run`) and sets it: the dev profile without debug
//! information builds in about 6.6 minutes on 2 cores (the release profile
//! took 45.8), and this test then runs in about 25 s.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{iou, shared_models};
use rigbake::playback;
use rigbake::preview::scene::{self, PathChoice, Producer, Topology};
use rigbake::preview::{fit_camera, render};

/// Pixels per side of the compared frames.
const SIZE: u32 = 256;

/// The acceptance bound: the same triangles from the same camera,
/// differing only in rasterisation rules along the outline.
const MIN_IOU: f64 = 0.99;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn required() -> bool {
    std::env::var_os("RIGBAKE_REQUIRE_OPENVAT_PLAYER").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Skips (a notice) or, when required, fails.
fn unavailable(test: &str, why: &str) {
    if required() {
        panic!("{test}: {why}, and RIGBAKE_REQUIRE_OPENVAT_PLAYER is set");
    }
    rigbake_fixtures::testkit::notice(&format!("SKIPPED {test}: {why}"));
}

/// The player binary and lavapipe's ICD file, or `None` after a notice.
fn player(test: &str) -> Option<(PathBuf, PathBuf)> {
    let binary = std::env::var_os("RIGBAKE_OPENVAT_PLAYER")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("tools/openvat-player/target/debug/openvat-player"));
    if !binary.is_file() {
        unavailable(
            test,
            &format!(
                "no OpenVAT player at {} (build it: cargo build --locked \
                 --manifest-path tools/openvat-player/Cargo.toml, or set RIGBAKE_OPENVAT_PLAYER)",
                binary.display()
            ),
        );
        return None;
    }
    let icd = common::lavapipe_icd();
    let Some(icd) = icd else {
        unavailable(
            test,
            "Mesa's lavapipe is not installed (no /usr/share/vulkan/icd.d/lvp_icd.*.json; \
             Debian package mesa-vulkan-drivers)",
        );
        return None;
    };
    Some((binary, icd))
}

/// One compared picture.
struct Case {
    what: String,
    shot: PathBuf,
    /// The CPU reference of the frame the player's code reads.
    read: Vec<bool>,
    /// The CPU reference at the same clip time.
    same_time: Vec<bool>,
}

#[test]
fn bevy_open_vat_plays_the_openvat_export_like_the_source() {
    let test = "bevy_open_vat_plays_the_openvat_export_like_the_source";
    let Some(models) = shared_models(test) else {
        return;
    };
    let Some((binary, icd)) = player(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for (name, file) in [
        ("Fox", "khronos/Fox.glb"),
        ("CesiumMan", "khronos/CesiumMan.glb"),
        ("girl", "raylib/girl.glb"),
    ] {
        let model = models.join(file);
        let out = tmp.path().join(name);
        common::openvat_export(&model, &out);
        let dir = out.join(name);
        // Only the OpenVAT files go to the player's folder.
        let play = tmp.path().join(format!("{name}-play"));
        std::fs::create_dir_all(&play).unwrap();
        for f in [
            format!("{name}.glb"),
            format!("{name}_vat.exr"),
            format!("{name}_vnrm.exr"),
            format!("{name}-remap_info.json"),
        ] {
            std::fs::copy(dir.join(&f), play.join(&f))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.join(&f).display()));
        }
        let remap: serde_json::Value = serde_json::from_slice(
            &std::fs::read(play.join(format!("{name}-remap_info.json"))).unwrap(),
        )
        .unwrap();

        let container = dir.join(format!("{name}.rigbake"));
        let loaded = playback::load(&container, Some(&model), playback::Paths::All)
            .unwrap_or_else(|e| panic!("{}: {e}", container.display()));
        let topology = Topology::new(&loaded, PathChoice::Vat);
        let mut shots = Vec::new();
        for clip in 0..loaded.clips.len().min(2) {
            let c = &loaded.clips[clip];
            assert!(c.info.frames >= 3, "{name} {}: too few frames", c.name);
            let k = c.info.frames / 3;
            let fps = remap["animations"][&c.name]["framerate"]
                .as_f64()
                .unwrap_or_else(|| panic!("{name}: no framerate for {} in {remap}", c.name));
            let pose = |frame| {
                scene::pose(
                    &loaded,
                    &topology,
                    PathChoice::Vat,
                    Producer::Direct,
                    clip,
                    frame,
                )
            };
            let read = pose(k + 1);
            let same = pose(k);
            let camera = fit_camera(std::slice::from_ref(&read), SIZE);
            let read_cover = render(&read, &topology, &camera).covered;
            let same_cover = render(&same, &topology, &camera).covered;
            let shot = tmp.path().join(format!("{name}-{clip}.png"));
            let v = |d: glam::DVec3| serde_json::json!([d.x, d.y, d.z]);
            shots.push(serde_json::json!({
                "clip": c.name,
                "time": k as f64 / fps,
                "camera": {
                    "right": v(camera.right),
                    "up": v(camera.up),
                    "forward": v(camera.forward),
                    "center": v(camera.center),
                    "half_extent": camera.half_extent,
                },
                "out": shot,
            }));
            cases.push(Case {
                what: format!("{name} {} at {k}/{fps} s (frame {})", c.name, k + 1),
                shot,
                read: read_cover,
                same_time: same_cover,
            });
        }
        let jobs = serde_json::json!({
            "dir": play,
            "glb": format!("{name}.glb"),
            "vat": format!("{name}_vat.exr"),
            "remap": format!("{name}-remap_info.json"),
            "size": SIZE,
            "shots": shots,
        });
        let jobs_file = tmp.path().join(format!("{name}-jobs.json"));
        std::fs::write(&jobs_file, serde_json::to_vec_pretty(&jobs).unwrap()).unwrap();
        let started = std::time::Instant::now();
        let run = Command::new(&binary)
            .arg(&jobs_file)
            .env("VK_ICD_FILENAMES", &icd)
            .env("WGPU_BACKEND", "vulkan")
            .env("RUST_LOG", "info,wgpu=error,naga=warn")
            .output()
            .unwrap();
        let log = format!(
            "{}\n{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(run.status.success(), "the player failed on {name}:\n{log}");
        let adapter = log
            .lines()
            .find(|l| l.contains("AdapterInfo"))
            .unwrap_or("(no adapter line)");
        rigbake_fixtures::testkit::notice(&format!(
            "openvat player: {name} in {:.1} s; {}",
            started.elapsed().as_secs_f64(),
            adapter.trim()
        ));
        assert!(
            log.contains("llvmpipe"),
            "{name}: the player did not run on lavapipe (llvmpipe):\n{log}"
        );
    }

    let mut failures = Vec::new();
    for c in &cases {
        let (w, h, mask) = common::alpha_mask(&c.shot);
        assert_eq!((w, h), (SIZE, SIZE), "{}: picture size", c.what);
        let (score, area) = iou(&mask, &c.read);
        let (same, _) = iou(&mask, &c.same_time);
        rigbake_fixtures::testkit::notice(&format!(
            "openvat player {}: IoU {score:.4} over {area} pixels (with the source at the same time: {same:.4})",
            c.what
        ));
        if area < 500 || score < MIN_IOU {
            failures.push(format!("{}: IoU {score:.4} over {area} pixels", c.what));
        }
    }
    assert!(failures.is_empty(), "below {MIN_IOU}: {failures:#?}");
}
