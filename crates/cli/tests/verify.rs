//! `rigbake verify`: bakes of the fixtures and of every shared model play
//! back through the runtime reference within tolerance of direct
//! evaluation; lossy bakes stay within their recorded errors; damaged
//! bakes, wrong sources and bad arguments give the documented exit codes.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use common::{bake, model_files, read_exr, rigbake, shared_models};
use serde_json::Value;

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn container(out: &Path, model: &Path) -> PathBuf {
    let name = stem(model);
    out.join(&name).join(format!("{name}.rigbake"))
}

/// Runs `rigbake verify FILE --source MODEL --json` with extra flags;
/// returns the exit code and the parsed report (when one was printed).
fn verify(file: &Path, source: Option<&Path>, flags: &[&str]) -> (i32, Option<Value>, String) {
    let mut args: Vec<&OsStr> = vec!["verify".as_ref(), file.as_os_str(), "--json".as_ref()];
    if let Some(s) = source {
        args.extend(["--source".as_ref(), s.as_os_str()]);
    }
    args.extend(flags.iter().map(OsStr::new));
    let out = rigbake(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = serde_json::from_slice(&out.stdout).ok();
    (out.status.code().unwrap_or(-1), report, stderr)
}

fn clips(report: &Value, output: &str) -> Vec<Value> {
    report["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["output"] == output)
        .unwrap_or_else(|| panic!("no {output} output in {report}"))["clips"]
        .as_array()
        .unwrap()
        .clone()
}

fn outputs(report: &Value) -> Vec<String> {
    report["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["output"].as_str().unwrap().to_owned())
        .collect()
}

/// f32 outputs: every clip's largest position error at frame times is below
/// 1e-5 of the diagonal (the acceptance bound; measured values are about
/// 1e-7, the rounding of f32 matrices and arithmetic), and normals within
/// 0.01 degrees (measured: about 1e-5).
fn assert_exact(report: &Value, what: &str) {
    assert_eq!(report["pass"], true, "{what}: {report:#}");
    for output in outputs(report) {
        for c in clips(report, &output) {
            let f = &c["frames"];
            let rel = f["position_max_relative"].as_f64().unwrap();
            assert!(rel < 1e-5, "{what} {output} {}: {rel}", c["clip"]);
            if let Some(n) = f["normal_max_degrees"].as_f64() {
                assert!(n < 0.01, "{what} {output} {}: normal {n}", c["clip"]);
            }
            assert!(f["samples"].as_u64().unwrap() >= 1);
        }
    }
}

#[test]
fn fixtures_play_back_exactly_on_both_paths() {
    let models: Vec<PathBuf> = [
        "tentacle.glb",
        "two_skins.glb",
        "eight_influences.gltf",
        "hierarchy.gltf",
        "spec_worked_example.glb",
    ]
    .map(rigbake_fixtures::fixture)
    .to_vec();
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &models,
        out.path(),
        &[
            "--vat",
            "--format",
            "exr32",
            "--normals",
            "--max-influences",
            "8",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for m in &models {
        let (code, report, stderr) = verify(&container(out.path(), m), Some(m), &[]);
        let report = report.unwrap_or_else(|| panic!("{}: {stderr}", m.display()));
        assert_eq!(code, 0, "{}: {report:#}", m.display());
        assert_exact(&report, &stem(m));
        assert_eq!(outputs(&report), ["bones", "vat"]);
    }
    // The tentacle's looping wave: mid-frame errors are reported (the cost
    // of 30 fps), larger than the frame errors, and do not fail the run.
    let (_, report, _) = verify(&container(out.path(), &models[0]), Some(&models[0]), &[]);
    let wave = &clips(&report.unwrap(), "bones")[0];
    assert_eq!(wave["clip"], "wave");
    let mid = wave["mid"]["position_max_relative"].as_f64().unwrap();
    assert!(mid > 1e-4, "mid-frame error {mid} measures the sampling");
    assert_eq!(
        wave["mid"]["samples"], 60,
        "one midpoint per frame interval"
    );
}

#[test]
fn clip_ranges_renames_and_blends_play_back_exactly() {
    // The example manifest bakes the tentacle with a split clip (frame and
    // second ranges), a renamed clip and three blends; verify evaluates each
    // from its recorded origin and the VAT is lossless (exr32) here.
    let manifest = rigbake_fixtures::fixture("rigbake.toml");
    let out = tempfile::tempdir().unwrap();
    let r = rigbake(&[
        "bake".as_ref(),
        "--manifest".as_ref(),
        manifest.as_os_str(),
        "--out".as_ref(),
        out.path().as_os_str(),
        "--format".as_ref(),
        "exr32".as_ref(),
        "--quiet".as_ref(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let source = rigbake_fixtures::fixture("tentacle.glb");
    let file = out.path().join("tentacle/tentacle.rigbake");
    let (code, report, stderr) = verify(&file, Some(&source), &[]);
    let report = report.unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(code, 0, "{report:#}");
    assert_exact(&report, "tentacle (manifest)");
    let names: Vec<String> = clips(&report, "bones")
        .iter()
        .map(|c| c["clip"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "wave_first_half",
            "wave_end",
            "curl_loop",
            "wave+curl@0",
            "wave+curl@0.5",
            "wave+curl@1"
        ]
    );
    assert_eq!(outputs(&report), ["bones", "vat"]);
}

#[test]
fn text_report_and_source_beside_the_container() {
    // Baked from a copy that is then deleted, so the source the container
    // records (relative to itself) is gone.
    let fixture = rigbake_fixtures::fixture("tentacle.glb");
    let models = tempfile::tempdir().unwrap();
    let model = models.path().join("tentacle.glb");
    std::fs::copy(&fixture, &model).unwrap();
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model), out.path(), &[]);
    assert!(r.status.success());
    let file = container(out.path(), &model);
    std::fs::remove_file(&model).unwrap();
    // No --source, the recorded source missing and no model beside the
    // container: a usage error.
    let r = rigbake(&["verify".as_ref(), file.as_os_str()]);
    assert_eq!(r.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("tentacle.glb") && stderr.contains("--source"),
        "{stderr}"
    );
    // The recorded file name beside the container is found.
    std::fs::copy(&fixture, file.with_file_name("tentacle.glb")).unwrap();
    let r = rigbake(&["verify".as_ref(), file.as_os_str()]);
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("bones: 1 primitive(s)"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("wave") && l.ends_with("ok")),
        "{stdout}"
    );
    assert!(stdout.contains("PASS: 2 clip check(s)"), "{stdout}");
    // Bad arguments.
    for flags in [
        &["--stride", "0"][..],
        &["--clip", "nope"],
        &["--tolerance", "-1"],
    ] {
        let (code, _, stderr) = verify(&file, None, flags);
        assert_eq!(code, 2, "{flags:?}: {stderr}");
    }
    // --clip narrows the check.
    let (code, report, _) = verify(&file, None, &["--clip", "curl"]);
    assert_eq!(code, 0);
    let only: Vec<Value> = clips(&report.unwrap(), "bones");
    assert_eq!(only.len(), 1);
    assert_eq!(only[0]["clip"], "curl");
}

#[test]
fn flipped_matrices_fail_verification() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model), out.path(), &[]);
    assert!(r.status.success());
    let file = container(out.path(), &model);
    let texture = file.with_file_name("bones.skin0.exr");
    // Swap the matrices of joints 2 and 5 in every row (mat4: 4 texels each).
    let mut img = read_exr(&texture);
    for row in 0..img.height {
        for t in 0..16 {
            let a = row * img.width * 4 + 2 * 16 + t;
            let b = row * img.width * 4 + 5 * 16 + t;
            img.data.swap(a, b);
        }
    }
    let mut bytes = std::io::Cursor::new(Vec::new());
    rigbake_format::texture::exr::write(
        &mut bytes,
        &rigbake_format::texture::RgbaImage {
            width: img.width,
            height: img.height,
            data: &img.data,
        },
        rigbake_format::texture::Precision::F32,
    )
    .unwrap();
    std::fs::write(&texture, bytes.into_inner()).unwrap();
    let (code, report, stderr) = verify(&file, Some(&model), &[]);
    assert_eq!(code, 1, "{stderr}");
    let report = report.unwrap();
    assert_eq!(report["pass"], false);
    // The checksum mismatch is reported, and the numbers show the damage.
    let problems = report["problems"].to_string();
    assert!(problems.contains("bones.skin0.exr"), "{problems}");
    for c in clips(&report, "bones") {
        assert_eq!(c["pass"], false, "{c:#}");
        let rel = c["frames"]["position_max_relative"].as_f64().unwrap();
        assert!(rel > 1e-2, "swapped joints move vertices: {rel}");
        let failures = c["failures"].to_string();
        assert!(
            failures.contains("position error at frame times"),
            "{failures}"
        );
    }
}

#[test]
fn source_hash_and_mid_frame_tolerance() {
    let model = rigbake_fixtures::fixture("two_joint.gltf");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--vat", "--format", "exr32"],
    );
    assert!(r.status.success());
    let file = container(out.path(), &model);
    // The same model with a trailing newline: another file to the hash.
    let edited = out.path().join("two_joint.gltf");
    let mut text = std::fs::read(&model).unwrap();
    text.push(b'\n');
    std::fs::write(&edited, text).unwrap();
    let (code, report, _) = verify(&file, Some(&edited), &[]);
    assert_eq!(code, 1);
    let report = report.unwrap();
    assert_eq!(report["source"]["sha256_matches"], false);
    assert!(
        report["problems"]
            .to_string()
            .contains("--allow-source-mismatch")
    );
    let (code, report, stderr) = verify(&file, Some(&edited), &["--allow-source-mismatch"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("warning"), "{stderr}");
    assert_exact(&report.unwrap(), "two_joint (edited source)");
    // Mid-frame errors fail only when a mid-frame tolerance is asked for.
    let (code, _, _) = verify(&file, Some(&model), &["--mid-tolerance", "1e-12"]);
    assert_eq!(code, 1, "turn_linear moves between frames");
    let (code, _, _) = verify(&file, Some(&model), &["--mid-tolerance", "0.5"]);
    assert_eq!(code, 0);
}

/// Shared models (skipping BrainStem's Draco copy, verified in compressed.rs).
fn shared(test: &str) -> Option<Vec<PathBuf>> {
    let dir = shared_models(test)?;
    Some(
        model_files(&dir)
            .into_iter()
            .filter(|m| !m.to_string_lossy().contains("unsupported"))
            .collect(),
    )
}

#[test]
fn every_shared_model_plays_back_within_tolerance() {
    let Some(models) = shared("every_shared_model_plays_back_within_tolerance") else {
        return;
    };
    // 15 fps halves the textures' size (and CI time); verification does not
    // depend on the rate. Every 8th frame (and the last) of every clip.
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        &models,
        out.path(),
        &["--vat", "--format", "exr32", "--normals", "--fps", "15"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut checked = 0;
    for m in &models {
        let file = container(out.path(), m);
        if !file.is_file() {
            continue; // props without animation: skipped by the bake
        }
        let (code, report, stderr) = verify(&file, Some(m), &["--stride", "8"]);
        let report = report.unwrap_or_else(|| panic!("{}: {stderr}", m.display()));
        assert_eq!(code, 0, "{}: {report:#}", m.display());
        assert_exact(&report, &stem(m));
        checked += 1;
    }
    assert_eq!(checked, 17, "every animated shared model was verified");
}

#[test]
fn lossy_bakes_stay_within_their_recorded_errors() {
    let mut cases: Vec<(Vec<PathBuf>, Vec<&str>)> = vec![(
        vec![rigbake_fixtures::fixture("eight_influences.gltf")],
        vec![
            "--max-influences",
            "3",
            "--precision",
            "f16",
            "--vat",
            "--format",
            "png16",
            "--normals",
        ],
    )];
    if let Some(dir) = shared_models("lossy_bakes_stay_within_their_recorded_errors (shared part)")
    {
        cases.push((
            [
                "khronos/CesiumMan.glb",
                "threejs/RobotExpressive.glb",
                "khronos/Fox.glb",
            ]
            .map(|m| dir.join(m))
            .to_vec(),
            vec![
                "--precision",
                "f16",
                "--vat",
                "--format",
                "png16",
                "--normals",
                "--fps",
                "15",
            ],
        ));
        cases.push((
            [
                "raylib/girl.glb",
                "khronos/AnimatedMorphCube.glb",
                "khronos/RiggedSimple.gltf",
            ]
            .map(|m| dir.join(m))
            .to_vec(),
            vec![
                "--layout",
                "mat3x4",
                "--sampling",
                "even-spread",
                "--max-influences",
                "1",
                "--vat",
                "--format",
                "exr16",
                "--normals",
                "--direction-encoding",
                "bounds",
                "--power-of-two",
            ],
        ));
    }
    for (models, flags) in cases {
        let out = tempfile::tempdir().unwrap();
        let r = bake(&models, out.path(), &flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        for m in &models {
            // The influences these bakes drop are a recorded loss, accepted
            // here (dropped_influences_fail_unless_the_recorded_loss_is_accepted
            // checks that it fails otherwise).
            let (code, report, stderr) = verify(
                &container(out.path(), m),
                Some(m),
                &["--stride", "4", "--accept-recorded-loss"],
            );
            let report = report.unwrap_or_else(|| panic!("{}: {stderr}", m.display()));
            assert_eq!(code, 0, "{} {flags:?}: {report:#}", m.display());
            for output in outputs(&report) {
                for c in clips(&report, &output) {
                    let f = &c["frames"];
                    // Within the recorded bounds plus 1e-5 of the diagonal...
                    let bound = f["position_bound_relative"].as_f64().unwrap();
                    let loss = f["position_loss_relative"].as_f64().unwrap();
                    let error = f["position_max_relative"].as_f64().unwrap();
                    assert!(
                        error <= bound + loss + 1e-5,
                        "{} {output}: {c:#}",
                        m.display()
                    );
                    // ...and the bounds are real: these bakes lose something.
                    assert!(bound + loss > 0.0, "{} {output}: {c:#}", m.display());
                }
            }
        }
    }
}

#[test]
fn a_damaged_vat_texture_fails_verification() {
    // A VAT positions texture rewritten as a valid PNG whose x samples are
    // mirrored within their bounds: it decodes, but every vertex is in the
    // wrong place. Verification reports the checksum and the error.
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--vat", "--format", "png16", "--normals"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let file = container(out.path(), &model);
    let (code, report, stderr) = verify(&file, Some(&model), &[]);
    assert_eq!(code, 0, "undamaged: {stderr} {report:?}");
    let vat = rigbake_format::container::Container::open(&file)
        .unwrap()
        .records()
        .vat
        .as_ref()
        .expect("a VAT record")
        .clone();
    let positions = vat
        .textures
        .iter()
        .find(|t| t.stream == rigbake_format::meta::VatStream::Positions)
        .expect("a positions texture");
    let texture = file.with_file_name(&positions.name);
    let bytes = std::fs::read(&texture).unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
    let channels = info.color_type.samples();
    let texel = 2 * channels;
    for t in buf[..info.buffer_size()].chunks_exact_mut(texel) {
        let x = u16::from_be_bytes([t[0], t[1]]);
        t[..2].copy_from_slice(&(65535 - x).to_be_bytes());
    }
    let mut encoded = Vec::new();
    {
        let mut e = png::Encoder::new(&mut encoded, info.width, info.height);
        e.set_color(info.color_type);
        e.set_depth(png::BitDepth::Sixteen);
        let mut w = e.write_header().unwrap();
        w.write_image_data(&buf[..info.buffer_size()]).unwrap();
    }
    std::fs::write(&texture, encoded).unwrap();

    let (code, report, stderr) = verify(&file, Some(&model), &[]);
    assert_eq!(code, 1, "{stderr}");
    let report = report.unwrap_or_else(|| panic!("no report: {stderr}"));
    assert_eq!(report["pass"], false);
    let problems = report["problems"].to_string();
    assert!(problems.contains(&positions.name), "{problems}");
    let vat_output = outputs(&report)
        .into_iter()
        .find(|o| o != "bones")
        .unwrap_or_else(|| panic!("no VAT output in {report:#}"));
    let vat_clips = clips(&report, &vat_output);
    assert!(!vat_clips.is_empty());
    for c in vat_clips {
        assert_eq!(c["pass"], false, "{c:#}");
        let rel = c["frames"]["position_max_relative"].as_f64().unwrap();
        assert!(rel > 1e-2, "mirrored x moves vertices: {rel}");
    }
    // The bone texture was not touched: it still passes.
    for c in clips(&report, "bones") {
        assert_eq!(c["pass"], true, "{c:#}");
    }
}

/// The documented fold addressing (formats/bone-matrix-texture.md,
/// "Folding"), written from the format description: texel `(x, 0)` of
/// timeline row `r` is at `(b * block_width + x, r mod rows_per_block)` with
/// `b = r div rows_per_block` (one page).
fn folded_texel(fold: &rigbake_format::meta::FoldMeta, x: usize, r: usize) -> (usize, usize) {
    let per_block = fold.rows_per_block as usize;
    let b = r / per_block;
    assert_eq!(fold.pages, 1);
    (b * fold.block_width as usize + x, r % per_block)
}

#[test]
fn knight_at_120_fps_folds_and_verifies() {
    // 11,044 rows at 120 fps: over the default 8192, so the bone texture and
    // anchors.exr fold into column blocks. Each folded texel must equal the
    // unfolded bake's (at a maximum size that fits) at the documented
    // address, and `verify` must play the folded bake back exactly.
    let Some(dir) = shared_models("knight_at_120_fps_folds_and_verifies") else {
        return;
    };
    let model = dir.join("kaykit/Knight.glb");
    let flags = ["--fps", "120", "--anchor", "handslot.r", "--anchors-exr"];
    let folded = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model), folded.path(), &flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let unfolded = tempfile::tempdir().unwrap();
    let mut big = flags.to_vec();
    big.extend(["--max-texture-size", "16384"]);
    let r = bake(std::slice::from_ref(&model), unfolded.path(), &big);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));

    let file = container(folded.path(), &model);
    let c = rigbake_format::container::Container::open(&file).unwrap();
    let rows: usize = c.metadata().clips.iter().map(|c| c.frames as usize).sum();
    assert!(rows > 8192, "{rows} rows");
    let layout = c
        .records()
        .layout
        .as_ref()
        .expect("a layout record")
        .clone();
    let tex = &c.metadata().textures[0];
    assert!(tex.height <= 8192 && tex.width <= 8192);
    let bones_fold = layout
        .folds
        .iter()
        .find(|f| f.texture == rigbake_format::meta::FoldedTexture::Bones(0))
        .expect("the bone texture is folded");
    assert_eq!(bones_fold.blocks_per_page, 2);
    let anchor_fold = layout
        .folds
        .iter()
        .find(|f| f.texture == rigbake_format::meta::FoldedTexture::Anchors)
        .expect("anchors.exr is folded");
    let u =
        rigbake_format::container::Container::open(&container(unfolded.path(), &model)).unwrap();
    assert!(
        u.records()
            .layout
            .as_ref()
            .is_none_or(|l| l.folds.is_empty())
    );
    for (name, fold) in [
        (&tex.name, bones_fold),
        (&"anchors.exr".to_owned(), anchor_fold),
    ] {
        let a = read_exr(&folded.path().join("Knight").join(name));
        let b = read_exr(&unfolded.path().join("Knight").join(name));
        assert_eq!(b.height, rows);
        assert_eq!(b.width, fold.block_width as usize);
        assert_eq!((a.width, a.height), (2 * b.width, rows.div_ceil(2)));
        for r in 0..rows {
            for x in 0..b.width {
                let (fx, fy) = folded_texel(fold, x, r);
                let (at, bt) = ((fy * a.width + fx) * 4, (r * b.width + x) * 4);
                assert_eq!(a.data[at..at + 4], b.data[bt..bt + 4], "{name}: row {r}");
            }
        }
    }
    // Vertices reconstructed from the folded texture the way a shader does
    // (runtime reference) against direct evaluation: the exact bound.
    let (code, report, stderr) = verify(&file, Some(&model), &["--stride", "16"]);
    let report = report.unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(code, 0, "{report:#}");
    assert_exact(&report, "Knight at 120 fps");
}

#[test]
fn dropped_influences_fail_unless_the_recorded_loss_is_accepted() {
    // Issue 19 item 5: eight influences baked with one kept. The bake
    // records its loss; verify reports it beside the error against the
    // source and fails unless the user accepts it.
    let model = rigbake_fixtures::fixture("eight_influences.gltf");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-influences", "1"],
    );
    assert!(r.status.success());
    let file = container(out.path(), &model);
    let (code, report, stderr) = verify(&file, Some(&model), &[]);
    let report = report.unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(code, 1, "{report:#}");
    let bones = clips(&report, "bones");
    let frames = &bones[0]["frames"];
    let (error, loss) = (
        frames["position_max_relative"].as_f64().unwrap(),
        frames["position_loss_relative"].as_f64().unwrap(),
    );
    // One influence of eight is far from the source, and the recorded loss
    // covers the error (it is its bound).
    assert!(
        error > 0.01 && loss >= error * (1.0 - 1e-6),
        "{error} {loss}"
    );
    let failure = bones[0]["failures"][0].as_str().unwrap();
    assert!(failure.contains("--accept-recorded-loss"), "{failure}");
    let (code, report, _) = verify(&file, Some(&model), &["--accept-recorded-loss"]);
    assert_eq!(code, 0, "{:#}", report.unwrap());
    // A bake that keeps every influence records no loss and passes plainly.
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-influences", "8", "--force"],
    );
    assert!(r.status.success());
    let (code, report, _) = verify(&file, Some(&model), &[]);
    let report = report.unwrap();
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        clips(&report, "bones")[0]["frames"]["position_loss_relative"],
        0.0
    );
}
