//! `rigbake preview`: the bake's silhouettes match renders of the same
//! frames evaluated straight from the source glTF (same camera), and the
//! same inputs give the same bytes, as PNG and as animated PNG.

mod common;

use std::ffi::OsStr;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bake, rigbake, shared_models};
use rigbake::playback;
use rigbake::preview::scene::{PathChoice, Producer, Topology};
use rigbake::preview::{Plan, fit_camera, pose_cells, render_cells, spaced_frames};

fn container(out: &Path, model: &Path) -> PathBuf {
    let name = model.file_stem().unwrap().to_string_lossy().into_owned();
    out.join(&name).join(format!("{name}.rigbake"))
}

/// Intersection over union of the covered pixels of every cell, rendering
/// `path` from the bake and from direct evaluation with the bake's camera.
fn silhouette_iou(file: &Path, model: &Path, path: PathChoice, columns: u32) -> (f64, usize) {
    let loaded = playback::load(file, Some(model), playback::Paths::All).unwrap();
    let cells = (0..loaded.clips.len())
        .flat_map(|c| {
            spaced_frames(loaded.clips[c].info.frames, columns)
                .into_iter()
                .map(move |f| (c, f))
        })
        .collect();
    let plan = Plan {
        path,
        cells,
        columns,
        size: 128,
    };
    let topology = Topology::new(&loaded, path);
    let baked = pose_cells(&loaded, &plan, &topology, Producer::Bake);
    let direct = pose_cells(&loaded, &plan, &topology, Producer::Direct);
    let camera = fit_camera(&baked, plan.size);
    let a = render_cells(&baked, &topology, &camera);
    let b = render_cells(&direct, &topology, &camera);
    let (mut both, mut either) = (0usize, 0usize);
    for (fa, fb) in a.iter().zip(&b) {
        for (x, y) in fa.covered.iter().zip(&fb.covered) {
            both += usize::from(*x && *y);
            either += usize::from(*x || *y);
        }
    }
    (both as f64 / either.max(1) as f64, either)
}

/// At frame times the bake reproduces the source to about 1e-7 of the
/// model's size, far below a pixel, so the masks should agree everywhere
/// but at pixel centres lying on an edge; the acceptance bound is 99%.
#[test]
fn silhouettes_match_renders_of_the_source() {
    let mut models = vec![(
        rigbake_fixtures::fixture("tentacle.glb"),
        vec!["--vat", "--normals"],
    )];
    if let Some(dir) = shared_models("silhouettes_match_renders_of_the_source (shared part)") {
        models.push((
            dir.join("khronos/CesiumMan.glb"),
            vec!["--vat", "--normals", "--format", "png16"],
        ));
        models.push((
            dir.join("khronos/Fox.glb"),
            vec!["--vat", "--format", "exr32"],
        ));
        models.push((
            dir.join("threejs/RobotExpressive.glb"),
            vec!["--vat", "--normals", "--clip", "Wave", "--clip", "Dance"],
        ));
    }
    for (model, flags) in &models {
        let out = tempfile::tempdir().unwrap();
        let r = bake(std::slice::from_ref(model), out.path(), flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let file = container(out.path(), model);
        for path in [PathChoice::Bones, PathChoice::Vat] {
            let (iou, pixels) = silhouette_iou(&file, model, path, 4);
            eprintln!(
                "{} {path:?}: IoU {iou} over {pixels} pixels",
                model.display()
            );
            assert!(
                pixels > 1000,
                "{} {path:?}: only {pixels} pixels drawn",
                model.display()
            );
            assert!(iou >= 0.99, "{} {path:?}: IoU {iou}", model.display());
        }
    }
}

fn preview(args: &[&OsStr], threads: Option<&str>) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rigbake"));
    cmd.arg("preview").args(args);
    if let Some(t) = threads {
        cmd.env("RAYON_NUM_THREADS", t);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

#[test]
fn previews_are_deterministic_pngs_and_apngs() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model), out.path(), &[]);
    assert!(r.status.success());
    let file = container(out.path(), &model);
    let sheet = |name: &str, threads: Option<&str>| {
        let png = out.path().join(name);
        let (code, stderr) = preview(
            &[
                file.as_os_str(),
                "--source".as_ref(),
                model.as_os_str(),
                "--out".as_ref(),
                png.as_os_str(),
            ],
            threads,
        );
        assert_eq!(code, 0, "{stderr}");
        std::fs::read(png).unwrap()
    };
    let a = sheet("a.png", None);
    assert_eq!(a, sheet("b.png", Some("1")), "same bytes with one thread");
    assert_eq!(a, sheet("c.png", Some("2")), "same bytes with two threads");
    // Two clips (wave, curl) of 8 frames of 160 px, with 2 px gaps, each
    // row under a 14 px label band (clip name and frame numbers).
    let reader = png::Decoder::new(Cursor::new(&a)).read_info().unwrap();
    let info = reader.info();
    assert_eq!(
        (info.width, info.height),
        (8 * 160 + 9 * 2, 2 * (160 + 14) + 3 * 2)
    );
    assert_eq!(info.color_type, png::ColorType::Rgb);

    // An animated PNG of the 31-frame curl, 1/30 s per frame.
    let apng = out.path().join("curl.png");
    let args: Vec<&OsStr> = vec![
        file.as_os_str(),
        "--source".as_ref(),
        model.as_os_str(),
        "--out".as_ref(),
        apng.as_os_str(),
        "--animate".as_ref(),
        "curl".as_ref(),
        "--size".as_ref(),
        "64".as_ref(),
    ];
    assert_eq!(preview(&args, None).0, 0);
    let bytes = std::fs::read(&apng).unwrap();
    assert_eq!(preview(&args, Some("1")).0, 0);
    assert_eq!(bytes, std::fs::read(&apng).unwrap());
    let mut reader = png::Decoder::new(Cursor::new(&bytes)).read_info().unwrap();
    let actl = reader.info().animation_control.unwrap();
    assert_eq!(actl.num_frames, 31);
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let mut frames = 0;
    while reader.next_frame(&mut buf).is_ok() {
        frames += 1;
        let fctl = reader.info().frame_control.unwrap();
        assert_eq!((fctl.delay_num, fctl.delay_den), (1, 30));
    }
    assert_eq!(frames, 31);
}

#[test]
fn preview_usage_errors() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    // Baked from a copy that is then deleted: the recorded source is gone.
    let models = tempfile::tempdir().unwrap();
    let copy = models.path().join("tentacle.glb");
    std::fs::copy(&model, &copy).unwrap();
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&copy), out.path(), &[]);
    assert!(r.status.success());
    std::fs::remove_file(&copy).unwrap();
    let file = container(out.path(), &model);
    let png = out.path().join("x.png");
    let base: Vec<&OsStr> = vec![file.as_os_str(), "--out".as_ref(), png.as_os_str()];
    // The recorded source is missing and none is beside the container.
    let (code, stderr) = preview(&base, None);
    assert_eq!(code, 2);
    assert!(stderr.contains("--source"), "{stderr}");
    let with_source = |extra: &[&str]| {
        let mut a = base.clone();
        a.extend(["--source".as_ref(), model.as_os_str()]);
        a.extend(extra.iter().map(OsStr::new));
        preview(&a, None)
    };
    assert_eq!(with_source(&["--path", "vat"]).0, 2, "no VAT in this bake");
    assert_eq!(with_source(&["--animate", "nope"]).0, 2);
    assert_eq!(with_source(&["--columns", "0"]).0, 2);
    let (code, _) = with_source(&["--clip", "wave", "--columns", "3"]);
    assert_eq!(code, 0);
    // Huge column counts are refused by the image-size check before any
    // list of cells is sized by them, under a 1 GiB address-space cap
    // (they used to try 16 GiB and abort).
    #[cfg(unix)]
    for columns in ["4294967295", "1000000000"] {
        let mut args: Vec<std::ffi::OsString> = vec!["preview".into()];
        args.extend(base.iter().map(|a| a.to_os_string()));
        args.extend(["--source".into(), model.as_os_str().to_os_string()]);
        args.extend(["--columns".into(), columns.into()]);
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$@\"")
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_rigbake"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--columns {columns}: {stderr}");
        assert!(
            stderr.contains("pixels") && stderr.contains("--columns"),
            "{stderr}"
        );
    }
    let r = rigbake(&["preview".as_ref(), "--help".as_ref()]);
    assert!(String::from_utf8_lossy(&r.stdout).contains("--animate"));
}

#[test]
fn a_folded_vat_previews_like_the_unfolded_one() {
    // Folding moves texels, never changes them: the tentacle's VAT folded
    // into 6 pages (64 texels) draws the same PNG as its unfolded bake.
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let mut drawn = Vec::new();
    for flags in [
        &["--vat", "--normals"][..],
        &["--vat", "--normals", "--max-texture-size", "64"][..],
    ] {
        let out = tempfile::tempdir().unwrap();
        let r = bake(std::slice::from_ref(&model), out.path(), flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let png = out.path().join("preview.png");
        let file = container(out.path(), &model);
        let (code, stderr) = preview(
            &[
                file.as_os_str(),
                "--out".as_ref(),
                png.as_os_str(),
                "--path".as_ref(),
                "vat".as_ref(),
            ],
            None,
        );
        assert_eq!(code, 0, "{stderr}");
        drawn.push(std::fs::read(&png).unwrap());
    }
    assert!(drawn[0] == drawn[1], "the folded bake draws differently");
}
