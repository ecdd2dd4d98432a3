//! Previews: the bake's silhouettes match renders of the same frames
//! evaluated straight from the source glTF (same camera), the same inputs
//! give the same bytes on any thread count, as PNG and as animated PNG,
//! and folding a VAT changes nothing drawn.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use rigbake::playback::{self, Decode, Paths};
use rigbake::preview::scene::{PathChoice, Producer, Topology};
use rigbake::preview::{Plan, fit_camera, pose_cells, render_cells, spaced_frames};
use rigbake_core::timeline::ClipSpec;
use rigbake_types::VatEncoding;

use crate::common::{bake, max_texture_size, on_threads, settings, shared_models, sheet, with_vat};

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
    let vat_normals = |s: &mut rigbake::BakeSettings| {
        with_vat(s);
        s.vat.options.normals = true;
    };
    let mut models = vec![(
        rigbake_fixtures::fixture("tentacle.glb"),
        settings(vat_normals),
    )];
    if let Some(dir) = shared_models("silhouettes_match_renders_of_the_source (shared part)") {
        models.push((
            dir.join("khronos/CesiumMan.glb"),
            settings(|s| {
                vat_normals(s);
                s.vat.encoding = VatEncoding::Png16;
            }),
        ));
        models.push((
            dir.join("khronos/Fox.glb"),
            settings(|s| {
                with_vat(s);
                s.vat.encoding = VatEncoding::Exr32;
            }),
        ));
        models.push((
            dir.join("threejs/RobotExpressive.glb"),
            settings(|s| {
                vat_normals(s);
                s.clips = vec![ClipSpec::whole("Wave"), ClipSpec::whole("Dance")];
            }),
        ));
    }
    for (model, settings) in &models {
        let out = tempfile::tempdir().unwrap();
        bake(model, out.path(), settings).baked();
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

/// An animated PNG of every frame of clip `clip` of `file`, 64 pixels a
/// side, as `rigbake preview --animate CLIP --size 64` draws it.
fn animation(file: &Path, source: &Path, clip: &str) -> Vec<u8> {
    let loaded = playback::load(file, Some(source), Paths::BonesElseVat).unwrap();
    let c = loaded.clips.iter().position(|c| c.name == clip).unwrap();
    let plan = Plan {
        path: PathChoice::Bones,
        cells: (0..loaded.clips[c].info.frames.max(1))
            .map(|f| (c, f))
            .collect(),
        columns: 1,
        size: 64,
    };
    rigbake::preview::picture::picture(&loaded, &plan, Some(c))
        .unwrap()
        .png
}

#[test]
fn previews_are_deterministic_pngs_and_apngs() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let out = tempfile::tempdir().unwrap();
    bake(&model, out.path(), &settings(|_| {})).baked();
    let file = container(out.path(), &model);
    let sheet = |threads: Option<usize>| {
        on_threads(threads, || {
            sheet(&file, Some(&model), PathChoice::Bones, Decode::Rows)
        })
    };
    let a = sheet(None);
    assert_eq!(a, sheet(Some(1)), "same bytes with one thread");
    assert_eq!(a, sheet(Some(2)), "same bytes with two threads");
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
    let bytes = animation(&file, &model, "curl");
    assert_eq!(
        bytes,
        on_threads(Some(1), || animation(&file, &model, "curl"))
    );
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
fn a_folded_vat_previews_like_the_unfolded_one() {
    // Folding moves texels, never changes them: the tentacle's VAT folded
    // into 6 pages (64 texels) draws the same PNG as its unfolded bake.
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let mut drawn = Vec::new();
    for max_size in [None, Some(64)] {
        let s = settings(|s| {
            with_vat(s);
            s.vat.options.normals = true;
            if let Some(n) = max_size {
                max_texture_size(s, n);
            }
        });
        let out = tempfile::tempdir().unwrap();
        bake(&model, out.path(), &s).baked();
        let file = container(out.path(), &model);
        drawn.push(sheet(&file, None, PathChoice::Vat, Decode::Rows));
    }
    assert!(drawn[0] == drawn[1], "the folded bake draws differently");
}
