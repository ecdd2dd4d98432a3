//! Vertex animation textures, decoded with the exr and png crates directly
//! (following formats/vat.md, not our writer's code) and compared with an
//! independent direct evaluation of the source model.

mod common;

use std::io::Cursor;
use std::path::{Path, PathBuf};

use common::reference::{clip_of_row, deform, diagonal, mesh_node, pose_at};
use common::{bake, model_files, read_exr, rigbake, shared_models};
use glam::{DVec3, Vec3};
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_format::container::Container;
use rigbake_format::meta::{
    DirectionEncoding, Metadata, VatEncoding, VatMetadata, VatStream, VatTextureMeta,
};

fn vat(models: &[PathBuf], out: &Path, flags: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["vat".as_ref()];
    args.extend(models.iter().map(|m| m.as_os_str()));
    args.extend(["--out".as_ref(), out.as_os_str()]);
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    rigbake(&args)
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

fn open(out: &Path, name: &str) -> (Metadata, VatMetadata) {
    let c = Container::open(&out.join(name).join(format!("{name}.rigbake"))).unwrap();
    (
        c.metadata().clone(),
        c.records().vat.as_ref().expect("a VAT record").clone(),
    )
}

/// Each VAT primitive's first vertex in its texture set (formats/vat.md,
/// "Atlas"): the layout record's, or 0 for every primitive without one.
fn first_vertices(out: &Path, name: &str) -> Vec<usize> {
    let c = Container::open(&out.join(name).join(format!("{name}.rigbake"))).unwrap();
    let count = c
        .records()
        .vat
        .as_ref()
        .expect("a VAT record")
        .primitives
        .len();
    match c.records().layout.as_ref().and_then(|l| l.vat.as_ref()) {
        Some(p) => p.first_vertex.iter().map(|&f| f as usize).collect(),
        None => vec![0; count],
    }
}

/// The documented inverse of the octahedral mapping.
fn octahedral(x: f32, y: f32) -> Vec3 {
    let z = 1.0 - x.abs() - y.abs();
    let t = (-z).max(0.0);
    Vec3::new(x - t * x.signum(), y - t * y.signum(), z).normalize()
}

/// A texture decoded to floats, `floats` per texel (3 or 4).
struct Decoded {
    width: usize,
    height: usize,
    floats: usize,
    values: Vec<f32>,
}

fn decode(dir: &Path, tex: &VatTextureMeta) -> Decoded {
    let file = dir.join(&tex.name);
    let floats = tex.channels as usize;
    match tex.encoding {
        VatEncoding::Exr32 | VatEncoding::Exr16 => {
            let img = read_exr(&file);
            let values = img
                .data
                .chunks_exact(4)
                .flat_map(|px| px[..floats].to_vec())
                .collect();
            Decoded {
                width: img.width,
                height: img.height,
                floats,
                values,
            }
        }
        VatEncoding::Png16 => {
            let bytes = std::fs::read(&file).unwrap();
            let mut reader = png::Decoder::new(Cursor::new(bytes)).read_info().unwrap();
            let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut buf).unwrap();
            assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
            assert_eq!(info.color_type.samples(), floats);
            let samples: Vec<f32> = buf[..info.buffer_size()]
                .chunks_exact(2)
                .map(|b| f32::from(u16::from_be_bytes([b[0], b[1]])) / 65535.0)
                .collect();
            let mut values = Vec::with_capacity(samples.len());
            for texel in samples.chunks_exact(floats) {
                let octa = tex.stream != VatStream::Positions
                    && tex.direction_encoding == DirectionEncoding::Octahedral;
                if octa {
                    let n = octahedral(texel[0] * 2.0 - 1.0, texel[1] * 2.0 - 1.0);
                    values.extend(n.to_array());
                    if floats == 4 {
                        values.push(if texel[3] < 0.5 { -1.0 } else { 1.0 });
                    }
                } else {
                    let b = tex.bounds.expect("bounds for normalised PNG");
                    for (c, q) in texel.iter().enumerate() {
                        values.push(b[0][c] + q * (b[1][c] - b[0][c]));
                    }
                }
            }
            Decoded {
                width: info.width as usize,
                height: info.height as usize,
                floats,
                values,
            }
        }
        // These tests bake EXR and PNG files; 8 and 10-bit samples live in
        // KTX2 and DDS (crates/cli/tests/containers.rs reads those).
        VatEncoding::Unorm8 | VatEncoding::Unorm10 => {
            panic!(
                "{}: a {:?} texture outside KTX2 and DDS",
                file.display(),
                tex.encoding
            )
        }
    }
}

/// The fold of a VAT texture from the layout record (formats/metadata.md,
/// `FoldMeta`): `(rows_per_block, blocks_per_page, pages)`, or one block
/// of every row on one page when it is not folded.
fn vat_fold(out: &Path, name: &str, texture: u32, rows: usize) -> (usize, usize, usize) {
    let c = Container::open(&out.join(name).join(format!("{name}.rigbake"))).unwrap();
    c.records()
        .layout
        .as_ref()
        .and_then(|l| {
            l.folds
                .iter()
                .find(|f| f.texture == rigbake_format::meta::FoldedTexture::Vat(texture))
        })
        .map_or((rows.max(1), 1, 1), |f| {
            (
                f.rows_per_block as usize,
                f.blocks_per_page as usize,
                f.pages as usize,
            )
        })
}

/// Every page of a stream whose first texture is `first`, decoded.
fn decode_pages(dir: &Path, vat: &VatMetadata, first: u32, pages: usize) -> Vec<Decoded> {
    (0..pages)
        .map(|k| decode(dir, &vat.textures[first as usize + k]))
        .collect()
}

/// Worst errors of one bake against the direct evaluation.
#[derive(Debug, Default)]
struct Errors {
    /// Largest position error minus the error the encoding recorded, relative
    /// to the diagonal.
    position_excess: f64,
    /// Largest position error relative to the diagonal.
    position: f64,
    /// Largest recorded position error relative to the diagonal.
    recorded_position: f64,
    /// Largest normal/tangent angle error minus the recorded one, degrees.
    direction_excess: f64,
    /// Primitives checked.
    primitives: usize,
}

/// Compares every baked primitive at every `stride`-th row.
fn check(model_path: &Path, out: &Path, stride: usize) -> Errors {
    let name = stem(model_path);
    let model = import_file(model_path, &ImportOptions::default()).unwrap();
    let (meta, vat) = open(out, &name);
    let dir = out.join(&name);
    let reference = vat.reference_node.as_deref().map(|r| mesh_node(&model, r));
    let mut pose = LocalPose::rest(&model);
    let mut errors = Errors::default();
    let rows = meta
        .clips
        .iter()
        .map(|c| (c.start_row + c.frames) as usize)
        .max()
        .unwrap();
    let firsts = first_vertices(out, &name);
    // An atlas is one set of files for every primitive: each stream's
    // pages are decoded once (BrainStem's 59 primitives share two EXRs).
    let mut decoded: std::collections::HashMap<u32, std::rc::Rc<Vec<Decoded>>> =
        std::collections::HashMap::new();
    let mut pages_of = |first: u32, pages: usize| {
        decoded
            .entry(first)
            .or_insert_with(|| std::rc::Rc::new(decode_pages(&dir, &vat, first, pages)))
            .clone()
    };
    for (k, p) in vat.primitives.iter().enumerate() {
        let first = firsts[k];
        let node = mesh_node(&model, &p.node);
        // Folded sets continue rows in column blocks and pages, addressed
        // as formats/vat.md says (unfolded: one block, one page).
        let (per_block, per_page, pages) = vat_fold(out, &name, p.positions, rows);
        let positions = pages_of(p.positions, pages);
        for page in positions.iter() {
            assert_eq!(
                (page.width, page.height),
                (p.width as usize * per_page, p.height as usize)
            );
        }
        let normals = p
            .normals
            .map(|i| (pages_of(i, pages), &vat.textures[i as usize]));
        let tangents = p
            .tangents
            .map(|i| (pages_of(i, pages), &vat.textures[i as usize]));
        let recorded = vat.textures[p.positions as usize].max_error;
        // Per-primitive diagonal over the checked frames (model units).
        let mut per_row = Vec::new();
        for row in (0..rows).step_by(stride) {
            let (clip, frame) = clip_of_row(&meta.clips, row);
            pose_at(&model, clip, frame, &mut pose);
            per_row.push((
                row,
                deform(&model, &pose, node, p.primitive as usize, reference),
            ));
        }
        let diag = diagonal(
            per_row
                .iter()
                .flat_map(|(_, d)| d.iter().map(|v| v.position)),
        )
        .max(1e-9);
        for (row, deformed) in &per_row {
            for (v, d) in deformed.iter().enumerate() {
                let s = first + v;
                let block = row / per_block;
                let (page, x, y) = (
                    block / per_page,
                    (block % per_page) * p.width as usize + s % p.width as usize,
                    (row % per_block) * p.bands as usize + s / p.width as usize,
                );
                let pos = &positions[page];
                let at = (y * pos.width + x) * pos.floats;
                let got = DVec3::new(
                    f64::from(pos.values[at]),
                    f64::from(pos.values[at + 1]),
                    f64::from(pos.values[at + 2]),
                );
                let e = got.distance(d.position);
                errors.position = errors.position.max(e / diag);
                errors.position_excess = errors.position_excess.max((e - recorded) / diag);
                errors.recorded_position = errors.recorded_position.max(recorded / diag);
                for (decoded, tex, want) in [
                    normals.as_ref().map(|(n, t)| (n, *t, d.normal)),
                    tangents
                        .as_ref()
                        .map(|(n, t)| (n, *t, d.tangent.truncate())),
                ]
                .into_iter()
                .flatten()
                {
                    if want.length() < 0.5 {
                        continue; // degenerate source direction
                    }
                    let decoded = &decoded[page];
                    let at = (y * decoded.width + x) * decoded.floats;
                    let got = DVec3::new(
                        f64::from(decoded.values[at]),
                        f64::from(decoded.values[at + 1]),
                        f64::from(decoded.values[at + 2]),
                    );
                    let angle = got.angle_between(want).to_degrees();
                    errors.direction_excess = errors.direction_excess.max(angle - tex.max_error);
                }
                if let Some((t, _)) = &tangents {
                    let t = &t[page];
                    let at = (y * t.width + x) * 4;
                    assert_eq!(
                        f64::from(t.values[at + 3]).signum(),
                        d.tangent.w.signum(),
                        "handedness"
                    );
                }
            }
        }
        errors.primitives += 1;
    }
    errors
}

/// f32 arithmetic of the bake kernel against the f64 reference: a few ulps
/// of the primitive's size.
const KERNEL_TOLERANCE: f64 = 2e-6;
/// Angle tolerance of the f32 kernel, degrees.
const KERNEL_DEGREES: f64 = 0.01;

#[test]
fn fixtures_at_exr32_match_direct_evaluation() {
    let models: Vec<PathBuf> = [
        "two_joint.gltf",
        "tentacle.glb",
        "hierarchy.gltf",
        "spec_worked_example.glb",
    ]
    .iter()
    .map(|f| rigbake_fixtures::fixture(f))
    .collect();
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        &models,
        out.path(),
        &["--format", "exr32", "--normals", "--tangents"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for m in &models {
        let e = check(m, out.path(), 1);
        assert!(e.primitives > 0);
        assert!(e.position <= KERNEL_TOLERANCE, "{}: {e:?}", m.display());
        assert!(
            e.direction_excess <= KERNEL_DEGREES,
            "{}: {e:?}",
            m.display()
        );
        let (_, vat) = open(out.path(), &stem(m));
        assert!(
            vat.textures.iter().all(|t| t.max_error == 0.0),
            "EXR32 is exact"
        );
    }
}

#[test]
fn lossy_encodings_stay_within_their_recorded_error() {
    let model = rigbake_fixtures::fixture("tentacle.glb");
    for flags in [
        &["--format", "exr16", "--normals"][..],
        &[
            "--format",
            "png16",
            "--normals",
            "--direction-encoding",
            "octahedral",
        ][..],
        &[
            "--format",
            "png16",
            "--normals",
            "--direction-encoding",
            "bounds",
        ][..],
    ] {
        let out = tempfile::tempdir().unwrap();
        let r = vat(std::slice::from_ref(&model), out.path(), flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let e = check(&model, out.path(), 1);
        assert!(e.position_excess <= KERNEL_TOLERANCE, "{flags:?}: {e:?}");
        assert!(e.direction_excess <= KERNEL_DEGREES, "{flags:?}: {e:?}");
        assert!(
            e.recorded_position > 0.0,
            "{flags:?}: a lossy encoding records its error"
        );
    }
}

#[test]
fn every_shared_model_at_png16_is_within_its_recorded_error_below_a_thousandth() {
    let Some(models) = shared_models(
        "every_shared_model_at_png16_is_within_its_recorded_error_below_a_thousandth",
    ) else {
        return;
    };
    let files: Vec<PathBuf> = model_files(&models)
        .into_iter()
        // BrainStem's Draco copy is compared with BrainStem in compressed.rs.
        .filter(|p| !stem(p).contains("draco"))
        .collect();
    let out = tempfile::tempdir().unwrap();
    let r = vat(&files, out.path(), &["--format", "png16", "--normals"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    for f in &files {
        let name = stem(f);
        if !out
            .path()
            .join(&name)
            .join(format!("{name}.rigbake"))
            .exists()
        {
            // Only the static props have nothing that moves.
            let line = stderr
                .lines()
                .find(|l| l.contains(&f.display().to_string()))
                .unwrap_or_default();
            assert!(
                line.contains("skipped") && name.starts_with("greenman_"),
                "{name}: {line}"
            );
            continue;
        }
        let (meta, _) = open(out.path(), &name);
        let rows: usize = meta.clips.iter().map(|c| c.frames as usize).sum();
        // Check at most ~60 rows per model to keep CI fast.
        let e = check(f, out.path(), rows.div_ceil(60));
        eprintln!("{name}: {e:?}");
        assert!(e.position_excess <= KERNEL_TOLERANCE, "{name}: {e:?}");
        assert!(e.direction_excess <= KERNEL_DEGREES, "{name}: {e:?}");
        assert!(
            e.recorded_position < 1e-3,
            "{name}: recorded PNG16 error {e:?}"
        );
    }
}

#[test]
fn simple_morph_matches_hand_computed_weights() {
    // SimpleMorph: v2 = (0.5, 0.5, 0); target 0 moves it by (-1, 1, 0),
    // target 1 by (1, 1, 0); weight keys at t = 0..4: (0,0) (0,1) (1,1) (1,0) (0,0).
    // t = 0.5: w = (0, 0.5): v2 = (1, 1, 0). t = 1.5: w = (0.5, 1): (1, 2, 0).
    // t = 2.5: w = (1, 0.5): (0, 2, 0). v0 and v1 never move.
    let Some(models) = shared_models("simple_morph_matches_hand_computed_weights") else {
        return;
    };
    let model = models.join("khronos/SimpleMorph.gltf");
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        std::slice::from_ref(&model),
        out.path(),
        &["--format", "exr32"],
    );
    assert!(r.status.success());
    let (_, vat) = open(out.path(), "SimpleMorph");
    assert_eq!(vat.reference_node, None, "no skin: the scene root");
    let p = &vat.primitives[0];
    assert!(p.morphed);
    let tex = decode(
        &out.path().join("SimpleMorph"),
        &vat.textures[p.positions as usize],
    );
    let at = |v: usize, row: usize| {
        let i = (row * tex.width + v) * 3;
        [tex.values[i], tex.values[i + 1], tex.values[i + 2]]
    };
    for (row, expected) in [
        (0, [0.5, 0.5, 0.0]),
        (15, [1.0, 1.0, 0.0]),
        (45, [1.0, 2.0, 0.0]),
        (75, [0.0, 2.0, 0.0]),
    ] {
        assert_eq!(at(2, row), expected, "v2 at row {row}");
        assert_eq!(at(0, row), [0.0, 0.0, 0.0]);
        assert_eq!(at(1, row), [1.0, 0.0, 0.0]);
    }
}

#[test]
fn morph_models_bake_with_normals_and_tangents() {
    let Some(models) = shared_models("morph_models_bake_with_normals_and_tangents") else {
        return;
    };
    let files: Vec<PathBuf> = [
        "khronos/AnimatedMorphCube.glb",
        "khronos/MorphStressTest.gltf",
        "khronos/SimpleMorph.gltf",
    ]
    .iter()
    .map(|f| models.join(f))
    .collect();
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        &files,
        out.path(),
        &["--format", "exr32", "--normals", "--tangents"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for f in &files {
        let (_, vat) = open(out.path(), &stem(f));
        assert!(vat.primitives.iter().all(|p| p.morphed), "{}", f.display());
        let e = check(f, out.path(), 3);
        assert!(e.position <= KERNEL_TOLERANCE, "{}: {e:?}", f.display());
        assert!(
            e.direction_excess <= KERNEL_DEGREES,
            "{}: {e:?}",
            f.display()
        );
    }
    let (_, cube) = open(out.path(), "AnimatedMorphCube");
    assert!(
        cube.primitives[0].tangents.is_some(),
        "the cube has tangents"
    );
}

#[test]
fn knight_sword_keeps_its_offset_from_the_hand() {
    // A rigid sword under `handslot.r`: in that joint's frame (taken from the
    // bone texture: joint global = skin matrix * inverse(inverse bind)), a
    // sword vertex read from the VAT must not move.
    let Some(models) = shared_models("knight_sword_keeps_its_offset_from_the_hand") else {
        return;
    };
    let model_path = models.join("kaykit/Knight.glb");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model_path),
        out.path(),
        &[
            "--vat",
            "--format",
            "exr32",
            "--clip",
            "1H_Melee_Attack_Chop",
            "--clip",
            "Walking_A",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (meta, vat) = open(out.path(), "Knight");
    let dir = out.path().join("Knight");
    let model = import_file(&model_path, &ImportOptions::default()).unwrap();
    let skin = &meta.skins[0];
    let j = skin.joints.iter().position(|n| n == "handslot.r").unwrap();
    let bones = read_exr(&dir.join(&meta.textures[skin.texture as usize].name));
    let ibm = model.skins[0].inverse_binds[j];
    let k = vat
        .primitives
        .iter()
        .position(|p| p.node == "1H_Sword")
        .expect("the sword is baked");
    let (sword, first_vertex) = (&vat.primitives[k], first_vertices(out.path(), "Knight")[k]);
    assert_eq!(sword.deformation, rigbake_format::meta::Deformation::Rigid);
    let tex = decode(&dir, &vat.textures[sword.positions as usize]);
    let rows: usize = meta.clips.iter().map(|c| c.frames as usize).sum();
    let mut first: Option<Vec<DVec3>> = None;
    let mut worst = 0.0f64;
    for row in 0..rows {
        let px = |c: usize| {
            let at = (row * bones.width + 4 * j + c) * 4;
            glam::Vec4::from_slice(&bones.data[at..at + 4]).as_dvec4()
        };
        let skin_m = glam::DMat4::from_cols(px(0), px(1), px(2), px(3));
        let to_joint = (skin_m * ibm.inverse()).inverse();
        let local: Vec<DVec3> = (0..sword.vertices as usize)
            .map(|v| {
                let s = first_vertex + v;
                let (x, y) = (
                    s % sword.width as usize,
                    row * sword.bands as usize + s / sword.width as usize,
                );
                let at = (y * tex.width + x) * 3;
                to_joint.transform_point3(Vec3::from_slice(&tex.values[at..at + 3]).as_dvec3())
            })
            .collect();
        match &first {
            None => first = Some(local),
            Some(f) => {
                for (a, b) in f.iter().zip(&local) {
                    worst = worst.max(a.distance(*b));
                }
            }
        }
    }
    // Sword vertices are within ~1 unit of the hand; f32 round trips: 1e-4.
    assert!(
        worst < 1e-4,
        "sword vertices drift by {worst} in the hand's frame"
    );
}

#[test]
fn wrapped_and_padded_layouts_read_back_through_the_documented_addressing() {
    // The tentacle has 204 vertices: at a 128-texel maximum they wrap into 2
    // bands per frame; with power-of-two padding the texture is 128 x 64.
    let model = rigbake_fixtures::fixture("tentacle.glb");
    for (flags, size) in [
        (
            &[
                "--max-texture-size",
                "128",
                "--clip",
                "curl",
                "--format",
                "exr32",
            ][..],
            // 204 vertices in two bands of 102, not 128 and 76.
            (102, 62),
        ),
        (
            &[
                "--max-texture-size",
                "128",
                "--clip",
                "curl",
                "--format",
                "exr32",
                "--power-of-two",
            ][..],
            (128, 64),
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let r = vat(std::slice::from_ref(&model), out.path(), flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let (_, vat) = open(out.path(), "tentacle");
        let p = &vat.primitives[0];
        assert_eq!(
            (p.width, p.bands, p.height),
            (size.0 as u32, 2, size.1 as u32)
        );
        let tex = decode(
            &out.path().join("tentacle"),
            &vat.textures[p.positions as usize],
        );
        assert_eq!((tex.width, tex.height), size);
        let e = check(&model, out.path(), 1);
        assert!(e.position <= KERNEL_TOLERANCE, "{flags:?}: {e:?}");
    }
    // Too small to hold even one frame (204 vertices in 26 bands of 8
    // texels): a clear error, whatever folding does.
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-texture-size", "8"],
    );
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("one frame of 204 vertices takes 26 texture rows of 8 texels, more than the maximum size 8"),
        "{stderr}"
    );
    // One frame (13 bands of 16) per block and page: 362 rows at 120 fps
    // would be 362 pages per stream, over the limit of 256.
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-texture-size", "16", "--fps", "120"],
    );
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains(
            "would fold into 362 pages of 16 x 16 texels per stream, over the limit of 256"
        ),
        "{stderr}"
    );
    assert!(
        std::fs::read_dir(out.path().join("tentacle")).map_or(true, |d| d
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().ends_with(".exr"))),
        "no texture is left behind"
    );
}

#[test]
fn folded_and_paged_vats_read_back_through_the_documented_addressing() {
    // The tentacle (204 vertices; 92 rows at 30 fps, 722 at 240) at small
    // maximum sizes, every texel read back by the documented fold formula
    // and compared with direct evaluation; the unfolded exr32 bake's texels
    // hold the same values (folding moves texels, never changes them).
    let model = rigbake_fixtures::fixture("tentacle.glb");
    // (max size, fps, flags, (rows_per_block, blocks_per_page, pages),
    // rows, EXR files).
    for (max, fps, extra, want, rows, files) in [
        // 722 rows of 204 texels at 500: 2 blocks of 361 rows side by side.
        ("500", "240", &[][..], (361, 2, 1), 722, 2),
        // 128: 2 bands per frame; 64 frames fit a block, one block a page.
        ("128", "30", &[][..], (46, 1, 2), 92, 4),
        // 64: 4 bands; 16 frames a block: 6 pages.
        ("64", "30", &[][..], (16, 1, 6), 92, 12),
        // Power of two below a non-power-of-two maximum: folds within 64.
        ("100", "30", &["--power-of-two"][..], (16, 1, 6), 92, 12),
    ] {
        let unfolded = tempfile::tempdir().unwrap();
        // Positions and normals (the tentacle has no tangents).
        let common = ["--format", "exr32", "--normals", "--fps", fps];
        let r = vat(std::slice::from_ref(&model), unfolded.path(), &common);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let (_, flat) = open(unfolded.path(), "tentacle");
        assert_eq!(flat.textures.len(), 2, "unfolded at the default size");
        let flat_pos = decode(&unfolded.path().join("tentacle"), &flat.textures[0]);
        let out = tempfile::tempdir().unwrap();
        let mut flags = vec!["--max-texture-size", max];
        flags.extend(common);
        flags.extend(extra);
        let r = vat(std::slice::from_ref(&model), out.path(), &flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let dir = out.path().join("tentacle");
        assert_eq!(count_files(&dir, "exr"), files, "{flags:?}");
        let (_, v) = open(out.path(), "tentacle");
        let p = &v.primitives[0];
        assert_eq!(vat_fold(out.path(), "tentacle", p.positions, rows), want);
        assert_eq!(v.textures.len(), files);
        if want.2 > 1 {
            assert!(
                v.textures[1].name.ends_with(".positions.page1.exr"),
                "{}",
                v.textures[1].name
            );
        }
        let e = check(&model, out.path(), 1);
        assert!(e.position <= KERNEL_TOLERANCE, "{flags:?}: {e:?}");
        assert!(e.direction_excess <= KERNEL_DEGREES, "{flags:?}: {e:?}");
        // Same texel values as the unfolded bake.
        let (per_block, per_page, pages) = want;
        let folded = decode_pages(&dir, &v, p.positions, pages);
        for row in 0..rows {
            for s in 0..204usize {
                let block = row / per_block;
                let x = (block % per_page) * p.width as usize + s % p.width as usize;
                let y = (row % per_block) * p.bands as usize + s / p.width as usize;
                let page = &folded[block / per_page];
                let at = (y * page.width + x) * 3;
                let flat_at = (row * flat_pos.width + s) * 3;
                assert_eq!(
                    page.values[at..at + 3],
                    flat_pos.values[flat_at..flat_at + 3],
                    "{flags:?} row {row} vertex {s}"
                );
            }
        }
        // The playback mesh's lookup UV names the set vertex; at row 0 it
        // is in block 0 of page 0, where its first frame's position is.
        let (doc, buffers) = gltf_import(&dir.join(v.playback_file.as_deref().unwrap()));
        let prim = doc.meshes().next().unwrap().primitives().next().unwrap();
        let reader = prim.reader(|b| Some(&buffers[b.index()]));
        let positions: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
        let lookup: Vec<[f32; 2]> = reader.read_tex_coords(1).unwrap().into_f32().collect();
        let page0 = &folded[0];
        for (s, (uv, pos)) in lookup.iter().zip(&positions).enumerate() {
            assert_eq!(common::lookup_vertex(*uv), s);
            let (x, y) = (s % p.width as usize, s / p.width as usize);
            let at = (y * page0.width + x) * 3;
            assert_eq!(&page0.values[at..at + 3], pos, "{flags:?} vertex {s}");
        }
        // `inspect` says how the rows fold.
        let container = dir.join("tentacle.rigbake");
        let r = rigbake(&["inspect".as_ref(), container.as_os_str()]);
        let shown = String::from_utf8_lossy(&r.stdout);
        let line = format!(
            "folded: {} rows per column block of {} x {} texels, {} block{} per page, {} page{} per stream",
            want.0,
            p.width,
            want.0 as u32 * p.bands,
            want.1,
            if want.1 == 1 { "" } else { "s" },
            want.2,
            if want.2 == 1 { "" } else { "s" },
        );
        assert!(shown.contains(&line), "{line} in {shown}");
        // And `rigbake verify` (the runtime reference) agrees.
        let r = rigbake(&["verify".as_ref(), container.as_os_str()]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
    }
}

#[test]
fn playback_mesh_is_valid_gltf_and_addresses_the_vat() {
    let mut models: Vec<PathBuf> = vec![
        rigbake_fixtures::fixture("tentacle.glb"),
        rigbake_fixtures::fixture("hierarchy.gltf"),
    ];
    if let Some(shared) =
        shared_models("playback_mesh_is_valid_gltf_and_addresses_the_vat (shared part)")
    {
        models.extend(
            [
                "kaykit/Knight.glb",
                "threejs/RobotExpressive.glb",
                "khronos/AnimatedMorphCube.glb",
            ]
            .map(|f| shared.join(f)),
        );
    }
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        &models,
        out.path(),
        &["--format", "exr32", "--normals", "--tangents"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for m in &models {
        let name = stem(m);
        let (_, vat) = open(out.path(), &name);
        let dir = out.path().join(&name);
        let file = dir.join(vat.playback_file.as_deref().expect("a playback mesh"));
        if let Some(issues) = common::gltf_validator(&file) {
            assert_eq!(issues["numErrors"], 0, "{name}: {issues}");
            assert_eq!(issues["numWarnings"], 0, "{name}: {issues}");
        }
        let source = import_file(m, &ImportOptions::default()).unwrap();
        let (doc, buffers) = gltf_import(&file);
        assert_eq!(doc.meshes().len(), vat.primitives.len());
        let firsts = first_vertices(out.path(), &name);
        for ((p, mesh), first) in vat.primitives.iter().zip(doc.meshes()).zip(firsts) {
            let prim = mesh.primitives().next().unwrap();
            let reader = prim.reader(|b| Some(&buffers[b.index()]));
            let src = &source.meshes[source.nodes[mesh_node(&source, &p.node)].mesh.unwrap()]
                .primitives[p.primitive as usize];
            let sets = src.tex_coords.len() as u32;
            // Same vertex order and count, same indices and UVs.
            let positions: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
            assert_eq!(positions.len(), p.vertices as usize);
            let indices: Option<Vec<u32>> = reader.read_indices().map(|i| i.into_u32().collect());
            assert_eq!(indices, src.indices, "{name}: indices");
            for s in 0..sets {
                let uv: Vec<[f32; 2]> = reader.read_tex_coords(s).unwrap().into_f32().collect();
                let want: Vec<[f32; 2]> = src.tex_coords[s as usize]
                    .iter()
                    .map(|v| v.to_array())
                    .collect();
                assert_eq!(uv, want, "{name}: TEXCOORD_{s}");
            }
            // The extra set names each vertex's set vertex (format 1.11:
            // `(s mod 2048, s div 2048)`): reading the VAT there at row 0
            // gives the mesh's own (first-frame) position.
            let texels: Vec<[f32; 2]> = reader
                .read_tex_coords(sets)
                .expect("the VAT TEXCOORD set")
                .into_f32()
                .collect();
            let tex = decode(&dir, &vat.textures[p.positions as usize]);
            for (v, (uv, pos)) in texels.iter().zip(&positions).enumerate() {
                let s = first + v;
                assert_eq!(common::lookup_vertex(*uv), s, "{name}: vertex {v}");
                let (x, y) = (s % p.width as usize, s / p.width as usize);
                let at = (y * tex.width + x) * 3;
                assert_eq!(&tex.values[at..at + 3], pos, "{name}: vertex {v}");
            }
            // Materials are kept by reference.
            assert_eq!(prim.material().index(), src.material, "{name}: material");
            if let Some(mi) = src.material {
                let mat = doc.materials().nth(mi).unwrap();
                assert_eq!(mat.name(), Some(source.materials[mi].as_str()));
            }
        }
    }
}

/// Opens a GLB with the gltf crate: document and buffers.
fn gltf_import(file: &Path) -> (gltf::Document, Vec<Vec<u8>>) {
    let g = gltf::Gltf::from_slice(&std::fs::read(file).unwrap()).expect("the gltf crate opens it");
    let blob = g.blob.clone().expect("a BIN chunk");
    (g.document, vec![blob])
}

/// Files with extension `ext` in `dir`.
fn count_files(dir: &Path, ext: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == ext)
        })
        .count()
}

#[test]
fn per_primitive_layout_stays_available_and_matches_direct_evaluation() {
    // two_skins.glb has several moving primitives: the atlas packs them
    // into one texture per stream, the per-primitive layout into one each;
    // both decode (with the documented addressing) to the direct evaluation.
    let model = rigbake_fixtures::fixture("two_skins.glb");
    let base = ["--format", "exr32", "--normals"];
    let atlas = tempfile::tempdir().unwrap();
    let r = vat(std::slice::from_ref(&model), atlas.path(), &base);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let per = tempfile::tempdir().unwrap();
    let mut flags = base.to_vec();
    flags.extend(["--vat-layout", "per-primitive"]);
    let r = vat(std::slice::from_ref(&model), per.path(), &flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (_, a) = open(atlas.path(), "two_skins");
    let (_, p) = open(per.path(), "two_skins");
    assert!(a.primitives.len() > 1, "the fixture has several primitives");
    assert_eq!(a.primitives.len(), p.primitives.len());
    // Atlas: every primitive in the same textures, vertices one after another.
    assert!(
        a.primitives
            .iter()
            .all(|q| q.positions == a.primitives[0].positions)
    );
    let firsts = first_vertices(atlas.path(), "two_skins");
    let mut next = 0;
    for (q, first) in a.primitives.iter().zip(&firsts) {
        assert_eq!(*first, next);
        next += q.vertices as usize;
    }
    // No normals in this fixture: the atlas is one position texture.
    assert_eq!(a.textures.len(), 1);
    assert_eq!(count_files(&atlas.path().join("two_skins"), "exr"), 1);
    // Per primitive: one texture set each, every first vertex 0.
    assert_eq!(
        count_files(&per.path().join("two_skins"), "exr"),
        p.textures.len()
    );
    assert_eq!(p.textures.len(), p.primitives.len());
    assert!(
        first_vertices(per.path(), "two_skins")
            .iter()
            .all(|&f| f == 0)
    );
    for out in [atlas.path(), per.path()] {
        let e = check(&model, out, 1);
        assert_eq!(e.primitives, a.primitives.len());
        assert!(e.position <= KERNEL_TOLERANCE, "{e:?}");
        assert!(e.direction_excess <= KERNEL_DEGREES, "{e:?}");
    }
}

#[test]
fn brainstem_vat_with_normals_is_one_atlas_of_two_exrs() {
    let Some(shared) = shared_models("brainstem_vat_with_normals_is_one_atlas_of_two_exrs") else {
        return;
    };
    let model = shared.join("khronos/BrainStem.glb");
    let out = tempfile::tempdir().unwrap();
    let r = vat(std::slice::from_ref(&model), out.path(), &["--normals"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let dir = out.path().join("BrainStem");
    // The issue's acceptance: at most 3 EXR files (position + normal).
    assert_eq!(count_files(&dir, "exr"), 2);
    let (_, v) = open(out.path(), "BrainStem");
    assert_eq!(v.textures.len(), 2);
    assert!(
        v.primitives.len() > 50,
        "BrainStem has 59 moving primitives"
    );
    let total: u64 = v.primitives.iter().map(|p| u64::from(p.vertices)).sum();
    let p0 = &v.primitives[0];
    assert!(u64::from(p0.width) * u64::from(p0.bands) >= total);
    // Every 25th row of every primitive against direct evaluation, within
    // the recorded half-float error (plus the f32 kernel's tolerance).
    let e = check(&model, out.path(), 25);
    assert_eq!(e.primitives, v.primitives.len());
    assert!(e.position_excess <= KERNEL_TOLERANCE, "{e:?}");
    assert!(e.direction_excess <= KERNEL_DEGREES, "{e:?}");
}

#[test]
fn brainstem_vat_atlas_folds_into_pages_at_4096_and_verifies() {
    let Some(shared) = shared_models("brainstem_vat_atlas_folds_into_pages_at_4096_and_verifies")
    else {
        return;
    };
    let model = shared.join("khronos/BrainStem.glb");
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        std::slice::from_ref(&model),
        out.path(),
        &["--normals", "--max-texture-size", "4096"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // 34,159 vertices wrap into 9 bands of 3,796; 1,047 rows of 9 bands do
    // not fit 4096 rows, and one 3,796-wide block fills a page: 3 pages of
    // 349 rows per stream.
    let dir = out.path().join("BrainStem");
    assert_eq!(count_files(&dir, "exr"), 6);
    let (meta, v) = open(out.path(), "BrainStem");
    let rows: usize = meta.clips.iter().map(|c| c.frames as usize).sum();
    assert_eq!(rows, 1047);
    let p0 = &v.primitives[0];
    assert_eq!((p0.width, p0.bands, p0.height), (3796, 9, 349 * 9));
    assert_eq!(
        vat_fold(out.path(), "BrainStem", p0.positions, rows),
        (349, 1, 3)
    );
    assert!(dir.join("BrainStem.vat.normals.page2.exr").is_file());
    let e = check(&model, out.path(), 25);
    assert_eq!(e.primitives, v.primitives.len());
    assert!(e.position_excess <= KERNEL_TOLERANCE, "{e:?}");
    assert!(e.direction_excess <= KERNEL_DEGREES, "{e:?}");
    let container = dir.join("BrainStem.rigbake");
    let r = rigbake(&["verify".as_ref(), container.as_os_str()]);
    assert!(
        r.status.success(),
        "{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
}

/// The stderr of `rigbake vat MODEL --normals --tangents`, the names of the
/// files it wrote and what `rigbake inspect` says of the container.
fn vat_with_directions(model: &Path) -> (String, Vec<String>, String) {
    let out = tempfile::tempdir().unwrap();
    let r = vat(
        &[model.to_path_buf()],
        out.path(),
        &["--normals", "--tangents"],
    );
    let err = String::from_utf8_lossy(&r.stderr).into_owned();
    assert!(r.status.success(), "{err}");
    let dir = out.path().join(stem(model));
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let container = dir.join(format!("{}.rigbake", stem(model)));
    let inspect = rigbake(&["inspect".as_ref(), container.as_os_str()]);
    assert!(inspect.status.success());
    (
        err,
        files,
        String::from_utf8_lossy(&inspect.stdout).into_owned(),
    )
}

/// `--normals` and `--tangents` asked of primitives without `NORMAL` or
/// `TANGENT` warn, naming the model, the primitives and what is (not)
/// written, instead of silently writing no such texture.
#[test]
fn directions_asked_of_primitives_without_them_are_a_warning() {
    let has = |files: &[String], stream: &str| {
        files.iter().any(|f| f.contains(&format!(".vat.{stream}.")))
    };
    // No primitive has normals or tangents: neither texture is written.
    let (err, files, inspect) = vat_with_directions(&rigbake_fixtures::fixture("two_skins.glb"));
    assert!(
        !has(&files, "normals") && !has(&files, "tangents"),
        "{files:?}"
    );
    assert!(
        inspect.contains("no normal or tangent textures"),
        "{inspect}"
    );
    for (stream, attribute) in [("normals", "NORMAL"), ("tangents", "TANGENT")] {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("--{stream}")))
            .unwrap_or_else(|| panic!("no --{stream} warning in: {err}"));
        assert!(
            line.starts_with("warning:") && line.contains("two_skins.glb"),
            "{line}"
        );
        assert!(
            line.contains(&format!(
                "2 of 2 VAT primitives have no {attribute} attribute"
            )),
            "{line}"
        );
        assert!(
            line.contains(&format!("no {stream} texture is written")),
            "{line}"
        );
    }

    // The tentacle has normals but no tangents: only the tangents warn.
    let (err, files, inspect) = vat_with_directions(&rigbake_fixtures::fixture("tentacle.glb"));
    assert!(
        has(&files, "normals") && !has(&files, "tangents"),
        "{files:?}"
    );
    assert!(inspect.contains("normals/tangents"), "{inspect}");
    assert!(!err.contains("--normals"), "{err}");
    assert!(
        err.contains("1 of 1 VAT primitives have no TANGENT attribute"),
        "{err}"
    );

    // An atlas where one of two primitives lacks normals: the texture is
    // written, and the warning names the primitive that reads zero there.
    let mut b = rigbake_fixtures::builder::Builder::from_glb(
        &std::fs::read(rigbake_fixtures::fixture("tentacle.glb")).unwrap(),
    );
    let node = b.first_mesh_node();
    let mut bare_mesh = b.get_mut("meshes", 0).clone();
    bare_mesh["primitives"][0]["attributes"]
        .as_object_mut()
        .unwrap()
        .remove("NORMAL");
    let mesh = b.push("meshes", bare_mesh.into());
    let mut bare = b.get_mut("nodes", node).clone();
    bare.insert("name".into(), "bare".into());
    bare.insert("mesh".into(), mesh.into());
    bare.remove("children");
    let bare = b.node(bare.into());
    let scene = b.root["scene"].as_u64().unwrap_or(0) as usize;
    b.get_mut("scenes", scene)["nodes"]
        .as_array_mut()
        .unwrap()
        .push(bare.into());
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("mixed.glb");
    std::fs::write(&model, b.to_glb()).unwrap();
    let (err, files, _) = vat_with_directions(&model);
    assert!(has(&files, "normals"), "{files:?}");
    let line = err
        .lines()
        .find(|l| l.contains("--normals"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("1 of 2 VAT primitives have no NORMAL attribute (`bare` p0)"),
        "{line}"
    );
    assert!(
        line.contains("they read zero in the normals texture"),
        "{line}"
    );
}

/// `--png-compression none` writes stored deflate blocks holding the very
/// samples `fast` compresses, for packed and separate normals: the VAT
/// records agree but for the files' sizes and checksums, each file is the
/// size of its unfiltered rows plus the stored framing, and both bakes
/// pass `rigbake verify`.
#[test]
fn uncompressed_png_holds_the_compressed_samples_and_verifies() {
    let root = tempfile::tempdir().unwrap();
    for model in ["tentacle.glb", "walker.glb"] {
        let path = rigbake_fixtures::fixture(model);
        let name = stem(&path);
        for directions in ["packed", "octahedral"] {
            let bake_with = |mode: &str| {
                let out = root.path().join(format!("{name}-{directions}-{mode}"));
                let flags = [
                    "--format",
                    "png16",
                    "--normals",
                    "--direction-encoding",
                    directions,
                    "--png-compression",
                    mode,
                ];
                let r = vat(std::slice::from_ref(&path), &out, &flags);
                assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
                let v = rigbake(&[
                    "verify".as_ref(),
                    out.join(&name).join(format!("{name}.rigbake")).as_os_str(),
                ]);
                assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
                out
            };
            let (fast, none) = (bake_with("fast"), bake_with("none"));
            let (_, fast_vat) = open(&fast, &name);
            let (_, none_vat) = open(&none, &name);
            assert_eq!(fast_vat.textures.len(), none_vat.textures.len());
            let packed = none_vat.textures.iter().any(|t| t.channels == 4);
            assert_eq!(packed, directions == "packed", "{model} {directions}");
            for (f, n) in fast_vat.textures.iter().zip(&none_vat.textures) {
                let same = VatTextureMeta {
                    bytes: f.bytes,
                    crc32: f.crc32,
                    ..n.clone()
                };
                assert_eq!(*f, same, "{model} {directions}: the records differ");
                let samples = |dir: &Path| {
                    let bytes = std::fs::read(dir.join(&name).join(&f.name)).unwrap();
                    let mut reader = png::Decoder::new(Cursor::new(bytes)).read_info().unwrap();
                    let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
                    let info = reader.next_frame(&mut buf).unwrap();
                    buf.truncate(info.buffer_size());
                    buf
                };
                assert!(
                    samples(&fast) == samples(&none),
                    "{model} {directions} {}: the samples differ",
                    f.name
                );
                // 2 bytes a sample, 1 filter byte a row; zlib's 6 bytes and 5
                // a stored block of at most 65535; PNG's signature, IHDR, IEND
                // (45 bytes) and 12 an IDAT chunk of about 1 MiB.
                let rows = n.height as usize * (1 + n.width as usize * n.channels as usize * 2);
                let blocks = rows / 65535 + 1;
                let chunks = (rows + 5 * blocks + 6).div_ceil(1 << 20);
                let file = std::fs::metadata(none.join(&name).join(&n.name))
                    .unwrap()
                    .len();
                assert_eq!(
                    file as usize,
                    rows + 5 * blocks + 6 + 45 + 12 * chunks,
                    "{}",
                    n.name
                );
            }
        }
    }
}
