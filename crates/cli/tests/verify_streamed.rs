//! `verify` streams its VAT textures (issue 34, item 1): loaded with
//! `Decode::Rows`, a bake's EXRs stay on disk and the measurement decodes
//! one window of rows at a time. The verdicts must not move: on every
//! shared model, the streamed measurement gives exactly the numbers
//! (`OutputStats`, compared with `==`, so to the last bit) of the
//! measurement over textures decoded whole by the exr crate's own reader,
//! with windows small enough that every group of samples crosses a window
//! edge. The same holds for half-float and folded (paged) textures, and
//! `preview` draws the same bytes from a window as from the whole
//! texture.

mod common;

use std::path::Path;

use common::{bake, containers, rigbake, shared_models};
use rigbake::playback::{self, Decode, Paths};
use rigbake::verify::{self, Subject};

/// Measures both paths of `container` (whole; then with the VAT path
/// streamed in windows of `window_bytes`) and asserts the same numbers;
/// with `each_alone`, also that each path measured alone gives what it
/// gives beside the other. Returns how many clips were compared (0 when
/// the bake has no VAT path).
fn same_numbers(container: &Path, window_bytes: u64, each_alone: bool) -> usize {
    fn subject(l: &playback::Loaded) -> Subject<'_> {
        Subject {
            model: &l.source.model,
            clips: &l.clips,
        }
    }
    fn paths(l: &playback::Loaded) -> Vec<verify::Path<'_>> {
        l.bones
            .as_ref()
            .map(verify::Path::Bones)
            .into_iter()
            .chain(l.vat.as_ref().map(verify::Path::Vat))
            .collect()
    }
    let whole = playback::load(container, None, Paths::All).unwrap();
    let rows = playback::load_with(container, None, Paths::All, Decode::Rows).unwrap();
    let (Some(a), Some(b)) = (&whole.vat, &rows.vat) else {
        return 0;
    };
    assert!(!a.is_deferred());
    assert!(
        b.is_deferred(),
        "{}: EXR files load deferred",
        container.display()
    );
    let all: Vec<usize> = (0..whole.clips.len()).collect();
    let want = verify::measure(&subject(&whole), &paths(&whole), &all, 1).unwrap();
    let got =
        verify::measure_windowed(&subject(&rows), &paths(&rows), &all, 1, window_bytes).unwrap();
    assert!(
        want.iter()
            .all(|o| o.clips.iter().all(|c| c.frames.samples > 0))
    );
    assert_eq!(got, want, "{}", container.display());
    // Each path alone gives what it gives beside the other (the direct
    // evaluations they share are the same numbers).
    for (k, path) in paths(&whole).into_iter().enumerate().filter(|_| each_alone) {
        let alone = verify::measure(&subject(&whole), &[path], &all, 1).unwrap();
        assert_eq!(alone[0], want[k], "{}", container.display());
    }
    all.len()
}

#[test]
fn streamed_vat_measurement_gives_the_whole_decodes_numbers_on_every_shared_model() {
    let Some(models) = shared_models(
        "streamed_vat_measurement_gives_the_whole_decodes_numbers_on_every_shared_model",
    ) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    // A low frame rate keeps the bakes small; windows of one row make
    // every group of samples its own window.
    bake(
        std::slice::from_ref(&models),
        out.path(),
        &["--vat", "--normals", "--fps", "4"],
    );
    let mut compared = 0;
    for container in containers(out.path()) {
        compared += same_numbers(&container, 1, false);
    }
    assert!(compared >= 10, "only {compared} clips compared");
}

#[test]
fn streamed_half_float_and_folded_textures_and_preview_match_the_whole_decode() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let model = fixtures.join("walker.glb");
    let out = tempfile::tempdir().unwrap();
    // 32-bit floats; then half floats (the default) folded into pages by a
    // small size limit (each page a file of its own).
    for (dir, flags) in [
        ("exr32", &["--vat", "--normals", "--format", "exr32"][..]),
        (
            "folded",
            &["--vat", "--normals", "--max-texture-size", "64"][..],
        ),
    ] {
        let dir = out.path().join(dir);
        let r = bake(std::slice::from_ref(&model), &dir, flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        for container in containers(&dir) {
            assert!(same_numbers(&container, 1, true) > 0);
            assert!(same_numbers(&container, 1 << 30, false) > 0);
            // preview (which decodes the rows it draws) writes the bytes a
            // whole decode gives (the library's `picture` on `load`).
            let png = dir.join("sheet.png");
            let r = rigbake(&[
                "preview".as_ref(),
                container.as_os_str(),
                "--path".as_ref(),
                "vat".as_ref(),
                "--out".as_ref(),
                png.as_os_str(),
            ]);
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            let whole = playback::load(&container, None, Paths::Vat).unwrap();
            let plan = rigbake::preview::Plan {
                path: rigbake::preview::scene::PathChoice::Vat,
                cells: (0..whole.clips.len())
                    .flat_map(|c| {
                        rigbake::preview::spaced_frames(whole.clips[c].info.frames, 8)
                            .into_iter()
                            .map(move |f| (c, f))
                    })
                    .collect(),
                columns: 8,
                size: 160,
            };
            let picture = rigbake::preview::picture::picture(&whole, &plan, None).unwrap();
            assert_eq!(std::fs::read(&png).unwrap(), picture.png);
        }
    }
}

/// A VAT EXR damaged after the bake (cut short, or its blocks zeroed
/// past the header) fails `verify` and `preview` with exit code 1 and a
/// message naming the texture; the header is checked at load, the blocks
/// when their rows are read. Never a panic.
#[test]
fn a_damaged_streamed_exr_fails_naming_the_texture() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let model = fixtures.join("walker.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--vat", "--normals", "--no-weights"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let container = containers(out.path()).remove(0);
    let dir = container.parent().unwrap();
    let name = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".vat.positions.exr"))
        .expect("a positions EXR");
    let texture = dir.join(&name);
    let good = std::fs::read(&texture).unwrap();
    let cut = good[..good.len() / 2].to_vec();
    let mut zeroed = good.clone();
    let from = good.len() / 3;
    zeroed[from..].fill(0);
    for (case, bytes) in [("cut short", cut), ("zeroed", zeroed)] {
        std::fs::write(&texture, &bytes).unwrap();
        let png = out.path().join("sheet.png");
        for args in [
            vec!["verify".as_ref(), container.as_os_str()],
            vec![
                "preview".as_ref(),
                container.as_os_str(),
                "--out".as_ref(),
                png.as_os_str(),
            ],
        ] {
            let r = rigbake(&args);
            let stderr = String::from_utf8_lossy(&r.stderr);
            let stdout = String::from_utf8_lossy(&r.stdout);
            assert_eq!(
                r.status.code(),
                Some(1),
                "{case}: {args:?}: {stderr} {stdout}"
            );
            assert!(
                stderr.contains(&name) || stdout.contains(&name),
                "{case}: {args:?} names the texture: {stderr} {stdout}"
            );
            assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        }
    }
    std::fs::write(&texture, &good).unwrap();
    let r = rigbake(&["verify".as_ref(), container.as_os_str()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
}

/// `verify` evaluates the source a block of vertices at a time, in columns
/// (`PrimitiveDeform::deform_columns`); those are the bits the per-vertex
/// reference (`position_normal`, what `deform` gives) computes, on every
/// mesh of every fixture and shared model, at the rest pose and at a
/// third of every clip, in both normal conventions and in the space of
/// the scene and of the mesh's node.
#[test]
fn columns_are_the_per_vertex_reference_to_the_bit() {
    use rigbake_core::bake::vat::NormalConvention;
    use rigbake_core::eval::sample::{LocalPose, sample_clip};
    use rigbake_core::import::{ImportOptions, import_file};
    use rigbake_core::reference::{
        BlendBlock, ColumnBlock, Columns, DirectGlobals, PrimitiveDeform,
    };

    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files = common::model_files(&fixtures);
    if let Some(dir) = shared_models("columns_are_the_per_vertex_reference_to_the_bit") {
        files.extend(common::model_files(&dir));
    }
    let mut vertices = 0usize;
    for file in files {
        let Ok(model) = import_file(&file, &ImportOptions::default()) else {
            continue;
        };
        let mut poses = vec![LocalPose::rest(&model)];
        for clip in &model.clips {
            let mut pose = LocalPose::rest(&model);
            sample_clip(&model, clip, clip.duration / 3.0, &mut pose);
            poses.push(pose);
        }
        for pose in &poses {
            let mut globals = DirectGlobals::new(&model, pose);
            let (mut block, mut want) = (BlendBlock::boxed(), ColumnBlock::boxed());
            for (node, n) in model.nodes.iter().enumerate() {
                let Some(mesh) = n.mesh else { continue };
                for prim in 0..model.meshes[mesh].primitives.len() {
                    for space in [None, Some(node)] {
                        let d = PrimitiveDeform::new(&model, pose, &mut globals, node, prim, space)
                            .unwrap();
                        for convention in [
                            NormalConvention::InverseTranspose,
                            NormalConvention::BlendedMatrix,
                        ] {
                            let mut columns = Columns::default();
                            d.deform_columns(&mut block, &mut want, convention, &mut columns);
                            assert_eq!(columns.len(), d.vertex_count());
                            for v in 0..d.vertex_count() {
                                let (p, n) = d.position_normal(v, convention);
                                let (cp, cn) = columns.get(v);
                                let bits = |a: glam::DVec3| a.to_array().map(f64::to_bits);
                                assert_eq!(
                                    (bits(cp), bits(cn)),
                                    (bits(p), bits(n)),
                                    "{}: node {node} primitive {prim} vertex {v}",
                                    file.display()
                                );
                            }
                            vertices += d.vertex_count();
                        }
                    }
                }
            }
        }
    }
    assert!(vertices > 1000, "only {vertices} vertices compared");
}
