//! The clip-error record (format 1.14): what each encoding costs per clip,
//! measured at bake time, against what `verify` measures independently
//! (it plays the written textures back through the playback decoder and
//! compares with a direct f64 evaluation of the source, frame by frame).

use std::path::Path;

use rigbake::playback::{self, Paths};
use rigbake::settings::BakeSettings;
use rigbake::verify;
use rigbake_format::container::Container;
use rigbake_format::meta::{ClipErrorsMetadata, DirectionEncoding, ErrorSubject};
use rigbake_format::texture::gpu::TextureContainer;
use rigbake_types::{MatrixLayout, Precision, VatEncoding};

use crate::common::{bake, containers, measure_all, settings, with_vat};

fn record(container: &Path) -> ClipErrorsMetadata {
    Container::open(container)
        .unwrap()
        .records()
        .clip_errors
        .clone()
        .expect("a clip-error record")
}

/// Bakes the walker with `edit`, then compares every clip's recorded
/// maximum position error (and normal angle for VAT) with verify's.
/// The two measure the same thing in different code: verify against the
/// f64 source, the bake against its own f64 (bones) or f32 (VAT) values,
/// so they agree to f32 rounding of the positions, 2e-6 of the model's
/// diagonal, and to 2% (verify's f64 against the bake's f32 sums).
fn agrees_with_verify(name: &str, edit: impl FnOnce(&mut BakeSettings)) {
    agrees_with_verify_on(&rigbake_fixtures::fixture("walker.glb"), name, edit);
}

/// [`agrees_with_verify`] on `model`.
fn agrees_with_verify_on(model: &Path, name: &str, edit: impl FnOnce(&mut BakeSettings)) {
    let out = tempfile::tempdir().unwrap();
    bake(model, out.path(), &settings(edit)).baked();
    let container = &containers(out.path())[0];
    let rec = record(container);
    assert!(rec.model_size > 0.0 && rec.virtual_vertex_distance == 0.03);
    // inspect's text lists every texture of the record, one line a clip.
    let (report, _) = rigbake::inspect::load_report(container, false).unwrap();
    let text = rigbake::inspect::render(&report);
    let section = text
        .split("\nclip errors")
        .nth(1)
        .expect("a clip errors section");
    let kinds = section.matches(" (bone matrices)\n").count() + section.matches(" (VAT)\n").count();
    assert_eq!(kinds, rec.textures.len(), "{name}: {section}");
    let loaded = playback::load(container, None, Paths::All).unwrap();
    let measured = measure_all(&loaded);
    let paths = usize::from(loaded.bones.is_some()) + usize::from(loaded.vat.is_some());
    assert_eq!(measured.len(), paths);
    // verify's own check of the record passes it, and fails a record that
    // understates every figure by half.
    let mut checks = verify::records::RecordChecks::default();
    verify::records::check_clip_errors(&rec, &loaded.clips, &measured, &mut checks);
    assert!(checks.failures.is_empty(), "{name}: {:?}", checks.failures);
    let mut halved = rec.clone();
    for c in halved.textures.iter_mut().flat_map(|t| &mut t.clips) {
        c.positions.max /= 2.0;
    }
    let mut checks = verify::records::RecordChecks::default();
    verify::records::check_clip_errors(&halved, &loaded.clips, &measured, &mut checks);
    let lossy = measured
        .iter()
        .flat_map(|o| &o.clips)
        .filter(|c| c.frames.position_max > 1e-5 * rec.model_size)
        .count();
    assert!(
        checks.failures.len() >= lossy,
        "{name}: {:?}",
        checks.failures
    );
    for o in &measured {
        let subject = match o.output {
            verify::Output::Bones => ErrorSubject::BoneMatrices,
            verify::Output::Vat => ErrorSubject::Vat,
        };
        let entries: Vec<_> = rec
            .textures
            .iter()
            .filter(|t| t.subject == subject)
            .collect();
        assert!(!entries.is_empty(), "{name}: no entry for {subject:?}");
        let slack = 2e-6 * o.diagonal;
        for c in &o.clips {
            let recorded = entries
                .iter()
                .map(|t| t.clips[c.clip].positions.max)
                .fold(0.0, f64::max);
            let got = c.frames.position_max;
            assert!(
                (recorded - got).abs() <= 0.02 * got + slack,
                "{name} {subject:?} clip {}: recorded {recorded:.4e}, verify {got:.4e}",
                c.clip
            );
            for t in &entries {
                let f = &t.clips[c.clip];
                assert!(f.positions.p99 <= f.positions.max, "{name}");
                assert_eq!(
                    f.virtual_vertices.is_some(),
                    subject == ErrorSubject::BoneMatrices
                );
            }
            if subject == ErrorSubject::Vat && c.frames.normals > 0 {
                let recorded = entries
                    .iter()
                    .filter_map(|t| t.clips[c.clip].normals_degrees)
                    .map(|f| f.max)
                    .fold(0.0, f64::max);
                let got = c.frames.normal_max;
                assert!(
                    (recorded - got).abs() <= 0.02 * got + 2e-3,
                    "{name} VAT normals clip {}: recorded {recorded:.4e}, verify {got:.4e}",
                    c.clip
                );
            }
        }
    }
}

#[test]
fn bone_encodings_record_what_verify_measures() {
    for (layout, precision) in [
        (MatrixLayout::Qts, Precision::Unorm16),
        (MatrixLayout::Qts, Precision::F16),
        (MatrixLayout::Mat4, Precision::F16),
        (MatrixLayout::Mat3x4, Precision::F32),
    ] {
        agrees_with_verify(&format!("{layout:?} {precision:?}"), |s| {
            s.layout = layout;
            s.precision = precision;
        });
    }
}

/// Knight's nine rigid props (sword, shield, helmet...) are bound to hand
/// and head joints by default and skinned by that joint alone: the record
/// must measure their vertices too. They sit far from their joints, so a
/// 16-bit quaternion's rotation error is largest there; a record of the
/// body's vertices alone understated five clips by up to 40%.
#[test]
fn bound_props_are_measured_with_the_mesh() {
    let Some(models) = crate::common::shared_models("bound_props_are_measured_with_the_mesh")
    else {
        return;
    };
    agrees_with_verify_on(
        &models.join("kaykit/Knight.glb"),
        "Knight qts unorm16",
        |s| {
            s.layout = MatrixLayout::Qts;
            s.precision = Precision::Unorm16;
        },
    );
}

#[test]
fn vat_encodings_record_what_verify_measures() {
    for (encoding, directions) in [
        (VatEncoding::Exr16, DirectionEncoding::Octahedral),
        (VatEncoding::Png16, DirectionEncoding::Packed),
        (VatEncoding::Png16, DirectionEncoding::Octahedral),
        (VatEncoding::Unorm8, DirectionEncoding::Octahedral),
        (VatEncoding::Unorm10, DirectionEncoding::Octahedral),
    ] {
        agrees_with_verify(&format!("{encoding:?} {directions:?}"), |s| {
            with_vat(s);
            s.vat.options.normals = true;
            s.vat.encoding = encoding;
            s.vat.direction_encoding = directions;
            if encoding.needs_gpu_container() {
                // 8 and 10-bit samples live in KTX2 and DDS only: one of
                // each.
                s.texture_container = if encoding == VatEncoding::Unorm8 {
                    TextureContainer::Ktx2
                } else {
                    TextureContainer::Dds
                };
            }
        });
    }
}

/// A lossless bake records zero error for its VAT positions, and a 16-bit
/// one a figure the size of its quantisation step: half the step of each
/// channel's bounds, at most, per coordinate.
#[test]
fn the_figures_follow_the_encoding() {
    let model = rigbake_fixtures::fixture("walker.glb");
    let out = tempfile::tempdir().unwrap();
    let exact = out.path().join("exact");
    bake(
        &model,
        &exact,
        &settings(|s| {
            with_vat(s);
            s.vat.encoding = VatEncoding::Exr32;
        }),
    )
    .baked();
    let rec = record(&containers(&exact)[0]);
    let vat: Vec<_> = rec
        .textures
        .iter()
        .filter(|t| t.subject == ErrorSubject::Vat)
        .collect();
    assert!(!vat.is_empty());
    for t in vat {
        assert!(
            t.clips
                .iter()
                .all(|c| c.positions.max == 0.0 && c.positions.p99 == 0.0)
        );
    }
    let png = out.path().join("png");
    bake(
        &model,
        &png,
        &settings(|s| {
            with_vat(s);
            s.vat.encoding = VatEncoding::Png16;
        }),
    )
    .baked();
    let container = &containers(&png)[0];
    let rec = record(container);
    let vat_record = Container::open(container)
        .unwrap()
        .records()
        .vat
        .clone()
        .unwrap();
    for t in rec
        .textures
        .iter()
        .filter(|t| t.subject == ErrorSubject::Vat)
    {
        let b = vat_record.textures[t.texture as usize].bounds.unwrap();
        let half_steps: f64 = (0..3)
            .map(|k| (f64::from(b[1][k] - b[0][k]) / 65535.0 / 2.0).powi(2))
            .sum::<f64>()
            .sqrt();
        for c in &t.clips {
            assert!(c.positions.max > 0.0, "16-bit positions are not exact");
            // f32 arithmetic of the quantiser adds a little.
            assert!(
                c.positions.max <= half_steps * 1.01,
                "{} > {half_steps}",
                c.positions.max
            );
        }
    }
}
