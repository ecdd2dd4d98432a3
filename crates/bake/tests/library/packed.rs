//! Packed VAT normals (`--direction-encoding packed`, format 1.13): one
//! RGBA16 texture per frame holds the positions and, in its alpha, each
//! normal as two 8-bit octahedral coordinates. Checked against a 32-bit
//! float bake of the same model, decoding the PNG with the png crate and
//! formats/vat.md's rule (not rigbake's decoder), and through verify.

use std::path::Path;

use rigbake::playback::{self, Paths};
use rigbake::verify::{self, Subject, Tolerances};
use rigbake_format::container::Container;
use rigbake_format::meta::{DirectionEncoding, VatMetadata, VatStream};
use rigbake_types::VatEncoding;

use crate::common::{bake, containers, read_exr, read_png16, settings, tree, with_vat};

fn vat_record(container: &Path) -> VatMetadata {
    Container::open(container)
        .unwrap()
        .records()
        .vat
        .clone()
        .expect("a VAT record")
}

/// formats/vat.md's packed normal: `u = 256 ux + uy`, `e = u_ / 255 * 2 -
/// 1`, the octahedral rule, in f64.
fn unpack(u: u16) -> [f64; 3] {
    let e = [f64::from(u >> 8), f64::from(u & 0xff)].map(|v| v / 255.0 * 2.0 - 1.0);
    let mut n = [e[0], e[1], 1.0 - e[0].abs() - e[1].abs()];
    if n[2] < 0.0 {
        let sign = |v: f64| if v >= 0.0 { 1.0 } else { -1.0 };
        n = [
            (1.0 - e[1].abs()) * sign(e[0]),
            (1.0 - e[0].abs()) * sign(e[1]),
            n[2],
        ];
    }
    let l = n.iter().map(|v| v * v).sum::<f64>().sqrt();
    n.map(|v| v / l)
}

fn degrees(a: [f64; 3], b: [f64; 3]) -> f64 {
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let la = a.iter().map(|v| v * v).sum::<f64>().sqrt();
    let lb = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    (dot / (la * lb)).clamp(-1.0, 1.0).acos().to_degrees()
}

#[test]
fn packed_normals_live_in_the_positions_alpha_within_their_recorded_angle() {
    let model = rigbake_fixtures::fixture("walker.glb");
    let out = tempfile::tempdir().unwrap();
    let vat = |encoding: VatEncoding, directions: DirectionEncoding| {
        settings(move |s| {
            with_vat(s);
            s.vat.options.normals = true;
            s.vat.encoding = encoding;
            s.vat.direction_encoding = directions;
        })
    };
    let exact = out.path().join("exact");
    let packed = out.path().join("packed");
    bake(
        &model,
        &exact,
        &vat(VatEncoding::Exr32, DirectionEncoding::Octahedral),
    )
    .baked();
    bake(
        &model,
        &packed,
        &vat(VatEncoding::Png16, DirectionEncoding::Packed),
    )
    .baked();
    // No normals file: one texture per frame.
    let files: Vec<String> = tree(&packed)
        .into_iter()
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(files.iter().all(|f| !f.contains("normals")), "{files:?}");
    let (c_exact, c_packed) = (&containers(&exact)[0], &containers(&packed)[0]);
    let (v_exact, v_packed) = (vat_record(c_exact), vat_record(c_packed));
    let (mut measured, mut expected) = (0u64, 0u64);
    for (pe, pp) in v_exact.primitives.iter().zip(&v_packed.primitives) {
        expected += u64::from(pe.vertices) * u64::from(pe.frames);
        let pos = &v_packed.textures[pp.positions as usize];
        let nrm = &v_packed.textures[pp.normals.expect("normals baked") as usize];
        assert_eq!(
            (nrm.stream, nrm.direction_encoding, &nrm.name, pos.channels),
            (VatStream::Normals, DirectionEncoding::Packed, &pos.name, 4)
        );
        assert!(
            nrm.max_error > 0.0 && nrm.max_error <= 0.64,
            "{}",
            nrm.max_error
        );
        // Every texel's packed normal against the exact one (32-bit float
        // EXR, same layout), decoded independently.
        let want = read_exr(
            &exact
                .join("walker")
                .join(&v_exact.textures[pe.normals.unwrap() as usize].name),
        );
        let png = read_png16(&packed.join("walker").join(&pos.name));
        assert_eq!(png.width, want.width);
        let mut worst = 0.0f64;
        for (texel, q) in png.data.chunks_exact(4).enumerate() {
            let w = &want.data[texel * 4..texel * 4 + 3];
            if w.iter().all(|v| *v == 0.0) {
                continue; // padding
            }
            worst = worst.max(degrees(unpack(q[3]), [w[0], w[1], w[2]].map(f64::from)));
            measured += 1;
        }
        // The recorded figure is the worst angle (f32 noise aside).
        assert!(
            worst <= nrm.max_error + 1e-3 && worst >= nrm.max_error - 1e-3,
            "measured {worst}, recorded {}",
            nrm.max_error
        );
    }
    // Every vertex of every frame was compared (none skipped as padding).
    assert_eq!(measured, expected);
    // inspect counts the shared file once, in its totals and its checks.
    let (report, problem) = rigbake::inspect::load_report(c_packed, true).unwrap();
    assert_eq!(problem, None);
    let pngs: Vec<&String> = files.iter().filter(|f| f.ends_with(".png")).collect();
    let on_disk: u64 = pngs
        .iter()
        .map(|f| std::fs::metadata(packed.join(f)).unwrap().len())
        .sum();
    assert_eq!(
        (report.totals.vat_textures, report.totals.vat_texture_bytes),
        (pngs.len(), on_disk)
    );
    // verify plays the packed bake back (both paths) and passes every clip.
    let loaded = playback::load(c_packed, None, Paths::All).unwrap();
    let subject = Subject::of(&loaded);
    let paths: Vec<verify::Path<'_>> = loaded.vat.iter().map(verify::Path::Vat).collect();
    let all: Vec<usize> = (0..loaded.clips.len()).collect();
    let tolerances = Tolerances {
        relative: verify::DEFAULT_RELATIVE_TOLERANCE,
        normal_degrees: 0.01,
        mid_relative: None,
        accept_recorded_loss: false,
    };
    for o in verify::measure(&subject, &paths, &all, 1).unwrap() {
        assert!(o.clips.iter().any(|c| c.frames.normals_judged > 0));
        for c in &o.clips {
            let failures = verify::judge(c, o.diagonal, &tolerances);
            assert!(failures.is_empty(), "{failures:?}");
        }
    }
}
