//! VAT texture compression (`--compression`) and output determinism:
//! lossless modes decode to exactly the uncompressed samples, PXR24 on
//! 32-bit floats loses exactly what its recorded error says (measured here
//! from the two files, with the exr crate, not from the writer's code), and
//! compressed EXRs and PNGs are byte-identical on 1 and 2 threads. The
//! OpenEXR reference library reads every mode (interop.rs).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{read_exr, tree};
use rigbake_format::container::Container;
use rigbake_format::meta::{VatMetadata, VatStream};
use rigbake_types::TextureCompression;

fn tentacle() -> PathBuf {
    rigbake_fixtures::fixture("tentacle.glb")
}

/// `rigbake vat` on the tentacle into `out` with `flags`, on `threads`
/// rayon threads.
fn vat(out: &Path, flags: &[&str], threads: usize) {
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("vat")
        .arg(tentacle())
        .arg("--out")
        .arg(out)
        .args(["--normals", "--tangents"])
        .args(flags)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .expect("rigbake runs");
    assert!(
        r.status.success(),
        "{flags:?}: {}",
        String::from_utf8_lossy(&r.stderr)
    );
}

fn records(out: &Path) -> (VatMetadata, Vec<TextureCompression>) {
    let c = Container::open(&out.join("tentacle/tentacle.rigbake")).unwrap();
    let vat = c.records().vat.as_ref().expect("a VAT record").clone();
    let compression = c
        .records()
        .vat_compression
        .as_ref()
        .expect("a VAT compression record")
        .textures
        .clone();
    (vat, compression)
}

/// Every VAT texture of a bake, decoded with the exr crate, in table order.
fn decoded(out: &Path) -> Vec<Vec<f32>> {
    let (vat, _) = records(out);
    vat.textures
        .iter()
        .map(|t| read_exr(&out.join("tentacle").join(&t.name)).data)
        .collect()
}

fn size(out: &Path) -> u64 {
    records(out).0.textures.iter().map(|t| t.bytes).sum()
}

#[test]
fn lossless_modes_decode_to_the_uncompressed_samples_and_are_recorded() {
    for format in ["exr16", "exr32"] {
        let plain = tempfile::tempdir().unwrap();
        vat(plain.path(), &["--format", format], 2);
        let (plain_vat, plain_modes) = records(plain.path());
        assert!(plain_modes.iter().all(|m| *m == TextureCompression::None));
        let exact = decoded(plain.path());
        let mut modes = vec![
            ("zip", TextureCompression::Zip),
            ("piz", TextureCompression::Piz),
        ];
        if format == "exr16" {
            modes.push(("pxr24", TextureCompression::Pxr24));
        }
        for (flag, mode) in modes {
            let out = tempfile::tempdir().unwrap();
            vat(out.path(), &["--format", format, "--compression", flag], 2);
            let (v, recorded) = records(out.path());
            assert_eq!(recorded, vec![mode; v.textures.len()], "{format} {flag}");
            assert_eq!(decoded(out.path()), exact, "{format} {flag} is lossless");
            for (a, b) in v.textures.iter().zip(&plain_vat.textures) {
                assert_eq!(a.max_error, b.max_error, "{format} {flag}: no added loss");
            }
            assert!(
                size(out.path()) < size(plain.path()),
                "{format} {flag} is smaller"
            );
        }
    }
}

#[test]
fn pxr24_on_f32_records_exactly_the_loss_it_makes() {
    let plain = tempfile::tempdir().unwrap();
    vat(plain.path(), &["--format", "exr32"], 2);
    let out = tempfile::tempdir().unwrap();
    vat(
        out.path(),
        &["--format", "exr32", "--compression", "pxr24"],
        2,
    );
    let (v, modes) = records(out.path());
    assert!(modes.iter().all(|m| *m == TextureCompression::Pxr24));
    let (exact, lossy) = (decoded(plain.path()), decoded(out.path()));
    for ((t, a), b) in v.textures.iter().zip(&exact).zip(&lossy) {
        // The worst texel, measured from the files: distance for positions,
        // angle for directions (xyz; tangent w is +-1, kept exactly).
        let mut worst = 0.0f64;
        let mut largest = 0.0f64;
        for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            let xa = [pa[0], pa[1], pa[2]].map(f64::from);
            let xb = [pb[0], pb[1], pb[2]].map(f64::from);
            largest = largest.max(xa.iter().fold(0.0f64, |m, v| m.max(v.abs())));
            let e = match t.stream {
                VatStream::Positions => xa
                    .iter()
                    .zip(&xb)
                    .map(|(p, q)| (p - q).powi(2))
                    .sum::<f64>()
                    .sqrt(),
                _ => {
                    let dot: f64 = xa.iter().zip(&xb).map(|(p, q)| p * q).sum();
                    let la = xa.iter().map(|p| p * p).sum::<f64>().sqrt();
                    let lb = xb.iter().map(|p| p * p).sum::<f64>().sqrt();
                    if la == 0.0 || lb == 0.0 {
                        0.0
                    } else {
                        (dot / (la * lb)).clamp(-1.0, 1.0).acos().to_degrees()
                    }
                }
            };
            worst = worst.max(e);
            if t.stream == VatStream::Tangents {
                assert_eq!(pa[3], pb[3], "handedness is exact");
            }
        }
        assert!(worst > 0.0, "{}: PXR24 rounds some value", t.name);
        // The recorded error is the measured one: rigbake measures in f32
        // lanes (formats/vat.md, "Recorded error"), good to about 1e-4 of
        // the error itself (1e-6 here), this check in f64.
        assert!(
            (t.max_error - worst).abs() <= worst * 1e-4 + 1e-12,
            "{}: recorded {} measured {worst}",
            t.name,
            t.max_error
        );
        // And within the analytic bound: 15 kept significand bits give a
        // relative error of at most 2^-16 per component.
        if t.stream == VatStream::Positions {
            assert!(t.max_error <= largest * 3f64.sqrt() * 2f64.powi(-16));
        } else {
            assert!(t.max_error < 0.01, "{}: {} degrees", t.name, t.max_error);
        }
    }
    assert!(size(out.path()) < size(plain.path()));
}

#[test]
fn compressed_and_png_outputs_are_identical_on_one_and_two_threads() {
    for flags in [
        &["--format", "png16"][..],
        &["--format", "png16", "--direction-encoding", "bounds"][..],
        &["--format", "exr16", "--compression", "zip"][..],
        &["--format", "exr16", "--compression", "piz"][..],
        &["--format", "exr32", "--compression", "pxr24"][..],
    ] {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        vat(a.path(), flags, 1);
        vat(b.path(), flags, 2);
        let (ta, tb) = (tree(a.path()), tree(b.path()));
        assert!(!ta.is_empty());
        assert!(
            ta == tb,
            "{flags:?}: outputs differ between 1 and 2 threads"
        );
    }
}

#[test]
fn png_records_deflate_and_refuses_an_exr_compression() {
    let out = tempfile::tempdir().unwrap();
    vat(out.path(), &["--format", "png16"], 2);
    let (_, modes) = records(out.path());
    assert!(modes.iter().all(|m| *m == TextureCompression::Deflate));
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("vat")
        .arg(tentacle())
        .arg("--out")
        .arg(out.path().join("refused"))
        .args(["--format", "png16", "--compression", "zip"])
        .output()
        .unwrap();
    assert!(!r.status.success());
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("EXR formats only") && stderr.contains("png16"),
        "{stderr}"
    );
    assert!(!out.path().join("refused/tentacle").exists());
}
